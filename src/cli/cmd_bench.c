/* `vocis bench WHAT`: throughput on synthetic (random-weight, real-size)
 * models, printed one figure per line as `name: value unit`. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "base/threads.h"
#include "cli/bench_util.h"
#include "cli/cli.h"
#include "kernels/precision.h"
#include "models/chatterbox/t3.h"
#include "models/chatterbox/t3_gpt2.h"
#include "models/vibevoice/lm.h"

typedef struct {
    double t_first, t_last;
    int n;
} tok_timer;

static int on_token(void *user, int step, int32_t tok) {
    (void)tok;
    tok_timer *t = user;
    double now = bench_now_s();
    if (step == 0) t->t_first = now;
    t->t_last = now;
    t->n = step + 1;
    return 0;
}

/* Turbo / Nano T3 (GPT-2 backbone, batch 1, no CFG) on synthetic weights: prefill of
 * [speaker | 375 prompt tokens (a 15 s reference) | text | BOS], then cached decode steps.
 * The stop token is disabled so that exactly `tokens` tokens are drawn. */
static int bench_t3_gpt2(int variant, vx_dtype dt, const char *dtype, int prec, int tokens, int text_len,
                         int threads) {
    enum { PROMPT = 375 };
    vx_err err = {0};
    vx_t3_gpt2 t;
    double t0 = bench_now_s();
    vocis_status st = vx_t3_gpt2_synthetic(&t, variant == BENCH_NANO, dt, prec, 1234, &err);
    if (st) return cli_error("bench", "%s", err.msg);
    t.cfg.stop_speech_token = -1; /* every run makes exactly `tokens` tokens */
    const double t_load = bench_now_s() - t0;
    float *spk = calloc((size_t)t.speaker_dim, sizeof(float));
    int64_t prompt[PROMPT];
    int32_t *text = malloc(sizeof(int32_t) * (size_t)text_len);
    if (!spk || !text) {
        free(spk), free(text);
        vx_t3_gpt2_free(&t);
        return cli_error("bench", "out of memory");
    }
    for (int i = 0; i < t.speaker_dim; i++) spk[i] = 0.0625f * (float)((i * 37) % 17 - 8);
    for (int i = 0; i < PROMPT; i++) prompt[i] = (i * 131) % 6561;
    for (int i = 0; i < text_len; i++) text[i] = 1 + (i * 53) % 600;
    tok_timer tt = {0};
    /* upstream generate()'s defaults: temperature 0.8, top-k 1000, top-p 0.95, repetition penalty 1.2 */
    const vx_turbo_sampling s = {0.8f, 1000, 0.95f, 1.2f, tokens - 1, 0, on_token, &tt, NULL};
    vx_rng rng;
    vx_rng_seed(&rng, 0);
    int32_t *out = NULL;
    int n = 0;
    const double t1 = bench_now_s();
    st = vx_t3_gpt2_generate(&t, spk, prompt, PROMPT, text, text_len, &s, &rng, threads, &out, &n, &err);
    if (st) {
        free(spk), free(text);
        vx_t3_gpt2_free(&t);
        return cli_error("bench", "%s", err.msg);
    }
    const int L0 = vx_t3_gpt2_cond_len(PROMPT) + text_len + 1;
    printf("model: synthetic %s T3 (GPT-2), %d layers, hidden %d, %d heads, %s weights, %d threads\n",
           bench_variant_name(variant), t.n_layers, t.dim, t.n_heads, dtype, threads);
    printf("precision: %s (matrices computed as %s)\n", vx_precision_name(prec), vx_dtype_name(t.layers[0].attn.dtype));
    printf("load: %.2f s\n", t_load);
    printf("prefill: %.1f tokens/s (%d positions x 1 row, no CFG, in %.3f s)\n", L0 / (tt.t_first - t1), L0,
           tt.t_first - t1);
    if (tt.n > 1) printf("decode: %.2f tokens/s (%d steps)\n", (tt.n - 1) / (tt.t_last - tt.t_first), tt.n - 1);
    printf("peak_rss: %.0f MiB\n", bench_peak_rss_mib());
    printf("rss_now: %.0f MiB\n", bench_rss_now_mib());
    free(out), free(spk), free(text);
    vx_t3_gpt2_free(&t);
    return 0;
}

