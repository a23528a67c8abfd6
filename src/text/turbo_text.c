/* Chatterbox-Turbo text front end: punc_norm (turbo version) and the GPT-2
 * tokenizer built from the release's vocab.json / merges.txt files. */
#include "text/turbo_text.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io/jsonfile.h"
#include "text/strbuf.h"
#include "text/unicode.h"


vocis_status vx_turbo_punc_norm(const char *in, char **out, vx_err *err) {
    *out = NULL;
    if (!in) return vx_fail(err, VOCIS_E_ARG, "punc_norm: no text");
    const size_t len = strlen(in);
    if (len == 0) {
        static const char empty[] = "You need to add some text for me to talk.";
        if (!(*out = malloc(sizeof empty))) return vx_fail(err, VOCIS_E_NOMEM, "punc_norm: out of memory");
        memcpy(*out, empty, sizeof empty);
        return VOCIS_OK;
    }
    size_t bad = vx_utf8_check(in, len);
    if (bad < len)
        return vx_fail(err, VOCIS_E_ARG, "text: invalid UTF-8 at byte offset %zu (byte 0x%02X)", bad,
                       (unsigned char)in[bad]);
    /* text[0].upper() when text[0].islower(), then " ".join(text.split()) */
    vx_sbuf b = {0};
    if (vx_sbuf_put_capfirst_words(&b, in, len)) goto nomem;
    static const char *const table[][2] = {
        {"\xE2\x80\xA6", ", "}, /* U+2026 … */
        {":", ","},
        {"\xE2\x80\x94", "-"},  /* U+2014 — */
        {"\xE2\x80\x93", "-"},  /* U+2013 – */
        {" ,", ","},
        {"\xE2\x80\x9C", "\""}, /* U+201C */
        {"\xE2\x80\x9D", "\""}, /* U+201D */
        {"\xE2\x80\x98", "'"},  /* U+2018 */
        {"\xE2\x80\x99", "'"},  /* U+2019 */
    };
    for (size_t r = 0; r < sizeof table / sizeof table[0]; r++)
        if (vx_sbuf_replace(&b, table[r][0], table[r][1])) goto nomem;
    while (b.n && b.s[b.n - 1] == ' ') b.s[--b.n] = '\0';
    if (!b.n || !strchr(".!?-,", b.s[b.n - 1]))
        if (vx_sbuf_put(&b, ".", 1)) goto nomem;
    *out = b.s;
    return VOCIS_OK;
nomem:
    free(b.s);
    return vx_fail(err, VOCIS_E_NOMEM, "punc_norm: out of memory");
}

static int exists(const char *dir, const char *name) {
    char p[4200];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    return access(p, F_OK) == 0;
}

int vx_turbo_has_tokenizer(const char *dir) {
    return exists(dir, "tokenizer.json") || (exists(dir, "vocab.json") && exists(dir, "merges.txt"));
}

static cJSON *added_token(int id, const char *content, int lstrip, int rstrip, int normalized, int special,
                          int single_word) {
    cJSON *o = cJSON_CreateObject();
    if (!o) return NULL;
    cJSON_AddNumberToObject(o, "id", id);
    cJSON_AddStringToObject(o, "content", content);
    cJSON_AddBoolToObject(o, "single_word", single_word);
    cJSON_AddBoolToObject(o, "lstrip", lstrip);
    cJSON_AddBoolToObject(o, "rstrip", rstrip);
    cJSON_AddBoolToObject(o, "normalized", normalized);
    cJSON_AddBoolToObject(o, "special", special);
    return o;
}

static int flag(const cJSON *o, const char *k, int dflt) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsBool(v) ? cJSON_IsTrue(v) : dflt;
}

