/* Kernels vs plain double-precision references, on odd shapes, for every
 * dtype and every instruction-set level this CPU supports. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/isa.h"
#include "kernels/kernels.h"
#include "testlib.h"


/* Relative check: |a − b| ≤ rtol · scale + atol, per element with its own scale. */
static int close_scaled(const char *what, const float *a, const double *b, const double *scale, size_t n,
                        double rtol, double atol) {
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)a[i] - b[i]);
        if (!(d <= rtol * scale[i] + atol)) {
            fprintf(stderr, "%s: [%zu] %.9g vs %.9g (|diff| %.3g, scale %.3g)\n", what, i, a[i], b[i], d, scale[i]);
            tl_failures++;
            return 0;
        }
    }
    return 1;
}

/* ---- linear ---- */

/* Weights stored in dtype; also returns their exact values as f32. */
static void *make_weight(vx_dtype dt, const float *src, float *exact, size_t n) {
    if (dt == VX_F32) {
        float *w = malloc(n * sizeof(float));
        memcpy(w, src, n * sizeof(float));
        memcpy(exact, src, n * sizeof(float));
        return w;
    }
    uint16_t *w = malloc(n * sizeof(uint16_t));
    for (size_t i = 0; i < n; i++) {
        w[i] = dt == VX_BF16 ? vx_f32_to_bf16(src[i]) : vx_f32_to_f16(src[i]);
        exact[i] = dt == VX_BF16 ? vx_bf16_to_f32(w[i]) : vx_f16_to_f32(w[i]);
    }
    return w;
}

static void test_linear_case(int isa, vx_dtype dt, int64_t M, int64_t K, int64_t N, int with_bias, int nthreads) {
    float *x = tl_random_floats((size_t)(M * K)), *w0 = tl_random_floats((size_t)(N * K)), *b = tl_random_floats((size_t)N);
    float *we = malloc((size_t)(N * K + 1) * sizeof(float));
    void *wd = make_weight(dt, w0, we, (size_t)(N * K));
    /* exact-size output: ASan catches writes past the end */
    float *y = malloc((size_t)(M * N) * sizeof(float));
    double *ref = malloc((size_t)(M * N) * sizeof(double)), *sc = malloc((size_t)(M * N) * sizeof(double));
    for (int64_t m = 0; m < M; m++)
        for (int64_t n = 0; n < N; n++) {
            double s = with_bias ? b[n] : 0, a = with_bias ? fabs(b[n]) : 0;
            for (int64_t k = 0; k < K; k++) {
                s += (double)x[m * K + k] * we[n * K + k];
                a += fabs((double)x[m * K + k] * we[n * K + k]);
            }
            ref[m * N + n] = s;
            sc[m * N + n] = a;
        }
    vx_mat W = {dt, N, K, wd};
    vx_linear_isa(isa, y, x, M, &W, with_bias ? b : NULL, nthreads);
    char what[160];
    snprintf(what, sizeof what, "linear %s %s M=%lld K=%lld N=%lld bias=%d threads=%d", tl_isa_name[isa],
             vx_dtype_name(dt), (long long)M, (long long)K, (long long)N, with_bias, nthreads);
    close_scaled(what, y, ref, sc, (size_t)(M * N), 2e-6, 1e-7);
    free(x), free(w0), free(b), free(we), free(wd), free(y), free(ref), free(sc);
}

/* The streaming split gives every output to one chunk: the same bits on 1, 2, 3 and 5 threads
 * (decode shapes with N and K tails, a tile's prefetch of the next one across chunk ends). */
static void test_linear_threads(void) {
    static const int64_t cases[][3] = {{1, 1030, 515}, {2, 1024, 1040}, {2, 4100, 333}, {3, 517, 700}, {4, 96, 2050}};
    static const vx_dtype dts[] = {VX_F32, VX_F16, VX_BF16};
    static const int threads[] = {2, 3, 5};
    for (int isa = 0; isa <= vx_cpu_isa(); isa++)
        for (int d = 0; d < 3; d++)
            for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
                const int64_t M = cases[c][0], K = cases[c][1], N = cases[c][2];
                float *x = tl_random_floats((size_t)(M * K)), *w0 = tl_random_floats((size_t)(N * K));
                float *b = tl_random_floats((size_t)N), *we = malloc((size_t)(N * K + 1) * sizeof(float));
                void *wd = make_weight(dts[d], w0, we, (size_t)(N * K));
                float *y1 = malloc((size_t)(M * N) * sizeof(float)), *yt = malloc((size_t)(M * N) * sizeof(float));
                vx_mat W = {dts[d], N, K, wd};
                vx_linear_isa(isa, y1, x, M, &W, b, 1);
                for (size_t t = 0; t < sizeof threads / sizeof *threads; t++) {
                    vx_linear_isa(isa, yt, x, M, &W, b, threads[t]);
                    CHECK_MSG(memcmp(y1, yt, (size_t)(M * N) * sizeof(float)) == 0,
                              "linear %s %s M=%lld K=%lld N=%lld: %d threads differ from 1", tl_isa_name[isa],
                              vx_dtype_name(dts[d]), (long long)M, (long long)K, (long long)N, threads[t]);
                }
                free(x), free(w0), free(b), free(we), free(wd), free(y1), free(yt);
            }
}

