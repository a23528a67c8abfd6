/* The Chatterbox-Turbo / -Nano family (ChatterboxTurboTTS): opening, text
 * ids, T3 tokens and one speak chunk. Cloning, the S3Gen weights and the
 * chunk loop are the Chatterbox core's (vocis_cb.c, which picks
 * s3gen_meanflow.safetensors, the 15 s T3 prompt and the loudness
 * normalisation for these folders). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/family.h"
#include "api/internal.h"
#include "models/chatterbox/s3gen_meanflow.h"
#include "models/chatterbox/t3_gpt2.h"
#include "models/chatterbox/t3_gpt2_batch.h"
#include "models/chatterbox/turbo.h"
#include "text/turbo_text.h"

struct vx_turbo {
    vx_t3_gpt2 t3;
    int max_len; /* tokenizer truncation (model_max_length) */
};

static vocis_status open_turbo(vocis_model *m, const vocis_open_options *o) {
    vx_err *err = vx_api_err(m);
    int nano = 0;
    VX_TRY(vx_turbo_check_folder(m->dir, &nano, err));
    VX_TRY(vx_turbo_config(m->dir, o ? o->config_path : NULL, &m->cfg, err));
    struct vx_turbo *t = calloc(1, sizeof *t);
    if (!t) return vx_fail(err, VOCIS_E_NOMEM, "out of memory");
    m->turbo = t;
    VX_TRY(vx_turbo_tokenizer_load(m->dir, &m->tok, &t->max_len, err));
    VX_TRY(vx_t3_gpt2_load(&t->t3, m->dir, &m->cfg, m->precision, err));
    if (vx_tokenizer_size(m->tok) > t->t3.text_emb.rows)
        return vx_fail(err, VOCIS_E_SHAPE, "%s: the tokenizer has %d ids, T3's text_emb only %lld rows", m->dir,
                       vx_tokenizer_size(m->tok), (long long)t->t3.text_emb.rows);
    return VOCIS_OK;
}

static vocis_status set_voice_cache(vocis_model *m, size_t max_bytes) {
    return vx_t3_gpt2_set_voice_cache(&m->turbo->t3, max_bytes, vx_api_err(m));
}

static struct vx_prefix_cache *voice_cache(const vocis_model *m) { return m->turbo->t3.prefix_cache; }

static void close_turbo(vocis_model *m) {
    vx_api_cb_close(m);
    if (!m->turbo) return;
    vx_t3_gpt2_free(&m->turbo->t3);
    free(m->turbo);
    m->turbo = NULL;
}

const vx_t3_gpt2 *vx_api_turbo_t3(const vocis_model *m) { return &m->turbo->t3; }

static const char *kind(const vocis_model *m) { return m->turbo->t3.nano ? "chatterbox-nano" : "chatterbox-turbo"; }

vocis_status vx_api_turbo_tokenize(vocis_model *m, const char *text, int32_t **ids, size_t *n) {
    return vx_turbo_text_to_ids(m->tok, m->turbo->max_len, text, ids, n, vx_api_err(m));
}

static vx_turbo_sampling sampling_of(const vocis_t3_options *o, int (*on_token)(void *, int, int32_t),
                                     void *user) {
    vx_turbo_sampling s = {o->temperature, o->top_k < 0 ? 1000 : o->top_k, isnan(o->top_p) ? 0.95f : o->top_p,
                           o->repetition_penalty, o->max_new_tokens, o->greedy, on_token, user, NULL, o->speculate};
    return s;
}

static vocis_status check_voice(vocis_model *m, const vx_cb_conds *c) {
    if (c->speaker_emb.n != (size_t)m->turbo->t3.speaker_dim)
        return vx_fail(vx_api_err(m), VOCIS_E_SHAPE, "voice speaker_emb has %zu values, this T3 expects %d",
                       c->speaker_emb.n, m->turbo->t3.speaker_dim);
    return VOCIS_OK;
}

/* T3.inference_turbo on a voice and the text's ids; all sampled tokens (incl. a final 6562), through the
 * model's shared batch (concurrent calls step together). */
