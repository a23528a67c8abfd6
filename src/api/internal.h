/* The public handles' insides, shared by the src/api/ files (not installed). */
#ifndef VX_API_INTERNAL_H
#define VX_API_INTERNAL_H

#include <pthread.h>
#include <stdint.h>

#include "vocis.h"
#include "base/err.h"
#include "base/rng.h"
#include "models/chatterbox/clone.h"
#include "models/chatterbox/conds.h"
#include "models/chatterbox/config.h"
#include "models/chatterbox/hift.h"
#include "nn/speculate.h"
#include "models/chatterbox/s3gen_flow.h"
#include "models/chatterbox/t3.h"
#include "models/vibevoice/generate.h"
#include "text/tokenizer.h"

struct vocis_model {
    const struct vx_family *family; /* its table (family.h); vx_family_none while no folder is open */
    char dir[4096];
    int threads;
    int precision;       /* resolved policy of the LM part (kernels/precision.h), set at open */
    int precision_flow;    /* ... of Chatterbox's S3Gen flow */
    int precision_vocoder; /* ... of HiFT */
    int kv_cache;          /* vocis_open_options.kv_cache as given (VOCIS_KV_DEFAULT: VibeVoice chooses per generation) */
    vx_cb_config cfg;
    vx_tokenizer *tok;
    vx_t3 t3;
    int has_t3;
    struct vx_engine *engine; /* concurrent requests batched (engine.c), made on first use */
    struct vx_mtl_text *mtl; /* Chatterbox-Multilingual: its text front end (NULL for other models) */
    int is_vc; /* a voice-conversion folder: S3Gen (+ conds.pt) only */
    /* S3Gen, loaded on first use */
    vx_weights *s3gen_w;
    vx_s3gen_flow *flow;
    vx_hift *hift;
    /* Chatterbox-Turbo / -Nano (GPT-2 T3; vocis_turbo.c), NULL otherwise */
    struct vx_turbo *turbo;
    /* VibeVoice (when the folder holds one) */
    vx_vv_model *vv;
    struct vx_rt_model *rt; /* VibeVoice-Realtime (vocis_rt.c) */
    /* voice cloning, loaded on first use; clones of files cached by path + size + mtime */
    vx_cb_cloner cloner;
    int has_cloner;
    pthread_mutex_t clone_lock;
    struct clone_entry *clones;
    int nclones;
};

/* Where a voice came from (saved as metadata of a voice file). */
typedef struct voice_source {
    char name[256];      /* file name of the recording, "" if not cloned */
    double seconds;      /* the recording's whole duration */
    double used_seconds; /* the part cloned (at most the first minute) */
    int sample_rate;     /* its rate */
    char warning[256];   /* advisory, "" when none */
    char model_kind[32]; /* vocis_model_kind of the model that cloned it (voice file metadata vocis_model_kind), "" if unknown */
} voice_source;

struct vocis_voice {
    const struct vx_family *family; /* the family that saves it when not the model's (a Realtime preset) */
    vx_cb_conds conds;
    voice_source src;
    char *audio_path; /* VibeVoice: the recording, read at synthesis */
    struct vx_rt_preset *rt_preset; /* VibeVoice-Realtime voice preset */
};

#define CLONE_CACHE_MAX 16
typedef struct clone_entry {
    char path[4096];
    int64_t size, mtime_ns;
    vx_cb_conds conds;
    voice_source src;
} clone_entry;

/* What a voice file is, told from its contents (magic bytes, the pickle's names, the safetensors
 * header) and only then from its extension. */
typedef enum {
    VX_VOICE_MISSING,     /* cannot be opened (the error is set) */
    VX_VOICE_PT,          /* a torch.save archive of unknown contents */
    VX_VOICE_CONDS_PT,    /* Chatterbox's Conditionals (conds.pt) */
    VX_VOICE_RT_PT,       /* a VibeVoice-Realtime voice preset (demo/voices/streaming_model/NAME.pt) */
    VX_VOICE_CB_FILE,     /* a safetensors voice / conditioning file of Chatterbox */
    VX_VOICE_RT_FILE,     /* a safetensors VibeVoice-Realtime preset (vocis voice create --from-preset) */
    VX_VOICE_SAFETENSORS, /* another safetensors file */
    VX_VOICE_AUDIO,       /* an audio file by its magic bytes (WAV, FLAC, Ogg, MP3, AIFF, ...) */
    VX_VOICE_OTHER        /* anything else (left to libsndfile) */
} vx_voice_kind;
typedef struct vx_voice_file {
    vx_voice_kind kind;
    char model_kind[32]; /* a voice file's metadata vocis_model_kind, "" when absent */
} vx_voice_file;
vx_voice_file vx_api_voice_file(const char *path, vx_err *err);
/* "PATH is a VibeVoice-Realtime voice preset", "PATH is an audio recording", ...: what the file is, for messages. */
const char *vx_api_voice_file_what(vx_voice_kind kind);

