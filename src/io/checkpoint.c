#include "io/checkpoint.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/hash.h"

static const char MAGIC[8] = {'V', 'O', 'C', 'I', 'S', 'C', 'K', 'P'};
static const char END_MAGIC[8] = {'C', 'K', 'P', 'T', 'E', 'N', 'D', 0};
#define TABLE_ENTRY (VX_CKPT_TAG + 8)

static void put_u32(uint8_t *p, uint32_t v) {
    for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static void put_u64(uint8_t *p, uint64_t v) {
    for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static uint32_t get_u32(const uint8_t *p) {
    uint32_t v = 0;
    for (int i = 3; i >= 0; i--) v = (v << 8) | p[i];
    return v;
}
static uint64_t get_u64(const uint8_t *p) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = (v << 8) | p[i];
    return v;
}

/* ---- writing ---- */

typedef struct {
    int fd;
    vx_hash hash;
    uint8_t buf[1 << 16];
    size_t n;
    int failed; /* errno of the first failure */
} ckpt_out;

static void out_flush(ckpt_out *o) {
    for (size_t off = 0; off < o->n && !o->failed;) {
        ssize_t w = write(o->fd, o->buf + off, o->n - off);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) o->failed = w < 0 ? errno : EIO;
        else off += (size_t)w;
    }
    o->n = 0;
}

static void out_put(ckpt_out *o, const void *p, size_t n) {
    vx_hash_update(&o->hash, p, n);
    const uint8_t *b = p;
    while (n && !o->failed) {
        size_t k = sizeof o->buf - o->n < n ? sizeof o->buf - o->n : n;
        memcpy(o->buf + o->n, b, k);
        o->n += k, b += k, n -= k;
        if (o->n == sizeof o->buf) out_flush(o);
    }
}

/* fsync of path's folder, so that the rename itself survives a power loss. */
static int sync_folder(const char *path) {
    char dir[4096];
    const char *slash = strrchr(path, '/');
    if (!slash) snprintf(dir, sizeof dir, ".");
    else snprintf(dir, sizeof dir, "%.*s", slash == path ? 1 : (int)(slash - path), path);
    int fd = open(dir, O_RDONLY | O_DIRECTORY);
    if (fd < 0) return -1;
    int rc = fsync(fd);
    close(fd);
    return rc;
}

vocis_status vx_ckpt_write(const char *path, const vx_ckpt_id *id, uint64_t samples, const vx_ckpt_piece *pieces,
                           int n_pieces, vx_err *err) {
    uint64_t total = VX_CKPT_HEADER + (uint64_t)n_pieces * TABLE_ENTRY + VX_CKPT_FOOTER;
    for (int i = 0; i < n_pieces; i++) total += pieces[i].size;
    char tmp[4200];
    if (snprintf(tmp, sizeof tmp, "%s.tmp", path) >= (int)sizeof tmp)
        return vx_fail(err, VOCIS_E_ARG, "%s: checkpoint path too long", path);
    ckpt_out *o = malloc(sizeof *o);
    if (!o) return vx_fail(err, VOCIS_E_NOMEM, "out of memory");
    o->n = 0, o->failed = 0;
    vx_hash_init(&o->hash);
    if ((o->fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666)) < 0) {
        free(o);
        return vx_fail(err, VOCIS_E_IO, "%s: cannot create: %s", tmp, strerror(errno));
    }
    uint8_t h[VX_CKPT_HEADER];
    memcpy(h, MAGIC, 8);
    put_u32(h + 8, VX_CKPT_VERSION);
    put_u32(h + 12, (uint32_t)n_pieces);
    put_u64(h + 16, id->model);
    for (int i = 0; i < VX_JOB_PARTS; i++) put_u64(h + 24 + 8 * i, id->job[i]);
    put_u64(h + 56, samples);
    put_u64(h + 64, total);
    out_put(o, h, sizeof h);
    for (int i = 0; i < n_pieces; i++) {
        uint8_t e[TABLE_ENTRY] = {0};
        memcpy(e, pieces[i].tag, strnlen(pieces[i].tag, VX_CKPT_TAG));
        put_u64(e + VX_CKPT_TAG, pieces[i].size);
        out_put(o, e, sizeof e);
    }
    for (int i = 0; i < n_pieces; i++) out_put(o, pieces[i].data, (size_t)pieces[i].size);
    uint8_t f[VX_CKPT_FOOTER];
    put_u64(f, vx_hash_final(&o->hash));
    memcpy(f + 8, END_MAGIC, 8);
    out_put(o, f, sizeof f);
    out_flush(o);
    int bad = o->failed;
    if (!bad && fsync(o->fd) != 0) bad = errno;
    if (close(o->fd) != 0 && !bad) bad = errno;
    free(o);
    if (!bad && rename(tmp, path) != 0) bad = errno;
    if (bad) {
        unlink(tmp);
        return vx_fail(err, VOCIS_E_IO, "%s: writing the checkpoint failed: %s", path, strerror(bad));
    }
    if (sync_folder(path) != 0)
        return vx_fail(err, VOCIS_E_IO, "%s: syncing the checkpoint's folder failed: %s", path, strerror(errno));
    return VOCIS_OK;
}

/* ---- reading ---- */

