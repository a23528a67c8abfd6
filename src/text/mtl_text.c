/* Chatterbox-Multilingual text front end (spec chatterbox.md §12.3). */
#include "text/mtl_text.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <utf8proc.h>

#include "io/jsonfile.h"
#include "text/chatterbox_text.h"
#include "text/strbuf.h"
#include "text/unicode.h"

/* ---- languages (mtl_tts.SUPPORTED_LANGUAGES) ---- */

const char *const vx_mtl_language_codes[VX_MTL_N_LANGUAGES] = {
    "ar", "da", "de", "el", "en", "es", "fi", "fr", "he", "hi", "it", "ja",
    "ko", "ms", "nl", "no", "pl", "pt", "ru", "sv", "sw", "tr", "zh",
};
const char *const vx_mtl_language_names[VX_MTL_N_LANGUAGES] = {
    "Arabic",  "Danish", "German", "Greek",     "English", "Spanish", "Finnish", "French",
    "Hebrew",  "Hindi",  "Italian", "Japanese", "Korean",  "Malay",   "Dutch",   "Norwegian",
    "Polish",  "Portuguese", "Russian", "Swedish", "Swahili", "Turkish", "Chinese",
};

const char *vx_mtl_language_list(void) {
    return "ar, da, de, el, en, es, fi, fr, he, hi, it, ja, ko, ms, nl, no, pl, pt, ru, sv, sw, tr, zh";
}

/* ---- growing strings ---- */


