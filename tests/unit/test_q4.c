/* The speculative draft's linears (kernels/precision.h): q4 weights (the
 * quantizer's round trip and layout) and vx_linear on VX_Q4 matrices at
 * every ISA level this CPU runs — odd sizes, short last blocks and groups,
 * tails of every tile, many rows, threads — bit for bit against a scalar
 * reference written from precision.h's description (x per block of 32 in
 * one int8 part, exact integer sums, one fma per block, the fixed 16-lane
 * sum), and against a double reference on the dequantized weights within
 * the bound x's quantization allows; then vx_draft_quantize: its format,
 * size, bits across thread counts 1/2/3/5 and across M (a row alone or
 * among others), and the dot-product error precision.h documents. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/isa.h"
#include "kernels/kernels.h"
#include "kernels/precision.h"
#include "testlib.h"

static int64_t nblk(int64_t K) { return (K + VX_Q8_BLOCK - 1) / VX_Q8_BLOCK; }

/* Quantizes w (f32, or its bf16/f16 rounding) and checks every block and the padding. */
static void test_roundtrip_case(vx_dtype dt, int64_t R, int64_t C) {
    float *w = tl_random_floats((size_t)(R * C));
    for (int64_t i = 0; i < R * C; i++) w[i] *= (float)(1 + (i / 7) % 5); /* blocks of different ranges */
    if (C >= 40)
        for (int64_t k = 0; k < 32; k++) w[k] = 0; /* an all-zero block */
    float *ref = malloc(sizeof(float) * (size_t)(R * C + 1));
    void *src = tl_store_as(dt, w, (size_t)(R * C), ref);
    vx_mat in = {.dtype = dt, .rows = R, .cols = C, .data = src};
    const size_t bytes = vx_q4_bytes(R, C);
    uint8_t *buf = malloc(bytes);
    memset(buf, 0x5a, bytes); /* the quantizer must write every byte the kernels read */
    vx_mat q = vx_q4_quantize(buf, &in, 2);
    CHECK(q.dtype == VX_Q4 && q.rows == R && q.cols == C && q.data == buf);
    const vx_q8 *hq = q.data;
    const int64_t RS = vx_q4_row_bytes(C), nb = nblk(C), ng = (nb + VX_Q8_GROUP - 1) / VX_Q8_GROUP;
    CHECK(RS == ng * 64 + nb * 16);
    CHECK((const uint8_t *)hq->q + R * RS <= buf + bytes);
    for (int64_t r = 0; r < R; r++) {
        const uint8_t *row = (const uint8_t *)hq->q + r * RS, *lastg = row + (ng - 1) * (64 + 16 * VX_Q8_GROUP);
        for (int64_t j = nb - (ng - 1) * VX_Q8_GROUP; j < VX_Q8_GROUP; j++) {
            float z;
            memcpy(&z, lastg + 4 * j, 4);
            CHECK_MSG(z == 0, "q4 %lldx%lld: scale of pad block %lld is %g", (long long)R, (long long)C, (long long)j, z);
        }
        /* codes past cols: q = 0, written out by hand from the layout (low nibble: value 8t + i) */
        const int g = (int)(nb - (ng - 1) * VX_Q8_GROUP);
        for (int64_t k = C; k < nb * 32; k++) {
            const int p = (int)(k % 32), byte = lastg[64 + (p / 8) * 4 * g + 4 * (g - 1) + p % 4];
            CHECK(((p / 4) & 1 ? byte >> 4 : byte & 15) == 8);
        }
    }
    int bad = 0;
    for (int64_t r = 0; r < R && !bad; r++)
        for (int64_t b = 0; b < nb && !bad; b++) {
            const int64_t k0 = b * VX_Q8_BLOCK, k1 = k0 + VX_Q8_BLOCK < C ? k0 + VX_Q8_BLOCK : C;
            float amax = 0, s = 0;
            int qmax = 0;
            for (int64_t k = k0; k < k1; k++) amax = fmaxf(amax, fabsf(ref[r * C + k]));
            for (int64_t k = k0; k < k1; k++) {
                int v;
                vx_q4_weight(&q, r, k, &v, &s);
                if (s != amax / 7.0f) bad = 1;
                qmax = abs(v) > qmax ? abs(v) : qmax;
                if (v < -7 || v > 7 || fabs((double)v * s - ref[r * C + k]) > s * (0.5 + 3e-5)) bad = 2;
            }
            if (amax > 0 && qmax != 7) bad = 3;
            if (bad)
                CHECK_MSG(0, "q4 %s %lldx%lld row %lld block %lld: %s", vx_dtype_name(dt), (long long)R,
                          (long long)C, (long long)r, (long long)b,
                          bad == 1 ? "scale != max/7" : bad == 2 ? "value off by more than scale/2"
                                                               : "max does not map to 7");
        }
    free(buf), free(ref), free(src), free(w);
}

