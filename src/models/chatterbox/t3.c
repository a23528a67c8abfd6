#include "models/chatterbox/t3.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/precision.h"
#include "models/chatterbox/t3_batch.h"
#include "nn/prefix_cache.h"
#include "nn/sampling.h"

/* ---- loading ---- */

vocis_status vx_t3_init(vx_t3 *t3, const vx_weights *w, const vx_cb_config *cfg, vx_err *err) {
    memset(t3, 0, sizeof *t3);
    t3->cfg = *cfg;
    vx_tf_options o = {
        .n_heads = cfg->t3_heads,
        .head_dim = cfg->t3_head_dim,
        .norm_eps = cfg->rms_eps,
        .rope_theta = cfg->rope_theta,
        .qkv_bias = 0,
        .final_norm = 1,
    };
    if (cfg->rope_llama3) {
        o.rope_factor = cfg->rope_factor;
        o.rope_low_freq_factor = cfg->rope_low_freq_factor;
        o.rope_high_freq_factor = cfg->rope_high_freq_factor;
        o.rope_original_max_pos = cfg->rope_original_max_pos;
    }
    VX_TRY(vx_tf_load(&t3->tf, w, "tfmr.", &o, err));
    const int64_t D = t3->dim = t3->tf.dim;
    if (t3->tf.n_kv_heads != (cfg->t3_kv_heads ? cfg->t3_kv_heads : cfg->t3_heads)) {
        vx_fail(err, VOCIS_E_SHAPE, "%s: k_proj implies %d KV heads, the configuration says %d", vx_weights_path(w),
                t3->tf.n_kv_heads, cfg->t3_kv_heads);
        goto fail;
    }

    vx_tensor t;
    vocis_status st;
#define TRY(x)                                                                                                         \
    if ((st = (x)) != VOCIS_OK) goto fail
    TRY(vx_weights_expect(w, VX_FLOATS, VX_DIMS(-1, D), &t, err, "text_emb.weight"));
    t3->text_emb = vx_mat_of(&t);
    TRY(vx_weights_expect(w, VX_FLOATS, VX_DIMS(-1, D), &t, err, "speech_emb.weight"));
    t3->speech_emb = vx_mat_of(&t);
    TRY(vx_weights_expect(w, VX_FLOATS, VX_DIMS(-1, D), &t, err, "text_pos_emb.emb.weight"));
    t3->text_pos = vx_mat_of(&t);
    TRY(vx_weights_expect(w, VX_FLOATS, VX_DIMS(-1, D), &t, err, "speech_pos_emb.emb.weight"));
    t3->speech_pos = vx_mat_of(&t);
    TRY(vx_weights_expect(w, VX_FLOATS, VX_DIMS(-1, D), &t, err, "speech_head.weight"));
    t3->speech_head = vx_mat_of(&t);
    TRY(vx_weights_mat_policy(w, &t3->speech_head, VX_W_MATRIX, err));
    if (t3->speech_head.rows <= cfg->stop_speech_token || t3->speech_emb.rows <= cfg->start_speech_token) {
        vx_fail(err, VOCIS_E_SHAPE, "%s: speech vocabulary of %lld rows does not hold the start/stop tokens %d/%d",
                vx_weights_path(w), (long long)t3->speech_head.rows, cfg->start_speech_token, cfg->stop_speech_token);
        goto fail;
    }
    if (t3->text_emb.rows <= cfg->start_text_token || t3->text_emb.rows <= cfg->stop_text_token) {
        vx_fail(err, VOCIS_E_SHAPE, "%s: text vocabulary of %lld rows does not hold the start/stop tokens %d/%d",
                vx_weights_path(w), (long long)t3->text_emb.rows, cfg->start_text_token, cfg->stop_text_token);
        goto fail;
    }
    TRY(vx_weights_expect(w, VX_FLOATS, VX_DIMS(D, -1), &t, err, "cond_enc.spkr_enc.weight"));
    t3->speaker_dim = (int)t.shape[1];
    t3->spkr_enc = vx_mat_of(&t);
    TRY(vx_weights_expect(w, VX_FLOATS, VX_DIMS(1, -1, D), &t, err, "cond_enc.perceiver.pre_attention_query"));
    t3->n_query = (int)t.shape[1];
    if (D % cfg->perceiver_heads != 0) {
        vx_fail(err, VOCIS_E_SHAPE, "%s: width %lld is not divisible by %d perceiver heads", vx_weights_path(w),
                (long long)D, cfg->perceiver_heads);
        goto fail;
    }
    size_t nvec = (size_t)D * (3 + 6) + (size_t)t3->n_query * D;
    float *p = t3->owned = vx_calloc(err, nvec, sizeof(float), "T3 conditioning vectors");
    if (!p) goto fail;
    t3->spkr_bias = p, p += D;
    t3->emotion_w = p, p += D;
    t3->pn_w = p, p += D;
    t3->pn_b = p, p += D;
    t3->bq = p, p += D;
    t3->bk = p, p += D;
    t3->bv = p, p += D;
    t3->bo = p, p += D;
    t3->query = p;
    vx_to_f32(t3->query, t.data, t.dtype, (size_t)t3->n_query * D);
    TRY(vx_weights_vec_f32(w, "cond_enc.spkr_enc.bias", D, t3->spkr_bias, err));
    TRY(vx_weights_expect(w, VX_FLOATS, VX_DIMS(D, 1), &t, err, "cond_enc.emotion_adv_fc.weight"));
    vx_to_f32(t3->emotion_w, t.data, t.dtype, (size_t)D);
    TRY(vx_weights_vec_f32(w, "cond_enc.perceiver.attn.norm.weight", D, t3->pn_w, err));
    TRY(vx_weights_vec_f32(w, "cond_enc.perceiver.attn.norm.bias", D, t3->pn_b, err));
    TRY(vx_weights_mat(w, "cond_enc.perceiver.attn.to_q.weight", D, D, &t3->to_q, err));
    TRY(vx_weights_mat(w, "cond_enc.perceiver.attn.to_k.weight", D, D, &t3->to_k, err));
    TRY(vx_weights_mat(w, "cond_enc.perceiver.attn.to_v.weight", D, D, &t3->to_v, err));
    TRY(vx_weights_mat(w, "cond_enc.perceiver.attn.proj_out.weight", D, D, &t3->proj_out, err));
    TRY(vx_weights_vec_f32(w, "cond_enc.perceiver.attn.to_q.bias", D, t3->bq, err));
    TRY(vx_weights_vec_f32(w, "cond_enc.perceiver.attn.to_k.bias", D, t3->bk, err));
    TRY(vx_weights_vec_f32(w, "cond_enc.perceiver.attn.to_v.bias", D, t3->bv, err));
    TRY(vx_weights_vec_f32(w, "cond_enc.perceiver.attn.proj_out.bias", D, t3->bo, err));
#undef TRY
    return VOCIS_OK;
fail:
    vx_t3_free(t3);
    return err && err->code ? err->code : VOCIS_E_INTERNAL;
}

