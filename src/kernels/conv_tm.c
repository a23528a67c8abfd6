/* Time-major 1-D convolutions on zero-margined activations (conv.h, "time-major" section).
 *
 * With x[t][c] rows, tap j of a Conv1d reads the rows t·s + j·d − pad: a row-offset view of x. So
 *   dilation 1, ldx = cin: the taps of one output row are k·cin consecutive floats, i.e. the
 *                im2col matrix is x itself with lda = s·ldx — one GEMM with K = k·cin;
 *   otherwise:   one GEMM per tap (K = cin) accumulating into y (beta = 1).
 * Either way nothing is copied: the packed GEMM (gemm_packed.c) reads A rows straight from x, and
 * the weights are the B operand in a linear layer's layout (rows = cout, W[o][j·cin + c]), in any of
 * F32/BF16/F16, so a model can keep them as bf16. Rows outside [0, lin) are never special-cased:
 * the caller keeps them zero (margins), which is what zero padding means.
 * ConvTranspose1d is one GEMM per tap whose output rows are strided by s (ldc = s·ldy), on top of y
 * filled with the bias.
 * Where the packed GEMM cannot run (no AVX-512, or no scratch memory), each tap goes through
 * vx_gemm_f32 with f32 weights, and if even that copy cannot be allocated, a direct loop. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "base/pool.h"
#include "kernels/conv.h"
#include "kernels/isa.h"

static size_t dt_size(vx_dtype dt) { return dt == VX_F32 ? 4 : 2; }

static float w_at(const vx_mat *w, int64_t i) {
    switch (w->dtype) {
    case VX_F16: return vx_f16_to_f32(((const uint16_t *)w->data)[i]);
    case VX_BF16: return vx_bf16_to_f32(((const uint16_t *)w->data)[i]);
    default: return ((const float *)w->data)[i];
    }
}

/* Lazily converted f32 copy of w for the fallback paths (NULL when it cannot be allocated). */
typedef struct wf32 {
    const vx_mat *w;
    float *own;
    const float *f;
    int tried;
} wf32;

static pthread_mutex_t wf32_lock = PTHREAD_MUTEX_INITIALIZER;

static const float *wf32_get(wf32 *c) {
    const float *f;
    pthread_mutex_lock(&wf32_lock);
    {
        if (!c->tried) {
            if (c->w->dtype == VX_F32) {
                c->f = (const float *)c->w->data;
            } else {
                size_t n = (size_t)(c->w->rows * c->w->cols);
                c->own = malloc(n * sizeof(float));
                if (c->own) vx_to_f32(c->own, c->w->data, c->w->dtype, n);
                c->f = c->own;
            }
            c->tried = 1;
        }
        f = c->f;
    }
    pthread_mutex_unlock(&wf32_lock);
    return f;
}

/* Below AVX-512 every tap takes the fallback: make its f32 copy up front, once, rather than under
 * the lock in the threads (on AVX-512 only a failed scratch allocation gets there). */
static void wf32_get_if_needed(int isa, wf32 *c) {
    if (!vx_gemm_packed_supported(isa, 0)) (void)wf32_get(c);
}

typedef struct {
    float *C;
    const float *A, *bias;
    const vx_mat *w;
    int64_t N, K, lda, ldc, b_off, ldb;
    float beta;
} tap_job;

/* rows [m0, m1) of C = beta·C + bias */
static void bias_rows(void *ctx, int64_t m0, int64_t m1) {
    const tap_job *j = ctx;
    for (int64_t m = m0; m < m1; m++)
        for (int64_t n = 0; n < j->N; n++) j->C[m * j->ldc + n] = j->beta * j->C[m * j->ldc + n] + j->bias[n];
}

/* rows [m0, m1) of the direct product */
static void direct_rows(void *ctx, int64_t m0, int64_t m1) {
    const tap_job *j = ctx;
    for (int64_t m = m0; m < m1; m++)
        for (int64_t n = 0; n < j->N; n++) {
            float s = 0.0f;
            for (int64_t q = 0; q < j->K; q++) s += j->A[m * j->lda + q] * w_at(j->w, j->b_off + n * j->ldb + q);
            j->C[m * j->ldc + n] =
                (j->beta != 0.0f ? j->beta * j->C[m * j->ldc + n] : 0.0f) + (j->bias ? j->bias[n] : 0.0f) + s;
        }
}

