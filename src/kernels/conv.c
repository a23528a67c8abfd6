/* Conv1d as im2col + GEMM, ConvTranspose1d as GEMM + col2im (overlap-add).
 *
 * Layout (PyTorch): x[B][C][L], y[B][C'][L'].
 * Conv1d:          y[g·cog + o][t] = Σ_{c,k} W[g·cog + o][c·K + k] · x[g·cig + c][t·s + k·d − pl]
 *                  → per group: Y_g[cog][n] = W_g[cog][cig·K] · col[cig·K][n]
 * ConvTranspose1d: y[g·cog + o][t·s + k − p] += Σ_c W[g·cig + c][o·K + k] · x[g·cig + c][t]
 *                  → per group: col[cog·K][n] = W_gᵀ[cog·K][cig] · X_g[cig][n], then overlap-add.
 * Long sequences are processed in tiles of output (conv) or input (transposed) positions so that
 * the column buffer stays cache-sized. F16/BF16 weights are converted to f32 once per call.
 * If scratch allocation fails the kernels fall back to a direct (slow, allocation-free) loop,
 * since they have no error channel. */
#include "kernels/conv.h"

#include <stdlib.h>
#include <string.h>

#include "base/pool.h"

/* Target size of one column buffer, in floats (1 MiB). */
#define VX_CONV_COL_BUDGET (256 * 1024)

static int64_t clamp_tile(int64_t rows, int64_t len) {
    int64_t n = VX_CONV_COL_BUDGET / (rows > 0 ? rows : 1);
    if (n < 64) n = 64;
    n = (n + 31) / 32 * 32;
    return n < len ? n : len;
}

static float wval(const vx_mat *w, int64_t i) {
    switch (w->dtype) {
    case VX_F16: return vx_f16_to_f32(((const uint16_t *)w->data)[i]);
    case VX_BF16: return vx_bf16_to_f32(((const uint16_t *)w->data)[i]);
    default: return ((const float *)w->data)[i];
    }
}

/* f32 weights: the stored array, or a converted copy in *owned (NULL on allocation failure). */
static const float *weights_f32(const vx_mat *w, float **owned) {
    *owned = NULL;
    if (w->dtype == VX_F32) return (const float *)w->data;
    size_t n = (size_t)(w->rows * w->cols);
    float *buf = malloc(n * sizeof(float));
    if (!buf) return NULL;
    vx_to_f32(buf, w->data, w->dtype, n);
    *owned = buf;
    return buf;
}

/* ------------------------------------------------------------------ Conv1d */

int64_t vx_conv1d_out_len(const vx_conv1d_params *p, int64_t lin) {
    int64_t span = p->dilation * (p->k - 1) + 1;
    int64_t num = lin + p->pad_left + p->pad_right - span;
    if (num < 0) return 0;
    return num / p->stride + 1;
}

/* Direct loop, used for channel-multiplier convs (Cin/groups == 1: depthwise) and as the
 * allocation-free fallback. Threaded over output channels. */
typedef struct {
    float *y;
    const float *x, *bias;
    int64_t lin, lout;
    const vx_conv1d_params *p;
    const vx_mat *w;
} conv_direct;

/* Rows [bo0, bo1) of y viewed as [B·cout][lout]. */
static void conv1d_direct_rows(void *ctx, int64_t bo0, int64_t bo1) {
    const conv_direct *c = ctx;
    float *y = c->y;
    const float *x = c->x, *bias = c->bias;
    const int64_t lin = c->lin, lout = c->lout;
    const vx_conv1d_params *p = c->p;
    const vx_mat *w = c->w;
    const int64_t cig = p->cin / p->groups, cog = p->cout / p->groups, K = p->k;
    const int64_t s = p->stride, d = p->dilation, pl = p->pad_left;
    for (int64_t bo = bo0; bo < bo1; bo++) {
        int64_t b = bo / p->cout, o = bo % p->cout, g = o / cog;
        float *yr = y + bo * lout;
        float b0 = bias ? bias[o] : 0.0f;
        for (int64_t t = 0; t < lout; t++) yr[t] = b0;
        for (int64_t c = 0; c < cig; c++) {
            const float *xr = x + (b * p->cin + g * cig + c) * lin;
            for (int64_t k = 0; k < K; k++) {
                float wk = wval(w, o * cig * K + c * K + k);
                int64_t off = k * d - pl; /* input index = t·s + off */
                /* valid t: 0 ≤ t·s + off < lin */
                int64_t t0 = off >= 0 ? 0 : (-off + s - 1) / s;
                int64_t t1 = lin - off <= 0 ? 0 : (lin - off - 1) / s + 1;
                if (t1 > lout) t1 = lout;
                if (s == 1) {
                    for (int64_t t = t0; t < t1; t++) yr[t] += wk * xr[t + off];
                } else {
                    for (int64_t t = t0; t < t1; t++) yr[t] += wk * xr[t * s + off];
                }
            }
        }
    }
}

