/* Precision policy: the f32 → bf16 conversion kernel at every ISA level
 * against the scalar reference (odd sizes, tails, special values), and the
 * load-time conversion of a weight set (kernels/precision.h). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/hugemem.h"
#include "io/safetensors.h"
#include "kernels/isa.h"
#include "kernels/precision.h"
#include "nn/transformer.h"
#include "testlib.h"

static void test_convert(void) {
    static const size_t sizes[] = {0, 1, 7, 8, 15, 16, 17, 31, 33, 100, 1023, 4099};
    const size_t nmax = 4099;
    float *x = malloc(nmax * sizeof(float));
    uint16_t *y = malloc(nmax * sizeof(uint16_t)), *r = malloc(nmax * sizeof(uint16_t));
    tl_fill_random(x, nmax, 7);
    /* special values: ties (even/odd mantissa), denormals, ±0, ±inf, NaNs, the largest finite */
    union { uint32_t u; float f; } v;
    const uint32_t sp[] = {0x3f808000u, 0x3f818000u, 0x3f807fffu, 0x00000001u, 0x807fffffu, 0x00000000u,
                           0x80000000u, 0x7f800000u, 0xff800000u, 0x7fc00000u, 0x7f800001u, 0xffffffffu,
                           0x7f7fffffu, 0x7f7f8000u, 0x00008000u};
    for (size_t i = 0; i < sizeof sp / sizeof sp[0]; i++) {
        v.u = sp[i];
        x[3 * i + 1] = v.f;
    }
    for (size_t i = 0; i < nmax; i++) r[i] = vx_f32_to_bf16(x[i]);
    for (int isa = 0; isa <= vx_cpu_isa(); isa++)
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
            for (size_t off = 0; off < 3; off++) { /* misaligned starts */
                size_t n = sizes[s] + off > nmax ? nmax - off : sizes[s];
                memset(y, 0xab, nmax * sizeof(uint16_t));
                vx_f32_to_bf16_isa(isa, y + off, x + off, n);
                int bad = memcmp(y + off, r + off, n * sizeof(uint16_t)) != 0;
                int over = off > 0 && y[off - 1] != 0xabab;
                if (off + n < nmax) over |= y[off + n] != 0xabab;
                CHECK_MSG(!bad && !over, "isa %d n %zu off %zu: %s", isa, n, off, bad ? "values differ" : "wrote outside");
            }
    /* the threaded entry point */
    const size_t big = (1u << 20) + 37;
    float *bx = malloc(big * sizeof(float));
    uint16_t *by = malloc(big * sizeof(uint16_t));
    tl_fill_random(bx, big, 11);
    vx_f32_to_bf16_n(by, bx, big, 2);
    size_t wrong = 0;
    for (size_t i = 0; i < big; i++) wrong += by[i] != vx_f32_to_bf16(bx[i]);
    CHECK_MSG(wrong == 0, "threaded conversion: %zu values differ", wrong);
    free(bx), free(by), free(x), free(y), free(r);
}

