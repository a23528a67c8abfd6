/* Pickle VM for the torch.save subset; see pickle.h. The opcode semantics
 * follow CPython's Lib/pickletools.py documentation: MARK starts a new empty
 * stack frame (the "metastack"), so an opcode never reaches below the
 * innermost mark except through the mark-consuming opcodes. */
#include "io/pickle.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PK_MAX_STACK (1u << 20)     /* values on the stack */
#define PK_MAX_MARKS (1u << 16)     /* nested MARKs */
#define PK_MAX_ITEMS (1u << 26)     /* elements of one list/tuple/dict */
#define PK_MAX_VALUES (1u << 22)    /* objects in one pickle (~15 per tensor in torch.save files) */
#define PK_MAX_GLOBAL_LINE 256      /* module / name of GLOBAL */
#define PK_MAX_KEY 256              /* storage key length */
#define PK_MAX_DIM (1ull << 40)     /* a tensor size or stride */

struct vx_pickle {
    vx_pk_value *root;
    vx_pk_value *all; /* every value, linked through priv_next */
    size_t nvalues;
};

typedef struct vm {
    const uint8_t *buf;
    size_t len, pos, op_pos;
    uint8_t op;
    const char *name;
    const vx_pickle_opts *opts;
    vx_pickle *doc;
    vx_err *err;
    vx_pk_value **stack;
    size_t sp, scap;
    size_t *marks;
    size_t nmarks, mcap;
    vx_pk_value **memo;
    size_t memo_cap, memo_count, memo_limit;
    vocis_status failed; /* code of the last vm_fail (err may be NULL) */
} vm;

/* ---------------------------------------------------------------- names */

static const char *op_name(uint8_t op) {
    switch (op) {
    case '(': return "MARK";
    case '.': return "STOP";
    case '0': return "POP";
    case '1': return "POP_MARK";
    case '2': return "DUP";
    case 'F': return "FLOAT";
    case 'I': return "INT";
    case 'J': return "BININT";
    case 'K': return "BININT1";
    case 'L': return "LONG";
    case 'M': return "BININT2";
    case 'N': return "NONE";
    case 'P': return "PERSID";
    case 'Q': return "BINPERSID";
    case 'R': return "REDUCE";
    case 'S': return "STRING";
    case 'T': return "BINSTRING";
    case 'U': return "SHORT_BINSTRING";
    case 'V': return "UNICODE";
    case 'X': return "BINUNICODE";
    case 'a': return "APPEND";
    case 'b': return "BUILD";
    case 'c': return "GLOBAL";
    case 'd': return "DICT";
    case '}': return "EMPTY_DICT";
    case 'e': return "APPENDS";
    case 'g': return "GET";
    case 'h': return "BINGET";
    case 'i': return "INST";
    case 'j': return "LONG_BINGET";
    case 'l': return "LIST";
    case ']': return "EMPTY_LIST";
    case 'o': return "OBJ";
    case 'p': return "PUT";
    case 'q': return "BINPUT";
    case 'r': return "LONG_BINPUT";
    case 's': return "SETITEM";
    case 't': return "TUPLE";
    case ')': return "EMPTY_TUPLE";
    case 'u': return "SETITEMS";
    case 'G': return "BINFLOAT";
    case 'B': return "BINBYTES";
    case 'C': return "SHORT_BINBYTES";
    case 0x80: return "PROTO";
    case 0x81: return "NEWOBJ";
    case 0x82: return "EXT1";
    case 0x83: return "EXT2";
    case 0x84: return "EXT4";
    case 0x85: return "TUPLE1";
    case 0x86: return "TUPLE2";
    case 0x87: return "TUPLE3";
    case 0x88: return "NEWTRUE";
    case 0x89: return "NEWFALSE";
    case 0x8a: return "LONG1";
    case 0x8b: return "LONG4";
    case 0x8c: return "SHORT_BINUNICODE";
    case 0x8d: return "BINUNICODE8";
    case 0x8e: return "BINBYTES8";
    case 0x8f: return "EMPTY_SET";
    case 0x90: return "ADDITEMS";
    case 0x91: return "FROZENSET";
    case 0x92: return "NEWOBJ_EX";
    case 0x93: return "STACK_GLOBAL";
    case 0x94: return "MEMOIZE";
    case 0x95: return "FRAME";
    case 0x96: return "BYTEARRAY8";
    case 0x97: return "NEXT_BUFFER";
    case 0x98: return "READONLY_BUFFER";
    default: return NULL;
    }
}

const char *vx_pk_type_name(vx_pk_type t) {
    switch (t) {
    case VX_PK_NONE: return "None";
    case VX_PK_BOOL: return "bool";
    case VX_PK_INT: return "int";
    case VX_PK_FLOAT: return "float";
    case VX_PK_STR: return "str";
    case VX_PK_TUPLE: return "tuple";
    case VX_PK_LIST: return "list";
    case VX_PK_DICT: return "dict";
    case VX_PK_GLOBAL: return "global";
    case VX_PK_STORAGE: return "storage";
    case VX_PK_TENSOR: return "tensor";
    }
    return "?";
}

/* Printable copy of untrusted bytes for messages ("..." marks a cut). */
static void printable(char *dst, size_t dn, const void *src, size_t n) {
    const unsigned char *s = src;
    size_t o = 0, i = 0;
    for (; i < n && o + 1 < dn; i++) dst[o++] = (s[i] >= 0x20 && s[i] < 0x7f) ? (char)s[i] : '?';
    dst[o] = '\0';
    if (i < n && o >= 3) memcpy(dst + o - 3, "...", 3);
}

