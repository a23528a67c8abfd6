/* Torch-compatible RNG: MT19937 reference outputs, single calls checked
 * against values printed by torch 1.13 (CPU, AVX2), and the complete random
 * streams of the Chatterbox and VibeVoice golden runs regenerated from their
 * seeds. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/rng.h"
#include "io/safetensors.h"
#include "testlib.h"

/* Distance in representable floats (0 = bit-identical). */
static long ulp_dist(float a, float b) {
    int32_t x, y;
    memcpy(&x, &a, 4);
    memcpy(&y, &b, 4);
    if (x < 0) x = INT32_MIN - x;
    if (y < 0) y = INT32_MIN - y;
    return labs((long)x - (long)y);
}

typedef struct {
    long max_ulp;
    size_t n_diff, n;
} ulp_stats;

static ulp_stats compare_ulp(const float *a, const float *b, size_t n) {
    ulp_stats s = {0, 0, n};
    for (size_t i = 0; i < n; i++) {
        long u = isnan(a[i]) || isnan(b[i]) ? 1L << 30 : ulp_dist(a[i], b[i]);
        if (u) s.n_diff++;
        if (u > s.max_ulp) s.max_ulp = u;
    }
    return s;
}

/* Exact (max_ulp 0) or within max_ulp; prints the statistics either way. */
static void check_ulp(const char *what, const float *got, const float *want, size_t n, long max_ulp) {
    ulp_stats s = compare_ulp(got, want, n);
    printf("  %-34s n=%-7zu bit-identical=%-7zu max_ulp=%ld\n", what, n, n - s.n_diff, s.max_ulp);
    CHECK_MSG(s.max_ulp <= max_ulp, "%s: max %ld ulp > %ld (%zu of %zu differ)", what, s.max_ulp, max_ulp,
              s.n_diff, n);
}

/* Torch's AVX2 randn uses its own vectorised log/sin/cos: we agree within
 * 3 ulp on the golden streams; allow a little more for other libms. */
#define RANDN_ULP 4

static const float *golden(vx_st_file *f, const char *name, size_t numel) {
    if (!f) return NULL;
    const vx_tensor *t = vx_st_find(f, name);
    CHECK_MSG(t != NULL, "golden tensor %s missing", name);
    if (!t) return NULL;
    CHECK_MSG(t->dtype == VX_F32 && (size_t)vx_numel(t) == numel, "golden %s: dtype/size mismatch", name);
    if (t->dtype != VX_F32 || (size_t)vx_numel(t) != numel) return NULL;
    return t->data;
}

static vx_st_file *open_golden(const char *rel) {
    vx_st_file *f = NULL;
    vx_err err = {0};
    if (vx_st_open(tl_path(rel), &f, &err) != VOCIS_OK) {
        fprintf(stderr, "cannot open %s: %s\n", rel, err.msg);
        tl_failures++;
        return NULL;
    }
    return f;
}

static void test_mt19937(void) {
    vx_rng r;
    vx_rng_seed(&r, 5489); /* std::mt19937 default seed */
    CHECK(vx_rng_u32(&r) == 3499211612u);
    for (int i = 1; i < 9999; i++) vx_rng_u32(&r);
    CHECK(vx_rng_u32(&r) == 4123659995u); /* the 10000th output, fixed by the C++ standard */
    vx_rng_seed(&r, 0);
    CHECK(vx_rng_u32(&r) == 2357136044u);
    CHECK(vx_rng_u32(&r) == 2546248239u);
    /* u64 = first output in the high word */
    vx_rng_seed(&r, 0);
    CHECK(vx_rng_u64(&r) == ((UINT64_C(2357136044) << 32) | UINT64_C(2546248239)));
    /* torch.manual_seed keeps the low 32 bits of the seed */
    vx_rng a, b;
    vx_rng_seed(&a, (UINT64_C(1) << 32) + 5);
    vx_rng_seed(&b, 5);
    int same = 1;
    for (int i = 0; i < 1000; i++) same &= vx_rng_u32(&a) == vx_rng_u32(&b);
    CHECK(same);
    /* reseeding resets the stream and the cached normal */
    float x[3], y[3];
    vx_rng_seed(&a, 9);
    vx_rng_randn(&a, x, 3);
    vx_rng_seed(&a, 9);
    vx_rng_randn(&a, y, 3);
    CHECK(memcmp(x, y, sizeof x) == 0);
}

