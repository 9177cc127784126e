/*
 * webtensor tokenizers: text to token ids and back, with the vocabularies
 * that come with model files (GGUF metadata, Hugging Face tokenizer.json).
 *
 * Same conventions as webtensor.h: every call that can fail returns a
 * wt_status, wt_last_error() explains a failure, object out-pointers are
 * NULL on failure, nothing leaks, nothing aborts. A malformed vocabulary is
 * WT_ERR_INVALID_ARGUMENT naming what is wrong; a tokenizer kind or
 * pre-tokenizer this library does not implement is WT_ERR_UNSUPPORTED
 * naming it. A tokenizer is immutable once made: any number of threads may
 * encode and decode with it at once.
 *
 * Two kinds of tokenizers:
 *
 *  WT_TOKENIZER_SPM: SentencePiece-style BPE (Llama 1 and 2, Mistral v1,
 *    Gemma). The text's spaces become U+2581 "▁", one "▁" goes in front
 *    (the dummy prefix), the text is split into characters, and adjacent
 *    pieces are merged while their concatenation is in the vocabulary:
 *    from GGUF (tokenizer.ggml.model "llama") the merge whose result has
 *    the highest score first; from tokenizer.json (a BPE model with
 *    byte_fallback) the pair listed first in the merges. Ties go to the
 *    leftmost pair. A character left without a token becomes its UTF-8
 *    bytes as the byte tokens <0xNN>. A "▁" written in the text is a
 *    space to SentencePiece too: it decodes as " ".
 *
 *  WT_TOKENIZER_BPE: byte-level BPE (GPT-2, Llama 3, Qwen 2). The text is
 *    split by the pre-tokenizer pattern into words; each word's bytes map
 *    to printable characters (GPT-2's byte-to-unicode table: a space is
 *    "Ġ"), and adjacent pieces merge by the rank of their pair in the
 *    merges list, lowest first, ties leftmost. Llama 3's vocabulary takes a
 *    word that is itself a token whole, before any merge (ignore_merges).
 *    Pre-tokenizers, by GGUF tokenizer.ggml.pre or by the pattern of a
 *    tokenizer.json Split: "gpt2" or "default" (GPT-2's pattern; also when
 *    the key is missing), "llama-bpe", "llama3", "llama-v3" (Llama 3's,
 *    with ignore_merges), "smaug-bpe" (Llama 3's pattern alone), "qwen2"
 *    (Qwen 2's: Llama 3's with single digits). The patterns
 *    are implemented by hand; \p{L} and \p{N} are the Unicode general
 *    categories L and N (the tables' Unicode version is
 *    wt_tokenizer_unicode_version()), \s the White_Space property, and the
 *    contractions 's 't 're 've 'm 'll 'd match in ASCII case only.
 *
 * Text is UTF-8. Ill-formed UTF-8 in the input is replaced, before
 * anything else, by U+FFFD for each maximal subpart (what Python's
 * bytes.decode(errors="replace") and a WHATWG TextDecoder do), so an
 * ill-formed input encodes as its replaced text does.
 *
 * A generation loop, text in and text out:
 *
 *   wt_tokenizer *tok;   wt_tokenizer_from_gguf(gguf, &tok)   (or _load_json)
 *   size_t cap = WT_TOKENIZE_MAX_IDS(strlen(prompt)), n;
 *   int32_t *ids = malloc(cap * sizeof *ids);
 *   wt_tokenizer_encode(tok, prompt, strlen(prompt),
 *                       wt_tokenizer_adds_bos(tok) ? WT_TOKENIZE_ADD_BOS : 0, ids, cap, &n);
 *   ... prefill ids[0..n) ...
 *   wt_detokenizer *d;   wt_detokenizer_create(tok, WT_DETOKENIZE_SKIP_SPECIAL, &d);
 *   for each sampled id:  if (wt_tokenizer_is_end(tok, id)) break;
 *                         wt_detokenizer_push(d, id, &text, &len); fwrite(text, 1, len, stdout);
 *   wt_detokenizer_flush(d, &text, &len); fwrite(text, 1, len, stdout);
 *
 * (The prompt's own dummy space stays with the prompt: the generated text
 * continues it, so WT_DETOKENIZE_STRIP_PREFIX_SPACE is for decoding a
 * whole text from its start.)
 *
 * Special tokens: the tokens of type control (BOS, EOS, <|eot_id|> ...) and
 * unknown are matched in the text only with WT_TOKENIZE_SPECIAL; tokens of
 * type user-defined (a tokenizer.json's added tokens that are not special)
 * always are. Longest match first.
 */
