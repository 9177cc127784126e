/* Attention and its fused backward on the CPU through the BLAS, a block of
 * queries at a time (attention_blocks.c); attention.c and
 * attention_backward.c keep the one-row loops for what these do not take
 * and for WT_CPU_ATTENTION=rows. */
#ifndef WT_CPU_ATTENTION_BLOCKS_H
#define WT_CPU_ATTENTION_BLOCKS_H

#include "core/node.h"

/* Queries per block: one product of [64, D] by [D, Skv] keeps the BLAS's
 * register tiles full while the block's scores stay in the cache. */
#define CPU_ATTN_BLOCK_Q 64
/* Longest key range taken: a thread's scratch is then at most 2 x 64 x
 * 16384 floats (8 MiB). */
#define CPU_ATTN_MAX_KEYS 16384

/* Whether the forward of a (with Skv keys visible) runs in blocks. */
bool cpu_attention_blocks_fit(const wt_attention_args *a, int64_t Skv);
wt_status cpu_attention_blocks(wt_context *ctx, const wt_attention_args *a, int64_t Skv);

/* The fused backward on contiguous q, k, v and dout; fit: whether it runs
 * in blocks on this many threads. */
bool cpu_attention_backward_blocks_fit(const wt_tensor *q, const wt_tensor *k, const wt_tensor *v, int threads);
wt_status cpu_attention_backward_blocks(wt_context *ctx, const wt_tensor *q, const wt_tensor *k, const wt_tensor *v,
                                        const wt_tensor *dout, const float *lse, bool causal, float scale,
                                        wt_tensor *dq, wt_tensor *dk, wt_tensor *dv);

/* WT_CPU_ATTENTION=rows: the one-row loops everywhere. */
bool cpu_attention_rows_only(void);

#endif
