/* HiFT vocoder (HiFTGenerator + ConvRNNF0Predictor + SourceModuleHnNSF), see hift.h and the
 * shared spec chatterbox.md §9.7–9.8. Reads top to bottom like the PyTorch module:
 * weights → f0 predictor → source → decode (STFT, generator body, iSTFT) → vocode → trim/fade. */
#include "models/chatterbox/hift.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/pool.h"
#include "kernels/conv.h"
#include "kernels/ops_extra.h"
#include "kernels/precision.h"

/* Upstream constants (S3Token2Wav builds HiFTGenerator with these; not stored in the checkpoint). */
static const int64_t UP_RATES[VX_HIFT_NSTAGES] = {8, 5, 3};
static const int64_t SRC_DOWN[VX_HIFT_NSTAGES] = {15, 3, 1}; /* cumulative rates, reversed */
static const int64_t DILATIONS[VX_HIFT_NDIL] = {1, 3, 5};
static const int64_t RB_KERNELS[VX_HIFT_NKERNELS] = {3, 7, 11};
static const int64_t SRC_RB_KERNELS[VX_HIFT_NSTAGES] = {7, 7, 11};
#define NSF_ALPHA 0.1f       /* sine_amp */
#define NSF_SIGMA 0.003f     /* noise_std */
#define NSF_VOICED 10.0f     /* voiced threshold (Hz) */
#define LRELU_SLOPE 0.1f
#define AUDIO_LIMIT 0.99f
#define MAG_MAX 1e2f
#define NBINS (VX_HIFT_NFFT / 2 + 1) /* 9 */
#define NSPEC (2 * NBINS)           /* 18 = n_fft + 2 */

/* ================================================================ weights */

static void *own_bytes(vx_hift *h, size_t bytes, vx_err *err, const char *what) {
    if (h->nbufs == h->capbufs) {
        int cap = h->capbufs ? 2 * h->capbufs : 256;
        void **nb = realloc(h->bufs, (size_t)cap * sizeof *nb);
        if (!nb) {
            vx_fail(err, VOCIS_E_NOMEM, "out of memory for the HiFT buffer list");
            return NULL;
        }
        h->bufs = nb;
        h->capbufs = cap;
    }
    void *p = vx_malloc(err, bytes ? bytes : 1, what);
    if (p) h->bufs[h->nbufs++] = p;
    return p;
}

static float *own(vx_hift *h, size_t n, vx_err *err, const char *what) {
    return own_bytes(h, n * sizeof(float), err, what);
}

/* Frees an owned buffer before vx_hift_free (a repacked or converted original). */
static void disown(vx_hift *h, void *p) {
    for (int i = 0; i < h->nbufs; i++)
        if (h->bufs[i] == p) {
            free(p);
            h->bufs[i] = h->bufs[--h->nbufs];
            return;
        }
}

void vx_hift_free(vx_hift *h) {
    if (!h) return;
    for (int i = 0; i < h->nbufs; i++) free(h->bufs[i]);
    free(h->bufs);
    free(h);
}

static vx_hift *hift_new(vx_err *err) {
    vx_hift *h = vx_calloc(err, 1, sizeof *h, "HiFT");
    if (!h) return NULL;
    /* scipy get_window("hann", 16, fftbins=True) in float64, then float32 */
    for (int n = 0; n < VX_HIFT_NFFT; n++)
        h->window[n] = (float)(0.5 - 0.5 * cos(2.0 * M_PI * n / VX_HIFT_NFFT));
    return h;
}

/* A float tensor (any of F32/F16/BF16) of the expected shape, copied to owned f32. */
static vocis_status load_f32(vx_hift *h, const vx_weights *w, int ndim, const int64_t *shape, float **out,
                             vx_tensor *info, vx_err *err, const char *name) {
    vx_tensor t;
    VX_TRY(vx_weights_expect(w, VX_FLOATS, ndim, shape, &t, err, "%s", name));
    size_t n = (size_t)vx_numel(&t);
    float *p = own(h, n, err, name);
    if (!p) return VOCIS_E_NOMEM;
    vx_to_f32(p, t.data, t.dtype, n);
    *out = p;
    if (info) *info = t;
    return VOCIS_OK;
}

/* A conv layer `name` (full tensor prefix): weight-normed (g = original0 / weight_g, v = original1 /
 * weight_v, norm per index of dim 0, §0.3) or plain `weight`, plus `bias`. d0, d1, k: expected
 * weight shape (−1 = read from the file). Weight norm is folded here: w = g · v / ‖v[i]‖. */
static vocis_status load_conv(vx_hift *h, const vx_weights *w, const char *name, int64_t d0, int64_t d1, int64_t k,
                              int transposed, vx_hift_conv *c, vx_err *err) {
    char gname[512], vname[512], bname[512];
    snprintf(gname, sizeof gname, "%s.parametrizations.weight.original0", name);
    snprintf(vname, sizeof vname, "%s.parametrizations.weight.original1", name);
    if (!vx_weights_has(w, vname)) {
        char lg[512], lv[512];
        snprintf(lg, sizeof lg, "%s.weight_g", name);
        snprintf(lv, sizeof lv, "%s.weight_v", name);
        if (vx_weights_has(w, lv)) {
            memcpy(gname, lg, sizeof lg);
            memcpy(vname, lv, sizeof lv);
        } else {
            snprintf(vname, sizeof vname, "%s.weight", name);
            gname[0] = '\0';
        }
    }
    vx_tensor vt;
    float *v;
    VX_TRY(load_f32(h, w, VX_DIMS(d0, d1, k), &v, &vt, err, vname));
    const int64_t n0 = vt.shape[0], n1 = vt.shape[1], nk = vt.shape[2];
    if (gname[0]) {
        float *g;
        VX_TRY(load_f32(h, w, VX_DIMS(n0, 1, 1), &g, NULL, err, gname));
        const int64_t row = n1 * nk;
        for (int64_t i = 0; i < n0; i++) {
            double ss = 0;
            for (int64_t j = 0; j < row; j++) ss += (double)v[i * row + j] * v[i * row + j];
            float scale = g[i] / (float)sqrt(ss);
            for (int64_t j = 0; j < row; j++) v[i * row + j] *= scale;
        }
    }
    c->w = v;
    c->k = nk;
    c->cin = transposed ? n0 : n1;
    c->cout = transposed ? n1 : n0;
    snprintf(bname, sizeof bname, "%s.bias", name);
    return load_f32(h, w, VX_DIMS(c->cout), &c->b, NULL, err, bname);
}

