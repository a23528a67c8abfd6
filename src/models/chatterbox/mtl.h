/* Chatterbox-Multilingual (ChatterboxMultilingualTTS, upstream mtl_tts.py):
 * the release folder and the multilingual post-processing. The networks are
 * the English ones (T3 with a 2454-row text vocabulary, S3Gen, HiFT, voice
 * encoder, S3 tokenizer, CAMPPlus); only file formats and names differ:
 *
 *   t3_mtl23ls_v2.safetensors (upstream's default) or t3_mtl23ls_v3.safetensors
 *   s3gen.pt, ve.pt          torch.save'd state dicts (read as weight sets, io/ptweights.h)
 *   grapheme_mtl_merged_expanded_v1.json, Cangjie5_TC.json   text front end (text/mtl_text.h)
 *   conds.pt                 built-in voice (optional) */
#ifndef VX_CB_MTL_H
#define VX_CB_MTL_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "io/safetensors.h"

#define VX_MTL_T3_V2 "t3_mtl23ls_v2.safetensors"
#define VX_MTL_T3_V3 "t3_mtl23ls_v3.safetensors"
#define VX_MTL_SAMPLES_PER_TOKEN 960 /* S3GEN_SR / S3_TOKEN_RATE */

/* 1 when DIR holds a multilingual T3 (v2 or v3). */
int vx_mtl_is_folder(const char *dir);
/* The T3 file of a multilingual folder: v2 when present (upstream's default), else v3; NULL if neither. */
const char *vx_mtl_t3_name(const char *dir);
/* A complete multilingual folder, and not mixed with the English release (t3_cfg.safetensors). */
vocis_status vx_mtl_check_folder(const char *dir, vx_err *err);

/* The T3 of a Chatterbox folder: DIR/t3_cfg.safetensors (English), else the multilingual one. Returns 0, or -1
 * (path still holds the English name) when neither exists. */
int vx_cb_t3_path(const char *dir, char *path, size_t n);
/* Opens a Chatterbox part: DIR/STEM.safetensors, or DIR/STEM.pt (a torch state dict) when only that exists.
 * Neither: VOCIS_E_IO naming both. */
vocis_status vx_cb_weights_open(const char *dir, const char *stem, vx_weights **out, vx_err *err);
/* vx_weights_open(PATH), except that a missing X.safetensors whose sibling X.pt exists opens the .pt (the
 * multilingual release's s3gen.pt / ve.pt under the English names the loaders ask for). */
vocis_status vx_cb_weights_open_path(const char *path, vx_weights **out, vx_err *err);
/* 1 when DIR/STEM.safetensors or DIR/STEM.pt exists. */
int vx_cb_part_exists(const char *dir, const char *stem);

/* The multilingual generate()'s post-processing of the conditional row:
 * drop_invalid_tokens (after the first `start`, before the first `stop`), in place. Upstream keeps every other id
 * and crashes where one is unusable: S3Gen's embedding has `n_valid` (6561) rows, so 6563..8193 raise
 * IndexError, and a second `start` token breaks drop_invalid_tokens itself. vocis drops those tokens instead
 * (*n_dropped counts them; 0 whenever upstream runs). Returns the new count. */
int vx_mtl_clean_tokens(int32_t *tokens, int n, int start, int stop, int n_valid, int *n_dropped);
/* generate() keeps wav[: max(1, n_tokens - 1) * 960]: the last token's audio is dropped. */
int64_t vx_mtl_keep_samples(int n_tokens, int64_t n_samples);

#endif
