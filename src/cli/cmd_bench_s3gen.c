/* `vocis bench s3gen` and `vocis bench speak`: Chatterbox's acoustic half
 * (S3Gen flow: encoder + 10 Euler/CFG steps of the estimator, then HiFT) and
 * the whole speak path (T3 + flow + HiFT) on random-weight models at the
 * release's dimensions. One figure per line as `name: value unit`.
 *
 * The shapes follow a real request: the release's built-in voice (conds.pt)
 * has 250 prompt speech tokens and 500 prompt mel frames (10 s), and T3
 * emits 25 speech tokens per second of audio. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "base/threads.h"
#include "cli/bench_limits.h"
#include "cli/bench_util.h"
#include "cli/cli.h"
#include "kernels/precision.h"
#include "models/chatterbox/hift.h"
#include "models/chatterbox/s3tokenizer.h"
#include "models/chatterbox/s3gen_flow.h"
#include "models/chatterbox/s3gen_meanflow.h"
#include "models/chatterbox/s3gen_stream.h"
#include "models/chatterbox/t3.h"
#include "models/chatterbox/t3_gpt2.h"
#include "models/chatterbox/t3_batch.h"
#include "models/chatterbox/t3_gpt2_batch.h"

#define TOKENS_PER_S 25 /* speech tokens per second of audio */

/* After option parsing: --synthetic is required; default threads; the precision as given
 * (0 = default: each part resolves it, kernels/precision.h). 0 or an exit status. */
static int bench_common_args(int synthetic, int *threads, const char *precision, int *prec) {
    if (!synthetic) return cli_error("bench", "--synthetic is required (random weights at real dimensions)"), 2;
    if (*threads <= 0) *threads = vx_default_threads();
    return cli_precision("bench", precision, prec) ? 2 : 0;
}

/* The dtype the flow's stored matrices are computed in under a precision policy (for the report;
 * the conversion itself happens in the loader, kernels/precision.h: q8 leaves the flow's
 * matrices, which are not transformer linears, as in bf16). */
static vx_dtype computed_dtype(vx_dtype stored, int prec) {
    prec = vx_precision_resolve_part(prec, VX_PART_FLOW);
    return stored == VX_F32 && (prec == VX_PREC_BF16 || prec == VX_PREC_Q8) ? VX_BF16 : stored;
}

/* The acoustic half at real dims: random-weight flow (matrices stored in wdt — F32 as released —
 * and loaded through the precision policy like a real s3gen.safetensors; meanflow: Turbo/Nano's
 * s3gen_meanflow, with time_embed_mixer) and HiFT (bf16 matrices when the audio part's mode is bf16/q8). */
typedef struct acoustic {
    vx_weights *flow_w;
    vx_s3gen_flow *flow;
    vx_hift *hift;
    int64_t np, tp;       /* prompt tokens, prompt mel frames */
    int64_t *prompt;      /* [np] */
    float *prompt_feat;   /* [tp][n_mels] */
    float *embedding;     /* [spk_dim] */
} acoustic;

static void acoustic_free(acoustic *a) {
    vx_s3gen_flow_free(a->flow);
    vx_weights_close(a->flow_w);
    vx_hift_free(a->hift);
    free(a->prompt);
    free(a->prompt_feat);
    free(a->embedding);
    memset(a, 0, sizeof *a);
}

static vocis_status acoustic_new(acoustic *a, vx_dtype wdt, int prec, double prompt_s, int meanflow, vx_err *err) {
    memset(a, 0, sizeof *a);
    vx_s3gen_flow_dims d;
    if (meanflow) vx_s3gen_flow_dims_real_meanflow(&d);
    else vx_s3gen_flow_dims_real(&d);
    VX_TRY(vx_s3gen_flow_synthetic_weights(&d, wdt, 1234, &a->flow_w, err));
    /* the same load-time conversion as a file */
    vx_weights_set_precision(a->flow_w, vx_precision_resolve_part(prec, VX_PART_FLOW));
    VX_TRY(vx_s3gen_flow_load(a->flow_w, NULL, &a->flow, err));
    vocis_status st = vx_hift_random(512, 512, 4321, &a->hift, err);
    if (!st) st = vx_hift_set_precision(a->hift, vx_precision_resolve_part(prec, VX_PART_VOCODER), err);
    if (st) return st;
    a->np = (int64_t)lround(prompt_s * TOKENS_PER_S);
    a->tp = a->np * d.up_stride;
    a->prompt = malloc(sizeof(int64_t) * (size_t)(a->np > 0 ? a->np : 1));
    a->prompt_feat = malloc(sizeof(float) * (size_t)((a->tp > 0 ? a->tp : 1) * d.n_mels));
    a->embedding = malloc(sizeof(float) * (size_t)d.spk_dim);
    if (!a->prompt || !a->prompt_feat || !a->embedding) return vx_fail(err, VOCIS_E_NOMEM, "out of memory");
    for (int64_t i = 0; i < a->np; i++) a->prompt[i] = (i * 131 + 7) % d.vocab;
    /* a log-mel-like range: roughly −11 .. 2 */
    for (int64_t i = 0; i < a->tp * d.n_mels; i++) a->prompt_feat[i] = -4.5f + 6.0f * sinf(0.37f * (float)i);
    for (int64_t i = 0; i < d.spk_dim; i++) a->embedding[i] = 0.0625f * (float)((i * 37) % 17 - 8);
    return VOCIS_OK;
}

/* OPENBLAS_CORETYPE overrides OpenBLAS's CPU detection (e.g. Haswell on an AVX-512 machine halves
 * the sgemm rate): say so next to the figures. */
static void note_blas_env(void) {
    const char *ct = getenv("OPENBLAS_CORETYPE");
    if (ct && *ct)
        printf("note: OPENBLAS_CORETYPE=%s is set: OpenBLAS runs that core's kernels, not its own choice\n", ct);
}

typedef struct acoustic_times {
    double flow, encoder, steps, hift;
    int64_t samples;
} acoustic_times;

/* Flow (`steps` Euler steps, noise from rng; English: CFG pair, MeanFlow: batch 1) then HiFT on n speech tokens. */
static vocis_status acoustic_run(const acoustic *a, const int64_t *tokens, int64_t n, int steps, vx_rng *rng,
                                 int threads, acoustic_times *t, vx_err *err) {
    float *mel = NULL, *wav = NULL;
    int64_t tm = 0, nw = 0;
    const vx_meanflow_req mq = {
        .speech_tokens = tokens,
        .n = n,
        .prompt_tokens = a->prompt,
        .np = a->np,
        .prompt_feat = a->prompt_feat,
        .tp = a->tp,
        .embedding = a->embedding,
        .n_steps = steps,
        .rng = rng,
        .nthreads = threads,
        .t_encoder = &t->encoder,
        .t_steps = &t->steps,
    };
    vx_s3gen_flow_req rq = {
        .speech_tokens = tokens,
        .n = n,
        .prompt_tokens = a->prompt,
        .np = a->np,
        .prompt_feat = a->prompt_feat,
        .tp = a->tp,
        .embedding = a->embedding,
        .n_steps = steps,
        .cfg_rate = 0.7f,
        .rng = rng,
        .nthreads = threads,
        .t_encoder = &t->encoder,
        .t_steps = &t->steps,
    };
    double t0 = vx_now_s();
    if (vx_s3gen_flow_get_dims(a->flow)->meanflow) VX_TRY(vx_s3gen_meanflow_run(a->flow, &mq, &mel, &tm, err));
    else VX_TRY(vx_s3gen_flow_run(a->flow, &rq, &mel, &tm, err));
    double t1 = vx_now_s();
    vocis_status st = vx_hift_vocode(a->hift, mel, tm, rng, NULL, NULL, &wav, &nw, NULL, NULL, threads, err);
    double t2 = vx_now_s();
    free(mel);
    free(wav);
    t->flow = t1 - t0;
    t->hift = t2 - t1;
    t->samples = nw;
    return st;
}