/* ---- common.c: what every family file may use ---- */
/* The calling thread's error context for calls on m: several threads may use one model at
 * once, and each reads its own last error through vocis_errmsg. */
vx_err *vx_api_err(const vocis_model *m);
/* 1 when DIR/NAME exists. */
int vx_api_file_exists(const char *dir, const char *name);
/* torch.manual_seed(o->seed), or a random seed when o->seed < 0. */
void vx_api_seed_rng(vx_rng *rng, const vocis_t3_options *o);
/* Frees a voice handle of any family (NULL is fine). */
void vx_api_voice_free(vocis_voice *v);

/* ---- vocis_cb.c: the Chatterbox core that its variants (Multilingual, Turbo / Nano, voice
 * conversion) share ---- */
/* [start_text_token] + raw + [stop_text_token] into *ids (malloc'd); raw is freed either way. */
vocis_status vx_api_pad_text_ids(vocis_model *m, int32_t *raw, size_t nraw, int32_t **ids, size_t *n);
/* Loads S3Gen (flow + HiFT) / the cloning networks on first use. */
vocis_status vx_api_load_s3gen(vocis_model *m);
vocis_status vx_api_load_cloner(vocis_model *m);
/* Frees what any Chatterbox variant may have made (T3, tokenizer, S3Gen, HiFT, cloner, clone cache). */
void vx_api_cb_close(vocis_model *m);
/* A recording is cloned, a voice file or conds.pt loaded; NULL is the folder's conds.pt. */
vocis_status vx_api_cb_voice_load(vocis_model *m, const char *path, vocis_voice **out);
vocis_status vx_api_cb_voice_save(vocis_model *m, const vocis_voice *v, const char *path);
/* The voice a T3 / speak call uses: *voice, or the folder's built-in one when NULL (then also in
 * *own, for the caller to free); refused when cloned by the other recipe. */
vocis_status vx_api_cb_voice_or_builtin(vocis_model *m, const vocis_voice **voice, vocis_voice **own);
/* T3's speech tokens (English and Multilingual: the family's tokenize, CFG pair). */
vocis_status vx_api_cb_t3_generate(vocis_model *m, const vocis_voice *voice, const char *text, const vocis_t3_options *o,
                                   int32_t **tokens, size_t *n);
vocis_status vx_api_cb_clone(vocis_model *m, const char *audio_path, const vocis_clone_options *o, vocis_voice **out);
vocis_status vx_api_cb_clone_samples(vocis_model *m, const float *samples, size_t n, int sample_rate,
                                     const vocis_clone_options *o, vocis_voice **out);
/* Speech in sentence chunks (options filled by the API). */
vocis_status vx_api_cb_speak(vocis_model *m, const vocis_voice *voice, const char *text, const vocis_speak_options *o,
                             vocis_audio *out);
/* ChatterboxVC.generate (vocis_vc.c): a recording in the target voice. */
vocis_status vx_api_cb_convert(vocis_model *m, const char *source_path, const vocis_voice *target,
                               const vocis_convert_options *o, vocis_audio *out);
/* The English T3's KV cache in bf16, its voice-prefix cache. */
void vx_api_cb_kv_bf16(vocis_model *m);
vocis_status vx_api_cb_set_voice_cache(vocis_model *m, size_t max_bytes);
struct vx_prefix_cache *vx_api_cb_voice_cache(const vocis_model *m);
/* Chatterbox-Turbo / -Nano (vocis_turbo.c), for the chunk loop of vocis_cb.c. */
vocis_status vx_api_turbo_tokenize(vocis_model *m, const char *text, int32_t **ids, size_t *n);
/* One chunk of speech from the text's GPT-2 ids (vx_api_turbo_tokenize). */
vocis_status vx_api_turbo_speak_chunk(vocis_model *m, const vx_cb_conds *v, const int32_t *ids, size_t nids,
                                      const vocis_t3_options *o, int cfm_steps,
                                      int (*on_token)(void *, int, int32_t), void *user, vx_rng *rng, float **wav,
                                      int64_t *nwav);
/* Chatterbox-Multilingual (vocis_mtl.c): the post-processing of T3's tokens (in place, returns
 * the count) and the cut of the waveform. */
