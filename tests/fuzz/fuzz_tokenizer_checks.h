/* Invariants of a loaded tokenizer shared by the tokenizer fuzz targets. */
#ifndef VX_FUZZ_TOKENIZER_CHECKS_H
#define VX_FUZZ_TOKENIZER_CHECKS_H

#include <stdlib.h>

#include "text/tokenizer.h"

/* Every id inside the id range and with a token text. */
static inline void fz_check_ids(const vx_tokenizer *t, const int32_t *ids, size_t n) {
    const int32_t nid = vx_tokenizer_size(t);
    for (size_t i = 0; i < n; i++)
        if (ids[i] < 0 || ids[i] >= nid || !vx_tokenizer_id_to_token(t, ids[i])) abort();
}

/* The first tokens' texts look up to an id again. */
static inline void fz_check_token_lookup(const vx_tokenizer *t) {
    const int32_t nid = vx_tokenizer_size(t);
    for (int32_t id = 0; id < nid && id < 64; id++) {
        const char *s = vx_tokenizer_id_to_token(t, id);
        if (s && vx_tokenizer_token_id(t, s) < 0) abort();
    }
}

#endif
