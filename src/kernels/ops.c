/* Element-wise and row-wise ops. Scalar float32 code written to round the
 * way PyTorch's float32 kernels do (no hidden double math in the outputs);
 * only reductions use double accumulators, which lands closer to torch's
 * pairwise sums than a naive float loop. Softmax has SIMD variants because
 * attention leans on it. */
#include <math.h>

#include "kernels/isa.h"

void vx_rmsnorm(float *y, const float *x, const float *w, int64_t rows, int64_t dim, float eps) {
    for (int64_t r = 0; r < rows; r++) {
        const float *xr = x + r * dim;
        float *yr = y + r * dim;
        double ss = 0;
        for (int64_t i = 0; i < dim; i++) ss += (double)xr[i] * xr[i];
        float ms = (float)(ss / (double)dim);
        float inv = 1.0f / sqrtf(ms + eps);
        for (int64_t i = 0; i < dim; i++) {
            float h = xr[i] * inv;
            yr[i] = w ? w[i] * h : h;
        }
    }
}

void vx_layernorm(float *y, const float *x, const float *w, const float *b, int64_t rows, int64_t dim,
                  float eps) {
    for (int64_t r = 0; r < rows; r++) {
        const float *xr = x + r * dim;
        float *yr = y + r * dim;
        double s = 0, ss = 0;
        for (int64_t i = 0; i < dim; i++) s += xr[i];
        double mean = s / (double)dim;
        for (int64_t i = 0; i < dim; i++) ss += ((double)xr[i] - mean) * ((double)xr[i] - mean);
        float mu = (float)mean;
        float rstd = 1.0f / sqrtf((float)(ss / (double)dim) + eps);
        for (int64_t i = 0; i < dim; i++) {
            float h = (xr[i] - mu) * rstd;
            if (w) h *= w[i];
            if (b) h += b[i];
            yr[i] = h;
        }
    }
}

void vx_silu(float *x, int64_t n) {
    for (int64_t i = 0; i < n; i++) x[i] = x[i] / (1.0f + expf(-x[i]));
}

void vx_gelu(float *x, int64_t n) {
    for (int64_t i = 0; i < n; i++) x[i] = x[i] * 0.5f * (1.0f + erff(x[i] * (float)M_SQRT1_2));
}

void vx_gelu_tanh(float *x, int64_t n) {
    const float k = 0.7978845608028654f; /* sqrt(2/pi) */
    for (int64_t i = 0; i < n; i++) {
        float v = x[i];
        x[i] = 0.5f * v * (1.0f + tanhf(k * (v + 0.044715f * v * v * v)));
    }
}

void vx_swiglu(float *out, const float *gate, const float *up, int64_t n) {
    for (int64_t i = 0; i < n; i++) out[i] = gate[i] / (1.0f + expf(-gate[i])) * up[i];
}

void vx_add(float *y, const float *x, int64_t n) {
    for (int64_t i = 0; i < n; i++) y[i] += x[i];
}
void vx_scale(float *y, float s, int64_t n) {
    for (int64_t i = 0; i < n; i++) y[i] *= s;
}
void vx_axpy(float *y, float a, const float *x, int64_t n) {
    for (int64_t i = 0; i < n; i++) y[i] += a * x[i];
}

/* ---- softmax: max, exp(x − max) and its sum, then multiply by 1/sum.
 * A row that is all −inf (nothing to attend to) becomes all zeros. ---- */

static void softmax_scalar(float *x, int64_t n) {
    float mx = -INFINITY;
    for (int64_t i = 0; i < n; i++) mx = x[i] > mx ? x[i] : mx;
    if (mx == -INFINITY) {
        for (int64_t i = 0; i < n; i++) x[i] = 0.0f;
        return;
    }
    double s = 0;
    for (int64_t i = 0; i < n; i++) {
        x[i] = expf(x[i] - mx);
        s += x[i];
    }
    float inv = (float)(1.0 / s);
    for (int64_t i = 0; i < n; i++) x[i] *= inv;
}

static VX_TARGET_AVX2 void softmax_avx2(float *x, int64_t n) {
    __m256 vm = _mm256_set1_ps(-INFINITY);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) vm = _mm256_max_ps(vm, _mm256_loadu_ps(x + i));
    float mx = vx_hmax256(vm);
    for (; i < n; i++) mx = x[i] > mx ? x[i] : mx;
    if (mx == -INFINITY) {
        for (i = 0; i < n; i++) x[i] = 0.0f;
        return;
    }
    __m256 m8 = _mm256_set1_ps(mx), s8 = _mm256_setzero_ps();
    for (i = 0; i + 8 <= n; i += 8) {
        __m256 e = vx_exp256(_mm256_sub_ps(_mm256_loadu_ps(x + i), m8));
        _mm256_storeu_ps(x + i, e);
        s8 = _mm256_add_ps(s8, e);
    }
    double s = vx_hsum256(s8);
    for (; i < n; i++) {
        x[i] = expf(x[i] - mx);
        s += x[i];
    }
    __m256 inv = _mm256_set1_ps((float)(1.0 / s));
    for (i = 0; i + 8 <= n; i += 8) _mm256_storeu_ps(x + i, _mm256_mul_ps(_mm256_loadu_ps(x + i), inv));
    for (; i < n; i++) x[i] *= (float)(1.0 / s);
}

static VX_TARGET_AVX512 void softmax_avx512(float *x, int64_t n) {
    __m512 vm = _mm512_set1_ps(-INFINITY);
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) vm = _mm512_max_ps(vm, _mm512_loadu_ps(x + i));
    __mmask16 tail = (__mmask16)((1u << (n - i)) - 1);
    vm = _mm512_max_ps(vm, _mm512_mask_loadu_ps(_mm512_set1_ps(-INFINITY), tail, x + i));
    float mx = vx_hmax512(vm);
    if (mx == -INFINITY) {
        for (i = 0; i < n; i++) x[i] = 0.0f;
        return;
    }
    __m512 m16 = _mm512_set1_ps(mx), s16 = _mm512_setzero_ps();
    for (i = 0; i + 16 <= n; i += 16) {
        __m512 e = vx_exp512(_mm512_sub_ps(_mm512_loadu_ps(x + i), m16));
        _mm512_storeu_ps(x + i, e);
        s16 = _mm512_add_ps(s16, e);
    }
    __m512 e = _mm512_maskz_mov_ps(tail, vx_exp512(_mm512_sub_ps(_mm512_maskz_loadu_ps(tail, x + i), m16)));
    _mm512_mask_storeu_ps(x + i, tail, e);
    s16 = _mm512_add_ps(s16, e);
    __m512 inv = _mm512_set1_ps(1.0f / vx_hsum512(s16));
    for (i = 0; i + 16 <= n; i += 16) _mm512_storeu_ps(x + i, _mm512_mul_ps(_mm512_loadu_ps(x + i), inv));
    _mm512_mask_storeu_ps(x + i, tail, _mm512_mul_ps(_mm512_maskz_loadu_ps(tail, x + i), inv));
}

void vx_softmax_isa(int isa, float *x, int64_t n) {
    if (n <= 0) return;
    if (isa >= VX_ISA_AVX512)
        softmax_avx512(x, n);
    else if (isa >= VX_ISA_AVX2)
        softmax_avx2(x, n);
    else
        softmax_scalar(x, n);
}

void vx_softmax(float *x, int64_t n) { vx_softmax_isa(vx_cpu_isa(), x, n); }
