/* Tokenizers, ids to text: a whole list at once, or token by token with
 * a streaming decoder that holds back an incomplete UTF-8 sequence
 * (tokenizer.c builds the tables). */
#include "io/tokenizer_internal.h"
#include "io/unicode.h"

#include <stdlib.h>
#include <string.h>

static bool skipped(const wt_tokenizer *t, int32_t id, unsigned flags)
{
    const uint8_t type = t->types[id];
    return (flags & WT_DETOKENIZE_SKIP_SPECIAL) &&
           (type == WT_TOKEN_CONTROL || type == WT_TOKEN_UNKNOWN || type == WT_TOKEN_UNUSED);
}

/* The bytes id adds to a text; *at_start is true until the first piece
 * (after skipped tokens) has come, whose dummy space is dropped. */
static void piece(const wt_tokenizer *t, int32_t id, unsigned flags, bool *at_start, const char **s, size_t *n)
{
    *s = t->pool + t->bytes_off[id];
    *n = t->bytes_len[id];
    if (skipped(t, id, flags)) {
        *n = 0;
        return;
    }
    const uint8_t type = t->types[id];
    if (*at_start && type != WT_TOKEN_CONTROL && type != WT_TOKEN_UNKNOWN) {
        if ((flags & WT_DETOKENIZE_STRIP_PREFIX_SPACE) && t->kind == WT_TOKENIZER_SPM && *n && **s == ' ') {
            (*s)++;
            (*n)--;
        }
        *at_start = false;
    }
}

wt_status wt_tokenizer_token_bytes(const wt_tokenizer *t, int32_t id, char *buf, size_t capacity, size_t *len)
{
    if (len) *len = 0;
    if (!t || !len || (!buf && capacity))
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "wt_tokenizer_token_bytes: %s is NULL", !t ? "t" : !len ? "len" : "buf");
    if (id < 0 || id >= t->n_vocab)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "wt_tokenizer_token_bytes: id %d outside [0, %d)", id, t->n_vocab);
    *len = t->bytes_len[id];
    if (*len > capacity)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "wt_tokenizer_token_bytes: token %d needs %zu bytes, capacity is %zu",
                       id, *len, capacity);
    if (*len) memcpy(buf, t->pool + t->bytes_off[id], *len);
    return WT_OK;
}

wt_status wt_tokenizer_decode(const wt_tokenizer *t, const int32_t *ids, size_t n, unsigned flags, char *text,
                              size_t capacity, size_t *len)
{
    const char *fn = "wt_tokenizer_decode";
    if (len) *len = 0;
    if (!t || !len || (!ids && n) || (!text && capacity))
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: %s is NULL", fn,
                       !t ? "t" : !len ? "len" : !ids && n ? "ids" : "text");
    if (flags & ~(unsigned)(WT_DETOKENIZE_SKIP_SPECIAL | WT_DETOKENIZE_STRIP_PREFIX_SPACE))
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: unknown flags 0x%x", fn, flags);
    size_t need = 0;
    bool at_start = true;
    for (size_t i = 0; i < n; i++) {
        if (ids[i] < 0 || ids[i] >= t->n_vocab)
            return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: ids[%zu] = %d is outside [0, %d)", fn, i, ids[i], t->n_vocab);
        const char *s;
        size_t k;
        piece(t, ids[i], flags, &at_start, &s, &k);
        if (need + k < need) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: the text is too long", fn);
        if (need + k < capacity) memcpy(text + need, s, k);
        need += k;
    }
    *len = need;
    if (need >= capacity)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: the text needs %zu bytes and a NUL, capacity is %zu", fn, need,
                       capacity);
    text[need] = 0;
    return WT_OK;
}

/* ----------------------------------------------------- streaming decode */

struct wt_detokenizer {
    const wt_tokenizer *t;
    unsigned flags;
    bool at_start;
    uint8_t held[4]; /* the start of a UTF-8 sequence still incomplete */
    size_t n_held;
    uint8_t *scratch; /* the held bytes and one token's */
    char *out;
    size_t out_cap;
};

