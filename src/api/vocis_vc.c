/* Chatterbox voice conversion (ChatterboxVC.generate): the source's S3 tokens, then S3Gen +
 * HiFT conditioned on the target's S3Gen half. A conversion folder (s3gen.safetensors and
 * perhaps conds.pt, no T3) is a family of its own; English and Multilingual convert too. */
#include "vocis.h"

#include <stdlib.h>
#include <string.h>

#include "api/family.h"
#include "api/internal.h"
#include "io/audio.h"

static int progress(const vocis_convert_options *o, const char *stage, int step) {
    if (!o->on_progress) return 0;
    vocis_progress p = {stage, 0, 1, step, 1};
    return o->on_progress(o->user, &p);
}

vocis_status vx_api_cb_convert(vocis_model *m, const char *source_path, const vocis_voice *target,
                               const vocis_convert_options *opts, vocis_audio *out) {
    vx_err *err = vx_api_err(m);
    const vocis_convert_options o = *opts;
    if (o.cfm_steps < 1 || o.cfm_steps > 1000) return vx_fail(err, VOCIS_E_ARG, "cfm steps must be in [1, 1000]");

    vocis_voice *own = NULL;
    if (!target) {
        VX_TRY(vx_api_cb_voice_load(m, NULL, &own));
        target = own;
    }
    const vx_cb_conds *v = &target->conds;
    float *src = NULL, *mel = NULL, *wav = NULL;
    int64_t n = 0, ntok = 0, tm = 0, nw = 0, *toks = NULL;
    vx_audio_info info;
    vocis_status st = VOCIS_OK;
    if (target->audio_path || !v->has_gen) {
        st = vx_fail(err, VOCIS_E_ARG, "the target voice has no S3Gen reference (prompt_token, prompt_feat, embedding)");
        goto done;
    }
    /* librosa.load(source, sr=16000), the whole file (bounded) */
    if ((st = vx_audio_read_head(source_path, 16000, VOCIS_CONVERT_MAX_SECONDS, &src, &n, &info, err))) goto done;
    if (info.truncated) {
        st = vx_fail(err, VOCIS_E_ARG, "%s: the source is longer than %d s, the most vocis converts at once: split it",
                     source_path, VOCIS_CONVERT_MAX_SECONDS);
        goto done;
    }
    if ((st = vx_api_load_cloner(m)) || (st = vx_api_load_s3gen(m))) goto done;
    if (progress(&o, "s3tokenizer", 0)) goto cancelled;
    if ((st = vx_s3tok_tokenize(m->cloner.tok, src, n, 0, &toks, &ntok, m->threads, err))) {
        vx_errctx(err, "%s", source_path);
        goto done;
    }
    if (progress(&o, "s3tokenizer", 1) || progress(&o, "s3gen", 0)) goto cancelled;
    vx_rng rng;
    vocis_t3_options seed_only;
    vocis_t3_options_default(&seed_only);
    seed_only.seed = o.seed;
    vx_api_seed_rng(&rng, &seed_only);
    /* the source tokens go to S3Gen as they are (no filtering, no silence tail, no cut) */
    if ((st = vx_s3gen_flow_infer(m->flow, toks, ntok, v->prompt_token.data, v->prompt_token_len, v->prompt_feat.data,
                                  v->prompt_feat.shape[1], v->embedding.data, o.cfm_steps, &rng, NULL, &mel, &tm,
                                  m->threads, err)))
        goto done;
    if (progress(&o, "s3gen", 1) || progress(&o, "hift", 0)) goto cancelled;
    if ((st = vx_hift_vocode(m->hift, mel, tm, &rng, NULL, NULL, &wav, &nw, NULL, NULL, m->threads, err))) goto done;
    vx_trim_fade(wav, nw);
    if (progress(&o, "hift", 1)) goto cancelled;
    if (o.on_audio && o.on_audio(o.user, wav, (size_t)nw, VX_HIFT_SR)) goto cancelled;
    out->samples = wav;
    out->n = (size_t)nw;
    out->sample_rate = VX_HIFT_SR;
    wav = NULL;
    goto done;
cancelled:
    st = vx_fail(err, VOCIS_E_CANCELLED, "conversion cancelled");
done:
    free(src), free(mel), free(wav), free(toks);
    vx_api_voice_free(own);
    return st;
}

/* ChatterboxVC.from_local: s3gen.safetensors (+ conds.pt for the built-in target), no config.json */
static int detect(const char *dir) {
    return vx_api_file_exists(dir, "s3gen.safetensors") && !vx_api_file_exists(dir, "config.json");
}

static vocis_status open_vc(vocis_model *m, const vocis_open_options *o) {
    vx_cb_config_default(&m->cfg);
    m->is_vc = 1;
    return vx_cb_config_load(&m->cfg, m->dir, o ? o->config_path : NULL, vx_api_err(m));
}

static void kv_none(vocis_model *m) { (void)m; } /* no LM, no KV cache: any storage will do */

const vx_family vx_family_vc = {
    .name = "Chatterbox voice conversion",
    .parts = VX_FAMILY_S3GEN,
    .detect = detect,
    .open = open_vc,
    .close = vx_api_cb_close,
    .kind_name = "chatterbox-vc",
    .kv_bf16 = kv_none,
    .voice_load = vx_api_cb_voice_load,
    .voice_save = vx_api_cb_voice_save,
    .clone = vx_api_cb_clone,
    .clone_samples = vx_api_cb_clone_samples,
    .convert = vx_api_cb_convert,
};
