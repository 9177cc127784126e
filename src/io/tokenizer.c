/* Tokenizers: the vocabulary tables, BPE merging, encode and decode, and
 * the streaming decoder. The loaders (tokenizer_load.c) describe a
 * vocabulary in a tk_spec; tk_build makes the tables. */
#include "io/tokenizer_internal.h"
#include "io/unicode.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SPM_SPACE "\xE2\x96\x81" /* U+2581, SentencePiece's space */

static uint64_t hash_bytes(const char *s, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++) h = (h ^ (uint8_t)s[i]) * 0x100000001b3ull;
    return h;
}

static const char *tok_text(const wt_tokenizer *t, int32_t id) { return t->pool + t->text_off[id]; }

static int32_t lookup(const wt_tokenizer *t, const char *s, size_t n)
{
    if (n == 0) return -1;
    for (size_t i = hash_bytes(s, n) & t->slot_mask;; i = (i + 1) & t->slot_mask) {
        const uint32_t v = t->slots[i];
        if (!v) return -1;
        const int32_t id = (int32_t)(v - 1);
        if (t->text_len[id] == n && memcmp(tok_text(t, id), s, n) == 0) return id;
    }
}

static uint64_t mix64(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return x;
}

static const tk_merge_slot *merge_find(const wt_tokenizer *t, int32_t left, int32_t right)
{
    const uint64_t key = ((uint64_t)(uint32_t)left << 32 | (uint32_t)right) + 1;
    for (size_t i = mix64(key) & t->merge_mask;; i = (i + 1) & t->merge_mask) {
        if (t->merges[i].key == key) return &t->merges[i];
        if (!t->merges[i].key) return NULL;
    }
}

void wt_tokenizer_destroy(wt_tokenizer *t)
{
    if (!t) return;
    free(t->pool);
    free(t->text_off);
    free(t->bytes_off);
    free(t->text_len);
    free(t->bytes_len);
    free(t->scores);
    free(t->types);
    free(t->slots);
    free(t->merges);
    free(t->specials);
    free(t);
}

static size_t pow2_at_least(size_t n)
{
    size_t p = 16;
    while (p < n) p <<= 1;
    return p;
}

bool tk_byte_token_value(const char *s, size_t n, int *value)
{
    if (n != 6 || memcmp(s, "<0x", 3) != 0 || s[5] != '>') return false;
    int v = 0;
    for (int i = 3; i < 5; i++) {
        const char c = s[i];
        const int h = c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10 : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
        if (h < 0) return false;
        v = v * 16 + h;
    }
    *value = v;
    return true;
}

/* The bytes a token stands for, written at dst (at most its text's length). */
static size_t token_bytes_of(const wt_tokenizer *t, int32_t id, const uint32_t cp_to_byte_lo[0x144], char *dst)
{
    const char *s = tok_text(t, id);
    const size_t n = t->text_len[id];
    const uint8_t type = t->types[id];
    if (type == WT_TOKEN_CONTROL || type == WT_TOKEN_UNKNOWN || type == WT_TOKEN_UNUSED ||
        (t->kind == WT_TOKENIZER_BPE && type == WT_TOKEN_USER_DEFINED)) {
        memcpy(dst, s, n);
        return n;
    }
    int byte;
    if (t->kind == WT_TOKENIZER_SPM) {
        if (type == WT_TOKEN_BYTE && tk_byte_token_value(s, n, &byte)) {
            dst[0] = (char)byte;
            return 1;
        }
        size_t w = 0;
        for (size_t i = 0; i < n;) {
            if (n - i >= 3 && memcmp(s + i, SPM_SPACE, 3) == 0) {
                dst[w++] = ' ';
                i += 3;
            } else {
                dst[w++] = s[i++];
            }
        }
        return w;
    }
    /* Byte-level: each character of the table is its byte; any other
     * character (a vocabulary may hold some) is kept as it is. */
    size_t w = 0;
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        bool valid;
        const size_t k = wt_utf8_decode((const uint8_t *)s + i, n - i, &cp, &valid);
        if (valid && cp < 0x144 && cp_to_byte_lo[cp] < 256) {
            dst[w++] = (char)cp_to_byte_lo[cp];
        } else {
            memcpy(dst + w, s + i, k);
            w += k;
        }
        i += k;
    }
    return w;
}