vocis_status vx_t3_load(vx_t3 *t3, const char *path, const vx_cb_config *cfg, vx_err *err) {
    return vx_t3_load_prec(t3, path, cfg, VX_PREC_EXACT, err);
}

vocis_status vx_t3_load_prec(vx_t3 *t3, const char *path, const vx_cb_config *cfg, int precision, vx_err *err) {
    VX_TRY(vx_precision_check(precision, err));
    vx_weights *w;
    VX_TRY(vx_weights_open(path, &w, err));
    vx_weights_set_precision(w, vx_precision_resolve(precision));
    vocis_status st = vx_t3_init(t3, w, cfg, err);
    if (st != VOCIS_OK) {
        vx_weights_close(w);
        return st;
    }
    t3->w = w;
    return VOCIS_OK;
}

static void draft_free(vx_t3_draft *d) {
    if (!d) return;
    free(d->tf.layers);
    vx_draft_mem_free(&d->mem);
    free(d);
}

/* The one place that decides what the draft is: every linear of the
 * backbone and the speech head quantized (vx_draft_mat). */
static vocis_status draft_build(const vx_t3 *t3, vx_t3_draft **out, int nthreads, vx_err *err) {
    vx_t3_draft *d = vx_calloc(err, 1, sizeof *d, "T3 draft");
    if (!d) return VOCIS_E_NOMEM;
    vocis_status st = vx_tf_draft(&t3->tf, &d->tf, &d->mem, nthreads, err);
    if (!st) st = vx_draft_mat(&d->mem, &t3->speech_head, &d->speech_head, nthreads, err);
    if (st) {
        draft_free(d);
        return st;
    }
    *out = d;
    return VOCIS_OK;
}

