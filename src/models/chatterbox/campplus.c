/* CAMPPlus x-vector extractor (see campplus.h). Layout: the FCM head works on channel-major
 * images x[C][F][T] (F = frequency rows, T = time columns), the trunk on x[C][T]; both are the
 * PyTorch memory layouts, so the head output [32][10][T] is already the trunk input [320][T]. */
#include "models/chatterbox/campplus.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "audio/fbank.h"
#include "base/pool.h"
#include "kernels/conv.h"
#include "kernels/kernels.h"

#define BN_EPS 1e-5
#define HEAD_LAYERS 2 /* FCM layer1, layer2 */
#define HEAD_K 3      /* head convs are 3×3, pad 1 */

static const int64_t DILATIONS[VX_CAMPPLUS_NBLOCKS] = {1, 2, 2}; /* fixed by the architecture */
static const int RANDOM_LAYERS[VX_CAMPPLUS_NBLOCKS] = {12, 24, 16};

/* 2-D conv, BN folded: w [cout][cin·k·k], b [cout]; stride (stride, 1) on (F, T), pad k/2. */
typedef struct cp_conv2d {
    int64_t cin, cout, k, stride;
    float *w, *b;
} cp_conv2d;

/* BasicResBlock: relu(bn2(conv2(relu(bn1(conv1 x)))) + shortcut x); sc.w == NULL: identity. */
typedef struct cp_res {
    cp_conv2d c1, c2, sc;
} cp_res;

/* Eval BatchNorm as y = x·s + b per channel. */
typedef struct cp_bn {
    float *s, *b;
} cp_bn;

/* CAMDenseTDNNLayer on c input channels. */
typedef struct cp_dense {
    int64_t cin;
    cp_bn bn1;        /* nonlinear1 [cin] */
    float *w1, *b1;   /* linear1 [bneck][cin] with nonlinear2's BN folded, [bneck] */
    float *wl;        /* cam_layer.linear_local [growth][bneck][k] */
    float *wc1, *bc1; /* cam_layer.linear1 [mid][bneck], [mid] */
    float *wc2, *bc2; /* cam_layer.linear2 [growth][mid], [growth] */
} cp_dense;

struct vx_campplus {
    int64_t feat;    /* 80 fbank bins = image height */
    int64_t head_ch; /* 32 */
    int64_t head_f;  /* frequency rows after the head: 80 → 40 → 20 → 10 */
    int64_t init_ch, growth, bneck, mid, local_k, emb;
    cp_conv2d conv1, conv2;
    int nres[HEAD_LAYERS];
    cp_res *res[HEAD_LAYERS];
    int64_t tdnn_k;
    float *tdnn_w, *tdnn_b; /* [init_ch][head_ch·head_f·tdnn_k], [init_ch] */
    int nlayers[VX_CAMPPLUS_NBLOCKS];
    int64_t block_in[VX_CAMPPLUS_NBLOCKS], block_out[VX_CAMPPLUS_NBLOCKS]; /* transit output = next input */
    cp_dense *layers[VX_CAMPPLUS_NBLOCKS];
    cp_bn transit_bn[VX_CAMPPLUS_NBLOCKS];
    float *transit_w[VX_CAMPPLUS_NBLOCKS]; /* [block_out][block_in + nlayers·growth] */
    cp_bn out_bn;
    float *dense_w, *dense_b; /* [emb][2·C] with the final BN folded, [emb] */
    /* every owned buffer, for vx_campplus_free */
    void **bufs;
    int nbufs, capbufs;
};

/* ================================================================ weights */

static void *own(vx_campplus *c, size_t bytes, vx_err *err, const char *what) {
    if (c->nbufs == c->capbufs) {
        int cap = c->capbufs ? 2 * c->capbufs : 512;
        void **nb = realloc(c->bufs, (size_t)cap * sizeof *nb);
        if (!nb) {
            vx_fail(err, VOCIS_E_NOMEM, "CAMPPlus: out of memory for the buffer list");
            return NULL;
        }
        c->bufs = nb;
        c->capbufs = cap;
    }
    void *p = vx_malloc(err, bytes ? bytes : 1, what);
    if (p) c->bufs[c->nbufs++] = p;
    return p;
}

static float *ownf(vx_campplus *c, int64_t n, vx_err *err, const char *what) {
    return own(c, sizeof(float) * (size_t)n, err, what);
}

void vx_campplus_free(vx_campplus *c) {
    if (!c) return;
    for (int i = 0; i < c->nbufs; i++) free(c->bufs[i]);
    free(c->bufs);
    free(c);
}

int64_t vx_campplus_emb_dim(const vx_campplus *c) { return c->emb; }

typedef struct loader {
    vx_campplus *c;
    const vx_weights *w;
    const char *p;
} loader;

/* A float tensor `prefix + name` of the expected shape (-1 = any), copied to owned f32. */
static vocis_status load_f32(loader *L, const char *name, int ndim, const int64_t *shape, float **out, vx_tensor *info,
                             vx_err *err) {
    vx_tensor t;
    VX_TRY(vx_weights_expect(L->w, VX_FLOATS, ndim, shape, &t, err, "%s%s", L->p, name));
    const size_t n = (size_t)vx_numel(&t);
    float *d = ownf(L->c, (int64_t)n, err, name);
    if (!d) return VOCIS_E_NOMEM;
    vx_to_f32(d, t.data, t.dtype, n);
    *out = d;
    if (info) *info = t;
    return VOCIS_OK;
}

/* BatchNorm `name` over ch channels → scale/shift. Without `name.weight` (affine=False) γ = 1, β = 0. */
static vocis_status load_bn(loader *L, const char *name, int64_t ch, cp_bn *bn, vx_err *err) {
    char buf[512];
    float *mean, *var, *gamma = NULL, *beta = NULL;
    snprintf(buf, sizeof buf, "%s.running_mean", name);
    VX_TRY(load_f32(L, buf, VX_DIMS(ch), &mean, NULL, err));
    snprintf(buf, sizeof buf, "%s.running_var", name);
    VX_TRY(load_f32(L, buf, VX_DIMS(ch), &var, NULL, err));
    char full[600];
    snprintf(full, sizeof full, "%s%s.weight", L->p, name);
    if (vx_weights_has(L->w, full)) {
        snprintf(buf, sizeof buf, "%s.weight", name);
        VX_TRY(load_f32(L, buf, VX_DIMS(ch), &gamma, NULL, err));
        snprintf(buf, sizeof buf, "%s.bias", name);
        VX_TRY(load_f32(L, buf, VX_DIMS(ch), &beta, NULL, err));
    }
    /* reuse the mean / var buffers for shift / scale */
    for (int64_t i = 0; i < ch; i++) {
        const double s = (gamma ? gamma[i] : 1.0) / sqrt((double)var[i] + BN_EPS);
        var[i] = (float)s;
        mean[i] = (float)((beta ? beta[i] : 0.0) - mean[i] * s);
    }
    bn->s = var;
    bn->b = mean;
    return VOCIS_OK;
}

