/* Writes a Hugging Face Llama checkpoint (config.json + model.safetensors)
 * as a GGUF file the way llama.cpp's convert_hf_to_gguf.py does, for the
 * example's GGUF tests:
 *
 *   llama_to_gguf DIR OUT.gguf KIND [--eos ID] [--eot ID]
 *     KIND: f32, f16, q8_0, q4_0, q4_k_m, or one of the last three + "_dense"
 *   llama_to_gguf --random-llama DIR
 *
 * - the llama.* metadata of the config; tensor names token_embd,
 *   blk.N.attn_q/k/v/output, ffn_gate/up/down, attn_norm, ffn_norm,
 *   output_norm, output (absent when the config ties it);
 * - the rows of attn_q and attn_k permuted as the converter's permute():
 *   per head, [2, head_dim/2] rows reshaped and swapped to [head_dim/2, 2],
 *   so GGUF row h*hd + 2j + half is Hugging Face row h*hd + half*hd/2 + j
 *   (attn_k's heads are the KV heads);
 * - f16: the 2-D weights F16 (rounded to nearest), the norms F32, as the
 *   converter's --outtype f16;
 * - q8_0 / q4_0: every 2-D weight whose rows are a multiple of 32 long
 *   quantised with ggml's reference quantisers (wt_quantize), the block
 *   bytes written raw; other 2-D weights (the tiny model's ffn_down, rows
 *   of 172) and the 1-D norms stay F32, as llama.cpp keeps tensors that
 *   do not divide into blocks and norms in float;
 * - q4_k_m: the tensor types of llama.cpp's Q4_K_M: output (or a tied
 *   token_embd) Q6_K; attn_v and ffn_down Q6_K in the layers its
 *   use_more_bits() picks (the first and last eighth, every third
 *   between), Q4_K elsewhere; token_embd and the other weights Q4_K; 2-D
 *   weights whose rows are not a multiple of 256 stay F32;
 * - *_dense: the same weights quantised, then dequantised and written
 *   F32: what the quantised file computes, run by the dense kernels (the
 *   reference of the quantised path);
 * - a SentencePiece vocabulary of the model's size (tokenizer.ggml.model
 *   "llama"): <unk> 0, <s> 1 (BOS, added), "▁" 15 and the letters a..n on
 *   the ids of bench/llama_ref.py's prompt after its first two (so the
 *   text "abcdefghijklmn" encodes to that prompt), </s> on --eos (4 by
 *   default: an id the tiny model's reference never generates), and
 *   byte tokens <0xNN> on the other ids; --eot sets
 *   tokenizer.ggml.eot_token_id (an end of turn, which ends generation).
 *
 * --random-llama writes DIR/config.json and DIR/model.safetensors: a
 * 2-layer Llama with random weights whose rows are multiples of 256 (width
 * 256, FFN 512, 4 heads of 64, 2 KV heads, 256 tokens, an untied head), so
 * that every weight divides into K-quant super-blocks (the tiny model's
 * rows of 64 and 172 do not). Weights uniform in [-0.05, 0.05], norms
 * 1 + uniform [-0.1, 0.1], from a fixed seed. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "webtensor.h"
#include "webtensor_io.h"

#include "llama_model.h"

static const int32_t PROMPT[16] = {1, 15, 42, 7, 99, 3, 200, 11, 64, 128, 5, 250, 17, 33, 71, 2};

static int die(const char *what)
{
    fprintf(stderr, "llama_to_gguf: %s: %s\n", what, wt_last_error());
    return 1;
}

/* The converter's permute() of attn_q / attn_k rows. */
static wt_status permute_rows(wt_context *ctx, wt_tensor **w, int64_t heads, int64_t hd)
{
    const int64_t rows = heads * hd;
    int32_t *idx = malloc(sizeof *idx * (size_t)rows);
    if (!idx) return WT_ERR_OUT_OF_MEMORY;
    for (int64_t h = 0; h < heads; h++)
        for (int64_t j = 0; j < hd / 2; j++)
            for (int64_t half = 0; half < 2; half++)
                idx[h * hd + 2 * j + half] = (int32_t)(h * hd + half * (hd / 2) + j);
    wt_tensor *it = NULL, *moved = NULL;
    wt_status st = wt_tensor_from_data(ctx, WT_I32, 1, &rows, idx, &it);
    free(idx);
    if (st == WT_OK) st = wt_index_select(*w, 0, it, &moved);
    wt_tensor_release(it);
    if (st == WT_OK) {
        wt_tensor_release(*w);
        *w = moved;
    }
    return st;
}

