/* VibeVoice DPM-Solver++ schedule and sampler:
 *  - cosine schedule values, timesteps and sigmas of spec §9.1-9.2; range checks;
 *  - vx_dpm_step against a float64 transcription of the update rules (first order at
 *    steps 0 and N−1, second-order midpoint in between; final step returns x0);
 *  - vx_vv_sample_latent (batched modulations, chunked past 20 steps) against a plain loop of
 *    2-row vx_vv_diffhead_run calls; one randn(2, latent) consumed per call;
 *  - timestep frequencies as torch computes them; head rows are independent of the batch;
 *    config mismatches are refused. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "models/vibevoice/dpm_solver.h"
#include "models/vibevoice/lm.h"
#include "testlib.h"

static vx_vv_config tiny_cfg(void) {
    vx_vv_config cfg;
    vx_err err = {0};
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", tl_path("vibevoice/model"));
    if (vx_vv_config_load(dir, &cfg, &err)) {
        fprintf(stderr, "config: %s\n", err.msg);
        exit(1);
    }
    return cfg;
}

static int rel_close(double a, double b, double rtol) { return fabs(a - b) <= rtol * fabs(b); }

static void test_schedule(const vx_vv_config *cfg) {
    vx_err err = {0};
    vx_dpm d;
    CHECK_MSG(vx_dpm_init(&d, cfg, 10, &err) == VOCIS_OK, "%s", err.msg);
    CHECK(d.n_train == 1000 && d.pred == VX_DPM_V);
    CHECK(rel_close(d.alphas_cumprod[0], 0.99995869, 1e-7));
    CHECK(rel_close(d.alphas_cumprod[500], 0.49228504, 1e-6));
    CHECK(rel_close(d.alphas_cumprod[999], 2.4287e-9, 1e-4));
    static const int64_t t10[10] = {999, 899, 799, 699, 599, 500, 400, 300, 200, 100};
    static const double s10[11] = {20291.3,  6.36459,  3.10373,  1.98070,  1.39075, 1.01555,
                                   0.740281, 0.522360, 0.337461, 0.171044, 0};
    for (int i = 0; i < 10; i++) CHECK_MSG(d.timesteps[i] == t10[i], "t[%d] = %lld", i, (long long)d.timesteps[i]);
    for (int i = 0; i < 10; i++) CHECK_MSG(rel_close(d.sigmas[i], s10[i], 1e-5), "sigma[%d] = %g", i, d.sigmas[i]);
    CHECK(d.sigmas[10] == 0.0f);
    vx_dpm_free(&d);

    static const int64_t t5[5] = {999, 799, 599, 400, 200};
    static const int64_t t20[20] = {999, 949, 899, 849, 799, 749, 699, 649, 599, 549,
                                    500, 450, 400, 350, 300, 250, 200, 150, 100, 50};
    CHECK(vx_dpm_init(&d, cfg, 5, &err) == VOCIS_OK);
    CHECK(memcmp(d.timesteps, t5, sizeof t5) == 0);
    vx_dpm_free(&d);
    CHECK(vx_dpm_init(&d, cfg, 20, &err) == VOCIS_OK);
    CHECK(memcmp(d.timesteps, t20, sizeof t20) == 0);
    vx_dpm_free(&d);
    CHECK(vx_dpm_init(&d, cfg, 1, &err) == VOCIS_OK);
    CHECK(d.timesteps[0] == 999 && d.sigmas[1] == 0.0f);
    vx_dpm_free(&d);
    /* every admissible N gives strictly decreasing timesteps */
    for (int n = 2; n <= 999; n += 37) {
        CHECK(vx_dpm_init(&d, cfg, n, &err) == VOCIS_OK);
        for (int i = 1; i < n; i++) CHECK_MSG(d.timesteps[i] < d.timesteps[i - 1], "N %d, i %d", n, i);
        vx_dpm_free(&d);
    }
    CHECK(vx_dpm_init(&d, cfg, 0, &err) == VOCIS_E_ARG);
    CHECK(vx_dpm_init(&d, cfg, 1000, &err) == VOCIS_E_ARG);
    vx_vv_config bad = *cfg;
    snprintf(bad.diffusion.ddpm_beta_schedule, sizeof bad.diffusion.ddpm_beta_schedule, "sigmoid");
    CHECK(vx_dpm_init(&d, &bad, 10, &err) == VOCIS_E_UNSUPPORTED);
    CHECK(strstr(err.msg, "sigmoid") != NULL);
    bad = *cfg;
    snprintf(bad.diffusion.prediction_type, sizeof bad.diffusion.prediction_type, "flow");
    CHECK(vx_dpm_init(&d, &bad, 10, &err) == VOCIS_E_UNSUPPORTED);
    bad = *cfg;
    snprintf(bad.diffusion.ddpm_beta_schedule, sizeof bad.diffusion.ddpm_beta_schedule, "linear");
    CHECK(vx_dpm_init(&d, &bad, 10, &err) == VOCIS_OK);
    CHECK(rel_close(d.alphas_cumprod[0], 0.9999, 1e-6)); /* 1 − beta_start */
    vx_dpm_free(&d);
}