static void test_roundtrip(void) {
    static const int64_t shapes[][2] = {{1, 1}, {3, 31}, {2, 32}, {5, 33}, {7, 100}, {4, 64}, {130, 47},
                                        {3, 512}, {2, 513}, {3, 1000}, {2, 1537}};
    static const vx_dtype dts[] = {VX_F32, VX_F16, VX_BF16};
    for (int d = 0; d < 3; d++)
        for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) test_roundtrip_case(dts[d], shapes[s][0], shapes[s][1]);
    test_roundtrip_case(VX_F32, 700, 1537); /* > 2^20 values: the threaded quantizer */
    CHECK(strcmp(vx_dtype_name(VX_Q4), "Q4") == 0 && strcmp(vx_dtype_name(VX_Q8D), "Q8D") == 0);
    CHECK(vx_dtype_size(VX_Q8D) == 1 && vx_dtype_size(VX_Q4) == 0);
    vx_dtype dt;
    CHECK(vx_dtype_from_name("Q4", &dt) != 0 && vx_dtype_from_name("Q8D", &dt) != 0); /* never file dtypes */
}

/* A draft-format matrix (q4, or q8d: q8 weights, x in one part) of random weights and its dequantized values. */
static void *make_mat(vx_dtype fmt, int64_t N, int64_t K, vx_mat *W, double **deq) {
    float *w = tl_random_floats((size_t)(N * K));
    vx_mat in = {.dtype = VX_F32, .rows = N, .cols = K, .data = w};
    void *buf;
    if (fmt == VX_Q4) {
        buf = malloc(vx_q4_bytes(N, K));
        *W = vx_q4_quantize(buf, &in, 1);
    } else {
        buf = malloc(vx_q8_bytes(N, K));
        *W = vx_q8_quantize(buf, &in, 1);
        W->dtype = VX_Q8D;
    }
    *deq = malloc(sizeof(double) * (size_t)(N * K + 1));
    for (int64_t n = 0; n < N; n++)
        for (int64_t k = 0; k < K; k++) {
            int q;
            float sc;
            if (W->dtype == VX_Q4) vx_q4_weight(W, n, k, &q, &sc);
            else vx_q8_weight(W, n, k, &q, &sc);
            (*deq)[n * K + k] = (double)q * sc;
        }
    free(w);
    return buf;
}

/* The draft arithmetic (precision.h), written out: x per block of 32 → sx = max|x|/127 and codes
 * h = rint(x/sx) (NaN for a block with a non-finite value, zeros below 1e-30); per W row and
 * block the exact integer sum I = Σq·h; lane j = block % 16: acc[j] = fma((float)I, sw·sx,
 * acc[j]); then ((a0+a4)+(a2+a6)) + ((a1+a5)+(a3+a7)) of a[i] = acc[i] + acc[i+8]. */
