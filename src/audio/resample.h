/* torchaudio's band-limited sinc resampler (torchaudio.functional.resample /
 * transforms.Resample with the defaults: sinc_interp_hann, lowpass filter
 * width 6, rolloff 0.99). Deterministic, so reproduced exactly (spec §5.2);
 * S3Gen's embed_ref uses it for the 24 → 16 kHz copy of the reference. */
#ifndef VX_RESAMPLE_H
#define VX_RESAMPLE_H

#include <stdint.h>

#include "base/err.h"

/* y (malloc'd) = x resampled from sr_in to sr_out; *m = ceil(n · new / orig)
 * with the rates reduced by their gcd. sr_in == sr_out copies. */
vocis_status vx_resample_sinc(const float *x, int64_t n, int sr_in, int sr_out, float **y, int64_t *m,
                              int nthreads, vx_err *err);

#endif
