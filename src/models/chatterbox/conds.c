/* Chatterbox conditionals loader; see conds.h and spec §2.1 / §9.2. */
#include "models/chatterbox/conds.h"

#include "io/safetensors.h"
#include "io/torchzip.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- shared */

static vocis_status take_f32(const vx_tensor *t, const char *where, const char *field, int ndim,
                             const int64_t *shape, vx_cb_f32 *out, vx_err *err) {
    VX_TRY(vx_tensor_expect(t, where, field, VX_FLOATS, ndim, shape, err));
    size_t n = (size_t)vx_numel(t);
    out->data = vx_malloc(err, n * sizeof(float), field);
    if (!out->data) return VOCIS_E_NOMEM;
    if (n) vx_to_f32(out->data, t->data, t->dtype, n);
    out->ndim = t->ndim;
    memcpy(out->shape, t->shape, sizeof out->shape);
    out->n = n;
    for (size_t i = 0; i < n; i++)
        if (!isfinite(out->data[i]))
            return vx_fail(err, VOCIS_E_FORMAT, "%s: tensor '%s': element %zu is %g (not finite)", where, field, i,
                           (double)out->data[i]);
    return VOCIS_OK;
}

static vocis_status take_i64(const vx_tensor *t, const char *where, const char *field, int ndim,
                             const int64_t *shape, int64_t hi, vx_cb_i64 *out, vx_err *err) {
    VX_TRY(vx_tensor_expect(t, where, field, VX_INTS, ndim, shape, err));
    size_t n = (size_t)vx_numel(t);
    out->data = vx_malloc(err, n * sizeof(int64_t), field);
    if (!out->data) return VOCIS_E_NOMEM;
    for (size_t i = 0; i < n; i++)
        out->data[i] = t->dtype == VX_I64 ? ((const int64_t *)t->data)[i] : ((const int32_t *)t->data)[i];
    out->ndim = t->ndim;
    memcpy(out->shape, t->shape, sizeof out->shape);
    out->n = n;
    for (size_t i = 0; i < n; i++)
        if (out->data[i] < 0 || out->data[i] >= hi)
            return vx_fail(err, VOCIS_E_FORMAT, "%s: tensor '%s': value %lld at index %zu is outside [0, %lld)",
                           where, field, (long long)out->data[i], i, (long long)hi);
    return VOCIS_OK;
}

/* The six fields (any may be NULL except the three T3 ones), as found in a file. */
typedef struct conds_src {
    const char *where;
    const vx_tensor *speaker_emb, *tokens, *emotion_adv;
    const vx_tensor *prompt_token, *prompt_token_len, *prompt_feat, *embedding;
    const char *n_speaker_emb, *n_tokens, *n_emotion_adv;
    const char *n_prompt_token, *n_prompt_token_len, *n_prompt_feat, *n_embedding;
} conds_src;

