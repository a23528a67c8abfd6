/* Stage harness entries for T3 (golden 06_t3_cond, 07_t3_prefill). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/precision.h"
#include "models/chatterbox/conds.h"
#include "models/chatterbox/mtl.h"
#include "models/chatterbox/t3.h"
#include "models/chatterbox/turbo.h"
#include "models/stages.h"

static vocis_status load_t3(const vx_stage_args *a, vx_t3 *t3, vx_err *err) {
    vx_cb_config cfg;
    vx_cb_config_default(&cfg);
    VX_TRY(vx_cb_config_load(&cfg, a->model_dir, NULL, err));
    char path[4096];
    vx_cb_t3_path(a->model_dir, path, sizeof path); /* t3_cfg.safetensors, or the multilingual T3 */
    return vx_t3_load_prec(t3, path, &cfg, a->precision ? a->precision : VX_PREC_EXACT, err);
}

vocis_status vx_stage_t3_cond(const vx_stage_args *a, vx_err *err) {
    if (vx_turbo_is_folder(a->model_dir)) return vx_stage_turbo_t3_cond(a, err);
    VX_TRY(vx_stage_no_options(a, err));
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

vocis_status vx_stage_t3_prefill(const vx_stage_args *a, vx_err *err) {
    if (vx_turbo_is_folder(a->model_dir)) return vx_stage_turbo_t3_prefill(a, err);
    VX_TRY(vx_stage_no_options(a, err));
    vx_t3 t3;
    VX_TRY(load_t3(a, &t3, err));
    const int64_t D = t3.dim, V = t3.speech_head.rows;
    float *x = NULL, *logits = NULL, *h = NULL;
    vx_tensor t;
    vx_kv_cache kv = {0};
    vx_tf_record rec = {0};
    vocis_status st = vx_stage_in_f32(a, "inputs_embeds", VX_DIMS(-1, -1, D), &x, &t, err);
    if (st) goto done;
    const int B = (int)t.shape[0];
    const int64_t L = t.shape[1];
    if (B < 1 || B > 64 || L < 1) {
        st = vx_fail(err, VOCIS_E_SHAPE, "inputs_embeds: need 1..64 rows of at least one position");
        goto done;
    }
    if ((st = vx_tf_record_init(&rec, &t3.tf, B, L, err))) goto done;
    logits = malloc(sizeof(float) * (size_t)B * V);
    h = malloc(sizeof(float) * (size_t)B * L * D);
    if (!logits || !h) {
        st = vx_fail(err, VOCIS_E_NOMEM, "out of memory");
        goto done;
    }
    if ((st = vx_kv_init(&kv, &t3.tf, B, 0, err))) goto done;
    if ((st = vx_tf_forward(&t3.tf, &kv, NULL, B, L, x, a->nthreads, vx_tf_record_hook, &rec, err))) goto done;
    for (int l = 0; l < t3.tf.n_layers; l++) {
        char name[64];
        snprintf(name, sizeof name, "hidden_after_layer%d", l);
        if ((st = vx_stage_out_f32(a, name, VX_DIMS(B, L, D), rec.layers[l], err))) goto done;
    }
    vx_tf_final_norm(&t3.tf, h, x, B * L);
    if ((st = vx_stage_out_f32(a, "final_norm_hidden", VX_DIMS(B, L, D), h, err))) goto done;
    for (int b = 0; b < B; b++)
        vx_linear(logits + (size_t)b * V, h + ((size_t)b * L + L - 1) * D, 1, &t3.speech_head, NULL, a->nthreads);
    st = vx_stage_out_f32(a, "logits_last", VX_DIMS(B, V), logits, err);
done:
    vx_tf_record_free(&rec);
    free(x), free(logits), free(h);
    vx_kv_free(&kv);
    vx_t3_free(&t3);
    return st;
}

vocis_status vx_stage_conds_pt_out(const vx_stage_args *a, vx_cb_conds *c, vx_err *err) {
    memset(c, 0, sizeof *c);
    VX_TRY(vx_stage_no_options(a, err));
    char path[4200];
    snprintf(path, sizeof path, "%s/conds.pt", a->model_dir);
    VX_TRY(vx_cb_conds_load_pt(path, c, err));
    vocis_status st = VOCIS_OK;
#define OUT_F(name, f) if (!st) st = vx_stage_out_f32(a, name, (f).ndim, (f).shape, (f).data, err)
#define OUT_I(name, f) if (!st) st = vx_stage_out_i64(a, name, (f).ndim, (f).shape, (f).data, err)
    OUT_F("t3.speaker_emb", c->speaker_emb);
    OUT_I("t3.cond_prompt_speech_tokens", c->cond_prompt_speech_tokens);
    OUT_F("t3.emotion_adv", c->emotion_adv);
    if (c->has_gen) {
        OUT_I("gen.prompt_token", c->prompt_token);
        if (!st) st = vx_stage_out_i64(a, "gen.prompt_token_len", VX_DIMS(1), &c->prompt_token_len, err);
        OUT_F("gen.prompt_feat", c->prompt_feat);
        OUT_F("gen.embedding", c->embedding);
    }
#undef OUT_F
#undef OUT_I
    if (st) vx_cb_conds_free(c);
    return st;
}

/* conds-pt: the model folder's conds.pt as golden-named tensors (13_conds_pt),
 * plus the T3 prefill logits for `builtin_text_tokens` when --in has them. */
vocis_status vx_stage_conds_pt(const vx_stage_args *a, vx_err *err) {
    if (vx_turbo_is_folder(a->model_dir)) return vx_stage_turbo_conds_pt(a, err);
    vx_cb_conds c;
    vocis_status st = vx_stage_conds_pt_out(a, &c, err);
    if (st || !a->in || !vx_st_find(a->in, "builtin_text_tokens")) {
        vx_cb_conds_free(&c);
        return st;
    }
    vx_t3 t3;
    int64_t *ids64 = NULL;
    int32_t *ids = NULL;
    float *x = NULL, *logits = NULL;
    vx_kv_cache kv = {0};
    vx_tensor t;
    if ((st = load_t3(a, &t3, err))) goto out;
    if ((st = vx_stage_in_i64(a, "builtin_text_tokens", VX_DIMS(-1, -1), &ids64, &t, err))) goto done;
    const int B = (int)t.shape[0], N = (int)t.shape[1];
    if (B < 1 || B > 2 || N < 1) {
        st = vx_fail(err, VOCIS_E_SHAPE, "builtin_text_tokens: expected [1 or 2, N]");
        goto done;
    }
    vx_t3_cond tc = {c.speaker_emb.data, c.cond_prompt_speech_tokens.data, (int)c.cond_prompt_speech_tokens.n,
                     c.emotion_adv.data[0]};
    if (vx_st_find(a->in, "builtin_emotion_adv_used")) { /* generate() rebuilt the T3Cond with its exaggeration */
        float *ex = NULL;
        if ((st = vx_stage_in_f32(a, "builtin_emotion_adv_used", VX_DIMS(1, 1, 1), &ex, NULL, err))) goto done;
        tc.emotion_adv = ex[0];
        free(ex);
    }
    const int64_t L0 = vx_t3_cond_len(&t3, &tc) + N + 2, D = t3.dim, V = t3.speech_head.rows;
    ids = malloc(sizeof(int32_t) * (size_t)N);
    x = malloc(sizeof(float) * (size_t)(B * L0 * D));
    logits = malloc(sizeof(float) * (size_t)(B * V));
    if (!ids || !x || !logits) {
        st = vx_fail(err, VOCIS_E_NOMEM, "out of memory");
        goto done;
    }
    for (int i = 0; i < N; i++) {
        if (ids64[i] < 0 || ids64[i] >= t3.text_emb.rows) {
            st = vx_fail(err, VOCIS_E_ARG, "builtin_text_tokens[%d] = %lld is outside the text vocabulary", i,
                         (long long)ids64[i]);
            goto done;
        }
        ids[i] = (int32_t)ids64[i];
    }
    if ((st = vx_t3_prefill_embeds(&t3, &tc, ids, N, B, x, a->nthreads, err))) goto done;
    if ((st = vx_kv_init(&kv, &t3.tf, B, 0, err))) goto done;
    if ((st = vx_tf_forward(&t3.tf, &kv, NULL, B, L0, x, a->nthreads, NULL, NULL, err))) goto done;
    if ((st = vx_t3_head_logits(&t3, x, B, L0, logits, a->nthreads, err))) goto done;
    st = vx_stage_out_f32(a, "builtin_prefill_logits_last", VX_DIMS(B, V), logits, err);
done:
    vx_kv_free(&kv);
    free(ids64), free(ids), free(x), free(logits);
    vx_t3_free(&t3);
out:
    vx_cb_conds_free(&c);
    return st;
}
