/* libFuzzer target: a whole torch.save archive (zip + pickle) through the
 * Chatterbox conds loader, which also reads every tensor it accepts, and
 * through the state-dict loader of s3gen.pt / ve.pt (vx_weights_open_pt),
 * touching the first and last byte of every tensor it returns. */
#include "io/ptweights.h"
#include "io/safetensors.h"
#include "models/chatterbox/conds.h"

#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void load_as_state_dict(const uint8_t *data, size_t size) {
    static fz_memfile mf;
    fz_memfile_set(&mf, data, size);
    vx_err e = {0};
    vx_weights *w = NULL;
    if (vx_weights_open_pt(mf.path, &w, &e) != VOCIS_OK) return;
    volatile uint8_t sink = 0;
    for (int i = 0; i < vx_weights_count(w); i++) {
        const vx_tensor *t = vx_weights_tensor(w, i);
        const size_t bytes = (size_t)vx_numel(t) * vx_dtype_size(t->dtype);
        if (bytes) sink ^= ((const uint8_t *)t->data)[0] ^ ((const uint8_t *)t->data)[bytes - 1];
        if (!vx_weights_find(w, vx_weights_name(w, i), NULL)) abort(); /* every listed name is found */
    }
    (void)sink;
    vx_weights_close(w);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    vx_err e = {0};
    vx_cb_conds c;
    if (vx_cb_conds_load_pt_mem(data, size, "fuzz.pt", &c, &e) == VOCIS_OK) {
        volatile float sink = c.speaker_emb.data[0] + c.emotion_adv.data[0];
        (void)sink;
    }
    vx_cb_conds_free(&c);
    load_as_state_dict(data, size);
    return 0;
}
