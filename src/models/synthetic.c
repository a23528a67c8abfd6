#define _GNU_SOURCE
#include "models/synthetic.h"

#include <cjson/cJSON.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/pool.h"
#include "base/threads.h"

typedef struct syn_tensor {
    char *name;
    vx_dtype dt;
    float scale;
    int ndim;
    int64_t shape[VX_MAX_DIMS];
} syn_tensor;

struct vx_synth {
    uint64_t seed;
    syn_tensor *t;
    int n, cap;
};

vx_synth *vx_synth_new(uint64_t seed) {
    vx_synth *s = calloc(1, sizeof *s);
    if (s) s->seed = seed;
    return s;
}

void vx_synth_free(vx_synth *s) {
    if (!s) return;
    for (int i = 0; i < s->n; i++) free(s->t[i].name);
    free(s->t);
    free(s);
}

vocis_status vx_synth_add(vx_synth *s, vx_dtype dt, float scale, int ndim, const int64_t *shape, vx_err *err,
                          const char *name_fmt, ...) {
    if (s->n == s->cap) {
        int cap = s->cap ? 2 * s->cap : 64;
        syn_tensor *nt = realloc(s->t, sizeof *nt * (size_t)cap);
        if (!nt) return vx_fail(err, VOCIS_E_NOMEM, "out of memory");
        s->t = nt;
        s->cap = cap;
    }
    char name[512];
    va_list ap;
    va_start(ap, name_fmt);
    vsnprintf(name, sizeof name, name_fmt, ap);
    va_end(ap);
    syn_tensor *t = &s->t[s->n];
    memset(t, 0, sizeof *t);
    if (!(t->name = strdup(name))) return vx_fail(err, VOCIS_E_NOMEM, "out of memory");
    t->dt = dt;
    t->scale = scale;
    t->ndim = ndim;
    memcpy(t->shape, shape, sizeof(int64_t) * (size_t)ndim);
    s->n++;
    return VOCIS_OK;
}

static size_t numel(const syn_tensor *t) {
    size_t n = 1;
    for (int i = 0; i < t->ndim; i++) n *= (size_t)t->shape[i];
    return n;
}

static void fill(const syn_tensor *t, uint8_t *dst, uint64_t seed) {
    size_t n = numel(t);
    uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
    for (size_t i = 0; i < n; i++) {
        float v;
        if (t->scale < 0) {
            v = -t->scale;
        } else {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            v = t->scale * ((float)(x >> 40) * (2.0f / 16777216.0f) - 1.0f);
        }
        if (t->dt == VX_F32) memcpy(dst + 4 * i, &v, 4);
        else {
            uint16_t h = t->dt == VX_BF16 ? vx_f32_to_bf16(v) : vx_f32_to_f16(v);
            memcpy(dst + 2 * i, &h, 2);
        }
    }
}

typedef struct {
    const vx_synth *s;
    uint8_t *map;
    const size_t *offs;
} fill_job;

static void fill_tensor(void *ctx, int64_t i) {
    const fill_job *j = ctx;
    fill(&j->s->t[i], j->map + j->offs[i], j->s->seed + (uint64_t)i);
}

vocis_status vx_synth_open(vx_synth *s, vx_weights **out, vx_err *err) {
    cJSON *root = cJSON_CreateObject();
    if (!root) return vx_fail(err, VOCIS_E_NOMEM, "out of memory");
    size_t off = 0;
    for (int i = 0; i < s->n; i++) {
        syn_tensor *t = &s->t[i];
        size_t bytes = numel(t) * vx_dtype_size(t->dt);
        cJSON *o = cJSON_AddObjectToObject(root, t->name);
        cJSON_AddStringToObject(o, "dtype", vx_dtype_name(t->dt));
        cJSON *sh = cJSON_AddArrayToObject(o, "shape");
        for (int d = 0; d < t->ndim; d++) cJSON_AddItemToArray(sh, cJSON_CreateNumber((double)t->shape[d]));
        cJSON *of = cJSON_AddArrayToObject(o, "data_offsets");
        cJSON_AddItemToArray(of, cJSON_CreateNumber((double)off));
        cJSON_AddItemToArray(of, cJSON_CreateNumber((double)(off + bytes)));
        off += bytes;
    }
    char *json = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    if (!json) return vx_fail(err, VOCIS_E_NOMEM, "out of memory");
    size_t hlen = (strlen(json) + 7) & ~(size_t)7, total = 8 + hlen + off;
    int fd = memfd_create("vocis-synthetic", 0);
    if (fd < 0 || ftruncate(fd, (off_t)total) != 0) {
        free(json);
        if (fd >= 0) close(fd);
        return vx_fail(err, VOCIS_E_IO, "cannot create an in-memory file for synthetic weights");
    }
    uint8_t *map = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (map == MAP_FAILED) {
        free(json);
        close(fd);
        return vx_fail(err, VOCIS_E_NOMEM, "cannot map %zu bytes for synthetic weights", total);
    }
    for (int i = 0; i < 8; i++) map[i] = (uint8_t)((uint64_t)hlen >> (8 * i));
    memset(map + 8, ' ', hlen);
    memcpy(map + 8, json, strlen(json));
    free(json);
    size_t *offs = malloc(sizeof(size_t) * (size_t)(s->n + 1));
    if (!offs) {
        munmap(map, total);
        close(fd);
        return vx_fail(err, VOCIS_E_NOMEM, "out of memory");
    }
    offs[0] = 8 + hlen;
    for (int i = 0; i < s->n; i++) offs[i + 1] = offs[i] + numel(&s->t[i]) * vx_dtype_size(s->t[i].dt);
    /* tensors are seeded independently, so filling them in parallel gives the same bytes */
    fill_job fj = {s, map, offs};
    vx_pool_run(vx_default_threads(), s->n, fill_tensor, &fj);
    free(offs);
    munmap(map, total);
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    vocis_status st = vx_weights_open(path, out, err);
    close(fd); /* the loader's own mapping keeps the memory alive */
    return st;
}
