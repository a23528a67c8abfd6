/* Chatterbox-Turbo / -Nano T3 (GPT-2 backbone): loading, forward with a KV
 * cache, conditioning and T3.inference_turbo (spec chatterbox.md §13). */
#include "models/chatterbox/t3_gpt2.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/threads.h"
#include "io/jsonfile.h"
#include "kernels/kernels.h"
#include "base/hugemem.h"
#include "kernels/precision.h"
#include "nn/prefix_cache.h"
#include "nn/sampling.h"
#include "models/chatterbox/t3.h"
#include "nn/transformer.h"

#define GPT2_HEAD_DIM 64

static int file_exists(const char *dir, const char *name) {
    char p[4200];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    return access(p, F_OK) == 0;
}

vocis_status vx_t3_gpt2_file(const char *dir, const char **name, vx_err *err) {
    const int turbo = file_exists(dir, "t3_turbo_v1.safetensors"), nano = file_exists(dir, "t3_nano_v1.safetensors");
    *name = NULL;
    if (turbo && nano)
        return vx_fail(err, VOCIS_E_FORMAT,
                       "%s: holds both t3_turbo_v1.safetensors (Turbo) and t3_nano_v1.safetensors (Nano): "
                       "a folder mixing two model variants; keep one", dir);
    if (turbo) *name = "t3_turbo_v1.safetensors";
    if (nano) *name = "t3_nano_v1.safetensors";
    return VOCIS_OK;
}

static void *own(vx_t3_gpt2 *t, void *p) {
    if (!p) return NULL;
    void **n = realloc(t->owned, sizeof(void *) * (size_t)(t->n_owned + 1));
    if (!n) {
        free(p);
        return NULL;
    }
    t->owned = n;
    t->owned[t->n_owned++] = p;
    return p;
}

static vocis_status vec(vx_t3_gpt2 *t, const vx_weights *w, const char *name, int64_t n, const float **out,
                        vx_err *err) {
    vx_tensor x;
    VX_TRY(vx_weights_expect(w, VX_FLOATS, VX_DIMS(n), &x, err, "%s", name));
    if (x.dtype == VX_F32) {
        *out = x.data;
        return VOCIS_OK;
    }
    float *p = own(t, malloc(sizeof(float) * (size_t)n));
    if (!p) return vx_fail(err, VOCIS_E_NOMEM, "out of memory (%s)", name);
    vx_to_f32(p, x.data, x.dtype, (size_t)n);
    *out = p;
    return VOCIS_OK;
}

/* A GPT-2 Conv1D weight (in, out) as a [out, in] matrix in the file dtype. */
static vocis_status conv1d(vx_t3_gpt2 *t, const vx_weights *w, const char *name, int64_t in, int64_t out, vx_mat *m,
                           vx_err *err) {
    vx_tensor x;
    VX_TRY(vx_weights_expect(w, VX_FLOATS, VX_DIMS(in, out), &x, err, "%s", name));
    vx_mat view = vx_mat_of(&x); /* the precision policy first (it keeps the layout), then the repack */
    /* q8 blocks run along a row of the [out, in] matrix: the policy gives bf16
     * for the [in, out] view, and the repacked copy is quantized */
    const int q8 = vx_weights_precision(w) == VX_PREC_Q8;
    VX_TRY(vx_weights_mat_policy(w, &view, (q8 ? VX_W_MATRIX : VX_W_TF_LINEAR) | VX_W_REPACKED, err));
    const size_t es = vx_dtype_size(view.dtype);
    char *p = q8 ? malloc(es * (size_t)(in * out)) : own(t, malloc(es * (size_t)(in * out)));
    if (!p) return vx_fail(err, VOCIS_E_NOMEM, "out of memory (%s)", name);
    const char *src = view.data;
    for (int64_t i = 0; i < in; i++)
        for (int64_t o = 0; o < out; o++) memcpy(p + (o * in + i) * es, src + (i * out + o) * es, es);
    *m = (vx_mat){view.dtype, out, in, p};
    if (q8) {
        void *qb = own(t, malloc(vx_q8_bytes(out, in)));
        if (qb) *m = vx_q8_quantize(qb, m, vx_default_threads()), m->act_bf16 = 1;
        free(p);
        if (!qb) return vx_fail(err, VOCIS_E_NOMEM, "out of memory (%s)", name);
    }
    return VOCIS_OK;
}

static vocis_status mat(const vx_weights *w, const char *name, int64_t rows, int64_t cols, vx_mat *m, vx_err *err) {
    vx_tensor x;
    VX_TRY(vx_weights_expect(w, VX_FLOATS, VX_DIMS(rows, cols), &x, err, "%s", name));
    *m = vx_mat_of(&x);
    return VOCIS_OK;
}

