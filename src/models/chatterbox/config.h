/* Chatterbox hyper-parameters that tensor shapes cannot tell.
 * Defaults are upstream's values for the English release; the model folder's
 * JSON file (vocis_config.json, or the tiny checkpoint's chatterbox_tiny_config.json)
 * and then an explicit override file may replace any of them. The layout:
 *   {"dims": {"t3": {"llama": {"num_attention_heads": 16, "head_dim": 64, ...},
 *                    "perceiver": {"heads": 4}},
 *             "s3tokenizer": {"n_audio_head": 20},
 *             "flow": {"encoder": {"attention_heads": 8},
 *                      "decoder": {"num_heads": 8, "attention_head_dim": 64}},
 *             "t3_gpt2": {"configs": {"GPT2_medium": {"n_head": 16}, "GPT2_small": {"n_head": 12}}}},
 *    "llama_fixed": {"rope_theta": ..., "rms_norm_eps": ..., "rope_scaling": {...} or null},
 *    "t3_hp": {"start_text_token": 255, ..., "speech_cond_prompt_len": 150}}
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
    /* Turbo / Nano GPT-2 T3: dims.t3_gpt2.configs.<GPT2_medium | GPT2_small>.n_head (0 = width / 64) */
    int gpt2_heads[2];
    char source[512];    /* files the overrides came from ("A + B"), "" for defaults */
} vx_cb_config;

void vx_cb_config_default(vx_cb_config *c);
/* Apply overrides: first the folder's DIR/vocis_config.json, else its
 * DIR/chatterbox_tiny_config.json, when present (DIR may be NULL); then the
 * explicit path's keys (if non-NULL) replace those values. Every key of the
 * explicit file must be one vocis reads (an unknown key is an error naming it
 * and the file); the folder's file may carry others (the tiny checkpoints'
 * notes). Malformed files and values are errors. */
vocis_status vx_cb_config_load(vx_cb_config *c, const char *model_dir, const char *explicit_path, vx_err *err);

#endif
