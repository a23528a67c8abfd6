/* Kaldi fbank vs a direct float64 reference (odd length, two sample rates), its edge cases, and
 * CAMPPlus with random weights: input-length limits, finiteness, thread-count independence. */
#include <float.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "audio/fbank.h"
#include "io/safetensors.h"
#include "models/chatterbox/campplus.h"
#include "testlib.h"

/* torchaudio.compliance.kaldi.fbank defaults, everything in double, O(N²) DFT. */
static void fbank_ref(const float *x, int64_t n, int sr, int nbins, double *out, int64_t *frames) {
    const int win = (int)(sr * 0.025), shift = (int)(sr * 0.010);
    int nfft = 1;
    while (nfft < win) nfft *= 2;
    const int64_t nf = 1 + (n - win) / shift;
    const double mlo = 1127.0 * log(1.0 + 20.0 / 700.0), mhi = 1127.0 * log(1.0 + 0.5 * sr / 700.0);
    const double dm = (mhi - mlo) / (nbins + 1);
    double *fr = malloc(sizeof(double) * (size_t)nfft), *pw = malloc(sizeof(double) * (size_t)(nfft / 2 + 1));
    for (int64_t f = 0; f < nf; f++) {
        const float *s = x + f * shift;
        double mean = 0;
        for (int j = 0; j < win; j++) mean += s[j];
        mean /= win;
        for (int j = 0; j < nfft; j++) {
            if (j >= win) {
                fr[j] = 0;
                continue;
            }
            const double cur = s[j] - mean, prev = (j ? s[j - 1] : s[0]) - mean;
            const double w = pow(0.5 - 0.5 * cos(2 * M_PI * j / (win - 1)), 0.85);
            fr[j] = (cur - 0.97 * prev) * w;
        }
        for (int k = 0; k <= nfft / 2; k++) {
            double re = 0, im = 0;
            for (int j = 0; j < win; j++) {
                re += fr[j] * cos(2 * M_PI * (double)j * k / nfft);
                im -= fr[j] * sin(2 * M_PI * (double)j * k / nfft);
            }
            pw[k] = re * re + im * im;
        }
        for (int b = 0; b < nbins; b++) {
            const double l = mlo + b * dm, c = l + dm, r = c + dm;
            double e = 0;
            for (int k = 0; k < nfft / 2; k++) { /* the Nyquist bin has weight 0 */
                const double m = 1127.0 * log(1.0 + (double)k * sr / nfft / 700.0);
                double wt = fmin((m - l) / (c - l), (r - m) / (r - c));
                if (wt > 0) e += wt * pw[k];
            }
            out[f * nbins + b] = log(fmax(e, FLT_EPSILON));
        }
    }
    *frames = nf;
    free(fr);
    free(pw);
}

static void check_fbank(int sr, int64_t n, int nbins) {
    float *x = malloc(sizeof(float) * (size_t)n);
    tl_fill_random(x, (size_t)n, 7);
    for (int64_t i = 0; i < n; i++) x[i] = 0.1f * x[i] + 0.3f * (float)sin(2 * M_PI * 440.0 * i / sr) + 0.05f;
    vx_err err = {0};
    float *fb = NULL;
    int64_t m = 0;
    vocis_status st = vx_kaldi_fbank(x, n, sr, nbins, &fb, &m, 2, &err);
    CHECK_MSG(st == VOCIS_OK, "%s", err.msg);
    double *ref = malloc(sizeof(double) * (size_t)(m > 0 ? m : 1) * nbins);
    int64_t mr = 0;
    fbank_ref(x, n, sr, nbins, ref, &mr);
    CHECK_MSG(m == mr, "frames %lld vs %lld", (long long)m, (long long)mr);
    double worst = 0;
    for (int64_t i = 0; st == VOCIS_OK && m == mr && i < m * nbins; i++) worst = fmax(worst, fabs(fb[i] - ref[i]));
    printf("  fbank %d Hz, %lld samples, %d bins: %lld frames, max |diff| vs float64 %.3g\n", sr, (long long)n, nbins,
           (long long)m, worst);
    CHECK_MSG(worst < 2e-4, "fbank max |diff| %.3g", worst);
    free(fb);
    free(ref);
    free(x);
}

