#include "kernels/ops_extra.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "base/pool.h"
#include "kernels/isa.h"

/* Mish: tanh(ln(1 + e)) = ((1 + e)² − 1) / ((1 + e)² + 1) = m / (m + 2) with m = e·(e + 2):
 * one exp instead of exp + log1p + tanh; from 20 on the factor is 1 in float. */
static void mish_1(float *x, int64_t n) {
    for (int64_t i = 0; i < n; i++) {
        float v = x[i];
        if (v < 20.0f) {
            float e = expf(v);
            float m = e * (e + 2.0f);
            x[i] = v * m / (m + 2.0f);
        }
    }
}

static VX_TARGET_AVX512 void mish_5(float *x, int64_t n) {
    const __m512 two = _mm512_set1_ps(2.0f), lim = _mm512_set1_ps(20.0f);
    for (int64_t i = 0; i < n; i += 16) {
        __mmask16 m = n - i >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (n - i)) - 1);
        __m512 v = _mm512_maskz_loadu_ps(m, x + i);
        __m512 e = vx_exp512(v);
        __m512 mm = _mm512_mul_ps(e, _mm512_add_ps(e, two));
        __m512 r = _mm512_div_ps(_mm512_mul_ps(v, mm), _mm512_add_ps(mm, two));
        r = _mm512_mask_mov_ps(r, _mm512_cmp_ps_mask(v, lim, _CMP_GE_OQ), v);
        _mm512_mask_storeu_ps(x + i, m, r);
    }
}

void vx_mish_isa(int isa, float *x, int64_t n) {
    if (isa >= VX_ISA_AVX512)
        mish_5(x, n);
    else
        mish_1(x, n);
}

void vx_mish(float *x, int64_t n) { vx_mish_isa(vx_cpu_isa(), x, n); }

/* ---- fused row ops around LayerNorm (residual, bias, Mish) ----
 * The scalar level is vx_layernorm itself (double sums); AVX-512 sums in
 * float lanes (16 interleaved partial sums, like a pairwise sum). */

static VX_TARGET_AVX512 void ln_row_5(float *y, const float *x, const float *w, const float *b, int64_t dim,
                                      float eps) {
    __m512 s = _mm512_setzero_ps();
    for (int64_t i = 0; i < dim; i += 16) {
        __mmask16 m = dim - i >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (dim - i)) - 1);
        s = _mm512_add_ps(s, _mm512_maskz_loadu_ps(m, x + i));
    }
    const float mu = vx_hsum512(s) / (float)dim;
    const __m512 vmu = _mm512_set1_ps(mu);
    __m512 ss = _mm512_setzero_ps();
    for (int64_t i = 0; i < dim; i += 16) {
        __mmask16 m = dim - i >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (dim - i)) - 1);
        __m512 d = _mm512_maskz_sub_ps(m, _mm512_maskz_loadu_ps(m, x + i), vmu);
        ss = _mm512_fmadd_ps(d, d, ss);
    }
    const __m512 rstd = _mm512_set1_ps(1.0f / sqrtf(vx_hsum512(ss) / (float)dim + eps));
    for (int64_t i = 0; i < dim; i += 16) {
        __mmask16 m = dim - i >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (dim - i)) - 1);
        __m512 h = _mm512_mul_ps(_mm512_sub_ps(_mm512_maskz_loadu_ps(m, x + i), vmu), rstd);
        if (w) h = _mm512_mul_ps(h, _mm512_maskz_loadu_ps(m, w + i));
        if (b) h = _mm512_add_ps(h, _mm512_maskz_loadu_ps(m, b + i));
        _mm512_mask_storeu_ps(y + i, m, h);
    }
}

static void ln_row(int isa, float *y, const float *x, const float *w, const float *b, int64_t dim, float eps) {
    if (isa >= VX_ISA_AVX512)
        ln_row_5(y, x, w, b, dim, eps);
    else
        vx_layernorm(y, x, w, b, 1, dim, eps);
}

void vx_residual_layernorm_isa(int isa, float *h, const float *t, const float *bias, float *y, const float *w,
                               const float *b, int64_t rows, int64_t dim, float eps) {
    for (int64_t r = 0; r < rows; r++) {
        float *hr = h + r * dim;
        if (t) {
            const float *tr = t + r * dim;
            if (bias)
                for (int64_t i = 0; i < dim; i++) hr[i] = hr[i] + (tr[i] + bias[i]);
            else
                for (int64_t i = 0; i < dim; i++) hr[i] = hr[i] + tr[i];
        }
        if (y) ln_row(isa, y + r * dim, hr, w, b, dim, eps);
    }
}

