/* `vocis bench gemv`: the linears of one T3 decode step (30 layers × q, k,
 * v, o [1024 × 1024], gate, up [4096 × 1024], down [1024 × 4096], and the
 * speech head [8194 × 1024]) in each weight format the few-row kernels
 * know — f32, bf16, q8 (the q8 mode: x in two int8 parts), q8d (the same
 * weights, x in one part) and q4 — at M = 1 and 2 rows (Turbo's single row,
 * the CFG pair), each against the read bandwidth measured in the same
 * process, and the relative error each format adds to a dot product. What
 * the speculative draft's format (precision.h vx_draft_quantize) was chosen
 * by. Attention, norms and the KV cache are not part of these figures. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/threads.h"
#include "cli/bench_limits.h"
#include "cli/bench_util.h"
#include "cli/cli.h"
#include "kernels/kernels.h"
#include "kernels/precision.h"

enum { F_F32, F_BF16, F_Q8, F_Q8D, F_Q4, F_COUNT };
static const char *const format_name[F_COUNT] = {"f32", "bf16", "q8", "q8d", "q4"};

#define STEP_MATS 7
static const int64_t layer_shape[STEP_MATS][2] = {{1024, 1024}, {1024, 1024}, {1024, 1024}, {1024, 1024},
                                                  {4096, 1024}, {4096, 1024}, {1024, 4096}};
static const int64_t head_shape[2] = {8194, 1024};

/* Deterministic weights of matrix `id`, uniform in ±1/sqrt(cols) (a trained linear's scale). */
static void fill_weights(float *w, int64_t rows, int64_t cols, unsigned id) {
    uint32_t s = 2654435761u * (id + 1);
    const float a = 1.0f / sqrtf((float)cols);
    for (int64_t i = 0; i < rows * cols; i++) {
        s = s * 1664525u + 1013904223u;
        w[i] = a * ((float)(s >> 8) * (2.0f / 16777216.0f) - 1.0f);
    }
}

static size_t format_bytes(int f, int64_t rows, int64_t cols) {
    switch (f) {
    case F_F32: return (size_t)(rows * cols) * 4;
    case F_BF16: return (size_t)(rows * cols) * 2;
    case F_Q4: return vx_q4_bytes(rows, cols);
    default: return vx_q8_bytes(rows, cols);
    }
}

/* Bytes the kernels stream for the matrix (codes and scales, no header). */
static double streamed_bytes(int f, int64_t rows, int64_t cols) {
    if (f == F_Q4) return (double)rows * (double)vx_q4_row_bytes(cols);
    if (f == F_Q8 || f == F_Q8D) return (double)rows * (double)vx_q8_row_bytes(cols);
    return (double)format_bytes(f, rows, cols);
}

/* One matrix in format f from f32 values src (buf: format_bytes). */
static vx_mat make_mat(int f, void *buf, const float *src, int64_t rows, int64_t cols, int threads) {
    vx_mat in = {.dtype = VX_F32, .rows = rows, .cols = cols, .data = src};
    switch (f) {
    case F_F32: memcpy(buf, src, format_bytes(f, rows, cols)); return (vx_mat){VX_F32, rows, cols, buf, 0};
    case F_BF16:
        vx_f32_to_bf16_n(buf, src, (size_t)(rows * cols), threads);
        return (vx_mat){VX_BF16, rows, cols, buf, 0};
    case F_Q8: return vx_q8_quantize(buf, &in, threads);
    case F_Q8D: {
        vx_mat m = vx_q8_quantize(buf, &in, threads);
        m.dtype = VX_Q8D;
        return m;
    }
    default: return vx_q4_quantize(buf, &in, threads);
    }
}

/* rms(y − exact) / rms(exact) of 64 dot products of length K on random x and w (format f). */
static double dot_rel_err(int f, int64_t K, int threads) {
    const int64_t N = 64;
    float *w = malloc(sizeof(float) * (size_t)(N * K)), *x = malloc(sizeof(float) * (size_t)K), y[64];
    void *buf = malloc(format_bytes(f, N, K));
    double e2 = 0, r2 = 0;
    if (w && x && buf) {
        fill_weights(w, N, K, 999);
        fill_weights(x, 1, K, 1000);
        vx_mat W = make_mat(f, buf, w, N, K, threads);
        vx_linear(y, x, 1, &W, NULL, 1);
        for (int64_t n = 0; n < N; n++) {
            double s = 0;
            for (int64_t k = 0; k < K; k++) s += (double)x[k] * w[n * K + k];
            e2 += (y[n] - s) * (y[n] - s), r2 += s * s;
        }
    }
    free(w), free(x), free(buf);
    return r2 > 0 ? sqrt(e2 / r2) : 0;
}

typedef struct {
    vx_mat m[30 * STEP_MATS + 1];
    void *buf[30 * STEP_MATS + 1];
    int n;
    double bytes, macs;
} step_mats;