/* FLOPs of one CFM estimator evaluation (= one Euler step) on B rows (2: the CFG pair) of L frames,
 * 2 FLOP per multiply-add, from the flow's dimensions, following cfm_estimator.c:
 *   per frame and row, with C = dec_ch, HD = heads x head_dim, F = dec_ffn, M = n_mels:
 *     each transformer block (n_tblocks in each of the 1 down + n_mid mid + 1 up stages)
 *       linears    3 C·HD (q, k, v) + HD·C (out) + 2 C·F (feed-forward)
 *       attention  QKᵀ and P·V over all L frames (no mask): 2 HD·L
 *     each stage's ResNet block: causal conv k3 cin→C, conv k3 C→C, 1×1 res conv cin→C
 *       (cin = 4M for the down stage, C mid, 2C up: [h | skip])
 *     post convs (k3 C→C) of the down and up stages, final block conv (k3 C→C), final 1×1 C→M
 *   per step, independent of L and B: the time MLP (4M→T, T→T, MeanFlow's mixer 2T→T) and the
 *   time projection T→C of each ResNet block, T = temb_dim.
 * Element-wise work (norms, Mish/GELU, softmax, residuals) is not counted. At the bench shape of
 * the English release (700 frames x 2 rows) this is 297 GFLOP, 38 % of it attention. */
typedef struct cfm_flops {
    double linear, conv, attention, total;
} cfm_flops;

static cfm_flops cfm_step_flops(const vx_s3gen_flow_dims *d, int64_t L, int64_t B) {
    const double C = (double)d->dec_ch, HD = (double)(d->dec_heads * d->dec_head_dim), F = (double)d->dec_ffn;
    const double M = (double)d->n_mels, T = (double)d->temb_dim, K = 3; /* the U-Net's conv kernel */
    const double stages = 2.0 + (double)d->n_mid, tblocks = stages * (double)d->n_tblocks;
    const double rows = (double)L * (double)B;
    double res = 0; /* one frame through the stages' ResNet blocks */
    const double cin[3] = {4 * M, C, 2 * C}, count[3] = {1, (double)d->n_mid, 1};
    for (int i = 0; i < 3; i++) res += count[i] * (K * cin[i] * C + K * C * C + cin[i] * C);
    cfm_flops f;
    f.linear = 2 * rows * tblocks * (3 * C * HD + HD * C + 2 * C * F) +
               2 * (4 * M * T + T * T + (d->meanflow ? 2 * T * T : 0) + stages * T * C);
    f.attention = 2 * rows * tblocks * 2 * HD * (double)L;
    f.conv = 2 * rows * (res + 3 * K * C * C + C * M);
    f.total = f.linear + f.conv + f.attention;
    return f;
}

/* Sums over the weight matrices (tensors of 2 or more dims; a conv's [out][in][k] counts k·in·out
 * multiply-adds per output frame) of the flow whose names start with `prefix`: the bytes at elem
 * bytes a value (the dtype they are computed in) and the multiply-adds of `rows` input rows each;
 * rows_of (may be NULL) picks the row count per tensor name instead. */
static void flow_weight_sums(const vx_weights *w, const char *prefix, double elem, double rows,
                             double (*rows_of)(const char *name, void *ctx), void *ctx, bench_work *work) {
    const size_t np = strlen(prefix);
    for (int i = 0; i < vx_weights_count(w); i++) {
        const char *name = vx_weights_name(w, i);
        const vx_tensor *t = vx_weights_tensor(w, i);
        if (strncmp(name, prefix, np) || !t || t->ndim < 2) continue;
        const double n = (double)vx_numel(t);
        work->bytes += elem * n;
        work->flops += 2 * n * (rows_of ? rows_of(name, ctx) : rows);
    }
}

/* The encoder's rows: T tokens through embed, pre-lookahead and the first conformer stack; L =
 * up_stride·T frames from the upsampler on; relative-position projections run on 2n − 1 rows. */
typedef struct enc_rows {
    double T, L;
} enc_rows;

static double encoder_rows_of(const char *name, void *ctx) {
    const enc_rows *r = ctx;
    const int up = strstr(name, "up_encoders.") || strstr(name, "up_layer.") || strstr(name, "up_embed.") ||
                   !strncmp(name, "flow.encoder_proj", 17);
    const double n = up ? r->L : r->T;
    return strstr(name, "linear_pos") ? 2 * n - 1 : n;
}

/* The flow encoder on T tokens (its matrices, then the conformers' attention: QKᵀ, the
 * relative-position term Q·Pᵀ and P·V over all n rows of each layer) and encoder_proj. */
static bench_work encoder_work(const vx_weights *w, const vx_s3gen_flow_dims *d, double T, double elem, int bf16) {
    enc_rows r = {T, T * (double)d->up_stride};
    bench_work work = {0, 0, bf16};
    flow_weight_sums(w, "flow.encoder", elem, 0, encoder_rows_of, &r, &work); /* also flow.encoder_proj */
    work.flops += 2.0 * 3 * (double)d->enc_dim * ((double)d->n_enc * T * T + (double)d->n_up * r.L * r.L);
    return work;
}

