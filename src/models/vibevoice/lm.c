#include "models/vibevoice/lm.h"

#include <stdio.h>
#include <string.h>

#include "kernels/precision.h"
#include "models/synthetic.h"

vocis_status vx_vv_lm_init(vx_vv_lm *lm, const vx_weights *w, const vx_vv_config *c, const char *prefix,
                           vx_err *err) {
    memset(lm, 0, sizeof *lm);
    vx_tf_options o = {
        .n_heads = c->num_attention_heads,
        .head_dim = c->head_dim,
        .norm_eps = c->rms_norm_eps,
        .rope_theta = (float)c->rope_theta,
        .qkv_bias = 1,
        .final_norm = 1,
    };
    VX_TRY(vx_tf_load(&lm->tf, w, prefix, &o, err));
    vocis_status st = VOCIS_OK;
    const vx_tf *tf = &lm->tf;
    if (tf->dim != c->hidden_size || tf->n_layers != c->num_hidden_layers || tf->ffn_dim != c->intermediate_size ||
        tf->n_kv_heads != c->num_key_value_heads) {
        st = vx_fail(err, VOCIS_E_SHAPE,
                     "%s: checkpoint has %d layers, hidden %d, FFN %d, %d KV heads; %s says %d, %d, %d, %d",
                     vx_weights_path(w), tf->n_layers, tf->dim, tf->ffn_dim, tf->n_kv_heads, c->path,
                     c->num_hidden_layers, c->hidden_size, c->intermediate_size, c->num_key_value_heads);
        goto fail;
    }
    vx_tensor t;
    if ((st = vx_weights_expect(w, VX_FLOATS, VX_DIMS(c->vocab_size, c->hidden_size), &t, err, "%sembed_tokens.weight",
                                prefix)))
        goto fail;
    lm->embed = vx_mat_of(&t);
    if (vx_weights_has(w, "lm_head.weight")) {
        if ((st = vx_weights_expect(w, VX_FLOATS, VX_DIMS(c->vocab_size, c->hidden_size), &t, err, "lm_head.weight")))
            goto fail;
        lm->lm_head = vx_mat_of(&t);
        if ((st = vx_weights_mat_policy(w, &lm->lm_head, VX_W_MATRIX, err))) goto fail;
    } else {
        lm->lm_head = lm->embed; /* the head may be converted by the policy, the table stays as stored */
        lm->tied = 1;
        if ((st = vx_weights_mat_policy(w, &lm->lm_head, VX_W_MATRIX, err))) goto fail;
    }
    lm->max_positions = c->max_position_embeddings;
    return VOCIS_OK;
fail:
    vx_tf_free(&lm->tf);
    return st;
}

void vx_vv_lm_free(vx_vv_lm *lm) {
    vx_tf_free(&lm->tf);
    memset(lm, 0, sizeof *lm);
}

void vx_vv_lm_embed(const vx_vv_lm *lm, const int64_t *ids, int64_t n, float *out) {
    const size_t H = (size_t)lm->embed.cols, es = vx_dtype_size(lm->embed.dtype);
    for (int64_t i = 0; i < n; i++)
        vx_to_f32(out + (size_t)i * H, (const char *)lm->embed.data + (size_t)ids[i] * H * es, lm->embed.dtype, H);
}

void vx_vv_lm_logits(const vx_vv_lm *lm, const float *h, int64_t rows, float *logits, int nthreads) {
    vx_linear(logits, h, rows, &lm->lm_head, NULL, nthreads);
}

void vx_vv_lm_logits_subset(const vx_vv_lm *lm, const float *h, const int32_t *ids, int nids, float *out) {
    const size_t H = (size_t)lm->lm_head.cols, es = vx_dtype_size(lm->lm_head.dtype);
    for (int i = 0; i < nids; i++) {
        vx_mat row = {lm->lm_head.dtype, 1, (int64_t)H, (const char *)lm->lm_head.data + (size_t)ids[i] * H * es};
        vx_linear(out + i, h, 1, &row, NULL, 1);
    }
}

