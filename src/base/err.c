#include "base/err.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

vocis_status vx_fail(vx_err *err, vocis_status code, const char *fmt, ...) {
    if (!err) return code;
    err->code = code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    /* Messages are one line: fold any newline that came in through a format argument. */
    for (char *p = err->msg; *p; p++)
        if (*p == '\n' || *p == '\r') *p = ' ';
    return code;
}

vocis_status vx_errctx(vx_err *err, const char *fmt, ...) {
    if (!err) return VOCIS_E_INTERNAL;
    char prefix[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    char old[sizeof err->msg];
    memcpy(old, err->msg, sizeof old);
    size_t plen = strlen(prefix);
    if (plen + 2 >= sizeof err->msg) plen = sizeof err->msg - 3;
    memcpy(err->msg, prefix, plen);
    memcpy(err->msg + plen, ": ", 2);
    size_t rest = sizeof err->msg - plen - 3;
    size_t olen = strnlen(old, rest);
    memcpy(err->msg + plen + 2, old, olen);
    err->msg[plen + 2 + olen] = '\0';
    if (err->code == VOCIS_OK) err->code = VOCIS_E_INTERNAL;
    return err->code;
}

void vx_err_clear(vx_err *err) {
    if (!err) return;
    err->code = VOCIS_OK;
    err->msg[0] = '\0';
}

void *vx_malloc(vx_err *err, size_t n, const char *what) {
    void *p = malloc(n ? n : 1);
    if (!p) vx_fail(err, VOCIS_E_NOMEM, "out of memory allocating %zu bytes for %s", n, what);
    return p;
}

void *vx_calloc(vx_err *err, size_t count, size_t size, const char *what) {
    void *p = calloc(count ? count : 1, size ? size : 1);
    if (!p) vx_fail(err, VOCIS_E_NOMEM, "out of memory allocating %zu x %zu bytes for %s", count, size, what);
    return p;
}
