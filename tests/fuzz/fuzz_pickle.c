/* libFuzzer target: the pickle VM on raw bytes. Persistent ids resolve to a
 * fixed zeroed buffer when it is large enough, so tensor rebuilding is
 * exercised too; every tensor reached from the root is read in full. */
#include "io/pickle.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct ctx {
    _Alignas(16) uint8_t storage[4096];
} ctx;

static vocis_status resolve(void *c, const char *key, vx_dtype dt, uint64_t numel, const void **out, vx_err *err) {
    ctx *x = c;
    if (numel > sizeof x->storage / vx_dtype_size(dt))
        return vx_fail(err, VOCIS_E_FORMAT, "storage '%s' too large for the fuzzer", key);
    /* Odd keys get a misaligned view, to exercise the copy path. */
    *out = x->storage + ((key[0] & 1) && numel * vx_dtype_size(dt) < sizeof x->storage ? 1 : 0);
    return VOCIS_OK;
}

/* Shared memo entries make the value graph a DAG (or cyclic): bound the
 * total number of visits, not just the depth, or the walk is exponential. */
static unsigned walk(const vx_pk_value *v, int depth, int *budget) {
    if (!v || depth > 32 || --*budget < 0) return 0;
    unsigned s = (unsigned)v->type;
    switch (v->type) {
    case VX_PK_TUPLE:
    case VX_PK_LIST:
        for (size_t i = 0; i < v->u.seq.n && i < 64; i++) s += walk(v->u.seq.items[i], depth + 1, budget);
        break;
    case VX_PK_DICT:
        for (size_t i = 0; i < v->u.dict.n && i < 64; i++)
            s += walk(v->u.dict.keys[i], depth + 1, budget) + walk(v->u.dict.vals[i], depth + 1, budget);
        break;
    case VX_PK_STR: s += (unsigned)strlen(v->u.str.s); break;
    case VX_PK_TENSOR: {
        const vx_tensor *t = &v->u.tensor.t;
        size_t bytes = (size_t)vx_numel(t) * vx_dtype_size(t->dtype);
        for (size_t k = 0; k < bytes; k++) s += ((const uint8_t *)t->data)[k];
        break;
    }
    default: break;
    }
    return s;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static ctx c; /* zeroed, read-only in practice */
    vx_err e = {0};
    vx_pickle_opts o = {.name = "fuzz.pkl", .storage = resolve, .ctx = &c};
    vx_pickle *p = NULL;
    if (vx_pickle_load(data, size, &o, &p, &e) == VOCIS_OK) {
        int budget = 100000;
        volatile unsigned sink = walk(vx_pickle_root(p), 0, &budget);
        (void)sink;
        (void)vx_pk_dict_get(vx_pickle_root(p), "t3");
    }
    vx_pickle_free(p);
    return 0;
}
