/* ggml's block formats (webtensor.h, "quantised weights"): the sizes every
 * layer shares. A weight [N, K] lives in an i32 tensor [N, W], each row's
 * blocks back to back and padded to a whole word. */
#ifndef WT_CORE_QUANT_H
#define WT_CORE_QUANT_H

#include "webtensor.h"

#include <stdint.h>

enum {
    WT_QUANT_BLOCK = 32,   /* elements per block of Q8_0 and Q4_0 */
    WT_QUANT_SUPER = 256,  /* elements per super-block of Q4_K and Q6_K */
    WT_QUANT_MAX_BLOCK = 256
};

/* Bytes of one block; 0 for a type that is not one of the enum's. */
static inline int wt_quant_block_bytes(wt_quant_type type)
{
    switch (type) {
    case WT_QUANT_Q8_0: return 34;
    case WT_QUANT_Q4_0: return 18;
    case WT_QUANT_Q4_K: return 144;
    case WT_QUANT_Q6_K: return 210;
    }
    return 0;
}

/* Elements of one block: 32, or 256 for the super-block formats. */
static inline int wt_quant_block_elems(wt_quant_type type)
{
    return type == WT_QUANT_Q4_K || type == WT_QUANT_Q6_K ? WT_QUANT_SUPER : WT_QUANT_BLOCK;
}

static inline const char *wt_quant_type_name(wt_quant_type type)
{
    switch (type) {
    case WT_QUANT_Q8_0: return "Q8_0";
    case WT_QUANT_Q4_0: return "Q4_0";
    case WT_QUANT_Q4_K: return "Q4_K";
    case WT_QUANT_Q6_K: return "Q6_K";
    }
    return "?";
}

/* W, the words of one row of K elements (K a multiple of the block). */
static inline int64_t wt_quant_row_words(wt_quant_type type, int64_t k)
{
    return (k / wt_quant_block_elems(type) * wt_quant_block_bytes(type) + 3) / 4;
}

/* The K that a row of W words holds, or -1 when no K gives W (the
 * padding is under 4 bytes, less than a block, so at most one does). */
static inline int64_t wt_quant_row_elems(wt_quant_type type, int64_t words)
{
    const int bb = wt_quant_block_bytes(type);
    if (bb == 0 || words <= 0) return -1;
    const int64_t k = words * 4 / bb * wt_quant_block_elems(type);
    return k > 0 && wt_quant_row_words(type, k) == words ? k : -1;
}

/* One super-block of 256 f32 values into dst (144 or 210 bytes), as
 * ggml's quantize_row_q4_K_ref / quantize_row_q6_K_ref (api/quant_kquants.c).
 * The values must be finite. */
void wt_quantize_block_q4_k(const float *x, uint8_t *dst);
void wt_quantize_block_q6_k(const float *x, uint8_t *dst);

#endif /* WT_CORE_QUANT_H */
