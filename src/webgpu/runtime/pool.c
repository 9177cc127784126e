/* Storage buffers by size class. Freed tensors return their buffer to the
 * pool; a later allocation of the same class takes it back without a
 * device call. Classes are powers of two with four steps between them
 * (at most 25% waste), at least 256 bytes, always a multiple of 16 so
 * vec4 kernels may read a whole last vector. */
#include "webgpu/wg_runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Pooled memory is kept without a cap by default, like the caching
 * allocators of other GPU tensor libraries: handing big buffers back to the
 * driver and creating them again on the next op costs far more than the op
 * (measured on an H200: 2^28-float adds with a 2 GiB cap churned a 1 GiB
 * buffer per op, and the ops after that ran 100x slower while the freed
 * memory was being reclaimed). An allocation that fails trims the pool and
 * retries; wt_context_trim gives everything back; WT_WEBGPU_POOL_LIMIT_MB
 * sets a cap. */
static uint64_t pool_limit(wg_context *w)
{
    if (w->pool.limit == 0) { /* read once per context */
        const char *v = wt_knob_text(WT_KNOB_WEBGPU_POOL_LIMIT_MB);
        char *end = NULL;
        unsigned long long mb = v ? strtoull(v, &end, 10) : 0;
        w->pool.limit = (v && *v && !*end && mb > 0) ? (uint64_t)mb << 20 : UINT64_MAX;
    }
    return w->pool.limit;
}

static uint64_t round_up(uint64_t x, uint64_t m) { return (x + m - 1) / m * m; }

static uint64_t size_class(uint64_t bytes, uint64_t max_binding)
{
    uint64_t need = round_up(bytes ? bytes : 1, 16);
    if (need < 256)
        need = 256;
    uint64_t p = 256;
    while (p * 2 <= need)
        p *= 2;
    uint64_t cls = round_up(need, p / 4);
    /* Near the binding limit the class could overshoot it; the exact size
     * still binds. */
    if (cls > max_binding && need <= max_binding)
        cls = need;
    return cls;
}

wt_status wg_create_buffer(wt_context *ctx, uint64_t size, WGPUBufferUsage usage,
                           const char *label, WGPUBuffer *out)
{
    wg_context *w = wg_ctx(ctx);
    *out = NULL;
    WGPUBufferDescriptor desc;
    memset(&desc, 0, sizeof desc);
    desc.label = (WGPUStringView){label, WGPU_STRLEN};
    desc.usage = usage;
    desc.size = size;
    w->lib.p.DevicePushErrorScope(w->device, WGPUErrorFilter_OutOfMemory);
    w->lib.p.DevicePushErrorScope(w->device, WGPUErrorFilter_Validation);
    WGPUBuffer b = w->lib.p.DeviceCreateBuffer(w->device, &desc);
    wt_status validation = wg_pop_error_scope(ctx, WT_ERR_BACKEND, "creating a buffer");
    wt_status oom = wg_pop_error_scope(ctx, WT_ERR_OUT_OF_MEMORY, "creating a buffer");
    wt_status st = validation != WT_OK ? validation : oom;
    if (st == WT_OK && !b)
        st = wt_fail(WT_ERR_OUT_OF_MEMORY, "webgpu: creating a buffer of %llu bytes failed",
                     (unsigned long long)size);
    if (st != WT_OK) {
        if (st == WT_ERR_OUT_OF_MEMORY) {
            char detail[512];
            snprintf(detail, sizeof detail, "%s", wt_last_error());
            wt_fail(st,
                    "webgpu: out of device memory: requested a buffer of %llu bytes, available: "
                    "not reported by WebGPU (this context holds %llu bytes live, %llu pooled) (%s)",
                    (unsigned long long)size, (unsigned long long)ctx->stats.live_bytes,
                    (unsigned long long)ctx->stats.pooled_bytes, detail);
        }
        if (b)
            w->lib.p.BufferRelease(b);
        return st;
    }
    *out = b;
    return WT_OK;
}

static void buffer_free(wt_context *ctx, wg_buffer *b)
{
    wg_context *w = wg_ctx(ctx);
    /* Cached bind groups hold the buffer alive; drop them first. Pending
     * command buffers keep their own references, so releasing is safe
     * while work that uses the buffer is still queued. */
    wg_bind_groups_forget(ctx, b->buffer);
    w->lib.p.BufferRelease(b->buffer);
    free(b);
    ctx->stats.buffers--;
}

