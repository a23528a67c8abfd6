/* Stage harness entries for T3 (golden 06_t3_cond, 07_t3_prefill). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/chatterbox/t3.h"
#include "models/stages.h"

static vocis_status load_t3(const vx_stage_args *a, vx_t3 *t3, vx_err *err) {
    vx_cb_config cfg;
    vx_cb_config_default(&cfg);
    VX_TRY(vx_cb_config_load(&cfg, a->model_dir, NULL, err));
    char path[4096];
    snprintf(path, sizeof path, "%s/t3_cfg.safetensors", a->model_dir);
    return vx_t3_load(t3, path, &cfg, err);
}

vocis_status vx_stage_t3_cond(const vx_stage_args *a, vx_err *err) {
    vx_t3 t3;
    VX_TRY(load_t3(a, &t3, err));
    float *spk = NULL, *emo = NULL, *cond = NULL, *pe = NULL, *po = NULL;
    int64_t *toks = NULL;
    vx_tensor tt;
    vocis_status st;
    const int64_t D = t3.dim;
    if ((st = vx_stage_in_f32(a, "speaker_emb", VX_DIMS(1, t3.speaker_dim), &spk, NULL, err))) goto done;
    if ((st = vx_stage_in_i64(a, "cond_prompt_speech_tokens", VX_DIMS(1, -1), &toks, &tt, err))) goto done;
    if ((st = vx_stage_in_f32(a, "emotion_adv", VX_DIMS(1, 1, 1), &emo, NULL, err))) goto done;
    const int P = (int)tt.shape[1];
    vx_t3_cond c = {spk, toks, P, emo[0]};
    const int lc = vx_t3_cond_len(&t3, &c);
    cond = malloc(sizeof(float) * (size_t)lc * D);
    pe = malloc(sizeof(float) * (size_t)(P ? P : 1) * D);
    po = malloc(sizeof(float) * (size_t)t3.n_query * D);
    if (!cond || !pe || !po) {
        st = vx_fail(err, VOCIS_E_NOMEM, "out of memory");
        goto done;
    }
    int len;
    if ((st = vx_t3_cond_encode(&t3, &c, cond, &len, pe, po, a->nthreads, err))) goto done;
    if ((st = vx_stage_out_f32(a, "cond_prompt_speech_emb", VX_DIMS(1, P, D), pe, err))) goto done;
    if (P > 0 && (st = vx_stage_out_f32(a, "perceiver_out", VX_DIMS(1, t3.n_query, D), po, err))) goto done;
    st = vx_stage_out_f32(a, "cond_emb", VX_DIMS(1, len, D), cond, err);
done:
    free(spk), free(emo), free(toks), free(cond), free(pe), free(po);
    vx_t3_free(&t3);
    return st;
}

typedef struct {
    float **layers; /* [n_layers] -> [B][L][D] */
    int64_t L, D;
} dump_ctx;

static void dump_layer(void *user, int layer, int seq, int64_t pos0, int64_t n, const float *x) {
    dump_ctx *d = user;
    memcpy(d->layers[layer] + ((size_t)seq * d->L + pos0) * d->D, x, sizeof(float) * (size_t)(n * d->D));
}

vocis_status vx_stage_t3_prefill(const vx_stage_args *a, vx_err *err) {
    vx_t3 t3;
    VX_TRY(load_t3(a, &t3, err));
    const int64_t D = t3.dim, V = t3.speech_head.rows;
    float *x = NULL, *logits = NULL, *h = NULL;
    vx_tensor t;
    vx_kv_cache kv = {0};
    dump_ctx d = {0};
    vocis_status st = vx_stage_in_f32(a, "inputs_embeds", VX_DIMS(-1, -1, D), &x, &t, err);
    if (st) goto done;
    const int B = (int)t.shape[0];
    const int64_t L = t.shape[1];
    if (B < 1 || B > 64 || L < 1) {
        st = vx_fail(err, VOCIS_E_SHAPE, "inputs_embeds: need 1..64 rows of at least one position");
        goto done;
    }
    d.L = L, d.D = D;
    d.layers = calloc((size_t)t3.tf.n_layers, sizeof(float *));
    logits = malloc(sizeof(float) * (size_t)B * V);
    h = malloc(sizeof(float) * (size_t)B * L * D);
    if (!d.layers || !logits || !h) {
        st = vx_fail(err, VOCIS_E_NOMEM, "out of memory");
        goto done;
    }
    for (int l = 0; l < t3.tf.n_layers; l++)
        if (!(d.layers[l] = malloc(sizeof(float) * (size_t)B * L * D))) {
            st = vx_fail(err, VOCIS_E_NOMEM, "out of memory");
            goto done;
        }
    if ((st = vx_kv_init(&kv, &t3.tf, B, 0, err))) goto done;
    if ((st = vx_tf_forward(&t3.tf, &kv, NULL, B, L, x, a->nthreads, dump_layer, &d, err))) goto done;
    for (int l = 0; l < t3.tf.n_layers; l++) {
        char name[64];
        snprintf(name, sizeof name, "hidden_after_layer%d", l);
        if ((st = vx_stage_out_f32(a, name, VX_DIMS(B, L, D), d.layers[l], err))) goto done;
    }
    vx_tf_final_norm(&t3.tf, h, x, B * L);
    if ((st = vx_stage_out_f32(a, "final_norm_hidden", VX_DIMS(B, L, D), h, err))) goto done;
    for (int b = 0; b < B; b++)
        vx_linear(logits + (size_t)b * V, h + ((size_t)b * L + L - 1) * D, 1, &t3.speech_head, NULL, a->nthreads);
    st = vx_stage_out_f32(a, "logits_last", VX_DIMS(B, V), logits, err);
done:
    for (int l = 0; d.layers && l < t3.tf.n_layers; l++) free(d.layers[l]);
    free(d.layers), free(x), free(logits), free(h);
    vx_kv_free(&kv);
    vx_t3_free(&t3);
    return st;
}
