#include "base/hugemem.h"

#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

#define HUGE_PAGE ((size_t)2 << 20)

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