static vocis_status vm_fail(vm *m, vocis_status code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static vocis_status vm_fail(vm *m, vocis_status code, const char *fmt, ...) {
    char msg[640];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    m->failed = code;
    const char *on = op_name(m->op);
    if (on)
        return vx_fail(m->err, code, "%s: byte %zu (%s): %s", m->name, m->op_pos, on, msg);
    return vx_fail(m->err, code, "%s: byte %zu: %s", m->name, m->op_pos, msg);
}

/* ---------------------------------------------------------------- values */

static vx_pk_value *new_value(vm *m, vx_pk_type t) {
    if (m->doc->nvalues >= PK_MAX_VALUES) {
        vm_fail(m, VOCIS_E_FORMAT, "more than %u objects", PK_MAX_VALUES);
        return NULL;
    }
    m->doc->nvalues++;
    vx_pk_value *v = calloc(1, sizeof *v);
    if (!v) {
        vm_fail(m, VOCIS_E_NOMEM, "out of memory");
        return NULL;
    }
    v->type = t;
    v->priv_next = m->doc->all;
    m->doc->all = v;
    return v;
}

/* Grow a pointer array held in *arr (capacity *cap) to hold need items. */
static vocis_status grow_ptrs(vm *m, void **arr, size_t *cap, size_t need, size_t elem) {
    if (need <= *cap) return VOCIS_OK;
    if (need > PK_MAX_ITEMS) return vm_fail(m, VOCIS_E_FORMAT, "container exceeds %u elements", PK_MAX_ITEMS);
    size_t nc = *cap ? *cap : 4;
    while (nc < need) nc *= 2;
    void *na = realloc(*arr, nc * elem);
    if (!na) return vm_fail(m, VOCIS_E_NOMEM, "out of memory");
    *arr = na;
    *cap = nc;
    return VOCIS_OK;
}

static vocis_status seq_append(vm *m, vx_pk_value *seq, vx_pk_value *const *items, size_t n) {
    size_t need;
    if (__builtin_add_overflow(seq->u.seq.n, n, &need))
        return vm_fail(m, VOCIS_E_FORMAT, "container too large");
    VX_TRY(grow_ptrs(m, &seq->priv_owned, &seq->priv_cap, need, sizeof(vx_pk_value *)));
    seq->u.seq.items = seq->priv_owned;
    for (size_t i = 0; i < n; i++) seq->u.seq.items[seq->u.seq.n++] = items[i];
    return VOCIS_OK;
}

static vocis_status dict_set(vm *m, vx_pk_value *d, vx_pk_value *k, vx_pk_value *v) {
    if (k->type == VX_PK_LIST || k->type == VX_PK_DICT)
        return vm_fail(m, VOCIS_E_FORMAT, "unhashable dict key of type %s", vx_pk_type_name(k->type));
    size_t cap = d->priv_cap;
    VX_TRY(grow_ptrs(m, &d->priv_owned, &cap, d->u.dict.n + 1, sizeof(vx_pk_value *)));
    size_t cap2 = d->priv_cap;
    VX_TRY(grow_ptrs(m, &d->priv_owned2, &cap2, d->u.dict.n + 1, sizeof(vx_pk_value *)));
    /* Both arrays now hold at least n + 1; record the smaller capacity. */
    d->priv_cap = cap < cap2 ? cap : cap2;
    d->u.dict.keys = d->priv_owned;
    d->u.dict.vals = d->priv_owned2;
    d->u.dict.keys[d->u.dict.n] = k;
    d->u.dict.vals[d->u.dict.n] = v;
    d->u.dict.n++;
    return VOCIS_OK;
}

/* ---------------------------------------------------------------- stack */

static size_t frame_floor(const vm *m) { return m->nmarks ? m->marks[m->nmarks - 1] : 0; }

static vocis_status push(vm *m, vx_pk_value *v) {
    if (!v) return m->failed ? m->failed : VOCIS_E_NOMEM;
    if (m->sp == m->scap) {
        if (m->sp >= PK_MAX_STACK) return vm_fail(m, VOCIS_E_FORMAT, "stack deeper than %u", PK_MAX_STACK);
        size_t nc = m->scap ? m->scap * 2 : 64;
        vx_pk_value **ns = realloc(m->stack, nc * sizeof *ns);
        if (!ns) return vm_fail(m, VOCIS_E_NOMEM, "out of memory");
        m->stack = ns;
        m->scap = nc;
    }
    m->stack[m->sp++] = v;
    return VOCIS_OK;
}

static vx_pk_value *pop(vm *m) {
    if (m->sp <= frame_floor(m)) {
        vm_fail(m, VOCIS_E_FORMAT, "stack underflow");
        return NULL;
    }
    return m->stack[--m->sp];
}

static vx_pk_value *top(vm *m) {
    if (m->sp <= frame_floor(m)) {
        vm_fail(m, VOCIS_E_FORMAT, "stack underflow");
        return NULL;
    }
    return m->stack[m->sp - 1];
}

static vocis_status push_mark(vm *m) {
    if (m->nmarks == m->mcap) {
        if (m->nmarks >= PK_MAX_MARKS) return vm_fail(m, VOCIS_E_FORMAT, "more than %u nested marks", PK_MAX_MARKS);
        size_t nc = m->mcap ? m->mcap * 2 : 16;
        size_t *nm = realloc(m->marks, nc * sizeof *nm);
        if (!nm) return vm_fail(m, VOCIS_E_NOMEM, "out of memory");
        m->marks = nm;
        m->mcap = nc;
    }
    m->marks[m->nmarks++] = m->sp;
    return VOCIS_OK;
}

/* Pops the innermost mark; the frame's items are stack[*start, sp). */
static vocis_status pop_mark(vm *m, size_t *start) {
    if (!m->nmarks) return vm_fail(m, VOCIS_E_FORMAT, "no MARK on the stack");
    *start = m->marks[--m->nmarks];
    return VOCIS_OK;
}

/* ---------------------------------------------------------------- input */

static vocis_status need(vm *m, size_t n, const char *what) {
    if (m->len - m->pos < n)
        return vm_fail(m, VOCIS_E_FORMAT, "%s needs %zu bytes but only %zu remain (truncated pickle?)", what, n,
                       m->len - m->pos);
    return VOCIS_OK;
}

static uint64_t rd_le(const uint8_t *p, int n) {
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--) v = (v << 8) | p[i];
    return v;
}

