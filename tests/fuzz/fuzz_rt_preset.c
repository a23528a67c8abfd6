/* libFuzzer target: arbitrary bytes as a VibeVoice-Realtime voice preset
 * (vx_rt_preset_load: upstream's torch.save .pt, "PK..", or vocis' flat
 * safetensors voice), then vx_rt_preset_check against the test model's
 * config. An accepted preset must have positive sizes and finite values, and
 * survive a round trip through vx_rt_preset_write + load unchanged.
 * Data: $VOCIS_FUZZ_DATA or the compiled-in tests/data. */
#define _GNU_SOURCE
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "io/safetensors.h"
#include "models/vibevoice/config.h"
#include "models/vibevoice/realtime.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static const char *const files[] = {"voice.safetensors", NULL};
static vx_vv_config cfg;
static fz_memfile mf;

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc, (void)argv;
    vx_err e = {0};
    if (vx_vv_config_parse(fz_data_path("vibevoice-realtime/model/config.json"), &cfg, &e) != VOCIS_OK) {
        fprintf(stderr, "fuzz_rt_preset: %s (set VOCIS_FUZZ_DATA to the tests/data folder)\n", e.msg);
        abort();
    }
    fz_dir(files);
    return 0;
}

static size_t kv_floats(const vx_rt_preset *p, int i) {
    return (size_t)p->e[i].n_layers * (size_t)p->kv_heads * (size_t)p->e[i].T * (size_t)p->head_dim;
}

static void check_preset(const vx_rt_preset *p) {
    if (p->H < 1 || p->kv_heads < 1 || p->head_dim < 1) abort();
    for (int i = 0; i < VX_RT_N_ENTRIES; i++) {
        const vx_rt_entry *en = &p->e[i];
        if (en->T < 1 || en->n_layers < 1 || !en->hidden || !en->k || !en->v) abort();
        for (size_t j = 0; j < (size_t)(en->T * p->H); j++)
            if (!isfinite(en->hidden[j])) abort();
        for (size_t j = 0; j < kv_floats(p, i); j++)
            if (!isfinite(en->k[j]) || !isfinite(en->v[j])) abort();
    }
}

static void round_trip(const vx_rt_preset *p) {
    vx_err e = {0};
    char path[512];
    snprintf(path, sizeof path, "%s/%s", fz_dir_path, files[0]);
    vx_st_writer *w = vx_st_writer_new();
    if (!w || vx_rt_preset_write(p, w, &e) != VOCIS_OK || vx_st_writer_save(w, path, &e) != VOCIS_OK) {
        fprintf(stderr, "round trip write: %s\n", e.msg);
        abort();
    }
    vx_st_writer_free(w);
    vx_rt_preset q;
    if (vx_rt_preset_load(path, &q, &e) != VOCIS_OK) {
        fprintf(stderr, "round trip load: %s\n", e.msg);
        abort();
    }
    if (q.H != p->H || q.kv_heads != p->kv_heads || q.head_dim != p->head_dim) abort();
    for (int i = 0; i < VX_RT_N_ENTRIES; i++) {
        if (q.e[i].T != p->e[i].T || q.e[i].n_layers != p->e[i].n_layers) abort();
        const size_t nk = kv_floats(p, i) * sizeof(float);
        if (memcmp(q.e[i].hidden, p->e[i].hidden, (size_t)(p->e[i].T * p->H) * sizeof(float)) ||
            memcmp(q.e[i].k, p->e[i].k, nk) || memcmp(q.e[i].v, p->e[i].v, nk))
            abort();
    }
    vx_rt_preset_free(&q);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fz_memfile_set(&mf, data, size);
    vx_err e = {0};
    vx_rt_preset p;
    if (vx_rt_preset_load(mf.path, &p, &e) != VOCIS_OK) {
        if (!e.msg[0] || p.e[0].hidden || p.H) abort(); /* failure must free and say why */
        return 0;
    }
    check_preset(&p);
    (void)vx_rt_preset_check(&p, &cfg, &e);
    round_trip(&p);
    vx_rt_preset_free(&p);
    return 0;
}
