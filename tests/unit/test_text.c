/* Text front ends: Chatterbox punc_norm + EnTokenizer against the golden
 * file, the Qwen2-style byte-level BPE of the VibeVoice tiny model against
 * the golden processor ids, and tokenizer.json features on crafted files.
 *
 * Expected ids not taken from a golden file were produced by Hugging Face
 * tokenizers 0.23.2 (the Rust core, through its Node.js binding
 * `tokenizers`) with Tokenizer.fromFile(...).encode(text).getIds(); the
 * punc_norm expectations by the upstream Python function (Python 3.11). */
#define _GNU_SOURCE
#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "io/jsonfile.h"
#include "testlib.h"
#include "text/chatterbox_text.h"
#include "text/tokenizer.h"
#include "text/unicode.h"

typedef struct {
    const char *text;
    size_t len;
    size_t n;
    int32_t ids[40];
} enc_case;
#define E(s, n, ...) {s, sizeof(s) - 1, n, __VA_ARGS__}

static const enc_case cb_cases[] = {
    E("Hello[SPACE]world", 4, {348, 2, 225, 157}),
    E("[START]hi[STOP]", 4, {255, 75, 76, 0}),
    E("[SPACE][SPACE]x", 3, {2, 2, 91}),
    E("[START", 6, {65, 57, 58, 39, 56, 58}),
    E("[[SPACE]]", 3, {65, 2, 66}),
    E("a_b c-d", 6, {68, 67, 69, 70, 19, 71}),
    E("x\xc2\xb2y \xc2\xbd \xe2\x92\xb6" "b \xe2\x85\xb7x", 8, {91, 1, 92, 1, 1, 69, 1, 91}),
    E("e\xcc\x81 \xc3\xa9", 3, {72, 1, 100}),
    E("\xf0\x9f\x91\xa8\xe2\x80\x8d\xf0\x9f\x91\xa9\xe2\x80\x8d\xf0\x9f\x91\xa7", 5, {1, 1, 1, 1, 1}),
    E("I'M it's", 6, {47, 13, 51, 139, 13, 86}),
    E("12345", 5, {23, 24, 25, 26, 27}),
    E("\xe4\xbd\xa0\xe5\xa5\xbd\xef\xbc\x8c\xe4\xb8\x96\xe7\x95\x8c", 5, {1, 1, 1, 1, 1}),
    E("tab\tand\nnewline", 6, {87, 195, 126, 216, 79, 183}),
    E("a\xc2\xa0" "b\xe2\x80\x83" "c", 3, {68, 69, 70}),
    E("", 0, {0}),
    E("   ", 0, {0}),
    E("The quick brown fox", 4, {153, 298, 471, 594}),
    E("supercalifragilisticexpialidocious", 21, {144, 83, 119, 70, 130, 76, 584, 159, 135, 76, 123, 147, 72, 91, 83, 76, 130, 76, 162, 250, 294}),
    E("Chatterbox.", 8, {41, 75, 129, 87, 119, 451, 91, 20}),
    E("[UNK][PAD][SEP][CLS][MASK]", 5, {1, 3, 4, 5, 6}),
    E("don't STOP (now)...", 15, {71, 125, 13, 87, 57, 58, 53, 54, 14, 214, 90, 15, 20, 20, 20}),
    E("a\xe2\x80\x8b" "b a\xe2\x80\x8c" "b", 6, {68, 1, 69, 68, 1, 69}),
};
static const enc_case vv_cases[] = {
    E("\xe4\xbd\xa0\xe5\xa5\xbd\xef\xbc\x8c\xe4\xb8\x96\xe7\x95\x8c\xef\xbc\x81", 18, {160, 121, 254, 161, 98, 121, 171, 120, 234, 160, 116, 244, 163, 243, 234, 171, 120, 223}),
    E("\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e\xe3\x81\xae\xe3\x83\x86\xe3\x82\xad\xe3\x82\xb9\xe3\x83\x88", 24, {162, 245, 98, 162, 250, 105, 164, 103, 252, 159, 223, 106, 159, 225, 228, 159, 224, 255, 159, 224, 117, 159, 225, 230}),
    E("\xf0\x9f\x91\xa8\xe2\x80\x8d\xf0\x9f\x91\xa9\xe2\x80\x8d\xf0\x9f\x91\xa7 family", 24, {172, 253, 239, 101, 158, 222, 235, 172, 253, 239, 102, 158, 222, 235, 172, 253, 239, 100, 220, 69, 64, 76, 373, 88}),
    E("\xf0\x9f\x91\x8d\xf0\x9f\x8f\xbd", 8, {172, 253, 239, 235, 172, 253, 237, 121}),
    E("e\xcc\x81", 2, {127, 102}),
    E("\xc3\xa9", 2, {127, 102}),
    E("A\xcc\x8angstro\xcc\x88m \xc3\x85ngstr\xc3\xb6m", 21, {127, 227, 77, 70, 82, 83, 81, 127, 114, 76, 220, 127, 227, 77, 70, 82, 83, 81, 127, 114, 76}),
    E("\xd0\x9f\xd1\x80\xd0\xb8\xd0\xb2\xd0\xb5\xd1\x82 \xd0\xbc\xd0\xb8\xd1\x80", 19, {140, 253, 141, 222, 140, 116, 140, 110, 140, 113, 141, 224, 220, 140, 120, 140, 116, 141, 222}),
    E("\xd9\x85\xd8\xb1\xd8\xad\xd8\xa8\xd8\xa7 \xd8\xa8\xd8\xa7\xd9\x84\xd8\xb9\xd8\xa7\xd9\x84\xd9\x85", 25, {149, 227, 148, 109, 148, 255, 148, 101, 148, 100, 220, 148, 101, 148, 100, 149, 226, 148, 117, 148, 100, 149, 226, 149, 227}),
    E("a   b\n\n c", 7, {64, 220, 220, 285, 265, 220, 66}),
    E("12345", 5, {16, 17, 18, 19, 20}),
    E("I'M YOU'RE we'LL", 14, {40, 6, 44, 220, 56, 46, 52, 6, 49, 36, 436, 6, 43, 43}),
    E("it's 'tis", 6, {374, 328, 220, 6, 83, 280}),
    E("  leading and trailing  ", 16, {220, 220, 75, 257, 67, 260, 70, 288, 256, 81, 64, 373, 260, 70, 220, 220}),
    E("\n\n\n", 2, {265, 198}),
    E("tab\tsep", 7, {83, 64, 65, 197, 82, 68, 79}),
    E("x\xc2\x85y", 4, {87, 126, 227, 88}),
    E("<|endoftext|><|endoftext|>", 2, {438, 438}),
    E("<|vision_start|", 13, {27, 91, 85, 280, 72, 78, 77, 62, 82, 83, 276, 83, 91}),
    E("a<|im_start|>b", 3, {64, 439, 65}),
    E("<tool_call>x</tool_call>", 3, {452, 87, 453}),
    E("Hello, world! 3.14 $100", 17, {293, 11, 270, 282, 75, 67, 0, 220, 18, 13, 16, 19, 220, 3, 16, 15, 15}),
    E("\xc5\xbf test it'\xc5\xbf", 9, {129, 123, 256, 365, 83, 409, 6, 129, 123}),
    E("\xc2\xa0\xc2\xa0x", 5, {126, 254, 126, 254, 87}),
    E("", 0, {0}),
    E(" ", 1, {220}),
    E("a\x0d\nb", 4, {64, 201, 198, 65}),
    E("x!!! ?? ...", 11, {87, 0, 0, 0, 220, 30, 30, 220, 13, 13, 13}),
    E("\xe0\xa4\x95\xe0\xa5\x8d\xe0\xa4\xb7\xe0\xa4\xbf", 12, {156, 97, 243, 156, 98, 235, 156, 97, 115, 156, 97, 123}),
    E("\xe1\x84\x80\xe1\x85\xa1\xe1\x86\xa8 \xea\xb0\x81", 7, {166, 108, 223, 220, 166, 108, 223}),
    E("Speaker 1: caf\xc3\xa9\xe2\x80\x99s", 14, {271, 220, 16, 25, 220, 66, 64, 69, 127, 102, 158, 222, 247, 82}),
};
static const enc_case ps_cases[] = {
    E("hello world", 2, {60, 66}), /* ["hello</w>","world</w>"] */
    E("the worlds", 4, {62, 65, 14, 44}), /* ["the</w>","worl","##d","##s</w>"] */
    E("hellx", 2, {59, 0}), /* ["hell","[UNK]"] */
    E("hello the", 2, {60, 62}), /* ["hello</w>","the</w>"] */
    E("qq zz hello", 3, {0, 0, 60}), /* ["[UNK]","[UNK]","hello</w>"] */
    E("a", 1, {3}), /* ["a</w>"] */
    E("xyz", 1, {0}), /* ["[UNK]"] */
};
static const enc_case bf_cases[] = {
    E("abc", 1, {263}), /* ["abc"] */
    E("abc\xc3\xa9", 2, {263, 260}), /* ["abc","é"] */
    E("e\xcc\x81x", 2, {260, 121}), /* ["é","<0x78>"] */
    E("\xc3\xbf!", 3, {196, 192, 34}), /* ["<0xC3>","<0xBF>","<0x21>"] */
    E("ab z\xe4\xb8\x96", 6, {262, 261, 123, 229, 185, 151}), /* ["ab"," ","<0x7A>","<0xE4>","<0xB8>","<0x96>"] */
    E("a\x00" "b", 3, {257, 1, 258}), /* ["a","<0x00>","b"] */
};
static const enc_case ga_cases[] = {
    E("hi world", 2, {257, 264}), /* ["Ġhi","Ġworld"] */
    E("hi <mask> there", 8, {257, 267, 32, 116, 104, 101, 114, 101}), /* ["Ġhi"," <mask>","Ġ","t","h","e","r","e"] */
    E("x   <mask>y", 5, {32, 120, 267, 32, 121}), /* ["Ġ","x","   <mask>","Ġ","y"] */
    E("a<eos>   b", 5, {32, 97, 268, 32, 98}), /* ["Ġ","a","<eos>   ","Ġ","b"] */
    E("word words aword word!", 13, {269, 262, 100, 115, 32, 97, 119, 261, 100, 32, 269, 32, 33}), /* ["word","Ġwor","d","s","Ġ","a","w","or","d","Ġ","word","Ġ","!"] */
    E("\xc3\x85ngstr\xc3\xb6m", 1, {270}), /* ["Ångström"] */
    E("A\xcc\x8angstro\xcc\x88m x", 3, {270, 32, 120}), /* ["Ångström","Ġ","x"] */
    E("hi's", 2, {257, 265}), /* ["Ġhi","'s"] */
    E("hi  there", 8, {257, 32, 32, 116, 104, 101, 114, 101}), /* ["Ġhi","Ġ","Ġ","t","h","e","r","e"] */
};
static const enc_case si_cases[] = {
    E("ab-cd, ef!! 12", 8, {39, 37, 3, 4, 5, 6, 28, 29}), /* ["ab","-","c","d","e","f","1","2"] */
    E("x--y", 4, {24, 37, 37, 25}), /* ["x","-","-","y"] */
    E("  ", 0, {0}), /* [] */
    E("A b", 1, {2}), /* ["b"] */
};