static vocis_status read_uint(vm *m, int n, uint64_t *out) {
    VX_TRY(need(m, (size_t)n, "operand"));
    *out = rd_le(m->buf + m->pos, n);
    m->pos += (size_t)n;
    return VOCIS_OK;
}

/* ---------------------------------------------------------------- memo */

static vocis_status memo_put(vm *m, uint64_t idx) {
    vx_pk_value *v = top(m);
    if (!v) return VOCIS_E_FORMAT;
    if (idx >= m->memo_limit)
        return vm_fail(m, VOCIS_E_FORMAT, "memo index %llu is implausible for a %zu-byte pickle",
                       (unsigned long long)idx, m->len);
    if (idx >= m->memo_cap) {
        size_t nc = m->memo_cap ? m->memo_cap : 64;
        while (nc <= idx) nc *= 2;
        vx_pk_value **nm = realloc(m->memo, nc * sizeof *nm);
        if (!nm) return vm_fail(m, VOCIS_E_NOMEM, "out of memory");
        memset(nm + m->memo_cap, 0, (nc - m->memo_cap) * sizeof *nm);
        m->memo = nm;
        m->memo_cap = nc;
    }
    if (!m->memo[idx]) m->memo_count++;
    m->memo[idx] = v;
    return VOCIS_OK;
}

static vocis_status memo_get(vm *m, uint64_t idx) {
    if (idx >= m->memo_cap || !m->memo[idx])
        return vm_fail(m, VOCIS_E_FORMAT, "memo entry %llu is not defined", (unsigned long long)idx);
    return push(m, m->memo[idx]);
}

/* ---------------------------------------------------------------- globals */

typedef struct allowed_global {
    const char *module, *name, *full;
    vx_pk_global_kind kind;
    vx_dtype dtype;
} allowed_global;

static const allowed_global k_allowed[] = {
    {"torch._utils", "_rebuild_tensor_v2", "torch._utils._rebuild_tensor_v2", VX_PKG_REBUILD_TENSOR_V2, VX_F32},
    {"collections", "OrderedDict", "collections.OrderedDict", VX_PKG_ORDERED_DICT, VX_F32},
    {"torch", "FloatStorage", "torch.FloatStorage", VX_PKG_STORAGE_TYPE, VX_F32},
    {"torch", "HalfStorage", "torch.HalfStorage", VX_PKG_STORAGE_TYPE, VX_F16},
    {"torch", "BFloat16Storage", "torch.BFloat16Storage", VX_PKG_STORAGE_TYPE, VX_BF16},
    {"torch", "LongStorage", "torch.LongStorage", VX_PKG_STORAGE_TYPE, VX_I64},
    {"torch", "IntStorage", "torch.IntStorage", VX_PKG_STORAGE_TYPE, VX_I32},
    {"torch", "ShortStorage", "torch.ShortStorage", VX_PKG_STORAGE_TYPE, VX_I16},
    {"torch", "CharStorage", "torch.CharStorage", VX_PKG_STORAGE_TYPE, VX_I8},
    {"torch", "ByteStorage", "torch.ByteStorage", VX_PKG_STORAGE_TYPE, VX_U8},
    {"torch", "BoolStorage", "torch.BoolStorage", VX_PKG_STORAGE_TYPE, VX_BOOL},
    /* only with vx_pickle_opts.data_classes */
    {"transformers.modeling_outputs", "BaseModelOutputWithPast", "transformers.modeling_outputs.BaseModelOutputWithPast",
     VX_PKG_DATA_CLASS, VX_F32},
    {"transformers.cache_utils", "DynamicCache", "transformers.cache_utils.DynamicCache", VX_PKG_DATA_CLASS, VX_F32},
};

static int data_classes_on(const vm *m) { return m->opts && m->opts->data_classes; }

static vocis_status push_global(vm *m, const char *mod, size_t mlen, const char *name, size_t nlen) {
    for (size_t i = 0; i < sizeof k_allowed / sizeof k_allowed[0]; i++) {
        const allowed_global *g = &k_allowed[i];
        if (g->kind == VX_PKG_DATA_CLASS && !data_classes_on(m)) continue;
        if (strlen(g->module) == mlen && memcmp(g->module, mod, mlen) == 0 && strlen(g->name) == nlen &&
            memcmp(g->name, name, nlen) == 0) {
            vx_pk_value *v = new_value(m, VX_PK_GLOBAL);
            if (!v) return m->failed;
            v->u.global.kind = g->kind;
            v->u.global.dtype = g->dtype;
            v->u.global.name = g->full;
            return push(m, v);
        }
    }
    char pm[128], pn[128];
    printable(pm, sizeof pm, mod, mlen);
    printable(pn, sizeof pn, name, nlen);
    return vm_fail(m, VOCIS_E_FORMAT,
                   "global '%s.%s' is not allowed (only torch tensor/storage rebuilds and OrderedDict)", pm, pn);
}

