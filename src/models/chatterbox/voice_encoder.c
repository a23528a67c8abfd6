/* Chatterbox voice encoder (VoiceEncoder.embeds_from_wavs), see voice_encoder.h and the shared spec
 * chatterbox.md §6. Reads top to bottom like the upstream module: weights → silence trim → mel →
 * partial windows → LSTM → projection and pooling. */
#include "models/chatterbox/voice_encoder.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audio/spectral.h"
#include "base/pool.h"
#include "kernels/kernels.h"

#define NBINS (VX_VE_NFFT / 2 + 1)
#define BATCH 32 /* partials per LSTM batch (upstream's batch_size; results do not depend on it) */

/* ================================================================ weights */

void vx_ve_free(vx_ve *v) {
    if (!v) return;
    if (v->layers)
        for (int k = 0; k < v->nlayers; k++) {
            free(v->layers[k].w_ih);
            free(v->layers[k].w_hh);
            free(v->layers[k].bias);
        }
    free(v->layers);
    free(v->proj_w);
    free(v->proj_b);
    free(v->mel_fb);
    free(v->window);
    free(v);
}

/* Allocate every buffer for the given dims (contents unset) and the fixed front end. */
static vocis_status ve_alloc(int64_t n_mels, int64_t hidden, int64_t emb, int nlayers, vx_ve **out, vx_err *err) {
    *out = NULL;
    if (n_mels < 1 || hidden < 1 || emb < 1 || nlayers < 1 || n_mels > 4096 || hidden > 65536 || emb > 65536)
        return vx_fail(err, VOCIS_E_SHAPE,
                       "voice encoder: unusable dims (n_mels %lld, hidden %lld, emb %lld, %d layers)",
                       (long long)n_mels, (long long)hidden, (long long)emb, nlayers);
    vx_ve *v = vx_calloc(err, 1, sizeof *v, "voice encoder");
    if (!v) return VOCIS_E_NOMEM;
    v->n_mels = n_mels, v->hidden = hidden, v->emb = emb, v->nlayers = nlayers;
    v->layers = vx_calloc(err, (size_t)nlayers, sizeof *v->layers, "voice encoder layers");
    if (!v->layers) goto nomem;
    const size_t g = (size_t)(4 * hidden);
    for (int k = 0; k < nlayers; k++) {
        vx_ve_layer *l = &v->layers[k];
        l->in = k ? hidden : n_mels;
        if (!(l->w_ih = malloc(sizeof(float) * g * (size_t)l->in))) goto nomem;
        if (!(l->w_hh = malloc(sizeof(float) * g * (size_t)hidden))) goto nomem;
        if (!(l->bias = malloc(sizeof(float) * g))) goto nomem;
    }
    if (!(v->proj_w = malloc(sizeof(float) * (size_t)(emb * hidden)))) goto nomem;
    if (!(v->proj_b = malloc(sizeof(float) * (size_t)emb))) goto nomem;
    if (!(v->mel_fb = malloc(sizeof(float) * (size_t)n_mels * NBINS))) goto nomem;
    if (!(v->window = malloc(sizeof(float) * VX_VE_NFFT))) goto nomem;
    vx_window_hann(v->window, VX_VE_NFFT, 1);
    vocis_status st = vx_mel_slaney(v->mel_fb, VX_VE_SR, VX_VE_NFFT, (int)n_mels, 0.0, VX_VE_SR / 2.0, err);
    if (st != VOCIS_OK) {
        vx_ve_free(v);
        return st;
    }
    *out = v;
    return VOCIS_OK;
nomem:
    vx_ve_free(v);
    return vx_fail(err, VOCIS_E_NOMEM, "voice encoder: out of memory");
}

/* PyTorch stores the gates as four blocks of H rows (i, f, g, o); we keep row 4u + g. */
static void interleave_rows(float *dst, const float *src, int64_t hidden, int64_t cols) {
    for (int64_t g = 0; g < 4; g++)
        for (int64_t u = 0; u < hidden; u++)
            memcpy(dst + (size_t)(4 * u + g) * cols, src + (size_t)(g * hidden + u) * cols, sizeof(float) * cols);
}