static pthread_mutex_t draft_lock = PTHREAD_MUTEX_INITIALIZER;

vocis_status vx_t3_draft_of(const vx_t3 *t3, const vx_t3_draft **d, int nthreads, vx_err *err) {
    pthread_mutex_lock(&draft_lock);
    vocis_status st = VOCIS_OK;
    if (!t3->draft) st = draft_build(t3, &((vx_t3 *)t3)->draft, nthreads, err); /* t3 is const to its users */
    *d = t3->draft;
    pthread_mutex_unlock(&draft_lock);
    return st;
}

vocis_status vx_t3_set_voice_cache(vx_t3 *t3, size_t max_bytes, vx_err *err) {
    vx_prefix_cache_free(t3->prefix_cache);
    t3->prefix_cache = NULL;
    if (max_bytes && !(t3->prefix_cache = vx_prefix_cache_new(max_bytes)))
        return vx_fail(err, VOCIS_E_NOMEM, "out of memory (voice cache)");
    return VOCIS_OK;
}

void vx_t3_free(vx_t3 *t3) {
    vx_prefix_cache_free(t3->prefix_cache);
    draft_free(t3->draft);
    vx_tf_free(&t3->tf);
    free(t3->owned);
    vx_weights_close(t3->w);
    memset(t3, 0, sizeof *t3);
}

/* ---- conditioning ---- */

void vx_t3_embed(const vx_mat *table, int64_t row, float *out, int add) {
    const size_t D = (size_t)table->cols;
    const char *src = (const char *)table->data + (size_t)row * D * vx_dtype_size(table->dtype);
    if (!add) {
        vx_to_f32(out, src, table->dtype, D);
        return;
    }
    float tmp[8192];
    for (size_t o = 0; o < D; o += 8192) {
        size_t n = D - o < 8192 ? D - o : 8192;
        vx_to_f32(tmp, src + o * vx_dtype_size(table->dtype), table->dtype, n);
        vx_add(out + o, tmp, (int64_t)n);
    }
}

int vx_t3_cond_len(const vx_t3 *t3, const vx_t3_cond *c) {
    return 2 + (c->prompt_tokens && c->n_prompt > 0 ? t3->n_query : 0);
}

/* AttentionBlock2: x1 + proj_out(attn(q(LN x1), k(LN x2), v(LN x2))). out may alias x1. */
static vocis_status perceiver_attend(const vx_t3 *t3, float *out, const float *x1, int n1, const float *x2, int n2,
                                     int nthreads, vx_err *err) {
    const int D = t3->dim, H = t3->cfg.perceiver_heads;
    size_t big = (size_t)(n1 > n2 ? n1 : n2) * D;
    float *buf = vx_malloc(err, sizeof(float) * (big * 2 + (size_t)n1 * D * 3 + (size_t)n2 * D * 2), "perceiver");
    if (!buf) return VOCIS_E_NOMEM;
    float *n1b = buf, *n2b = n1b + big, *q = n2b + big, *k = q + (size_t)n1 * D, *v = k + (size_t)n2 * D,
          *att = v + (size_t)n2 * D, *o = att + (size_t)n1 * D;
    vx_layernorm(n1b, x1, t3->pn_w, t3->pn_b, n1, D, 1e-5f);
    vx_layernorm(n2b, x2, t3->pn_w, t3->pn_b, n2, D, 1e-5f);
    vx_linear(q, n1b, n1, &t3->to_q, t3->bq, nthreads);
    vx_linear(k, n2b, n2, &t3->to_k, t3->bk, nthreads);
    vx_linear(v, n2b, n2, &t3->to_v, t3->bv, nthreads);
    const int hd = D / H;
    vx_attention(att, q, k, v, n1, n2, H, H, hd, D, 1.0f / sqrtf((float)hd), 0, nthreads);
    vx_linear(o, att, n1, &t3->proj_out, t3->bo, nthreads);
    for (size_t i = 0; i < (size_t)n1 * D; i++) out[i] = x1[i] + o[i];
    free(buf);
    return VOCIS_OK;
}

