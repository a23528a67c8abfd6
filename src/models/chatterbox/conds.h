/* Chatterbox conditionals (the built-in voice, `conds.pt`): the T3 part
 * (T3Cond) and the S3Gen reference dictionary, as owned f32 / int64 arrays.
 *
 * Sources: the original torch.save file (`conds.pt`, spec §2.1), or a
 * safetensors file with tensors `speaker_emb`, `cond_prompt_speech_tokens`,
 * `emotion_adv` (required) and `prompt_token`, `prompt_feat`, `embedding`
 * (+ optional `prompt_token_len`) for the S3Gen part, which a T3-only file
 * lacks. Names may also carry the `t3.` / `gen.` prefixes of the golden
 * `13_conds_pt.safetensors`. Float fields may be F32/F16/BF16 and token
 * fields I64/I32; everything is validated (dtype, shape, finite values,
 * token range) and converted on load. */
#ifndef VX_CB_CONDS_H
#define VX_CB_CONDS_H

#include "base/err.h"
#include "tensor/tensor.h"

#define VX_CB_SPEAKER_EMB_DIM 256 /* voice-encoder embedding */
#define VX_CB_XVECTOR_DIM 192     /* CAMPPlus embedding */
#define VX_CB_MEL_BINS 80         /* S3Gen mel features */
#define VX_CB_S3_VOCAB 6561       /* S3 speech tokens are in [0, 6561) */

typedef struct vx_cb_f32 {
    float *data;
    int ndim;
    int64_t shape[VX_MAX_DIMS];
    size_t n; /* elements */
} vx_cb_f32;

typedef struct vx_cb_i64 {
    int64_t *data;
    int ndim;
    int64_t shape[VX_MAX_DIMS];
    size_t n;
} vx_cb_i64;

typedef struct vx_cb_conds {
    int no_t3; /* 1: the T3 half below is absent (a voice cloned by a voice-conversion model) */
    /* T3 (present unless no_t3) */
    vx_cb_f32 speaker_emb;               /* [1, 256] */
    vx_cb_i64 cond_prompt_speech_tokens; /* [1, P] */
    vx_cb_f32 emotion_adv;               /* [1, 1, 1]: exaggeration it was saved with */
    /* S3Gen reference (only when has_gen) */
    int has_gen;
    vx_cb_i64 prompt_token;   /* [1, Tp] */
    int64_t prompt_token_len; /* valid tokens (<= Tp); conds.pt stores it as a [1] tensor */
    vx_cb_f32 prompt_feat;    /* [1, M, 80] */
    vx_cb_f32 embedding;      /* [1, 192] raw CAMPPlus x-vector */
} vx_cb_conds;

/* On failure *out is left empty (safe to free). */
vocis_status vx_cb_conds_load_pt(const char *path, vx_cb_conds *out, vx_err *err);
vocis_status vx_cb_conds_load_pt_mem(const void *buf, size_t len, const char *name, vx_cb_conds *out, vx_err *err);
vocis_status vx_cb_conds_load_safetensors(const char *path, vx_cb_conds *out, vx_err *err);
/* Writes the plain (unprefixed) names; the S3Gen part only when has_gen. meta: NULL or a
 * NULL-terminated list of key, value strings stored as safetensors metadata. */
vocis_status vx_cb_conds_save_safetensors(const vx_cb_conds *c, const char *path, const char *const *meta,
                                          vx_err *err);
/* Deep copy (dst is overwritten; on failure left empty). */
vocis_status vx_cb_conds_copy(vx_cb_conds *dst, const vx_cb_conds *src, vx_err *err);
void vx_cb_conds_free(vx_cb_conds *c);

#endif
