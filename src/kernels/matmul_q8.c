/* Linear layers with q8 weights (the q8 precision mode, kernels/precision.h):
 * y = x·Wᵀ + b, W int8 with one float scale per 32 values of a row
 * (kernels.h vx_q8), x and y float32. Reached through vx_linear.
 *
 * Small M (decode, CFG pairs) is memory-bound: the point of q8 is to stream
 * 1.125 bytes per weight instead of bf16's 2. Weight-only quantization: a
 * tile dequantizes int8 → f32 in registers and accumulates in f32, so the
 * activations keep full precision. Per block of 32 and per (x row, W row):
 *   t = Σ x·q over the block (f32 lanes), acc += t · scale
 * — the same operations for every MB and NR, so one x row gives the same
 * bits alone or next to others (batched decode stays bit-identical).
 * Tiles, blocking for the caches, threading and prefetch follow matmul.c
 * (tile512 / tile256 / tile1, linear_stream).
 *
 * Large M (prefill) is compute-bound: each thread dequantizes panels of W
 * rows to f32 scratch once and runs the ordinary f32 vx_linear path on them
 * (its tiles or sgemm), so the int8 → f32 work is done once per weight
 * instead of once per 4 x rows. */
#ifdef _OPENMP
#include <omp.h>
#endif
#include <stdlib.h>
#include <string.h>

#include "kernels/isa.h"

/* x rows from which the panel path replaces the tiles. 1 thread, K=1024
 * N=4096, ms tiles vs panels (shared machine): M=16 0.88 vs 1.18, M=32 1.73
 * vs 1.51, M=128 6.89 vs 5.77. */
#ifndef Q8_PANEL_MIN_M
#define Q8_PANEL_MIN_M 32
#endif
/* f32 scratch per thread for one panel of dequantized W rows */
#define Q8_PANEL_BYTES (512 * 1024)
/* x rows per cache block, and prefetch distance on each W row stream (as matmul.c) */
#define XB_BYTES (256 * 1024)
#define PF_AHEAD 1024

typedef void (*qtile_fn)(const float *x, int64_t ldx, const int8_t *q, const float *s, int64_t K, float *y,
                         int64_t ldy, const float *bias);

static inline int64_t nblk(int64_t K) { return (K + VX_Q8_BLOCK - 1) / VX_Q8_BLOCK; }

/* Prefetch offset on a row stream of a tile of NR rows: PF_AHEAD bytes
 * ahead, or near the end of the row the same row of the next tile. */
static inline int64_t pf_off(int64_t k, int64_t K, int NR) {
    int64_t off = k + PF_AHEAD;
    return off < K ? off : off + (NR - 1) * K;
}

/* ---- AVX-512: 16 lanes, a block is two vectors ---- */

VX_INLINE VX_TARGET_AVX512 __m512 q16(const int8_t *p) {
    return _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *)p)));
}
VX_INLINE VX_TARGET_AVX512 __m512 q16m(const int8_t *p, __mmask16 m) {
    return _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_maskz_loadu_epi8(m, p)));
}

