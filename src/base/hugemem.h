/* Memory for weight matrices that the decode kernels stream from start to
 * end every step (converted copies: q8, bf16 from f32). */
#ifndef VX_HUGEMEM_H
#define VX_HUGEMEM_H

#include <stddef.h>

/* bytes of memory, 64-byte aligned; from 2 MiB on, 2 MiB aligned with its
 * whole 2 MiB pages marked for transparent huge pages (madvise
 * MADV_HUGEPAGE; a no-op where the kernel has them off), so a streamed
 * matrix needs one TLB entry per 2 MiB instead of one per 4 KiB. NULL when
 * out of memory. free() releases it. */
void *vx_alloc_streamed(size_t bytes);

/* The huge page size vx_alloc_streamed aligns to: buffers smaller than this
 * gain no huge page. */
#define VX_HUGE_PAGE_BYTES ((size_t)2 << 20)

/* A vx_alloc_streamed copy of bytes at src, copied by up to nthreads threads;
 * NULL when out of memory. */
void *vx_copy_streamed(const void *src, size_t bytes, int nthreads);

#endif
