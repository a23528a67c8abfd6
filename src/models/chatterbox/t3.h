/* Chatterbox T3: text + voice conditioning -> 25 Hz speech tokens.
 * A Llama backbone fed with embeddings built here:
 *   [speaker (1), perceiver latents (32), emotion (1)] [text + text positions]
 *   [BOS + speech position 0] [BOS + speech position 0]
 * decoded as a CFG pair (conditional row, and a row whose text embeddings
 * are zeroed) so that each weight is read once per step. */
#ifndef VX_T3_H
#define VX_T3_H

#include "base/rng.h"
#include "models/chatterbox/config.h"
#include "nn/speculate.h"
#include "nn/transformer.h"

typedef struct vx_t3 {
    vx_weights *w; /* owned when loaded from a file */
    vx_cb_config cfg;
    int dim;
    vx_tf tf;
    vx_mat text_emb, speech_emb, text_pos, speech_pos, speech_head; /* embeddings: [rows, D] */
    /* conditioning encoder */
    int speaker_dim;
    vx_mat spkr_enc;     /* [D, speaker_dim] */
    float *spkr_bias;    /* [D] */
    float *emotion_w;    /* [D] (single column of emotion_adv_fc) */
    int n_query;         /* perceiver query tokens */
    float *query;        /* [n_query][D] */
    float *pn_w, *pn_b;  /* perceiver LayerNorm */
    vx_mat to_q, to_k, to_v, proj_out;
    float *bq, *bk, *bv, *bo;
    void *owned;
    struct vx_t3_draft *draft; /* speculative decoding's draft (vx_t3_draft_of): built on first use */
    /* voices' conditioning-prefix K/V, reused by every request of a voice
     * (nn/prefix_cache.h; NULL = none); owned, see vx_t3_set_voice_cache */
    struct vx_prefix_cache *prefix_cache;
} vx_t3;

/* Gives t3 a voice-prefix cache of at most max_bytes (0 = none). */
vocis_status vx_t3_set_voice_cache(vx_t3 *t3, size_t max_bytes, vx_err *err);

/* The draft of T3 for speculative decoding (nn/speculate.h): the backbone
 * and the speech head in the draft format; embeddings and norms are T3's. */
typedef struct vx_t3_draft {
    vx_tf tf;
    vx_mat speech_head;
    vx_draft_mem mem;
} vx_t3_draft;
/* t3's draft, built on first use and kept with t3 until vx_t3_free
 * (thread-safe; a cache that changes no result). */
vocis_status vx_t3_draft_of(const vx_t3 *t3, const vx_t3_draft **d, int nthreads, vx_err *err);

/* Loads DIR/t3_cfg.safetensors with the hyper-parameters in cfg. */
vocis_status vx_t3_load(vx_t3 *t3, const char *path, const vx_cb_config *cfg, vx_err *err);
/* Same with a precision policy (kernels/precision.h; 0 = default); vx_t3_load is exact. */
vocis_status vx_t3_load_prec(vx_t3 *t3, const char *path, const vx_cb_config *cfg, int precision, vx_err *err);
/* Same from an already open weight set (not owned), e.g. a synthetic one;
 * its policy (vx_weights_set_precision) applies. */
vocis_status vx_t3_init(vx_t3 *t3, const vx_weights *w, const vx_cb_config *cfg, vx_err *err);
void vx_t3_free(vx_t3 *t3);

/* T3 conditioning inputs (a T3Cond). */
typedef struct vx_t3_cond {
    const float *speaker_emb;     /* [speaker_dim] */
    const int64_t *prompt_tokens; /* [n_prompt] speech tokens, may be NULL */
    int n_prompt;
    float emotion_adv;            /* exaggeration */
} vx_t3_cond;

/* cond_emb [len_cond][D]: speaker, perceiver(prompt), emotion. *len_cond =
 * 2 + n_query (or 2 without prompt). prompt_emb (optional, [n_prompt][D])
 * receives the perceiver input. Buffers are caller-allocated. */