vocis_status vx_t3_gpt2_init(vx_t3_gpt2 *t, const vx_weights *w, const vx_cb_config *cfg, int n_heads, vx_err *err) {
    memset(t, 0, sizeof *t);
    t->cfg = *cfg;
    t->eps = 1e-5f;
    const char *path = vx_weights_path(w);
    vx_tensor x;
    vocis_status st;
    char name[128];
#define TRY(e)                                                                                                         \
    if ((st = (e)) != VOCIS_OK) goto fail
    TRY(vx_weights_expect(w, VX_FLOATS, VX_DIMS(-1, -1), &x, err, "tfmr.wpe.weight"));
    const int64_t D = x.shape[1];
    t->wpe = vx_mat_of(&x);
    t->dim = (int)D;
    int L = 0;
    while (snprintf(name, sizeof name, "tfmr.h.%d.ln_1.weight", L), vx_weights_has(w, name)) L++;
    if (L == 0) {
        st = vx_fail(err, VOCIS_E_SHAPE, "%s: missing tensor 'tfmr.h.0.ln_1.weight' (not a GPT-2 T3)", path);
        goto fail;
    }
    t->n_layers = L;
    t->n_heads = n_heads > 0 ? n_heads : (int)(D / GPT2_HEAD_DIM);
    if (t->n_heads < 1 || D % t->n_heads) {
        st = vx_fail(err, VOCIS_E_SHAPE, "%s: width %lld does not split into %d attention heads", path, (long long)D,
                     t->n_heads);
        goto fail;
    }
    t->head_dim = (int)(D / t->n_heads);
    TRY(vx_weights_expect(w, VX_FLOATS, VX_DIMS(D, -1), &x, err, "tfmr.h.0.mlp.c_fc.weight"));
    const int64_t F = t->ffn = (int)x.shape[1];
    t->layers = own(t, calloc((size_t)L, sizeof *t->layers));
    if (!t->layers) {
        st = vx_fail(err, VOCIS_E_NOMEM, "out of memory (T3 layers)");
        goto fail;
    }
    for (int l = 0; l < L; l++) {
        vx_gpt2_layer *ly = &t->layers[l];
#define N(s) (snprintf(name, sizeof name, "tfmr.h.%d.%s", l, s), name)
        TRY(vec(t, w, N("ln_1.weight"), D, &ly->ln1_w, err));
        TRY(vec(t, w, N("ln_1.bias"), D, &ly->ln1_b, err));
        TRY(vec(t, w, N("ln_2.weight"), D, &ly->ln2_w, err));
        TRY(vec(t, w, N("ln_2.bias"), D, &ly->ln2_b, err));
        TRY(conv1d(t, w, N("attn.c_attn.weight"), D, 3 * D, &ly->attn, err));
        TRY(vec(t, w, N("attn.c_attn.bias"), 3 * D, &ly->attn_b, err));
        TRY(conv1d(t, w, N("attn.c_proj.weight"), D, D, &ly->proj, err));
        TRY(vec(t, w, N("attn.c_proj.bias"), D, &ly->proj_b, err));
        TRY(conv1d(t, w, N("mlp.c_fc.weight"), D, F, &ly->fc, err));
        TRY(vec(t, w, N("mlp.c_fc.bias"), F, &ly->fc_b, err));
        TRY(conv1d(t, w, N("mlp.c_proj.weight"), F, D, &ly->fc_proj, err));
        TRY(vec(t, w, N("mlp.c_proj.bias"), D, &ly->fc_proj_b, err));
#undef N
    }
    TRY(vec(t, w, "tfmr.ln_f.weight", D, &t->lnf_w, err));
    TRY(vec(t, w, "tfmr.ln_f.bias", D, &t->lnf_b, err));
    TRY(mat(w, "text_emb.weight", -1, D, &t->text_emb, err));
    TRY(mat(w, "speech_emb.weight", -1, D, &t->speech_emb, err));
    TRY(mat(w, "speech_head.weight", -1, D, &t->speech_head, err));
    TRY(vx_weights_mat_policy(w, &t->speech_head, VX_W_MATRIX, err));
    TRY(vec(t, w, "speech_head.bias", t->speech_head.rows, &t->speech_head_b, err));
    TRY(vx_weights_expect(w, VX_FLOATS, VX_DIMS(D, -1), &x, err, "cond_enc.spkr_enc.weight"));
    t->spkr_enc = vx_mat_of(&x);
    t->speaker_dim = (int)x.shape[1];
    TRY(vec(t, w, "cond_enc.spkr_enc.bias", D, &t->spkr_b, err));
    if (t->speech_head.rows <= cfg->stop_speech_token || t->speech_emb.rows <= cfg->start_speech_token) {
        st = vx_fail(err, VOCIS_E_SHAPE, "%s: speech vocabulary of %lld rows does not hold the start/stop tokens %d/%d",
                     path, (long long)t->speech_head.rows, cfg->start_speech_token, cfg->stop_speech_token);
        goto fail;
    }
    if (vx_weights_has(w, "cond_enc.perceiver.pre_attention_query") || vx_weights_has(w, "tfmr.layers.0.input_layernorm.weight")) {
        st = vx_fail(err, VOCIS_E_FORMAT, "%s: holds English/Multilingual (Llama) T3 tensors, not a Turbo/Nano GPT-2 T3",
                     path);
        goto fail;
    }
#undef TRY
    return VOCIS_OK;
fail:
    vx_t3_gpt2_free(t);
    return st ? st : VOCIS_E_INTERNAL;
}

vocis_status vx_t3_gpt2_load(vx_t3_gpt2 *t, const char *dir, const vx_cb_config *cfg, int precision, vx_err *err) {
    const char *file;
    VX_TRY(vx_t3_gpt2_file(dir, &file, err));
    if (!file) return vx_fail(err, VOCIS_E_IO, "%s: no t3_turbo_v1.safetensors or t3_nano_v1.safetensors", dir);
    const int nano = strstr(file, "nano") != NULL;
    const int heads = cfg->gpt2_heads[nano]; /* 0: width / 64 */
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    vx_weights *w;
    VX_TRY(vx_weights_open(path, &w, err));
    if (precision > 0) vx_weights_set_precision(w, precision);
    vocis_status st = vx_t3_gpt2_init(t, w, cfg, heads, err);
    if (st) {
        vx_weights_close(w);
        return st;
    }
    t->w = w;
    t->nano = nano;
    return VOCIS_OK;
}

static void draft_free(vx_t3_gpt2 *d);

vocis_status vx_t3_gpt2_set_voice_cache(vx_t3_gpt2 *t, size_t max_bytes, vx_err *err) {
    vx_prefix_cache_free(t->prefix_cache);
    t->prefix_cache = NULL;
    if (max_bytes && !(t->prefix_cache = vx_prefix_cache_new(max_bytes)))
        return vx_fail(err, VOCIS_E_NOMEM, "out of memory (voice cache)");
    return VOCIS_OK;
}