#ifndef WEBTENSOR_TOKENIZER_H
#define WEBTENSOR_TOKENIZER_H

#include "webtensor_io.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct wt_tokenizer wt_tokenizer;

typedef enum wt_tokenizer_kind {
    WT_TOKENIZER_SPM = 1, /* SentencePiece-style BPE with byte fallback */
    WT_TOKENIZER_BPE = 2  /* byte-level BPE with a pre-tokenizer */
} wt_tokenizer_kind;

/* Token types, the numbers of GGUF's tokenizer.ggml.token_type. */
typedef enum wt_token_type {
    WT_TOKEN_NORMAL = 1, WT_TOKEN_UNKNOWN = 2, WT_TOKEN_CONTROL = 3, WT_TOKEN_USER_DEFINED = 4,
    WT_TOKEN_UNUSED = 5, WT_TOKEN_BYTE = 6
} wt_token_type;

/* From GGUF metadata: tokenizer.ggml.model ("llama" -> SPM, "gpt2" -> BPE),
 * .tokens, .scores (SPM: required), .token_type (optional: by default the
 * byte tokens of an SPM vocabulary are BYTE and the BOS, EOS, UNK ids
 * CONTROL / UNKNOWN), .merges (BPE: required), .pre (BPE: default "gpt2"),
 * .bos_token_id, .eos_token_id, .unknown_token_id, .add_bos_token,
 * .add_eos_token. The tokenizer copies what it needs: f may be closed. */
WT_API wt_status wt_tokenizer_from_gguf(const wt_gguf *f, wt_tokenizer **out);
/* From a Hugging Face tokenizer.json: model.type "BPE" with vocab and
 * merges (strings "a b" or pairs ["a", "b"]); byte_fallback true -> SPM
 * (the normalizer's Prepend/Replace of "▁" are what SPM does), otherwise a
 * ByteLevel pre-tokenizer (alone, or after a Split by one of the patterns
 * above) -> BPE; model.ignore_merges; added_tokens (special -> CONTROL,
 * else USER_DEFINED); BOS and EOS from the post_processor's template
 * (TemplateProcessing) when there is one, else the added tokens named
 * <s> </s>, <|begin_of_text|> <|end_of_text|>, <|endoftext|>. The
 * normalizer is not run: SPM's Prepend("▁") and Replace(" ", "▁") are what
 * SPM does anyway, and Qwen 2's NFC leaves text already in NFC (nearly all
 * text) as it is; text in another form is tokenized as written. A
 * Metaspace pre-tokenizer is taken as SPM's dummy prefix in front of the
 * text and after each special token. */
WT_API wt_status wt_tokenizer_load_json(const char *path, wt_tokenizer **out);
WT_API wt_status wt_tokenizer_from_json_memory(const void *data, size_t size, wt_tokenizer **out);
WT_API void wt_tokenizer_destroy(wt_tokenizer *t); /* NULL is ignored */

WT_API wt_tokenizer_kind wt_tokenizer_kind_of(const wt_tokenizer *t); /* 0 for NULL */
WT_API int32_t wt_tokenizer_vocab_size(const wt_tokenizer *t);         /* 0 for NULL */
/* BOS and EOS ids, -1 when the vocabulary has none (or t is NULL). */
WT_API int32_t wt_tokenizer_bos(const wt_tokenizer *t);
WT_API int32_t wt_tokenizer_eos(const wt_tokenizer *t);
/* Whether id ends a generation: EOS, GGUF's tokenizer.ggml.eot_token_id
 * and .eom_token_id, and the control tokens chat models end a turn with
 * (<|eot_id|>, <|eom_id|>, <|im_end|>, <|end|>, <|endoftext|>,
 * <end_of_turn>, <|end_of_text|>). false for NULL or another id. */
WT_API bool wt_tokenizer_is_end(const wt_tokenizer *t, int32_t id);
/* Whether the model expects BOS in front of a prompt (GGUF
 * tokenizer.ggml.add_bos_token, a tokenizer.json template that adds it;
 * SPM's default true, BPE's false). */
WT_API bool wt_tokenizer_adds_bos(const wt_tokenizer *t);
/* The Unicode version of the letter and number tables. */
WT_API const char *wt_tokenizer_unicode_version(void);

/* A token's text as the vocabulary stores it ("▁the", "Ġthe", "<0x0A>"),
 * valid until destroy, and its type. Either out-pointer may be NULL. */
