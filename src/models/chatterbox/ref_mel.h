/* S3Gen reference mel (s3gen/utils/mel.py mel_spectrogram at 24 kHz, spec
 * §9.2.1): reflect-pad 720, non-centred STFT (periodic Hann 1920, hop 480),
 * sqrt(|X|² + 1e-9), Slaney mel 80 × 961 (0–8 kHz), log(max(·, 1e-5)).
 * The result is the `prompt_feat` half of a voice. */
#ifndef VX_REF_MEL_H
#define VX_REF_MEL_H

#include <stdint.h>

#include "base/err.h"

#define VX_REF_MEL_SR 24000
#define VX_REF_MEL_NFFT 1920
#define VX_REF_MEL_HOP 480
#define VX_REF_MEL_BINS 80

/* mel (malloc'd) [frames][80], time-major like prompt_feat (1, M, 80);
 * frames = floor(n / 480). Needs n > 720 samples. */
vocis_status vx_ref_mel(const float *wav24k, int64_t n, float **mel, int64_t *frames, int nthreads, vx_err *err);

#endif
