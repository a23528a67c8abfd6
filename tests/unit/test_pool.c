/* The thread pool (base/pool.h): every chunk runs exactly once for any
 * worker count and chunk count, at most nthreads threads take part, each
 * in a slot of its own (vx_pool_slot), nested
 * and concurrent callers are correct, and the kernels on the pool (decode
 * linear f32/bf16/q8, decode attention) give the same bits for 1 … 8
 * threads. No timing. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/pool.h"
#include "kernels/kernels.h"
#include "kernels/precision.h"
#include "tensor/tensor.h"
#include "testlib.h"

#define MAX_CHUNKS 1000

/* Chunk c: an order-dependent float sum of its own, so a chunk computed
 * twice, skipped or torn shows. */
typedef struct {
    float out[MAX_CHUNKS];
    atomic_int calls[MAX_CHUNKS];
    pthread_t who[MAX_CHUNKS];
    int slot[MAX_CHUNKS];
    atomic_int in_use[8]; /* a slot's chunk is running */
    atomic_int slot_bad;  /* slot out of range, shared by two running chunks, or not restored after nesting */
    int nthreads;
    int nested; /* each chunk also runs a small region of its own */
} sum_job;

static float chunk_value(int64_t c) {
    float s = 0;
    for (int i = 0; i < 2000; i++) s += (float)((c * 7919 + i * 31) % 1000) * 1e-3f / (float)(i + 1);
    return s;
}

/* a nested region (4 threads) sees slots of its own: 0 when it runs alone inside a pool chunk */
static void inner_chunk(void *ctx, int64_t c) {
    int s = vx_pool_slot();
    ((float *)ctx)[c] = s >= 0 && s < 4 ? chunk_value(c + 100) : -1;
}

static void sum_chunk(void *ctx, int64_t c) {
    sum_job *j = ctx;
    atomic_fetch_add(&j->calls[c], 1);
    j->who[c] = pthread_self();
    int s = vx_pool_slot(), max = j->nthreads > 1 ? j->nthreads : 1;
    j->slot[c] = s;
    int in_range = s >= 0 && s < max;
    if (!in_range || atomic_exchange(&j->in_use[s], 1)) atomic_fetch_add(&j->slot_bad, 1);
    float v = chunk_value(c);
    if (j->nested) {
        float in[5];
        vx_pool_run(4, 5, inner_chunk, in);
        for (int i = 0; i < 5; i++) v += in[i];
    }
    if (vx_pool_slot() != s) atomic_fetch_add(&j->slot_bad, 1);
    if (in_range) atomic_store(&j->in_use[s], 0);
    j->out[c] = v;
}

static float expected(int64_t c, int nested) {
    float v = chunk_value(c);
    if (nested)
        for (int i = 0; i < 5; i++) v += chunk_value(i + 100);
    return v;
}

/* Runs n chunks on nthreads; returns the failures found. */
static int check_run(int nthreads, int64_t n, int nested) {
    sum_job *j = calloc(1, sizeof *j);
    j->nested = nested;
    j->nthreads = nthreads;
    vx_pool_run(nthreads, n, sum_chunk, j);
    int bad = atomic_load(&j->slot_bad), threads = 0;
    for (int64_t c = 0; c < MAX_CHUNKS; c++) {
        int calls = atomic_load(&j->calls[c]);
        if (calls != (c < n) || (c < n && j->out[c] != expected(c, nested))) bad++;
        if (c >= n) continue;
        int seen = 0;
        for (int64_t d = 0; d < c && !seen; d++)
            if (pthread_equal(j->who[d], j->who[c])) {
                seen = 1;
                bad += j->slot[d] != j->slot[c]; /* one thread, one slot per region */
            }
        threads += !seen;
    }
    if (threads > (nthreads > 1 ? nthreads : 1)) bad++;
    free(j);
    return bad;
}

static void test_chunks(void) {
    static const int64_t counts[] = {0, 1, 2, 3, 7, 8, 9, 17, 63, 64, 65, 333, MAX_CHUNKS};
    for (int nt = 1; nt <= 8; nt++)
        for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) {
            CHECK_MSG(check_run(nt, counts[i], 0) == 0, "threads=%d chunks=%lld", nt, (long long)counts[i]);
            CHECK_MSG(check_run(nt, counts[i], 1) == 0, "nested threads=%d chunks=%lld", nt, (long long)counts[i]);
        }
    CHECK(vx_pool_workers() >= 1 && vx_pool_workers() <= 7); /* the callers count as one of 8 */
}

static void test_chunk_items(void) {
    CHECK(vx_pool_chunk_items(1024, 16, 2) == 64);
    CHECK(vx_pool_chunk_items(1000, 16, 3) == 48);
    CHECK(vx_pool_chunk_items(5, 16, 8) == 16);
    CHECK(vx_pool_chunk_items(0, 4, 1) == 4);
}

/* vx_pool_for: every item in exactly one range, ranges aligned. */
typedef struct {
    atomic_int hits[MAX_CHUNKS];
    int64_t align;
    atomic_int bad;
} range_check;

static void range_fn(void *ctx, int64_t a, int64_t b) {
    range_check *r = ctx;
    if (a % r->align || a >= b) atomic_fetch_add(&r->bad, 1);
    for (int64_t i = a; i < b; i++) atomic_fetch_add(&r->hits[i], 1);
}

