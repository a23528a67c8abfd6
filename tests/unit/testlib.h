/* Minimal test helpers: CHECK macros that count failures, golden-file access. */
#ifndef VX_TESTLIB_H
#define VX_TESTLIB_H

#include <math.h>
#include <stddef.h>
#include <stdio.h>

extern int tl_failures;
extern const char *tl_data_dir; /* argv[1] of the test: tests/data */

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);               \
            tl_failures++;                                                                         \
        }                                                                                          \
    } while (0)

#define CHECK_MSG(cond, ...)                                                                       \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: CHECK failed: %s: ", __FILE__, __LINE__, #cond);               \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
            tl_failures++;                                                                         \
        }                                                                                          \
    } while (0)

/* max |a-b| over n floats (NaN anywhere -> INFINITY). */
double tl_max_abs_diff(const float *a, const float *b, size_t n);
/* CHECK that two float arrays agree within atol; prints the worst index. */
#define CHECK_CLOSE(a, b, n, atol) tl_check_close(__FILE__, __LINE__, #a, (a), (b), (n), (atol))
void tl_check_close(const char *file, int line, const char *what, const float *a, const float *b, size_t n,
                    double atol);

/* Path under the test data folder (static buffer, valid until the next call). */
const char *tl_path(const char *rel);

/* Deterministic pseudo-random floats in [-1, 1) for kernel tests. */
void tl_fill_random(float *x, size_t n, unsigned seed);
/* A new malloc'd array of n such floats (at least one element), each call with the next seed
 * (1, 2, ... per test program); the caller frees it. */
float *tl_random_floats(size_t n);
/* w (n floats) stored as dt (VX_F32, VX_BF16 or VX_F16; a tensor.h vx_dtype)
 * in a malloc'd buffer (n + 1 entries), for a weight view; ref (n floats)
 * receives the stored values widened back to f32. */
void *tl_store_as(int dt, const float *w, size_t n, float *ref);

/* The whole file (malloc'd), *n its size; NULL if unreadable. */
unsigned char *tl_slurp(const char *path, size_t *n);

/* Names of the kernel ISA levels (kernels/isa.h VX_ISA_*), for messages. */
extern const char *const tl_isa_name[3];

/* Call at the end of main: prints a summary line and returns the exit code. */
int tl_finish(const char *name);

#endif
