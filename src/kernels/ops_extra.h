/* Extra model-agnostic kernels: activations not in kernels.h, a 1-D
 * convolution on TIME-MAJOR activations (so that conv stacks interleaved
 * with transformer layers need no transposes), and Transformer-XL style
 * relative-position self-attention (ESPnet "rel_pos" encoding).
 * All activations are float32 row-major; weights stay in their file dtype. */
#ifndef VX_OPS_EXTRA_H
#define VX_OPS_EXTRA_H

#include <stdint.h>

#include "kernels/kernels.h"

/* Mish: x · tanh(softplus(x)), in place. vx_mish_isa: explicit level (0 scalar libm, 2 AVX-512). */
void vx_mish(float *x, int64_t n);
void vx_mish_isa(int isa, float *x, int64_t n);
/* Row-wise fusions around LayerNorm(w, b, eps) over rows of dim (single-threaded; split rows
 * over threads outside). vx_residual_layernorm: h += t + bias (t NULL: no residual, bias may be
 * NULL), then y = LN(h) (y NULL: none). vx_layernorm_mish: x += bias (bias may be NULL), then
 * y = Mish(LN(x)) + add (add [dim] broadcast over rows, may be NULL); y ≠ x. The _isa forms take
 * an explicit level (the scalar level is vx_layernorm's double-sum form). */
void vx_residual_layernorm(float *h, const float *t, const float *bias, float *y, const float *w, const float *b,
                           int64_t rows, int64_t dim, float eps);
void vx_residual_layernorm_isa(int isa, float *h, const float *t, const float *bias, float *y, const float *w,
                               const float *b, int64_t rows, int64_t dim, float eps);
void vx_layernorm_mish(float *y, float *x, const float *bias, const float *w, const float *b, const float *add,
                       int64_t rows, int64_t dim, float eps);
void vx_layernorm_mish_isa(int isa, float *y, float *x, const float *bias, const float *w, const float *b,
                           const float *add, int64_t rows, int64_t dim, float eps);
/* Snake (BigVGAN): y[c][t] = x + sin²(α_c·x) / (α_c + 1e-9) for x = x[c][t], over ch rows of len;
 * y may equal x. vx_snake_isa takes an explicit level (0 scalar, 1 AVX2, 2 AVX-512; ≤ the CPU's);
 * all levels give the same bits. */
void vx_snake(float *y, const float *x, const float *alpha, int64_t ch, int64_t len);
void vx_snake_isa(int isa, float *y, const float *x, const float *alpha, int64_t ch, int64_t len);
/* LeakyReLU: x if x ≥ 0 else slope·x, in place. */
void vx_leaky_relu(float *x, int64_t n, float slope);
/* dst[c][r] = src[r][c] for a rows × cols matrix. */
void vx_transpose(float *dst, const float *src, int64_t rows, int64_t cols);

/* Time-major Conv1d (stride 1, groups 1):
 *   y[b][t][co] = bias[co] + Σ_ci Σ_j W[co][ci][j] · x[b][t + j·dil − pad_left][ci]
 * x: [B][lin][cin], zeros outside [0, lin); y: [B][lout][cout] with
 * lout = lin + pad_left + pad_right − dil·(k−1) (must be ≥ 1).
 * w: the PyTorch Conv1d weight (cout, cin, k) viewed as rows = cout, cols = cin·k.
 * col: scratch of B · lout · cin · k floats (im2col; the product is one
 * vx_linear with M = B · lout, so the weight is read once for the batch). */
int64_t vx_conv1d_tm_out_len(int64_t lin, int64_t k, int64_t dil, int64_t pad_left, int64_t pad_right);
void vx_conv1d_tm(float *y, const float *x, int64_t B, int64_t lin, int64_t cin, int64_t k, int64_t dil,
                  int64_t pad_left, int64_t pad_right, const vx_mat *w, const float *bias, float *col,
                  int nthreads);

/* Relative-position multi-head self-attention of one sequence of length L
 * (Transformer-XL with learned biases u, v; ESPnet relative encoding):
 *   score_h(i, j) = [ (q_i + u_h)·k_j + (q_i + v_h)·p_h(L − 1 − i + j) ] / sqrt(dk)
 *   out_i = Σ_j softmax_j(score_h(i, ·)) · v_j            (per head h)
 * q, k, v, out: [L][H·dk] (head h at offset h·dk); p: [2L − 1][H·dk], row c is
 * the projected encoding of the relative distance r = i − j = L − 1 − c;
 * pos_u, pos_v: [H][dk]. No mask (all keys valid).
 * scratch: vx_relpos_attention_scratch(L, dk, nthreads) floats. Threaded over
 * (head, block of query rows). */
int64_t vx_relpos_attention_scratch(int64_t L, int64_t dk, int nthreads);
void vx_relpos_attention(float *out, const float *q, const float *k, const float *v, const float *p,
                         const float *pos_u, const float *pos_v, int64_t L, int H, int dk, float *scratch,
                         int nthreads);

#endif
