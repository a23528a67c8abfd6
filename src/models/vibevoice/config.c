#include "models/vibevoice/config.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "io/jsonfile.h"

#define BIG (1L << 30)

/* ---- typed field helpers (messages: "FILE: field 'a.b' ...") ----------- */

static vocis_status get_bool(const cJSON *o, const char *key, int required, int *out, const char *file, vx_err *err) {
    const cJSON *it = vx_json_at(o, key);
    if (!it) {
        if (required) return vx_fail(err, VOCIS_E_FORMAT, "%s: missing field '%s'", file, key);
        return VOCIS_OK;
    }
    if (!cJSON_IsBool(it)) return vx_fail(err, VOCIS_E_FORMAT, "%s: field '%s' must be true or false", file, key);
    *out = cJSON_IsTrue(it) ? 1 : 0;
    return VOCIS_OK;
}

static vocis_status get_str(const cJSON *o, const char *key, int required, char *out, size_t cap, const char *file,
                            vx_err *err) {
    const cJSON *it = vx_json_at(o, key);
    if (!it) {
        if (required) return vx_fail(err, VOCIS_E_FORMAT, "%s: missing field '%s'", file, key);
        return VOCIS_OK;
    }
    if (!cJSON_IsString(it) || !it->valuestring)
        return vx_fail(err, VOCIS_E_FORMAT, "%s: field '%s' must be a string", file, key);
    if (strlen(it->valuestring) >= cap) return vx_fail(err, VOCIS_E_FORMAT, "%s: field '%s' is too long", file, key);
    snprintf(out, cap, "%s", it->valuestring);
    return VOCIS_OK;
}

static vocis_status get_double(const cJSON *o, const char *key, double min, double max, double *out, const char *file,
                               vx_err *err) {
    const cJSON *it = vx_json_at(o, key);
    if (!it) return vx_fail(err, VOCIS_E_FORMAT, "%s: missing field '%s'", file, key);
    if (!cJSON_IsNumber(it)) return vx_fail(err, VOCIS_E_FORMAT, "%s: field '%s' is not a number", file, key);
    double v = it->valuedouble;
    if (!isfinite(v) || v < min || v > max)
        return vx_fail(err, VOCIS_E_FORMAT, "%s: field '%s' = %g is outside [%g, %g]", file, key, v, min, max);
    *out = v;
    return VOCIS_OK;
}

/* A list of integers in [min, max] (at most VX_VV_MAX_STAGES). */
static vocis_status get_int_list(const cJSON *it, const char *key, long min, long max, int *vals, int *n,
                                 const char *file, vx_err *err) {
    if (!cJSON_IsArray(it)) return vx_fail(err, VOCIS_E_FORMAT, "%s: field '%s' must be a list of integers", file, key);
    int cnt = cJSON_GetArraySize(it);
    if (cnt < 1 || cnt > VX_VV_MAX_STAGES)
        return vx_fail(err, VOCIS_E_FORMAT, "%s: field '%s' has %d entries, expected 1..%d", file, key, cnt,
                       VX_VV_MAX_STAGES);
    int i = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, it) {
        double v = cJSON_IsNumber(e) ? e->valuedouble : NAN;
        if (!cJSON_IsNumber(e) || !isfinite(v) || floor(v) != v)
            return vx_fail(err, VOCIS_E_FORMAT, "%s: field '%s'[%d] must be an integer", file, key, i);
        if (v < (double)min || v > (double)max)
            return vx_fail(err, VOCIS_E_FORMAT, "%s: field '%s'[%d] = %g is outside [%ld, %ld]", file, key, i, v, min,
                           max);
        vals[i++] = (int)v;
    }
    *n = cnt;
    return VOCIS_OK;
}

