#include "io/jsonfile.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

vocis_status vx_read_file(const char *path, size_t max, char **out, size_t *len, vx_err *err) {
    *out = NULL;
    FILE *fp = fopen(path, "rb");
    if (!fp) return vx_fail(err, VOCIS_E_IO, "%s: cannot open: %s", path, strerror(errno));
    struct stat sb;
    if (fstat(fileno(fp), &sb) != 0 || !S_ISREG(sb.st_mode)) {
        fclose(fp);
        return vx_fail(err, VOCIS_E_IO, "%s: not a regular file", path);
    }
    if ((unsigned long long)sb.st_size > max) {
        fclose(fp);
        return vx_fail(err, VOCIS_E_FORMAT, "%s: file is %lld bytes, more than the %zu allowed", path,
                       (long long)sb.st_size, max);
    }
    size_t n = (size_t)sb.st_size;
    char *buf = malloc(n + 1);
    if (!buf) {
        fclose(fp);
        return vx_fail(err, VOCIS_E_NOMEM, "%s: out of memory", path);
    }
    size_t got = fread(buf, 1, n, fp);
    fclose(fp);
    if (got != n) {
        free(buf);
        return vx_fail(err, VOCIS_E_IO, "%s: short read", path);
    }
    buf[n] = '\0';
    *out = buf;
    if (len) *len = n;
    return VOCIS_OK;
}

vocis_status vx_json_load(const char *path, cJSON **out, vx_err *err) {
    char *text;
    size_t len = 0;
    VX_TRY(vx_read_file(path, VX_JSON_MAX_BYTES, &text, &len, err));
    const char *end = NULL;
    *out = cJSON_ParseWithLengthOpts(text, len, &end, 0);
    if (!*out) {
        size_t off = end ? (size_t)(end - text) : 0;
        free(text);
        return vx_fail(err, VOCIS_E_FORMAT, "%s: invalid JSON near byte %zu", path, off);
    }
    free(text);
    return VOCIS_OK;
}

const cJSON *vx_json_at(const cJSON *obj, const char *dotted) {
    char key[256];
    const char *p = dotted;
    while (obj && *p) {
        const char *dot = strchr(p, '.');
        size_t n = dot ? (size_t)(dot - p) : strlen(p);
        if (n >= sizeof key) return NULL;
        memcpy(key, p, n);
        key[n] = '\0';
        obj = cJSON_IsObject(obj) ? cJSON_GetObjectItemCaseSensitive(obj, key) : NULL;
        p = dot ? dot + 1 : p + n;
    }
    return obj;
}

static vocis_status number_at(const cJSON *obj, const char *dotted, double min, double max, int integral,
                              int required, double *out, int *found, const char *file, vx_err *err) {
    const cJSON *it = vx_json_at(obj, dotted);
    *found = 0;
    if (!it) {
        if (required) return vx_fail(err, VOCIS_E_FORMAT, "%s: missing field '%s'", file, dotted);
        return VOCIS_OK;
    }
    if (!cJSON_IsNumber(it)) return vx_fail(err, VOCIS_E_FORMAT, "%s: field '%s' is not a number", file, dotted);
    double v = it->valuedouble;
    if (!isfinite(v) || (integral && floor(v) != v))
        return vx_fail(err, VOCIS_E_FORMAT, "%s: field '%s' must be %s", file, dotted,
                       integral ? "an integer" : "finite");
    if (v < min || v > max)
        return vx_fail(err, VOCIS_E_FORMAT, "%s: field '%s' = %g is outside [%g, %g]", file, dotted, v, min, max);
    *out = v;
    *found = 1;
    return VOCIS_OK;
}

vocis_status vx_json_int_at(const cJSON *obj, const char *dotted, long min, long max, int *out, const char *file,
                            vx_err *err) {
    double v = 0;
    int found;
    VX_TRY(number_at(obj, dotted, (double)min, (double)max, 1, 0, &v, &found, file, err));
    if (found) *out = (int)v;
    return VOCIS_OK;
}

vocis_status vx_json_float_at(const cJSON *obj, const char *dotted, double min, double max, float *out,
                              const char *file, vx_err *err) {
    double v = 0;
    int found;
    VX_TRY(number_at(obj, dotted, min, max, 0, 0, &v, &found, file, err));
    if (found) *out = (float)v;
    return VOCIS_OK;
}

vocis_status vx_json_req_int(const cJSON *obj, const char *dotted, long min, long max, int *out, const char *file,
                             vx_err *err) {
    double v = 0;
    int found;
    VX_TRY(number_at(obj, dotted, (double)min, (double)max, 1, 1, &v, &found, file, err));
    *out = (int)v;
    return VOCIS_OK;
}

vocis_status vx_json_req_float(const cJSON *obj, const char *dotted, double min, double max, float *out,
                               const char *file, vx_err *err) {
    double v = 0;
    int found;
    VX_TRY(number_at(obj, dotted, min, max, 0, 1, &v, &found, file, err));
    *out = (float)v;
    return VOCIS_OK;
}
