/* Stage harness entries for VibeVoice-Realtime-0.5B (golden vibevoice-realtime
 * 02_voice_preset, 03_lm_lower, 04_lm_upper, 08_e2e / 09_e2e_length_cap). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/rng.h"
#include "models/stages.h"
#include "models/vibevoice/realtime.h"

typedef struct rt_stage_opts {
    const char *voice, *text, *text_file;
    long seed, steps, max_new;
    double cfg_scale;
} rt_stage_opts;

static vocis_status parse_opts(const vx_stage_args *a, int gen, rt_stage_opts *o, vx_err *err) {
    memset(o, 0, sizeof *o);
    o->seed = -1, o->steps = 5, o->cfg_scale = 1.5;
    for (int i = 0; i < a->argc; i++) {
        const char *k = a->argv[i];
        if (i + 1 >= a->argc) return vx_fail(err, VOCIS_E_ARG, "option %s needs a value", k);
        const char *v = a->argv[++i];
        char *end;
        if (!strcmp(k, "--voice")) {
            o->voice = v;
        } else if (gen && !strcmp(k, "--text")) {
            o->text = v;
        } else if (gen && !strcmp(k, "--text-file")) {
            o->text_file = v;
        } else if (gen && (!strcmp(k, "--seed") || !strcmp(k, "--steps") || !strcmp(k, "--max-new-tokens"))) {
            long x = strtol(v, &end, 10);
            const long lo = !strcmp(k, "--seed") ? 0 : 1, hi = !strcmp(k, "--steps") ? VX_DPM_MAX_STEPS : 0x7fffffffL;
            if (!*v || *end || x < lo || x > hi)
                return vx_fail(err, VOCIS_E_ARG, "option %s: invalid value '%s' (%ld..%ld)", k, v, lo, hi);
            *(!strcmp(k, "--seed") ? &o->seed : !strcmp(k, "--steps") ? &o->steps : &o->max_new) = x;
        } else if (gen && !strcmp(k, "--cfg-scale")) {
            o->cfg_scale = strtod(v, &end);
            if (!*v || *end || !(o->cfg_scale >= 0 && o->cfg_scale <= 100))
                return vx_fail(err, VOCIS_E_ARG, "option --cfg-scale: invalid value '%s' (0..100)", v);
        } else {
            return vx_fail(err, VOCIS_E_ARG, "unknown option '%s' (stage options: --voice P%s)", k,
                           gen ? ", --text T | --text-file F, --seed N, --steps N, --cfg-scale F, --max-new-tokens N"
                               : "");
        }
    }
    if (!o->voice) return vx_fail(err, VOCIS_E_ARG, "--voice PRESET (.pt or vocis voice file) is required");
    return VOCIS_OK;
}

/* ------------------------------------------------------------ vv-rt-preset */

vocis_status vx_stage_vv_rt_preset(const vx_stage_args *a, vx_err *err) {
    rt_stage_opts o;
    VX_TRY(parse_opts(a, 0, &o, err));
    vx_vv_config cfg;
    VX_TRY(vx_vv_config_load(a->model_dir, &cfg, err));
    vx_rt_preset p;
    VX_TRY(vx_rt_preset_load(o.voice, &p, err));
    vocis_status st = vx_rt_preset_check(&p, &cfg, err);
    if (!st) st = vx_rt_preset_write(&p, a->out, err);
    vx_rt_preset_free(&p);
    return st;
}

/* ------------------------------------------------------------ LM stages */

typedef struct rec1 {
    float **layers; /* [n_layers][n][H] */
    int n_layers;
    int64_t base, n, H;
} rec1;

static void rec1_hook(void *user, int layer, int seq, int64_t pos0, int64_t n, const float *x) {
    rec1 *r = user;
    (void)seq;
    if (layer < r->n_layers && pos0 >= r->base && pos0 - r->base + n <= r->n)
        memcpy(r->layers[layer] + (pos0 - r->base) * r->H, x, sizeof(float) * (size_t)(n * r->H));
}

