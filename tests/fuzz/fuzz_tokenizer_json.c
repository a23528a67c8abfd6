/* libFuzzer target: arbitrary bytes as a tokenizer.json (vx_tokenizer_load_mem);
 * an accepted tokenizer encodes a few fixed strings, and every id must be
 * inside its id range and have a token text. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "text/tokenizer.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const texts[] = {
    "Hello world",
    "  h\xc3\xa9llo,  WORLD!! 123 it's\tdone\n\n",
    "<|endoftext|> a [SPACE]b<s></s>[UNK]",
    "e\xcc\x81 \xef\xac\x81 \xe2\x91\xa0 \xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e \xf0\x9f\x91\x8d\xf0\x9f\x8f\xbd",
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa bbbbbbbbbbbbbbbbbbbbbbbbbbbb",
    "",
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    vx_err e = {0};
    vx_tokenizer *t = NULL;
    if (vx_tokenizer_load_mem((const char *)data, size, "fuzz.json", &t, &e) != VOCIS_OK) {
        if (t || !e.msg[0]) abort(); /* failure must clear *out and say why */
        return 0;
    }
    int32_t nid = vx_tokenizer_size(t);
    if (nid < 0) abort();
    for (size_t k = 0; k < sizeof texts / sizeof *texts; k++) {
        int32_t *ids = NULL;
        size_t n = 0;
        if (vx_tokenizer_encode(t, texts[k], strlen(texts[k]), &ids, &n, &e) == VOCIS_OK) {
            for (size_t i = 0; i < n; i++) {
                if (ids[i] < 0 || ids[i] >= nid) abort();
                if (!vx_tokenizer_id_to_token(t, ids[i])) abort();
            }
        }
        free(ids);
    }
    /* the input itself as text (mostly invalid UTF-8: an error) */
    int32_t *ids = NULL;
    size_t n = 0;
    if (vx_tokenizer_encode(t, (const char *)data, size < 256 ? size : 256, &ids, &n, &e) == VOCIS_OK)
        for (size_t i = 0; i < n; i++)
            if (ids[i] < 0 || ids[i] >= nid) abort();
    free(ids);
    for (int32_t id = 0; id < nid && id < 64; id++) {
        const char *s = vx_tokenizer_id_to_token(t, id);
        if (s && vx_tokenizer_token_id(t, s) < 0) abort();
    }
    vx_tokenizer_free(t);
    return 0;
}
