/* Chatterbox-Turbo / -Nano T3: a GPT-2 backbone (learned absolute positions
 * wpe, pre-LayerNorm blocks with a fused c_attn, tanh-GELU MLP, final ln_f)
 * fed with [speaker (1) | speech_emb(prompt) (P) | text_emb(ids) (N) |
 * speech_emb(BOS) (1)], batch 1 and no CFG (spec chatterbox.md §13,
 * upstream T3.inference_turbo). The speech head has a bias. */
#ifndef VX_T3_GPT2_H
#define VX_T3_GPT2_H

#include <stdint.h>

#include "base/rng.h"
#include "kernels/kernels.h"
#include "io/safetensors.h"
#include "models/chatterbox/config.h"
#include "nn/speculate.h"

typedef struct vx_gpt2_layer {
    const float *ln1_w, *ln1_b, *ln2_w, *ln2_b;
    vx_mat attn, proj, fc, fc_proj; /* [out, in] (transposed from GPT-2's Conv1D layout at load) */
    const float *attn_b, *proj_b, *fc_b, *fc_proj_b;
} vx_gpt2_layer;

typedef struct vx_t3_gpt2 {
    vx_weights *w; /* owned */
    vx_cb_config cfg;
    int nano;      /* 1 for t3_nano_v1 (GPT2_small), 0 for Turbo (GPT2_medium) */
    int dim, n_layers, n_heads, head_dim, ffn;
    float eps;
    vx_gpt2_layer *layers;
    const float *lnf_w, *lnf_b;
    vx_mat wpe, text_emb, speech_emb, speech_head, spkr_enc; /* [rows, D] (spkr_enc: [D, speaker_dim]) */
    const float *speech_head_b, *spkr_b;
    int speaker_dim;
    void **owned;
    int n_owned;
    /* speculative decoding's draft (t3_gpt2.c draft_build): built on first
     * use, owned; draft_mem: its quantized matrices (on the draft) */
    struct vx_t3_gpt2 *draft;
    vx_draft_mem draft_mem;
    /* voices' prefix K/V (speaker + prompt tokens), reused by every request
     * of a voice (nn/prefix_cache.h; NULL = none); owned, see vx_t3_gpt2_set_voice_cache */
    struct vx_prefix_cache *prefix_cache;
} vx_t3_gpt2;

/* Gives t a voice-prefix cache of at most max_bytes (0 = none). */
vocis_status vx_t3_gpt2_set_voice_cache(vx_t3_gpt2 *t, size_t max_bytes, vx_err *err);

/* The T3 file of a Turbo/Nano folder ("t3_turbo_v1.safetensors" or
 * "t3_nano_v1.safetensors"), NULL when the folder has neither. Both at once
 * is an error (a folder mixing two variants). */
vocis_status vx_t3_gpt2_file(const char *dir, const char **name, vx_err *err);

/* Loads DIR/<t3 file> with a precision policy (kernels/precision.h; 0 = as stored; cfg: token ids and config overrides; the head
 * count is n_embd / 64 unless the config's dims.t3_gpt2.configs.<name>.n_head says otherwise). */
vocis_status vx_t3_gpt2_load(vx_t3_gpt2 *t, const char *dir, const vx_cb_config *cfg, int precision, vx_err *err);
/* Same from an open weight set (not owned; synthetic weights of the bench). n_heads 0 = dim / 64. */
vocis_status vx_t3_gpt2_init(vx_t3_gpt2 *t, const vx_weights *w, const vx_cb_config *cfg, int n_heads, vx_err *err);
void vx_t3_gpt2_free(vx_t3_gpt2 *t);
/* Random weights at the Turbo (nano 0: GPT2_medium) or Nano (nano 1: GPT2_small) release's dimensions, every
 * matrix and vector stored as dt, as a weight set for vx_t3_gpt2_init (n_heads 0); for benchmarks (t3_gpt2_synth.c). */
vocis_status vx_t3_gpt2_synthetic_weights(int nano, vx_dtype dt, uint64_t seed, vx_weights **out, vx_err *err);
/* The same at other dimensions (tests): matrices of fan-in width drawn in
 * ±scale_in, the MLP's output projection in ±scale_ffn. */