typedef struct {
    const char *in, *out;
} pn_case;

static const pn_case pn_cases[] = {
    {"", "You need to add some text for me to talk."},
    {" ", "."},
    {"a... b", "A,  b."},
    {"a \xe2\x80\x94 b", "A - b."},
    {"\xc3\x9ftra\xc3\x9f" "e", "SStra\xc3\x9f" "e."},
    {"\xc7\x86" "emal", "\xc7\x84" "emal."},
    {"\xc2\xaa" "b", "\xc2\xaa" "b."},
    {"\xef\xac\x81ne", "FIne."},
    {"\tabc", "abc."},
    {"x\xc2\xa0y\xe2\x80\x83z\xe3\x80\x80w", "X y z w."},
    {"a\x1c" "b", "A b."},
    {"a\xe2\x80\x8b" "b", "A\xe2\x80\x8b" "b."},
    {"Hello;", "Hello,"},
    {"Really?!", "Really?!"},
    {"end -", "End -"},
    {"x:y", "X,y."},
    {"\xe2\x80\x9cquote\xe2\x80\x9d", "\"quote\"."},
    {"....", ", ."},
    {"\xc3\xa9t\xc3\xa9", "\xc3\x89t\xc3\xa9."},
    {"\xe1\xbe\x80 x", "\xe1\xbc\x88\xce\x99 x."},
    {"\xc5\x89x", "\xca\xbcNx."},
    {"\xe2\x93\x90" "bc", "\xe2\x92\xb6" "bc."},
    {"\xca\xb0x", "\xca\xb0x."},
    {"a - b - c", "A, b, c."},
    {"a  ,b", "A,b."},
    {"wait\xe2\x80\xa6", "Wait,"},
    {"3 \xe2\x80\x93 4", "3 - 4."},
    {" lead", "lead."},
    {"trail   \n", "Trail."},
    {"\xc4\xb0x", "\xc4\xb0x."},
    {"A", "A."},
    {"?", "?"},
};

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static vx_tokenizer *load(const char *rel) {
    vx_err err;
    vx_err_clear(&err);
    vx_tokenizer *t = NULL;
    vocis_status st = vx_tokenizer_load(tl_path(rel), &t, &err);
    CHECK_MSG(st == VOCIS_OK, "%s: %s", rel, err.msg);
    return t;
}