static void ref_draft(float *y, const float *x, int64_t M, const vx_mat *W, const float *bias) {
    const int64_t K = W->cols, N = W->rows, nb = nblk(K);
    int *h = calloc((size_t)(nb * 32 + 1), sizeof(int));
    float *sx = calloc((size_t)(nb + 1), sizeof(float));
    for (int64_t m = 0; m < M; m++) {
        const float *xm = x + m * K;
        for (int64_t b = 0; b < nb; b++) {
            const int64_t k0 = b * 32, k1 = k0 + 32 < K ? k0 + 32 : K;
            float amax = 0;
            int bad = 0;
            for (int64_t k = k0; k < k1; k++) {
                if (!(fabsf(xm[k]) <= FLT_MAX)) bad = 1;
                amax = fmaxf(amax, fabsf(xm[k]));
            }
            for (int64_t k = k0; k < k0 + 32; k++) h[k] = 0;
            if (bad || amax < 1e-30f) {
                sx[b] = bad ? NAN : 0.0f;
                continue;
            }
            const float inv = 127.0f / amax;
            for (int64_t k = k0; k < k1; k++) h[k] = (int)rintf(xm[k] * inv);
            sx[b] = amax / 127.0f;
        }
        for (int64_t n = 0; n < N; n++) {
            float acc[16] = {0};
            for (int64_t b = 0; b < nb; b++) {
                int64_t I = 0;
                float sw = 0;
                for (int64_t k = b * 32; k < b * 32 + 32 && k < K; k++) {
                    int q;
                    if (W->dtype == VX_Q4) vx_q4_weight(W, n, k, &q, &sw);
                    else vx_q8_weight(W, n, k, &q, &sw);
                    I += (int64_t)q * h[k];
                }
                acc[b % 16] = fmaf((float)I, sw * sx[b], acc[b % 16]);
            }
            float a[8];
            for (int i = 0; i < 8; i++) a[i] = acc[i] + acc[i + 8];
            y[m * N + n] = (((a[0] + a[4]) + (a[2] + a[6])) + ((a[1] + a[5]) + (a[3] + a[7]))) + (bias ? bias[n] : 0.0f);
        }
    }
    free(h), free(sx);
}

/* |x − x̂| per value: half a step of max|x|/127 of its block. */
static double x_err(const float *xm, int64_t K, int64_t k) {
    const int64_t k0 = k / 32 * 32, k1 = k0 + 32 < K ? k0 + 32 : K;
    float amax = 0;
    for (int64_t j = k0; j < k1; j++) amax = fmaxf(amax, fabsf(xm[j]));
    return amax / 127.0 * 0.5 * (1 + 1e-4) + 1e-30;
}

static void test_linear_case(vx_dtype fmt, int isa, int64_t M, int64_t K, int64_t N, int with_bias, int nthreads) {
    vx_mat W;
    double *deq;
    void *buf = make_mat(fmt, N, K, &W, &deq);
    float *x = tl_random_floats((size_t)(M * K)), *b = tl_random_floats((size_t)N);
    for (int64_t i = 0; i < M * K; i++) x[i] *= (float)(1 + (i / 29) % 7); /* blocks of different ranges */
    float *y = malloc(sizeof(float) * (size_t)(M * N)); /* exact size: ASan sees writes past the end */
    vx_linear_isa(isa, y, x, M, &W, with_bias ? b : NULL, nthreads);
    char what[160];
    snprintf(what, sizeof what, "%s linear %s M=%lld K=%lld N=%lld bias=%d threads=%d", vx_dtype_name(W.dtype),
             tl_isa_name[isa], (long long)M, (long long)K, (long long)N, with_bias, nthreads);
    int fails = 0;
    const int decode = W.dtype == VX_Q4 || M < 32; /* q8d's panel path (f32 activations) from 32 rows */
    for (int64_t m = 0; m < M && !fails; m++)
        for (int64_t n = 0; n < N && !fails; n++) {
            double s = with_bias ? b[n] : 0, a = with_bias ? fabs(b[n]) : 0, xe = 0;
            for (int64_t k = 0; k < K; k++) {
                s += (double)x[m * K + k] * deq[n * K + k];
                a += fabs((double)x[m * K + k] * deq[n * K + k]);
                if (decode) xe += fabs(deq[n * K + k]) * x_err(x + m * K, K, k);
            }
            const double d = fabs(y[m * N + n] - s);
            if (!(d <= 2e-6 * a + xe + 1e-7)) {
                fprintf(stderr, "%s: [%lld,%lld] %.9g vs %.9g (|diff| %.3g, scale %.3g, x bound %.3g)\n", what,
                        (long long)m, (long long)n, y[m * N + n], s, d, a, xe);
                tl_failures++;
                fails = 1;
            }
        }
    if (decode && !fails) {
        float *yr = malloc(sizeof(float) * (size_t)(M * N));
        ref_draft(yr, x, M, &W, with_bias ? b : NULL);
        for (int64_t i = 0; i < M * N; i++)
            if (memcmp(&yr[i], &y[i], sizeof(float)) != 0) {
                CHECK_MSG(0, "%s: [%lld,%lld] %.9g, reference %.9g", what, (long long)(i / N), (long long)(i % N), y[i],
                          yr[i]);
                break;
            }
        free(yr);
        /* an x row gives the same bits alone (M = 1, 1 thread) as in a batch on any thread count */
        float *y1 = malloc(sizeof(float) * (size_t)N);
        for (int64_t m = 0; m < M; m++) {
            vx_linear_isa(isa, y1, x + m * K, 1, &W, with_bias ? b : NULL, 1);
            if (memcmp(y1, y + m * N, sizeof(float) * (size_t)N) != 0) {
                CHECK_MSG(0, "%s: row %lld differs from the same row alone", what, (long long)m);
                break;
            }
        }
        free(y1);
    }
    free(buf), free(deq), free(x), free(b), free(y);
}

