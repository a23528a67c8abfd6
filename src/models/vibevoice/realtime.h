/* VibeVoice-Realtime-0.5B (model_type "vibevoice_streaming"): the model,
 * its voice presets and upstream's windowed generate() (spec §2.5, §3.6, §11).
 *
 *   text windows of 5 tokens ─ embed ─ lower Qwen2 (no final norm, own cache) ─ g
 *   g + tts_input_types[1] ─────────────── upper Qwen2, positive cache ─ h_pos
 *   6 speech steps per window:  f = DPM-Solver++(head, h_pos, h_neg, CFG)   (one randn(2, vae) each)
 *                               pcm = acoustic decoder stream(f/s − b)      → 3200 samples
 *                               e = acoustic_connector(f) + tts_input_types[0]
 *                               h_pos, h_neg = upper stack on e (positive and negative caches, one 2-row call)
 *                               EOS: sigmoid(fc2(relu(fc1(h_pos)))) > 0.5 — the window still runs out, silent
 *
 * The caches start from a voice preset (upstream's demo/voices/streaming_model/NAME.pt:
 * BF16 KV caches of the voice prompt, read as float32); the pseudo prompt ids
 * only size positions. Text may arrive in pieces: a window runs as soon as five
 * tokens are final (text cut only where tokenisation cannot change) or the
 * text is finished, so any split gives the samples of the whole text at once. */
#ifndef VX_VV_REALTIME_H
#define VX_VV_REALTIME_H

#include <stdint.h>

#include "base/rng.h"
#include "io/safetensors.h"
#include "models/vibevoice/config.h"
#include "models/vibevoice/diffusion.h"
#include "models/vibevoice/dpm_solver.h"
#include "models/vibevoice/vae.h"
#include "nn/transformer.h"
#include "text/tokenizer.h"

#define VX_RT_TEXT_WINDOW 5
#define VX_RT_SPEECH_WINDOW 6

typedef struct vx_rt_model {
    vx_vv_config cfg;
    vx_weights *w;
    vx_tokenizer *tok; /* NULL when loaded without one (debug stages) */
    vx_tf lower, upper;
    vx_mat embed;     /* model.language_model.embed_tokens.weight [vocab, H] */
    float *types;     /* model.tts_input_types.weight [2][H]: row 0 speech, row 1 text */
    vx_mat eos_fc1, eos_fc2;
    float *eos_b1, *eos_b2; /* [H], [1] */
    float *owned;
    vx_vv_vae *acoustic; /* decoder only */
    vx_vv_connector ac_conn;
    vx_vv_diffhead *head;
    float scaling, bias;
    int32_t neg_id; /* <|image_pad|> */
} vx_rt_model;

/* A release folder: config.json (model_type vibevoice_streaming), model.safetensors,
 * and (need_tokenizer) tokenizer.json of Qwen2.5-0.5B. config_path: optional override of
 * config.json's keys (vx_vv_config_load_override). precision: kernels/precision.h
 * (0 = default; golden tests use exact). */
vocis_status vx_rt_model_load(vx_rt_model *m, const char *dir, const char *config_path, int need_tokenizer,
                              int precision, vx_err *err);
void vx_rt_model_free(vx_rt_model *m);

/* Synthetic model at the release dims (random weights in dtype dt; no tokenizer), for benchmarks. */
vocis_status vx_rt_model_synthetic(vx_rt_model *m, vx_dtype dt, int precision, uint64_t seed, vx_err *err);

/* ---- voice presets ---- */

enum { VX_RT_LM = 0, VX_RT_TTS_LM, VX_RT_NEG_LM, VX_RT_NEG_TTS_LM, VX_RT_N_ENTRIES };
extern const char *const vx_rt_entry_names[VX_RT_N_ENTRIES]; /* "lm", "tts_lm", "neg_lm", "neg_tts_lm" */

typedef struct vx_rt_entry {
    int64_t T;     /* positions */
    int n_layers;
    float *hidden; /* [T][H] last_hidden_state */
    float *k, *v;  /* [n_layers][kv_heads][T][head_dim] (torch layout, keys post-RoPE) */
} vx_rt_entry;

typedef struct vx_rt_preset {
    int64_t H;
    int kv_heads, head_dim;
    vx_rt_entry e[VX_RT_N_ENTRIES];
    char path[512];
} vx_rt_preset;

/* Upstream's .pt (torch zip: dict of BaseModelOutputWithPast + DynamicCache;
 * strides honoured) or a vocis voice file with the flat tensors of
 * vx_rt_preset_write (the kind is told from the contents). Shapes and finite
 * values are checked; vx_rt_preset_check then checks the fit to a model. */
