/* The Unicode facts the tokenizers need: UTF-8 decoding with the standard's
 * substitution of maximal subparts, and the classes letter, number and
 * white space of the pre-tokenizer patterns. */
#ifndef WT_IO_UNICODE_H
#define WT_IO_UNICODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define WT_UNICODE_REPLACEMENT 0xFFFDu

extern const char wt_unicode_version[];
extern const uint32_t wt_unicode_letter_ranges[][2];
extern const size_t wt_unicode_letter_count;
extern const uint32_t wt_unicode_number_ranges[][2];
extern const size_t wt_unicode_number_count;

/* Decodes one code point at s[0..n) (n > 0) and returns how many bytes it
 * took. Ill-formed input gives U+FFFD for each maximal subpart (a lead
 * byte and the continuation bytes that could still have completed it),
 * as the Unicode standard recommends and Python's and WHATWG's decoders
 * do; *valid is false then. */
size_t wt_utf8_decode(const uint8_t *s, size_t n, uint32_t *cp, bool *valid);
/* Writes cp as UTF-8 into out (4 bytes of room); returns the length. */
size_t wt_utf8_encode(uint32_t cp, uint8_t *out);
/* The length of a complete sequence that begins with byte b (1 for an
 * ASCII byte, 2..4 for a lead byte), 0 for a continuation or invalid byte. */
int wt_utf8_sequence_length(uint8_t b);

bool wt_unicode_is_letter(uint32_t cp);
bool wt_unicode_is_number(uint32_t cp);
/* The White_Space property (what \s means in the reference patterns). */
bool wt_unicode_is_space(uint32_t cp);

#endif