typedef struct vx_gpt2_synth_dims {
    int64_t width, layers, positions, text_vocab, speech_vocab, speaker_dim;
    float scale_in, scale_ffn;
} vx_gpt2_synth_dims;
vocis_status vx_t3_gpt2_synthetic_dims(const vx_gpt2_synth_dims *d, vx_dtype dt, uint64_t seed, vx_weights **out,
                                       vx_err *err);
/* Those weights (precision policy applied, 0 = as stored) loaded into t, which owns them; default token ids. */
vocis_status vx_t3_gpt2_synthetic(vx_t3_gpt2 *t, int nano, vx_dtype dt, int precision, uint64_t seed, vx_err *err);

/* KV cache of one sequence: k, v [n_layers][cap][D]. */
typedef struct vx_gpt2_kv {
    int64_t len, cap;
    float *k, *v;
} vx_gpt2_kv;
vocis_status vx_gpt2_kv_init(vx_gpt2_kv *kv, const vx_t3_gpt2 *t, int64_t cap, vx_err *err);
void vx_gpt2_kv_free(vx_gpt2_kv *kv);

/* Runs n positions continuing the cache: x [n][D] input embeddings (wpe is
 * added here) -> residual stream after the last block (before ln_f).
 * record (optional, [n_layers][n][D]) receives every block's output. */
vocis_status vx_t3_gpt2_forward(const vx_t3_gpt2 *t, vx_gpt2_kv *kv, int64_t n, float *x, float *record,
                                int nthreads, vx_err *err);
/* vx_t3_gpt2_forward of n positions whose every output row and cached K/V
 * row has the bits that n one-position forwards give (the verify forward of
 * speculative decoding; slower than vx_t3_gpt2_forward for a long prefill). */
vocis_status vx_t3_gpt2_forward_steps(const vx_t3_gpt2 *t, vx_gpt2_kv *kv, int64_t n, float *x, int nthreads,
                                      vx_err *err);
/* vx_t3_gpt2_forward_steps over several sequences at once: ns[s] positions
 * continuing each cache kvs[s], their rows one after the other in x (a
 * batch of requests; every row's bits are those of its own one-position
 * forward). */
vocis_status vx_t3_gpt2_forward_seqs(const vx_t3_gpt2 *t, vx_gpt2_kv *const *kvs, const int64_t *ns, int nseq,
                                     float *x, int nthreads, vx_err *err);
/* logits [n][V] for rows h [n][D], each with the bits of vx_t3_gpt2_logits on that row alone. */
vocis_status vx_t3_gpt2_logits_rows(const vx_t3_gpt2 *t, const float *h, int64_t n, float *logits, int nthreads,
                                    vx_err *err);
/* logits[V] = speech_head(ln_f(h)) + bias for one row h [D]; hn (optional) receives ln_f(h). */
void vx_t3_gpt2_logits(const vx_t3_gpt2 *t, const float *h, float *logits, float *hn, int nthreads);

/* Conditioning [1 + P][D]: spkr_enc(speaker_emb), speech_emb(prompt tokens). */
int vx_t3_gpt2_cond_len(int n_prompt);
vocis_status vx_t3_gpt2_cond(const vx_t3_gpt2 *t, const float *speaker_emb, const int64_t *prompt, int n_prompt,
                             float *cond, int nthreads, vx_err *err);
/* The prefill input [1 + P + N + 1][D] (before wpe). */
vocis_status vx_t3_gpt2_prefill_embeds(const vx_t3_gpt2 *t, const float *speaker_emb, const int64_t *prompt,
                                       int n_prompt, const int32_t *text, int n_text, float *x, int nthreads,
                                       vx_err *err);

typedef struct vx_turbo_sampling {
    float temperature;        /* 0.8; applied when > 0 and != 1 */
    int top_k;                /* 1000; applied when > 0 */
    float top_p;              /* 0.95; applied when < 1 */
    float repetition_penalty; /* 1.2; applied when != 1 */
    int max_new_tokens;       /* 1000 = upstream max_gen_len (at most 1 + this many draws) */
    int greedy;
    int (*on_token)(void *user, int step, int32_t token);
    void *user;
    float *rec_logits;        /* optional [max_new_tokens + 1][V]: raw speech_head logits of every draw */
    /* self-speculative decoding (nn/speculate.h): VX_SPEC_OFF, VX_SPEC_AUTO
     * (0: on when the model computes exactly, off under bf16 / q8) or a fixed
     * k of 1..VX_SPEC_KMAX proposals per round (any precision). The tokens,
     * recorded logits and rng state are plain decoding's whatever it is. */
    int speculate;
} vx_turbo_sampling;

