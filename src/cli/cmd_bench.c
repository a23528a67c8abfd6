/* `vocis bench WHAT`: throughput on synthetic (random-weight, real-size)
 * models, printed one figure per line as `name: value unit`. */
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
#include "vocis.h"
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
    double now = vx_now_s();
    if (step == 0) t->t_first = now;
    t->t_last = now;
    t->n = step + 1;
    return 0;
}

/* One timed T3 generation: fills tt (times of the first and last token) for `tokens` draws. */
typedef vocis_status (*t3_run_fn)(void *ctx, int tokens, tok_timer *tt, vx_err *err);

/* One short warm-up generation (2 tokens: thread start, first touches of the caches), then `reps`
 * timed ones of `tokens` draws each: prefill_s[r] (start to first token) and decode[r] (decode
 * steps per second). *steps receives the decode steps of a timed run. */
static vocis_status t3_time_reps(t3_run_fn run, void *ctx, int tokens, int reps, double *prefill_s, double *decode,
                                 int *steps, vx_err *err) {
    tok_timer tt = {0};
    VX_TRY(run(ctx, 2, &tt, err));
    *steps = 0;
    for (int r = 0; r < reps; r++) {
        tt = (tok_timer){0};
        const double t1 = vx_now_s();
        VX_TRY(run(ctx, tokens, &tt, err));
        prefill_s[r] = tt.t_first - t1;
        decode[r] = tt.n > 1 ? (tt.n - 1) / (tt.t_last - tt.t_first) : 0;
        *steps = tt.n - 1;
    }
    return VOCIS_OK;
}

/* What a timed T3 run needs for speculative decoding next to plain decoding (speculate_reps). */
typedef struct spec_state {
    int speculate;   /* VX_SPEC_* or k */
    int32_t *tokens; /* the last run's tokens (owned) */
    int n_tokens;
    vx_spec_ctl rep; /* and its speculation totals */
    /* builds the model's draft (before the speculative runs, after the plain ones' peak memory) */
    vocis_status (*draft)(void *ctx, const vx_draft_mem **d, vx_err *err);
    double draft_bytes; /* the draft's matrices: what one draft step reads */
} spec_state;

/* The prefill with the voice's conditioning prefix cached, next to the full prefill of the runs
 * before (prefill_s, reps of them): attach_cache gives the model a voice cache; one run fills it,
 * then `reps` 2-token runs time the prefill that only computes the text. The cache is removed after. */
static vocis_status time_prefill_cached(t3_run_fn run, void *ctx, spec_state *sp,
                                        vocis_status (*attach_cache)(void *ctx, size_t bytes), int reps,
                                        const double *prefill_s, vx_err *err) {
    VX_TRY(attach_cache(ctx, (size_t)256 << 20));
    const vx_spec_ctl rep = sp->rep; /* the timed decode runs' report, kept for their work figures */
    double *c = calloc((size_t)reps, sizeof(double));
    tok_timer tt = {0};
    vocis_status st = c ? run(ctx, 2, &tt, err) : vx_fail(err, VOCIS_E_NOMEM, "out of memory");
    for (int r = 0; r < reps && !st; r++) {
        tt = (tok_timer){0};
        const double t1 = vx_now_s();
        st = run(ctx, 2, &tt, err);
        c[r] = 1e3 * (tt.t_first - t1);
    }
    if (!st) {
        double full[64];
        const int n = reps < 64 ? reps : 64;
        for (int r = 0; r < n; r++) full[r] = 1e3 * prefill_s[r];
        bench_print_stats("prefill_ms", full, n, 1, 1, "ms", "to the first token, the voice prefix computed");
        bench_print_stats("prefill_cached_ms", c, reps, 1, 1, "ms",
                          "to the first token, the voice prefix from the voice cache (same bits)");
    }
    free(c);
    sp->rep = rep;
    vocis_status st2 = attach_cache(ctx, 0);
    return st ? st : st2;
}

/* Prints the prefill and decode lines of t3_time_reps' figures (rates per repetition) with their
 * work: prefill the whole prefill's, decode one step's at the steps' mean context. */
static void t3_print_reps(const double *prefill_s, const double *decode, int reps, int L0, int steps,
                          const char *rows, const char *step_kind, const bench_limits *lim, bench_work prefill,
                          bench_work step) {
    double rate[64], *pr = reps <= 64 ? rate : malloc(sizeof(double) * (size_t)reps);
    if (!pr) return;
    for (int r = 0; r < reps; r++) pr[r] = L0 / prefill_s[r];
    const bench_stats ps = bench_stats_of(prefill_s, reps);
    char note[256];
    bench_limit_note(note, sizeof note, lim, bench_work_scale(prefill, 1.0 / L0), "position", ps.median / L0);
    bench_print_stats("prefill", pr, reps, 1, 1, "tokens/s", "%d positions x %s, median %.3f s; %s", L0, rows,
                      ps.median, note);
    if (steps > 0) {
        const bench_stats ds = bench_stats_of(decode, reps);
        bench_limit_note(note, sizeof note, lim, step, "step", ds.median > 0 ? 1 / ds.median : 0);
        bench_print_stats("decode", decode, reps, 1, 2, "tokens/s", "%d %s steps each, context %d to %d; %s", steps,
                          step_kind, L0 + 1, L0 + steps, note);
    }
    if (pr != rate) free(pr);
}

