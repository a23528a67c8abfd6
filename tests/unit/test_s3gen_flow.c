/* S3Gen flow: the extra kernels against naive references, the s3gen-flow
 * stage against the upstream golden file (tiny checkpoint), bad inputs, and
 * the synthetic builder. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernels/isa.h"
#include "kernels/ops_extra.h"
#include "models/chatterbox/s3gen_flow.h"
#include "models/stages.h"
#include "testlib.h"

static void test_mish(void) {
    float x[9] = {-30.f, -5.f, -1.f, -0.1f, 0.f, 0.3f, 2.f, 15.f, 40.f}, y[9];
    memcpy(y, x, sizeof x);
    vx_mish(y, 9);
    for (int i = 0; i < 9; i++) {
        double r = x[i] * tanh(log1p(exp((double)x[i])));
        CHECK_MSG(fabs(y[i] - r) <= 2e-7 * (1 + fabs(r)), "mish(%g) = %.9g, want %.9g", x[i], y[i], r);
    }
}

static void test_conv_tm(void) {
    const int64_t B = 2, lin = 13, cin = 5, cout = 7, k = 4, dil = 2, pl = 3, pr = 4;
    int64_t lout = vx_conv1d_tm_out_len(lin, k, dil, pl, pr);
    float *x = malloc(sizeof(float) * B * lin * cin), *w = malloc(sizeof(float) * cout * cin * k);
    float b[7], *y = malloc(sizeof(float) * B * lout * cout), *col = malloc(sizeof(float) * B * lout * cin * k);
    float *r = calloc((size_t)(B * lout * cout), sizeof(float));
    tl_fill_random(x, B * lin * cin, 1);
    tl_fill_random(w, cout * cin * k, 2);
    tl_fill_random(b, 7, 3);
    vx_mat W = {VX_F32, cout, cin * k, w};
    vx_conv1d_tm(y, x, B, lin, cin, k, dil, pl, pr, &W, b, col, 2);
    for (int64_t bb = 0; bb < B; bb++)
        for (int64_t t = 0; t < lout; t++)
            for (int64_t co = 0; co < cout; co++) {
                double s = b[co];
                for (int64_t ci = 0; ci < cin; ci++)
                    for (int64_t j = 0; j < k; j++) {
                        int64_t src = t + j * dil - pl;
                        if (src >= 0 && src < lin) s += w[(co * cin + ci) * k + j] * x[(bb * lin + src) * cin + ci];
                    }
                r[(bb * lout + t) * cout + co] = (float)s;
            }
    CHECK_CLOSE(y, r, (size_t)(B * lout * cout), 1e-5);
    free(x), free(w), free(y), free(col), free(r);
}

static void test_relpos(int64_t L) {
    const int H = 3, dk = 8, HD = H * dk;
    float *q = malloc(sizeof(float) * L * HD), *k = malloc(sizeof(float) * L * HD), *v = malloc(sizeof(float) * L * HD);
    float *p = malloc(sizeof(float) * (2 * L - 1) * HD), u[24], vb[24];
    float *o = malloc(sizeof(float) * L * HD), *r = malloc(sizeof(float) * L * HD);
    float *s = malloc(sizeof(float) * vx_relpos_attention_scratch(L, dk, 2));
    double *sc = malloc(sizeof(double) * L);
    tl_fill_random(q, L * HD, 4);
    tl_fill_random(k, L * HD, 5);
    tl_fill_random(v, L * HD, 6);
    tl_fill_random(p, (2 * L - 1) * HD, 7);
    tl_fill_random(u, 24, 8);
    tl_fill_random(vb, 24, 9);
    vx_relpos_attention(o, q, k, v, p, u, vb, L, H, dk, s, 2);
    for (int h = 0; h < H; h++)
        for (int64_t i = 0; i < L; i++) {
            double mx = -1e300, sum = 0;
            for (int64_t j = 0; j < L; j++) {
                double a = 0;
                for (int d = 0; d < dk; d++) {
                    double qi = q[i * HD + h * dk + d];
                    a += (qi + u[h * dk + d]) * k[j * HD + h * dk + d] +
                         (qi + vb[h * dk + d]) * p[(L - 1 - i + j) * HD + h * dk + d];
                }
                sc[j] = a / sqrt((double)dk);
                if (sc[j] > mx) mx = sc[j];
            }
            for (int64_t j = 0; j < L; j++) sum += (sc[j] = exp(sc[j] - mx));
            for (int d = 0; d < dk; d++) {
                double acc = 0;
                for (int64_t j = 0; j < L; j++) acc += sc[j] / sum * v[j * HD + h * dk + d];
                r[i * HD + h * dk + d] = (float)acc;
            }
        }
    CHECK_CLOSE(o, r, (size_t)(L * HD), 2e-5);
    free(q), free(k), free(v), free(p), free(o), free(r), free(s), free(sc);
}

/* vx_attention (blocked many-query path where it applies) against a double-precision reference: GQA, causal with nq < nk and nq > nk
 * (rows that see no key are zero), query counts around the 48-row block, head sizes 16..144, a
 * KV stride wider than the heads, 1 and 2 threads. */