/* float64 DPM-Solver++ (v-prediction), the formulas of upstream's step(). */
static void ref_alpha_sigma(double sg, double *a, double *s) {
    *a = 1.0 / sqrt(sg * sg + 1.0);
    *s = sg * *a;
}

static void test_step(const vx_vv_config *cfg, int N) {
    vx_err err = {0};
    vx_dpm d;
    CHECK(vx_dpm_init(&d, cfg, N, &err) == VOCIS_OK);
    enum { n = 24 };
    float x[n], v[n], x0[n], x0p[n];
    double rx[n], rx0p[n];
    tl_fill_random(x, n, 11);
    for (int i = 0; i < n; i++) rx[i] = x[i];
    double maxerr = 0;
    for (int k = 0; k < N; k++) {
        tl_fill_random(v, n, 100 + k);
        vx_dpm_step(&d, k, v, x, k ? x0p : NULL, x0, x, n);
        double as, ss, at, st, ap, sp;
        ref_alpha_sigma(d.sigmas[k], &as, &ss);
        ref_alpha_sigma(d.sigmas[k + 1], &at, &st);
        const double ls = log(as) - log(ss), lt = st > 0 ? log(at) - log(st) : INFINITY, h = lt - ls;
        const double em = exp(-h) - 1.0; /* −1 at the last step */
        const int second = k > 0 && k < N - 1;
        double r = 1;
        if (second) {
            ref_alpha_sigma(d.sigmas[k - 1], &ap, &sp);
            r = (ls - (log(ap) - log(sp))) / h;
        }
        for (int i = 0; i < n; i++) {
            const double D = as * rx[i] - ss * (double)v[i];
            double nx = (st / ss) * rx[i] - at * em * D;
            if (second) nx -= 0.5 * at * em * (D - rx0p[i]) / r;
            rx0p[i] = D;
            rx[i] = nx;
        }
        for (int i = 0; i < n; i++) {
            const double e = fabs(x[i] - rx[i]) / (1.0 + fabs(rx[i]));
            maxerr = e > maxerr ? e : maxerr;
        }
        memcpy(x0p, x0, sizeof x0);
    }
    CHECK_MSG(maxerr < 2e-5, "N %d: max rel err vs float64 %g", N, maxerr);
    for (int i = 0; i < n; i++) CHECK(x[i] == x0[i]); /* final sigma 0: the result is x0 itself */
    vx_dpm_free(&d);
}

