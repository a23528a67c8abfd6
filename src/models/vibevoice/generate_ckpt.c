/* The VibeVoice generation state as checkpoint sections (vx_vv_gen_state): counters, the tokens
 * so far, the next step's hidden states, the random stream, the acoustic-decoder and
 * semantic-encoder stream caches and, in place, the KV caches of both CFG branches. */
#include <stdio.h>
#include <string.h>

#include "io/checkpoint.h"
#include "models/vibevoice/generate.h"

enum { W_STEP, W_NGEN, W_NFRAMES, W_SAMPLES, W_LEN0, W_LEN1, W_LAYERS, W_KVDIM, W_KVROW, W_DIM, W_STREAMS };
#define N_STREAMS 4 /* acoustic encoder, decoder; semantic encoder, decoder */

static void streams_of(const vx_vv_gen_state *s, float *p[N_STREAMS], size_t n[N_STREAMS]) {
    vx_vv_vae_stream_state(s->ast, &p[0], &n[0], &p[1], &n[1]);
    vx_vv_vae_stream_state(s->sst, &p[2], &n[2], &p[3], &n[3]);
}

static const char *const stream_tags[N_STREAMS] = {"vv.ac.enc", "vv.ac.dec", "vv.se.enc", "vv.se.dec"};

static void kv_tag(char tag[VX_CKPT_TAG], int q, int l, int v) { snprintf(tag, VX_CKPT_TAG, "kv%d.%d%c", q, l, v ? 'v' : 'k'); }

/* counters, rng, tokens, hpos, hneg, the streams, then K and V per layer of both branches */
int vx_vv_gen_state_max_pieces(const vx_vv_gen_state *s) { return 5 + N_STREAMS + 4 * s->kv->n_layers; }

static void piece(vx_ckpt_piece *p, const char *tag, const void *data, uint64_t size) {
    memset(p->tag, 0, sizeof p->tag);
    snprintf(p->tag, sizeof p->tag, "%s", tag);
    p->data = data;
    p->size = size;
}

/* The counters of s: what the sections' sizes follow from. */
static void counters_of(const vx_vv_gen_state *s, int64_t w[VX_VV_STATE_WORDS]) {
    const vx_kv_cache *kv = s->kv;
    float *sp[N_STREAMS];
    size_t sn[N_STREAMS];
    streams_of(s, sp, sn);
    memset(w, 0, sizeof(int64_t) * VX_VV_STATE_WORDS);
    w[W_STEP] = s->step, w[W_NGEN] = s->ngen, w[W_NFRAMES] = s->nframes, w[W_SAMPLES] = s->samples;
    w[W_LEN0] = kv->len[0], w[W_LEN1] = kv->len[1], w[W_LAYERS] = kv->n_layers, w[W_KVDIM] = kv->kv_dim;
    w[W_KVROW] = (int64_t)vx_kv_row_bytes(kv), w[W_DIM] = s->dim;
    for (int i = 0; i < N_STREAMS; i++) w[W_STREAMS + i] = (int64_t)sn[i];
}

void vx_vv_gen_state_pieces(const vx_vv_gen_state *s, int64_t w[VX_VV_STATE_WORDS], uint8_t *rng_bytes,
                            vx_ckpt_piece *pieces, int *n_pieces) {
    const vx_kv_cache *kv = s->kv;
    float *sp[N_STREAMS];
    size_t sn[N_STREAMS];
    streams_of(s, sp, sn);
    counters_of(s, w);
    vx_rng_state_save(s->rng, rng_bytes);
    int n = 0;
    piece(&pieces[n++], "vv.state", w, sizeof(int64_t) * VX_VV_STATE_WORDS);
    piece(&pieces[n++], "rng", rng_bytes, VX_RNG_STATE_BYTES);
    piece(&pieces[n++], "vv.tokens", s->gen, sizeof(int32_t) * (uint64_t)s->ngen);
    piece(&pieces[n++], "vv.hpos", s->hpos, sizeof(float) * (uint64_t)s->dim);
    piece(&pieces[n++], "vv.hneg", s->hneg, sizeof(float) * (uint64_t)s->dim);
    for (int i = 0; i < N_STREAMS; i++) piece(&pieces[n++], stream_tags[i], sp[i], sizeof(float) * sn[i]);
    for (int l = 0; l < kv->n_layers; l++)
        for (int q = 0; q < 2; q++)
            for (int v = 0; v < 2; v++) {
                char tag[VX_CKPT_TAG];
                kv_tag(tag, q, l, v);
                piece(&pieces[n++], tag, vx_kv_rows(kv, l, q, v), (uint64_t)w[W_KVROW] * (uint64_t)kv->len[q]);
            }
    *n_pieces = n;
}

