/* Chatterbox-Multilingual text front end against upstream's golden 00_text.json
 * (every intermediate string and the ids of each case), Python str.lower
 * details, the Cangjie table mechanics on crafted tables, and bad input. */
#define _GNU_SOURCE
#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/jsonfile.h"
#include "testlib.h"
#include "text/mtl_text.h"
#include "text/tokenizer.h"

static const char *str_of(const cJSON *c, const char *k) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(c, k);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static void check_str(int i, const char *what, const char *got, const char *want) {
    CHECK_MSG(want && got && strcmp(got, want) == 0, "case %d %s: got \"%s\", want \"%s\"", i, what,
              got ? got : "(null)", want ? want : "(null)");
}

static void golden_cases(void) {
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", tl_path("chatterbox-mtl/ckpt"));
    vx_err err = {0};
    vx_mtl_text *t = NULL;
    vx_tokenizer *tok = NULL;
    cJSON *root = NULL;
    CHECK(vx_mtl_text_load(dir, &t, &err) == VOCIS_OK);
    char p[4200];
    snprintf(p, sizeof p, "%s/%s", dir, VX_MTL_TOKENIZER_FILE);
    CHECK(vx_tokenizer_load(p, &tok, &err) == VOCIS_OK);
    CHECK(vx_json_load(tl_path("chatterbox-mtl/golden/00_text.json"), &root, &err) == VOCIS_OK);
    if (!t || !tok || !root) {
        fprintf(stderr, "setup: %s\n", err.msg);
        goto done;
    }
    const cJSON *cases = cJSON_GetObjectItemCaseSensitive(root, "cases");
    int n = 0;
    for (const cJSON *c = cases ? cases->child : NULL; c; c = c->next, n++) {
        const char *lang = str_of(c, "language_id_arg"); /* NULL for JSON null */
        vx_mtl_steps s;
        if (vx_mtl_preprocess(t, str_of(c, "input"), lang, &s, &err) != VOCIS_OK) {
            CHECK_MSG(0, "case %d: %s", n, err.msg);
            continue;
        }
        check_str(n, "normalized", s.normalized, str_of(c, "normalized"));
        check_str(n, "lowered", s.lowered, str_of(c, "lowered"));
        check_str(n, "nfkd", s.nfkd, str_of(c, "nfkd"));
        check_str(n, "after_language_step", s.language, str_of(c, "after_language_step"));
        check_str(n, "spaced", s.spaced, str_of(c, "spaced"));
        vx_mtl_steps_free(&s);
        int32_t *ids = NULL;
        size_t nids = 0;
        CHECK(vx_mtl_text_to_ids(t, tok, str_of(c, "input"), lang, &ids, &nids, NULL, &err) == VOCIS_OK);
        const cJSON *want = cJSON_GetObjectItemCaseSensitive(c, "token_ids");
        int same = (int)nids == cJSON_GetArraySize(want);
        size_t k = 0;
        for (const cJSON *w = want ? want->child : NULL; w && same; w = w->next, k++)
            same = ids[k] == (int32_t)w->valuedouble;
        CHECK_MSG(same, "case %d: token ids differ (%zu ids, want %d)", n, nids, cJSON_GetArraySize(want));
        free(ids);
    }
    CHECK_MSG(n == 35, "%d cases", n);
    printf("ok   00_text.json: %d cases\n", n);
done:
    cJSON_Delete(root);
    vx_tokenizer_free(tok);
    vx_mtl_text_free(t);
}

static void lower_cases(void) {
    static const char *const c[][2] = {
        {"\xCE\xA3", "\xCF\x83"},                                   /* lone Σ → σ */
        {"\xCE\x9F\xCE\xA3", "\xCE\xBF\xCF\x82"},                   /* ΟΣ → ος (final) */
        {"\xCE\x9F\xCE\xA3\xCE\x91", "\xCE\xBF\xCF\x83\xCE\xB1"},   /* ΟΣΑ → οσα */
        {"\xCE\x9F\xCE\xA3'", "\xCE\xBF\xCF\x82'"},                 /* apostrophe is case-ignorable */
        {"\xCE\x9F\xCE\xA3'\xCE\x91", "\xCE\xBF\xCF\x83'\xCE\xB1"}, /* ... skipped before a cased letter */
        {"\xCE\x9F\xCE\xA3 x", "\xCE\xBF\xCF\x82 x"},               /* a space is neither */
        {"\xC4\xB0", "i\xCC\x87"},                                  /* İ → i + U+0307 */
        {"\xE2\x84\xAA", "k"},                                      /* KELVIN SIGN */
        {"\xE2\x85\xA0", "\xE2\x85\xB0"},                           /* Ⅰ → ⅰ */
        {"ABC\xC3\x9F", "abc\xC3\x9F"},
    };
    vx_err err = {0};
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        char *o = NULL;
        CHECK(vx_py_lower(c[i][0], &o, &err) == VOCIS_OK);
        CHECK_MSG(o && strcmp(o, c[i][1]) == 0, "lower #%zu: got \"%s\"", i, o ? o : "(null)");
        free(o);
    }
    CHECK(vx_mtl_language_index("\xE2\x84\xAAo") == 12); /* upstream lower-cases the id: Kelvin 'K' → ko */
    CHECK(vx_mtl_language_index("ZH") == 22);
    CHECK(vx_mtl_language_index("xx") < 0);
    CHECK(vx_mtl_language_index("") < 0);
}