/* Odd x values: a NaN or infinity poisons its row only; a block below 1e-30 counts as zeros. */
static void test_odd_x(vx_dtype fmt, int isa) {
    const int64_t K = 70, N = 9, M = 4;
    vx_mat W;
    double *deq;
    void *buf = make_mat(fmt, N, K, &W, &deq);
    float *x = tl_random_floats((size_t)(M * K)), y[4 * 9], yr[4 * 9];
    x[0 * K + 40] = NAN;
    x[1 * K + 3] = INFINITY;
    for (int64_t k = 32; k < 64; k++) x[2 * K + k] = 1e-33f * (float)(k - 40);
    for (int64_t k = 0; k < 32; k++) x[3 * K + k] = 3e38f * (k & 1 ? 1.0f : -0.5f);
    vx_linear_isa(isa, y, x, M, &W, NULL, 1);
    ref_draft(yr, x, M, &W, NULL);
    CHECK_MSG(memcmp(y, yr, sizeof y) == 0, "%s %s: odd x values differ from the reference", vx_dtype_name(W.dtype),
              tl_isa_name[isa]);
    for (int64_t n = 0; n < N; n++) {
        CHECK(isnan(y[0 * N + n]) && isnan(y[1 * N + n]));
        CHECK(isfinite(y[2 * N + n]) && !isnan(y[3 * N + n]));
    }
    free(buf), free(deq), free(x);
}

static void test_linear(vx_dtype fmt) {
    static const int64_t shapes[][2] = {{67, 13}, {16, 4}, {1, 1}, {130, 37}, {32, 9}, {300, 50}, {5, 3},
                                        {31, 17}, {64, 32}, {33, 65}, {100, 96}, {512, 11}, {545, 19}};
    static const int64_t ms[] = {1, 2, 3, 4, 5, 9, 16, 33};
    for (int isa = 0; isa <= vx_cpu_isa(); isa++)
        for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++)
            for (size_t m = 0; m < sizeof ms / sizeof *ms; m++)
                test_linear_case(fmt, isa, ms[m], shapes[s][0], shapes[s][1], (int)((s + m) & 1), 1 + (int)(m & 1));
    for (int isa = 0; isa <= vx_cpu_isa(); isa++) {
        test_linear_case(fmt, isa, 2, 1030, 515, 1, 2); /* threaded streaming, a short last group */
        test_linear_case(fmt, isa, 2, 1024, 130, 0, 2); /* full groups only */
        test_linear_case(fmt, isa, 20, 33, 600, 1, 2);  /* many rows, threads over N */
        test_linear_case(fmt, isa, 31, 200, 40, 1, 2);  /* rows split over threads */
        test_linear_case(fmt, isa, 4, 2000, 700, 0, 2); /* prefetch across tiles */
        test_linear_case(fmt, isa, 2, 1030, 515, 1, 3); /* 3 and 5 threads */
        test_linear_case(fmt, isa, 2, 4100, 333, 0, 5);
        test_linear_case(fmt, isa, 1, 1024, 1040, 1, 5);
        test_linear_case(fmt, isa, 3, 0, 5, 1, 1); /* K = 0: y = bias */
        test_odd_x(fmt, isa);
    }
    if (fmt == VX_Q4)
        for (int isa = 0; isa <= vx_cpu_isa(); isa++) test_linear_case(fmt, isa, 40, 100, 70, 1, 2); /* many rows */
}

