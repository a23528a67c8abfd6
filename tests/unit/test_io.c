/* I/O parsers: safetensors (reader, writer, weight sets, bad input), the
 * torch.save zip + pickle subset, the Chatterbox conds loader, and a seeded
 * mutation test (every mutated file must load or fail cleanly; run under
 * ASan in the sanitizer build). argv[1] = tests/data. */
#include "io/pickle.h"
#include "io/safetensors.h"
#include "io/torchzip.h"
#include "models/chatterbox/conds.h"
#include "testlib.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char g_tmp[256];

static const char *tmp_path(const char *name) {
    static char buf[4][512];
    static int k = 0;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", g_tmp, name);
    return buf[k];
}

static uint8_t *read_all(const char *path, size_t *len) {
    FILE *fp = fopen(path, "rb");
    if (!fp) return NULL;
    fseek(fp, 0, SEEK_END);
    long n = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    uint8_t *b = malloc((size_t)n + 1);
    if (b && fread(b, 1, (size_t)n, fp) != (size_t)n) {
        free(b);
        b = NULL;
    }
    fclose(fp);
    *len = (size_t)n;
    return b;
}

static void write_all(const char *path, const void *buf, size_t len) {
    FILE *fp = fopen(path, "wb");
    if (!fp) return;
    fwrite(buf, 1, len, fp);
    fclose(fp);
}

/* CHECK that st failed with code (or any code when code == 0) and that the
 * message contains every given substring. */
static void expect_fail_(const char *file, int line, vocis_status st, const vx_err *e, vocis_status code,
                         const char *const *subs) {
    if (st == VOCIS_OK) {
        fprintf(stderr, "%s:%d: expected a failure, got OK\n", file, line);
        tl_failures++;
        return;
    }
    if (getenv("VOCIS_TEST_VERBOSE")) printf("  [%s] %s\n", vocis_status_name(st), e->msg);
    if (code && st != code) {
        fprintf(stderr, "%s:%d: expected status %s, got %s (%s)\n", file, line, vocis_status_name(code),
                vocis_status_name(st), e->msg);
        tl_failures++;
    }
    if (!e->msg[0] || strchr(e->msg, '\n')) {
        fprintf(stderr, "%s:%d: message empty or multi-line: '%s'\n", file, line, e->msg);
        tl_failures++;
    }
    for (; *subs; subs++)
        if (!strstr(e->msg, *subs)) {
            fprintf(stderr, "%s:%d: message lacks '%s': %s\n", file, line, *subs, e->msg);
            tl_failures++;
        }
}
#define EXPECT_FAIL(st, e, code, ...)                                                                            \
    expect_fail_(__FILE__, __LINE__, (st), (e), (code), (const char *const[]){__VA_ARGS__, NULL})

/* ------------------------------------------------------------------ byte builder */

typedef struct buf {
    uint8_t *p;
    size_t n, cap;
} buf;

static void b_put(buf *b, const void *src, size_t n) {
    if (b->n + n > b->cap) {
        size_t nc = b->cap ? b->cap : 256;
        while (nc < b->n + n) nc *= 2;
        b->p = realloc(b->p, nc);
        b->cap = nc;
    }
    if (n) memcpy(b->p + b->n, src, n);
    b->n += n;
}
static void b_u8(buf *b, unsigned v) {
    uint8_t x = (uint8_t)v;
    b_put(b, &x, 1);
}
static void b_le(buf *b, uint64_t v, int n) {
    for (int i = 0; i < n; i++) b_u8(b, (unsigned)(v >> (8 * i)) & 0xffu);
}
static void b_str(buf *b, const char *s) { b_put(b, s, strlen(s)); }

/* ---- pickle ---- */
static void pk_unicode(buf *b, const char *s) {
    b_u8(b, 'X');
    b_le(b, strlen(s), 4);
    b_str(b, s);
}
static void pk_int(buf *b, int64_t v) {
    if (v >= 0 && v < 256) {
        b_u8(b, 'K');
        b_le(b, (uint64_t)v, 1);
    } else if (v >= 0 && v < 65536) {
        b_u8(b, 'M');
        b_le(b, (uint64_t)v, 2);
    } else if (v >= INT32_MIN && v <= INT32_MAX) {
        b_u8(b, 'J');
        b_le(b, (uint64_t)v, 4);
    } else {
        b_u8(b, 0x8a);
        b_u8(b, 8);
        b_le(b, (uint64_t)v, 8);
    }
}
static void pk_global(buf *b, const char *mod, const char *name) {
    b_u8(b, 'c');
    b_str(b, mod);
    b_u8(b, '\n');
    b_str(b, name);
    b_u8(b, '\n');
}
/* _rebuild_tensor_v2(storage(cls, key, numel), offset, size, stride, False, OrderedDict()) */
static void pk_tensor(buf *b, const char *cls, const char *key, int64_t numel, int64_t offset, int nd,
                      const int64_t *size, const int64_t *stride) {
    pk_global(b, "torch._utils", "_rebuild_tensor_v2");
    b_u8(b, '(');
    b_u8(b, '(');
    pk_unicode(b, "storage");
    pk_global(b, "torch", cls);
    pk_unicode(b, key);
    pk_unicode(b, "cpu");
    pk_int(b, numel);
    b_u8(b, 't');
    b_u8(b, 'Q');
    pk_int(b, offset);
    b_u8(b, '(');
    for (int i = 0; i < nd; i++) pk_int(b, size[i]);
    b_u8(b, 't');
    b_u8(b, '(');
    for (int i = 0; i < nd; i++) pk_int(b, stride[i]);
    b_u8(b, 't');
    b_u8(b, 0x89);
    pk_global(b, "collections", "OrderedDict");
    b_u8(b, ')');
    b_u8(b, 'R');
    b_u8(b, 't');
    b_u8(b, 'R');
}
/* A contiguous tensor at offset 0 of a storage of storage_numel elements. */
static void pk_contig(buf *b, const char *cls, const char *key, int64_t storage_numel, int nd, const int64_t *size) {
    int64_t stride[4], numel = 1;
    for (int i = nd - 1; i >= 0; i--) {
        stride[i] = numel;
        numel *= size[i];
    }
    pk_tensor(b, cls, key, storage_numel, 0, nd, size, stride);
}

/* ---- zip ---- */
static uint32_t crc32_ref(const uint8_t *p, size_t n) {
    static uint32_t table[256];
    if (!table[1])
        for (uint32_t i = 0; i < 256; i++) {
            uint32_t c = i;
            for (int k = 0; k < 8; k++) c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1u)));
            table[i] = c;
        }
    uint32_t c = 0xffffffffu;
    for (size_t i = 0; i < n; i++) c = table[(c ^ p[i]) & 0xffu] ^ (c >> 8);
    return ~c;
}

typedef struct zent {
    const char *name;
    const void *data;
    size_t len;
    unsigned method; /* only recorded; data is written as given */
    int bad_crc;
} zent;

/* A zip the way torch.save lays it out: data aligned to 64 bytes (plus `skew`
 * bytes, to test misaligned storages), ZIP64 end records when zip64. */
