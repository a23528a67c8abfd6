/* Shared helpers for the fuzz targets whose code under test takes a path:
 * the input goes into an in-memory file (memfd) that is reopened through
 * /proc/self/fd, and fixed test data is found through VOCIS_FUZZ_DATA
 * (environment) or the compiled-in tests/data folder. */
#ifndef VX_FUZZ_COMMON_H
#define VX_FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef VOCIS_FUZZ_DATA
#define VOCIS_FUZZ_DATA "tests/data"
#endif

/* One memfd per process, rewritten for every input; path is "/proc/self/fd/N". */
typedef struct {
    int fd;
    char path[64];
} fz_memfile;

static inline int fz_memfile_set(fz_memfile *m, const uint8_t *data, size_t size) {
    if (m->fd <= 0) {
        m->fd = memfd_create("vocis-fuzz", 0);
        if (m->fd < 0) {
            perror("memfd_create");
            abort();
        }
        snprintf(m->path, sizeof m->path, "/proc/self/fd/%d", m->fd);
    }
    if (ftruncate(m->fd, 0) != 0) abort();
    size_t off = 0;
    while (off < size) {
        ssize_t w = pwrite(m->fd, data + off, size - off, (off_t)off);
        if (w <= 0) abort();
        off += (size_t)w;
    }
    return 0;
}

/* DATA/rel, from $VOCIS_FUZZ_DATA or the compiled-in folder (static buffer). */
static inline const char *fz_data_path(const char *rel) {
    static char buf[4096];
    const char *dir = getenv("VOCIS_FUZZ_DATA");
    if (!dir || !*dir) dir = VOCIS_FUZZ_DATA;
    snprintf(buf, sizeof buf, "%s/%s", dir, rel);
    return buf;
}

#endif
