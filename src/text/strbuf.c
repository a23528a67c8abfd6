#include "text/strbuf.h"

#include <stdlib.h>
#include <string.h>

#include "text/unicode.h"

int vx_sbuf_put(vx_sbuf *b, const char *s, size_t n) {
    if (b->n + n + 1 > b->cap) {
        size_t nc = b->cap ? b->cap : 64;
        while (nc < b->n + n + 1) nc *= 2;
        char *p = realloc(b->s, nc);
        if (!p) return -1;
        b->s = p;
        b->cap = nc;
    }
    if (n) memcpy(b->s + b->n, s, n);
    b->n += n;
    b->s[b->n] = '\0';
    return 0;
}

int vx_sbuf_cp(vx_sbuf *b, uint32_t cp) {
    char u[4];
    return vx_sbuf_put(b, u, (size_t)vx_utf8_put(cp, u));
}

int vx_sbuf_replace(vx_sbuf *s, const char *find, const char *rep) {
    const size_t fl = strlen(find), rl = strlen(rep);
    if (!s->s || !fl || !strstr(s->s, find)) return 0;
    vx_sbuf b = {0};
    const char *p = s->s, *end = s->s + s->n;
    for (const char *hit; (hit = strstr(p, find)); p = hit + fl)
        if (vx_sbuf_put(&b, p, (size_t)(hit - p)) || vx_sbuf_put(&b, rep, rl)) goto fail;
    if (vx_sbuf_put(&b, p, (size_t)(end - p))) goto fail;
    free(s->s);
    *s = b;
    return 0;
fail:
    free(b.s);
    return -1;
}
