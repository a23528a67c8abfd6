/* Public API: model and voice handles over the internal model code. */
#include "vocis.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/rng.h"
#include "base/threads.h"
#include "io/audio.h"
#include "io/safetensors.h"
#include "io/torchzip.h"
#include "kernels/precision.h"
#include "models/chatterbox/clone.h"
#include "models/chatterbox/conds.h"
#include "models/chatterbox/hift.h"
#include "models/chatterbox/mtl.h"
#include "text/mtl_text.h"
#include "models/chatterbox/s3gen_flow.h"
#include "models/chatterbox/s3gen_stream.h"
#include "models/chatterbox/t3.h"
#include "models/vibevoice/generate.h"
#include "nn/prefix_cache.h"
#include "text/chatterbox_text.h"
#include "text/sentences.h"
#include "text/tokenizer.h"
#include "text/unicode.h"
#include "models/chatterbox/turbo.h"

#include "api/internal.h"
#include "api/job_checkpoint.h"
#include "nn/prefix_cache.h"
#include "api/limits.h"

int vx_api_file_exists(const char *dir, const char *name) {
    char p[4200];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    return access(p, F_OK) == 0;
}

static vocis_status open_chatterbox(vocis_model *m, const vocis_open_options *o) {
    vx_err *err = vx_api_err(m);
    char path[4200];
    vx_cb_config_default(&m->cfg);
    VX_TRY(vx_cb_config_load(&m->cfg, m->dir, o ? o->config_path : NULL, err));
    snprintf(path, sizeof path, "%s/tokenizer.json", m->dir);
    VX_TRY(vx_tokenizer_load(path, &m->tok, err));
    int32_t sot = vx_tokenizer_token_id(m->tok, "[START]"), eot = vx_tokenizer_token_id(m->tok, "[STOP]");
    if (sot != m->cfg.start_text_token || eot != m->cfg.stop_text_token)
        return vx_fail(err, VOCIS_E_FORMAT, "%s: [START]/[STOP] have ids %d/%d, T3 expects %d/%d", path, sot, eot,
                       m->cfg.start_text_token, m->cfg.stop_text_token);
    snprintf(path, sizeof path, "%s/t3_cfg.safetensors", m->dir);
    VX_TRY(vx_t3_load_prec(&m->t3, path, &m->cfg, m->precision, err));
    m->has_t3 = 1;
    return VOCIS_OK;
}

/* The KV-cache storage of vocis_open_options.kv_cache onto the stacks the open made. */
static vocis_status apply_kv(vocis_model *m, int kv, vocis_status st) {
    if (st || kv != VOCIS_KV_BF16) return st;
    if (m->has_t3) vx_tf_set_kv(&m->t3.tf, VX_KV_BF16);
    if (m->vv) vx_tf_set_kv(&m->vv->lm.tf, VX_KV_BF16);
    return VOCIS_OK;
}

#define VOICE_CACHE_DEFAULT_MB 256

/* The voice-prefix cache of vocis_open_options.voice_cache_mb onto the T3 the open made. */
static vocis_status apply_voice_cache(vocis_model *m, const vocis_open_options *o, vocis_status st) {
    if (st) return st;
    const int mb = o ? o->voice_cache_mb : 0;
    if (mb < -1) return vx_fail(vx_api_err(m), VOCIS_E_ARG, "voice cache of %d MiB (-1 = none, 0 = default)", mb);
    const size_t bytes = mb < 0 ? 0 : (size_t)(mb ? mb : VOICE_CACHE_DEFAULT_MB) << 20;
    if (m->has_t3) return vx_t3_set_voice_cache(&m->t3, bytes, vx_api_err(m));
    if (m->turbo) return vx_api_turbo_set_voice_cache(m, bytes);
    return VOCIS_OK;
}

void vocis_voice_cache_stats_get(const vocis_model *m, vocis_voice_cache_stats *out) {
    memset(out, 0, sizeof *out);
    if (!m) return;
    vx_prefix_cache *c = m->has_t3 ? m->t3.prefix_cache : m->turbo ? vx_api_turbo_voice_cache(m) : NULL;
    vx_prefix_stats st;
    vx_prefix_cache_stats(c, &st);
    *out = (vocis_voice_cache_stats){st.hits, st.misses, st.entries, st.evictions, st.bytes, st.max_bytes};
}

static vocis_status kv_refused(vocis_model *m, const char *family) {
    return vx_fail(vx_api_err(m), VOCIS_E_UNSUPPORTED, "a bf16 KV cache is not available for %s models (use f32)",
                   family);
}

vocis_status vocis_model_open(const char *dir, const vocis_open_options *opts, vocis_model **out) {
    vocis_model *m = calloc(1, sizeof *m);
    *out = m;
    if (!m) return VOCIS_E_NOMEM;
    pthread_mutex_init(&m->clone_lock, NULL);
    m->threads = opts && opts->threads > 0 ? opts->threads : vx_default_threads();
    m->precision = vx_precision_resolve(opts ? opts->precision : 0);
    m->precision_flow = vx_precision_resolve_part(opts ? opts->precision : 0, VX_PART_FLOW);
    m->precision_vocoder = vx_precision_resolve_part(opts ? opts->precision : 0, VX_PART_VOCODER);
    if (vx_precision_check(opts ? opts->precision : 0, vx_api_err(m))) return vx_api_err(m)->code;
    const int kv = opts ? opts->kv_cache : VOCIS_KV_DEFAULT;
    if (kv < VOCIS_KV_DEFAULT || kv > VOCIS_KV_BF16)
        return vx_fail(vx_api_err(m), VOCIS_E_ARG, "unknown KV-cache storage %d (VOCIS_KV_F32 or VOCIS_KV_BF16)", kv);
    m->kv_cache = kv;
    if (!dir || !*dir) return vx_fail(vx_api_err(m), VOCIS_E_ARG, "no model folder given");
    snprintf(m->dir, sizeof m->dir, "%s", dir);
    if (access(dir, F_OK) != 0) return vx_fail(vx_api_err(m), VOCIS_E_IO, "%s: model folder not found", dir);
    if (vx_turbo_is_folder(dir)) /* Chatterbox-Turbo / -Nano */
        return kv == VOCIS_KV_BF16 ? kv_refused(m, "Chatterbox-Turbo / -Nano")
                                   : apply_voice_cache(m, opts, vx_api_turbo_open(m, opts));
    if (vx_mtl_is_folder(dir)) /* Chatterbox-Multilingual */
        return apply_voice_cache(m, opts, apply_kv(m, kv, vx_api_mtl_open(m, opts)));
    if (vx_api_file_exists(dir, "t3_cfg.safetensors"))
        return apply_voice_cache(m, opts, apply_kv(m, kv, open_chatterbox(m, opts)));
    if (vx_api_file_exists(dir, "s3gen.safetensors") && !vx_api_file_exists(dir, "config.json")) {
        /* ChatterboxVC.from_local: s3gen.safetensors (+ conds.pt for the built-in target) */
        vx_cb_config_default(&m->cfg);
        m->is_vc = 1;
        return vx_cb_config_load(&m->cfg, m->dir, opts ? opts->config_path : NULL, vx_api_err(m));
    }
    if (vx_api_file_exists(dir, "config.json") && vx_api_rt_detect(dir))
        return kv == VOCIS_KV_BF16 ? kv_refused(m, "VibeVoice-Realtime")
                                   : vx_api_rt_open(m, dir, opts ? opts->config_path : NULL);
    if (vx_api_file_exists(dir, "config.json")) {
        m->vv = calloc(1, sizeof *m->vv);
        if (!m->vv) return vx_fail(vx_api_err(m), VOCIS_E_NOMEM, "out of memory");
        vocis_status st =
            vx_vv_model_load_prec(m->vv, dir, opts ? opts->config_path : NULL, m->precision, vx_api_err(m));
        if (st) {
            free(m->vv);
            m->vv = NULL;
        }
        return apply_kv(m, kv, st);
    }
    return vx_fail(vx_api_err(m), VOCIS_E_UNSUPPORTED,
                   "%s: not a recognised model folder (expected Chatterbox's t3_cfg.safetensors or VibeVoice's "
                   "config.json)",
                   dir);
}

