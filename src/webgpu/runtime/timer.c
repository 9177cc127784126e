/* GPU time of recorded work, from timestamp queries.
 *
 * While a timer runs, each compute pass the recorder begins carries
 * timestampWrites: query 2k at its start, 2k+1 at its end (WebGPU wants
 * the two distinct). The timer's value is the sum of end - start over the
 * passes: the time the GPU spent in them, without the gaps between passes
 * (submits, host waits). Wall time around a sync counts those gaps too,
 * which on a fast GPU is most of a small op's time.
 *
 * The queries are resolved (into nanoseconds, by the implementation)
 * into a QueryResolve buffer, copied to a MapRead buffer and summed on the
 * host: at the end, and earlier whenever the query set fills up. */
#include "webgpu/wg_runtime.h"

#include <string.h>

/* WebGPU's largest query set; two queries per pass. */
#define WG_TIMER_QUERIES 4096u
#define WG_TIMER_BYTES ((uint64_t)WG_TIMER_QUERIES * sizeof(uint64_t))

static void release_objects(wg_context *w)
{
    const wgpu_procs *p = &w->lib.p;
    wg_timer *t = &w->timer;
    if (t->queries) {
        p->QuerySetDestroy(t->queries);
        p->QuerySetRelease(t->queries);
    }
    if (t->resolved)
        p->BufferRelease(t->resolved);
    if (t->readback)
        p->BufferRelease(t->readback);
    t->queries = NULL;
    t->resolved = t->readback = NULL;
}

void wg_timer_destroy(wt_context *ctx)
{
    wg_context *w = wg_ctx(ctx);
    release_objects(w);
    bool supported = w->timer.supported;
    memset(&w->timer, 0, sizeof w->timer);
    w->timer.supported = supported;
}

/* The query set and its two buffers, made on the first begin and kept. */
static wt_status create_objects(wt_context *ctx);
wt_status wg_timer_objects(wt_context *ctx) { return create_objects(ctx); }

static wt_status create_objects(wt_context *ctx)
{
    wg_context *w = wg_ctx(ctx);
    const wgpu_procs *p = &w->lib.p;
    wg_timer *t = &w->timer;
    if (t->queries)
        return WT_OK;
    WGPUQuerySetDescriptor desc;
    memset(&desc, 0, sizeof desc);
    desc.label = (WGPUStringView){"webtensor timestamps", WGPU_STRLEN};
    desc.type = WGPUQueryType_Timestamp;
    desc.count = WG_TIMER_QUERIES;
    p->DevicePushErrorScope(w->device, WGPUErrorFilter_Validation);
    t->queries = p->DeviceCreateQuerySet(w->device, &desc);
    wt_status st = wg_pop_error_scope(ctx, WT_ERR_BACKEND, "creating a timestamp query set");
    if (st == WT_OK && !t->queries)
        st = wt_fail(WT_ERR_BACKEND, "webgpu: creating a timestamp query set failed");
    if (st == WT_OK)
        st = wg_create_buffer(ctx, WG_TIMER_BYTES,
                              WGPUBufferUsage_QueryResolve | WGPUBufferUsage_CopySrc,
                              "webtensor resolved timestamps", &t->resolved);
    if (st == WT_OK)
        st = wg_create_buffer(ctx, WG_TIMER_BYTES,
                              WGPUBufferUsage_MapRead | WGPUBufferUsage_CopyDst,
                              "webtensor timestamp readback", &t->readback);
    if (st != WT_OK)
        release_objects(w);
    return st;
}

/* Resolves the queries written so far, submits everything recorded, and
 * adds the passes' durations to total_ns. The map waits for the submit,
 * so all work recorded before is done when this returns. */
wt_status wg_timer_harvest(wt_context *ctx);
static wt_status harvest(wt_context *ctx) { return wg_timer_harvest(ctx); }

