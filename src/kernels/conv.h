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

#endif