static int same_ids(const int32_t *a, size_t na, const int32_t *b, size_t nb) {
    if (na != nb) return 0;
    for (size_t i = 0; i < na; i++)
        if (a[i] != b[i]) return 0;
    return 1;
}

static void print_ids(const char *what, const int32_t *ids, size_t n) {
    fprintf(stderr, "  %s (%zu):", what, n);
    for (size_t i = 0; i < n; i++) fprintf(stderr, " %d", ids[i]);
    fputc('\n', stderr);
}

static void check_encode_ids(const vx_tokenizer *t, const char *text, size_t len, const int32_t *want, size_t nwant,
                             const char *name) {
    int32_t *ids = NULL;
    size_t n = 0;
    vx_err err;
    vx_err_clear(&err);
    vocis_status st = vx_tokenizer_encode(t, text, len, &ids, &n, &err);
    CHECK_MSG(st == VOCIS_OK, "%s: encode failed: %s", name, err.msg);
    if (st == VOCIS_OK && !same_ids(ids, n, want, nwant)) {
        CHECK_MSG(0, "%s: ids differ for \"%.*s\"", name, (int)len, text);
        print_ids("got", ids, n);
        print_ids("want", want, nwant);
    }
    free(ids);
}

static void check_cases(const vx_tokenizer *t, const enc_case *cases, size_t count, const char *name) {
    if (!t) return;
    for (size_t i = 0; i < count; i++) check_encode_ids(t, cases[i].text, cases[i].len, cases[i].ids, cases[i].n, name);
}
#define CHECK_CASES(t, arr) check_cases((t), (arr), sizeof(arr) / sizeof((arr)[0]), #arr)

static cJSON *read_json(const char *rel) {
    FILE *f = fopen(tl_path(rel), "rb");
    CHECK_MSG(f != NULL, "cannot open %s", rel);
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    size_t got = fread(buf, 1, (size_t)n, f);
    fclose(f);
    buf[got] = '\0';
    cJSON *j = cJSON_Parse(buf);
    free(buf);
    CHECK_MSG(j != NULL, "cannot parse %s", rel);
    return j;
}

/* int array of a cJSON array; *n set; malloc'd */
static int32_t *json_ids(const cJSON *arr, size_t *n) {
    *n = 0;
    if (!cJSON_IsArray(arr)) return NULL;
    size_t cnt = (size_t)cJSON_GetArraySize(arr);
    int32_t *ids = malloc((cnt + 1) * sizeof *ids);
    for (const cJSON *e = arr->child; e; e = e->next) ids[(*n)++] = (int32_t)e->valuedouble;
    return ids;
}

/* ---- Chatterbox ---- */

