/* The Chatterbox family's API side, shared by its variants: the English
 * table (ChatterboxTTS), voices (conds.pt, .voice files, cloning with a cache
 * of recent recordings), T3 tokens, and speech in sentence chunks (T3, S3Gen,
 * HiFT, or the variant's own chunk) that Multilingual, Turbo and Nano speak
 * through too (vocis_mtl.c, vocis_turbo.c). */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "api/family.h"
#include "api/internal.h"
#include "api/job_checkpoint.h"
#include "base/rng.h"
#include "io/audio.h"
#include "models/chatterbox/clone.h"
#include "models/chatterbox/conds.h"
#include "models/chatterbox/hift.h"
#include "models/chatterbox/mtl.h"
#include "models/chatterbox/s3gen_flow.h"
#include "models/chatterbox/s3gen_stream.h"
#include "models/chatterbox/t3.h"
#include "models/chatterbox/turbo.h"
#include "nn/prefix_cache.h"
#include "text/chatterbox_text.h"
#include "text/sentences.h"
#include "text/tokenizer.h"

static int detect(const char *dir) { return vx_api_file_exists(dir, "t3_cfg.safetensors"); }

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

/* What every Chatterbox variant may have made: T3 (Llama), tokenizer, S3Gen, HiFT, cloner,
 * the clone cache. */
void vx_api_cb_close(vocis_model *m) {
    vx_api_engine_free(m);
    if (m->has_t3) vx_t3_free(&m->t3);
    vx_s3gen_flow_free(m->flow);
    vx_hift_free(m->hift);
    if (m->has_cloner) vx_cb_cloner_free(&m->cloner);
    for (int i = 0; i < m->nclones; i++) vx_cb_conds_free(&m->clones[i].conds);
    free(m->clones);
    vx_weights_close(m->s3gen_w);
    vx_tokenizer_free(m->tok);
}

void vx_api_cb_kv_bf16(vocis_model *m) { vx_tf_set_kv(&m->t3.tf, VX_KV_BF16); }
                       
                       vocis_status vx_api_cb_set_voice_cache(vocis_model *m, size_t max_bytes) {
    return vx_t3_set_voice_cache(&m->t3, max_bytes, vx_api_err(m));
}

struct vx_prefix_cache *vx_api_cb_voice_cache(const vocis_model *m) { return m->t3.prefix_cache; }

