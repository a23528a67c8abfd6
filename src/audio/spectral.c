#include "audio/spectral.h"

#include <fftw3.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "base/pool.h"
#include "kernels/kernels.h"

void vx_window_hann(float *w, int n, int periodic) {
    const double den = periodic ? (double)n : (double)(n - 1);
    for (int i = 0; i < n; i++) w[i] = n == 1 ? 1.0f : (float)(0.5 - 0.5 * cos(2.0 * M_PI * i / den));
}

void vx_window_povey(float *w, int n) {
    for (int i = 0; i < n; i++)
        w[i] = n == 1 ? 1.0f : (float)pow(0.5 - 0.5 * cos(2.0 * M_PI * i / (double)(n - 1)), 0.85);
}

/* Slaney mel scale (librosa hz_to_mel / mel_to_hz with htk=False). */
static double hz_to_mel(double f) {
    const double f_sp = 200.0 / 3.0, min_log_hz = 1000.0, min_log_mel = min_log_hz / f_sp;
    const double logstep = log(6.4) / 27.0;
    return f >= min_log_hz ? min_log_mel + log(f / min_log_hz) / logstep : f / f_sp;
}

static double mel_to_hz(double m) {
    const double f_sp = 200.0 / 3.0, min_log_hz = 1000.0, min_log_mel = min_log_hz / f_sp;
    const double logstep = log(6.4) / 27.0;
    return m >= min_log_mel ? min_log_hz * exp(logstep * (m - min_log_mel)) : f_sp * m;
}

vocis_status vx_mel_slaney(float *fb, int sr, int n_fft, int n_mels, double fmin, double fmax, vx_err *err) {
    if (sr <= 0 || n_fft < 2 || n_mels < 1 || fmin < 0 || fmax <= fmin)
        return vx_fail(err, VOCIS_E_INVALID, "mel filterbank: invalid parameters (sr %d, n_fft %d, n_mels %d, %g-%g Hz)",
                       sr, n_fft, n_mels, fmin, fmax);
    const int nb = n_fft / 2 + 1;
    double *hz = malloc(sizeof(double) * (size_t)(n_mels + 2));
    if (!hz) return vx_fail(err, VOCIS_E_NOMEM, "mel filterbank: out of memory");
    const double m0 = hz_to_mel(fmin), m1 = hz_to_mel(fmax);
    for (int i = 0; i < n_mels + 2; i++) hz[i] = mel_to_hz(m0 + (m1 - m0) * i / (double)(n_mels + 1));
    for (int i = 0; i < n_mels; i++) {
        const double d0 = hz[i + 1] - hz[i], d1 = hz[i + 2] - hz[i + 1];
        /* librosa stores the triangles as float32, then scales the float32 matrix */
        const float enorm = (float)(2.0 / (hz[i + 2] - hz[i]));
        for (int k = 0; k < nb; k++) {
            const double f = (double)k * sr / n_fft;
            const double lower = (f - hz[i]) / d0, upper = (hz[i + 2] - f) / d1;
            double v = lower < upper ? lower : upper;
            if (v < 0) v = 0;
            fb[(size_t)i * nb + k] = (float)v * enorm;
        }
    }
    free(hz);
    return VOCIS_OK;
}

int64_t vx_frames_count(const vx_frames_spec *s, int64_t n) {
    if (s->center) return 1 + n / s->hop;
    const int64_t padded = n + 2 * (int64_t)s->pad_reflect;
    return padded < s->win ? 0 : 1 + (padded - s->win) / s->hop;
}

/* FFTW's planner is not thread-safe; plans are made and destroyed under one
 * lock and executed with the new-array interface, which is. */
static pthread_mutex_t plan_lock = PTHREAD_MUTEX_INITIALIZER;

typedef struct {
    fftw_plan plan;
    double *in;
    fftw_complex *out;
} rdft;

static int rdft_make(rdft *r, int n) {
    r->in = fftw_malloc(sizeof(double) * (size_t)n);
    r->out = fftw_malloc(sizeof(fftw_complex) * (size_t)(n / 2 + 1));
    r->plan = NULL;
    if (!r->in || !r->out) return -1;
    pthread_mutex_lock(&plan_lock);
    r->plan = fftw_plan_dft_r2c_1d(n, r->in, r->out, FFTW_ESTIMATE);
    pthread_mutex_unlock(&plan_lock);
    return r->plan ? 0 : -1;
}

static void rdft_free(rdft *r) {
    pthread_mutex_lock(&plan_lock);
    if (r->plan) fftw_destroy_plan(r->plan);
    pthread_mutex_unlock(&plan_lock);
    fftw_free(r->in);
    fftw_free(r->out);
}

/* One transform per pool slot (nthreads ≥ 1 of them): NULL when one cannot be set up. */
static rdft *rdft_slots(int nthreads, int n) {
    rdft *r = calloc((size_t)nthreads, sizeof *r);
    if (!r) return NULL;
    int ok = 1;
    for (int t = 0; t < nthreads; t++) ok &= rdft_make(&r[t], n) == 0;
    if (ok) return r;
    for (int t = 0; t < nthreads; t++) rdft_free(&r[t]);
    free(r);
    return NULL;
}

static void rdft_slots_free(rdft *r, int nthreads) {
    for (int t = 0; t < nthreads; t++) rdft_free(&r[t]);
    free(r);
}

static void rdft_emit(const rdft *r, int nb, vx_spec_kind kind, float *out) {
    for (int k = 0; k < nb; k++) {
        const double p = r->out[k][0] * r->out[k][0] + r->out[k][1] * r->out[k][1];
        out[k] = kind == VX_SPEC_MAG_EPS9 ? (float)sqrt(p + 1e-9) : (float)p;
    }
}

