/* ZIP reader for torch.save archives and the torch.save loader; see torchzip.h.
 * Record layouts follow PKWARE's APPNOTE.TXT (sections 4.3.7, 4.3.12, 4.3.14-16, 4.5.3). */
#include "io/torchzip.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define SIG_LOCAL 0x04034b50u
#define SIG_CENTRAL 0x02014b50u
#define SIG_EOCD 0x06054b50u
#define SIG_EOCD64 0x06064b50u
#define SIG_LOC64 0x07064b50u
#define EOCD_SIZE 22u
#define CENTRAL_SIZE 46u
#define LOCAL_SIZE 30u
#define MAX_NAME 4096u

static const uint32_t k_crc_table[256] = {
    0x00000000u, 0x77073096u, 0xee0e612cu, 0x990951bau, 0x076dc419u, 0x706af48fu,
    0xe963a535u, 0x9e6495a3u, 0x0edb8832u, 0x79dcb8a4u, 0xe0d5e91eu, 0x97d2d988u,
    0x09b64c2bu, 0x7eb17cbdu, 0xe7b82d07u, 0x90bf1d91u, 0x1db71064u, 0x6ab020f2u,
    0xf3b97148u, 0x84be41deu, 0x1adad47du, 0x6ddde4ebu, 0xf4d4b551u, 0x83d385c7u,
    0x136c9856u, 0x646ba8c0u, 0xfd62f97au, 0x8a65c9ecu, 0x14015c4fu, 0x63066cd9u,
    0xfa0f3d63u, 0x8d080df5u, 0x3b6e20c8u, 0x4c69105eu, 0xd56041e4u, 0xa2677172u,
    0x3c03e4d1u, 0x4b04d447u, 0xd20d85fdu, 0xa50ab56bu, 0x35b5a8fau, 0x42b2986cu,
    0xdbbbc9d6u, 0xacbcf940u, 0x32d86ce3u, 0x45df5c75u, 0xdcd60dcfu, 0xabd13d59u,
    0x26d930acu, 0x51de003au, 0xc8d75180u, 0xbfd06116u, 0x21b4f4b5u, 0x56b3c423u,
    0xcfba9599u, 0xb8bda50fu, 0x2802b89eu, 0x5f058808u, 0xc60cd9b2u, 0xb10be924u,
    0x2f6f7c87u, 0x58684c11u, 0xc1611dabu, 0xb6662d3du, 0x76dc4190u, 0x01db7106u,
    0x98d220bcu, 0xefd5102au, 0x71b18589u, 0x06b6b51fu, 0x9fbfe4a5u, 0xe8b8d433u,
    0x7807c9a2u, 0x0f00f934u, 0x9609a88eu, 0xe10e9818u, 0x7f6a0dbbu, 0x086d3d2du,
    0x91646c97u, 0xe6635c01u, 0x6b6b51f4u, 0x1c6c6162u, 0x856530d8u, 0xf262004eu,
    0x6c0695edu, 0x1b01a57bu, 0x8208f4c1u, 0xf50fc457u, 0x65b0d9c6u, 0x12b7e950u,
    0x8bbeb8eau, 0xfcb9887cu, 0x62dd1ddfu, 0x15da2d49u, 0x8cd37cf3u, 0xfbd44c65u,
    0x4db26158u, 0x3ab551ceu, 0xa3bc0074u, 0xd4bb30e2u, 0x4adfa541u, 0x3dd895d7u,
    0xa4d1c46du, 0xd3d6f4fbu, 0x4369e96au, 0x346ed9fcu, 0xad678846u, 0xda60b8d0u,
    0x44042d73u, 0x33031de5u, 0xaa0a4c5fu, 0xdd0d7cc9u, 0x5005713cu, 0x270241aau,
    0xbe0b1010u, 0xc90c2086u, 0x5768b525u, 0x206f85b3u, 0xb966d409u, 0xce61e49fu,
    0x5edef90eu, 0x29d9c998u, 0xb0d09822u, 0xc7d7a8b4u, 0x59b33d17u, 0x2eb40d81u,
    0xb7bd5c3bu, 0xc0ba6cadu, 0xedb88320u, 0x9abfb3b6u, 0x03b6e20cu, 0x74b1d29au,
    0xead54739u, 0x9dd277afu, 0x04db2615u, 0x73dc1683u, 0xe3630b12u, 0x94643b84u,
    0x0d6d6a3eu, 0x7a6a5aa8u, 0xe40ecf0bu, 0x9309ff9du, 0x0a00ae27u, 0x7d079eb1u,
    0xf00f9344u, 0x8708a3d2u, 0x1e01f268u, 0x6906c2feu, 0xf762575du, 0x806567cbu,
    0x196c3671u, 0x6e6b06e7u, 0xfed41b76u, 0x89d32be0u, 0x10da7a5au, 0x67dd4accu,
    0xf9b9df6fu, 0x8ebeeff9u, 0x17b7be43u, 0x60b08ed5u, 0xd6d6a3e8u, 0xa1d1937eu,
    0x38d8c2c4u, 0x4fdff252u, 0xd1bb67f1u, 0xa6bc5767u, 0x3fb506ddu, 0x48b2364bu,
    0xd80d2bdau, 0xaf0a1b4cu, 0x36034af6u, 0x41047a60u, 0xdf60efc3u, 0xa867df55u,
    0x316e8eefu, 0x4669be79u, 0xcb61b38cu, 0xbc66831au, 0x256fd2a0u, 0x5268e236u,
    0xcc0c7795u, 0xbb0b4703u, 0x220216b9u, 0x5505262fu, 0xc5ba3bbeu, 0xb2bd0b28u,
    0x2bb45a92u, 0x5cb36a04u, 0xc2d7ffa7u, 0xb5d0cf31u, 0x2cd99e8bu, 0x5bdeae1du,
    0x9b64c2b0u, 0xec63f226u, 0x756aa39cu, 0x026d930au, 0x9c0906a9u, 0xeb0e363fu,
    0x72076785u, 0x05005713u, 0x95bf4a82u, 0xe2b87a14u, 0x7bb12baeu, 0x0cb61b38u,
    0x92d28e9bu, 0xe5d5be0du, 0x7cdcefb7u, 0x0bdbdf21u, 0x86d3d2d4u, 0xf1d4e242u,
    0x68ddb3f8u, 0x1fda836eu, 0x81be16cdu, 0xf6b9265bu, 0x6fb077e1u, 0x18b74777u,
    0x88085ae6u, 0xff0f6a70u, 0x66063bcau, 0x11010b5cu, 0x8f659effu, 0xf862ae69u,
    0x616bffd3u, 0x166ccf45u, 0xa00ae278u, 0xd70dd2eeu, 0x4e048354u, 0x3903b3c2u,
    0xa7672661u, 0xd06016f7u, 0x4969474du, 0x3e6e77dbu, 0xaed16a4au, 0xd9d65adcu,
    0x40df0b66u, 0x37d83bf0u, 0xa9bcae53u, 0xdebb9ec5u, 0x47b2cf7fu, 0x30b5ffe9u,
    0xbdbdf21cu, 0xcabac28au, 0x53b39330u, 0x24b4a3a6u, 0xbad03605u, 0xcdd70693u,
    0x54de5729u, 0x23d967bfu, 0xb3667a2eu, 0xc4614ab8u, 0x5d681b02u, 0x2a6f2b94u,
    0xb40bbe37u, 0xc30c8ea1u, 0x5a05df1bu, 0x2d02ef8du,};

