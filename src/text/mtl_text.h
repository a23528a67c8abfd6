/* Chatterbox-Multilingual text front end: mtl_tts.punc_norm and
 * MTLTokenizer.encode (spec chatterbox.md §12.3):
 *
 *   punc_norm → str.lower() → NFKD → language step → "[xx]" tag → ' ' → "[SPACE]" → tokenizer
 *
 * Language steps, as upstream runs them with the dependencies that vocis can
 * have (no Python packages):
 *   zh  every character of category Lo with a code in Cangjie5_TC.json →
 *       [cj_c]… per character of code + index suffix, then [cj_.]. Upstream
 *       first segments with pkuseg (words joined by ' ' → [SPACE]) when that
 *       package is installed; vocis has no segmenter and does what upstream
 *       does without it.
 *   ja  kanji → hiragana needs pykakasi's dictionary: the text is kept (as
 *       upstream without pykakasi).
 *   he, ru  diacritics / stress marks need dicta_onnx / russian_text_stresser:
 *       kept (as upstream without them, its default install).
 *   ko  Hangul syllables U+AC00..U+D7AF → conjoining jamo, then strip().
 */
#ifndef VX_MTL_TEXT_H
#define VX_MTL_TEXT_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "text/tokenizer.h"

#define VX_MTL_TOKENIZER_FILE "grapheme_mtl_merged_expanded_v1.json"
#define VX_MTL_CANGJIE_FILE "Cangjie5_TC.json"
#define VX_MTL_N_LANGUAGES 23

/* The 23 codes (SUPPORTED_LANGUAGES order: ar da de … zh) and their names. */
extern const char *const vx_mtl_language_codes[VX_MTL_N_LANGUAGES];
extern const char *const vx_mtl_language_names[VX_MTL_N_LANGUAGES];
/* "ar, da, de, …, zh" */
const char *vx_mtl_language_list(void);
/* Index of a code, case-insensitive (upstream lower-cases it), or -1. */
int vx_mtl_language_index(const char *code);

/* The Cangjie table (Cangjie5_TC.json: a JSON list of "glyph\tcode[\t…]"). */
typedef struct vx_mtl_text vx_mtl_text;

/* Loads DIR/Cangjie5_TC.json when present (a missing file makes only
 * Chinese fail, at use); a malformed one is an error. */
vocis_status vx_mtl_text_load(const char *dir, vx_mtl_text **out, vx_err *err);
void vx_mtl_text_free(vx_mtl_text *t);

/* Python str.lower() of UTF-8 text (full mappings: U+0130 → i + U+0307,
 * final sigma). *out is malloc'd. */
vocis_status vx_py_lower(const char *in, char **out, vx_err *err);

/* The intermediate strings of MTLTokenizer.encode (each malloc'd). */
typedef struct vx_mtl_steps {
    char *normalized; /* punc_norm(input) */
    char *lowered;    /* .lower() */
    char *nfkd;       /* NFKD */
    char *language;   /* after the language step */
    char *spaced;     /* tagged, ' ' → [SPACE]: what the tokenizer gets */
} vx_mtl_steps;
void vx_mtl_steps_free(vx_mtl_steps *s);

/* lang: one of the 23 codes (any case), or NULL for upstream's
 * language_id=None (no tag, no language step). An unknown code is
 * VOCIS_E_ARG listing the supported ones. */
vocis_status vx_mtl_preprocess(const vx_mtl_text *t, const char *text, const char *lang, vx_mtl_steps *out,
                               vx_err *err);
/* punc_norm + MTLTokenizer.encode: the ids without start/stop. *ids is malloc'd. unknown (may be
 * NULL) collects the characters the vocabulary lacks (vx_tokenizer_encode_ex). */
vocis_status vx_mtl_text_to_ids(const vx_mtl_text *t, const vx_tokenizer *tok, const char *text, const char *lang,
                                int32_t **ids, size_t *n, vx_tok_unknown *unknown, vx_err *err);

#endif