/* Elements and bytes of one block of type. */
static int block_elems(wt_quant_type type) { return type == WT_QUANT_Q4_K || type == WT_QUANT_Q6_K ? 256 : 32; }
static int block_bytes(wt_quant_type type)
{
    return type == WT_QUANT_Q8_0 ? 34 : type == WT_QUANT_Q4_0 ? 18 : type == WT_QUANT_Q4_K ? 144 : 210;
}

/* t (f32 [N, K]) as raw blocks of type: wt_quantize's words with each row's
 * padding dropped. */
static wt_status add_quantised(wt_gguf_writer *g, const char *name, const wt_tensor *t, wt_quant_type type)
{
    const int64_t N = wt_tensor_shape(t)[0], K = wt_tensor_shape(t)[1];
    const int64_t row_bytes = K / block_elems(type) * block_bytes(type);
    wt_tensor *q = NULL;
    wt_status st = wt_quantize(t, type, &q);
    if (st != WT_OK) return st;
    const int64_t W = wt_tensor_shape(q)[1];
    uint32_t *words = malloc(sizeof *words * (size_t)(N * W));
    uint8_t *bytes = malloc((size_t)(N * row_bytes));
    if (!words || !bytes) st = WT_ERR_OUT_OF_MEMORY;
    if (st == WT_OK) st = wt_tensor_read(q, words, sizeof *words * (size_t)(N * W));
    for (int64_t r = 0; st == WT_OK && r < N; r++)
        for (int64_t b = 0; b < row_bytes; b++)
            bytes[r * row_bytes + b] = (uint8_t)(words[r * W + b / 4] >> (8 * (b % 4)));
    const uint64_t dims[2] = {(uint64_t)K, (uint64_t)N};
    if (st == WT_OK) st = wt_gguf_writer_add_raw(g, name, (uint32_t)type, 2, dims, bytes, (size_t)(N * row_bytes));
    free(words);
    free(bytes);
    wt_tensor_release(q);
    return st;
}

static wt_status set_array(wt_gguf_writer *g, const char *key, wt_gguf_type type, uint64_t n, const void *elems,
                           const wt_gguf_value *items)
{
    wt_gguf_value v = {.type = WT_GGUF_ARRAY, .elem_type = type, .count = n, .elems = elems, .items = items};
    return wt_gguf_writer_set(g, key, &v);
}

static wt_status set_value(wt_gguf_writer *g, const char *key, wt_gguf_type type, uint64_t u, double f)
{
    wt_gguf_value v = {.type = type, .u = u, .i = (int64_t)u, .f = f};
    return wt_gguf_writer_set(g, key, &v);
}

