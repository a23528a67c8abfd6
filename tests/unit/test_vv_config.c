/* VibeVoice config.json / preprocessor_config.json: the tiny golden model's
 * values, release-like variants, and malformed variants written to a temp
 * folder (each must fail with one line naming the file and the field). */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io/jsonfile.h"
#include "models/vibevoice/config.h"
#include "testlib.h"

static char dir[256];
static cJSON *base_cfg, *base_pp;

static void write_text(const char *name, const char *text) {
    char p[512];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *fp = fopen(p, "wb");
    if (!fp) {
        perror(p);
        exit(1);
    }
    fputs(text, fp);
    fclose(fp);
}

static void write_json(const char *name, const cJSON *j) {
    char *s = cJSON_Print(j);
    write_text(name, s);
    free(s);
}

static void reset_files(void) {
    write_json("config.json", base_cfg);
    write_json("preprocessor_config.json", base_pp);
}

static cJSON *obj_at(cJSON *root, const char *sec) {
    return sec ? cJSON_GetObjectItemCaseSensitive(root, sec) : root;
}

/* Variant: set (or delete when val == NULL) root[sec][key]; load; expect a
 * failure whose message names `field` and the file. */
static void expect_fail(const char *what, const char *sec, const char *key, cJSON *val, const char *field,
                        vocis_status code) {
    cJSON *c = cJSON_Duplicate(base_cfg, 1);
    cJSON *o = obj_at(c, sec);
    if (val) {
        if (cJSON_GetObjectItemCaseSensitive(o, key))
            cJSON_ReplaceItemInObjectCaseSensitive(o, key, val);
        else
            cJSON_AddItemToObject(o, key, val);
    } else {
        cJSON_DeleteItemFromObjectCaseSensitive(o, key);
    }
    write_json("config.json", c);
    cJSON_Delete(c);
    vx_vv_config cfg;
    vx_err err = {0};
    vocis_status st = vx_vv_config_load(dir, &cfg, &err);
    CHECK_MSG(st == code, "%s: status %d (want %d): %s", what, st, code, err.msg);
    CHECK_MSG(strstr(err.msg, field) != NULL, "%s: message does not name '%s': %s", what, field, err.msg);
    CHECK_MSG(strstr(err.msg, "config.json") != NULL, "%s: message does not name the file: %s", what, err.msg);
    CHECK_MSG(strchr(err.msg, '\n') == NULL, "%s: multi-line message", what);
    reset_files();
}

static void test_tiny(void) {
    vx_vv_config c;
    vx_err err = {0};
    CHECK_MSG(vx_vv_config_load(tl_path("vibevoice/model"), &c, &err) == VOCIS_OK, "%s", err.msg);
    CHECK(strcmp(c.model_type, "vibevoice") == 0);
    CHECK(c.hidden_size == 64 && c.intermediate_size == 160 && c.num_hidden_layers == 2);
    CHECK(c.num_attention_heads == 4 && c.num_key_value_heads == 2 && c.head_dim == 16);
    CHECK(c.vocab_size == 512 && c.max_position_embeddings == 65536);
    CHECK(c.rope_theta == 1000000.0 && c.rms_norm_eps == 1e-6f);
    CHECK(c.tie_word_embeddings == 1 && c.decoder_tie_word_embeddings == 1);
    CHECK(c.acoustic_vae_dim == 64 && c.semantic_vae_dim == 128);
    const vx_vv_tokenizer_config *a = &c.acoustic;
    CHECK(a->present && a->vae_dim == 64 && a->fix_std == 0.5f && strcmp(a->std_dist_type, "gaussian") == 0);
    CHECK(a->enc_n_filters == 4 && a->dec_n_filters == 4 && a->causal == 1);
    CHECK(a->enc_n_ratios == 6 && a->enc_ratios[0] == 8 && a->enc_ratios[5] == 2 && a->hop == 3200);
    CHECK(a->enc_n_depths == 7 && a->enc_depths[0] == 1 && a->enc_depths[6] == 2);
    /* decoder_depths null -> reversed encoder depths */
    CHECK(a->dec_n_depths == 7 && a->dec_depths[0] == 2 && a->dec_depths[6] == 1);
    CHECK(a->dec_n_ratios == 6 && a->dec_ratios[0] == 8);
    CHECK(a->layernorm_eps == 1e-5f && strcmp(a->layernorm, "RMSNorm") == 0 && a->disable_last_norm == 1);
    CHECK(strcmp(a->mixer_layer, "depthwise_conv") == 0 && a->conv_bias == 1 && a->layer_scale_init_value == 1e-6f);
    const vx_vv_tokenizer_config *s = &c.semantic;
    CHECK(s->present && s->vae_dim == 128 && s->fix_std == 0.0f && strcmp(s->std_dist_type, "none") == 0);
    CHECK(s->hop == 3200 && s->enc_n_depths == 7);
    CHECK(c.diffusion.hidden_size == 64 && c.diffusion.head_layers == 2 && c.diffusion.ffn_dim == 192);
    CHECK(c.diffusion.latent_size == 64 && c.diffusion.ddpm_num_steps == 1000);
    CHECK(c.diffusion.ddpm_num_inference_steps == 20 && c.diffusion.rms_norm_eps == 1e-5f);
    CHECK(strcmp(c.diffusion.ddpm_beta_schedule, "cosine") == 0);
    CHECK(strcmp(c.diffusion.prediction_type, "v_prediction") == 0);
    CHECK(c.pp.present && c.pp.speech_tok_compress_ratio == 3200 && c.pp.db_normalize == 1);
    CHECK(c.pp.sampling_rate == 24000 && c.pp.target_dB_FS == -25.0f && c.pp.eps == 1e-6f);
}

