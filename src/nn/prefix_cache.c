#include "nn/prefix_cache.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef struct entry {
    struct entry *prev, *next; /* most recently used first */
    uint64_t hash;
    size_t key_len, value_len;
    uint8_t *key, *value;
} entry;

struct vx_prefix_cache {
    pthread_mutex_t lock;
    entry *head, *tail;
    vx_prefix_stats st;
};

static uint64_t fnv1a(const void *p, size_t n) {
    const uint8_t *b = p;
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 1099511628211ull;
    return h;
}

vx_prefix_cache *vx_prefix_cache_new(size_t max_bytes) {
    vx_prefix_cache *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    pthread_mutex_init(&c->lock, NULL);
    c->st.max_bytes = max_bytes;
    return c;
}

static void unlink_entry(vx_prefix_cache *c, entry *e) {
    if (e->prev) e->prev->next = e->next;
    else c->head = e->next;
    if (e->next) e->next->prev = e->prev;
    else c->tail = e->prev;
    e->prev = e->next = NULL;
}

static void push_front(vx_prefix_cache *c, entry *e) {
    e->prev = NULL, e->next = c->head;
    if (c->head) c->head->prev = e;
    c->head = e;
    if (!c->tail) c->tail = e;
}

static size_t entry_bytes(const entry *e) { return sizeof *e + e->key_len + e->value_len; }

static void drop(vx_prefix_cache *c, entry *e) {
    unlink_entry(c, e);
    c->st.bytes -= entry_bytes(e);
    c->st.entries--;
    free(e->key), free(e->value), free(e);
}

static entry *find(vx_prefix_cache *c, uint64_t h, const void *key, size_t key_len) {
    for (entry *e = c->head; e; e = e->next)
        if (e->hash == h && e->key_len == key_len && !memcmp(e->key, key, key_len)) return e;
    return NULL;
}

void vx_prefix_cache_free(vx_prefix_cache *c) {
    if (!c) return;
    while (c->head) drop(c, c->head);
    pthread_mutex_destroy(&c->lock);
    free(c);
}

int vx_prefix_cache_get(vx_prefix_cache *c, const void *key, size_t key_len,
                        void (*copy)(void *user, const void *value, size_t value_len), void *user) {
    if (!c) return 0;
    const uint64_t h = fnv1a(key, key_len);
    pthread_mutex_lock(&c->lock);
    entry *e = find(c, h, key, key_len);
    if (e) {
        unlink_entry(c, e);
        push_front(c, e);
        copy(user, e->value, e->value_len);
        c->st.hits++;
    } else {
        c->st.misses++;
    }
    pthread_mutex_unlock(&c->lock);
    return e != NULL;
}

void vx_prefix_cache_put(vx_prefix_cache *c, const void *key, size_t key_len, const void *value, size_t value_len) {
    if (!c) return;
    entry *e = calloc(1, sizeof *e);
    if (!e) return;
    e->hash = fnv1a(key, key_len);
    e->key_len = key_len, e->value_len = value_len;
    if (entry_bytes(e) > c->st.max_bytes || !(e->key = malloc(key_len ? key_len : 1)) ||
        !(e->value = malloc(value_len ? value_len : 1))) {
        free(e->key), free(e);
        return;
    }
    memcpy(e->key, key, key_len);
    memcpy(e->value, value, value_len);
    pthread_mutex_lock(&c->lock);
    entry *old = find(c, e->hash, key, key_len);
    if (old) drop(c, old);
    while (c->tail && c->st.bytes + entry_bytes(e) > c->st.max_bytes) {
        drop(c, c->tail);
        c->st.evictions++;
    }
    push_front(c, e);
    c->st.bytes += entry_bytes(e);
    c->st.entries++;
    pthread_mutex_unlock(&c->lock);
}

void vx_prefix_cache_stats(vx_prefix_cache *c, vx_prefix_stats *out) {
    memset(out, 0, sizeof *out);
    if (!c) return;
    pthread_mutex_lock(&c->lock);
    *out = c->st;
    pthread_mutex_unlock(&c->lock);
}

void vx_keybuf_add(vx_keybuf *k, const void *bytes, size_t n) {
    if (k->failed) return;
    if (k->n + n > k->cap) {
        size_t cap = k->cap ? k->cap : 256;
        while (cap < k->n + n) cap *= 2;
        uint8_t *p = realloc(k->p, cap);
        if (!p) {
            vx_keybuf_free(k);
            k->failed = 1;
            return;
        }
        k->p = p, k->cap = cap;
    }
    memcpy(k->p + k->n, bytes, n);
    k->n += n;
}

void vx_keybuf_free(vx_keybuf *k) {
    free(k->p);
    k->p = NULL, k->n = k->cap = 0;
}
