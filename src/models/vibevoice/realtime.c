#include "models/vibevoice/realtime.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/flist.h"
#include "io/torchzip.h"
#include "models/vibevoice/generate.h"
#include "kernels/kernels.h"
#include "kernels/precision.h"
#include "models/synthetic.h"
#include "models/vibevoice/lm.h"

const char *const vx_rt_entry_names[VX_RT_N_ENTRIES] = {"lm", "tts_lm", "neg_lm", "neg_tts_lm"};

/* ---- model ------------------------------------------------------------------ */

/* Everything but the tokenizer, from an open weight set (m->w) and m->cfg. */
static vocis_status rt_from_weights(vx_rt_model *m, vx_err *err) {
    const vx_vv_config *c = &m->cfg;
    const vx_weights *w = m->w;
    const int n_upper = c->tts_backbone_num_hidden_layers, n_lower = c->num_hidden_layers - n_upper;
    vx_tf_options o = {.n_heads = c->num_attention_heads,
                       .head_dim = c->head_dim,
                       .norm_eps = c->rms_norm_eps,
                       .rope_theta = (float)c->rope_theta,
                       .qkv_bias = 1,
                       .final_norm = 0};
    /* the lower stack's norm is Identity upstream (no norm.weight in the release) */
    VX_TRY(vx_tf_load(&m->lower, w, "model.language_model.", &o, err));
    o.final_norm = 1;
    VX_TRY(vx_tf_load(&m->upper, w, "model.tts_language_model.", &o, err));
    const vx_tf *lo = &m->lower, *up = &m->upper;
    if (lo->n_layers != n_lower || up->n_layers != n_upper)
        return vx_fail(err, VOCIS_E_SHAPE,
                       "%s: checkpoint has %d lower + %d upper (tts) layers; %s says %d + %d "
                       "(num_hidden_layers %d, tts_backbone_num_hidden_layers %d)",
                       vx_weights_path(w), lo->n_layers, up->n_layers, c->path, n_lower, n_upper,
                       c->num_hidden_layers, n_upper);
    for (int k = 0; k < 2; k++) {
        const vx_tf *tf = k ? up : lo;
        if (tf->dim != c->hidden_size || tf->ffn_dim != c->intermediate_size ||
            tf->n_kv_heads != c->num_key_value_heads)
            return vx_fail(err, VOCIS_E_SHAPE, "%s: %s stack has hidden %d, FFN %d, %d KV heads; %s says %d, %d, %d",
                           vx_weights_path(w), k ? "upper" : "lower", tf->dim, tf->ffn_dim, tf->n_kv_heads, c->path,
                           c->hidden_size, c->intermediate_size, c->num_key_value_heads);
    }
    const int64_t H = c->hidden_size;
    vx_tensor t;
    VX_TRY(vx_weights_expect(w, VX_FLOATS, VX_DIMS(c->vocab_size, H), &t, err, "model.language_model.embed_tokens.weight"));
    m->embed = vx_mat_of(&t);
    if (!(m->owned = vx_calloc(err, (size_t)(3 * H + 1), sizeof(float), "model"))) return VOCIS_E_NOMEM;
    m->types = m->owned;
    m->eos_b1 = m->owned + 2 * H;
    m->eos_b2 = m->owned + 3 * H;
    VX_TRY(vx_weights_expect(w, VX_FLOATS, VX_DIMS(2, H), &t, err, "model.tts_input_types.weight"));
    vx_to_f32(m->types, t.data, t.dtype, (size_t)(2 * H));
    VX_TRY(vx_weights_mat(w, "tts_eos_classifier.fc1.weight", H, H, &m->eos_fc1, err));
    VX_TRY(vx_weights_mat(w, "tts_eos_classifier.fc2.weight", 1, H, &m->eos_fc2, err));
    VX_TRY(vx_weights_vec_f32(w, "tts_eos_classifier.fc1.bias", H, m->eos_b1, err));
    VX_TRY(vx_weights_vec_f32(w, "tts_eos_classifier.fc2.bias", 1, m->eos_b2, err));
    if (!m->acoustic)
        VX_TRY(vx_vv_vae_load(w, "model.acoustic_tokenizer.", &c->acoustic, VX_VV_VAE_DECODER, &m->acoustic, err));
    VX_TRY(vx_vv_connector_load(w, "model.acoustic_connector.", &m->ac_conn, err));
    VX_TRY(vx_vv_diffhead_load(w, c, &m->head, err));
    VX_TRY(vx_vv_latent_scalar(w, "model.speech_scaling_factor", &m->scaling, err));
    VX_TRY(vx_vv_latent_scalar(w, "model.speech_bias_factor", &m->bias, err));
    if (m->ac_conn.hidden != H || m->ac_conn.in_dim != vx_vv_vae_dim(m->acoustic) || m->head->hidden != H ||
        m->head->latent != vx_vv_vae_dim(m->acoustic))
        return vx_fail(err, VOCIS_E_SHAPE, "%s: connector / diffusion head / tokenizer widths do not fit together",
                       vx_weights_path(w));
    if (vx_vv_vae_dim(m->acoustic) > 256)
        return vx_fail(err, VOCIS_E_UNSUPPORTED, "acoustic latent width %d > 256", vx_vv_vae_dim(m->acoustic));
    return VOCIS_OK;
}

vocis_status vx_rt_model_load(vx_rt_model *m, const char *dir, const char *config_path, int need_tokenizer,
                              int precision, vx_err *err) {
    memset(m, 0, sizeof *m);
    m->neg_id = -1;
    vocis_status st = vx_vv_config_load_override(dir, config_path, &m->cfg, err);
    if (!st && strcmp(m->cfg.model_type, "vibevoice_streaming") != 0)
        st = vx_fail(err, VOCIS_E_UNSUPPORTED, "%s: model_type '%s' is not VibeVoice-Realtime (vibevoice_streaming)",
                     m->cfg.path, m->cfg.model_type);
    char path[4200];
    snprintf(path, sizeof path, "%s/tokenizer.json", dir);
    if (!st && need_tokenizer) {
        if (access(path, F_OK) != 0)
            st = vx_fail(err, VOCIS_E_IO,
                         "%s: missing: VibeVoice-Realtime uses the Qwen2.5 text tokenizer, which the release folder "
                         "lacks; copy tokenizer.json from Qwen/Qwen2.5-0.5B into %s",
                         path, dir);
        if (!st) st = vx_tokenizer_load(path, &m->tok, err);
        if (!st && (m->neg_id = vx_tokenizer_token_id(m->tok, "<|image_pad|>")) < 0)
            st = vx_fail(err, VOCIS_E_FORMAT, "%s: no token <|image_pad|> (not a Qwen2.5 tokenizer?)", path);
    }
    if (!st) st = vx_precision_check(vx_precision_resolve(precision), err);
    if (!st) st = vx_vv_weights_open(dir, &m->w, err);
    if (!st) vx_weights_set_precision(m->w, vx_precision_resolve(precision));
    if (!st) st = rt_from_weights(m, err);
    if (st) vx_rt_model_free(m);
    return st;
}