/* Copies section tag (exactly size bytes) to dst. */
static vocis_status take(const vx_ckpt *ck, const char *tag, void *dst, uint64_t size, vx_err *err) {
    const void *p;
    VX_TRY(vx_ckpt_section(ck, tag, size, &p, NULL, err));
    memcpy(dst, p, (size_t)size);
    return VOCIS_OK;
}

vocis_status vx_vv_gen_state_restore(const vx_vv_model *m, const vx_ckpt *ck, int64_t max_steps,
                                     vx_vv_gen_state *s, vx_err *err) {
    (void)m;
    int64_t want[VX_VV_STATE_WORDS], w[VX_VV_STATE_WORDS];
    s->step = s->ngen = s->nframes = s->samples = 0;
    counters_of(s, want); /* the sizes this model's state has */
    VX_TRY(take(ck, "vv.state", w, sizeof w, err));
    for (int i = W_LAYERS; i < VX_VV_STATE_WORDS; i++)
        if (w[i] != want[i])
            return vx_fail(err, VOCIS_E_FORMAT, "%s: the VibeVoice state does not fit this model (size field %d: %lld, "
                           "this model %lld)", ck->name, i, (long long)w[i], (long long)want[i]);
    const int64_t maxlen = s->kv->max_len;
    if (w[W_STEP] < 1 || w[W_STEP] > max_steps || w[W_NGEN] != w[W_STEP] || w[W_NFRAMES] < 1 ||
        w[W_NFRAMES] > w[W_NGEN] || w[W_SAMPLES] < 0 || w[W_LEN0] < 1 || w[W_LEN1] < 0 ||
        (maxlen > 0 && (w[W_LEN0] > maxlen || w[W_LEN1] > maxlen)))
        return vx_fail(err, VOCIS_E_FORMAT, "%s: the VibeVoice position is inconsistent (step %lld of at most %lld, "
                       "%lld tokens, context %lld / %lld)", ck->name, (long long)w[W_STEP], (long long)max_steps,
                       (long long)w[W_NGEN], (long long)w[W_LEN0], (long long)w[W_LEN1]);
    uint8_t rng[VX_RNG_STATE_BYTES];
    VX_TRY(take(ck, "rng", rng, sizeof rng, err));
    if (vx_rng_state_load(s->rng, rng) != 0)
        return vx_fail(err, VOCIS_E_FORMAT, "%s: the random generator's state is invalid", ck->name);
    VX_TRY(take(ck, "vv.tokens", s->gen, sizeof(int32_t) * (uint64_t)w[W_NGEN], err));
    VX_TRY(take(ck, "vv.hpos", s->hpos, sizeof(float) * (uint64_t)s->dim, err));
    VX_TRY(take(ck, "vv.hneg", s->hneg, sizeof(float) * (uint64_t)s->dim, err));
    float *sp[N_STREAMS];
    size_t sn[N_STREAMS];
    streams_of(s, sp, sn);
    for (int i = 0; i < N_STREAMS; i++) VX_TRY(take(ck, stream_tags[i], sp[i], sizeof(float) * sn[i], err));
    vx_kv_cache *kv = s->kv;
    VX_TRY(vx_kv_reserve(kv, w[W_LEN0] > w[W_LEN1] ? w[W_LEN0] : w[W_LEN1], err));
    for (int l = 0; l < kv->n_layers; l++)
        for (int q = 0; q < 2; q++)
            for (int v = 0; v < 2; v++) {
                char tag[VX_CKPT_TAG];
                kv_tag(tag, q, l, v);
                VX_TRY(take(ck, tag, vx_kv_rows(kv, l, q, v), (uint64_t)w[W_KVROW] * (uint64_t)w[W_LEN0 + q], err));
            }
    kv->len[0] = w[W_LEN0], kv->len[1] = w[W_LEN1];
    s->step = w[W_STEP], s->ngen = w[W_NGEN], s->nframes = w[W_NFRAMES], s->samples = w[W_SAMPLES];
    return VOCIS_OK;
}
