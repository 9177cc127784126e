/* The parts of the tokenizers that their loaders (GGUF, tokenizer.json),
 * builder, encoder and decoder share: what a loader collects, the finished
 * tokenizer and its lookups. */
#ifndef WT_IO_TOKENIZER_INTERNAL_H
#define WT_IO_TOKENIZER_INTERNAL_H

#include "core/internal.h"
#include "webtensor_tokenizer.h"

#include <string.h>

#define SPM_SPACE "\xE2\x96\x81" /* U+2581, SentencePiece's space */

/* Pre-tokenizer patterns of byte-level BPE. */
typedef enum tk_pre { TK_PRE_GPT2 = 1, TK_PRE_LLAMA3, TK_PRE_QWEN2 } tk_pre;

typedef struct tk_str {
    const char *s;
    size_t n;
} tk_str;

/* What a loader hands over; the strings are copied by tk_build. */
typedef struct tk_spec {
    wt_tokenizer_kind kind;
    bool merge_by_score; /* SPM from GGUF: scores decide; otherwise merge ranks */
    tk_pre pre;
    bool ignore_merges;
    int32_t n_vocab;
    tk_str *tokens;     /* n_vocab (a hole: s NULL, an unused id) */
    const float *scores; /* n_vocab, or NULL */
    uint8_t *types;     /* n_vocab wt_token_type values, or NULL for the defaults */
    size_t n_merges;
    tk_str *merge_left, *merge_right; /* n_merges each */
    int32_t bos, eos, unk; /* -1: none */
    int32_t eot, eom;      /* GGUF's end-of-turn and end-of-message ids, -1: none */
    bool add_bos, add_bos_set;
    bool no_prefix_space; /* SPM: GGUF add_space_prefix false */
} tk_spec;

typedef struct tk_merge_slot {
    uint64_t key; /* left << 32 | right, + 1 so that 0 is empty */
    int32_t rank, result;
} tk_merge_slot;

struct wt_tokenizer {
    wt_tokenizer_kind kind;
    bool merge_by_score, ignore_merges, add_bos, prefix_space;
    tk_pre pre;
    int32_t n_vocab, bos, eos, unk;
    char *pool;              /* every token's text, then its decoded bytes */
    size_t *text_off, *bytes_off;
    uint32_t *text_len, *bytes_len;
    size_t max_bytes;        /* the longest token's decoded bytes */
    float *scores;           /* merge_by_score only */
    uint8_t *types;
    uint32_t *slots;         /* text -> id + 1 (open addressing), 0 empty */
    size_t slot_mask;
    tk_merge_slot *merges;   /* by rank only */
    size_t merge_mask;
    uint32_t byte_cp[256];   /* BPE: the character each byte stands for */
    int32_t byte_token[256]; /* SPM: <0xNN>; BPE: the mapped character's token; -1 none */
    int32_t ends[8];         /* the ids that end a generation */
    int n_ends;
    int32_t *specials;       /* ids matched in the text, longest first */
    int32_t n_specials;
    uint8_t special_first[32]; /* bitmap of the specials' first bytes */
};

/* The tables' lookups, shared by the builder, the encoder and the getters
 * (inline: the encoder asks them for every pair it tries). */
static inline uint64_t tk_hash_bytes(const char *s, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++) h = (h ^ (uint8_t)s[i]) * 0x100000001b3ull;
    return h;
}

static inline const char *tk_text(const wt_tokenizer *t, int32_t id) { return t->pool + t->text_off[id]; }

static inline int32_t tk_lookup(const wt_tokenizer *t, const char *s, size_t n)
{
    if (n == 0) return -1;
    for (size_t i = tk_hash_bytes(s, n) & t->slot_mask;; i = (i + 1) & t->slot_mask) {
        const uint32_t v = t->slots[i];
        if (!v) return -1;
        const int32_t id = (int32_t)(v - 1);
        if (t->text_len[id] == n && memcmp(tk_text(t, id), s, n) == 0) return id;
    }
}

static inline uint64_t tk_mix64(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return x;
}

static inline const tk_merge_slot *tk_merge_find(const wt_tokenizer *t, int32_t left, int32_t right)
{
    const uint64_t key = ((uint64_t)(uint32_t)left << 32 | (uint32_t)right) + 1;
    for (size_t i = tk_mix64(key) & t->merge_mask;; i = (i + 1) & t->merge_mask) {
        if (t->merges[i].key == key) return &t->merges[i];
        if (!t->merges[i].key) return NULL;
    }
}

/* Builds a tokenizer from a spec (fn names the caller in messages). */
wt_status tk_build(const char *fn, const tk_spec *spec, wt_tokenizer **out);
/* Splits valid UTF-8 text into the pre-tokenizer's words: calls emit for
 * each [begin, end) byte range, in order. Returns false when emit does. */
typedef bool (*tk_emit)(void *ctx, size_t begin, size_t end);
wt_status tk_pretokenize(tk_pre pre, const char *text, size_t len, tk_emit emit, void *ctx);
/* Whether s[0..n) is an SPM byte token "<0xNN>", and its byte. */
bool tk_byte_token_value(const char *s, size_t n, int *value);
/* The byte-level BPE table: the code point each byte stands for (all
 * below U+0144). */
void tk_byte_table(uint32_t byte_to_cp[256]);

#endif
