/* libFuzzer target: arbitrary bytes as a VibeVoice config.json
 * (vx_vv_config_parse + vx_vv_config_check), as a preprocessor_config.json
 * over the parsed test model's config (vx_vv_preproc_parse + check), as a
 * --config override of the test model's config.json (vx_vv_config_parse_override),
 * and as a Chatterbox override file (vx_cb_config_load with an explicit path,
 * alone and over the tiny checkpoint folder's config).
 * Accepted values must satisfy the invariants the model code relies on.
 * Data: $VOCIS_FUZZ_DATA or the compiled-in tests/data. */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "models/chatterbox/config.h"
#include "models/vibevoice/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static vx_vv_config base;
static fz_memfile mf;

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc, (void)argv;
    vx_err e = {0};
    if (vx_vv_config_parse(fz_data_path("vibevoice/model/config.json"), &base, &e) != VOCIS_OK) {
        fprintf(stderr, "fuzz_vv_config: %s (set VOCIS_FUZZ_DATA to the tests/data folder)\n", e.msg);
        abort();
    }
    return 0;
}

static void check_tok(const vx_vv_tokenizer_config *t, int acoustic) {
    if (!t->present) return;
    FZ_CHECK(t->vae_dim >= 1 && t->enc_n_filters >= 1);
    FZ_CHECK(t->enc_n_ratios >= 1 && t->enc_n_ratios <= VX_VV_MAX_STAGES);
    FZ_CHECK(t->enc_n_depths == t->enc_n_ratios + 1);
    long hop = 1;
    for (int i = 0; i < t->enc_n_ratios; i++) {
        FZ_CHECK(t->enc_ratios[i] >= 1);
        hop *= t->enc_ratios[i];
    }
    FZ_CHECK(hop == t->hop);
    for (int i = 0; i < t->enc_n_depths; i++) FZ_CHECK(t->enc_depths[i] >= 0);
    if (acoustic) {
        FZ_CHECK(t->dec_n_filters >= 1 && t->dec_n_ratios >= 1 && t->dec_n_ratios <= VX_VV_MAX_STAGES);
        FZ_CHECK(t->dec_n_depths == t->dec_n_ratios + 1);
        long dhop = 1;
        for (int i = 0; i < t->dec_n_ratios; i++) dhop *= t->dec_ratios[i];
        FZ_CHECK(dhop == hop);
        for (int i = 0; i < t->dec_n_depths; i++) FZ_CHECK(t->dec_depths[i] >= 0);
    }
    FZ_CHECK(memchr(t->std_dist_type, 0, sizeof t->std_dist_type) && memchr(t->layernorm, 0, sizeof t->layernorm));
}

static void check_cfg(const vx_vv_config *c) {
    FZ_CHECK(c->hidden_size >= 1 && c->num_attention_heads >= 1 && c->num_key_value_heads >= 1);
    FZ_CHECK(c->num_attention_heads % c->num_key_value_heads == 0);
    FZ_CHECK(c->head_dim >= 2 && c->head_dim % 2 == 0);
    FZ_CHECK(c->num_hidden_layers >= 1 && c->vocab_size >= 1 && c->max_position_embeddings >= 1);
    FZ_CHECK(c->intermediate_size >= 1);
    FZ_CHECK(c->tts_backbone_num_hidden_layers >= 0 && c->tts_backbone_num_hidden_layers < c->num_hidden_layers);
    FZ_CHECK(c->acoustic.present && c->acoustic_vae_dim == c->acoustic.vae_dim);
    check_tok(&c->acoustic, 1);
    check_tok(&c->semantic, 0);
    FZ_CHECK(c->diffusion.ffn_dim >= 1 && c->diffusion.head_layers >= 1);
    FZ_CHECK(c->diffusion.ddpm_num_inference_steps >= 1 &&
          c->diffusion.ddpm_num_inference_steps <= c->diffusion.ddpm_num_steps);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fz_memfile_set(&mf, data, size);
    vx_err e = {0};

    vx_vv_config *c = malloc(sizeof *c);
    if (!c) return 0;
    if (vx_vv_config_parse(mf.path, c, &e) == VOCIS_OK) {
        check_cfg(c);
        if (vx_vv_config_check(c, &e) == VOCIS_OK) {
            FZ_CHECK(c->acoustic.hop == c->pp.speech_tok_compress_ratio);
            FZ_CHECK(c->diffusion.hidden_size == c->hidden_size);
        }
    }

    /* an override of the test model's config.json */
    if (vx_vv_config_parse_override(fz_data_path("vibevoice/model/config.json"), mf.path, c, &e) == VOCIS_OK)
        check_cfg(c);

    /* preprocessor_config.json over the test model's config */
    memcpy(c, &base, sizeof *c);
    if (vx_vv_preproc_parse(mf.path, c, &e) == VOCIS_OK) {
        FZ_CHECK(c->pp.present && c->pp.speech_tok_compress_ratio >= 1 && c->pp.sampling_rate >= 1);
        FZ_CHECK(c->pp.eps >= 0.0f);
        (void)vx_vv_config_check(c, &e);
    }
    free(c);

    for (int with_dir = 0; with_dir < 2; with_dir++) {
        vx_cb_config cb;
        vx_cb_config_default(&cb);
        if (vx_cb_config_load(&cb, with_dir ? fz_data_path("chatterbox/ckpt") : NULL, mf.path, &e) == VOCIS_OK) {
            FZ_CHECK(cb.t3_heads >= 1 && cb.t3_kv_heads >= 1 && cb.t3_heads % cb.t3_kv_heads == 0);
            FZ_CHECK(cb.t3_head_dim >= 1 && cb.perceiver_heads >= 1 && cb.s3tok_heads >= 1);
            FZ_CHECK(cb.flow_encoder_heads >= 1 && cb.flow_decoder_heads >= 1 && cb.flow_decoder_head_dim >= 1);
            FZ_CHECK(cb.rope_theta >= 1.0f && cb.rms_eps >= 0.0f && cb.gpt2_heads[0] >= 0 && cb.gpt2_heads[1] >= 0);
        }
    }
    return 0;
}
