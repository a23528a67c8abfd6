/* VibeVoice σ-VAE on the thread pool: the whole-sequence encode/decode and
 * the streaming steps give the same bits whatever the thread count (1, 2, 3,
 * 5), on random weights at small dims with chunks long enough that every
 * element-wise loop and depthwise conv is split into several pool chunks;
 * for RMSNorm and LayerNorm tokenizers, exact and bf16 precision. Several
 * streams stepped together (vx_vv_vae_decode_steps / encode_steps, the
 * continuous batching of concurrent requests) give each stream the bits of
 * its own steps. */
#include <stdlib.h>
#include <string.h>

#include "kernels/precision.h"
#include "models/vibevoice/lm.h"
#include "models/vibevoice/vae.h"
#include "testlib.h"

static const int threads[] = {1, 2, 3, 5};
#define NT (int)(sizeof threads / sizeof threads[0])
#define FRAMES 37 /* one whole chunk of 32 frames and a partial one */

/* A small tokenizer: hop 2·3·4·2 = 48, channels 8·2^i, two stages of depth 2. */
static vx_vv_tokenizer_config small_cfg(const char *norm) {
    vx_vv_config c;
    vx_err err = {0};
    memset(&c, 0, sizeof c);
    if (vx_vv_lm_preset("1.5b", &c, &err)) fprintf(stderr, "preset: %s\n", err.msg);
    vx_vv_tokenizer_config t = c.acoustic;
    static const int ratios[4] = {2, 3, 4, 2}, depths[5] = {2, 1, 2, 1, 2};
    t.vae_dim = 16;
    t.enc_n_filters = t.dec_n_filters = 8;
    t.enc_n_ratios = t.dec_n_ratios = 4;
    t.enc_n_depths = t.dec_n_depths = 5;
    memcpy(t.enc_ratios, ratios, sizeof ratios);
    memcpy(t.dec_ratios, ratios, sizeof ratios);
    memcpy(t.enc_depths, depths, sizeof depths);
    for (int i = 0; i < 5; i++) t.dec_depths[i] = depths[4 - i];
    t.hop = 48;
    t.layer_scale_init_value = 0.5f;
    snprintf(t.layernorm, sizeof t.layernorm, "%s", norm);
    return t;
}

/* Outputs of one thread count: whole encode, whole decode, streamed decode then encode of each decoded chunk. */
typedef struct outs {
    float *mean, *audio, *s_audio, *s_mean;
} outs;

static void run_all(const vx_vv_vae *v, int nt, const float *audio, const float *lat, int64_t hop, int64_t vd,
                    outs *o) {
    vx_err err = {0};
    const int64_t L = FRAMES * hop;
    o->mean = calloc((size_t)(FRAMES * vd), sizeof(float));
    o->audio = calloc((size_t)L, sizeof(float));
    o->s_audio = calloc((size_t)L, sizeof(float));
    o->s_mean = calloc((size_t)(FRAMES * vd), sizeof(float));
    CHECK(o->mean && o->audio && o->s_audio && o->s_mean);
    CHECK_MSG(vx_vv_vae_encode(v, audio, 1, L, o->mean, nt, NULL, &err) == VOCIS_OK, "%s", err.msg);
    CHECK_MSG(vx_vv_vae_decode(v, lat, FRAMES, o->audio, nt, &err) == VOCIS_OK, "%s", err.msg);
    vx_vv_vae_stream *s = NULL;
    CHECK_MSG(vx_vv_vae_stream_new(v, &s, &err) == VOCIS_OK, "%s", err.msg);
    for (int f = 0; s && f < FRAMES; f++) {
        CHECK(vx_vv_vae_decode_step(v, s, lat + f * vd, o->s_audio + f * hop, nt, &err) == VOCIS_OK);
        CHECK(vx_vv_vae_encode_step(v, s, o->s_audio + f * hop, o->s_mean + f * vd, nt, &err) == VOCIS_OK);
    }
    vx_vv_vae_stream_free(s);
}

static void outs_free(outs *o) { free(o->mean), free(o->audio), free(o->s_audio), free(o->s_mean); }

static void same_bits(const char *what, const float *a, const float *b, int64_t n, int nt, const char *norm,
                      int prec) {
    CHECK_MSG(memcmp(a, b, sizeof(float) * (size_t)n) == 0, "%s (%s, precision %d): %d threads differ from 1 (max %g)",
              what, norm, prec, nt, tl_max_abs_diff(a, b, (size_t)n));
}

