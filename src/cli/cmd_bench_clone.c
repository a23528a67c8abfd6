/* `vocis bench clone`: the whole voice clone (prepare_conditionals: resampling,
 * voice encoder, S3 tokens for T3 and S3Gen, reference mel, CAMPPlus) on
 * random-weight networks at the release's dimensions (f32, as the release
 * stores them) and a synthetic reference. Prints `clone: N ms` (median over
 * the repetitions, with min / max) and one line per part. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/threads.h"
#include "cli/bench_util.h"
#include "cli/cli.h"
#include "models/chatterbox/clone.h"

/* A voice-like test signal: a gliding harmonic tone with a syllable envelope and a little noise. */
static void synth_reference(float *x, int64_t n, int sr) {
    uint64_t s = 88172645463325252ull;
    double phase = 0.0;
    for (int64_t i = 0; i < n; i++) {
        const double t = (double)i / sr;
        const double f0 = 140.0 + 30.0 * sin(2 * M_PI * 0.7 * t);
        phase += 2 * M_PI * f0 / sr;
        double v = 0.0;
        for (int h = 1; h <= 8; h++) v += sin(h * phase) / h;
        const double env = 0.5 + 0.5 * sin(2 * M_PI * 3.0 * t);
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        const double noise = ((double)(s >> 11) / 9007199254740992.0 - 0.5) * 0.02;
        x[i] = (float)(0.25 * env * v + noise);
    }
}

/* median (min, max) of v[0..n) seconds, in ms */
static void print_ms(const char *name, const double *v, int n) { bench_print_stats(name, v, n, 1e3, 1, "ms", NULL); }

int bench_clone(int argc, char **argv) {
    int synthetic = 0, threads = 0, reps = 5;
    float seconds = 10.0f;
    const cli_opt opts[] = {
        {"--synthetic", CLI_FLAG, &synthetic, "random weights at the release's dimensions (required)", 0, -1},
        {"--seconds", CLI_FLOAT, &seconds, "length of the synthetic reference (10 s; upstream uses up to 10 s)", 0.5,
         60},
        {"--reps", CLI_INT, &reps, "timed repetitions after one warm-up run (5)", 1, 100},
        {"--threads", CLI_INT, &threads, "worker threads (default: physical cores)", 1, 1024},
    };
    int r = cli_parse(argc, argv, opts, (int)(sizeof opts / sizeof opts[0]),
                      "usage: vocis bench clone --synthetic [--seconds S] [--reps N] [--threads N]\n\n"
                      "Times one voice clone from a 24 kHz reference: soxr and sinc resampling, voice\n"
                      "encoder (3-layer LSTM 256), S3 tokenizer (1280 wide, 6 blocks) for the 6 s T3 prompt\n"
                      "and the 10 s S3Gen prompt, 24 kHz reference mel, CAMPPlus x-vector.");
    if (r) return r == 1 ? 0 : 2;
    if (!synthetic) return cli_error("bench clone", "--synthetic is required (random weights at release dims)"), 2;
    if (threads <= 0) threads = vx_default_threads();

    vx_err err = {0};
    vx_cb_cloner c = {0};
    c.t3_prompt_len = 150;
    const double t0 = vx_now_s();
    vocis_status st = vx_ve_random(40, 256, 256, 3, 11, &c.ve, &err);
    if (!st) st = vx_s3tok_random(128, 1280, 20, 6, 12, &c.tok, &err);
    if (!st) st = vx_campplus_random(128, 32, 4, 192, 13, &c.cam, &err);
    if (st) {
        vx_cb_cloner_free(&c);
        return cli_error("bench clone", "%s", err.msg);
    }
    printf("setup: %.0f ms (random weights)\n", 1e3 * (vx_now_s() - t0));
    const int64_t n = (int64_t)(seconds * VX_CLONE_SR);
    float *x = malloc(sizeof(float) * (size_t)n);
    double *tv[7];
    for (int i = 0; i < 7; i++) tv[i] = calloc((size_t)reps, sizeof(double));
    int rc = 0;
    if (!x || !tv[0] || !tv[1] || !tv[2] || !tv[3] || !tv[4] || !tv[5] || !tv[6]) {
        rc = cli_error("bench clone", "out of memory");
        goto done;
    }
    synth_reference(x, n, VX_CLONE_SR);
    printf("threads: %d\nreference: %.1f s\n", threads, seconds);
    for (int k = -1; k < reps; k++) { /* k = -1: warm-up */
        vx_cb_conds conds;
        vx_clone_timing t;
        if ((st = vx_cb_clone(&c, x, n, 0.5f, &conds, &t, NULL, 0, threads, &err))) {
            rc = cli_error("bench clone", "%s", err.msg);
            goto done;
        }
        if (k == -1) printf("prompt tokens: %zu (T3), %zu (S3Gen); prompt mel frames: %lld\n",
                            conds.cond_prompt_speech_tokens.n, conds.prompt_token.n,
                            (long long)conds.prompt_feat.shape[1]);
        vx_cb_conds_free(&conds);
        if (k < 0) continue;
        tv[0][k] = t.total, tv[1][k] = t.resample, tv[2][k] = t.voice_encoder, tv[3][k] = t.t3_tokens;
        tv[4][k] = t.ref_mel, tv[5][k] = t.campplus, tv[6][k] = t.s3gen_tokens;
    }
    print_ms("clone", tv[0], reps);
    print_ms("resample", tv[1], reps);
    print_ms("voice_encoder", tv[2], reps);
    print_ms("s3_tokens_t3", tv[3], reps);
    print_ms("ref_mel", tv[4], reps);
    print_ms("campplus", tv[5], reps);
    print_ms("s3_tokens_s3gen", tv[6], reps);
    printf("peak_rss: %.0f MiB\n", bench_peak_rss_mib());
done:
    free(x);
    for (int i = 0; i < 7; i++) free(tv[i]);
    vx_cb_cloner_free(&c);
    return rc;
}
