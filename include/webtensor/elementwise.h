/* Section 8 of webtensor.h: elementwise ops, with broadcasting and promotion. */
#ifndef WEBTENSOR_ELEMENTWISE_H
#define WEBTENSOR_ELEMENTWISE_H

#include "errors.h"
#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ======== 8. Elementwise ================================================= */
/*
 * Broadcasting: NumPy's, for every operand (0-d tensors are scalars).
 * Promotion of two operands of different dtypes (NumPy-like, without
 * f64): bool < i32 < f16 < f32, and i32 with f16 gives f32 (f16 cannot
 * hold every i32; NumPy would give f64, PyTorch f16). A bool operand of
 * arithmetic counts as 0/1 of the other operand's dtype; arithmetic on two
 * bools is refused (WT_ERR_INVALID_ARGUMENT: use the logical ops).
 * Results are new contiguous tensors of the promoted dtype unless stated.
 *
 * dtypes: each op follows one of the rules below (the lists are
 * examples); `webtensor ops` prints every op's dtypes, and wt_op_support
 * answers at run time.
 *  - float math (e.g. exp log sigmoid gelu leaky_relu; div pow atan2):
 *    f32, f16; i32 and bool inputs are computed in f32 and give f32
 *    (NumPy's true division; pow of integers is not kept integral).
 *  - arithmetic exact on integers (e.g. neg abs relu clamp; add mul
 *    maximum floor_divide remainder): f32, f16, i32 (i32 results); bool
 *    refused (unary) or promoted (binary, see above).
 *  - rounding (e.g. floor ceil round): f32, f16; i32 is returned
 *    unchanged; bool refused.
 *  - comparisons eq ne lt le gt ge: any dtypes (promoted), WT_BOOL result.
 *  - logical_and/or/xor/not: any dtypes, x != 0 is true; WT_BOOL result.
 * i32 arithmetic wraps around (two's complement): add, sub, mul, neg,
 * square, abs(INT32_MIN) = INT32_MIN, INT32_MIN // -1 = INT32_MIN.
 *
 * Special values follow NumPy / C99: NaN propagates through every float op
 * (maximum/minimum/clamp/relu included: NaN in, NaN out); comparisons with
 * NaN are false except ne (defined on every backend: the GPU kernels test
 * NaN on the bits); round() ties to even; sign(+-0) = +-0, sign(NaN) = NaN.
 * gelu, silu, mish of -inf are NaN (x * 0, as PyTorch's formulas).
 * Accuracy: f32 ops agree with a float64 reference within 1.2e-5 relative
 * + 1e-6 absolute (tested on the CPU, Vulkan and OpenGL ES); exact: neg,
 * abs, sign, relu, square (i32), floor, ceil, round, clamp, maximum,
 * minimum, comparisons, logical ops. On GPUs the transcendental ops build
 * on WGSL's built-ins, whose accuracy the WebGPU spec bounds loosely
 * (e.g. sin/cos by an absolute error); sin and cos reduce their argument
 * first and are accurate for |x| up to about 1e4; pow is
 * exp2(b * log2|a|) there, with a relative error growing with |b log2 a|;
 * pow of a negative base is defined for integral exponents only (NaN
 * otherwise), as in C.
 * WebAssembly build: in a browser the GPU is whatever the page's
 * WebGPU offers (SwiftShader, a CPU renderer, in headless Chromium); WGSL
 * promises no NaN or inf behaviour, so NaN/inf results of the
 * transcendental ops (exp/log of special values) are the adapter's own
 * there. Chromium 156's SwiftShader gave the values above in every case of
 * the conformance suite (make test-wasm). */

/* Binary, NumPy broadcasting. div on a GPU divides as WGSL does: IEEE
 * results on the devices tested, but WGSL promises its accuracy only for
 * divisors of magnitude in [2^-126, 2^126] (not 0 or inf). */
WT_API wt_status wt_add(const wt_tensor *a, const wt_tensor *b, wt_tensor **out);
WT_API wt_status wt_sub(const wt_tensor *a, const wt_tensor *b, wt_tensor **out);
WT_API wt_status wt_mul(const wt_tensor *a, const wt_tensor *b, wt_tensor **out);
WT_API wt_status wt_div(const wt_tensor *a, const wt_tensor *b, wt_tensor **out);
/* NaN-propagating maximum / minimum (NumPy's maximum, not fmax). */
WT_API wt_status wt_maximum(const wt_tensor *a, const wt_tensor *b, wt_tensor **out);
WT_API wt_status wt_minimum(const wt_tensor *a, const wt_tensor *b, wt_tensor **out);
/* a ** b (C's pow: pow(x, 0) = 1 even for NaN x, pow(1, y) = 1). */
WT_API wt_status wt_pow(const wt_tensor *a, const wt_tensor *b, wt_tensor **out);
/* C's fmod: a - b * trunc(a / b), exact, with the sign of a; fmod(a, 0)
 * and fmod(inf, b) are NaN, fmod(a, inf) = a. */
