#include "io/safetensors.h"

#include "io/outfile.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define ST_MAX_HEADER (100u << 20) /* the format's own limit is 100 MB */

typedef struct st_entry {
    char *name;
    vx_tensor t;
    uint64_t begin, end; /* byte span inside the data section */
    void *owned;         /* aligned copy when the mapped data is misaligned */
} st_entry;

struct vx_st_file {
    char *path;
    void *map;           /* mmap'd file (vx_st_open), or NULL */
    void *owned;         /* copied buffer (vx_st_open_mem), or NULL */
    const uint8_t *base; /* whole file */
    size_t size;
    const uint8_t *data; /* start of the data section */
    st_entry *entries;   /* sorted by name */
    int count;
    cJSON *metadata;
};

static int entry_name_cmp(const void *a, const void *b) {
    return strcmp(((const st_entry *)a)->name, ((const st_entry *)b)->name);
}

static int entry_span_cmp(const void *a, const void *b) {
    const st_entry *x = *(const st_entry *const *)a, *y = *(const st_entry *const *)b;
    return x->begin < y->begin ? -1 : x->begin > y->begin ? 1 : 0;
}

static int json_u64(const cJSON *j, uint64_t *out) {
    if (!cJSON_IsNumber(j)) return -1;
    double d = j->valuedouble;
    if (!(d >= 0) || d > 9007199254740992.0 || floor(d) != d) return -1;
    *out = (uint64_t)d;
    return 0;
}

static vocis_status parse_entry(vx_st_file *f, const cJSON *item, uint64_t data_size, st_entry *e,
                                vx_err *err) {
    const char *name = item->string;
    if (!cJSON_IsObject(item))
        return vx_fail(err, VOCIS_E_FORMAT, "%s: tensor '%s': header entry is not an object", f->path, name);
    const cJSON *dt = cJSON_GetObjectItemCaseSensitive(item, "dtype");
    const cJSON *shape = cJSON_GetObjectItemCaseSensitive(item, "shape");
    const cJSON *offs = cJSON_GetObjectItemCaseSensitive(item, "data_offsets");
    if (!cJSON_IsString(dt))
        return vx_fail(err, VOCIS_E_FORMAT, "%s: tensor '%s': missing dtype", f->path, name);
    if (vx_dtype_from_name(dt->valuestring, &e->t.dtype) != 0)
        return vx_fail(err, VOCIS_E_FORMAT, "%s: tensor '%s': unknown dtype '%s'", f->path, name,
                       dt->valuestring);
    if (!cJSON_IsArray(shape))
        return vx_fail(err, VOCIS_E_FORMAT, "%s: tensor '%s': missing shape", f->path, name);
    int nd = cJSON_GetArraySize(shape);
    if (nd > VX_MAX_DIMS)
        return vx_fail(err, VOCIS_E_UNSUPPORTED, "%s: tensor '%s': rank %d exceeds %d", f->path, name, nd,
                       VX_MAX_DIMS);
    e->t.ndim = nd;
    uint64_t numel = 1;
    for (int i = 0; i < nd; i++) {
        uint64_t d;
        if (json_u64(cJSON_GetArrayItem(shape, i), &d) != 0 || d > (1ull << 40))
            return vx_fail(err, VOCIS_E_FORMAT, "%s: tensor '%s': invalid shape entry %d", f->path, name, i);
        e->t.shape[i] = (int64_t)d;
        if (__builtin_mul_overflow(numel, d, &numel))
            return vx_fail(err, VOCIS_E_FORMAT, "%s: tensor '%s': shape overflows", f->path, name);
    }
    if (!cJSON_IsArray(offs) || cJSON_GetArraySize(offs) != 2 ||
        json_u64(cJSON_GetArrayItem(offs, 0), &e->begin) != 0 ||
        json_u64(cJSON_GetArrayItem(offs, 1), &e->end) != 0)
        return vx_fail(err, VOCIS_E_FORMAT, "%s: tensor '%s': invalid data_offsets", f->path, name);
    uint64_t bytes;
    if (__builtin_mul_overflow(numel, (uint64_t)vx_dtype_size(e->t.dtype), &bytes))
        return vx_fail(err, VOCIS_E_FORMAT, "%s: tensor '%s': byte size overflows", f->path, name);
    if (e->end < e->begin)
        return vx_fail(err, VOCIS_E_FORMAT, "%s: tensor '%s': data_offsets [%llu, %llu] end before they begin",
                       f->path, name, (unsigned long long)e->begin, (unsigned long long)e->end);
    if (e->end - e->begin != bytes)
        return vx_fail(err, VOCIS_E_FORMAT,
                       "%s: tensor '%s': data_offsets [%llu, %llu] span %llu bytes, shape x %s needs %llu",
                       f->path, name, (unsigned long long)e->begin, (unsigned long long)e->end,
                       (unsigned long long)(e->end - e->begin), vx_dtype_name(e->t.dtype),
                       (unsigned long long)bytes);
    if (e->end > data_size)
        return vx_fail(err, VOCIS_E_FORMAT,
                       "%s: tensor '%s': data ends at byte %llu but the data section has %llu bytes "
                       "(truncated file?)",
                       f->path, name, (unsigned long long)e->end, (unsigned long long)data_size);
    return VOCIS_OK;
}