static void test_linear(void) {
    static const int64_t shapes[][2] = {{67, 13}, {16, 4}, {1, 1}, {130, 37}, {32, 9}, {300, 50}, {5, 3}};
    static const int64_t ms[] = {1, 2, 3, 4, 5, 9, 16, 33, 130};
    static const vx_dtype dts[] = {VX_F32, VX_F16, VX_BF16};
    for (int isa = 0; isa <= vx_cpu_isa(); isa++)
        for (int d = 0; d < 3; d++)
            for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++)
                for (size_t m = 0; m < sizeof ms / sizeof *ms; m++)
                    test_linear_case(isa, dts[d], ms[m], shapes[s][0], shapes[s][1], (int)((s + m) & 1),
                                     1 + (int)(m & 1));
    /* threaded streaming with tiles and tails; several sgemm panels per thread */
    for (int d = 0; d < 3; d++) {
        test_linear_case(vx_cpu_isa(), dts[d], 2, 1030, 515, 1, 2);
        test_linear_case(vx_cpu_isa(), dts[d], 20, 33, 600, 1, 2);
        test_linear_case(vx_cpu_isa(), dts[d], 260, 33, 600, d & 1, 2); /* x in several cache blocks */
        test_linear_case(vx_cpu_isa(), dts[d], 70, 2000, 40, 1, 2);     /* 2000·4 B rows: 32-row x blocks */
        if (vx_cpu_isa() >= 1) /* sgemm (panels) path with several panels per thread */
            test_linear_case(VX_ISA_AVX2, dts[d], 260, 33, 600, d & 1, 2);
        test_linear_case(vx_cpu_isa(), dts[d], 3, 0, 5, 1, 1); /* K = 0: y = bias */
    }
    /* vx_mat_of on a 3-D weight (Conv1d [Cout, Cin, k]) */
    vx_tensor t = {VX_F32, 3, {8, 3, 5, 0}, NULL};
    vx_mat m = vx_mat_of(&t);
    CHECK(m.rows == 8 && m.cols == 15 && m.dtype == VX_F32);
}

/* ---- f32 GEMM ---- */

static void test_gemm_case(int ta, int tb, int64_t M, int64_t N, int64_t K, float alpha, float beta, int nthreads) {
    int64_t lda = (ta ? M : K) + 3, ldb = (tb ? K : N) + 2, ldc = N + 1;
    float *A = tl_random_floats((size_t)((ta ? K : M) * lda)), *B = tl_random_floats((size_t)((tb ? N : K) * ldb));
    float *C = tl_random_floats((size_t)(M * ldc));
    double *ref = calloc((size_t)(M * ldc), sizeof(double)), *sc = calloc((size_t)(M * ldc), sizeof(double));
    for (int64_t i = 0; i < M; i++)
        for (int64_t j = 0; j < ldc; j++) {
            if (j >= N) { /* padding must be untouched */
                ref[i * ldc + j] = C[i * ldc + j];
                continue;
            }
            double s = 0, a = 0;
            for (int64_t k = 0; k < K; k++) {
                double av = ta ? A[k * lda + i] : A[i * lda + k], bv = tb ? B[j * ldb + k] : B[k * ldb + j];
                s += av * bv;
                a += fabs(av * bv);
            }
            ref[i * ldc + j] = alpha * s + (double)beta * C[i * ldc + j];
            sc[i * ldc + j] = fabs(alpha) * a + fabs(beta * C[i * ldc + j]);
        }
    vx_gemm_f32(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, nthreads);
    char what[128];
    snprintf(what, sizeof what, "gemm ta=%d tb=%d M=%lld N=%lld K=%lld threads=%d", ta, tb, (long long)M,
             (long long)N, (long long)K, nthreads);
    close_scaled(what, C, ref, sc, (size_t)(M * ldc), 2e-6, 1e-7);
    free(A), free(B), free(C), free(ref), free(sc);
}

static void test_gemm(void) {
    for (int ta = 0; ta < 2; ta++)
        for (int tb = 0; tb < 2; tb++) {
            test_gemm_case(ta, tb, 5, 7, 3, 1.0f, 0.0f, 1);
            test_gemm_case(ta, tb, 130, 97, 100, 0.5f, 1.0f, 2); /* split over M */
            test_gemm_case(ta, tb, 41, 260, 101, 1.0f, 0.25f, 2); /* split over N */
        }
}

/* ---- element-wise and row-wise ops ---- */

static void test_norms(void) {
    static const int64_t dims[] = {1, 7, 16, 67, 1024};
    for (size_t di = 0; di < sizeof dims / sizeof *dims; di++) {
        int64_t D = dims[di], R = 3;
        float *x = tl_random_floats((size_t)(R * D)), *w = tl_random_floats((size_t)D), *b = tl_random_floats((size_t)D), *y = malloc((size_t)(R * D) * 4);
        double *ref = malloc((size_t)(R * D) * sizeof(double)), *sc = malloc((size_t)(R * D) * sizeof(double));
        for (int wb = 0; wb < 2; wb++) {
            vx_rmsnorm(y, x, wb ? w : NULL, R, D, 1e-5f);
            for (int64_t r = 0; r < R; r++) {
                double ss = 0;
                for (int64_t i = 0; i < D; i++) ss += (double)x[r * D + i] * x[r * D + i];
                double inv = 1.0 / sqrt(ss / D + 1e-5);
                for (int64_t i = 0; i < D; i++) {
                    ref[r * D + i] = x[r * D + i] * inv * (wb ? w[i] : 1.0);
                    sc[r * D + i] = fabs(ref[r * D + i]);
                }
            }
            close_scaled("rmsnorm", y, ref, sc, (size_t)(R * D), 1e-6, 1e-7);
            vx_layernorm(y, x, wb ? w : NULL, wb ? b : NULL, R, D, 1e-5f);
            for (int64_t r = 0; r < R; r++) {
                double mu = 0, var = 0;
                for (int64_t i = 0; i < D; i++) mu += x[r * D + i];
                mu /= D;
                for (int64_t i = 0; i < D; i++) var += (x[r * D + i] - mu) * (x[r * D + i] - mu);
                double rs = 1.0 / sqrt(var / D + 1e-5);
                for (int64_t i = 0; i < D; i++) {
                    double h = (x[r * D + i] - mu) * rs;
                    ref[r * D + i] = wb ? h * w[i] + b[i] : h;
                    sc[r * D + i] = wb ? fabs(h * w[i]) + fabs(b[i]) : fabs(h);
                }
            }
            close_scaled("layernorm", y, ref, sc, (size_t)(R * D), 2e-6, 1e-6);
        }
        free(x), free(w), free(b), free(y), free(ref), free(sc);
    }
}