VX_INLINE VX_TARGET_AVX512 void qtile512(int MB, int NR, const float *x, int64_t ldx, const int8_t *q,
                                         const float *s, int64_t K, float *y, int64_t ldy, const float *bias) {
    const int64_t nb = nblk(K);
    __m512 acc[4][8];
    _Pragma("GCC unroll 8")
    for (int m = 0; m < MB; m++)
        _Pragma("GCC unroll 8")
        for (int r = 0; r < NR; r++) acc[m][r] = _mm512_setzero_ps();
    int64_t k = 0, b = 0;
    for (; k + 32 <= K; k += 32, b++) {
        __m512 xl[4], xh[4];
        _Pragma("GCC unroll 8")
        for (int m = 0; m < MB; m++) {
            xl[m] = _mm512_loadu_ps(x + m * ldx + k);
            xh[m] = _mm512_loadu_ps(x + m * ldx + k + 16);
        }
        if (!(k & 63))
            _Pragma("GCC unroll 8")
            for (int r = 0; r < NR; r++) _mm_prefetch((const char *)q + r * K + pf_off(k, K, NR), _MM_HINT_T0);
        _Pragma("GCC unroll 8")
        for (int r = 0; r < NR; r++) {
            const int8_t *qr = q + r * K + k;
            __m512 wl = q16(qr), wh = q16(qr + 16), sc = _mm512_set1_ps(s[r * nb + b]);
            _Pragma("GCC unroll 8")
            for (int m = 0; m < MB; m++) {
                __m512 t = _mm512_mul_ps(xl[m], wl);
                t = _mm512_fmadd_ps(xh[m], wh, t);
                acc[m][r] = _mm512_fmadd_ps(t, sc, acc[m][r]);
            }
        }
    }
    if (k < K) { /* short last block: masked loads, zeros beyond K */
        int64_t rem = K - k;
        __mmask16 ml = rem >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << rem) - 1);
        __mmask16 mh = rem > 16 ? (__mmask16)((1u << (rem - 16)) - 1) : 0;
        __m512 xl[4], xh[4];
        _Pragma("GCC unroll 8")
        for (int m = 0; m < MB; m++) {
            xl[m] = _mm512_maskz_loadu_ps(ml, x + m * ldx + k);
            xh[m] = _mm512_maskz_loadu_ps(mh, x + m * ldx + k + 16);
        }
        _Pragma("GCC unroll 8")
        for (int r = 0; r < NR; r++) {
            const int8_t *qr = q + r * K + k;
            __m512 wl = q16m(qr, ml), wh = q16m(qr + 16, mh), sc = _mm512_set1_ps(s[r * nb + b]);
            _Pragma("GCC unroll 8")
            for (int m = 0; m < MB; m++) {
                __m512 t = _mm512_mul_ps(xl[m], wl);
                t = _mm512_fmadd_ps(xh[m], wh, t);
                acc[m][r] = _mm512_fmadd_ps(t, sc, acc[m][r]);
            }
        }
    }
    _Pragma("GCC unroll 8")
    for (int m = 0; m < MB; m++)
        _Pragma("GCC unroll 8")
        for (int r = 0; r < NR; r++) y[m * ldy + r] = vx_hsum512(acc[m][r]) + (bias ? bias[r] : 0.0f);
}

/* ---- AVX2: 8 lanes, a block is four vectors; the short last block is scalar ---- */

VX_INLINE VX_TARGET_AVX2 __m256 q8v(const int8_t *p) {
    return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)p)));
}

VX_INLINE VX_TARGET_AVX2 void qtile256(int MB, int NR, const float *x, int64_t ldx, const int8_t *q,
                                       const float *s, int64_t K, float *y, int64_t ldy, const float *bias) {
    const int64_t nb = nblk(K);
    __m256 acc[4][4];
    _Pragma("GCC unroll 4")
    for (int m = 0; m < MB; m++)
        _Pragma("GCC unroll 4")
        for (int r = 0; r < NR; r++) acc[m][r] = _mm256_setzero_ps();
    int64_t k = 0, b = 0;
    for (; k + 32 <= K; k += 32, b++) {
        if (!(k & 63))
            _Pragma("GCC unroll 4")
            for (int r = 0; r < NR; r++) _mm_prefetch((const char *)q + r * K + pf_off(k, K, NR), _MM_HINT_T0);
        _Pragma("GCC unroll 4")
        for (int r = 0; r < NR; r++) {
            const int8_t *qr = q + r * K + k;
            __m256 w0 = q8v(qr), w1 = q8v(qr + 8), w2 = q8v(qr + 16), w3 = q8v(qr + 24);
            __m256 sc = _mm256_set1_ps(s[r * nb + b]);
            _Pragma("GCC unroll 4")
            for (int m = 0; m < MB; m++) {
                const float *xm = x + m * ldx + k;
                __m256 t = _mm256_mul_ps(_mm256_loadu_ps(xm), w0);
                t = _mm256_fmadd_ps(_mm256_loadu_ps(xm + 8), w1, t);
                t = _mm256_fmadd_ps(_mm256_loadu_ps(xm + 16), w2, t);
                t = _mm256_fmadd_ps(_mm256_loadu_ps(xm + 24), w3, t);
                acc[m][r] = _mm256_fmadd_ps(t, sc, acc[m][r]);
            }
        }
    }
    _Pragma("GCC unroll 4")
    for (int m = 0; m < MB; m++)
        _Pragma("GCC unroll 4")
        for (int r = 0; r < NR; r++) {
            float v = vx_hsum256(acc[m][r]);
            if (k < K) {
                const int8_t *qr = q + r * K;
                float t = 0;
                for (int64_t j = k; j < K; j++) t += x[m * ldx + j] * (float)qr[j];
                v += t * s[r * nb + b];
            }
            y[m * ldy + r] = v + (bias ? bias[r] : 0.0f);
        }
}

