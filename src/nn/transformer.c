#include "nn/transformer.h"

#include "kernels/precision.h"
#include "nn/speculate.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- loading ---- */

/* Copies a float vector tensor (any float dtype) to f32. */
vocis_status vx_weights_vec_f32(const vx_weights *w, const char *name, int64_t n, float *dst, vx_err *err) {
    vx_tensor t;
    VX_TRY(vx_weights_expect(w, VX_FLOATS, VX_DIMS(n), &t, err, "%s", name));
    vx_to_f32(dst, t.data, t.dtype, (size_t)n);
    return VOCIS_OK;
}

vocis_status vx_weights_mat(const vx_weights *w, const char *name, int64_t rows, int64_t cols, vx_mat *m,
                            vx_err *err) {
    vx_tensor t;
    VX_TRY(vx_weights_expect(w, VX_FLOATS, VX_DIMS(rows, cols), &t, err, "%s", name));
    *m = vx_mat_of(&t);
    return vx_weights_mat_policy(w, m, VX_W_MATRIX, err);
}

vocis_status vx_weights_linear(const vx_weights *w, const char *name, int64_t rows, int64_t cols, vx_mat *m,
                               vx_err *err) {
    vx_tensor t;
    VX_TRY(vx_weights_expect(w, VX_FLOATS, VX_DIMS(rows, cols), &t, err, "%s", name));
    *m = vx_mat_of(&t);
    return vx_weights_mat_policy(w, m, VX_W_TF_LINEAR, err);
}

