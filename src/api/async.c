/* Asynchronous work: flush, events, non-blocking reads. The backend does
 * the waiting (src/webgpu/runtime/events.c); a backend without it finishes its
 * work inside each call, so its events are complete at once. */
#include "api/api.h"

#include <stdlib.h>

wt_status wt_context_flush(wt_context *ctx)
{
    if (!ctx) return wt_fail(WT_ERR_INVALID_ARGUMENT, "wt_context_flush: ctx is NULL");
    if (!ctx->ops->flush) return WT_OK;
    wt_status st = ctx->ops->flush(ctx);
    if (st != WT_OK) wt_context_record_error(ctx, st);
    return st;
}

static wt_status event_new(wt_context *ctx, wt_event **out)
{
    wt_event *e = calloc(1, sizeof *e);
    if (!e) return wt_fail(WT_ERR_OUT_OF_MEMORY, "event: out of host memory");
    e->ctx = ctx;
    e->done = true;
    *out = e;
    return WT_OK;
}

static wt_status event_start(wt_context *ctx, wt_storage *s, size_t offset, void *dst,
                             size_t bytes, wt_event **out)
{
    wt_event *e = NULL;
    wt_status st = event_new(ctx, &e);
    if (st != WT_OK) return st;
    if (ctx->ops->event_start) {
        e->done = false;
        st = ctx->ops->event_start(ctx, e, s, offset, dst, bytes);
    } else if (dst) {
        st = ctx->ops->download(ctx, s, offset, dst, bytes);
    }
    if (st != WT_OK) {
        wt_context_record_error(ctx, st);
        free(e);
        return st;
    }
    wt_context_ref(ctx);
    *out = e;
    return WT_OK;
}

wt_status wt_event_record(wt_context *ctx, wt_event **out)
{
    if (!out) return wt_fail(WT_ERR_INVALID_ARGUMENT, "wt_event_record: out is NULL");
    *out = NULL;
    if (!ctx) return wt_fail(WT_ERR_INVALID_ARGUMENT, "wt_event_record: ctx is NULL");
    return event_start(ctx, NULL, 0, NULL, 0, out);
}

static wt_status poll(wt_event *e, bool wait, const char *fn)
{
    if (!e) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: event is NULL", fn);
    if (!e->done) {
        wt_status st = e->ctx->ops->event_poll(e->ctx, e, wait);
        if (st != WT_OK) {
            wt_context_record_error(e->ctx, st);
            return st;
        }
    }
    if (e->done && e->status != WT_OK)
        return wt_fail(e->status, "%s: the work before the event failed: %s", fn,
                       e->ctx->last_error);
    return WT_OK;
}

wt_status wt_event_query(wt_event *e, bool *done)
{
    if (done) *done = false;
    if (!done) return wt_fail(WT_ERR_INVALID_ARGUMENT, "wt_event_query: done is NULL");
    wt_status st = poll(e, false, "wt_event_query");
    *done = st == WT_OK && e->done;
    return st;
}

wt_status wt_event_wait(wt_event *e) { return poll(e, true, "wt_event_wait"); }

void wt_event_destroy(wt_event *e)
{
    if (!e) return;
    wt_context *ctx = e->ctx;
    if (ctx->ops->event_release) ctx->ops->event_release(ctx, e);
    free(e);
    wt_context_unref(ctx);
}

wt_status wt_tensor_read_async(const wt_tensor *t, void *dst, size_t dst_bytes, wt_event **done)
{
    if (!done) return wt_fail(WT_ERR_INVALID_ARGUMENT, "wt_tensor_read_async: done is NULL");
    *done = NULL;
    if (!t) return wt_fail(WT_ERR_INVALID_ARGUMENT, "wt_tensor_read_async: tensor is NULL");
    size_t esize = wt_dtype_size(t->dtype), bytes;
    if (!wt_bytes_of(t->numel, esize, &bytes))
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "wt_tensor_read_async: too many elements");
    if (bytes > 0 && !dst) return wt_fail(WT_ERR_INVALID_ARGUMENT, "wt_tensor_read_async: dst is NULL");
    if (dst_bytes < bytes)
        return wt_fail(WT_ERR_INVALID_ARGUMENT,
                       "wt_tensor_read_async: dst holds %zu bytes, the tensor needs %zu", dst_bytes,
                       bytes);
    wt_context *ctx = wt_ctx_of(t);
    if (bytes == 0) return event_start(ctx, NULL, 0, NULL, 0, done);
    if (wt_tensor_is_contiguous(t))
        return event_start(ctx, t->storage, (size_t)t->offset * esize, dst, bytes, done);
    /* A view: gather it first (recorded before the read, in order). */
    wt_tensor *c = NULL;
    wt_status st = wt_copy(t, &c);
    if (st == WT_OK) st = event_start(ctx, c->storage, 0, dst, bytes, done);
    wt_tensor_release(c); /* the recorded read keeps what it needs */
    return st;
}
