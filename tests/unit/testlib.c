#include "testlib.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tensor/tensor.h"

int tl_failures = 0;
const char *tl_data_dir = "tests/data";

double tl_max_abs_diff(const float *a, const float *b, size_t n) {
    double m = 0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)a[i] - (double)b[i]);
        if (isnan(d)) return INFINITY;
        if (d > m) m = d;
    }
    return m;
}

void tl_check_close(const char *file, int line, const char *what, const float *a, const float *b, size_t n,
                    double atol) {
    size_t worst = 0;
    double m = -1;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)a[i] - (double)b[i]);
        if (isnan(d)) d = INFINITY;
        if (d > m) {
            m = d;
            worst = i;
        }
    }
    if (n && m > atol) {
        fprintf(stderr, "%s:%d: %s: max |diff| %.3g > %.3g at %zu (%.8g vs %.8g)\n", file, line, what, m, atol,
                worst, a[worst], b[worst]);
        tl_failures++;
    }
}

const char *tl_path(const char *rel) {
    static char buf[4096];
    snprintf(buf, sizeof buf, "%s/%s", tl_data_dir, rel);
    return buf;
}

void tl_fill_random(float *x, size_t n, unsigned seed) {
    uint64_t s = seed * 6364136223846793005ull + 1442695040888963407ull;
    for (size_t i = 0; i < n; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        x[i] = (float)((double)(s >> 40) / (double)(1ull << 24) * 2.0 - 1.0);
    }
}

float *tl_random_floats(size_t n) {
    static unsigned seed = 1;
    float *x = malloc((n ? n : 1) * sizeof(float));
    if (x) tl_fill_random(x, n, seed++);
    return x;
}

unsigned char *tl_slurp(const char *path, size_t *n) {
    FILE *fp = fopen(path, "rb");
    *n = 0;
    if (!fp) return NULL;
    fseek(fp, 0, SEEK_END);
    long len = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    unsigned char *b = malloc(len > 0 ? (size_t)len : 1);
    if (b && len >= 0 && fread(b, 1, (size_t)len, fp) == (size_t)len) *n = (size_t)len;
    fclose(fp);
    return b;
}

const char *const tl_isa_name[3] = {"scalar", "avx2", "avx512"};

int tl_finish(const char *name) {
    if (tl_failures) {
        fprintf(stderr, "%s: %d check(s) failed\n", name, tl_failures);
        return 1;
    }
    printf("%s: all checks passed\n", name);
    return 0;
}

void *tl_store_as(int dt, const float *w, size_t n, float *ref) {
    if (dt == VX_F32) {
        float *f = malloc(sizeof(float) * (n + 1));
        if (f) memcpy(f, w, sizeof(float) * n), memcpy(ref, w, sizeof(float) * n);
        return f;
    }
    uint16_t *h = malloc(sizeof(uint16_t) * (n + 1));
    if (!h) return NULL;
    for (size_t i = 0; i < n; i++) h[i] = dt == VX_BF16 ? vx_f32_to_bf16(w[i]) : vx_f32_to_f16(w[i]);
    vx_to_f32(ref, h, (vx_dtype)dt, n);
    return h;
}