static int bench_t3(int argc, char **argv) {
    int synthetic = 0, tokens = 200, threads = 0, text_len = 40;
    const char *dtype = "f32", *model = NULL, *precision = NULL, *variant_s = NULL;
    const cli_opt opts[] = {
        {"--synthetic", CLI_FLAG, &synthetic, "random weights at the release's dimensions", 0, -1},
        {"--variant", CLI_STR, &variant_s, "synthetic model: " BENCH_VARIANT_HELP, 0, -1},
        {"--model", CLI_STR, &model, "benchmark a real model folder instead", 0, -1},
        {"--dtype", CLI_STR, &dtype, "stored dtype of the synthetic model: f32 (default, as released), bf16, f16", 0,
         -1},
        {"--precision", CLI_STR, &precision, CLI_PRECISION_HELP, 0, -1},
        {"--tokens", CLI_INT, &tokens, "decode steps to time (200)", 2, 4000},
        {"--text-tokens", CLI_INT, &text_len, "text tokens in the prompt (40)", 1, 2000},
        {"--threads", CLI_INT, &threads, "worker threads (default: physical cores)", 1, 1024},
    };
    int r = cli_parse(argc, argv, opts, (int)(sizeof opts / sizeof opts[0]),
                      "usage: vocis bench t3 (--synthetic | --model DIR) [options]\n\n"
                      "Times T3: prefill of the CFG pair (34 conditioning + text + 2 BOS positions) and\n"
                      "cached decode steps of the pair (one step = one speech token). --variant turbo|nano:\n"
                      "the GPT-2 T3, batch 1 without CFG (376 conditioning + text + 1 BOS positions).\n"
                      "Synthetic runs disable the stop token, so exactly --tokens tokens are drawn.");
    if (r) return r == 1 ? 0 : 2;
    const int variant = bench_parse_variant(variant_s);
    if (variant < 0) return cli_error("bench", "--variant must be english, mtl, turbo or nano"), 2;
    if (variant_s && model) return cli_error("bench", "--variant applies to --synthetic models only"), 2;
    vx_dtype dt;
    if (bench_parse_dtype(dtype, &dt)) return cli_error("bench", "--dtype must be bf16, f16 or f32"), 2;
    if (!synthetic == !model) return cli_error("bench", "give exactly one of --synthetic and --model DIR"), 2;
    int prec;
    if (cli_precision("bench", precision, &prec)) return 2;
    prec = vx_precision_resolve(prec);
    if (threads <= 0) threads = vx_default_threads();
    if (variant == BENCH_TURBO || variant == BENCH_NANO)
        return bench_t3_gpt2(variant, dt, dtype, prec, tokens, text_len, threads);

    vx_err err = {0};
    vx_cb_config cfg;
    vx_cb_config_default(&cfg);
    vx_t3 t3;
    double t0 = bench_now_s();
    vocis_status st;
    if (synthetic) {
        vx_weights *w;
        st = vx_t3_synthetic_weights_vocab(dt, 1234, variant == BENCH_MTL ? VX_T3_MTL_TEXT_VOCAB : 704, &w, &err);
        if (st == VOCIS_OK) vx_weights_set_precision(w, prec); /* the same load-time conversion as a file */
        if (st == VOCIS_OK && (st = vx_t3_init(&t3, w, &cfg, &err)) == VOCIS_OK) t3.w = w;
        else if (st == VOCIS_OK) vx_weights_close(w);
        if (st == VOCIS_OK) t3.cfg.stop_speech_token = -1; /* exactly `tokens` steps */
    } else {
        char path[4200];
        st = vx_cb_config_load(&cfg, model, NULL, &err);
        snprintf(path, sizeof path, "%s/t3_cfg.safetensors", model);
        if (st == VOCIS_OK) st = vx_t3_load_prec(&t3, path, &cfg, prec, &err);
    }
    if (st != VOCIS_OK) return cli_error("bench", "%s", err.msg);
    double t_load = bench_now_s() - t0;

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
    double t1 = bench_now_s();
    st = vx_t3_generate(&t3, &c, text, text_len + 2, &s, &rng, threads, &out, &n, &err);
    if (st != VOCIS_OK) {
        free(spk), free(text);
        vx_t3_free(&t3);
        return cli_error("bench", "%s", err.msg);
    }
    int L0 = vx_t3_cond_len(&t3, &c) + text_len + 2;
    printf("model: %s%s T3, %d layers, hidden %d, text vocabulary %lld, %s weights, %d threads\n",
           synthetic ? "synthetic " : model, synthetic ? bench_variant_name(variant) : "", t3.tf.n_layers, t3.dim,
           (long long)t3.text_emb.rows, synthetic ? dtype : "file", threads);
    printf("precision: %s (matrices computed as %s)\n", vx_precision_name(prec), vx_dtype_name(t3.tf.layers[0].q.dtype));
    printf("load: %.2f s\n", t_load);
    printf("prefill: %.1f tokens/s (%d positions x 2 CFG rows in %.3f s)\n", L0 / (tt.t_first - t1), L0,
           tt.t_first - t1);
    if (tt.n > 1)
        printf("decode: %.2f tokens/s (%d CFG-pair steps)\n", (tt.n - 1) / (tt.t_last - tt.t_first), tt.n - 1);
    if (tt.n < tokens) printf("note: generation stopped at the stop token after %d steps\n", tt.n);
    printf("peak_rss: %.0f MiB\n", bench_peak_rss_mib());
    printf("rss_now: %.0f MiB\n", bench_rss_now_mib());
    free(out), free(spk), free(text);
    vx_t3_free(&t3);
    return 0;
}

