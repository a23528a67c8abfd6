/* Hugging Face `tokenizer.json` reader and encoder for BPE models.
 *
 * Encoding follows tokenizers' `Tokenizer::encode` (Rust, v0.2x):
 *   1. added tokens with normalized=false are cut out of the raw text
 *      (leftmost-longest literal match, then single_word / lstrip / rstrip);
 *   2. each remaining segment is normalised (NFC & co. via utf8proc), and the
 *      normalized=true added tokens are cut out of it the same way;
 *   3. the pre-tokenizer splits each segment into pieces;
 *   4. the BPE model turns each piece into ids (lowest merge rank first,
 *      leftmost on ties), with unk / fuse_unk / byte_fallback as upstream.
 * Everything the encoder needs is built once at load; encode() keeps its
 * scratch memory in a per-call context, so one tokenizer can be shared by
 * threads. */
#include "text/tokenizer.h"

#include <cjson/cJSON.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "io/jsonfile.h"
#include "text/unicode.h"

/* Token ids are stored as int32 and index dense tables: refuse absurd ids. */
#define TOK_MAX_ID (1 << 24)
/* ids allowed past 4 x the token count: trimmed test tokenizers keep the real ids of a
 * vocabulary (Qwen2.5's reach 151664 with a few hundred tokens); 2^18 covers every real one */
#define TOK_ID_SLACK (1 << 18)

/* ------------------------------------------------------------------------ */
/* Hash maps                                                                 */

static uint64_t hash_bytes(const char *s, size_t n) {
    uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a, then a final avalanche */
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= 0x100000001b3ull;
    }
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    return h;
}

static uint64_t hash_u64(uint64_t x) {
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    x ^= x >> 31;
    return x;
}

static size_t pow2_at_least(size_t n) {
    size_t c = 16;
    while (c < n) c <<= 1;
    return c;
}

/* string -> id; keys are borrowed (they live in the tokenizer). */
typedef struct {
    const char *key;
    uint32_t len;
    int32_t id;
    uint64_t hash;
} str_slot;

typedef struct {
    str_slot *slots; /* key == NULL: empty */
    size_t cap;
} str_map;

static int str_map_init(str_map *m, size_t n, vx_err *err) {
    m->cap = pow2_at_least(2 * n + 1);
    m->slots = vx_calloc(err, m->cap, sizeof *m->slots, "tokenizer hash map");
    return m->slots ? 0 : -1;
}

/* Inserts or overwrites (a later duplicate wins, as in a Rust HashMap). */
static void str_map_put(str_map *m, const char *key, size_t len, int32_t id) {
    uint64_t h = hash_bytes(key, len);
    size_t mask = m->cap - 1;
    for (size_t i = (size_t)h & mask;; i = (i + 1) & mask) {
        str_slot *s = &m->slots[i];
        if (!s->key) {
            s->key = key;
            s->len = (uint32_t)len;
            s->id = id;
            s->hash = h;
            return;
        }
        if (s->hash == h && s->len == len && memcmp(s->key, key, len) == 0) {
            s->id = id;
            return;
        }
    }
}

static int32_t str_map_get(const str_map *m, const char *key, size_t len) {
    if (!m->slots) return -1;
    uint64_t h = hash_bytes(key, len);
    size_t mask = m->cap - 1;
    for (size_t i = (size_t)h & mask;; i = (i + 1) & mask) {
        const str_slot *s = &m->slots[i];
        if (!s->key) return -1;
        if (s->hash == h && s->len == len && memcmp(s->key, key, len) == 0) return s->id;
    }
}

/* (left id, right id) -> (rank, merged id). */
typedef struct {
    uint64_t key; /* UINT64_MAX: empty (ids are < 2^24, so never a real key) */
    uint32_t rank;
    int32_t id;
} merge_slot;

typedef struct {
    merge_slot *slots;
    size_t cap;
} merge_map;

static uint64_t pair_key(int32_t a, int32_t b) { return ((uint64_t)(uint32_t)a << 32) | (uint32_t)b; }

static int merge_map_init(merge_map *m, size_t n, vx_err *err) {
    m->cap = pow2_at_least(2 * n + 1);
    m->slots = vx_malloc(err, m->cap * sizeof *m->slots, "BPE merge map");
    if (!m->slots) return -1;
    for (size_t i = 0; i < m->cap; i++) m->slots[i].key = UINT64_MAX;
    return 0;
}

static void merge_map_put(merge_map *m, uint64_t key, uint32_t rank, int32_t id) {
    size_t mask = m->cap - 1;
    for (size_t i = (size_t)hash_u64(key) & mask;; i = (i + 1) & mask) {
        merge_slot *s = &m->slots[i];
        if (s->key == UINT64_MAX || s->key == key) {
            s->key = key;
            s->rank = rank;
            s->id = id;
            return;
        }
    }
}

static const merge_slot *merge_map_get(const merge_map *m, int32_t a, int32_t b) {
    if (!m->slots) return NULL;
    uint64_t key = pair_key(a, b);
    size_t mask = m->cap - 1;
    for (size_t i = (size_t)hash_u64(key) & mask;; i = (i + 1) & mask) {
        const merge_slot *s = &m->slots[i];
        if (s->key == key) return s;
        if (s->key == UINT64_MAX) return NULL;
    }
}

/* ------------------------------------------------------------------------ */
/* The tokenizer                                                             */

typedef enum { PT_WHITESPACE, PT_SPLIT, PT_BYTELEVEL } pt_kind;
typedef enum { SPLIT_ISOLATED, SPLIT_REMOVED } split_behavior;

typedef struct {
    pt_kind kind;
    pcre2_code *re;       /* PT_SPLIT; PT_BYTELEVEL with use_regex */
    split_behavior behavior;
    int invert;
    int add_prefix_space; /* PT_BYTELEVEL */
} pt_step;

typedef struct {
    char *content; /* as matched: the normalised form for normalized=true tokens */
    size_t len;
    char *raw; /* as written in the file (== content unless normalisation changed it): the
                  added_map key and the id's text */
    int32_t id;
    unsigned char single_word, lstrip, rstrip, normalized, special;
} added_token;

/* Added tokens of one kind (raw or normalised), ordered by first byte and,
 * within one first byte, longest first, for leftmost-longest matching. */
typedef struct {
    int32_t *order; /* indices into added[] */
    size_t n;
    uint32_t first[257]; /* order[first[b] .. first[b+1]) start with byte b */
} added_set;

struct vx_tokenizer {
    char *vocab_text; /* NUL-separated vocabulary strings */
    str_map vocab;
    merge_map merges;
    size_t n_merges;
    const char **id_str; /* id -> token text (added tokens take precedence), NULL for gaps */
    int32_t n_ids;

    added_token *added;
    size_t n_added;
    str_map added_map;
    added_set raw_set, norm_set;

    char *unk_token; /* NULL: none */
    int32_t unk_id;  /* -1 when unk_token is not in the vocabulary */
    int fuse_unk, byte_fallback, ignore_merges;
    int32_t byte_ids[256]; /* byte_fallback: id of "<0xXX>", -1 if absent */
    char *prefix, *suffix; /* continuing_subword_prefix / end_of_word_suffix, NULL if unset */
    size_t prefix_len, suffix_len;

    int norm[8]; /* utf8proc option sets, applied in order */
    int n_norm;

    pt_step *pt;
    size_t n_pt;

    char byte_char[256][3]; /* GPT-2 bytes_to_unicode, UTF-8 encoded */
    unsigned char byte_char_len[256];
};

void vx_tokenizer_free(vx_tokenizer *t) {
    if (!t) return;
    free(t->vocab_text);
    free(t->vocab.slots);
    free(t->merges.slots);
    free(t->id_str);
    for (size_t i = 0; i < t->n_added; i++) {
        if (t->added[i].raw != t->added[i].content) free(t->added[i].raw);
        free(t->added[i].content);
    }
    free(t->added);
    free(t->added_map.slots);
    free(t->raw_set.order);
    free(t->norm_set.order);
    free(t->unk_token);
    free(t->prefix);
    free(t->suffix);
    for (size_t i = 0; i < t->n_pt; i++) pcre2_code_free(t->pt[i].re);
    free(t->pt);
    free(t);
}