/* The GPT-2 T3's matrices: bytes of all layers' and their multiply-adds per row. */
static void gpt2_layer_sums(const vx_t3_gpt2 *t, double *bytes, double *macs) {
    *bytes = *macs = 0;
    for (int i = 0; i < t->n_layers; i++) {
        const vx_gpt2_layer *ly = &t->layers[i];
        const vx_mat *m[4] = {&ly->attn, &ly->proj, &ly->fc, &ly->fc_proj};
        for (int j = 0; j < 4; j++) *bytes += bench_mat_bytes(m[j]), *macs += bench_mat_macs(m[j]);
    }
}

/* One GPT-2 T3 decode step (one row) attending to ctx positions: the layers, the speech head, one
 * speech-embedding and one wpe row, the f32 keys and values of ctx positions. */
static bench_work gpt2_decode_work(const vx_t3_gpt2 *t, double ctx) {
    double bytes, macs;
    gpt2_layer_sums(t, &bytes, &macs);
    const double kv_pos = 2.0 * t->n_layers * t->dim * sizeof(float); /* f32 K and V, all layers */
    const double qk_pv = 4.0 * t->n_layers * t->n_heads * t->head_dim;   /* attention FLOPs per position */
    bench_work w;
    w.bytes = bytes + bench_mat_bytes(&t->speech_head) + bench_mat_row_bytes(&t->speech_emb) +
              bench_mat_row_bytes(&t->wpe) + ctx * kv_pos;
    w.flops = 2 * (macs + bench_mat_macs(&t->speech_head)) + qk_pv * ctx;
    w.bf16 = t->n_layers > 0 && t->layers[0].attn.act_bf16;
    return w;
}

/* The GPT-2 T3 prefill of L0 positions (one pass): the layers, causal attention, the speaker
 * projection and the speech head of the last row. */
static bench_work gpt2_prefill_work(const vx_t3_gpt2 *t, double L0) {
    double bytes, macs;
    gpt2_layer_sums(t, &bytes, &macs);
    const double kv_pos = 2.0 * t->n_layers * t->dim * sizeof(float); /* f32 K and V, all layers */
    const double qk_pv = 4.0 * t->n_layers * t->n_heads * t->head_dim;   /* attention FLOPs per position */
    bench_work w;
    w.bytes = bytes + bench_mat_bytes(&t->speech_head) + bench_mat_bytes(&t->spkr_enc) + L0 * kv_pos;
    w.flops = 2 * (L0 * macs + bench_mat_macs(&t->speech_head) + bench_mat_macs(&t->spkr_enc)) +
              qk_pv * L0 * (L0 + 1) / 2;
    w.bf16 = t->n_layers > 0 && t->layers[0].attn.act_bf16;
    return w;
}

/* One English / Multilingual T3 decode step of nseq rows at ctx positions: the stack, the speech
 * head for every row, one speech-embedding and one position row (the rows share the token). */
static bench_work t3_decode_work(const vx_t3 *t3, int nseq, double ctx) {
    bench_work w = bench_tf_decode(&t3->tf, nseq, ctx, (double)vx_kv_bytes_per_token(&t3->tf));
    w.bytes += bench_mat_bytes(&t3->speech_head) + bench_mat_row_bytes(&t3->speech_emb) +
               bench_mat_row_bytes(&t3->speech_pos);
    w.flops += 2.0 * nseq * bench_mat_macs(&t3->speech_head);
    return w;
}

/* The English / Multilingual T3 prefill of L0 positions of nseq rows: the stack, the speech head of
 * each row's last position, and the conditioning encoder (speaker projection; the perceiver's
 * cross-attention of its n_query queries to the n_prompt prompt rows, then its self-attention). */
