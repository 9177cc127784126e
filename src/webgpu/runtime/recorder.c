/* Deferred execution: launches are recorded into one open compute pass and
 * submitted in batches (every per_submit dispatches, or when the host
 * needs results). Per-launch parameters live in a uniform arena with one
 * slot per dispatch of the batch, bound with a dynamic offset. */
#include "core/profile.h"
#include "webgpu/wg_runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WG_DEFAULT_DISPATCHES_PER_SUBMIT 64
#define WG_MAX_DISPATCHES_PER_SUBMIT 4096

wt_status wg_recorder_init(wt_context *ctx, uint32_t per_submit)
{
    wg_context *w = wg_ctx(ctx);
    wg_recorder *r = &w->rec;
    memset(r, 0, sizeof *r);
    /* WT_DISPATCHES_PER_SUBMIT sets the default, for measurements. */
    const char *env = wt_knob_text(WT_KNOB_DISPATCHES_PER_SUBMIT);
    if (per_submit == 0 && env && *env)
        per_submit = (uint32_t)strtoul(env, NULL, 10);
    if (per_submit == 0)
        per_submit = WG_DEFAULT_DISPATCHES_PER_SUBMIT;
    if (per_submit > WG_MAX_DISPATCHES_PER_SUBMIT)
        per_submit = WG_MAX_DISPATCHES_PER_SUBMIT;
    r->per_submit = per_submit;
    r->batch = 1;
    uint32_t align = w->limits.minUniformBufferOffsetAlignment;
    r->slot_size = WG_MAX_PARAMS;
    while (align && r->slot_size % align)
        r->slot_size += WG_MAX_PARAMS;
    size_t arena_bytes = (size_t)r->slot_size * per_submit;
    r->arena_host = calloc(1, arena_bytes);
    if (!r->arena_host)
        return wt_fail(WT_ERR_OUT_OF_MEMORY, "webgpu: out of host memory");
    return wg_create_buffer(ctx, arena_bytes, WGPUBufferUsage_Uniform | WGPUBufferUsage_CopyDst,
                            "webtensor params", &r->arena);
}

void wg_recorder_destroy(wt_context *ctx)
{
    wg_context *w = wg_ctx(ctx);
    wg_recorder *r = &w->rec;
    const char *stats = wt_knob_text(WT_KNOB_WEBGPU_STATS);
    if (stats && *stats && strcmp(stats, "0") != 0)
        fprintf(stderr,
                "webtensor webgpu: %llu dispatches in %llu submits (%u per submit) and %llu compute "
                "passes, %llu pipelines, bind groups %llu made / %llu reused, toggles %s\n",
                (unsigned long long)w->counters.dispatches,
                (unsigned long long)w->counters.submits, r->per_submit,
                (unsigned long long)w->counters.passes,
                (unsigned long long)w->counters.pipelines,
                (unsigned long long)w->counters.bind_groups_made,
                (unsigned long long)w->counters.bind_group_hits,
                w->toggles[0] ? w->toggles : "(Dawn's defaults)");
    if (r->pass) {
        w->lib.p.ComputePassEncoderEnd(r->pass);
        w->lib.p.ComputePassEncoderRelease(r->pass);
    }
    if (r->encoder)
        w->lib.p.CommandEncoderRelease(r->encoder);
    if (r->arena)
        w->lib.p.BufferRelease(r->arena);
    if (r->readback)
        w->lib.p.BufferRelease(r->readback);
    if (r->readback_b)
        w->lib.p.BufferRelease(r->readback_b);
    for (int i = 0; i < r->async_staging_count; i++)
        w->lib.p.BufferRelease(r->async_staging[i]);
    free(r->arena_host);
    memset(r, 0, sizeof *r);
}

static wt_status ensure_encoder(wg_context *w)
{
    if (w->rec.encoder)
        return WT_OK;
    WGPUCommandEncoderDescriptor desc;
    memset(&desc, 0, sizeof desc);
    w->rec.encoder = w->lib.p.DeviceCreateCommandEncoder(w->device, &desc);
    if (!w->rec.encoder)
        return wt_fail(WT_ERR_BACKEND, "webgpu: creating a command encoder failed");
    return WT_OK;
}