int32_t vx_tokenizer_token_id(const vx_tokenizer *t, const char *token) {
    if (!t || !token) return -1;
    size_t n = strlen(token);
    int32_t id = str_map_get(&t->added_map, token, n);
    return id >= 0 ? id : str_map_get(&t->vocab, token, n);
}

int32_t vx_tokenizer_size(const vx_tokenizer *t) { return t ? t->n_ids : 0; }

const char *vx_tokenizer_id_to_token(const vx_tokenizer *t, int32_t id) {
    if (!t || id < 0 || id >= t->n_ids) return NULL;
    return t->id_str[id];
}

/* ------------------------------------------------------------------------ */
/* Loading                                                                   */

typedef struct {
    const char *path;
    vx_err *err;
} loader;

static const char *json_type_name(const cJSON *j) {
    if (!j) return "missing";
    if (cJSON_IsNull(j)) return "null";
    if (cJSON_IsBool(j)) return "a boolean";
    if (cJSON_IsNumber(j)) return "a number";
    if (cJSON_IsString(j)) return "a string";
    if (cJSON_IsArray(j)) return "an array";
    if (cJSON_IsObject(j)) return "an object";
    return "invalid";
}

/* Optional boolean: absent or null keeps *out. */
static vocis_status get_bool(loader *L, const cJSON *obj, const char *key, const char *where, int *out) {
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!j || cJSON_IsNull(j)) return VOCIS_OK;
    if (!cJSON_IsBool(j))
        return vx_fail(L->err, VOCIS_E_FORMAT, "%s: %s.%s: expected a boolean, found %s", L->path, where, key,
                       json_type_name(j));
    *out = cJSON_IsTrue(j);
    return VOCIS_OK;
}

/* Optional string: absent or null gives NULL. */
static vocis_status get_str(loader *L, const cJSON *obj, const char *key, const char *where, const char **out) {
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(obj, key);
    *out = NULL;
    if (!j || cJSON_IsNull(j)) return VOCIS_OK;
    if (!cJSON_IsString(j))
        return vx_fail(L->err, VOCIS_E_FORMAT, "%s: %s.%s: expected a string, found %s", L->path, where, key,
                       json_type_name(j));
    *out = j->valuestring;
    return VOCIS_OK;
}

static char *dup_str(const char *s, size_t n) {
    char *p = malloc(n + 1);
    if (p) {
        memcpy(p, s, n);
        p[n] = '\0';
    }
    return p;
}

static vocis_status get_id(loader *L, const cJSON *j, const char *where, const char *name, int32_t *out) {
    if (!cJSON_IsNumber(j))
        return vx_fail(L->err, VOCIS_E_FORMAT, "%s: %s '%s': expected an integer id, found %s", L->path, where,
                       name, json_type_name(j));
    double v = j->valuedouble;
    if (!(v >= 0 && v < TOK_MAX_ID) || v != (double)(int32_t)v)
        return vx_fail(L->err, VOCIS_E_FORMAT, "%s: %s '%s': id %g is not an integer in [0, %d)", L->path, where,
                       name, v, TOK_MAX_ID);
    *out = (int32_t)v;
    return VOCIS_OK;
}

static void build_byte_map(vx_tokenizer *t) {
    /* GPT-2 bytes_to_unicode: printable Latin-1 bytes map to themselves, the
     * other 68 bytes to U+0100.. in byte order. */
    int next = 0;
    for (int b = 0; b < 256; b++) {
        int keep = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
        uint32_t cp = keep ? (uint32_t)b : (uint32_t)(256 + next++);
        t->byte_char_len[b] = (unsigned char)vx_utf8_put(cp, t->byte_char[b]);
    }
}

static vocis_status load_model(loader *L, vx_tokenizer *t, const cJSON *model) {
    if (!cJSON_IsObject(model))
        return vx_fail(L->err, VOCIS_E_FORMAT, "%s: model: expected an object, found %s", L->path,
                       json_type_name(model));
    const char *type = NULL;
    VX_TRY(get_str(L, model, "type", "model", &type));
    if (type && strcmp(type, "BPE") != 0)
        return vx_fail(L->err, VOCIS_E_UNSUPPORTED, "%s: model.type: '%s' is not supported (only BPE)", L->path,
                       type);
    const cJSON *dropout = cJSON_GetObjectItemCaseSensitive(model, "dropout");
    if (dropout && !cJSON_IsNull(dropout)) {
        if (!cJSON_IsNumber(dropout) || dropout->valuedouble < 0 || dropout->valuedouble > 1)
            return vx_fail(L->err, VOCIS_E_FORMAT, "%s: model.dropout: expected null or a number in [0, 1]",
                           L->path);
        if (dropout->valuedouble != 0)
            return vx_fail(L->err, VOCIS_E_UNSUPPORTED,
                           "%s: model.dropout: BPE dropout %g is random and not supported (use null)", L->path,
                           dropout->valuedouble);
    }
    const char *s;
    VX_TRY(get_str(L, model, "unk_token", "model", &s));
    if (s && !(t->unk_token = dup_str(s, strlen(s))))
        return vx_fail(L->err, VOCIS_E_NOMEM, "out of memory (unk_token)");
    VX_TRY(get_str(L, model, "continuing_subword_prefix", "model", &s));
    if (s) {
        if (!(t->prefix = dup_str(s, strlen(s)))) return vx_fail(L->err, VOCIS_E_NOMEM, "out of memory");
        t->prefix_len = strlen(s);
    }
    VX_TRY(get_str(L, model, "end_of_word_suffix", "model", &s));
    if (s) {
        if (!(t->suffix = dup_str(s, strlen(s)))) return vx_fail(L->err, VOCIS_E_NOMEM, "out of memory");
        t->suffix_len = strlen(s);
    }
    VX_TRY(get_bool(L, model, "fuse_unk", "model", &t->fuse_unk));
    VX_TRY(get_bool(L, model, "byte_fallback", "model", &t->byte_fallback));
    VX_TRY(get_bool(L, model, "ignore_merges", "model", &t->ignore_merges));

    /* Vocabulary: copy every key into one NUL-separated block. */
    const cJSON *vocab = cJSON_GetObjectItemCaseSensitive(model, "vocab");
    if (!cJSON_IsObject(vocab))
        return vx_fail(L->err, VOCIS_E_FORMAT, "%s: model.vocab: expected an object, found %s", L->path,
                       json_type_name(vocab));
    size_t n_vocab = 0, bytes = 0;
    for (const cJSON *e = vocab->child; e; e = e->next) {
        n_vocab++;
        bytes += strlen(e->string) + 1;
    }
    if (!(t->vocab_text = vx_malloc(L->err, bytes, "vocabulary text"))) return L->err->code;
    if (str_map_init(&t->vocab, n_vocab, L->err)) return L->err->code;
    int32_t max_id = -1;
    char *w = t->vocab_text;
    for (const cJSON *e = vocab->child; e; e = e->next) {
        int32_t id;
        VX_TRY(get_id(L, e, "model.vocab", e->string, &id));
        size_t n = strlen(e->string);
        memcpy(w, e->string, n + 1);
        str_map_put(&t->vocab, w, n, id);
        if (id > max_id) max_id = id;
        w += n + 1;
    }
    t->n_ids = max_id + 1;

    t->unk_id = t->unk_token ? str_map_get(&t->vocab, t->unk_token, strlen(t->unk_token)) : -1;
    for (int b = 0; b < 256; b++) {
        char name[8];
        snprintf(name, sizeof name, "<0x%02X>", b);
        t->byte_ids[b] = t->byte_fallback ? str_map_get(&t->vocab, name, strlen(name)) : -1;
    }

    /* Merges: "a b" strings (lines starting with "#version" skipped) or
     * ["a", "b"] pairs; rank = position. */
    const cJSON *merges = cJSON_GetObjectItemCaseSensitive(model, "merges");
    if (!merges || cJSON_IsNull(merges)) merges = NULL;
    else if (!cJSON_IsArray(merges))
        return vx_fail(L->err, VOCIS_E_FORMAT, "%s: model.merges: expected an array, found %s", L->path,
                       json_type_name(merges));
    size_t n_merges = 0, max_len = 0;
    if (merges)
        for (const cJSON *e = merges->child; e; e = e->next) n_merges++;
    for (size_t i = 0; i < t->vocab.cap; i++)
        if (t->vocab.slots[i].key && t->vocab.slots[i].len > max_len) max_len = t->vocab.slots[i].len;
    if (merge_map_init(&t->merges, n_merges, L->err)) return L->err->code;
    char *buf = vx_malloc(L->err, 2 * max_len + 2, "merge buffer");
    if (!buf) return L->err->code;
    vocis_status st = VOCIS_OK;
    uint32_t rank = 0;
    size_t index = 0;
    for (const cJSON *e = merges ? merges->child : NULL; e && st == VOCIS_OK; e = e->next, index++) {
        const char *a, *b;
        size_t alen, blen;
        if (cJSON_IsString(e)) {
            const char *line = e->valuestring;
            if (strncmp(line, "#version", 8) == 0) continue;
            const char *sp = strchr(line, ' ');
            if (!sp || strchr(sp + 1, ' ')) {
                st = vx_fail(L->err, VOCIS_E_FORMAT, "%s: model.merges[%zu]: '%s' is not two tokens separated by "
                             "one space", L->path, index, line);
                break;
            }
            a = line, alen = (size_t)(sp - line), b = sp + 1, blen = strlen(b);
        } else if (cJSON_IsArray(e) && cJSON_GetArraySize(e) == 2 && cJSON_IsString(e->child) &&
                   cJSON_IsString(e->child->next)) {
            a = e->child->valuestring, alen = strlen(a);
            b = e->child->next->valuestring, blen = strlen(b);
        } else {
            st = vx_fail(L->err, VOCIS_E_FORMAT,
                         "%s: model.merges[%zu]: expected \"a b\" or [\"a\", \"b\"], found %s", L->path, index,
                         json_type_name(e));
            break;
        }
        int32_t ida = str_map_get(&t->vocab, a, alen), idb = str_map_get(&t->vocab, b, blen);
        if (ida < 0 || idb < 0) {
            st = vx_fail(L->err, VOCIS_E_FORMAT, "%s: model.merges[%zu]: token '%.*s' is not in the vocabulary",
                         L->path, index, (int)(ida < 0 ? alen : blen), ida < 0 ? a : b);
            break;
        }
        if (blen < t->prefix_len || alen + blen - t->prefix_len > max_len) {
            st = vx_fail(L->err, VOCIS_E_FORMAT, "%s: model.merges[%zu]: merged token '%.*s%.*s' is not in the "
                         "vocabulary", L->path, index, (int)alen, a, (int)blen, b);
            break;
        }
        memcpy(buf, a, alen);
        memcpy(buf + alen, b + t->prefix_len, blen - t->prefix_len);
        size_t mlen = alen + blen - t->prefix_len;
        int32_t idm = str_map_get(&t->vocab, buf, mlen);
        if (idm < 0) {
            st = vx_fail(L->err, VOCIS_E_FORMAT,
                         "%s: model.merges[%zu]: merged token '%.*s' is not in the vocabulary", L->path, index,
                         (int)mlen, buf);
            break;
        }
        merge_map_put(&t->merges, pair_key(ida, idb), rank++, idm);
    }
    free(buf);
    t->n_merges = rank;
    return st;
}