static void attn_blocked_case(int64_t nq, int64_t nk, int H, int Hkv, int hd, int causal, int nth) {
    const int64_t qs = (int64_t)H * hd, ks = (int64_t)Hkv * hd + 16;
    float *q = malloc(sizeof(float) * nq * qs), *k = malloc(sizeof(float) * nk * ks);
    float *v = malloc(sizeof(float) * nk * ks), *o = malloc(sizeof(float) * nq * qs);
    float *r = malloc(sizeof(float) * nq * qs);
    double *sc = malloc(sizeof(double) * (nk > 0 ? nk : 1));
    tl_fill_random(q, nq * qs, 11);
    tl_fill_random(k, nk * ks, 12);
    tl_fill_random(v, nk * ks, 13);
    for (int64_t i = 0; i < nq * qs; i++) q[i] *= 3.0f; /* peaky softmax */
    const float scale = 1.0f / sqrtf((float)hd);
    vx_attention(o, q, k, v, nq, nk, H, Hkv, hd, ks, scale, causal, nth);
    for (int h = 0; h < H; h++)
        for (int64_t i = 0; i < nq; i++) {
            const int g = h / (H / Hkv);
            int64_t lim = causal ? nk - nq + i + 1 : nk;
            lim = lim < 0 ? 0 : lim > nk ? nk : lim;
            double mx = -1e300, sum = 0;
            for (int64_t j = 0; j < lim; j++) {
                double a = 0;
                for (int d = 0; d < hd; d++) a += (double)q[i * qs + h * hd + d] * k[j * ks + g * hd + d];
                sc[j] = a * scale;
                if (sc[j] > mx) mx = sc[j];
            }
            for (int64_t j = 0; j < lim; j++) sum += (sc[j] = exp(sc[j] - mx));
            for (int d = 0; d < hd; d++) {
                double acc = 0;
                for (int64_t j = 0; j < lim; j++) acc += sc[j] / sum * v[j * ks + g * hd + d];
                r[i * qs + h * hd + d] = (float)acc;
            }
        }
    double worst = 0;
    for (int64_t i = 0; i < nq * qs; i++) worst = fmax(worst, fabs((double)o[i] - r[i]));
    CHECK_MSG(worst <= 2e-6, "attention_blocked nq=%lld nk=%lld H=%d/%d hd=%d causal=%d threads=%d: max |diff| %.3g",
              (long long)nq, (long long)nk, H, Hkv, hd, causal, nth, worst);
    free(q), free(k), free(v), free(o), free(r), free(sc);
}

static void test_attention_blocked(void) {
    static const int64_t nqs[] = {16, 47, 48, 49, 131};
    for (int causal = 0; causal <= 1; causal++)
        for (size_t a = 0; a < sizeof nqs / sizeof nqs[0]; a++)
            for (int nth = 1; nth <= 2; nth++) attn_blocked_case(nqs[a], nqs[a] + 5 * causal, 4, 2, 64, causal, nth);
    attn_blocked_case(100, 37, 2, 2, 64, 1, 2);  /* nq > nk: the first rows see nothing */
    attn_blocked_case(60, 300, 2, 1, 16, 0, 2);  /* one vector of output dims */
    attn_blocked_case(50, 50, 3, 3, 80, 1, 1);   /* 64 + 16 dims */
    attn_blocked_case(97, 203, 2, 2, 128, 0, 2); /* two 64-dim chunks */
    attn_blocked_case(33, 70, 2, 2, 144, 1, 2);
    attn_blocked_case(40, 40, 2, 2, 20, 0, 1);   /* hd not a multiple of 16: fallback */
    attn_blocked_case(5, 40, 2, 2, 64, 0, 1);    /* few rows: fallback */
}