vocis_status vx_ckpt_parse(const uint8_t *buf, size_t n, const char *name, vx_ckpt *ck, vx_err *err) {
    memset(ck, 0, sizeof *ck);
    ck->name = name;
    if (n < 8 || memcmp(buf, MAGIC, 8))
        return vx_fail(err, VOCIS_E_FORMAT, "%s is not a vocis checkpoint", name);
    if (n < VX_CKPT_HEADER + VX_CKPT_FOOTER)
        return vx_fail(err, VOCIS_E_FORMAT, "%s is truncated (%zu bytes, shorter than a checkpoint's header)", name,
                       n);
    const uint32_t version = get_u32(buf + 8);
    if (version != VX_CKPT_VERSION)
        return vx_fail(err, VOCIS_E_FORMAT, "%s is a checkpoint of format version %u; this vocis reads version %u",
                       name, version, VX_CKPT_VERSION);
    const uint64_t total = get_u64(buf + 64);
    if (total != n)
        return vx_fail(err, VOCIS_E_FORMAT, "%s is %s (%zu bytes, its header says %llu)", name,
                       n < total ? "truncated" : "damaged", n, (unsigned long long)total);
    const uint32_t ns = get_u32(buf + 12);
    uint64_t want = VX_CKPT_HEADER + VX_CKPT_FOOTER;
    if (ns > (n - want) / TABLE_ENTRY)
        return vx_fail(err, VOCIS_E_FORMAT, "%s is damaged (%u sections do not fit its %zu bytes)", name, ns, n);
    want += (uint64_t)ns * TABLE_ENTRY;
    for (uint32_t i = 0; i < ns; i++) {
        const uint64_t sz = get_u64(buf + VX_CKPT_HEADER + (size_t)i * TABLE_ENTRY + VX_CKPT_TAG);
        if (sz > n - want)
            return vx_fail(err, VOCIS_E_FORMAT, "%s is damaged (section %u's %llu bytes pass the file's end)", name,
                           i, (unsigned long long)sz);
        want += sz;
    }
    if (want != n)
        return vx_fail(err, VOCIS_E_FORMAT, "%s is damaged (its sections add up to %llu bytes, the file has %zu)",
                       name, (unsigned long long)want, n);
    if (memcmp(buf + n - 8, END_MAGIC, 8) || get_u64(buf + n - 16) != vx_hash_bytes(buf, n - 16))
        return vx_fail(err, VOCIS_E_FORMAT, "%s is damaged (checksum mismatch)", name);
    ck->buf = (uint8_t *)buf;
    ck->n = n;
    ck->n_sections = ns;
    ck->id.model = get_u64(buf + 16);
    for (int i = 0; i < VX_JOB_PARTS; i++) ck->id.job[i] = get_u64(buf + 24 + 8 * i);
    ck->samples = get_u64(buf + 56);
    return VOCIS_OK;
}

vocis_status vx_ckpt_load(const char *path, vx_ckpt *ck, vx_err *err) {
    memset(ck, 0, sizeof *ck);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return vx_fail(err, VOCIS_E_IO, "%s: cannot open: %s", path, strerror(errno));
    struct stat sb;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        close(fd);
        return vx_fail(err, VOCIS_E_IO, "%s: not a regular file", path);
    }
    const size_t n = (size_t)sb.st_size;
    if (n == 0) {
        close(fd);
        return vx_fail(err, VOCIS_E_FORMAT, "%s is not a vocis checkpoint (empty)", path);
    }
    /* mapped, not read: a VibeVoice checkpoint holds the KV caches, which need not exist twice in memory */
    void *map = mmap(NULL, n, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (map == MAP_FAILED) return vx_fail(err, VOCIS_E_IO, "%s: cannot map %zu bytes: %s", path, n, strerror(errno));
    vocis_status st = vx_ckpt_parse(map, n, path, ck, err);
    if (st) {
        munmap(map, n);
        return st;
    }
    ck->owned = 1;
    return VOCIS_OK;
}

void vx_ckpt_free(vx_ckpt *ck) {
    if (ck->owned) munmap(ck->buf, ck->n);
    memset(ck, 0, sizeof *ck);
}

vocis_status vx_ckpt_check_id(const vx_ckpt *ck, const vx_ckpt_id *want, vx_err *err) {
    static const char *what[VX_JOB_PARTS] = {"text", "voice", "seed", "options (one that changes the audio)"};
    if (ck->id.model != want->model)
        return vx_fail(err, VOCIS_E_ARG, "%s was written with another model (or other model files)", ck->name);
    for (int i = 0; i < VX_JOB_PARTS; i++)
        if (ck->id.job[i] != want->job[i])
            return vx_fail(err, VOCIS_E_ARG, "%s is of another job: this run has another %s; resume with the "
                           "checkpointed run's command line", ck->name, what[i]);
    return VOCIS_OK;
}

vocis_status vx_ckpt_section(const vx_ckpt *ck, const char *tag, uint64_t size, const void **data,
                             uint64_t *got_size, vx_err *err) {
    uint64_t off = VX_CKPT_HEADER + (uint64_t)ck->n_sections * TABLE_ENTRY;
    for (uint32_t i = 0; i < ck->n_sections; i++) {
        const uint8_t *e = ck->buf + VX_CKPT_HEADER + (size_t)i * TABLE_ENTRY;
        const uint64_t sz = get_u64(e + VX_CKPT_TAG);
        if (strnlen((const char *)e, VX_CKPT_TAG) == strlen(tag) && !memcmp(e, tag, strlen(tag))) {
            if (size != UINT64_MAX && sz != size)
                return vx_fail(err, VOCIS_E_FORMAT, "%s: section %s holds %llu bytes, this job needs %llu", ck->name,
                               tag, (unsigned long long)sz, (unsigned long long)size);
            *data = ck->buf + off;
            if (got_size) *got_size = sz;
            return VOCIS_OK;
        }
        off += sz;
    }
    return vx_fail(err, VOCIS_E_FORMAT, "%s: no section %s", ck->name, tag);
}
