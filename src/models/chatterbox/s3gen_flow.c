/* S3Gen flow: weight loading (checkpoint or synthetic), the token → mel
 * driver (speaker affine, encoder, μ, condition, Euler/CFG loop) and the
 * `vocis debug s3gen-flow` stage. The encoder lives in s3gen_encoder.c, the
 * CFM estimator in cfm_estimator.c. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/threads.h"
#include "kernels/ops_extra.h"
#include "kernels/precision.h"
#include "models/chatterbox/s3gen_flow_impl.h"
#include "models/stages.h"
#include "models/synthetic.h"
#include "models/chatterbox/mtl.h"
#include "models/chatterbox/turbo.h"

/* ------------------------------------------------------------------------ */
/* Weight source: a checkpoint (shapes checked) or synthetic random arrays.  */

enum { K_MAT, K_BIAS, K_GAMMA, K_SMALL, K_EMB };

typedef struct ldr {
    const vx_weights *w; /* NULL → synthetic */
    vx_s3gen_flow *f;
    vx_dtype wdt;        /* synthetic matrix dtype */
    uint64_t rng;
    vx_err *err;
    vx_synth *rec;       /* non-NULL: only record each tensor (name, shape) into this synthetic checkpoint */
} ldr;

static vocis_status own(ldr *L, void *p) {
    vx_s3gen_flow *f = L->f;
    if (f->n_owned == f->cap_owned) {
        int cap = f->cap_owned ? 2 * f->cap_owned : 64;
        void **n = realloc(f->owned, (size_t)cap * sizeof *n);
        if (!n) {
            free(p);
            return vx_fail(L->err, VOCIS_E_NOMEM, "out of memory (s3gen flow weights)");
        }
        f->owned = n;
        f->cap_owned = cap;
    }
    f->owned[f->n_owned++] = p;
    return VOCIS_OK;
}