vocis_status vx_t3_cond_encode(const vx_t3 *t3, const vx_t3_cond *c, float *cond_emb, int *len_cond,
                               float *prompt_emb, float *perceiver_out, int nthreads, vx_err *err);
int vx_t3_cond_len(const vx_t3 *t3, const vx_t3_cond *c);

typedef struct vx_t3_sampling {
    float temperature, cfg_weight, min_p, top_p, repetition_penalty;
    int max_new_tokens;
    int greedy;
    int (*on_token)(void *user, int step, int32_t token); /* non-zero = cancel */
    void *user;
    /* self-speculative decoding (nn/speculate.h): VX_SPEC_OFF, VX_SPEC_AUTO
     * (0: on for an exact T3) or k proposals per round; the tokens are
     * those of plain decoding either way */
    int speculate;
} vx_t3_sampling;

/* The prefill input [nseq][cond + n_text + 2][D] (§8.4): conditioning, text
 * with positions (row 1: text embeddings zeroed), BOS twice at speech position 0. */
vocis_status vx_t3_prefill_embeds(const vx_t3 *t3, const vx_t3_cond *c, const int32_t *text_ids, int n_text,
                                  int nseq, float *x, int nthreads, vx_err *err);
/* The prefill's rows after the conditioning, [nseq][n_text + 2][D]: text with
 * positions (row 1: text embeddings zeroed), BOS twice at speech position 0.
 * The conditioning rows are the same in both CFG rows. */
void vx_t3_text_embeds(const vx_t3 *t3, const int32_t *text_ids, int n_text, int nseq, float *x);
/* logits[s][V] = speech_head(final_norm(last row of sequence s)), x: [nseq][n][D]. */
vocis_status vx_t3_head_logits(const vx_t3 *t3, const float *x, int nseq, int64_t n, float *logits, int nthreads,
                               vx_err *err);

/* Full T3.inference: text_ids are the text tokens WITH start/stop. Writes
 * the sampled tokens (incl. a final stop token when drawn) to a malloc'd
 * array. rng: the torch-compatible stream (not used when greedy). */
vocis_status vx_t3_generate(const vx_t3 *t3, const vx_t3_cond *c, const int32_t *text_ids, int n_text,
                            const vx_t3_sampling *s, vx_rng *rng, int nthreads, int32_t **tokens, int *n_tokens,
                            vx_err *err);
/* vx_t3_generate with a chosen draft (VX_DRAFT_*, nn/speculate.h); report
 * (optional) receives the speculation counts (rounds, proposals, acceptance). */
vocis_status vx_t3_generate_ex(const vx_t3 *t3, const vx_t3_cond *c, const int32_t *text_ids, int n_text,
                               const vx_t3_sampling *s, vx_rng *rng, int nthreads, int draft_kind,
                               vx_spec_ctl *report, int32_t **tokens, int *n_tokens, vx_err *err);

/* Random weights at the English release's dimensions, as a weight set for vx_t3_init. */
vocis_status vx_t3_synthetic_weights(vx_dtype dt, uint64_t seed, vx_weights **out, vx_err *err);
/* Same with a text vocabulary of text_vocab rows (704: English; 2454: Multilingual, VX_T3_MTL_TEXT_VOCAB). */
#define VX_T3_MTL_TEXT_VOCAB 2454
vocis_status vx_t3_synthetic_weights_vocab(vx_dtype dt, uint64_t seed, int64_t text_vocab, vx_weights **out,
                                           vx_err *err);

/* Upstream's post-processing (drop_invalid_tokens + keep ids < 6561). In place; returns the new count. */
int vx_t3_clean_tokens(const vx_t3 *t3, int32_t *tokens, int n);

/* Embedding row lookup helpers: out[D] = table[row] (+= when add). */
void vx_t3_embed(const vx_mat *table, int64_t row, float *out, int add);

#endif
