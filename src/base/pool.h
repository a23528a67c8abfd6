#ifndef VX_POOL_H
#define VX_POOL_H
#include <stdint.h>

/* The process's thread pool for the kernels (decode path: linear layers,
 * attention rows). vx_pool_run(nthreads, n, fn, ctx) calls fn(ctx, c) once
 * for every chunk c in [0, n) and returns when all have finished. The
 * calling thread works too, with at most nthreads − 1 pool workers; chunks
 * are claimed one at a time from an atomic counter, so a worker that the OS
 * preempts holds only the chunk it runs, the others take the rest.
 *
 * fn must give the same result whichever thread runs a chunk and in
 * whatever order the chunks run (each output written by one chunk): then
 * the result does not depend on the thread count.
 *
 * One pool per process, created on first use and grown to the largest
 * thread count asked for; workers spin a few microseconds after a region
 * ends (the next one usually follows at once), then sleep on a futex.
 * Concurrent callers are safe: a caller that finds the pool running another
 * caller's region (another thread, or a chunk of the pool's own region)
 * runs its chunks alone, on its own thread. When the caller has to wait at
 * a region's end for a worker that the OS preempted (another process on
 * the cores), the following regions take one worker fewer for a while
 * (pool.c: stall backoff), so a busy neighbour costs no more than running
 * on fewer threads; the results stay the same. */
typedef void (*vx_pool_fn)(void *ctx, int64_t chunk);
void vx_pool_run(int nthreads, int64_t n_chunks, vx_pool_fn fn, void *ctx);

/* Items per chunk when len items go to nthreads threads: a multiple of
 * align, about 8 chunks per thread (small enough that the others absorb a
 * preempted worker's share), the chunk count being ceil(len / items). */
int64_t vx_pool_chunk_items(int64_t len, int64_t align, int nthreads);

/* The slot of the thread running the current chunk: 0 for the caller,
 * 1 … nthreads − 1 for the workers that joined, the same for every chunk a
 * thread runs in one region, and never held by two threads of a region at
 * once; a region can thus give each slot its own scratch (nthreads × per,
 * nthreads ≥ 1). Which chunks a slot runs varies from run to run: scratch
 * must not carry results between chunks. A region that runs alone (one
 * thread, one chunk, or the pool busy with another region, as for one
 * nested in a pool chunk) runs in slot 0; the enclosing chunk's slot is
 * restored when it returns. 0 outside any region. */
int vx_pool_slot(void);

/* vx_pool_run over the items [0, len): fn(ctx, begin, end) for chunks of
 * vx_pool_chunk_items(len, align, nthreads) items (one call for the whole
 * range when nthreads ≤ 1: a region too small to split passes 1). */
typedef void (*vx_pool_range_fn)(void *ctx, int64_t begin, int64_t end);
void vx_pool_for(int nthreads, int64_t len, int64_t align, vx_pool_range_fn fn, void *ctx);

/* Pool workers started so far (for tests). */
int vx_pool_workers(void);
#endif
