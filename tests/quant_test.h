/* The quantised-weights suite (quant.c runs it): the formats' reference
 * (quant_reference.c: block sizes, float64 elements of a block, readers,
 * random blocks) and the suites of quant_blocks.c (layout, dequantise,
 * quantise), quant_linear.c (the fused linear) and quant_fused.c (with
 * the norm, SwiGLU and residual around it). */
#ifndef WT_TEST_QUANT_H
#define WT_TEST_QUANT_H

#include "test_util.h"

#include <stdbool.h>
#include <stdint.h>

extern wt_context *g_ctx;
extern bool g_cpu; /* the backend under test is the CPU */

enum { Q8_BYTES = 34, Q4_BYTES = 18, Q4K_BYTES = 144, Q6K_BYTES = 210 };
extern const wt_quant_type all_types[4];
extern bool g_subnormal_scales; /* random_blocks: subnormal f16 scales (and Q4_K mins) */

int block_bytes(wt_quant_type t);
/* Elements per block. */
int block_elems(wt_quant_type t);
const char *quant_type_name(wt_quant_type t);
double half_field(const uint8_t *b);
/* Q4_K's 6-bit scale and min of sub-block s, as the format defines them. */
void q4k_sm(const uint8_t *S, int s, int *sc, int *m);
/* Element j of a block, in float64, from the format's definition; *mag
 * (when not NULL) gets the sum of the magnitudes of its terms (Q4_K's two
 * products), the scale of its rounding. Exact in float64 for the blocks
 * made here (d of at most 2^15, products of at most 40 bits). */
double ref_elem_mag(wt_quant_type t, const uint8_t *blk, int j, double *mag);
double ref_elem(wt_quant_type t, const uint8_t *blk, int j);
/* Element j of row r of n rows x k, in float64. */
double ref_at(wt_quant_type t, const uint8_t *blocks, int64_t k, int64_t r, int64_t j, double *mag);
/* The raw block bytes of a quantised tensor [n, W] (padding dropped). */
bool read_blocks(const wt_tensor *w, wt_quant_type t, int64_t n, int64_t k, uint8_t *dst);
float *read_f32(const wt_tensor *t);
/* Random blocks (random bytes, finite scales of both signs). */
void random_blocks(wt_quant_type t, int64_t n, int64_t k, uint8_t *dst);
/* Whether WebGPU's GEMV may round x to 8 bits for type t
 * (WT_QUANT_GEMV_X8, docs/KNOBS.md): 1 and 2 ask for it, 3 and the
 * default (auto) for all but Q6_K, 0 never. Said of the knob alone: the
 * backend and the row count are the caller's to check. */
bool x8_knob_on(wt_quant_type t);

/* The suites, in the order main runs them (the draws of one seed). */
void test_layout(void);
void test_dequant_hand(void);
void test_dequant_hand_q4k(void);
void test_dequant_hand_q6k(void);
void test_dequant_random(void);
void test_quant_hand(void);
void test_quant_roundtrip(void);
void test_quant_hand_kquants(void);
void test_quant_roundtrip_kquants(void);
void test_quant_golden_kquants(void);
void test_linear(void);
void test_linear_x8(void);
void test_linear_fused_quant(void);

#endif