/* Fold a BN that follows a bias-free linear map: w[o][:] ·= s[o], bias = shift. */
static void fold_rows(float *w, int64_t rows, int64_t cols, const cp_bn *bn) {
    for (int64_t o = 0; o < rows; o++)
        for (int64_t i = 0; i < cols; i++) w[o * cols + i] *= bn->s[o];
}

/* conv `cname`.weight (cout, cin, k, k) followed by BN `bname`. cout / cin = -1: from the file. */
static vocis_status load_conv2d_bn(loader *L, const char *cname, const char *bname, int64_t cout, int64_t cin,
                                   int64_t k, int64_t stride, cp_conv2d *cv, vx_err *err) {
    char buf[512];
    vx_tensor t;
    snprintf(buf, sizeof buf, "%s.weight", cname);
    VX_TRY(load_f32(L, buf, VX_DIMS(cout, cin, k, k), &cv->w, &t, err));
    cv->cout = t.shape[0];
    cv->cin = t.shape[1];
    cv->k = k;
    cv->stride = stride;
    cp_bn bn;
    VX_TRY(load_bn(L, bname, cv->cout, &bn, err));
    fold_rows(cv->w, cv->cout, cv->cin * k * k, &bn);
    cv->b = bn.b;
    return VOCIS_OK;
}

static int has(loader *L, const char *fmt, int a, int b) {
    char name[256], full[600];
    snprintf(name, sizeof name, fmt, a, b);
    snprintf(full, sizeof full, "%s%s", L->p, name);
    return vx_weights_has(L->w, full);
}

static vocis_status load_head(loader *L, vx_err *err) {
    vx_campplus *c = L->c;
    VX_TRY(load_conv2d_bn(L, "head.conv1", "head.bn1", -1, 1, HEAD_K, 1, &c->conv1, err));
    const int64_t hc = c->conv1.cout;
    c->head_ch = hc;
    char cn[256], bn[256];
    for (int l = 0; l < HEAD_LAYERS; l++) {
        int n = 0;
        while (has(L, "head.layer%d.%d.conv1.weight", l + 1, n)) n++;
        if (n < 1)
            return vx_fail(err, VOCIS_E_SHAPE, "%s: missing tensor '%shead.layer%d.0.conv1.weight'",
                           vx_weights_path(L->w), L->p, l + 1);
        c->nres[l] = n;
        c->res[l] = own(c, sizeof(cp_res) * (size_t)n, err, "CAMPPlus head blocks");
        if (!c->res[l]) return VOCIS_E_NOMEM;
        memset(c->res[l], 0, sizeof(cp_res) * (size_t)n);
        for (int i = 0; i < n; i++) {
            cp_res *r = &c->res[l][i];
            const int64_t s = i == 0 ? 2 : 1; /* _make_layer: the first block of each layer has stride 2 */
            snprintf(cn, sizeof cn, "head.layer%d.%d.conv1", l + 1, i);
            snprintf(bn, sizeof bn, "head.layer%d.%d.bn1", l + 1, i);
            VX_TRY(load_conv2d_bn(L, cn, bn, hc, hc, HEAD_K, s, &r->c1, err));
            snprintf(cn, sizeof cn, "head.layer%d.%d.conv2", l + 1, i);
            snprintf(bn, sizeof bn, "head.layer%d.%d.bn2", l + 1, i);
            VX_TRY(load_conv2d_bn(L, cn, bn, hc, hc, HEAD_K, 1, &r->c2, err));
            if (has(L, "head.layer%d.%d.shortcut.0.weight", l + 1, i)) {
                snprintf(cn, sizeof cn, "head.layer%d.%d.shortcut.0", l + 1, i);
                snprintf(bn, sizeof bn, "head.layer%d.%d.shortcut.1", l + 1, i);
                VX_TRY(load_conv2d_bn(L, cn, bn, hc, hc, 1, s, &r->sc, err));
            } else if (s != 1) {
                return vx_fail(err, VOCIS_E_SHAPE, "%s: missing tensor '%shead.layer%d.%d.shortcut.0.weight'",
                               vx_weights_path(L->w), L->p, l + 1, i);
            }
        }
    }
    VX_TRY(load_conv2d_bn(L, "head.conv2", "head.bn2", hc, hc, HEAD_K, 2, &c->conv2, err));
    return VOCIS_OK;
}

/* Frequency rows after a stride-2 3×3 (pad 1) or 1×1 (pad 0) conv: ⌈F / 2⌉. */
static int64_t head_rows(int64_t f) { return (f - 1) / 2 + 1; }

