/* Tensor kernels. Model-agnostic: plain arrays in, plain arrays out.
 * Activations are float32 row-major; weights stay in their file dtype
 * (F32, F16, BF16) and are converted inside the kernels.
 * Every kernel has a scalar reference (tests/unit) and, where it matters,
 * AVX2 / AVX-512 variants chosen at run time from CPU features. */
#ifndef VX_KERNELS_H
#define VX_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include "tensor/tensor.h"

/* A linear-layer weight W: [rows = out features N, cols = in features K],
 * row-major in `dtype`. Points into the model file (not owned).
 * VX_Q8 (the q8 precision mode, kernels/precision.h): data points to a
 * vx_q8 header naming the int8 values and their scales. */
typedef struct vx_mat {
    vx_dtype dtype; /* VX_F32, VX_F16, VX_BF16 or VX_Q8 */
    int64_t rows, cols;
    const void *data;
    /* 1: the precision policy lets many-row products round the activations
     * to bf16 as well (vdpbf16ps, kernels/gemm_packed.c); 0: exact. */
    int act_bf16;
} vx_mat;

/* q8 weights: W[n][k] = q · scale of k's block of VX_Q8_BLOCK values in row
 * n; scale = max |w| of the block / 127; q = w / scale rounded to nearest.
 * The buffer's layout (blocks interleaved for the VNNI kernels) is in
 * kernels/precision.h; vx_q8_weight reads one weight. */
#define VX_Q8_BLOCK 32
typedef struct vx_q8 {
    const int8_t *q;
    const float *scale;
} vx_q8;

/* View a 2-D float tensor as a matrix. */
vx_mat vx_mat_of(const vx_tensor *t);

/* y[M, N] = x[M, K] · Wᵀ (+ bias[N] when bias != NULL). y must not alias x.
 * Reads W once for all M rows (M = 2 for a CFG pair). Threaded over N (or M
 * when N is small) with up to `nthreads` threads: few rows on the thread
 * pool (base/pool.h), many rows too (the packed GEMM, sgemm panels). */
void vx_linear(float *y, const float *x, int64_t M, const vx_mat *W, const float *bias, int nthreads);
/* vx_linear whose every y row has the bits of that x row alone (M = 1), for
 * any M: the streaming tiles (one accumulator per x row and W row) in blocks
 * of rows below the many-row paths. A verify forward over several decode
 * positions must reproduce one-position decoding exactly. */
void vx_linear_rows(float *y, const float *x, int64_t M, const vx_mat *W, const float *bias, int nthreads);

/* Row-major float32 GEMM: C[M,N] = alpha * op(A)[M,K] · op(B)[K,N] + beta * C.
 * transA/transB: 0 = as stored, 1 = transposed. Leading dims as in BLAS.
 * Split into blocks set by the shape alone, run on up to `nthreads` pool threads, each calling a single-threaded
 * OpenBLAS: the first call of this or vx_linear sets openblas_set_num_threads(1)
 * for the process, so call BLAS through here, not cblas_* directly. */
void vx_gemm_f32(int transA, int transB, int64_t M, int64_t N, int64_t K, float alpha, const float *A,
                 int64_t lda, const float *B, int64_t ldb, float beta, float *C, int64_t ldc, int nthreads);

/* ---- element-wise and row-wise ops (single-threaded unless noted) ---- */

/* y = x · rsqrt(mean(x²) + eps) · w over each of `rows` rows of length dim (w may be NULL). */
void vx_rmsnorm(float *y, const float *x, const float *w, int64_t rows, int64_t dim, float eps);
/* y = (x − mean) / sqrt(var + eps) · w + b per row (w, b may be NULL). */
void vx_layernorm(float *y, const float *x, const float *w, const float *b, int64_t rows, int64_t dim,
                  float eps);
void vx_silu(float *x, int64_t n);
void vx_gelu(float *x, int64_t n);      /* erf form (erf within 1.5e-7, as torch CPU) */
void vx_gelu_tanh(float *x, int64_t n); /* tanh approximation */
/* out[i] = silu(gate[i]) * up[i] */
void vx_swiglu(float *out, const float *gate, const float *up, int64_t n);
/* In-place numerically stable softmax of one row (−inf entries become 0;
 * a row of only −inf becomes all 0, where torch would give NaN). */
