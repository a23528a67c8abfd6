/* libFuzzer target: the GPT-2 style tokenizer files of a Turbo / Nano folder
 * (vx_turbo_tokenizer_load: vocab.json + merges.txt, tokenizer_config.json,
 * special_tokens_map.json, added_tokens.json turned into one tokenizer).
 * Input: the files' bytes separated by NUL, in that order; an empty or
 * missing part leaves the file out. An accepted tokenizer encodes a few fixed
 * strings through vx_turbo_text_to_ids: every id in range with a token text,
 * and no more ids than model_max_length. */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "fuzz_tokenizer_checks.h"
#include "text/tokenizer.h"
#include "text/turbo_text.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const files[] = {"vocab.json", "merges.txt", "tokenizer_config.json", "special_tokens_map.json",
                                    "added_tokens.json", NULL};
enum { N_FILES = 5 };

static const char *const texts[] = {
    "Hello world, it's done.",
    "<|endoftext|>a [laugh] b  [chuckle]\n\t<|endoftext|>",
    "  h\xc3\xa9llo \xe2\x80\x9cquoted\xe2\x80\x9d\xe2\x80\xa6 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x91\x8d 1234567",
    "",
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fz_dir(files);
    char *part[N_FILES];
    size_t len[N_FILES];
    fz_split(data, size, part, len, N_FILES);
    for (int k = 0; k < N_FILES; k++) fz_dir_put(files[k], part[k] && len[k] ? (const uint8_t *)part[k] : NULL, len[k]);
    fz_parts_free(part, N_FILES);

    vx_err e = {0};
    vx_tokenizer *t = NULL;
    int max_len = -1;
    if (vx_turbo_tokenizer_load(fz_dir_path, &t, &max_len, &e) != VOCIS_OK) {
        if (t || !e.msg[0] || max_len < 0) abort(); /* failure must clear *out and say why */
        return 0;
    }
    if (vx_tokenizer_size(t) < 0 || max_len < 0) abort();
    for (size_t k = 0; k < sizeof texts / sizeof *texts; k++) {
        int32_t *ids = NULL;
        size_t n = 0;
        if (vx_turbo_text_to_ids(t, max_len, texts[k], &ids, &n, &e) == VOCIS_OK) {
            if (max_len > 0 && n > (size_t)max_len) abort();
            fz_check_ids(t, ids, n);
        } else if (ids || n || !e.msg[0]) {
            abort();
        }
        free(ids);
    }
    fz_check_token_lookup(t);
    vx_tokenizer_free(t);
    return 0;
}
