/* `vocis bench quality --synthetic`: how far each fast precision mode (bf16, q8) moves the outputs
 * from the exact mode, on random-weight models at the release's dimensions, stored in the
 * release's dtypes (Chatterbox T3 / S3Gen float32, VibeVoice bf16) and converted at load by the
 * precision policy exactly as a real folder would be (kernels/precision.h).
 *
 *   T3        greedy tokens of one request in both modes (agreement, first divergence) and the
 *             max-relative error of the prefill's last-position logits (both CFG rows)
 *   CFM       mel SNR of the flow output (encoder + 10 Euler/CFG steps), the same noise
 *   HiFT      waveform SNR for the same (exact) mel and noise; s3gen_wave: flow + HiFT of the mode
 *   VibeVoice latent SNR of the diffusion head's output per frame (LM pair step + DPM-Solver
 *             with CFG, the same noise), fixed LM inputs so every frame sees the same input
 *
 * Each model is built, measured and freed one mode at a time (exact first), so only one copy of
 * a model is resident. SNR = 10·log10(Σ ref² / Σ (ref − x)²) in dB; inf = identical. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/threads.h"
#include "cli/bench_util.h"
#include "cli/cli.h"
#include "kernels/precision.h"
#include "models/chatterbox/hift.h"
#include "models/chatterbox/s3gen_flow.h"
#include "models/chatterbox/t3.h"
#include "models/synthetic.h"
#include "models/vibevoice/diffusion.h"
#include "models/vibevoice/dpm_solver.h"
#include "models/vibevoice/lm.h"

#define MAX_MODES 4

static double snr_db(const float *ref, const float *x, int64_t n) {
    double s = 0, e = 0;
    for (int64_t i = 0; i < n; i++) {
        const double d = (double)ref[i] - (double)x[i];
        s += (double)ref[i] * ref[i];
        e += d * d;
    }
    return e == 0 ? INFINITY : 10.0 * log10(s / e);
}

static double max_rel(const float *ref, const float *x, int64_t n) {
    double m = 0, d = 0;
    for (int64_t i = 0; i < n; i++) {
        m = fmax(m, fabs((double)ref[i]));
        d = fmax(d, fabs((double)ref[i] - (double)x[i]));
    }
    return m > 0 ? d / m : d;
}

/* ------------------------------------------------------------------ T3 */

enum { T3_TEXT = 40, T3_PROMPT = 150 };

typedef struct t3_result {
    float *logits; /* [2][V] last prefill position, conditional and unconditional row */
    int64_t nlogits;
    int32_t *tokens;
    int n;
} t3_result;

static void t3_result_free(t3_result *r) {
    free(r->logits);
    free(r->tokens);
    memset(r, 0, sizeof *r);
}

