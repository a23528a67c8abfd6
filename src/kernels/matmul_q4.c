/* Linear layers with q4 weights (the speculative draft, kernels/precision.h):
 * y = x·Wᵀ + b, W 4-bit with one float scale per 32 values of a row, x and y
 * float32. Reached through vx_linear.
 *
 * The draft runs decode steps (1-2 rows per sequence), which stream W from
 * memory: q4 reads 0.5625 bytes per weight, half of q8. The x rows are
 * quantized per block of 32 in one int8 part (xquant.h, as VX_Q8D) and
 * each 64-byte vector of codes holds two of x's steps (low and high
 * nibbles), so a vector costs two ANDs, one shift and two vpdpbusd per x
 * row, the q8 draft's work for twice the weights:
 *   AVX-512 VNNI  vpdpbusd on the unsigned codes q + 8 against the signed x
 *                 bytes; the offset comes back as −8·Σx per block (q8's
 *                 −128·Σx ÷ 16, exact);
 *   AVX2          q = code − 8, vpmaddubsw on |x| and sign(x)·q, both steps'
 *                 pairs added in int16 (|sum| ≤ 4·127·8), vpmaddwd to int32;
 *   scalar        the same integer sums.
 * Per block, in float, acc[lane] = fma((float)I, sw·sx, acc[lane]), then
 * the fixed 16-lane sum (vx_red16): every level and every tile shape gives
 * the same bits, and a row gives the same bits alone, among others or on
 * any thread. Many rows (a draft's prefill) run the same tiles: slower than
 * a GEMM, but the same arithmetic at every M. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/isa.h"
#include "kernels/precision.h"
#include "kernels/xquant.h"

/* W bytes per column tile (reused by every x row) */
#define WT_BYTES (256 * 1024)

#define GRP VX_Q8_GROUP              /* blocks per group = int32 lanes */
#define GRP_BYTES (64 + 16 * GRP)    /* one group of a W row: 16 scales + codes */
#define XG_BYTES VX_XQ8_GROUP_BYTES  /* one group of an x part */

static inline int64_t nblk(int64_t K) { return (K + VX_Q8_BLOCK - 1) / VX_Q8_BLOCK; }
static inline int64_t ngrp(int64_t nb) { return (nb + GRP - 1) / GRP; }

/* Prefetch into L2 of the next tile's share of W while this tile runs, one
 * sequential stream a tile ahead (the pattern of matmul_q8.c). */
VX_INLINE void pf_next(const uint8_t *w, int64_t RS, int NR, int64_t G) {
    const char *p = (const char *)w + NR * RS + G * NR * GRP_BYTES;
    _Pragma("GCC unroll 1")
    for (int64_t c = 0; c < NR * GRP_BYTES; c += 64) _mm_prefetch(p + c, _MM_HINT_T1);
}

typedef void (*qtile_fn)(const xq8 *X, int64_t m0, const uint8_t *w, int64_t RS, int64_t nb, float *y,
                         int64_t ldy, const float *bias);

/* ---- AVX-512 VNNI ---- */

/* The 4 code vectors of one group against x's 8 steps. g = 16 for full groups (compile-time), else masked. */
VX_INLINE VX_TARGET_VNNI void vsteps(int MB, int NR, int g, const xq8 *X, int64_t m0, int64_t G, const uint8_t *w,
                                     int64_t RS, __m512i acc[4][8]) {
    const __mmask64 mask = g == 16 ? ~(__mmask64)0 : (((__mmask64)1 << (4 * g)) - 1);
    const __m512i low4 = _mm512_set1_epi8(0x0f);
    const uint8_t *wg = w + G * GRP_BYTES;
    _Pragma("GCC unroll 4")
    for (int t = 0; t < 4; t++) {
        __m512i x0[4], x1[4];
        _Pragma("GCC unroll 4")
        for (int m = 0; m < MB; m++) {
            const int8_t *xc = X->c[0] + (m0 + m) * X->xs + G * XG_BYTES + 2 * t * 64;
            x0[m] = _mm512_loadu_si512(xc);
            x1[m] = _mm512_loadu_si512(xc + 64);
        }
        _Pragma("GCC unroll 8")
        for (int r = 0; r < NR; r++) {
            const uint8_t *p = wg + r * RS + 64 + t * 4 * g;
            __m512i v = g == 16 ? _mm512_loadu_si512(p) : _mm512_maskz_loadu_epi8(mask, p);
            __m512i lo = _mm512_and_si512(v, low4), hi = _mm512_and_si512(_mm512_srli_epi16(v, 4), low4);
            _Pragma("GCC unroll 4")
            for (int m = 0; m < MB; m++) {
                acc[m][r] = _mm512_dpbusd_epi32(acc[m][r], lo, x0[m]);
                acc[m][r] = _mm512_dpbusd_epi32(acc[m][r], hi, x1[m]);
            }
        }
    }
}

