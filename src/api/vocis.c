/* Public API: model and voice handles over the internal model code. */
#include "vocis.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/rng.h"
#include "base/threads.h"
#include "models/chatterbox/conds.h"
#include "models/chatterbox/t3.h"
#include "text/chatterbox_text.h"
#include "text/tokenizer.h"

struct vocis_model {
    char dir[4096];
    int threads;
    vx_err err;
    vx_cb_config cfg;
    vx_tokenizer *tok;
    vx_t3 t3;
    int has_t3;
};

struct vocis_voice {
    vx_cb_conds conds;
};

static int file_exists(const char *dir, const char *name) {
    char p[4200];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    return access(p, F_OK) == 0;
}

static vocis_status open_chatterbox(vocis_model *m, const vocis_open_options *o) {
    vx_err *err = &m->err;
    char path[4200];
    vx_cb_config_default(&m->cfg);
    VX_TRY(vx_cb_config_load(&m->cfg, m->dir, o ? o->config_path : NULL, err));
    snprintf(path, sizeof path, "%s/tokenizer.json", m->dir);
    VX_TRY(vx_tokenizer_load(path, &m->tok, err));
    int32_t sot = vx_tokenizer_token_id(m->tok, "[START]"), eot = vx_tokenizer_token_id(m->tok, "[STOP]");
    if (sot != m->cfg.start_text_token || eot != m->cfg.stop_text_token)
        return vx_fail(err, VOCIS_E_FORMAT, "%s: [START]/[STOP] have ids %d/%d, T3 expects %d/%d", path, sot, eot,
                       m->cfg.start_text_token, m->cfg.stop_text_token);
    snprintf(path, sizeof path, "%s/t3_cfg.safetensors", m->dir);
    VX_TRY(vx_t3_load(&m->t3, path, &m->cfg, err));
    m->has_t3 = 1;
    return VOCIS_OK;
}

vocis_status vocis_model_open(const char *dir, const vocis_open_options *opts, vocis_model **out) {
    vocis_model *m = calloc(1, sizeof *m);
    *out = m;
    if (!m) return VOCIS_E_NOMEM;
    m->threads = opts && opts->threads > 0 ? opts->threads : vx_default_threads();
    if (!dir || !*dir) return vx_fail(&m->err, VOCIS_E_ARG, "no model folder given");
    snprintf(m->dir, sizeof m->dir, "%s", dir);
    if (access(dir, F_OK) != 0) return vx_fail(&m->err, VOCIS_E_IO, "%s: model folder not found", dir);
    if (file_exists(dir, "t3_cfg.safetensors")) return open_chatterbox(m, opts);
    return vx_fail(&m->err, VOCIS_E_UNSUPPORTED,
                   "%s: not a recognised model folder (expected Chatterbox's t3_cfg.safetensors)", dir);
}

void vocis_model_close(vocis_model *m) {
    if (!m) return;
    if (m->has_t3) vx_t3_free(&m->t3);
    vx_tokenizer_free(m->tok);
    free(m);
}

const char *vocis_errmsg(const vocis_model *m) {
    if (!m) return "out of memory";
    return m->err.code ? m->err.msg : "no error";
}

void vocis_model_set_threads(vocis_model *m, int threads) {
    if (m) m->threads = threads > 0 ? threads : vx_default_threads();
}

void vocis_free(void *p) { free(p); }

vocis_status vocis_tokenize(vocis_model *m, const char *text, int32_t **ids, size_t *n) {
    *ids = NULL;
    *n = 0;
    vx_err_clear(&m->err);
    if (!m->tok) return vx_fail(&m->err, VOCIS_E_ARG, "model has no tokenizer loaded");
    int32_t *raw;
    size_t nraw;
    VX_TRY(vx_cb_text_to_ids(m->tok, text, &raw, &nraw, &m->err));
    int32_t *all = malloc(sizeof(int32_t) * (nraw + 2));
    if (!all) {
        free(raw);
        return vx_fail(&m->err, VOCIS_E_NOMEM, "out of memory");
    }
    all[0] = m->cfg.start_text_token;
    memcpy(all + 1, raw, sizeof(int32_t) * nraw);
    all[nraw + 1] = m->cfg.stop_text_token;
    free(raw);
    *ids = all;
    *n = nraw + 2;
    return VOCIS_OK;
}

