/* The VibeVoice-Realtime-0.5B family: voice presets, speech while the text is
 * still arriving (vocis_stream_*), and speak on top of it. */
#include "vocis.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/family.h"
#include "api/internal.h"
#include "api/job_checkpoint.h"
#include "models/vibevoice/realtime.h"

static int detect(const char *dir) {
    char path[4200];
    snprintf(path, sizeof path, "%s/config.json", dir);
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    cJSON *root = cJSON_Parse(buf);
    const cJSON *mt = cJSON_GetObjectItemCaseSensitive(root, "model_type");
    const int rt = cJSON_IsString(mt) && !strcmp(mt->valuestring, "vibevoice_streaming");
    cJSON_Delete(root);
    return rt;
}

static vocis_status open_rt(vocis_model *m, const vocis_open_options *o) {
    m->rt = calloc(1, sizeof *m->rt);
    if (!m->rt) return vx_fail(vx_api_err(m), VOCIS_E_NOMEM, "out of memory");
    vocis_status st = vx_rt_model_load(m->rt, m->dir, o ? o->config_path : NULL, 1, m->precision, vx_api_err(m));
    if (st) {
        free(m->rt);
        m->rt = NULL;
    }
    return st;
}

static void close_rt(vocis_model *m) {
    vx_api_engine_free(m);
    if (!m->rt) return;
    vx_rt_model_free(m->rt);
    free(m->rt);
    m->rt = NULL;
}

vocis_status vocis_voice_load_preset(vocis_model *m, const char *path, vocis_voice **out) {
    *out = NULL;
    vx_err_clear(vx_api_err(m));
    if (!path) return vx_fail(vx_api_err(m), VOCIS_E_ARG, "no voice preset given");
    const vx_voice_kind kind = vx_api_voice_file(path, vx_api_err(m)).kind;
    if (kind == VX_VOICE_AUDIO || kind == VX_VOICE_OTHER || kind == VX_VOICE_CONDS_PT || kind == VX_VOICE_CB_FILE)
        return vx_fail(vx_api_err(m), VOCIS_E_INVALID,
                       "%s %s; a VibeVoice-Realtime voice is a preset .pt (demo/voices/streaming_model/NAME.pt) or a "
                       "vocis voice file made from one",
                       path, vx_api_voice_file_what(kind));
    vx_err_clear(vx_api_err(m)); /* a missing file: the preset loader says so */
    vocis_voice *v = calloc(1, sizeof *v);
    if (!v || !(v->rt_preset = calloc(1, sizeof *v->rt_preset))) {
        free(v);
        return vx_fail(vx_api_err(m), VOCIS_E_NOMEM, "out of memory");
    }
    vocis_status st = vx_rt_preset_load(path, v->rt_preset, vx_api_err(m));
    if (st) {
        free(v->rt_preset);
        free(v);
        return st;
    }
    if (m->rt && (st = vx_rt_preset_check(v->rt_preset, &m->rt->cfg, vx_api_err(m)))) {
        vx_api_voice_free(v);
        return st;
    }
    v->family = &vx_family_rt; /* saved as a preset whatever model handle saves it */
    const char *base = strrchr(path, '/');
    snprintf(v->src.name, sizeof v->src.name, "%s", base ? base + 1 : path);
    *out = v;
    return VOCIS_OK;
}

static vocis_status voice_load(vocis_model *m, const char *path, vocis_voice **out) {
    *out = NULL;
    if (!path)
        return vx_fail(vx_api_err(m), VOCIS_E_ARG,
                       "VibeVoice-Realtime has no built-in voice: give a voice preset (upstream's "
                       "demo/voices/streaming_model/NAME.pt, or a vocis voice made from one)");
    return vocis_voice_load_preset(m, path, out);
}

