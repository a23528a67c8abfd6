/* A 64-bit non-cryptographic hash (word-at-a-time multiply/rotate with a
 * splitmix finaliser), streamed: for fingerprints of models and jobs and the
 * checksum of checkpoint files. Not a defence against a deliberate forgery;
 * it detects truncation, corruption and a file of another job or model. */
#ifndef VX_HASH_H
#define VX_HASH_H

#include <stddef.h>
#include <stdint.h>

typedef struct vx_hash {
    uint64_t h, len;
    uint8_t buf[8];
    int nbuf;
} vx_hash;

void vx_hash_init(vx_hash *s);
void vx_hash_update(vx_hash *s, const void *p, size_t n);
uint64_t vx_hash_final(const vx_hash *s); /* s stays usable */
uint64_t vx_hash_bytes(const void *p, size_t n);
/* Helpers for hashing fields: a string with its length (so "ab"+"c" != "a"+"bc"), a scalar. */
void vx_hash_str(vx_hash *s, const char *str); /* NULL hashes differently from "" */
void vx_hash_u64(vx_hash *s, uint64_t v);
void vx_hash_f64(vx_hash *s, double v);

#endif