VX_INLINE VX_TARGET_VNNI void vtile(int MB, int NR, const xq8 *X, int64_t m0, const uint8_t *w, int64_t RS,
                                    int64_t nb, float *y, int64_t ldy, const float *bias) {
    const int64_t ng = ngrp(nb);
    __m512 fa[4][8];
    _Pragma("GCC unroll 4")
    for (int m = 0; m < MB; m++)
        _Pragma("GCC unroll 8")
        for (int r = 0; r < NR; r++) fa[m][r] = _mm512_setzero_ps();
    for (int64_t G = 0; G < ng; G++) {
        const int g = nb - G * GRP < GRP ? (int)(nb - G * GRP) : GRP;
        const uint8_t *wg = w + G * GRP_BYTES;
        __m512i acc[4][8];
        _Pragma("GCC unroll 4")
        for (int m = 0; m < MB; m++) {
            /* −8·Σh per block: the offset of the codes q + 8 */
            __m512i c = _mm512_srai_epi32(_mm512_loadu_si512(X->corr[0] + (m0 + m) * X->ss + G * GRP), 4);
            _Pragma("GCC unroll 8")
            for (int r = 0; r < NR; r++) acc[m][r] = c;
        }
        pf_next(w, RS, NR, G);
        if (g == GRP) vsteps(MB, NR, 16, X, m0, G, w, RS, acc);
        else vsteps(MB, NR, g, X, m0, G, w, RS, acc);
        _Pragma("GCC unroll 8")
        for (int r = 0; r < NR; r++) {
            __m512 sw = _mm512_loadu_ps((const float *)(wg + r * RS));
            _Pragma("GCC unroll 4")
            for (int m = 0; m < MB; m++) {
                __m512 sc = _mm512_mul_ps(sw, _mm512_loadu_ps(X->sx + (m0 + m) * X->ss + G * GRP));
                fa[m][r] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(acc[m][r]), sc, fa[m][r]);
            }
        }
    }
    _Pragma("GCC unroll 4")
    for (int m = 0; m < MB; m++)
        _Pragma("GCC unroll 8")
        for (int r = 0; r < NR; r++)
            y[m * ldy + r] = vx_red16_256(_mm512_castps512_ps256(fa[m][r]), _mm512_extractf32x8_ps(fa[m][r], 1)) +
                             (bias ? bias[r] : 0.0f);
}

/* ---- AVX2: a group as two 8-lane halves; |x| · sign(x)·q by vpmaddubsw ---- */