static vocis_status read_line(vm *m, const char **s, size_t *n) {
    const uint8_t *start = m->buf + m->pos;
    size_t avail = m->len - m->pos, lim = avail < PK_MAX_GLOBAL_LINE + 1 ? avail : PK_MAX_GLOBAL_LINE + 1;
    const uint8_t *nl = memchr(start, '\n', lim);
    if (!nl) {
        if (avail <= PK_MAX_GLOBAL_LINE)
            return vm_fail(m, VOCIS_E_FORMAT, "unterminated GLOBAL line (truncated pickle?)");
        return vm_fail(m, VOCIS_E_FORMAT, "GLOBAL line longer than %d bytes", PK_MAX_GLOBAL_LINE);
    }
    *s = (const char *)start;
    *n = (size_t)(nl - start);
    m->pos += *n + 1;
    return VOCIS_OK;
}

/* ---------------------------------------------------------------- tensors */

static int as_int(const vx_pk_value *v, int64_t *out) {
    if (!v || (v->type != VX_PK_INT && v->type != VX_PK_BOOL)) return -1;
    *out = v->u.i;
    return 0;
}

static vocis_status int_tuple(vm *m, const vx_pk_value *t, const char *what, int64_t *out, int *nd) {
    if (t->type != VX_PK_TUPLE)
        return vm_fail(m, VOCIS_E_FORMAT, "_rebuild_tensor_v2: %s is a %s, expected a tuple", what,
                       vx_pk_type_name(t->type));
    if (t->u.seq.n > VX_MAX_DIMS)
        return vm_fail(m, VOCIS_E_UNSUPPORTED, "_rebuild_tensor_v2: tensor of rank %zu (at most %d supported)",
                       t->u.seq.n, VX_MAX_DIMS);
    for (size_t i = 0; i < t->u.seq.n; i++) {
        int64_t x;
        if (as_int(t->u.seq.items[i], &x) != 0 || x < 0 || (uint64_t)x > PK_MAX_DIM)
            return vm_fail(m, VOCIS_E_FORMAT, "_rebuild_tensor_v2: %s entry %zu is not an integer in [0, 2^40]",
                           what, i);
        out[i] = x;
    }
    *nd = (int)t->u.seq.n;
    return VOCIS_OK;
}

