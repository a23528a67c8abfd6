/* stcompare GOLDEN.safetensors OUT.safetensors NAME[=GOLDEN_NAME]:ATOL ...
 * Compares tensors of OUT against GOLDEN (float: max |diff| <= ATOL; integer:
 * exact when ATOL is "exact"). Shapes must match. Exit 0 when all pass.
 * stcompare --print FILE NAME prints a tensor's values space-separated.
 * stcompare --wav OUT.wav GOLDEN NAME ATOL compares an audio file's samples
 * (read as float) against a tensor; stcompare --raw OUT.f32 GOLDEN NAME ATOL
 * the same for raw little-endian float32 PCM.
 * ATOL may also be relN (max |diff| <= N · max |golden|) or snrN (signal-to-
 * noise ratio 10·log10(Σgolden² / Σdiff²) >= N dB), for the fast precision modes.
 * stcompare --snr-wav A.wav B.wav DB: the SNR of B against A (same length). */
#include "io/safetensors.h"

#include <math.h>
#include <sndfile.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double value_at(const vx_tensor *t, int64_t i) {
    switch (t->dtype) {
    case VX_F32: return ((const float *)t->data)[i];
    case VX_F16: return vx_f16_to_f32(((const uint16_t *)t->data)[i]);
    case VX_BF16: return vx_bf16_to_f32(((const uint16_t *)t->data)[i]);
    case VX_I64: return (double)((const int64_t *)t->data)[i];
    case VX_I32: return ((const int32_t *)t->data)[i];
    case VX_I16: return ((const int16_t *)t->data)[i];
    case VX_I8: return ((const int8_t *)t->data)[i];
    default: return ((const uint8_t *)t->data)[i];
    }
}

static int print_tensor(const char *path, const char *name) {
    vx_err err = {0};
    vx_st_file *f;
    if (vx_st_open(path, &f, &err)) {
        fprintf(stderr, "stcompare: %s\n", err.msg);
        return 2;
    }
    const vx_tensor *t = vx_st_find(f, name);
    if (!t) {
        fprintf(stderr, "stcompare: %s: no tensor '%s'\n", path, name);
        vx_st_close(f);
        return 2;
    }
    int64_t n = vx_numel(t);
    for (int64_t i = 0; i < n; i++) printf(i ? " %.9g" : "%.9g", value_at(t, i));
    printf("\n");
    vx_st_close(f);
    return 0;
}

static int compare_wav(const char *wav, const char *golden, const char *name, double atol) {
    SF_INFO info = {0};
    SNDFILE *sf = sf_open(wav, SFM_READ, &info);
    if (!sf) {
        fprintf(stderr, "stcompare: %s: %s\n", wav, sf_strerror(NULL));
        return 2;
    }
    float *x = malloc(sizeof(float) * (size_t)(info.frames ? info.frames : 1));
    sf_count_t n = x ? sf_readf_float(sf, x, info.frames) : 0;
    sf_close(sf);
    vx_err err = {0};
    vx_st_file *g;
    if (vx_st_open(golden, &g, &err)) {
        fprintf(stderr, "stcompare: %s\n", err.msg);
        return 2;
    }
    const vx_tensor *t = vx_st_find(g, name);
    int rc = 1;
    if (!t || info.channels != 1 || n != vx_numel(t)) {
        printf("FAIL %s: %lld samples x %d channels vs golden %lld\n", wav, (long long)n, info.channels,
               t ? (long long)vx_numel(t) : -1LL);
    } else {
        double m = 0;
        for (sf_count_t i = 0; i < n; i++) {
            double d = (double)x[i] - value_at(t, i);
            d = d < 0 ? -d : d;
            if (d != d || d > m) m = d != d ? 1e300 : d;
        }
        rc = m <= atol ? 0 : 1;
        printf("%s %s vs %s: max |diff| %.3g (tol %g, %lld samples at %d Hz)\n", rc ? "FAIL" : "ok  ", wav, name, m,
               atol, (long long)n, info.samplerate);
    }
    free(x);
    vx_st_close(g);
    return rc;
}

static int compare_raw(const char *raw, const char *golden, const char *name, double atol) {
    FILE *f = fopen(raw, "rb");
    vx_err err = {0};
    vx_st_file *g = NULL;
    if (!f || vx_st_open(golden, &g, &err)) {
        fprintf(stderr, "stcompare: cannot open %s / %s %s\n", raw, golden, err.msg);
        if (f) fclose(f);
        return 2;
    }
    const vx_tensor *t = vx_st_find(g, name);
    int64_t n = 0, nt = t ? vx_numel(t) : -1;
    double m = 0;
    float x;
    while (fread(&x, sizeof x, 1, f) == 1) {
        if (n < nt) {
            double d = (double)x - value_at(t, n);
            d = d < 0 ? -d : d;
            if (d != d || d > m) m = d != d ? 1e300 : d;
        }
        n++;
    }
    fclose(f);
    int rc = n != nt || m > atol;
    printf("%s %s vs %s: %lld samples (golden %lld), max |diff| %.3g (tol %g)\n", rc ? "FAIL" : "ok  ", raw, name,
           (long long)n, (long long)nt, m, atol);
    vx_st_close(g);
    return rc;
}

