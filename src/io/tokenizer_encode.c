/* Tokenizers, text to ids: special tokens matched in the text, the
 * pre-tokenizer's words (byte-level BPE) or the normalized text
 * (SentencePiece), then pairs merged by rank or score (tokenizer.c builds
 * the tables). */
#include "io/tokenizer_internal.h"
#include "io/unicode.h"

#include <stdlib.h>
#include <string.h>

typedef struct sym {
    int32_t id, prev, next;
    bool alive;
    size_t start, len; /* SPM: the piece's bytes in the normalized text */
} sym;

typedef struct cand {
    double key; /* rank, or minus the result's score */
    int32_t left, right, lid, rid, result;
} cand;

typedef struct encoder {
    const wt_tokenizer *t;
    int32_t *ids;
    size_t cap, n;
    sym *syms;
    cand *heap;
    size_t heap_n, syms_cap; /* the heap holds up to 3 * syms_cap */
    bool oom;
    char *buf; /* SPM: the normalized text; BPE: a word's mapped text */
    const char *text; /* the sanitized text */
} encoder;

/* Room for n symbols and their candidate pairs (at most n - 1 at first
 * and two more per merge). */
static bool reserve(encoder *e, size_t n)
{
    if (n <= e->syms_cap) return true;
    size_t cap = e->syms_cap ? e->syms_cap : 64;
    while (cap < n) cap *= 2;
    size_t heap_bytes;
    if (!wt_mul_size(cap, 3 * sizeof(cand), &heap_bytes)) return false;
    sym *s = realloc(e->syms, sizeof *s * cap);
    if (s) e->syms = s;
    cand *h = realloc(e->heap, heap_bytes);
    if (h) e->heap = h;
    if (!s || !h) return false;
    e->syms_cap = cap;
    return true;
}

static void put(encoder *e, int32_t id)
{
    if (e->n < e->cap) e->ids[e->n] = id;
    e->n++;
}

static bool cand_before(const cand *a, const cand *b)
{
    if (a->key != b->key) return a->key < b->key;
    return a->left < b->left;
}

static void heap_push(encoder *e, cand c)
{
    size_t i = e->heap_n++;
    e->heap[i] = c;
    while (i > 0) {
        const size_t p = (i - 1) / 2;
        if (!cand_before(&e->heap[i], &e->heap[p])) break;
        const cand tmp = e->heap[i];
        e->heap[i] = e->heap[p];
        e->heap[p] = tmp;
        i = p;
    }
}

static cand heap_pop(encoder *e)
{
    const cand top = e->heap[0];
    e->heap[0] = e->heap[--e->heap_n];
    size_t i = 0;
    for (;;) {
        const size_t l = 2 * i + 1, r = l + 1;
        size_t m = i;
        if (l < e->heap_n && cand_before(&e->heap[l], &e->heap[m])) m = l;
        if (r < e->heap_n && cand_before(&e->heap[r], &e->heap[m])) m = r;
        if (m == i) break;
        const cand tmp = e->heap[i];
        e->heap[i] = e->heap[m];
        e->heap[m] = tmp;
        i = m;
    }
    return top;
}

static void try_pair(encoder *e, int32_t l, int32_t r)
{
    if (l < 0 || r < 0) return;
    const wt_tokenizer *t = e->t;
    const sym *a = &e->syms[l], *b = &e->syms[r];
    cand c = {0, l, r, a->id, b->id, -1};
    if (t->merge_by_score) {
        if (t->types[a->id] == WT_TOKEN_BYTE || t->types[b->id] == WT_TOKEN_BYTE) return;
        const int32_t id = tk_lookup(t, e->buf + a->start, a->len + b->len);
        if (id < 0 || (t->types[id] != WT_TOKEN_NORMAL && t->types[id] != WT_TOKEN_USER_DEFINED)) return;
        c.key = -(double)t->scores[id];
        c.result = id;
    } else {
        const tk_merge_slot *m = tk_merge_find(t, a->id, b->id);
        if (!m) return;
        c.key = m->rank;
        c.result = m->result;
    }
    heap_push(e, c);
}

