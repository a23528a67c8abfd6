/* Stage harness entry for the VibeVoice Qwen2 LM (golden 06_lm_prefill). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/stages.h"
#include "models/vibevoice/lm.h"

/* KV cache slot [L][kv·hd] (position-major) -> [1][kv][L][hd] (HF layout). */
static void kv_to_hf(const float *src, int64_t L, int kvh, int hd, float *dst) {
    for (int g = 0; g < kvh; g++)
        for (int64_t p = 0; p < L; p++)
            memcpy(dst + ((size_t)g * L + p) * hd, src + (size_t)p * kvh * hd + (size_t)g * hd, sizeof(float) * hd);
}

vocis_status vx_stage_qwen2_prefill(const vx_stage_args *a, vx_err *err) {
    VX_TRY(vx_stage_no_options(a, err));
    vx_vv_config cfg;
    VX_TRY(vx_vv_config_load(a->model_dir, &cfg, err));
    vx_weights *w;
    VX_TRY(vx_vv_weights_open(a->model_dir, &w, err));
    vx_weights_set_precision(w, a->precision);
    vx_vv_lm lm;
    vocis_status st = vx_vv_lm_init(&lm, w, &cfg, "model.language_model.", err);
    if (st) {
        vx_weights_close(w);
        return st;
    }
    const vx_tf *tf = &lm.tf;
    const int64_t H = tf->dim, V = lm.lm_head.rows;
    float *x = NULL, *h = NULL, *logits = NULL, *kvbuf = NULL;
    vx_tf_record rec = {0};
    vx_kv_cache kv = {0};
    vx_tensor t;
    if ((st = vx_stage_in_f32(a, "inputs_embeds", VX_DIMS(1, -1, H), &x, &t, err))) goto done;
    const int64_t L = t.shape[1];
    if (L < 1) {
        st = vx_fail(err, VOCIS_E_SHAPE, "inputs_embeds: no positions");
        goto done;
    }
    if (L > lm.max_positions) {
        st = vx_fail(err, VOCIS_E_ARG, "inputs_embeds: %lld positions exceed max_position_embeddings %lld",
                     (long long)L, (long long)lm.max_positions);
        goto done;
    }
    if ((st = vx_tf_record_init(&rec, tf, 1, L, err))) goto done;
    h = malloc(sizeof(float) * (size_t)(L * H));
    logits = malloc(sizeof(float) * (size_t)(L * V));
    kvbuf = malloc(sizeof(float) * (size_t)(L * tf->n_kv_heads * tf->head_dim));
    if (!h || !logits || !kvbuf) {
        st = vx_fail(err, VOCIS_E_NOMEM, "out of memory");
        goto done;
    }
    if ((st = vx_kv_init(&kv, tf, 1, lm.max_positions, err))) goto done;
    if ((st = vx_tf_forward(tf, &kv, NULL, 1, L, x, a->nthreads, vx_tf_record_hook, &rec, err))) goto done;
    for (int l = 0; l < tf->n_layers && !st; l++) {
        char name[64];
        snprintf(name, sizeof name, "layer%d_out", l);
        st = vx_stage_out_f32(a, name, VX_DIMS(1, L, H), rec.layers[l], err);
        if (!st && l == 0) st = vx_stage_out_f32(a, "hidden_after_layer0", VX_DIMS(1, L, H), rec.layers[l], err);
        for (int kvi = 0; kvi < 2 && !st; kvi++) {
            kv_to_hf(kvi ? kv.v[l] : kv.k[l], L, tf->n_kv_heads, tf->head_dim, kvbuf);
            snprintf(name, sizeof name, "kv_layer%d_%s", l, kvi ? "value" : "key");
            st = vx_stage_out_f32(a, name, VX_DIMS(1, tf->n_kv_heads, L, tf->head_dim), kvbuf, err);
        }
    }
    if (st) goto done;
    vx_tf_final_norm(tf, h, x, L);
    if ((st = vx_stage_out_f32(a, "last_hidden_state", VX_DIMS(1, L, H), h, err))) goto done;
    vx_vv_lm_logits(&lm, h, L, logits, a->nthreads);
    if ((st = vx_stage_out_f32(a, "logits", VX_DIMS(1, L, V), logits, err))) goto done;
    st = vx_stage_out_f32(a, "rope_inv_freq", VX_DIMS(tf->head_dim / 2), tf->inv_freq, err);
done:
    vx_tf_record_free(&rec);
    free(x), free(h), free(logits), free(kvbuf);
    vx_kv_free(&kv);
    vx_vv_lm_free(&lm);
    vx_weights_close(w);
    return st;
}
