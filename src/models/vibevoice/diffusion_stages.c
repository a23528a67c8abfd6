/* Stage harness entries for the VibeVoice connectors (golden 05_connectors)
 * and the diffusion head + DPM-Solver++ sampler (golden 07_diffusion). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/stages.h"
#include "models/vibevoice/diffusion.h"
#include "models/vibevoice/dpm_solver.h"
#include "models/vibevoice/lm.h"

/* ---------------------------------------------------------------- vv-connectors */

/* One connector over `name_in` ([..., in]) -> `name_out` ([..., H]), when the input is present. */
static vocis_status run_connector(const vx_stage_args *a, const vx_weights *w, const char *prefix,
                                  const char *name_in, const char *name_out, vx_err *err) {
    float *x = NULL, *y = NULL;
    vx_tensor t;
    VX_TRY(vx_stage_in_f32(a, name_in, -1, NULL, &x, &t, err));
    char fc1[256];
    snprintf(fc1, sizeof fc1, "%sfc1.weight", prefix);
    vocis_status st = VOCIS_OK;
    vx_vv_connector c = {0};
    if (!vx_weights_has(w, fc1)) {
        st = vx_fail(err, VOCIS_E_UNSUPPORTED, "%s: input '%s' given but the model has no '%s' (no %s)",
                     vx_weights_path(w), name_in, fc1, prefix);
        goto done;
    }
    if ((st = vx_vv_connector_load(w, prefix, &c, err))) goto done;
    if (t.ndim < 1 || t.shape[t.ndim - 1] != c.in_dim) {
        char s[128];
        st = vx_fail(err, VOCIS_E_SHAPE, "%s: input '%s' has shape %s, expected [..., %lld] (%sfc1 input width)",
                     vx_st_path(a->in), name_in, vx_shape_str(&t, s, sizeof s), (long long)c.in_dim, prefix);
        goto done;
    }
    const int64_t rows = vx_numel(&t) / c.in_dim;
    if (!(y = malloc(sizeof(float) * (size_t)(rows * c.hidden + 1)))) {
        st = vx_fail(err, VOCIS_E_NOMEM, "out of memory");
        goto done;
    }
    if ((st = vx_vv_connector_run(&c, x, rows, y, a->nthreads, err))) goto done;
    int64_t shape[VX_MAX_DIMS];
    for (int i = 0; i < t.ndim; i++) shape[i] = t.shape[i];
    shape[t.ndim - 1] = c.hidden;
    st = vx_stage_out_f32(a, name_out, t.ndim, shape, y, err);
done:
    vx_vv_connector_free(&c);
    free(x), free(y);
    return st;
}

vocis_status vx_stage_vv_connectors(const vx_stage_args *a, vx_err *err) {
    VX_TRY(vx_stage_no_options(a, err));
    const int has_a = a->in && vx_st_find(a->in, "acoustic_in"), has_s = a->in && vx_st_find(a->in, "semantic_in");
    if (!has_a && !has_s)
        return vx_fail(err, VOCIS_E_ARG, "vv-connectors needs input 'acoustic_in' and/or 'semantic_in' in --in");
    vx_weights *w;
    VX_TRY(vx_vv_weights_open(a->model_dir, &w, err));
    vx_weights_set_precision(w, a->precision);
    vocis_status st = VOCIS_OK;
    if (has_a) st = run_connector(a, w, "model.acoustic_connector.", "acoustic_in", "acoustic_out", err);
    if (!st && has_s) st = run_connector(a, w, "model.semantic_connector.", "semantic_in", "semantic_out", err);
    vx_weights_close(w);
    return st;
}

/* ---------------------------------------------------------------- vv-diffusion */

static vocis_status parse_long(const char *opt, const char *s, long lo, long hi, long *v, vx_err *err) {
    char *end;
    long x = strtol(s, &end, 10);
    if (!*s || *end || x < lo || x > hi)
        return vx_fail(err, VOCIS_E_ARG, "option %s: invalid value '%s' (%ld..%ld)", opt, s, lo, hi);
    *v = x;
    return VOCIS_OK;
}