/* Merges syms[0..n) (linked in order) and emits the result. */
static void merge_and_emit(encoder *e, int32_t n)
{
    if (n <= 0) return;
    e->heap_n = 0;
    for (int32_t i = 0; i + 1 < n; i++) try_pair(e, i, i + 1);
    while (e->heap_n) {
        const cand c = heap_pop(e);
        sym *a = &e->syms[c.left];
        if (!a->alive || a->next != c.right || a->id != c.lid) continue;
        sym *b = &e->syms[c.right];
        if (!b->alive || b->id != c.rid) continue;
        a->id = c.result;
        a->len += b->len;
        a->next = b->next;
        b->alive = false;
        if (a->next >= 0) e->syms[a->next].prev = c.left;
        try_pair(e, a->prev, c.left);
        try_pair(e, c.left, a->next);
    }
    for (int32_t i = 0; i >= 0; i = e->syms[i].next) put(e, e->syms[i].id);
}

static void add_sym(encoder *e, int32_t *n, int32_t id, size_t start, size_t len)
{
    sym *s = &e->syms[*n];
    s->id = id;
    s->prev = *n - 1;
    s->next = -1;
    s->alive = true;
    s->start = start;
    s->len = len;
    if (*n > 0) e->syms[*n - 1].next = *n;
    (*n)++;
}

static wt_status encode_spm(encoder *e, const char *text, size_t len, bool prefix)
{
    const wt_tokenizer *t = e->t;
    size_t w = 0;
    if (prefix) {
        memcpy(e->buf, SPM_SPACE, 3);
        w = 3;
    }
    for (size_t i = 0; i < len; i++) {
        if (text[i] == ' ') {
            memcpy(e->buf + w, SPM_SPACE, 3);
            w += 3;
        } else {
            e->buf[w++] = text[i];
        }
    }
    if (!reserve(e, w + 1))
        return wt_fail(WT_ERR_OUT_OF_MEMORY, "wt_tokenizer_encode: out of memory for %zu pieces", w);
    int32_t n = 0;
    for (size_t i = 0; i < w;) {
        uint32_t cp;
        bool valid;
        const size_t k = wt_utf8_decode((const uint8_t *)e->buf + i, w - i, &cp, &valid);
        const int32_t id = tk_lookup(t, e->buf + i, k);
        if (id >= 0 && (t->types[id] == WT_TOKEN_NORMAL || t->types[id] == WT_TOKEN_USER_DEFINED)) {
            add_sym(e, &n, id, i, k);
        } else {
            /* Byte fallback: the character's UTF-8 bytes as byte tokens. */
            for (size_t j = 0; j < k; j++) {
                int32_t b = t->byte_token[(uint8_t)e->buf[i + j]];
                if (b < 0) {
                    if (t->unk < 0)
                        return wt_fail(WT_ERR_INVALID_ARGUMENT,
                                       "wt_tokenizer_encode: a character has no token, no byte token and the "
                                       "vocabulary no unknown token");
                    if (j == 0) add_sym(e, &n, t->unk, i, k); /* one unknown per character */
                    break;
                }
                add_sym(e, &n, b, i + j, 1);
            }
        }
        i += k;
    }
    merge_and_emit(e, n);
    return WT_OK;
}

static bool encode_bpe_word(void *ctx, size_t begin, size_t end)
{
    encoder *e = ctx;
    const wt_tokenizer *t = e->t;
    const uint8_t *s = (const uint8_t *)e->text + begin;
    const size_t len = end - begin;
    if (t->ignore_merges) {
        size_t w = 0;
        for (size_t i = 0; i < len; i++) w += wt_utf8_encode(t->byte_cp[s[i]], (uint8_t *)e->buf + w);
        const int32_t id = tk_lookup(t, e->buf, w);
        if (id >= 0) {
            put(e, id);
            return true;
        }
    }
    if (!reserve(e, len + 1)) {
        e->oom = true;
        return false;
    }
    int32_t n = 0;
    for (size_t i = 0; i < len; i++) add_sym(e, &n, t->byte_token[s[i]], i, 1);
    merge_and_emit(e, n);
    return true;
}

/* Replaces each maximal ill-formed subpart by U+FFFD into dst (3 * len
 * bytes of room); returns the length. */
static size_t sanitize(const char *src, size_t len, char *dst)
{
    size_t w = 0;
    for (size_t i = 0; i < len;) {
        uint32_t cp;
        bool valid;
        const size_t k = wt_utf8_decode((const uint8_t *)src + i, len - i, &cp, &valid);
        if (valid) memcpy(dst + w, src + i, k), w += k;
        else w += wt_utf8_encode(WT_UNICODE_REPLACEMENT, (uint8_t *)dst + w);
        i += k;
    }
    return w;
}

