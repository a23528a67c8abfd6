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

/* Every key an override file (--config) may hold, as dotted paths; llama_fixed.rope_scaling may
 * also be null (no RoPE scaling). A key outside this list is refused: a typo must not be ignored. */
static const char *const override_keys[] = {
    "dims.t3.llama.num_attention_heads", "dims.t3.llama.num_key_value_heads", "dims.t3.llama.head_dim",
    "dims.t3.perceiver.heads", "dims.t3_gpt2.configs.GPT2_medium.n_head", "dims.t3_gpt2.configs.GPT2_small.n_head",
    "dims.s3tokenizer.n_audio_head", "dims.flow.encoder.attention_heads", "dims.flow.decoder.num_heads",
    "dims.flow.decoder.attention_head_dim", "llama_fixed.rope_theta", "llama_fixed.rms_norm_eps",
    "llama_fixed.rope_scaling", "llama_fixed.rope_scaling.rope_type", "llama_fixed.rope_scaling.factor",
    "llama_fixed.rope_scaling.low_freq_factor", "llama_fixed.rope_scaling.high_freq_factor",
    "llama_fixed.rope_scaling.original_max_position_embeddings", "t3_hp.start_text_token", "t3_hp.stop_text_token",
    "t3_hp.start_speech_token", "t3_hp.stop_speech_token", "t3_hp.speech_cond_prompt_len",
};

/* 1: path is a key; 2: path leads to keys (an object); 0: neither. */
static int key_kind(const char *path) {
    const size_t n = strlen(path);
    int kind = 0;
    for (size_t i = 0; i < sizeof override_keys / sizeof override_keys[0]; i++) {
        const char *k = override_keys[i];
        if (!strcmp(k, path)) kind |= 1;
        else if (!strncmp(k, path, n) && k[n] == '.') kind |= 2;
    }
    return kind;
}

static vocis_status check_keys(const cJSON *obj, const char *prefix, const char *file, vx_err *err) {
    for (const cJSON *it = obj->child; it; it = it->next) {
        char path[256];
        snprintf(path, sizeof path, "%s%s%s", prefix, *prefix ? "." : "", it->string ? it->string : "");
        const int kind = key_kind(path);
        if (cJSON_IsObject(it) && (kind & 2)) VX_TRY(check_keys(it, path, file, err));
        else if (kind == 2) return vx_fail(err, VOCIS_E_FORMAT, "%s: '%s' must be an object", file, path);
        else if (!kind)
            return vx_fail(err, VOCIS_E_FORMAT, "%s: unknown key '%s' (not a hyper-parameter vocis reads)", file,
                           path);
    }
    return VOCIS_OK;
}

/* The keys of one file replace those values (num_attention_heads without
 * num_key_value_heads in the same file sets both, as LlamaConfig does). */
