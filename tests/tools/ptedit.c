/* ptedit IN OUT EDIT...: copies the torch.save zip IN to OUT (stored entries,
 * fresh CRC-32s, so the reader's checksum passes) after applying each EDIT
 * to the entry whose name ends with ENTRY:
 *   replace ENTRY FROM TO   the first occurrence of FROM by TO (both may hold \xNN escapes)
 *   nan ENTRY               a float32 NaN over the entry's first 4 bytes
 *   cut ENTRY N             the entry keeps only its first N bytes
 * It makes the malformed .pt files of tests/cli/pt_bad_input.sh (unknown
 * opcodes and globals, wrong dtypes and shapes, huge claimed sizes, NaN
 * weights) from the small real files in tests/data, without Python. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/torchzip.h"

typedef struct {
    char *name;
    uint8_t *data;
    size_t size;
} entry;

static uint32_t crc32_of(const uint8_t *p, size_t n) {
    uint32_t c = 0xffffffffu;
    for (size_t i = 0; i < n; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++) c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1u)));
    }
    return ~c;
}

/* Decodes \xNN escapes of s into out (at most strlen(s) bytes); returns the length. */
static size_t unescape(const char *s, uint8_t *out) {
    size_t n = 0;
    for (; *s; n++) {
        unsigned v;
        if (s[0] == '\\' && s[1] == 'x' && sscanf(s + 2, "%2x", &v) == 1) {
            out[n] = (uint8_t)v;
            s += 4;
        } else {
            out[n] = (uint8_t)*s++;
        }
    }
    return n;
}

static entry *find_entry(entry *e, int n, const char *suffix) {
    size_t sl = strlen(suffix);
    for (int i = 0; i < n; i++) {
        size_t nl = strlen(e[i].name);
        if (nl >= sl && strcmp(e[i].name + nl - sl, suffix) == 0) return &e[i];
    }
    fprintf(stderr, "ptedit: no entry ends with '%s'\n", suffix);
    exit(1);
}

static void replace_bytes(entry *e, const char *from_s, const char *to_s) {
    uint8_t *from = malloc(strlen(from_s) + 1), *to = malloc(strlen(to_s) + 1);
    size_t fn = unescape(from_s, from), tn = unescape(to_s, to);
    for (size_t i = 0; fn && i + fn <= e->size; i++) {
        if (memcmp(e->data + i, from, fn) != 0) continue;
        uint8_t *nd = malloc(e->size - fn + tn + 1);
        memcpy(nd, e->data, i);
        memcpy(nd + i, to, tn);
        memcpy(nd + i + tn, e->data + i + fn, e->size - i - fn);
        free(e->data);
        e->data = nd;
        e->size = e->size - fn + tn;
        free(from);
        free(to);
        return;
    }
    fprintf(stderr, "ptedit: '%s' not found in %s\n", from_s, e->name);
    exit(1);
}

static void put16(FILE *f, unsigned v) { fputc((int)(v & 255), f), fputc((int)(v >> 8 & 255), f); }
static void put32(FILE *f, uint32_t v) { put16(f, v & 0xffffu), put16(f, v >> 16); }

/* A plain (not zip64) archive of stored entries. */
static int write_zip(const char *path, const entry *e, int n) {
    FILE *f = fopen(path, "wb");
    if (!f) return 1;
    uint32_t *offs = malloc(sizeof *offs * (size_t)n), *crcs = malloc(sizeof *crcs * (size_t)n);
    for (int i = 0; i < n; i++) {
        offs[i] = (uint32_t)ftell(f);
        crcs[i] = crc32_of(e[i].data, e[i].size);
        put32(f, 0x04034b50u), put16(f, 20), put16(f, 0), put16(f, 0), put16(f, 0), put16(f, 0);
        put32(f, crcs[i]), put32(f, (uint32_t)e[i].size), put32(f, (uint32_t)e[i].size);
        put16(f, (unsigned)strlen(e[i].name)), put16(f, 0);
        fputs(e[i].name, f);
        fwrite(e[i].data, 1, e[i].size, f);
    }
    uint32_t cd = (uint32_t)ftell(f);
    for (int i = 0; i < n; i++) {
        put32(f, 0x02014b50u), put16(f, 20), put16(f, 20), put16(f, 0), put16(f, 0), put16(f, 0), put16(f, 0);
        put32(f, crcs[i]), put32(f, (uint32_t)e[i].size), put32(f, (uint32_t)e[i].size);
        put16(f, (unsigned)strlen(e[i].name)), put16(f, 0), put16(f, 0), put16(f, 0), put16(f, 0);
        put32(f, 0), put32(f, offs[i]);
        fputs(e[i].name, f);
    }
    uint32_t cd_size = (uint32_t)ftell(f) - cd;
    put32(f, 0x06054b50u), put16(f, 0), put16(f, 0), put16(f, (unsigned)n), put16(f, (unsigned)n);
    put32(f, cd_size), put32(f, cd), put16(f, 0);
    free(offs);
    free(crcs);
    return fclose(f) != 0;
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: ptedit IN OUT [replace ENTRY FROM TO | nan ENTRY | cut ENTRY N]...\n");
        return 2;
    }
    vx_err err = {0};
    vx_zip *z;
    if (vx_zip_open(argv[1], &z, &err) != VOCIS_OK) {
        fprintf(stderr, "ptedit: %s\n", err.msg);
        return 1;
    }
    const int n = vx_zip_count(z);
    entry *e = calloc((size_t)n, sizeof *e);
    for (int i = 0; i < n; i++) {
        const uint8_t *p;
        uint64_t size;
        if (vx_zip_read(z, vx_zip_name(z, i), &p, &size, &err) != VOCIS_OK) {
            fprintf(stderr, "ptedit: %s\n", err.msg);
            return 1;
        }
        e[i].name = strdup(vx_zip_name(z, i));
        e[i].size = (size_t)size;
        e[i].data = malloc(e[i].size + 1);
        memcpy(e[i].data, p, e[i].size);
    }
    vx_zip_close(z);
    for (int a = 3; a < argc;) {
        const char *op = argv[a];
        if (!strcmp(op, "replace") && a + 3 < argc) {
            replace_bytes(find_entry(e, n, argv[a + 1]), argv[a + 2], argv[a + 3]);
            a += 4;
        } else if (!strcmp(op, "nan") && a + 1 < argc) {
            entry *t = find_entry(e, n, argv[a + 1]);
            const uint32_t nan_bits = 0x7fc00000u;
            if (t->size >= 4) memcpy(t->data, &nan_bits, 4);
            a += 2;
        } else if (!strcmp(op, "cut") && a + 2 < argc) {
            entry *t = find_entry(e, n, argv[a + 1]);
            size_t keep = strtoul(argv[a + 2], NULL, 10);
            if (keep < t->size) t->size = keep;
            a += 3;
        } else {
            fprintf(stderr, "ptedit: bad edit '%s'\n", op);
            return 2;
        }
    }
    if (write_zip(argv[2], e, n) != 0) {
        fprintf(stderr, "ptedit: cannot write %s\n", argv[2]);
        return 1;
    }
    for (int i = 0; i < n; i++) free(e[i].name), free(e[i].data);
    free(e);
    return 0;
}