static vocis_status rebuild_tensor(vm *m, const vx_pk_value *args) {
    size_t na = args->u.seq.n;
    if (na != 6 && na != 7)
        return vm_fail(m, VOCIS_E_FORMAT, "_rebuild_tensor_v2 takes 6 or 7 arguments, got %zu", na);
    vx_pk_value *const *a = args->u.seq.items;
    if (a[0]->type != VX_PK_STORAGE)
        return vm_fail(m, VOCIS_E_FORMAT, "_rebuild_tensor_v2: argument 0 is a %s, expected a storage",
                       vx_pk_type_name(a[0]->type));
    const vx_pk_value *st = a[0];
    int64_t offset, rg;
    if (as_int(a[1], &offset) != 0 || offset < 0)
        return vm_fail(m, VOCIS_E_FORMAT, "_rebuild_tensor_v2: storage offset is not a non-negative integer");
    int64_t size[VX_MAX_DIMS], stride[VX_MAX_DIMS];
    int nd, nds;
    VX_TRY(int_tuple(m, a[2], "size", size, &nd));
    VX_TRY(int_tuple(m, a[3], "stride", stride, &nds));
    if (nd != nds)
        return vm_fail(m, VOCIS_E_FORMAT, "_rebuild_tensor_v2: size has %d entries but stride has %d", nd, nds);
    if (as_int(a[4], &rg) != 0)
        return vm_fail(m, VOCIS_E_FORMAT, "_rebuild_tensor_v2: requires_grad is a %s, expected a bool",
                       vx_pk_type_name(a[4]->type));
    if (a[5]->type != VX_PK_DICT && a[5]->type != VX_PK_NONE)
        return vm_fail(m, VOCIS_E_FORMAT, "_rebuild_tensor_v2: backward_hooks is a %s, expected a dict",
                       vx_pk_type_name(a[5]->type));
    if (na == 7 && a[6]->type != VX_PK_DICT && a[6]->type != VX_PK_NONE)
        return vm_fail(m, VOCIS_E_FORMAT, "_rebuild_tensor_v2: metadata is a %s, expected a dict or None",
                       vx_pk_type_name(a[6]->type));

    uint64_t numel = 1, extent = (uint64_t)offset;
    int contiguous = 1;
    uint64_t expect = 1;
    for (int d = nd - 1; d >= 0; d--) {
        if (__builtin_mul_overflow(numel, (uint64_t)size[d], &numel))
            return vm_fail(m, VOCIS_E_FORMAT, "_rebuild_tensor_v2: element count overflows");
        if (size[d] > 1 && (uint64_t)stride[d] != expect) contiguous = 0;
        if (__builtin_mul_overflow(expect, (uint64_t)(size[d] ? size[d] : 1), &expect)) expect = UINT64_MAX;
    }
    const uint64_t snumel = st->u.storage.numel;
    if (numel > 0) {
        for (int d = 0; d < nd; d++) {
            uint64_t span;
            if (__builtin_mul_overflow((uint64_t)(size[d] - 1), (uint64_t)stride[d], &span) ||
                __builtin_add_overflow(extent, span, &extent))
                return vm_fail(m, VOCIS_E_FORMAT, "_rebuild_tensor_v2: extent overflows");
        }
        if (extent >= snumel)
            return vm_fail(m, VOCIS_E_FORMAT,
                           "_rebuild_tensor_v2: tensor reaches element %llu of storage '%s' which has %llu elements",
                           (unsigned long long)extent, st->u.storage.key, (unsigned long long)snumel);
    } else if ((uint64_t)offset > snumel) {
        return vm_fail(m, VOCIS_E_FORMAT, "_rebuild_tensor_v2: offset %lld past storage '%s' of %llu elements",
                       (long long)offset, st->u.storage.key, (unsigned long long)snumel);
    }

    vx_pk_value *v = new_value(m, VX_PK_TENSOR);
    if (!v) return m->failed;
    vx_dtype dt = st->u.storage.dtype;
    size_t es = vx_dtype_size(dt);
    v->u.tensor.t.dtype = dt;
    v->u.tensor.t.ndim = nd;
    for (int d = 0; d < nd; d++) v->u.tensor.t.shape[d] = size[d];
    v->u.tensor.requires_grad = rg != 0;
    v->u.tensor.storage_offset = (uint64_t)offset;
    v->u.tensor.storage_key = st->u.storage.key;
    const uint8_t *sdata = st->u.storage.data;
    if (!sdata || numel == 0) {
        v->u.tensor.t.data = sdata;
        return push(m, v);
    }
    const uint8_t *base = sdata + (size_t)offset * es;
    if (contiguous && (uintptr_t)base % es == 0) {
        v->u.tensor.t.data = base; /* zero-copy view */
        return push(m, v);
    }
    if (!contiguous && numel > snumel)
        return vm_fail(m, VOCIS_E_UNSUPPORTED,
                       "_rebuild_tensor_v2: strided tensor of %llu elements expands a storage of %llu",
                       (unsigned long long)numel, (unsigned long long)snumel);
    /* numel <= snumel here (contiguous: extent < snumel), so the copy fits in memory. */
    uint8_t *dst = malloc((size_t)numel * es);
    if (!dst) return vm_fail(m, VOCIS_E_NOMEM, "out of memory copying a %llu-element tensor",
                             (unsigned long long)numel);
    v->priv_owned = dst;
    if (contiguous) {
        memcpy(dst, base, (size_t)numel * es);
    } else {
        int64_t idx[VX_MAX_DIMS] = {0};
        for (uint64_t i = 0; i < numel; i++) {
            uint64_t src = (uint64_t)offset;
            for (int d = 0; d < nd; d++) src += (uint64_t)idx[d] * (uint64_t)stride[d];
            memcpy(dst + i * es, sdata + src * es, es);
            for (int d = nd - 1; d >= 0; d--) {
                if (++idx[d] < size[d]) break;
                idx[d] = 0;
            }
        }
    }
    v->u.tensor.t.data = dst;
    return push(m, v);
}

static vocis_status reduce(vm *m) {
    vx_pk_value *args = pop(m);
    if (!args) return VOCIS_E_FORMAT;
    vx_pk_value *fn = pop(m);
    if (!fn) return VOCIS_E_FORMAT;
    if (fn->type != VX_PK_GLOBAL)
        return vm_fail(m, VOCIS_E_FORMAT, "cannot call a %s", vx_pk_type_name(fn->type));
    if (args->type != VX_PK_TUPLE)
        return vm_fail(m, VOCIS_E_FORMAT, "arguments of %s are a %s, expected a tuple", fn->u.global.name,
                       vx_pk_type_name(args->type));
    switch (fn->u.global.kind) {
    case VX_PKG_ORDERED_DICT:
        if (args->u.seq.n != 0)
            return vm_fail(m, VOCIS_E_FORMAT, "collections.OrderedDict called with %zu arguments (expected none)",
                           args->u.seq.n);
        return push(m, new_value(m, VX_PK_DICT));
    case VX_PKG_REBUILD_TENSOR_V2: return rebuild_tensor(m, args);
    case VX_PKG_DATA_CLASS: return push(m, new_value(m, VX_PK_DICT)); /* fields arrive by SETITEMS / BUILD */
    case VX_PKG_STORAGE_TYPE: break;
    }
    return vm_fail(m, VOCIS_E_FORMAT, "%s may not be called", fn->u.global.name);
}

