/* The C side of the tokenizer cross-check (tests/tokenizer_js/check.mjs):
 *
 *   tokenizer_check TOKENIZER CHUNKS IDS_OUT [--bos] [--special]
 *
 * TOKENIZER is a .gguf file (its tokenizer.ggml.* metadata) or a
 * tokenizer.json. CHUNKS holds texts as u32 count, then per text u32 length
 * and its bytes. Each text is encoded (WT_TOKENIZE_ADD_BOS with --bos,
 * WT_TOKENIZE_SPECIAL with --special) and its ids written to IDS_OUT as u32
 * count and the ids (i32), for the script to compare with the npm
 * packages'. On the way it checks what needs no other tokenizer:
 *   - decode(encode(text)) is the text (ill-formed UTF-8 replaced);
 *   - the streaming decoder, fed one id at a time, gives the same text;
 *   - a buffer one id short is refused with the count needed.
 * Exit status 0 when those hold for every text.
 *
 *   tokenizer_check --split gpt2|llama3|qwen2 CHUNKS WORDS_OUT
 *
 * writes the pre-tokenizer's words of each text (u32 count, then per word
 * u32 length and its bytes), which the script compares with the pattern
 * run by JavaScript's regex engine. */
#include "io/tokenizer_internal.h" /* tk_pretokenize: linked from the static library */
#include "webtensor_tokenizer.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static unsigned char *read_all(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc((size_t)n + 1);
    if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
        free(b);
        b = NULL;
    }
    fclose(f);
    *size = (size_t)n;
    return b;
}

static uint32_t get_u32(const unsigned char *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }

static void put_u32(FILE *f, uint32_t v)
{
    const unsigned char b[4] = {(unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16), (unsigned char)(v >> 24)};
    fwrite(b, 1, 4, f);
}

/* The text with each maximal ill-formed subpart replaced by U+FFFD, the
 * way the streaming decoder replaces it: decode(encode(x)) must be this. */
static size_t replace_ill_formed(const char *s, size_t n, char *out)
{
    size_t w = 0;
    for (size_t i = 0; i < n;) {
        const unsigned char b = (unsigned char)s[i];
        int len = b < 0x80 ? 1 : b >= 0xC2 && b <= 0xDF ? 2 : b >= 0xE0 && b <= 0xEF ? 3 : b >= 0xF0 && b <= 0xF4 ? 4 : 0;
        size_t k = 1;
        bool ok = len == 1;
        if (len > 1) {
            unsigned char lo = 0x80, hi = 0xBF;
            if (b == 0xE0) lo = 0xA0;
            if (b == 0xED) hi = 0x9F;
            if (b == 0xF0) lo = 0x90;
            if (b == 0xF4) hi = 0x8F;
            while (k < (size_t)len && i + k < n && (unsigned char)s[i + k] >= lo && (unsigned char)s[i + k] <= hi) {
                k++;
                lo = 0x80;
                hi = 0xBF;
            }
            ok = k == (size_t)len;
        }
        if (ok) memcpy(out + w, s + i, k), w += k;
        else memcpy(out + w, "\xEF\xBF\xBD", 3), w += 3;
        i += k;
    }
    return w;
}

typedef struct words {
    FILE *out;
    const char *text;
    uint32_t count;
    size_t cap, n;
    uint32_t *begin, *end;
} words;

static bool collect(void *ctx, size_t begin, size_t end)
{
    words *w = ctx;
    if (w->n == w->cap) {
        w->cap = w->cap ? w->cap * 2 : 1024;
        w->begin = realloc(w->begin, sizeof *w->begin * w->cap);
        w->end = realloc(w->end, sizeof *w->end * w->cap);
        if (!w->begin || !w->end) return false;
    }
    w->begin[w->n] = (uint32_t)begin;
    w->end[w->n++] = (uint32_t)end;
    return true;
}

