/* Small vocabularies for the tokenizer fuzz targets and tests: tokenizer.json
 * texts of a byte-level BPE (any of the three patterns, with a special and
 * a user-defined added token) and of a SentencePiece-style BPE with byte
 * fallback, each with a few merges, and a GGUF file of the latter with
 * scores (merges by score). */
#ifndef WT_TOKENIZER_VOCAB_H
#define WT_TOKENIZER_VOCAB_H

#include "webtensor_tokenizer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct vocab_text {
    char *s;
    size_t n, cap;
} vocab_text;

#if defined(__GNUC__)
#define VOCAB_UNUSED __attribute__((unused))
#else
#define VOCAB_UNUSED
#endif

static void vt_put(vocab_text *t, const char *s, size_t n)
{
    if (t->n + n + 1 > t->cap) {
        t->cap = (t->n + n + 1) * 2;
        char *p = realloc(t->s, t->cap);
        if (!p) abort();
        t->s = p;
    }
    memcpy(t->s + t->n, s, n);
    t->n += n;
    t->s[t->n] = 0;
}
static void vt_str(vocab_text *t, const char *s) { vt_put(t, s, strlen(s)); }
/* A JSON string of n bytes. */
static void vt_json(vocab_text *t, const char *s, size_t n)
{
    vt_str(t, "\"");
    for (size_t i = 0; i < n; i++) {
        const unsigned char c = (unsigned char)s[i];
        char esc[8];
        if (c == '"' || c == '\\') {
            esc[0] = '\\';
            esc[1] = (char)c;
            vt_put(t, esc, 2);
        } else if (c < 0x20) {
            snprintf(esc, sizeof esc, "\\u%04x", c);
            vt_str(t, esc);
        } else {
            vt_put(t, (const char *)&c, 1);
        }
    }
    vt_str(t, "\"");
}

static const char *const vocab_bpe_patterns[3] = {
    "'s|'t|'re|'ve|'m|'ll|'d| ?\\\\p{L}+| ?\\\\p{N}+| ?[^\\\\s\\\\p{L}\\\\p{N}]+|\\\\s+(?!\\\\S)|\\\\s+",
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\\\r\\\\n\\\\p{L}\\\\p{N}]?\\\\p{L}+|\\\\p{N}{1,3}| ?[^\\\\s\\\\p{L}\\\\p{N}]+[\\\\r\\\\n]*|\\\\s*[\\\\r\\\\n]+|\\\\s+(?!\\\\S)|\\\\s+",
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\\\r\\\\n\\\\p{L}\\\\p{N}]?\\\\p{L}+|\\\\p{N}| ?[^\\\\s\\\\p{L}\\\\p{N}]+[\\\\r\\\\n]*|\\\\s*[\\\\r\\\\n]+|\\\\s+(?!\\\\S)|\\\\s+",
};

/* Byte-level BPE: the 256 byte characters (ids 0..255), merged pieces,
 * <|eot|> (special) and <tool> (user-defined). pattern: 0 gpt2, 1 llama3,
 * 2 qwen2. */
