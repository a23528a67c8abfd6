/* Chatterbox-Turbo / -Nano: folder detection, config, pyloudnorm loudness
 * and the debug stages with the Turbo golden names (06, 07, 10, 13). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "models/chatterbox/conds.h"
#include "models/chatterbox/s3gen_meanflow.h"
#include "models/chatterbox/t3_gpt2.h"
#include "models/chatterbox/turbo.h"
#include "text/turbo_text.h"

static int has(const char *dir, const char *name) {
    char p[4200];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    return access(p, F_OK) == 0;
}

int vx_turbo_is_folder(const char *dir) {
    return dir && (has(dir, "t3_turbo_v1.safetensors") || has(dir, "t3_nano_v1.safetensors"));
}

const char *vx_turbo_s3gen_name(const char *dir) {
    return vx_turbo_is_folder(dir) ? "s3gen_meanflow.safetensors" : NULL;
}

vocis_status vx_turbo_check_folder(const char *dir, int *nano, vx_err *err) {
    const char *t3;
    VX_TRY(vx_t3_gpt2_file(dir, &t3, err));
    if (!t3) return vx_fail(err, VOCIS_E_ARG, "%s: not a Chatterbox-Turbo/Nano folder", dir);
    *nano = strstr(t3, "nano") != NULL;
    static const char *const other[] = {"t3_cfg.safetensors", "t3_mtl23ls_v2.safetensors", "t3_mtl23ls_v3.safetensors"};
    for (size_t i = 0; i < sizeof other / sizeof other[0]; i++)
        if (has(dir, other[i]))
            return vx_fail(err, VOCIS_E_FORMAT, "%s: holds both %s (Chatterbox-%s) and %s: a folder mixing two model "
                           "variants; keep one", dir, t3, *nano ? "Nano" : "Turbo", other[i]);
    if (!has(dir, "s3gen_meanflow.safetensors"))
        return vx_fail(err, VOCIS_E_IO, "%s: %s needs s3gen_meanflow.safetensors (the MeanFlow S3Gen of the release)",
                       dir, t3);
    if (!vx_turbo_has_tokenizer(dir))
        return vx_fail(err, VOCIS_E_IO, "%s: missing the GPT-2 tokenizer files (vocab.json + merges.txt, or "
                       "tokenizer.json)", dir);
    return VOCIS_OK;
}

vocis_status vx_turbo_config(const char *dir, const char *explicit_path, vx_cb_config *cfg, vx_err *err) {
    vx_cb_config_default(cfg);
    cfg->t3_prompt_len = 375; /* hp.speech_cond_prompt_len of tts_turbo */
    return vx_cb_config_load(cfg, dir, explicit_path, err);
}

/* ---- loudness (pyloudnorm 0.2 Meter.integrated_loudness, mono) ---- */

typedef struct biquad {
    double b[3], a[3];
} biquad;

/* RBJ cookbook as pyloudnorm's IIRfilter.generate_coefficients */
static biquad design(double G, double Q, double fc, double rate, int high_shelf) {
    const double A = pow(10.0, G / 40.0), w0 = 2.0 * M_PI * (fc / rate), alpha = sin(w0) / (2.0 * Q), c = cos(w0);
    biquad f;
    if (high_shelf) {
        f.b[0] = A * ((A + 1) + (A - 1) * c + 2 * sqrt(A) * alpha);
        f.b[1] = -2 * A * ((A - 1) + (A + 1) * c);
        f.b[2] = A * ((A + 1) + (A - 1) * c - 2 * sqrt(A) * alpha);
        f.a[0] = (A + 1) - (A - 1) * c + 2 * sqrt(A) * alpha;
        f.a[1] = 2 * ((A - 1) - (A + 1) * c);
        f.a[2] = (A + 1) - (A - 1) * c - 2 * sqrt(A) * alpha;
    } else {
        f.b[0] = (1 + c) / 2;
        f.b[1] = -(1 + c);
        f.b[2] = (1 + c) / 2;
        f.a[0] = 1 + alpha;
        f.a[1] = -2 * c;
        f.a[2] = 1 - alpha;
    }
    return f;
}

/* scipy.signal.lfilter (transposed direct form II, normalised by a0) in
 * float64; the result is stored back into the float32 array as pyloudnorm does. */
