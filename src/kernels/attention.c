/* Scaled dot-product attention over position-major K/V (a KV cache).
 *
 * Few query rows (decode): one pass over the keys with an online softmax
 * (running max and sum, flash-attention style), blocks of KB keys, all query
 * heads of a GQA group together so that K/V are read once per group. A long
 * context is split into key ranges (their count depends on nk only, several
 * per thread), merged at the end (flash-decoding); a short one with few rows
 * is split by heads. The rows of several sequences (a decode step's batch)
 * run in one pool region (vx_attention_kv_seqs).
 * Many query rows (prefill, perceiver): per head and block of query rows,
 * S = scale·Q·Kᵀ and O = softmax(S)·V with sgemm into per-thread scratch.
 * A query row that sees no key (causal with nq > nk) gets zeros.
 *
 * 2 threads, AVX-512, decode (nq = 1), ms per call: 64K keys, 12 heads /
 * 2 KV heads, hd 128: 6.0 (22 GB/s of KV; compute alone would allow ~2.2);
 * 8K keys, 28 / 4 heads: 1.1; 1000 keys, 16 heads, hd 64: 0.10 (before the
 * prefetch a block ahead, which took 1 thread's CPU time at 32K keys, bf16,
 * from 6.5 to 3.8 ms per call: bench/bench_attention). Such a row costs
 * 4·hd flops per key and query head, so with 6 query heads per KV head it
 * needs 6 (bf16 K/V) or 3 (f32) flops per byte of cache: at this host's
 * f32 FMA peak (~150 GFLOP/s on 2 threads) the multiplies alone take as
 * long as reading 25 (bf16) or 50 GB/s (f32), about its whole read
 * bandwidth: no faster without cheaper arithmetic (bf16 products). Prefill
 * 2048 rows, 12 / 2 heads, hd 128: 62 ms (~210 GFLOP/s).
 * Tiles of up to 6 query heads of a group (below) read and widen each K/V
 * vector once for all of them (the 4 + 2 head tiles before widened K twice
 * and V four times for Qwen2-1.5B's 6 heads). 2026-12-08 A/B with
 * bench/bench_attention (a layer of the pair per call, caches cycled beyond
 * L3), GFLOP/s, medians of 3 (f32 peak ~236 on 2 threads):
 * 12 / 2 heads, 32K bf16 keys 75 -> 86 (1 thread 46 -> 59); 28 / 4 heads,
 * 32K bf16 86 -> 97, 8K f32 58 -> 64. In cache (4K keys, 1 thread) ~60 % of
 * the f32 peak: the 16-lane sum of every dot product (~3 shuffle and add ops
 * per 8 FMAs at hd 128) and the softmax take the rest. */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "base/pool.h"
#include "kernels/isa.h"

#define GEMM_MIN_Q 16 /* query rows from which the sgemm path is used */
#define KB 128        /* keys per online-softmax block */
#define CH 16         /* max query heads per unit (heads of one group handled together) */
/* The first head of a unit prefetches its K/V rows one block ahead into L2
 * (the later heads and the next unit's use find them there): the rows of
 * one KV head are strided in the cache, which the hardware prefetcher
 * follows poorly, and a block ahead leaves a whole block's arithmetic to
 * hide the memory latency. 1 thread, 32K keys, 12 heads / 2 KV heads, hd
 * 128, bf16 K/V, CPU time per call on a busy host: 6.5 ms with 8 keys ahead
 * into L1 (as before), 3.8 ms a block ahead into L2 (8 keys ahead into L1
 * on top, or the prefetches into L1, were no better). */
#define PF_KEYS KB

/* K/V elements are float32 or bf16 (a bf16 KV cache: vx_attention_kv): the
 * pieces below are written once over an element loader with a constant
 * `bf` flag and instantiated for both, so that bf16 K/V widened in registers
 * go through exactly the float32 arithmetic (same order, f32 accumulation):
 * the result equals vx_attention over the same values widened to float32. */
VX_INLINE float ld1(const void *p, int64_t i, int bf) {
    return bf ? vx_bf16_to_f32(((const uint16_t *)p)[i]) : ((const float *)p)[i];
}

/* Prefetch n rows of hd elements at element offset `at`, rows ks elements apart. */
VX_INLINE void prefetch_rows(const void *p, int64_t at, int n, int64_t ks, int hd, int bf) {
    const int64_t es = bf ? 2 : 4;
    const char *c = (const char *)p + at * es;
    for (int r = 0; r < n; r++)
        for (int64_t b = 0; b < hd * es; b += 64) _mm_prefetch(c + r * ks * es + b, _MM_HINT_T1);
}

/* ---- per-ISA pieces of the online softmax ----
 * scores: s[j] = scale · q·k_j;  expsum: s[j] = exp(s[j] − m), returns Σ;
 * pv: o += Σ_j p[j] · v_j;  k_j = k + j·ks, v_j = v + j·ks (elements). */

VX_INLINE void scores_1_t(int bf, float *s, const float *q, const void *k, int64_t ks, int hd, int64_t nb,
                          float scale) {
    for (int64_t j = 0; j < nb; j++) {
        const int64_t kj = j * ks;
        float p[8] = {0};
        int d = 0;
        for (; d + 8 <= hd; d += 8)
            for (int l = 0; l < 8; l++) p[l] += q[d + l] * ld1(k, kj + d + l, bf);
        float a = ((p[0] + p[1]) + (p[2] + p[3])) + ((p[4] + p[5]) + (p[6] + p[7]));
        for (; d < hd; d++) a += q[d] * ld1(k, kj + d, bf);
        s[j] = a * scale;
    }
}

/* max(m, s[0 .. nb−1]); a NaN score is passed over as by `s > m ? s : m` */
static float maxof_1(const float *s, int64_t nb, float m) {
    for (int64_t j = 0; j < nb; j++) m = s[j] > m ? s[j] : m;
    return m;
}