int bench_s3gen(int argc, char **argv) {
    int synthetic = 0, threads = 0, steps = 0, reps = 3, no_limits = 0;
    float seconds = 4.0f, prompt_s = 10.0f;
    const char *dtype = "f32", *precision = NULL, *variant_s = NULL;
    const cli_opt opts[] = {
        {"--synthetic", CLI_FLAG, &synthetic, "random weights at the release's dimensions (required)", 0, -1},
        {"--no-limits", CLI_FLAG, &no_limits, BENCH_NO_LIMITS_HELP, 0, -1},
        {"--variant", CLI_STR, &variant_s, BENCH_VARIANT_HELP "; mtl has the English S3Gen, turbo and nano the "
         "MeanFlow one", 0, -1},
        {"--seconds", CLI_FLOAT, &seconds, "generated audio in seconds, 25 speech tokens each (4)", 0.04, 600},
        {"--prompt-seconds", CLI_FLOAT, &prompt_s, "voice prompt in seconds: 25 tokens, 50 mel frames each (10)", 0,
         600},
        {"--steps", CLI_INT, &steps, "Euler steps (10; turbo/nano: 2)", 1, 1000},
        {"--reps", CLI_INT, &reps, "timed repetitions after one warm-up run; median, min, max printed (3)", 1, 100},
        {"--dtype", CLI_STR, &dtype, "stored flow weight dtype: f32 (default, as released), bf16, f16", 0, -1},
        {"--precision", CLI_STR, &precision, CLI_PRECISION_HELP, 0, -1},
        {"--threads", CLI_INT, &threads, "worker threads (default: physical cores)", 1, 1024},
    };
    int r = cli_parse(argc, argv, opts, (int)(sizeof opts / sizeof opts[0]),
                      "usage: vocis bench s3gen --synthetic [--seconds S] [--prompt-seconds P] [--reps N]\n"
                      "                         [--threads N] [--dtype f32|bf16|f16] [--precision MODE]\n\n"
                      "Times Chatterbox's S3Gen on random weights at the release's dimensions: the flow\n"
                      "encoder, each Euler step of the CFM estimator (a CFG pair over prompt + generated\n"
                      "frames), and the HiFT vocoder. rtf = (flow + HiFT time) / generated audio length;\n"
                      "cfm_gflops = the estimator's FLOPs per step / the step time. Each figure is the median\n"
                      "of --reps runs, followed by (min, max, n).\n"
                      "--variant turbo|nano: the MeanFlow flow (2 plain Euler steps, batch 1, no CFG).");
    if (r) return r == 1 ? 0 : 2;
    int prec;
    if ((r = bench_common_args(synthetic, &threads, precision, &prec))) return r;
    vx_dtype dt;
    if (bench_parse_dtype(dtype, &dt)) return cli_error("bench", "--dtype must be f32, bf16 or f16"), 2;
    const int variant = bench_parse_variant(variant_s);
    if (variant < 0) return cli_error("bench", "--variant must be english, mtl, turbo or nano"), 2;
    const int meanflow = variant == BENCH_TURBO || variant == BENCH_NANO;
    if (steps <= 0) steps = meanflow ? 2 : 10;
    bench_limits lim;
    bench_limits_measure(&lim, threads, no_limits);

    vx_err err = {0};
    acoustic a;
    double t0 = vx_now_s();
    if (acoustic_new(&a, dt, prec, prompt_s, meanflow, &err)) {
        acoustic_free(&a);
        return cli_error("bench", "%s", err.msg);
    }
    double t_load = vx_now_s() - t0;
    const vx_s3gen_flow_dims *d = vx_s3gen_flow_get_dims(a.flow);
    const int64_t n = lround((double)seconds * TOKENS_PER_S) > 0 ? (int64_t)lround((double)seconds * TOKENS_PER_S) : 1;
    enum { NV = 8 }; /* figures per repetition */
    int64_t *tok = malloc(sizeof(int64_t) * (size_t)n);
    double *tv = calloc((size_t)NV * (size_t)reps, sizeof(double));
    if (!tok || !tv) {
        free(tok), free(tv);
        acoustic_free(&a);
        return cli_error("bench", "out of memory");
    }
    for (int64_t i = 0; i < n; i++) tok[i] = (i * 577 + 11) % d->vocab;
    const int64_t L = d->up_stride * (a.np + n), B = meanflow ? 1 : 2;
    const cfm_flops fl = cfm_step_flops(d, L, B);
    /* the flow's matrices as computed (bf16 copies under bf16 / q8), read at least once a step */
    const int flow_prec = vx_precision_resolve_part(prec, VX_PART_FLOW);
    const int flow_bf16 = flow_prec == VX_PREC_BF16 || flow_prec == VX_PREC_Q8; /* act_bf16 (kernels/precision.c) */
    const double elem = (double)vx_dtype_size(computed_dtype(dt, prec));
    bench_work cfm_work = {0, fl.total, flow_bf16};
    flow_weight_sums(a.flow_w, "flow.decoder.", elem, 0, NULL, NULL, &cfm_work);
    const int64_t enc_tokens = a.np + n;
    const bench_work enc_work = encoder_work(a.flow_w, d, (double)enc_tokens, elem, flow_bf16);
    double hift_macs, hift_bytes; /* per mel frame; weights per call */
    vx_hift_work(a.hift, &hift_macs, &hift_bytes);
    const int hift_bf16 = a.hift->bf16;
    printf("model: synthetic %s S3Gen %sflow (%s weights) + HiFT (f32), %d threads\n", bench_variant_name(variant),
           meanflow ? "MeanFlow " : "", dtype, threads);
    printf("precision: %s (flow matrices computed as %s; HiFT %s)\n",
           vx_precision_name(vx_precision_resolve_part(prec, VX_PART_FLOW)),
           vx_dtype_name(computed_dtype(dt, prec)), a.hift->bf16 ? "bf16" : "f32");
    printf("shape: %lld prompt + %lld speech tokens, %lld prompt mel frames, %lld estimator frames x %s, "
           "%d steps\n",
           (long long)a.np, (long long)n, (long long)a.tp, (long long)L, meanflow ? "1 row (no CFG)" : "2 CFG rows",
           steps);
    printf("load: %.2f s\n", t_load);
    note_blas_env();
    fflush(stdout);

    vocis_status st = VOCIS_OK;
    int64_t samples = 0;
    for (int i = -1; i < reps && !st; i++) { /* run -1 warms up (page faults, thread start) */
        vx_rng rng;
        vx_rng_seed(&rng, 0);
        acoustic_times t = {0};
        st = acoustic_run(&a, tok, n, steps, &rng, threads, &t, &err);
        if (st || i < 0) continue;
        const double audio = (double)t.samples / VX_HIFT_SR, step = t.steps / steps;
        const double v[NV] = {t.encoder, step, fl.total / step, t.flow, t.hift, t.hift / audio,
                              (t.flow + t.hift) / audio, 0};
        for (int k = 0; k < NV; k++) tv[(size_t)k * reps + i] = v[k];
        samples = t.samples;
    }
    free(tok);
    acoustic_free(&a);
    if (st) {
        free(tv);
        return cli_error("bench", "%s", err.msg);
    }
    printf("audio: %.2f s\n", (double)samples / VX_HIFT_SR);
    char note[256];
    bench_limit_note(note, sizeof note, &lim, enc_work, "run", bench_stats_of(tv, reps).median);
    bench_print_stats("encoder", tv, reps, 1e3, 1, "ms", "%lld tokens; %s", (long long)enc_tokens, note);
    bench_limit_note(note, sizeof note, &lim, cfm_work, "step", bench_stats_of(tv + reps, reps).median);
    bench_print_stats("cfm_step", tv + reps, reps, 1e3, 1, "ms", "%s", note);
    printf("cfm_gflop_per_step: %.1f GFLOP (%lld frames x %lld rows: linears %.1f, convs %.1f, attention %.1f)\n",
           1e-9 * fl.total, (long long)L, (long long)B, 1e-9 * fl.linear, 1e-9 * fl.conv, 1e-9 * fl.attention);
    bench_print_stats("cfm_gflops", tv + 2 * reps, reps, 1e-9, 1, "GFLOP/s", "cfm_gflop_per_step / cfm_step");
    bench_print_stats("flow", tv + 3 * reps, reps, 1e3, 1, "ms", NULL);
    bench_print_stats("hift", tv + 4 * reps, reps, 1e3, 1, "ms", NULL);
    const double audio_s = (double)samples / VX_HIFT_SR, frames_per_s = (double)VX_HIFT_SR / VX_HIFT_HOP;
    /* per second of audio: the convs at 50 mel frames a second, the weights once per call */
    const bench_work hift_work = {audio_s > 0 ? hift_bytes / audio_s : 0, 2 * hift_macs * frames_per_s, hift_bf16};
    bench_limit_note(note, sizeof note, &lim, hift_work, "audio_s", bench_stats_of(tv + 5 * reps, reps).median);
    bench_print_stats("hift_ms_per_s", tv + 5 * reps, reps, 1e3, 1, "ms", "HiFT time per second of audio; %s", note);
    bench_print_stats("rtf", tv + 6 * reps, reps, 1, 3, "", "(flow + HiFT) / audio");
    printf("peak_rss: %.0f MiB\n", bench_peak_rss_mib());
    free(tv);
    return 0;
}

