/* Streaming S3Gen: speech tokens -> 24 kHz audio while T3 is still generating, the way
 * CosyVoice2's token2wav streams (FunAudioLLM/CosyVoice cosyvoice/cli/model.py) with the parts
 * Chatterbox's S3Gen has for it (flow inference finalize=False, HiFT cache_source):
 *
 *   every `hop` new tokens (first: cfg.first_tokens, then doubling up to cfg.max_hop), the flow
 *   runs over prompt + all tokens so far with finalize=False (the last pre_lookahead_len tokens
 *   are held back: their encoder frames looked ahead into padding), and only the mel frames
 *   not emitted before go on;
 *   HiFT runs on [the last 8 mel frames of the previous chunk | the new frames], the first
 *   8 · 480 samples of its source excitation replaced by the previous chunk's (cache_source),
 *   and its first 8 · 480 samples crossfaded (Hamming window) with the previous chunk's held
 *   tail; the last 8 · 480 samples are held for the next chunk;
 *   at the end of the tokens, one finalize=True run emits the rest.
 *
 * The samples add up to the whole path's count (480 per mel frame). Not sample-identical to it:
 * the estimator attends over the whole utterance, so frames emitted early have seen less
 * context; each mel frame's initial noise is drawn once per stream (the same in every re-run,
 * as CosyVoice2's fixed rand_noise) from the stream's own generator, so T3's random stream
 * is not touched. */
#ifndef VX_S3GEN_STREAM_H
#define VX_S3GEN_STREAM_H

#include <stdint.h>

#include "base/err.h"
#include "models/chatterbox/hift.h"
#include "models/chatterbox/s3gen_flow.h"

#define VX_S3GEN_STREAM_MAX_HOP 100  /* CosyVoice2's token_max_hop_len */
#define VX_S3GEN_STREAM_MEL_CACHE 8  /* CosyVoice2's mel_cache_len (frames) */

/* Receives each piece of final audio, in order; non-zero cancels (VOCIS_E_CANCELLED). */
typedef int (*vx_s3gen_stream_sink)(void *user, const float *wav, int64_t n);

typedef struct vx_s3gen_stream_cfg {
    const vx_s3gen_flow *flow; /* English CFM (CFG pair) or MeanFlow (Turbo / Nano) */
    const vx_hift *hift;
    const int64_t *prompt_tokens; /* [np] */
    int64_t np;
    const float *prompt_feat; /* [tp][n_mels] */
    int64_t tp;
    const float *embedding; /* [spk_dim] */
    int cfm_steps;          /* 0: 10 (English), 2 (MeanFlow) */
    int first_tokens;       /* tokens emitted by the first chunk (>= 1) */
    int max_hop;            /* cap of the doubling hop; 0 = VX_S3GEN_STREAM_MAX_HOP */
    int64_t valid_below;    /* tokens outside [0, valid_below) are dropped (upstream's post-processing) */
    uint64_t seed;          /* the stream's generator: mel noise, HiFT phases and sine noise */
    int nthreads;
    int keep_mel;           /* keep every emitted mel frame (vx_s3gen_stream_mel), for comparisons */
    vx_s3gen_stream_sink sink;
    void *user;
} vx_s3gen_stream_cfg;

typedef struct vx_s3gen_stream vx_s3gen_stream;

vocis_status vx_s3gen_stream_new(const vx_s3gen_stream_cfg *cfg, vx_s3gen_stream **out, vx_err *err);
void vx_s3gen_stream_free(vx_s3gen_stream *s);
/* One token as T3 draws it; runs a chunk (flow + HiFT + sink) once enough tokens are there. */
vocis_status vx_s3gen_stream_push(vx_s3gen_stream *s, int32_t token, vx_err *err);
/* End of the tokens: `tail` (e.g. Turbo's 3 silence tokens, may be NULL) is appended, the flow runs
 * with finalize=True and the rest reaches the sink. keep_samples >= 0 caps the stream's whole
 * output at that many samples (Multilingual drops the last token's audio); < 0: no cap.
 * VOCIS_E_ARG when no valid token came at all (nothing was emitted). */
vocis_status vx_s3gen_stream_finish(vx_s3gen_stream *s, const int64_t *tail, int ntail, int64_t keep_samples,
                                    vx_err *err);

/* Valid speech tokens taken so far (tail included after finish). */
int64_t vx_s3gen_stream_tokens(const vx_s3gen_stream *s);
/* Flow + HiFT runs so far. */
int vx_s3gen_stream_chunks(const vx_s3gen_stream *s);
/* Samples handed to the sink so far. */
int64_t vx_s3gen_stream_samples(const vx_s3gen_stream *s);
/* Wall time (s) spent in the flow and in HiFT so far. */
void vx_s3gen_stream_times(const vx_s3gen_stream *s, double *t_flow, double *t_hift);
/* The speech tokens taken (tail included after finish): [*n]. */
const int64_t *vx_s3gen_stream_token_list(const vx_s3gen_stream *s, int64_t *n);
/* cfg.keep_mel: the emitted mel frames, time-major [*frames][n_mels]; NULL otherwise. */
const float *vx_s3gen_stream_mel(const vx_s3gen_stream *s, int64_t *frames);
/* After finish, cfg.keep_mel: one whole-path flow run (finalize=True) over the stream's tokens with the
 * initial noise of `noise` (NULL: the stream's own, i.e. the same noise), and *snr = 10 log10(sum
 * whole^2 / sum (streamed - whole)^2) over all mel frames. */
vocis_status vx_s3gen_stream_whole_snr_db(vx_s3gen_stream *s, vx_s3gen_stream *noise, double *snr, vx_err *err);
/* The stream's initial noise of the first L frames (prompt included), channel-major [n_mels][L]
 * as the flow's z (frames not drawn yet are drawn now). */
vocis_status vx_s3gen_stream_noise(vx_s3gen_stream *s, int64_t L, float **z, vx_err *err);

#endif
