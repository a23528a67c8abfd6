/* q8 weights (precision q8): the quantizer's round trip and layout, and
 * vx_linear on VX_Q8 matrices at every ISA level this CPU runs (odd sizes,
 * short last blocks and groups, tails of every tile, the panel path for
 * many rows, threads): below the panel path bit for bit against a scalar
 * reference written from precision.h's description of the decode
 * arithmetic (x quantized per block, exact integer sums, one fma per block,
 * a fixed 16-lane sum), and every path against a double reference on the
 * dequantized weights within the bound that x's quantization allows. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernels/isa.h"
#include "kernels/kernels.h"
#include "kernels/precision.h"
#include "testlib.h"


static int64_t nblk(int64_t K) { return (K + VX_Q8_BLOCK - 1) / VX_Q8_BLOCK; }

/* Quantizes w (f32, or its bf16/f16 rounding) and checks every block. */
static void test_roundtrip_case(vx_dtype dt, int64_t R, int64_t C) {
    float *w = tl_random_floats((size_t)(R * C));
    for (int64_t i = 0; i < R * C; i++) w[i] *= (float)(1 + (i / 7) % 5); /* blocks of different ranges */
    if (C >= 40)
        for (int64_t k = 0; k < 32; k++) w[k] = 0; /* an all-zero block */
    float *ref = malloc(sizeof(float) * (size_t)(R * C + 1));
    void *src = tl_store_as(dt, w, (size_t)(R * C), ref);
    vx_mat in = {.dtype = dt, .rows = R, .cols = C, .data = src};
    void *buf = malloc(vx_q8_bytes(R, C));
    vx_mat q = vx_q8_quantize(buf, &in, 2);
    CHECK(q.dtype == VX_Q8 && q.rows == R && q.cols == C && q.data == buf);
    const vx_q8 *hq = q.data;
    CHECK((const char *)hq->q >= (const char *)buf + sizeof(vx_q8));
    CHECK((const char *)hq->q + R * vx_q8_row_bytes(C) <= (const char *)buf + vx_q8_bytes(R, C));
    /* the padding of every row: scales past the last block are 0, codes past cols are 0 (stored 128) */
    const int64_t nb = nblk(C), ng = (nb + VX_Q8_GROUP - 1) / VX_Q8_GROUP;
    CHECK(vx_q8_row_bytes(C) == ng * 64 + nb * 32);
    for (int64_t r = 0; r < R; r++) {
        const uint8_t *row = (const uint8_t *)hq->q + r * vx_q8_row_bytes(C);
        const uint8_t *lastg = row + (ng - 1) * (64 + 32 * VX_Q8_GROUP);
        for (int64_t j = nb - (ng - 1) * VX_Q8_GROUP; j < VX_Q8_GROUP; j++) {
            float z;
            memcpy(&z, lastg + 4 * j, 4);
            CHECK_MSG(z == 0, "q8 %lldx%lld: scale of pad block %lld is %g", (long long)R, (long long)C, (long long)j, z);
        }
        const int g = (int)(nb - (ng - 1) * VX_Q8_GROUP);
        for (int64_t k = C; k < nb * 32; k++) {
            int p = (int)(k % 32);
            CHECK(lastg[64 + (p / 4) * 4 * g + 4 * (g - 1) + p % 4] == 128);
        }
    }
    int bad = 0;
    for (int64_t r = 0; r < R && !bad; r++)
        for (int64_t b = 0; b < nblk(C) && !bad; b++) {
            int64_t k0 = b * VX_Q8_BLOCK, k1 = k0 + VX_Q8_BLOCK < C ? k0 + VX_Q8_BLOCK : C;
            float amax = 0, s = 0;
            int qmax = 0;
            for (int64_t k = k0; k < k1; k++) amax = fmaxf(amax, fabsf(ref[r * C + k]));
            for (int64_t k = k0; k < k1; k++) {
                int v;
                vx_q8_weight(&q, r, k, &v, &s);
                if (s != amax / 127.0f) bad = 1;
                qmax = abs(v) > qmax ? abs(v) : qmax;
                double e = fabs((double)v * s - ref[r * C + k]);
                if (v < -127 || v > 127 || e > s * (0.5 + 3e-5)) bad = 2;
            }
            if (amax > 0 && qmax != 127) bad = 3; /* the largest value maps to ±127 */
            if (bad)
                CHECK_MSG(0, "q8 %s %lldx%lld row %lld block %lld: %s", vx_dtype_name(dt), (long long)R,
                          (long long)C, (long long)r, (long long)b,
                          bad == 1 ? "scale != max/127" : bad == 2 ? "value off by more than scale/2"
                                                                   : "max does not map to 127");
        }
    free(buf), free(ref), free(src), free(w);
}