WT_API wt_status wt_fmod(const wt_tensor *a, const wt_tensor *b, wt_tensor **out);
WT_API wt_status wt_atan2(const wt_tensor *a, const wt_tensor *b, wt_tensor **out);
/* Python's // and % (NumPy floor_divide / remainder): the quotient
 * rounded toward -inf and the remainder with the sign of b, computed as
 * NumPy does (from fmod, so the quotient is the floor of the exact one).
 * Division by zero: floats give +-inf or NaN (a // 0) and NaN (a % 0),
 * like NumPy; i32 gives 0 for both (NumPy also gives 0, with a warning). */
WT_API wt_status wt_floor_divide(const wt_tensor *a, const wt_tensor *b, wt_tensor **out);
WT_API wt_status wt_remainder(const wt_tensor *a, const wt_tensor *b, wt_tensor **out);
/* Comparisons: WT_BOOL results. */
WT_API wt_status wt_eq(const wt_tensor *a, const wt_tensor *b, wt_tensor **out);
WT_API wt_status wt_ne(const wt_tensor *a, const wt_tensor *b, wt_tensor **out);
WT_API wt_status wt_lt(const wt_tensor *a, const wt_tensor *b, wt_tensor **out);
WT_API wt_status wt_le(const wt_tensor *a, const wt_tensor *b, wt_tensor **out);
WT_API wt_status wt_gt(const wt_tensor *a, const wt_tensor *b, wt_tensor **out);
WT_API wt_status wt_ge(const wt_tensor *a, const wt_tensor *b, wt_tensor **out);
/* Logical ops: WT_BOOL results. */
WT_API wt_status wt_logical_and(const wt_tensor *a, const wt_tensor *b, wt_tensor **out);
WT_API wt_status wt_logical_or(const wt_tensor *a, const wt_tensor *b, wt_tensor **out);
WT_API wt_status wt_logical_xor(const wt_tensor *a, const wt_tensor *b, wt_tensor **out);
WT_API wt_status wt_logical_not(const wt_tensor *x, wt_tensor **out);

/* The binary ops with a scalar b that needs no tensor (no upload: on a
 * GPU the value travels with the kernel's parameters): the same results as
 * with a 0-d tensor b, except that b is "weak", as PyTorch's Python
 * numbers: it takes a's dtype when a is f32 or f16; beside an i32 or bool
 * tensor it is i32 when it is an integer in the i32 range, else f32
 * (i32 + 2.5 is f32). For the logical ops b is b != 0. */
WT_API wt_status wt_add_scalar(const wt_tensor *a, double b, wt_tensor **out);
WT_API wt_status wt_sub_scalar(const wt_tensor *a, double b, wt_tensor **out);
WT_API wt_status wt_mul_scalar(const wt_tensor *a, double b, wt_tensor **out);
WT_API wt_status wt_div_scalar(const wt_tensor *a, double b, wt_tensor **out);
WT_API wt_status wt_maximum_scalar(const wt_tensor *a, double b, wt_tensor **out);
WT_API wt_status wt_minimum_scalar(const wt_tensor *a, double b, wt_tensor **out);
WT_API wt_status wt_pow_scalar(const wt_tensor *a, double b, wt_tensor **out);
WT_API wt_status wt_fmod_scalar(const wt_tensor *a, double b, wt_tensor **out);
WT_API wt_status wt_atan2_scalar(const wt_tensor *a, double b, wt_tensor **out);
WT_API wt_status wt_floor_divide_scalar(const wt_tensor *a, double b, wt_tensor **out);
WT_API wt_status wt_remainder_scalar(const wt_tensor *a, double b, wt_tensor **out);
WT_API wt_status wt_eq_scalar(const wt_tensor *a, double b, wt_tensor **out);
WT_API wt_status wt_ne_scalar(const wt_tensor *a, double b, wt_tensor **out);
WT_API wt_status wt_lt_scalar(const wt_tensor *a, double b, wt_tensor **out);
WT_API wt_status wt_le_scalar(const wt_tensor *a, double b, wt_tensor **out);
WT_API wt_status wt_gt_scalar(const wt_tensor *a, double b, wt_tensor **out);
WT_API wt_status wt_ge_scalar(const wt_tensor *a, double b, wt_tensor **out);
WT_API wt_status wt_logical_and_scalar(const wt_tensor *a, double b, wt_tensor **out);
WT_API wt_status wt_logical_or_scalar(const wt_tensor *a, double b, wt_tensor **out);
WT_API wt_status wt_logical_xor_scalar(const wt_tensor *a, double b, wt_tensor **out);

