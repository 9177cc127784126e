/* Tokenizers on small vocabularies whose ids are derived by hand (the
 * merges of tests/fuzz/tokenizer_vocab.h applied on paper), special and
 * user-defined tokens, the flags, buffers too small, the streaming
 * decoder on a character split over byte tokens, and vocabularies that are
 * malformed or of a kind this library does not implement, each refused
 * with its code and a message. The real vocabularies are checked against
 * the npm packages by tokenizer_js_crosscheck. */
#define _GNU_SOURCE /* mkstemp */
#include "test_util.h"
#include "webtensor_tokenizer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz/tokenizer_vocab.h"

static bool ids_are(const wt_tokenizer *t, const char *text, unsigned flags, const int32_t *want, size_t n_want,
                    const char *what)
{
    int32_t ids[256];
    size_t n = 0;
    const wt_status st = wt_tokenizer_encode(t, text, strlen(text), flags, ids, 256, &n);
    bool same = st == WT_OK && n == n_want;
    for (size_t i = 0; same && i < n; i++) same = ids[i] == want[i];
    if (!CHECK(same, "%s: status %d, %zu ids (want %zu): %s", what, st, n, n_want, st ? wt_last_error() : "")) {
        for (size_t i = 0; i < n && i < 32; i++) fprintf(stderr, " %d", ids[i]);
        fprintf(stderr, "\n");
    }
    return same;
}

static wt_tokenizer *from_json_text(const char *json)
{
    wt_tokenizer *t = NULL;
    CHECK(wt_tokenizer_from_json_memory(json, strlen(json), &t) == WT_OK, "load: %s", wt_last_error());
    return t;
}

#define IDS(...) ((const int32_t[]){__VA_ARGS__}), sizeof((const int32_t[]){__VA_ARGS__}) / sizeof(int32_t)

