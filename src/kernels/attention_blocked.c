/* Many-query attention in query blocks with the scores stored transposed.
 *
 * One work item is (query head h, block of QB = 48 query rows). For it:
 *   qt[d][r]  = scale · q[i0 + r][h·hd + d]                  (hd × 48, zero past the block)
 *   st[j][r]  = qt[·][r] · k_j          for keys j < kend     (kend × 48)
 *   st[j][r]  = exp(st[j][r] − max_j st[·][r]),  sum[r] = Σ_j st[j][r]
 *   out[i0 + r][h·hd + :] = Σ_j st[j][r] · v_j / sum[r]
 * With the queries of the block along the SIMD lanes, the softmax over keys
 * is lane-wise (no horizontal reductions), both products are register-tiled
 * (8 keys × 48 queries, and 6 queries × 64 output dims) and read K and V in
 * place, so nothing is packed or copied per call. Scratch per thread is
 * 48·(nk + hd) floats: memory stays linear in the sequence length.
 * Items run head-major (consecutive items in a pool chunk, the chunks claimed in order) so that the blocks of one head, which share its K/V
 * rows, run together on all threads (L2/L3 reuse). */
#include <math.h>
#include <stdlib.h>
#include <stdatomic.h>
#include <string.h>

#include "base/pool.h"
#include "kernels/isa.h"

#define QB 48 /* queries per work item: 3 vectors of lanes */
#define QV 3
#define KR 8  /* keys per score tile */
#define QT 6  /* query rows per output tile */

/* Stores the score tile of keys j .. j+kr−1 (times *sc unless sc is NULL)
 * as rows of st, −inf in the lanes a causal mask hides, and folds it into
 * the running maxima mx. A lane r is visible to key j when j − base ≤ r
 * (base = nk − nq + i0). */
