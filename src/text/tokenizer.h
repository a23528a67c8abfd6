/* Hugging Face tokenizers (tokenizer.json): BPE models with either the
 * `Whitespace` pre-tokenizer (Chatterbox English) or byte-level BPE with the
 * Qwen2 `Split` regex + `ByteLevel` (VibeVoice), NFC normaliser, and added /
 * special tokens matched literally before splitting.
 *
 * Supported tokenizer.json subset (anything else is VOCIS_E_UNSUPPORTED,
 * naming the field):
 *   model          BPE: vocab, merges ("a b" strings or ["a", "b"] pairs),
 *                  unk_token, fuse_unk, byte_fallback (<0xXX> tokens),
 *                  continuing_subword_prefix, end_of_word_suffix,
 *                  ignore_merges; dropout null or 0
 *   normalizer     null, NFC, NFD, NFKC, NFKD, Sequence of these
 *   pre_tokenizer  null, Whitespace, Split (Regex or String pattern,
 *                  behavior Isolated or Removed, invert), ByteLevel
 *                  (add_prefix_space, use_regex), Sequence of these
 *   post_processor null or ByteLevel (ids unchanged)
 *   added_tokens   matched leftmost-longest; single_word, lstrip, rstrip,
 *                  normalized honoured; special or not, all are matched
 *   truncation / padding must be null; decoder is ignored.
 * A loaded tokenizer is immutable: encode may run from several threads. */
#ifndef VX_TOKENIZER_H
#define VX_TOKENIZER_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"

typedef struct vx_tokenizer vx_tokenizer;

vocis_status vx_tokenizer_load(const char *path, vx_tokenizer **out, vx_err *err);
/* Same from a tokenizer.json already in memory (len bytes, no NUL needed);
 * name labels error messages (NULL: "tokenizer.json"). */
vocis_status vx_tokenizer_load_mem(const char *data, size_t len, const char *name, vx_tokenizer **out,
                                   vx_err *err);
void vx_tokenizer_free(vx_tokenizer *t);
/* Id of a token string (vocabulary or added token), −1 if absent. */
int32_t vx_tokenizer_token_id(const vx_tokenizer *t, const char *token);
/* Number of ids (max id + 1 over vocabulary and added tokens). */
int32_t vx_tokenizer_size(const vx_tokenizer *t);
/* Text of a token id (added tokens take precedence), NULL if unused. Valid
 * while the tokenizer lives. */
const char *vx_tokenizer_id_to_token(const vx_tokenizer *t, int32_t id);
/* Encode UTF-8 text exactly like tokenizers' Tokenizer.encode(text,
 * add_special_tokens=True) for these configurations (no post-processor).
 * Invalid UTF-8 is an error. *ids is malloc'd. */
vocis_status vx_tokenizer_encode(const vx_tokenizer *t, const char *text, size_t len, int32_t **ids, size_t *n,
                                 vx_err *err);

/* Characters the vocabulary cannot represent (no token, no byte fallback: they become the
 * unk_token, or vanish when there is none), as encode meets them. Zero-initialise; several
 * encodes may add to one. */
#define VX_TOK_UNKNOWN_KEEP 8
typedef struct vx_tok_unknown {
    uint32_t cp[VX_TOK_UNKNOWN_KEEP]; /* distinct code points, first seen first */
    int n;                            /* how many were noted (> VX_TOK_UNKNOWN_KEEP: more than kept) */
} vx_tok_unknown;
/* encode, noting such characters in *unknown (may be NULL). */
vocis_status vx_tokenizer_encode_ex(const vx_tokenizer *t, const char *text, size_t len, int32_t **ids, size_t *n,
                                    vx_tok_unknown *unknown, vx_err *err);
/* "the tokenizer has no token for '😀' (U+1F600), ...: they are read as [UNK]" for the kept
 * characters from index `from` on. */
void vx_tok_unknown_message(const vx_tokenizer *t, const vx_tok_unknown *u, int from, char *buf, size_t cap);

#endif