static void byte_level(void)
{
    char *json = vocab_bpe_json(0, 0);
    wt_tokenizer *t = from_json_text(json);
    free(json);
    if (!t) return;
    CHECK(wt_tokenizer_kind_of(t) == WT_TOKENIZER_BPE, "byte-level kind");
    /* "the" -> t h e; "h e" (rank 1) -> he; no "t he" merge: [t, he].
     * " thing" -> Ġ t h i n g; Ġt (0), in (3), Ġth (8): [Ġth, in, g]. */
    ids_are(t, "the thing", 0, IDS('t', 257, 264, 259, 'g'), "gpt2: the thing");
    /* GPT-2's pattern: " 12" is one word (Ġ, 1, 2 -> Ġ, 12); "12345" one run. */
    ids_are(t, " 12", 0, IDS(' ', 263), "gpt2: ' 12'");
    ids_are(t, "12345", 0, IDS(263, '3', '4', '5'), "gpt2: 12345");
    /* Spaces: "a   b" -> "a", "  " (the run less its last space), " b". */
    ids_are(t, "a   b", 0, IDS('a', 265, ' ', 'b'), "gpt2: a   b");
    /* Special <|eot|> (267) only with WT_TOKENIZE_SPECIAL; <tool> (268,
     * user-defined) always. */
    ids_are(t, "<|eot|>in", WT_TOKENIZE_SPECIAL, IDS(267, 259), "special on");
    /* No EOS and no known end-of-turn text: nothing ends a generation. */
    CHECK(!wt_tokenizer_is_end(t, 267) && wt_tokenizer_eos(t) == -1, "gpt2: <|eot|> is no known end");
    ids_are(t, "<tool>in", 0, IDS(268, 259), "user-defined always");
    int32_t ids[64];
    size_t n = 0;
    /* As text: "<|", "eot", "|>" -> 2 + 3 + 2 byte ids (no merge applies). */
    CHECK(wt_tokenizer_encode(t, "<|eot|>", 7, 0, ids, 64, &n) == WT_OK && n == 7, "special off: <|eot|> as text, %zu ids", n);
    /* No BOS in this vocabulary: asking for one is an error. */
    CHECK(wt_tokenizer_bos(t) == -1 && wt_tokenizer_encode(t, "a", 1, WT_TOKENIZE_ADD_BOS, ids, 64, &n) ==
                                             WT_ERR_INVALID_ARGUMENT,
          "ADD_BOS without a BOS refused");
    /* Buffers: one id short is refused with the count; unknown flags. */
    CHECK(wt_tokenizer_encode(t, "the thing", 9, 0, ids, 4, &n) == WT_ERR_INVALID_ARGUMENT && n == 5,
          "a buffer one short: the count needed (%zu)", n);
    CHECK(wt_tokenizer_encode(t, "a", 1, 0x100, ids, 64, &n) == WT_ERR_INVALID_ARGUMENT, "unknown flags refused");
    CHECK(wt_tokenizer_encode(t, NULL, 0, 0, ids, 64, &n) == WT_OK && n == 0, "empty text: no ids");
    /* Ill-formed UTF-8: each maximal subpart becomes U+FFFD (EF BF BD). */
    const char bad[] = "a\xE2\x82" "b\x80";
    char back[64];
    size_t len = 0;
    CHECK(wt_tokenizer_encode(t, bad, sizeof bad - 1, 0, ids, 64, &n) == WT_OK &&
              wt_tokenizer_decode(t, ids, n, 0, back, sizeof back, &len) == WT_OK &&
              len == 8 && memcmp(back, "a\xEF\xBF\xBD" "b\xEF\xBF\xBD", 8) == 0,
          "ill-formed UTF-8 decodes as U+FFFD (%zu bytes)", len);
    /* decode: too small a buffer gives the length needed. */
    const int32_t the[2] = {'t', 257};
    CHECK(wt_tokenizer_decode(t, the, 2, 0, back, 3, &len) == WT_ERR_INVALID_ARGUMENT && len == 3,
          "decode: no room for the NUL (needs %zu)", len);
    const int32_t outside[1] = {100000};
    CHECK(wt_tokenizer_decode(t, outside, 1, 0, back, sizeof back, &len) == WT_ERR_INVALID_ARGUMENT,
          "decode: an id outside the vocabulary");
    int32_t id = 0;
    CHECK(wt_tokenizer_find(t, "\xC4\xA0the", 5, &id) == WT_OK && id == 258, "find Ġthe: %d", id);
    CHECK(wt_tokenizer_find(t, "zzz", 3, &id) == WT_ERR_NOT_FOUND && id == -1, "find a missing text");
    wt_tokenizer_destroy(t);

    /* Llama 3's pattern with ignore_merges: a word in the vocabulary is
     * taken whole; contractions in any ASCII case; digits by three. */
    json = vocab_bpe_json(1, 1);
    t = from_json_text(json);
    free(json);
    if (!t) return;
    ids_are(t, " the", 0, IDS(258), "llama3: ' the' whole (ignore_merges)");
    ids_are(t, "I'M", 0, IDS('I', '\'', 'M'), "llama3: I + 'M");
    ids_are(t, "1234", 0, IDS(263, '3', '4'), "llama3: 123|4 -> 12 3 | 4");
    /* "a\n\n b": "a", "\n\n" (\s*[\r\n]+ ends at the last line break), " b". */
    ids_are(t, "a\n\n b", 0, IDS('a', '\n', '\n', ' ', 'b'), "llama3: line breaks");
    wt_tokenizer_destroy(t);
}