/* Unary. */
WT_API wt_status wt_neg(const wt_tensor *x, wt_tensor **out);
WT_API wt_status wt_exp(const wt_tensor *x, wt_tensor **out);
WT_API wt_status wt_log(const wt_tensor *x, wt_tensor **out);
WT_API wt_status wt_sqrt(const wt_tensor *x, wt_tensor **out);
WT_API wt_status wt_relu(const wt_tensor *x, wt_tensor **out);
WT_API wt_status wt_sigmoid(const wt_tensor *x, wt_tensor **out);
WT_API wt_status wt_tanh(const wt_tensor *x, wt_tensor **out);
WT_API wt_status wt_abs(const wt_tensor *x, wt_tensor **out);
WT_API wt_status wt_sign(const wt_tensor *x, wt_tensor **out);
WT_API wt_status wt_floor(const wt_tensor *x, wt_tensor **out);
WT_API wt_status wt_ceil(const wt_tensor *x, wt_tensor **out);
/* Round half to even (NumPy's round, PyTorch's round). */
WT_API wt_status wt_round(const wt_tensor *x, wt_tensor **out);
WT_API wt_status wt_square(const wt_tensor *x, wt_tensor **out);
WT_API wt_status wt_reciprocal(const wt_tensor *x, wt_tensor **out);
/* 1 / sqrt(x). */
WT_API wt_status wt_rsqrt(const wt_tensor *x, wt_tensor **out);
WT_API wt_status wt_sin(const wt_tensor *x, wt_tensor **out);
WT_API wt_status wt_cos(const wt_tensor *x, wt_tensor **out);
WT_API wt_status wt_exp2(const wt_tensor *x, wt_tensor **out);
WT_API wt_status wt_log2(const wt_tensor *x, wt_tensor **out);
/* log(1 + x) and exp(x) - 1, accurate near 0. */
WT_API wt_status wt_log1p(const wt_tensor *x, wt_tensor **out);
WT_API wt_status wt_expm1(const wt_tensor *x, wt_tensor **out);
WT_API wt_status wt_erf(const wt_tensor *x, wt_tensor **out);
/* x * Phi(x) = 0.5 x (1 + erf(x / sqrt 2)) (PyTorch's gelu, approximate="none"). */
WT_API wt_status wt_gelu(const wt_tensor *x, wt_tensor **out);
/* 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) (approximate="tanh"). */
WT_API wt_status wt_gelu_tanh(const wt_tensor *x, wt_tensor **out);
/* x * sigmoid(x). */
WT_API wt_status wt_silu(const wt_tensor *x, wt_tensor **out);
/* log(1 + exp(x)), computed as max(x, 0) + log1p(exp(-|x|)) (no overflow). */
WT_API wt_status wt_softplus(const wt_tensor *x, wt_tensor **out);
/* x * tanh(softplus(x)). */
WT_API wt_status wt_mish(const wt_tensor *x, wt_tensor **out);
/* relu6(x + 3) / 6 and x * relu6(x + 3) / 6 (PyTorch's). */
WT_API wt_status wt_hardsigmoid(const wt_tensor *x, wt_tensor **out);
WT_API wt_status wt_hardswish(const wt_tensor *x, wt_tensor **out);
/* x / (1 + |x|) (ONNX Softsign); +-1 at +-inf. */
WT_API wt_status wt_softsign(const wt_tensor *x, wt_tensor **out);
/* x < 0 ? alpha * x : x. */
WT_API wt_status wt_leaky_relu(const wt_tensor *x, double alpha, wt_tensor **out);
/* x > 0 ? x : alpha * (exp(x) - 1). */
WT_API wt_status wt_elu(const wt_tensor *x, double alpha, wt_tensor **out);
/* min(max(x, lo), hi) (hi where lo > hi, like NumPy's clip); NaN stays NaN.
 * For i32 x the bounds are rounded inward to integers (ceil lo, floor
 * hi) and saturated to the i32 range. WT_ERR_INVALID_ARGUMENT for a NaN
 * bound. */
WT_API wt_status wt_clamp(const wt_tensor *x, double lo, double hi, wt_tensor **out);

/* mask ? a : b, all three broadcast together (NumPy's where). mask must be
 * WT_BOOL (WT_ERR_INVALID_ARGUMENT otherwise); a and b are promoted. */
WT_API wt_status wt_where(const wt_tensor *mask, const wt_tensor *a, const wt_tensor *b,
                          wt_tensor **out);
/* x with value where mask is true (PyTorch's masked_fill); mask (WT_BOOL)
 * broadcasts to x's shape; the result has x's shape and dtype (value
 * converted like wt_tensor_full). */
WT_API wt_status wt_masked_fill(const wt_tensor *x, const wt_tensor *mask, double value,
                                wt_tensor **out);

#ifdef __cplusplus
}
#endif
#endif /* WEBTENSOR_ELEMENTWISE_H */
