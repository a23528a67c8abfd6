/* VibeVoice hyper-parameters from a model folder's config.json and
 * preprocessor_config.json (the Hugging Face release layout).
 *
 * Every dimension the model uses is read here and checked once: missing,
 * negative, non-integer or mutually inconsistent values are one-line errors
 * naming the file and the field. Values the releases always carry are
 * required; fields upstream fills with defaults when absent (noted below)
 * get those defaults. Unknown fields of config.json are ignored (the releases
 * carry many vocis does not need); an override file's are not. */
#ifndef VX_VV_CONFIG_H
#define VX_VV_CONFIG_H

#include "base/err.h"

#define VX_VV_MAX_STAGES 16 /* ratios per tokenizer (releases: 6), depths = ratios + 1 */

/* σ-VAE speech tokenizer (acoustic or semantic). */
typedef struct vx_vv_tokenizer_config {
    int present;            /* 0 when the sub-config is absent (semantic on Realtime-0.5B) */
    int channels;           /* 1 */
    int vae_dim;            /* latent width: 64 acoustic, 128 semantic */
    float fix_std;          /* 0.5 acoustic, 0 semantic */
    char std_dist_type[16]; /* "gaussian" | "fix" | "none" (default "gaussian" acoustic / "none" semantic) */
    int causal;             /* must be 1 */
    char mixer_layer[32];   /* "depthwise_conv" (only supported value) */
    char layernorm[16];     /* "RMSNorm" | "LN" */
    float layernorm_eps;
    int layernorm_elementwise_affine;
    int conv_bias;
    char conv_norm[16]; /* "none" (only supported value) */
    char pad_mode[16];  /* "constant" (only supported value) */
    int disable_last_norm;
    float layer_scale_init_value; /* != 0: blocks carry gamma / ffn_gamma */
    /* encoder: ratios as listed in the file (upstream's encoder applies them
     * REVERSED: [8,5,5,4,2,2] downsamples by 2,2,4,5,5,8); depths per stage */
    int enc_n_filters;
    int enc_n_ratios, enc_ratios[VX_VV_MAX_STAGES];
    int enc_n_depths, enc_depths[VX_VV_MAX_STAGES]; /* = enc_n_ratios + 1 */
    /* decoder (acoustic only): ratios in file order (default: encoder
     * ratios), depths default to the reversed encoder depths */
    int dec_n_filters;
    int dec_n_ratios, dec_ratios[VX_VV_MAX_STAGES];
    int dec_n_depths, dec_depths[VX_VV_MAX_STAGES];
    int hop; /* product of the encoder ratios (= speech_tok_compress_ratio) */
} vx_vv_tokenizer_config;

typedef struct vx_vv_config {
    char model_type[32]; /* "vibevoice" | "vibevoice_streaming" */
    /* Qwen2 decoder (decoder_config) */
    int hidden_size;
    int intermediate_size;
    int num_hidden_layers;
    int num_attention_heads;
    int num_key_value_heads; /* default: num_attention_heads */
    int head_dim;            /* default: hidden_size / num_attention_heads */
    int vocab_size;          /* embedding rows (151936 / 152064); the tokenizer may have fewer ids */
    double rope_theta;
    float rms_norm_eps;
    int max_position_embeddings;
    int decoder_tie_word_embeddings;    /* decoder_config.tie_word_embeddings (default 0) */
    int tie_word_embeddings;            /* top level (default 1): what the inference class uses;
                                           a port should use lm_head.weight when present */
    int tts_backbone_num_hidden_layers; /* Realtime only (upper stack), else 0 */
    int acoustic_vae_dim;
    int semantic_vae_dim; /* 0 without a semantic tokenizer */
    vx_vv_tokenizer_config acoustic;
    vx_vv_tokenizer_config semantic;
    /* diffusion_head_config */
    struct {
        int hidden_size; /* = decoder hidden_size */
        int head_layers;
        float head_ffn_ratio;
        int ffn_dim; /* int(hidden_size * head_ffn_ratio) as upstream */
        float rms_norm_eps;
        int latent_size;          /* = acoustic_vae_dim */
        char prediction_type[32]; /* "v_prediction" | "epsilon" */
        int ddpm_num_steps;
        int ddpm_num_inference_steps;
        char ddpm_beta_schedule[32]; /* "cosine" | "linear" | "scaled_linear" | "squaredcos_cap_v2" */
    } diffusion;
    /* preprocessor_config.json (upstream defaults when the file is absent) */
    struct {
        int speech_tok_compress_ratio; /* 3200 */
        int db_normalize;              /* 1 */
        int sampling_rate;             /* audio_processor.sampling_rate, 24000 */
        float target_dB_FS;            /* audio_processor.target_dB_FS, -25 */
        float eps;                     /* audio_processor.eps, 1e-6 */
        int present;                   /* 0 when the file was absent */
    } pp;
    char path[512];    /* config.json that was read */
    char pp_path[512]; /* preprocessor_config.json that was read, "" if absent */
} vx_vv_config;

/* Load DIR/config.json and DIR/preprocessor_config.json (optional: upstream
 * falls back to its defaults when absent) and check them together. */
vocis_status vx_vv_config_load(const char *model_dir, vx_vv_config *c, vx_err *err);
/* Same, with the keys of override_path (NULL = none; config.json's layout)
 * replacing those of config.json before it is read. Every key of the override
 * must exist in config.json (else an error naming the key and the file);
 * messages about fields then name "config.json + override". */
vocis_status vx_vv_config_load_override(const char *model_dir, const char *override_path, vx_vv_config *c,
                                        vx_err *err);

/* The two halves, for tools and tests. vx_vv_config_parse fills everything
 * from config.json and sets the preprocessor defaults; vx_vv_preproc_parse
 * overrides them; vx_vv_config_check validates the combination. */
vocis_status vx_vv_config_parse(const char *config_path, vx_vv_config *c, vx_err *err);
vocis_status vx_vv_config_parse_override(const char *config_path, const char *override_path, vx_vv_config *c,
                                         vx_err *err);
vocis_status vx_vv_preproc_parse(const char *pp_path, vx_vv_config *c, vx_err *err);
vocis_status vx_vv_config_check(const vx_vv_config *c, vx_err *err);

#endif
