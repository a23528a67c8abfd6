/* Streaming S3Gen (models/chatterbox/s3gen_stream.h) on the tiny checkpoints' flows (English CFM
 * and Turbo's MeanFlow) and HiFT: the chunk schedule (first 4 tokens, then 8, 16, ... until the
 * final flush), special tokens dropped, 480 samples per mel frame in all, every mel frame emitted
 * once, the streamed mel close to a whole-path flow run over the same tokens and noise, and a sink
 * that cancels. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/chatterbox/config.h"
#include "models/chatterbox/hift.h"
#include "models/chatterbox/s3gen_flow.h"
#include "models/chatterbox/s3gen_stream.h"
#include "models/chatterbox/turbo.h"
#include "testlib.h"

/* The streamed mel differs from the whole path's (same tokens, same noise) only where a frame saw
 * less right context when it was emitted; measured here 29 dB (CFM) and 34 dB (MeanFlow), 33 dB on
 * release-size synthetic Nano weights (README). 20 dB leaves room for other CPUs' rounding; frames
 * out of place or noise redrawn per run would not be near it. */
#define MIN_MEL_SNR_DB 20.0

enum { NP = 20, N = 60 };

typedef struct {
    int64_t samples;
    int pieces, cancel_at;
} sink_log;

static int sink(void *user, const float *wav, int64_t n) {
    sink_log *l = user;
    for (int64_t i = 0; i < n; i++)
        if (!isfinite(wav[i])) return 1;
    l->samples += n;
    return ++l->pieces == l->cancel_at;
}

static void check_flow(const char *dir, const char *name) {
    vx_err err = {0};
    vx_weights *w = NULL;
    vx_s3gen_flow *f = NULL;
    vx_hift *h = NULL;
    vx_cb_config cfg;
    char file[512];
    snprintf(file, sizeof file, "%s/%s", tl_path(dir), name);
    vx_cb_config_default(&cfg);
    if ((strstr(dir, "turbo") ? vx_turbo_config(tl_path(dir), NULL, &cfg, &err)
                              : vx_cb_config_load(&cfg, tl_path(dir), NULL, &err)) ||
        vx_weights_open(file, &w, &err) || vx_s3gen_flow_load(w, &cfg, &f, &err) ||
        vx_hift_load(w, NULL, 1 /* exact */, &h, &err)) {
        CHECK_MSG(0, "%s: %s", file, err.msg);
        goto done;
    }
    const vx_s3gen_flow_dims *d = vx_s3gen_flow_get_dims(f);
    int64_t prompt[NP];
    float feat[2 * NP * 80], emb[256];
    for (int i = 0; i < NP; i++) prompt[i] = (i * 131 + 7) % d->vocab;
    for (int i = 0; i < 2 * NP * (int)d->n_mels; i++) feat[i] = -4.5f + 3.0f * sinf(0.37f * (float)i);
    for (int i = 0; i < (int)d->spk_dim && i < 256; i++) emb[i] = 0.0625f * (float)((i * 37) % 17 - 8);
    sink_log log = {0};
    vx_s3gen_stream_cfg c = {.flow = f, .hift = h, .prompt_tokens = prompt, .np = NP, .prompt_feat = feat,
                             .tp = 2 * NP, .embedding = emb, .first_tokens = 4, .valid_below = d->vocab, .seed = 7,
                             .nthreads = 2, .keep_mel = 1, .sink = sink, .user = &log};
    vx_s3gen_stream *s = NULL;
    CHECK(vx_s3gen_stream_new(&c, &s, &err) == VOCIS_OK);
    vocis_status st = VOCIS_OK;
    int chunks_at_31 = -1;
    for (int i = 0; i < N && s && !st; i++) {
        st = vx_s3gen_stream_push(s, (int32_t)((i * 577 + 11) % d->vocab), &err);
        if (!st && i % 7 == 3) st = vx_s3gen_stream_push(s, (int32_t)d->vocab, &err); /* special: dropped */
        if (!st && i % 11 == 5) st = vx_s3gen_stream_push(s, -1, &err);
        if (i == 30) chunks_at_31 = vx_s3gen_stream_chunks(s);
    }
    CHECK_MSG(!st, "%s: push: %s", file, err.msg);
    /* chunks after 4 + 3, 12 + 3 and 28 + 3 tokens (hop 4, 8, 16; pre-lookahead 3) */
    CHECK_MSG(chunks_at_31 == 3, "%s: %d chunks after 31 tokens", file, chunks_at_31);
    if (s && !st) st = vx_s3gen_stream_finish(s, NULL, 0, -1, &err);
    CHECK_MSG(!st, "%s: finish: %s", file, err.msg);
    if (s && !st) {
        int64_t frames;
        vx_s3gen_stream_mel(s, &frames);
        CHECK_MSG(vx_s3gen_stream_tokens(s) == N, "%s: %lld tokens taken", file, (long long)vx_s3gen_stream_tokens(s));
        CHECK_MSG(vx_s3gen_stream_chunks(s) == 4, "%s: %d chunks", file, vx_s3gen_stream_chunks(s));
        CHECK_MSG(frames == 2 * N, "%s: %lld mel frames emitted", file, (long long)frames);
        CHECK_MSG(log.samples == 2 * N * VX_HIFT_HOP && vx_s3gen_stream_samples(s) == log.samples,
                  "%s: %lld samples for %d tokens", file, (long long)log.samples, N);
        CHECK_MSG(log.pieces == 4, "%s: %d pieces", file, log.pieces);
        double snr = NAN, snr_other = NAN;
        CHECK(vx_s3gen_stream_whole_snr_db(s, NULL, &snr, &err) == VOCIS_OK);
        printf("%s: streamed vs whole mel SNR %.1f dB\n", file, snr);
        CHECK_MSG(snr >= MIN_MEL_SNR_DB, "%s: streamed vs whole mel SNR %.1f dB", file, snr);
        /* the threshold tells: the whole path with other noise is far from the stream */
        vx_s3gen_stream_cfg other = c;
        other.seed = 8;
        vx_s3gen_stream *o = NULL;
        if (!vx_s3gen_stream_new(&other, &o, &err)) CHECK(vx_s3gen_stream_whole_snr_db(s, o, &snr_other, &err) == VOCIS_OK);
        vx_s3gen_stream_free(o);
        printf("%s: ... vs whole mel with other noise %.1f dB\n", file, snr_other);
        CHECK_MSG(snr_other < MIN_MEL_SNR_DB, "%s: other noise gives %.1f dB", file, snr_other);
    }
    vx_s3gen_stream_free(s);
    /* a sink that stops the second piece */
    sink_log stop = {.cancel_at = 2};
    c.user = &stop;
    c.keep_mel = 0;
    s = NULL;
    st = vx_s3gen_stream_new(&c, &s, &err);
    for (int i = 0; i < N && !st; i++) st = vx_s3gen_stream_push(s, (int32_t)(i % d->vocab), &err);
    CHECK_MSG(st == VOCIS_E_CANCELLED && stop.pieces == 2, "%s: cancel gave %d after %d pieces", file, st, stop.pieces);
    vx_s3gen_stream_free(s);
done:
    vx_hift_free(h);
    vx_s3gen_flow_free(f);
    vx_weights_close(w);
}

int main(int argc, char **argv) {
    if (argc > 1) tl_data_dir = argv[1];
    check_flow("chatterbox/ckpt", "s3gen.safetensors");
    check_flow("chatterbox-turbo/ckpt", "s3gen_meanflow.safetensors");
    return tl_finish("test_s3gen_stream");
}
