/* Thread pool (see pool.h).
 *
 * One region at a time runs on the pool; its fields (job) are written by
 * the caller that holds `busy`, while `gen` is odd and no worker holds a
 * reference (refs). Publishing a region makes `gen` even again; workers
 * waiting for a new even `gen` spin SPIN_NS, then sleep on it as a futex.
 * A worker joins if it gets one of the region's seats (nthreads − 1): the
 * pool may hold more workers than this caller's thread count allows. */
#include "base/pool.h"

#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define cpu_relax() _mm_pause()
#else
#define cpu_relax() ((void)0)
#endif

#define MAX_WORKERS 255
/* A decode step runs hundreds of regions with short serial gaps between
 * them: a worker that slept in every gap would pay a futex wake-up per
 * region. Past this it sleeps, so an idle pool costs no CPU. */
#define SPIN_NS 50000

/* A worker that the OS preempts in the middle of a chunk makes the caller
 * wait for it at the region's end: with another process on the cores, for
 * a time slice (milliseconds) per region, several times slower than one
 * thread. A region whose end-wait passes STALL_CHUNKS of the caller's own
 * chunk times (and STALL_MIN_NS) counts as a stall: the next regions run
 * with one helper fewer, for a hold that doubles with every stall (up to
 * HOLD_MAX regions, about one decode step) and halves after as many clean
 * regions at the full count. Which thread runs a chunk never changes a
 * result, so this changes only the speed. STALL_MIN_NS is about a third of
 * a time slice: a preempted worker costs the caller milliseconds, while
 * shorter end-waits (a worker woken late from its futex, a costlier last
 * chunk of a prefill's causal attention) are normal and counting them
 * halved many-row work (VibeVoice prefill 53 -> 34 tokens/s). */
#define STALL_MIN_NS 1000000
#define STALL_CHUNKS 3
/* Only regions of short chunks (decode: tens of µs) count stalls: where a
 * chunk takes milliseconds (prefill, voice encoding), waiting for the last
 * one is ordinary imbalance, and holding them to fewer helpers cost
 * VibeVoice's prefill 53 -> 34 tokens/s. */
#define STALL_CHUNK_MAX_NS 300000
#define HOLD_MIN 16
#define HOLD_MAX 256

typedef struct {
    vx_pool_fn fn;
    void *ctx;
    int64_t n;
    int helpers;
} job;

static atomic_flag busy = ATOMIC_FLAG_INIT;
static _Atomic uint32_t gen;     /* futex word: even = a region is published, odd = being set up */
static atomic_int refs;          /* workers that may read `cur` */
static atomic_int seats;         /* workers that may still join the current region */
static atomic_int sleepers;      /* workers in (or about to enter) FUTEX_WAIT */
static _Atomic int64_t next;     /* next chunk to claim */
static _Atomic int64_t done;     /* chunks finished */
static job cur;
static int n_workers;            /* written under `busy` */
/* stall backoff (under `busy`): at most `cap` helpers for the next `hold` regions */
static int cap;
static int64_t hold, backoff = HOLD_MIN, clean;
static atomic_int n_started;     /* for vx_pool_workers */

/* This thread's seat in the region it runs chunks of (vx_pool_slot). */
static _Thread_local int my_slot;

static long now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000000L + t.tv_nsec;
}

static void futex_wait(_Atomic uint32_t *w, uint32_t val) {
    syscall(SYS_futex, (uint32_t *)w, FUTEX_WAIT_PRIVATE, val, NULL, NULL, 0);
}

static void futex_wake(_Atomic uint32_t *w, int count) {
    syscall(SYS_futex, (uint32_t *)w, FUTEX_WAKE_PRIVATE, count, NULL, NULL, 0);
}

/* Returns the chunks this thread ran. */
static int64_t run_chunks(const job *j) {
    for (int64_t mine = 0;; mine++) {
        int64_t c = atomic_fetch_add(&next, 1);
        if (c >= j->n) return mine;
        j->fn(j->ctx, c);
        atomic_fetch_add_explicit(&done, 1, memory_order_release);
    }
}

/* After a region with `helpers` helpers: the caller ran `mine` chunks in
 * `work` ns, then waited `wait` ns for the others. */
static void note_region(int helpers, int full, int64_t mine, long work, long wait) {
    if (mine > 0 && work / mine < STALL_CHUNK_MAX_NS && wait > STALL_MIN_NS && wait > STALL_CHUNKS * (work / mine)) {
        cap = helpers - 1;
        hold = backoff;
        backoff = backoff * 2 < HOLD_MAX ? backoff * 2 : HOLD_MAX;
        clean = 0;
    } else if (full && ++clean >= backoff) {
        backoff = backoff / 2 > HOLD_MIN ? backoff / 2 : HOLD_MIN;
        clean = 0;
    }
}

