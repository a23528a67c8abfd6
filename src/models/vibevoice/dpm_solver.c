/* DPM-Solver++ schedule and VibeVoice's sample_speech_tokens (see dpm_solver.h). */
#include "models/vibevoice/dpm_solver.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ================================================================ schedule */

/* torch.linspace(start, end, n) in float32 (CPU kernel: first half from start, second half from end). */
static void linspace_f32(float *y, int n, float start, float end) {
    if (n == 1) {
        y[0] = start;
        return;
    }
    const float step = (end - start) / (float)(n - 1);
    const int half = n / 2;
    for (int i = 0; i < n; i++) y[i] = i < half ? start + step * (float)i : end - step * (float)(n - 1 - i);
}

/* Glide cosine ᾱ(τ), in double as Python evaluates it. */
static double alpha_bar(double t) {
    double c = cos((t + 0.008) / 1.008 * M_PI / 2);
    return pow(c, 2.0);
}

void vx_dpm_free(vx_dpm *d) {
    if (!d) return;
    free(d->alphas_cumprod);
    free(d->timesteps);
    free(d->sigmas);
    memset(d, 0, sizeof *d);
}

vocis_status vx_dpm_init(vx_dpm *d, const vx_vv_config *cfg, int n_steps, vx_err *err) {
    memset(d, 0, sizeof *d);
    const int T = cfg->diffusion.ddpm_num_steps;
    const char *sched = cfg->diffusion.ddpm_beta_schedule, *pt = cfg->diffusion.prediction_type;
    /* more than T − 1 steps would repeat timesteps (a zero step size, NaN in the second-order update) */
    const int max_steps = T - 1 < VX_DPM_MAX_STEPS ? T - 1 : VX_DPM_MAX_STEPS;
    if (T < 2) return vx_fail(err, VOCIS_E_ARG, "DPM-Solver: ddpm_num_steps %d must be at least 2", T);
    if (n_steps < 1 || n_steps > max_steps)
        return vx_fail(err, VOCIS_E_ARG, "DPM-Solver: %d inference steps out of range 1..%d", n_steps, max_steps);
    vx_dpm_pred pred;
    if (strcmp(pt, "v_prediction") == 0) pred = VX_DPM_V;
    else if (strcmp(pt, "epsilon") == 0) pred = VX_DPM_EPS;
    else if (strcmp(pt, "sample") == 0) pred = VX_DPM_SAMPLE;
    else
        return vx_fail(err, VOCIS_E_UNSUPPORTED, "DPM-Solver: prediction_type '%s' is not supported "
                       "(v_prediction, epsilon, sample)", pt);
    int kind = strcmp(sched, "cosine") == 0 || strcmp(sched, "squaredcos_cap_v2") == 0 ? 0 :
               strcmp(sched, "linear") == 0 ? 1 : strcmp(sched, "scaled_linear") == 0 ? 2 : -1;
    if (kind < 0)
        return vx_fail(err, VOCIS_E_UNSUPPORTED, "DPM-Solver: beta schedule '%s' is not supported "
                       "(cosine, squaredcos_cap_v2, linear, scaled_linear)", sched);
    d->n_train = T;
    d->n_steps = n_steps;
    d->pred = pred;
    d->alphas_cumprod = malloc(sizeof(float) * (size_t)T);
    d->timesteps = malloc(sizeof(int64_t) * (size_t)n_steps);
    d->sigmas = malloc(sizeof(float) * (size_t)(n_steps + 1));
    float *betas = malloc(sizeof(float) * (size_t)T);
    if (!d->alphas_cumprod || !d->timesteps || !d->sigmas || !betas) {
        free(betas);
        vx_dpm_free(d);
        return vx_fail(err, VOCIS_E_NOMEM, "out of memory (DPM-Solver schedule)");
    }
    if (kind == 0) { /* betas_for_alpha_bar: float64, then a float32 tensor */
        for (int i = 0; i < T; i++) {
            double b = 1.0 - alpha_bar((double)(i + 1) / T) / alpha_bar((double)i / T);
            betas[i] = (float)(b < 0.999 ? b : 0.999);
        }
    } else if (kind == 1) {
        linspace_f32(betas, T, 0.0001f, 0.02f);
    } else {
        linspace_f32(betas, T, (float)sqrt(0.0001), (float)sqrt(0.02));
        for (int i = 0; i < T; i++) betas[i] = betas[i] * betas[i];
    }
    /* alphas = 1 − β (float32); cumprod accumulates in float64 (torch CPU), each prefix stored as float32 */
    double acc = 1.0;
    for (int i = 0; i < T; i++) {
        acc *= (double)(1.0f - betas[i]);
        d->alphas_cumprod[i] = (float)acc;
    }
    free(betas);
    /* timesteps: np.linspace(0, T − 1, N + 1).round()[::-1][:-1] (lambda_min_clipped = −inf keeps all T);
     * sigmas: ((1 − ᾱ)/ᾱ)^0.5 in float32 at those timesteps, then 0 */
    const double step = (double)(T - 1) / n_steps;
    for (int i = 0; i < n_steps; i++) {
        const int k = n_steps - i;
        const double y = k == n_steps ? (double)(T - 1) : (double)k * step;
        const int64_t t = (int64_t)nearbyint(y); /* round half to even */
        d->timesteps[i] = t;
        const float ac = d->alphas_cumprod[t];
        d->sigmas[i] = sqrtf((1.0f - ac) / ac);
    }
    d->sigmas[n_steps] = 0.0f;
    return VOCIS_OK;
}