static void test_chatterbox_golden(void) {
    vx_tokenizer *t = load("chatterbox/ckpt/tokenizer.json");
    cJSON *root = read_json("chatterbox/golden/00_text.json");
    if (!t || !root) goto done;
    CHECK(vx_tokenizer_token_id(t, "[START]") == VX_CB_START_TEXT_TOKEN);
    CHECK(vx_tokenizer_token_id(t, "[STOP]") == VX_CB_STOP_TEXT_TOKEN);
    CHECK(vx_tokenizer_token_id(t, "[SPACE]") == 2);
    CHECK(vx_tokenizer_token_id(t, "[UNK]") == 1);
    CHECK(vx_tokenizer_token_id(t, "no such token") == -1);
    CHECK(vx_tokenizer_size(t) == 704);
    CHECK(vx_tokenizer_id_to_token(t, 255) && strcmp(vx_tokenizer_id_to_token(t, 255), "[START]") == 0);
    CHECK(vx_tokenizer_id_to_token(t, 704) == NULL && vx_tokenizer_id_to_token(t, -1) == NULL);
    const cJSON *cases = cJSON_GetObjectItem(root, "cases");
    int count = 0;
    for (const cJSON *c = cases ? cases->child : NULL; c; c = c->next, count++) {
        const char *in = cJSON_GetObjectItem(c, "input")->valuestring;
        const char *want_norm = cJSON_GetObjectItem(c, "normalized")->valuestring;
        vx_err err;
        vx_err_clear(&err);
        char *norm = NULL;
        CHECK_MSG(vx_cb_punc_norm(in, &norm, &err) == VOCIS_OK, "case %d: %s", count, err.msg);
        CHECK_MSG(norm && strcmp(norm, want_norm) == 0, "case %d: punc_norm(\"%s\") = \"%s\", want \"%s\"", count, in,
                  norm ? norm : "(null)", want_norm);
        free(norm);

        size_t nw, nt;
        int32_t *want = json_ids(cJSON_GetObjectItem(c, "token_ids"), &nw);
        int32_t *want_t3 = json_ids(cJSON_GetObjectItem(c, "t3_text_tokens"), &nt);
        int32_t *ids = NULL;
        size_t n = 0;
        CHECK_MSG(vx_cb_text_to_ids(t, in, &ids, &n, NULL, &err) == VOCIS_OK, "case %d: %s", count, err.msg);
        if (!same_ids(ids, n, want, nw)) {
            CHECK_MSG(0, "case %d: token ids differ for \"%s\"", count, in);
            print_ids("got", ids, n);
            print_ids("want", want, nw);
        }
        /* T3 text tokens: [START] + ids + [STOP] */
        CHECK_MSG(nt == n + 2 && want_t3[0] == VX_CB_START_TEXT_TOKEN && want_t3[nt - 1] == VX_CB_STOP_TEXT_TOKEN &&
                      same_ids(want_t3 + 1, nt - 2, ids, n),
                  "case %d: t3_text_tokens", count);
        /* the spaced form is what the tokenizer sees */
        const char *spaced = cJSON_GetObjectItem(c, "spaced")->valuestring;
        check_encode_ids(t, spaced, strlen(spaced), want, nw, "spaced");
        free(ids);
        free(want);
        free(want_t3);
    }
    CHECK(count == 12);
    CHECK_CASES(t, cb_cases);
done:
    cJSON_Delete(root);
    vx_tokenizer_free(t);
}

static void test_punc_norm(void) {
    for (size_t i = 0; i < sizeof pn_cases / sizeof pn_cases[0]; i++) {
        char *out = NULL;
        vx_err err;
        vx_err_clear(&err);
        CHECK_MSG(vx_cb_punc_norm(pn_cases[i].in, &out, &err) == VOCIS_OK, "%s", err.msg);
        CHECK_MSG(out && strcmp(out, pn_cases[i].out) == 0, "punc_norm(\"%s\") = \"%s\", want \"%s\"", pn_cases[i].in,
                  out ? out : "(null)", pn_cases[i].out);
        free(out);
    }
    char *out = NULL;
    vx_err err;
    vx_err_clear(&err);
    CHECK(vx_cb_punc_norm("ok \xff", &out, &err) == VOCIS_E_ARG && out == NULL);
    CHECK_MSG(strstr(err.msg, "byte offset 3") != NULL, "%s", err.msg);

    /* A replacement that shrinks the text below a buffer-size step, then the
     * final full stop (found by fuzz_tokenize: the stale capacity overflowed):
     * 128 bytes with "..." -> 127 bytes + ".". */
    for (size_t len = 120; len <= 136; len++) {
        char in[160], want[160];
        memset(in, 'a', len);
        memcpy(in + 40, "...", 3);
        in[len] = '\0';
        snprintf(want, sizeof want, "A%.39s, %s.", in + 1, in + 43);
        out = NULL;
        CHECK_MSG(vx_cb_punc_norm(in, &out, &err) == VOCIS_OK, "%s", err.msg);
        CHECK_MSG(out && strcmp(out, want) == 0, "punc_norm of %zu bytes with '...': \"%s\"", len,
                  out ? out : "(null)");
        free(out);
    }
}

/* ---- VibeVoice (Qwen2-style byte-level BPE) ---- */

static void check_json_segments(const vx_tokenizer *t, const cJSON *obj, const char *name) {
    /* every key is a text, every value its ids */
    for (const cJSON *e = obj ? obj->child : NULL; e; e = e->next) {
        size_t n;
        int32_t *want = json_ids(e, &n);
        check_encode_ids(t, e->string, strlen(e->string), want, n, name);
        free(want);
    }
}

static void test_vibevoice(void) {
    vx_tokenizer *t = load("vibevoice/model/tokenizer.json");
    cJSON *root = read_json("vibevoice/golden/01_processor.json");
    if (!t || !root) goto done;
    CHECK(vx_tokenizer_size(t) == 460);
    /* special ids by name: keys look like "speech_start_id(<|vision_start|>)" */
    const cJSON *sp = cJSON_GetObjectItem(root, "special_ids");
    int nspecial = 0;
    for (const cJSON *e = sp ? sp->child : NULL; e; e = e->next) {
        const char *open = strchr(e->string, '(');
        if (!open || !cJSON_IsNumber(e)) continue;
        char name[64];
        snprintf(name, sizeof name, "%s", open + 1);
        char *close = strrchr(name, ')');
        if (close) *close = '\0';
        CHECK_MSG(vx_tokenizer_token_id(t, name) == (int32_t)e->valuedouble, "special %s", name);
        nspecial++;
    }
    CHECK(nspecial == 5);

    const cJSON *seg = cJSON_GetObjectItem(root, "segments");
    static const struct {
        const char *key, *text;
    } fixed[] = {
        {"system_prompt", " Transform the text provided by various speakers into speech output, utilizing the "
                          "distinct voice of each respective speaker.\n"},
        {"voice_input_header", " Voice input:\n"},
        {"text_input_header", " Text input:\n"},
        {"speech_output_header", " Speech output:\n"},
        {"newline", "\n"},
    };
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) {
        size_t n;
        int32_t *want = json_ids(cJSON_GetObjectItem(seg, fixed[i].key), &n);
        CHECK_MSG(want && n > 0, "segments.%s missing", fixed[i].key);
        if (want) check_encode_ids(t, fixed[i].text, strlen(fixed[i].text), want, n, fixed[i].key);
        free(want);
    }
    check_json_segments(t, cJSON_GetObjectItem(seg, "speaker_prefixes"), "speaker_prefixes");
    check_json_segments(t, cJSON_GetObjectItem(seg, "script_lines"), "script_lines");
    check_json_segments(t, cJSON_GetObjectItem(root, "tokenizer_tests"), "tokenizer_tests");
    CHECK_CASES(t, vv_cases);

    /* invalid UTF-8 is an error naming the offset */
    static const struct {
        const char *s;
        size_t off;
    } bad[] = {
        {"ab\x80", 2},          /* lone continuation byte */
        {"\xc0\xaf", 0},        /* overlong '/' */
        {"x\xe0\x80\xaf", 1},   /* overlong, 3 bytes */
        {"xy\xed\xa0\x80", 2},  /* UTF-16 surrogate */
        {"\xf4\x90\x80\x80", 0}, /* above U+10FFFF */
        {"ok \xe2\x82", 3},     /* truncated */
        {"\xff", 0},
        {"caf\xc3\xa9\xc3", 5},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int32_t *ids = (int32_t *)1;
        size_t n = 7;
        vx_err err;
        vx_err_clear(&err);
        vocis_status st = vx_tokenizer_encode(t, bad[i].s, strlen(bad[i].s), &ids, &n, &err);
        char want[64];
        snprintf(want, sizeof want, "byte offset %zu", bad[i].off);
        CHECK_MSG(st == VOCIS_E_ARG && ids == NULL && n == 0 && strstr(err.msg, want), "bad utf-8 case %zu: %s", i,
                  err.msg);
    }
    /* encode of nothing: OK, no ids, a freeable pointer */
    int32_t *ids = NULL;
    size_t n = 1;
    CHECK(vx_tokenizer_encode(t, "", 0, &ids, &n, NULL) == VOCIS_OK && n == 0);
    free(ids);