static bench_work t3_prefill_work(const vx_t3 *t3, int nseq, double L0, int n_prompt) {
    bench_work w = bench_tf_prefill(&t3->tf, nseq, 0, L0, (double)vx_kv_bytes_per_token(&t3->tf));
    const vx_mat *enc[5] = {&t3->spkr_enc, &t3->to_q, &t3->to_k, &t3->to_v, &t3->proj_out};
    for (int i = 0; i < 5; i++) w.bytes += bench_mat_bytes(enc[i]);
    w.bytes += bench_mat_bytes(&t3->speech_head);
    const double nq = t3->n_query;
    w.flops += 2.0 * nseq * bench_mat_macs(&t3->speech_head) + 2.0 * bench_mat_macs(&t3->spkr_enc) +
               2.0 * (2 * nq * (bench_mat_macs(&t3->to_q) + bench_mat_macs(&t3->proj_out)) +
                      (n_prompt + nq) * (bench_mat_macs(&t3->to_k) + bench_mat_macs(&t3->to_v)));
    return w;
}

/* One decode token's work under speculation, from a plain step's: every verify or plain step
 * reads the weights once and computes its rows; each proposal adds a draft step (its matrices,
 * the same multiply-adds). The plain step's when speculation did not run. */
static bench_work spec_token_work(const spec_state *sp, bench_work step) {
    const vx_spec_ctl *c = &sp->rep;
    if (sp->speculate == VX_SPEC_OFF || c->tokens <= 0) return step;
    const double forwards = (double)(c->rounds + c->plain_steps), rows = forwards + (double)c->proposed;
    bench_work w = step;
    w.bytes = (forwards * step.bytes + (double)c->proposed * sp->draft_bytes) / (double)c->tokens;
    w.flops = (rows + (double)c->proposed) * step.flops / (double)c->tokens;
    return w;
}

/* Speculative decoding against plain decoding in the same process, same seed: plain first (its peak
 * memory is taken before the draft exists), then speculative; their rates, ratio, acceptance and tokens.
 * run's ctx holds sp. */
static vocis_status speculate_reps(t3_run_fn run, void *ctx, spec_state *sp, const char *step_kind, int tokens,
                                   int reps, double *pf, double *dec, int *steps, vx_err *err) {
    const int setting = sp->speculate;
    double *dec_plain = calloc((size_t)reps, sizeof(double));
    if (!dec_plain) return vx_fail(err, VOCIS_E_NOMEM, "out of memory");
    sp->speculate = VX_SPEC_OFF;
    vocis_status st = t3_time_reps(run, ctx, tokens, reps, pf, dec_plain, steps, err);
    const double rss_plain = bench_peak_rss_mib();
    int32_t *plain = sp->tokens;
    const int n_plain = sp->n_tokens;
    sp->tokens = NULL;
    sp->speculate = setting;
    const vx_draft_mem *d = NULL;
    const double td = vx_now_s();
    if (!st) st = sp->draft(ctx, &d, err);
    const double draft_s = vx_now_s() - td;
    if (!st) sp->draft_bytes = (double)d->bytes;
    if (!st) st = t3_time_reps(run, ctx, tokens, reps, pf, dec, steps, err);
    if (!st) {
        const bench_stats spd = bench_stats_of(dec, reps), pl = bench_stats_of(dec_plain, reps);
        bench_print_stats("decode_plain", dec_plain, reps, 1, 2, "tokens/s", "%d %s steps each, speculation off",
                          *steps, step_kind);
        printf("speculate: %s (draft: quantized linears and speech head, %.0f MiB; the decode line's work is per "
               "token: verify and draft reads shared by the tokens they yield)\n", vx_spec_name(setting),
               d->bytes / 1048576.0);
        printf("draft_build: %.2f s (once per model, on its first speculative request)\n", draft_s);
        printf("speedup: %.2f x (median decode / median decode_plain)\n", pl.median > 0 ? spd.median / pl.median : 0);
        printf("accept_rate: %.3f (%lld of %lld proposals, last run)\n", vx_spec_accept_rate(&sp->rep),
               (long long)sp->rep.accepted, (long long)sp->rep.proposed);
        printf("tokens_per_verify: %.2f (%lld rounds, %lld plain steps, last run)\n",
               vx_spec_tokens_per_verify(&sp->rep), (long long)sp->rep.rounds, (long long)sp->rep.plain_steps);
        printf("spec_costs: plain step %.2f ms, draft step %.2f ms, verify %.2f ms more per proposal (running means, "
               "last run)\n", 1e3 * sp->rep.t_plain, 1e3 * sp->rep.t_draft, 1e3 * sp->rep.t_row);
        const int same = n_plain == sp->n_tokens && !memcmp(plain, sp->tokens, sizeof(int32_t) * (size_t)n_plain);
        printf("tokens_identical_to_plain: %s (%d tokens)\n", same ? "yes" : "no", n_plain);
        printf("peak_rss_plain: %.0f MiB\n", rss_plain);
    }
    free(plain), free(dec_plain);
    return st;
}

/* Turbo / Nano T3 (GPT-2 backbone, batch 1, no CFG) on synthetic weights: prefill of
 * [speaker | 375 prompt tokens (a 15 s reference) | text | BOS], then cached decode steps.
 * The stop token is disabled so that exactly `tokens` tokens are drawn. */