static float expsum_1(float *s, int64_t nb, float m) {
    float sum = 0;
    for (int64_t j = 0; j < nb; j++) sum += s[j] = expf(s[j] - m);
    return sum;
}

VX_INLINE void pv_1_t(int bf, float *o, const float *p, const void *v, int64_t ks, int hd, int64_t nb) {
    for (int64_t j = 0; j < nb; j++)
        for (int d = 0; d < hd; d++) o[d] += p[j] * ld1(v, j * ks + d, bf);
}

VX_INLINE VX_TARGET_AVX2 __m256 ld8(const void *p, int64_t i, int bf) {
    if (bf)
        return _mm256_castsi256_ps(_mm256_slli_epi32(
            _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)((const uint16_t *)p + i))), 16));
    return _mm256_loadu_ps((const float *)p + i);
}

VX_INLINE VX_TARGET_AVX2 void scores_2_t(int bf, float *s, const float *q, const void *k, int64_t ks, int hd,
                                         int64_t nb, float scale, int pf) {
    for (int64_t j = 0; j < nb; j++) {
        const int64_t kj = j * ks;
        if (pf) prefetch_rows(k, kj + PF_KEYS * ks, 1, ks, hd, bf);
        __m256 acc = _mm256_setzero_ps();
        int d = 0;
        for (; d + 8 <= hd; d += 8) acc = _mm256_fmadd_ps(_mm256_loadu_ps(q + d), ld8(k, kj + d, bf), acc);
        float a = vx_hsum256(acc);
        for (; d < hd; d++) a += q[d] * ld1(k, kj + d, bf);
        s[j] = a * scale;
    }
}

static VX_TARGET_AVX2 float expsum_2(float *s, int64_t nb, float m) {
    __m256 m8 = _mm256_set1_ps(m), acc = _mm256_setzero_ps();
    int64_t j = 0;
    for (; j + 8 <= nb; j += 8) {
        __m256 e = vx_exp256(_mm256_sub_ps(_mm256_loadu_ps(s + j), m8));
        _mm256_storeu_ps(s + j, e);
        acc = _mm256_add_ps(acc, e);
    }
    float sum = vx_hsum256(acc);
    for (; j < nb; j++) sum += s[j] = expf(s[j] - m);
    return sum;
}

VX_INLINE VX_TARGET_AVX2 void pv_2_t(int bf, float *o, const float *p, const void *v, int64_t ks, int hd,
                                     int64_t nb, int pf) {
    int d0 = 0;
    for (; d0 + 32 <= hd; d0 += 32) {
        __m256 a0 = _mm256_loadu_ps(o + d0), a1 = _mm256_loadu_ps(o + d0 + 8);
        __m256 a2 = _mm256_loadu_ps(o + d0 + 16), a3 = _mm256_loadu_ps(o + d0 + 24);
        for (int64_t j = 0; j < nb; j++) {
            const int64_t vj = j * ks + d0;
            if (pf && d0 == 0) prefetch_rows(v, vj + PF_KEYS * ks, 1, ks, hd, bf);
            __m256 pj = _mm256_set1_ps(p[j]);
            a0 = _mm256_fmadd_ps(pj, ld8(v, vj, bf), a0);
            a1 = _mm256_fmadd_ps(pj, ld8(v, vj + 8, bf), a1);
            a2 = _mm256_fmadd_ps(pj, ld8(v, vj + 16, bf), a2);
            a3 = _mm256_fmadd_ps(pj, ld8(v, vj + 24, bf), a3);
        }
        _mm256_storeu_ps(o + d0, a0);
        _mm256_storeu_ps(o + d0 + 8, a1);
        _mm256_storeu_ps(o + d0 + 16, a2);
        _mm256_storeu_ps(o + d0 + 24, a3);
    }
    for (; d0 + 8 <= hd; d0 += 8) {
        __m256 a = _mm256_loadu_ps(o + d0);
        for (int64_t j = 0; j < nb; j++) a = _mm256_fmadd_ps(_mm256_set1_ps(p[j]), ld8(v, j * ks + d0, bf), a);
        _mm256_storeu_ps(o + d0, a);
    }
    for (int64_t j = 0; d0 < hd && j < nb; j++)
        for (int d = d0; d < hd; d++) o[d] += p[j] * ld1(v, j * ks + d, bf);
}

static VX_TARGET_AVX512 float maxof_5(const float *s, int64_t nb, float m) {
    __m512 acc = _mm512_set1_ps(m); /* max_ps(x, acc) keeps acc where x is NaN or not above it */
    int64_t j = 0;
    for (; j + 16 <= nb; j += 16) acc = _mm512_max_ps(_mm512_loadu_ps(s + j), acc);
    if (j < nb) {
        __mmask16 tm = (__mmask16)((1u << (nb - j)) - 1);
        acc = _mm512_mask_max_ps(acc, tm, _mm512_maskz_loadu_ps(tm, s + j), acc);
    }
    return vx_hmax512(acc);
}

static VX_TARGET_AVX512 float expsum_5(float *s, int64_t nb, float m) {
    __m512 m16 = _mm512_set1_ps(m), acc = _mm512_setzero_ps();
    int64_t j = 0;
    for (; j + 16 <= nb; j += 16) {
        __m512 e = vx_exp512(_mm512_sub_ps(_mm512_loadu_ps(s + j), m16));
        _mm512_storeu_ps(s + j, e);
        acc = _mm512_add_ps(acc, e);
    }
    if (j < nb) {
        __mmask16 tm = (__mmask16)((1u << (nb - j)) - 1);
        __m512 e = _mm512_maskz_mov_ps(tm, vx_exp512(_mm512_sub_ps(_mm512_maskz_loadu_ps(tm, s + j), m16)));
        _mm512_mask_storeu_ps(s + j, tm, e);
        acc = _mm512_add_ps(acc, e);
    }
    return vx_hsum512(acc);
}

