/* A hardened pickle reader for the subset that torch.save writes (protocol 2,
 * plus the few protocol 4 opcodes that cost nothing: FRAME, MEMOIZE,
 * SHORT_BINUNICODE, BINUNICODE8, STACK_GLOBAL).
 *
 * The VM never calls anything: GLOBAL/STACK_GLOBAL accept only an allow-list
 * (torch._utils._rebuild_tensor_v2, torch.{Float,Half,BFloat16,Long,Int,
 * Short,Char,Byte,Bool}Storage, collections.OrderedDict) and REDUCE applies
 * only those, building tensors and empty dicts. Persistent ids (torch
 * storages) are resolved through a caller callback. Anything else is a
 * VOCIS_E_FORMAT error naming the opcode or global and its byte offset.
 *
 * Every value belongs to the vx_pickle document that produced it; values
 * may be shared (memo) or even cyclic (a list appended to itself), so walk
 * them with a depth limit. vx_pickle_free releases everything at once. */
#ifndef VX_PICKLE_H
#define VX_PICKLE_H

#include "base/err.h"
#include "tensor/tensor.h"

#include <stddef.h>
#include <stdint.h>

typedef enum vx_pk_type {
    VX_PK_NONE = 0,
    VX_PK_BOOL,    /* u.i is 0 or 1 */
    VX_PK_INT,     /* u.i */
    VX_PK_FLOAT,   /* u.f */
    VX_PK_STR,     /* u.str (UTF-8 bytes as stored, NUL-terminated, may hold NULs) */
    VX_PK_TUPLE,   /* u.seq */
    VX_PK_LIST,    /* u.seq */
    VX_PK_DICT,    /* u.dict: insertion order; a repeated key keeps every pair, lookups take the last */
    VX_PK_GLOBAL,  /* u.global: an allow-listed callable or class */
    VX_PK_STORAGE, /* u.storage: a torch storage resolved through the persistent-id callback */
    VX_PK_TENSOR,  /* u.tensor */
} vx_pk_type;

typedef enum vx_pk_global_kind {
    VX_PKG_REBUILD_TENSOR_V2 = 0, /* torch._utils._rebuild_tensor_v2 */
    VX_PKG_ORDERED_DICT,          /* collections.OrderedDict */
    VX_PKG_STORAGE_TYPE,          /* torch.<X>Storage; u.global.dtype says which */
    VX_PKG_DATA_CLASS,            /* an allow-listed plain-data class (vx_pickle_opts.data_classes) */
} vx_pk_global_kind;

typedef struct vx_pk_value vx_pk_value;

/* Read-only for users; fields after `u` are private. */
struct vx_pk_value {
    vx_pk_type type;
    union {
        int64_t i;
        double f;
        struct {
            char *s;
            size_t len;
        } str;
        struct {
            vx_pk_value **items;
            size_t n;
        } seq;
        struct {
            vx_pk_value **keys, **vals;
            size_t n;
        } dict;
        struct {
            vx_pk_global_kind kind;
            vx_dtype dtype;   /* VX_PKG_STORAGE_TYPE only */
            const char *name; /* "torch.FloatStorage", ... (static) */
        } global;
        struct {
            vx_dtype dtype;
            uint64_t numel;
            const void *data; /* owned by the resolver (e.g. the zip mapping) */
            char *key;
        } storage;
        struct {
            vx_tensor t; /* data: a view into the storage, or an owned copy */
            int requires_grad;
            uint64_t storage_offset; /* elements */
            const char *storage_key; /* key of the storage it views */
        } tensor;
    } u;
    size_t priv_cap;
    void *priv_owned; /* owned buffer (strings, arrays, copied tensor data) */
    void *priv_owned2;
    vx_pk_value *priv_next;
};

/* Resolves a persistent id ('storage', type, key, location, numel): set *data
 * to numel elements of dtype (valid while the document is alive). */
typedef vocis_status (*vx_pk_storage_fn)(void *ctx, const char *key, vx_dtype dtype, uint64_t numel,
                                         const void **data, vx_err *err);

typedef struct vx_pickle_opts {
    const char *name;         /* for messages, e.g. "conds.pt:conds/data.pkl" */
    vx_pk_storage_fn storage; /* NULL: persistent ids are an error */
    void *ctx;
    /* 1: also accept the plain-data classes transformers.modeling_outputs.BaseModelOutputWithPast and
     * transformers.cache_utils.DynamicCache (VibeVoice-Realtime voice presets). Calling one (REDUCE with
     * any arguments, or NEWOBJ) makes an empty dict; SETITEMS fill it; BUILD merges a dict state into
     * it (attributes become keys). Nothing is ever executed. 0: these globals, NEWOBJ and BUILD are
     * errors as before. */
    int data_classes;
} vx_pickle_opts;

typedef struct vx_pickle vx_pickle;

/* Runs the pickle in buf[0, len). The buffer is not referenced afterwards. */
vocis_status vx_pickle_load(const uint8_t *buf, size_t len, const vx_pickle_opts *opts, vx_pickle **out,
                            vx_err *err);
void vx_pickle_free(vx_pickle *p);
const vx_pk_value *vx_pickle_root(const vx_pickle *p);

const char *vx_pk_type_name(vx_pk_type t);
/* Dict lookup by string key (last matching pair wins); NULL if d is not a dict or lacks the key. */
const vx_pk_value *vx_pk_dict_get(const vx_pk_value *d, const char *key);
/* 1 if v is None (or NULL). */
int vx_pk_is_none(const vx_pk_value *v);

#endif