static uint32_t crc32_update(uint32_t crc, const uint8_t *p, uint64_t n) {
    crc = ~crc;
    for (uint64_t i = 0; i < n; i++) crc = k_crc_table[(crc ^ p[i]) & 0xffu] ^ (crc >> 8);
    return ~crc;
}

typedef struct zip_entry {
    char *name;
    uint64_t data_off, csize, usize;
    uint32_t crc;
    uint16_t method, flags;
    int checked; /* CRC verified */
} zip_entry;

struct vx_zip {
    char *path;
    const uint8_t *base;
    size_t size;
    void *map; /* mmap'd file, or NULL */
    void *owned; /* copied buffer, or NULL */
    zip_entry *e; /* sorted by name */
    int n;
};

static uint64_t rd(const uint8_t *p, int n) {
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--) v = (v << 8) | p[i];
    return v;
}

static int entry_cmp(const void *a, const void *b) {
    return strcmp(((const zip_entry *)a)->name, ((const zip_entry *)b)->name);
}

/* Offsets of the central directory, from the (ZIP64) end records. */
static vocis_status find_directory(vx_zip *z, uint64_t *cd_off, uint64_t *cd_size, uint64_t *count, vx_err *err) {
    const uint8_t *b = z->base;
    const size_t size = z->size;
    if (size < EOCD_SIZE)
        return vx_fail(err, VOCIS_E_FORMAT, "%s: %zu bytes is too short for a zip archive", z->path, size);
    /* The end record is the last 22 bytes plus a comment of up to 65535 bytes. */
    size_t eocd = SIZE_MAX;
    size_t lowest = size - EOCD_SIZE > 65535u ? size - EOCD_SIZE - 65535u : 0;
    for (size_t p = size - EOCD_SIZE + 1; p-- > lowest;) {
        if (rd(b + p, 4) == SIG_EOCD && p + EOCD_SIZE + rd(b + p + 20, 2) == size) {
            eocd = p;
            break;
        }
    }
    if (eocd == SIZE_MAX) {
        if (b[0] == 0x80 && b[1] <= 5)
            return vx_fail(err, VOCIS_E_UNSUPPORTED,
                           "%s: legacy (pre-1.6, non-zip) torch.save format; re-save it with a current PyTorch",
                           z->path);
        return vx_fail(err, VOCIS_E_FORMAT, "%s: no zip end-of-central-directory record (not a zip, or truncated)",
                       z->path);
    }
    const uint8_t *e = b + eocd;
    uint64_t disk = rd(e + 4, 2), cd_disk = rd(e + 6, 2), n_here = rd(e + 8, 2);
    *count = rd(e + 10, 2);
    *cd_size = rd(e + 12, 4);
    *cd_off = rd(e + 16, 4);
    uint64_t limit = eocd; /* the central directory ends before the end records */
    if (eocd >= 20 && rd(b + eocd - 20, 4) == SIG_LOC64) {
        const uint8_t *l = b + eocd - 20;
        uint64_t z64 = rd(l + 8, 8);
        if (rd(l + 4, 4) != 0 || rd(l + 16, 4) > 1)
            return vx_fail(err, VOCIS_E_UNSUPPORTED, "%s: multi-disk zip archives are not supported", z->path);
        if (z64 > eocd - 20 || eocd - 20 - z64 < 56 || rd(b + z64, 4) != SIG_EOCD64)
            return vx_fail(err, VOCIS_E_FORMAT, "%s: ZIP64 end record offset %llu is invalid", z->path,
                           (unsigned long long)z64);
        const uint8_t *r = b + z64;
        disk = rd(r + 16, 4);
        cd_disk = rd(r + 20, 4);
        n_here = rd(r + 24, 8);
        *count = rd(r + 32, 8);
        *cd_size = rd(r + 40, 8);
        *cd_off = rd(r + 48, 8);
        limit = z64;
    }
    if (disk != 0 || cd_disk != 0 || n_here != *count)
        return vx_fail(err, VOCIS_E_UNSUPPORTED, "%s: multi-disk zip archives are not supported", z->path);
    if (*cd_off > limit || *cd_size > limit - *cd_off)
        return vx_fail(err, VOCIS_E_FORMAT,
                       "%s: central directory [%llu, +%llu) lies outside the file (truncated file?)", z->path,
                       (unsigned long long)*cd_off, (unsigned long long)*cd_size);
    if (*count > *cd_size / CENTRAL_SIZE)
        return vx_fail(err, VOCIS_E_FORMAT, "%s: %llu entries cannot fit a %llu-byte central directory", z->path,
                       (unsigned long long)*count, (unsigned long long)*cd_size);
    if (*count > (uint64_t)INT32_MAX)
        return vx_fail(err, VOCIS_E_UNSUPPORTED, "%s: too many zip entries", z->path);
    return VOCIS_OK;
}

