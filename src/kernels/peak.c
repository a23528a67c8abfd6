/* The machine's limits that the kernels are measured against (vocis bench
 * peak): memory read bandwidth and the register-only multiply rates. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "base/hugemem.h"
#include "base/pool.h"
#include "base/threads.h"
#include "kernels/isa.h"

#define VX_TARGET_AVX512BF16_P __attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16")))

/* The reads prefetch PF_AHEAD bytes ahead into L2 and the buffer sits on huge
 * pages, as the decode kernels stream their weights: without that the probe
 * measured less than what those kernels read (a limit below the figures). */
#define PF_AHEAD 4096

static VX_TARGET_AVX512 double read_sum512(const float *p, size_t n) {
    __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    size_t i = 0;
    for (; i + 64 <= n; i += 64) {
        _mm_prefetch((const char *)(p + i) + PF_AHEAD, _MM_HINT_T1);
        _mm_prefetch((const char *)(p + i) + PF_AHEAD + 64, _MM_HINT_T1);
        _mm_prefetch((const char *)(p + i) + PF_AHEAD + 128, _MM_HINT_T1);
        _mm_prefetch((const char *)(p + i) + PF_AHEAD + 192, _MM_HINT_T1);
        a0 = _mm512_add_ps(a0, _mm512_loadu_ps(p + i));
        a1 = _mm512_add_ps(a1, _mm512_loadu_ps(p + i + 16));
        a2 = _mm512_add_ps(a2, _mm512_loadu_ps(p + i + 32));
        a3 = _mm512_add_ps(a3, _mm512_loadu_ps(p + i + 48));
    }
    return _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)));
}

static VX_TARGET_AVX2 double read_sum256(const float *p, size_t n) {
    __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        _mm_prefetch((const char *)(p + i) + PF_AHEAD, _MM_HINT_T1);
        _mm_prefetch((const char *)(p + i) + PF_AHEAD + 64, _MM_HINT_T1);
        a0 = _mm256_add_ps(a0, _mm256_loadu_ps(p + i));
        a1 = _mm256_add_ps(a1, _mm256_loadu_ps(p + i + 8));
        a2 = _mm256_add_ps(a2, _mm256_loadu_ps(p + i + 16));
        a3 = _mm256_add_ps(a3, _mm256_loadu_ps(p + i + 24));
    }
    return vx_hsum256(_mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)));
}

/* The read: one contiguous share per thread (a chunk each), the machine's
 * limit rather than that of some chunking. */
typedef struct {
    float *buf;
    int isa;
    int64_t n, per;
    atomic_int *sink;
} read_job;

static void fill_range(void *ctx, int64_t a, int64_t b) {
    const read_job *j = ctx;
    for (int64_t i = a; i < b; i++) j->buf[i] = 1.0f;
}

static void read_share(void *ctx, int64_t c) {
    const read_job *j = ctx;
    const int64_t a = c * j->per, b = a + j->per < j->n ? a + j->per : j->n;
    const size_t len = (size_t)(b - a);
    double s = j->isa >= VX_ISA_AVX512 ? read_sum512(j->buf + a, len) : read_sum256(j->buf + a, len);
    if (s == 0) atomic_fetch_add(j->sink, 1); /* keeps the sum; never true for the buffer of ones */
}

double vx_peak_read_gbs(size_t bytes, int reps, int nthreads) {
    size_t n = bytes / sizeof(float) / 64 * 64;
    float *buf = vx_alloc_streamed(n * sizeof(float));
    if (!buf) return 0;
    if (nthreads < 1) nthreads = 1;
    atomic_int sink = 0;
    const int64_t per = ((int64_t)n / nthreads + 63) / 64 * 64;
    read_job j = {buf, vx_cpu_isa(), (int64_t)n, per > 64 ? per : 64, &sink};
    vx_pool_for(nthreads, (int64_t)n, 64, fill_range, &j);
    const int64_t shares = ((int64_t)n + j.per - 1) / j.per;
    double best = 1e30;
    for (int r = 0; r < reps; r++) {
        double t0 = vx_now_s();
        vx_pool_run(nthreads, shares, read_share, &j);
        double dt = vx_now_s() - t0;
        if (dt < best) best = dt;
    }
    free(buf);
    return (double)n * sizeof(float) / best / 1e9;
}