/* Depths: a "3-3-3-8" string (upstream: int() of each '-' piece) or a list. */
static vocis_status get_depths(const cJSON *it, const char *key, int *vals, int *n, const char *file, vx_err *err) {
    if (cJSON_IsArray(it)) return get_int_list(it, key, 0, 1 << 16, vals, n, file, err);
    if (!cJSON_IsString(it) || !it->valuestring)
        return vx_fail(err, VOCIS_E_FORMAT, "%s: field '%s' must be a string like \"3-3-3-8\" or a list", file, key);
    const char *p = it->valuestring;
    int cnt = 0;
    for (;;) {
        while (*p == ' ')
            p++;
        if (*p < '0' || *p > '9')
            return vx_fail(err, VOCIS_E_FORMAT, "%s: field '%s' = \"%s\" is not like \"3-3-3-8\"", file, key,
                           it->valuestring);
        long v = 0;
        while (*p >= '0' && *p <= '9') {
            v = v * 10 + (*p++ - '0');
            if (v > (1 << 16))
                return vx_fail(err, VOCIS_E_FORMAT, "%s: field '%s' = \"%s\": depth too large", file, key,
                               it->valuestring);
        }
        while (*p == ' ')
            p++;
        if (cnt == VX_VV_MAX_STAGES)
            return vx_fail(err, VOCIS_E_FORMAT, "%s: field '%s' has more than %d stages", file, key, VX_VV_MAX_STAGES);
        vals[cnt++] = (int)v;
        if (*p == '\0') break;
        if (*p != '-')
            return vx_fail(err, VOCIS_E_FORMAT, "%s: field '%s' = \"%s\" is not like \"3-3-3-8\"", file, key,
                           it->valuestring);
        p++;
    }
    *n = cnt;
    return VOCIS_OK;
}

static int is_null_or_absent(const cJSON *it) {
    return !it || cJSON_IsNull(it);
}

/* ---- sections ------------------------------------------------------------- */

/* One side (encoder or decoder) of a tokenizer: depths must have one stage
 * more than ratios; *hop = product of the ratios (bounded). */
static vocis_status stage_hop(const char *file, const char *sec, const char *side, const int *ratios, int n_ratios,
                              int n_depths, long *hop, vx_err *err) {
    if (n_depths != n_ratios + 1)
        return vx_fail(err, VOCIS_E_FORMAT,
                       "%s: field '%s.%s_depths' has %d stages but %s_ratios has %d "
                       "entries (expected ratios + 1 stages)",
                       file, sec, side, n_depths, side, n_ratios);
    *hop = 1;
    for (int i = 0; i < n_ratios; i++) {
        *hop *= ratios[i];
        if (*hop > BIG)
            return vx_fail(err, VOCIS_E_FORMAT, "%s: field '%s.%s_ratios': product too large", file, sec, side);
    }
    return VOCIS_OK;
}