/* Mish and the fused LayerNorm row ops: every level against double references. */
static void test_fused_rows(void) {
    enum { R = 5, D = 37 };
    float x[R * D], h[R * D], t[R * D], bias[D], w[D], bb[D], add[D], y[R * D], hc[R * D];
    tl_fill_random(x, R * D, 31);
    tl_fill_random(t, R * D, 32);
    tl_fill_random(bias, D, 33);
    tl_fill_random(w, D, 34);
    tl_fill_random(bb, D, 35);
    tl_fill_random(add, D, 36);
    for (int i = 0; i < R * D; i++) x[i] = 6.0f * x[i] + 0.5f; /* offset mean, values to ±6.5 */
    x[3] = 25.0f, x[4] = -90.0f;                               /* Mish: identity and underflow ranges */
    for (int isa = 0; isa <= vx_cpu_isa(); isa++) {
        /* Mish */
        memcpy(y, x, sizeof x);
        vx_mish_isa(isa, y, R * D);
        for (int i = 0; i < R * D; i++) {
            double r = x[i] * tanh(log1p(exp((double)x[i])));
            CHECK_MSG(fabs(y[i] - r) <= 3e-7 * (1 + fabs(r)), "mish isa %d (%g) = %.9g, want %.9g", isa, x[i], y[i], r);
        }
        /* residual + LN */
        memcpy(h, x, sizeof x);
        vx_residual_layernorm_isa(isa, h, t, bias, y, w, bb, R, D, 1e-5f);
        for (int r = 0; r < R; r++) {
            double hs[D], mu = 0, var = 0;
            for (int i = 0; i < D; i++) mu += hs[i] = (double)x[r * D + i] + t[r * D + i] + bias[i];
            mu /= D;
            for (int i = 0; i < D; i++) var += (hs[i] - mu) * (hs[i] - mu);
            double rs = 1 / sqrt(var / D + 1e-5);
            for (int i = 0; i < D; i++) {
                CHECK_MSG(fabs(h[r * D + i] - hs[i]) <= 1e-6 * (1 + fabs(hs[i])), "residual isa %d", isa);
                double ref = (hs[i] - mu) * rs * w[i] + bb[i];
                CHECK_MSG(fabs(y[r * D + i] - ref) <= 2e-6 * (1 + fabs(ref)),
                          "residual_layernorm isa %d [%d][%d]: %.9g vs %.9g", isa, r, i, y[r * D + i], ref);
            }
        }
        /* no residual, no LN output: h unchanged / only the residual */
        memcpy(h, x, sizeof x);
        vx_residual_layernorm_isa(isa, h, NULL, NULL, NULL, NULL, NULL, R, D, 1e-5f);
        CHECK(!memcmp(h, x, sizeof x));
        /* LN + Mish (+ bias into x, + add) */
        memcpy(hc, x, sizeof x);
        vx_layernorm_mish_isa(isa, y, hc, bias, w, bb, add, R, D, 1e-5f);
        for (int r = 0; r < R; r++) {
            double xs[D], mu = 0, var = 0;
            for (int i = 0; i < D; i++) mu += xs[i] = (double)x[r * D + i] + bias[i];
            mu /= D;
            for (int i = 0; i < D; i++) var += (xs[i] - mu) * (xs[i] - mu);
            double rs = 1 / sqrt(var / D + 1e-5);
            for (int i = 0; i < D; i++) {
                double l = (xs[i] - mu) * rs * w[i] + bb[i], ref = l * tanh(log1p(exp(l))) + add[i];
                CHECK_MSG(fabs(y[r * D + i] - ref) <= 2e-6 * (1 + fabs(ref)),
                          "layernorm_mish isa %d [%d][%d]: %.9g vs %.9g", isa, r, i, y[r * D + i], ref);
            }
        }
    }
}

