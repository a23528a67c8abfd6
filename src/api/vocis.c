/* Public API: model and voice handles. A model handle holds its family's table
 * (family.h); every call below goes through it and knows no family. */
#include "vocis.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "api/family.h"
#include "api/internal.h"
#include "base/threads.h"
#include "io/audio.h"
#include "kernels/precision.h"
#include "nn/prefix_cache.h"
#include "text/unicode.h"

#define VOICE_CACHE_DEFAULT_MB 256

/* The KV-cache storage and voice-prefix cache of the open options onto what the open made. */
static vocis_status apply_open_options(vocis_model *m, const vocis_open_options *o) {
    const vx_family *f = m->family;
    if (m->kv_cache == VOCIS_KV_BF16) {
        if (!f->kv_bf16)
            return vx_fail(vx_api_err(m), VOCIS_E_UNSUPPORTED,
                           "a bf16 KV cache is not available for %s models (use f32)", f->name);
        f->kv_bf16(m);
    }
    const int mb = o ? o->voice_cache_mb : 0;
    if (mb < -1) return vx_fail(vx_api_err(m), VOCIS_E_ARG, "voice cache of %d MiB (-1 = none, 0 = default)", mb);
    const size_t bytes = mb < 0 ? 0 : (size_t)(mb ? mb : VOICE_CACHE_DEFAULT_MB) << 20;
    return f->set_voice_cache ? f->set_voice_cache(m, bytes) : VOCIS_OK;
}

void vocis_voice_cache_stats_get(const vocis_model *m, vocis_voice_cache_stats *out) {
    memset(out, 0, sizeof *out);
    if (!m || !m->family->voice_cache) return;
    vx_prefix_stats st;
    vx_prefix_cache_stats(m->family->voice_cache(m), &st);
    *out = (vocis_voice_cache_stats){st.hits, st.misses, st.entries, st.evictions, st.bytes, st.max_bytes};
}

void vocis_batch_stats_get(const vocis_model *m, vocis_batch_stats *out) {
    memset(out, 0, sizeof *out);
    if (m) vx_api_engine_stats(m, &out->active, &out->steps, &out->rows);
}

int vocis_model_batch_slots(const vocis_model *m) { return m && m->family->batches ? VX_ENGINE_SLOTS : 1; }

vocis_status vocis_model_open(const char *dir, const vocis_open_options *opts, vocis_model **out) {
    vocis_model *m = calloc(1, sizeof *m);
    *out = m;
    if (!m) return VOCIS_E_NOMEM;
    pthread_mutex_init(&m->clone_lock, NULL);
    m->family = &vx_family_none; /* until the folder is known: voice files only */
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
    const vx_family *f = vx_family_of_folder(dir);
    if (!f)
        return vx_fail(vx_api_err(m), VOCIS_E_UNSUPPORTED,
                       "%s: not a recognised model folder (expected Chatterbox's t3_cfg.safetensors or VibeVoice's "
                       "config.json)",
                       dir);
    m->family = f;
    if (m->kv_cache == VOCIS_KV_BF16 && !m->family->kv_bf16) /* before the weights are read */
        return apply_open_options(m, opts);
    VX_TRY(m->family->open(m, opts));
    return apply_open_options(m, opts);
}

void vocis_model_close(vocis_model *m) {
    if (!m) return;
    m->family->close(m);
    pthread_mutex_destroy(&m->clone_lock);
    free(m);
}

const char *vocis_model_kind(const vocis_model *m) { return m ? vx_family_kind(m) : ""; }

int vocis_model_precision(const vocis_model *m, int part) {
    if (!m) return 0;
    const unsigned parts = m->family->parts;
    /* the flow and HiFT have no transformer linears: q8 leaves them in bf16 (kernels/precision.h) */
    const int flow = m->precision_flow == VX_PREC_Q8 ? VX_PREC_BF16 : m->precision_flow,
              vocoder = m->precision_vocoder == VX_PREC_Q8 ? VX_PREC_BF16 : m->precision_vocoder;
    switch (part) {
    case VOCIS_PART_LM: return parts & VX_FAMILY_LM ? m->precision : 0;
    case VOCIS_PART_FLOW: return parts & VX_FAMILY_S3GEN ? flow : 0;
    case VOCIS_PART_VOCODER: return parts & VX_FAMILY_S3GEN ? vocoder : 0;
    default: return 0;
    }
}