static vocis_status parse_tokenizer(const cJSON *root, const char *sec, int acoustic, vx_vv_tokenizer_config *t,
                                    const char *file, vx_err *err) {
    char k[160];
    const cJSON *o = cJSON_GetObjectItemCaseSensitive(root, sec);
    if (!cJSON_IsObject(o)) return vx_fail(err, VOCIS_E_FORMAT, "%s: field '%s' must be an object", file, sec);
    memset(t, 0, sizeof *t);
    t->present = 1;
    /* upstream defaults for the optional flags */
    t->channels = 1;
    t->fix_std = acoustic ? 0.5f : 0.0f;
    snprintf(t->std_dist_type, sizeof t->std_dist_type, "%s", acoustic ? "gaussian" : "none");
    t->causal = 1;
    snprintf(t->mixer_layer, sizeof t->mixer_layer, "depthwise_conv");
    snprintf(t->layernorm, sizeof t->layernorm, "RMSNorm");
    t->layernorm_eps = 1e-5f;
    t->layernorm_elementwise_affine = 1;
    t->conv_bias = 1;
    snprintf(t->conv_norm, sizeof t->conv_norm, "none");
    snprintf(t->pad_mode, sizeof t->pad_mode, "constant");
    t->disable_last_norm = 1;
    t->layer_scale_init_value = 1e-6f;

#define KEY(name) (snprintf(k, sizeof k, "%s.%s", sec, name), k)
    VX_TRY(vx_json_int_at(root, KEY("channels"), 1, 1, &t->channels, file, err));
    VX_TRY(vx_json_req_int(root, KEY("vae_dim"), 1, 1 << 16, &t->vae_dim, file, err));
    VX_TRY(vx_json_float_at(root, KEY("fix_std"), 0.0, 1e6, &t->fix_std, file, err));
    VX_TRY(get_str(root, KEY("std_dist_type"), 0, t->std_dist_type, sizeof t->std_dist_type, file, err));
    VX_TRY(get_bool(root, KEY("causal"), 0, &t->causal, file, err));
    VX_TRY(get_str(root, KEY("mixer_layer"), 0, t->mixer_layer, sizeof t->mixer_layer, file, err));
    VX_TRY(get_str(root, KEY("layernorm"), 0, t->layernorm, sizeof t->layernorm, file, err));
    VX_TRY(vx_json_float_at(root, KEY("layernorm_eps"), 0.0, 1.0, &t->layernorm_eps, file, err));
    VX_TRY(get_bool(root, KEY("layernorm_elementwise_affine"), 0, &t->layernorm_elementwise_affine, file, err));
    VX_TRY(get_bool(root, KEY("conv_bias"), 0, &t->conv_bias, file, err));
    VX_TRY(get_str(root, KEY("conv_norm"), 0, t->conv_norm, sizeof t->conv_norm, file, err));
    VX_TRY(get_str(root, KEY("pad_mode"), 0, t->pad_mode, sizeof t->pad_mode, file, err));
    VX_TRY(get_bool(root, KEY("disable_last_norm"), 0, &t->disable_last_norm, file, err));
    VX_TRY(vx_json_float_at(root, KEY("layer_scale_init_value"), -1e6, 1e6, &t->layer_scale_init_value, file, err));

    VX_TRY(vx_json_req_int(root, KEY("encoder_n_filters"), 1, 1 << 16, &t->enc_n_filters, file, err));
    const cJSON *it = vx_json_at(root, KEY("encoder_ratios"));
    if (is_null_or_absent(it)) return vx_fail(err, VOCIS_E_FORMAT, "%s: missing field '%s'", file, k);
    VX_TRY(get_int_list(it, k, 1, 1 << 16, t->enc_ratios, &t->enc_n_ratios, file, err));
    it = vx_json_at(root, KEY("encoder_depths"));
    if (is_null_or_absent(it)) return vx_fail(err, VOCIS_E_FORMAT, "%s: missing field '%s'", file, k);
    VX_TRY(get_depths(it, k, t->enc_depths, &t->enc_n_depths, file, err));
    long hop;
    VX_TRY(stage_hop(file, sec, "encoder", t->enc_ratios, t->enc_n_ratios, t->enc_n_depths, &hop, err));
    t->hop = (int)hop;

    if (acoustic) {
        VX_TRY(vx_json_req_int(root, KEY("decoder_n_filters"), 1, 1 << 16, &t->dec_n_filters, file, err));
        it = vx_json_at(root, KEY("decoder_ratios"));
        if (is_null_or_absent(it)) {
            t->dec_n_ratios = t->enc_n_ratios;
            memcpy(t->dec_ratios, t->enc_ratios, sizeof t->dec_ratios);
        } else {
            VX_TRY(get_int_list(it, k, 1, 1 << 16, t->dec_ratios, &t->dec_n_ratios, file, err));
        }
        it = vx_json_at(root, KEY("decoder_depths"));
        if (is_null_or_absent(it)) {
            t->dec_n_depths = t->enc_n_depths;
            for (int i = 0; i < t->enc_n_depths; i++)
                t->dec_depths[i] = t->enc_depths[t->enc_n_depths - 1 - i];
        } else {
            VX_TRY(get_depths(it, k, t->dec_depths, &t->dec_n_depths, file, err));
        }
        long dhop;
        VX_TRY(stage_hop(file, sec, "decoder", t->dec_ratios, t->dec_n_ratios, t->dec_n_depths, &dhop, err));
        if (dhop != hop)
            return vx_fail(err, VOCIS_E_FORMAT,
                           "%s: field '%s.decoder_ratios': product %ld differs from the encoder's %ld", file, sec, dhop,
                           hop);
    }
#undef KEY

    /* values upstream itself refuses, or that no release uses and the port
     * does not implement */
    if (strcmp(t->layernorm, "RMSNorm") && strcmp(t->layernorm, "LN"))
        return vx_fail(err, VOCIS_E_FORMAT, "%s: field '%s.layernorm' = '%s' (expected RMSNorm or LN)", file, sec,
                       t->layernorm);
    if (strcmp(t->std_dist_type, "gaussian") && strcmp(t->std_dist_type, "fix") && strcmp(t->std_dist_type, "none"))
        return vx_fail(err, VOCIS_E_FORMAT, "%s: field '%s.std_dist_type' = '%s' (expected gaussian, fix or none)",
                       file, sec, t->std_dist_type);
    if (!t->causal)
        return vx_fail(err, VOCIS_E_UNSUPPORTED, "%s: field '%s.causal' = false is not supported", file, sec);
    return VOCIS_OK;
}