static int by_length_desc(const void *a, const void *b, void *t)
{
    const wt_tokenizer *tk = t;
    const uint32_t la = tk->text_len[*(const int32_t *)a], lb = tk->text_len[*(const int32_t *)b];
    if (la != lb) return la > lb ? -1 : 1;
    return *(const int32_t *)a < *(const int32_t *)b ? -1 : 1;
}

/* Insertion sort by length (longest first), then id: qsort has no context
 * argument in C11, and the specials are few (hundreds). */
static void sort_specials(wt_tokenizer *t)
{
    for (int32_t i = 1; i < t->n_specials; i++) {
        const int32_t v = t->specials[i];
        int32_t j = i - 1;
        while (j >= 0 && by_length_desc(&t->specials[j], &v, t) > 0) {
            t->specials[j + 1] = t->specials[j];
            j--;
        }
        t->specials[j + 1] = v;
    }
}

static wt_status build_tables(const char *fn, const tk_spec *sp, wt_tokenizer *t)
{
    const int32_t n = sp->n_vocab;
    size_t total = 0;
    for (int32_t i = 0; i < n; i++) {
        if (sp->tokens[i].n > UINT32_MAX / 8) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: token %d is too long", fn, i);
        total += sp->tokens[i].n;
        if (total > (SIZE_MAX / 4)) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: vocabulary too large", fn);
    }
    t->pool = malloc(total * 2 + 1);
    t->text_off = malloc(sizeof *t->text_off * (size_t)n);
    t->bytes_off = malloc(sizeof *t->bytes_off * (size_t)n);
    t->text_len = malloc(sizeof *t->text_len * (size_t)n);
    t->bytes_len = malloc(sizeof *t->bytes_len * (size_t)n);
    t->types = malloc((size_t)n);
    const size_t nslots = pow2_at_least((size_t)n * 2);
    t->slots = calloc(nslots, sizeof *t->slots);
    t->slot_mask = nslots - 1;
    if (!t->pool || !t->text_off || !t->bytes_off || !t->text_len || !t->bytes_len || !t->types || !t->slots)
        return wt_fail(WT_ERR_OUT_OF_MEMORY, "%s: out of memory for a vocabulary of %d tokens", fn, n);
    size_t w = 0;
    for (int32_t i = 0; i < n; i++) {
        t->text_off[i] = w;
        t->text_len[i] = (uint32_t)sp->tokens[i].n;
        if (sp->tokens[i].n) memcpy(t->pool + w, sp->tokens[i].s, sp->tokens[i].n);
        w += sp->tokens[i].n;
    }
    /* Types: the loader's, or what the vocabulary's shape says. */
    for (int32_t i = 0; i < n; i++) {
        uint8_t type = sp->types ? sp->types[i] : WT_TOKEN_NORMAL;
        if (type == 0) type = WT_TOKEN_NORMAL; /* ggml's "undefined" */
        if (type > WT_TOKEN_BYTE)
            return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: token %d has type %u, not one of 1..6", fn, i, type);
        int byte;
        if (!sp->types && t->kind == WT_TOKENIZER_SPM && tk_byte_token_value(tok_text(t, i), t->text_len[i], &byte))
            type = WT_TOKEN_BYTE;
        if (!sp->tokens[i].s || !sp->tokens[i].n) type = WT_TOKEN_UNUSED;
        t->types[i] = type;
    }
    if (!sp->types) {
        if (t->bos >= 0) t->types[t->bos] = WT_TOKEN_CONTROL;
        if (t->eos >= 0) t->types[t->eos] = WT_TOKEN_CONTROL;
        if (t->unk >= 0) t->types[t->unk] = WT_TOKEN_UNKNOWN;
    }
    for (int32_t i = 0; i < n; i++) {
        if (!t->text_len[i]) continue;
        const char *s = tok_text(t, i);
        size_t k = hash_bytes(s, t->text_len[i]) & t->slot_mask;
        bool seen = false;
        for (; t->slots[k]; k = (k + 1) & t->slot_mask) {
            const int32_t o = (int32_t)(t->slots[k] - 1);
            if (t->text_len[o] == t->text_len[i] && memcmp(tok_text(t, o), s, t->text_len[i]) == 0) {
                seen = true; /* the same text twice: the first id is the one encode gives */
                break;
            }
        }
        if (!seen) t->slots[k] = (uint32_t)i + 1;
    }
    /* Bytes: SPM's byte tokens, or byte-level BPE's 256 characters. */
    uint32_t byte_to_cp[256], cp_to_byte_lo[0x144];
    tk_byte_table(byte_to_cp);
    memcpy(t->byte_cp, byte_to_cp, sizeof byte_to_cp);
    for (int i = 0; i < 0x144; i++) cp_to_byte_lo[i] = 256;
    for (int b = 0; b < 256; b++) cp_to_byte_lo[byte_to_cp[b]] = (uint32_t)b;
    for (int b = 0; b < 256; b++) {
        char s[8];
        size_t len;
        if (t->kind == WT_TOKENIZER_SPM) {
            snprintf(s, sizeof s, "<0x%02X>", b);
            len = 6;
        } else {
            len = wt_utf8_encode(byte_to_cp[b], (uint8_t *)s);
        }
        t->byte_token[b] = lookup(t, s, len);
        if (t->kind == WT_TOKENIZER_SPM && t->byte_token[b] >= 0 && t->types[t->byte_token[b]] != WT_TOKEN_BYTE)
            t->byte_token[b] = -1;
        if (t->kind == WT_TOKENIZER_BPE && t->byte_token[b] < 0)
            return wt_fail(WT_ERR_INVALID_ARGUMENT,
                           "%s: the byte-level vocabulary has no token for byte 0x%02X (U+%04X)", fn, b,
                           byte_to_cp[b]);
    }
    for (int32_t i = 0; i < n; i++) {
        t->bytes_off[i] = w;
        const size_t k = token_bytes_of(t, i, cp_to_byte_lo, t->pool + w);
        t->bytes_len[i] = (uint32_t)k;
        if (k > t->max_bytes) t->max_bytes = k;
        w += k;
    }
    /* Specials: matched in the text (by type, at encode time). */
    t->specials = malloc(sizeof *t->specials * (size_t)n);
    if (!t->specials) return wt_fail(WT_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
    for (int32_t i = 0; i < n; i++) {
        const uint8_t type = t->types[i];
        if ((type == WT_TOKEN_CONTROL || type == WT_TOKEN_UNKNOWN || type == WT_TOKEN_USER_DEFINED) && t->text_len[i]) {
            t->specials[t->n_specials++] = i;
            const uint8_t first = (uint8_t)tok_text(t, i)[0];
            t->special_first[first >> 3] |= (uint8_t)(1u << (first & 7));
        }
    }
    sort_specials(t);
    /* Ends of a generation: EOS, GGUF's end-of-turn and end-of-message ids,
     * and the control tokens chat models end a turn with. */
    static const char *const end_texts[] = {"<|eot_id|>", "<|eom_id|>", "<|im_end|>", "<|end|>", "<|endoftext|>",
                                            "<end_of_turn>", "<|end_of_text|>"};
    const int32_t given[3] = {t->eos, sp->eot, sp->eom};
    for (int i = 0; i < 3; i++)
        if (given[i] >= 0 && given[i] < n) t->ends[t->n_ends++] = given[i];
    for (size_t i = 0; i < sizeof end_texts / sizeof *end_texts; i++) {
        const int32_t id = lookup(t, end_texts[i], strlen(end_texts[i]));
        if (id < 0 || t->types[id] != WT_TOKEN_CONTROL || t->n_ends == 8) continue;
        bool seen = false;
        for (int k = 0; k < t->n_ends; k++) seen = seen || t->ends[k] == id;
        if (!seen) t->ends[t->n_ends++] = id;
    }
    return WT_OK;
}

static wt_status build_merges(const char *fn, const tk_spec *sp, wt_tokenizer *t)
{
    if (sp->n_merges > (size_t)INT32_MAX / 4)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: %zu merges are too many", fn, sp->n_merges);
    const size_t nslots = pow2_at_least(sp->n_merges * 2 + 2);
    t->merges = calloc(nslots, sizeof *t->merges);
    if (!t->merges) return wt_fail(WT_ERR_OUT_OF_MEMORY, "%s: out of memory for %zu merges", fn, sp->n_merges);
    t->merge_mask = nslots - 1;
    char *cat = NULL;
    size_t cat_cap = 0;
    wt_status st = WT_OK;
    for (size_t r = 0; r < sp->n_merges && st == WT_OK; r++) {
        const tk_str a = sp->merge_left[r], b = sp->merge_right[r];
        const int32_t l = lookup(t, a.s, a.n), rt = lookup(t, b.s, b.n);
        if (l < 0 || rt < 0) {
            st = wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: merge %zu names a piece that is not in the vocabulary", fn, r);
            break;
        }
        if (a.n + b.n > cat_cap) {
            cat_cap = (a.n + b.n) * 2;
            char *c = realloc(cat, cat_cap);
            if (!c) {
                st = wt_fail(WT_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
                break;
            }
            cat = c;
        }
        memcpy(cat, a.s, a.n);
        memcpy(cat + a.n, b.s, b.n);
        const int32_t res = lookup(t, cat, a.n + b.n);
        if (res < 0) {
            st = wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: merge %zu makes a piece that is not in the vocabulary", fn, r);
            break;
        }
        const uint64_t key = ((uint64_t)(uint32_t)l << 32 | (uint32_t)rt) + 1;
        size_t i = mix64(key) & t->merge_mask;
        while (t->merges[i].key && t->merges[i].key != key) i = (i + 1) & t->merge_mask;
        if (!t->merges[i].key) { /* a pair listed twice keeps its first rank */
            t->merges[i].key = key;
            t->merges[i].rank = (int32_t)r;
            t->merges[i].result = res;
        }
    }
    free(cat);
    return st;
}

wt_status tk_build(const char *fn, const tk_spec *sp, wt_tokenizer **out)
{
    *out = NULL;
    if (sp->n_vocab <= 0 || sp->n_vocab > INT32_MAX / 4)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: a vocabulary of %d tokens", fn, sp->n_vocab);
    const int32_t ids[3] = {sp->bos, sp->eos, sp->unk};
    static const char *const names[3] = {"BOS", "EOS", "unknown"};
    for (int i = 0; i < 3; i++)
        if (ids[i] < -1 || ids[i] >= sp->n_vocab)
            return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: the %s token id %d is outside the vocabulary of %d", fn,
                           names[i], ids[i], sp->n_vocab);
    if (sp->merge_by_score && !sp->scores) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: SPM merges need scores", fn);
    wt_tokenizer *t = calloc(1, sizeof *t);
    if (!t) return wt_fail(WT_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
    t->kind = sp->kind;
    t->merge_by_score = sp->merge_by_score;
    t->ignore_merges = sp->ignore_merges;
    t->pre = sp->pre;
    t->n_vocab = sp->n_vocab;
    t->bos = sp->bos;
    t->eos = sp->eos;
    t->unk = sp->unk;
    t->add_bos = sp->add_bos_set ? sp->add_bos : sp->kind == WT_TOKENIZER_SPM;
    t->prefix_space = sp->kind == WT_TOKENIZER_SPM && !sp->no_prefix_space;
    wt_status st = build_tables(fn, sp, t);
    if (!st && sp->merge_by_score) {
        t->scores = malloc(sizeof *t->scores * (size_t)sp->n_vocab);
        if (!t->scores) st = wt_fail(WT_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
        else
            for (int32_t i = 0; i < sp->n_vocab; i++) {
                float s;
                memcpy(&s, &sp->scores[i], sizeof s); /* GGUF arrays need not be aligned */
                t->scores[i] = isnan(s) ? -INFINITY : s;
            }
    }
    if (!st && !sp->merge_by_score) st = build_merges(fn, sp, t);
    if (st) {
        wt_tokenizer_destroy(t);
        return st;
    }
    *out = t;
    return WT_OK;
}

/* ------------------------------------------------------------- getters */

wt_tokenizer_kind wt_tokenizer_kind_of(const wt_tokenizer *t) { return t ? t->kind : (wt_tokenizer_kind)0; }
int32_t wt_tokenizer_vocab_size(const wt_tokenizer *t) { return t ? t->n_vocab : 0; }
int32_t wt_tokenizer_bos(const wt_tokenizer *t) { return t ? t->bos : -1; }
int32_t wt_tokenizer_eos(const wt_tokenizer *t) { return t ? t->eos : -1; }
bool wt_tokenizer_adds_bos(const wt_tokenizer *t) { return t && t->add_bos && t->bos >= 0; }

bool wt_tokenizer_is_end(const wt_tokenizer *t, int32_t id)
{
    if (!t) return false;
    for (int i = 0; i < t->n_ends; i++)
        if (t->ends[i] == id) return true;
    return false;
}
const char *wt_tokenizer_unicode_version(void) { return wt_unicode_version; }

wt_status wt_tokenizer_token(const wt_tokenizer *t, int32_t id, const char **text, size_t *len, wt_token_type *type)
{
    if (text) *text = NULL;
    if (!t) return wt_fail(WT_ERR_INVALID_ARGUMENT, "wt_tokenizer_token: t is NULL");
    if (id < 0 || id >= t->n_vocab)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "wt_tokenizer_token: id %d outside [0, %d)", id, t->n_vocab);
    if (text) *text = tok_text(t, id);
    if (len) *len = t->text_len[id];
    if (type) *type = (wt_token_type)t->types[id];
    return WT_OK;
}

wt_status wt_tokenizer_find(const wt_tokenizer *t, const char *text, size_t len, int32_t *id)
{
    if (id) *id = -1;
    if (!t || !id || (!text && len))
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "wt_tokenizer_find: %s is NULL", !t ? "t" : !id ? "id" : "text");
    *id = lookup(t, text, len);
    if (*id < 0) return wt_fail(WT_ERR_NOT_FOUND, "wt_tokenizer_find: no token has this text (%zu bytes)", len);
    return WT_OK;
}

/* -------------------------------------------------------------- encode */

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
        const int32_t id = lookup(t, e->buf + a->start, a->len + b->len);
        if (id < 0 || (t->types[id] != WT_TOKEN_NORMAL && t->types[id] != WT_TOKEN_USER_DEFINED)) return;
        c.key = -(double)t->scores[id];
        c.result = id;
    } else {
        const tk_merge_slot *m = merge_find(t, a->id, b->id);
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
        const int32_t id = lookup(t, e->buf + i, k);
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
        const int32_t id = lookup(t, e->buf, w);
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
        if (n <= left && memcmp(tok_text(t, id), s, n) == 0) return id;
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

/* -------------------------------------------------------------- decode */

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