static void test_names(void) {
    CHECK(vx_precision_parse("exact") == VX_PREC_EXACT);
    CHECK(vx_precision_parse("bf16") == VX_PREC_BF16);
    CHECK(vx_precision_parse("q8") == VX_PREC_Q8);
    CHECK(vx_precision_parse("default") == VX_PREC_DEFAULT);
    CHECK(vx_precision_parse("fp32") == -1 && vx_precision_parse(NULL) == -1);
    CHECK(!strcmp(vx_precision_name(VX_PREC_EXACT), "exact") && !strcmp(vx_precision_name(VX_PREC_BF16), "bf16"));
    vx_err err = {0};
    CHECK(vx_precision_check(VX_PREC_EXACT, &err) == VOCIS_OK);
    CHECK(vx_precision_check(VX_PREC_BF16, &err) == VOCIS_OK);
    CHECK(vx_precision_check(VX_PREC_Q8, &err) == VOCIS_OK);
    CHECK(vx_precision_check(42, &err) == VOCIS_E_ARG);
    setenv("VOCIS_PRECISION", "exact", 1);
    CHECK(vx_precision_resolve(VX_PREC_DEFAULT) == VX_PREC_EXACT);
    CHECK(vx_precision_resolve_part(VX_PREC_DEFAULT, VX_PART_FLOW) == VX_PREC_EXACT);
    setenv("VOCIS_PRECISION", "bf16", 1);
    CHECK(vx_precision_resolve_part(VX_PREC_DEFAULT, VX_PART_LM) == VX_PREC_BF16);
    CHECK(vx_precision_resolve_part(VX_PREC_EXACT, VX_PART_FLOW) == VX_PREC_EXACT);
    CHECK(vx_precision_check(VX_PREC_DEFAULT, &err) == VOCIS_OK);
    setenv("VOCIS_PRECISION", "nonsense", 1);
    CHECK(vx_precision_resolve(VX_PREC_DEFAULT) == VX_PREC_EXACT);
    /* ... but the default then is refused (a typo must not silently mean the default); an explicit mode is not */
    CHECK(vx_precision_check(VX_PREC_DEFAULT, &err) == VOCIS_E_ARG);
    CHECK(strstr(err.msg, "VOCIS_PRECISION=nonsense") && strstr(err.msg, "exact, bf16, q8 or default"));
    CHECK(vx_precision_check(VX_PREC_EXACT, &err) == VOCIS_OK);
    setenv("VOCIS_PRECISION", "default", 1);
    CHECK(vx_precision_check(VX_PREC_DEFAULT, &err) == VOCIS_OK);
    unsetenv("VOCIS_PRECISION");
    /* the default: LMs exact (upstream's tokens), acoustic parts bf16 where the CPU has AVX512_BF16 */
    int audio = vx_cpu_has_avx512bf16() ? VX_PREC_BF16 : VX_PREC_EXACT;
    CHECK(vx_precision_resolve(VX_PREC_DEFAULT) == VX_PREC_EXACT);
    CHECK(vx_precision_resolve_part(VX_PREC_DEFAULT, VX_PART_FLOW) == audio);
    CHECK(!strcmp(vx_precision_describe(VX_PREC_DEFAULT), audio == VX_PREC_BF16
                                                               ? "default (T3/LM exact, S3Gen flow bf16, HiFT exact)"
                                                               : "exact"));
    CHECK(vx_precision_resolve(VX_PREC_BF16) == VX_PREC_BF16);
    CHECK(vx_precision_resolve_part(VX_PREC_Q8, VX_PART_FLOW) == VX_PREC_Q8);
    CHECK(vx_precision_resolve_part(VX_PREC_DEFAULT, VX_PART_VOCODER) == VX_PREC_EXACT);
    CHECK(vx_precision_resolve_part(VX_PREC_BF16, VX_PART_VOCODER) == VX_PREC_BF16);
}

/* A weight file with an f32 matrix (large enough to span whole pages), an
 * f16 one and a vector, converted under each policy. */
