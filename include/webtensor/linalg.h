/* Section 11 of webtensor.h: linear algebra, and weights quantised in ggml's blocks. */
#ifndef WEBTENSOR_LINALG_H
#define WEBTENSOR_LINALG_H

#include "errors.h"
#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ======== 11. Linear algebra ============================================= */

/* NumPy matmul: 1-D operands are promoted and the added axis removed;
 * batch axes broadcast. Transposed, sliced and broadcast views are read
 * through their strides (no copy on WebGPU unless batch axes do not fold
 * into one). f16 operands give an f16 result accumulated in f32 and
 * rounded once (on the CPU backend: computed in f32, then rounded).
 * WT_ERR_SHAPE when the inner extents or the batch axes do not fit;
 * WT_ERR_UNSUPPORTED beyond 32-bit indexing on WebGPU. */
WT_API wt_status wt_matmul(const wt_tensor *a, const wt_tensor *b, wt_tensor **out);

/* out = x @ w^T + bias, with w in [out_features, in_features] layout (the
 * PyTorch / safetensors convention), read in place through a transposed
 * view (never copied). x: [..., in_features]; bias: [out_features] or
 * NULL. Result [..., out_features]. */
WT_API wt_status wt_linear(const wt_tensor *x, const wt_tensor *w, const wt_tensor *bias,
                           wt_tensor **out);

/* What wt_linear_fused does around the product. */
typedef struct wt_linear_fused_options {
    uint32_t struct_size;
    /* RMSNorm of x over its last axis first (wt_rms_norm(x, 1, norm_weight,
     * norm_eps)); norm_weight [in_features] or NULL (no scale). */
    bool rms_norm;
    const wt_tensor *norm_weight;
    double norm_eps; /* 1e-6 */
    /* SwiGLU of the product (w's rows are gate then up, joined):
     * silu(y[..., :N/2]) * y[..., N/2:], N = out_features, even. */
    bool swiglu;
    /* NULL, or a tensor of the result's shape added last. */
    const wt_tensor *residual;
    /* The result in f32 whatever the inputs' dtypes (an f16 product's
     * sums never rounded to f16). */
    bool result_f32;
    /* GELU (erf form, wt_gelu) of the product's input first (after the
     * norm): a transformer MLP's second layer, fc2(gelu(h)). */
    bool input_gelu;
    /* NULL, or the tensor the result is written into (PyTorch's out=):
     * contiguous, of the result's shape and dtype, on x's context, and in
     * a storage of its own (none of the operands' storages); *out is then
     * into itself, one reference more (inside a scope: a new view of it
     * that the scope owns). Products written into neighbouring views of
     * one tensor make their concatenation without a copy (a decode step's
     * q|k and v where a GGUF file stores them in two types). The fused
     * kernels write it directly; the composition (and a kernel that
     * cannot) writes a new tensor and copies it in. Refused while autograd
     * records any operand. */
    wt_tensor *into;
} wt_linear_fused_options;

WT_API void wt_linear_fused_options_init(wt_linear_fused_options *opts);

/* A linear layer with its neighbours in one kernel where the backend has
 * one (WebGPU and CPU, for up to 16 rows of x: a decode step), else as the
 * composition of the public ops:
 *     h   = rms_norm ? wt_rms_norm(x, 1, norm_weight, norm_eps) : x
 *     h   = input_gelu ? wt_gelu(h) : h
 *     y   = h @ w^T + bias                      [..., N]
 *     y   = swiglu ? silu(y[.., :N/2]) * y[.., N/2:] : y
 *     out = y + residual   (residual NULL: y)
 * Tensors are f32 or f16, in any mix (the norm weight of x's dtype for the
 * fused kernel); the result has the residual's dtype when there is one,
 * else x's, or f32 with result_f32. The fused kernel computes in f32 and
 * rounds the result once, so with f16 tensors it differs from the
 * composition (which rounds after each op) in the last bits. Without
 * rms_norm and swiglu, f32 tensors of any number of rows: on WebGPU the
 * residual is added in the product's own stores (no pass of its own; a
 * transformer's attention output projection and fc2;
 * WT_MATMUL_EPILOGUE=0 turns that off), and autograd records the call as
 * one op. Otherwise recorded for autograd as the composition's ops. */