void vx_t3_gpt2_free(vx_t3_gpt2 *t) {
    vx_prefix_cache_free(t->prefix_cache);
    draft_free(t->draft);
    for (int i = 0; i < t->n_owned; i++) free(t->owned[i]);
    free(t->owned);
    vx_weights_close(t->w);
    memset(t, 0, sizeof *t);
}

/* ---- forward ---- */

vocis_status vx_gpt2_kv_init(vx_gpt2_kv *kv, const vx_t3_gpt2 *t, int64_t cap, vx_err *err) {
    memset(kv, 0, sizeof *kv);
    if (cap > t->wpe.rows) cap = t->wpe.rows;
    const size_t n = (size_t)t->n_layers * (size_t)cap * (size_t)t->dim;
    kv->k = vx_malloc(err, n * sizeof(float), "T3 KV cache");
    kv->v = vx_malloc(err, n * sizeof(float), "T3 KV cache");
    if (!kv->k || !kv->v) {
        vx_gpt2_kv_free(kv);
        return VOCIS_E_NOMEM;
    }
    kv->cap = cap;
    return VOCIS_OK;
}

void vx_gpt2_kv_free(vx_gpt2_kv *kv) {
    free(kv->k);
    free(kv->v);
    memset(kv, 0, sizeof *kv);
}

/* ns[s] positions continuing each cache kvs[s], their rows one after the
 * other in x. steps = 0 (one sequence only): as one batch (prefill, plain
 * decode). steps = 1: each position's arithmetic is that of its own
 * one-position forward (speculative verify, a batch of requests): the
 * linears through vx_linear_rows (row-exact for any count), the activation
 * row by row (its vector body and scalar tail split a row differently than
 * n rows), and one nq = 1 attention per position over its sequence's keys
 * up to it (vx_attention's paths depend on nq: key splits below 4 rows,
 * blocked or GEMM kernels from 16), all in one pool region. LayerNorm and
 * the residual adds are per element or row either way. */
static vocis_status gpt2_forward(const vx_t3_gpt2 *t, vx_gpt2_kv *const *kvs, const int64_t *ns, int nseq, float *x,
                                 float *record, int steps, int nthreads, vx_err *err) {
    const int64_t D = t->dim, F = t->ffn;
    int64_t n = 0;
    for (int s = 0; s < nseq; s++) {
        const vx_gpt2_kv *kv = kvs[s];
        if (kv->len + ns[s] > kv->cap)
            return vx_fail(err, VOCIS_E_ARG,
                           "T3 sequence of %lld positions exceeds the %lld positions of the model (wpe)",
                           (long long)(kv->len + ns[s]), (long long)(kv->cap < t->wpe.rows ? kv->cap : t->wpe.rows));
        n += ns[s];
    }
    if (n <= 0) return VOCIS_OK;
    void (*linear)(float *, const float *, int64_t, const vx_mat *, const float *, int) =
        steps ? vx_linear_rows : vx_linear;
    float *buf = vx_malloc(err, sizeof(float) * (size_t)n * (size_t)(D + 3 * D + 3 * D + F), "T3 scratch");
    vx_attn_seq *seq = steps ? vx_malloc(err, sizeof *seq * (size_t)n, "T3 attention rows") : NULL;
    if (!buf || (steps && !seq)) {
        free(buf), free(seq);
        return VOCIS_E_NOMEM;
    }
    float *h = buf, *qkv = h + n * D, *q = qkv + 3 * n * D, *att = q + n * D, *ff = att + n * D;
    float *tmp = ff + n * F; /* [n][D] */
    const float scale = 1.0f / sqrtf((float)t->head_dim);
    for (int s = 0, i = 0; s < nseq; s++)
        for (int64_t j = 0; j < ns[s]; j++, i++) vx_t3_embed(&t->wpe, kvs[s]->len + j, x + i * D, 1);
    for (int l = 0; l < t->n_layers; l++) {
        const vx_gpt2_layer *ly = &t->layers[l];
        vx_layernorm(h, x, ly->ln1_w, ly->ln1_b, n, D, t->eps);
        linear(qkv, h, n, &ly->attn, ly->attn_b, nthreads);
        float *kc = NULL, *vc = NULL;
        for (int s = 0, i = 0; s < nseq; s++) {
            const vx_gpt2_kv *kv = kvs[s];
            kc = kv->k + (size_t)l * kv->cap * D, vc = kv->v + (size_t)l * kv->cap * D;
            for (int64_t j = 0; j < ns[s]; j++, i++) {
                const int64_t p = kv->len + j;
                memcpy(q + i * D, qkv + i * 3 * D, sizeof(float) * (size_t)D);
                memcpy(kc + p * D, qkv + i * 3 * D + D, sizeof(float) * (size_t)D);
                memcpy(vc + p * D, qkv + i * 3 * D + 2 * D, sizeof(float) * (size_t)D);
                if (steps) seq[i] = (vx_attn_seq){att + i * D, q + i * D, kc, vc, p + 1};
            }
        }
        if (steps)
            vx_attention_kv_seqs(seq, (int)n, VX_F32, 1, t->n_heads, t->n_heads, t->head_dim, D, scale, 1, nthreads);
        else /* one sequence */
            vx_attention(att, q, kc, vc, n, kvs[0]->len + n, t->n_heads, t->n_heads, t->head_dim, D, scale, 1,
                         nthreads);
        linear(tmp, att, n, &ly->proj, ly->proj_b, nthreads);
        vx_add(x, tmp, n * D);
        vx_layernorm(h, x, ly->ln2_w, ly->ln2_b, n, D, t->eps);
        linear(ff, h, n, &ly->fc, ly->fc_b, nthreads);
        for (int64_t i = 0; i < (steps ? n : 1); i++) vx_gelu_tanh(ff + i * F, steps ? F : n * F);
        linear(tmp, ff, n, &ly->fc_proj, ly->fc_proj_b, nthreads);
        vx_add(x, tmp, n * D);
        if (record) memcpy(record + (size_t)l * n * D, x, sizeof(float) * (size_t)(n * D));
    }
    for (int s = 0; s < nseq; s++) kvs[s]->len += ns[s];
    free(buf), free(seq);
    return VOCIS_OK;
}

