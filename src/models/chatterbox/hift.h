/* HiFT vocoder (HiFTGenerator of Chatterbox's S3Gen, `mel2wav.*`): mel (80 × Tm, 50 Hz) →
 * 24 kHz waveform of 480·Tm samples.
 *
 *   mel ─ f0 predictor ─ f0 (Tm) ─ ×480 nearest ─ SineGen (9 harmonics + noise) ─ l_linear, tanh ─ source (Tw)
 *   source ─ STFT(16, hop 4) ─ S (18 × (Tw/4 + 1)) ──────────────────────┐ (fused at each stage)
 *   mel ─ conv_pre ─ 3 × [LeakyReLU 0.1, ConvTranspose ×8/×5/×3, + source branch, 3 ResBlocks averaged]
 *       ─ LeakyReLU 0.01 ─ conv_post ─ exp / sin ─ iSTFT(16, hop 4) ─ clamp ±0.99 ─ wav (Tw)
 *
 * Weights are owned float32 with weight norm folded once; a vx_hift can be loaded from a checkpoint
 * or filled with random values at any width (synthetic benchmark at real dims). */
#ifndef VX_HIFT_H
#define VX_HIFT_H

#include <stdint.h>

#include "base/err.h"
#include "base/rng.h"
#include "io/safetensors.h"
#include "kernels/kernels.h"

#define VX_HIFT_NB_HARM 9       /* fundamental + nb_harmonics 8 */
#define VX_HIFT_HOP 480         /* output samples per mel frame (8·5·3·4) */
#define VX_HIFT_SR 24000
#define VX_HIFT_NFFT 16
#define VX_HIFT_ISTFT_HOP 4
#define VX_HIFT_NSTAGES 3       /* upsampling stages */
#define VX_HIFT_NKERNELS 3      /* resblocks per stage */
#define VX_HIFT_NDIL 3          /* dilations per resblock: 1, 3, 5 */
#define VX_HIFT_NCONDNET 5      /* f0 predictor convs */

/* One conv layer: w [cout][cin][k] for Conv1d, [cin][cout][k] for ConvTranspose1d (PyTorch's
 * layouts, as loaded); b [cout]. The generator's convs (all but the f0 predictor's) are repacked once
 * after loading into m, the tap-major layout of the time-major kernels (kernels/conv.h: Conv1d
 * [cout][k·cin], ConvTranspose1d [k·cout][cin]), F32 or (bf16 precision) BF16 with act_bf16 = 1;
 * w is then freed (NULL). */
typedef struct vx_hift_conv {
    int64_t cin, cout, k;
    float *w, *b;
    vx_mat m;
} vx_hift_conv;

/* ResBlock(C, k, dilations 1/3/5) with Snake activations (alpha per channel). */
typedef struct vx_hift_resblock {
    int64_t ch, k;
    vx_hift_conv c1[VX_HIFT_NDIL], c2[VX_HIFT_NDIL];
    float *a1[VX_HIFT_NDIL], *a2[VX_HIFT_NDIL]; /* [ch] */
    float *i1[VX_HIFT_NDIL], *i2[VX_HIFT_NDIL]; /* 1 / (alpha + 1e-9), [ch] */
} vx_hift_resblock;

typedef struct vx_hift {
    int64_t in_ch;   /* 80 mel bins */
    int64_t base;    /* base_channels: 512 real, 64 tiny */
    int64_t f0_ch;   /* f0 predictor cond_channels */
    vx_hift_conv condnet[VX_HIFT_NCONDNET];
    float *cls_w, cls_b;                       /* classifier [f0_ch] → 1 */
    float lin_w[VX_HIFT_NB_HARM], lin_b;       /* m_source.l_linear */
    vx_hift_conv conv_pre;                     /* in_ch → base, k 7 */
    vx_hift_conv ups[VX_HIFT_NSTAGES];         /* transposed: base/2^i → base/2^(i+1) */
    vx_hift_conv source_downs[VX_HIFT_NSTAGES]; /* 18 → base/2^(i+1) */
    vx_hift_resblock source_rb[VX_HIFT_NSTAGES];
    vx_hift_resblock rb[VX_HIFT_NSTAGES * VX_HIFT_NKERNELS];
    vx_hift_conv conv_post;                    /* base/8 → 18, k 7 */
    float window[VX_HIFT_NFFT];                /* periodic Hann(16) */
    int bf16;                                  /* generator matrices as bf16 (vx_hift_set_precision) */
    /* every owned buffer, for vx_hift_free */
    void **bufs;
    int nbufs, capbufs;
} vx_hift;