static int32_t match_special(const wt_tokenizer *t, const char *s, size_t left, unsigned flags)
{
    const uint8_t first = (uint8_t)s[0];
    if (!(t->special_first[first >> 3] & (1u << (first & 7)))) return -1;
    for (int32_t i = 0; i < t->n_specials; i++) {
        const int32_t id = t->specials[i];
        if (t->types[id] != WT_TOKEN_USER_DEFINED && !(flags & WT_TOKENIZE_SPECIAL)) continue;
        const size_t n = t->text_len[id];
        if (n <= left && memcmp(tk_text(t, id), s, n) == 0) return id;
    }
    return -1;
}

static wt_status encode_segment(encoder *e, size_t begin, size_t end, bool first, unsigned flags)
{
    if (e->t->kind == WT_TOKENIZER_SPM)
        return encode_spm(e, e->text + begin, end - begin,
                          e->t->prefix_space && first && !(flags & WT_TOKENIZE_NO_PREFIX_SPACE));
    if (begin == end) return WT_OK;
    e->text += begin;
    wt_status st = tk_pretokenize(e->t->pre, e->text, end - begin, encode_bpe_word, e);
    e->text -= begin;
    if (!st && e->oom) st = wt_fail(WT_ERR_OUT_OF_MEMORY, "wt_tokenizer_encode: out of memory for a word");
    return st;
}

wt_status wt_tokenizer_encode(const wt_tokenizer *t, const char *text, size_t len, unsigned flags, int32_t *ids,
                              size_t capacity, size_t *n_ids)
{
    const char *fn = "wt_tokenizer_encode";
    if (n_ids) *n_ids = 0;
    if (!t || !n_ids || (!text && len) || (!ids && capacity))
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: %s is NULL", fn,
                       !t ? "t" : !n_ids ? "n_ids" : !ids && capacity ? "ids" : "text");
    if (flags & ~(unsigned)(WT_TOKENIZE_ADD_BOS | WT_TOKENIZE_ADD_EOS | WT_TOKENIZE_SPECIAL | WT_TOKENIZE_NO_PREFIX_SPACE))
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: unknown flags 0x%x", fn, flags);
    if ((flags & WT_TOKENIZE_ADD_BOS) && t->bos < 0)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: WT_TOKENIZE_ADD_BOS, but the vocabulary has no BOS", fn);
    if ((flags & WT_TOKENIZE_ADD_EOS) && t->eos < 0)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: WT_TOKENIZE_ADD_EOS, but the vocabulary has no EOS", fn);
    /* The sanitized text: 3 bytes per input byte at most; SPM's normalized
     * text: 3 per sanitized byte (a space becomes U+2581) and the prefix. */
    if (len > (size_t)INT32_MAX / 16)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: a text of %zu bytes is too long (at most %d)", fn, len,
                       INT32_MAX / 16);
    const size_t clean_cap = len * 3, norm_cap = clean_cap * 3 + 3;
    encoder e = {t, ids, capacity, 0, NULL, NULL, 0, 0, false, NULL, NULL};
    char *clean = malloc(clean_cap + 1);
    e.buf = malloc(norm_cap + 1);
    wt_status st = WT_OK;
    if (!clean || !e.buf) {
        st = wt_fail(WT_ERR_OUT_OF_MEMORY, "%s: out of memory for a text of %zu bytes", fn, len);
        goto done;
    }
    const size_t n = len ? sanitize(text, len, clean) : 0;
    e.text = clean;
    if (flags & WT_TOKENIZE_ADD_BOS) put(&e, t->bos);
    size_t seg = 0;
    bool first = true; /* the text's start, or right after a special token */
    for (size_t i = 0; i < n && !st;) {
        const int32_t sp = match_special(t, clean + i, n - i, flags);
        if (sp < 0) {
            i++;
            continue;
        }
        if (i > seg) st = encode_segment(&e, seg, i, first, flags);
        put(&e, sp);
        i += t->text_len[sp];
        seg = i;
        first = true;
    }
    if (!st && (n > seg)) st = encode_segment(&e, seg, n, first, flags);
    if (!st && (flags & WT_TOKENIZE_ADD_EOS)) put(&e, t->eos);
    if (!st) {
        *n_ids = e.n;
        if (e.n > capacity)
            st = wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: the text needs %zu ids, capacity is %zu", fn, e.n, capacity);
    }
done:
    free(clean);
    free(e.buf);
    free(e.syms);
    free(e.heap);
    return st;
}