/* ZIP64 extended information (APPNOTE 4.5.3): present fields in a fixed order. */
static vocis_status parse_zip64_extra(vx_zip *z, const char *name, const uint8_t *x, size_t xlen, uint64_t *usize,
                                      uint64_t *csize, uint64_t *lho, vx_err *err) {
    size_t p = 0;
    while (p + 4 <= xlen) {
        uint64_t id = rd(x + p, 2), sz = rd(x + p + 2, 2);
        if (sz > xlen - p - 4)
            return vx_fail(err, VOCIS_E_FORMAT, "%s: entry '%s': extra field runs past its end", z->path, name);
        if (id == 1) {
            const uint8_t *f = x + p + 4;
            size_t q = 0;
            uint64_t *want[3] = {*usize == 0xffffffffu ? usize : NULL, *csize == 0xffffffffu ? csize : NULL,
                                 *lho == 0xffffffffu ? lho : NULL};
            for (int i = 0; i < 3; i++) {
                if (!want[i]) continue;
                if (q + 8 > sz)
                    return vx_fail(err, VOCIS_E_FORMAT, "%s: entry '%s': ZIP64 extra field too short", z->path,
                                   name);
                *want[i] = rd(f + q, 8);
                q += 8;
            }
            return VOCIS_OK;
        }
        p += 4 + (size_t)sz;
    }
    if (*usize == 0xffffffffu || *csize == 0xffffffffu || *lho == 0xffffffffu)
        return vx_fail(err, VOCIS_E_FORMAT, "%s: entry '%s': ZIP64 sizes without a ZIP64 extra field", z->path,
                       name);
    return VOCIS_OK;
}