WT_API wt_status wt_tokenizer_token(const wt_tokenizer *t, int32_t id, const char **text, size_t *len,
                                    wt_token_type *type);
/* The id of the token whose vocabulary text is text[0..len);
 * WT_ERR_NOT_FOUND (and *id -1) if there is none. */
WT_API wt_status wt_tokenizer_find(const wt_tokenizer *t, const char *text, size_t len, int32_t *id);

/* Flags of wt_tokenizer_encode. */
#define WT_TOKENIZE_ADD_BOS 1u /* BOS first (an error if there is none) */
#define WT_TOKENIZE_ADD_EOS 2u /* EOS last (an error if there is none) */
#define WT_TOKENIZE_SPECIAL 4u /* match control tokens written in the text */
/* SPM only: no dummy "▁" in front (for a text that continues another). */
#define WT_TOKENIZE_NO_PREFIX_SPACE 8u
/* Ids never exceed this many for len bytes of text: */
#define WT_TOKENIZE_MAX_IDS(len) ((len) * 3 + 3)

/* Encodes text[0..len) into ids[0..capacity). On success *n_ids is the
 * count. A capacity too small is WT_ERR_INVALID_ARGUMENT with *n_ids the
 * count needed (WT_TOKENIZE_MAX_IDS(len) always suffices: ill-formed bytes
 * become U+FFFD, three bytes each). text may be NULL when len is 0. */
WT_API wt_status wt_tokenizer_encode(const wt_tokenizer *t, const char *text, size_t len, unsigned flags,
                                     int32_t *ids, size_t capacity, size_t *n_ids);

/* Flags of wt_tokenizer_decode and wt_detokenizer_create. */
#define WT_DETOKENIZE_SKIP_SPECIAL 1u /* drop control, unknown and unused tokens */
/* SPM: drop the space that the encoder's dummy "▁" put in front of the
 * first piece (what SentencePiece's decode does). */
#define WT_DETOKENIZE_STRIP_PREFIX_SPACE 2u

/* The bytes token id stands for: "▁" as a space, a byte token (SPM's
 * <0xNN>, BPE's mapped characters) as its byte, a control token as its
 * text. Written into buf[0..capacity); *len the count; a capacity too
 * small is WT_ERR_INVALID_ARGUMENT with *len the count needed. The bytes
 * may be part of a UTF-8 sequence: the streaming decoder joins them. */
WT_API wt_status wt_tokenizer_token_bytes(const wt_tokenizer *t, int32_t id, char *buf, size_t capacity,
                                          size_t *len);
/* Decodes ids[0..n) into text[0..capacity) as bytes, NUL-terminated: the
 * tokens' bytes joined, ill-formed sequences kept as they are (so decoding
 * encode's ids gives the text back, spaces and all, except for ill-formed
 * input replaced by U+FFFD). *len excludes the NUL; a capacity that cannot
 * hold the bytes and the NUL is WT_ERR_INVALID_ARGUMENT with *len the count
 * needed (without the NUL). An id outside the vocabulary is an error. */
WT_API wt_status wt_tokenizer_decode(const wt_tokenizer *t, const int32_t *ids, size_t n, unsigned flags,
                                     char *text, size_t capacity, size_t *len);

/* Streaming decode for generation: push one id at a time and get the text
 * that is complete so far, always well-formed UTF-8. A token that ends
 * inside a UTF-8 sequence (a byte token of an emoji) is held until the
 * sequence completes; a sequence that cannot complete comes out as U+FFFD
 * (each maximal subpart), as does one left at wt_detokenizer_flush. */
typedef struct wt_detokenizer wt_detokenizer;
/* flags: WT_DETOKENIZE_*; t must outlive the decoder. */
WT_API wt_status wt_detokenizer_create(const wt_tokenizer *t, unsigned flags, wt_detokenizer **out);
WT_API void wt_detokenizer_destroy(wt_detokenizer *d); /* NULL is ignored */
/* Adds one id; *text (valid until the next call on d) and *len are the
 * newly completed text, possibly empty. */
WT_API wt_status wt_detokenizer_push(wt_detokenizer *d, int32_t id, const char **text, size_t *len);
/* Ends the stream: the held bytes as U+FFFD; the decoder starts over
 * (the next push is the first of a new text). */
WT_API wt_status wt_detokenizer_flush(wt_detokenizer *d, const char **text, size_t *len);

#ifdef __cplusplus
}
#endif
#endif /* WEBTENSOR_TOKENIZER_H */