static void conv1d_direct(float *y, const float *x, int64_t B, int64_t lin, int64_t lout,
                          const vx_conv1d_params *p, const vx_mat *w, const float *bias, int nthreads) {
    const int64_t total = B * p->cout;
    conv_direct c = {y, x, bias, lin, lout, p, w};
    vx_pool_for(total * lout * (p->cin / p->groups) * p->k > 32768 ? nthreads : 1, total, 1, conv1d_direct_rows, &c);
}

/* col[c·K + k][j] = x[c][(t0 + j)·s + k·d − pl] (zero outside), j < n. */
static void im2col(float *col, const float *xg, int64_t cig, int64_t lin, int64_t t0, int64_t n,
                   const vx_conv1d_params *p) {
    const int64_t K = p->k, s = p->stride, d = p->dilation, pl = p->pad_left;
    for (int64_t c = 0; c < cig; c++) {
        const float *xr = xg + c * lin;
        for (int64_t k = 0; k < K; k++) {
            float *cr = col + (c * K + k) * n;
            int64_t off = t0 * s + k * d - pl; /* input index = j·s + off */
            int64_t j0 = off >= 0 ? 0 : (-off + s - 1) / s;
            int64_t j1 = lin - off <= 0 ? 0 : (lin - off - 1) / s + 1;
            if (j1 > n) j1 = n;
            if (j0 > j1) j0 = j1;
            for (int64_t j = 0; j < j0; j++) cr[j] = 0.0f;
            if (s == 1) {
                if (j1 > j0) memcpy(cr + j0, xr + (off + j0), (size_t)(j1 - j0) * sizeof(float));
            } else {
                for (int64_t j = j0; j < j1; j++) cr[j] = xr[j * s + off];
            }
            for (int64_t j = j1; j < n; j++) cr[j] = 0.0f;
        }
    }
}

typedef struct conv_tiles {
    const float *x;
    float *y;
    const float *W;
    const float *bias;
    const vx_conv1d_params *p;
    int64_t lin, lout, tile, ntiles;
    int pointwise;
    float *cols; /* one column buffer per pool slot */
} conv_tiles;

static void conv1d_tile(const conv_tiles *c, int64_t it, float *col, int nthreads);

/* One tile per chunk, a single-threaded GEMM in the slot's column buffer. */
static void conv1d_tile_chunk(void *ctx, int64_t it) {
    const conv_tiles *c = ctx;
    const int64_t rows = c->p->cin / c->p->groups * c->p->k;
    conv1d_tile(c, it, c->cols ? c->cols + (size_t)vx_pool_slot() * (size_t)(rows * c->tile) : NULL, 1);
}

/* Work item `it` = (batch, group, output tile): im2col into col, one GEMM, bias. */
static void conv1d_tile(const conv_tiles *c, int64_t it, float *col, int nthreads) {
    const vx_conv1d_params *p = c->p;
    const int64_t G = p->groups, cig = p->cin / G, cog = p->cout / G, rows = cig * p->k;
    const int64_t b = it / (G * c->ntiles), g = (it / c->ntiles) % G, ti = it % c->ntiles;
    const int64_t t0 = ti * c->tile, n = c->lout - t0 < c->tile ? c->lout - t0 : c->tile;
    const float *xg = c->x + (b * p->cin + g * cig) * c->lin;
    float *yg = c->y + (b * p->cout + g * cog) * c->lout + t0;
    const float *B_ = xg + t0;
    int64_t ldb = c->lin;
    if (!c->pointwise) {
        im2col(col, xg, cig, c->lin, t0, n, p);
        B_ = col;
        ldb = n;
    }
    vx_gemm_f32(0, 0, cog, n, rows, 1.0f, c->W + g * cog * rows, rows, B_, ldb, 0.0f, yg, c->lout, nthreads);
    if (c->bias)
        for (int64_t o = 0; o < cog; o++) {
            const float bo = c->bias[g * cog + o];
            float *yr = yg + o * c->lout;
            for (int64_t j = 0; j < n; j++) yr[j] += bo;
        }
}