static vocis_status parse_directory(vx_zip *z, vx_err *err) {
    uint64_t cd_off = 0, cd_size = 0, count = 0;
    VX_TRY(find_directory(z, &cd_off, &cd_size, &count, err));
    z->e = vx_calloc(err, (size_t)(count ? count : 1), sizeof *z->e, "zip directory");
    if (!z->e) return VOCIS_E_NOMEM;
    const uint8_t *cd = z->base + cd_off;
    uint64_t pos = 0;
    for (uint64_t i = 0; i < count; i++) {
        if (cd_size - pos < CENTRAL_SIZE || rd(cd + pos, 4) != SIG_CENTRAL)
            return vx_fail(err, VOCIS_E_FORMAT, "%s: central directory entry %llu is damaged", z->path,
                           (unsigned long long)i);
        const uint8_t *c = cd + pos;
        uint64_t nlen = rd(c + 28, 2), xlen = rd(c + 30, 2), clen = rd(c + 32, 2);
        if (cd_size - pos - CENTRAL_SIZE < nlen + xlen + clen)
            return vx_fail(err, VOCIS_E_FORMAT, "%s: central directory entry %llu runs past the directory",
                           z->path, (unsigned long long)i);
        const char *name = (const char *)c + CENTRAL_SIZE;
        if (nlen == 0 || memchr(name, '\0', nlen))
            return vx_fail(err, VOCIS_E_FORMAT, "%s: central directory entry %llu has an invalid name", z->path,
                           (unsigned long long)i);
        zip_entry *e = &z->e[z->n];
        e->name = malloc(nlen + 1);
        if (!e->name) return vx_fail(err, VOCIS_E_NOMEM, "out of memory");
        memcpy(e->name, name, nlen);
        e->name[nlen] = '\0';
        z->n++;
        e->flags = (uint16_t)rd(c + 8, 2);
        e->method = (uint16_t)rd(c + 10, 2);
        e->crc = (uint32_t)rd(c + 16, 4);
        e->csize = rd(c + 20, 4);
        e->usize = rd(c + 24, 4);
        uint64_t lho = rd(c + 42, 4);
        if (rd(c + 34, 2) != 0 && rd(c + 34, 2) != 0xffff)
            return vx_fail(err, VOCIS_E_UNSUPPORTED, "%s: entry '%s' is on another disk", z->path, e->name);
        VX_TRY(parse_zip64_extra(z, e->name, c + CENTRAL_SIZE + nlen, (size_t)xlen, &e->usize, &e->csize, &lho, err));
        /* Local header: its name and extra lengths may differ from the central copy (torch pads there). */
        if (lho > z->size || z->size - lho < LOCAL_SIZE || rd(z->base + lho, 4) != SIG_LOCAL)
            return vx_fail(err, VOCIS_E_FORMAT, "%s: entry '%s': local header at %llu is missing or outside the file",
                           z->path, e->name, (unsigned long long)lho);
        uint64_t lnlen = rd(z->base + lho + 26, 2), lxlen = rd(z->base + lho + 28, 2);
        uint64_t data = lho + LOCAL_SIZE + lnlen + lxlen;
        if (data > z->size || lnlen != nlen || memcmp(z->base + lho + LOCAL_SIZE, e->name, nlen) != 0)
            return vx_fail(err, VOCIS_E_FORMAT, "%s: entry '%s': local header does not match the directory",
                           z->path, e->name);
        if (e->csize > z->size - data)
            return vx_fail(err, VOCIS_E_FORMAT,
                           "%s: entry '%s': %llu bytes at offset %llu run past the end of the file (%zu bytes; "
                           "truncated file?)",
                           z->path, e->name, (unsigned long long)e->csize, (unsigned long long)data, z->size);
        e->data_off = data;
        pos += CENTRAL_SIZE + nlen + xlen + clen;
    }
    qsort(z->e, (size_t)z->n, sizeof *z->e, entry_cmp);
    for (int i = 1; i < z->n; i++)
        if (strcmp(z->e[i - 1].name, z->e[i].name) == 0)
            return vx_fail(err, VOCIS_E_FORMAT, "%s: entry '%s' appears twice", z->path, z->e[i].name);
    return VOCIS_OK;
}