WT_API wt_status wt_linear_fused(const wt_tensor *x, const wt_tensor *w, const wt_tensor *bias,
                                 const wt_linear_fused_options *opts, wt_tensor **out);

/* --- quantised weights: ggml's block formats ---
 * A weight matrix [N, K] quantised in blocks of consecutive elements of a
 * row, the layouts of ggml and GGUF files (all multi-byte fields
 * little-endian, f16 fields IEEE binary16). K is a multiple of the block:
 * 32 for Q8_0 and Q4_0, 256 for the super-block formats Q4_K and Q6_K.
 *
 *   WT_QUANT_Q8_0: 34 bytes = f16 d, then 32 int8 q[i]; x[i] = q[i] * d.
 *   WT_QUANT_Q4_0: 18 bytes = f16 d, then 16 bytes qs[j]; element j is the
 *                  low nibble of qs[j], element j + 16 its high nibble;
 *                  x = (nibble - 8) * d.
 *   WT_QUANT_Q4_K: 144 bytes for 256 elements, eight sub-blocks of 32 with
 *                  a 6-bit scale sc[s] and a 6-bit min m[s] each:
 *                    bytes 0..1 f16 d, 2..3 f16 dmin, 4..15 the 12 bytes
 *                    S[0..11] of scales and mins, 16..143 the 128 bytes
 *                    qs[0..127] of nibbles.
 *                  For s < 4: sc[s] = S[s] & 63, m[s] = S[s+4] & 63; for
 *                  s >= 4: sc[s] = (S[s+4] & 15) | (S[s-4] >> 6) << 4,
 *                  m[s] = (S[s+4] >> 4) | (S[s] >> 6) << 4.
 *                  Element e (0..255): c = e / 64, l = e % 32, s = e / 32;
 *                  q = the low nibble of qs[32c + l] when e % 64 < 32,
 *                  else its high nibble; x = d*sc[s] * q - dmin*m[s].
 *   WT_QUANT_Q6_K: 210 bytes for 256 elements, sixteen sub-blocks of 16
 *                  with an int8 scale each:
 *                    bytes 0..127 ql[0..127] (low 4 bits), 128..191
 *                    qh[0..63] (high 2 bits), 192..207 int8 sc[0..15],
 *                    208..209 f16 d.
 *                  Element e: h = e / 128, g = e % 128 / 32, l = e % 32;
 *                  low = ql[64h + 32(g & 1) + l], its low nibble for g < 2,
 *                  else its high nibble; high = (qh[32h + l] >> 2g) & 3;
 *                  q = (low | high << 4) - 32 (-32 .. 31);
 *                  x = d * sc[8h + 2g + l/16] * q.
 *
 * Every Q8_0, Q4_0 and Q6_K value is exact in f32 (an f16 times integers
 * of at most 24 bits together); a Q4_K value is the f32 rounding of the
 * exact d*sc*q - dmin*m (both products are exact in f32, the difference
 * is rounded once). The enum values are ggml's type ids (GGUF's tensor
 * type field).
 *
 * The library holds such a weight in an ordinary WT_I32 tensor of shape
 * [N, W]: row n carries the K/B blocks of row n back to back (B the
 * block's elements), byte b of the row in bits 8*(b%4) .. 8*(b%4)+7 of
 * word b/4 (the bytes of the file, as a little-endian host reads them into
 * words), the row's last word padded with zero bytes. W = ceil(K/B *
 * block_bytes / 4). Why words:
 * 34, 18 and 210 are not multiples of 4, and GPU storage is read in 32-bit
 * words; padding each row to a word keeps every row starting on a word
 * so that a kernel finds row n at word n*W. A tensor of this form is
 * handled like any other (wt_tensor_to, wt_tensor_release, views of whole
 * rows); K follows from W and the type, and a [N, W] that no K gives is
 * refused. The ops below take the type with the tensor. */
