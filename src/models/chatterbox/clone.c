#include "models/chatterbox/clone.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "audio/resample.h"
#include "base/threads.h"
#include "io/audio.h"
#include "models/chatterbox/mtl.h"
#include "models/chatterbox/ref_mel.h"

vocis_status vx_cb_cloner_load(vx_cb_cloner *c, const char *model_dir, const vx_weights *s3gen_w,
                               const vx_cb_config *cfg, int vc_only, vx_err *err) {
    memset(c, 0, sizeof *c);
    c->t3_prompt_len = cfg->t3_prompt_len;
    char path[4200];
    snprintf(path, sizeof path, "%s/ve.safetensors", model_dir);
    vx_weights *vw = NULL;
    vocis_status st = VOCIS_OK;
    if (access(path, F_OK) == 0 || !vc_only) { /* a voice-conversion folder has no voice encoder */
        VX_TRY(vx_cb_weights_open_path(path, &vw, err)); /* or ve.pt (the multilingual release) */
        st = vx_ve_load(vw, &c->ve, err);
        vx_weights_close(vw); /* the voice encoder owns float32 copies */
    }
    if (!st) st = vx_s3tok_load(s3gen_w, cfg->s3tok_heads, &c->tok, err);
    if (!st) st = vx_campplus_load(s3gen_w, NULL, &c->cam, err);
    if (st) {
        vx_errctx(err, "voice cloning");
        vx_cb_cloner_free(c);
    }
    return st;
}

void vx_cb_cloner_free(vx_cb_cloner *c) {
    vx_ve_free(c->ve);
    vx_s3tok_free(c->tok);
    vx_campplus_free(c->cam);
    memset(c, 0, sizeof *c);
}

/* Fill a [1, ...] float / token field (data is taken over). */
static void set_f32(vx_cb_f32 *f, float *data, int ndim, const int64_t *shape) {
    f->data = data;
    f->ndim = ndim;
    f->n = 1;
    for (int i = 0; i < ndim; i++) {
        f->shape[i] = shape[i];
        f->n *= (size_t)shape[i];
    }
}

static void set_i64(vx_cb_i64 *f, int64_t *data, int64_t len) {
    f->data = data;
    f->ndim = 2;
    f->shape[0] = 1;
    f->shape[1] = len;
    f->n = (size_t)len;
}

