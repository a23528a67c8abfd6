/* Linear layers y = x·Wᵀ + b with W in its file dtype, and the f32 GEMM.
 *
 * Small M (decode, CFG pairs): memory-bound. W's rows are cut into chunks
 * that the thread pool's threads (base/pool.h) stream once each; a tile
 * computes MB (≤ 4) x-rows against NR W-rows so that every converted W
 * vector feeds MB FMAs. bf16 → f32 is a 16-bit shift, f16 → f32 is
 * vcvtph2ps; accumulation is f32 in SIMD lanes.
 *
 * Larger M (prefill, conv-as-GEMM) is compute-bound. With AVX-512 it goes to
 * the packed GEMM (gemm_packed.c: f32, or bf16 vdpbf16ps when the precision
 * policy marks W act_bf16), from packed_min_m rows, and vx_gemm_f32 too: its
 * speed then does not depend on the core OpenBLAS runs (a forced
 * OPENBLAS_CORETYPE=Haswell halved sgemm's rate on this AVX-512 CPU).
 * Without AVX-512: the tiles, cache-blocked (linear_stream), up to
 * GEMM_MIN_M rows, then OpenBLAS's sgemm; bf16/f16 weights reach sgemm as
 * panels: PANEL rows at a time converted to per-thread f32 scratch, then
 * sgemm writes the matching column block of y.
 */
#include <cblas.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "base/pool.h"
#include "kernels/isa.h"
#include "kernels/xquant.h"

/* x rows from which sgemm (f32 W) or sgemm panels (bf16/f16 W) replace the
 * tiles: see gemm_min_m. Measured on the 2-core Zen host, GFLOP/s over
 * M = 8 … 2500, tiles vs sgemm:
 *   OpenBLAS Haswell core, 1 thread, K=1024 N=4096 bf16: 165-210 vs 30-126
 *   Cooperlake core, 2 threads, bf16 K=4096 N=1024: 326-339 vs 158 (M=32),
 *     319 (128), 389 (256), 421-446 (≥ 512); K=1024 N=4096: 395-409 vs
 *     160 (32), 319 (128), 385 (256), 416-442 (≥ 512); f32 K=1024: tiles
 *     ~340-358, sgemm 244 (32), 338 (64), 383 (128), 427-441 (≥ 256) */
#define GEMM_MIN_M 32
/* x rows per cache block (see linear_stream) */
#define XB_BYTES (256 * 1024)
#define PANEL 256
/* Software prefetch, into L2, of the next tile's W rows while a tile runs:
 * a tile's NR rows are one contiguous span of NR·K elements, and the next
 * tile's span follows it, so the prefetches walk one sequential stream,
 * NR·16 elements per k step (the bytes the step consumes), one tile ahead.
 * NR row streams prefetched 1 KiB ahead each into L1 (the former scheme)
 * kept fewer lines in flight and scattered them over NR DRAM pages: T3
 * decode shapes, M=2, 1 thread, GB/s of W against a plain read loop in the
 * same process: bf16 45-50 % → 78-84 %, f32 91 % → ≥ 100 %; into L1
 * (prefetcht0) only 49-61 %; two tiles ahead no better than one. */
#define PF_HINT _MM_HINT_T1

vx_mat vx_mat_of(const vx_tensor *t) {
    vx_mat m = {t->dtype, t->shape[0], 1, t->data};
    for (int d = 1; d < t->ndim; d++) m.cols *= t->shape[d];
    return m;
}

/* Process-wide facts about the BLAS, settled once (like the CPU features). */
static pthread_once_t blas_once = PTHREAD_ONCE_INIT;
static int blas_avx512_core;
static void blas_single(void) {
    openblas_set_num_threads(1);
    const char *core = openblas_get_corename();
    blas_avx512_core = core && (strstr(core, "kylakex") || strstr(core, "ooperlake") || strstr(core, "apphire"));
}
void vx_blas_init(void) { pthread_once(&blas_once, blas_single); }

/* ---- f32 GEMM ---- */

static void sgemm1(int ta, int tb, int64_t M, int64_t N, int64_t K, float alpha, const float *A, int64_t lda,
                   const float *B, int64_t ldb, float beta, float *C, int64_t ldc) {
    if (M <= 0 || N <= 0) return;
    cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, (int)M, (int)N,
                (int)K, alpha, A, (int)lda, B, (int)ldb, beta, C, (int)ldc);
}

