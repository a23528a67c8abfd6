#include "models/vibevoice/generate.h"

#include <math.h>
#include <stdarg.h>

#include "base/flist.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io/audio.h"
#include "kernels/precision.h"
#include "nn/transformer.h"

/* ---- model ---------------------------------------------------------------- */

vocis_status vx_vv_latent_scalar(const vx_weights *w, const char *name, float *out, vx_err *err) {
    const vx_tensor *t = vx_weights_find(w, name, NULL);
    if (!t) return vx_fail(err, VOCIS_E_SHAPE, "%s: missing tensor '%s'", vx_weights_path(w), name);
    if (vx_numel(t) != 1 || !(VX_FLOATS & VX_DT(t->dtype)))
        return vx_fail(err, VOCIS_E_SHAPE, "%s: tensor '%s' must be one float", vx_weights_path(w), name);
    vx_to_f32(out, t->data, t->dtype, 1);
    if (!isfinite(*out) || (*out == 0.0f && strstr(name, "scaling")))
        return vx_fail(err, VOCIS_E_FORMAT, "%s: tensor '%s' is %g (it must be loaded from the checkpoint)",
                       vx_weights_path(w), name, (double)*out);
    return VOCIS_OK;
}

vocis_status vx_vv_model_load(vx_vv_model *m, const char *dir, vx_err *err) {
    return vx_vv_model_load_prec(m, dir, NULL, VX_PREC_EXACT, err);
}

vocis_status vx_vv_model_load_prec(vx_vv_model *m, const char *dir, const char *config_path, int precision,
                                   vx_err *err) {
    memset(m, 0, sizeof *m);
    vocis_status st = vx_precision_check(precision, err);
    if (!st) st = vx_vv_config_load_override(dir, config_path, &m->cfg, err);
    if (!st && strcmp(m->cfg.model_type, "vibevoice") != 0)
        st = vx_fail(err, VOCIS_E_UNSUPPORTED, "%s: model_type '%s' is not supported yet (VibeVoice 1.5B / 7B are)",
                     m->cfg.path, m->cfg.model_type);
    if (!st && !m->cfg.semantic.present)
        st = vx_fail(err, VOCIS_E_FORMAT, "%s: no semantic_tokenizer_config", m->cfg.path);
    char path[4200];
    snprintf(path, sizeof path, "%s/tokenizer.json", dir);
    if (!st && access(path, F_OK) != 0)
        st = vx_fail(err, VOCIS_E_IO,
                     "%s: missing: VibeVoice uses the Qwen2.5 text tokenizer, which the release folder lacks; copy "
                     "tokenizer.json from Qwen/Qwen2.5-1.5B (1.5B) or Qwen/Qwen2.5-7B (7B) into %s",
                     path, dir);
    if (!st) st = vx_tokenizer_load(path, &m->tok, err);
    if (!st) st = vx_vv_processor_init(&m->proc, m->tok, &m->cfg, err);
    if (!st) st = vx_vv_weights_open(dir, &m->w, err);
    if (!st) vx_weights_set_precision(m->w, vx_precision_resolve(precision));
    if (!st) st = vx_vv_lm_init(&m->lm, m->w, &m->cfg, "model.language_model.", err);
    if (!st) st = vx_vv_vae_load(m->w, "model.acoustic_tokenizer.", &m->cfg.acoustic, 1, &m->acoustic, err);
    if (!st) st = vx_vv_vae_load(m->w, "model.semantic_tokenizer.", &m->cfg.semantic, 0, &m->semantic, err);
    if (!st) st = vx_vv_connector_load(m->w, "model.acoustic_connector.", &m->ac_conn, err);
    if (!st) st = vx_vv_connector_load(m->w, "model.semantic_connector.", &m->se_conn, err);
    if (!st) st = vx_vv_diffhead_load(m->w, &m->cfg, &m->head, err);
    if (!st) st = vx_vv_latent_scalar(m->w, "model.speech_scaling_factor", &m->scaling, err);
    if (!st) st = vx_vv_latent_scalar(m->w, "model.speech_bias_factor", &m->bias, err);
    if (!st && (m->ac_conn.hidden != m->lm.tf.dim || m->se_conn.hidden != m->lm.tf.dim ||
                m->ac_conn.in_dim != vx_vv_vae_dim(m->acoustic) || m->se_conn.in_dim != vx_vv_vae_dim(m->semantic) ||
                m->head->hidden != m->lm.tf.dim || m->head->latent != vx_vv_vae_dim(m->acoustic) ||
                vx_vv_vae_hop(m->acoustic) != vx_vv_vae_hop(m->semantic)))
        st = vx_fail(err, VOCIS_E_SHAPE, "%s: connector / diffusion head / tokenizer widths do not fit together",
                     dir);
    if (st) vx_vv_model_free(m);
    return st;
}

void vx_vv_model_free(vx_vv_model *m) {
    vx_vv_diffhead_free(m->head);
    vx_vv_connector_free(&m->se_conn);
    vx_vv_connector_free(&m->ac_conn);
    vx_vv_vae_free(m->semantic);
    vx_vv_vae_free(m->acoustic);
    if (m->lm.tf.layers) vx_vv_lm_free(&m->lm);
    vx_weights_close(m->w);
    vx_tokenizer_free(m->tok);
    memset(m, 0, sizeof *m);
}

void vx_vv_gen_opts_default(vx_vv_gen_opts *o) {
    memset(o, 0, sizeof *o);
    o->cfg_scale = 1.3f;
    o->n_steps = 10;
    o->nthreads = 1;
}

