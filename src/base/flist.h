/* A growing float array (audio and per-frame traces of the generation loops). */
#ifndef VX_FLIST_H
#define VX_FLIST_H

#include <stdint.h>

typedef struct vx_flist {
    float *v; /* malloc'd; NULL while empty */
    int64_t n, cap;
} vx_flist;

/* Appends x[0..n); 0, or -1 when out of memory (the list is unchanged). */
int vx_flist_add(vx_flist *l, const float *x, int64_t n);

#endif