/* Snake: every ISA level gives the same bits, close to the double formula. */
static void test_snake(void) {
    enum { CH = 3, LEN = 1037 };
    float *x = malloc(sizeof(float) * CH * LEN), *y = malloc(sizeof(float) * CH * LEN);
    float *y0 = malloc(sizeof(float) * CH * LEN), alpha[CH] = {0.3f, 1.0f, 7.5f};
    tl_fill_random(x, CH * LEN, 21);
    for (int i = 0; i < CH * LEN; i++) x[i] *= (i % 5 == 0) ? 300.0f : 4.0f;
    vx_snake_isa(0, y0, x, alpha, CH, LEN);
    double worst = 0;
    for (int c = 0; c < CH; c++)
        for (int t = 0; t < LEN; t++) {
            double xv = x[c * LEN + t], s = sin(alpha[c] * xv), ref = xv + s * s / (alpha[c] + 1e-9);
            worst = fmax(worst, fabs(y0[c * LEN + t] - ref) / (1 + fabs(ref)));
        }
    CHECK_MSG(worst <= 2e-6, "snake scalar vs double: max rel diff %.3g", worst);
    for (int isa = 1; isa <= 2; isa++) {
        if (isa > vx_cpu_isa()) break;
        for (int len = 1; len <= 40; len += 13) { /* tails */
            vx_snake_isa(isa, y, x, alpha, 1, len);
            CHECK_MSG(!memcmp(y, y0, sizeof(float) * (size_t)len), "snake isa %d len %d differs from scalar", isa, len);
        }
        memcpy(y, x, sizeof(float) * CH * LEN); /* in place */
        vx_snake_isa(isa, y, y, alpha, CH, LEN);
        CHECK_MSG(!memcmp(y, y0, sizeof(float) * CH * LEN), "snake isa %d differs from scalar", isa);
    }
    free(x), free(y), free(y0);
}

typedef struct {
    const char *name;
    double atol;
} tol;

static void test_golden(void) {
    char gpath[4096], opath[256];
    snprintf(gpath, sizeof gpath, "%s", tl_path("chatterbox/golden/10_s3gen_flow.safetensors"));
    snprintf(opath, sizeof opath, "test_s3gen_flow_%d.safetensors", (int)getpid());
    vx_err err = {0};
    vx_st_file *g = NULL, *o = NULL;
    if (vx_st_open(gpath, &g, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        tl_failures++;
        return;
    }
    char model[4096];
    snprintf(model, sizeof model, "%s", tl_path("chatterbox/ckpt"));
    vx_st_writer *w = vx_st_writer_new();
    vx_stage_args a = {model, g, w, 2, 0, NULL, 0};
    vocis_status st = vx_stage_s3gen_flow(&a, &err);
    CHECK_MSG(st == VOCIS_OK, "%s", err.msg);
    if (st == VOCIS_OK) st = vx_st_writer_save(w, opath, &err);
    vx_st_writer_free(w);
    if (st == VOCIS_OK && vx_st_open(opath, &o, &err) == VOCIS_OK) {
        static const tol t[] = {{"spks", 1e-5},
                                {"token_emb_masked_input", 1e-6},
                                {"encoder_out", 1e-4},
                                {"mu", 1e-4},
                                {"cond", 0},
                                {"mask", 0},
                                {"t_span", 1e-6},
                                {"est_t_all_steps", 1e-6},
                                {"est_step0_time_mlp", 1e-4},
                                {"est_step0_down0_resnet", 1e-4},
                                {"est_step0_down0_transformer_last", 1e-4},
                                {"est_step0_down0_downsample", 1e-4},
                                {"est_step0_mid0_resnet", 1e-4},
                                {"est_step0_mid0_transformer_last", 1e-4},
                                {"est_step0_mid1_resnet", 1e-4},
                                {"est_step0_mid1_transformer_last", 1e-4},
                                {"est_step0_up0_resnet", 1e-4},
                                {"est_step0_up0_transformer_last", 1e-4},
                                {"est_step0_up0_upsample", 1e-4},
                                {"est_step0_final_block", 1e-4},
                                {"est_dxdt_step0", 1e-4},
                                {"est_dxdt_last", 1e-4},
                                {"solve_euler_out", 1e-4},
                                {"mel_out", 1e-4}};
        for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
            const vx_tensor *gt = vx_st_find(g, t[i].name), *ot = vx_st_find(o, t[i].name);
            CHECK_MSG(gt && ot, "%s missing", t[i].name);
            if (!gt || !ot) continue;
            int same = gt->ndim == ot->ndim && vx_numel(gt) == vx_numel(ot);
            for (int dd = 0; same && dd < gt->ndim; dd++) same = gt->shape[dd] == ot->shape[dd];
            char gs[64], os[64];
            CHECK_MSG(same, "%s: shape %s, golden %s", t[i].name, vx_shape_str(ot, os, sizeof os),
                      vx_shape_str(gt, gs, sizeof gs));
            if (!same) continue;
            double m = tl_max_abs_diff(gt->data, ot->data, (size_t)vx_numel(gt));
            printf("  %-34s max|diff| %.3g (tol %.0e)\n", t[i].name, m, t[i].atol);
            CHECK_MSG(m <= t[i].atol, "%s: max |diff| %.3g > %.3g", t[i].name, m, t[i].atol);
        }
        vx_st_close(o);
    } else {
        CHECK_MSG(0, "%s", err.msg);
    }
    unlink(opath);
    vx_st_close(g);
}

