/* Element-wise and row-wise ops. float32 math in the order PyTorch's float32
 * kernels use (no hidden double math in the outputs); only reductions use
 * double accumulators, which lands closer to torch's pairwise sums than a
 * naive float loop. Activations and softmax have SIMD variants (exp within
 * ~1 ulp, see isa.h). */
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

/* ---- activations ----
 * silu(x) = x / (1 + e^−x); gelu_tanh(x) = x / (1 + e^−2u), u = √(2/π)(x +
 * 0.044715x³), which is 0.5x(1 + tanh u) without the cancellation of tanh
 * near 0; gelu(x) = 0.5x(1 + erf(x/√2)) with erf from Abramowitz & Stegun
 * 7.1.26 (|error| ≤ 1.5e-7), the approximation torch's vectorized CPU
 * kernel uses too, so results follow torch more closely than exact erf. */

static inline float erf_as(float x) {
    float t = 1.0f / (1.0f + 0.3275911f * fabsf(x));
    float r = ((((1.061405429f * t - 1.453152027f) * t + 1.421413741f) * t - 0.284496736f) * t + 0.254829592f) * t;
    return copysignf(1.0f - r * expf(-x * x), x);
}

#define GELU_K 0.7978845608028654f /* √(2/π) */

static inline float act1(int a, float x) {
    switch (a) {
    case VX_ACT_SILU: return x / (1.0f + expf(-x));
    case VX_ACT_GELU: return 0.5f * x * (1.0f + erf_as(x * (float)M_SQRT1_2));
    default: return x / (1.0f + expf(-2.0f * GELU_K * (x + 0.044715f * x * x * x)));
    }
}

VX_INLINE VX_TARGET_AVX512 __m512 act512(int a, __m512 x) {
    const __m512 one = _mm512_set1_ps(1.0f);
    if (a == VX_ACT_SILU) return _mm512_div_ps(x, _mm512_add_ps(one, vx_exp512(_mm512_sub_ps(_mm512_setzero_ps(), x))));
    if (a == VX_ACT_GELU_TANH) {
        __m512 x3 = _mm512_mul_ps(_mm512_mul_ps(x, x), x);
        __m512 u = _mm512_mul_ps(_mm512_set1_ps(-2.0f * GELU_K), _mm512_fmadd_ps(_mm512_set1_ps(0.044715f), x3, x));
        return _mm512_div_ps(x, _mm512_add_ps(one, vx_exp512(u)));
    }
    __m512 z = _mm512_mul_ps(x, _mm512_set1_ps((float)M_SQRT1_2));
    __m512 az = _mm512_abs_ps(z);
    __m512 t = _mm512_div_ps(one, _mm512_fmadd_ps(_mm512_set1_ps(0.3275911f), az, one));
    __m512 r = _mm512_fmadd_ps(_mm512_set1_ps(1.061405429f), t, _mm512_set1_ps(-1.453152027f));
    r = _mm512_fmadd_ps(r, t, _mm512_set1_ps(1.421413741f));
    r = _mm512_fmadd_ps(r, t, _mm512_set1_ps(-0.284496736f));
    r = _mm512_fmadd_ps(r, t, _mm512_set1_ps(0.254829592f));
    r = _mm512_mul_ps(r, t);
    __m512 e = vx_exp512(_mm512_sub_ps(_mm512_setzero_ps(), _mm512_mul_ps(z, z)));
    __m512 erf_abs = _mm512_fnmadd_ps(r, e, one);
    /* 1 + erf(z) = 1 ± erf(|z|) */
    __mmask16 neg = _mm512_cmp_ps_mask(z, _mm512_setzero_ps(), _CMP_LT_OQ);
    __m512 onep = _mm512_mask_sub_ps(_mm512_add_ps(one, erf_abs), neg, one, erf_abs);
    return _mm512_mul_ps(_mm512_mul_ps(_mm512_set1_ps(0.5f), x), onep);
}

