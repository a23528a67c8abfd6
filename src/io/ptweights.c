#include "io/ptweights.h"

#include <stdlib.h>
#include <string.h>

#include "io/torchzip.h"

static void close_torch(void *f) { vx_torch_close(f); }

vocis_status vx_weights_open_pt(const char *path, vx_weights **out, vx_err *err) {
    *out = NULL;
    vx_torch_file *f;
    VX_TRY(vx_torch_open(path, &f, err));
    const vx_pk_value *root = vx_torch_root(f);
    if (!root || root->type != VX_PK_DICT) {
        vocis_status st = vx_fail(err, VOCIS_E_FORMAT, "%s: not a state dict (the pickle holds a %s)", path,
                                  root ? vx_pk_type_name(root->type) : "nothing");
        vx_torch_close(f);
        return st;
    }
    const size_t n = root->u.dict.n;
    if (n > (1u << 24)) {
        vx_torch_close(f);
        return vx_fail(err, VOCIS_E_FORMAT, "%s: %zu entries is implausible for a state dict", path, n);
    }
    const char **names = malloc(sizeof *names * (n ? n : 1));
    vx_tensor *views = malloc(sizeof *views * (n ? n : 1));
    vocis_status st = VOCIS_OK;
    if (!names || !views) st = vx_fail(err, VOCIS_E_NOMEM, "%s: out of memory", path);
    for (size_t i = 0; !st && i < n; i++) {
        const vx_pk_value *k = root->u.dict.keys[i], *v = root->u.dict.vals[i];
        if (k->type != VX_PK_STR || strlen(k->u.str.s) != k->u.str.len || k->u.str.len == 0)
            st = vx_fail(err, VOCIS_E_FORMAT, "%s: state dict entry %zu has a %s key, expected a tensor name", path,
                         i, k->type == VX_PK_STR ? "malformed string" : vx_pk_type_name(k->type));
        else if (v->type != VX_PK_TENSOR)
            st = vx_fail(err, VOCIS_E_FORMAT, "%s: state dict entry '%s' is a %s, expected a tensor", path,
                         k->u.str.s, vx_pk_type_name(v->type));
        else {
            names[i] = k->u.str.s;
            views[i] = v->u.tensor.t;
        }
    }
    if (!st) {
        /* the set takes the archive over (closed with it, or at once on failure) */
        st = vx_weights_from_views(path, (int)n, names, views, close_torch, f, out, err);
        f = NULL;
    }
    free(names);
    free(views);
    vx_torch_close(f);
    return st;
}