VOCAB_UNUSED static char *vocab_bpe_json(int pattern, int ignore_merges)
{
    vocab_text t = {0};
    vt_str(&t, "{\"model\":{\"type\":\"BPE\",\"ignore_merges\":");
    vt_str(&t, ignore_merges ? "true" : "false");
    vt_str(&t, ",\"vocab\":{");
    unsigned n = 0;
    for (unsigned b = 0; b < 256; b++) {
        const int printable = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE);
        const unsigned cp = printable ? b : 0x100 + n++;
        char u[4];
        size_t k = 0;
        if (cp < 0x80) u[k++] = (char)cp;
        else {
            u[k++] = (char)(0xC0 | cp >> 6);
            u[k++] = (char)(0x80 | (cp & 0x3F));
        }
        char num[16];
        vt_json(&t, u, k);
        snprintf(num, sizeof num, ":%u,", b);
        vt_str(&t, num);
    }
    static const char *const pieces[] = {"Ġt", "he", "Ġthe", "in", "Ġa", "er", "on", "12", "Ġth", "ĠĠ", "ĠĠĠĠ"};
    static const char *const merges[] = {"Ġ t", "h e", "Ġt he", "i n", "Ġ a", "e r", "o n", "1 2", "Ġt h", "Ġ Ġ", "ĠĠ ĠĠ"};
    const size_t np = sizeof pieces / sizeof *pieces;
    for (size_t i = 0; i < np; i++) {
        char num[16];
        vt_json(&t, pieces[i], strlen(pieces[i]));
        snprintf(num, sizeof num, ":%zu%s", 256 + i, i + 1 < np ? "," : "");
        vt_str(&t, num);
    }
    vt_str(&t, "},\"merges\":[");
    for (size_t i = 0; i < np; i++) {
        vt_json(&t, merges[i], strlen(merges[i]));
        if (i + 1 < np) vt_str(&t, ",");
    }
    char tail[160];
    snprintf(tail, sizeof tail,
             "]},\"added_tokens\":[{\"id\":%zu,\"content\":\"<|eot|>\",\"special\":true},"
             "{\"id\":%zu,\"content\":\"<tool>\",\"special\":false}],",
             256 + np, 257 + np);
    vt_str(&t, tail);
    vt_str(&t, "\"pre_tokenizer\":{\"type\":\"Sequence\",\"pretokenizers\":[{\"type\":\"Split\",\"pattern\":{\"Regex\":\"");
    vt_str(&t, vocab_bpe_patterns[pattern]);
    vt_str(&t, "\"},\"behavior\":\"Isolated\",\"invert\":false},{\"type\":\"ByteLevel\",\"add_prefix_space\":false,"
               "\"use_regex\":false}]}}");
    return t.s;
}

static const char *const vocab_spm_pieces[] = {"▁", "a", "b", "c", "d", "e", "h", "i", "n", "o", "r", "s", "t",
                                               "é", "▁t", "th", "▁th", "he", "▁the", "in", "▁▁", "er"};
static const char *const vocab_spm_merges[] = {"▁ t", "t h", "▁t h", "h e", "▁th e", "i n", "▁ ▁", "e r"};
#define VOCAB_SPM_NPIECES (sizeof vocab_spm_pieces / sizeof *vocab_spm_pieces)
#define VOCAB_SPM_NMERGES (sizeof vocab_spm_merges / sizeof *vocab_spm_merges)

/* SentencePiece-style: <unk> <s> </s>, the 256 byte tokens, then pieces. */
VOCAB_UNUSED static char *vocab_spm_json(void)
{
    vocab_text t = {0};
    vt_str(&t, "{\"model\":{\"type\":\"BPE\",\"byte_fallback\":true,\"unk_token\":\"<unk>\",\"vocab\":{"
               "\"<unk>\":0,\"<s>\":1,\"</s>\":2,");
    for (unsigned b = 0; b < 256; b++) {
        char s[32];
        snprintf(s, sizeof s, "\"<0x%02X>\":%u,", b, 3 + b);
        vt_str(&t, s);
    }
    for (size_t i = 0; i < VOCAB_SPM_NPIECES; i++) {
        char num[16];
        vt_json(&t, vocab_spm_pieces[i], strlen(vocab_spm_pieces[i]));
        snprintf(num, sizeof num, ":%zu%s", 259 + i, i + 1 < VOCAB_SPM_NPIECES ? "," : "");
        vt_str(&t, num);
    }
    vt_str(&t, "},\"merges\":[");
    for (size_t i = 0; i < VOCAB_SPM_NMERGES; i++) {
        vt_json(&t, vocab_spm_merges[i], strlen(vocab_spm_merges[i]));
        if (i + 1 < VOCAB_SPM_NMERGES) vt_str(&t, ",");
    }
    vt_str(&t, "]},\"added_tokens\":[{\"id\":0,\"content\":\"<unk>\",\"special\":true},"
               "{\"id\":1,\"content\":\"<s>\",\"special\":true},{\"id\":2,\"content\":\"</s>\",\"special\":true}],"
               "\"post_processor\":{\"type\":\"TemplateProcessing\",\"single\":[{\"SpecialToken\":{\"id\":\"<s>\","
               "\"type_id\":0}},{\"Sequence\":{\"id\":\"A\",\"type_id\":0}}]}}");
    return t.s;
}