void vocis_model_close(vocis_model *m) {
    if (!m) return;
    vx_api_t3_engine_free(m);
    if (m->has_t3) vx_t3_free(&m->t3);
    vx_api_turbo_close(m);
    if (m->vv) vx_vv_model_free(m->vv);
    free(m->vv);
    vx_api_rt_close(m);
    vx_s3gen_flow_free(m->flow);
    vx_hift_free(m->hift);
    if (m->has_cloner) vx_cb_cloner_free(&m->cloner);
    for (int i = 0; i < m->nclones; i++) vx_cb_conds_free(&m->clones[i].conds);
    free(m->clones);
    pthread_mutex_destroy(&m->clone_lock);
    vx_weights_close(m->s3gen_w);
    vx_tokenizer_free(m->tok);
    vx_mtl_text_free(m->mtl);
    free(m);
}

const char *vocis_model_kind(const vocis_model *m) {
    return !m ? "" : m->turbo ? vx_api_turbo_kind(m) : m->vv ? "vibevoice" : m->rt ? "vibevoice-realtime" : m->has_t3 ? (m->mtl ? "chatterbox-multilingual" : "chatterbox") : m->is_vc ? "chatterbox-vc" : "";
}

int vocis_model_precision(const vocis_model *m, int part) {
    if (!m) return 0;
    const int lm = m->has_t3 || m->turbo || m->vv || m->rt, s3gen = m->has_t3 || m->turbo || m->is_vc;
    /* the flow and HiFT have no transformer linears: q8 leaves them in bf16 (kernels/precision.h) */
    const int flow = m->precision_flow == VX_PREC_Q8 ? VX_PREC_BF16 : m->precision_flow,
              vocoder = m->precision_vocoder == VX_PREC_Q8 ? VX_PREC_BF16 : m->precision_vocoder;
    switch (part) {
    case VOCIS_PART_LM: return lm ? m->precision : 0;
    case VOCIS_PART_FLOW: return s3gen ? flow : 0;
    case VOCIS_PART_VOCODER: return s3gen ? vocoder : 0;
    default: return 0;
    }
}

/* One error context per thread (not per model): a failed call leaves its message for the
 * same thread's vocis_errmsg, whatever other threads do with the model meanwhile. */
static _Thread_local vx_err thread_err;

vx_err *vx_api_err(const vocis_model *m) {
    (void)m;
    return &thread_err;
}

const char *vocis_errmsg(const vocis_model *m) {
    if (!m) return "out of memory";
    return thread_err.code ? thread_err.msg : "no error";
}

void vocis_model_set_threads(vocis_model *m, int threads) {
    if (m) m->threads = threads > 0 ? threads : vx_default_threads();
}

void vocis_free(void *p) { free(p); }

const char *vocis_version(void) { return VOCIS_VERSION; }

vocis_status vocis_tokenize(vocis_model *m, const char *text, int32_t **ids, size_t *n) {
    return vocis_tokenize_language(m, text, NULL, ids, n);
}

/* Refuses text with nothing to say (empty or only whitespace), for tokenize and speak alike. */
static vocis_status check_text(vocis_model *m, const char *text) {
    if (!text) return vx_fail(vx_api_err(m), VOCIS_E_ARG, "no text given");
    if (vx_utf8_blank(text, strlen(text))) return vx_fail(vx_api_err(m), VOCIS_E_ARG, "text is empty");
    return VOCIS_OK;
}

/* vocis_tokenize_language; unknown (may be NULL) collects the characters the vocabulary lacks. */
static vocis_status tokenize(vocis_model *m, const char *text, const char *language, int32_t **ids, size_t *n,
                             vx_tok_unknown *unknown) {
    *ids = NULL;
    *n = 0;
    if (!m->tok) return vx_fail(vx_api_err(m), VOCIS_E_ARG, "model has no tokenizer loaded");
    VX_TRY(check_text(m, text));
    if (m->mtl) return vx_api_mtl_tokenize(m, text, language, ids, n, unknown); /* language tag and steps, start/stop */
    if (vocis_check_language(m, language)) return vx_api_err(m)->code;
    if (m->turbo) return vx_api_turbo_tokenize(m, text, ids, n); /* GPT-2 byte-level ids (no unknowns), no start/stop */
    int32_t *raw;
    size_t nraw;
    VX_TRY(vx_cb_text_to_ids(m->tok, text, &raw, &nraw, unknown, vx_api_err(m)));
    return vx_api_pad_text_ids(m, raw, nraw, ids, n);
}

vocis_status vocis_tokenize_language(vocis_model *m, const char *text, const char *language, int32_t **ids,
                                     size_t *n) {
    vx_err_clear(vx_api_err(m));
    return tokenize(m, text, language, ids, n, NULL);
}

vocis_status vx_api_pad_text_ids(vocis_model *m, int32_t *raw, size_t nraw, int32_t **ids, size_t *n) {
    int32_t *all = malloc(sizeof(int32_t) * (nraw + 2));
    if (!all) {
        free(raw);
        return vx_fail(vx_api_err(m), VOCIS_E_NOMEM, "out of memory");
    }
    all[0] = m->cfg.start_text_token;
    memcpy(all + 1, raw, sizeof(int32_t) * nraw);
    all[nraw + 1] = m->cfg.stop_text_token;
    free(raw);
    *ids = all;
    *n = nraw + 2;
    return VOCIS_OK;
}

static int has_suffix(const char *s, const char *suf) {
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && strcmp(s + a - b, suf) == 0;
}

