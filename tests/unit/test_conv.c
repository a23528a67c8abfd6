/* Conv1d / ConvTranspose1d kernels vs a direct scalar reference. */
#include <stdlib.h>
#include <string.h>

#include "kernels/conv.h"
#include "testlib.h"

/* y[b][o][t] = bias[o] + Σ_{c,k} w[o][c][k] · x[b][g·cig + c][t·s + k·d − pl] */
static void ref_conv(float *y, const float *x, int64_t B, int64_t lin, const vx_conv1d_params *p, const float *w,
                     const float *bias) {
    int64_t lout = vx_conv1d_out_len(p, lin), cig = p->cin / p->groups, cog = p->cout / p->groups;
    for (int64_t b = 0; b < B; b++)
        for (int64_t o = 0; o < p->cout; o++)
            for (int64_t t = 0; t < lout; t++) {
                double acc = bias ? bias[o] : 0.0;
                int64_t g = o / cog;
                for (int64_t c = 0; c < cig; c++)
                    for (int64_t k = 0; k < p->k; k++) {
                        int64_t i = t * p->stride + k * p->dilation - p->pad_left;
                        if (i < 0 || i >= lin) continue;
                        acc += (double)w[(o * cig + c) * p->k + k] * x[(b * p->cin + g * cig + c) * lin + i];
                    }
                y[(b * p->cout + o) * lout + t] = (float)acc;
            }
}

/* y[b][g·cog + o][t·s + k − pad] += w[g·cig + c][o][k] · x[b][g·cig + c][t] */
static void ref_convtr(float *y, const float *x, int64_t B, int64_t lin, const vx_convtr1d_params *p,
                       const float *w, const float *bias) {
    int64_t lout = vx_convtr1d_out_len(p, lin), cig = p->cin / p->groups, cog = p->cout / p->groups;
    double *acc = calloc((size_t)(B * p->cout * lout), sizeof(double));
    for (int64_t b = 0; b < B; b++)
        for (int64_t ci = 0; ci < p->cin; ci++) {
            int64_t g = ci / cig;
            for (int64_t o = 0; o < cog; o++)
                for (int64_t k = 0; k < p->k; k++)
                    for (int64_t t = 0; t < lin; t++) {
                        int64_t u = t * p->stride + k - p->padding;
                        if (u < 0 || u >= lout) continue;
                        acc[(b * p->cout + g * cog + o) * lout + u] +=
                            (double)w[(ci * cog + o) * p->k + k] * x[(b * p->cin + ci) * lin + t];
                    }
        }
    for (int64_t i = 0; i < B * p->cout * lout; i++) y[i] = (float)(acc[i] + (bias ? bias[(i / lout) % p->cout] : 0));
    free(acc);
}

static void to_dtype(void *dst, const float *src, vx_dtype dt, size_t n, float *rounded) {
    for (size_t i = 0; i < n; i++) {
        if (dt == VX_F16) {
            ((uint16_t *)dst)[i] = vx_f32_to_f16(src[i]);
            rounded[i] = vx_f16_to_f32(((uint16_t *)dst)[i]);
        } else if (dt == VX_BF16) {
            ((uint16_t *)dst)[i] = vx_f32_to_bf16(src[i]);
            rounded[i] = vx_bf16_to_f32(((uint16_t *)dst)[i]);
        } else {
            ((float *)dst)[i] = src[i];
            rounded[i] = src[i];
        }
    }
}

static unsigned seed = 1;