static vocis_status rec1_init(rec1 *r, int n_layers, int64_t base, int64_t n, int64_t H, vx_err *err) {
    memset(r, 0, sizeof *r);
    r->layers = vx_calloc(err, (size_t)n_layers, sizeof(float *), "layer record");
    if (!r->layers) return VOCIS_E_NOMEM;
    r->n_layers = n_layers, r->base = base, r->n = n, r->H = H;
    for (int l = 0; l < n_layers; l++)
        if (!(r->layers[l] = vx_calloc(err, (size_t)(n * H), sizeof(float), "layer record"))) return VOCIS_E_NOMEM;
    return VOCIS_OK;
}

static void rec1_free(rec1 *r) {
    for (int l = 0; r->layers && l < r->n_layers; l++) free(r->layers[l]);
    free(r->layers);
    memset(r, 0, sizeof *r);
}

/* KV slot of sequence seq -> [1][kv][L][hd] as `<prefix><l>`. */
static vocis_status out_kv(const vx_stage_args *a, const vx_kv_cache *kv, int seq, const vx_tf *tf,
                           const char *kname, const char *vname, vx_err *err) {
    const int64_t L = kv->len[seq], kvh = tf->n_kv_heads, hd = tf->head_dim;
    float *buf = malloc(sizeof(float) * (size_t)(L * kvh * hd + 1));
    if (!buf) return vx_fail(err, VOCIS_E_NOMEM, "out of memory");
    vocis_status st = VOCIS_OK;
    for (int l = 0; l < tf->n_layers && !st; l++)
        for (int kk = 0; kk < 2 && !st; kk++) {
            const float *src = (kk ? kv->v : kv->k)[(size_t)l * kv->nseq + seq];
            for (int64_t g = 0; g < kvh; g++)
                for (int64_t p = 0; p < L; p++)
                    memcpy(buf + (g * L + p) * hd, src + p * kvh * hd + g * hd, sizeof(float) * (size_t)hd);
            char name[64];
            snprintf(name, sizeof name, "%s%d", kk ? vname : kname, l);
            st = vx_stage_out_f32(a, name, VX_DIMS(1, kvh, L, hd), buf, err);
        }
    free(buf);
    return st;
}

typedef struct rt_ctx {
    vx_rt_model m;
    vx_rt_preset p;
    int has_m, has_p;
} rt_ctx;

static void ctx_free(rt_ctx *c) {
    if (c->has_p) vx_rt_preset_free(&c->p);
    if (c->has_m) vx_rt_model_free(&c->m);
}

static vocis_status ctx_open(const vx_stage_args *a, const rt_stage_opts *o, int need_tok, rt_ctx *c, vx_err *err) {
    memset(c, 0, sizeof *c);
    VX_TRY(vx_rt_model_load(&c->m, a->model_dir, NULL, need_tok, a->precision ? a->precision : 1, err));
    c->has_m = 1;
    VX_TRY(vx_rt_preset_load(o->voice, &c->p, err));
    c->has_p = 1;
    return vx_rt_preset_check(&c->p, &c->m.cfg, err);
}

/* Cache of one preset entry into slot seq of kv. */
static void fill(vx_kv_cache *kv, int seq, const vx_rt_preset *p, const vx_rt_entry *e) {
    const int64_t T = e->T, hd = p->head_dim, kvh = p->kv_heads, kvd = kvh * hd;
    for (int l = 0; l < e->n_layers; l++) {
        float *kd = kv->k[(size_t)l * kv->nseq + seq], *vd = kv->v[(size_t)l * kv->nseq + seq];
        for (int64_t h = 0; h < kvh; h++)
            for (int64_t t = 0; t < T; t++) {
                memcpy(kd + t * kvd + h * hd, e->k + (size_t)l * (size_t)(kvd * T) + (h * T + t) * hd,
                       sizeof(float) * (size_t)hd);
                memcpy(vd + t * kvd + h * hd, e->v + (size_t)l * (size_t)(kvd * T) + (h * T + t) * hd,
                       sizeof(float) * (size_t)hd);
            }
    }
    kv->len[seq] = T;
}