/* A float tensor of the expected shape converted to a temporary f32 buffer. */
static vocis_status get_f32(const vx_weights *w, int ndim, const int64_t *shape, float **out, vx_tensor *info,
                            vx_err *err, const char *name) {
    vx_tensor t;
    VX_TRY(vx_weights_expect(w, VX_FLOATS, ndim, shape, &t, err, "%s", name));
    size_t n = (size_t)vx_numel(&t);
    float *p = vx_malloc(err, (n ? n : 1) * sizeof(float), name);
    if (!p) return VOCIS_E_NOMEM;
    vx_to_f32(p, t.data, t.dtype, n);
    *out = p;
    if (info) *info = t;
    return VOCIS_OK;
}

static vocis_status load_layer(const vx_weights *w, vx_ve *v, int k, vx_err *err) {
    const int64_t H = v->hidden, G = 4 * H;
    vx_ve_layer *l = &v->layers[k];
    char name[64];
    float *t = NULL, *b2 = NULL;
    vocis_status st;
    snprintf(name, sizeof name, "lstm.weight_ih_l%d", k);
    if ((st = get_f32(w, VX_DIMS(G, l->in), &t, NULL, err, name))) return st;
    interleave_rows(l->w_ih, t, H, l->in);
    free(t);
    snprintf(name, sizeof name, "lstm.weight_hh_l%d", k);
    if ((st = get_f32(w, VX_DIMS(G, H), &t, NULL, err, name))) return st;
    interleave_rows(l->w_hh, t, H, H);
    free(t);
    snprintf(name, sizeof name, "lstm.bias_ih_l%d", k);
    if ((st = get_f32(w, VX_DIMS(G), &t, NULL, err, name))) return st;
    snprintf(name, sizeof name, "lstm.bias_hh_l%d", k);
    if ((st = get_f32(w, VX_DIMS(G), &b2, NULL, err, name))) {
        free(t);
        return st;
    }
    for (int64_t i = 0; i < G; i++) t[i] += b2[i];
    interleave_rows(l->bias, t, H, 1);
    free(t);
    free(b2);
    return VOCIS_OK;
}

vocis_status vx_ve_load(const vx_weights *w, vx_ve **out, vx_err *err) {
    *out = NULL;
    /* dims from the shapes: weight_ih_l0 [4H, n_mels], weight_hh_l0 [4H, H], proj.weight [emb, H] */
    vx_tensor ih, hh, pw;
    VX_TRY(vx_weights_expect(w, VX_FLOATS, VX_DIMS(-1, -1), &ih, err, "lstm.weight_ih_l0"));
    VX_TRY(vx_weights_expect(w, VX_FLOATS, VX_DIMS(-1, -1), &hh, err, "lstm.weight_hh_l0"));
    const int64_t H = hh.shape[1], n_mels = ih.shape[1];
    VX_TRY(vx_weights_expect(w, VX_FLOATS, VX_DIMS(4 * H, H), &hh, err, "lstm.weight_hh_l0"));
    VX_TRY(vx_weights_expect(w, VX_FLOATS, VX_DIMS(4 * H, n_mels), &ih, err, "lstm.weight_ih_l0"));
    VX_TRY(vx_weights_expect(w, VX_FLOATS, VX_DIMS(-1, H), &pw, err, "proj.weight"));
    if (vx_weights_has(w, "lstm.weight_hr_l0") || vx_weights_has(w, "lstm.weight_ih_l0_reverse"))
        return vx_fail(err, VOCIS_E_UNSUPPORTED, "%s: LSTM with proj_size or bidirectional layers is not supported",
                       vx_weights_path(w));
    int nlayers = 0;
    char name[64];
    for (;; nlayers++) {
        snprintf(name, sizeof name, "lstm.weight_ih_l%d", nlayers);
        if (!vx_weights_has(w, name) || nlayers >= 64) break;
    }
    vx_ve *v;
    VX_TRY(ve_alloc(n_mels, H, pw.shape[0], nlayers, &v, err));
    vocis_status st = VOCIS_OK;
    for (int k = 0; k < nlayers && st == VOCIS_OK; k++) st = load_layer(w, v, k, err);
    float *t = NULL;
    if (st == VOCIS_OK && (st = get_f32(w, VX_DIMS(v->emb, H), &t, NULL, err, "proj.weight")) == VOCIS_OK) {
        memcpy(v->proj_w, t, sizeof(float) * (size_t)(v->emb * H));
        free(t);
        if ((st = get_f32(w, VX_DIMS(v->emb), &t, NULL, err, "proj.bias")) == VOCIS_OK) {
            memcpy(v->proj_b, t, sizeof(float) * (size_t)v->emb);
            free(t);
        }
    }
    if (st != VOCIS_OK) {
        vx_ve_free(v);
        return st;
    }
    *out = v;
    return VOCIS_OK;
}