/* Time decode steps of nseq sequences with `ctx` positions already cached
 * (cache contents are filler: the cost does not depend on the values).
 * Each step computes only the 4 logits the VibeVoice loop needs. */
static vocis_status time_decode(const vx_vv_lm *lm, int nseq, int64_t ctx, int threads, double *steps_per_s,
                                vx_err *err) {
    const vx_tf *tf = &lm->tf;
    const int H = tf->dim;
    vx_kv_cache kv;
    VX_TRY(vx_kv_init(&kv, tf, nseq, 0, err));
    vocis_status st = vx_kv_reserve(&kv, ctx + 64, err);
    float *x = malloc(sizeof(float) * (size_t)nseq * H), *h = malloc(sizeof(float) * (size_t)nseq * H);
    if (!st && (!x || !h)) st = vx_fail(err, VOCIS_E_NOMEM, "out of memory");
    for (int l = 0; !st && l < tf->n_layers; l++)
        for (int q = 0; q < nseq; q++) {
            float *k = kv.k[(size_t)l * nseq + q], *v = kv.v[(size_t)l * nseq + q];
            for (int64_t i = 0; i < ctx * kv.kv_dim; i++) k[i] = v[i] = 0.01f * (float)((i * 7) % 13 - 6);
        }
    for (int q = 0; q < nseq; q++) kv.len[q] = ctx;
    const int32_t ids[4] = {0, 1, 2, 3};
    float logits[4];
    int steps = 0;
    double t0 = bench_now_s(), t = t0;
    while (!st && (steps < 3 || (t - t0 < 2.0 && steps < 60))) {
        for (int i = 0; i < nseq * H; i++) x[i] = 0.01f * (float)((i + steps) % 17 - 8);
        st = vx_tf_forward(tf, &kv, NULL, nseq, 1, x, threads, NULL, NULL, err);
        for (int q = 0; !st && q < nseq; q++) {
            vx_tf_final_norm(tf, h + (size_t)q * H, x + (size_t)q * H, 1);
            vx_vv_lm_logits_subset(lm, h + (size_t)q * H, ids, 4, logits);
        }
        steps++;
        t = bench_now_s();
    }
    *steps_per_s = steps / (t - t0);
    free(x), free(h);
    vx_kv_free(&kv);
    return st;
}