static vocis_status out_positions(const vx_stage_args *a, const char *name, int64_t p0, int64_t n, vx_err *err) {
    int64_t *v = malloc(sizeof(int64_t) * (size_t)n);
    if (!v) return vx_fail(err, VOCIS_E_NOMEM, "out of memory");
    for (int64_t i = 0; i < n; i++) v[i] = p0 + i;
    vocis_status st = vx_stage_out_i64(a, name, VX_DIMS(1, n), v, err);
    free(v);
    return st;
}

vocis_status vx_stage_vv_rt_lm_lower(const vx_stage_args *a, vx_err *err) {
    rt_stage_opts o;
    VX_TRY(parse_opts(a, 0, &o, err));
    rt_ctx c;
    int64_t *ids = NULL;
    float *x = NULL;
    rec1 r = {0};
    vx_kv_cache kv = {0};
    vocis_status st = ctx_open(a, &o, 0, &c, err);
    if (st) goto done;
    const vx_rt_model *m = &c.m;
    const vx_tf *tf = &m->lower;
    const int64_t H = tf->dim, T = c.p.e[VX_RT_LM].T;
    vx_tensor t;
    if ((st = vx_stage_in_i64(a, "window_ids", VX_DIMS(1, -1), &ids, &t, err))) goto done;
    const int64_t n = t.shape[1];
    if (n < 1 || n > 4096) {
        st = vx_fail(err, VOCIS_E_SHAPE, "window_ids: %lld tokens (1..4096)", (long long)n);
        goto done;
    }
    for (int64_t i = 0; i < n; i++)
        if (ids[i] < 0 || ids[i] >= m->cfg.vocab_size) {
            st = vx_fail(err, VOCIS_E_ARG, "window_ids: id %lld outside the embedding (%d rows)", (long long)ids[i],
                         m->cfg.vocab_size);
            goto done;
        }
    if (!(x = malloc(sizeof(float) * (size_t)(n * H)))) {
        st = vx_fail(err, VOCIS_E_NOMEM, "out of memory");
        goto done;
    }
    const size_t es = vx_dtype_size(m->embed.dtype);
    for (int64_t i = 0; i < n; i++)
        vx_to_f32(x + i * H, (const char *)m->embed.data + (size_t)ids[i] * (size_t)H * es, m->embed.dtype, (size_t)H);
    if ((st = vx_stage_out_f32(a, "inputs_embeds", VX_DIMS(1, n, H), x, err))) goto done;
    if ((st = out_positions(a, "position_ids", T, n, err))) goto done;
    if ((st = rec1_init(&r, tf->n_layers, T, n, H, err))) goto done;
    if ((st = vx_kv_init(&kv, tf, 1, 0, err)) || (st = vx_kv_reserve(&kv, T + n, err))) goto done;
    fill(&kv, 0, &c.p, &c.p.e[VX_RT_LM]);
    if ((st = vx_tf_forward(tf, &kv, NULL, 1, n, x, a->nthreads, rec1_hook, &r, err))) goto done;
    for (int l = 0; l < tf->n_layers && !st; l++) {
        char name[64];
        snprintf(name, sizeof name, "layer%d_out", l);
        st = vx_stage_out_f32(a, name, VX_DIMS(1, n, H), r.layers[l], err);
    }
    if (!st) st = vx_stage_out_f32(a, "last_hidden_state", VX_DIMS(1, n, H), x, err); /* norm = Identity */
    if (!st) st = out_kv(a, &kv, 0, tf, "kv_key_", "kv_value_", err);
done:
    vx_kv_free(&kv);
    rec1_free(&r);
    free(ids), free(x);
    ctx_free(&c);
    return st;
}