/* Turbo / Nano T3 on the bench's fixed request: the voice's 375 prompt tokens (a 15 s
 * reference), 40 text tokens, upstream generate()'s sampling defaults; `want` draws (the
 * caller disables the stop token). */
/* The variant's T3 on random weights at the release's dimensions, its stop token disabled (every
 * request draws exactly the tokens asked for) and the default 256 MiB voice cache. */
static vocis_status bench_t3_synthetic(int variant, vx_dtype dt, int prec, vx_t3 *t3, vx_t3_gpt2 *tg, vx_err *err) {
    vocis_status st;
    if (variant == BENCH_TURBO || variant == BENCH_NANO) {
        st = vx_t3_gpt2_synthetic(tg, variant == BENCH_NANO, dt, vx_precision_resolve(prec), 1234, err);
        if (!st) tg->cfg.stop_speech_token = -1;
        if (!st) st = vx_t3_gpt2_set_voice_cache(tg, (size_t)256 << 20, err);
        return st;
    }
    vx_cb_config cfg;
    vx_cb_config_default(&cfg);
    vx_weights *w = NULL;
    st = vx_t3_synthetic_weights_vocab(dt, 1234, variant == BENCH_MTL ? VX_T3_MTL_TEXT_VOCAB : 704, &w, err);
    if (!st) vx_weights_set_precision(w, vx_precision_resolve(prec));
    if (!st && (st = vx_t3_init(t3, w, &cfg, err)) == VOCIS_OK) t3->w = w;
    else vx_weights_close(w);
    if (!st) t3->cfg.stop_speech_token = -1;
    if (!st) st = vx_t3_set_voice_cache(t3, (size_t)256 << 20, err);
    return st;
}

static vocis_status speak_t3_gpt2(const vx_t3_gpt2 *t, int want, int speculate, int (*on_token)(void *, int, int32_t),
                                  void *user, vx_rng *rng, int threads, int32_t **toks, int *nt, vx_err *err) {
    enum { TEXT = 40, PROMPT = 375 };
    float *spk = calloc((size_t)t->speaker_dim, sizeof(float));
    int64_t prompt[PROMPT];
    int32_t text[TEXT];
    if (!spk) return vx_fail(err, VOCIS_E_NOMEM, "out of memory");
    bench_t3_request(spk, t->speaker_dim, prompt, PROMPT, text, TEXT, -1, -1);
    const vx_turbo_sampling s = {0.8f, 1000, 0.95f, 1.2f, want - 1, 0, on_token, user, NULL, speculate};
    vocis_status st = vx_t3_gpt2_generate(t, spk, prompt, PROMPT, text, TEXT, &s, rng, threads, toks, nt, err);
    free(spk);
    return st;
}

/* English / Multilingual T3 on the bench's fixed request: the built-in voice's 150 T3 prompt
 * tokens, 40 text tokens with start/stop, CFG pair; `want` draws (stop token disabled). */
static vocis_status speak_t3(const vx_t3 *t3, int want, int speculate, int (*on_token)(void *, int, int32_t),
                             void *user, vx_rng *rng, int threads, int32_t **toks, int *nt, vx_err *err) {
    enum { TEXT = 40, T3_PROMPT = 150 };
    float *spk = calloc((size_t)t3->speaker_dim, sizeof(float));
    int64_t t3_prompt[T3_PROMPT];
    int32_t text[TEXT + 2];
    if (!spk) return vx_fail(err, VOCIS_E_NOMEM, "out of memory");
    bench_t3_request(spk, t3->speaker_dim, t3_prompt, T3_PROMPT, text, TEXT + 2, t3->cfg.start_text_token,
                     t3->cfg.stop_text_token);
    const vx_t3_cond c = {spk, t3_prompt, T3_PROMPT, 0.5f};
    const vx_t3_sampling s = {0.8f, 0.5f, 0.05f, 1.0f, 1.2f, want, 0, on_token, user, speculate};
    vocis_status st = vx_t3_generate(t3, &c, text, TEXT + 2, &s, rng, threads, toks, nt, err);
    free(spk);
    return st;
}

/* The bench's streamed acoustic half: T3's tokens go into a vx_s3gen_stream as they are drawn;
 * the first piece of audio marks first_audio. */
typedef struct bench_stream {
    vx_s3gen_stream *s;
    double t0, first; /* call start; first audio (s after t0, < 0 until it comes) */
    vx_err err;
} bench_stream;

static int bench_stream_sink(void *user, const float *wav, int64_t n) {
    bench_stream *b = user;
    (void)wav, (void)n;
    if (b->first < 0) b->first = vx_now_s() - b->t0;
    return 0;
}

static int bench_stream_token(void *user, int step, int32_t tok) {
    bench_stream *b = user;
    (void)step;
    return vx_s3gen_stream_push(b->s, tok, &b->err) != VOCIS_OK;
}

/* One end-to-end run; v[] receives t3, s3gen, hift, total, rtf, first_audio (s). stream_first > 0:
 * the streamed path, whose stream is left in *kept (for the mel comparison). */
typedef struct speak_setup {
    const vx_t3 *t3;
    const vx_t3_gpt2 *tg;
    const acoustic *a;
    int want, speculate, steps, threads, stream_first;
} speak_setup;

/* Random weights emit special tokens at random: keep the valid ones (upstream's post-processing) and top
 * the list up to `want` so that the acoustic half always renders `seconds` of audio (+ Turbo's silence). */
static int64_t topup_tokens(const speak_setup *q, const int64_t *valid, int64_t nvalid, int64_t *out) {
    int64_t n = 0;
    for (int64_t i = 0; i < q->want; i++) out[n++] = i < nvalid ? valid[i] : (i * 577 + 11) % 6561;
    for (int i = 0; q->tg && i < 3; i++) out[n++] = VX_S3GEN_SIL;
    return n;
}