static char *dup_str(const char *s) {
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

/* ---- Python str.lower() ---- */

static int category_of(uint32_t cp) { return utf8proc_category((utf8proc_int32_t)cp); }

/* PropList.txt Other_Uppercase (Unicode 15.0). */
static int other_uppercase(uint32_t cp) {
    return (cp >= 0x2160 && cp <= 0x216F) || (cp >= 0x24B6 && cp <= 0x24CF) || (cp >= 0x1F130 && cp <= 0x1F149) ||
           (cp >= 0x1F150 && cp <= 0x1F169) || (cp >= 0x1F170 && cp <= 0x1F189);
}

/* DerivedCoreProperties Cased: Lowercase, Uppercase or Lt. */
static int is_cased(uint32_t cp) {
    const int c = category_of(cp);
    return c == UTF8PROC_CATEGORY_LU || c == UTF8PROC_CATEGORY_LT || vx_uc_py_lower(cp) || other_uppercase(cp);
}

/* DerivedCoreProperties Case_Ignorable: Mn, Me, Cf, Lm, Sk, or Word_Break MidLetter / MidNumLet / Single_Quote. */
static int is_case_ignorable(uint32_t cp) {
    switch (category_of(cp)) {
    case UTF8PROC_CATEGORY_MN:
    case UTF8PROC_CATEGORY_ME:
    case UTF8PROC_CATEGORY_CF:
    case UTF8PROC_CATEGORY_LM:
    case UTF8PROC_CATEGORY_SK: return 1;
    default: break;
    }
    static const uint32_t wb[] = {0x0027, 0x002E, 0x003A, 0x00B7, 0x0387, 0x055F, 0x05F4, 0x2018, 0x2019,
                                  0x2024, 0x2027, 0xFE13, 0xFE52, 0xFE55, 0xFF07, 0xFF0E, 0xFF1A};
    for (size_t i = 0; i < sizeof wb / sizeof wb[0]; i++)
        if (cp == wb[i]) return 1;
    return 0;
}

/* Decodes valid UTF-8 into code points (*n of them); NULL when out of memory. */
static uint32_t *decode(const char *s, size_t len, size_t *n) {
    uint32_t *cps = malloc(sizeof *cps * (len + 1));
    if (!cps) return NULL;
    size_t k = 0;
    for (size_t i = 0; i < len;) {
        int l = vx_utf8_next(s, len, i, &cps[k]);
        if (l <= 0) break; /* callers pass checked text */
        i += (size_t)l;
        k++;
    }
    *n = k;
    return cps;
}

/* CPython's handle_capital_sigma: U+03A3 at i is final when a cased letter precedes it and none follows
 * (case-ignorable characters skipped both ways). */
static int final_sigma(const uint32_t *cps, size_t n, size_t i) {
    size_t j = i;
    while (j > 0 && is_case_ignorable(cps[j - 1])) j--;
    if (j == 0 || !is_cased(cps[j - 1])) return 0;
    for (j = i + 1; j < n && is_case_ignorable(cps[j]); j++) {
    }
    return j == n || !is_cased(cps[j]);
}

static vocis_status check_utf8(const char *in, size_t len, vx_err *err) {
    size_t bad = vx_utf8_check(in, len);
    if (bad < len)
        return vx_fail(err, VOCIS_E_ARG, "text: invalid UTF-8 at byte offset %zu (byte 0x%02X)", bad,
                       (unsigned char)in[bad]);
    return VOCIS_OK;
}

vocis_status vx_py_lower(const char *in, char **out, vx_err *err) {
    *out = NULL;
    const size_t len = strlen(in);
    VX_TRY(check_utf8(in, len, err));
    size_t n;
    uint32_t *cps = decode(in, len, &n);
    vx_sbuf b = {0};
    if (!cps || vx_sbuf_put(&b, "", 0)) goto nomem;
    for (size_t i = 0; i < n; i++) {
        const uint32_t c = cps[i];
        int bad = 0;
        if (c < 0x80) {
            char ch = (char)(c >= 'A' && c <= 'Z' ? c + 32 : c);
            bad = vx_sbuf_put(&b, &ch, 1);
        } else if (c == 0x0130) { /* SpecialCasing: LATIN CAPITAL LETTER I WITH DOT ABOVE → i + COMBINING DOT ABOVE */
            bad = vx_sbuf_cp(&b, 0x69) || vx_sbuf_cp(&b, 0x307);
        } else if (c == 0x03A3) {
            bad = vx_sbuf_cp(&b, final_sigma(cps, n, i) ? 0x03C2 : 0x03C3);
        } else {
            bad = vx_sbuf_cp(&b, (uint32_t)utf8proc_tolower((utf8proc_int32_t)c));
        }
        if (bad) goto nomem;
    }
    free(cps);
    *out = b.s;
    return VOCIS_OK;
nomem:
    free(cps);
    free(b.s);
    return vx_fail(err, VOCIS_E_NOMEM, "text: out of memory");
}

static vocis_status nfkd(const char *in, char **out, vx_err *err) {
    utf8proc_uint8_t *dst = NULL;
    utf8proc_ssize_t r = utf8proc_map((const utf8proc_uint8_t *)in, (utf8proc_ssize_t)strlen(in), &dst,
                                      (utf8proc_option_t)(UTF8PROC_STABLE | UTF8PROC_COMPAT | UTF8PROC_DECOMPOSE));
    if (r < 0) {
        *out = NULL;
        return vx_fail(err, r == UTF8PROC_ERROR_NOMEM ? VOCIS_E_NOMEM : VOCIS_E_ARG, "text: NFKD failed: %s",
                       utf8proc_errmsg(r));
    }
    *out = (char *)dst;
    return VOCIS_OK;
}

/* ---- Cangjie (ChineseCangjieConverter) ---- */

typedef struct cj_glyph {
    uint32_t cp;
    const char *code; /* into the pool */
    int suffix;       /* position of the glyph among the glyphs sharing its code */
} cj_glyph;

struct vx_mtl_text {
    int has_cangjie;
    char path[4200];
    cj_glyph *glyphs; /* sorted by cp */
    size_t n;
    char *pool;       /* codes */
};

typedef struct cj_entry {
    const char *word, *code;
    size_t order, pos;
} cj_entry;

static int by_code_order(const void *a, const void *b) {
    const cj_entry *x = a, *y = b;
    int c = strcmp(x->code, y->code);
    return c ? c : (x->order > y->order) - (x->order < y->order);
}

static int by_word_order(const void *a, const void *b) {
    const cj_entry *x = a, *y = b;
    int c = strcmp(x->word, y->word);
    return c ? c : (x->order > y->order) - (x->order < y->order);
}

static int by_cp(const void *a, const void *b) {
    const cj_glyph *x = a, *y = b;
    return (x->cp > y->cp) - (x->cp < y->cp);
}

/* Upstream: `word, code = entry.split("\t")[:2]`; word2cj[word] = code (the last wins); cj2word[code] lists the
 * words in file order; a glyph's suffix is cj2word[code].index(glyph). */
static vocis_status cangjie_build(vx_mtl_text *t, const cJSON *root, vx_err *err) {
    const char *path = t->path;
    if (!cJSON_IsArray(root)) return vx_fail(err, VOCIS_E_FORMAT, "%s: expected a JSON list of strings", path);
    const size_t n = (size_t)cJSON_GetArraySize(root);
    size_t bytes = 1;
    for (const cJSON *it = root->child; it; it = it->next)
        bytes += cJSON_IsString(it) ? strlen(it->valuestring) + 1 : 0;
    cj_entry *e = calloc(n ? n : 1, sizeof *e);
    char *pool = malloc(bytes);
    if (!e || !pool) {
        free(e), free(pool);
        return vx_fail(err, VOCIS_E_NOMEM, "%s: out of memory", path);
    }
    vocis_status st = VOCIS_OK;
    size_t k = 0, off = 0;
    for (const cJSON *it = root->child; it; it = it->next, k++) {
        if (!cJSON_IsString(it)) {
            st = vx_fail(err, VOCIS_E_FORMAT, "%s: entry %zu is not a string", path, k);
            break;
        }
        const char *s = it->valuestring;
        const size_t l = strlen(s);
        if (vx_utf8_check(s, l) < l) {
            st = vx_fail(err, VOCIS_E_FORMAT, "%s: entry %zu is not valid UTF-8", path, k);
            break;
        }
        char *w = pool + off;
        memcpy(w, s, l + 1);
        off += l + 1;
        char *tab = strchr(w, '\t');
        if (!tab) {
            st = vx_fail(err, VOCIS_E_FORMAT, "%s: entry %zu (\"%.40s\") has no tab between glyph and code", path, k,
                         s);
            break;
        }
        *tab = '\0';
        char *code = tab + 1, *tab2 = strchr(code, '\t');
        if (tab2) *tab2 = '\0'; /* further codes are ignored, as upstream does */
        e[k] = (cj_entry){w, code, k, 0};
    }
    if (st) goto done;
    qsort(e, n, sizeof *e, by_code_order);
    for (size_t i = 0; i < n; i++) e[i].pos = i > 0 && strcmp(e[i].code, e[i - 1].code) == 0 ? e[i - 1].pos + 1 : 0;
    qsort(e, n, sizeof *e, by_word_order);
    t->glyphs = calloc(n ? n : 1, sizeof *t->glyphs);
    if (!t->glyphs) {
        st = vx_fail(err, VOCIS_E_NOMEM, "%s: out of memory", path);
        goto done;
    }
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && strcmp(e[j].word, e[i].word) == 0) j++;
        uint32_t cp;
        const size_t wl = strlen(e[i].word);
        /* only single characters are ever looked up (the text is converted character by character) */
        if (wl > 0 && vx_utf8_next(e[i].word, wl, 0, &cp) == (int)wl) {
            const char *code = e[j - 1].code; /* the last entry of this glyph wins */
            size_t first = j - 1;
            for (size_t q = i; q < j; q++)
                if (strcmp(e[q].code, code) == 0) {
                    first = q;
                    break;
                }
            t->glyphs[t->n++] = (cj_glyph){cp, code, (int)e[first].pos};
        }
        i = j;
    }
    qsort(t->glyphs, t->n, sizeof *t->glyphs, by_cp);
    t->pool = pool;
    pool = NULL;
    t->has_cangjie = 1;