static vocis_status parse_header(vx_st_file *f, const char *json, size_t n, uint64_t data_size, vx_err *err) {
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(json, n, &end, 0);
    if (!root) return vx_fail(err, VOCIS_E_FORMAT, "%s: header is not valid JSON", f->path);
    vocis_status st = VOCIS_OK;
    /* Only padding (spaces; tolerate other whitespace and NULs) may follow the object. */
    for (const char *p = end; p && p < json + n; p++)
        if (*p != ' ' && *p != '\t' && *p != '\n' && *p != '\r' && *p != '\0') {
            st = vx_fail(err, VOCIS_E_FORMAT, "%s: unexpected bytes after the JSON header at offset %zu", f->path,
                         (size_t)(p - json) + 8);
            goto done;
        }
    if (!cJSON_IsObject(root)) {
        st = vx_fail(err, VOCIS_E_FORMAT, "%s: header is not a JSON object", f->path);
        goto done;
    }
    int total = cJSON_GetArraySize(root);
    f->entries = vx_calloc(err, (size_t)total, sizeof(st_entry), "safetensors header");
    if (!f->entries) {
        st = VOCIS_E_NOMEM;
        goto done;
    }
    for (cJSON *item = root->child; item; item = item->next) {
        if (strcmp(item->string, "__metadata__") == 0) {
            if (!cJSON_IsObject(item)) {
                st = vx_fail(err, VOCIS_E_FORMAT, "%s: __metadata__ is not an object", f->path);
                goto done;
            }
            f->metadata = cJSON_DetachItemViaPointer(root, item);
            break;
        }
    }
    for (cJSON *item = root->child; item; item = item->next) {
        st_entry *e = &f->entries[f->count];
        if ((st = parse_entry(f, item, data_size, e, err)) != VOCIS_OK) goto done;
        e->name = strdup(item->string);
        if (!e->name) {
            st = vx_fail(err, VOCIS_E_NOMEM, "out of memory");
            goto done;
        }
        f->count++;
    }
    qsort(f->entries, (size_t)f->count, sizeof(st_entry), entry_name_cmp);
    for (int i = 1; i < f->count; i++)
        if (strcmp(f->entries[i - 1].name, f->entries[i].name) == 0) {
            st = vx_fail(err, VOCIS_E_FORMAT, "%s: tensor '%s' appears twice", f->path, f->entries[i].name);
            goto done;
        }
    /* Spans must not overlap. */
    st_entry **by_span = vx_malloc(err, sizeof(st_entry *) * (size_t)(f->count ? f->count : 1), "spans");
    if (!by_span) {
        st = VOCIS_E_NOMEM;
        goto done;
    }
    for (int i = 0; i < f->count; i++) by_span[i] = &f->entries[i];
    qsort(by_span, (size_t)f->count, sizeof *by_span, entry_span_cmp);
    /* Compare each span with the furthest-reaching earlier one, not just its
     * neighbour: [0,100) [0,0) [50,60) overlaps although no adjacent pair does. */
    const st_entry *reach = NULL;
    for (int i = 0; i < f->count; i++) {
        const st_entry *b = by_span[i];
        if (b->begin == b->end) continue; /* empty tensors occupy nothing */
        if (reach && b->begin < reach->end) {
            st = vx_fail(err, VOCIS_E_FORMAT, "%s: tensors '%s' and '%s' have overlapping data", f->path,
                         reach->name, b->name);
            break;
        }
        if (!reach || b->end > reach->end) reach = b;
    }
    free(by_span);
done:
    cJSON_Delete(root);
    return st;
}

