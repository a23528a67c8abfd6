/* DPM-Solver++ (2M, midpoint) noise schedule and sampler of VibeVoice (spec §9),
 * as diffusers' DPMSolverMultistepScheduler with VibeVoice's arguments
 * (num_train_timesteps, beta_schedule, prediction_type from config.json; all
 * else default: solver_order 2, dpmsolver++, midpoint, lower_order_final,
 * final_sigmas_type "zero", linspace spacing), plus sample_speech_tokens:
 * CFG on the head output with one randn(2, latent) per call, row 0 used.
 *
 * Step k of N: first order when k == 0 or k == N − 1 (final sigma 0 ⇒ the
 * result is the predicted x0), second order otherwise. Scalar coefficients
 * and the update are float32, evaluated in the same order as upstream. */
#ifndef VX_VV_DPM_SOLVER_H
#define VX_VV_DPM_SOLVER_H

#include <stdint.h>

#include "base/rng.h"
#include "models/vibevoice/config.h"
#include "models/vibevoice/diffusion.h"

#define VX_DPM_MAX_STEPS 999

typedef enum { VX_DPM_V = 0, VX_DPM_EPS = 1, VX_DPM_SAMPLE = 2 } vx_dpm_pred;

typedef struct vx_dpm {
    int n_train;           /* num_train_timesteps (1000) */
    int n_steps;           /* N */
    vx_dpm_pred pred;      /* prediction_type */
    float *alphas_cumprod; /* [n_train] float32 */
    int64_t *timesteps;    /* [N], descending */
    float *sigmas;         /* [N + 1], sigma at each timestep, then 0 */
} vx_dpm;

/* Schedule from cfg->diffusion (ddpm_num_steps, ddpm_beta_schedule: cosine /
 * squaredcos_cap_v2 / linear / scaled_linear, prediction_type) for n_steps
 * in 1..min(VX_DPM_MAX_STEPS, ddpm_num_steps − 1) (more would repeat timesteps). */
vocis_status vx_dpm_init(vx_dpm *d, const vx_vv_config *cfg, int n_steps, vx_err *err);
void vx_dpm_free(vx_dpm *d);
/* 1 when both schedules are the same (their sampling calls may share one batch). */
int vx_dpm_same(const vx_dpm *a, const vx_dpm *b);

/* One scheduler step k on n values (both halves of the CFG batch: pass 2·latent):
 * x0[n] = convert_model_output(model_out, x) (data prediction); then
 * x_next[n] = the DPM-Solver++ update from x, x0 and (k > 0) x0_prev, the
 * previous step's x0. x_next may alias x. */
void vx_dpm_step(const vx_dpm *d, int k, const float *model_out, const float *x, const float *x0_prev, float *x0,
                 float *x_next, int64_t n);

/* Per-step tensors of one sampling call, under golden 07's names
 * (sN_loop_*): each array [N][2][latent], caller-allocated, any may be NULL. */
typedef struct vx_vv_sample_trace {
    float *head_input_x; /* [x, x] fed to the head */
    float *head_output;  /* raw head output: cond row 0, uncond row 1 */
    float *guided_eps;   /* uncond + cfg·(cond − uncond), both rows */
    float *x0_pred;      /* convert_model_output */
    float *sample_in;    /* sample before the step (both rows) */
    float *sample_out;   /* prev_sample */
    float *init_noise;   /* [2][latent]: the noise used */
} vx_vv_sample_trace;

/* sample_speech_tokens for one frame: latent[latent] from the positive and
 * negative conditions (each [H]) with guidance cfg_scale. The initial noise
 * is init_noise [2][latent] when given, else ONE rng draw torch.randn(2, latent)
 * (both rows drawn, row 0 used, as upstream). Each step runs the cond and
 * uncond rows as one 2-row head call; the adaLN modulations of all steps are
 * computed up front in batched calls (they depend only on condition and t). */
vocis_status vx_vv_sample_latent(const vx_vv_diffhead *h, const vx_dpm *d, const float *pos_cond,
                                 const float *neg_cond, float cfg_scale, vx_rng *rng, const float *init_noise,
                                 float *latent, vx_vv_sample_trace *trace, int nthreads, vx_err *err);

/* vx_vv_sample_latent of n requests at once on one schedule (continuous batching): every
 * head call carries the 2n cond/uncond rows, so the head's weights are read once per step for
 * all of them. Each request's latent, draws and trace are those of its own call alone (the
 * linears are row-exact); vx_vv_sample_latent is the n = 1 case. */
typedef struct vx_vv_sample_req {
    const float *pos_cond, *neg_cond; /* [H] each */
    float cfg_scale;
    vx_rng *rng;
    const float *init_noise; /* [2][latent] or NULL */
    float *latent;           /* [latent] out */
    vx_vv_sample_trace *trace;
} vx_vv_sample_req;
vocis_status vx_vv_sample_latents(const vx_vv_diffhead *h, const vx_dpm *d, const vx_vv_sample_req *q, int n,
                                  int nthreads, vx_err *err);
/* The same for requests of any schedules (request i on d[i]): those on the same schedule
 * (vx_dpm_same) share the calls. st[i] / err[i]: request i's failure. */
void vx_vv_sample_latents_any(const vx_vv_diffhead *h, const vx_dpm *const *d, const vx_vv_sample_req *q, int n,
                              int nthreads, vocis_status *st, vx_err *err);

#endif
