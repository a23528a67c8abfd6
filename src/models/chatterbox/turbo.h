/* Chatterbox-Turbo / -Nano folders: detection, configuration and the
 * `vocis debug` stages of this family (golden names of the Turbo set). */
#ifndef VX_TURBO_H
#define VX_TURBO_H

#include "models/chatterbox/config.h"
#include "models/stages.h"

/* 1 when DIR holds t3_turbo_v1.safetensors or t3_nano_v1.safetensors. */
int vx_turbo_is_folder(const char *dir);
/* "s3gen_meanflow.safetensors" for a Turbo/Nano folder, NULL otherwise. */
const char *vx_turbo_s3gen_name(const char *dir);
/* Checks that DIR is one complete Turbo/Nano folder and not a mix of
 * variants; *nano receives which one. */
vocis_status vx_turbo_check_folder(const char *dir, int *nano, vx_err *err);
/* Defaults of the Turbo hp (speech_cond_prompt_len 375), then the overrides
 * of explicit_path or DIR/vocis_config.json / chatterbox_tiny_config.json. */
vocis_status vx_turbo_config(const char *dir, const char *explicit_path, vx_cb_config *cfg, vx_err *err);

#define VX_TURBO_T3_SECONDS 15   /* ENC_COND_LEN */
#define VX_TURBO_MIN_SECONDS 5.0 /* prepare_conditionals asserts len / sr > 5 */
#define VX_TURBO_TARGET_LUFS (-27.0)

/* pyloudnorm Meter(sr).integrated_loudness (BS.1770-4, K-weighting, 400 ms
 * blocks, 75 % overlap, -70 LUFS absolute and -10 LU relative gates) of a
 * mono float32 signal; -inf for silence. n must be at least 0.4 s. */
double vx_loudness_lufs(const float *x, int64_t n, int sr);
/* ChatterboxTurboTTS.norm_loudness: x *= 10^((target - L) / 20) when that
 * gain is finite and > 0 (in place). Returns the measured loudness. */
double vx_turbo_norm_loudness(float *x, int64_t n, int sr, double target_lufs);

/* Stages (the English entry points call these on Turbo/Nano folders). */
vocis_status vx_stage_turbo_t3_cond(const vx_stage_args *a, vx_err *err);
vocis_status vx_stage_turbo_t3_prefill(const vx_stage_args *a, vx_err *err);
vocis_status vx_stage_turbo_conds_pt(const vx_stage_args *a, vx_err *err);
/* t3-generate: speaker_emb, cond_prompt_speech_tokens; --text T [--seed N | --greedy] ->
 * tokens_sampled (greedy: tokens), tokens_returned, logits (08 / 09 names) */
vocis_status vx_stage_turbo_t3_generate(const vx_stage_args *a, vx_err *err);
vocis_status vx_stage_turbo_s3gen_flow(const vx_stage_args *a, vx_err *err);
/* loudnorm: ref_24k -> ref_24k_loudnorm (01_audio_inputs) */
vocis_status vx_stage_turbo_loudnorm(const vx_stage_args *a, vx_err *err);

#endif
