/* Host -> device copies through mapped staging buffers (wg_upload_staged).
 *
 * A queue write (wgpuQueueWriteBuffer) copies the data into a staging
 * buffer the WebGPU library picks - Dawn keeps a ring of 4 MiB ones and
 * makes a new one for anything larger or when the ring is busy - and then
 * copies that on the device. Here the staging buffers are the context's
 * own, kept mapped for writing between uploads: a piece is copied into a
 * mapped buffer, which is unmapped, copied on the device and mapped again
 * (asynchronously) for a later piece, while the next piece goes into the
 * next buffer of the ring. The host copies straight into memory the
 * device reads, and no staging memory is allocated once the ring exists.
 * Whether that is faster depends on the driver's host-visible memory:
 * WT_WEBGPU_UPLOAD_STAGED chooses (docs/KNOBS.md), bench_transfer
 * measures both. */
#include "webgpu/wg_runtime.h"

#include <string.h>

static void on_write_mapped(WGPUMapAsyncStatus status, WGPUStringView message, void *userdata1, void *userdata2)
{
    (void)message;
    (void)userdata2;
    *(WGPUMapAsyncStatus *)userdata1 = status;
}

static void request_map(wg_context *w, wg_upload_slot *s)
{
    WGPUBufferMapCallbackInfo cb;
    memset(&cb, 0, sizeof cb);
    cb.mode = WGPUCallbackMode_WaitAnyOnly;
    cb.callback = on_write_mapped;
    cb.userdata1 = &s->status;
    s->status = 0;
    s->future = w->lib.p.BufferMapAsync(s->buffer, WGPUMapMode_Write, 0, (size_t)s->size, cb);
    s->pending = true;
}

static void drop_slot(wg_context *w, wg_upload_slot *s)
{
    if (s->buffer)
        w->lib.p.BufferRelease(s->buffer);
    memset(s, 0, sizeof *s);
}

/* Slot s mapped for writing, with room for `need` bytes. */
static wt_status slot_ready(wt_context *ctx, wg_upload_slot *s, uint64_t need)
{
    wg_context *w = wg_ctx(ctx);
    wt_status st = WT_OK;
    if (s->pending) {
        s->pending = false;
        st = wg_wait(&w->lib, w->instance, s->future, "mapping an upload staging buffer");
        if (st == WT_OK)
            st = wg_check_device(ctx);
        if (st == WT_OK && s->status != WGPUMapAsyncStatus_Success)
            st = wt_fail(WT_ERR_BACKEND, "webgpu: mapping an upload staging buffer failed (status %u)",
                         (unsigned)s->status);
        if (st != WT_OK) {
            drop_slot(w, s);
            return st;
        }
        s->mapped = true;
    }
    if (s->buffer && s->size < need)
        drop_slot(w, s);
    if (!s->buffer) {
        st = wg_create_buffer(ctx, need, WGPUBufferUsage_MapWrite | WGPUBufferUsage_CopySrc, "webtensor upload",
                              &s->buffer);
        if (st != WT_OK)
            return st;
        s->size = need;
        request_map(w, s);
        return slot_ready(ctx, s, need);
    }
    return WT_OK;
}

wt_status wg_upload_staged(wt_context *ctx, WGPUBuffer dst, uint64_t offset, const void *src, uint64_t bytes,
                           uint64_t piece)
{
    wg_context *w = wg_ctx(ctx);
    const wgpu_procs *p = &w->lib.p;
    wg_recorder *r = &w->rec;
    if (!p->BufferGetMappedRange)
        return WT_ERR_UNSUPPORTED;
    if (piece < 4)
        piece = 4;
    piece &= ~(uint64_t)3;
    wt_status st = WT_OK;
    for (uint64_t done = 0; done < bytes && st == WT_OK; done += piece) {
        uint64_t n = bytes - done < piece ? bytes - done : piece;
        wg_upload_slot *s = &r->upload[r->upload_next];
        r->upload_next = (r->upload_next + 1) % WG_UPLOAD_RING;
        /* Every slot the size of a whole piece, so that it is reused. */
        if ((st = slot_ready(ctx, s, piece)) != WT_OK)
            break;
        void *range = p->BufferGetMappedRange(s->buffer, 0, (size_t)n);
        if (!range) {
            drop_slot(w, s);
            st = wt_fail(WT_ERR_BACKEND, "webgpu: the mapped range of an upload staging buffer is not available");
            break;
        }
        memcpy(range, (const uint8_t *)src + done, (size_t)n);
        p->BufferUnmap(s->buffer);
        s->mapped = false;
        WGPUCommandEncoder enc = NULL;
        if ((st = wg_copy_encoder(ctx, &enc)) != WT_OK)
            break;
        p->CommandEncoderCopyBufferToBuffer(enc, s->buffer, 0, dst, offset + done, n);
        if ((st = wg_flush(ctx)) != WT_OK)
            break;
        request_map(w, s);
    }
    return st;
}

void wg_upload_staging_release(wt_context *ctx)
{
    wg_context *w = wg_ctx(ctx);
    /* A pending map is waited for first: its callback writes into the
     * slot, which goes with the context. */
    for (int i = 0; i < WG_UPLOAD_RING; i++) {
        wg_upload_slot *s = &w->rec.upload[i];
        if (s->pending && w->instance)
            wg_wait(&w->lib, w->instance, s->future, "mapping an upload staging buffer");
        drop_slot(w, s);
    }
}
