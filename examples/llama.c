/*
 * A Llama-architecture decoder on webtensor: token embedding, RMSNorm,
 * rotary position embedding (Hugging Face "rotate_half"), grouped-query
 * attention with a causal mask and a KV cache, SwiGLU MLP, final norm and
 * LM head; greedy decoding from a prompt of token ids.
 *
 *   llama --model DIR [--backend auto|cpu|webgpu|vulkan|gles] [--dtype f32|f16]
 *         [--prompt "1 15 42 ..."] [--prompt-len N] [--tokens 64]
 *         [--ref-logits FILE.npy] [--ref-tokens FILE] [--tol T] [--out-tokens FILE]
 *         [--decode graph|eager] [--profile N] [--prefill-runs N]
 *         [--text "..."] [--tokenizer FILE] [--temperature T] [--top-k K] [--top-p P] [--seed S]
 *         [--out-logits FILE.npy] [--out-step-logits FILE.npy] [--ref-step-logits FILE.npy] [--step-tol T]
 *
 * DIR is a Hugging Face checkpoint of the Llama family (llama_model.h says
 * which: tied embeddings, RoPE scaling, biases, BF16, shards, EOS ids), e.g.
 * as written by bench/llama_ref.py make or transformers' save_pretrained,
 * or a GGUF file (--model FILE.gguf; llama_gguf.h: F32 / F16 / BF16 and
 * Q8_0 / Q4_0 / Q4_K / Q6_K weights, the latter kept in blocks and run
 * quantised).
 * Every weight is loaded once onto the device in
 * --dtype and stays there; activations have that dtype too (f16 ops
 * accumulate in f32). The KV cache of each layer (f32) is allocated once,
 * [1, KV heads, prompt + tokens, head_dim]. The prompt runs in one pass
 * (prefill), writing its keys and values into a slice of the cache with
 * wt_copy_into and attending over that prefix (a view, never copied).
 * Then one token per step, every step the same shapes: the position, the
 * number of valid keys and the token's slot live in a small i32 tensor on
 * the device (rope's position, wt_copy_into_at's start, attention's
 * kv_length), written before each step. So the first decode step is
 * captured as a graph (webtensor.h, "captured graphs") and replayed for
 * every later token (--decode eager runs the same ops through their
 * front-ends instead). The chosen token never leaves the device between
 * steps: argmax writes it into the next step's input; the tokens are read
 * back 32 at a time.
 * After the first decode step every intermediate comes from the context's
 * pool, so live bytes, peak bytes, tensors and buffers stay constant; the
 * example checks this and fails if they move.
 *
 * Generation stops after an EOS id of the config (read back every few
 * steps; the steps past it are dropped).
 *
 * --text encodes a text prompt with the model's tokenizer (DIR's
 * tokenizer.json, a GGUF file's vocabulary, or --tokenizer FILE) and
 * prints the generated text as the tokens come back (the streaming
 * detokenizer holds a token that ends inside a UTF-8 character until it
 * completes); the tokenizer's end tokens (EOS, end of turn) stop
 * generation too.
 *
 * The next token is the argmax unless --temperature (> 0), --top-k (> 1)
 * or --top-p (< 1) ask for sampling (temperature 1 when only the cuts are
 * given): wt_sample inside the captured step, its random word from --seed
 * and the position of the sampled token, read on the device, so the same
 * seed gives the same tokens on every replay, eager or captured, and on
 * each backend (webtensor.h says when they can differ).
 *
 * Several prompts separated by ';' (each of the same length) are decoded
 * together: one forward pass per step for the whole batch, the KV caches
 * [batch, KV heads, ...], every sequence stopping at its own EOS id (the
 * batch runs until all have). --ref-logits and --ref-tokens then take one
 * file per prompt, separated by ';' ("-": none). --out-tokens writes each
 * sequence's tokens, one line per sequence.
 *
 * --prompt-len N replaces the prompt by N ids (i * 7919 + 1) % vocab, for
 * speed runs at a chosen prompt length. The prefill runs once untimed
 * (shader compilation), then --prefill-runs times (default 1) timed, each
 * writing the same keys and values into the cache again; the median and
 * the fastest run are printed.
 *
 * With --ref-logits (float32 [prompt_len, vocab], the prompt's logits from
 * the reference) and --ref-tokens (the greedy tokens, one line) it exits 1
 * unless max |a - b| / max |b| <= tol over the prompt's logits (default
 * 1e-3 for f32 weights; 2e-2 for f16 weights, where f16 rounding of the
 * weights and activations alone gives ~1e-3 on the tiny test model) and
 * every generated token equals the reference's.
 *
 * Paths whose rounding differs from the reference's (x rounded to 8 bits
 * in the quantised GEMV) may pick another token where two logits nearly
 * tie, and from there decode another text: a comparison of greedy tokens
 * then fails on a correct model. --out-step-logits writes the logits each
 * token was chosen from (float32 [tokens, vocab]: row 0 the prompt's last,
 * row i decode step i's; one prompt, greedy). A run given them
 * (--ref-step-logits, with --ref-tokens) decodes the reference's tokens
 * (each step's input is the reference's token, whatever it chose) and
 * checks every step against the reference's row b: max |a - b| <= E, E =
 * --step-tol times max |b| (default --tol), and its token equal to the
 * reference's wherever b's two largest logits lie more than 2E apart (no
 * change within E can swap them there); nearer, either token is right.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "webtensor.h"
#include "webtensor_io.h"
#include "webtensor_tokenizer.h"

#include "example_context.h"
#include "llama_gguf.h"
#include "llama_model.h"

#define MAX_PROMPT 4096
#define TOKEN_BATCH 32 /* generated tokens read back together */

/* A failure found by the example itself (wt_last_error() has the library's). */
static char example_error[256];

#define CK(call)                                  \
    do {                                          \
        if ((st = (call)) != WT_OK) goto done;    \
    } while (0)

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* ---------------------------------------------------------------- forward */

/* The forward pass makes its temporaries inside scopes (webtensor.h,
 * "scopes"): a function below returns its result in the caller's scope,
 * and an early return on failure leaks nothing. */
#define TRY(call)                                 \
    do {                                          \
        wt_status st_ = (call);                   \
        if (st_ != WT_OK) return st_;             \
    } while (0)

/* Where a forward pass writes and reads the KV cache. Eager: the host's
 * start (positions start .., the cache's first start + S rows read as a
 * view). Captured (pos set): S = 1 and the position lives on the device,
 * in pos (i32 [1]) and len = pos + 1, which the driver writes before each
 * replay; the cache is read whole, kv_length keys of it valid. */
typedef struct step_at {
    int64_t start;
    const wt_tensor *pos, *len;
} step_at;

/* The options of a linear layer with the RMSNorm of weight norm (NULL:
 * none) before it. */
static wt_linear_fused_options fused_opts(const llama *m, const wt_tensor *norm)
{
    wt_linear_fused_options o;
    wt_linear_fused_options_init(&o);
    o.rms_norm = norm != NULL;
    o.norm_weight = norm;
    o.norm_eps = m->c.eps;
    return o;
}

/* q, k and v of x: one product, or one a run of parts of one type (a
 * GGUF file that mixes them: llama_model.h) and their rows joined: a
 * decode step's runs write into neighbouring views of ly->qkv_step, a
 * prompt's are concatenated. */