static wg_buffer *take_pooled(wg_context *w, uint64_t size)
{
    /* Newest first: its memory is likeliest to be warm. */
    for (int i = w->pool.count - 1; i >= 0; i--) {
        wg_buffer *b = w->pool.free_list[i];
        if (b->size != size)
            continue;
        w->pool.free_list[i] = w->pool.free_list[w->pool.count - 1];
        w->pool.count--;
        w->pool.pooled_bytes -= b->size;
        return b;
    }
    return NULL;
}

wt_status wg_pool_acquire(wt_context *ctx, size_t bytes, wg_buffer **out)
{
    wg_context *w = wg_ctx(ctx);
    *out = NULL;
    if (bytes > w->max_buffer)
        return wt_fail(WT_ERR_OUT_OF_MEMORY,
                       "webgpu: requested %zu bytes, available %llu: more than the largest buffer "
                       "of this context (%s)",
                       bytes, (unsigned long long)w->max_buffer,
                       w->max_buffer < w->limits.maxBufferSize ? "max_buffer_size option"
                                                               : "the device's maxBufferSize");
    /* Tensors past maxStorageBufferBindingSize live in one buffer and are
     * bound in windows (windows.c). */
    uint64_t size = size_class(bytes, w->limits.maxStorageBufferBindingSize);
    if (size > w->max_buffer)
        size = round_up(bytes, 16);
    if (size > w->max_buffer)
        return wt_fail(WT_ERR_OUT_OF_MEMORY,
                       "webgpu: requested %zu bytes (%llu rounded to 16), available %llu: more "
                       "than the largest buffer of this context",
                       bytes, (unsigned long long)size, (unsigned long long)w->max_buffer);
    wg_buffer *b = take_pooled(w, size);
    if (b) {
        ctx->stats.pooled_bytes = w->pool.pooled_bytes;
        *out = b;
        return WT_OK;
    }
    b = calloc(1, sizeof *b);
    if (!b)
        return wt_fail(WT_ERR_OUT_OF_MEMORY, "webgpu: out of host memory");
    const WGPUBufferUsage usage =
        WGPUBufferUsage_Storage | WGPUBufferUsage_CopySrc | WGPUBufferUsage_CopyDst;
    wt_status st = wg_create_buffer(ctx, size, usage, "webtensor storage", &b->buffer);
    if (st == WT_ERR_OUT_OF_MEMORY && w->pool.count > 0) {
        /* Pooled buffers of other classes may be what is in the way. */
        wg_pool_trim(ctx);
        st = wg_create_buffer(ctx, size, usage, "webtensor storage", &b->buffer);
    }
    if (st != WT_OK) {
        free(b);
        return st;
    }
    b->size = size;
    b->generation = w->generation;
    ctx->stats.buffers++;
    *out = b;
    return WT_OK;
}

void wg_pool_release(wt_context *ctx, wg_buffer *b)
{
    wg_context *w = wg_ctx(ctx);
    if (!b)
        return;
    if (wg_buffer_stale(w, b) || w->pool.pooled_bytes + b->size > pool_limit(w)) {
        buffer_free(ctx, b);
        return;
    }
    if (w->pool.count == w->pool.capacity) {
        int cap = w->pool.capacity ? w->pool.capacity * 2 : 64;
        wg_buffer **grown = realloc(w->pool.free_list, (size_t)cap * sizeof *grown);
        if (!grown) {
            buffer_free(ctx, b); /* cannot pool it: give it back */
            return;
        }
        w->pool.free_list = grown;
        w->pool.capacity = cap;
    }
    w->pool.free_list[w->pool.count++] = b;
    w->pool.pooled_bytes += b->size;
    ctx->stats.pooled_bytes = w->pool.pooled_bytes;
}

void wg_pool_trim(wt_context *ctx)
{
    wg_context *w = wg_ctx(ctx);
    for (int i = 0; i < w->pool.count; i++)
        buffer_free(ctx, w->pool.free_list[i]);
    w->pool.count = 0;
    w->pool.pooled_bytes = 0;
    ctx->stats.pooled_bytes = 0;
}

void wg_pool_destroy(wt_context *ctx)
{
    wg_context *w = wg_ctx(ctx);
    wg_pool_trim(ctx);
    free(w->pool.free_list);
    memset(&w->pool, 0, sizeof w->pool);
}

/* A buffer of a device this context lost (before wt_context_recover). */
wt_status wg_check_buffer(wt_context *ctx, const wg_buffer *b, const char *what)
{
    const wg_context *w = wg_ctx(ctx);
    if (!wg_buffer_stale(w, b))
        return WT_OK;
    return wt_fail(WT_ERR_DEVICE_LOST,
                   "webgpu: %s: the tensor was made on a device this context lost (before "
                   "wt_context_recover); its contents are gone; release it and make it again",
                   what);
}