wt_status wt_detokenizer_create(const wt_tokenizer *t, unsigned flags, wt_detokenizer **out)
{
    if (out) *out = NULL;
    if (!t || !out) return wt_fail(WT_ERR_INVALID_ARGUMENT, "wt_detokenizer_create: %s is NULL", !t ? "t" : "out");
    if (flags & ~(unsigned)(WT_DETOKENIZE_SKIP_SPECIAL | WT_DETOKENIZE_STRIP_PREFIX_SPACE))
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "wt_detokenizer_create: unknown flags 0x%x", flags);
    wt_detokenizer *d = calloc(1, sizeof *d);
    if (!d) return wt_fail(WT_ERR_OUT_OF_MEMORY, "wt_detokenizer_create: out of memory");
    /* Every byte may become a 3-byte U+FFFD. */
    d->out_cap = (t->max_bytes + 4) * 3 + 1;
    d->out = malloc(d->out_cap);
    d->scratch = malloc(t->max_bytes + 4);
    if (!d->out || !d->scratch) {
        free(d->out);
        free(d->scratch);
        free(d);
        return wt_fail(WT_ERR_OUT_OF_MEMORY, "wt_detokenizer_create: out of memory");
    }
    d->t = t;
    d->flags = flags;
    d->at_start = true;
    *out = d;
    return WT_OK;
}

void wt_detokenizer_destroy(wt_detokenizer *d)
{
    if (!d) return;
    free(d->out);
    free(d->scratch);
    free(d);
}

/* Whether s[0..n) is the start of a well-formed sequence that more bytes
 * could complete. */
static bool incomplete(const uint8_t *s, size_t n)
{
    const int len = wt_utf8_sequence_length(s[0]);
    if (len < 2 || (size_t)len <= n) return false;
    uint32_t cp;
    bool valid;
    return wt_utf8_decode(s, n, &cp, &valid) == n; /* every byte so far fits */
}

/* Emits the held bytes followed by s[0..n): complete sequences as they
 * are, ill-formed ones as U+FFFD, an incomplete tail held (unless final). */
static size_t drain(wt_detokenizer *d, const char *s, size_t n, bool final)
{
    memcpy(d->scratch, d->held, d->n_held);
    if (n) memcpy(d->scratch + d->n_held, s, n);
    const size_t total = d->n_held + n;
    d->n_held = 0;
    size_t w = 0;
    for (size_t i = 0; i < total;) {
        const uint8_t *p = d->scratch + i;
        if (!final && incomplete(p, total - i)) { /* fewer than 4 bytes */
            memcpy(d->held, p, total - i);
            d->n_held = total - i;
            break;
        }
        uint32_t cp;
        bool valid;
        const size_t k = wt_utf8_decode(p, total - i, &cp, &valid);
        if (valid) memcpy(d->out + w, p, k), w += k;
        else w += wt_utf8_encode(WT_UNICODE_REPLACEMENT, (uint8_t *)d->out + w);
        i += k;
    }
    return w;
}

wt_status wt_detokenizer_push(wt_detokenizer *d, int32_t id, const char **text, size_t *len)
{
    if (text) *text = NULL;
    if (len) *len = 0;
    if (!d || !text || !len)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "wt_detokenizer_push: %s is NULL", !d ? "d" : !text ? "text" : "len");
    if (id < 0 || id >= d->t->n_vocab)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "wt_detokenizer_push: id %d outside [0, %d)", id, d->t->n_vocab);
    const char *s;
    size_t n;
    piece(d->t, id, d->flags, &d->at_start, &s, &n);
    *len = drain(d, s, n, false);
    d->out[*len] = 0;
    *text = d->out;
    return WT_OK;
}

wt_status wt_detokenizer_flush(wt_detokenizer *d, const char **text, size_t *len)
{
    if (text) *text = NULL;
    if (len) *len = 0;
    if (!d || !text || !len)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "wt_detokenizer_flush: %s is NULL", !d ? "d" : !text ? "text" : "len");
    *len = drain(d, NULL, 0, true);
    d->out[*len] = 0;
    *text = d->out;
    d->at_start = true;
    return WT_OK;
}