static vocis_status parse_decoder(const cJSON *root, vx_vv_config *c, const char *file, vx_err *err) {
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(root, "decoder_config");
    if (!cJSON_IsObject(d)) return vx_fail(err, VOCIS_E_FORMAT, "%s: field 'decoder_config' must be an object", file);
    char mt[32] = "";
    VX_TRY(get_str(root, "decoder_config.model_type", 0, mt, sizeof mt, file, err));
    if (mt[0] && strcmp(mt, "qwen2") != 0)
        return vx_fail(err, VOCIS_E_UNSUPPORTED,
                       "%s: field 'decoder_config.model_type' = '%s' (only qwen2 is supported)", file, mt);
    VX_TRY(vx_json_req_int(root, "decoder_config.hidden_size", 1, 1 << 20, &c->hidden_size, file, err));
    VX_TRY(vx_json_req_int(root, "decoder_config.intermediate_size", 1, 1 << 22, &c->intermediate_size, file, err));
    VX_TRY(vx_json_req_int(root, "decoder_config.num_hidden_layers", 1, 4096, &c->num_hidden_layers, file, err));
    VX_TRY(vx_json_req_int(root, "decoder_config.num_attention_heads", 1, 4096, &c->num_attention_heads, file, err));
    VX_TRY(vx_json_req_int(root, "decoder_config.num_key_value_heads", 1, 4096, &c->num_key_value_heads, file, err));
    c->head_dim = 0;
    if (!is_null_or_absent(vx_json_at(root, "decoder_config.head_dim")))
        VX_TRY(vx_json_req_int(root, "decoder_config.head_dim", 1, 1 << 16, &c->head_dim, file, err));
    VX_TRY(vx_json_req_int(root, "decoder_config.vocab_size", 1, BIG, &c->vocab_size, file, err));
    VX_TRY(get_double(root, "decoder_config.rope_theta", 1.0, 1e15, &c->rope_theta, file, err));
    VX_TRY(vx_json_req_float(root, "decoder_config.rms_norm_eps", 0.0, 1.0, &c->rms_norm_eps, file, err));
    VX_TRY(vx_json_req_int(root, "decoder_config.max_position_embeddings", 1, BIG, &c->max_position_embeddings, file,
                           err));
    c->decoder_tie_word_embeddings = 0;
    VX_TRY(get_bool(root, "decoder_config.tie_word_embeddings", 0, &c->decoder_tie_word_embeddings, file, err));
    const cJSON *rs = vx_json_at(root, "decoder_config.rope_scaling");
    if (!is_null_or_absent(rs))
        return vx_fail(err, VOCIS_E_UNSUPPORTED,
                       "%s: field 'decoder_config.rope_scaling' must be null (RoPE scaling "
                       "is not supported)",
                       file);
    int sliding = 0;
    VX_TRY(get_bool(root, "decoder_config.use_sliding_window", 0, &sliding, file, err));
    if (sliding)
        return vx_fail(err, VOCIS_E_UNSUPPORTED,
                       "%s: field 'decoder_config.use_sliding_window' = true is not supported", file);
    char act[32] = "silu";
    VX_TRY(get_str(root, "decoder_config.hidden_act", 0, act, sizeof act, file, err));
    if (strcmp(act, "silu") != 0)
        return vx_fail(err, VOCIS_E_UNSUPPORTED,
                       "%s: field 'decoder_config.hidden_act' = '%s' (only silu is supported)", file, act);

    if (c->head_dim == 0) {
        if (c->hidden_size % c->num_attention_heads != 0)
            return vx_fail(err, VOCIS_E_FORMAT,
                           "%s: field 'decoder_config.num_attention_heads' = %d does not divide "
                           "hidden_size %d",
                           file, c->num_attention_heads, c->hidden_size);
        c->head_dim = c->hidden_size / c->num_attention_heads;
    }
    if (c->head_dim % 2 != 0)
        return vx_fail(err, VOCIS_E_FORMAT,
                       "%s: field 'decoder_config.head_dim': %d is odd (RoPE needs an even head "
                       "dimension)",
                       file, c->head_dim);
    if (c->num_key_value_heads > c->num_attention_heads || c->num_attention_heads % c->num_key_value_heads != 0)
        return vx_fail(err, VOCIS_E_FORMAT,
                       "%s: field 'decoder_config.num_key_value_heads' = %d does not divide "
                       "num_attention_heads %d",
                       file, c->num_key_value_heads, c->num_attention_heads);
    return VOCIS_OK;
}