/* ---- scalar reference: 8 partial sums per block, then scaled ---- */

static inline void qtile1(int MB, int NR, const float *x, int64_t ldx, const int8_t *q, const float *s, int64_t K,
                          float *y, int64_t ldy, const float *bias) {
    const int64_t nb = nblk(K);
    for (int r = 0; r < NR; r++) {
        const int8_t *qr = q + r * K;
        for (int m = 0; m < MB; m++) {
            const float *xm = x + m * ldx;
            float acc = 0;
            for (int64_t k = 0, b = 0; k < K; k += VX_Q8_BLOCK, b++) {
                int64_t e = k + VX_Q8_BLOCK < K ? k + VX_Q8_BLOCK : K;
                float p[8] = {0};
                for (int64_t j = k; j < e; j++) p[(j - k) & 7] += xm[j] * (float)qr[j];
                float t = ((p[0] + p[1]) + (p[2] + p[3])) + ((p[4] + p[5]) + (p[6] + p[7]));
                acc += t * s[r * nb + b];
            }
            y[m * ldy + r] = acc + (bias ? bias[r] : 0.0f);
        }
    }
}

#define QTILE_ARGS                                                                                               \
    const float *x, int64_t ldx, const int8_t *q, const float *s, int64_t K, float *y, int64_t ldy, const float *bias
#define QTILE_PASS x, ldx, q, s, K, y, ldy, bias
#define DEF_QTILE(ISA, ATTR, FN, MB, NR)                                                                        \
    static ATTR void q##ISA##_##MB##_##NR(QTILE_ARGS) { FN(MB, NR, QTILE_PASS); }
#define DEF_QISA(ISA, ATTR, FN, NR12, NR34)                                                                     \
    DEF_QTILE(ISA, ATTR, FN, 1, NR12)                                                                           \
    DEF_QTILE(ISA, ATTR, FN, 2, NR12)                                                                           \
    DEF_QTILE(ISA, ATTR, FN, 3, NR34)                                                                           \
    DEF_QTILE(ISA, ATTR, FN, 4, NR34)                                                                           \
    DEF_QTILE(ISA, ATTR, FN, 1, 1)                                                                              \
    DEF_QTILE(ISA, ATTR, FN, 2, 1)                                                                              \
    DEF_QTILE(ISA, ATTR, FN, 3, 1)                                                                              \
    DEF_QTILE(ISA, ATTR, FN, 4, 1)

typedef struct {
    qtile_fn wide, one;
    int nr;
} qtile_set;
#define QSET(ISA, MB, NR) {q##ISA##_##MB##_##NR, q##ISA##_##MB##_1, NR}
#define QSETS(ISA, NR12, NR34) {QSET(ISA, 1, NR12), QSET(ISA, 2, NR12), QSET(ISA, 3, NR34), QSET(ISA, 4, NR34)}

