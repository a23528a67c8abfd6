/* Chatterbox voice cloning (ChatterboxTTS.prepare_conditionals): a reference
 * recording → the conditionals of a voice (T3 half and S3Gen half).
 *
 *   wav24 (≤ VX_CLONE_MAX_SECONDS) ─ soxr 24→16 kHz ─ ref16 ─┬─ VoiceEncoder ─ speaker_emb [1, 256]
 *                                                            └─ [:6 s] ─ S3 tokenizer (max_len 150) ─ cond_prompt_speech_tokens
 *   wav24[:10 s] ─┬─ reference mel ─ prompt_feat [1, M, 80]
 *                 └─ torchaudio sinc 24→16 kHz ─┬─ CAMPPlus ─ embedding [1, 192]
 *                                               └─ S3 tokenizer ─ prompt_token (cut to M/2 when 2·Tp ≠ M)
 *   exaggeration ─ emotion_adv [1, 1, 1]
 *
 * The three networks are loaded once (vx_cb_cloner) and reused for every clone. */
#ifndef VX_CB_CLONE_H
#define VX_CB_CLONE_H

#include <stdint.h>

#include "base/err.h"
#include "io/safetensors.h"
#include "models/chatterbox/campplus.h"
#include "models/chatterbox/conds.h"
#include "models/chatterbox/config.h"
#include "models/chatterbox/s3tokenizer.h"
#include "models/chatterbox/voice_encoder.h"

#define VX_CLONE_SR 24000          /* S3GEN_SR: rate the reference is loaded at */
#define VX_CLONE_SR16 16000        /* S3_SR */
#define VX_CLONE_T3_SECONDS 6      /* ENC_COND_LEN = 6 s at 16 kHz */
#define VX_CLONE_S3GEN_SECONDS 10  /* DEC_COND_LEN = 10 s at 24 kHz */
/* Upstream embeds the speaker over the whole recording; vocis reads at most
 * this much of it (a longer file: its first minute is used, with a warning). */
#define VX_CLONE_MAX_SECONDS 60.0
#define VX_CLONE_MIN_SECONDS 0.1   /* below this the front ends have no frame to work on */
#define VX_CLONE_ADVISED_SECONDS 5.0

typedef struct vx_cb_cloner {
    vx_ve *ve;           /* NULL: S3Gen half only (voice conversion) */
    vx_s3tok *tok;       /* may view into s3gen_w */
    vx_campplus *cam;
    int t3_prompt_len;   /* max T3 prompt tokens (150) */
    int t3_seconds;      /* 16 kHz reference seconds for the T3 prompt: 0 = VX_CLONE_T3_SECONDS (Turbo: 15) */
} vx_cb_cloner;

/* Loads ve.safetensors from model_dir and the tokenizer / speaker encoder from
 * an already opened s3gen.safetensors (which must outlive the cloner). With
 * vc_only a missing ve.safetensors is fine: clones then carry only the S3Gen
 * half (what voice conversion uses). */
vocis_status vx_cb_cloner_load(vx_cb_cloner *c, const char *model_dir, const vx_weights *s3gen_w,
                               const vx_cb_config *cfg, int vc_only, vx_err *err);
void vx_cb_cloner_free(vx_cb_cloner *c);

/* Wall time of each part of one clone (seconds). */
typedef struct vx_clone_timing {
    double resample, voice_encoder, t3_tokens, ref_mel, campplus, s3gen_tokens, total;
} vx_clone_timing;

/* Conditionals of a 24 kHz mono reference of n samples. out is filled (has_gen = 1) and must be
 * released with vx_cb_conds_free. timing may be NULL. warning (may be NULL, size wcap) receives a
 * one-line advisory, e.g. for a reference shorter than 5 s, or "" when none. */
vocis_status vx_cb_clone(const vx_cb_cloner *c, const float *wav24, int64_t n, float exaggeration, vx_cb_conds *out,
                         vx_clone_timing *timing, char *warning, size_t wcap, int nthreads, vx_err *err);

#endif