static vocis_status generate(vocis_model *m, const vx_cb_conds *c, const int32_t *ids, size_t nids,
                             const vocis_t3_options *o, int (*on_token)(void *, int, int32_t),
                             void *user, vx_rng *rng, int32_t **toks, int *nt) {
    VX_TRY(check_voice(m, c));
    vx_turbo_sampling s = sampling_of(o, on_token, user);
    const vx_t3_gpt2_req r = {c->speaker_emb.data, c->cond_prompt_speech_tokens.data,
                              (int)c->cond_prompt_speech_tokens.n, ids, (int)nids, &s, rng};
    return vx_api_turbo_t3_batched(m, &r, toks, nt, vx_api_err(m));
}

vocis_status vx_api_turbo_generate_ids(vocis_model *m, const vx_cb_conds *v, const int32_t *ids, size_t nids,
                                       const vocis_t3_options *o, int (*on_token)(void *, int, int32_t), void *user,
                                       vx_rng *rng, int32_t **toks, int *nt) {
    return generate(m, v, ids, nids, o, on_token, user, rng, toks, nt);
}

static vocis_status t3_generate(vocis_model *m, const vocis_voice *voice, const char *text, const vocis_t3_options *o,
                                int32_t **tokens, size_t *n) {
    vocis_voice *own;
    VX_TRY(vx_api_cb_voice_or_builtin(m, &voice, &own));
    int32_t *ids = NULL;
    size_t nids = 0;
    vocis_status st = vx_api_turbo_tokenize(m, text, &ids, &nids);
    if (!st) {
        vx_rng rng;
        vx_api_seed_rng(&rng, o);
        int nt = 0;
        st = generate(m, &voice->conds, ids, nids, o, o->on_token, o->user, &rng, tokens, &nt);
        *n = (size_t)nt;
    }
    free(ids);
    vx_api_voice_free(own);
    return st;
}

vocis_status vx_api_turbo_speak_chunk(vocis_model *m, const vx_cb_conds *v, const int32_t *ids, size_t nids,
                                      const vocis_t3_options *o, int cfm_steps,
                                      int (*on_token)(void *, int, int32_t), void *user, vx_rng *rng, float **wav,
                                      int64_t *nwav) {
    vx_err *err = vx_api_err(m);
    int32_t *toks = NULL;
    int nt = 0;
    int64_t *t64 = NULL;
    float *mel = NULL;
    int64_t tm = 0;
    vocis_status st = generate(m, v, ids, nids, o, on_token, user, rng, &toks, &nt);
    if (st) goto done;
    if (!(t64 = malloc(sizeof(int64_t) * (size_t)(nt + 3)))) {
        st = vx_fail(err, VOCIS_E_NOMEM, "out of memory");
        goto done;
    }
    /* tokens < 6561 (the trailing stop removed) + 3 silence tokens; upstream keeps their audio */
    const int ns = vx_turbo_clean_tokens(&m->turbo->t3, toks, nt, t64);
    vx_meanflow_req rq = {t64, ns, v->prompt_token.data, v->prompt_token_len, v->prompt_feat.data,
                          v->prompt_feat.shape[1], v->embedding.data, cfm_steps, NULL, NULL, rng, m->threads, NULL,
                          NULL, NULL};
    if ((st = vx_s3gen_meanflow_run(m->flow, &rq, &mel, &tm, err))) goto done;
    if ((st = vx_hift_vocode(m->hift, mel, tm, rng, NULL, NULL, wav, nwav, NULL, NULL, m->threads, err))) goto done;
    vx_trim_fade(*wav, *nwav);
done:
    free(toks), free(t64), free(mel);
    return st;
}

static int detect(const char *dir) { return vx_turbo_is_folder(dir); }

static vocis_status tokenize(vocis_model *m, const char *text, const char *language, int32_t **ids, size_t *n,
                             vx_tok_unknown *unknown) {
    (void)language, (void)unknown; /* English only (checked by the API); byte-level: nothing unknown */
    return vx_api_turbo_tokenize(m, text, ids, n);
}

const vx_family vx_family_turbo = {
    .name = "Chatterbox-Turbo / -Nano",
    .batches = 1,
    .parts = VX_FAMILY_LM | VX_FAMILY_S3GEN,
    .detect = detect,
    .open = open_turbo,
    .close = close_turbo,
    .kind = kind,
    .set_voice_cache = set_voice_cache,
    .voice_cache = voice_cache,
    .tokenize = tokenize,
    .voice_load = vx_api_cb_voice_load,
    .voice_save = vx_api_cb_voice_save,
    .clone = vx_api_cb_clone,
    .clone_samples = vx_api_cb_clone_samples,
    .t3_generate = t3_generate,
    .speak = vx_api_cb_speak,
};