static vocis_status parse_diffusion(const cJSON *root, vx_vv_config *c, const char *file, vx_err *err) {
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(root, "diffusion_head_config");
    if (!cJSON_IsObject(d))
        return vx_fail(err, VOCIS_E_FORMAT, "%s: field 'diffusion_head_config' must be an object", file);
    VX_TRY(
        vx_json_req_int(root, "diffusion_head_config.hidden_size", 1, 1 << 20, &c->diffusion.hidden_size, file, err));
    VX_TRY(vx_json_req_int(root, "diffusion_head_config.head_layers", 1, 4096, &c->diffusion.head_layers, file, err));
    VX_TRY(vx_json_req_float(root, "diffusion_head_config.head_ffn_ratio", 1e-6, 1e4, &c->diffusion.head_ffn_ratio,
                             file, err));
    VX_TRY(
        vx_json_req_float(root, "diffusion_head_config.rms_norm_eps", 0.0, 1.0, &c->diffusion.rms_norm_eps, file, err));
    VX_TRY(
        vx_json_req_int(root, "diffusion_head_config.latent_size", 1, 1 << 16, &c->diffusion.latent_size, file, err));
    VX_TRY(vx_json_req_int(root, "diffusion_head_config.ddpm_num_steps", 1, 1 << 20, &c->diffusion.ddpm_num_steps, file,
                           err));
    VX_TRY(vx_json_req_int(root, "diffusion_head_config.ddpm_num_inference_steps", 1, 1 << 20,
                           &c->diffusion.ddpm_num_inference_steps, file, err));
    VX_TRY(get_str(root, "diffusion_head_config.ddpm_beta_schedule", 1, c->diffusion.ddpm_beta_schedule,
                   sizeof c->diffusion.ddpm_beta_schedule, file, err));
    VX_TRY(get_str(root, "diffusion_head_config.prediction_type", 1, c->diffusion.prediction_type,
                   sizeof c->diffusion.prediction_type, file, err));
    /* upstream: ffn_dim = int(hidden_size * head_ffn_ratio), both as float64 */
    double ffn = floor((double)c->diffusion.hidden_size *
                       (double)cJSON_GetObjectItemCaseSensitive(d, "head_ffn_ratio")->valuedouble);
    if (ffn < 1 || ffn > (double)BIG)
        return vx_fail(err, VOCIS_E_FORMAT, "%s: field 'diffusion_head_config.head_ffn_ratio': FFN width %g is invalid",
                       file, ffn);
    c->diffusion.ffn_dim = (int)ffn;
    if (c->diffusion.ddpm_num_inference_steps > c->diffusion.ddpm_num_steps)
        return vx_fail(err, VOCIS_E_FORMAT,
                       "%s: field 'diffusion_head_config.ddpm_num_inference_steps' = %d exceeds "
                       "ddpm_num_steps %d",
                       file, c->diffusion.ddpm_num_inference_steps, c->diffusion.ddpm_num_steps);
    const cJSON *svd = vx_json_at(root, "diffusion_head_config.speech_vae_dim");
    if (!is_null_or_absent(svd)) {
        int v = 0;
        VX_TRY(vx_json_req_int(root, "diffusion_head_config.speech_vae_dim", 1, 1 << 16, &v, file, err));
        if (v != c->diffusion.latent_size)
            return vx_fail(err, VOCIS_E_FORMAT,
                           "%s: field 'diffusion_head_config.speech_vae_dim' = %d differs from "
                           "latent_size %d",
                           file, v, c->diffusion.latent_size);
    }
    return VOCIS_OK;
}

