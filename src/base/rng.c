/* Torch-compatible CPU random numbers. The facts (generator, transforms,
 * draw order) are in the shared spec torch_rng.md; this file implements them
 * from that description. Every transform below mirrors what torch's CPU
 * generator does for a float32 tensor, including which arithmetic is done in
 * float and which in double, so that values match torch bit for bit except
 * where torch's AVX2 build uses its own vectorised log/sin/cos (randn, vector
 * path), where we use libm and agree within a few ulp. */
#include "base/rng.h"

#include <math.h>
#include <string.h>

#define MT_N 624
#define MT_M 397

void vx_rng_seed(vx_rng *r, uint64_t seed) {
    /* torch.manual_seed keeps the low 32 bits (init_genrand) and drops any
     * cached normal value. */
    r->mt[0] = (uint32_t)(seed & 0xffffffffu);
    for (int i = 1; i < MT_N; i++)
        r->mt[i] = 1812433253u * (r->mt[i - 1] ^ (r->mt[i - 1] >> 30)) + (uint32_t)i;
    r->index = MT_N; /* regenerate the block on the first draw */
    r->has_cached_normal = 0;
    r->cached_normal = 0.0;
}

/* Standard MT19937 block regeneration (twist). */
static void mt_twist(vx_rng *r) {
    uint32_t *s = r->mt;
    for (int i = 0; i < MT_N; i++) {
        uint32_t y = (s[i] & 0x80000000u) | (s[(i + 1) % MT_N] & 0x7fffffffu);
        uint32_t v = s[(i + MT_M) % MT_N] ^ (y >> 1);
        if (y & 1u) v ^= 0x9908b0dfu;
        s[i] = v;
    }
    r->index = 0;
}

uint32_t vx_rng_u32(vx_rng *r) {
    if (r->index >= MT_N || r->index < 0) mt_twist(r);
    uint32_t y = r->mt[r->index++];
    y ^= y >> 11;
    y ^= (y << 7) & 0x9d2c5680u;
    y ^= (y << 15) & 0xefc60000u;
    y ^= y >> 18;
    return y;
}

uint64_t vx_rng_u64(vx_rng *r) {
    uint64_t hi = vx_rng_u32(r);
    uint64_t lo = vx_rng_u32(r);
    return (hi << 32) | lo;
}

float vx_rng_uniform_f32(vx_rng *r) {
    /* 24 random bits scaled by 2^-24: exact in float. */
    return (float)(vx_rng_u32(r) & 0xffffffu) * (1.0f / 16777216.0f);
}

double vx_rng_uniform_f64(vx_rng *r) {
    return (double)(vx_rng_u64(r) & ((UINT64_C(1) << 53) - 1)) * (1.0 / 9007199254740992.0);
}

void vx_rng_exponential(vx_rng *r, float *out, size_t n) {
    /* Per element: a double uniform, −log(1 − u) in double, rounded to float. */
    for (size_t i = 0; i < n; i++) {
        double u = vx_rng_uniform_f64(r);
        out[i] = (float)(-log(1.0 - u));
    }
}

void vx_rng_rand(vx_rng *r, float *out, size_t n) {
    for (size_t i = 0; i < n; i++) out[i] = vx_rng_uniform_f32(r);
}

void vx_rng_uniform(vx_rng *r, float *out, size_t n, float lo, float hi) {
    /* torch.distributions.Uniform.rsample: low + rand * (high − low), all in
     * float32 tensor arithmetic (each operation rounded to float). */
    float range = hi - lo;
    for (size_t i = 0; i < n; i++) {
        float u = vx_rng_uniform_f32(r);
        float scaled = u * range;
        out[i] = lo + scaled;
    }
}