static vocis_status load_resblock(vx_hift *h, const vx_weights *w, const char *name, int64_t ch, int64_t k,
                                  vx_hift_resblock *rb, vx_err *err) {
    char buf[512];
    rb->ch = ch;
    for (int j = 0; j < VX_HIFT_NDIL; j++) {
        snprintf(buf, sizeof buf, "%s.convs1.%d", name, j);
        VX_TRY(load_conv(h, w, buf, ch, ch, j == 0 ? k : rb->k, 0, &rb->c1[j], err));
        if (j == 0) rb->k = rb->c1[0].k;
        snprintf(buf, sizeof buf, "%s.convs2.%d", name, j);
        VX_TRY(load_conv(h, w, buf, ch, ch, rb->k, 0, &rb->c2[j], err));
        snprintf(buf, sizeof buf, "%s.activations1.%d.alpha", name, j);
        VX_TRY(load_f32(h, w, VX_DIMS(ch), &rb->a1[j], NULL, err, buf));
        snprintf(buf, sizeof buf, "%s.activations2.%d.alpha", name, j);
        VX_TRY(load_f32(h, w, VX_DIMS(ch), &rb->a2[j], NULL, err, buf));
    }
    if (rb->k % 2 == 0) return vx_fail(err, VOCIS_E_SHAPE, "%s: resblock kernel size %lld is even", name, (long long)rb->k);
    return VOCIS_OK;
}

static int count_indexed(const vx_weights *w, const char *fmt_prefix, const char *pfx, const char *suffix) {
    char buf[512];
    int n = 0;
    for (;; n++) {
        snprintf(buf, sizeof buf, "%s%s.%d.%s", pfx, fmt_prefix, n, suffix);
        if (!vx_weights_has(w, buf)) break;
    }
    return n;
}

static vocis_status hift_load(vx_hift *h, const vx_weights *w, const char *p, vx_err *err) {
    char buf[512];
    /* The module counts are fixed by upstream's constants; check the file agrees. */
    int nups = count_indexed(w, "ups", p, "bias"), nrb = count_indexed(w, "resblocks", p, "convs1.0.bias");
    int nsrb = count_indexed(w, "source_resblocks", p, "convs1.0.bias");
    if (nups != VX_HIFT_NSTAGES || nrb != VX_HIFT_NSTAGES * VX_HIFT_NKERNELS || nsrb != VX_HIFT_NSTAGES)
        return vx_fail(err, VOCIS_E_SHAPE,
                       "%s: HiFT with %d upsamplers, %d resblocks, %d source resblocks (prefix '%s'); expected %d, %d, %d",
                       vx_weights_path(w), nups, nrb, nsrb, p, VX_HIFT_NSTAGES, VX_HIFT_NSTAGES * VX_HIFT_NKERNELS,
                       VX_HIFT_NSTAGES);

    /* f0 predictor: condnet.{0,2,4,6,8} (k 3), classifier */
    for (int i = 0; i < VX_HIFT_NCONDNET; i++) {
        snprintf(buf, sizeof buf, "%sf0_predictor.condnet.%d", p, 2 * i);
        VX_TRY(load_conv(h, w, buf, i ? h->f0_ch : -1, i ? h->f0_ch : -1, 3, 0, &h->condnet[i], err));
        if (i == 0) {
            h->f0_ch = h->condnet[0].cout;
            h->in_ch = h->condnet[0].cin;
        }
    }
    float *cb;
    snprintf(buf, sizeof buf, "%sf0_predictor.classifier.weight", p);
    VX_TRY(load_f32(h, w, VX_DIMS(1, h->f0_ch), &h->cls_w, NULL, err, buf));
    snprintf(buf, sizeof buf, "%sf0_predictor.classifier.bias", p);
    VX_TRY(load_f32(h, w, VX_DIMS(1), &cb, NULL, err, buf));
    h->cls_b = cb[0];

    /* m_source.l_linear (9 → 1) */
    float *lw, *lb;
    snprintf(buf, sizeof buf, "%sm_source.l_linear.weight", p);
    VX_TRY(load_f32(h, w, VX_DIMS(1, VX_HIFT_NB_HARM), &lw, NULL, err, buf));
    snprintf(buf, sizeof buf, "%sm_source.l_linear.bias", p);
    VX_TRY(load_f32(h, w, VX_DIMS(1), &lb, NULL, err, buf));
    memcpy(h->lin_w, lw, sizeof h->lin_w);
    h->lin_b = lb[0];

    /* generator */
    snprintf(buf, sizeof buf, "%sconv_pre", p);
    VX_TRY(load_conv(h, w, buf, -1, h->in_ch, 7, 0, &h->conv_pre, err));
    h->base = h->conv_pre.cout;
    int64_t ch = h->base;
    for (int i = 0; i < VX_HIFT_NSTAGES; i++) {
        snprintf(buf, sizeof buf, "%sups.%d", p, i);
        VX_TRY(load_conv(h, w, buf, ch, ch / 2, -1, 1, &h->ups[i], err));
        if ((h->ups[i].k - UP_RATES[i]) % 2 || h->ups[i].k < UP_RATES[i])
            return vx_fail(err, VOCIS_E_SHAPE, "%s: %s kernel %lld does not fit stride %lld", vx_weights_path(w), buf,
                           (long long)h->ups[i].k, (long long)UP_RATES[i]);
        ch /= 2;
        snprintf(buf, sizeof buf, "%ssource_downs.%d", p, i);
        VX_TRY(load_conv(h, w, buf, ch, NSPEC, SRC_DOWN[i] == 1 ? 1 : 2 * SRC_DOWN[i], 0, &h->source_downs[i], err));
        snprintf(buf, sizeof buf, "%ssource_resblocks.%d", p, i);
        VX_TRY(load_resblock(h, w, buf, ch, SRC_RB_KERNELS[i], &h->source_rb[i], err));
        for (int j = 0; j < VX_HIFT_NKERNELS; j++) {
            snprintf(buf, sizeof buf, "%sresblocks.%d", p, i * VX_HIFT_NKERNELS + j);
            VX_TRY(load_resblock(h, w, buf, ch, RB_KERNELS[j], &h->rb[i * VX_HIFT_NKERNELS + j], err));
        }
    }
    snprintf(buf, sizeof buf, "%sconv_post", p);
    VX_TRY(load_conv(h, w, buf, NSPEC, ch, 7, 0, &h->conv_post, err));
    return VOCIS_OK;
}

/* ---- tap-major repacking (kernels/conv.h time-major section) and the precision policy ---- */

static vocis_status repack_conv(vx_hift *h, vx_hift_conv *c, int transposed, vx_err *err) {
    const int64_t ci = c->cin, co = c->cout, K = c->k;
    float *m = own(h, (size_t)(ci * co * K), err, "HiFT repacked conv weights");
    if (!m) return VOCIS_E_NOMEM;
    for (int64_t o = 0; o < co; o++)
        for (int64_t i = 0; i < ci; i++)
            for (int64_t j = 0; j < K; j++) {
                if (transposed) /* [cin][cout][k] → [k·cout + o][cin] */
                    m[(j * co + o) * ci + i] = c->w[(i * co + o) * K + j];
                else /* [cout][cin][k] → [o][k·cin + i] */
                    m[o * K * ci + j * ci + i] = c->w[(o * ci + i) * K + j];
            }
    c->m = (vx_mat){VX_F32, transposed ? K * co : co, transposed ? ci : K * ci, m};
    disown(h, c->w);
    c->w = NULL;
    return VOCIS_OK;
}