vocis_status vx_tf_load(vx_tf *tf, const vx_weights *w, const char *prefix, const vx_tf_options *opt, vx_err *err) {
    memset(tf, 0, sizeof *tf);
    char name[512];
    int L = 0;
    for (;; L++) {
        snprintf(name, sizeof name, "%slayers.%d.input_layernorm.weight", prefix, L);
        if (!vx_weights_has(w, name)) break;
    }
    if (L == 0)
        return vx_fail(err, VOCIS_E_SHAPE, "%s: missing tensor '%slayers.0.input_layernorm.weight'",
                       vx_weights_path(w), prefix);
    vx_tensor t;
    VX_TRY(vx_weights_expect(w, VX_FLOATS, VX_DIMS(-1), &t, err, "%slayers.0.input_layernorm.weight", prefix));
    const int D = (int)t.shape[0];
    const int H = opt->n_heads;
    const int hd = opt->head_dim > 0 ? opt->head_dim : (H > 0 ? D / H : 0);
    if (H <= 0 || hd <= 0 || hd % 2)
        return vx_fail(err, VOCIS_E_ARG, "%s: invalid head configuration (%d heads, head_dim %d, hidden %d)",
                       vx_weights_path(w), H, hd, D);
    VX_TRY(vx_weights_expect(w, VX_FLOATS, VX_DIMS((int64_t)H * hd, D), &t, err, "%slayers.0.self_attn.q_proj.weight",
                             prefix));
    VX_TRY(vx_weights_expect(w, VX_FLOATS, VX_DIMS(-1, D), &t, err, "%slayers.0.self_attn.k_proj.weight", prefix));
    if (t.shape[0] % hd != 0 || H % (t.shape[0] / hd) != 0)
        return vx_fail(err, VOCIS_E_SHAPE,
                       "%s: tensor '%slayers.0.self_attn.k_proj.weight' has %lld rows: not a divisor of %d heads x %d",
                       vx_weights_path(w), prefix, (long long)t.shape[0], H, hd);
    const int KV = (int)(t.shape[0] / hd);
    VX_TRY(vx_weights_expect(w, VX_FLOATS, VX_DIMS(-1, D), &t, err, "%slayers.0.mlp.gate_proj.weight", prefix));
    const int F = (int)t.shape[0];

    tf->n_layers = L;
    tf->dim = D;
    tf->n_heads = H;
    tf->n_kv_heads = KV;
    tf->head_dim = hd;
    tf->ffn_dim = F;
    tf->norm_eps = opt->norm_eps;
    tf->chunk = 512;

    const int64_t qd = (int64_t)H * hd, kvd = (int64_t)KV * hd;
    size_t per_layer = 2 * (size_t)D + (opt->qkv_bias ? (size_t)(qd + 2 * kvd) : 0);
    size_t total = per_layer * (size_t)L + (size_t)D + (size_t)hd / 2;
    float *buf = vx_calloc(err, total, sizeof(float), "transformer vectors");
    tf->layers = vx_calloc(err, (size_t)L, sizeof(vx_tf_layer), "transformer layers");
    tf->owned = buf;
    if (!buf || !tf->layers) {
        vx_tf_free(tf);
        return VOCIS_E_NOMEM;
    }
    float *p = buf;
    vocis_status st = VOCIS_OK;
    for (int l = 0; l < L && st == VOCIS_OK; l++) {
        vx_tf_layer *ly = &tf->layers[l];
        char pre[400];
        snprintf(pre, sizeof pre, "%slayers.%d.", prefix, l);
#define NAME(s) (snprintf(name, sizeof name, "%s%s", pre, s), name)
        ly->in_norm = p, p += D;
        ly->post_norm = p, p += D;
        if ((st = vx_weights_vec_f32(w, NAME("input_layernorm.weight"), D, ly->in_norm, err))) break;
        if ((st = vx_weights_vec_f32(w, NAME("post_attention_layernorm.weight"), D, ly->post_norm, err))) break;
        if ((st = vx_weights_linear(w, NAME("self_attn.q_proj.weight"), qd, D, &ly->q, err))) break;
        if ((st = vx_weights_linear(w, NAME("self_attn.k_proj.weight"), kvd, D, &ly->k, err))) break;
        if ((st = vx_weights_linear(w, NAME("self_attn.v_proj.weight"), kvd, D, &ly->v, err))) break;
        if ((st = vx_weights_linear(w, NAME("self_attn.o_proj.weight"), D, qd, &ly->o, err))) break;
        if ((st = vx_weights_linear(w, NAME("mlp.gate_proj.weight"), F, D, &ly->gate, err))) break;
        if ((st = vx_weights_linear(w, NAME("mlp.up_proj.weight"), F, D, &ly->up, err))) break;
        if ((st = vx_weights_linear(w, NAME("mlp.down_proj.weight"), D, F, &ly->down, err))) break;
        if (opt->qkv_bias) {
            ly->q_bias = p, p += qd;
            ly->k_bias = p, p += kvd;
            ly->v_bias = p, p += kvd;
            if ((st = vx_weights_vec_f32(w, NAME("self_attn.q_proj.bias"), qd, ly->q_bias, err))) break;
            if ((st = vx_weights_vec_f32(w, NAME("self_attn.k_proj.bias"), kvd, ly->k_bias, err))) break;
            if ((st = vx_weights_vec_f32(w, NAME("self_attn.v_proj.bias"), kvd, ly->v_bias, err))) break;
        }
#undef NAME
    }
    if (st == VOCIS_OK && opt->final_norm) {
        tf->final_norm = p;
        p += D;
        snprintf(name, sizeof name, "%snorm.weight", prefix);
        st = vx_weights_vec_f32(w, name, D, tf->final_norm, err);
    }
    if (st != VOCIS_OK) {
        vx_tf_free(tf);
        return st;
    }
    tf->inv_freq = p;
    vx_rope_freqs(tf->inv_freq, hd, opt->rope_theta);
    if (opt->rope_factor > 0)
        vx_rope_llama3_scale(tf->inv_freq, hd, opt->rope_factor, opt->rope_low_freq_factor,
                             opt->rope_high_freq_factor, opt->rope_original_max_pos);
    return VOCIS_OK;
}

void vx_tf_free(vx_tf *tf) {
    free(tf->layers);
    free(tf->owned);
    memset(tf, 0, sizeof *tf);
}