static wt_status ensure_pass(wt_context *ctx)
{
    wg_context *w = wg_ctx(ctx);
    if (w->rec.pass)
        return WT_OK;
    /* A running GPU timer has the pass write its start and end times. */
    WGPUPassTimestampWrites writes;
    bool timed = false;
    wt_status st = w->hooks.pass_writes ? w->hooks.pass_writes(ctx, &writes, &timed) : WT_OK;
    if (st == WT_OK)
        st = ensure_encoder(w);
    if (st != WT_OK)
        return st;
    WGPUComputePassDescriptor desc;
    memset(&desc, 0, sizeof desc);
    desc.timestampWrites = timed ? &writes : NULL;
    w->rec.pass = w->lib.p.CommandEncoderBeginComputePass(w->rec.encoder, &desc);
    if (!w->rec.pass)
        return wt_fail(WT_ERR_BACKEND, "webgpu: beginning a compute pass failed");
    w->counters.passes++;
    return WT_OK;
}

static void end_pass(wg_context *w)
{
    if (!w->rec.pass)
        return;
    w->lib.p.ComputePassEncoderEnd(w->rec.pass);
    w->lib.p.ComputePassEncoderRelease(w->rec.pass);
    w->rec.pass = NULL;
}

wt_status wg_recorder_open_pass(wt_context *ctx)
{
    return ensure_pass(ctx);
}

wt_status wg_copy_encoder(wt_context *ctx, WGPUCommandEncoder *out)
{
    wg_context *w = wg_ctx(ctx);
    /* A copy inside a replayed node: a list of dispatches cannot repeat it. */
    if (ctx->replay_state && ctx->node && w->hooks.replay_not_cacheable)
        w->hooks.replay_not_cacheable(ctx);
    end_pass(w);
    wt_status st = ensure_encoder(w);
    *out = w->rec.encoder;
    return st;
}

wt_status wg_flush(wt_context *ctx)
{
    wg_context *w = wg_ctx(ctx);
    wg_recorder *r = &w->rec;
    if (!r->encoder)
        return wg_check_device(ctx);
    end_pass(w);
    /* The parameters go in queue order before the command buffer that
     * reads them and after the previous batch, which read the same slots. */
    if (r->dispatches)
        w->lib.p.QueueWriteBuffer(w->queue, r->arena, 0, r->arena_host,
                                  (size_t)r->dispatches * r->slot_size);
    WGPUCommandBufferDescriptor desc;
    memset(&desc, 0, sizeof desc);
    WGPUCommandBuffer cmd = w->lib.p.CommandEncoderFinish(r->encoder, &desc);
    w->lib.p.CommandEncoderRelease(r->encoder);
    r->encoder = NULL;
    r->dispatches = 0;
    r->batch++;
    if (!cmd) {
        wt_status st = wg_check_device(ctx);
        return st != WT_OK ? st
                           : wt_fail(WT_ERR_BACKEND, "webgpu: finishing a command buffer failed");
    }
    w->lib.p.QueueSubmit(w->queue, 1, &cmd);
    w->counters.submits++;
    w->lib.p.CommandBufferRelease(cmd);
    return wg_check_device(ctx);
}

static void on_work_done(WGPUQueueWorkDoneStatus status, WGPUStringView message, void *userdata1,
                         void *userdata2)
{
    (void)message;
    (void)userdata2;
    *(WGPUQueueWorkDoneStatus *)userdata1 = status;
}

wt_status wg_finish(wt_context *ctx)
{
    wg_context *w = wg_ctx(ctx);
    wt_status st = wg_flush(ctx);
    if (st != WT_OK)
        return st;
    WGPUQueueWorkDoneStatus done = 0;
    WGPUQueueWorkDoneCallbackInfo cb;
    memset(&cb, 0, sizeof cb);
    cb.mode = WGPUCallbackMode_WaitAnyOnly;
    cb.callback = on_work_done;
    cb.userdata1 = &done;
    WGPUFuture f = w->lib.p.QueueOnSubmittedWorkDone(w->queue, cb);
    st = wg_wait(&w->lib, w->instance, f, "the queue");
    if (st != WT_OK)
        return st;
    st = wg_check_device(ctx);
    if (st != WT_OK)
        return st;
    if (done != WGPUQueueWorkDoneStatus_Success)
        return wt_fail(WT_ERR_BACKEND, "webgpu: waiting for the queue failed (status %u)",
                       (unsigned)done);
    return WT_OK;
}

/* ----------------------------------------------------------- launches */