static void lfilter(const biquad *f, float *x, int64_t n) {
    const double a0 = f->a[0], b0 = f->b[0] / a0, b1 = f->b[1] / a0, b2 = f->b[2] / a0, a1 = f->a[1] / a0,
                 a2 = f->a[2] / a0;
    double z1 = 0, z2 = 0;
    for (int64_t i = 0; i < n; i++) {
        const double xi = x[i], y = b0 * xi + z1;
        z1 = b1 * xi - a1 * y + z2;
        z2 = b2 * xi - a2 * y;
        x[i] = (float)y;
    }
}

double vx_loudness_lufs(const float *in, int64_t n, int sr) {
    const double Tg = 0.4, step = 1.0 - 0.75, rate = sr;
    if (n < (int64_t)(Tg * rate) || n <= 0) return -INFINITY;
    float *x = malloc(sizeof(float) * (size_t)n);
    if (!x) return NAN;
    memcpy(x, in, sizeof(float) * (size_t)n);
    biquad hs = design(4.0, 1.0 / sqrt(2.0), 1500.0, rate, 1), hp = design(0.0, 0.5, 38.0, rate, 0);
    lfilter(&hs, x, n);
    lfilter(&hp, x, n);
    const double T = (double)n / rate;
    const int64_t nblocks = (int64_t)nearbyint((T - Tg) / (Tg * step)) + 1; /* np.round: ties to even */
    double *z = calloc((size_t)(nblocks > 0 ? nblocks : 1), sizeof(double));
    if (!z) {
        free(x);
        return NAN;
    }
    for (int64_t j = 0; j < nblocks; j++) {
        int64_t l = (int64_t)(Tg * ((double)j * step) * rate), u = (int64_t)(Tg * ((double)j * step + 1) * rate);
        if (u > n) u = n;
        double s = 0;
        for (int64_t i = l; i < u; i++) s += (double)x[i] * (double)x[i];
        z[j] = (1.0 / (Tg * rate)) * s;
    }
    free(x);
    double sum = 0;
    int64_t cnt = 0;
    for (int64_t j = 0; j < nblocks; j++)
        if (-0.691 + 10.0 * log10(z[j]) >= -70.0) sum += z[j], cnt++;
    const double gamma_r = -0.691 + 10.0 * log10(cnt ? sum / (double)cnt : NAN) - 10.0;
    sum = 0, cnt = 0;
    for (int64_t j = 0; j < nblocks; j++) {
        const double lj = -0.691 + 10.0 * log10(z[j]);
        if (lj > gamma_r && lj > -70.0) sum += z[j], cnt++;
    }
    free(z);
    return -0.691 + 10.0 * log10(cnt ? sum / (double)cnt : 0.0);
}

double vx_turbo_norm_loudness(float *x, int64_t n, int sr, double target_lufs) {
    const double L = vx_loudness_lufs(x, n, sr);
    const double gain = pow(10.0, (target_lufs - L) / 20.0);
    if (isfinite(gain) && gain > 0.0) {
        const float g = (float)gain; /* float32 array * Python float */
        for (int64_t i = 0; i < n; i++) x[i] *= g;
    }
    return L;
}

/* ---- stages ---- */

static vocis_status load_t3(const vx_stage_args *a, vx_t3_gpt2 *t, vx_err *err) {
    vx_cb_config cfg;
    VX_TRY(vx_turbo_config(a->model_dir, NULL, &cfg, err));
    return vx_t3_gpt2_load(t, a->model_dir, &cfg, 0, err);
}

vocis_status vx_stage_turbo_t3_cond(const vx_stage_args *a, vx_err *err) {
    VX_TRY(vx_stage_no_options(a, err));
    vx_t3_gpt2 t;
    VX_TRY(load_t3(a, &t, err));
    float *spk = NULL, *cond = NULL;
    int64_t *toks = NULL;
    vx_tensor tt;
    vocis_status st;
    const int64_t D = t.dim;
    if ((st = vx_stage_in_f32(a, "speaker_emb", VX_DIMS(1, t.speaker_dim), &spk, NULL, err))) goto done;
    if ((st = vx_stage_in_i64(a, "cond_prompt_speech_tokens", VX_DIMS(1, -1), &toks, &tt, err))) goto done;
    const int P = (int)tt.shape[1], lc = vx_t3_gpt2_cond_len(P);
    if (!(cond = malloc(sizeof(float) * (size_t)(lc * D)))) {
        st = vx_fail(err, VOCIS_E_NOMEM, "out of memory");
        goto done;
    }
    if ((st = vx_t3_gpt2_cond(&t, spk, toks, P, cond, a->nthreads, err))) goto done;
    if ((st = vx_stage_out_f32(a, "cond_prompt_speech_emb", VX_DIMS(1, P, D), cond + D, err))) goto done;
    st = vx_stage_out_f32(a, "cond_emb", VX_DIMS(1, lc, D), cond, err);
done:
    free(spk), free(toks), free(cond);
    vx_t3_gpt2_free(&t);
    return st;
}