typedef enum wt_quant_type {
    WT_QUANT_Q4_0 = 2,
    WT_QUANT_Q8_0 = 8,
    WT_QUANT_Q4_K = 12,
    WT_QUANT_Q6_K = 14
} wt_quant_type;

/* The quantised weight [N, K] of type from its ggml blocks in host memory
 * (what wt_gguf_read_raw gives for a GGUF tensor of dims {K, N}): bytes
 * must be exactly N * K/B * block_bytes. N > 0, K > 0 and a multiple of
 * the block's B elements (32, or 256 for Q4_K and Q6_K). */
WT_API wt_status wt_quant_from_blocks(wt_context *ctx, wt_quant_type type, int64_t n, int64_t k,
                                      const void *blocks, size_t bytes, wt_tensor **out);
/* Quantises x (f32 or f16, 2-D [N, K], K a multiple of the type's block:
 * 32, or 256 for Q4_K and Q6_K) into type, byte for byte as ggml's
 * reference quantisers (quantize_row_*_ref, what llama.cpp's quantize
 * tool does without an importance matrix):
 *   Q8_0: amax = max |x|, d = amax / 127, q = roundf(x * (1/d)) (halves
 *         away from zero; 0 when d == 0);
 *   Q4_0: m = the element of largest magnitude (the first of equals),
 *         d = m / -8, nibble = min(15, trunc(x * (1/d) + 8.5)) (0 .. 15);
 *   Q4_K: per sub-block of 32, a scale and a min (the min clamped to
 *         <= 0) fitted by ggml's search (make_qkx2_quants: 21 stretched
 *         scales over the range, each refined by weighted least squares,
 *         weights RMS + |x|, the least weighted squared error kept); the
 *         eight scales and mins stored as 6-bit multiples of d = max
 *         scale / 63 and dmin = max min / 63, and the nibbles requantised
 *         against the stored values: round((x + dmin*m) / (d*sc));
 *   Q6_K: per sub-block of 16, a symmetric scale from ggml's search
 *         (make_qx_quants: 19 stretched scales, least squares weighted by
 *         x^2), stored as int8 multiples of d (the largest of magnitude
 *         -128), the codes requantised against the stored values:
 *         round(x / (d*sc)) in -32 .. 31;
 * rounding to an integer is to nearest, ties to even (ggml's nearest_int)
 * except Q8_0's and Q4_0's stated above; every intermediate in f32 in the
 * reference's order; d computed in f32 and stored rounded to f16 (to
 * nearest, ties even). Runs on the host (a load-time step: x is read
 * back), on every backend. NaN or infinite elements are refused. */
WT_API wt_status wt_quantize(const wt_tensor *x, wt_quant_type type, wt_tensor **out);
/* w (the i32 form above) as a dense [N, K] tensor of dtype (WT_F32 or
 * WT_F16): the f32 values stated above (f16: those rounded to f16). */
