/* Section 10 of webtensor.h: data movement: shapes, indexing, sorting. */
#ifndef WEBTENSOR_MOVEMENT_H
#define WEBTENSOR_MOVEMENT_H

#include "errors.h"
#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ======== 10. Data movement ============================================== */

/* Shape and data-movement ops. They move elements as they are, so every
 * dtype works (f32, f16, i32, bool) and results are exact.
 * Axes may be negative (counted from the end). Index tensors are WT_I32
 * (another dtype: WT_ERR_INVALID_ARGUMENT); an index outside its axis
 * (negative ones included: they do not wrap) is WT_ERR_INVALID_ARGUMENT and
 * never reads or writes out of bounds. On the CPU indices are checked as
 * they are read and the call fails. On the GPU every access is clamped and
 * a bad index raises a flag in a small device buffer that the context reads
 * at the next sync: gather, index_select, embedding, scatter_add, index_add
 * and one_hot return without waiting for the GPU, and the next
 * wt_context_sync or blocking read returns the error (section 3, "errors
 * and recovery"). */

/* concat joins n >= 1 tensors of one dtype and context along an existing
 * axis (other extents equal); stack along a new axis at position axis in
 * [-ndim-1, ndim] (shapes equal). The result is a new tensor.
 * WT_ERR_SHAPE for extents that differ, WT_ERR_INVALID_ARGUMENT for dtypes
 * that differ, bad axes, n < 1 or a NULL entry. */
WT_API wt_status wt_concat(int n, wt_tensor *const *xs, int axis, wt_tensor **out);
WT_API wt_status wt_stack(int n, wt_tensor *const *xs, int axis, wt_tensor **out);

/* torch.gather: out (index's shape) = x[..., index[i], ...] along axis;
 * index has x's ndim and, on every other axis, an extent <= x's. */
WT_API wt_status wt_gather(const wt_tensor *x, int axis, const wt_tensor *index, wt_tensor **out);
/* torch.index_select: index is 1-D (or 0-d, one entry); out is x with the
 * axis's extent replaced by the index count (a 0-d x takes one index and
 * gives a 0-d result). */
WT_API wt_status wt_index_select(const wt_tensor *x, int axis, const wt_tensor *index,
                                 wt_tensor **out);
/* Embedding lookup: table [V, D], index of any shape -> [index..., D]. */
WT_API wt_status wt_embedding(const wt_tensor *table, const wt_tensor *index, wt_tensor **out);
/* torch.scatter_add: out = x with src[i] added at [..., index[i], ...]
 * along axis (index has x's ndim; its extents are <= src's on every axis
 * and <= x's on the others; src elements past index's extents are not
 * used). index_add: out = x with src's slice i added at slice index[i]
 * along axis (index 1-D; src is x's shape with that extent = the index
 * count). Dtypes f32, f16 (each addition rounds to f16) and i32 (wraps);
 * src has x's dtype. Repeated indices accumulate. Determinism: the CPU
 * adds in index order; the GPU adds with atomic compare-and-swap loops, so
 * float sums over repeated indices may differ in the last bits between
 * runs (i32 sums are exact). */
WT_API wt_status wt_scatter_add(const wt_tensor *x, int axis, const wt_tensor *index,
                                const wt_tensor *src, wt_tensor **out);
WT_API wt_status wt_index_add(const wt_tensor *x, int axis, const wt_tensor *index,
                              const wt_tensor *src, wt_tensor **out);
/* one_hot: i32 index of any shape -> i32 [index..., num_classes] with 1 at
 * each index and 0 elsewhere. num_classes -1: max(index) + 1 (reads the
 * index back, a wait on the GPU). An index outside [0, num_classes):
 * WT_ERR_INVALID_ARGUMENT. */
WT_API wt_status wt_one_hot(const wt_tensor *index, int64_t num_classes, wt_tensor **out);

/* pad: pads holds npads (even, <= 2 * ndim) extents in torch.nn.functional.pad
 * order: (before, after) of the last axis, then of the one before it ...
 * Pads are >= 0 (negative: WT_ERR_INVALID_ARGUMENT). CONSTANT fills with
 * value (converted to x's dtype: f16 rounds to nearest even, i32 truncates
 * toward zero and must fit, bool is value != 0); REFLECT mirrors without
 * repeating the edge and needs each pad < the axis's extent (else
 * WT_ERR_INVALID_ARGUMENT, as PyTorch); REPLICATE repeats the edge and
 * needs a non-empty axis where it pads. */