/* The vocabulary of the header comment. */
static wt_status add_vocab(wt_gguf_writer *g, int64_t vocab, int32_t eos, int32_t eot)
{
    enum { T_NORMAL = 1, T_UNKNOWN = 2, T_CONTROL = 3, T_BYTE = 6 };
    char (*text)[16] = calloc((size_t)vocab, sizeof *text);
    wt_gguf_value *items = calloc((size_t)vocab, sizeof *items);
    float *scores = calloc((size_t)vocab, sizeof *scores);
    int32_t *types = calloc((size_t)vocab, sizeof *types);
    wt_status st = text && items && scores && types ? WT_OK : WT_ERR_OUT_OF_MEMORY;
    for (int64_t i = 0; st == WT_OK && i < vocab; i++) types[i] = 0; /* 0: not yet placed */
    if (st == WT_OK) {
        snprintf(text[0], 16, "<unk>"), types[0] = T_UNKNOWN;
        snprintf(text[1], 16, "<s>"), types[1] = T_CONTROL;
        snprintf(text[15], 16, "\xe2\x96\x81"), types[15] = T_NORMAL;
        for (int i = 2; i < 16; i++) snprintf(text[PROMPT[i]], 16, "%c", 'a' + (i - 2)), types[PROMPT[i]] = T_NORMAL;
        snprintf(text[eos], 16, "</s>"), types[eos] = T_CONTROL;
        int byte = 0;
        for (int64_t i = 0; i < vocab; i++)
            if (types[i] == 0) snprintf(text[i], 16, "<0x%02X>", byte++), types[i] = T_BYTE;
        for (int64_t i = 0; i < vocab; i++)
            items[i] = (wt_gguf_value){.type = WT_GGUF_STRING, .str = text[i], .str_len = strlen(text[i])};
    }
    if (st == WT_OK) st = wt_gguf_writer_set_string(g, "tokenizer.ggml.model", "llama");
    if (st == WT_OK) st = set_array(g, "tokenizer.ggml.tokens", WT_GGUF_STRING, (uint64_t)vocab, NULL, items);
    if (st == WT_OK) st = set_array(g, "tokenizer.ggml.scores", WT_GGUF_F32, (uint64_t)vocab, scores, NULL);
    if (st == WT_OK) st = set_array(g, "tokenizer.ggml.token_type", WT_GGUF_I32, (uint64_t)vocab, types, NULL);
    if (st == WT_OK) st = wt_gguf_writer_set_u32(g, "tokenizer.ggml.bos_token_id", 1);
    if (st == WT_OK) st = wt_gguf_writer_set_u32(g, "tokenizer.ggml.eos_token_id", (uint32_t)eos);
    if (st == WT_OK) st = wt_gguf_writer_set_u32(g, "tokenizer.ggml.unknown_token_id", 0);
    if (st == WT_OK && eot >= 0) st = wt_gguf_writer_set_u32(g, "tokenizer.ggml.eot_token_id", (uint32_t)eot);
    if (st == WT_OK) st = set_value(g, "tokenizer.ggml.add_bos_token", WT_GGUF_BOOL, 1, 0);
    free(text), free(items), free(scores), free(types);
    return st;
}

/* llama.cpp's use_more_bits(): the layers whose attn_v and ffn_down a
 * Q4_K_M file keeps in Q6_K. */
static bool use_more_bits(int64_t layer, int64_t layers)
{
    return layer < layers / 8 || layer >= 7 * layers / 8 || (layer - layers / 8) % 3 == 2;
}

/* The block type of a tensor in a file of kind, or -1 for F32. slot: 0..8
 * the layer tensor's place in main's table (3 attn_v, 8 ffn_down), -1
 * output, -3 token_embd; row: the length of its rows. */