vocis_status vx_stage_turbo_t3_prefill(const vx_stage_args *a, vx_err *err) {
    VX_TRY(vx_stage_no_options(a, err));
    vx_t3_gpt2 t;
    VX_TRY(load_t3(a, &t, err));
    const int64_t D = t.dim, V = t.speech_head.rows;
    float *x = NULL, *rec = NULL, *hn = NULL, *logits = NULL;
    vx_gpt2_kv kv = {0};
    vx_tensor tx;
    vocis_status st = vx_stage_in_f32(a, "inputs_embeds", VX_DIMS(1, -1, D), &x, &tx, err);
    if (st) goto done;
    const int64_t L = tx.shape[1];
    if (L < 1) {
        st = vx_fail(err, VOCIS_E_SHAPE, "inputs_embeds: no positions");
        goto done;
    }
    rec = malloc(sizeof(float) * (size_t)(t.n_layers * L * D));
    hn = malloc(sizeof(float) * (size_t)(L * D));
    logits = malloc(sizeof(float) * (size_t)V);
    if (!rec || !hn || !logits) {
        st = vx_fail(err, VOCIS_E_NOMEM, "out of memory");
        goto done;
    }
    if ((st = vx_gpt2_kv_init(&kv, &t, L, err))) goto done;
    if ((st = vx_t3_gpt2_forward(&t, &kv, L, x, rec, a->nthreads, err))) goto done;
    for (int l = 0; l < t.n_layers; l++) {
        char name[64];
        snprintf(name, sizeof name, "hidden_after_block%d", l);
        if ((st = vx_stage_out_f32(a, name, VX_DIMS(1, L, D), rec + (size_t)(l * L * D), err))) goto done;
    }
    for (int64_t i = 0; i < L; i++) vx_t3_gpt2_logits(&t, x + i * D, logits, hn + i * D, a->nthreads);
    if ((st = vx_stage_out_f32(a, "final_ln_hidden", VX_DIMS(1, L, D), hn, err))) goto done;
    st = vx_stage_out_f32(a, "logits_last", VX_DIMS(1, V), logits, err);
done:
    vx_gpt2_kv_free(&kv);
    free(x), free(rec), free(hn), free(logits);
    vx_t3_gpt2_free(&t);
    return st;
}

vocis_status vx_stage_turbo_conds_pt(const vx_stage_args *a, vx_err *err) {
    vx_cb_conds c;
    vocis_status st = vx_stage_conds_pt_out(a, &c, err);
    if (st || !a->in || !vx_st_find(a->in, "builtin_text_tokens")) {
        vx_cb_conds_free(&c);
        return st;
    }
    vx_t3_gpt2 t;
    int64_t *ids64 = NULL;
    int32_t *ids = NULL;
    float *x = NULL, *logits = NULL;
    vx_gpt2_kv kv = {0};
    vx_tensor tt;
    if ((st = load_t3(a, &t, err))) goto out;
    if ((st = vx_stage_in_i64(a, "builtin_text_tokens", VX_DIMS(1, -1), &ids64, &tt, err))) goto done;
    const int N = (int)tt.shape[1], P = (int)c.cond_prompt_speech_tokens.n;
    const int64_t L0 = vx_t3_gpt2_cond_len(P) + N + 1, D = t.dim;
    if (c.speaker_emb.n != (size_t)t.speaker_dim) {
        st = vx_fail(err, VOCIS_E_SHAPE, "conds.pt speaker_emb has %zu values, T3 expects %d", c.speaker_emb.n,
                     t.speaker_dim);
        goto done;
    }
    ids = malloc(sizeof(int32_t) * (size_t)(N ? N : 1));
    x = malloc(sizeof(float) * (size_t)(L0 * D));
    logits = malloc(sizeof(float) * (size_t)t.speech_head.rows);
    if (!ids || !x || !logits) {
        st = vx_fail(err, VOCIS_E_NOMEM, "out of memory");
        goto done;
    }
    for (int i = 0; i < N; i++) ids[i] = (int32_t)(ids64[i] < 0 || ids64[i] > INT32_MAX ? -1 : ids64[i]);
    if ((st = vx_t3_gpt2_prefill_embeds(&t, c.speaker_emb.data, c.cond_prompt_speech_tokens.data, P, ids, N, x,
                                        a->nthreads, err)))
        goto done;
    if ((st = vx_gpt2_kv_init(&kv, &t, L0, err))) goto done;
    if ((st = vx_t3_gpt2_forward(&t, &kv, L0, x, NULL, a->nthreads, err))) goto done;
    vx_t3_gpt2_logits(&t, x + (L0 - 1) * D, logits, NULL, a->nthreads);
    st = vx_stage_out_f32(a, "builtin_prefill_logits_last", VX_DIMS(1, t.speech_head.rows), logits, err);
done:
    vx_gpt2_kv_free(&kv);
    free(ids64), free(ids), free(x), free(logits);
    vx_t3_gpt2_free(&t);
out:
    vx_cb_conds_free(&c);
    return st;
}

