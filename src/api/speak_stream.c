/* Streamed Chatterbox speech for vocis_speak (vocis_speak_options.stream_tokens): one
 * vx_s3gen_stream per text chunk, fed by T3's token callback, its audio into the chunk joiner. */
#include <stdint.h>

#include "api/internal.h"
#include "models/chatterbox/mtl.h"
#include "models/chatterbox/s3gen_stream.h"
#include "models/chatterbox/t3_gpt2.h"

/* First chunk sizes when the caller asks for the default: English / Multilingual follow
 * CosyVoice2's token_hop_len; Turbo / Nano, whose flow is 2 steps without CFG, start earlier. */
#define STREAM_FIRST_CFG 25
#define STREAM_FIRST_GPT2 10

int vx_api_stream_first_tokens(const vocis_model *m, int stream_tokens) {
    if (stream_tokens > 0) return stream_tokens;
    return m->turbo ? STREAM_FIRST_GPT2 : STREAM_FIRST_CFG;
}

static int to_join(void *user, const float *wav, int64_t n) {
    vx_join *j = user;
    vx_err e = {0};
    if (vx_join_add(j, wav, (size_t)n, &e) == VOCIS_OK) return 0;
    j->failed = e;
    return 1;
}

vocis_status vx_api_stream_begin(vocis_model *m, const vx_cb_conds *v, const vocis_speak_options *o,
                                 const vx_rng *rng, vx_join *j, struct vx_s3gen_stream **out) {
    vx_rng fork = *rng; /* the stream's seed from the request's generator, which stays T3's alone */
    const vx_s3gen_stream_cfg cfg = {
        .flow = m->flow,
        .hift = m->hift,
        .prompt_tokens = v->prompt_token.data,
        .np = v->prompt_token_len,
        .prompt_feat = v->prompt_feat.data,
        .tp = v->prompt_feat.shape[1],
        .embedding = v->embedding.data,
        .cfm_steps = m->turbo ? (o->cfm_steps == 10 ? 2 : o->cfm_steps) : o->cfm_steps,
        .first_tokens = vx_api_stream_first_tokens(m, o->stream_tokens),
        .valid_below = m->cfg.start_speech_token,
        .seed = vx_rng_u64(&fork) ^ 0x53747265616dULL,
        .nthreads = m->threads,
        .sink = to_join,
        .user = j,
    };
    return vx_s3gen_stream_new(&cfg, out, vx_api_err(m));
}

vocis_status vx_api_stream_end(vocis_model *m, struct vx_s3gen_stream *s, vx_err *err) {
    static const int64_t silence[3] = {VX_S3GEN_SIL, VX_S3GEN_SIL, VX_S3GEN_SIL}; /* Turbo keeps their audio */
    const int64_t n = vx_s3gen_stream_tokens(s);
    /* Multilingual drops the last token's audio */
    const int64_t keep = m->mtl ? vx_api_mtl_keep_samples((int)n, INT64_MAX) : -1;
    return vx_s3gen_stream_finish(s, silence, m->turbo ? 3 : 0, keep, err);
}
