/* Device-side checks read at the next sync.
 *
 * A kernel that finds a bad argument only it can see (an index out of
 * range in gather or scatter) raises a flag instead of the op reading the
 * device back before it returns: a read-back inside a call would stall the
 * GPU and make the op impossible to capture. The flags live in one small
 * area per context, made at the first check and kept (so checks allocate
 * nothing: a decode loop's memory stays flat), one aligned slot per check
 * not read yet. The next sync (wt_context_sync, a blocking read) reads the
 * used slots back at once and returns the first raised one as its error,
 * naming the op (webtensor.h, "errors and recovery"). The area is zeroed
 * when made and again by a queue write after each read, before any later
 * submit: a slot is zero when its kernel runs, with no fill dispatch of
 * its own. */
#include "webgpu/wg.h"
#include "webgpu/wg_runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Slots of the area: past this many unread checks the next one reads them
 * first (a program that never synchronises). */
#define WG_MAX_CHECKS 256
/* A slot's binding: the two words, padded to 16 bytes (the smallest
 * binding of a vectorised kernel). */
#define WG_CHECK_BYTES 16

/* Zeroes the area's first bytes by a queue write: ordered after every
 * command buffer submitted so far and before the next. */
static wt_status zero_slots(wt_context *ctx, size_t bytes)
{
    wg_context *w = wg_ctx(ctx);
    void *zeros = calloc(1, bytes);
    if (!zeros)
        return wt_fail(WT_ERR_OUT_OF_MEMORY, "webgpu: out of host memory zeroing the index checks");
    w->lib.p.QueueWriteBuffer(w->queue, w->check_area->buffer, w->check_area->offset, zeros, bytes);
    free(zeros);
    return wg_check_device(ctx);
}

wt_status wg_checks_slot(wt_context *ctx, const char *op, int64_t extent, wt_storage **flag)
{
    wg_context *w = wg_ctx(ctx);
    *flag = NULL;
    if (!w->check_area) {
        /* Offsets of storage bindings must be multiples of this. */
        uint64_t align = w->limits.minStorageBufferOffsetAlignment;
        if (align < WG_CHECK_BYTES)
            align = 256;
        if (!w->checks && !(w->checks = calloc(WG_MAX_CHECKS, sizeof *w->checks)))
            return wt_fail(WT_ERR_OUT_OF_MEMORY, "%s: out of host memory for its index check", op);
        /* Work already recorded goes first: a pooled buffer may still be
         * written by it, and the zeros must land after that. */
        wt_status st = wg_flush(ctx);
        if (st == WT_OK)
            st = wg_pool_acquire(ctx, align * WG_MAX_CHECKS, &w->check_area);
        if (st != WT_OK)
            return st;
        w->check_align = align;
        if ((st = zero_slots(ctx, align * WG_MAX_CHECKS)) != WT_OK) {
            /* No slot of it handed out yet: a later check makes it again. */
            wg_pool_release(ctx, w->check_area);
            w->check_area = NULL;
            return st;
        }
    }
    if (w->ncheck == WG_MAX_CHECKS) {
        wt_status st = wg_checks_verify(ctx);
        if (st != WT_OK)
            return st;
    }
    wg_check *c = &w->checks[w->ncheck];
    memset(c, 0, sizeof *c);
    c->window = (wg_buffer){.buffer = w->check_area->buffer, .size = WG_CHECK_BYTES,
                            .offset = (uint64_t)w->ncheck * w->check_align, .parent = w->check_area,
                            .generation = w->check_area->generation};
    c->storage = (wt_storage){.refcount = 1, .ctx = ctx, .bytes = WG_CHECK_BYTES, .device = &c->window};
    snprintf(c->op, sizeof c->op, "%s", op ? op : "op");
    c->extent = extent;
    if (ctx->replay_state && ctx->node && w->hooks.replay_note_check)
        w->hooks.replay_note_check(ctx, w->ncheck, c->op, extent);
    w->ncheck++;
    *flag = &c->storage;
    return WT_OK;
}

wt_status wg_checks_verify(wt_context *ctx)
{
    wg_context *w = wg_ctx(ctx);
    const int n = w->ncheck;
    if (n == 0)
        return WT_OK;
    const size_t bytes = (size_t)((uint64_t)(n - 1) * w->check_align + 2 * sizeof(uint32_t));
    /* The zeros as well before anything is read: slots handed out again
     * must be zero, and until they are the checks stay pending (read again
     * by the next sync) rather than raised slots being reused. */
    uint8_t *words = malloc(bytes);
    void *zeros = words ? calloc(1, bytes) : NULL;
    if (!zeros) {
        free(words);
        return wt_fail(WT_ERR_OUT_OF_MEMORY, "webgpu: out of host memory reading the index checks");
    }
    /* The read submits everything recorded (the kernels that raise). */
    wt_status st = wg_read_buffer(ctx, w->check_area, 0, words, bytes);
    if (st == WT_OK) {
        w->ncheck = 0; /* read once, raised or not */
        /* A queue write: ordered after every command buffer submitted so
         * far and before the next. */
        w->lib.p.QueueWriteBuffer(w->queue, w->check_area->buffer, w->check_area->offset, zeros, bytes);
        st = wg_check_device(ctx);
    }
    free(zeros);
    for (int i = 0; st == WT_OK && i < n; i++) {
        uint32_t v[2];
        memcpy(v, words + (uint64_t)i * w->check_align, sizeof v);
        if (v[0] != 0)
            st = wt_fail(WT_ERR_INVALID_ARGUMENT,
                         "%s: index %d is out of range for an axis of extent %lld (found on the GPU after "
                         "the call returned and reported at this sync; nothing was read or written out "
                         "of bounds, the op's output is undefined)",
                         w->checks[i].op, (int32_t)v[1], (long long)w->checks[i].extent);
    }
    free(words);
    if (st != WT_OK)
        wt_context_record_error(ctx, st);
    return st;
}

void wg_checks_drop(wt_context *ctx)
{
    wg_context *w = wg_ctx(ctx);
    w->ncheck = 0;
    if (w->check_area)
        wg_pool_release(ctx, w->check_area);
    w->check_area = NULL;
    free(w->checks);
    w->checks = NULL;
}