static void test_variants_ok(void) {
    vx_vv_config c;
    vx_err err = {0};
    /* release-like: explicit head_dim, list depths, decoder depths string,
     * no preprocessor_config.json (upstream defaults), unknown fields */
    cJSON *j = cJSON_Duplicate(base_cfg, 1);
    cJSON *d = cJSON_GetObjectItemCaseSensitive(j, "decoder_config");
    cJSON_AddNumberToObject(d, "head_dim", 32);
    cJSON_AddStringToObject(d, "some_future_field", "x");
    cJSON_AddNumberToObject(j, "acostic_vae_dim", 64);
    cJSON_DeleteItemFromObject(j, "tie_word_embeddings");
    cJSON *a = cJSON_GetObjectItemCaseSensitive(j, "acoustic_tokenizer_config");
    cJSON_ReplaceItemInObject(a, "decoder_depths", cJSON_CreateString("3-3-3-3-3-3-8"));
    int dep[7] = {1, 1, 1, 1, 1, 1, 2};
    cJSON_ReplaceItemInObject(a, "encoder_depths", cJSON_CreateIntArray(dep, 7));
    write_json("config.json", j);
    cJSON_Delete(j);
    char pp[512];
    snprintf(pp, sizeof pp, "%s/preprocessor_config.json", dir);
    unlink(pp);
    CHECK_MSG(vx_vv_config_load(dir, &c, &err) == VOCIS_OK, "%s", err.msg);
    CHECK(c.head_dim == 32 && c.tie_word_embeddings == 1);
    CHECK(c.acoustic.enc_depths[6] == 2 && c.acoustic.dec_depths[6] == 8);
    CHECK(c.pp.present == 0 && c.pp.speech_tok_compress_ratio == 3200 && c.pp.sampling_rate == 24000);
    reset_files();

    /* Realtime-style: no semantic tokenizer */
    j = cJSON_Duplicate(base_cfg, 1);
    cJSON_ReplaceItemInObject(j, "model_type", cJSON_CreateString("vibevoice_streaming"));
    cJSON_DeleteItemFromObject(j, "semantic_tokenizer_config");
    cJSON_DeleteItemFromObject(j, "semantic_vae_dim");
    cJSON_AddNumberToObject(j, "tts_backbone_num_hidden_layers", 1);
    write_json("config.json", j);
    cJSON_Delete(j);
    CHECK_MSG(vx_vv_config_load(dir, &c, &err) == VOCIS_OK, "%s", err.msg);
    CHECK(c.semantic.present == 0 && c.semantic_vae_dim == 0 && c.tts_backbone_num_hidden_layers == 1);
    reset_files();
}

