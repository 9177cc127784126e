/* Tokenizers: the vocabulary tables and their getters. The loaders
 * (tokenizer_load.c) describe a vocabulary in a tk_spec; tk_build makes the
 * tables, which tokenizer_encode.c (text to ids: specials, pre-tokenizing,
 * BPE merging) and tokenizer_decode.c (ids to text, and the streaming
 * decoder) read. */
#include "io/tokenizer_internal.h"
#include "io/unicode.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    const char *s = tk_text(t, id);
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
        if (!sp->types && t->kind == WT_TOKENIZER_SPM && tk_byte_token_value(tk_text(t, i), t->text_len[i], &byte))
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
        const char *s = tk_text(t, i);
        size_t k = tk_hash_bytes(s, t->text_len[i]) & t->slot_mask;
        bool seen = false;
        for (; t->slots[k]; k = (k + 1) & t->slot_mask) {
            const int32_t o = (int32_t)(t->slots[k] - 1);
            if (t->text_len[o] == t->text_len[i] && memcmp(tk_text(t, o), s, t->text_len[i]) == 0) {
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
        t->byte_token[b] = tk_lookup(t, s, len);
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
            const uint8_t first = (uint8_t)tk_text(t, i)[0];
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
        const int32_t id = tk_lookup(t, end_texts[i], strlen(end_texts[i]));
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
        const int32_t l = tk_lookup(t, a.s, a.n), rt = tk_lookup(t, b.s, b.n);
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
        const int32_t res = tk_lookup(t, cat, a.n + b.n);
        if (res < 0) {
            st = wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: merge %zu makes a piece that is not in the vocabulary", fn, r);
            break;
        }
        const uint64_t key = ((uint64_t)(uint32_t)l << 32 | (uint32_t)rt) + 1;
        size_t i = tk_mix64(key) & t->merge_mask;
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
    if (text) *text = tk_text(t, id);
    if (len) *len = t->text_len[id];
    if (type) *type = (wt_token_type)t->types[id];
    return WT_OK;
}

wt_status wt_tokenizer_find(const wt_tokenizer *t, const char *text, size_t len, int32_t *id)
{
    if (id) *id = -1;
    if (!t || !id || (!text && len))
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "wt_tokenizer_find: %s is NULL", !t ? "t" : !id ? "id" : "text");
    *id = tk_lookup(t, text, len);
    if (*id < 0) return wt_fail(WT_ERR_NOT_FOUND, "wt_tokenizer_find: no token has this text (%zu bytes)", len);
    return WT_OK;
}
