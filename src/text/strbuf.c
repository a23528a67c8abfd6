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

int vx_sbuf_put_capfirst_words(vx_sbuf *b, const char *in, size_t len) {
    uint32_t cp = 0;
    const int k0 = len ? vx_utf8_next(in, len, 0, &cp) : 0;
    char head[16];
    size_t head_len = 0;
    if (len && vx_uc_py_lower(cp)) {
        uint32_t up[3];
        int nu = vx_uc_py_upper(cp, up);
        for (int i = 0; i < nu; i++) head_len += (size_t)vx_utf8_put(up[i], head + head_len);
    } else {
        memcpy(head, in, (size_t)k0);
        head_len = (size_t)k0;
    }
    int in_word = 0, any = 0;
    for (size_t i = 0; i < len;) {
        int k = vx_utf8_next(in, len, i, &cp);
        const char *src = i == 0 ? head : in + i;
        size_t sl = i == 0 ? head_len : (size_t)k;
        if (vx_uc_py_space(cp)) {
            in_word = 0;
        } else {
            if (!in_word && any && vx_sbuf_put(b, " ", 1)) return -1;
            if (vx_sbuf_put(b, src, sl)) return -1;
            in_word = any = 1;
        }
        i += (size_t)k;
    }
    return b->s ? 0 : vx_sbuf_put(b, "", 0);
}
