/* Chatterbox (English) text front end: upstream `punc_norm` and
 * `EnTokenizer.text_to_tokens`. */
#ifndef VX_CHATTERBOX_TEXT_H
#define VX_CHATTERBOX_TEXT_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "text/tokenizer.h"

/* T3's fixed text start / stop ids (the tokenizer's "[START]" / "[STOP]"). */
#define VX_CB_START_TEXT_TOKEN 255
#define VX_CB_STOP_TEXT_TOKEN 0

/* chatterbox.tts.punc_norm on UTF-8 text (NUL-terminated): capitalise the
 * first character, collapse whitespace, replace uncommon punctuation, add a
 * final full stop. "" becomes "You need to add some text for me to talk.".
 * Invalid UTF-8 is VOCIS_E_ARG. *out is malloc'd. */
vocis_status vx_cb_punc_norm(const char *in, char **out, vx_err *err);
/* mtl_tts.punc_norm (Chatterbox-Multilingual): the same, with 、，。？！ also ending a sentence. */
vocis_status vx_mtl_punc_norm(const char *in, char **out, vx_err *err);

/* punc_norm, every ' ' -> "[SPACE]", then tokenizer encode. No start/stop
 * ids are added. *ids is malloc'd. unknown (may be NULL) collects the
 * characters the vocabulary lacks (vx_tokenizer_encode_ex). */
vocis_status vx_cb_text_to_ids(const vx_tokenizer *tok, const char *text, int32_t **ids, size_t *n,
                               vx_tok_unknown *unknown, vx_err *err);

#endif
