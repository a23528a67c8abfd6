#include "base/flist.h"

#include <stdlib.h>
#include <string.h>

int vx_flist_add(vx_flist *l, const float *x, int64_t n) {
    if (l->n + n > l->cap) {
        int64_t cap = l->cap ? l->cap : 4096;
        while (cap < l->n + n) cap *= 2;
        float *p = realloc(l->v, sizeof(float) * (size_t)cap);
        if (!p) return -1;
        l->v = p;
        l->cap = cap;
    }
    if (n) memcpy(l->v + l->n, x, sizeof(float) * (size_t)n);
    l->n += n;
    return 0;
}
