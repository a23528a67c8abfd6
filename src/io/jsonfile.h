/* JSON helpers over cJSON: load a file with a size cap, and typed lookups by
 * dotted path ("a.b.c") with range checks and messages naming file and field. */
#ifndef VX_JSONFILE_H
#define VX_JSONFILE_H

#include <cjson/cJSON.h>

#include "base/err.h"

/* The largest JSON file read (configs, tokenizers, safetensors index): real ones are
 * under 10 MB; cJSON itself refuses nesting deeper than CJSON_NESTING_LIMIT (1000). */
#define VX_JSON_MAX_BYTES ((size_t)64 << 20)

/* Parses a JSON file (at most VX_JSON_MAX_BYTES). *out must be freed with cJSON_Delete. */
vocis_status vx_json_load(const char *path, cJSON **out, vx_err *err);
/* Read a whole file into a NUL-terminated malloc'd buffer (at most max bytes). */
vocis_status vx_read_file(const char *path, size_t max, char **out, size_t *len, vx_err *err);

/* Item at a dotted path under obj, NULL if any part is absent (obj may be NULL). */
const cJSON *vx_json_at(const cJSON *obj, const char *dotted);
/* If the field exists it must be a number in [min, max] (integral for ints);
 * absent fields leave *out unchanged. */
vocis_status vx_json_int_at(const cJSON *obj, const char *dotted, long min, long max, int *out, const char *file,
                            vx_err *err);
vocis_status vx_json_float_at(const cJSON *obj, const char *dotted, double min, double max, float *out,
                              const char *file, vx_err *err);
/* Required variants: absent is an error. */
vocis_status vx_json_req_int(const cJSON *obj, const char *dotted, long min, long max, int *out, const char *file,
                             vx_err *err);
vocis_status vx_json_req_float(const cJSON *obj, const char *dotted, double min, double max, float *out,
                               const char *file, vx_err *err);

#endif
