/* Events and non-blocking reads. An event is a future of the queue: "work
 * done" for a marker, or a map of a staging buffer that a copy (recorded
 * after everything before it) filled, for a read. Both are made with
 * callbacks that run inside wgpuInstanceProcessEvents or WaitAny, so a
 * query never blocks and a wait blocks only on that future. */
#include "webgpu/wg_runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct wg_event {
    WGPUFuture future;
    bool fired;
    uint32_t status;      /* WGPUQueueWorkDoneStatus or WGPUMapAsyncStatus */
    bool read;
    WGPUBuffer staging;   /* reads: MapRead copy of the words around the range */
    uint64_t len;         /* staging bytes used */
    uint64_t staging_size; /* staging bytes */
    size_t skip, bytes;   /* the range inside the staging words */
    void *dst;
    uint32_t generation;  /* device generation it was made on */
} wg_event;

static void on_done(WGPUQueueWorkDoneStatus status, WGPUStringView message, void *u1, void *u2)
{
    (void)message;
    (void)u2;
    wg_event *ev = u1;
    ev->status = status;
    ev->fired = true;
}

static void on_mapped(WGPUMapAsyncStatus status, WGPUStringView message, void *u1, void *u2)
{
    (void)message;
    (void)u2;
    wg_event *ev = u1;
    ev->status = status;
    ev->fired = true;
}

/* Kept staging of all finished asynchronous reads together, at most. */
#define ASYNC_STAGING_KEEP_BYTES (128ull << 20)

/* A MapRead staging buffer of at least len bytes: the smallest kept one
 * that fits, or a new one of the next power of two (so that reads of
 * similar sizes reuse it). */
static wt_status take_staging(wt_context *ctx, uint64_t len, WGPUBuffer *out, uint64_t *size)
{
    wg_recorder *r = &wg_ctx(ctx)->rec;
    int best = -1;
    for (int i = 0; i < r->async_staging_count; i++)
        if (r->async_staging_size[i] >= len && (best < 0 || r->async_staging_size[i] < r->async_staging_size[best]))
            best = i;
    if (best >= 0) {
        *out = r->async_staging[best];
        *size = r->async_staging_size[best];
        r->async_staging_count--;
        r->async_staging[best] = r->async_staging[r->async_staging_count];
        r->async_staging_size[best] = r->async_staging_size[r->async_staging_count];
        return WT_OK;
    }
    uint64_t n = 4096;
    while (n < len)
        n *= 2;
    if (n > wg_ctx(ctx)->limits.maxBufferSize)
        n = len;
    *size = n;
    return wg_create_buffer(ctx, n, WGPUBufferUsage_MapRead | WGPUBufferUsage_CopyDst, "webtensor async read", out);
}

/* Keeps an unmapped staging buffer for the next read, or releases it. */
static void give_staging(wt_context *ctx, WGPUBuffer b, uint64_t size)
{
    wg_context *w = wg_ctx(ctx);
    wg_recorder *r = &w->rec;
    uint64_t kept = size;
    for (int i = 0; i < r->async_staging_count; i++)
        kept += r->async_staging_size[i];
    if (r->async_staging_count < WG_ASYNC_STAGING_KEEP && kept <= ASYNC_STAGING_KEEP_BYTES) {
        r->async_staging[r->async_staging_count] = b;
        r->async_staging_size[r->async_staging_count++] = size;
    } else {
        w->lib.p.BufferRelease(b);
    }
}

