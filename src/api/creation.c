/* Making tensors from host data and reading them back. */
#include "api/api.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static wt_status check_create(const char *fn, wt_context *ctx, wt_dtype dtype, int ndim,
                              const int64_t *shape, wt_tensor **out)
{
    wt_status st = wt_check_out(fn, out);
    if (st != WT_OK) return st;
    if (!ctx) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: ctx is NULL", fn);
    if (wt_dtype_size(dtype) == 0) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: unknown dtype %d", fn, (int)dtype);
    return wt_check_shape(fn, ndim, shape);
}

/* Host bools (one byte, nonzero = true) as the backends' 4-byte words,
 * from element offset of s. */
static wt_status upload_bools(wt_context *ctx, wt_storage *s, size_t offset, const uint8_t *data, size_t n)
{
    uint32_t *words = malloc(n * sizeof *words);
    if (!words)
        return wt_fail(WT_ERR_OUT_OF_MEMORY, "wt_tensor_from_data: out of host memory (%zu bytes)",
                       n * sizeof *words);
    for (size_t i = 0; i < n; i++) words[i] = data[i] != 0;
    wt_status st = ctx->ops->upload(ctx, s, offset * sizeof *words, words, n * sizeof *words);
    free(words);
    return st;
}

wt_status wt_tensor_from_data(wt_context *ctx, wt_dtype dtype, int ndim, const int64_t *shape,
                              const void *data, wt_tensor **out)
{
    wt_status st = check_create("wt_tensor_from_data", ctx, dtype, ndim, shape, out);
    if (st != WT_OK) return st;
    wt_tensor *t;
    st = wt_tensor_alloc(ctx, dtype, ndim, shape, &t);
    if (st != WT_OK) return st;
    size_t bytes = (size_t)t->numel * wt_dtype_size(dtype);
    if (bytes > 0) {
        if (!data) {
            wt_tensor_release(t);
            return wt_fail(WT_ERR_INVALID_ARGUMENT, "wt_tensor_from_data: data is NULL");
        }
        st = dtype == WT_BOOL ? upload_bools(ctx, t->storage, 0, data, (size_t)t->numel)
                              : ctx->ops->upload(ctx, t->storage, 0, data, bytes);
        if (st != WT_OK) {
            wt_tensor_release(t);
            return st;
        }
    }
    *out = t;
    return WT_OK;
}

wt_status wt_tensor_full(wt_context *ctx, wt_dtype dtype, int ndim, const int64_t *shape,
                         double value, wt_tensor **out)
{
    wt_status st = check_create("wt_tensor_full", ctx, dtype, ndim, shape, out);
    if (st != WT_OK) return st;
    wt_tensor *t;
    if (dtype == WT_F16) { /* the backends fill f32: fill, then round once */
        if ((st = wt_tensor_full(ctx, WT_F32, ndim, shape, value, &t)) != WT_OK) return st;
        st = wt_cast(t, WT_F16, out);
        wt_tensor_release(t);
        return st;
    }
    /* The value as the 32-bit word every element holds. */
    uint32_t bits;
    if (dtype == WT_I32) {
        if (isnan(value) || value <= -2147483649.0 || value >= 2147483648.0)
            return wt_fail(WT_ERR_INVALID_ARGUMENT, "wt_tensor_full: %g is not an i32 value", value);
        int32_t i = (int32_t)value; /* truncates toward zero */
        memcpy(&bits, &i, sizeof bits);
    } else if (dtype == WT_BOOL) {
        bits = value != 0.0; /* NaN is true */
    } else {
        float f = (float)value;
        memcpy(&bits, &f, sizeof bits);
    }
    st = wt_tensor_alloc(ctx, dtype, ndim, shape, &t);
    if (st != WT_OK) return st;
    if (t->numel > 0 && (st = wt_node_run(ctx, &(wt_node){.kind = WT_NODE_FILL, .out = {t}, .p.bits = bits})) != WT_OK) {
        wt_tensor_release(t);
        return st;
    }
    *out = t;
    return WT_OK;
}