static void test_for(void) {
    static const int64_t lens[] = {0, 1, 5, 16, 17, 100, 999};
    for (int nt = 1; nt <= 5; nt++)
        for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++)
            for (int64_t align = 1; align <= 16; align *= 4) {
                range_check *r = calloc(1, sizeof *r);
                r->align = align;
                vx_pool_for(nt, lens[i], align, range_fn, r);
                int bad = atomic_load(&r->bad);
                for (int64_t k = 0; k < MAX_CHUNKS; k++) bad += atomic_load(&r->hits[k]) != (k < lens[i]);
                CHECK_MSG(bad == 0, "vx_pool_for threads=%d len=%lld align=%lld", nt, (long long)lens[i],
                          (long long)align);
                free(r);
            }
}

/* Several threads call the pool at once, with thread counts 1 … 8. */
static atomic_int concurrent_bad;
static void *caller(void *arg) {
    int id = (int)(intptr_t)arg;
    for (int r = 0; r < 60; r++) atomic_fetch_add(&concurrent_bad, check_run(1 + (id + r) % 8, 1 + (r * 37 + id) % 200, r % 3 == 0));
    return NULL;
}

static void test_concurrent(void) {
    pthread_t t[4];
    for (int i = 0; i < 4; i++) CHECK(pthread_create(&t[i], NULL, caller, (void *)(intptr_t)i) == 0);
    for (int i = 0; i < 4; i++) pthread_join(t[i], NULL);
    CHECK(atomic_load(&concurrent_bad) == 0);
}

/* ---- kernels on the pool: bits independent of the thread count ---- */

static void *weight_of(vx_dtype dt, const float *w, size_t n) {
    if (dt == VX_F32) {
        float *o = malloc(n * sizeof(float));
        memcpy(o, w, n * sizeof(float));
        return o;
    }
    uint16_t *o = malloc(n * sizeof(uint16_t));
    vx_f32_to_bf16_n(o, w, n, 1);
    return o;
}

static void test_linear_bits(vx_dtype dt, int64_t M, int64_t K, int64_t N) {
    float *x = tl_random_floats((size_t)(M * K)), *w = tl_random_floats((size_t)(N * K)), *b = tl_random_floats((size_t)N);
    vx_mat W = {dt, N, K, NULL};
    void *data = NULL;
    if (dt == VX_Q8) {
        vx_mat in = {.dtype = VX_F32, .rows = N, .cols = K, .data = w};
        data = malloc(vx_q8_bytes(N, K));
        W = vx_q8_quantize(data, &in, 1);
    } else {
        W.data = data = weight_of(dt, w, (size_t)(N * K));
    }
    float *ref = malloc((size_t)(M * N) * sizeof(float)), *y = malloc((size_t)(M * N) * sizeof(float));
    vx_linear(ref, x, M, &W, b, 1);
    for (int nt = 2; nt <= 8; nt++) {
        vx_linear(y, x, M, &W, b, nt);
        CHECK_MSG(memcmp(y, ref, (size_t)(M * N) * sizeof(float)) == 0, "linear %s M=%lld K=%lld N=%lld threads=%d",
                  vx_dtype_name(dt), (long long)M, (long long)K, (long long)N, nt);
    }
    free(x), free(w), free(b), free(data), free(ref), free(y);
}

static void test_attention_bits(int64_t nq, int64_t nk, int H, int Hkv, int hd, vx_dtype kv) {
    const int64_t ks = (int64_t)Hkv * hd;
    float *q = tl_random_floats((size_t)(nq * H * hd)), *kf = tl_random_floats((size_t)(nk * ks)),
          *vf = tl_random_floats((size_t)(nk * ks));
    void *k = kv == VX_BF16 ? weight_of(VX_BF16, kf, (size_t)(nk * ks)) : kf;
    void *v = kv == VX_BF16 ? weight_of(VX_BF16, vf, (size_t)(nk * ks)) : vf;
    size_t n = (size_t)(nq * H * hd);
    float *ref = malloc(n * sizeof(float)), *out = malloc(n * sizeof(float));
    vx_attention_kv(ref, q, k, v, kv, nq, nk, H, Hkv, hd, ks, 0.125f, 1, 1);
    for (int nt = 2; nt <= 8; nt++) {
        vx_attention_kv(out, q, k, v, kv, nq, nk, H, Hkv, hd, ks, 0.125f, 1, nt);
        CHECK_MSG(memcmp(out, ref, n * sizeof(float)) == 0, "attention nq=%lld nk=%lld H=%d Hkv=%d %s threads=%d",
                  (long long)nq, (long long)nk, H, Hkv, vx_dtype_name(kv), nt);
    }
    if (kv == VX_BF16) free(k), free(v);
    free(q), free(kf), free(vf), free(ref), free(out);
}

static void test_kernels(void) {
    static const vx_dtype dts[] = {VX_F32, VX_BF16, VX_Q8};
    for (size_t i = 0; i < 3; i++) {
        test_linear_bits(dts[i], 1, 1024, 1000); /* decode: split over W rows, an odd tail */
        test_linear_bits(dts[i], 3, 512, 777);
        test_linear_bits(dts[i], 20, 256, 24); /* few outputs, many rows: split over x rows */
    }
    for (int kv = 0; kv < 2; kv++) {
        vx_dtype d = kv ? VX_BF16 : VX_F32;
        test_attention_bits(1, 300, 16, 16, 64, d); /* heads split */
        test_attention_bits(1, 2500, 16, 4, 64, d); /* long context: key splits */
        test_attention_bits(2, 700, 8, 2, 64, d);
    }
}

int main(int argc, char **argv) {
    (void)argc, (void)argv;
    test_chunk_items();
    test_chunks();
    test_for();
    test_concurrent();
    test_kernels();
    return tl_finish("test_pool");
}
