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
/* Chapters of a long text (vocis speak --chapters). A chapter begins at each
 * heading line and after each form feed (\f); text before the first heading is
 * the first chapter; chapters holding only whitespace are dropped. A heading
 * line is a Markdown heading ("# Title" .. "###### Title": the title is kept,
 * the #s dropped) or a line starting "Chapter" / "CHAPTER", a number (digits,
 * Roman numerals or English number words: 3, III, Three, Twenty-One) and then
 * nothing or '.', ':', '-', ')' or a dash ("Chapter 3: The Storm"; "Chapter 3
 * of the book" is prose). The heading stays in its chapter, first, as a
 * sentence of its own (a '.' added when it ends in no . ! ? : ; or …). */
vocis_status vx_split_chapters(const char *text, vx_chunks *out, vx_err *err);
void vx_chunks_free(vx_chunks *c);

#endif