static vocis_status build(const conds_src *s, vx_cb_conds *c, vx_err *err) {
    VX_TRY(take_f32(s->speaker_emb, s->where, s->n_speaker_emb, VX_DIMS(1, VX_CB_SPEAKER_EMB_DIM), &c->speaker_emb,
                    err));
    VX_TRY(take_i64(s->tokens, s->where, s->n_tokens, VX_DIMS(1, -1), VX_CB_S3_VOCAB, &c->cond_prompt_speech_tokens,
                    err));
    VX_TRY(take_f32(s->emotion_adv, s->where, s->n_emotion_adv, VX_DIMS(1, 1, 1), &c->emotion_adv, err));
    int ngen = !!s->prompt_token + !!s->prompt_feat + !!s->embedding;
    if (ngen == 0) return VOCIS_OK;
    if (ngen != 3)
        return vx_fail(err, VOCIS_E_SHAPE,
                       "%s: incomplete S3Gen conditioning: needs prompt_token, prompt_feat and embedding "
                       "(found%s%s%s)",
                       s->where, s->prompt_token ? " prompt_token" : "", s->prompt_feat ? " prompt_feat" : "",
                       s->embedding ? " embedding" : "");
    VX_TRY(take_i64(s->prompt_token, s->where, s->n_prompt_token, VX_DIMS(1, -1), VX_CB_S3_VOCAB, &c->prompt_token,
                    err));
    VX_TRY(take_f32(s->prompt_feat, s->where, s->n_prompt_feat, VX_DIMS(1, -1, VX_CB_MEL_BINS), &c->prompt_feat,
                    err));
    VX_TRY(take_f32(s->embedding, s->where, s->n_embedding, VX_DIMS(1, VX_CB_XVECTOR_DIM), &c->embedding, err));
    int64_t tp = c->prompt_token.shape[1];
    c->prompt_token_len = tp;
    if (s->prompt_token_len) {
        vx_cb_i64 len = {0};
        vocis_status st = take_i64(s->prompt_token_len, s->where, s->n_prompt_token_len, VX_DIMS(1), tp + 1, &len,
                                   err);
        if (st == VOCIS_OK) c->prompt_token_len = len.data[0];
        free(len.data);
        if (st != VOCIS_OK) return st;
    }
    c->has_gen = 1;
    return VOCIS_OK;
}

static vocis_status copy_f32(vx_cb_f32 *d, const vx_cb_f32 *s, vx_err *err) {
    *d = *s;
    d->data = NULL;
    if (!s->data) return VOCIS_OK;
    if (!(d->data = vx_malloc(err, sizeof(float) * (s->n ? s->n : 1), "voice field"))) return VOCIS_E_NOMEM;
    memcpy(d->data, s->data, sizeof(float) * s->n);
    return VOCIS_OK;
}

static vocis_status copy_i64(vx_cb_i64 *d, const vx_cb_i64 *s, vx_err *err) {
    *d = *s;
    d->data = NULL;
    if (!s->data) return VOCIS_OK;
    if (!(d->data = vx_malloc(err, sizeof(int64_t) * (s->n ? s->n : 1), "voice field"))) return VOCIS_E_NOMEM;
    memcpy(d->data, s->data, sizeof(int64_t) * s->n);
    return VOCIS_OK;
}

vocis_status vx_cb_conds_copy(vx_cb_conds *dst, const vx_cb_conds *src, vx_err *err) {
    memset(dst, 0, sizeof *dst);
    dst->has_gen = src->has_gen;
    dst->no_t3 = src->no_t3;
    dst->prompt_token_len = src->prompt_token_len;
    vocis_status st = copy_f32(&dst->speaker_emb, &src->speaker_emb, err);
    if (!st) st = copy_i64(&dst->cond_prompt_speech_tokens, &src->cond_prompt_speech_tokens, err);
    if (!st) st = copy_f32(&dst->emotion_adv, &src->emotion_adv, err);
    if (!st) st = copy_i64(&dst->prompt_token, &src->prompt_token, err);
    if (!st) st = copy_f32(&dst->prompt_feat, &src->prompt_feat, err);
    if (!st) st = copy_f32(&dst->embedding, &src->embedding, err);
    if (st) vx_cb_conds_free(dst);
    return st;
}

static vocis_status finish(vocis_status st, vx_cb_conds *out) {
    if (st != VOCIS_OK) vx_cb_conds_free(out);
    return st;
}

void vx_cb_conds_free(vx_cb_conds *c) {
    if (!c) return;
    free(c->speaker_emb.data);
    free(c->cond_prompt_speech_tokens.data);
    free(c->emotion_adv.data);
    free(c->prompt_token.data);
    free(c->prompt_feat.data);
    free(c->embedding.data);
    memset(c, 0, sizeof *c);
}

/* ---------------------------------------------------------------- conds.pt */