/* ---- normalizer ---- */

static vocis_status load_normalizer(loader *L, vx_tokenizer *t, const cJSON *n, const char *where) {
    if (!n || cJSON_IsNull(n)) return VOCIS_OK;
    const char *type = NULL;
    if (!cJSON_IsObject(n) || get_str(L, n, "type", where, &type) != VOCIS_OK || !type)
        return vx_fail(L->err, VOCIS_E_FORMAT, "%s: %s: expected null or an object with a \"type\"", L->path,
                       where);
    int opts = -1;
    if (strcmp(type, "NFC") == 0) opts = UTF8PROC_STABLE | UTF8PROC_COMPOSE;
    else if (strcmp(type, "NFD") == 0) opts = UTF8PROC_STABLE | UTF8PROC_DECOMPOSE;
    else if (strcmp(type, "NFKC") == 0) opts = UTF8PROC_STABLE | UTF8PROC_COMPOSE | UTF8PROC_COMPAT;
    else if (strcmp(type, "NFKD") == 0) opts = UTF8PROC_STABLE | UTF8PROC_DECOMPOSE | UTF8PROC_COMPAT;
    if (opts >= 0) {
        if (t->n_norm >= (int)(sizeof t->norm / sizeof t->norm[0]))
            return vx_fail(L->err, VOCIS_E_UNSUPPORTED, "%s: %s: too many normalizers", L->path, where);
        t->norm[t->n_norm++] = opts;
        return VOCIS_OK;
    }
    if (strcmp(type, "Sequence") == 0) {
        const cJSON *list = cJSON_GetObjectItemCaseSensitive(n, "normalizers");
        if (!cJSON_IsArray(list))
            return vx_fail(L->err, VOCIS_E_FORMAT, "%s: %s.normalizers: expected an array", L->path, where);
        int i = 0;
        for (const cJSON *e = list->child; e; e = e->next, i++) {
            char sub[128];
            snprintf(sub, sizeof sub, "%s.normalizers[%d]", where, i);
            VX_TRY(load_normalizer(L, t, e, sub));
        }
        return VOCIS_OK;
    }
    return vx_fail(L->err, VOCIS_E_UNSUPPORTED,
                   "%s: %s.type: normalizer '%s' is not supported (NFC, NFD, NFKC, NFKD, Sequence)", L->path, where,
                   type);
}

/* Normalises s[0..n); *out is s itself when nothing changes, else malloc'd. */
static vocis_status normalize(const vx_tokenizer *t, const char *s, size_t n, char **out, size_t *out_len,
                              vx_err *err) {
    *out = (char *)s;
    *out_len = n;
    if (t->n_norm == 0) return VOCIS_OK;
    size_t i = 0;
    while (i < n && (unsigned char)s[i] < 0x80) i++;
    if (i == n) return VOCIS_OK; /* ASCII is invariant under every normal form */
    for (int k = 0; k < t->n_norm; k++) {
        utf8proc_uint8_t *dst = NULL;
        utf8proc_ssize_t r = utf8proc_map((const utf8proc_uint8_t *)*out, (utf8proc_ssize_t)*out_len, &dst,
                                          (utf8proc_option_t)t->norm[k]);
        if (*out != s) free(*out);
        if (r < 0) {
            *out = NULL;
            return vx_fail(err, r == UTF8PROC_ERROR_NOMEM ? VOCIS_E_NOMEM : VOCIS_E_INTERNAL,
                           "tokenizer: normalisation failed: %s", utf8proc_errmsg(r));
        }
        *out = (char *)dst;
        *out_len = (size_t)r;
    }
    return VOCIS_OK;
}

/* ---- pre-tokenizer ---- */

/* Oniguruma (what tokenizers' Split uses) and PCRE2 differ in \s and \w:
 * Oniguruma's Unicode \s is White_Space (it includes U+0085) and \w is
 * Letter|Mark|Number|Connector_Punctuation. Rewrite these escapes into
 * explicit classes; everything else is passed through. */
#define ONIG_SPACE "\\t-\\r\\x{85}\\p{Z}"
#define ONIG_WORD "\\p{L}\\p{M}\\p{N}\\p{Pc}"

