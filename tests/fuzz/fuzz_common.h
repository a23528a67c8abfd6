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
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef VOCIS_FUZZ_DATA
#define VOCIS_FUZZ_DATA "tests/data"
#endif

/* An invariant of accepted input: aborts (a finding) naming it when it does not hold. */
#define FZ_CHECK(cond)                                                                                                 \
    do {                                                                                                               \
        if (!(cond)) {                                                                                                 \
            fprintf(stderr, "invariant failed: %s\n", #cond);                                                          \
            abort();                                                                                                   \
        }                                                                                                              \
    } while (0)

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

/* A private folder for targets whose code under test reads a model folder:
 * made once per process under /dev/shm (or $TMPDIR, /tmp), removed at exit. */
static char fz_dir_path[256];
static const char *const *fz_dir_names;

static inline void fz_dir_cleanup(void) {
    char p[512];
    for (const char *const *n = fz_dir_names; n && *n; n++) {
        snprintf(p, sizeof p, "%s/%s", fz_dir_path, *n);
        unlink(p);
    }
    rmdir(fz_dir_path);
}

/* names: the files the target may write (NULL-terminated, static). */
static inline const char *fz_dir(const char *const *names) {
    if (fz_dir_path[0]) return fz_dir_path;
    const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : getenv("TMPDIR");
    snprintf(fz_dir_path, sizeof fz_dir_path, "%s/vocis-fuzz-XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp(fz_dir_path)) {
        perror("mkdtemp");
        abort();
    }
    fz_dir_names = names;
    atexit(fz_dir_cleanup);
    return fz_dir_path;
}

/* Writes DIR/name with the given bytes, or removes it when data is NULL. */
static inline void fz_dir_put(const char *name, const uint8_t *data, size_t size) {
    char p[512];
    snprintf(p, sizeof p, "%s/%s", fz_dir_path, name);
    unlink(p);
    if (!data) return;
    FILE *f = fopen(p, "wb");
    if (!f || (size && fwrite(data, 1, size, f) != size) || fclose(f) != 0) {
        perror(p);
        abort();
    }
}

/* Splits an input at NUL bytes into at most n parts (copies, each NUL-terminated;
 * free with fz_parts_free). Parts past the input's last NUL are NULL. */
static inline int fz_split(const uint8_t *data, size_t size, char **parts, size_t *lens, int n) {
    int k = 0;
    size_t start = 0;
    for (; k < n; k++) {
        if (start > size) {
            parts[k] = NULL;
            lens[k] = 0;
            continue;
        }
        const uint8_t *z = k < n - 1 ? memchr(data + start, 0, size - start) : NULL;
        size_t end = z ? (size_t)(z - data) : size;
        parts[k] = malloc(end - start + 1);
        if (!parts[k]) abort();
        memcpy(parts[k], data + start, end - start);
        parts[k][end - start] = '\0';
        lens[k] = end - start;
        start = z ? end + 1 : size + 1;
    }
    return k;
}

static inline void fz_parts_free(char **parts, int n) {
    for (int k = 0; k < n; k++) free(parts[k]);
}

#endif