static void test_roundtrip(void) {
    static const int64_t shapes[][2] = {{1, 1}, {3, 31}, {2, 32}, {5, 33}, {7, 100}, {4, 64}, {130, 47},
                                        {3, 512}, {2, 513}, {3, 1000}, {2, 1537}};
    static const vx_dtype dts[] = {VX_F32, VX_F16, VX_BF16};
    for (int d = 0; d < 3; d++)
        for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++)
            test_roundtrip_case(dts[d], shapes[s][0], shapes[s][1]);
    test_roundtrip_case(VX_F32, 700, 1537); /* > 2^20 values: the threaded quantizer */
    CHECK(vx_dtype_size(VX_Q8) == 1 && strcmp(vx_dtype_name(VX_Q8), "Q8") == 0);
    vx_dtype dt;
    CHECK(vx_dtype_from_name("Q8", &dt) != 0); /* never a file dtype */
}

/* A q8 matrix of random weights and its exact dequantized values. */
static void *make_q8(int64_t N, int64_t K, vx_mat *W, double **deq) {
    float *w = tl_random_floats((size_t)(N * K));
    vx_mat in = {.dtype = VX_F32, .rows = N, .cols = K, .data = w};
    void *buf = malloc(vx_q8_bytes(N, K));
    *W = vx_q8_quantize(buf, &in, 1);
    *deq = malloc(sizeof(double) * (size_t)(N * K + 1));
    for (int64_t n = 0; n < N; n++)
        for (int64_t k = 0; k < K; k++) {
            int q;
            float sc;
            vx_q8_weight(W, n, k, &q, &sc);
            (*deq)[n * K + k] = (double)q * sc;
        }
    free(w);
    return buf;
}

/* The decode arithmetic (precision.h, VX_Q8_XPARTS parts), written out:
 * x per block of 32 → sx and codes h (and l); per W row and block the
 * exact integer sum I of q·h (256·Σq·h + Σq·l with two parts); per block
 * lane j = block % 16: acc[j] = fma((float)I, sw·sx, acc[j]); then the sum
 * ((a0+a4)+(a2+a6)) + ((a1+a5)+(a3+a7)) of a[i] = acc[i] + acc[i+8]. */
