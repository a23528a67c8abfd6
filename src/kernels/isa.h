/* Internal to src/kernels: instruction-set levels, target attributes and the
 * small SIMD helpers shared by several kernel files. Not for model code. */
#ifndef VX_KERNELS_ISA_H
#define VX_KERNELS_ISA_H

#include <immintrin.h>
#include <stdint.h>

#include "base/pool.h"
#include "kernels/kernels.h"

enum { VX_ISA_SCALAR = 0, VX_ISA_AVX2 = 1, VX_ISA_AVX512 = 2 };

/* Best level this CPU and OS support (computed once). */
int vx_cpu_isa(void);

/* Make OpenBLAS single-threaded (once per process): the kernels partition
 * work over the pool's threads (base/pool.h) and call sgemm inside each partition,
 * so a second, nested thread pool would only oversubscribe the cores. */
void vx_blas_init(void);

/* How the streaming (few-row) linear y[M, N] = x[M, K]·Wᵀ of any weight dtype is cut into
 * pool chunks: by rows of x (4 at a time) when the outputs are few and the rows many (a
 * narrow conv), else by rows of W (16 at a time). Every output comes from one chunk, so
 * the split never changes a bit. */
typedef struct vx_linear_split {
    int by_rows;
    int64_t len, step, chunks; /* items (rows of x or of W), per chunk, chunk count */
} vx_linear_split;
static inline vx_linear_split vx_linear_split_of(int64_t M, int64_t N, int nthreads) {
    vx_linear_split s;
    s.by_rows = N < 64 * nthreads && M >= 8 * nthreads;
    s.len = s.by_rows ? M : N;
    s.step = vx_pool_chunk_items(s.len, s.by_rows ? 4 : 16, nthreads);
    s.chunks = (s.len + s.step - 1) / s.step;
    return s;
}
/* Chunk c's items [*a, *b). */
static inline void vx_linear_split_span(const vx_linear_split *s, int64_t c, int64_t *a, int64_t *b) {
    *a = c * s->step;
    *b = *a + s->step < s->len ? *a + s->step : s->len;
}

/* The public kernels with an explicit level (≤ vx_cpu_isa()), so that the
 * unit tests can check every variant on one machine. */
void vx_linear_isa(int isa, float *y, const float *x, int64_t M, const vx_mat *W, const float *bias,
                   int nthreads);
/* vx_linear_isa for VX_Q8 weights (matmul_q8.c); vx_linear_isa calls it. */
void vx_linear_q8_isa(int isa, float *y, const float *x, int64_t M, const vx_mat *W, const float *bias,
                      int nthreads);
/* The packed many-row GEMM (gemm_packed.c): C[M,N] = alpha·op(A)·op(B) +
 * beta·C (+ bias[n] on every row when bias != NULL). A is float32
 * (ta = 0: A[m·lda + k], 1: A[k·lda + m]); B is F32, BF16 or F16
 * (tb = 0: B[k·ldb + n], 1: B[n·ldb + k], as a linear layer's W). bf16 = 1
 * rounds both operands to bf16 and multiplies with vdpbf16ps (float32
 * accumulation); 0 computes in float32. Returns 0, writing nothing, when
 * the level cannot run it (vx_gemm_packed_supported) or scratch memory was
 * not available. Threaded over rows or columns. */
int vx_gemm_packed_supported(int isa, int bf16);
int vx_gemm_packed(int isa, int ta, int tb, int64_t M, int64_t N, int64_t K, float alpha, const float *A,
                   int64_t lda, const void *B, vx_dtype bdt, int64_t ldb, float beta, float *C, int64_t ldc,
                   const float *bias, int bf16, int nthreads);
/* Many-query attention (vx_attention's contract) in blocks of 48 query rows
 * with register-tiled AVX-512 products and a lane-wise softmax; O(nk)
 * scratch per thread (attention_blocked.c). Applies when the CPU has
 * AVX-512, hd is a multiple of 16 and heads divide evenly; returns 0 when
 * scratch could not be allocated (nothing written then). */