static vocis_status load_trunk(loader *L, vx_err *err) {
    vx_campplus *c = L->c;
    char name[256], bn[256];
    vx_tensor t;
    VX_TRY(load_f32(L, "xvector.tdnn.linear.weight", VX_DIMS(-1, -1, -1), &c->tdnn_w, &t, err));
    c->init_ch = t.shape[0];
    c->tdnn_k = t.shape[2];
    const int64_t flat = t.shape[1];
    if (flat % c->head_ch || c->tdnn_k % 2 == 0)
        return vx_fail(err, VOCIS_E_SHAPE,
                       "%s: %sxvector.tdnn.linear.weight has shape [%lld, %lld, %lld]; expected [*, %lld·F, odd k]",
                       vx_weights_path(L->w), L->p, (long long)t.shape[0], (long long)flat, (long long)c->tdnn_k,
                       (long long)c->head_ch);
    c->head_f = flat / c->head_ch;
    const int64_t expect_f = head_rows(head_rows(head_rows(c->feat)));
    if (c->head_f != expect_f)
        return vx_fail(err, VOCIS_E_SHAPE,
                       "%s: %sxvector.tdnn.linear.weight has %lld input channels; the FCM head gives %lld x %lld = %lld "
                       "for %lld fbank bins",
                       vx_weights_path(L->w), L->p, (long long)flat, (long long)c->head_ch, (long long)expect_f,
                       (long long)(c->head_ch * expect_f), (long long)c->feat);
    cp_bn b;
    VX_TRY(load_bn(L, "xvector.tdnn.nonlinear.batchnorm", c->init_ch, &b, err));
    fold_rows(c->tdnn_w, c->init_ch, flat * c->tdnn_k, &b);
    c->tdnn_b = b.b;

    int64_t ch = c->init_ch;
    for (int bi = 0; bi < VX_CAMPPLUS_NBLOCKS; bi++) {
        int n = 0;
        while (has(L, "xvector.block%d.tdnnd%d.linear1.weight", bi + 1, n + 1)) n++;
        if (n < 1)
            return vx_fail(err, VOCIS_E_SHAPE, "%s: missing tensor '%sxvector.block%d.tdnnd1.linear1.weight'",
                           vx_weights_path(L->w), L->p, bi + 1);
        c->nlayers[bi] = n;
        c->block_in[bi] = ch;
        c->layers[bi] = own(c, sizeof(cp_dense) * (size_t)n, err, "CAMPPlus dense layers");
        if (!c->layers[bi]) return VOCIS_E_NOMEM;
        for (int j = 0; j < n; j++) {
            cp_dense *d = &c->layers[bi][j];
            const char *fmt = "xvector.block%d.tdnnd%d.%s";
#define NAME(suffix) (snprintf(name, sizeof name, fmt, bi + 1, j + 1, suffix), name)
            d->cin = ch;
            snprintf(bn, sizeof bn, "xvector.block%d.tdnnd%d.nonlinear1.batchnorm", bi + 1, j + 1);
            VX_TRY(load_bn(L, bn, ch, &d->bn1, err));
            VX_TRY(load_f32(L, NAME("linear1.weight"), VX_DIMS(bi == 0 && j == 0 ? -1 : c->bneck, ch, 1), &d->w1, &t,
                            err));
            if (bi == 0 && j == 0) c->bneck = t.shape[0];
            snprintf(bn, sizeof bn, "xvector.block%d.tdnnd%d.nonlinear2.batchnorm", bi + 1, j + 1);
            cp_bn b2;
            VX_TRY(load_bn(L, bn, c->bneck, &b2, err));
            fold_rows(d->w1, c->bneck, ch, &b2);
            d->b1 = b2.b;
            const int first = bi == 0 && j == 0;
            VX_TRY(load_f32(L, NAME("cam_layer.linear_local.weight"),
                            VX_DIMS(first ? -1 : c->growth, c->bneck, first ? -1 : c->local_k), &d->wl, &t, err));
            if (first) {
                c->growth = t.shape[0];
                c->local_k = t.shape[2];
                if (c->local_k % 2 == 0)
                    return vx_fail(err, VOCIS_E_SHAPE, "%s: %s%s: even kernel size %lld", vx_weights_path(L->w), L->p,
                                   name, (long long)c->local_k);
            }
            VX_TRY(load_f32(L, NAME("cam_layer.linear1.weight"), VX_DIMS(first ? -1 : c->mid, c->bneck, 1), &d->wc1,
                            &t, err));
            if (first) c->mid = t.shape[0];
            VX_TRY(load_f32(L, NAME("cam_layer.linear1.bias"), VX_DIMS(c->mid), &d->bc1, NULL, err));
            VX_TRY(load_f32(L, NAME("cam_layer.linear2.weight"), VX_DIMS(c->growth, c->mid, 1), &d->wc2, NULL, err));
            VX_TRY(load_f32(L, NAME("cam_layer.linear2.bias"), VX_DIMS(c->growth), &d->bc2, NULL, err));
#undef NAME
            ch += c->growth;
        }
        snprintf(bn, sizeof bn, "xvector.transit%d.nonlinear.batchnorm", bi + 1);
        VX_TRY(load_bn(L, bn, ch, &c->transit_bn[bi], err));
        snprintf(name, sizeof name, "xvector.transit%d.linear.weight", bi + 1);
        VX_TRY(load_f32(L, name, VX_DIMS(-1, ch, 1), &c->transit_w[bi], &t, err));
        ch = c->block_out[bi] = t.shape[0];
    }
    VX_TRY(load_bn(L, "xvector.out_nonlinear.batchnorm", ch, &c->out_bn, err));
    VX_TRY(load_f32(L, "xvector.dense.linear.weight", VX_DIMS(-1, 2 * ch, 1), &c->dense_w, &t, err));
    c->emb = t.shape[0];
    VX_TRY(load_bn(L, "xvector.dense.nonlinear.batchnorm", c->emb, &b, err));
    fold_rows(c->dense_w, c->emb, 2 * ch, &b);
    c->dense_b = b.b;
    return VOCIS_OK;
}

vocis_status vx_campplus_load(const vx_weights *w, const char *prefix, vx_campplus **out, vx_err *err) {
    *out = NULL;
    vx_campplus *c = vx_calloc(err, 1, sizeof *c, "CAMPPlus");
    if (!c) return VOCIS_E_NOMEM;
    c->feat = VX_CAMPPLUS_FEAT;
    loader L = {c, w, prefix ? prefix : "speaker_encoder."};
    vocis_status st = load_head(&L, err);
    if (st == VOCIS_OK) st = load_trunk(&L, err);
    if (st != VOCIS_OK) {
        vx_campplus_free(c);
        return st;
    }
    *out = c;
    return VOCIS_OK;
}

/* ---- random weights (synthetic benchmark) ---- */

typedef struct rnd {
    vx_campplus *c;
    uint64_t s;
} rnd;

static float urand(rnd *R) {
    R->s = R->s * 6364136223846793005ull + 1442695040888963407ull;
    return (float)((double)(R->s >> 40) / (double)(1ull << 24) * 2.0 - 1.0);
}

/* n values uniform in (−scale, scale) + offset. */
static float *rand_buf(rnd *R, int64_t n, float scale, float offset, vx_err *err) {
    float *p = ownf(R->c, n, err, "random CAMPPlus weights");
    if (p)
        for (int64_t i = 0; i < n; i++) p[i] = offset + scale * urand(R);
    return p;
}

/* ~unit gain weights [rows][fan_in]. */
static float *rand_w(rnd *R, int64_t rows, int64_t fan_in, vx_err *err) {
    return rand_buf(R, rows * fan_in, (float)sqrt(3.0 / (double)fan_in), 0.0f, err);
}

