/* VibeVoice speech connectors and diffusion prediction head (see diffusion.h). */
#include "models/vibevoice/diffusion.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/precision.h"
#include "nn/transformer.h" /* vx_weights_mat, vx_weights_vec_f32 */

#define HEAD "model.prediction_head."

/* ================================================================ connector */

vocis_status vx_vv_connector_load(const vx_weights *w, const char *prefix, vx_vv_connector *c, vx_err *err) {
    memset(c, 0, sizeof *c);
    char name[512];
    vx_tensor t;
    snprintf(name, sizeof name, "%sfc1.weight", prefix);
    VX_TRY(vx_weights_expect(w, VX_FLOATS, VX_DIMS(-1, -1), &t, err, "%s", name));
    const int64_t H = t.shape[0], in = t.shape[1];
    if (H < 1 || in < 1) return vx_fail(err, VOCIS_E_SHAPE, "%s: tensor '%s' is empty", vx_weights_path(w), name);
    c->in_dim = in;
    c->hidden = H;
    c->eps = 1e-6f;
    c->fc1 = vx_mat_of(&t);
    VX_TRY(vx_weights_mat_policy(w, &c->fc1, VX_W_MATRIX, err));
    float *p = malloc(sizeof(float) * (size_t)(3 * H));
    if (!p) return vx_fail(err, VOCIS_E_NOMEM, "out of memory (%s)", prefix);
    c->b1 = p, c->norm = p + H, c->b2 = p + 2 * H;
    vocis_status st;
#define NAME(s) (snprintf(name, sizeof name, "%s%s", prefix, s), name)
    if ((st = vx_weights_vec_f32(w, NAME("fc1.bias"), H, c->b1, err)) ||
        (st = vx_weights_vec_f32(w, NAME("norm.weight"), H, c->norm, err)) ||
        (st = vx_weights_mat(w, NAME("fc2.weight"), H, H, &c->fc2, err)) ||
        (st = vx_weights_vec_f32(w, NAME("fc2.bias"), H, c->b2, err))) {
        vx_vv_connector_free(c);
        return st;
    }
#undef NAME
    return VOCIS_OK;
}

void vx_vv_connector_free(vx_vv_connector *c) {
    if (!c) return;
    free(c->b1);
    memset(c, 0, sizeof *c);
}

vocis_status vx_vv_connector_run(const vx_vv_connector *c, const float *x, int64_t rows, float *y, int nthreads,
                                 vx_err *err) {
    if (rows <= 0) return VOCIS_OK;
    const int64_t H = c->hidden;
    float *h = malloc(sizeof(float) * (size_t)(rows * H));
    if (!h) return vx_fail(err, VOCIS_E_NOMEM, "out of memory (connector, %lld rows)", (long long)rows);
    vx_linear(h, x, rows, &c->fc1, c->b1, nthreads); /* [rows, in] -> [rows, H] */
    vx_rmsnorm(h, h, c->norm, rows, H, c->eps);
    vx_linear(y, h, rows, &c->fc2, c->b2, nthreads);
    free(h);
    return VOCIS_OK;
}

/* ===================================================================== head */

/* exp of a float as torch's CPU kernels compute it for float tensors (SLEEF's
 * expf_u10: Cody–Waite reduction by ln 2, degree-6 polynomial, FMA). It is
 * not always the correctly rounded value; these 1-ulp differences in the
 * timestep frequencies grow with t (t·freq up to 999 rad) and were the
 * largest error against upstream at t = 999 (1.7e-6, now 1.0e-6). */
static float torch_expf(float d) {
    const float q = rintf(d * 1.442695040888963407359924681001892137426645954152985934135449406931f);
    float s = fmaf(q, -0.693145751953125f, d);
    s = fmaf(q, -1.428606765330187045e-06f, s);
    float u = 0.000198527617612853646278381f;
    u = fmaf(u, s, 0.00139304355252534151077271f);
    u = fmaf(u, s, 0.00833336077630519866943359f);
    u = fmaf(u, s, 0.0416664853692054748535156f);
    u = fmaf(u, s, 0.166666671633720397949219f);
    u = fmaf(u, s, 0.5f);
    u = 1.0f + fmaf(s * s, u, s);
    u = ldexpf(u, (int)q);
    if (d < -104.0f) u = 0.0f;
    if (d > 104.0f) u = INFINITY;
    return u;
}