/* ================================================================== step */

/* VP parameterisation of a sigma, float32 as upstream's _sigma_to_alpha_sigma_t. */
static void alpha_sigma(float sigma, float *a, float *s) {
    *a = 1.0f / sqrtf(sigma * sigma + 1.0f);
    *s = sigma * *a;
}

void vx_dpm_step(const vx_dpm *d, int k, const float *model_out, const float *x, const float *x0_prev, float *x0,
                 float *x_next, int64_t n) {
    const int N = d->n_steps;
    float a_s, s_s, a_t, s_t;
    alpha_sigma(d->sigmas[k], &a_s, &s_s);
    alpha_sigma(d->sigmas[k + 1], &a_t, &s_t);
    /* convert_model_output (dpmsolver++: data prediction) */
    switch (d->pred) {
    case VX_DPM_V:
        for (int64_t i = 0; i < n; i++) x0[i] = a_s * x[i] - s_s * model_out[i];
        break;
    case VX_DPM_EPS:
        for (int64_t i = 0; i < n; i++) x0[i] = (x[i] - s_s * model_out[i]) / a_s;
        break;
    case VX_DPM_SAMPLE:
        memmove(x0, model_out, sizeof(float) * (size_t)n);
        break;
    }
    /* λ = ln α − ln σ (λ_t = +∞ at the final σ = 0) */
    const float l_s = logf(a_s) - logf(s_s), l_t = logf(a_t) - logf(s_t);
    const float h = l_t - l_s;
    const float c1 = s_t / s_s, c2 = a_t * (expf(-h) - 1.0f);
    if (k == 0 || k == N - 1 || !x0_prev) { /* first order (DDIM); final sigma 0 ⇒ x_next = x0 */
        for (int64_t i = 0; i < n; i++) x_next[i] = c1 * x[i] - c2 * x0[i];
        return;
    }
    /* multistep second order, midpoint */
    float a_p, s_p;
    alpha_sigma(d->sigmas[k - 1], &a_p, &s_p);
    const float l_p = logf(a_p) - logf(s_p);
    const float r0 = (l_s - l_p) / h, inv_r0 = 1.0f / r0, c3 = 0.5f * c2;
    for (int64_t i = 0; i < n; i++) {
        const float d1 = inv_r0 * (x0[i] - x0_prev[i]);
        x_next[i] = (c1 * x[i] - c2 * x0[i]) - c3 * d1;
    }
}

/* ================================================================ sampler */

#define CHUNK_STEPS 20 /* steps whose modulations are computed in one batched call */

