/* Conv1d / ConvTranspose1d kernels vs a direct scalar reference. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/conv.h"
#include "kernels/isa.h"
#include "kernels/ops_extra.h"
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

/* ---- time-major kernels (conv_tm.c) ---- */

/* Time-major Conv1d with zero margins vs ref_conv on the transposed data. ldx ≥ cin (extra columns
 * hold garbage the kernel must not read); act = act_bf16; acc: accumulate onto a random y. */
static void run_conv_tm(int isa, int64_t cin, int64_t cout, int64_t k, int64_t s, int64_t d, int64_t pad, int64_t lin,
                        int64_t ldx, vx_dtype dt, int act, int acc, int use_bias, int nthreads) {
    vx_conv1d_params p = {cin, cout, k, s, d, 1, pad, pad};
    const int64_t lout = vx_conv1d_out_len(&p, lin);
    const int64_t right = (lout - 1) * s + (k - 1) * d - pad - (lin - 1); /* rows read past the end */
    const int64_t ml = pad, mr = right > 0 ? right : 0, ldy = cout + 3;
    size_t nw = (size_t)(cout * cin * k);
    float *xc = malloc(sizeof(float) * (size_t)(cin * lin));
    float *xt = malloc(sizeof(float) * (size_t)((ml + lin + mr) * ldx));
    float *w = malloc(sizeof(float) * nw), *wr = malloc(sizeof(float) * nw), *wt = malloc(sizeof(float) * nw);
    void *wd = malloc(sizeof(float) * nw);
    float *bias = malloc(sizeof(float) * (size_t)cout);
    float *y = malloc(sizeof(float) * (size_t)(lout * ldy)), *y0 = malloc(sizeof(float) * (size_t)(lout * ldy));
    float *yr = malloc(sizeof(float) * (size_t)(cout * lout));
    tl_fill_random(xc, (size_t)(cin * lin), seed++);
    tl_fill_random(w, nw, seed++);
    tl_fill_random(bias, (size_t)cout, seed++);
    tl_fill_random(y0, (size_t)(lout * ldy), seed++);
    for (int64_t i = 0; i < (ml + lin + mr) * ldx; i++) xt[i] = 1e30f; /* garbage past cin */
    for (int64_t t = -ml; t < lin + mr; t++)
        for (int64_t c = 0; c < cin; c++) xt[(t + ml) * ldx + c] = t < 0 || t >= lin ? 0.0f : xc[c * lin + t];
    to_dtype(wt, w, dt, nw, wr); /* wr: the rounded weights in PyTorch layout */
    for (int64_t o = 0; o < cout; o++) /* tap-major [o][j·cin + c] */
        for (int64_t c = 0; c < cin; c++)
            for (int64_t j = 0; j < k; j++) {
                size_t src = (size_t)((o * cin + c) * k + j), dst = (size_t)(o * k * cin + j * cin + c);
                if (dt == VX_F32) ((float *)wd)[dst] = wr[src];
                else ((uint16_t *)wd)[dst] = ((uint16_t *)wt)[src];
            }
    vx_mat m = {dt, cout, k * cin, wd, act};
    memcpy(y, y0, sizeof(float) * (size_t)(lout * ldy));
    vx_conv1d_tm_margin_isa(isa, y, ldy, xt + ml * ldx, ldx, lout, cin, cout, k, s, d, pad, &m, use_bias ? bias : NULL,
                            acc, nthreads);
    ref_conv(yr, xc, 1, lin, &p, wr, use_bias ? bias : NULL);
    double md = 0, scale = 0;
    int pad_ok = 1;
    for (int64_t t = 0; t < lout; t++) {
        for (int64_t o = 0; o < cout; o++) {
            double want = yr[o * lout + t] + (acc ? y0[t * ldy + o] : 0.0), e = fabs(y[t * ldy + o] - want);
            if (e > md) md = e;
            if (fabs(want) > scale) scale = fabs(want);
        }
        for (int64_t o = cout; o < ldy; o++) pad_ok &= y[t * ldy + o] == y0[t * ldy + o];
    }
    /* f32: float rounding over cin·k terms; bf16 activations: 2^-8 relative per product */
    double tol = act && vx_gemm_packed_supported(isa, 1) ? 8e-3 * sqrt((double)(cin * k)) + 1e-5
                                                          : 1e-5 * (double)(cin * k) + 1e-5;
    CHECK_MSG(md <= tol && pad_ok,
              "conv_tm isa%d cin%lld cout%lld k%lld s%lld d%lld pad%lld L%lld ldx%lld dt%d act%d acc%d bias%d nt%d: "
              "%.3g > %.3g (scale %.3g)%s",
              isa, (long long)cin, (long long)cout, (long long)k, (long long)s, (long long)d, (long long)pad,
              (long long)lin, (long long)ldx, (int)dt, act, acc, use_bias, nthreads, md, tol, scale,
              pad_ok ? "" : ", wrote past cout");
    /* with the Snake epilogue: the same y, and z = vx_snake_tm(y), bit for bit (separate z and in place) */
    float *y2 = malloc(sizeof(float) * (size_t)(lout * ldy)), *z = malloc(sizeof(float) * (size_t)(lout * ldy));
    float *zr = malloc(sizeof(float) * (size_t)(lout * ldy));
    float *al = malloc(sizeof(float) * (size_t)cout), *inv = malloc(sizeof(float) * (size_t)cout);
    for (int64_t o = 0; o < cout; o++) al[o] = 0.3f + 0.01f * (float)o;
    vx_snake_inv(inv, al, cout);
    memcpy(y2, y0, sizeof(float) * (size_t)(lout * ldy));
    vx_conv1d_tm_snake_isa(isa, y2, ldy, xt + ml * ldx, ldx, lout, cin, cout, k, s, d, pad, &m, use_bias ? bias : NULL,
                           acc, al, inv, z, ldy, nthreads);
    vx_snake_tm_isa(isa, zr, ldy, y, ldy, al, inv, lout, cout, 1);
    int same = 1;
    for (int64_t t = 0; t < lout; t++)
        for (int64_t o = 0; o < cout; o++)
            same &= y2[t * ldy + o] == y[t * ldy + o] && memcmp(&z[t * ldy + o], &zr[t * ldy + o], sizeof(float)) == 0;
    memcpy(y2, y0, sizeof(float) * (size_t)(lout * ldy));
    vx_conv1d_tm_snake_isa(isa, y2, ldy, xt + ml * ldx, ldx, lout, cin, cout, k, s, d, pad, &m, use_bias ? bias : NULL,
                           acc, al, inv, y2, ldy, nthreads);
    for (int64_t t = 0; t < lout; t++)
        for (int64_t o = 0; o < cout; o++) same &= memcmp(&y2[t * ldy + o], &zr[t * ldy + o], sizeof(float)) == 0;
    CHECK_MSG(same, "conv_tm_snake isa%d cin%lld cout%lld k%lld d%lld L%lld nt%d: differs from conv then snake", isa,
              (long long)cin, (long long)cout, (long long)k, (long long)d, (long long)lin, nthreads);
    free(y2); free(z); free(zr); free(al); free(inv);
    free(xc); free(xt); free(w); free(wr); free(wt); free(wd); free(bias); free(y); free(y0); free(yr);
}