static vocis_status persistent_load(vm *m) {
    vx_pk_value *pid = pop(m);
    if (!pid) return VOCIS_E_FORMAT;
    if (pid->type != VX_PK_TUPLE || pid->u.seq.n != 5)
        return vm_fail(m, VOCIS_E_FORMAT, "persistent id is not a 5-tuple ('storage', type, key, location, numel)");
    vx_pk_value *const *p = pid->u.seq.items;
    if (p[0]->type != VX_PK_STR || strcmp(p[0]->u.str.s, "storage") != 0 || p[0]->u.str.len != 7)
        return vm_fail(m, VOCIS_E_FORMAT, "persistent id does not start with 'storage'");
    if (p[1]->type != VX_PK_GLOBAL || p[1]->u.global.kind != VX_PKG_STORAGE_TYPE)
        return vm_fail(m, VOCIS_E_FORMAT, "persistent id: storage type is not an allowed torch.*Storage");
    if (p[2]->type != VX_PK_STR || p[2]->u.str.len == 0 || p[2]->u.str.len > PK_MAX_KEY ||
        strlen(p[2]->u.str.s) != p[2]->u.str.len)
        return vm_fail(m, VOCIS_E_FORMAT, "persistent id: storage key is not a plain string");
    if (p[3]->type != VX_PK_STR) return vm_fail(m, VOCIS_E_FORMAT, "persistent id: location is not a string");
    int64_t numel;
    if (as_int(p[4], &numel) != 0 || numel < 0)
        return vm_fail(m, VOCIS_E_FORMAT, "persistent id: element count is not a non-negative integer");
    if (!m->opts || !m->opts->storage)
        return vm_fail(m, VOCIS_E_FORMAT, "persistent id for storage '%s' but no storage resolver",
                       p[2]->u.str.s);
    const void *data = NULL;
    vx_dtype dt = p[1]->u.global.dtype;
    vocis_status st = m->opts->storage(m->opts->ctx, p[2]->u.str.s, dt, (uint64_t)numel, &data, m->err);
    if (st != VOCIS_OK) return vx_errctx(m->err, "%s: byte %zu (BINPERSID)", m->name, m->op_pos);
    vx_pk_value *v = new_value(m, VX_PK_STORAGE);
    if (!v) return m->failed;
    v->u.storage.dtype = dt;
    v->u.storage.numel = (uint64_t)numel;
    v->u.storage.data = data;
    v->u.storage.key = strdup(p[2]->u.str.s);
    if (!v->u.storage.key) return vm_fail(m, VOCIS_E_NOMEM, "out of memory");
    v->priv_owned = v->u.storage.key;
    return push(m, v);
}

/* ---------------------------------------------------------------- scalars */

static vocis_status push_int(vm *m, int64_t x, vx_pk_type t) {
    vx_pk_value *v = new_value(m, t);
    if (!v) return m->failed;
    v->u.i = x;
    return push(m, v);
}

static vocis_status push_long(vm *m, uint64_t n) {
    if (n > 8) return vm_fail(m, VOCIS_E_UNSUPPORTED, "integer of %llu bytes does not fit 64 bits",
                              (unsigned long long)n);
    VX_TRY(need(m, (size_t)n, "integer"));
    uint64_t u = n ? rd_le(m->buf + m->pos, (int)n) : 0;
    if (n > 0 && n < 8 && (m->buf[m->pos + n - 1] & 0x80)) u |= ~0ull << (8 * n); /* sign-extend */
    m->pos += (size_t)n;
    int64_t x;
    memcpy(&x, &u, sizeof x);
    return push_int(m, x, VX_PK_INT);
}

static vocis_status push_str(vm *m, uint64_t n) {
    if (n > m->len - m->pos)
        return vm_fail(m, VOCIS_E_FORMAT, "string of %llu bytes runs past the end of the pickle (%zu bytes left)",
                       (unsigned long long)n, m->len - m->pos);
    vx_pk_value *v = new_value(m, VX_PK_STR);
    if (!v) return m->failed;
    char *s = malloc((size_t)n + 1);
    if (!s) return vm_fail(m, VOCIS_E_NOMEM, "out of memory for a %llu-byte string", (unsigned long long)n);
    memcpy(s, m->buf + m->pos, (size_t)n);
    s[n] = '\0';
    m->pos += (size_t)n;
    v->priv_owned = s;
    v->u.str.s = s;
    v->u.str.len = (size_t)n;
    return push(m, v);
}

/* ---------------------------------------------------------------- main loop */