/* Normal use: no injected noise; the generator continues the stream T3 used
 * (seed 0, one exponential_ over 8194 logits per sampled token), so the noise
 * drawn here must be upstream's z_noise and the mel must match the golden. */
static void test_rng_path(void) {
    vx_err err = {0};
    vx_st_file *g = NULL, *s = NULL;
    vx_weights *w = NULL;
    char p1[4096], p2[4096], p3[4096];
    snprintf(p1, sizeof p1, "%s", tl_path("chatterbox/golden/10_s3gen_flow.safetensors"));
    snprintf(p2, sizeof p2, "%s", tl_path("chatterbox/golden/08_t3_sampled.safetensors"));
    snprintf(p3, sizeof p3, "%s", tl_path("chatterbox/ckpt/s3gen.safetensors"));
    vx_cb_config cfg;
    vx_cb_config_default(&cfg);
    if (vx_st_open(p1, &g, &err) || vx_st_open(p2, &s, &err) || vx_weights_open(p3, &w, &err) ||
        vx_cb_config_load(&cfg, tl_path("chatterbox/ckpt"), NULL, &err)) {
        CHECK_MSG(0, "%s", err.msg);
        goto out;
    }
    vx_s3gen_flow *f = NULL;
    if (vx_s3gen_flow_load(w, &cfg, &f, &err)) {
        CHECK_MSG(0, "%s", err.msg);
        goto out;
    }
    const vx_tensor *tok = vx_st_find(g, "speech_tokens"), *ptok = vx_st_find(g, "prompt_token"),
                    *feat = vx_st_find(g, "prompt_feat"), *emb = vx_st_find(g, "embedding"),
                    *mel_g = vx_st_find(g, "mel_out"), *t3 = vx_st_find(s, "tokens");
    CHECK(tok && ptok && feat && emb && mel_g && t3 && tok->dtype == VX_I64 && ptok->dtype == VX_I64);
    if (tok && ptok && feat && emb && mel_g && t3) {
        vx_rng rng;
        vx_rng_seed(&rng, 0);
        float *q = malloc(8194 * sizeof(float));
        for (int64_t k = 0; k < t3->shape[1]; k++) vx_rng_exponential(&rng, q, 8194);
        free(q);
        float *mel = NULL;
        int64_t tm = 0;
        vocis_status st = vx_s3gen_flow_infer(f, tok->data, tok->shape[1], ptok->data, ptok->shape[1], feat->data,
                                              feat->shape[1], emb->data, 10, &rng, NULL, &mel, &tm, 2, &err);
        CHECK_MSG(st == VOCIS_OK, "%s", err.msg);
        if (st == VOCIS_OK) {
            CHECK(tm == mel_g->shape[2]);
            if (tm == mel_g->shape[2]) {
                double m = tl_max_abs_diff(mel, mel_g->data, (size_t)(80 * tm));
                printf("  mel_out via the continued RNG     max|diff| %.3g (tol 1e-04)\n", m);
                CHECK_MSG(m <= 1e-4, "mel_out via RNG: max |diff| %.3g", m);
            }
        }
        free(mel);
    }
    vx_s3gen_flow_free(f);
out:
    vx_weights_close(w);
    vx_st_close(s);
    vx_st_close(g);
}