/* Time-major ConvTranspose1d vs ref_convtr on the transposed data. */
static void run_convtr_tm(int isa, int64_t cin, int64_t cout, int64_t k, int64_t s, int64_t pad, int64_t lin,
                          vx_dtype dt, int act, int use_bias, int nthreads) {
    vx_convtr1d_params p = {cin, cout, k, s, 1, pad};
    const int64_t lout = vx_convtr1d_out_len(&p, lin), ldx = cin + 1, ldy = cout + 2;
    CHECK(vx_convtr1d_tm_out_len(lin, k, s, pad) == lout);
    size_t nw = (size_t)(cin * cout * k);
    float *xc = malloc(sizeof(float) * (size_t)(cin * lin)), *xt = malloc(sizeof(float) * (size_t)(lin * ldx));
    float *w = malloc(sizeof(float) * nw), *wr = malloc(sizeof(float) * nw), *wt = malloc(sizeof(float) * nw);
    void *wd = malloc(sizeof(float) * nw);
    float *bias = malloc(sizeof(float) * (size_t)cout);
    float *y = malloc(sizeof(float) * (size_t)(lout * ldy + 1)), *yr = malloc(sizeof(float) * (size_t)(cout * lout + 1));
    tl_fill_random(xc, (size_t)(cin * lin), seed++);
    tl_fill_random(w, nw, seed++);
    tl_fill_random(bias, (size_t)cout, seed++);
    for (int64_t t = 0; t < lin; t++) {
        for (int64_t c = 0; c < cin; c++) xt[t * ldx + c] = xc[c * lin + t];
        xt[t * ldx + cin] = 1e30f;
    }
    to_dtype(wt, w, dt, nw, wr);
    for (int64_t c = 0; c < cin; c++) /* [cin][cout][k] → [j·cout + o][cin] */
        for (int64_t o = 0; o < cout; o++)
            for (int64_t j = 0; j < k; j++) {
                size_t src = (size_t)((c * cout + o) * k + j), dst = (size_t)((j * cout + o) * cin + c);
                if (dt == VX_F32) ((float *)wd)[dst] = wr[src];
                else ((uint16_t *)wd)[dst] = ((uint16_t *)wt)[src];
            }
    vx_mat m = {dt, k * cout, cin, wd, act};
    for (int64_t i = 0; i < lout * ldy; i++) y[i] = -7.0f;
    vx_convtr1d_tm_isa(isa, y, ldy, xt, ldx, lin, cin, cout, k, s, pad, &m, use_bias ? bias : NULL, nthreads);
    ref_convtr(yr, xc, 1, lin, &p, wr, use_bias ? bias : NULL);
    double md = 0;
    int pad_ok = 1;
    for (int64_t u = 0; u < lout; u++) {
        for (int64_t o = 0; o < cout; o++) {
            double e = fabs(y[u * ldy + o] - yr[o * lout + u]);
            if (e > md) md = e;
        }
        for (int64_t o = cout; o < ldy; o++) pad_ok &= y[u * ldy + o] == -7.0f;
    }
    double tol = act && vx_gemm_packed_supported(isa, 1) ? 8e-3 * sqrt((double)(cin * k)) + 1e-5
                                                          : 1e-5 * (double)(cin * k) + 1e-5;
    CHECK_MSG(md <= tol && pad_ok, "convtr_tm isa%d cin%lld cout%lld k%lld s%lld pad%lld L%lld dt%d act%d nt%d: %.3g > %.3g%s",
              isa, (long long)cin, (long long)cout, (long long)k, (long long)s, (long long)pad, (long long)lin, (int)dt,
              act, nthreads, md, tol, pad_ok ? "" : ", wrote past cout");
    free(xc); free(xt); free(w); free(wr); free(wt); free(wd); free(bias); free(y); free(yr);
}