wt_status wt_tensor_zeros(wt_context *ctx, wt_dtype dtype, int ndim, const int64_t *shape,
                          wt_tensor **out)
{
    return wt_tensor_full(ctx, dtype, ndim, shape, 0.0, out);
}

/* Reads n contiguous bools at element offset of s (4-byte words) as bytes. */
static wt_status download_bools(wt_context *ctx, wt_storage *s, size_t offset, uint8_t *dst, size_t n)
{
    uint32_t *words = malloc(n * sizeof *words);
    if (!words)
        return wt_fail(WT_ERR_OUT_OF_MEMORY, "wt_tensor_read: out of host memory (%zu bytes)", n * sizeof *words);
    wt_status st = ctx->ops->download(ctx, s, offset * sizeof *words, words, n * sizeof *words);
    for (size_t i = 0; st == WT_OK && i < n; i++) dst[i] = words[i] != 0;
    free(words);
    return st;
}

static wt_status download(wt_context *ctx, const wt_tensor *t, void *dst, size_t bytes)
{
    if (t->dtype == WT_BOOL) return download_bools(ctx, t->storage, (size_t)t->offset, dst, (size_t)t->numel);
    return ctx->ops->download(ctx, t->storage, (size_t)t->offset * wt_dtype_storage_size(t->dtype), dst, bytes);
}

wt_status wt_tensor_write(wt_tensor *t, const void *src, size_t src_bytes)
{
    if (!t) return wt_fail(WT_ERR_INVALID_ARGUMENT, "wt_tensor_write: tensor is NULL");
    size_t bytes;
    if (!wt_bytes_of(t->numel, wt_dtype_size(t->dtype), &bytes))
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "wt_tensor_write: %lld elements do not fit in memory",
                       (long long)t->numel);
    if (src_bytes != bytes)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "wt_tensor_write: %zu bytes given, the tensor takes %zu",
                       src_bytes, bytes);
    if (!wt_tensor_is_contiguous(t))
        return wt_fail(WT_ERR_INVALID_ARGUMENT,
                       "wt_tensor_write: the tensor is a strided view (write a contiguous tensor and "
                       "wt_copy_into the view)");
    if (bytes == 0) return WT_OK;
    if (!src) return wt_fail(WT_ERR_INVALID_ARGUMENT, "wt_tensor_write: src is NULL");
    wt_context *ctx = wt_ctx_of(t);
    wt_status st = t->dtype == WT_BOOL
                       ? upload_bools(ctx, t->storage, (size_t)t->offset, src, (size_t)t->numel)
                       : ctx->ops->upload(ctx, t->storage, (size_t)t->offset * wt_dtype_storage_size(t->dtype),
                                          src, bytes);
    /* Kernels that saved t for a backward pass must see it changed. */
    if (st == WT_OK) t->storage->version++;
    return st;
}

wt_status wt_tensor_read(const wt_tensor *t, void *dst, size_t dst_bytes)
{
    if (!t) return wt_fail(WT_ERR_INVALID_ARGUMENT, "wt_tensor_read: tensor is NULL");
    size_t esize = wt_dtype_size(t->dtype);
    size_t bytes;
    if (!wt_bytes_of(t->numel, esize, &bytes))
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "wt_tensor_read: %lld elements do not fit in memory",
                       (long long)t->numel);
    if (bytes == 0) return WT_OK;
    if (!dst) return wt_fail(WT_ERR_INVALID_ARGUMENT, "wt_tensor_read: dst is NULL");
    if (dst_bytes < bytes)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "wt_tensor_read: dst holds %zu bytes, the tensor needs %zu",
                       dst_bytes, bytes);
    wt_context *ctx = wt_ctx_of(t);
    if (wt_tensor_is_contiguous(t)) return download(ctx, t, dst, bytes);
    /* A view: gather it on the device first, then read the compact copy. */
    wt_tensor *c;
    wt_status st = wt_tensor_alloc(ctx, t->dtype, t->ndim, t->shape, &c);
    if (st != WT_OK) return st;
    /* The backends' copy is f32's; cast copies any dtype. A read is no
     * op of the graph: not recorded. */
    ctx->grad_paused++;
    if (t->dtype == WT_F32)
        st = wt_node_run(ctx, &(wt_node){.kind = WT_NODE_COPY, .in = {t}, .out = {c}});
    else
        st = wt_backend_runs(ctx, WT_NODE_CAST) ? wt_node_run(ctx, &(wt_node){.kind = WT_NODE_CAST, .in = {t}, .out = {c}})
                            : wt_fail(WT_ERR_UNSUPPORTED, "wt_tensor_read: no cast on the %s backend",
                                      ctx->ops->name);
    ctx->grad_paused--;
    if (st == WT_OK) st = download(ctx, c, dst, bytes);
    wt_tensor_release(c);
    return st;
}