static wt_status qkv_product(const llama *m, const llama_layer *ly, const wt_tensor *x,
                             const wt_linear_fused_options *o, wt_tensor **out)
{
    if (ly->n_qkv_runs == 0) return llama_linear_fused(m, x, ly->qkv, ly->qkv_bias, o, out);
    const bool in_place = ly->qkv_step && wt_tensor_shape(x)[0] == 1;
    wt_tensor *ys[3];
    int64_t row = 0;
    for (int i = 0; i < ly->n_qkv_runs; i++) {
        const int64_t rows = wt_tensor_shape(ly->qkv_runs[i])[0];
        wt_tensor *bias = NULL;
        if (ly->qkv_bias) TRY(wt_slice(ly->qkv_bias, 0, row, row + rows, 1, &bias));
        wt_linear_fused_options oi = *o;
        if (in_place) TRY(wt_slice(ly->qkv_step, 1, row, row + rows, 1, &oi.into));
        TRY(llama_linear_fused(m, x, ly->qkv_runs[i], bias, &oi, &ys[i]));
        row += rows;
    }
    if (in_place) return wt_reshape(ly->qkv_step, 2, wt_tensor_shape(ly->qkv_step), out); /* a handle of it */
    return wt_concat(ly->n_qkv_runs, ys, -1, out);
}

/* out = x + o_proj(attention(input_layernorm(x))), writing this step's
 * keys and values into the cache at positions start .. start + S - 1. */
static wt_status attention(const llama *m, const llama_layer *ly, const wt_tensor *x, const step_at *at,
                           wt_tensor **out)
{
    const llama_config *c = &m->c;
    const int64_t S = wt_tensor_shape(x)[0] / m->batch;
    wt_tensor *y, *y4, *kv, *a, *heads_last, *ac, *a2;
    /* One GEMV for q, k and v (their weights joined at load), the norm
     * folded into it; the heads are views of its rows. They are f32
     * whatever the weights' dtype (rope computes in f32, the KV cache is
     * f32 and attention takes f32 q): the product's result is f32. */
    wt_linear_fused_options o = fused_opts(m, ly->in_norm);
    o.result_f32 = true;
    TRY(qkv_product(m, ly, x, &o, &y));
    if (wt_tensor_dtype(y) != WT_F32) {
        wt_tensor *y32;
        TRY(wt_cast(y, WT_F32, &y32));
        y = y32;
    }
    const int64_t shape[4] = {m->batch, S, c->heads + 2 * c->kv_heads, c->head_dim};
    TRY(wt_reshape(y, 4, shape, &y4));
    /* q and k rotated (the checkpoint's RoPE, scaled or not), k and v
     * written into the cache (at the device's position in a captured
     * step). */
    wt_rope_kv_cache_options ro;
    wt_rope_kv_cache_options_init(&ro);
    ro.theta = c->theta;
    ro.offset = at->pos ? 0 : at->start;
    ro.position = at->pos;
    if (c->rope_type != LLAMA_ROPE_DEFAULT) {
        ro.scaling = c->rope_type == LLAMA_ROPE_LINEAR ? WT_ROPE_SCALING_LINEAR : WT_ROPE_SCALING_LLAMA3;
        ro.factor = c->rope_factor;
    }
    if (c->rope_type == LLAMA_ROPE_LLAMA3) {
        ro.low_freq_factor = c->low_freq_factor;
        ro.high_freq_factor = c->high_freq_factor;
        ro.original_max_position = c->rope_original_max_pos;
    }
    /* Then attention over the cache, causal, aligned to the end of the
     * keys: query s sees keys <= start + s. A decode step's is one kernel
     * with the rope and the cache write on WebGPU. */
    wt_attention_options ao;
    wt_attention_options_init(&ao);
    ao.causal = true;
    if (at->pos) { /* the step's row and key count read on the device */
        ao.kv_length = at->len;
        TRY(wt_rope_kv_attention(ly->kv_cache, y4, c->heads, &ro, &ao, &a));
    } else { /* the prompt: the cache's rows up to its last */
        TRY(wt_slice(ly->kv_cache, 2, 0, at->start + S, 1, &kv));
        TRY(wt_rope_kv_attention(kv, y4, c->heads, &ro, &ao, &a));
    }
    TRY(wt_transpose(a, 1, 2, &heads_last)); /* [batch, S, H, head_dim] */
    /* A decode step's heads (S = 1) are already in row order and go to
     * o_proj in f32 as they are (its kernel reads f32 against the
     * weights' dtype and adds the residual in the stream's); a prompt's
     * are gathered, in the weights' dtype, for the GEMM. */
    if (S == 1) {
        ac = heads_last;
    } else {
        TRY(wt_cast(heads_last, m->dtype, &ac));
    }
    const int64_t shape2[2] = {m->batch * S, c->heads * c->head_dim};
    TRY(wt_reshape(ac, 2, shape2, &a2));
    o = fused_opts(m, NULL);
    o.residual = x;
    return llama_linear_fused(m, a2, ly->o, ly->o_bias, &o, out);
}

/* out = x + down(silu(gate(h)) * up(h)), h = post_attention_layernorm(x):
 * two kernels for a decode step, the norm, the SwiGLU (gate and up joined
 * at load) and the residual add folded into the products. */
static wt_status mlp(const llama *m, const llama_layer *ly, const wt_tensor *x, const step_at *at, wt_tensor **out)
{
    (void)at;
    wt_tensor *p;
    wt_linear_fused_options o = fused_opts(m, ly->post_norm);
    o.swiglu = true;
    TRY(llama_linear_fused(m, x, ly->gate_up, ly->gate_up_bias, &o, &p));
    o = fused_opts(m, NULL);
    o.residual = x;
    return llama_linear_fused(m, p, ly->down, ly->down_bias, &o, out);
}

typedef wt_status (*block_fn)(const llama *m, const llama_layer *ly, const wt_tensor *x, const step_at *at,
                              wt_tensor **out);

/* x = block(x), which adds x itself (the residual, in its last product),
 * replacing *x. The block's temporaries live in a scope of their own. */
static wt_status residual(const llama *m, const llama_layer *ly, block_fn block, const step_at *at, wt_tensor **x)
{
    wt_scope *s;
    wt_tensor *sum;
    TRY(wt_scope_begin(wt_tensor_context(*x), &s));
    wt_status st = block(m, ly, *x, at, &sum);
    if (st == WT_OK) st = wt_scope_keep(s, sum); /* into the forward pass's scope */
    wt_scope_end(s);
    if (st != WT_OK) return st;
    wt_tensor_release(*x);
    *x = sum;
    return WT_OK;
}

/* Logits [batch * S, V] of the token ids in ids (i32 [batch * S]: S ids
 * of each sequence in turn) at positions at.., extending every layer's
 * KV cache. */
static wt_status forward(const llama *m, const wt_tensor *ids, const step_at *at, wt_tensor **logits)
{
    wt_scope *s;
    wt_tensor *x;
    *logits = NULL;
    TRY(wt_scope_begin(wt_tensor_context(ids), &s));
    wt_status st = wt_embedding(m->embed, ids, &x);
    for (int64_t l = 0; l < m->c.layers && st == WT_OK; l++) {
        st = residual(m, &m->layer[l], attention, at, &x);
        if (st == WT_OK) st = residual(m, &m->layer[l], mlp, at, &x);
    }
    wt_linear_fused_options o = fused_opts(m, m->norm);
    if (st == WT_OK) st = llama_linear_fused(m, x, m->head, NULL, &o, logits);
    if (st == WT_OK) st = wt_scope_keep(s, *logits);
    wt_scope_end(s);
    if (st != WT_OK) *logits = NULL;
    return st;
}

