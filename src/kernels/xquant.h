/* Internal to src/kernels: the x rows of the few-row integer kernels
 * (matmul_q8.c for VX_Q8 / VX_Q8D, matmul_q4.c for VX_Q4), quantized once
 * per call per block of 32 as precision.h describes, in the weights'
 * interleaved order, and the fixed 16-lane sum those kernels end with. */
#ifndef VX_KERNELS_XQUANT_H
#define VX_KERNELS_XQUANT_H

#include <stdint.h>

#include "kernels/isa.h"
#include "kernels/precision.h"

/* One group (16 blocks) of an x part: step s (values 4s…4s+3 of every
 * block) is the 64 bytes at s·64, block j's four at 4j of them. */
#define VX_XQ8_GROUP_BYTES (32 * VX_Q8_GROUP)

/* Per row: xparts parts of ng·512 code bytes (zeros past the row), sx per
 * block (÷256 with two parts; 0 past the row, NaN for a block holding a
 * non-finite value), and −128·Σcodes per block and part (the VNNI offset of
 * q8's unsigned weight bytes). */
typedef struct {
    int8_t *c[2];
    float *sx;
    int32_t *corr[2];
    int64_t xs, ss; /* per row: code bytes of a part, sx / corr entries */
} xq8;

/* One allocation (free() it) holding X's arrays for M rows of K, zeroed; NULL without memory. */
void *vx_xq8_alloc(xq8 *X, int64_t M, int64_t K);
/* Quantizes M rows of x (K each) into X in xparts (1 or 2) parts; the same bits at every level. */
void vx_xq8_fill(int isa, int xparts, xq8 *X, const float *x, int64_t M, int64_t K);
/* One thread's share of an integer few-row product: y[:, n0:n1] for M x rows
 * from row m0 of X, with kernel level kern (0 scalar, 1 AVX2, 2 VNNI). */
typedef void (*vx_xq8_stream_fn)(int kern, const xq8 *X, int64_t m0, float *y, int64_t M, const vx_mat *W,
                                 const float *bias, int64_t n0, int64_t n1);
/* Weight [r][k] of the format as code and block scale (vx_q8_weight, vx_q4_weight). */
typedef void (*vx_xq8_weight_fn)(const vx_mat *W, int64_t r, int64_t k, int *q, float *scale);
/* The shared start of the integer vx_linear entries: clamps isa and nthreads
 * and returns 1 when nothing is left to compute (no rows or columns; K = 0
 * writes the bias). */
int vx_xq8_prologue(int *isa, float *y, int64_t M, const vx_mat *W, const float *bias, int *nthreads);
/* Quantizes the x rows in xparts parts once, then runs stream over the N
 * columns on the pool as vx_linear_split says (one thread below ~1 MFLOP);
 * without memory for the codes, one weight at a time through weight() with
 * f32 activations. */
void vx_xq8_linear(int isa, int xparts, vx_xq8_stream_fn stream, vx_xq8_weight_fn weight, float *y, const float *x,
                   int64_t M, const vx_mat *W, const float *bias, int nthreads);
/* vx_linear_isa for VX_Q4 weights (matmul_q4.c); vx_linear_isa calls it. */
void vx_linear_q4_isa(int isa, float *y, const float *x, int64_t M, const vx_mat *W, const float *bias,
                      int nthreads);
/* AVX-512 VNNI (vpdpbusd) on this CPU. */
int vx_cpu_has_vnni(void);

#define VX_TARGET_VNNI __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512vnni,avx2,fma,f16c")))

/* The 16-lane sum in one fixed order: lanes i + 8, then vx_hsum256's tree. */
static inline float vx_red16(const float *v) {
    float a[8];
    for (int i = 0; i < 8; i++) a[i] = v[i] + v[i + 8];
    float b0 = a[0] + a[4], b1 = a[1] + a[5], b2 = a[2] + a[6], b3 = a[3] + a[7];
    return (b0 + b2) + (b1 + b3);
}
VX_INLINE VX_TARGET_AVX2 float vx_red16_256(__m256 lo, __m256 hi) { return vx_hsum256(_mm256_add_ps(lo, hi)); }

#endif
