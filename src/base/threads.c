#include "base/threads.h"

#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Count distinct (package, core) pairs so SMT siblings are not counted twice. */
int vx_default_threads(void) {
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    if (ncpu < 1) return 1;
    int seen[1024][2], nseen = 0;
    for (long c = 0; c < ncpu && c < 1024; c++) {
        char path[128];
        int pkg = 0, core = (int)c;
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%ld/topology/core_id", c);
        FILE *f = fopen(path, "r");
        if (f) {
            if (fscanf(f, "%d", &core) != 1) core = (int)c;
            fclose(f);
        }
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%ld/topology/physical_package_id", c);
        f = fopen(path, "r");
        if (f) {
            if (fscanf(f, "%d", &pkg) != 1) pkg = 0;
            fclose(f);
        }
        int dup = 0;
        for (int i = 0; i < nseen && !dup; i++) dup = seen[i][0] == pkg && seen[i][1] == core;
        if (!dup) {
            seen[nseen][0] = pkg;
            seen[nseen][1] = core;
            nseen++;
        }
    }
    return nseen > 0 ? nseen : (int)ncpu;
}

double vx_now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

#define TUNE_PROBE 16 /* steps between tries of the count not in use */

void vx_tuner_init(vx_thread_tuner *t, int max) {
    memset(t, 0, sizeof *t);
    t->max = max < 1 ? 1 : max;
    t->cur = t->max;
}

int vx_tuner_begin(vx_thread_tuner *t, int size) {
    if (t->max <= 1) return 1;
    if (size != t->size) { /* other work per step: earlier times do not compare */
        t->size = size;
        t->avg[0] = t->avg[1] = 0;
        t->step = 0;
    }
    int other = t->cur == 1 ? t->max : 1;
    t->step++;
    /* step 1 warms up; the other count is tried at step 3 and every TUNE_PROBE steps */
    if (t->step == 3 || t->step % TUNE_PROBE == 0) return other;
    return t->cur;
}

void vx_tuner_end(vx_thread_tuner *t, int used, double seconds) {
    if (t->max <= 1 || t->step <= 1) return;
    double *a = &t->avg[used == 1 ? 0 : 1];
    *a = *a == 0 ? seconds : 0.7 * *a + 0.3 * seconds;
    if (t->avg[0] == 0 || t->avg[1] == 0) return;
    /* 5 % hysteresis towards the count in use, so noise does not flip it */
    if (t->cur != 1 && t->avg[0] < 0.95 * t->avg[1]) t->cur = 1;
    else if (t->cur == 1 && t->avg[1] < 0.95 * t->avg[0]) t->cur = t->max;
}
