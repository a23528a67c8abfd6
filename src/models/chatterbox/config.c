#include "models/chatterbox/config.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io/jsonfile.h"

void vx_cb_config_default(vx_cb_config *c) {
    memset(c, 0, sizeof *c);
    c->t3_heads = 16;
    c->t3_kv_heads = 16;
    c->t3_head_dim = 64;
    c->rope_theta = 500000.0f;
    c->rms_eps = 1e-5f;
    c->rope_llama3 = 1;
    c->rope_factor = 8.0f;
    c->rope_low_freq_factor = 1.0f;
    c->rope_high_freq_factor = 4.0f;
    c->rope_original_max_pos = 8192.0f;
    c->perceiver_heads = 4;
    c->start_text_token = 255;
    c->stop_text_token = 0;
    c->start_speech_token = 6561;
    c->stop_speech_token = 6562;
    c->t3_prompt_len = 150;
    c->s3tok_heads = 20;
    c->flow_encoder_heads = 8;
    c->flow_decoder_heads = 8;
    c->flow_decoder_head_dim = 64;
}

static vocis_status apply(vx_cb_config *c, const cJSON *root, const char *path, vx_err *err) {
    const cJSON *dims = cJSON_GetObjectItemCaseSensitive(root, "dims");
    VX_TRY(vx_json_int_at(dims, "t3.llama.num_attention_heads", 1, 4096, &c->t3_heads, path, err));
    if (vx_json_at(dims, "t3.llama.num_attention_heads") && !vx_json_at(dims, "t3.llama.num_key_value_heads"))
        c->t3_kv_heads = c->t3_heads;
    VX_TRY(vx_json_int_at(dims, "t3.llama.num_key_value_heads", 1, 4096, &c->t3_kv_heads, path, err));
    VX_TRY(vx_json_int_at(dims, "t3.llama.head_dim", 1, 4096, &c->t3_head_dim, path, err));
    VX_TRY(vx_json_int_at(dims, "t3.perceiver.heads", 1, 4096, &c->perceiver_heads, path, err));
    VX_TRY(vx_json_int_at(dims, "s3tokenizer.n_audio_head", 1, 4096, &c->s3tok_heads, path, err));
    VX_TRY(vx_json_int_at(dims, "flow.encoder.attention_heads", 1, 4096, &c->flow_encoder_heads, path, err));
    VX_TRY(vx_json_int_at(dims, "flow.decoder.num_heads", 1, 4096, &c->flow_decoder_heads, path, err));
    VX_TRY(vx_json_int_at(dims, "flow.decoder.attention_head_dim", 1, 4096, &c->flow_decoder_head_dim, path, err));
    const cJSON *lf = cJSON_GetObjectItemCaseSensitive(root, "llama_fixed");
    VX_TRY(vx_json_float_at(lf, "rope_theta", 1.0, 1e12, &c->rope_theta, path, err));
    VX_TRY(vx_json_float_at(lf, "rms_norm_eps", 0.0, 1.0, &c->rms_eps, path, err));
    const cJSON *rs = vx_json_at(lf, "rope_scaling");
    if (rs && cJSON_IsNull(rs)) c->rope_llama3 = 0;
    if (rs && cJSON_IsObject(rs)) {
        const cJSON *type = cJSON_GetObjectItemCaseSensitive(rs, "rope_type");
        if (cJSON_IsString(type) && strcmp(type->valuestring, "llama3") != 0)
            return vx_fail(err, VOCIS_E_UNSUPPORTED, "%s: llama_fixed.rope_scaling.rope_type '%s' is not supported",
                           path, type->valuestring);
        c->rope_llama3 = 1;
        VX_TRY(vx_json_float_at(rs, "factor", 1e-6, 1e6, &c->rope_factor, path, err));
        VX_TRY(vx_json_float_at(rs, "low_freq_factor", 1e-6, 1e6, &c->rope_low_freq_factor, path, err));
        VX_TRY(vx_json_float_at(rs, "high_freq_factor", 1e-6, 1e6, &c->rope_high_freq_factor, path, err));
        VX_TRY(vx_json_float_at(rs, "original_max_position_embeddings", 1, 1e9, &c->rope_original_max_pos, path, err));
    }
    const cJSON *hp = cJSON_GetObjectItemCaseSensitive(root, "t3_hp");
    VX_TRY(vx_json_int_at(hp, "start_text_token", 0, 1 << 30, &c->start_text_token, path, err));
    VX_TRY(vx_json_int_at(hp, "stop_text_token", 0, 1 << 30, &c->stop_text_token, path, err));
    VX_TRY(vx_json_int_at(hp, "start_speech_token", 0, 1 << 30, &c->start_speech_token, path, err));
    VX_TRY(vx_json_int_at(hp, "stop_speech_token", 0, 1 << 30, &c->stop_speech_token, path, err));
    VX_TRY(vx_json_int_at(hp, "speech_cond_prompt_len", 1, 1 << 20, &c->t3_prompt_len, path, err));
    if (c->t3_kv_heads > c->t3_heads || c->t3_heads % c->t3_kv_heads != 0)
        return vx_fail(err, VOCIS_E_FORMAT, "%s: num_attention_heads %d is not a multiple of num_key_value_heads %d",
                       path, c->t3_heads, c->t3_kv_heads);
    snprintf(c->source, sizeof c->source, "%s", path);
    return VOCIS_OK;
}

vocis_status vx_cb_config_load(vx_cb_config *c, const char *model_dir, const char *explicit_path, vx_err *err) {
    char path[4096];
    if (explicit_path) {
        snprintf(path, sizeof path, "%s", explicit_path);
    } else {
        static const char *const names[] = {"vocis_config.json", "chatterbox_tiny_config.json"};
        path[0] = '\0';
        for (int i = 0; i < 2 && !path[0]; i++) {
            snprintf(path, sizeof path, "%s/%s", model_dir, names[i]);
            if (access(path, F_OK) != 0) path[0] = '\0';
        }
        if (!path[0]) return VOCIS_OK;
    }
    cJSON *root;
    VX_TRY(vx_json_load(path, &root, err));
    vocis_status st = apply(c, root, path, err);
    cJSON_Delete(root);
    return st;
}