/* ---- AVX-512, several query heads of one KV group at once ----
 * A tile is up to HT query heads of one KV group against 2 or 4 keys (scores) or
 * one key at a time over 64 dims (pv): each K/V vector loaded and widened
 * once feeds every head of the tile. bf16 elements are widened in registers
 * and go through the float32 arithmetic. */
#define HT 6 /* query heads per tile: 6 × 2 score sums, or 6 × 4 pv accumulators (7 or 8 heads in one
                scores tile measured slower for Qwen2-7B's 7 heads per group than tiles of 4 + 3) */

/* 16 elements at element offset i (lanes outside m are 0), widened to float32. */
VX_INLINE VX_TARGET_AVX512 __m512 ld16m(const void *p, int64_t i, __mmask16 m, int bf) {
    if (bf)
        return _mm512_castsi512_ps(
            _mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(m, (const uint16_t *)p + i)), 16));
    return _mm512_maskz_loadu_ps(m, (const float *)p + i);
}

/* The lanes of the 16 elements from offset d of a row of n (d < n). */
VX_INLINE __mmask16 lanes_at(int d, int n) { return n - d >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (n - d)) - 1); }

/* out lane 4a + b = Σ lanes of x[a][b]. */
VX_INLINE VX_TARGET_AVX512 __m512 hsum4x4(__m512 x[4][4]) {
    __m512 y[4];
    _Pragma("GCC unroll 4")
    for (int a = 0; a < 4; a++) {
        /* per 128-bit chunk: [Σx0, Σx1, Σx2, Σx3] over that chunk's 4 lanes */
        __m512 u01 = _mm512_add_ps(_mm512_unpacklo_ps(x[a][0], x[a][1]), _mm512_unpackhi_ps(x[a][0], x[a][1]));
        __m512 u23 = _mm512_add_ps(_mm512_unpacklo_ps(x[a][2], x[a][3]), _mm512_unpackhi_ps(x[a][2], x[a][3]));
        y[a] = _mm512_add_ps(_mm512_shuffle_ps(u01, u23, _MM_SHUFFLE(1, 0, 1, 0)),
                             _mm512_shuffle_ps(u01, u23, _MM_SHUFFLE(3, 2, 3, 2)));
    }
    /* sum the four 128-bit chunks of y[a] into chunk a */
    __m512 q01 = _mm512_add_ps(_mm512_shuffle_f32x4(y[0], y[1], _MM_SHUFFLE(1, 0, 1, 0)),
                               _mm512_shuffle_f32x4(y[0], y[1], _MM_SHUFFLE(3, 2, 3, 2)));
    __m512 q23 = _mm512_add_ps(_mm512_shuffle_f32x4(y[2], y[3], _MM_SHUFFLE(1, 0, 1, 0)),
                               _mm512_shuffle_f32x4(y[2], y[3], _MM_SHUFFLE(3, 2, 3, 2)));
    return _mm512_add_ps(_mm512_shuffle_f32x4(q01, q23, _MM_SHUFFLE(2, 0, 2, 0)),
                         _mm512_shuffle_f32x4(q01, q23, _MM_SHUFFLE(3, 1, 3, 1)));
}

/* s[a·sst + b] = scale · q_a·k_b for HN ≤ HT heads and KN keys, HN·KN ≤ 16 (k_b at
 * element k0 + b·ks; q_a = q + a·hd). HN and KN are constants in each
 * instance; the HN·KN sums, the KN k vectors and a q vector fit the 32
 * registers. */
VX_INLINE VX_TARGET_AVX512 void scores_tile(int HN, int KN, int bf, float *s, int64_t sst, const float *q,
                                            const void *k, int64_t k0, int64_t ks, int hd, float scale) {
    __m512 acc[16];
    _Pragma("GCC unroll 16")
    for (int i = 0; i < 16; i++) acc[i] = _mm512_setzero_ps();
    for (int d = 0; d < hd; d += 16) {
        const __mmask16 m = lanes_at(d, hd);
        __m512 kv[4];
        _Pragma("GCC unroll 4")
        for (int b = 0; b < KN; b++) kv[b] = ld16m(k, k0 + b * ks + d, m, bf);
        _Pragma("GCC unroll 6")
        for (int a = 0; a < HN; a++) {
            __m512 qv = _mm512_maskz_loadu_ps(m, q + a * hd + d);
            _Pragma("GCC unroll 4")
            for (int b = 0; b < KN; b++) acc[a * KN + b] = _mm512_fmadd_ps(qv, kv[b], acc[a * KN + b]);
        }
    }
    float r[16];
    _mm512_storeu_ps(r, _mm512_mul_ps(hsum4x4((__m512(*)[4])acc), _mm512_set1_ps(scale)));
    _Pragma("GCC unroll 6")
    for (int a = 0; a < HN; a++)
        _Pragma("GCC unroll 4")
        for (int b = 0; b < KN; b++) s[a * sst + b] = r[a * KN + b];
}

VX_INLINE VX_TARGET_AVX512 void scores_heads(int HN, int bf, float *s, int64_t sst, const float *q, const void *k,
                                             int64_t ks, int hd, int64_t nb, float scale, int pf) {
    const int KN = HN <= 4 ? 4 : 2; /* up to 16 sums per tile: each q vector feeds as many keys as fit */
    int64_t j = 0;
    for (; j + KN <= nb; j += KN) {
        if (pf) prefetch_rows(k, (j + PF_KEYS) * ks, KN, ks, hd, bf);
        scores_tile(HN, KN, bf, s + j, sst, q, k, j * ks, ks, hd, scale);
    }
    for (; j < nb; j++) scores_tile(HN, 1, bf, s + j, sst, q, k, j * ks, ks, hd, scale);
}

/* Splits nh heads into near-equal tiles of ≤ most: tile t covers heads [*h0, *h0 + return). */
static int tile_heads(int nh, int most, int t, int *h0) {
    int nt = (nh + most - 1) / most, base = nh / nt, extra = nh % nt;
    *h0 = t * base + (t < extra ? t : extra);
    return base + (t < extra);
}