static float *read_wav(const char *path, sf_count_t *n) {
    SF_INFO info = {0};
    SNDFILE *sf = sf_open(path, SFM_READ, &info);
    if (!sf || info.channels != 1) {
        fprintf(stderr, "stcompare: %s: not a mono audio file\n", path);
        if (sf) sf_close(sf);
        return NULL;
    }
    float *x = malloc(sizeof(float) * (size_t)(info.frames ? info.frames : 1));
    *n = x ? sf_readf_float(sf, x, info.frames) : 0;
    sf_close(sf);
    return x;
}

static int compare_snr_wav(const char *a, const char *b, double db) {
    sf_count_t na = 0, nb = 0;
    float *x = read_wav(a, &na), *y = read_wav(b, &nb);
    int rc = 2;
    if (x && y) {
        double s = 0, e = 0;
        for (sf_count_t i = 0; i < na && i < nb; i++) {
            s += (double)x[i] * x[i];
            e += ((double)y[i] - x[i]) * ((double)y[i] - x[i]);
        }
        double snr = e > 0 ? 10 * log10(s / e) : 999;
        rc = na == nb && snr >= db ? 0 : 1;
        printf("%s %s vs %s: %lld vs %lld samples, SNR %.1f dB (min %g)\n", rc ? "FAIL" : "ok  ", b, a,
               (long long)nb, (long long)na, snr, db);
    }
    free(x);
    free(y);
    return rc;
}

int main(int argc, char **argv) {
    if (argc == 5 && strcmp(argv[1], "--snr-wav") == 0) return compare_snr_wav(argv[2], argv[3], atof(argv[4]));
    if (argc == 4 && strcmp(argv[1], "--print") == 0) return print_tensor(argv[2], argv[3]);
    if (argc == 6 && strcmp(argv[1], "--wav") == 0) return compare_wav(argv[2], argv[3], argv[4], atof(argv[5]));
    if (argc == 6 && strcmp(argv[1], "--raw") == 0) return compare_raw(argv[2], argv[3], argv[4], atof(argv[5]));
    if (argc < 4) {
        fprintf(stderr, "usage: stcompare GOLDEN OUT NAME[=GOLDEN_NAME]:ATOL|exact ...\n");
        return 2;
    }
    vx_err err = {0};
    vx_st_file *g, *o;
    if (vx_st_open(argv[1], &g, &err) || vx_st_open(argv[2], &o, &err)) {
        fprintf(stderr, "stcompare: %s\n", err.msg);
        return 2;
    }
    int fails = 0;
    for (int a = 3; a < argc; a++) {
        char spec[512];
        snprintf(spec, sizeof spec, "%s", argv[a]);
        char *colon = strrchr(spec, ':');
        if (!colon) {
            fprintf(stderr, "stcompare: bad spec '%s'\n", argv[a]);
            return 2;
        }
        *colon = '\0';
        const char *tol_s = colon + 1;
        int exact = strcmp(tol_s, "exact") == 0;
        int rel = strncmp(tol_s, "rel", 3) == 0, snr = strncmp(tol_s, "snr", 3) == 0;
        double atol = exact ? 0 : atof(tol_s + (rel || snr ? 3 : 0));
        char *eq = strchr(spec, '=');
        const char *oname = spec, *gname = spec;
        if (eq) {
            *eq = '\0';
            gname = eq + 1;
        }
        const vx_tensor *gt = vx_st_find(g, gname), *ot = vx_st_find(o, oname);
        if (!gt || !ot) {
            fprintf(stderr, "FAIL %s: missing in %s\n", oname, !gt ? "golden" : "output");
            fails++;
            continue;
        }
        int same = gt->ndim == ot->ndim;
        for (int d = 0; same && d < gt->ndim; d++) same = gt->shape[d] == ot->shape[d];
        if (!same) {
            char s1[128], s2[128];
            fprintf(stderr, "FAIL %s: shape %s vs golden %s\n", oname, vx_shape_str(ot, s1, sizeof s1),
                    vx_shape_str(gt, s2, sizeof s2));
            fails++;
            continue;
        }
        int64_t n = vx_numel(gt), worst = 0;
        double m = 0, gmax = 0, sig = 0, noise = 0;
        for (int64_t i = 0; i < n; i++) {
            double x = value_at(ot, i), y = value_at(gt, i);
            double d = (x == y) ? 0 : (x - y < 0 ? y - x : x - y);
            if (d != d) d = 1e300;
            if (d > m) {
                m = d;
                worst = i;
            }
            gmax = y > gmax ? y : -y > gmax ? -y : gmax;
            sig += y * y;
            noise += d * d;
        }
        char extra[96] = "";
        int ok = exact ? m == 0 : m <= atol;
        if (rel) {
            ok = m <= atol * gmax;
            snprintf(extra, sizeof extra, ", %.3g of max |golden| %.3g", gmax > 0 ? m / gmax : 0.0, gmax);
        } else if (snr) {
            double db = noise > 0 ? 10 * log10(sig / noise) : 999;
            ok = db >= atol;
            snprintf(extra, sizeof extra, ", SNR %.1f dB", db);
        }
        printf("%s %s: max |diff| %.3g (tol %s)%s\n", ok ? "ok  " : "FAIL", oname, m, tol_s, extra);
        if (!ok) {
            printf("     worst at %lld: %.9g vs golden %.9g\n", (long long)worst, value_at(ot, worst),
                   value_at(gt, worst));
            fails++;
        }
    }
    vx_st_close(g);
    vx_st_close(o);
    return fails ? 1 : 0;
}