typedef struct gpt2_run {
    const vx_t3_gpt2 *t;
    const float *spk;
    const int64_t *prompt;
    int n_prompt;
    const int32_t *text;
    int text_len, threads;
    spec_state sp;
} gpt2_run;

static vocis_status gpt2_run_once(void *ctx, int tokens, tok_timer *tt, vx_err *err) {
    gpt2_run *g = ctx;
    /* upstream generate()'s defaults: temperature 0.8, top-k 1000, top-p 0.95, repetition penalty 1.2; sampled
     * with seed 0, so that speculation runs its coupled sampling */
    const vx_turbo_sampling s = {0.8f, 1000, 0.95f, 1.2f, tokens - 1, 0, on_token, tt, NULL, g->sp.speculate};
    vx_rng rng;
    vx_rng_seed(&rng, 0);
    free(g->sp.tokens);
    g->sp.tokens = NULL;
    return vx_t3_gpt2_generate_ex(g->t, g->spk, g->prompt, g->n_prompt, g->text, g->text_len, &s, &rng, g->threads,
                                  VX_DRAFT_QUANT, &g->sp.rep, &g->sp.tokens, &g->sp.n_tokens, err);
}

static vocis_status gpt2_attach_cache(void *ctx, size_t bytes) {
    gpt2_run *g = ctx;
    return vx_t3_gpt2_set_voice_cache((vx_t3_gpt2 *)g->t, bytes, NULL); /* the bench's own model */
}

static vocis_status gpt2_draft(void *ctx, const vx_draft_mem **d, vx_err *err) {
    const gpt2_run *g = ctx;
    const vx_t3_gpt2 *t;
    VX_TRY(vx_t3_gpt2_draft_of(g->t, &t, g->threads, err));
    *d = &t->draft_mem;
    return VOCIS_OK;
}

/* context > 0: the voice prompt is lengthened (or shortened) so that the prefill holds `context`
 * positions; else the 375 tokens of a 15 s reference. speculate: VX_SPEC_OFF times plain decoding
 * alone, else speculative decoding next to plain decoding (gpt2_speculate_reps). */
static int bench_t3_gpt2(int variant, vx_dtype dt, const char *dtype, int prec, int tokens, int text_len,
                         int threads, int reps, int context, const bench_limits *lim, int speculate) {
    const int n_prompt = context > 0 ? context - text_len - 2 : 375;
    if (n_prompt < 1)
        return cli_error("bench", "--context %d leaves no room for the voice prompt (text %d + 2 positions)", context,
                         text_len), 2;
    vx_err err = {0};
    vx_t3_gpt2 t;
    double t0 = vx_now_s();
    vocis_status st = vx_t3_gpt2_synthetic(&t, variant == BENCH_NANO, dt, prec, 1234, &err);
    if (st) return cli_error("bench", "%s", err.msg);
    t.cfg.stop_speech_token = -1; /* every run makes exactly `tokens` tokens */
    const double t_load = vx_now_s() - t0;
    const int L0 = vx_t3_gpt2_cond_len(n_prompt) + text_len + 1;
    if (context > 0 && L0 + tokens > t.wpe.rows) {
        vx_t3_gpt2_free(&t);
        return cli_error("bench", "%d prefill positions + %d tokens exceed the %lld positions of the model", L0,
                         tokens, (long long)t.wpe.rows), 2;
    }
    float *spk = calloc((size_t)t.speaker_dim, sizeof(float));
    int64_t *prompt = malloc(sizeof(int64_t) * (size_t)n_prompt);
    int32_t *text = malloc(sizeof(int32_t) * (size_t)text_len);
    double *pf = calloc((size_t)reps, sizeof(double)), *dec = calloc((size_t)reps, sizeof(double));
    if (!spk || !prompt || !text || !pf || !dec) {
        free(spk), free(prompt), free(text), free(pf), free(dec);
        vx_t3_gpt2_free(&t);
        return cli_error("bench", "out of memory");
    }
    bench_t3_request(spk, t.speaker_dim, prompt, n_prompt, text, text_len, -1, -1);
    printf("model: synthetic %s T3 (GPT-2), %d layers, hidden %d, %d heads, %s weights, %d threads\n",
           bench_variant_name(variant), t.n_layers, t.dim, t.n_heads, dtype, threads);
    printf("precision: %s (matrices computed as %s)\n", vx_precision_name(prec), vx_dtype_name(t.layers[0].attn.dtype));
    printf("load: %.2f s\n", t_load);
    fflush(stdout);
    gpt2_run g = {&t, spk, prompt, n_prompt, text, text_len, threads, {speculate, NULL, 0, {0}, gpt2_draft, 0}};
    int steps = 0;
    if (speculate == VX_SPEC_OFF) st = t3_time_reps(gpt2_run_once, &g, tokens, reps, pf, dec, &steps, &err);
    else st = speculate_reps(gpt2_run_once, &g, &g.sp, "batch-1", tokens, reps, pf, dec, &steps, &err);
    if (!st) st = time_prefill_cached(gpt2_run_once, &g, &g.sp, gpt2_attach_cache, reps, pf, &err);
    if (!st) {
        t3_print_reps(pf, dec, reps, L0, steps, "1 row, no CFG", "batch-1", lim, gpt2_prefill_work(&t, L0),
                      spec_token_work(&g.sp, gpt2_decode_work(&t, L0 + (steps + 1) / 2.0)));
        printf("peak_rss: %.0f MiB\n", bench_peak_rss_mib());
        printf("rss_now: %.0f MiB\n", bench_rss_now_mib());
    }
    free(g.sp.tokens);
    free(spk), free(prompt), free(text), free(pf), free(dec);
    vx_t3_gpt2_free(&t);
    if (st) return cli_error("bench", "%s", err.msg);
    return 0;
}