const char *vocis_errmsg(const vocis_model *m) {
    if (!m) return "out of memory";
    const vx_err *e = vx_api_err(m);
    return e->code ? e->msg : "no error";
}

void vocis_model_set_threads(vocis_model *m, int threads) {
    if (m) m->threads = threads > 0 ? threads : vx_default_threads();
}

void vocis_free(void *p) { free(p); }

const char *vocis_version(void) { return VOCIS_VERSION; }

/* Refuses text with nothing to say (empty or only whitespace), for tokenize and speak alike. */
static vocis_status check_text(vocis_model *m, const char *text) {
    if (!text) return vx_fail(vx_api_err(m), VOCIS_E_ARG, "no text given");
    if (vx_utf8_blank(text, strlen(text))) return vx_fail(vx_api_err(m), VOCIS_E_ARG, "text is empty");
    return VOCIS_OK;
}

const char *vocis_model_languages(const vocis_model *m) {
    return m && m->family->languages ? m->family->languages(m) : NULL;
}

static vocis_status check_language(vocis_model *m, const char *language) {
    if (m->family->check_language) return m->family->check_language(m, language);
    if (language && *language && strcasecmp(language, "en") != 0)
        return vx_fail(vx_api_err(m), VOCIS_E_ARG, "language '%.32s': only Chatterbox-Multilingual takes a language",
                       language);
    return VOCIS_OK;
}

vocis_status vocis_check_language(vocis_model *m, const char *language) {
    vx_err_clear(vx_api_err(m));
    return check_language(m, language);
}

vocis_status vocis_tokenize_language(vocis_model *m, const char *text, const char *language, int32_t **ids,
                                     size_t *n) {
    *ids = NULL;
    *n = 0;
    vx_err_clear(vx_api_err(m));
    if (!m->family->tokenize) return vx_fail(vx_api_err(m), VOCIS_E_ARG, "model has no tokenizer loaded");
    VX_TRY(check_text(m, text));
    VX_TRY(check_language(m, language));
    return m->family->tokenize(m, text, language, ids, n, NULL);
}

vocis_status vocis_tokenize(vocis_model *m, const char *text, int32_t **ids, size_t *n) {
    return vocis_tokenize_language(m, text, NULL, ids, n);
}

/* ---- voices ---- */

vocis_status vocis_voice_load(vocis_model *m, const char *path, vocis_voice **out) {
    *out = NULL;
    vx_err_clear(vx_api_err(m));
    if (!m->family->voice_load) return vx_fail(vx_api_err(m), VOCIS_E_UNSUPPORTED, "%s models take no voice", m->family->name);
    return m->family->voice_load(m, path, out);
}

void vocis_voice_free(vocis_voice *v) { vx_api_voice_free(v); }

vocis_status vocis_voice_save(vocis_model *m, const vocis_voice *v, const char *path) {
    vx_err_clear(vx_api_err(m));
    if (!v || !path) return vx_fail(vx_api_err(m), VOCIS_E_ARG, "no voice or path given");
    const vx_family *f = v->family ? v->family : m->family; /* a preset knows its family, a clone its model's */
    if (!f->voice_save)
        return vx_fail(vx_api_err(m), VOCIS_E_UNSUPPORTED, "%s voices are recordings: there is no voice file to save",
                       f->name);
    return f->voice_save(m, v, path);
}

const char *vocis_voice_warning(const vocis_voice *v) { return v ? v->src.warning : ""; }

vocis_status vocis_voice_clone(vocis_model *m, const char *audio_path, const vocis_clone_options *opts,
                               vocis_voice **out) {
    *out = NULL;
    vx_err_clear(vx_api_err(m));
    if (!m->family->clone) return vx_fail(vx_api_err(m), VOCIS_E_ARG, "voice cloning needs a Chatterbox model folder");
    if (!audio_path) return vx_fail(vx_api_err(m), VOCIS_E_ARG, "no audio file given");
    return m->family->clone(m, audio_path, opts, out);
}