static int write_file(const char *path, const char *s) {
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    fputs(s, f);
    return fclose(f);
}

static char *cj(const vx_mtl_text *t, const char *text, vx_err *err) {
    vx_mtl_steps s;
    if (vx_mtl_preprocess(t, text, "zh", &s, err)) return NULL;
    char *r = s.language;
    s.language = NULL;
    vx_mtl_steps_free(&s);
    return r;
}

static void cangjie_tables(void) {
    char dir[] = "/tmp/vocis_mtl_XXXXXX";
    if (!mkdtemp(dir)) {
        CHECK(0);
        return;
    }
    char p[256];
    snprintf(p, sizeof p, "%s/%s", dir, VX_MTL_CANGJIE_FILE);
    vx_err err = {0};
    vx_mtl_text *t = NULL;
    /* 日 and 曰 share "a" (suffix 1 for the second); 東 is listed twice: the last code wins, and its suffix is its
     * position in that code's list (after 木, and 東's own earlier duplicate counts only once: list.index) */
    CHECK(write_file(p, "[\"\xE6\x97\xA5\\ta\", \"\xE6\x9B\xB0\\ta\\tb'x\", \"\xE6\x9D\xB1\\tzz\", \"\xE6\x9C\xA8\\td\","
                        " \"\xE6\x9D\xB1\\td\", \"\xE6\x9D\xB1\\td\", \"xy\\td\"]") == 0);
    CHECK(vx_mtl_text_load(dir, &t, &err) == VOCIS_OK);
    char *o = t ? cj(t, "\xE6\x97\xA5\xE6\x9B\xB0\xE6\x9D\xB1\xE6\x9C\xA8" "a\xE3\x81\xAE", &err) : NULL;
    CHECK_MSG(o && strcmp(o, "[cj_a][cj_.][cj_a][cj_1][cj_.][cj_d][cj_1][cj_.][cj_d][cj_.]a\xE3\x81\xAE.") == 0,
              "got %s", o ? o : err.msg);
    free(o);
    vx_mtl_text_free(t);
    /* malformed tables are one-line errors naming the file */
    static const char *const bad[] = {"{}", "[\"no tab\"]", "[1]", "[\"a\\tb\""};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CHECK(write_file(p, bad[i]) == 0);
        t = NULL;
        vx_err_clear(&err);
        CHECK(vx_mtl_text_load(dir, &t, &err) != VOCIS_OK);
        CHECK_MSG(!t && strstr(err.msg, VX_MTL_CANGJIE_FILE), "bad #%zu: %s", i, err.msg);
    }
    /* no table: only Chinese fails */
    unlink(p);
    CHECK(vx_mtl_text_load(dir, &t, &err) == VOCIS_OK);
    vx_mtl_steps s;
    CHECK(vx_mtl_preprocess(t, "hola", "es", &s, &err) == VOCIS_OK);
    vx_mtl_steps_free(&s);
    CHECK(vx_mtl_preprocess(t, "\xE6\x97\xA5", "zh", &s, &err) == VOCIS_E_IO);
    CHECK(strstr(err.msg, VX_MTL_CANGJIE_FILE) != NULL);
    /* unknown language and invalid UTF-8 */
    CHECK(vx_mtl_preprocess(t, "hola", "xx", &s, &err) == VOCIS_E_ARG);
    CHECK(strstr(err.msg, "ar, da, de") != NULL);
    CHECK(vx_mtl_preprocess(t, "a\xFF", "es", &s, &err) == VOCIS_E_ARG);
    vx_mtl_text_free(t);
    rmdir(dir);
}

int main(int argc, char **argv) {
    tl_data_dir = argc > 1 ? argv[1] : "tests/data";
    golden_cases();
    lower_cases();
    cangjie_tables();
    return tl_finish("test_mtl_text");
}