/* Load `mel2wav.*` (prefix configurable: NULL = "mel2wav.") from a weight set, e.g. s3gen.safetensors.
 * Accepts parametrizations.weight.original0/1 and legacy weight_g/weight_v; F32/F16/BF16.
 * precision (resolved, kernels/precision.h) is applied with vx_hift_set_precision; HiFT has its own
 * (the weight set's policy is the flow's, whose default differs: VX_PART_VOCODER). */
vocis_status vx_hift_load(const vx_weights *w, const char *prefix, int precision, vx_hift **out, vx_err *err);
/* Random weights at the given widths (base_channels, f0 cond channels) for benchmarks; exact. */
vocis_status vx_hift_random(int64_t base, int64_t f0_ch, uint64_t seed, vx_hift **out, vx_err *err);
/* Precision (kernels/precision.h, resolved): exact keeps float32; bf16 and q8 convert the matrices
 * of the upsamplers and ResBlocks (≈ 98 % of the FLOPs) to bf16 once, computed with vdpbf16ps on
 * bf16-rounded activations, and free their float32 copies. conv_pre, the source branch's
 * downsampling convs, conv_post (whose output goes through exp) and the f0 predictor stay float32.
 * On CPUs without AVX512_BF16 nothing is converted (bf16 weights would only be widened again).
 * Going back to exact after a conversion is refused. */
vocis_status vx_hift_set_precision(vx_hift *h, int precision, vx_err *err);
void vx_hift_free(vx_hift *h);
/* For benchmarks: the multiply-adds of the generator's convolutions per mel frame (f0 predictor,
 * conv_pre, the upsamplers, the source branch and all ResBlocks at their stage's rate, conv_post;
 * the STFTs and element-wise work not counted), and the bytes of its matrices as computed. */
void vx_hift_work(const vx_hift *h, double *macs_per_frame, double *weight_bytes);

/* f0 [tm] (Hz) from mel [in_ch][tm]. */
vocis_status vx_hift_f0(const vx_hift *h, const float *mel, int64_t tm, float *f0, int nthreads, vx_err *err);

/* Neural-source-filter excitation: source [480·tm] from f0 [tm], the 9 initial phases (phase[0] is
 * ignored and treated as 0) and the standard-normal sine noise [9][480·tm]. */
void vx_hift_source(const vx_hift *h, const float *f0, int64_t tm, const float *phase, const float *noise,
                    float *source, int nthreads);

/* decode(mel, source): wav [480·tm] clamped to ±0.99. mag / phase (optional, [9][120·tm + 1]) receive
 * exp(conv_post[0:9]) (before the clip at 100) and sin(conv_post[9:18]). */
vocis_status vx_hift_decode(const vx_hift *h, const float *mel, int64_t tm, const float *source, float *wav,
                            float *mag, float *phase, int nthreads, vx_err *err);

/* The whole vocoder (HiFTGenerator.inference). With an rng, the stream advances exactly as
 * upstream's: Uniform(−π, π) × 9, randn 9 × Tw, randn Tw (discarded). inj_phase [9] and inj_noise
 * [9][480·tm], when given, replace the drawn values. With neither rng nor injection the noise is zero
 * and the phases are 0 (deterministic).
 * *wav (malloc'd, caller frees) receives *n = 480·tm samples; f0_out [tm] and source_out [480·tm]
 * are optional. */
vocis_status vx_hift_vocode(const vx_hift *h, const float *mel, int64_t tm, vx_rng *rng, const float *inj_phase,
                            const float *inj_noise, float **wav, int64_t *n, float *f0_out, float *source_out,
                            int nthreads, vx_err *err);

/* S3Token2Wav trim_fade: samples [0, 480) → 0, [480, 960) × (cos(linspace(π, 0, 480)) + 1)/2. */
#define VX_TRIM_FADE_LEN 960
void vx_trim_fade_window(float *fade /* [960] */);
void vx_trim_fade(float *wav, int64_t n);

#endif
