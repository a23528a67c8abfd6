#include "text/sentences.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *const abbreviations[] = {
    "mr", "mrs", "ms", "dr", "prof", "sr", "jr", "st", "mt", "vs", "etc", "e.g", "i.e", "no", "fig",
    "approx", "dept", "est", "inc", "ltd", "co", "corp", "jan", "feb", "mar", "apr", "jun", "jul", "aug",
    "sep", "sept", "oct", "nov", "dec", "gen", "col", "lt", "sgt", "capt", "rev", "hon", "u.s", "a.m", "p.m",
};

static int is_space(unsigned char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }

/* UTF-8 characters (not bytes) in [s, s+n). */
static size_t char_count(const char *s, size_t n) {
    size_t c = 0;
    for (size_t i = 0; i < n; i++) c += ((unsigned char)s[i] & 0xC0) != 0x80;
    return c;
}

/* Byte length of the longest prefix of s with at most max characters. */
static size_t prefix_bytes(const char *s, size_t n, size_t max) {
    size_t c = 0, i = 0;
    for (; i < n; i++) {
        if (((unsigned char)s[i] & 0xC0) != 0x80) {
            if (c == max) break;
            c++;
        }
    }
    return i;
}

/* Is the '.' at text[i] the end of an abbreviation or initial? */
static int is_abbreviation(const char *text, size_t i) {
    size_t b = i;
    while (b > 0 && (isalpha((unsigned char)text[b - 1]) || text[b - 1] == '.')) b--;
    size_t len = i - b;
    if (len == 0) return 0;
    if (len == 1 && isupper((unsigned char)text[b])) return 1; /* initial: "J. Smith" */
    char word[16];
    if (len >= sizeof word) return 0;
    memcpy(word, text + b, len);
    word[len] = '\0';
    for (size_t k = 0; k < sizeof abbreviations / sizeof abbreviations[0]; k++)
        if (strcasecmp(word, abbreviations[k]) == 0) return 1;
    return 0;
}

/* Byte offsets just past each sentence end. */
static size_t next_sentence_end(const char *t, size_t n, size_t from) {
    for (size_t i = from; i < n; i++) {
        size_t end;
        if (t[i] == '.' || t[i] == '!' || t[i] == '?') end = i + 1;
        else if ((unsigned char)t[i] == 0xE2 && i + 2 < n && (unsigned char)t[i + 1] == 0x80 &&
                 (unsigned char)t[i + 2] == 0xA6)
            end = i + 3; /* … */
        else continue;
        while (end < n && (t[end] == '.' || t[end] == '!' || t[end] == '?')) end++;
        /* closing quotes and brackets stay with the sentence: " ' ) ] ” ’ */
        for (;;) {
            if (end < n && (t[end] == '"' || t[end] == '\'' || t[end] == ')' || t[end] == ']')) end++;
            else if (end + 2 < n && (unsigned char)t[end] == 0xE2 && (unsigned char)t[end + 1] == 0x80 &&
                     ((unsigned char)t[end + 2] == 0x9D || (unsigned char)t[end + 2] == 0x99))
                end += 3;
            else break;
        }
        if (end < n && !is_space((unsigned char)t[end])) continue; /* 3.14, e.g.x, "a.b" */
        if (t[i] == '.' && end == i + 1 && is_abbreviation(t, i)) continue;
        return end;
    }
    return n;
}

static vocis_status push(vx_chunks *c, const char *s, size_t n, vx_err *err) {
    while (n && is_space((unsigned char)*s)) s++, n--;
    while (n && is_space((unsigned char)s[n - 1])) n--;
    if (!n) return VOCIS_OK;
    char **nt = realloc(c->text, sizeof *nt * (size_t)(c->n + 1));
    if (!nt) return vx_fail(err, VOCIS_E_NOMEM, "out of memory");
    c->text = nt;
    if (!(c->text[c->n] = malloc(n + 1))) return vx_fail(err, VOCIS_E_NOMEM, "out of memory");
    memcpy(c->text[c->n], s, n);
    c->text[c->n][n] = '\0';
    c->n++;
    return VOCIS_OK;
}

/* Cut a too-long sentence at a clause boundary, else a space, else hard. */
static vocis_status push_long(vx_chunks *c, const char *s, size_t n, size_t max, vx_err *err) {
    while (n && is_space((unsigned char)*s)) s++, n--;
    while (char_count(s, n) > max) {
        size_t lim = prefix_bytes(s, n, max), cut = 0;
        for (size_t i = lim; i > lim / 3 && !cut; i--)
            if (s[i - 1] == ',' || s[i - 1] == ';' || s[i - 1] == ':') cut = i;
        if (!cut && lim < n && is_space((unsigned char)s[lim])) cut = lim;
        for (size_t i = lim; i > 0 && !cut; i--)
            if (is_space((unsigned char)s[i - 1])) cut = i;
        if (!cut) cut = lim;
        VX_TRY(push(c, s, cut, err));
        s += cut, n -= cut;
        while (n && is_space((unsigned char)*s)) s++, n--;
    }
    return push(c, s, n, err);
}

vocis_status vx_split_text(const char *text, size_t max_chars, vx_chunks *out, vx_err *err) {
    memset(out, 0, sizeof *out);
    size_t n = strlen(text);
    vocis_status st = VOCIS_OK;
    if (max_chars == 0 || char_count(text, n) <= max_chars) {
        st = push(out, text, n, err);
    } else {
        size_t chunk0 = 0, pos = 0; /* current chunk is text[chunk0, pos) */
        while (st == VOCIS_OK && pos < n) {
            size_t end = next_sentence_end(text, n, pos);
            if (char_count(text + chunk0, end - chunk0) <= max_chars) {
                pos = end;
                continue;
            }
            if (pos > chunk0) st = push(out, text + chunk0, pos - chunk0, err); /* flush, retry sentence */
            else st = push_long(out, text + pos, end - pos, max_chars, err), pos = end;
            chunk0 = pos;
        }
        if (st == VOCIS_OK && chunk0 < n) st = push(out, text + chunk0, n - chunk0, err);
    }
    if (st != VOCIS_OK) vx_chunks_free(out);
    return st;
}

void vx_chunks_free(vx_chunks *c) {
    for (int i = 0; i < c->n; i++) free(c->text[i]);
    free(c->text);
    memset(c, 0, sizeof *c);
}