vocis_status vx_stage_turbo_s3gen_flow(const vx_stage_args *a, vx_err *err) {
    int steps = 2;
    VX_TRY(vx_stage_opt_steps(a, &steps, err));
    vx_cb_config cfg;
    VX_TRY(vx_turbo_config(a->model_dir, NULL, &cfg, err));
    char path[4200];
    snprintf(path, sizeof path, "%s/s3gen_meanflow.safetensors", a->model_dir);
    vx_weights *w = NULL;
    VX_TRY(vx_weights_open(path, &w, err));
    vx_s3gen_flow *f = NULL;
    vocis_status st = vx_s3gen_flow_load(w, &cfg, &f, err);
    int64_t *tok = NULL, *ptok = NULL;
    float *pfeat = NULL, *embd = NULL, *z = NULL, *nm = NULL, *mel = NULL;
    if (st) goto out;
    const vx_s3gen_flow_dims *d = vx_s3gen_flow_get_dims(f);
    vx_tensor t_tok, t_ptok, t_feat;
    if ((st = vx_stage_in_i64(a, "speech_tokens", VX_DIMS(1, -1), &tok, &t_tok, err)) ||
        (st = vx_stage_in_i64(a, "prompt_token", VX_DIMS(1, -1), &ptok, &t_ptok, err)) ||
        (st = vx_stage_in_f32(a, "prompt_feat", VX_DIMS(1, -1, d->n_mels), &pfeat, &t_feat, err)) ||
        (st = vx_stage_in_f32(a, "embedding", VX_DIMS(1, d->spk_dim), &embd, NULL, err)))
        goto out;
    const int64_t n = t_tok.shape[1], L = d->up_stride * (n + t_ptok.shape[1]);
    /* the two noises are optional inputs; without them a generator seeded with 0 draws them */
    if (vx_st_find(a->in, "noised_mels") &&
        (st = vx_stage_in_f32(a, "noised_mels", VX_DIMS(1, d->n_mels, d->up_stride * n), &nm, NULL, err)))
        goto out;
    if (vx_st_find(a->in, "z_randn_like") &&
        (st = vx_stage_in_f32(a, "z_randn_like", VX_DIMS(1, d->n_mels, L), &z, NULL, err)))
        goto out;
    vx_rng rng;
    vx_rng_seed(&rng, 0);
    vx_meanflow_req rq = {tok, n, ptok, t_ptok.shape[1], pfeat, t_feat.shape[1], embd, steps, nm, z, &rng,
                          a->nthreads, a->out, NULL, NULL};
    int64_t tm;
    st = vx_s3gen_meanflow_run(f, &rq, &mel, &tm, err);
out:
    free(tok), free(ptok), free(pfeat), free(embd), free(z), free(nm), free(mel);
    vx_s3gen_flow_free(f);
    vx_weights_close(w);
    return st;
}

vocis_status vx_stage_turbo_loudnorm(const vx_stage_args *a, vx_err *err) {
    VX_TRY(vx_stage_no_options(a, err));
    float *x = NULL;
    int64_t n = 0;
    VX_TRY(vx_stage_in_wave(a, "ref_24k", &x, &n, err));
    vocis_status st = VOCIS_OK;
    if (n < (int64_t)(0.4 * 24000)) st = vx_fail(err, VOCIS_E_ARG, "ref_24k: shorter than one 400 ms loudness block");
    if (!st) {
        vx_turbo_norm_loudness(x, n, 24000, VX_TURBO_TARGET_LUFS);
        st = vx_stage_out_f32(a, "ref_24k_loudnorm", VX_DIMS(n), x, err);
    }
    free(x);
    return st;
}