static void ref_decode(float *y, const float *x, int64_t M, const vx_mat *W, const float *bias) {
    const int64_t K = W->cols, N = W->rows, nb = nblk(K);
    int *h = calloc((size_t)(nb * 32 + 1), sizeof(int)), *l = calloc((size_t)(nb * 32 + 1), sizeof(int));
    float *sx = calloc((size_t)(nb + 1), sizeof(float));
    for (int64_t m = 0; m < M; m++) {
        const float *xm = x + m * K;
        for (int64_t b = 0; b < nb; b++) {
            int64_t k0 = b * 32, k1 = k0 + 32 < K ? k0 + 32 : K;
            float amax = 0;
            int bad = 0;
            for (int64_t k = k0; k < k1; k++) {
                if (!(fabsf(xm[k]) <= FLT_MAX)) bad = 1;
                amax = fmaxf(amax, fabsf(xm[k]));
            }
            for (int64_t k = k0; k < k0 + 32; k++) h[k] = l[k] = 0;
            if (bad || amax < 1e-30f) {
                sx[b] = bad ? NAN : 0.0f;
                continue;
            }
            float inv = 127.0f / amax;
            for (int64_t k = k0; k < k1; k++) {
                float r = xm[k] * inv, hv = rintf(r), lv = rintf((r - hv) * 256.0f);
                h[k] = (int)hv;
                l[k] = VX_Q8_XPARTS == 2 ? (int)fminf(fmaxf(lv, -127.0f), 127.0f) : 0;
            }
            sx[b] = VX_Q8_XPARTS == 2 ? amax / 127.0f * (1.0f / 256.0f) : amax / 127.0f;
        }
        for (int64_t n = 0; n < N; n++) {
            float acc[16] = {0};
            for (int64_t b = 0; b < nb; b++) {
                int64_t ih = 0, il = 0;
                float sw = 0;
                for (int64_t k = b * 32; k < b * 32 + 32 && k < K; k++) {
                    int q;
                    vx_q8_weight(W, n, k, &q, &sw);
                    ih += (int64_t)q * h[k];
                    il += (int64_t)q * l[k];
                }
                int64_t I = VX_Q8_XPARTS == 2 ? 256 * ih + il : ih;
                acc[b % 16] = fmaf((float)I, sw * sx[b], acc[b % 16]);
            }
            float a[8];
            for (int i = 0; i < 8; i++) a[i] = acc[i] + acc[i + 8];
            float v = ((a[0] + a[4]) + (a[2] + a[6])) + ((a[1] + a[5]) + (a[3] + a[7]));
            y[m * N + n] = v + (bias ? bias[n] : 0.0f);
        }
    }
    free(h), free(l), free(sx);
}

/* |x − x̂| per value as the decode path quantizes x: half a step of
 * max|x|/127 with one part; with two, 1/256 of a step (the clamp of l). */
static double x_err(const float *xm, int64_t K, int64_t k) {
    int64_t k0 = k / 32 * 32, k1 = k0 + 32 < K ? k0 + 32 : K;
    float amax = 0;
    for (int64_t j = k0; j < k1; j++) amax = fmaxf(amax, fabsf(xm[j]));
    return amax / 127.0 * (VX_Q8_XPARTS == 2 ? 1.0 / 256 : 0.5) * (1 + 1e-4) + 1e-30;
}