static int has_bytes(const uint8_t *p, size_t n, const char *needle) {
    const size_t k = strlen(needle);
    for (size_t i = 0; i + k <= n; i++)
        if (p[i] == (uint8_t)needle[0] && !memcmp(p + i, needle, k)) return 1;
    return 0;
}

/* A torch.save archive by the names in its pickle: HF's output / cache classes make a
 * VibeVoice-Realtime preset, T3Cond's fields a Chatterbox conds.pt. */
static vx_voice_kind torch_kind(const char *path) {
    vx_err ignore = {0};
    vx_zip *z;
    if (vx_zip_open(path, &z, &ignore)) return VX_VOICE_PT;
    vx_voice_kind kind = VX_VOICE_PT;
    for (int i = 0; i < vx_zip_count(z) && kind == VX_VOICE_PT; i++) {
        const char *name = vx_zip_name(z, i);
        const uint8_t *d;
        uint64_t n;
        if (!has_suffix(name, "data.pkl") || vx_zip_read(z, name, &d, &n, &ignore)) continue;
        if (has_bytes(d, (size_t)n, "transformers.modeling_outputs") || has_bytes(d, (size_t)n, "transformers.cache_utils"))
            kind = VX_VOICE_RT_PT;
        else if (has_bytes(d, (size_t)n, "cond_prompt_speech_tokens"))
            kind = VX_VOICE_CONDS_PT;
    }
    vx_zip_close(z);
    return kind;
}

/* A safetensors file by its metadata and tensor names (the same rules as the loaders'). */
static vx_voice_file safetensors_kind(const char *path) {
    vx_voice_file vf = {VX_VOICE_SAFETENSORS, ""};
    vx_err ignore = {0};
    vx_st_file *f;
    if (vx_st_open(path, &f, &ignore)) return vf;
    const char *vk = vx_st_metadata(f, "vocis_voice_kind"), *mk = vx_st_metadata(f, "vocis_model_kind");
    if ((vk && !strcmp(vk, "vibevoice_realtime_preset")) || vx_st_find(f, "tts_lm_last_hidden_state"))
        vf.kind = VX_VOICE_RT_FILE;
    else if (vx_st_find(f, "speaker_emb") || vx_st_find(f, "t3.speaker_emb"))
        vf.kind = VX_VOICE_CB_FILE;
    if (mk) snprintf(vf.model_kind, sizeof vf.model_kind, "%s", mk);
    vx_st_close(f);
    return vf;
}

static int audio_magic(const unsigned char *b, size_t n) {
    static const char *const magic[] = {"RIFF", "RIFX", "RF64", "riff", "fLaC", "OggS", "ID3", "FORM", ".snd", "caff", "wvpk"};
    for (size_t i = 0; i < sizeof magic / sizeof magic[0]; i++)
        if (n >= strlen(magic[i]) && !memcmp(b, magic[i], strlen(magic[i]))) return 1;
    return n >= 2 && b[0] == 0xFF && (b[1] & 0xE0) == 0xE0; /* an MPEG audio frame */
}

vx_voice_file vx_api_voice_file(const char *path, vx_err *err) {
    vx_voice_file vf = {VX_VOICE_MISSING, ""};
    FILE *f = fopen(path, "rb");
    if (!f) {
        vx_fail(err, VOCIS_E_IO, "%s: cannot open voice file: %s", path, strerror(errno));
        return vf;
    }
    unsigned char b[12] = {0};
    size_t got = fread(b, 1, sizeof b, f);
    fclose(f);
    if (got >= 4 && b[0] == 'P' && b[1] == 'K') vf.kind = torch_kind(path);
    else if (got >= 9 && b[8] == '{') vf = safetensors_kind(path);
    else if (audio_magic(b, got)) vf.kind = VX_VOICE_AUDIO;
    else if (has_suffix(path, ".pt")) vf.kind = VX_VOICE_PT;
    else if (has_suffix(path, ".voice") || has_suffix(path, ".safetensors")) vf.kind = VX_VOICE_SAFETENSORS;
    else vf.kind = VX_VOICE_OTHER;
    return vf;
}

const char *vx_api_voice_file_what(vx_voice_kind kind) {
    switch (kind) {
    case VX_VOICE_CONDS_PT: return "is a Chatterbox conds.pt";
    case VX_VOICE_RT_PT: return "is a VibeVoice-Realtime voice preset";
    case VX_VOICE_CB_FILE: return "is a Chatterbox voice file";
    case VX_VOICE_RT_FILE: return "is a VibeVoice-Realtime voice file";
    case VX_VOICE_AUDIO: return "is an audio recording";
    default: return "is not a voice file";
    }
}

/* Voices of one cloning recipe work on each other's models: English, Multilingual and voice
 * conversion share prepare_conditionals (a 6 s T3 prompt of 150 tokens, s3gen.safetensors);
 * Turbo and Nano take a 15 s prompt (375 tokens) of loudness-normalised audio and the
 * MeanFlow S3Gen. The shapes fit either way: only the recipe tells them apart. */
static const char *voice_family(const char *kind) {
    if (!strcmp(kind, "chatterbox-turbo") || !strcmp(kind, "chatterbox-nano")) return "chatterbox-turbo";
    if (!strncmp(kind, "chatterbox", 10)) return "chatterbox";
    return kind;
}

static vocis_status check_voice_kind(vocis_model *m, const char *path, const char *made_for) {
    const char *kind = vocis_model_kind(m);
    if (!made_for[0] || !kind[0] || !strcmp(voice_family(made_for), voice_family(kind))) return VOCIS_OK;
    return vx_fail(vx_api_err(m), VOCIS_E_INVALID, "%s was made for %s; this model is %s: clone the recording again with this model",
                   path, made_for, kind);
}

/* A voice handle cloned by another model handle (in this process) of the other recipe. */
static vocis_status check_voice_handle(vocis_model *m, const vocis_voice *v) {
    char what[300];
    snprintf(what, sizeof what, "the voice%s%s%s", v->src.name[0] ? " (" : "", v->src.name, v->src.name[0] ? ")" : "");
    return check_voice_kind(m, what, v->src.model_kind);
}

static vocis_status load_conds_file(vocis_model *m, const char *path, const vx_voice_file *vf, vocis_voice **out) {
    vx_err *err = vx_api_err(m);
    if (vf->kind == VX_VOICE_RT_PT || vf->kind == VX_VOICE_RT_FILE)
        return vx_fail(err, VOCIS_E_INVALID, "%s %s; Chatterbox takes a recording, a .voice file or a conds.pt", path,
                       vx_api_voice_file_what(vf->kind));
    VX_TRY(check_voice_kind(m, path, vf->model_kind));
    vocis_voice *v = calloc(1, sizeof *v);
    if (!v) return vx_fail(err, VOCIS_E_NOMEM, "out of memory");
    const int pt = vf->kind == VX_VOICE_PT || vf->kind == VX_VOICE_CONDS_PT;
    vocis_status st = pt ? vx_cb_conds_load_pt(path, &v->conds, err) : vx_cb_conds_load_safetensors(path, &v->conds, err);
    if (st) {
        free(v);
        return st;
    }
    snprintf(v->src.model_kind, sizeof v->src.model_kind, "%s", vf->model_kind);
    *out = v;
    return VOCIS_OK;
}

