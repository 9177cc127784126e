/* Device-side checks reported at the next sync.
 *
 * A GPU kernel that finds a bad argument only it can see (an index out of
 * range in gather or scatter) raises a flag in a small buffer instead of
 * the op reading the device back before it returns: a read-back inside a
 * call would stall the GPU and make the op impossible to capture. The
 * context keeps the flags of the checks not yet read and reads them at the
 * next synchronising call (wt_context_sync, a blocking read, an event's
 * completion), which returns the first raised one as its error, naming the
 * op; the flags are released then, raised or not (webtensor.h, "Errors"). */
#include "core/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Past this many unread checks the next one reads them first, so that a
 * program that never synchronises holds a bounded number of flags. */
enum { MAX_PENDING = 256 };

wt_status wt_check_defer(wt_context *ctx, wt_tensor *flag, const char *op, int64_t extent)
{
    if (ctx->ncheck == MAX_PENDING) {
        wt_status st = wt_check_verify(ctx);
        if (st != WT_OK) return st;
    }
    if (ctx->ncheck == ctx->cap_check) {
        int cap = ctx->cap_check ? ctx->cap_check * 2 : 8;
        wt_deferred_check *grown = realloc(ctx->checks, (size_t)cap * sizeof *grown);
        if (!grown) return wt_fail(WT_ERR_OUT_OF_MEMORY, "%s: out of host memory for its index check", op);
        ctx->checks = grown;
        ctx->cap_check = cap;
    }
    wt_deferred_check *c = &ctx->checks[ctx->ncheck++];
    wt_tensor_retain(flag);
    c->flag = flag;
    snprintf(c->op, sizeof c->op, "%s", op ? op : "op");
    c->extent = extent;
    return WT_OK;
}

wt_status wt_check_verify(wt_context *ctx)
{
    wt_status st = WT_OK;
    for (int i = 0; i < ctx->ncheck; i++) {
        wt_deferred_check *c = &ctx->checks[i];
        uint32_t words[2] = {0, 0};
        if (st == WT_OK) {
            wt_status rd = ctx->ops->download(ctx, c->flag->storage,
                                              (size_t)c->flag->offset * sizeof words[0], words, sizeof words);
            if (rd != WT_OK)
                st = rd;
            else if (words[0] != 0)
                st = wt_fail(WT_ERR_INVALID_ARGUMENT,
                             "%s: index %d is out of range for an axis of extent %lld (found on the GPU "
                             "after the call returned and reported at this sync; nothing was read or "
                             "written out of bounds, the op's output is undefined)",
                             c->op, (int32_t)words[1], (long long)c->extent);
        }
        wt_tensor_release(c->flag);
    }
    ctx->ncheck = 0;
    if (st != WT_OK) wt_context_record_error(ctx, st);
    return st;
}

void wt_check_drop(wt_context *ctx)
{
    for (int i = 0; i < ctx->ncheck; i++) wt_tensor_release(ctx->checks[i].flag);
    ctx->ncheck = 0;
    free(ctx->checks);
    ctx->checks = NULL;
    ctx->cap_check = 0;
}