vocis_status vx_t3_gpt2_forward(const vx_t3_gpt2 *t, vx_gpt2_kv *kv, int64_t n, float *x, float *record, int nthreads,
                                vx_err *err) {
    return gpt2_forward(t, &kv, &n, 1, x, record, 0, nthreads, err);
}

vocis_status vx_t3_gpt2_forward_steps(const vx_t3_gpt2 *t, vx_gpt2_kv *kv, int64_t n, float *x, int nthreads,
                                      vx_err *err) {
    return gpt2_forward(t, &kv, &n, 1, x, NULL, 1, nthreads, err);
}

vocis_status vx_t3_gpt2_forward_seqs(const vx_t3_gpt2 *t, vx_gpt2_kv *const *kvs, const int64_t *ns, int nseq,
                                     float *x, int nthreads, vx_err *err) {
    return gpt2_forward(t, kvs, ns, nseq, x, NULL, 1, nthreads, err);
}

vocis_status vx_t3_gpt2_logits_rows(const vx_t3_gpt2 *t, const float *h, int64_t n, float *logits, int nthreads,
                                    vx_err *err) {
    float *y = vx_malloc(err, sizeof(float) * (size_t)n * (size_t)t->dim, "T3 logits rows");
    if (!y) return VOCIS_E_NOMEM;
    for (int64_t i = 0; i < n; i++)
        vx_layernorm(y + i * t->dim, h + i * t->dim, t->lnf_w, t->lnf_b, 1, t->dim, t->eps);
    vx_linear_rows(logits, y, n, &t->speech_head, t->speech_head_b, nthreads);
    free(y);
    return VOCIS_OK;
}

void vx_t3_gpt2_logits(const vx_t3_gpt2 *t, const float *h, float *logits, float *hn, int nthreads) {
    float buf[8192], *y = hn ? hn : (t->dim <= 8192 ? buf : malloc(sizeof(float) * (size_t)t->dim));
    if (!y) return;
    vx_layernorm(y, h, t->lnf_w, t->lnf_b, 1, t->dim, t->eps);
    vx_linear(logits, y, 1, &t->speech_head, t->speech_head_b, nthreads);
    if (y != buf && y != hn) free(y);
}

/* ---- conditioning ---- */

int vx_t3_gpt2_cond_len(int n_prompt) { return 1 + (n_prompt > 0 ? n_prompt : 0); }

static void embed(const vx_mat *table, int64_t row, float *out) {
    const size_t D = (size_t)table->cols;
    vx_to_f32(out, (const char *)table->data + (size_t)row * D * vx_dtype_size(table->dtype), table->dtype, D);
}

vocis_status vx_t3_gpt2_cond(const vx_t3_gpt2 *t, const float *speaker_emb, const int64_t *prompt, int n_prompt,
                             float *cond, int nthreads, vx_err *err) {
    for (int i = 0; i < t->speaker_dim; i++)
        if (!isfinite(speaker_emb[i])) return vx_fail(err, VOCIS_E_ARG, "speaker_emb[%d] is not a finite number", i);
    for (int j = 0; j < n_prompt; j++)
        if (prompt[j] < 0 || prompt[j] >= t->speech_emb.rows)
            return vx_fail(err, VOCIS_E_ARG, "cond_prompt_speech_tokens[%d] = %lld is outside [0, %lld)", j,
                           (long long)prompt[j], (long long)t->speech_emb.rows);
    vx_linear(cond, speaker_emb, 1, &t->spkr_enc, t->spkr_b, nthreads);
    for (int j = 0; j < n_prompt; j++) embed(&t->speech_emb, prompt[j], cond + (size_t)(1 + j) * t->dim);
    return VOCIS_OK;
}

vocis_status vx_t3_gpt2_prefill_embeds(const vx_t3_gpt2 *t, const float *speaker_emb, const int64_t *prompt,
                                       int n_prompt, const int32_t *text, int n_text, float *x, int nthreads,
                                       vx_err *err) {
    const int lc = vx_t3_gpt2_cond_len(n_prompt);
    for (int i = 0; i < n_text; i++)
        if (text[i] < 0 || text[i] >= t->text_emb.rows)
            return vx_fail(err, VOCIS_E_ARG, "text token %d is outside the vocabulary of %lld", text[i],
                           (long long)t->text_emb.rows);
    VX_TRY(vx_t3_gpt2_cond(t, speaker_emb, prompt, n_prompt, x, nthreads, err));
    for (int i = 0; i < n_text; i++) embed(&t->text_emb, text[i], x + (size_t)(lc + i) * t->dim);
    embed(&t->speech_emb, t->cfg.start_speech_token, x + (size_t)(lc + n_text) * t->dim);
    return VOCIS_OK;
}

/* ---- sampling processors ---- */

static int cmp_desc(const void *a, const void *b) {
    float x = *(const float *)a, y = *(const float *)b;
    return x < y ? 1 : x > y ? -1 : 0;
}

void vx_logits_top_k(float *logits, int n, int k, float *scratch) {
    if (k <= 0 || k >= n) return;
    memcpy(scratch, logits, sizeof(float) * (size_t)n);
    /* the k-th largest value (quickselect would do; the vocabulary is small) */
    qsort(scratch, (size_t)n, sizeof(float), cmp_desc);
    const float kth = scratch[k - 1];
    for (int i = 0; i < n; i++)
        if (logits[i] < kth) logits[i] = -INFINITY;
}

