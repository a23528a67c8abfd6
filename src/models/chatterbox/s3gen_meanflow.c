/* S3Gen MeanFlow token -> mel (Turbo / Nano): see s3gen_meanflow.h. */
#include "models/chatterbox/s3gen_meanflow.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/threads.h"
#include "kernels/ops_extra.h"
#include "models/chatterbox/s3gen_flow_impl.h"

static vocis_status put(vx_st_writer *w, const char *name, int ndim, const int64_t *shape, const float *x,
                        vx_err *err) {
    return vx_st_writer_add(w, name, VX_F32, ndim, shape, x, err);
}

/* [L][C] time-major -> [1][C][L] */
static vocis_status put_cm(vx_st_writer *w, const char *name, const float *x, int64_t L, int64_t C, vx_err *err) {
    float *t = vx_malloc(err, sizeof(float) * (size_t)(L * C), name);
    if (!t) return err->code;
    vx_transpose(t, x, L, C);
    vocis_status st = put(w, name, VX_DIMS(1, C, L), t, err);
    free(t);
    return st;
}

vocis_status vx_s3gen_meanflow_run(const vx_s3gen_flow *f, const vx_meanflow_req *rq, float **mel, int64_t *tm,
                                   vx_err *err) {
    const vx_s3gen_flow_dims *d = vx_s3gen_flow_get_dims(f);
    *mel = NULL;
    *tm = 0;
    if (!d->meanflow) return vx_fail(err, VOCIS_E_ARG, "s3gen: these weights have no MeanFlow time_embed_mixer");
    if (rq->n <= 0 || !rq->speech_tokens) return vx_fail(err, VOCIS_E_ARG, "s3gen flow: no speech tokens");
    if (rq->np < 0 || (rq->np > 0 && !rq->prompt_tokens) || rq->tp < 0 || (rq->tp > 0 && !rq->prompt_feat) ||
        !rq->embedding)
        return vx_fail(err, VOCIS_E_ARG, "s3gen flow: missing prompt tokens, prompt mel or speaker embedding");
    if ((!rq->noised_mels || !rq->z) && !rq->rng)
        return vx_fail(err, VOCIS_E_ARG, "s3gen flow: neither the noise nor a generator");
    const int steps = rq->n_steps > 0 ? rq->n_steps : 2;
    const int nth = rq->nthreads > 0 ? rq->nthreads : 1;
    const int64_t held = rq->hold_lookahead ? vx_s3gen_flow_held_frames(f) : 0; /* finalize=False */
    const int64_t T = rq->np + rq->n, Lenc = d->up_stride * T, L = Lenc - held, M = d->n_mels, E = d->enc_dim,
                  S = d->up_stride * rq->n - held;
    for (int64_t i = 0; i < rq->n; i++)
        if (rq->speech_tokens[i] < 0 || rq->speech_tokens[i] >= d->vocab)
            return vx_fail(err, VOCIS_E_ARG, "s3gen flow: speech token %lld outside [0, %lld)",
                           (long long)rq->speech_tokens[i], (long long)d->vocab);
    for (int64_t i = 0; i < rq->np; i++)
        if (rq->prompt_tokens[i] < 0 || rq->prompt_tokens[i] >= d->vocab)
            return vx_fail(err, VOCIS_E_ARG, "s3gen flow: prompt token %lld outside [0, %lld)",
                           (long long)rq->prompt_tokens[i], (long long)d->vocab);
    if (rq->tp >= L || S < 1)
        return vx_fail(err, VOCIS_E_ARG, "s3gen flow: prompt mel of %lld frames is not shorter than the %lld frames "
                       "of prompt + speech tokens", (long long)rq->tp, (long long)L);
    vx_st_writer *dbg = rq->debug;
    vocis_status st = VOCIS_OK;
    int64_t *tokens = NULL;
    float *noised = NULL, *spk = NULL, *h = NULL, *emb = NULL, *mu = NULL, *cond = NULL, *z = NULL, *x = NULL,
          *v = NULL, *out = NULL, *ones = NULL, *tmp = NULL;
    cfm_ws *ws = NULL;
#define ALLOC(p, n)                                                                                                    \
    do {                                                                                                           \
        if (!(p = vx_calloc(err, (size_t)(n), sizeof *p, "s3gen meanflow"))) {                                     \
            st = err->code;                                                                                        \
            goto done;                                                                                             \
        }                                                                                                          \
    } while (0)
#define TRY(e)                                                                                                         \
    do {                                                                                                           \
        if ((st = (e)) != VOCIS_OK) goto done;                                                                     \
    } while (0)
    /* 1. the first draw: noised_mels = randn(1, 80, 2·n) */
    ALLOC(noised, M * S);
    if (rq->noised_mels) memcpy(noised, rq->noised_mels, sizeof(float) * (size_t)(M * S));
    else vx_rng_randn(rq->rng, noised, (size_t)(M * S));
    if (dbg) TRY(put(dbg, "noised_mels", VX_DIMS(1, M, S), noised, err));

    /* 2. speaker vector, encoder, mu */
    ALLOC(tokens, T);
    for (int64_t i = 0; i < rq->np; i++) tokens[i] = rq->prompt_tokens[i];
    for (int64_t i = 0; i < rq->n; i++) tokens[rq->np + i] = rq->speech_tokens[i];
    ALLOC(spk, M);
    ALLOC(tmp, d->spk_dim);
    {
        float nrm = 0.0f;
        for (int64_t i = 0; i < d->spk_dim; i++) nrm += rq->embedding[i] * rq->embedding[i];
        nrm = sqrtf(nrm);
        if (nrm < 1e-12f) nrm = 1e-12f;
        for (int64_t i = 0; i < d->spk_dim; i++) tmp[i] = rq->embedding[i] / nrm;
        vx_linear(spk, tmp, 1, &f->spk_affine.w, f->spk_affine.b, 1);
    }
    if (dbg) TRY(put(dbg, "spks", VX_DIMS(1, M), spk, err));
    ALLOC(h, Lenc * E);
    if (dbg) ALLOC(emb, T * d->input_size);
    const double t_enc0 = vx_now_s();
    TRY(vx_s3gen_encoder_forward(f, tokens, T, h, emb, nth, err));
    if (dbg) {
        TRY(put(dbg, "token_emb_masked_input", VX_DIMS(1, T, d->input_size), emb, err));
        TRY(put(dbg, "encoder_out", VX_DIMS(1, Lenc, E), h, err));
    }
    ALLOC(mu, L * M);
    vx_linear(mu, h, L, &f->encoder_proj.w, f->encoder_proj.b, nth);
    if (rq->t_encoder) *rq->t_encoder = vx_now_s() - t_enc0;
    if (dbg) TRY(put_cm(dbg, "mu", mu, L, M, err));
    ALLOC(cond, L * M);
    if (rq->tp > 0) memcpy(cond, rq->prompt_feat, sizeof(float) * (size_t)(rq->tp * M));
    if (dbg) {
        TRY(put_cm(dbg, "cond", cond, L, M, err));
        ALLOC(ones, L);
        for (int64_t i = 0; i < L; i++) ones[i] = 1.0f;
        TRY(put(dbg, "mask", VX_DIMS(1, 1, L), ones, err));
    }

    /* 3. the second draw: z = randn_like(mu) [M][L], speech part <- noised_mels */
    ALLOC(z, M * L);
    if (rq->z) memcpy(z, rq->z, sizeof(float) * (size_t)(M * L));
    else vx_rng_randn(rq->rng, z, (size_t)(M * L));
    if (dbg) TRY(put(dbg, "z_randn_like", VX_DIMS(1, M, L), z, err));
    for (int64_t c = 0; c < M; c++) memcpy(z + c * L + (L - S), noised + c * S, sizeof(float) * (size_t)S);
    if (dbg) TRY(put(dbg, "x0", VX_DIMS(1, M, L), z, err));
    ALLOC(x, L * M);
    vx_transpose(x, z, M, L);

    /* 4. Euler on linspace(0, 1, steps + 1) (torch's float32 linspace) */
    float ts[1002];
    if (steps > 1000) {
        st = vx_fail(err, VOCIS_E_ARG, "s3gen flow: at most 1000 steps");
        goto done;
    }
    {
        const float step = 1.0f / (float)steps;
        const int n1 = steps + 1, half = n1 / 2;
        for (int i = 0; i < n1; i++) ts[i] = i < half ? step * (float)i : 1.0f - step * (float)(n1 - i - 1);
    }
    if (dbg) {
        TRY(put(dbg, "t_span", VX_DIMS(steps + 1), ts, err));
        TRY(put(dbg, "est_t", VX_DIMS(steps), ts, err));
        TRY(put(dbg, "est_r", VX_DIMS(steps), ts + 1, err));
    }
    ALLOC(v, L * M);
    TRY(cfm_ws_new(f, L, &ws, err));
    const double t_steps0 = vx_now_s();
    for (int k = 0; k < steps; k++) {
        const float t = ts[k], r = ts[k + 1];
        cfm_ws_set_r(ws, r);
        TRY(cfm_estimator_forward(f, ws, 1, L, x, mu, spk, cond, t, v, nth, k == 0 ? dbg : NULL, "step0", err));
        if (dbg) {
            char name[48];
            snprintf(name, sizeof name, "est_out_step%d", k);
            TRY(put_cm(dbg, name, v, L, M, err));
        }
        const float dt = r - t;
        for (int64_t i = 0; i < L * M; i++) x[i] = x[i] + dt * v[i];
    }
    if (rq->t_steps) *rq->t_steps = vx_now_s() - t_steps0;
    if (dbg) TRY(put_cm(dbg, "basic_euler_out", x, L, M, err));

    /* 5. mel = x[:, tp:] */
    const int64_t tmel = L - rq->tp;
    ALLOC(out, tmel * M);
    vx_transpose(out, x + rq->tp * M, tmel, M);
    if (dbg) TRY(put(dbg, "mel_out", VX_DIMS(1, M, tmel), out, err));
    *mel = out;
    *tm = tmel;
    out = NULL;
done:
#undef ALLOC
#undef TRY
    cfm_ws_free(ws);
    free(tokens), free(noised), free(spk), free(h), free(emb), free(mu), free(cond), free(z), free(x), free(v);
    free(out), free(ones), free(tmp);
    return st;
}
