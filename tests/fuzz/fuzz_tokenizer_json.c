/* libFuzzer target: arbitrary bytes as a tokenizer.json (vx_tokenizer_load_mem);
 * an accepted tokenizer encodes a few fixed strings, and every id must be
 * inside its id range and have a token text. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_tokenizer_checks.h"
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
    if (vx_tokenizer_size(t) < 0) abort();
    for (size_t k = 0; k < sizeof texts / sizeof *texts; k++) {
        int32_t *ids = NULL;
        size_t n = 0;
        if (vx_tokenizer_encode(t, texts[k], strlen(texts[k]), &ids, &n, &e) == VOCIS_OK) {
            fz_check_ids(t, ids, n);
        }
        free(ids);
    }
    /* the input itself as text (mostly invalid UTF-8: an error) */
    int32_t *ids = NULL;
    size_t n = 0;
    if (vx_tokenizer_encode(t, (const char *)data, size < 256 ? size : 256, &ids, &n, &e) == VOCIS_OK)
        fz_check_ids(t, ids, n);
    free(ids);
    fz_check_token_lookup(t);
    vx_tokenizer_free(t);
    return 0;
}
