/* The kernels that moved from OpenMP to the thread pool (conv, time-major
 * conv, Snake, im2col, relative-position attention, bf16 / q8 conversion,
 * spectra, resampling, fbank, the many-row linears' weight panels): the same bits for 1, 2, 3 and 5 threads,
 * on odd sizes that leave short last chunks. No timing. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "audio/fbank.h"
#include "audio/resample.h"
#include "audio/spectral.h"
#include "kernels/conv.h"
#include "kernels/isa.h"
#include "kernels/kernels.h"
#include "kernels/ops_extra.h"
#include "kernels/precision.h"
#include "testlib.h"

static const int THREADS[] = {2, 3, 5};

/* A case writes `bytes` of output for a thread count. */
typedef void (*run_fn)(void *ctx, int nthreads, void *out);

static void same_bits(const char *name, run_fn run, void *ctx, size_t bytes) {
    unsigned char *ref = calloc(1, bytes), *got = malloc(bytes);
    run(ctx, 1, ref);
    for (size_t i = 0; i < sizeof THREADS / sizeof THREADS[0]; i++) {
        memset(got, 0xa5, bytes);
        run(ctx, THREADS[i], got);
        CHECK_MSG(memcmp(ref, got, bytes) == 0, "%s: threads=%d differs from 1 thread", name, THREADS[i]);
    }
    free(ref), free(got);
}

/* ---- channel-major conv / transposed conv ---- */

typedef struct {
    int64_t B, lin, cin, cout, k, stride, dil, groups, pad;
    float *x, *w, *bias;
} conv_case;

static void run_conv(void *ctx, int nt, void *out) {
    conv_case *c = ctx;
    vx_conv1d_params p = {c->cin, c->cout, c->k, c->stride, c->dil, c->groups, c->pad, c->pad};
    vx_mat m = {VX_F32, c->cout, c->cin / c->groups * c->k, c->w};
    vx_conv1d(out, c->x, c->B, c->lin, &p, &m, c->bias, nt);
}

static void run_convtr(void *ctx, int nt, void *out) {
    conv_case *c = ctx;
    vx_convtr1d_params p = {c->cin, c->cout, c->k, c->stride, c->groups, c->pad};
    vx_mat m = {VX_F32, c->cin, c->cout / c->groups * c->k, c->w};
    vx_convtr1d(out, c->x, c->B, c->lin, &p, &m, c->bias, nt);
}

static void test_conv(void) {
    /* GEMM tiles in parallel; depthwise (direct loop); the transposed conv's overlap-add */
    static const conv_case cases[] = {
        {2, 3001, 24, 40, 5, 1, 2, 1, 4}, {1, 777, 16, 16, 7, 2, 1, 16, 3}, {3, 301, 12, 18, 3, 1, 1, 3, 1}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        conv_case c = cases[i];
        c.x = tl_random_floats((size_t)(c.B * c.cin * c.lin));
        c.w = tl_random_floats((size_t)(c.cout * c.cin * c.k));
        c.bias = tl_random_floats((size_t)c.cout);
        vx_conv1d_params p = {c.cin, c.cout, c.k, c.stride, c.dil, c.groups, c.pad, c.pad};
        same_bits("conv1d", run_conv, &c, sizeof(float) * (size_t)(c.B * c.cout * vx_conv1d_out_len(&p, c.lin)));
        vx_convtr1d_params q = {c.cin, c.cout, c.k, c.stride, c.groups, c.pad};
        same_bits("convtr1d", run_convtr, &c, sizeof(float) * (size_t)(c.B * c.cout * vx_convtr1d_out_len(&q, c.lin)));
        free(c.x), free(c.w), free(c.bias);
    }
}

/* ---- time-major conv (blocks of rows), transposed conv, Snake ---- */

typedef struct {
    int64_t lin, cin, cout, k, stride, dil, pad, margin;
    float *xmem, *w, *bias, *alpha, *inv;
    int snake;
} tm_case;

static void run_tm(void *ctx, int nt, void *out) {
    tm_case *c = ctx;
    const float *x = c->xmem + c->margin * c->cin;
    vx_mat m = {VX_F32, c->cout, c->k * c->cin, c->w};
    const int64_t lout = (c->lin + 2 * c->pad - c->dil * (c->k - 1) - 1) / c->stride + 1;
    if (c->snake)
        vx_conv1d_tm_snake(out, c->cout, x, c->cin, lout, c->cin, c->cout, c->k, c->stride, c->dil, c->pad, &m, c->bias,
                           0, c->alpha, c->inv, out, c->cout, nt);
    else
        vx_conv1d_tm_margin(out, c->cout, x, c->cin, lout, c->cin, c->cout, c->k, c->stride, c->dil, c->pad, &m,
                            c->bias, 0, nt);
}

static void run_tr_tm(void *ctx, int nt, void *out) {
    tm_case *c = ctx;
    vx_mat m = {VX_F32, c->k * c->cout, c->cin, c->w};
    vx_convtr1d_tm(out, c->cout, c->xmem, c->cin, c->lin, c->cin, c->cout, c->k, c->stride, c->pad, &m, c->bias, nt);
}

