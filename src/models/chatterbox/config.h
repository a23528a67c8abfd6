/* Chatterbox hyper-parameters that tensor shapes cannot tell.
 * Defaults are upstream's values for the English release; a JSON override
 * file (the tiny checkpoint's chatterbox_tiny_config.json, or vocis_config.json
 * in the model folder, or an explicit path) may replace any of them. Its layout:
 *   {"dims": {"t3": {"llama": {"num_attention_heads": 16, "head_dim": 64, ...},
 *                    "perceiver": {"heads": 4}},
 *             "s3tokenizer": {"n_audio_head": 20},
 *             "flow": {"encoder": {"attention_heads": 8},
 *                      "decoder": {"num_heads": 8, "attention_head_dim": 64}}},
 *    "llama_fixed": {"rope_theta": ..., "rms_norm_eps": ..., "rope_scaling": {...}}}
 * Dimensions that shapes do tell (hidden sizes, layer counts, vocabularies)
 * are always read from the tensors. */
#ifndef VX_CB_CONFIG_H
#define VX_CB_CONFIG_H

#include "base/err.h"

typedef struct vx_cb_config {
    /* T3 Llama backbone */
    int t3_heads;        /* num_attention_heads */
    int t3_kv_heads;     /* num_key_value_heads (0 = same as heads) */
    int t3_head_dim;     /* 0 = hidden / heads */
    float rope_theta;
    float rms_eps;
    int rope_llama3;     /* rope_scaling.rope_type == "llama3" */
    float rope_factor, rope_low_freq_factor, rope_high_freq_factor, rope_original_max_pos;
    int perceiver_heads;
    /* T3 token ids */
    int start_text_token, stop_text_token, start_speech_token, stop_speech_token;
    int t3_prompt_len;   /* t3_hp.speech_cond_prompt_len: reference tokens a cloned voice gives T3 (150) */
    /* S3 tokenizer */
    int s3tok_heads;
    /* S3Gen flow */
    int flow_encoder_heads;
    int flow_decoder_heads, flow_decoder_head_dim;
    char source[512];    /* file the overrides came from, "" for defaults */
} vx_cb_config;

void vx_cb_config_default(vx_cb_config *c);
/* Apply overrides: explicit path if non-NULL, else DIR/vocis_config.json or
 * DIR/chatterbox_tiny_config.json when present. Missing files are fine when
 * no explicit path was given; malformed ones are errors. */
vocis_status vx_cb_config_load(vx_cb_config *c, const char *model_dir, const char *explicit_path, vx_err *err);

#endif