static vocis_status repack_resblock(vx_hift *h, vx_hift_resblock *rb, vx_err *err) {
    for (int j = 0; j < VX_HIFT_NDIL; j++) {
        VX_TRY(repack_conv(h, &rb->c1[j], 0, err));
        VX_TRY(repack_conv(h, &rb->c2[j], 0, err));
        if (!(rb->i1[j] = own(h, (size_t)rb->ch, err, "HiFT snake")) || !(rb->i2[j] = own(h, (size_t)rb->ch, err, "HiFT snake")))
            return VOCIS_E_NOMEM;
        vx_snake_inv(rb->i1[j], rb->a1[j], rb->ch);
        vx_snake_inv(rb->i2[j], rb->a2[j], rb->ch);
    }
    return VOCIS_OK;
}

static vocis_status hift_prepare(vx_hift *h, vx_err *err) {
    VX_TRY(repack_conv(h, &h->conv_pre, 0, err));
    VX_TRY(repack_conv(h, &h->conv_post, 0, err));
    for (int i = 0; i < VX_HIFT_NSTAGES; i++) {
        VX_TRY(repack_conv(h, &h->ups[i], 1, err));
        VX_TRY(repack_conv(h, &h->source_downs[i], 0, err));
        VX_TRY(repack_resblock(h, &h->source_rb[i], err));
        for (int j = 0; j < VX_HIFT_NKERNELS; j++) VX_TRY(repack_resblock(h, &h->rb[i * VX_HIFT_NKERNELS + j], err));
    }
    return VOCIS_OK;
}

static vocis_status to_bf16(vx_hift *h, vx_hift_conv *c, vx_err *err) {
    if (c->m.dtype != VX_F32) return VOCIS_OK;
    size_t n = (size_t)(c->m.rows * c->m.cols);
    uint16_t *b = own_bytes(h, n * sizeof(uint16_t), err, "HiFT bf16 conv weights");
    if (!b) return VOCIS_E_NOMEM;
    vx_f32_to_bf16_n(b, c->m.data, n, 1);
    disown(h, (void *)c->m.data);
    c->m.data = b;
    c->m.dtype = VX_BF16;
    c->m.act_bf16 = 1;
    return VOCIS_OK;
}

vocis_status vx_hift_set_precision(vx_hift *h, int precision, vx_err *err) {
    int bf16 = precision == VX_PREC_BF16 || precision == VX_PREC_Q8;
    /* Without AVX512_BF16 the products would widen bf16 weights back to float32 on every call:
     * slower than float32 weights and no closer to exact, so the matrices stay float32 there. */
    if (bf16 && !vx_cpu_has_avx512bf16()) bf16 = 0;
    if (!bf16) {
        if (h->bf16) return vx_fail(err, VOCIS_E_ARG, "HiFT: weights already converted to bf16, cannot compute exactly");
        return VOCIS_OK;
    }
    for (int i = 0; i < VX_HIFT_NSTAGES; i++) {
        VX_TRY(to_bf16(h, &h->ups[i], err));
        vx_hift_resblock *rbs[1 + VX_HIFT_NKERNELS] = {&h->source_rb[i]};
        for (int j = 0; j < VX_HIFT_NKERNELS; j++) rbs[1 + j] = &h->rb[i * VX_HIFT_NKERNELS + j];
        for (int r = 0; r <= VX_HIFT_NKERNELS; r++)
            for (int j = 0; j < VX_HIFT_NDIL; j++) {
                VX_TRY(to_bf16(h, &rbs[r]->c1[j], err));
                VX_TRY(to_bf16(h, &rbs[r]->c2[j], err));
            }
    }
    h->bf16 = 1;
    return VOCIS_OK;
}

vocis_status vx_hift_load(const vx_weights *w, const char *prefix, int precision, vx_hift **out, vx_err *err) {
    *out = NULL;
    vx_hift *h = hift_new(err);
    if (!h) return VOCIS_E_NOMEM;
    vocis_status st = hift_load(h, w, prefix ? prefix : "mel2wav.", err);
    if (st == VOCIS_OK) st = hift_prepare(h, err);
    if (st == VOCIS_OK) st = vx_hift_set_precision(h, precision, err);
    if (st != VOCIS_OK) {
        vx_hift_free(h);
        return vx_errctx(err, "loading HiFT");
    }
    *out = h;
    return VOCIS_OK;
}

/* ---- random weights (synthetic benchmark) ---- */

static float *rand_buf(vx_hift *h, size_t n, float scale, uint64_t *s, vx_err *err) {
    float *p = own(h, n, err, "random HiFT weights");
    if (!p) return NULL;
    for (size_t i = 0; i < n; i++) {
        *s = *s * 6364136223846793005ull + 1442695040888963407ull;
        p[i] = scale * (float)((double)(*s >> 40) / (double)(1ull << 24) * 2.0 - 1.0);
    }
    return p;
}

static vocis_status rand_conv(vx_hift *h, int64_t cin, int64_t cout, int64_t k, int transposed, uint64_t *s,
                              vx_hift_conv *c, vx_err *err) {
    c->cin = cin;
    c->cout = cout;
    c->k = k;
    /* ~unit gain: uniform(−a, a) with a = sqrt(3 / fan_in) */
    float a = (float)sqrt(3.0 / (double)((transposed ? cin / 2 : cin) * k));
    if (!(c->w = rand_buf(h, (size_t)(cin * cout * k), a, s, err))) return VOCIS_E_NOMEM;
    if (!(c->b = rand_buf(h, (size_t)cout, 0.01f, s, err))) return VOCIS_E_NOMEM;
    return VOCIS_OK;
}

static vocis_status rand_resblock(vx_hift *h, int64_t ch, int64_t k, uint64_t *s, vx_hift_resblock *rb, vx_err *err) {
    rb->ch = ch;
    rb->k = k;
    for (int j = 0; j < VX_HIFT_NDIL; j++) {
        VX_TRY(rand_conv(h, ch, ch, k, 0, s, &rb->c1[j], err));
        VX_TRY(rand_conv(h, ch, ch, k, 0, s, &rb->c2[j], err));
        if (!(rb->a1[j] = rand_buf(h, (size_t)ch, 0.5f, s, err))) return VOCIS_E_NOMEM;
        if (!(rb->a2[j] = rand_buf(h, (size_t)ch, 0.5f, s, err))) return VOCIS_E_NOMEM;
        for (int64_t c = 0; c < ch; c++) rb->a1[j][c] += 1.0f, rb->a2[j][c] += 1.0f;
    }
    return VOCIS_OK;
}

