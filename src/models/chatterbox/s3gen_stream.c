/* Streaming S3Gen (see s3gen_stream.h). */
#include "models/chatterbox/s3gen_stream.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/rng.h"
#include "base/threads.h"
#include "kernels/ops_extra.h"
#include "models/chatterbox/s3gen_meanflow.h"

#define CACHE_SAMPLES (VX_S3GEN_STREAM_MEL_CACHE * VX_HIFT_HOP)

struct vx_s3gen_stream {
    vx_s3gen_stream_cfg c;
    int64_t M, lookahead, held; /* mel bins; pre-lookahead tokens; their mel frames */
    vx_rng rng;
    int64_t *tokens;
    int64_t n, cap;
    int64_t offset, hop; /* tokens whose mel went to HiFT; tokens of the next chunk */
    int64_t mel_done;    /* speech mel frames that went to HiFT */
    float *noise;        /* [noise_len][M] time-major: frame i's noise, the same in every flow run */
    int64_t noise_len;
    /* HiFT cache of the previous chunk: its last mel frames [M][cache_frames], source and speech tails */
    float cache_mel[80 * VX_S3GEN_STREAM_MEL_CACHE];
    float cache_src[CACHE_SAMPLES], cache_speech[CACHE_SAMPLES];
    int64_t cache_frames;
    int64_t emitted, keep;           /* samples to the sink; cap (-1: none) */
    int chunks;
    double t_flow, t_hift;
    float *kept_mel; /* keep_mel: [kept_frames][M] */
    int64_t kept_frames;
};

vocis_status vx_s3gen_stream_new(const vx_s3gen_stream_cfg *cfg, vx_s3gen_stream **out, vx_err *err) {
    *out = NULL;
    const vx_s3gen_flow_dims *d = vx_s3gen_flow_get_dims(cfg->flow);
    if (cfg->first_tokens < 1) return vx_fail(err, VOCIS_E_ARG, "streaming: the first chunk needs at least 1 token");
    if (d->n_mels > 80) return vx_fail(err, VOCIS_E_UNSUPPORTED, "streaming: %lld mel bins (80 expected)", (long long)d->n_mels);
    if (!cfg->sink) return vx_fail(err, VOCIS_E_ARG, "streaming: no audio sink");
    vx_s3gen_stream *s = vx_calloc(err, 1, sizeof *s, "s3gen stream");
    if (!s) return err->code;
    s->c = *cfg;
    if (s->c.max_hop <= 0) s->c.max_hop = VX_S3GEN_STREAM_MAX_HOP;
    if (s->c.max_hop < s->c.first_tokens) s->c.max_hop = s->c.first_tokens;
    if (s->c.cfm_steps <= 0) s->c.cfm_steps = d->meanflow ? 2 : 10;
    s->M = d->n_mels;
    s->lookahead = d->lookahead;
    s->held = vx_s3gen_flow_held_frames(cfg->flow);
    s->hop = cfg->first_tokens;
    s->keep = -1;
    vx_rng_seed(&s->rng, cfg->seed);
    *out = s;
    return VOCIS_OK;
}

void vx_s3gen_stream_free(vx_s3gen_stream *s) {
    if (!s) return;
    free(s->tokens), free(s->noise), free(s->kept_mel);
    free(s);
}

/* The noise of frames [0, L) drawn (time-major, frame by frame as they first appear). */
static vocis_status need_noise(vx_s3gen_stream *s, int64_t L, vx_err *err) {
    if (L <= s->noise_len) return VOCIS_OK;
    float *p = realloc(s->noise, sizeof(float) * (size_t)(L * s->M));
    if (!p) return vx_fail(err, VOCIS_E_NOMEM, "out of memory (stream noise)");
    s->noise = p;
    vx_rng_randn(&s->rng, p + s->noise_len * s->M, (size_t)((L - s->noise_len) * s->M));
    s->noise_len = L;
    return VOCIS_OK;
}

vocis_status vx_s3gen_stream_noise(vx_s3gen_stream *s, int64_t L, float **z, vx_err *err) {
    *z = NULL;
    VX_TRY(need_noise(s, L, err));
    float *t = vx_malloc(err, sizeof(float) * (size_t)(L * s->M), "stream noise");
    if (!t) return err->code;
    vx_transpose(t, s->noise, L, s->M); /* [L][M] -> [M][L] */
    *z = t;
    return VOCIS_OK;
}

