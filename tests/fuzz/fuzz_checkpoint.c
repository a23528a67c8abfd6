#define _GNU_SOURCE
/* libFuzzer target: arbitrary bytes as a vocis checkpoint (io/checkpoint.h): vx_ckpt_parse as
 * they are, and again with the footer rewritten to a valid checksum so that mutations reach the
 * section table; every section an accepted file lists must lie inside it, and an "rng" section
 * is loaded as a generator state, a "cues" section as a cue log. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "base/hash.h"
#include "base/rng.h"
#include "io/checkpoint.h"
#include "api/cue_log.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_accepted(const uint8_t *buf, size_t n) {
    vx_ckpt ck;
    vx_err e = {0};
    if (vx_ckpt_parse(buf, n, "fuzz", &ck, &e) != VOCIS_OK) {
        FZ_CHECK(e.msg[0] && !strchr(e.msg, '\n'));
        return;
    }
    FZ_CHECK(n >= VX_CKPT_HEADER + VX_CKPT_FOOTER);
    for (uint32_t i = 0; i < ck.n_sections; i++) {
        char tag[VX_CKPT_TAG + 1] = {0};
        memcpy(tag, buf + VX_CKPT_HEADER + (size_t)i * (VX_CKPT_TAG + 8), VX_CKPT_TAG);
        const void *p;
        uint64_t sz;
        if (vx_ckpt_section(&ck, tag, UINT64_MAX, &p, &sz, &e) != VOCIS_OK) continue; /* a tag with a NUL inside */
        FZ_CHECK((const uint8_t *)p >= buf && sz <= n && (const uint8_t *)p + sz <= buf + n - VX_CKPT_FOOTER);
        if (!strcmp(tag, "cues")) { /* an accepted cue log is ordered and within its bounds */
            vx_cue_log l = {0};
            if (vx_cue_log_load(&l, &ck, 1000, 4, 1 << 20, &e) == VOCIS_OK)
                for (int64_t k = 0; k < l.n; k++)
                    FZ_CHECK(l.v[k].ref >= 0 && l.v[k].ref < 1000 && l.v[k].start <= l.v[k].end &&
                             l.v[k].end <= (1 << 20) && (k == 0 || l.v[k].start >= l.v[k - 1].start));
            else
                FZ_CHECK(e.msg[0] && !strchr(e.msg, '\n'));
            vx_cue_log_free(&l);
        }
        if (!strcmp(tag, "rng") && sz == VX_RNG_STATE_BYTES) {
            vx_rng r;
            if (vx_rng_state_load(&r, p) == 0) FZ_CHECK(r.index >= 0 && r.index <= 624);
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    check_accepted(data, size);
    if (size < VX_CKPT_HEADER + VX_CKPT_FOOTER) return 0;
    uint8_t *fixed = malloc(size);
    if (!fixed) return 0;
    memcpy(fixed, data, size);
    const uint64_t h = vx_hash_bytes(fixed, size - VX_CKPT_FOOTER);
    for (int i = 0; i < 8; i++) fixed[size - VX_CKPT_FOOTER + i] = (uint8_t)(h >> (8 * i));
    memcpy(fixed + size - 8, "CKPTEND", 8);
    check_accepted(fixed, size);
    free(fixed);
    return 0;
}