/* ---- random weights (synthetic benchmark) ---- */

static void rand_fill(float *p, size_t n, float a, uint64_t *s) {
    for (size_t i = 0; i < n; i++) {
        *s = *s * 6364136223846793005ull + 1442695040888963407ull;
        p[i] = a * (float)((double)(*s >> 40) / (double)(1ull << 24) * 2.0 - 1.0);
    }
}

vocis_status vx_ve_random(int64_t n_mels, int64_t hidden, int64_t emb, int nlayers, uint64_t seed, vx_ve **out,
                          vx_err *err) {
    VX_TRY(ve_alloc(n_mels, hidden, emb, nlayers, out, err));
    vx_ve *v = *out;
    uint64_t s = seed ^ 0x9e3779b97f4a7c15ull;
    const float a = 1.0f / sqrtf((float)hidden); /* torch's LSTM / Linear init range */
    const size_t G = (size_t)(4 * hidden);
    for (int k = 0; k < nlayers; k++) {
        rand_fill(v->layers[k].w_ih, G * (size_t)v->layers[k].in, a, &s);
        rand_fill(v->layers[k].w_hh, G * (size_t)hidden, a, &s);
        rand_fill(v->layers[k].bias, G, 2 * a, &s);
    }
    rand_fill(v->proj_w, (size_t)(emb * hidden), a, &s);
    rand_fill(v->proj_b, (size_t)emb, a, &s);
    return VOCIS_OK;
}

/* =========================================================== silence trim */

/* Mean square of trim frame f (samples [512 f − 1024, 512 f + 1024), zeros outside the signal). */
static double trim_frame_power(const float *x, int64_t n, int64_t f) {
    int64_t a = f * VX_VE_TRIM_HOP - VX_VE_TRIM_FRAME / 2, b = a + VX_VE_TRIM_FRAME;
    if (a < 0) a = 0;
    if (b > n) b = n;
    double ss = 0;
    for (int64_t i = a; i < b; i++) ss += (double)x[i] * x[i];
    return ss / VX_VE_TRIM_FRAME;
}

/* librosa.effects.trim: frame RMS over 2048 samples every 512 of the signal zero-padded by 1024 on
 * each side (feature.rms, center=True, pad_mode="constant"); a frame is kept when its power is within
 * top_db of the loudest frame's (amplitude_to_db with ref=np.max, amin=1e-5 i.e. 1e-10 on power). */
void vx_ve_trim(const float *x, int64_t n, double top_db, int64_t *start, int64_t *end) {
    *start = *end = 0;
    if (n < 1) return;
    const int64_t nf = 1 + n / VX_VE_TRIM_HOP;
    double pmax = 0; /* two passes (4 reads per sample each) instead of a buffer of frame powers */
    for (int64_t f = 0; f < nf; f++) {
        const double p = trim_frame_power(x, n, f);
        if (p > pmax) pmax = p;
    }
    const double ref = 10.0 * log10(pmax > 1e-10 ? pmax : 1e-10);
    int64_t first = -1, last = -1;
    for (int64_t f = 0; f < nf; f++) {
        const double p = trim_frame_power(x, n, f);
        if (10.0 * log10(p > 1e-10 ? p : 1e-10) - ref > -top_db) {
            if (first < 0) first = f;
            last = f;
        }
    }
    if (first < 0) return;
    *start = first * VX_VE_TRIM_HOP;
    *end = (last + 1) * VX_VE_TRIM_HOP < n ? (last + 1) * VX_VE_TRIM_HOP : n;
}

