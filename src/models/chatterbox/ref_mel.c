#include "models/chatterbox/ref_mel.h"

#include <math.h>
#include <stdlib.h>

#include "audio/spectral.h"

vocis_status vx_ref_mel(const float *wav24k, int64_t n, float **mel, int64_t *frames, int nthreads, vx_err *err) {
    *mel = NULL;
    *frames = 0;
    const int pad = (VX_REF_MEL_NFFT - VX_REF_MEL_HOP) / 2, nb = VX_REF_MEL_NFFT / 2 + 1;
    if (n <= pad)
        return vx_fail(err, VOCIS_E_INVALID, "reference mel: %lld samples at 24 kHz are too few (need more than %d)",
                       (long long)n, pad);
    float window[VX_REF_MEL_NFFT];
    vx_window_hann(window, VX_REF_MEL_NFFT, 1);
    const vx_frames_spec fs = {VX_REF_MEL_NFFT, VX_REF_MEL_NFFT, VX_REF_MEL_HOP, 0, pad, window};
    const int64_t nf = vx_frames_count(&fs, n);
    float *fb = malloc(sizeof(float) * (size_t)VX_REF_MEL_BINS * nb);
    float *spec = malloc(sizeof(float) * (size_t)(nf > 0 ? nf : 1) * nb);
    float *out = malloc(sizeof(float) * (size_t)(nf > 0 ? nf : 1) * VX_REF_MEL_BINS);
    vocis_status st = VOCIS_OK;
    if (!fb || !spec || !out) {
        st = vx_fail(err, VOCIS_E_NOMEM, "reference mel: out of memory");
        goto fail;
    }
    if ((st = vx_mel_slaney(fb, VX_REF_MEL_SR, VX_REF_MEL_NFFT, VX_REF_MEL_BINS, 0.0, 8000.0, err))) goto fail;
    if ((st = vx_spectrum(wav24k, n, &fs, VX_SPEC_MAG_EPS9, 0, nf, spec, nthreads, err))) goto fail;
    vx_mel_apply(out, spec, nf, fb, VX_REF_MEL_BINS, nb, nthreads);
    for (int64_t i = 0; i < nf * VX_REF_MEL_BINS; i++) out[i] = logf(out[i] > 1e-5f ? out[i] : 1e-5f);
    free(fb);
    free(spec);
    *mel = out;
    *frames = nf;
    return VOCIS_OK;
fail:
    free(fb);
    free(spec);
    free(out);
    return st;
}