static void test_fbank_edges(void) {
    vx_err err = {0};
    float x[400] = {0};
    float *fb = (float *)1;
    int64_t m = -1;
    CHECK(vx_kaldi_fbank(x, 399, 16000, 80, &fb, &m, 1, &err) == VOCIS_E_INVALID);
    CHECK(fb == NULL && m == 0);
    CHECK_MSG(strstr(err.msg, "too short") != NULL, "%s", err.msg);
    CHECK(vx_kaldi_fbank(x, 0, 16000, 80, &fb, &m, 1, &err) == VOCIS_E_INVALID);
    /* exactly one frame of silence: every bin at log(FLT_EPSILON) */
    CHECK(vx_kaldi_fbank(x, 400, 16000, 80, &fb, &m, 1, &err) == VOCIS_OK);
    CHECK(m == 1);
    for (int b = 0; fb && b < 80; b++) CHECK(fabsf(fb[b] - logf(FLT_EPSILON)) < 1e-6f);
    free(fb);
    vx_fbank_geom g;
    CHECK(vx_kaldi_fbank_geom(16000, &g, &err) == VOCIS_OK && g.win == 400 && g.shift == 160 && g.n_fft == 512);
    CHECK(vx_kaldi_fbank_frames(&g, 68800) == 428);
    CHECK(vx_kaldi_fbank_geom(0, &g, &err) == VOCIS_E_ARG);
}

static void test_campplus_random(void) {
    vx_err err = {0};
    vx_campplus *c = NULL;
    vocis_status st = vx_campplus_random(16, 4, 2, 12, 3, &c, &err);
    CHECK_MSG(st == VOCIS_OK, "%s", err.msg);
    if (st) return;
    CHECK(vx_campplus_emb_dim(c) == 12);
    const int64_t n = 16000 + 333;
    float *x = malloc(sizeof(float) * (size_t)n), a[12], b[12];
    tl_fill_random(x, (size_t)n, 11);
    float *fb = NULL;
    int64_t m = 0;
    CHECK((st = vx_campplus_embed(c, x, n, a, &fb, &m, 1, &err)) == VOCIS_OK);
    CHECK(m == 1 + (n - 400) / 160);
    int finite = 1;
    for (int i = 0; i < 12; i++) finite &= isfinite(a[i]) != 0;
    CHECK(finite);
    /* mean-normalised: every bin sums to ~0 over time */
    double worst = 0;
    for (int f = 0; fb && f < 80; f++) {
        double s = 0;
        for (int64_t t = 0; t < m; t++) s += fb[t * 80 + f];
        worst = fmax(worst, fabs(s / m));
    }
    CHECK_MSG(worst < 1e-5, "fbank time-mean %.3g", worst);
    free(fb);
    CHECK(vx_campplus_embed(c, x, n, b, NULL, NULL, 2, &err) == VOCIS_OK);
    CHECK_CLOSE(a, b, 12, 1e-5);
    /* 8 s: 399 frames after the TDNN, so the head runs in several pieces per thread and the trunk
     * in slabs that cut through the 100-frame CAM segments; the partition must not matter */
    const int64_t n8 = 8 * 16000;
    float *x8 = malloc(sizeof(float) * (size_t)n8);
    tl_fill_random(x8, (size_t)n8, 12);
    CHECK(vx_campplus_embed(c, x8, n8, a, NULL, NULL, 1, &err) == VOCIS_OK);
    for (int nt = 2; nt <= 5; nt += 3) { /* the slabs do not depend on the thread count: the same bits */
        CHECK(vx_campplus_embed(c, x8, n8, b, NULL, NULL, nt, &err) == VOCIS_OK);
        CHECK_MSG(memcmp(a, b, sizeof(float) * 12) == 0, "8 s embedding, %d threads vs 1", nt);
    }
    free(x8);
    /* shortest input: 720 samples (3 frames, 2 after the TDNN); one less is rejected */
    CHECK(vx_campplus_embed(c, x, VX_CAMPPLUS_MIN_SAMPLES, a, NULL, NULL, 1, &err) == VOCIS_OK);
    CHECK(vx_campplus_embed(c, x, VX_CAMPPLUS_MIN_SAMPLES - 1, a, NULL, NULL, 1, &err) == VOCIS_E_INVALID);
    CHECK_MSG(strstr(err.msg, "too short") != NULL, "%s", err.msg);
    CHECK(vx_campplus_embed(c, NULL, 0, a, NULL, NULL, 1, &err) == VOCIS_E_INVALID);
    free(x);
    vx_campplus_free(c);
    CHECK(vx_campplus_random(0, 4, 2, 12, 3, &c, &err) == VOCIS_E_ARG && c == NULL);
}