static char *onig_to_pcre2(const char *pat, const char **bad) {
    size_t n = strlen(pat);
    char *out = malloc(n * 24 + 1);
    if (!out) return NULL;
    size_t o = 0;
    int in_class = 0;
    *bad = NULL;
    for (size_t i = 0; i < n; i++) {
        char c = pat[i];
        if (c == '\\' && i + 1 < n) {
            char e = pat[i + 1];
            const char *set = e == 's' || e == 'S' ? ONIG_SPACE : e == 'w' || e == 'W' ? ONIG_WORD : NULL;
            if (set) {
                int neg = e == 'S' || e == 'W';
                if (in_class && neg) {
                    *bad = e == 'S' ? "\\S inside a character class" : "\\W inside a character class";
                    free(out);
                    return NULL;
                }
                if (in_class) o += (size_t)sprintf(out + o, "%s", set);
                else o += (size_t)sprintf(out + o, "[%s%s]", neg ? "^" : "", set);
            } else {
                out[o++] = c;
                out[o++] = e;
            }
            i++;
            continue;
        }
        if (!in_class && c == '[') {
            in_class = 1;
            out[o++] = c;
            /* a ']' right after '[' or '[^' is a literal */
            if (i + 1 < n && pat[i + 1] == '^') out[o++] = pat[++i];
            if (i + 1 < n && pat[i + 1] == ']') out[o++] = pat[++i];
            continue;
        }
        if (in_class && c == '[') {
            if (i + 1 < n && pat[i + 1] == ':') { /* POSIX class [:name:] */
                const char *end = strstr(pat + i + 2, ":]");
                if (end) {
                    size_t len = (size_t)(end + 2 - (pat + i));
                    memcpy(out + o, pat + i, len);
                    o += len;
                    i += len - 1;
                    continue;
                }
            }
            *bad = "nested character class";
            free(out);
            return NULL;
        }
        if (in_class && c == ']') in_class = 0;
        out[o++] = c;
    }
    out[o] = '\0';
    return out;
}

static vocis_status compile_regex(loader *L, const char *pattern, int literal, const char *where, pcre2_code **re) {
    const char *bad = NULL;
    char *pat = literal ? dup_str(pattern, strlen(pattern)) : onig_to_pcre2(pattern, &bad);
    if (!pat) {
        if (bad)
            return vx_fail(L->err, VOCIS_E_UNSUPPORTED, "%s: %s: regex uses %s, which is not supported", L->path,
                           where, bad);
        return vx_fail(L->err, VOCIS_E_NOMEM, "out of memory (regex)");
    }
    int ec;
    PCRE2_SIZE eo;
    uint32_t opts = PCRE2_UTF | (literal ? PCRE2_LITERAL : PCRE2_UCP);
    *re = pcre2_compile((PCRE2_SPTR)pat, PCRE2_ZERO_TERMINATED, opts, &ec, &eo, NULL);
    free(pat);
    if (!*re) {
        PCRE2_UCHAR msg[256];
        pcre2_get_error_message(ec, msg, sizeof msg);
        return vx_fail(L->err, VOCIS_E_UNSUPPORTED, "%s: %s: cannot compile regex '%s': %s", L->path, where,
                       pattern, (const char *)msg);
    }
    return VOCIS_OK;
}

static vocis_status add_step(loader *L, vx_tokenizer *t, pt_step step) {
    pt_step *p = realloc(t->pt, (t->n_pt + 1) * sizeof *p);
    if (!p) {
        pcre2_code_free(step.re);
        return vx_fail(L->err, VOCIS_E_NOMEM, "out of memory (pre-tokenizer)");
    }
    t->pt = p;
    t->pt[t->n_pt++] = step;
    return VOCIS_OK;
}

/* GPT-2's pattern, used by ByteLevel when use_regex is true. */
static const char gpt2_pattern[] = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";

static vocis_status load_pretokenizer(loader *L, vx_tokenizer *t, const cJSON *p, const char *where) {
    if (!p || cJSON_IsNull(p)) return VOCIS_OK;
    const char *type = NULL;
    if (!cJSON_IsObject(p) || get_str(L, p, "type", where, &type) != VOCIS_OK || !type)
        return vx_fail(L->err, VOCIS_E_FORMAT, "%s: %s: expected null or an object with a \"type\"", L->path,
                       where);
    pt_step step = {0};
    if (strcmp(type, "Whitespace") == 0) {
        step.kind = PT_WHITESPACE;
        return add_step(L, t, step);
    }
    if (strcmp(type, "Split") == 0) {
        step.kind = PT_SPLIT;
        const cJSON *pat = cJSON_GetObjectItemCaseSensitive(p, "pattern");
        const cJSON *rx = cJSON_GetObjectItemCaseSensitive(pat, "Regex");
        const cJSON *lit = cJSON_GetObjectItemCaseSensitive(pat, "String");
        if (!cJSON_IsString(rx) && !cJSON_IsString(lit))
            return vx_fail(L->err, VOCIS_E_FORMAT, "%s: %s.pattern: expected {\"Regex\": ...} or {\"String\": ...}",
                           L->path, where);
        const char *behavior = NULL;
        VX_TRY(get_str(L, p, "behavior", where, &behavior));
        if (!behavior || (strcmp(behavior, "Isolated") != 0 && strcmp(behavior, "Removed") != 0))
            return vx_fail(L->err, VOCIS_E_UNSUPPORTED,
                           "%s: %s.behavior: '%s' is not supported (Isolated, Removed)", L->path, where,
                           behavior ? behavior : "null");
        step.behavior = strcmp(behavior, "Isolated") == 0 ? SPLIT_ISOLATED : SPLIT_REMOVED;
        VX_TRY(get_bool(L, p, "invert", where, &step.invert));
        char sub[160];
        snprintf(sub, sizeof sub, "%s.pattern", where);
        VX_TRY(compile_regex(L, cJSON_IsString(rx) ? rx->valuestring : lit->valuestring, !cJSON_IsString(rx), sub,
                             &step.re));
        return add_step(L, t, step);
    }
    if (strcmp(type, "ByteLevel") == 0) {
        step.kind = PT_BYTELEVEL;
        int use_regex = 1;
        step.add_prefix_space = 1;
        VX_TRY(get_bool(L, p, "add_prefix_space", where, &step.add_prefix_space));
        VX_TRY(get_bool(L, p, "use_regex", where, &use_regex));
        if (use_regex) VX_TRY(compile_regex(L, gpt2_pattern, 0, where, &step.re));
        return add_step(L, t, step);
    }
    if (strcmp(type, "Sequence") == 0) {
        const cJSON *list = cJSON_GetObjectItemCaseSensitive(p, "pretokenizers");
        if (!cJSON_IsArray(list))
            return vx_fail(L->err, VOCIS_E_FORMAT, "%s: %s.pretokenizers: expected an array", L->path, where);
        int i = 0;
        for (const cJSON *e = list->child; e; e = e->next, i++) {
            char sub[128];
            snprintf(sub, sizeof sub, "%s.pretokenizers[%d]", where, i);
            VX_TRY(load_pretokenizer(L, t, e, sub));
        }
        return VOCIS_OK;
    }
    return vx_fail(L->err, VOCIS_E_UNSUPPORTED,
                   "%s: %s.type: pre-tokenizer '%s' is not supported (Whitespace, Split, ByteLevel, Sequence)",
                   L->path, where, type);
}

/* ---- added tokens ---- */

static int cmp_added(const void *pa, const void *pb, void *ctx) {
    const added_token *tok = ctx;
    const added_token *a = &tok[*(const int32_t *)pa], *b = &tok[*(const int32_t *)pb];
    unsigned char fa = (unsigned char)a->content[0], fb = (unsigned char)b->content[0];
    if (fa != fb) return fa < fb ? -1 : 1;
    if (a->len != b->len) return a->len > b->len ? -1 : 1;
    return a < b ? -1 : a > b; /* stable */
}