static void sentencepiece(const char *label, wt_tokenizer *t)
{
    if (!t) return;
    CHECK(wt_tokenizer_kind_of(t) == WT_TOKENIZER_SPM && wt_tokenizer_bos(t) == 1 && wt_tokenizer_eos(t) == 2 &&
              wt_tokenizer_adds_bos(t),
          "%s: kind, BOS, EOS", label);
    CHECK(wt_tokenizer_is_end(t, 2) && !wt_tokenizer_is_end(t, 1) && !wt_tokenizer_is_end(t, 277) &&
              !wt_tokenizer_is_end(t, -1),
          "%s: </s> ends a generation, <s> and ▁the do not", label);
    /* "the" -> ▁ t h e: ▁t, then ▁th, then ▁the (277), by rank and by score alike. */
    ids_are(t, "the", WT_TOKENIZE_ADD_BOS, IDS(1, 277), label);
    /* "there": ▁the, r, e ("e r" loses its e to ▁the first). */
    ids_are(t, "there", 0, IDS(277, 269, 264), label);
    /* "x" has no piece: ▁ then the byte token <0x78> (3 + 0x78). */
    ids_are(t, "x", 0, IDS(259, 3 + 0x78), label);
    /* " the" -> ▁ ▁ t h e: ▁t (rank 0, score 0) goes before ▁▁ (rank 6),
     * so the first ▁ stays alone: ▁, ▁the. */
    ids_are(t, " the", 0, IDS(259, 277), label);
    ids_are(t, "the", WT_TOKENIZE_NO_PREFIX_SPACE | WT_TOKENIZE_ADD_EOS, IDS(274, 264, 2), label);
    /* <s> in the text: a control token only with WT_TOKENIZE_SPECIAL. */
    ids_are(t, "<s>", WT_TOKENIZE_SPECIAL, IDS(1), label);
    /* Streaming: 🦙 is ▁ and four byte tokens; nothing comes out until
     * the fourth, and the dummy space is stripped. */
    int32_t ids[16];
    size_t n = 0;
    CHECK(wt_tokenizer_encode(t, "\xF0\x9F\xA6\x99", 4, 0, ids, 16, &n) == WT_OK && n == 5, "%s: 🦙 -> 5 ids", label);
    wt_detokenizer *d = NULL;
    if (!CHECK(wt_detokenizer_create(t, WT_DETOKENIZE_STRIP_PREFIX_SPACE, &d) == WT_OK, "detokenizer")) return;
    const char *s;
    size_t k;
    for (size_t i = 0; i + 1 < n; i++)
        CHECK(wt_detokenizer_push(d, ids[i], &s, &k) == WT_OK && k == 0, "%s: piece %zu held (%zu bytes out)", label, i, k);
    CHECK(wt_detokenizer_push(d, ids[n - 1], &s, &k) == WT_OK && k == 4 && memcmp(s, "\xF0\x9F\xA6\x99", 4) == 0,
          "%s: the llama comes out whole", label);
    /* A lone continuation byte: U+FFFD at once; a lead byte left at the
     * end: U+FFFD at flush. */
    CHECK(wt_detokenizer_push(d, 3 + 0x80, &s, &k) == WT_OK && k == 3 && memcmp(s, "\xEF\xBF\xBD", 3) == 0,
          "%s: a lone continuation byte", label);
    CHECK(wt_detokenizer_push(d, 3 + 0xE2, &s, &k) == WT_OK && k == 0, "%s: a lead byte held", label);
    CHECK(wt_detokenizer_push(d, 3 + 0x41, &s, &k) == WT_OK && k == 4 && memcmp(s, "\xEF\xBF\xBD" "A", 4) == 0,
          "%s: a lead byte broken by A", label);
    CHECK(wt_detokenizer_push(d, 3 + 0xF0, &s, &k) == WT_OK && k == 0 && wt_detokenizer_flush(d, &s, &k) == WT_OK &&
              k == 3 && memcmp(s, "\xEF\xBF\xBD", 3) == 0,
          "%s: an incomplete sequence at flush", label);
    CHECK(wt_detokenizer_push(d, 1, &s, &k) == WT_ERR_INVALID_ARGUMENT || (k == 3 && memcmp(s, "<s>", 3) == 0),
          "%s: a control token without SKIP_SPECIAL is its text", label);
    CHECK(wt_detokenizer_push(d, -1, &s, &k) == WT_ERR_INVALID_ARGUMENT && s == NULL, "%s: push -1 refused", label);
    wt_detokenizer_destroy(d);
    char text[64];
    size_t len = 0;
    const int32_t with_bos[3] = {1, 277, 3 + 0x0A};
    CHECK(wt_tokenizer_decode(t, with_bos, 3, WT_DETOKENIZE_SKIP_SPECIAL | WT_DETOKENIZE_STRIP_PREFIX_SPACE, text,
                              sizeof text, &len) == WT_OK && strcmp(text, "the\n") == 0,
          "%s: decode skips BOS, strips the dummy space: '%s'", label, text);
    wt_tokenizer_destroy(t);
}