static vocis_status hift_random(vx_hift *h, int64_t base, int64_t f0_ch, uint64_t seed, vx_err *err) {
    uint64_t s = seed ^ 0x9e3779b97f4a7c15ull;
    h->in_ch = 80;
    h->base = base;
    h->f0_ch = f0_ch;
    for (int i = 0; i < VX_HIFT_NCONDNET; i++) VX_TRY(rand_conv(h, i ? f0_ch : 80, f0_ch, 3, 0, &s, &h->condnet[i], err));
    if (!(h->cls_w = rand_buf(h, (size_t)f0_ch, (float)sqrt(3.0 / f0_ch), &s, err))) return VOCIS_E_NOMEM;
    h->cls_b = 150.0f; /* a plausible voiced f0 */
    for (int i = 0; i < VX_HIFT_NB_HARM; i++) h->lin_w[i] = 0.3f;
    h->lin_b = 0.0f;
    VX_TRY(rand_conv(h, 80, base, 7, 0, &s, &h->conv_pre, err));
    int64_t ch = base;
    for (int i = 0; i < VX_HIFT_NSTAGES; i++) {
        static const int64_t UPK[VX_HIFT_NSTAGES] = {16, 11, 7};
        VX_TRY(rand_conv(h, ch, ch / 2, UPK[i], 1, &s, &h->ups[i], err));
        ch /= 2;
        VX_TRY(rand_conv(h, NSPEC, ch, SRC_DOWN[i] == 1 ? 1 : 2 * SRC_DOWN[i], 0, &s, &h->source_downs[i], err));
        VX_TRY(rand_resblock(h, ch, SRC_RB_KERNELS[i], &s, &h->source_rb[i], err));
        for (int j = 0; j < VX_HIFT_NKERNELS; j++)
            VX_TRY(rand_resblock(h, ch, RB_KERNELS[j], &s, &h->rb[i * VX_HIFT_NKERNELS + j], err));
    }
    return rand_conv(h, ch, NSPEC, 7, 0, &s, &h->conv_post, err);
}

vocis_status vx_hift_random(int64_t base, int64_t f0_ch, uint64_t seed, vx_hift **out, vx_err *err) {
    *out = NULL;
    if (base < 8 || base % 8 || f0_ch < 1)
        return vx_fail(err, VOCIS_E_ARG, "HiFT: base_channels %lld must be a positive multiple of 8", (long long)base);
    vx_hift *h = hift_new(err);
    if (!h) return VOCIS_E_NOMEM;
    vocis_status st = hift_random(h, base, f0_ch, seed, err);
    if (st == VOCIS_OK) st = hift_prepare(h, err);
    if (st != VOCIS_OK) {
        vx_hift_free(h);
        return st;
    }
    *out = h;
    return VOCIS_OK;
}

/* ============================================================ primitives */

/* Channel-major conv with the loaded PyTorch layout: the f0 predictor (small, float32 in every mode,
 * since f0 errors accumulate into the source phase). */
static void conv(const vx_hift_conv *c, const float *x, int64_t lin, float *y, int64_t stride, int64_t dil,
                 int64_t pad, int nthreads) {
    vx_conv1d_params p = {c->cin, c->cout, c->k, stride, dil, 1, pad, pad};
    vx_mat m = {VX_F32, c->cout, c->cin * c->k, c->w};
    vx_conv1d(y, x, 1, lin, &p, &m, c->b, nthreads);
}

/* The generator runs time-major: activations x[t][c] in buffers with P zero rows before and after
 * (margins), so that every zero-padded conv reads its padding from the margins and needs no copy
 * (kernels/conv.h, time-major section). A `tmbuf` is such a view: rows [0, len) of ch floats at
 * `x`, margins at x − P·ch and x + len·ch. */
typedef struct tmbuf {
    float *x;
    int64_t ch, len;
} tmbuf;

static int64_t margin_rows(const vx_hift *h) {
    int64_t p = (h->conv_pre.k - 1) / 2;
    if ((h->conv_post.k - 1) / 2 > p) p = (h->conv_post.k - 1) / 2;
    for (int i = 0; i < VX_HIFT_NSTAGES; i++) {
        if (h->source_downs[i].k > p) p = h->source_downs[i].k; /* pad k/2 left, < k past the end */
        const vx_hift_resblock *rbs[1 + VX_HIFT_NKERNELS] = {&h->source_rb[i]};
        for (int j = 0; j < VX_HIFT_NKERNELS; j++) rbs[1 + j] = &h->rb[i * VX_HIFT_NKERNELS + j];
        for (int r = 0; r <= VX_HIFT_NKERNELS; r++) {
            int64_t q = DILATIONS[VX_HIFT_NDIL - 1] * (rbs[r]->k - 1) / 2;
            if (q > p) p = q;
        }
    }
    return p;
}

/* A view over `mem` (room for (len + 2P)·ch floats) with zeroed margins. */
static tmbuf tm_view(float *mem, int64_t ch, int64_t len, int64_t P) {
    tmbuf b = {mem + P * ch, ch, len};
    memset(mem, 0, (size_t)(P * ch) * sizeof(float));
    memset(b.x + len * ch, 0, (size_t)(P * ch) * sizeof(float));
    return b;
}

/* y = conv(x) (+ y when accumulate) on time-major views; stride 1 output length = x.len. */
static void tconv(const vx_hift_conv *c, tmbuf x, tmbuf y, int64_t stride, int64_t dil, int64_t pad, int accumulate,
                  int nthreads) {
    vx_conv1d_tm_margin(y.x, y.ch, x.x, x.ch, y.len, c->cin, c->cout, c->k, stride, dil, pad, &c->m, c->b, accumulate,
                        nthreads);
}

/* Elementwise steps of the generator, on the pool above `min` elements. */
enum { EW_LRELU, EW_ELU, EW_ADD, EW_AVG_LRELU };
typedef struct {
    int op;
    float *x;
    const float *r, *acc;
    float slope;
} ew_job;

static void ew_range(void *ctx, int64_t a, int64_t b) {
    const ew_job *j = ctx;
    float *x = j->x;
    const float slope = j->slope;
    switch (j->op) {
    case EW_LRELU: /* branch-free */
        for (int64_t i = a; i < b; i++) x[i] = fmaxf(x[i], 0.0f) + slope * fminf(x[i], 0.0f);
        break;
    case EW_ELU: /* ELU(1) */
        for (int64_t i = a; i < b; i++) x[i] = x[i] > 0.0f ? x[i] : expf(x[i]) - 1.0f;
        break;
    case EW_ADD:
        for (int64_t i = a; i < b; i++) x[i] += j->r[i];
        break;
    case EW_AVG_LRELU: /* x = lrelu((acc + r) / 3) = v ≥ 0 ? v : slope·v, branch-free */
        for (int64_t i = a; i < b; i++) {
            float v = (j->acc[i] + j->r[i]) / (float)VX_HIFT_NKERNELS;
            x[i] = fmaxf(v, 0.0f) + slope * fminf(v, 0.0f);
        }
        break;
    }
}