/* Sample i of the signal after `pad` reflect-padded samples on each side
 * (numpy/torch "reflect": the edge sample is not repeated). n > pad. */
static float reflect_at(const float *x, int64_t n, int64_t i) {
    if (i < 0) i = -i;
    if (i >= n) i = 2 * (n - 1) - i;
    return x[i];
}

typedef struct {
    rdft *r; /* per pool slot */
    const float *x;
    int64_t n;
    const vx_frames_spec *s;
    vx_spec_kind kind;
    int64_t f0;
    float *out;
    int64_t pad, woff;
    int nb;
} spectrum_job;

/* frames f0 + [a, b) */
static void spectrum_frames(void *ctx, int64_t a, int64_t b) {
    const spectrum_job *j = ctx;
    const vx_frames_spec *s = j->s;
    rdft *r = &j->r[vx_pool_slot()];
    for (int64_t f = j->f0 + a; f < j->f0 + b; f++) {
        memset(r->in, 0, sizeof(double) * (size_t)s->n_fft);
        const int64_t start = f * s->hop - j->pad + j->woff; /* index into the unpadded signal */
        for (int64_t i = 0; i < s->win; i++) {
            const double w = s->window ? s->window[i] : 1.0;
            r->in[i + (s->center ? j->woff : 0)] = (double)reflect_at(j->x, j->n, start + i) * w;
        }
        fftw_execute_dft_r2c(r->plan, r->in, r->out);
        rdft_emit(r, j->nb, j->kind, j->out + (size_t)(f - j->f0) * j->nb);
    }
}

vocis_status vx_spectrum(const float *x, int64_t n, const vx_frames_spec *s, vx_spec_kind kind, int64_t f0,
                         int64_t nf, float *out, int nthreads, vx_err *err) {
    const int64_t pad = (s->center ? s->n_fft / 2 : 0) + s->pad_reflect;
    if (s->n_fft < 2 || s->win < 1 || s->win > s->n_fft || s->hop < 1)
        return vx_fail(err, VOCIS_E_INVALID, "spectrum: invalid framing (n_fft %d, win %d, hop %d)", s->n_fft, s->win,
                       s->hop);
    if (n < 1 || (pad > 0 && n <= pad))
        return vx_fail(err, VOCIS_E_INVALID, "spectrum: %lld samples are too few for reflect padding of %lld",
                       (long long)n, (long long)pad);
    if (f0 < 0 || nf < 0 || f0 + nf > vx_frames_count(s, n))
        return vx_fail(err, VOCIS_E_INVALID, "spectrum: frames [%lld, %lld) out of range", (long long)f0,
                       (long long)(f0 + nf));
    const int nb = s->n_fft / 2 + 1;
    /* a centred frame is n_fft wide; a shorter window sits in its middle (torch/librosa) */
    const int64_t woff = s->center ? (s->n_fft - s->win) / 2 : 0;
    if (nthreads > nf) nthreads = (int)nf; /* a transform set up per thread */
    if (nthreads < 1) nthreads = 1;
    spectrum_job j = {rdft_slots(nthreads, s->n_fft), x, n, s, kind, f0, out, pad, woff, nb};
    if (!j.r) return vx_fail(err, VOCIS_E_NOMEM, "spectrum: cannot set up a %d-point FFT", s->n_fft);
    vx_pool_for(nthreads, nf, 1, spectrum_frames, &j);
    rdft_slots_free(j.r, nthreads);
    return VOCIS_OK;
}

typedef struct {
    rdft *r; /* per pool slot */
    const double *in;
    int n_fft;
    vx_spec_kind kind;
    float *out;
} rdft_frames_job;

static void rdft_frames_range(void *ctx, int64_t a, int64_t b) {
    const rdft_frames_job *j = ctx;
    rdft *r = &j->r[vx_pool_slot()];
    const int nb = j->n_fft / 2 + 1;
    for (int64_t f = a; f < b; f++) {
        memcpy(r->in, j->in + (size_t)f * j->n_fft, sizeof(double) * (size_t)j->n_fft);
        fftw_execute_dft_r2c(r->plan, r->in, r->out);
        rdft_emit(r, nb, j->kind, j->out + (size_t)f * nb);
    }
}

vocis_status vx_rdft_frames(const double *in, int64_t nf, int n_fft, vx_spec_kind kind, float *out, int nthreads,
                            vx_err *err) {
    if (n_fft < 2) return vx_fail(err, VOCIS_E_INVALID, "rdft: invalid size %d", n_fft);
    if (nthreads > nf) nthreads = (int)nf; /* a transform set up per thread */
    if (nthreads < 1) nthreads = 1;
    rdft_frames_job j = {rdft_slots(nthreads, n_fft), in, n_fft, kind, out};
    if (!j.r) return vx_fail(err, VOCIS_E_NOMEM, "rdft: cannot set up a %d-point FFT", n_fft);
    vx_pool_for(nthreads, nf, 1, rdft_frames_range, &j);
    rdft_slots_free(j.r, nthreads);
    return VOCIS_OK;
}

void vx_mel_apply(float *mel, const float *spec, int64_t frames, const float *fb, int n_mels, int nbins,
                  int nthreads) {
    if (frames < 1) return;
    /* mel[F, M] = spec[F, K] · fb[M, K]ᵀ */
    vx_gemm_f32(0, 1, frames, n_mels, nbins, 1.0f, spec, nbins, fb, nbins, 0.0f, mel, n_mels, nthreads);
}
