/*
 * A Llama-family checkpoint in the Hugging Face layout, read onto a
 * webtensor context: config.json (as transformers 4.x or 5.x writes it),
 * generation_config.json when present, and the weights of
 * model.safetensors or of the shards that model.safetensors.index.json
 * names.
 *
 * Understood: model_type "llama" and "qwen2"; any rope_theta; RoPE scaling
 * of rope_type "default", "linear" and "llama3" (transformers 4.x's flat
 * rope_theta + rope_scaling, or 5.x's nested rope_parameters); head_dim
 * apart from hidden_size / num_attention_heads; grouped-query attention;
 * attention_bias and mlp_bias (Llama) and Qwen2's q/k/v biases; tied
 * embeddings (tie_word_embeddings, or a checkpoint without lm_head.weight
 * when the config says so); F32, F16 and BF16 weights (converted to the
 * dtype asked for); EOS ids, one or a list, from either file. Anything
 * else that would change the computation (another model_type, hidden_act,
 * rope_type, sliding windows, quantization, partial rotary embeddings, a
 * tensor the model does not use) is refused with a message naming the key
 * or tensor.
 */
#ifndef LLAMA_MODEL_H
#define LLAMA_MODEL_H

#include <stdbool.h>
#include <stdint.h>

#include "webtensor.h"

#define LLAMA_MAX_EOS 16

typedef enum llama_rope_type { LLAMA_ROPE_DEFAULT, LLAMA_ROPE_LINEAR, LLAMA_ROPE_LLAMA3 } llama_rope_type;

typedef struct llama_config {
    char model_type[16]; /* "llama" or "qwen2" */
    int64_t vocab, dim, hidden, layers, heads, kv_heads, head_dim, max_pos;
    double eps, theta;
    llama_rope_type rope_type;
    /* linear and llama3: the factor; llama3: the band edges and the
     * context the model was trained on. */
    double rope_factor, low_freq_factor, high_freq_factor;
    int64_t rope_original_max_pos;
    bool tied;                  /* the LM head is the embedding table */
    bool qkv_bias, o_bias, mlp_bias;
    int n_eos;
    int32_t eos[LLAMA_MAX_EOS];
} llama_config;

typedef struct llama_layer {
    /* As the checkpoint has them while loading; then q, k, v are joined
     * into qkv [q_dim + 2 kv_dim, dim] and gate, up into gate_up [2 hidden,
     * dim] (their biases too), so that a step runs one GEMV for each group
     * (the parts are NULL after the load). */
    wt_tensor *in_norm, *q, *k, *v, *o, *post_norm, *gate, *up, *down;
    wt_tensor *q_bias, *k_bias, *v_bias, *o_bias, *gate_bias, *up_bias, *down_bias; /* NULL when absent */
    wt_tensor *qkv, *qkv_bias, *gate_up, *gate_up_bias;
    /* A GGUF file whose q, k and v differ in type (llama.cpp's Q4_K_M keeps
     * some v in Q6_K): qkv is NULL and its rows are these runs of parts of
     * one type each, in order, one product a run (joining them dense would
     * hold the layer's q, k and v in f32: a 7B model's Q4_K_M file would
     * need 3.2 GB more). */
    wt_tensor *qkv_runs[3];
    int n_qkv_runs;
    /* With runs and a batch of one: a decode step's q, k and v, [1, q_dim
     * + 2 kv_dim] f32, which the runs' products write into side by side
     * (wt_linear_fused_options.into) instead of being joined by copies:
     * two dispatches fewer a step for each such layer. NULL otherwise. */
    wt_tensor *qkv_step;
    /* [batch, 2 KV, max_seq, head_dim], f32: the keys' heads, then the
     * values' (wt_rope_kv_cache writes both); k_cache and v_cache are its
     * halves, [batch, KV, max_seq, head_dim] views. */
    wt_tensor *kv_cache, *k_cache, *v_cache;
} llama_layer;

/* A weight held in ggml's blocks (webtensor.h's i32 form), which
 * llama_linear runs through wt_linear_quant. */
typedef struct llama_quant_weight {
    const wt_tensor *w;
    wt_quant_type type;
} llama_quant_weight;

typedef struct llama {
    llama_config c;
    wt_dtype dtype;
    int64_t batch; /* sequences decoded together: rows of the KV caches */
    wt_tensor *embed, *norm, *head; /* head == embed when tied */
    llama_layer *layer;
    uint64_t weight_bytes; /* every weight on the device */
    uint64_t decode_bytes; /* weight bytes one decode step reads */
    llama_quant_weight *quant; /* the quantised weights (GGUF files); NULL when none */
    int n_quant;
} llama;

/* Reads DIR/config.json (and DIR/generation_config.json for EOS ids).
 * false with a message in err on a missing file, a missing or bad key, or
 * a feature not supported (the message names the key). */
bool llama_config_load(const char *dir, llama_config *c, char *err, size_t err_size);

/* The whole file at path, 0-terminated (free it); NULL when it cannot be
 * read. */
char *llama_read_text(const char *path);

/* Loads every weight in dtype (WT_F32 or WT_F16) and allocates the KV
 * caches of batch sequences of max_seq positions. On failure m is emptied; err has a
 * message of the loader's own when it found the fault (a shape, a missing
 * or unused tensor), else it is "" and wt_last_error() has the library's. */
wt_status llama_load(const char *dir, wt_context *ctx, wt_dtype dtype, int64_t batch, int64_t max_seq, llama *m,
                     char *err, size_t err_size);

void llama_free(llama *m);

bool llama_is_eos(const llama_config *c, int32_t token);

/* out = x @ w^T + bias: wt_linear, or wt_linear_quant when w is one of
 * m's quantised weights (llama_gguf.c). */
wt_status llama_linear(const llama *m, const wt_tensor *x, const wt_tensor *w, const wt_tensor *bias,
                       wt_tensor **out);

/* y's KV cache (zeros) for batch sequences of max_seq positions. */
wt_status llama_kv_cache(wt_context *ctx, const llama_config *c, int64_t batch, int64_t max_seq, llama_layer *y);

/* wt_linear_fused (an RMSNorm before, a SwiGLU and a residual add after,
 * in one kernel for a decode step); for a quantised w,
 * wt_linear_quant_fused. */
wt_status llama_linear_fused(const llama *m, const wt_tensor *x, const wt_tensor *w, const wt_tensor *bias,
                             const wt_linear_fused_options *opts, wt_tensor **out);

#endif /* LLAMA_MODEL_H */