typedef struct {
    int transA, transB;
    int64_t M, N, K;
    float alpha;
    const float *A;
    int64_t lda;
    const float *B;
    int64_t ldb;
    float beta;
    float *C;
    int64_t ldc;
    int split_m;
    int64_t step; /* rows (split_m) or columns per chunk */
} gemm_split_job;

static void gemm_split_chunk(void *ctx, int64_t c) {
    const gemm_split_job *j = ctx;
    const int64_t len = j->split_m ? j->M : j->N, a = c * j->step, b = a + j->step < len ? a + j->step : len;
    if (j->split_m)
        sgemm1(j->transA, j->transB, b - a, j->N, j->K, j->alpha, j->transA ? j->A + a : j->A + a * j->lda, j->lda,
               j->B, j->ldb, j->beta, j->C + a * j->ldc, j->ldc);
    else
        sgemm1(j->transA, j->transB, j->M, b - a, j->K, j->alpha, j->A, j->lda,
               j->transB ? j->B + a * j->ldb : j->B + a, j->ldb, j->beta, j->C + a, j->ldc);
}

void vx_gemm_f32(int transA, int transB, int64_t M, int64_t N, int64_t K, float alpha, const float *A,
                 int64_t lda, const float *B, int64_t ldb, float beta, float *C, int64_t ldc, int nthreads) {
    int isa = vx_cpu_isa();
    if (M >= 32 && N >= 32 && (double)M * N * K >= 1e6 &&
        vx_gemm_packed(isa, transA, transB, M, N, K, alpha, A, lda, B, VX_F32, ldb, beta, C, ldc, NULL, 0, nthreads))
        return;
    vx_blas_init();
    if ((double)M * N * K < 1e6) {
        sgemm1(transA, transB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
        return;
    }
    /* The larger of M and N in up to 16 blocks set by its length alone (any
     * thread count computes each block the same way). */
    gemm_split_job j = {transA, transB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, M >= N, 0};
    const int64_t len = j.split_m ? M : N;
    j.step = (len + 15) / 16;
    if (!j.split_m) j.step = (j.step + 15) & ~(int64_t)15;
    vx_pool_run(nthreads, (len + j.step - 1) / j.step, gemm_split_chunk, &j);
}

/* ---- small-M streaming kernels ----
 * A tile: y[m][n] for m < MB, n < NR over the whole K, written as
 * y[m·ldy + n] = dot + bias[n]. MB, NR and the dtype are compile-time
 * constants after inlining, so the accumulators live in registers. */

typedef void (*tile_fn)(const float *x, int64_t ldx, const void *w, int64_t K, float *y, int64_t ldy,
                        const float *bias);

static inline const uint16_t *u16(const void *w) { return (const uint16_t *)w; }

/* The lines of the next tile's span that the k step [k, k + kstep) of this tile matches. */
VX_INLINE void pf_next(const void *w, int64_t K, int64_t k, int kstep, size_t es, int NR) {
    const char *p = (const char *)w + ((int64_t)NR * K + (int64_t)NR * k) * (int64_t)es;
    _Pragma("GCC unroll 8")
    for (int j = 0; j < (NR * kstep * (int)es + 63) / 64; j++) _mm_prefetch(p + 64 * j, PF_HINT);
}
VX_INLINE VX_TARGET_AVX512 __m512 w512(vx_dtype dt, const void *w, int64_t k) {
    if (dt == VX_F32) return _mm512_loadu_ps((const float *)w + k);
    __m256i h = _mm256_loadu_si256((const __m256i *)(u16(w) + k));
    if (dt == VX_BF16) return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
    return _mm512_cvtph_ps(h);
}

VX_INLINE VX_TARGET_AVX512 __m512 w512m(vx_dtype dt, const void *w, int64_t k, __mmask16 m) {
    if (dt == VX_F32) return _mm512_maskz_loadu_ps(m, (const float *)w + k);
    __m256i h = _mm256_maskz_loadu_epi16(m, u16(w) + k);
    if (dt == VX_BF16) return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
    return _mm512_cvtph_ps(h);
}

VX_INLINE VX_TARGET_AVX512 void tile512(vx_dtype dt, int MB, int NR, const float *x, int64_t ldx, const void *w,
                                        int64_t K, float *y, int64_t ldy, const float *bias) {
    size_t es = dt == VX_F32 ? 4 : 2;
    const char *wr[8];
    __m512 acc[4][8];
    _Pragma("GCC unroll 8")
    for (int r = 0; r < NR; r++) wr[r] = (const char *)w + (size_t)r * K * es;
    _Pragma("GCC unroll 8")
    for (int m = 0; m < MB; m++)
        _Pragma("GCC unroll 8")
        for (int r = 0; r < NR; r++) acc[m][r] = _mm512_setzero_ps();
    int64_t k = 0;
    for (; k + 16 <= K; k += 16) {
        __m512 wv[8];
        _Pragma("GCC unroll 8")
        for (int r = 0; r < NR; r++) wv[r] = w512(dt, wr[r], k);
        pf_next(w, K, k, 16, es, NR);
        _Pragma("GCC unroll 8")
        for (int m = 0; m < MB; m++) {
            __m512 xv = _mm512_loadu_ps(x + m * ldx + k);
            _Pragma("GCC unroll 8")
            for (int r = 0; r < NR; r++) acc[m][r] = _mm512_fmadd_ps(xv, wv[r], acc[m][r]);
        }
    }
    if (k < K) {
        __mmask16 mk = (__mmask16)((1u << (K - k)) - 1);
        __m512 wv[8];
        _Pragma("GCC unroll 8")
        for (int r = 0; r < NR; r++) wv[r] = w512m(dt, wr[r], k, mk);
        _Pragma("GCC unroll 8")
        for (int m = 0; m < MB; m++) {
            __m512 xv = _mm512_maskz_loadu_ps(mk, x + m * ldx + k);
            _Pragma("GCC unroll 8")
            for (int r = 0; r < NR; r++) acc[m][r] = _mm512_fmadd_ps(xv, wv[r], acc[m][r]);
        }
    }
    _Pragma("GCC unroll 8")
    for (int m = 0; m < MB; m++)
        _Pragma("GCC unroll 8")
        for (int r = 0; r < NR; r++) y[m * ldy + r] = vx_hsum512(acc[m][r]) + (bias ? bias[r] : 0.0f);
}

VX_INLINE VX_TARGET_AVX2 __m256 w256(vx_dtype dt, const void *w, int64_t k) {
    if (dt == VX_F32) return _mm256_loadu_ps((const float *)w + k);
    __m128i h = _mm_loadu_si128((const __m128i *)(u16(w) + k));
    if (dt == VX_BF16) return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
    return _mm256_cvtph_ps(h);
}

static inline float w1(vx_dtype dt, const void *w, int64_t k) {
    if (dt == VX_F32) return ((const float *)w)[k];
    if (dt == VX_BF16) return vx_bf16_to_f32(u16(w)[k]);
    return vx_f16_to_f32(u16(w)[k]);
}

VX_INLINE VX_TARGET_AVX2 void tile256(vx_dtype dt, int MB, int NR, const float *x, int64_t ldx, const void *w,
                                      int64_t K, float *y, int64_t ldy, const float *bias) {
    size_t es = dt == VX_F32 ? 4 : 2;
    const char *wr[4];
    __m256 acc[4][4];
    _Pragma("GCC unroll 4")
    for (int r = 0; r < NR; r++) wr[r] = (const char *)w + (size_t)r * K * es;
    _Pragma("GCC unroll 4")
    for (int m = 0; m < MB; m++)
        _Pragma("GCC unroll 4")
        for (int r = 0; r < NR; r++) acc[m][r] = _mm256_setzero_ps();
    int64_t k = 0;
    for (; k + 8 <= K; k += 8) {
        __m256 wv[4];
        _Pragma("GCC unroll 4")
        for (int r = 0; r < NR; r++) wv[r] = w256(dt, wr[r], k);
        pf_next(w, K, k, 8, es, NR);
        _Pragma("GCC unroll 4")
        for (int m = 0; m < MB; m++) {
            __m256 xv = _mm256_loadu_ps(x + m * ldx + k);
            _Pragma("GCC unroll 4")
            for (int r = 0; r < NR; r++) acc[m][r] = _mm256_fmadd_ps(xv, wv[r], acc[m][r]);
        }
    }
    _Pragma("GCC unroll 4")
    for (int m = 0; m < MB; m++)
        _Pragma("GCC unroll 4")
        for (int r = 0; r < NR; r++) {
            float s = vx_hsum256(acc[m][r]);
            for (int64_t j = k; j < K; j++) s += x[m * ldx + j] * w1(dt, wr[r], j);
            y[m * ldy + r] = s + (bias ? bias[r] : 0.0f);
        }
}

/* Scalar: 8 partial sums per dot keep the rounding error close to the SIMD paths. */
static inline void tile1(vx_dtype dt, int MB, int NR, const float *x, int64_t ldx, const void *w, int64_t K,
                         float *y, int64_t ldy, const float *bias) {
    size_t es = vx_dtype_size(dt);
    for (int r = 0; r < NR; r++) {
        const void *wr = (const char *)w + (size_t)r * K * es;
        for (int m = 0; m < MB; m++) {
            const float *xm = x + m * ldx;
            float p[8] = {0};
            int64_t k = 0;
            for (; k + 8 <= K; k += 8)
                for (int l = 0; l < 8; l++) p[l] += xm[k + l] * w1(dt, wr, k + l);
            float s = ((p[0] + p[1]) + (p[2] + p[3])) + ((p[4] + p[5]) + (p[6] + p[7]));
            for (; k < K; k++) s += xm[k] * w1(dt, wr, k);
            y[m * ldy + r] = s + (bias ? bias[r] : 0.0f);
        }
    }
}

#define TILE_ARGS const float *x, int64_t ldx, const void *w, int64_t K, float *y, int64_t ldy, const float *bias
#define TILE_PASS x, ldx, w, K, y, ldy, bias
/* For one level and dtype: MB = 1..4 rows of x against NR12 (MB ≤ 2) or
 * NR34 (MB ≥ 3) rows of W, plus the single-row tiles for the N tail. */
#define DEF_TILE(ISA, ATTR, FN, DT, MB, NR)                                                                 \
    static ATTR void ISA##_##DT##_##MB##_##NR(TILE_ARGS) { FN(DT, MB, NR, TILE_PASS); }
#define DEF_DT(ISA, ATTR, FN, DT, NR12, NR34)                                                               \
    DEF_TILE(ISA, ATTR, FN, DT, 1, NR12)                                                                   \
    DEF_TILE(ISA, ATTR, FN, DT, 2, NR12)                                                                   \
    DEF_TILE(ISA, ATTR, FN, DT, 3, NR34)                                                                   \
    DEF_TILE(ISA, ATTR, FN, DT, 4, NR34)                                                                   \
    DEF_TILE(ISA, ATTR, FN, DT, 1, 1)                                                                      \
    DEF_TILE(ISA, ATTR, FN, DT, 2, 1)                                                                      \
    DEF_TILE(ISA, ATTR, FN, DT, 3, 1)                                                                      \
    DEF_TILE(ISA, ATTR, FN, DT, 4, 1)
#define DEF_ISA(ISA, ATTR, FN, NR12, NR34)                                                                  \
    DEF_DT(ISA, ATTR, FN, VX_F32, NR12, NR34)                                                              \
    DEF_DT(ISA, ATTR, FN, VX_F16, NR12, NR34)                                                              \
    DEF_DT(ISA, ATTR, FN, VX_BF16, NR12, NR34)

typedef struct {
    tile_fn wide, one;
    int nr;
} tile_set;
#define SET(ISA, DT, MB, NR) {ISA##_##DT##_##MB##_##NR, ISA##_##DT##_##MB##_1, NR}
#define SETS_DT(ISA, DT, NR12, NR34)                                                                        \
    {SET(ISA, DT, 1, NR12), SET(ISA, DT, 2, NR12), SET(ISA, DT, 3, NR34), SET(ISA, DT, 4, NR34)}
#define SETS(ISA, NR12, NR34)                                                                               \
    {SETS_DT(ISA, VX_F32, NR12, NR34), SETS_DT(ISA, VX_F16, NR12, NR34), SETS_DT(ISA, VX_BF16, NR12, NR34)}

/* NR, the W rows per tile, is as large as the registers allow: more rows
 * in flight stream faster (AVX-512, 1 thread, bf16 K=4096: NR 2/4/8 gave
 * 22/30/33 GB/s). AVX-512 has 32 registers: MB·NR accumulators + NR + 1;
 * AVX2 has 16. */
DEF_ISA(s1, , tile1, 4, 4)
DEF_ISA(v2, VX_TARGET_AVX2, tile256, 4, 2)
DEF_ISA(v5, VX_TARGET_AVX512, tile512, 8, 4)

/* tiles[isa][dtype F32/F16/BF16][MB − 1] */
static const tile_set tiles[3][3][4] = {SETS(s1, 4, 4), SETS(v2, 4, 2), SETS(v5, 8, 4)};

/* y[:, n0:n1] for all M rows, one thread. Blocked for the caches: blocks of
 * xb x-rows (XB_BYTES) against groups of nt W rows (256 KiB) that stay in
 * L2 while every 4 rows of the x block pass over them. Without the x blocks
 * (x re-read from L3 or memory per W group) bf16 at K = 4096 fell from ~170
 * to ~90 GFLOP/s per core by M = 2500. */
static void linear_stream(int isa, float *y, const float *x, int64_t M, const vx_mat *W, const float *bias,
                          int64_t n0, int64_t n1) {
    int64_t K = W->cols, N = W->rows;
    size_t es = vx_dtype_size(W->dtype);
    int di = W->dtype == VX_F32 ? 0 : W->dtype == VX_F16 ? 1 : 2;
    int64_t nt = K > 0 ? (int64_t)(256 * 1024 / (K * es)) / 8 * 8 : n1 - n0;
    int64_t xb = K > 0 ? (int64_t)(XB_BYTES / (K * sizeof(float))) / 4 * 4 : M;
    if (nt < 8) nt = 8;
    if (xb < 4) xb = 4;
    for (int64_t m0 = 0; m0 < M; m0 += xb) {
        int64_t m1 = m0 + xb < M ? m0 + xb : M;
        for (int64_t a = n0; a < n1; a += nt) {
            int64_t b = a + nt < n1 ? a + nt : n1;
            for (int64_t m = m0; m < m1; m += 4) {
                int mb = m1 - m < 4 ? (int)(m1 - m) : 4;
                const tile_set *ts = &tiles[isa][di][mb - 1];
                const float *xm = x + m * K;
                float *ym = y + m * N;
                int64_t n = a;
                for (; n + ts->nr <= b; n += ts->nr)
                    ts->wide(xm, K, (const char *)W->data + (size_t)n * K * es, K, ym + n, N, bias ? bias + n : NULL);
                for (; n < b; n++)
                    ts->one(xm, K, (const char *)W->data + (size_t)n * K * es, K, ym + n, N, bias ? bias + n : NULL);
            }
        }
    }
}

/* Streaming on the pool, split as vx_linear_split says (isa.h). */
typedef struct {
    int isa;
    float *y;
    const float *x;
    int64_t M;
    const vx_mat *W;
    const float *bias;
    vx_linear_split split;
} linear_job;

static void linear_chunk(void *ctx, int64_t c) {
    const linear_job *j = ctx;
    const int64_t K = j->W->cols, N = j->W->rows;
    int64_t a, b;
    vx_linear_split_span(&j->split, c, &a, &b);
    if (j->split.by_rows)
        linear_stream(j->isa, j->y + a * N, j->x + a * K, b - a, j->W, j->bias, 0, N);
    else
        linear_stream(j->isa, j->y, j->x, j->M, j->W, j->bias, a, b);
}

/* Large M, bf16/f16 W: chunks of PANEL rows of W, each converted into its
 * thread's f32 scratch and sgemm'd. Returns 0 if scratch memory was not
 * available (the caller then streams). */
typedef struct {
    float *y;
    const float *x;
    int64_t M;
    const vx_mat *W;
    const float *bias;
    float *scratch; /* PANEL × K floats per pool slot */
} panels_job;

static void panel_chunk(void *ctx, int64_t c) {
    const panels_job *j = ctx;
    const int64_t K = j->W->cols, N = j->W->rows, n = c * PANEL, rows = N - n < PANEL ? N - n : PANEL;
    float *buf = j->scratch + (size_t)vx_pool_slot() * PANEL * (size_t)K;
    vx_to_f32(buf, (const char *)j->W->data + (size_t)n * K * vx_dtype_size(j->W->dtype), j->W->dtype,
              (size_t)(rows * K));
    sgemm1(0, 1, j->M, rows, K, 1.0f, j->x, K, buf, K, 0.0f, j->y + n, N);
    if (j->bias)
        for (int64_t m = 0; m < j->M; m++) vx_add(j->y + m * N + n, j->bias + n, rows);
}

static int linear_panels(float *y, const float *x, int64_t M, const vx_mat *W, const float *bias, int nthreads) {
    const int64_t K = W->cols, N = W->rows, chunks = (N + PANEL - 1) / PANEL;
    if (nthreads > chunks) nthreads = (int)chunks;
    panels_job j = {y, x, M, W, bias, malloc((size_t)nthreads * PANEL * (size_t)K * sizeof(float))};
    if (!j.scratch) return 0;
    vx_pool_run(nthreads, chunks, panel_chunk, &j);
    free(j.scratch);
    return 1;
}

/* Without AVX-512 the 16-register AVX2 tiles are no match for OpenBLAS
 * from GEMM_MIN_M rows on. With AVX-512 it depends on the core OpenBLAS
 * runs: its AVX2 Haswell core loses to the tiles at every M, its AVX-512
 * cores win from ~128 rows (f32) / ~256 rows (bf16/f16 panels). */
static int64_t gemm_min_m(int isa, vx_dtype dt) {
    if (isa < VX_ISA_AVX512) return GEMM_MIN_M;
    vx_blas_init();
    if (!blas_avx512_core) return INT64_MAX;
    return dt == VX_F32 ? 128 : 256;
}

/* x rows from which the packed GEMM (gemm_packed.c) replaces the streaming
 * tiles on AVX-512. Measured (2 threads, K=1024 N=4096, GFLOP/s, tiles vs
 * packed): bf16 activations M=24 339/387, 32 367/441, 64 387/546; f32
 * M=32 279/208, 64 320/261 (packing W costs what M rows cannot yet repay);
 * at M=1400 packed f32 reaches 316-437 and bf16 541-869. */
static int64_t packed_min_m(int isa, const vx_mat *W) {
    if (!vx_gemm_packed_supported(isa, 0)) return INT64_MAX;
    if (W->act_bf16 && vx_gemm_packed_supported(isa, 1)) return 32;
    return 128;
}

void vx_linear_isa(int isa, float *y, const float *x, int64_t M, const vx_mat *W, const float *bias,
                   int nthreads) {
    if (W->dtype == VX_Q8 || W->dtype == VX_Q8D) {
        vx_linear_q8_isa(isa, y, x, M, W, bias, nthreads);
        return;
    }
    if (W->dtype == VX_Q4) {
        vx_linear_q4_isa(isa, y, x, M, W, bias, nthreads);
        return;
    }
    int64_t K = W->cols, N = W->rows;
    if (M <= 0 || N <= 0) return;
    if (nthreads < 1) nthreads = 1;
    if (K > 0 && M >= packed_min_m(isa, W)) {
        int bf16 = W->act_bf16 && vx_gemm_packed_supported(isa, 1);
        if (vx_gemm_packed(isa, 0, 1, M, N, K, 1.0f, x, K, W->data, W->dtype, K, 0.0f, y, N, bias, bf16, nthreads))
            return;
    }
    if (M >= GEMM_MIN_M && K > 0 && M >= gemm_min_m(isa, W->dtype)) {
        if (W->dtype == VX_F32) {
            vx_gemm_f32(0, 1, M, N, K, 1.0f, x, K, (const float *)W->data, K, 0.0f, y, N, nthreads);
            if (bias)
                for (int64_t m = 0; m < M; m++) vx_add(y + m * N, bias, N);
            return;
        }
        if (linear_panels(y, x, M, W, bias, nthreads)) return;
    }
    /* Below ~1 MFLOP the thread start-up costs more than it saves. */
    if ((double)M * N * K < (1 << 18)) nthreads = 1;
    if (nthreads == 1) {
        linear_stream(isa, y, x, M, W, bias, 0, N);
        return;
    }
    linear_job j = {isa, y, x, M, W, bias, vx_linear_split_of(M, N, nthreads)};
    vx_pool_run(nthreads, j.split.chunks, linear_chunk, &j);
}

void vx_linear(float *y, const float *x, int64_t M, const vx_mat *W, const float *bias, int nthreads) {
    vx_linear_isa(vx_cpu_isa(), y, x, M, W, bias, nthreads);
}

/* Fewer rows than every threshold at which vx_linear_isa leaves its row-exact
 * paths (GEMM_MIN_M, packed_min_m ≥ 32, matmul_q8.c's Q8_PANEL_MIN_M = 32). */
#define ROWS_EXACT_MAX (GEMM_MIN_M - 1)

void vx_linear_rows(float *y, const float *x, int64_t M, const vx_mat *W, const float *bias, int nthreads) {
    const int isa = vx_cpu_isa();
    const int64_t K = W->cols, N = W->rows;
    for (int64_t m = 0; m < M; m += ROWS_EXACT_MAX) {
        const int64_t rows = M - m < ROWS_EXACT_MAX ? M - m : ROWS_EXACT_MAX;
        vx_linear_isa(isa, y + m * N, x + m * K, rows, W, bias, nthreads);
    }
}
