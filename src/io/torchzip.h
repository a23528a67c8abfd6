/* torch.save archives: a ZIP container (STORED entries only, ZIP64 aware)
 * holding `<prefix>/data.pkl`, `<prefix>/data/<key>` storages, and
 * `<prefix>/version` / `<prefix>/byteorder` records.
 *
 * Every offset and size in the central directory and local headers is
 * checked against the file size; entries are CRC-checked on first read.
 * Compressed or encrypted entries are reported as VOCIS_E_UNSUPPORTED when
 * read. The pickle goes through the hardened VM of io/pickle.h, whose
 * tensors view the (mmap'd) archive: they live as long as the file handle. */
#ifndef VX_TORCHZIP_H
#define VX_TORCHZIP_H

#include "base/err.h"
#include "io/pickle.h"

#include <stdint.h>

/* ---- zip container ---- */

typedef struct vx_zip vx_zip;

vocis_status vx_zip_open(const char *path, vx_zip **out, vx_err *err);
/* Copies buf; name is used in messages. */
vocis_status vx_zip_open_mem(const void *buf, size_t len, const char *name, vx_zip **out, vx_err *err);
void vx_zip_close(vx_zip *z);
const char *vx_zip_path(const vx_zip *z);
int vx_zip_count(const vx_zip *z);
const char *vx_zip_name(const vx_zip *z, int i); /* sorted by name */
int vx_zip_has(const vx_zip *z, const char *name);
/* Bytes of a stored entry (valid until vx_zip_close); CRC-checked on first access. */
vocis_status vx_zip_read(vx_zip *z, const char *name, const uint8_t **data, uint64_t *size, vx_err *err);

/* ---- torch.save files ---- */

typedef struct vx_torch_file vx_torch_file;

vocis_status vx_torch_open(const char *path, vx_torch_file **out, vx_err *err);
/* Same, also accepting the plain-data classes of vx_pickle_opts.data_classes
 * (HF BaseModelOutputWithPast / DynamicCache: VibeVoice-Realtime voice presets). */
vocis_status vx_torch_open_data(const char *path, vx_torch_file **out, vx_err *err);
vocis_status vx_torch_open_mem(const void *buf, size_t len, const char *name, vx_torch_file **out, vx_err *err);
void vx_torch_close(vx_torch_file *f);
const char *vx_torch_path(const vx_torch_file *f);
/* The unpickled object (tensors are VX_PK_TENSOR values). */
const vx_pk_value *vx_torch_root(const vx_torch_file *f);
/* Archive folder name inside the zip, e.g. "conds/" (may be ""). */
const char *vx_torch_prefix(const vx_torch_file *f);

#endif
