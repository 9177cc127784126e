/* Section 7 of webtensor.h: views and copies. */
#ifndef WEBTENSOR_VIEWS_H
#define WEBTENSOR_VIEWS_H

#include "errors.h"
#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ======== 7. Views and copies ============================================ */
/* Views share the input's storage; no data moves. */

/* Same elements, new shape. One entry of shape may be -1 (inferred). A view
 * of x when x is contiguous, else a view of a contiguous copy. */
WT_API wt_status wt_reshape(const wt_tensor *x, int ndim, const int64_t *shape, wt_tensor **out);
/* Axis i of the result is axis perm[i] of x. Negative axes count from the end. */
WT_API wt_status wt_permute(const wt_tensor *x, const int *perm, wt_tensor **out);
WT_API wt_status wt_transpose(const wt_tensor *x, int axis0, int axis1, wt_tensor **out);
/* Elements start, start+step, ... < stop along axis (step >= 1; start and
 * stop clamp like Python's slices, negative values count from the end). */
WT_API wt_status wt_slice(const wt_tensor *x, int axis, int64_t start, int64_t stop,
                          int64_t step, wt_tensor **out);
/* Broadcasts x to shape (NumPy rules) as a view with zero strides. */
WT_API wt_status wt_expand(const wt_tensor *x, int ndim, const int64_t *shape, wt_tensor **out);

/* A new contiguous tensor with x's elements (always a copy). */
WT_API wt_status wt_copy(const wt_tensor *x, wt_tensor **out);
/* x itself (one more reference) if contiguous, else wt_copy. Inside a
 * scope (see "scopes") a contiguous x gives a new view of it instead,
 * which the scope owns like any other result. */
WT_API wt_status wt_contiguous(const wt_tensor *x, wt_tensor **out);

/* Views. squeeze drops the listed axes of size 1 (a listed axis of another
 * size stays, as in PyTorch); naxes 0 drops every size-1 axis. unsqueeze
 * inserts an axis of size 1 at position axis in [-ndim-1, ndim]. flatten
 * merges axes start..end (inclusive) into one: a view when x is contiguous,
 * else of a contiguous copy (like wt_reshape); a 0-d x becomes [1]. */
WT_API wt_status wt_squeeze(const wt_tensor *x, int naxes, const int *axes, wt_tensor **out);
WT_API wt_status wt_unsqueeze(const wt_tensor *x, int axis, wt_tensor **out);
WT_API wt_status wt_flatten(const wt_tensor *x, int start_axis, int end_axis, wt_tensor **out);

/* split writes n views of x into outs[0..n-1]: sizes[i] consecutive
 * elements along axis each (sizes >= 0 summing to the extent, else
 * WT_ERR_SHAPE). chunk splits into at most chunks pieces of
 * ceil(extent / chunks) elements (the last smaller), as torch.chunk: it
 * writes *nout <= chunks views into outs (capacity chunks). On failure no
 * view is returned (outs entries NULL). */
WT_API wt_status wt_split(const wt_tensor *x, int axis, int n, const int64_t *sizes,
                          wt_tensor **outs);
WT_API wt_status wt_chunk(const wt_tensor *x, int axis, int chunks, int *nout, wt_tensor **outs);

#ifdef __cplusplus
}
#endif
#endif /* WEBTENSOR_VIEWS_H */