static void test_activations(void) {
    enum { N = 203 };
    float *x = tl_random_floats(N), *g = tl_random_floats(N), *y = malloc(N * 4);
    double ref[N], sc[N];
    for (int i = 0; i < N; i++) x[i] *= 8; /* cover [-8, 8) */
    x[0] = 0.0f, x[1] = -30.0f, x[2] = 30.0f, x[3] = -100.0f, x[4] = 1e-3f;
    char what[64];
    /* references in forms without cancellation: 0.5x(1 + erf z) = 0.5x·erfc(−z),
     * 0.5x(1 + tanh u) = x / (1 + e^−2u). gelu: erf per Abramowitz & Stegun
     * 7.1.26, |error| ≤ 1.5e-7, hence the |x|-proportional allowance. */
#define ACT(name, call, expr, xtol)                                                                             \
    do {                                                                                                        \
        memcpy(y, x, N * 4);                                                                                    \
        call;                                                                                                   \
        for (int i = 0; i < N; i++) {                                                                           \
            double v = x[i];                                                                                    \
            ref[i] = (expr);                                                                                    \
            sc[i] = fabs(ref[i]) + (xtol) * fabs(v);                                                            \
        }                                                                                                       \
        snprintf(what, sizeof what, "%s %s", name, tl_isa_name[isa]);                                              \
        close_scaled(what, y, ref, sc, N, 2e-6, 1e-12); /* tiny tails: float e^t errs by |t| ulp */ \
    } while (0)
    for (int isa = 0; isa <= vx_cpu_isa(); isa++) {
        ACT("silu", vx_act_isa(isa, VX_ACT_SILU, y, y, NULL, N), v / (1 + exp(-v)), 0);
        ACT("gelu", vx_act_isa(isa, VX_ACT_GELU, y, y, NULL, N), 0.5 * v * erfc(-v / sqrt(2.0)), 0.1);
        ACT("gelu_tanh", vx_act_isa(isa, VX_ACT_GELU_TANH, y, y, NULL, N),
            v / (1 + exp(-2 * sqrt(2 / M_PI) * (v + 0.044715 * v * v * v))), 0);
        ACT("swiglu", vx_act_isa(isa, VX_ACT_SILU, y, x, g, N), v / (1 + exp(-v)) * g[i], 0);
    }
    int isa = vx_cpu_isa();
    ACT("vx_silu", vx_silu(y, N), v / (1 + exp(-v)), 0);
    ACT("vx_gelu", vx_gelu(y, N), 0.5 * v * erfc(-v / sqrt(2.0)), 0.1);
    ACT("vx_gelu_tanh", vx_gelu_tanh(y, N), v / (1 + exp(-2 * sqrt(2 / M_PI) * (v + 0.044715 * v * v * v))), 0);
    ACT("vx_swiglu", vx_swiglu(y, x, g, N), v / (1 + exp(-v)) * g[i], 0);
    ACT("add", vx_add(y, g, N), v + g[i], 0);
    ACT("scale", vx_scale(y, 0.3f, N), v * 0.3f, 0);
    ACT("axpy", vx_axpy(y, -1.5f, g, N), v + -1.5 * g[i], 1e-7);
#undef ACT
    free(x), free(g), free(y);
}

/* GELU per ISA level: a dense grid over [-12, 12] plus odd lengths for the tails, against the
 * double-precision formula and against the scalar erff form (within 1e-6 absolute of both). */
static void test_gelu_isa(void) {
    enum { N = 24001 };
    float *x = malloc(N * 4), *y = malloc(N * 4), *y0 = malloc(N * 4);
    for (int i = 0; i < N; i++) x[i] = -12.0f + 24.0f * (float)i / (float)(N - 1);
    x[N / 2] = 0.0f;
    memcpy(y0, x, N * 4);
    vx_gelu_isa(0, y0, N);
    for (int isa = 0; isa <= vx_cpu_isa(); isa++) {
        memcpy(y, x, N * 4);
        vx_gelu_isa(isa, y, N);
        double worst = 0, worst0 = 0;
        int bad = 0;
        for (int i = 0; i < N; i++) {
            double v = x[i], ref = 0.5 * v * (1 + erf(v / sqrt(2.0)));
            double d = fabs(y[i] - ref), d0 = fabs((double)y[i] - y0[i]);
            worst = d > worst ? d : worst;
            worst0 = d0 > worst0 ? d0 : worst0;
            if (!(d <= 1e-6 + 2e-7 * fabs(ref)) || !(d0 <= 1e-6)) bad = 1;
        }
        CHECK_MSG(!bad, "gelu %s: max |diff| %.3g vs exact, %.3g vs erff", tl_isa_name[isa], worst, worst0);
        /* lengths around the vector widths: every element, nothing beyond n */
        for (int n = 1; n <= 35; n++) {
            float buf[40];
            for (int i = 0; i < 40; i++) buf[i] = i < n ? 0.37f * (float)(i - 17) : 1234.0f;
            vx_gelu_isa(isa, buf, n);
            for (int i = 0; i < 40; i++) {
                double v = 0.37f * (float)(i - 17), ref = 0.5 * v * (1 + erf(v / sqrt(2.0)));
                if (i < n) CHECK_MSG(fabs(buf[i] - ref) <= 1e-6, "gelu %s n=%d [%d]", tl_isa_name[isa], n, i);
                else CHECK_MSG(buf[i] == 1234.0f, "gelu %s n=%d wrote past the end", tl_isa_name[isa], n);
            }
        }
        float sp[3] = {INFINITY, -INFINITY, NAN};
        vx_gelu_isa(isa, sp, 3);
        CHECK_MSG(sp[0] == INFINITY && isnan(sp[2]), "gelu %s: +inf -> %g, nan -> %g", tl_isa_name[isa], sp[0], sp[2]);
    }
    free(x), free(y), free(y0);
}