static vocis_status voice_save(vocis_model *m, const vocis_voice *v, const char *path) {
    if (!v->rt_preset)
        return vx_fail(vx_api_err(m), VOCIS_E_ARG, "the voice is not a VibeVoice-Realtime preset: nothing to save");
    vx_st_writer *w = vx_st_writer_new();
    if (!w) return vx_fail(vx_api_err(m), VOCIS_E_NOMEM, "out of memory");
    vocis_status st = vx_rt_preset_write(v->rt_preset, w, vx_api_err(m));
    if (!st) st = vx_st_writer_meta(w, "vocis_voice_kind", "vibevoice_realtime_preset", vx_api_err(m));
    if (!st && v->src.name[0]) st = vx_st_writer_meta(w, "source", v->src.name, vx_api_err(m));
    if (!st) st = vx_st_writer_meta(w, "vocis_version", VOCIS_VERSION, vx_api_err(m));
    if (!st) st = vx_st_writer_save(w, path, vx_api_err(m));
    vx_st_writer_free(w);
    return st;
}

/* ---- streams --------------------------------------------------------------- */

struct vocis_stream {
    vocis_model *m;
    vocis_speak_options o;
    vx_rng rng;
    vx_rt_session *s;
    vocis_progress p;
    int64_t frames;
    int64_t max_samples, kept;
    /* "Speaker N:" at a line start is removed (the model has one voice): a line's first bytes
     * wait in head until they are known not to be a label */
    char head[64];
    size_t nhead;
    int in_line;    /* the current line is past its start */
    int skip_space; /* a label was just removed: drop the spaces after it */
    int line, labels;
};

/* text[0..len) with the labels removed into out (room for len + sizeof head); final: the text ends. */
static size_t strip_labels(vocis_stream *s, const char *text, size_t len, int final, char *out) {
    size_t n = 0;
    for (size_t i = 0; i < len || (final && s->nhead); i++) {
        if (i < len) {
            const char ch = text[i];
            if (s->skip_space && (ch == ' ' || ch == '\t')) continue;
            s->skip_space = 0;
            if (s->in_line) {
                out[n++] = ch;
                if (ch == '\n') s->in_line = 0, s->line++;
                continue;
            }
            s->head[s->nhead++] = ch;
        }
        size_t end = 0;
        const int r = vx_vv_label_at(s->head, s->nhead, &end);
        if (r < 0 && i < len && s->nhead < sizeof s->head) continue;
        if (r == 1) {
            if (!s->labels++)
                vx_api_warn(&s->o, "VibeVoice-Realtime speaks with one voice: 'Speaker N:' labels are removed, not "
                                   "read aloud (the first on line %d: '%.*s')",
                            s->line, (int)s->nhead, s->head);
            s->skip_space = 1;
            s->in_line = 1;
        } else {
            memcpy(out + n, s->head, s->nhead);
            n += s->nhead;
            if (s->head[s->nhead - 1] == '\n') s->line++;
            else s->in_line = 1;
        }
        s->nhead = 0;
    }
    return n;
}

/* Pushes text[0..len) without its labels. */
static vocis_status push_text(vocis_stream *s, const char *text, size_t len, int final) {
    char *buf = malloc(len + sizeof s->head);
    if (!buf) return vx_fail(vx_api_err(s->m), VOCIS_E_NOMEM, "out of memory");
    const size_t n = strip_labels(s, text, len, final, buf);
    vocis_status st = n ? vx_rt_session_push(s->s, buf, n, vx_api_err(s->m)) : VOCIS_OK;
    free(buf);
    return st;
}

static int rt_on_audio(void *user, const float *pcm, int64_t n) {
    vocis_stream *st = user;
    st->frames++;
    st->kept += n;
    st->p.stage = "vibevoice";
    st->p.step = (int)st->frames;
    st->p.n_steps = (int)st->kept;
    vx_rt_stats rs;
    vx_rt_session_stats(st->s, &rs);
    st->p.text_tokens = (int)rs.text_tokens;
    st->p.speech_tokens = (int)st->frames;
    if (st->o.on_progress && st->o.on_progress(st->o.user, &st->p)) return 1;
    return st->o.on_audio ? st->o.on_audio(st->o.user, pcm, (size_t)n, 24000) : 0;
}

