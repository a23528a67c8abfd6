/* A growing, always NUL-terminated byte string for the text front ends. */
#ifndef VX_STRBUF_H
#define VX_STRBUF_H

#include <stddef.h>
#include <stdint.h>

typedef struct vx_sbuf {
    char *s; /* NULL until the first put */
    size_t n, cap;
} vx_sbuf;

/* Appends n bytes (n may be 0: makes s a valid empty string). 0, or -1 when out of memory. */
int vx_sbuf_put(vx_sbuf *b, const char *s, size_t n);
/* Appends one code point as UTF-8. */
int vx_sbuf_cp(vx_sbuf *b, uint32_t cp);
/* Python str.replace(find, rep): every non-overlapping occurrence, left to right.
 * Replaces the contents of *b (string, length and capacity). */
int vx_sbuf_replace(vx_sbuf *b, const char *find, const char *rep);

/* Appends valid UTF-8 text as Chatterbox's punc_norm starts it: the first character upper-cased
 * when it is lowercase (Python's text[0].upper()), then " ".join(text.split()) (runs of Python
 * whitespace dropped, words joined by one ASCII space). Leaves b a valid (maybe empty) string. */
int vx_sbuf_put_capfirst_words(vx_sbuf *b, const char *in, size_t len);

#endif