static void elementwise(int op, float *x, const float *r, const float *acc, float slope, int64_t n, int64_t min,
                        int nthreads) {
    ew_job j = {op, x, r, acc, slope};
    vx_pool_for(n > min ? nthreads : 1, n, 16, ew_range, &j);
}

static void leaky_relu(float *x, int64_t n, float slope, int nthreads) {
    elementwise(EW_LRELU, x, NULL, NULL, slope, n, 65536, nthreads);
}

/* ResBlock in place: x += conv2(snake(conv1(snake(x, a1), dil d_j), a2)) for j = 0..2 (upstream:
 * xt = c2(a2(c1(a1(x)))); x = xt + x). t, u: scratch views of x's shape (margins zeroed here). */
static void resblock(const vx_hift_resblock *rb, tmbuf x, float *tmem, float *umem, int64_t P, int nthreads) {
    const int64_t k = rb->k;
    tmbuf t = tm_view(tmem, x.ch, x.len, P), u = tm_view(umem, x.ch, x.len, P);
    /* the Snakes run as the epilogues of the convs before them (rows still in cache): conv1 → u =
     * snake(u, a2); conv2 → x += ·, then t = snake(x, a1 of the next dilation) */
    vx_snake_tm(t.x, t.ch, x.x, x.ch, rb->a1[0], rb->i1[0], x.len, x.ch, nthreads);
    for (int j = 0; j < VX_HIFT_NDIL; j++) {
        const vx_hift_conv *c1 = &rb->c1[j], *c2 = &rb->c2[j];
        vx_conv1d_tm_snake(u.x, u.ch, t.x, t.ch, u.len, c1->cin, c1->cout, c1->k, 1, DILATIONS[j],
                           DILATIONS[j] * (k - 1) / 2, &c1->m, c1->b, 0, rb->a2[j], rb->i2[j], u.x, u.ch, nthreads);
        if (j + 1 < VX_HIFT_NDIL)
            vx_conv1d_tm_snake(x.x, x.ch, u.x, u.ch, x.len, c2->cin, c2->cout, c2->k, 1, 1, (k - 1) / 2, &c2->m, c2->b,
                               1, rb->a1[j + 1], rb->i1[j + 1], t.x, t.ch, nthreads);
        else
            tconv(c2, u, x, 1, 1, (k - 1) / 2, 1, nthreads);
    }
}

/* ========================================================== f0 predictor */

vocis_status vx_hift_f0(const vx_hift *h, const float *mel, int64_t tm, float *f0, int nthreads, vx_err *err) {
    const int64_t C = h->f0_ch;
    float *a = vx_malloc(err, (size_t)(2 * C * tm) * sizeof(float), "HiFT f0 predictor activations");
    if (!a) return VOCIS_E_NOMEM;
    float *b = a + C * tm;
    const float *x = mel;
    for (int i = 0; i < VX_HIFT_NCONDNET; i++) {
        float *y = (i % 2) ? b : a;
        conv(&h->condnet[i], x, tm, y, 1, 1, 1, nthreads); /* k 3, pad 1 */
        elementwise(EW_ELU, y, NULL, NULL, 0, C * tm, 32768, nthreads);
        x = y;
    }
    /* f0[t] = |classifier(x[:, t])| */
    for (int64_t t = 0; t < tm; t++) f0[t] = 0.0f;
    for (int64_t c = 0; c < C; c++)
        for (int64_t t = 0; t < tm; t++) f0[t] += h->cls_w[c] * x[c * tm + t];
    for (int64_t t = 0; t < tm; t++) f0[t] = fabsf(f0[t] + h->cls_b);
    free(a);
    return VOCIS_OK;
}

/* ================================================================ source */

/* nn.Upsample(scale_factor=480, mode="nearest") source index, computed like torch:
 * floor(n · (float)(1/480)) in float, clamped to the input length. */
static int64_t upsample_src(int64_t n, int64_t tm) {
    const float scale = (float)(1.0 / VX_HIFT_HOP);
    int64_t i = (int64_t)floorf((float)n * scale);
    return i < tm - 1 ? i : tm - 1;
}

typedef struct {
    const vx_hift *h;
    const float *f0;
    int64_t tm;
    const float *phase, *noise;
    float *source, *terms;
} source_job;

/* harmonic hh: a_h · e_h into its row of terms, or added to source when run alone */
static void source_harmonic(void *ctx, int64_t hh) {
    const source_job *j = ctx;
    const vx_hift *h = j->h;
    const float *f0 = j->f0, *phase = j->phase, *noise = j->noise;
    const int64_t tm = j->tm, tw = tm * VX_HIFT_HOP;
    const float two_pi = (float)(2.0 * M_PI);
    const float unvoiced_amp = (float)(0.1 / 3.0); /* sine_amp / 3 */
    float *source = j->source, *terms = j->terms;
    const float ph = hh == 0 ? 0.0f : (phase ? phase[hh] : 0.0f);
    const float mult = (float)(hh + 1), a = h->lin_w[hh];
    const float *nz = noise ? noise + (int64_t)hh * tw : NULL;
    float *dst = terms ? terms + (int64_t)hh * tw : NULL;
    double acc = 0.0; /* torch's CPU cumsum accumulates in double */
    for (int64_t n = 0; n < tw; n++) {
        const float fu = f0[upsample_src(n, tm)];
        const float fn = fu * mult / (float)VX_HIFT_SR; /* f0 · (i+1) / sampling_rate */
        acc += (double)fn;
        const float cs = (float)acc;
        const float theta = two_pi * (cs - floorf(cs)); /* 2π · (cumsum % 1) */
        const float sine = NSF_ALPHA * sinf(theta + ph);
        const float uv = fu > NSF_VOICED ? 1.0f : 0.0f;
        const float namp = uv * NSF_SIGMA + (1.0f - uv) * unvoiced_amp;
        const float e = sine * uv + (nz ? namp * nz[n] : 0.0f);
        if (dst) dst[n] = a * e;
        else source[n] += a * e;
    }
}

static void source_tanh(void *ctx, int64_t a, int64_t b) {
    const source_job *j = ctx;
    const int64_t tw = j->tm * VX_HIFT_HOP;
    for (int64_t n = a; n < b; n++) {
        float v = j->source[n];
        if (j->terms)
            for (int hh = 0; hh < VX_HIFT_NB_HARM; hh++) v += j->terms[(int64_t)hh * tw + n];
        j->source[n] = tanhf(v);
    }
}

