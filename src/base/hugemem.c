#include "base/hugemem.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "base/pool.h"

#define HUGE_PAGE VX_HUGE_PAGE_BYTES

void *vx_alloc_streamed(size_t bytes) {
    if (bytes > SIZE_MAX - HUGE_PAGE) return NULL;
    const size_t len = (bytes + 63) / 64 * 64;
    if (bytes < HUGE_PAGE) return aligned_alloc(64, len);
    /* posix_memalign, not aligned_alloc: C11 wants aligned_alloc's size to be a
     * multiple of its alignment (ASan refuses it otherwise) */
    void *p = NULL;
    if (posix_memalign(&p, HUGE_PAGE, len) != 0) return NULL;
#ifdef MADV_HUGEPAGE
    /* the whole huge pages only: rounding the size up to one would leave most of a
     * 2 MiB page unused behind e.g. a 4.7 MB q8 matrix; the tail keeps 4 KiB pages */
    if (p) (void)madvise(p, bytes / HUGE_PAGE * HUGE_PAGE, MADV_HUGEPAGE);
#endif
    return p;
}

typedef struct {
    char *dst;
    const char *src;
} copy_job;

static void copy_range(void *ctx, int64_t a, int64_t b) {
    const copy_job *j = ctx;
    memcpy(j->dst + a, j->src + a, (size_t)(b - a));
}

void *vx_copy_streamed(const void *src, size_t bytes, int nthreads) {
    char *dst = vx_alloc_streamed(bytes);
    if (!dst) return NULL;
    copy_job j = {dst, src};
    /* chunks of whole huge pages: each thread faults in and fills its own */
    vx_pool_for(bytes < 2 * HUGE_PAGE ? 1 : nthreads, (int64_t)bytes, (int64_t)HUGE_PAGE, copy_range, &j);
    return dst;
}
