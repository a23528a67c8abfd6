#include "models/stages.h"

#include <stdlib.h>
#include <string.h>

static vocis_status find_input(const vx_stage_args *a, const char *name, unsigned dtypes, int ndim,
                               const int64_t *shape, const vx_tensor **t, vx_err *err) {
    if (!a->in) return vx_fail(err, VOCIS_E_ARG, "this stage needs --in with tensor '%s'", name);
    *t = vx_st_find(a->in, name);
    if (!*t) return vx_fail(err, VOCIS_E_SHAPE, "%s: missing input tensor '%s'", vx_st_path(a->in), name);
    return vx_tensor_expect(*t, vx_st_path(a->in), name, dtypes, ndim, shape, err);
}

vocis_status vx_stage_in_f32(const vx_stage_args *a, const char *name, int ndim, const int64_t *shape,
                             float **data, vx_tensor *info, vx_err *err) {
    const vx_tensor *t = NULL;
    VX_TRY(find_input(a, name, VX_FLOATS, ndim, shape, &t, err));
    size_t n = (size_t)vx_numel(t);
    *data = vx_malloc(err, n * sizeof(float), name);
    if (!*data) return VOCIS_E_NOMEM;
    vx_to_f32(*data, t->data, t->dtype, n);
    if (info) *info = *t;
    return VOCIS_OK;
}

vocis_status vx_stage_in_i64(const vx_stage_args *a, const char *name, int ndim, const int64_t *shape,
                             int64_t **data, vx_tensor *info, vx_err *err) {
    const vx_tensor *t = NULL;
    VX_TRY(find_input(a, name, VX_INTS, ndim, shape, &t, err));
    size_t n = (size_t)vx_numel(t);
    *data = vx_malloc(err, n * sizeof(int64_t), name);
    if (!*data) return VOCIS_E_NOMEM;
    for (size_t i = 0; i < n; i++)
        (*data)[i] = t->dtype == VX_I64 ? ((const int64_t *)t->data)[i] : ((const int32_t *)t->data)[i];
    if (info) *info = *t;
    return VOCIS_OK;
}

vocis_status vx_stage_out_f32(const vx_stage_args *a, const char *name, int ndim, const int64_t *shape,
                              const float *data, vx_err *err) {
    return vx_st_writer_add(a->out, name, VX_F32, ndim, shape, data, err);
}

vocis_status vx_stage_out_i64(const vx_stage_args *a, const char *name, int ndim, const int64_t *shape,
                              const int64_t *data, vx_err *err) {
    return vx_st_writer_add(a->out, name, VX_I64, ndim, shape, data, err);
}

vocis_status vx_stage_no_options(const vx_stage_args *a, vx_err *err) {
    if (a->argc > 0) return vx_fail(err, VOCIS_E_ARG, "unknown option '%s' for this stage", a->argv[0]);
    return VOCIS_OK;
}

vocis_status vx_stage_in_wave(const vx_stage_args *a, const char *name, float **data, int64_t *n, vx_err *err) {
    vx_tensor t;
    VX_TRY(vx_stage_in_f32(a, name, -1, NULL, data, &t, err));
    if (t.ndim > 2 || (t.ndim == 2 && t.shape[0] != 1) || vx_numel(&t) < 1) {
        char s[64];
        free(*data);
        *data = NULL;
        return vx_fail(err, VOCIS_E_SHAPE, "%s: input tensor '%s': expected shape [L] or [1, L] (L >= 1), found %s",
                       vx_st_path(a->in), name, vx_shape_str(&t, s, sizeof s));
    }
    *n = vx_numel(&t);
    return VOCIS_OK;
}

vocis_status vx_stage_opt_steps(const vx_stage_args *a, int *steps, vx_err *err) {
    for (int i = 0; i < a->argc; i++) {
        if (strcmp(a->argv[i], "--steps") == 0 && i + 1 < a->argc) {
            char *end;
            long v = strtol(a->argv[++i], &end, 10);
            if (*end || v < 1 || v > 1000)
                return vx_fail(err, VOCIS_E_ARG, "option --steps: invalid value '%s' (1..1000)", a->argv[i]);
            *steps = (int)v;
        } else {
            return vx_fail(err, VOCIS_E_ARG, "unknown option '%s' (stage options: --steps N)", a->argv[i]);
        }
    }
    return VOCIS_OK;
}