VX_INLINE VX_TARGET_AVX2 __m256 act256(int a, __m256 x) {
    const __m256 one = _mm256_set1_ps(1.0f);
    if (a == VX_ACT_SILU) return _mm256_div_ps(x, _mm256_add_ps(one, vx_exp256(_mm256_sub_ps(_mm256_setzero_ps(), x))));
    if (a == VX_ACT_GELU_TANH) {
        __m256 x3 = _mm256_mul_ps(_mm256_mul_ps(x, x), x);
        __m256 u = _mm256_mul_ps(_mm256_set1_ps(-2.0f * GELU_K), _mm256_fmadd_ps(_mm256_set1_ps(0.044715f), x3, x));
        return _mm256_div_ps(x, _mm256_add_ps(one, vx_exp256(u)));
    }
    __m256 z = _mm256_mul_ps(x, _mm256_set1_ps((float)M_SQRT1_2));
    __m256 az = _mm256_andnot_ps(_mm256_set1_ps(-0.0f), z);
    __m256 t = _mm256_div_ps(one, _mm256_fmadd_ps(_mm256_set1_ps(0.3275911f), az, one));
    __m256 r = _mm256_fmadd_ps(_mm256_set1_ps(1.061405429f), t, _mm256_set1_ps(-1.453152027f));
    r = _mm256_fmadd_ps(r, t, _mm256_set1_ps(1.421413741f));
    r = _mm256_fmadd_ps(r, t, _mm256_set1_ps(-0.284496736f));
    r = _mm256_fmadd_ps(r, t, _mm256_set1_ps(0.254829592f));
    r = _mm256_mul_ps(r, t);
    __m256 e = vx_exp256(_mm256_sub_ps(_mm256_setzero_ps(), _mm256_mul_ps(z, z)));
    __m256 erf_abs = _mm256_fnmadd_ps(r, e, one);
    __m256 neg = _mm256_cmp_ps(z, _mm256_setzero_ps(), _CMP_LT_OQ);
    __m256 onep = _mm256_blendv_ps(_mm256_add_ps(one, erf_abs), _mm256_sub_ps(one, erf_abs), neg);
    return _mm256_mul_ps(_mm256_mul_ps(_mm256_set1_ps(0.5f), x), onep);
}

/* out[i] = act(x[i]) · (up ? up[i] : 1); out may equal x. */
static VX_TARGET_AVX512 void act_avx512(int a, float *out, const float *x, const float *up, int64_t n) {
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m512 y = act512(a, _mm512_loadu_ps(x + i));
        if (up) y = _mm512_mul_ps(y, _mm512_loadu_ps(up + i));
        _mm512_storeu_ps(out + i, y);
    }
    if (i < n) {
        __mmask16 m = (__mmask16)((1u << (n - i)) - 1);
        __m512 y = act512(a, _mm512_maskz_loadu_ps(m, x + i));
        if (up) y = _mm512_mul_ps(y, _mm512_maskz_loadu_ps(m, up + i));
        _mm512_mask_storeu_ps(out + i, m, y);
    }
}

static VX_TARGET_AVX2 void act_avx2(int a, float *out, const float *x, const float *up, int64_t n) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 y = act256(a, _mm256_loadu_ps(x + i));
        if (up) y = _mm256_mul_ps(y, _mm256_loadu_ps(up + i));
        _mm256_storeu_ps(out + i, y);
    }
    for (; i < n; i++) out[i] = up ? act1(a, x[i]) * up[i] : act1(a, x[i]);
}

void vx_act_isa(int isa, int a, float *out, const float *x, const float *up, int64_t n) {
    if (isa >= VX_ISA_AVX512)
        act_avx512(a, out, x, up, n);
    else if (isa >= VX_ISA_AVX2)
        act_avx2(a, out, x, up, n);
    else
        for (int64_t i = 0; i < n; i++) out[i] = up ? act1(a, x[i]) * up[i] : act1(a, x[i]);
}

void vx_silu(float *x, int64_t n) { vx_act_isa(vx_cpu_isa(), VX_ACT_SILU, x, x, NULL, n); }
void vx_gelu(float *x, int64_t n) { vx_act_isa(vx_cpu_isa(), VX_ACT_GELU, x, x, NULL, n); }
void vx_gelu_isa(int isa, float *x, int64_t n) { vx_act_isa(isa, VX_ACT_GELU, x, x, NULL, n); }
void vx_gelu_tanh(float *x, int64_t n) { vx_act_isa(vx_cpu_isa(), VX_ACT_GELU_TANH, x, x, NULL, n); }
void vx_swiglu(float *out, const float *gate, const float *up, int64_t n) {
    vx_act_isa(vx_cpu_isa(), VX_ACT_SILU, out, gate, up, n);
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