static void test_softmax(void) {
    static const int64_t ns[] = {1, 7, 15, 16, 17, 33, 100, 1000};
    for (int isa = 0; isa <= vx_cpu_isa(); isa++)
        for (size_t t = 0; t < sizeof ns / sizeof *ns; t++) {
            int64_t n = ns[t];
            float *x = tl_random_floats((size_t)n), *y = malloc((size_t)n * 4);
            double *ref = malloc((size_t)n * 8), *sc = malloc((size_t)n * 8);
            for (int64_t i = 0; i < n; i++) x[i] *= 20;
            if (n > 3) x[1] = x[n - 1] = -INFINITY;
            double mx = -INFINITY, s = 0;
            for (int64_t i = 0; i < n; i++) mx = x[i] > mx ? x[i] : mx;
            for (int64_t i = 0; i < n; i++) s += exp(x[i] - mx);
            for (int64_t i = 0; i < n; i++) {
                ref[i] = exp(x[i] - mx) / s;
                sc[i] = ref[i];
            }
            memcpy(y, x, (size_t)n * 4);
            vx_softmax_isa(isa, y, n);
            char what[64];
            snprintf(what, sizeof what, "softmax %s n=%lld", tl_isa_name[isa], (long long)n);
            close_scaled(what, y, ref, sc, (size_t)n, 4e-6, 1e-9);
            /* all −inf: zeros, no NaN */
            for (int64_t i = 0; i < n; i++) y[i] = -INFINITY;
            vx_softmax_isa(isa, y, n);
            for (int64_t i = 0; i < n; i++) CHECK_MSG(y[i] == 0.0f, "%s all -inf [%lld] = %g", what, (long long)i, y[i]);
            free(x), free(y), free(ref), free(sc);
        }
    float one[1] = {3.0f};
    vx_softmax(one, 1);
    CHECK(one[0] == 1.0f);
}

/* ---- RoPE ---- */

static void check_bits(const char *what, const float *a, const uint32_t *bits, int n) {
    for (int i = 0; i < n; i++) {
        uint32_t u;
        memcpy(&u, &a[i], 4);
        if (u != bits[i]) {
            fprintf(stderr, "%s: [%d] 0x%08x vs torch 0x%08x\n", what, i, u, bits[i]);
            tl_failures++;
            return;
        }
    }
}

