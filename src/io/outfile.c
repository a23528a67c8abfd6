#include "io/outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Follows symlinks (also dangling ones: their target is created) to the path
 * that really gets written. malloc'd. *magic: a link went through /proc (as
 * /dev/stdout does), whose targets are open files, not paths to replace. */
static vocis_status resolve_links(const char *path, char **out, int *magic, vx_err *err) {
    char *cur = strdup(path);
    *magic = 0;
    for (int hops = 0; cur && hops < 40; hops++) {
        *magic |= !strncmp(cur, "/proc/", 6);
        struct stat st;
        char target[4096];
        ssize_t n;
        if (lstat(cur, &st) != 0 || !S_ISLNK(st.st_mode) || (n = readlink(cur, target, sizeof target - 1)) < 0) {
            *out = cur;
            return VOCIS_OK;
        }
        target[n] = '\0';
        const char *slash = strrchr(cur, '/');
        size_t dir = target[0] == '/' || !slash ? 0 : (size_t)(slash - cur) + 1;
        char *next = malloc(dir + (size_t)n + 1);
        if (next) {
            memcpy(next, cur, dir);
            memcpy(next + dir, target, (size_t)n + 1);
        }
        free(cur);
        cur = next;
    }
    if (!cur) return vx_fail(err, VOCIS_E_NOMEM, "%s: out of memory", path);
    free(cur);
    return vx_fail(err, VOCIS_E_IO, "%s: too many levels of symbolic links", path);
}

/* PATH.XXXXXX.tmp created exclusively (never an existing file), mode 0666 & ~umask. */
static int create_unique(const char *path, char **tmp) {
    static atomic_uint counter;
    static const char digits[] = "abcdefghijklmnopqrstuvwxyz0123456789";
    size_t len = strlen(path);
    char *name = malloc(len + 12);
    if (!name) return errno = ENOMEM, -1;
    for (int attempt = 0; attempt < 100; attempt++) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        uint64_t x = ((uint64_t)getpid() << 32) ^ (uint64_t)ts.tv_nsec ^ ((uint64_t)atomic_fetch_add(&counter, 1) << 20);
        x *= 0x9E3779B97F4A7C15ull;
        memcpy(name, path, len);
        name[len] = '.';
        for (int i = 0; i < 6; i++, x >>= 6) name[len + 1 + i] = digits[x % 36];
        memcpy(name + len + 7, ".tmp", 5);
        int fd = open(name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0666); /* read back: Ogg pages, headers */
        if (fd >= 0 || errno != EEXIST) {
            if (fd >= 0) *tmp = name;
            else free(name);
            return fd;
        }
    }
    free(name);
    return errno = EEXIST, -1;
}

vocis_status vx_outfile_open(vx_outfile *f, const char *path, vx_err *err) {
    memset(f, 0, sizeof *f);
    f->fd = -1;
    f->name = path;
    int magic;
    VX_TRY(resolve_links(path, &f->path, &magic, err));
    struct stat st;
    const int exists = stat(path, &st) == 0;
    if (exists && S_ISDIR(st.st_mode)) {
        vx_outfile_abort(f);
        return vx_fail(err, VOCIS_E_IO, "%s: is a directory", path);
    }
    if (exists && (!S_ISREG(st.st_mode) || magic)) { /* device, FIFO, socket, /dev/stdout: as a shell redirection */
        f->fd = open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC | (S_ISREG(st.st_mode) ? O_TRUNC : 0));
    } else {
        f->fd = create_unique(f->path, &f->tmp);
        if (f->fd >= 0 && exists && fchmod(f->fd, st.st_mode & 07777) != 0) {
            close(f->fd);
            f->fd = -1;
        }
    }
    if (f->fd < 0) {
        int e = errno;
        vx_outfile_abort(f);
        return vx_fail(err, VOCIS_E_IO, "%s: cannot create file: %s", path, strerror(e));
    }
    return VOCIS_OK;
}

vocis_status vx_outfile_write(vx_outfile *f, const void *p, size_t n, vx_err *err) {
    const char *b = p;
    while (n > 0) {
        ssize_t w = write(f->fd, b, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return vx_fail(err, VOCIS_E_IO, "%s: write failed: %s", f->name, strerror(w < 0 ? errno : EIO));
        b += w;
        n -= (size_t)w;
    }
    return VOCIS_OK;
}

vocis_status vx_outfile_publish(vx_outfile *f, vx_err *err) {
    if (!f->tmp) return VOCIS_OK;
    if (rename(f->tmp, f->path) != 0)
        return vx_fail(err, VOCIS_E_IO, "%s: cannot rename the temporary file into place: %s", f->name, strerror(errno));
    free(f->tmp);
    f->tmp = NULL;
    return VOCIS_OK;
}

vocis_status vx_outfile_commit(vx_outfile *f, vx_err *err) {
    int fd = f->fd;
    f->fd = -1;
    if (close(fd) != 0) {
        int e = errno;
        vx_outfile_abort(f);
        return vx_fail(err, VOCIS_E_IO, "%s: write failed: %s", f->name, strerror(e));
    }
    if (f->tmp && rename(f->tmp, f->path) != 0) {
        int e = errno;
        vx_outfile_abort(f);
        return vx_fail(err, VOCIS_E_IO, "%s: cannot rename the temporary file into place: %s", f->name, strerror(e));
    }
    free(f->tmp);
    f->tmp = NULL;
    vx_outfile_abort(f);
    return VOCIS_OK;
}

void vx_outfile_abort(vx_outfile *f) {
    if (f->fd >= 0) close(f->fd);
    f->fd = -1;
    if (f->tmp) unlink(f->tmp);
    free(f->tmp);
    free(f->path);
    f->tmp = f->path = NULL;
}