/* Flow over prompt + tokens[0, n) of s with the initial noise of `noise` (s, or another stream):
 * finalize=False when hold; mel [M][tm] channel-major. */
static vocis_status flow_mel(vx_s3gen_stream *s, vx_s3gen_stream *noise, int64_t n, int hold, float **mel,
                             int64_t *tm, vx_err *err) {
    const vx_s3gen_stream_cfg *c = &s->c;
    const vx_s3gen_flow_dims *d = vx_s3gen_flow_get_dims(c->flow);
    const int64_t L = d->up_stride * (c->np + n) - (hold ? s->held : 0), S = L - d->up_stride * c->np;
    float *z = NULL, *noised = NULL;
    VX_TRY(vx_s3gen_stream_noise(noise, L, &z, err));
    vocis_status st;
    const double t0 = vx_now_s();
    if (d->meanflow) { /* the speech part of z is noised_mels: hand both from the same frames */
        noised = vx_malloc(err, sizeof(float) * (size_t)((S > 0 ? S : 1) * s->M), "stream noise");
        if (!noised) {
            free(z);
            return err->code;
        }
        for (int64_t ch = 0; S > 0 && ch < s->M; ch++)
            memcpy(noised + ch * S, z + ch * L + (L - S), sizeof(float) * (size_t)S);
        const vx_meanflow_req rq = {.speech_tokens = s->tokens, .n = n, .prompt_tokens = c->prompt_tokens,
                                    .np = c->np, .prompt_feat = c->prompt_feat, .tp = c->tp,
                                    .embedding = c->embedding, .n_steps = c->cfm_steps, .noised_mels = noised,
                                    .z = z, .nthreads = c->nthreads, .hold_lookahead = hold};
        st = vx_s3gen_meanflow_run(c->flow, &rq, mel, tm, err);
    } else {
        const vx_s3gen_flow_req rq = {.speech_tokens = s->tokens, .n = n, .prompt_tokens = c->prompt_tokens,
                                      .np = c->np, .prompt_feat = c->prompt_feat, .tp = c->tp,
                                      .embedding = c->embedding, .n_steps = c->cfm_steps, .cfg_rate = 0.7f, .z = z,
                                      .nthreads = c->nthreads, .hold_lookahead = hold};
        st = vx_s3gen_flow_run(c->flow, &rq, mel, tm, err);
    }
    s->t_flow += vx_now_s() - t0;
    free(z), free(noised);
    return st;
}

static vocis_status keep_mel(vx_s3gen_stream *s, const float *mel, int64_t tm, int64_t from, vx_err *err) {
    const int64_t k = tm - from;
    float *p = realloc(s->kept_mel, sizeof(float) * (size_t)((s->kept_frames + k) * s->M));
    if (!p) return vx_fail(err, VOCIS_E_NOMEM, "out of memory (stream mel)");
    s->kept_mel = p;
    for (int64_t t = 0; t < k; t++)
        for (int64_t ch = 0; ch < s->M; ch++) p[(s->kept_frames + t) * s->M + ch] = mel[ch * tm + from + t];
    s->kept_frames += k;
    return VOCIS_OK;
}

/* HiFT.inference with cache_source: wav and source [480 · tm] from mel [M][tm]; the first n_cache
 * source samples are the previous chunk's. Draws as vx_hift_vocode (phases, sine noise, unused noise). */
static vocis_status hift_cached(vx_s3gen_stream *s, const float *mel, int64_t tm, const float *cache_src,
                                int64_t n_cache, float *wav, float *src, vx_err *err) {
    const vx_hift *h = s->c.hift;
    const int64_t tw = tm * VX_HIFT_HOP;
    float *f0 = vx_malloc(err, sizeof(float) * (size_t)tm, "HiFT f0");
    float *noise = vx_malloc(err, sizeof(float) * (size_t)(VX_HIFT_NB_HARM * tw), "HiFT sine noise");
    vocis_status st = VOCIS_E_NOMEM;
    float phase[VX_HIFT_NB_HARM];
    if (!f0 || !noise) {
        st = err->code ? err->code : VOCIS_E_NOMEM;
        goto done;
    }
    if ((st = vx_hift_f0(h, mel, tm, f0, s->c.nthreads, err))) goto done;
    vx_rng_uniform(&s->rng, phase, VX_HIFT_NB_HARM, (float)-M_PI, (float)M_PI);
    phase[0] = 0.0f;
    vx_rng_randn(&s->rng, noise, (size_t)(VX_HIFT_NB_HARM * tw));
    vx_rng_randn(&s->rng, wav, (size_t)tw); /* SourceModuleHnNSF's noise branch: drawn, unused */
    vx_hift_source(h, f0, tm, phase, noise, src, s->c.nthreads);
    if (n_cache > 0) memcpy(src, cache_src, sizeof(float) * (size_t)n_cache);
    st = vx_hift_decode(h, mel, tm, src, wav, NULL, NULL, s->c.nthreads, err);
done:
    free(f0), free(noise);
    return st;
}