/* One upper-stack call on slot seq: x [n][H] (already + type), outputs <pfx>_*. */
static vocis_status upper_call(const vx_stage_args *a, const vx_rt_model *m, vx_kv_cache *kv, int seq, float *x,
                               int64_t n, const char *pfx, vx_err *err) {
    const vx_tf *tf = &m->upper;
    const int64_t H = tf->dim, p0 = kv->len[seq];
    char name[64];
    rec1 r = {0};
    float *h = malloc(sizeof(float) * (size_t)(n * H)), *fc1 = malloc(sizeof(float) * (size_t)H);
    vocis_status st = h && fc1 ? VOCIS_OK : vx_fail(err, VOCIS_E_NOMEM, "out of memory");
    if (!st) st = vx_kv_reserve(kv, p0 + n, err);
#define OUT(suffix, ...) (snprintf(name, sizeof name, "%s_%s", pfx, suffix), vx_stage_out_f32(a, name, __VA_ARGS__, err))
    if (!st) st = OUT("inputs_embeds", VX_DIMS(1, n, H), x);
    if (!st) {
        snprintf(name, sizeof name, "%s_position_ids", pfx);
        st = out_positions(a, name, p0, n, err);
    }
    if (!st) st = rec1_init(&r, tf->n_layers, p0, n, H, err);
    if (!st) st = vx_tf_forward(tf, kv, &seq, 1, n, x, a->nthreads, rec1_hook, &r, err);
    for (int l = 0; l < tf->n_layers && !st; l++) {
        char sfx[32];
        snprintf(sfx, sizeof sfx, "layer%d_out", l);
        st = OUT(sfx, VX_DIMS(1, n, H), r.layers[l]);
    }
    if (!st) {
        vx_tf_final_norm(tf, h, x, n);
        st = OUT("last_hidden_state", VX_DIMS(1, n, H), h);
    }
    if (!st) {
        float logit, prob;
        vx_rt_eos(m, h + (n - 1) * H, fc1, &logit);
        prob = 1.0f / (1.0f + expf(-logit));
        st = OUT("eos_fc1_out", VX_DIMS(1, H), fc1);
        if (!st) st = OUT("eos_logit", VX_DIMS(1, 1), &logit);
        if (!st) st = OUT("eos_prob", VX_DIMS(1, 1), &prob);
    }
#undef OUT
    rec1_free(&r);
    free(h), free(fc1);
    return st;
}

vocis_status vx_stage_vv_rt_lm_upper(const vx_stage_args *a, vx_err *err) {
    rt_stage_opts o;
    VX_TRY(parse_opts(a, 0, &o, err));
    rt_ctx c;
    float *lh = NULL, *se = NULL, *x = NULL;
    vx_kv_cache kv = {0};
    vocis_status st = ctx_open(a, &o, 0, &c, err);
    if (st) goto done;
    const vx_rt_model *m = &c.m;
    const int64_t H = m->upper.dim;
    vx_tensor t;
    if ((st = vx_stage_in_f32(a, "lm_hidden_in", VX_DIMS(1, -1, H), &lh, &t, err))) goto done;
    const int64_t n = t.shape[1];
    if (n < 1 || n > 4096) {
        st = vx_fail(err, VOCIS_E_SHAPE, "lm_hidden_in: %lld positions (1..4096)", (long long)n);
        goto done;
    }
    if ((st = vx_stage_in_f32(a, "speech_embed_in", VX_DIMS(1, 1, H), &se, NULL, err))) goto done;
    if (!(x = malloc(sizeof(float) * (size_t)(n * H)))) {
        st = vx_fail(err, VOCIS_E_NOMEM, "out of memory");
        goto done;
    }
    if ((st = vx_stage_out_f32(a, "tts_input_types", VX_DIMS(2, H), m->types, err))) goto done;
    if ((st = vx_kv_init(&kv, &m->upper, 2, 0, err)) ||
        (st = vx_kv_reserve(&kv, c.p.e[VX_RT_TTS_LM].T + n + 2, err)))
        goto done;
    fill(&kv, 0, &c.p, &c.p.e[VX_RT_TTS_LM]);
    fill(&kv, 1, &c.p, &c.p.e[VX_RT_NEG_TTS_LM]);
    for (int64_t i = 0; i < n * H; i++) x[i] = lh[i] + m->types[H + i % H];
    if ((st = upper_call(a, m, &kv, 0, x, n, "text", err))) goto done;
    for (int64_t i = 0; i < H; i++) x[i] = se[i] + m->types[i];
    if ((st = upper_call(a, m, &kv, 0, x, 1, "speech", err))) goto done;
    for (int64_t i = 0; i < H; i++) x[i] = se[i] + m->types[i];
    st = upper_call(a, m, &kv, 1, x, 1, "neg", err);
done:
    vx_kv_free(&kv);
    free(lh), free(se), free(x);
    ctx_free(&c);
    return st;
}

