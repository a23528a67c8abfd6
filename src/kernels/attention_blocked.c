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

/* Scores of keys j .. j+kr−1 against the block; masked (causal) lanes get −inf.
 * A lane r is visible to key j when j − base ≤ r (base = nk − nq + i0). */
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
    const __m512 iota = _mm512_setr_ps(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    _Pragma("GCC unroll 8")
    for (int t = 0; t < kr; t++) {
        int64_t thr = causal ? j + t - base : 0;
        _Pragma("GCC unroll 3")
        for (int u = 0; u < QV; u++) {
            __m512 a = acc[t][u];
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

/* Items [c·per_chunk, …) with one scratch of QB·(hd + nk) floats. */
static void blocked_chunk(void *ctx, int64_t c) {
    blocked_job *j = ctx;
    int64_t it0 = c * j->per_chunk, it1 = it0 + j->per_chunk < j->items ? it0 + j->per_chunk : j->items;
    float *qt = malloc((size_t)QB * (size_t)(j->hd + (j->nk > 0 ? j->nk : 1)) * sizeof(float));
    if (!qt) {
        atomic_store(&j->ok, 0);
        return;
    }
    for (int64_t it = it0; it < it1; it++) {
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