int vx_attention_blocked_supported(int hd);
/* The same blocks in bf16 (q, k, v and the softmax weights rounded to bf16,
 * vdpbf16ps with float32 accumulation): the bf16 precision mode's many-query
 * attention. Needs AVX512_BF16 as well; 0 when scratch was not available. */
int vx_attention_blocked16_supported(int hd);
int vx_attention_blocked16(float *out, const float *q, const float *k, const float *v, int64_t nq, int64_t nk,
                           int n_heads, int n_kv_heads, int hd, int64_t kv_stride, float scale, int causal,
                           int nthreads);
/* vx_attention's contract as two packed GEMMs per head and block of query
 * rows (attention_gemm.c), bf16 = 1 with vdpbf16ps; returns 0 when the
 * level cannot run it or scratch memory was not available (the output is
 * then incomplete: the caller computes it again). */
int vx_attention_gemm(float *out, const float *q, const float *k, const float *v, int64_t nq, int64_t nk,
                      int n_heads, int n_kv_heads, int hd, int64_t kv_stride, float scale, int causal, int bf16,
                      int nthreads);
int vx_attention_blocked(float *out, const float *q, const float *k, const float *v, int64_t nq, int64_t nk,
                         int n_heads, int n_kv_heads, int hd, int64_t kv_stride, float scale, int causal,
                         int nthreads);
void vx_attention_isa(int isa, float *out, const float *q, const float *k, const float *v, int64_t nq, int64_t nk,
                      int n_heads, int n_kv_heads, int hd, int64_t kv_stride, float scale, int causal,
                      int nthreads);
void vx_attention_kv_isa(int isa, float *out, const float *q, const void *k, const void *v, vx_dtype kv_dtype,
                         int64_t nq, int64_t nk, int n_heads, int n_kv_heads, int hd, int64_t kv_stride,
                         float scale, int causal, int nthreads);
void vx_attention_kv_seqs_isa(int isa, const vx_attn_seq *seqs, int nseq, vx_dtype kv_dtype, int64_t nq,
                              int n_heads, int n_kv_heads, int hd, int64_t kv_stride, float scale, int causal,
                              int nthreads);
/* Softmax of one row with the given level (vx_softmax uses the best one). */
void vx_softmax_isa(int isa, float *x, int64_t n);
/* out[i] = act(x[i]) · (up ? up[i] : 1), out may equal x: vx_silu, vx_gelu,
 * vx_gelu_tanh and vx_swiglu with an explicit level. */
enum { VX_ACT_SILU, VX_ACT_GELU, VX_ACT_GELU_TANH };
void vx_act_isa(int isa, int act, float *out, const float *x, const float *up, int64_t n);
/* GELU (erf form) with the given level. */
void vx_gelu_isa(int isa, float *x, int64_t n);

#define VX_TARGET_AVX2 __attribute__((target("avx2,fma,f16c")))
#define VX_TARGET_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c")))
#define VX_INLINE static inline __attribute__((always_inline))

/* sin(x) for Snake (|x| < ~1e6; bounded garbage beyond), without libm: x = q·π + r, |r| ≤ π/2,
 * Cody–Waite reduction with a 3-part π, odd Taylor polynomial to r¹⁵, sign (−1)^q; ≈ 2 ulp.
 * SIN_P spells the polynomial for any arithmetic (scalar or SIMD macros); vx_sin_ref is the
 * scalar reference whose operation order the non-fused SIMD variants reproduce bit for bit. */
#define SIN_C3 1.509957990978376432e-7f
#define SIN_C2 9.67502593994140625e-4f
#define SIN_C1 3.140625f
#define SIN_P(MUL, ADD, SUB, SET, p, r2)                                                                        \
    do {                                                                                                        \
        p = SET(-7.6471637318198164759e-13f);                                                                  \
        p = ADD(MUL(p, r2), SET(1.6059043836821614599e-10f));                                                  \
        p = SUB(MUL(p, r2), SET(2.5052108385441718775e-8f));                                                   \
        p = ADD(MUL(p, r2), SET(2.7557319223985890653e-6f));                                                   \
        p = SUB(MUL(p, r2), SET(1.9841269841269841270e-4f));                                                   \
        p = ADD(MUL(p, r2), SET(8.3333333333333333333e-3f));                                                   \
        p = SUB(MUL(p, r2), SET(1.6666666666666666667e-1f));                                                   \
    } while (0)