static int build_added_set(vx_tokenizer *t, added_set *set, int normalized, vx_err *err) {
    set->n = 0;
    for (size_t i = 0; i < t->n_added; i++)
        if (t->added[i].normalized == normalized) set->n++;
    set->order = vx_malloc(err, (set->n + 1) * sizeof *set->order, "added-token index");
    if (!set->order) return -1;
    size_t k = 0;
    for (size_t i = 0; i < t->n_added; i++)
        if (t->added[i].normalized == normalized) set->order[k++] = (int32_t)i;
    /* insertion sort (few tokens); qsort_r is not C11 */
    for (size_t i = 1; i < set->n; i++) {
        int32_t v = set->order[i];
        size_t j = i;
        while (j > 0 && cmp_added(&set->order[j - 1], &v, t->added) > 0) {
            set->order[j] = set->order[j - 1];
            j--;
        }
        set->order[j] = v;
    }
    size_t pos = 0;
    for (int b = 0; b <= 256; b++) {
        while (pos < set->n && (unsigned char)t->added[set->order[pos]].content[0] < b) pos++;
        set->first[b] = (uint32_t)pos;
    }
    return 0;
}

static vocis_status load_added(loader *L, vx_tokenizer *t, const cJSON *list) {
    if (!list || cJSON_IsNull(list)) list = NULL;
    else if (!cJSON_IsArray(list))
        return vx_fail(L->err, VOCIS_E_FORMAT, "%s: added_tokens: expected an array, found %s", L->path,
                       json_type_name(list));
    size_t n = 0;
    if (list)
        for (const cJSON *e = list->child; e; e = e->next) n++;
    t->added = vx_calloc(L->err, n + 1, sizeof *t->added, "added tokens");
    if (!t->added || str_map_init(&t->added_map, n, L->err)) return L->err->code;
    size_t index = 0;
    for (const cJSON *e = list ? list->child : NULL; e; e = e->next, index++) {
        char where[64];
        snprintf(where, sizeof where, "added_tokens[%zu]", index);
        const char *content = NULL;
        if (!cJSON_IsObject(e)) return vx_fail(L->err, VOCIS_E_FORMAT, "%s: %s: expected an object", L->path, where);
        VX_TRY(get_str(L, e, "content", where, &content));
        if (!content)
            return vx_fail(L->err, VOCIS_E_FORMAT, "%s: %s.content: expected a string", L->path, where);
        int32_t id;
        VX_TRY(get_id(L, cJSON_GetObjectItemCaseSensitive(e, "id"), where, content, &id));
        int special = 0, single_word = 0, lstrip = 0, rstrip = 0;
        VX_TRY(get_bool(L, e, "special", where, &special));
        int normalized = !special; /* tokenizers' default */
        VX_TRY(get_bool(L, e, "normalized", where, &normalized));
        VX_TRY(get_bool(L, e, "single_word", where, &single_word));
        VX_TRY(get_bool(L, e, "lstrip", where, &lstrip));
        VX_TRY(get_bool(L, e, "rstrip", where, &rstrip));
        if (!*content) continue; /* upstream ignores empty added tokens */
        added_token *a = &t->added[t->n_added];
        a->len = strlen(content);
        if (!(a->content = dup_str(content, a->len))) return vx_fail(L->err, VOCIS_E_NOMEM, "out of memory");
        a->raw = a->content;
        t->n_added++;
        a->id = id;
        a->special = (unsigned char)special;
        a->normalized = (unsigned char)normalized;
        a->single_word = (unsigned char)single_word;
        a->lstrip = (unsigned char)lstrip;
        a->rstrip = (unsigned char)rstrip;
        str_map_put(&t->added_map, a->content, a->len, id);
        if (id >= t->n_ids) t->n_ids = id + 1;
    }
    return VOCIS_OK;
}

/* normalized=true tokens are matched in their normalised form. */
static vocis_status normalize_added(vx_tokenizer *t, vx_err *err) {
    for (size_t i = 0; i < t->n_added; i++) {
        added_token *a = &t->added[i];
        if (!a->normalized) continue;
        char *out;
        size_t len;
        VX_TRY(normalize(t, a->content, a->len, &out, &len, err));
        if (out != a->content) {
            if (len == 0) {
                free(out);
                continue; /* keep the raw form rather than an empty pattern */
            }
            /* the raw text stays: added_map borrows it as a key */
            a->content = out;
            a->len = len;
        }
    }
    return VOCIS_OK;
}

/* The id table is sized by the largest id, so a few far-off ids in a small file must
 * not make it huge (at most 2 MB past 4 x the token count). */
static vocis_status check_id_range(loader *L, const vx_tokenizer *t) {
    size_t n_tokens = t->n_added;
    for (size_t i = 0; i < t->vocab.cap; i++) n_tokens += t->vocab.slots[i].key != NULL;
    const size_t allowed = 4 * n_tokens + TOK_ID_SLACK;
    if ((size_t)t->n_ids > allowed)
        return vx_fail(L->err, VOCIS_E_FORMAT,
                       "%s: id %d is implausible for %zu tokens (ids above %zu would leave the id table mostly empty)",
                       L->path, t->n_ids - 1, n_tokens, allowed);
    return VOCIS_OK;
}

static vocis_status load_json(loader *L, vx_tokenizer *t, const cJSON *root) {
    if (!cJSON_IsObject(root)) return vx_fail(L->err, VOCIS_E_FORMAT, "%s: expected a JSON object", L->path);
    static const char *const must_be_null[] = {"truncation", "padding"};
    for (size_t i = 0; i < 2; i++) {
        const cJSON *j = cJSON_GetObjectItemCaseSensitive(root, must_be_null[i]);
        if (j && !cJSON_IsNull(j))
            return vx_fail(L->err, VOCIS_E_UNSUPPORTED, "%s: %s: only null is supported", L->path, must_be_null[i]);
    }
    const cJSON *post = cJSON_GetObjectItemCaseSensitive(root, "post_processor");
    if (post && !cJSON_IsNull(post)) {
        const char *type = NULL;
        VX_TRY(get_str(L, post, "type", "post_processor", &type));
        /* ByteLevel post-processing only adjusts offsets; ids are unchanged. */
        if (!type || strcmp(type, "ByteLevel") != 0)
            return vx_fail(L->err, VOCIS_E_UNSUPPORTED,
                           "%s: post_processor.type: '%s' is not supported (null or ByteLevel)", L->path,
                           type ? type : "?");
    }
    VX_TRY(load_model(L, t, cJSON_GetObjectItemCaseSensitive(root, "model")));
    VX_TRY(load_normalizer(L, t, cJSON_GetObjectItemCaseSensitive(root, "normalizer"), "normalizer"));
    VX_TRY(load_pretokenizer(L, t, cJSON_GetObjectItemCaseSensitive(root, "pre_tokenizer"), "pre_tokenizer"));
    VX_TRY(load_added(L, t, cJSON_GetObjectItemCaseSensitive(root, "added_tokens")));
    VX_TRY(normalize_added(t, L->err));
    if (build_added_set(t, &t->raw_set, 0, L->err) || build_added_set(t, &t->norm_set, 1, L->err))
        return L->err->code;

    VX_TRY(check_id_range(L, t));
    /* id -> text: vocabulary first, added tokens override (as upstream). */
    t->id_str = vx_calloc(L->err, (size_t)t->n_ids + 1, sizeof *t->id_str, "id table");
    if (!t->id_str) return L->err->code;
    for (size_t i = 0; i < t->vocab.cap; i++)
        if (t->vocab.slots[i].key) t->id_str[t->vocab.slots[i].id] = t->vocab.slots[i].key;
    for (size_t i = 0; i < t->n_added; i++) t->id_str[t->added[i].id] = t->added[i].raw;
    return VOCIS_OK;
}