/* Bad inputs and the synthetic builder on small dims. */
static void test_api(void) {
    vx_s3gen_flow_dims d;
    vx_s3gen_flow_dims_real(&d);
    d.input_size = d.enc_dim = 32;
    d.enc_heads = 2;
    d.enc_ffn = 48;
    d.n_enc = 1;
    d.n_up = 1;
    d.dec_ch = 16;
    d.dec_heads = 2;
    d.dec_head_dim = 8;
    d.dec_ffn = d.temb_dim = 64;
    d.n_tblocks = 1;
    d.n_mid = 1;
    vx_err err = {0};
    for (int dt = 0; dt < 3; dt++) {
        vx_dtype wdt = dt == 0 ? VX_F32 : dt == 1 ? VX_F16 : VX_BF16;
        vx_s3gen_flow *f = NULL;
        vocis_status st = vx_s3gen_flow_synthetic(&d, wdt, 7, &f, &err);
        CHECK_MSG(st == VOCIS_OK, "%s", err.msg);
        if (st) continue;
        int64_t tok[5] = {1, 2, 3, 4, 6560}, ptok[3] = {10, 20, 30};
        float feat[5 * 80], emb[192];
        tl_fill_random(feat, 5 * 80, 11);
        tl_fill_random(emb, 192, 12);
        vx_rng rng;
        vx_rng_seed(&rng, 42);
        float *mel = NULL;
        int64_t tm = 0;
        st = vx_s3gen_flow_infer(f, tok, 5, ptok, 3, feat, 5, emb, 3, &rng, NULL, &mel, &tm, 2, &err);
        CHECK_MSG(st == VOCIS_OK, "%s", err.msg);
        CHECK(tm == 2 * 8 - 5);
        int finite = mel != NULL;
        for (int64_t i = 0; finite && i < 80 * tm; i++) finite = isfinite(mel[i]);
        CHECK(finite);
        free(mel);
        mel = NULL;
        /* errors: empty token list, special token, prompt mel longer than the tokens */
        st = vx_s3gen_flow_infer(f, tok, 0, ptok, 3, feat, 5, emb, 3, &rng, NULL, &mel, &tm, 1, &err);
        CHECK(st == VOCIS_E_ARG && strstr(err.msg, "empty") && !mel);
        int64_t bad[2] = {5, 6561};
        st = vx_s3gen_flow_infer(f, bad, 2, ptok, 3, feat, 5, emb, 3, &rng, NULL, &mel, &tm, 1, &err);
        CHECK(st == VOCIS_E_ARG && strstr(err.msg, "6561") && !mel);
        st = vx_s3gen_flow_infer(f, tok, 1, NULL, 0, feat, 5, emb, 3, &rng, NULL, &mel, &tm, 1, &err);
        CHECK(st == VOCIS_E_ARG && strstr(err.msg, "prompt mel") && !mel);
        if (dt == 0) {
            double sec = 0;
            st = vx_s3gen_flow_bench_step(f, 64, 2, 1, &sec, &err);
            CHECK_MSG(st == VOCIS_OK && sec > 0, "%s", err.msg);
        }
        vx_s3gen_flow_free(f);
    }
}

/* One CFM step at the tiny checkpoint's dims (L = 286 like the golden run). */
static void time_tiny_step(void) {
    char path[4096];
    snprintf(path, sizeof path, "%s", tl_path("chatterbox/ckpt/s3gen.safetensors"));
    vx_err err = {0};
    vx_weights *w = NULL;
    vx_cb_config cfg;
    vx_cb_config_default(&cfg);
    if (vx_cb_config_load(&cfg, tl_path("chatterbox/ckpt"), NULL, &err) || vx_weights_open(path, &w, &err)) {
        CHECK_MSG(0, "%s", err.msg);
        return;
    }
    vx_s3gen_flow *f = NULL;
    if (vx_s3gen_flow_load(w, &cfg, &f, &err) == VOCIS_OK) {
        for (int nth = 1; nth <= 2; nth++) {
            double sec = 0;
            CHECK(vx_s3gen_flow_bench_step(f, 286, 5, nth, &sec, &err) == VOCIS_OK);
            printf("  tiny CFM step (CFG pair, L = 286), %d thread(s): %.2f ms\n", nth, sec * 1e3);
        }
    } else {
        CHECK_MSG(0, "%s", err.msg);
    }
    /* a config with the wrong decoder head split is refused with a message naming both */
    vx_s3gen_flow *g = NULL;
    cfg.flow_decoder_head_dim = 32;
    cfg.flow_decoder_heads = 8;
    CHECK(vx_s3gen_flow_load(w, &cfg, &g, &err) == VOCIS_E_SHAPE && strstr(err.msg, "to_q") && !g);
    vx_s3gen_flow_free(f);
    vx_weights_close(w);
}

int main(int argc, char **argv) {
    if (argc > 1) tl_data_dir = argv[1];
    test_mish();
    test_conv_tm();
    test_relpos(7);
    test_relpos(300); /* more than one query block */
    test_attention_blocked();
    test_snake();
    test_fused_rows();
    test_api();
    test_golden();
    test_rng_path();
    time_tiny_step();
    return tl_finish("test_s3gen_flow");
}