static void run_conv(int64_t B, int64_t cin, int64_t cout, int64_t k, int64_t s, int64_t d, int64_t g, int64_t pl,
                     int64_t pr, int64_t lin, vx_dtype dt, int use_bias, int nthreads) {
    vx_conv1d_params p = {cin, cout, k, s, d, g, pl, pr};
    int64_t lout = vx_conv1d_out_len(&p, lin);
    size_t nw = (size_t)(cout * (cin / g) * k);
    float *x = malloc(sizeof(float) * (size_t)(B * cin * lin));
    float *w = malloc(sizeof(float) * nw), *wr = malloc(sizeof(float) * nw);
    void *wd = malloc(sizeof(float) * nw);
    float *bias = malloc(sizeof(float) * (size_t)cout);
    float *y = malloc(sizeof(float) * (size_t)(B * cout * lout + 1));
    float *yr = malloc(sizeof(float) * (size_t)(B * cout * lout + 1));
    tl_fill_random(x, (size_t)(B * cin * lin), seed++);
    tl_fill_random(w, nw, seed++);
    tl_fill_random(bias, (size_t)cout, seed++);
    to_dtype(wd, w, dt, nw, wr);
    vx_mat m = {dt, cout, (cin / g) * k, wd};
    for (int64_t i = 0; i < B * cout * lout; i++) y[i] = NAN;
    vx_conv1d(y, x, B, lin, &p, &m, use_bias ? bias : NULL, nthreads);
    ref_conv(yr, x, B, lin, &p, wr, use_bias ? bias : NULL);
    double tol = 1e-5 * (double)((cin / g) * k) + 1e-5;
    double md = tl_max_abs_diff(y, yr, (size_t)(B * cout * lout));
    CHECK_MSG(md <= tol, "conv B%lld cin%lld cout%lld k%lld s%lld d%lld g%lld pad%lld/%lld L%lld dt%d: %.3g > %.3g",
              (long long)B, (long long)cin, (long long)cout, (long long)k, (long long)s, (long long)d, (long long)g,
              (long long)pl, (long long)pr, (long long)lin, (int)dt, md, tol);
    free(x); free(w); free(wr); free(wd); free(bias); free(y); free(yr);
}

static void run_convtr(int64_t B, int64_t cin, int64_t cout, int64_t k, int64_t s, int64_t g, int64_t pad,
                       int64_t lin, vx_dtype dt, int use_bias, int nthreads) {
    vx_convtr1d_params p = {cin, cout, k, s, g, pad};
    int64_t lout = vx_convtr1d_out_len(&p, lin);
    size_t nw = (size_t)(cin * (cout / g) * k);
    float *x = malloc(sizeof(float) * (size_t)(B * cin * lin));
    float *w = malloc(sizeof(float) * nw), *wr = malloc(sizeof(float) * nw);
    void *wd = malloc(sizeof(float) * nw);
    float *bias = malloc(sizeof(float) * (size_t)cout);
    float *y = malloc(sizeof(float) * (size_t)(B * cout * lout + 1));
    float *yr = malloc(sizeof(float) * (size_t)(B * cout * lout + 1));
    tl_fill_random(x, (size_t)(B * cin * lin), seed++);
    tl_fill_random(w, nw, seed++);
    tl_fill_random(bias, (size_t)cout, seed++);
    to_dtype(wd, w, dt, nw, wr);
    vx_mat m = {dt, cin, (cout / g) * k, wd};
    for (int64_t i = 0; i < B * cout * lout; i++) y[i] = NAN;
    vx_convtr1d(y, x, B, lin, &p, &m, use_bias ? bias : NULL, nthreads);
    ref_convtr(yr, x, B, lin, &p, wr, use_bias ? bias : NULL);
    double tol = 1e-5 * (double)((cin / g) * k) + 1e-5;
    double md = tl_max_abs_diff(y, yr, (size_t)(B * cout * lout));
    CHECK_MSG(md <= tol, "convtr B%lld cin%lld cout%lld k%lld s%lld g%lld pad%lld L%lld dt%d: %.3g > %.3g",
              (long long)B, (long long)cin, (long long)cout, (long long)k, (long long)s, (long long)g,
              (long long)pad, (long long)lin, (int)dt, md, tol);
    free(x); free(w); free(wr); free(wd); free(bias); free(y); free(yr);
}

