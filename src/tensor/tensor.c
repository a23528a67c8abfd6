#include "tensor/tensor.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const char *const dtype_names[VX_DTYPE_COUNT] = {
    "F32", "F16", "BF16", "I64", "I32", "I16", "I8", "U8", "BOOL",
};
static const size_t dtype_sizes[VX_DTYPE_COUNT] = {4, 2, 2, 8, 4, 2, 1, 1, 1};

size_t vx_dtype_size(vx_dtype t) {
    return (unsigned)t < VX_DTYPE_COUNT ? dtype_sizes[t] : t == VX_Q8 || t == VX_Q8D ? 1 : 0;
}

const char *vx_dtype_name(vx_dtype t) {
    if ((unsigned)t < VX_DTYPE_COUNT) return dtype_names[t];
    return t == VX_Q8 ? "Q8" : t == VX_Q8D ? "Q8D" : t == VX_Q4 ? "Q4" : "?";
}

int vx_dtype_from_name(const char *s, vx_dtype *out) {
    for (int i = 0; i < VX_DTYPE_COUNT; i++)
        if (strcmp(s, dtype_names[i]) == 0) {
            *out = (vx_dtype)i;
            return 0;
        }
    return -1;
}

int64_t vx_numel(const vx_tensor *t) {
    int64_t n = 1;
    for (int i = 0; i < t->ndim; i++) n *= t->shape[i];
    return n;
}

char *vx_shape_str(const vx_tensor *t, char *buf, size_t n) {
    size_t off = 0;
    off += (size_t)snprintf(buf + off, n - off, "[");
    for (int i = 0; i < t->ndim && off < n; i++)
        off += (size_t)snprintf(buf + off, n - off, i ? ", %lld" : "%lld", (long long)t->shape[i]);
    if (off < n) snprintf(buf + off, n - off, "]");
    return buf;
}

float vx_f16_to_f32(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1f, man = h & 0x3ffu;
    union { uint32_t u; float f; } v;
    if (exp == 0) {
        float f = ldexpf((float)man, -24);
        return sign ? -f : f;
    }
    if (exp == 31) v.u = sign | 0x7f800000u | (man << 13);
    else v.u = sign | ((exp + 112) << 23) | (man << 13);
    return v.f;
}

uint16_t vx_f32_to_f16(float f) {
    union { uint32_t u; float f; } v;
    v.f = f;
    uint32_t sign = (v.u >> 16) & 0x8000u;
    uint32_t a = v.u & 0x7fffffffu;
    if (a > 0x7f800000u) return (uint16_t)(sign | 0x7e00u);
    if (a >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u); /* overflow -> inf */
    if (a < 0x38800000u) {                                   /* subnormal or zero */
        float m = fabsf(f) * 16777216.0f;                    /* 2^24 */
        return (uint16_t)(sign | (uint32_t)nearbyintf(m));
    }
    uint32_t r = a + 0xfffu + ((a >> 13) & 1u) - 0x38000000u;
    return (uint16_t)(sign | (r >> 13));
}

void vx_to_f32(float *dst, const void *src, vx_dtype t, size_t n) {
    if (t == VX_F32) {
        memcpy(dst, src, n * sizeof(float));
    } else if (t == VX_BF16) {
        const uint16_t *s = src;
        for (size_t i = 0; i < n; i++) dst[i] = vx_bf16_to_f32(s[i]);
    } else if (t == VX_F16) {
        const uint16_t *s = src;
        for (size_t i = 0; i < n; i++) dst[i] = vx_f16_to_f32(s[i]);
    }
}