/* ---- public --------------------------------------------------------------- */

static void preproc_defaults(vx_vv_config *c) {
    c->pp.speech_tok_compress_ratio = 3200;
    c->pp.db_normalize = 1;
    c->pp.sampling_rate = 24000;
    c->pp.target_dB_FS = -25.0f;
    c->pp.eps = 1e-6f;
    c->pp.present = 0;
    c->pp_path[0] = '\0';
}

/* An override's keys replace those of config.json: objects merge key by key,
 * anything else replaces the value. A key config.json lacks is refused (a
 * typo would otherwise be ignored, as config.json's unknown fields are). */
static vocis_status merge_override(cJSON *base, const cJSON *over, const char *prefix, const char *file,
                                   const char *base_file, vx_err *err) {
    for (const cJSON *it = over->child; it; it = it->next) {
        char key[256];
        snprintf(key, sizeof key, "%s%s%s", prefix, *prefix ? "." : "", it->string);
        cJSON *b = cJSON_GetObjectItemCaseSensitive(base, it->string);
        if (!b)
            return vx_fail(err, VOCIS_E_FORMAT, "%s: unknown key '%s' (%s has no such field)", file, key, base_file);
        if (cJSON_IsObject(it) && cJSON_IsObject(b)) {
            VX_TRY(merge_override(b, it, key, file, base_file, err));
            continue;
        }
        cJSON *copy = cJSON_Duplicate(it, 1);
        if (!copy || !cJSON_ReplaceItemInObjectCaseSensitive(base, it->string, copy)) {
            cJSON_Delete(copy);
            return vx_fail(err, VOCIS_E_NOMEM, "%s: out of memory", file);
        }
    }
    return VOCIS_OK;
}

static vocis_status load_with_override(const char *path, const char *override_path, cJSON **root, vx_err *err) {
    VX_TRY(vx_json_load(path, root, err));
    if (!override_path) return VOCIS_OK;
    cJSON *over;
    vocis_status st = vx_json_load(override_path, &over, err);
    if (!st && !cJSON_IsObject(over)) st = vx_fail(err, VOCIS_E_FORMAT, "%s: expected a JSON object", override_path);
    if (!st && cJSON_IsObject(*root)) st = merge_override(*root, over, "", override_path, path, err);
    cJSON_Delete(over);
    if (st) {
        cJSON_Delete(*root);
        *root = NULL;
    }
    return st;
}

vocis_status vx_vv_config_parse(const char *path, vx_vv_config *c, vx_err *err) {
    return vx_vv_config_parse_override(path, NULL, c, err);
}