void vx_vv_diffhead_free(vx_vv_diffhead *h) {
    if (!h) return;
    free(h->layers);
    free(h->owned);
    if (h->own_w) vx_weights_close(h->own_w);
    free(h);
}

vocis_status vx_vv_diffhead_load(const vx_weights *w, const vx_vv_config *cfg, vx_vv_diffhead **out, vx_err *err) {
    *out = NULL;
    const char *path = vx_weights_path(w);
    vx_tensor t;
    VX_TRY(vx_weights_expect(w, VX_FLOATS, VX_DIMS(-1, -1), &t, err, HEAD "noisy_images_proj.weight"));
    const int64_t H = t.shape[0], Lat = t.shape[1];
    VX_TRY(vx_weights_expect(w, VX_FLOATS, VX_DIMS(H, -1), &t, err, HEAD "t_embedder.mlp.0.weight"));
    const int64_t Fq = t.shape[1];
    VX_TRY(vx_weights_expect(w, VX_FLOATS, VX_DIMS(-1, H), &t, err, HEAD "layers.0.ffn.gate_proj.weight"));
    const int64_t F = t.shape[0];
    int L = 0;
    char name[512];
    for (;; L++) {
        snprintf(name, sizeof name, HEAD "layers.%d.norm.weight", L);
        if (!vx_weights_has(w, name)) break;
    }
    if (H < 1 || Lat < 1 || F < 1 || Fq < 2)
        return vx_fail(err, VOCIS_E_SHAPE, "%s: prediction head has an empty dimension (H %lld, latent %lld, "
                       "ffn %lld, freq %lld)", path, (long long)H, (long long)Lat, (long long)F, (long long)Fq);
    if (L == 0) return vx_fail(err, VOCIS_E_SHAPE, "%s: missing tensor '" HEAD "layers.0.norm.weight'", path);
    if (cfg) {
        const char *cp = cfg->path[0] ? cfg->path : "config.json";
        if (cfg->diffusion.hidden_size != H)
            return vx_fail(err, VOCIS_E_SHAPE, "%s: prediction head hidden size %lld differs from %s "
                           "diffusion_head_config.hidden_size %d", path, (long long)H, cp, cfg->diffusion.hidden_size);
        if (cfg->diffusion.latent_size != Lat)
            return vx_fail(err, VOCIS_E_SHAPE, "%s: prediction head latent size %lld differs from %s "
                           "diffusion_head_config.latent_size %d", path, (long long)Lat, cp,
                           cfg->diffusion.latent_size);
        if (cfg->diffusion.ffn_dim != F)
            return vx_fail(err, VOCIS_E_SHAPE, "%s: prediction head FFN width %lld differs from %s "
                           "hidden_size x head_ffn_ratio = %d", path, (long long)F, cp, cfg->diffusion.ffn_dim);
        if (cfg->diffusion.head_layers != L)
            return vx_fail(err, VOCIS_E_SHAPE, "%s: prediction head has %d layers but %s "
                           "diffusion_head_config.head_layers = %d", path, L, cp, cfg->diffusion.head_layers);
    }
    vx_vv_diffhead *h = calloc(1, sizeof *h);
    if (!h) return vx_fail(err, VOCIS_E_NOMEM, "out of memory (prediction head)");
    h->hidden = H, h->ffn = F, h->latent = Lat, h->freq = Fq, h->n_layers = L;
    h->eps = cfg ? cfg->diffusion.rms_norm_eps : 1e-5f;
    h->layers = calloc((size_t)L, sizeof *h->layers);
    const int64_t half = Fq / 2;
    h->owned = malloc(sizeof(float) * (size_t)(L * H + half));
    if (!h->layers || !h->owned) {
        vx_vv_diffhead_free(h);
        return vx_fail(err, VOCIS_E_NOMEM, "out of memory (prediction head)");
    }
    vocis_status st;
#define NAME(...) (snprintf(name, sizeof name, HEAD __VA_ARGS__), name)
    if ((st = vx_weights_mat(w, NAME("noisy_images_proj.weight"), H, Lat, &h->x_proj, err)) ||
        (st = vx_weights_mat(w, NAME("cond_proj.weight"), H, H, &h->cond_proj, err)) ||
        (st = vx_weights_mat(w, NAME("t_embedder.mlp.0.weight"), H, Fq, &h->t_mlp0, err)) ||
        (st = vx_weights_mat(w, NAME("t_embedder.mlp.2.weight"), H, H, &h->t_mlp2, err)) ||
        (st = vx_weights_mat(w, NAME("final_layer.adaLN_modulation.1.weight"), 2 * H, H, &h->final_ada, err)) ||
        (st = vx_weights_mat(w, NAME("final_layer.linear.weight"), Lat, H, &h->final_linear, err)))
        goto fail;
    for (int l = 0; l < L; l++) {
        vx_vv_head_layer *ly = &h->layers[l];
        ly->norm = h->owned + (int64_t)l * H;
        if ((st = vx_weights_vec_f32(w, NAME("layers.%d.norm.weight", l), H, ly->norm, err)) ||
            (st = vx_weights_linear(w, NAME("layers.%d.adaLN_modulation.1.weight", l), 3 * H, H, &ly->ada, err)) ||
            (st = vx_weights_linear(w, NAME("layers.%d.ffn.gate_proj.weight", l), F, H, &ly->gate, err)) ||
            (st = vx_weights_linear(w, NAME("layers.%d.ffn.up_proj.weight", l), F, H, &ly->up, err)) ||
            (st = vx_weights_linear(w, NAME("layers.%d.ffn.down_proj.weight", l), H, F, &ly->down, err)))
            goto fail;
    }
#undef NAME
    /* TimestepEmbedder frequencies, as torch evaluates them in float32:
     * exp((−ln 10000 as float) · j / half), with torch's vectorised exp. */
    h->freqs = h->owned + (int64_t)L * H;
    const float nl = (float)-log(10000.0);
    for (int64_t j = 0; j < half; j++) h->freqs[j] = torch_expf((nl * (float)j) / (float)half);
    *out = h;
    return VOCIS_OK;
fail:
    vx_vv_diffhead_free(h);
    return st;
}

