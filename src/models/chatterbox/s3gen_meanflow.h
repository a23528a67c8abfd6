/* Chatterbox-Turbo / -Nano S3Gen token -> mel with the distilled MeanFlow
 * decoder (S3Gen(meanflow=True), spec chatterbox.md §13.6): the encoder of
 * the English flow, then plain Euler on t = linspace(0, 1, n + 1) (no cosine
 * warp), batch 1, no CFG, x <- x + (r - t) v(x, t, r), the estimator's time
 * embedding mixed from t and r. Noise as upstream: noised_mels =
 * randn(1, 80, 2 n_tokens) FIRST, then z = randn_like(mu) whose speech part
 * is overwritten by noised_mels. */
#ifndef VX_S3GEN_MEANFLOW_H
#define VX_S3GEN_MEANFLOW_H

#include "models/chatterbox/s3gen_flow.h"

typedef struct vx_meanflow_req {
    const int64_t *speech_tokens; /* [n] incl. the silence tail */
    int64_t n;
    const int64_t *prompt_tokens; /* [np] */
    int64_t np;
    const float *prompt_feat;     /* [tp][n_mels] */
    int64_t tp;
    const float *embedding;       /* [spk_dim] */
    int n_steps;                  /* 0 -> 2 */
    const float *noised_mels;     /* optional injected [n_mels][2 n] */
    const float *z;               /* optional injected [n_mels][L] */
    vx_rng *rng;                  /* draws what is not injected, in upstream's order */
    int nthreads;
    vx_st_writer *debug;          /* 10_s3gen_flow golden names */
    double *t_encoder;            /* optional: receives the encoder + mu projection wall time (s) */
    double *t_steps;              /* optional: receives the wall time of the n_steps estimator steps (s) */
    int hold_lookahead;           /* finalize=False as in vx_s3gen_flow_req: noised_mels [n_mels][2 n − held],
                                     z [n_mels][L − held], held = vx_s3gen_flow_held_frames */
} vx_meanflow_req;

/* mel: malloc'd [n_mels][tm], tm = L - tp (- held frames). */
vocis_status vx_s3gen_meanflow_run(const vx_s3gen_flow *f, const vx_meanflow_req *rq, float **mel, int64_t *tm,
                                   vx_err *err);

#endif
