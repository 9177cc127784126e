/* Section 5 of webtensor.h: tensors: make, read, inspect, and host memory shared with them. */
#ifndef WEBTENSOR_TENSOR_H
#define WEBTENSOR_TENSOR_H

#include "errors.h"
#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ======== 5. Tensors: make, read, inspect ================================ */

/* New tensor holding a copy of data (row-major, dtype elements as the host
 * sees them: float, uint16_t f16 bits, int32_t, or one byte per WT_BOOL
 * element where any nonzero byte is true). */
WT_API wt_status wt_tensor_from_data(wt_context *ctx, wt_dtype dtype, int ndim,
                                     const int64_t *shape, const void *data, wt_tensor **out);
WT_API wt_status wt_tensor_zeros(wt_context *ctx, wt_dtype dtype, int ndim,
                                 const int64_t *shape, wt_tensor **out);
/* Every element = value, converted to dtype: f32/f16 round to nearest;
 * WT_I32 truncates toward zero (WT_ERR_INVALID_ARGUMENT for NaN or a value
 * outside the i32 range); WT_BOOL is value != 0 (NaN is true). */
WT_API wt_status wt_tensor_full(wt_context *ctx, wt_dtype dtype, int ndim,
                                const int64_t *shape, double value, wt_tensor **out);
/* The creation functions below: dtype WT_F32, WT_F16 (or WT_I32 where
 * said). Values are computed in double on the host and rounded once to the
 * dtype. */
WT_API wt_status wt_tensor_ones(wt_context *ctx, wt_dtype dtype, int ndim, const int64_t *shape,
                                wt_tensor **out);
/* 1-D: start, start + step, ... while < stop (> stop for a negative step);
 * NumPy's length ceil((stop - start) / step), 0 when negative. Element i is
 * start + i * step in double, rounded to dtype (f32, f16, i32: i32 needs
 * integral start and step). step 0, a non-finite argument or a length
 * beyond 2^31 elements: WT_ERR_INVALID_ARGUMENT. */
WT_API wt_status wt_tensor_arange(wt_context *ctx, wt_dtype dtype, double start, double stop, double step,
                                  wt_tensor **out);
/* 1-D, num values evenly spaced from start to stop (endpoint: stop is the
 * last; else num intervals that end before it). NumPy's rule: element i is
 * start + i * delta, the last one exactly stop when endpoint. num >= 0. */
WT_API wt_status wt_tensor_linspace(wt_context *ctx, wt_dtype dtype, double start, double stop, int64_t num,
                                    bool endpoint, wt_tensor **out);
/* [n, m] with ones on diagonal k (0 main, > 0 above, < 0 below), zeros
 * elsewhere. n, m >= 0. */
WT_API wt_status wt_tensor_eye(wt_context *ctx, wt_dtype dtype, int64_t n, int64_t m, int64_t k,
                               wt_tensor **out);
/* Random tensors from a 64-bit seed through Philox4x32-10 (counter-based:
 * element i of the row-major result takes word i % 4 of the block
 * Philox(counter = (i / 4, 0), key = seed)). The same seed and shape give
 * the same bits on the CPU and on every GPU, and element i does not depend
 * on the shape. wt_tensor_rand: uniform in [0, 1) on a grid of 2^-24
 * (f32) or 2^-11 (f16). wt_tensor_randn: standard normal by an inverse-CDF
 * table in integer arithmetic (within 2e-6 of the exact quantile, on a grid of
 * 2^-21, |value| <= 6.24); f16 results are the f32 values rounded. */
WT_API wt_status wt_tensor_rand(wt_context *ctx, wt_dtype dtype, int ndim, const int64_t *shape,
                                uint64_t seed, wt_tensor **out);
WT_API wt_status wt_tensor_randn(wt_context *ctx, wt_dtype dtype, int ndim, const int64_t *shape,
                                 uint64_t seed, wt_tensor **out);