/* How the next token is chosen: greedy (argmax) unless --temperature,
 * --top-k or --top-p ask for sampling, which runs wt_sample on the device
 * with the step's counter (the position of the token whose logits are
 * sampled) read there too, so the captured step draws anew on each replay
 * and the same --seed gives the same text. */
static struct {
    bool on;
    wt_sample_options o;
} sampler;

/* The chosen ids [batch, 1] (i32) of rows [batch, 1, V]. */
static wt_status pick_tokens(const wt_tensor *row, const wt_tensor *counter, wt_tensor **am)
{
    const int axis = 2;
    if (!sampler.on) return wt_argmax(row, 1, &axis, false, am);
    const int64_t *s = wt_tensor_shape(row);
    const int64_t flat[2] = {s[0], s[2]}, col[2] = {s[0], 1};
    wt_tensor *r2 = NULL, *ids = NULL;
    wt_sample_options o = sampler.o;
    o.counter = counter;
    wt_status st = wt_reshape(row, 2, flat, &r2);
    if (st == WT_OK) st = wt_sample(r2, &o, &ids);
    if (st == WT_OK) st = wt_reshape(ids, 2, col, am);
    wt_tensor_release(r2);
    wt_tensor_release(ids);
    return st;
}

/* The greedy choice of each sequence's last row of logits, written into
 * next (i32 [batch]) and into row i of tokens (i32 [ntok, batch]): the
 * host's i, or (slot_at set) the row slot_at holds on the device. */
static wt_status choose(const llama *m, const wt_tensor *logits, wt_tensor *next, wt_tensor *tokens, int64_t i,
                        const wt_tensor *slot_at, const wt_tensor *counter)
{
    wt_tensor *l3 = NULL, *row = NULL, *am = NULL, *slot = NULL, *next2 = NULL;
    wt_status st;
    const int64_t B = m->batch, S = wt_tensor_shape(logits)[0] / B, V = wt_tensor_shape(logits)[1];
    const int64_t shape3[3] = {B, S, V}, shape2[2] = {1, B};
    wt_tensor *amt = NULL; /* [1, batch] */
    CK(wt_reshape(logits, 3, shape3, &l3));
    CK(wt_slice(l3, 1, S - 1, S, 1, &row));
    CK(pick_tokens(row, counter, &am)); /* [batch, 1] */
    CK(wt_reshape(next, 2, shape2, &next2));
    CK(wt_transpose(am, 0, 1, &amt));
    st = wt_copy_into(next2, amt);
    if (st == WT_OK && slot_at) {
        st = wt_copy_into_at(tokens, 0, slot_at, amt);
    } else if (st == WT_OK) {
        st = wt_slice(tokens, 0, i, i + 1, 1, &slot);
        if (st == WT_OK) st = wt_copy_into(slot, amt);
    }
done:
    wt_tensor_release(amt);
    wt_tensor_release(l3);
    wt_tensor_release(row);
    wt_tensor_release(am);
    wt_tensor_release(slot);
    wt_tensor_release(next2);
    return st;
}

/* ---------------------------------------------------------------- driver */

/* Generation stops at the first EOS id of the model's config. toks holds
 * tokens' first n rows ([n, batch]) on the host; first[b] becomes the step
 * of sequence b's first EOS id (or stays -1). True when every sequence has
 * one. */
static const wt_tokenizer *end_tokenizer; /* --text: its end tokens stop generation too */

static bool is_end(const llama *m, int32_t token)
{
    return llama_is_eos(&m->c, token) || (end_tokenizer && wt_tokenizer_is_end(end_tokenizer, token));
}

static bool all_eos(const llama *m, const int32_t *toks, int n, int *first)
{
    const int64_t B = m->batch;
    if (m->c.n_eos == 0 && !end_tokenizer) return false;
    bool all = true;
    for (int64_t b = 0; b < B; b++) {
        for (int i = 0; i < n && first[b] < 0; i++)
            if (is_end(m, toks[(int64_t)i * B + b])) first[b] = i;
        if (first[b] < 0) all = false;
    }
    return all;
}

#define MAX_BATCH 16

/* Splits s at ';' into at most max parts (pointers into s, modified);
 * the count, or -1 when there are more. */
static int split_list(char *s, char **parts, int max)
{
    int n = 0;
    for (char *p = s;; p++) {
        if (n == max) return -1;
        parts[n++] = p;
        p = strchr(p, ';');
        if (!p) return n;
        *p = 0;
    }
}

/* --text: the tokenizer (the model folder's tokenizer.json, a GGUF
 * file's vocabulary or --tokenizer's file), the prompt's ids as the text
 * --prompt takes, and the streaming decoder of the generated text. Freed
 * at exit, whichever way main ends. */
static wt_tokenizer *text_tokenizer;
static char *text_prompt_ids;
static wt_detokenizer *text_stream;

static void free_text(void)
{
    wt_detokenizer_destroy(text_stream);
    wt_tokenizer_destroy(text_tokenizer);
    free(text_prompt_ids);
}