done:
    free(e);
    free(pool);
    return st;
}

vocis_status vx_mtl_text_load(const char *dir, vx_mtl_text **out, vx_err *err) {
    *out = NULL;
    vx_mtl_text *t = vx_calloc(err, 1, sizeof *t, "multilingual text front end");
    if (!t) return VOCIS_E_NOMEM;
    snprintf(t->path, sizeof t->path, "%s/%s", dir, VX_MTL_CANGJIE_FILE);
    if (access(t->path, F_OK) == 0) {
        cJSON *root = NULL;
        vocis_status st = vx_json_load(t->path, &root, err);
        if (!st) st = cangjie_build(t, root, err);
        cJSON_Delete(root);
        if (st) {
            vx_mtl_text_free(t);
            return st;
        }
    }
    *out = t;
    return VOCIS_OK;
}

void vx_mtl_text_free(vx_mtl_text *t) {
    if (!t) return;
    free(t->glyphs);
    free(t->pool);
    free(t);
}

static vocis_status cangjie_convert(const vx_mtl_text *t, const char *in, char **out, vx_err *err) {
    if (!t || !t->has_cangjie)
        return vx_fail(err, VOCIS_E_IO, "%s: not found; Chinese (zh) text needs the release's Cangjie table",
                       t ? t->path : VX_MTL_CANGJIE_FILE);
    const size_t len = strlen(in);
    vx_sbuf b = {0};
    if (vx_sbuf_put(&b, "", 0)) goto nomem;
    for (size_t i = 0; i < len;) {
        uint32_t cp;
        int l = vx_utf8_next(in, len, i, &cp);
        const cj_glyph key = {cp, NULL, 0};
        const cj_glyph *g = category_of(cp) == UTF8PROC_CATEGORY_LO
                                ? bsearch(&key, t->glyphs, t->n, sizeof *t->glyphs, by_cp)
                                : NULL;
        if (!g) {
            if (vx_sbuf_put(&b, in + i, (size_t)l)) goto nomem;
        } else {
            char code[512];
            int cl = snprintf(code, sizeof code, g->suffix > 0 ? "%s%d" : "%s", g->code, g->suffix);
            if (cl < 0 || (size_t)cl >= sizeof code) {
                free(b.s);
                return vx_fail(err, VOCIS_E_FORMAT, "%s: the code of U+%04X is too long", t->path, cp);
            }
            for (size_t p = 0; p < (size_t)cl;) { /* one [cj_c] per character of code + suffix */
                uint32_t c;
                int cl2 = vx_utf8_next(code, (size_t)cl, p, &c);
                if (cl2 <= 0) break;
                if (vx_sbuf_put(&b, "[cj_", 4) || vx_sbuf_put(&b, code + p, (size_t)cl2) || vx_sbuf_put(&b, "]", 1)) goto nomem;
                p += (size_t)cl2;
            }
            if (vx_sbuf_put(&b, "[cj_.]", 6)) goto nomem;
        }
        i += (size_t)l;
    }
    *out = b.s;
    return VOCIS_OK;
nomem:
    free(b.s);
    return vx_fail(err, VOCIS_E_NOMEM, "text: out of memory");
}