vocis_status vx_vv_config_parse_override(const char *config_path, const char *override_path, vx_vv_config *c,
                                         vx_err *err) {
    memset(c, 0, sizeof *c);
    preproc_defaults(c);
    /* messages name both files when an override was merged in */
    snprintf(c->path, sizeof c->path, "%s%s%s", config_path, override_path ? " + " : "",
             override_path ? override_path : "");
    const char *path = c->path;
    cJSON *root;
    VX_TRY(load_with_override(config_path, override_path, &root, err));
    vocis_status st = VOCIS_OK;
    if (!cJSON_IsObject(root)) {
        st = vx_fail(err, VOCIS_E_FORMAT, "%s: top level must be a JSON object", path);
        goto done;
    }
    snprintf(c->model_type, sizeof c->model_type, "vibevoice");
    if ((st = get_str(root, "model_type", 0, c->model_type, sizeof c->model_type, path, err))) goto done;
    int streaming = strcmp(c->model_type, "vibevoice_streaming") == 0;
    if (!streaming && strcmp(c->model_type, "vibevoice") != 0) {
        st = vx_fail(err, VOCIS_E_UNSUPPORTED,
                     "%s: field 'model_type' = '%s' (expected vibevoice or vibevoice_streaming)", path, c->model_type);
        goto done;
    }
    if ((st = parse_decoder(root, c, path, err))) goto done;
    c->tie_word_embeddings = 1;
    if ((st = get_bool(root, "tie_word_embeddings", 0, &c->tie_word_embeddings, path, err))) goto done;
    if ((st = parse_tokenizer(root, "acoustic_tokenizer_config", 1, &c->acoustic, path, err))) goto done;
    if (!streaming || cJSON_GetObjectItemCaseSensitive(root, "semantic_tokenizer_config"))
        if ((st = parse_tokenizer(root, "semantic_tokenizer_config", 0, &c->semantic, path, err))) goto done;
    if ((st = parse_diffusion(root, c, path, err))) goto done;
    if (streaming) {
        if ((st = vx_json_req_int(root, "tts_backbone_num_hidden_layers", 1, 4096, &c->tts_backbone_num_hidden_layers,
                                  path, err)))
            goto done;
        if (c->tts_backbone_num_hidden_layers >= c->num_hidden_layers) {
            st = vx_fail(err, VOCIS_E_FORMAT,
                         "%s: field 'tts_backbone_num_hidden_layers' = %d must be less than "
                         "decoder_config.num_hidden_layers %d",
                         path, c->tts_backbone_num_hidden_layers, c->num_hidden_layers);
            goto done;
        }
    }

    /* top-level dims: upstream derives them from the sub-configs; when the
     * file states them they must agree */
    c->acoustic_vae_dim = c->acoustic.vae_dim;
    c->semantic_vae_dim = c->semantic.present ? c->semantic.vae_dim : 0;
    int v = c->acoustic_vae_dim;
    if ((st = vx_json_int_at(root, "acoustic_vae_dim", 1, 1 << 16, &v, path, err))) goto done;
    if (v != c->acoustic_vae_dim) {
        st = vx_fail(err, VOCIS_E_FORMAT,
                     "%s: field 'acoustic_vae_dim' = %d differs from acoustic_tokenizer_config."
                     "vae_dim %d",
                     path, v, c->acoustic_vae_dim);
        goto done;
    }
    if (c->semantic.present) {
        v = c->semantic_vae_dim;
        if ((st = vx_json_int_at(root, "semantic_vae_dim", 1, 1 << 16, &v, path, err))) goto done;
        if (v != c->semantic_vae_dim) {
            st = vx_fail(err, VOCIS_E_FORMAT,
                         "%s: field 'semantic_vae_dim' = %d differs from semantic_tokenizer_config."
                         "vae_dim %d",
                         path, v, c->semantic_vae_dim);
            goto done;
        }
    }
done:
    cJSON_Delete(root);
    return st;
}