/* Build the synthetic T3 (F32 as released) under `prec`; prefill logits and `steps` greedy tokens. */
static vocis_status t3_measure(int prec, int steps, int threads, t3_result *o, int *L0_out, vx_err *err) {
    memset(o, 0, sizeof *o);
    vx_cb_config cfg;
    vx_cb_config_default(&cfg);
    vx_weights *w = NULL;
    vx_t3 t3;
    VX_TRY(vx_t3_synthetic_weights(VX_F32, 1234, &w, err));
    vx_weights_set_precision(w, prec); /* the load-time conversion of a real t3_cfg.safetensors */
    vocis_status st = vx_t3_init(&t3, w, &cfg, err);
    if (st) {
        vx_weights_close(w);
        return st;
    }
    t3.w = w;
    t3.cfg.stop_speech_token = -1; /* exactly `steps` tokens */
    float *spk = malloc(sizeof(float) * (size_t)t3.speaker_dim), *x = NULL;
    int64_t prompt[T3_PROMPT];
    int32_t text[T3_TEXT + 2];
    vx_kv_cache kv = {0};
    int kv_ok = 0;
    if (!spk) st = vx_fail(err, VOCIS_E_NOMEM, "out of memory");
    if (!st) bench_t3_request(spk, t3.speaker_dim, prompt, T3_PROMPT, text, T3_TEXT + 2, cfg.start_text_token,
                              cfg.stop_text_token);
    const vx_t3_cond c = {spk, prompt, T3_PROMPT, 0.5f};
    const int64_t D = t3.dim, V = t3.speech_head.rows;
    const int L0 = vx_t3_cond_len(&t3, &c) + (T3_TEXT + 2) + 2; /* cond | start, text, stop | BOS, BOS */
    *L0_out = L0;
    if (!st && (!(x = malloc(sizeof(float) * (size_t)(2 * L0 * D))) ||
                !(o->logits = malloc(sizeof(float) * (size_t)(2 * V)))))
        st = vx_fail(err, VOCIS_E_NOMEM, "out of memory");
    o->nlogits = 2 * V;
    if (!st) st = vx_t3_prefill_embeds(&t3, &c, text, T3_TEXT + 2, 2, x, threads, err);
    if (!st && !(st = vx_kv_init(&kv, &t3.tf, 2, 0, err))) kv_ok = 1;
    if (!st) st = vx_tf_forward(&t3.tf, &kv, NULL, 2, L0, x, threads, NULL, NULL, err);
    if (!st) st = vx_t3_head_logits(&t3, x, 2, L0, o->logits, threads, err);
    if (kv_ok) vx_kv_free(&kv);
    free(x);
    /* greedy: no draws, the same tokens whatever the rng */
    const vx_t3_sampling s = {0.8f, 0.5f, 0.05f, 1.0f, 1.2f, steps, 1, NULL, NULL};
    vx_rng rng;
    vx_rng_seed(&rng, 0);
    if (!st) st = vx_t3_generate(&t3, &c, text, T3_TEXT + 2, &s, &rng, threads, &o->tokens, &o->n, err);
    free(spk);
    vx_t3_free(&t3);
    return st;
}

static vocis_status quality_t3(const int *modes, int nmodes, int steps, int threads, vx_err *err) {
    t3_result ref, r;
    int L0 = 0;
    double t0 = vx_now_s();
    VX_TRY(t3_measure(VX_PREC_EXACT, steps, threads, &ref, &L0, err));
    printf("t3_shape: %d prefill positions x 2 CFG rows (%d prompt tokens, %d text tokens), %d greedy tokens\n", L0,
           T3_PROMPT, T3_TEXT, steps);
    vocis_status st = VOCIS_OK;
    for (int m = 0; m < nmodes && !st; m++) {
        if ((st = t3_measure(modes[m], steps, threads, &r, &L0, err))) break;
        int agree = 0, first = -1;
        const int n = ref.n < r.n ? ref.n : r.n;
        for (int i = 0; i < n; i++) {
            if (ref.tokens[i] == r.tokens[i]) agree++;
            else if (first < 0) first = i;
        }
        if (first < 0 && ref.n != r.n) first = n;
        const char *mn = vx_precision_name(modes[m]);
        printf("t3_logits_max_rel[%s]: %.3g %% (max|a-b| / max|a| of the last prefill logits, both rows)\n", mn,
               100 * max_rel(ref.logits, r.logits, ref.nlogits));
        printf("t3_greedy_agree[%s]: %d /%d\n", mn, agree, ref.n);
        if (first < 0) printf("t3_first_divergence[%s]: none (all %d tokens equal)\n", mn, ref.n);
        else printf("t3_first_divergence[%s]: %d step (0 = the token drawn from the prefill)\n", mn, first);
        fflush(stdout);
        t3_result_free(&r);
    }
    t3_result_free(&ref);
    printf("t3_seconds: %.1f s\n", vx_now_s() - t0);
    return st;
}

/* ------------------------------------------------------------------ S3Gen flow + HiFT */

typedef struct flow_shape {
    int64_t np, n, tp; /* prompt tokens, generated tokens, prompt mel frames */
    int steps;
} flow_shape;