wt_status wg_event_start(wt_context *ctx, wt_event *e, wt_storage *s, size_t offset, void *dst,
                         size_t bytes)
{
    wg_context *w = wg_ctx(ctx);
    const wgpu_procs *p = &w->lib.p;
    wt_status st = wg_check_device(ctx);
    if (st == WT_OK && s)
        st = wg_check_buffer(ctx, s->device, "reading a tensor");
    if (st != WT_OK)
        return st;
    wg_event *ev = calloc(1, sizeof *ev);
    if (!ev)
        return wt_fail(WT_ERR_OUT_OF_MEMORY, "webgpu: out of host memory");
    ev->generation = w->generation;
    if (s) {
        const wg_buffer *b = s->device;
        uint64_t begin = offset & ~(uint64_t)3, end = ((uint64_t)offset + bytes + 3) & ~(uint64_t)3;
        ev->read = true;
        ev->len = end - begin;
        ev->skip = offset - begin;
        ev->bytes = bytes;
        ev->dst = dst;
        st = take_staging(ctx, ev->len, &ev->staging, &ev->staging_size);
        WGPUCommandEncoder enc = NULL;
        if (st == WT_OK)
            st = wg_copy_encoder(ctx, &enc);
        if (st == WT_OK)
            p->CommandEncoderCopyBufferToBuffer(enc, b->buffer, begin, ev->staging, 0, ev->len);
    }
    if (st == WT_OK)
        st = wg_flush(ctx);
    if (st != WT_OK) {
        /* The copy may have been recorded: the buffer is not reused. */
        if (ev->staging)
            p->BufferRelease(ev->staging);
        free(ev);
        return st;
    }
    if (ev->read) {
        WGPUBufferMapCallbackInfo cb;
        memset(&cb, 0, sizeof cb);
        cb.mode = WGPUCallbackMode_AllowProcessEvents;
        cb.callback = on_mapped;
        cb.userdata1 = ev;
        ev->future = p->BufferMapAsync(ev->staging, WGPUMapMode_Read, 0, (size_t)ev->len, cb);
        ctx->stats.bytes_from_device += bytes;
    } else {
        WGPUQueueWorkDoneCallbackInfo cb;
        memset(&cb, 0, sizeof cb);
        cb.mode = WGPUCallbackMode_AllowProcessEvents;
        cb.callback = on_done;
        cb.userdata1 = ev;
        ev->future = p->QueueOnSubmittedWorkDone(w->queue, cb);
    }
    e->impl = ev;
    return WT_OK;
}

/* Copies a completed read out and frees the staging buffer. */
static wt_status complete(wt_context *ctx, wt_event *e, wg_event *ev)
{
    wg_context *w = wg_ctx(ctx);
    const wgpu_procs *p = &w->lib.p;
    wt_status st = wg_check_device(ctx);
    if (st == WT_OK && ev->read && ev->status != WGPUMapAsyncStatus_Success)
        st = wt_fail(WT_ERR_BACKEND, "webgpu: an asynchronous read failed (map status %u)",
                     (unsigned)ev->status);
    if (st == WT_OK && !ev->read && ev->status != WGPUQueueWorkDoneStatus_Success)
        st = wt_fail(WT_ERR_BACKEND, "webgpu: waiting for the queue failed (status %u)",
                     (unsigned)ev->status);
    if (st == WT_OK && ev->read) {
        const uint8_t *src = p->BufferGetConstMappedRange(ev->staging, 0, (size_t)ev->len);
        if (src)
            memcpy(ev->dst, src + ev->skip, ev->bytes);
        else
            st = wt_fail(WT_ERR_BACKEND, "webgpu: the mapped range of an asynchronous read is not available");
        p->BufferUnmap(ev->staging);
    }
    if (ev->staging) {
        if (st == WT_OK)
            give_staging(ctx, ev->staging, ev->staging_size);
        else
            p->BufferRelease(ev->staging);
    }
    free(ev);
    e->impl = NULL;
    e->done = true;
    e->status = st;
    if (st != WT_OK)
        wt_context_record_error(ctx, st);
    return WT_OK; /* the event's status carries the failure */
}

wt_status wg_event_poll(wt_context *ctx, wt_event *e, bool wait)
{
    wg_context *w = wg_ctx(ctx);
    wg_event *ev = e->impl;
    if (!ev)
        return WT_OK;
    if (ev->generation != w->generation || w->lost) {
        /* Its device is gone: the future will not complete normally. */
        if (ev->staging)
            w->lib.p.BufferRelease(ev->staging);
        free(ev);
        e->impl = NULL;
        e->done = true;
        wt_status st = w->lost ? wg_check_device(ctx)
                               : wt_fail(WT_ERR_DEVICE_LOST, "webgpu: the event's device was lost");
        e->status = st;
        return WT_OK;
    }
    if (!ev->fired) {
        if (wait) {
            wt_status st = wg_wait(&w->lib, w->instance, ev->future, "an event");
            if (st != WT_OK)
                return st;
        } else {
            w->lib.p.InstanceProcessEvents(w->instance);
        }
    }
    if (!ev->fired)
        return WT_OK;
    return complete(ctx, e, ev);
}

void wg_event_release(wt_context *ctx, wt_event *e)
{
    if (e->impl)
        (void)wg_event_poll(ctx, e, true);
    if (e->impl) { /* the wait failed: free without the data */
        wg_event *ev = e->impl;
        if (ev->staging)
            wg_ctx(ctx)->lib.p.BufferRelease(ev->staging);
        free(ev);
        e->impl = NULL;
    }
}