/* One product C[M][N] (ldc) = beta·C + bias + A[M][K] (lda) · Bᵀ where B = W rows of ldb entries starting
 * at entry b_off. Packed GEMM first; then vx_gemm_f32; then a direct loop. */
static void tap_gemm(int isa, int64_t M, int64_t N, int64_t K, const float *A, int64_t lda, wf32 *wc, int64_t b_off,
                     int64_t ldb, float beta, float *C, int64_t ldc, const float *bias, int nthreads) {
    if (M <= 0 || N <= 0) return;
    const vx_mat *w = wc->w;
    int bf16 = w->act_bf16 && vx_gemm_packed_supported(isa, 1);
    const void *B = (const char *)w->data + (size_t)b_off * dt_size(w->dtype);
    if (vx_gemm_packed_supported(isa, bf16) &&
        vx_gemm_packed(isa, 0, 1, M, N, K, 1.0f, A, lda, B, w->dtype, ldb, beta, C, ldc, bias, bf16, nthreads))
        return;
    const float *W = lda >= K ? wf32_get(wc) : NULL; /* BLAS refuses overlapping rows (lda < K) */
    tap_job j = {C, A, bias, w, N, K, lda, ldc, b_off, ldb, beta};
    if (W) {
        if (bias) {
            vx_pool_for(M * N > 65536 ? nthreads : 1, M, 1, bias_rows, &j);
            beta = 1.0f;
        }
        vx_gemm_f32(0, 1, M, N, K, 1.0f, A, lda, W + b_off, ldb, beta, C, ldc, nthreads);
        return;
    }
    vx_pool_for(nthreads, M, 1, direct_rows, &j);
}

static void snake_rows(int isa, float *y, int64_t ldy, const float *x, int64_t ldx, const float *alpha,
                       const float *inv, int64_t rows, int64_t ch);

typedef struct {
    int isa, whole, inner;
    float *y, *z;
    const float *x, *bias, *alpha, *inv;
    int64_t ldy, ldx, ldz, lout, cin, cout, k, stride, dil, pad, blk;
    wf32 *wc;
    float beta0;
} conv_tm_job;

/* Output rows block b: its taps in sequence, then the Snake epilogue. */
static void conv_tm_block(void *ctx, int64_t b) {
    const conv_tm_job *c = ctx;
    const int isa = c->isa;
    const int64_t ldx = c->ldx, ldy = c->ldy, cin = c->cin, cout = c->cout, k = c->k, pad = c->pad;
    const int64_t t0 = b * c->blk, m = c->lout - t0 < c->blk ? c->lout - t0 : c->blk;
    const float *xb = c->x + t0 * c->stride * ldx;
    float *yb = c->y + t0 * ldy;
    if (c->whole) {
        tap_gemm(isa, m, cout, k * cin, xb - pad * ldx, c->stride * ldx, c->wc, 0, k * cin, c->beta0, yb, ldy, c->bias,
                 c->inner);
    } else {
        for (int64_t j = 0; j < k; j++)
            tap_gemm(isa, m, cout, cin, xb + (j * c->dil - pad) * ldx, c->stride * ldx, c->wc, j * cin, k * cin,
                     j ? 1.0f : c->beta0, yb, ldy, j ? NULL : c->bias, c->inner);
    }
    /* Snake epilogue on the block's rows while they are in cache */
    if (c->alpha) snake_rows(isa, c->z + t0 * c->ldz, c->ldz, yb, ldy, c->alpha, c->inv, m, cout);
}

