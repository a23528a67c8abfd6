#include "text/sentences.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "text/strbuf.h"

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

static const char *const number_words[] = {
    "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve", "thirteen",
    "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen", "twenty", "thirty", "forty", "fifty",
    "sixty", "seventy", "eighty", "ninety", "hundred",
};

/* Is [w, w+n) a chapter number: digits, Roman numerals, or English number words ("Twenty-One")? */
static int is_chapter_number(const char *w, size_t n) {
    size_t digits = 0, roman = 0;
    for (size_t i = 0; i < n; i++) {
        digits += isdigit((unsigned char)w[i]) != 0;
        roman += strchr("ivxlcdmIVXLCDM", w[i]) != NULL;
    }
    if (digits == n || roman == n) return 1;
    for (size_t k = 0; k < sizeof number_words / sizeof number_words[0]; k++)
        if (!strncasecmp(w, number_words[k], strlen(number_words[k]))) return 1;
    return 0;
}

/* Is the (trimmed) line [s, s+n) a chapter heading? *title, *title_n: its words to speak. */
static int is_heading(const char *s, size_t n, const char **title, size_t *title_n) {
    size_t i = 0;
    while (i < n && s[i] == '#') i++;
    if (i >= 1 && i <= 6 && (i == n || s[i] == ' ' || s[i] == '\t')) { /* Markdown "# Title" (closing #s dropped) */
        while (n > i && (s[n - 1] == '#' || is_space((unsigned char)s[n - 1]))) n--;
        while (i < n && is_space((unsigned char)s[i])) i++;
        *title = s + i, *title_n = n - i;
        return 1;
    }
    if (n < 8 || (strncmp(s, "Chapter", 7) && strncmp(s, "CHAPTER", 7)) || (s[7] != ' ' && s[7] != '\t')) return 0;
    size_t w = 8;
    while (w < n && is_space((unsigned char)s[w])) w++;
    size_t e = w;
    while (e < n && (isalnum((unsigned char)s[e]) || s[e] == '-')) e++;
    if (e == w || !is_chapter_number(s + w, e - w)) return 0;
    /* "Chapter 3", "Chapter 3.", "Chapter 3: Title", "CHAPTER III - Title"; not "Chapter 3 of the book" */
    size_t p = e;
    while (p < n && (s[p] == ' ' || s[p] == '\t')) p++;
    const int dash = p + 2 < n && !memcmp(s + p, "\xE2\x80", 2) && (s[p + 2] == '\x93' || s[p + 2] == '\x94');
    if (p < n && !strchr(".:-)", s[p]) && !dash) return 0;
    *title = s, *title_n = n;
    return 1;
}

/* The text gathered in b as the next chapter; b restarts empty. */
static vocis_status push_chapter(vx_chunks *c, vx_sbuf *b, vx_err *err) {
    vocis_status st = b->n ? push(c, b->s, b->n, err) : VOCIS_OK;
    b->n = 0;
    return st;
}

/* Appends [s, s+n) to b: 0, or an out-of-memory status. */
static vocis_status put(vx_sbuf *b, const char *s, size_t n, vx_err *err) {
    return vx_sbuf_put(b, s, n) ? vx_fail(err, VOCIS_E_NOMEM, "out of memory") : VOCIS_OK;
}

vocis_status vx_split_chapters(const char *text, vx_chunks *out, vx_err *err) {
    memset(out, 0, sizeof *out);
    vx_sbuf b = {0};
    vocis_status st = VOCIS_OK;
    for (const char *s = text; st == VOCIS_OK && *s;) {
        size_t n = strcspn(s, "\n\f");
        const char *t = s, *title;
        size_t tn = n, title_n;
        while (tn && is_space((unsigned char)*t)) t++, tn--;
        while (tn && is_space((unsigned char)t[tn - 1])) tn--;
        if (is_heading(t, tn, &title, &title_n)) {
            st = push_chapter(out, &b, err);
            if (st == VOCIS_OK) st = put(&b, title, title_n, err);
            /* a heading without a closing mark ends its sentence, so that it is spoken on its own */
            if (st == VOCIS_OK && title_n && !strchr(".!?:;", title[title_n - 1]) &&
                !(title_n >= 3 && !memcmp(title + title_n - 3, "\xE2\x80\xA6", 3)))
                st = put(&b, ".", 1, err);
        } else {
            st = put(&b, s, n, err);
        }
        if (st == VOCIS_OK) st = put(&b, "\n", 1, err);
        if (st == VOCIS_OK && s[n] == '\f') st = push_chapter(out, &b, err);
        s += n + (s[n] != '\0');
    }
    if (st == VOCIS_OK) st = push_chapter(out, &b, err);
    free(b.s);
    if (st != VOCIS_OK) vx_chunks_free(out);
    return st;
}

void vx_chunks_free(vx_chunks *c) {
    for (int i = 0; i < c->n; i++) free(c->text[i]);
    free(c->text);
    memset(c, 0, sizeof *c);
}