static int step_build(step_mats *s, int f, int layers, int threads) {
    memset(s, 0, sizeof *s);
    float *src = malloc(sizeof(float) * 8194 * 1024);
    if (!src) return -1;
    for (int i = 0; i <= layers * STEP_MATS; i++) {
        const int64_t *sh = i < layers * STEP_MATS ? layer_shape[i % STEP_MATS] : head_shape;
        s->buf[i] = malloc(format_bytes(f, sh[0], sh[1]));
        if (!s->buf[i]) {
            free(src);
            return -1;
        }
        fill_weights(src, sh[0], sh[1], (unsigned)i);
        s->m[i] = make_mat(f, s->buf[i], src, sh[0], sh[1], threads);
        s->bytes += streamed_bytes(f, sh[0], sh[1]);
        s->macs += (double)sh[0] * (double)sh[1];
        s->n = i + 1;
    }
    free(src);
    return 0;
}

static void step_free(step_mats *s) {
    for (int i = 0; i < s->n; i++) free(s->buf[i]);
}

/* One step's linears for M rows: x [M, 4096] (the first K of each row), y [M, 8194]. */
static void step_run(const step_mats *s, const float *x, float *y, int M, int threads) {
    for (int i = 0; i < s->n; i++) vx_linear(y, x, M, &s->m[i], NULL, threads);
}

int bench_gemv(int argc, char **argv) {
    int threads = 0, reps = 7, layers = 30, no_limits = 0, rows = 2;
    const cli_opt opts[] = {
        {"--threads", CLI_INT, &threads, "worker threads (default: physical cores)", 1, 1024},
        {"--reps", CLI_INT, &reps, "timed steps per format and M (after one warm-up)", 1, 1000},
        {"--layers", CLI_INT, &layers, "transformer layers (T3: 30)", 1, 30},
        {"--no-limits", CLI_FLAG, &no_limits, BENCH_NO_LIMITS_HELP, 0, 0},
        {"--rows", CLI_INT, &rows, "also time this many rows (a speculative verify: 2 x (k + 1)); default 2", 1, 64},
    };
    int r = cli_parse(argc, argv, opts, (int)(sizeof opts / sizeof opts[0]),
                      "usage: vocis bench gemv [--threads N] [--reps N] [--layers L] [--rows M] [--no-limits]\n\n"
                      "The linears of one T3 decode step (L layers of q, k, v, o, gate, up, down and the\n"
                      "8194-row speech head) in each weight format: f32, bf16, q8 (x in two int8 parts, the\n"
                      "q8 mode), q8d (x in one part) and q4 (4-bit weights, the speculative draft's), at 1\n"
                      "and 2 rows: ms per step, bytes per step and the fraction of the read bandwidth\n"
                      "measured in this process; and each format's relative dot-product error.");
    if (r) return r == 1 ? 0 : 2;
    if (threads <= 0) threads = vx_default_threads();
    bench_limits lim;
    bench_limits_measure(&lim, threads, no_limits);
    printf("model: T3 decode-step linears, %d layers, %d threads (attention, norms and KV not included)\n", layers,
           threads);
    const int mmax = rows > 2 ? rows : 2;
    float *x = malloc(sizeof(float) * (size_t)mmax * 4096), *y = malloc(sizeof(float) * (size_t)mmax * 8194);
    double *t = malloc(sizeof(double) * (size_t)reps);
    if (!x || !y || !t) {
        free(x), free(y), free(t);
        return cli_error("bench", "out of memory");
    }
    fill_weights(x, mmax, 4096, 4242);
    const int counts[3] = {1, 2, rows};
    const int n_counts = rows > 2 ? 3 : 2;
    double ms_f32[3] = {0, 0, 0};
    for (int f = 0; f < F_COUNT; f++) {
        step_mats s;
        if (step_build(&s, f, layers, threads)) {
            step_free(&s);
            free(x), free(y), free(t);
            return cli_error("bench", "out of memory building the %s matrices", format_name[f]);
        }
        for (int c = 0; c < n_counts; c++) {
            const int M = counts[c];
            step_run(&s, x, y, M, threads); /* warm-up */
            for (int i = 0; i < reps; i++) {
                double t0 = vx_now_s();
                step_run(&s, x, y, M, threads);
                t[i] = vx_now_s() - t0;
            }
            const bench_stats st = bench_stats_of(t, reps);
            if (f == F_F32) ms_f32[c] = st.median;
            char name[32], note[256];
            snprintf(name, sizeof name, "gemv_%s_m%d", format_name[f], M);
            /* int8 products (q8, q8d, q4) are not bound by the f32 FMA peak: only bytes count */
            bench_work w = {s.bytes, f == F_F32 || f == F_BF16 ? 2.0 * M * s.macs : 0, 0};
            bench_limit_note(note, sizeof note, &lim, w, "step", st.median);
            bench_print_stats(name, t, reps, 1e3, 2, "ms/step", "%s; %.2fx f32's time", note,
                              ms_f32[c] > 0 ? st.median / ms_f32[c] : 0.0);
            fflush(stdout);
        }
        step_free(&s);
        printf("dot_rel_err_%s: %.2e (K=1024), %.2e (K=4096) (rms over 64 random rows, vs double)\n", format_name[f],
               dot_rel_err(f, 1024, threads), dot_rel_err(f, 4096, threads));
        fflush(stdout);
    }
    free(x), free(y), free(t);
    return 0;
}