static vocis_status pt_field(const vx_pk_value *dict, const char *where, const char *field, const char *key,
                             int required, const vx_tensor **out, vx_err *err) {
    *out = NULL;
    const vx_pk_value *v = vx_pk_dict_get(dict, key);
    if (vx_pk_is_none(v)) {
        if (!required) return VOCIS_OK;
        return vx_fail(err, VOCIS_E_SHAPE, "%s: %s is %s, expected a tensor", where, field,
                       v ? "None" : "missing");
    }
    if (v->type != VX_PK_TENSOR)
        return vx_fail(err, VOCIS_E_SHAPE, "%s: %s is a %s, expected a tensor", where, field,
                       vx_pk_type_name(v->type));
    *out = &v->u.tensor.t;
    return VOCIS_OK;
}

static vocis_status from_torch(const vx_torch_file *f, vx_cb_conds *out, vx_err *err) {
    const char *where = vx_torch_path(f);
    const vx_pk_value *root = vx_torch_root(f);
    if (!root || root->type != VX_PK_DICT)
        return vx_fail(err, VOCIS_E_SHAPE, "%s: top-level object is a %s, expected a dict with 't3' and 'gen'", where,
                       root ? vx_pk_type_name(root->type) : "nothing");
    const vx_pk_value *t3 = vx_pk_dict_get(root, "t3"), *gen = vx_pk_dict_get(root, "gen");
    if (!t3 || t3->type != VX_PK_DICT)
        return vx_fail(err, VOCIS_E_SHAPE, "%s: entry 't3' is %s, expected a dict of T3Cond fields", where,
                       t3 ? vx_pk_type_name(t3->type) : "missing");
    if (gen && gen->type != VX_PK_DICT && gen->type != VX_PK_NONE)
        return vx_fail(err, VOCIS_E_SHAPE, "%s: entry 'gen' is a %s, expected a dict", where,
                       vx_pk_type_name(gen->type));
    conds_src s = {.where = where,
                   .n_speaker_emb = "t3.speaker_emb",
                   .n_tokens = "t3.cond_prompt_speech_tokens",
                   .n_emotion_adv = "t3.emotion_adv",
                   .n_prompt_token = "gen.prompt_token",
                   .n_prompt_token_len = "gen.prompt_token_len",
                   .n_prompt_feat = "gen.prompt_feat",
                   .n_embedding = "gen.embedding"};
    VX_TRY(pt_field(t3, where, s.n_speaker_emb, "speaker_emb", 1, &s.speaker_emb, err));
    VX_TRY(pt_field(t3, where, s.n_tokens, "cond_prompt_speech_tokens", 1, &s.tokens, err));
    VX_TRY(pt_field(t3, where, s.n_emotion_adv, "emotion_adv", 1, &s.emotion_adv, err));
    if (gen && gen->type == VX_PK_DICT) {
        VX_TRY(pt_field(gen, where, s.n_prompt_token, "prompt_token", 1, &s.prompt_token, err));
        VX_TRY(pt_field(gen, where, s.n_prompt_token_len, "prompt_token_len", 0, &s.prompt_token_len, err));
        VX_TRY(pt_field(gen, where, s.n_prompt_feat, "prompt_feat", 1, &s.prompt_feat, err));
        VX_TRY(pt_field(gen, where, s.n_embedding, "embedding", 1, &s.embedding, err));
    }
    return build(&s, out, err);
}

vocis_status vx_cb_conds_load_pt(const char *path, vx_cb_conds *out, vx_err *err) {
    memset(out, 0, sizeof *out);
    vx_torch_file *f;
    VX_TRY(vx_torch_open(path, &f, err));
    vocis_status st = from_torch(f, out, err);
    vx_torch_close(f);
    return finish(st, out);
}

vocis_status vx_cb_conds_load_pt_mem(const void *buf, size_t len, const char *name, vx_cb_conds *out, vx_err *err) {
    memset(out, 0, sizeof *out);
    vx_torch_file *f;
    VX_TRY(vx_torch_open_mem(buf, len, name, &f, err));
    vocis_status st = from_torch(f, out, err);
    vx_torch_close(f);
    return finish(st, out);
}

/* ---------------------------------------------------------------- safetensors */