wt_status wg_dispatch(wt_context *ctx, const wg_launch *launch)
{
    wg_context *w = wg_ctx(ctx);
    wg_recorder *r = &w->rec;
    wt_status st = wg_check_device(ctx);
    if (st != WT_OK || launch->workgroups == 0)
        return st;
    if (launch->params_size > WG_MAX_PARAMS || launch->nbindings < 0 ||
        launch->nbindings > WG_MAX_BINDINGS ||
        (uint32_t)launch->nbindings > w->limits.maxStorageBuffersPerShaderStage)
        return wt_fail(WT_ERR_INVALID_ARGUMENT,
                       "webgpu: launch of \"%s\": %zu parameter bytes and %d bindings are more "
                       "than allowed (%d, %d)",
                       launch->shader, launch->params_size, launch->nbindings, WG_MAX_PARAMS,
                       WG_MAX_BINDINGS);
    for (int i = 0; i < launch->nbindings; i++) {
        if (!launch->bindings[i].storage || !launch->bindings[i].storage->device)
            return wt_fail(WT_ERR_INVALID_ARGUMENT,
                           "webgpu: launch of \"%s\": binding %d has no buffer", launch->shader,
                           i + 1);
        /* Kernels reach tensors past the binding limit through windows
         * (windows.c); a whole buffer that large cannot be bound. */
        const wg_buffer *b = launch->bindings[i].storage->device;
        if ((st = wg_check_buffer(ctx, b, launch->shader)) != WT_OK)
            return st;
        if (b->size > w->limits.maxStorageBufferBindingSize)
            return wt_fail(WT_ERR_UNSUPPORTED,
                           "webgpu: launch of \"%s\": binding %d is %llu bytes, more than one "
                           "binding may hold here (maxStorageBufferBindingSize %llu); the op "
                           "must go through wg_windowed",
                           launch->shader, i + 1, (unsigned long long)b->size,
                           (unsigned long long)w->limits.maxStorageBufferBindingSize);
    }

    /* Fold into 2-D with rows as even as possible (shaders skip the few
     * workgroups past the end): x = max_dim would leave up to a whole row
     * with nothing to do (65,534 empty workgroups for 65,536). */
    uint64_t max_dim = w->caps.max_workgroups_per_dim;
    uint64_t y = (launch->workgroups + max_dim - 1) / max_dim;
    uint64_t x = (launch->workgroups + y - 1) / y, z = 1;
    if (launch->grid[0]) { /* exact grid (custom kernels check it against the limits) */
        x = launch->grid[0];
        y = launch->grid[1] ? launch->grid[1] : 1;
        z = launch->grid[2] ? launch->grid[2] : 1;
    }
    if (y > max_dim)
        return wt_fail(WT_ERR_UNSUPPORTED,
                       "webgpu: launch of \"%s\" needs %llu workgroups, more than %llu x %llu",
                       launch->shader, (unsigned long long)launch->workgroups,
                       (unsigned long long)max_dim, (unsigned long long)max_dim);

    const wg_pipeline *pipe = NULL;
    if ((st = wg_pipeline_get(ctx, launch, &pipe)) != WT_OK)
        return st;
    WGPUBindGroup group = NULL;
    if ((st = wg_bind_group_get(ctx, pipe, launch, &group)) != WT_OK)
        return st;
    if (ctx->replay_state && ctx->node && w->hooks.replay_note_dispatch) /* what the graph's nodes dispatch */
        w->hooks.replay_note_dispatch(ctx, pipe, launch, (uint32_t)x, (uint32_t)y, (uint32_t)z);
    /* Profiling: each dispatch in a pass of its own, timed by the pass. */
    double host_start = 0;
    if (w->prof.active) {
        end_pass(w);
        if (w->hooks.before_dispatch)
            w->hooks.before_dispatch(ctx, launch->shader);
        host_start = wt_now_us();
    }
    if ((st = ensure_pass(ctx)) != WT_OK)
        return st;

    uint32_t offset = r->dispatches * r->slot_size;
    if (launch->params_size)
        memcpy(r->arena_host + offset, launch->params, launch->params_size);
    w->lib.p.ComputePassEncoderSetPipeline(r->pass, pipe->pipeline);
    w->lib.p.ComputePassEncoderSetBindGroup(r->pass, 0, group, 1, &offset);
    w->lib.p.ComputePassEncoderDispatchWorkgroups(r->pass, (uint32_t)x, (uint32_t)y, (uint32_t)z);
    for (int i = 0; i < launch->nbindings; i++) {
        wg_buffer *b = launch->bindings[i].storage->device;
        b->last_batch = r->batch;
        if (b->parent)
            b->parent->last_batch = r->batch;
    }
    w->counters.dispatches++;
    if (w->prof.active) {
        end_pass(w);
        r->dispatches++;
        st = w->hooks.after_dispatch ? w->hooks.after_dispatch(ctx, host_start) : WT_OK;
        if (st != WT_OK || r->dispatches >= r->per_submit)
            return st != WT_OK ? st : wg_flush(ctx);
        return WT_OK;
    }
    /* Validation mode: each op runs alone, so an error names its op. */
    if (w->opts.validation) {
        r->dispatches++;
        st = wg_finish(ctx);
        if (st != WT_OK)
            wt_error_prefix(launch->shader);
        return st;
    }
    if (++r->dispatches >= r->per_submit)
        return wg_flush(ctx);
    return WT_OK;
}

