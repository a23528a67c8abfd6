/* What every model family's API file shares: the per-thread error context,
 * advisories, the seeded random stream, voice files told by their contents,
 * freeing voice and audio handles. Depends on no family and not on vocis.c. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/internal.h"
#include "api/limits.h"
#include "base/threads.h"
#include "io/safetensors.h"
#include "io/torchzip.h"
#include "models/vibevoice/realtime.h"

/* One error context per thread (not per model): a failed call leaves its message for the
 * same thread's vocis_errmsg, whatever other threads do with the model meanwhile. */
static _Thread_local vx_err thread_err;

vx_err *vx_api_err(const vocis_model *m) {
    (void)m;
    return &thread_err;
}

int vx_api_file_exists(const char *dir, const char *name) {
    char p[4200];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    return access(p, F_OK) == 0;
}

void vx_api_seed_rng(vx_rng *rng, const vocis_t3_options *o) {
    vx_rng_seed(rng, o->seed >= 0 ? (uint64_t)o->seed : (uint64_t)vx_draw_seed());
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

void vx_api_voice_free(vocis_voice *v) {
    if (!v) return;
    free(v->audio_path);
    if (v->rt_preset) vx_rt_preset_free(v->rt_preset);
    free(v->rt_preset);
    vx_cb_conds_free(&v->conds);
    free(v);
}

/* ---- voice files by their contents ---- */

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