vocis_status vocis_voice_load(vocis_model *m, const char *path, vocis_voice **out) {
    *out = NULL;
    vx_err_clear(vx_api_err(m));
    if (m->rt) return vx_api_rt_voice_load(m, path, out); /* voice presets (vocis_rt.c) */
    if (!path && m->vv)
        return vx_fail(vx_api_err(m), VOCIS_E_ARG, "VibeVoice has no built-in voice: give a voice recording");
    char builtin[4200];
    if (!path) {
        snprintf(builtin, sizeof builtin, "%s/conds.pt", m->dir);
        path = builtin;
    }
    const vx_voice_file vf = vx_api_voice_file(path, vx_api_err(m));
    if (vf.kind == VX_VOICE_MISSING) return vx_api_err(m)->code;
    const int audio = vf.kind == VX_VOICE_AUDIO || vf.kind == VX_VOICE_OTHER;
    if (m->vv) { /* VibeVoice voices are recordings, read when speaking */
        if (!audio)
            return vx_fail(vx_api_err(m), VOCIS_E_ARG, "%s: VibeVoice takes a voice recording, not a voice file", path);
        vocis_voice *v = calloc(1, sizeof *v);
        if (!v || !(v->audio_path = strdup(path))) {
            free(v);
            return vx_fail(vx_api_err(m), VOCIS_E_NOMEM, "out of memory");
        }
        *out = v;
        return VOCIS_OK;
    }
    if (audio) return vocis_voice_clone(m, path, NULL, out);
    return load_conds_file(m, path, &vf, out);
}

void vocis_voice_free(vocis_voice *v) {
    if (!v) return;
    free(v->audio_path);
    vx_api_rt_voice_free(v);
    vx_cb_conds_free(&v->conds);
    free(v);
}

void vocis_t3_options_default(vocis_t3_options *o) {
    memset(o, 0, sizeof *o);
    o->temperature = 0.8f;
    o->cfg_weight = 0.5f;
    o->exaggeration = NAN;
    o->min_p = 0.05f;
    o->top_p = NAN; /* the model's: English 1.0 (off), Turbo 0.95 */
    o->top_k = -1;  /* the model's: Turbo 1000 */
    o->repetition_penalty = 1.2f;
    o->max_new_tokens = 1000;
    o->seed = -1;
}

/* The T3 view of a voice, with the exaggeration override (NaN = keep the
 * voice's); checks the speaker width against this T3. */
static vocis_status t3_cond_of(vocis_model *m, const vx_cb_conds *c, float exaggeration, vx_t3_cond *out) {
    if (c->no_t3)
        return vx_fail(vx_api_err(m), VOCIS_E_ARG, "the voice has only the S3Gen half (cloned by a voice-conversion folder)");
    if (c->speaker_emb.n != (size_t)m->t3.speaker_dim)
        return vx_fail(vx_api_err(m), VOCIS_E_SHAPE, "voice speaker_emb has %zu values, this T3 expects %d",
                       c->speaker_emb.n, m->t3.speaker_dim);
    *out = (vx_t3_cond){
        .speaker_emb = c->speaker_emb.data,
        .prompt_tokens = c->cond_prompt_speech_tokens.data,
        .n_prompt = (int)c->cond_prompt_speech_tokens.n,
        .emotion_adv = isnan(exaggeration) ? c->emotion_adv.data[0] : exaggeration,
    };
    return VOCIS_OK;
}

static vx_t3_sampling t3_sampling_of(const vocis_t3_options *o, int (*on_token)(void *, int, int32_t), void *user) {
    return (vx_t3_sampling){o->temperature,    o->cfg_weight, o->min_p,  isnan(o->top_p) ? 1.0f : o->top_p, o->repetition_penalty,
                            o->max_new_tokens, o->greedy,     on_token, user, o->speculate};
}

void vx_api_seed_rng(vx_rng *rng, const vocis_t3_options *o) {
    vx_rng_seed(rng, o->seed >= 0 ? (uint64_t)o->seed : (uint64_t)vx_draw_seed());
}

vocis_status vocis_t3_generate(vocis_model *m, const vocis_voice *voice, const char *text,
                               const vocis_t3_options *opts, int32_t **tokens, size_t *n) {
    *tokens = NULL;
    *n = 0;
    vx_err_clear(vx_api_err(m));
    if (!m->has_t3 && !m->turbo) return vx_fail(vx_api_err(m), VOCIS_E_UNSUPPORTED, "this model has no T3 stage");
    VX_TRY(check_text(m, text));
    vocis_t3_options o;
    if (opts) o = *opts;
    else vocis_t3_options_default(&o);

    vocis_voice *own = NULL;
    if (!voice) {
        VX_TRY(vocis_voice_load(m, NULL, &own));
        voice = own;
    }
    VX_TRY(check_voice_handle(m, voice));
    if (m->turbo) {
        vocis_status ts = vx_api_turbo_t3_generate(m, voice, text, &o, tokens, n);
        vocis_voice_free(own);
        return ts;
    }
    vx_t3_cond cond;
    int32_t *ids = NULL;
    size_t nids = 0;
    vocis_status st = t3_cond_of(m, &voice->conds, o.exaggeration, &cond);
    if (st == VOCIS_OK) st = vocis_tokenize_language(m, text, o.language, &ids, &nids);
    if (st == VOCIS_OK) {
        vx_t3_sampling s = t3_sampling_of(&o, o.on_token, o.user);
        vx_rng rng;
        vx_api_seed_rng(&rng, &o);
        int nt = 0;
        st = vx_api_t3_generate(m, &cond, ids, (int)nids, &s, &rng, tokens, &nt, vx_api_err(m));
        *n = (size_t)nt;
    }
    free(ids);
    vocis_voice_free(own);
    return st;
}

vocis_status vocis_voice_save(vocis_model *m, const vocis_voice *v, const char *path) {
    vx_err_clear(vx_api_err(m));
    if (!v || !path) return vx_fail(vx_api_err(m), VOCIS_E_ARG, "no voice or path given");
    if (v->rt_preset) return vx_api_rt_voice_save(m, v, path);
    char secs[64], used[64], rate[32], ex[64];
    const char *meta[16];
    int k = 0;
    meta[k++] = "vocis_version";
    meta[k++] = VOCIS_VERSION;
    const char *made_by = v->src.model_kind[0] ? v->src.model_kind : vocis_model_kind(m);
    if (made_by[0]) {
        meta[k++] = "vocis_model_kind";
        meta[k++] = made_by;
    }
    if (v->src.name[0]) {
        snprintf(secs, sizeof secs, "%.3f", v->src.seconds);
        snprintf(used, sizeof used, "%.3f", v->src.used_seconds);
        snprintf(rate, sizeof rate, "%d", v->src.sample_rate);
        snprintf(ex, sizeof ex, "%g", (double)v->conds.emotion_adv.data[0]);
        meta[k++] = "source";
        meta[k++] = v->src.name;
        meta[k++] = "source_seconds";
        meta[k++] = secs;
        meta[k++] = "used_seconds";
        meta[k++] = used;
        meta[k++] = "source_sample_rate";
        meta[k++] = rate;
        meta[k++] = "exaggeration";
        meta[k++] = ex;
    }
    meta[k] = NULL;
    return vx_cb_conds_save_safetensors(&v->conds, path, meta, vx_api_err(m));
}