static void test_rope(void) {
    /* Bit patterns from torch 1.13 float32 (HF default rope + _compute_llama3_parameters). */
    static const uint32_t f5e5_64[32] = {
        0x3f800000, 0x3f29e1c6, 0x3ee177bc, 0x3e959ee3, 0x3e4693b0, 0x3e03c6a0, 0x3daee4ad, 0x3d681e67,
        0x3d1a08c8, 0x3ccc6f49, 0x3c87a9c3, 0x3c340d6d, 0x3beef74f, 0x3b9e9402, 0x3b527720, 0x3b0baa41,
        0x3ab95d21, 0x3a7603ea, 0x3a23418d, 0x39d8ac81, 0x398fc8f8, 0x393ed4f4, 0x38fd45c3, 0x38a8126b,
        0x385f10c4, 0x381406cb, 0x37c47610, 0x37825f34, 0x372d07a7, 0x36e5a54d, 0x369864a7, 0x364a41b0};
    static const uint32_t l3_64[32] = {
        0x3f800000, 0x3f29e1c6, 0x3ee177bc, 0x3e959ee3, 0x3e4693b0, 0x3e03c6a0, 0x3daee4ad, 0x3d681e67,
        0x3d1a08c8, 0x3ccc6f49, 0x3c87a9c3, 0x3c340d6d, 0x3beef74f, 0x3b9e9402, 0x3b527720, 0x3ab3d11d,
        0x3a0995d2, 0x393b2dd2, 0x38a3418d, 0x3858ac81, 0x380fc8f8, 0x37bed4f4, 0x377d45c3, 0x3728126b,
        0x36df10c4, 0x369406cb, 0x36447610, 0x36025f34, 0x35ad07a7, 0x3565a54d, 0x351864a7, 0x34ca41b0};
    static const uint32_t f1e6_16[8] = {0x3f800000, 0x3e361887, 0x3d0186e3, 0x3bb8449c,
                                        0x3a83126f, 0x393a7753, 0x3804a2b2, 0x36bcb0c1};
    static const uint32_t f1e4_16[8] = {0x3f800000, 0x3ea1e89b, 0x3dcccccd, 0x3d0186e3,
                                        0x3c23d70a, 0x3b4f3e38, 0x3a83126f, 0x39a5cb60};
    /* theta 1e4, hd 128 as torch computes it, and after llama3 scaling (factor 32, 1, 4, 8192) */
    static const uint32_t f1e4_128[64] = {
        0x3f800000, 0x3f5dafd7, 0x3f3ff911, 0x3f263de0, 0x3f0ff59a, 0x3ef953cf, 0x3ed7e89b, 0x3ebaf81b,
        0x3ea1e89b, 0x3e8c3504, 0x3e72d423, 0x3e5247ed, 0x3e361887, 0x3e1db040, 0x3e088d77, 0x3dec7fd6,
        0x3dcccccd, 0x3db15978, 0x3d99940d, 0x3d84fe4d, 0x3d6655c2, 0x3d47763f, 0x3d2cba15, 0x3d159348,
        0x3d0186e3, 0x3ce054d2, 0x3cc2434f, 0x3ca8398b, 0x3c91ad39, 0x3c7c4d33, 0x3c5a7bf2, 0x3c3d3311,
        0x3c23d70a, 0x3c0de12d, 0x3bf5b9b0, 0x3bd4ca15, 0x3bb8449c, 0x3b9f91cc, 0x3b8a2e77, 0x3b6f520e,
        0x3b4f3e38, 0x3b33770f, 0x3b1b690d, 0x3b06946f, 0x3ae91528, 0x3ac9d75c, 0x3aaec98e, 0x3a975c0e,
        0x3a83126f, 0x3a6301e2, 0x3a44948c, 0x3a2a3b44, 0x3a136a16, 0x39ff4fac, 0x39dd1725, 0x39bf74d7,
        0x39a5cb60, 0x398f9272, 0x3978a815, 0x395753e4, 0x393a7753, 0x39217916, 0x390bd472, 0x38f22ce2};
    static const uint32_t l3_128[64] = {
        0x3f800000, 0x3f5dafd7, 0x3f3ff911, 0x3f263de0, 0x3f0ff59a, 0x3ef953cf, 0x3ed7e89b, 0x3ebaf81b,
        0x3ea1e89b, 0x3e8c3504, 0x3e72d423, 0x3e5247ed, 0x3e361887, 0x3e1db040, 0x3e088d77, 0x3dec7fd6,
        0x3dcccccd, 0x3db15978, 0x3d99940d, 0x3d84fe4d, 0x3d6655c2, 0x3d47763f, 0x3d2cba15, 0x3d159348,
        0x3d0186e3, 0x3ce054d2, 0x3cc2434f, 0x3ca8398b, 0x3c91ad39, 0x3c7c4d33, 0x3c5a7bf2, 0x3c3d3311,
        0x3c23d70a, 0x3c0de12d, 0x3bf5b9b0, 0x3bd4ca15, 0x3bb8449c, 0x3b9f91cc, 0x3b8a2e77, 0x3b6f520e,
        0x3b4f3e38, 0x3b1a90c6, 0x3adbaa1b, 0x3a9a33e1, 0x3a550c17, 0x3a0ffb3d, 0x39bc9bf8, 0x396b894e,
        0x3907a276, 0x38846d37, 0x37c4948c, 0x37aa3b44, 0x37936a16, 0x377f4fac, 0x375d1725, 0x373f74d7,
        0x3725cb60, 0x370f9272, 0x36f8a815, 0x36d753e4, 0x36ba7753, 0x36a17916, 0x368bd472, 0x36722ce2};
    float f[64];
    vx_rope_freqs(f, 64, 500000.0f);
    check_bits("rope_freqs 5e5/64", f, f5e5_64, 32);
    vx_rope_llama3_scale(f, 64, 8.0f, 1.0f, 4.0f, 8192.0f);
    check_bits("rope_llama3 5e5/64", f, l3_64, 32);
    vx_rope_freqs(f, 16, 1e6f);
    check_bits("rope_freqs 1e6/16", f, f1e6_16, 8);
    vx_rope_freqs(f, 16, 1e4f);
    check_bits("rope_freqs 1e4/16", f, f1e4_16, 8);
    memcpy(f, f1e4_128, sizeof f);
    vx_rope_llama3_scale(f, 128, 32.0f, 1.0f, 4.0f, 8192.0f);
    check_bits("rope_llama3 1e4/128 x32", f, l3_128, 64);
    /* θ = 1e6, hd = 128 within 1 ulp of the double-precision value */
    vx_rope_freqs(f, 128, 1e6f);
    for (int i = 0; i < 64; i++) {
        double r = pow(1e6, -(double)(float)(2 * i / 128.0));
        CHECK_MSG(fabs(f[i] - r) <= 1.2e-7 * r, "rope_freqs 1e6/128 [%d] %.9g vs %.9g", i, f[i], r);
    }

    /* apply: rotate-half at a few positions, odd head count, hd 2..80 */
    static const int hds[] = {2, 16, 64, 80, 160};
    for (size_t t = 0; t < sizeof hds / sizeof *hds; t++) {
        int hd = hds[t], H = 3;
        float inv[80];
        vx_rope_freqs(inv, hd, 10000.0f);
        for (int64_t pos = 0; pos < 5000; pos += 1237) {
            float *x = tl_random_floats((size_t)(H * hd)), *y = malloc((size_t)(H * hd) * 4);
            double *ref = malloc((size_t)(H * hd) * 8), *sc = malloc((size_t)(H * hd) * 8);
            memcpy(y, x, (size_t)(H * hd) * 4);
            vx_rope_apply(y, H, hd, inv, pos);
            for (int h = 0; h < H; h++)
                for (int d = 0; d < hd / 2; d++) {
                    double a = (double)(float)((float)pos * inv[d]); /* the float32 angle, as in HF */
                    double x1 = x[h * hd + d], x2 = x[h * hd + d + hd / 2];
                    ref[h * hd + d] = x1 * cos(a) - x2 * sin(a);
                    ref[h * hd + d + hd / 2] = x2 * cos(a) + x1 * sin(a);
                    sc[h * hd + d] = sc[h * hd + d + hd / 2] = fabs(x1) + fabs(x2);
                }
            char what[64];
            snprintf(what, sizeof what, "rope_apply hd=%d pos=%lld", hd, (long long)pos);
            close_scaled(what, y, ref, sc, (size_t)(H * hd), 3e-7, 0);
            free(x), free(y), free(ref), free(sc);
        }
    }
}

/* x rounded to bf16 (as the bf16 kernels round their operands) */
static double r16(double x) { return vx_bf16_to_f32(vx_f32_to_bf16((float)x)); }

/* ---- packed GEMM (direct: every operand form, bf16 against rounded operands) ---- */