/* English / Multilingual T3: a fixed, valid conditioning and text; the stop token is disabled. */
typedef struct t3_run {
    const vx_t3 *t3;
    const vx_t3_cond *c;
    const int32_t *text;
    int n_text, threads;
    float cfg_weight; /* 0: one row per step, no CFG */
    spec_state sp;
} t3_run;

/* Sampled with upstream's defaults and seed 0, so that speculation runs its coupled sampling. */
static vocis_status t3_run_once(void *ctx, int tokens, tok_timer *tt, vx_err *err) {
    t3_run *q = ctx;
    const vx_t3_sampling s = {0.8f, q->cfg_weight, 0.05f, 1.0f, 1.2f, tokens, 0, on_token, tt, q->sp.speculate};
    vx_rng rng;
    vx_rng_seed(&rng, 0);
    free(q->sp.tokens);
    q->sp.tokens = NULL;
    return vx_t3_generate_ex(q->t3, q->c, q->text, q->n_text, &s, &rng, q->threads, VX_DRAFT_QUANT, &q->sp.rep,
                             &q->sp.tokens, &q->sp.n_tokens, err);
}

static vocis_status t3_attach_cache(void *ctx, size_t bytes) {
    const t3_run *q = ctx;
    return vx_t3_set_voice_cache((vx_t3 *)q->t3, bytes, NULL); /* the bench's own model */
}

static vocis_status t3_draft(void *ctx, const vx_draft_mem **d, vx_err *err) {
    const t3_run *q = ctx;
    const vx_t3_draft *t;
    VX_TRY(vx_t3_draft_of(q->t3, &t, q->threads, err));
    *d = &t->mem;
    return VOCIS_OK;
}

