#include "base/hash.h"

#include <string.h>

#define K1 0x9e3779b97f4a7c15ull
#define K2 0xc2b2ae3d27d4eb4full

static uint64_t rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

static uint64_t mix_word(uint64_t h, uint64_t w) { return rotl(h ^ (w * K1), 29) * K2; }

static uint64_t load_le64(const uint8_t *p) {
    uint64_t w = 0;
    for (int i = 7; i >= 0; i--) w = (w << 8) | p[i]; /* little-endian on every host */
    return w;
}

void vx_hash_init(vx_hash *s) {
    s->h = 0x243f6a8885a308d3ull;
    s->len = 0;
    s->nbuf = 0;
}

void vx_hash_update(vx_hash *s, const void *p, size_t n) {
    const uint8_t *b = p;
    s->len += n;
    while (s->nbuf && n) {
        s->buf[s->nbuf++] = *b++, n--;
        if (s->nbuf == 8) s->h = mix_word(s->h, load_le64(s->buf)), s->nbuf = 0;
    }
    for (; n >= 8; b += 8, n -= 8) s->h = mix_word(s->h, load_le64(b));
    while (n--) s->buf[s->nbuf++] = *b++;
}

uint64_t vx_hash_final(const vx_hash *s) {
    uint64_t h = s->h;
    if (s->nbuf) {
        uint8_t last[8] = {0};
        memcpy(last, s->buf, (size_t)s->nbuf);
        h = mix_word(h, load_le64(last));
    }
    h ^= s->len * K2;
    h ^= h >> 33, h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33, h *= 0xc4ceb9fe1a85ec53ull;
    return h ^ (h >> 33);
}

uint64_t vx_hash_bytes(const void *p, size_t n) {
    vx_hash s;
    vx_hash_init(&s);
    vx_hash_update(&s, p, n);
    return vx_hash_final(&s);
}

void vx_hash_u64(vx_hash *s, uint64_t v) {
    uint8_t b[8];
    for (int i = 0; i < 8; i++) b[i] = (uint8_t)(v >> (8 * i));
    vx_hash_update(s, b, 8);
}

void vx_hash_str(vx_hash *s, const char *str) {
    vx_hash_u64(s, str ? (uint64_t)strlen(str) : UINT64_MAX);
    if (str) vx_hash_update(s, str, strlen(str));
}

void vx_hash_f64(vx_hash *s, double v) {
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    vx_hash_u64(s, u);
}