/* The flow (F32 as released, loaded through the policy of prec) on a fixed request; mel [80][tm]. */
static vocis_status flow_measure(int prec, const flow_shape *sh, int threads, float **mel, int64_t *tm,
                                 vx_err *err) {
    vx_s3gen_flow_dims d;
    vx_s3gen_flow_dims_real(&d);
    vx_weights *w = NULL;
    vx_s3gen_flow *f = NULL;
    VX_TRY(vx_s3gen_flow_synthetic_weights(&d, VX_F32, 1234, &w, err));
    vx_weights_set_precision(w, prec);
    vocis_status st = vx_s3gen_flow_load(w, NULL, &f, err);
    int64_t *tok = malloc(sizeof(int64_t) * (size_t)(sh->np + sh->n));
    float *feat = malloc(sizeof(float) * (size_t)((sh->tp ? sh->tp : 1) * d.n_mels));
    float *emb = malloc(sizeof(float) * (size_t)d.spk_dim);
    if (!st && (!tok || !feat || !emb)) st = vx_fail(err, VOCIS_E_NOMEM, "out of memory");
    if (!st) {
        for (int64_t i = 0; i < sh->np + sh->n; i++) tok[i] = (i * 131 + 7) % d.vocab;
        for (int64_t i = 0; i < sh->tp * d.n_mels; i++) feat[i] = -4.5f + 6.0f * sinf(0.37f * (float)i);
        for (int64_t i = 0; i < d.spk_dim; i++) emb[i] = 0.0625f * (float)((i * 37) % 17 - 8);
        vx_rng rng;
        vx_rng_seed(&rng, 0); /* the same noise in every mode */
        st = vx_s3gen_flow_infer(f, tok + sh->np, sh->n, tok, sh->np, feat, sh->tp, emb, sh->steps, &rng, NULL, mel,
                                 tm, threads, err);
    }
    free(tok), free(feat), free(emb);
    vx_s3gen_flow_free(f);
    vx_weights_close(w);
    return st;
}

static vocis_status vocode(const vx_hift *h, const float *mel, int64_t tm, int threads, float **wav, int64_t *nw,
                           vx_err *err) {
    vx_rng rng;
    vx_rng_seed(&rng, 7); /* the same phases and noise in every run */
    return vx_hift_vocode(h, mel, tm, &rng, NULL, NULL, wav, nw, NULL, NULL, threads, err);
}

static vocis_status quality_s3gen(const int *modes, int nmodes, const flow_shape *sh, int threads, vx_err *err) {
    float *ref = NULL, *mel = NULL, *wref = NULL, *wav = NULL;
    int64_t tm = 0, tm2 = 0, nw = 0, nw2 = 0;
    vx_hift *h = NULL;
    double t0 = vx_now_s();
    vocis_status st = flow_measure(VX_PREC_EXACT, sh, threads, &ref, &tm, err);
    if (!st) st = vx_hift_random(512, 512, 4321, &h, err);
    if (!st) st = vocode(h, ref, tm, threads, &wref, &nw, err);
    if (st) goto done;
    printf("cfm_shape: %lld prompt + %lld speech tokens, %lld prompt mel frames, %lld estimator frames x 2 CFG rows, "
           "%d steps; HiFT %lld mel frames -> %lld samples\n",
           (long long)sh->np, (long long)sh->n, (long long)sh->tp, (long long)(2 * (sh->np + sh->n)), sh->steps,
           (long long)tm, (long long)nw);
    for (int m = 0; m < nmodes && !st; m++) {
        const char *mn = vx_precision_name(modes[m]);
        if ((st = flow_measure(modes[m], sh, threads, &mel, &tm2, err))) break;
        if (tm2 != tm) {
            st = vx_fail(err, VOCIS_E_INTERNAL, "flow output length differs between modes");
            break;
        }
        printf("cfm_mel_snr[%s]: %.1f dB (flow output, same noise)\n", mn, snr_db(ref, mel, 80 * tm));
        /* HiFT of the mode (bf16 generator matrices under bf16/q8) on the exact mel, then on the mode's mel */
        vx_hift *hm = NULL;
        if (!(st = vx_hift_random(512, 512, 4321, &hm, err)))
            st = vx_hift_set_precision(hm, vx_precision_resolve_part(modes[m], VX_PART_VOCODER), err);
        if (!st) st = vocode(hm, ref, tm, threads, &wav, &nw2, err);
        if (st) {
            vx_hift_free(hm);
            break;
        }
        printf("hift_wave_snr[%s]: %.1f dB (same mel and noise; HiFT %s vs exact)\n", mn, snr_db(wref, wav, nw),
               hm->bf16 ? "bf16" : "f32");
        free(wav);
        wav = NULL;
        st = vocode(hm, mel, tm, threads, &wav, &nw2, err);
        vx_hift_free(hm);
        if (st) break;
        printf("s3gen_wave_snr[%s]: %.1f dB (flow of the mode + HiFT vs exact, same noise)\n", mn,
               snr_db(wref, wav, nw));
        fflush(stdout);
        free(wav), free(mel);
        wav = mel = NULL;
    }
    printf("s3gen_seconds: %.1f s\n", vx_now_s() - t0);
done:
    free(ref), free(mel), free(wref), free(wav);
    vx_hift_free(h);
    return st;
}