void vx_conv1d(float *y, const float *x, int64_t B, int64_t lin, const vx_conv1d_params *p, const vx_mat *w,
               const float *bias, int nthreads) {
    if (nthreads < 1) nthreads = 1;
    const int64_t lout = vx_conv1d_out_len(p, lin);
    if (lout <= 0 || B <= 0) return;
    const int64_t G = p->groups, cig = p->cin / G, rows = cig * p->k;

    if (cig == 1) { /* depthwise-like: GEMM with one input row per group is not worth it */
        conv1d_direct(y, x, B, lin, lout, p, w, bias, nthreads);
        return;
    }
    float *wown = NULL;
    const float *W = weights_f32(w, &wown);
    if (!W) {
        conv1d_direct(y, x, B, lin, lout, p, w, bias, nthreads);
        return;
    }
    const int pointwise = p->k == 1 && p->stride == 1 && p->pad_left == 0 && p->pad_right == 0;
    int64_t tile = pointwise ? lout : clamp_tile(rows, lout);
    int64_t ntiles = (lout + tile - 1) / tile;
    /* Enough independent tiles: one single-threaded GEMM per tile, tiles in parallel, with the
     * tile count rounded to a multiple of the thread count for balance. Otherwise tiles in
     * sequence, each GEMM threaded. */
    const int outer = nthreads > 1 && B * G * ntiles >= nthreads;
    if (outer && !pointwise) {
        ntiles = (ntiles + nthreads - 1) / nthreads * nthreads;
        tile = (lout + ntiles - 1) / ntiles;
        ntiles = (lout + tile - 1) / tile;
    }
    const int64_t items = B * G * ntiles;
    float *cols = NULL;
    if (!pointwise) {
        cols = malloc((size_t)(outer ? nthreads : 1) * (size_t)(rows * tile) * sizeof(float));
        if (!cols) {
            free(wown);
            conv1d_direct(y, x, B, lin, lout, p, w, bias, nthreads);
            return;
        }
    }
    conv_tiles ct = {x, y, W, bias, p, lin, lout, tile, ntiles, pointwise, cols};
    if (outer) {
        vx_pool_run(nthreads, items, conv1d_tile_chunk, &ct);
    } else {
        for (int64_t it = 0; it < items; it++) conv1d_tile(&ct, it, cols, nthreads);
    }
    free(cols);
    free(wown);
}

/* --------------------------------------------------------- ConvTranspose1d */

int64_t vx_convtr1d_out_len(const vx_convtr1d_params *p, int64_t lin) {
    int64_t n = (lin - 1) * p->stride - 2 * p->padding + p->k;
    return n > 0 ? n : 0;
}

/* Allocation-free fallback: scatter form, threaded over output channels (no write conflicts). */
typedef struct {
    float *y;
    const float *x;
    int64_t lin, lout;
    const vx_convtr1d_params *p;
    const vx_mat *w;
    /* overlap-add of one tile (convtr1d_add_rows) */
    const float *col;
    int64_t b, g, t0, n;
} convtr_job;

/* Rows [bo0, bo1) of y viewed as [B·cout][lout]. */
static void convtr1d_direct_rows(void *ctx, int64_t bo0, int64_t bo1) {
    const convtr_job *c = ctx;
    float *y = c->y;
    const float *x = c->x;
    const int64_t lin = c->lin, lout = c->lout;
    const vx_convtr1d_params *p = c->p;
    const vx_mat *w = c->w;
    const int64_t cig = p->cin / p->groups, cog = p->cout / p->groups, K = p->k, s = p->stride;
    for (int64_t bo = bo0; bo < bo1; bo++) {
        int64_t b = bo / p->cout, o = bo % p->cout, g = o / cog, og = o % cog;
        float *yr = y + bo * lout;
        for (int64_t c = 0; c < cig; c++) {
            const float *xr = x + (b * p->cin + g * cig + c) * lin;
            for (int64_t k = 0; k < K; k++) {
                float wk = wval(w, (g * cig + c) * cog * K + og * K + k);
                for (int64_t t = 0; t < lin; t++) {
                    int64_t u = t * s + k - p->padding;
                    if (u >= 0 && u < lout) yr[u] += wk * xr[t];
                }
            }
        }
    }
}