VX_INLINE float vx_sin_ref(float x) {
    const float inv_pi = 0.318309886183790671538f;
    const float shifter = 12582912.0f; /* 1.5·2^23: adding it rounds to an integer */
    float q = (x * inv_pi + shifter) - shifter;
    q = q > 4194304.0f ? 4194304.0f : (q < -4194304.0f ? -4194304.0f : q); /* keep the int conversion defined */
    float r = x - q * SIN_C1;
    r = r - q * SIN_C2;
    r = r - q * SIN_C3;
    float r2 = r * r, p;
#define MUL_(a, b) ((a) * (b))
#define ADD_(a, b) ((a) + (b))
#define SUB_(a, b) ((a) - (b))
#define SET_(a) (a)
    SIN_P(MUL_, ADD_, SUB_, SET_, p, r2);
#undef MUL_
#undef ADD_
#undef SUB_
#undef SET_
    float s = r + r * r2 * p;
    int32_t qi = (int32_t)q;
    return (qi & 1) ? -s : s;
}

/* exp(x) for float lanes, Cephes-style: x = n·ln2 + r, e^r by a degree-7
 * polynomial; max error about 1 ulp over the normal range. Inputs below
 * −87.3 (AVX2) / −103.9 (AVX-512) give exactly 0, like expf of −inf. */
VX_INLINE VX_TARGET_AVX512 __m512 vx_exp512(__m512 x) {
    const __m512 lo = _mm512_set1_ps(-103.972084f);
    __mmask16 zero = _mm512_cmp_ps_mask(x, lo, _CMP_LT_OQ);
    x = _mm512_min_ps(_mm512_max_ps(x, lo), _mm512_set1_ps(88.7228391f));
    __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
                                    _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), x);
    r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);
    __m512 p = _mm512_set1_ps(1.9875691500e-4f);
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.3981999507e-3f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(8.3334519073e-3f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.1665795894e-2f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.6666665459e-1f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(5.0000001201e-1f));
    p = _mm512_fmadd_ps(p, _mm512_mul_ps(r, r), _mm512_add_ps(r, _mm512_set1_ps(1.0f)));
    return _mm512_maskz_scalef_ps((__mmask16)~zero, p, n);
}

VX_INLINE VX_TARGET_AVX2 __m256 vx_exp256(__m256 x) {
    const __m256 lo = _mm256_set1_ps(-87.3365479f);
    __m256 zero = _mm256_cmp_ps(x, lo, _CMP_LT_OQ);
    x = _mm256_min_ps(_mm256_max_ps(x, lo), _mm256_set1_ps(88.3762626f));
    __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                               _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);
    r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
    __m256 p = _mm256_set1_ps(1.9875691500e-4f);
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.3981999507e-3f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519073e-3f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1665795894e-2f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666665459e-1f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000001201e-1f));
    p = _mm256_fmadd_ps(p, _mm256_mul_ps(r, r), _mm256_add_ps(r, _mm256_set1_ps(1.0f)));
    /* n ∈ [−126, 127]: build 2^n directly in the exponent field. */
    __m256i e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
    return _mm256_andnot_ps(zero, _mm256_mul_ps(p, _mm256_castsi256_ps(e)));
}

VX_INLINE VX_TARGET_AVX512 float vx_hsum512(__m512 v) { return _mm512_reduce_add_ps(v); }

VX_INLINE VX_TARGET_AVX2 float vx_hsum256(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

VX_INLINE VX_TARGET_AVX512 float vx_hmax512(__m512 v) { return _mm512_reduce_max_ps(v); }

VX_INLINE VX_TARGET_AVX2 float vx_hmax256(__m256 v) {
    __m128 s = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_max_ps(s, _mm_movehl_ps(s, s));
    s = _mm_max_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

#endif
