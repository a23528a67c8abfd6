/* A small tensor view: contiguous row-major data of one dtype, up to 4 dims.
 * Views never own memory; weights point into the mmap'd model file. */
#ifndef VX_TENSOR_H
#define VX_TENSOR_H

#include <stddef.h>
#include <stdint.h>

typedef enum vx_dtype {
    VX_F32 = 0,
    VX_F16,
    VX_BF16,
    VX_I64,
    VX_I32,
    VX_I16,
    VX_I8,
    VX_U8,
    VX_BOOL,
    VX_DTYPE_COUNT, /* the dtypes a file can hold end here */
    /* In memory only, never read from or written to a file: int8 weights with
     * one float scale per 32 values of a row (the q8 precision mode; a vx_mat
     * carries the scales, kernels/kernels.h). Element size 1, name "Q8". */
    VX_Q8 = 64,
    /* The speculative draft's formats (kernels/precision.h vx_draft_quantize):
     * VX_Q8's bytes with x quantized in one int8 part ("Q8D", size 1), and
     * 4-bit weights with one float scale per 32 values ("Q4", size 0: half
     * a byte per value). */
    VX_Q8D = 65,
    VX_Q4 = 66
} vx_dtype;

#define VX_MAX_DIMS 4

typedef struct vx_tensor {
    vx_dtype dtype;
    int ndim;
    int64_t shape[VX_MAX_DIMS];
    const void *data;
} vx_tensor;

size_t vx_dtype_size(vx_dtype t);
const char *vx_dtype_name(vx_dtype t);          /* "F32", "BF16", ... (safetensors spelling) */
int vx_dtype_from_name(const char *s, vx_dtype *out); /* 0 on success */

int64_t vx_numel(const vx_tensor *t);
/* "[2, 67, 128]" into buf; returns buf. */
char *vx_shape_str(const vx_tensor *t, char *buf, size_t n);

/* bf16 / f16 <-> f32 scalar conversions (round-to-nearest-even for f32->bf16). */
static inline float vx_bf16_to_f32(uint16_t h) {
    union { uint32_t u; float f; } v;
    v.u = (uint32_t)h << 16;
    return v.f;
}
static inline uint16_t vx_f32_to_bf16(float f) {
    union { uint32_t u; float f; } v;
    v.f = f;
    if ((v.u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((v.u >> 16) | 0x40); /* NaN */
    uint32_t r = 0x7fffu + ((v.u >> 16) & 1u);
    return (uint16_t)((v.u + r) >> 16);
}
float vx_f16_to_f32(uint16_t h);
uint16_t vx_f32_to_f16(float f);

/* Convert n elements of a float tensor (F32/F16/BF16) to f32. */
void vx_to_f32(float *dst, const void *src, vx_dtype t, size_t n);

#endif
