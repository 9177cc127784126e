/* ggml's block formats (webtensor.h, "quantised weights"): the sizes every
 * layer shares. A weight [N, K] lives in an i32 tensor [N, W], each row's
 * blocks back to back and padded to a whole word. */
#ifndef WT_CORE_QUANT_H
#define WT_CORE_QUANT_H

#include "webtensor.h"

#include <stdint.h>

enum { WT_QUANT_BLOCK = 32 }; /* elements per block, both formats */

/* Bytes of one block; 0 for a type that is not one of the enum's. */
static inline int wt_quant_block_bytes(wt_quant_type type)
{
    return type == WT_QUANT_Q8_0 ? 34 : type == WT_QUANT_Q4_0 ? 18 : 0;
}

/* W, the words of one row of K elements (K a multiple of 32). */
static inline int64_t wt_quant_row_words(wt_quant_type type, int64_t k)
{
    return (k / WT_QUANT_BLOCK * wt_quant_block_bytes(type) + 3) / 4;
}

/* The K that a row of W words holds, or -1 when no K gives W (the
 * padding is under 4 bytes, less than a block, so at most one does). */
static inline int64_t wt_quant_row_elems(wt_quant_type type, int64_t words)
{
    const int bb = wt_quant_block_bytes(type);
    if (bb == 0 || words <= 0) return -1;
    const int64_t k = words * 4 / bb * WT_QUANT_BLOCK;
    return k > 0 && wt_quant_row_words(type, k) == words ? k : -1;
}

#endif /* WT_CORE_QUANT_H */