/* s[h·sst + j] = scale · q_h·k_j for nh heads (q_h = q + h·hd). */
VX_INLINE VX_TARGET_AVX512 void scores_mh_5_t(int bf, float *s, int64_t sst, const float *q, int nh,
                                              const void *k, int64_t ks, int hd, int64_t nb, float scale, int pf) {
    for (int t = 0, h0; t < (nh + HT - 1) / HT; t++) {
        int n = tile_heads(nh, HT, t, &h0), f = pf && t == 0;
        float *sh = s + h0 * sst;
        const float *qh = q + (int64_t)h0 * hd;
        switch (n) {
        case 1: scores_heads(1, bf, sh, sst, qh, k, ks, hd, nb, scale, f); break;
        case 2: scores_heads(2, bf, sh, sst, qh, k, ks, hd, nb, scale, f); break;
        case 3: scores_heads(3, bf, sh, sst, qh, k, ks, hd, nb, scale, f); break;
        case 4: scores_heads(4, bf, sh, sst, qh, k, ks, hd, nb, scale, f); break;
        case 5: scores_heads(5, bf, sh, sst, qh, k, ks, hd, nb, scale, f); break;
        default: scores_heads(6, bf, sh, sst, qh, k, ks, hd, nb, scale, f); break;
        }
    }
}

/* o_h += Σ_j p[h·pst + j] · v_j for HN ≤ HT heads (o_h = o + h·hd) over the
 * 64 dims from element offset vo (rem of them left). */
VX_INLINE VX_TARGET_AVX512 void pv_tile(int HN, int bf, float *o, int hd, const float *p, int64_t pst,
                                        const void *v, int64_t vo, int64_t ks, int64_t nb, int rem, int pf) {
    __m512 acc[HT][4], vv[4];
    __mmask16 mk[4];
    _Pragma("GCC unroll 4")
    for (int u = 0; u < 4; u++) mk[u] = 16 * u < rem ? lanes_at(16 * u, rem) : 0;
    _Pragma("GCC unroll 6")
    for (int a = 0; a < HN; a++)
        _Pragma("GCC unroll 4")
        for (int u = 0; u < 4; u++) acc[a][u] = _mm512_maskz_loadu_ps(mk[u], o + a * hd + 16 * u);
    for (int64_t j = 0; j < nb; j++) {
        const int64_t vj = vo + j * ks;
        if (pf) prefetch_rows(v, vj + PF_KEYS * ks, 1, ks, hd, bf);
        _Pragma("GCC unroll 4")
        for (int u = 0; u < 4; u++) vv[u] = ld16m(v, vj + 16 * u, mk[u], bf);
        _Pragma("GCC unroll 6")
        for (int a = 0; a < HN; a++) {
            __m512 pa = _mm512_set1_ps(p[a * pst + j]);
            _Pragma("GCC unroll 4")
            for (int u = 0; u < 4; u++) acc[a][u] = _mm512_fmadd_ps(pa, vv[u], acc[a][u]);
        }
    }
    _Pragma("GCC unroll 6")
    for (int a = 0; a < HN; a++)
        _Pragma("GCC unroll 4")
        for (int u = 0; u < 4; u++) _mm512_mask_storeu_ps(o + a * hd + 16 * u, mk[u], acc[a][u]);
}

VX_INLINE VX_TARGET_AVX512 void pv_mh_5_t(int bf, float *o, const float *p, int64_t pst, int nh, const void *v,
                                          int64_t ks, int hd, int64_t nb, int pf) {
    for (int d0 = 0; d0 < hd; d0 += 64)
        for (int t = 0, h0; t < (nh + HT - 1) / HT; t++) {
            int n = tile_heads(nh, HT, t, &h0), f = pf && t == 0 && d0 == 0, rem = hd - d0;
            float *oh = o + (int64_t)h0 * hd + d0;
            const float *ph = p + h0 * pst;
            switch (n) {
            case 1: pv_tile(1, bf, oh, hd, ph, pst, v, d0, ks, nb, rem, f); break;
            case 2: pv_tile(2, bf, oh, hd, ph, pst, v, d0, ks, nb, rem, f); break;
            case 3: pv_tile(3, bf, oh, hd, ph, pst, v, d0, ks, nb, rem, f); break;
            case 4: pv_tile(4, bf, oh, hd, ph, pst, v, d0, ks, nb, rem, f); break;
            case 5: pv_tile(5, bf, oh, hd, ph, pst, v, d0, ks, nb, rem, f); break;
            default: pv_tile(6, bf, oh, hd, ph, pst, v, d0, ks, nb, rem, f); break;
            }
        }
}

