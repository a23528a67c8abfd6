/* Torch-compatible CPU random numbers (see shared spec torch_rng.md):
 * MT19937 seeded like torch.manual_seed, and the exact transforms torch
 * uses for exponential_, rand, uniform and randn on float32 tensors.
 * One generator object is threaded through every model so that S3Gen and
 * VibeVoice continue the stream that T3 started. */
#ifndef VX_RNG_H
#define VX_RNG_H

#include <stddef.h>
#include <stdint.h>

typedef struct vx_rng {
    uint32_t mt[624];
    int index;
    int has_cached_normal; /* scalar normal path caches its second value */
    double cached_normal;
} vx_rng;

void vx_rng_seed(vx_rng *r, uint64_t seed);   /* torch.manual_seed(seed) */
uint32_t vx_rng_u32(vx_rng *r);                /* one MT19937 output */
uint64_t vx_rng_u64(vx_rng *r);                /* (a << 32) | b */
float vx_rng_uniform_f32(vx_rng *r);           /* (u32 & 0xFFFFFF) · 2^−24 */
double vx_rng_uniform_f64(vx_rng *r);          /* (u64 & (2^53 − 1)) · 2^−53 */

/* tensor.exponential_(1) on a float32 tensor of n elements. */
void vx_rng_exponential(vx_rng *r, float *out, size_t n);
/* torch.rand(n) (float32). */
void vx_rng_rand(vx_rng *r, float *out, size_t n);
/* Uniform(lo, hi).sample() for n float32 values: lo + (hi − lo)·u. */
void vx_rng_uniform(vx_rng *r, float *out, size_t n, float lo, float hi);
/* torch.randn(n) / randn_like / normal_ on a contiguous float32 tensor of n
 * elements (vector path for n ≥ 16, scalar path with cached second value
 * below). Bit-exact except the vector path's log/sin/cos, where torch's AVX2
 * build uses its own approximations: within 3 ulp of torch (most values
 * identical); the generator state afterwards is always identical. */
void vx_rng_randn(vx_rng *r, float *out, size_t n);
/* The scalar path for any n: what torch does for normal_ / randn_like on a
 * NON-contiguous float32 tensor (e.g. randn_like of a transposed view), with
 * values produced in the tensor's memory order. VibeVoice's voice-prompt
 * randn_like(mean) takes this path: mean is a [B, T, C] view of [B, C, T]
 * storage, so draw B·C·T values here and read them as [B][C][T]. */
void vx_rng_randn_scalar(vx_rng *r, float *out, size_t n);

/* The generator's whole state as bytes (little-endian: mt, index, cached-normal flag and value),
 * for checkpoints of resumable jobs. load returns -1 (r untouched) on a state no generator has. */
#define VX_RNG_STATE_BYTES (624 * 4 + 4 + 4 + 8)
void vx_rng_state_save(const vx_rng *r, uint8_t out[VX_RNG_STATE_BYTES]);
int vx_rng_state_load(vx_rng *r, const uint8_t in[VX_RNG_STATE_BYTES]);

/* Not torch: a fast xorshift64* stream, uniform in [−1, 1), for filling
 * synthetic (benchmark) weights. *state must not be 0. */
float vx_rand_pm1(uint64_t *state);

#endif