void vx_softmax(float *x, int64_t n);
void vx_add(float *y, const float *x, int64_t n);          /* y += x */
void vx_scale(float *y, float s, int64_t n);               /* y *= s */
void vx_axpy(float *y, float a, const float *x, int64_t n); /* y += a·x */

/* ---- rotary position embedding ("rotate half": dims d and d + hd/2 pair up) ---- */

/* inv_freq[i] = theta^(−2i/hd), i < hd/2, computed in float32 like torch. */
void vx_rope_freqs(float *inv_freq, int head_dim, float theta);
/* Llama-3 frequency scaling applied in place to default frequencies. */
void vx_rope_llama3_scale(float *inv_freq, int head_dim, float factor, float low_freq_factor,
                          float high_freq_factor, float original_max_pos);
/* Rotate x[nheads][head_dim] for absolute position pos (angles = pos·inv_freq in float32). */
void vx_rope_apply(float *x, int nheads, int head_dim, const float *inv_freq, int64_t pos);

/* ---- attention ----
 * q:   [nq][n_heads · hd]          (query rows)
 * k,v: [nk][kv_stride] with head g at offset g·hd (position-major, e.g. a KV cache)
 * out: [nq][n_heads · hd]
 * Query head h uses KV head h / (n_heads / n_kv_heads) (GQA).
 * causal: query i (absolute position nk − nq + i) sees keys 0 .. nk − nq + i;
 * a row that sees no key (nq > nk) gets zeros. out must not alias q, k, v.
 * Threaded over heads × query rows (and over key ranges for long contexts). */
void vx_attention(float *out, const float *q, const float *k, const float *v, int64_t nq, int64_t nk,
                  int n_heads, int n_kv_heads, int hd, int64_t kv_stride, float scale, int causal,
                  int nthreads);
/* Same with K/V stored as kv_dtype: VX_F32 (= vx_attention) or VX_BF16 (a
 * bf16 KV cache; widened to float32 exactly, float32 arithmetic: equals
 * vx_attention over the widened values). */
void vx_attention_kv(float *out, const float *q, const void *k, const void *v, vx_dtype kv_dtype, int64_t nq,
                     int64_t nk, int n_heads, int n_kv_heads, int hd, int64_t kv_stride, float scale, int causal,
                     int nthreads);

/* vx_attention_kv for nseq independent sequences (a decode step's batch,
 * e.g. the CFG pair): the same head layout and nq rows each, every sequence
 * with its own rows, output and cache of nk keys. Few rows run in one pool
 * region for all sequences; each result equals that sequence's own
 * vx_attention_kv call, bit for bit. */
typedef struct vx_attn_seq {
    float *out;
    const float *q;
    const void *k, *v;
    int64_t nk;
} vx_attn_seq;
void vx_attention_kv_seqs(const vx_attn_seq *seqs, int nseq, vx_dtype kv_dtype, int64_t nq, int n_heads,
                          int n_kv_heads, int hd, int64_t kv_stride, float scale, int causal, int nthreads);

/* vx_attention's contract for many query rows, as two GEMMs per head and
 * block of queries; bf16 = 1 rounds Q, K, softmax weights and V to bf16
 * (vdpbf16ps, the bf16 precision mode). Falls back to vx_attention where
 * the CPU lacks AVX512_BF16 or bf16 = 0. */
void vx_attention_lowp(float *out, const float *q, const float *k, const float *v, int64_t nq, int64_t nk,
                       int n_heads, int n_kv_heads, int hd, int64_t kv_stride, float scale, int causal, int bf16,
                       int nthreads);

/* ---- machine limits (vocis bench peak) ---- */
/* Best read bandwidth over reps passes of a `bytes` buffer, GB/s. */
double vx_peak_read_gbs(size_t bytes, int reps, int nthreads);
/* Register-only multiply rate for about `seconds`: f32 FMA (bf16 = 0) or
 * vdpbf16ps (1; 0 where the CPU lacks AVX512_BF16), GFLOP/s. */
double vx_peak_gflops(int bf16, double seconds, int nthreads);

/* ---- CPU features ---- */
int vx_cpu_has_avx2(void);
int vx_cpu_has_avx512(void);
int vx_cpu_has_avx512bf16(void);

#endif