/* ---- voice cloning ---- */

void vocis_clone_options_default(vocis_clone_options *o) { o->exaggeration = 0.5f; }

const char *vocis_voice_warning(const vocis_voice *v) { return v ? v->src.warning : ""; }

/* Lazy loads may race when several threads speak with one model: one lock serialises them. */
static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;

static vocis_status load_cloner_locked(vocis_model *m) {
    if (m->has_cloner) return VOCIS_OK;
    if (!m->has_t3 && !m->is_vc && !m->turbo)
        return vx_fail(vx_api_err(m), VOCIS_E_ARG, "voice cloning needs a Chatterbox model folder");
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", m->dir, m->turbo ? "s3gen_meanflow.safetensors" : "s3gen.safetensors");
    if (!m->s3gen_w) {
        VX_TRY(vx_cb_weights_open_path(path, &m->s3gen_w, vx_api_err(m))); /* or s3gen.pt */
        vx_weights_set_precision(m->s3gen_w, m->precision_flow);
    }
    VX_TRY(vx_cb_cloner_load(&m->cloner, m->dir, m->s3gen_w, &m->cfg, m->is_vc, vx_api_err(m)));
    if (m->turbo) m->cloner.t3_seconds = VX_TURBO_T3_SECONDS; /* ENC_COND_LEN 15 s */
    m->has_cloner = 1;
    return VOCIS_OK;
}

