/* Kaldi log-mel filterbank (torchaudio.compliance.kaldi.fbank with its defaults), model-agnostic.
 *
 *   wav ─ frames of 25 ms every 10 ms (snip_edges: only frames that fit) ─ minus frame mean
 *       ─ pre-emphasis 0.97 (x[j] − 0.97·x[j−1], the first sample against itself) ─ Povey window
 *       ─ zero-pad to the next power of two ─ |rfft|² ─ Kaldi/HTK mel bank (low 20 Hz, high Nyquist,
 *         Nyquist bin weight 0, built in float32 as torchaudio does) ─ log(max(·, FLT_EPSILON))
 *
 * No dither, no energy column, no mean subtraction (callers such as CAMPPlus remove the time-mean
 * themselves). The waveform is used as given (float, not scaled to the 16-bit range). Frame
 * preparation and the DFT run in double precision (vx_rdft_frames); the mel product is float32. */
#ifndef VX_FBANK_H
#define VX_FBANK_H

#include <stdint.h>

#include "base/err.h"

/* Frame geometry of the defaults at `sample_rate`: window int(sr·0.025), shift int(sr·0.010),
 * FFT size = next power of two ≥ window. */
typedef struct vx_fbank_geom {
    int win, shift, n_fft;
} vx_fbank_geom;

vocis_status vx_kaldi_fbank_geom(int sample_rate, vx_fbank_geom *g, vx_err *err);

/* Number of frames for n samples: 1 + (n − win) / shift, 0 when n < win. */
int64_t vx_kaldi_fbank_frames(const vx_fbank_geom *g, int64_t n);

/* Kaldi mel bank [num_bins][n_fft/2 + 1] (float32, last column = Nyquist = 0) for
 * low_freq 20 Hz and high_freq = Nyquist, exactly as torchaudio's get_mel_banks + pad builds it. */
vocis_status vx_kaldi_mel_banks(float *fb, int num_bins, int n_fft, int sample_rate, vx_err *err);

/* fbank [frames][num_bins] (malloc'd, caller frees) of n samples. Fewer samples than one frame
 * (win) → VOCIS_E_INVALID. Threaded over frames with nthreads. */
vocis_status vx_kaldi_fbank(const float *wav, int64_t n, int sample_rate, int num_bins, float **fbank,
                            int64_t *frames, int nthreads, vx_err *err);

#endif