void vx_rt_model_free(vx_rt_model *m) {
    vx_vv_diffhead_free(m->head);
    vx_vv_connector_free(&m->ac_conn);
    vx_vv_vae_free(m->acoustic);
    vx_tf_free(&m->upper);
    vx_tf_free(&m->lower);
    free(m->owned);
    vx_weights_close(m->w);
    vx_tokenizer_free(m->tok);
    memset(m, 0, sizeof *m);
}

vocis_status vx_rt_model_synthetic(vx_rt_model *m, vx_dtype dt, int precision, uint64_t seed, vx_err *err) {
    memset(m, 0, sizeof *m);
    m->neg_id = -1;
    vx_vv_config *c = &m->cfg;
    VX_TRY(vx_vv_lm_preset("1.5b", c, err)); /* tokenizer / head / preprocessor defaults of the releases */
    c->hidden_size = 896, c->intermediate_size = 4864, c->num_hidden_layers = 24, c->tts_backbone_num_hidden_layers = 20;
    c->num_attention_heads = 14, c->num_key_value_heads = 2, c->head_dim = 64, c->vocab_size = 151936;
    c->max_position_embeddings = 8192, c->tie_word_embeddings = 0;
    c->semantic.present = 0, c->semantic_vae_dim = 0;
    c->diffusion.hidden_size = 896, c->diffusion.ffn_dim = 2688;
    snprintf(c->model_type, sizeof c->model_type, "vibevoice_streaming");
    snprintf(c->path, sizeof c->path, "synthetic-realtime-0.5b");
    const int64_t H = c->hidden_size;
    vx_synth *s = vx_synth_new(seed);
    if (!s) return vx_fail(err, VOCIS_E_NOMEM, "out of memory");
    vocis_status st = vx_vv_synth_qwen2_stack(s, c, "model.language_model.", 4, 0, dt, err);
    if (!st) st = vx_vv_synth_qwen2_stack(s, c, "model.tts_language_model.", 20, 1, dt, err);
    if (!st) st = vx_synth_add(s, dt, 0.05f, VX_DIMS(c->vocab_size, H), err, "model.language_model.embed_tokens.weight");
    if (!st) st = vx_synth_add(s, VX_F32, 0.05f, VX_DIMS(2, H), err, "model.tts_input_types.weight");
    if (!st) st = vx_synth_add(s, dt, 0.02f, VX_DIMS(H, H), err, "tts_eos_classifier.fc1.weight");
    if (!st) st = vx_synth_add(s, VX_F32, 0.02f, VX_DIMS(H), err, "tts_eos_classifier.fc1.bias");
    if (!st) st = vx_synth_add(s, dt, 0.0f, VX_DIMS(1, H), err, "tts_eos_classifier.fc2.weight");
    if (!st) st = vx_synth_add(s, VX_F32, -1.0f, VX_DIMS(1), err, "tts_eos_classifier.fc2.bias");
    if (!st) st = vx_synth_add(s, VX_F32, -1.0f, VX_DIMS(1), err, "model.speech_scaling_factor");
    if (!st) st = vx_synth_add(s, VX_F32, 0.0f, VX_DIMS(1), err, "model.speech_bias_factor");
    if (!st)
        st = vx_vv_diffusion_synth_add(s, H, c->diffusion.ffn_dim, c->diffusion.head_layers, c->acoustic_vae_dim, 0,
                                       dt, err);
    if (!st) st = vx_synth_open(s, &m->w, err);
    vx_synth_free(s);
    if (!st) vx_weights_set_precision(m->w, vx_precision_resolve(precision));
    if (!st) st = vx_vv_vae_random(&c->acoustic, VX_VV_VAE_DECODER, seed + 7, vx_precision_resolve(precision), &m->acoustic, err);
    if (!st) st = rt_from_weights(m, err);
    if (!st) m->eos_b2[0] = -1e4f; /* never stops: the benchmark runs its full length */
    if (st) vx_rt_model_free(m);
    return st;
}

void vx_rt_eos(const vx_rt_model *m, const float *h, float *fc1_out, float *logit) {
    const int64_t H = m->upper.dim;
    float *a = malloc(sizeof(float) * (size_t)H);
    if (!a) {
        *logit = -INFINITY;
        return;
    }
    vx_linear(a, h, 1, &m->eos_fc1, m->eos_b1, 1);
    if (fc1_out) memcpy(fc1_out, a, sizeof(float) * (size_t)H);
    for (int64_t i = 0; i < H; i++) a[i] = a[i] > 0.0f ? a[i] : 0.0f;
    vx_linear(logit, a, 1, &m->eos_fc2, m->eos_b2, 1);
    free(a);
}

/* ---- text --------------------------------------------------------------------- */

static int ascii_space(unsigned char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }

/* The demo's replacements (’ → ', “ ” → "), then the tokenizer. */
static vocis_status encode_piece(const vx_tokenizer *tok, const char *s, size_t n, int32_t **ids, size_t *nids,
                                 vx_err *err) {
    char *b = malloc(n + 1);
    if (!b) return vx_fail(err, VOCIS_E_NOMEM, "out of memory");
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        const unsigned char *u = (const unsigned char *)s + i;
        if (i + 2 < n && u[0] == 0xE2 && u[1] == 0x80 && (u[2] == 0x99 || u[2] == 0x9C || u[2] == 0x9D)) {
            b[k++] = u[2] == 0x99 ? '\'' : '"';
            i += 2;
        } else {
            b[k++] = s[i];
        }
    }
    vocis_status st = vx_tokenizer_encode(tok, b, k, ids, nids, err);
    free(b);
    return st;
}

vocis_status vx_rt_encode(const vx_rt_model *m, const char *text, size_t len, int32_t **ids, int64_t *n,
                          vx_err *err) {
    *ids = NULL;
    *n = 0;
    if (!m->tok) return vx_fail(err, VOCIS_E_ARG, "model loaded without a tokenizer");
    size_t a = 0, b = len;
    while (a < b && ascii_space((unsigned char)text[a])) a++;
    while (b > a && ascii_space((unsigned char)text[b - 1])) b--;
    if (a == b) return vx_fail(err, VOCIS_E_ARG, "text is empty");
    char *s = malloc(b - a + 2);
    if (!s) return vx_fail(err, VOCIS_E_NOMEM, "out of memory");
    memcpy(s, text + a, b - a);
    s[b - a] = '\n';
    size_t nn = 0;
    vocis_status st = encode_piece(m->tok, s, b - a + 1, ids, &nn, err);
    free(s);
    *n = (int64_t)nn;
    return st;
}

/* ---- presets ------------------------------------------------------------------ */

void vx_rt_preset_free(vx_rt_preset *p) {
    for (int i = 0; i < VX_RT_N_ENTRIES; i++) {
        free(p->e[i].hidden);
        free(p->e[i].k);
        free(p->e[i].v);
    }
    memset(p, 0, sizeof *p);
}

/* Copies a float tensor (shape checked by the caller) to f32, checking finiteness. */
static vocis_status copy_finite(const vx_tensor *t, float *dst, const char *where, const char *name, vx_err *err) {
    const size_t n = (size_t)vx_numel(t);
    vx_to_f32(dst, t->data, t->dtype, n);
    for (size_t i = 0; i < n; i++)
        if (!isfinite(dst[i])) return vx_fail(err, VOCIS_E_FORMAT, "%s: %s holds a non-finite value", where, name);
    return VOCIS_OK;
}