/* Copies src_bytes of host data (row-major, as wt_tensor_from_data takes
 * it: WT_BOOL one byte per element) into t, which must be contiguous;
 * src_bytes must be numel * wt_dtype_size(dtype). The new values are what
 * later work reads (inputs of a captured graph are changed this way).
 * Returns before the copy reaches the device. */
WT_API wt_status wt_tensor_write(wt_tensor *t, const void *src, size_t src_bytes);

/* Copies the tensor's elements, row-major, into dst (views are gathered).
 * dst_bytes must be at least numel * wt_dtype_size(dtype) (WT_BOOL: one
 * byte per element, 0 or 1). Waits for the GPU. */
WT_API wt_status wt_tensor_read(const wt_tensor *t, void *dst, size_t dst_bytes);

/* --- host memory shared with the caller (CPU backend) ---
 *
 * For zero-copy exchange with other array libraries (DLPack, NumPy's
 * buffers). Both are WT_ERR_UNSUPPORTED on a WebGPU context and for
 * WT_BOOL (whose elements are stored as 4-byte words, not the host's
 * bytes); use wt_tensor_read / wt_tensor_from_data there.
 *
 * wt_tensor_host_data: *data = the address of t's first element (its
 * offset applied) in the CPU backend's memory, where element i of the
 * view is at data + sum(index[d] * wt_tensor_strides(t)[d]) elements. The
 * memory lives as long as t or any view of its storage; CPU ops finish
 * before they return, so it holds every result already made. Writes
 * through it are seen by later ops but not by autograd's check that a
 * saved tensor was not modified. */
WT_API wt_status wt_tensor_host_data(wt_tensor *t, void **data);
/* Called once, when the last tensor over lent memory is released. */
typedef void (*wt_host_release_fn)(void *user_data);
/* A tensor over the caller's host memory, no copy: element i of the
 * result is at data + sum(index[d] * strides[d]) elements (strides >= 0,
 * in elements; NULL: row-major contiguous). dtype WT_F32, WT_F16 or
 * WT_I32; data aligned to the element size (it may be NULL only when the
 * tensor has no elements). The tensor and its views read and write that
 * memory; when the last of them is released, release(user_data) is
 * called (release may be NULL: the caller keeps the memory alive longer
 * than the tensors). On failure release is not called. The memory is not
 * counted in wt_memory_stats.live_bytes (the storage is, in live_tensors)
 * nor against memory_limit. */
WT_API wt_status wt_tensor_from_host_memory(wt_context *ctx, wt_dtype dtype, int ndim,
                                            const int64_t *shape, const int64_t *strides, void *data,
                                            wt_host_release_fn release, void *user_data,
                                            wt_tensor **out);

WT_API int            wt_tensor_ndim(const wt_tensor *t);
WT_API const int64_t *wt_tensor_shape(const wt_tensor *t);
WT_API const int64_t *wt_tensor_strides(const wt_tensor *t); /* in elements */
WT_API int64_t        wt_tensor_offset(const wt_tensor *t);  /* in elements */
WT_API int64_t        wt_tensor_numel(const wt_tensor *t);
WT_API wt_dtype       wt_tensor_dtype(const wt_tensor *t);
WT_API bool           wt_tensor_is_contiguous(const wt_tensor *t);
WT_API wt_context    *wt_tensor_context(const wt_tensor *t);
/* Bytes of one element as the host sees it (wt_tensor_from_data,
 * wt_tensor_read): 4, 2, 4, 1 for f32, f16, i32, bool; 0 for an unknown
 * dtype. */
WT_API size_t         wt_dtype_size(wt_dtype dtype);
/* "f32", "f16", "i32", "bool"; "?" for an unknown dtype. */
WT_API const char    *wt_dtype_name(wt_dtype dtype);
WT_API void wt_tensor_retain(wt_tensor *t);
WT_API void wt_tensor_release(wt_tensor *t); /* NULL is ignored */

#ifdef __cplusplus
}
#endif
#endif /* WEBTENSOR_TENSOR_H */