/* ------------------------------------------------------------ scratch */

wt_status wg_scratch(wt_context *ctx, size_t bytes, wt_storage **out)
{
    *out = NULL;
    wt_storage *s = calloc(1, sizeof *s);
    if (!s)
        return wt_fail(WT_ERR_OUT_OF_MEMORY, "webgpu: out of host memory");
    wg_buffer *b = NULL;
    wt_status st = wg_pool_acquire(ctx, bytes, &b);
    if (st != WT_OK) {
        free(s);
        return st;
    }
    s->refcount = 1;
    s->ctx = ctx;
    s->bytes = bytes;
    s->device = b;
    s->backend_scratch = true;
    *out = s;
    return WT_OK;
}

void wg_scratch_release(wt_context *ctx, wt_storage *s)
{
    /* A graph that binds it in its list of dispatches holds a reference. */
    if (!s || --s->refcount > 0)
        return;
    /* Back to the pool at once: later launches that reuse the buffer are
     * recorded after the ones that read it, and the GPU runs them in
     * order. */
    wg_pool_release(ctx, s->device);
    free(s);
}

/* ------------------------------------------------------------ map read */

static void on_mapped(WGPUMapAsyncStatus status, WGPUStringView message, void *userdata1,
                      void *userdata2)
{
    (void)message;
    (void)userdata2;
    *(WGPUMapAsyncStatus *)userdata1 = status;
}

wt_status wg_map_read(wt_context *ctx, WGPUBuffer buffer, uint64_t len, const char *what,
                      const void **out)
{
    wg_context *w = wg_ctx(ctx);
    const wgpu_procs *p = &w->lib.p;
    *out = NULL;
    WGPUMapAsyncStatus mapped = 0;
    WGPUBufferMapCallbackInfo cb;
    memset(&cb, 0, sizeof cb);
    cb.mode = WGPUCallbackMode_WaitAnyOnly;
    cb.callback = on_mapped;
    cb.userdata1 = &mapped;
    WGPUFuture f = p->BufferMapAsync(buffer, WGPUMapMode_Read, 0, (size_t)len, cb);
    wt_status st = wg_wait(&w->lib, w->instance, f, what);
    if (st != WT_OK)
        return st;
    if ((st = wg_check_device(ctx)) != WT_OK)
        return st;
    if (mapped != WGPUMapAsyncStatus_Success)
        return wt_fail(WT_ERR_BACKEND, "webgpu: mapping failed while %s (status %u)", what,
                       (unsigned)mapped);
    const void *range = p->BufferGetConstMappedRange(buffer, 0, (size_t)len);
    if (!range) {
        p->BufferUnmap(buffer);
        return wt_fail(WT_ERR_BACKEND, "webgpu: the mapped range is not available while %s", what);
    }
    *out = range;
    return WT_OK;
}

/* Read-back staging buffers up to this size stay for the next read. */
#define WG_READBACK_KEEP_BYTES (64ull << 20)

/* Reads of more than two pieces are pipelined (see wg_recorder). */
#define WG_READ_PIECE_BYTES (8ull << 20)

/* *buf at least `need` bytes of MapRead staging (a power of two). */
static wt_status ensure_staging(wt_context *ctx, WGPUBuffer *buf, uint64_t *size, uint64_t need)
{
    if (*size >= need)
        return WT_OK;
    uint64_t n = 4096;
    while (n < need)
        n *= 2;
    WGPUBuffer nb = NULL;
    wt_status st = wg_create_buffer(ctx, n, WGPUBufferUsage_MapRead | WGPUBufferUsage_CopyDst,
                                    "webtensor readback", &nb);
    if (st != WT_OK)
        return st;
    if (*buf)
        wg_ctx(ctx)->lib.p.BufferRelease(*buf);
    *buf = nb;
    *size = n;
    return WT_OK;
}

/* Words [begin, begin + len) of b in pieces through two staging buffers:
 * the copy of piece i + 1 is submitted before piece i is mapped and copied
 * out, so the device's copy and the host's overlap. dst receives the
 * bytes [skip, skip + bytes) of that range. */