static int is_float_dt(vx_dtype d) { return d == VX_F32 || d == VX_F16 || d == VX_BF16; }

/* Sizes an entry from its hidden [1, T, H] and first key [1, kv, T, hd], allocates it. */
static vocis_status entry_init(vx_rt_preset *p, vx_rt_entry *e, const char *where, const char *ename,
                               const vx_tensor *hid, const vx_tensor *k0, int n_layers, vx_err *err) {
    char s[128];
    if (!hid || hid->ndim != 3 || hid->shape[0] != 1 || hid->shape[1] < 1 || hid->shape[2] < 1 || !is_float_dt(hid->dtype))
        return vx_fail(err, VOCIS_E_SHAPE, "%s: %s last_hidden_state is %s %s, expected float [1, T, H]", where,
                       ename, hid ? vx_dtype_name(hid->dtype) : "", hid ? vx_shape_str(hid, s, sizeof s) : "(missing)");
    if (n_layers < 1) return vx_fail(err, VOCIS_E_SHAPE, "%s: %s has no KV-cache layers", where, ename);
    if (!k0 || k0->ndim != 4 || k0->shape[0] != 1 || k0->shape[1] < 1 || k0->shape[3] < 1 || !is_float_dt(k0->dtype))
        return vx_fail(err, VOCIS_E_SHAPE, "%s: %s key 0 is %s %s, expected float [1, kv_heads, T, head_dim]",
                       where, ename, k0 ? vx_dtype_name(k0->dtype) : "", k0 ? vx_shape_str(k0, s, sizeof s) : "(missing)");
    if (!p->H) {
        p->H = hid->shape[2];
        p->kv_heads = (int)k0->shape[1];
        p->head_dim = (int)k0->shape[3];
    }
    if (hid->shape[2] != p->H || k0->shape[1] != p->kv_heads || k0->shape[3] != p->head_dim ||
        k0->shape[2] != hid->shape[1])
        return vx_fail(err, VOCIS_E_SHAPE,
                       "%s: %s: hidden %s and key %s do not fit (hidden %lld, %d KV heads x %d, same T expected)",
                       where, ename, vx_shape_str(hid, s, 64), vx_shape_str(k0, s + 64, 64), (long long)p->H,
                       p->kv_heads, p->head_dim);
    e->T = hid->shape[1];
    e->n_layers = n_layers;
    const size_t per = (size_t)p->kv_heads * (size_t)e->T * (size_t)p->head_dim;
    e->hidden = malloc(sizeof(float) * (size_t)(e->T * p->H));
    e->k = malloc(sizeof(float) * per * (size_t)n_layers);
    e->v = malloc(sizeof(float) * per * (size_t)n_layers);
    if (!e->hidden || !e->k || !e->v) return vx_fail(err, VOCIS_E_NOMEM, "out of memory");
    char name[64];
    snprintf(name, sizeof name, "%s last_hidden_state", ename);
    return copy_finite(hid, e->hidden, where, name, err);
}

static vocis_status kv_layer(const vx_rt_preset *p, vx_rt_entry *e, int l, int is_v, const vx_tensor *t,
                             const char *where, const char *ename, vx_err *err) {
    char s[64], name[64];
    snprintf(name, sizeof name, "%s %s %d", ename, is_v ? "value" : "key", l);
    if (!t || t->ndim != 4 || t->shape[0] != 1 || t->shape[1] != p->kv_heads || t->shape[2] != e->T ||
        t->shape[3] != p->head_dim || !is_float_dt(t->dtype))
        return vx_fail(err, VOCIS_E_SHAPE, "%s: %s is %s %s, expected float [1, %d, %lld, %d]", where, name,
                       t ? vx_dtype_name(t->dtype) : "", t ? vx_shape_str(t, s, sizeof s) : "(missing)", p->kv_heads,
                       (long long)e->T, p->head_dim);
    const size_t per = (size_t)p->kv_heads * (size_t)e->T * (size_t)p->head_dim;
    return copy_finite(t, (is_v ? e->v : e->k) + (size_t)l * per, where, name, err);
}

static vocis_status load_pt(const char *path, vx_rt_preset *p, vx_err *err) {
    vx_torch_file *f;
    VX_TRY(vx_torch_open_data(path, &f, err));
    const vx_pk_value *root = vx_torch_root(f);
    vocis_status st = VOCIS_OK;
    if (!root || root->type != VX_PK_DICT) {
        st = vx_fail(err, VOCIS_E_FORMAT, "%s: not a voice preset (the pickle is a %s, expected a dict)", path,
                     root ? vx_pk_type_name(root->type) : "nothing");
        goto done;
    }
    for (int i = 0; i < VX_RT_N_ENTRIES && !st; i++) {
        const char *en = vx_rt_entry_names[i];
        const vx_pk_value *o = vx_pk_dict_get(root, en);
        const vx_pk_value *hid = vx_pk_dict_get(o, "last_hidden_state"), *pkv = vx_pk_dict_get(o, "past_key_values");
        const vx_pk_value *kc = vx_pk_dict_get(pkv, "key_cache"), *vc = vx_pk_dict_get(pkv, "value_cache");
        if (!o || o->type != VX_PK_DICT || !hid || hid->type != VX_PK_TENSOR || !kc || kc->type != VX_PK_LIST || !vc ||
            vc->type != VX_PK_LIST) {
            st = vx_fail(err, VOCIS_E_FORMAT,
                         "%s: not a VibeVoice-Realtime voice preset: entry '%s' lacks last_hidden_state or "
                         "past_key_values.key_cache / value_cache",
                         path, en);
            break;
        }
        const size_t nl = kc->u.seq.n;
        if (vc->u.seq.n != nl) {
            st = vx_fail(err, VOCIS_E_FORMAT, "%s: entry '%s' has %zu key and %zu value layers", path, en, nl,
                         vc->u.seq.n);
            break;
        }
        for (size_t l = 0; l < nl && !st; l++)
            if (kc->u.seq.items[l]->type != VX_PK_TENSOR || vc->u.seq.items[l]->type != VX_PK_TENSOR)
                st = vx_fail(err, VOCIS_E_FORMAT, "%s: entry '%s' layer %zu of the cache is not a tensor", path, en, l);
        if (st) break;
        if (nl > 4096) {
            st = vx_fail(err, VOCIS_E_FORMAT, "%s: entry '%s' has %zu layers", path, en, nl);
            break;
        }
        st = entry_init(p, &p->e[i], path, en, &hid->u.tensor.t, nl ? &kc->u.seq.items[0]->u.tensor.t : NULL,
                        (int)nl, err);
        for (size_t l = 0; l < nl && !st; l++) {
            st = kv_layer(p, &p->e[i], (int)l, 0, &kc->u.seq.items[l]->u.tensor.t, path, en, err);
            if (!st) st = kv_layer(p, &p->e[i], (int)l, 1, &vc->u.seq.items[l]->u.tensor.t, path, en, err);
        }
    }
done:
    vx_torch_close(f);
    return st;
}

int vx_rt_preset_is_flat(const vx_st_file *f) { return vx_st_find(f, "tts_lm_last_hidden_state") != NULL; }