VX_INLINE VX_TARGET_AVX2 void atile(int MB, int NR, const xq8 *X, int64_t m0, const uint8_t *w, int64_t RS,
                                    int64_t nb, float *y, int64_t ldy, const float *bias) {
    const int64_t ng = ngrp(nb);
    const __m256i ones = _mm256_set1_epi16(1), low4 = _mm256_set1_epi8(0x0f), eight = _mm256_set1_epi8(8);
    __m256 fa[4][4][2];
    _Pragma("GCC unroll 4")
    for (int m = 0; m < MB; m++)
        _Pragma("GCC unroll 4")
        for (int r = 0; r < NR; r++) fa[m][r][0] = fa[m][r][1] = _mm256_setzero_ps();
    for (int64_t G = 0; G < ng; G++) {
        const int g = nb - G * GRP < GRP ? (int)(nb - G * GRP) : GRP;
        const uint8_t *wg = w + G * GRP_BYTES;
        pf_next(w, RS, NR, G);
        for (int half = 0; half < 2; half++) {
            const int gl = g - 8 * half; /* lanes of this half that hold blocks */
            if (gl <= 0) break;
            const __m256i lm = _mm256_cmpgt_epi32(_mm256_set1_epi32(gl), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
            __m256i acc[4][4];
            _Pragma("GCC unroll 4")
            for (int m = 0; m < MB; m++)
                _Pragma("GCC unroll 4")
                for (int r = 0; r < NR; r++) acc[m][r] = _mm256_setzero_si256();
            for (int t = 0; t < 4; t++) {
                __m256i x0[4], x1[4], a0[4], a1[4];
                _Pragma("GCC unroll 4")
                for (int m = 0; m < MB; m++) {
                    const int8_t *xc = X->c[0] + (m0 + m) * X->xs + G * XG_BYTES + 2 * t * 64 + half * 32;
                    x0[m] = _mm256_loadu_si256((const __m256i *)xc);
                    x1[m] = _mm256_loadu_si256((const __m256i *)(xc + 64));
                    a0[m] = _mm256_abs_epi8(x0[m]);
                    a1[m] = _mm256_abs_epi8(x1[m]);
                }
                _Pragma("GCC unroll 4")
                for (int r = 0; r < NR; r++) {
                    const uint8_t *p = wg + r * RS + 64 + t * 4 * g + half * 32;
                    __m256i v = gl >= 8 ? _mm256_loadu_si256((const __m256i *)p) : _mm256_maskload_epi32((const int *)p, lm);
                    __m256i lo = _mm256_sub_epi8(_mm256_and_si256(v, low4), eight);
                    __m256i hi = _mm256_sub_epi8(_mm256_and_si256(_mm256_srli_epi16(v, 4), low4), eight);
                    _Pragma("GCC unroll 4")
                    for (int m = 0; m < MB; m++) {
                        __m256i s = _mm256_add_epi16(_mm256_maddubs_epi16(a0[m], _mm256_sign_epi8(lo, x0[m])),
                                                     _mm256_maddubs_epi16(a1[m], _mm256_sign_epi8(hi, x1[m])));
                        acc[m][r] = _mm256_add_epi32(acc[m][r], _mm256_madd_epi16(s, ones));
                    }
                }
            }
            _Pragma("GCC unroll 4")
            for (int r = 0; r < NR; r++) {
                __m256 sw = _mm256_loadu_ps((const float *)(wg + r * RS) + 8 * half);
                _Pragma("GCC unroll 4")
                for (int m = 0; m < MB; m++) {
                    __m256 sc = _mm256_mul_ps(sw, _mm256_loadu_ps(X->sx + (m0 + m) * X->ss + G * GRP + 8 * half));
                    fa[m][r][half] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(acc[m][r]), sc, fa[m][r][half]);
                }
            }
        }
    }
    _Pragma("GCC unroll 4")
    for (int m = 0; m < MB; m++)
        _Pragma("GCC unroll 4")
        for (int r = 0; r < NR; r++)
            y[m * ldy + r] = vx_red16_256(fa[m][r][0], fa[m][r][1]) + (bias ? bias[r] : 0.0f);
}

/* ---- scalar reference: the same integer sums and float operations ---- */

static inline void stile(int MB, int NR, const xq8 *X, int64_t m0, const uint8_t *w, int64_t RS, int64_t nb,
                         float *y, int64_t ldy, const float *bias) {
    const int64_t ng = ngrp(nb);
    for (int r = 0; r < NR; r++)
        for (int m = 0; m < MB; m++) {
            const int8_t *xh = X->c[0] + (m0 + m) * X->xs;
            const float *sx = X->sx + (m0 + m) * X->ss;
            float fa[GRP] = {0};
            for (int64_t G = 0; G < ng; G++) {
                const int g = nb - G * GRP < GRP ? (int)(nb - G * GRP) : GRP;
                const uint8_t *wg = w + r * RS + G * GRP_BYTES;
                for (int j = 0; j < g; j++) {
                    int32_t I = 0;
                    for (int p = 0; p < 32; p++) {
                        const uint8_t b = wg[64 + (p / 8) * 4 * g + 4 * j + p % 4];
                        const int q = (int)((p / 4) & 1 ? b >> 4 : b & 0x0f) - 8;
                        I += q * xh[G * XG_BYTES + (p / 4) * 64 + 4 * j + p % 4];
                    }
                    float sw;
                    memcpy(&sw, wg + 4 * j, sizeof sw);
                    fa[j] = fmaf((float)I, sw * sx[G * GRP + j], fa[j]);
                }
            }
            y[m * ldy + r] = vx_red16(fa) + (bias ? bias[r] : 0.0f);
        }
}

#define QTILE_ARGS                                                                                               \
    const xq8 *X, int64_t m0, const uint8_t *w, int64_t RS, int64_t nb, float *y, int64_t ldy, const float *bias
