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

#define CHECK(cond)                                                                                                    \
    do {                                                                                                               \
        if (!(cond)) {                                                                                                 \
            fprintf(stderr, "invariant failed: %s\n", #cond);                                                          \
            abort();                                                                                                   \
        }                                                                                                              \
    } while (0)

static void check_tok(const vx_vv_tokenizer_config *t, int acoustic) {
    if (!t->present) return;
    CHECK(t->vae_dim >= 1 && t->enc_n_filters >= 1);
    CHECK(t->enc_n_ratios >= 1 && t->enc_n_ratios <= VX_VV_MAX_STAGES);
    CHECK(t->enc_n_depths == t->enc_n_ratios + 1);
    long hop = 1;
    for (int i = 0; i < t->enc_n_ratios; i++) {
        CHECK(t->enc_ratios[i] >= 1);
        hop *= t->enc_ratios[i];
    }
    CHECK(hop == t->hop);
    for (int i = 0; i < t->enc_n_depths; i++) CHECK(t->enc_depths[i] >= 0);
    if (acoustic) {
        CHECK(t->dec_n_filters >= 1 && t->dec_n_ratios >= 1 && t->dec_n_ratios <= VX_VV_MAX_STAGES);
        CHECK(t->dec_n_depths == t->dec_n_ratios + 1);
        long dhop = 1;
        for (int i = 0; i < t->dec_n_ratios; i++) dhop *= t->dec_ratios[i];
        CHECK(dhop == hop);
        for (int i = 0; i < t->dec_n_depths; i++) CHECK(t->dec_depths[i] >= 0);
    }
    CHECK(memchr(t->std_dist_type, 0, sizeof t->std_dist_type) && memchr(t->layernorm, 0, sizeof t->layernorm));
}

static void check_cfg(const vx_vv_config *c) {
    CHECK(c->hidden_size >= 1 && c->num_attention_heads >= 1 && c->num_key_value_heads >= 1);
    CHECK(c->num_attention_heads % c->num_key_value_heads == 0);
    CHECK(c->head_dim >= 2 && c->head_dim % 2 == 0);
    CHECK(c->num_hidden_layers >= 1 && c->vocab_size >= 1 && c->max_position_embeddings >= 1);
    CHECK(c->intermediate_size >= 1);
    CHECK(c->tts_backbone_num_hidden_layers >= 0 && c->tts_backbone_num_hidden_layers < c->num_hidden_layers);
    CHECK(c->acoustic.present && c->acoustic_vae_dim == c->acoustic.vae_dim);
    check_tok(&c->acoustic, 1);
    check_tok(&c->semantic, 0);
    CHECK(c->diffusion.ffn_dim >= 1 && c->diffusion.head_layers >= 1);
    CHECK(c->diffusion.ddpm_num_inference_steps >= 1 &&
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
            CHECK(c->acoustic.hop == c->pp.speech_tok_compress_ratio);
            CHECK(c->diffusion.hidden_size == c->hidden_size);
        }
    }

    /* an override of the test model's config.json */
    if (vx_vv_config_parse_override(fz_data_path("vibevoice/model/config.json"), mf.path, c, &e) == VOCIS_OK)
        check_cfg(c);

    /* preprocessor_config.json over the test model's config */
    memcpy(c, &base, sizeof *c);
    if (vx_vv_preproc_parse(mf.path, c, &e) == VOCIS_OK) {
        CHECK(c->pp.present && c->pp.speech_tok_compress_ratio >= 1 && c->pp.sampling_rate >= 1);
        CHECK(c->pp.eps >= 0.0f);
        (void)vx_vv_config_check(c, &e);
    }
    free(c);

    for (int with_dir = 0; with_dir < 2; with_dir++) {
        vx_cb_config cb;
        vx_cb_config_default(&cb);
        if (vx_cb_config_load(&cb, with_dir ? fz_data_path("chatterbox/ckpt") : NULL, mf.path, &e) == VOCIS_OK) {
            CHECK(cb.t3_heads >= 1 && cb.t3_kv_heads >= 1 && cb.t3_heads % cb.t3_kv_heads == 0);
            CHECK(cb.t3_head_dim >= 1 && cb.perceiver_heads >= 1 && cb.s3tok_heads >= 1);
            CHECK(cb.flow_encoder_heads >= 1 && cb.flow_decoder_heads >= 1 && cb.flow_decoder_head_dim >= 1);
            CHECK(cb.rope_theta >= 1.0f && cb.rms_eps >= 0.0f && cb.gpt2_heads[0] >= 0 && cb.gpt2_heads[1] >= 0);
        }
    }
    return 0;
}
