/* Section 9 of webtensor.h: reductions and scans. */
#ifndef WEBTENSOR_REDUCTIONS_H
#define WEBTENSOR_REDUCTIONS_H

#include "errors.h"
#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ======== 9. Reductions and scans ======================================== */

/* Reductions over the listed axes (naxes 0: all axes). Negative axes count
 * from the end; an axis may not repeat. Over all axes without keepdims the
 * result is 0-d. max/min of an empty reduction is WT_ERR_SHAPE; the sum of
 * nothing is 0 and its mean NaN. */
WT_API wt_status wt_sum(const wt_tensor *x, int naxes, const int *axes, bool keepdims, wt_tensor **out);
WT_API wt_status wt_mean(const wt_tensor *x, int naxes, const int *axes, bool keepdims, wt_tensor **out);
WT_API wt_status wt_max(const wt_tensor *x, int naxes, const int *axes, bool keepdims, wt_tensor **out);
WT_API wt_status wt_min(const wt_tensor *x, int naxes, const int *axes, bool keepdims, wt_tensor **out);

/* More reductions, with the axes, keepdims and empty rules of wt_sum. Each
 * is one row of the library's reduction table (core/reduce_ops.def).
 * dtypes: f32 and f16 (f16 inputs are reduced in f32 and the result
 * rounded to f16); f32 results accumulate in f32 or better: double on the
 * CPU; on the GPU f32 with pairwise-like partials (tree order), so a sum of
 * K terms is within about 1e-7 * sqrt(K) * sum|terms| in practice and
 * never worse than K * 6e-8 * sum|terms|. A long f16 sum is therefore as
 * precise as the f32 sum of the same values, then rounded once to f16
 * (relative 4.9e-4); it overflows to inf only when the result exceeds
 * 65504.
 * WT_I32 inputs: sum, prod, max and min give WT_I32 results, sums and
 * products wrapping modulo 2^32 (two's complement; NumPy's
 * np.sum(x, dtype=np.int32)); the other reductions of an i32 tensor run on
 * its f32 values and give f32 (NumPy's mean). The sum and product of a
 * WT_BOOL mask are WT_I32 (the sum counts the true elements); the other
 * reductions refuse bool (WT_ERR_INVALID_ARGUMENT) except all, any, argmax
 * and argmin. Empty reductions: sum 0,
 * prod 1, mean/var/std NaN, logsumexp -inf, norms 0, all true, any false;
 * max, min, argmax and argmin of nothing are WT_ERR_SHAPE. */
WT_API wt_status wt_prod(const wt_tensor *x, int naxes, const int *axes, bool keepdims, wt_tensor **out);
/* var = sum((x - mean)^2) / (N - correction) over the N reduced elements
 * (correction 1: Bessel's, the sample variance; 0: the population one);
 * std = sqrt(var). correction >= 0 and finite, else
 * WT_ERR_INVALID_ARGUMENT; correction >= N divides by 0 like NumPy: inf,
 * or NaN where the sum is 0. Two passes (the mean, then the squares about
 * it): no cancellation. */
WT_API wt_status wt_var(const wt_tensor *x, int naxes, const int *axes, double correction,
                        bool keepdims, wt_tensor **out);
WT_API wt_status wt_std(const wt_tensor *x, int naxes, const int *axes, double correction,
                        bool keepdims, wt_tensor **out);
/* log(sum(exp(x))), computed as m + log(sum(exp(x - m))) with m the
 * maximum (0 where the maximum is infinite): never overflows; all -inf
 * gives -inf, a +inf gives +inf, a NaN gives NaN. */
WT_API wt_status wt_logsumexp(const wt_tensor *x, int naxes, const int *axes, bool keepdims,
                              wt_tensor **out);
/* Vector norm over the listed axes taken together (torch.linalg.vector_norm):
 * ord 1: sum |x|; ord 2: sqrt(sum x^2) (no rescaling: on the GPU squares
 * beyond the f32 range overflow to inf); ord INFINITY: max |x|. Other ord:
 * WT_ERR_INVALID_ARGUMENT. */
WT_API wt_status wt_norm(const wt_tensor *x, double ord, int naxes, const int *axes, bool keepdims,
                         wt_tensor **out);
/* Whether all (any) elements of a WT_BOOL mask are true; the result is a
 * WT_BOOL tensor. Other dtypes: WT_ERR_INVALID_ARGUMENT (compare first). */
WT_API wt_status wt_all(const wt_tensor *x, int naxes, const int *axes, bool keepdims, wt_tensor **out);
WT_API wt_status wt_any(const wt_tensor *x, int naxes, const int *axes, bool keepdims, wt_tensor **out);
/* Index (WT_I32) of the first maximum (minimum) over the listed axes: naxes
 * 0 gives the index into the flattened tensor (NumPy's axis=None), one axis
 * the index along it; several axes the row-major index within the block
 * they span. Ties: the first index. NaN: like NumPy, the first NaN's index
 * (a NaN counts as the maximum and as the minimum). f32, f16, i32 and bool
 * inputs. An empty reduction is WT_ERR_SHAPE; more than 2^31 - 1 elements
 * per output WT_ERR_UNSUPPORTED. */
WT_API wt_status wt_argmax(const wt_tensor *x, int naxes, const int *axes, bool keepdims, wt_tensor **out);
WT_API wt_status wt_argmin(const wt_tensor *x, int naxes, const int *axes, bool keepdims, wt_tensor **out);
/* Inclusive cumulative sum (product) along axis (negative counts from the
 * end); the result has x's shape. A 0-d x is treated as [1]. f32 and f16
 * (computed in f32: a double running value on the CPU, a blocked parallel
 * scan in f32 on the GPU); i32 gives i32, wrapping modulo 2^32; a WT_BOOL
 * mask gives i32 (the running count of true elements). */
WT_API wt_status wt_cumsum(const wt_tensor *x, int axis, wt_tensor **out);
WT_API wt_status wt_cumprod(const wt_tensor *x, int axis, wt_tensor **out);

#ifdef __cplusplus
}
#endif
#endif /* WEBTENSOR_REDUCTIONS_H */
