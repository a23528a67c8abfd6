/* The voice-prefix cache (issue 21): nn/prefix_cache's LRU bound and
 * counters, then through the public API on the tiny English, Multilingual
 * and Turbo checkpoints: the first request of a voice computes its prefix
 * (a miss), later requests and other texts reuse it (hits) and draw exactly
 * the tokens of a model without the cache; another exaggeration is another
 * prefix. */
#include <stdlib.h>
#include <string.h>

#include "nn/prefix_cache.h"
#include "testlib.h"
#include "vocis.h"

static void copy_out(void *user, const void *value, size_t n) { memcpy(user, value, n); }

static void test_lru(void) {
    /* entries cost their key + value + a fixed overhead: bound room for two 1000-byte values */
    vx_prefix_cache *c = vx_prefix_cache_new(2 * 1000 + 2 * (4 + 256));
    CHECK(c != NULL);
    uint8_t v[3][1000], out[1000];
    for (int i = 0; i < 3; i++) memset(v[i], 'a' + i, sizeof v[i]);
    vx_prefix_cache_put(c, "k0", 2, v[0], sizeof v[0]);
    vx_prefix_cache_put(c, "k1", 2, v[1], sizeof v[1]);
    CHECK(vx_prefix_cache_get(c, "k0", 2, copy_out, out) && !memcmp(out, v[0], sizeof out)); /* k0 now most recent */
    vx_prefix_cache_put(c, "k2", 2, v[2], sizeof v[2]);                                     /* evicts k1 */
    CHECK(!vx_prefix_cache_get(c, "k1", 2, copy_out, out));
    CHECK(vx_prefix_cache_get(c, "k2", 2, copy_out, out) && !memcmp(out, v[2], sizeof out));
    CHECK(vx_prefix_cache_get(c, "k0", 2, copy_out, out) && !memcmp(out, v[0], sizeof out));
    CHECK(!vx_prefix_cache_get(c, "k", 1, copy_out, out)); /* a prefix of a key is another key */
    vx_prefix_cache_put(c, "k0", 2, v[1], sizeof v[1]);     /* replaces */
    CHECK(vx_prefix_cache_get(c, "k0", 2, copy_out, out) && !memcmp(out, v[1], sizeof out));
    uint8_t big[5000] = {0};
    vx_prefix_cache_put(c, "big", 3, big, sizeof big); /* larger than the bound: not stored, nothing evicted */
    vx_prefix_stats st;
    vx_prefix_cache_stats(c, &st);
    CHECK_MSG(st.entries == 2 && st.evictions == 1 && st.hits == 4 && st.misses == 2 && st.bytes <= st.max_bytes,
              "entries %lld evictions %lld hits %lld misses %lld", (long long)st.entries, (long long)st.evictions,
              (long long)st.hits, (long long)st.misses);
    vx_prefix_cache_free(c);
    CHECK(!vx_prefix_cache_get(NULL, "k0", 2, copy_out, out));
}

typedef struct tokens {
    int32_t *t;
    size_t n;
} tokens;

static tokens generate(vocis_model *m, const char *text, float exaggeration, const char *language) {
    vocis_t3_options o;
    vocis_t3_options_default(&o);
    o.seed = 7;
    o.max_new_tokens = 40;
    o.exaggeration = exaggeration;
    o.language = language;
    tokens r = {NULL, 0};
    CHECK_MSG(vocis_t3_generate(m, NULL, text, &o, &r.t, &r.n) == VOCIS_OK, "%s", vocis_errmsg(m));
    return r;
}

static void test_model(const char *folder, const char *language) {
    vocis_open_options plain = {2, NULL, 0, 0, -1}, cached = {2, NULL, 0, 0, 0};
    vocis_model *a = NULL, *b = NULL;
    if (vocis_model_open(tl_path(folder), &plain, &a) || vocis_model_open(tl_path(folder), &cached, &b)) {
        CHECK_MSG(0, "%s: %s", folder, vocis_errmsg(a && *vocis_errmsg(a) ? a : b));
        vocis_model_close(a), vocis_model_close(b);
        return;
    }
    vocis_voice_cache_stats st;
    vocis_voice_cache_stats_get(a, &st);
    CHECK_MSG(st.max_bytes == 0, "%s: voice_cache_mb -1 still has a cache", folder);
    vocis_voice_cache_stats_get(b, &st);
    CHECK_MSG(st.max_bytes == (size_t)256 << 20, "%s: default bound %zu", folder, st.max_bytes);
    const char *texts[3] = {"Hello there, this is the first request.", "A second text, the same voice.",
                            "Hello there, this is the first request."};
    const float exag[3] = {0.5f, 0.5f, 0.8f};
    for (int i = 0; i < 3; i++) {
        tokens p = generate(a, texts[i], exag[i], language), q = generate(b, texts[i], exag[i], language);
        CHECK_MSG(p.n == q.n && p.n > 0 && !memcmp(p.t, q.t, sizeof(int32_t) * p.n),
                  "%s request %d: cached prefix changed the tokens (%zu vs %zu)", folder, i, q.n, p.n);
        free(p.t), free(q.t);
    }
    vocis_voice_cache_stats_get(b, &st);
    /* Turbo/Nano prefixes do not depend on the exaggeration (upstream's Turbo ignores it) */
    const int turbo = !strcmp(vocis_model_kind(b), "chatterbox-turbo") || !strcmp(vocis_model_kind(b), "chatterbox-nano");
    const int64_t want_misses = turbo ? 1 : 2;
    CHECK_MSG(st.misses == want_misses && st.hits == 3 - want_misses && st.entries == want_misses && st.bytes > 0,
              "%s: %lld misses, %lld hits, %lld entries, %zu bytes", folder, (long long)st.misses, (long long)st.hits,
              (long long)st.entries, st.bytes);
    vocis_model_close(a), vocis_model_close(b);
    /* a bad bound is refused at open */
    vocis_open_options bad = {2, NULL, 0, 0, -2};
    vocis_model *c = NULL;
    CHECK(vocis_model_open(tl_path(folder), &bad, &c) == VOCIS_E_ARG);
    vocis_model_close(c);
}

int main(int argc, char **argv) {
    if (argc > 1) tl_data_dir = argv[1];
    test_lru();
    test_model("chatterbox/ckpt", NULL);
    test_model("chatterbox-mtl/ckpt", "fr");
    test_model("chatterbox-turbo/ckpt", NULL);
    return tl_finish("test_voice_cache");
}
