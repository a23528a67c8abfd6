/* 1-D convolutions on channel-major activations x[B][C][L] (PyTorch layout).
 * Weights are vx_mat views: Conv1d weight (Cout, Cin/groups, K) as rows = Cout,
 * cols = Cin/groups·K; ConvTranspose1d weight (Cin, Cout/groups, K) as
 * rows = Cin, cols = Cout/groups·K. Written as GEMMs (im2col / col2im),
 * threaded with `nthreads`. Padding is explicit zeros on each side; callers
 * pre-pad for reflect/replicate modes. */
#ifndef VX_CONV_H
#define VX_CONV_H

#include "kernels/kernels.h"

typedef struct vx_conv1d_params {
    int64_t cin, cout, k;
    int64_t stride, dilation, groups;
    int64_t pad_left, pad_right;
} vx_conv1d_params;

/* Output length of a Conv1d: floor((L + pl + pr − d(k−1) − 1)/s) + 1. */
int64_t vx_conv1d_out_len(const vx_conv1d_params *p, int64_t lin);
/* y[B][cout][Lout] = conv1d(x[B][cin][lin]) + bias (bias f32 or NULL). */
void vx_conv1d(float *y, const float *x, int64_t B, int64_t lin, const vx_conv1d_params *p, const vx_mat *w,
               const float *bias, int nthreads);

typedef struct vx_convtr1d_params {
    int64_t cin, cout, k;
    int64_t stride, groups;
    int64_t padding; /* PyTorch `padding`: trims that many samples from both ends */
} vx_convtr1d_params;

/* Output length (L−1)·s − 2·padding + k. */
int64_t vx_convtr1d_out_len(const vx_convtr1d_params *p, int64_t lin);
void vx_convtr1d(float *y, const float *x, int64_t B, int64_t lin, const vx_convtr1d_params *p, const vx_mat *w,
                 const float *bias, int nthreads);

/* ---- time-major convolutions on zero-margined buffers (conv_tm.c) ----
 * Activations x[t][c] with row stride ldx ≥ cin. Every row a convolution reads outside [0, lin)
 * must exist and hold zeros (the caller keeps zero margins around its buffers: that is the zero
 * padding). Weights are a vx_mat of cout rows × k·cin columns in tap-major order, W[o][j·cin + c]
 * (a linear layer's layout), F32, BF16 or F16; w->act_bf16 = 1 lets the product round the
 * activations to bf16 as well (vdpbf16ps where the CPU has it, else float32). Threaded. */

/* y[t][o] = (accumulate ? y[t][o] : 0) + bias[o] + Σ_j Σ_c W[o][j·cin + c] · x[(t·stride + j·dil − pad)·ldx + c]
 * for t < lout (y rows of ldy; bias may be NULL). */
void vx_conv1d_tm_margin(float *y, int64_t ldy, const float *x, int64_t ldx, int64_t lout, int64_t cin,
                         int64_t cout, int64_t k, int64_t stride, int64_t dil, int64_t pad, const vx_mat *w,
                         const float *bias, int accumulate, int nthreads);

/* The same followed by Snake on the output: z[t][c] = snake(y[t][c]) with alpha / inv as for
 * vx_snake_tm (z may equal y: in place), applied per block of rows while they are in cache. */
void vx_conv1d_tm_snake(float *y, int64_t ldy, const float *x, int64_t ldx, int64_t lout, int64_t cin, int64_t cout,
                        int64_t k, int64_t stride, int64_t dil, int64_t pad, const vx_mat *w, const float *bias,
                        int accumulate, const float *alpha, const float *inv, float *z, int64_t ldz, int nthreads);

/* ConvTranspose1d, time-major (groups 1): y[u][o] = bias[o] + Σ_{j,t: t·stride + j − pad = u} Σ_c
 * W[j·cout + o][c] · x[t·ldx + c] for u < lout = (lin − 1)·stride − 2·pad + k. W: k·cout rows × cin
 * columns (tap-major; PyTorch's [cin][cout][k] transposed). No margins needed. */
int64_t vx_convtr1d_tm_out_len(int64_t lin, int64_t k, int64_t stride, int64_t pad);
void vx_convtr1d_tm(float *y, int64_t ldy, const float *x, int64_t ldx, int64_t lin, int64_t cin, int64_t cout,
                    int64_t k, int64_t stride, int64_t pad, const vx_mat *w, const float *bias, int nthreads);
/* The two with an explicit level (≤ the CPU's; below AVX-512 the taps go through vx_gemm_f32). */
void vx_conv1d_tm_margin_isa(int isa, float *y, int64_t ldy, const float *x, int64_t ldx, int64_t lout,
                             int64_t cin, int64_t cout, int64_t k, int64_t stride, int64_t dil, int64_t pad,
                             const vx_mat *w, const float *bias, int accumulate, int nthreads);
void vx_conv1d_tm_snake_isa(int isa, float *y, int64_t ldy, const float *x, int64_t ldx, int64_t lout, int64_t cin,
                            int64_t cout, int64_t k, int64_t stride, int64_t dil, int64_t pad, const vx_mat *w,
                            const float *bias, int accumulate, const float *alpha, const float *inv, float *z,
                            int64_t ldz, int nthreads);
void vx_convtr1d_tm_isa(int isa, float *y, int64_t ldy, const float *x, int64_t ldx, int64_t lin, int64_t cin,
                        int64_t cout, int64_t k, int64_t stride, int64_t pad, const vx_mat *w, const float *bias,
                        int nthreads);

/* Snake on time-major rows: y[t][c] = x + inv[c]·sin²(alpha[c]·x), x = x[t][c], inv from vx_snake_inv
 * (1 / (alpha + 1e-9)); vx_snake's sin (ops_extra.h): bit-identical to it at the scalar level, within
 * a few ulp with AVX-512's fused multiply-adds. y may equal x. _isa: explicit level (0 scalar,
 * 2 AVX-512; AVX2 runs the scalar code). */
void vx_snake_inv(float *inv, const float *alpha, int64_t ch);
void vx_snake_tm(float *y, int64_t ldy, const float *x, int64_t ldx, const float *alpha, const float *inv,
                 int64_t rows, int64_t ch, int nthreads);
void vx_snake_tm_isa(int isa, float *y, int64_t ldy, const float *x, int64_t ldx, const float *alpha,
                     const float *inv, int64_t rows, int64_t ch, int nthreads);

#endif