/* ================================================================== LSTM */

/* ---- gate activations ----
 * σ and tanh from one exp that the compiler vectorises (libm's expf / tanhf calls were a third of
 * the encoder's time): e^x = 2^n · p(r), x = n·ln2 + r, Cephes' degree-7 polynomial, about 1 ulp
 * over the clamped range; tanh x = 2σ(2x) − 1 (absolute error ~1e-7 near 0, relative above).
 * At real dims (random weights, 10 s) the embedding moves by 2e-8 against libm expf / tanhf.
 * GCC if-converts vexp's clamps (and so vectorises the gate loops) only without trapping math; the
 * helpers carry the same options as their callers so that they are inlined. */
#if defined(__GNUC__) && !defined(__clang__)
#define CELL_ATTR __attribute__((optimize("no-trapping-math")))
#define INL __attribute__((always_inline, optimize("no-trapping-math"))) static inline
#else
#define CELL_ATTR
#define INL static inline
#endif

INL float vexp(float x) {
    x = x < -80.0f ? -80.0f : x; /* e^−80 is still normal: no subnormal slow path */
    x = x > 88.0f ? 88.0f : x;
    const float n = (x * 1.44269504088896341f + 12582912.0f) - 12582912.0f; /* round to nearest */
    float r = x - n * 0.693359375f;
    r = r - n * -2.12194440e-4f;
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * (r * r) + (r + 1.0f);
    /* n is in [−116, 127] here, but NaN when x is (NaN weights): its scale must not be an undefined
     * float→int conversion and shift; p is NaN then, so the result stays NaN whatever sc is */
    const int32_t e = (int32_t)((uint32_t)((n == n ? (int32_t)n : 0) + 127) << 23);
    float sc;
    memcpy(&sc, &e, sizeof sc);
    return p * sc;
}

INL float sigm(float x) { return 1.0f / (1.0f + vexp(-x)); }
INL float tanh_(float x) { return 2.0f / (1.0f + vexp(-2.0f * x)) - 1.0f; }

/* One step's gate math for one sequence and units [0, nu) of a thread's range:
 * z [4·nu] pre-activations (unit-interleaved i, f, g, o; clobbered), c, h [nu]. */
#define LSTM_CELL_BODY                                                                                      \
    /* σ on i, f, o and tanh on g = 2σ(2x) − 1: a = k·σ(k·z) − (k − 1), k = 2 on g */                       \
    for (int64_t j = 0; j < 4 * nu; j++) {                                                                  \
        const float k = (j & 3) == 2 ? 2.0f : 1.0f;                                                         \
        z[j] = k * sigm(k * z[j]) - (k - 1.0f);                                                             \
    }                                                                                                       \
    if (first)                                                                                              \
        for (int64_t u = 0; u < nu; u++) c[u] = z[4 * u] * z[4 * u + 2];                                    \
    else                                                                                                    \
        for (int64_t u = 0; u < nu; u++) c[u] = z[4 * u + 1] * c[u] + z[4 * u] * z[4 * u + 2];              \
    for (int64_t u = 0; u < nu; u++) h[u] = z[4 * u + 3] * tanh_(c[u]);

CELL_ATTR static void lstm_cell(float *restrict z, float *restrict c, float *restrict h, int64_t nu, int first) {
    LSTM_CELL_BODY
}

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
/* the same loops compiled for AVX2 (8 lanes instead of SSE's 4), chosen at run time */
CELL_ATTR __attribute__((target("avx2,fma"))) static void lstm_cell_avx2(float *restrict z, float *restrict c,
                                                                        float *restrict h, int64_t nu, int first) {
    LSTM_CELL_BODY
}
#define HAVE_CELL_AVX2 1
#endif