done:
    cJSON_Delete(root);
    vx_tokenizer_free(t);
}

/* ---- tokenizer.json features on crafted files ---- */

static void test_crafted(void) {
    vx_tokenizer *t;
    t = load("text/prefix_suffix.json");
    CHECK_CASES(t, ps_cases);
    vx_tokenizer_free(t);
    t = load("text/byte_fallback.json");
    CHECK_CASES(t, bf_cases);
    vx_tokenizer_free(t);
    t = load("text/gpt2_added.json");
    CHECK_CASES(t, ga_cases);
    vx_tokenizer_free(t);
    t = load("text/split_invert.json");
    CHECK_CASES(t, si_cases);
    vx_tokenizer_free(t);
}

static char scratch_dir[256];

static const char *write_temp(const char *name, const char *text) {
    static char path[512];
    snprintf(path, sizeof path, "%s/%s", scratch_dir, name);
    FILE *f = fopen(path, "wb");
    CHECK_MSG(f != NULL, "cannot write %s", path);
    if (f) {
        fputs(text, f);
        fclose(f);
    }
    return path;
}

#define MODEL_OK "\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0, \"b\": 1, \"ab\": 2}, \"merges\": [\"a b\"]}"

static void expect_load_error(const char *name, const char *json, vocis_status code, const char *fragment) {
    const char *path = write_temp(name, json);
    vx_tokenizer *t = (vx_tokenizer *)1;
    vx_err err;
    vx_err_clear(&err);
    vocis_status st = vx_tokenizer_load(path, &t, &err);
    CHECK_MSG(st == code && t == NULL && strstr(err.msg, fragment) && !strchr(err.msg, '\n'),
              "%s: status %d, message \"%s\" (want %d with \"%s\")", name, (int)st, err.msg, (int)code, fragment);
    if (st == VOCIS_OK) vx_tokenizer_free(t);
}