/* ---- Korean (korean_normalize) ---- */

static vocis_status korean_normalize(const char *in, char **out, vx_err *err) {
    const size_t len = strlen(in);
    size_t n;
    uint32_t *cps = decode(in, len, &n);
    vx_sbuf b = {0};
    if (!cps || vx_sbuf_put(&b, "", 0)) goto nomem;
    size_t lo = 0, hi = n;
    /* decomposition never yields whitespace, so strip() can be applied to the input's ends */
    while (lo < hi && vx_uc_py_space(cps[lo])) lo++;
    while (hi > lo && vx_uc_py_space(cps[hi - 1])) hi--;
    for (size_t i = lo; i < hi; i++) {
        const uint32_t c = cps[i];
        int bad;
        if (c >= 0xAC00 && c <= 0xD7AF) {
            const uint32_t s = c - 0xAC00;
            bad = vx_sbuf_cp(&b, 0x1100 + s / 588) || vx_sbuf_cp(&b, 0x1161 + (s % 588) / 28) ||
                  (s % 28 && vx_sbuf_cp(&b, 0x11A7 + s % 28));
        } else {
            bad = vx_sbuf_cp(&b, c);
        }
        if (bad) goto nomem;
    }
    free(cps);
    *out = b.s;
    return VOCIS_OK;
nomem:
    free(cps);
    free(b.s);
    return vx_fail(err, VOCIS_E_NOMEM, "text: out of memory");
}

