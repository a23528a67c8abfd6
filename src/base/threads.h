#ifndef VX_THREADS_H
#define VX_THREADS_H
/* Default worker count: physical cores (from sysfs), at least 1. */
int vx_default_threads(void);

/* Monotonic seconds. */
double vx_now_s(void);
#endif