static int bench_qwen2(int argc, char **argv) {
    const char *size = NULL, *dtype = "bf16";
    int threads = 0, no_long = 0;
    const cli_opt opts[] = {
        {"--synthetic", CLI_STR, &size, "random weights at the dims of VibeVoice 1.5b or 7b (required)", 0, -1},
        {"--dtype", CLI_STR, &dtype, "weight dtype: bf16 (default), f16, f32", 0, -1},
        {"--threads", CLI_INT, &threads, "worker threads (default: physical cores)", 1, 1024},
        {"--skip-long", CLI_FLAG, &no_long, "skip the 4096-token prefill and the 16K-context decodes", 0, -1},
    };
    int r = cli_parse(argc, argv, opts, (int)(sizeof opts / sizeof opts[0]),
                      "usage: vocis bench qwen2 --synthetic 1.5b|7b [--dtype bf16|f16|f32] [--threads N]\n\n"
                      "VibeVoice's Qwen2 LM: prefill throughput, and decode steps per second of one sequence or\n"
                      "of the positive/negative CFG pair (one step advances both) at 1K and 16K cached\n"
                      "positions, computing only the 4 logits the generation loop uses.");
    if (r) return r == 1 ? 0 : 2;
    if (!size) return cli_error("bench", "--synthetic 1.5b|7b is required"), 2;
    vx_dtype dt;
    if (bench_parse_dtype(dtype, &dt)) return cli_error("bench", "--dtype must be bf16, f16 or f32"), 2;
    if (threads <= 0) threads = vx_default_threads();
    vx_err err = {0};
    vx_vv_config cfg;
    vx_weights *w = NULL;
    vx_vv_lm lm;
    double t0 = bench_now_s();
    if (vx_vv_lm_preset(size, &cfg, &err) || vx_vv_lm_synthetic_weights(&cfg, dt, 1234, &w, &err) ||
        vx_vv_lm_init(&lm, w, &cfg, "model.language_model.", &err)) {
        vx_weights_close(w);
        return cli_error("bench", "%s", err.msg);
    }
    printf("model: synthetic VibeVoice-%s Qwen2, %d layers, hidden %d, %d/%d heads, %s weights, %d threads\n", size,
           lm.tf.n_layers, lm.tf.dim, lm.tf.n_heads, lm.tf.n_kv_heads, dtype, threads);
    printf("load: %.2f s\n", bench_now_s() - t0);
    fflush(stdout);
    vocis_status st = VOCIS_OK;
    const int64_t plen[2] = {512, 4096};
    for (int i = 0; i < 2 && !st; i++) {
        if (no_long && plen[i] > 1024) continue;
        vx_kv_cache kv;
        float *x = malloc(sizeof(float) * (size_t)(plen[i] * lm.tf.dim));
        if (!x || (st = vx_kv_init(&kv, &lm.tf, 1, 0, &err))) {
            free(x);
            if (!st) st = vx_fail(&err, VOCIS_E_NOMEM, "out of memory");
            break;
        }
        for (int64_t j = 0; j < plen[i] * lm.tf.dim; j++) x[j] = 0.01f * (float)(j % 23 - 11);
        double t1 = bench_now_s();
        st = vx_tf_forward(&lm.tf, &kv, NULL, 1, plen[i], x, threads, NULL, NULL, &err);
        if (!st) printf("prefill_%lld: %.1f tokens/s\n", (long long)plen[i], plen[i] / (bench_now_s() - t1));
        fflush(stdout);
        vx_kv_free(&kv);
        free(x);
    }
    const int64_t ctx[2] = {1024, 16384};
    for (int c = 0; c < 2 && !st; c++)
        for (int nseq = 1; nseq <= 2 && !st; nseq++) {
            if (no_long && ctx[c] > 1024) continue;
            double sps;
            if (!(st = time_decode(&lm, nseq, ctx[c], threads, &sps, &err)))
                printf("decode_%dseq_ctx%lldk: %.2f steps/s\n", nseq, (long long)ctx[c] / 1024, sps);
            fflush(stdout);
        }
    if (!st) {
        printf("kv_bytes_per_token: %zu B (float32 K and V, all layers, one sequence)\n", vx_kv_bytes_per_token(&lm.tf));
        printf("peak_rss: %.0f MiB\n", bench_peak_rss_mib());
    }
    vx_vv_lm_free(&lm);
    vx_weights_close(w);
    if (st) return cli_error("bench", "%s", err.msg);
    return 0;
}

int cmd_bench(int argc, char **argv) {
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        FILE *f = argc < 2 ? stderr : stdout;
        fprintf(f, "usage: vocis bench WHAT [options]   (vocis bench WHAT --help)\n\n"
                   "  t3     Chatterbox T3 prefill and decode throughput\n"
                   "  qwen2  VibeVoice Qwen2 LM prefill and decode throughput\n"
                   "  s3gen  Chatterbox S3Gen flow (encoder, CFM steps) + HiFT, real-time factor\n"
                   "  speak  Chatterbox end to end (T3 + S3Gen + HiFT), real-time factor\n"
                   "  clone  Chatterbox voice cloning of a 10 s reference (all front ends)\n"
                   "  serve  continuous batching: concurrent Chatterbox requests, T3 steps/s and audio/s\n"
                   "  convert  Chatterbox voice conversion of 10 s of speech\n"
                   "  vibevoice  VibeVoice per-frame generation cost and real-time factor\n");
        return argc < 2 ? 2 : 0;
    }
    if (!strcmp(argv[1], "t3")) return bench_t3(argc - 1, argv + 1);
    if (!strcmp(argv[1], "qwen2")) return bench_qwen2(argc - 1, argv + 1);
    if (!strcmp(argv[1], "s3gen")) return bench_s3gen(argc - 1, argv + 1);
    if (!strcmp(argv[1], "speak")) return bench_speak(argc - 1, argv + 1);
    if (!strcmp(argv[1], "clone")) return bench_clone(argc - 1, argv + 1);
    if (!strcmp(argv[1], "serve")) return bench_serve(argc - 1, argv + 1);
    if (!strcmp(argv[1], "convert")) return bench_convert(argc - 1, argv + 1);
    if (!strcmp(argv[1], "vibevoice")) return bench_vibevoice(argc - 1, argv + 1);
    return cli_error("bench", "unknown benchmark '%s' (see vocis bench --help)", argv[1]), 2;
}
