/* Debug stages of the σ-VAE tokenizers (goldens 02, 03, 04).
 *
 * vv-acoustic-encoder: input_audio [B, L] -> mean [B, F, vae_dim]; downsample_k_out, stage_k_out,
 *                     head_out [1, C, T'] of row 0 (time prefix: the length of the same-named tensor
 *                     of --in when it has one, else min(T, ceil(T·2·hop / L) + 1), the golden's
 *                     "first 2 frames" prefix); with sample_std_noise [B] and sample_noise
 *                     [B, F, vae_dim] also sample_std [B] and sampled [B, F, vae_dim].
 * vv-acoustic-decoder: latents [1, F, vae_dim] (or [1, vae_dim, F]: upstream's decode() takes
 *                     dim 1 == vae_dim as channel-first) -> audio_whole, audio_streaming [1, 1, F·hop]
 * vv-semantic-encoder: input_audio [L] (or [1, L]) -> features_whole [1, F, sem_dim], and for L a
 *                     multiple of hop features_streaming [1, F, sem_dim] (hop-sized chunks; omitted
 *                     otherwise, as upstream streams whole frames only). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/stages.h"
#include "models/vibevoice/lm.h"
#include "models/vibevoice/vae.h"

typedef struct model {
    vx_vv_config cfg;
    vx_weights *w;
    vx_vv_vae *vae;
} model;

static vocis_status open_model(const vx_stage_args *a, int semantic, int with_decoder, model *m, vx_err *err) {
    memset(m, 0, sizeof *m);
    VX_TRY(vx_stage_no_options(a, err));
    VX_TRY(vx_vv_config_load(a->model_dir, &m->cfg, err));
    const vx_vv_tokenizer_config *tc = semantic ? &m->cfg.semantic : &m->cfg.acoustic;
    if (!tc->present)
        return vx_fail(err, VOCIS_E_UNSUPPORTED, "%s: the model has no %s tokenizer", m->cfg.path,
                       semantic ? "semantic" : "acoustic");
    VX_TRY(vx_vv_weights_open(a->model_dir, &m->w, err));
    vx_weights_set_precision(m->w, a->precision);
    vocis_status st = vx_vv_vae_load(m->w, semantic ? "model.semantic_tokenizer." : "model.acoustic_tokenizer.", tc,
                                     with_decoder, &m->vae, err);
    if (st != VOCIS_OK) {
        vx_weights_close(m->w);
        m->w = NULL;
    }
    return st;
}

static void close_model(model *m) {
    vx_vv_vae_free(m->vae);
    vx_weights_close(m->w);
}

typedef struct keep_ctx {
    const vx_st_file *in;
    int64_t L, hop;
} keep_ctx;

static int64_t keep_prefix(void *ctx, const char *name, int64_t T) {
    const keep_ctx *k = ctx;
    const vx_tensor *t = k->in ? vx_st_find(k->in, name) : NULL;
    if (t && t->ndim == 3 && t->shape[2] <= T) return t->shape[2];
    int64_t n = (T * 2 * k->hop + k->L - 1) / k->L + 1;
    return n < T ? n : T;
}

vocis_status vx_stage_vv_acoustic_encode(const vx_stage_args *a, vx_err *err) {
    model m;
    VX_TRY(open_model(a, 0, VX_VV_VAE_ENCODER, &m, err));
    float *audio = NULL, *mean = NULL, *sn = NULL, *noise = NULL, *sampled = NULL, *sstd = NULL;
    vx_tensor t;
    vocis_status st = vx_stage_in_f32(a, "input_audio", VX_DIMS(-1, -1), &audio, &t, err);
    if (st) goto done;
    const int64_t B = t.shape[0], L = t.shape[1], hop = vx_vv_vae_hop(m.vae), vd = vx_vv_vae_dim(m.vae);
    if (B < 1 || L < 1) {
        st = vx_fail(err, VOCIS_E_INVALID, "%s: input_audio [%lld, %lld] is empty", vx_st_path(a->in),
                     (long long)B, (long long)L);
        goto done;
    }
    const int64_t F = (L + hop - 1) / hop;
    if (!(mean = vx_malloc(err, sizeof(float) * (size_t)(B * F * vd), "mean"))) {
        st = VOCIS_E_NOMEM;
        goto done;
    }
    keep_ctx kc = {a->in, L, hop};
    vx_vv_vae_probe pr = {a->out, keep_prefix, &kc};
    if ((st = vx_vv_vae_encode(m.vae, audio, B, L, mean, a->nthreads, &pr, err))) goto done;
    if ((st = vx_stage_out_f32(a, "mean", VX_DIMS(B, F, vd), mean, err))) goto done;
    if (vx_st_find(a->in, "sample_std_noise") || vx_st_find(a->in, "sample_noise")) {
        if ((st = vx_stage_in_f32(a, "sample_std_noise", VX_DIMS(B), &sn, NULL, err))) goto done;
        if ((st = vx_stage_in_f32(a, "sample_noise", VX_DIMS(B, F, vd), &noise, NULL, err))) goto done;
        sampled = vx_malloc(err, sizeof(float) * (size_t)(B * F * vd), "sampled");
        sstd = vx_malloc(err, sizeof(float) * (size_t)B, "sample_std");
        if (!sampled || !sstd) {
            st = VOCIS_E_NOMEM;
            goto done;
        }
        vx_vv_vae_sample(&m.cfg.acoustic, mean, B, F * vd, sn, noise, sampled, sstd);
        if ((st = vx_stage_out_f32(a, "sample_std", VX_DIMS(B), sstd, err))) goto done;
        if ((st = vx_stage_out_f32(a, "sampled", VX_DIMS(B, F, vd), sampled, err))) goto done;
    }
done:
    free(audio), free(mean), free(sn), free(noise), free(sampled), free(sstd);
    close_model(&m);
    return st;
}

vocis_status vx_stage_vv_acoustic_decode(const vx_stage_args *a, vx_err *err) {
    model m;
    VX_TRY(open_model(a, 0, VX_VV_VAE_DECODER, &m, err));
    float *lat = NULL, *tm = NULL, *whole = NULL, *strm = NULL;
    vx_vv_vae_stream *s = NULL;
    vx_tensor t;
    vocis_status st = vx_stage_in_f32(a, "latents", VX_DIMS(1, -1, -1), &lat, &t, err);
    if (st) goto done;
    const int64_t hop = vx_vv_vae_hop(m.vae), vd = vx_vv_vae_dim(m.vae);
    /* upstream decode(): channel-first when shape[1] == vae_dim, else channel-last */
    const int cf = t.shape[1] == vd;
    const int64_t F = cf ? t.shape[2] : t.shape[1];
    if (!cf && t.shape[2] != vd) {
        st = vx_fail(err, VOCIS_E_SHAPE, "%s: latents [1, %lld, %lld]: expected [1, F, %lld] (or [1, %lld, F])",
                     vx_st_path(a->in), (long long)t.shape[1], (long long)t.shape[2], (long long)vd, (long long)vd);
        goto done;
    }
    if (F < 1) {
        st = vx_fail(err, VOCIS_E_INVALID, "%s: latents has no frames", vx_st_path(a->in));
        goto done;
    }
    tm = vx_malloc(err, sizeof(float) * (size_t)(F * vd), "latents");
    whole = vx_malloc(err, sizeof(float) * (size_t)(F * hop), "audio_whole");
    strm = vx_malloc(err, sizeof(float) * (size_t)(F * hop), "audio_streaming");
    if (!tm || !whole || !strm) {
        st = VOCIS_E_NOMEM;
        goto done;
    }
    for (int64_t f = 0; f < F; f++)
        for (int64_t c = 0; c < vd; c++) tm[f * vd + c] = cf ? lat[c * F + f] : lat[f * vd + c];
    if ((st = vx_vv_vae_decode(m.vae, tm, F, whole, a->nthreads, err))) goto done;
    if ((st = vx_vv_vae_stream_new(m.vae, &s, err))) goto done;
    for (int64_t f = 0; f < F; f++)
        if ((st = vx_vv_vae_decode_step(m.vae, s, tm + f * vd, strm + f * hop, a->nthreads, err))) goto done;
    if ((st = vx_stage_out_f32(a, "audio_whole", VX_DIMS(1, 1, F * hop), whole, err))) goto done;
    st = vx_stage_out_f32(a, "audio_streaming", VX_DIMS(1, 1, F * hop), strm, err);