typedef enum wt_pad_mode { WT_PAD_CONSTANT = 0, WT_PAD_REFLECT = 1, WT_PAD_REPLICATE = 2 } wt_pad_mode;
WT_API wt_status wt_pad(const wt_tensor *x, int npads, const int64_t *pads, wt_pad_mode mode,
                        double value, wt_tensor **out);
/* torch.Tensor.repeat: n >= ndim counts (>= 0); x is first viewed with
 * n - ndim leading axes of size 1. tile (numpy.tile / torch.tile): the same
 * with counts padded with leading 1s when n < ndim. */
WT_API wt_status wt_repeat(const wt_tensor *x, int n, const int64_t *repeats, wt_tensor **out);
WT_API wt_status wt_tile(const wt_tensor *x, int n, const int64_t *reps, wt_tensor **out);
/* flip reverses the listed axes (no repeats). roll shifts elements along
 * each listed axis (torch.roll; elements leaving one end enter the other);
 * naxes 0 rolls the flattened tensor by shifts[0] and keeps the shape. */
WT_API wt_status wt_flip(const wt_tensor *x, int naxes, const int *axes, wt_tensor **out);
WT_API wt_status wt_roll(const wt_tensor *x, int naxes, const int64_t *shifts, const int *axes,
                         wt_tensor **out);
/* tril / triu of the last two axes (ndim >= 2): keep elements with
 * col - row <= diagonal (tril) or >= diagonal (triu), zero the others. */
WT_API wt_status wt_tril(const wt_tensor *x, int64_t diagonal, wt_tensor **out);
WT_API wt_status wt_triu(const wt_tensor *x, int64_t diagonal, wt_tensor **out);

/* Sorting. Order: numbers by value, -0 equal to +0, NaN above +inf (NaNs
 * equal), false before true; descending reverses it (NaN first). Sorts are stable: equal
 * elements keep their order, so ties give the lower index first, also for
 * descending and for topk. sort writes the sorted values and, when indices
 * is not NULL, their positions (i32) along axis; argsort only the
 * positions. topk: the first k elements of that order along axis (the k
 * largest, descending, or the k smallest), values and i32 positions
 * (indices may be NULL); 0 <= k <= extent.
 * The GPU sorts (key, position) pairs with a bitonic network: rows up to
 * 2048 in workgroup memory, longer rows with global merge passes. */
WT_API wt_status wt_sort(const wt_tensor *x, int axis, bool descending, wt_tensor **values,
                         wt_tensor **indices);
WT_API wt_status wt_argsort(const wt_tensor *x, int axis, bool descending, wt_tensor **out);
WT_API wt_status wt_topk_v2(const wt_tensor *x, int64_t k, int axis, bool descending, wt_tensor **values,
                            wt_tensor **indices);

/* In place: dst = src, src broadcast to dst's shape (NumPy rules; dst's
 * shape does not change). dst may be any view (a slice of a KV cache, a
 * transposed view) but must not repeat elements (an expanded view:
 * WT_ERR_INVALID_ARGUMENT). A src of another float dtype is converted as
 * wt_cast does. Aliasing: when src and dst share storage and their element
 * ranges overlap, src is first copied to a temporary, so the result is as
 * if src were read entirely before dst is written. */
WT_API wt_status wt_copy_into(wt_tensor *dst, const wt_tensor *src);
/* dst's slice [s, s + n) along axis = src, where n is src's extent there
 * and s = start's one element (i32, any shape, read by the kernel on the
 * device) clamped to [0, extent - n], as XLA's dynamic_update_slice does.
 * src broadcasts (NumPy rules) to dst's shape with extent n on axis, and
 * is converted to dst's dtype; dst is updated in place (a view whose
 * elements are distinct). The write of a step's keys and values into a KV
 * cache at a position that changes per step, in a captured graph.
 * Not differentiable (either tensor requiring grad while recording:
 * WT_ERR_INVALID_ARGUMENT, as wt_copy_into). */
WT_API wt_status wt_copy_into_at(wt_tensor *dst, int axis, const wt_tensor *start, const wt_tensor *src);

#ifdef __cplusplus
}
#endif
#endif /* WEBTENSOR_MOVEMENT_H */