static bool ends_with(const char *s, const char *suffix)
{
    const size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* Encodes text (BOS first when the tokenizer's model adds one) into
 * text_prompt_ids; prints the ids. */
static bool encode_text(const char *model, const char *tokenizer_path, const char *text, int64_t vocab)
{
    wt_status st;
    char path[4096];
    if (tokenizer_path) {
        st = wt_tokenizer_load_json(tokenizer_path, &text_tokenizer);
    } else if (ends_with(model, ".gguf")) {
        wt_gguf *f = NULL;
        st = wt_gguf_open(model, &f);
        if (st == WT_OK) st = wt_tokenizer_from_gguf(f, &text_tokenizer);
        wt_gguf_close(f);
    } else {
        snprintf(path, sizeof path, "%s/tokenizer.json", model);
        tokenizer_path = path;
        st = wt_tokenizer_load_json(path, &text_tokenizer);
    }
    if (st != WT_OK) {
        fprintf(stderr, "error: tokenizer of %s: %s\n", tokenizer_path ? tokenizer_path : model, wt_last_error());
        return false;
    }
    if (wt_tokenizer_vocab_size(text_tokenizer) > vocab) {
        fprintf(stderr, "error: the tokenizer has %d tokens, the model %lld\n", wt_tokenizer_vocab_size(text_tokenizer),
                (long long)vocab);
        return false;
    }
    const size_t len = strlen(text), cap = WT_TOKENIZE_MAX_IDS(len) + 1;
    int32_t *ids = malloc(sizeof *ids * cap);
    size_t n = 0;
    const unsigned flags = wt_tokenizer_adds_bos(text_tokenizer) ? WT_TOKENIZE_ADD_BOS : 0;
    if (!ids || wt_tokenizer_encode(text_tokenizer, text, len, flags, ids, cap, &n) != WT_OK || n == 0 ||
        n > MAX_PROMPT) {
        fprintf(stderr, "error: encoding the text: %s\n", n > MAX_PROMPT ? "too many tokens" : wt_last_error());
        free(ids);
        return false;
    }
    text_prompt_ids = malloc(n * 12 + 1);
    if (!text_prompt_ids) {
        free(ids);
        return false;
    }
    size_t used = 0;
    printf("text prompt: %zu tokens:", n);
    for (size_t i = 0; i < n; i++) {
        used += (size_t)sprintf(text_prompt_ids + used, i ? " %d" : "%d", ids[i]);
        printf(" %d", ids[i]);
    }
    printf("\n");
    free(ids);
    return wt_detokenizer_create(text_tokenizer, WT_DETOKENIZE_SKIP_SPECIAL, &text_stream) == WT_OK;
}

/* Prints the text of tokens[from, to) of sequence 0 (toks [n, batch]) as
 * it completes, stopping before its first end token (end >= 0). */
static void stream_text(const int32_t *toks, int from, int to, int64_t batch, int end)
{
    if (!text_stream) return;
    if (end >= 0 && to > end) to = end;
    for (int i = from; i < to; i++) {
        const char *piece;
        size_t len;
        if (wt_detokenizer_push(text_stream, toks[(int64_t)i * batch], &piece, &len) == WT_OK && len)
            fwrite(piece, 1, len, stdout);
    }
    fflush(stdout);
}

/* Up to max integers separated by spaces or commas; -1 on a bad entry. */
static int parse_ids(const char *s, int32_t *ids, int max)
{
    int n = 0;
    while (*s) {
        while (*s == ' ' || *s == ',' || *s == '\n' || *s == '\t' || *s == '\r') s++;
        if (!*s) break;
        char *end;
        long v = strtol(s, &end, 10);
        if (end == s || v < 0 || v > INT32_MAX || n == max) return -1;
        ids[n++] = (int32_t)v;
        s = end;
    }
    return n;
}

/* max |a - b| / max |b| of the prompt's logits against the reference. */
static int compare_logits(wt_context *ctx, const wt_tensor *logits, const char *ref_path, double tol)
{
    wt_tensor *ref = NULL, *mine = NULL;
    float *a = NULL, *b = NULL;
    int ok = 0;
    if (wt_npy_load(ctx, ref_path, &ref) != WT_OK || wt_cast(logits, WT_F32, &mine) != WT_OK) {
        fprintf(stderr, "error: reference logits %s: %s\n", ref_path, wt_last_error());
        goto done;
    }
    const int64_t *rs = wt_tensor_shape(ref), *ms = wt_tensor_shape(mine);
    if (wt_tensor_dtype(ref) != WT_F32 || wt_tensor_ndim(ref) != 2 || rs[0] != ms[0] || rs[1] != ms[1]) {
        fprintf(stderr, "error: %s: expected float32 [%lld, %lld]\n", ref_path, (long long)ms[0],
                (long long)ms[1]);
        goto done;
    }
    const size_t n = (size_t)wt_tensor_numel(ref);
    a = malloc(n * sizeof *a);
    b = malloc(n * sizeof *b);
    if (!a || !b || wt_tensor_read(mine, a, n * sizeof *a) != WT_OK ||
        wt_tensor_read(ref, b, n * sizeof *b) != WT_OK) {
        fprintf(stderr, "error: reading logits: %s\n", wt_last_error());
        goto done;
    }
    double diff = 0, scale = 0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)a[i] - b[i]);
        if (!(d <= diff)) diff = d; /* NaN sticks */
        if (fabs(b[i]) > scale) scale = fabs(b[i]);
    }
    double rel = diff / (scale > 0 ? scale : 1);
    ok = rel <= tol;
    printf("prompt logits vs reference: max |a-b| / max |b| = %.3g (bound %.g): %s\n", rel, tol,
           ok ? "ok" : "FAIL");
done:
    free(a);
    free(b);
    wt_tensor_release(ref);
    wt_tensor_release(mine);
    return ok;
}

/* The first n tokens must equal the reference's; when generation stopped
 * at an EOS id (stopped), the reference must end there too. */
static int compare_tokens(const int32_t *toks, int n, bool stopped, const char *ref_path)
{
    char *text = llama_read_text(ref_path);
    if (!text) {
        fprintf(stderr, "error: cannot read %s\n", ref_path);
        return 0;
    }
    int32_t *ref = malloc(sizeof *ref * MAX_PROMPT);
    int nref = ref ? parse_ids(text, ref, MAX_PROMPT) : -1;
    free(text);
    int ok = nref >= n, first_bad = -1;
    for (int i = 0; ok && i < n; i++)
        if (toks[i] != ref[i]) first_bad = i, ok = 0;
    if (ok && stopped && nref != n) {
        printf("generated tokens vs reference: stopped at an EOS id after %d tokens, the reference has %d: FAIL\n",
               n, nref);
        ok = 0;
    } else if (nref < n)
        printf("generated tokens vs reference: %s has %d tokens, fewer than %d: FAIL\n", ref_path, nref, n);
    else if (first_bad >= 0)
        printf("generated tokens vs reference: token %d is %d, the reference's %d: FAIL\n", first_bad,
               toks[first_bad], ref[first_bad]);
    else
        printf("generated tokens vs reference: all %d equal: ok\n", n);
    free(ref);
    return ok;
}

/* --out-step-logits / --ref-step-logits: this run's logits of every
 * generated token, [n, V] on the host (one prompt). */
typedef struct step_logits {
    float *rows;
    int64_t V;
    int n;
} step_logits;

/* Row i: the last row of logits [S, V] (any float dtype). */
static wt_status keep_step_logits(step_logits *s, const wt_tensor *logits, int i)
{
    const int64_t S = wt_tensor_shape(logits)[0];
    wt_tensor *row = NULL, *row32 = NULL;
    wt_status st = wt_slice(logits, 0, S - 1, S, 1, &row);
    if (st == WT_OK) st = wt_cast(row, WT_F32, &row32);
    if (st == WT_OK) st = wt_tensor_read(row32, s->rows + (size_t)i * (size_t)s->V, sizeof *s->rows * (size_t)s->V);
    wt_tensor_release(row);
    wt_tensor_release(row32);
    if (st == WT_OK && i >= s->n) s->n = i + 1;
    return st;
}

/* Each of the n steps against the reference's rows (ref_path, float32
 * [>= n, V]) and tokens: max |a - b| <= E = tol max |b|, and the token
 * equal to ref_toks[i] where b's top two logits are more than 2E apart. */