static vocis_status emit(vx_s3gen_stream *s, const float *wav, int64_t n, vx_err *err) {
    if (s->keep >= 0 && s->emitted + n > s->keep) n = s->keep > s->emitted ? s->keep - s->emitted : 0;
    if (n <= 0) return VOCIS_OK;
    if (s->c.sink(s->c.user, wav, n)) return vx_fail(err, VOCIS_E_CANCELLED, "synthesis cancelled");
    s->emitted += n;
    return VOCIS_OK;
}

/* One chunk: flow over tokens[0, n) (finalize = !hold), the new mel frames through HiFT, the audio
 * that is final to the sink. */
static vocis_status run_chunk(vx_s3gen_stream *s, int64_t n, int hold, vx_err *err) {
    const int64_t M = s->M;
    float *mel = NULL, *in = NULL, *wav = NULL, *src = NULL;
    int64_t tm = 0;
    VX_TRY(flow_mel(s, s, n, hold, &mel, &tm, err));
    vocis_status st = VOCIS_OK;
    const int64_t fresh = tm - s->mel_done;
    if (fresh <= 0) goto done; /* nothing new (cannot happen with the hop schedule; kept safe) */
    if (s->c.keep_mel && (st = keep_mel(s, mel, tm, s->mel_done, err))) goto done;
    /* HiFT input: [cached frames | new frames]   [M][cf + fresh] */
    const int64_t cf = s->cache_frames, tin = cf + fresh, tw = tin * VX_HIFT_HOP, nc = cf * VX_HIFT_HOP;
    in = vx_malloc(err, sizeof(float) * (size_t)(M * tin), "stream mel");
    wav = vx_malloc(err, sizeof(float) * (size_t)tw, "stream audio");
    src = vx_malloc(err, sizeof(float) * (size_t)tw, "stream source");
    if (!in || !wav || !src) {
        st = err->code;
        goto done;
    }
    for (int64_t ch = 0; ch < M; ch++) {
        memcpy(in + ch * tin, s->cache_mel + ch * cf, sizeof(float) * (size_t)cf);
        memcpy(in + ch * tin + cf, mel + ch * tm + s->mel_done, sizeof(float) * (size_t)fresh);
    }
    const double t0 = vx_now_s();
    st = hift_cached(s, in, tin, s->cache_src, nc, wav, src, err);
    s->t_hift += vx_now_s() - t0;
    if (st) goto done;
    s->mel_done = tm;
    s->chunks++;
    if (s->emitted == 0 && cf == 0) vx_trim_fade(wav, tw); /* S3Token2Wav's trim_fade, on the first samples */
    /* fade_in_out with np.hamming(2 nc): the new start fades in (first half), the held tail out */
    for (int64_t i = 0; i < nc; i++) {
        const double a = 2.0 * M_PI / (double)(2 * nc - 1);
        const float w_in = (float)(0.54 - 0.46 * cos(a * (double)i)), w_out = (float)(0.54 - 0.46 * cos(a * (double)(nc + i)));
        wav[i] = wav[i] * w_in + s->cache_speech[i] * w_out;
    }
    if (!hold) {
        st = emit(s, wav, tw, err);
        goto done;
    }
    /* hold the last frames for the next chunk (at most half of a short first chunk, which then still speaks) */
    const int64_t keep_f = tin / 2 < VX_S3GEN_STREAM_MEL_CACHE ? (tin + 1) / 2 : VX_S3GEN_STREAM_MEL_CACHE,
                  ks = keep_f * VX_HIFT_HOP;
    for (int64_t ch = 0; ch < M; ch++) memcpy(s->cache_mel + ch * keep_f, in + ch * tin + tin - keep_f, sizeof(float) * (size_t)keep_f);
    memcpy(s->cache_src, src + tw - ks, sizeof(float) * (size_t)ks);
    memcpy(s->cache_speech, wav + tw - ks, sizeof(float) * (size_t)ks);
    s->cache_frames = keep_f;
    st = emit(s, wav, tw - ks, err);
done:
    free(mel), free(in), free(wav), free(src);
    return st;
}

