/* VibeVoice σ-VAE tokenizers: see vae.h.
 *
 * Layout: activations are time-major x[T][C] throughout (upstream is
 * channel-first; the debug probes transpose back).
 *
 *   SConv1d (k, s, causal):  input rows = [state: last k − s inputs][x: T rows][zeros to a multiple of s]
 *                            y[t] = W · flat(rows t·s .. t·s + k − 1) + b     (W packed [Cout][k·Cin])
 *   depthwise SConv1d:       y[t][c] = b[c] + Σ_j w[j][c] · rows[t·s + j][c]
 *   SConvTranspose1d:        col[t] = Wt · x[t] ([k·Cout], Wt packed [k·Cout][Cin]); overlap-add
 *                            col[t][j] at output row t·s + j onto the carried tail (k − s rows);
 *                            emit the first T·s rows (+ b), carry the rest (= upstream's right trim).
 *
 * Fed in chunks of whole frames, these reproduce upstream's non-streaming
 * padding (left k − s zeros = a fresh state; right extra zeros = the per-layer
 * pad of the last chunk) and its streaming cache (state = last k − s inputs;
 * the transposed conv's recomputation from its k − 1 cached frames equals the
 * carried tail). */
#include "models/vibevoice/vae.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/pool.h"
#include "kernels/kernels.h"
#include "kernels/precision.h"
#include "models/synthetic.h"

#define MAXS VX_VV_MAX_STAGES
#define COL_BUDGET (1 << 20) /* floats per GEMM column tile (4 MiB) */
#define FFN_BUDGET (1 << 22) /* floats of FFN hidden per row tile (16 MiB) */
#define WHOLE_CHUNK 32       /* frames per chunk of the whole-sequence calls */
#define PAR_MIN 8192         /* least elements per chunk of the element-wise loops on the pool */

typedef struct conv { /* SConv1d */
    int64_t cin, cout, k, s;
    int dw;       /* depthwise: groups = cin = cout */
    vx_mat w;     /* dense: [cout][k·cin], row o = (tap j, channel c) at j·cin + c; file dtype */
    float *dww;   /* depthwise: [k][cin] */
    float *b;     /* [cout] or NULL */
    int64_t st;   /* offset of the state ((k − s)·cin floats) in the net's state */
} conv;

typedef struct convtr { /* SConvTranspose1d */
    int64_t cin, cout, k, s;
    vx_mat w; /* [k·cout][cin], row j·cout + o; file dtype */
    float *b;
    int64_t st; /* offset of the tail ((k − s)·cout floats) */
} convtr;

typedef struct block { /* Block1D */
    int64_t d, h;
    float *nw, *nb, *fnw, *fnb; /* norm / ffn_norm weight (bias: LN only) */
    conv mix;
    float *gamma, *fgamma; /* NULL without layer scale */
    vx_mat l1, l2;         /* [h][d], [d][h]: views into the weights */
    float *b1, *b2;
} block;

typedef struct net {
    int dec, nst;
    int64_t in_ch, out_ch;
    conv stem;
    conv down[MAXS];  /* encoder, stages 1.. */
    convtr up[MAXS];  /* decoder, stages 1.. */
    int64_t ch[MAXS]; /* stage widths */
    int depth[MAXS];
    block *blk[MAXS];
    int has_norm;
    float *nw, *nb;
    conv head;
    int64_t st_len; /* floats of state */
    int64_t hop;    /* samples per frame */
} net;

struct vx_vv_vae {
    vx_vv_tokenizer_config cfg;
    int ln; /* LayerNorm instead of RMSNorm */
    float eps;
    net enc, dec;
    int has_enc, has_dec;
    vx_weights *own_w; /* random weights */
    void **bufs;
    int nbufs, capbufs;
};

typedef struct scratch {
    float *a, *b, *xin, *col, *fu, *fh, *fo;
    int64_t n_act, n_xin, n_col, n_fu, n_fh;
} scratch;

struct vx_vv_vae_stream {
    const vx_vv_vae *v;
    float *est, *dst; /* encoder / decoder state */
    scratch S;
};

/* ------------------------------------------------------------------ memory */

static void *own(vx_vv_vae *v, size_t bytes, vx_err *err) {
    if (v->nbufs == v->capbufs) {
        int cap = v->capbufs ? 2 * v->capbufs : 256;
        void **nb = realloc(v->bufs, (size_t)cap * sizeof *nb);
        if (!nb) {
            vx_fail(err, VOCIS_E_NOMEM, "vibevoice vae: out of memory");
            return NULL;
        }
        v->bufs = nb, v->capbufs = cap;
    }
    void *p = malloc(bytes ? bytes : 1);
    if (!p) {
        vx_fail(err, VOCIS_E_NOMEM, "vibevoice vae: out of memory (%zu bytes)", bytes);
        return NULL;
    }
    v->bufs[v->nbufs++] = p;
    return p;
}

void vx_vv_vae_free(vx_vv_vae *v) {
    if (!v) return;
    for (int i = 0; i < v->nbufs; i++) free(v->bufs[i]);
    free(v->bufs);
    for (int i = 0; i < MAXS; i++) free(v->enc.blk[i]), free(v->dec.blk[i]);
    vx_weights_close(v->own_w);
    free(v);
}

/* ------------------------------------------------------------------ loading */

typedef struct loader {
    vx_vv_vae *v;
    const vx_weights *w;
    char pre[256]; /* "<prefix>encoder." */
    vx_err *err;
} loader;

