/* libFuzzer target: safetensors parsing from memory; every accepted tensor is read in full. */
#include "io/safetensors.h"

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    vx_err e = {0};
    vx_st_file *f = NULL;
    if (vx_st_open_mem(data, size, "fuzz.safetensors", &f, &e) != VOCIS_OK) return 0;
    volatile unsigned sink = 0;
    for (int i = 0; i < vx_st_count(f); i++) {
        const vx_tensor *t = vx_st_tensor(f, i);
        size_t bytes = (size_t)vx_numel(t) * vx_dtype_size(t->dtype);
        for (size_t k = 0; k < bytes; k++) sink += ((const uint8_t *)t->data)[k];
        (void)vx_st_find(f, vx_st_name(f, i));
    }
    (void)sink;
    (void)vx_st_metadata(f, "format");
    vx_st_close(f);
    return 0;
}
