/* CAMPPlus speaker x-vector extractor of Chatterbox's S3Gen (`speaker_encoder.*`, xvector.py):
 * 16 kHz audio → 192-d x-vector (the `embedding` S3Gen conditions on).
 *
 *   wav ─ Kaldi fbank 80 ─ minus time-mean ─ (80 × m image)
 *       ─ FCM head: conv3×3 + BN + ReLU, 2 × 2 BasicRes (stride 2 on frequency), conv3×3 /2 + BN + ReLU
 *         (32 ch × 10 × m → 320 × m)
 *       ─ TDNN k5 /2 + BN + ReLU (m' = ⌊(m−1)/2⌋ + 1)
 *       ─ 3 × [CAM-dense block (12/24/16 layers, dilation 1/2/2), transit BN + ReLU + 1×1 halving]
 *       ─ BN + ReLU ─ mean ‖ unbiased std over time ─ dense 1×1 ─ BN without affine ─ x-vector
 *
 * Every BatchNorm (eval, eps 1e-5) is folded at load into a per-channel scale/shift, or into the
 * weights of the convolution it follows; weights are owned float32 (~7 M parameters). */
#ifndef VX_CAMPPLUS_H
#define VX_CAMPPLUS_H

#include <stdint.h>

#include "base/err.h"
#include "io/safetensors.h"

#define VX_CAMPPLUS_SR 16000
#define VX_CAMPPLUS_FEAT 80     /* fbank bins (fixed upstream in extract_feature) */
#define VX_CAMPPLUS_NBLOCKS 3   /* CAM-dense blocks */
#define VX_CAMPPLUS_SEG 100     /* CAM segment pooling length */
/* Shortest input: 3 fbank frames (2 frames after the TDNN, for an unbiased std): 720 samples. */
#define VX_CAMPPLUS_MIN_SAMPLES 720

typedef struct vx_campplus vx_campplus;

/* Load `speaker_encoder.*` (prefix NULL = "speaker_encoder.") from a weight set, e.g.
 * s3gen.safetensors; F32/F16/BF16. Every size is read from the tensor shapes. */
vocis_status vx_campplus_load(const vx_weights *w, const char *prefix, vx_campplus **out, vx_err *err);

/* Random weights at the given dims (real: 128, 32, 4, 192; block layer counts 12/24/16, head 32 ch). */
vocis_status vx_campplus_random(int64_t init_ch, int64_t growth, int64_t bn_size, int64_t emb, uint64_t seed,
                                vx_campplus **out, vx_err *err);
void vx_campplus_free(vx_campplus *c);

/* Embedding size (dense rows): 192 for the release. */
int64_t vx_campplus_emb_dim(const vx_campplus *c);

/* x-vector [emb] of 16 kHz audio (CAMPPlus.inference: fbank 80 bins, minus time-mean, network).
 * fbank_out (optional, malloc'd [frames][80]) receives the mean-normalised fbank and *frames
 * (optional) its frame count. Fewer than VX_CAMPPLUS_MIN_SAMPLES samples → VOCIS_E_INVALID. */
vocis_status vx_campplus_embed(const vx_campplus *c, const float *wav16k, int64_t n, float *xvec, float **fbank_out,
                               int64_t *frames, int nthreads, vx_err *err);

/* Frame-level output (upstream output_level="frame"): the trunk after out_nonlinear, before the
 * statistics pooling: *out (malloc'd) [ch][frames], ch = 512, frames = ⌊(m−1)/2⌋ + 1. */
vocis_status vx_campplus_frames(const vx_campplus *c, const float *fbank, int64_t m, float **out, int64_t *ch,
                                int64_t *frames, int nthreads, vx_err *err);

/* The network alone on a mean-normalised fbank [m][80] (m ≥ 3). */
vocis_status vx_campplus_forward(const vx_campplus *c, const float *fbank, int64_t m, float *xvec, int nthreads,
                                 vx_err *err);

#endif
