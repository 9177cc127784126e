/* Fuzz target: encode any bytes with small vocabularies of each kind (the
 * first byte picks the vocabulary and the encode flags; the rest is the
 * text). Every id must lie in the vocabulary and their count within
 * WT_TOKENIZE_MAX_IDS; a buffer one id short must be refused with the
 * count needed; decode must give the text back (ill-formed UTF-8 replaced
 * by U+FFFD) and the streaming decoder the same, token by token. Run by
 * `make test-fuzz`; the plain build replays tests/fuzz/corpus_tokenize. */
#define _POSIX_C_SOURCE 200809L
#include "webtensor_tokenizer.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz_main.h"
#include "tokenizer_vocab.h"

enum { N_TOK = 5 };
static wt_tokenizer *g_tok[N_TOK];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    for (int p = 0; p < 3; p++) {
        char *json = vocab_bpe_json(p, p == 1);
        fuzz_require(wt_tokenizer_from_json_memory(json, strlen(json), &g_tok[p]) == WT_OK, wt_last_error());
        free(json);
    }
    char *json = vocab_spm_json();
    fuzz_require(wt_tokenizer_from_json_memory(json, strlen(json), &g_tok[3]) == WT_OK, wt_last_error());
    free(json);
    char path[] = "/tmp/fuzz_tokenize_XXXXXX";
    const int fd = mkstemp(path);
    fuzz_require(fd >= 0, "tokenize: no temporary file");
    close(fd);
    wt_gguf *g = NULL;
    fuzz_require(vocab_spm_gguf(path) == WT_OK && wt_gguf_open(path, &g) == WT_OK, wt_last_error());
    fuzz_require(wt_tokenizer_from_gguf(g, &g_tok[4]) == WT_OK, wt_last_error());
    wt_gguf_close(g);
    unlink(path);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    const wt_tokenizer *t = g_tok[data[0] % N_TOK];
    unsigned flags = (data[0] / N_TOK) & (WT_TOKENIZE_ADD_BOS | WT_TOKENIZE_SPECIAL | WT_TOKENIZE_NO_PREFIX_SPACE);
    if (wt_tokenizer_bos(t) < 0) flags &= ~WT_TOKENIZE_ADD_BOS; /* refused, rightly, without a BOS */
    const char *text = (const char *)data + 1;
    const size_t n = size - 1;
    const bool spm = wt_tokenizer_kind_of(t) == WT_TOKENIZER_SPM;
    const size_t cap = WT_TOKENIZE_MAX_IDS(n);
    int32_t *ids = malloc(sizeof *ids * cap);
    char *expect = malloc(3 * n + 1), *back = malloc(3 * n + 8), *streamed = malloc(3 * n + 8);
    fuzz_require(ids && expect && back && streamed, "tokenize: out of memory");
    size_t n_ids = 0, needed = 0;
    fuzz_require(wt_tokenizer_encode(t, text, n, flags, ids, cap, &n_ids) == WT_OK, "tokenize: encode failed");
    fuzz_require(n_ids <= cap, "tokenize: more ids than WT_TOKENIZE_MAX_IDS");
    bool control_inside = false;
    for (size_t i = 0; i < n_ids; i++) {
        fuzz_require(ids[i] >= 0 && ids[i] < wt_tokenizer_vocab_size(t), "tokenize: an id outside the vocabulary");
        wt_token_type type;
        wt_tokenizer_token(t, ids[i], NULL, NULL, &type);
        if ((type == WT_TOKEN_CONTROL || type == WT_TOKEN_UNKNOWN) && i > 0) control_inside = true;
    }
    if (n_ids)
        fuzz_require(wt_tokenizer_encode(t, text, n, flags, ids, n_ids - 1, &needed) == WT_ERR_INVALID_ARGUMENT &&
                         needed == n_ids,
                     "tokenize: a buffer one id short was not refused with the count");
    /* Round trip. SPM puts a dummy space after each special token, which
     * decode cannot tell from a space of the text: only the start's is
     * stripped, so texts with control tokens inside are not compared. */
    const size_t first = (flags & WT_TOKENIZE_ADD_BOS) ? 1 : 0;
    const unsigned dflags = spm && !(flags & WT_TOKENIZE_NO_PREFIX_SPACE) ? WT_DETOKENIZE_STRIP_PREFIX_SPACE : 0;
    size_t expect_len = vocab_replace_ill_formed(text, n, expect);
    if (spm) { /* SentencePiece's space: a U+2581 of the text decodes as a space */
        size_t w = 0;
        for (size_t i = 0; i < expect_len;) {
            if (expect_len - i >= 3 && memcmp(expect + i, "\xE2\x96\x81", 3) == 0) {
                expect[w++] = ' ';
                i += 3;
            } else {
                expect[w++] = expect[i++];
            }
        }
        expect_len = w;
    }
    size_t back_len = 0;
    fuzz_require(wt_tokenizer_decode(t, ids + first, n_ids - first, dflags, back, 3 * n + 8, &back_len) == WT_OK,
                 "tokenize: decode failed");
    if (!(spm && control_inside))
        fuzz_require(back_len == expect_len && memcmp(back, expect, back_len) == 0,
                     "tokenize: decode(encode(text)) is not the text");
    wt_detokenizer *d = NULL;
    fuzz_require(wt_detokenizer_create(t, dflags, &d) == WT_OK, "tokenize: detokenizer");
    size_t s_len = 0;
    const char *piece;
    size_t k;
    for (size_t i = first; i < n_ids; i++) {
        fuzz_require(wt_detokenizer_push(d, ids[i], &piece, &k) == WT_OK, "tokenize: push failed");
        memcpy(streamed + s_len, piece, k);
        s_len += k;
    }
    fuzz_require(wt_detokenizer_flush(d, &piece, &k) == WT_OK, "tokenize: flush failed");
    memcpy(streamed + s_len, piece, k);
    s_len += k;
    wt_detokenizer_destroy(d);
    /* The streamed text is the decoded bytes with ill-formed parts replaced. */
    char *clean = malloc(3 * back_len + 1);
    fuzz_require(clean != NULL, "tokenize: out of memory");
    const size_t clean_len = vocab_replace_ill_formed(back, back_len, clean);
    fuzz_require(s_len == clean_len && memcmp(streamed, clean, s_len) == 0,
                 "tokenize: the streaming decoder differs from decode");
    free(clean);
    free(ids);
    free(expect);
    free(back);
    free(streamed);
    return 0;
}