static int bench_t3(int argc, char **argv) {
    int synthetic = 0, tokens = 200, threads = 0, text_len = 40, reps = 5, no_cfg = 0, context = 0, no_limits = 0;
    const char *dtype = "f32", *model = NULL, *precision = NULL, *variant_s = NULL, *kv_s = NULL, *speculate_s = NULL;
    const cli_opt opts[] = {
        {"--synthetic", CLI_FLAG, &synthetic, "random weights at the release's dimensions", 0, -1},
        {"--kv", CLI_STR, &kv_s, CLI_KV_HELP, 0, -1},
        {"--variant", CLI_STR, &variant_s, "synthetic model: " BENCH_VARIANT_HELP, 0, -1},
        {"--model", CLI_STR, &model, "benchmark a real model folder instead", 0, -1},
        {"--dtype", CLI_STR, &dtype, "stored dtype of the synthetic model: f32 (default, as released), bf16, f16", 0,
         -1},
        {"--precision", CLI_STR, &precision, CLI_PRECISION_HELP, 0, -1},
        {"--tokens", CLI_INT, &tokens, "decode steps to time (200)", 2, 4000},
        {"--text-tokens", CLI_INT, &text_len, "text tokens in the prompt (40)", 1, 2000},
        {"--reps", CLI_INT, &reps, "timed generations after a 2-token warm-up; median, min, max printed (5)", 1,
         100},
        {"--threads", CLI_INT, &threads, "worker threads (default: physical cores)", 1, 1024},
        {"--no-cfg", CLI_FLAG, &no_cfg, "one row per step (cfg_weight 0) instead of the CFG pair", 0, -1},
        {"--context", CLI_INT, &context,
         "positions cached before the timed decode steps: the prefill's length, made up with text tokens (GPT-2: "
         "voice prompt tokens; default: the request's own length)", 1, 65536},
        {"--no-limits", CLI_FLAG, &no_limits, BENCH_NO_LIMITS_HELP, 0, -1},
        {"--speculate", CLI_STR, &speculate_s,
         "off (default) | auto | N: time self-speculative decoding next to plain decoding", 0, -1},
    };
    int r = cli_parse(argc, argv, opts, (int)(sizeof opts / sizeof opts[0]),
                      "usage: vocis bench t3 (--synthetic | --model DIR) [options]\n\n"
                      "Times T3: prefill of the CFG pair (34 conditioning + text + 2 BOS positions) and\n"
                      "cached decode steps of the pair (one step = one speech token). --variant turbo|nano:\n"
                      "the GPT-2 T3, batch 1 without CFG (376 conditioning + text + 1 BOS positions).\n"
                      "Synthetic runs disable the stop token, so exactly --tokens tokens are drawn.\n"
                      "Each figure is the median of --reps generations, followed by (min, max, n), the bytes\n"
                      "and FLOPs of one unit and the fraction of the limit that binds it (measured first).");
    if (r) return r == 1 ? 0 : 2;
    int speculate = VX_SPEC_OFF;
    if (speculate_s && vx_spec_parse(speculate_s, &speculate))
        return cli_error("bench", "--speculate must be off, auto or 1..%d", VX_SPEC_KMAX), 2;
    const int variant = bench_parse_variant(variant_s);
    if (variant < 0) return cli_error("bench", "--variant must be english, mtl, turbo or nano"), 2;
    if (variant_s && model) return cli_error("bench", "--variant applies to --synthetic models only"), 2;
    vx_dtype dt;
    if (bench_parse_dtype(dtype, &dt)) return cli_error("bench", "--dtype must be bf16, f16 or f32"), 2;
    if (!synthetic == !model) return cli_error("bench", "give exactly one of --synthetic and --model DIR"), 2;
    int prec;
    if (cli_precision("bench", precision, &prec)) return 2;
    prec = vx_precision_resolve(prec);
    int kvc;
    if (cli_kv("bench", kv_s, &kvc)) return 2;
    if (kvc == VOCIS_KV_BF16 && (variant == BENCH_TURBO || variant == BENCH_NANO))
        return cli_error("bench", "--kv bf16 is not available for the GPT-2 T3 (turbo, nano)"), 2;
    if (threads <= 0) threads = vx_default_threads();
    if (no_cfg && (variant == BENCH_TURBO || variant == BENCH_NANO))
        return cli_error("bench", "--no-cfg: the GPT-2 T3 (turbo, nano) always runs one row without CFG"), 2;
    bench_limits lim;
    bench_limits_measure(&lim, threads, no_limits);
    if (variant == BENCH_TURBO || variant == BENCH_NANO)
        return bench_t3_gpt2(variant, dt, dtype, prec, tokens, text_len, threads, reps, context, &lim, speculate);

    vx_err err = {0};
    vx_cb_config cfg;
    vx_cb_config_default(&cfg);
    vx_t3 t3;
    double t0 = vx_now_s();
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
    double t_load = vx_now_s() - t0;
    vx_tf_set_kv(&t3.tf, kvc == VOCIS_KV_BF16 ? VX_KV_BF16 : VX_KV_F32);
    if (context > 0) { /* prefill = conditioning + start + text + stop + 2 BOS positions */
        const int with_prompt = vx_t3_cond_len(&t3, &(vx_t3_cond){NULL, (const int64_t[]){0}, 1, 0.5f});
        text_len = context - with_prompt - 4;
        if (text_len < 1 || text_len + 2 > t3.text_pos.rows) {
            vx_t3_free(&t3);
            return cli_error("bench", "--context must be in [%d, %lld] for this T3", with_prompt + 5,
                             (long long)t3.text_pos.rows + with_prompt + 2), 2;
        }
    }

    float *spk = calloc((size_t)t3.speaker_dim, sizeof(float));
    int64_t prompt[150];
    int32_t *text = malloc(sizeof(int32_t) * (size_t)(text_len + 2));
    double *pf = calloc((size_t)reps, sizeof(double)), *dec = calloc((size_t)reps, sizeof(double));
    if (!spk || !text || !pf || !dec) {
        free(spk), free(text), free(pf), free(dec);
        vx_t3_free(&t3);
        return cli_error("bench", "out of memory");
    }
    bench_t3_request(spk, t3.speaker_dim, prompt, 150, text, text_len + 2, cfg.start_text_token, cfg.stop_text_token);
    vx_t3_cond c = {spk, prompt, 150, 0.5f};
    printf("model: %s%s T3, %d layers, hidden %d, text vocabulary %lld, %s weights, %d threads\n",
           synthetic ? "synthetic " : model, synthetic ? bench_variant_name(variant) : "", t3.tf.n_layers, t3.dim,
           (long long)t3.text_emb.rows, synthetic ? dtype : "file", threads);
    printf("precision: %s (matrices computed as %s)\n", vx_precision_name(prec), vx_dtype_name(t3.tf.layers[0].q.dtype));
    printf("kv_cache: %s (%zu B per position per sequence)\n", vx_kv_name(t3.tf.kv_dtype == VX_BF16), vx_kv_bytes_per_token(&t3.tf));
    printf("load: %.2f s\n", t_load);
    fflush(stdout);
    t3_run q = {&t3, &c, text, text_len + 2, threads, no_cfg ? 0.0f : 0.5f, {speculate, NULL, 0, {0}, t3_draft, 0}};
    int steps = 0;
    if (speculate == VX_SPEC_OFF) st = t3_time_reps(t3_run_once, &q, tokens, reps, pf, dec, &steps, &err);
    else st = speculate_reps(t3_run_once, &q, &q.sp, no_cfg ? "single-row" : "CFG-pair", tokens, reps, pf, dec,
                             &steps, &err);
    if (!st) st = time_prefill_cached(t3_run_once, &q, &q.sp, t3_attach_cache, reps, pf, &err);
    if (!st) {
        /* prefill positions: conditioning, start + text + stop, BOS twice */
        const int L0 = vx_t3_cond_len(&t3, &c) + text_len + 4, nseq = no_cfg ? 1 : 2;
        t3_print_reps(pf, dec, reps, L0, steps, no_cfg ? "1 row" : "2 CFG rows", no_cfg ? "single-row" : "CFG-pair",
                      &lim, t3_prefill_work(&t3, nseq, L0, 150),
                      spec_token_work(&q.sp, t3_decode_work(&t3, nseq, L0 + (steps + 1) / 2.0)));
        if (steps + 1 < tokens) printf("note: generation stopped at the stop token after %d steps\n", steps + 1);
        printf("peak_rss: %.0f MiB\n", bench_peak_rss_mib());
        printf("rss_now: %.0f MiB\n", bench_rss_now_mib());
    }
    free(q.sp.tokens);
    free(spk), free(text), free(pf), free(dec);
    vx_t3_free(&t3);
    if (st) return cli_error("bench", "%s", err.msg);
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
    if (!st) st = vx_kv_fill_synthetic(&kv, ctx, err);
    const int32_t ids[4] = {0, 1, 2, 3};
    float logits[4];
    int steps = 0;
    double t0 = vx_now_s(), t = t0;
    while (!st && (steps < 3 || (t - t0 < 2.0 && steps < 60))) {
        for (int i = 0; i < nseq * H; i++) x[i] = 0.01f * (float)((i + steps) % 17 - 8);
        st = vx_tf_forward(tf, &kv, NULL, nseq, 1, x, threads, NULL, NULL, err);
        for (int q = 0; !st && q < nseq; q++) {
            vx_tf_final_norm(tf, h + (size_t)q * H, x + (size_t)q * H, 1);
            vx_vv_lm_logits_subset(lm, h + (size_t)q * H, ids, 4, logits);
        }
        steps++;
        t = vx_now_s();
    }
    *steps_per_s = steps / (t - t0);
    free(x), free(h);
    vx_kv_free(&kv);
    return st;
}