vocis_status vx_vv_diffusion_synth_add(vx_synth *s, int64_t H, int64_t F, int L, int64_t Lat, int64_t sem,
                                       vx_dtype dt, vx_err *err) {
    vocis_status st = VOCIS_OK;
#define ADD(scale, ...) \
    if (st == VOCIS_OK) st = vx_synth_add(s, dt, scale, __VA_ARGS__)
    ADD(0.1f, VX_DIMS(H, Lat), err, HEAD "noisy_images_proj.weight");
    ADD(0.03f, VX_DIMS(H, H), err, HEAD "cond_proj.weight");
    ADD(0.06f, VX_DIMS(H, 256), err, HEAD "t_embedder.mlp.0.weight");
    ADD(0.03f, VX_DIMS(H, H), err, HEAD "t_embedder.mlp.2.weight");
    for (int l = 0; l < L; l++) {
        ADD(-1.0f, VX_DIMS(H), err, HEAD "layers.%d.norm.weight", l);
        ADD(0.02f, VX_DIMS(3 * H, H), err, HEAD "layers.%d.adaLN_modulation.1.weight", l);
        ADD(0.03f, VX_DIMS(F, H), err, HEAD "layers.%d.ffn.gate_proj.weight", l);
        ADD(0.03f, VX_DIMS(F, H), err, HEAD "layers.%d.ffn.up_proj.weight", l);
        ADD(0.02f, VX_DIMS(H, F), err, HEAD "layers.%d.ffn.down_proj.weight", l);
    }
    ADD(0.02f, VX_DIMS(2 * H, H), err, HEAD "final_layer.adaLN_modulation.1.weight");
    ADD(0.03f, VX_DIMS(Lat, H), err, HEAD "final_layer.linear.weight");
    for (int k = 0; k < 2; k++) {
        const char *p = k ? "model.semantic_connector." : "model.acoustic_connector.";
        const int64_t in = k ? sem : Lat;
        if (in <= 0) continue;
        ADD(0.1f, VX_DIMS(H, in), err, "%sfc1.weight", p);
        ADD(0.02f, VX_DIMS(H), err, "%sfc1.bias", p);
        ADD(-1.0f, VX_DIMS(H), err, "%snorm.weight", p);
        ADD(0.03f, VX_DIMS(H, H), err, "%sfc2.weight", p);
        ADD(0.02f, VX_DIMS(H), err, "%sfc2.bias", p);
    }
#undef ADD
    return st;
}

