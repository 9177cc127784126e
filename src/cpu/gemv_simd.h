/* Matrix-vector products that read the weight in its stored form (f16,
 * ggml's Q8_0 and Q4_0 blocks) and convert it in registers: a decode
 * step's products are bound by the bytes read, so the weight must never be
 * widened to f32 in memory first. AVX2 + FMA + F16C where the processor
 * has them (checked at run time), portable loops otherwise. */
#ifndef WT_CPU_GEMV_SIMD_H
#define WT_CPU_GEMV_SIMD_H

#include "core/internal.h"

#include <stdint.h>

/* sum over j < k of a[j] * x[j], a f16 bits. Any k. */
float cpu_dot_f16(const uint16_t *a, const float *x, int64_t k);
/* The dot product of a row of nblocks Q8_0 / Q4_0 blocks (their bytes, in
 * file order) with x (32 * nblocks floats): sum of d * (sum of q * x) per
 * block, in f32. */
float cpu_dot_q8_0(const uint8_t *row, const float *x, int64_t nblocks);
float cpu_dot_q4_0(const uint8_t *row, const float *x, int64_t nblocks);
/* x rounded to 8 bits per block of 32, once per product, for the integer
 * dot (ggml's Q8_0 of x, with an f32 scale): per block b, d[b] = max|x| /
 * 127 and q = round(x / d[b]) in [-127, 127] (32 int8 at q + 32 b), and
 * sum[b] = the sum of those 32 q (the 4-bit weights' offset of 8 is taken
 * off through it). Each x element moves by at most d[b] / 2 = max|x| /
 * 254 of its block. */
typedef struct cpu_x8 {
    int8_t *q;
    float *d;
    int32_t *sum;
} cpu_x8;
/* Fills x8 from nblocks * 32 floats; false (x8 partly written) when x
 * holds an inf or a NaN, which 8-bit blocks cannot carry: the caller then
 * takes the f32 path, so that they reach the result as they would there;
 * false too for a block whose max|x| is nonzero but below 127 * 2^-100,
 * whose step times a weight's scale could leave f32's normal range. */
bool cpu_x8_quantize(const float *x, int64_t nblocks, cpu_x8 x8);
/* The integer dot of a row of Q8_0 / Q4_0 blocks with x8: per block the
 * 32 products of integers summed exactly in int32, then one f32 multiply-
 * add by d_w * d[b]. AVX-512 VNNI (vpdpbusd) where CPUID reports it,
 * AVX2 (vpmaddubsw + vpmaddwd) otherwise, portable loops elsewhere; every
 * path computes the same integer per block (but AVX-512 VNNI's Q4_0 loop,
 * which takes the offset 8 * (sum of x's q) off in f32, per sixteen
 * blocks). */
float cpu_dot_q8_0_x8(const uint8_t *row, cpu_x8 x8, int64_t nblocks);
float cpu_dot_q4_0_x8(const uint8_t *row, cpu_x8 x8, int64_t nblocks);
/* x rounded to 8 bits per super-block of 256 for the K-quant integer dot
 * (ggml's Q8_K, with an f32 scale): per super-block b, d[b] = max|x| /
 * 127 over its 256 elements and q = round(x / d[b]) in [-127, 127] (256
 * int8 at q + 256 b), and sum16[16 b + g] = the sum of the 16 q of
 * group g (Q4_K's mins and Q6_K's offset of 32 are taken off through
 * them, |sum| <= 2032). Each x element moves by at most d[b] / 2 =
 * max|x| / 254 of its super-block. */
typedef struct cpu_x8k {
    int8_t *q;
    float *d;
    int16_t *sum16;
} cpu_x8k;
/* Fills x8 from nblocks * 256 floats; false as cpu_x8_quantize. */
bool cpu_x8k_quantize(const float *x, int64_t nblocks, cpu_x8k x8);
/* The integer dot of a row of nblocks Q4_K / Q6_K super-blocks with x8:
 * per super-block the products of the quants (Q4_K's 4-bit, Q6_K's 6-bit
 * stored unsigned) with x's int8, weighted by the sub-block scales (Q4_K's
 * 6-bit, Q6_K's int8) and summed exactly in int32, the offsets (Q4_K's
 * 6-bit mins times sum16, Q6_K's 32 times sum16 times the scale) in int32
 * too; then one f32 multiply-add per super-block by d_w * d[b] (Q4_K's
 * mins by dmin * d[b]). AVX-512 VNNI (64 elements a step, vpdpwssd for
 * the scale step) where CPUID reports it, AVX2 (vpmaddubsw + vpmaddwd)
 * otherwise, portable loops elsewhere; every path computes the same
 * integer products (the SIMD ones keep eight or sixteen int32 partial sums
 * a super-block, so the f32 sums after them run in another order). */
float cpu_dot_q4_k_x8(const uint8_t *row, cpu_x8k x8, int64_t nblocks);
float cpu_dot_q6_k_x8(const uint8_t *row, cpu_x8k x8, int64_t nblocks);
/* The f32 dot of a row of nblocks Q4_K / Q6_K super-blocks (256 elements
 * each) with x, only where cpu_dot_kquant_wide() (AVX-512F) says so:
 * elsewhere the caller dequantises rows instead. */
bool cpu_dot_kquant_wide(void);
float cpu_dot_q4_k(const uint8_t *row, const float *x, int64_t nblocks);
float cpu_dot_q6_k(const uint8_t *row, const float *x, int64_t nblocks);

/* The f16 product out [1, M, N] = a [1, M, K] @ b [1, K, N] (+ bias [N]
 * f16 or NULL) when it is a matrix times a vector whose matrix rows are
 * unit-stride: N == 1 with a's K unit-stride, or M == 1 with b's K
 * unit-stride (a linear layer's transposed weight). Sums in f32, one
 * rounding to f16. WT_ERR_UNSUPPORTED (nothing written) for any other
 * shape, so that the caller takes the general path. */
wt_status cpu_gemv_f16(wt_context *ctx, const wt_tensor *a, const wt_tensor *b, const wt_tensor *bias,
                       wt_tensor *out);

#endif /* WT_CPU_GEMV_SIMD_H */