static vocis_status speak_once(const speak_setup *q, int *raw, int *nvalid, double *v, vx_s3gen_stream **kept,
                               vx_err *err) {
    vx_rng rng;
    vx_rng_seed(&rng, 0);
    int32_t *toks = NULL;
    int64_t *tok64 = malloc(sizeof(int64_t) * (size_t)(q->want + 3)), *clean = NULL;
    bench_stream b = {.first = -1};
    int nt = 0;
    vocis_status st = tok64 ? VOCIS_OK : vx_fail(err, VOCIS_E_NOMEM, "out of memory");
    if (!st && q->stream_first > 0) {
        const vx_s3gen_stream_cfg cfg = {.flow = q->a->flow, .hift = q->a->hift, .prompt_tokens = q->a->prompt,
                                         .np = q->a->np, .prompt_feat = q->a->prompt_feat, .tp = q->a->tp,
                                         .embedding = q->a->embedding, .cfm_steps = q->steps,
                                         .first_tokens = q->stream_first, .valid_below = 6561, .seed = 1,
                                         .nthreads = q->threads, .keep_mel = 1, .sink = bench_stream_sink,
                                         .user = &b};
        st = vx_s3gen_stream_new(&cfg, &b.s, err);
    }
    int (*on_token)(void *, int, int32_t) = b.s ? bench_stream_token : NULL;
    const double t0 = b.t0 = vx_now_s();
    if (!st) st = q->tg ? speak_t3_gpt2(q->tg, q->want, q->speculate, on_token, &b, &rng, q->threads, &toks, &nt, err)
                        : speak_t3(q->t3, q->want, q->speculate, on_token, &b, &rng, q->threads, &toks, &nt, err);
    if (st && b.err.code) *err = b.err;
    *raw = nt;
    acoustic_times at = {0};
    if (!st && b.s) { /* the stream took the valid tokens; the top-up and the silence are its tail */
        int64_t n_in;
        const int64_t *in = vx_s3gen_stream_token_list(b.s, &n_in);
        const int64_t ns = topup_tokens(q, in, n_in, tok64);
        *nvalid = (int)n_in;
        st = vx_s3gen_stream_finish(b.s, tok64 + n_in, (int)(ns - n_in), -1, err);
        vx_s3gen_stream_times(b.s, &at.flow, &at.hift);
        at.samples = vx_s3gen_stream_samples(b.s);
    } else if (!st) {
        clean = malloc(sizeof(int64_t) * (size_t)(nt + 3));
        if (!clean) st = vx_fail(err, VOCIS_E_NOMEM, "out of memory");
        if (!st && q->tg) {
            nt = vx_turbo_clean_tokens(q->tg, toks, nt, clean) - 3; /* the 3 silence tokens are appended below */
        } else if (!st) {
            nt = vx_t3_clean_tokens(q->t3, toks, nt);
            for (int i = 0; i < nt; i++) clean[i] = toks[i];
        }
        *nvalid = nt;
        if (!st) st = acoustic_run(q->a, tok64, topup_tokens(q, clean, nt, tok64), q->steps, &rng, q->threads, &at, err);
    }
    const double total = vx_now_s() - t0;
    free(toks), free(tok64), free(clean);
    if (st) {
        vx_s3gen_stream_free(b.s);
        return st;
    }
    /* the whole path's audio is there once HiFT is done; T3 is the rest of the wall time */
    const double out[6] = {total - at.flow - at.hift, at.flow, at.hift, total,
                           total / ((double)at.samples / VX_HIFT_SR), b.s ? b.first : total};
    memcpy(v, out, sizeof out);
    vx_s3gen_stream_free(*kept);
    *kept = b.s;
    return VOCIS_OK;
}