vocis_status vx_tf_draft(const vx_tf *tf, vx_tf *d, vx_draft_mem *mem, int nthreads, vx_err *err) {
    *d = *tf;
    d->owned = NULL; /* the vectors stay tf's */
    d->layers = vx_malloc(err, sizeof *d->layers * (size_t)tf->n_layers, "speculative draft");
    if (!d->layers) return VOCIS_E_NOMEM;
    for (int l = 0; l < tf->n_layers; l++) {
        const vx_tf_layer *a = &tf->layers[l];
        vx_tf_layer *b = &d->layers[l];
        *b = *a;
        const vx_mat *src[7] = {&a->q, &a->k, &a->v, &a->o, &a->gate, &a->up, &a->down};
        vx_mat *dst[7] = {&b->q, &b->k, &b->v, &b->o, &b->gate, &b->up, &b->down};
        for (int i = 0; i < 7; i++) VX_TRY(vx_draft_mat(mem, src[i], dst[i], nthreads, err));
    }
    return VOCIS_OK;
}

/* ---- KV cache ---- */

int vx_kv_parse(const char *s) {
    if (!s || !strcmp(s, "f32") || !strcmp(s, "float32")) return VX_KV_F32;
    if (!strcmp(s, "bf16")) return VX_KV_BF16;
    return -1;
}

const char *vx_kv_name(int kv) { return kv == VX_KV_BF16 ? "bf16" : "f32"; }

void vx_tf_set_kv(vx_tf *tf, int kv) { tf->kv_dtype = kv == VX_KV_BF16 ? VX_BF16 : VX_F32; }

static size_t kv_elem(vx_dtype dt) { return dt == VX_BF16 ? sizeof(uint16_t) : sizeof(float); }

size_t vx_kv_bytes_per_token(const vx_tf *tf) {
    return (size_t)tf->n_layers * 2 * (size_t)tf->n_kv_heads * (size_t)tf->head_dim * kv_elem(tf->kv_dtype);
}

void vx_kv_store(vx_kv_cache *kv, int l, int seq, int64_t pos0, int64_t n, const float *k, const float *v) {
    const size_t i = (size_t)l * (size_t)kv->nseq + (size_t)seq, cnt = (size_t)n * (size_t)kv->kv_dim;
    const size_t at = (size_t)pos0 * (size_t)kv->kv_dim;
    if (kv->dtype == VX_BF16) {
        if (k) vx_f32_to_bf16_n(kv->k16[i] + at, k, cnt, 1);
        if (v) vx_f32_to_bf16_n(kv->v16[i] + at, v, cnt, 1);
        return;
    }
    if (k) memcpy(kv->k[i] + at, k, cnt * sizeof(float));
    if (v) memcpy(kv->v[i] + at, v, cnt * sizeof(float));
}

size_t vx_kv_span_bytes(const vx_kv_cache *kv, int64_t n) {
    return (size_t)kv->n_layers * 2 * (size_t)n * (size_t)kv->kv_dim * kv_elem(kv->dtype);
}

/* The storage of layer l's keys (v = 0) or values (v = 1) of sequence seq. */
static char *kv_store_of(const vx_kv_cache *kv, int l, int seq, int v) {
    const size_t i = (size_t)l * (size_t)kv->nseq + (size_t)seq;
    if (kv->dtype == VX_BF16) return (char *)(v ? kv->v16[i] : kv->k16[i]);
    return (char *)(v ? kv->v[i] : kv->k[i]);
}

void vx_kv_export(const vx_kv_cache *kv, int seq, int64_t n, void *out) {
    const size_t span = (size_t)n * (size_t)kv->kv_dim * kv_elem(kv->dtype);
    char *o = out;
    for (int l = 0; l < kv->n_layers; l++)
        for (int v = 0; v < 2; v++, o += span) memcpy(o, kv_store_of(kv, l, seq, v), span);
}