static wt_status host_memory_dtype(const char *fn, wt_context *ctx, wt_dtype dtype)
{
    if (ctx->kind != WT_BACKEND_CPU)
        return wt_fail(WT_ERR_UNSUPPORTED, "%s: the %s backend's memory is not host memory (copy with "
                       "wt_tensor_read / wt_tensor_from_data)", fn, ctx->ops->name);
    if (dtype == WT_BOOL)
        return wt_fail(WT_ERR_UNSUPPORTED, "%s: bool elements are stored as 4-byte words, not the host's "
                       "bytes (copy with wt_tensor_read / wt_tensor_from_data)", fn);
    return WT_OK;
}

wt_status wt_tensor_host_data(wt_tensor *t, void **data)
{
    if (data) *data = NULL;
    if (!t) return wt_fail(WT_ERR_INVALID_ARGUMENT, "wt_tensor_host_data: tensor is NULL");
    if (!data) return wt_fail(WT_ERR_INVALID_ARGUMENT, "wt_tensor_host_data: data is NULL");
    wt_context *ctx = wt_ctx_of(t);
    wt_status st = host_memory_dtype("wt_tensor_host_data", ctx, t->dtype);
    if (st != WT_OK) return st;
    *data = (char *)t->storage->host + (size_t)t->offset * wt_dtype_storage_size(t->dtype);
    return WT_OK;
}

wt_status wt_tensor_from_host_memory(wt_context *ctx, wt_dtype dtype, int ndim, const int64_t *shape,
                                     const int64_t *strides, void *data, wt_host_release_fn release,
                                     void *user_data, wt_tensor **out)
{
    const char *fn = "wt_tensor_from_host_memory";
    wt_status st = check_create(fn, ctx, dtype, ndim, shape, out);
    if (st != WT_OK) return st;
    if ((st = host_memory_dtype(fn, ctx, dtype)) != WT_OK) return st;
    const size_t esize = wt_dtype_size(dtype);
    int64_t own[WT_MAX_DIMS];
    if (!strides) {
        wt_contiguous_strides(ndim, shape, own);
        strides = own;
    }
    /* The highest element reached, checked against overflow; an empty
     * tensor reaches none. */
    bool empty = false;
    uint64_t last = 0;
    for (int d = 0; d < ndim; d++) {
        if (strides[d] < 0)
            return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: strides[%d] is %lld (negative strides are not "
                           "supported)", fn, d, (long long)strides[d]);
        if (shape[d] == 0) empty = true;
    }
    for (int d = 0; d < ndim && !empty; d++) {
        uint64_t span = (uint64_t)(shape[d] - 1);
        if (span && (uint64_t)strides[d] > (UINT64_MAX / 2 - last) / span)
            return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: shape and strides reach past the address space", fn);
        last += span * (uint64_t)strides[d];
    }
    size_t bytes = 0;
    if (!empty && (last >= (uint64_t)SIZE_MAX / esize - 1 || !wt_mul_size((size_t)last + 1, esize, &bytes)))
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: shape and strides reach past the address space", fn);
    if (!empty && !data) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: data is NULL", fn);
    if ((uintptr_t)data % esize != 0)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: data %p is not aligned to its %zu-byte elements", fn,
                       data, esize);
    return wt_tensor_borrow(ctx, dtype, ndim, shape, strides, data, bytes, release, user_data, out);
}
