#include "audio/fbank.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "audio/spectral.h"
#include "base/pool.h"

#define FBANK_LOW_HZ 20.0
#define FBANK_PREEMPH 0.97
#define FBANK_CHUNK 512 /* frames prepared and transformed per pass (bounds the scratch memory) */

vocis_status vx_kaldi_fbank_geom(int sample_rate, vx_fbank_geom *g, vx_err *err) {
    if (sample_rate <= 0) return vx_fail(err, VOCIS_E_ARG, "fbank: invalid sample rate %d", sample_rate);
    /* torchaudio: int(sample_frequency * frame_length_ms * 0.001) in Python floats */
    g->win = (int)((double)sample_rate * 25.0 * 0.001);
    g->shift = (int)((double)sample_rate * 10.0 * 0.001);
    if (g->win < 2 || g->shift < 1)
        return vx_fail(err, VOCIS_E_ARG, "fbank: sample rate %d Hz gives a %d-sample window (need >= 2)", sample_rate,
                       g->win);
    g->n_fft = 1;
    while (g->n_fft < g->win) g->n_fft *= 2;
    return VOCIS_OK;
}

int64_t vx_kaldi_fbank_frames(const vx_fbank_geom *g, int64_t n) {
    return n < g->win ? 0 : 1 + (n - g->win) / g->shift;
}

vocis_status vx_kaldi_mel_banks(float *fb, int num_bins, int n_fft, int sample_rate, vx_err *err) {
    const double nyquist = 0.5 * sample_rate, low = FBANK_LOW_HZ, high = nyquist;
    if (num_bins <= 3 || n_fft < 2 || n_fft % 2 || !(low < nyquist))
        return vx_fail(err, VOCIS_E_ARG, "fbank: invalid mel bank (%d bins, n_fft %d, %d Hz)", num_bins, n_fft,
                       sample_rate);
    const int half = n_fft / 2, nb = half + 1;
    /* Band edges: Python floats (double) for the two ends and the step, then float32 tensors
     * (torchaudio: mel_low + bin · delta with bin an integer arange, promoted to float32). */
    const double mel_lo = 1127.0 * log(1.0 + low / 700.0), mel_hi = 1127.0 * log(1.0 + high / 700.0);
    const float lo_f = (float)mel_lo, delta_f = (float)((mel_hi - mel_lo) / (num_bins + 1));
    const float width_f = (float)((double)sample_rate / n_fft);
    float *mel = malloc(sizeof(float) * (size_t)half);
    if (!mel) return vx_fail(err, VOCIS_E_NOMEM, "fbank: out of memory for the mel bank");
    for (int k = 0; k < half; k++) {
        float f = width_f * (float)k;
        float r = 1.0f + f / 700.0f;
        mel[k] = 1127.0f * logf(r);
    }
    for (int b = 0; b < num_bins; b++) {
        const float left = (float)b * delta_f + lo_f;
        const float center = ((float)b + 1.0f) * delta_f + lo_f;
        const float right = ((float)b + 2.0f) * delta_f + lo_f;
        float *row = fb + (size_t)b * nb;
        for (int k = 0; k < half; k++) {
            const float up = (mel[k] - left) / (center - left);
            const float down = (right - mel[k]) / (right - center);
            float v = up < down ? up : down;
            row[k] = v > 0.0f ? v : 0.0f;
        }
        row[half] = 0.0f; /* Nyquist column padded with zero */
    }
    free(mel);
    return VOCIS_OK;
}

typedef struct {
    double *frm;
    const float *wav, *window; /* wav at the pass's first frame */
    const vx_fbank_geom *g;
} frames_job;

/* frames [a, b) of a pass: DC removal, pre-emphasis, window, zero padding to n_fft */
static void prepare_frames(void *ctx, int64_t a, int64_t b) {
    const frames_job *c = ctx;
    const vx_fbank_geom *g = c->g;
    for (int64_t i = a; i < b; i++) {
        const float *x = c->wav + i * g->shift;
        double *y = c->frm + i * g->n_fft;
        double mean = 0.0;
        for (int j = 0; j < g->win; j++) mean += x[j];
        mean /= g->win;
        /* pre-emphasis after DC removal; sample 0 is taken against itself (replicate pad) */
        double prev = (double)x[0] - mean;
        for (int j = 0; j < g->win; j++) {
            const double cur = (double)x[j] - mean;
            y[j] = (cur - FBANK_PREEMPH * prev) * c->window[j];
            prev = cur;
        }
        memset(y + g->win, 0, sizeof(double) * (size_t)(g->n_fft - g->win));
    }
}

vocis_status vx_kaldi_fbank(const float *wav, int64_t n, int sample_rate, int num_bins, float **fbank,
                            int64_t *frames, int nthreads, vx_err *err) {
    *fbank = NULL;
    *frames = 0;
    if (nthreads < 1) nthreads = 1;
    vx_fbank_geom g;
    VX_TRY(vx_kaldi_fbank_geom(sample_rate, &g, err));
    if (num_bins <= 3) return vx_fail(err, VOCIS_E_ARG, "fbank: need more than 3 mel bins, got %d", num_bins);
    if (!wav || n < g.win)
        return vx_fail(err, VOCIS_E_INVALID,
                       "fbank: audio too short: %lld samples, need at least one %d-sample frame (%.0f ms at %d Hz)",
                       (long long)(wav ? n : 0), g.win, 25.0, sample_rate);
    const int64_t nf = vx_kaldi_fbank_frames(&g, n);
    const int nb = g.n_fft / 2 + 1;
    const int64_t chunk = nf < FBANK_CHUNK ? nf : FBANK_CHUNK;

    float *out = malloc(sizeof(float) * (size_t)(nf * num_bins));
    float *fb = malloc(sizeof(float) * (size_t)num_bins * nb);
    float *window = malloc(sizeof(float) * (size_t)g.win);
    double *frm = malloc(sizeof(double) * (size_t)(chunk * g.n_fft));
    float *spec = malloc(sizeof(float) * (size_t)(chunk * nb));
    vocis_status st = VOCIS_OK;
    if (!out || !fb || !window || !frm || !spec) {
        st = vx_fail(err, VOCIS_E_NOMEM, "fbank: out of memory for %lld frames", (long long)nf);
        goto done;
    }
    if ((st = vx_kaldi_mel_banks(fb, num_bins, g.n_fft, sample_rate, err))) goto done;
    vx_window_povey(window, g.win);

    for (int64_t c0 = 0; c0 < nf; c0 += chunk) {
        const int64_t nc = nf - c0 < chunk ? nf - c0 : chunk;
        frames_job fj = {frm, wav + c0 * g.shift, window, &g};
        vx_pool_for(nc >= 16 ? nthreads : 1, nc, 1, prepare_frames, &fj);
        if ((st = vx_rdft_frames(frm, nc, g.n_fft, VX_SPEC_POWER, spec, nthreads, err))) goto done;
        float *o = out + c0 * num_bins;
        vx_mel_apply(o, spec, nc, fb, num_bins, nb, nthreads);
        for (int64_t i = 0; i < nc * num_bins; i++) o[i] = logf(o[i] > FLT_EPSILON ? o[i] : FLT_EPSILON);
    }
    *fbank = out;
    *frames = nf;
    out = NULL;
done:
    free(out), free(fb), free(window), free(frm), free(spec);
    return st;
}