/* The entry point of the speculation: its format and size, and bits across thread counts and M through vx_linear. */
static void test_draft_entry(void) {
    const int64_t N = 1100, K = 1030;
    float *w = tl_random_floats((size_t)(N * K));
    uint16_t *hb = malloc(sizeof(uint16_t) * (size_t)(N * K));
    for (int64_t i = 0; i < N * K; i++) hb[i] = vx_f32_to_bf16(w[i]);
    vx_mat in = {.dtype = VX_F32, .rows = N, .cols = K, .data = w}, in16 = {.dtype = VX_BF16, .rows = N, .cols = K, .data = hb};
    void *buf = malloc(vx_draft_bytes(N, K)), *buf16 = malloc(vx_draft_bytes(N, K));
    vx_mat D = vx_draft_quantize(buf, &in, 3), D16 = vx_draft_quantize(buf16, &in16, 1);
    CHECK(D.dtype == VX_Q4 || D.dtype == VX_Q8D);
    CHECK(D.rows == N && D.cols == K && D.data == buf && D16.dtype == D.dtype);
    CHECK(vx_draft_bytes(N, K) == (D.dtype == VX_Q4 ? vx_q4_bytes(N, K) : vx_q8_bytes(N, K)));
    float *x = tl_random_floats((size_t)(5 * K)), *y1 = malloc(sizeof(float) * (size_t)(5 * N)),
          *yt = malloc(sizeof(float) * (size_t)(5 * N));
    for (int M = 1; M <= 5; M += 1) {
        vx_linear(y1, x, M, &D, NULL, 1);
        static const int threads[] = {2, 3, 5};
        for (int t = 0; t < 3; t++) {
            vx_linear(yt, x, M, &D, NULL, threads[t]);
            CHECK_MSG(memcmp(y1, yt, sizeof(float) * (size_t)(M * N)) == 0, "draft M=%d: %d threads differ from 1", M,
                      threads[t]);
        }
        for (int m = 0; m < M; m++) { /* row m alone */
            vx_linear(yt, x + m * K, 1, &D, NULL, 2);
            CHECK_MSG(memcmp(y1 + m * N, yt, sizeof(float) * (size_t)N) == 0, "draft M=%d: row %d differs alone", M, m);
        }
    }
    /* The documented error (precision.h): rms relative error of a dot product on random data. */
    double e2 = 0, r2 = 0, e2_16 = 0;
    vx_linear(y1, x, 1, &D, NULL, 2);
    vx_linear(yt, x, 1, &D16, NULL, 2);
    for (int64_t n = 0; n < N; n++) {
        double s = 0;
        for (int64_t k = 0; k < K; k++) s += (double)x[k] * w[n * K + k];
        e2 += (y1[n] - s) * (y1[n] - s), r2 += s * s, e2_16 += (yt[n] - s) * (yt[n] - s);
    }
    const double rel = sqrt(e2 / r2), rel16 = sqrt(e2_16 / r2), bound = D.dtype == VX_Q4 ? 0.09 : 0.008;
    CHECK_MSG(rel < bound && rel16 < bound, "draft dot error %.3g (bf16 source %.3g), documented < %.3g", rel, rel16, bound);
    CHECK_MSG(rel > bound / 30, "draft dot error %.3g: too small for a %s draft (is it quantized?)", rel,
              vx_dtype_name(D.dtype));
    free(w), free(hb), free(buf), free(buf16), free(x), free(y1), free(yt);
}

int main(int argc, char **argv) {
    (void)argc, (void)argv;
    test_roundtrip();
    test_linear(VX_Q4);
    test_linear(VX_Q8D);
    test_draft_entry();
    return tl_finish("test_q4");
}