vocis_status vx_rt_preset_load(const char *path, vx_rt_preset *p, vx_err *err);
vocis_status vx_rt_preset_check(const vx_rt_preset *p, const vx_vv_config *c, vx_err *err);
void vx_rt_preset_free(vx_rt_preset *p);
/* 1 when a safetensors file holds a Realtime preset (tts_lm_last_hidden_state). */
int vx_rt_preset_is_flat(const vx_st_file *f);
/* Flat F32 tensors: <entry>_last_hidden_state [1, T, H], <entry>_key_<l> / _value_<l> [1, kv, T, hd]. */
vocis_status vx_rt_preset_write(const vx_rt_preset *p, vx_st_writer *w, vx_err *err);

/* ---- generation ---- */

typedef struct vx_rt_opts {
    float cfg_scale;        /* 1.5 in upstream's demo */
    int n_steps;            /* DPM-Solver steps (5 in the demo) */
    int64_t max_new_tokens; /* <= 0: upstream's default max_position_embeddings − T_tts */
    int64_t max_samples;    /* > 0: also stop once this much audio was kept (not upstream) */
    vx_rng *rng;
    const float *inj_noise; /* [n_inj][2][vae] instead of rng draws (tests), may be NULL */
    int64_t n_inj;
    /* each kept frame (hop samples) as soon as it is decoded; non-zero cancels */
    int (*on_audio)(void *user, const float *pcm, int64_t n);
    void *user;
    int trace; /* 1: keep the per-step tensors for vx_rt_session_write_trace */
    int nthreads;
    int batched; /* 1: push / finish / run_ids only take the text; vx_rt_sessions_step runs the windows */
} vx_rt_opts;

void vx_rt_opts_default(vx_rt_opts *o);

typedef struct vx_rt_session vx_rt_session;

/* The preset must fit the model (vx_rt_preset_check); both must outlive the session. */
vocis_status vx_rt_session_new(const vx_rt_model *m, const vx_rt_preset *p, const vx_rt_opts *o,
                               vx_rt_session **out, vx_err *err);
void vx_rt_session_free(vx_rt_session *s);
/* Text as it arrives (UTF-8, any split, even inside a character): windows run
 * as soon as they are final. */
vocis_status vx_rt_session_push(vx_rt_session *s, const char *text, size_t len, vx_err *err);
/* End of text: the rest runs until EOS or the length cap. Empty text is an error. */
vocis_status vx_rt_session_finish(vx_rt_session *s, vx_err *err);
/* Token ids to speak directly (debug / tests), instead of push + finish. */
vocis_status vx_rt_session_run_ids(vx_rt_session *s, const int32_t *ids, int64_t n, vx_err *err);
/* Continuous batching: one step of every ready session (each at most one speech frame, the
 * frame's positive/negative pair of every session in ONE forward of the upper stack; a window's
 * text part runs as its session's own forward). A session's samples do not depend on the others
 * in the step; one that fails (a cancelling on_audio) stops alone (vx_rt_session_status). The
 * return value is the batch's own failure (out of memory). All sessions of one model. */
vocis_status vx_rt_sessions_step(vx_rt_session *const *s, int n, int nthreads, vx_err *err);
/* The session has a step to run now (more text may still come while it has none). */
int vx_rt_session_ready(const vx_rt_session *s);
/* The failure that stopped the session, if any (its message into err). */
vocis_status vx_rt_session_status(const vx_rt_session *s, vx_err *err);
/* The kept audio so far (valid until the next call). */
const float *vx_rt_session_audio(const vx_rt_session *s, int64_t *n);
/* Takes ownership of the kept audio (malloc'd). */
float *vx_rt_session_take_audio(vx_rt_session *s, int64_t *n);
int vx_rt_session_done(const vx_rt_session *s);
typedef struct vx_rt_stats {
    int64_t text_tokens, speech_steps, frames_kept;
    int eos, length_cap;
} vx_rt_stats;
void vx_rt_session_stats(const vx_rt_session *s, vx_rt_stats *st);
/* With opts.trace: the per-step tensors under golden 08_e2e's names (frame_*, step_eos_*,
 * audio, sequences, tts_text_ids, window_lower_hidden). */
vocis_status vx_rt_session_write_trace(const vx_rt_session *s, vx_st_writer *w, vx_err *err);

/* The demo's text clean-up (’ → ', “ ” → ") followed by encode(strip(text) + "\n"). */
vocis_status vx_rt_encode(const vx_rt_model *m, const char *text, size_t len, int32_t **ids, int64_t *n,
                          vx_err *err);

/* EOS classifier on one hidden row: fc1 pre-activation (may be NULL) and the logit. */
void vx_rt_eos(const vx_rt_model *m, const float *h, float *fc1_out, float *logit);

#endif