/* The instances: scalar and AVX2 one head at a time; AVX-512 several heads. */
#define ATTN_OPS(SFX, BF)                                                                                          \
    static void scores_mh_1##SFX(float *s, int64_t sst, const float *q, int nh, const void *k, int64_t ks, int hd, \
                                 int64_t nb, float scale, int pf) {                                               \
        (void)pf;                                                                                                  \
        for (int h = 0; h < nh; h++) scores_1_t(BF, s + h * sst, q + (int64_t)h * hd, k, ks, hd, nb, scale);       \
    }                                                                                                              \
    static void pv_mh_1##SFX(float *o, const float *p, int64_t pst, int nh, const void *v, int64_t ks, int hd,    \
                             int64_t nb, int pf) {                                                                 \
        (void)pf;                                                                                                  \
        for (int h = 0; h < nh; h++) pv_1_t(BF, o + (int64_t)h * hd, p + h * pst, v, ks, hd, nb);                 \
    }                                                                                                              \
    static VX_TARGET_AVX2 void scores_mh_2##SFX(float *s, int64_t sst, const float *q, int nh, const void *k,      \
                                                int64_t ks, int hd, int64_t nb, float scale, int pf) {             \
        for (int h = 0; h < nh; h++)                                                                               \
            scores_2_t(BF, s + h * sst, q + (int64_t)h * hd, k, ks, hd, nb, scale, pf && h == 0);                  \
    }                                                                                                              \
    static VX_TARGET_AVX2 void pv_mh_2##SFX(float *o, const float *p, int64_t pst, int nh, const void *v,          \
                                            int64_t ks, int hd, int64_t nb, int pf) {                              \
        for (int h = 0; h < nh; h++) pv_2_t(BF, o + (int64_t)h * hd, p + h * pst, v, ks, hd, nb, pf && h == 0);    \
    }                                                                                                              \
    static VX_TARGET_AVX512 void scores_mh_5##SFX(float *s, int64_t sst, const float *q, int nh, const void *k,    \
                                                  int64_t ks, int hd, int64_t nb, float scale, int pf) {           \
        scores_mh_5_t(BF, s, sst, q, nh, k, ks, hd, nb, scale, pf);                                                \
    }                                                                                                              \
    static VX_TARGET_AVX512 void pv_mh_5##SFX(float *o, const float *p, int64_t pst, int nh, const void *v,        \
                                              int64_t ks, int hd, int64_t nb, int pf) {                            \
        pv_mh_5_t(BF, o, p, pst, nh, v, ks, hd, nb, pf);                                                           \
    }
ATTN_OPS(_f32, 0)
ATTN_OPS(_bf16, 1)

typedef struct {
    void (*scores)(float *s, int64_t sst, const float *q, int nh, const void *k, int64_t ks, int hd, int64_t nb,
                   float scale, int pf);
    float (*maxof)(const float *, int64_t, float);
    float (*expsum)(float *, int64_t, float);
    void (*pv)(float *o, const float *p, int64_t pst, int nh, const void *v, int64_t ks, int hd, int64_t nb,
               int pf);
} attn_ops;

/* [bf16 K/V][level] */
static const attn_ops ops_tab[2][3] = {
    {{scores_mh_1_f32, maxof_1, expsum_1, pv_mh_1_f32}, {scores_mh_2_f32, maxof_1, expsum_2, pv_mh_2_f32},
     {scores_mh_5_f32, maxof_5, expsum_5, pv_mh_5_f32}},
    {{scores_mh_1_bf16, maxof_1, expsum_1, pv_mh_1_bf16}, {scores_mh_2_bf16, maxof_1, expsum_2, pv_mh_2_bf16},
     {scores_mh_5_bf16, maxof_5, expsum_5, pv_mh_5_bf16}}};

static int64_t visible(int causal, int64_t nq, int64_t nk, int64_t i) {
    if (!causal) return nk;
    int64_t lim = nk - nq + i + 1;
    return lim < 0 ? 0 : lim > nk ? nk : lim;
}

/* Query heads are handled in units of ≤ CH heads of one KV group:
 * unit u = (group u / cpg, chunk u % cpg). */
typedef struct {
    const attn_ops *op;
    int n_heads, hd, hpg, chunk, cpg;
    int64_t ks, es; /* K/V row stride (elements), element size (bytes) */
    float scale;
} attn_cfg;

/* One query row (q, o: all heads) against keys [ja, jb) for units [u0, u1):
 * leaves the unnormalised Σ p·v in o and the running max and sum of each
 * head h in mx[h − ha], sum[h − ha], ha being the first head of unit u0. Key blocks are the outer loop so that the cache is
 * read in address order when the units cover all KV heads. */
static void attend_range(const attn_cfg *c, float *o, const float *q, const void *k, const void *v, int u0,
                         int u1, int64_t ja, int64_t jb, float *mx, float *sum) {
    float s[CH][KB];
    int hd = c->hd;
    int ha = u0 / c->cpg * c->hpg + u0 % c->cpg * c->chunk;
    int hb = (u1 - 1) / c->cpg * c->hpg + (u1 - 1) % c->cpg * c->chunk;
    hb = hb + c->chunk < (hb / c->hpg + 1) * c->hpg ? hb + c->chunk : (hb / c->hpg + 1) * c->hpg;
    memset(o + (int64_t)ha * hd, 0, (size_t)(hb - ha) * hd * sizeof(float));
    for (int h = 0; h < hb - ha; h++) {
        mx[h] = -INFINITY;
        sum[h] = 0;
    }
    for (int64_t j0 = ja; j0 < jb; j0 += KB) {
        int64_t nb = jb - j0 < KB ? jb - j0 : KB;
        for (int u = u0; u < u1; u++) {
            int g = u / c->cpg, h0 = g * c->hpg + u % c->cpg * c->chunk;
            int nh = h0 + c->chunk < (g + 1) * c->hpg ? c->chunk : (g + 1) * c->hpg - h0;
            const int64_t at = (j0 * c->ks + (int64_t)g * hd) * c->es;
            const void *kb = (const char *)k + at, *vb = (const char *)v + at;
            float *oh = o + (int64_t)h0 * hd, *mh = mx + (h0 - ha), *lh = sum + (h0 - ha);
            c->op->scores(&s[0][0], KB, q + (int64_t)h0 * hd, nh, kb, c->ks, hd, nb, c->scale, 1);
            for (int h = 0; h < nh; h++) {
                float m = c->op->maxof(s[h], nb, mh[h]);
                if (m == -INFINITY) { /* only −inf scores so far: weights 0 */
                    memset(s[h], 0, (size_t)nb * sizeof(float));
                    continue;
                }
                if (m > mh[h] && mh[h] != -INFINITY) {
                    float f = expf(mh[h] - m);
                    lh[h] *= f;
                    vx_scale(oh + (int64_t)h * hd, f, hd);
                }
                mh[h] = m;
                lh[h] += c->op->expsum(s[h], nb, m);
            }
            c->op->pv(oh, &s[0][0], KB, nh, vb, c->ks, hd, nb, 1);
        }
    }
}