static vocis_status zip_finish_open(vx_zip *z, vx_zip **out, vx_err *err) {
    vocis_status st = parse_directory(z, err);
    if (st != VOCIS_OK) {
        vx_zip_close(z);
        return st;
    }
    *out = z;
    return VOCIS_OK;
}

vocis_status vx_zip_open(const char *path, vx_zip **out, vx_err *err) {
    *out = NULL;
    vx_zip *z = vx_calloc(err, 1, sizeof *z, "zip");
    if (!z) return VOCIS_E_NOMEM;
    z->path = strdup(path);
    if (!z->path) {
        free(z);
        return vx_fail(err, VOCIS_E_NOMEM, "out of memory");
    }
    int fd = open(path, O_RDONLY);
    if (fd < 0) {
        vocis_status st = vx_fail(err, VOCIS_E_IO, "%s: cannot open: %s", path, strerror(errno));
        vx_zip_close(z);
        return st;
    }
    struct stat sb;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        close(fd);
        vx_zip_close(z);
        return vx_fail(err, VOCIS_E_IO, "%s: not a regular file", path);
    }
    if ((uint64_t)sb.st_size < EOCD_SIZE) {
        close(fd);
        vx_zip_close(z);
        return vx_fail(err, VOCIS_E_FORMAT, "%s: %lld bytes is too short for a zip archive (truncated file?)", path,
                       (long long)sb.st_size);
    }
    z->size = (size_t)sb.st_size;
    void *map = mmap(NULL, z->size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (map == MAP_FAILED) {
        vx_zip_close(z);
        return vx_fail(err, VOCIS_E_IO, "%s: mmap failed: %s", path, strerror(errno));
    }
    z->map = map;
    z->base = map;
    return zip_finish_open(z, out, err);
}

vocis_status vx_zip_open_mem(const void *buf, size_t len, const char *name, vx_zip **out, vx_err *err) {
    *out = NULL;
    vx_zip *z = vx_calloc(err, 1, sizeof *z, "zip");
    if (!z) return VOCIS_E_NOMEM;
    z->path = strdup(name ? name : "<memory>");
    z->owned = malloc(len ? len : 1);
    if (!z->path || !z->owned) {
        vx_zip_close(z);
        return vx_fail(err, VOCIS_E_NOMEM, "out of memory");
    }
    if (len) memcpy(z->owned, buf, len);
    z->base = z->owned;
    z->size = len;
    return zip_finish_open(z, out, err);
}

void vx_zip_close(vx_zip *z) {
    if (!z) return;
    for (int i = 0; i < z->n; i++) free(z->e[i].name);
    free(z->e);
    if (z->map) munmap(z->map, z->size);
    free(z->owned);
    free(z->path);
    free(z);
}

