/* Public API, VibeVoice side: scripts with one voice recording per speaker. */
#include "vocis.h"

#include <stdlib.h>
#include <string.h>

#include "api/internal.h"

typedef struct vv_ctx {
    const vocis_speak_options *o;
    vocis_progress p;
    int32_t frame_token; /* the speech-diffusion token: one frame each */
} vv_ctx;

static int vv_on_audio(void *user, const float *pcm, int64_t n) {
    vv_ctx *c = user;
    c->p.n_steps += (int)n; /* "vibevoice" progress: n_steps = samples generated so far */
    return c->o->on_audio ? c->o->on_audio(c->o->user, pcm, (size_t)n, 24000) : 0;
}

static int vv_on_token(void *user, int64_t step, int32_t tok) {
    vv_ctx *c = user;
    c->p.speech_tokens += tok == c->frame_token;
    if (!c->o->on_progress) return 0;
    c->p.stage = "vibevoice";
    c->p.step = (int)step + 1;
    return c->o->on_progress(c->o->user, &c->p);
}

vocis_status vocis_speak_script(vocis_model *m, const vocis_voice *const *voices, int n_voices, const char *script,
                                const vocis_speak_options *opts, vocis_audio *out) {
    memset(out, 0, sizeof *out);
    vx_err_clear(vx_api_err(m));
    vx_err *err = vx_api_err(m);
    if (!m->vv) return vx_fail(err, VOCIS_E_UNSUPPORTED, "vocis_speak_script needs a VibeVoice model");
    if (!script) return vx_fail(err, VOCIS_E_ARG, "no script given");
    if (n_voices < 0 || n_voices > 64)
        return vx_fail(err, VOCIS_E_ARG, "%d voices were given; at most 64 are supported", n_voices);
    vocis_speak_options o;
    if (opts) o = *opts;
    else vocis_speak_options_default(&o);
    if (!(o.vv.cfg_scale >= 0.0f && o.vv.cfg_scale <= 100.0f))
        return vx_fail(err, VOCIS_E_ARG, "cfg scale must be in [0, 100]");
    if (o.vv.diffusion_steps < 1 || o.vv.diffusion_steps > VX_DPM_MAX_STEPS)
        return vx_fail(err, VOCIS_E_ARG, "diffusion steps must be in [1, %d]", VX_DPM_MAX_STEPS);
    if (o.vv.max_new_tokens < 0) return vx_fail(err, VOCIS_E_ARG, "max new tokens must be >= 0");
    if (!(o.vv.max_seconds >= 0.0f)) return vx_fail(err, VOCIS_E_ARG, "max seconds must be >= 0");
    const char *paths[64];
    for (int i = 0; i < n_voices; i++) {
        if (!voices[i] || !voices[i]->audio_path)
            return vx_fail(err, VOCIS_E_ARG, "voice %d is not a recording loaded for this VibeVoice model", i + 1);
        paths[i] = voices[i]->audio_path;
    }
    vx_vv_inputs in = {0};
    VX_TRY(vx_vv_prepare(m->vv, script, strlen(script), paths, n_voices, vx_api_warn_cb, &o, &in, err));
    vx_rng rng;
    vx_api_seed_rng(&rng, &o.t3);
    vv_ctx c = {&o, {NULL, 0, 1, 0, 0, 0, 0}, m->vv->proc.speech_diffusion_id};
    for (int64_t i = 0; i < in.n_tokens; i++) c.p.text_tokens += !in.speech_input_mask[i];
    vx_vv_gen_opts g;
    vx_vv_gen_opts_default(&g);
    g.cfg_scale = o.vv.cfg_scale;
    g.n_steps = o.vv.diffusion_steps;
    g.max_new_tokens = o.vv.max_new_tokens;
    g.max_seconds = o.vv.max_seconds;
    g.rng = &rng;
    g.on_audio = vv_on_audio;
    g.on_token = vv_on_token;
    g.user = &c;
    g.nthreads = m->threads;
    float *audio = NULL;
    int64_t n = 0;
    vocis_status st = vx_vv_generate(m->vv, &in, &g, &audio, &n, NULL, NULL, err);
    vx_vv_inputs_free(&in);
    if (st) return st;
    if (n == 0) {
        free(audio);
        return vx_fail(err, VOCIS_E_INVALID,
                       "VibeVoice produced no audio: the model ended the speech before its first frame (try "
                       "another seed, longer or clearer voice recordings, or more text)");
    }
    out->samples = audio;
    out->n = (size_t)n;
    out->sample_rate = 24000;
    return VOCIS_OK;
}

vocis_status vx_api_vv_speak(vocis_model *m, const vocis_voice *voice, const char *text,
                             const vocis_speak_options *opts, vocis_audio *out) {
    const char *q = text;
    while (*q == ' ' || *q == '\t' || *q == '\n' || *q == '\r') q++;
    if (!*q) return vx_fail(vx_api_err(m), VOCIS_E_ARG, "text is empty");
    if (vx_vv_script_has_labels(text, strlen(text)))
        return vocis_speak_script(m, voice ? &voice : NULL, voice ? 1 : 0, text, opts, out);
    /* plain text: one line for Speaker 1 */
    size_t len = strlen(text);
    char *s = malloc(len + 16);
    if (!s) return vx_fail(vx_api_err(m), VOCIS_E_NOMEM, "out of memory");
    memcpy(s, "Speaker 1: ", 11);
    for (size_t i = 0; i < len; i++) s[11 + i] = text[i] == '\n' || text[i] == '\r' ? ' ' : text[i];
    s[11 + len] = '\0';
    vocis_status st = vocis_speak_script(m, voice ? &voice : NULL, voice ? 1 : 0, s, opts, out);
    free(s);
    return st;
}