static vocis_status rand_bn(rnd *R, int64_t ch, cp_bn *bn, vx_err *err) {
    if (!(bn->s = rand_buf(R, ch, 0.2f, 1.0f, err)) || !(bn->b = rand_buf(R, ch, 0.1f, 0.0f, err)))
        return VOCIS_E_NOMEM;
    return VOCIS_OK;
}

static vocis_status rand_conv2d(rnd *R, int64_t cin, int64_t cout, int64_t k, int64_t stride, cp_conv2d *cv,
                                vx_err *err) {
    cv->cin = cin, cv->cout = cout, cv->k = k, cv->stride = stride;
    if (!(cv->w = rand_w(R, cout, cin * k * k, err)) || !(cv->b = rand_buf(R, cout, 0.1f, 0.0f, err)))
        return VOCIS_E_NOMEM;
    return VOCIS_OK;
}

static vocis_status campplus_random(vx_campplus *c, int64_t init_ch, int64_t growth, int64_t bn_size, int64_t emb,
                                    uint64_t seed, vx_err *err) {
    rnd R = {c, seed ^ 0x9e3779b97f4a7c15ull};
    c->feat = VX_CAMPPLUS_FEAT;
    c->head_ch = 32;
    c->init_ch = init_ch, c->growth = growth, c->bneck = bn_size * growth, c->mid = c->bneck / 2;
    c->local_k = 3, c->tdnn_k = 5, c->emb = emb;
    const int64_t hc = c->head_ch;
    VX_TRY(rand_conv2d(&R, 1, hc, HEAD_K, 1, &c->conv1, err));
    for (int l = 0; l < HEAD_LAYERS; l++) {
        c->nres[l] = 2;
        if (!(c->res[l] = own(c, sizeof(cp_res) * 2, err, "CAMPPlus head blocks"))) return VOCIS_E_NOMEM;
        memset(c->res[l], 0, sizeof(cp_res) * 2);
        for (int i = 0; i < 2; i++) {
            VX_TRY(rand_conv2d(&R, hc, hc, HEAD_K, i == 0 ? 2 : 1, &c->res[l][i].c1, err));
            VX_TRY(rand_conv2d(&R, hc, hc, HEAD_K, 1, &c->res[l][i].c2, err));
            if (i == 0) VX_TRY(rand_conv2d(&R, hc, hc, 1, 2, &c->res[l][i].sc, err));
        }
    }
    VX_TRY(rand_conv2d(&R, hc, hc, HEAD_K, 2, &c->conv2, err));
    c->head_f = head_rows(head_rows(head_rows(c->feat)));
    const int64_t flat = hc * c->head_f;
    if (!(c->tdnn_w = rand_w(&R, init_ch, flat * c->tdnn_k, err)) ||
        !(c->tdnn_b = rand_buf(&R, init_ch, 0.1f, 0.0f, err)))
        return VOCIS_E_NOMEM;
    int64_t ch = init_ch;
    for (int bi = 0; bi < VX_CAMPPLUS_NBLOCKS; bi++) {
        const int n = RANDOM_LAYERS[bi];
        c->nlayers[bi] = n;
        c->block_in[bi] = ch;
        if (!(c->layers[bi] = own(c, sizeof(cp_dense) * (size_t)n, err, "CAMPPlus dense layers"))) return VOCIS_E_NOMEM;
        for (int j = 0; j < n; j++, ch += growth) {
            cp_dense *d = &c->layers[bi][j];
            d->cin = ch;
            VX_TRY(rand_bn(&R, ch, &d->bn1, err));
            if (!(d->w1 = rand_w(&R, c->bneck, ch, err)) || !(d->b1 = rand_buf(&R, c->bneck, 0.1f, 0.0f, err)) ||
                !(d->wl = rand_w(&R, growth, c->bneck * c->local_k, err)) ||
                !(d->wc1 = rand_w(&R, c->mid, c->bneck, err)) || !(d->bc1 = rand_buf(&R, c->mid, 0.1f, 0.0f, err)) ||
                !(d->wc2 = rand_w(&R, growth, c->mid, err)) || !(d->bc2 = rand_buf(&R, growth, 0.1f, 0.0f, err)))
                return VOCIS_E_NOMEM;
        }
        VX_TRY(rand_bn(&R, ch, &c->transit_bn[bi], err));
        c->block_out[bi] = ch / 2;
        if (!(c->transit_w[bi] = rand_w(&R, ch / 2, ch, err))) return VOCIS_E_NOMEM;
        ch /= 2;
    }
    VX_TRY(rand_bn(&R, ch, &c->out_bn, err));
    if (!(c->dense_w = rand_w(&R, emb, 2 * ch, err)) || !(c->dense_b = rand_buf(&R, emb, 0.1f, 0.0f, err)))
        return VOCIS_E_NOMEM;
    return VOCIS_OK;
}

vocis_status vx_campplus_random(int64_t init_ch, int64_t growth, int64_t bn_size, int64_t emb, uint64_t seed,
                                vx_campplus **out, vx_err *err) {
    *out = NULL;
    if (init_ch < 2 || growth < 1 || bn_size < 1 || bn_size * growth < 2 || emb < 1)
        return vx_fail(err, VOCIS_E_ARG, "CAMPPlus: invalid random dims (init %lld, growth %lld, bn_size %lld, emb %lld)",
                       (long long)init_ch, (long long)growth, (long long)bn_size, (long long)emb);
    vx_campplus *c = vx_calloc(err, 1, sizeof *c, "CAMPPlus");
    if (!c) return VOCIS_E_NOMEM;
    vocis_status st = campplus_random(c, init_ch, growth, bn_size, emb, seed, err);
    if (st != VOCIS_OK) {
        vx_campplus_free(c);
        return st;
    }
    *out = c;
    return VOCIS_OK;
}

/* ============================================================== forward
 *
 * The time axis of the trunk (T frames after the TDNN) is cut into slabs of columns, their
 * count set by T alone (so the result does not depend on the thread count), and each stage
 * below is one pool region with a chunk per slab:
 *   - the head is computed per slab on the fbank columns its TDNN slab needs, widened by one
 *     column per 3×3 conv on each side (each conv treats the window edge as zero padding, so
 *     errors creep in by one column per conv and never reach the used part);
 *   - TDNN, the 1×1 convs, BN/ReLU and the transits are column-local;
 *   - a CAM-dense layer needs the time-mean of its bottleneck output (the gate context) and a
 *     halo of `dilation` columns for the local conv: its second half (dense_b) starts a new
 *     region, and the column-local work up to the next layer's bottleneck (dense_a) joins it;
 *     the bottleneck buffer and the partial segment sums are double-buffered so that a slab's
 *     dense_a of layer j + 1 never overwrites what another slab's dense_b of layer j reads.
 * Every GEMM is single-threaded on a slab (vx_gemm_f32 with 1 thread); the window, im2col and
 * gate scratch belong to the pool slot, the partial sums to the slab. */