static void conv_tm(int isa, float *y, int64_t ldy, const float *x, int64_t ldx, int64_t lout, int64_t cin,
                    int64_t cout, int64_t k, int64_t stride, int64_t dil, int64_t pad, const vx_mat *w,
                    const float *bias, int accumulate, const float *alpha, const float *inv, float *z, int64_t ldz,
                    int nthreads) {
    if (lout <= 0 || cout <= 0) return;
    if (nthreads < 1) nthreads = 1;
    wf32 wc = {w, NULL, NULL, 0};
    const float beta0 = accumulate ? 1.0f : 0.0f;
    /* one GEMM over all taps where the packed GEMM reads the overlapping rows (below AVX-512 the
     * taps go one by one: BLAS wants lda ≥ K) */
    const int whole = k == 1 || (dil == 1 && ldx == cin && vx_gemm_packed_supported(isa, 0));
    /* Output rows in blocks, each block's taps in sequence on one thread: the block's input rows
     * (and its output rows, which every tap adds to) stay in L2 across the taps instead of
     * streaming the whole sequence from memory once per tap. ~256 KiB of input or output rows per
     * block (a multiple of the GEMM's 14-row tile), at least one block per thread, and at least 672
     * rows: every block packs the weights again, which costs about 1/rows of the multiplies. */
    const int64_t wid = (cin * stride > cout ? cin * stride : cout) * (int64_t)sizeof(float);
    int64_t blk = (256 * 1024 / wid) / 14 * 14;
    if (blk < 672) blk = 672;
    int64_t nblk = (lout + blk - 1) / blk;
    if (nblk < nthreads) nblk = nthreads;
    nblk = (nblk + nthreads - 1) / nthreads * nthreads;
    blk = (lout + nblk - 1) / nblk;
    nblk = (lout + blk - 1) / blk;
    wf32_get_if_needed(isa, &wc); /* the fallback's f32 copy, made once, before the threads */
    /* short sequences (one block): threads inside the GEMM */
    conv_tm_job job = {.isa = isa, .whole = whole, .inner = nblk < nthreads ? nthreads : 1, .y = y, .z = z, .x = x,
                       .bias = bias, .alpha = alpha, .inv = inv, .ldy = ldy, .ldx = ldx, .ldz = ldz, .lout = lout,
                       .cin = cin, .cout = cout, .k = k, .stride = stride, .dil = dil, .pad = pad, .blk = blk,
                       .wc = &wc, .beta0 = beta0};
    vx_pool_run(nthreads, nblk, conv_tm_block, &job);
    free(wc.own);
}

void vx_conv1d_tm_margin_isa(int isa, float *y, int64_t ldy, const float *x, int64_t ldx, int64_t lout,
                             int64_t cin, int64_t cout, int64_t k, int64_t stride, int64_t dil, int64_t pad,
                             const vx_mat *w, const float *bias, int accumulate, int nthreads) {
    conv_tm(isa, y, ldy, x, ldx, lout, cin, cout, k, stride, dil, pad, w, bias, accumulate, NULL, NULL, NULL, 0,
            nthreads);
}

void vx_conv1d_tm_snake_isa(int isa, float *y, int64_t ldy, const float *x, int64_t ldx, int64_t lout, int64_t cin,
                            int64_t cout, int64_t k, int64_t stride, int64_t dil, int64_t pad, const vx_mat *w,
                            const float *bias, int accumulate, const float *alpha, const float *inv, float *z,
                            int64_t ldz, int nthreads) {
    conv_tm(isa, y, ldy, x, ldx, lout, cin, cout, k, stride, dil, pad, w, bias, accumulate, alpha, inv, z, ldz,
            nthreads);
}

void vx_conv1d_tm_snake(float *y, int64_t ldy, const float *x, int64_t ldx, int64_t lout, int64_t cin, int64_t cout,
                        int64_t k, int64_t stride, int64_t dil, int64_t pad, const vx_mat *w, const float *bias,
                        int accumulate, const float *alpha, const float *inv, float *z, int64_t ldz, int nthreads) {
    conv_tm(vx_cpu_isa(), y, ldy, x, ldx, lout, cin, cout, k, stride, dil, pad, w, bias, accumulate, alpha, inv, z,
            ldz, nthreads);
}