static vocis_status get(loader *L, int ndim, const int64_t *shape, vx_tensor *t, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
/* prefix + formatted tensor name */
static void full_name(const loader *L, char *full, size_t cap, const char *fmt, va_list ap) {
    char name[512];
    vsnprintf(name, sizeof name, fmt, ap);
    snprintf(full, cap, "%s%s", L->pre, name);
}

static vocis_status get(loader *L, int ndim, const int64_t *shape, vx_tensor *t, const char *fmt, ...) {
    char full[800];
    va_list ap;
    va_start(ap, fmt);
    full_name(L, full, sizeof full, fmt, ap);
    va_end(ap);
    return vx_weights_expect(L->w, VX_FLOATS, ndim, shape, t, L->err, "%s", full);
}

static int has(loader *L, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int has(loader *L, const char *fmt, ...) {
    char full[800];
    va_list ap;
    va_start(ap, fmt);
    full_name(L, full, sizeof full, fmt, ap);
    va_end(ap);
    return vx_weights_has(L->w, full);
}

static vocis_status f32_of(loader *L, const vx_tensor *t, float **out) {
    size_t n = (size_t)vx_numel(t);
    if (!(*out = own(L->v, n * sizeof(float), L->err))) return VOCIS_E_NOMEM;
    vx_to_f32(*out, t->data, t->dtype, n);
    return VOCIS_OK;
}

/* An owned f32 vector [n] named `<base>.<leaf>`. */
static vocis_status vec(loader *L, const char *base, const char *leaf, int64_t n, float **out) {
    vx_tensor t;
    VX_TRY(get(L, VX_DIMS(n), &t, "%s%s%s", base, *leaf ? "." : "", leaf));
    return f32_of(L, &t, out);
}

/* dst[i] = src[j] for elements of es bytes (packing a weight in its file dtype) */
static inline void copy_el(void *dst, int64_t i, const void *src, int64_t j, size_t es) {
    if (es == 2) ((uint16_t *)dst)[i] = ((const uint16_t *)src)[j];
    else if (es == 4) ((uint32_t *)dst)[i] = ((const uint32_t *)src)[j];
    else memcpy((char *)dst + (size_t)i * es, (const char *)src + (size_t)j * es, es);
}

/* Whether the precision policy repacks this F32 matrix as bf16 (kernels/precision.h). */
/* The policy is bf16 or q8: conv matrices as bf16, and many-row products may
 * round their activations to bf16 too (vx_mat.act_bf16). */
static int lowp(loader *L) {
    int p = vx_weights_precision(L->w);
    return p == VX_PREC_BF16 || p == VX_PREC_Q8;
}

static int to_bf16(loader *L, const vx_tensor *t) { return t->dtype == VX_F32 && lowp(L); }

/* SConv1d `<base>.weight` (cout, cin/groups, k) [+ `.bias`]. cout < 0: read from the shape. */
static vocis_status load_conv(loader *L, const char *base, int64_t cin, int64_t cout, int64_t s, int dw, conv *c) {
    vx_tensor t;
    VX_TRY(get(L, VX_DIMS(dw ? cin : cout, dw ? 1 : cin, -1), &t, "%s.weight", base));
    c->cin = cin, c->cout = t.shape[0], c->k = t.shape[2], c->s = s, c->dw = dw;
    if (c->k < s || c->k < 1)
        return vx_fail(L->err, VOCIS_E_SHAPE, "%s%s.weight: kernel size %lld is smaller than the stride %lld",
                       L->pre, base, (long long)c->k, (long long)s);
    const int64_t K = c->k, ci = cin, co = c->cout;
    if (dw) {
        if (!(c->dww = own(L->v, (size_t)(K * ci) * sizeof(float), L->err))) return VOCIS_E_NOMEM;
        float *tmp = malloc((size_t)(K * ci) * sizeof(float));
        if (!tmp) return vx_fail(L->err, VOCIS_E_NOMEM, "vibevoice vae: out of memory");
        vx_to_f32(tmp, t.data, t.dtype, (size_t)(K * ci));
        for (int64_t o = 0; o < ci; o++)
            for (int64_t j = 0; j < K; j++) c->dww[j * ci + o] = tmp[o * K + j];
        free(tmp);
    } else {
        /* (cout, cin, k) -> [cout][k][cin], same dtype (bf16 when the policy converts F32) */
        const int cv = to_bf16(L, &t);
        const size_t es = cv ? 2 : vx_dtype_size(t.dtype);
        char *dst = own(L->v, (size_t)(co * K * ci) * es, L->err);
        if (!dst) return VOCIS_E_NOMEM;
        for (int64_t o = 0; o < co; o++)
            for (int64_t cc = 0; cc < ci; cc++)
                for (int64_t j = 0; j < K; j++)
                    if (cv) ((uint16_t *)dst)[(o * K + j) * ci + cc] = vx_f32_to_bf16(((const float *)t.data)[(o * ci + cc) * K + j]);
                    else copy_el(dst, (o * K + j) * ci + cc, t.data, (o * ci + cc) * K + j, es);
        if (cv) vx_weights_release(L->w, t.data, (size_t)(co * K * ci) * sizeof(float));
        c->w = (vx_mat){cv ? VX_BF16 : t.dtype, co, K * ci, dst, lowp(L)};
    }
    c->b = NULL;
    if (L->v->cfg.conv_bias) VX_TRY(vec(L, base, "bias", co, &c->b));
    return VOCIS_OK;
}

/* SConvTranspose1d `<base>.weight` (cin, cout, k) [+ `.bias`]. */
static vocis_status load_convtr(loader *L, const char *base, int64_t cin, int64_t s, convtr *c) {
    vx_tensor t;
    VX_TRY(get(L, VX_DIMS(cin, -1, -1), &t, "%s.weight", base));
    c->cin = cin, c->cout = t.shape[1], c->k = t.shape[2], c->s = s;
    if (c->k < s || c->cout < 1)
        return vx_fail(L->err, VOCIS_E_SHAPE, "%s%s.weight: kernel size %lld is smaller than the stride %lld",
                       L->pre, base, (long long)c->k, (long long)s);
    const int64_t K = c->k, co = c->cout;
    const int cv = to_bf16(L, &t);
    const size_t es = cv ? 2 : vx_dtype_size(t.dtype);
    char *dst = own(L->v, (size_t)(co * K * cin) * es, L->err);
    if (!dst) return VOCIS_E_NOMEM;
    /* (cin, cout, k) -> [k][cout][cin] */
    for (int64_t cc = 0; cc < cin; cc++)
        for (int64_t o = 0; o < co; o++)
            for (int64_t j = 0; j < K; j++)
                if (cv) ((uint16_t *)dst)[(j * co + o) * cin + cc] = vx_f32_to_bf16(((const float *)t.data)[(cc * co + o) * K + j]);
                else copy_el(dst, (j * co + o) * cin + cc, t.data, (cc * co + o) * K + j, es);
    if (cv) vx_weights_release(L->w, t.data, (size_t)(co * K * cin) * sizeof(float));
    c->w = (vx_mat){cv ? VX_BF16 : t.dtype, K * co, cin, dst, lowp(L)};
    c->b = NULL;
    if (L->v->cfg.conv_bias) VX_TRY(vec(L, base, "bias", co, &c->b));
    return VOCIS_OK;
}

static vocis_status load_norm(loader *L, const char *base, int64_t d, float **w, float **b) {
    *b = NULL;
    VX_TRY(vec(L, base, "weight", d, w));
    if (L->v->ln) VX_TRY(vec(L, base, "bias", d, b));
    return VOCIS_OK;
}

static vocis_status load_block(loader *L, int si, int bi, int64_t d, block *b) {
    const vx_vv_tokenizer_config *c = &L->v->cfg;
    char base[128];
    b->d = d;
    snprintf(base, sizeof base, "stages.%d.%d.norm", si, bi);
    VX_TRY(load_norm(L, base, d, &b->nw, &b->nb));
    snprintf(base, sizeof base, "stages.%d.%d.ffn_norm", si, bi);
    VX_TRY(load_norm(L, base, d, &b->fnw, &b->fnb));
    const int dw = strcmp(c->mixer_layer, "depthwise_conv") == 0;
    snprintf(base, sizeof base, "stages.%d.%d.mixer.conv.conv.conv", si, bi);
    VX_TRY(load_conv(L, base, d, d, 1, dw, &b->mix));
    b->gamma = b->fgamma = NULL;
    if (c->layer_scale_init_value > 0) {
        snprintf(base, sizeof base, "stages.%d.%d.gamma", si, bi);
        VX_TRY(vec(L, base, "", d, &b->gamma));
        snprintf(base, sizeof base, "stages.%d.%d.ffn_gamma", si, bi);
        VX_TRY(vec(L, base, "", d, &b->fgamma));
    }
    vx_tensor t;
    VX_TRY(get(L, VX_DIMS(-1, d), &t, "stages.%d.%d.ffn.linear1.weight", si, bi));
    b->h = t.shape[0];
    b->l1 = vx_mat_of(&t);
    VX_TRY(vx_weights_mat_policy(L->w, &b->l1, VX_W_MATRIX, L->err));
    VX_TRY(get(L, VX_DIMS(d, b->h), &t, "stages.%d.%d.ffn.linear2.weight", si, bi));
    b->l2 = vx_mat_of(&t);
    VX_TRY(vx_weights_mat_policy(L->w, &b->l2, VX_W_MATRIX, L->err));
    b->b1 = b->b2 = NULL;
    if (c->conv_bias) {
        snprintf(base, sizeof base, "stages.%d.%d.ffn.linear1", si, bi);
        VX_TRY(vec(L, base, "bias", b->h, &b->b1));
        snprintf(base, sizeof base, "stages.%d.%d.ffn.linear2", si, bi);
        VX_TRY(vec(L, base, "bias", d, &b->b2));
    }
    return VOCIS_OK;
}

static void assign_state(net *n) {
    int64_t off = 0;
#define CONV_ST(c) ((c).st = off, off += ((c).k - (c).s) * (c).cin)
    CONV_ST(n->stem);
    for (int i = 0; i < n->nst; i++) {
        if (i > 0) {
            if (n->dec) n->up[i].st = off, off += (n->up[i].k - n->up[i].s) * n->up[i].cout;
            else CONV_ST(n->down[i]);
        }
        for (int j = 0; j < n->depth[i]; j++) CONV_ST(n->blk[i][j].mix);
    }
    CONV_ST(n->head);
#undef CONV_ST
    n->st_len = off;
}

/* encoder (dec = 0) or decoder (dec = 1) under `<prefix>encoder.` / `<prefix>decoder.` */
static vocis_status load_net(vx_vv_vae *v, const vx_weights *w, const char *prefix, int dec, vx_err *err) {
    const vx_vv_tokenizer_config *c = &v->cfg;
    net *n = dec ? &v->dec : &v->enc;
    loader L = {v, w, "", err};
    snprintf(L.pre, sizeof L.pre, "%s%s", prefix, dec ? "decoder." : "encoder.");
    const int nr = dec ? c->dec_n_ratios : c->enc_n_ratios;
    const int *depths = dec ? c->dec_depths : c->enc_depths;
    n->dec = dec;
    n->nst = dec ? c->dec_n_depths : c->enc_n_depths;
    n->in_ch = dec ? c->vae_dim : c->channels;
    n->out_ch = dec ? c->channels : c->vae_dim;
    n->hop = c->hop;
    if (n->nst != nr + 1 || n->nst > MAXS)
        return vx_fail(err, VOCIS_E_FORMAT, "vibevoice vae: %s %d depths for %d ratios", L.pre, n->nst, nr);
    VX_TRY(load_conv(&L, dec ? "upsample_layers.0.0.conv.conv" : "downsample_layers.0.0.conv.conv", n->in_ch, -1, 1,
                     0, &n->stem));
    int64_t ch = n->stem.cout;
    for (int i = 0; i < n->nst; i++) {
        char base[128];
        if (i > 0) {
            /* encoder: ratios reversed; decoder: file order */
            const int64_t s = dec ? c->dec_ratios[i - 1] : c->enc_ratios[nr - i];
            if (dec) {
                snprintf(base, sizeof base, "upsample_layers.%d.0.convtr.convtr", i);
                VX_TRY(load_convtr(&L, base, ch, s, &n->up[i]));
                ch = n->up[i].cout;
            } else {
                snprintf(base, sizeof base, "downsample_layers.%d.0.conv.conv", i);
                VX_TRY(load_conv(&L, base, ch, -1, s, 0, &n->down[i]));
                ch = n->down[i].cout;
            }
        }
        n->ch[i] = ch;
        n->depth[i] = depths[i];
        if (!(n->blk[i] = calloc((size_t)(depths[i] ? depths[i] : 1), sizeof(block))))
            return vx_fail(err, VOCIS_E_NOMEM, "vibevoice vae: out of memory");
        for (int j = 0; j < depths[i]; j++) VX_TRY(load_block(&L, i, j, ch, &n->blk[i][j]));
        if (has(&L, "stages.%d.%d.norm.weight", i, depths[i]))
            return vx_fail(err, VOCIS_E_SHAPE,
                           "%sstages.%d.%d.norm.weight: the weights have more blocks in stage %d than the config's "
                           "depth %d",
                           L.pre, i, depths[i], i, depths[i]);
    }
    if (has(&L, dec ? "upsample_layers.%d.0.convtr.convtr.weight" : "downsample_layers.%d.0.conv.conv.weight", n->nst))
        return vx_fail(err, VOCIS_E_SHAPE, "%s: the weights have more than the config's %d stages", L.pre, n->nst);
    n->has_norm = !c->disable_last_norm;
    n->nw = n->nb = NULL;
    if (n->has_norm) {
        if (v->ln) VX_TRY(load_norm(&L, "norm", ch, &n->nw, &n->nb));
        else if (c->layernorm_elementwise_affine) VX_TRY(vec(&L, "norm", "weight", ch, &n->nw));
    }
    VX_TRY(load_conv(&L, "head.conv.conv", ch, n->out_ch, 1, 0, &n->head));
    assign_state(n);
    return VOCIS_OK;
}

vocis_status vx_vv_vae_load(const vx_weights *w, const char *prefix, const vx_vv_tokenizer_config *cfg,
                            int with_decoder, vx_vv_vae **out, vx_err *err) {
    *out = NULL;
    if (!cfg || !cfg->present)
        return vx_fail(err, VOCIS_E_UNSUPPORTED, "vibevoice vae: the config has no tokenizer for '%s'", prefix);
    if (cfg->channels != 1)
        return vx_fail(err, VOCIS_E_UNSUPPORTED, "vibevoice vae %s: channels %d (only mono is supported)", prefix,
                       cfg->channels);
    if (strcmp(cfg->mixer_layer, "depthwise_conv") && strcmp(cfg->mixer_layer, "conv"))
        return vx_fail(err, VOCIS_E_UNSUPPORTED, "vibevoice vae %s: mixer_layer '%s' (expected depthwise_conv or conv)",
                       prefix, cfg->mixer_layer);
    if (strcmp(cfg->conv_norm, "none"))
        return vx_fail(err, VOCIS_E_UNSUPPORTED, "vibevoice vae %s: conv_norm '%s' is not supported (only none)",
                       prefix, cfg->conv_norm);
    if (strcmp(cfg->pad_mode, "constant"))
        return vx_fail(err, VOCIS_E_UNSUPPORTED, "vibevoice vae %s: pad_mode '%s' is not supported (only constant)",
                       prefix, cfg->pad_mode);
    if (!cfg->causal)
        return vx_fail(err, VOCIS_E_UNSUPPORTED, "vibevoice vae %s: only causal tokenizers are supported", prefix);
    if (with_decoder < VX_VV_VAE_ENCODER || with_decoder > VX_VV_VAE_DECODER)
        return vx_fail(err, VOCIS_E_ARG, "vibevoice vae %s: invalid part selector %d", prefix, with_decoder);
    if (with_decoder && cfg->dec_n_ratios < 1)
        return vx_fail(err, VOCIS_E_UNSUPPORTED, "vibevoice vae %s: the config has no decoder", prefix);
    vx_vv_vae *v = calloc(1, sizeof *v);
    if (!v) return vx_fail(err, VOCIS_E_NOMEM, "vibevoice vae: out of memory");
    v->cfg = *cfg;
    v->ln = strcmp(cfg->layernorm, "LN") == 0;
    v->eps = cfg->layernorm_eps;
    v->has_enc = with_decoder != VX_VV_VAE_DECODER;
    v->has_dec = with_decoder != VX_VV_VAE_ENCODER;
    vocis_status st = VOCIS_OK;
    if (v->has_enc) st = load_net(v, w, prefix, 0, err);
    if (st == VOCIS_OK && v->has_dec) st = load_net(v, w, prefix, 1, err);
    if (st != VOCIS_OK) {
        vx_vv_vae_free(v);
        return st;
    }
    *out = v;
    return VOCIS_OK;
}

vocis_status vx_vv_vae_random(const vx_vv_tokenizer_config *cfg, int with_decoder, uint64_t seed, int precision,
                              vx_vv_vae **out, vx_err *err) {
    *out = NULL;
    if (!cfg || !cfg->present) return vx_fail(err, VOCIS_E_ARG, "vibevoice vae random: no tokenizer config");
    if (with_decoder && cfg->dec_n_ratios < 1)
        return vx_fail(err, VOCIS_E_ARG, "vibevoice vae random: the config has no decoder");
    vx_synth *s = vx_synth_new(seed);
    if (!s) return vx_fail(err, VOCIS_E_NOMEM, "out of memory");
    vocis_status st = VOCIS_OK;
    const int ln = strcmp(cfg->layernorm, "LN") == 0, dwm = strcmp(cfg->mixer_layer, "conv") != 0;
#define ADD(dt, scale, ...) \
    if (st == VOCIS_OK) st = vx_synth_add(s, dt, scale, __VA_ARGS__)
#define BIAS(n, ...) \
    if (cfg->conv_bias) ADD(VX_F32, 0.02f, VX_DIMS(n), err, __VA_ARGS__)
    for (int dec = 0; dec <= 1; dec++) {
        if (dec ? with_decoder == VX_VV_VAE_ENCODER : with_decoder == VX_VV_VAE_DECODER) continue;
        const char *P = dec ? "vae.decoder." : "vae.encoder.";
        const int nst = dec ? cfg->dec_n_depths : cfg->enc_n_depths, nr = dec ? cfg->dec_n_ratios : cfg->enc_n_ratios;
        const int64_t nf = dec ? cfg->dec_n_filters : cfg->enc_n_filters;
        int64_t ch = dec ? nf << (nst - 1) : nf, in = dec ? cfg->vae_dim : cfg->channels;
        const char *sl = dec ? "upsample_layers" : "downsample_layers";
        ADD(VX_BF16, 1.0f / sqrtf((float)(in * 7)), VX_DIMS(ch, in, 7), err, "%s%s.0.0.conv.conv.weight", P, sl);
        BIAS(ch, "%s%s.0.0.conv.conv.bias", P, sl);
        for (int i = 0; i < nst; i++) {
            if (i > 0) {
                const int64_t r = dec ? cfg->dec_ratios[i - 1] : cfg->enc_ratios[nr - i];
                const int64_t nc = dec ? ch / 2 : ch * 2;
                if (dec) {
                    ADD(VX_BF16, 1.0f / sqrtf((float)ch * 2), VX_DIMS(ch, nc, 2 * r), err,
                        "%supsample_layers.%d.0.convtr.convtr.weight", P, i);
                    BIAS(nc, "%supsample_layers.%d.0.convtr.convtr.bias", P, i);
                } else {
                    ADD(VX_BF16, 1.0f / sqrtf((float)(ch * 2 * r)), VX_DIMS(nc, ch, 2 * r), err,
                        "%sdownsample_layers.%d.0.conv.conv.weight", P, i);
                    BIAS(nc, "%sdownsample_layers.%d.0.conv.conv.bias", P, i);
                }
                ch = nc;
            }
            const int depth = dec ? cfg->dec_depths[i] : cfg->enc_depths[i];
            for (int j = 0; j < depth; j++) {
                const char *nn[2] = {"norm", "ffn_norm"};
                for (int q = 0; q < 2; q++) {
                    ADD(VX_F32, -1.0f, VX_DIMS(ch), err, "%sstages.%d.%d.%s.weight", P, i, j, nn[q]);
                    if (ln) ADD(VX_F32, 0.02f, VX_DIMS(ch), err, "%sstages.%d.%d.%s.bias", P, i, j, nn[q]);
                }
                ADD(VX_F32, 0.3f, VX_DIMS(ch, dwm ? 1 : ch, 7), err, "%sstages.%d.%d.mixer.conv.conv.conv.weight", P,
                    i, j);
                BIAS(ch, "%sstages.%d.%d.mixer.conv.conv.conv.bias", P, i, j);
                if (cfg->layer_scale_init_value > 0) {
                    ADD(VX_F32, 0.1f, VX_DIMS(ch), err, "%sstages.%d.%d.gamma", P, i, j);
                    ADD(VX_F32, 0.1f, VX_DIMS(ch), err, "%sstages.%d.%d.ffn_gamma", P, i, j);
                }
                ADD(VX_BF16, 1.0f / sqrtf((float)ch), VX_DIMS(4 * ch, ch), err, "%sstages.%d.%d.ffn.linear1.weight",
                    P, i, j);
                BIAS(4 * ch, "%sstages.%d.%d.ffn.linear1.bias", P, i, j);
                ADD(VX_BF16, 0.5f / sqrtf((float)ch), VX_DIMS(ch, 4 * ch), err, "%sstages.%d.%d.ffn.linear2.weight",
                    P, i, j);
                BIAS(ch, "%sstages.%d.%d.ffn.linear2.bias", P, i, j);
            }
        }
        if (!cfg->disable_last_norm && (ln || cfg->layernorm_elementwise_affine)) {
            ADD(VX_F32, -1.0f, VX_DIMS(ch), err, "%snorm.weight", P);
            if (ln) ADD(VX_F32, 0.02f, VX_DIMS(ch), err, "%snorm.bias", P);
        }
        const int64_t oc = dec ? cfg->channels : cfg->vae_dim;
        ADD(VX_BF16, 1.0f / sqrtf((float)(ch * 7)), VX_DIMS(oc, ch, 7), err, "%shead.conv.conv.weight", P);
        BIAS(oc, "%shead.conv.conv.bias", P);
    }
#undef BIAS
#undef ADD
    vx_weights *w = NULL;
    if (st == VOCIS_OK) st = vx_synth_open(s, &w, err);
    vx_synth_free(s);
    if (st != VOCIS_OK) return st;
    vx_weights_set_precision(w, precision); /* the load-time policy of a real folder */
    if ((st = vx_vv_vae_load(w, "vae.", cfg, with_decoder, out, err)) != VOCIS_OK) {
        vx_weights_close(w);
        return st;
    }
    (*out)->own_w = w;
    return VOCIS_OK;
}

int vx_vv_vae_hop(const vx_vv_vae *v) { return v->cfg.hop; }
int vx_vv_vae_dim(const vx_vv_vae *v) { return v->cfg.vae_dim; }
int vx_vv_vae_has_decoder(const vx_vv_vae *v) { return v->has_dec; }
int vx_vv_vae_has_encoder(const vx_vv_vae *v) { return v->has_enc; }

/* ------------------------------------------------------------------ scratch */

static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }
static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t tile_rows(int64_t row) { return max64(1, COL_BUDGET / max64(row, 1)); }
static int64_t ffn_rows(int64_t h) { return max64(1, FFN_BUDGET / max64(h, 1)); }

static int64_t need_conv(const conv *c, int64_t T, scratch *S) {
    const int64_t pad = (c->s - T % c->s) % c->s, To = (T + pad) / c->s;
    S->n_act = max64(S->n_act, max64(T * c->cin, To * c->cout));
    S->n_xin = max64(S->n_xin, (c->k - c->s + T + pad) * c->cin);
    if (!c->dw) S->n_col = max64(S->n_col, min64(To, tile_rows(c->k * c->cin)) * c->k * c->cin);
    return To;
}

/* Sizes of every buffer a chunk of T input steps (samples / frames) needs. */
static void need_net(const net *n, int64_t T, scratch *S) {
    T = need_conv(&n->stem, T, S);
    for (int i = 0; i < n->nst; i++) {
        if (i > 0) {
            if (n->dec) {
                const convtr *u = &n->up[i];
                S->n_act = max64(S->n_act, max64(T * u->cin, (T * u->s + u->k - u->s) * u->cout));
                S->n_col = max64(S->n_col, min64(T, tile_rows(u->k * u->cout)) * u->k * u->cout);
                T *= u->s;
            } else {
                T = need_conv(&n->down[i], T, S);
            }
        }
        for (int j = 0; j < n->depth[i]; j++) {
            const block *b = &n->blk[i][j];
            need_conv(&b->mix, T, S);
            const int64_t r = min64(T, ffn_rows(b->h));
            S->n_fu = max64(S->n_fu, r * b->d);
            S->n_fh = max64(S->n_fh, r * b->h);
        }
    }
    need_conv(&n->head, T, S);
}

static void scratch_free(scratch *S) {
    free(S->a), free(S->b), free(S->xin), free(S->col), free(S->fu), free(S->fh), free(S->fo);
    memset(S, 0, sizeof *S);
}

/* Scratch for chunks of `frames` frames through the encoder and (if present) the decoder. */
static vocis_status scratch_new(const vx_vv_vae *v, int64_t frames, scratch *S, vx_err *err) {
    memset(S, 0, sizeof *S);
    if (v->has_enc) need_net(&v->enc, frames * v->cfg.hop, S);
    if (v->has_dec) need_net(&v->dec, frames, S);
#define AL(p, n) (p = malloc((size_t)max64(n, 1) * sizeof(float)))
    if (!AL(S->a, S->n_act) || !AL(S->b, S->n_act) || !AL(S->xin, S->n_xin) || !AL(S->col, S->n_col) ||
        !AL(S->fu, S->n_fu) || !AL(S->fh, S->n_fh) || !AL(S->fo, S->n_fu)) {
        scratch_free(S);
        return vx_fail(err, VOCIS_E_NOMEM, "vibevoice vae: out of memory (chunk scratch)");
    }
#undef AL
    return VOCIS_OK;
}

/* ------------------------------------------------------------------ layers */

/* Rows per chunk when `rows` rows of `cost` elements each go to the pool:
 * many small chunks, none under PAR_MIN elements. Every loop below computes
 * each output row alone, so the split never changes a bit. */
static int64_t par_rows(int64_t rows, int64_t cost, int nthreads) {
    if (nthreads <= 1) return max64(rows, 1);
    return max64(vx_pool_chunk_items(rows, 1, nthreads), max64(1, PAR_MIN / max64(cost, 1)));
}

/* A row range of an element-wise loop: the rows [c·per, min(rows, (c+1)·per)). */
typedef struct rows_job {
    int64_t rows, per;
} rows_job;
static void job_span(const rows_job *j, int64_t c, int64_t *a, int64_t *b) {
    *a = c * j->per;
    *b = min64(j->rows, *a + j->per);
}
static void run_rows(rows_job *j, int64_t rows, int64_t cost, int nthreads, vx_pool_fn fn) {
    j->rows = rows;
    j->per = par_rows(rows, cost, nthreads);
    vx_pool_run(nthreads, (rows + j->per - 1) / j->per, fn, j);
}

/* Rows of y[rows][d] = norm(x) (LayerNorm or RMSNorm as the tokenizer says). */
static void norm_span(const vx_vv_vae *v, const float *w, const float *b, const float *x, float *y, int64_t r0,
                      int64_t r1, int64_t d) {
    if (v->ln) vx_layernorm(y + r0 * d, x + r0 * d, w, b, r1 - r0, d, v->eps);
    else vx_rmsnorm(y + r0 * d, x + r0 * d, w, r1 - r0, d, v->eps);
}

typedef struct norm_job {
    rows_job r; /* first: the pool's ctx */
    const vx_vv_vae *v;
    const float *w, *b, *x;
    float *y;
    int64_t d;
} norm_job;
static void norm_chunk(void *ctx, int64_t c) {
    const norm_job *j = ctx;
    int64_t a, b;
    job_span(&j->r, c, &a, &b);
    norm_span(j->v, j->w, j->b, j->x, j->y, a, b, j->d);
}

static void norm_rows(const vx_vv_vae *v, const float *w, const float *b, const float *x, float *y, int64_t rows,
                      int64_t d, int nthreads) {
    norm_job j = {{0, 0}, v, w, b, x, y, d};
    run_rows(&j.r, rows, d, nthreads, norm_chunk);
}

/* Input rows of conv c for T new steps: the state (k − s rows) is copied in
 * front and the zero pad behind; the caller writes the T rows at the returned
 * pointer. */
static float *conv_in(const conv *c, const float *st, int64_t T, scratch *S) {
    const int64_t ctx = c->k - c->s, pad = (c->s - T % c->s) % c->s;
    float *xin = S->xin;
    if (ctx) memcpy(xin, st, (size_t)(ctx * c->cin) * sizeof(float));
    if (pad) memset(xin + (ctx + T) * c->cin, 0, (size_t)(pad * c->cin) * sizeof(float));
    return xin + ctx * c->cin;
}

/* Depthwise conv (any stride) of the rows prepared by conv_in: output rows [a, b). */
typedef struct dw_job {
    rows_job r;
    const conv *c;
    const float *xin;
    float *y;
} dw_job;
static void dw_chunk(void *ctx, int64_t q) {
    const dw_job *j = ctx;
    const conv *c = j->c;
    const int64_t co = c->cout, ci = c->cin, K = c->k, s = c->s;
    const float *w = c->dww, *bias = c->b;
    int64_t t0, t1;
    job_span(&j->r, q, &t0, &t1);
    for (int64_t t = t0; t < t1; t++) {
        float *restrict yr = j->y + t * co;
        if (bias) memcpy(yr, bias, (size_t)co * sizeof(float));
        else memset(yr, 0, (size_t)co * sizeof(float));
        for (int64_t k = 0; k < K; k++) {
            const float *restrict xr = j->xin + (t * s + k) * ci, *restrict wr = w + k * ci;
            for (int64_t o = 0; o < co; o++) yr[o] += wr[o] * xr[o];
        }
    }
}

/* y[To][cout] from the rows prepared by conv_in; the state becomes the last
 * k − s rows of [state; x] (the pad excluded). Returns To. */
static int64_t conv_run(const conv *c, float *st, int64_t T, float *y, scratch *S, int nthreads) {
    const int64_t ctx = c->k - c->s, pad = (c->s - T % c->s) % c->s, To = (T + pad) / c->s;
    const int64_t ci = c->cin, co = c->cout, K = c->k, s = c->s;
    const float *xin = S->xin;
    if (ctx) memmove(st, xin + T * ci, (size_t)(ctx * ci) * sizeof(float));
    if (c->dw) {
        dw_job j = {{0, 0}, c, xin, y};
        run_rows(&j.r, To, ci * K, nthreads, dw_chunk);
        return To;
    }
    const int64_t row = K * ci, R = tile_rows(row);
    for (int64_t t0 = 0; t0 < To; t0 += R) {
        const int64_t n = min64(R, To - t0);
        for (int64_t j = 0; j < n; j++)
            memcpy(S->col + j * row, xin + (t0 + j) * s * ci, (size_t)row * sizeof(float));
        vx_linear(y + t0 * co, S->col, n, &c->w, c->b, nthreads);
    }
    return To;
}

/* The transposed conv in three parts (convtr_run; the batched steps run the product apart):
 * y starts as the carried tail and zeros, n rows of col[n][k·cout] (the product of input rows
 * t0 .. t0 + n) are overlap-added, then the new tail is carried and the bias added. */
static void convtr_begin(const convtr *c, const float *st, int64_t T, float *y) {
    const int64_t co = c->cout, tail = c->k - c->s;
    if (tail) memcpy(y, st, (size_t)(tail * co) * sizeof(float));
    memset(y + tail * co, 0, (size_t)(T * c->s * co) * sizeof(float));
}

static void convtr_add(const convtr *c, const float *col, int64_t t0, int64_t n, float *y) {
    const int64_t co = c->cout, K = c->k, s = c->s, row = K * co;
    /* overlap-add: col[j][tap·co + o] -> y[(t0 + j)·s + tap][o] */
    for (int64_t j = 0; j < n; j++)
        for (int64_t tap = 0; tap < K; tap++) {
            float *restrict yr = y + ((t0 + j) * s + tap) * co;
            const float *restrict cr = col + j * row + tap * co;
            for (int64_t o = 0; o < co; o++) yr[o] += cr[o];
        }
}

static void convtr_end(const convtr *c, float *st, int64_t T, float *y) {
    const int64_t co = c->cout, tail = c->k - c->s, To = T * c->s;
    if (tail) memcpy(st, y + To * co, (size_t)(tail * co) * sizeof(float));
    if (c->b)
        for (int64_t t = 0; t < To; t++) {
            float *restrict yr = y + t * co;
            for (int64_t o = 0; o < co; o++) yr[o] += c->b[o];
        }
}

/* y[T·s][cout] (the buffer holds T·s + k − s rows) from x[T][cin]. */
static int64_t convtr_run(const convtr *c, float *st, const float *x, int64_t T, float *y, scratch *S,
                          int nthreads) {
    const int64_t ci = c->cin, R = tile_rows(c->k * c->cout);
    convtr_begin(c, st, T, y);
    for (int64_t t0 = 0; t0 < T; t0 += R) {
        const int64_t n = min64(R, T - t0);
        vx_linear(S->col, x + t0 * ci, n, &c->w, NULL, nthreads);
        convtr_add(c, S->col, t0, n, y);
    }
    convtr_end(c, st, T, y);
    return T * c->s;
}

/* x[T][d] += gamma ⊙ y (gamma NULL: += y) */
static void residual_span(float *x, const float *y, const float *gamma, int64_t t0, int64_t t1, int64_t d) {
    for (int64_t t = t0; t < t1; t++) {
        float *restrict xr = x + t * d;
        const float *restrict yr = y + t * d;
        if (gamma)
            for (int64_t c = 0; c < d; c++) xr[c] += gamma[c] * yr[c];
        else
            for (int64_t c = 0; c < d; c++) xr[c] += yr[c];
    }
}

typedef struct residual_job {
    rows_job r;
    float *x;
    const float *y, *gamma;
    int64_t d;
} residual_job;
static void residual_chunk(void *ctx, int64_t q) {
    const residual_job *j = ctx;
    int64_t a, b;
    job_span(&j->r, q, &a, &b);
    residual_span(j->x, j->y, j->gamma, a, b, j->d);
}

static void residual(float *x, const float *y, const float *gamma, int64_t T, int64_t d, int nthreads) {
    residual_job j = {{0, 0}, x, y, gamma, d};
    run_rows(&j.r, T, d, nthreads, residual_chunk);
}

/* The depthwise stride-1 mixer fused with its residual:
 * x[t][c] += gamma[c] · (b[c] + Σ_j w[j][c] · rows[t + j][c]), rows from conv_in. */
typedef struct dw_residual_job {
    rows_job r;
    const conv *c;
    const float *xin, *gamma;
    float *x;
} dw_residual_job;
static void dw_residual_chunk(void *ctx, int64_t q) {
    enum { CB = 64 };
    const dw_residual_job *j = ctx;
    const int64_t d = j->c->cin, K = j->c->k;
    const float *xin = j->xin, *w = j->c->dww, *bias = j->c->b, *gamma = j->gamma;
    float *x = j->x;
    float acc[CB];
    int64_t t0, t1;
    job_span(&j->r, q, &t0, &t1);
    for (int64_t t = t0; t < t1; t++)
        for (int64_t c0 = 0; c0 < d; c0 += CB) {
            const int64_t n = min64(CB, d - c0);
            for (int64_t o = 0; o < n; o++) acc[o] = bias ? bias[c0 + o] : 0.0f;
            for (int64_t k = 0; k < K; k++) {
                const float *restrict xr = xin + (t + k) * d + c0, *restrict wr = w + k * d + c0;
                for (int64_t o = 0; o < n; o++) acc[o] += wr[o] * xr[o];
            }
            float *restrict xo = x + t * d + c0;
            if (gamma)
                for (int64_t o = 0; o < n; o++) xo[o] += gamma[c0 + o] * acc[o];
            else
                for (int64_t o = 0; o < n; o++) xo[o] += acc[o];
        }
}

static void dw_residual(const conv *c, float *st, int64_t T, float *x, const float *gamma, scratch *S,
                        int nthreads) {
    const int64_t d = c->cin, ctx = c->k - 1;
    if (ctx) memmove(st, S->xin + T * d, (size_t)(ctx * d) * sizeof(float));
    dw_residual_job j = {{0, 0}, c, S->xin, gamma, x};
    run_rows(&j.r, T, d * c->k, nthreads, dw_residual_chunk);
}

typedef struct gelu_job {
    rows_job r;
    float *x;
    int64_t d;
} gelu_job;
static void gelu_chunk(void *ctx, int64_t q) {
    const gelu_job *j = ctx;
    int64_t a, b;
    job_span(&j->r, q, &a, &b);
    vx_gelu(j->x + a * j->d, (b - a) * j->d);
}

/* GELU of x[rows][d] */
static void gelu_par(float *x, int64_t rows, int64_t d, int nthreads) {
    gelu_job j = {{0, 0}, x, d};
    run_rows(&j.r, rows, d, nthreads, gelu_chunk);
}

/* The FFN of many rows in row chunks on the pool, each chunk one thread's
 * ffn_norm -> linear1 -> GELU -> linear2 -> residual on its rows, its
 * activations staying in cache and the threads meeting once per block
 * instead of five times. Chunks of at least FFN_CHUNK rows (the packed GEMM
 * repacks W per call, a cost of ~1/rows of the products), their bounds a
 * function of the row count alone: the same bits at any thread count. */
#define FFN_CHUNK 128
typedef struct ffn_job {
    const vx_vv_vae *v;
    const block *b;
    float *x; /* [n][d] */
    scratch *S;
    int64_t n, per, chunks;
} ffn_job;
static void ffn_chunk(void *ctx, int64_t c) {
    const ffn_job *j = ctx;
    const block *b = j->b;
    const int64_t d = b->d, h = b->h, r0 = c * j->per, r1 = c == j->chunks - 1 ? j->n : r0 + j->per, m = r1 - r0;
    float *fu = j->S->fu + r0 * d, *fh = j->S->fh + r0 * h, *fo = j->S->fo + r0 * d;
    norm_span(j->v, b->fnw, b->fnb, j->x, j->S->fu, r0, r1, d);
    vx_linear(fh, fu, m, &b->l1, b->b1, 1); /* [m, d] -> [m, h] */
    vx_gelu(fh, m * h);
    vx_linear(fo, fh, m, &b->l2, b->b2, 1); /* [m, h] -> [m, d] */
    residual_span(j->x, j->S->fo, b->fgamma, r0, r1, d);
}

/* FFN residual of rows x[n][d] (n within the scratch's FFN rows). */
static void ffn_run(const vx_vv_vae *v, const block *b, float *x, int64_t n, scratch *S, int nthreads) {
    if (n >= 2 * FFN_CHUNK) {
        /* the last chunk takes the remainder: every chunk >= FFN_CHUNK rows */
        ffn_job j = {v, b, x, S, n, 0, n / FFN_CHUNK};
        j.per = n / j.chunks;
        vx_pool_run(nthreads, j.chunks, ffn_chunk, &j);
        return;
    }
    norm_rows(v, b->fnw, b->fnb, x, S->fu, n, b->d, nthreads);
    vx_linear(S->fh, S->fu, n, &b->l1, b->b1, nthreads);
    gelu_par(S->fh, n, b->h, nthreads);
    vx_linear(S->fo, S->fh, n, &b->l2, b->b2, nthreads);
    residual(x, S->fo, b->fgamma, n, b->d, nthreads);
}

/* Block1D in place on x[T][d]; y: scratch of T·d floats. */
static void block_run(const vx_vv_vae *v, const block *b, float *st, float *x, float *y, int64_t T, scratch *S,
                      int nthreads) {
    const int64_t d = b->d;
    float *p = conv_in(&b->mix, st + b->mix.st, T, S);
    norm_rows(v, b->nw, b->nb, x, p, T, d, nthreads);
    if (b->mix.dw && b->mix.s == 1) {
        dw_residual(&b->mix, st + b->mix.st, T, x, b->gamma, S, nthreads);
    } else {
        conv_run(&b->mix, st + b->mix.st, T, y, S, nthreads);
        residual(x, y, b->gamma, T, d, nthreads);
    }
    const int64_t R = ffn_rows(b->h);
    for (int64_t t0 = 0; t0 < T; t0 += R) ffn_run(v, b, x + t0 * d, min64(R, T - t0), S, nthreads);
}

static vocis_status probe_put(const vx_vv_vae_probe *pr, const char *name, const float *x, int64_t T, int64_t C,
                              vx_err *err) {
    int64_t keep = pr->keep ? pr->keep(pr->ctx, name, T) : T;
    if (keep < 0 || keep > T) keep = T;
    float *buf = malloc((size_t)max64(C * keep, 1) * sizeof(float));
    if (!buf) return vx_fail(err, VOCIS_E_NOMEM, "vibevoice vae: out of memory (%s)", name);
    for (int64_t c = 0; c < C; c++)
        for (int64_t t = 0; t < keep; t++) buf[c * keep + t] = x[t * C + c]; /* [T][C] -> [C][keep] */
    vocis_status st = vx_st_writer_add(pr->out, name, VX_F32, VX_DIMS(1, C, keep), buf, err);
    free(buf);
    return st;
}

/* One chunk of T input steps through net n with state st: out[To][out_ch]. */
static vocis_status net_run(const vx_vv_vae *v, const net *n, float *st, const float *in, int64_t T, float *out,
                            int64_t *To, scratch *S, int nthreads, const vx_vv_vae_probe *pr, vx_err *err) {
    char name[64];
    float *a = S->a, *b = S->b, *t;
    float *p = conv_in(&n->stem, st + n->stem.st, T, S);
    memcpy(p, in, (size_t)(T * n->in_ch) * sizeof(float));
    T = conv_run(&n->stem, st + n->stem.st, T, a, S, nthreads);
    if (pr) VX_TRY(probe_put(pr, "downsample_0_out", a, T, n->stem.cout, err));
    for (int i = 0; i < n->nst; i++) {
        const int64_t d = n->ch[i];
        if (i > 0) {
            if (n->dec) {
                T = convtr_run(&n->up[i], st + n->up[i].st, a, T, b, S, nthreads);
            } else {
                const conv *c = &n->down[i];
                p = conv_in(c, st + c->st, T, S);
                memcpy(p, a, (size_t)(T * c->cin) * sizeof(float));
                T = conv_run(c, st + c->st, T, b, S, nthreads);
            }
            t = a, a = b, b = t;
            if (pr) {
                snprintf(name, sizeof name, "downsample_%d_out", i);
                VX_TRY(probe_put(pr, name, a, T, d, err));
            }
        }
        for (int j = 0; j < n->depth[i]; j++) block_run(v, &n->blk[i][j], st, a, b, T, S, nthreads);
        if (pr) {
            snprintf(name, sizeof name, "stage_%d_out", i);
            VX_TRY(probe_put(pr, name, a, T, d, err));
        }
    }
    const int64_t d = n->ch[n->nst - 1];
    if (n->has_norm) norm_rows(v, n->nw, n->nb, a, a, T, d, nthreads);
    p = conv_in(&n->head, st + n->head.st, T, S);
    memcpy(p, a, (size_t)(T * d) * sizeof(float));
    T = conv_run(&n->head, st + n->head.st, T, out, S, nthreads);
    if (pr) VX_TRY(probe_put(pr, "head_out", out, T, n->out_ch, err));
    *To = T;
    return VOCIS_OK;
}

/* ------------------------------------------------------------------ several streams at once */

/* One step of n streams (continuous batching): activations [n][T][C], each layer's state per
 * stream. A layer with fewer than STACK_ROWS rows per stream (the deep, wide layers of a one-frame
 * step, whose cost is reading their weights) runs every stream's rows in ONE row-exact product
 * (vx_linear_rows: a row's bits do not depend on the others, and a single stream's few-row
 * vx_linear computes the same bits); longer layers run per stream exactly as net_run. */
#define STACK_ROWS 32

typedef struct many {
    const vx_vv_vae *v;
    int n;
    vx_vv_vae_stream *const *ss;
    int dec;
    float *col, *fu, *fh; /* stacked products' buffers, grown on demand */
    int64_t ncol, nfu, nfh;
} many;

static float *many_buf(float **p, int64_t *cap, int64_t n) {
    if (n > *cap) {
        free(*p);
        *cap = 0;
        if (!(*p = malloc((size_t)n * sizeof(float)))) return NULL;
        *cap = n;
    }
    return *p;
}

static float *many_state(const many *M, int i) { return M->dec ? M->ss[i]->dst : M->ss[i]->est; }

/* conv c on x[n][T][cin] -> y[n][To][cout]; returns To (0: out of memory) */
static int64_t conv_many(const conv *c, many *M, const float *x, int64_t T, float *y, int nthreads) {
    const int64_t ctx = c->k - c->s, pad = (c->s - T % c->s) % c->s, To = (T + pad) / c->s;
    const int64_t ci = c->cin, co = c->cout, row = c->k * ci;
    const int stack = !c->dw && To < STACK_ROWS;
    float *col = stack ? many_buf(&M->col, &M->ncol, (int64_t)M->n * To * row) : NULL;
    if (stack && !col) return 0;
    for (int i = 0; i < M->n; i++) {
        scratch *S = &M->ss[i]->S;
        float *st = many_state(M, i) + c->st;
        memcpy(conv_in(c, st, T, S), x + i * T * ci, (size_t)(T * ci) * sizeof(float));
        if (!stack) {
            conv_run(c, st, T, y + i * To * co, S, nthreads);
            continue;
        }
        if (ctx) memmove(st, S->xin + T * ci, (size_t)(ctx * ci) * sizeof(float));
        for (int64_t j = 0; j < To; j++)
            memcpy(col + (i * To + j) * row, S->xin + j * c->s * ci, (size_t)row * sizeof(float));
    }
    if (stack) vx_linear_rows(y, col, M->n * To, &c->w, c->b, nthreads);
    return To;
}

/* transposed conv on x[n][T][cin] -> y[n][T·s][cout]; returns T·s (0: out of memory) */
static int64_t convtr_many(const convtr *c, many *M, const float *x, int64_t T, float *y, int nthreads) {
    const int64_t ci = c->cin, co = c->cout, row = c->k * co, To = T * c->s;
    const int stack = T < STACK_ROWS;
    float *col = stack ? many_buf(&M->col, &M->ncol, (int64_t)M->n * T * row) : NULL;
    if (stack && !col) return 0;
    if (stack) vx_linear_rows(col, x, M->n * T, &c->w, NULL, nthreads);
    for (int i = 0; i < M->n; i++) {
        scratch *S = &M->ss[i]->S;
        float *st = many_state(M, i) + c->st, *yi = S->a; /* T·s + k − s rows */
        if (stack) {
            convtr_begin(c, st, T, yi);
            convtr_add(c, col + i * T * row, 0, T, yi);
            convtr_end(c, st, T, yi);
        } else {
            convtr_run(c, st, x + i * T * ci, T, yi, S, nthreads);
        }
        memcpy(y + i * To * co, yi, (size_t)(To * co) * sizeof(float));
    }
    return To;
}

/* Block1D in place on x[n][T][d]; y: [n][T][d] scratch. 0: out of memory. */
static int block_many(const block *b, many *M, float *x, float *y, int64_t T, int nthreads) {
    const vx_vv_vae *v = M->v;
    const int64_t d = b->d, h = b->h, R = (int64_t)M->n * T;
    for (int i = 0; i < M->n; i++) {
        scratch *S = &M->ss[i]->S;
        float *st = many_state(M, i) + b->mix.st, *xi = x + i * T * d;
        norm_rows(v, b->nw, b->nb, xi, conv_in(&b->mix, st, T, S), T, d, nthreads);
        if (b->mix.dw && b->mix.s == 1) {
            dw_residual(&b->mix, st, T, xi, b->gamma, S, nthreads);
        } else {
            conv_run(&b->mix, st, T, y + i * T * d, S, nthreads);
            residual(xi, y + i * T * d, b->gamma, T, d, nthreads);
        }
    }
    if (T >= STACK_ROWS) {
        const int64_t F = ffn_rows(h);
        for (int i = 0; i < M->n; i++)
            for (int64_t t0 = 0; t0 < T; t0 += F)
                ffn_run(v, b, x + (i * T + t0) * d, min64(F, T - t0), &M->ss[i]->S, nthreads);
        return 1;
    }
    float *fu = many_buf(&M->fu, &M->nfu, 2 * R * d), *fh = many_buf(&M->fh, &M->nfh, R * h);
    if (!fu || !fh) return 0;
    float *fo = fu + R * d;
    norm_rows(v, b->fnw, b->fnb, x, fu, R, d, nthreads);
    vx_linear_rows(fh, fu, R, &b->l1, b->b1, nthreads);
    gelu_par(fh, R, h, nthreads);
    vx_linear_rows(fo, fh, R, &b->l2, b->b2, nthreads);
    residual(x, fo, b->fgamma, R, d, nthreads);
    return 1;
}

/* net_run of one step (T input steps) of every stream: out[i][To][out_ch] from in[i][T][in_ch]. */
static vocis_status net_run_many(many *M, const net *n, const float *const *in, int64_t T, float *const *out,
                                 int nthreads, vx_err *err) {
    const int64_t act = M->ss[0]->S.n_act;
    float *base = malloc((size_t)(2 * M->n * act) * sizeof(float)), *a = base, *b = base + M->n * act, *t;
    if (!base) return vx_fail(err, VOCIS_E_NOMEM, "vibevoice vae: out of memory (%d streams)", M->n);
    for (int i = 0; i < M->n; i++) memcpy(a + i * T * n->in_ch, in[i], (size_t)(T * n->in_ch) * sizeof(float));
    int ok = (T = conv_many(&n->stem, M, a, T, b, nthreads)) > 0;
    t = a, a = b, b = t;
    for (int i = 0; ok && i < n->nst; i++) {
        if (i > 0) {
            T = n->dec ? convtr_many(&n->up[i], M, a, T, b, nthreads) : conv_many(&n->down[i], M, a, T, b, nthreads);
            ok = T > 0;
            t = a, a = b, b = t;
        }
        for (int j = 0; ok && j < n->depth[i]; j++) ok = block_many(&n->blk[i][j], M, a, b, T, nthreads);
    }
    if (ok && n->has_norm) norm_rows(M->v, n->nw, n->nb, a, a, M->n * T, n->ch[n->nst - 1], nthreads);
    if (ok) ok = (T = conv_many(&n->head, M, a, T, b, nthreads)) > 0;
    for (int i = 0; ok && i < M->n; i++) memcpy(out[i], b + i * T * n->out_ch, (size_t)(T * n->out_ch) * sizeof(float));
    free(base);
    return ok ? VOCIS_OK : vx_fail(err, VOCIS_E_NOMEM, "vibevoice vae: out of memory (%d streams)", M->n);
}

static vocis_status steps_many(const vx_vv_vae *v, vx_vv_vae_stream *const *s, int n, int dec,
                               const float *const *in, float *const *out, int nthreads, vx_err *err) {
    const char *what = dec ? "decode" : "encode";
    if (dec ? !v->has_dec : !v->has_enc)
        return vx_fail(err, VOCIS_E_ARG, "vibevoice vae %s: this tokenizer was loaded without an %s", what,
                       dec ? "decoder" : "encoder");
    for (int i = 0; i < n; i++)
        if (s[i]->v != v) return vx_fail(err, VOCIS_E_ARG, "vibevoice vae: stream belongs to another tokenizer");
    if (n <= 0) return VOCIS_OK;
    many M = {.v = v, .n = n, .ss = s, .dec = dec};
    vocis_status st = net_run_many(&M, dec ? &v->dec : &v->enc, in, dec ? 1 : v->cfg.hop, out,
                                   nthreads < 1 ? 1 : nthreads, err);
    free(M.col), free(M.fu), free(M.fh);
    return st;
}

vocis_status vx_vv_vae_decode_steps(const vx_vv_vae *v, vx_vv_vae_stream *const *s, int n, const float *const *latent,
                                    float *const *audio, int nthreads, vx_err *err) {
    return steps_many(v, s, n, 1, latent, audio, nthreads, err);
}

vocis_status vx_vv_vae_encode_steps(const vx_vv_vae *v, vx_vv_vae_stream *const *s, int n, const float *const *audio,
                                    float *const *mean, int nthreads, vx_err *err) {
    return steps_many(v, s, n, 0, audio, mean, nthreads, err);
}

/* ------------------------------------------------------------------ public */

vocis_status vx_vv_vae_encode(const vx_vv_vae *v, const float *audio, int64_t B, int64_t L, float *mean,
                              int nthreads, const vx_vv_vae_probe *debug, vx_err *err) {
    if (!v->has_enc) return vx_fail(err, VOCIS_E_ARG, "vibevoice vae encode: this tokenizer was loaded without an encoder");
    if (B < 1 || L < 1)
        return vx_fail(err, VOCIS_E_INVALID, "vibevoice vae encode: empty audio (%lld rows of %lld samples)",
                       (long long)B, (long long)L);
    if (nthreads < 1) nthreads = 1;
    const int64_t hop = v->cfg.hop, F = (L + hop - 1) / hop, vd = v->cfg.vae_dim;
    /* the probes need whole tensors: one chunk then */
    const int64_t CF = debug ? F : min64(F, WHOLE_CHUNK);
    scratch S;
    VX_TRY(scratch_new(v, CF, &S, err));
    float *st = malloc((size_t)max64(v->enc.st_len, 1) * sizeof(float));
    if (!st) {
        scratch_free(&S);
        return vx_fail(err, VOCIS_E_NOMEM, "vibevoice vae: out of memory");
    }
    vocis_status rc = VOCIS_OK;
    for (int64_t b = 0; b < B && rc == VOCIS_OK; b++) {
        memset(st, 0, (size_t)v->enc.st_len * sizeof(float));
        for (int64_t f0 = 0; f0 < F && rc == VOCIS_OK; f0 += CF) {
            const int64_t nf = min64(CF, F - f0), ns = min64(nf * hop, L - f0 * hop);
            int64_t to = 0;
            rc = net_run(v, &v->enc, st, audio + b * L + f0 * hop, ns, mean + (b * F + f0) * vd, &to, &S, nthreads,
                         b == 0 ? debug : NULL, err);
            if (rc == VOCIS_OK && to != nf)
                rc = vx_fail(err, VOCIS_E_INTERNAL, "vibevoice vae encode: %lld frames for a chunk of %lld",
                             (long long)to, (long long)nf);
        }
    }
    free(st);
    scratch_free(&S);
    return rc;
}

vocis_status vx_vv_vae_decode(const vx_vv_vae *v, const float *latents, int64_t F, float *audio, int nthreads,
                              vx_err *err) {
    if (!v->has_dec) return vx_fail(err, VOCIS_E_ARG, "vibevoice vae decode: this tokenizer was loaded without a decoder");
    if (F < 1) return vx_fail(err, VOCIS_E_INVALID, "vibevoice vae decode: no latent frames");
    if (nthreads < 1) nthreads = 1;
    const int64_t hop = v->cfg.hop, vd = v->cfg.vae_dim, CF = min64(F, WHOLE_CHUNK);
    scratch S;
    VX_TRY(scratch_new(v, CF, &S, err));
    float *st = calloc((size_t)max64(v->dec.st_len, 1), sizeof(float));
    if (!st) {
        scratch_free(&S);
        return vx_fail(err, VOCIS_E_NOMEM, "vibevoice vae: out of memory");
    }
    vocis_status rc = VOCIS_OK;
    for (int64_t f0 = 0; f0 < F && rc == VOCIS_OK; f0 += CF) {
        const int64_t nf = min64(CF, F - f0);
        int64_t to = 0;
        rc = net_run(v, &v->dec, st, latents + f0 * vd, nf, audio + f0 * hop, &to, &S, nthreads, NULL, err);
        if (rc == VOCIS_OK && to != nf * hop)
            rc = vx_fail(err, VOCIS_E_INTERNAL, "vibevoice vae decode: %lld samples for %lld frames", (long long)to,
                         (long long)nf);
    }
    free(st);
    scratch_free(&S);
    return rc;
}

void vx_vv_vae_sample(const vx_vv_tokenizer_config *cfg, const float *mean, int64_t B, int64_t n,
                      const float *std_noise, const float *noise, float *out, float *std) {
    const int gauss = strcmp(cfg->std_dist_type, "gaussian") == 0, fix = strcmp(cfg->std_dist_type, "fix") == 0;
    for (int64_t b = 0; b < B; b++) {
        /* upstream: value = fix_std / 0.8 (a float32 tensor op), then randn(B) * value */
        const float sd = gauss ? std_noise[b] * (float)((double)cfg->fix_std / 0.8) : fix ? cfg->fix_std : 0.0f;
        if (std) std[b] = sd;
        for (int64_t i = 0; i < n; i++)
            out[b * n + i] = (gauss || fix) ? mean[b * n + i] + sd * noise[b * n + i] : mean[b * n + i];
    }
}

vocis_status vx_vv_vae_stream_new(const vx_vv_vae *v, vx_vv_vae_stream **out, vx_err *err) {
    *out = NULL;
    vx_vv_vae_stream *s = calloc(1, sizeof *s);
    if (!s) return vx_fail(err, VOCIS_E_NOMEM, "vibevoice vae: out of memory");
    s->v = v;
    s->est = calloc((size_t)max64(v->has_enc ? v->enc.st_len : 1, 1), sizeof(float));
    s->dst = calloc((size_t)max64(v->has_dec ? v->dec.st_len : 1, 1), sizeof(float));
    vocis_status st = VOCIS_OK;
    if (!s->est || !s->dst) st = vx_fail(err, VOCIS_E_NOMEM, "vibevoice vae: out of memory");
    if (st == VOCIS_OK) st = scratch_new(v, 1, &s->S, err);
    if (st != VOCIS_OK) {
        vx_vv_vae_stream_free(s);
        return st;
    }
    *out = s;
    return VOCIS_OK;
}

void vx_vv_vae_stream_reset(vx_vv_vae_stream *s) {
    if (!s) return;
    memset(s->est, 0, (size_t)max64(s->v->has_enc ? s->v->enc.st_len : 1, 1) * sizeof(float));
    memset(s->dst, 0, (size_t)max64(s->v->has_dec ? s->v->dec.st_len : 1, 1) * sizeof(float));
}

void vx_vv_vae_stream_state(vx_vv_vae_stream *s, float **enc, size_t *n_enc, float **dec, size_t *n_dec) {
    *enc = s->est, *dec = s->dst;
    *n_enc = (size_t)max64(s->v->has_enc ? s->v->enc.st_len : 1, 1);
    *n_dec = (size_t)max64(s->v->has_dec ? s->v->dec.st_len : 1, 1);
}

void vx_vv_vae_stream_free(vx_vv_vae_stream *s) {
    if (!s) return;
    free(s->est), free(s->dst);
    scratch_free(&s->S);
    free(s);
}

vocis_status vx_vv_vae_decode_step(const vx_vv_vae *v, vx_vv_vae_stream *s, const float *latent, float *audio,
                                   int nthreads, vx_err *err) {
    if (s->v != v) return vx_fail(err, VOCIS_E_ARG, "vibevoice vae: stream belongs to another tokenizer");
    if (!v->has_dec) return vx_fail(err, VOCIS_E_ARG, "vibevoice vae decode: this tokenizer was loaded without a decoder");
    int64_t to = 0;
    VX_TRY(net_run(v, &v->dec, s->dst, latent, 1, audio, &to, &s->S, nthreads < 1 ? 1 : nthreads, NULL, err));
    return VOCIS_OK;
}

vocis_status vx_vv_vae_encode_step(const vx_vv_vae *v, vx_vv_vae_stream *s, const float *audio, float *mean,
                                   int nthreads, vx_err *err) {
    if (s->v != v) return vx_fail(err, VOCIS_E_ARG, "vibevoice vae: stream belongs to another tokenizer");
    if (!v->has_enc) return vx_fail(err, VOCIS_E_ARG, "vibevoice vae encode: this tokenizer was loaded without an encoder");
    int64_t to = 0;
    VX_TRY(net_run(v, &v->enc, s->est, audio, v->cfg.hop, mean, &to, &s->S, nthreads < 1 ? 1 : nthreads, NULL, err));
    return VOCIS_OK;
}

/* ------------------------------------------------------------------ work counts (benchmarks) */

static double mat_bytes(const vx_mat *m) {
    const double row = m->dtype == VX_Q8 ? (double)vx_q8_row_bytes(m->cols) : (double)m->cols * vx_dtype_size(m->dtype);
    return (double)m->rows * row;
}

/* conv_run on T input rows: returns To; adds its weight and state reads and multiply-adds */
static int64_t conv_work(const conv *c, int64_t T, double *bytes, double *macs) {
    const int64_t To = (T + (c->s - T % c->s) % c->s) / c->s;
    *bytes += (double)((c->k - c->s) * c->cin) * sizeof(float);
    if (c->dw) {
        *bytes += (double)(c->k * c->cin) * sizeof(float);
        *macs += (double)To * (double)(c->k * c->cin);
    } else {
        const int64_t R = tile_rows(c->k * c->cin);
        *bytes += (double)((To + R - 1) / R) * mat_bytes(&c->w);
        *macs += (double)To * (double)c->w.rows * (double)c->w.cols;
    }
    return To;
}

void vx_vv_vae_step_work(const vx_vv_vae *v, int decoder, double *bytes, double *macs, int *bf16) {
    *bytes = *macs = 0;
    *bf16 = 0;
    const net *n = decoder ? &v->dec : &v->enc;
    if (decoder ? !v->has_dec : !v->has_enc) return;
    *bf16 = n->stem.w.act_bf16;
    int64_t T = conv_work(&n->stem, decoder ? 1 : v->cfg.hop, bytes, macs);
    for (int i = 0; i < n->nst; i++) {
        if (i > 0 && n->dec) {
            const convtr *c = &n->up[i];
            const int64_t R = tile_rows(c->k * c->cout);
            *bytes += (double)((T + R - 1) / R) * mat_bytes(&c->w) + (double)((c->k - c->s) * c->cout) * sizeof(float);
            *macs += (double)T * (double)c->w.rows * (double)c->w.cols;
            T *= c->s;
        } else if (i > 0) {
            T = conv_work(&n->down[i], T, bytes, macs);
        }
        for (int j = 0; j < n->depth[i]; j++) {
            const block *b = &n->blk[i][j];
            conv_work(&b->mix, T, bytes, macs);
            const int64_t R = ffn_rows(b->h), tiles = (T + R - 1) / R;
            *bytes += (double)tiles * (mat_bytes(&b->l1) + mat_bytes(&b->l2));
            *macs += (double)T * ((double)b->l1.rows * b->l1.cols + (double)b->l2.rows * b->l2.cols);
        }
    }
    conv_work(&n->head, T, bytes, macs);
}
