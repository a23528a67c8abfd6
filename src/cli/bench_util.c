#include "cli/bench_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

double bench_now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

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