/* One decode step of time_decode: the stack for nseq sequences at ctx positions, and the 4 rows
 * of the LM head that the loop's logits read (the same ids for every sequence). */
static bench_work qwen2_decode_work(const vx_vv_lm *lm, int nseq, double ctx) {
    bench_work w = bench_tf_decode(&lm->tf, nseq, ctx, (double)vx_kv_bytes_per_token(&lm->tf));
    w.bytes += 4 * bench_mat_row_bytes(&lm->lm_head);
    w.flops += 2.0 * nseq * 4 * (double)lm->lm_head.cols;
    return w;
}

static int bench_qwen2(int argc, char **argv) {
    const char *size = NULL, *dtype = "bf16", *kv_s = NULL, *context_s = NULL;
    int threads = 0, no_long = 0, kvc;
    const cli_opt opts[] = {
        {"--synthetic", CLI_STR, &size, "random weights at the dims of VibeVoice 1.5b or 7b (required)", 0, -1},
        {"--kv", CLI_STR, &kv_s, CLI_KV_HELP, 0, -1},
        {"--dtype", CLI_STR, &dtype, "weight dtype: bf16 (default), f16, f32", 0, -1},
        {"--threads", CLI_INT, &threads, "worker threads (default: physical cores)", 1, 1024},
        {"--skip-long", CLI_FLAG, &no_long, "skip the 4096-token prefill and the 4K/16K-context decodes", 0, -1},
        {"--context", CLI_STR, &context_s, "cached positions of the decode lines: N[,N...] (1024,4096,16384)", 0, -1},
    };
    int r = cli_parse(argc, argv, opts, (int)(sizeof opts / sizeof opts[0]),
                      "usage: vocis bench qwen2 --synthetic 1.5b|7b [--dtype bf16|f16|f32] [--threads N]\n\n"
                      "VibeVoice's Qwen2 LM: prefill throughput, and decode steps per second of one sequence or\n"
                      "of the positive/negative CFG pair (one step advances both) at 1K, 4K and 16K cached\n"
                      "positions (--context N[,N...]), computing only the 4 logits the generation loop uses. --kv bf16: bf16 caches.");
    if (r) return r == 1 ? 0 : 2;
    if (!size) return cli_error("bench", "--synthetic 1.5b|7b is required"), 2;
    if (cli_kv("bench", kv_s, &kvc)) return 2;
    vx_dtype dt;
    if (bench_parse_dtype(dtype, &dt)) return cli_error("bench", "--dtype must be bf16, f16 or f32"), 2;
    if (threads <= 0) threads = vx_default_threads();
    int64_t ctx[8] = {1024, 4096, 16384};
    int nctx = 3;
    if (context_s && (nctx = bench_parse_positions(context_s, ctx, 8, 1 << 20)) < 0)
        return cli_error("bench", "--context: 1 to 8 comma-separated positions in 1..1048576"), 2;
    bench_limits lim;
    bench_limits_measure(&lim, threads, 0);
    vx_err err = {0};
    vx_vv_config cfg;
    vx_weights *w = NULL;
    vx_vv_lm lm;
    double t0 = vx_now_s();
    if (vx_vv_lm_preset(size, &cfg, &err) || vx_vv_lm_synthetic_weights(&cfg, dt, 1234, &w, &err) ||
        vx_vv_lm_init(&lm, w, &cfg, "model.language_model.", &err)) {
        vx_weights_close(w);
        return cli_error("bench", "%s", err.msg);
    }
    vx_tf_set_kv(&lm.tf, kvc == VOCIS_KV_BF16 ? VX_KV_BF16 : VX_KV_F32);
    printf("model: synthetic VibeVoice-%s Qwen2, %d layers, hidden %d, %d/%d heads, %s weights, %d threads\n", size,
           lm.tf.n_layers, lm.tf.dim, lm.tf.n_heads, lm.tf.n_kv_heads, dtype, threads);
    printf("load: %.2f s\n", vx_now_s() - t0);
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
        double t1 = vx_now_s();
        st = vx_tf_forward(&lm.tf, &kv, NULL, 1, plen[i], x, threads, NULL, NULL, &err);
        const double t_prefill = vx_now_s() - t1;
        char note[256];
        const bench_work pw = bench_tf_prefill(&lm.tf, 1, 0, (double)plen[i], (double)vx_kv_bytes_per_token(&lm.tf));
        bench_limit_note(note, sizeof note, &lim, bench_work_scale(pw, 1.0 / plen[i]), "position", t_prefill / plen[i]);
        if (!st) printf("prefill_%lld: %.1f tokens/s (%s)\n", (long long)plen[i], plen[i] / t_prefill, note);
        fflush(stdout);
        vx_kv_free(&kv);
        free(x);
    }
    for (int c = 0; c < nctx && !st; c++)
        for (int nseq = 1; nseq <= 2 && !st; nseq++) {
            if (no_long && !context_s && ctx[c] > 1024) continue;
            double sps;
            if (!(st = time_decode(&lm, nseq, ctx[c], threads, &sps, &err))) {
                char note[256];
                bench_limit_note(note, sizeof note, &lim, qwen2_decode_work(&lm, nseq, (double)ctx[c] + 1), "step",
                                 1 / sps);
                printf("decode_%dseq_ctx%lld%s: %.2f steps/s (%s)\n", nseq,
                       (long long)(ctx[c] % 1024 ? ctx[c] : ctx[c] / 1024), ctx[c] % 1024 ? "" : "k", sps, note);
            }
            fflush(stdout);
        }
    if (!st) {
        printf("kv_bytes_per_token: %zu B (%s K and V, all layers, one sequence)\n", vx_kv_bytes_per_token(&lm.tf),
               vx_kv_name(lm.tf.kv_dtype == VX_BF16));
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
                   "  vibevoice  VibeVoice per-frame generation cost and real-time factor\n"
                   "  quality  output of the fast precision modes (bf16, q8) against exact\n"
                   "  peak   this machine's limits: memory bandwidth, f32/bf16 multiply rates\n");
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
    if (!strcmp(argv[1], "quality")) return bench_quality(argc - 1, argv + 1);
    if (!strcmp(argv[1], "peak")) return bench_peak(argc - 1, argv + 1);
    if (!strcmp(argv[1], "gemv")) { int bench_gemv(int, char **); return bench_gemv(argc - 1, argv + 1); }
    return cli_error("bench", "unknown benchmark '%s' (see vocis bench --help)", argv[1]), 2;
}