void vx_residual_layernorm(float *h, const float *t, const float *bias, float *y, const float *w, const float *b,
                           int64_t rows, int64_t dim, float eps) {
    vx_residual_layernorm_isa(vx_cpu_isa(), h, t, bias, y, w, b, rows, dim, eps);
}

void vx_layernorm_mish_isa(int isa, float *y, float *x, const float *bias, const float *w, const float *b,
                           const float *add, int64_t rows, int64_t dim, float eps) {
    for (int64_t r = 0; r < rows; r++) {
        float *xr = x + r * dim, *yr = y + r * dim;
        if (bias)
            for (int64_t i = 0; i < dim; i++) xr[i] += bias[i];
        ln_row(isa, yr, xr, w, b, dim, eps);
        vx_mish_isa(isa, yr, dim);
        if (add)
            for (int64_t i = 0; i < dim; i++) yr[i] += add[i];
    }
}

void vx_layernorm_mish(float *y, float *x, const float *bias, const float *w, const float *b, const float *add,
                       int64_t rows, int64_t dim, float eps) {
    vx_layernorm_mish_isa(vx_cpu_isa(), y, x, bias, w, b, add, rows, dim, eps);
}

/* ---- Snake: y = x + sin²(α·x) / (α + 1e-9) ----
 * sin(x) for |x| < ~1e6 (bounded garbage beyond), without libm: x = q·π + r, |r| ≤ π/2, Cody–Waite
 * reduction with a 3-part π, odd Taylor polynomial to r¹⁵ (error < 1 ulp of the result on
 * |r| ≤ π/2 before rounding), sign (−1)^q. Max error ≈ 2 ulp for the magnitudes Snake sees.
 * The SIMD variants do the same float operations in the same order (no fused multiply-add), so
 * all levels give bit-identical results. */
static void snake_1(float *y, const float *x, float a, float inv, int64_t n) {
    for (int64_t t = 0; t < n; t++) {
        float s = vx_sin_ref(x[t] * a);
        y[t] = x[t] + inv * (s * s);
    }
}

static VX_TARGET_AVX512 void snake_5(float *y, const float *x, float a, float inv, int64_t n) {
    const __m512 va = _mm512_set1_ps(a), vinv = _mm512_set1_ps(inv), inv_pi = _mm512_set1_ps(0.318309886183790671538f),
                 shifter = _mm512_set1_ps(12582912.0f), qmax = _mm512_set1_ps(4194304.0f),
                 qmin = _mm512_set1_ps(-4194304.0f);
    for (int64_t t = 0; t < n; t += 16) {
        __mmask16 m = n - t >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (n - t)) - 1);
        __m512 xv = _mm512_maskz_loadu_ps(m, x + t);
        __m512 z = _mm512_mul_ps(xv, va);
        __m512 q = _mm512_sub_ps(_mm512_add_ps(_mm512_mul_ps(z, inv_pi), shifter), shifter);
        q = _mm512_max_ps(_mm512_min_ps(q, qmax), qmin);
        __m512 r = _mm512_sub_ps(z, _mm512_mul_ps(q, _mm512_set1_ps(SIN_C1)));
        r = _mm512_sub_ps(r, _mm512_mul_ps(q, _mm512_set1_ps(SIN_C2)));
        r = _mm512_sub_ps(r, _mm512_mul_ps(q, _mm512_set1_ps(SIN_C3)));
        __m512 r2 = _mm512_mul_ps(r, r), p;
        SIN_P(_mm512_mul_ps, _mm512_add_ps, _mm512_sub_ps, _mm512_set1_ps, p, r2);
        __m512 s = _mm512_add_ps(r, _mm512_mul_ps(_mm512_mul_ps(r, r2), p));
        __m512i odd = _mm512_slli_epi32(_mm512_cvttps_epi32(q), 31); /* (q & 1) → sign bit */
        s = _mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512(s), odd));
        _mm512_mask_storeu_ps(y + t, m, _mm512_add_ps(xv, _mm512_mul_ps(vinv, _mm512_mul_ps(s, s))));
    }
}

