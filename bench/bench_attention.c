/* Decode attention over a long KV cache (one query row per sequence, as a
 * VibeVoice LM step): ms per layer of the CFG pair, GB/s of K/V streamed and
 * GFLOP/s (2·hd multiply-adds per key and query head, QK and PV).
 * CPU time is printed too: on a shared host, one thread's CPU time per call
 * tracks the kernel's cost better than the wall clock.
 * Usage: bench_attention [threads=2] [keys=32768] [kv: f32|bf16=bf16] [seconds=1]
 *        [heads=12] [kv heads=2] [head dim=128] [huge pages: 0|1=0] [pair in one call: 0|1=1]
 * The caches of several layers are cycled (far beyond the 32 MB L3), so K/V
 * come from memory as in a real step. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "kernels/isa.h"
#include "kernels/kernels.h"

static double clock_s(clockid_t id) {
    struct timespec t;
    clock_gettime(id, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}
static double now(void) { return clock_s(CLOCK_MONOTONIC); }

int main(int argc, char **argv) {
    int threads = argc > 1 ? atoi(argv[1]) : 2;
    int64_t nk = argc > 2 ? atoll(argv[2]) : 32768;
    int bf = argc > 3 ? !strcmp(argv[3], "bf16") : 1;
    double budget = argc > 4 ? atof(argv[4]) : 1.0;
    int huge = argc > 8 && atoi(argv[8]), fused = argc > 9 ? atoi(argv[9]) : 1;
    int H = argc > 5 ? atoi(argv[5]) : 12, Hkv = argc > 6 ? atoi(argv[6]) : 2, hd = argc > 7 ? atoi(argv[7]) : 128;
    const int64_t ks = (int64_t)Hkv * hd, n = nk * ks, qs = (int64_t)H * hd;
    const size_t es = bf ? 2 : 4, bytes = 2 * (size_t)n * es; /* K + V of one (layer, sequence) */
    int caches = (int)((512u << 20) / bytes);
    caches = caches < 2 ? 2 : caches > 56 ? 56 : caches & ~1;
    void **kv = malloc(sizeof(void *) * (size_t)caches);
    for (int c = 0; c < caches; c++) {
        if (huge) {
            if (posix_memalign(&kv[c], 2u << 20, bytes)) return fprintf(stderr, "out of memory\n"), 1;
            madvise(kv[c], bytes, MADV_HUGEPAGE);
        } else if (!(kv[c] = malloc(bytes)))
            return fprintf(stderr, "out of memory\n"), 1;
        for (int64_t i = 0; i < 2 * n; i++) {
            float x = 0.01f * (float)((i * 7 + c) % 13 - 6);
            if (bf) ((uint16_t *)kv[c])[i] = vx_f32_to_bf16(x);
            else ((float *)kv[c])[i] = x;
        }
    }
    float *q = malloc(sizeof(float) * (size_t)(2 * qs)), *o = malloc(sizeof(float) * (size_t)(2 * qs));
    for (int64_t i = 0; i < 2 * qs; i++) q[i] = 0.05f * (float)(i % 11 - 5);
    const vx_dtype dt = bf ? VX_BF16 : VX_F32;
    const float scale = 0.0883883f;
    double best = 1e30, best_cpu = 1e30;
    int it = 0;
    for (int round = 0; round < 5; round++) {
        int calls = 0;
        double t0 = now(), c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID), t;
        do { /* one layer of the pair: two calls, one per sequence */
            if (fused) { /* both sequences in one call (one pool region), as vx_tf_forward does */
                vx_attn_seq at[2];
                for (int s = 0; s < 2; s++, it++) {
                    const char *base = kv[it % caches];
                    at[s] = (vx_attn_seq){o + s * qs, q + s * qs, base, base + (size_t)n * es, nk};
                }
                vx_attention_kv_seqs(at, 2, dt, 1, H, Hkv, hd, ks, scale, 1, threads);
            } else
                for (int s = 0; s < 2; s++, it++) {
                    const char *base = kv[it % caches];
                    vx_attention_kv(o + s * qs, q + s * qs, base, base + (size_t)n * es, dt, 1, nk, H, Hkv, hd, ks,
                                    scale, 1, threads);
                }
            calls++;
            t = now() - t0;
        } while (t < budget / 5);
        if (t / calls < best) best = t / calls;
        double cpu = (clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0) / calls;
        if (cpu < best_cpu) best_cpu = cpu;
    }
    printf("attention decode pair (%s): %d threads, %lld keys, %d/%d heads, hd %d, %s K/V: %.3f ms per layer, "
           "%.1f GB/s of K/V, %.1f GFLOP/s; CPU time %.3f ms per layer (all threads)\n",
           fused ? "one call" : "two calls", threads, (long long)nk, H, Hkv, hd, bf ? "bf16" : "f32", best * 1e3, 2.0 * bytes / best / 1e9,
           2.0 * 2 * 2.0 * nk * H * hd / best / 1e9, best_cpu * 1e3);
    for (int c = 0; c < caches; c++) free(kv[c]);
    free(kv), free(q), free(o);
    return 0;
}