static void test_malformed(void) {
    expect_fail("missing hidden_size", "decoder_config", "hidden_size", NULL, "decoder_config.hidden_size",
                VOCIS_E_FORMAT);
    expect_fail("negative layers", "decoder_config", "num_hidden_layers", cJSON_CreateNumber(-2),
                "decoder_config.num_hidden_layers", VOCIS_E_FORMAT);
    expect_fail("fractional heads", "decoder_config", "num_attention_heads", cJSON_CreateNumber(4.5),
                "decoder_config.num_attention_heads", VOCIS_E_FORMAT);
    expect_fail("string intermediate", "decoder_config", "intermediate_size", cJSON_CreateString("160"),
                "decoder_config.intermediate_size", VOCIS_E_FORMAT);
    expect_fail("heads not dividing hidden", "decoder_config", "num_attention_heads", cJSON_CreateNumber(5),
                "num_attention_heads", VOCIS_E_FORMAT);
    expect_fail("kv heads not dividing heads", "decoder_config", "num_key_value_heads", cJSON_CreateNumber(3),
                "num_key_value_heads", VOCIS_E_FORMAT);
    expect_fail("missing kv heads", "decoder_config", "num_key_value_heads", NULL, "num_key_value_heads",
                VOCIS_E_FORMAT);
    expect_fail("rope scaling", "decoder_config", "rope_scaling",
                cJSON_Parse("{\"type\": \"linear\", \"factor\": 2.0}"), "rope_scaling", VOCIS_E_UNSUPPORTED);
    expect_fail("zero vocab", "decoder_config", "vocab_size", cJSON_CreateNumber(0), "vocab_size", VOCIS_E_FORMAT);
    expect_fail("missing rope_theta", "decoder_config", "rope_theta", NULL, "rope_theta", VOCIS_E_FORMAT);
    expect_fail("not qwen2", "decoder_config", "model_type", cJSON_CreateString("llama"), "model_type",
                VOCIS_E_UNSUPPORTED);
    expect_fail("missing decoder_config", NULL, "decoder_config", NULL, "decoder_config", VOCIS_E_FORMAT);
    expect_fail("missing acoustic", NULL, "acoustic_tokenizer_config", NULL, "acoustic_tokenizer_config",
                VOCIS_E_FORMAT);
    expect_fail("missing semantic", NULL, "semantic_tokenizer_config", NULL, "semantic_tokenizer_config",
                VOCIS_E_FORMAT);
    expect_fail("negative vae_dim", "acoustic_tokenizer_config", "vae_dim", cJSON_CreateNumber(-64),
                "acoustic_tokenizer_config.vae_dim", VOCIS_E_FORMAT);
    int r[6] = {8, 5, 5, 4, 2, 3};
    expect_fail("encoder vs decoder ratios", "acoustic_tokenizer_config", "encoder_ratios", cJSON_CreateIntArray(r, 6),
                "acoustic_tokenizer_config.decoder_ratios", VOCIS_E_FORMAT);
    /* both acoustic ratio lists with product 4800: against speech_tok_compress_ratio 3200 */
    {
        cJSON *c = cJSON_Duplicate(base_cfg, 1);
        cJSON *a = cJSON_GetObjectItemCaseSensitive(c, "acoustic_tokenizer_config");
        cJSON_ReplaceItemInObject(a, "encoder_ratios", cJSON_CreateIntArray(r, 6));
        cJSON_ReplaceItemInObject(a, "decoder_ratios", cJSON_CreateIntArray(r, 6));
        write_json("config.json", c);
        cJSON_Delete(c);
        vx_vv_config cfg;
        vx_err err = {0};
        CHECK(vx_vv_config_load(dir, &cfg, &err) == VOCIS_E_FORMAT);
        CHECK_MSG(strstr(err.msg, "acoustic_tokenizer_config.encoder_ratios") &&
                      strstr(err.msg, "speech_tok_compress_ratio 3200"),
                  "%s", err.msg);
        reset_files();
    }
    expect_fail("semantic ratios product", "semantic_tokenizer_config", "encoder_ratios", cJSON_CreateIntArray(r, 6),
                "semantic_tokenizer_config.encoder_ratios", VOCIS_E_FORMAT);
    expect_fail("decoder ratios product", "acoustic_tokenizer_config", "decoder_ratios", cJSON_CreateIntArray(r, 6),
                "decoder_ratios", VOCIS_E_FORMAT);
    expect_fail("depths count", "acoustic_tokenizer_config", "encoder_depths", cJSON_CreateString("1-1-1"),
                "encoder_depths", VOCIS_E_FORMAT);
    expect_fail("depths syntax", "acoustic_tokenizer_config", "encoder_depths", cJSON_CreateString("1-1-x-1-1-1-2"),
                "encoder_depths", VOCIS_E_FORMAT);
    expect_fail("decoder depths count", "acoustic_tokenizer_config", "decoder_depths", cJSON_CreateString("3-3"),
                "decoder_depths", VOCIS_E_FORMAT);
    expect_fail("missing n_filters", "acoustic_tokenizer_config", "encoder_n_filters", NULL, "encoder_n_filters",
                VOCIS_E_FORMAT);
    expect_fail("bool as bool", "acoustic_tokenizer_config", "causal", cJSON_CreateNumber(1), "causal", VOCIS_E_FORMAT);
    expect_fail("non-causal", "acoustic_tokenizer_config", "causal", cJSON_CreateFalse(), "causal",
                VOCIS_E_UNSUPPORTED);
    expect_fail("acoustic_vae_dim mismatch", NULL, "acoustic_vae_dim", cJSON_CreateNumber(32), "acoustic_vae_dim",
                VOCIS_E_FORMAT);
    expect_fail("diffusion hidden mismatch", "diffusion_head_config", "hidden_size", cJSON_CreateNumber(128),
                "diffusion_head_config.hidden_size", VOCIS_E_FORMAT);
    expect_fail("diffusion latent mismatch", "diffusion_head_config", "latent_size", cJSON_CreateNumber(32),
                "latent_size", VOCIS_E_FORMAT);
    expect_fail("missing head_layers", "diffusion_head_config", "head_layers", NULL, "head_layers", VOCIS_E_FORMAT);
    expect_fail("inference steps", "diffusion_head_config", "ddpm_num_inference_steps", cJSON_CreateNumber(2000),
                "ddpm_num_inference_steps", VOCIS_E_FORMAT);
    expect_fail("unknown model type", NULL, "model_type", cJSON_CreateString("bark"), "model_type",
                VOCIS_E_UNSUPPORTED);

    /* not JSON at all / not an object */
    vx_vv_config c;
    vx_err err = {0};
    write_text("config.json", "{\"decoder_config\": {\"hidden_size\": 64,");
    CHECK(vx_vv_config_load(dir, &c, &err) == VOCIS_E_FORMAT);
    CHECK_MSG(strstr(err.msg, "config.json") && strstr(err.msg, "JSON"), "%s", err.msg);
    write_text("config.json", "[1, 2, 3]");
    CHECK(vx_vv_config_load(dir, &c, &err) == VOCIS_E_FORMAT);
    reset_files();

    /* missing config.json */
    char p[512];
    snprintf(p, sizeof p, "%s/config.json", dir);
    unlink(p);
    err = (vx_err){0};
    CHECK(vx_vv_config_load(dir, &c, &err) == VOCIS_E_IO);
    CHECK_MSG(strstr(err.msg, "config.json") != NULL, "%s", err.msg);
    reset_files();

    /* preprocessor: compress ratio against the tokenizer's ratios, bad values */
    cJSON *pp = cJSON_Duplicate(base_pp, 1);
    cJSON_ReplaceItemInObject(pp, "speech_tok_compress_ratio", cJSON_CreateNumber(1600));
    write_json("preprocessor_config.json", pp);
    cJSON_Delete(pp);
    err = (vx_err){0};
    CHECK(vx_vv_config_load(dir, &c, &err) == VOCIS_E_FORMAT);
    CHECK_MSG(strstr(err.msg, "speech_tok_compress_ratio") && strstr(err.msg, "preprocessor_config.json"), "%s",
              err.msg);
    pp = cJSON_Duplicate(base_pp, 1);
    cJSON_ReplaceItemInObject(cJSON_GetObjectItem(pp, "audio_processor"), "sampling_rate", cJSON_CreateNumber(-1));
    write_json("preprocessor_config.json", pp);
    cJSON_Delete(pp);
    err = (vx_err){0};
    CHECK(vx_vv_config_load(dir, &c, &err) == VOCIS_E_FORMAT);
    CHECK_MSG(strstr(err.msg, "audio_processor.sampling_rate") && strstr(err.msg, "preprocessor_config.json"), "%s",
              err.msg);
    write_text("preprocessor_config.json", "not json");
    err = (vx_err){0};
    CHECK(vx_vv_config_load(dir, &c, &err) == VOCIS_E_FORMAT);
    CHECK_MSG(strstr(err.msg, "preprocessor_config.json") != NULL, "%s", err.msg);
    reset_files();
}

int main(int argc, char **argv) {
    if (argc > 1) tl_data_dir = argv[1];
    vx_err err = {0};
    if (vx_json_load(tl_path("vibevoice/model/config.json"), &base_cfg, &err) ||
        vx_json_load(tl_path("vibevoice/model/preprocessor_config.json"), &base_pp, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    snprintf(dir, sizeof dir, "/tmp/vocis_test_vvcfg_XXXXXX");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    reset_files();
    test_tiny();
    test_variants_ok();
    test_malformed();
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    cJSON_Delete(base_cfg);
    cJSON_Delete(base_pp);
    return tl_finish("test_vv_config");
}