static vocis_status apply(vx_cb_config *c, const cJSON *root, const char *path, vx_err *err) {
    VX_TRY(vx_json_int_at(root, "dims.t3.llama.num_attention_heads", 1, 4096, &c->t3_heads, path, err));
    if (vx_json_at(root, "dims.t3.llama.num_attention_heads") && !vx_json_at(root, "dims.t3.llama.num_key_value_heads"))
        c->t3_kv_heads = c->t3_heads;
    VX_TRY(vx_json_int_at(root, "dims.t3.llama.num_key_value_heads", 1, 4096, &c->t3_kv_heads, path, err));
    VX_TRY(vx_json_int_at(root, "dims.t3.llama.head_dim", 1, 4096, &c->t3_head_dim, path, err));
    VX_TRY(vx_json_int_at(root, "dims.t3.perceiver.heads", 1, 4096, &c->perceiver_heads, path, err));
    VX_TRY(vx_json_int_at(root, "dims.t3_gpt2.configs.GPT2_medium.n_head", 1, 4096, &c->gpt2_heads[0], path, err));
    VX_TRY(vx_json_int_at(root, "dims.t3_gpt2.configs.GPT2_small.n_head", 1, 4096, &c->gpt2_heads[1], path, err));
    VX_TRY(vx_json_int_at(root, "dims.s3tokenizer.n_audio_head", 1, 4096, &c->s3tok_heads, path, err));
    VX_TRY(vx_json_int_at(root, "dims.flow.encoder.attention_heads", 1, 4096, &c->flow_encoder_heads, path, err));
    VX_TRY(vx_json_int_at(root, "dims.flow.decoder.num_heads", 1, 4096, &c->flow_decoder_heads, path, err));
    VX_TRY(vx_json_int_at(root, "dims.flow.decoder.attention_head_dim", 1, 4096, &c->flow_decoder_head_dim, path,
                          err));
    VX_TRY(vx_json_float_at(root, "llama_fixed.rope_theta", 1.0, 1e12, &c->rope_theta, path, err));
    VX_TRY(vx_json_float_at(root, "llama_fixed.rms_norm_eps", 0.0, 1.0, &c->rms_eps, path, err));
    const cJSON *rs = vx_json_at(root, "llama_fixed.rope_scaling");
    if (rs && !cJSON_IsNull(rs) && !cJSON_IsObject(rs))
        return vx_fail(err, VOCIS_E_FORMAT, "%s: field 'llama_fixed.rope_scaling' must be an object or null", path);
    if (rs && cJSON_IsNull(rs)) c->rope_llama3 = 0;
    if (rs && cJSON_IsObject(rs)) {
        const cJSON *type = cJSON_GetObjectItemCaseSensitive(rs, "rope_type");
        if (cJSON_IsString(type) && strcmp(type->valuestring, "llama3") != 0)
            return vx_fail(err, VOCIS_E_UNSUPPORTED, "%s: llama_fixed.rope_scaling.rope_type '%s' is not supported",
                           path, type->valuestring);
        c->rope_llama3 = 1;
        VX_TRY(vx_json_float_at(root, "llama_fixed.rope_scaling.factor", 1e-6, 1e6, &c->rope_factor, path, err));
        VX_TRY(vx_json_float_at(root, "llama_fixed.rope_scaling.low_freq_factor", 1e-6, 1e6, &c->rope_low_freq_factor,
                                path, err));
        VX_TRY(vx_json_float_at(root, "llama_fixed.rope_scaling.high_freq_factor", 1e-6, 1e6,
                                &c->rope_high_freq_factor, path, err));
        VX_TRY(vx_json_float_at(root, "llama_fixed.rope_scaling.original_max_position_embeddings", 1, 1e9,
                                &c->rope_original_max_pos, path, err));
    }
    VX_TRY(vx_json_int_at(root, "t3_hp.start_text_token", 0, 1 << 30, &c->start_text_token, path, err));
    VX_TRY(vx_json_int_at(root, "t3_hp.stop_text_token", 0, 1 << 30, &c->stop_text_token, path, err));
    VX_TRY(vx_json_int_at(root, "t3_hp.start_speech_token", 0, 1 << 30, &c->start_speech_token, path, err));
    VX_TRY(vx_json_int_at(root, "t3_hp.stop_speech_token", 0, 1 << 30, &c->stop_speech_token, path, err));
    VX_TRY(vx_json_int_at(root, "t3_hp.speech_cond_prompt_len", 1, 1 << 20, &c->t3_prompt_len, path, err));
    return VOCIS_OK;
}

/* strict: an override file (--config), whose every key must be one vocis reads. */
static vocis_status apply_file(vx_cb_config *c, const char *path, int strict, vx_err *err) {
    cJSON *root;
    VX_TRY(vx_json_load(path, &root, err));
    vocis_status st = VOCIS_OK;
    if (strict && !cJSON_IsObject(root)) st = vx_fail(err, VOCIS_E_FORMAT, "%s: expected a JSON object", path);
    if (!st && strict) st = check_keys(root, "", path, err);
    if (!st) st = apply(c, root, path, err);
    cJSON_Delete(root);
    if (!st) {
        const size_t n = strlen(c->source);
        snprintf(c->source + n, sizeof c->source - n, "%s%s", n ? " + " : "", path);
    }
    return st;
}

vocis_status vx_cb_config_load(vx_cb_config *c, const char *model_dir, const char *explicit_path, vx_err *err) {
    static const char *const names[] = {"vocis_config.json", "chatterbox_tiny_config.json"};
    for (int i = 0; model_dir && i < 2; i++) {
        char path[4200];
        snprintf(path, sizeof path, "%s/%s", model_dir, names[i]);
        if (access(path, F_OK) != 0) continue;
        VX_TRY(apply_file(c, path, 0, err));
        break;
    }
    if (explicit_path) VX_TRY(apply_file(c, explicit_path, 1, err));
    if (c->t3_kv_heads > c->t3_heads || c->t3_heads % c->t3_kv_heads != 0)
        return vx_fail(err, VOCIS_E_FORMAT, "%s: num_attention_heads %d is not a multiple of num_key_value_heads %d",
                       c->source[0] ? c->source : "config", c->t3_heads, c->t3_kv_heads);
    return VOCIS_OK;
}