wt_status wg_timer_harvest(wt_context *ctx)
{
    wg_context *w = wg_ctx(ctx);
    const wgpu_procs *p = &w->lib.p;
    wg_timer *t = &w->timer;
    uint32_t n = t->used;
    if (n == 0)
        return wg_finish(ctx);
    WGPUCommandEncoder enc = NULL;
    wt_status st = wg_copy_encoder(ctx, &enc); /* after the passes' ends */
    if (st != WT_OK)
        return st;
    uint64_t bytes = (uint64_t)n * sizeof(uint64_t);
    p->CommandEncoderResolveQuerySet(enc, t->queries, 0, n, t->resolved, 0);
    p->CommandEncoderCopyBufferToBuffer(enc, t->resolved, 0, t->readback, 0, bytes);
    t->used = 0; /* the next pass may write the queries again: it runs after the resolve */
    if ((st = wg_flush(ctx)) != WT_OK)
        return st;

    const uint64_t *stamps = NULL;
    if ((st = wg_map_read(ctx, t->readback, bytes, "reading the timestamps",
                          (const void **)&stamps)) != WT_OK)
        return st;
    /* A pass whose end reads earlier than its start (clocks of different
     * units, a reset in between) counts as zero rather than wrapping. */
    for (uint32_t i = 0; i + 1 < n; i += 2) {
        if (stamps[i + 1] > stamps[i])
            t->total_ns += stamps[i + 1] - stamps[i];
        if (w->prof.active && t->pass_names[i / 2] && w->hooks.timed_pass)
            w->hooks.timed_pass(ctx, t->pass_names[i / 2], t->pass_details[i / 2], stamps[i],
                                stamps[i + 1]);
    }
    p->BufferUnmap(t->readback);
    return WT_OK;
}

wt_status wg_timer_pass_writes(wt_context *ctx, WGPUPassTimestampWrites *writes, bool *timed)
{
    wg_timer *t = &wg_ctx(ctx)->timer;
    *timed = false;
    bool profiling = wg_ctx(ctx)->prof.active && wg_ctx(ctx)->prof.gpu;
    if ((!t->active && !profiling) || t->failed != WT_OK)
        return WT_OK;
    if (t->used + 2 > WG_TIMER_QUERIES) {
        wt_status st = harvest(ctx);
        if (st != WT_OK) {
            t->failed = st; /* reported again by the end: its sum would be short */
            return st;
        }
    }
    memset(writes, 0, sizeof *writes);
    writes->querySet = t->queries;
    writes->beginningOfPassWriteIndex = t->used;
    writes->endOfPassWriteIndex = t->used + 1;
    t->pass_names[t->used / 2] = wg_ctx(ctx)->prof.next_name;
    t->pass_details[t->used / 2] = wg_ctx(ctx)->prof.next_detail;
    t->used += 2;
    *timed = true;
    return WT_OK;
}

wt_status wg_timer_begin(wt_context *ctx)
{
    wg_context *w = wg_ctx(ctx);
    wg_timer *t = &w->timer;
    if (!t->supported)
        return wt_fail(WT_ERR_UNSUPPORTED,
                       "wt_context_timer_begin: the device on \"%s\" has no timestamp queries "
                       "(feature timestamp-query); time with the wall clock around "
                       "wt_context_sync instead",
                       w->info.name);
    if (t->active)
        return wt_fail(WT_ERR_INVALID_ARGUMENT,
                       "wt_context_timer_begin: a timer is already running (end it with "
                       "wt_context_timer_end first)");
    wt_status st = wg_check_device(ctx);
    if (st == WT_OK)
        st = create_objects(ctx);
    if (st == WT_OK && t->used > 0) /* a profile's passes: account them first */
        st = harvest(ctx);
    /* Work recorded before begin is not timed: submit it, so that the next
     * launch opens a new, timed pass. */
    if (st == WT_OK)
        st = wg_flush(ctx);
    if (st != WT_OK)
        return st;
    t->active = true;
    t->used = 0;
    t->total_ns = 0;
    t->failed = WT_OK;
    return WT_OK;
}

wt_status wg_timer_end(wt_context *ctx, double *gpu_seconds)
{
    wg_context *w = wg_ctx(ctx);
    wg_timer *t = &w->timer;
    *gpu_seconds = 0;
    if (!t->supported)
        return wt_fail(WT_ERR_UNSUPPORTED,
                       "wt_context_timer_end: the device on \"%s\" has no timestamp queries "
                       "(feature timestamp-query)",
                       w->info.name);
    if (!t->active)
        return wt_fail(WT_ERR_INVALID_ARGUMENT,
                       "wt_context_timer_end: no timer is running (call wt_context_timer_begin "
                       "first)");
    t->active = false; /* even on failure: the next begin starts afresh */
    if (t->failed != WT_OK) {
        t->used = 0;
        (void)wg_finish(ctx);
        return wt_fail(t->failed,
                       "wt_context_timer_end: reading the timestamps of earlier passes failed "
                       "(%s), so the GPU time would be short",
                       wt_status_string(t->failed));
    }
    wt_status st = harvest(ctx);
    t->used = 0;
    if (st != WT_OK)
        return st;
    *gpu_seconds = (double)t->total_ns * 1e-9;
    return WT_OK;
}