/* Values printed by torch 1.13.0 (CPU) after torch.manual_seed(...). */
static void test_torch_values(void) {
    static const float k_exp_seed0[5] = {3.50832629f, 1.23038471f, 0.615044117f, 2.53511858f, 1.03570545f};
    static const float k_rand_seed0[5] = {0.49625659f, 0.768221796f, 0.0884774327f, 0.132030487f, 0.307422817f};
    static const float k_randn3_seed0[3] = {1.54099607f, -0.293428898f, -2.17878938f};
    static const float k_randn17_seed0[17] = {
        -1.12583983f, -1.6959312f,  0.566650629f, 0.793508351f, 0.598839462f, -1.55509508f,
        -0.34136039f, 1.85300612f,  0.468096405f, -0.585497558f, -0.173396751f, 0.183477938f,
        1.38936615f,  1.58633423f,  0.946298361f, -0.843676746f, 0.931826591f};
    static const float k_randn33_seed0[33] = {
        -1.12583983f, -1.1523602f,   -0.250578582f, -0.433878809f, 0.848710358f, 0.692009151f, -0.31601277f,
        -2.11521935f, 0.322274923f,  -1.26333475f,  0.349983186f,  0.30813393f,  0.119841509f, 1.2376579f,
        1.11677718f,  -0.247278154f, -1.35265374f,  0.0315927416f, -0.492676973f, 0.248414755f, 0.439695835f,
        0.112411186f, 0.64079237f,   0.441156268f,  -0.215863258f, 0.792443991f, -0.289667696f, 0.0525074862f,
        0.522860467f, 2.30220532f,   -1.46889389f,  -1.58668876f,  1.20322371f};
    /* randn(3), randn(16), randn(1): the scalar path's cached second value
     * survives the vector-path draw in between. */
    static const float k_mixed_seed7[20] = {
        -0.146795094f, 0.786141276f,  0.94682163f,  -0.176437929f, 1.75017238f,  1.93001688f,  0.98611182f,
        0.609473467f,  -0.581133783f, 0.0490438677f, -0.320476919f, -0.9370839f, 0.864939451f, -0.369180381f,
        0.792943656f,  -0.551940501f, 0.35274902f,  -1.08420193f,  -0.887490094f, -1.114344f};
    /* Uniform(-pi, pi).sample((4,)) */
    static const float k_uniform_seed123[4] = {-1.28106654f, 0.104063988f, -1.56029892f, 1.18473744f};

    vx_rng r;
    float out[40];
    vx_rng_seed(&r, 0);
    vx_rng_exponential(&r, out, 5);
    check_ulp("exponential_(5) seed 0", out, k_exp_seed0, 5, 0);
    vx_rng_seed(&r, 0);
    vx_rng_rand(&r, out, 5);
    check_ulp("rand(5) seed 0", out, k_rand_seed0, 5, 0);
    vx_rng_seed(&r, 0);
    vx_rng_randn(&r, out, 3);
    check_ulp("randn(3) seed 0 (scalar path)", out, k_randn3_seed0, 3, 0);
    vx_rng_seed(&r, 0);
    vx_rng_randn(&r, out, 17);
    check_ulp("randn(17) seed 0 (last 16 redrawn)", out, k_randn17_seed0, 17, RANDN_ULP);
    vx_rng_seed(&r, 0);
    vx_rng_randn(&r, out, 33);
    check_ulp("randn(33) seed 0 (last 16 redrawn)", out, k_randn33_seed0, 33, RANDN_ULP);
    vx_rng_seed(&r, 7);
    vx_rng_randn(&r, out, 3);
    vx_rng_randn(&r, out + 3, 16);
    vx_rng_randn(&r, out + 19, 1);
    check_ulp("randn(3),(16),(1) seed 7 [scalar]", out, k_mixed_seed7, 3, 0);
    check_ulp("randn(3),(16),(1) seed 7 [vector]", out + 3, k_mixed_seed7 + 3, 16, RANDN_ULP);
    check_ulp("randn(3),(16),(1) seed 7 [cached]", out + 19, k_mixed_seed7 + 19, 1, 0);
    vx_rng_seed(&r, 123);
    vx_rng_uniform(&r, out, 4, (float)-M_PI, (float)M_PI);
    check_ulp("Uniform(-pi,pi).sample(4) seed 123", out, k_uniform_seed123, 4, 0);

    /* Uniform bit patterns: 24 / 53 random bits, in [0, 1). */
    vx_rng_seed(&r, 0);
    float u = vx_rng_uniform_f32(&r);
    CHECK(u == (float)(2357136044u & 0xffffffu) / 16777216.0f);
    vx_rng_seed(&r, 0);
    double d = vx_rng_uniform_f64(&r);
    uint64_t bits = ((UINT64_C(2357136044) << 32) | UINT64_C(2546248239)) & ((UINT64_C(1) << 53) - 1);
    CHECK(d == (double)bits / 9007199254740992.0);
}