static void convtr1d_direct(float *y, const float *x, int64_t B, int64_t lin, int64_t lout,
                            const vx_convtr1d_params *p, const vx_mat *w, int nthreads) {
    convtr_job c = {.y = y, .x = x, .lin = lin, .lout = lout, .p = p, .w = w};
    vx_pool_for(nthreads, B * p->cout, 1, convtr1d_direct_rows, &c);
}

/* overlap-add of channels [o0, o1) of one tile: y[o][(t0 + j)·s + k − pad] += col[o·K + k][j] */
static void convtr1d_add_rows(void *ctx, int64_t o0, int64_t o1) {
    const convtr_job *c = ctx;
    const vx_convtr1d_params *p = c->p;
    const int64_t cog = p->cout / p->groups, K = p->k, s = p->stride, pad = p->padding;
    const int64_t lout = c->lout, t0 = c->t0, n = c->n;
    for (int64_t o = o0; o < o1; o++) {
        float *yr = c->y + (c->b * p->cout + c->g * cog + o) * lout;
        for (int64_t k = 0; k < K; k++) {
            const float *cr = c->col + (o * K + k) * n;
            int64_t off = t0 * s + k - pad; /* output index = j·s + off */
            int64_t j0 = off >= 0 ? 0 : (-off + s - 1) / s;
            int64_t j1 = lout - off <= 0 ? 0 : (lout - off - 1) / s + 1;
            if (j1 > n) j1 = n;
            for (int64_t j = j0; j < j1; j++) yr[j * s + off] += cr[j];
        }
    }
}

void vx_convtr1d(float *y, const float *x, int64_t B, int64_t lin, const vx_convtr1d_params *p, const vx_mat *w,
                 const float *bias, int nthreads) {
    if (nthreads < 1) nthreads = 1;
    const int64_t lout = vx_convtr1d_out_len(p, lin);
    if (lout <= 0 || B <= 0) return;
    const int64_t G = p->groups, cig = p->cin / G, cog = p->cout / G;
    const int64_t rows = cog * p->k;

    /* y starts as the bias */
    for (int64_t bo = 0; bo < B * p->cout; bo++) {
        float b0 = bias ? bias[bo % p->cout] : 0.0f;
        float *yr = y + bo * lout;
        for (int64_t u = 0; u < lout; u++) yr[u] = b0;
    }
    const int64_t tile = clamp_tile(rows, lin);
    const int64_t ntiles = (lin + tile - 1) / tile;
    float *wown = NULL;
    const float *W = weights_f32(w, &wown);
    float *col = W ? malloc((size_t)(rows * tile) * sizeof(float)) : NULL;
    if (!col) {
        free(wown);
        convtr1d_direct(y, x, B, lin, lout, p, w, nthreads);
        return;
    }
    for (int64_t b = 0; b < B; b++)
        for (int64_t g = 0; g < G; g++)
            for (int64_t ti = 0; ti < ntiles; ti++) {
                int64_t t0 = ti * tile, n = lin - t0 < tile ? lin - t0 : tile;
                const float *xg = x + (b * p->cin + g * cig) * lin + t0;
                /* col[o·K + k][j] = Σ_c W[g·cig + c][o·K + k] · x[g·cig + c][t0 + j] */
                vx_gemm_f32(1, 0, rows, n, cig, 1.0f, W + g * cig * rows, rows, xg, lin, 0.0f, col, n, nthreads);
                /* overlap-add; channels are independent */
                convtr_job add = {.y = y, .lout = lout, .p = p, .col = col, .b = b, .g = g, .t0 = t0, .n = n};
                vx_pool_for(rows * n > 16384 ? nthreads : 1, cog, 1, convtr1d_add_rows, &add);
            }
    free(col);
    free(wown);
}