static vocis_status run(vm *m) {
    for (;;) {
        if (m->pos >= m->len) {
            m->op_pos = m->pos;
            m->op = 0;
            return vx_fail(m->err, VOCIS_E_FORMAT, "%s: ends at byte %zu without STOP (truncated pickle?)",
                           m->name, m->pos);
        }
        m->op_pos = m->pos;
        m->op = m->buf[m->pos++];
        uint64_t u;
        size_t k = 0;
        vx_pk_value *a, *b, *c;
        switch (m->op) {
        case 0x80: /* PROTO */
            VX_TRY(read_uint(m, 1, &u));
            if (u > 5) return vm_fail(m, VOCIS_E_UNSUPPORTED, "pickle protocol %llu", (unsigned long long)u);
            break;
        case 0x95: /* FRAME */
            VX_TRY(read_uint(m, 8, &u));
            if (u > m->len - m->pos)
                return vm_fail(m, VOCIS_E_FORMAT, "frame of %llu bytes runs past the end",
                               (unsigned long long)u);
            break;
        case '.': /* STOP */
            if (!(a = pop(m))) return VOCIS_E_FORMAT;
            m->doc->root = a;
            return VOCIS_OK;
        case '(': VX_TRY(push_mark(m)); break;
        case '}': VX_TRY(push(m, new_value(m, VX_PK_DICT))); break;
        case ']': VX_TRY(push(m, new_value(m, VX_PK_LIST))); break;
        case ')': VX_TRY(push(m, new_value(m, VX_PK_TUPLE))); break;
        case 'N': VX_TRY(push(m, new_value(m, VX_PK_NONE))); break;
        case 0x88: VX_TRY(push_int(m, 1, VX_PK_BOOL)); break;
        case 0x89: VX_TRY(push_int(m, 0, VX_PK_BOOL)); break;
        case 'K': VX_TRY(read_uint(m, 1, &u)); VX_TRY(push_int(m, (int64_t)u, VX_PK_INT)); break;
        case 'M': VX_TRY(read_uint(m, 2, &u)); VX_TRY(push_int(m, (int64_t)u, VX_PK_INT)); break;
        case 'J': VX_TRY(read_uint(m, 4, &u)); VX_TRY(push_int(m, (int64_t)(int32_t)(uint32_t)u, VX_PK_INT)); break;
        case 0x8a: VX_TRY(read_uint(m, 1, &u)); VX_TRY(push_long(m, u)); break;
        case 0x8b: VX_TRY(read_uint(m, 4, &u)); VX_TRY(push_long(m, u)); break;
        case 'G': { /* BINFLOAT: big-endian IEEE double */
            VX_TRY(need(m, 8, "float"));
            uint64_t bits = 0;
            for (int i = 0; i < 8; i++) bits = (bits << 8) | m->buf[m->pos + (size_t)i];
            m->pos += 8;
            vx_pk_value *v = new_value(m, VX_PK_FLOAT);
            if (!v) return m->failed;
            memcpy(&v->u.f, &bits, sizeof bits);
            VX_TRY(push(m, v));
            break;
        }
        case 'X': VX_TRY(read_uint(m, 4, &u)); VX_TRY(push_str(m, u)); break;
        case 0x8c: VX_TRY(read_uint(m, 1, &u)); VX_TRY(push_str(m, u)); break;
        case 0x8d: VX_TRY(read_uint(m, 8, &u)); VX_TRY(push_str(m, u)); break;
        case 't': /* TUPLE */
        case 'l': /* LIST */ {
            VX_TRY(pop_mark(m, &k));
            vx_pk_value *v = new_value(m, m->op == 't' ? VX_PK_TUPLE : VX_PK_LIST);
            if (!v) return m->failed;
            VX_TRY(seq_append(m, v, m->stack + k, m->sp - k));
            m->sp = k;
            VX_TRY(push(m, v));
            break;
        }
        case 0x85:
        case 0x86:
        case 0x87: { /* TUPLE1..3 */
            size_t n = (size_t)(m->op - 0x84);
            if (m->sp - frame_floor(m) < n) return vm_fail(m, VOCIS_E_FORMAT, "stack underflow");
            vx_pk_value *v = new_value(m, VX_PK_TUPLE);
            if (!v) return m->failed;
            VX_TRY(seq_append(m, v, m->stack + m->sp - n, n));
            m->sp -= n;
            VX_TRY(push(m, v));
            break;
        }
        case 'd': { /* DICT */
            VX_TRY(pop_mark(m, &k));
            if ((m->sp - k) % 2) return vm_fail(m, VOCIS_E_FORMAT, "odd number of items for a dict");
            vx_pk_value *v = new_value(m, VX_PK_DICT);
            if (!v) return m->failed;
            for (size_t i = k; i < m->sp; i += 2) VX_TRY(dict_set(m, v, m->stack[i], m->stack[i + 1]));
            m->sp = k;
            VX_TRY(push(m, v));
            break;
        }
        case 'a': /* APPEND */
            if (!(b = pop(m)) || !(a = top(m))) return VOCIS_E_FORMAT;
            if (a->type != VX_PK_LIST)
                return vm_fail(m, VOCIS_E_FORMAT, "cannot append to a %s", vx_pk_type_name(a->type));
            VX_TRY(seq_append(m, a, &b, 1));
            break;
        case 'e': /* APPENDS */
            VX_TRY(pop_mark(m, &k));
            if (k <= frame_floor(m)) return vm_fail(m, VOCIS_E_FORMAT, "stack underflow");
            a = m->stack[k - 1];
            if (a->type != VX_PK_LIST)
                return vm_fail(m, VOCIS_E_FORMAT, "cannot append to a %s", vx_pk_type_name(a->type));
            VX_TRY(seq_append(m, a, m->stack + k, m->sp - k));
            m->sp = k;
            break;
        case 's': /* SETITEM */
            if (!(c = pop(m)) || !(b = pop(m)) || !(a = top(m))) return VOCIS_E_FORMAT;
            if (a->type != VX_PK_DICT)
                return vm_fail(m, VOCIS_E_FORMAT, "cannot set an item of a %s", vx_pk_type_name(a->type));
            VX_TRY(dict_set(m, a, b, c));
            break;
        case 'u': /* SETITEMS */
            VX_TRY(pop_mark(m, &k));
            if (k <= frame_floor(m)) return vm_fail(m, VOCIS_E_FORMAT, "stack underflow");
            a = m->stack[k - 1];
            if (a->type != VX_PK_DICT)
                return vm_fail(m, VOCIS_E_FORMAT, "cannot set items of a %s", vx_pk_type_name(a->type));
            if ((m->sp - k) % 2) return vm_fail(m, VOCIS_E_FORMAT, "odd number of items for SETITEMS");
            for (size_t i = k; i < m->sp; i += 2) VX_TRY(dict_set(m, a, m->stack[i], m->stack[i + 1]));
            m->sp = k;
            break;
        case 'q': VX_TRY(read_uint(m, 1, &u)); VX_TRY(memo_put(m, u)); break;
        case 'r': VX_TRY(read_uint(m, 4, &u)); VX_TRY(memo_put(m, u)); break;
        case 0x94: VX_TRY(memo_put(m, m->memo_count)); break;
        case 'h': VX_TRY(read_uint(m, 1, &u)); VX_TRY(memo_get(m, u)); break;
        case 'j': VX_TRY(read_uint(m, 4, &u)); VX_TRY(memo_get(m, u)); break;
        case 'c': { /* GLOBAL */
            const char *mod = NULL, *name = NULL;
            size_t ml = 0, nl = 0;
            VX_TRY(read_line(m, &mod, &ml));
            VX_TRY(read_line(m, &name, &nl));
            VX_TRY(push_global(m, mod, ml, name, nl));
            break;
        }
        case 0x93: /* STACK_GLOBAL */
            if (!(b = pop(m)) || !(a = pop(m))) return VOCIS_E_FORMAT;
            if (a->type != VX_PK_STR || b->type != VX_PK_STR)
                return vm_fail(m, VOCIS_E_FORMAT, "module and name must be strings");
            VX_TRY(push_global(m, a->u.str.s, a->u.str.len, b->u.str.s, b->u.str.len));
            break;
        case 'R': VX_TRY(reduce(m)); break;
        case 'Q': VX_TRY(persistent_load(m)); break;
        case 0x81: /* NEWOBJ: cls.__new__(cls, *args) of an allow-listed data class */
            if (!data_classes_on(m)) goto unsupported;
            if (!(b = pop(m)) || !(a = pop(m))) return VOCIS_E_FORMAT;
            if (a->type != VX_PK_GLOBAL || a->u.global.kind != VX_PKG_DATA_CLASS || b->type != VX_PK_TUPLE)
                return vm_fail(m, VOCIS_E_FORMAT, "NEWOBJ of a %s (only allow-listed data classes)",
                               a->type == VX_PK_GLOBAL ? a->u.global.name : vx_pk_type_name(a->type));
            VX_TRY(push(m, new_value(m, VX_PK_DICT)));
            break;
        case 'b': /* BUILD: obj.__dict__.update(state) for the data-class dicts */
            if (!data_classes_on(m)) goto unsupported;
            if (!(b = pop(m)) || !(a = top(m))) return VOCIS_E_FORMAT;
            if (a->type != VX_PK_DICT)
                return vm_fail(m, VOCIS_E_FORMAT, "BUILD on a %s", vx_pk_type_name(a->type));
            if (b->type == VX_PK_NONE) break;
            if (b->type != VX_PK_DICT)
                return vm_fail(m, VOCIS_E_FORMAT, "BUILD state is a %s, expected a dict", vx_pk_type_name(b->type));
            for (size_t i = 0; i < b->u.dict.n; i++) VX_TRY(dict_set(m, a, b->u.dict.keys[i], b->u.dict.vals[i]));
            break;
        unsupported:
        default: {
            const char *on = op_name(m->op);
            if (on)
                return vx_fail(m->err, VOCIS_E_FORMAT, "%s: byte %zu: opcode %s (0x%02x) is not supported", m->name,
                               m->op_pos, on, m->op);
            return vx_fail(m->err, VOCIS_E_FORMAT, "%s: byte %zu: unknown opcode 0x%02x", m->name, m->op_pos,
                           m->op);
        }
        }
    }
}