static vocis_status bind_data(vx_st_file *f, vx_err *err) {
    for (int i = 0; i < f->count; i++) {
        st_entry *e = &f->entries[i];
        const uint8_t *p = f->data + e->begin;
        size_t size = (size_t)(e->end - e->begin);
        size_t align = vx_dtype_size(e->t.dtype);
        if (((uintptr_t)p % align) != 0) {
            e->owned = vx_malloc(err, size, e->name);
            if (!e->owned) return VOCIS_E_NOMEM;
            memcpy(e->owned, p, size);
            p = e->owned;
        }
        e->t.data = p;
    }
    return VOCIS_OK;
}

/* Parses f->base[0, f->size): header length, JSON header, data bindings. */
static vocis_status st_parse(vx_st_file *f, vx_err *err) {
    if (f->size < 8)
        return vx_fail(err, VOCIS_E_FORMAT, "%s: file too short for a safetensors header (%zu bytes)", f->path,
                       f->size);
    uint64_t hlen = 0;
    for (int i = 7; i >= 0; i--) hlen = (hlen << 8) | f->base[i];
    if (hlen > ST_MAX_HEADER || hlen > f->size - 8)
        return vx_fail(err, VOCIS_E_FORMAT, "%s: header length %llu exceeds the file size %zu", f->path,
                       (unsigned long long)hlen, f->size);
    f->data = f->base + 8 + hlen;
    VX_TRY(parse_header(f, (const char *)f->base + 8, (size_t)hlen, f->size - 8 - hlen, err));
    return bind_data(f, err);
}

static vx_st_file *st_new(const char *path, vx_err *err) {
    vx_st_file *f = vx_calloc(err, 1, sizeof *f, "safetensors file");
    if (!f) return NULL;
    f->path = strdup(path);
    if (!f->path) {
        free(f);
        vx_fail(err, VOCIS_E_NOMEM, "out of memory");
        return NULL;
    }
    return f;
}

vocis_status vx_st_open(const char *path, vx_st_file **out, vx_err *err) {
    *out = NULL;
    vx_st_file *f = st_new(path, err);
    if (!f) return VOCIS_E_NOMEM;
    vocis_status st = VOCIS_OK;
    int fd = open(path, O_RDONLY);
    if (fd < 0) {
        st = vx_fail(err, VOCIS_E_IO, "%s: cannot open: %s", path, strerror(errno));
        goto fail;
    }
    struct stat sb;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        close(fd);
        st = vx_fail(err, VOCIS_E_IO, "%s: not a regular file", path);
        goto fail;
    }
    if (sb.st_size < 8) {
        close(fd);
        st = vx_fail(err, VOCIS_E_FORMAT, "%s: file too short for a safetensors header (%lld bytes)", path,
                     (long long)sb.st_size);
        goto fail;
    }
    f->size = (size_t)sb.st_size;
    f->map = mmap(NULL, f->size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (f->map == MAP_FAILED) {
        f->map = NULL;
        st = vx_fail(err, VOCIS_E_IO, "%s: mmap failed: %s", path, strerror(errno));
        goto fail;
    }
    f->base = f->map;
    if ((st = st_parse(f, err)) != VOCIS_OK) goto fail;
    *out = f;
    return VOCIS_OK;
fail:
    vx_st_close(f);
    return st;
}

vocis_status vx_st_open_mem(const void *buf, size_t len, const char *name, vx_st_file **out, vx_err *err) {
    *out = NULL;
    vx_st_file *f = st_new(name ? name : "<memory>", err);
    if (!f) return VOCIS_E_NOMEM;
    f->owned = malloc(len ? len : 1);
    if (!f->owned) {
        vx_st_close(f);
        return vx_fail(err, VOCIS_E_NOMEM, "out of memory copying %zu bytes", len);
    }
    if (len) memcpy(f->owned, buf, len);
    f->base = f->owned;
    f->size = len;
    vocis_status st = st_parse(f, err);
    if (st != VOCIS_OK) {
        vx_st_close(f);
        return st;
    }
    *out = f;
    return VOCIS_OK;
}

void vx_st_close(vx_st_file *f) {
    if (!f) return;
    for (int i = 0; i < f->count; i++) {
        free(f->entries[i].name);
        free(f->entries[i].owned);
    }
    free(f->entries);
    if (f->map) munmap(f->map, f->size);
    free(f->owned);
    cJSON_Delete(f->metadata);
    free(f->path);
    free(f);
}

const char *vx_st_path(const vx_st_file *f) { return f->path; }
int vx_st_count(const vx_st_file *f) { return f->count; }
const char *vx_st_name(const vx_st_file *f, int i) { return f->entries[i].name; }
const vx_tensor *vx_st_tensor(const vx_st_file *f, int i) { return &f->entries[i].t; }

