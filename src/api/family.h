/* A model family behind the public API: one table of functions per family
 * (Chatterbox English, Multilingual, Turbo / Nano, voice conversion,
 * VibeVoice, VibeVoice-Realtime). vocis.c knows families only through
 * these tables; the family files know nothing of vocis.c. Adding a family is
 * one file defining a table plus its entry in families.c.
 *
 * A NULL entry means the family has no such thing; the API then says so.
 * Batched generation (requests joining and leaving a shared forward at any
 * step) is the family's own business below speak / t3_generate: the T3
 * families and VibeVoice share engine.c, whose vx_batch_ops are start (add),
 * step a set of sequences (step) and finish (take / drop); `batches` says so. */
#ifndef VX_API_FAMILY_H
#define VX_API_FAMILY_H

#include <stddef.h>
#include <stdint.h>

#include "vocis.h"
#include "text/tokenizer.h"

struct vx_prefix_cache;

enum { VX_FAMILY_LM = 1, VX_FAMILY_S3GEN = 2 }; /* the parts vocis_model_precision reports */

typedef struct vx_family {
    const char *name; /* "Chatterbox-Turbo / -Nano", for messages */
    unsigned parts;   /* VX_FAMILY_LM | VX_FAMILY_S3GEN */
    int batches;      /* concurrent speak calls step together (engine.c) */
    /* 1 when dir is a folder of this family (asked in the order of families.c) */
    int (*detect)(const char *dir);
    /* loads m->dir into m (threads and precisions already set); close frees what open made,
     * also after a failed open */
    vocis_status (*open)(vocis_model *m, const vocis_open_options *o);
    void (*close)(vocis_model *m);
    /* vocis_model_kind: kind_name, or kind(m) where the folder decides (Turbo / Nano) */
    const char *kind_name;
    const char *(*kind)(const vocis_model *m);
    /* the LM's KV cache in bf16 (vocis_open_options.kv_cache); NULL: f32 only */
    void (*kv_bf16)(vocis_model *m);
    /* the voice-prefix cache of vocis_open_options.voice_cache_mb (bytes, 0 = none) */
    vocis_status (*set_voice_cache)(vocis_model *m, size_t max_bytes);
    struct vx_prefix_cache *(*voice_cache)(const vocis_model *m);
    /* language: the family's check (NULL: only "en" or none); languages: its list */
    vocis_status (*check_language)(vocis_model *m, const char *language);
    const char *(*languages)(const vocis_model *m);
    /* text -> the ids T3 reads; unknown (may be NULL) collects characters the vocabulary lacks */
    vocis_status (*tokenize)(vocis_model *m, const char *text, const char *language, int32_t **ids, size_t *n,
                             vx_tok_unknown *unknown);
    /* voices: path NULL is the folder's built-in voice */
    vocis_status (*voice_load)(vocis_model *m, const char *path, vocis_voice **out);
    vocis_status (*voice_save)(vocis_model *m, const vocis_voice *v, const char *path);
    vocis_status (*clone)(vocis_model *m, const char *audio_path, const vocis_clone_options *o, vocis_voice **out);
    vocis_status (*clone_samples)(vocis_model *m, const float *samples, size_t n, int sample_rate,
                                  const vocis_clone_options *o, vocis_voice **out);
    /* the options a speak call of this family starts from (after vocis_speak_options_default) */
    void (*speak_defaults)(const vocis_model *m, vocis_speak_options *o);
    /* text (never blank) -> speech tokens / audio; out NULL: audio only to o->on_audio */
    vocis_status (*t3_generate)(vocis_model *m, const vocis_voice *voice, const char *text, const vocis_t3_options *o,
                                int32_t **tokens, size_t *n);
    vocis_status (*speak)(vocis_model *m, const vocis_voice *voice, const char *text, const vocis_speak_options *o,
                          vocis_audio *out);
    vocis_status (*speak_script)(vocis_model *m, const vocis_voice *const *voices, int n_voices, const char *script,
                                 const vocis_speak_options *o, vocis_audio *out);
    vocis_status (*stream_open)(vocis_model *m, const vocis_voice *voice, const vocis_speak_options *o,
                                vocis_stream **out);
    vocis_status (*convert)(vocis_model *m, const char *source_path, const vocis_voice *target,
                            const vocis_convert_options *o, vocis_audio *out);
} vx_family;

extern const vx_family vx_family_chatterbox, vx_family_mtl, vx_family_turbo, vx_family_vc, vx_family_vv, vx_family_rt;
/* A handle whose open failed or never named a folder: it loads and saves Chatterbox voice files
 * (which need no weights) and refuses the rest. */
extern const vx_family vx_family_none;

/* vocis_model_kind of m ("" for vx_family_none). */
const char *vx_family_kind(const vocis_model *m);

/* The family whose folder dir is, NULL when none claims it. */
const vx_family *vx_family_of_folder(const char *dir);
/* The families, in the order folders are told apart (*n of them). */
const vx_family *const *vx_family_list(int *n);

#endif