static void run_snake(void *ctx, int nt, void *out) {
    tm_case *c = ctx;
    vx_snake_tm(out, c->cin, c->xmem, c->cin, c->alpha, c->inv, c->lin, c->cin, nt);
}

static void test_conv_tm(void) {
    static const tm_case cases[] = {{2999, 24, 33, 7, 1, 3, 9, 16}, {1501, 20, 17, 3, 2, 1, 1, 16}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tm_case c = cases[i];
        const int64_t rows = c.lin + 2 * c.margin;
        c.xmem = tl_random_floats((size_t)(rows * c.cin));
        memset(c.xmem, 0, sizeof(float) * (size_t)(c.margin * c.cin)); /* zero margins: the padding */
        memset(c.xmem + (c.margin + c.lin) * c.cin, 0, sizeof(float) * (size_t)(c.margin * c.cin));
        c.w = tl_random_floats((size_t)(c.cout * c.k * c.cin));
        c.bias = tl_random_floats((size_t)c.cout);
        const int64_t ch = c.cout > c.cin ? c.cout : c.cin;
        c.alpha = tl_random_floats((size_t)ch);
        c.inv = malloc(sizeof(float) * (size_t)ch);
        for (int64_t j = 0; j < ch; j++) c.alpha[j] = 0.5f + c.alpha[j] * c.alpha[j];
        vx_snake_inv(c.inv, c.alpha, ch);
        const int64_t lout = (c.lin + 2 * c.pad - c.dil * (c.k - 1) - 1) / c.stride + 1;
        for (c.snake = 0; c.snake < 2; c.snake++)
            same_bits(c.snake ? "conv1d_tm_snake" : "conv1d_tm_margin", run_tm, &c,
                      sizeof(float) * (size_t)(lout * c.cout));
        same_bits("convtr1d_tm", run_tr_tm, &c,
                  sizeof(float) * (size_t)(vx_convtr1d_tm_out_len(c.lin, c.k, c.stride, c.pad) * c.cout));
        same_bits("snake_tm", run_snake, &c, sizeof(float) * (size_t)(c.lin * c.cin));
        free(c.xmem), free(c.w), free(c.bias), free(c.alpha), free(c.inv);
    }
}

/* ---- im2col conv (ops_extra), relative-position attention ---- */

typedef struct {
    int64_t B, lin, cin, cout, k, dil;
    float *x, *w, *bias, *col;
} im2col_case;

static void run_im2col(void *ctx, int nt, void *out) {
    im2col_case *c = ctx;
    vx_mat m = {VX_F32, c->cout, c->cin * c->k, c->w};
    vx_conv1d_tm(out, c->x, c->B, c->lin, c->cin, c->k, c->dil, c->dil * (c->k - 1), 0, &m, c->bias, c->col, nt);
}

typedef struct {
    int64_t L;
    int H, dk;
    float *q, *k, *v, *p, *u, *pv;
} relpos_case;

static void run_relpos(void *ctx, int nt, void *out) {
    relpos_case *c = ctx;
    float *scratch = malloc(sizeof(float) * (size_t)vx_relpos_attention_scratch(c->L, c->dk, nt));
    vx_relpos_attention(out, c->q, c->k, c->v, c->p, c->u, c->pv, c->L, c->H, c->dk, scratch, nt);
    free(scratch);
}

static void test_ops_extra(void) {
    im2col_case c = {2, 1203, 37, 29, 3, 2};
    c.x = tl_random_floats((size_t)(c.B * c.lin * c.cin));
    c.w = tl_random_floats((size_t)(c.cout * c.cin * c.k));
    c.bias = tl_random_floats((size_t)c.cout);
    c.col = malloc(sizeof(float) * (size_t)(c.B * c.lin * c.cin * c.k));
    same_bits("conv1d_tm (im2col)", run_im2col, &c, sizeof(float) * (size_t)(c.B * c.lin * c.cout));
    free(c.x), free(c.w), free(c.bias), free(c.col);

    relpos_case r = {300, 4, 32};
    const size_t n = (size_t)(r.L * r.H * r.dk);
    r.q = tl_random_floats(n), r.k = tl_random_floats(n), r.v = tl_random_floats(n);
    r.p = tl_random_floats((size_t)((2 * r.L - 1) * r.H * r.dk));
    r.u = tl_random_floats((size_t)(r.H * r.dk)), r.pv = tl_random_floats((size_t)(r.H * r.dk));
    same_bits("relpos_attention", run_relpos, &r, sizeof(float) * n);
    free(r.q), free(r.k), free(r.v), free(r.p), free(r.u), free(r.pv);
}

/* ---- load-time conversions ---- */

typedef struct {
    float *x;
    size_t n;
    int64_t rows, cols;
} cvt_case;

static void run_bf16(void *ctx, int nt, void *out) {
    cvt_case *c = ctx;
    vx_f32_to_bf16_n(out, c->x, c->n, nt);
}