#define MAXH 256        /* heads whose softmax state fits on the stack of a work item */
#define SPLIT_KEYS 1024 /* min keys per split of a long context */
#define MAX_SPLITS 32   /* key splits of one decode row: several per thread, so that the others absorb the
                           share of a preempted thread, and a region's end waits for a small item */

/* Work items `it` of one sequence's query rows: (row, key split, unit group). */
typedef struct {
    attn_cfg c;
    float *out;
    const float *q;
    const void *k, *v;
    int64_t nq, nk, qs, pstride, items;
    int causal, units, nsplit, ugroups;
    float *part; /* per (row, split): o[qs], mx[H], sum[H]; NULL: one split */
} rows_job;

static void rows_item(void *ctx, int64_t it) {
    const rows_job *j = ctx;
    const attn_cfg *c = &j->c;
    const int64_t qs = j->qs;
    const int hd = c->hd, nsplit = j->nsplit, ugroups = j->ugroups;
    int ug = (int)(it % ugroups), sp = (int)(it / ugroups % nsplit);
    int64_t i = it / ugroups / nsplit, lim = visible(j->causal, j->nq, j->nk, i);
    int u0 = ugroups == 1 ? 0 : ug, u1 = ugroups == 1 ? j->units : ug + 1;
    if (j->part) {
        float *pp = j->part + (i * nsplit + sp) * j->pstride;
        attend_range(c, pp, j->q + i * qs, j->k, j->v, u0, u1, lim * sp / nsplit, lim * (sp + 1) / nsplit, pp + qs,
                     pp + qs + c->n_heads);
        return;
    }
    float mx[MAXH], sum[MAXH];
    int h0 = u0 / c->cpg * c->hpg + u0 % c->cpg * c->chunk;
    attend_range(c, j->out + i * qs, j->q + i * qs, j->k, j->v, u0, u1, 0, lim, mx, sum);
    for (int u = u0; u < u1; u++) {
        int g = u / c->cpg, ha = g * c->hpg + u % c->cpg * c->chunk;
        int hb = ha + c->chunk < (g + 1) * c->hpg ? ha + c->chunk : (g + 1) * c->hpg;
        for (int h = ha; h < hb; h++) {
            float *o = j->out + i * qs + (int64_t)h * hd;
            if (sum[h - h0] > 0)
                vx_scale(o, 1.0f / sum[h - h0], hd);
            else
                memset(o, 0, (size_t)hd * sizeof(float));
        }
    }
}

/* Plans one sequence's rows. Work items: (row, key split, unit group). A
 * decode row (nq < 4) over a long context is split into key ranges (each
 * thread then streams a contiguous part of the cache, merged by rows_merge);
 * the split depends on nk only, never on the thread count, so any count
 * gives the same bits (a decode loop may change its count from step to
 * step). Few rows over a short context (fewer than 2 per thread, counting
 * the rows of every sequence in the region: `rows`): an item per unit of
 * heads. How heads are grouped into items does not change any head's
 * arithmetic. */
static void rows_plan(rows_job *j, const attn_ops *op, int64_t es, float *out, const float *q, const void *k,
                      const void *v, int64_t nq, int64_t nk, int n_heads, int n_kv_heads, int hd, int64_t ks,
                      float scale, int causal, int64_t rows, int nthreads) {
    attn_cfg c = {op, n_heads, hd, n_heads / n_kv_heads, 0, 0, ks, es, scale};
    c.chunk = c.hpg < CH ? c.hpg : CH;
    c.cpg = (c.hpg + c.chunk - 1) / c.chunk;
    int units = n_kv_heads * c.cpg;
    int64_t qs = (int64_t)n_heads * hd;
    int nsplit = 1, ugroups = n_heads > MAXH ? units : 1;
    if (nq < 4 && nk >= 2 * SPLIT_KEYS) {
        int64_t most = nk / SPLIT_KEYS;
        nsplit = (int)(most < MAX_SPLITS ? most : MAX_SPLITS);
    } else if (rows < 2 * (int64_t)nthreads) {
        ugroups = units;
    }
    float *part = NULL; /* per (row, split): o[qs], mx[H], sum[H] */
    int64_t pstride = qs + 2 * (int64_t)n_heads;
    if (nsplit > 1 && !(part = malloc((size_t)(nq * nsplit * pstride) * sizeof(float)))) {
        nsplit = 1;
        ugroups = units;
    }
    *j = (rows_job){c, out, q, k, v, nq, nk, qs, pstride, nq * nsplit * ugroups, causal, units, nsplit, ugroups, part};
}

/* Merges the key splits of a planned job after its items ran:
 * out = Σ_s e^(mx_s − M)·o_s / Σ_s e^(mx_s − M)·sum_s. */
static void rows_merge(rows_job *j) {
    if (!j->part) return;
    const int64_t qs = j->qs, pstride = j->pstride;
    const int n_heads = j->c.n_heads, hd = j->c.hd, nsplit = j->nsplit;
    const float *part = j->part;
    for (int64_t i = 0; i < j->nq; i++)
        for (int h = 0; h < n_heads; h++) {
            float M = -INFINITY, L = 0;
            for (int sp = 0; sp < nsplit; sp++) {
                float m = part[(i * nsplit + sp) * pstride + qs + h];
                M = m > M ? m : M;
            }
            float *o = j->out + i * qs + (int64_t)h * hd;
            memset(o, 0, (size_t)hd * sizeof(float));
            if (M == -INFINITY) continue;
            for (int sp = 0; sp < nsplit; sp++) {
                const float *pp = part + (i * nsplit + sp) * pstride;
                if (pp[qs + h] == -INFINITY) continue;
                float f = expf(pp[qs + h] - M);
                L += f * pp[qs + n_heads + h];
                vx_axpy(o, f, pp + (int64_t)h * hd, hd);
            }
            vx_scale(o, 1.0f / L, hd);
        }
    free(j->part);
    j->part = NULL;
}