vocis_status vx_vv_diffhead_random(int64_t hidden, int64_t ffn, int n_layers, int64_t latent, vx_dtype dt,
                                   uint64_t seed, vx_vv_diffhead **out, vx_err *err) {
    *out = NULL;
    if (hidden < 1 || ffn < 1 || n_layers < 1 || latent < 1)
        return vx_fail(err, VOCIS_E_ARG, "prediction head: invalid random dims (H %lld, F %lld, %d layers, "
                       "latent %lld)", (long long)hidden, (long long)ffn, n_layers, (long long)latent);
    vx_synth *s = vx_synth_new(seed);
    if (!s) return vx_fail(err, VOCIS_E_NOMEM, "out of memory");
    vx_weights *w = NULL;
    vocis_status st = vx_vv_diffusion_synth_add(s, hidden, ffn, n_layers, latent, 0, dt, err);
    if (st == VOCIS_OK) st = vx_synth_open(s, &w, err);
    vx_synth_free(s);
    if (st == VOCIS_OK) st = vx_vv_diffhead_load(w, NULL, out, err);
    if (st != VOCIS_OK) {
        if (w) vx_weights_close(w);
        return st;
    }
    (*out)->own_w = w;
    return VOCIS_OK;
}

/* -------------------------------------------------------------- forward */

vocis_status vx_vv_diffhead_temb(const vx_vv_diffhead *h, const float *t, int64_t n, float *temb, int nthreads,
                                 vx_err *err) {
    if (n <= 0) return VOCIS_OK;
    const int64_t H = h->hidden, Fq = h->freq, half = Fq / 2;
    float *e = malloc(sizeof(float) * (size_t)(n * (Fq + H)));
    if (!e) return vx_fail(err, VOCIS_E_NOMEM, "out of memory (timestep embedding)");
    float *m = e + n * Fq;
    for (int64_t i = 0; i < n; i++) {
        float *er = e + i * Fq;
        for (int64_t j = 0; j < half; j++) {
            float arg = t[i] * h->freqs[j]; /* float32 product, as torch */
            er[j] = (float)cos((double)arg);
            er[half + j] = (float)sin((double)arg);
        }
        if (Fq % 2) er[Fq - 1] = 0.0f;
    }
    vx_linear(m, e, n, &h->t_mlp0, NULL, nthreads); /* [n, Fq] -> [n, H] */
    vx_silu(m, n * H);
    vx_linear(temb, m, n, &h->t_mlp2, NULL, nthreads);
    free(e);
    return VOCIS_OK;
}

int64_t vx_vv_diffhead_mod_width(const vx_vv_diffhead *h) { return (3 * (int64_t)h->n_layers + 2) * h->hidden; }

vocis_status vx_vv_diffhead_modulation(const vx_vv_diffhead *h, const float *s, int64_t rows, float *mods,
                                       int nthreads, vx_err *err) {
    if (rows <= 0) return VOCIS_OK;
    const int64_t H = h->hidden, W = vx_vv_diffhead_mod_width(h);
    /* One batched linear per layer, row-exact (a row's bits do not depend on the others: the
     * sampler batches several requests' rows); its [rows, 3H] output is scattered into the per-row
     * layout. */
    float *tmp = malloc(sizeof(float) * (size_t)(rows * 3 * H));
    if (!tmp) return vx_fail(err, VOCIS_E_NOMEM, "out of memory (head modulation, %lld rows)", (long long)rows);
    for (int l = 0; l <= h->n_layers; l++) {
        const int fin = l == h->n_layers;
        const int64_t w = fin ? 2 * H : 3 * H, off = 3 * H * (int64_t)l;
        vx_linear_rows(tmp, s, rows, fin ? &h->final_ada : &h->layers[l].ada, NULL, nthreads);
        for (int64_t r = 0; r < rows; r++) memcpy(mods + r * W + off, tmp + r * w, sizeof(float) * (size_t)w);
    }
    free(tmp);
    return VOCIS_OK;
}

