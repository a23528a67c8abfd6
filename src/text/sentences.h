/* Splitting long text into chunks a TTS model handles well.
 *
 * Rule (documented in README): text of at most max_chars characters is one
 * chunk, unchanged. Longer text is cut into sentences after '.', '!', '?' or
 * '…' (plus any closing quotes/brackets) that are followed by whitespace,
 * except after common abbreviations (Mr. Dr. e.g. …), single-letter initials
 * and inside numbers (3.14); sentences are then packed greedily into chunks
 * of at most max_chars characters. A sentence longer than that is cut after
 * the last ',', ';' or ':' within the limit (if that keeps at least a third
 * of it), else at the last space, else hard at the limit. */
#ifndef VX_SENTENCES_H
#define VX_SENTENCES_H

#include <stddef.h>

#include "base/err.h"

typedef struct vx_chunks {
    char **text; /* NUL-terminated, whitespace-trimmed */
    int n;
} vx_chunks;

vocis_status vx_split_text(const char *text, size_t max_chars, vx_chunks *out, vx_err *err);
void vx_chunks_free(vx_chunks *c);

#endif
