/* Chatterbox-Turbo / -Nano text front end (tts_turbo.py @ 5de7a54):
 * Turbo's punc_norm and the GPT-2 byte-level BPE tokenizer with the
 * paralinguistic tags ([laugh], [chuckle], ...) as added tokens. */
#ifndef VX_TURBO_TEXT_H
#define VX_TURBO_TEXT_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "text/tokenizer.h"

/* tts_turbo.punc_norm: capitalise the first character, collapse whitespace,
 * the reduced replacement table (… -> ", ", : -> ",", em/en dash -> "-",
 * " ," -> ",", curly quotes -> straight), right-strip spaces, a final '.'
 * unless the text ends with . ! ? - ,. "" becomes upstream's placeholder
 * sentence. Invalid UTF-8 is VOCIS_E_ARG. *out is malloc'd. */
vocis_status vx_turbo_punc_norm(const char *in, char **out, vx_err *err);

/* 1 when DIR holds GPT-2 tokenizer files (tokenizer.json, or vocab.json + merges.txt). */
int vx_turbo_has_tokenizer(const char *dir);

/* Loads the GPT-2 tokenizer of a Turbo folder as transformers' AutoTokenizer
 * (GPT2TokenizerFast) would: DIR/tokenizer.json when present, otherwise
 * vocab.json + merges.txt with the added tokens of tokenizer_config.json
 * (added_tokens_decoder, with their flags) or added_tokens.json +
 * special_tokens_map.json. *max_len receives tokenizer_config.json's
 * model_max_length (truncation length; 0 = none). */
vocis_status vx_turbo_tokenizer_load(const char *dir, vx_tokenizer **out, int *max_len, vx_err *err);

/* punc_norm + encode + truncation to max_len (0 = none). *ids is malloc'd. */
vocis_status vx_turbo_text_to_ids(const vx_tokenizer *tok, int max_len, const char *text, int32_t **ids, size_t *n,
                                  vx_err *err);

#endif