vocis_status vx_t3_cond_encode(const vx_t3 *t3, const vx_t3_cond *c, float *cond_emb, int *len_cond,
                               float *prompt_emb, float *perceiver_out, int nthreads, vx_err *err) {
    const int D = t3->dim;
    if (!isfinite(c->emotion_adv)) return vx_fail(err, VOCIS_E_ARG, "exaggeration must be a finite number");
    for (int i = 0; i < t3->speaker_dim; i++)
        if (!isfinite(c->speaker_emb[i]))
            return vx_fail(err, VOCIS_E_ARG, "speaker_emb[%d] is not a finite number", i);
    int np = c->prompt_tokens ? c->n_prompt : 0;
    if (np > t3->speech_pos.rows)
        return vx_fail(err, VOCIS_E_ARG, "voice prompt has %d speech tokens, more than the %lld positions of T3", np,
                       (long long)t3->speech_pos.rows);
    for (int j = 0; j < np; j++)
        if (c->prompt_tokens[j] < 0 || c->prompt_tokens[j] >= t3->speech_emb.rows)
            return vx_fail(err, VOCIS_E_ARG, "cond_prompt_speech_tokens[%d] = %lld is outside [0, %lld)", j,
                           (long long)c->prompt_tokens[j], (long long)t3->speech_emb.rows);

    /* speaker token */
    vx_linear(cond_emb, c->speaker_emb, 1, &t3->spkr_enc, t3->spkr_bias, nthreads);
    int row = 1;
    if (np > 0) {
        float *e = vx_malloc(err, sizeof(float) * (size_t)np * D, "prompt embeddings");
        if (!e) return VOCIS_E_NOMEM;
        for (int j = 0; j < np; j++) {
            vx_t3_embed(&t3->speech_emb, c->prompt_tokens[j], e + (size_t)j * D, 0);
            vx_t3_embed(&t3->speech_pos, j, e + (size_t)j * D, 1);
        }
        if (prompt_emb) memcpy(prompt_emb, e, sizeof(float) * (size_t)np * D);
        float *z = cond_emb + (size_t)row * D; /* [n_query][D] */
        vocis_status st = perceiver_attend(t3, z, t3->query, t3->n_query, e, np, nthreads, err);
        if (st == VOCIS_OK) st = perceiver_attend(t3, z, z, t3->n_query, z, t3->n_query, nthreads, err);
        free(e);
        VX_TRY(st);
        if (perceiver_out) memcpy(perceiver_out, z, sizeof(float) * (size_t)t3->n_query * D);
        row += t3->n_query;
    }
    float *emo = cond_emb + (size_t)row * D;
    for (int i = 0; i < D; i++) emo[i] = c->emotion_adv * t3->emotion_w[i];
    *len_cond = row + 1;
    return VOCIS_OK;
}

/* ---- generation ---- */

int vx_t3_clean_tokens(const vx_t3 *t3, int32_t *tokens, int n) {
    int start = 0, end = n;
    for (int i = 0; i < n; i++)
        if (tokens[i] == t3->cfg.start_speech_token) {
            start = i + 1;
            break;
        }
    for (int i = start; i < n; i++)
        if (tokens[i] == t3->cfg.stop_speech_token) {
            end = i;
            break;
        }
    int m = 0;
    for (int i = start; i < end; i++)
        if (tokens[i] >= 0 && tokens[i] < t3->cfg.start_speech_token) tokens[m++] = tokens[i];
    return m;
}