vocis_status vx_pickle_load(const uint8_t *buf, size_t len, const vx_pickle_opts *opts, vx_pickle **out,
                            vx_err *err) {
    *out = NULL;
    vm m = {0};
    m.buf = buf;
    m.len = buf ? len : 0;
    m.opts = opts;
    m.name = opts && opts->name ? opts->name : "pickle";
    m.err = err;
    /* Real pickles number memo entries 0, 1, 2, ...: one per memo opcode of >= 1 byte. */
    m.memo_limit = m.len + 16;
    m.doc = calloc(1, sizeof *m.doc);
    /* Never NULL, so that `stack + k` is defined even for an empty frame. */
    m.scap = 64;
    m.stack = malloc(m.scap * sizeof *m.stack);
    if (!m.doc || !m.stack) {
        free(m.doc);
        free(m.stack);
        return vx_fail(err, VOCIS_E_NOMEM, "out of memory");
    }
    vocis_status st = run(&m);
    if (st == VOCIS_OK && !m.doc->root) st = vx_fail(err, VOCIS_E_INTERNAL, "%s: no result", m.name);
    free(m.stack);
    free(m.marks);
    free(m.memo);
    if (st != VOCIS_OK) {
        if (err && err->code == VOCIS_OK) vx_fail(err, st, "%s: failed", m.name);
        vx_pickle_free(m.doc);
        return st;
    }
    *out = m.doc;
    return VOCIS_OK;
}

void vx_pickle_free(vx_pickle *p) {
    if (!p) return;
    for (vx_pk_value *v = p->all, *next; v; v = next) {
        next = v->priv_next;
        free(v->priv_owned);
        free(v->priv_owned2);
        free(v);
    }
    free(p);
}

const vx_pk_value *vx_pickle_root(const vx_pickle *p) { return p ? p->root : NULL; }

const vx_pk_value *vx_pk_dict_get(const vx_pk_value *d, const char *key) {
    if (!d || d->type != VX_PK_DICT || !key) return NULL;
    size_t kl = strlen(key);
    for (size_t i = d->u.dict.n; i-- > 0;) {
        const vx_pk_value *k = d->u.dict.keys[i];
        if (k->type == VX_PK_STR && k->u.str.len == kl && memcmp(k->u.str.s, key, kl) == 0) return d->u.dict.vals[i];
    }
    return NULL;
}

int vx_pk_is_none(const vx_pk_value *v) { return !v || v->type == VX_PK_NONE; }
