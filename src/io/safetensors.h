/* safetensors: validated, zero-copy (mmap) reading and a simple writer.
 *
 * A vx_weights is a set of tensors from one file or from a sharded
 * `model.safetensors.index.json`; models ask it for tensors by name with the
 * dtype and shape they expect, and get an error naming file, tensor,
 * expected and found when the checkpoint disagrees. */
#ifndef VX_SAFETENSORS_H
#define VX_SAFETENSORS_H

#include "base/err.h"
#include "tensor/tensor.h"

typedef struct vx_st_file vx_st_file;

vocis_status vx_st_open(const char *path, vx_st_file **out, vx_err *err);
/* Same checks on an in-memory file (copied; name is used in messages). */
vocis_status vx_st_open_mem(const void *buf, size_t len, const char *name, vx_st_file **out, vx_err *err);
void vx_st_close(vx_st_file *f);
const char *vx_st_path(const vx_st_file *f);
int vx_st_count(const vx_st_file *f);
const char *vx_st_name(const vx_st_file *f, int i); /* sorted by name */
const vx_tensor *vx_st_tensor(const vx_st_file *f, int i);
const vx_tensor *vx_st_find(const vx_st_file *f, const char *name); /* NULL if absent */
const char *vx_st_metadata(const vx_st_file *f, const char *key);   /* NULL if absent */

/* ---- a named set of tensors over one or more files ---- */

typedef struct vx_weights vx_weights;

/* path is a .safetensors file or a model.safetensors.index.json. */
vocis_status vx_weights_open(const char *path, vx_weights **out, vx_err *err);
void vx_weights_close(vx_weights *w);
const char *vx_weights_path(const vx_weights *w);
int vx_weights_has(const vx_weights *w, const char *name);
/* NULL if absent; *file (optional) receives the file path holding it. */
const vx_tensor *vx_weights_find(const vx_weights *w, const char *name, const char **file);
/* Iterate all tensors (i in [0, count)). */
int vx_weights_count(const vx_weights *w);
const char *vx_weights_name(const vx_weights *w, int i);
const vx_tensor *vx_weights_tensor(const vx_weights *w, int i);
/* A set over n tensors held elsewhere (e.g. a torch state dict, io/ptweights.h): names and views are
 * copied, the data stays where the views point. release(owner) (may be NULL) runs on close, or at once
 * when this fails. Tensors report `path` as their file. */
vocis_status vx_weights_from_views(const char *path, int n, const char *const *names, const vx_tensor *views,
                                   void (*release)(void *), void *owner, vx_weights **out, vx_err *err);

/* ---- converted copies (the precision policy, kernels/precision.h) ----
 * The set carries the policy chosen at load (set it right after opening;
 * 0 = exact: tensors are used as stored) and owns the copies that loaders
 * convert from its tensors, so converted matrices live exactly as long as
 * the views into the file would. */
void vx_weights_set_precision(vx_weights *w, int precision);
int vx_weights_precision(const vx_weights *w); /* 0 for NULL */
/* The copy of `src` (a tensor's data) kept under `kind`, or NULL. */
void *vx_weights_converted(const vx_weights *w, const void *src, int kind);
/* Hands a malloc'd copy of src to the set (freed by vx_weights_close; freed
 * at once when the table cannot grow). */
vocis_status vx_weights_keep(const vx_weights *w, const void *src, int kind, void *data, vx_err *err);
/* Drops the resident pages of a mapped span that was converted (they read
 * back from the file if touched again); no-op for data not in a file map. */
void vx_weights_release(const vx_weights *w, const void *data, size_t bytes);
/* 1 when [data, data + bytes) lies in one of the set's file mappings (the
 * memory vx_weights_release can drop), else 0. */
int vx_weights_mapped(const vx_weights *w, const void *data, size_t bytes);
/* The name of the tensor whose data starts at `data`, or NULL (for messages). */
const char *vx_weights_name_at(const vx_weights *w, const void *data);

#define VX_DT(t) (1u << (t))
#define VX_FLOATS (VX_DT(VX_F32) | VX_DT(VX_F16) | VX_DT(VX_BF16))
#define VX_INTS (VX_DT(VX_I64) | VX_DT(VX_I32))
/* VX_DIMS(a, b) expands to the `ndim, shape` argument pair. -1 = any size. */
#define VX_DIMS(...)                                                                               \
    (int)(sizeof((const int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), (const int64_t[]) { __VA_ARGS__ }

/* Look up a tensor and check its dtype (bit mask of VX_DT) and shape.
 * ndim < 0 accepts any rank. The name is a printf format. */
vocis_status vx_weights_expect(const vx_weights *w, unsigned dtypes, int ndim, const int64_t *shape,
                               vx_tensor *out, vx_err *err, const char *name_fmt, ...)
    __attribute__((format(printf, 7, 8)));

/* Same check on an already-found tensor (for inputs of debug stages). */
vocis_status vx_tensor_expect(const vx_tensor *t, const char *where, const char *name, unsigned dtypes,
                              int ndim, const int64_t *shape, vx_err *err);

/* ---- writer ---- */

typedef struct vx_st_writer vx_st_writer;

vx_st_writer *vx_st_writer_new(void);
void vx_st_writer_free(vx_st_writer *w);
/* Copies the data. */
vocis_status vx_st_writer_add(vx_st_writer *w, const char *name, vx_dtype dt, int ndim,
                              const int64_t *shape, const void *data, vx_err *err);
vocis_status vx_st_writer_meta(vx_st_writer *w, const char *key, const char *value, vx_err *err);
/* Writes path as io/outfile.h says (atomic replace through a unique temporary;
 * a failed write leaves the old file, or none). */
vocis_status vx_st_writer_save(vx_st_writer *w, const char *path, vx_err *err);

#endif