static vocis_status load_flat(const char *path, vx_rt_preset *p, vx_err *err) {
    vx_st_file *f;
    VX_TRY(vx_st_open(path, &f, err));
    vocis_status st = VOCIS_OK;
    if (!vx_rt_preset_is_flat(f)) {
        st = vx_fail(err, VOCIS_E_FORMAT, "%s: not a VibeVoice-Realtime voice (no tensor 'tts_lm_last_hidden_state')",
                     path);
        goto done;
    }
    char name[96];
    for (int i = 0; i < VX_RT_N_ENTRIES && !st; i++) {
        const char *en = vx_rt_entry_names[i];
        int nl = 0;
        for (;; nl++) {
            snprintf(name, sizeof name, "%s_key_%d", en, nl);
            if (!vx_st_find(f, name) || nl > 4096) break;
        }
        snprintf(name, sizeof name, "%s_last_hidden_state", en);
        const vx_tensor *hid = vx_st_find(f, name);
        snprintf(name, sizeof name, "%s_key_0", en);
        st = entry_init(p, &p->e[i], path, en, hid, vx_st_find(f, name), nl, err);
        for (int l = 0; l < nl && !st; l++) {
            snprintf(name, sizeof name, "%s_key_%d", en, l);
            st = kv_layer(p, &p->e[i], l, 0, vx_st_find(f, name), path, en, err);
            snprintf(name, sizeof name, "%s_value_%d", en, l);
            if (!st) st = kv_layer(p, &p->e[i], l, 1, vx_st_find(f, name), path, en, err);
        }
    }
done:
    vx_st_close(f);
    return st;
}

vocis_status vx_rt_preset_load(const char *path, vx_rt_preset *p, vx_err *err) {
    memset(p, 0, sizeof *p);
    snprintf(p->path, sizeof p->path, "%s", path);
    FILE *fp = fopen(path, "rb");
    if (!fp) return vx_fail(err, VOCIS_E_IO, "%s: cannot open voice preset", path);
    unsigned char b[4] = {0};
    size_t got = fread(b, 1, sizeof b, fp);
    fclose(fp);
    vocis_status st = got >= 2 && b[0] == 'P' && b[1] == 'K' ? load_pt(path, p, err) : load_flat(path, p, err);
    if (st) vx_rt_preset_free(p);
    else snprintf(p->path, sizeof p->path, "%s", path);
    return st;
}

vocis_status vx_rt_preset_check(const vx_rt_preset *p, const vx_vv_config *c, vx_err *err) {
    const int n_upper = c->tts_backbone_num_hidden_layers, n_lower = c->num_hidden_layers - n_upper;
    if (p->H != c->hidden_size || p->kv_heads != c->num_key_value_heads || p->head_dim != c->head_dim)
        return vx_fail(err, VOCIS_E_SHAPE,
                       "%s: the voice preset is for hidden %lld, %d KV heads x %d; the model (%s) has %d, %d x %d",
                       p->path, (long long)p->H, p->kv_heads, p->head_dim, c->path, c->hidden_size,
                       c->num_key_value_heads, c->head_dim);
    for (int i = 0; i < VX_RT_N_ENTRIES; i++) {
        const int want = i == VX_RT_LM || i == VX_RT_NEG_LM ? n_lower : n_upper;
        if (p->e[i].n_layers != want)
            return vx_fail(err, VOCIS_E_SHAPE, "%s: preset entry '%s' has %d cache layers; the model's %s stack has %d",
                           p->path, vx_rt_entry_names[i], p->e[i].n_layers,
                           i == VX_RT_LM || i == VX_RT_NEG_LM ? "lower" : "upper", want);
        if (p->e[i].T >= c->max_position_embeddings)
            return vx_fail(err, VOCIS_E_SHAPE, "%s: preset entry '%s' has %lld positions (context %d)", p->path,
                           vx_rt_entry_names[i], (long long)p->e[i].T, c->max_position_embeddings);
    }
    return VOCIS_OK;
}

vocis_status vx_rt_preset_write(const vx_rt_preset *p, vx_st_writer *w, vx_err *err) {
    char name[96];
    for (int i = 0; i < VX_RT_N_ENTRIES; i++) {
        const vx_rt_entry *e = &p->e[i];
        const char *en = vx_rt_entry_names[i];
        const size_t per = (size_t)p->kv_heads * (size_t)e->T * (size_t)p->head_dim;
        snprintf(name, sizeof name, "%s_last_hidden_state", en);
        VX_TRY(vx_st_writer_add(w, name, VX_F32, VX_DIMS(1, e->T, p->H), e->hidden, err));
        for (int l = 0; l < e->n_layers; l++) {
            snprintf(name, sizeof name, "%s_key_%d", en, l);
            VX_TRY(vx_st_writer_add(w, name, VX_F32, VX_DIMS(1, p->kv_heads, e->T, p->head_dim), e->k + l * per, err));
            snprintf(name, sizeof name, "%s_value_%d", en, l);
            VX_TRY(vx_st_writer_add(w, name, VX_F32, VX_DIMS(1, p->kv_heads, e->T, p->head_dim), e->v + l * per, err));
        }
    }
    return VOCIS_OK;
}

/* ---- session ------------------------------------------------------------------ */

enum { TR_NOISE, TR_POS, TR_NEG, TR_LATENT, TR_DEC_IN, TR_AUDIO, TR_EMB, TR_APPENDED, TR_EOS_LOGIT, TR_EOS_PROB,
       TR_EOS_HIDDEN, TR_LOWER, TR_SEQ, TR_N };

struct vx_rt_session {
    const vx_rt_model *m;
    const vx_rt_preset *p;
    vx_rt_opts o;
    vx_dpm dpm;
    vx_kv_cache kl, ku; /* lower (1 sequence); upper: 0 positive, 1 negative */
    vx_vv_vae_stream *ast;
    float *hpos, *hneg, *x, *lat, *z, *pcm, *pair;
    int64_t seq_len, max_length, steps, noise_i;
    /* text */
    char *pend;
    size_t npend, cpend;
    int started, text_done;
    int32_t *toks;
    int64_t ntok, ctok, consumed;
    int eos, capped, failed;
    int mid, frame;   /* a window in progress, and its frames done */
    int in_pair;      /* this step runs the session's pair */
    int want_latent;  /* this step waits for its diffusion */
    int64_t text_rows; /* this step starts a window with these text rows (in x) */
    const float *inj; /* its injected noise, if any */
    float noise[512]; /* the noise its diffusion used (trace) */
    vocis_status st;  /* its failure (err holds the message) */
    vx_err err;
    vx_flist audio;
    vx_flist tr[TR_N];
};

void vx_rt_opts_default(vx_rt_opts *o) {
    memset(o, 0, sizeof *o);
    o->cfg_scale = 1.5f;
    o->n_steps = 5;
    o->nthreads = 1;
}

static void kv_fill(vx_kv_cache *kv, int seq, const vx_rt_preset *p, const vx_rt_entry *e) {
    const int64_t T = e->T, hd = p->head_dim, kvh = p->kv_heads, kvd = kvh * hd;
    for (int l = 0; l < e->n_layers; l++) {
        const float *ks = e->k + (size_t)l * (size_t)(kvd * T), *vs = e->v + (size_t)l * (size_t)(kvd * T);
        float *kd = kv->k[(size_t)l * kv->nseq + seq], *vd = kv->v[(size_t)l * kv->nseq + seq];
        for (int64_t h = 0; h < kvh; h++)
            for (int64_t t = 0; t < T; t++) {
                memcpy(kd + t * kvd + h * hd, ks + (h * T + t) * hd, sizeof(float) * (size_t)hd);
                memcpy(vd + t * kvd + h * hd, vs + (h * T + t) * hd, sizeof(float) * (size_t)hd);
            }
    }
    kv->len[seq] = T;
}

