/* Spectral front ends shared by the voice encoder, the S3 speech tokenizer,
 * the S3Gen reference mel and the CAMPPlus Kaldi fbank: windows, mel
 * filterbanks and a framed power / magnitude spectrum.
 *
 * The DFT runs in double precision (FFTW) on float32 input: numpy (librosa)
 * transforms in float64 and torch's float32 FFT is within ~1e-6 relative of
 * the exact value, so double is the closest common reference for both. */
#ifndef VX_SPECTRAL_H
#define VX_SPECTRAL_H

#include <stdint.h>

#include "base/err.h"

/* Hann window of length n: periodic (denominator n, torch.hann_window
 * default, librosa "hann") or symmetric (denominator n − 1). Computed in
 * double, stored as float. */
void vx_window_hann(float *w, int n, int periodic);
/* Kaldi's Povey window: symmetric Hann ^ 0.85. */
void vx_window_povey(float *w, int n);

/* librosa.filters.mel(sr, n_fft, n_mels, fmin, fmax, htk=False, norm="slaney"):
 * fb[n_mels][n_fft/2 + 1] (float32, row-major). */
vocis_status vx_mel_slaney(float *fb, int sr, int n_fft, int n_mels, double fmin, double fmax, vx_err *err);

/* How frames are cut from a signal of n samples. */
typedef struct vx_frames_spec {
    int n_fft;           /* DFT size; n_fft/2 + 1 bins */
    int win;             /* samples per frame (≤ n_fft); the frame is zero-padded to n_fft */
    int hop;
    int center;          /* 1: reflect-pad n_fft/2 on both sides first (torch/librosa center=True) */
    int pad_reflect;     /* extra explicit reflect padding on both sides before framing (S3Gen mel: 720) */
    const float *window; /* [win], multiplied into each frame; NULL = rectangular */
} vx_frames_spec;

/* Number of frames: with center, 1 + n / hop; otherwise
 * 1 + (n + 2·pad_reflect − win) / hop (0 when the padded signal is shorter than win). */
int64_t vx_frames_count(const vx_frames_spec *s, int64_t n);

typedef enum vx_spec_kind {
    VX_SPEC_POWER = 0,      /* re² + im² */
    VX_SPEC_MAG_EPS9 = 1    /* sqrt(re² + im² + 1e-9) (S3Gen mel) */
} vx_spec_kind;

/* out[f][k] (frames × (n_fft/2 + 1), float32) for frames f in [f0, f0 + nf).
 * The frame is taken from the (padded) signal, multiplied by the window and
 * transformed (double-precision real DFT, not normalised). Reflect padding
 * needs n > pad (else VOCIS_E_INVALID). Threaded over frames. */
vocis_status vx_spectrum(const float *x, int64_t n, const vx_frames_spec *s, vx_spec_kind kind, int64_t f0,
                         int64_t nf, float *out, int nthreads, vx_err *err);

/* The same transform on frames already cut and windowed by the caller (e.g.
 * Kaldi's per-frame DC removal and pre-emphasis): in[f][n_fft] (double),
 * out[f][n_fft/2 + 1]. Threaded over frames. */
vocis_status vx_rdft_frames(const double *in, int64_t nf, int n_fft, vx_spec_kind kind, float *out, int nthreads,
                            vx_err *err);

/* mel[f][m] = Σ_k spec[f][k] · fb[m][k] for frames × n_mels (float32 GEMM). */
void vx_mel_apply(float *mel, const float *spec, int64_t frames, const float *fb, int n_mels, int nbins,
                  int nthreads);

#endif