static VX_TARGET_AVX2 void snake_2(float *y, const float *x, float a, float inv, int64_t n) {
    const __m256 va = _mm256_set1_ps(a), vinv = _mm256_set1_ps(inv), inv_pi = _mm256_set1_ps(0.318309886183790671538f),
                 shifter = _mm256_set1_ps(12582912.0f), qmax = _mm256_set1_ps(4194304.0f),
                 qmin = _mm256_set1_ps(-4194304.0f);
    int64_t t = 0;
    for (; t + 8 <= n; t += 8) {
        __m256 xv = _mm256_loadu_ps(x + t);
        __m256 z = _mm256_mul_ps(xv, va);
        __m256 q = _mm256_sub_ps(_mm256_add_ps(_mm256_mul_ps(z, inv_pi), shifter), shifter);
        q = _mm256_max_ps(_mm256_min_ps(q, qmax), qmin);
        __m256 r = _mm256_sub_ps(z, _mm256_mul_ps(q, _mm256_set1_ps(SIN_C1)));
        r = _mm256_sub_ps(r, _mm256_mul_ps(q, _mm256_set1_ps(SIN_C2)));
        r = _mm256_sub_ps(r, _mm256_mul_ps(q, _mm256_set1_ps(SIN_C3)));
        __m256 r2 = _mm256_mul_ps(r, r), p;
        SIN_P(_mm256_mul_ps, _mm256_add_ps, _mm256_sub_ps, _mm256_set1_ps, p, r2);
        __m256 s = _mm256_add_ps(r, _mm256_mul_ps(_mm256_mul_ps(r, r2), p));
        __m256i odd = _mm256_slli_epi32(_mm256_cvttps_epi32(q), 31);
        s = _mm256_castsi256_ps(_mm256_xor_si256(_mm256_castps_si256(s), odd));
        _mm256_storeu_ps(y + t, _mm256_add_ps(xv, _mm256_mul_ps(vinv, _mm256_mul_ps(s, s))));
    }
    snake_1(y + t, x + t, a, inv, n - t);
}
#undef SIN_P

void vx_snake_isa(int isa, float *y, const float *x, const float *alpha, int64_t ch, int64_t len) {
    for (int64_t c = 0; c < ch; c++) {
        const float a = alpha[c], inv = 1.0f / (a + 1e-9f);
        if (isa >= VX_ISA_AVX512)
            snake_5(y + c * len, x + c * len, a, inv, len);
        else if (isa >= VX_ISA_AVX2)
            snake_2(y + c * len, x + c * len, a, inv, len);
        else
            snake_1(y + c * len, x + c * len, a, inv, len);
    }
}

void vx_snake(float *y, const float *x, const float *alpha, int64_t ch, int64_t len) {
    vx_snake_isa(vx_cpu_isa(), y, x, alpha, ch, len);
}

void vx_leaky_relu(float *x, int64_t n, float slope) {
    for (int64_t i = 0; i < n; i++)
        if (x[i] < 0.0f) x[i] *= slope;
}

void vx_transpose(float *dst, const float *src, int64_t rows, int64_t cols) {
    enum { BS = 32 };
    for (int64_t r0 = 0; r0 < rows; r0 += BS)
        for (int64_t c0 = 0; c0 < cols; c0 += BS) {
            int64_t r1 = r0 + BS < rows ? r0 + BS : rows, c1 = c0 + BS < cols ? c0 + BS : cols;
            for (int64_t r = r0; r < r1; r++)
                for (int64_t c = c0; c < c1; c++) dst[c * rows + r] = src[r * cols + c];
        }
}

int64_t vx_conv1d_tm_out_len(int64_t lin, int64_t k, int64_t dil, int64_t pad_left, int64_t pad_right) {
    return lin + pad_left + pad_right - dil * (k - 1);
}

typedef struct {
    float *col;
    const float *x;
    int64_t lin, lout, cin, k, dil, pad_left;
} im2col_tm_job;

/* rows [r0, r1) of col viewed as [B·lout][cin·k] */
static void im2col_tm_rows(void *ctx, int64_t r0, int64_t r1) {
    const im2col_tm_job *c = ctx;
    const int64_t lin = c->lin, lout = c->lout, cin = c->cin, k = c->k, ck = cin * k;
    for (int64_t bt = r0; bt < r1; bt++) {
        const int64_t b = bt / lout, t = bt % lout;
        float *dst = c->col + bt * ck;
        for (int64_t j = 0; j < k; j++) {
            int64_t s = t + j * c->dil - c->pad_left;
            if (s < 0 || s >= lin) {
                for (int64_t ci = 0; ci < cin; ci++) dst[ci * k + j] = 0.0f;
            } else {
                const float *src = c->x + (b * lin + s) * cin;
                for (int64_t ci = 0; ci < cin; ci++) dst[ci * k + j] = src[ci];
            }
        }
    }
}