/* The added tokens transformers registers for these files. */
static vocis_status collect_added(const char *dir, const cJSON *cfg, const cJSON *vocab, cJSON *list, vx_err *err) {
    char path[4200];
    const cJSON *dec = cJSON_GetObjectItemCaseSensitive(cfg, "added_tokens_decoder");
    if (cJSON_IsObject(dec)) {
        const cJSON *e;
        cJSON_ArrayForEach(e, dec) {
            char *end;
            long id = strtol(e->string, &end, 10);
            const cJSON *c = cJSON_GetObjectItemCaseSensitive(e, "content");
            if (*end || id < 0 || id > (1L << 30) || !cJSON_IsString(c))
                return vx_fail(err, VOCIS_E_FORMAT, "%s/tokenizer_config.json: added_tokens_decoder entry '%s' is "
                               "not {id: {content: ...}}", dir, e->string);
            int special = flag(e, "special", 0);
            cJSON *t = added_token((int)id, c->valuestring, flag(e, "lstrip", 0), flag(e, "rstrip", 0),
                                   flag(e, "normalized", !special), special, flag(e, "single_word", 0));
            if (!t || !cJSON_AddItemToArray(list, t)) return vx_fail(err, VOCIS_E_NOMEM, "out of memory");
        }
        return VOCIS_OK;
    }
    /* special tokens (bos / eos / unk / pad) from special_tokens_map.json, then added_tokens.json */
    snprintf(path, sizeof path, "%s/special_tokens_map.json", dir);
    if (access(path, F_OK) == 0) {
        cJSON *sm;
        VX_TRY(vx_json_load(path, &sm, err));
        const cJSON *e;
        cJSON_ArrayForEach(e, sm) {
            const char *s = cJSON_IsString(e) ? e->valuestring
                            : cJSON_IsString(cJSON_GetObjectItemCaseSensitive(e, "content"))
                                ? cJSON_GetObjectItemCaseSensitive(e, "content")->valuestring
                                : NULL;
            const cJSON *id = s ? cJSON_GetObjectItemCaseSensitive(vocab, s) : NULL;
            int dup = 0;
            const cJSON *x;
            cJSON_ArrayForEach(x, list) dup |= s && !strcmp(cJSON_GetObjectItemCaseSensitive(x, "content")->valuestring, s);
            if (!cJSON_IsNumber(id) || dup) continue;
            cJSON *t = added_token(id->valueint, s, 0, 0, 0, 1, 0);
            if (!t || !cJSON_AddItemToArray(list, t)) {
                cJSON_Delete(sm);
                return vx_fail(err, VOCIS_E_NOMEM, "out of memory");
            }
        }
        cJSON_Delete(sm);
    }
    snprintf(path, sizeof path, "%s/added_tokens.json", dir);
    if (access(path, F_OK) == 0) {
        cJSON *at;
        VX_TRY(vx_json_load(path, &at, err));
        if (!cJSON_IsObject(at)) {
            cJSON_Delete(at);
            return vx_fail(err, VOCIS_E_FORMAT, "%s: not a JSON object of token -> id", path);
        }
        const cJSON *e;
        cJSON_ArrayForEach(e, at) {
            if (!cJSON_IsNumber(e) || e->valuedouble < 0 || e->valuedouble > (double)(1 << 30)) {
                vocis_status st = vx_fail(err, VOCIS_E_FORMAT, "%s: entry '%s' is not a token id", path, e->string);
                cJSON_Delete(at); /* after the message: it names the entry */
                return st;
            }
            cJSON *t = added_token(e->valueint, e->string, 0, 0, 1, 0, 0);
            if (!t || !cJSON_AddItemToArray(list, t)) {
                cJSON_Delete(at);
                return vx_fail(err, VOCIS_E_NOMEM, "out of memory");
            }
        }
        cJSON_Delete(at);
    }
    return VOCIS_OK;
}