vocis_status vx_tokenizer_load_mem(const char *data, size_t len, const char *name, vx_tokenizer **out,
                                   vx_err *err) {
    *out = NULL;
    if (!name) name = "tokenizer.json";
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(data, len, &end, 0);
    if (!root) {
        size_t off = end && end >= data && end <= data + len ? (size_t)(end - data) : 0;
        return vx_fail(err, VOCIS_E_FORMAT, "%s: invalid JSON near byte %zu", name, off);
    }
    vx_tokenizer *t = vx_calloc(err, 1, sizeof *t, "tokenizer");
    if (!t) {
        cJSON_Delete(root);
        return err ? err->code : VOCIS_E_NOMEM;
    }
    build_byte_map(t);
    vx_err local;
    vx_err_clear(&local);
    loader L = {name, err ? err : &local};
    vocis_status st = load_json(&L, t, root);
    cJSON_Delete(root);
    if (st != VOCIS_OK) {
        vx_tokenizer_free(t);
        return st;
    }
    *out = t;
    return VOCIS_OK;
}

vocis_status vx_tokenizer_load(const char *path, vx_tokenizer **out, vx_err *err) {
    *out = NULL;
    char *data = NULL;
    size_t len = 0;
    VX_TRY(vx_read_file(path, VX_JSON_MAX_BYTES, &data, &len, err));
    vocis_status st = vx_tokenizer_load_mem(data, len, path, out, err);
    free(data);
    return st;
}

/* ------------------------------------------------------------------------ */
/* Encoding                                                                  */

typedef struct {
    size_t off, len;
} span;

typedef struct {
    int32_t c;
    int32_t prev, next;
    uint32_t len; /* bytes; 0 once merged into its left neighbour */
} bpe_sym;

typedef struct {
    uint32_t rank;
    uint32_t pos;
    int32_t id;
} bpe_merge;

typedef struct {
    const vx_tokenizer *t;
    vx_err *err;
    int32_t *ids;
    size_t n, cap;
    char *buf; /* pre-token text */
    size_t blen, bcap;
    span *cur, *nxt;
    size_t ncur, nnxt, ccap, ncap;
    bpe_sym *sym;
    size_t scap;
    bpe_merge *heap;
    size_t hcap;
    char *key; /* prefix + char + suffix */
    size_t kcap;
    pcre2_match_data *md;
    vx_tok_unknown *unknown; /* NULL: not collected */
} enc_ctx;

static void note_unknown(vx_tok_unknown *u, uint32_t cp) {
    if (!u) return;
    const int kept = u->n < VX_TOK_UNKNOWN_KEEP ? u->n : VX_TOK_UNKNOWN_KEEP;
    for (int i = 0; i < kept; i++)
        if (u->cp[i] == cp) return;
    if (u->n < VX_TOK_UNKNOWN_KEEP) u->cp[u->n] = cp;
    u->n++; /* past the kept ones, repeats count again: n is then a lower bound of "more" */
}

static int grow(void **p, size_t *cap, size_t need, size_t elem) {
    if (need <= *cap) return 0;
    size_t nc = *cap ? *cap : 16;
    while (nc < need) nc *= 2;
    void *np = realloc(*p, nc * elem);
    if (!np) return -1;
    *p = np;
    *cap = nc;
    return 0;
}

#define GROW(ctx, ptr, cap, need)                                                                  \
    (grow((void **)&(ptr), &(cap), (need), sizeof *(ptr))                                          \
         ? vx_fail((ctx)->err, VOCIS_E_NOMEM, "tokenizer: out of memory")                          \
         : VOCIS_OK)

static vocis_status emit(enc_ctx *c, int32_t id) {
    VX_TRY(GROW(c, c->ids, c->cap, c->n + 1));
    c->ids[c->n++] = id;
    return VOCIS_OK;
}

static vocis_status push_next(enc_ctx *c, size_t off, size_t len) {
    if (len == 0) return VOCIS_OK;
    VX_TRY(GROW(c, c->nxt, c->ncap, c->nnxt + 1));
    c->nxt[c->nnxt].off = off;
    c->nxt[c->nnxt].len = len;
    c->nnxt++;
    return VOCIS_OK;
}

static vocis_status buf_append(enc_ctx *c, const char *s, size_t n) {
    VX_TRY(GROW(c, c->buf, c->bcap, c->blen + n + 1));
    memcpy(c->buf + c->blen, s, n);
    c->blen += n;
    return VOCIS_OK;
}

/* Appends a copy of buf[from, from+n): the source is addressed after growth. */
static vocis_status buf_append_self(enc_ctx *c, size_t from, size_t n) {
    VX_TRY(GROW(c, c->buf, c->bcap, c->blen + n + 1));
    memmove(c->buf + c->blen, c->buf + from, n);
    c->blen += n;
    return VOCIS_OK;
}

static void swap_pieces(enc_ctx *c) {
    span *tmp = c->cur;
    size_t tcap = c->ccap;
    c->cur = c->nxt;
    c->ccap = c->ncap;
    c->ncur = c->nnxt;
    c->nxt = tmp;
    c->ncap = tcap;
    c->nnxt = 0;
}

/* Whitespace: \w+|[^\w\s]+ with the Unicode classes of Rust's `regex` crate,
 * which tokenizers uses here (not Oniguruma). Hand-coded rather than PCRE2:
 * PCRE2 10.42's UCP \w lacks marks and Join_Control and includes No (e.g.
 * "e\u0301", ZWJ, "x\u00b2" would split differently). */
static vocis_status split_whitespace(enc_ctx *c, span p) {
    const char *s = c->buf + p.off;
    size_t i = 0, start = 0;
    int run = -1; /* -1 none, 0 other, 1 word */
    while (i < p.len) {
        uint32_t cp;
        int k = vx_utf8_next(s, p.len, i, &cp);
        if (!k) return vx_fail(c->err, VOCIS_E_INTERNAL, "tokenizer: invalid UTF-8 inside a pre-token");
        int cls = vx_uc_white_space(cp) ? -1 : vx_uc_rust_word(cp) ? 1 : 0;
        if (cls != run) {
            if (run >= 0) VX_TRY(push_next(c, p.off + start, i - start));
            run = cls;
            start = i;
        }
        i += (size_t)k;
    }
    if (run >= 0) VX_TRY(push_next(c, p.off + start, i - start));
    return VOCIS_OK;
}

/* Regex split, tokenizers' Pattern semantics: matches and the gaps between
 * them become pieces; Isolated keeps both, Removed keeps the gaps (with
 * invert the roles swap). Empty matches only mark a boundary. */
static vocis_status split_regex(enc_ctx *c, span p, const pt_step *st, split_behavior behavior, int invert) {
    const char *s = c->buf + p.off;
    if (!c->md) {
        c->md = pcre2_match_data_create(1, NULL);
        if (!c->md) return vx_fail(c->err, VOCIS_E_NOMEM, "tokenizer: out of memory (regex)");
    }
    size_t start = 0, prev = 0;
    while (start <= p.len) {
        int rc = pcre2_match(st->re, (PCRE2_SPTR)s, p.len, start, PCRE2_NO_UTF_CHECK, c->md, NULL);
        if (rc == PCRE2_ERROR_NOMATCH) break;
        if (rc < 0) {
            PCRE2_UCHAR msg[256];
            pcre2_get_error_message(rc, msg, sizeof msg);
            return vx_fail(c->err, VOCIS_E_UNSUPPORTED, "tokenizer: pre-tokenizer regex failed on a %zu-byte piece: %s",
                           p.len, (const char *)msg);
        }
        PCRE2_SIZE *ov = pcre2_get_ovector_pointer(c->md);
        size_t ms = ov[0], me = ov[1];
        int keep_gap = behavior == SPLIT_ISOLATED || !invert;
        int keep_match = behavior == SPLIT_ISOLATED || invert;
        if (ms > prev && keep_gap) VX_TRY(push_next(c, p.off + prev, ms - prev));
        if (me > ms && keep_match) VX_TRY(push_next(c, p.off + ms, me - ms));
        prev = me;
        if (me > ms) {
            start = me;
        } else { /* empty match: step over one character */
            if (ms >= p.len) break;
            uint32_t cp;
            int k = vx_utf8_next(s, p.len, ms, &cp);
            start = ms + (size_t)(k ? k : 1);
        }
    }
    int keep_gap = behavior == SPLIT_ISOLATED || !invert;
    if (prev < p.len && keep_gap) VX_TRY(push_next(c, p.off + prev, p.len - prev));
    return VOCIS_OK;
}

