/* Random-weight checkpoints built in memory (for benchmarks at real
 * dimensions without downloads). Tensors are laid out as a safetensors
 * image in an anonymous memory file and opened with the normal loader, so
 * benchmarks exercise exactly the code paths of a real checkpoint. */
#ifndef VX_SYNTHETIC_H
#define VX_SYNTHETIC_H

#include "io/safetensors.h"

typedef struct vx_synth vx_synth;

vx_synth *vx_synth_new(uint64_t seed);
void vx_synth_free(vx_synth *s);
/* Adds a tensor filled with uniform values in [−scale, scale] (scale < 0:
 * the constant −scale, e.g. −1 for norm weights of ones). */
vocis_status vx_synth_add(vx_synth *s, vx_dtype dt, float scale, int ndim, const int64_t *shape, vx_err *err,
                          const char *name_fmt, ...) __attribute__((format(printf, 7, 8)));
/* Materialises the tensors and opens them as a weight set; the builder may be freed afterwards. */
vocis_status vx_synth_open(vx_synth *s, vx_weights **out, vx_err *err);

#endif