#define TILE_BYTES 524288 /* im2col columns per tile: ~512 KiB */
#define HEAD_PIECE 320    /* TDNN frames whose head a slab computes in one go (~650 fbank columns) */
#define SLAB_FRAMES 48    /* trunk frames per slab at least (each slab recomputes a head halo) */
#define MAX_SLABS 32

static int64_t tile_for(int64_t K) {
    int64_t t = (TILE_BYTES / 4 / K) & ~(int64_t)15;
    return t < 16 ? 16 : t > 4096 ? 4096 : t;
}

static int64_t conv2d_rows(const cp_conv2d *cv, int64_t h) { return (h + 2 * (cv->k / 2) - cv->k) / cv->stride + 1; }

/* y[cout][Ho][W] = relu?(conv(x[cin][H][W]) + b (+ resid)); stride (s, 1), pad k/2 on both axes.
 * Serial: im2col in tiles of output positions, one GEMM per tile, then bias, residual and ReLU
 * while the tile is in cache. cols: K·tile_for(K) floats. */
static void conv2d(const cp_conv2d *cv, const float *x, int64_t H, int64_t W, float *y, const float *resid, int relu,
                   float *cols) {
    const int64_t k = cv->k, pad = k / 2, s = cv->stride, Ho = conv2d_rows(cv, H), N = Ho * W;
    const int64_t K = cv->cin * k * k, tile = tile_for(K);
    for (int64_t p0 = 0; p0 < N; p0 += tile) {
        const int64_t p1 = p0 + tile < N ? p0 + tile : N, len = p1 - p0;
        for (int64_t ci = 0; ci < cv->cin; ci++)
            for (int64_t dh = 0; dh < k; dh++)
                for (int64_t dw = 0; dw < k; dw++) {
                    float *dst = cols + ((ci * k + dh) * k + dw) * len;
                    for (int64_t p = p0; p < p1;) { /* one output row segment at a time */
                        const int64_t ho = p / W, a = p % W, seg = (ho + 1) * W < p1 ? (ho + 1) * W - p : p1 - p;
                        const int64_t hi = ho * s - pad + dh, b = a + seg;
                        float *d = dst + (p - p0);
                        if (hi < 0 || hi >= H) {
                            memset(d, 0, sizeof(float) * (size_t)seg);
                        } else {
                            /* output column w reads input column w − pad + dw, valid for w in [lo, hw) */
                            const float *src = x + (ci * H + hi) * W;
                            int64_t lo = pad - dw, hw = W + pad - dw;
                            lo = lo < a ? a : lo > b ? b : lo;
                            hw = hw > b ? b : hw < lo ? lo : hw;
                            for (int64_t w = a; w < lo; w++) d[w - a] = 0.0f;
                            if (hw > lo) memcpy(d + (lo - a), src + lo - pad + dw, sizeof(float) * (size_t)(hw - lo));
                            for (int64_t w = hw; w < b; w++) d[w - a] = 0.0f;
                        }
                        p += seg;
                    }
                }
        vx_gemm_f32(0, 0, cv->cout, len, K, 1.0f, cv->w, K, cols, len, 0.0f, y + p0, N, 1);
        for (int64_t o = 0; o < cv->cout; o++) {
            float *yo = y + o * N + p0;
            const float bo = cv->b[o];
            if (resid) {
                const float *ro = resid + o * N + p0;
                for (int64_t p = 0; p < len; p++) yo[p] += bo + ro[p];
            } else {
                for (int64_t p = 0; p < len; p++) yo[p] += bo;
            }
            if (relu)
                for (int64_t p = 0; p < len; p++) yo[p] = yo[p] > 0.0f ? yo[p] : 0.0f;
        }
    }
}

/* Output columns [t0, t1) (row stride ldy) of a 1-D conv w [cout][cin·k] (stride s, dilation d, left
 * pad p) over x, whose global column i (valid for 0 ≤ i < xlen, zero outside) is stored at
 * x[ci·ldx + i − xbase]. Then + bias, ReLU if asked. Serial; cols: K·tile_for(K) floats. */
static void conv1d_slab(const float *x, int64_t ldx, int64_t xbase, int64_t xlen, int64_t cin, const float *w,
                        int64_t cout, int64_t k, int64_t s, int64_t d, int64_t p, int64_t t0, int64_t t1, float *y,
                        int64_t ldy, const float *bias, int relu, float *cols) {
    const int64_t K = cin * k, tile = tile_for(K);
    const int pointwise = k == 1 && s == 1 && p == 0;
    for (int64_t a = t0; a < t1; a += tile) {
        const int64_t len = a + tile < t1 ? tile : t1 - a;
        const float *B = x + (a - xbase);
        int64_t ldb = ldx;
        if (!pointwise) {
            for (int64_t ci = 0; ci < cin; ci++)
                for (int64_t q = 0; q < k; q++) {
                    float *row = cols + (ci * k + q) * len;
                    const float *xr = x + ci * ldx - xbase;
                    for (int64_t j = 0; j < len; j++) {
                        const int64_t i = (a + j) * s - p + q * d;
                        row[j] = i >= 0 && i < xlen ? xr[i] : 0.0f;
                    }
                }
            B = cols;
            ldb = len;
        }
        vx_gemm_f32(0, 0, cout, len, K, 1.0f, w, K, B, ldb, 0.0f, y + a, ldy, 1);
        if (bias || relu)
            for (int64_t o = 0; o < cout; o++) {
                float *yo = y + o * ldy + a;
                const float bo = bias ? bias[o] : 0.0f;
                for (int64_t j = 0; j < len; j++) {
                    const float v = yo[j] + bo;
                    yo[j] = relu && v < 0.0f ? 0.0f : v;
                }
            }
    }
}

/* y[c][t] = relu(x[c][t]·s[c] + b[c]) for c < ch, t in [t0, t1) (row stride T; y may alias x). */
static void bn_relu(float *y, const float *x, const cp_bn *bn, int64_t ch, int64_t T, int64_t t0, int64_t t1) {
    for (int64_t c = 0; c < ch; c++) {
        const float s = bn->s[c], b = bn->b[c];
        const float *xc = x + c * T;
        float *yc = y + c * T;
        for (int64_t t = t0; t < t1; t++) {
            const float v = xc[t] * s + b;
            yc[t] = v > 0.0f ? v : 0.0f;
        }
    }
}