void *vx_kv_rows(const vx_kv_cache *kv, int l, int seq, int v) { return kv_store_of(kv, l, seq, v); }

size_t vx_kv_row_bytes(const vx_kv_cache *kv) { return (size_t)kv->kv_dim * kv_elem(kv->dtype); }

vocis_status vx_kv_import(vx_kv_cache *kv, int seq, int64_t n, const void *in, vx_err *err) {
    VX_TRY(vx_kv_reserve(kv, n, err));
    const size_t span = (size_t)n * (size_t)kv->kv_dim * kv_elem(kv->dtype);
    const char *p = in;
    for (int l = 0; l < kv->n_layers; l++)
        for (int v = 0; v < 2; v++, p += span) memcpy(kv_store_of(kv, l, seq, v), p, span);
    kv->len[seq] = n;
    return VOCIS_OK;
}

vocis_status vx_kv_fill_synthetic(vx_kv_cache *kv, int64_t ctx, vx_err *err) {
    const int64_t rows = 256, kd = kv->kv_dim;
    if (ctx > kv->cap) return vx_fail(err, VOCIS_E_ARG, "KV cache holds %lld positions, not %lld", (long long)kv->cap,
                                      (long long)ctx);
    float *buf = vx_malloc(err, sizeof(float) * (size_t)(rows * kd), "KV filler");
    if (!buf) return VOCIS_E_NOMEM;
    for (int l = 0; l < kv->n_layers; l++)
        for (int q = 0; q < kv->nseq; q++)
            for (int64_t p0 = 0; p0 < ctx; p0 += rows) {
                const int64_t n = ctx - p0 < rows ? ctx - p0 : rows;
                for (int64_t i = 0; i < n * kd; i++) buf[i] = 0.01f * (float)(((p0 * kd + i) * 7) % 13 - 6);
                vx_kv_store(kv, l, q, p0, n, buf, buf);
            }
    for (int q = 0; q < kv->nseq; q++) kv->len[q] = ctx;
    free(buf);
    return VOCIS_OK;
}

vocis_status vx_kv_init(vx_kv_cache *kv, const vx_tf *tf, int nseq, int64_t max_len, vx_err *err) {
    memset(kv, 0, sizeof *kv);
    kv->n_layers = tf->n_layers;
    kv->nseq = nseq;
    kv->kv_dim = tf->n_kv_heads * tf->head_dim;
    kv->max_len = max_len;
    kv->dtype = tf->kv_dtype == VX_BF16 ? VX_BF16 : VX_F32;
    size_t n = (size_t)tf->n_layers * (size_t)nseq;
    kv->len = vx_calloc(err, (size_t)nseq, sizeof(int64_t), "KV cache");
    kv->k = vx_calloc(err, n, sizeof(float *), "KV cache");
    kv->v = vx_calloc(err, n, sizeof(float *), "KV cache");
    if (kv->dtype == VX_BF16) {
        kv->k16 = vx_calloc(err, n, sizeof(uint16_t *), "KV cache");
        kv->v16 = vx_calloc(err, n, sizeof(uint16_t *), "KV cache");
    }
    if (!kv->len || !kv->k || !kv->v || (kv->dtype == VX_BF16 && (!kv->k16 || !kv->v16))) {
        vx_kv_free(kv);
        return VOCIS_E_NOMEM;
    }
    return VOCIS_OK;
}

void vx_kv_free(vx_kv_cache *kv) {
    size_t n = (size_t)kv->n_layers * (size_t)kv->nseq;
    for (size_t i = 0; kv->k && i < n; i++) free(kv->k[i]);
    for (size_t i = 0; kv->v && i < n; i++) free(kv->v[i]);
    for (size_t i = 0; kv->k16 && i < n; i++) free(kv->k16[i]);
    for (size_t i = 0; kv->v16 && i < n; i++) free(kv->v16[i]);
    free(kv->k);
    free(kv->v);
    free(kv->k16);
    free(kv->v16);
    free(kv->len);
    memset(kv, 0, sizeof *kv);
}