static const vx_tensor *st_field(const vx_st_file *f, const char *prefix, const char *name, const char **used) {
    const vx_tensor *t = vx_st_find(f, name);
    *used = name;
    if (t) return t;
    /* Golden-file spelling: "t3.speaker_emb", "gen.prompt_feat". */
    for (int i = 0; i < vx_st_count(f); i++) {
        const char *n = vx_st_name(f, i);
        size_t pl = strlen(prefix);
        if (strncmp(n, prefix, pl) == 0 && strcmp(n + pl, name) == 0) {
            *used = n;
            return vx_st_tensor(f, i);
        }
    }
    return NULL;
}

vocis_status vx_cb_conds_load_safetensors(const char *path, vx_cb_conds *out, vx_err *err) {
    memset(out, 0, sizeof *out);
    vx_st_file *f;
    VX_TRY(vx_st_open(path, &f, err));
    conds_src s = {.where = path};
    s.speaker_emb = st_field(f, "t3.", "speaker_emb", &s.n_speaker_emb);
    s.tokens = st_field(f, "t3.", "cond_prompt_speech_tokens", &s.n_tokens);
    s.emotion_adv = st_field(f, "t3.", "emotion_adv", &s.n_emotion_adv);
    s.prompt_token = st_field(f, "gen.", "prompt_token", &s.n_prompt_token);
    s.prompt_token_len = st_field(f, "gen.", "prompt_token_len", &s.n_prompt_token_len);
    s.prompt_feat = st_field(f, "gen.", "prompt_feat", &s.n_prompt_feat);
    s.embedding = st_field(f, "gen.", "embedding", &s.n_embedding);
    vocis_status st = VOCIS_OK;
    const char *missing = !s.speaker_emb ? "speaker_emb"
                          : !s.tokens    ? "cond_prompt_speech_tokens"
                          : !s.emotion_adv ? "emotion_adv"
                                           : NULL;
    if (missing) st = vx_fail(err, VOCIS_E_SHAPE, "%s: missing tensor '%s' (Chatterbox conditionals)", path, missing);
    else st = build(&s, out, err);
    vx_st_close(f);
    return finish(st, out);
}

vocis_status vx_cb_conds_save_safetensors(const vx_cb_conds *c, const char *path, const char *const *meta,
                                          vx_err *err) {
    if (c->no_t3)
        return vx_fail(err, VOCIS_E_ARG,
                       "%s: this voice has only the S3Gen half (cloned by a voice-conversion model folder); clone it "
                       "with a full Chatterbox folder to save it",
                       path);
    vx_st_writer *w = vx_st_writer_new();
    if (!w) return vx_fail(err, VOCIS_E_NOMEM, "out of memory");
    vocis_status st = vx_st_writer_meta(w, "format", "vocis-chatterbox-conds-v1", err);
    for (int i = 0; meta && meta[i] && meta[i + 1] && st == VOCIS_OK; i += 2) st = vx_st_writer_meta(w, meta[i], meta[i + 1], err);
#define ADD(name, dt, arr)                                                                                         \
    if (st == VOCIS_OK) st = vx_st_writer_add(w, name, dt, (arr).ndim, (arr).shape, (arr).data, err)
    ADD("speaker_emb", VX_F32, c->speaker_emb);
    ADD("cond_prompt_speech_tokens", VX_I64, c->cond_prompt_speech_tokens);
    ADD("emotion_adv", VX_F32, c->emotion_adv);
    if (c->has_gen) {
        ADD("prompt_token", VX_I64, c->prompt_token);
        ADD("prompt_feat", VX_F32, c->prompt_feat);
        ADD("embedding", VX_F32, c->embedding);
        const int64_t one = 1;
        if (st == VOCIS_OK) st = vx_st_writer_add(w, "prompt_token_len", VX_I64, 1, &one, &c->prompt_token_len, err);
    }
#undef ADD
    if (st == VOCIS_OK) st = vx_st_writer_save(w, path, err);
    vx_st_writer_free(w);
    return st;
}