vocis_status vx_rt_session_new(const vx_rt_model *m, const vx_rt_preset *p, const vx_rt_opts *o,
                               vx_rt_session **out, vx_err *err) {
    *out = NULL;
    VX_TRY(vx_rt_preset_check(p, &m->cfg, err));
    if (!o->rng && !o->inj_noise) return vx_fail(err, VOCIS_E_ARG, "no random generator and no injected noise");
    if (!(o->cfg_scale >= 0.0f && o->cfg_scale <= 100.0f)) return vx_fail(err, VOCIS_E_ARG, "cfg scale must be in [0, 100]");
    vx_rt_session *s = vx_calloc(err, 1, sizeof *s, "session");
    if (!s) return VOCIS_E_NOMEM;
    s->m = m, s->p = p, s->o = *o;
    const int64_t H = m->upper.dim, D = vx_vv_vae_dim(m->acoustic), hop = vx_vv_vae_hop(m->acoustic);
    const int64_t T_tts = p->e[VX_RT_TTS_LM].T;
    s->seq_len = T_tts;
    s->max_length = T_tts + (o->max_new_tokens > 0 ? o->max_new_tokens : m->cfg.max_position_embeddings - T_tts);
    vocis_status st = vx_dpm_init(&s->dpm, &m->cfg, o->n_steps, err);
    if (!st) st = vx_kv_init(&s->kl, &m->lower, 1, 0, err);
    if (!st) st = vx_kv_init(&s->ku, &m->upper, 2, 0, err);
    if (!st) st = vx_kv_reserve(&s->kl, p->e[VX_RT_LM].T + 64, err);
    if (!st) st = vx_kv_reserve(&s->ku, T_tts + 64, err);
    if (!st) st = vx_vv_vae_stream_new(m->acoustic, &s->ast, err);
    if (st) goto fail;
    s->hpos = malloc(sizeof(float) * (size_t)H);
    s->hneg = malloc(sizeof(float) * (size_t)H);
    s->x = malloc(sizeof(float) * (size_t)(VX_RT_TEXT_WINDOW * H));
    s->pair = malloc(sizeof(float) * (size_t)(2 * H));
    s->lat = malloc(sizeof(float) * (size_t)D);
    s->z = malloc(sizeof(float) * (size_t)D);
    s->pcm = malloc(sizeof(float) * (size_t)hop);
    if (!s->hpos || !s->hneg || !s->x || !s->pair || !s->lat || !s->z || !s->pcm) {
        st = vx_fail(err, VOCIS_E_NOMEM, "out of memory");
        goto fail;
    }
    kv_fill(&s->kl, 0, p, &p->e[VX_RT_LM]);
    kv_fill(&s->ku, 0, p, &p->e[VX_RT_TTS_LM]);
    kv_fill(&s->ku, 1, p, &p->e[VX_RT_NEG_TTS_LM]);
    memcpy(s->hpos, p->e[VX_RT_TTS_LM].hidden + (T_tts - 1) * H, sizeof(float) * (size_t)H);
    memcpy(s->hneg, p->e[VX_RT_NEG_TTS_LM].hidden + (p->e[VX_RT_NEG_TTS_LM].T - 1) * H, sizeof(float) * (size_t)H);
    if (o->trace) {
        const float pseudo = (float)m->neg_id;
        for (int64_t i = 0; i < T_tts; i++)
            if (vx_flist_add(&s->tr[TR_SEQ], &pseudo, 1)) {
                st = vx_fail(err, VOCIS_E_NOMEM, "out of memory");
                goto fail;
            }
    }
    *out = s;
    return VOCIS_OK;
fail:
    vx_rt_session_free(s);
    return st;
}

void vx_rt_session_free(vx_rt_session *s) {
    if (!s) return;
    vx_dpm_free(&s->dpm);
    vx_kv_free(&s->kl);
    vx_kv_free(&s->ku);
    vx_vv_vae_stream_free(s->ast);
    free(s->hpos), free(s->hneg), free(s->x), free(s->pair), free(s->lat), free(s->z), free(s->pcm);
    free(s->pend), free(s->toks), free(s->audio.v);
    for (int i = 0; i < TR_N; i++) free(s->tr[i].v);
    free(s);
}

int vx_rt_session_done(const vx_rt_session *s) { return s->eos || s->capped; }

static vocis_status add_tokens(vx_rt_session *s, const int32_t *ids, int64_t n, vx_err *err) {
    const int32_t vocab = s->m->cfg.vocab_size;
    for (int64_t i = 0; i < n; i++)
        if (ids[i] < 0 || ids[i] >= vocab)
            return vx_fail(err, VOCIS_E_ARG, "token id %d outside the embedding (%d rows)", ids[i], vocab);
    if (s->ntok + n > s->ctok) {
        int64_t cap = s->ctok ? s->ctok : 256;
        while (cap < s->ntok + n) cap *= 2;
        int32_t *t = realloc(s->toks, sizeof(int32_t) * (size_t)cap);
        if (!t) return vx_fail(err, VOCIS_E_NOMEM, "out of memory");
        s->toks = t;
        s->ctok = cap;
    }
    memcpy(s->toks + s->ntok, ids, sizeof(int32_t) * (size_t)n);
    s->ntok += n;
    return VOCIS_OK;
}

#define TRACE(i, ptr, n) \
    if (s->o.trace && vx_flist_add(&s->tr[i], ptr, n)) return vx_fail(err, VOCIS_E_NOMEM, "out of memory")

/* Upstream's window loop as steps that several sessions run together (vx_rt_sessions_step): a
 * window is its text part (lower and upper stack on up to five tokens: window_text_take, then
 * sessions_text for all sessions) and six speech frames; each frame is frame_start, the diffusion
 * and decode of all sessions (sessions_sample), frame_before_pair (connector, the audio), ONE pair
 * forward for all sessions, then frame_after_pair (final norm and the EOS check). s->mid: a window
 * is in progress, s->frame of it done. */

static int session_ready(const vx_rt_session *s) {
    return !s->failed && (s->mid || (!vx_rt_session_done(s) &&
                                     (s->ntok - s->consumed >= VX_RT_TEXT_WINDOW || s->text_done)));
}

/* The text part of a new window: its tokens (up to five) embedded into s->x, s->text_rows of them
 * (0: no text left, or the length cap ended the session). */
static vocis_status window_text_take(vx_rt_session *s, vx_err *err) {
    const vx_rt_model *m = s->m;
    const int64_t H = m->upper.dim;
    s->text_rows = 0;
    int64_t chunk = s->ntok - s->consumed;
    if (chunk > VX_RT_TEXT_WINDOW) chunk = VX_RT_TEXT_WINDOW;
    if (chunk <= 0) return VOCIS_OK;
    const int32_t *ids = s->toks + s->consumed;
    s->consumed += chunk;
    s->seq_len += chunk;
    for (int64_t i = 0; i < chunk; i++) {
        const float f = (float)ids[i];
        TRACE(TR_SEQ, &f, 1);
    }
    if (s->seq_len > s->max_length) {
        s->capped = 1;
        return VOCIS_OK;
    }
    const size_t es = vx_dtype_size(m->embed.dtype);
    for (int64_t i = 0; i < chunk; i++)
        vx_to_f32(s->x + i * H, (const char *)m->embed.data + (size_t)ids[i] * (size_t)H * es, m->embed.dtype,
                  (size_t)H);
    s->text_rows = chunk;
    return VOCIS_OK;
}