static vocis_status byte_level(enc_ctx *c, const pt_step *st) {
    const vx_tokenizer *t = c->t;
    if (st->add_prefix_space) {
        for (size_t i = 0; i < c->ncur; i++) {
            span p = c->cur[i];
            if (c->buf[p.off] == ' ') {
                VX_TRY(push_next(c, p.off, p.len));
                continue;
            }
            size_t off = c->blen;
            VX_TRY(buf_append(c, " ", 1));
            VX_TRY(buf_append_self(c, p.off, p.len));
            VX_TRY(push_next(c, off, p.len + 1));
        }
        swap_pieces(c);
    }
    if (st->re) {
        for (size_t i = 0; i < c->ncur; i++) VX_TRY(split_regex(c, c->cur[i], st, SPLIT_ISOLATED, 0));
        swap_pieces(c);
    }
    for (size_t i = 0; i < c->ncur; i++) {
        span p = c->cur[i];
        size_t off = c->blen;
        VX_TRY(GROW(c, c->buf, c->bcap, c->blen + 2 * p.len + 1));
        for (size_t k = 0; k < p.len; k++) {
            unsigned char b = (unsigned char)c->buf[p.off + k];
            memcpy(c->buf + c->blen, t->byte_char[b], t->byte_char_len[b]);
            c->blen += t->byte_char_len[b];
        }
        VX_TRY(push_next(c, off, c->blen - off));
    }
    swap_pieces(c);
    return VOCIS_OK;
}

/* ---- BPE ---- */

static int merge_less(const bpe_merge *a, const bpe_merge *b) {
    return a->rank != b->rank ? a->rank < b->rank : a->pos < b->pos;
}

static void heap_push(enc_ctx *c, size_t *n, bpe_merge m) {
    size_t i = (*n)++;
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (!merge_less(&m, &c->heap[parent])) break;
        c->heap[i] = c->heap[parent];
        i = parent;
    }
    c->heap[i] = m;
}

static bpe_merge heap_pop(enc_ctx *c, size_t *n) {
    bpe_merge top = c->heap[0], last = c->heap[--(*n)];
    size_t i = 0;
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        const bpe_merge *best = &last;
        if (l < *n && merge_less(&c->heap[l], best)) m = l, best = &c->heap[l];
        if (r < *n && merge_less(&c->heap[r], best)) m = r;
        if (m == i) break;
        c->heap[i] = c->heap[m];
        i = m;
    }
    if (*n) c->heap[i] = last;
    return top;
}

static vocis_status add_sym(enc_ctx *c, size_t *ns, int32_t id, size_t len) {
    VX_TRY(GROW(c, c->sym, c->scap, *ns + 1));
    bpe_sym *s = &c->sym[*ns];
    s->c = id;
    s->len = (uint32_t)len;
    s->next = -1;
    s->prev = (int32_t)*ns - 1;
    if (*ns) c->sym[*ns - 1].next = (int32_t)*ns;
    (*ns)++;
    return VOCIS_OK;
}

static vocis_status bpe_piece(enc_ctx *c, const char *w, size_t n) {
    const vx_tokenizer *t = c->t;
    if (n == 0) return VOCIS_OK;
    if (t->ignore_merges) {
        int32_t id = str_map_get(&t->vocab, w, n);
        if (id >= 0) return emit(c, id);
    }
    size_t ns = 0;
    int32_t unk = -1;
    size_t unk_len = 0;
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        int k = vx_utf8_next(w, n, i, &cp);
        if (!k) return vx_fail(c->err, VOCIS_E_INTERNAL, "tokenizer: invalid UTF-8 inside a pre-token");
        int first = i == 0, last = i + (size_t)k == n;
        int32_t id;
        if ((first || !t->prefix) && (!last || !t->suffix)) {
            id = str_map_get(&t->vocab, w + i, (size_t)k);
        } else {
            size_t kl = 0;
            VX_TRY(GROW(c, c->key, c->kcap, t->prefix_len + 4 + t->suffix_len));
            if (!first && t->prefix) memcpy(c->key, t->prefix, t->prefix_len), kl = t->prefix_len;
            memcpy(c->key + kl, w + i, (size_t)k), kl += (size_t)k;
            if (last && t->suffix) memcpy(c->key + kl, t->suffix, t->suffix_len), kl += t->suffix_len;
            id = str_map_get(&t->vocab, c->key, kl);
        }
        if (id >= 0) {
            if (unk >= 0) {
                VX_TRY(add_sym(c, &ns, unk, unk_len));
                unk = -1;
            }
            VX_TRY(add_sym(c, &ns, id, (size_t)k));
        } else {
            int done = 0;
            if (t->byte_fallback) {
                /* upstream falls back on the bytes of the looked-up string,
                 * i.e. including any prefix/suffix decoration (left in c->key) */
                const char *src = w + i;
                size_t sl = (size_t)k;
                if ((!first && t->prefix) || (last && t->suffix)) {
                    size_t kl = 0;
                    if (!first && t->prefix) kl += t->prefix_len;
                    kl += (size_t)k;
                    if (last && t->suffix) kl += t->suffix_len;
                    src = c->key, sl = kl;
                }
                int all = 1;
                for (size_t b = 0; b < sl; b++)
                    if (t->byte_ids[(unsigned char)src[b]] < 0) all = 0;
                if (all) {
                    for (size_t b = 0; b < sl; b++) VX_TRY(add_sym(c, &ns, t->byte_ids[(unsigned char)src[b]], 1));
                    done = 1;
                }
            }
            if (!done) note_unknown(c->unknown, cp);
            if (!done && t->unk_token) {
                if (t->unk_id < 0)
                    return vx_fail(c->err, VOCIS_E_FORMAT, "tokenizer: unk_token '%s' is not in the vocabulary",
                                   t->unk_token);
                if (unk >= 0 && t->fuse_unk) {
                    unk_len += (size_t)k;
                } else {
                    if (unk >= 0) VX_TRY(add_sym(c, &ns, unk, unk_len));
                    unk = t->unk_id;
                    unk_len = (size_t)k;
                }
            }
            /* no unk token and no byte fallback: the character is dropped, as upstream */
        }
        i += (size_t)k;
    }
    if (unk >= 0) VX_TRY(add_sym(c, &ns, unk, unk_len));
    if (ns == 0) return VOCIS_OK;

    /* Merge loop: pop the lowest (rank, position); stale entries are skipped
     * when the pair at that position no longer yields the same token. */
    VX_TRY(GROW(c, c->heap, c->hcap, 2 * ns + 2));
    size_t nh = 0;
    for (size_t i = 0; i + 1 < ns; i++) {
        const merge_slot *m = merge_map_get(&t->merges, c->sym[i].c, c->sym[i + 1].c);
        if (m) heap_push(c, &nh, (bpe_merge){m->rank, (uint32_t)i, m->id});
    }
    while (nh) {
        bpe_merge top = heap_pop(c, &nh);
        bpe_sym *s = &c->sym[top.pos];
        if (s->len == 0 || s->next < 0) continue;
        bpe_sym right = c->sym[s->next];
        const merge_slot *m = merge_map_get(&t->merges, s->c, right.c);
        if (!m || m->id != top.id) continue;
        c->sym[s->next].len = 0;
        s->c = top.id;
        s->len += right.len;
        s->next = right.next;
        if (right.next >= 0) c->sym[right.next].prev = (int32_t)top.pos;
        /* each merge removes one symbol and pushes at most two entries */
        VX_TRY(GROW(c, c->heap, c->hcap, nh + 2));
        s = &c->sym[top.pos];
        if (s->prev >= 0) {
            const merge_slot *pm = merge_map_get(&t->merges, c->sym[s->prev].c, s->c);
            if (pm) heap_push(c, &nh, (bpe_merge){pm->rank, (uint32_t)s->prev, pm->id});
        }
        if (s->next >= 0) {
            const merge_slot *nm = merge_map_get(&t->merges, s->c, c->sym[s->next].c);
            if (nm) heap_push(c, &nh, (bpe_merge){nm->rank, top.pos, nm->id});
        }
    }
    for (size_t i = 0; i < ns; i++)
        if (c->sym[i].len) VX_TRY(emit(c, c->sym[i].c));
    return VOCIS_OK;
}

