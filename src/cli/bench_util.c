#include "cli/bench_util.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

double bench_peak_rss_mib(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_maxrss / 1024.0;
}

double bench_rss_now_mib(void) {
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    double kib = 0;
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "VmRSS:", 6) == 0) kib = atof(line + 6);
    if (f) fclose(f);
    return kib / 1024.0;
}

int bench_parse_dtype(const char *s, vx_dtype *dt) {
    if (!strcmp(s, "bf16")) *dt = VX_BF16;
    else if (!strcmp(s, "f16")) *dt = VX_F16;
    else if (!strcmp(s, "f32")) *dt = VX_F32;
    else return -1;
    return 0;
}

int bench_parse_positions(const char *s, int64_t *out, int max, int64_t hi) {
    int n = 0;
    for (const char *p = s;; p++) {
        char *end;
        errno = 0;
        const long long v = strtoll(p, &end, 10);
        if (end == p || errno || v < 1 || v > hi || n == max || (*end && *end != ',') || *p == ' ' || *p == '+')
            return -1;
        out[n++] = v;
        if (!*(p = end)) return n;
    }
}

int bench_parse_variant(const char *s) {
    static const char *const names[] = {"english", "mtl", "turbo", "nano"};
    if (!s) return BENCH_ENGLISH;
    for (int i = 0; i < 4; i++)
        if (!strcmp(s, names[i])) return i;
    return -1;
}

const char *bench_variant_name(int v) {
    static const char *const names[] = {"English", "Multilingual", "Turbo", "Nano"};
    return v >= 0 && v < 4 ? names[v] : "?";
}

static int cmp_double(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

bench_stats bench_stats_of(const double *v, int n) {
    bench_stats s = {0, 0, 0, n};
    if (n < 1) return s;
    double small[64], *t = n <= 64 ? small : malloc(sizeof(double) * (size_t)n);
    if (!t) { /* out of memory: min / max still exact, the median approximated by the mean */
        s.min = s.max = v[0];
        for (int i = 0; i < n; i++) {
            s.median += v[i] / n;
            s.min = v[i] < s.min ? v[i] : s.min;
            s.max = v[i] > s.max ? v[i] : s.max;
        }
        return s;
    }
    memcpy(t, v, sizeof(double) * (size_t)n);
    qsort(t, (size_t)n, sizeof *t, cmp_double);
    s.min = t[0];
    s.max = t[n - 1];
    s.median = n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
    if (t != small) free(t);
    return s;
}

void bench_print_stats(const char *name, const double *v, int n, double scale, int decimals, const char *unit,
                       const char *note_fmt, ...) {
    const bench_stats s = bench_stats_of(v, n);
    const int d = decimals < 0 ? 0 : decimals > 9 ? 9 : decimals;
    printf("%s: %.*f%s%s (min %.*f, max %.*f, n=%d", name, d, scale * s.median, unit && *unit ? " " : "",
           unit ? unit : "", d, scale * s.min, d, scale * s.max, n);
    if (note_fmt) {
        va_list ap;
        va_start(ap, note_fmt);
        fputs("; ", stdout);
        vprintf(note_fmt, ap);
        va_end(ap);
    }
    fputs(")\n", stdout);
}

void bench_t3_request(float *spk, int speaker_dim, int64_t *prompt, int n_prompt, int32_t *text, int n_text, int start,
                      int stop) {
    for (int i = 0; i < speaker_dim; i++) spk[i] = 0.0625f * (float)((i * 37) % 17 - 8);
    for (int i = 0; i < n_prompt; i++) prompt[i] = (i * 131) % 6561;
    for (int i = 0; i < n_text; i++) text[i] = 1 + (i * 53) % 600;
    if (start >= 0 && n_text >= 2) text[0] = start, text[n_text - 1] = stop;
}
