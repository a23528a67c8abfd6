/* VibeVoice-1.5B / 7B text-to-speech: the model as a whole and upstream's
 * generate() loop (spec §3.5, §10, §13).
 *
 *   prompt ids ─ embed ─┬──────────────────────────── positive LM ─ h ─ argmax over 4 ids ─ token
 *   voices ─ acoustic encoder ─ gaussian sample ─ (z+b)·s ─ acoustic connector ─┘ (spliced at the placeholders)
 *   token = speech_diffusion:  latent f = DPM-Solver++(head, h, h_neg, CFG)
 *                              pcm = acoustic decoder stream(f/s − b)          → 3200 samples out
 *                              next input = acoustic_connector(f) + semantic_connector(semantic stream(pcm))
 *   h_neg: a negative LM (same weights, own KV cache) fed only the inputs of diffusion steps,
 *          reset at every generated speech_start; the pair runs as one two-sequence forward.
 *   speech_end resets the decoder and semantic streams; eos (or the 2 × prompt cap) ends. */
#ifndef VX_VV_GENERATE_H
#define VX_VV_GENERATE_H

#include <stdint.h>

#include "base/rng.h"
#include "io/checkpoint.h"
#include "io/safetensors.h"
#include "models/vibevoice/config.h"
#include "models/vibevoice/diffusion.h"
#include "models/vibevoice/dpm_solver.h"
#include "models/vibevoice/lm.h"
#include "models/vibevoice/processor.h"
#include "models/vibevoice/vae.h"
#include "text/tokenizer.h"

typedef struct vx_vv_model {
    vx_vv_config cfg;
    vx_weights *w;
    vx_tokenizer *tok;
    vx_vv_processor proc;
    vx_vv_lm lm;
    vx_vv_vae *acoustic; /* encoder + decoder */
    vx_vv_vae *semantic; /* encoder */
    vx_vv_connector ac_conn, se_conn;
    vx_vv_diffhead *head;
    float scaling, bias; /* model.speech_scaling_factor, model.speech_bias_factor */
} vx_vv_model;

/* One of the 0-d latent buffers (model.speech_scaling_factor / model.speech_bias_factor): they are
 * NaN unless loaded, so non-finite values (and a zero scale) are errors naming the tensor. */
vocis_status vx_vv_latent_scalar(const vx_weights *w, const char *name, float *out, vx_err *err);

/* Loads a release folder: config.json, preprocessor_config.json, the
 * (sharded) safetensors and tokenizer.json. */
vocis_status vx_vv_model_load(vx_vv_model *m, const char *dir, vx_err *err);
/* Same with a precision policy (kernels/precision.h; 0 = default; vx_vv_model_load is exact) and
 * an optional override of config.json's keys (config_path, vx_vv_config_load_override). */
vocis_status vx_vv_model_load_prec(vx_vv_model *m, const char *dir, const char *config_path, int precision,
                                   vx_err *err);
void vx_vv_model_free(vx_vv_model *m);

/* Processor inputs for a script ("Speaker N: ..." lines, prepared by
 * vx_vv_script_join as upstream's demo does) and one voice recording per
 * speaker (read as librosa.load(path, sr=24000) does; at most
 * VX_VV_VOICE_MAX_SECONDS of each; a speaker's voice shorter than
 * VX_VV_VOICE_MIN_SECONDS or silent is refused). warn (may be NULL) gets
 * one-line notes. */
#define VX_VV_VOICE_MAX_SECONDS 600.0
#define VX_VV_VOICE_MIN_SECONDS 0.5
#define VX_VV_MAX_VOICES 64
vocis_status vx_vv_prepare(const vx_vv_model *m, const char *script, size_t len, const char *const *voice_paths,
                           int n_voices, vx_vv_warn_fn warn, void *warn_user, vx_vv_inputs *out, vx_err *err);

/* What vx_vv_prepare reads before it builds the prompt: the script, prepared and parsed, and its
 * voices, read and checked (with the same refusals and warnings). */
typedef struct vx_vv_request {
    vx_vv_script script;
    int n_voices;
    vx_vv_voice voices[VX_VV_MAX_VOICES]; /* .samples = samples[i] */
    float *samples[VX_VV_MAX_VOICES];     /* malloc'd */
} vx_vv_request;