static vocis_status tokenize(vocis_model *m, const char *text, const char *language, int32_t **ids, size_t *n,
                             vx_tok_unknown *unknown) {
    (void)language; /* checked by the API: English only */
    int32_t *raw;
    size_t nraw;
    VX_TRY(vx_cb_text_to_ids(m->tok, text, &raw, &nraw, unknown, vx_api_err(m)));
    return vx_api_pad_text_ids(m, raw, nraw, ids, n);
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
    const char *kind = vx_family_kind(m);
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

/* A recording is cloned; a voice file or conds.pt loaded; NULL is the folder's conds.pt. */
vocis_status vx_api_cb_voice_load(vocis_model *m, const char *path, vocis_voice **out) {
    char builtin[4200];
    if (!path) {
        snprintf(builtin, sizeof builtin, "%s/conds.pt", m->dir);
        path = builtin;
    }
    const vx_voice_file vf = vx_api_voice_file(path, vx_api_err(m));
    if (vf.kind == VX_VOICE_MISSING) return vx_api_err(m)->code;
    if (vf.kind == VX_VOICE_AUDIO || vf.kind == VX_VOICE_OTHER) return vx_api_cb_clone(m, path, NULL, out);
    return load_conds_file(m, path, &vf, out);
}

/* The voice a T3 / speak call uses: the given one (of this recipe) or the folder's built-in
 * (*own, freed by the caller). */
vocis_status vx_api_cb_voice_or_builtin(vocis_model *m, const vocis_voice **voice, vocis_voice **own) {
    *own = NULL;
    if (!*voice) {
        VX_TRY(vx_api_cb_voice_load(m, NULL, own));
        *voice = *own;
    }
    return check_voice_handle(m, *voice);
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

/* T3's speech tokens for a text (the API has checked the text and filled the options). */
vocis_status vx_api_cb_t3_generate(vocis_model *m, const vocis_voice *voice, const char *text, const vocis_t3_options *o,
                                   int32_t **tokens, size_t *n) {
    vocis_voice *own;
    VX_TRY(vx_api_cb_voice_or_builtin(m, &voice, &own));
    vx_t3_cond cond;
    int32_t *ids = NULL;
    size_t nids = 0;
    vocis_status st = t3_cond_of(m, &voice->conds, o->exaggeration, &cond);
    if (st == VOCIS_OK) st = m->family->tokenize(m, text, o->language, &ids, &nids, NULL);
    if (st == VOCIS_OK) {
        vx_t3_sampling s = t3_sampling_of(o, o->on_token, o->user);
        vx_rng rng;
        vx_api_seed_rng(&rng, o);
        int nt = 0;
        st = vx_api_t3_generate(m, &cond, ids, (int)nids, &s, &rng, tokens, &nt, vx_api_err(m));
        *n = (size_t)nt;
    }
    free(ids);
    vx_api_voice_free(own);
    return st;
}

/* A Chatterbox voice as a safetensors file, with where it came from as metadata. */
vocis_status vx_api_cb_voice_save(vocis_model *m, const vocis_voice *v, const char *path) {
    char secs[64], used[64], rate[32], ex[64];
    const char *meta[16];
    int k = 0;
    meta[k++] = "vocis_version";
    meta[k++] = VOCIS_VERSION;
    const char *made_by = v->src.model_kind[0] ? v->src.model_kind : vx_family_kind(m);
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

/* Lazy loads may race when several threads speak with one model: one lock serialises them. */
static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;

/* The S3Gen weights that cloning and speech share (Turbo / Nano: the MeanFlow file), opened once. */
static vocis_status open_s3gen_weights_locked(vocis_model *m) {
    if (m->s3gen_w) return VOCIS_OK;
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", m->dir, m->turbo ? "s3gen_meanflow.safetensors" : "s3gen.safetensors");
    VX_TRY(vx_cb_weights_open_path(path, &m->s3gen_w, vx_api_err(m))); /* or s3gen.pt */
    vx_weights_set_precision(m->s3gen_w, m->precision_flow);
    return VOCIS_OK;
}

static vocis_status load_cloner_locked(vocis_model *m) {
    if (m->has_cloner) return VOCIS_OK;
    VX_TRY(open_s3gen_weights_locked(m));
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
    snprintf(v->src.model_kind, sizeof v->src.model_kind, "%s", vx_family_kind(m));
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

/* Clones a recording (the first minute), or copies the clone of the same file made before. */
vocis_status vx_api_cb_clone(vocis_model *m, const char *audio_path, const vocis_clone_options *opts, vocis_voice **out) {
    *out = NULL;
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

vocis_status vx_api_cb_clone_samples(vocis_model *m, const float *samples, size_t n, int sample_rate,
                                     const vocis_clone_options *opts, vocis_voice **out) {
    *out = NULL;
    vocis_clone_options o;
    vocis_clone_options_default(&o);
    if (opts) o = *opts;
    if (!samples || n == 0) return vx_fail(vx_api_err(m), VOCIS_E_ARG, "no samples given");
    if (sample_rate < VX_AUDIO_MIN_RATE || sample_rate > VX_AUDIO_MAX_RATE)
        return vx_fail(vx_api_err(m), VOCIS_E_ARG, "sample rate %d Hz is implausible", sample_rate);
    for (size_t i = 0; i < n; i++)
        if (!isfinite(samples[i])) return vx_fail(vx_api_err(m), VOCIS_E_ARG, "sample %zu is not finite", i);
    /* as vx_api_cb_clone: at most the first minute (+ 1 s of resampler look-ahead) */
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


vocis_status vx_api_load_cloner(vocis_model *m) {
    pthread_mutex_lock(&load_lock);
    vocis_status st = load_cloner_locked(m);
    pthread_mutex_unlock(&load_lock);
    return st;
}

static vocis_status load_s3gen_locked(vocis_model *m) {
    if (m->flow && m->hift) return VOCIS_OK;
    VX_TRY(open_s3gen_weights_locked(m));
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
    VX_TRY(c->m->family->tokenize(c->m, text, c->o->t3.language, ids, n, &c->unknown));
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
vocis_status vx_api_cb_speak(vocis_model *m, const vocis_voice *voice, const char *text, const vocis_speak_options *opts,
                             vocis_audio *out) {
    vx_err *err = vx_api_err(m);
    vocis_speak_options o;
    if (opts) o = *opts;
    else vocis_speak_options_default(&o);
    if (o.cfm_steps < 1 || o.cfm_steps > 1000) return vx_fail(err, VOCIS_E_ARG, "cfm steps must be in [1, 1000]");
    if (!(o.crossfade_ms >= 0) || o.crossfade_ms > 1000) return vx_fail(err, VOCIS_E_ARG, "crossfade must be in [0, 1000] ms");
    if (o.stream_tokens < VOCIS_STREAM_AUTO || o.stream_tokens > 1000)
        return vx_fail(err, VOCIS_E_ARG, "stream tokens must be in [1, 1000] (0 = off, -1 = the model's default)");
    VX_TRY(vx_api_load_s3gen(m));

    vocis_voice *own = NULL;
    vx_chunks chunks = {0};
    vx_cue_log cues = {0}; /* the cues so far: each starts where the last ended */
    vx_join join;
    vx_join_init(&join, (size_t)(o.crossfade_ms * 1e-3f * VX_HIFT_SR), out != NULL, &o);
    vocis_status st = vx_api_cb_voice_or_builtin(m, &voice, &own);
    if (st) goto done;
    const vx_cb_conds *v = &voice->conds;
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
    vx_api_voice_free(own);
    return st;
}

const vx_family vx_family_chatterbox = {
    .name = "Chatterbox",
    .batches = 1,
    .parts = VX_FAMILY_LM | VX_FAMILY_S3GEN,
    .detect = detect,
    .open = open_chatterbox,
    .close = vx_api_cb_close,
    .kind_name = "chatterbox",
    .kv_bf16 = vx_api_cb_kv_bf16,
    .set_voice_cache = vx_api_cb_set_voice_cache,
    .voice_cache = vx_api_cb_voice_cache,
    .tokenize = tokenize,
    .voice_load = vx_api_cb_voice_load,
    .voice_save = vx_api_cb_voice_save,
    .clone = vx_api_cb_clone,
    .clone_samples = vx_api_cb_clone_samples,
    .t3_generate = vx_api_cb_t3_generate,
    .speak = vx_api_cb_speak,
    .convert = vx_api_cb_convert,
};

static vocis_status voice_file_load(vocis_model *m, const char *path, vocis_voice **out) {
    if (!path) return vx_fail(vx_api_err(m), VOCIS_E_ARG, "no model folder is open: give a voice file");
    const vx_voice_file vf = vx_api_voice_file(path, vx_api_err(m));
    if (vf.kind == VX_VOICE_MISSING) return vx_api_err(m)->code;
    if (vf.kind == VX_VOICE_AUDIO || vf.kind == VX_VOICE_OTHER)
        return vx_fail(vx_api_err(m), VOCIS_E_ARG, "voice cloning needs a Chatterbox model folder");
    return load_conds_file(m, path, &vf, out);
}

const vx_family vx_family_none = {
    .name = "no model",
    .close = vx_api_cb_close,
    .kind_name = "",
    .voice_load = voice_file_load,
    .voice_save = vx_api_cb_voice_save,
};