/* Box–Muller on one block of 16 float uniforms, in place: element j (< 8)
 * gives the radius, element j + 8 the angle. Like torch, everything is float:
 * u1 = 1 − u (exact), θ = float(2π)·u, ρ = sqrt(−2·log u1), out = ρ·cos θ and
 * ρ·sin θ. Torch's AVX2 build evaluates log/sin/cos with its own vectorised
 * approximations; libm's float functions agree with them within 3 ulp on the
 * golden streams (about 83 % of values bit-identical). */
static void box_muller_16(float *d) {
    const float two_pi = (float)(2.0 * 3.14159265358979323846);
    for (int j = 0; j < 8; j++) {
        float u1 = 1.0f - d[j];
        float theta = two_pi * d[j + 8];
        float radius = sqrtf(-2.0f * logf(u1));
        d[j] = radius * cosf(theta);
        d[j + 8] = radius * sinf(theta);
    }
}

/* One scalar-path normal (torch's normal_distribution<double>): pairs of
 * double uniforms, the second value of each pair cached in the generator. */
static double normal_scalar(vx_rng *r) {
    if (r->has_cached_normal) {
        r->has_cached_normal = 0;
        return r->cached_normal;
    }
    double u1 = vx_rng_uniform_f64(r);
    double u2 = vx_rng_uniform_f64(r);
    double rho = sqrt(-2.0 * log(1.0 - u2));
    double theta = 2.0 * 3.14159265358979323846 * u1;
    r->cached_normal = rho * sin(theta);
    r->has_cached_normal = 1;
    return rho * cos(theta);
}

void vx_rng_randn_scalar(vx_rng *r, float *out, size_t n) {
    for (size_t i = 0; i < n; i++) out[i] = (float)normal_scalar(r);
}

void vx_rng_randn(vx_rng *r, float *out, size_t n) {
    if (n < 16) {
        vx_rng_randn_scalar(r, out, n);
        return;
    }
    for (size_t i = 0; i < n; i++) out[i] = vx_rng_uniform_f32(r);
    for (size_t o = 0; o + 16 <= n; o += 16) box_muller_16(out + o);
    if (n % 16) {
        /* Torch recomputes the last 16 values from 16 fresh uniforms. */
        float *tail = out + n - 16;
        for (int j = 0; j < 16; j++) tail[j] = vx_rng_uniform_f32(r);
        box_muller_16(tail);
    }
}

float vx_rand_pm1(uint64_t *s) {
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    const uint64_t r = *s * 0x2545F4914F6CDD1DULL;
    return (float)((double)(r >> 40) / (double)(1ULL << 23) - 1.0);
}

static void put32(uint8_t *p, uint32_t v) {
    for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static uint32_t get32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

void vx_rng_state_save(const vx_rng *r, uint8_t out[VX_RNG_STATE_BYTES]) {
    for (int i = 0; i < MT_N; i++) put32(out + 4 * i, r->mt[i]);
    put32(out + 4 * MT_N, (uint32_t)r->index);
    put32(out + 4 * MT_N + 4, (uint32_t)r->has_cached_normal);
    uint64_t u;
    memcpy(&u, &r->cached_normal, sizeof u);
    put32(out + 4 * MT_N + 8, (uint32_t)u);
    put32(out + 4 * MT_N + 12, (uint32_t)(u >> 32));
}

int vx_rng_state_load(vx_rng *r, const uint8_t in[VX_RNG_STATE_BYTES]) {
    const int32_t index = (int32_t)get32(in + 4 * MT_N), cached = (int32_t)get32(in + 4 * MT_N + 4);
    if (index < 0 || index > MT_N || (cached != 0 && cached != 1)) return -1;
    for (int i = 0; i < MT_N; i++) r->mt[i] = get32(in + 4 * i);
    r->index = index;
    r->has_cached_normal = cached;
    const uint64_t u = (uint64_t)get32(in + 4 * MT_N + 8) | (uint64_t)get32(in + 4 * MT_N + 12) << 32;
    memcpy(&r->cached_normal, &u, sizeof u);
    return 0;
}