vocis_status vx_vv_request_load(const vx_vv_model *m, const char *script, size_t len, const char *const *voice_paths,
                                int n_voices, vx_vv_warn_fn warn, void *warn_user, vx_vv_request *r, vx_err *err);
void vx_vv_request_free(vx_vv_request *r);

typedef struct vx_vv_gen_opts {
    float cfg_scale;        /* 1.3 in upstream's demos */
    int n_steps;            /* DPM-Solver steps (10 in the demos) */
    int64_t max_new_tokens; /* <= 0: upstream's cap min(max_positions − L, 2·L) */
    double max_seconds;     /* > 0: also stop once this much audio has been generated */
    vx_rng *rng;            /* noise source (torch.manual_seed stream) */
    /* injected noise instead of rng draws (debug stages / golden tests), any may be NULL */
    const float *inj_prompt_std_noise; /* [V] */
    const float *inj_prompt_noise;     /* [V][F][vae] */
    const float *inj_frame_noise;      /* [n_inj_frames][2][vae] */
    int64_t n_inj_frames;
    /* called with each decoded frame (3200 samples) as soon as it exists; non-zero cancels */
    int (*on_audio)(void *user, const float *pcm, int64_t n);
    /* called after each generated token; non-zero cancels */
    int (*on_token)(void *user, int64_t step, int32_t token);
    void *user;
    vx_st_writer *trace; /* NULL, or receives golden-named tensors of 08_e2e */
    int nthreads;
    struct vx_vv_gen_ckpt *ckpt; /* resumable jobs: NULL = none */
    /* > 0: a generation whose caches may grow past this many positions (prompt + token cap) keeps
     * them in bf16 (VOCIS_KV_DEFAULT's choice, VX_VV_KV_AUTO_BF16_POSITIONS); 0: the stack's kv_dtype */
    int64_t kv_bf16_above;
} vx_vv_gen_opts;

/* Where VOCIS_KV_DEFAULT switches a VibeVoice generation's KV caches to bf16: past 16K positions
 * a float32 CFG pair holds 1.75 GiB (7 GiB at the 1.5B's 64K context), bf16 half of that. */
#define VX_VV_KV_AUTO_BF16_POSITIONS 16384

/* The loop's whole state at a frame boundary, after the forward of the next step's input: what a
 * checkpoint of a resumable job saves (generate_ckpt.c) and a resumed loop continues from. */
typedef struct vx_vv_gen_state {
    int64_t step;     /* the step that comes next */
    int64_t ngen;     /* tokens generated (gen[0..ngen)) */
    int64_t nframes;  /* speech frames decoded */
    int64_t samples;  /* audio samples of this generation so far */
    int32_t *gen;     /* [max_steps] */
    vx_kv_cache *kv;  /* slot 0 the positive branch, 1 the negative */
    vx_vv_vae_stream *ast, *sst; /* acoustic decoder / semantic encoder streams */
    float *hpos, *hneg; /* [dim] final-normed hidden states of the next step */
    vx_rng *rng;
    int64_t dim;
} vx_vv_gen_state;

typedef struct vx_vv_gen_ckpt {
    int64_t next_at; /* save once the generation's audio reaches this many samples */
    /* called at such a frame boundary (not after the last step); moves next_at on */
    vocis_status (*save)(struct vx_vv_gen_ckpt *c, const vx_vv_gen_state *s, vx_err *err);
    void *user;
    const vx_ckpt *resume; /* continue from this checkpoint's generation state instead of the prompt */
    int64_t resumed_samples;      /* set by the resumed generation: its samples before the checkpoint */
} vx_vv_gen_ckpt;

/* The checkpoint sections of s (pieces[] borrow s's storage and the caller's counters and rng_bytes,
 * filled here; *n_pieces of at most vx_vv_gen_state_max_pieces(s)). */
#define VX_VV_STATE_WORDS 16
int vx_vv_gen_state_max_pieces(const vx_vv_gen_state *s);
void vx_vv_gen_state_pieces(const vx_vv_gen_state *s, int64_t counters[VX_VV_STATE_WORDS], uint8_t *rng_bytes,
                            vx_ckpt_piece *pieces, int *n_pieces);
