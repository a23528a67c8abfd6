/* A bounded cache of computed prompt prefixes (a voice's conditioning KV):
 * the key is the bytes that determine the prefix (the voice's conditioning
 * tensors, its exaggeration, the cache dtype...), the value the prefix's
 * K/V rows as the model's own cache stores them, copied in and out whole.
 * Least recently used entries go first when the bytes exceed the bound.
 * Thread-safe (one mutex; copies happen under it).
 *
 *   c = vx_prefix_cache_new(256 << 20)
 *   if (!vx_prefix_cache_get(c, key, klen, copy_out, user)) { compute; vx_prefix_cache_put(c, key, klen, v, vlen); }
 */
#ifndef VX_PREFIX_CACHE_H
#define VX_PREFIX_CACHE_H

#include <stddef.h>
#include <stdint.h>

typedef struct vx_prefix_cache vx_prefix_cache;

typedef struct vx_prefix_stats {
    int64_t hits, misses, entries, evictions;
    size_t bytes, max_bytes;
} vx_prefix_stats;

/* max_bytes 0: a cache that holds nothing (every get misses). NULL when out of memory. */
vx_prefix_cache *vx_prefix_cache_new(size_t max_bytes);
void vx_prefix_cache_free(vx_prefix_cache *c);

/* On a hit, calls copy(user, value, value_len) under the cache's lock and
 * returns 1; else 0 (counted as a miss). c may be NULL (always a miss, not counted). */
int vx_prefix_cache_get(vx_prefix_cache *c, const void *key, size_t key_len,
                        void (*copy)(void *user, const void *value, size_t value_len), void *user);
/* Stores a copy of value under key (replacing an entry with the same key);
 * a value larger than the bound, or no memory, stores nothing. */
void vx_prefix_cache_put(vx_prefix_cache *c, const void *key, size_t key_len, const void *value, size_t value_len);
void vx_prefix_cache_stats(vx_prefix_cache *c, vx_prefix_stats *out);

/* Building keys: appends n bytes to a growing buffer (out of memory: freed, failed = 1). */
typedef struct vx_keybuf {
    uint8_t *p;
    size_t n, cap;
    int failed;
} vx_keybuf;
void vx_keybuf_add(vx_keybuf *k, const void *bytes, size_t n);
void vx_keybuf_free(vx_keybuf *k);

#endif