/* A GGUF file with only the given tokenizer keys, and what loading it gives. */
static wt_status gguf_with(const char *path, const char *model, int n_scores, int bos, const char *merge)
{
    static const wt_gguf_value toks[3] = {{.type = WT_GGUF_STRING, .str = "a", .str_len = 1},
                                          {.type = WT_GGUF_STRING, .str = "b", .str_len = 1},
                                          {.type = WT_GGUF_STRING, .str = "ab", .str_len = 2}};
    static const float scores[3] = {0, 0, -1};
    const wt_gguf_value merges[1] = {{.type = WT_GGUF_STRING, .str = merge, .str_len = merge ? strlen(merge) : 0}};
    wt_gguf_writer *w = NULL;
    wt_status st = wt_gguf_writer_create(&w);
    if (st) return st;
    const wt_gguf_value tv = {.type = WT_GGUF_ARRAY, .elem_type = WT_GGUF_STRING, .count = 3, .items = toks};
    const wt_gguf_value sv = {.type = WT_GGUF_ARRAY, .elem_type = WT_GGUF_F32, .count = (uint64_t)n_scores, .elems = scores};
    const wt_gguf_value mv = {.type = WT_GGUF_ARRAY, .elem_type = WT_GGUF_STRING, .count = 1, .items = merges};
    if (model) wt_gguf_writer_set_string(w, "tokenizer.ggml.model", model);
    wt_gguf_writer_set(w, "tokenizer.ggml.tokens", &tv);
    if (n_scores >= 0) wt_gguf_writer_set(w, "tokenizer.ggml.scores", &sv);
    if (merge) wt_gguf_writer_set(w, "tokenizer.ggml.merges", &mv);
    if (bos >= 0) wt_gguf_writer_set_u32(w, "tokenizer.ggml.bos_token_id", (uint32_t)bos);
    st = wt_gguf_writer_save(w, path);
    wt_gguf_writer_destroy(w);
    if (st) return st;
    wt_gguf *g = NULL;
    if ((st = wt_gguf_open(path, &g))) return st;
    wt_tokenizer *t = (wt_tokenizer *)(uintptr_t)1;
    st = wt_tokenizer_from_gguf(g, &t);
    wt_gguf_close(g);
    if (st) {
        CHECK(t == NULL && wt_last_error()[0], "a failed load leaves NULL and a message");
    } else {
        wt_tokenizer_destroy(t);
    }
    return st;
}