void vx_t3_text_embeds(const vx_t3 *t3, const int32_t *text_ids, int n_text, int nseq, float *x) {
    const int D = t3->dim;
    const int64_t n = n_text + 2;
    /* row 0: [text + pos][bos + pos0][bos + pos0]; row 1 the same with text embeddings zeroed */
    for (int i = 0; i < n_text; i++) {
        float *r = x + (size_t)i * D;
        vx_t3_embed(&t3->text_emb, text_ids[i], r, 0);
        vx_t3_embed(&t3->text_pos, i, r, 1);
    }
    for (int b = 0; b < 2; b++) {
        float *r = x + (size_t)(n_text + b) * D;
        vx_t3_embed(&t3->speech_emb, t3->cfg.start_speech_token, r, 0);
        vx_t3_embed(&t3->speech_pos, 0, r, 1);
    }
    if (nseq == 2) {
        float *u = x + (size_t)n * D;
        memcpy(u, x, sizeof(float) * (size_t)n * D);
        for (int i = 0; i < n_text; i++) vx_t3_embed(&t3->text_pos, i, u + (size_t)i * D, 0);
    }
}

vocis_status vx_t3_prefill_embeds(const vx_t3 *t3, const vx_t3_cond *c, const int32_t *text_ids, int n_text,
                                  int nseq, float *x, int nthreads, vx_err *err) {
    const int D = t3->dim, lc = vx_t3_cond_len(t3, c);
    const int64_t L0 = lc + n_text + 2, n = n_text + 2;
    int len_cond;
    VX_TRY(vx_t3_cond_encode(t3, c, x, &len_cond, NULL, NULL, nthreads, err));
    float *t = vx_malloc(err, sizeof(float) * (size_t)nseq * (size_t)n * D, "T3 prefill");
    if (!t) return VOCIS_E_NOMEM;
    vx_t3_text_embeds(t3, text_ids, n_text, nseq, t);
    for (int s = 0; s < nseq; s++) {
        float *row = x + (size_t)s * L0 * D;
        if (s) memcpy(row, x, sizeof(float) * (size_t)lc * D);
        memcpy(row + (size_t)lc * D, t + (size_t)s * n * D, sizeof(float) * (size_t)n * D);
    }
    free(t);
    return VOCIS_OK;
}

/* logits[r][V] = speech_head(final_norm(x[r])) for the last row of each sequence. */
vocis_status vx_t3_head_logits(const vx_t3 *t3, const float *x, int nseq, int64_t n, float *logits, int nthreads,
                                vx_err *err) {
    const int D = t3->dim;
    float *h = vx_malloc(err, sizeof(float) * (size_t)nseq * D, "hidden");
    if (!h) return VOCIS_E_NOMEM;
    for (int s = 0; s < nseq; s++) vx_tf_final_norm(&t3->tf, h + (size_t)s * D, x + ((size_t)s * n + n - 1) * D, 1);
    vx_linear(logits, h, nseq, &t3->speech_head, NULL, nthreads);
    free(h);
    return VOCIS_OK;
}

vocis_status vx_t3_generate(const vx_t3 *t3, const vx_t3_cond *c, const int32_t *text_ids, int n_text,
                            const vx_t3_sampling *s, vx_rng *rng, int nthreads, int32_t **tokens, int *n_tokens,
                            vx_err *err) {
    return vx_t3_generate_ex(t3, c, text_ids, n_text, s, rng, nthreads, VX_DRAFT_QUANT, NULL, tokens, n_tokens, err);
}

vocis_status vx_t3_generate_ex(const vx_t3 *t3, const vx_t3_cond *c, const int32_t *text_ids, int n_text,
                               const vx_t3_sampling *s, vx_rng *rng, int nthreads, int draft_kind,
                               vx_spec_ctl *report, int32_t **tokens, int *n_tokens, vx_err *err) {
    /* a batch of one: the same code path as concurrent requests (t3_batch.c) */
    *tokens = NULL;
    *n_tokens = 0;
    vx_t3_batch *b;
    VX_TRY(vx_t3_batch_new(t3, 1, &b, err));
    vx_t3_batch_set_draft(b, draft_kind);
    int id;
    vocis_status st = vx_t3_batch_add(b, c, text_ids, n_text, s, rng, nthreads, &id, err);
    while (!st && vx_t3_batch_active(b)) st = vx_t3_batch_step(b, nthreads, err);
    if (!st && report) vx_t3_batch_spec_totals(b, report);
    if (!st) st = vx_t3_batch_take(b, id, tokens, n_tokens, err);
    vx_t3_batch_free(b);
    return st;
}