const char *vx_zip_path(const vx_zip *z) { return z->path; }
int vx_zip_count(const vx_zip *z) { return z->n; }
const char *vx_zip_name(const vx_zip *z, int i) { return z->e[i].name; }

static zip_entry *zip_find(const vx_zip *z, const char *name) {
    zip_entry key = {.name = (char *)name};
    return bsearch(&key, z->e, (size_t)z->n, sizeof *z->e, entry_cmp);
}

int vx_zip_has(const vx_zip *z, const char *name) { return zip_find(z, name) != NULL; }

static const char *method_name(unsigned m) {
    switch (m) {
    case 8: return "deflate";
    case 9: return "deflate64";
    case 12: return "bzip2";
    case 14: return "lzma";
    case 93: return "zstd";
    case 95: return "xz";
    default: return "unknown";
    }
}

vocis_status vx_zip_read(vx_zip *z, const char *name, const uint8_t **data, uint64_t *size, vx_err *err) {
    zip_entry *e = zip_find(z, name);
    if (!e) return vx_fail(err, VOCIS_E_FORMAT, "%s: missing entry '%s'", z->path, name);
    if (e->flags & 1u)
        return vx_fail(err, VOCIS_E_UNSUPPORTED, "%s: entry '%s' is encrypted", z->path, name);
    if (e->method != 0)
        return vx_fail(err, VOCIS_E_UNSUPPORTED,
                       "%s: entry '%s' is compressed (method %u, %s); only stored entries are supported, as "
                       "torch.save writes them",
                       z->path, name, e->method, method_name(e->method));
    if (e->csize != e->usize)
        return vx_fail(err, VOCIS_E_FORMAT, "%s: stored entry '%s' has size %llu but compressed size %llu",
                       z->path, name, (unsigned long long)e->usize, (unsigned long long)e->csize);
    const uint8_t *p = z->base + e->data_off;
    if (!e->checked) {
        uint32_t crc = crc32_update(0, p, e->usize);
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
        crc = e->crc; /* let the fuzzer reach the pickle through mutated archives */
#endif
        if (crc != e->crc)
            return vx_fail(err, VOCIS_E_FORMAT, "%s: entry '%s': CRC-32 %08x does not match the stored %08x "
                           "(corrupted file)", z->path, name, crc, e->crc);
        e->checked = 1;
    }
    *data = p;
    *size = e->usize;
    return VOCIS_OK;
}

/* ------------------------------------------------------------------------ */
/* torch.save                                                                 */

struct vx_torch_file {
    vx_zip *zip;
    vx_pickle *pk;
    char *prefix;
    char *where; /* "<path>:<prefix>data.pkl" for messages */
    int data_classes; /* vx_pickle_opts.data_classes */
};

static vocis_status torch_storage(void *ctx, const char *key, vx_dtype dt, uint64_t numel, const void **data,
                                  vx_err *err) {
    vx_torch_file *f = ctx;
    if (strchr(key, '/'))
        return vx_fail(err, VOCIS_E_FORMAT, "%s: storage key '%s' contains '/'", vx_zip_path(f->zip), key);
    size_t n = strlen(f->prefix) + strlen(key) + 6;
    char *name = malloc(n);
    if (!name) return vx_fail(err, VOCIS_E_NOMEM, "out of memory");
    snprintf(name, n, "%sdata/%s", f->prefix, key);
    const uint8_t *p;
    uint64_t size;
    vocis_status st = vx_zip_read(f->zip, name, &p, &size, err);
    uint64_t bytes;
    if (st == VOCIS_OK && (__builtin_mul_overflow(numel, (uint64_t)vx_dtype_size(dt), &bytes) || bytes != size))
        st = vx_fail(err, VOCIS_E_FORMAT, "%s: storage '%s' has %llu bytes but %llu x %s needs %s%llu",
                     vx_zip_path(f->zip), name, (unsigned long long)size, (unsigned long long)numel,
                     vx_dtype_name(dt), bytes == size ? "more than " : "", (unsigned long long)bytes);
    free(name);
    if (st == VOCIS_OK) *data = p;
    return st;
}

