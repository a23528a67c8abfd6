/* libFuzzer target: the Chatterbox-Multilingual text front end with a fuzzed
 * Cangjie table. Input: Cangjie5_TC.json, NUL, a text, NUL, a language code
 * (all optional; an empty table part leaves the file out, so Chinese fails).
 * vx_mtl_text_load reads the table from a private folder; then the text (and
 * a fixed Chinese one) goes through vx_mtl_preprocess and vx_mtl_text_to_ids
 * with the test checkpoint's tokenizer, in the given language, zh, ko and none:
 * every step is a string and every id is in range.
 * Data: $VOCIS_FUZZ_DATA or the compiled-in tests/data. */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "fuzz_tokenizer_checks.h"
#include "text/mtl_text.h"
#include "text/tokenizer.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static const char *const files[] = {VX_MTL_CANGJIE_FILE, NULL};
static vx_tokenizer *tok;

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc, (void)argv;
    vx_err e = {0};
    if (vx_tokenizer_load(fz_data_path("chatterbox-mtl/ckpt/" VX_MTL_TOKENIZER_FILE), &tok, &e) != VOCIS_OK) {
        fprintf(stderr, "fuzz_mtl_text: %s (set VOCIS_FUZZ_DATA to the tests/data folder)\n", e.msg);
        abort();
    }
    fz_dir(files);
    return 0;
}

static void run(const vx_mtl_text *t, const char *text, const char *lang) {
    vx_err e = {0};
    vx_mtl_steps s;
    if (vx_mtl_preprocess(t, text, lang, &s, &e) == VOCIS_OK) {
        if (!s.normalized || !s.lowered || !s.nfkd || !s.language || !s.spaced) abort();
        vx_mtl_steps_free(&s);
    } else if (!e.msg[0] || s.spaced) {
        abort();
    }
    int32_t *ids = NULL;
    size_t n = 0;
    if (vx_mtl_text_to_ids(t, tok, text, lang, &ids, &n, NULL, &e) == VOCIS_OK) fz_check_ids(tok, ids, n);
    free(ids);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *part[3];
    size_t len[3];
    fz_split(data, size, part, len, 3);
    fz_dir_put(VX_MTL_CANGJIE_FILE, part[0] && len[0] ? (const uint8_t *)part[0] : NULL, len[0]);

    vx_err e = {0};
    vx_mtl_text *t = NULL;
    if (vx_mtl_text_load(fz_dir_path, &t, &e) != VOCIS_OK) {
        if (t || !e.msg[0]) abort();
    } else {
        const char *text = part[1] ? part[1] : "";
        const char *lang = part[2] && part[2][0] ? part[2] : NULL;
        if (lang) run(t, text, lang);
        run(t, text, "zh");
        run(t, text, "ko");
        run(t, text, NULL);
        run(t, "\xe4\xbd\xa0\xe5\xa5\xbd\xef\xbc\x8c\xe4\xb8\x96\xe7\x95\x8c\xe3\x80\x82 ABC \xe6\x97\xa5", "zh");
        vx_mtl_text_free(t);
    }
    fz_parts_free(part, 3);
    return 0;
}