void vx_hift_source(const vx_hift *h, const float *f0, int64_t tm, const float *phase, const float *noise,
                    float *source, int nthreads) {
    const int64_t tw = tm * VX_HIFT_HOP;
    /* source[n] = tanh(b + Σ_h a_h · e_h[n]); harmonics run sequentially (running phase), chunks of n
     * in parallel would need the prefix sums: instead each thread owns a range of n and first sums
     * its prefix. With Tw ≤ a few 10^5 a single pass per harmonic is cheap; keep it simple. */
    /* The harmonics are independent: with threads, each harmonic's a_h · e_h goes to its own row of
     * `terms` and the rows are summed in harmonic order afterwards (the same bits as the serial sum). */
    float *terms = nthreads > 1 && tw > 16384 ? malloc(sizeof(float) * (size_t)(VX_HIFT_NB_HARM * tw)) : NULL;
    for (int64_t n = 0; n < tw; n++) source[n] = h->lin_b;
    source_job sj = {h, f0, tm, phase, noise, source, terms};
    vx_pool_run(terms ? nthreads : 1, VX_HIFT_NB_HARM, source_harmonic, &sj);
    vx_pool_for(tw > 65536 ? nthreads : 1, tw, 16, source_tanh, &sj);
    free(terms);
}

/* ================================================================ decode */

/* The STFT's (and the ISTFT's) frames on the pool: each frame is computed on its own. */
typedef struct {
    const double (*ct)[VX_HIFT_NFFT], (*st)[VX_HIFT_NFFT];
    const float *s;
    int64_t tw;
    float *spec;
    const vx_hift *h;
    /* ISTFT */
    const float *x;
    float *fr, *mag_out, *phase_out;
    int64_t nf;
} stft_job;

static void stft_frames(void *ctx, int64_t f0, int64_t f1);

/* Centred STFT (n_fft 16, hop 4, periodic Hann, reflect pad 8): s [tw] → spec [nf][18] (time-major),
 * columns 0..8 real, 9..17 imaginary, nf = tw/4 + 1. */
static void source_stft(const vx_hift *h, const float *s, int64_t tw, float *spec, int64_t nf, int nthreads) {
    double ct[NBINS][VX_HIFT_NFFT], st[NBINS][VX_HIFT_NFFT];
    for (int k = 0; k < NBINS; k++)
        for (int n = 0; n < VX_HIFT_NFFT; n++) {
            double ang = 2.0 * M_PI * (double)((k * n) % VX_HIFT_NFFT) / VX_HIFT_NFFT;
            ct[k][n] = cos(ang) * h->window[n];
            st[k][n] = -sin(ang) * h->window[n];
        }
    stft_job j = {ct, st, s, tw, spec, h, NULL, NULL, NULL, NULL, nf};
    vx_pool_for(nf > 4096 ? nthreads : 1, nf, 1, stft_frames, &j);
}

static void stft_frames(void *ctx, int64_t f0, int64_t f1) {
    const stft_job *j = ctx;
    const double(*ct)[VX_HIFT_NFFT] = j->ct, (*st)[VX_HIFT_NFFT] = j->st;
    const float *s = j->s;
    float *spec = j->spec;
    const int64_t tw = j->tw, half = VX_HIFT_NFFT / 2;
    for (int64_t f = f0; f < f1; f++) {
        double fr[VX_HIFT_NFFT];
        for (int n = 0; n < VX_HIFT_NFFT; n++) {
            int64_t i = f * VX_HIFT_ISTFT_HOP + n - half; /* index into s with reflection */
            if (i < 0) i = -i;
            if (i >= tw) i = 2 * (tw - 1) - i;
            fr[n] = s[i];
        }
        for (int k = 0; k < NBINS; k++) {
            double re = 0, im = 0;
            for (int n = 0; n < VX_HIFT_NFFT; n++) {
                re += ct[k][n] * fr[n];
                im += st[k][n] * fr[n];
            }
            spec[f * NSPEC + k] = (float)re;
            spec[f * NSPEC + NBINS + k] = (float)im;
        }
    }
}

typedef struct {
    const vx_hift *h;
    const float *ola;
    float *wav;
    int64_t nf;
} istft_out_job;

static void istft_frames(void *ctx, int64_t f0, int64_t f1);
static void istft_out(void *ctx, int64_t i0, int64_t i1);

/* torch.istft(mag·e^{i·phase}, n_fft 16, hop 4, hann, center): x [nf][18] = conv_post output
 * (time-major), whose columns 0..8 become magnitude exp(·) and 9..17 phase sin(·). wav [4·(nf−1)],
 * clamped; mag_out / phase_out [9][nf]. */
static void istft(const vx_hift *h, const float *x, int64_t nf, float *wav, float *mag_out, float *phase_out,
                  float *ola /* [16 + 4(nf−1)] */, int nthreads) {
    const int N = VX_HIFT_NFFT, hop = VX_HIFT_ISTFT_HOP;
    const int64_t len = N + hop * (nf - 1);
    double ct[NBINS][VX_HIFT_NFFT], st[NBINS][VX_HIFT_NFFT];
    for (int k = 0; k < NBINS; k++)
        for (int n = 0; n < N; n++) {
            /* C2R inverse: 1/N, interior bins counted twice; imaginary parts of DC/Nyquist ignored */
            double wgt = (k == 0 || k == N / 2) ? 1.0 / N : 2.0 / N;
            double ang = 2.0 * M_PI * (double)((k * n) % N) / N;
            ct[k][n] = wgt * cos(ang);
            st[k][n] = (k == 0 || k == N / 2) ? 0.0 : -wgt * sin(ang);
        }
    memset(ola, 0, (size_t)len * sizeof(float));
    /* Frames overlap by 12 samples, so the frames are computed in parallel into `fr` (16 floats
     * per frame, stored after the OLA buffer's end in the caller's scratch) and overlap-added in
     * sequence. */
    float *fr = ola + len;
    stft_job fj = {ct, st, NULL, 0, NULL, h, x, fr, mag_out, phase_out, nf};
    vx_pool_for(nf > 4096 ? nthreads : 1, nf, 1, istft_frames, &fj);
    for (int64_t f = 0; f < nf; f++) {
        float *o = ola + f * hop;
        for (int n = 0; n < N; n++) o[n] += fr[f * N + n];
    }
    /* divide by the overlap-added squared window, drop n_fft/2 at both ends, clamp */
    const int64_t tw = hop * (nf - 1);
    istft_out_job oj = {h, ola, wav, nf};
    vx_pool_for(tw > 65536 ? nthreads : 1, tw, 16, istft_out, &oj);
}

static void istft_frames(void *ctx, int64_t f0, int64_t f1) {
    const stft_job *j = ctx;
    const double(*ct)[VX_HIFT_NFFT] = j->ct, (*st)[VX_HIFT_NFFT] = j->st;
    const float *x = j->x;
    float *fr = j->fr, *mag_out = j->mag_out, *phase_out = j->phase_out;
    const int64_t nf = j->nf;
    const int N = VX_HIFT_NFFT;
    const vx_hift *h = j->h;
    for (int64_t f = f0; f < f1; f++) {
        float re[NBINS], im[NBINS];
        for (int k = 0; k < NBINS; k++) {
            float m = expf(x[f * NSPEC + k]);
            float p = sinf(x[f * NSPEC + NBINS + k]);
            if (mag_out) mag_out[k * nf + f] = m;
            if (phase_out) phase_out[k * nf + f] = p;
            m = fminf(m, MAG_MAX);
            re[k] = m * cosf(p);
            im[k] = m * sinf(p);
        }
        for (int n = 0; n < N; n++) {
            double v = 0;
            for (int k = 0; k < NBINS; k++) v += ct[k][n] * re[k] + st[k][n] * im[k];
            fr[f * N + n] = (float)v * h->window[n];
        }
    }
}

