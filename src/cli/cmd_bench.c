/* `vocis bench WHAT`: throughput on synthetic (random-weight, real-size)
 * models, printed one figure per line as `name: value unit`. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "base/threads.h"
#include "cli/cli.h"
#include "models/chatterbox/t3.h"

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double peak_rss_mib(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_maxrss / 1024.0;
}

static int parse_dtype(const char *s, vx_dtype *dt) {
    if (!strcmp(s, "bf16")) *dt = VX_BF16;
    else if (!strcmp(s, "f16")) *dt = VX_F16;
    else if (!strcmp(s, "f32")) *dt = VX_F32;
    else return -1;
    return 0;
}

typedef struct {
    double t_first, t_last;
    int n;
} tok_timer;

static int on_token(void *user, int step, int32_t tok) {
    (void)tok;
    tok_timer *t = user;
    double now = now_s();
    if (step == 0) t->t_first = now;
    t->t_last = now;
    t->n = step + 1;
    return 0;
}

static int bench_t3(int argc, char **argv) {
    int synthetic = 0, tokens = 200, threads = 0, text_len = 40;
    const char *dtype = "bf16", *model = NULL;
    const cli_opt opts[] = {
        {"--synthetic", CLI_FLAG, &synthetic, "random weights at the release's dimensions", 0, -1},
        {"--model", CLI_STR, &model, "benchmark a real model folder instead", 0, -1},
        {"--dtype", CLI_STR, &dtype, "weight dtype of the synthetic model: bf16 (default), f16, f32", 0, -1},
        {"--tokens", CLI_INT, &tokens, "decode steps to time (200)", 2, 4000},
        {"--text-tokens", CLI_INT, &text_len, "text tokens in the prompt (40)", 1, 2000},
        {"--threads", CLI_INT, &threads, "worker threads (default: physical cores)", 1, 1024},
    };
    int r = cli_parse(argc, argv, opts, (int)(sizeof opts / sizeof opts[0]),
                      "usage: vocis bench t3 (--synthetic | --model DIR) [options]\n\n"
                      "Times T3: prefill of the CFG pair (34 conditioning + text + 2 BOS positions) and\n"
                      "cached decode steps of the pair (one step = one speech token).");
    if (r) return r == 1 ? 0 : 2;
    vx_dtype dt;
    if (parse_dtype(dtype, &dt)) return cli_error("bench", "--dtype must be bf16, f16 or f32"), 2;
    if (!synthetic == !model) return cli_error("bench", "give exactly one of --synthetic and --model DIR"), 2;
    if (threads <= 0) threads = vx_default_threads();

    vx_err err = {0};
    vx_cb_config cfg;
    vx_cb_config_default(&cfg);
    vx_t3 t3;
    double t0 = now_s();
    vocis_status st;
    if (synthetic) {
        vx_weights *w;
        st = vx_t3_synthetic_weights(dt, 1234, &w, &err);
        if (st == VOCIS_OK && (st = vx_t3_init(&t3, w, &cfg, &err)) == VOCIS_OK) t3.w = w;
        else if (st == VOCIS_OK) vx_weights_close(w);
    } else {
        char path[4200];
        st = vx_cb_config_load(&cfg, model, NULL, &err);
        snprintf(path, sizeof path, "%s/t3_cfg.safetensors", model);
        if (st == VOCIS_OK) st = vx_t3_load(&t3, path, &cfg, &err);
    }
    if (st != VOCIS_OK) return cli_error("bench", "%s", err.msg);
    double t_load = now_s() - t0;

    /* A fixed, valid conditioning and text; sampling continues until `tokens`
     * steps (the stop token is ignored by disabling it via max tokens only). */
    float *spk = calloc((size_t)t3.speaker_dim, sizeof(float));
    int64_t prompt[150];
    int32_t *text = malloc(sizeof(int32_t) * (size_t)(text_len + 2));
    for (int i = 0; i < t3.speaker_dim; i++) spk[i] = 0.0625f * (float)((i * 37) % 17 - 8);
    for (int i = 0; i < 150; i++) prompt[i] = (i * 131) % 6561;
    text[0] = cfg.start_text_token;
    for (int i = 1; i <= text_len; i++) text[i] = 1 + (i * 53) % 600;
    text[text_len + 1] = cfg.stop_text_token;
    vx_t3_cond c = {spk, prompt, 150, 0.5f};
    tok_timer tt = {0};
    vx_t3_sampling s = {0.8f, 0.5f, 0.05f, 1.0f, 1.2f, tokens, 0, on_token, &tt};
    vx_rng rng;
    vx_rng_seed(&rng, 0);
    int32_t *out = NULL;
    int n = 0;
    double t1 = now_s();
    st = vx_t3_generate(&t3, &c, text, text_len + 2, &s, &rng, threads, &out, &n, &err);
    if (st != VOCIS_OK) {
        free(spk), free(text);
        vx_t3_free(&t3);
        return cli_error("bench", "%s", err.msg);
    }
    int L0 = vx_t3_cond_len(&t3, &c) + text_len + 2;
    printf("model: %s T3, %d layers, hidden %d, %s weights, %d threads\n", synthetic ? "synthetic" : model,
           t3.tf.n_layers, t3.dim, synthetic ? dtype : "file", threads);
    printf("load: %.2f s\n", t_load);
    printf("prefill: %.1f tokens/s (%d positions x 2 CFG rows in %.3f s)\n", L0 / (tt.t_first - t1), L0,
           tt.t_first - t1);
    if (tt.n > 1)
        printf("decode: %.2f tokens/s (%d CFG-pair steps)\n", (tt.n - 1) / (tt.t_last - tt.t_first), tt.n - 1);
    if (tt.n < tokens) printf("note: generation stopped at the stop token after %d steps\n", tt.n);
    printf("peak_rss: %.0f MiB\n", peak_rss_mib());
    free(out), free(spk), free(text);
    vx_t3_free(&t3);
    return 0;
}

int cmd_bench(int argc, char **argv) {
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        FILE *f = argc < 2 ? stderr : stdout;
        fprintf(f, "usage: vocis bench WHAT [options]   (vocis bench WHAT --help)\n\n"
                   "  t3     Chatterbox T3 prefill and decode throughput\n");
        return argc < 2 ? 2 : 0;
    }
    if (!strcmp(argv[1], "t3")) return bench_t3(argc - 1, argv + 1);
    return cli_error("bench", "unknown benchmark '%s' (see vocis bench --help)", argv[1]), 2;
}