void vx_kv_reset(vx_kv_cache *kv, int seq) { kv->len[seq] = 0; }

vocis_status vx_kv_reserve(vx_kv_cache *kv, int64_t positions, vx_err *err) {
    if (kv->max_len > 0 && positions > kv->max_len)
        return vx_fail(err, VOCIS_E_ARG, "sequence of %lld positions exceeds the model context of %lld",
                       (long long)positions, (long long)kv->max_len);
    if (positions <= kv->cap) return VOCIS_OK;
    int64_t cap = kv->cap ? kv->cap : 64;
    while (cap < positions) cap = cap < VX_KV_DOUBLING_LIMIT ? cap * 2 : cap + VX_KV_DOUBLING_LIMIT;
    if (kv->max_len > 0 && cap > kv->max_len) cap = kv->max_len;
    size_t bytes = (size_t)cap * (size_t)kv->kv_dim * kv_elem(kv->dtype);
    size_t n = (size_t)kv->n_layers * (size_t)kv->nseq;
    for (size_t i = 0; i < 2 * n; i++) {
        void **slot = kv->dtype == VX_BF16 ? (void **)(i < n ? &kv->k16[i] : &kv->v16[i - n])
                                           : (void **)(i < n ? &kv->k[i] : &kv->v[i - n]);
        void *nb = realloc(*slot, bytes);
        if (!nb)
            return vx_fail(err, VOCIS_E_NOMEM, "out of memory growing the KV cache to %lld positions",
                           (long long)cap);
        *slot = nb;
    }
    kv->cap = cap;
    return VOCIS_OK;
}

/* ---- forward ---- */

typedef struct scratch {
    float *xn, *q, *k, *v, *att, *tmp, *gate, *up;
} scratch;

/* One layer over the rows of nseq sequences, ns[s] positions each, the
 * sequences' rows one after another. steps = 0: the positions of a sequence
 * go through attention together (prefill, plain decode). steps = 1: each
 * position's arithmetic is that of its own one-position forward
 * (speculative verify): the linears through vx_linear_rows (row-exact at any
 * row count) and one single-query attention per position over the keys up
 * to it (vx_attention's paths depend on the query rows). The activation runs
 * row by row in both modes, so that a row's vector body and scalar tail do
 * not depend on the rows next to it. */
static void attend(const vx_tf *tf, vx_dtype kv_dtype, const vx_attn_seq *at, int *na, int64_t nq, int nthreads) {
    const int hd = tf->head_dim;
    vx_attention_kv_seqs(at, *na, kv_dtype, nq, tf->n_heads, tf->n_kv_heads, hd, (int64_t)tf->n_kv_heads * hd,
                         1.0f / sqrtf((float)hd), 1, nthreads);
    *na = 0;
}

/* Sequence si's cache: kvs[si] (several caches) or kvs[0] (one cache for all). */
typedef struct kv_set {
    vx_kv_cache *const *kvs;
    int many;
} kv_set;

static vx_kv_cache *kv_of(kv_set k, int si) { return k.kvs[k.many ? si : 0]; }