static int split_mode(int argc, char **argv)
{
    if (argc != 5) return 2;
    const tk_pre pre = !strcmp(argv[2], "gpt2") ? TK_PRE_GPT2 : !strcmp(argv[2], "llama3") ? TK_PRE_LLAMA3
                     : !strcmp(argv[2], "qwen2") ? TK_PRE_QWEN2 : 0;
    size_t size;
    unsigned char *chunks = read_all(argv[3], &size);
    FILE *out = fopen(argv[4], "wb");
    if (!pre || !chunks || size < 4 || !out) {
        fprintf(stderr, "%s --split: bad pattern, input or output\n", argv[0]);
        return 2;
    }
    const uint32_t count = get_u32(chunks);
    put_u32(out, count);
    size_t off = 4;
    words w = {0};
    for (uint32_t c = 0; c < count; c++) {
        const size_t n = get_u32(chunks + off);
        const char *text = (const char *)chunks + off + 4;
        off += 4 + n;
        w.n = 0;
        /* The patterns run on well-formed text (encode replaces the rest first). */
        if (tk_pretokenize(pre, text, n, collect, &w) != WT_OK) return 1;
        put_u32(out, (uint32_t)w.n);
        for (size_t i = 0; i < w.n; i++) {
            put_u32(out, w.end[i] - w.begin[i]);
            fwrite(text + w.begin[i], 1, w.end[i] - w.begin[i], out);
        }
    }
    fclose(out);
    free(w.begin);
    free(w.end);
    free(chunks);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--split") == 0) return split_mode(argc, argv);
    if (argc < 4) {
        fprintf(stderr, "usage: %s TOKENIZER CHUNKS IDS_OUT [--bos] [--special]\n", argv[0]);
        return 2;
    }
    unsigned flags = 0;
    for (int i = 4; i < argc; i++) {
        if (strcmp(argv[i], "--bos") == 0) flags |= WT_TOKENIZE_ADD_BOS;
        else if (strcmp(argv[i], "--special") == 0) flags |= WT_TOKENIZE_SPECIAL;
        else {
            fprintf(stderr, "%s: unknown option %s\n", argv[0], argv[i]);
            return 2;
        }
    }
    const char *path = argv[1];
    const size_t plen = strlen(path);
    wt_tokenizer *tok = NULL;
    const clock_t t0 = clock();
    if (plen > 5 && strcmp(path + plen - 5, ".gguf") == 0) {
        wt_gguf *g = NULL;
        if (wt_gguf_open(path, &g) == WT_OK) {
            if (wt_tokenizer_from_gguf(g, &tok) != WT_OK) tok = NULL;
            wt_gguf_close(g);
        }
    } else if (wt_tokenizer_load_json(path, &tok) != WT_OK) {
        tok = NULL;
    }
    if (!tok) {
        fprintf(stderr, "%s: %s: %s\n", argv[0], path, wt_last_error());
        return 1;
    }
    const double load_s = (double)(clock() - t0) / CLOCKS_PER_SEC;
    size_t size;
    unsigned char *chunks = read_all(argv[2], &size);
    FILE *out = fopen(argv[3], "wb");
    if (!chunks || size < 4 || !out) {
        fprintf(stderr, "%s: cannot read %s or write %s\n", argv[0], argv[2], argv[3]);
        return 1;
    }
    const bool spm = wt_tokenizer_kind_of(tok) == WT_TOKENIZER_SPM;
    const unsigned dflags = spm ? WT_DETOKENIZE_STRIP_PREFIX_SPACE | WT_DETOKENIZE_SKIP_SPECIAL : 0;
    wt_detokenizer *stream = NULL;
    if (wt_detokenizer_create(tok, dflags, &stream) != WT_OK) {
        fprintf(stderr, "%s: %s\n", argv[0], wt_last_error());
        return 1;
    }
    const uint32_t count = get_u32(chunks);
    size_t off = 4, total_ids = 0, total_bytes = 0;
    int failures = 0;
    double encode_s = 0;
    put_u32(out, count);
    for (uint32_t c = 0; c < count; c++) {
        if (off + 4 > size || get_u32(chunks + off) > size - off - 4) {
            fprintf(stderr, "%s: %s is truncated at text %u\n", argv[0], argv[2], c);
            return 1;
        }
        const size_t n = get_u32(chunks + off);
        const char *text = (const char *)chunks + off + 4;
        off += 4 + n;
        total_bytes += n;
        const size_t cap = WT_TOKENIZE_MAX_IDS(n);
        int32_t *ids = malloc(sizeof *ids * (cap + 1));
        char *expect = malloc(n * 3 + 1), *back = malloc(n * 3 + 64), *streamed = malloc(n * 3 + 64);
        size_t n_ids = 0;
        const clock_t e0 = clock();
        if (wt_tokenizer_encode(tok, text, n, flags, ids, cap, &n_ids) != WT_OK) {
            fprintf(stderr, "text %u: encode failed: %s\n", c, wt_last_error());
            return 1;
        }
        encode_s += (double)(clock() - e0) / CLOCKS_PER_SEC;
        total_ids += n_ids;
        put_u32(out, (uint32_t)n_ids);
        for (size_t i = 0; i < n_ids; i++) put_u32(out, (uint32_t)ids[i]);
        /* One id short: refused, with the count needed. */
        size_t needed = 0;
        if (n_ids > 0 && (wt_tokenizer_encode(tok, text, n, flags, ids, n_ids - 1, &needed) != WT_ERR_INVALID_ARGUMENT ||
                          needed != n_ids)) {
            fprintf(stderr, "text %u: a buffer one id short was not refused with the count (%zu)\n", c, needed);
            failures++;
        }
        /* Round trip: the BOS skipped; SPM's dummy space stripped. */
        const size_t first = (flags & WT_TOKENIZE_ADD_BOS) ? 1 : 0;
        const size_t expect_len = replace_ill_formed(text, n, expect);
        size_t back_len = 0;
        if (wt_tokenizer_decode(tok, ids + first, n_ids - first, dflags, back, n * 3 + 64, &back_len) != WT_OK) {
            fprintf(stderr, "text %u: decode failed: %s\n", c, wt_last_error());
            return 1;
        }
        if (back_len != expect_len || memcmp(back, expect, back_len) != 0) {
            if (failures < 10) fprintf(stderr, "text %u: decode(encode(text)) differs from the text\n", c);
            failures++;
        }
        size_t s_len = 0;
        for (size_t i = first; i < n_ids; i++) {
            const char *piece;
            size_t k;
            if (wt_detokenizer_push(stream, ids[i], &piece, &k) != WT_OK) {
                fprintf(stderr, "text %u: push failed: %s\n", c, wt_last_error());
                return 1;
            }
            memcpy(streamed + s_len, piece, k);
            s_len += k;
        }
        const char *piece;
        size_t k;
        wt_detokenizer_flush(stream, &piece, &k);
        memcpy(streamed + s_len, piece, k);
        s_len += k;
        if (s_len != expect_len || memcmp(streamed, expect, s_len) != 0) {
            if (failures < 10) fprintf(stderr, "text %u: the streamed text differs from the text\n", c);
            failures++;
        }
        free(ids);
        free(expect);
        free(back);
        free(streamed);
    }
    fclose(out);
    printf("tokenizer_check %s: %u texts, %zu bytes -> %zu ids; load %.2f s, encode %.2f s (%.1f MB/s); %d round-trip "
           "failures\n",
           path, count, total_bytes, total_ids, load_s, encode_s, encode_s > 0 ? (double)total_bytes / encode_s / 1e6 : 0.0,
           failures);
    wt_detokenizer_destroy(stream);
    wt_tokenizer_destroy(tok);
    free(chunks);
    return failures ? 1 : 0;
}