typedef struct fwd {
    const vx_campplus *c;
    const float *img; /* fbank image [feat][m] */
    int64_t m, T, nseg;
    int nslab;
    float *x, *u;     /* [cmax][T]: block activations (appended in place), BN+ReLU copy */
    float *h[2];      /* [bneck][T]: bottleneck output, alternating between layers */
    double *part[2];  /* [nslab][bneck][nseg]: per-slab segment sums of h, alternating */
    float **win;      /* per pool slot: head window buffers, 3·hc·feat·wmax + hc·head_f·wmax */
    float **cols;     /* per pool slot: im2col tile */
    float **gate;     /* per pool slot: ctx [nseg][bneck], z1 [nseg][mid], gate [nseg][growth] */
    int64_t wmax;
} fwd;

static int64_t halo(const vx_campplus *c) { /* 3×3 convs in the head, each widens the window by 1 */
    int64_t n = 2;
    for (int l = 0; l < HEAD_LAYERS; l++) n += 2 * c->nres[l];
    return n;
}

/* fbank columns [lo, hi) the head is computed on for TDNN output columns [t0, t1). */
static void head_window(const fwd *F, int64_t t0, int64_t t1, int64_t *lo, int64_t *hi) {
    const vx_campplus *c = F->c;
    const int64_t tpad = (c->tdnn_k - 1) / 2;
    const int64_t a = 2 * t0 - tpad, b = 2 * (t1 - 1) - tpad + c->tdnn_k; /* TDNN inputs of the slab */
    *lo = a - halo(c) > 0 ? a - halo(c) : 0;
    *hi = b + halo(c) < F->m ? b + halo(c) : F->m;
}

static void head_slab(const fwd *F, int slot, int64_t lo, int64_t hi, float *hout) {
    const vx_campplus *c = F->c;
    const int64_t W = hi - lo, n = c->head_ch * c->feat * W;
    float *buf[3] = {F->win[slot], F->win[slot] + n, F->win[slot] + 2 * n};
    float *cols = F->cols[slot];
    /* the window of the image goes into buf[1] (free until the first block's conv1) */
    for (int64_t f = 0; f < c->feat; f++) memcpy(buf[1] + f * W, F->img + f * F->m + lo, sizeof(float) * (size_t)W);
    int64_t H = c->feat;
    int ix = 0; /* buffer holding the current activation */
    conv2d(&c->conv1, buf[1], H, W, buf[0], NULL, 1, cols);
    for (int l = 0; l < HEAD_LAYERS; l++)
        for (int i = 0; i < c->nres[l]; i++) {
            const cp_res *r = &c->res[l][i];
            const int64_t Ho = conv2d_rows(&r->c1, H);
            const int it = (ix + 1) % 3, i3 = (ix + 2) % 3;
            conv2d(&r->c1, buf[ix], H, W, buf[it], NULL, 1, cols);
            if (r->sc.w) { /* out = relu(bn2(conv2 t) + bn_sc(conv_sc x)), written over x */
                conv2d(&r->sc, buf[ix], H, W, buf[i3], NULL, 0, cols);
                conv2d(&r->c2, buf[it], Ho, W, buf[ix], buf[i3], 1, cols);
            } else { /* identity shortcut */
                conv2d(&r->c2, buf[it], Ho, W, buf[i3], buf[ix], 1, cols);
                ix = i3;
            }
            H = Ho;
        }
    conv2d(&c->conv2, buf[ix], H, W, hout, NULL, 1, cols); /* [hc][head_f][W] = [flat][W] */
}

/* CAM-dense layer j, first half, on slab `slab` = columns [t0, t1): the bottleneck h and its
 * partial segment sums. */
static void dense_a(const fwd *F, const cp_dense *d, int j, int slab, int slot, int64_t t0, int64_t t1) {
    const vx_campplus *c = F->c;
    const int64_t T = F->T, bn = c->bneck, nseg = F->nseg, S = VX_CAMPPLUS_SEG;
    float *h = F->h[j & 1], *cols = F->cols[slot];
    double *part = F->part[j & 1];
    bn_relu(F->u, F->x, &d->bn1, d->cin, T, t0, t1);
    conv1d_slab(F->u, T, 0, T, d->cin, d->w1, bn, 1, 1, 1, 0, t0, t1, h, T, d->b1, 1, cols);
    /* partial sums of every 100-frame segment over this slab's columns */
    double *pt = part + (size_t)slab * (size_t)(bn * nseg);
    memset(pt, 0, sizeof(double) * (size_t)(bn * nseg));
    for (int64_t ch = 0; ch < bn; ch++) {
        const float *hc = h + ch * T;
        for (int64_t t = t0; t < t1;) {
            const int64_t sg = t / S, e = (sg + 1) * S < t1 ? (sg + 1) * S : t1;
            double s = 0.0;
            for (; t < e; t++) s += hc[t];
            pt[ch * nseg + sg] += s;
        }
    }
}

/* Second half, once every slab's dense_a has run: the gate and the local branch; appends
 * growth rows to x. */