static uint8_t *build_zip(const zent *e, int n, int zip64, size_t skew, size_t *len) {
    buf b = {0};
    uint64_t *lho = calloc((size_t)n, sizeof *lho);
    uint32_t *crc = calloc((size_t)n, sizeof *crc);
    for (int i = 0; i < n; i++) crc[i] = crc32_ref(e[i].data, e[i].len) ^ (e[i].bad_crc ? 1u : 0u);
    for (int i = 0; i < n; i++) {
        lho[i] = b.n;
        size_t nl = strlen(e[i].name);
        size_t pad = (64 - (b.n + 30 + nl + 4) % 64) % 64 + skew;
        b_le(&b, 0x04034b50u, 4);
        b_le(&b, 20, 2);
        b_le(&b, 0, 2);
        b_le(&b, e[i].method, 2);
        b_le(&b, 0, 4);
        b_le(&b, crc[i], 4);
        b_le(&b, e[i].len, 4);
        b_le(&b, e[i].len, 4);
        b_le(&b, nl, 2);
        b_le(&b, 4 + pad, 2);
        b_str(&b, e[i].name);
        b_le(&b, 0x4246, 2); /* "FB" padding record, as torch writes */
        b_le(&b, pad, 2);
        for (size_t k = 0; k < pad; k++) b_u8(&b, 'Z');
        b_put(&b, e[i].data, e[i].len);
    }
    uint64_t cd = b.n;
    for (int i = 0; i < n; i++) {
        size_t nl = strlen(e[i].name);
        b_le(&b, 0x02014b50u, 4);
        b_le(&b, 20, 2);
        b_le(&b, 20, 2);
        b_le(&b, 0, 2);
        b_le(&b, e[i].method, 2);
        b_le(&b, 0, 4);
        b_le(&b, crc[i], 4);
        b_le(&b, e[i].len, 4);
        b_le(&b, e[i].len, 4);
        b_le(&b, nl, 2);
        b_le(&b, zip64 ? 12 : 0, 2);
        b_le(&b, 0, 2);
        b_le(&b, 0, 2);
        b_le(&b, 0, 2);
        b_le(&b, 0, 4);
        b_le(&b, zip64 ? 0xffffffffu : lho[i], 4);
        b_str(&b, e[i].name);
        if (zip64) {
            b_le(&b, 1, 2);
            b_le(&b, 8, 2);
            b_le(&b, lho[i], 8);
        }
    }
    uint64_t cd_size = b.n - cd;
    if (zip64) {
        uint64_t z = b.n;
        b_le(&b, 0x06064b50u, 4);
        b_le(&b, 44, 8);
        b_le(&b, 45, 2);
        b_le(&b, 45, 2);
        b_le(&b, 0, 4);
        b_le(&b, 0, 4);
        b_le(&b, (uint64_t)n, 8);
        b_le(&b, (uint64_t)n, 8);
        b_le(&b, cd_size, 8);
        b_le(&b, cd, 8);
        b_le(&b, 0x07064b50u, 4);
        b_le(&b, 0, 4);
        b_le(&b, z, 8);
        b_le(&b, 1, 4);
    }
    b_le(&b, 0x06054b50u, 4);
    b_le(&b, 0, 2);
    b_le(&b, 0, 2);
    b_le(&b, zip64 ? 0xffff : (unsigned)n, 2);
    b_le(&b, zip64 ? 0xffff : (unsigned)n, 2);
    b_le(&b, zip64 ? 0xffffffffu : cd_size, 4);
    b_le(&b, zip64 ? 0xffffffffu : cd, 4);
    b_le(&b, 0, 2);
    free(lho);
    free(crc);
    *len = b.n;
    return b.p;
}

/* ------------------------------------------------------------------ conds.pt vs golden */

static void check_f32_exact(const vx_cb_f32 *a, const vx_st_file *g, const char *name) {
    const vx_tensor *t = vx_st_find(g, name);
    CHECK_MSG(t != NULL, "golden lacks %s", name);
    if (!t) return;
    CHECK_MSG(t->dtype == VX_F32 && t->ndim == a->ndim, "%s: dtype/rank", name);
    for (int i = 0; i < t->ndim && i < a->ndim; i++) CHECK_MSG(t->shape[i] == a->shape[i], "%s: dim %d", name, i);
    CHECK_MSG((int64_t)a->n == vx_numel(t) && memcmp(a->data, t->data, a->n * sizeof(float)) == 0,
              "%s: values differ", name);
}

static void check_i64_exact(const vx_cb_i64 *a, const vx_st_file *g, const char *name) {
    const vx_tensor *t = vx_st_find(g, name);
    CHECK_MSG(t != NULL, "golden lacks %s", name);
    if (!t) return;
    CHECK_MSG(t->dtype == VX_I64 && t->ndim == a->ndim, "%s: dtype/rank", name);
    for (int i = 0; i < t->ndim && i < a->ndim; i++) CHECK_MSG(t->shape[i] == a->shape[i], "%s: dim %d", name, i);
    CHECK_MSG((int64_t)a->n == vx_numel(t) && memcmp(a->data, t->data, a->n * sizeof(int64_t)) == 0,
              "%s: values differ", name);
}