int vx_api_mtl_clean_tokens(vocis_model *m, int32_t *tokens, int n);
int64_t vx_api_mtl_keep_samples(int n_tokens, int64_t n_samples);
/* ---- engine.c: continuous batching of a model's concurrent calls ---- */
/* A family's batch, as the engine drives it. */
#define VX_ENGINE_SLOTS 8 /* requests batched at once; more wait for a slot */
typedef struct vx_batch_ops {
    vocis_status (*create)(vocis_model *m, void **b, vx_err *err);
    void (*destroy)(void *b);
    /* admits the family's request: its prefill (and first draw), or the result of prepare */
    vocis_status (*add)(void *b, const void *req, int nthreads, int *id, vx_err *err);
    int (*free_slots)(const void *b);
    int (*done)(const void *b, int id);
    /* one step of every unfinished request, one forward for all of them */
    vocis_status (*step)(void *b, int nthreads, vx_err *err);
    /* the finished request's output (into the family's out struct) or its failure; frees the slot */
    vocis_status (*take)(void *b, int id, void *out, vx_err *err);
    void (*drop)(void *b, int id);
    /* optional: the request's start (its prompt's prefill) on the caller's thread before it takes the
     * engine's lock, so that the batch keeps stepping meanwhile; add then gets *prep instead of the
     * request, and discard frees a *prep that add refused. */
    vocis_status (*prepare)(vocis_model *m, const void *req, int nthreads, void **prep, vx_err *err);
    void (*discard)(void *prep);
} vx_batch_ops;
/* Admits req into the model's batch and steps it, taking turns with the other callers, until req
 * is finished; then ops->take(out). One batch per model: a model has one family's ops. */
vocis_status vx_api_engine_run(vocis_model *m, const vx_batch_ops *ops, const void *req, void *out, vx_err *err);
void vx_api_engine_free(vocis_model *m);
/* The engine's counters (vocis_batch_stats); zero before its first request. */
void vx_api_engine_stats(const vocis_model *m, int *active, int64_t *steps, int64_t *rows);
/* T3 generation through the model's shared batch: concurrent callers'
 * requests run as one forward per step; the result equals vx_t3_generate. */
vocis_status vx_api_t3_generate(vocis_model *m, const vx_t3_cond *c, const int32_t *ids, int n_ids,
                                const vx_t3_sampling *s, vx_rng *rng, int32_t **tokens, int *n_tokens, vx_err *err);
/* The same for a Turbo / Nano model (models/chatterbox/t3_gpt2_batch.h); equals vx_t3_gpt2_generate. */
struct vx_t3_gpt2_req;
vocis_status vx_api_turbo_t3_batched(vocis_model *m, const struct vx_t3_gpt2_req *r, int32_t **tokens, int *n_tokens,
                                     vx_err *err);
/* A Turbo / Nano model's T3 (vocis_turbo.c). */
const struct vx_t3_gpt2 *vx_api_turbo_t3(const vocis_model *m);
/* o->on_warning(o->user, message) when set (one-line advisories of speak / stream calls). */
void vx_api_warn(const vocis_speak_options *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A warn callback (vx_vv_warn_fn shape) whose user is the const vocis_speak_options *. */
void vx_api_warn_cb(void *opts, const char *msg);
/* The audio of vocis_speak's text chunks joined with a crossfade (chunk_join.c). */
typedef struct vx_join {
    float *acc;             /* samples made and not dropped: all of them when keep_all */
    size_t nacc, emitted;   /* acc[0, emitted) went to on_audio */
    size_t total;           /* samples made */
    size_t xfade;           /* crossfade between chunks (samples) */
    int keep_all, chunk, last, first_piece;
    const vocis_speak_options *o;
    vx_err failed; /* an error of vx_join_add inside a stream's sink */
} vx_join;
void vx_join_init(vx_join *j, size_t xfade, int keep_all, const vocis_speak_options *o);
/* Chunk k starts (last: no chunk follows it). */
void vx_join_begin(vx_join *j, int k, int last);
/* A piece of the current chunk's audio; what is final goes to o->on_audio. */
vocis_status vx_join_add(vx_join *j, const float *x, size_t n, vx_err *err);
void vx_join_free(vx_join *j);
/* Streamed Chatterbox speech (speak_stream.c): a vx_s3gen_stream for one text chunk whose
 * audio goes to j; its tokens come from T3's callback (vx_s3gen_stream_push). */
struct vx_s3gen_stream;
vocis_status vx_api_stream_begin(vocis_model *m, const vx_cb_conds *v, const vocis_speak_options *o,
                                 const vx_rng *rng, vx_join *j, struct vx_s3gen_stream **out);
/* After T3: the final flush (Turbo's silence tokens, Multilingual's cut of the last token). */
vocis_status vx_api_stream_end(vocis_model *m, struct vx_s3gen_stream *s, vx_err *err);
/* First chunk's tokens for vocis_speak_options.stream_tokens (VOCIS_STREAM_AUTO: the family's default). */
int vx_api_stream_first_tokens(const vocis_model *m, int stream_tokens);
/* T3 of Turbo / Nano on the text's ids (vocis_turbo.c): all sampled tokens. */
vocis_status vx_api_turbo_generate_ids(vocis_model *m, const vx_cb_conds *v, const int32_t *ids, size_t nids,
                                       const vocis_t3_options *o, int (*on_token)(void *, int, int32_t), void *user,
                                       vx_rng *rng, int32_t **toks, int *nt);

#endif