int bench_speak(int argc, char **argv) {
    int synthetic = 0, threads = 0, reps = 3, stream = 0, stream_first = 0;
    float seconds = 4.0f, prompt_s = 10.0f;
    const char *dtype = "f32", *precision = NULL, *variant_s = NULL, *speculate_s = NULL;
    const cli_opt opts[] = {
        {"--synthetic", CLI_FLAG, &synthetic, "random weights at the release's dimensions (required)", 0, -1},
        {"--variant", CLI_STR, &variant_s, BENCH_VARIANT_HELP, 0, -1},
        {"--speculate", CLI_STR, &speculate_s, CLI_SPECULATE_HELP, 0, -1},
        {"--stream", CLI_FLAG, &stream, "the streamed path (vocis speak --stream): S3Gen every few T3 tokens", 0, -1},
        {"--stream-first", CLI_INT, &stream_first, "with --stream: tokens before the first chunk (25; turbo/nano 10)",
         1, 1000},
        {"--seconds", CLI_FLOAT, &seconds, "generated audio in seconds: T3 makes 25 tokens each (4)", 0.04, 160},
        {"--prompt-seconds", CLI_FLOAT, &prompt_s, "S3Gen voice prompt in seconds (10)", 0, 600},
        {"--dtype", CLI_STR, &dtype, "stored T3 weight dtype: f32 (default, as released), bf16, f16 (the flow is f32)",
         0, -1},
        {"--precision", CLI_STR, &precision, CLI_PRECISION_HELP, 0, -1},
        {"--reps", CLI_INT, &reps, "timed end-to-end runs; median, min, max printed (3)", 1, 100},
        {"--threads", CLI_INT, &threads, "worker threads (default: physical cores)", 1, 1024},
    };
    int r = cli_parse(argc, argv, opts, (int)(sizeof opts / sizeof opts[0]),
                      "usage: vocis bench speak --synthetic [--variant english|mtl|turbo|nano] [--seconds S]\n"
                      "                         [--stream [--stream-first N]] [--reps N] [--threads N]\n"
                      "                         [--precision MODE]\n\n"
                      "End-to-end Chatterbox on random weights at the release's dimensions: T3 generates\n"
                      "25 speech tokens per second of audio (English/Multilingual: a CFG pair per token; the\n"
                      "stop token is disabled), then the S3Gen flow (10 Euler steps) and HiFT. Turbo/Nano:\n"
                      "the GPT-2 T3 (batch 1, 375 voice prompt tokens), 3 silence tokens appended as upstream,\n"
                      "then the MeanFlow flow (2 steps) and HiFT. rtf = total time / generated audio length;\n"
                      "first_audio_ms = from the call to the first audio (the voice prefix already cached by an\n"
                      "untimed first run). --stream: S3Gen runs while T3 generates (t3 = total - s3gen - hift);\n"
                      "stream_mel_snr_db compares its mel with a whole-path flow run over the same tokens and\n"
                      "noise. Each figure is the median of --reps runs (same seed), followed by (min, max, n).");
    if (r) return r == 1 ? 0 : 2;
    int prec;
    if ((r = bench_common_args(synthetic, &threads, precision, &prec))) return r;
    int speculate;
    if (cli_speculate("bench", speculate_s, &speculate)) return 2;
    vx_dtype dt;
    if (bench_parse_dtype(dtype, &dt)) return cli_error("bench", "--dtype must be bf16, f16 or f32"), 2;
    const int variant = bench_parse_variant(variant_s);
    if (variant < 0) return cli_error("bench", "--variant must be english, mtl, turbo or nano"), 2;
    if (stream_first && !stream) return cli_error("bench", "--stream-first needs --stream"), 2;
    const int gpt2 = variant == BENCH_TURBO || variant == BENCH_NANO, steps = gpt2 ? 2 : 10;
    const int want = (int)lround((double)seconds * TOKENS_PER_S) > 0 ? (int)lround((double)seconds * TOKENS_PER_S) : 1;
    if (stream && !stream_first) stream_first = gpt2 ? 10 : 25; /* vocis speak --stream's defaults */

    vx_err err = {0};
    vx_t3 t3 = {0};
    vx_t3_gpt2 tg = {0};
    acoustic a = {0};
    double t0 = vx_now_s();
    vocis_status st = bench_t3_synthetic(variant, dt, prec, &t3, &tg, &err); /* exactly `want` draws */
    if (st) return cli_error("bench", "%s", err.msg);
    if ((st = acoustic_new(&a, VX_F32, prec, prompt_s, gpt2, &err))) {
        acoustic_free(&a);
        if (gpt2) vx_t3_gpt2_free(&tg);
        else vx_t3_free(&t3);
        return cli_error("bench", "%s", err.msg);
    }
    double t_load = vx_now_s() - t0;
    printf("model: synthetic Chatterbox %s (T3 %s%s, S3Gen %sflow f32, HiFT f32), %d threads\n",
           bench_variant_name(variant), gpt2 ? "GPT-2 " : "", dtype, gpt2 ? "MeanFlow " : "", threads);
    printf("precision: %s (T3 matrices computed as %s, flow as %s; HiFT %s)\n", vx_precision_describe(prec),
           vx_dtype_name(vx_precision_resolve(prec) == VX_PREC_EXACT ? VX_F32 : VX_BF16),
           vx_dtype_name(computed_dtype(VX_F32, prec)), a.hift->bf16 ? "bf16" : "f32");
    printf("speculate: %s (T3 self-speculative decoding; the tokens are plain decoding's)\n", vx_spec_name(speculate));
    if (stream) printf("stream: first chunk after %d tokens, then doubling up to %d\n", stream_first,
                       VX_S3GEN_STREAM_MAX_HOP);
    else printf("stream: off (audio once the whole chunk's tokens are drawn)\n");
    printf("load: %.2f s\n", t_load);
    note_blas_env();
    fflush(stdout);

    enum { NV = 6 }; /* t3, s3gen, hift, total, rtf, first audio per repetition */
    double *tv = calloc((size_t)NV * (size_t)reps, sizeof(double));
    if (!tv) st = vx_fail(&err, VOCIS_E_NOMEM, "out of memory");
    int raw = 0, nt = 0, chunks = 0;
    const int ns = gpt2 ? want + 3 : want; /* Turbo/Nano: + 3 silence tokens (4299) */
    const speak_setup q = {gpt2 ? NULL : &t3, gpt2 ? &tg : NULL, &a, want, speculate, steps, threads,
                           stream ? stream_first : 0};
    vx_s3gen_stream *kept = NULL;
    double audio_s = 0, snr = 0;
    for (int rep = -1; rep < reps && !st; rep++) { /* run -1: untimed, caches the voice prefix */
        double v[NV];
        st = speak_once(&q, &raw, &nt, v, &kept, &err);
        if (st || rep < 0) continue;
        for (int k = 0; k < NV; k++) tv[(size_t)k * reps + rep] = v[k];
        audio_s = v[3] / v[4];
        chunks = kept ? vx_s3gen_stream_chunks(kept) : 1;
    }
    /* stream_mel_snr_db: against the whole path over the same tokens with the same noise */
    if (!st && kept) st = vx_s3gen_stream_whole_snr_db(kept, NULL, &snr, &err);
    vx_s3gen_stream_free(kept);
    acoustic_free(&a);
    if (gpt2) vx_t3_gpt2_free(&tg);
    else vx_t3_free(&t3);
    if (st) {
        free(tv);
        return cli_error("bench", "%s", err.msg);
    }
    printf("t3_tokens: %d (%d sampled, %d valid; %d speech tokens to S3Gen)\n", want, raw, nt, ns);
    printf("audio: %.2f s in %d chunk%s\n", audio_s, chunks, chunks == 1 ? "" : "s");
    bench_print_stats("first_audio_ms", tv + 5 * reps, reps, 1e3, 0, "ms", "call to the first audio, voice cached");
    bench_print_stats("t3", tv, reps, 1, 2, "s", NULL);
    bench_print_stats("s3gen", tv + reps, reps, 1, 2, "s", "%d steps%s", steps, stream ? ", all chunks" : "");
    bench_print_stats("hift", tv + 2 * reps, reps, 1, 2, "s", NULL);
    bench_print_stats("total", tv + 3 * reps, reps, 1, 2, "s", NULL);
    bench_print_stats("rtf", tv + 4 * reps, reps, 1, 3, "", "total / audio");
    if (stream) printf("stream_mel_snr_db: %.1f dB (streamed mel vs the whole path's, same tokens and noise)\n", snr);
    printf("peak_rss: %.0f MiB\n", bench_peak_rss_mib());
    free(tv);
    return 0;
}

/* One continuous batch of T3 requests of the bench (English / Multilingual: t3_batch.h, a CFG pair
 * per request; Turbo / Nano: t3_gpt2_batch.h, one row), as the library's engine drives them. */
typedef struct serve_batch {
    const vx_t3 *t3;        /* or */
    const vx_t3_gpt2 *tg;
    void *b;
    float *spk;
    int64_t prompt[375];
    int n_prompt, n_text;
    int32_t text[42];
    vx_t3_cond c;
    vx_t3_sampling s;
    vx_turbo_sampling ts;
} serve_batch;

/* The bench's fixed request (bench_t3_request): 150 (Turbo/Nano: 375) voice prompt tokens, 40 text
 * tokens (English: with start/stop), `want` draws with the stop token disabled. */
static vocis_status serve_batch_new(serve_batch *q, const vx_t3 *t3, const vx_t3_gpt2 *tg, int want, int speculate,
                                    int slots, vx_err *err) {
    memset(q, 0, sizeof *q);
    q->t3 = t3, q->tg = tg;
    const int dim = tg ? tg->speaker_dim : t3->speaker_dim;
    if (!(q->spk = calloc((size_t)dim, sizeof(float)))) return vx_fail(err, VOCIS_E_NOMEM, "out of memory");
    q->n_prompt = tg ? 375 : 150;
    q->n_text = tg ? 40 : 42;
    bench_t3_request(q->spk, dim, q->prompt, q->n_prompt, q->text, q->n_text, tg ? -1 : t3->cfg.start_text_token,
                     tg ? -1 : t3->cfg.stop_text_token);
    q->c = (vx_t3_cond){q->spk, q->prompt, q->n_prompt, 0.5f};
    q->s = (vx_t3_sampling){0.8f, 0.5f, 0.05f, 1.0f, 1.2f, want, 0, NULL, NULL, speculate};
    q->ts = (vx_turbo_sampling){0.8f, 1000, 0.95f, 1.2f, want - 1, 0, NULL, NULL, NULL, speculate};
    return tg ? vx_t3_gpt2_batch_new(tg, slots, (vx_t3_gpt2_batch **)&q->b, err)
              : vx_t3_batch_new(t3, slots, (vx_t3_batch **)&q->b, err);
}