static int compare_step_logits(wt_context *ctx, const step_logits *s, const int32_t *toks, int n,
                               const int32_t *ref_toks, int nref, const char *ref_path, double tol)
{
    wt_tensor *ref = NULL;
    float *b = NULL;
    int ok = 0, ties = 0, flips = 0;
    double worst = 0;
    if (wt_npy_load(ctx, ref_path, &ref) != WT_OK) {
        fprintf(stderr, "error: reference step logits %s: %s\n", ref_path, wt_last_error());
        goto done;
    }
    const int64_t *rs = wt_tensor_shape(ref);
    if (wt_tensor_dtype(ref) != WT_F32 || wt_tensor_ndim(ref) != 2 || rs[0] < n || rs[1] != s->V || nref < n ||
        s->n < n) {
        fprintf(stderr, "error: %s: expected float32 [>= %d, %lld] and %d reference tokens\n", ref_path, n,
                (long long)s->V, n);
        goto done;
    }
    const size_t count = (size_t)rs[0] * (size_t)rs[1];
    if (!(b = malloc(count * sizeof *b)) || wt_tensor_read(ref, b, count * sizeof *b) != WT_OK) {
        fprintf(stderr, "error: reading %s: %s\n", ref_path, wt_last_error());
        goto done;
    }
    ok = 1;
    for (int i = 0; i < n; i++) {
        const float *a = s->rows + (size_t)i * (size_t)s->V, *r = b + (size_t)i * (size_t)s->V;
        double diff = 0, scale = 0, top = -INFINITY, second = -INFINITY;
        for (int64_t v = 0; v < s->V; v++) {
            const double d = fabs((double)a[v] - r[v]);
            if (!(d <= diff)) diff = d; /* NaN sticks */
            if (fabs(r[v]) > scale) scale = fabs(r[v]);
            if (r[v] > top) second = top, top = r[v];
            else if (r[v] > second) second = r[v];
        }
        const double bound = tol * scale, gap = top - second;
        if (diff / (scale > 0 ? scale : 1) > worst || diff != diff) worst = diff / (scale > 0 ? scale : 1);
        if (!(diff <= bound)) {
            if (ok) printf("step %d logits vs reference: max |a-b| = %.3g, bound %.3g: FAIL\n", i, diff, bound);
            ok = 0;
        } else if (gap > 2 * bound && toks[i] != ref_toks[i]) {
            if (ok)
                printf("step %d token %d, the reference's %d, whose top two logits are %.3g apart (> 2 x %.3g): "
                       "FAIL\n", i, toks[i], ref_toks[i], gap, bound);
            ok = 0;
        } else if (gap <= 2 * bound) {
            ties++;
            flips += toks[i] != ref_toks[i];
        }
    }
    printf("step logits vs reference (the reference's tokens decoded): %d steps, max |a-b| / max |b| = %.3g "
           "(bound %.3g), tokens equal but at %d near-ties (%d of them another token): %s\n",
           n, worst, tol, ties, flips, ok ? "ok" : "FAIL");
done:
    free(b);
    wt_tensor_release(ref);
    return ok;
}

/* The kernels of the profiled decode steps: GPU (or host) time per step
 * by kernel name, against the steps' wall time. */
static wt_status print_profile(wt_context *ctx, int steps, double wall_s)
{
    wt_status st = wt_context_profile_end(ctx);
    if (st != WT_OK) return st;
    wt_profile_entry e[64];
    int n = 0;
    bool gpu = false;
    if ((st = wt_context_profile_summary(ctx, e, 64, &n, &gpu)) != WT_OK) return st;
    double total = 0;
    uint64_t kernels = 0;
    for (int i = 0; i < n && i < 64; i++) total += e[i].total_seconds, kernels += e[i].count;
    printf("profile of %d decode steps (%s-timed): %.1f kernels and %.3f ms of kernel time a step; "
           "%.3f ms a step wall time while profiled\n",
           steps, gpu ? "GPU" : "host", (double)kernels / steps, total * 1e3 / steps, wall_s * 1e3 / steps);
    for (int i = 0; i < n && i < 64; i++)
        printf("  %-24s %6.1f a step  %8.2f us mean  %7.3f ms a step  %5.1f %%\n", e[i].name,
               (double)e[i].count / steps, e[i].mean_seconds * 1e6, e[i].total_seconds * 1e3 / steps,
               100 * e[i].share);
    return WT_OK;
}

static bool same_stats(const wt_memory_stats *a, const wt_memory_stats *b)
{
    return a->live_bytes == b->live_bytes && a->peak_bytes == b->peak_bytes &&
           a->live_tensors == b->live_tensors && a->buffers == b->buffers;
}

static void print_stats(const char *when, const wt_memory_stats *s)
{
    printf("memory %s: live %.3f MB in %llu tensors, peak %.3f MB, pooled %.3f MB, %llu buffers\n", when,
           s->live_bytes / 1e6, (unsigned long long)s->live_tensors, s->peak_bytes / 1e6,
           s->pooled_bytes / 1e6, (unsigned long long)s->buffers);
}