vocis_status vocis_voice_clone_samples(vocis_model *m, const float *samples, size_t n, int sample_rate,
                                       const vocis_clone_options *opts, vocis_voice **out) {
    *out = NULL;
    vx_err_clear(vx_api_err(m));
    if (!m->family->clone_samples)
        return vx_fail(vx_api_err(m), VOCIS_E_ARG, "voice cloning needs a Chatterbox model folder");
    return m->family->clone_samples(m, samples, n, sample_rate, opts, out);
}

/* ---- speech ---- */

void vocis_speak_options_for_model(const vocis_model *m, vocis_speak_options *o) {
    vocis_speak_options_default(o);
    if (m && m->family->speak_defaults) m->family->speak_defaults(m, o);
}

vocis_status vocis_t3_generate(vocis_model *m, const vocis_voice *voice, const char *text,
                               const vocis_t3_options *opts, int32_t **tokens, size_t *n) {
    *tokens = NULL;
    *n = 0;
    vx_err_clear(vx_api_err(m));
    if (!m->family->t3_generate) return vx_fail(vx_api_err(m), VOCIS_E_UNSUPPORTED, "this model has no T3 stage");
    VX_TRY(check_text(m, text));
    vocis_t3_options o;
    if (opts) o = *opts;
    else vocis_t3_options_default(&o);
    VX_TRY(check_language(m, o.language));
    return m->family->t3_generate(m, voice, text, &o, tokens, n);
}

/* out NULL: the audio goes to opts->on_audio only (Chatterbox then holds no more than a chunk's). */
vocis_status vocis_speak(vocis_model *m, const vocis_voice *voice, const char *text,
                         const vocis_speak_options *opts, vocis_audio *out) {
    if (out) memset(out, 0, sizeof *out);
    vx_err_clear(vx_api_err(m));
    if (!m->family->speak)
        return vx_fail(vx_api_err(m), VOCIS_E_UNSUPPORTED, "this model cannot speak (no Chatterbox T3)");
    VX_TRY(check_text(m, text));
    vocis_speak_options o;
    if (opts) o = *opts;
    else vocis_speak_options_for_model(m, &o);
    if (m->family->tokenize) VX_TRY(check_language(m, o.t3.language));
    return m->family->speak(m, voice, text, &o, out);
}

vocis_status vocis_speak_script(vocis_model *m, const vocis_voice *const *voices, int n_voices, const char *script,
                                const vocis_speak_options *opts, vocis_audio *out) {
    memset(out, 0, sizeof *out);
    vx_err_clear(vx_api_err(m));
    if (!m->family->speak_script)
        return vx_fail(vx_api_err(m), VOCIS_E_UNSUPPORTED, "vocis_speak_script needs a VibeVoice model");
    if (!script) return vx_fail(vx_api_err(m), VOCIS_E_ARG, "no script given");
    vocis_speak_options o;
    if (opts) o = *opts;
    else vocis_speak_options_for_model(m, &o);
    return m->family->speak_script(m, voices, n_voices, script, &o, out);
}

vocis_status vocis_stream_open(vocis_model *m, const vocis_voice *voice, const vocis_speak_options *opts,
                               vocis_stream **out) {
    *out = NULL;
    vx_err_clear(vx_api_err(m));
    if (!m->family->stream_open)
        return vx_fail(vx_api_err(m), VOCIS_E_UNSUPPORTED, "text streaming needs a VibeVoice-Realtime model");
    vocis_speak_options o;
    if (opts) o = *opts;
    else vocis_speak_options_for_model(m, &o);
    return m->family->stream_open(m, voice, &o, out);
}

vocis_status vocis_convert(vocis_model *m, const char *source_path, const vocis_voice *target,
                           const vocis_convert_options *opts, vocis_audio *out) {
    memset(out, 0, sizeof *out);
    vx_err_clear(vx_api_err(m));
    if (!m->family->convert)
        return vx_fail(vx_api_err(m), VOCIS_E_UNSUPPORTED, "voice conversion needs a Chatterbox model folder");
    if (!source_path) return vx_fail(vx_api_err(m), VOCIS_E_ARG, "no source recording given");
    vocis_convert_options o;
    vocis_convert_options_default(&o);
    if (opts) o = *opts;
    return m->family->convert(m, source_path, target, &o, out);
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