static void test_weights(void) {
    char dir[] = "/tmp/vocis_prec_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char path[300];
    snprintf(path, sizeof path, "%s/w.safetensors", dir);
    const int64_t R = 37, C = 301; /* 44 KiB of f32 */
    float *a = malloc(sizeof(float) * R * C);
    uint16_t h[6];
    tl_fill_random(a, (size_t)(R * C), 3);
    for (int i = 0; i < 6; i++) h[i] = vx_f32_to_f16(0.25f * (float)i);
    float vec[3] = {1, 2, 3};
    vx_err err = {0};
    vx_st_writer *wr = vx_st_writer_new();
    CHECK(vx_st_writer_add(wr, "m", VX_F32, 2, (const int64_t[]){R, C}, a, &err) == VOCIS_OK);
    CHECK(vx_st_writer_add(wr, "h", VX_F16, 2, (const int64_t[]){2, 3}, h, &err) == VOCIS_OK);
    CHECK(vx_st_writer_add(wr, "v", VX_F32, 1, (const int64_t[]){3}, vec, &err) == VOCIS_OK);
    CHECK(vx_st_writer_save(wr, path, &err) == VOCIS_OK);
    vx_st_writer_free(wr);
    for (int p = VX_PREC_DEFAULT; p <= VX_PREC_BF16; p++) {
        vx_weights *w;
        if (vx_weights_open(path, &w, &err) != VOCIS_OK) {
            CHECK_MSG(0, "%s", err.msg);
            continue;
        }
        if (p) vx_weights_set_precision(w, p); /* p = 0: never set (exact) */
        vx_mat m, m2, mh;
        CHECK(vx_weights_mat(w, "m", R, C, &m, &err) == VOCIS_OK);
        CHECK(vx_weights_mat(w, "m", R, C, &m2, &err) == VOCIS_OK); /* the same tensor again: one copy */
        CHECK(vx_weights_mat(w, "h", 2, 3, &mh, &err) == VOCIS_OK);
        CHECK(mh.dtype == VX_F16); /* F16 stays as stored */
        CHECK(m.data == m2.data);
        const vx_tensor *t = vx_weights_find(w, "m", NULL);
        if (p == VX_PREC_BF16) {
            CHECK(m.dtype == VX_BF16 && m.data != t->data && m.rows == R && m.cols == C);
            size_t wrong = 0;
            for (int64_t i = 0; i < R * C; i++) wrong += ((const uint16_t *)m.data)[i] != vx_f32_to_bf16(a[i]);
            CHECK_MSG(wrong == 0, "%zu converted values differ", wrong);
        } else {
            CHECK(m.dtype == VX_F32 && m.data == t->data);
        }
        /* the original reads back intact after its pages were dropped */
        CHECK(memcmp(t->data, a, sizeof(float) * R * C) == 0);
        float y[2], x[301];
        tl_fill_random(x, 301, 5);
        vx_mat row = m;
        row.rows = 2;
        vx_linear(y, x, 1, &row, NULL, 1);
        double ref = 0;
        for (int k = 0; k < C; k++) ref += (double)x[k] * a[k];
        CHECK_MSG(fabs(y[0] - ref) < (p == VX_PREC_BF16 ? 0.05 : 1e-4), "linear %g vs %g", y[0], ref);
        vx_weights_close(w);
    }
    unlink(path);
    rmdir(dir);
    free(a);
}

/* Matrices used as stored (precision.h, step 2b): one of at least a huge page
 * is copied out of the file mapping, keeps its values, is shared by two views
 * and is left mapped when the loader repacks it; a small one stays mapped. A
 * bf16-stored matrix is copied under the bf16 policy too. */