static void check_conds_equal(const vx_cb_conds *a, const vx_cb_conds *b) {
#define SAME_ARR(f, T)                                                                                             \
    CHECK_MSG(a->f.n == b->f.n && a->f.ndim == b->f.ndim && memcmp(a->f.shape, b->f.shape, sizeof a->f.shape) == 0 && \
                  (a->f.n == 0 || memcmp(a->f.data, b->f.data, a->f.n * sizeof(T)) == 0),                         \
              "field %s differs", #f)
    SAME_ARR(speaker_emb, float);
    SAME_ARR(cond_prompt_speech_tokens, int64_t);
    SAME_ARR(emotion_adv, float);
    CHECK(a->has_gen == b->has_gen);
    if (a->has_gen && b->has_gen) {
        SAME_ARR(prompt_token, int64_t);
        SAME_ARR(prompt_feat, float);
        SAME_ARR(embedding, float);
        CHECK(a->prompt_token_len == b->prompt_token_len);
    }
#undef SAME_ARR
}

static void test_conds_pt(void) {
    vx_err e = {0};
    vx_cb_conds c;
    vocis_status st = vx_cb_conds_load_pt(tl_path("chatterbox/ckpt/conds.pt"), &c, &e);
    CHECK_MSG(st == VOCIS_OK, "%s", e.msg);
    if (st != VOCIS_OK) return;
    vx_st_file *g;
    st = vx_st_open(tl_path("chatterbox/golden/13_conds_pt.safetensors"), &g, &e);
    CHECK_MSG(st == VOCIS_OK, "%s", e.msg);
    if (st == VOCIS_OK) {
        check_f32_exact(&c.speaker_emb, g, "t3.speaker_emb");
        check_i64_exact(&c.cond_prompt_speech_tokens, g, "t3.cond_prompt_speech_tokens");
        check_f32_exact(&c.emotion_adv, g, "t3.emotion_adv");
        CHECK(c.has_gen);
        check_i64_exact(&c.prompt_token, g, "gen.prompt_token");
        check_f32_exact(&c.prompt_feat, g, "gen.prompt_feat");
        check_f32_exact(&c.embedding, g, "gen.embedding");
        const vx_tensor *tl = vx_st_find(g, "gen.prompt_token_len");
        CHECK(tl && tl->dtype == VX_I64 && c.prompt_token_len == ((const int64_t *)tl->data)[0]);

        /* The golden file itself loads as a conditioning file (t3./gen. prefixes). */
        vx_cb_conds c2;
        st = vx_cb_conds_load_safetensors(tl_path("chatterbox/golden/13_conds_pt.safetensors"), &c2, &e);
        CHECK_MSG(st == VOCIS_OK, "%s", e.msg);
        if (st == VOCIS_OK) check_conds_equal(&c, &c2);
        vx_cb_conds_free(&c2);
        vx_st_close(g);
    }

    /* Round trip through the safetensors writer. */
    const char *p = tmp_path("conds.safetensors");
    st = vx_cb_conds_save_safetensors(&c, p, NULL, &e);
    CHECK_MSG(st == VOCIS_OK, "%s", e.msg);
    vx_cb_conds c3;
    st = vx_cb_conds_load_safetensors(p, &c3, &e);
    CHECK_MSG(st == VOCIS_OK, "%s", e.msg);
    if (st == VOCIS_OK) check_conds_equal(&c, &c3);
    vx_cb_conds_free(&c3);

    /* A T3-only conditioning file. */
    st = vx_cb_conds_load_safetensors(tl_path("chatterbox/golden/06_t3_cond.safetensors"), &c3, &e);
    CHECK_MSG(st == VOCIS_OK, "%s", e.msg);
    CHECK(st != VOCIS_OK || (!c3.has_gen && c3.speaker_emb.n == 256 && c3.emotion_adv.n == 1 &&
                             c3.cond_prompt_speech_tokens.ndim == 2 && c3.prompt_feat.data == NULL));
    vx_cb_conds_free(&c3);

    /* The raw torch view: tensors are zero-copy views, None fields kept. */
    vx_torch_file *tf;
    st = vx_torch_open(tl_path("chatterbox/ckpt/conds.pt"), &tf, &e);
    CHECK_MSG(st == VOCIS_OK, "%s", e.msg);
    if (st == VOCIS_OK) {
        const vx_pk_value *t3 = vx_pk_dict_get(vx_torch_root(tf), "t3");
        CHECK(strcmp(vx_torch_prefix(tf), "conds/") == 0);
        CHECK(t3 && t3->type == VX_PK_DICT && t3->u.dict.n == 5);
        CHECK(vx_pk_is_none(vx_pk_dict_get(t3, "clap_emb")) && vx_pk_dict_get(t3, "clap_emb") != NULL);
        const vx_pk_value *emb = vx_pk_dict_get(vx_pk_dict_get(vx_torch_root(tf), "gen"), "embedding");
        CHECK(emb && emb->type == VX_PK_TENSOR && emb->u.tensor.requires_grad == 1 &&
              strcmp(emb->u.tensor.storage_key, "6") == 0);
        vx_torch_close(tf);
    }
    vx_cb_conds_free(&c);
}

/* Conds fields with the wrong dtype/shape/values, in safetensors and torch form. */
static void test_conds_bad(void) {
    vx_err e = {0};
    vx_cb_conds c;
    float spk[256] = {0}, emo = 0.5f, feat[4 * 80] = {0}, xv[192] = {0};
    uint16_t spk16[256];
    int32_t tok32[3] = {1, 2, 6560};
    int64_t tok[3] = {1, 2, 3};
    for (int i = 0; i < 256; i++) {
        spk[i] = (float)i / 256.0f;
        spk16[i] = vx_f32_to_f16(spk[i]);
    }
    const char *p = tmp_path("c.safetensors");

    /* f16 embedding + i32 tokens are converted. */
    vx_st_writer *w = vx_st_writer_new();
    vx_st_writer_add(w, "speaker_emb", VX_F16, 2, (int64_t[]){1, 256}, spk16, &e);
    vx_st_writer_add(w, "cond_prompt_speech_tokens", VX_I32, 2, (int64_t[]){1, 3}, tok32, &e);
    vx_st_writer_add(w, "emotion_adv", VX_F32, 3, (int64_t[]){1, 1, 1}, &emo, &e);
    CHECK(vx_st_writer_save(w, p, &e) == VOCIS_OK);
    vx_st_writer_free(w);
    vocis_status st = vx_cb_conds_load_safetensors(p, &c, &e);
    CHECK_MSG(st == VOCIS_OK, "%s", e.msg);
    if (st == VOCIS_OK) {
        CHECK(c.speaker_emb.data[255] == spk[255] && c.cond_prompt_speech_tokens.data[2] == 6560 && !c.has_gen);
        CHECK(c.emotion_adv.data[0] == 0.5f);
    }
    vx_cb_conds_free(&c);

    /* Missing required field. */
    w = vx_st_writer_new();
    vx_st_writer_add(w, "speaker_emb", VX_F32, 2, (int64_t[]){1, 256}, spk, &e);
    vx_st_writer_add(w, "emotion_adv", VX_F32, 3, (int64_t[]){1, 1, 1}, &emo, &e);
    vx_st_writer_save(w, p, &e);
    vx_st_writer_free(w);
    EXPECT_FAIL(vx_cb_conds_load_safetensors(p, &c, &e), &e, VOCIS_E_SHAPE, p, "cond_prompt_speech_tokens");
    CHECK(c.speaker_emb.data == NULL);

    /* Wrong shape, wrong dtype, out-of-range token, NaN, incomplete S3Gen part. */
    struct {
        const char *what, *sub1, *sub2;
        int variant;
    } cases[] = {
        {"shape", "speaker_emb", "expected shape [1, 256], found [1, 255]", 0},
        {"dtype", "cond_prompt_speech_tokens", "expected dtype I64/I32, found F32", 1},
        {"token", "cond_prompt_speech_tokens", "outside [0, 6561)", 2},
        {"nan", "emotion_adv", "not finite", 3},
        {"partial gen", "incomplete S3Gen", "prompt_feat", 4},
        {"feat bins", "prompt_feat", "expected shape [1, *, 80]", 5},
        {"token len", "prompt_token_len", "outside [0, 3)", 6},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        int v = cases[k].variant;
        float nanv = NAN, badtok[3] = {1, 2, 3};
        int64_t bigtok[3] = {1, 6561, 3}, len3 = 3;
        w = vx_st_writer_new();
        vx_st_writer_add(w, "speaker_emb", VX_F32, 2, (int64_t[]){1, v == 0 ? 255 : 256}, spk, &e);
        if (v == 1) vx_st_writer_add(w, "cond_prompt_speech_tokens", VX_F32, 2, (int64_t[]){1, 3}, badtok, &e);
        else vx_st_writer_add(w, "cond_prompt_speech_tokens", VX_I64, 2, (int64_t[]){1, 3}, v == 2 ? bigtok : tok, &e);
        vx_st_writer_add(w, "emotion_adv", VX_F32, 3, (int64_t[]){1, 1, 1}, v == 3 ? &nanv : &emo, &e);
        if (v >= 4) {
            vx_st_writer_add(w, "prompt_token", VX_I64, 2, (int64_t[]){1, 2}, tok, &e);
            vx_st_writer_add(w, "prompt_feat", VX_F32, 3, (int64_t[]){1, 4, v == 5 ? 79 : 80}, feat, &e);
            if (v != 4) vx_st_writer_add(w, "embedding", VX_F32, 2, (int64_t[]){1, 192}, xv, &e);
            if (v == 6) vx_st_writer_add(w, "prompt_token_len", VX_I64, 1, (int64_t[]){1}, &len3, &e);
        }
        vx_st_writer_save(w, p, &e);
        vx_st_writer_free(w);
        EXPECT_FAIL(vx_cb_conds_load_safetensors(p, &c, &e), &e, 0, p, cases[k].sub1, cases[k].sub2);
        vx_cb_conds_free(&c);
    }

    /* conds.pt structure errors: T3 field stored as None / wrong dtype; top level not a dict. */
    float fdata[256] = {0};
    int64_t idata[2] = {5, 6};
    zent ents[4];
    for (int v = 0; v < 3; v++) {
        buf b = {0};
        b_u8(&b, 0x80);
        b_u8(&b, 2);
        if (v == 2) {
            b_u8(&b, ']');
        } else {
            b_u8(&b, '}');
            b_u8(&b, '(');
            pk_unicode(&b, "t3");
            b_u8(&b, '}');
            b_u8(&b, '(');
            pk_unicode(&b, "speaker_emb");
            pk_contig(&b, "FloatStorage", "0", 256, 2, (int64_t[]){1, 256});
            pk_unicode(&b, "cond_prompt_speech_tokens");
            if (v == 0) b_u8(&b, 'N');
            else pk_contig(&b, "FloatStorage", "0", 256, 2, (int64_t[]){1, 2});
            pk_unicode(&b, "emotion_adv");
            pk_contig(&b, "FloatStorage", "0", 256, 3, (int64_t[]){1, 1, 1});
            b_u8(&b, 'u');
            b_u8(&b, 'u');
        }
        b_u8(&b, '.');
        ents[0] = (zent){"archive/data.pkl", b.p, b.n, 0, 0};
        ents[1] = (zent){"archive/data/0", fdata, sizeof fdata, 0, 0};
        ents[2] = (zent){"archive/data/1", idata, sizeof idata, 0, 0};
        ents[3] = (zent){"archive/version", "3\n", 2, 0, 0};
        size_t zl;
        uint8_t *z = build_zip(ents, 4, 1, 0, &zl);
        st = vx_cb_conds_load_pt_mem(z, zl, "x.pt", &c, &e);
        if (v == 0) EXPECT_FAIL(st, &e, VOCIS_E_SHAPE, "x.pt", "t3.cond_prompt_speech_tokens is None");
        if (v == 1) EXPECT_FAIL(st, &e, VOCIS_E_SHAPE, "t3.cond_prompt_speech_tokens", "expected dtype I64/I32");
        if (v == 2) EXPECT_FAIL(st, &e, VOCIS_E_SHAPE, "top-level object is a list");
        vx_cb_conds_free(&c);
        free(z);
        free(b.p);
    }
}

/* ------------------------------------------------------------------ safetensors */

/* 8-byte length + header + data. */
static uint8_t *make_st(const char *json, const void *data, size_t dlen, size_t *len) {
    buf b = {0};
    b_le(&b, strlen(json), 8);
    b_str(&b, json);
    b_put(&b, data, dlen);
    *len = b.n;
    return b.p;
}

static vocis_status st_mem(const char *json, const void *data, size_t dlen, vx_err *e) {
    size_t n;
    uint8_t *p = make_st(json, data, dlen, &n);
    vx_st_file *f = NULL;
    vocis_status st = vx_st_open_mem(p, n, "mem.safetensors", &f, e);
    vx_st_close(f);
    free(p);
    return st;
}

static void test_safetensors_bad(void) {
    vx_err e = {0};
    uint8_t data[64] = {0};
    /* Valid baseline. */
    CHECK(st_mem("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", data, 8, &e) == VOCIS_OK);
    CHECK(st_mem("{\"__metadata__\":{\"k\":\"v\"},\"a\":{\"dtype\":\"F32\",\"shape\":[],\"data_offsets\":[0,4]}}   ",
                 data, 4, &e) == VOCIS_OK);

    EXPECT_FAIL(st_mem("{\"a\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0,16]}}", data, 8, &e), &e,
                VOCIS_E_FORMAT, "mem.safetensors", "'a'", "truncated");
    EXPECT_FAIL(st_mem("{not json", data, 0, &e), &e, VOCIS_E_FORMAT, "not valid JSON");
    EXPECT_FAIL(st_mem("[1,2]", data, 0, &e), &e, VOCIS_E_FORMAT, "not a JSON object");
    EXPECT_FAIL(st_mem("{\"a\":{\"dtype\":\"F8\",\"shape\":[2],\"data_offsets\":[0,2]}}", data, 2, &e), &e,
                VOCIS_E_FORMAT, "unknown dtype 'F8'");
    EXPECT_FAIL(st_mem("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
                       "\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[4,12]}}",
                       data, 12, &e),
                &e, VOCIS_E_FORMAT, "overlapping");
    /* Overlap that no adjacent pair shows (an empty tensor between them). */
    EXPECT_FAIL(st_mem("{\"a\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0,16]},"
                       "\"b\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[0,0]},"
                       "\"c\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[8,12]}}",
                       data, 16, &e),
                &e, VOCIS_E_FORMAT, "overlapping", "'a'", "'c'");
    EXPECT_FAIL(st_mem("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[8,16]}}", data, 8, &e), &e,
                VOCIS_E_FORMAT, "data section has 8 bytes");
    EXPECT_FAIL(st_mem("{\"a\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[0,8]}}", data, 12, &e), &e,
                VOCIS_E_FORMAT, "span 8 bytes", "needs 12");
    EXPECT_FAIL(st_mem("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
                       "\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}",
                       data, 8, &e),
                &e, VOCIS_E_FORMAT, "'a' appears twice");
    EXPECT_FAIL(st_mem("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}} x", data, 4, &e), &e,
                VOCIS_E_FORMAT, "after the JSON header");
    EXPECT_FAIL(st_mem("{\"a\":{\"dtype\":\"F32\",\"shape\":[1,1,1,1,1],\"data_offsets\":[0,4]}}", data, 4, &e),
                &e, VOCIS_E_UNSUPPORTED, "rank 5");
    EXPECT_FAIL(st_mem("{\"a\":{\"dtype\":\"F32\",\"shape\":[-1],\"data_offsets\":[0,4]}}", data, 4, &e), &e,
                VOCIS_E_FORMAT, "invalid shape");
    EXPECT_FAIL(st_mem("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,0]}}", data, 4, &e), &e,
                VOCIS_E_FORMAT, "data_offsets");
    EXPECT_FAIL(st_mem("{\"a\":{\"dtype\":\"F32\",\"shape\":[4294967296,4294967296,4294967296],"
                       "\"data_offsets\":[0,4]}}",
                       data, 4, &e),
                &e, VOCIS_E_FORMAT, "'a'");
    EXPECT_FAIL(st_mem("{\"a\":5}", data, 0, &e), &e, VOCIS_E_FORMAT, "not an object");

    /* Header length past EOF, short files (through the file path too). */
    size_t n;
    uint8_t *p = make_st("{}", NULL, 0, &n);
    p[0] = 0xe8;
    p[1] = 0x03;
    const char *path = tmp_path("bad.safetensors");
    write_all(path, p, n);
    vx_st_file *f = NULL;
    EXPECT_FAIL(vx_st_open(path, &f, &e), &e, VOCIS_E_FORMAT, path, "header length 1000 exceeds");
    write_all(path, p, 5);
    EXPECT_FAIL(vx_st_open(path, &f, &e), &e, VOCIS_E_FORMAT, "too short");
    EXPECT_FAIL(vx_st_open_mem(p, 0, "empty", &f, &e), &e, VOCIS_E_FORMAT, "too short");
    EXPECT_FAIL(vx_st_open(tmp_path("absent.safetensors"), &f, &e), &e, VOCIS_E_IO, "absent.safetensors");
    free(p);

    /* Truncated real file (cut inside the data). */
    uint8_t *real = read_all(tl_path("chatterbox/golden/06_t3_cond.safetensors"), &n);
    CHECK(real != NULL);
    if (real) {
        write_all(path, real, n - 100);
        EXPECT_FAIL(vx_st_open(path, &f, &e), &e, VOCIS_E_FORMAT, "truncated");
        write_all(path, real, 40);
        EXPECT_FAIL(vx_st_open(path, &f, &e), &e, VOCIS_E_FORMAT, "exceeds the file size");
        free(real);
    }

    /* Misaligned data section: tensors are copied to aligned memory. */
    float vals[3] = {1.5f, -2.0f, 3.25f};
    uint8_t mis[13] = {0};
    memcpy(mis + 1, vals, 12);
    p = make_st("{\"a\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[1,13]}}", mis, 13, &n);
    CHECK(vx_st_open_mem(p, n, "mis", &f, &e) == VOCIS_OK);
    if (f) {
        const vx_tensor *t = vx_st_find(f, "a");
        CHECK(t && (uintptr_t)t->data % 4 == 0 && memcmp(t->data, vals, 12) == 0);
        vx_st_close(f);
    }
    free(p);

    /* Writer rejects nonsense. */
    vx_st_writer *w = vx_st_writer_new();
    CHECK(vx_st_writer_add(w, "x", VX_F32, 1, (int64_t[]){1}, vals, &e) == VOCIS_OK);
    EXPECT_FAIL(vx_st_writer_add(w, "x", VX_F32, 1, (int64_t[]){1}, vals, &e), &e, VOCIS_E_ARG, "twice");
    EXPECT_FAIL(vx_st_writer_add(w, "y", VX_F32, 1, (int64_t[]){-3}, vals, &e), &e, VOCIS_E_ARG, "shape");
    EXPECT_FAIL(vx_st_writer_add(w, "z", VX_F32, 5, (int64_t[]){1, 1, 1, 1, 1}, vals, &e), &e, VOCIS_E_ARG, "rank");
    EXPECT_FAIL(vx_st_writer_add(w, "__metadata__", VX_F32, 1, (int64_t[]){1}, vals, &e), &e, VOCIS_E_ARG,
                "reserved");
    vx_st_writer_free(w);
}

static void test_weights(void) {
    vx_err e = {0};
    float a[6] = {1, 2, 3, 4, 5, 6};
    int64_t ids[2] = {7, 8};
    vx_st_writer *w = vx_st_writer_new();
    vx_st_writer_add(w, "layer.weight", VX_F32, 2, (int64_t[]){2, 3}, a, &e);
    vx_st_writer_meta(w, "format", "pt", &e);
    CHECK(vx_st_writer_save(w, tmp_path("model-1.safetensors"), &e) == VOCIS_OK);
    vx_st_writer_free(w);
    w = vx_st_writer_new();
    vx_st_writer_add(w, "ids", VX_I64, 1, (int64_t[]){2}, ids, &e);
    CHECK(vx_st_writer_save(w, tmp_path("model-2.safetensors"), &e) == VOCIS_OK);
    vx_st_writer_free(w);

    const char *p1 = tmp_path("model-1.safetensors");
    vx_weights *ws;
    vocis_status st = vx_weights_open(p1, &ws, &e);
    CHECK_MSG(st == VOCIS_OK, "%s", e.msg);
    if (st == VOCIS_OK) {
        vx_tensor t;
        CHECK(vx_weights_expect(ws, VX_FLOATS, VX_DIMS(2, 3), &t, &e, "layer.%s", "weight") == VOCIS_OK);
        CHECK(t.dtype == VX_F32 && ((const float *)t.data)[5] == 6.0f);
        EXPECT_FAIL(vx_weights_expect(ws, VX_FLOATS, VX_DIMS(2, 3), &t, &e, "layer.bias"), &e, VOCIS_E_SHAPE, p1,
                    "missing tensor 'layer.bias'");
        EXPECT_FAIL(vx_weights_expect(ws, VX_FLOATS, VX_DIMS(3, -1), &t, &e, "layer.weight"), &e, VOCIS_E_SHAPE,
                    p1, "'layer.weight'", "expected shape [3, *]", "found [2, 3]");
        EXPECT_FAIL(vx_weights_expect(ws, VX_DT(VX_BF16), VX_DIMS(2, 3), &t, &e, "layer.weight"), &e,
                    VOCIS_E_SHAPE, p1, "'layer.weight'", "expected dtype BF16", "found F32");
        EXPECT_FAIL(vx_weights_expect(ws, VX_FLOATS, VX_DIMS(2), &t, &e, "layer.weight"), &e, VOCIS_E_SHAPE,
                    "expected shape [2]", "found [2, 3]");
        CHECK(vx_weights_count(ws) == 1);
        vx_weights_close(ws);
    }

    /* Sharded index. */
    const char *idx = tmp_path("model.safetensors.index.json");
    const char *good = "{\"metadata\":{},\"weight_map\":{\"layer.weight\":\"model-1.safetensors\","
                       "\"ids\":\"model-2.safetensors\"}}";
    write_all(idx, good, strlen(good));
    st = vx_weights_open(idx, &ws, &e);
    CHECK_MSG(st == VOCIS_OK, "%s", e.msg);
    if (st == VOCIS_OK) {
        const char *file = NULL;
        const vx_tensor *t = vx_weights_find(ws, "ids", &file);
        CHECK(t && ((const int64_t *)t->data)[1] == 8 && file && strstr(file, "model-2.safetensors"));
        CHECK(vx_weights_count(ws) == 2 && vx_weights_has(ws, "layer.weight"));
        vx_tensor tt;
        EXPECT_FAIL(vx_weights_expect(ws, VX_INTS, VX_DIMS(3), &tt, &e, "ids"), &e, VOCIS_E_SHAPE,
                    "model-2.safetensors", "'ids'", "expected shape [3]", "found [2]");
        vx_weights_close(ws);
    }
    const char *missing = "{\"weight_map\":{\"layer.weight\":\"model-1.safetensors\","
                          "\"ids\":\"model-3.safetensors\"}}";
    write_all(idx, missing, strlen(missing));
    EXPECT_FAIL(vx_weights_open(idx, &ws, &e), &e, VOCIS_E_IO, "model-3.safetensors", "cannot open", idx);
    /* A tensor the index places in the wrong shard. */
    const char *wrong = "{\"weight_map\":{\"layer.weight\":\"model-2.safetensors\","
                        "\"ids\":\"model-2.safetensors\"}}";
    write_all(idx, wrong, strlen(wrong));
    EXPECT_FAIL(vx_weights_open(idx, &ws, &e), &e, VOCIS_E_FORMAT, "'layer.weight' is not in its shard");
    const char *escape = "{\"weight_map\":{\"a\":\"../x.safetensors\"}}";
    write_all(idx, escape, strlen(escape));
    EXPECT_FAIL(vx_weights_open(idx, &ws, &e), &e, VOCIS_E_FORMAT, "not a plain file name");
    write_all(idx, "{\"weight_map\":[]}", 17);
    EXPECT_FAIL(vx_weights_open(idx, &ws, &e), &e, VOCIS_E_FORMAT, "weight_map");
    /* The same tensor in two shards. */
    w = vx_st_writer_new();
    vx_st_writer_add(w, "layer.weight", VX_F32, 2, (int64_t[]){2, 3}, a, &e);
    vx_st_writer_add(w, "ids", VX_I64, 1, (int64_t[]){2}, ids, &e);
    vx_st_writer_save(w, tmp_path("model-4.safetensors"), &e);
    vx_st_writer_free(w);
    const char *dup = "{\"weight_map\":{\"ids\":\"model-2.safetensors\",\"layer.weight\":\"model-4.safetensors\"}}";
    write_all(idx, dup, strlen(dup));
    EXPECT_FAIL(vx_weights_open(idx, &ws, &e), &e, VOCIS_E_FORMAT, "'ids' is stored in two shards");
}

/* ------------------------------------------------------------------ pickle */

static vocis_status pk_run(const void *bytes, size_t n, vx_err *e, vx_pickle **out) {
    vx_pickle_opts o = {.name = "t.pkl"};
    vx_pickle *p = NULL;
    vocis_status st = vx_pickle_load(bytes, n, &o, &p, e);
    if (out) *out = p;
    else vx_pickle_free(p);
    return st;
}
#define PK(lit, e, out) pk_run(lit, sizeof(lit) - 1, e, out)

static void test_pickle(void) {
    vx_err e = {0};
    vx_pickle *p;
    /* Scalars and containers. */
    /* (string literals are split after hex escapes that a hex-digit letter follows) */
    static const char ok[] = "\x80\x02}q\x00(X\x01\x00\x00\x00" "aq\x01]q\x02(K\x01M\x00\x01J\xff\xff\xff\xff"
                             "\x8a\x01\xff\x8a\x08\x00\x00\x00\x00\x00\x00\x00\x80\x8a\x00"
                             "G\x3f\xf8\x00\x00\x00\x00\x00\x00\x88\x89Ne\x8c\x01" "bh\x02h\x02\x86q\x03"
                             "\x8c\x01" "ch\x03\x94\x85u.";
    vocis_status st = pk_run(ok, sizeof ok - 1, &e, &p);
    CHECK_MSG(st == VOCIS_OK, "%s", e.msg);
    if (st == VOCIS_OK) {
        const vx_pk_value *r = vx_pickle_root(p), *a = vx_pk_dict_get(r, "a");
        CHECK(r->type == VX_PK_DICT && r->u.dict.n == 3);
        CHECK(a && a->type == VX_PK_LIST && a->u.seq.n == 10);
        if (a && a->u.seq.n == 10) {
            vx_pk_value **it = a->u.seq.items;
            CHECK(it[0]->u.i == 1 && it[1]->u.i == 256 && it[2]->u.i == -1 && it[3]->u.i == -1);
            CHECK(it[4]->u.i == INT64_MIN && it[5]->u.i == 0 && it[6]->type == VX_PK_FLOAT && it[6]->u.f == 1.5);
            CHECK(it[7]->type == VX_PK_BOOL && it[7]->u.i == 1 && it[8]->u.i == 0 && it[9]->type == VX_PK_NONE);
        }
        const vx_pk_value *b = vx_pk_dict_get(r, "b"), *c = vx_pk_dict_get(r, "c");
        CHECK(b && b->type == VX_PK_TUPLE && b->u.seq.n == 2 && b->u.seq.items[0] == b->u.seq.items[1] &&
              b->u.seq.items[0] == a);
        CHECK(c && c->type == VX_PK_TUPLE && c->u.seq.n == 1 && c->u.seq.items[0]->type == VX_PK_TUPLE);
        vx_pickle_free(p);
    }
    /* A list containing itself loads and frees (no recursion, no leak). */
    CHECK(PK("\x80\x02]q\x00h\x00" "a.", &e, NULL) == VOCIS_OK);

    EXPECT_FAIL(PK("\x80\x02\xff.", &e, NULL), &e, VOCIS_E_FORMAT, "t.pkl", "byte 2", "unknown opcode 0xff");
    EXPECT_FAIL(PK("\x80\x02\x63os\nsystem\n.", &e, NULL), &e, VOCIS_E_FORMAT, "byte 2", "'os.system' is not allowed");
    EXPECT_FAIL(PK("\x80\x02\x8c\x02os\x8c\x06system\x93.", &e, NULL), &e, VOCIS_E_FORMAT, "STACK_GLOBAL",
                "'os.system'");
    EXPECT_FAIL(PK("\x80\x02\x63torch\nload\n.", &e, NULL), &e, VOCIS_E_FORMAT, "torch.load");
    EXPECT_FAIL(PK("\x80\x02X\xff\xff\xff\x7f", &e, NULL), &e, VOCIS_E_FORMAT, "2147483647 bytes", "past the end");
    EXPECT_FAIL(PK("\x80\x02\x8d\xff\xff\xff\xff\xff\xff\xff\xff", &e, NULL), &e, VOCIS_E_FORMAT, "past the end");
    EXPECT_FAIL(PK("\x80\x02}b.", &e, NULL), &e, VOCIS_E_FORMAT, "BUILD", "not supported");
    EXPECT_FAIL(PK("\x80\x02\x81.", &e, NULL), &e, VOCIS_E_FORMAT, "NEWOBJ");
    EXPECT_FAIL(PK("\x80\x02h\x05.", &e, NULL), &e, VOCIS_E_FORMAT, "memo entry 5 is not defined");
    EXPECT_FAIL(PK("\x80\x02r\xff\xff\xff\x7f.", &e, NULL), &e, VOCIS_E_FORMAT, "underflow");
    EXPECT_FAIL(PK("\x80\x02Nr\xff\xff\xff\x7f.", &e, NULL), &e, VOCIS_E_FORMAT, "memo index 2147483647");
    EXPECT_FAIL(PK("\x80\x02.", &e, NULL), &e, VOCIS_E_FORMAT, "STOP", "underflow");
    EXPECT_FAIL(PK("\x80\x02]K\x01", &e, NULL), &e, VOCIS_E_FORMAT, "without STOP");
    EXPECT_FAIL(PK("\x80\x02](K\x01" "a.", &e, NULL), &e, VOCIS_E_FORMAT, "APPEND", "underflow");
    EXPECT_FAIL(PK("\x80\x02K\x01K\x02s.", &e, NULL), &e, VOCIS_E_FORMAT, "underflow");
    EXPECT_FAIL(PK("\x80\x02}]K\x01s.", &e, NULL), &e, VOCIS_E_FORMAT, "unhashable");
    EXPECT_FAIL(PK("\x80\x02K\x01(K\x02" "a.", &e, NULL), &e, VOCIS_E_FORMAT, "underflow");
    EXPECT_FAIL(PK("\x80\x02t.", &e, NULL), &e, VOCIS_E_FORMAT, "no MARK");
    EXPECT_FAIL(PK("\x80\x02}(K\x01u.", &e, NULL), &e, VOCIS_E_FORMAT, "odd number");
    EXPECT_FAIL(PK("\x80\x06N.", &e, NULL), &e, VOCIS_E_UNSUPPORTED, "protocol 6");
    EXPECT_FAIL(PK("\x80\x02\x8a\x09\x00\x00\x00\x00\x00\x00\x00\x00\x01.", &e, NULL), &e, VOCIS_E_UNSUPPORTED,
                "64 bits");
    EXPECT_FAIL(PK("\x80\x02\x63torch\nFloatStorage\n)R.", &e, NULL), &e, VOCIS_E_FORMAT, "may not be called");
    EXPECT_FAIL(PK("\x80\x02\x63\x63ollections\nOrderedDict\nK\x01\x85R.", &e, NULL), &e, VOCIS_E_FORMAT,
                "OrderedDict called with 1");
    EXPECT_FAIL(PK("\x80\x02K\x01)R.", &e, NULL), &e, VOCIS_E_FORMAT, "cannot call a int");
    EXPECT_FAIL(PK("\x80\x02(X\x07\x00\x00\x00storage\x63torch\nFloatStorage\nX\x01\x00\x00\x00\x30N"
                   "K\x01tQ.",
                   &e, NULL),
                &e, VOCIS_E_FORMAT, "location");
    EXPECT_FAIL(PK("\x80\x02(X\x07\x00\x00\x00storage\x63torch\nFloatStorage\nX\x01\x00\x00\x00\x30"
                   "X\x03\x00\x00\x00\x63puK\x01tQ.",
                   &e, NULL),
                &e, VOCIS_E_FORMAT, "no storage resolver");
    EXPECT_FAIL(PK("\x80\x02\x63torch\nDoubleStorage\n.", &e, NULL), &e, VOCIS_E_FORMAT, "DoubleStorage");
    EXPECT_FAIL(PK("\x80\x02\x63os", &e, NULL), &e, VOCIS_E_FORMAT, "unterminated");
    EXPECT_FAIL(pk_run(NULL, 0, &e, NULL), &e, VOCIS_E_FORMAT, "without STOP");

    /* Deep nesting and long runs stay within the caps and free without recursion. */
    size_t n = 200000;
    uint8_t *deep = malloc(n + 3);
    deep[0] = 0x80;
    deep[1] = 2;
    memset(deep + 2, '(', n);
    deep[n + 2] = '.';
    EXPECT_FAIL(pk_run(deep, n + 3, &e, NULL), &e, VOCIS_E_FORMAT, "nested marks");
    memset(deep + 2, ']', n);
    CHECK(pk_run(deep, n + 3, &e, NULL) == VOCIS_OK);
    size_t big = (1u << 20) + 8;
    uint8_t *wide = malloc(big + 3);
    wide[0] = 0x80;
    wide[1] = 2;
    memset(wide + 2, 'N', big);
    wide[big + 2] = '.';
    EXPECT_FAIL(pk_run(wide, big + 3, &e, NULL), &e, VOCIS_E_FORMAT, "stack deeper than");
    free(wide);
    /* ]]]]...  then append each list into the previous: a 100000-deep chain. */
    buf b = {0};
    b_u8(&b, 0x80);
    b_u8(&b, 2);
    for (int i = 0; i < 100000; i++) b_u8(&b, ']');
    for (int i = 0; i < 99999; i++) b_u8(&b, 'a');
    b_u8(&b, '.');
    CHECK(pk_run(b.p, b.n, &e, NULL) == VOCIS_OK);
    free(b.p);
    free(deep);
}

/* ------------------------------------------------------------------ torch.save */

static uint8_t *torch_file(const char *pkl, size_t pkl_len, const void *s0, size_t s0_len, int zip64, size_t skew,
                           unsigned method, size_t *len) {
    zent ents[3] = {
        {"archive/data.pkl", pkl, pkl_len, method, 0},
        {"archive/data/0", s0, s0_len, 0, 0},
        {"archive/version", "3\n", 2, 0, 0},
    };
    return build_zip(ents, 3, zip64, skew, len);
}

static void test_torch(void) {
    vx_err e = {0};
    float s[12];
    for (int i = 0; i < 12; i++) s[i] = (float)i;
    /* {'a': contiguous (2,3) at offset 2, 'b': transposed (3,2) view, 'c': 0-dim, 'd': empty} */
    buf b = {0};
    b_u8(&b, 0x80);
    b_u8(&b, 2);
    b_u8(&b, '}');
    b_u8(&b, '(');
    pk_unicode(&b, "a");
    pk_tensor(&b, "FloatStorage", "0", 12, 2, 2, (int64_t[]){2, 3}, (int64_t[]){3, 1});
    pk_unicode(&b, "b");
    pk_tensor(&b, "FloatStorage", "0", 12, 0, 2, (int64_t[]){3, 2}, (int64_t[]){1, 3});
    pk_unicode(&b, "c");
    pk_tensor(&b, "FloatStorage", "0", 12, 11, 0, NULL, NULL);
    pk_unicode(&b, "d");
    pk_tensor(&b, "FloatStorage", "0", 12, 0, 2, (int64_t[]){0, 5}, (int64_t[]){5, 1});
    b_u8(&b, 'u');
    b_u8(&b, '.');
    for (int variant = 0; variant < 4; variant++) {
        int zip64 = variant & 1;
        size_t skew = (variant & 2) ? 1 : 0; /* misaligned storage -> copies */
        size_t zl;
        uint8_t *z = torch_file((const char *)b.p, b.n, s, sizeof s, zip64, skew, 0, &zl);
        vx_torch_file *tf;
        vocis_status st = vx_torch_open_mem(z, zl, "t.pt", &tf, &e);
        CHECK_MSG(st == VOCIS_OK, "variant %d: %s", variant, e.msg);
        if (st == VOCIS_OK) {
            const vx_pk_value *r = vx_torch_root(tf);
            const vx_pk_value *a = vx_pk_dict_get(r, "a"), *bt = vx_pk_dict_get(r, "b");
            const vx_pk_value *c = vx_pk_dict_get(r, "c"), *d = vx_pk_dict_get(r, "d");
            CHECK(a && a->type == VX_PK_TENSOR && a->u.tensor.t.ndim == 2 && a->u.tensor.t.shape[1] == 3);
            if (a && a->type == VX_PK_TENSOR) {
                const float *x = a->u.tensor.t.data;
                CHECK((uintptr_t)x % 4 == 0 && x[0] == 2 && x[5] == 7);
            }
            if (bt && bt->type == VX_PK_TENSOR) {
                const float *x = bt->u.tensor.t.data; /* b[i][j] = s[i + 3j] */
                CHECK(x[0] == 0 && x[1] == 3 && x[2] == 1 && x[3] == 4 && x[4] == 2 && x[5] == 5);
            } else {
                CHECK(0);
            }
            CHECK(c && c->type == VX_PK_TENSOR && c->u.tensor.t.ndim == 0 &&
                  ((const float *)c->u.tensor.t.data)[0] == 11);
            CHECK(d && d->type == VX_PK_TENSOR && d->u.tensor.t.shape[0] == 0 && vx_numel(&d->u.tensor.t) == 0);
            vx_torch_close(tf);
        }
        free(z);
    }

    /* Errors at the torch level. */
    size_t zl;
    uint8_t *z;
    vx_torch_file *tf = NULL;
    z = torch_file((const char *)b.p, b.n, s, 40, 1, 0, 0, &zl); /* storage shorter than numel */
    EXPECT_FAIL(vx_torch_open_mem(z, zl, "t.pt", &tf, &e), &e, VOCIS_E_FORMAT, "archive/data/0", "40 bytes",
                "12 x F32");
    free(z);
    z = torch_file((const char *)b.p, b.n, s, sizeof s, 1, 0, 8, &zl); /* "deflate" */
    EXPECT_FAIL(vx_torch_open_mem(z, zl, "t.pt", &tf, &e), &e, VOCIS_E_UNSUPPORTED, "archive/data.pkl",
                "compressed", "deflate");
    free(z);
    z = torch_file((const char *)b.p, b.n, s, sizeof s, 0, 0, 0, &zl);
    for (size_t cut = 1; cut < zl; cut += zl / 7 + 1)
        EXPECT_FAIL(vx_torch_open_mem(z, cut, "t.pt", &tf, &e), &e, VOCIS_E_FORMAT, "t.pt");
    EXPECT_FAIL(vx_torch_open_mem(z, zl - 1, "t.pt", &tf, &e), &e, VOCIS_E_FORMAT, "end-of-central-directory");
    free(z);
    /* Tensor reaching past its storage. */
    buf b2 = {0};
    b_u8(&b2, 0x80);
    b_u8(&b2, 2);
    pk_tensor(&b2, "FloatStorage", "0", 12, 4, 2, (int64_t[]){3, 3}, (int64_t[]){3, 1});
    b_u8(&b2, '.');
    z = torch_file((const char *)b2.p, b2.n, s, sizeof s, 1, 0, 0, &zl);
    EXPECT_FAIL(vx_torch_open_mem(z, zl, "t.pt", &tf, &e), &e, VOCIS_E_FORMAT, "element 12", "12 elements");
    free(z);
    /* Broadcast view (stride 0) that would expand the storage. */
    b2.n = 2;
    pk_tensor(&b2, "FloatStorage", "0", 12, 0, 2, (int64_t[]){1000, 1000}, (int64_t[]){0, 0});
    b_u8(&b2, '.');
    z = torch_file((const char *)b2.p, b2.n, s, sizeof s, 1, 0, 0, &zl);
    EXPECT_FAIL(vx_torch_open_mem(z, zl, "t.pt", &tf, &e), &e, VOCIS_E_UNSUPPORTED, "expands");
    free(z);
    /* Rank 5. */
    {
        b2.n = 2;
        pk_global(&b2, "torch._utils", "_rebuild_tensor_v2");
        b_u8(&b2, '(');
        b_u8(&b2, '(');
        pk_unicode(&b2, "storage");
        pk_global(&b2, "torch", "FloatStorage");
        pk_unicode(&b2, "0");
        pk_unicode(&b2, "cpu");
        pk_int(&b2, 12);
        b_u8(&b2, 't');
        b_u8(&b2, 'Q');
        pk_int(&b2, 0);
        b_u8(&b2, '(');
        for (int i = 0; i < 5; i++) pk_int(&b2, i == 4 ? 12 : 1);
        b_u8(&b2, 't');
        b_u8(&b2, '(');
        for (int i = 0; i < 5; i++) pk_int(&b2, i == 4 ? 1 : 12);
        b_u8(&b2, 't');
        b_u8(&b2, 0x89);
        b_u8(&b2, '}');
        b_u8(&b2, 't');
        b_u8(&b2, 'R');
        b_u8(&b2, '.');
    }
    z = torch_file((const char *)b2.p, b2.n, s, sizeof s, 1, 0, 0, &zl);
    EXPECT_FAIL(vx_torch_open_mem(z, zl, "t.pt", &tf, &e), &e, VOCIS_E_UNSUPPORTED, "rank 5");
    free(z);
    free(b2.p);

    /* Zip-level problems. */
    zent ents[3] = {
        {"archive/data.pkl", b.p, b.n, 0, 1},
        {"archive/data/0", s, sizeof s, 0, 0},
        {"archive/byteorder", "big", 3, 0, 0},
    };
    z = build_zip(ents, 2, 0, 0, &zl);
    EXPECT_FAIL(vx_torch_open_mem(z, zl, "t.pt", &tf, &e), &e, VOCIS_E_FORMAT, "CRC-32");
    free(z);
    ents[0].bad_crc = 0;
    z = build_zip(ents, 3, 0, 0, &zl);
    EXPECT_FAIL(vx_torch_open_mem(z, zl, "t.pt", &tf, &e), &e, VOCIS_E_UNSUPPORTED, "big-endian");
    free(z);
    ents[2] = (zent){"archive/data.pkl", b.p, b.n, 0, 0};
    z = build_zip(ents, 3, 0, 0, &zl);
    EXPECT_FAIL(vx_torch_open_mem(z, zl, "t.pt", &tf, &e), &e, VOCIS_E_FORMAT, "appears twice");
    free(z);
    ents[0].name = "archive/other.pkl";
    z = build_zip(ents, 2, 0, 0, &zl);
    EXPECT_FAIL(vx_torch_open_mem(z, zl, "t.pt", &tf, &e), &e, VOCIS_E_FORMAT, "no <name>/data.pkl");
    free(z);
    ents[0].name = "archive/data.pkl";
    z = build_zip(ents, 1, 0, 0, &zl); /* storage entry missing */
    EXPECT_FAIL(vx_torch_open_mem(z, zl, "t.pt", &tf, &e), &e, VOCIS_E_FORMAT, "missing entry 'archive/data/0'");
    free(z);
    /* Legacy format, garbage, the real file cut short, and a file that is not there. */
    static const uint8_t legacy[32] = {0x80, 0x02, 0x8a, 0x0a, 0x6c, 0xfc, 0x9c, 0x46, 0xf9, 0x20, 0x6a, 0xa8};
    EXPECT_FAIL(vx_torch_open_mem(legacy, sizeof legacy, "old.pt", &tf, &e), &e, VOCIS_E_UNSUPPORTED, "legacy");
    EXPECT_FAIL(vx_torch_open_mem("PK", 2, "tiny.pt", &tf, &e), &e, VOCIS_E_FORMAT, "too short");
    size_t rl;
    uint8_t *real = read_all(tl_path("chatterbox/ckpt/conds.pt"), &rl);
    if (real) {
        const char *p = tmp_path("trunc.pt");
        write_all(p, real, rl / 2);
        EXPECT_FAIL(vx_torch_open(p, &tf, &e), &e, VOCIS_E_FORMAT, p);
        vx_cb_conds c;
        EXPECT_FAIL(vx_cb_conds_load_pt(p, &c, &e), &e, VOCIS_E_FORMAT, p);
        write_all(p, real, rl - 30);
        EXPECT_FAIL(vx_torch_open(p, &tf, &e), &e, VOCIS_E_FORMAT, p);
        free(real);
    }
    EXPECT_FAIL(vx_torch_open(tmp_path("none.pt"), &tf, &e), &e, VOCIS_E_IO, "none.pt");
    free(b.p);
}

/* ------------------------------------------------------------------ mutation test */

typedef struct rng {
    uint64_t s;
} rng;
static uint64_t rnext(rng *r) {
    r->s ^= r->s << 13;
    r->s ^= r->s >> 7;
    r->s ^= r->s << 17;
    return r->s;
}
static size_t rbelow(rng *r, size_t n) { return n ? (size_t)(rnext(r) % n) : 0; }

/* Mutates a copy of src (focus: byte range most mutations land in). */
static size_t mutate(rng *r, const uint8_t *src, size_t n, uint8_t *dst, size_t focus_lo, size_t focus_hi) {
    memcpy(dst, src, n);
    int kind = (int)rbelow(r, 10);
    if (kind == 0) return rbelow(r, n); /* truncate */
    int edits = 1 + (int)rbelow(r, 4);
    static const uint8_t special[] = {0x00, 0xff, 0x7f, 0x80, 0x01, 0xfe, '(', '.', 'X', 'q', 'h', 'R', 't', 0x8a};
    for (int i = 0; i < edits; i++) {
        size_t pos = rbelow(r, 3) ? focus_lo + rbelow(r, focus_hi - focus_lo) : rbelow(r, n);
        if (pos >= n) continue;
        switch (rbelow(r, 4)) {
        case 0: dst[pos] ^= (uint8_t)(1u << rbelow(r, 8)); break;
        case 1: dst[pos] = special[rbelow(r, sizeof special)]; break;
        case 2: dst[pos] = (uint8_t)rnext(r); break;
        default: /* multi-byte little-endian field smash */
            for (size_t k = 0; k < 4 && pos + k < n; k++) dst[pos + k] = (uint8_t)rnext(r);
        }
    }
    return n;
}

static double touch_tensor(const vx_tensor *t) {
    double s = 0;
    size_t bytes = (size_t)vx_numel(t) * vx_dtype_size(t->dtype);
    for (size_t i = 0; i < bytes; i++) s += ((const uint8_t *)t->data)[i];
    return s;
}

static void test_mutations(void) {
    vx_err e = {0};
    rng r = {0x9e3779b97f4a7c15ull};
    int ok = 0, fail = 0;
    double sink = 0;

    /* 1. conds.pt as a whole (zip structure + CRC). */
    size_t n;
    uint8_t *real = read_all(tl_path("chatterbox/ckpt/conds.pt"), &n);
    CHECK(real != NULL);
    if (!real) return;
    uint8_t *m = malloc(n);
    for (int it = 0; it < 1500; it++) {
        /* Most edits land in data.pkl (first ~830 bytes) or the directory (last ~700 bytes). */
        size_t lo = rbelow(&r, 2) ? 0 : n - 700, hi = lo ? n : 830;
        size_t len = mutate(&r, real, n, m, lo, hi);
        vx_cb_conds c;
        vocis_status st = vx_cb_conds_load_pt_mem(m, len, "mut.pt", &c, &e);
        if (st == VOCIS_OK) {
            ok++;
            for (size_t i = 0; i < c.prompt_feat.n; i++) sink += c.prompt_feat.data[i];
        } else {
            fail++;
            CHECK_MSG(e.msg[0] != '\0', "empty message for status %d", st);
        }
        vx_cb_conds_free(&c);
    }

    /* 2. data.pkl bytes, re-zipped with valid CRCs so that the pickle VM sees them. */
    vx_zip *zip;
    vocis_status st = vx_zip_open_mem(real, n, "conds.pt", &zip, &e);
    CHECK_MSG(st == VOCIS_OK, "%s", e.msg);
    if (st == VOCIS_OK) {
        zent ents[10];
        int ne = 0;
        const uint8_t *pkl = NULL;
        uint64_t pkl_len = 0;
        for (int i = 0; i < vx_zip_count(zip) && ne < 10; i++) {
            const uint8_t *d;
            uint64_t dl;
            CHECK(vx_zip_read(zip, vx_zip_name(zip, i), &d, &dl, &e) == VOCIS_OK);
            ents[ne++] = (zent){vx_zip_name(zip, i), d, (size_t)dl, 0, 0};
            if (strstr(vx_zip_name(zip, i), "data.pkl")) {
                pkl = d;
                pkl_len = dl;
            }
        }
        CHECK(pkl != NULL);
        uint8_t *mp = malloc(pkl_len + 1);
        for (int it = 0; pkl && it < 2500; it++) {
            size_t len = mutate(&r, pkl, (size_t)pkl_len, mp, 0, (size_t)pkl_len);
            for (int i = 0; i < ne; i++)
                if (strstr(ents[i].name, "data.pkl")) {
                    ents[i].data = mp;
                    ents[i].len = len;
                }
            size_t zl;
            uint8_t *z = build_zip(ents, ne, (int)(it & 1), 0, &zl);
            vx_torch_file *tf;
            st = vx_torch_open_mem(z, zl, "mut.pt", &tf, &e);
            if (st == VOCIS_OK) {
                vx_torch_close(tf);
                vx_cb_conds c;
                st = vx_cb_conds_load_pt_mem(z, zl, "mut.pt", &c, &e);
                if (st == VOCIS_OK) sink += c.speaker_emb.data[0] + (c.has_gen ? c.embedding.data[0] : 0);
                vx_cb_conds_free(&c);
            }
            if (st == VOCIS_OK) ok++;
            else {
                fail++;
                CHECK_MSG(e.msg[0] != '\0', "empty message for status %d", st);
            }
            free(z);
        }
        free(mp);
        vx_zip_close(zip);
    }
    free(m);
    free(real);

    /* 3. A tiny safetensors file. */
    float a[6] = {1, 2, 3, 4, 5, 6};
    int64_t ids[3] = {1, 2, 3};
    uint16_t h[2] = {0x3c00, 0x4000};
    vx_st_writer *w = vx_st_writer_new();
    vx_st_writer_add(w, "a", VX_F32, 2, (int64_t[]){2, 3}, a, &e);
    vx_st_writer_add(w, "ids", VX_I64, 1, (int64_t[]){3}, ids, &e);
    vx_st_writer_add(w, "h", VX_BF16, 1, (int64_t[]){2}, h, &e);
    vx_st_writer_meta(w, "format", "pt", &e);
    const char *p = tmp_path("tiny.safetensors");
    CHECK(vx_st_writer_save(w, p, &e) == VOCIS_OK);
    vx_st_writer_free(w);
    uint8_t *tiny = read_all(p, &n);
    CHECK(tiny != NULL);
    if (tiny) {
        m = malloc(n);
        size_t hl = (size_t)tiny[0] | (size_t)tiny[1] << 8;
        for (int it = 0; it < 2000; it++) {
            size_t len = mutate(&r, tiny, n, m, 0, hl + 8);
            vx_st_file *f;
            st = vx_st_open_mem(m, len, "mut.safetensors", &f, &e);
            if (st == VOCIS_OK) {
                ok++;
                for (int i = 0; i < vx_st_count(f); i++) sink += touch_tensor(vx_st_tensor(f, i));
                vx_st_close(f);
            } else {
                fail++;
                CHECK_MSG(e.msg[0] != '\0', "empty message for status %d", st);
            }
        }
        free(m);
        free(tiny);
    }
    printf("mutations: %d loaded, %d rejected (sink %g)\n", ok, fail, sink);
    CHECK(fail > 0);
}

int main(int argc, char **argv) {
    if (argc > 1) tl_data_dir = argv[1];
    snprintf(g_tmp, sizeof g_tmp, "/tmp/vocis_test_io_XXXXXX");
    if (!mkdtemp(g_tmp)) {
        perror("mkdtemp");
        return 1;
    }
    test_safetensors_bad();
    test_weights();
    test_pickle();
    test_torch();
    test_conds_pt();
    test_conds_bad();
    test_mutations();
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_tmp);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", g_tmp);
    return tl_finish("test_io");
}