static vocis_status serve_batch_add(serve_batch *q, vx_rng *rng, int threads, int *id, vx_err *err) {
    if (q->tg) {
        const vx_t3_gpt2_req r = {q->spk, q->prompt, q->n_prompt, q->text, q->n_text, &q->ts, rng};
        return vx_t3_gpt2_batch_add(q->b, &r, threads, id, err);
    }
    return vx_t3_batch_add(q->b, &q->c, q->text, q->n_text, &q->s, rng, threads, id, err);
}

static int serve_batch_active(const serve_batch *q) {
    return q->tg ? vx_t3_gpt2_batch_active(q->b) : vx_t3_batch_active(q->b);
}

static vocis_status serve_batch_step(serve_batch *q, int threads, vx_err *err) {
    return q->tg ? vx_t3_gpt2_batch_step(q->b, threads, err) : vx_t3_batch_step(q->b, threads, err);
}

static vocis_status serve_batch_take(serve_batch *q, int id, int32_t **tk, int *n, vx_err *err) {
    return q->tg ? vx_t3_gpt2_batch_take(q->b, id, tk, n, err) : vx_t3_batch_take(q->b, id, tk, n, err);
}

static void serve_batch_free(serve_batch *q) {
    if (q->tg) vx_t3_gpt2_batch_free(q->b);
    else vx_t3_batch_free(q->b);
    free(q->spk);
}

/* `vocis bench serve`: what continuous batching buys a server. N concurrent requests, each
 * `seconds` of speech (25 T3 tokens a second; the stop token is disabled so every request makes
 * exactly that many), run through one T3 batch as the library's engine runs them (the voice prefix
 * cached, as a server's default voice cache keeps it): every step is one forward for all
 * unfinished requests. Per level N: t3_steps_cN (T3 sequence-steps per
 * second, summed over requests), audio_s_per_s_cN (audio seconds per wall second, with each
 * request's S3Gen + HiFT run after its tokens, one at a time), and whether request 0 drew the
 * same tokens as alone. */
int bench_serve(int argc, char **argv) {
    int synthetic = 0, threads = 0;
    float seconds = 4.0f;
    const char *levels = "1,2,4,8", *precision = NULL, *variant_s = "english", *speculate_s = NULL;
    const cli_opt opts[] = {
        {"--synthetic", CLI_FLAG, &synthetic, "random weights at the release's dimensions (required)", 0, -1},
        {"--variant", CLI_STR, &variant_s, "english (default), mtl, turbo or nano", 0, -1},
        {"--concurrency", CLI_STR, &levels, "comma-separated request counts (1,2,4,8)", 0, -1},
        {"--seconds", CLI_FLOAT, &seconds, "speech per request in seconds (4)", 0.04, 40},
        {"--speculate", CLI_STR, &speculate_s, CLI_SPECULATE_HELP " (a lone request speculates; batched ones step plainly)",
         0, -1},
        {"--precision", CLI_STR, &precision, CLI_PRECISION_HELP, 0, -1},
        {"--threads", CLI_INT, &threads, "worker threads (default: physical cores)", 1, 1024},
    };
    int r = cli_parse(argc, argv, opts, (int)(sizeof opts / sizeof opts[0]),
                      "usage: vocis bench serve --synthetic [--variant english|mtl|turbo|nano] [--concurrency 1,2,4,8]\n"
                      "                         [--seconds S] [--threads N]\n\n"
                      "Continuous batching of concurrent Chatterbox requests on random weights at the\n"
                      "release's dimensions: T3 sequence-steps per second and audio seconds per wall second\n"
                      "at each concurrency level. VibeVoice and Realtime batch too: their figures come from\n"
                      "vocis bench vibevoice --synthetic 1.5b|7b|realtime-0.5b --concurrency 1,2,4.");
    if (r) return r == 1 ? 0 : 2;
    int prec;
    if ((r = bench_common_args(synthetic, &threads, precision, &prec))) return r;
    const int variant = bench_parse_variant(variant_s);
    if (variant < 0) return cli_error("bench", "--variant must be english, mtl, turbo or nano"), 2;
    int speculate;
    if (cli_speculate("bench", speculate_s, &speculate)) return 2;
    const int gpt2 = variant == BENCH_TURBO || variant == BENCH_NANO, steps = gpt2 ? 2 : 10;
    int64_t lv[16];
    const int nlv = bench_parse_positions(levels, lv, 16, 64);
    if (nlv < 0) return cli_error("bench", "--concurrency: invalid list '%s'", levels), 2;
    const int want = (int)lround((double)seconds * TOKENS_PER_S) > 0 ? (int)lround((double)seconds * TOKENS_PER_S) : 1;
    vx_err err = {0};
    vx_t3 t3 = {0};
    vx_t3_gpt2 tg = {0};
    acoustic a = {0};
    /* every request makes exactly `want` tokens; as a server, the voice's conditioning prefix is
     * computed once (the default voice cache) */
    vocis_status st = bench_t3_synthetic(variant, VX_F32, prec, &t3, &tg, &err);
    if (!st) st = acoustic_new(&a, VX_F32, prec, 10.0, gpt2, &err);
    if (st) {
        acoustic_free(&a);
        if (gpt2) vx_t3_gpt2_free(&tg);
        else vx_t3_free(&t3);
        return cli_error("bench", "%s", err.msg);
    }
    printf("model: synthetic Chatterbox %s (T3 %s+ S3Gen %s+ HiFT), precision %s, %d threads, %d tokens (%.1f s) a "
           "request\n",
           bench_variant_name(variant), gpt2 ? "GPT-2 " : "", gpt2 ? "MeanFlow " : "", vx_precision_describe(prec),
           threads, want, seconds);
    printf("speculate: %s (a lone request may speculate; a batch of several steps plainly)\n", vx_spec_name(speculate));
    int64_t *tok64 = malloc(sizeof(int64_t) * (size_t)(want + 3));
    int32_t *ref = NULL;
    if (!tok64) st = vx_fail(&err, VOCIS_E_NOMEM, "out of memory");
    /* the S3Gen + HiFT cost of one request (it does not batch) */
    acoustic_times at = {0};
    const int ns = gpt2 ? want + 3 : want; /* Turbo/Nano: + 3 silence tokens */
    for (int i = 0; i < ns && !st; i++) tok64[i] = i < want ? (i * 577 + 11) % 6561 : VX_S3GEN_SIL;
    for (int k = 0; k < 2 && !st; k++) { /* warm-up, then timed */
        vx_rng rng;
        vx_rng_seed(&rng, 0);
        st = acoustic_run(&a, tok64, ns, steps, &rng, threads, &at, &err);
    }
    /* an untimed first request fills the voice cache; the later levels' request 0 must repeat its tokens */
    for (int li = -1; li < nlv && !st; li++) {
        const int N = li < 0 ? 1 : (int)lv[li];
        serve_batch q;
        vx_rng *rngs = calloc((size_t)N, sizeof *rngs);
        int *ids = calloc((size_t)N, sizeof *ids);
        if (!rngs || !ids) st = vx_fail(&err, VOCIS_E_NOMEM, "out of memory");
        if (!st) st = serve_batch_new(&q, gpt2 ? NULL : &t3, gpt2 ? &tg : NULL, want, speculate, N, &err);
        const double t0 = vx_now_s();
        for (int k = 0; k < N && !st; k++) {
            vx_rng_seed(&rngs[k], 1000 + (uint64_t)k);
            st = serve_batch_add(&q, &rngs[k], threads, &ids[k], &err);
        }
        const double t1 = vx_now_s(); /* the admissions (each request's text prefill) done */
        while (!st && serve_batch_active(&q)) st = serve_batch_step(&q, threads, &err);
        const double t_t3 = vx_now_s() - t0, t_steps = vx_now_s() - t1;
        int same = 1;
        for (int k = 0; k < N && !st; k++) {
            int32_t *tk = NULL;
            int n = 0;
            st = serve_batch_take(&q, ids[k], &tk, &n, &err);
            if (!st && k == 0) {
                if (!ref) {
                    ref = tk;
                    tk = NULL;
                } else {
                    same = memcmp(ref, tk, sizeof(int32_t) * (size_t)n) == 0;
                }
            }
            free(tk);
        }
        if (rngs && ids) serve_batch_free(&q);
        free(rngs);
        free(ids);
        if (st || li < 0) continue;
        const double audio = (double)N * want / TOKENS_PER_S, wall = t_t3 + N * (at.flow + at.hift);
        printf("t3_steps_c%d: %.1f steps/s (%d requests x %d tokens in %.2f s)\n", N, N * want / t_t3, N, want, t_t3);
        printf("t3_decode_steps_c%d: %.1f steps/s (the same without the %d admissions' prefills, %.2f s)\n", N,
               (N * want - N) / t_steps, N, t_t3 - t_steps);
        printf("audio_s_per_s_c%d: %.2f audio s per wall s (T3 %.2f s + S3Gen/HiFT %d x %.2f s)\n", N, audio / wall,
               t_t3, N, at.flow + at.hift);
        printf("tokens_identical_c%d: %s\n", N, same ? "yes" : "NO");
        fflush(stdout);
    }
    free(tok64), free(ref);
    acoustic_free(&a);
    if (gpt2) vx_t3_gpt2_free(&tg);
    else vx_t3_free(&t3);
    if (st) return cli_error("bench", "%s", err.msg);
    printf("peak_rss: %.0f MiB\n", bench_peak_rss_mib());
    return 0;
}

