/* libFuzzer target: a whole torch.save archive (zip + pickle) through the
 * Chatterbox conds loader, which also reads every tensor it accepts. */
#include "models/chatterbox/conds.h"

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    vx_err e = {0};
    vx_cb_conds c;
    if (vx_cb_conds_load_pt_mem(data, size, "fuzz.pt", &c, &e) == VOCIS_OK) {
        volatile float sink = c.speaker_emb.data[0] + c.emotion_adv.data[0];
        (void)sink;
    }
    vx_cb_conds_free(&c);
    return 0;
}
