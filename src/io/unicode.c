/* UTF-8 and the character classes of the pre-tokenizer patterns. */
#include "io/unicode.h"

int wt_utf8_sequence_length(uint8_t b)
{
    if (b < 0x80) return 1;
    if (b >= 0xC2 && b <= 0xDF) return 2;
    if (b >= 0xE0 && b <= 0xEF) return 3;
    if (b >= 0xF0 && b <= 0xF4) return 4;
    return 0;
}

size_t wt_utf8_decode(const uint8_t *s, size_t n, uint32_t *cp, bool *valid)
{
    const uint8_t b = s[0];
    const int len = wt_utf8_sequence_length(b);
    *valid = false;
    *cp = WT_UNICODE_REPLACEMENT;
    if (len == 1) {
        *cp = b;
        *valid = true;
        return 1;
    }
    if (len == 0) return 1;
    /* The second byte's range is narrower after E0, ED, F0 and F4: these
     * exclude overlong forms, surrogates and code points past U+10FFFF. */
    uint8_t lo = 0x80, hi = 0xBF;
    if (b == 0xE0) lo = 0xA0;
    else if (b == 0xED) hi = 0x9F;
    else if (b == 0xF0) lo = 0x90;
    else if (b == 0xF4) hi = 0x8F;
    uint32_t v = b & (len == 2 ? 0x1F : len == 3 ? 0x0F : 0x07);
    size_t i = 1;
    for (; i < (size_t)len; i++) {
        if (i >= n || s[i] < lo || s[i] > hi) return i; /* a maximal subpart: one U+FFFD */
        v = v << 6 | (s[i] & 0x3F);
        lo = 0x80;
        hi = 0xBF;
    }
    *cp = v;
    *valid = true;
    return i;
}

size_t wt_utf8_encode(uint32_t cp, uint8_t *out)
{
    if (cp < 0x80) {
        out[0] = (uint8_t)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (uint8_t)(0xC0 | cp >> 6);
        out[1] = (uint8_t)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (uint8_t)(0xE0 | cp >> 12);
        out[1] = (uint8_t)(0x80 | (cp >> 6 & 0x3F));
        out[2] = (uint8_t)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (uint8_t)(0xF0 | cp >> 18);
    out[1] = (uint8_t)(0x80 | (cp >> 12 & 0x3F));
    out[2] = (uint8_t)(0x80 | (cp >> 6 & 0x3F));
    out[3] = (uint8_t)(0x80 | (cp & 0x3F));
    return 4;
}

static bool in_ranges(const uint32_t (*r)[2], size_t n, uint32_t cp)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        const size_t mid = lo + (hi - lo) / 2;
        if (cp < r[mid][0]) hi = mid;
        else if (cp > r[mid][1]) lo = mid + 1;
        else return true;
    }
    return false;
}

bool wt_unicode_is_letter(uint32_t cp)
{
    if (cp < 0x80) return (cp | 0x20) >= 'a' && (cp | 0x20) <= 'z';
    return in_ranges(wt_unicode_letter_ranges, wt_unicode_letter_count, cp);
}

bool wt_unicode_is_number(uint32_t cp)
{
    if (cp < 0x80) return cp >= '0' && cp <= '9';
    return in_ranges(wt_unicode_number_ranges, wt_unicode_number_count, cp);
}

bool wt_unicode_is_space(uint32_t cp)
{
    return (cp >= 0x09 && cp <= 0x0D) || cp == 0x20 || cp == 0x85 || cp == 0xA0 || cp == 0x1680 ||
           (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 || cp == 0x202F || cp == 0x205F ||
           cp == 0x3000;
}