static int has_suffix(const char *s, const char *suf) {
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && strcmp(s + a - b, suf) == 0;
}

vocis_status vocis_voice_load(vocis_model *m, const char *path, vocis_voice **out) {
    *out = NULL;
    vx_err_clear(&m->err);
    vocis_voice *v = calloc(1, sizeof *v);
    if (!v) return vx_fail(&m->err, VOCIS_E_NOMEM, "out of memory");
    char builtin[4200];
    if (!path) {
        snprintf(builtin, sizeof builtin, "%s/conds.pt", m->dir);
        path = builtin;
    }
    vocis_status st = has_suffix(path, ".pt") ? vx_cb_conds_load_pt(path, &v->conds, &m->err)
                                              : vx_cb_conds_load_safetensors(path, &v->conds, &m->err);
    if (st != VOCIS_OK) {
        free(v);
        return st;
    }
    *out = v;
    return VOCIS_OK;
}

void vocis_voice_free(vocis_voice *v) {
    if (!v) return;
    vx_cb_conds_free(&v->conds);
    free(v);
}

void vocis_t3_options_default(vocis_t3_options *o) {
    memset(o, 0, sizeof *o);
    o->temperature = 0.8f;
    o->cfg_weight = 0.5f;
    o->exaggeration = NAN;
    o->min_p = 0.05f;
    o->top_p = 1.0f;
    o->repetition_penalty = 1.2f;
    o->max_new_tokens = 1000;
    o->seed = -1;
}

static uint64_t random_seed(void) {
    uint64_t s = 0;
    FILE *f = fopen("/dev/urandom", "rb");
    if (f) {
        if (fread(&s, sizeof s, 1, f) != 1) s = 0;
        fclose(f);
    }
    return s ^ (uint64_t)time(NULL);
}

vocis_status vocis_t3_generate(vocis_model *m, const vocis_voice *voice, const char *text,
                               const vocis_t3_options *opts, int32_t **tokens, size_t *n) {
    *tokens = NULL;
    *n = 0;
    vx_err_clear(&m->err);
    if (!m->has_t3) return vx_fail(&m->err, VOCIS_E_UNSUPPORTED, "this model has no T3 stage");
    if (!text) return vx_fail(&m->err, VOCIS_E_ARG, "no text given");
    const char *c0 = text;
    while (*c0 == ' ' || *c0 == '\t' || *c0 == '\n' || *c0 == '\r' || *c0 == '\v' || *c0 == '\f') c0++;
    if (!*c0) return vx_fail(&m->err, VOCIS_E_ARG, "text is empty");
    vocis_t3_options o;
    if (opts) o = *opts;
    else vocis_t3_options_default(&o);

    vocis_voice *own = NULL;
    if (!voice) {
        VX_TRY(vocis_voice_load(m, NULL, &own));
        voice = own;
    }
    const vx_cb_conds *c = &voice->conds;
    if (c->speaker_emb.n != (size_t)m->t3.speaker_dim) {
        vocis_voice_free(own);
        return vx_fail(&m->err, VOCIS_E_SHAPE, "voice speaker_emb has %zu values, this T3 expects %d",
                       c->speaker_emb.n, m->t3.speaker_dim);
    }
    vx_t3_cond cond = {
        .speaker_emb = c->speaker_emb.data,
        .prompt_tokens = c->cond_prompt_speech_tokens.data,
        .n_prompt = (int)c->cond_prompt_speech_tokens.n,
        .emotion_adv = isnan(o.exaggeration) ? c->emotion_adv.data[0] : o.exaggeration,
    };
    int32_t *ids = NULL;
    size_t nids = 0;
    vocis_status st = vocis_tokenize(m, text, &ids, &nids);
    if (st == VOCIS_OK) {
        vx_t3_sampling s = {o.temperature, o.cfg_weight, o.min_p, o.top_p, o.repetition_penalty,
                            o.max_new_tokens, o.greedy, o.on_token, o.user};
        vx_rng rng;
        vx_rng_seed(&rng, o.seed >= 0 ? (uint64_t)o.seed : random_seed());
        int nt = 0;
        st = vx_t3_generate(&m->t3, &cond, ids, (int)nids, &s, &rng, m->threads, tokens, &nt, &m->err);
        *n = (size_t)nt;
    }
    free(ids);
    vocis_voice_free(own);
    return st;
}