/* NS streams of different latents: decode then encode each frame, alone and all together. */
enum { NS = 3 };
static void check_many(const vx_vv_vae *v, int64_t hop, int64_t vd, const char *norm, int prec, int nt) {
    vx_err err = {0};
    float *lat[NS], *alone_a[NS], *alone_m[NS], *tog_a[NS], *tog_m[NS];
    vx_vv_vae_stream *s[NS] = {0}, *t[NS] = {0};
    for (int i = 0; i < NS; i++) {
        lat[i] = tl_random_floats((size_t)(FRAMES * vd));
        alone_a[i] = calloc((size_t)(FRAMES * hop), sizeof(float)), tog_a[i] = calloc((size_t)(FRAMES * hop), sizeof(float));
        alone_m[i] = calloc((size_t)(FRAMES * vd), sizeof(float)), tog_m[i] = calloc((size_t)(FRAMES * vd), sizeof(float));
        CHECK(vx_vv_vae_stream_new(v, &s[i], &err) == VOCIS_OK && vx_vv_vae_stream_new(v, &t[i], &err) == VOCIS_OK);
    }
    for (int i = 0; i < NS; i++)
        for (int f = 0; f < FRAMES; f++) {
            CHECK(vx_vv_vae_decode_step(v, s[i], lat[i] + f * vd, alone_a[i] + f * hop, nt, &err) == VOCIS_OK);
            CHECK(vx_vv_vae_encode_step(v, s[i], alone_a[i] + f * hop, alone_m[i] + f * vd, nt, &err) == VOCIS_OK);
        }
    for (int f = 0; f < FRAMES; f++) {
        const float *in[NS], *pcm[NS];
        float *out[NS], *mean[NS];
        for (int i = 0; i < NS; i++)
            in[i] = lat[i] + f * vd, out[i] = tog_a[i] + f * hop, pcm[i] = out[i], mean[i] = tog_m[i] + f * vd;
        /* stream 0 sits out every third frame: the batch changes from step to step */
        const int skip = f % 3 == 2;
        if (skip) {
            CHECK(vx_vv_vae_decode_step(v, t[0], in[0], out[0], nt, &err) == VOCIS_OK);
            CHECK(vx_vv_vae_encode_step(v, t[0], pcm[0], mean[0], nt, &err) == VOCIS_OK);
        }
        CHECK_MSG(vx_vv_vae_decode_steps(v, t + skip, NS - skip, in + skip, out + skip, nt, &err) == VOCIS_OK, "%s",
                  err.msg);
        CHECK_MSG(vx_vv_vae_encode_steps(v, t + skip, NS - skip, pcm + skip, mean + skip, nt, &err) == VOCIS_OK, "%s",
                  err.msg);
    }
    for (int i = 0; i < NS; i++) {
        CHECK_MSG(!memcmp(alone_a[i], tog_a[i], sizeof(float) * (size_t)(FRAMES * hop)),
                  "%d streams together (%s, precision %d, %d threads): stream %d's audio differs (max %g)", NS, norm,
                  prec, nt, i, tl_max_abs_diff(alone_a[i], tog_a[i], (size_t)(FRAMES * hop)));
        CHECK_MSG(!memcmp(alone_m[i], tog_m[i], sizeof(float) * (size_t)(FRAMES * vd)),
                  "%d streams together (%s, precision %d, %d threads): stream %d's encoding differs (max %g)", NS,
                  norm, prec, nt, i, tl_max_abs_diff(alone_m[i], tog_m[i], (size_t)(FRAMES * vd)));
        vx_vv_vae_stream_free(s[i]), vx_vv_vae_stream_free(t[i]);
        free(lat[i]), free(alone_a[i]), free(alone_m[i]), free(tog_a[i]), free(tog_m[i]);
    }
}

static void check_threads(const char *norm, int prec) {
    vx_vv_tokenizer_config cfg = small_cfg(norm);
    vx_vv_vae *v = NULL;
    vx_err err = {0};
    CHECK_MSG(vx_vv_vae_random(&cfg, VX_VV_VAE_ENCODER_DECODER, 5, prec, &v, &err) == VOCIS_OK, "%s", err.msg);
    if (!v) return;
    const int64_t hop = cfg.hop, vd = cfg.vae_dim, L = FRAMES * hop;
    float *audio = tl_random_floats((size_t)L), *lat = tl_random_floats((size_t)(FRAMES * vd));
    outs ref;
    run_all(v, threads[0], audio, lat, hop, vd, &ref);
    double sum = 0;
    for (int64_t i = 0; i < L; i++) sum += fabsf(ref.audio[i]) + fabsf(ref.s_audio[i]);
    CHECK_MSG(sum > 0 && isfinite(sum), "decoded audio all zero or not finite (%g)", sum);
    for (int k = 1; k < NT; k++) {
        outs o;
        run_all(v, threads[k], audio, lat, hop, vd, &o);
        same_bits("whole encode", ref.mean, o.mean, FRAMES * vd, threads[k], norm, prec);
        same_bits("whole decode", ref.audio, o.audio, L, threads[k], norm, prec);
        same_bits("streamed decode", ref.s_audio, o.s_audio, L, threads[k], norm, prec);
        same_bits("streamed encode", ref.s_mean, o.s_mean, FRAMES * vd, threads[k], norm, prec);
        outs_free(&o);
    }
    outs_free(&ref);
    free(audio), free(lat);
    check_many(v, hop, vd, norm, prec, 1);
    check_many(v, hop, vd, norm, prec, 3);
    vx_vv_vae_free(v);
}

int main(int argc, char **argv) {
    (void)argc, (void)argv;
    check_threads("RMSNorm", VX_PREC_EXACT);
    check_threads("LN", VX_PREC_EXACT);
    check_threads("RMSNorm", VX_PREC_BF16);
    return tl_finish("test_vv_vae");
}