/* ---- MTLTokenizer.encode ---- */

int vx_mtl_language_index(const char *code) {
    if (!code) return -1;
    vx_err e = {0};
    char *low = NULL;
    if (vx_py_lower(code, &low, &e)) return -1; /* Python's str.lower, e.g. KELVIN SIGN → 'k' */
    int idx = -1;
    for (int i = 0; i < VX_MTL_N_LANGUAGES && idx < 0; i++)
        if (strcmp(low, vx_mtl_language_codes[i]) == 0) idx = i;
    free(low);
    return idx;
}

void vx_mtl_steps_free(vx_mtl_steps *s) {
    free(s->normalized), free(s->lowered), free(s->nfkd), free(s->language), free(s->spaced);
    memset(s, 0, sizeof *s);
}

vocis_status vx_mtl_preprocess(const vx_mtl_text *t, const char *text, const char *lang, vx_mtl_steps *out,
                               vx_err *err) {
    memset(out, 0, sizeof *out);
    int li = -1;
    if (lang && *lang) { /* generate(): `if language_id and language_id.lower() not in SUPPORTED_LANGUAGES` */
        li = vx_mtl_language_index(lang);
        if (li < 0)
            return vx_fail(err, VOCIS_E_ARG, "unsupported language '%.32s' (supported: %s)", lang,
                           vx_mtl_language_list());
    }
    const char *code = li >= 0 ? vx_mtl_language_codes[li] : "";
    vocis_status st;
    if ((st = vx_mtl_punc_norm(text, &out->normalized, err))) goto fail;
    if ((st = vx_py_lower(out->normalized, &out->lowered, err))) goto fail;
    if ((st = nfkd(out->lowered, &out->nfkd, err))) goto fail;
    if (!strcmp(code, "zh")) st = cangjie_convert(t, out->nfkd, &out->language, err);
    else if (!strcmp(code, "ko")) st = korean_normalize(out->nfkd, &out->language, err);
    else if (!(out->language = dup_str(out->nfkd))) st = vx_fail(err, VOCIS_E_NOMEM, "text: out of memory");
    if (st) goto fail;
    /* "[xx]" + text, then every ASCII space → [SPACE] */
    vx_sbuf b = {0};
    int bad = vx_sbuf_put(&b, "", 0);
    if (*code) bad = bad || vx_sbuf_put(&b, "[", 1) || vx_sbuf_put(&b, code, strlen(code)) || vx_sbuf_put(&b, "]", 1);
    for (const char *p = out->language; *p && !bad; p++)
        bad = *p == ' ' ? vx_sbuf_put(&b, "[SPACE]", 7) : vx_sbuf_put(&b, p, 1);
    if (bad) {
        free(b.s);
        st = vx_fail(err, VOCIS_E_NOMEM, "text: out of memory");
        goto fail;
    }
    out->spaced = b.s;
    return VOCIS_OK;
fail:
    vx_mtl_steps_free(out);
    return st;
}

vocis_status vx_mtl_text_to_ids(const vx_mtl_text *t, const vx_tokenizer *tok, const char *text, const char *lang,
                                int32_t **ids, size_t *n, vx_tok_unknown *unknown, vx_err *err) {
    *ids = NULL;
    *n = 0;
    vx_mtl_steps s;
    VX_TRY(vx_mtl_preprocess(t, text, lang, &s, err));
    vocis_status st = vx_tokenizer_encode_ex(tok, s.spaced, strlen(s.spaced), ids, n, unknown, err);
    vx_mtl_steps_free(&s);
    return st;
}