/* `vocis bench convert`: voice conversion of `seconds` of source speech (ChatterboxVC) on random
 * weights at the release's dimensions: the source's S3 tokens (25 a second), then S3Gen over the
 * 10 s target prompt + the source tokens and HiFT. Compared with S3Gen + HiFT alone for the same
 * audio (the yardstick: convert <= 2 x that). */
int bench_convert(int argc, char **argv) {
    int synthetic = 0, threads = 0;
    float seconds = 10.0f;
    const char *precision = NULL;
    const cli_opt opts[] = {
        {"--synthetic", CLI_FLAG, &synthetic, "random weights at the release's dimensions (required)", 0, -1},
        {"--seconds", CLI_FLOAT, &seconds, "source speech in seconds (10)", 0.5, 120},
        {"--precision", CLI_STR, &precision, CLI_PRECISION_HELP, 0, -1},
        {"--threads", CLI_INT, &threads, "worker threads (default: physical cores)", 1, 1024},
    };
    int r = cli_parse(argc, argv, opts, (int)(sizeof opts / sizeof opts[0]),
                      "usage: vocis bench convert --synthetic [--seconds S] [--threads N]\n\n"
                      "Times Chatterbox voice conversion of S seconds of speech on random weights at the\n"
                      "release's dimensions: S3 tokenizer, then S3Gen (10 s target prompt) + HiFT.");
    if (r) return r == 1 ? 0 : 2;
    int prec;
    if ((r = bench_common_args(synthetic, &threads, precision, &prec))) return r;
    vx_err err = {0};
    acoustic a = {0};
    vx_s3tok *tok = NULL;
    vocis_status st = acoustic_new(&a, VX_F32, prec, 10.0, 0, &err);
    if (!st) st = vx_s3tok_random(128, 1280, 20, 6, 12, &tok, &err);
    const int64_t n16 = (int64_t)(seconds * 16000);
    float *src = malloc(sizeof(float) * (size_t)n16);
    int64_t *codes = NULL, ncodes = 0;
    if (!st && !src) st = vx_fail(&err, VOCIS_E_NOMEM, "out of memory");
    for (int64_t i = 0; src && i < n16; i++)
        src[i] = 0.2f * sinf(0.031f * (float)i) * (0.5f + 0.5f * sinf(0.0004f * (float)i));
    printf("model: synthetic S3 tokenizer + S3Gen + HiFT, precision %s, %d threads, %.1f s source\n",
           vx_precision_describe(prec), threads, seconds);
    acoustic_times at = {0};
    double t_tok = 0;
    for (int k = 0; k < 2 && !st; k++) { /* warm-up, then timed */
        free(codes);
        codes = NULL;
        const double t0 = vx_now_s();
        st = vx_s3tok_tokenize(tok, src, n16, 0, &codes, &ncodes, threads, &err);
        t_tok = vx_now_s() - t0;
        vx_rng rng;
        vx_rng_seed(&rng, 0);
        if (!st) st = acoustic_run(&a, codes, ncodes, 10, &rng, threads, &at, &err);
    }
    free(src), free(codes);
    vx_s3tok_free(tok);
    acoustic_free(&a);
    if (st) return cli_error("bench", "%s", err.msg);
    const double total = t_tok + at.flow + at.hift, audio = (double)at.samples / VX_HIFT_SR;
    printf("s3_tokens: %.0f ms (%lld tokens)\n", 1e3 * t_tok, (long long)ncodes);
    printf("s3gen_hift: %.0f ms (flow %.0f + HiFT %.0f)\n", 1e3 * (at.flow + at.hift), 1e3 * at.flow, 1e3 * at.hift);
    printf("convert: %.0f ms (%.2f x S3Gen+HiFT; rtf %.2f)\n", 1e3 * total, total / (at.flow + at.hift), total / audio);
    printf("peak_rss: %.0f MiB\n", bench_peak_rss_mib());
    return 0;
}