static vocis_status torch_parse(vx_torch_file *f, vx_err *err) {
    /* data.pkl sits in one top-level folder (its name is the archive name given to torch.save). */
    const char *pkl = NULL;
    for (int i = 0; i < vx_zip_count(f->zip); i++) {
        const char *nm = vx_zip_name(f->zip, i), *slash = strchr(nm, '/');
        int top = slash ? strcmp(slash + 1, "data.pkl") == 0 : strcmp(nm, "data.pkl") == 0;
        if (!top) continue;
        if (pkl)
            return vx_fail(err, VOCIS_E_FORMAT, "%s: two pickles ('%s' and '%s')", vx_zip_path(f->zip), pkl, nm);
        pkl = nm;
    }
    if (!pkl)
        return vx_fail(err, VOCIS_E_FORMAT, "%s: not a torch.save archive (no <name>/data.pkl entry)",
                       vx_zip_path(f->zip));
    size_t plen = strlen(pkl) - strlen("data.pkl");
    f->prefix = strndup(pkl, plen);
    size_t wl = strlen(vx_zip_path(f->zip)) + strlen(pkl) + 2;
    f->where = malloc(wl);
    if (!f->prefix || !f->where) return vx_fail(err, VOCIS_E_NOMEM, "out of memory");
    snprintf(f->where, wl, "%s:%s", vx_zip_path(f->zip), pkl);

    char name[MAX_NAME];
    snprintf(name, sizeof name, "%sbyteorder", f->prefix);
    if (vx_zip_has(f->zip, name)) {
        const uint8_t *p;
        uint64_t n;
        VX_TRY(vx_zip_read(f->zip, name, &p, &n, err));
        while (n && (p[n - 1] == '\n' || p[n - 1] == '\r')) n--;
        if (n == 3 && memcmp(p, "big", 3) == 0)
            return vx_fail(err, VOCIS_E_UNSUPPORTED, "%s: big-endian torch.save archive", vx_zip_path(f->zip));
        if (n != 6 || memcmp(p, "little", 6) != 0)
            return vx_fail(err, VOCIS_E_FORMAT, "%s: invalid byteorder record", vx_zip_path(f->zip));
    }
    const uint8_t *p;
    uint64_t n;
    VX_TRY(vx_zip_read(f->zip, pkl, &p, &n, err));
    vx_pickle_opts o = {.name = f->where, .storage = torch_storage, .ctx = f, .data_classes = f->data_classes};
    return vx_pickle_load(p, (size_t)n, &o, &f->pk, err);
}

static vocis_status torch_finish(vx_zip *z, int data_classes, vx_torch_file **out, vx_err *err) {
    vx_torch_file *f = vx_calloc(err, 1, sizeof *f, "torch file");
    if (!f) {
        vx_zip_close(z);
        return VOCIS_E_NOMEM;
    }
    f->zip = z;
    f->data_classes = data_classes;
    vocis_status st = torch_parse(f, err);
    if (st != VOCIS_OK) {
        vx_torch_close(f);
        return st;
    }
    *out = f;
    return VOCIS_OK;
}

vocis_status vx_torch_open(const char *path, vx_torch_file **out, vx_err *err) {
    *out = NULL;
    vx_zip *z;
    VX_TRY(vx_zip_open(path, &z, err));
    return torch_finish(z, 0, out, err);
}

vocis_status vx_torch_open_data(const char *path, vx_torch_file **out, vx_err *err) {
    *out = NULL;
    vx_zip *z;
    VX_TRY(vx_zip_open(path, &z, err));
    return torch_finish(z, 1, out, err);
}

vocis_status vx_torch_open_mem(const void *buf, size_t len, const char *name, vx_torch_file **out, vx_err *err) {
    *out = NULL;
    vx_zip *z;
    VX_TRY(vx_zip_open_mem(buf, len, name, &z, err));
    return torch_finish(z, 0, out, err);
}

void vx_torch_close(vx_torch_file *f) {
    if (!f) return;
    vx_pickle_free(f->pk);
    vx_zip_close(f->zip);
    free(f->prefix);
    free(f->where);
    free(f);
}

const char *vx_torch_path(const vx_torch_file *f) { return vx_zip_path(f->zip); }
const vx_pk_value *vx_torch_root(const vx_torch_file *f) { return vx_pickle_root(f->pk); }
const char *vx_torch_prefix(const vx_torch_file *f) { return f->prefix; }