static void test_sampler(const vx_vv_config *cfg, const vx_vv_diffhead *h, int N) {
    vx_err err = {0};
    vx_dpm d;
    CHECK(vx_dpm_init(&d, cfg, N, &err) == VOCIS_OK);
    const int64_t H = h->hidden, L = h->latent;
    float *cond = malloc(sizeof(float) * (size_t)(2 * H)), *noise = malloc(sizeof(float) * (size_t)(2 * L));
    float *x = malloc(sizeof(float) * (size_t)(10 * L)), *lat = malloc(sizeof(float) * (size_t)L);
    float *tr_out = malloc(sizeof(float) * (size_t)(N * 2 * L)), *tr_x0 = malloc(sizeof(float) * (size_t)(N * 2 * L));
    tl_fill_random(cond, (size_t)(2 * H), 5);
    vx_rng rng, rng2;
    vx_rng_seed(&rng, 1247);
    vx_rng_randn(&rng, noise, (size_t)(2 * L));
    const float cfg_scale = 1.3f;
    /* plain loop */
    float *xs = x, *xin = x + 2 * L, *out = x + 4 * L, *eps = x + 6 * L, *x0 = x + 8 * L;
    float *x0p = malloc(sizeof(float) * (size_t)(2 * L));
    memcpy(xs, noise, sizeof(float) * (size_t)(2 * L));
    for (int k = 0; k < N; k++) {
        memcpy(xin, xs, sizeof(float) * (size_t)L);
        memcpy(xin + L, xs, sizeof(float) * (size_t)L);
        CHECK(vx_vv_diffhead_run(h, xin, (float)d.timesteps[k], cond, 2, out, 2, &err) == VOCIS_OK);
        for (int64_t i = 0; i < L; i++) eps[i] = eps[L + i] = out[L + i] + cfg_scale * (out[i] - out[L + i]);
        vx_dpm_step(&d, k, eps, xs, k ? x0p : NULL, x0, xs, 2 * L);
        memcpy(x0p, x0, sizeof(float) * (size_t)(2 * L));
    }
    /* sampler with the rng: must draw the same noise and consume exactly 2·latent normals */
    vx_rng_seed(&rng2, 1247);
    vx_vv_sample_trace tr = {0};
    tr.head_output = tr_out;
    tr.x0_pred = tr_x0;
    CHECK_MSG(vx_vv_sample_latent(h, &d, cond, cond + H, cfg_scale, &rng2, NULL, lat, &tr, 2, &err) == VOCIS_OK, "%s",
              err.msg);
    CHECK(vx_rng_u32(&rng) == vx_rng_u32(&rng2));
    CHECK_CLOSE(lat, xs, (size_t)L, 1e-5);
    CHECK_CLOSE(tr_x0 + (size_t)(N - 1) * 2 * L, x0, (size_t)(2 * L), 1e-5);
    CHECK_CLOSE(tr_out + (size_t)(N - 1) * 2 * L, out, (size_t)(2 * L), 1e-5);
    /* injected noise gives the same result; no rng and no noise is refused */
    float *lat2 = malloc(sizeof(float) * (size_t)L);
    CHECK(vx_vv_sample_latent(h, &d, cond, cond + H, cfg_scale, NULL, noise, lat2, NULL, 1, &err) == VOCIS_OK);
    CHECK_CLOSE(lat2, lat, (size_t)L, 1e-6);
    CHECK(vx_vv_sample_latent(h, &d, cond, cond + H, cfg_scale, NULL, NULL, lat2, NULL, 1, &err) == VOCIS_E_ARG);
    CHECK(vx_vv_sample_latent(h, &d, cond, cond + H, NAN, NULL, noise, lat2, NULL, 1, &err) == VOCIS_E_ARG);
    free(cond), free(noise), free(x), free(lat), free(lat2), free(x0p), free(tr_out), free(tr_x0);
    vx_dpm_free(&d);
}

