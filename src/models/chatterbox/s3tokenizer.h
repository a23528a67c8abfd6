/* S3 speech tokenizer V2 ("speech_tokenizer_v2_25hz", S3TokenizerV2 of xingchensong/S3Tokenizer as
 * wrapped by Chatterbox's S3Tokenizer), spec chatterbox.md §7: 16 kHz audio → 25 Hz speech tokens.
 *
 *   wav ─ STFT(Hann 400, hop 160, centred; last frame dropped) ─ |X|² ─ Slaney mel 128
 *       ─ log10(max(·, 1e-10)), floor at max − 8, (·+4)/4 ─ mel [128][F]            (vx_s3tok_log_mel)
 *   mel ─ conv1 (k3 s2) GELU ─ conv2 (k3 s2) GELU ─ [F2][state]
 *       ─ n_layers × { x += out(attn(rope(q), rope(k), v)) + FSMN(v);  x += MLP(LN(x)) }
 *       ─ project_down (8) ─ tanh·0.999 ─ round + 1 ─ Σ h_i 3^i ─ tokens [F2]   (vx_s3tok_quantize)
 *
 * Tokens: F2 = ceil(ceil(F / 2) / 2). Mels longer than 3000 frames (30 s) are encoded in windows of
 * 3000 frames with stride 2600 and merged by dropping 50 tokens on each inner side (§7.5). */
#ifndef VX_S3TOKENIZER_H
#define VX_S3TOKENIZER_H

#include <stdint.h>

#include "base/err.h"
#include "io/safetensors.h"

#define VX_S3TOK_SR 16000
#define VX_S3TOK_HOP 160         /* mel frames at 100 Hz */
#define VX_S3TOK_NFFT 400
#define VX_S3TOK_NMELS 128       /* log-mel bins (vx_s3tok_log_mel always gives 128) */
#define VX_S3TOK_MIN_SAMPLES 201 /* one frame, and more samples than the 200-sample reflect padding */
#define VX_S3TOK_WINDOW 3000     /* longest mel encoded in one pass (30 s) */
#define VX_S3TOK_T3_MAX_LEN 150  /* T3 prompt: tokens of ref_16k[:96000], max_len 150 (600 frames) */
#define VX_S3TOK_T3_SAMPLES 96000
#define VX_S3TOK_CODEBOOK 6561   /* 3^8 */

typedef struct vx_s3tok vx_s3tok;

/* Load `tokenizer.*` from s3gen.safetensors (F32/F16/BF16). state (conv1 rows), n_mels (conv1 cin),
 * layer count (blocks.{i} probed), MLP width and FSMN kernel come from the shapes; n_heads from
 * vx_cb_config.s3tok_heads (release 20, tiny checkpoint 2) and must divide state into an even head
 * dim (upstream's rotary table is built for head dim 64, the release's 1280 / 20 and the tiny 128 / 2;
 * other even head dims use 10000^(−2i/hd), which upstream cannot run). Stored tokenizer._mel_filters /
 * tokenizer.window buffers are ignored (computed instead).
 * The big matrices stay views into `w`: w must outlive the tokenizer. */
vocis_status vx_s3tok_load(const vx_weights *w, int n_heads, vx_s3tok **out, vx_err *err);
/* Random owned f32 weights at the given dims (release: 128, 1280, 20, 6), MLP 4·state, FSMN 31 taps. */
vocis_status vx_s3tok_random(int64_t n_mels, int64_t state, int n_heads, int n_layers, uint64_t seed,
                             vx_s3tok **out, vx_err *err);
void vx_s3tok_free(vx_s3tok *t);

/* log_mel_spectrogram of 16 kHz audio: *mel (malloc'd, caller frees) = [128][F], F = n / 160.
 * n < VX_S3TOK_MIN_SAMPLES → VOCIS_E_INVALID. */
vocis_status vx_s3tok_log_mel(const float *wav16k, int64_t n, float **mel, int64_t *frames, int nthreads,
                              vx_err *err);

/* Number of tokens for `frames` mel frames (one pass or the merged 30 s windows). */
int64_t vx_s3tok_num_tokens(int64_t frames);

/* Encoder + FSQ on the first `frames` columns of mel[n_mels][ld] (ld = row stride in floats,
 * ≥ frames): *tokens (malloc'd, caller frees) of length *ntok = vx_s3tok_num_tokens(frames),
 * values in [0, 6561). frames < 1 → VOCIS_E_INVALID. */
vocis_status vx_s3tok_quantize(const vx_s3tok *t, const float *mel, int64_t frames, int64_t ld, int64_t **tokens,
                               int64_t *ntok, int nthreads, vx_err *err);

/* S3Tokenizer.forward([wav], max_len): log-mel of the whole signal, then its first 4·max_len
 * frames when max_len > 0, then quantize. T3 prompt: wav = ref_16k[:96000], max_len 150;
 * S3Gen reference: the torchaudio-resampled ≤ 10 s clip, max_len 0. */
vocis_status vx_s3tok_tokenize(const vx_s3tok *t, const float *wav16k, int64_t n, int64_t max_len,
                               int64_t **tokens, int64_t *ntok, int nthreads, vx_err *err);

/* S3Gen embed_ref step 5: how many of the ntok reference tokens are kept given the number of
 * 24 kHz reference mel frames (floor(L24 / 480)): ntok when mel_frames == 2·ntok, else
 * min(ntok, mel_frames / 2). */
int64_t vx_s3tok_s3gen_prompt_len(int64_t ntok, int64_t mel24_frames);

/* Dimensions (for callers and tests). */
int64_t vx_s3tok_state(const vx_s3tok *t);
int64_t vx_s3tok_n_mels(const vx_s3tok *t);
int vx_s3tok_layers(const vx_s3tok *t);

#endif