int64_t vx_convtr1d_tm_out_len(int64_t lin, int64_t k, int64_t stride, int64_t pad) {
    int64_t n = (lin - 1) * stride - 2 * pad + k;
    return lin > 0 && n > 0 ? n : 0;
}

/* rows [u0, u1) of C = bias (or 0) */
static void fill_rows(void *ctx, int64_t u0, int64_t u1) {
    const tap_job *j = ctx;
    for (int64_t u = u0; u < u1; u++)
        for (int64_t o = 0; o < j->N; o++) j->C[u * j->ldc + o] = j->bias ? j->bias[o] : 0.0f;
}

void vx_convtr1d_tm_isa(int isa, float *y, int64_t ldy, const float *x, int64_t ldx, int64_t lin, int64_t cin,
                        int64_t cout, int64_t k, int64_t stride, int64_t pad, const vx_mat *w, const float *bias,
                        int nthreads) {
    const int64_t lout = vx_convtr1d_tm_out_len(lin, k, stride, pad);
    if (lout <= 0 || cout <= 0) return;
    if (nthreads < 1) nthreads = 1;
    tap_job fill = {.C = y, .bias = bias, .N = cout, .ldc = ldy};
    vx_pool_for(lout * cout > 65536 ? nthreads : 1, lout, 1, fill_rows, &fill);
    wf32 wc = {w, NULL, NULL, 0};
    for (int64_t j = 0; j < k; j++) {
        /* output row u = t·s + j − pad ∈ [0, lout) */
        int64_t t0 = pad - j <= 0 ? 0 : (pad - j + stride - 1) / stride;
        int64_t t1 = lout - 1 - j + pad < 0 ? 0 : (lout - 1 - j + pad) / stride + 1;
        if (t1 > lin) t1 = lin;
        if (t1 <= t0) continue;
        tap_gemm(isa, t1 - t0, cout, cin, x + t0 * ldx, ldx, &wc, j * cout * cin, cin, 1.0f,
                 y + (t0 * stride + j - pad) * ldy, stride * ldy, NULL, nthreads);
    }
    free(wc.own);
}

void vx_conv1d_tm_margin(float *y, int64_t ldy, const float *x, int64_t ldx, int64_t lout, int64_t cin,
                         int64_t cout, int64_t k, int64_t stride, int64_t dil, int64_t pad, const vx_mat *w,
                         const float *bias, int accumulate, int nthreads) {
    vx_conv1d_tm_margin_isa(vx_cpu_isa(), y, ldy, x, ldx, lout, cin, cout, k, stride, dil, pad, w, bias, accumulate,
                            nthreads);
}

void vx_convtr1d_tm(float *y, int64_t ldy, const float *x, int64_t ldx, int64_t lin, int64_t cin, int64_t cout,
                    int64_t k, int64_t stride, int64_t pad, const vx_mat *w, const float *bias, int nthreads) {
    vx_convtr1d_tm_isa(vx_cpu_isa(), y, ldy, x, ldx, lin, cin, cout, k, stride, pad, w, bias, nthreads);
}

/* ---- Snake, time-major: vx_snake's sin (isa.h vx_sin_ref: Cody–Waite reduction, odd polynomial to r^15).
 * The scalar level does the float operations of vx_snake in the same order without fused
 * multiply-adds (bit-identical to it); the AVX-512 level fuses them. ---- */
static float snake1(float x, float a, float inv) {
    const float s = vx_sin_ref(x * a);
    return x + inv * (s * s);
}

/* AVX-512: the same reduction and polynomial with fused multiply-adds (22 instead of 34 operations
 * per vector); within ~2 ulp of vx_snake's sin, not bit-identical to it. */