/* Fetch a tensor by name with an exact shape. */
static vocis_status get(ldr *L, vx_tensor *t, int kind, int ndim, const int64_t *shape, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));
static vocis_status get(ldr *L, vx_tensor *t, int kind, int ndim, const int64_t *shape, const char *fmt, ...) {
    char name[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(name, sizeof name, fmt, ap);
    va_end(ap);
    if (L->w) return vx_weights_expect(L->w, VX_FLOATS, ndim, shape, t, L->err, "%s", name);
    /* synthetic */
    memset(t, 0, sizeof *t);
    t->ndim = ndim;
    int64_t n = 1;
    for (int i = 0; i < ndim; i++) n *= (t->shape[i] = shape[i]);
    if (L->rec) { /* matrices in L->wdt, vectors F32; the same scales as below (norm gains: ones) */
        t->dtype = kind == K_MAT || kind == K_EMB ? L->wdt : VX_F32;
        const float a = kind == K_MAT ? sqrtf(3.0f / (float)(n / shape[0])) : kind == K_GAMMA ? -1.0f
                        : kind == K_EMB ? 1.0f : 0.05f;
        return vx_synth_add(L->rec, t->dtype, a, ndim, shape, L->err, "%s", name);
    }
    int vec = kind != K_MAT && kind != K_EMB;
    t->dtype = vec ? VX_F32 : L->wdt;
    void *buf = vx_malloc(L->err, (size_t)n * vx_dtype_size(t->dtype), name);
    if (!buf) return L->err->code;
    VX_TRY(own(L, buf));
    float a = 1.0f;
    if (kind == K_MAT) a = sqrtf(3.0f / (float)(n / shape[0])); /* unit-variance outputs */
    else if (kind == K_BIAS || kind == K_SMALL) a = 0.05f;
    else if (kind == K_GAMMA) a = 0.1f;
    for (int64_t i = 0; i < n; i++) {
        float v = a * vx_rand_pm1(&L->rng) + (kind == K_GAMMA ? 1.0f : 0.0f);
        if (t->dtype == VX_F32) ((float *)buf)[i] = v;
        else if (t->dtype == VX_F16) ((uint16_t *)buf)[i] = vx_f32_to_f16(v);
        else ((uint16_t *)buf)[i] = vx_f32_to_bf16(v);
    }
    t->data = buf;
    return VOCIS_OK;
}

/* A float32 view of a small vector: points into the file when it is F32. */
static vocis_status vec_f32(ldr *L, const vx_tensor *t, const float **out) {
    if (t->dtype == VX_F32) {
        *out = t->data;
        return VOCIS_OK;
    }
    int64_t n = vx_numel(t);
    float *p = vx_malloc(L->err, (size_t)n * sizeof(float), "s3gen flow vector");
    if (!p) return L->err->code;
    VX_TRY(own(L, p));
    vx_to_f32(p, t->data, t->dtype, (size_t)n);
    *out = p;
    return VOCIS_OK;
}

static vocis_status get_vec(ldr *L, const float **out, int kind, int64_t n, const char *prefix, const char *suffix) {
    vx_tensor t;
    VX_TRY(get(L, &t, kind, VX_DIMS(n), "%s%s", prefix, suffix));
    return vec_f32(L, &t, out);
}

/* Linear (k == 0: weight (out, in)) or Conv1d (k ≥ 1: weight (out, in, k)); bias when has_bias. */
static vocis_status get_lin(ldr *L, fl_lin *l, int64_t out, int64_t in, int64_t k, int has_bias, const char *prefix) {
    vx_tensor t;
    if (k == 0) VX_TRY(get(L, &t, K_MAT, VX_DIMS(out, in), "%s.weight", prefix));
    else VX_TRY(get(L, &t, K_MAT, VX_DIMS(out, in, k), "%s.weight", prefix));
    l->w = (vx_mat){t.dtype, out, in * (k ? k : 1), t.data};
    if (L->w) VX_TRY(vx_weights_mat_policy(L->w, &l->w, VX_W_MATRIX, L->err));
    l->k = k ? k : 1;
    l->b = NULL;
    if (has_bias) VX_TRY(get_vec(L, &l->b, K_BIAS, out, prefix, ".bias"));
    return VOCIS_OK;
}

static vocis_status get_norm(ldr *L, fl_norm *n, int64_t dim, const char *prefix) {
    VX_TRY(get_vec(L, &n->w, K_GAMMA, dim, prefix, ".weight"));
    return get_vec(L, &n->b, K_BIAS, dim, prefix, ".bias");
}

static vocis_status load_conformer(ldr *L, fl_conformer *c, const char *p) {
    const vx_s3gen_flow_dims *d = &L->f->d;
    int64_t E = d->enc_dim, H = d->enc_heads, dk = E / H;
    char b[256];
#define PFX(s) (snprintf(b, sizeof b, "%s.%s", p, s), b)
    VX_TRY(get_norm(L, &c->norm_mha, E, PFX("norm_mha")));
    VX_TRY(get_norm(L, &c->norm_ff, E, PFX("norm_ff")));
    VX_TRY(get_lin(L, &c->q, E, E, 0, 1, PFX("self_attn.linear_q")));
    VX_TRY(get_lin(L, &c->k, E, E, 0, 1, PFX("self_attn.linear_k")));
    VX_TRY(get_lin(L, &c->v, E, E, 0, 1, PFX("self_attn.linear_v")));
    VX_TRY(get_lin(L, &c->out, E, E, 0, 1, PFX("self_attn.linear_out")));
    VX_TRY(get_lin(L, &c->pos, E, E, 0, 0, PFX("self_attn.linear_pos")));
    vx_tensor t;
    VX_TRY(get(L, &t, K_SMALL, VX_DIMS(H, dk), "%s.self_attn.pos_bias_u", p));
    VX_TRY(vec_f32(L, &t, &c->pos_u));
    VX_TRY(get(L, &t, K_SMALL, VX_DIMS(H, dk), "%s.self_attn.pos_bias_v", p));
    VX_TRY(vec_f32(L, &t, &c->pos_v));
    VX_TRY(get_lin(L, &c->w1, d->enc_ffn, E, 0, 1, PFX("feed_forward.w_1")));
    VX_TRY(get_lin(L, &c->w2, E, d->enc_ffn, 0, 1, PFX("feed_forward.w_2")));
#undef PFX
    return VOCIS_OK;
}

static vocis_status load_tblock(ldr *L, fl_tblock *tb, const char *p) {
    const vx_s3gen_flow_dims *d = &L->f->d;
    int64_t C = d->dec_ch, HD = d->dec_heads * d->dec_head_dim;
    char b[256];
#define PFX(s) (snprintf(b, sizeof b, "%s.%s", p, s), b)
    VX_TRY(get_norm(L, &tb->norm1, C, PFX("norm1")));
    VX_TRY(get_norm(L, &tb->norm3, C, PFX("norm3")));
    VX_TRY(get_lin(L, &tb->q, HD, C, 0, 0, PFX("attn1.to_q")));
    VX_TRY(get_lin(L, &tb->k, HD, C, 0, 0, PFX("attn1.to_k")));
    VX_TRY(get_lin(L, &tb->v, HD, C, 0, 0, PFX("attn1.to_v")));
    VX_TRY(get_lin(L, &tb->out, C, HD, 0, 1, PFX("attn1.to_out.0")));
    VX_TRY(get_lin(L, &tb->ff1, d->dec_ffn, C, 0, 1, PFX("ff.net.0.proj")));
    VX_TRY(get_lin(L, &tb->ff2, C, d->dec_ffn, 0, 1, PFX("ff.net.2")));
#undef PFX
    return VOCIS_OK;
}

static vocis_status load_cblock(ldr *L, fl_cblock *cb, int64_t cin, const char *p) {
    int64_t C = L->f->d.dec_ch;
    char b[256];
    snprintf(b, sizeof b, "%s.block.0", p);
    VX_TRY(get_lin(L, &cb->conv, C, cin, 3, 1, b));
    snprintf(b, sizeof b, "%s.block.2", p);
    return get_norm(L, &cb->ln, C, b);
}

static vocis_status load_stage(ldr *L, fl_stage *s, int64_t cin, int has_post, const char *p) {
    const vx_s3gen_flow_dims *d = &L->f->d;
    int64_t C = d->dec_ch;
    char b[160];
    s->res.cin = cin;
    snprintf(b, sizeof b, "%s.0.mlp.1", p);
    VX_TRY(get_lin(L, &s->res.mlp, C, d->temb_dim, 0, 1, b));
    snprintf(b, sizeof b, "%s.0.block1", p);
    VX_TRY(load_cblock(L, &s->res.block1, cin, b));
    snprintf(b, sizeof b, "%s.0.block2", p);
    VX_TRY(load_cblock(L, &s->res.block2, C, b));
    snprintf(b, sizeof b, "%s.0.res_conv", p);
    VX_TRY(get_lin(L, &s->res.res_conv, C, cin, 1, 1, b));
    s->tb = vx_calloc(L->err, (size_t)d->n_tblocks, sizeof *s->tb, "s3gen transformer blocks");
    if (!s->tb) return L->err->code;
    VX_TRY(own(L, s->tb));
    for (int64_t n = 0; n < d->n_tblocks; n++) {
        snprintf(b, sizeof b, "%s.1.%lld", p, (long long)n);
        VX_TRY(load_tblock(L, &s->tb[n], b));
    }
    if (has_post) {
        snprintf(b, sizeof b, "%s.2", p);
        VX_TRY(get_lin(L, &s->post, C, C, 3, 1, b));
    }
    return VOCIS_OK;
}

/* Load every tensor for the dims in L->f->d. */
static vocis_status load_all(ldr *L) {
    vx_s3gen_flow *f = L->f;
    const vx_s3gen_flow_dims *d = &f->d;
    int64_t E = d->enc_dim, M = d->n_mels, C = d->dec_ch;
    char b[100];
    VX_TRY(get(L, &f->input_embedding, K_EMB, VX_DIMS(d->vocab, d->input_size), "flow.input_embedding.weight"));
    VX_TRY(get_lin(L, &f->spk_affine, M, d->spk_dim, 0, 1, "flow.spk_embed_affine_layer"));
    VX_TRY(get_lin(L, &f->encoder_proj, M, E, 0, 1, "flow.encoder_proj"));
    VX_TRY(get_lin(L, &f->embed_lin, E, d->input_size, 0, 1, "flow.encoder.embed.out.0"));
    VX_TRY(get_norm(L, &f->embed_ln, E, "flow.encoder.embed.out.1"));
    VX_TRY(get_lin(L, &f->pre_conv1, E, E, d->lookahead + 1, 1, "flow.encoder.pre_lookahead_layer.conv1"));
    VX_TRY(get_lin(L, &f->pre_conv2, E, E, 3, 1, "flow.encoder.pre_lookahead_layer.conv2"));
    VX_TRY(get_lin(L, &f->up_conv, E, E, 2 * d->up_stride + 1, 1, "flow.encoder.up_layer.conv"));
    VX_TRY(get_lin(L, &f->up_embed_lin, E, E, 0, 1, "flow.encoder.up_embed.out.0"));
    VX_TRY(get_norm(L, &f->up_embed_ln, E, "flow.encoder.up_embed.out.1"));
    VX_TRY(get_norm(L, &f->after_norm, E, "flow.encoder.after_norm"));
    f->enc = vx_calloc(L->err, (size_t)d->n_enc, sizeof *f->enc, "s3gen conformer layers");
    if (!f->enc) return L->err->code;
    VX_TRY(own(L, f->enc));
    f->up = vx_calloc(L->err, (size_t)d->n_up, sizeof *f->up, "s3gen conformer layers");
    if (!f->up) return L->err->code;
    VX_TRY(own(L, f->up));
    for (int64_t i = 0; i < d->n_enc; i++) {
        snprintf(b, sizeof b, "flow.encoder.encoders.%lld", (long long)i);
        VX_TRY(load_conformer(L, &f->enc[i], b));
    }
    for (int64_t i = 0; i < d->n_up; i++) {
        snprintf(b, sizeof b, "flow.encoder.up_encoders.%lld", (long long)i);
        VX_TRY(load_conformer(L, &f->up[i], b));
    }
    /* estimator */
    const char *e = "flow.decoder.estimator";
    snprintf(b, sizeof b, "%s.time_mlp.linear_1", e);
    VX_TRY(get_lin(L, &f->time1, d->temb_dim, 4 * M, 0, 1, b));
    snprintf(b, sizeof b, "%s.time_mlp.linear_2", e);
    VX_TRY(get_lin(L, &f->time2, d->temb_dim, d->temb_dim, 0, 1, b));
    if (d->meanflow) {
        snprintf(b, sizeof b, "%s.time_embed_mixer", e);
        VX_TRY(get_lin(L, &f->time_mixer, d->temb_dim, 2 * d->temb_dim, 0, 0, b));
    }
    snprintf(b, sizeof b, "%s.down_blocks.0", e);
    VX_TRY(load_stage(L, &f->down, 4 * M, 1, b));
    f->mid = vx_calloc(L->err, (size_t)(d->n_mid ? d->n_mid : 1), sizeof *f->mid, "s3gen mid blocks");
    if (!f->mid) return L->err->code;
    VX_TRY(own(L, f->mid));
    for (int64_t m = 0; m < d->n_mid; m++) {
        snprintf(b, sizeof b, "%s.mid_blocks.%lld", e, (long long)m);
        VX_TRY(load_stage(L, &f->mid[m], C, 0, b));
    }
    snprintf(b, sizeof b, "%s.up_blocks.0", e);
    VX_TRY(load_stage(L, &f->up_stage, 2 * C, 1, b));
    snprintf(b, sizeof b, "%s.final_block", e);
    VX_TRY(load_cblock(L, &f->final_block, C, b));
    snprintf(b, sizeof b, "%s.final_proj", e);
    return get_lin(L, &f->final_proj, M, C, 1, 1, b);
}

void vx_s3gen_flow_free(vx_s3gen_flow *f) {
    if (!f) return;
    for (int i = 0; i < f->n_owned; i++) free(f->owned[i]);
    free(f->owned);
    free(f);
}

const vx_s3gen_flow_dims *vx_s3gen_flow_get_dims(const vx_s3gen_flow *f) { return &f->d; }

int64_t vx_s3gen_flow_held_frames(const vx_s3gen_flow *f) { return f->d.lookahead * f->d.up_stride; }

void vx_s3gen_flow_dims_real(vx_s3gen_flow_dims *d) {
    *d = (vx_s3gen_flow_dims){.vocab = 6561, .input_size = 512, .enc_dim = 512, .enc_heads = 8, .enc_ffn = 2048,
                              .n_enc = 6, .n_up = 4, .lookahead = 3, .up_stride = 2, .n_mels = 80, .spk_dim = 192,
                              .dec_ch = 256, .dec_heads = 8, .dec_head_dim = 64, .dec_ffn = 1024,
                              .temb_dim = 1024, .n_tblocks = 4, .n_mid = 12};
}

void vx_s3gen_flow_dims_real_meanflow(vx_s3gen_flow_dims *d) {
    vx_s3gen_flow_dims_real(d);
    d->meanflow = 1;
}

/* Shape of a tensor (any rank), or an error naming it. */
static vocis_status probe(const vx_weights *w, const char *name, int ndim, int64_t *shape, vx_err *err) {
    vx_tensor t;
    static const int64_t any[4] = {-1, -1, -1, -1};
    VX_TRY(vx_weights_expect(w, VX_FLOATS, ndim, any, &t, err, "%s", name));
    for (int i = 0; i < ndim; i++) shape[i] = t.shape[i];
    return VOCIS_OK;
}

static int64_t count_blocks(const vx_weights *w, const char *fmt) {
    char b[256];
    int64_t n = 0;
    for (;; n++) {
        snprintf(b, sizeof b, fmt, (long long)n);
        if (!vx_weights_has(w, b)) return n;
    }
}

static vocis_status dims_from_shapes(const vx_weights *w, const vx_cb_config *cfg, vx_s3gen_flow_dims *d,
                                     vx_err *err) {
    const char *path = vx_weights_path(w);
    int64_t s[3];
    memset(d, 0, sizeof *d);
    VX_TRY(probe(w, "flow.input_embedding.weight", 2, s, err));
    d->vocab = s[0];
    d->input_size = s[1];
    VX_TRY(probe(w, "flow.spk_embed_affine_layer.weight", 2, s, err));
    d->n_mels = s[0];
    d->spk_dim = s[1];
    VX_TRY(probe(w, "flow.encoder.embed.out.0.weight", 2, s, err));
    d->enc_dim = s[0];
    VX_TRY(probe(w, "flow.encoder.encoders.0.self_attn.pos_bias_u", 2, s, err));
    d->enc_heads = s[0];
    if (s[0] * s[1] != d->enc_dim)
        return vx_fail(err, VOCIS_E_SHAPE,
                       "%s: tensor 'flow.encoder.encoders.0.self_attn.pos_bias_u': expected (heads, %lld / heads), "
                       "found [%lld, %lld]",
                       path, (long long)d->enc_dim, (long long)s[0], (long long)s[1]);
    if (cfg && cfg->flow_encoder_heads != d->enc_heads)
        return vx_fail(err, VOCIS_E_SHAPE,
                       "%s: flow encoder has %lld attention heads (pos_bias_u), but the config%s%s says %d", path,
                       (long long)d->enc_heads, cfg->source[0] ? " " : "", cfg->source, cfg->flow_encoder_heads);
    VX_TRY(probe(w, "flow.encoder.encoders.0.feed_forward.w_1.weight", 2, s, err));
    d->enc_ffn = s[0];
    d->n_enc = count_blocks(w, "flow.encoder.encoders.%lld.norm_mha.weight");
    d->n_up = count_blocks(w, "flow.encoder.up_encoders.%lld.norm_mha.weight");
    VX_TRY(probe(w, "flow.encoder.pre_lookahead_layer.conv1.weight", 3, s, err));
    d->lookahead = s[2] - 1;
    VX_TRY(probe(w, "flow.encoder.up_layer.conv.weight", 3, s, err));
    if (s[2] < 3 || s[2] % 2 == 0)
        return vx_fail(err, VOCIS_E_SHAPE,
                       "%s: tensor 'flow.encoder.up_layer.conv.weight': expected kernel 2·stride + 1, found %lld",
                       path, (long long)s[2]);
    d->up_stride = (s[2] - 1) / 2;
    const char *e = "flow.decoder.estimator";
    char b[256];
    snprintf(b, sizeof b, "%s.down_blocks.0.0.block1.block.0.weight", e);
    VX_TRY(probe(w, b, 3, s, err));
    d->dec_ch = s[0];
    snprintf(b, sizeof b, "%s.time_mlp.linear_1.weight", e);
    VX_TRY(probe(w, b, 2, s, err));
    d->temb_dim = s[0];
    d->dec_heads = cfg ? cfg->flow_decoder_heads : 8;
    d->dec_head_dim = cfg ? cfg->flow_decoder_head_dim : 64;
    snprintf(b, sizeof b, "%s.down_blocks.0.1.0.attn1.to_q.weight", e);
    VX_TRY(probe(w, b, 2, s, err));
    if (s[0] != d->dec_heads * d->dec_head_dim)
        return vx_fail(err, VOCIS_E_SHAPE,
                       "%s: tensor '%s' has %lld rows, but the config%s%s says %lld heads x %lld = %lld", path, b,
                       (long long)s[0], cfg && cfg->source[0] ? " " : "", cfg ? cfg->source : "",
                       (long long)d->dec_heads, (long long)d->dec_head_dim,
                       (long long)(d->dec_heads * d->dec_head_dim));
    snprintf(b, sizeof b, "%s.down_blocks.0.1.0.ff.net.0.proj.weight", e);
    VX_TRY(probe(w, b, 2, s, err));
    d->dec_ffn = s[0];
    snprintf(b, sizeof b, "%s.down_blocks.0.1.%%lld.norm1.weight", e);
    d->n_tblocks = count_blocks(w, b);
    snprintf(b, sizeof b, "%s.mid_blocks.%%lld.0.res_conv.weight", e);
    d->n_mid = count_blocks(w, b);
    snprintf(b, sizeof b, "%s.down_blocks.1.0.res_conv.weight", e);
    if (vx_weights_has(w, b))
        return vx_fail(err, VOCIS_E_UNSUPPORTED, "%s: estimator with more than one U-Net level ('%s') is not supported",
                       path, b);
    snprintf(b, sizeof b, "%s.time_embed_mixer.weight", e);
    d->meanflow = vx_weights_has(w, b); /* Turbo / Nano (s3gen_meanflow.safetensors) */
    if (d->n_enc < 1 || d->n_tblocks < 1)
        return vx_fail(err, VOCIS_E_SHAPE, "%s: no flow encoder layers or estimator transformer blocks found", path);
    return VOCIS_OK;
}

static vocis_status check_dims(const vx_s3gen_flow_dims *d, vx_err *err) {
    if (d->vocab < 1 || d->input_size < 1 || d->enc_dim < 2 || d->enc_dim % 2 || d->enc_heads < 1 ||
        d->enc_dim % d->enc_heads || d->enc_ffn < 1 || d->n_enc < 1 || d->n_up < 0 || d->lookahead < 0 ||
        d->up_stride < 1 || d->n_mels < 1 || d->spk_dim < 1 || d->dec_ch < 1 || d->dec_heads < 1 ||
        d->dec_head_dim < 1 || d->dec_ffn < 1 || d->temb_dim < 1 || d->n_tblocks < 1 || d->n_mid < 0)
        return vx_fail(err, VOCIS_E_ARG, "s3gen flow: inconsistent dimensions");
    return VOCIS_OK;
}

vocis_status vx_s3gen_flow_load(const vx_weights *w, const vx_cb_config *cfg, vx_s3gen_flow **out, vx_err *err) {
    *out = NULL;
    vx_s3gen_flow *f = vx_calloc(err, 1, sizeof *f, "s3gen flow");
    if (!f) return err->code;
    vocis_status st = dims_from_shapes(w, cfg, &f->d, err);
    if (st == VOCIS_OK) st = check_dims(&f->d, err);
    if (st == VOCIS_OK) {
        ldr L = {w, f, VX_F32, 0, err, NULL};
        st = load_all(&L);
    }
    if (st != VOCIS_OK) {
        vx_s3gen_flow_free(f);
        return st;
    }
    *out = f;
    return VOCIS_OK;
}

vocis_status vx_s3gen_flow_synthetic(const vx_s3gen_flow_dims *d, vx_dtype wdtype, uint64_t seed,
                                     vx_s3gen_flow **out, vx_err *err) {
    *out = NULL;
    if (wdtype != VX_F32 && wdtype != VX_F16 && wdtype != VX_BF16)
        return vx_fail(err, VOCIS_E_ARG, "s3gen flow: synthetic weights must be F32, F16 or BF16");
    VX_TRY(check_dims(d, err));
    vx_s3gen_flow *f = vx_calloc(err, 1, sizeof *f, "s3gen flow");
    if (!f) return err->code;
    f->d = *d;
    ldr L = {NULL, f, wdtype, seed * 0x9E3779B97F4A7C15ULL + 0x1234567ULL, err, NULL};
    vocis_status st = load_all(&L);
    if (st != VOCIS_OK) {
        vx_s3gen_flow_free(f);
        return st;
    }
    *out = f;
    return VOCIS_OK;
}

vocis_status vx_s3gen_flow_synthetic_weights(const vx_s3gen_flow_dims *d, vx_dtype wdtype, uint64_t seed,
                                             vx_weights **out, vx_err *err) {
    *out = NULL;
    if (wdtype != VX_F32 && wdtype != VX_F16 && wdtype != VX_BF16)
        return vx_fail(err, VOCIS_E_ARG, "s3gen flow: synthetic weights must be F32, F16 or BF16");
    VX_TRY(check_dims(d, err));
    vx_s3gen_flow *f = vx_calloc(err, 1, sizeof *f, "s3gen flow");
    vx_synth *s = f ? vx_synth_new(seed) : NULL;
    if (!s) {
        free(f);
        return f ? vx_fail(err, VOCIS_E_NOMEM, "out of memory") : err->code;
    }
    f->d = *d;
    ldr L = {NULL, f, wdtype, 0, err, s}; /* walks the loader's tensor list; no data is read */
    vocis_status st = load_all(&L);
    vx_s3gen_flow_free(f);
    if (st == VOCIS_OK) st = vx_synth_open(s, out, err);
    vx_synth_free(s);
    return st;
}

/* ------------------------------------------------------------------------ */
/* Token → mel                                                               */

/* torch: 1 − cos(linspace(0, 1, n + 1) · 0.5 · π) in float32. */
static void cosine_grid(float *ts, int n) {
    const float step = 1.0f / (float)n;
    const int steps = n + 1, half = steps / 2;
    for (int i = 0; i < steps; i++) {
        float lin = i < half ? step * (float)i : 1.0f - step * (float)(steps - i - 1);
        ts[i] = 1.0f - cosf(lin * 0.5f * (float)M_PI);
    }
}

static vocis_status dbg_put(vx_st_writer *w, const char *name, int ndim, const int64_t *shape, const float *x,
                            vx_err *err) {
    return vx_st_writer_add(w, name, VX_F32, ndim, shape, x, err);
}

/* Write [B][L][C] time-major data as [B][C][L]. */
static vocis_status dbg_put_cm(vx_st_writer *w, const char *name, const float *x, int64_t B, int64_t L, int64_t C,
                               vx_err *err) {
    float *t = vx_malloc(err, (size_t)(B * L * C) * sizeof(float), name);
    if (!t) return err->code;
    for (int64_t b = 0; b < B; b++) vx_transpose(t + b * L * C, x + b * L * C, L, C);
    vocis_status st = dbg_put(w, name, VX_DIMS(B, C, L), t, err);
    free(t);
    return st;
}

vocis_status vx_s3gen_flow_run(const vx_s3gen_flow *f, const vx_s3gen_flow_req *rq, float **mel, int64_t *tm,
                               vx_err *err) {
    const vx_s3gen_flow_dims *d = &f->d;
    *mel = NULL;
    *tm = 0;
    if (rq->n <= 0 || !rq->speech_tokens)
        return vx_fail(err, VOCIS_E_ARG, "s3gen flow: no speech tokens to synthesise (empty token list)");
    if (rq->np < 0 || (rq->np > 0 && !rq->prompt_tokens) || rq->tp < 0 || (rq->tp > 0 && !rq->prompt_feat) ||
        !rq->embedding)
        return vx_fail(err, VOCIS_E_ARG, "s3gen flow: missing prompt tokens, prompt mel or speaker embedding");
    if (d->meanflow)
        return vx_fail(err, VOCIS_E_ARG, "s3gen flow: MeanFlow (Turbo) weights need the meanflow solver");
    int n_steps = rq->n_steps > 0 ? rq->n_steps : 10;
    float cfg_rate = rq->cfg_rate >= 0.0f ? rq->cfg_rate : 0.7f;
    if (!rq->z && !rq->rng) return vx_fail(err, VOCIS_E_ARG, "s3gen flow: neither initial noise nor a generator");
    const int nth = rq->nthreads > 0 ? rq->nthreads : 1;
    const int64_t T = rq->np + rq->n, Lenc = d->up_stride * T, M = d->n_mels, E = d->enc_dim;
    const int64_t L = Lenc - (rq->hold_lookahead ? vx_s3gen_flow_held_frames(f) : 0); /* frames after the hold */
    if (rq->tp >= L)
        return vx_fail(err, VOCIS_E_ARG,
                       "s3gen flow: prompt mel has %lld frames, not fewer than the %lld frames of prompt + speech "
                       "tokens (%lld + %lld tokens x %lld)",
                       (long long)rq->tp, (long long)L, (long long)rq->np, (long long)rq->n,
                       (long long)d->up_stride);
    vx_st_writer *dbg = rq->debug;
    vocis_status st = VOCIS_OK;

    int64_t *tokens = NULL;
    float *emb = NULL, *h = NULL, *mu2 = NULL, *cond2 = NULL, *spk2 = NULL, *x = NULL, *x2 = NULL, *v = NULL,
          *out = NULL, *tmp = NULL;
    cfm_ws *ws = NULL;
    float *ts = NULL;
#define ALLOC(p, n, what)                                                                                              \
    do {                                                                                                           \
        p = vx_calloc(err, (size_t)(n), sizeof *p, what);                                                          \
        if (!p) {                                                                                                  \
            st = err->code;                                                                                        \
            goto done;                                                                                             \
        }                                                                                                          \
    } while (0)
#define TRY(e)                                                                                                         \
    do {                                                                                                           \
        if ((st = (e)) != VOCIS_OK) goto done;                                                                     \
    } while (0)
    ALLOC(tokens, T, "tokens");
    for (int64_t i = 0; i < rq->np; i++) tokens[i] = rq->prompt_tokens[i];
    for (int64_t i = 0; i < rq->n; i++) tokens[rq->np + i] = rq->speech_tokens[i];

    /* 1. speaker: spk = W · e / max(‖e‖, 1e-12) + b   [n_mels]; row 1 of the CFG pair stays 0 */
    ALLOC(spk2, 2 * M, "speaker vector");
    {
        float nrm = 0.0f;
        for (int64_t i = 0; i < d->spk_dim; i++) nrm += rq->embedding[i] * rq->embedding[i];
        nrm = sqrtf(nrm);
        if (nrm < 1e-12f) nrm = 1e-12f;
        ALLOC(tmp, d->spk_dim, "speaker vector");
        for (int64_t i = 0; i < d->spk_dim; i++) tmp[i] = rq->embedding[i] / nrm;
        vx_linear(spk2, tmp, 1, &f->spk_affine.w, f->spk_affine.b, 1);
        free(tmp);
        tmp = NULL;
        if (dbg) TRY(dbg_put(dbg, "spks", VX_DIMS(1, M), spk2, err));
    }

    /* 2. encoder: tokens [T] → h [Lenc][E] → (held frames dropped) μ [L][n_mels] (row 0 of the pair; row 1 zeros) */
    ALLOC(h, Lenc * E, "encoder output");
    if (dbg) ALLOC(emb, T * d->input_size, "token embeddings");
    double t_enc0 = vx_now_s();
    TRY(vx_s3gen_encoder_forward(f, tokens, T, h, emb, nth, err));
    if (dbg) {
        TRY(dbg_put(dbg, "token_emb_masked_input", VX_DIMS(1, T, d->input_size), emb, err));
        TRY(dbg_put(dbg, "encoder_out", VX_DIMS(1, Lenc, E), h, err));
    }
    ALLOC(mu2, 2 * L * M, "mu");
    vx_linear(mu2, h, L, &f->encoder_proj.w, f->encoder_proj.b, nth);
    if (rq->t_encoder) *rq->t_encoder = vx_now_s() - t_enc0;
    free(h);
    h = NULL;
    if (dbg) TRY(dbg_put_cm(dbg, "mu", mu2, 1, L, M, err));

    /* 3. condition: prompt mel in the first tp frames   [L][n_mels] */
    ALLOC(cond2, 2 * L * M, "cond");
    if (rq->tp > 0) memcpy(cond2, rq->prompt_feat, (size_t)(rq->tp * M) * sizeof(float));
    if (dbg) {
        TRY(dbg_put_cm(dbg, "cond", cond2, 1, L, M, err));
        ALLOC(tmp, L, "mask");
        for (int64_t i = 0; i < L; i++) tmp[i] = 1.0f;
        TRY(dbg_put(dbg, "mask", VX_DIMS(1, 1, L), tmp, err));
        free(tmp);
        tmp = NULL;
    }

    /* 4. initial noise z [n_mels][L] (channel-major like torch) → x [L][n_mels] */
    ALLOC(x, L * M, "flow state");
    ALLOC(tmp, L * M, "noise");
    if (rq->z) memcpy(tmp, rq->z, (size_t)(L * M) * sizeof(float));
    else vx_rng_randn(rq->rng, tmp, (size_t)(L * M));
    if (dbg && !rq->z) TRY(dbg_put(dbg, "z_noise", VX_DIMS(1, M, L), tmp, err));
    vx_transpose(x, tmp, M, L);
    free(tmp);
    tmp = NULL;

    /* 5. Euler with CFG on the cosine grid */
    ALLOC(ts, n_steps + 1, "time grid");
    cosine_grid(ts, n_steps);
    if (dbg) TRY(dbg_put(dbg, "t_span", VX_DIMS(n_steps + 1), ts, err));
    ALLOC(x2, 2 * L * M, "estimator input");
    ALLOC(v, 2 * L * M, "estimator output");
    TRY(cfm_ws_new(f, L, &ws, err));
    const float g1 = (float)(1.0 + (double)cfg_rate), g2 = cfg_rate;
    double t_steps0 = vx_now_s();
    for (int k = 0; k < n_steps; k++) {
        float t = ts[k], r = ts[k + 1];
        memcpy(x2, x, (size_t)(L * M) * sizeof(float));
        memcpy(x2 + L * M, x, (size_t)(L * M) * sizeof(float));
        TRY(cfm_estimator_forward(f, ws, 2, L, x2, mu2, spk2, cond2, t, v, nth, k == 0 ? dbg : NULL, "step0", err));
        if (dbg && k == 0) TRY(dbg_put_cm(dbg, "est_dxdt_step0", v, 2, L, M, err));
        if (dbg && k == n_steps - 1) TRY(dbg_put_cm(dbg, "est_dxdt_last", v, 2, L, M, err));
        const float dt = r - t;
        const float *v0 = v, *v1 = v + L * M;
        for (int64_t i = 0; i < L * M; i++) {
            float dxdt = g1 * v0[i] - g2 * v1[i];
            x[i] = x[i] + dt * dxdt;
        }
    }
    if (rq->t_steps) *rq->t_steps = vx_now_s() - t_steps0;
    if (dbg) {
        TRY(dbg_put(dbg, "est_t_all_steps", VX_DIMS(n_steps), ts, err));
        TRY(dbg_put_cm(dbg, "solve_euler_out", x, 1, L, M, err));
    }

    /* 6. mel = x[:, tp:]   [L][n_mels] → [n_mels][L − tp] */
    const int64_t tmel = L - rq->tp;
    ALLOC(out, tmel * M, "mel");
    vx_transpose(out, x + rq->tp * M, tmel, M);
    if (dbg) TRY(dbg_put(dbg, "mel_out", VX_DIMS(1, M, tmel), out, err));
    *mel = out;
    *tm = tmel;
    out = NULL;
done:
#undef ALLOC
#undef TRY
    cfm_ws_free(ws);
    free(tokens);
    free(emb);
    free(h);
    free(mu2);
    free(cond2);
    free(spk2);
    free(x);
    free(x2);
    free(v);
    free(out);
    free(tmp);
    free(ts);
    return st;
}

vocis_status vx_s3gen_flow_infer(const vx_s3gen_flow *f, const int64_t *speech_tokens, int64_t n,
                                 const int64_t *prompt_tokens, int64_t np, const float *prompt_feat, int64_t tp,
                                 const float *embedding, int n_steps, vx_rng *rng, const float *z, float **mel,
                                 int64_t *tm, int nthreads, vx_err *err) {
    vx_s3gen_flow_req rq = {speech_tokens, n,   prompt_tokens, np, prompt_feat, tp,       embedding,
                            n_steps,       0.7f, z,            rng, nthreads,   NULL,     NULL,     NULL};
    return vx_s3gen_flow_run(f, &rq, mel, tm, err);
}

/* ------------------------------------------------------------------------ */
/* Stage: vocis debug s3gen-flow                                             */

vocis_status vx_stage_s3gen_flow(const vx_stage_args *a, vx_err *err) {
    if (vx_turbo_is_folder(a->model_dir)) return vx_stage_turbo_s3gen_flow(a, err);
    int steps = 10;
    VX_TRY(vx_stage_opt_steps(a, &steps, err));
    vx_cb_config cfg;
    vx_cb_config_default(&cfg);
    VX_TRY(vx_cb_config_load(&cfg, a->model_dir, NULL, err));
    char path[4096];
    snprintf(path, sizeof path, "%s/s3gen.safetensors", a->model_dir);
    vx_weights *w = NULL;
    VX_TRY(vx_cb_weights_open_path(path, &w, err));
    vx_weights_set_precision(w, a->precision);
    vx_s3gen_flow *f = NULL;
    vocis_status st = vx_s3gen_flow_load(w, &cfg, &f, err);
    int64_t *tok = NULL, *ptok = NULL;
    float *pfeat = NULL, *embd = NULL, *z = NULL, *mel = NULL;
    if (st != VOCIS_OK) goto out;
    const vx_s3gen_flow_dims *d = &f->d;
    vx_tensor t_tok, t_ptok, t_feat;
    if ((st = vx_stage_in_i64(a, "speech_tokens", VX_DIMS(1, -1), &tok, &t_tok, err)) ||
        (st = vx_stage_in_i64(a, "prompt_token", VX_DIMS(1, -1), &ptok, &t_ptok, err)) ||
        (st = vx_stage_in_f32(a, "prompt_feat", VX_DIMS(1, -1, d->n_mels), &pfeat, &t_feat, err)) ||
        (st = vx_stage_in_f32(a, "embedding", VX_DIMS(1, d->spk_dim), &embd, NULL, err)))
        goto out;
    /* z_noise is optional: without it the noise is drawn from a generator seeded with 0 */
    int64_t L = d->up_stride * (t_tok.shape[1] + t_ptok.shape[1]);
    if (vx_st_find(a->in, "z_noise") && (st = vx_stage_in_f32(a, "z_noise", VX_DIMS(1, d->n_mels, L), &z, NULL, err)))
        goto out;
    vx_rng rng;
    vx_rng_seed(&rng, 0);
    vx_s3gen_flow_req rq = {tok,   t_tok.shape[1], ptok, t_ptok.shape[1], pfeat,       t_feat.shape[1], embd,
                            steps, 0.7f,           z,    &rng,            a->nthreads, a->out,          NULL, NULL};
    int64_t tm;
    st = vx_s3gen_flow_run(f, &rq, &mel, &tm, err);
out:
    free(tok);
    free(ptok);
    free(pfeat);
    free(embd);
    free(z);
    free(mel);
    vx_s3gen_flow_free(f);
    vx_weights_close(w);
    return st;
}
