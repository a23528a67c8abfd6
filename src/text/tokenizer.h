/* Hugging Face tokenizers (tokenizer.json): BPE models with either the
 * `Whitespace` pre-tokenizer (Chatterbox English) or byte-level BPE with the
 * Qwen2 `Split` regex + `ByteLevel` (VibeVoice), NFC normaliser, and added /
 * special tokens matched literally before splitting. */
#ifndef VX_TOKENIZER_H
#define VX_TOKENIZER_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"

typedef struct vx_tokenizer vx_tokenizer;

vocis_status vx_tokenizer_load(const char *path, vx_tokenizer **out, vx_err *err);
void vx_tokenizer_free(vx_tokenizer *t);
/* Id of a token string (vocabulary or added token), −1 if absent. */
int32_t vx_tokenizer_token_id(const vx_tokenizer *t, const char *token);
/* Number of ids (max id + 1 over vocabulary and added tokens). */
int32_t vx_tokenizer_size(const vx_tokenizer *t);
/* Encode UTF-8 text exactly like tokenizers' Tokenizer.encode(text,
 * add_special_tokens=True) for these configurations (no post-processor).
 * Invalid UTF-8 is an error. *ids is malloc'd. */
vocis_status vx_tokenizer_encode(const vx_tokenizer *t, const char *text, size_t len, int32_t **ids, size_t *n,
                                 vx_err *err);

#endif