/* ------------------------------------------------------------------ VibeVoice */

/* LM (Qwen2) + diffusion head at the dims of `size`, bf16 as released, under prec; `frames` latents:
 * each frame one pair step of fixed inputs after a `prefill`-position prompt, then the head's
 * DPM-Solver (10 steps, CFG 1.3) from the same noise. lat: [frames][latent]. */
static vocis_status vv_measure(const char *size, int prec, int prefill, int frames, int threads, float **lat,
                               int64_t *dim, vx_vv_config *cfg, vx_err *err) {
    vx_weights *lw = NULL, *hw = NULL;
    vx_vv_lm lm;
    int has_lm = 0;
    vx_vv_diffhead *head = NULL;
    vx_dpm dpm = {0};
    vx_kv_cache kv = {0};
    int kv_ok = 0;
    float *x = NULL, *hp = NULL, *hn = NULL;
    *lat = NULL;
    VX_TRY(vx_vv_lm_preset(size, cfg, err));
    vocis_status st = vx_vv_lm_synthetic_weights(cfg, VX_BF16, 1234, &lw, err);
    if (!st) {
        vx_weights_set_precision(lw, prec);
        if (!(st = vx_vv_lm_init(&lm, lw, cfg, "model.language_model.", err))) has_lm = 1;
    }
    vx_synth *s = st ? NULL : vx_synth_new(99);
    if (!st && !s) st = vx_fail(err, VOCIS_E_NOMEM, "out of memory");
    if (!st)
        st = vx_vv_diffusion_synth_add(s, cfg->hidden_size, cfg->diffusion.ffn_dim, cfg->diffusion.head_layers,
                                       cfg->acoustic_vae_dim, cfg->semantic_vae_dim, VX_BF16, err);
    if (!st) st = vx_synth_open(s, &hw, err);
    vx_synth_free(s);
    if (!st) {
        vx_weights_set_precision(hw, prec);
        st = vx_vv_diffhead_load(hw, cfg, &head, err);
    }
    if (!st) st = vx_dpm_init(&dpm, cfg, 10, err);
    const int64_t H = cfg->hidden_size, Dl = cfg->acoustic_vae_dim;
    *dim = Dl;
    if (!st && !(st = vx_kv_init(&kv, &lm.tf, 2, 0, err))) kv_ok = 1;
    if (!st) st = vx_kv_reserve(&kv, prefill + frames + 8, err);
    if (!st && (!(x = malloc(sizeof(float) * (size_t)(prefill * H))) || !(hp = malloc(sizeof(float) * (size_t)H)) ||
                !(hn = malloc(sizeof(float) * (size_t)H)) || !(*lat = malloc(sizeof(float) * (size_t)(frames * Dl)))))
        st = vx_fail(err, VOCIS_E_NOMEM, "out of memory");
    /* prompt: `prefill` positions on the positive sequence, 1 on the negative one (as upstream's) */
    if (!st) {
        for (int64_t i = 0; i < prefill * H; i++) x[i] = 0.02f * (float)(i % 23 - 11);
        st = vx_tf_forward(&lm.tf, &kv, (const int[]){0}, 1, prefill, x, threads, NULL, NULL, err);
    }
    if (!st) {
        for (int64_t i = 0; i < H; i++) x[i] = 0.02f * (float)(i % 19 - 9);
        st = vx_tf_forward(&lm.tf, &kv, (const int[]){1}, 1, 1, x, threads, NULL, NULL, err);
    }
    for (int f = 0; f < frames && !st; f++) {
        for (int64_t i = 0; i < 2 * H; i++) x[i] = 0.02f * (float)((i * 7 + f * 13) % 29 - 14);
        if ((st = vx_tf_forward(&lm.tf, &kv, (const int[]){0, 1}, 2, 1, x, threads, NULL, NULL, err))) break;
        vx_tf_final_norm(&lm.tf, hp, x, 1);
        vx_tf_final_norm(&lm.tf, hn, x + H, 1);
        vx_rng rng;
        vx_rng_seed(&rng, 42 + (uint64_t)f); /* the same noise in every mode */
        st = vx_vv_sample_latent(head, &dpm, hp, hn, 1.3f, &rng, NULL, *lat + f * Dl, NULL, threads, err);
    }
    free(x), free(hp), free(hn);
    if (kv_ok) vx_kv_free(&kv);
    vx_dpm_free(&dpm);
    vx_vv_diffhead_free(head);
    if (has_lm) vx_vv_lm_free(&lm);
    vx_weights_close(hw);
    vx_weights_close(lw);
    if (st) {
        free(*lat);
        *lat = NULL;
    }
    return st;
}