static void process(const vx_turbo_sampling *s, float *l, int V, const int32_t *hist, size_t nhist, float *scratch,
                    void *top_p_ws) {
    if (s->temperature > 0 && s->temperature != 1.0f) vx_logits_temperature(l, V, s->temperature);
    if (s->top_k > 0) vx_logits_top_k(l, V, s->top_k, scratch);
    if (s->top_p < 1.0f) vx_logits_top_p_ws(l, V, s->top_p, top_p_ws);
    if (s->repetition_penalty != 1.0f) vx_logits_repetition_penalty(l, V, hist, nhist, s->repetition_penalty);
}

/* ---- speculative decoding's draft ---- */

static void draft_free(vx_t3_gpt2 *d) {
    if (!d) return;
    for (int i = 0; i < d->n_owned; i++) free(d->owned[i]);
    free(d->owned);
    vx_draft_mem_free(&d->draft_mem);
    free(d);
}

/* The draft: t with the four linears of every block and the speech head in
 * the draft format (vx_draft_mat), everything else (embeddings, norms, biases) shared with t. The one
 * place that decides the draft's format. */
static vocis_status draft_build(const vx_t3_gpt2 *t, vx_t3_gpt2 **out, int nthreads, vx_err *err) {
    vx_t3_gpt2 *d = malloc(sizeof *d);
    if (!d) return vx_fail(err, VOCIS_E_NOMEM, "out of memory (T3 draft)");
    *d = *t;
    d->w = NULL, d->owned = NULL, d->n_owned = 0, d->draft = NULL;
    d->draft_mem = (vx_draft_mem){0};
    vocis_status st = VOCIS_OK;
    if (!(d->layers = own(d, malloc(sizeof *d->layers * (size_t)t->n_layers))))
        st = vx_fail(err, VOCIS_E_NOMEM, "out of memory (T3 draft)");
    for (int l = 0; l < t->n_layers && !st; l++) {
        const vx_gpt2_layer *a = &t->layers[l];
        vx_gpt2_layer *b = &d->layers[l];
        *b = *a;
        if (!st) st = vx_draft_mat(&d->draft_mem, &a->attn, &b->attn, nthreads, err);
        if (!st) st = vx_draft_mat(&d->draft_mem, &a->proj, &b->proj, nthreads, err);
        if (!st) st = vx_draft_mat(&d->draft_mem, &a->fc, &b->fc, nthreads, err);
        if (!st) st = vx_draft_mat(&d->draft_mem, &a->fc_proj, &b->fc_proj, nthreads, err);
    }
    if (!st) st = vx_draft_mat(&d->draft_mem, &t->speech_head, &d->speech_head, nthreads, err);
    if (st) {
        draft_free(d);
        return st;
    }
    *out = d;
    return VOCIS_OK;
}

static pthread_mutex_t draft_lock = PTHREAD_MUTEX_INITIALIZER;

/* t is const to its users, so the pointer is set through a cast. */
vocis_status vx_t3_gpt2_draft_of(const vx_t3_gpt2 *t, const vx_t3_gpt2 **d, int nthreads, vx_err *err) {
    pthread_mutex_lock(&draft_lock);
    vocis_status st = VOCIS_OK;
    if (!t->draft) st = draft_build(t, &((vx_t3_gpt2 *)t)->draft, nthreads, err);
    *d = t->draft;
    pthread_mutex_unlock(&draft_lock);
    return st;
}

/* ---- the voice prefix ---- */

/* A sequence's first n positions, per layer keys then values ([n][D] f32 each). */
static size_t kv_span_bytes(const vx_t3_gpt2 *t, int64_t n) {
    return (size_t)t->n_layers * 2 * (size_t)n * (size_t)t->dim * sizeof(float);
}

typedef struct prefix_in {
    const vx_t3_gpt2 *t;
    vx_gpt2_kv *kv;
    int64_t len;
    int ok;
} prefix_in;

static void prefix_import(void *user, const void *value, size_t n) {
    prefix_in *p = user;
    const size_t span = (size_t)p->len * (size_t)p->t->dim;
    if (n != kv_span_bytes(p->t, p->len)) return; /* a foreign entry: recompute */
    const float *v = value;
    for (int l = 0; l < p->t->n_layers; l++, v += 2 * span) {
        memcpy(p->kv->k + (size_t)l * p->kv->cap * p->t->dim, v, span * sizeof(float));
        memcpy(p->kv->v + (size_t)l * p->kv->cap * p->t->dim, v + span, span * sizeof(float));
    }
    p->kv->len = p->len;
    p->ok = 1;
}

/* The voice prefix (speaker row and prompt tokens, x[0..lc)) into the empty
 * kv: from the voice cache, else as its own forward (x's rows are used up)
 * and cached. Always its own forward, so a cached prefix has the bits of a
 * computed one. */
static vocis_status prefill_prefix(const vx_t3_gpt2 *t, vx_gpt2_kv *kv, float *x, int64_t lc, const float *speaker_emb,
                                   const int64_t *prompt, int n_prompt, int nthreads, vx_err *err) {
    vx_keybuf key = {0};
    if (t->prefix_cache) {
        const int32_t head[3] = {0x7432 /* "t2" */, t->speaker_dim, n_prompt};
        vx_keybuf_add(&key, head, sizeof head);
        vx_keybuf_add(&key, speaker_emb, sizeof(float) * (size_t)t->speaker_dim);
        if (n_prompt > 0) vx_keybuf_add(&key, prompt, sizeof(int64_t) * (size_t)n_prompt);
    }
    prefix_in in = {t, kv, lc, 0};
    if (key.n && lc <= kv->cap && vx_prefix_cache_get(t->prefix_cache, key.p, key.n, prefix_import, &in) && in.ok) {
        vx_keybuf_free(&key);
        return VOCIS_OK;
    }
    vocis_status st = vx_t3_gpt2_forward(t, kv, lc, x, NULL, nthreads, err);
    if (!st && key.n) {
        const size_t span = (size_t)lc * (size_t)t->dim;
        float *v = malloc(kv_span_bytes(t, lc)), *o = v;
        for (int l = 0; v && l < t->n_layers; l++, o += 2 * span) {
            memcpy(o, kv->k + (size_t)l * kv->cap * t->dim, span * sizeof(float));
            memcpy(o + span, kv->v + (size_t)l * kv->cap * t->dim, span * sizeof(float));
        }
        if (v) vx_prefix_cache_put(t->prefix_cache, key.p, key.n, v, kv_span_bytes(t, lc));
        free(v);
    }
    vx_keybuf_free(&key);
    return st;
}