/* A published generation other than `seen`: spin, then sleep. */
static uint32_t wait_region(uint32_t seen) {
    long deadline = 0;
    for (int i = 0;; i++) {
        uint32_t g = atomic_load(&gen);
        if (g != seen && !(g & 1)) return g;
        if (i % 64 != 63) {
            cpu_relax();
            continue;
        }
        if (!deadline) deadline = now_ns() + SPIN_NS;
        if (now_ns() < deadline) continue;
        atomic_fetch_add(&sleepers, 1);
        if (atomic_load(&gen) == g) futex_wait(&gen, g);
        atomic_fetch_sub(&sleepers, 1);
        deadline = 0;
    }
}

static void *worker(void *arg) {
    uint32_t seen = (uint32_t)(uintptr_t)arg;
    for (;;) {
        uint32_t g = wait_region(seen);
        seen = g;
        atomic_fetch_add(&refs, 1);
        /* gen still g: the caller has not begun the next region, and will
         * wait for refs to drop before it changes `cur` */
        int seat = atomic_load(&gen) == g ? atomic_fetch_sub(&seats, 1) : 0;
        if (seat > 0) { /* seats count down from helpers: slots helpers + 1 − seat = 1 … helpers */
            my_slot = cur.helpers + 1 - seat;
            run_chunks(&cur);
        }
        atomic_fetch_sub_explicit(&refs, 1, memory_order_release);
    }
    return NULL;
}

static void grow(int want) {
    if (want > MAX_WORKERS) want = MAX_WORKERS;
    while (n_workers < want) {
        pthread_attr_t a;
        pthread_t t;
        if (pthread_attr_init(&a)) return;
        pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
        int err = pthread_create(&t, &a, worker, (void *)(uintptr_t)atomic_load(&gen));
        pthread_attr_destroy(&a);
        if (err) return; /* fewer workers: the chunks still all run */
        n_workers++;
        atomic_fetch_add(&n_started, 1);
    }
}

static void run_alone(int64_t n, vx_pool_fn fn, void *ctx) {
    int outer = my_slot; /* a nested region: the enclosing chunk's slot comes back after */
    my_slot = 0;
    for (int64_t c = 0; c < n; c++) fn(ctx, c);
    my_slot = outer;
}

void vx_pool_run(int nthreads, int64_t n_chunks, vx_pool_fn fn, void *ctx) {
    if (n_chunks <= 0) return;
    if (nthreads <= 1 || n_chunks == 1 || atomic_flag_test_and_set(&busy)) {
        run_alone(n_chunks, fn, ctx);
        return;
    }
    grow(nthreads - 1);
    int helpers = nthreads - 1 < n_workers ? nthreads - 1 : n_workers;
    if (helpers > n_chunks - 1) helpers = (int)(n_chunks - 1);
    const int want = helpers;
    if (hold > 0) {
        hold--;
        if (helpers > cap) helpers = cap;
    }
    if (helpers < 1) {
        atomic_flag_clear(&busy);
        run_alone(n_chunks, fn, ctx);
        return;
    }
    atomic_fetch_add(&gen, 1); /* odd: late workers of the last region leave */
    while (atomic_load(&refs) > 0) sched_yield();
    cur = (job){fn, ctx, n_chunks, helpers};
    atomic_store(&next, 0);
    atomic_store(&done, 0);
    atomic_store(&seats, helpers);
    atomic_fetch_add(&gen, 1); /* even: published */
    if (atomic_load(&sleepers) > 0) futex_wake(&gen, helpers);
    int outer = my_slot;
    my_slot = 0;
    const long t0 = now_ns();
    const int64_t mine = run_chunks(&cur);
    const long t1 = now_ns();
    my_slot = outer;
    /* chunks others still run: spin briefly, then give the CPU to them */
    for (int i = 0; atomic_load_explicit(&done, memory_order_acquire) < n_chunks; i++) {
        if (i < 4096) cpu_relax();
        else sched_yield();
    }
    note_region(helpers, helpers == want, mine, t1 - t0, now_ns() - t1);
    atomic_flag_clear(&busy);
}

int64_t vx_pool_chunk_items(int64_t len, int64_t align, int nthreads) {
    int64_t chunks = (int64_t)(nthreads > 1 ? nthreads : 1) * 8;
    int64_t items = (len + chunks - 1) / chunks;
    items = (items + align - 1) / align * align;
    return items > align ? items : align;
}

int vx_pool_slot(void) { return my_slot; }

typedef struct {
    vx_pool_range_fn fn;
    void *ctx;
    int64_t len, items;
} range_job;

static void range_chunk(void *ctx, int64_t c) {
    const range_job *r = ctx;
    int64_t a = c * r->items, b = a + r->items < r->len ? a + r->items : r->len;
    r->fn(r->ctx, a, b);
}

void vx_pool_for(int nthreads, int64_t len, int64_t align, vx_pool_range_fn fn, void *ctx) {
    if (len <= 0) return;
    if (nthreads <= 1) { /* one range: no per-chunk calls */
        int outer = my_slot;
        my_slot = 0;
        fn(ctx, 0, len);
        my_slot = outer;
        return;
    }
    range_job r = {fn, ctx, len, vx_pool_chunk_items(len, align, nthreads)};
    vx_pool_run(nthreads, (len + r.items - 1) / r.items, range_chunk, &r);
}

int vx_pool_workers(void) { return atomic_load(&n_started); }