static int tensor_type(const char *kind, int64_t slot, int64_t layer, const llama_config *c, int64_t ndim,
                       int64_t row)
{
    if (strncmp(kind, "f32", 3) == 0 || strncmp(kind, "f16", 3) == 0 || ndim != 2) return -1;
    if (strncmp(kind, "q4_k_m", 6) == 0) {
        wt_quant_type t = WT_QUANT_Q4_K;
        if (slot == -1 || (slot == -3 && c->tied)) t = WT_QUANT_Q6_K;
        else if ((slot == 3 || slot == 8) && use_more_bits(layer, c->layers)) t = WT_QUANT_Q6_K;
        return row % 256 == 0 ? (int)t : -1;
    }
    return row % 32 == 0 ? (int)(strncmp(kind, "q4_0", 4) == 0 ? WT_QUANT_Q4_0 : WT_QUANT_Q8_0) : -1;
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static float rng_uniform(float lo, float hi)
{
    rng_state ^= rng_state << 13, rng_state ^= rng_state >> 7, rng_state ^= rng_state << 17;
    return lo + (hi - lo) * (float)((double)(rng_state >> 11) / 9007199254740992.0);
}

/* --random-llama: the model of the header comment. */
static int write_random_llama(const char *dir)
{
    enum { D = 256, I = 512, L = 2, H = 4, KV = 2, HD = 64, V = 256 };
    char path[4096];
    snprintf(path, sizeof path, "%s/config.json", dir);
    FILE *fc = fopen(path, "w");
    if (!fc) return fprintf(stderr, "llama_to_gguf: cannot write %s\n", path), 1;
    fprintf(fc,
            "{\"model_type\": \"llama\", \"vocab_size\": %d, \"hidden_size\": %d, \"intermediate_size\": %d,\n"
            " \"num_hidden_layers\": %d, \"num_attention_heads\": %d, \"num_key_value_heads\": %d,\n"
            " \"head_dim\": %d, \"rms_norm_eps\": 1e-05, \"rope_theta\": 10000.0,\n"
            " \"max_position_embeddings\": 1024, \"tie_word_embeddings\": false, \"torch_dtype\": \"float32\"}\n",
            V, D, I, L, H, KV, HD);
    if (fclose(fc) != 0) return fprintf(stderr, "llama_to_gguf: cannot write %s\n", path), 1;
    wt_context_options o;
    wt_context_options_init(&o);
    o.backend = WT_BACKEND_CPU;
    wt_context *ctx = NULL;
    if (wt_context_create(&o, &ctx) != WT_OK) return die("context");
    enum { PER_LAYER = 9, N = 3 + L * PER_LAYER };
    static const char *const layer_names[PER_LAYER] = {
        "input_layernorm.weight", "self_attn.q_proj.weight", "self_attn.k_proj.weight",
        "self_attn.v_proj.weight", "self_attn.o_proj.weight", "post_attention_layernorm.weight",
        "mlp.gate_proj.weight", "mlp.up_proj.weight", "mlp.down_proj.weight"};
    const int64_t layer_shapes[PER_LAYER][2] = {{D, 0}, {H * HD, D}, {KV * HD, D}, {KV * HD, D}, {D, H * HD},
                                                {D, 0}, {I, D}, {I, D}, {D, I}};
    char names[N][96];
    const char *name_ptr[N];
    wt_tensor *t[N] = {0};
    wt_status st = WT_OK;
    for (int n = 0; n < N && st == WT_OK; n++) {
        int64_t shape[2];
        int ndim = 2;
        bool norm = false;
        if (n == 0) snprintf(names[n], sizeof names[n], "model.embed_tokens.weight"), shape[0] = V, shape[1] = D;
        else if (n == 1) snprintf(names[n], sizeof names[n], "model.norm.weight"), shape[0] = D, ndim = 1, norm = true;
        else if (n == 2) snprintf(names[n], sizeof names[n], "lm_head.weight"), shape[0] = V, shape[1] = D;
        else {
            const int l = (n - 3) / PER_LAYER, k = (n - 3) % PER_LAYER;
            snprintf(names[n], sizeof names[n], "model.layers.%d.%s", l, layer_names[k]);
            shape[0] = layer_shapes[k][0], shape[1] = layer_shapes[k][1];
            norm = shape[1] == 0, ndim = norm ? 1 : 2;
        }
        name_ptr[n] = names[n];
        const int64_t count = ndim == 1 ? shape[0] : shape[0] * shape[1];
        float *v = malloc(sizeof *v * (size_t)count);
        if (!v) st = WT_ERR_OUT_OF_MEMORY;
        for (int64_t i = 0; st == WT_OK && i < count; i++)
            v[i] = norm ? 1.0f + rng_uniform(-0.1f, 0.1f) : rng_uniform(-0.05f, 0.05f);
        if (st == WT_OK) st = wt_tensor_from_data(ctx, WT_F32, ndim, shape, v, &t[n]);
        free(v);
    }
    snprintf(path, sizeof path, "%s/model.safetensors", dir);
    if (st == WT_OK) st = wt_safetensors_save(path, N, name_ptr, t, 0, NULL, NULL);
    const int rc = st == WT_OK ? 0 : die(path);
    for (int n = 0; n < N; n++) wt_tensor_release(t[n]);
    wt_context_destroy(ctx);
    if (rc == 0) printf("wrote %s (random Llama)\n", dir);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--random-llama") == 0) return write_random_llama(argv[2]);
    if (argc < 4) {
        fprintf(stderr, "usage: llama_to_gguf DIR OUT.gguf f32|f16|q8_0|q4_0|q4_k_m[_dense] [--eos ID] [--eot ID]\n"
                        "       llama_to_gguf --random-llama DIR\n");
        return 2;
    }
    const char *dir = argv[1], *out = argv[2], *kind = argv[3];
    int32_t eos = 4, eot = -1;
    for (int i = 4; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--eos") == 0) eos = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--eot") == 0) eot = atoi(argv[i + 1]);
        else return fprintf(stderr, "unknown option %s\n", argv[i]), 2;
    }
    const bool dense = strstr(kind, "_dense") != NULL;
    if (strcmp(kind, "f32") != 0 && strcmp(kind, "f16") != 0 && strncmp(kind, "q8_0", 4) != 0 && strncmp(kind, "q4_0", 4) != 0 &&
        strncmp(kind, "q4_k_m", 6) != 0)
        return fprintf(stderr, "bad type %s\n", kind), 2;
    llama_config c;
    char err[256];
    if (!llama_config_load(dir, &c, err, sizeof err)) return fprintf(stderr, "llama_to_gguf: %s\n", err), 1;
    const bool special = eos < 0 || eos >= c.vocab || eos == 0 || eos == 1 || eos == 15;
    for (int i = 2; i < 16 && !special; i++)
        if (PROMPT[i] == eos) return fprintf(stderr, "--eos %d is a letter's id\n", eos), 2;
    if (special || c.vocab < 256 || c.rope_type != LLAMA_ROPE_DEFAULT || c.qkv_bias || c.o_bias || c.mlp_bias)
        return fprintf(stderr, "llama_to_gguf: a plain Llama of >= 256 tokens and a free --eos id only\n"), 2;
    wt_context_options o;
    wt_context_options_init(&o);
    o.backend = WT_BACKEND_CPU;
    wt_context *ctx = NULL;
    if (wt_context_create(&o, &ctx) != WT_OK) return die("context");
    char path[4096];
    snprintf(path, sizeof path, "%s/model.safetensors", dir);
    wt_safetensors *sf = NULL;
    wt_gguf_writer *g = NULL;
    int rc = 1;
    if (wt_safetensors_open(path, &sf) != WT_OK || wt_gguf_writer_create(&g) != WT_OK) {
        rc = die(path);
        goto done;
    }
    wt_status st = wt_gguf_writer_set_string(g, "general.architecture", "llama");
    if (st == WT_OK) st = wt_gguf_writer_set_string(g, "general.name", "llama_tiny");
    struct { const char *key; int64_t v; } ints[] = {
        {"llama.block_count", c.layers}, {"llama.context_length", c.max_pos}, {"llama.embedding_length", c.dim},
        {"llama.feed_forward_length", c.hidden}, {"llama.attention.head_count", c.heads},
        {"llama.attention.head_count_kv", c.kv_heads}, {"llama.rope.dimension_count", c.head_dim},
        {"llama.vocab_size", c.vocab},
    };
    for (size_t i = 0; st == WT_OK && i < sizeof ints / sizeof ints[0]; i++)
        st = wt_gguf_writer_set_u32(g, ints[i].key, (uint32_t)ints[i].v);
    if (st == WT_OK) st = set_value(g, "llama.rope.freq_base", WT_GGUF_F32, 0, c.theta);
    if (st == WT_OK) st = set_value(g, "llama.attention.layer_norm_rms_epsilon", WT_GGUF_F32, 0, c.eps);
    if (st == WT_OK) st = add_vocab(g, c.vocab, eos, eot);
    if (st != WT_OK) {
        rc = die("metadata");
        goto done;
    }
    /* Hugging Face name -> GGUF name, heads of the RoPE permutation */
    char hf[160], gg[160];
    const int64_t per_layer = 9;
    for (int64_t n = -3; n < c.layers * per_layer; n++) {
        int64_t heads = 0, slot = n, layer = -1;
        if (n == -3) snprintf(hf, sizeof hf, "model.embed_tokens.weight"), snprintf(gg, sizeof gg, "token_embd.weight");
        else if (n == -2) snprintf(hf, sizeof hf, "model.norm.weight"), snprintf(gg, sizeof gg, "output_norm.weight");
        else if (n == -1) {
            if (c.tied) continue;
            snprintf(hf, sizeof hf, "lm_head.weight"), snprintf(gg, sizeof gg, "output.weight");
        } else {
            static const char *const names[9][2] = {
                {"input_layernorm.weight", "attn_norm.weight"}, {"self_attn.q_proj.weight", "attn_q.weight"},
                {"self_attn.k_proj.weight", "attn_k.weight"},   {"self_attn.v_proj.weight", "attn_v.weight"},
                {"self_attn.o_proj.weight", "attn_output.weight"},
                {"post_attention_layernorm.weight", "ffn_norm.weight"},
                {"mlp.gate_proj.weight", "ffn_gate.weight"},    {"mlp.up_proj.weight", "ffn_up.weight"},
                {"mlp.down_proj.weight", "ffn_down.weight"},
            };
            const int64_t l = n / per_layer, k = n % per_layer;
            snprintf(hf, sizeof hf, "model.layers.%lld.%s", (long long)l, names[k][0]);
            snprintf(gg, sizeof gg, "blk.%lld.%s", (long long)l, names[k][1]);
            heads = k == 1 ? c.heads : k == 2 ? c.kv_heads : 0;
            slot = k, layer = l;
        }
        wt_tensor *t = NULL, *t32 = NULL;
        st = wt_safetensors_load(sf, ctx, hf, WT_F32, &t);
        if (st == WT_OK) st = wt_cast(t, WT_F32, &t32);
        wt_tensor_release(t);
        if (st == WT_OK && heads) st = permute_rows(ctx, &t32, heads, c.head_dim);
        const int type = st == WT_OK ? tensor_type(kind, slot, layer, &c, wt_tensor_ndim(t32),
                                                   wt_tensor_shape(t32)[wt_tensor_ndim(t32) - 1])
                                     : -1;
        const bool blocks = type >= 0;
        const wt_quant_type qtype = (wt_quant_type)type;
        if (st == WT_OK && blocks && dense) {
            wt_tensor *q = NULL, *back = NULL;
            st = wt_quantize(t32, qtype, &q);
            if (st == WT_OK) st = wt_dequantize(q, qtype, WT_F32, &back);
            if (st == WT_OK) st = wt_gguf_writer_add_tensor(g, gg, back);
            wt_tensor_release(q);
            wt_tensor_release(back);
        } else if (st == WT_OK && !blocks && strcmp(kind, "f16") == 0 && wt_tensor_ndim(t32) == 2) {
            wt_tensor *h = NULL;
            st = wt_cast(t32, WT_F16, &h);
            if (st == WT_OK) st = wt_gguf_writer_add_tensor(g, gg, h);
            wt_tensor_release(h);
        } else if (st == WT_OK) {
            st = blocks ? add_quantised(g, gg, t32, qtype) : wt_gguf_writer_add_tensor(g, gg, t32);
        }
        wt_tensor_release(t32);
        if (st != WT_OK) {
            rc = die(hf);
            goto done;
        }
    }
    if (wt_gguf_writer_save(g, out) != WT_OK) {
        rc = die(out);
        goto done;
    }
    printf("wrote %s (%s)\n", out, kind);
    rc = 0;
done:
    wt_gguf_writer_destroy(g);
    wt_safetensors_close(sf);
    wt_context_destroy(ctx);
    return rc;
}
