/* Chatterbox S3Gen token → mel ("flow", CausalMaskedDiffWithXvec):
 * speech-token embedding → upsampling conformer encoder → μ, then conditional
 * flow matching (Euler on a cosine time grid, classifier-free guidance) with
 * the causal 1-D U-Net estimator. Spec: chatterbox.md §9.4–9.6.
 *
 * Weights come from `s3gen.safetensors` (keys `flow.*`), all dimensions are
 * read from tensor shapes and block counts by probing names; only the
 * estimator head split comes from vx_cb_config. Matrices stay in their file
 * dtype; biases and norm vectors are float32 (pointed to or converted once). */
#ifndef VX_S3GEN_FLOW_H
#define VX_S3GEN_FLOW_H

#include <stdint.h>

#include "base/err.h"
#include "base/rng.h"
#include "io/safetensors.h"
#include "models/chatterbox/config.h"
#include "tensor/tensor.h"

typedef struct vx_s3gen_flow vx_s3gen_flow;

/* Dimensions (filled by the loader from shapes; given to the synthetic builder). */
typedef struct vx_s3gen_flow_dims {
    int64_t vocab;         /* speech-token vocabulary (6561) */
    int64_t input_size;    /* token embedding width (512) */
    int64_t enc_dim;       /* conformer width (512) */
    int64_t enc_heads;     /* 8 */
    int64_t enc_ffn;       /* 2048 */
    int64_t n_enc;         /* conformer layers before the upsampler (6) */
    int64_t n_up;          /* conformer layers after it (4) */
    int64_t lookahead;     /* pre-lookahead frames (3) */
    int64_t up_stride;     /* token → mel ratio (2) */
    int64_t n_mels;        /* 80 */
    int64_t spk_dim;       /* x-vector width (192) */
    int64_t dec_ch;        /* estimator width (256) */
    int64_t dec_heads;     /* 8 */
    int64_t dec_head_dim;  /* 64 */
    int64_t dec_ffn;       /* 4·dec_ch (1024) */
    int64_t temb_dim;      /* 4·dec_ch (1024) */
    int64_t n_tblocks;     /* transformer blocks per U-Net stage (4) */
    int64_t n_mid;         /* middle stages (12) */
    int64_t meanflow;      /* 1: MeanFlow estimator (Turbo: time_embed_mixer), 0: English */
} vx_s3gen_flow_dims;

/* The released English model's dimensions. */
void vx_s3gen_flow_dims_real(vx_s3gen_flow_dims *d);
/* The released Turbo / Nano s3gen_meanflow dimensions: the English ones plus the MeanFlow
 * estimator's time_embed_mixer (temb_dim x 2 temb_dim, no bias). */
void vx_s3gen_flow_dims_real_meanflow(vx_s3gen_flow_dims *d);

/* Load from a weights set holding `flow.*` (s3gen.safetensors). The weights
 * must outlive the flow object (matrices point into them). */
vocis_status vx_s3gen_flow_load(const vx_weights *w, const vx_cb_config *cfg, vx_s3gen_flow **out, vx_err *err);
/* Random weights of the given dims in memory, matrices stored as `wdtype`
 * (VX_F32, VX_F16 or VX_BF16); for benchmarks only. */
vocis_status vx_s3gen_flow_synthetic(const vx_s3gen_flow_dims *d, vx_dtype wdtype, uint64_t seed,
                                     vx_s3gen_flow **out, vx_err *err);
/* Random weights of the given dims as a checkpoint image (`flow.*` under the names and shapes
 * vx_s3gen_flow_load reads; matrices in wdtype — VX_F32 as released —, vectors F32, norm gains 1),
 * for benchmarks that load it like a real s3gen.safetensors: set a precision policy on it, then
 * vx_s3gen_flow_load (estimator heads x head dim as in vx_cb_config_default: 8 x 64). */
vocis_status vx_s3gen_flow_synthetic_weights(const vx_s3gen_flow_dims *d, vx_dtype wdtype, uint64_t seed,
                                             vx_weights **out, vx_err *err);
void vx_s3gen_flow_free(vx_s3gen_flow *f);
const vx_s3gen_flow_dims *vx_s3gen_flow_get_dims(const vx_s3gen_flow *f);
/* Frames of μ that finalize=False drops at the end: pre_lookahead_len · token_mel_ratio (3 · 2). */
int64_t vx_s3gen_flow_held_frames(const vx_s3gen_flow *f);

/* One token → mel request. */
typedef struct vx_s3gen_flow_req {
    const int64_t *speech_tokens; /* [n] generated tokens, each in [0, vocab) (the caller drops ≥ 6561) */
    int64_t n;
    const int64_t *prompt_tokens; /* [np] reference tokens (may be 0) */
    int64_t np;
    const float *prompt_feat;     /* [tp][n_mels] reference mel, time-major */
    int64_t tp;
    const float *embedding;       /* [spk_dim] x-vector (L2-normalised here) */
    int n_steps;                  /* Euler steps (upstream: 10); 0 → 10 */
    float cfg_rate;               /* guidance rate (upstream: 0.7); < 0 → 0.7 */
    const float *z;               /* [n_mels][L] initial noise, L = up_stride·(np + n); NULL → draw */
    vx_rng *rng;                  /* used when z == NULL: torch.randn_like(μ), continuing the stream */
    int nthreads;
    vx_st_writer *debug;          /* NULL, or receives intermediates under golden names (10_s3gen_flow) */
    double *t_encoder;            /* NULL, or receives the encoder + μ projection wall time (s) */
    double *t_steps;              /* NULL, or receives the total wall time of the n_steps estimator steps (s) */
    /* upstream's finalize=False (streaming): the encoder output of the last lookahead tokens, which
     * looked ahead into padding, is dropped (lookahead·up_stride frames) before μ; z is then
     * [n_mels][L − lookahead·up_stride]. 0 = finalize=True (the whole utterance). */
    int hold_lookahead;
} vx_s3gen_flow_req;

/* mel: malloc'd [n_mels][tm] (channel-major, like upstream's (1, 80, Tm)),
 * tm = L − tp (minus the held lookahead frames). The caller frees *mel. */
vocis_status vx_s3gen_flow_run(const vx_s3gen_flow *f, const vx_s3gen_flow_req *req, float **mel, int64_t *tm,
                               vx_err *err);

/* Convenience form of vx_s3gen_flow_run (cfg rate 0.7, no debug output). */
vocis_status vx_s3gen_flow_infer(const vx_s3gen_flow *f, const int64_t *speech_tokens, int64_t n,
                                 const int64_t *prompt_tokens, int64_t np, const float *prompt_feat, int64_t tp,
                                 const float *embedding, int n_steps, vx_rng *rng, const float *z, float **mel,
                                 int64_t *tm, int nthreads, vx_err *err);

/* Bench helper: one estimator evaluation on a CFG pair of length L with
 * random inputs (what each Euler step costs). */
vocis_status vx_s3gen_flow_bench_step(const vx_s3gen_flow *f, int64_t L, int reps, int nthreads, double *sec_per_step,
                                      vx_err *err);

#endif
