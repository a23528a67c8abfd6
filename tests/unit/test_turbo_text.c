/* Chatterbox-Turbo text front end against upstream (00_text.json of the
 * Turbo golden set): punc_norm, GPT-2 byte-level BPE ids with the added
 * paralinguistic tags, and the token strings. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io/jsonfile.h"
#include "testlib.h"
#include "text/turbo_text.h"

static void put(const char *dir, const char *name, const char *text) {
    char p[4200];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *f = fopen(p, "w");
    CHECK(f && fputs(text, f) >= 0 && fclose(f) == 0);
}

/* Bad merges.txt and added_tokens.json are errors naming file and line / entry, without leaks or
 * use after free (both found by fuzz_turbo_tokenizer; the sanitizer builds check). */
static void test_bad_merges(void) {
    char dir[] = "/tmp/vocis-turbo-text-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    put(dir, "vocab.json", "{\"a\": 0, \"b\": 1, \"ab\": 2}");
    put(dir, "merges.txt", "#version: 0.2\na b\na b c\n");
    vx_err err = {0};
    vx_tokenizer *tok = NULL;
    int max_len = -1;
    CHECK(vx_turbo_tokenizer_load(dir, &tok, &max_len, &err) == VOCIS_E_FORMAT);
    CHECK(tok == NULL && strstr(err.msg, "merges.txt") && strstr(err.msg, "a b c"));
    put(dir, "merges.txt", "a b\n");
    /* added_tokens.json: a bad entry is named (read before the JSON is freed), a list is refused */
    put(dir, "added_tokens.json", "{\"[x]\": 3, \"[bad]\": \"seven\"}");
    CHECK(vx_turbo_tokenizer_load(dir, &tok, &max_len, &err) == VOCIS_E_FORMAT);
    CHECK(tok == NULL && strstr(err.msg, "added_tokens.json: entry '[bad]' is not a token id"));
    put(dir, "added_tokens.json", "[3]");
    CHECK(vx_turbo_tokenizer_load(dir, &tok, &max_len, &err) == VOCIS_E_FORMAT);
    CHECK(tok == NULL && strstr(err.msg, "not a JSON object"));
    /* resource bounds: an id far past the vocabulary (it would size the id table), a merges.txt over
     * VX_JSON_MAX_BYTES (refused from its size, before it is read) */
    put(dir, "added_tokens.json", "{\"[x]\": 16000000}");
    CHECK(vx_turbo_tokenizer_load(dir, &tok, &max_len, &err) == VOCIS_E_FORMAT);
    CHECK_MSG(tok == NULL && strstr(err.msg, "id 16000000 is implausible for 4 tokens"), "%s", err.msg);
    put(dir, "added_tokens.json", "{}");
    char mp[4200];
    snprintf(mp, sizeof mp, "%s/merges.txt", dir);
    CHECK(truncate(mp, (off_t)VX_JSON_MAX_BYTES + 1) == 0);
    CHECK(vx_turbo_tokenizer_load(dir, &tok, &max_len, &err) == VOCIS_E_FORMAT);
    CHECK_MSG(tok == NULL && strstr(err.msg, "merges.txt: file is 67108865 bytes, more than"), "%s", err.msg);
    put(dir, "merges.txt", "a b\n");
    CHECK(vx_turbo_tokenizer_load(dir, &tok, &max_len, &err) == VOCIS_OK);
    CHECK(vx_tokenizer_token_id(tok, "ab") == 2);
    vx_tokenizer_free(tok);
    char p[4200];
    snprintf(p, sizeof p, "%s/vocab.json", dir);
    unlink(p);
    snprintf(p, sizeof p, "%s/merges.txt", dir);
    unlink(p);
    snprintf(p, sizeof p, "%s/added_tokens.json", dir);
    unlink(p);
    rmdir(dir);
}

int main(int argc, char **argv) {
    (void)argc;
    tl_data_dir = argv[1];
    vx_err err = {0};
    vx_tokenizer *tok = NULL;
    int max_len = 0;
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", tl_path("chatterbox-turbo/ckpt"));
    CHECK(vx_turbo_has_tokenizer(dir));
    if (vx_turbo_tokenizer_load(dir, &tok, &max_len, &err) != VOCIS_OK) {
        fprintf(stderr, "load: %s\n", err.msg);
        return 1;
    }
    CHECK(max_len == 1024);
    CHECK(vx_tokenizer_token_id(tok, "[chuckle]") == 1006);
    CHECK(vx_tokenizer_token_id(tok, "<|endoftext|>") == 1004);
    cJSON *root = NULL;
    if (vx_json_load(tl_path("chatterbox-turbo/golden/00_text.json"), &root, &err) != VOCIS_OK) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    int count = 0;
    const cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(root, "cases")) {
        const char *in = cJSON_GetObjectItem(c, "input")->valuestring;
        const char *want_norm = cJSON_GetObjectItem(c, "normalized")->valuestring;
        char *norm = NULL;
        CHECK(vx_turbo_punc_norm(in, &norm, &err) == VOCIS_OK);
        CHECK_MSG(norm && !strcmp(norm, want_norm), "case %d: '%s' vs '%s'", count, norm ? norm : "", want_norm);
        free(norm);
        int32_t *ids = NULL;
        size_t n = 0;
        CHECK(vx_turbo_text_to_ids(tok, max_len, in, &ids, &n, &err) == VOCIS_OK);
        const cJSON *want = cJSON_GetObjectItem(c, "token_ids"), *wtok = cJSON_GetObjectItem(c, "tokens");
        CHECK_MSG((size_t)cJSON_GetArraySize(want) == n, "case %d: %zu ids, want %d", count, n,
                  cJSON_GetArraySize(want));
        size_t i = 0;
        const cJSON *e, *s = wtok ? wtok->child : NULL;
        cJSON_ArrayForEach(e, want) {
            if (i < n) {
                CHECK_MSG(ids[i] == (int32_t)e->valuedouble, "case %d id %zu: %d vs %d", count, i, ids[i],
                          (int)e->valuedouble);
                const char *ts = vx_tokenizer_id_to_token(tok, ids[i]);
                if (s) CHECK_MSG(ts && !strcmp(ts, s->valuestring), "case %d token %zu", count, i);
            }
            if (s) s = s->next;
            i++;
        }
        free(ids);
        count++;
    }
    CHECK(count >= 10);
    /* tags are case-sensitive added tokens: "[Sigh]" is plain text */
    int32_t *ids = NULL;
    size_t n = 0;
    CHECK(vx_turbo_text_to_ids(tok, 0, "Oh [sigh] [Sigh]", &ids, &n, &err) == VOCIS_OK);
    int tags = 0;
    for (size_t i = 0; i < n; i++) tags += ids[i] == 1007;
    CHECK(tags == 1);
    free(ids);
    /* invalid UTF-8 is refused */
    CHECK(vx_turbo_text_to_ids(tok, 0, "bad \xff", &ids, &n, &err) == VOCIS_E_ARG);
    cJSON_Delete(root);
    vx_tokenizer_free(tok);
    test_bad_merges();
    return tl_finish("test_turbo_text");
}