vocis_status vx_vv_lm_preset(const char *name, vx_vv_config *c, vx_err *err) {
    memset(c, 0, sizeof *c);
    if (!strcmp(name, "1.5b")) {
        c->hidden_size = 1536, c->intermediate_size = 8960, c->num_hidden_layers = 28;
        c->num_attention_heads = 12, c->num_key_value_heads = 2, c->vocab_size = 151936;
        c->max_position_embeddings = 65536, c->tie_word_embeddings = 1;
    } else if (!strcmp(name, "7b")) {
        c->hidden_size = 3584, c->intermediate_size = 18944, c->num_hidden_layers = 28;
        c->num_attention_heads = 28, c->num_key_value_heads = 4, c->vocab_size = 152064;
        c->max_position_embeddings = 32768, c->tie_word_embeddings = 0;
    } else {
        return vx_fail(err, VOCIS_E_ARG, "unknown VibeVoice size '%s' (expected 1.5b or 7b)", name);
    }
    c->head_dim = c->hidden_size / c->num_attention_heads;
    c->rope_theta = 1e6;
    c->rms_norm_eps = 1e-6f;
    snprintf(c->model_type, sizeof c->model_type, "vibevoice");
    /* tokenizers (the same in every release; spec §2.3) */
    static const int ratios[6] = {8, 5, 5, 4, 2, 2}, depths[7] = {3, 3, 3, 3, 3, 3, 8};
    for (int k = 0; k < 2; k++) {
        vx_vv_tokenizer_config *t = k ? &c->semantic : &c->acoustic;
        t->present = 1, t->channels = 1, t->vae_dim = k ? 128 : 64, t->fix_std = k ? 0.0f : 0.5f;
        snprintf(t->std_dist_type, sizeof t->std_dist_type, "%s", k ? "none" : "gaussian");
        t->causal = 1;
        snprintf(t->mixer_layer, sizeof t->mixer_layer, "depthwise_conv");
        snprintf(t->layernorm, sizeof t->layernorm, "RMSNorm");
        t->layernorm_eps = 1e-5f, t->layernorm_elementwise_affine = 1, t->conv_bias = 1;
        snprintf(t->conv_norm, sizeof t->conv_norm, "none");
        snprintf(t->pad_mode, sizeof t->pad_mode, "constant");
        t->disable_last_norm = 1, t->layer_scale_init_value = 1e-6f;
        t->enc_n_filters = 32, t->enc_n_ratios = 6, t->enc_n_depths = 7;
        memcpy(t->enc_ratios, ratios, sizeof ratios);
        memcpy(t->enc_depths, depths, sizeof depths);
        if (!k) {
            t->dec_n_filters = 32, t->dec_n_ratios = 6, t->dec_n_depths = 7;
            memcpy(t->dec_ratios, ratios, sizeof ratios);
            for (int i = 0; i < 7; i++) t->dec_depths[i] = depths[6 - i];
        }
        t->hop = 3200;
    }
    c->acoustic_vae_dim = 64, c->semantic_vae_dim = 128;
    c->diffusion.hidden_size = c->hidden_size, c->diffusion.head_layers = 4, c->diffusion.head_ffn_ratio = 3.0f;
    c->diffusion.ffn_dim = c->hidden_size * 3, c->diffusion.rms_norm_eps = 1e-5f, c->diffusion.latent_size = 64;
    snprintf(c->diffusion.prediction_type, sizeof c->diffusion.prediction_type, "v_prediction");
    c->diffusion.ddpm_num_steps = 1000, c->diffusion.ddpm_num_inference_steps = 20;
    snprintf(c->diffusion.ddpm_beta_schedule, sizeof c->diffusion.ddpm_beta_schedule, "cosine");
    c->pp.speech_tok_compress_ratio = 3200, c->pp.db_normalize = 1, c->pp.sampling_rate = 24000;
    c->pp.target_dB_FS = -25.0f, c->pp.eps = 1e-6f;
    snprintf(c->path, sizeof c->path, "synthetic-%s", name);
    return VOCIS_OK;
}