/* Restores a checkpoint's generation state into s (allocated: gen holds max_steps, kv and the
 * streams are those of m); sizes, layer counts and the KV storage must match. */
vocis_status vx_vv_gen_state_restore(const vx_vv_model *m, const vx_ckpt *ck, int64_t max_steps,
                                     vx_vv_gen_state *s, vx_err *err);

void vx_vv_gen_opts_default(vx_vv_gen_opts *o);

/* ---- fitting the context ----------------------------------------------------------------------
 * generate() stops at eos, at upstream's cap (2 x the prompt, or max_new_tokens) or at the context
 * (max_position_embeddings): when the context would come first, the speech is cut wherever it has
 * got to. A script is therefore refused unless prompt + cap fits; with split it is spoken in
 * sessions of whole consecutive turns that each fit, each prompted with all of the voices. */

/* The tokens a generation from a prompt of L tokens (n_lines script lines) may draw: upstream's cap
 * min(2·L, max_new_tokens), lowered with max_seconds > 0 to its frames + 2 per line + 2. */
int64_t vx_vv_tokens_budget(const vx_vv_model *m, int64_t L, int n_lines, const vx_vv_gen_opts *o);

typedef struct vx_vv_session {
    int first_line, n_lines; /* the script lines (turns) it speaks */
    int64_t prompt_tokens;
} vx_vv_session;

/* The sessions r is spoken in (*out malloc'd): split 0, the whole script; split 1, consecutive turns
 * packed greedily, prompt + vx_vv_tokens_budget <= the context. Before any model work, VOCIS_E_ARG
 * with the numbers when the script (split 0) or one turn on its own (split 1) does not fit. */
vocis_status vx_vv_plan_sessions(const vx_vv_model *m, const vx_vv_request *r, const vx_vv_gen_opts *o, int split,
                                 vx_vv_session **out, int *n, vx_err *err);
/* The processor inputs of one session: its lines, with all of r's voices and speaker numbering
 * (the whole script's session gives exactly vx_vv_prepare's inputs). */
vocis_status vx_vv_session_inputs(const vx_vv_model *m, const vx_vv_request *r, const vx_vv_session *s,
                                  vx_vv_inputs *out, vx_err *err);

/* 1 when a generation from a prompt of L tokens keeps its caches in bf16 (o->kv_bf16_above, or the
 * LM stack's kv_dtype), else 0. */
int vx_vv_kv_bf16(const vx_vv_model *m, int64_t L, const vx_vv_gen_opts *o);

/* Runs generate() on processed inputs. *audio (malloc'd) receives the
 * concatenated frames (24 kHz), *ids (malloc'd, may be NULL) the generated
 * token ids. */
vocis_status vx_vv_generate(const vx_vv_model *m, const vx_vv_inputs *in, const vx_vv_gen_opts *o, float **audio,
                            int64_t *n_audio, int32_t **ids, int64_t *n_ids, vx_err *err);

/* generate() as an object, so that several requests' generations step together (continuous
 * batching): start runs the prompt (or restores o->ckpt->resume); each vx_vv_gen_step_many runs one
 * step of every generation not yet done -- its token, diffusion and audio frame on its own, then
 * ONE forward for the LM pairs of all of them (each row computed as its own one-position step, so
 * a generation's output does not depend on its neighbours); finish hands over what
 * vx_vv_generate returns, or the generation's own failure (a cancel, a checkpoint that could not
 * be written). in and o's pointers must outlive the generation. */
typedef struct vx_vv_gen vx_vv_gen;
vocis_status vx_vv_gen_start(const vx_vv_model *m, const vx_vv_inputs *in, const vx_vv_gen_opts *o, vx_vv_gen **out,
                             vx_err *err);
int vx_vv_gen_done(const vx_vv_gen *g);
/* A failure here (out of memory in the shared forward) is every generation's. */
vocis_status vx_vv_gen_step_many(vx_vv_gen *const *gens, int n, int nthreads, vx_err *err);
vocis_status vx_vv_gen_finish(vx_vv_gen *g, float **audio, int64_t *n_audio, int32_t **ids, int64_t *n_ids,
                              vx_err *err);
void vx_vv_gen_free(vx_vv_gen *g);

#endif