static void layer_forward(const vx_tf *tf, const vx_tf_layer *ly, int l, kv_set kvs, const int *seqs, int nseq,
                          const int64_t *ns, int steps, float *x, scratch *s, int nthreads) {
    const int D = tf->dim, hd = tf->head_dim;
    const int64_t qd = (int64_t)tf->n_heads * hd, kvd = (int64_t)tf->n_kv_heads * hd, F = tf->ffn_dim;
    void (*linear)(float *, const float *, int64_t, const vx_mat *, const float *, int) =
        steps ? vx_linear_rows : vx_linear;
    int64_t M = 0;
    for (int si = 0; si < nseq; si++) M += ns[si];

    vx_rmsnorm(s->xn, x, ly->in_norm, M, D, tf->norm_eps);
    linear(s->q, s->xn, M, &ly->q, ly->q_bias, nthreads);
    linear(s->k, s->xn, M, &ly->k, ly->k_bias, nthreads);
    linear(s->v, s->xn, M, &ly->v, ly->v_bias, nthreads);

    /* attention entries go in groups of up to 8 (a decode step's rows: one pool region);
     * an entry is a sequence's positions (steps = 0) or one position (steps = 1) */
    vx_attn_seq at[8];
    int na = 0;
    vx_dtype at_dtype = VX_F32; /* a group's caches share their storage type */
    int64_t r0 = 0;
    for (int si = 0; si < nseq; si++) {
        vx_kv_cache *kv = kv_of(kvs, si);
        const int slot = seqs ? seqs[si] : si;
        const int64_t pos0 = kv->len[slot], n = ns[si];
        if (na && kv->dtype != at_dtype) attend(tf, at_dtype, at, &na, steps ? 1 : ns[si - 1], nthreads);
        at_dtype = kv->dtype;
        for (int64_t i = 0; i < n; i++) {
            vx_rope_apply(s->q + (r0 + i) * qd, tf->n_heads, hd, tf->inv_freq, pos0 + i);
            vx_rope_apply(s->k + (r0 + i) * kvd, tf->n_kv_heads, hd, tf->inv_freq, pos0 + i);
        }
        /* the new positions go into the cache (rounded for bf16) and attention reads them from there */
        vx_kv_store(kv, l, slot, pos0, n, s->k + r0 * kvd, s->v + r0 * kvd);
        const size_t c = (size_t)l * kv->nseq + slot;
        const int bf = kv->dtype == VX_BF16;
        const void *kc = bf ? (const void *)kv->k16[c] : kv->k[c], *vc = bf ? (const void *)kv->v16[c] : kv->v[c];
        for (int64_t i = 0; i < (steps ? n : 1); i++) {
            const int64_t r = r0 + i;
            at[na++] = (vx_attn_seq){s->att + r * qd, s->q + r * qd, kc, vc, steps ? pos0 + i + 1 : pos0 + n};
            if (na == 8) attend(tf, at_dtype, at, &na, steps ? 1 : n, nthreads);
        }
        r0 += n;
    }
    if (na) attend(tf, at_dtype, at, &na, steps ? 1 : ns[0], nthreads); /* steps = 0: every ns[s] is the same */
    linear(s->tmp, s->att, M, &ly->o, NULL, nthreads);
    vx_add(x, s->tmp, M * D);

    vx_rmsnorm(s->xn, x, ly->post_norm, M, D, tf->norm_eps);
    linear(s->gate, s->xn, M, &ly->gate, NULL, nthreads);
    linear(s->up, s->xn, M, &ly->up, NULL, nthreads);
    for (int64_t r = 0; r < M; r++) vx_swiglu(s->gate + r * F, s->gate + r * F, s->up + r * F, F);
    linear(s->tmp, s->gate, M, &ly->down, NULL, nthreads);
    vx_add(x, s->tmp, M * D);
}

static vocis_status scratch_alloc(const vx_tf *tf, int64_t M, scratch *s, float **xc, vx_err *err) {
    const int D = tf->dim;
    const int64_t qd = (int64_t)tf->n_heads * tf->head_dim, kvd = (int64_t)tf->n_kv_heads * tf->head_dim,
                  F = tf->ffn_dim;
    size_t floats = (size_t)M * (size_t)(D + qd + 2 * kvd + qd + D + 2 * F) + (size_t)M * D;
    float *p = vx_malloc(err, floats * sizeof(float), "transformer scratch");
    if (!p) return VOCIS_E_NOMEM;
    s->xn = p, p += M * D;
    s->q = p, p += M * qd;
    s->k = p, p += M * kvd;
    s->v = p, p += M * kvd;
    s->att = p, p += M * qd;
    s->tmp = p, p += M * D;
    s->gate = p, p += M * F;
    s->up = p, p += M * F;
    *xc = p; /* [M][D] */
    return VOCIS_OK;
}