static void test_streamed_copy(void) {
    char dir[] = "/tmp/vocis_prec_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char path[300];
    snprintf(path, sizeof path, "%s/big.safetensors", dir);
    const int64_t R = 515, C = 1031; /* 2.03 MiB of f32: one whole huge page and a tail */
    const int64_t RB = 1031, CB = 1027; /* 2.02 MiB of bf16 */
    const int64_t RS = 37, CS = 301;  /* 44 KiB */
    float *a = malloc(sizeof(float) * (size_t)(R * C));
    uint16_t *b = malloc(sizeof(uint16_t) * (size_t)(RB * CB));
    tl_fill_random(a, (size_t)(R * C), 11);
    for (int64_t i = 0; i < RB * CB; i++) b[i] = vx_f32_to_bf16(a[i % (R * C)] * 3.0f);
    CHECK(sizeof(float) * (size_t)(R * C) >= VX_HUGE_PAGE_BYTES && sizeof(uint16_t) * (size_t)(RB * CB) >= VX_HUGE_PAGE_BYTES);
    vx_err err = {0};
    vx_st_writer *wr = vx_st_writer_new();
    CHECK(vx_st_writer_add(wr, "big", VX_F32, 2, (const int64_t[]){R, C}, a, &err) == VOCIS_OK);
    CHECK(vx_st_writer_add(wr, "big16", VX_BF16, 2, (const int64_t[]){RB, CB}, b, &err) == VOCIS_OK);
    CHECK(vx_st_writer_add(wr, "small", VX_F32, 2, (const int64_t[]){RS, CS}, a, &err) == VOCIS_OK);
    CHECK(vx_st_writer_add(wr, "packed", VX_F32, 2, (const int64_t[]){R, C}, a, &err) == VOCIS_OK);
    CHECK(vx_st_writer_save(wr, path, &err) == VOCIS_OK);
    vx_st_writer_free(wr);
    for (int p = VX_PREC_DEFAULT; p <= VX_PREC_BF16; p++) {
        vx_weights *w;
        if (vx_weights_open(path, &w, &err) != VOCIS_OK) {
            CHECK_MSG(0, "%s", err.msg);
            continue;
        }
        if (p) vx_weights_set_precision(w, p);
        const vx_tensor *tb = vx_weights_find(w, "big", NULL), *t16 = vx_weights_find(w, "big16", NULL);
        const vx_tensor *ts = vx_weights_find(w, "small", NULL), *tp = vx_weights_find(w, "packed", NULL);
        CHECK(vx_weights_mapped(w, tb->data, sizeof(float) * (size_t)(R * C)));
        vx_mat m, m2, m16, ms, mp;
        CHECK(vx_weights_linear(w, "big", R, C, &m, &err) == VOCIS_OK);
        CHECK(vx_weights_mat(w, "big", R, C, &m2, &err) == VOCIS_OK);
        CHECK(vx_weights_mat(w, "big16", RB, CB, &m16, &err) == VOCIS_OK);
        CHECK(vx_weights_mat(w, "small", RS, CS, &ms, &err) == VOCIS_OK);
        mp = vx_mat_of(tp);
        CHECK(vx_weights_mat_policy(w, &mp, VX_W_TF_LINEAR | VX_W_REPACKED, &err) == VOCIS_OK);
        CHECK(m2.data == m.data); /* two views of one tensor: one copy */
        CHECK(m16.dtype == VX_BF16 && m16.data != t16->data && !vx_weights_mapped(w, m16.data, 2));
        CHECK((uintptr_t)m16.data % VX_HUGE_PAGE_BYTES == 0);
        CHECK(memcmp(m16.data, b, sizeof(uint16_t) * (size_t)(RB * CB)) == 0);
        CHECK_MSG(memcmp(t16->data, b, sizeof(uint16_t) * (size_t)(RB * CB)) == 0, "file tensor after release");
        if (p == VX_PREC_BF16) {
            CHECK(m.dtype == VX_BF16 && mp.dtype == VX_BF16 && ms.dtype == VX_BF16); /* converted, as before */
        } else {
            CHECK(m.dtype == VX_F32 && m.data != tb->data && !vx_weights_mapped(w, m.data, 4));
            CHECK((uintptr_t)m.data % VX_HUGE_PAGE_BYTES == 0);
            CHECK(memcmp(m.data, a, sizeof(float) * (size_t)(R * C)) == 0);
            CHECK(memcmp(tb->data, a, sizeof(float) * (size_t)(R * C)) == 0); /* the file reads back intact */
            CHECK(ms.dtype == VX_F32 && ms.data == ts->data);                   /* too small: mapped */
            CHECK(mp.dtype == VX_F32 && mp.data == tp->data);                   /* repacked by its loader */
        }
        vx_weights_close(w);
    }
    /* a set whose data is not a file mapping keeps its views (nothing could be dropped) */
    vx_tensor view = {.dtype = VX_F32, .ndim = 2, .shape = {R, C}, .data = a};
    vx_weights *w;
    CHECK(vx_weights_from_views("views", 1, (const char *const[]){"big"}, &view, NULL, NULL, &w, &err) == VOCIS_OK);
    vx_mat m;
    CHECK(vx_weights_mat(w, "big", R, C, &m, &err) == VOCIS_OK);
    CHECK(m.data == a && !vx_weights_mapped(w, a, 4));
    vx_weights_close(w);
    unlink(path);
    rmdir(dir);
    free(a);
    free(b);
}

int main(int argc, char **argv) {
    (void)argc, (void)argv;
    test_convert();
    test_names();
    test_weights();
    test_streamed_copy();
    return tl_finish("test_precision");
}