/* One sampling call of `steps` steps, written as sN_* (N = steps). Without a seed the
 * initial noise is the input's sN_loop_init_noise. */
static vocis_status sample_loop(const vx_stage_args *a, const vx_vv_config *cfg, const vx_vv_diffhead *h, long steps,
                                long seed, double cfg_scale, const float *pos, const float *neg, vx_err *err) {
    const int64_t L = h->latent, N = steps;
    char pfx[16], name[64];
    snprintf(pfx, sizeof pfx, "s%ld_", steps);
    vx_dpm dpm;
    VX_TRY(vx_dpm_init(&dpm, cfg, (int)steps, err));
    float *noise = NULL, *buf = NULL;
    vocis_status st = VOCIS_OK;
    vx_rng rng;
    if (seed >= 0) vx_rng_seed(&rng, (uint64_t)seed);
    else {
        snprintf(name, sizeof name, "%sloop_init_noise", pfx);
        if (!vx_st_find(a->in, name)) {
            st = vx_fail(err, VOCIS_E_ARG, "%s: missing input tensor '%s' (the initial noise for %ld steps; "
                         "or draw it with --seed N)", vx_st_path(a->in), name, steps);
            goto done;
        }
        if ((st = vx_stage_in_f32(a, name, VX_DIMS(2, L), &noise, NULL, err))) goto done;
    }
    const size_t per = (size_t)(N * 2 * L);
    if (!(buf = malloc(sizeof(float) * (6 * per + 3 * (size_t)L)))) {
        st = vx_fail(err, VOCIS_E_NOMEM, "out of memory");
        goto done;
    }
    vx_vv_sample_trace tr = {buf, buf + per, buf + 2 * per, buf + 3 * per, buf + 4 * per, buf + 5 * per,
                             buf + 6 * per};
    float *result = buf + 6 * per + 2 * L;
    if ((st = vx_vv_sample_latent(h, &dpm, pos, neg, (float)cfg_scale, seed >= 0 ? &rng : NULL, noise, result, &tr,
                                  a->nthreads, err)))
        goto done;
    static const char *const names[6] = {"head_input_x", "head_output", "guided_eps",
                                         "x0_pred",      "sample_in",   "sample_out"};
    const float *arrs[6] = {tr.head_input_x, tr.head_output, tr.guided_eps, tr.x0_pred, tr.sample_in, tr.sample_out};
    for (int i = 0; i < 6 && !st; i++) {
        snprintf(name, sizeof name, "%sloop_%s", pfx, names[i]);
        st = vx_stage_out_f32(a, name, VX_DIMS(N, 2, L), arrs[i], err);
    }
#define OUT_F32(suffix, ...) \
    (snprintf(name, sizeof name, "%s%s", pfx, suffix), vx_stage_out_f32(a, name, __VA_ARGS__, err))
    if (!st) st = OUT_F32("loop_init_noise", VX_DIMS(2, L), tr.init_noise);
    if (!st) st = OUT_F32("loop_result", VX_DIMS(1, L), result);
    if (!st) st = OUT_F32("sched_sigmas", VX_DIMS(N + 1), dpm.sigmas);
    if (!st) st = OUT_F32("sched_alphas_cumprod", VX_DIMS(dpm.n_train), dpm.alphas_cumprod);
#undef OUT_F32
    if (!st) {
        snprintf(name, sizeof name, "%sloop_timesteps", pfx);
        st = vx_stage_out_i64(a, name, VX_DIMS(N), dpm.timesteps, err);
    }
done:
    free(noise), free(buf);
    vx_dpm_free(&dpm);
    return st;
}