/* Checks the slots and reserves each cache for ns[s] (or n) more positions of its sequences. */
static vocis_status reserve_for(kv_set kvs, const int *seqs, int nseq, const int64_t *ns, int64_t n, vx_err *err) {
    for (int si = 0; si < nseq; si++) {
        vx_kv_cache *kv = kv_of(kvs, si);
        int slot = seqs ? seqs[si] : si;
        if (slot < 0 || slot >= kv->nseq) return vx_fail(err, VOCIS_E_ARG, "KV cache has no sequence %d", slot);
        const int64_t m = ns ? ns[si] : n;
        VX_TRY(vx_kv_reserve(kv, kv->len[slot] + m, err));
    }
    return VOCIS_OK;
}

vocis_status vx_tf_forward(const vx_tf *tf, vx_kv_cache *kv, const int *seqs, int nseq, int64_t n, float *x,
                           int nthreads, vx_tf_hook hook, void *user, vx_err *err) {
    if (n <= 0 || nseq <= 0) return VOCIS_OK;
    const kv_set kvs = {&kv, 0};
    VX_TRY(reserve_for(kvs, seqs, nseq, NULL, n, err));
    const int D = tf->dim;
    const int64_t chunk = tf->chunk > 0 && tf->chunk < n ? tf->chunk : n;
    int64_t *ns = vx_malloc(err, sizeof(int64_t) * (size_t)nseq, "transformer rows");
    if (!ns) return VOCIS_E_NOMEM;
    scratch s;
    float *xc; /* [nseq][c][D] gather of the current chunk */
    vocis_status st = scratch_alloc(tf, (int64_t)nseq * chunk, &s, &xc, err);
    if (st) {
        free(ns);
        return st;
    }
    for (int64_t c0 = 0; c0 < n; c0 += chunk) {
        const int64_t c = n - c0 < chunk ? n - c0 : chunk;
        for (int si = 0; si < nseq; si++) {
            ns[si] = c;
            memcpy(xc + (size_t)si * c * D, x + ((size_t)si * n + c0) * D, (size_t)c * D * sizeof(float));
        }
        for (int l = 0; l < tf->n_layers; l++) {
            layer_forward(tf, &tf->layers[l], l, kvs, seqs, nseq, ns, 0, xc, &s, nthreads);
            if (hook)
                for (int si = 0; si < nseq; si++) {
                    int slot = seqs ? seqs[si] : si;
                    hook(user, l, si, kv->len[slot], c, xc + (size_t)si * c * D);
                }
        }
        for (int si = 0; si < nseq; si++) {
            kv->len[seqs ? seqs[si] : si] += c;
            memcpy(x + ((size_t)si * n + c0) * D, xc + (size_t)si * c * D, (size_t)c * D * sizeof(float));
        }
    }
    free(s.xn), free(ns);
    return VOCIS_OK;
}

static vocis_status forward_steps(const vx_tf *tf, kv_set kvs, const int *seqs, int nseq, const int64_t *ns, float *x,
                                  int nthreads, vx_err *err) {
    int64_t M = 0;
    for (int si = 0; si < nseq; si++) {
        if (ns[si] < 0) return vx_fail(err, VOCIS_E_ARG, "negative position count for sequence %d", si);
        M += ns[si];
    }
    if (M == 0) return VOCIS_OK;
    VX_TRY(reserve_for(kvs, seqs, nseq, ns, 0, err));
    scratch s;
    float *xc;
    VX_TRY(scratch_alloc(tf, M, &s, &xc, err));
    (void)xc;
    for (int l = 0; l < tf->n_layers; l++) layer_forward(tf, &tf->layers[l], l, kvs, seqs, nseq, ns, 1, x, &s, nthreads);
    for (int si = 0; si < nseq; si++) kv_of(kvs, si)->len[seqs ? seqs[si] : si] += ns[si];
    free(s.xn);
    return VOCIS_OK;
}