/* One LSTM layer over T steps for B sequences, time-major.
 * gx [T][B][4H]: x_t·W_ihᵀ + b_ih + b_hh on entry (clobbered); hseq [T][B][H]: h_t on exit;
 * c [B][H]: cell state; ys [B][4H]: scratch. Zero initial state.
 * Each step is one pool region over slices of LSTM_SLICE hidden units, i.e. of the interleaved gate
 * rows: a slice of h_{t−1}·W_hhᵀ and the gate math per chunk; the region ends before h_t is read
 * whole. The slices are fixed, whatever the thread count.
 * The slice product uses vx_linear's streaming tiles: sgemm repacked the W_hh slice at every step
 * (a sixth of the time). Splitting the sequences over the threads instead needs no barrier but gives
 * each thread half the rows against all of W_hh: 66 vs 46 ms with sgemm at real dims, 12 partials,
 * 2 threads (this version: 20 ms). */
enum { LSTM_SLICE = 32 }; /* hidden units per chunk: 128 gate rows, whole SIMD vectors */

typedef struct {
    const vx_ve_layer *l;
    void (*cell)(float *, float *, float *, int64_t, int);
    float *gx, *hseq, *c, *ys;
    int64_t H, B, t;
} lstm_step_job;

/* Slice s of step t: z[:, 4u0:4u1] += h_{t−1} · W_hh[4u0:4u1]ᵀ, then the cells of units [u0, u1). */
static void lstm_slice(void *ctx, int64_t s) {
    const lstm_step_job *j = ctx;
    const int64_t H = j->H, B = j->B, G = 4 * H, t = j->t;
    const int64_t u0 = s * LSTM_SLICE, u1 = u0 + LSTM_SLICE < H ? u0 + LSTM_SLICE : H, nu = u1 - u0;
    float *z = j->gx + (size_t)(t * B) * G;
    float *h = j->hseq + (size_t)(t * B) * H;
    if (t > 0) {
        const vx_mat Wt = {VX_F32, 4 * nu, H, j->l->w_hh + (size_t)(4 * u0) * H};
        float *y = j->ys + B * 4 * u0; /* [B][4·nu] */
        vx_linear(y, h - B * H, B, &Wt, NULL, 1);
        for (int64_t b = 0; b < B; b++) vx_add(z + b * G + 4 * u0, y + b * 4 * nu, 4 * nu);
    }
    for (int64_t b = 0; b < B; b++) j->cell(z + b * G + 4 * u0, j->c + b * H + u0, h + b * H + u0, nu, t == 0);
}

static void lstm_layer(const vx_ve_layer *l, int64_t H, float *gx, float *hseq, float *c, float *ys, int64_t T,
                       int64_t B, int nthreads) {
    const int64_t G = 4 * H;
    /* below ~0.25 MFLOP per step a second thread costs more than it saves */
    if ((double)B * G * H < 1.25e5) nthreads = 1;
#ifdef HAVE_CELL_AVX2
    void (*cell)(float *, float *, float *, int64_t, int) = vx_cpu_has_avx2() ? lstm_cell_avx2 : lstm_cell;
#else
    void (*cell)(float *, float *, float *, int64_t, int) = lstm_cell;
#endif
    lstm_step_job j = {l, cell, gx, hseq, c, ys, H, B, 0};
    for (j.t = 0; j.t < T; j.t++) vx_pool_run(nthreads, (H + LSTM_SLICE - 1) / LSTM_SLICE, lstm_slice, &j);
}