static wt_status read_pipelined(wt_context *ctx, wg_buffer *b, uint64_t begin, uint64_t len, uint8_t *dst,
                                uint64_t skip, uint64_t bytes)
{
    wg_context *w = wg_ctx(ctx);
    const wgpu_procs *p = &w->lib.p;
    wg_recorder *r = &w->rec;
    const uint64_t P = WG_READ_PIECE_BYTES;
    wt_status st = ensure_staging(ctx, &r->readback, &r->readback_size, P);
    if (st == WT_OK)
        st = ensure_staging(ctx, &r->readback_b, &r->readback_b_size, P);
    if (st != WT_OK)
        return st;
    WGPUBuffer stage[2] = {r->readback, r->readback_b};
    uint64_t n = (len + P - 1) / P;
    for (uint64_t i = 0; i <= n && st == WT_OK; i++) {
        /* Submit the copy of piece i (its buffer is unmapped by now). */
        if (i < n) {
            uint64_t plen = len - i * P < P ? len - i * P : P;
            WGPUCommandEncoder enc = NULL;
            if ((st = wg_copy_encoder(ctx, &enc)) != WT_OK)
                break;
            p->CommandEncoderCopyBufferToBuffer(enc, b->buffer, begin + i * P, stage[i % 2], 0, plen);
            if ((st = wg_flush(ctx)) != WT_OK)
                break;
        }
        /* Copy piece i - 1 out while piece i is on its way. */
        if (i == 0)
            continue;
        uint64_t k = i - 1, ps = k * P, plen = len - ps < P ? len - ps : P, pe = ps + plen;
        const uint8_t *src = NULL;
        if ((st = wg_map_read(ctx, stage[k % 2], plen, "reading a buffer back", (const void **)&src)) != WT_OK)
            break;
        uint64_t lo = ps > skip ? ps : skip, hi = pe < skip + bytes ? pe : skip + bytes;
        if (hi > lo)
            memcpy(dst + (lo - skip), src + (lo - ps), (size_t)(hi - lo));
        p->BufferUnmap(stage[k % 2]);
    }
    return st;
}

/* Copies [offset, offset + bytes) of b into dst; offset and size need not
 * be multiples of 4 (the copy is widened to whole words). */
wt_status wg_read_buffer(wt_context *ctx, wg_buffer *b, size_t offset, void *dst, size_t bytes)
{
    wg_context *w = wg_ctx(ctx);
    const wgpu_procs *p = &w->lib.p;
    uint64_t begin = offset & ~(uint64_t)3;
    uint64_t end = ((uint64_t)offset + bytes + 3) & ~(uint64_t)3;
    uint64_t len = end - begin;
    if (end > b->size)
        return wt_fail(WT_ERR_INVALID_ARGUMENT,
                       "webgpu: reading bytes %zu..%zu of a %llu-byte buffer", offset,
                       offset + bytes, (unsigned long long)b->size);
    if (len > 2 * WG_READ_PIECE_BYTES)
        return read_pipelined(ctx, b, begin, len, dst, offset - begin, bytes);
    wg_recorder *r = &w->rec;
    if (r->readback_size < len) {
        uint64_t size = 4096;
        while (size < len)
            size *= 2;
        if (size > w->limits.maxBufferSize)
            size = len;
        WGPUBuffer rb = NULL;
        wt_status st = wg_create_buffer(ctx, size, WGPUBufferUsage_MapRead | WGPUBufferUsage_CopyDst,
                                        "webtensor readback", &rb);
        if (st != WT_OK)
            return st;
        if (r->readback)
            p->BufferRelease(r->readback);
        r->readback = rb;
        r->readback_size = size;
    }
    /* The copy goes after the pending dispatches, in the same submit. */
    WGPUCommandEncoder enc = NULL;
    wt_status st = wg_copy_encoder(ctx, &enc);
    if (st != WT_OK)
        return st;
    p->CommandEncoderCopyBufferToBuffer(enc, b->buffer, begin, r->readback, 0, len);
    if ((st = wg_flush(ctx)) != WT_OK)
        return st;

    const uint8_t *src = NULL;
    if ((st = wg_map_read(ctx, r->readback, len, "reading a buffer back", (const void **)&src)) !=
        WT_OK)
        return st;
    memcpy(dst, src + (offset - begin), bytes);
    p->BufferUnmap(r->readback);
    /* A large staging buffer is not kept: holding host-visible memory the
     * size of the biggest read ever made costs memory for the context's
     * lifetime, and on the H200 the ops that followed a 1 GiB read ran up
     * to 2x slower while it was kept. */
    if (r->readback_size > WG_READBACK_KEEP_BYTES) {
        p->BufferRelease(r->readback);
        r->readback = NULL;
        r->readback_size = 0;
    }
    return WT_OK;
}