/* The text parts of every session that starts a window with text: one forward of the lower stack,
 * then one of the upper stack (positive cache), over all their rows, each position computed as its
 * own one-position step (so a session's rows do not depend on the others'). */
static vocis_status sessions_text(vx_rt_session *const *ss, int n, int nthreads, vx_err *err) {
    int k = 0;
    int64_t R = 0;
    for (int i = 0; i < n; i++)
        if (ss[i]->text_rows > 0) k++, R += ss[i]->text_rows;
    if (k == 0) return VOCIS_OK;
    const vx_rt_model *m = ss[0]->m;
    const int64_t H = m->upper.dim;
    float *x = malloc(sizeof(float) * (size_t)(R * H));
    vx_kv_cache **kl = malloc(sizeof *kl * (size_t)k), **ku = malloc(sizeof *ku * (size_t)k);
    int *seqs = calloc((size_t)k, sizeof(int));
    int64_t *ns = malloc(sizeof(int64_t) * (size_t)k);
    vocis_status st = x && kl && ku && seqs && ns ? VOCIS_OK : vx_fail(err, VOCIS_E_NOMEM, "out of memory");
    int64_t r = 0;
    for (int i = 0, j = 0; i < n && !st; i++) {
        vx_rt_session *s = ss[i];
        if (s->text_rows <= 0) continue;
        memcpy(x + r * H, s->x, sizeof(float) * (size_t)(s->text_rows * H));
        kl[j] = &s->kl, ku[j] = &s->ku, ns[j++] = s->text_rows;
        r += s->text_rows;
    }
    if (!st) st = vx_tf_forward_steps_kvs(&m->lower, kl, seqs, k, ns, x, nthreads, err);
    r = 0;
    for (int i = 0; i < n && !st; i++) {
        vx_rt_session *s = ss[i];
        if (s->text_rows <= 0) continue;
        if (s->o.trace && vx_flist_add(&s->tr[TR_LOWER], x + r * H, s->text_rows * H)) {
            st = vx_fail(err, VOCIS_E_NOMEM, "out of memory");
            break;
        }
        r += s->text_rows;
    }
    for (int64_t i = 0; i < R && !st; i++)
        for (int64_t j = 0; j < H; j++) x[i * H + j] += m->types[H + j];
    if (!st) st = vx_tf_forward_steps_kvs(&m->upper, ku, seqs, k, ns, x, nthreads, err);
    r = 0;
    for (int i = 0; i < n && !st; i++) {
        vx_rt_session *s = ss[i];
        if (s->text_rows <= 0) continue;
        r += s->text_rows;
        vx_tf_final_norm(&m->upper, s->hpos, x + (r - 1) * H, 1);
        s->text_rows = 0;
    }
    free(x), free(kl), free(ku), free(seqs), free(ns);
    return st;
}

/* The next step of a ready session up to its diffusion (s->want_latent; 0: the length cap ended it
 * in the window's text part). */
static vocis_status frame_start(vx_rt_session *s, vx_err *err) {
    const int64_t D = vx_vv_vae_dim(s->m->acoustic);
    s->want_latent = 0;
    if (!s->mid) { /* its text rows, if any, run in sessions_text */
        VX_TRY(window_text_take(s, err));
        if (s->capped) return VOCIS_OK;
        s->mid = 1;
        s->frame = 0;
    }
    s->inj = s->o.inj_noise && s->noise_i < s->o.n_inj ? s->o.inj_noise + s->noise_i * 2 * D : NULL;
    if (s->o.inj_noise && !s->inj && !s->o.rng)
        return vx_fail(err, VOCIS_E_ARG, "injected noise ran out after %lld frames", (long long)s->o.n_inj);
    s->want_latent = 1;
    return VOCIS_OK;
}

/* The frame from its sampled latent (s->lat), decoded (s->pcm), up to the pair forward; *pair = 1
 * when s->pair holds the two rows to run (0: the window or the session ended first). */
static vocis_status frame_before_pair(vx_rt_session *s, int nt, int *pair, vx_err *err) {
    const vx_rt_model *m = s->m;
    const int64_t H = m->upper.dim, D = vx_vv_vae_dim(m->acoustic), hop = vx_vv_vae_hop(m->acoustic);
    *pair = 0;
    s->want_latent = 0;
    s->noise_i++;
    s->steps++;
    const int keep = !s->eos;
    VX_TRY(vx_vv_connector_run(&m->ac_conn, s->lat, 1, s->pair, nt, err));
    TRACE(TR_NOISE, s->noise, 2 * D);
    TRACE(TR_POS, s->hpos, H);
    TRACE(TR_NEG, s->hneg, H);
    TRACE(TR_LATENT, s->lat, D);
    TRACE(TR_DEC_IN, s->z, D);
    TRACE(TR_AUDIO, s->pcm, hop);
    TRACE(TR_EMB, s->pair, H);
    const float kf = (float)keep, one = 1.0f;
    TRACE(TR_APPENDED, &kf, 1);
    if (keep) {
        if (vx_flist_add(&s->audio, s->pcm, hop)) return vx_fail(err, VOCIS_E_NOMEM, "out of memory");
        if (s->o.on_audio && s->o.on_audio(s->o.user, s->pcm, hop)) return vx_fail(err, VOCIS_E_CANCELLED, "cancelled");
    }
    if (s->o.max_samples > 0 && s->audio.n >= s->o.max_samples) {
        s->capped = 1;
        s->mid = 0;
        return VOCIS_OK;
    }
    s->seq_len++;
    TRACE(TR_SEQ, &one, 1);
    if (s->seq_len > s->max_length) { /* the window's loop breaks, and the length cap ends the session */
        s->capped = 1;
        s->mid = 0;
        return VOCIS_OK;
    }
    for (int64_t j = 0; j < H; j++) s->pair[j] += m->types[j];
    memcpy(s->pair + H, s->pair, sizeof(float) * (size_t)H);
    *pair = 1;
    return VOCIS_OK;
}

static vocis_status frame_after_pair(vx_rt_session *s, vx_err *err) {
    const vx_rt_model *m = s->m;
    const int64_t H = m->upper.dim;
    vx_tf_final_norm(&m->upper, s->hpos, s->pair, 1);
    vx_tf_final_norm(&m->upper, s->hneg, s->pair + H, 1);
    float logit;
    vx_rt_eos(m, s->hpos, NULL, &logit);
    const float prob = 1.0f / (1.0f + expf(-logit));
    TRACE(TR_EOS_LOGIT, &logit, 1);
    TRACE(TR_EOS_PROB, &prob, 1);
    TRACE(TR_EOS_HIDDEN, s->hpos, H);
    if (prob > 0.5f) s->eos = 1; /* the window still runs out (its frames are not kept) */
    if (++s->frame == VX_RT_SPEECH_WINDOW) s->mid = 0;
    return VOCIS_OK;
}