static void dense_b(const fwd *F, const cp_dense *d, int j, int64_t dil, int slot, int64_t t0, int64_t t1) {
    const vx_campplus *c = F->c;
    const int64_t T = F->T, bn = c->bneck, g = c->growth, mid = c->mid, nseg = F->nseg, S = VX_CAMPPLUS_SEG;
    float *h = F->h[j & 1], *cols = F->cols[slot];
    const double *part = F->part[j & 1];
    /* context = time-mean + segment mean; constant within a segment, so the gate's two 1×1
     * convs run once per segment of this slab */
    const int64_t s0 = t0 / S, s1 = (t1 - 1) / S + 1;
    float *ctx = F->gate[slot], *z1 = ctx + nseg * bn, *gate = z1 + nseg * mid;
    for (int64_t ch = 0; ch < bn; ch++) {
        double tot = 0.0;
        for (int64_t sg = 0; sg < nseg; sg++)
            for (int k = 0; k < F->nslab; k++) tot += part[((size_t)k * bn + ch) * nseg + sg];
        const float mean = (float)(tot / (double)T);
        for (int64_t sg = s0; sg < s1; sg++) {
            double s = 0.0;
            for (int k = 0; k < F->nslab; k++) s += part[((size_t)k * bn + ch) * nseg + sg];
            const int64_t len = (sg + 1) * S < T ? S : T - sg * S;
            ctx[sg * bn + ch] = mean + (float)(s / (double)len);
        }
    }
    for (int64_t sg = s0; sg < s1; sg++) {
        const float *cs = ctx + sg * bn;
        float *zs = z1 + sg * mid, *gs = gate + sg * g;
        for (int64_t o = 0; o < mid; o++) {
            float acc = d->bc1[o];
            for (int64_t i = 0; i < bn; i++) acc += d->wc1[o * bn + i] * cs[i];
            zs[o] = acc > 0.0f ? acc : 0.0f;
        }
        for (int64_t o = 0; o < g; o++) {
            float acc = d->bc2[o];
            for (int64_t i = 0; i < mid; i++) acc += d->wc2[o * mid + i] * zs[i];
            gs[o] = 1.0f / (1.0f + expf(-acc));
        }
    }
    /* local branch (needs h on dil columns beyond the slab: complete after dense_a's region) */
    float *y = F->x + d->cin * T;
    const int64_t pad = (c->local_k - 1) / 2 * dil;
    conv1d_slab(h, T, 0, T, bn, d->wl, g, c->local_k, 1, dil, pad, t0, t1, y, T, NULL, 0, cols);
    for (int64_t o = 0; o < g; o++) {
        float *yo = y + o * T;
        for (int64_t t = t0; t < t1; t++) yo[t] *= gate[(t / S) * g + o];
    }
}

/* Stage `stage` of slab `slab`: stage 0 = head, TDNN and dense_a of layer 0; stage j + 1 =
 * dense_b of layer j, then the transit (and the output BN) where a block ends, and dense_a of
 * layer j + 1. */
typedef struct {
    const fwd *F;
    int stage;
} stage_job;

static void slab_stage(void *ctx_, int64_t slab_) {
    const stage_job *job = ctx_;
    const fwd *F = job->F;
    const vx_campplus *c = F->c;
    const int slab = (int)slab_, slot = vx_pool_slot();
    const int64_t T = F->T, t0 = T * slab / F->nslab, t1 = T * (slab + 1) / F->nslab;
    int j = 0; /* running layer index: selects the double buffers */
    if (job->stage == 0) {
        /* head + TDNN in pieces of at most HEAD_PIECE output frames (bounds the window memory) */
        float *hout = F->win[slot] + 3 * c->head_ch * c->feat * F->wmax;
        const int64_t flat = c->head_ch * c->head_f, tpad = (c->tdnn_k - 1) / 2;
        for (int64_t a = t0; a < t1; a += HEAD_PIECE) {
            const int64_t b = a + HEAD_PIECE < t1 ? a + HEAD_PIECE : t1;
            int64_t lo, hi;
            head_window(F, a, b, &lo, &hi);
            head_slab(F, slot, lo, hi, hout);
            conv1d_slab(hout, hi - lo, lo, F->m, flat, c->tdnn_w, c->init_ch, c->tdnn_k, 2, 1, tpad, a, b, F->x, T,
                        c->tdnn_b, 1, F->cols[slot]);
        }
        dense_a(F, &c->layers[0][0], 0, slab, slot, t0, t1);
        return;
    }
    for (int b = 0; b < VX_CAMPPLUS_NBLOCKS; b++)
        for (int l = 0; l < c->nlayers[b]; l++, j++) {
            if (j != job->stage - 1) continue;
            dense_b(F, &c->layers[b][l], j, DILATIONS[b], slot, t0, t1);
            if (l + 1 < c->nlayers[b]) {
                dense_a(F, &c->layers[b][l + 1], j + 1, slab, slot, t0, t1);
                return;
            }
            const int64_t cb = c->block_in[b] + c->nlayers[b] * c->growth;
            bn_relu(F->u, F->x, &c->transit_bn[b], cb, T, t0, t1);
            conv1d_slab(F->u, T, 0, T, cb, c->transit_w[b], c->block_out[b], 1, 1, 1, 0, t0, t1, F->x, T, NULL, 0,
                        F->cols[slot]);
            if (b + 1 < VX_CAMPPLUS_NBLOCKS) dense_a(F, &c->layers[b + 1][0], j + 1, slab, slot, t0, t1);
            else bn_relu(F->x, F->x, &c->out_bn, c->block_out[VX_CAMPPLUS_NBLOCKS - 1], T, t0, t1);
            return;
        }
}