static void test_load_errors(void) {
    vx_tokenizer *t = (vx_tokenizer *)1;
    vx_err err;
    vx_err_clear(&err);
    CHECK(vx_tokenizer_load(tl_path("no/such/tokenizer.json"), &t, &err) == VOCIS_E_IO && t == NULL);
    CHECK_MSG(strstr(err.msg, "no/such/tokenizer.json") != NULL, "%s", err.msg);

    expect_load_error("bad_json.json", "{\"model\": {", VOCIS_E_FORMAT, "invalid JSON");
    expect_load_error("not_object.json", "[1, 2]", VOCIS_E_FORMAT, "expected a JSON object");
    expect_load_error("wordpiece.json", "{\"model\": {\"type\": \"WordPiece\", \"vocab\": {}}}", VOCIS_E_UNSUPPORTED,
                      "model.type");
    expect_load_error("lowercase.json", "{\"normalizer\": {\"type\": \"Lowercase\"}, " MODEL_OK "}",
                      VOCIS_E_UNSUPPORTED, "normalizer.type");
    expect_load_error("metaspace.json", "{\"pre_tokenizer\": {\"type\": \"Metaspace\"}, " MODEL_OK "}",
                      VOCIS_E_UNSUPPORTED, "pre_tokenizer.type");
    expect_load_error("seq_digits.json",
                      "{\"pre_tokenizer\": {\"type\": \"Sequence\", \"pretokenizers\": [{\"type\": \"Whitespace\"}, "
                      "{\"type\": \"Digits\"}]}, " MODEL_OK "}",
                      VOCIS_E_UNSUPPORTED, "pre_tokenizer.pretokenizers[1].type");
    expect_load_error("merged_prev.json",
                      "{\"pre_tokenizer\": {\"type\": \"Split\", \"pattern\": {\"Regex\": \"a\"}, \"behavior\": "
                      "\"MergedWithPrevious\", \"invert\": false}, " MODEL_OK "}",
                      VOCIS_E_UNSUPPORTED, "pre_tokenizer.behavior");
    expect_load_error("bad_regex.json",
                      "{\"pre_tokenizer\": {\"type\": \"Split\", \"pattern\": {\"Regex\": \"(a\"}, \"behavior\": "
                      "\"Isolated\", \"invert\": false}, " MODEL_OK "}",
                      VOCIS_E_UNSUPPORTED, "cannot compile regex");
    expect_load_error("template.json", "{\"post_processor\": {\"type\": \"TemplateProcessing\"}, " MODEL_OK "}",
                      VOCIS_E_UNSUPPORTED, "post_processor.type");
    expect_load_error("truncation.json", "{\"truncation\": {\"max_length\": 8}, " MODEL_OK "}", VOCIS_E_UNSUPPORTED,
                      "truncation");
    expect_load_error("dropout.json",
                      "{\"model\": {\"type\": \"BPE\", \"dropout\": 0.1, \"vocab\": {\"a\": 0}, \"merges\": []}}",
                      VOCIS_E_UNSUPPORTED, "model.dropout");
    expect_load_error("merge_oov.json", "{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0}, \"merges\": [\"a c\"]}}",
                      VOCIS_E_FORMAT, "model.merges[0]: token 'c'");
    expect_load_error("merge_result_oov.json",
                      "{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0, \"b\": 1}, \"merges\": [[\"a\", \"b\"]]}}",
                      VOCIS_E_FORMAT, "merged token 'ab'");
    expect_load_error("merge_3.json",
                      "{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0, \"b\": 1}, \"merges\": [\"a b a\"]}}",
                      VOCIS_E_FORMAT, "model.merges[0]");
    expect_load_error("vocab_id.json", "{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": -3}, \"merges\": []}}",
                      VOCIS_E_FORMAT, "model.vocab 'a'");
    expect_load_error("no_model.json", "{\"normalizer\": null}", VOCIS_E_FORMAT, "model");
    expect_load_error("added_no_content.json", "{\"added_tokens\": [{\"id\": 5}], " MODEL_OK "}", VOCIS_E_FORMAT,
                      "added_tokens[0].content");

    /* resource bounds: a far-off id would size the id table by it (16 M entries for a 60-byte file);
     * nesting past cJSON's limit and a file over VX_JSON_MAX_BYTES fail before any parse */
    expect_load_error("sparse_id.json",
                      "{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0, \"b\": 16777215}, \"merges\": []}}",
                      VOCIS_E_FORMAT, "id 16777215 is implausible for 2 tokens");
    expect_load_error("sparse_added.json",
                      "{\"added_tokens\": [{\"id\": 9000000, \"content\": \"<x>\"}], " MODEL_OK "}",
                      VOCIS_E_FORMAT, "id 9000000 is implausible");
    {
        char deep[2 * 1200 + 16];
        int k = 0;
        for (int i = 0; i < 1200; i++) deep[k++] = '[';
        for (int i = 0; i < 1200; i++) deep[k++] = ']';
        deep[k] = '\0';
        expect_load_error("deep.json", deep, VOCIS_E_FORMAT, "invalid JSON");
        const char *big = write_temp("big.json", "{}");
        CHECK(truncate(big, (off_t)VX_JSON_MAX_BYTES + 1) == 0);
        vx_err_clear(&err);
        t = (vx_tokenizer *)1;
        CHECK(vx_tokenizer_load(big, &t, &err) == VOCIS_E_FORMAT && t == NULL);
        CHECK_MSG(strstr(err.msg, "big.json: file is 67108865 bytes, more than the 67108864 allowed"), "%s", err.msg);
    }

    /* a minimal valid file: no merges, no pre-tokenizer */
    const char *path = write_temp("minimal.json", "{" MODEL_OK "}");
    vx_err_clear(&err);
    CHECK_MSG(vx_tokenizer_load(path, &t, &err) == VOCIS_OK, "%s", err.msg);
    if (err.code == VOCIS_OK) {
        static const int32_t want[] = {2, 0, 2};
        check_encode_ids(t, "abaab", 5, want, 3, "minimal");
        vx_tokenizer_free(t);
    }
}

/* An added token whose normalised form differs from its text (found by
 * fuzz_tokenizer_json): lookups by its text used freed memory, and its id
 * must name the text as written (tokenizers' id_to_token). Also checks that
 * loading from memory gives the same tokenizer as loading the file. */
static void test_added_normalized(void) {
    static const char json[] =
        "{\"normalizer\": {\"type\": \"NFKC\"}, \"model\": {\"type\": \"BPE\", \"vocab\": {\"f\": 0, "
        "\"i\": 1, \"x\": 2, \"fi\": 3}, \"merges\": [\"f i\"]}, \"added_tokens\": [{\"id\": 4, \"content\": "
        "\"\xef\xac\x81x\", \"normalized\": true, \"special\": false}]}";
    const char *path = write_temp("added_normalized.json", json);
    for (int mem = 0; mem < 2; mem++) {
        vx_tokenizer *t = NULL;
        vx_err err;
        vx_err_clear(&err);
        vocis_status st = mem ? vx_tokenizer_load_mem(json, sizeof json - 1, NULL, &t, &err)
                              : vx_tokenizer_load(path, &t, &err);
        CHECK_MSG(st == VOCIS_OK, "%s", err.msg);
        if (st != VOCIS_OK) continue;
        CHECK(vx_tokenizer_token_id(t, "\xef\xac\x81x") == 4);
        CHECK(vx_tokenizer_token_id(t, "fix") == -1);
        const char *s = vx_tokenizer_id_to_token(t, 4);
        CHECK_MSG(s && strcmp(s, "\xef\xac\x81x") == 0, "id 4 is '%s'", s ? s : "(null)");
        static const int32_t want_lig[] = {4}, want_fix[] = {4, 3};
        check_encode_ids(t, "\xef\xac\x81x", 4, want_lig, 1, "ligature added token");
        check_encode_ids(t, "fixfi", 5, want_fix, 2, "normalised added token");
        vx_tokenizer_free(t);
    }
    vx_tokenizer *t = (vx_tokenizer *)1;
    vx_err err;
    vx_err_clear(&err);
    CHECK(vx_tokenizer_load_mem("{\"model\": ", 10, "mem.json", &t, &err) == VOCIS_E_FORMAT && t == NULL);
    CHECK_MSG(strstr(err.msg, "mem.json: invalid JSON") != NULL, "%s", err.msg);
}

/* ---- scale: a synthetic byte-level BPE of the Qwen2.5 size ---- */