/* ------------------------------------------------------------ vv-rt-generate */

vocis_status vx_stage_vv_rt_generate(const vx_stage_args *a, vx_err *err) {
    rt_stage_opts o;
    VX_TRY(parse_opts(a, 1, &o, err));
    if (!!o.text + !!o.text_file != 1) return vx_fail(err, VOCIS_E_ARG, "give --text T or --text-file F");
    rt_ctx c;
    float *noise = NULL;
    char *text = NULL;
    vx_rt_session *s = NULL;
    vocis_status st = ctx_open(a, &o, 1, &c, err);
    if (st) goto done;
    const int64_t D = vx_vv_vae_dim(c.m.acoustic);
    size_t len = 0;
    if (o.text_file) {
        FILE *f = fopen(o.text_file, "rb");
        if (!f) {
            st = vx_fail(err, VOCIS_E_IO, "%s: cannot open", o.text_file);
            goto done;
        }
        text = malloc(1 << 20);
        len = text ? fread(text, 1, (1 << 20) - 1, f) : 0;
        fclose(f);
        if (!text) {
            st = vx_fail(err, VOCIS_E_NOMEM, "out of memory");
            goto done;
        }
    }
    vx_rt_opts go;
    vx_rt_opts_default(&go);
    go.cfg_scale = (float)o.cfg_scale;
    go.n_steps = (int)o.steps;
    go.max_new_tokens = o.max_new;
    go.nthreads = a->nthreads;
    go.trace = 1;
    vx_rng rng;
    if (o.seed >= 0) {
        vx_rng_seed(&rng, (uint64_t)o.seed);
        go.rng = &rng;
    } else {
        vx_tensor t;
        if (!a->in || !vx_st_find(a->in, "frame_init_noise")) {
            st = vx_fail(err, VOCIS_E_ARG, "give --seed N or --in with frame_init_noise [n, 2, %lld]", (long long)D);
            goto done;
        }
        if ((st = vx_stage_in_f32(a, "frame_init_noise", VX_DIMS(-1, 2, D), &noise, &t, err))) goto done;
        go.inj_noise = noise;
        go.n_inj = t.shape[0];
    }
    if ((st = vx_rt_session_new(&c.m, &c.p, &go, &s, err))) goto done;
    const char *tx = o.text ? o.text : text;
    if (!o.text_file) len = strlen(tx);
    if ((st = vx_rt_session_push(s, tx, len, err))) goto done;
    if ((st = vx_rt_session_finish(s, err))) goto done;
    st = vx_rt_session_write_trace(s, a->out, err);
done:
    vx_rt_session_free(s);
    free(noise), free(text);
    ctx_free(&c);
    return st;
}
