/* Fuzz target: the tokenizer.json reader on any bytes. A failure must
 * leave the out-pointer NULL with a message and a known code. A tokenizer
 * that loads must answer for every id (its text, its bytes), encode a
 * fixed text and the input itself into ids of its vocabulary, decode them,
 * and stream them as well-formed UTF-8 equal to the decoded bytes with
 * ill-formed parts replaced. Run by `make test-fuzz`; the plain build
 * replays tests/fuzz/corpus_tokenizer_json. */
#include "webtensor_tokenizer.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_main.h"
#include "tokenizer_vocab.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    return 0;
}

static void check_text(const wt_tokenizer *t, const char *text, size_t n, unsigned flags)
{
    const size_t cap = WT_TOKENIZE_MAX_IDS(n);
    int32_t *ids = malloc(sizeof *ids * cap);
    fuzz_require(ids != NULL, "tokenizer_json: out of memory");
    size_t n_ids = 0;
    const wt_status st = wt_tokenizer_encode(t, text, n, flags, ids, cap, &n_ids);
    if (st != WT_OK) {
        /* A vocabulary without byte tokens and without <unk> cannot encode
         * every character; anything else is a fault. */
        fuzz_require(st == WT_ERR_INVALID_ARGUMENT && wt_last_error()[0], "tokenizer_json: encode failed oddly");
        free(ids);
        return;
    }
    fuzz_require(n_ids <= cap, "tokenizer_json: more ids than WT_TOKENIZE_MAX_IDS");
    size_t bytes = 1;
    for (size_t i = 0; i < n_ids; i++) {
        fuzz_require(ids[i] >= 0 && ids[i] < wt_tokenizer_vocab_size(t), "tokenizer_json: an id outside the vocabulary");
        size_t k = 0;
        wt_tokenizer_token_bytes(t, ids[i], NULL, 0, &k);
        bytes += k;
    }
    char *back = malloc(bytes), *clean = malloc(3 * bytes), *streamed = malloc(3 * bytes);
    fuzz_require(back && clean && streamed, "tokenizer_json: out of memory");
    size_t len = 0;
    fuzz_require(wt_tokenizer_decode(t, ids, n_ids, 0, back, bytes, &len) == WT_OK && len + 1 == bytes,
                 "tokenizer_json: decode failed or its length is not the tokens' bytes");
    const size_t clean_len = vocab_replace_ill_formed(back, len, clean);
    wt_detokenizer *d = NULL;
    fuzz_require(wt_detokenizer_create(t, 0, &d) == WT_OK, "tokenizer_json: detokenizer");
    size_t s_len = 0, k;
    const char *piece;
    for (size_t i = 0; i < n_ids; i++) {
        fuzz_require(wt_detokenizer_push(d, ids[i], &piece, &k) == WT_OK, "tokenizer_json: push failed");
        memcpy(streamed + s_len, piece, k);
        s_len += k;
    }
    wt_detokenizer_flush(d, &piece, &k);
    memcpy(streamed + s_len, piece, k);
    s_len += k;
    wt_detokenizer_destroy(d);
    fuzz_require(s_len == clean_len && memcmp(streamed, clean, s_len) == 0,
                 "tokenizer_json: the streamed text differs from the decoded bytes");
    free(back);
    free(clean);
    free(streamed);
    free(ids);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    wt_tokenizer *t = (wt_tokenizer *)(uintptr_t)1;
    const wt_status st = wt_tokenizer_from_json_memory(data, size, &t);
    if (st != WT_OK) {
        fuzz_require(t == NULL, "tokenizer_json: a failed load left its out-pointer set");
        fuzz_require(wt_last_error()[0] != 0 && (st == WT_ERR_INVALID_ARGUMENT || st == WT_ERR_UNSUPPORTED ||
                                                 st == WT_ERR_OUT_OF_MEMORY),
                     "tokenizer_json: a failure without a message or with an unexpected code");
        return 0;
    }
    volatile unsigned sink = 0;
    for (int32_t i = 0; i < wt_tokenizer_vocab_size(t); i++) {
        const char *s;
        size_t n, k;
        wt_token_type type;
        fuzz_require(wt_tokenizer_token(t, i, &s, &n, &type) == WT_OK, "tokenizer_json: token of a valid id");
        for (size_t j = 0; j < n; j++) sink += (unsigned char)s[j];
        fuzz_require(type >= WT_TOKEN_NORMAL && type <= WT_TOKEN_BYTE, "tokenizer_json: a token type outside 1..6");
        wt_tokenizer_token_bytes(t, i, NULL, 0, &k);
        fuzz_require(k <= n, "tokenizer_json: a token's bytes longer than its text");
    }
    static const char sample[] = "Hello world, it's 2026! \xF0\x9F\xA6\x99  \t\n<s>\xC3 ok";
    check_text(t, sample, sizeof sample - 1, WT_TOKENIZE_SPECIAL);
    check_text(t, (const char *)data, size < 512 ? size : 512, 0);
    wt_tokenizer_destroy(t);
    (void)sink;
    return 0;
}