static void put_json_str(FILE *f, const char *s) {
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') fputc('\\', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

static void test_scale(void) {
    /* bytes_to_unicode */
    char bc[256][4];
    int next = 0;
    for (int b = 0; b < 256; b++) {
        int keep = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
        int n = vx_utf8_put(keep ? (uint32_t)b : (uint32_t)(256 + next++), bc[b]);
        bc[b][n] = '\0';
    }
    /* vocab: 256 bytes + all 65,536 byte pairs + 85,851 triples = 151,643;
     * merges: 151,387, the pairs in a scrambled rank order, then the triples. */
    const char *path = write_temp("scale.json", "");
    FILE *f = fopen(path, "wb");
    if (!f) return;
    fputs("{\"normalizer\": {\"type\": \"NFC\"}, \"pre_tokenizer\": {\"type\": \"Sequence\", \"pretokenizers\": "
          "[{\"type\": \"Split\", \"pattern\": {\"Regex\": "
          "\"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\\\r\\\\n\\\\p{L}\\\\p{N}]?\\\\p{L}+|\\\\p{N}| "
          "?[^\\\\s\\\\p{L}\\\\p{N}]+[\\\\r\\\\n]*|\\\\s*[\\\\r\\\\n]+|\\\\s+(?!\\\\S)|\\\\s+\"}, \"behavior\": "
          "\"Isolated\", \"invert\": false}, {\"type\": \"ByteLevel\", \"add_prefix_space\": false, "
          "\"use_regex\": false}]}, \"added_tokens\": [{\"id\": 151643, \"content\": \"<|endoftext|>\", "
          "\"special\": true, \"normalized\": false}], \"model\": {\"type\": \"BPE\", \"vocab\": {",
          f);
    int id = 0;
    char tok[16];
    for (int b = 0; b < 256; b++) {
        if (b) fputs(", ", f);
        put_json_str(f, bc[b]);
        fprintf(f, ": %d", id++);
    }
    for (int p = 0; p < 65536; p++) {
        snprintf(tok, sizeof tok, "%s%s", bc[p >> 8], bc[p & 255]);
        fputs(", ", f);
        put_json_str(f, tok);
        fprintf(f, ": %d", id++);
    }
    const int n_tri = 151643 - 256 - 65536;
    for (int k = 0; k < n_tri; k++) {
        int p = k / 256 * 7 % 65536, c = k % 256; /* distinct (pair, byte) combinations */
        snprintf(tok, sizeof tok, "%s%s%s", bc[p >> 8], bc[p & 255], bc[c]);
        fputs(", ", f);
        put_json_str(f, tok);
        fprintf(f, ": %d", id++);
    }
    fputs("}, \"merges\": [", f);
    for (int r = 0; r < 65536; r++) {
        int p = (int)(((unsigned)r * 40503u) & 65535u); /* odd multiplier: a permutation */
        snprintf(tok, sizeof tok, "%s %s", bc[p >> 8], bc[p & 255]);
        if (r) fputs(", ", f);
        put_json_str(f, tok);
    }
    for (int k = 0; k < n_tri; k++) {
        int p = k / 256 * 7 % 65536, c = k % 256;
        fputs(", [", f);
        snprintf(tok, sizeof tok, "%s%s", bc[p >> 8], bc[p & 255]);
        put_json_str(f, tok);
        fputs(", ", f);
        put_json_str(f, bc[c]);
        fputc(']', f);
    }
    fputs("]}}", f);
    fclose(f);

    double t0 = now_s();
    vx_tokenizer *t = NULL;
    vx_err err;
    vx_err_clear(&err);
    CHECK_MSG(vx_tokenizer_load(path, &t, &err) == VOCIS_OK, "%s", err.msg);
    double t_load = now_s() - t0;
    fprintf(stderr, "scale: loaded 151,643 tokens + 151,387 merges in %.3f s\n", t_load);
    CHECK_MSG(t_load < 10.0, "loading took %.1f s", t_load);
    if (!t) return;
    CHECK(vx_tokenizer_size(t) == 151644);
    CHECK(vx_tokenizer_token_id(t, "<|endoftext|>") == 151643);

    /* ~100 KB of mixed text; the concatenated tokens must spell the
     * byte-level form of the (NFC, already composed) input. */
    static const char *const frags[] = {"Hello", " world", ", ", "it's", " 12345", "\n\n", "   ", "\xe4\xbd\xa0\xe5\xa5\xbd",
                                        "\xf0\x9f\x91\x8d\xf0\x9f\x8f\xbd", " caf\xc3\xa9", "\t", "<|endoftext|>", "!?"};
    size_t cap = 110000, len = 0;
    char *text = malloc(cap);
    unsigned s = 12345;
    while (len < 100000) {
        s = s * 1103515245u + 12345u;
        const char *fr = frags[(s >> 16) % (sizeof frags / sizeof frags[0])];
        size_t fl = strlen(fr);
        memcpy(text + len, fr, fl);
        len += fl;
    }
    int32_t *ids = NULL;
    size_t n = 0;
    t0 = now_s();
    CHECK_MSG(vx_tokenizer_encode(t, text, len, &ids, &n, &err) == VOCIS_OK, "%s", err.msg);
    fprintf(stderr, "scale: encoded %zu bytes into %zu ids in %.3f s\n", len, n, now_s() - t0);
    /* rebuild: byte-level map of the text with <|endoftext|> kept verbatim */
    char *want = malloc(len * 2 + 1), *got = malloc(len * 2 + 1);
    size_t wl = 0, gl = 0;
    for (size_t i = 0; i < len;) {
        if (strncmp(text + i, "<|endoftext|>", 13) == 0) {
            memcpy(want + wl, "<|endoftext|>", 13), wl += 13, i += 13;
            continue;
        }
        size_t bl = strlen(bc[(unsigned char)text[i]]);
        memcpy(want + wl, bc[(unsigned char)text[i]], bl), wl += bl, i++;
    }
    int ok = 1;
    for (size_t i = 0; i < n && ok; i++) {
        const char *tk = vx_tokenizer_id_to_token(t, ids[i]);
        size_t tl = tk ? strlen(tk) : 0;
        if (!tk || gl + tl > len * 2) ok = 0;
        else memcpy(got + gl, tk, tl), gl += tl;
    }
    CHECK_MSG(ok && gl == wl && memcmp(got, want, wl) == 0, "scale: tokens do not spell the input");
    CHECK(n < len); /* merges did happen */
    free(want);
    free(got);
    free(ids);
    free(text);
    vx_tokenizer_free(t);
    remove(path);
}

/* ---- long inputs through the Chatterbox front end ---- */

static void test_long_text(void) {
    vx_tokenizer *t = load("chatterbox/ckpt/tokenizer.json");
    if (!t) return;
    size_t len = 100000;
    char *text = malloc(len + 1);
    /* one 100k-character word, then 100k characters of short words */
    memset(text, 'a', len);
    text[len] = '\0';
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1)
            for (size_t i = 0; i < len; i++) text[i] = "hello world, this is long text. "[i % 32];
        int32_t *ids = NULL;
        size_t n = 0;
        vx_err err;
        vx_err_clear(&err);
        double t0 = now_s();
        CHECK_MSG(vx_cb_text_to_ids(t, text, &ids, &n, NULL, &err) == VOCIS_OK, "%s", err.msg);
        fprintf(stderr, "long text %d: %zu ids in %.3f s\n", pass, n, now_s() - t0);
        CHECK(n > 1000);
        int valid = 1;
        for (size_t i = 0; i < n; i++) valid &= ids[i] >= 0 && ids[i] < vx_tokenizer_size(t);
        CHECK(valid);
        free(ids);
    }
    free(text);
    vx_tokenizer_free(t);
}