static vocis_status quality_vv(const int *modes, int nmodes, const char *size, int prefill, int frames, int threads,
                               vx_err *err) {
    float *ref = NULL, *lat = NULL;
    int64_t D = 0;
    vx_vv_config cfg;
    double t0 = vx_now_s();
    VX_TRY(vv_measure(size, VX_PREC_EXACT, prefill, frames, threads, &ref, &D, &cfg, err));
    printf("vv_shape: VibeVoice-%s (%d layers, hidden %d; head %d layers), bf16 weights; %d prompt positions, "
           "%d frames of one LM pair step + 10 DPM-Solver steps (CFG 1.3), latent %lld\n",
           size, cfg.num_hidden_layers, cfg.hidden_size, cfg.diffusion.head_layers, prefill, frames, (long long)D);
    vocis_status st = VOCIS_OK;
    double *snr = malloc(sizeof(double) * (size_t)frames);
    if (!snr) st = vx_fail(err, VOCIS_E_NOMEM, "out of memory");
    for (int m = 0; m < nmodes && !st; m++) {
        if ((st = vv_measure(size, modes[m], prefill, frames, threads, &lat, &D, &cfg, err))) break;
        const char *mn = vx_precision_name(modes[m]);
        for (int f = 0; f < frames; f++) snr[f] = snr_db(ref + f * D, lat + f * D, D);
        char name[64];
        snprintf(name, sizeof name, "vv_latent_snr[%s]", mn);
        bench_print_stats(name, snr, frames, 1, 1, "dB", "per frame, median over frames");
        printf("vv_latent_snr_per_frame[%s]:", mn);
        for (int f = 0; f < frames; f++) printf(" %.1f", snr[f]);
        printf(" dB\n");
        fflush(stdout);
        free(lat);
        lat = NULL;
    }
    printf("vv_seconds: %.1f s\n", vx_now_s() - t0);
    free(snr), free(ref), free(lat);
    return st;
}

/* ------------------------------------------------------------------ command */