static void session_fail(vx_rt_session *s, vocis_status st, const vx_err *err) {
    s->failed = 1;
    s->st = st;
    if (err) s->err = *err;
}

/* The frames of every session waiting for one: the latents in one head call per DPM step for all
 * sessions on the same schedule, one acoustic decode step for all of them, then each one's frame up
 * to its pair (frame_before_pair). */
static vocis_status sessions_sample(vx_rt_session *const *ss, int n, int nthreads, vx_err *err) {
    const size_t nn = (size_t)(n > 0 ? n : 1);
    vx_vv_sample_req *q = malloc(sizeof *q * nn);
    vx_vv_sample_trace *tr = calloc(nn, sizeof *tr);
    vx_rt_session **who = malloc(sizeof *who * nn);
    const vx_dpm **d = malloc(sizeof *d * nn);
    vocis_status *sst = malloc(sizeof *sst * nn);
    vx_err *serr = calloc(nn, sizeof *serr);
    vx_vv_vae_stream **as = malloc(sizeof *as * nn);
    const float **zin = malloc(sizeof *zin * nn);
    float **pcm = malloc(sizeof *pcm * nn);
    vocis_status st = q && tr && who && d && sst && serr && as && zin && pcm
                          ? VOCIS_OK
                          : vx_fail(err, VOCIS_E_NOMEM, "out of memory");
    int k = 0; /* the sessions waiting for a latent */
    for (int i = 0; i < n && !st; i++) {
        vx_rt_session *t = ss[i];
        if (!t->want_latent) continue;
        who[k] = t, d[k] = &t->dpm;
        tr[k] = (vx_vv_sample_trace){.init_noise = t->noise};
        q[k] = (vx_vv_sample_req){t->hpos, t->hneg, t->o.cfg_scale, t->inj ? NULL : t->o.rng, t->inj, t->lat, &tr[k]};
        k++;
    }
    if (k > 0) vx_vv_sample_latents_any(who[0]->m->head, d, q, k, nthreads, sst, serr);
    int ok = 0; /* those with a latent */
    for (int j = 0; j < k; j++) {
        vx_rt_session *s = who[j];
        if (sst[j]) {
            s->want_latent = 0;
            session_fail(s, sst[j], &serr[j]);
            continue;
        }
        for (int64_t i = 0, D = vx_vv_vae_dim(s->m->acoustic); i < D; i++) s->z[i] = s->lat[i] / s->m->scaling - s->m->bias;
        who[ok] = s, as[ok] = s->ast, zin[ok] = s->z, pcm[ok++] = s->pcm;
    }
    if (ok > 0) {
        vx_err e = {0};
        const vocis_status ds = vx_vv_vae_decode_steps(who[0]->m->acoustic, as, ok, zin, pcm, nthreads, &e);
        for (int j = 0; j < ok; j++) {
            vx_err fe = {0};
            const vocis_status fs = ds ? ds : frame_before_pair(who[j], nthreads, &who[j]->in_pair, &fe);
            if (fs) session_fail(who[j], fs, ds ? &e : &fe);
        }
    }
    free(q), free(tr), free(who), free(d), free(sst), free(serr), free(as), free(zin), free(pcm);
    return st;
}

vocis_status vx_rt_sessions_step(vx_rt_session *const *ss, int n, int nthreads, vx_err *err) {
    int k = 0;
    for (int i = 0; i < n; i++) {
        vx_rt_session *s = ss[i];
        s->in_pair = 0, s->want_latent = 0;
        if (!session_ready(s)) continue;
        vx_err e = {0};
        const vocis_status st = frame_start(s, &e);
        if (st) session_fail(s, st, &e), s->text_rows = 0;
    }
    VX_TRY(sessions_text(ss, n, nthreads, err));
    VX_TRY(sessions_sample(ss, n, nthreads, err));
    vx_kv_cache **kvs = malloc(sizeof *kvs * (size_t)(n > 0 ? n : 1));
    float **pairs = malloc(sizeof *pairs * (size_t)(n > 0 ? n : 1));
    vx_rt_session **who = malloc(sizeof *who * (size_t)(n > 0 ? n : 1));
    if (!kvs || !pairs || !who) {
        free(kvs), free(pairs), free(who);
        return vx_fail(err, VOCIS_E_NOMEM, "out of memory");
    }
    for (int i = 0; i < n; i++)
        if (ss[i]->in_pair) who[k] = ss[i], kvs[k] = &ss[i]->ku, pairs[k] = ss[i]->pair, k++;
    /* one forward for every pair, each row computed as its own one-position step would be */
    vocis_status st = k ? vx_tf_forward_pairs(&ss[0]->m->upper, kvs, pairs, k, nthreads, err) : VOCIS_OK;
    for (int i = 0; i < k && !st; i++) {
        vx_err e = {0};
        const vocis_status fs = frame_after_pair(who[i], &e);
        if (fs) session_fail(who[i], fs, &e);
    }
    free(kvs), free(pairs), free(who);
    return st;
}

int vx_rt_session_ready(const vx_rt_session *s) { return session_ready(s); }

vocis_status vx_rt_session_status(const vx_rt_session *s, vx_err *err) {
    if (s->failed && err) *err = s->err;
    return s->failed ? s->st : VOCIS_OK;
}

static vocis_status run_ready(vx_rt_session *s, vx_err *err) {
    if (s->o.batched) return VOCIS_OK; /* the caller steps it with others (vx_rt_sessions_step) */
    vocis_status st = VOCIS_OK;
    while (!st && session_ready(s)) st = vx_rt_sessions_step(&s, 1, s->o.nthreads, err);
    if (st) session_fail(s, st, err);
    return st ? st : vx_rt_session_status(s, err);
}

static vocis_status check_usable(const vx_rt_session *s, vx_err *err) {
    if (s->failed) return vx_fail(err, VOCIS_E_ARG, "the session failed earlier");
    if (s->text_done) return vx_fail(err, VOCIS_E_ARG, "the text was already finished");
    if (!s->m->tok) return vx_fail(err, VOCIS_E_ARG, "model loaded without a tokenizer");
    return VOCIS_OK;
}