static void istft_out(void *ctx, int64_t i0, int64_t i1) {
    const istft_out_job *c = ctx;
    const float *ola = c->ola, *window = c->h->window;
    const int N = VX_HIFT_NFFT, hop = VX_HIFT_ISTFT_HOP;
    const int64_t nf = c->nf, half = N / 2;
    for (int64_t i = i0; i < i1; i++) {
        int64_t j = i + half; /* index in the OLA buffer */
        int64_t f_lo = j - (N - 1) <= 0 ? 0 : (j - (N - 1) + hop - 1) / hop, f_hi = j / hop;
        if (f_hi > nf - 1) f_hi = nf - 1;
        float env = 0.0f;
        for (int64_t f = f_lo; f <= f_hi; f++) {
            float wv = window[j - f * hop];
            env += wv * wv;
        }
        float y = ola[j] / env;
        c->wav[i] = y > AUDIO_LIMIT ? AUDIO_LIMIT : (y < -AUDIO_LIMIT ? -AUDIO_LIMIT : y);
    }
}

vocis_status vx_hift_decode(const vx_hift *h, const float *mel, int64_t tm, const float *source, float *wav,
                            float *mag, float *phase, int nthreads, vx_err *err) {
    if (tm < 1) return vx_fail(err, VOCIS_E_ARG, "HiFT decode: empty mel (Tm = %lld)", (long long)tm);
    const int64_t tw = tm * VX_HIFT_HOP, nf = tw / VX_HIFT_ISTFT_HOP + 1, P = margin_rows(h);
    /* stage lengths; largest activation (with margins) over the stages */
    int64_t lens[VX_HIFT_NSTAGES], big = (tm + 2 * P) * (h->base > h->in_ch ? h->base : h->in_ch);
    int64_t ch = h->base, len = tm;
    for (int i = 0; i < VX_HIFT_NSTAGES; i++) {
        len = vx_convtr1d_tm_out_len(len, h->ups[i].k, UP_RATES[i], (h->ups[i].k - UP_RATES[i]) / 2) +
              (i == VX_HIFT_NSTAGES - 1);
        lens[i] = len;
        ch = h->ups[i].cout;
        if ((len + 2 * P) * ch > big) big = (len + 2 * P) * ch;
    }
    if (len != nf)
        return vx_fail(err, VOCIS_E_INTERNAL, "HiFT decode: generator length %lld != STFT frames %lld", (long long)len,
                       (long long)nf);
    if ((nf + 2 * P) * NSPEC > big) big = (nf + 2 * P) * NSPEC;
    enum { NBUF = 5 };
    const int64_t ola_n = VX_HIFT_NFFT + VX_HIFT_ISTFT_HOP * (nf - 1) + VX_HIFT_NFFT * nf;
    /* separate buffers rather than one block: each stays under glibc's largest mmap threshold, so
     * repeated calls reuse heap pages instead of faulting in fresh zeroed ones every time */
    float *B[NBUF], *specmem = NULL, *ola = NULL, *bufs[NBUF + 2] = {0};
    for (int i = 0; i < NBUF + 2; i++)
        if (!(bufs[i] = malloc(sizeof(float) * (size_t)(i <= NBUF ? big : ola_n)))) {
            for (int j = 0; j < i; j++) free(bufs[j]);
            return vx_fail(err, VOCIS_E_NOMEM, "out of memory for the HiFT decode activations");
        }
    for (int i = 0; i < NBUF; i++) B[i] = bufs[i];
    specmem = bufs[NBUF];
    ola = bufs[NBUF + 1];
#define FREE_BUFS()                                                                                                    \
    for (int i_ = 0; i_ < NBUF + 2; i_++) free(bufs[i_])
    /* B[0] = x, B[1] = the next x / RB sum, B[2] = r, B[3], B[4] = ResBlock scratch */

    /* s_stft = cat(real, imag): [nf][18] with margins */
    tmbuf spec = tm_view(specmem, NSPEC, nf, P);
    source_stft(h, source, tw, spec.x, nf, nthreads);

    /* x = conv_pre(mel): mel [80][tm] → time-major, then [tm][base] */
    tmbuf m = tm_view(B[1], h->in_ch, tm, P);
    for (int64_t c = 0; c < h->in_ch; c++)
        for (int64_t t = 0; t < tm; t++) m.x[t * h->in_ch + c] = mel[c * tm + t];
    tmbuf x = tm_view(B[0], h->base, tm, P);
    tconv(&h->conv_pre, m, x, 1, 1, (h->conv_pre.k - 1) / 2, 0, nthreads);
    for (int i = 0; i < VX_HIFT_NSTAGES; i++) {
        const vx_hift_conv *up = &h->ups[i];
        if (i == 0) leaky_relu(x.x, x.ch * x.len, LRELU_SLOPE, nthreads); /* later stages: fused below */
        const int last = i == VX_HIFT_NSTAGES - 1;
        tmbuf xn = tm_view(B[1], up->cout, lens[i], P);
        /* last stage: ReflectionPad1d((1, 0)): the upsampled rows go to rows 1.., row 0 = row 2 */
        vx_convtr1d_tm(xn.x + (last ? xn.ch : 0), xn.ch, x.x, x.ch, x.len, up->cin, up->cout, up->k, UP_RATES[i],
                       (up->k - UP_RATES[i]) / 2, &up->m, up->b, nthreads);
        if (last) memcpy(xn.x, xn.x + (xn.len > 2 ? 2 : xn.len - 1) * xn.ch, (size_t)xn.ch * sizeof(float));
        float *sw = B[0];
        B[0] = B[1];
        B[1] = sw;
        x = xn;
        const int64_t n = x.ch * x.len;
        /* fusion: x += source_resblocks[i](source_downs[i](s_stft)) */
        const vx_hift_conv *sd = &h->source_downs[i];
        const int64_t sk = SRC_DOWN[i], spad = sk == 1 ? 0 : sk / 2;
        const int64_t sl = (nf + 2 * spad - sd->k) / sk + 1;
        if (sl != x.len) {
            FREE_BUFS();
            return vx_fail(err, VOCIS_E_INTERNAL, "HiFT stage %d: source branch length %lld != %lld", i,
                           (long long)sl, (long long)x.len);
        }
        tmbuf r = tm_view(B[2], x.ch, x.len, P);
        tconv(sd, spec, r, sk, 1, spad, 0, nthreads);
        resblock(&h->source_rb[i], r, B[3], B[4], P, nthreads);
        elementwise(EW_ADD, x.x, r.x, NULL, 0, n, 65536, nthreads);
        /* x = (RB0(x) + RB1(x) + RB2(x)) / 3, summed in that order */
        tmbuf acc = tm_view(B[1], x.ch, x.len, P);
        for (int j = 0; j < VX_HIFT_NKERNELS; j++) {
            tmbuf o = j == 0 ? acc : r;
            memcpy(o.x, x.x, (size_t)n * sizeof(float));
            resblock(&h->rb[i * VX_HIFT_NKERNELS + j], o, B[3], B[4], P, nthreads);
            if (j == 0) continue;
            if (j < VX_HIFT_NKERNELS - 1) {
                elementwise(EW_ADD, acc.x, r.x, NULL, 0, n, 65536, nthreads);
            } else { /* the average, fused with the LeakyReLU that follows it (the next stage's or the final one) */
                const float slope = i == VX_HIFT_NSTAGES - 1 ? 0.01f : LRELU_SLOPE;
                elementwise(EW_AVG_LRELU, x.x, r.x, acc.x, slope, n, 65536, nthreads);
            }
        }
    }
    tmbuf post = {B[1], NSPEC, nf}; /* no margins needed: nothing reads it as a conv input */
    tconv(&h->conv_post, x, post, 1, 1, (h->conv_post.k - 1) / 2, 0, nthreads); /* [nf][18] */
    istft(h, post.x, nf, wav, mag, phase, ola, nthreads);
    FREE_BUFS();
#undef FREE_BUFS
    return VOCIS_OK;
}