vocis_status vx_vv_preproc_parse(const char *path, vx_vv_config *c, vx_err *err) {
    cJSON *root;
    VX_TRY(vx_json_load(path, &root, err));
    vocis_status st = VOCIS_OK;
    if (!cJSON_IsObject(root)) {
        st = vx_fail(err, VOCIS_E_FORMAT, "%s: top level must be a JSON object", path);
        goto done;
    }
    /* upstream reads each key with its default (config.get(key, default)) */
    if ((st = vx_json_int_at(root, "speech_tok_compress_ratio", 1, BIG, &c->pp.speech_tok_compress_ratio, path, err)))
        goto done;
    if ((st = get_bool(root, "db_normalize", 0, &c->pp.db_normalize, path, err))) goto done;
    if ((st = vx_json_int_at(root, "audio_processor.sampling_rate", 1, 10000000, &c->pp.sampling_rate, path, err)))
        goto done;
    if ((st = vx_json_float_at(root, "audio_processor.target_dB_FS", -400.0, 400.0, &c->pp.target_dB_FS, path, err)))
        goto done;
    if ((st = vx_json_float_at(root, "audio_processor.eps", 0.0, 1.0, &c->pp.eps, path, err))) goto done;
    c->pp.present = 1;
    snprintf(c->pp_path, sizeof c->pp_path, "%s", path);
done:
    cJSON_Delete(root);
    return st;
}

vocis_status vx_vv_config_check(const vx_vv_config *c, vx_err *err) {
    const char *pp = c->pp.present ? c->pp_path : "preprocessor_config.json (defaults)";
    if (c->acoustic.hop != c->pp.speech_tok_compress_ratio)
        return vx_fail(err, VOCIS_E_FORMAT,
                       "%s: field 'acoustic_tokenizer_config.encoder_ratios': product %d differs "
                       "from speech_tok_compress_ratio %d of %s",
                       c->path, c->acoustic.hop, c->pp.speech_tok_compress_ratio, pp);
    if (c->semantic.present && c->semantic.hop != c->pp.speech_tok_compress_ratio)
        return vx_fail(err, VOCIS_E_FORMAT,
                       "%s: field 'semantic_tokenizer_config.encoder_ratios': product %d differs "
                       "from speech_tok_compress_ratio %d of %s",
                       c->path, c->semantic.hop, c->pp.speech_tok_compress_ratio, pp);
    if (c->diffusion.hidden_size != c->hidden_size)
        return vx_fail(err, VOCIS_E_FORMAT,
                       "%s: field 'diffusion_head_config.hidden_size' = %d differs from "
                       "decoder_config.hidden_size %d (the head is conditioned on LM hidden states)",
                       c->path, c->diffusion.hidden_size, c->hidden_size);
    if (c->diffusion.latent_size != c->acoustic_vae_dim)
        return vx_fail(err, VOCIS_E_FORMAT,
                       "%s: field 'diffusion_head_config.latent_size' = %d differs from "
                       "acoustic_vae_dim %d",
                       c->path, c->diffusion.latent_size, c->acoustic_vae_dim);
    return VOCIS_OK;
}

vocis_status vx_vv_config_load(const char *model_dir, vx_vv_config *c, vx_err *err) {
    return vx_vv_config_load_override(model_dir, NULL, c, err);
}

vocis_status vx_vv_config_load_override(const char *model_dir, const char *override_path, vx_vv_config *c,
                                        vx_err *err) {
    char path[4096];
    snprintf(path, sizeof path, "%s/config.json", model_dir);
    VX_TRY(vx_vv_config_parse_override(path, override_path, c, err));
    snprintf(path, sizeof path, "%s/preprocessor_config.json", model_dir);
    struct stat sb;
    if (stat(path, &sb) == 0) {
        VX_TRY(vx_vv_preproc_parse(path, c, err));
    } else if (errno != ENOENT) {
        return vx_fail(err, VOCIS_E_IO, "%s: cannot open: %s", path, strerror(errno));
    }
    return vx_vv_config_check(c, err);
}