WT_API wt_status wt_dequantize(const wt_tensor *w, wt_quant_type type, wt_dtype dtype, wt_tensor **out);
/* out = x @ W^T + bias, as wt_linear with the quantised w [N, K] never
 * made dense: x [..., K] and bias [N] or NULL (f32, or f16 through f32:
 * the result is f16 when every given one is), result [..., N]. One row of x (decode) runs a fused
 * dequantise-GEMV, several a tiled dequantise-GEMM; sums in f32.
 * Tolerance: on the CPU backend, weights of all four types with one to
 * four rows of x (decode) round x once per call to 8-bit blocks, as
 * llama.cpp does (a step d = max|x| / 127 and q = round(x / d) per 32
 * elements for Q8_0 and Q4_0, per super-block of 256 for Q4_K and Q6_K),
 * and sum integer products exactly: each result may then differ from
 * the f32 one by up to the sum over blocks of (sum of |w_j|) * max|x_j| /
 * 254 (half a step of x per element; the errors of independent
 * elements largely cancel, so typically far less).
 * WT_CPU_QUANT_DOT=f32 keeps x exact; x holding an inf or a NaN, or a
 * block whose max|x| is nonzero but below 127 * 2^-100 (about 1e-28),
 * always takes the exact path. On WebGPU, Q8_0, Q4_0 and Q4_K weights
 * with one to four rows of x and K a multiple of 64 (Q4_K: the weight
 * starting at a multiple of 16 bytes of its storage) round x the same way
 * per block of 32 by default, and Q4_0's offset 8 and Q4_K's mins meet
 * the rounded x as well (d_w d_x sum of (q_w - 8) q_x, as ggml's integer
 * dots; Q4_K's blocks of 32 take steps no larger than its super-block's):
 * the CPU's bound above; a block holding an inf or a NaN makes its
 * results NaN. Q6_K keeps f32 x unless WT_QUANT_GEMV_X8=3 (docs/KNOBS.md)
 * rounds it too (its offset 32 meeting the rounded x: the same bound);
 * 0 keeps f32 x for every type, and 1 or 2 round it for every type by a
 * pass of their own, each element's product then differing by at most
 * max |x| of its block / 254 times the weight's quant term (Q4_0: its
 * nibble times d). Other row counts: f32. */
WT_API wt_status wt_linear_quant(const wt_tensor *x, const wt_tensor *w, wt_quant_type type,
                                 const wt_tensor *bias, wt_tensor **out);
/* wt_linear_fused with a quantised weight w (wt_linear_quant's form and
 * type): the RMSNorm before the product, the SwiGLU and the residual add
 * after it as opts asks (NULL: none of them), that is
 *     h   = rms_norm ? wt_rms_norm(x, 1, norm_weight, norm_eps) : x
 *     y   = wt_linear_quant(h, w, type, bias)   [..., N]
 *     y   = swiglu ? silu(y[.., :N/2]) * y[.., N/2:] : y
 *     out = y + residual   (residual NULL: y)
 * with the result's dtype chosen as wt_linear_fused does. On WebGPU, for
 * up to 4 rows of f32 x (a decode step) with weights of any of the four
 * types, f32 bias, norm weight and residual, and x and the norm weight
 * starting at a multiple of 4 elements of their storage, one kernel does
 * it all,
 * the norm's 1/rms applied to the product's sums (so the result differs
 * from the composition's in the last bits; where x is rounded to 8 bits,
 * as wt_linear_quant says, the kernel rounds x times the norm weight, the
 * same rounding at that scale); elsewhere (an RMSNorm without a weight,
 * WT_QUANT_GEMV_X8 set to 1 or 2, WT_QUANT_GEMV_RPT=4, the CPU backend)
 * it is that composition. Recorded for autograd as the composition. */
WT_API wt_status wt_linear_quant_fused(const wt_tensor *x, const wt_tensor *w, wt_quant_type type,
                                       const wt_tensor *bias, const wt_linear_fused_options *opts,
                                       wt_tensor **out);
/* Embedding lookup in a quantised table (the i32 form above, [V, K]):
 * index (i32, any shape, entries in [0, V), checked as wt_embedding's)
 * -> [index..., K] of dtype (WT_F32 or WT_F16), each row dequantised as
 * wt_dequantize does. Only the rows looked up are made dense. */
WT_API wt_status wt_embedding_quant(const wt_tensor *table, wt_quant_type type, const wt_tensor *index,
                                    wt_dtype dtype, wt_tensor **out);

#ifdef __cplusplus
}
#endif
#endif /* WEBTENSOR_LINALG_H */