#define QTILE_PASS X, m0, w, RS, nb, y, ldy, bias
#define DEF_QTILE(ISA, ATTR, FN, MB, NR, TAG)                                                                   \
    static ATTR void q4##ISA##_##MB##_##TAG(QTILE_ARGS) { FN(MB, NR, QTILE_PASS); }
#define DEF_QISA(ISA, ATTR, FN, NR1, NR2, NR34)                                                                 \
    DEF_QTILE(ISA, ATTR, FN, 1, NR1, w)                                                                         \
    DEF_QTILE(ISA, ATTR, FN, 2, NR2, w)                                                                         \
    DEF_QTILE(ISA, ATTR, FN, 3, NR34, w)                                                                        \
    DEF_QTILE(ISA, ATTR, FN, 4, NR34, w)                                                                        \
    DEF_QTILE(ISA, ATTR, FN, 1, 1, 1)                                                                           \
    DEF_QTILE(ISA, ATTR, FN, 2, 1, 1)                                                                           \
    DEF_QTILE(ISA, ATTR, FN, 3, 1, 1)                                                                           \
    DEF_QTILE(ISA, ATTR, FN, 4, 1, 1)

typedef struct {
    qtile_fn wide, one;
    int nr;
} qtile_set;
#define QSET(ISA, MB, NR) {q4##ISA##_##MB##_w, q4##ISA##_##MB##_1, NR}
#define QSETS(ISA, NR1, NR2, NR34)                                                                              \
    {QSET(ISA, 1, NR1), QSET(ISA, 2, NR2), QSET(ISA, 3, NR34), QSET(ISA, 4, NR34)}

/* Tile widths (W rows per x row group), by registers: VNNI (32 zmm) holds
 * MB·NR int32 and MB·NR float accumulators plus 2·MB x vectors; AVX2 (16
 * ymm) spills some at every width, so it keeps them narrow. */
#ifndef Q4_V_NR1
#define Q4_V_NR1 8
#endif
#ifndef Q4_V_NR2
#define Q4_V_NR2 4
#endif
#ifndef Q4_V_NR34
#define Q4_V_NR34 2
#endif
DEF_QISA(s1, , stile, 4, 4, 4)
DEF_QISA(v2, VX_TARGET_AVX2, atile, 2, 2, 2)
DEF_QISA(v5, VX_TARGET_VNNI, vtile, Q4_V_NR1, Q4_V_NR2, Q4_V_NR34)

/* qtiles[kernel][MB − 1]: 0 scalar, 1 AVX2, 2 VNNI */
static const qtile_set qtiles[3][4] = {QSETS(s1, 4, 4, 4), QSETS(v2, 2, 2, 2), QSETS(v5, Q4_V_NR1, Q4_V_NR2, Q4_V_NR34)};

/* y[:, n0:n1] for M x rows from row m0 of X, one thread: column tiles of
 * W that stay in L2 while every x row passes over them. */
static void q4_stream(int kern, const xq8 *X, int64_t m0, float *y, int64_t M, const vx_mat *W, const float *bias,
                      int64_t n0, int64_t n1) {
    const uint8_t *q = (const uint8_t *)((const vx_q8 *)W->data)->q;
    const int64_t K = W->cols, N = W->rows, nb = nblk(K), RS = vx_q4_row_bytes(K);
    int64_t nt = RS > 0 ? WT_BYTES / RS / 8 * 8 : n1 - n0;
    if (nt < 8) nt = 8;
    for (int64_t a = n0; a < n1; a += nt) {
        int64_t b = a + nt < n1 ? a + nt : n1;
        for (int64_t m = 0; m < M; m += 4) {
            int mb = M - m < 4 ? (int)(M - m) : 4;
            const qtile_set *ts = &qtiles[kern][mb - 1];
            float *ym = y + m * N;
            int64_t n = a;
            for (; n + ts->nr <= b; n += ts->nr) ts->wide(X, m0 + m, q + n * RS, RS, nb, ym + n, N, bias ? bias + n : NULL);
            for (; n < b; n++) ts->one(X, m0 + m, q + n * RS, RS, nb, ym + n, N, bias ? bias + n : NULL);
        }
    }
}

void vx_linear_q4_isa(int isa, float *y, const float *x, int64_t M, const vx_mat *W, const float *bias,
                      int nthreads) {
    if (vx_xq8_prologue(&isa, y, M, W, bias, &nthreads)) return;
    vx_xq8_linear(isa, 1, q4_stream, vx_q4_weight, y, x, M, W, bias, nthreads);
}