/* Time-major Snake vs vx_snake on the transposed data: bit-identical at the scalar level, within
 * 4 ulp of the output's magnitude (plus 1e-6·|x| for the 2^-22 argument rounding that FMA moves)
 * with AVX-512. */
static int snake_close(int isa, float got, float want, float x) {
    if (isa < VX_ISA_AVX512) return memcmp(&got, &want, sizeof got) == 0;
    double tol = 4.0 * 1.2e-7 * fabs((double)want) + 1e-6 * fabs((double)x) + 1e-12;
    return fabs((double)got - want) <= tol;
}

static void run_snake_tm(int isa, int64_t ch, int64_t rows, int nthreads) {
    const int64_t ldx = ch + 5, ldy = ch + 2;
    float *x = malloc(sizeof(float) * (size_t)(rows * ldx)), *xc = malloc(sizeof(float) * (size_t)(rows * ch));
    float *y = malloc(sizeof(float) * (size_t)(rows * ldy)), *yc = malloc(sizeof(float) * (size_t)(rows * ch));
    float *alpha = malloc(sizeof(float) * (size_t)ch), *inv = malloc(sizeof(float) * (size_t)ch);
    tl_fill_random(x, (size_t)(rows * ldx), seed++);
    tl_fill_random(alpha, (size_t)ch, seed++);
    for (int64_t i = 0; i < rows * ldx; i++) x[i] *= 40.0f; /* several periods of sin */
    for (int64_t c = 0; c < ch; c++) alpha[c] = 0.2f + fabsf(alpha[c]) * 2.0f;
    if (ch > 1) alpha[1] = 0.0f; /* α = 0: the 1e-9 guard */
    for (int64_t t = 0; t < rows; t++)
        for (int64_t c = 0; c < ch; c++) xc[c * rows + t] = x[t * ldx + c];
    for (int64_t i = 0; i < rows * ldy; i++) y[i] = -3.0f;
    vx_snake_inv(inv, alpha, ch);
    vx_snake_tm_isa(isa, y, ldy, x, ldx, alpha, inv, rows, ch, nthreads);
    vx_snake_isa(0, yc, xc, alpha, ch, rows);
    int same = 1, pad_ok = 1;
    for (int64_t t = 0; t < rows; t++) {
        for (int64_t c = 0; c < ch; c++) same &= snake_close(isa, y[t * ldy + c], yc[c * rows + t], x[t * ldx + c]);
        for (int64_t c = ch; c < ldy; c++) pad_ok &= y[t * ldy + c] == -3.0f;
    }
    CHECK_MSG(same && pad_ok, "snake_tm isa%d ch%lld rows%lld nt%d: %s", isa, (long long)ch, (long long)rows, nthreads,
              same ? "wrote past ch" : "differs from vx_snake");
    /* in place */
    for (int64_t t = 0; t < rows; t++) memcpy(y + t * ldy, x + t * ldx, sizeof(float) * (size_t)ch);
    vx_snake_tm_isa(isa, y, ldy, y, ldy, alpha, inv, rows, ch, nthreads);
    for (int64_t t = 0; t < rows; t++)
        for (int64_t c = 0; c < ch; c++) same &= snake_close(isa, y[t * ldy + c], yc[c * rows + t], x[t * ldx + c]);
    CHECK_MSG(same, "snake_tm in place isa%d ch%lld", isa, (long long)ch);
    free(x); free(xc); free(y); free(yc); free(alpha); free(inv);
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
    /* time-major kernels at every level this CPU runs (AVX2 / scalar: taps through vx_gemm_f32) */
    for (int isa = 0; isa <= vx_cpu_isa(); isa++)
        for (int nt = 1; nt <= 2; nt++) {
            /* HiFT ResBlock shapes: dilations 1/3/5, kernels 3/7/11, same padding; tails in every dim */
            run_conv_tm(isa, 7, 5, 3, 1, 1, 1, 37, 7, VX_F32, 0, 0, 1, nt);
            run_conv_tm(isa, 13, 11, 7, 1, 3, 9, 101, 13, VX_F32, 0, 1, 1, nt);
            run_conv_tm(isa, 9, 33, 11, 1, 5, 25, 77, 9, VX_F32, 0, 0, 0, nt);
            run_conv_tm(isa, 16, 8, 3, 1, 3, 3, 5, 16, VX_F32, 0, 0, 1, nt); /* L shorter than the span */
            run_conv_tm(isa, 10, 6, 5, 1, 2, 4, 29, 12, VX_F32, 0, 1, 1, nt); /* ldx > cin: per-tap path */
            run_conv_tm(isa, 10, 6, 5, 1, 1, 2, 29, 12, VX_F32, 0, 0, 1, nt);
            /* strides: HiFT source downsampling (18 → C, k 2s, pad s/2), asymmetric reads */
            run_conv_tm(isa, 18, 40, 30, 15, 1, 7, 481, 18, VX_F32, 0, 0, 1, nt);
            run_conv_tm(isa, 18, 24, 6, 3, 1, 1, 97, 18, VX_F32, 0, 0, 1, nt);
            run_conv_tm(isa, 5, 7, 5, 3, 2, 2, 61, 5, VX_F32, 0, 1, 1, nt);
            run_conv_tm(isa, 33, 17, 1, 1, 1, 0, 1234, 33, VX_F32, 0, 0, 1, nt); /* pointwise */
            /* long enough to thread inside the GEMM (M·N·K ≥ 4e6), odd channel counts */
            run_conv_tm(isa, 64, 48, 7, 1, 3, 9, 3001, 64, VX_F32, 0, 1, 1, nt);
            run_conv_tm(isa, 67, 35, 11, 1, 1, 5, 2003, 67, VX_F32, 0, 0, 1, nt);
            /* half-precision weights; bf16 activations (vdpbf16ps where the CPU has it) */
            run_conv_tm(isa, 10, 6, 5, 1, 1, 2, 29, 10, VX_F16, 0, 0, 1, nt);
            run_conv_tm(isa, 10, 6, 5, 1, 3, 6, 29, 10, VX_BF16, 0, 1, 1, nt);
            run_conv_tm(isa, 64, 48, 7, 1, 3, 9, 3001, 64, VX_BF16, 1, 1, 1, nt);
            run_conv_tm(isa, 31, 20, 11, 1, 1, 5, 503, 31, VX_BF16, 1, 0, 1, nt); /* odd K */
            run_conv_tm(isa, 16, 16, 3, 1, 5, 5, 211, 16, VX_F32, 1, 0, 1, nt);
            /* transposed: HiFT upsamplers (k 16/11/7, s 8/5/3, padding (k−s)/2) */
            run_convtr_tm(isa, 16, 8, 16, 8, 4, 23, VX_F32, 0, 1, nt);
            run_convtr_tm(isa, 8, 4, 11, 5, 3, 37, VX_F32, 0, 1, nt);
            run_convtr_tm(isa, 4, 2, 7, 3, 2, 101, VX_F32, 0, 0, nt);
            run_convtr_tm(isa, 9, 7, 16, 8, 0, 13, VX_F32, 0, 1, nt);
            run_convtr_tm(isa, 6, 6, 3, 5, 0, 11, VX_F32, 0, 1, nt); /* k < s: gaps */
            run_convtr_tm(isa, 5, 3, 7, 3, 2, 1, VX_F32, 0, 1, nt);  /* one input sample */
            run_convtr_tm(isa, 64, 32, 11, 5, 3, 1501, VX_F32, 0, 1, nt);
            run_convtr_tm(isa, 64, 32, 11, 5, 3, 1501, VX_BF16, 1, 1, nt);
            run_convtr_tm(isa, 12, 6, 16, 8, 4, 17, VX_F16, 0, 1, nt);
            /* Snake: odd widths, masked tails, threaded rows */
            run_snake_tm(isa, 1, 7, nt);
            run_snake_tm(isa, 37, 101, nt);
            run_snake_tm(isa, 64, 2000, nt);
        }
    return tl_finish("test_conv");
}