/* Embeddings of B partials: x [160][B][n_mels] (time-major) → e [B][emb] = L2(ReLU(proj(h_last))). */
static void lstm_embed(const vx_ve *v, const float *x, int64_t B, float *gx, float *hseq, float *c, float *ys,
                       float *e, int nthreads) {
    const int64_t T = VX_VE_PARTIAL, H = v->hidden, G = 4 * H;
    for (int k = 0; k < v->nlayers; k++) {
        const vx_ve_layer *l = &v->layers[k];
        const vx_mat W = {VX_F32, G, l->in, l->w_ih};
        /* input projection of every time step at once; layer k > 0 reads layer k−1's h sequence,
         * which is consumed here before lstm_layer overwrites it */
        vx_linear(gx, k ? hseq : x, T * B, &W, l->bias, nthreads);
        lstm_layer(l, H, gx, hseq, c, ys, T, B, nthreads);
    }
    const vx_mat P = {VX_F32, v->emb, H, v->proj_w};
    vx_linear(e, hseq + (size_t)((T - 1) * B) * H, B, &P, v->proj_b, nthreads);
    for (int64_t b = 0; b < B; b++) {
        float *eb = e + b * v->emb;
        double ss = 0;
        for (int64_t j = 0; j < v->emb; j++) {
            if (eb[j] < 0) eb[j] = 0;
            ss += (double)eb[j] * eb[j];
        }
        /* upstream divides by zero (NaN) for an all-zero ReLU output; we leave the zeros */
        if (ss > 0) {
            const float norm = (float)sqrt(ss);
            for (int64_t j = 0; j < v->emb; j++) eb[j] /= norm;
        }
    }
}

/* ============================================================== embedding */

void vx_ve_trace_free(vx_ve_trace *t) {
    if (!t) return;
    free(t->mel);
    free(t->partials);
    free(t->partial_embeds);
    memset(t, 0, sizeof *t);
}

/* get_frame_step(rate) and get_num_wins(T, step, min_coverage). */
static int64_t frame_step(void) { return (int64_t)rint(((double)VX_VE_SR / VX_VE_RATE) / VX_VE_PARTIAL); }

static int64_t num_wins(int64_t T, int64_t step, int64_t *target) {
    const int64_t win = VX_VE_PARTIAL, m = T - win + step > 0 ? T - win + step : 0;
    int64_t n = m / step;
    const int64_t r = m % step;
    if (n == 0 || (double)(r + win - step) / win >= VX_VE_MIN_COVERAGE) n++;
    *target = win + step * (n - 1);
    return n;
}

