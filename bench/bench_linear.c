/* vx_linear throughput: decode shapes (GB/s of weight streamed) and one
 * prefill shape (GFLOP/s).
 * Usage: bench_linear [threads=2] [seconds per case=0.3] [isa: 0 scalar, 1 AVX2, 2 AVX-512] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernels/isa.h"
#include "kernels/kernels.h"

static int isa;

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static void run(vx_dtype dt, int64_t M, int64_t K, int64_t N, int threads, double budget) {
    size_t es = vx_dtype_size(dt);
    void *w = malloc((size_t)(N * K) * es);
    float *x = malloc((size_t)(M * K) * sizeof(float)), *y = malloc((size_t)(M * N) * sizeof(float));
    float *b = calloc((size_t)N, sizeof(float));
    for (int64_t i = 0; i < M * K; i++) x[i] = (float)(i % 13) * 0.01f;
    if (dt == VX_F32)
        for (int64_t i = 0; i < N * K; i++) ((float *)w)[i] = (float)(i % 7) * 0.01f;
    else
        for (int64_t i = 0; i < N * K; i++)
            ((uint16_t *)w)[i] = dt == VX_BF16 ? vx_f32_to_bf16((float)(i % 7) * 0.01f)
                                               : vx_f32_to_f16((float)(i % 7) * 0.01f);
    vx_mat W = {dt, N, K, w};
    /* A decode step streams its weights from memory, but one 8 MB matrix
     * would stay in a 32 MB L3: cycle through 64 MB of copies (decode
     * shapes only; the prefill shape is compute-bound either way). */
    int copies = (size_t)(N * K) * es < (64u << 20) ? (int)((64u << 20) / ((size_t)(N * K) * es)) : 1;
    if (M > 16) copies = 1;
    void **ws = malloc(sizeof(void *) * copies);
    ws[0] = w;
    for (int c = 1; c < copies; c++) {
        ws[c] = malloc((size_t)(N * K) * es);
        memcpy(ws[c], w, (size_t)(N * K) * es);
    }
    vx_linear_isa(isa, y, x, M, &W, b, threads); /* warm-up */
    /* The host is shared and memory bandwidth is noisy: best of 5 rounds. */
    double per = 1e30;
    int iters = 0;
    for (int round = 0; round < 5; round++) {
        int n = 0;
        double t0 = now(), t;
        do {
            W.data = ws[iters++ % copies];
            vx_linear_isa(isa, y, x, M, &W, b, threads);
            n++;
            t = now() - t0;
        } while (t < budget / 5);
        if (t / n < per) per = t / n;
    }
    printf("%-4s M=%-4lld K=%-5lld N=%-5lld  %8.3f ms  %6.1f GB/s of W  %6.1f GFLOP/s\n", vx_dtype_name(dt),
           (long long)M, (long long)K, (long long)N, per * 1e3, (double)(N * K) * es / per / 1e9,
           2.0 * M * N * K / per / 1e9);
    for (int c = 1; c < copies; c++) free(ws[c]);
    free(ws), free(w), free(x), free(y), free(b);
}

int main(int argc, char **argv) {
    int threads = argc > 1 ? atoi(argv[1]) : 2;
    double budget = argc > 2 ? atof(argv[2]) : 0.3;
    isa = argc > 3 ? atoi(argv[3]) : vx_cpu_isa(); /* 0 scalar, 1 AVX2, 2 AVX-512 */
    if (isa > vx_cpu_isa()) isa = vx_cpu_isa();
    printf("bench_linear: %d threads, isa %d (avx2 %d avx512 %d)\n", threads, isa, vx_cpu_has_avx2(), vx_cpu_has_avx512());
    static const vx_dtype dts[] = {VX_BF16, VX_F16, VX_F32};
    for (int d = 0; d < 3; d++)
        for (int64_t M = 1; M <= 2; M++) {
            run(dts[d], M, 1024, 4096, threads, budget);
            run(dts[d], M, 4096, 1024, threads, budget);
        }
    run(VX_BF16, 4, 1024, 4096, threads, budget);
    run(VX_BF16, 8, 1024, 4096, threads, budget);
    run(VX_BF16, 16, 1024, 4096, threads, budget);
    for (int d = 0; d < 3; d++) run(dts[d], 512, 1024, 4096, threads, budget);
    return 0;
}
