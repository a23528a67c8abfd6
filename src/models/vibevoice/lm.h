/* VibeVoice's language model: a Qwen2 decoder (the shared transformer with
 * QKV biases and GQA), token embeddings, and a tied or separate lm_head. */
#ifndef VX_VV_LM_H
#define VX_VV_LM_H

#include "models/vibevoice/config.h"
#include "nn/transformer.h"

typedef struct vx_vv_lm {
    vx_tf tf;
    vx_mat embed;   /* [vocab, H] model.language_model.embed_tokens.weight */
    vx_mat lm_head; /* lm_head.weight when stored, else the embedding (tied) */
    int tied;
    int64_t max_positions;
} vx_vv_lm;

/* Weights under `prefix` ("model.language_model."); dims from config.json,
 * checked against the tensor shapes. */
vocis_status vx_vv_lm_init(vx_vv_lm *lm, const vx_weights *w, const vx_vv_config *c, const char *prefix,
                           vx_err *err);
void vx_vv_lm_free(vx_vv_lm *lm);

/* out[n][H] = embedding rows of ids (ids validated by the caller). */
void vx_vv_lm_embed(const vx_vv_lm *lm, const int64_t *ids, int64_t n, float *out);
/* logits[rows][vocab] of final-normed hidden rows. */
void vx_vv_lm_logits(const vx_vv_lm *lm, const float *h, int64_t rows, float *logits, int nthreads);
/* Only the logits of the given token ids (the generation loop needs 4):
 * out[i] = h · lm_head[ids[i]]. */
void vx_vv_lm_logits_subset(const vx_vv_lm *lm, const float *h, const int32_t *ids, int nids, float *out);

/* Random weights at the dimensions of config c (the 1.5B / 7B presets come
 * from vx_vv_lm_preset), as a weight set for vx_vv_lm_init. */
vocis_status vx_vv_lm_synthetic_weights(const vx_vv_config *c, vx_dtype dt, uint64_t seed, vx_weights **out,
                                        vx_err *err);
/* Adds the random tensors of a Qwen2 stack "<P>layers.{i}.…" (+ "<P>norm.weight" when norm)
 * at the dims of c to a synthetic checkpoint builder (models/synthetic.h). */
struct vx_synth;
vocis_status vx_vv_synth_qwen2_stack(struct vx_synth *s, const vx_vv_config *c, const char *P, int layers, int norm,
                                    vx_dtype dt, vx_err *err);
/* The configuration of the released models, "1.5b" or "7b": Qwen2 dims,
 * the tokenizers, diffusion head and preprocessor (as their config.json). */
vocis_status vx_vv_lm_preset(const char *name, vx_vv_config *c, vx_err *err);

/* Opens DIR/model.safetensors.index.json (sharded) or DIR/model.safetensors. */
vocis_status vx_vv_weights_open(const char *dir, vx_weights **out, vx_err *err);

#endif
