/*
 * A Llama model from a GGUF file (llama.cpp's format): the configuration
 * from the llama.* metadata, the weights from the tensors llama.cpp names
 * (token_embd, blk.N.attn_q ..., output_norm, output; no output tensor:
 * tied to the embedding), in F32, F16, BF16 (converted to the dtype asked
 * for) or in ggml's Q8_0, Q4_0, Q4_K and Q6_K blocks, which stay
 * quantised on the device and run through wt_linear_quant (llama_linear).
 * As for a checkpoint, q, k and v are joined into one weight and gate and
 * up into another (one GEMV each): blocks of one type join as blocks, a
 * group of mixed types is made dense. The embedding table is made dense
 * (a tied head keeps the blocks).
 *
 * GGUF stores the rows of attn_q and attn_k permuted: llama.cpp's
 * converter reorders each head's rows from Hugging Face's rotate_half
 * layout (row half * head_dim/2 + j, half 0 or 1) to the interleaved pairs
 * its RoPE rotates (row 2j + half): it reshapes the rows as [heads, 2,
 * head_dim/2], swaps the two inner axes and flattens again (the heads of
 * attn_k are the KV heads). The loader moves the rows back (one
 * index_select per weight, quantised rows included: a block holds a piece
 * of one row), so the rotate_half RoPE of the forward pass applies as to a
 * Hugging Face checkpoint.
 *
 * Refused with a message naming the key or tensor: another
 * general.architecture, RoPE scaling (llama.rope.scaling.type other than
 * none, a rope_freqs tensor), a rotary dimension other than head_dim, a
 * tensor type other than those above, and any tensor the model does not
 * use.
 */
#ifndef LLAMA_GGUF_H
#define LLAMA_GGUF_H

#include <stdbool.h>
#include <stddef.h>

#include "llama_model.h"

/* Reads the configuration of the GGUF file at path (EOS: the file's
 * tokenizer.ggml.eos_token_id). false with a message in err. */
bool llama_gguf_config(const char *path, llama_config *c, char *err, size_t err_size);

/* llama_load for a GGUF file: every weight onto ctx (F32 / F16 / BF16 in
 * dtype, quantised ones as blocks), the KV caches of batch sequences of
 * max_seq positions. m->c must hold llama_gguf_config's result. */
wt_status llama_gguf_load(const char *path, wt_context *ctx, wt_dtype dtype, int64_t batch, int64_t max_seq,
                          llama *m, char *err, size_t err_size);

#endif /* LLAMA_GGUF_H */