vocis_status vx_vv_sample_latents(const vx_vv_diffhead *h, const vx_dpm *d, const vx_vv_sample_req *q, int n,
                                  int nthreads, vx_err *err) {
    const int64_t H = h->hidden, L = h->latent, W = vx_vv_diffhead_mod_width(h);
    const int N = d->n_steps;
    if (n <= 0) return VOCIS_OK;
    if (N < 1) return vx_fail(err, VOCIS_E_ARG, "sample_speech_tokens: scheduler has no steps");
    for (int i = 0; i < n; i++) {
        if (!isfinite(q[i].cfg_scale)) return vx_fail(err, VOCIS_E_ARG, "sample_speech_tokens: cfg_scale is not finite");
        if (!q[i].init_noise && !q[i].rng)
            return vx_fail(err, VOCIS_E_ARG, "sample_speech_tokens: needs an rng or an initial noise");
    }
    const int K = N < CHUNK_STEPS ? N : CHUNK_STEPS;
    const int64_t R = 2 * (int64_t)n; /* head rows: each request's cond and uncond */
    /* workspace: cproj, cond [R][H]; temb [K][H]; s [K][R][H]; mods [K][R][W]; six [R][L] arrays; t [K] */
    const size_t nf = (size_t)(2 * R * H + (int64_t)K * H + (int64_t)K * R * H + (int64_t)K * R * W + 6 * R * L + K);
    float *ws = malloc(sizeof(float) * nf);
    if (!ws) return vx_fail(err, VOCIS_E_NOMEM, "out of memory (sample_speech_tokens)");
    float *cproj = ws, *cond = cproj + R * H, *temb = cond + R * H, *s = temb + K * H, *mods = s + K * R * H,
          *x = mods + K * R * W, *xin = x + R * L, *hout = xin + R * L, *eps = hout + R * L, *x0 = eps + R * L,
          *x0p = x0 + R * L, *tk = x0p + R * L;
    vocis_status st = VOCIS_OK;
    for (int i = 0; i < n; i++) {
        float *xi = x + 2 * i * L;
        memcpy(cond + 2 * i * H, q[i].pos_cond, sizeof(float) * (size_t)H);
        memcpy(cond + (2 * i + 1) * H, q[i].neg_cond, sizeof(float) * (size_t)H);
        /* speech = randn(2, latent): both rows evolve through the scheduler, only row 0 feeds the head */
        if (q[i].init_noise) memcpy(xi, q[i].init_noise, sizeof(float) * (size_t)(2 * L));
        else vx_rng_randn(q[i].rng, xi, (size_t)(2 * L));
        if (q[i].trace && q[i].trace->init_noise) memcpy(q[i].trace->init_noise, xi, sizeof(float) * (size_t)(2 * L));
    }
    /* every linear row-exact (the request's rows get the same bits whatever else is in the call) */
    vx_linear_rows(cproj, cond, R, &h->cond_proj, NULL, nthreads); /* fixed for the whole call */
    for (int k0 = 0; k0 < N && st == VOCIS_OK; k0 += K) {
        const int nk = N - k0 < K ? N - k0 : K;
        for (int j = 0; j < nk; j++) tk[j] = (float)d->timesteps[k0 + j];
        if ((st = vx_vv_diffhead_temb(h, tk, nk, temb, nthreads, err))) break;
        for (int j = 0; j < nk; j++)
            for (int64_t r = 0; r < R; r++) {
                float *sr = s + ((int64_t)j * R + r) * H;
                const float *cr = cproj + r * H, *tr = temb + (int64_t)j * H;
                for (int64_t i = 0; i < H; i++) sr[i] = cr[i] + tr[i];
            }
        vx_silu(s, (int64_t)nk * R * H);
        if ((st = vx_vv_diffhead_modulation(h, s, (int64_t)nk * R, mods, nthreads, err))) break;
        for (int j = 0; j < nk && st == VOCIS_OK; j++) {
            const int k = k0 + j;
            for (int i = 0; i < n; i++) { /* cat([half, half]) */
                memcpy(xin + 2 * i * L, x + 2 * i * L, sizeof(float) * (size_t)L);
                memcpy(xin + (2 * i + 1) * L, x + 2 * i * L, sizeof(float) * (size_t)L);
            }
            if ((st = vx_vv_diffhead_body(h, xin, mods + (int64_t)j * R * W, R, hout, nthreads, err))) break;
            for (int i = 0; i < n; i++) {
                const size_t o = (size_t)k * 2 * L, sz = sizeof(float) * (size_t)(2 * L), r0 = (size_t)(2 * i * L);
                const float *hi = hout + r0;
                float *ei = eps + r0, *xi = x + r0;
                for (int64_t c = 0; c < L; c++) {
                    const float cv = hi[c], u = hi[L + c];
                    ei[c] = ei[L + c] = u + q[i].cfg_scale * (cv - u);
                }
                vx_vv_sample_trace *tr = q[i].trace;
                if (tr) {
                    if (tr->sample_in) memcpy(tr->sample_in + o, xi, sz);
                    if (tr->head_input_x) memcpy(tr->head_input_x + o, xin + r0, sz);
                    if (tr->head_output) memcpy(tr->head_output + o, hi, sz);
                    if (tr->guided_eps) memcpy(tr->guided_eps + o, ei, sz);
                }
                vx_dpm_step(d, k, ei, xi, k > 0 ? x0p + r0 : NULL, x0 + r0, xi, 2 * L);
                memcpy(x0p + r0, x0 + r0, sz);
                if (tr) {
                    if (tr->x0_pred) memcpy(tr->x0_pred + o, x0 + r0, sz);
                    if (tr->sample_out) memcpy(tr->sample_out + o, xi, sz);
                }
            }
        }
    }
    for (int i = 0; i < n && st == VOCIS_OK; i++) memcpy(q[i].latent, x + 2 * i * L, sizeof(float) * (size_t)L);
    free(ws);
    return st;
}