static int few_threads(double work, int nthreads) { return work < 65536 ? 1 : nthreads; }

static void attention_rows(const attn_ops *op, int64_t es, float *out, const float *q, const void *k,
                           const void *v, int64_t nq, int64_t nk, int n_heads, int n_kv_heads, int hd, int64_t ks,
                           float scale, int causal, int nthreads) {
    nthreads = few_threads((double)nq * nk * n_heads * hd, nthreads);
    rows_job j;
    rows_plan(&j, op, es, out, q, k, v, nq, nk, n_heads, n_kv_heads, hd, ks, scale, causal, nq, nthreads);
    vx_pool_run(nthreads, j.items, rows_item, &j);
    rows_merge(&j);
}

/* The items of several sequences' jobs in one pool region, job after job. */
typedef struct {
    rows_job *jobs;
    int n;
} seqs_job;

static void seqs_item(void *ctx, int64_t it) {
    const seqs_job *s = ctx;
    int i = 0;
    while (it >= s->jobs[i].items) it -= s->jobs[i++].items;
    rows_item(&s->jobs[i], it);
}

/* Work of attention_gemm: items (head, block of query rows), claimed one
 * at a time by each pool chunk (one chunk per thread, each with its own
 * score scratch); an item's outputs depend on the item only, not on which
 * chunk runs it. */
typedef struct {
    int isa;
    float *out;
    const float *q, *k, *v;
    int64_t nq, nk, qs, ks, qb, n_items;
    int n_heads, hpg, hd, causal;
    float scale;
    atomic_llong next; /* next unclaimed item */
    atomic_int failed; /* a chunk found no scratch (it claimed nothing) */
} gemm_job;

static void gemm_chunk(void *ctx, int64_t chunk) {
    (void)chunk;
    gemm_job *j = ctx;
    const int64_t nk = j->nk, qs = j->qs, ks = j->ks, hd = j->hd;
    float *S = malloc((size_t)j->qb * (size_t)(nk > 0 ? nk : 1) * sizeof(float));
    if (!S) {
        atomic_store(&j->failed, 1);
        return;
    }
    for (int64_t it; (it = atomic_fetch_add(&j->next, 1)) < j->n_items;) {
        int h = (int)(it % j->n_heads), g = h / j->hpg;
        int64_t i0 = it / j->n_heads * j->qb, nb = j->nq - i0 < j->qb ? j->nq - i0 : j->qb;
        int64_t kend = visible(j->causal, j->nq, nk, i0 + nb - 1);
        float *o = j->out + i0 * qs + (int64_t)h * hd;
        if (kend == 0) {
            for (int64_t r = 0; r < nb; r++) memset(o + r * qs, 0, (size_t)hd * sizeof(float));
            continue;
        }
        /* S[nb, kend] = scale · Q_h · K_gᵀ */
        vx_gemm_f32(0, 1, nb, kend, hd, j->scale, j->q + i0 * qs + (int64_t)h * hd, qs, j->k + (int64_t)g * hd, ks,
                    0.0f, S, kend, 1);
        for (int64_t r = 0; r < nb; r++) {
            int64_t lim = visible(j->causal, j->nq, nk, i0 + r);
            vx_softmax_isa(j->isa, S + r * kend, lim);
            memset(S + r * kend + lim, 0, (size_t)(kend - lim) * sizeof(float));
        }
        /* O[nb, hd] = S · V_g */
        vx_gemm_f32(0, 0, nb, hd, kend, 1.0f, S, kend, j->v + (int64_t)g * hd, ks, 0.0f, o, qs, 1);
    }
    free(S);
}

/* Returns 0 if no chunk could get its scratch while items were left (the
 * caller then uses the row path, which rewrites every output). */
static int attention_gemm(int isa, float *out, const float *q, const float *k, const float *v, int64_t nq,
                          int64_t nk, int n_heads, int n_kv_heads, int hd, int64_t ks, float scale, int causal,
                          int nthreads) {
    int64_t qb = (1 << 20) / (nk > 0 ? nk : 1); /* ≤ 4 MiB of scores per thread */
    qb = qb < 16 ? 16 : qb > 64 ? 64 : qb;
    gemm_job j = {isa, out, q, k, v, nq, nk, (int64_t)n_heads * hd, ks, qb, (int64_t)n_heads * ((nq + qb - 1) / qb),
                  n_heads, n_heads / n_kv_heads, hd, causal, scale, 0, 0};
    vx_pool_run(nthreads, nthreads, gemm_chunk, &j);
    /* a chunk without scratch claims nothing: the others did all the items unless every chunk failed */
    return atomic_load(&j.next) >= j.n_items;
}

void vx_attention_isa(int isa, float *out, const float *q, const float *k, const float *v, int64_t nq, int64_t nk,
                      int n_heads, int n_kv_heads, int hd, int64_t kv_stride, float scale, int causal,
                      int nthreads) {
    if (nq <= 0 || n_heads <= 0) return;
    if (nthreads < 1) nthreads = 1;
    /* Many query rows with AVX-512: the blocked kernel (fastest measured: 413 vs
     * 299 GFLOP/s for the CFM estimator at L = 700 on 2 threads). */
    if (isa >= VX_ISA_AVX512 && nq >= 16 && vx_attention_blocked_supported(hd) && n_kv_heads >= 1 &&
        n_heads % n_kv_heads == 0 &&
        vx_attention_blocked(out, q, k, v, nq, nk, n_heads, n_kv_heads, hd, kv_stride, scale, causal, nthreads))
        return;
    if (nq >= GEMM_MIN_Q &&
        attention_gemm(isa, out, q, k, v, nq, nk, n_heads, n_kv_heads, hd, kv_stride, scale, causal, nthreads))
        return;
    attention_rows(&ops_tab[0][isa], 4, out, q, k, v, nq, nk, n_heads, n_kv_heads, hd, kv_stride, scale, causal,
                   nthreads);
}