static void test_head(const vx_vv_config *cfg) {
    vx_err err = {0};
    vx_weights *w = NULL;
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", tl_path("vibevoice/model"));
    CHECK(vx_vv_weights_open(dir, &w, &err) == VOCIS_OK);
    if (!w) return;
    vx_vv_diffhead *h = NULL;
    CHECK_MSG(vx_vv_diffhead_load(w, cfg, &h, &err) == VOCIS_OK, "%s", err.msg);
    if (h) {
        CHECK(h->hidden == cfg->diffusion.hidden_size && h->n_layers == cfg->diffusion.head_layers &&
              h->ffn == cfg->diffusion.ffn_dim && h->latent == 64 && h->freq == 256);
        /* timestep frequencies equal torch's float32 exp (not the correctly rounded value) */
        static const struct { int j; float v; } tf[] = {
            {0, 1.0f}, {13, 0x1.91d648p-2f}, {14, 0x1.75f034p-2f}, {89, 0x1.b1cce8p-10f}, {119, 0x1.90c180p-13f}};
        for (size_t i = 0; i < sizeof tf / sizeof tf[0]; i++)
            CHECK_MSG(h->freqs[tf[i].j] == tf[i].v, "freq[%d] = %a, torch %a", tf[i].j, h->freqs[tf[i].j], tf[i].v);
        /* a row's output does not depend on the other rows of the call */
        const int64_t H = h->hidden, L = h->latent;
        float *x = malloc(sizeof(float) * (size_t)(3 * L)), *c = malloc(sizeof(float) * (size_t)(3 * H));
        float *o3 = malloc(sizeof(float) * (size_t)(3 * L)), *o1 = malloc(sizeof(float) * (size_t)L);
        tl_fill_random(x, (size_t)(3 * L), 1);
        tl_fill_random(c, (size_t)(3 * H), 2);
        CHECK(vx_vv_diffhead_run(h, x, 321.0f, c, 3, o3, 2, &err) == VOCIS_OK);
        CHECK(vx_vv_diffhead_run(h, x + L, 321.0f, c + H, 1, o1, 1, &err) == VOCIS_OK);
        CHECK_CLOSE(o1, o3 + L, (size_t)L, 0);
        free(x), free(c), free(o3), free(o1);
        vx_vv_diffhead_free(h);
    }
    vx_vv_config bad = *cfg;
    bad.diffusion.head_layers++;
    CHECK(vx_vv_diffhead_load(w, &bad, &h, &err) == VOCIS_E_SHAPE && h == NULL);
    CHECK(strstr(err.msg, "head_layers") != NULL);
    vx_vv_connector ac, sc;
    CHECK(vx_vv_connector_load(w, "model.acoustic_connector.", &ac, &err) == VOCIS_OK);
    CHECK(ac.in_dim == 64 && ac.hidden == cfg->hidden_size);
    CHECK(vx_vv_connector_load(w, "model.semantic_connector.", &sc, &err) == VOCIS_OK);
    CHECK(sc.in_dim == 128);
    vx_vv_connector_free(&ac);
    vx_vv_connector_free(&sc);
    CHECK(vx_vv_connector_load(w, "model.no_connector.", &ac, &err) == VOCIS_E_SHAPE);
    vx_weights_close(w);
}

int main(int argc, char **argv) {
    if (argc > 1) tl_data_dir = argv[1];
    vx_vv_config cfg = tiny_cfg();
    test_schedule(&cfg);
    for (int N = 1; N <= 25; N += 4) test_step(&cfg, N);
    test_head(&cfg);
    vx_err err = {0};
    vx_vv_diffhead *h = NULL;
    CHECK_MSG(vx_vv_diffhead_random(32, 96, 2, 8, VX_F32, 42, &h, &err) == VOCIS_OK, "%s", err.msg);
    if (h) {
        test_sampler(&cfg, h, 10);
        test_sampler(&cfg, h, 25); /* two modulation chunks, batched GEMM path */
        vx_vv_diffhead_free(h);
    }
    CHECK_MSG(vx_vv_diffhead_random(48, 144, 1, 16, VX_BF16, 7, &h, &err) == VOCIS_OK, "%s", err.msg);
    if (h) {
        test_sampler(&cfg, h, 5);
        vx_vv_diffhead_free(h);
    }
    return tl_finish("test_dpm_solver");
}
