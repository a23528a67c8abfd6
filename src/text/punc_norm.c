/* Chatterbox text normalisation (spec chatterbox.md §4.1) and
 * EnTokenizer.text_to_tokens (§4.2). */
#include <stdlib.h>
#include <string.h>

#include "text/chatterbox_text.h"
#include "text/strbuf.h"
#include "text/unicode.h"


/* The sentence enders that Chatterbox-Multilingual's punc_norm adds: 、，。？！ */
static int ends_with_mtl_ender(const char *s, size_t n) {
    static const char *const enders[] = {"\xE3\x80\x81", "\xEF\xBC\x8C", "\xE3\x80\x82", "\xEF\xBC\x9F",
                                         "\xEF\xBC\x81"};
    for (size_t i = 0; i < sizeof enders / sizeof enders[0]; i++)
        if (n >= 3 && memcmp(s + n - 3, enders[i], 3) == 0) return 1;
    return 0;
}

static vocis_status punc_norm(const char *in, int mtl, char **out, vx_err *err);

vocis_status vx_cb_punc_norm(const char *in, char **out, vx_err *err) { return punc_norm(in, 0, out, err); }

vocis_status vx_mtl_punc_norm(const char *in, char **out, vx_err *err) { return punc_norm(in, 1, out, err); }

static vocis_status punc_norm(const char *in, int mtl, char **out, vx_err *err) {
    *out = NULL;
    if (!in) return vx_fail(err, VOCIS_E_ARG, "punc_norm: no text");
    size_t len = strlen(in);
    if (len == 0) {
        static const char empty[] = "You need to add some text for me to talk.";
        *out = malloc(sizeof empty);
        if (!*out) return vx_fail(err, VOCIS_E_NOMEM, "punc_norm: out of memory");
        memcpy(*out, empty, sizeof empty);
        return VOCIS_OK;
    }
    size_t bad = vx_utf8_check(in, len);
    if (bad < len)
        return vx_fail(err, VOCIS_E_ARG, "text: invalid UTF-8 at byte offset %zu (byte 0x%02X)", bad,
                       (unsigned char)in[bad]);

    /* 1. Capitalise the first character if it is lowercase (before the
     *    whitespace clean-up, so a leading space prevents it); 2. " ".join(text.split()). */
    vx_sbuf b = {0};
    if (vx_sbuf_put_capfirst_words(&b, in, len)) goto nomem;

    /* 3. The replacement table, one rule after the other. */
    static const char *const table[][2] = {
        {"...", ", "},
        {"\xE2\x80\xA6", ", "}, /* U+2026 horizontal ellipsis */
        {":", ","},
        {" - ", ", "},
        {";", ", "},
        {"\xE2\x80\x94", "-"},  /* U+2014 em dash */
        {"\xE2\x80\x93", "-"},  /* U+2013 en dash */
        {" ,", ","},
        {"\xE2\x80\x9C", "\""}, /* U+201C */
        {"\xE2\x80\x9D", "\""}, /* U+201D */
        {"\xE2\x80\x98", "'"},  /* U+2018 */
        {"\xE2\x80\x99", "'"},  /* U+2019 */
    };
    for (size_t r = 0; r < sizeof table / sizeof table[0]; r++)
        if (vx_sbuf_replace(&b, table[r][0], table[r][1])) goto nomem;

    /* 4. rstrip(" ") and 5. a full stop unless it ends with . ! ? - , */
    while (b.n && b.s[b.n - 1] == ' ') b.s[--b.n] = '\0';
    if (!b.n || (!strchr(".!?-,", b.s[b.n - 1]) && !(mtl && ends_with_mtl_ender(b.s, b.n)))) {
        if (vx_sbuf_put(&b, ".", 1)) goto nomem;
    }
    *out = b.s;
    return VOCIS_OK;
nomem:
    free(b.s);
    return vx_fail(err, VOCIS_E_NOMEM, "punc_norm: out of memory");
}

vocis_status vx_cb_text_to_ids(const vx_tokenizer *tok, const char *text, int32_t **ids, size_t *n,
                               vx_tok_unknown *unknown, vx_err *err) {
    *ids = NULL;
    *n = 0;
    char *norm;
    VX_TRY(vx_cb_punc_norm(text, &norm, err));
    size_t spaces = 0, len = strlen(norm);
    for (size_t i = 0; i < len; i++) spaces += norm[i] == ' ';
    char *spaced = malloc(len + spaces * 6 + 1);
    if (!spaced) {
        free(norm);
        return vx_fail(err, VOCIS_E_NOMEM, "text_to_ids: out of memory");
    }
    size_t o = 0;
    for (size_t i = 0; i < len; i++) {
        if (norm[i] == ' ') {
            memcpy(spaced + o, "[SPACE]", 7);
            o += 7;
        } else {
            spaced[o++] = norm[i];
        }
    }
    spaced[o] = '\0';
    free(norm);
    vocis_status st = vx_tokenizer_encode_ex(tok, spaced, o, ids, n, unknown, err);
    free(spaced);
    return st;
}