static const char *base_name(const char *path) {
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

/* Clone 24 kHz samples into a new voice handle. */
static vocis_status clone_24k(vocis_model *m, const float *wav, int64_t n, const voice_source *src, float exaggeration,
                              vocis_voice **out) {
    VX_TRY(vx_api_load_cloner(m));
    float *norm = NULL;
    if (m->turbo) { /* ChatterboxTurboTTS.prepare_conditionals: > 5 s, then loudness to -27 LUFS */
        if (!((double)n / VX_CLONE_SR > VX_TURBO_MIN_SECONDS))
            return vx_fail(vx_api_err(m), VOCIS_E_ARG, "reference is %.2f s long; Chatterbox-Turbo/Nano need more than %.0f s",
                           (double)n / VX_CLONE_SR, VX_TURBO_MIN_SECONDS);
        if (!(norm = malloc(sizeof(float) * (size_t)n))) return vx_fail(vx_api_err(m), VOCIS_E_NOMEM, "out of memory");
        memcpy(norm, wav, sizeof(float) * (size_t)n);
        vx_turbo_norm_loudness(norm, n, VX_CLONE_SR, VX_TURBO_TARGET_LUFS);
        wav = norm;
    }
    vocis_voice *v = calloc(1, sizeof *v);
    if (!v) {
        free(norm);
        return vx_fail(vx_api_err(m), VOCIS_E_NOMEM, "out of memory");
    }
    v->src = *src;
    snprintf(v->src.model_kind, sizeof v->src.model_kind, "%s", vocis_model_kind(m));
    vocis_status st = vx_cb_clone(&m->cloner, wav, n, exaggeration, &v->conds, NULL, v->src.warning,
                                  sizeof v->src.warning, m->threads, vx_api_err(m));
    free(norm);
    if (st) {
        free(v);
        return st;
    }
    *out = v;
    return VOCIS_OK;
}

static void join_warning(voice_source *src, const char *more) {
    size_t len = strlen(src->warning);
    snprintf(src->warning + len, sizeof src->warning - len, "%s%s", len ? "; " : "", more);
}

vocis_status vocis_voice_clone(vocis_model *m, const char *audio_path, const vocis_clone_options *opts,
                               vocis_voice **out) {
    *out = NULL;
    vx_err_clear(vx_api_err(m));
    vocis_clone_options o;
    vocis_clone_options_default(&o);
    if (opts) o = *opts;
    if (!audio_path) return vx_fail(vx_api_err(m), VOCIS_E_ARG, "no audio file given");
    struct stat sb;
    if (stat(audio_path, &sb) != 0)
        return vx_fail(vx_api_err(m), VOCIS_E_IO, "%s: cannot open audio file: %s", audio_path, strerror(errno));
    const int64_t mtime_ns = (int64_t)sb.st_mtim.tv_sec * 1000000000 + sb.st_mtim.tv_nsec;

    vocis_status st = VOCIS_OK;
    pthread_mutex_lock(&m->clone_lock);
    clone_entry *hit = NULL;
    for (int i = 0; i < m->nclones && !hit; i++) {
        clone_entry *e = &m->clones[i];
        if (!strcmp(e->path, audio_path) && e->size == (int64_t)sb.st_size && e->mtime_ns == mtime_ns) hit = e;
    }
    if (hit) {
        vocis_voice *v = calloc(1, sizeof *v);
        if (!v) st = vx_fail(vx_api_err(m), VOCIS_E_NOMEM, "out of memory");
        if (!st) st = vx_cb_conds_copy(&v->conds, &hit->conds, vx_api_err(m));
        if (!st) {
            v->src = hit->src;
            v->conds.emotion_adv.data[0] = o.exaggeration;
            *out = v;
        } else {
            free(v);
        }
        pthread_mutex_unlock(&m->clone_lock);
        return st;
    }
    pthread_mutex_unlock(&m->clone_lock);

    float *wav = NULL;
    int64_t n = 0;
    vx_audio_info info;
    VX_TRY(vx_audio_read_head(audio_path, VX_CLONE_SR, VX_CLONE_MAX_SECONDS, &wav, &n, &info, vx_api_err(m)));
    voice_source src = {0};
    snprintf(src.name, sizeof src.name, "%s", base_name(audio_path));
    src.used_seconds = (double)n / VX_CLONE_SR;
    src.seconds = info.truncated && info.file_frames > 0 ? (double)info.file_frames / info.sample_rate
                                                         : src.used_seconds;
    src.sample_rate = info.sample_rate;
    st = clone_24k(m, wav, n, &src, o.exaggeration, out);
    free(wav);
    if (st) return vx_errctx(vx_api_err(m), "%s", audio_path);
    if (info.truncated) {
        char w[128];
        snprintf(w, sizeof w, "only the first %.0f s of the recording were used", VX_CLONE_MAX_SECONDS);
        join_warning(&(*out)->src, w);
    }

    pthread_mutex_lock(&m->clone_lock);
    if (!m->clones) m->clones = calloc(CLONE_CACHE_MAX, sizeof *m->clones);
    if (m->clones) {
        /* the oldest entry makes room */
        if (m->nclones == CLONE_CACHE_MAX) {
            vx_cb_conds_free(&m->clones[0].conds);
            memmove(m->clones, m->clones + 1, sizeof *m->clones * (CLONE_CACHE_MAX - 1));
            m->nclones--;
        }
        clone_entry *e = &m->clones[m->nclones];
        memset(e, 0, sizeof *e);
        vx_err ignore = {0};
        if (strlen(audio_path) < sizeof e->path && vx_cb_conds_copy(&e->conds, &(*out)->conds, &ignore) == VOCIS_OK) {
            snprintf(e->path, sizeof e->path, "%s", audio_path);
            e->size = (int64_t)sb.st_size;
            e->mtime_ns = mtime_ns;
            e->src = (*out)->src;
            m->nclones++;
        }
    }
    pthread_mutex_unlock(&m->clone_lock);
    return VOCIS_OK;
}

vocis_status vocis_voice_clone_samples(vocis_model *m, const float *samples, size_t n, int sample_rate,
                                       const vocis_clone_options *opts, vocis_voice **out) {
    *out = NULL;
    vx_err_clear(vx_api_err(m));
    vocis_clone_options o;
    vocis_clone_options_default(&o);
    if (opts) o = *opts;
    if (!samples || n == 0) return vx_fail(vx_api_err(m), VOCIS_E_ARG, "no samples given");
    if (sample_rate < VX_AUDIO_MIN_RATE || sample_rate > VX_AUDIO_MAX_RATE)
        return vx_fail(vx_api_err(m), VOCIS_E_ARG, "sample rate %d Hz is implausible", sample_rate);
    for (size_t i = 0; i < n; i++)
        if (!isfinite(samples[i])) return vx_fail(vx_api_err(m), VOCIS_E_ARG, "sample %zu is not finite", i);
    /* as vocis_voice_clone: at most the first minute (+ 1 s of resampler look-ahead) */
    const size_t cap = (size_t)((VX_CLONE_MAX_SECONDS + 1.0) * sample_rate), n_given = n;
    const int truncated = n > cap;
    if (truncated) n = cap;
    float *wav = NULL;
    int64_t n24 = 0;
    VX_TRY(vx_audio_resample(samples, (int64_t)n, sample_rate, VX_CLONE_SR, &wav, &n24, vx_api_err(m)));
    if (truncated && n24 > (int64_t)(VX_CLONE_MAX_SECONDS * VX_CLONE_SR)) n24 = (int64_t)(VX_CLONE_MAX_SECONDS * VX_CLONE_SR);
    voice_source src = {0};
    snprintf(src.name, sizeof src.name, "(samples)");
    src.seconds = (double)n_given / sample_rate;
    src.used_seconds = (double)n24 / VX_CLONE_SR;
    src.sample_rate = sample_rate;
    vocis_status st = clone_24k(m, wav, n24, &src, o.exaggeration, out);
    free(wav);
    if (!st && truncated) join_warning(&(*out)->src, "only the first minute of the samples was used");
    return st;
}

/* ---- speak ---- */

void vocis_speak_options_default(vocis_speak_options *o) {
    memset(o, 0, sizeof *o);
    vocis_t3_options_default(&o->t3);
    o->vv.cfg_scale = 1.3f;
    o->vv.diffusion_steps = 10;
    o->cfm_steps = 10;
    o->max_chunk_chars = 300;
    o->crossfade_ms = 40.0f;
}

void vx_api_warn(const vocis_speak_options *o, const char *fmt, ...) {
    if (!o || !o->on_warning) return;
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    o->on_warning(o->user, msg);
}

void vx_api_warn_cb(void *opts, const char *msg) { vx_api_warn(opts, "%s", msg); }

void vocis_audio_free(vocis_audio *a) {
    if (!a) return;
    free(a->samples);
    memset(a, 0, sizeof *a);
}

vocis_status vx_api_load_cloner(vocis_model *m) {
    pthread_mutex_lock(&load_lock);
    vocis_status st = load_cloner_locked(m);
    pthread_mutex_unlock(&load_lock);
    return st;
}

static vocis_status load_s3gen_locked(vocis_model *m) {
    if (m->flow && m->hift) return VOCIS_OK;
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", m->dir, m->turbo ? "s3gen_meanflow.safetensors" : "s3gen.safetensors");
    if (!m->s3gen_w) {
        VX_TRY(vx_cb_weights_open_path(path, &m->s3gen_w, vx_api_err(m))); /* or s3gen.pt */
        vx_weights_set_precision(m->s3gen_w, m->precision_flow);
    }
    if (!m->flow) VX_TRY(vx_s3gen_flow_load(m->s3gen_w, &m->cfg, &m->flow, vx_api_err(m)));
    if (!m->hift) VX_TRY(vx_hift_load(m->s3gen_w, NULL, m->precision_vocoder, &m->hift, vx_api_err(m)));
    return VOCIS_OK;
}

vocis_status vx_api_load_s3gen(vocis_model *m) {
    pthread_mutex_lock(&load_lock);
    vocis_status st = load_s3gen_locked(m);
    pthread_mutex_unlock(&load_lock);
    return st;
}

typedef struct speak_ctx {
    vocis_model *m;
    const vocis_speak_options *o;
    vocis_progress p;
    int speech_before; /* speech tokens of the chunks before this one */
    vx_tok_unknown unknown; /* over all chunks; warned about as they appear */
    vx_join *join;          /* the audio of the chunks so far */
    struct vx_s3gen_stream *stream; /* stream_tokens: this chunk's streamed S3Gen, fed per T3 token */
    vx_err stream_err;      /* its failure inside the T3 callback (which may run on another thread) */
} speak_ctx;

/* Tokenizes a chunk, warning about characters that the vocabulary lacks (new ones only). */
static vocis_status tokenize_chunk(speak_ctx *c, const char *text, int32_t **ids, size_t *n) {
    const int before = c->unknown.n;
    VX_TRY(tokenize(c->m, text, c->o->t3.language, ids, n, &c->unknown));
    if (c->unknown.n > before && before < VX_TOK_UNKNOWN_KEEP) {
        char msg[512];
        vx_tok_unknown_message(c->m->tok, &c->unknown, before, msg, sizeof msg);
        vx_api_warn(c->o, "%s", msg);
    }
    return VOCIS_OK;
}

static int report(speak_ctx *c, const char *stage, int step, int n_steps) {
    if (!c->o->on_progress) return 0;
    c->p.stage = stage;
    c->p.step = step;
    c->p.n_steps = n_steps;
    return c->o->on_progress(c->o->user, &c->p);
}

static int on_t3_token(void *user, int step, int32_t tok) {
    speak_ctx *c = user;
    c->p.speech_tokens = c->speech_before + step + 1;
    if (c->stream && vx_s3gen_stream_push(c->stream, tok, &c->stream_err)) return 1;
    return report(c, "t3", step + 1, c->o->t3.max_new_tokens);
}

/* A T3 that stopped for the stream's sake reports the stream's error. */
static vocis_status t3_status(speak_ctx *c, vocis_status st) {
    const vx_err *why = c->join->failed.code ? &c->join->failed : &c->stream_err; /* the sink's own error first */
    if (!st || !why->code) return st;
    *vx_api_err(c->m) = *why;
    return why->code;
}

/* stream_tokens: T3 has drawn all tokens (n of them valid); the stream emits the rest. */
static vocis_status finish_stream(speak_ctx *c, const char *text, int n) {
    vx_err *err = vx_api_err(c->m);
    if (n == 0 && !c->m->turbo) /* Turbo / Nano still speak their 3 silence tokens */
        return vx_fail(err, VOCIS_E_ARG, "T3 produced no speech tokens for \"%.60s\"", text);
    if (report(c, "s3gen", 0, 1)) return vx_fail(err, VOCIS_E_CANCELLED, "synthesis cancelled");
    vocis_status st = vx_api_stream_end(c->m, c->stream, err);
    if (st == VOCIS_E_CANCELLED && c->join->failed.code) {
        *err = c->join->failed;
        st = err->code;
    }
    if (!st && (report(c, "s3gen", 1, 1) || report(c, "hift", 0, 1) || report(c, "hift", 1, 1)))
        st = vx_fail(err, VOCIS_E_CANCELLED, "synthesis cancelled");
    return st;
}

/* One chunk of text -> trimmed/faded 24 kHz audio (upstream's generate()). */
static vocis_status speak_chunk(speak_ctx *c, const vx_cb_conds *v, const char *text, vx_rng *rng, float **wav,
                                int64_t *nwav) {
    vocis_model *m = c->m;
    vx_err *err = vx_api_err(m);
    const vocis_t3_options *o = &c->o->t3;
    c->speech_before = c->p.speech_tokens;
    if (m->turbo) { /* one MeanFlow pass: 2 steps unless --cfm-steps asks for another count than the English 10 */
        int32_t *ids;
        size_t nids;
        VX_TRY(vx_api_turbo_tokenize(m, text, &ids, &nids));
        c->p.text_tokens += (int)nids; /* counted before T3 runs: the chunk's T3 progress reports are its last */
        vocis_status st;
        if (c->stream) {
            int32_t *toks = NULL;
            int nt = 0;
            st = t3_status(c, vx_api_turbo_generate_ids(m, v, ids, nids, o, on_t3_token, c, rng, &toks, &nt));
            free(toks);
            if (!st) st = finish_stream(c, text, (int)vx_s3gen_stream_tokens(c->stream));
        } else {
            st = vx_api_turbo_speak_chunk(m, v, ids, nids, o, c->o->cfm_steps == 10 ? 2 : c->o->cfm_steps,
                                          on_t3_token, c, rng, wav, nwav);
        }
        free(ids);
        return st;
    }
    int32_t *ids = NULL, *toks = NULL;
    size_t nids = 0;
    int nt = 0;
    int64_t *toks64 = NULL;
    float *mel = NULL;
    int64_t tm = 0;
    vx_t3_cond cond;
    vx_t3_sampling s = t3_sampling_of(o, on_t3_token, c);
    vocis_status st = t3_cond_of(m, v, o->exaggeration, &cond);
    if (st == VOCIS_OK) st = tokenize_chunk(c, text, &ids, &nids);
    if (st) goto done;
    c->p.text_tokens += (int)nids;
    if ((st = t3_status(c, vx_api_t3_generate(m, &cond, ids, (int)nids, &s, rng, &toks, &nt, err)))) goto done;
    if (c->stream) {
        st = finish_stream(c, text, (int)vx_s3gen_stream_tokens(c->stream));
        goto done;
    }
    nt = m->mtl ? vx_api_mtl_clean_tokens(m, toks, nt) : vx_t3_clean_tokens(&m->t3, toks, nt);
    if (nt == 0) {
        st = vx_fail(err, VOCIS_E_ARG, "T3 produced no speech tokens for \"%.60s\"", text);
        goto done;
    }
    toks64 = malloc(sizeof(int64_t) * (size_t)nt);
    if (!toks64) {
        st = vx_fail(err, VOCIS_E_NOMEM, "out of memory");
        goto done;
    }
    for (int i = 0; i < nt; i++) toks64[i] = toks[i];
    if (report(c, "s3gen", 0, 1)) goto cancelled;
    const int64_t np = v->prompt_token_len, tp = v->prompt_feat.shape[1];
    if ((st = vx_s3gen_flow_infer(m->flow, toks64, nt, v->prompt_token.data, np, v->prompt_feat.data, tp,
                                  v->embedding.data, c->o->cfm_steps, rng, NULL, &mel, &tm, m->threads, err)))
        goto done;
    if (report(c, "s3gen", 1, 1) || report(c, "hift", 0, 1)) goto cancelled;
    if ((st = vx_hift_vocode(m->hift, mel, tm, rng, NULL, NULL, wav, nwav, NULL, NULL, m->threads, err))) goto done;
    vx_trim_fade(*wav, *nwav);
    if (m->mtl) *nwav = vx_api_mtl_keep_samples(nt, *nwav); /* the last token's audio is dropped */
    if (report(c, "hift", 1, 1)) goto cancelled;
    goto done;
cancelled:
    st = vx_fail(err, VOCIS_E_CANCELLED, "synthesis cancelled");
done:
    if (st) { /* a chunk that fails (or is cancelled after HiFT) hands no audio back */
        free(*wav);
        *wav = NULL;
        *nwav = 0;
    }
    free(ids), free(toks), free(toks64), free(mel);
    return st;
}

/* Chunk k's cue: from where the previous one ended (the log's last cue) to end; into the log (a
 * checkpoint keeps it) and to on_cue. */
static vocis_status chunk_cue(const vocis_speak_options *o, vx_cue_log *log, int k, const char *text, int64_t end,
                              vx_err *err) {
    const int64_t start = log->n ? log->v[log->n - 1].end : 0;
    if (end < start) end = start;
    const vocis_cue c = {k, text, -1, start, end, VX_HIFT_SR, 1};
    VX_TRY(vx_cue_log_add(log, &c, k, err));
    return o->on_cue && o->on_cue(o->user, &c) ? vx_fail(err, VOCIS_E_CANCELLED, "synthesis cancelled") : VOCIS_OK;
}

/* out NULL: the audio goes to opts->on_audio only; Chatterbox then holds no more than a chunk's
 * (a book's audio is never in memory at once). */
vocis_status vocis_speak(vocis_model *m, const vocis_voice *voice, const char *text,
                         const vocis_speak_options *opts, vocis_audio *out) {
    if (out) memset(out, 0, sizeof *out);
    vx_err_clear(vx_api_err(m));
    vx_err *err = vx_api_err(m);
    if (!m->vv && !m->rt && !m->has_t3 && !m->turbo)
        return vx_fail(err, VOCIS_E_UNSUPPORTED, "this model cannot speak (no Chatterbox T3)");
    VX_TRY(check_text(m, text));
    if (m->vv || m->rt) { /* these keep their audio anyway: out NULL only drops it at the end */
        if (m->rt) VX_TRY(vx_api_refuse_checkpoint(m, opts, "VibeVoice-Realtime"));
        vocis_audio kept;
        vocis_status st = m->vv ? vx_api_vv_speak(m, voice, text, opts, out ? out : &kept)
                                : vx_api_rt_speak(m, voice, text, opts, out ? out : &kept);
        if (!out) vocis_audio_free(&kept);
        return st;
    }
    vocis_speak_options o;
    if (opts) o = *opts;
    else vocis_speak_options_default(&o);
    if (o.cfm_steps < 1 || o.cfm_steps > 1000) return vx_fail(err, VOCIS_E_ARG, "cfm steps must be in [1, 1000]");
    if (!(o.crossfade_ms >= 0) || o.crossfade_ms > 1000) return vx_fail(err, VOCIS_E_ARG, "crossfade must be in [0, 1000] ms");
    if (o.stream_tokens < VOCIS_STREAM_AUTO || o.stream_tokens > 1000)
        return vx_fail(err, VOCIS_E_ARG, "stream tokens must be in [1, 1000] (0 = off, -1 = the model's default)");
    VX_TRY(vx_api_load_s3gen(m));

    vocis_voice *own = NULL;
    if (!voice) {
        VX_TRY(vocis_voice_load(m, NULL, &own));
        voice = own;
    }
    const vx_cb_conds *v = &voice->conds;
    vx_chunks chunks = {0};
    vx_cue_log cues = {0}; /* the cues so far: each starts where the last ended */
    vx_join join;
    vx_join_init(&join, (size_t)(o.crossfade_ms * 1e-3f * VX_HIFT_SR), out != NULL, &o);
    vocis_status st = check_voice_handle(m, voice);
    if (st) goto done;
    if (!v->has_gen) {
        st = vx_fail(err, VOCIS_E_ARG, "the voice has no S3Gen reference (prompt_token, prompt_feat, embedding): "
                                       "it can drive T3 but not speak");
        goto done;
    }
    if ((st = vx_split_text(text, o.max_chunk_chars > 0 ? (size_t)o.max_chunk_chars : 0, &chunks, err))) goto done;
    if (chunks.n == 0) {
        st = vx_fail(err, VOCIS_E_ARG, "text is empty");
        goto done;
    }
    vx_rng rng;
    vx_api_seed_rng(&rng, &o.t3);
    speak_ctx c = {.m = m, .o = &o, .p = {.n_chunks = chunks.n}, .join = &join};
    if (o.stream_tokens && o.checkpoint) {
        st = vx_fail(err, VOCIS_E_ARG, "streamed synthesis (stream_tokens) cannot be checkpointed");
        goto done;
    }
    vx_job_ckpt jc;
    vx_cb_job_state js = {.n_chunks = chunks.n, .cues = &cues};
    if ((st = vx_api_cb_job_ckpt_init(m, v, text, &o, out != NULL, &jc))) goto done;
    if ((st = vx_api_cb_job_ckpt_resume(m, &jc, chunks.n, &js, &join.acc))) goto done;
    if (join.acc) { /* continue where the checkpoint was taken: its random stream, tail and counters */
        rng = js.rng;
        join.nacc = js.ntail;
        join.total = (size_t)js.total;
        c.p.text_tokens = js.text_tokens;
        c.p.speech_tokens = js.speech_tokens;
        /* the cues made before the checkpoint first, so that the caller's subtitles are whole */
        if ((st = vx_cue_log_replay(&cues, (const char *const *)chunks.text, VX_HIFT_SR, o.on_cue, o.user, err)))
            goto done;
    }
    for (int k = js.next_chunk; k < chunks.n; k++) {
        c.p.chunk = k;
        vx_join_begin(&join, k, k + 1 == chunks.n);
        if (o.stream_tokens && (st = vx_api_stream_begin(m, v, &o, &rng, &join, &c.stream))) goto done;
        float *wav = NULL;
        int64_t nw = 0;
        /* one sentence chunk at a time; single-chunk text takes exactly upstream's path */
        st = speak_chunk(&c, v, chunks.n == 1 ? text : chunks.text[k], &rng, &wav, &nw);
        vx_s3gen_stream_free(c.stream);
        c.stream = NULL;
        if (!st && !o.stream_tokens) st = vx_join_add(&join, wav, (size_t)nw, err);
        free(wav);
        if (st) goto done;
        /* its cue ends in the middle of the crossfade the next chunk will make over the held tail */
        const size_t held = join.nacc - join.emitted, tail = k + 1 < chunks.n ? (held < join.xfade ? held : join.xfade) : 0;
        if ((st = chunk_cue(&o, &cues, k, chunks.n == 1 ? text : chunks.text[k], (int64_t)(join.total - tail / 2), err)))
            goto done;
        /* samples given to on_audio: all made but those held back */
        js.written = (int64_t)(join.total - (join.nacc - join.emitted));
        js.next_chunk = k + 1, js.rng = rng, js.tail = join.acc, js.ntail = join.nacc, js.total = (int64_t)join.total;
        js.text_tokens = c.p.text_tokens, js.speech_tokens = c.p.speech_tokens;
        if ((st = vx_api_cb_job_ckpt_step(m, &jc, &js))) goto done;
    }
    if (join.total == 0) {
        st = vx_fail(err, VOCIS_E_INVALID, "the synthesis produced no audio (try another seed or a longer text)");
        goto done;
    }
    if (out) {
        out->samples = join.acc;
        out->n = join.nacc;
        out->sample_rate = VX_HIFT_SR;
        join.acc = NULL;
    }
done:
    vx_join_free(&join);
    vx_cue_log_free(&cues);
    vx_chunks_free(&chunks);
    vocis_voice_free(own);
    return st;
}

vocis_status vocis_audio_save(vocis_model *m, const vocis_audio *a, const char *path, const char *format) {
    vx_err_clear(vx_api_err(m));
    vx_audio_fmt fmt = VX_AUDIO_WAV16;
    if (format && vx_audio_fmt_parse(format, &fmt) != 0)
        return vx_fail(vx_api_err(m), VOCIS_E_ARG, "unknown audio format '%s' (wav, f32, flac, ogg, mp3, opus)",
                       format);
    if (!format) vx_audio_fmt_from_path(path, &fmt); /* else WAV */
    return vx_audio_write(path, fmt, a->sample_rate, a->samples, (int64_t)a->n, vx_api_err(m));
}