/* ---- generation ---- */

/* One draw of plain decoding from raw logits l (overwritten): the
 * processors over the history (&bos for the first draw), the all −inf stop
 * from the second draw on (-1, nothing drawn), then argmax or the
 * multinomial (V exponentials from rng). */
static int draw(const vx_turbo_sampling *s, float *l, int V, int i, const int32_t *hist, int32_t bos, vx_rng *rng,
                float *q, float *scratch, void *tp) {
    process(s, l, V, i == 0 ? &bos : hist, i == 0 ? 1 : (size_t)i, scratch, tp);
    if (i > 0) { /* upstream checks this from the second draw on */
        int all_inf = 1;
        for (int v = 0; v < V && all_inf; v++) all_inf = l[v] == -INFINITY;
        if (all_inf) return -1;
    }
    if (s->greedy) return vx_argmax(l, V);
    vx_softmax(l, V);
    return vx_sample_multinomial(l, V, rng, q);
}

/* The state of one generation (vx_t3_gpt2_gen). */
struct vx_t3_gpt2_gen {
    const vx_t3_gpt2 *t;
    vx_turbo_sampling s;
    vx_rng *rng;        /* borrowed */
    int V, max_draws, nthreads, draft_kind;
    const vx_t3_gpt2 *d; /* the draft; NULL when not speculating */
    vx_spec_ctl ctl;
    vx_gpt2_kv kv;
    float *x;           /* [max(L0, VX_SPEC_KMAX + 1)][D] forward inputs */
    float *l;           /* [VX_SPEC_KMAX + 1][V] logits rows */
    float *g;           /* [V] the draft's logits */
    float *xd;          /* [D] the draft's input */
    float *q, *scratch; /* [V] each */
    void *tp;
    int32_t *out;       /* [max_draws + VX_SPEC_KMAX + 1]: tokens, then a round's proposals */
    int n;
    int finished;
    vocis_status st;    /* the generation's own failure (a cancel, ...), with err */
    vx_err err;
};
typedef struct vx_t3_gpt2_gen gen;

/* Draw number g->n from its raw logits: recorded, drawn with the real rng,
 * appended, reported. 1 when generation ends (stop token, the cap, all
 * −inf, or a cancel: g->st set), else 0. */
static int emit(gen *g, float *raw) {
    const vx_turbo_sampling *s = &g->s;
    const int i = g->n;
    if (s->rec_logits) memcpy(s->rec_logits + (size_t)i * g->V, raw, sizeof(float) * (size_t)g->V);
    const int tok = draw(s, raw, g->V, i, g->out, g->t->cfg.start_speech_token, g->rng, g->q, g->scratch, g->tp);
    if (tok < 0) return 1;
    g->out[g->n++] = tok;
    if (s->on_token && s->on_token(s->user, i, tok)) {
        g->st = vx_fail(&g->err, VOCIS_E_CANCELLED, "generation cancelled");
        return 1;
    }
    return tok == g->t->cfg.stop_speech_token || i + 1 == g->max_draws;
}

/* One plain decode step: the last token through the model, then its draw. */
static int plain_step(gen *g) {
    const vx_t3_gpt2 *t = g->t;
    embed(&t->speech_emb, g->out[g->n - 1], g->x);
    if ((g->st = vx_t3_gpt2_forward(t, &g->kv, 1, g->x, NULL, g->nthreads, &g->err))) return 1;
    vx_t3_gpt2_logits(t, g->x, g->l, NULL, g->nthreads);
    return emit(g, g->l);
}

/* Up to k proposals after the pending token out[n - 1] into out[n...],
 * each drawn like plain draw n + j from the draft's logits with a copy of
 * the rng (what plain decoding would draw if every earlier proposal were
 * right; the real rng is not touched). The draft writes its K/V at the
 * positions it runs; the caller rolls kv.len back. Returns the proposals. */
static int propose(gen *g, int k) {
    const vx_t3_gpt2 *d = g->d;
    vx_rng peek = *g->rng;
    int np = 0;
    while (np < k) {
        const int i = g->n + np;
        embed(&d->speech_emb, g->out[i - 1], g->xd);
        if ((g->st = vx_t3_gpt2_forward(d, &g->kv, 1, g->xd, NULL, g->nthreads, &g->err))) return 0;
        vx_t3_gpt2_logits(d, g->xd, g->g, NULL, g->nthreads);
        int tok = draw(&g->s, g->g, g->V, i, g->out, d->cfg.start_speech_token, &peek, g->q, g->scratch, g->tp);
        if (tok < 0) break;
        if (g->draft_kind == VX_DRAFT_CONTRARY) tok = (tok + 1) % g->V;
        g->out[np++ + g->n] = tok;
        if (tok == d->cfg.stop_speech_token) break;
    }
    return np;
}

/* One speculative round: k proposals, then the exact model over the pending
 * token and the proposals in one verify forward, drawn in order with the
 * real rng until the first draw that differs from its proposal (that draw
 * is kept: the exact model's token) or, all matching, one more. */