static void test_packed_case(int ta, int tb, vx_dtype bdt, int bf16, int64_t M, int64_t N, int64_t K, float alpha,
                             float beta, int with_bias, int nthreads) {
    int64_t lda = (ta ? M : K) + 3, ldb = (tb ? K : N) + 2, ldc = N + 1;
    size_t nb = (size_t)((tb ? N : K) * ldb);
    float *A = tl_random_floats((size_t)((ta ? K : M) * lda)), *B0 = tl_random_floats(nb), *C = tl_random_floats((size_t)(M * ldc)), *bias = tl_random_floats((size_t)N);
    float *Be = malloc(nb * sizeof(float));
    void *B = make_weight(bdt, B0, Be, nb);
    double *ref = calloc((size_t)(M * ldc), sizeof(double)), *sc = calloc((size_t)(M * ldc), sizeof(double));
    for (int64_t i = 0; i < M; i++)
        for (int64_t j = 0; j < ldc; j++) {
            if (j >= N) {
                ref[i * ldc + j] = C[i * ldc + j];
                continue;
            }
            double s = 0, a = 0;
            for (int64_t k = 0; k < K; k++) {
                double av = ta ? A[k * lda + i] : A[i * lda + k], bv = tb ? Be[j * ldb + k] : Be[k * ldb + j];
                if (bf16) av = r16(av), bv = r16(bv);
                s += av * bv;
                a += fabs(av * bv);
            }
            double bb = with_bias ? bias[j] : 0;
            ref[i * ldc + j] = alpha * s + (double)beta * C[i * ldc + j] + bb;
            sc[i * ldc + j] = fabs(alpha) * a + fabs(beta * C[i * ldc + j]) + fabs(bb);
        }
    CHECK(vx_gemm_packed(2, ta, tb, M, N, K, alpha, A, lda, B, bdt, ldb, beta, C, ldc, with_bias ? bias : NULL, bf16,
                         nthreads));
    char what[160];
    snprintf(what, sizeof what, "packed %s ta=%d tb=%d B=%s M=%lld N=%lld K=%lld bias=%d threads=%d",
             bf16 ? "bf16" : "f32", ta, tb, vx_dtype_name(bdt), (long long)M, (long long)N, (long long)K, with_bias,
             nthreads);
    close_scaled(what, C, ref, sc, (size_t)(M * ldc), 2e-6, 1e-7);
    free(A), free(B0), free(C), free(bias), free(Be), free(B), free(ref), free(sc);
}

static void test_packed_gemm(void) {
    static const int64_t shapes[][3] = {{1, 1, 1},   {13, 31, 7},  {15, 33, 257}, {29, 65, 300},
                                        {100, 17, 513}, {150, 70, 40}, {3, 40, 0},   {14, 32, 32}};
    static const vx_dtype dts[] = {VX_F32, VX_BF16, VX_F16};
    for (int bf16 = 0; bf16 <= 1; bf16++) {
        if (!vx_gemm_packed_supported(vx_cpu_isa(), bf16)) {
            printf("packed gemm %s: not supported by this CPU, skipped\n", bf16 ? "bf16" : "f32");
            continue;
        }
        for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++)
            for (int ta = 0; ta < 2; ta++)
                for (int tb = 0; tb < 2; tb++)
                    for (int d = 0; d < 3; d++)
                        test_packed_case(ta, tb, dts[d], bf16, shapes[s][0], shapes[s][1], shapes[s][2],
                                         s & 1 ? 0.5f : 1.0f, s & 2 ? 0.0f : 1.5f, (int)((s + d) & 1),
                                         1 + (int)(s & 1));
        /* through vx_linear: a policy-marked bf16 weight uses the bf16 tiles from 32 rows */
        int64_t M = 70, K = 300, N = 90;
        float *x = tl_random_floats((size_t)(M * K)), *w0 = tl_random_floats((size_t)(N * K)), *y = malloc((size_t)(M * N) * 4);
        float *we = malloc((size_t)(N * K) * 4);
        void *wd = make_weight(VX_BF16, w0, we, (size_t)(N * K));
        double *ref = malloc((size_t)(M * N) * 8), *sc = malloc((size_t)(M * N) * 8);
        for (int64_t m = 0; m < M; m++)
            for (int64_t n = 0; n < N; n++) {
                double t = 0, a = 0;
                for (int64_t k = 0; k < K; k++) {
                    double p = (bf16 ? r16(x[m * K + k]) : x[m * K + k]) * (double)we[n * K + k];
                    t += p, a += fabs(p);
                }
                ref[m * N + n] = t, sc[m * N + n] = a;
            }
        vx_mat W = {VX_BF16, N, K, wd, bf16};
        vx_linear_isa(2, y, x, M, &W, NULL, 2);
        close_scaled(bf16 ? "linear act_bf16" : "linear bf16 W, f32 activations", y, ref, sc, (size_t)(M * N), 2e-6,
                     1e-7);
        free(x), free(w0), free(y), free(we), free(wd), free(ref), free(sc);
    }
}

/* Shapes past the single-thread cut (M·N·K ≥ 4e6): several row chunks, column chunks
 * when rows are few, two column blocks (N > 1024), k tails; the result must be the same
 * bits at every thread count, and right against the reference at one of them. */
static void test_packed_threads(void) {
    static const int64_t shapes[][3] = {{300, 200, 301}, {29, 1100, 300}, {333, 64, 700}, {1401, 96, 40}};
    for (int bf16 = 0; bf16 <= 1; bf16++) {
        if (!vx_gemm_packed_supported(vx_cpu_isa(), bf16)) continue;
        for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
            int64_t M = shapes[s][0], N = shapes[s][1], K = shapes[s][2];
            vx_dtype bdt = s & 1 ? VX_BF16 : VX_F32;
            test_packed_case(0, 1, bdt, bf16, M, N, K, 1.0f, 0.0f, 1, 3);
            float *A = tl_random_floats((size_t)(M * K)), *B0 = tl_random_floats((size_t)(N * K)), *bias = tl_random_floats((size_t)N);
            float *Be = malloc((size_t)(N * K) * sizeof(float));
            void *B = make_weight(bdt, B0, Be, (size_t)(N * K));
            float *C1 = malloc((size_t)(M * N) * sizeof(float)), *Ct = malloc((size_t)(M * N) * sizeof(float));
            CHECK(vx_gemm_packed(2, 0, 1, M, N, K, 1.0f, A, K, B, bdt, K, 0.0f, C1, N, bias, bf16, 1));
            static const int threads[] = {2, 3, 5};
            for (int t = 0; t < 3; t++) {
                CHECK(vx_gemm_packed(2, 0, 1, M, N, K, 1.0f, A, K, B, bdt, K, 0.0f, Ct, N, bias, bf16, threads[t]));
                CHECK_MSG(!memcmp(C1, Ct, (size_t)(M * N) * sizeof(float)),
                          "packed %s M=%lld N=%lld K=%lld: %d threads differ from 1", bf16 ? "bf16" : "f32",
                          (long long)M, (long long)N, (long long)K, threads[t]);
            }
            free(A), free(B0), free(bias), free(Be), free(B), free(C1), free(Ct);
        }
    }
}