static vocis_status append(vx_s3gen_stream *s, int64_t tok, vx_err *err) {
    if (s->n == s->cap) {
        const int64_t cap = s->cap ? 2 * s->cap : 256;
        int64_t *p = realloc(s->tokens, sizeof(int64_t) * (size_t)cap);
        if (!p) return vx_fail(err, VOCIS_E_NOMEM, "out of memory (stream tokens)");
        s->tokens = p;
        s->cap = cap;
    }
    s->tokens[s->n++] = tok;
    return VOCIS_OK;
}

vocis_status vx_s3gen_stream_push(vx_s3gen_stream *s, int32_t token, vx_err *err) {
    if (token < 0 || token >= s->c.valid_below) return VOCIS_OK;
    VX_TRY(append(s, token, err));
    if (s->n - s->offset < s->hop + s->lookahead) return VOCIS_OK;
    VX_TRY(run_chunk(s, s->offset + s->hop + s->lookahead, 1, err));
    s->offset += s->hop;
    s->hop = 2 * s->hop < s->c.max_hop ? 2 * s->hop : s->c.max_hop; /* CosyVoice2's stream_scale_factor 2 */
    return VOCIS_OK;
}

vocis_status vx_s3gen_stream_finish(vx_s3gen_stream *s, const int64_t *tail, int ntail, int64_t keep_samples,
                                    vx_err *err) {
    if (s->n + ntail == 0) return vx_fail(err, VOCIS_E_ARG, "streaming: no speech tokens to synthesise");
    for (int i = 0; i < ntail; i++) VX_TRY(append(s, tail[i], err));
    s->keep = keep_samples;
    return run_chunk(s, s->n, 0, err);
}

int64_t vx_s3gen_stream_tokens(const vx_s3gen_stream *s) { return s->n; }
int vx_s3gen_stream_chunks(const vx_s3gen_stream *s) { return s->chunks; }
int64_t vx_s3gen_stream_samples(const vx_s3gen_stream *s) { return s->emitted; }

void vx_s3gen_stream_times(const vx_s3gen_stream *s, double *t_flow, double *t_hift) {
    *t_flow = s->t_flow;
    *t_hift = s->t_hift;
}

const int64_t *vx_s3gen_stream_token_list(const vx_s3gen_stream *s, int64_t *n) {
    *n = s->n;
    return s->tokens;
}

const float *vx_s3gen_stream_mel(const vx_s3gen_stream *s, int64_t *frames) {
    *frames = s->kept_frames;
    return s->kept_mel;
}

vocis_status vx_s3gen_stream_whole_snr_db(vx_s3gen_stream *s, vx_s3gen_stream *noise, double *snr, vx_err *err) {
    *snr = NAN;
    if (!s->kept_mel) return vx_fail(err, VOCIS_E_ARG, "streaming: the mel was not kept (keep_mel)");
    float *whole = NULL;
    int64_t tm = 0;
    double t_flow = s->t_flow; /* not the stream's own work */
    vocis_status st = flow_mel(s, noise ? noise : s, s->n, 0, &whole, &tm, err);
    s->t_flow = t_flow;
    if (st) return st;
    if (tm != s->kept_frames)
        st = vx_fail(err, VOCIS_E_INTERNAL, "streamed %lld mel frames, the whole path %lld", (long long)s->kept_frames,
                     (long long)tm);
    double sig = 0, diff = 0;
    for (int64_t t = 0; !st && t < tm; t++)
        for (int64_t ch = 0; ch < s->M; ch++) {
            const double w = whole[ch * tm + t], e = s->kept_mel[t * s->M + ch] - w;
            sig += w * w;
            diff += e * e;
        }
    if (!st) *snr = diff > 0 ? 10.0 * log10(sig / diff) : INFINITY;
    free(whole);
    return st;
}
