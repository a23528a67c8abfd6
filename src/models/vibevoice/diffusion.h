/* VibeVoice speech connectors and diffusion prediction head (spec §7, §8).
 *
 *   connector:  y = fc2( RMSNorm_1e-6( fc1(x) ) )            fc1: in → H, fc2: H → H, both with bias
 *
 *   head(x, t, c):                                           all linears bias-free
 *     x0 = noisy_images_proj(x)                              latent → H
 *     cc = cond_proj(c) + t_embedder(t)                      t_embedder: [cos, sin](t·freq) → mlp.0, SiLU, mlp.2
 *     per layer: shift|scale|gate = adaLN(SiLU(cc))          H → 3H
 *                x0 += gate · down( SiLU(gate_proj(u)) ⊙ up_proj(u) ),  u = RMSNorm(x0)·(1 + scale) + shift
 *     final:     shift|scale = adaLN(SiLU(cc));  out = linear( RMSNorm_noaffine(x0)·(1 + scale) + shift )
 *
 * Every dimension comes from the tensor shapes (checked against config.json
 * when a config is given); weights stay in their file dtype. */
#ifndef VX_VV_DIFFUSION_H
#define VX_VV_DIFFUSION_H

#include <stdint.h>

#include "kernels/kernels.h"
#include "models/synthetic.h"
#include "models/vibevoice/config.h"

/* ---- SpeechConnector ---- */

typedef struct vx_vv_connector {
    int64_t in_dim, hidden;
    vx_mat fc1, fc2;       /* [H, in], [H, H] (file dtype) */
    float *b1, *b2, *norm; /* [H] each, owned float32 (one block) */
    float eps;             /* 1e-6 (hard-coded upstream) */
} vx_vv_connector;

/* prefix: "model.acoustic_connector." or "model.semantic_connector.". */
vocis_status vx_vv_connector_load(const vx_weights *w, const char *prefix, vx_vv_connector *c, vx_err *err);
void vx_vv_connector_free(vx_vv_connector *c);
/* y[rows][H] = connector(x[rows][in]); y must not alias x. Weights are read
 * once for all rows (a whole voice prompt is one call). */
vocis_status vx_vv_connector_run(const vx_vv_connector *c, const float *x, int64_t rows, float *y, int nthreads,
                                 vx_err *err);

/* ---- diffusion head ---- */

typedef struct vx_vv_head_layer {
    float *norm;           /* [H] owned */
    vx_mat ada;            /* adaLN_modulation.1: [3H, H] (shift | scale | gate) */
    vx_mat gate, up, down; /* [F, H], [F, H], [H, F] */
} vx_vv_head_layer;

typedef struct vx_vv_diffhead {
    int64_t hidden;  /* H (= LM hidden size) */
    int64_t ffn;     /* F = int(H · head_ffn_ratio) */
    int64_t latent;  /* 64 */
    int64_t freq;    /* timestep frequency embedding size (256) */
    int n_layers;
    float eps;       /* rms_norm_eps (1e-5) */
    vx_mat x_proj;   /* noisy_images_proj: [H, latent] */
    vx_mat cond_proj;/* [H, H] */
    vx_mat t_mlp0;   /* t_embedder.mlp.0: [H, freq] */
    vx_mat t_mlp2;   /* t_embedder.mlp.2: [H, H] */
    vx_vv_head_layer *layers;
    vx_mat final_ada;    /* final_layer.adaLN_modulation.1: [2H, H] (shift | scale) */
    vx_mat final_linear; /* final_layer.linear: [latent, H] */
    float *freqs;        /* [freq / 2]: exp(−ln(10000)·j/(freq/2)) in float32 as torch */
    float *owned;        /* norm weights + freqs */
    vx_weights *own_w;   /* weight set owned by a random head, else NULL */
} vx_vv_diffhead;

/* Weights under "model.prediction_head."; cfg (may be NULL) supplies
 * rms_norm_eps and is cross-checked against the shapes. */
vocis_status vx_vv_diffhead_load(const vx_weights *w, const vx_vv_config *cfg, vx_vv_diffhead **out, vx_err *err);
/* Random weights at the given dims (1.5B: 1536, 4608, 4 layers, latent 64) in dtype dt, for benchmarks. */
vocis_status vx_vv_diffhead_random(int64_t hidden, int64_t ffn, int n_layers, int64_t latent, vx_dtype dt,
                                   uint64_t seed, vx_vv_diffhead **out, vx_err *err);
void vx_vv_diffhead_free(vx_vv_diffhead *h);

/* out[rows][latent] = head(x[rows][latent], t, cond[rows][H]) (v- or ε-prediction,
 * whatever the checkpoint was trained for); t is the same for all rows. */
vocis_status vx_vv_diffhead_run(const vx_vv_diffhead *h, const float *x, float t, const float *cond, int64_t rows,
                                float *out, int nthreads, vx_err *err);

/* ---- building blocks of the sampler (vx_vv_sample_latent, dpm_solver.h) ----
 * The modulation (adaLN) of every layer depends only on the condition and t,
 * never on x, so the sampler computes it for many steps in one batched call
 * and then runs only the x-dependent part per step. */

/* temb[n][H] = t_embedder(t[i]). */
vocis_status vx_vv_diffhead_temb(const vx_vv_diffhead *h, const float *t, int64_t n, float *temb, int nthreads,
                                 vx_err *err);
/* Modulation of `rows` rows: s[rows][H] = SiLU(cond_proj(c) + temb) (overwritten: used as scratch);
 * mods[rows][mod_width(h)] receives, per row, layer 0..L−1 (3H each: shift|scale|gate) then
 * the final layer (2H: shift|scale). */
int64_t vx_vv_diffhead_mod_width(const vx_vv_diffhead *h);
vocis_status vx_vv_diffhead_modulation(const vx_vv_diffhead *h, const float *s, int64_t rows, float *mods,
                                       int nthreads, vx_err *err);
/* The x-dependent part: out[rows][latent] from x[rows][latent] and per-row modulations. */
vocis_status vx_vv_diffhead_body(const vx_vv_diffhead *h, const float *x, const float *mods, int64_t rows,
                                 float *out, int nthreads, vx_err *err);

/* Adds the random tensors of model.prediction_head.* (and the connectors:
 * acoustic in = latent, semantic in = sem_dim when sem_dim > 0) to a
 * synthetic checkpoint builder (models/synthetic.h). */
vocis_status vx_vv_diffusion_synth_add(vx_synth *s, int64_t hidden, int64_t ffn, int n_layers, int64_t latent,
                                       int64_t sem_dim, vx_dtype dt, vx_err *err);

#endif