static void warnf(vx_vv_warn_fn warn, void *user, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void warnf(vx_vv_warn_fn warn, void *user, const char *fmt, ...) {
    if (!warn) return;
    char msg[700];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    warn(user, msg);
}

static const char *plural_voices(int n) { return n == 1 ? "voice was" : "voices were"; }

/* The script as the demo prepares it, parsed; refusals name what is wrong before any heavy work. */
static vocis_status prepare_script(const char *script, size_t len, int n_voices, vx_vv_warn_fn warn, void *warn_user,
                                   vx_vv_script *sc, vx_err *err) {
    char *joined = NULL;
    int n_labels = 0;
    VX_TRY(vx_vv_script_join(script, len, warn, warn_user, &joined, &n_labels, err));
    vocis_status st = VOCIS_OK;
    if (n_labels == 0 && n_voices > 0)
        st = vx_fail(err, VOCIS_E_ARG,
                     "%d %s given but the text has no 'Speaker N:' lines: write one line per turn as "
                     "'Speaker 1: ...'",
                     n_voices, plural_voices(n_voices));
    else if (n_labels == 0)
        st = vx_fail(err, VOCIS_E_ARG,
                     "the script has no 'Speaker N:' lines: write one line per turn as 'Speaker 1: ...'");
    else if (!*joined)
        st = vx_fail(err, VOCIS_E_ARG,
                     "the script's 'Speaker N:' lines have no text: write the words after the label, as "
                     "'Speaker 1: Hello'");
    else st = vx_vv_script_parse(joined, strlen(joined), warn, warn_user, sc, err);
    free(joined);
    return st;
}

/* A voice VibeVoice can imitate: long enough and not silent (else the model tends to end the speech at once). */
static vocis_status check_voice(const char *path, const float *x, int64_t n, int rate, vx_err *err) {
    if (n < (int64_t)(VX_VV_VOICE_MIN_SECONDS * rate))
        return vx_fail(err, VOCIS_E_INVALID,
                       "%s: the voice is %.2f s long; VibeVoice needs at least %.1f s of the speaker (a few "
                       "seconds or more work best)",
                       path, (double)n / rate, VX_VV_VOICE_MIN_SECONDS);
    float peak = 0.0f;
    for (int64_t i = 0; i < n; i++) peak = fmaxf(peak, fabsf(x[i]));
    if (peak < 1.0f / 32768.0f)
        return vx_fail(err, VOCIS_E_INVALID, "%s: the voice is silent (peak %.2g): there is no speaker to imitate",
                       path, (double)peak);
    return VOCIS_OK;
}

vocis_status vx_vv_request_load(const vx_vv_model *m, const char *script, size_t len, const char *const *voice_paths,
                                int n_voices, vx_vv_warn_fn warn, void *warn_user, vx_vv_request *r, vx_err *err) {
    memset(r, 0, sizeof *r);
    if (n_voices < 0 || n_voices > VX_VV_MAX_VOICES)
        return vx_fail(err, VOCIS_E_ARG, "%d voices were given; at most %d are supported", n_voices,
                       VX_VV_MAX_VOICES);
    vx_vv_script *sc = &r->script;
    vocis_status st = prepare_script(script, len, n_voices, warn, warn_user, sc, err);
    for (int i = 0; i < n_voices && !st; i++) {
        vx_audio_info info;
        st = vx_audio_read_head(voice_paths[i], m->proc.sampling_rate, VX_VV_VOICE_MAX_SECONDS, &r->samples[i],
                                &r->voices[i].n, &info, err);
        r->voices[i].samples = r->samples[i];
        r->n_voices = i + 1;
        if (!st && i < sc->n_speakers)
            st = check_voice(voice_paths[i], r->samples[i], r->voices[i].n, m->proc.sampling_rate, err);
        if (!st && info.truncated)
            warnf(warn, warn_user, "%s: only the first %.0f s of the voice are used", voice_paths[i],
                  VX_VV_VOICE_MAX_SECONDS);
    }
    /* upstream labels voice i "Speaker i" by position: numbers with gaps would silently give a
     * speaker the wrong voice (or none) */
    if (!st && n_voices >= sc->n_speakers && n_voices > 0 && sc->max_speaker >= n_voices)
        st = vx_fail(err, VOCIS_E_ARG,
                     "the script's speaker numbers skip (its speakers need %d voice slots, %d %s given): "
                     "number the speakers 1..N in the order of the voices",
                     sc->max_speaker + 1, n_voices, plural_voices(n_voices));
    if (!st && n_voices > sc->n_speakers && sc->n_speakers + 1 == n_voices)
        warnf(warn, warn_user, "%d voices were given for %d speaker%s: voice %d is not used", n_voices,
              sc->n_speakers, sc->n_speakers == 1 ? "" : "s", n_voices);
    else if (!st && n_voices > sc->n_speakers)
        warnf(warn, warn_user, "%d voices were given for %d speaker%s: voices %d to %d are not used", n_voices,
              sc->n_speakers, sc->n_speakers == 1 ? "" : "s", sc->n_speakers + 1, n_voices);
    if (!st && n_voices == 0)
        warnf(warn, warn_user, "no voice was given: the prompt has no voice to imitate and the model may end the "
                               "speech at once (give one voice recording per speaker)");
    if (st) vx_vv_request_free(r);
    return st;
}

void vx_vv_request_free(vx_vv_request *r) {
    for (int i = 0; i < r->n_voices; i++) free(r->samples[i]);
    vx_vv_script_free(&r->script);
    memset(r, 0, sizeof *r);
}

/* The lines [first, first + n) of r's script, keeping the whole script's speaker count and
 * numbering, so that every session's prompt carries the same voices under the same labels. */
static vx_vv_script session_script(const vx_vv_request *r, int first, int n) {
    vx_vv_script s = r->script;
    s.lines += first;
    s.n_lines = n;
    return s;
}

vocis_status vx_vv_session_inputs(const vx_vv_model *m, const vx_vv_request *r, const vx_vv_session *s,
                                  vx_vv_inputs *out, vx_err *err) {
    const vx_vv_script sc = session_script(r, s->first_line, s->n_lines);
    return vx_vv_process(&m->proc, &sc, r->voices, r->n_voices, out, err);
}

vocis_status vx_vv_prepare(const vx_vv_model *m, const char *script, size_t len, const char *const *voice_paths,
                           int n_voices, vx_vv_warn_fn warn, void *warn_user, vx_vv_inputs *out, vx_err *err) {
    memset(out, 0, sizeof *out);
    vx_vv_request r;
    VX_TRY(vx_vv_request_load(m, script, len, voice_paths, n_voices, warn, warn_user, &r, err));
    vocis_status st = vx_vv_process(&m->proc, &r.script, r.voices, r.n_voices, out, err);
    vx_vv_request_free(&r);
    return st;
}

/* upstream's cap on the tokens generate() draws after a prompt of L: 2·L, or max_new_tokens when lower
 * (the context's own bound, max_positions − L, aside) */
static int64_t token_cap(int64_t L, const vx_vv_gen_opts *o) {
    return o->max_new_tokens > 0 && o->max_new_tokens < 2 * L ? o->max_new_tokens : 2 * L;
}

int64_t vx_vv_tokens_budget(const vx_vv_model *m, int64_t L, int n_lines, const vx_vv_gen_opts *o) {
    int64_t g = token_cap(L, o);
    if (o->max_seconds > 0) { /* the frames of max_seconds, and a speech start and end around each turn */
        const double fps = (double)m->proc.sampling_rate / (double)vx_vv_vae_hop(m->acoustic);
        const int64_t frames = (int64_t)ceil(o->max_seconds * fps) + 2 * (int64_t)n_lines + 2;
        if (frames < g) g = frames;
    }
    return g;
}

/* The first at most 40 bytes of a turn's text, cut at a character boundary, for messages. */
static void turn_excerpt(const char *text, char *buf, size_t cap) {
    while (*text == ' ') text++;
    size_t n = strlen(text), k = n < 40 ? n : 40;
    while (k > 0 && k < n && ((unsigned char)text[k] & 0xC0) == 0x80) k--;
    snprintf(buf, cap, "%.*s%s", (int)k, text, k < n ? "..." : "");
}

vocis_status vx_vv_plan_sessions(const vx_vv_model *m, const vx_vv_request *r, const vx_vv_gen_opts *o, int split,
                                 vx_vv_session **out, int *n_out, vx_err *err) {
    *out = NULL;
    *n_out = 0;
    const int n_lines = r->script.n_lines;
    const int64_t ctx = m->lm.max_positions;
    int64_t fixed = 0, *line = malloc(sizeof(int64_t) * (size_t)(n_lines > 0 ? n_lines : 1));
    vx_vv_session *ses = malloc(sizeof *ses * (size_t)(n_lines > 0 ? n_lines : 1));
    vocis_status st = !line || !ses ? vx_fail(err, VOCIS_E_NOMEM, "out of memory")
                                    : vx_vv_prompt_length(&m->proc, &r->script, r->voices, r->n_voices, &fixed,
                                                          line, err);
    int n = 0;
    for (int i = 0; i < n_lines && !st;) {
        /* the turns from line i on: as many whole ones as fit, or all of them without split */
        int64_t L = fixed + line[i];
        int k = 1;
        for (; i + k < n_lines; k++) {
            const int64_t more = L + line[i + k];
            if (split && more + vx_vv_tokens_budget(m, more, k + 1, o) > ctx) break;
            L = more;
        }
        const int64_t G = vx_vv_tokens_budget(m, L, k, o);
        if (L + G > ctx) {
            char ex[64];
            turn_excerpt(r->script.lines[i].text, ex, sizeof ex);
            if (!split)
                st = vx_fail(err, VOCIS_E_ARG,
                             "the script needs ~%lld positions (prompt %lld + up to %lld generated), the model's "
                             "context is %lld; shorten the script or split it at speaker turns (--split-turns)",
                             (long long)(L + G), (long long)L, (long long)G, (long long)ctx);
            else
                st = vx_fail(err, VOCIS_E_ARG,
                             "turn %d of %d ('%s') needs ~%lld positions on its own (prompt %lld + up to %lld "
                             "generated), the model's context is %lld; split that turn into shorter ones",
                             i + 1, n_lines, ex, (long long)(L + G), (long long)L, (long long)G, (long long)ctx);
            break;
        }
        ses[n++] = (vx_vv_session){i, k, L};
        i += k;
    }
    free(line);
    if (st) {
        free(ses);
        return st;
    }
    *out = ses;
    *n_out = n;
    return VOCIS_OK;
}

/* ---- per-frame trace rows ---------------------------------------------------- */

/* Per-frame tensors kept for the trace (08_e2e names). */
enum { TR_NOISE, TR_POS, TR_NEG, TR_LATENT, TR_DEC_IN, TR_AUDIO, TR_SEM, TR_AC_EMB, TR_SE_EMB, TR_LOGITS, TR_N };
static const char *const tr_names[TR_N] = {
    "frame_init_noise", "frame_pos_condition", "frame_neg_condition", "frame_latent", "frame_decoder_input",
    "frame_audio",      "frame_semantic",      "frame_acoustic_embed", "frame_semantic_embed", "step_valid_logits"};

/* ---- prompt ----------------------------------------------------------------- */

/* Prompt embeddings [L][H]: token embeddings with the voice placeholders
 * replaced by acoustic-connector embeddings of the sampled voice latents. */
static vocis_status prompt_embeds(const vx_vv_model *m, const vx_vv_inputs *in, const vx_vv_gen_opts *o,
                                  float *x, vx_err *err) {
    const int64_t L = in->n_tokens, H = m->lm.tf.dim;
    int64_t *ids = malloc(sizeof(int64_t) * (size_t)L);
    if (!ids) return vx_fail(err, VOCIS_E_NOMEM, "out of memory");
    for (int64_t i = 0; i < L; i++) ids[i] = in->input_ids[i];
    vx_vv_lm_embed(&m->lm, ids, L, x);
    free(ids);
    if (in->n_voices == 0) return VOCIS_OK;

    const int64_t V = in->n_voices, F = in->n_frames, D = vx_vv_vae_dim(m->acoustic), n = V * F * D;
    float *mean = malloc(sizeof(float) * (size_t)n), *noise = malloc(sizeof(float) * (size_t)n);
    float *lat = malloc(sizeof(float) * (size_t)n), *emb = malloc(sizeof(float) * (size_t)(V * F * H));
    float std_noise[64], std[64];
    vocis_status st = VOCIS_OK;
    if (V > 64) st = vx_fail(err, VOCIS_E_ARG, "more than 64 voices");
    if (!st && (!mean || !noise || !lat || !emb)) st = vx_fail(err, VOCIS_E_NOMEM, "out of memory");
    if (!st) st = vx_vv_vae_encode(m->acoustic, in->speech_tensors, V, in->max_samples, mean, o->nthreads, NULL, err);
    if (st) goto done;
    /* draw 1: randn(V); draw 2: randn_like(mean), mean being a [V, F, D] view of [V, D, F] storage
     * (torch fills it on the scalar path in storage order) */
    if (o->inj_prompt_std_noise) memcpy(std_noise, o->inj_prompt_std_noise, sizeof(float) * (size_t)V);
    else vx_rng_randn(o->rng, std_noise, (size_t)V);
    if (o->inj_prompt_noise) {
        memcpy(noise, o->inj_prompt_noise, sizeof(float) * (size_t)n);
    } else {
        vx_rng_randn_scalar(o->rng, lat, (size_t)n); /* [V][D][F] */
        for (int64_t v = 0; v < V; v++)
            for (int64_t d = 0; d < D; d++)
                for (int64_t f = 0; f < F; f++) noise[(v * F + f) * D + d] = lat[(v * D + d) * F + f];
    }
    vx_vv_vae_sample(&m->cfg.acoustic, mean, V, F * D, std_noise, noise, lat, std);
    for (int64_t i = 0; i < n; i++) lat[i] = (lat[i] + m->bias) * m->scaling;
    if ((st = vx_vv_connector_run(&m->ac_conn, lat, V * F, emb, o->nthreads, err))) goto done;
    if (o->trace) {
        st = vx_st_writer_add(o->trace, "prompt_sample_std_noise", VX_F32, VX_DIMS(V), std_noise, err);
        if (!st) st = vx_st_writer_add(o->trace, "prompt_sample_noise", VX_F32, VX_DIMS(V, F, D), noise, err);
        if (!st) st = vx_st_writer_add(o->trace, "prompt_acoustic_features", VX_F32, VX_DIMS(V, F, D), lat, err);
        if (!st) st = vx_st_writer_add(o->trace, "prompt_acoustic_embeds", VX_F32, VX_DIMS(V, F, H), emb, err);
        if (st) goto done;
    }
    /* valid frames in voice-major order fill the placeholders in prompt order */
    int64_t p = 0;
    for (int64_t v = 0; v < V; v++)
        for (int64_t f = 0; f < F; f++) {
            if (!in->speech_masks[v * F + f]) continue;
            while (p < L && !in->speech_input_mask[p]) p++;
            if (p == L) {
                st = vx_fail(err, VOCIS_E_INTERNAL, "more voice frames than placeholders in the prompt");
                goto done;
            }
            memcpy(x + p * H, emb + (v * F + f) * H, sizeof(float) * (size_t)H);
            p++;
        }
done:
    free(mean);
    free(noise);
    free(lat);
    free(emb);
    return st;
}

/* ---- generate() --------------------------------------------------------------- */

/* the positions generate() may fill from a prompt of L tokens: the prompt and its token cap */
static int64_t max_steps_of(const vx_vv_model *m, int64_t L, const vx_vv_gen_opts *o) {
    const int64_t cap = token_cap(L, o), room = m->lm.max_positions - L;
    return room < cap ? room : cap;
}

int vx_vv_kv_bf16(const vx_vv_model *m, int64_t L, const vx_vv_gen_opts *o) {
    if (m->lm.tf.kv_dtype == VX_BF16) return 1;
    return o->kv_bf16_above > 0 && L + max_steps_of(m, L, o) > o->kv_bf16_above;
}

/* One generation's whole state (generate()'s locals): started by vx_vv_gen_start, stepped by
 * vx_vv_gen_step_many (alone or beside other requests' generations), ended by vx_vv_gen_finish. */
struct vx_vv_gen {
    const vx_vv_model *m;
    const vx_vv_inputs *in;
    vx_vv_gen_opts o;
    int64_t L, H, D, SD, hop, max_steps;
    int32_t want[4], by_id[4]; /* the four allowed tokens; by increasing id (argmax keeps the first maximum) */
    vx_dpm dpm;
    vx_kv_cache kv; /* slot 0: positive, 1: negative */
    vx_vv_vae_stream *ast, *sst;
    float *pair, *hpos, *hneg, *nxt, *emb2, *lat, *z, *pcm, *sem;
    int32_t *gen;
    float noise_used[2 * 256];
    vx_flist out, tr[TR_N];
    int64_t step, ngen, nframes, samples0; /* samples0: where a resumed loop starts */
    int32_t tok;                           /* the token drawn by the step in progress */
    int want_latent;                       /* the step waits for its diffusion */
    const float *inj;                      /* its injected noise, if any */
    int done;                              /* no more steps: finish it */
    vocis_status st;                       /* its failure (err holds the message) */
    vx_err err;
};

static vocis_status gen_fail(vx_vv_gen *g, vocis_status st, const vx_err *err) {
    g->done = 1;
    g->st = st;
    if (err && err != &g->err) g->err = *err;
    return st;
}

void vx_vv_gen_free(vx_vv_gen *g) {
    if (!g) return;
    free(g->out.v);
    for (int i = 0; i < TR_N; i++) free(g->tr[i].v);
    free(g->pair), free(g->hpos), free(g->hneg), free(g->nxt), free(g->emb2), free(g->lat), free(g->z), free(g->pcm),
        free(g->sem), free(g->gen);
    vx_vv_vae_stream_free(g->ast);
    vx_vv_vae_stream_free(g->sst);
    vx_kv_free(&g->kv);
    vx_dpm_free(&g->dpm);
    free(g);
}

vocis_status vx_vv_gen_start(const vx_vv_model *m, const vx_vv_inputs *in, const vx_vv_gen_opts *o, vx_vv_gen **out,
                             vx_err *err) {
    *out = NULL;
    const vx_tf *tf = &m->lm.tf;
    const vx_vv_processor *pr = &m->proc;
    const int64_t L = in->n_tokens, maxpos = m->lm.max_positions;
    if (L < 1) return vx_fail(err, VOCIS_E_ARG, "empty prompt");
    if (L >= maxpos)
        return vx_fail(err, VOCIS_E_ARG, "prompt of %lld tokens leaves no room below max_position_embeddings %lld",
                       (long long)L, (long long)maxpos);
    if (!o->rng && (!o->inj_frame_noise || (in->n_voices && (!o->inj_prompt_noise || !o->inj_prompt_std_noise))))
        return vx_fail(err, VOCIS_E_ARG, "generate: no random generator and no injected noise");
    vx_vv_gen *g = calloc(1, sizeof *g);
    if (!g) return vx_fail(err, VOCIS_E_NOMEM, "out of memory");
    g->m = m, g->in = in, g->o = *o, g->L = L, g->H = tf->dim;
    g->D = vx_vv_vae_dim(m->acoustic), g->SD = vx_vv_vae_dim(m->semantic), g->hop = vx_vv_vae_hop(m->acoustic);
    g->max_steps = max_steps_of(m, L, o);
    const int64_t H = g->H, D = g->D;
    vx_tf kv_stack = *tf; /* the caches' storage: the stack's, or bf16 by kv_bf16_above */
    if (vx_vv_kv_bf16(m, L, o)) kv_stack.kv_dtype = VX_BF16;
    const int32_t want[4] = {pr->speech_start_id, pr->speech_end_id, pr->speech_diffusion_id, pr->eos_id};
    memcpy(g->want, want, sizeof want);
    memcpy(g->by_id, want, sizeof want);
    for (int i = 1; i < 4; i++)
        for (int j = i; j > 0 && g->by_id[j] < g->by_id[j - 1]; j--) {
            int32_t t = g->by_id[j];
            g->by_id[j] = g->by_id[j - 1];
            g->by_id[j - 1] = t;
        }
    float *x = malloc(sizeof(float) * (size_t)(L * H));
    g->pair = malloc(sizeof(float) * (size_t)(2 * H));
    g->hpos = malloc(sizeof(float) * (size_t)H), g->hneg = malloc(sizeof(float) * (size_t)H);
    g->nxt = malloc(sizeof(float) * (size_t)H), g->emb2 = malloc(sizeof(float) * (size_t)H);
    g->lat = malloc(sizeof(float) * (size_t)D), g->z = malloc(sizeof(float) * (size_t)D);
    g->pcm = malloc(sizeof(float) * (size_t)g->hop), g->sem = malloc(sizeof(float) * (size_t)g->SD);
    g->gen = malloc(sizeof(int32_t) * (size_t)(g->max_steps > 0 ? g->max_steps : 1));
    vocis_status st = VOCIS_OK;
    vx_vv_gen_ckpt *ck = o->ckpt;
    if (D > 256) st = vx_fail(err, VOCIS_E_UNSUPPORTED, "acoustic latent width %lld > 256", (long long)D);
    if (!st && (!x || !g->pair || !g->hpos || !g->hneg || !g->nxt || !g->emb2 || !g->lat || !g->z || !g->pcm ||
                !g->sem || !g->gen))
        st = vx_fail(err, VOCIS_E_NOMEM, "out of memory");
    if (!st) st = vx_dpm_init(&g->dpm, &m->cfg, o->n_steps, err);
    if (!st) st = vx_kv_init(&g->kv, &kv_stack, 2, maxpos, err);
    if (!st) st = vx_vv_vae_stream_new(m->acoustic, &g->ast, err);
    if (!st) st = vx_vv_vae_stream_new(m->semantic, &g->sst, err);
    if (!st && ck && ck->resume) { /* the checkpoint's caches and position instead of the prompt */
        vx_vv_gen_state gs = {.gen = g->gen, .kv = &g->kv, .ast = g->ast, .sst = g->sst, .hpos = g->hpos,
                              .hneg = g->hneg, .rng = o->rng, .dim = H};
        if (!(st = vx_vv_gen_state_restore(m, ck->resume, g->max_steps, &gs, err))) {
            g->step = gs.step, g->ngen = gs.ngen, g->nframes = gs.nframes, g->samples0 = gs.samples;
            ck->resumed_samples = g->samples0;
        }
    } else {
        if (!st) st = prompt_embeds(m, in, o, x, err);
        if (!st) st = vx_tf_forward(tf, &g->kv, (const int[]){0}, 1, L, x, o->nthreads, NULL, NULL, err);
        if (!st) vx_tf_final_norm(tf, g->hpos, x + (L - 1) * H, 1);
    }
    free(x);
    if (st) {
        vx_vv_gen_free(g);
        return st;
    }
    *out = g;
    return VOCIS_OK;
}

int vx_vv_gen_done(const vx_vv_gen *g) { return g->done; }

static vocis_status gen_next_input(vx_vv_gen *g, int finished);

/* The step's token; a diffusion token leaves the step waiting for its latent (g->want_latent:
 * gens_sample, then gen_after_latent), any other goes on to the next input, left in both rows of
 * g->pair; done when the generation ends here. */
static vocis_status gen_advance(vx_vv_gen *g, vx_err *err) {
    const vx_vv_model *m = g->m;
    const vx_vv_gen_opts *o = &g->o;
    const vx_tf *tf = &m->lm.tf;
    const vx_vv_processor *pr = &m->proc;
    const int64_t D = g->D, step = g->step;
    if (step >= g->max_steps) {
        g->done = 1;
        return VOCIS_OK;
    }
    float lg[4];
    vx_vv_lm_logits_subset(&m->lm, g->hpos, g->by_id, 4, lg);
    int best = 0;
    for (int i = 1; i < 4; i++)
        if (lg[i] > lg[best]) best = i;
    const int32_t tok = g->tok = g->by_id[best];
    g->gen[g->ngen++] = tok;
    if (o->trace) {
        float row[4];
        for (int i = 0; i < 4; i++)
            for (int j = 0; j < 4; j++)
                if (g->by_id[j] == g->want[i]) row[i] = lg[j];
        if (vx_flist_add(&g->tr[TR_LOGITS], row, 4)) return vx_fail(err, VOCIS_E_NOMEM, "out of memory");
    }
    if (o->on_token && o->on_token(o->user, step, tok)) return vx_fail(err, VOCIS_E_CANCELLED, "cancelled");
    const int finished = tok == pr->eos_id || step + 1 >= g->max_steps;
    if (tok == pr->speech_end_id) {
        vx_vv_vae_stream_reset(g->ast);
        vx_vv_vae_stream_reset(g->sst);
    }
    /* the negative consumed this step's input speculatively; only a diffusion step keeps it */
    if (step > 0 && tok != pr->speech_diffusion_id) g->kv.len[1]--;
    if (tok == pr->speech_start_id && !finished) vx_kv_reset(&g->kv, 1);
    const int64_t tid = tok;
    vx_vv_lm_embed(&m->lm, &tid, 1, g->nxt);

    if (tok == pr->speech_diffusion_id) {
        if (step == 0) { /* the negative starts from its own speech_start at position 0 */
            const int64_t ss = pr->speech_start_id;
            vx_vv_lm_embed(&m->lm, &ss, 1, g->pair);
            VX_TRY(vx_tf_forward(tf, &g->kv, (const int[]){1}, 1, 1, g->pair, o->nthreads, NULL, NULL, err));
            vx_tf_final_norm(tf, g->hneg, g->pair, 1);
        }
        g->inj = o->inj_frame_noise && g->nframes < o->n_inj_frames ? o->inj_frame_noise + g->nframes * 2 * D : NULL;
        g->want_latent = 1; /* the batch samples every request's latent at once: gen_after_latent */
        return VOCIS_OK;
    }
    return gen_next_input(g, finished);
}

/* A diffusion step's frame after its latent (g->lat) was decoded (g->pcm) and encoded again
 * (g->sem): connectors, audio, the next input. */
static vocis_status gen_after_latent(vx_vv_gen *g, vx_err *err) {
    const vx_vv_model *m = g->m;
    const vx_vv_gen_opts *o = &g->o;
    const int64_t H = g->H, D = g->D, hop = g->hop;
    g->want_latent = 0;
    VX_TRY(vx_vv_connector_run(&m->ac_conn, g->lat, 1, g->nxt, o->nthreads, err));
    VX_TRY(vx_vv_connector_run(&m->se_conn, g->sem, 1, g->emb2, o->nthreads, err));
    if (o->trace) {
        const float *rows[TR_LOGITS] = {g->noise_used, g->hpos, g->hneg, g->lat, g->z,
                                        g->pcm,        g->sem,  g->nxt,  g->emb2};
        const int64_t len[TR_LOGITS] = {2 * D, H, H, D, D, hop, g->SD, H, H};
        for (int i = 0; i < TR_LOGITS; i++)
            if (vx_flist_add(&g->tr[i], rows[i], len[i])) return vx_fail(err, VOCIS_E_NOMEM, "out of memory");
    }
    for (int64_t i = 0; i < H; i++) g->nxt[i] += g->emb2[i];
    if (vx_flist_add(&g->out, g->pcm, hop)) return vx_fail(err, VOCIS_E_NOMEM, "out of memory");
    g->nframes++;
    if (o->on_audio && o->on_audio(o->user, g->pcm, hop)) return vx_fail(err, VOCIS_E_CANCELLED, "cancelled");
    return gen_next_input(g, g->tok == m->proc.eos_id || g->step + 1 >= g->max_steps);
}

/* The end of a step before the pair forward: done, or the next input in both rows of the pair. */
static vocis_status gen_next_input(vx_vv_gen *g, int finished) {
    const vx_vv_gen_opts *o = &g->o;
    if (finished || (o->max_seconds > 0 && (double)(g->samples0 + g->out.n) >= o->max_seconds * 24000.0)) {
        g->done = 1;
        return VOCIS_OK;
    }
    /* next step: positive and (speculatively) negative consume the same input in one forward */
    memcpy(g->pair, g->nxt, sizeof(float) * (size_t)g->H);
    memcpy(g->pair + g->H, g->nxt, sizeof(float) * (size_t)g->H);
    return VOCIS_OK;
}

/* After the pair's forward: the next step's hidden states, and a checkpoint when one is due. */
static vocis_status gen_after_forward(vx_vv_gen *g, vx_err *err) {
    const vx_tf *tf = &g->m->lm.tf;
    vx_tf_final_norm(tf, g->hpos, g->pair, 1);
    vx_tf_final_norm(tf, g->hneg, g->pair + g->H, 1);
    vx_vv_gen_ckpt *ck = g->o.ckpt;
    g->step++;
    if (ck && ck->save && g->tok == g->m->proc.speech_diffusion_id && g->samples0 + g->out.n >= ck->next_at) {
        const vx_vv_gen_state gs = {g->step, g->ngen, g->nframes, g->samples0 + g->out.n, g->gen, &g->kv, g->ast,
                                    g->sst,  g->hpos, g->hneg,    g->o.rng,  g->H};
        VX_TRY(ck->save(ck, &gs, err));
    }
    return VOCIS_OK;
}

/* The frames of every generation waiting for one: the latents in one head call per DPM step for all
 * of those on the same schedule, then one acoustic decode and one semantic encode step for all of
 * them (the σ-VAE's wide layers read once), then each one's connectors and audio. */
static vocis_status gens_sample(vx_vv_gen *const *gens, int n, int nthreads, vx_err *err) {
    const size_t nn = (size_t)(n > 0 ? n : 1);
    vx_vv_sample_req *q = malloc(sizeof *q * nn);
    vx_vv_sample_trace *tr = calloc(nn, sizeof *tr);
    vx_vv_gen **who = malloc(sizeof *who * nn);
    const vx_dpm **d = malloc(sizeof *d * nn);
    vocis_status *sst = malloc(sizeof *sst * nn);
    vx_err *serr = calloc(nn, sizeof *serr);
    vx_vv_vae_stream **as = malloc(sizeof *as * nn), **ss = malloc(sizeof *ss * nn);
    const float **zin = malloc(sizeof *zin * nn), **pin = malloc(sizeof *pin * nn);
    float **pcm = malloc(sizeof *pcm * nn), **sem = malloc(sizeof *sem * nn);
    vocis_status st = q && tr && who && d && sst && serr && as && ss && zin && pin && pcm && sem
                          ? VOCIS_OK
                          : vx_fail(err, VOCIS_E_NOMEM, "out of memory");
    int k = 0; /* the generations waiting for a latent */
    for (int i = 0; i < n && !st; i++) {
        vx_vv_gen *h = gens[i];
        if (h->done || !h->want_latent) continue;
        who[k] = h, d[k] = &h->dpm;
        tr[k] = (vx_vv_sample_trace){.init_noise = h->noise_used};
        q[k] = (vx_vv_sample_req){h->hpos, h->hneg, h->o.cfg_scale, h->o.rng, h->inj, h->lat, &tr[k]};
        k++;
    }
    if (k > 0) vx_vv_sample_latents_any(who[0]->m->head, d, q, k, nthreads, sst, serr);
    int ok = 0; /* those with a latent */
    for (int j = 0; j < k; j++) {
        vx_vv_gen *g = who[j];
        if (sst[j]) {
            gen_fail(g, sst[j], &serr[j]);
            continue;
        }
        for (int64_t i = 0; i < g->D; i++) g->z[i] = g->lat[i] / g->m->scaling - g->m->bias;
        who[ok] = g, as[ok] = g->ast, ss[ok] = g->sst, zin[ok] = g->z, pcm[ok] = g->pcm, pin[ok] = g->pcm;
        sem[ok++] = g->sem;
    }
    if (ok > 0) {
        const vx_vv_model *m = who[0]->m;
        vx_err e = {0};
        vocis_status vs = vx_vv_vae_decode_steps(m->acoustic, as, ok, zin, pcm, nthreads, &e);
        if (!vs) vs = vx_vv_vae_encode_steps(m->semantic, ss, ok, pin, sem, nthreads, &e);
        for (int j = 0; j < ok; j++) {
            const vocis_status gs = vs ? vs : gen_after_latent(who[j], &who[j]->err);
            if (gs) gen_fail(who[j], gs, vs ? &e : NULL);
        }
    }
    free(q), free(tr), free(who), free(d), free(sst), free(serr), free(as), free(ss), free(zin), free(pin), free(pcm),
        free(sem);
    return st;
}

vocis_status vx_vv_gen_step_many(vx_vv_gen *const *gens, int n, int nthreads, vx_err *err) {
    int k = 0;
    for (int i = 0; i < n; i++) {
        vx_vv_gen *g = gens[i];
        if (g->done) continue;
        vocis_status st = gen_advance(g, &g->err);
        if (st) gen_fail(g, st, NULL);
    }
    VX_TRY(gens_sample(gens, n, nthreads, err));
    vx_kv_cache **kvs = malloc(sizeof *kvs * (size_t)(n > 0 ? n : 1));
    float **pairs = malloc(sizeof *pairs * (size_t)(n > 0 ? n : 1));
    vx_vv_gen **who = malloc(sizeof *who * (size_t)(n > 0 ? n : 1));
    if (!kvs || !pairs || !who) {
        free(kvs), free(pairs), free(who);
        return vx_fail(err, VOCIS_E_NOMEM, "out of memory");
    }
    for (int i = 0; i < n; i++)
        if (!gens[i]->done) who[k] = gens[i], kvs[k] = &gens[i]->kv, pairs[k] = gens[i]->pair, k++;
    /* one forward for every pair: each row computed as its own one-position step would be */
    vocis_status st = k ? vx_tf_forward_pairs(&gens[0]->m->lm.tf, kvs, pairs, k, nthreads, err) : VOCIS_OK;
    for (int i = 0; i < k && !st; i++) {
        vocis_status gs = gen_after_forward(who[i], &who[i]->err);
        if (gs) gen_fail(who[i], gs, NULL);
    }
    free(kvs), free(pairs), free(who);
    return st;
}

vocis_status vx_vv_gen_finish(vx_vv_gen *g, float **audio, int64_t *n_audio, int32_t **out_ids, int64_t *n_ids,
                              vx_err *err) {
    *audio = NULL;
    *n_audio = 0;
    if (out_ids) *out_ids = NULL;
    if (n_ids) *n_ids = 0;
    if (g->st) {
        if (err) *err = g->err;
        return g->st;
    }
    const vx_vv_gen_opts *o = &g->o;
    const int64_t nframes = g->nframes, ngen = g->ngen, H = g->H, D = g->D, L = g->L;
    vocis_status st = VOCIS_OK;
    if (o->trace) {
        const int64_t frame_shape[TR_LOGITS][3] = {{nframes, 2, D}, {nframes, H, 0}, {nframes, H, 0},
                                                  {nframes, D, 0},  {nframes, 1, D}, {nframes, 1, g->hop},
                                                  {nframes, 1, g->SD}, {nframes, 1, H}, {nframes, 1, H}};
        const int nd[TR_LOGITS] = {3, 2, 2, 2, 3, 3, 3, 3, 3};
        for (int i = 0; i < TR_LOGITS && !st; i++)
            if (nframes > 0)
                st = vx_st_writer_add(o->trace, tr_names[i], VX_F32, nd[i], frame_shape[i], g->tr[i].v, err);
        if (!st) st = vx_st_writer_add(o->trace, tr_names[TR_LOGITS], VX_F32, VX_DIMS(ngen, 4), g->tr[TR_LOGITS].v, err);
        int64_t *seq = st ? NULL : malloc(sizeof(int64_t) * (size_t)(L + ngen));
        if (!st && !seq) st = vx_fail(err, VOCIS_E_NOMEM, "out of memory");
        if (!st) {
            for (int64_t i = 0; i < L; i++) seq[i] = g->in->input_ids[i];
            for (int64_t i = 0; i < ngen; i++) seq[L + i] = g->gen[i];
            st = vx_st_writer_add(o->trace, "sequences", VX_I64, VX_DIMS(1, L + ngen), seq, err);
        }
        if (!st) st = vx_st_writer_add(o->trace, "generated_ids", VX_I64, VX_DIMS(ngen), seq + L, err);
        if (!st && g->out.n > 0) st = vx_st_writer_add(o->trace, "audio", VX_F32, VX_DIMS(1, g->out.n), g->out.v, err);
        free(seq);
        if (st) return st;
    }
    *audio = g->out.v;
    *n_audio = g->out.n;
    g->out.v = NULL;
    g->out.n = 0;
    if (out_ids) {
        *out_ids = g->gen;
        g->gen = NULL;
    }
    if (n_ids) *n_ids = ngen;
    return VOCIS_OK;
}

vocis_status vx_vv_generate(const vx_vv_model *m, const vx_vv_inputs *in, const vx_vv_gen_opts *o, float **audio,
                            int64_t *n_audio, int32_t **out_ids, int64_t *n_ids, vx_err *err) {
    *audio = NULL;
    *n_audio = 0;
    if (out_ids) *out_ids = NULL;
    if (n_ids) *n_ids = 0;
    vx_vv_gen *g;
    VX_TRY(vx_vv_gen_start(m, in, o, &g, err));
    vocis_status st = VOCIS_OK;
    while (!st && !g->done) st = vx_vv_gen_step_many(&g, 1, o->nthreads, err);
    if (!st) st = vx_vv_gen_finish(g, audio, n_audio, out_ids, n_ids, err);
    vx_vv_gen_free(g);
    return st;
}