/* Independent accumulator chains (more than latency × issue width) so the
 * loop runs at the multiply units' throughput. */
static VX_TARGET_AVX512 double fma_loop512(long iters) {
    __m512 a[12], x = _mm512_set1_ps(1.0000001f), y = _mm512_set1_ps(0.9999999f);
    for (int i = 0; i < 12; i++) a[i] = _mm512_set1_ps((float)i);
    for (long k = 0; k < iters; k++)
        _Pragma("GCC unroll 12")
        for (int i = 0; i < 12; i++) a[i] = _mm512_fmadd_ps(a[i], x, y);
    __m512 s = a[0];
    for (int i = 1; i < 12; i++) s = _mm512_add_ps(s, a[i]);
    return _mm512_reduce_add_ps(s);
}

static VX_TARGET_AVX2 double fma_loop256(long iters) {
    __m256 a[12], x = _mm256_set1_ps(1.0000001f), y = _mm256_set1_ps(0.9999999f);
    for (int i = 0; i < 12; i++) a[i] = _mm256_set1_ps((float)i);
    for (long k = 0; k < iters; k++)
        _Pragma("GCC unroll 12")
        for (int i = 0; i < 12; i++) a[i] = _mm256_fmadd_ps(a[i], x, y);
    __m256 s = a[0];
    for (int i = 1; i < 12; i++) s = _mm256_add_ps(s, a[i]);
    return vx_hsum256(s);
}

static VX_TARGET_AVX512BF16_P double dpbf16_loop(long iters) {
    __m512 a[12];
    __m512bh x = (__m512bh)_mm512_set1_epi32(0x3f803f80), y = (__m512bh)_mm512_set1_epi32(0x3f803f80);
    for (int i = 0; i < 12; i++) a[i] = _mm512_set1_ps((float)i);
    for (long k = 0; k < iters; k++)
        _Pragma("GCC unroll 12")
        for (int i = 0; i < 12; i++) a[i] = _mm512_dpbf16_ps(a[i], x, y);
    __m512 s = a[0];
    for (int i = 1; i < 12; i++) s = _mm512_add_ps(s, a[i]);
    return _mm512_reduce_add_ps(s);
}

typedef struct {
    int bf16, isa;
    long iters;
    atomic_int *sink;
} flops_job;

/* One loop per chunk, one chunk per thread. */
static void flops_chunk(void *ctx, int64_t c) {
    const flops_job *j = ctx;
    double s = j->bf16 ? dpbf16_loop(j->iters) : j->isa >= VX_ISA_AVX512 ? fma_loop512(j->iters) : fma_loop256(j->iters);
    if (s == 0) atomic_fetch_add(j->sink, 1);
}

double vx_peak_gflops(int bf16, double seconds, int nthreads) {
    int isa = vx_cpu_isa();
    if (isa < VX_ISA_AVX2 || (bf16 && !vx_cpu_has_avx512bf16())) return 0;
    /* FLOP per loop iteration: 12 vectors × lanes × 2 (f32 FMA) or × 4 (bf16 pair dot) */
    double flop_it = bf16 ? 12.0 * 16 * 4 : 12.0 * (isa >= VX_ISA_AVX512 ? 16 : 8) * 2;
    long iters = 1 << 20;
    double best = 0;
    atomic_int sink = 0;
    flops_job j = {bf16, isa, iters, &sink};
    if (nthreads < 1) nthreads = 1;
    double end = vx_now_s() + seconds;
    do {
        double t0 = vx_now_s();
        vx_pool_run(nthreads, nthreads, flops_chunk, &j);
        double dt = vx_now_s() - t0;
        double r = flop_it * (double)iters * nthreads / dt / 1e9;
        if (r > best) best = r;
    } while (vx_now_s() < end);
    return best;
}