vocis_status vx_ve_embed(const vx_ve *v, const float *wav, int64_t n, float *speaker_emb, vx_ve_trace *trace,
                         int nthreads, vx_err *err) {
    if (trace) memset(trace, 0, sizeof *trace);
    if (nthreads < 1) nthreads = 1;
    if (!wav || n < 1) return vx_fail(err, VOCIS_E_INVALID, "voice encoder: the reference audio is empty");
    float amax = 0;
    for (int64_t i = 0; i < n; i++) {
        if (!isfinite(wav[i]))
            return vx_fail(err, VOCIS_E_INVALID, "voice encoder: reference sample %lld is not finite", (long long)i);
        const float a = fabsf(wav[i]);
        if (a > amax) amax = a;
    }
    if (amax == 0)
        return vx_fail(err, VOCIS_E_INVALID, "voice encoder: the reference audio is silent (all %lld samples are zero)",
                       (long long)n);

    /* librosa.effects.trim(top_db=20) */
    int64_t s0, s1;
    vx_ve_trim(wav, n, VX_VE_TRIM_TOP_DB, &s0, &s1);
    const int64_t L = s1 - s0;
    if (L <= VX_VE_NFFT / 2)
        return vx_fail(err, VOCIS_E_INVALID,
                       "voice encoder: the reference audio is too short: %lld samples after trimming silence "
                       "(need more than %d at 16 kHz)",
                       (long long)L, VX_VE_NFFT / 2);

    /* mel: |STFT|² (centred, reflect, periodic Hann 400, hop 160) · Slaney filterbank → [T][n_mels] */
    const vx_frames_spec fs = {VX_VE_NFFT, VX_VE_NFFT, VX_VE_HOP, 1, 0, v->window};
    const int64_t T = vx_frames_count(&fs, L), M = v->n_mels, H = v->hidden, E = v->emb;
    const int64_t step = frame_step();
    int64_t target;
    const int64_t N = num_wins(T, step, &target);
    const int64_t Bmax = N < BATCH ? N : BATCH;
    vocis_status st = VOCIS_OK;
    float *spec = NULL, *mel = NULL, *x = NULL, *gx = NULL, *hseq = NULL, *c = NULL, *ys = NULL, *pe = NULL;
    /* mel rows past T (up to the window grid) stay zero */
    const int64_t rows = target > T ? target : T;
    spec = malloc(sizeof(float) * (size_t)(T * NBINS));
    mel = calloc((size_t)(rows * M), sizeof(float));
    x = malloc(sizeof(float) * (size_t)(VX_VE_PARTIAL * Bmax * M));
    gx = malloc(sizeof(float) * (size_t)(VX_VE_PARTIAL * Bmax * 4 * H));
    hseq = malloc(sizeof(float) * (size_t)(VX_VE_PARTIAL * Bmax * H));
    c = malloc(sizeof(float) * (size_t)(Bmax * H));
    ys = malloc(sizeof(float) * (size_t)(Bmax * 4 * H));
    pe = malloc(sizeof(float) * (size_t)(N * E));
    if (!spec || !mel || !x || !gx || !hseq || !c || !ys || !pe) {
        st = vx_fail(err, VOCIS_E_NOMEM, "voice encoder: out of memory (%lld mel frames)", (long long)T);
        goto done;
    }
    if ((st = vx_spectrum(wav + s0, L, &fs, VX_SPEC_POWER, 0, T, spec, nthreads, err))) goto done;
    vx_mel_apply(mel, spec, T, v->mel_fb, (int)M, NBINS, nthreads);
    free(spec);
    spec = NULL;

    /* partial i = frames [step·i, step·i + 160); LSTM in batches of up to BATCH partials */
    for (int64_t p0 = 0; p0 < N; p0 += Bmax) {
        const int64_t B = N - p0 < Bmax ? N - p0 : Bmax;
        for (int64_t t = 0; t < VX_VE_PARTIAL; t++) /* x: [160][B][n_mels] */
            for (int64_t b = 0; b < B; b++)
                memcpy(x + (size_t)((t * B + b) * M), mel + (size_t)(((p0 + b) * step + t) * M), sizeof(float) * M);
        lstm_embed(v, x, B, gx, hseq, c, ys, pe + p0 * E, nthreads);
    }

    /* utterance embedding: L2(mean of the partial embeddings) */
    {
        double ss = 0;
        for (int64_t j = 0; j < E; j++) {
            double m = 0;
            for (int64_t i = 0; i < N; i++) m += pe[i * E + j];
            speaker_emb[j] = (float)(m / (double)N);
            ss += (double)speaker_emb[j] * speaker_emb[j];
        }
        if (!isfinite(ss)) {
            st = vx_fail(err, VOCIS_E_INVALID,
                         "voice encoder: the speaker embedding is non-finite (NaN or infinite weights?)");
            goto done;
        }
        if (!(ss > 0)) {
            st = vx_fail(err, VOCIS_E_INVALID, "voice encoder: the speaker embedding is all zero (no usable speech?)");
            goto done;
        }
        const float norm = (float)sqrt(ss);
        for (int64_t j = 0; j < E; j++) speaker_emb[j] /= norm;
    }

    if (trace) {
        trace->trim_start = s0, trace->trim_end = s1;
        trace->n_frames = T, trace->n_partials = N;
        trace->partials = malloc(sizeof(float) * (size_t)(N * VX_VE_PARTIAL * M));
        if (!trace->partials) {
            st = vx_fail(err, VOCIS_E_NOMEM, "voice encoder: out of memory for the trace");
            goto done;
        }
        for (int64_t i = 0; i < N; i++)
            memcpy(trace->partials + (size_t)(i * VX_VE_PARTIAL * M), mel + (size_t)(i * step * M),
                   sizeof(float) * (size_t)(VX_VE_PARTIAL * M));
        trace->mel = mel, mel = NULL; /* [T][n_mels]: the rows past T are just not looked at */
        trace->partial_embeds = pe, pe = NULL;
    }
done:
    if (st != VOCIS_OK && trace) vx_ve_trace_free(trace);
    free(spec), free(mel), free(x), free(gx), free(hseq), free(c), free(ys), free(pe);
    return st;
}