static VX_TARGET_AVX512 void snake_row5(float *y, const float *x, const float *alpha, const float *inv, int64_t n) {
    const __m512 inv_pi = _mm512_set1_ps(0.318309886183790671538f), shifter = _mm512_set1_ps(12582912.0f),
                 qmax = _mm512_set1_ps(4194304.0f), qmin = _mm512_set1_ps(-4194304.0f);
    for (int64_t c = 0; c < n; c += 16) {
        __mmask16 m = n - c >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (n - c)) - 1);
        __m512 xv = _mm512_maskz_loadu_ps(m, x + c);
        __m512 z = _mm512_mul_ps(xv, _mm512_maskz_loadu_ps(m, alpha + c));
        __m512 q = _mm512_sub_ps(_mm512_fmadd_ps(z, inv_pi, shifter), shifter);
        q = _mm512_max_ps(_mm512_min_ps(q, qmax), qmin);
        __m512 r = _mm512_fnmadd_ps(q, _mm512_set1_ps(SIN_C1), z);
        r = _mm512_fnmadd_ps(q, _mm512_set1_ps(SIN_C2), r);
        r = _mm512_fnmadd_ps(q, _mm512_set1_ps(SIN_C3), r);
        __m512 r2 = _mm512_mul_ps(r, r);
        __m512 p = _mm512_fmadd_ps(_mm512_set1_ps(-7.6471637318198164759e-13f), r2, _mm512_set1_ps(1.6059043836821614599e-10f));
        p = _mm512_fmadd_ps(p, r2, _mm512_set1_ps(-2.5052108385441718775e-8f));
        p = _mm512_fmadd_ps(p, r2, _mm512_set1_ps(2.7557319223985890653e-6f));
        p = _mm512_fmadd_ps(p, r2, _mm512_set1_ps(-1.9841269841269841270e-4f));
        p = _mm512_fmadd_ps(p, r2, _mm512_set1_ps(8.3333333333333333333e-3f));
        p = _mm512_fmadd_ps(p, r2, _mm512_set1_ps(-1.6666666666666666667e-1f));
        __m512 s = _mm512_fmadd_ps(_mm512_mul_ps(r, r2), p, r);
        __m512i odd = _mm512_slli_epi32(_mm512_cvttps_epi32(q), 31);
        s = _mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512(s), odd));
        __m512 vinv = _mm512_maskz_loadu_ps(m, inv + c);
        _mm512_mask_storeu_ps(y + c, m, _mm512_fmadd_ps(vinv, _mm512_mul_ps(s, s), xv));
    }
}

void vx_snake_inv(float *inv, const float *alpha, int64_t ch) {
    for (int64_t c = 0; c < ch; c++) inv[c] = 1.0f / (alpha[c] + 1e-9f);
}

static void snake_rows(int isa, float *y, int64_t ldy, const float *x, int64_t ldx, const float *alpha,
                       const float *inv, int64_t rows, int64_t ch) {
    for (int64_t t = 0; t < rows; t++) {
        if (isa >= VX_ISA_AVX512) {
            snake_row5(y + t * ldy, x + t * ldx, alpha, inv, ch);
        } else {
            for (int64_t c = 0; c < ch; c++) y[t * ldy + c] = snake1(x[t * ldx + c], alpha[c], inv[c]);
        }
    }
}

typedef struct {
    int isa;
    float *y;
    const float *x, *alpha, *inv;
    int64_t ldy, ldx, ch;
} snake_job;

static void snake_chunk(void *ctx, int64_t t0, int64_t t1) {
    const snake_job *j = ctx;
    snake_rows(j->isa, j->y + t0 * j->ldy, j->ldy, j->x + t0 * j->ldx, j->ldx, j->alpha, j->inv, t1 - t0, j->ch);
}

void vx_snake_tm_isa(int isa, float *y, int64_t ldy, const float *x, int64_t ldx, const float *alpha,
                     const float *inv, int64_t rows, int64_t ch, int nthreads) {
    snake_job j = {isa, y, x, alpha, inv, ldy, ldx, ch};
    vx_pool_for(rows * ch > 32768 ? nthreads : 1, rows, 1, snake_chunk, &j);
}

void vx_snake_tm(float *y, int64_t ldy, const float *x, int64_t ldx, const float *alpha, const float *inv,
                 int64_t rows, int64_t ch, int nthreads) {
    vx_snake_tm_isa(vx_cpu_isa(), y, ldy, x, ldx, alpha, inv, rows, ch, nthreads);
}