VX_INLINE VX_TARGET_AVX512 void store_scores(int kr, __m512 acc[KR][QV], const __m512 *sc, float *st, __m512 mx[QV],
                                             int64_t j, int causal, int64_t base) {
    const __m512 iota = _mm512_setr_ps(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    _Pragma("GCC unroll 8")
    for (int t = 0; t < kr; t++) {
        int64_t thr = causal ? j + t - base : 0;
        _Pragma("GCC unroll 3")
        for (int u = 0; u < QV; u++) {
            __m512 a = sc ? _mm512_mul_ps(acc[t][u], *sc) : acc[t][u];
            if (thr > 16 * u) {
                __mmask16 hide = _mm512_cmp_ps_mask(_mm512_add_ps(iota, _mm512_set1_ps((float)(16 * u))),
                                                    _mm512_set1_ps((float)thr), _CMP_LT_OQ);
                a = _mm512_mask_mov_ps(a, hide, _mm512_set1_ps(-INFINITY));
            }
            _mm512_storeu_ps(st + (j + t) * QB + 16 * u, a);
            mx[u] = _mm512_max_ps(mx[u], a);
        }
    }
}

/* Scores of keys j .. j+kr−1 against the block (store_scores masks and stores them). */
VX_INLINE VX_TARGET_AVX512 void score_tile(int kr, const float *k, int64_t ks, const float *qt, int hd, float *st,
                                           __m512 mx[QV], int64_t j, int causal, int64_t base) {
    __m512 acc[KR][QV];
    const float *kj[KR];
    _Pragma("GCC unroll 8")
    for (int t = 0; t < kr; t++) {
        kj[t] = k + (j + t) * ks;
        _Pragma("GCC unroll 3")
        for (int u = 0; u < QV; u++) acc[t][u] = _mm512_setzero_ps();
    }
    for (int d = 0; d < hd; d++) {
        __m512 qv[QV];
        _Pragma("GCC unroll 3")
        for (int u = 0; u < QV; u++) qv[u] = _mm512_loadu_ps(qt + d * QB + 16 * u);
        _Pragma("GCC unroll 8")
        for (int t = 0; t < kr; t++) {
            __m512 kb = _mm512_set1_ps(kj[t][d]);
            _Pragma("GCC unroll 3")
            for (int u = 0; u < QV; u++) acc[t][u] = _mm512_fmadd_ps(kb, qv[u], acc[t][u]);
        }
    }
    store_scores(kr, acc, NULL, st, mx, j, causal, base);
}

/* out rows r0 .. r0+nr−1 (nr ≤ QT), dims d0 .. d0+16·nv−1: Σ_j st[j][r] · v_j[d] · inv[r]. */
VX_INLINE VX_TARGET_AVX512 void out_tile(int nv, const float *st, int64_t kend, const float *v, int64_t ks,
                                         int r0, int nr, const float *inv, float *out, int64_t qs) {
    __m512 acc[QT][4];
    _Pragma("GCC unroll 6")
    for (int t = 0; t < QT; t++)
        _Pragma("GCC unroll 4")
        for (int u = 0; u < nv; u++) acc[t][u] = _mm512_setzero_ps();
    for (int64_t j = 0; j < kend; j++) {
        __m512 vv[4];
        const float *vj = v + j * ks;
        _Pragma("GCC unroll 4")
        for (int u = 0; u < nv; u++) vv[u] = _mm512_loadu_ps(vj + 16 * u);
        const float *p = st + j * QB + r0;
        _Pragma("GCC unroll 6")
        for (int t = 0; t < QT; t++) {
            __m512 pb = _mm512_set1_ps(p[t]);
            _Pragma("GCC unroll 4")
            for (int u = 0; u < nv; u++) acc[t][u] = _mm512_fmadd_ps(pb, vv[u], acc[t][u]);
        }
    }
    for (int t = 0; t < nr; t++) {
        __m512 s = _mm512_set1_ps(inv[r0 + t]);
        for (int u = 0; u < nv; u++) _mm512_storeu_ps(out + (r0 + t) * qs + 16 * u, _mm512_mul_ps(acc[t][u], s));
    }
}

static VX_TARGET_AVX512 void out_tile_nv(int nv, const float *st, int64_t kend, const float *v, int64_t ks, int r0,
                                         int nr, const float *inv, float *out, int64_t qs) {
    switch (nv) {
    case 4: out_tile(4, st, kend, v, ks, r0, nr, inv, out, qs); break;
    case 3: out_tile(3, st, kend, v, ks, r0, nr, inv, out, qs); break;
    case 2: out_tile(2, st, kend, v, ks, r0, nr, inv, out, qs); break;
    default: out_tile(1, st, kend, v, ks, r0, nr, inv, out, qs); break;
    }
}

/* One work item. q, out: the block's first row at head h; k, v: KV head g's column. */
static VX_TARGET_AVX512 void block(float *out, const float *q, const float *k, const float *v, int nb, int64_t kend,
                                   int64_t qs, int64_t ks, int hd, float scale, int causal, int64_t base, float *qt,
                                   float *st) {
    for (int r = 0; r < QB; r++)
        for (int d = 0; d < hd; d++) qt[d * QB + r] = r < nb ? scale * q[r * qs + d] : 0.0f;
    __m512 mx[QV];
    for (int u = 0; u < QV; u++) mx[u] = _mm512_set1_ps(-INFINITY);
    int64_t j = 0;
    for (; j + KR <= kend; j += KR) score_tile(KR, k, ks, qt, hd, st, mx, j, causal, base);
    for (; j < kend; j++) score_tile(1, k, ks, qt, hd, st, mx, j, causal, base);
    /* exp and the lane sums (4 partial sums per lane); a lane that sees no key has max −inf: use 0 */
    __m512 s4[4][QV];
    for (int u = 0; u < QV; u++) {
        __mmask16 none = _mm512_cmp_ps_mask(mx[u], _mm512_set1_ps(-INFINITY), _CMP_EQ_OQ);
        mx[u] = _mm512_mask_mov_ps(mx[u], none, _mm512_setzero_ps());
        for (int w = 0; w < 4; w++) s4[w][u] = _mm512_setzero_ps();
    }
    for (j = 0; j < kend; j++) {
        float *row = st + j * QB;
        const int w = (int)(j & 3);
        for (int u = 0; u < QV; u++) {
            __m512 e = vx_exp512(_mm512_sub_ps(_mm512_loadu_ps(row + 16 * u), mx[u]));
            _mm512_storeu_ps(row + 16 * u, e);
            s4[w][u] = _mm512_add_ps(s4[w][u], e);
        }
    }
    float inv[QB];
    for (int u = 0; u < QV; u++) {
        __m512 s = _mm512_add_ps(_mm512_add_ps(s4[0][u], s4[1][u]), _mm512_add_ps(s4[2][u], s4[3][u]));
        __mmask16 pos = _mm512_cmp_ps_mask(s, _mm512_setzero_ps(), _CMP_GT_OQ);
        _mm512_storeu_ps(inv + 16 * u, _mm512_maskz_div_ps(pos, _mm512_set1_ps(1.0f), s));
    }
    for (int d0 = 0; d0 < hd; d0 += 64) {
        int nv = (hd - d0) / 16 < 4 ? (hd - d0) / 16 : 4;
        for (int r0 = 0; r0 < nb; r0 += QT)
            out_tile_nv(nv, st, kend, v + d0, ks, r0, nb - r0 < QT ? nb - r0 : QT, inv, out + d0, qs);
    }
}

int vx_attention_blocked_supported(int hd) { return vx_cpu_isa() >= VX_ISA_AVX512 && hd >= 16 && hd % 16 == 0; }

typedef struct blocked_job {
    float *out;
    const float *q, *k, *v;
    int64_t nq, nk, qs, ks, nblk, items, per_chunk;
    int hd, hpg, causal;
    float scale;
    _Atomic int ok;
} blocked_job;

/* The q rows of item `it` towards L2 while the item before it computes: the rows are
 * qs floats apart, too far for the hardware prefetcher, and the block's first step
 * reads them all. */
static VX_TARGET_AVX512 void prefetch_q(const blocked_job *j, int64_t it) {
    if (it >= j->items) return;
    const int h = (int)(it / j->nblk);
    const int64_t i0 = it % j->nblk * QB, nb = j->nq - i0 < QB ? j->nq - i0 : QB;
    const float *q = j->q + i0 * j->qs + (int64_t)h * j->hd;
    for (int64_t r = 0; r < nb; r++)
        for (int d = 0; d < j->hd; d += 16) _mm_prefetch((const char *)(q + r * j->qs + d), _MM_HINT_T1);
}

/* Items [c·per_chunk, …) with one scratch of QB·(hd + nk) floats. */
static void blocked_chunk(void *ctx, int64_t c) {
    blocked_job *j = ctx;
    int64_t it0 = c * j->per_chunk, it1 = it0 + j->per_chunk < j->items ? it0 + j->per_chunk : j->items;
    float *qt = malloc((size_t)QB * (size_t)(j->hd + (j->nk > 0 ? j->nk : 1)) * sizeof(float));
    if (!qt) {
        atomic_store(&j->ok, 0);
        return;
    }
    prefetch_q(j, it0);
    for (int64_t it = it0; it < it1; it++) {
        if (it + 1 < it1) prefetch_q(j, it + 1);
        const int h = (int)(it / j->nblk), g = h / j->hpg;
        const int64_t i0 = it % j->nblk * QB, nb = j->nq - i0 < QB ? j->nq - i0 : QB;
        /* keys any row of the block sees; base: row r sees keys j ≤ base + r */
        const int64_t base = j->nk - j->nq + i0;
        int64_t kend = j->nk;
        if (j->causal) kend = base + nb < 0 ? 0 : base + nb > j->nk ? j->nk : base + nb;
        float *o = j->out + i0 * j->qs + (int64_t)h * j->hd;
        if (kend == 0) {
            for (int64_t r = 0; r < nb; r++) memset(o + r * j->qs, 0, (size_t)j->hd * sizeof(float));
            continue;
        }
        block(o, j->q + i0 * j->qs + (int64_t)h * j->hd, j->k + (int64_t)g * j->hd, j->v + (int64_t)g * j->hd,
              (int)nb, kend, j->qs, j->ks, j->hd, j->scale, j->causal, base, qt, qt + (int64_t)QB * j->hd);
    }
    free(qt);
}

int vx_attention_blocked(float *out, const float *q, const float *k, const float *v, int64_t nq, int64_t nk,
                         int n_heads, int n_kv_heads, int hd, int64_t kv_stride, float scale, int causal,
                         int nthreads) {
    if (nq <= 0 || n_heads <= 0) return 1;
    if (nthreads < 1) nthreads = 1;
    const int64_t qs = (int64_t)n_heads * hd, nblk = (nq + QB - 1) / QB, items = (int64_t)n_heads * nblk;
    if ((double)nq * nk * qs < 1e6 || items < 2) nthreads = 1;
    blocked_job j = {out, q, k, v, nq, nk, qs, kv_stride, nblk, items, 0, hd, n_heads / n_kv_heads, causal, scale};
    j.per_chunk = vx_pool_chunk_items(items, 1, nthreads);
    atomic_init(&j.ok, 1);
    vx_pool_run(nthreads, (items + j.per_chunk - 1) / j.per_chunk, blocked_chunk, &j);
    return atomic_load(&j.ok); /* 0: no scratch, the caller takes the allocation-free path */
}

/* ---- the bf16 form (bf16 precision mode): the same blocks with vdpbf16ps ----
 * q, k, v are rounded to bf16 and the products accumulate in float32:
 *   kb[j][p]  = k_j[2p] | k_j[2p+1] << 16           (per KV head, once per chunk)
 *   vb[jp][d] = v_2jp[d] | v_2jp+1[d] << 16          (pairs of keys; zero past nk)
 *   qp[p][r]  = q_r[2p] | q_r[2p+1] << 16            (the block, zero past nb)
 *   st[j][r]  = scale · Σ_p qp[p][r]·kb[j][p]        (lanes = queries, as above)
 *   pp[jp][r] = e_2jp,r | e_2jp+1,r << 16, e = exp(st − max_j st[·][r]) rounded to bf16
 *   out[r][d] = Σ_jp pp[jp][r]·vb[jp][d] / Σ_j e_j,r (the float32 e)
 * pp overwrites st in place (row jp is written after rows 2jp, 2jp + 1 were read). */
#define VX_TARGET_AVX512BF16 __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512bf16,avx2,fma,f16c")))

VX_INLINE VX_TARGET_AVX512BF16 void score_tile16(int kr, const uint32_t *kb, int hp, const uint32_t *qp, float *st,
                                                 __m512 mx[QV], int64_t j, float scale, int causal, int64_t base) {
    __m512 acc[KR][QV];
    _Pragma("GCC unroll 8")
    for (int t = 0; t < kr; t++)
        _Pragma("GCC unroll 3")
        for (int u = 0; u < QV; u++) acc[t][u] = _mm512_setzero_ps();
    const uint32_t *kj = kb + j * hp;
    for (int p = 0; p < hp; p++) {
        __m512bh qv[QV];
        _Pragma("GCC unroll 3")
        for (int u = 0; u < QV; u++) qv[u] = (__m512bh)_mm512_loadu_si512(qp + p * QB + 16 * u);
        _Pragma("GCC unroll 8")
        for (int t = 0; t < kr; t++) {
            __m512bh kv = (__m512bh)_mm512_set1_epi32((int)kj[t * hp + p]);
            _Pragma("GCC unroll 3")
            for (int u = 0; u < QV; u++) acc[t][u] = _mm512_dpbf16_ps(acc[t][u], kv, qv[u]);
        }
    }
    const __m512 sc = _mm512_set1_ps(scale);
    store_scores(kr, acc, &sc, st, mx, j, causal, base);
}

/* out rows r0 .. r0+nr−1 (nr ≤ QT), dims d0 .. d0+16·nv−1 from np key pairs. */
VX_INLINE VX_TARGET_AVX512BF16 void out_tile16(int nv, const uint32_t *pp, int64_t np, const uint32_t *vb, int hd,
                                               int r0, int nr, const float *inv, float *out, int64_t qs) {
    __m512 acc[QT][4];
    _Pragma("GCC unroll 6")
    for (int t = 0; t < QT; t++)
        _Pragma("GCC unroll 4")
        for (int u = 0; u < nv; u++) acc[t][u] = _mm512_setzero_ps();
    for (int64_t jp = 0; jp < np; jp++) {
        __m512bh vv[4];
        const uint32_t *vj = vb + jp * hd;
        _Pragma("GCC unroll 4")
        for (int u = 0; u < nv; u++) vv[u] = (__m512bh)_mm512_loadu_si512(vj + 16 * u);
        const uint32_t *p = pp + jp * QB + r0;
        _Pragma("GCC unroll 6")
        for (int t = 0; t < QT; t++) {
            __m512bh pb = (__m512bh)_mm512_set1_epi32((int)p[t]);
            _Pragma("GCC unroll 4")
            for (int u = 0; u < nv; u++) acc[t][u] = _mm512_dpbf16_ps(acc[t][u], pb, vv[u]);
        }
    }
    for (int t = 0; t < nr; t++) {
        __m512 s = _mm512_set1_ps(inv[r0 + t]);
        for (int u = 0; u < nv; u++) _mm512_storeu_ps(out + (r0 + t) * qs + 16 * u, _mm512_mul_ps(acc[t][u], s));
    }
}

static VX_TARGET_AVX512BF16 void out_tile16_nv(int nv, const uint32_t *pp, int64_t np, const uint32_t *vb, int hd,
                                               int r0, int nr, const float *inv, float *out, int64_t qs) {
    switch (nv) {
    case 4: out_tile16(4, pp, np, vb, hd, r0, nr, inv, out, qs); break;
    case 3: out_tile16(3, pp, np, vb, hd, r0, nr, inv, out, qs); break;
    case 2: out_tile16(2, pp, np, vb, hd, r0, nr, inv, out, qs); break;
    default: out_tile16(1, pp, np, vb, hd, r0, nr, inv, out, qs); break;
    }
}

/* 16 floats → 16 bf16 in the low halves of 32-bit lanes */
VX_INLINE VX_TARGET_AVX512BF16 __m512i bf16_lanes(__m512 x) {
    return _mm512_cvtepu16_epi32((__m256i)_mm512_cvtneps_pbh(x));
}

/* One row of hd floats (hd a multiple of 16) → hd/2 bf16 pairs (x[2p] | x[2p + 1] << 16). */
VX_INLINE VX_TARGET_AVX512BF16 void row_pairs(uint32_t *dst, const float *x, int hd) {
    const __m512i even_idx = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    const __m512i odd_idx = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
    for (int d = 0; d < hd; d += 32) {
        /* lanes hold x[d + i] and x[d + 16 + i]; pairs want (x[d + 2i], x[d + 2i + 1]) */
        __m512i lo = bf16_lanes(_mm512_loadu_ps(x + d));
        __m512i hi = hd - d >= 32 ? bf16_lanes(_mm512_loadu_ps(x + d + 16)) : _mm512_setzero_si512();
        __m512i pr = _mm512_or_si512(_mm512_permutex2var_epi32(lo, even_idx, hi),
                                     _mm512_slli_epi32(_mm512_permutex2var_epi32(lo, odd_idx, hi), 16));
        _mm512_mask_storeu_epi32(dst + d / 2, hd - d >= 32 ? 0xFFFF : 0x00FF, pr); /* else hd − d = 16: 8 pairs */
    }
}

/* K and V of one KV head (column offset applied) in the pair layouts. */
static VX_TARGET_AVX512BF16 void convert_kv16(uint32_t *kb, uint32_t *vb, const float *k, const float *v, int64_t nk,
                                              int64_t ks, int hd) {
    /* rows are ks floats apart: fetch a few rows ahead of the conversion */
    for (int64_t j = 0; j < nk; j++) {
        if (j + 8 < nk)
            for (int d = 0; d < hd; d += 16) {
                _mm_prefetch((const char *)(k + (j + 8) * ks + d), _MM_HINT_T0);
                _mm_prefetch((const char *)(v + (j + 8) * ks + d), _MM_HINT_T0);
            }
        row_pairs(kb + j * (hd / 2), k + j * ks, hd);
    }
    for (int64_t jp = 0; 2 * jp < nk; jp++) {
        const float *v0 = v + 2 * jp * ks, *v1 = v0 + ks;
        for (int d = 0; d < hd; d += 16) {
            __m512i lo = bf16_lanes(_mm512_loadu_ps(v0 + d));
            __m512i hi = 2 * jp + 1 < nk ? bf16_lanes(_mm512_loadu_ps(v1 + d)) : _mm512_setzero_si512();
            _mm512_storeu_si512(vb + jp * hd + d, _mm512_or_si512(lo, _mm512_slli_epi32(hi, 16)));
        }
    }
}

static VX_TARGET_AVX512BF16 void block16(float *out, const float *q, const uint32_t *kb, const uint32_t *vb, int nb,
                                         int64_t kend, int64_t qs, int hd, float scale, int causal, int64_t base,
                                         uint32_t *qp, float *st) {
    const int hp = hd / 2;
    /* rows of pairs first (qrow, in st's space), then their transpose: reading a row
     * right after its vector stores would stall on store forwarding */
    uint32_t *qrow = (uint32_t *)st;
    for (int r = 0; r < nb; r++) row_pairs(qrow + r * hp, q + r * qs, hd);
    for (int p = 0; p < hp; p++)
        for (int r = 0; r < QB; r++) qp[p * QB + r] = r < nb ? qrow[r * hp + p] : 0;
    __m512 mx[QV];
    for (int u = 0; u < QV; u++) mx[u] = _mm512_set1_ps(-INFINITY);
    int64_t j = 0;
    for (; j + KR <= kend; j += KR) score_tile16(KR, kb, hp, qp, st, mx, j, scale, causal, base);
    for (; j < kend; j++) score_tile16(1, kb, hp, qp, st, mx, j, scale, causal, base);
    __m512 s4[2][QV];
    for (int u = 0; u < QV; u++) {
        __mmask16 none = _mm512_cmp_ps_mask(mx[u], _mm512_set1_ps(-INFINITY), _CMP_EQ_OQ);
        mx[u] = _mm512_mask_mov_ps(mx[u], none, _mm512_setzero_ps());
        s4[0][u] = s4[1][u] = _mm512_setzero_ps();
    }
    const int64_t np = (kend + 1) / 2;
    uint32_t *pp = (uint32_t *)st;
    for (int64_t jp = 0; jp < np; jp++) {
        const float *r0 = st + 2 * jp * QB, *r1 = r0 + QB;
        __m512i pr[QV];
        for (int u = 0; u < QV; u++) {
            __m512 e0 = vx_exp512(_mm512_sub_ps(_mm512_loadu_ps(r0 + 16 * u), mx[u]));
            __m512 e1 = 2 * jp + 1 < kend ? vx_exp512(_mm512_sub_ps(_mm512_loadu_ps(r1 + 16 * u), mx[u]))
                                          : _mm512_setzero_ps();
            s4[0][u] = _mm512_add_ps(s4[0][u], e0);
            s4[1][u] = _mm512_add_ps(s4[1][u], e1);
            pr[u] = _mm512_or_si512(bf16_lanes(e0), _mm512_slli_epi32(bf16_lanes(e1), 16));
        }
        for (int u = 0; u < QV; u++) _mm512_storeu_si512(pp + jp * QB + 16 * u, pr[u]);
    }
    float inv[QB];
    for (int u = 0; u < QV; u++) {
        __m512 s = _mm512_add_ps(s4[0][u], s4[1][u]);
        __mmask16 pos = _mm512_cmp_ps_mask(s, _mm512_setzero_ps(), _CMP_GT_OQ);
        _mm512_storeu_ps(inv + 16 * u, _mm512_maskz_div_ps(pos, _mm512_set1_ps(1.0f), s));
    }
    for (int d0 = 0; d0 < hd; d0 += 64) {
        int nv = (hd - d0) / 16 < 4 ? (hd - d0) / 16 : 4;
        for (int r0 = 0; r0 < nb; r0 += QT)
            out_tile16_nv(nv, pp, np, vb + d0, hd, r0, nb - r0 < QT ? nb - r0 : QT, inv, out + d0, qs);
    }
}

/* Items [c·per_chunk, …); K and V converted again only when the KV head changes. */
static void blocked16_chunk(void *ctx, int64_t c) {
    blocked_job *j = ctx;
    const int64_t nk = j->nk, nkp = (nk + 1) / 2;
    int64_t it0 = c * j->per_chunk, it1 = it0 + j->per_chunk < j->items ? it0 + j->per_chunk : j->items;
    /* kb nk·hd/2, vb nkp·hd, qp QB·hd/2 entries; st QB·2·nkp floats (at least QB·hd/2: qrow) */
    const int64_t st_n = QB * (2 * nkp > j->hd / 2 ? 2 * nkp : j->hd / 2);
    size_t n = (size_t)(nk * j->hd / 2 + nkp * j->hd + QB * j->hd / 2 + st_n);
    uint32_t *kb = malloc(n * sizeof(uint32_t));
    if (!kb) {
        atomic_store(&j->ok, 0);
        return;
    }
    uint32_t *vb = kb + nk * j->hd / 2, *qp = vb + nkp * j->hd;
    float *st = (float *)(qp + QB * j->hd / 2);
    int have = -1;
    prefetch_q(j, it0);
    for (int64_t it = it0; it < it1; it++) {
        if (it + 1 < it1) prefetch_q(j, it + 1);
        const int h = (int)(it / j->nblk), g = h / j->hpg;
        const int64_t i0 = it % j->nblk * QB, nb = j->nq - i0 < QB ? j->nq - i0 : QB;
        const int64_t base = nk - j->nq + i0;
        int64_t kend = nk;
        if (j->causal) kend = base + nb < 0 ? 0 : base + nb > nk ? nk : base + nb;
        float *o = j->out + i0 * j->qs + (int64_t)h * j->hd;
        if (kend == 0) {
            for (int64_t r = 0; r < nb; r++) memset(o + r * j->qs, 0, (size_t)j->hd * sizeof(float));
            continue;
        }
        if (g != have) {
            convert_kv16(kb, vb, j->k + (int64_t)g * j->hd, j->v + (int64_t)g * j->hd, nk, j->ks, j->hd);
            have = g;
        }
        block16(o, j->q + i0 * j->qs + (int64_t)h * j->hd, kb, vb, (int)nb, kend, j->qs, j->hd, j->scale, j->causal,
                base, qp, st);
    }
    free(kb);
}

int vx_attention_blocked16_supported(int hd) {
    return vx_attention_blocked_supported(hd) && vx_cpu_has_avx512bf16();
}

int vx_attention_blocked16(float *out, const float *q, const float *k, const float *v, int64_t nq, int64_t nk,
                           int n_heads, int n_kv_heads, int hd, int64_t kv_stride, float scale, int causal,
                           int nthreads) {
    if (nq <= 0 || n_heads <= 0) return 1;
    if (nthreads < 1) nthreads = 1;
    const int64_t qs = (int64_t)n_heads * hd, nblk = (nq + QB - 1) / QB, items = (int64_t)n_heads * nblk;
    if ((double)nq * nk * qs < 1e6 || items < 2) nthreads = 1;
    blocked_job j = {out, q, k, v, nq, nk, qs, kv_stride, nblk, items, 0, hd, n_heads / n_kv_heads, causal, scale};
    j.per_chunk = vx_pool_chunk_items(items, 1, nthreads);
    atomic_init(&j.ok, 1);
    vx_pool_run(nthreads, (items + j.per_chunk - 1) / j.per_chunk, blocked16_chunk, &j);
    return atomic_load(&j.ok);
}