/* Many-query attention kernels give the same bits at 1, 2, 3 and 5 threads. */
static void test_attention_threads(void) {
    static const int64_t shapes[][2] = {{300, 290}, {700, 700}, {97, 130}};
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++)
        for (int causal = 0; causal <= 1; causal++)
            for (int mode = 0; mode <= 3; mode++) {
                if (mode && !vx_gemm_packed_supported(vx_cpu_isa(), mode >= 2)) continue;
                int64_t nq = shapes[s][0], nk = shapes[s][1], H = 4, hd = 64, qs = H * hd;
                float *q = tl_random_floats((size_t)(nq * qs)), *k = tl_random_floats((size_t)(nk * qs)), *v = tl_random_floats((size_t)(nk * qs));
                float *o1 = malloc((size_t)(nq * qs) * 4), *ot = malloc((size_t)(nq * qs) * 4);
                float scale = 0.125f;
                static const int threads[] = {1, 2, 3, 5};
                for (int t = 0; t < 4; t++) {
                    float *o = t ? ot : o1;
                    if (mode == 0)
                        vx_attention_isa(vx_cpu_isa(), o, q, k, v, nq, nk, (int)H, (int)H, (int)hd, qs, scale, causal,
                                         threads[t]);
                    else if (mode == 3)
                        CHECK(vx_attention_blocked16(o, q, k, v, nq, nk, (int)H, (int)H, (int)hd, qs, scale, causal,
                                                     threads[t]));
                    else
                        CHECK(vx_attention_gemm(o, q, k, v, nq, nk, (int)H, (int)H, (int)hd, qs, scale, causal,
                                                mode == 2, threads[t]));
                    if (t)
                        CHECK_MSG(!memcmp(o1, ot, (size_t)(nq * qs) * 4),
                                  "attention mode %d nq=%lld nk=%lld causal=%d: %d threads differ from 1", mode,
                                  (long long)nq, (long long)nk, causal, threads[t]);
                }
                free(q), free(k), free(v), free(o1), free(ot);
            }
}

/* ---- attention ---- */

/* mode 0: vx_attention_isa(isa); 1, 2: vx_attention_gemm in f32 / bf16, whose
 * reference rounds q, k, v and the softmax weights to bf16 as the kernel does;
 * 3: vx_attention_blocked16 (bf16, reference as mode 2). */
static void test_attention_mode(int isa, int mode, int64_t nq, int64_t nk, int H, int Hkv, int hd, int pad,
                                int causal, int nthreads) {
    int64_t ks = (int64_t)Hkv * hd + pad, qs = (int64_t)H * hd;
    float *q = tl_random_floats((size_t)(nq * qs)), *k = tl_random_floats((size_t)(nk * ks)), *v = tl_random_floats((size_t)(nk * ks));
    float *out = malloc((size_t)(nq * qs) * 4);
    double *ref = calloc((size_t)(nq * qs), 8), *sc = malloc((size_t)(nq * qs) * 8);
    double *p = malloc((size_t)(nk ? nk : 1) * 8);
    for (int64_t i = 0; i < nq * qs; i++) q[i] *= 3; /* peakier softmax */
    float scale = 1.0f / sqrtf((float)hd);
    for (int64_t i = 0; i < nq; i++)
        for (int h = 0; h < H; h++) {
            int g = h / (H / Hkv);
            int64_t lim = causal ? nk - nq + i + 1 : nk;
            if (lim < 0) lim = 0;
            double mx = -INFINITY, s = 0;
            for (int64_t j = 0; j < lim; j++) {
                double d = 0;
                for (int c = 0; c < hd; c++) {
                    double a = q[i * qs + h * hd + c], b = k[j * ks + g * hd + c];
                    d += mode >= 2 ? r16(a) * r16(b) : a * b;
                }
                p[j] = d * scale;
                mx = p[j] > mx ? p[j] : mx;
            }
            for (int64_t j = 0; j < lim; j++) s += p[j] = exp(p[j] - mx);
            if (mode >= 2)
                for (int64_t j = 0; j < lim; j++) p[j] = r16(p[j] / s) * s;
            for (int c = 0; c < hd; c++) {
                double o = 0;
                for (int64_t j = 0; j < lim; j++) {
                    double vv = v[j * ks + g * hd + c];
                    o += p[j] / s * (mode >= 2 ? r16(vv) : vv);
                }
                ref[i * qs + h * hd + c] = o;
                sc[i * qs + h * hd + c] = 1.0; /* |v| ≤ 1 and weights sum to 1 */
            }
        }
    if (mode == 0)
        vx_attention_isa(isa, out, q, k, v, nq, nk, H, Hkv, hd, ks, scale, causal, nthreads);
    else if (mode == 3)
        CHECK(vx_attention_blocked16(out, q, k, v, nq, nk, H, Hkv, hd, ks, scale, causal, nthreads));
    else
        CHECK(vx_attention_gemm(out, q, k, v, nq, nk, H, Hkv, hd, ks, scale, causal, mode == 2, nthreads));
    char what[160];
    snprintf(what, sizeof what, "attention %s nq=%lld nk=%lld H=%d Hkv=%d hd=%d pad=%d causal=%d threads=%d",
             mode == 0 ? tl_isa_name[isa] : mode == 1 ? "gemm-f32" : mode == 2 ? "gemm-bf16" : "blocked-bf16", (long long)nq, (long long)nk, H, Hkv,
             hd, pad, causal, nthreads);
    /* bf16: the f32 softmax may round a weight to the other bf16 neighbour than the double one */
    close_scaled(what, out, ref, sc, (size_t)(nq * qs), mode >= 2 ? 4e-3 : 2e-6, 0);
    free(q), free(k), free(v), free(out), free(ref), free(sc), free(p);
}

