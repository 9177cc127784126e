/* Text to token ids and back with the vocabulary of a model file.
 *
 *   tokenize MODEL [--bos] [--special] TEXT     ids of TEXT, one per line with its piece
 *   tokenize MODEL --decode ID ID ...          the text of the ids
 *
 * MODEL is a .gguf file (its tokenizer.ggml.* metadata; the tensors are not
 * read) or a Hugging Face tokenizer.json. --bos puts the BOS token first,
 * --special reads special tokens written in the text (<|eot_id|>). TEXT
 * "-" reads standard input. The decoded text is printed through the
 * streaming decoder, one id at a time, as a generation loop would. */
#include "webtensor_tokenizer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static wt_tokenizer *open_tokenizer(const char *path)
{
    wt_tokenizer *t = NULL;
    const size_t n = strlen(path);
    wt_status st;
    if (n > 5 && strcmp(path + n - 5, ".gguf") == 0) {
        wt_gguf *g = NULL;
        st = wt_gguf_open(path, &g);
        if (st == WT_OK) st = wt_tokenizer_from_gguf(g, &t);
        wt_gguf_close(g); /* the tokenizer keeps its own copy */
    } else {
        st = wt_tokenizer_load_json(path, &t);
    }
    if (st != WT_OK) fprintf(stderr, "tokenize: %s: %s\n", path, wt_last_error());
    return t;
}

static char *read_stdin(size_t *len)
{
    size_t cap = 1 << 16, n = 0;
    char *b = malloc(cap);
    for (size_t k; b && (k = fread(b + n, 1, cap - n, stdin)) > 0;) {
        n += k;
        if (n == cap) {
            char *g = realloc(b, cap *= 2);
            if (!g) free(b);
            b = g;
        }
    }
    *len = n;
    return b;
}

/* Prints ids through the streaming decoder. */
static int print_text(const wt_tokenizer *t, const int32_t *ids, size_t n, unsigned flags)
{
    wt_detokenizer *d = NULL;
    if (wt_detokenizer_create(t, flags, &d) != WT_OK) return 1;
    const char *s;
    size_t k;
    for (size_t i = 0; i < n; i++) {
        if (wt_detokenizer_push(d, ids[i], &s, &k) != WT_OK) {
            fprintf(stderr, "tokenize: %s\n", wt_last_error());
            wt_detokenizer_destroy(d);
            return 1;
        }
        fwrite(s, 1, k, stdout);
    }
    wt_detokenizer_flush(d, &s, &k);
    fwrite(s, 1, k, stdout);
    putchar('\n');
    wt_detokenizer_destroy(d);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: tokenize MODEL [--bos] [--special] TEXT | tokenize MODEL --decode ID ...\n");
        return 2;
    }
    wt_tokenizer *t = open_tokenizer(argv[1]);
    if (!t) return 1;
    const bool spm = wt_tokenizer_kind_of(t) == WT_TOKENIZER_SPM;
    const unsigned dflags = WT_DETOKENIZE_SKIP_SPECIAL | (spm ? WT_DETOKENIZE_STRIP_PREFIX_SPACE : 0);
    int rc = 0;
    if (strcmp(argv[2], "--decode") == 0) {
        const size_t n = (size_t)(argc - 3);
        int32_t *ids = malloc(sizeof *ids * (n + 1));
        for (size_t i = 0; ids && i < n; i++) ids[i] = (int32_t)strtol(argv[3 + i], NULL, 10);
        rc = ids ? print_text(t, ids, n, dflags) : 1;
        free(ids);
        wt_tokenizer_destroy(t);
        return rc;
    }
    unsigned flags = 0;
    const char *text = NULL;
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--bos") == 0) flags |= WT_TOKENIZE_ADD_BOS;
        else if (strcmp(argv[i], "--special") == 0) flags |= WT_TOKENIZE_SPECIAL;
        else text = argv[i];
    }
    if (!text) {
        fprintf(stderr, "tokenize: no text\n");
        wt_tokenizer_destroy(t);
        return 2;
    }
    size_t len = strlen(text);
    char *input = NULL;
    if (strcmp(text, "-") == 0) {
        input = read_stdin(&len);
        text = input;
        if (!input) return 1;
    }
    /* WT_TOKENIZE_MAX_IDS bounds the count; a first call with a small buffer
     * that reports the count needed would do as well. */
    const size_t cap = WT_TOKENIZE_MAX_IDS(len);
    int32_t *ids = malloc(sizeof *ids * cap);
    size_t n = 0;
    if (!ids || wt_tokenizer_encode(t, text, len, flags, ids, cap, &n) != WT_OK) {
        fprintf(stderr, "tokenize: %s\n", wt_last_error());
        rc = 1;
    } else {
        for (size_t i = 0; i < n; i++) {
            const char *piece;
            size_t plen;
            wt_tokenizer_token(t, ids[i], &piece, &plen, NULL);
            /* A generation loop stops at the ids that end one. */
            printf("%d\t%.*s%s\n", ids[i], (int)plen, piece, wt_tokenizer_is_end(t, ids[i]) ? "\t(ends a generation)" : "");
        }
        printf("%zu tokens for %zu bytes; decoded: ", n, len);
        rc = print_text(t, ids, n, dflags);
    }
    free(ids);
    free(input);
    wt_tokenizer_destroy(t);
    return rc;
}