vocis_status vx_stage_turbo_t3_generate(const vx_stage_args *a, vx_err *err) {
    const char *text = NULL;
    long long seed = 0;
    int greedy = 0, speculate = VX_SPEC_AUTO;
    for (int i = 0; i < a->argc; i++) {
        if (!strcmp(a->argv[i], "--text") && i + 1 < a->argc) {
            text = a->argv[++i];
        } else if (!strcmp(a->argv[i], "--seed") && i + 1 < a->argc) {
            char *end;
            seed = strtoll(a->argv[++i], &end, 10);
            if (*end || seed < 0) return vx_fail(err, VOCIS_E_ARG, "option --seed: invalid value '%s'", a->argv[i]);
        } else if (!strcmp(a->argv[i], "--greedy")) {
            greedy = 1;
        } else if (!strcmp(a->argv[i], "--speculate") && i + 1 < a->argc) {
            if (vx_spec_parse(a->argv[++i], &speculate))
                return vx_fail(err, VOCIS_E_ARG, "option --speculate: '%s' is not off, auto or 1..%d", a->argv[i],
                               VX_SPEC_KMAX);
        } else {
            return vx_fail(err, VOCIS_E_ARG,
                           "unknown option '%s' (stage options: --text T, --seed N, --greedy, --speculate off|auto|N)",
                           a->argv[i]);
        }
    }
    if (!text) return vx_fail(err, VOCIS_E_ARG, "t3-generate needs --text T");
    if (!vx_turbo_is_folder(a->model_dir))
        return vx_fail(err, VOCIS_E_ARG, "%s: t3-generate runs Chatterbox-Turbo/Nano folders", a->model_dir);
    vx_t3_gpt2 t;
    VX_TRY(load_t3(a, &t, err));
    vx_tokenizer *tok = NULL;
    int max_len = 0;
    float *spk = NULL, *logits = NULL;
    int64_t *toks = NULL, *o64 = NULL;
    int32_t *ids = NULL, *out = NULL;
    size_t nids = 0;
    int n = 0;
    vx_tensor tt;
    vocis_status st;
    if ((st = vx_turbo_tokenizer_load(a->model_dir, &tok, &max_len, err))) goto done;
    if ((st = vx_turbo_text_to_ids(tok, max_len, text, &ids, &nids, err))) goto done;
    if ((st = vx_stage_in_f32(a, "speaker_emb", VX_DIMS(1, t.speaker_dim), &spk, NULL, err))) goto done;
    if ((st = vx_stage_in_i64(a, "cond_prompt_speech_tokens", VX_DIMS(1, -1), &toks, &tt, err))) goto done;
    const int64_t V = t.speech_head.rows;
    if (!(logits = malloc(sizeof(float) * (size_t)(1001 * V)))) {
        st = vx_fail(err, VOCIS_E_NOMEM, "out of memory");
        goto done;
    }
    vx_turbo_sampling s = {0.8f, 1000, 0.95f, 1.2f, 1000, greedy, NULL, NULL, logits, speculate};
    vx_rng rng;
    vx_rng_seed(&rng, (uint64_t)seed);
    if ((st = vx_t3_gpt2_generate(&t, spk, toks, (int)tt.shape[1], ids, (int)nids, &s, &rng, a->nthreads, &out, &n,
                                  err)))
        goto done;
    if (!(o64 = malloc(sizeof(int64_t) * (size_t)(n + 1)))) {
        st = vx_fail(err, VOCIS_E_NOMEM, "out of memory");
        goto done;
    }
    for (int i = 0; i < n; i++) o64[i] = out[i];
    const int nret = n > 0 && out[n - 1] == t.cfg.stop_speech_token ? n - 1 : n;
    if ((st = vx_stage_out_i64(a, greedy ? "tokens" : "tokens_sampled", VX_DIMS(1, n), o64, err))) goto done;
    if ((st = vx_stage_out_i64(a, "tokens_returned", VX_DIMS(1, nret), o64, err))) goto done;
    st = vx_stage_out_f32(a, "logits", VX_DIMS(n, V), logits, err);
done:
    vx_tokenizer_free(tok);
    free(spk), free(logits), free(toks), free(o64), free(ids), free(out);
    vx_t3_gpt2_free(&t);
    return st;
}