vocis_status vx_stage_vv_diffusion(const vx_stage_args *a, vx_err *err) {
    long steps = 0, seed = -1;
    double cfg_scale = 1.3;
    for (int i = 0; i < a->argc; i++) {
        const char *o = a->argv[i];
        const int has_v = i + 1 < a->argc;
        if (strcmp(o, "--steps") == 0 && has_v) {
            VX_TRY(parse_long(o, a->argv[++i], 1, VX_DPM_MAX_STEPS, &steps, err));
        } else if (strcmp(o, "--seed") == 0 && has_v) {
            VX_TRY(parse_long(o, a->argv[++i], 0, 0x7fffffffL, &seed, err));
        } else if (strcmp(o, "--cfg-scale") == 0 && has_v) {
            char *end;
            const char *s = a->argv[++i];
            cfg_scale = strtod(s, &end);
            if (!*s || *end || !isfinite(cfg_scale) || fabs(cfg_scale) > 1e6)
                return vx_fail(err, VOCIS_E_ARG, "option --cfg-scale: invalid value '%s'", s);
        } else {
            return vx_fail(err, VOCIS_E_ARG,
                           "unknown option '%s' (stage options: --steps N, --cfg-scale F, --seed N)", o);
        }
    }
    /* which sampling runs: --steps N, else one per sNN_loop_init_noise in the input, else 10 */
    long runs[64];
    int nruns = 0;
    if (steps > 0) runs[nruns++] = steps;
    for (int i = 0; steps == 0 && a->in && i < vx_st_count(a->in) && nruns < 64; i++) {
        const char *n = vx_st_name(a->in, i);
        long k;
        int used = 0;
        if (sscanf(n, "s%ld_loop_init_noise%n", &k, &used) == 1 && n[used] == '\0' && k >= 1 && k <= VX_DPM_MAX_STEPS)
            runs[nruns++] = k;
    }
    if (nruns == 0) runs[nruns++] = 10; /* needs s10_loop_init_noise or --seed */
    vx_vv_config cfg;
    VX_TRY(vx_vv_config_load(a->model_dir, &cfg, err));
    vx_weights *w = NULL;
    vx_vv_diffhead *h = NULL;
    float *sx = NULL, *sc = NULL, *pos = NULL, *neg = NULL;
    vocis_status st = vx_vv_weights_open(a->model_dir, &w, err);
    if (!st) vx_weights_set_precision(w, a->precision);
    if (!st) st = vx_vv_diffhead_load(w, &cfg, &h, err);
    if (st) goto done;
    const int64_t H = h->hidden, L = h->latent;

    /* single head calls (optional: single_x with single_condition) */
    if (a->in && (vx_st_find(a->in, "single_x") || vx_st_find(a->in, "single_condition"))) {
        vx_tensor t;
        if ((st = vx_stage_in_f32(a, "single_x", VX_DIMS(-1, L), &sx, &t, err))) goto done;
        const int64_t R = t.shape[0];
        if ((st = vx_stage_in_f32(a, "single_condition", VX_DIMS(R, H), &sc, NULL, err))) goto done;
        float *out = malloc(sizeof(float) * (size_t)(R * L + 1));
        if (!out) {
            st = vx_fail(err, VOCIS_E_NOMEM, "out of memory");
            goto done;
        }
        static const int ts[3] = {999, 500, 10};
        for (int i = 0; i < 3 && !st; i++) {
            char name[64];
            snprintf(name, sizeof name, "single_eps_t%d", ts[i]);
            st = vx_vv_diffhead_run(h, sx, (float)ts[i], sc, R, out, a->nthreads, err);
            if (!st) st = vx_stage_out_f32(a, name, VX_DIMS(R, L), out, err);
        }
        free(out);
        if (st) goto done;
    }

    if ((st = vx_stage_in_f32(a, "pos_condition", VX_DIMS(1, H), &pos, NULL, err)) ||
        (st = vx_stage_in_f32(a, "neg_condition", VX_DIMS(1, H), &neg, NULL, err)))
        goto done;
    for (int r = 0; r < nruns && !st; r++) st = sample_loop(a, &cfg, h, runs[r], seed, cfg_scale, pos, neg, err);
done:
    free(sx), free(sc), free(pos), free(neg);
    vx_vv_diffhead_free(h);
    if (w) vx_weights_close(w);
    return st;
}