vocis_status vx_campplus_frames(const vx_campplus *c, const float *fbank, int64_t m, float **out, int64_t *ch,
                                int64_t *frames, int nthreads, vx_err *err) {
    *out = NULL;
    if (ch) *ch = 0;
    if (frames) *frames = 0;
    if (nthreads < 1) nthreads = 1;
    if (m < 3)
        return vx_fail(err, VOCIS_E_INVALID, "CAMPPlus: %lld fbank frames are too few (need at least 3, i.e. %d samples)",
                       (long long)m, VX_CAMPPLUS_MIN_SAMPLES);
    fwd F = {.c = c, .m = m};
    const int64_t feat = c->feat, hc = c->head_ch, flat = hc * c->head_f;
    F.T = (m - 1) / 2 + 1; /* TDNN: k odd, stride 2, pad (k−1)/2 */
    const int64_t T = F.T;
    F.nslab = (int)(T / SLAB_FRAMES < MAX_SLABS ? (T / SLAB_FRAMES > 1 ? T / SLAB_FRAMES : 1) : MAX_SLABS);
    if (nthreads > F.nslab) nthreads = F.nslab;
    F.nseg = (T + VX_CAMPPLUS_SEG - 1) / VX_CAMPPLUS_SEG;
    int64_t cmax = 0;
    for (int b = 0; b < VX_CAMPPLUS_NBLOCKS; b++) {
        const int64_t cb = c->block_in[b] + c->nlayers[b] * c->growth;
        if (cb > cmax) cmax = cb;
    }
    for (int t = 0; t < F.nslab; t++) {
        const int64_t t0 = T * t / F.nslab, t1 = T * (t + 1) / F.nslab;
        for (int64_t a = t0; a < t1; a += HEAD_PIECE) {
            int64_t lo, hi;
            head_window(&F, a, a + HEAD_PIECE < t1 ? a + HEAD_PIECE : t1, &lo, &hi);
            if (hi - lo > F.wmax) F.wmax = hi - lo;
        }
    }
    /* im2col tile: K·tile_for(K) ≤ max(TILE_BYTES/4, 16·K) for every conv that uses one */
    int64_t kmax = hc * HEAD_K * HEAD_K;
    if (flat * c->tdnn_k > kmax) kmax = flat * c->tdnn_k;
    if (c->bneck * c->local_k > kmax) kmax = c->bneck * c->local_k;
    const int64_t colmax = TILE_BYTES / 4 > 16 * kmax ? TILE_BYTES / 4 : 16 * kmax;
    const size_t win_n = (size_t)(3 * hc * feat + flat) * (size_t)F.wmax;
    const size_t gate_n = (size_t)(F.nseg * (c->bneck + c->mid + c->growth));
    const size_t per_slot = win_n + (size_t)colmax + gate_n;

    float *img = malloc(sizeof(float) * (size_t)(feat * m));
    float *big = malloc(sizeof(float) * ((size_t)(2 * cmax * T + 2 * c->bneck * T) + per_slot * (size_t)nthreads));
    double *parts = malloc(sizeof(double) * 2 * (size_t)(F.nslab * c->bneck * F.nseg));
    float **pt = malloc(sizeof(float *) * 3 * (size_t)nthreads);
    vocis_status st = VOCIS_OK;
    if (!img || !big || !parts || !pt) {
        st = vx_fail(err, VOCIS_E_NOMEM, "CAMPPlus: out of memory for %lld frames", (long long)m);
        goto done;
    }
    F.x = big;
    F.u = F.x + cmax * T;
    F.h[0] = F.u + cmax * T;
    F.h[1] = F.h[0] + c->bneck * T;
    F.part[0] = parts;
    F.part[1] = parts + F.nslab * c->bneck * F.nseg;
    F.win = pt, F.cols = pt + nthreads, F.gate = pt + 2 * nthreads;
    for (int t = 0; t < nthreads; t++) {
        F.win[t] = F.h[1] + c->bneck * T + per_slot * (size_t)t;
        F.cols[t] = F.win[t] + win_n;
        F.gate[t] = F.cols[t] + colmax;
    }
    /* fbank [m][feat] → image [feat][m] (height = frequency, width = time) */
    for (int64_t t = 0; t < m; t++)
        for (int64_t f = 0; f < feat; f++) img[f * m + t] = fbank[t * feat + f];
    F.img = img;
    int layers = 0;
    for (int b = 0; b < VX_CAMPPLUS_NBLOCKS; b++) layers += c->nlayers[b];
    for (int stage = 0; stage <= layers; stage++) {
        stage_job job = {&F, stage};
        vx_pool_run(nthreads, F.nslab, slab_stage, &job);
    }

    /* the output is the first rows of `big`; give back the scratch after them */
    const int64_t cfin = c->block_out[VX_CAMPPLUS_NBLOCKS - 1];
    float *shrunk = realloc(big, sizeof(float) * (size_t)(cfin * T));
    *out = shrunk ? shrunk : big;
    big = NULL;
    if (ch) *ch = cfin;
    if (frames) *frames = T;
done:
    free(img), free(big), free(parts), free(pt);
    return st;
}

vocis_status vx_campplus_forward(const vx_campplus *c, const float *fbank, int64_t m, float *xvec, int nthreads,
                                 vx_err *err) {
    float *x = NULL;
    int64_t C = 0, T = 0;
    VX_TRY(vx_campplus_frames(c, fbank, m, &x, &C, &T, nthreads, err));
    float *stats = malloc(sizeof(float) * (size_t)(2 * C));
    if (!stats) {
        free(x);
        return vx_fail(err, VOCIS_E_NOMEM, "CAMPPlus: out of memory");
    }
    /* statistics pooling: mean ‖ unbiased std over time */
    for (int64_t ch = 0; ch < C; ch++) {
        const float *xc = x + ch * T;
        double s = 0.0;
        for (int64_t t = 0; t < T; t++) s += xc[t];
        const double mean = s / (double)T;
        double v = 0.0;
        for (int64_t t = 0; t < T; t++) v += ((double)xc[t] - mean) * ((double)xc[t] - mean);
        stats[ch] = (float)mean;
        stats[C + ch] = (float)sqrt(v / (double)(T - 1));
    }
    /* dense 1×1 + BN (folded) */
    for (int64_t e = 0; e < c->emb; e++) {
        const float *we = c->dense_w + e * 2 * C;
        double acc = 0.0;
        for (int64_t i = 0; i < 2 * C; i++) acc += (double)we[i] * stats[i];
        xvec[e] = (float)acc + c->dense_b[e];
    }
    free(stats);
    free(x);
    return VOCIS_OK;
}

vocis_status vx_campplus_embed(const vx_campplus *c, const float *wav16k, int64_t n, float *xvec, float **fbank_out,
                               int64_t *frames, int nthreads, vx_err *err) {
    if (fbank_out) *fbank_out = NULL;
    if (frames) *frames = 0;
    if (!wav16k || n < VX_CAMPPLUS_MIN_SAMPLES)
        return vx_fail(err, VOCIS_E_INVALID,
                       "CAMPPlus: reference audio too short: %lld samples at 16 kHz, need at least %d (45 ms)",
                       (long long)(wav16k ? n : 0), VX_CAMPPLUS_MIN_SAMPLES);
    float *fb = NULL;
    int64_t m = 0;
    VX_TRY(vx_kaldi_fbank(wav16k, n, VX_CAMPPLUS_SR, (int)c->feat, &fb, &m, nthreads, err));
    /* minus the time-mean of every bin */
    const int64_t F = c->feat;
    double *mean = calloc((size_t)F, sizeof(double));
    if (!mean) {
        free(fb);
        return vx_fail(err, VOCIS_E_NOMEM, "CAMPPlus: out of memory");
    }
    for (int64_t t = 0; t < m; t++)
        for (int64_t f = 0; f < F; f++) mean[f] += fb[t * F + f];
    for (int64_t f = 0; f < F; f++) mean[f] /= (double)m;
    for (int64_t t = 0; t < m; t++)
        for (int64_t f = 0; f < F; f++) fb[t * F + f] = (float)((double)fb[t * F + f] - mean[f]);
    free(mean);
    vocis_status st = vx_campplus_forward(c, fb, m, xvec, nthreads, err);
    if (st == VOCIS_OK && fbank_out) {
        *fbank_out = fb;
        fb = NULL;
    }
    if (st == VOCIS_OK && frames) *frames = m;
    free(fb);
    return st;
}