vocis_status vx_turbo_tokenizer_load(const char *dir, vx_tokenizer **out, int *max_len, vx_err *err) {
    *out = NULL;
    *max_len = 0;
    char path[4200];
    cJSON *cfg = NULL, *vocab = NULL, *root = NULL;
    char *merges = NULL, *json = NULL;
    size_t mlen = 0;
    vocis_status st = VOCIS_OK;
    snprintf(path, sizeof path, "%s/tokenizer_config.json", dir);
    if (access(path, F_OK) == 0) {
        VX_TRY(vx_json_load(path, &cfg, err));
        const cJSON *ml = cJSON_GetObjectItemCaseSensitive(cfg, "model_max_length");
        if (cJSON_IsNumber(ml) && ml->valuedouble >= 1 && ml->valuedouble < 1e9) *max_len = (int)ml->valuedouble;
        const cJSON *ap = cJSON_GetObjectItemCaseSensitive(cfg, "add_prefix_space");
        if (cJSON_IsTrue(ap)) {
            st = vx_fail(err, VOCIS_E_UNSUPPORTED, "%s: add_prefix_space true is not supported", path);
            goto done;
        }
    }
    if (exists(dir, "tokenizer.json")) {
        snprintf(path, sizeof path, "%s/tokenizer.json", dir);
        st = vx_tokenizer_load(path, out, err);
        goto done;
    }
    snprintf(path, sizeof path, "%s/vocab.json", dir);
    if ((st = vx_json_load(path, &vocab, err))) goto done;
    if (!cJSON_IsObject(vocab)) {
        st = vx_fail(err, VOCIS_E_FORMAT, "%s: not a JSON object of token -> id", path);
        goto done;
    }
    snprintf(path, sizeof path, "%s/merges.txt", dir);
    if ((st = vx_read_file(path, VX_JSON_MAX_BYTES, &merges, &mlen, err))) goto done;
    root = cJSON_CreateObject();
    cJSON *model = cJSON_CreateObject(), *ml = cJSON_CreateArray(), *added = cJSON_CreateArray(),
          *pre = cJSON_CreateObject();
    if (!root || !model || !ml || !added || !pre) {
        cJSON_Delete(model), cJSON_Delete(ml), cJSON_Delete(added), cJSON_Delete(pre);
        st = vx_fail(err, VOCIS_E_NOMEM, "out of memory");
        goto done;
    }
    cJSON_AddItemToObject(root, "added_tokens", added);
    cJSON_AddNullToObject(root, "normalizer");
    cJSON_AddStringToObject(pre, "type", "ByteLevel");
    cJSON_AddFalseToObject(pre, "add_prefix_space");
    cJSON_AddTrueToObject(pre, "trim_offsets");
    cJSON_AddTrueToObject(pre, "use_regex");
    cJSON_AddItemToObject(root, "pre_tokenizer", pre);
    cJSON_AddNullToObject(root, "post_processor");
    cJSON_AddStringToObject(model, "type", "BPE");
    cJSON_AddFalseToObject(model, "fuse_unk");
    cJSON_AddFalseToObject(model, "byte_fallback");
    cJSON_AddItemToObject(root, "model", model);
    cJSON_AddItemToObject(model, "merges", ml); /* owned by root from here on, also when a line is bad */
    /* merges.txt: "#version" header line(s), then "a b" per line */
    for (char *line = merges, *next; line && *line; line = next) {
        next = strchr(line, '\n');
        if (next) *next++ = '\0';
        size_t l = strlen(line);
        if (l && line[l - 1] == '\r') line[--l] = '\0';
        if (!l || (line == merges && !strncmp(line, "#version", 8))) continue;
        char *sp = strchr(line, ' ');
        if (!sp || sp == line || !sp[1] || strchr(sp + 1, ' ')) {
            st = vx_fail(err, VOCIS_E_FORMAT, "%s/merges.txt: line '%.40s' is not 'a b'", dir, line);
            goto done;
        }
        cJSON *s = cJSON_CreateString(line);
        if (!s || !cJSON_AddItemToArray(ml, s)) {
            st = vx_fail(err, VOCIS_E_NOMEM, "out of memory");
            goto done;
        }
    }
    if ((st = collect_added(dir, cfg, vocab, added, err))) goto done;
    cJSON_AddItemToObject(model, "vocab", vocab);
    vocab = NULL;
    if (!(json = cJSON_PrintUnformatted(root))) {
        st = vx_fail(err, VOCIS_E_NOMEM, "out of memory");
        goto done;
    }
    snprintf(path, sizeof path, "%s/vocab.json", dir);
    st = vx_tokenizer_load_mem(json, strlen(json), path, out, err);
done:
    cJSON_Delete(cfg);
    cJSON_Delete(vocab);
    cJSON_Delete(root);
    free(merges);
    free(json);
    return st;
}

vocis_status vx_turbo_text_to_ids(const vx_tokenizer *tok, int max_len, const char *text, int32_t **ids, size_t *n,
                                  vx_err *err) {
    *ids = NULL;
    *n = 0;
    char *norm;
    VX_TRY(vx_turbo_punc_norm(text, &norm, err));
    vocis_status st = vx_tokenizer_encode(tok, norm, strlen(norm), ids, n, err);
    free(norm);
    if (st == VOCIS_OK && max_len > 0 && *n > (size_t)max_len) *n = (size_t)max_len; /* truncation=True */
    return st;
}