/* Chatterbox set A: torch.manual_seed(0) then T3 exponential_ (46 steps of
 * 8194) -> CFM randn_like(mu) [1,80,286] -> SineGen Uniform(-pi,pi) (9) ->
 * SineGen randn_like [1,9,34080] -> SourceModuleHnNSF randn_like [1,34080,1]. */
static void test_chatterbox_stream(void) {
    vx_st_file *f08 = open_golden("chatterbox/golden/08_t3_sampled.safetensors");
    vx_st_file *f10 = open_golden("chatterbox/golden/10_s3gen_flow.safetensors");
    vx_st_file *f11 = open_golden("chatterbox/golden/11_hift.safetensors");
    const size_t V = 8194, S = 46, NZ = 80 * 286, TW = 34080;
    const float *g_exp = golden(f08, "exp_noise", S * V);
    const float *g_z = golden(f10, "z_noise", NZ);
    const float *g_ph = golden(f11, "phase_uniform_sample", 9);
    const float *g_sine = golden(f11, "sine_noise_randn", 9 * TW);
    const float *g_unused = golden(f11, "unused_source_noise_randn", TW);
    float *buf = malloc(9 * TW * sizeof *buf);
    CHECK(buf != NULL);
    if (g_exp && g_z && g_ph && g_sine && g_unused && buf) {
        vx_rng r;
        vx_rng_seed(&r, 0); /* params.json sample_seed */
        float *e = malloc(S * V * sizeof *e);
        CHECK(e != NULL);
        if (e) {
            for (size_t k = 0; k < S; k++) vx_rng_exponential(&r, e + k * V, V);
            check_ulp("08 exp_noise (46 x exponential_)", e, g_exp, S * V, 0);
            free(e);
        }
        vx_rng_randn(&r, buf, NZ);
        check_ulp("10 z_noise (randn_like mu)", buf, g_z, NZ, RANDN_ULP);
        vx_rng_uniform(&r, buf, 9, (float)-M_PI, (float)M_PI);
        check_ulp("11 phase_uniform_sample", buf, g_ph, 9, 0);
        vx_rng_randn(&r, buf, 9 * TW);
        check_ulp("11 sine_noise_randn", buf, g_sine, 9 * TW, RANDN_ULP);
        vx_rng_randn(&r, buf, TW);
        check_ulp("11 unused_source_noise_randn", buf, g_unused, TW, RANDN_ULP);
    }
    free(buf);
    vx_st_close(f08);
    vx_st_close(f10);
    vx_st_close(f11);
}

