/* Error context: every fallible internal function returns a vocis_status and,
 * on failure, leaves a one-line message in the caller's vx_err. */
#ifndef VX_ERR_H
#define VX_ERR_H

#include "vocis.h"

typedef struct vx_err {
    vocis_status code;
    char msg[1024];
} vx_err;

/* Record a failure (printf-style message) and return `code`. Safe with err == NULL. */
vocis_status vx_fail(vx_err *err, vocis_status code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Prefix the current message with context, e.g. vx_errctx(err, "%s", path).
 * Returns err->code so it can be used as `return vx_errctx(...)`. */
vocis_status vx_errctx(vx_err *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

void vx_err_clear(vx_err *err);

/* Propagate a failing status: VX_TRY(expr); */
#define VX_TRY(expr)                                                                               \
    do {                                                                                           \
        vocis_status vx_try_st_ = (expr);                                                          \
        if (vx_try_st_ != VOCIS_OK) return vx_try_st_;                                             \
    } while (0)

/* Allocation helpers that report failure through err. */
void *vx_malloc(vx_err *err, size_t n, const char *what);
void *vx_calloc(vx_err *err, size_t count, size_t size, const char *what);

#endif