/* batched: the session only takes the text; the model's batch runs its windows (speak) */
static vocis_status open_session(vocis_model *m, const vocis_voice *voice, const vocis_speak_options *opts,
                                 int batched, vocis_stream **out) {
    vx_err *err = vx_api_err(m);
    VX_TRY(vx_api_refuse_checkpoint(m, opts, "text streaming"));
    if (!voice || !voice->rt_preset)
        return vx_fail(err, VOCIS_E_ARG, "VibeVoice-Realtime needs a voice preset (vocis_voice_load of a .pt)");
    vocis_stream *s = calloc(1, sizeof *s);
    if (!s) return vx_fail(err, VOCIS_E_NOMEM, "out of memory");
    s->m = m;
    s->o = *opts;
    vocis_status st = VOCIS_OK;
    if (!(s->o.vv.cfg_scale >= 0.0f && s->o.vv.cfg_scale <= 100.0f))
        st = vx_fail(err, VOCIS_E_ARG, "cfg scale must be in [0, 100]");
    else if (s->o.vv.diffusion_steps < 1 || s->o.vv.diffusion_steps > VX_DPM_MAX_STEPS)
        st = vx_fail(err, VOCIS_E_ARG, "diffusion steps must be in [1, %d]", VX_DPM_MAX_STEPS);
    else if (s->o.vv.max_new_tokens < 0)
        st = vx_fail(err, VOCIS_E_ARG, "max new tokens must be >= 0");
    else if (!(s->o.vv.max_seconds >= 0.0f))
        st = vx_fail(err, VOCIS_E_ARG, "max seconds must be >= 0");
    if (st) {
        free(s);
        return st;
    }
    vx_api_seed_rng(&s->rng, &s->o.t3);
    vx_rt_opts g;
    vx_rt_opts_default(&g);
    g.cfg_scale = s->o.vv.cfg_scale;
    g.n_steps = s->o.vv.diffusion_steps;
    g.max_new_tokens = s->o.vv.max_new_tokens;
    g.max_samples = s->o.vv.max_seconds > 0 ? (int64_t)ceil(s->o.vv.max_seconds * 24000.0) : 0;
    g.rng = &s->rng;
    g.on_audio = rt_on_audio;
    g.user = s;
    g.nthreads = m->threads;
    g.batched = batched;
    s->p.n_chunks = 1;
    s->line = 1;
    if ((st = vx_rt_session_new(m->rt, voice->rt_preset, &g, &s->s, err))) {
        free(s);
        return st;
    }
    *out = s;
    return VOCIS_OK;
}

vocis_status vocis_stream_push(vocis_stream *s, const char *text, size_t len) {
    vx_err_clear(vx_api_err(s->m));
    if (!text && len) return vx_fail(vx_api_err(s->m), VOCIS_E_ARG, "no text given");
    return push_text(s, text, len, 0);
}

static vocis_status stream_open(vocis_model *m, const vocis_voice *voice, const vocis_speak_options *opts,
                                vocis_stream **out) {
    return open_session(m, voice, opts, 0, out);
}

static vocis_status finish_text(vocis_stream *s) {
    VX_TRY(push_text(s, NULL, 0, 1));
    return vx_rt_session_finish(s->s, vx_api_err(s->m));
}

static vocis_status take_audio(vocis_stream *s, vocis_audio *out) {
    if (s->kept == 0)
        return vx_fail(vx_api_err(s->m), VOCIS_E_INVALID,
                       "VibeVoice-Realtime produced no audio: the model ended the speech before its first frame "
                       "(try another seed or more text)");
    if (out) {
        int64_t n;
        out->samples = vx_rt_session_take_audio(s->s, &n);
        out->n = (size_t)n;
        out->sample_rate = 24000;
    }
    return VOCIS_OK;
}

vocis_status vocis_stream_finish(vocis_stream *s, vocis_audio *out) {
    vx_err_clear(vx_api_err(s->m));
    if (out) memset(out, 0, sizeof *out);
    VX_TRY(finish_text(s));
    return take_audio(s, out);
}

int vocis_stream_done(const vocis_stream *s) { return s && vx_rt_session_done(s->s); }

void vocis_stream_close(vocis_stream *s) {
    if (!s) return;
    vx_rt_session_free(s->s);
    free(s);
}