/* The same SentencePiece vocabulary as GGUF metadata with scores (a
 * piece's score: minus the rank of the merge that makes it), written to
 * path. */
VOCAB_UNUSED static wt_status vocab_spm_gguf(const char *path)
{
    enum { N = 3 + 256 + (int)VOCAB_SPM_NPIECES };
    static char names[N][8];
    static wt_gguf_value items[N];
    static float scores[N];
    static int32_t types[N];
    for (int i = 0; i < N; i++) {
        const char *s;
        if (i < 3) s = i == 0 ? "<unk>" : i == 1 ? "<s>" : "</s>";
        else if (i < 259) {
            snprintf(names[i], sizeof names[i], "<0x%02X>", i - 3);
            s = names[i];
        } else s = vocab_spm_pieces[i - 259];
        items[i] = (wt_gguf_value){.type = WT_GGUF_STRING, .str = s, .str_len = strlen(s)};
        types[i] = i == 0 ? 2 : i < 3 ? 3 : i < 259 ? 6 : 1;
        scores[i] = -1000.0f;
        for (size_t m = 0; m < VOCAB_SPM_NMERGES; m++) {
            char joined[16] = {0};
            const char *sp = strchr(vocab_spm_merges[m], ' ');
            memcpy(joined, vocab_spm_merges[m], (size_t)(sp - vocab_spm_merges[m]));
            strcat(joined, sp + 1);
            if (i >= 259 && strcmp(joined, s) == 0) scores[i] = -(float)m;
        }
    }
    wt_gguf_writer *w = NULL;
    wt_status st = wt_gguf_writer_create(&w);
    if (st) return st;
    const wt_gguf_value tokens = {.type = WT_GGUF_ARRAY, .elem_type = WT_GGUF_STRING, .count = N, .items = items};
    const wt_gguf_value sc = {.type = WT_GGUF_ARRAY, .elem_type = WT_GGUF_F32, .count = N, .elems = scores};
    const wt_gguf_value ty = {.type = WT_GGUF_ARRAY, .elem_type = WT_GGUF_I32, .count = N, .elems = types};
    if (!st) st = wt_gguf_writer_set_string(w, "tokenizer.ggml.model", "llama");
    if (!st) st = wt_gguf_writer_set(w, "tokenizer.ggml.tokens", &tokens);
    if (!st) st = wt_gguf_writer_set(w, "tokenizer.ggml.scores", &sc);
    if (!st) st = wt_gguf_writer_set(w, "tokenizer.ggml.token_type", &ty);
    if (!st) st = wt_gguf_writer_set_u32(w, "tokenizer.ggml.bos_token_id", 1);
    if (!st) st = wt_gguf_writer_set_u32(w, "tokenizer.ggml.eos_token_id", 2);
    if (!st) st = wt_gguf_writer_set_u32(w, "tokenizer.ggml.unknown_token_id", 0);
    if (!st) st = wt_gguf_writer_save(w, path);
    wt_gguf_writer_destroy(w);
    return st;
}

/* The text with each maximal ill-formed UTF-8 subpart replaced by U+FFFD
 * (out: 3 * n bytes of room); what the tokenizers make of their input. */
VOCAB_UNUSED static size_t vocab_replace_ill_formed(const char *s, size_t n, char *out)
{
    size_t w = 0;
    for (size_t i = 0; i < n;) {
        const unsigned char b = (unsigned char)s[i];
        const int len = b < 0x80 ? 1 : b >= 0xC2 && b <= 0xDF ? 2 : b >= 0xE0 && b <= 0xEF ? 3 : b >= 0xF0 && b <= 0xF4 ? 4 : 0;
        size_t k = 1;
        int ok = len == 1;
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

#endif
