#include "models/vibevoice/processor.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

/* ---- UTF-8 and Python's notion of whitespace / digits ---------------------- */

/* Decodes one code point at s[0..len); returns its byte length, or -1. */
static int u8_next(const char *s, size_t len, int32_t *cp) {
    utf8proc_int32_t c;
    utf8proc_ssize_t n = utf8proc_iterate((const utf8proc_uint8_t *)s, (utf8proc_ssize_t)len, &c);
    if (n <= 0) return -1;
    *cp = c;
    return (int)n;
}

/* str.isspace() / re's \s for str patterns (CPython _PyUnicode_IsWhitespace). */
static int py_isspace(int32_t c) {
    return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 || c == 0x1680 ||
           (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

/* re's \d for str patterns: Unicode category Nd. Nd code points come in runs
 * of ten starting at the digit zero, so the value is the offset modulo 10
 * from the start of the contiguous Nd block. */
static int py_digit(int32_t c, int *val) {
    if (c >= '0' && c <= '9') {
        *val = c - '0';
        return 1;
    }
    if (c < 0x80 || utf8proc_category(c) != UTF8PROC_CATEGORY_ND) return 0;
    int32_t z = c;
    while (z > 0 && utf8proc_category(z - 1) == UTF8PROC_CATEGORY_ND)
        z--;
    *val = (int)((c - z) % 10);
    return 1;
}

/* str.strip(): [*b, *e) is the stripped range of s[0..len) (valid UTF-8). */
static void py_strip(const char *s, size_t len, size_t *b, size_t *e) {
    size_t i = 0, start = len, end = 0;
    while (i < len) {
        int32_t c = 0;
        int k = u8_next(s + i, len - i, &c);
        if (k < 0) k = 1, c = 0;
        if (!py_isspace(c)) {
            if (start == len) start = i;
            end = i + (size_t)k;
        }
        i += (size_t)k;
    }
    if (start == len) start = end = 0;
    *b = start;
    *e = end;
}

static int lit_match(int32_t c, char want) {
    if (c == want || c == want - 32) return 1; /* lower / ASCII upper */
    /* re.IGNORECASE folds: 's' ~ U+017F (long s), 'k' ~ U+212A (Kelvin sign) */
    return (want == 's' && c == 0x17F) || (want == 'k' && c == 0x212A);
}

typedef struct {
    long long id;          /* capped at 1e12 */
    size_t dig_b, dig_e;   /* the digits' bytes */
    size_t rest_b, rest_e; /* stripped text after the colon */
} speaker_match;

/* The bytes of "speaker" (re.IGNORECASE) at the start of s, 0 when it is not there. */
static size_t match_word(const char *s, size_t len) {
    size_t i = 0;
    int32_t c;
    int k;
    for (const char *w = "speaker"; *w; w++) {
        if (i >= len || (k = u8_next(s + i, len - i, &c)) < 0 || !lit_match(c, *w)) return 0;
        i += (size_t)k;
    }
    return i;
}

/* ^Speaker\s+(\d+)\s*:\s*(.*)$ with re.IGNORECASE on a stripped line. */
static int match_speaker(const char *s, size_t len, speaker_match *m) {
    size_t i = match_word(s, len);
    int32_t c;
    int k;
    if (!i) return 0;
    int nws = 0;
    while (i < len && (k = u8_next(s + i, len - i, &c)) > 0 && py_isspace(c))
        i += (size_t)k, nws++;
    if (!nws) return 0;
    m->dig_b = i;
    m->id = 0;
    int nd = 0, v;
    while (i < len && (k = u8_next(s + i, len - i, &c)) > 0 && py_digit(c, &v)) {
        if (m->id < 1000000000000LL) m->id = m->id * 10 + v;
        i += (size_t)k, nd++;
    }
    if (!nd) return 0;
    m->dig_e = i;
    while (i < len && (k = u8_next(s + i, len - i, &c)) > 0 && py_isspace(c))
        i += (size_t)k;
    if (i >= len || s[i] != ':') return 0;
    i++;
    size_t b, e;
    py_strip(s + i, len - i, &b, &e);
    m->rest_b = i + b;
    m->rest_e = i + e;
    return 1;
}

static vocis_status check_utf8(const char *text, size_t len, const char *what, vx_err *err) {
    size_t i = 0, line = 1;
    while (i < len) {
        if (text[i] == '\0') return vx_fail(err, VOCIS_E_FORMAT, "%s: line %zu: contains a NUL byte", what, line);
        if (text[i] == '\n') line++;
        int32_t c;
        int k = u8_next(text + i, len - i, &c);
        if (k < 0) return vx_fail(err, VOCIS_E_FORMAT, "%s: line %zu: invalid UTF-8 at byte %zu", what, line, i);
        i += (size_t)k;
    }
    return VOCIS_OK;
}

/* ---- script parsing ------------------------------------------------------------- */

void vx_vv_script_free(vx_vv_script *s) {
    if (!s) return;
    for (int i = 0; i < s->n_lines; i++)
        free(s->lines[i].text);
    free(s->lines);
    memset(s, 0, sizeof *s);
}

static int cmp_int(const void *a, const void *b) {
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* "'text'" of a line for a warning: at most 60 bytes, cut on a character boundary. */
static void quote_line(char *buf, size_t cap, const char *ln, size_t ll) {
    size_t cut = ll > 60 ? 60 : ll;
    while (cut < ll && cut > 0 && ((unsigned char)ln[cut] & 0xC0) == 0x80)
        cut--;
    snprintf(buf, cap, "'%.*s%s'", (int)cut, ln, cut < ll ? "..." : "");
}

/* "script line N WHAT: 'text'" through warn. */
static void warn_line(vx_vv_warn_fn warn, void *user, int lineno, const char *what, const char *ln, size_t ll) {
    if (!warn) return;
    char q[80], msg[400];
    quote_line(q, sizeof q, ln, ll);
    snprintf(msg, sizeof msg, "script line %d %s: %s", lineno, what, q);
    warn(user, msg);
}

/* Warns about each non-blank line that is not a speaker line. */
static void warn_dropped(const char *text, size_t len, vx_vv_warn_fn warn, void *warn_user) {
    int lineno = 0;
    for (size_t pos = 0; pos <= len;) {
        const char *nl = memchr(text + pos, '\n', len - pos);
        size_t end = nl ? (size_t)(nl - text) : len;
        lineno++;
        size_t b, e;
        py_strip(text + pos, end - pos, &b, &e);
        const char *ln = text + pos + b;
        size_t ll = e - b;
        speaker_match m;
        if (ll > 0 && !match_speaker(ln, ll, &m))
            warn_line(warn, warn_user, lineno, "is not 'Speaker N: text' and is ignored", ln, ll);
        if (!nl) break;
        pos = end + 1;
    }
}

vocis_status vx_vv_script_parse(const char *text, size_t len, vx_vv_warn_fn warn, void *warn_user, vx_vv_script *out,
                                vx_err *err) {
    memset(out, 0, sizeof *out);
    VX_TRY(check_utf8(text, len, "script", err));
    size_t cap = 0;
    int lineno = 0;
    for (size_t pos = 0; pos <= len;) {
        const char *nl = memchr(text + pos, '\n', len - pos);
        size_t end = nl ? (size_t)(nl - text) : len;
        lineno++;
        size_t b, e;
        py_strip(text + pos, end - pos, &b, &e);
        const char *ln = text + pos + b;
        size_t ll = e - b;
        if (ll > 0) {
            speaker_match m;
            if (!match_speaker(ln, ll, &m)) {
                /* dropped; warned about below once the script is known to be usable */
            } else if (m.id > 1000000000LL) {
                vx_vv_script_free(out);
                return vx_fail(err, VOCIS_E_FORMAT, "script line %d: speaker number %.*s is too large", lineno,
                               (int)(m.dig_e - m.dig_b), ln + m.dig_b);
            } else {
                if ((size_t)out->n_lines == cap) {
                    size_t ncap = cap ? cap * 2 : 16;
                    vx_vv_line *p = realloc(out->lines, ncap * sizeof *p);
                    if (!p) {
                        vx_vv_script_free(out);
                        return vx_fail(err, VOCIS_E_NOMEM, "script: out of memory");
                    }
                    out->lines = p;
                    cap = ncap;
                }
                size_t tl = m.rest_e - m.rest_b;
                char *t = malloc(tl + 2);
                if (!t) {
                    vx_vv_script_free(out);
                    return vx_fail(err, VOCIS_E_NOMEM, "script: out of memory");
                }
                t[0] = ' ';
                memcpy(t + 1, ln + m.rest_b, tl);
                t[tl + 1] = '\0';
                out->lines[out->n_lines].speaker = (int)m.id;
                out->lines[out->n_lines].text = t;
                out->n_lines++;
            }
        }
        if (!nl) break;
        pos = end + 1;
    }
    if (out->n_lines == 0) return vx_fail(err, VOCIS_E_FORMAT, "script has no 'Speaker N:' lines");
    if (warn) warn_dropped(text, len, warn, warn_user);

    int min_id = out->lines[0].speaker;
    for (int i = 1; i < out->n_lines; i++)
        if (out->lines[i].speaker < min_id) min_id = out->lines[i].speaker;
    if (min_id > 0)
        for (int i = 0; i < out->n_lines; i++)
            out->lines[i].speaker--;

    int *ids = malloc((size_t)out->n_lines * sizeof *ids);
    if (!ids) {
        vx_vv_script_free(out);
        return vx_fail(err, VOCIS_E_NOMEM, "script: out of memory");
    }
    for (int i = 0; i < out->n_lines; i++)
        ids[i] = out->lines[i].speaker;
    qsort(ids, (size_t)out->n_lines, sizeof *ids, cmp_int);
    out->n_speakers = 1;
    for (int i = 1; i < out->n_lines; i++)
        out->n_speakers += ids[i] != ids[i - 1];
    out->max_speaker = ids[out->n_lines - 1];
    free(ids);
    return VOCIS_OK;
}

/* ---- the demo's text-file preparation, with warnings -------------------------------- */

typedef struct {
    char *p;
    size_t n, cap;
} sbuf;

static int sb_put(sbuf *b, const char *s, size_t n) {
    if (b->n + n + 1 > b->cap) {
        size_t nc = b->cap ? b->cap * 2 : 256;
        while (nc < b->n + n + 1)
            nc *= 2;
        char *p = realloc(b->p, nc);
        if (!p) return -1;
        b->p = p;
        b->cap = nc;
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = '\0';
    return 0;
}

/* A line that looks meant as a label but is not one: "Speaker" (any case), at most 16
 * characters other than spaces and ':' after optional spaces, optional spaces, then ':'
 * ("Speaker1:", "Speaker:", "Speaker A:"); need_digit: only those with a digit there ("Speaker1:"). */
static int label_like(const char *s, size_t len, int need_digit) {
    size_t i = match_word(s, len);
    int32_t c;
    int k, v, digits = 0;
    if (!i) return 0;
    while (i < len && (k = u8_next(s + i, len - i, &c)) > 0 && py_isspace(c))
        i += (size_t)k;
    for (int n = 0; i < len && n <= 16 && (k = u8_next(s + i, len - i, &c)) > 0 && c != ':' && !py_isspace(c); n++)
        i += (size_t)k, digits += py_digit(c, &v);
    if (need_digit && !digits) return 0;
    while (i < len && (k = u8_next(s + i, len - i, &c)) > 0 && py_isspace(c))
        i += (size_t)k;
    return i < len && s[i] == ':';
}

int vx_vv_script_has_labels(const char *text, size_t len) {
    for (size_t pos = 0; pos <= len;) {
        const char *nl = memchr(text + pos, '\n', len - pos);
        size_t end = nl ? (size_t)(nl - text) : len, b, e;
        py_strip(text + pos, end - pos, &b, &e);
        speaker_match m;
        if (e > b && (match_speaker(text + pos + b, e - b, &m) || label_like(text + pos + b, e - b, 1))) return 1;
        if (!nl) break;
        pos = end + 1;
    }
    return 0;
}

/* The next code point of s[i..len) into *c: its length, 0 when s ends inside it (more bytes may complete
 * it), -1 when invalid. */
static int u8_more(const char *s, size_t len, size_t i, int32_t *c) {
    int k = u8_next(s + i, len - i, c);
    if (k > 0) return k;
    unsigned char b = (unsigned char)s[i];
    size_t need = b >= 0xF0 ? 4 : b >= 0xE0 ? 3 : b >= 0xC0 ? 2 : 1;
    return len - i < need ? 0 : -1;
}

int vx_vv_label_at(const char *s, size_t len, size_t *end) {
    static const char word[] = "speaker";
    enum { LEAD, WORD, GAP1, GAP, DIGITS, TAIL } state = LEAD;
    size_t i = 0, w = 0;
    int32_t c;
    int v;
    while (i < len) {
        int k = u8_more(s, len, i, &c);
        if (k <= 0) return k == 0 ? -1 : 0;
        const int sp = py_isspace(c) && c != '\n', colon = c == ':';
        if (state == LEAD && !sp) state = WORD;
        if (state == WORD) {
            if (!lit_match(c, word[w++])) return 0;
            if (!word[w]) state = GAP1;
        } else if (state == GAP1) {
            if (!sp) return 0;
            state = GAP;
        } else if (state == GAP) {
            if (py_digit(c, &v)) state = DIGITS;
            else if (!sp) return 0;
        } else if (state == DIGITS || state == TAIL) {
            if (colon) {
                *end = i + 1;
                return 1;
            }
            if (sp) state = TAIL;
            else if (state == TAIL || !py_digit(c, &v)) return 0;
        }
        i += (size_t)k;
    }
    return -1;
}

typedef struct {
    sbuf res, cur;
    const char *spk; /* digits of the current turn's label, NULL before the first */
    size_t spk_n;
    const char *label; /* the label line, for the warning about an empty turn */
    size_t label_n;
    int label_line;
} join_state;

/* Appends the current turn as "Speaker N: text"; a turn without text is skipped with a warning. */
static int join_flush(join_state *j, vx_vv_warn_fn warn, void *user) {
    if (!j->spk) return 0;
    size_t cb, ce;
    py_strip(j->cur.p, j->cur.n, &cb, &ce);
    if (ce == cb) {
        warn_line(warn, user, j->label_line, "has no text after the label and is skipped", j->label, j->label_n);
        return 0;
    }
    return (j->res.n && sb_put(&j->res, "\n", 1)) || sb_put(&j->res, "Speaker ", 8) ||
           sb_put(&j->res, j->spk, j->spk_n) || sb_put(&j->res, ": ", 2) || sb_put(&j->res, j->cur.p + cb, ce - cb);
}

vocis_status vx_vv_script_join(const char *text, size_t len, vx_vv_warn_fn warn, void *warn_user, char **out,
                               int *n_labels, vx_err *err) {
    *out = NULL;
    *n_labels = 0;
    VX_TRY(check_utf8(text, len, "script", err));
    join_state j = {0};
    int oom = sb_put(&j.res, "", 0) || sb_put(&j.cur, "", 0);
    int lineno = 0, pre_first = 0, pre_last = 0; /* text lines before the first label */
    const char *pre_text = NULL;
    size_t pre_n = 0;
    for (size_t pos = 0; pos <= len && !oom;) {
        const char *nl = memchr(text + pos, '\n', len - pos);
        size_t end = nl ? (size_t)(nl - text) : len;
        lineno++;
        size_t b, e;
        py_strip(text + pos, end - pos, &b, &e);
        const char *ln = text + pos + b;
        size_t ll = e - b;
        speaker_match m;
        if (ll == 0) {
            /* blank line: skipped */
        } else if (match_speaker(ln, ll, &m)) {
            if (!j.spk && pre_first) {
                char what[96];
                if (pre_last > pre_first)
                    snprintf(what, sizeof what, "(to %d) come before the first 'Speaker N:' line and are skipped",
                             pre_last);
                else
                    snprintf(what, sizeof what, "comes before the first 'Speaker N:' line and is skipped");
                warn_line(warn, warn_user, pre_first, what, pre_text, pre_n);
            }
            oom |= join_flush(&j, warn, warn_user);
            (*n_labels)++;
            j.spk = ln + m.dig_b;
            j.spk_n = m.dig_e - m.dig_b;
            j.label = ln, j.label_n = ll, j.label_line = lineno;
            j.cur.n = 0;
            oom |= sb_put(&j.cur, ln + m.rest_b, m.rest_e - m.rest_b);
        } else if (label_like(ln, ll, 0)) {
            warn_line(warn, warn_user, lineno,
                      "is not a 'Speaker N:' label (write e.g. 'Speaker 1: Hello', a space before the number) and "
                      "is skipped",
                      ln, ll);
        } else if (j.spk) { /* a continuation: joins the current turn, as upstream's demo does */
            if (j.cur.n) oom |= sb_put(&j.cur, " ", 1);
            oom |= sb_put(&j.cur, ln, ll);
        } else {
            if (!pre_first) pre_first = lineno, pre_text = ln, pre_n = ll;
            pre_last = lineno;
        }
        if (!nl) break;
        pos = end + 1;
    }
    if (!oom) oom |= join_flush(&j, warn, warn_user);
    free(j.cur.p);
    sbuf res = j.res;
    if (oom) {
        free(res.p);
        return vx_fail(err, VOCIS_E_NOMEM, "script: out of memory");
    }
    /* full_script.replace("\u2019", "'"): U+2019 is E2 80 99 in UTF-8 */
    size_t w = 0;
    for (size_t r = 0; r < res.n;) {
        if (r + 2 < res.n && (unsigned char)res.p[r] == 0xE2 && (unsigned char)res.p[r + 1] == 0x80 &&
            (unsigned char)res.p[r + 2] == 0x99) {
            res.p[w++] = '\'';
            r += 3;
        } else {
            res.p[w++] = res.p[r++];
        }
    }
    res.p[w] = '\0';
    *out = res.p;
    return VOCIS_OK;
}

/* ---- processor ----------------------------------------------------------------- */

static vocis_status special_id(const vx_tokenizer *tok, const char *name, int required, int32_t *out, vx_err *err) {
    *out = vx_tokenizer_token_id(tok, name);
    if (*out < 0 && required)
        return vx_fail(err, VOCIS_E_FORMAT, "tokenizer: special token '%s' is missing from the vocabulary", name);
    return VOCIS_OK;
}

vocis_status vx_vv_processor_init(vx_vv_processor *p, const vx_tokenizer *tok, const vx_vv_config *c, vx_err *err) {
    memset(p, 0, sizeof *p);
    p->tok = tok;
    VX_TRY(special_id(tok, "<|vision_start|>", 1, &p->speech_start_id, err));
    VX_TRY(special_id(tok, "<|vision_end|>", 1, &p->speech_end_id, err));
    VX_TRY(special_id(tok, "<|vision_pad|>", 1, &p->speech_diffusion_id, err));
    VX_TRY(special_id(tok, "<|endoftext|>", 1, &p->eos_id, err));
    VX_TRY(special_id(tok, "<|image_pad|>", 0, &p->pad_id, err));
    int32_t ntok = vx_tokenizer_size(tok);
    if (ntok > c->vocab_size)
        return vx_fail(err, VOCIS_E_FORMAT, "tokenizer has %d ids but %s: decoder_config.vocab_size is %d", (int)ntok,
                       c->path, c->vocab_size);
    p->compress_ratio = c->pp.speech_tok_compress_ratio;
    p->db_normalize = c->pp.db_normalize;
    p->target_dB_FS = c->pp.target_dB_FS;
    p->eps = c->pp.eps;
    p->sampling_rate = c->pp.sampling_rate;
    p->max_positions = c->max_position_embeddings;
    return VOCIS_OK;
}

typedef struct {
    int32_t *ids;
    uint8_t *mask;
    size_t n, cap;
} seq;

static vocis_status seq_reserve(seq *s, size_t more, vx_err *err) {
    if (s->n + more <= s->cap) return VOCIS_OK;
    size_t nc = s->cap ? s->cap : 256;
    while (nc < s->n + more)
        nc *= 2;
    int32_t *ids = realloc(s->ids, nc * sizeof *ids);
    if (ids) s->ids = ids;
    uint8_t *mask = ids ? realloc(s->mask, nc) : NULL;
    if (mask) s->mask = mask;
    if (!ids || !mask) return vx_fail(err, VOCIS_E_NOMEM, "processor: out of memory for %zu tokens", nc);
    s->cap = nc;
    return VOCIS_OK;
}

static vocis_status seq_ids(seq *s, int32_t id, uint8_t m, size_t count, vx_err *err) {
    VX_TRY(seq_reserve(s, count, err));
    for (size_t i = 0; i < count; i++) {
        s->ids[s->n] = id;
        s->mask[s->n++] = m;
    }
    return VOCIS_OK;
}

/* One fragment, tokenised on its own. */
static vocis_status seq_text(seq *s, const vx_tokenizer *t, const char *text, vx_err *err) {
    int32_t *ids = NULL;
    size_t n = 0;
    VX_TRY(vx_tokenizer_encode(t, text, strlen(text), &ids, &n, err));
    vocis_status st = seq_reserve(s, n, err);
    if (st == VOCIS_OK) {
        memcpy(s->ids + s->n, ids, n * sizeof *ids);
        memset(s->mask + s->n, 0, n);
        s->n += n;
    }
    free(ids);
    return st;
}

void vx_vv_normalize_voice(float *x, int64_t n, float target_dB_FS, float eps) {
    if (n <= 0) return;
    /* numpy on float32 audio: rms is a float32, the scalar a float64 that
     * multiplies the float32 array in float32 */
    double ss = 0;
    for (int64_t i = 0; i < n; i++)
        ss += (double)x[i] * (double)x[i];
    float rms = sqrtf((float)(ss / (double)n));
    double scalar = pow(10.0, (double)target_dB_FS / 20.0) / ((double)rms + (double)eps);
    float fs = (float)scalar;
    float mx = 0;
    for (int64_t i = 0; i < n; i++) {
        x[i] *= fs;
        float a = fabsf(x[i]);
        if (a > mx) mx = a;
    }
    if (mx > 1.0f) {
        float d = (float)((double)mx + (double)eps);
        for (int64_t i = 0; i < n; i++)
            x[i] /= d;
    }
}

void vx_vv_inputs_free(vx_vv_inputs *in) {
    if (!in) return;
    free(in->input_ids);
    free(in->speech_input_mask);
    free(in->speech_tensors);
    free(in->speech_masks);
    free(in->voice_samples);
    free(in->voice_frames);
    memset(in, 0, sizeof *in);
}

static const char SYSTEM_PROMPT[] = " Transform the text provided by various speakers into speech output, utilizing "
                                    "the distinct voice of each respective speaker.\n";

/* The prompt's tokens for s with its first *V voices (*V: min(n_voices, speakers)); line_tokens
 * (may be NULL) gets each script line's count. */
static vocis_status build_prompt(const vx_vv_processor *p, const vx_vv_script *s, const vx_vv_voice *voices,
                                 int n_voices, seq *q, int *V_out, int64_t *line_tokens, vx_err *err) {
    if (!s || s->n_lines <= 0) return vx_fail(err, VOCIS_E_ARG, "script has no 'Speaker N:' lines");
    if (n_voices < 0 || (n_voices > 0 && !voices)) return vx_fail(err, VOCIS_E_ARG, "processor: invalid voice list");
    if (p->compress_ratio < 1)
        return vx_fail(err, VOCIS_E_ARG, "processor: invalid compress ratio %d", p->compress_ratio);
    if (n_voices > 0 && n_voices < s->n_speakers)
        return vx_fail(err, VOCIS_E_ARG,
                       "the script has %d speakers but only %d voice%s given (one voice per speaker, "
                       "in speaker order)",
                       s->n_speakers, n_voices, n_voices == 1 ? " was" : "s were");
    int V = n_voices < s->n_speakers ? n_voices : s->n_speakers;
    for (int i = 0; i < V; i++)
        if (voices[i].n <= 0 || !voices[i].samples) return vx_fail(err, VOCIS_E_ARG, "voice %d has no samples", i + 1);
    *V_out = V;

    vocis_status st = seq_text(q, p->tok, SYSTEM_PROMPT, err);
    char buf[64];
    if (st == VOCIS_OK && V > 0) {
        st = seq_text(q, p->tok, " Voice input:\n", err);
        for (int i = 0; i < V && st == VOCIS_OK; i++) {
            int64_t frames = (voices[i].n + p->compress_ratio - 1) / p->compress_ratio;
            snprintf(buf, sizeof buf, " Speaker %d:", i);
            st = seq_text(q, p->tok, buf, err);
            if (st == VOCIS_OK) st = seq_ids(q, p->speech_start_id, 0, 1, err);
            if (st == VOCIS_OK) st = seq_ids(q, p->speech_diffusion_id, 1, (size_t)frames, err);
            if (st == VOCIS_OK) st = seq_ids(q, p->speech_end_id, 0, 1, err);
            if (st == VOCIS_OK) st = seq_text(q, p->tok, "\n", err);
        }
    }
    if (st == VOCIS_OK) st = seq_text(q, p->tok, " Text input:\n", err);
    for (int i = 0; i < s->n_lines && st == VOCIS_OK; i++) {
        size_t tl = strlen(s->lines[i].text), before = q->n;
        char *frag = malloc(tl + 32);
        if (!frag) {
            st = vx_fail(err, VOCIS_E_NOMEM, "processor: out of memory");
            break;
        }
        snprintf(frag, tl + 32, " Speaker %d:%s\n", s->lines[i].speaker, s->lines[i].text);
        st = seq_text(q, p->tok, frag, err);
        free(frag);
        if (line_tokens) line_tokens[i] = (int64_t)(q->n - before);
    }
    if (st == VOCIS_OK) st = seq_text(q, p->tok, " Speech output:\n", err);
    if (st == VOCIS_OK) st = seq_ids(q, p->speech_start_id, 0, 1, err);
    return st;
}

vocis_status vx_vv_prompt_length(const vx_vv_processor *p, const vx_vv_script *s, const vx_vv_voice *voices,
                                 int n_voices, int64_t *fixed, int64_t *line_tokens, vx_err *err) {
    seq q = {0};
    int V;
    vocis_status st = build_prompt(p, s, voices, n_voices, &q, &V, line_tokens, err);
    if (st == VOCIS_OK) {
        *fixed = (int64_t)q.n;
        for (int i = 0; i < s->n_lines; i++) *fixed -= line_tokens[i];
    }
    free(q.ids);
    free(q.mask);
    return st;
}

vocis_status vx_vv_process(const vx_vv_processor *p, const vx_vv_script *s, const vx_vv_voice *voices, int n_voices,
                           vx_vv_inputs *out, vx_err *err) {
    memset(out, 0, sizeof *out);
    seq q = {0};
    int V = 0;
    vocis_status st = build_prompt(p, s, voices, n_voices, &q, &V, NULL, err);
    if (st == VOCIS_OK && p->max_positions > 0 && (int64_t)q.n > p->max_positions)
        st = vx_fail(err, VOCIS_E_ARG,
                     "the prompt is %zu tokens, more than the model's max_position_embeddings %lld "
                     "(shorten the script or the voice samples)",
                     q.n, (long long)p->max_positions);
    if (st != VOCIS_OK) {
        free(q.ids);
        free(q.mask);
        return st;
    }
    out->n_speakers = s->n_speakers;
    out->n_voices = V;
    out->n_tokens = (int64_t)q.n;
    out->input_ids = q.ids;
    out->speech_input_mask = q.mask;
    if (V == 0) return VOCIS_OK;

    int64_t maxlen = 0;
    for (int i = 0; i < V; i++)
        if (voices[i].n > maxlen) maxlen = voices[i].n;
    int64_t F = (maxlen + p->compress_ratio - 1) / p->compress_ratio;
    out->max_samples = maxlen;
    out->n_frames = (int)F;
    out->speech_tensors = calloc((size_t)V * (size_t)maxlen, sizeof(float));
    out->speech_masks = calloc((size_t)V * (size_t)F, 1);
    out->voice_samples = calloc((size_t)V, sizeof(int64_t));
    out->voice_frames = calloc((size_t)V, sizeof(int));
    if (!out->speech_tensors || !out->speech_masks || !out->voice_samples || !out->voice_frames) {
        vx_vv_inputs_free(out);
        return vx_fail(err, VOCIS_E_NOMEM, "processor: out of memory for %d voices of %lld samples", V,
                       (long long)maxlen);
    }
    for (int i = 0; i < V; i++) {
        float *row = out->speech_tensors + (size_t)i * (size_t)maxlen;
        memcpy(row, voices[i].samples, (size_t)voices[i].n * sizeof(float));
        if (p->db_normalize) vx_vv_normalize_voice(row, voices[i].n, p->target_dB_FS, p->eps);
        int64_t fr = (voices[i].n + p->compress_ratio - 1) / p->compress_ratio;
        out->voice_samples[i] = voices[i].n;
        out->voice_frames[i] = (int)fr;
        memset(out->speech_masks + (size_t)i * (size_t)F, 1, (size_t)fr);
    }
    return VOCIS_OK;
}