static void malformed(const char *dir)
{
    char path[512];
    snprintf(path, sizeof path, "%s/t.gguf", dir);
    CHECK(gguf_with(path, "llama", 3, 1, NULL) == WT_OK, "a minimal SPM vocabulary loads: %s", wt_last_error());
    CHECK(gguf_with(path, NULL, 3, 1, NULL) == WT_ERR_NOT_FOUND, "no tokenizer.ggml.model");
    CHECK(gguf_with(path, "bert", 3, 1, NULL) == WT_ERR_UNSUPPORTED, "model bert");
    CHECK(gguf_with(path, "llama", 2, 1, NULL) == WT_ERR_INVALID_ARGUMENT, "2 scores for 3 tokens");
    CHECK(gguf_with(path, "llama", -1, 1, NULL) == WT_ERR_NOT_FOUND, "SPM without scores");
    CHECK(gguf_with(path, "llama", 3, 3, NULL) == WT_ERR_INVALID_ARGUMENT, "BOS id past the vocabulary");
    /* Byte-level: a vocabulary without the 256 byte characters. */
    CHECK(gguf_with(path, "gpt2", -1, -1, "a b") == WT_ERR_INVALID_ARGUMENT, "gpt2 without byte characters");
    struct { const char *json; wt_status want; const char *what; } cases[] = {
        {"{\"model\":{\"type\":\"BPE\",\"byte_fallback\":true,\"vocab\":{\"a\":0,\"b\":1,\"ab\":2},\"merges\":[\"a b\"]}}", WT_OK, "minimal SPM"},
        {"{\"model\":{\"type\":\"BPE\",\"byte_fallback\":true,\"vocab\":{\"a\":0,\"b\":1},\"merges\":[\"a b\"]}}", WT_ERR_INVALID_ARGUMENT, "a merge making a missing piece"},
        {"{\"model\":{\"type\":\"BPE\",\"byte_fallback\":true,\"vocab\":{\"a\":0,\"b\":1},\"merges\":[\"a c\"]}}", WT_ERR_INVALID_ARGUMENT, "a merge of a missing piece"},
        {"{\"model\":{\"type\":\"BPE\",\"byte_fallback\":true,\"vocab\":{\"a\":0,\"b\":1},\"merges\":[\"ab\"]}}", WT_ERR_INVALID_ARGUMENT, "a merge without a space"},
        {"{\"model\":{\"type\":\"BPE\",\"byte_fallback\":true,\"vocab\":{\"a\":0,\"b\":0},\"merges\":[]}}", WT_ERR_INVALID_ARGUMENT, "one id for two texts"},
        {"{\"model\":{\"type\":\"BPE\",\"byte_fallback\":true,\"vocab\":{\"a\":-1},\"merges\":[]}}", WT_ERR_INVALID_ARGUMENT, "a negative id"},
        {"{\"model\":{\"type\":\"BPE\",\"byte_fallback\":true,\"vocab\":{\"a\":0.5},\"merges\":[]}}", WT_ERR_INVALID_ARGUMENT, "a fractional id"},
        {"{\"model\":{\"type\":\"BPE\",\"byte_fallback\":true,\"vocab\":{\"a\":1e30},\"merges\":[]}}", WT_ERR_INVALID_ARGUMENT, "a huge id"},
        {"{\"model\":{\"type\":\"BPE\",\"byte_fallback\":true,\"vocab\":{\"a\":0,\"b\":65537},\"merges\":[]}}", WT_OK, "ids with holes, within the margin"},
        {"{\"model\":{\"type\":\"BPE\",\"byte_fallback\":true,\"vocab\":{\"a\":0,\"b\":65540},\"merges\":[]}}", WT_ERR_INVALID_ARGUMENT, "an id past twice the named tokens plus 65536"},
        {"{\"model\":{\"type\":\"BPE\",\"byte_fallback\":true,\"vocab\":{\"a\":0},\"merges\":[]},\"added_tokens\":[{\"id\":270000000,\"content\":\"<x>\"}]}", WT_ERR_INVALID_ARGUMENT, "an added token with a huge id"},
        {"{\"model\":{\"type\":\"Unigram\",\"vocab\":[]}}", WT_ERR_UNSUPPORTED, "a Unigram model"},
        {"{\"model\":{\"type\":\"BPE\",\"vocab\":{\"a\":0},\"merges\":[]},\"pre_tokenizer\":{\"type\":\"Split\",\"pattern\":{\"Regex\":\"\\\\w+\"}}}", WT_ERR_UNSUPPORTED, "an unknown Split pattern"},
        {"{\"model\":{\"type\":\"BPE\",\"vocab\":{\"a\":0},\"merges\":[]}}", WT_ERR_UNSUPPORTED, "byte-level without a ByteLevel pre-tokenizer"},
        {"{\"model\":{\"type\":\"BPE\",\"byte_fallback\":true,\"vocab\":{\"a\":0},\"merges\":[]", WT_ERR_INVALID_ARGUMENT, "truncated JSON"},
        {"{\"a\":\"\\ud800\"}", WT_ERR_INVALID_ARGUMENT, "a lone surrogate escape"},
        {"{\"a\":\"\xC3\"}", WT_ERR_INVALID_ARGUMENT, "ill-formed UTF-8 in a string"},
        {"{\"a\":1,\"a\":2}", WT_ERR_INVALID_ARGUMENT, "a duplicate key"},
        {"[]", WT_ERR_INVALID_ARGUMENT, "not an object"},
        {"{} x", WT_ERR_INVALID_ARGUMENT, "text after the document"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        wt_tokenizer *t = (wt_tokenizer *)(uintptr_t)1;
        const wt_status st = wt_tokenizer_from_json_memory(cases[i].json, strlen(cases[i].json), &t);
        CHECK(st == cases[i].want && (st == WT_OK ? t != NULL : t == NULL && wt_last_error()[0]),
              "json %s: status %d, want %d (%s)", cases[i].what, st, cases[i].want, st ? wt_last_error() : "");
        if (st == WT_OK) wt_tokenizer_destroy(t);
    }
    /* Nesting past the limit. */
    char deep[300];
    memset(deep, '[', 150);
    memset(deep + 150, ']', 150);
    wt_tokenizer *t = NULL;
    CHECK(wt_tokenizer_from_json_memory(deep, 300, &t) == WT_ERR_INVALID_ARGUMENT && !t, "JSON nested 150 deep");
    CHECK(wt_tokenizer_load_json("/nonexistent/tokenizer.json", &t) == WT_ERR_IO && !t, "a missing file is WT_ERR_IO");
}

int main(void)
{
    char dir[] = "/tmp/wt_tokenizer_XXXXXX";
    if (!mkdtemp(dir)) return 2;
    byte_level();
    char *json = vocab_spm_json();
    sentencepiece("spm tokenizer.json", from_json_text(json));
    free(json);
    char path[512];
    snprintf(path, sizeof path, "%s/spm.gguf", dir);
    wt_gguf *g = NULL;
    wt_tokenizer *t = NULL;
    if (CHECK(vocab_spm_gguf(path) == WT_OK && wt_gguf_open(path, &g) == WT_OK && wt_tokenizer_from_gguf(g, &t) == WT_OK,
              "spm gguf: %s", wt_last_error()))
        sentencepiece("spm gguf (scores)", t);
    wt_gguf_close(g);
    malformed(dir);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    return test_summary("tokenizer");
}