/* Tiny checkpoint, golden reference audio twice over (T' = 429 frames): the frame-level trunk output
 * must not depend on how threads split the time axis (slab edges, head pieces, segment cuts). */
static void test_partition(void) {
    vx_err err = {0};
    vx_weights *w = NULL;
    vx_st_file *in = NULL;
    vx_campplus *c = NULL;
    if (vx_weights_open(tl_path("chatterbox/ckpt/s3gen.safetensors"), &w, &err) ||
        vx_campplus_load(w, NULL, &c, &err) ||
        vx_st_open(tl_path("chatterbox/golden/01_audio_inputs.safetensors"), &in, &err)) {
        CHECK_MSG(0, "%s", err.msg);
        goto out;
    }
    const vx_tensor *t = vx_st_find(in, "ref_16k_torchaudio");
    CHECK(t && t->dtype == VX_F32);
    if (!t || t->dtype != VX_F32) goto out;
    const int64_t n1 = vx_numel(t), n = 2 * n1;
    float *x = malloc(sizeof(float) * (size_t)n), xv[512];
    memcpy(x, t->data, sizeof(float) * (size_t)n1);
    memcpy(x + n1, t->data, sizeof(float) * (size_t)n1);
    float *fb = NULL, *ref = NULL, *got = NULL;
    int64_t m = 0, C = 0, T = 0, C2, T2;
    CHECK(vx_campplus_emb_dim(c) <= 512);
    CHECK(vx_campplus_embed(c, x, n, xv, &fb, &m, 1, &err) == VOCIS_OK);
    CHECK(vx_campplus_frames(c, fb, m, &ref, &C, &T, 1, &err) == VOCIS_OK);
    CHECK(T == (m - 1) / 2 + 1 && T > 320);
    for (int nt = 2; ref && nt <= 7; nt += 5) {
        CHECK(vx_campplus_frames(c, fb, m, &got, &C2, &T2, nt, &err) == VOCIS_OK);
        CHECK(C2 == C && T2 == T);
        if (got && C2 == C && T2 == T) {
            printf("  frame-level output, %d threads vs 1: max |diff| %.3g\n", nt,
                   tl_max_abs_diff(ref, got, (size_t)(C * T)));
            CHECK_MSG(memcmp(ref, got, sizeof(float) * (size_t)(C * T)) == 0, "frame-level output, %d threads vs 1", nt);
        }
        free(got);
        got = NULL;
    }
    free(ref);
    free(fb);
    free(x);
out:
    vx_campplus_free(c);
    vx_st_close(in);
    vx_weights_close(w);
}

int main(int argc, char **argv) {
    if (argc > 1) tl_data_dir = argv[1];
    check_fbank(16000, 16000 / 3 + 77, 80);
    check_fbank(8000, 2001, 23);
    test_fbank_edges();
    test_campplus_random();
    test_partition();
    return tl_finish("test_campplus");
}
