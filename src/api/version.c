/* vocis_version_info(): the version plus what this process runs on — the CPU
 * features the kernels detected, the kernel level they dispatch to, and the
 * OpenBLAS build and core (its choice can be forced by OPENBLAS_CORETYPE). */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "vocis.h"
#include "base/threads.h"
#include "kernels/kernels.h"

/* OpenBLAS exports these; they are declared here so that this file does not
 * depend on which cblas.h variant the system provides. */
char *openblas_get_config(void);
char *openblas_get_corename(void);

static char info[512];
static pthread_once_t info_once = PTHREAD_ONCE_INIT;

static void info_build(void) {
    const int avx2 = vx_cpu_has_avx2(), avx512 = vx_cpu_has_avx512(), bf16 = vx_cpu_has_avx512bf16();
    char feats[96] = "";
    if (avx2) strcat(feats, " avx2+fma+f16c");
    if (avx512) strcat(feats, " avx512f+dq+bw+vl");
    if (bf16) strcat(feats, " avx512bf16");
    if (!*feats) strcat(feats, " none");
    /* "OpenBLAS 0.3.21 NO_LAPACKE DYNAMIC_ARCH ..." -> "0.3.21" */
    char blas_ver[32] = "?";
    const char *cfg = openblas_get_config();
    if (cfg && !strncmp(cfg, "OpenBLAS ", 9)) sscanf(cfg + 9, "%31s", blas_ver);
    const char *core = openblas_get_corename();
    snprintf(info, sizeof info, "vocis %s (cpu:%s; kernels: %s; openblas %s, core %s; threads: %d)", VOCIS_VERSION,
             feats, avx512 ? "avx512" : avx2 ? "avx2" : "scalar", blas_ver, core && *core ? core : "?",
             vx_default_threads());
}

const char *vocis_version_info(void) {
    pthread_once(&info_once, info_build);
    return info;
}