vocis_status vx_vv_synth_qwen2_stack(vx_synth *s, const vx_vv_config *c, const char *P, int layers, int norm,
                                    vx_dtype dt, vx_err *err) {
    const int64_t H = c->hidden_size, F = c->intermediate_size, hd = c->head_dim,
                  kv = (int64_t)c->num_key_value_heads * hd, q = (int64_t)c->num_attention_heads * hd;
    vocis_status st = VOCIS_OK;
#define ADD(scale, ...) \
    if (st == VOCIS_OK) st = vx_synth_add(s, dt, scale, __VA_ARGS__)
    for (int l = 0; l < layers; l++) {
        ADD(0.02f, VX_DIMS(q, H), err, "%slayers.%d.self_attn.q_proj.weight", P, l);
        ADD(0.02f, VX_DIMS(q), err, "%slayers.%d.self_attn.q_proj.bias", P, l);
        ADD(0.02f, VX_DIMS(kv, H), err, "%slayers.%d.self_attn.k_proj.weight", P, l);
        ADD(0.02f, VX_DIMS(kv), err, "%slayers.%d.self_attn.k_proj.bias", P, l);
        ADD(0.02f, VX_DIMS(kv, H), err, "%slayers.%d.self_attn.v_proj.weight", P, l);
        ADD(0.02f, VX_DIMS(kv), err, "%slayers.%d.self_attn.v_proj.bias", P, l);
        ADD(0.02f, VX_DIMS(H, q), err, "%slayers.%d.self_attn.o_proj.weight", P, l);
        ADD(0.02f, VX_DIMS(F, H), err, "%slayers.%d.mlp.gate_proj.weight", P, l);
        ADD(0.02f, VX_DIMS(F, H), err, "%slayers.%d.mlp.up_proj.weight", P, l);
        ADD(0.01f, VX_DIMS(H, F), err, "%slayers.%d.mlp.down_proj.weight", P, l);
        ADD(-1.0f, VX_DIMS(H), err, "%slayers.%d.input_layernorm.weight", P, l);
        ADD(-1.0f, VX_DIMS(H), err, "%slayers.%d.post_attention_layernorm.weight", P, l);
    }
    if (norm) ADD(-1.0f, VX_DIMS(H), err, "%snorm.weight", P);
#undef ADD
    return st;
}

vocis_status vx_vv_lm_synthetic_weights(const vx_vv_config *c, vx_dtype dt, uint64_t seed, vx_weights **out,
                                        vx_err *err) {
    vx_synth *s = vx_synth_new(seed);
    if (!s) return vx_fail(err, VOCIS_E_NOMEM, "out of memory");
    const char *P = "model.language_model.";
    vocis_status st = vx_vv_synth_qwen2_stack(s, c, P, c->num_hidden_layers, 1, dt, err);
    if (st == VOCIS_OK) st = vx_synth_add(s, dt, 0.05f, VX_DIMS(c->vocab_size, c->hidden_size), err, "%sembed_tokens.weight", P);
    if (st == VOCIS_OK && !c->tie_word_embeddings)
        st = vx_synth_add(s, dt, 0.02f, VX_DIMS(c->vocab_size, c->hidden_size), err, "lm_head.weight");
    if (st == VOCIS_OK) st = vx_synth_open(s, out, err);
    vx_synth_free(s);
    return st;
}

vocis_status vx_vv_weights_open(const char *dir, vx_weights **out, vx_err *err) {
    char path[4200];
    snprintf(path, sizeof path, "%s/model.safetensors.index.json", dir);
    FILE *f = fopen(path, "rb");
    if (f) fclose(f);
    else snprintf(path, sizeof path, "%s/model.safetensors", dir);
    return vx_weights_open(path, out, err);
}