/* Pre-tokenize and BPE one ordinary (non-added-token) segment. */
static vocis_status encode_segment(enc_ctx *c, const char *s, size_t n) {
    const vx_tokenizer *t = c->t;
    if (n == 0) return VOCIS_OK;
    c->blen = 0;
    c->ncur = c->nnxt = 0;
    VX_TRY(buf_append(c, s, n));
    VX_TRY(push_next(c, 0, n));
    swap_pieces(c);
    for (size_t k = 0; k < t->n_pt; k++) {
        const pt_step *st = &t->pt[k];
        if (st->kind == PT_BYTELEVEL) {
            VX_TRY(byte_level(c, st));
            continue;
        }
        for (size_t i = 0; i < c->ncur; i++) {
            if (st->kind == PT_WHITESPACE) VX_TRY(split_whitespace(c, c->cur[i]));
            else VX_TRY(split_regex(c, c->cur[i], st, st->behavior, st->invert));
        }
        swap_pieces(c);
    }
    for (size_t i = 0; i < c->ncur; i++) VX_TRY(bpe_piece(c, c->buf + c->cur[i].off, c->cur[i].len));
    return VOCIS_OK;
}

typedef vocis_status (*segment_fn)(enc_ctx *c, const char *s, size_t n);

static int is_word_at_end(const char *s, size_t n) {
    /* last code point of s[0..n) is a Rust-regex word character */
    if (n == 0) return 0;
    size_t i = n - 1;
    while (i > 0 && ((unsigned char)s[i] & 0xC0) == 0x80) i--;
    uint32_t cp;
    return vx_utf8_next(s, n, i, &cp) ? vx_uc_rust_word(cp) : 0;
}

static int is_word_at_start(const char *s, size_t n) {
    uint32_t cp;
    return n && vx_utf8_next(s, n, 0, &cp) ? vx_uc_rust_word(cp) : 0;
}

/* Splits s on the added tokens of `set` (leftmost-longest literal match,
 * then the single_word / lstrip / rstrip rules of tokenizers'
 * AddedVocabulary::find_matches); gaps go to `gap`. */
static vocis_status split_added(enc_ctx *c, const added_set *set, const char *s, size_t n, segment_fn gap) {
    const vx_tokenizer *t = c->t;
    size_t start_offset = 0, i = 0;
    while (set->n && i < n) {
        unsigned char b = (unsigned char)s[i];
        const added_token *hit = NULL;
        for (uint32_t k = set->first[b]; k < set->first[b + 1]; k++) {
            const added_token *a = &t->added[set->order[k]];
            if (a->len <= n - i && memcmp(s + i, a->content, a->len) == 0) {
                hit = a; /* longest first */
                break;
            }
        }
        if (!hit) {
            i++;
            continue;
        }
        size_t start = i, stop = i + hit->len;
        i = stop;
        if (hit->single_word && (is_word_at_end(s, start) || is_word_at_start(s + stop, n - stop))) continue;
        if (hit->lstrip) {
            size_t ns = start;
            while (ns > start_offset) {
                size_t j = ns - 1;
                while (j > 0 && ((unsigned char)s[j] & 0xC0) == 0x80) j--;
                uint32_t cp;
                if (!vx_utf8_next(s, n, j, &cp) || !vx_uc_white_space(cp)) break;
                ns = j;
            }
            start = ns;
        }
        /* (upstream resumes the literal search at the unstripped end; the two
         * differ only for added tokens that begin with whitespace) */
        if (hit->rstrip) {
            uint32_t cp;
            int k;
            while (stop < n && (k = vx_utf8_next(s, n, stop, &cp)) && vx_uc_white_space(cp)) stop += (size_t)k;
            i = stop;
        }
        if (start_offset < start) VX_TRY(gap(c, s + start_offset, start - start_offset));
        VX_TRY(emit(c, hit->id));
        start_offset = stop;
    }
    if (start_offset < n) VX_TRY(gap(c, s + start_offset, n - start_offset));
    return VOCIS_OK;
}

static vocis_status normalized_gap(enc_ctx *c, const char *s, size_t n) {
    return split_added(c, &c->t->norm_set, s, n, encode_segment);
}

static vocis_status raw_gap(enc_ctx *c, const char *s, size_t n) {
    char *norm;
    size_t len;
    VX_TRY(normalize(c->t, s, n, &norm, &len, c->err));
    vocis_status st = normalized_gap(c, norm, len);
    if (norm != s) free(norm);
    return st;
}

vocis_status vx_tokenizer_encode(const vx_tokenizer *t, const char *text, size_t len, int32_t **ids, size_t *n,
                                 vx_err *err) {
    return vx_tokenizer_encode_ex(t, text, len, ids, n, NULL, err);
}

void vx_tok_unknown_message(const vx_tokenizer *t, const vx_tok_unknown *u, int from, char *buf, size_t cap) {
    size_t k = (size_t)snprintf(buf, cap, "the tokenizer has no token for");
    const int kept = u->n < VX_TOK_UNKNOWN_KEEP ? u->n : VX_TOK_UNKNOWN_KEEP;
    for (int i = from; i < kept && k < cap; i++) {
        char ch[5] = {0};
        vx_utf8_put(u->cp[i], ch);
        k += (size_t)snprintf(buf + k, cap - k, "%s '%s' (U+%04X)", i > from ? "," : "", ch, (unsigned)u->cp[i]);
    }
    if (k < cap && u->n > kept) k += (size_t)snprintf(buf + k, cap - k, " and more");
    if (k < cap)
        snprintf(buf + k, cap - k, t->unk_token ? ": %s read as %s" : ": %s left out",
                 kept - from > 1 ? "they are" : "it is", t->unk_token);
}

vocis_status vx_tokenizer_encode_ex(const vx_tokenizer *t, const char *text, size_t len, int32_t **ids, size_t *n,
                                    vx_tok_unknown *unknown, vx_err *err) {
    *ids = NULL;
    *n = 0;
    if (!t || (!text && len)) return vx_fail(err, VOCIS_E_ARG, "tokenizer: no tokenizer or no text");
    size_t bad = vx_utf8_check(text, len);
    if (bad < len)
        return vx_fail(err, VOCIS_E_ARG, "text: invalid UTF-8 at byte offset %zu (byte 0x%02X)", bad,
                       (unsigned char)text[bad]);
    vx_err local;
    vx_err_clear(&local);
    enc_ctx c = {.t = t, .err = err ? err : &local, .unknown = unknown};
    vocis_status st = len ? split_added(&c, &t->raw_set, text, len, raw_gap) : VOCIS_OK;
    free(c.buf);
    free(c.cur);
    free(c.nxt);
    free(c.sym);
    free(c.heap);
    free(c.key);
    pcre2_match_data_free(c.md);
    if (st != VOCIS_OK) {
        free(c.ids);
        return st;
    }
    if (!c.ids) c.ids = malloc(sizeof *c.ids); /* a valid pointer even for no ids */
    if (!c.ids) return vx_fail(err, VOCIS_E_NOMEM, "tokenizer: out of memory");
    *ids = c.ids;
    *n = c.n;
    return VOCIS_OK;
}