/* ================================================================ vocode */

vocis_status vx_hift_vocode(const vx_hift *h, const float *mel, int64_t tm, vx_rng *rng, const float *inj_phase,
                            const float *inj_noise, float **wav, int64_t *n, float *f0_out, float *source_out,
                            int nthreads, vx_err *err) {
    *wav = NULL;
    *n = 0;
    if (tm < 1) return vx_fail(err, VOCIS_E_ARG, "HiFT: empty mel (Tm = %lld)", (long long)tm);
    const int64_t tw = tm * VX_HIFT_HOP;
    float *f0 = vx_malloc(err, (size_t)tm * sizeof(float), "HiFT f0");
    float *src = vx_malloc(err, (size_t)tw * sizeof(float), "HiFT source");
    float *out = vx_malloc(err, (size_t)tw * sizeof(float), "HiFT waveform");
    float *noise = NULL;
    float phase[VX_HIFT_NB_HARM] = {0};
    vocis_status st = VOCIS_E_NOMEM;
    if (!f0 || !src || !out) goto done;
    if ((st = vx_hift_f0(h, mel, tm, f0, nthreads, err)) != VOCIS_OK) goto done;

    /* Random draws, in upstream's order: phases (CPU generator), sine noise, the noise branch of
     * SourceModuleHnNSF (drawn, unused). With an rng the stream always advances exactly as upstream's;
     * injected tensors replace the values drawn. */
    if (rng) vx_rng_uniform(rng, phase, VX_HIFT_NB_HARM, (float)-M_PI, (float)M_PI);
    if (inj_phase) memcpy(phase, inj_phase, sizeof phase);
    phase[0] = 0.0f;
    const float *nz = inj_noise;
    if (rng) {
        st = VOCIS_E_NOMEM;
        if (!(noise = vx_malloc(err, (size_t)(VX_HIFT_NB_HARM * tw) * sizeof(float), "HiFT sine noise"))) goto done;
        vx_rng_randn(rng, noise, (size_t)(VX_HIFT_NB_HARM * tw));
        if (!nz) nz = noise;
        vx_rng_randn(rng, out, (size_t)tw);
    }

    vx_hift_source(h, f0, tm, phase, nz, src, nthreads);
    if ((st = vx_hift_decode(h, mel, tm, src, out, NULL, NULL, nthreads, err)) != VOCIS_OK) goto done;
    if (f0_out) memcpy(f0_out, f0, (size_t)tm * sizeof(float));
    if (source_out) memcpy(source_out, src, (size_t)tw * sizeof(float));
    *wav = out;
    *n = tw;
    out = NULL;
done:
    free(f0);
    free(src);
    free(out);
    free(noise);
    return st;
}

/* ============================================================= trim/fade */

void vx_trim_fade_window(float *fade) {
    const int n = VX_TRIM_FADE_LEN / 2;
    /* torch.linspace(π, 0, 480) in float: start + step·i for the first half, end − step·(n−1−i) after */
    const float start = (float)M_PI, end = 0.0f, step = (end - start) / (float)(n - 1);
    for (int i = 0; i < n; i++) {
        fade[i] = 0.0f;
        float v = i < n / 2 ? start + step * (float)i : end - step * (float)(n - 1 - i);
        fade[n + i] = (cosf(v) + 1.0f) / 2.0f;
    }
}

void vx_trim_fade(float *wav, int64_t n) {
    float fade[VX_TRIM_FADE_LEN];
    vx_trim_fade_window(fade);
    for (int64_t i = 0; i < n && i < VX_TRIM_FADE_LEN; i++) wav[i] *= fade[i];
}

/* ================================================================ work counts (benchmarks) */

/* one conv's multiply-adds per output position (transposed: per input position) and its bytes */
static void conv_work(const vx_hift_conv *c, double rate, double *macs, double *bytes) {
    *macs += rate * (double)c->cin * (double)c->cout * (double)c->k;
    *bytes += (double)c->cin * (double)c->cout * (double)c->k * (c->m.data ? vx_dtype_size(c->m.dtype) : sizeof(float));
}

static void resblock_work(const vx_hift_resblock *rb, double rate, double *macs, double *bytes) {
    for (int j = 0; j < VX_HIFT_NDIL; j++) {
        conv_work(&rb->c1[j], rate, macs, bytes);
        conv_work(&rb->c2[j], rate, macs, bytes);
    }
}

void vx_hift_work(const vx_hift *h, double *macs_per_frame, double *weight_bytes) {
    double m = 0, b = 0, rate = 1; /* positions per mel frame at the current stage */
    for (int i = 0; i < VX_HIFT_NCONDNET; i++) conv_work(&h->condnet[i], 1, &m, &b);
    conv_work(&h->conv_pre, 1, &m, &b);
    for (int i = 0; i < VX_HIFT_NSTAGES; i++) {
        conv_work(&h->ups[i], rate, &m, &b);
        rate *= (double)UP_RATES[i];
        conv_work(&h->source_downs[i], rate, &m, &b);
        resblock_work(&h->source_rb[i], rate, &m, &b);
        for (int j = 0; j < VX_HIFT_NKERNELS; j++) resblock_work(&h->rb[i * VX_HIFT_NKERNELS + j], rate, &m, &b);
    }
    conv_work(&h->conv_post, rate, &m, &b);
    *macs_per_frame = m;
    *weight_bytes = b;
}
