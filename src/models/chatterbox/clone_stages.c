/* Stage harness entries of the voice-cloning front ends (golden 01 and 05).
 *
 * resample: ref_24k [L] -> ref_16k_soxr [ceil(2L/3)] (librosa soxr_hq + fix_length),
 *           ref_16k_torchaudio [1, ceil(2L/3)] (torchaudio sinc, hann, width 6, rolloff 0.99)
 * ref-mel:  ref_24k [L] (S3Gen uses its first 10 s) -> mel [1, 80, floor(L'/480)] */
#include <stdlib.h>

#include "audio/resample.h"
#include "io/audio.h"
#include "models/chatterbox/ref_mel.h"
#include "models/stages.h"

vocis_status vx_stage_resample(const vx_stage_args *a, vx_err *err) {
    VX_TRY(vx_stage_no_options(a, err));
    float *x = NULL, *soxr = NULL, *sinc = NULL;
    int64_t n, ns, nt;
    VX_TRY(vx_stage_in_wave(a, "ref_24k", &x, &n, err));
    vocis_status st = vx_audio_resample(x, n, 24000, 16000, &soxr, &ns, err);
    if (!st) st = vx_resample_sinc(x, n, 24000, 16000, &sinc, &nt, a->nthreads, err);
    if (!st) st = vx_stage_out_f32(a, "ref_16k_soxr", VX_DIMS(ns), soxr, err);
    if (!st) st = vx_stage_out_f32(a, "ref_16k_torchaudio", VX_DIMS(1, nt), sinc, err);
    free(x);
    free(soxr);
    free(sinc);
    return st;
}

vocis_status vx_stage_ref_mel(const vx_stage_args *a, vx_err *err) {
    VX_TRY(vx_stage_no_options(a, err));
    float *x = NULL, *mel = NULL, *chw = NULL;
    int64_t n, nf;
    VX_TRY(vx_stage_in_wave(a, "ref_24k", &x, &n, err));
    const int64_t keep = n < 10 * VX_REF_MEL_SR ? n : 10 * VX_REF_MEL_SR; /* DEC_COND_LEN */
    vocis_status st = vx_ref_mel(x, keep, &mel, &nf, a->nthreads, err);
    if (!st && !(chw = vx_malloc(err, sizeof(float) * (size_t)(nf * VX_REF_MEL_BINS), "mel"))) st = VOCIS_E_NOMEM;
    if (!st) {
        /* [M][80] -> [80][M] */
        for (int64_t f = 0; f < nf; f++)
            for (int b = 0; b < VX_REF_MEL_BINS; b++) chw[b * nf + f] = mel[f * VX_REF_MEL_BINS + b];
        st = vx_stage_out_f32(a, "mel", VX_DIMS(1, VX_REF_MEL_BINS, nf), chw, err);
    }
    free(x);
    free(mel);
    free(chw);
    return st;
}