/* Registers: AVX-512 (32) holds MB·NR accumulators + 2·MB x vectors + 4;
 * AVX2 (16) MB·NR accumulators + 6. */
DEF_QISA(s1, , qtile1, 4, 4)
DEF_QISA(v2, VX_TARGET_AVX2, qtile256, 4, 2)
DEF_QISA(v5, VX_TARGET_AVX512, qtile512, 8, 4)

/* qtiles[isa][MB − 1] */
static const qtile_set qtiles[3][4] = {QSETS(s1, 4, 4), QSETS(v2, 4, 2), QSETS(v5, 8, 4)};

/* y[:, n0:n1] for all M rows, one thread, blocked as matmul.c's linear_stream. */
static void q8_stream(int isa, float *y, const float *x, int64_t M, const vx_mat *W, const float *bias, int64_t n0,
                      int64_t n1) {
    const vx_q8 *h = W->data;
    const int64_t K = W->cols, N = W->rows, nb = nblk(K);
    int64_t nt = K > 0 ? (int64_t)(256 * 1024 / K) / 8 * 8 : n1 - n0;
    int64_t xb = K > 0 ? (int64_t)(XB_BYTES / (K * sizeof(float))) / 4 * 4 : M;
    if (nt < 8) nt = 8;
    if (xb < 4) xb = 4;
    for (int64_t m0 = 0; m0 < M; m0 += xb) {
        int64_t m1 = m0 + xb < M ? m0 + xb : M;
        for (int64_t a = n0; a < n1; a += nt) {
            int64_t b = a + nt < n1 ? a + nt : n1;
            for (int64_t m = m0; m < m1; m += 4) {
                int mb = m1 - m < 4 ? (int)(m1 - m) : 4;
                const qtile_set *ts = &qtiles[isa][mb - 1];
                const float *xm = x + m * K;
                float *ym = y + m * N;
                int64_t n = a;
                for (; n + ts->nr <= b; n += ts->nr)
                    ts->wide(xm, K, h->q + n * K, h->scale + n * nb, K, ym + n, N, bias ? bias + n : NULL);
                for (; n < b; n++)
                    ts->one(xm, K, h->q + n * K, h->scale + n * nb, K, ym + n, N, bias ? bias + n : NULL);
            }
        }
    }
}

static void q8_range(int64_t len, int align, int t, int nt, int64_t *a, int64_t *b) {
    int64_t step = (len + nt - 1) / nt;
    step = (step + align - 1) / align * align;
    *a = t * step < len ? t * step : len;
    *b = *a + step < len ? *a + step : len;
}

/* One row of K values → f32 (the same products q·scale at every level). */
static VX_TARGET_AVX512 void deq_row512(float *d, const int8_t *q, const float *s, int64_t K) {
    int64_t k = 0;
    for (; k + 16 <= K; k += 16) _mm512_storeu_ps(d + k, _mm512_mul_ps(q16(q + k), _mm512_set1_ps(s[k / 32])));
    if (k < K) {
        __mmask16 m = (__mmask16)((1u << (K - k)) - 1);
        _mm512_mask_storeu_ps(d + k, m, _mm512_mul_ps(q16m(q + k, m), _mm512_set1_ps(s[k / 32])));
    }
}
static VX_TARGET_AVX2 void deq_row256(float *d, const int8_t *q, const float *s, int64_t K) {
    int64_t k = 0;
    for (; k + 8 <= K; k += 8) _mm256_storeu_ps(d + k, _mm256_mul_ps(q8v(q + k), _mm256_set1_ps(s[k / 32])));
    for (; k < K; k++) d[k] = (float)q[k] * s[k / 32];
}
static void deq_row1(float *d, const int8_t *q, const float *s, int64_t K) {
    for (int64_t k = 0; k < K; k++) d[k] = (float)q[k] * s[k / VX_Q8_BLOCK];
}