/* ---- the model's batch: concurrent speak calls' sessions step together (engine.c) ---- */

typedef struct rt_batch {
    vx_rt_session *slot[VX_ENGINE_SLOTS]; /* owned by their speak calls */
} rt_batch;

static vocis_status rtb_create(vocis_model *m, void **b, vx_err *err) {
    (void)m;
    if (!(*b = calloc(1, sizeof(rt_batch)))) return vx_fail(err, VOCIS_E_NOMEM, "out of memory");
    return VOCIS_OK;
}

static void rtb_destroy(void *b) { free(b); }

static vocis_status rtb_add(void *b, const void *req, int nthreads, int *id, vx_err *err) {
    rt_batch *v = b;
    (void)nthreads;
    int i = 0;
    while (i < VX_ENGINE_SLOTS && v->slot[i]) i++;
    if (i == VX_ENGINE_SLOTS) return vx_fail(err, VOCIS_E_ARG, "every batch slot is taken");
    v->slot[i] = (vx_rt_session *)req;
    *id = i;
    return VOCIS_OK;
}

static int rtb_free_slots(const void *b) {
    const rt_batch *v = b;
    int n = 0;
    for (int i = 0; i < VX_ENGINE_SLOTS; i++) n += !v->slot[i];
    return n;
}

static int rtb_done(const void *b, int id) { return !vx_rt_session_ready(((const rt_batch *)b)->slot[id]); }

static vocis_status rtb_step(void *b, int nthreads, vx_err *err) {
    rt_batch *v = b;
    vx_rt_session *live[VX_ENGINE_SLOTS];
    int n = 0;
    for (int i = 0; i < VX_ENGINE_SLOTS; i++)
        if (v->slot[i] && vx_rt_session_ready(v->slot[i])) live[n++] = v->slot[i];
    return vx_rt_sessions_step(live, n, nthreads, err);
}

static vocis_status rtb_take(void *b, int id, void *out, vx_err *err) {
    rt_batch *v = b;
    (void)out;
    const vocis_status st = vx_rt_session_status(v->slot[id], err);
    v->slot[id] = NULL;
    return st;
}

static void rtb_drop(void *b, int id) { ((rt_batch *)b)->slot[id] = NULL; }

static const vx_batch_ops rt_ops = {rtb_create, rtb_destroy, rtb_add, rtb_free_slots,
                                    rtb_done,   rtb_step,    rtb_take, rtb_drop};

/* The text at once, its windows stepped in the model's batch (the same samples as a stream of the
 * whole text, whatever other calls run beside it); the audio is kept anyway (out NULL only drops
 * it at the end). */
static vocis_status speak(vocis_model *m, const vocis_voice *voice, const char *text, const vocis_speak_options *opts,
                          vocis_audio *out) {
    VX_TRY(vx_api_refuse_checkpoint(m, opts, "VibeVoice-Realtime"));
    vocis_stream *s = NULL;
    VX_TRY(open_session(m, voice, opts, 1, &s));
    vocis_status st = vocis_stream_push(s, text, strlen(text));
    if (!st) st = finish_text(s);
    if (!st) st = vx_api_engine_run(m, &rt_ops, s->s, NULL, vx_api_err(m));
    vocis_audio kept;
    if (out) memset(out, 0, sizeof *out);
    if (!st) st = take_audio(s, out ? out : &kept);
    if (!st && !out) vocis_audio_free(&kept);
    vocis_stream_close(s);
    return st;
}

/* demo/realtime_model_inference_from_file.py */
static void speak_defaults(const vocis_model *m, vocis_speak_options *o) {
    (void)m;
    o->vv.cfg_scale = 1.5f;
    o->vv.diffusion_steps = 5;
}

const vx_family vx_family_rt = {
    .name = "VibeVoice-Realtime",
    .parts = VX_FAMILY_LM,
    .detect = detect,
    .open = open_rt,
    .close = close_rt,
    .kind_name = "vibevoice-realtime",
    .voice_load = voice_load,
    .voice_save = voice_save,
    .speak_defaults = speak_defaults,
    .speak = speak,
    .stream_open = stream_open,
    .batches = 1,
};