static void run_q8(void *ctx, int nt, void *out) {
    cvt_case *c = ctx;
    vx_mat src = {.dtype = VX_F32, .rows = c->rows, .cols = c->cols, .data = c->x};
    vx_q8_quantize(out, &src, nt);
    memset(out, 0, 64); /* the header holds pointers into the buffer */
}

static void test_conversions(void) {
    cvt_case c = {NULL, 1031 * 1027, 1031, 1027}; /* over 2^20 values: threaded */
    c.x = tl_random_floats(c.n);
    same_bits("f32_to_bf16_n", run_bf16, &c, sizeof(uint16_t) * c.n);
    same_bits("q8_quantize", run_q8, &c, vx_q8_bytes(c.rows, c.cols));
    free(c.x);
}

/* ---- audio front ends ---- */

typedef struct {
    float *x;
    int64_t n;
    float window[400];
    int64_t frames;
} audio_case;

static void run_spectrum(void *ctx, int nt, void *out) {
    audio_case *c = ctx;
    vx_frames_spec s = {512, 400, 160, 1, 0, c->window};
    vx_err err = {0};
    CHECK(vx_spectrum(c->x, c->n, &s, VX_SPEC_MAG_EPS9, 0, c->frames, out, nt, &err) == VOCIS_OK);
}

static void run_resample(void *ctx, int nt, void *out) {
    audio_case *c = ctx;
    float *y = NULL;
    int64_t m = 0;
    vx_err err = {0};
    CHECK(vx_resample_sinc(c->x, c->n, 24000, 16000, &y, &m, nt, &err) == VOCIS_OK);
    if (y) memcpy(out, y, sizeof(float) * (size_t)m);
    free(y);
}

static void run_fbank(void *ctx, int nt, void *out) {
    audio_case *c = ctx;
    float *fb = NULL;
    int64_t frames = 0;
    vx_err err = {0};
    CHECK(vx_kaldi_fbank(c->x, c->n, 16000, 80, &fb, &frames, nt, &err) == VOCIS_OK);
    if (fb) memcpy(out, fb, sizeof(float) * (size_t)(frames * 80));
    free(fb);
}

static void test_audio(void) {
    audio_case c;
    c.n = 24000 + 1234;
    c.x = tl_random_floats((size_t)c.n);
    vx_window_hann(c.window, 400, 1);
    vx_frames_spec s = {512, 400, 160, 1, 0, c.window};
    c.frames = vx_frames_count(&s, c.n);
    same_bits("spectrum", run_spectrum, &c, sizeof(float) * (size_t)(c.frames * 257));
    same_bits("resample_sinc", run_resample, &c, sizeof(float) * (size_t)((c.n * 2 + 2) / 3));
    vx_fbank_geom g;
    vx_err err = {0};
    CHECK(vx_kaldi_fbank_geom(16000, &g, &err) == VOCIS_OK);
    same_bits("kaldi_fbank", run_fbank, &c, sizeof(float) * (size_t)(vx_kaldi_fbank_frames(&g, c.n) * 80));
    free(c.x);
}

/* ---- many-row linears by panels of W rows: bf16 W below AVX-512 (converted
 * to f32 per panel, then sgemm), q8 W at any level (dequantized per panel) ---- */

typedef struct {
    int isa;
    int64_t M;
    vx_mat W;
    const float *x, *bias;
} panel_case;

static void run_linear(void *ctx, int nt, void *out) {
    panel_case *c = ctx;
    vx_linear_isa(c->isa, out, c->x, c->M, &c->W, c->bias, nt);
}

static void test_linear_panels(void) {
    const int64_t M = 40, N = 1301, K = 97; /* 6 panels of 256 rows, the last short */
    float *w = tl_random_floats((size_t)(N * K)), *x = tl_random_floats((size_t)(M * K));
    float *bias = tl_random_floats((size_t)N);
    uint16_t *w16 = malloc(sizeof(uint16_t) * (size_t)(N * K));
    void *q = malloc(vx_q8_bytes(N, K));
    vx_f32_to_bf16_n(w16, w, (size_t)(N * K), 1);
    vx_mat src = {.dtype = VX_F32, .rows = N, .cols = K, .data = w};
    panel_case c = {VX_ISA_AVX2, M, {.dtype = VX_BF16, .rows = N, .cols = K, .data = w16}, x, bias};
    same_bits("linear bf16 panels (avx2)", run_linear, &c, sizeof(float) * (size_t)(M * N));
    c.W = vx_q8_quantize(q, &src, 1);
    for (int isa = VX_ISA_SCALAR; isa <= vx_cpu_isa(); isa++) {
        c.isa = isa;
        same_bits("linear q8 panels", run_linear, &c, sizeof(float) * (size_t)(M * N));
    }
    free(w), free(x), free(bias), free(w16), free(q);
}

int main(int argc, char **argv) {
    (void)argc, (void)argv;
    test_linear_panels();
    test_conv();
    test_conv_tm();
    test_ops_extra();
    test_conversions();
    test_audio();
    return tl_finish("test_pool_kernels");
}