int main(int argc, char **argv) {
    if (argc > 1) tl_data_dir = argv[1];

    /* output length formula */
    vx_conv1d_params q = {4, 4, 7, 1, 3, 1, 9, 9};
    CHECK(vx_conv1d_out_len(&q, 20) == 20);
    vx_convtr1d_params qt = {4, 4, 16, 8, 1, 4};
    CHECK(vx_convtr1d_out_len(&qt, 10) == 9 * 8 - 8 + 16);

    for (int nt = 1; nt <= 3; nt += 2) {
        /* plain, same-padding, HiFT-like resblock convs */
        run_conv(1, 7, 5, 3, 1, 1, 1, 1, 1, 37, VX_F32, 1, nt);
        run_conv(2, 13, 11, 7, 1, 1, 1, 3, 3, 101, VX_F32, 1, nt);
        run_conv(1, 9, 9, 11, 1, 5, 1, 25, 25, 77, VX_F32, 1, nt);
        run_conv(1, 16, 8, 3, 1, 3, 1, 3, 3, 5, VX_F32, 0, nt); /* L shorter than the span */
        /* stride, asymmetric padding, no padding */
        run_conv(1, 6, 10, 4, 2, 1, 1, 0, 3, 50, VX_F32, 1, nt);
        run_conv(3, 5, 7, 5, 3, 2, 1, 2, 0, 61, VX_F32, 1, nt);
        run_conv(1, 18, 18, 30, 15, 1, 1, 7, 7, 487, VX_F32, 1, nt); /* HiFT source downsample */
        /* groups, depthwise, channel multiplier */
        run_conv(1, 12, 9, 3, 1, 1, 3, 1, 1, 45, VX_F32, 1, nt);
        run_conv(2, 8, 8, 7, 1, 2, 8, 6, 6, 33, VX_F32, 1, nt);
        run_conv(1, 5, 15, 5, 2, 1, 5, 2, 2, 41, VX_F32, 1, nt);
        /* pointwise and long sequences (several tiles) */
        run_conv(1, 33, 17, 1, 1, 1, 1, 0, 0, 1234, VX_F32, 1, nt);
        run_conv(2, 64, 31, 7, 1, 1, 1, 3, 3, 3001, VX_F32, 1, nt);
        /* half-precision weights */
        run_conv(1, 10, 6, 5, 1, 1, 1, 2, 2, 29, VX_F16, 1, nt);
        run_conv(1, 10, 6, 5, 2, 1, 2, 2, 2, 29, VX_BF16, 1, nt);

        /* transposed: HiFT upsamplers (k 16/11/7, s 8/5/3, padding (k−s)/2) */
        run_convtr(1, 16, 8, 16, 8, 1, 4, 23, VX_F32, 1, nt);
        run_convtr(1, 8, 4, 11, 5, 1, 3, 37, VX_F32, 1, nt);
        run_convtr(1, 4, 2, 7, 3, 1, 2, 101, VX_F32, 1, nt);
        run_convtr(2, 9, 7, 16, 8, 1, 0, 13, VX_F32, 0, nt);
        run_convtr(1, 6, 6, 3, 5, 1, 0, 11, VX_F32, 1, nt); /* k < s: gaps */
        run_convtr(1, 6, 9, 5, 2, 3, 1, 19, VX_F32, 1, nt); /* groups */
        run_convtr(1, 5, 3, 7, 3, 1, 2, 1, VX_F32, 1, nt);  /* one input sample */
        run_convtr(1, 32, 16, 11, 5, 1, 3, 9001, VX_F32, 1, nt); /* several tiles */
        run_convtr(1, 12, 6, 16, 8, 1, 4, 17, VX_F16, 1, nt);
        run_convtr(1, 12, 6, 7, 3, 2, 2, 17, VX_BF16, 1, nt);
    }
    return tl_finish("test_conv");
}
