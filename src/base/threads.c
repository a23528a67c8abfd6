#include "base/threads.h"

#include <stdio.h>
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