/* u = RMSNorm(x)[·w] · (1 + scale) + shift, row by row; mods rows are `W` apart. */
static void norm_modulate(float *u, const float *x, const float *w, const float *mods, int64_t W, int64_t rows,
                          int64_t H, float eps) {
    vx_rmsnorm(u, x, w, rows, H, eps);
    for (int64_t r = 0; r < rows; r++) {
        const float *shift = mods + r * W, *scale = shift + H;
        float *ur = u + r * H;
        for (int64_t i = 0; i < H; i++) ur[i] = ur[i] * (1.0f + scale[i]) + shift[i];
    }
}

vocis_status vx_vv_diffhead_body(const vx_vv_diffhead *h, const float *x, const float *mods, int64_t rows,
                                 float *out, int nthreads, vx_err *err) {
    if (rows <= 0) return VOCIS_OK;
    const int64_t H = h->hidden, F = h->ffn, W = vx_vv_diffhead_mod_width(h);
    float *buf = malloc(sizeof(float) * (size_t)(rows * (3 * H + 2 * F)));
    if (!buf) return vx_fail(err, VOCIS_E_NOMEM, "out of memory (prediction head, %lld rows)", (long long)rows);
    float *x0 = buf, *u = x0 + rows * H, *d = u + rows * H, *g = d + rows * H, *up = g + rows * F;
    vx_linear_rows(x0, x, rows, &h->x_proj, NULL, nthreads); /* [rows, latent] -> [rows, H] */
    for (int l = 0; l < h->n_layers; l++) {
        const vx_vv_head_layer *ly = &h->layers[l];
        const float *m = mods + 3 * H * (int64_t)l; /* shift | scale | gate */
        norm_modulate(u, x0, ly->norm, m, W, rows, H, h->eps);
        vx_linear_rows(g, u, rows, &ly->gate, NULL, nthreads); /* [rows, H] -> [rows, F] */
        vx_linear_rows(up, u, rows, &ly->up, NULL, nthreads);
        vx_swiglu(g, g, up, rows * F);
        vx_linear_rows(d, g, rows, &ly->down, NULL, nthreads); /* [rows, F] -> [rows, H] */
        for (int64_t r = 0; r < rows; r++) {
            const float *gate = m + r * W + 2 * H;
            float *xr = x0 + r * H;
            const float *dr = d + r * H;
            for (int64_t i = 0; i < H; i++) xr[i] += gate[i] * dr[i];
        }
    }
    norm_modulate(u, x0, NULL, mods + 3 * H * (int64_t)h->n_layers, W, rows, H, h->eps);
    vx_linear_rows(out, u, rows, &h->final_linear, NULL, nthreads); /* [rows, H] -> [rows, latent] */
    free(buf);
    return VOCIS_OK;
}

vocis_status vx_vv_diffhead_run(const vx_vv_diffhead *h, const float *x, float t, const float *cond, int64_t rows,
                                float *out, int nthreads, vx_err *err) {
    if (rows <= 0) return VOCIS_OK;
    const int64_t H = h->hidden, W = vx_vv_diffhead_mod_width(h);
    float *s = malloc(sizeof(float) * (size_t)(rows * H + H + rows * W));
    if (!s) return vx_fail(err, VOCIS_E_NOMEM, "out of memory (prediction head, %lld rows)", (long long)rows);
    float *temb = s + rows * H, *mods = temb + H;
    vocis_status st = vx_vv_diffhead_temb(h, &t, 1, temb, nthreads, err);
    if (st == VOCIS_OK) {
        vx_linear(s, cond, rows, &h->cond_proj, NULL, nthreads);
        for (int64_t r = 0; r < rows; r++) vx_add(s + r * H, temb, H); /* c = cond_proj(cond) + t_emb */
        vx_silu(s, rows * H);
        st = vx_vv_diffhead_modulation(h, s, rows, mods, nthreads, err);
    }
    if (st == VOCIS_OK) st = vx_vv_diffhead_body(h, x, mods, rows, out, nthreads, err);
    free(s);
    return st;
}