/* T3.inference_turbo: every sampled token, including a final stop token
 * when drawn (upstream removes it; vx_turbo_clean_tokens does). */
vocis_status vx_t3_gpt2_generate(const vx_t3_gpt2 *t, const float *speaker_emb, const int64_t *prompt, int n_prompt,
                                 const int32_t *text, int n_text, const vx_turbo_sampling *s, vx_rng *rng,
                                 int nthreads, int32_t **tokens, int *n_tokens, vx_err *err);

/* t's speculative draft, built on first use and kept with t until
 * vx_t3_gpt2_free (thread-safe; a cache that changes no result). */
vocis_status vx_t3_gpt2_draft_of(const vx_t3_gpt2 *t, const vx_t3_gpt2 **d, int nthreads, vx_err *err);
/* vx_t3_gpt2_generate with a chosen draft (VX_DRAFT_*, nn/speculate.h); report (optional) receives the
 * speculation controller's totals (rounds, proposals, acceptance). */
vocis_status vx_t3_gpt2_generate_ex(const vx_t3_gpt2 *t, const float *speaker_emb, const int64_t *prompt,
                                    int n_prompt, const int32_t *text, int n_text, const vx_turbo_sampling *s,
                                    vx_rng *rng, int nthreads, int draft_kind, vx_spec_ctl *report,
                                    int32_t **tokens, int *n_tokens, vx_err *err);

/* One generation as an object, so that several requests can step together
 * (continuous batching): started (prefill and the first draw), stepped until
 * done, then taken. s is copied; rng is borrowed until the generation is
 * taken or freed (a failure of the first draw, e.g. a cancel, frees it:
 * *out NULL). The tokens and rng state do not depend on how the steps
 * were run (alone, speculating, or batched). */
typedef struct vx_t3_gpt2_gen vx_t3_gpt2_gen;
vocis_status vx_t3_gpt2_gen_start(const vx_t3_gpt2 *t, const float *speaker_emb, const int64_t *prompt, int n_prompt,
                                  const int32_t *text, int n_text, const vx_turbo_sampling *s, vx_rng *rng,
                                  int nthreads, int draft_kind, vx_t3_gpt2_gen **out, vx_err *err);
/* Finished: a stop token, the cap, or a failure (a cancel by on_token). */
int vx_t3_gpt2_gen_done(const vx_t3_gpt2_gen *g);
/* One round of g alone: a speculative round when it speculates, else a
 * plain step. Returns g's failure, if any (g is then finished). */
vocis_status vx_t3_gpt2_gen_step(vx_t3_gpt2_gen *g, vx_err *err);
/* One plain step of every unfinished generation of gs (at most 256, one
 * model), all their rows in ONE forward; a lone unfinished one takes
 * vx_t3_gpt2_gen_step. A generation's own failure stays with it (see
 * vx_t3_gpt2_gen_take); the status is the batch's (out of memory). */
vocis_status vx_t3_gpt2_gen_step_many(vx_t3_gpt2_gen *const *gs, int n, int nthreads, vx_err *err);
/* A finished generation's tokens (malloc'd, incl. a final stop token when
 * drawn) or its failure; report (optional): its speculation counts. Frees g. */
vocis_status vx_t3_gpt2_gen_take(vx_t3_gpt2_gen *g, int32_t **tokens, int *n_tokens, vx_spec_ctl *report,
                                 vx_err *err);
void vx_t3_gpt2_gen_free(vx_t3_gpt2_gen *g);

/* Turbo post-processing: drop a trailing stop token, keep ids < 6561 and
 * append three silence tokens (4299). out: [n + 3]; returns its length. */
#define VX_S3GEN_SIL 4299
int vx_turbo_clean_tokens(const vx_t3_gpt2 *t, const int32_t *tokens, int n, int64_t *out);

/* HF TopKLogitsWarper: scores below the k-th largest -> -inf (k > 0). */
void vx_logits_top_k(float *logits, int n, int k, float *scratch);

#endif