vocis_status vx_rt_session_push(vx_rt_session *s, const char *text, size_t len, vx_err *err) {
    VX_TRY(check_usable(s, err));
    if (!s->started) { /* strip(): leading whitespace never counts */
        while (len && ascii_space((unsigned char)*text)) text++, len--;
        if (!len) return VOCIS_OK;
        s->started = 1;
    }
    if (s->npend + len + 2 > s->cpend) {
        size_t cap = s->cpend ? s->cpend : 1024;
        while (cap < s->npend + len + 2) cap *= 2;
        char *b = realloc(s->pend, cap);
        if (!b) return vx_fail(err, VOCIS_E_NOMEM, "out of memory");
        s->pend = b;
        s->cpend = cap;
    }
    memcpy(s->pend + s->npend, text, len);
    s->npend += len;
    if (vx_rt_session_done(s)) return VOCIS_OK; /* speech ended: later text changes nothing */
    /* Final text: up to the last space or tab that follows an ASCII non-space and precedes some
     * later ASCII non-space. Tokens never span such a point (the pre-tokenizer splits before the
     * space: " word" is one piece; punctuation only absorbs directly following newlines), and the
     * final strip() cannot reach it (text follows), so its tokens are those of the whole text. */
    size_t cut = 0, last_solid = SIZE_MAX;
    for (size_t i = s->npend; i-- > 1;) {
        const unsigned char c = (unsigned char)s->pend[i], b = (unsigned char)s->pend[i - 1];
        if (last_solid == SIZE_MAX && c < 0x80 && !ascii_space(c)) last_solid = i;
        if ((c == ' ' || c == '\t') && b < 0x80 && !ascii_space(b) && last_solid != SIZE_MAX && last_solid > i) {
            cut = i;
            break;
        }
    }
    if (!cut) return VOCIS_OK;
    int32_t *ids = NULL;
    size_t n = 0;
    vocis_status st = encode_piece(s->m->tok, s->pend, cut, &ids, &n, err);
    if (!st) st = add_tokens(s, ids, (int64_t)n, err);
    free(ids);
    if (st) {
        session_fail(s, st, err);
        return st;
    }
    memmove(s->pend, s->pend + cut, s->npend - cut);
    s->npend -= cut;
    return run_ready(s, err);
}

vocis_status vx_rt_session_finish(vx_rt_session *s, vx_err *err) {
    VX_TRY(check_usable(s, err));
    while (s->npend && ascii_space((unsigned char)s->pend[s->npend - 1])) s->npend--;
    if (!s->npend && !s->ntok) return vx_fail(err, VOCIS_E_ARG, "text is empty");
    if (!s->pend) {
        s->pend = malloc(2);
        if (!s->pend) return vx_fail(err, VOCIS_E_NOMEM, "out of memory");
    }
    s->pend[s->npend++] = '\n';
    int32_t *ids = NULL;
    size_t n = 0;
    vocis_status st = encode_piece(s->m->tok, s->pend, s->npend, &ids, &n, err);
    if (!st) st = add_tokens(s, ids, (int64_t)n, err);
    free(ids);
    s->npend = 0;
    s->text_done = 1;
    if (st) {
        session_fail(s, st, err);
        return st;
    }
    return run_ready(s, err);
}

vocis_status vx_rt_session_run_ids(vx_rt_session *s, const int32_t *ids, int64_t n, vx_err *err) {
    if (s->failed || s->text_done) return vx_fail(err, VOCIS_E_ARG, "the session was already run");
    if (n < 1) return vx_fail(err, VOCIS_E_ARG, "no text tokens");
    VX_TRY(add_tokens(s, ids, n, err));
    s->text_done = 1;
    return run_ready(s, err);
}

const float *vx_rt_session_audio(const vx_rt_session *s, int64_t *n) {
    *n = s->audio.n;
    return s->audio.v;
}

float *vx_rt_session_take_audio(vx_rt_session *s, int64_t *n) {
    float *a = s->audio.v;
    *n = s->audio.n;
    memset(&s->audio, 0, sizeof s->audio);
    return a;
}

void vx_rt_session_stats(const vx_rt_session *s, vx_rt_stats *st) {
    st->text_tokens = s->ntok;
    st->speech_steps = s->steps;
    st->frames_kept = s->audio.n / vx_vv_vae_hop(s->m->acoustic);
    st->eos = s->eos;
    st->length_cap = s->capped;
}

vocis_status vx_rt_session_write_trace(const vx_rt_session *s, vx_st_writer *w, vx_err *err) {
    const vx_rt_model *m = s->m;
    const int64_t H = m->upper.dim, D = vx_vv_vae_dim(m->acoustic), hop = vx_vv_vae_hop(m->acoustic);
    const int64_t n = s->tr[TR_LATENT].n / D, ne = s->tr[TR_EOS_LOGIT].n;
    vocis_status st = VOCIS_OK;
    if (n > 0) {
        st = vx_st_writer_add(w, "frame_init_noise", VX_F32, VX_DIMS(n, 2, D), s->tr[TR_NOISE].v, err);
        if (!st) st = vx_st_writer_add(w, "frame_pos_condition", VX_F32, VX_DIMS(n, H), s->tr[TR_POS].v, err);
        if (!st) st = vx_st_writer_add(w, "frame_neg_condition", VX_F32, VX_DIMS(n, H), s->tr[TR_NEG].v, err);
        if (!st) st = vx_st_writer_add(w, "frame_latent", VX_F32, VX_DIMS(n, D), s->tr[TR_LATENT].v, err);
        if (!st) st = vx_st_writer_add(w, "frame_decoder_input", VX_F32, VX_DIMS(n, 1, D), s->tr[TR_DEC_IN].v, err);
        if (!st) st = vx_st_writer_add(w, "frame_audio", VX_F32, VX_DIMS(n, 1, hop), s->tr[TR_AUDIO].v, err);
        if (!st) st = vx_st_writer_add(w, "frame_acoustic_embed", VX_F32, VX_DIMS(n, 1, H), s->tr[TR_EMB].v, err);
        if (!st) {
            int32_t *ap = malloc(sizeof(int32_t) * (size_t)n);
            if (!ap) return vx_fail(err, VOCIS_E_NOMEM, "out of memory");
            for (int64_t i = 0; i < n; i++) ap[i] = s->tr[TR_APPENDED].v[i] != 0.0f;
            st = vx_st_writer_add(w, "frame_audio_appended", VX_I32, VX_DIMS(n), ap, err);
            free(ap);
        }
    }
    if (!st && ne > 0) {
        st = vx_st_writer_add(w, "step_eos_logit", VX_F32, VX_DIMS(ne), s->tr[TR_EOS_LOGIT].v, err);
        if (!st) st = vx_st_writer_add(w, "step_eos_prob", VX_F32, VX_DIMS(ne), s->tr[TR_EOS_PROB].v, err);
        if (!st) st = vx_st_writer_add(w, "step_eos_hidden", VX_F32, VX_DIMS(ne, H), s->tr[TR_EOS_HIDDEN].v, err);
    }
    if (!st && s->audio.n > 0) st = vx_st_writer_add(w, "audio", VX_F32, VX_DIMS(1, s->audio.n), s->audio.v, err);
    if (!st && s->tr[TR_LOWER].n > 0)
        st = vx_st_writer_add(w, "window_lower_hidden", VX_F32, VX_DIMS(s->tr[TR_LOWER].n / H, H), s->tr[TR_LOWER].v,
                              err);
    const int64_t ns = s->tr[TR_SEQ].n, nn = ns > s->ntok ? ns : s->ntok;
    int64_t *ids = malloc(sizeof(int64_t) * (size_t)(nn + 1));
    if (!ids) return vx_fail(err, VOCIS_E_NOMEM, "out of memory");
    for (int64_t i = 0; i < ns; i++) ids[i] = (int64_t)s->tr[TR_SEQ].v[i];
    if (!st && ns > 0) st = vx_st_writer_add(w, "sequences", VX_I64, VX_DIMS(1, ns), ids, err);
    for (int64_t i = 0; i < s->ntok; i++) ids[i] = s->toks[i];
    if (!st && s->ntok > 0) st = vx_st_writer_add(w, "tts_text_ids", VX_I64, VX_DIMS(1, s->ntok), ids, err);
    free(ids);
    return st;
}