static int spec_round(gen *g, int k) {
    const vx_t3_gpt2 *t = g->t;
    const int64_t D = t->dim, len0 = g->kv.len;
    const int n0 = g->n;
    const double t0 = vx_now_s();
    const int np = propose(g, k);
    g->kv.len = len0;
    if (g->st) return 1;
    const double t1 = vx_now_s();
    int32_t prop[VX_SPEC_KMAX];
    memcpy(prop, g->out + n0, sizeof(int32_t) * (size_t)np);
    for (int j = 0; j <= np; j++) embed(&t->speech_emb, g->out[n0 - 1 + j], g->x + j * D);
    if ((g->st = vx_t3_gpt2_forward_steps(t, &g->kv, np + 1, g->x, g->nthreads, &g->err))) return 1;
    if ((g->st = vx_t3_gpt2_logits_rows(t, g->x, np + 1, g->l, g->nthreads, &g->err))) return 1;
    int end = 0, accepted = 0;
    for (int j = 0; j <= np && !end; j++) {
        end = emit(g, g->l + (size_t)j * g->V);
        if (j == np || g->n == n0 + j) break; /* the bonus draw, or the all −inf stop */
        if (g->out[n0 + j] != prop[j]) break;
        accepted++;
    }
    g->kv.len = len0 + (g->n - n0); /* the pending token and the accepted proposals */
    const double t2 = vx_now_s();
    if (np > 0) vx_spec_ctl_round(&g->ctl, np, accepted, g->n - n0, t1 - t0, t2 - t1);
    else vx_spec_ctl_plain(&g->ctl, t2 - t0);
    return end;
}

static int speculate_on(const vx_t3_gpt2 *t, int setting) {
    return t->n_layers > 0 && vx_spec_active(setting, &t->layers[0].attn);
}

vocis_status vx_t3_gpt2_generate(const vx_t3_gpt2 *t, const float *speaker_emb, const int64_t *prompt, int n_prompt,
                                 const int32_t *text, int n_text, const vx_turbo_sampling *s, vx_rng *rng,
                                 int nthreads, int32_t **tokens, int *n_tokens, vx_err *err) {
    return vx_t3_gpt2_generate_ex(t, speaker_emb, prompt, n_prompt, text, n_text, s, rng, nthreads,
                                  VX_DRAFT_QUANT, NULL, tokens, n_tokens, err);
}

vocis_status vx_t3_gpt2_generate_ex(const vx_t3_gpt2 *t, const float *speaker_emb, const int64_t *prompt,
                                    int n_prompt, const int32_t *text, int n_text, const vx_turbo_sampling *s,
                                    vx_rng *rng, int nthreads, int draft_kind, vx_spec_ctl *report,
                                    int32_t **tokens, int *n_tokens, vx_err *err) {
    *tokens = NULL;
    *n_tokens = 0;
    gen *g;
    VX_TRY(vx_t3_gpt2_gen_start(t, speaker_emb, prompt, n_prompt, text, n_text, s, rng, nthreads, draft_kind, &g,
                                err));
    vocis_status st = VOCIS_OK;
    while (!st && !g->finished) st = vx_t3_gpt2_gen_step(g, err);
    if (st) {
        vx_t3_gpt2_gen_free(g);
        return st;
    }
    return vx_t3_gpt2_gen_take(g, tokens, n_tokens, report, err);
}

static vocis_status check_sampling(const vx_turbo_sampling *s, vx_err *err) {
    if (!(s->temperature > 0) || !isfinite(s->temperature))
        return vx_fail(err, VOCIS_E_ARG, "temperature must be > 0 (got %g)", s->temperature);
    if (!(s->repetition_penalty > 0)) return vx_fail(err, VOCIS_E_ARG, "repetition penalty must be > 0");
    if (!(s->top_p > 0) || s->top_p > 1) return vx_fail(err, VOCIS_E_ARG, "top-p must be in (0, 1]");
    if (s->max_new_tokens < 0) return vx_fail(err, VOCIS_E_ARG, "max new tokens must be >= 0");
    if (s->speculate < VX_SPEC_OFF || s->speculate > VX_SPEC_KMAX)
        return vx_fail(err, VOCIS_E_ARG, "speculate must be off (-1), auto (0) or 1..%d (got %d)", VX_SPEC_KMAX,
                       s->speculate);
    return VOCIS_OK;
}

void vx_t3_gpt2_gen_free(gen *g) {
    if (!g) return;
    vx_gpt2_kv_free(&g->kv);
    free(g->x), free(g->l), free(g->tp), free(g->out);
    free(g);
}

/* The generation's failure, if any, reported through err; it is finished. */
static vocis_status gen_status(gen *g, vx_err *err) {
    if (g->st) {
        g->finished = 1;
        if (err) *err = g->err;
    }
    return g->st;
}