vocis_status vx_cb_clone(const vx_cb_cloner *c, const float *wav24, int64_t n, float exaggeration, vx_cb_conds *out,
                         vx_clone_timing *timing, char *warning, size_t wcap, int nthreads, vx_err *err) {
    memset(out, 0, sizeof *out);
    if (warning && wcap) warning[0] = '\0';
    vx_clone_timing tm = {0};
    const double seconds = (double)n / VX_CLONE_SR;
    if (n < (int64_t)(VX_CLONE_MIN_SECONDS * VX_CLONE_SR))
        return vx_fail(err, VOCIS_E_INVALID,
                       "reference audio is too short: %.2g s (at least %.1f s is needed; upstream recommends %.0f s "
                       "or more)",
                       seconds, VX_CLONE_MIN_SECONDS, VX_CLONE_ADVISED_SECONDS);
    float peak = 0.0f;
    for (int64_t i = 0; i < n; i++) peak = fmaxf(peak, fabsf(wav24[i]));
    if (peak < 1.0f / 32768.0f)
        return vx_fail(err, VOCIS_E_INVALID, "reference audio is silent (peak %.2g): nothing to clone", peak);
    if (!isfinite(exaggeration))
        return vx_fail(err, VOCIS_E_ARG, "exaggeration must be a finite number");
    if (warning && wcap && seconds < VX_CLONE_ADVISED_SECONDS)
        snprintf(warning, wcap, "the reference is %.1f s long; upstream recommends at least %.0f s for a good clone",
                 seconds, VX_CLONE_ADVISED_SECONDS);

    const double t0 = vx_now_s();
    float *ref16 = NULL, *emb = NULL, *mel = NULL, *r16 = NULL, *xvec = NULL, *ex = NULL;
    int64_t *t3tok = NULL, *ptok = NULL;
    int64_t n16 = 0, nt3 = 0, nmel = 0, nr16 = 0, np = 0;
    vocis_status st;
    double t = vx_now_s();
    /* librosa.resample of the whole (read) reference: T3 prompt and voice encoder */
    if (c->ve && (st = vx_audio_resample(wav24, n, VX_CLONE_SR, VX_CLONE_SR16, &ref16, &n16, err))) goto done;
    /* S3Gen's copy: the first 10 s, resampled by torchaudio */
    const int64_t n24 = n < VX_CLONE_S3GEN_SECONDS * VX_CLONE_SR ? n : VX_CLONE_S3GEN_SECONDS * VX_CLONE_SR;
    if ((st = vx_resample_sinc(wav24, n24, VX_CLONE_SR, VX_CLONE_SR16, &r16, &nr16, nthreads, err))) goto done;
    tm.resample = vx_now_s() - t;

    if (c->ve) { /* the T3 half */
        t = vx_now_s();
        if (!(emb = vx_malloc(err, sizeof(float) * (size_t)c->ve->emb, "speaker embedding"))) {
            st = VOCIS_E_NOMEM;
            goto done;
        }
        if ((st = vx_ve_embed(c->ve, ref16, n16, emb, NULL, nthreads, err))) goto done;
        tm.voice_encoder = vx_now_s() - t;

        t = vx_now_s();
        const int64_t t3n = (int64_t)(c->t3_seconds > 0 ? c->t3_seconds : VX_CLONE_T3_SECONDS) * VX_CLONE_SR16;
        const int64_t n16_t3 = n16 < t3n ? n16 : t3n;
        if ((st = vx_s3tok_tokenize(c->tok, ref16, n16_t3, c->t3_prompt_len, &t3tok, &nt3, nthreads, err)))
            goto done;
        tm.t3_tokens = vx_now_s() - t;
    }

    t = vx_now_s();
    if ((st = vx_ref_mel(wav24, n24, &mel, &nmel, nthreads, err))) goto done;
    tm.ref_mel = vx_now_s() - t;

    t = vx_now_s();
    const int64_t xdim = vx_campplus_emb_dim(c->cam);
    if (!(xvec = vx_malloc(err, sizeof(float) * (size_t)xdim, "x-vector"))) {
        st = VOCIS_E_NOMEM;
        goto done;
    }
    if ((st = vx_campplus_embed(c->cam, r16, nr16, xvec, NULL, NULL, nthreads, err))) goto done;
    tm.campplus = vx_now_s() - t;

    t = vx_now_s();
    if ((st = vx_s3tok_tokenize(c->tok, r16, nr16, 0, &ptok, &np, nthreads, err))) goto done;
    tm.s3gen_tokens = vx_now_s() - t;
    tm.total = vx_now_s() - t0;

    if (!(ex = vx_malloc(err, sizeof(float), "emotion_adv"))) {
        st = VOCIS_E_NOMEM;
        goto done;
    }
    ex[0] = exaggeration;
    if (c->ve) {
        set_f32(&out->speaker_emb, emb, 2, (const int64_t[]){1, c->ve->emb});
        set_i64(&out->cond_prompt_speech_tokens, t3tok, nt3);
    } else {
        out->no_t3 = 1;
    }
    set_f32(&out->emotion_adv, ex, 3, (const int64_t[]){1, 1, 1});
    out->has_gen = 1;
    const int64_t keep = vx_s3tok_s3gen_prompt_len(np, nmel);
    set_i64(&out->prompt_token, ptok, keep);
    out->prompt_token_len = keep;
    set_f32(&out->prompt_feat, mel, 3, (const int64_t[]){1, nmel, VX_REF_MEL_BINS});
    set_f32(&out->embedding, xvec, 2, (const int64_t[]){1, xdim});
    emb = ex = mel = xvec = NULL;
    t3tok = ptok = NULL;
    if (timing) *timing = tm;
done:
    free(ref16);
    free(r16);
    free(emb);
    free(ex);
    free(mel);
    free(xvec);
    free(t3tok);
    free(ptok);
    if (st) vx_errctx(err, "voice cloning");
    return st;
}