/* W rows [n0, n1) → f32 (row-major, K per row). */
static void q8_dequant(int isa, float *dst, const vx_mat *W, int64_t n0, int64_t n1) {
    const vx_q8 *h = W->data;
    const int64_t K = W->cols, nb = nblk(K);
    for (int64_t n = n0; n < n1; n++) {
        float *d = dst + (n - n0) * K;
        if (isa >= VX_ISA_AVX512) deq_row512(d, h->q + n * K, h->scale + n * nb, K);
        else if (isa >= VX_ISA_AVX2) deq_row256(d, h->q + n * K, h->scale + n * nb, K);
        else deq_row1(d, h->q + n * K, h->scale + n * nb, K);
    }
}

/* Large M: per thread, panels of its W rows dequantized to f32 and run
 * through vx_linear_isa (1 thread) into scratch, then copied into y's
 * columns. Returns 0 if scratch was not available (the caller streams). */
static int q8_panels(int isa, float *y, const float *x, int64_t M, const vx_mat *W, const float *bias,
                     int nthreads) {
    const int64_t K = W->cols, N = W->rows;
    int64_t P = (int64_t)(Q8_PANEL_BYTES / ((size_t)K * sizeof(float))) / 16 * 16;
    if (P < 16) P = 16;
    int ok = 1;
#pragma omp parallel num_threads(nthreads) reduction(&& : ok)
    {
#ifdef _OPENMP
        int t = omp_get_thread_num(), nt = omp_get_num_threads();
#else
        int t = 0, nt = 1;
#endif
        int64_t a, b;
        q8_range(N, 16, t, nt, &a, &b);
        int64_t pr = b - a < P ? b - a : P;
        float *buf = a < b ? malloc((size_t)pr * (size_t)K * sizeof(float)) : NULL;
        float *tmp = a < b ? malloc((size_t)pr * (size_t)M * sizeof(float)) : NULL;
        if (a < b && (!buf || !tmp)) ok = 0;
        for (int64_t n = a; ok && n < b; n += pr) {
            int64_t rows = b - n < pr ? b - n : pr;
            q8_dequant(isa, buf, W, n, n + rows);
            vx_mat F = {.dtype = VX_F32, .rows = rows, .cols = K, .data = buf, .act_bf16 = W->act_bf16};
            vx_linear_isa(isa, tmp, x, M, &F, bias ? bias + n : NULL, 1);
            for (int64_t m = 0; m < M; m++) memcpy(y + m * N + n, tmp + m * rows, (size_t)rows * sizeof(float));
        }
        free(buf);
        free(tmp);
    }
    return ok;
}

void vx_linear_q8_isa(int isa, float *y, const float *x, int64_t M, const vx_mat *W, const float *bias,
                      int nthreads) {
    const int64_t K = W->cols, N = W->rows;
    if (M <= 0 || N <= 0) return;
    if (nthreads < 1) nthreads = 1;
    if (isa > vx_cpu_isa()) isa = vx_cpu_isa();
    if (isa < VX_ISA_SCALAR) isa = VX_ISA_SCALAR;
    if (M >= Q8_PANEL_MIN_M && K > 0 && q8_panels(isa, y, x, M, W, bias, nthreads)) return;
    if ((double)M * N * K < (1 << 18)) nthreads = 1;
    if (nthreads == 1) {
        q8_stream(isa, y, x, M, W, bias, 0, N);
        return;
    }
    int by_rows = N < 64 * nthreads && M >= 8 * nthreads;
#pragma omp parallel num_threads(nthreads)
    {
#ifdef _OPENMP
        int t = omp_get_thread_num(), nt = omp_get_num_threads();
#else
        int t = 0, nt = 1;
#endif
        int64_t a, b;
        if (by_rows) {
            q8_range(M, 4, t, nt, &a, &b);
            if (a < b) q8_stream(isa, y + a * N, x + a * K, b - a, W, bias, 0, N);
        } else {
            q8_range(N, 16, t, nt, &a, &b);
            if (a < b) q8_stream(isa, y, x, M, W, bias, a, b);
        }
    }
}