vocis_status vx_t3_gpt2_gen_start(const vx_t3_gpt2 *t, const float *speaker_emb, const int64_t *prompt, int n_prompt,
                                  const int32_t *text, int n_text, const vx_turbo_sampling *s, vx_rng *rng,
                                  int nthreads, int draft_kind, gen **out, vx_err *err) {
    *out = NULL;
    const int D = t->dim, V = (int)t->speech_head.rows;
    if (n_text < 1) return vx_fail(err, VOCIS_E_ARG, "empty text token list");
    VX_TRY(check_sampling(s, err));
    const int64_t L0 = vx_t3_gpt2_cond_len(n_prompt) + n_text + 1;
    if (L0 > t->wpe.rows)
        return vx_fail(err, VOCIS_E_ARG,
                       "prompt of %lld positions (voice %d + text %d tokens) exceeds the %lld positions of T3", (long long)L0,
                       n_prompt, n_text, (long long)t->wpe.rows);
    gen *g = vx_calloc(err, 1, sizeof *g, "T3 generation");
    if (!g) return VOCIS_E_NOMEM;
    g->t = t, g->s = *s, g->rng = rng, g->V = V, g->nthreads = nthreads, g->draft_kind = draft_kind;
    g->max_draws = 1 + s->max_new_tokens;
    if (L0 + g->max_draws - 1 > t->wpe.rows) g->max_draws = (int)(t->wpe.rows - L0 + 1); /* positions run out */
    vx_spec_ctl_init(&g->ctl, speculate_on(t, s->speculate) ? s->speculate : VX_SPEC_OFF);
    vocis_status st = VOCIS_OK;
    if (g->ctl.setting != VX_SPEC_OFF) {
        if (draft_kind != VX_DRAFT_QUANT) g->d = t; /* the test drafts: the exact model */
        else st = vx_t3_gpt2_draft_of(t, &g->d, nthreads, err);
    }
    const int64_t xrows = L0 > VX_SPEC_KMAX + 1 ? L0 : VX_SPEC_KMAX + 1;
    if (!st) {
        g->x = vx_malloc(err, sizeof(float) * (size_t)(xrows * D + D), "T3 inputs");
        g->l = vx_malloc(err, sizeof(float) * (size_t)V * (VX_SPEC_KMAX + 4), "T3 logits");
        g->tp = vx_malloc(err, vx_logits_top_p_scratch_size(V), "T3 top-p");
        g->out = vx_malloc(err, sizeof(int32_t) * (size_t)(g->max_draws + VX_SPEC_KMAX + 1), "T3 tokens");
        if (!g->x || !g->l || !g->tp || !g->out) st = VOCIS_E_NOMEM;
    }
    if (!st) {
        g->xd = g->x + xrows * D;
        g->g = g->l + (size_t)V * (VX_SPEC_KMAX + 1), g->q = g->g + V, g->scratch = g->q + V;
        st = vx_t3_gpt2_prefill_embeds(t, speaker_emb, prompt, n_prompt, text, n_text, g->x, nthreads, err);
    }
    if (!st) st = vx_gpt2_kv_init(&g->kv, t, L0 + g->max_draws, err);
    const int64_t lc = vx_t3_gpt2_cond_len(n_prompt); /* the voice prefix, then text and BOS */
    if (!st) st = prefill_prefix(t, &g->kv, g->x, lc, speaker_emb, prompt, n_prompt, nthreads, err);
    if (!st) st = vx_t3_gpt2_forward(t, &g->kv, L0 - lc, g->x + (size_t)lc * D, NULL, nthreads, err);
    if (st) {
        vx_t3_gpt2_gen_free(g);
        return st;
    }
    vx_t3_gpt2_logits(t, g->x + (size_t)(L0 - 1) * D, g->l, NULL, nthreads);
    g->finished = emit(g, g->l);
    if ((st = gen_status(g, err))) { /* the first draw cancelled */
        vx_t3_gpt2_gen_free(g);
        return st;
    }
    *out = g;
    return VOCIS_OK;
}

int vx_t3_gpt2_gen_done(const gen *g) { return g->finished; }

vocis_status vx_t3_gpt2_gen_step(gen *g, vx_err *err) {
    if (g->finished) return g->st;
    int k = vx_spec_ctl_k(&g->ctl);
    if (k > g->max_draws - g->n - 1) k = g->max_draws - g->n - 1; /* a round draws at most k + 1 */
    if (k > 0) {
        g->finished = spec_round(g, k);
    } else {
        const double t0 = vx_now_s();
        g->finished = plain_step(g);
        vx_spec_ctl_plain(&g->ctl, vx_now_s() - t0);
    }
    return gen_status(g, err);
}

vocis_status vx_t3_gpt2_gen_step_many(gen *const *gs, int n, int nthreads, vx_err *err) {
    gen *live[256];
    vx_gpt2_kv *kvs[256];
    int64_t ones[256];
    int m = 0;
    for (int i = 0; i < n && m < 256; i++)
        if (!gs[i]->finished) live[m] = gs[i], kvs[m] = &gs[i]->kv, ones[m++] = 1;
    if (m == 0) return VOCIS_OK;
    if (m == 1) {
        vx_t3_gpt2_gen_step(live[0], NULL); /* its own failure stays with it */
        return VOCIS_OK;
    }
    const vx_t3_gpt2 *t = live[0]->t;
    const int64_t D = t->dim, V = t->speech_head.rows;
    float *x = vx_malloc(err, sizeof(float) * (size_t)(m * D), "T3 batch inputs");
    float *l = x ? vx_malloc(err, sizeof(float) * (size_t)(m * V), "T3 batch logits") : NULL;
    vocis_status st = l ? VOCIS_OK : VOCIS_E_NOMEM;
    for (int i = 0; i < m && !st; i++) embed(&t->speech_emb, live[i]->out[live[i]->n - 1], x + i * D);
    if (!st) st = vx_t3_gpt2_forward_seqs(t, kvs, ones, m, x, nthreads, err);
    if (!st) st = vx_t3_gpt2_logits_rows(t, x, m, l, nthreads, err);
    for (int i = 0; i < m && !st; i++) {
        live[i]->finished = emit(live[i], l + (size_t)i * V);
        gen_status(live[i], NULL);
    }
    free(x), free(l);
    return st;
}

vocis_status vx_t3_gpt2_gen_take(gen *g, int32_t **tokens, int *n_tokens, vx_spec_ctl *report, vx_err *err) {
    *tokens = NULL;
    *n_tokens = 0;
    vocis_status st = g->finished ? g->st : vx_fail(err, VOCIS_E_ARG, "T3 generation is not finished");
    if (g->finished && st && err) *err = g->err;
    if (!st) {
        if (report) *report = g->ctl;
        *tokens = g->out;
        *n_tokens = g->n;
        g->out = NULL;
    }
    vx_t3_gpt2_gen_free(g);
    return st;
}

int vx_turbo_clean_tokens(const vx_t3_gpt2 *t, const int32_t *tokens, int n, int64_t *out) {
    if (n > 0 && tokens[n - 1] == t->cfg.stop_speech_token) n--;
    int m = 0;
    for (int i = 0; i < n; i++)
        if (tokens[i] >= 0 && tokens[i] < t->cfg.start_speech_token) out[m++] = tokens[i];
    for (int i = 0; i < 3; i++) out[m++] = VX_S3GEN_SIL;
    return m;
}
