/* Section 6 of webtensor.h: dtypes and casts. */
#ifndef WEBTENSOR_DTYPES_H
#define WEBTENSOR_DTYPES_H

#include "errors.h"
#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ======== 6. Dtypes and casts ============================================ */
/*
 * WT_F32: IEEE binary32. WT_F16: IEEE binary16 (host data are uint16_t bit
 * patterns). WT_I32: int32_t. WT_BOOL: a mask, true or false; on the host
 * one byte per element (0 or 1, like NumPy's bool; from_data takes any
 * nonzero byte as true); on every backend one 4-byte word per element
 * (0 or 1), so that the 4-byte kernels (copy, gather, concat ...) serve
 * it and GPU threads never share a word.
 *
 * Views, copies, wt_tensor_read/from_data/zeros/full and wt_cast take every
 * dtype; the elementwise ops state theirs below; matmul, the reductions
 * (sum, mean, max, min) and the row-wise ops take f32 and f16. An op given
 * a dtype it does not take fails with WT_ERR_UNSUPPORTED (or
 * WT_ERR_INVALID_ARGUMENT where the op has no meaning for it) and a message
 * naming op and dtype; wt_op_support and `webtensor ops` list them all.
 * Ops on f16 inputs compute in f32 and round the result to f16; when an
 * op mixes f16 and f32 inputs the result is f32. */

/* A new contiguous tensor with x's elements converted to dtype (the same
 * dtype makes a copy). Every pair of f32, f16, i32, bool converts:
 *  - f32 -> f16 rounds to nearest, ties to even (f16 subnormals included);
 *    values beyond the f16 range become +-inf; a NaN stays a NaN. f16 ->
 *    f32 is exact.
 *  - f32/f16 -> i32 truncates toward zero; NaN becomes 0 and values beyond
 *    the i32 range saturate to INT32_MIN / INT32_MAX (NumPy leaves these
 *    undefined; PyTorch's CPU gives INT32_MIN).
 *  - i32 -> f32 rounds to nearest even (exact up to 2^24); i32 -> f16
 *    rounds once to nearest even, beyond +-65504 (after rounding) +-inf.
 *  - anything -> bool is x != 0 (NaN is true, -0 false, like NumPy);
 *    bool -> numbers is 0 or 1.
 * WT_ERR_INVALID_ARGUMENT for an unknown dtype. */
WT_API wt_status wt_cast(const wt_tensor *x, wt_dtype dtype, wt_tensor **out);

/* f32 subnormals (|x| < 2^-126). The CPU backend follows IEEE 754: it
 * keeps them as inputs and as results. WGSL lets a GPU flush them to zero
 * in arithmetic (as input or result), so on WebGPU an op whose inputs or
 * exact result are subnormal may compute as if they were +-0: x / x of a
 * subnormal x is 1 on the CPU and may be NaN (0 / 0) on a GPU; x * 2^-10
 * may be 0. Data movement (wt_copy, views, wt_contiguous, wt_tensor_read,
 * wt_cast to the same dtype) keeps every bit on both backends. Results
 * with normal inputs and normal exact results do not differ for this. */

#ifdef __cplusplus
}
#endif
#endif /* WEBTENSOR_DTYPES_H */