void vx_conv1d_tm(float *y, const float *x, int64_t B, int64_t lin, int64_t cin, int64_t k, int64_t dil,
                  int64_t pad_left, int64_t pad_right, const vx_mat *w, const float *bias, float *col,
                  int nthreads) {
    int64_t lout = vx_conv1d_tm_out_len(lin, k, dil, pad_left, pad_right);
    int64_t ck = cin * k;
    if (k == 1 && pad_left == 0 && pad_right == 0) {
        /* pointwise: the input already is the im2col matrix */
        vx_linear(y, x, B * lin, w, bias, nthreads);
        return;
    }
    /* col[b][t][ci·k + j] = x[b][t + j·dil − pad_left][ci]  (weight column order ci·k + j) */
    im2col_tm_job ic = {col, x, lin, lout, cin, k, dil, pad_left};
    vx_pool_for(B * lout * ck > 65536 ? nthreads : 1, B * lout, 1, im2col_tm_rows, &ic);
    vx_linear(y, col, B * lout, w, bias, nthreads);
}

enum { RELPOS_BLOCK = 64 };

static int64_t relpos_block(int64_t L) { return L < RELPOS_BLOCK ? L : RELPOS_BLOCK; }

int64_t vx_relpos_attention_scratch(int64_t L, int64_t dk, int nthreads) {
    int64_t R = relpos_block(L);
    return (nthreads < 1 ? 1 : nthreads) * (2 * R * dk + R * L + R * (L + R - 1));
}

typedef struct {
    float *out, *scratch;
    const float *q, *k, *v, *p, *pos_u, *pos_v;
    int64_t L, RB, per;
    int H, dk;
} relpos_job;

/* Work item it = (head, block of RB query rows), in the slot's scratch; GEMMs single-threaded. */
static void relpos_item(void *ctx, int64_t it) {
    const relpos_job *c = ctx;
    const int64_t L = c->L, RB = c->RB, HD = (int64_t)c->H * c->dk;
    const int H = c->H, dk = c->dk;
    const float sq = sqrtf((float)dk);
    float *qu = c->scratch + (int64_t)vx_pool_slot() * c->per;
    float *qv = qu + RB * dk, *ac = qv + RB * dk, *bd = ac + RB * L;
    const int h = (int)(it % H);
    const int64_t i0 = it / H * RB, R = i0 + RB <= L ? RB : L - i0, i1 = i0 + R;
    const float *u = c->pos_u + (int64_t)h * dk, *w = c->pos_v + (int64_t)h * dk;
    for (int64_t r = 0; r < R; r++) {
        const float *qi = c->q + (i0 + r) * HD + (int64_t)h * dk;
        for (int d = 0; d < dk; d++) {
            qu[r * dk + d] = qi[d] + u[d];
            qv[r * dk + d] = qi[d] + w[d];
        }
    }
    /* ac[r][j] = (q_i + u)·k_j          [R][L] */
    vx_gemm_f32(0, 1, R, L, dk, 1.0f, qu, dk, c->k + (int64_t)h * dk, HD, 0.0f, ac, L, 1);
    /* Rows i0..i1−1 need p rows c = L−1−i+j ∈ [L − i1, 2L − 2 − i0]: a window of W rows.
     * bd[r][c − c0] = (q_i + v)·p_c    [R][W] */
    const int64_t c0 = L - i1, W = L + R - 1;
    vx_gemm_f32(0, 1, R, W, dk, 1.0f, qv, dk, c->p + c0 * HD + (int64_t)h * dk, HD, 0.0f, bd, W, 1);
    for (int64_t r = 0; r < R; r++) {
        float *s = ac + r * L;
        const float *b = bd + r * W + (R - 1 - r); /* c − c0 = (L−1−i+j) − (L−i1) = R−1−r+j */
        for (int64_t j = 0; j < L; j++) s[j] = (s[j] + b[j]) / sq;
        vx_softmax(s, L);
    }
    /* out_i = Σ_j a_ij v_j              [R][dk] */
    vx_gemm_f32(0, 0, R, dk, L, 1.0f, ac, L, c->v + (int64_t)h * dk, HD, 0.0f, c->out + i0 * HD + (int64_t)h * dk,
                HD, 1);
}

void vx_relpos_attention(float *out, const float *q, const float *k, const float *v, const float *p,
                         const float *pos_u, const float *pos_v, int64_t L, int H, int dk, float *scratch,
                         int nthreads) {
    const int64_t HD = (int64_t)H * dk;
    const int64_t RB = relpos_block(L), nblk = (L + RB - 1) / RB;
    const int64_t per = 2 * RB * dk + RB * L + RB * (L + RB - 1);
    if (nthreads < 1) nthreads = 1;
    relpos_job c = {out, scratch, q, k, v, p, pos_u, pos_v, L, RB, per, H, dk};
    vx_pool_run((double)L * L * HD > 1e6 ? nthreads : 1, (int64_t)H * nblk, relpos_item, &c);
}