/* Characters without a token are noted once each (first seen first, at most 8 kept); byte-level
 * vocabularies have none; blank text is only Python whitespace. */
static void test_unknown_chars(void) {
    vx_tokenizer *t = load("chatterbox/ckpt/tokenizer.json"), *bl = load("vibevoice/model/tokenizer.json");
    if (!t || !bl) return;
    vx_tok_unknown u = {{0}, 0};
    int32_t *ids = NULL;
    size_t n = 0;
    vx_err err = {0};
    const char *text = "a\xF0\x9F\x98\x80 b \xF0\x9F\x8E\x89\xF0\x9F\x98\x80\xE2\x80\x8B";
    CHECK(vx_tokenizer_encode_ex(t, text, strlen(text), &ids, &n, &u, &err) == VOCIS_OK);
    CHECK(u.n == 3 && u.cp[0] == 0x1F600 && u.cp[1] == 0x1F389 && u.cp[2] == 0x200B);
    char msg[300];
    vx_tok_unknown_message(t, &u, 1, msg, sizeof msg);
    CHECK_MSG(!strcmp(msg, "the tokenizer has no token for '\xF0\x9F\x8E\x89' (U+1F389), '\xE2\x80\x8B' (U+200B): "
                           "they are read as [UNK]"), "%s", msg);
    free(ids);
    const char *many = "\xCE\xB1\xCE\xB2\xCE\xB3\xCE\xB4\xCE\xB5\xCE\xB6\xCE\xB7\xCE\xB8\xCE\xB9\xCE\xBA";
    vx_tok_unknown v = {{0}, 0};
    CHECK(vx_tokenizer_encode_ex(t, many, strlen(many), &ids, &n, &v, &err) == VOCIS_OK);
    free(ids);
    vx_tok_unknown_message(t, &v, 0, msg, sizeof msg); /* the tiny vocabulary has no Greek: 8 of 10 named */
    CHECK_MSG(v.n == 10 && v.cp[7] == 0x3B8 && strstr(msg, "(U+03B8) and more: they are read as [UNK]"), "%s", msg);
    vx_tok_unknown w = {{0}, 0};
    CHECK(vx_tokenizer_encode_ex(bl, text, strlen(text), &ids, &n, &w, &err) == VOCIS_OK && w.n == 0);
    free(ids);
    CHECK(vx_utf8_blank("", 0) && vx_utf8_blank(" \t\n\xE3\x80\x80\xC2\xA0\x1C", 9) && !vx_utf8_blank(" .", 2) &&
          !vx_utf8_blank("\xE2\x80\x8B", 3) && !vx_utf8_blank("\xFF", 1));
    vx_tokenizer_free(t);
    vx_tokenizer_free(bl);
}

static void test_unicode_helpers(void) {
    uint32_t up[3];
    CHECK(vx_uc_py_upper(0xDF, up) == 2 && up[0] == 'S' && up[1] == 'S');
    CHECK(vx_uc_py_upper('a', up) == 1 && up[0] == 'A');
    CHECK(vx_uc_py_lower(0xDF) && vx_uc_py_lower(0xAA) && !vx_uc_py_lower('A') && !vx_uc_py_lower(0x01C5));
    CHECK(vx_uc_white_space(0x85) && vx_uc_white_space(0x3000) && !vx_uc_white_space(0x200B) &&
          !vx_uc_white_space(0x1C) && vx_uc_py_space(0x1C));
    CHECK(vx_uc_rust_word(0x200D) && vx_uc_rust_word(0x24B6) && vx_uc_rust_word(0x0301) && !vx_uc_rust_word(0xB2) &&
          !vx_uc_rust_word(0xB7) && vx_uc_rust_word('_'));
}

int main(int argc, char **argv) {
    tl_data_dir = argc > 1 ? argv[1] : "tests/data";
    const char *tmp = getenv("TMPDIR");
    snprintf(scratch_dir, sizeof scratch_dir, "%s/vocis_test_text_XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(scratch_dir)) {
        perror("mkdtemp");
        return 1;
    }
    test_unicode_helpers();
    test_unknown_chars();
    test_punc_norm();
    test_chatterbox_golden();
    test_vibevoice();
    test_crafted();
    test_load_errors();
    test_added_normalized();
    test_long_text();
    test_scale();
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", scratch_dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", scratch_dir);
    return tl_finish("test_text");
}