vocis_status vx_tf_forward_steps(const vx_tf *tf, vx_kv_cache *kv, const int *seqs, int nseq, const int64_t *ns,
                                 float *x, int nthreads, vx_err *err) {
    return forward_steps(tf, (kv_set){&kv, 0}, seqs, nseq, ns, x, nthreads, err);
}

vocis_status vx_tf_forward_steps_kvs(const vx_tf *tf, vx_kv_cache *const *kvs, const int *seqs, int nseq,
                                     const int64_t *ns, float *x, int nthreads, vx_err *err) {
    return forward_steps(tf, (kv_set){kvs, 1}, seqs, nseq, ns, x, nthreads, err);
}

void vx_tf_final_norm(const vx_tf *tf, float *y, const float *x, int64_t rows) {
    if (tf->final_norm) vx_rmsnorm(y, x, tf->final_norm, rows, tf->dim, tf->norm_eps);
    else if (y != x) memcpy(y, x, (size_t)rows * tf->dim * sizeof(float));
}

vocis_status vx_tf_record_init(vx_tf_record *r, const vx_tf *tf, int nseq, int64_t len, vx_err *err) {
    memset(r, 0, sizeof *r);
    r->layers = vx_calloc(err, (size_t)tf->n_layers, sizeof(float *), "layer record");
    if (!r->layers) return VOCIS_E_NOMEM;
    r->n_layers = tf->n_layers, r->nseq = nseq, r->len = len, r->dim = tf->dim;
    for (int l = 0; l < tf->n_layers; l++)
        if (!(r->layers[l] = vx_malloc(err, sizeof(float) * (size_t)nseq * (size_t)(len * tf->dim), "layer record"))) {
            vx_tf_record_free(r);
            return VOCIS_E_NOMEM;
        }
    return VOCIS_OK;
}

void vx_tf_record_hook(void *user, int layer, int seq, int64_t pos0, int64_t n, const float *x) {
    vx_tf_record *r = user;
    memcpy(r->layers[layer] + ((size_t)seq * r->len + pos0) * r->dim, x, sizeof(float) * (size_t)(n * r->dim));
}

void vx_tf_record_free(vx_tf_record *r) {
    for (int l = 0; r->layers && l < r->n_layers; l++) free(r->layers[l]);
    free(r->layers);
    memset(r, 0, sizeof *r);
}

vocis_status vx_tf_forward_pairs(const vx_tf *tf, vx_kv_cache *const *kvs, float *const *pairs, int n, int nthreads,
                                 vx_err *err) {
    if (n <= 0) return VOCIS_OK;
    const int64_t H = tf->dim;
    float *x = malloc(sizeof(float) * (size_t)(2 * n * H));
    vx_kv_cache **kv2 = malloc(sizeof *kv2 * (size_t)(2 * n));
    int *seqs = malloc(sizeof(int) * (size_t)(2 * n));
    int64_t *ns = malloc(sizeof(int64_t) * (size_t)(2 * n));
    vocis_status st = x && kv2 && seqs && ns ? VOCIS_OK : vx_fail(err, VOCIS_E_NOMEM, "out of memory");
    for (int i = 0; i < n && !st; i++) {
        memcpy(x + (size_t)(2 * i) * H, pairs[i], sizeof(float) * (size_t)(2 * H));
        for (int j = 0; j < 2; j++) kv2[2 * i + j] = kvs[i], seqs[2 * i + j] = j, ns[2 * i + j] = 1;
    }
    if (!st) st = vx_tf_forward_steps_kvs(tf, kv2, seqs, 2 * n, ns, x, nthreads, err);
    for (int i = 0; i < n && !st; i++) memcpy(pairs[i], x + (size_t)(2 * i) * H, sizeof(float) * (size_t)(2 * H));
    free(x), free(kv2), free(seqs), free(ns);
    return st;
}