vocis_status vx_vv_sample_latent(const vx_vv_diffhead *h, const vx_dpm *d, const float *pos_cond,
                                 const float *neg_cond, float cfg_scale, vx_rng *rng, const float *init_noise,
                                 float *latent, vx_vv_sample_trace *trace, int nthreads, vx_err *err) {
    const vx_vv_sample_req q = {pos_cond, neg_cond, cfg_scale, rng, init_noise, latent, trace};
    return vx_vv_sample_latents(h, d, &q, 1, nthreads, err);
}

int vx_dpm_same(const vx_dpm *a, const vx_dpm *b) {
    return a == b || (a->n_train == b->n_train && a->n_steps == b->n_steps && a->pred == b->pred &&
                      !memcmp(a->timesteps, b->timesteps, sizeof(int64_t) * (size_t)a->n_steps) &&
                      !memcmp(a->sigmas, b->sigmas, sizeof(float) * (size_t)(a->n_steps + 1)) &&
                      !memcmp(a->alphas_cumprod, b->alphas_cumprod, sizeof(float) * (size_t)a->n_train));
}

void vx_vv_sample_latents_any(const vx_vv_diffhead *h, const vx_dpm *const *d, const vx_vv_sample_req *q, int n,
                              int nthreads, vocis_status *st, vx_err *err) {
    const size_t nn = (size_t)(n > 0 ? n : 1);
    vx_vv_sample_req *g = malloc(sizeof *g * nn);
    int *who = malloc(sizeof *who * nn);
    char *taken = calloc(nn, 1);
    for (int i = 0; i < n; i++) st[i] = VOCIS_OK;
    if (!g || !who || !taken) {
        for (int i = 0; i < n; i++) st[i] = vx_fail(&err[i], VOCIS_E_NOMEM, "out of memory (sample_speech_tokens)");
        n = 0;
    }
    for (int i = 0; i < n; i++) {
        if (taken[i]) continue;
        int k = 0;
        for (int j = i; j < n; j++) /* the group of request i's schedule */
            if (!taken[j] && vx_dpm_same(d[i], d[j])) taken[j] = 1, who[k] = j, g[k++] = q[j];
        vx_err e = {0};
        const vocis_status gs = vx_vv_sample_latents(h, d[i], g, k, nthreads, &e);
        for (int j = 0; j < k && gs; j++) st[who[j]] = gs, err[who[j]] = e;
    }
    free(g), free(who), free(taken);
}