int bench_quality(int argc, char **argv) {
    int synthetic = 0, threads = 0, t3_tokens = 200, steps = 10, vv_frames = 8, vv_prefill = 64;
    float seconds = 4.0f, prompt_s = 10.0f;
    const char *modes_s = "bf16,q8", *parts = "t3,s3gen,vv", *vv_size = "1.5b";
    const cli_opt opts[] = {
        {"--synthetic", CLI_FLAG, &synthetic, "random weights at the release's dimensions (required)", 0, -1},
        {"--modes", CLI_STR, &modes_s, "fast modes to compare with exact (bf16,q8; a mode this build refuses is "
         "skipped with a note)", 0, -1},
        {"--parts", CLI_STR, &parts, "what to measure: t3, s3gen (CFM + HiFT), vv (t3,s3gen,vv)", 0, -1},
        {"--t3-tokens", CLI_INT, &t3_tokens, "greedy T3 tokens compared (200)", 1, 4000},
        {"--seconds", CLI_FLOAT, &seconds, "S3Gen: generated audio in seconds, 25 tokens each (4)", 0.04, 60},
        {"--prompt-seconds", CLI_FLOAT, &prompt_s, "S3Gen: voice prompt in seconds (10)", 0, 60},
        {"--steps", CLI_INT, &steps, "S3Gen: Euler steps (10)", 1, 100},
        {"--vv", CLI_STR, &vv_size, "VibeVoice dims: 1.5b (default) or 7b", 0, -1},
        {"--vv-frames", CLI_INT, &vv_frames, "VibeVoice: frames compared (8)", 1, 1000},
        {"--vv-prefill", CLI_INT, &vv_prefill, "VibeVoice: prompt positions before the frames (64)", 1, 16384},
        {"--threads", CLI_INT, &threads, "worker threads (default: physical cores)", 1, 1024},
    };
    int r = cli_parse(argc, argv, opts, (int)(sizeof opts / sizeof opts[0]),
                      "usage: vocis bench quality --synthetic [--modes bf16,q8] [--parts t3,s3gen,vv] [--threads N]\n\n"
                      "How far each fast precision mode moves the outputs from the exact mode, on random-weight\n"
                      "models at the release's dimensions and stored dtypes (Chatterbox float32, VibeVoice bf16),\n"
                      "converted at load as a real folder is: T3 greedy token agreement and prefill logit error,\n"
                      "CFM mel SNR, HiFT and S3Gen waveform SNR, VibeVoice diffusion latent SNR per frame.\n"
                      "Figures are named NAME[MODE]; SNR = 10 log10(sum ref^2 / sum (ref - x)^2), inf = identical.");
    if (r) return r == 1 ? 0 : 2;
    if (!synthetic) return cli_error("bench quality", "--synthetic is required (random weights at release dims)"), 2;
    if (threads <= 0) threads = vx_default_threads();
    int modes[MAX_MODES], nmodes = 0;
    char buf[128];
    snprintf(buf, sizeof buf, "%s", modes_s);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        const int p = vx_precision_parse(tok);
        if (p != VX_PREC_BF16 && p != VX_PREC_Q8)
            return cli_error("bench quality", "--modes: '%s' is not a fast mode (bf16, q8)", tok), 2;
        vx_err e = {0};
        if (vx_precision_check(p, &e)) {
            printf("note: %s skipped: %s\n", tok, e.msg);
            continue;
        }
        int dup = 0;
        for (int i = 0; i < nmodes; i++) dup |= modes[i] == p;
        if (!dup && nmodes < MAX_MODES) modes[nmodes++] = p;
    }
    int do_t3 = 0, do_s3 = 0, do_vv = 0;
    snprintf(buf, sizeof buf, "%s", parts);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (!strcmp(tok, "t3")) do_t3 = 1;
        else if (!strcmp(tok, "s3gen")) do_s3 = 1;
        else if (!strcmp(tok, "vv")) do_vv = 1;
        else return cli_error("bench quality", "--parts: unknown part '%s' (t3, s3gen, vv)", tok), 2;
    }
    if (strcmp(vv_size, "1.5b") && strcmp(vv_size, "7b"))
        return cli_error("bench quality", "--vv must be 1.5b or 7b"), 2;
    printf("model: synthetic Chatterbox T3 + S3Gen (float32 weights) and VibeVoice-%s (bf16 weights), %d threads\n",
           vv_size, threads);
    printf("precision: exact (reference) vs");
    for (int i = 0; i < nmodes; i++) printf(" %s", vx_precision_name(modes[i]));
    printf("%s\n", nmodes ? "" : " nothing (no fast mode runs)");
    fflush(stdout);
    if (!nmodes) return 0;
    vx_err err = {0};
    const double t0 = vx_now_s();
    vocis_status st = VOCIS_OK;
    if (do_t3) st = quality_t3(modes, nmodes, t3_tokens, threads, &err);
    if (!st && do_s3) {
        const flow_shape sh = {lround(prompt_s * 25.0), lround(seconds * 25.0) > 0 ? lround(seconds * 25.0) : 1,
                               2 * lround(prompt_s * 25.0), steps};
        st = quality_s3gen(modes, nmodes, &sh, threads, &err);
    }
    if (!st && do_vv) st = quality_vv(modes, nmodes, vv_size, vv_prefill, vv_frames, threads, &err);
    if (st) return cli_error("bench quality", "%s", err.msg);
    printf("wall: %.1f s\n", vx_now_s() - t0);
    printf("peak_rss: %.0f MiB\n", bench_peak_rss_mib());
    return 0;
}
