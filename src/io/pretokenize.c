/* The pre-tokenizer patterns of byte-level BPE, implemented by hand as the
 * leftmost-first alternation a regex engine runs:
 *
 * gpt2:   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
 * llama3: (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|
 *         ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
 * qwen2:  llama3's with \p{N} for \p{N}{1,3}
 *
 * At each position the alternatives are tried in order and the first that
 * matches gives the word; the text is covered without gaps. */
#include "io/tokenizer_internal.h"
#include "io/unicode.h"

#include <stdlib.h>

typedef struct cps {
    const uint32_t *c;
    size_t n;
} cps;

static bool is_l(const cps *t, size_t i) { return i < t->n && wt_unicode_is_letter(t->c[i]); }
static bool is_n(const cps *t, size_t i) { return i < t->n && wt_unicode_is_number(t->c[i]); }
static bool is_s(const cps *t, size_t i) { return i < t->n && wt_unicode_is_space(t->c[i]); }
static bool is_nl(const cps *t, size_t i) { return i < t->n && (t->c[i] == '\r' || t->c[i] == '\n'); }
/* [^\s\p{L}\p{N}] */
static bool is_other(const cps *t, size_t i)
{
    return i < t->n && !wt_unicode_is_space(t->c[i]) && !wt_unicode_is_letter(t->c[i]) &&
           !wt_unicode_is_number(t->c[i]);
}

static uint32_t lower_ascii(uint32_t c) { return c >= 'A' && c <= 'Z' ? c + 32 : c; }

/* 's 't 're 've 'm 'll 'd at i: the length matched, 0 if none. */
static size_t contraction(const cps *t, size_t i, bool any_case)
{
    if (t->c[i] != '\'' || i + 1 >= t->n) return 0;
    uint32_t a = t->c[i + 1], b = i + 2 < t->n ? t->c[i + 2] : 0;
    if (any_case) {
        a = lower_ascii(a);
        b = lower_ascii(b);
    }
    if (a == 's' || a == 't' || a == 'm' || a == 'd') return 2;
    if ((a == 'r' || a == 'v') && b == 'e') return 3;
    if (a == 'l' && b == 'l') return 3;
    return 0;
}

/* \s+(?!\S) then \s+ at a space i: the run [i, k), less its last space
 * when a non-space follows and the run is longer than one. */
static size_t space_run(const cps *t, size_t i)
{
    size_t k = i;
    while (is_s(t, k)) k++;
    if (k < t->n && k - i > 1) return k - 1 - i;
    return k - i;
}

static size_t gpt2_word(const cps *t, size_t i)
{
    size_t m = contraction(t, i, false);
    if (m) return m;
    const size_t j = t->c[i] == ' ' ? i + 1 : i;
    size_t k = j;
    if (is_l(t, j)) {
        while (is_l(t, k)) k++;
        return k - i;
    }
    if (is_n(t, j)) {
        while (is_n(t, k)) k++;
        return k - i;
    }
    if (is_other(t, j)) {
        while (is_other(t, k)) k++;
        return k - i;
    }
    if (is_s(t, i)) return space_run(t, i);
    return 1;
}

static size_t llama3_word(const cps *t, size_t i, size_t max_digits)
{
    size_t m = contraction(t, i, true);
    if (m) return m;
    /* [^\r\n\p{L}\p{N}]?\p{L}+ */
    size_t k = i;
    if (!is_l(t, i) && !is_nl(t, i) && !is_n(t, i) && is_l(t, i + 1)) k = i + 1;
    if (is_l(t, k)) {
        while (is_l(t, k)) k++;
        return k - i;
    }
    /* \p{N}{1,max} */
    if (is_n(t, i)) {
        k = i;
        while (k - i < max_digits && is_n(t, k)) k++;
        return k - i;
    }
    /*  ?[^\s\p{L}\p{N}]+[\r\n]* */
    const size_t j = t->c[i] == ' ' ? i + 1 : i;
    if (is_other(t, j)) {
        k = j;
        while (is_other(t, k)) k++;
        while (is_nl(t, k)) k++;
        return k - i;
    }
    if (is_s(t, i)) {
        /* \s*[\r\n]+: up to the last line break of the space run */
        size_t end = i, last_nl = SIZE_MAX;
        while (is_s(t, end)) {
            if (is_nl(t, end)) last_nl = end;
            end++;
        }
        if (last_nl != SIZE_MAX) return last_nl + 1 - i;
        return space_run(t, i);
    }
    return 1;
}

wt_status tk_pretokenize(tk_pre pre, const char *text, size_t len, tk_emit emit, void *ctx)
{
    if (len == 0) return WT_OK;
    size_t bytes;
    if (!wt_mul_size(len + 1, sizeof(uint32_t) + sizeof(size_t), &bytes))
        return wt_fail(WT_ERR_OUT_OF_MEMORY, "wt_tokenizer_encode: text of %zu bytes too long", len);
    uint32_t *c = malloc(sizeof *c * (len + 1));
    size_t *off = malloc(sizeof *off * (len + 1));
    if (!c || !off) {
        free(c);
        free(off);
        return wt_fail(WT_ERR_OUT_OF_MEMORY, "wt_tokenizer_encode: out of memory for %zu bytes of text", len);
    }
    size_t n = 0;
    for (size_t p = 0; p < len;) {
        bool valid;
        off[n] = p;
        p += wt_utf8_decode((const uint8_t *)text + p, len - p, &c[n], &valid);
        n++;
    }
    off[n] = len;
    const cps t = {c, n};
    for (size_t i = 0; i < n;) {
        const size_t w = pre == TK_PRE_GPT2 ? gpt2_word(&t, i) : llama3_word(&t, i, pre == TK_PRE_LLAMA3 ? 3 : 1);
        if (!emit(ctx, off[i], off[i + w])) break;
        i += w;
    }
    free(c);
    free(off);
    return WT_OK;
}

/* GPT-2's table: the printable bytes ! .. ~, ¡ .. ¬, ® .. ÿ stand for
 * themselves; the others, in order, for U+0100, U+0101 ... */
static bool printable(unsigned b) { return (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF); }

void tk_byte_table(uint32_t byte_to_cp[256])
{
    unsigned n = 0;
    for (unsigned b = 0; b < 256; b++) byte_to_cp[b] = printable(b) ? b : 0x100 + n++;
}