const vx_tensor *vx_st_find(const vx_st_file *f, const char *name) {
    st_entry key = {.name = (char *)name};
    st_entry *e = bsearch(&key, f->entries, (size_t)f->count, sizeof(st_entry), entry_name_cmp);
    return e ? &e->t : NULL;
}

const char *vx_st_metadata(const vx_st_file *f, const char *key) {
    const cJSON *v = f->metadata ? cJSON_GetObjectItemCaseSensitive(f->metadata, key) : NULL;
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* ------------------------------------------------------------------------ */
/* Weight sets                                                                */

typedef struct ws_ref {
    const char *name;
    int file;
    const vx_tensor *t;
} ws_ref;

typedef struct ws_conv { /* a converted copy of a tensor's data (precision policy) */
    const void *src;
    int kind;
    void *data;
} ws_conv;

struct vx_weights {
    char *path;
    vx_st_file **files;
    int nfiles;
    ws_ref *refs; /* sorted by name */
    int count;
    int precision;  /* policy value for the loaders (kernels/precision.h); 0 = exact */
    ws_conv *convs; /* converted copies owned by the set */
    int nconv, capconv;
    /* a set over tensors held elsewhere (vx_weights_from_views): copied views and names, and their owner */
    vx_tensor *views;
    char *names;
    void (*release)(void *);
    void *owner;
};

static int ref_cmp(const void *a, const void *b) {
    return strcmp(((const ws_ref *)a)->name, ((const ws_ref *)b)->name);
}

static char *read_text_file(const char *path, size_t max, size_t *len, vx_err *err) {
    FILE *fp = fopen(path, "rb");
    if (!fp) {
        vx_fail(err, VOCIS_E_IO, "%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    char *buf = NULL;
    size_t n = 0, cap = 0;
    for (;;) {
        if (n + 4096 + 1 > cap) {
            cap = cap ? cap * 2 : 8192;
            char *nb = realloc(buf, cap);
            if (!nb) {
                free(buf);
                fclose(fp);
                vx_fail(err, VOCIS_E_NOMEM, "%s: out of memory", path);
                return NULL;
            }
            buf = nb;
        }
        size_t r = fread(buf + n, 1, 4096, fp);
        n += r;
        if (n > max) {
            free(buf);
            fclose(fp);
            vx_fail(err, VOCIS_E_FORMAT, "%s: file larger than %zu bytes", path, max);
            return NULL;
        }
        if (r < 4096) break;
    }
    int bad = ferror(fp);
    fclose(fp);
    if (bad) {
        free(buf);
        vx_fail(err, VOCIS_E_IO, "%s: read error", path);
        return NULL;
    }
    buf[n] = '\0';
    if (len) *len = n;
    return buf;
}

static vocis_status ws_add_file(vx_weights *w, const char *path, vx_err *err) {
    vx_st_file **nf = realloc(w->files, sizeof *nf * (size_t)(w->nfiles + 1));
    if (!nf) return vx_fail(err, VOCIS_E_NOMEM, "out of memory");
    w->files = nf;
    VX_TRY(vx_st_open(path, &w->files[w->nfiles], err));
    w->nfiles++;
    return VOCIS_OK;
}

static int ends_with(const char *s, const char *suffix) {
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

static vocis_status ws_open_index(vx_weights *w, const char *path, vx_err *err) {
    size_t len;
    char *text = read_text_file(path, 64u << 20, &len, err);
    if (!text) return err ? err->code : VOCIS_E_IO;
    cJSON *root = cJSON_ParseWithLength(text, len);
    free(text);
    if (!root) return vx_fail(err, VOCIS_E_FORMAT, "%s: not valid JSON", path);
    vocis_status st = VOCIS_OK;
    const cJSON *map = cJSON_GetObjectItemCaseSensitive(root, "weight_map");
    if (!cJSON_IsObject(map)) {
        st = vx_fail(err, VOCIS_E_FORMAT, "%s: missing object 'weight_map'", path);
        goto done;
    }
    /* Folder of the index: shards are named relative to it. */
    const char *slash = strrchr(path, '/');
    size_t dirlen = slash ? (size_t)(slash - path + 1) : 0;
    char **shards = NULL;
    int nshards = 0;
    for (const cJSON *it = map->child; it; it = it->next) {
        if (!cJSON_IsString(it) || strchr(it->valuestring, '/') || strcmp(it->valuestring, "..") == 0) {
            st = vx_fail(err, VOCIS_E_FORMAT, "%s: weight_map entry '%s' -> '%s' is not a plain file name", path,
                         it->string, cJSON_IsString(it) ? it->valuestring : "(not a string)");
            break;
        }
        int seen = 0;
        for (int i = 0; i < nshards; i++) seen |= strcmp(shards[i], it->valuestring) == 0;
        if (seen) continue;
        char **ns = realloc(shards, sizeof *ns * (size_t)(nshards + 1));
        if (!ns) {
            st = vx_fail(err, VOCIS_E_NOMEM, "out of memory");
            break;
        }
        shards = ns;
        shards[nshards++] = it->valuestring;
    }
    for (int i = 0; st == VOCIS_OK && i < nshards; i++) {
        size_t fl = dirlen + strlen(shards[i]) + 1;
        char *full = malloc(fl);
        if (!full) {
            st = vx_fail(err, VOCIS_E_NOMEM, "out of memory");
            break;
        }
        snprintf(full, fl, "%.*s%s", (int)dirlen, path, shards[i]);
        st = ws_add_file(w, full, err);
        free(full);
        if (st != VOCIS_OK) vx_errctx(err, "shard named by %s", path);
    }
    /* Every mapped tensor must be in the shard the index names (files[i] was opened from shards[i];
     * comparing names exactly, since "model-1.safetensors" also ends with "1.safetensors"). */
    for (const cJSON *it = map->child; st == VOCIS_OK && it; it = it->next) {
        int found = 0;
        for (int i = 0; i < nshards && i < w->nfiles && !found; i++)
            if (strcmp(shards[i], it->valuestring) == 0) found = vx_st_find(w->files[i], it->string) != NULL;
        if (!found)
            st = vx_fail(err, VOCIS_E_FORMAT, "%s: tensor '%s' is not in its shard %s", path, it->string,
                         it->valuestring);
    }
    free(shards);
done:
    cJSON_Delete(root);
    return st;
}

static vocis_status ws_build_refs(vx_weights *w, vx_err *err) {
    int total = 0;
    for (int i = 0; i < w->nfiles; i++) total += vx_st_count(w->files[i]);
    w->refs = vx_calloc(err, (size_t)(total ? total : 1), sizeof(ws_ref), "weight table");
    if (!w->refs) return VOCIS_E_NOMEM;
    for (int i = 0; i < w->nfiles; i++)
        for (int j = 0; j < vx_st_count(w->files[i]); j++)
            w->refs[w->count++] = (ws_ref){vx_st_name(w->files[i], j), i, vx_st_tensor(w->files[i], j)};
    qsort(w->refs, (size_t)w->count, sizeof(ws_ref), ref_cmp);
    for (int i = 1; i < w->count; i++)
        if (strcmp(w->refs[i - 1].name, w->refs[i].name) == 0)
            return vx_fail(err, VOCIS_E_FORMAT, "%s: tensor '%s' is stored in two shards", w->path,
                           w->refs[i].name);
    return VOCIS_OK;
}

vocis_status vx_weights_open(const char *path, vx_weights **out, vx_err *err) {
    *out = NULL;
    vx_weights *w = vx_calloc(err, 1, sizeof *w, "weights");
    if (!w) return VOCIS_E_NOMEM;
    w->path = strdup(path);
    if (!w->path) {
        free(w);
        return vx_fail(err, VOCIS_E_NOMEM, "out of memory");
    }
    vocis_status st = ends_with(path, ".json") ? ws_open_index(w, path, err) : ws_add_file(w, path, err);
    if (st == VOCIS_OK) st = ws_build_refs(w, err);
    if (st != VOCIS_OK) {
        vx_weights_close(w);
        return st;
    }
    *out = w;
    return VOCIS_OK;
}

void vx_weights_close(vx_weights *w) {
    if (!w) return;
    for (int i = 0; i < w->nfiles; i++) vx_st_close(w->files[i]);
    for (int i = 0; i < w->nconv; i++) free(w->convs[i].data);
    free(w->convs);
    free(w->views);
    free(w->names);
    if (w->release) w->release(w->owner);
    free(w->files);
    free(w->refs);
    free(w->path);
    free(w);
}

void vx_weights_set_precision(vx_weights *w, int precision) {
    if (w) w->precision = precision;
}
int vx_weights_precision(const vx_weights *w) { return w ? w->precision : 0; }

void *vx_weights_converted(const vx_weights *w, const void *src, int kind) {
    for (int i = 0; w && i < w->nconv; i++)
        if (w->convs[i].src == src && w->convs[i].kind == kind) return w->convs[i].data;
    return NULL;
}

vocis_status vx_weights_keep(const vx_weights *cw, const void *src, int kind, void *data, vx_err *err) {
    vx_weights *w = (vx_weights *)cw; /* the set owns its converted copies; loaders see it const */
    if (w->nconv == w->capconv) {
        int cap = w->capconv ? 2 * w->capconv : 64;
        ws_conv *nc = realloc(w->convs, sizeof *nc * (size_t)cap);
        if (!nc) {
            free(data);
            return vx_fail(err, VOCIS_E_NOMEM, "%s: out of memory for converted weights", w->path);
        }
        w->convs = nc;
        w->capconv = cap;
    }
    w->convs[w->nconv++] = (ws_conv){src, kind, data};
    return VOCIS_OK;
}

/* The file whose mapping holds [data, data + bytes), or NULL. */
static const vx_st_file *mapping_of(const vx_weights *w, const void *data, size_t bytes) {
    const uintptr_t p = (uintptr_t)data;
    for (int i = 0; w && i < w->nfiles; i++) {
        const vx_st_file *f = w->files[i];
        const uintptr_t base = (uintptr_t)f->base;
        if (f->map && p >= base && bytes <= f->size && p - base <= f->size - bytes) return f;
    }
    return NULL;
}

void vx_weights_release(const vx_weights *w, const void *data, size_t bytes) {
    if (!mapping_of(w, data, bytes)) return;
    /* only whole pages inside the span: neighbours keep theirs */
    uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t a = ((uintptr_t)data + pg - 1) / pg * pg, b = ((uintptr_t)data + bytes) / pg * pg;
    if (a < b) madvise((void *)a, b - a, MADV_DONTNEED);
}

int vx_weights_mapped(const vx_weights *w, const void *data, size_t bytes) {
    return mapping_of(w, data, bytes) != NULL;
}

const char *vx_weights_name_at(const vx_weights *w, const void *data) {
    for (int i = 0; w && i < w->count; i++)
        if (w->refs[i].t->data == data) return w->refs[i].name;
    return NULL;
}

const char *vx_weights_path(const vx_weights *w) { return w->path; }
int vx_weights_count(const vx_weights *w) { return w->count; }
const char *vx_weights_name(const vx_weights *w, int i) { return w->refs[i].name; }
const vx_tensor *vx_weights_tensor(const vx_weights *w, int i) { return w->refs[i].t; }

const vx_tensor *vx_weights_find(const vx_weights *w, const char *name, const char **file) {
    ws_ref key = {.name = name};
    ws_ref *r = bsearch(&key, w->refs, (size_t)w->count, sizeof(ws_ref), ref_cmp);
    if (!r) return NULL;
    if (file) *file = r->file < 0 ? w->path : vx_st_path(w->files[r->file]);
    return r->t;
}

vocis_status vx_weights_from_views(const char *path, int n, const char *const *names, const vx_tensor *views,
                                   void (*release)(void *), void *owner, vx_weights **out, vx_err *err) {
    *out = NULL;
    vx_weights *w = vx_calloc(err, 1, sizeof *w, "weights");
    if (!w) {
        if (release) release(owner);
        return VOCIS_E_NOMEM;
    }
    w->release = release;
    w->owner = owner;
    size_t nbytes = 1;
    for (int i = 0; i < n; i++) nbytes += strlen(names[i]) + 1;
    w->path = strdup(path);
    w->views = malloc(sizeof *w->views * (size_t)(n ? n : 1));
    w->names = malloc(nbytes);
    w->refs = malloc(sizeof *w->refs * (size_t)(n ? n : 1));
    if (!w->path || !w->views || !w->names || !w->refs) {
        vx_weights_close(w);
        return vx_fail(err, VOCIS_E_NOMEM, "%s: out of memory for the weight table", path);
    }
    char *p = w->names;
    for (int i = 0; i < n; i++) {
        size_t l = strlen(names[i]) + 1;
        memcpy(p, names[i], l);
        w->views[i] = views[i];
        w->refs[i] = (ws_ref){p, -1, &w->views[i]};
        p += l;
    }
    w->count = n;
    qsort(w->refs, (size_t)n, sizeof(ws_ref), ref_cmp);
    for (int i = 1; i < n; i++)
        if (strcmp(w->refs[i - 1].name, w->refs[i].name) == 0) {
            vocis_status st = vx_fail(err, VOCIS_E_FORMAT, "%s: tensor '%s' is stored twice", path, w->refs[i].name);
            vx_weights_close(w);
            return st;
        }
    *out = w;
    return VOCIS_OK;
}

int vx_weights_has(const vx_weights *w, const char *name) { return vx_weights_find(w, name, NULL) != NULL; }

static void dtypes_str(unsigned mask, char *buf, size_t n) {
    size_t off = 0;
    buf[0] = '\0';
    for (int i = 0; i < VX_DTYPE_COUNT && off < n; i++)
        if (mask & VX_DT(i)) off += (size_t)snprintf(buf + off, n - off, "%s%s", off ? "/" : "", vx_dtype_name(i));
}

static void shape_want_str(int ndim, const int64_t *shape, char *buf, size_t n) {
    size_t off = (size_t)snprintf(buf, n, "[");
    for (int i = 0; i < ndim && off < n; i++) {
        if (shape[i] < 0) off += (size_t)snprintf(buf + off, n - off, i ? ", *" : "*");
        else off += (size_t)snprintf(buf + off, n - off, i ? ", %lld" : "%lld", (long long)shape[i]);
    }
    if (off < n) snprintf(buf + off, n - off, "]");
}

vocis_status vx_tensor_expect(const vx_tensor *t, const char *where, const char *name, unsigned dtypes,
                              int ndim, const int64_t *shape, vx_err *err) {
    if (!(dtypes & VX_DT(t->dtype))) {
        char want[128];
        dtypes_str(dtypes, want, sizeof want);
        return vx_fail(err, VOCIS_E_SHAPE, "%s: tensor '%s': expected dtype %s, found %s", where, name, want,
                       vx_dtype_name(t->dtype));
    }
    int ok = ndim < 0 || t->ndim == ndim;
    for (int i = 0; ok && ndim > 0 && i < ndim; i++) ok = shape[i] < 0 || shape[i] == t->shape[i];
    if (!ok) {
        char want[160], got[160];
        shape_want_str(ndim, shape, want, sizeof want);
        vx_shape_str(t, got, sizeof got);
        return vx_fail(err, VOCIS_E_SHAPE, "%s: tensor '%s': expected shape %s, found %s", where, name, want,
                       got);
    }
    return VOCIS_OK;
}

vocis_status vx_weights_expect(const vx_weights *w, unsigned dtypes, int ndim, const int64_t *shape,
                               vx_tensor *out, vx_err *err, const char *name_fmt, ...) {
    char name[512];
    va_list ap;
    va_start(ap, name_fmt);
    vsnprintf(name, sizeof name, name_fmt, ap);
    va_end(ap);
    const char *file = w->path;
    const vx_tensor *t = vx_weights_find(w, name, &file);
    if (!t) return vx_fail(err, VOCIS_E_SHAPE, "%s: missing tensor '%s'", w->path, name);
    VX_TRY(vx_tensor_expect(t, file, name, dtypes, ndim, shape, err));
    if (out) *out = *t;
    return VOCIS_OK;
}

/* ------------------------------------------------------------------------ */
/* Writer                                                                     */

typedef struct wr_entry {
    char *name;
    vx_dtype dt;
    int ndim;
    int64_t shape[VX_MAX_DIMS];
    void *data;
    size_t bytes;
} wr_entry;

struct vx_st_writer {
    wr_entry *e;
    int n, cap;
    cJSON *meta;
};

vx_st_writer *vx_st_writer_new(void) { return calloc(1, sizeof(vx_st_writer)); }

void vx_st_writer_free(vx_st_writer *w) {
    if (!w) return;
    for (int i = 0; i < w->n; i++) {
        free(w->e[i].name);
        free(w->e[i].data);
    }
    free(w->e);
    cJSON_Delete(w->meta);
    free(w);
}

vocis_status vx_st_writer_add(vx_st_writer *w, const char *name, vx_dtype dt, int ndim, const int64_t *shape,
                              const void *data, vx_err *err) {
    if (ndim < 0 || ndim > VX_MAX_DIMS) return vx_fail(err, VOCIS_E_ARG, "tensor '%s': bad rank %d", name, ndim);
    if ((unsigned)dt >= VX_DTYPE_COUNT) return vx_fail(err, VOCIS_E_ARG, "tensor '%s': bad dtype %d", name, (int)dt);
    if (strcmp(name, "__metadata__") == 0)
        return vx_fail(err, VOCIS_E_ARG, "tensor name '__metadata__' is reserved");
    for (int i = 0; i < w->n; i++)
        if (strcmp(w->e[i].name, name) == 0)
            return vx_fail(err, VOCIS_E_ARG, "tensor '%s' added twice", name);
    size_t numel = 1, bytes;
    for (int i = 0; i < ndim; i++)
        if (shape[i] < 0 || __builtin_mul_overflow(numel, (size_t)shape[i], &numel))
            return vx_fail(err, VOCIS_E_ARG, "tensor '%s': invalid shape entry %d (%lld)", name, i,
                           (long long)shape[i]);
    if (__builtin_mul_overflow(numel, vx_dtype_size(dt), &bytes))
        return vx_fail(err, VOCIS_E_ARG, "tensor '%s': byte size overflows", name);
    if (bytes && !data) return vx_fail(err, VOCIS_E_ARG, "tensor '%s': no data", name);
    if (w->n == w->cap) {
        int cap = w->cap ? w->cap * 2 : 16;
        wr_entry *ne = realloc(w->e, sizeof *ne * (size_t)cap);
        if (!ne) return vx_fail(err, VOCIS_E_NOMEM, "out of memory");
        w->e = ne;
        w->cap = cap;
    }
    wr_entry *e = &w->e[w->n];
    memset(e, 0, sizeof *e);
    for (int i = 0; i < ndim; i++) e->shape[i] = shape[i];
    e->bytes = bytes;
    e->name = strdup(name);
    e->data = malloc(e->bytes ? e->bytes : 1);
    if (!e->name || !e->data) {
        free(e->name);
        free(e->data);
        return vx_fail(err, VOCIS_E_NOMEM, "out of memory");
    }
    if (e->bytes) memcpy(e->data, data, e->bytes);
    e->dt = dt;
    e->ndim = ndim;
    w->n++;
    return VOCIS_OK;
}

vocis_status vx_st_writer_meta(vx_st_writer *w, const char *key, const char *value, vx_err *err) {
    if (!w->meta && !(w->meta = cJSON_CreateObject())) return vx_fail(err, VOCIS_E_NOMEM, "out of memory");
    cJSON_DeleteItemFromObjectCaseSensitive(w->meta, key);
    if (!cJSON_AddStringToObject(w->meta, key, value)) return vx_fail(err, VOCIS_E_NOMEM, "out of memory");
    return VOCIS_OK;
}

vocis_status vx_st_writer_save(vx_st_writer *w, const char *path, vx_err *err) {
    cJSON *root = cJSON_CreateObject();
    if (!root) return vx_fail(err, VOCIS_E_NOMEM, "out of memory");
    /* Every cJSON_Add* result is checked: a silently dropped item would write a wrong header. */
    int built = !w->meta || cJSON_AddItemToObject(root, "__metadata__", cJSON_Duplicate(w->meta, 1));
    uint64_t off = 0;
    for (int i = 0; built && i < w->n; i++) {
        wr_entry *e = &w->e[i];
        cJSON *o = cJSON_AddObjectToObject(root, e->name);
        cJSON *sh = o ? cJSON_AddArrayToObject(o, "shape") : NULL;
        cJSON *of = o ? cJSON_AddArrayToObject(o, "data_offsets") : NULL;
        built = o && sh && of && cJSON_AddStringToObject(o, "dtype", vx_dtype_name(e->dt));
        for (int d = 0; built && d < e->ndim; d++)
            built = cJSON_AddItemToArray(sh, cJSON_CreateNumber((double)e->shape[d]));
        built = built && cJSON_AddItemToArray(of, cJSON_CreateNumber((double)off)) &&
                cJSON_AddItemToArray(of, cJSON_CreateNumber((double)(off + e->bytes)));
        off += e->bytes;
    }
    char *json = built ? cJSON_PrintUnformatted(root) : NULL;
    cJSON_Delete(root);
    if (!json) return vx_fail(err, VOCIS_E_NOMEM, "out of memory");
    size_t hlen = strlen(json), padded = (hlen + 7) & ~(size_t)7;
    uint8_t len8[8];
    for (int i = 0; i < 8; i++) len8[i] = (uint8_t)((uint64_t)padded >> (8 * i));
    vx_outfile f;
    vocis_status st = vx_outfile_open(&f, path, err);
    if (st == VOCIS_OK) st = vx_outfile_write(&f, len8, 8, err);
    if (st == VOCIS_OK) st = vx_outfile_write(&f, json, hlen, err);
    if (st == VOCIS_OK) st = vx_outfile_write(&f, "        ", padded - hlen, err);
    for (int i = 0; st == VOCIS_OK && i < w->n; i++) st = vx_outfile_write(&f, w->e[i].data, w->e[i].bytes, err);
    free(json);
    if (st != VOCIS_OK) {
        vx_outfile_abort(&f);
        return st;
    }
    return vx_outfile_commit(&f, err);
}
