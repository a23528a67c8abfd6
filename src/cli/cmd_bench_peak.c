/* `vocis bench peak`: the limits of this machine that the other figures are
 * fractions of — memory read bandwidth (what decode steps stream) and the
 * register-only multiply rates of f32 FMA and bf16 dot products (what GEMMs
 * can at best reach) — plus the GEMM kernels' rate at the CFM's shapes. */
#include <stdio.h>
#include <stdlib.h>

#include "base/threads.h"
#include "cli/bench_util.h"
#include "cli/cli.h"
#include "kernels/kernels.h"

/* GFLOP/s of y[M,N] = x[M,K]·Wᵀ with W in dtype dt (act_bf16 as the bf16 mode sets it), best of reps. */
static double linear_gflops(int64_t M, int64_t N, int64_t K, vx_dtype dt, int act_bf16, int reps, int threads) {
    float *x = malloc(sizeof(float) * (size_t)(M * K)), *y = malloc(sizeof(float) * (size_t)(M * N));
    void *w = malloc((size_t)(N * K) * (dt == VX_F32 ? 4 : 2));
    double best = 0;
    if (x && y && w) {
        for (int64_t i = 0; i < M * K; i++) x[i] = (float)((i * 7) % 13 - 6) / 6.0f;
        for (int64_t i = 0; i < N * K; i++) {
            float v = (float)((i * 5) % 11 - 5) / 50.0f;
            if (dt == VX_F32) ((float *)w)[i] = v;
            else ((uint16_t *)w)[i] = vx_f32_to_bf16(v);
        }
        vx_mat W = {dt, N, K, w, act_bf16};
        for (int r = 0; r <= reps; r++) {
            double t0 = vx_now_s();
            vx_linear(y, x, M, &W, NULL, threads);
            double g = 2.0 * (double)M * (double)N * (double)K / (vx_now_s() - t0) / 1e9;
            if (r > 0 && g > best) best = g; /* r = 0: warm-up */
        }
    }
    free(x), free(y), free(w);
    return best;
}

int bench_peak(int argc, char **argv) {
    int threads = 0, mib = 1024;
    const cli_opt opts[] = {
        {"--threads", CLI_INT, &threads, "worker threads (default: physical cores)", 1, 1024},
        {"--mib", CLI_INT, &mib, "buffer for the bandwidth figure, MiB (1024: far beyond the caches)", 64, 65536},
    };
    int r = cli_parse(argc, argv, opts, (int)(sizeof opts / sizeof opts[0]),
                      "usage: vocis bench peak [--threads N] [--mib M]\n\n"
                      "This machine's limits that the other benchmarks are fractions of: memory read bandwidth\n"
                      "(1 and N threads; decode steps stream their weights at this rate at best), the\n"
                      "register-only f32 FMA and bf16 dot-product rates (the ceiling of any GEMM), and the\n"
                      "packed GEMM's rate at the CFM estimator's shape (1400 rows x 1024 x 256). Best of\n"
                      "several runs each: a limit, not a typical figure.");
    if (r) return r == 1 ? 0 : 2;
    if (threads <= 0) threads = vx_default_threads();
    printf("threads: %d (avx512 %d, avx512_bf16 %d)\n", threads, vx_cpu_has_avx512(), vx_cpu_has_avx512bf16());
    size_t bytes = (size_t)mib << 20;
    printf("mem_read_1t: %.1f GB/s (%d MiB buffer, best of 5)\n", vx_peak_read_gbs(bytes, 5, 1), mib);
    printf("mem_read: %.1f GB/s (%d threads)\n", vx_peak_read_gbs(bytes, 5, threads), threads);
    fflush(stdout);
    printf("f32_fma_peak: %.0f GFLOP/s (%d threads, registers only)\n", vx_peak_gflops(0, 0.5, threads), threads);
    if (vx_cpu_has_avx512bf16())
        printf("bf16_dot_peak: %.0f GFLOP/s (%d threads, vdpbf16ps, registers only)\n", vx_peak_gflops(1, 0.5, threads),
               threads);
    fflush(stdout);
    printf("gemm_f32: %.0f GFLOP/s (M=1400 N=1024 K=256, f32 weights)\n",
           linear_gflops(1400, 1024, 256, VX_F32, 0, 5, threads));
    printf("gemm_bf16: %.0f GFLOP/s (same shape, bf16 weights and activations)\n",
           linear_gflops(1400, 1024, 256, VX_BF16, 1, 5, threads));
    return 0;
}
