/* Small Unicode helpers shared by the text front ends: strict UTF-8 decoding
 * and the character classes that the reference implementations use
 * (Rust `regex` \w and \s, Python str.isspace / str.islower / str.upper). */
#ifndef VX_UNICODE_H
#define VX_UNICODE_H

#include <stddef.h>
#include <stdint.h>

/* Decodes one code point of s[i..len). Returns its byte length (1..4) or 0
 * when the bytes there are not well-formed UTF-8 (overlong forms, surrogates,
 * values above U+10FFFF and truncated sequences are all refused). */
int vx_utf8_next(const char *s, size_t len, size_t i, uint32_t *cp);
/* Offset of the first byte that is not well-formed UTF-8, or len if none. */
size_t vx_utf8_check(const char *s, size_t len);
/* 1 when s[0..len) is empty or only Python whitespace (str.isspace), i.e. nothing to say; 0 otherwise
 * (invalid UTF-8 included). */
int vx_utf8_blank(const char *s, size_t len);
/* Writes cp as UTF-8 into out (4 bytes room); returns the byte count. */
int vx_utf8_put(uint32_t cp, char *out);

/* Unicode White_Space property (= Rust regex \s = Oniguruma \s). */
int vx_uc_white_space(uint32_t cp);
/* Python str.isspace() for one character (adds U+001C..U+001F). */
int vx_uc_py_space(uint32_t cp);
/* Rust regex Unicode \w: Alphabetic, Mark, Decimal_Number,
 * Connector_Punctuation, Join_Control. */
int vx_uc_rust_word(uint32_t cp);
/* Python str.islower() for one character: the Lowercase property
 * (general category Ll or Other_Lowercase). */
int vx_uc_py_lower(uint32_t cp);
/* Python str.upper() for one character (full case mapping, unconditional
 * SpecialCasing entries, e.g. U+00DF -> "SS"). Writes 1..3 code points to
 * out and returns the count. */
int vx_uc_py_upper(uint32_t cp, uint32_t out[3]);

#endif