static void test_linear_case(int isa, int64_t M, int64_t K, int64_t N, int with_bias, int nthreads) {
    vx_mat W;
    double *deq;
    void *buf = make_q8(N, K, &W, &deq);
    float *x = tl_random_floats((size_t)(M * K)), *b = tl_random_floats((size_t)N);
    for (int64_t i = 0; i < M * K; i++) x[i] *= (float)(1 + (i / 29) % 7); /* blocks of different ranges */
    float *y = malloc(sizeof(float) * (size_t)(M * N)); /* exact size: ASan sees writes past the end */
    vx_linear_isa(isa, y, x, M, &W, with_bias ? b : NULL, nthreads);
    const int decode = M < 32; /* below the panel path */
    char what[160];
    snprintf(what, sizeof what, "q8 linear %s M=%lld K=%lld N=%lld bias=%d threads=%d", tl_isa_name[isa], (long long)M,
             (long long)K, (long long)N, with_bias, nthreads);
    int fails = 0;
    for (int64_t m = 0; m < M && !fails; m++)
        for (int64_t n = 0; n < N && !fails; n++) {
            double s = with_bias ? b[n] : 0, a = with_bias ? fabs(b[n]) : 0, xe = 0;
            for (int64_t k = 0; k < K; k++) {
                s += (double)x[m * K + k] * deq[n * K + k];
                a += fabs((double)x[m * K + k] * deq[n * K + k]);
                if (decode) xe += fabs(deq[n * K + k]) * x_err(x + m * K, K, k);
            }
            double d = fabs(y[m * N + n] - s);
            if (!(d <= 2e-6 * a + xe + 1e-7)) {
                fprintf(stderr, "%s: [%lld,%lld] %.9g vs %.9g (|diff| %.3g, scale %.3g, x bound %.3g)\n", what,
                        (long long)m, (long long)n, y[m * N + n], s, d, a, xe);
                tl_failures++;
                fails = 1;
            }
        }
    if (decode && !fails) {
        /* bit for bit the reference arithmetic, whatever the level */
        float *yr = malloc(sizeof(float) * (size_t)(M * N));
        ref_decode(yr, x, M, &W, with_bias ? b : NULL);
        for (int64_t i = 0; i < M * N; i++)
            if (memcmp(&yr[i], &y[i], sizeof(float)) != 0) {
                CHECK_MSG(0, "%s: [%lld,%lld] %.9g, reference %.9g", what, (long long)(i / N), (long long)(i % N),
                          y[i], yr[i]);
                break;
            }
        free(yr);
        /* an x row gives the same bits alone (M = 1) as in a batch, on any thread count */
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

/* Odd x values: a NaN or infinity poisons its row only; a block of zeros or
 * of values below 1e-30 counts as zeros; huge finite values do not overflow. */
static void test_odd_x(int isa) {
    const int64_t K = 70, N = 9, M = 4;
    vx_mat W;
    double *deq;
    void *buf = make_q8(N, K, &W, &deq);
    float *x = tl_random_floats((size_t)(M * K)), y[4 * 9], yr[4 * 9];
    x[0 * K + 40] = NAN;
    x[1 * K + 3] = INFINITY;
    for (int64_t k = 32; k < 64; k++) x[2 * K + k] = 1e-33f * (float)(k - 40); /* tiny block */
    for (int64_t k = 0; k < 32; k++) x[3 * K + k] = 3e38f * (k & 1 ? 1.0f : -0.5f);
    vx_linear_isa(isa, y, x, M, &W, NULL, 1);
    ref_decode(yr, x, M, &W, NULL);
    CHECK_MSG(memcmp(y, yr, sizeof y) == 0, "q8 %s: odd x values differ from the reference", tl_isa_name[isa]);
    for (int64_t n = 0; n < N; n++) {
        CHECK(isnan(y[0 * N + n]) && isnan(y[1 * N + n]));
        CHECK(isfinite(y[2 * N + n]));
        CHECK(!isnan(y[3 * N + n]));
        double s = 0;
        for (int64_t k = 0; k < K; k++) s += (k >= 32 && k < 64 ? 0.0 : x[2 * K + k]) * deq[n * K + k];
        CHECK_MSG(fabs(y[2 * N + n] - s) < 0.01 * (fabs(s) + 1e-3), "q8 %s tiny block: %g vs %g", tl_isa_name[isa],
                  y[2 * N + n], s);
    }
    free(buf), free(deq), free(x);
}

static void test_linear(void) {
    static const int64_t shapes[][2] = {{67, 13}, {16, 4}, {1, 1}, {130, 37}, {32, 9}, {300, 50}, {5, 3},
                                        {31, 17}, {64, 32}, {33, 65}, {100, 96}, {512, 11}, {545, 19}};
    static const int64_t ms[] = {1, 2, 3, 4, 5, 9, 15, 16, 33, 130};
    for (int isa = 0; isa <= vx_cpu_isa(); isa++)
        for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++)
            for (size_t m = 0; m < sizeof ms / sizeof *ms; m++)
                test_linear_case(isa, ms[m], shapes[s][0], shapes[s][1], (int)((s + m) & 1), 1 + (int)(m & 1));
    for (int isa = 0; isa <= vx_cpu_isa(); isa++) {
        test_linear_case(isa, 2, 1030, 515, 1, 2);  /* threaded streaming, a short last group */
        test_linear_case(isa, 2, 1024, 130, 0, 2);  /* full groups only */
        test_linear_case(isa, 20, 33, 600, 1, 2);   /* many decode rows, threads over N */
        test_linear_case(isa, 31, 200, 40, 1, 2);   /* decode rows split over threads */
        test_linear_case(isa, 40, 33, 600, 1, 2);   /* panels, by threads */
        test_linear_case(isa, 260, 33, 600, 0, 2);  /* panels, x in several cache blocks */
        test_linear_case(isa, 70, 2000, 40, 1, 2);  /* panels, long rows, narrow N */
        test_linear_case(isa, 4, 2000, 700, 0, 2);  /* prefetch across tiles */
        test_linear_case(isa, 2, 1030, 515, 1, 3);  /* 3 and 5 threads: the same bits as the reference */
        test_linear_case(isa, 2, 4100, 333, 0, 5);
        test_linear_case(isa, 1, 1024, 1040, 1, 5);
        test_linear_case(isa, 3, 0, 5, 1, 1);       /* K = 0: y = bias */
        test_odd_x(isa);
    }
}

/* The load-time policy: a TF_LINEAR matrix becomes q8 under q8, others bf16. */
static void test_policy(void) {
    char dir[] = "/tmp/vocis_q8_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char path[300];
    snprintf(path, sizeof path, "%s/w.safetensors", dir);
    const int64_t R = 37, C = 301;
    float *a = tl_random_floats((size_t)(R * C));
    uint16_t *hb = malloc(sizeof(uint16_t) * (size_t)(R * C));
    for (int64_t i = 0; i < R * C; i++) hb[i] = vx_f32_to_bf16(a[i]);
    vx_err err = {0};
    vx_st_writer *wr = vx_st_writer_new();
    CHECK(vx_st_writer_add(wr, "m", VX_F32, 2, (const int64_t[]){R, C}, a, &err) == VOCIS_OK);
    CHECK(vx_st_writer_add(wr, "b", VX_BF16, 2, (const int64_t[]){R, C}, hb, &err) == VOCIS_OK);
    CHECK(vx_st_writer_save(wr, path, &err) == VOCIS_OK);
    vx_st_writer_free(wr);
    for (int p = VX_PREC_EXACT; p <= VX_PREC_Q8; p++) {
        vx_weights *w;
        if (vx_weights_open(path, &w, &err) != VOCIS_OK) {
            CHECK_MSG(0, "%s", err.msg);
            continue;
        }
        vx_weights_set_precision(w, p);
        vx_tensor tm, tb;
        CHECK(vx_weights_expect(w, VX_FLOATS, VX_DIMS(R, C), &tm, &err, "m") == VOCIS_OK);
        CHECK(vx_weights_expect(w, VX_FLOATS, VX_DIMS(R, C), &tb, &err, "b") == VOCIS_OK);
        vx_mat lin = vx_mat_of(&tm), lin2 = vx_mat_of(&tm), other = vx_mat_of(&tm), lb = vx_mat_of(&tb);
        CHECK(vx_weights_mat_policy(w, &lin, VX_W_TF_LINEAR, &err) == VOCIS_OK);
        CHECK(vx_weights_mat_policy(w, &lin2, VX_W_TF_LINEAR, &err) == VOCIS_OK);
        CHECK(vx_weights_mat_policy(w, &other, VX_W_MATRIX, &err) == VOCIS_OK);
        CHECK(vx_weights_mat_policy(w, &lb, VX_W_TF_LINEAR, &err) == VOCIS_OK);
        CHECK(lin.data == lin2.data); /* one copy per tensor */
        if (p == VX_PREC_Q8) {
            CHECK(lin.dtype == VX_Q8 && other.dtype == VX_BF16 && lb.dtype == VX_Q8);
        } else {
            CHECK(lin.dtype == (p == VX_PREC_BF16 ? VX_BF16 : VX_F32) && lb.dtype == VX_BF16);
        }
        CHECK(memcmp(tm.data, a, sizeof(float) * (size_t)(R * C)) == 0); /* the original reads back */
        float x[301], y[37];
        tl_fill_random(x, 301, 5);
        vx_linear(y, x, 1, &lin, NULL, 1);
        double ref = 0, abs = 0;
        for (int k = 0; k < C; k++) ref += (double)x[k] * a[k], abs += fabs((double)x[k] * a[k]);
        /* q8: each weight within scale/2 ≤ max|w|/254 of its block */
        CHECK_MSG(fabs(y[0] - ref) < 0.01 * abs, "%d: linear %g vs %g", p, y[0], ref);
        vx_weights_close(w);
    }
    unlink(path);
    rmdir(dir);
    free(a), free(hb);
}

int main(int argc, char **argv) {
    (void)argc, (void)argv;
    test_roundtrip();
    test_linear();
    test_policy();
    return tl_finish("test_q8");
}
