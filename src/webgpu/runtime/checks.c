/* Device-side checks read at the next sync.
 *
 * A kernel that finds a bad argument only it can see (an index out of
 * range in gather or scatter) raises a flag in a small buffer instead of
 * the op reading the device back before it returns: a read-back inside a
 * call would stall the GPU and make the op impossible to capture. The
 * context keeps the flags not yet read and reads them at the next sync
 * (wt_context_sync, a blocking read), which returns the first raised one
 * as its error, naming the op; the flags go back to the pool then, raised
 * or not (webtensor.h, "runtime: errors and recovery"). */
#include "webgpu/wg.h"
#include "webgpu/wg_runtime.h"

#include <stdio.h>
#include <stdlib.h>

/* Past this many unread checks the next one reads them first, so that a
 * program that never synchronises holds a bounded number of flags. */
enum { MAX_PENDING = 256 };

wt_status wg_checks_defer(wt_context *ctx, wt_storage *flag, const char *op, int64_t extent)
{
    wg_context *w = wg_ctx(ctx);
    wt_status st = w->ncheck == MAX_PENDING ? wg_checks_verify(ctx) : WT_OK;
    if (st == WT_OK && w->ncheck == w->cap_check) {
        int cap = w->cap_check ? w->cap_check * 2 : 8;
        wg_check *grown = realloc(w->checks, (size_t)cap * sizeof *grown);
        if (grown) {
            w->checks = grown;
            w->cap_check = cap;
        } else {
            st = wt_fail(WT_ERR_OUT_OF_MEMORY, "%s: out of host memory for its index check", op);
        }
    }
    if (st != WT_OK) {
        wg_scratch_release(ctx, flag);
        return st;
    }
    wg_check *c = &w->checks[w->ncheck++];
    c->flag = flag;
    snprintf(c->op, sizeof c->op, "%s", op ? op : "op");
    c->extent = extent;
    return WT_OK;
}

wt_status wg_checks_verify(wt_context *ctx)
{
    wg_context *w = wg_ctx(ctx);
    wt_status st = WT_OK;
    for (int i = 0; i < w->ncheck; i++) {
        wg_check *c = &w->checks[i];
        uint32_t words[2] = {0, 0};
        if (st == WT_OK) {
            wt_status rd = wg_read_buffer(ctx, c->flag->device, 0, words, sizeof words);
            if (rd != WT_OK)
                st = rd;
            else if (words[0] != 0)
                st = wt_fail(WT_ERR_INVALID_ARGUMENT,
                             "%s: index %d is out of range for an axis of extent %lld (found on the "
                             "GPU after the call returned and reported at this sync; nothing was "
                             "read or written out of bounds, the op's output is undefined)",
                             c->op, (int32_t)words[1], (long long)c->extent);
        }
        wg_scratch_release(ctx, c->flag);
    }
    w->ncheck = 0;
    if (st != WT_OK)
        wt_context_record_error(ctx, st);
    return st;
}

void wg_checks_drop(wt_context *ctx)
{
    wg_context *w = wg_ctx(ctx);
    for (int i = 0; i < w->ncheck; i++)
        wg_scratch_release(ctx, w->checks[i].flag);
    w->ncheck = 0;
    free(w->checks);
    w->checks = NULL;
    w->cap_check = 0;
}