/* VibeVoice e2e (08_e2e.json: gen_seed 4321): randn(n_voices = 2) on the
 * scalar path; randn_like(mean) where mean [2, 24, 64] is a transposed view
 * of [2, 64, 24] storage, so torch takes the scalar (non-contiguous) path in
 * memory order; then one randn(2, 64) per diffusion frame (8 frames). */
static void test_vibevoice_stream(void) {
    vx_st_file *f = open_golden("vibevoice/golden/08_e2e.safetensors");
    const int B = 2, F = 24, C = 64, NF = 8;
    const float *g_std = golden(f, "prompt_sample_std_noise", (size_t)B);
    const float *g_noise = golden(f, "prompt_sample_noise", (size_t)B * F * C);
    const float *g_frames = golden(f, "frame_init_noise", (size_t)NF * 2 * C);
    if (g_std && g_noise && g_frames) {
        vx_rng r;
        vx_rng_seed(&r, 4321);
        float std_noise[2];
        vx_rng_randn(&r, std_noise, 2);
        check_ulp("vv prompt_sample_std_noise", std_noise, g_std, 2, 0);

        float *mem = malloc((size_t)B * C * F * sizeof *mem);   /* [B][C][F] storage order */
        float *noise = malloc((size_t)B * F * C * sizeof *noise); /* [B][F][C] logical */
        CHECK(mem && noise);
        if (mem && noise) {
            vx_rng_randn_scalar(&r, mem, (size_t)B * C * F);
            for (int b = 0; b < B; b++)
                for (int t = 0; t < F; t++)
                    for (int c = 0; c < C; c++)
                        noise[((size_t)b * F + t) * C + c] = mem[((size_t)b * C + c) * F + t];
            check_ulp("vv prompt_sample_noise", noise, g_noise, (size_t)B * F * C, 0);
            /* The contiguous vector path would give different values: that is
             * how the golden run shows the non-contiguous path was taken. */
            vx_rng alt;
            vx_rng_seed(&alt, 4321);
            vx_rng_randn(&alt, std_noise, 2);
            vx_rng_randn(&alt, noise, (size_t)B * F * C);
            CHECK(compare_ulp(noise, g_noise, (size_t)B * F * C).n_diff > 1000);
        }
        free(mem);
        free(noise);

        float frames[8 * 2 * 64];
        for (int k = 0; k < NF; k++) vx_rng_randn(&r, frames + k * 2 * C, (size_t)2 * C);
        check_ulp("vv frame_init_noise (8 x randn(2,64))", frames, g_frames, (size_t)NF * 2 * C, RANDN_ULP);
    }
    vx_st_close(f);

    /* 07_diffusion: s20/s10 loops start from torch.manual_seed(seed); randn(2, 64). */
    vx_st_file *f7 = open_golden("vibevoice/golden/07_diffusion.safetensors");
    static const struct {
        const char *name;
        uint64_t seed;
    } loops[2] = {{"s20_loop_init_noise", 1257}, {"s10_loop_init_noise", 1247}};
    for (int i = 0; i < 2; i++) {
        const float *g = golden(f7, loops[i].name, 128);
        if (!g) continue;
        vx_rng r;
        float x[128];
        vx_rng_seed(&r, loops[i].seed);
        vx_rng_randn(&r, x, 128);
        check_ulp(loops[i].name, x, g, 128, RANDN_ULP);
    }
    vx_st_close(f7);
}

int main(int argc, char **argv) {
    if (argc > 1) tl_data_dir = argv[1];
    test_mt19937();
    test_torch_values();
    test_chatterbox_stream();
    test_vibevoice_stream();
    return tl_finish("test_rng");
}