int main(int argc, char **argv)
{
    const char *model_dir = NULL, *backend = "auto", *dtype_name = "f32", *ref_logits = NULL,
               *ref_tokens = NULL, *prompt_text = "1 15 42 7 99 3 200 11 64 128 5 250 17 33 71 2";
    const char *out_tokens = NULL;
    int ntok = 64, prompt_len = 0, prefill_runs = 1;
    bool captured = true; /* --decode graph (default) or eager */
    int profile_steps = 0; /* --profile N: the last N decode steps timed kernel by kernel */
    double tol = 0;
    const char *text = NULL, *tokenizer_path = NULL; /* --text, --tokenizer */
    const char *out_logits = NULL; /* --out-logits FILE.npy: the prompt's logits (float32) */
    const char *out_step_logits = NULL, *ref_step_logits = NULL;
    double step_tol = 0;
    wt_sample_options_init(&sampler.o);
    sampler.o.temperature = 0; /* greedy unless asked */
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v) { fprintf(stderr, "%s needs a value\n", a); return 2; }
        if (strcmp(a, "--model") == 0) model_dir = v;
        else if (strcmp(a, "--backend") == 0) backend = v;
        else if (strcmp(a, "--dtype") == 0) dtype_name = v;
        else if (strcmp(a, "--prompt") == 0) prompt_text = v;
        else if (strcmp(a, "--prompt-len") == 0) prompt_len = atoi(v);
        else if (strcmp(a, "--tokens") == 0) ntok = atoi(v);
        else if (strcmp(a, "--ref-logits") == 0) ref_logits = v;
        else if (strcmp(a, "--ref-tokens") == 0) ref_tokens = v;
        else if (strcmp(a, "--tol") == 0) tol = atof(v);
        else if (strcmp(a, "--out-tokens") == 0) out_tokens = v;
        else if (strcmp(a, "--profile") == 0) profile_steps = atoi(v);
        else if (strcmp(a, "--prefill-runs") == 0) prefill_runs = atoi(v);
        else if (strcmp(a, "--text") == 0) text = v;
        else if (strcmp(a, "--out-logits") == 0) out_logits = v;
        else if (strcmp(a, "--out-step-logits") == 0) out_step_logits = v;
        else if (strcmp(a, "--ref-step-logits") == 0) ref_step_logits = v;
        else if (strcmp(a, "--step-tol") == 0) step_tol = atof(v);
        else if (strcmp(a, "--tokenizer") == 0) tokenizer_path = v;
        else if (strcmp(a, "--temperature") == 0) sampler.o.temperature = atof(v);
        else if (strcmp(a, "--top-k") == 0) sampler.o.top_k = atoll(v);
        else if (strcmp(a, "--top-p") == 0) sampler.o.top_p = atof(v);
        else if (strcmp(a, "--seed") == 0) sampler.o.seed = strtoull(v, NULL, 0);
        else if (strcmp(a, "--decode") == 0 && (!strcmp(v, "graph") || !strcmp(v, "eager"))) captured = !strcmp(v, "graph");
        else { fprintf(stderr, "unknown option %s\n", a); return 2; }
        i++;
    }
    if (!model_dir) {
        fprintf(stderr, "usage: llama --model DIR [--backend auto|cpu|webgpu|vulkan|gles] [--dtype f32|f16]\n"
                        "             [--prompt \"ids\"] [--prompt-len N] [--tokens N]\n"
                        "             [--ref-logits FILE.npy] [--ref-tokens FILE] [--tol T] [--out-tokens FILE]\n"
                        "             [--decode graph|eager] [--profile N] [--prefill-runs N]\n"
                        "             [--text \"...\"] [--tokenizer tokenizer.json] [--out-logits FILE.npy]\n"
                        "             [--out-step-logits FILE.npy] [--ref-step-logits FILE.npy] [--step-tol T]\n"
                        "             [--temperature T] [--top-k K] [--top-p P] [--seed S]\n");
        return 2;
    }
    wt_dtype dtype;
    if (strcmp(dtype_name, "f32") == 0) dtype = WT_F32;
    else if (strcmp(dtype_name, "f16") == 0) dtype = WT_F16;
    else { fprintf(stderr, "--dtype takes f32 or f16\n"); return 2; }
    if (tol <= 0) tol = dtype == WT_F32 ? 1e-3 : 2e-2;
    if (step_tol <= 0) step_tol = tol;
    if (prefill_runs < 1 || prefill_runs > 1000) { fprintf(stderr, "--prefill-runs takes 1 to 1000\n"); return 2; }
    if (!(sampler.o.temperature >= 0) || sampler.o.top_k < 0 || !(sampler.o.top_p > 0 && sampler.o.top_p <= 1)) {
        fprintf(stderr, "--temperature must be >= 0, --top-k >= 0 and --top-p in (0, 1]\n");
        return 2;
    }
    /* Sampling is on when any of its flags asks for more than greedy. */
    sampler.on = sampler.o.temperature > 0;
    if (!sampler.on && (sampler.o.top_k > 1 || sampler.o.top_p < 1)) {
        sampler.o.temperature = 1;
        sampler.on = true;
    }
    if (ntok < 1 || prompt_len < 0 || prompt_len > MAX_PROMPT) {
        fprintf(stderr, "--tokens must be >= 1 and --prompt-len in [0, %d]\n", MAX_PROMPT);
        return 2;
    }

    llama m;
    memset(&m, 0, sizeof m);
    const bool gguf = ends_with(model_dir, ".gguf");
    if (!(gguf ? llama_gguf_config(model_dir, &m.c, example_error, sizeof example_error)
               : llama_config_load(model_dir, &m.c, example_error, sizeof example_error))) {
        fprintf(stderr, "error: %s\n", example_error);
        return 1;
    }
    atexit(free_text);
    if (text) {
        if (prompt_len > 0) {
            fprintf(stderr, "--text and --prompt-len exclude each other\n");
            return 2;
        }
        if (!encode_text(model_dir, tokenizer_path, text, m.c.vocab)) return 1;
        prompt_text = text_prompt_ids;
        end_tokenizer = text_tokenizer;
    }
    /* Prompts separated by ';' are decoded together (a batch), each of
     * the same length; --ref-logits and --ref-tokens then list one file
     * per prompt ("-": none). */
    char *lists = malloc(strlen(prompt_text) + 1 + (ref_logits ? strlen(ref_logits) + 1 : 0) +
                         (ref_tokens ? strlen(ref_tokens) + 1 : 0));
    int32_t *prompt = malloc(sizeof *prompt * MAX_PROMPT * MAX_BATCH);
    if (!prompt || !lists) { free(prompt); free(lists); return 1; }
    char *prompt_parts[MAX_BATCH], *logit_refs[MAX_BATCH] = {NULL}, *token_refs[MAX_BATCH] = {NULL};
    char *pl = strcpy(lists, prompt_text), *rl = pl + strlen(pl) + 1;
    const int B = prompt_len > 0 ? 1 : split_list(pl, prompt_parts, MAX_BATCH);
    int n_logit_refs = ref_logits ? split_list(strcpy(rl, ref_logits), logit_refs, MAX_BATCH) : 0;
    rl += ref_logits ? strlen(ref_logits) + 1 : 0;
    int n_token_refs = ref_tokens ? split_list(strcpy(rl, ref_tokens), token_refs, MAX_BATCH) : 0;
    int P = prompt_len;
    if (B < 1 || (ref_logits && n_logit_refs != B) || (ref_tokens && n_token_refs != B)) {
        fprintf(stderr, "--prompt: at most %d prompts separated by ';', and as many --ref-logits and --ref-tokens\n",
                MAX_BATCH);
        free(prompt); free(lists);
        return 2;
    }
    if ((out_step_logits || ref_step_logits) && (B != 1 || sampler.on || (ref_step_logits && !ref_tokens))) {
        fprintf(stderr, "--out-step-logits and --ref-step-logits: one prompt, greedy; --ref-step-logits with "
                        "--ref-tokens\n");
        free(prompt); free(lists);
        return 2;
    }
    if (P > 0) {
        for (int i = 0; i < P; i++) prompt[i] = (int32_t)(((int64_t)i * 7919 + 1) % m.c.vocab);
    } else {
        for (int b = 0; b < B; b++) {
            const int n = parse_ids(prompt_parts[b], prompt + (size_t)b * P, b == 0 ? MAX_PROMPT : P);
            if (n < 1 || (b > 0 && n != P)) {
                fprintf(stderr, "--prompt: give token ids separated by spaces or commas, as many in each prompt\n");
                free(prompt); free(lists);
                return 2;
            }
            P = n;
        }
    }
    for (int i = 0; i < B * P; i++)
        if (prompt[i] >= m.c.vocab) {
            fprintf(stderr, "--prompt: id %d is outside the vocabulary (%lld)\n", prompt[i], (long long)m.c.vocab);
            free(prompt); free(lists);
            return 2;
        }
    const int64_t max_seq = (int64_t)P + ntok;
    if (max_seq > m.c.max_pos) {
        fprintf(stderr, "prompt + tokens = %lld exceeds max_position_embeddings %lld\n", (long long)max_seq,
                (long long)m.c.max_pos);
        free(prompt); free(lists);
        return 2;
    }

    wt_context *ctx = NULL;
    if (!make_context(backend, &ctx)) { free(prompt); free(lists); return 1; }
    int rc = 1;
    wt_status st = WT_OK;
    wt_tensor *ids = NULL, *next = NULL, *tokens = NULL, *prefill_logits = NULL, *logits = NULL;
    wt_tensor *step_values = NULL, *pos_at = NULL, *len_at = NULL, *slot_at = NULL;
    wt_tensor *prefill_step = NULL; /* the sampler's counter for the prefill's token: the last prompt position */
    wt_graph *step = NULL;
    int32_t *toks = NULL, *seqs = NULL;
    /* --ref-step-logits: the reference's tokens, each decode step's input. */
    int32_t *forced = NULL;
    int nforced = 0;
    step_logits step_rows = {NULL, m.c.vocab, 0};
    double t0 = now();
    CK(gguf ? llama_gguf_load(model_dir, ctx, dtype, B, max_seq, &m, example_error, sizeof example_error)
            : llama_load(model_dir, ctx, dtype, B, max_seq, &m, example_error, sizeof example_error));
    CK(wt_context_sync(ctx));
    printf("model %s: %lld layers, dim %lld, %lld heads (%lld KV), MLP %lld, vocab %lld; "
           "%.1f MB of %s weights loaded in %.2f s\n",
           model_dir, (long long)m.c.layers, (long long)m.c.dim, (long long)m.c.heads, (long long)m.c.kv_heads,
           (long long)m.c.hidden, (long long)m.c.vocab, m.weight_bytes / 1e6, dtype_name, now() - t0);
    if (m.n_quant > 0) printf("  %d weight matrices kept in ggml blocks, run by wt_linear_quant_fused\n", m.n_quant);

    if (out_step_logits || ref_step_logits) {
        step_rows.rows = malloc(sizeof *step_rows.rows * (size_t)ntok * (size_t)m.c.vocab);
        if (!step_rows.rows) { st = WT_ERR_OUT_OF_MEMORY; goto done; }
    }
    if (ref_step_logits) {
        char *text_ids = llama_read_text(token_refs[0]);
        forced = text_ids ? malloc(sizeof *forced * MAX_PROMPT) : NULL;
        nforced = forced ? parse_ids(text_ids, forced, MAX_PROMPT) : -1;
        free(text_ids);
        if (nforced < ntok - 1) {
            snprintf(example_error, sizeof example_error, "--ref-tokens %s: fewer than the %d tokens to decode",
                     token_refs[0], ntok - 1);
            st = WT_ERR_INVALID_ARGUMENT;
            goto done;
        }
    }
    const int64_t pshape[1] = {(int64_t)B * P}, bshape[1] = {B}, tshape[2] = {ntok, B};
    CK(wt_tensor_from_data(ctx, WT_I32, 1, pshape, prompt, &ids));
    CK(wt_tensor_zeros(ctx, WT_I32, 1, bshape, &next));
    CK(wt_tensor_zeros(ctx, WT_I32, 2, tshape, &tokens));
    const int32_t last_prompt_pos = P - 1;
    const int64_t one[1] = {1};
    CK(wt_tensor_from_data(ctx, WT_I32, 1, one, &last_prompt_pos, &prefill_step));

    /* Prefill, once untimed (shader compilation) and --prefill-runs times
     * timed; each writes the same keys and values into the cache again. */
    const step_at prefill_at = {0, NULL, NULL};
    CK(forward(&m, ids, &prefill_at, &prefill_logits));
    wt_tensor_release(prefill_logits);
    prefill_logits = NULL;
    CK(wt_context_sync(ctx));
    double prefill_runs_s[1000];
    for (int r = 0; r < prefill_runs; r++) {
        wt_tensor_release(prefill_logits);
        prefill_logits = NULL;
        t0 = now();
        CK(forward(&m, ids, &prefill_at, &prefill_logits));
        CK(choose(&m, prefill_logits, next, tokens, 0, NULL, prefill_step));
        CK(wt_context_sync(ctx));
        /* kept sorted (insertion): the median and the fastest at the end */
        const double dt = now() - t0;
        int k = r;
        for (; k > 0 && prefill_runs_s[k - 1] > dt; k--) prefill_runs_s[k] = prefill_runs_s[k - 1];
        prefill_runs_s[k] = dt;
    }
    const double prefill_s = prefill_runs_s[prefill_runs / 2], prefill_best_s = prefill_runs_s[0];
    if (step_rows.rows) CK(keep_step_logits(&step_rows, prefill_logits, 0));

    /* Decode. Captured (the default): the first step is captured as a
     * graph while it runs - embedding of `next`, every layer, the head and
     * argmax into `next` and into `tokens` - and replayed for each later
     * token after writing the step's values (position, key count, token
     * slot: one 12-byte write); the token never leaves the device, and the
     * tokens come back in batches. Eager (--decode eager): the same ops
     * (same shapes, the same step values) run again every step, through
     * their front-ends.
     * The first step settles the pool; from the second on the memory
     * statistics must not move. */
    const int64_t three[1] = {3};
    CK(wt_tensor_zeros(ctx, WT_I32, 1, three, &step_values));
    CK(wt_slice(step_values, 0, 0, 1, 1, &pos_at));
    CK(wt_slice(step_values, 0, 1, 2, 1, &len_at));
    CK(wt_slice(step_values, 0, 2, 3, 1, &slot_at));
    const step_at device_at = {0, pos_at, len_at};
    toks = malloc(sizeof *toks * (size_t)ntok * (size_t)B);
    if (!toks) { st = WT_ERR_OUT_OF_MEMORY; goto done; }
    int read_upto = 0; /* tokens[0 .. read_upto) are on the host */
    int streamed = 0;  /* --text: tokens[0 .. streamed) printed as text */
    if (text_stream) {
        printf("%s", text);
        fflush(stdout);
    }
    wt_memory_stats first, cur;
    memset(&first, 0, sizeof first);
    double t_decode = 0, profile_t0 = 0, host_s = 0;
    bool stable = true;
    int first_eos[MAX_BATCH], steps = ntok;
    for (int b = 0; b < B; b++) first_eos[b] = -1;
    const int profile_from = profile_steps > 0 && profile_steps < ntok - 2 ? ntok - profile_steps : ntok;
    for (int i = 1; i < ntok; i++) {
        if (i == profile_from) {
            CK(wt_context_sync(ctx));
            profile_t0 = now();
            CK(wt_context_profile_begin(ctx));
        }
        const int32_t values[3] = {P + i - 1, P + i, i};
        const double host_t0 = now();
        CK(wt_tensor_write(step_values, values, sizeof values));
        if (forced) CK(wt_tensor_write(next, &forced[i - 1], sizeof *forced)); /* the reference's token */
        if (captured) {
            if (i == 1) {
                CK(wt_graph_begin(ctx));
                st = forward(&m, next, &device_at, &logits);
                if (st == WT_OK) st = choose(&m, logits, next, tokens, i, slot_at, pos_at);
                if (!step_rows.rows) { /* else kept: every replay writes it */
                    wt_tensor_release(logits);
                    logits = NULL;
                }
                wt_status end = wt_graph_end(ctx, &step);
                if (st == WT_OK) st = end;
                if (st != WT_OK) goto done;
            } else {
                CK(wt_graph_replay(step));
            }
        } else { /* the same ops, run again */
            CK(forward(&m, next, &device_at, &logits));
            CK(choose(&m, logits, next, tokens, i, slot_at, pos_at));
        }
        if (step_rows.rows) CK(keep_step_logits(&step_rows, logits, i));
        if (!captured) {
            wt_tensor_release(logits);
            logits = NULL;
        }
        if (i >= 2) host_s += now() - host_t0; /* the host's part: the step's calls, not their waits */
        /* Tokens come back TOKEN_BATCH at a time (one wait each), as a
         * streaming server would print them; generation stops once every
         * sequence has produced an EOS id (the steps past it are dropped).
         * Step 1 reads too, so that the read-back's buffers exist before
         * the memory is first measured. */
        if (i == 1 || (i + 1) % TOKEN_BATCH == 0 || i == ntok - 1) {
            wt_tensor *fresh = NULL;
            CK(wt_slice(tokens, 0, read_upto, i + 1, 1, &fresh));
            st = wt_tensor_read(fresh, toks + (size_t)read_upto * B, sizeof *toks * (size_t)(i + 1 - read_upto) * B);
            wt_tensor_release(fresh);
            if (st != WT_OK) goto done;
            read_upto = i + 1;
            const bool all_ended = all_eos(&m, toks, read_upto, first_eos);
            stream_text(toks, streamed, read_upto, B, first_eos[0]);
            streamed = read_upto;
            if (all_ended) {
                steps = i + 1;
                break;
            }
        }
        if (i == 1) {
            CK(wt_context_sync(ctx));
            CK(wt_context_memory_stats(ctx, &first));
            t_decode = now();
        } else if (i < profile_from) { /* profiled steps hold the profiler's query and read-back buffers */
            CK(wt_context_memory_stats(ctx, &cur));
            if (stable && !same_stats(&first, &cur)) {
                print_stats("after decode step 1", &first);
                char when[64];
                snprintf(when, sizeof when, "after decode step %d", i);
                print_stats(when, &cur);
                stable = false;
            }
        }
    }
    CK(wt_context_sync(ctx));
    if (profile_from < ntok && steps == ntok) CK(print_profile(ctx, ntok - profile_from, now() - profile_t0));
    const int timed = steps - 2;
    t_decode = timed > 0 ? now() - t_decode : 0;

    if (read_upto < 1) CK(wt_tensor_read(tokens, toks, sizeof *toks * (size_t)B)); /* ntok == 1 */
    if (text_stream) { /* the rest of the text, and what the decoder holds */
        all_eos(&m, toks, steps, first_eos);
        stream_text(toks, streamed, steps, B, first_eos[0]);
        const char *rest;
        size_t rest_len;
        if (wt_detokenizer_flush(text_stream, &rest, &rest_len) == WT_OK && rest_len) fwrite(rest, 1, rest_len, stdout);
        printf("\n");
    }
    /* Sequence b's tokens (column b of tokens), up to its first EOS id. */
    int seq_len[MAX_BATCH];
    seqs = malloc(sizeof *seqs * (size_t)ntok * (size_t)B);
    if (!seqs) { st = WT_ERR_OUT_OF_MEMORY; goto done; }
    for (int b = 0; b < B; b++) {
        seq_len[b] = first_eos[b] >= 0 ? first_eos[b] + 1 : steps;
        for (int i = 0; i < seq_len[b]; i++) seqs[(size_t)b * ntok + i] = toks[(size_t)i * B + b];
    }
    FILE *out_file = out_tokens ? fopen(out_tokens, "w") : NULL;
    if (out_tokens && !out_file) fprintf(stderr, "error: cannot write %s\n", out_tokens);
    for (int b = 0; b < B; b++) {
        const int32_t *row = seqs + (size_t)b * ntok;
        if (first_eos[b] >= 0)
            printf("stopped at %s id %d after %d tokens\n", llama_is_eos(&m.c, row[first_eos[b]]) ? "EOS" : "end token",
                   row[first_eos[b]], seq_len[b]);
        printf(B > 1 ? "tokens[%d]:" : "tokens:", b);
        for (int i = 0; i < seq_len[b]; i++) printf(" %d", row[i]);
        printf("\n");
        if (out_file) {
            for (int i = 0; i < seq_len[b]; i++) fprintf(out_file, i ? " %d" : "%d", row[i]);
            fprintf(out_file, "\n");
        }
    }
    if (out_file) fclose(out_file);
    printf("prefill: %d tokens in %.4f s = %.1f tokens/s", B * P, prefill_s, B * P / prefill_s);
    if (prefill_runs > 1)
        printf(" (median of %d runs; fastest %.4f s = %.1f tokens/s)", prefill_runs, prefill_best_s,
               B * P / prefill_best_s);
    printf("\n");
    if (timed > 0) {
        const double tps = (double)timed * B / t_decode;
        /* A step reads the weights once for the whole batch. */
        printf("decode (%s): %d tokens in %.4f s = %.2f tokens/s; %.2f MB of weights read per step = %.2f GB/s\n",
               captured ? "captured step replayed" : "eager", timed * B, t_decode, tps, m.decode_bytes / 1e6,
               m.decode_bytes * (tps / B) / 1e9);
        int64_t nodes = 0;
        if (step) wt_graph_node_count(step, &nodes);
        printf("decode host time: %.1f us a step in the step's calls (%s)", host_s * 1e6 / timed,
               captured ? "value write + replay" : "value write + ops");
        if (nodes > 0) printf(", %lld kernels a step: %.2f us a kernel", (long long)nodes, host_s * 1e6 / timed / (double)nodes);
        printf("\n");
        wt_pipeline_stats ps;
        if (wt_context_pipeline_stats(ctx, &ps) == WT_OK && ps.dispatches > 0)
            printf("webgpu over the whole run: %llu dispatches, %llu submits, %llu bind groups made, %llu reused\n",
                   (unsigned long long)ps.dispatches, (unsigned long long)ps.submits,
                   (unsigned long long)ps.bind_groups_made, (unsigned long long)ps.bind_group_hits);
    }
    if (ntok > 1) {
        CK(wt_context_memory_stats(ctx, &cur));
        print_stats("after the last decode step", &cur);
        printf("memory per token after the first decode step: %s%s\n",
               stable ? "constant (nothing allocated)" : "CHANGED: FAIL",
               profile_from < ntok ? " (checked up to the profiled steps)" : "");
    }
    rc = stable && (!out_tokens || out_file) ? 0 : 1;
    if (out_logits) { /* the prompt's logits, float32 [B * P, V], for another run's --ref-logits */
        wt_tensor *l32 = NULL;
        st = wt_cast(prefill_logits, WT_F32, &l32);
        if (st == WT_OK) st = wt_npy_save(out_logits, l32);
        wt_tensor_release(l32);
        if (st != WT_OK) goto done;
    }
    if (out_step_logits) { /* float32 [tokens, V], for another run's --ref-step-logits */
        wt_tensor *rows = NULL;
        const int64_t shape[2] = {seq_len[0], m.c.vocab};
        st = wt_tensor_from_data(ctx, WT_F32, 2, shape, step_rows.rows, &rows);
        if (st == WT_OK) st = wt_npy_save(out_step_logits, rows);
        wt_tensor_release(rows);
        if (st != WT_OK) goto done;
    }
    for (int b = 0; b < B; b++) {
        if (ref_logits && strcmp(logit_refs[b], "-") != 0) {
            wt_tensor *rows = NULL;
            CK(wt_slice(prefill_logits, 0, (int64_t)b * P, (int64_t)(b + 1) * P, 1, &rows));
            if (!compare_logits(ctx, rows, logit_refs[b], tol)) rc = 1;
            wt_tensor_release(rows);
        }
        if (ref_step_logits) {
            if (!compare_step_logits(ctx, &step_rows, seqs, seq_len[0], forced, nforced, ref_step_logits, step_tol))
                rc = 1;
        } else if (ref_tokens && strcmp(token_refs[b], "-") != 0 &&
            !compare_tokens(seqs + (size_t)b * ntok, seq_len[b], first_eos[b] >= 0, token_refs[b]))
            rc = 1;
    }
done:
    if (st != WT_OK) {
        fprintf(stderr, "error: %s\n", example_error[0] ? example_error : wt_last_error());
        rc = 1;
    }
    free(toks);
    free(seqs);
    free(forced);
    free(step_rows.rows);
    free(prompt);
    free(lists);
    wt_tensor_release(ids);
    wt_tensor_release(next);
    wt_tensor_release(tokens);
    wt_tensor_release(prefill_logits);
    wt_tensor_release(logits);
    wt_graph_release(step);
    wt_tensor_release(pos_at);
    wt_tensor_release(len_at);
    wt_tensor_release(slot_at);
    wt_tensor_release(step_values);
    wt_tensor_release(prefill_step);
    llama_free(&m);
    wt_context_destroy(ctx);
    return rc;
}
