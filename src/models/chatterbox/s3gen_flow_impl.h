/* Internal layout of the S3Gen flow weights, shared by the loader
 * (s3gen_flow.c), the encoder (s3gen_encoder.c) and the CFM estimator
 * (cfm_estimator.c). Not part of the public API. */
#ifndef VX_S3GEN_FLOW_IMPL_H
#define VX_S3GEN_FLOW_IMPL_H

#include "kernels/kernels.h"
#include "models/chatterbox/s3gen_flow.h"

/* Linear or Conv1d: w is (out, in·k) in file dtype; b float32 or NULL. */
typedef struct fl_lin {
    vx_mat w;
    const float *b;
    int64_t k; /* kernel size (1 for Linear) */
} fl_lin;

typedef struct fl_norm {
    const float *w, *b;
} fl_norm;

/* ConformerEncoderLayer (pre-norm, rel-pos MHSA, SiLU FFN). */
typedef struct fl_conformer {
    fl_norm norm_mha, norm_ff; /* eps 1e-12 */
    fl_lin q, k, v, out, pos;  /* pos: no bias */
    const float *pos_u, *pos_v; /* [H][dk] */
    fl_lin w1, w2;
} fl_conformer;

/* diffusers BasicTransformerBlock (self-attention only, GELU FFN). */
typedef struct fl_tblock {
    fl_norm norm1, norm3;
    fl_lin q, k, v, out; /* q, k, v without bias */
    fl_lin ff1, ff2;
} fl_tblock;

/* CausalBlock1D: causal conv k3 → LayerNorm over channels → Mish. */
typedef struct fl_cblock {
    fl_lin conv;
    fl_norm ln;
} fl_cblock;

/* CausalResnetBlock1D. */
typedef struct fl_resblock {
    fl_lin mlp; /* Linear(temb → C) after Mish */
    fl_cblock block1, block2;
    fl_lin res_conv; /* 1×1 conv */
    int64_t cin;
} fl_resblock;

typedef struct fl_stage {
    fl_resblock res;
    fl_tblock *tb; /* [n_tblocks] */
    fl_lin post;   /* causal conv k3 after the transformers (down/up stages only) */
} fl_stage;

struct vx_s3gen_flow {
    vx_s3gen_flow_dims d;
    /* glue */
    vx_tensor input_embedding; /* (vocab, input_size) file dtype */
    fl_lin spk_affine;         /* (n_mels, spk_dim) */
    fl_lin encoder_proj;       /* (n_mels, enc_dim) */
    /* encoder */
    fl_lin embed_lin, up_embed_lin;
    fl_norm embed_ln, up_embed_ln, after_norm; /* eps 1e-5 */
    fl_lin pre_conv1, pre_conv2, up_conv;
    fl_conformer *enc, *up; /* [n_enc], [n_up] */
    /* estimator */
    fl_lin time1, time2;
    fl_lin time_mixer; /* MeanFlow (d.meanflow): Linear(2·temb → temb), no bias */
    fl_stage down, up_stage;
    fl_stage *mid; /* [n_mid] */
    fl_cblock final_block;
    fl_lin final_proj;
    /* memory owned by this object (converted vectors, synthetic weights) */
    void **owned;
    int n_owned, cap_owned;
};

/* Encoder front half: tokens [T] → h [up_stride·T][enc_dim] (time-major).
 * emb_out (optional) receives the token embeddings [T][input_size]. */
vocis_status vx_s3gen_encoder_forward(const vx_s3gen_flow *f, const int64_t *tokens, int64_t T, float *h,
                                      float *emb_out, int nthreads, vx_err *err);

/* Estimator workspace for a CFG pair of length L. */
typedef struct cfm_ws cfm_ws;
vocis_status cfm_ws_new(const vx_s3gen_flow *f, int64_t L, cfm_ws **out, vx_err *err);
void cfm_ws_free(cfm_ws *w);
/* MeanFlow: the end time r of the next estimator evaluations (the time
 * embedding becomes time_mixer([time_mlp(t) | time_mlp(r)])). */
void cfm_ws_set_r(cfm_ws *w, float r);

/* One estimator evaluation on B rows (B = 2 for a CFG pair) of length L.
 * x, mu, cond: [B][L][n_mels] time-major; spk: [B][n_mels]; t: the flow time
 * (shared by all rows); v: [B][L][n_mels]. dbg / tag: optional capture of
 * intermediates (row 0) as est_<tag>_* golden names. */
vocis_status cfm_estimator_forward(const vx_s3gen_flow *f, cfm_ws *w, int64_t B, int64_t L, const float *x,
                                   const float *mu, const float *spk, const float *cond, float t, float *v,
                                   int nthreads, vx_st_writer *dbg, const char *tag, vx_err *err);

#endif
