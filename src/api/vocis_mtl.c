/* The Chatterbox-Multilingual family (ChatterboxMultilingualTTS): the folder,
 * languages and text front end. Speech runs the Chatterbox path of vocis_cb.c
 * (T3, S3Gen, HiFT, cloning) with the hooks below for the multilingual
 * post-processing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "api/family.h"
#include "api/internal.h"
#include "models/chatterbox/mtl.h"
#include "text/mtl_text.h"

static vocis_status open_mtl(vocis_model *m, const vocis_open_options *o) {
    vx_err *err = vx_api_err(m);
    VX_TRY(vx_mtl_check_folder(m->dir, err));
    vx_cb_config_default(&m->cfg);
    VX_TRY(vx_cb_config_load(&m->cfg, m->dir, o ? o->config_path : NULL, err));
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", m->dir, VX_MTL_TOKENIZER_FILE);
    VX_TRY(vx_tokenizer_load(path, &m->tok, err));
    int32_t sot = vx_tokenizer_token_id(m->tok, "[START]"), eot = vx_tokenizer_token_id(m->tok, "[STOP]");
    if (sot != m->cfg.start_text_token || eot != m->cfg.stop_text_token)
        return vx_fail(err, VOCIS_E_FORMAT, "%s: [START]/[STOP] have ids %d/%d, T3 expects %d/%d", path, sot, eot,
                       m->cfg.start_text_token, m->cfg.stop_text_token);
    struct vx_mtl_text *t = NULL;
    VX_TRY(vx_mtl_text_load(m->dir, &t, err));
    m->mtl = t;
    snprintf(path, sizeof path, "%s/%s", m->dir, vx_mtl_t3_name(m->dir));
    VX_TRY(vx_t3_load_prec(&m->t3, path, &m->cfg, m->precision, err));
    m->has_t3 = 1;
    if (vx_tokenizer_size(m->tok) > m->t3.text_emb.rows)
        return vx_fail(err, VOCIS_E_SHAPE, "%s: %d token ids, but the T3's text_emb has %lld rows", VX_MTL_TOKENIZER_FILE,
                       vx_tokenizer_size(m->tok), (long long)m->t3.text_emb.rows);
    return VOCIS_OK;
}

static vocis_status need_language(vocis_model *m, const char *language) {
    if (!language || !*language)
        return vx_fail(vx_api_err(m), VOCIS_E_ARG, "Chatterbox-Multilingual needs a language: one of %s",
                       vx_mtl_language_list());
    if (vx_mtl_language_index(language) < 0)
        return vx_fail(vx_api_err(m), VOCIS_E_ARG, "unsupported language '%.32s' (supported: %s)", language,
                       vx_mtl_language_list());
    return VOCIS_OK;
}

static vocis_status tokenize(vocis_model *m, const char *text, const char *language, int32_t **ids, size_t *n,
                             vx_tok_unknown *unknown) {
    VX_TRY(need_language(m, language));
    int32_t *raw = NULL;
    size_t nraw = 0;
    VX_TRY(vx_mtl_text_to_ids(m->mtl, m->tok, text, language, &raw, &nraw, unknown, vx_api_err(m)));
    /* generate(): F.pad with start_text_token / stop_text_token */
    return vx_api_pad_text_ids(m, raw, nraw, ids, n);
}

int vx_api_mtl_clean_tokens(vocis_model *m, int32_t *tokens, int n) {
    /* S3Gen's token embedding has start_speech_token (6561) rows */
    return vx_mtl_clean_tokens(tokens, n, m->cfg.start_speech_token, m->cfg.stop_speech_token,
                               m->cfg.start_speech_token, NULL);
}

int64_t vx_api_mtl_keep_samples(int n_tokens, int64_t n_samples) { return vx_mtl_keep_samples(n_tokens, n_samples); }

static void close_mtl(vocis_model *m) {
    vx_api_cb_close(m);
    vx_mtl_text_free(m->mtl);
}

static const char *languages(const vocis_model *m) {
    (void)m;
    return vx_mtl_language_list();
}

const vx_family vx_family_mtl = {
    .name = "Chatterbox-Multilingual",
    .batches = 1,
    .parts = VX_FAMILY_LM | VX_FAMILY_S3GEN,
    .detect = vx_mtl_is_folder,
    .open = open_mtl,
    .close = close_mtl,
    .kind_name = "chatterbox-multilingual",
    .kv_bf16 = vx_api_cb_kv_bf16,
    .set_voice_cache = vx_api_cb_set_voice_cache,
    .voice_cache = vx_api_cb_voice_cache,
    .check_language = need_language,
    .languages = languages,
    .tokenize = tokenize,
    .voice_load = vx_api_cb_voice_load,
    .voice_save = vx_api_cb_voice_save,
    .clone = vx_api_cb_clone,
    .clone_samples = vx_api_cb_clone_samples,
    .t3_generate = vx_api_cb_t3_generate,
    .speak = vx_api_cb_speak,
    .convert = vx_api_cb_convert,
};