done:
    vx_vv_vae_stream_free(s);
    free(lat), free(tm), free(whole), free(strm);
    close_model(&m);
    return st;
}

vocis_status vx_stage_vv_semantic_encode(const vx_stage_args *a, vx_err *err) {
    model m;
    VX_TRY(open_model(a, 1, VX_VV_VAE_ENCODER, &m, err));
    float *audio = NULL, *whole = NULL, *strm = NULL;
    vx_vv_vae_stream *s = NULL;
    int64_t L = 0;
    vocis_status st = vx_stage_in_wave(a, "input_audio", &audio, &L, err);
    if (st) goto done;
    const int64_t hop = vx_vv_vae_hop(m.vae), vd = vx_vv_vae_dim(m.vae), F = (L + hop - 1) / hop;
    whole = vx_malloc(err, sizeof(float) * (size_t)(F * vd), "features_whole");
    strm = vx_malloc(err, sizeof(float) * (size_t)(F * vd), "features_streaming");
    if (!whole || !strm) {
        st = VOCIS_E_NOMEM;
        goto done;
    }
    if ((st = vx_vv_vae_encode(m.vae, audio, 1, L, whole, a->nthreads, NULL, err))) goto done;
    if ((st = vx_stage_out_f32(a, "features_whole", VX_DIMS(1, F, vd), whole, err))) goto done;
    if (L % hop) goto done; /* streaming feeds whole frames only */
    if ((st = vx_vv_vae_stream_new(m.vae, &s, err))) goto done;
    for (int64_t f = 0; f < F; f++)
        if ((st = vx_vv_vae_encode_step(m.vae, s, audio + f * hop, strm + f * vd, a->nthreads, err))) goto done;
    st = vx_stage_out_f32(a, "features_streaming", VX_DIMS(1, F, vd), strm, err);
done:
    vx_vv_vae_stream_free(s);
    free(audio), free(whole), free(strm);
    close_model(&m);
    return st;
}