static void test_attention_case(int isa, int64_t nq, int64_t nk, int H, int Hkv, int hd, int pad, int causal,
                                int nthreads) {
    test_attention_mode(isa, 0, nq, nk, H, Hkv, hd, pad, causal, nthreads);
}

/* The GEMM form (many query rows; bf16 where the CPU has AVX512_BF16). */
static void test_attention_gemm(void) {
    for (int mode = 1; mode <= 2; mode++) {
        if (!vx_gemm_packed_supported(vx_cpu_isa(), mode == 2)) {
            printf("attention gemm %s: not supported by this CPU, skipped\n", mode == 2 ? "bf16" : "f32");
            continue;
        }
        for (int th = 1; th <= 2; th++) {
            test_attention_mode(2, mode, 37, 37, 4, 2, 64, 0, 1, th);   /* causal prefill, GQA */
            test_attention_mode(2, mode, 130, 130, 3, 3, 17, 5, 0, th); /* hd tail, padded rows, two blocks */
            test_attention_mode(2, mode, 20, 50, 2, 1, 33, 3, 1, th);   /* chunked prefill after a cache */
            test_attention_mode(2, mode, 20, 4, 2, 1, 8, 0, 1, th);     /* nq > nk: first rows see nothing */
            test_attention_mode(2, mode, 300, 290, 2, 2, 64, 0, 0, th); /* CFM-like, several query blocks */
            test_attention_mode(2, mode, 16, 1, 2, 2, 32, 0, 0, th);
        }
    }
}

/* The bf16 blocked kernel (hd a multiple of 16): tails of the 48-row blocks, of the
 * 8-key score tiles and of the key pairs (odd nk), causal with nq > nk, GQA, padded rows. */
static void test_attention_blocked16(void) {
    if (!vx_attention_blocked16_supported(64)) {
        printf("attention blocked bf16: not supported by this CPU, skipped\n");
        return;
    }
    for (int th = 1; th <= 3; th += 2) {
        test_attention_mode(2, 3, 37, 37, 4, 2, 64, 0, 1, th);
        test_attention_mode(2, 3, 130, 131, 3, 3, 16, 5, 0, th);
        test_attention_mode(2, 3, 20, 50, 2, 1, 48, 3, 1, th);
        test_attention_mode(2, 3, 60, 13, 2, 1, 32, 0, 1, th);
        test_attention_mode(2, 3, 300, 290, 2, 2, 64, 0, 0, th);
        test_attention_mode(2, 3, 16, 1, 2, 2, 80, 0, 0, th);
        test_attention_mode(2, 3, 97, 201, 8, 8, 64, 0, 0, th);
    }
}

static void test_attention(void) {
    for (int isa = 0; isa <= vx_cpu_isa(); isa++)
        for (int th = 1; th <= 2; th++) {
            test_attention_case(isa, 1, 300, 4, 4, 64, 0, 1, th);   /* decode, several key blocks */
            test_attention_case(isa, 1, 1, 2, 1, 16, 0, 1, th);     /* first token */
            test_attention_case(isa, 2, 129, 6, 2, 24, 5, 1, th);   /* GQA, hd tail, padded cache */
            test_attention_case(isa, 10, 10, 3, 3, 17, 0, 1, th);   /* short prefill, row path */
            test_attention_case(isa, 37, 37, 4, 2, 64, 0, 1, th);   /* prefill, sgemm path */
            test_attention_case(isa, 20, 50, 2, 1, 33, 3, 1, th);   /* chunked prefill after a cache */
            test_attention_case(isa, 32, 45, 4, 4, 16, 0, 0, th);   /* perceiver cross attention */
            test_attention_case(isa, 3, 70, 8, 2, 130, 0, 0, th);   /* non-causal rows, hd > 128 */
            test_attention_case(isa, 5, 3, 2, 2, 8, 0, 1, th);      /* nq > nk: first rows see nothing */
            test_attention_case(isa, 20, 4, 2, 1, 8, 0, 1, th);     /* same on the sgemm path */
            test_attention_case(isa, 1, 1000, 28, 4, 128, 0, 1, th); /* VibeVoice-7B-like decode */
            test_attention_case(isa, 1, 2500, 6, 2, 64, 3, 1, th);  /* long context: key splits merged */
            test_attention_case(isa, 1, 3000, 4, 4, 20, 0, 0, th);
            test_attention_case(isa, 2, 7, 260, 130, 4, 0, 1, th);  /* more heads than MAXH */
            test_attention_case(isa, 1, 40, 40, 2, 8, 0, 1, th);    /* hpg 20 > CH: two chunks per group */
        }
}

static void test_cpu(void) {
    int isa = vx_cpu_isa();
    CHECK(isa >= 0 && isa <= 2);
    CHECK(vx_cpu_has_avx512() == (isa == 2));
    CHECK(!vx_cpu_has_avx512() || vx_cpu_has_avx2());
    CHECK(!vx_cpu_has_avx512bf16() || vx_cpu_has_avx512());
    printf("cpu: avx2 %d avx512 %d avx512bf16 %d -> testing up to %s\n", vx_cpu_has_avx2(), vx_cpu_has_avx512(),
           vx_cpu_has_avx512bf16(), tl_isa_name[isa]);
}

int main(int argc, char **argv) {
    if (argc > 1) tl_data_dir = argv[1];
    test_cpu();
    test_linear();
    test_linear_threads();
    test_gemm();
    test_norms();
    test_activations();
    test_gelu_isa();
    test_softmax();
    test_rope();
    test_attention();
    test_attention_gemm();
    test_attention_blocked16();
    test_packed_gemm();
    test_packed_threads();
    test_attention_threads();
    return tl_finish("test_kernels");
}