void vx_attention(float *out, const float *q, const float *k, const float *v, int64_t nq, int64_t nk, int n_heads,
                  int n_kv_heads, int hd, int64_t kv_stride, float scale, int causal, int nthreads) {
    vx_attention_isa(vx_cpu_isa(), out, q, k, v, nq, nk, n_heads, n_kv_heads, hd, kv_stride, scale, causal,
                     nthreads);
}

/* Widening of bf16 K/V into float32 scratch, chunks of `items` elements. */
typedef struct {
    const uint16_t *k16, *v16;
    float *kf, *vf;
    int64_t n, items;
} widen_job;

static void widen_chunk(void *ctx, int64_t chunk) {
    const widen_job *w = ctx;
    const int64_t a = chunk * w->items, b = a + w->items < w->n ? a + w->items : w->n;
    for (int64_t i = a; i < b; i++) {
        w->kf[i] = vx_bf16_to_f32(w->k16[i]);
        w->vf[i] = vx_bf16_to_f32(w->v16[i]);
    }
}

/* K/V in float32 or bf16 (a bf16 KV cache). bf16 gives the result of
 * vx_attention_isa over the same values widened to float32, bit for bit:
 * few query rows read bf16 directly (widened in registers, same arithmetic);
 * many query rows widen the visible keys into float32 scratch and take the
 * float32 paths (O(nk) extra memory; the row path when that fails). */
void vx_attention_kv_isa(int isa, float *out, const float *q, const void *k, const void *v, vx_dtype kv_dtype,
                         int64_t nq, int64_t nk, int n_heads, int n_kv_heads, int hd, int64_t kv_stride,
                         float scale, int causal, int nthreads) {
    if (kv_dtype != VX_BF16) {
        vx_attention_isa(isa, out, q, k, v, nq, nk, n_heads, n_kv_heads, hd, kv_stride, scale, causal, nthreads);
        return;
    }
    if (nq <= 0 || n_heads <= 0) return;
    if (nthreads < 1) nthreads = 1;
    if (nq >= GEMM_MIN_Q && nk > 0) {
        const int64_t n = nk * kv_stride;
        float *kf = malloc((size_t)n * 2 * sizeof(float));
        if (kf) {
            float *vf = kf + n;
            widen_job w = {k, v, kf, vf, n, vx_pool_chunk_items(n, 1024, nthreads)};
            vx_pool_run(n >= 65536 ? nthreads : 1, (n + w.items - 1) / w.items, widen_chunk, &w);
            vx_attention_isa(isa, out, q, kf, vf, nq, nk, n_heads, n_kv_heads, hd, kv_stride, scale, causal,
                             nthreads);
            free(kf);
            return;
        }
    }
    attention_rows(&ops_tab[1][isa], 2, out, q, k, v, nq, nk, n_heads, n_kv_heads, hd, kv_stride, scale, causal,
                   nthreads);
}

void vx_attention_kv(float *out, const float *q, const void *k, const void *v, vx_dtype kv_dtype, int64_t nq,
                     int64_t nk, int n_heads, int n_kv_heads, int hd, int64_t kv_stride, float scale, int causal,
                     int nthreads) {
    vx_attention_kv_isa(vx_cpu_isa(), out, q, k, v, kv_dtype, nq, nk, n_heads, n_kv_heads, hd, kv_stride, scale,
                        causal, nthreads);
}

void vx_attention_kv_seqs_isa(int isa, const vx_attn_seq *seqs, int nseq, vx_dtype kv_dtype, int64_t nq,
                              int n_heads, int n_kv_heads, int hd, int64_t kv_stride, float scale, int causal,
                              int nthreads) {
    if (nq <= 0 || n_heads <= 0 || nseq <= 0) return;
    if (nthreads < 1) nthreads = 1;
    enum { MAX_SEQS = 16 };
    if (nq >= GEMM_MIN_Q || nseq == 1) { /* many rows (or one sequence): one call each */
        for (int i = 0; i < nseq; i++)
            vx_attention_kv_isa(isa, seqs[i].out, seqs[i].q, seqs[i].k, seqs[i].v, kv_dtype, nq, seqs[i].nk, n_heads,
                                n_kv_heads, hd, kv_stride, scale, causal, nthreads);
        return;
    }
    const int bf = kv_dtype == VX_BF16;
    for (int s0 = 0; s0 < nseq; s0 += MAX_SEQS) {
        const int n = nseq - s0 < MAX_SEQS ? nseq - s0 : MAX_SEQS;
        rows_job jobs[MAX_SEQS];
        double work = 0;
        for (int i = 0; i < n; i++) work += (double)nq * seqs[s0 + i].nk * n_heads * hd;
        const int th = few_threads(work, nthreads);
        int64_t items = 0;
        for (int i = 0; i < n; i++) {
            const vx_attn_seq *a = &seqs[s0 + i];
            rows_plan(&jobs[i], &ops_tab[bf][isa], bf ? 2 : 4, a->out, a->q, a->k, a->v, nq, a->nk, n_heads,
                      n_kv_heads, hd, kv_stride, scale, causal, nq * n, th);
            items += jobs[i].items;
        }
        seqs_job sj = {jobs, n};
        vx_pool_run(th, items, seqs_item, &sj);
        for (int i = 0; i < n; i++) rows_merge(&jobs[i]);
    }
}

void vx_attention_kv_seqs(const vx_attn_seq *seqs, int nseq, vx_dtype kv_dtype, int64_t nq, int n_heads,
                          int n_kv_heads, int hd, int64_t kv_stride, float scale, int causal, int nthreads) {
    vx_attention_kv_seqs_isa(vx_cpu_isa(), seqs, nseq, kv_dtype, nq, n_heads, n_kv_heads, hd, kv_stride, scale,
                             causal, nthreads);
}
