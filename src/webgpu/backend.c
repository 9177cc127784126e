/* The WebGPU backend as the API layer sees it: context lifetime, storage,
 * host transfers, sync; the ops themselves are in kernels_*.c. */
#include "core/knobs.h"
#include "webgpu/wg_runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *api_name(wt_gpu_api api)
{
    switch (api) {
    case WT_GPU_API_VULKAN: return "Vulkan";
    case WT_GPU_API_OPENGLES: return "OpenGL ES";
    case WT_GPU_API_METAL: return "Metal";
    case WT_GPU_API_D3D12: return "D3D12";
    case WT_GPU_API_BROWSER: return "the host's WebGPU";
    default: return "any GPU API";
    }
}

static void webgpu_destroy(wt_context *ctx)
{
    wg_context *w = wg_ctx(ctx);
    if (!w)
        return;
    const wgpu_procs *p = &w->lib.p;
    wg_profile_destroy(ctx); /* harvests and writes the trace first */
    /* Let queued work end before its buffers go; errors no longer have
     * anyone to go to. */
    if (w->device && !w->lost)
        (void)wg_finish(ctx);
    wg_checks_drop(ctx);
    wg_rope_tables_drop(ctx);
    wg_pipeline_cache_destroy(ctx);
    wg_pool_destroy(ctx);
    wg_upload_staging_release(ctx); /* its slots' pending maps waited for */
    wg_recorder_destroy(ctx);
    wg_timer_destroy(ctx);
    if (w->device) {
        if (w->queue)
            p->QueueRelease(w->queue);
        p->DeviceDestroy(w->device);
        p->DeviceRelease(w->device);
        /* The device-lost callback (reason Destroyed) is delivered here,
         * while w is still alive. */
        p->InstanceProcessEvents(w->instance);
    }
    if (w->adapter)
        p->AdapterRelease(w->adapter);
    if (w->instance)
        p->InstanceRelease(w->instance);
    wg_library_unload(&w->lib);
    free(w);
    ctx->impl = NULL;
}

/* AUTO (no backend, API or adapter named) takes a real GPU only: on a
 * software renderer every op runs slower than on the CPU backend, so
 * that case is "no device" and the core falls back to the CPU. */
static bool explicit_request(const wt_context_options *opts)
{
    return opts->backend == WT_BACKEND_WEBGPU || opts->gpu_api != WT_GPU_API_AUTO ||
           opts->adapter_index >= 0;
}

static wt_status choose_adapter(wt_context *ctx, const wt_context_options *opts)
{
    wg_context *w = wg_ctx(ctx);
    wg_adapter_entry *list = NULL;
    int n = 0;
    wg_adapter_query q = {opts->gpu_api, opts->power_preference,
                          (opts->experimental & WT_EXPERIMENTAL_SUBGROUP_MATRIX) != 0};
    wt_status st = wg_adapters_enumerate(&w->lib, w->instance, &q, &list, &n);
    if (st != WT_OK)
        return st;
    int index = opts->adapter_index < 0 ? 0 : opts->adapter_index;
    if (n == 0)
        st = wt_fail(WT_ERR_NO_DEVICE,
                     "webgpu: no usable WebGPU adapter for %s (Dawn's Null adapter is never "
                     "used; check the GPU driver, e.g. Vulkan ICD or EGL)",
                     api_name(opts->gpu_api));
    else if (index >= n)
        st = wt_fail(WT_ERR_INVALID_ARGUMENT,
                     "webgpu: adapter_index %d, but there are %d adapters for %s",
                     opts->adapter_index, n, api_name(opts->gpu_api));
    else if (!explicit_request(opts) && wg_adapter_is_software(&list[0].info))
        st = wt_fail(WT_ERR_NO_DEVICE,
                     "the only WebGPU adapters are software renderers (%s on %s); the CPU "
                     "backend is faster (ask for WT_BACKEND_WEBGPU, a gpu_api or an "
                     "adapter_index to use them)",
                     list[0].info.name, api_name(list[0].info.api));
    if (st == WT_OK) {
        w->adapter = list[index].adapter;
        w->info = list[index].info;
        list[index].adapter = NULL; /* kept; the others are released */
        if (opts->adapter_index >= 0)
            snprintf(ctx->reason, sizeof ctx->reason, "adapter %d of %d, as asked (adapter_index)",
                     index, n);
        else
            snprintf(ctx->reason, sizeof ctx->reason,
                     "%s: the best of %d adapter%s for %s (%s%s)",
                     opts->backend == WT_BACKEND_AUTO ? "AUTO" : "WT_BACKEND_WEBGPU", n,
                     n == 1 ? "" : "s", api_name(opts->gpu_api),
                     wg_adapter_is_software(&w->info) ? "a software renderer" :
                     w->info.type == WT_ADAPTER_DISCRETE_GPU ? "discrete GPU" :
                     w->info.type == WT_ADAPTER_INTEGRATED_GPU ? "integrated GPU" : "GPU",
                     opts->power_preference == WT_POWER_LOW_POWER ? ", low power preferred" : "");
    }
    wg_adapters_release(&w->lib, list, n);
    return st;
}

static wt_status webgpu_create(wt_context *ctx, const wt_context_options *opts)
{
    wg_context *w = calloc(1, sizeof *w);
    if (!w)
        return wt_fail(WT_ERR_OUT_OF_MEMORY, "webgpu: out of host memory");
    ctx->impl = w;
    w->opts = *opts;
    w->opts.webgpu_library = NULL; /* the caller's string is not kept */
    w->opts.toggles = NULL;
    wt_status st = wg_library_load(opts->webgpu_library, &w->lib);
    if (st == WT_OK)
        st = wg_instance_create_with(&w->lib,
                                     (opts->experimental & WT_EXPERIMENTAL_SUBGROUP_MATRIX) != 0,
                                     &w->instance);
    if (st == WT_OK)
        st = choose_adapter(ctx, opts);
    if (st == WT_OK) {
        /* The device reads the caller's toggles while it is made. */
        w->opts.toggles = opts->toggles;
        st = wg_device_create(ctx);
        w->opts.toggles = NULL;
    }
    /* The layers above the recorder hook into it (wg_hooks). */
    w->hooks = (wg_hooks){.pass_writes = wg_timer_pass_writes,
                          .before_dispatch = wg_profile_name_next,
                          .after_dispatch = wg_profile_after_dispatch,
                          .timed_pass = wg_profile_pass,
                          .replay_slot = wg_replay_slot,
                          .replay_note_dispatch = wg_replay_note_dispatch,
                          .replay_note_check = wg_replay_note_check,
                          .replay_not_cacheable = wg_replay_not_cacheable};
    if (st == WT_OK)
        st = wg_recorder_init(ctx, opts->dispatches_per_submit);
    if (st == WT_OK && wg_trace_wanted()) { /* WT_TRACE: profile from the start */
        w->prof.log.trace = true;
        st = wg_profile_begin(ctx);
    }
    if (st != WT_OK) {
        /* Keep the message: teardown may overwrite it. */
        char message[1024];
        snprintf(message, sizeof message, "%s", wt_last_error());
        webgpu_destroy(ctx);
        return wt_fail(st, "%s", message);
    }
    return WT_OK;
}

/* A sync also reads the device-side checks pending (checks.c). */
static wt_status webgpu_sync(wt_context *ctx)
{
    wt_status st = wg_finish(ctx);
    if (st == WT_OK && wg_ctx(ctx)->ncheck)
        st = wg_checks_verify(ctx);
    return st;
}

/* ------------------------------------------------------------ storage */

static wt_status webgpu_storage_alloc(wt_context *ctx, wt_storage *s)
{
    wt_status st = wg_check_device(ctx);
    if (st != WT_OK)
        return st;
    wg_buffer *b = NULL;
    st = wg_pool_acquire(ctx, s->bytes, &b);
    if (st == WT_OK)
        s->device = b;
    return st;
}

static void webgpu_storage_free(wt_context *ctx, wt_storage *s)
{
    wg_pool_release(ctx, s->device);
    s->device = NULL;
}


static wt_status webgpu_download(wt_context *ctx, wt_storage *s, size_t offset, void *dst,
                                 size_t bytes)
{
    wt_status st = wg_check_device(ctx);
    if (st == WT_OK)
        st = wg_check_buffer(ctx, s->device, "reading a tensor");
    if (st != WT_OK || bytes == 0)
        return st;
    st = wg_read_buffer(ctx, s->device, offset, dst, bytes);
    if (st == WT_OK)
        ctx->stats.bytes_from_device += bytes;
    /* A blocking read synchronises: the pending device-side checks too. */
    if (st == WT_OK && wg_ctx(ctx)->ncheck)
        st = wg_checks_verify(ctx);
    return st;
}

static wt_status webgpu_upload(wt_context *ctx, wt_storage *s, size_t offset, const void *src,
                               size_t bytes)
{
    wg_context *w = wg_ctx(ctx);
    wg_buffer *b = s->device;
    wt_status st = wg_check_device(ctx);
    if (st == WT_OK)
        st = wg_check_buffer(ctx, b, "writing a tensor");
    if (st != WT_OK || bytes == 0)
        return st;
    /* An upload inside a recorded node: a list of dispatches cannot repeat it. */
    if (ctx->replay_state && ctx->node && !w->constant_upload)
        wg_replay_not_cacheable(ctx);
    if ((uint64_t)offset + bytes > b->size)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "webgpu: writing bytes %zu..%zu of a %llu-byte buffer",
                       offset, offset + bytes, (unsigned long long)b->size);
    /* Staged by default on a real GPU, in pieces of 1 MiB: on an H200,
     * host -> device writes of a model's gradients ran at 8.7 GB/s that
     * way against 1.2 GB/s by queue writes (bench/RESULTS.md, the
     * two-GPU section); on a software renderer queue writes were faster. */
    const bool staged = wt_knob_count(WT_KNOB_WEBGPU_UPLOAD_STAGED, w->caps.cpu_adapter ? 0 : 1) == 1;
    uint64_t knob = wt_knob_count(WT_KNOB_WEBGPU_UPLOAD_PIECE_BYTES, (uint64_t)(staged ? 1 : 4) << 20);
    /* Through the context's mapped staging ring (runtime/upload.c), for a
     * piece or more: the copies are recorded after the open batch, so no
     * flush is needed first. */
    if (offset % 4 == 0 && bytes % 4 == 0 && staged && (knob == 0 || bytes >= knob)) {
        st = wg_upload_staged(ctx, b->buffer, offset, src, bytes, knob == 0 ? bytes : knob);
        if (st != WT_ERR_UNSUPPORTED) {
            if (st == WT_OK)
                ctx->stats.bytes_to_device += bytes;
            return st;
        }
    }
    /* A queue write lands at submit order, i.e. before the commands still
     * in the open encoder. If those use this (pooled, reused) buffer they
     * must be submitted first, or the write would overtake them. */
    if (b->last_batch == w->rec.batch && (st = wg_flush(ctx)) != WT_OK)
        return st;
    ctx->stats.bytes_to_device += bytes;
    if (offset % 4 == 0 && bytes % 4 == 0) {
        /* In pieces: Dawn stages a queue write in a ring of reused 4 MiB
         * upload buffers, but gives a larger write a new staging buffer
         * of its own (fresh host-visible memory, allocated and faulted in
         * on every write). */
        size_t piece = knob == 0 || knob > bytes ? bytes : (size_t)(knob & ~(uint64_t)3);
        if (piece == 0)
            piece = 4;
        for (size_t done = 0; done < bytes; done += piece) {
            size_t n = bytes - done < piece ? bytes - done : piece;
            w->lib.p.QueueWriteBuffer(w->queue, b->buffer, offset + done, (const uint8_t *)src + done, n);
        }
        return wg_check_device(ctx);
    }
    /* Queue writes need whole words: merge with the bytes around. */
    size_t begin = offset & ~(size_t)3;
    size_t end = (offset + bytes + 3) & ~(size_t)3;
    uint8_t *words = malloc(end - begin);
    if (!words)
        return wt_fail(WT_ERR_OUT_OF_MEMORY, "webgpu: out of host memory");
    st = wg_read_buffer(ctx, b, begin, words, end - begin);
    if (st == WT_OK) {
        memcpy(words + (offset - begin), src, bytes);
        w->lib.p.QueueWriteBuffer(w->queue, b->buffer, begin, words, end - begin);
        st = wg_check_device(ctx);
    }
    free(words);
    return st;
}

/* -------------------------------------------------------------- misc */

static wt_status webgpu_adapter_info(const wt_context *ctx, wt_adapter_info *out)
{
    *out = wg_ctx(ctx)->info;
    return WT_OK;
}

static void webgpu_context_info(const wt_context *ctx, wt_context_info *out)
{
    const wg_context *w = wg_ctx(ctx);
    out->has_adapter = true;
    out->adapter = w->info;
    out->shader_f16 = w->caps.shader_f16;
    out->subgroups = w->caps.subgroups;
    out->timestamp_query = w->timer.supported;
    out->subgroup_matrix = w->caps.subgroup_matrix;
    snprintf(out->features, sizeof out->features, "%s", w->features);
    if (w->info.api == WT_GPU_API_OPENGLES) {
        strncat(out->features, "; ", sizeof out->features - strlen(out->features) - 1);
        strncat(out->features, wg_egl_note(), sizeof out->features - strlen(out->features) - 1);
    }
    char more[256];
    snprintf(more, sizeof more, "; f16 kernels: %s", wg_f16_path(ctx));
    strncat(out->features, more, sizeof out->features - strlen(out->features) - 1);
    if (w->caps.subgroup_matrix) {
        snprintf(more, sizeof more, "; matrix units: %llu f16 products so far, %llu declined%s%s",
                 (unsigned long long)w->matrix.runs, (unsigned long long)w->matrix.declined,
                 w->matrix.why ? " (last: " : "", w->matrix.why ? w->matrix.why : "");
        strncat(out->features, more, sizeof out->features - strlen(out->features) - 1);
        if (w->matrix.why) strncat(out->features, ")", sizeof out->features - strlen(out->features) - 1);
    }
    snprintf(out->toggles, sizeof out->toggles, "%s", w->toggles);
    out->dispatches_per_submit = w->rec.per_submit;
    out->pipeline_cache = !w->opts.disable_pipeline_cache;
    out->max_buffer_size = w->max_buffer;
    out->max_binding_size = w->limits.maxStorageBufferBindingSize;
}

static void webgpu_pipeline_stats(const wt_context *ctx, wt_pipeline_stats *out)
{
    const wg_context *w = wg_ctx(ctx);
    out->variants = (uint64_t)w->cache.npipelines;
    out->compiles = w->counters.pipelines;
    out->hits = w->counters.pipeline_hits;
    out->compile_seconds = w->counters.compile_seconds;
    out->bind_groups_made = w->counters.bind_groups_made;
    out->bind_group_hits = w->counters.bind_group_hits;
    out->dispatches = w->counters.dispatches;
    out->submits = w->counters.submits;
    out->replay_shared_bytes = w->counters.replay_shared_bytes;
}

static void webgpu_trim(wt_context *ctx)
{
    /* Bind groups keep buffers alive: with the pool gone they would only
     * pin memory. */
    wg_pool_trim(ctx);
    wg_bind_groups_forget(ctx, NULL);
}

/* WebGPU's one op entry: each node kind to its kernel, through the
 * windows layer (windows.c) so that tensors past one binding work. */
static wt_status webgpu_run(wt_context *ctx, const wt_node *n)
{
    const wt_tensor *const *in = n->in;
    wt_tensor *const *out = n->out;
    switch (n->kind) {
    case WT_NODE_FILL: return wg_win_fill_bits(ctx, out[0], n->p.bits);
    case WT_NODE_COPY: return wg_win_copy(ctx, in[0], out[0]);
    case WT_NODE_CAST: return wg_win_cast(ctx, in[0], out[0]);
    case WT_NODE_ELEMENTWISE: {
        wt_ew_args a = wt_node_ew_args(n);
        return wg_win_elementwise(ctx, &a);
    }
    case WT_NODE_WHERE: return wg_win_where(ctx, in[0], in[1], in[2], n->p.bits, out[0]);
    case WT_NODE_MATMUL: return wg_win_matmul(ctx, in[0], in[1], out[0]);
    case WT_NODE_MATMUL_FUSED:
        if (in[3]) return wg_win_matmul_aux(ctx, in[0], in[1], in[2], n->p.act, in[3], out[0]);
        return wg_win_matmul_fused(ctx, in[0], in[1], in[2], n->p.act, out[0]);
    case WT_NODE_REDUCE: {
        wt_reduce_args r = {.op = n->p.reduce.op, .shift = in[1], .n = n->p.reduce.n};
        return wg_win_reduce(ctx, &r, in[0], n->p.reduce.nreduced, out[0]);
    }
    case WT_NODE_ROWWISE:
        return wg_win_rowwise(ctx, n->p.row.op, in[0], in[1], in[2], n->p.row.eps, out[0]);
    case WT_NODE_ARGREDUCE:
        return wg_win_argreduce(ctx, n->p.argreduce.is_min, in[0], n->p.argreduce.nreduced, out[0]);
    case WT_NODE_SCAN: return wg_win_scan(ctx, n->p.scan.op, in[0], n->p.scan.n, n->p.scan.inner, out[0]);
    case WT_NODE_RANDOM: return wg_win_random(ctx, &n->p.random, in[0], out[0]);
    case WT_NODE_REMAP: return wg_win_remap(ctx, in[0], &n->p.remap, out[0]);
    case WT_NODE_COPY_INTO:
        if (in[1]) { /* a start read on the device: one dispatch, no windows */
            if (wg_needs_windows(ctx, in[0]) || wg_needs_windows(ctx, out[0]))
                return wt_fail(WT_ERR_UNSUPPORTED, "webgpu copy_into_at: tensors past one binding");
            return wg_op_copy_into_at(ctx, in[0], in[1], n->p.copy_at.stride, n->p.copy_at.limit, out[0]);
        }
        return wg_win_copy_into(ctx, in[0], out[0]);
    case WT_NODE_GATHER:
        return wg_win_gather(ctx, in[0], n->p.index.axis, in[1], n->p.index.trusted, out[0]);
    case WT_NODE_SCATTER_ADD: return wg_win_scatter_add(ctx, out[0], n->p.index.axis, in[0], in[1]);
    case WT_NODE_ARGSORT: return wg_win_argsort_rows(ctx, in[0], n->p.sort.descending, n->p.sort.k, out[0]);
    case WT_NODE_IM2COL:
        return wg_win_im2col(ctx, in[0], &n->p.window.win, n->p.window.row0, n->p.window.rows, out[0]);
    case WT_NODE_COL2IM: return wg_win_col2im(ctx, in[0], in[1], &n->p.window.win, out[0]);
    case WT_NODE_CONV2D:
        return wg_win_conv2d(ctx, in[0], in[1], in[2], &n->p.window.win, n->p.window.groups, out[0]);
    case WT_NODE_CHANNEL_NORM: return wg_win_channel_norm(ctx, in[0], in[1], n->p.eps, out[0]);
    case WT_NODE_CHANNEL_MOMENTS: return wg_win_channel_moments(ctx, in[0], out[0]);
    case WT_NODE_POOL2D: return wg_win_pool2d(ctx, &n->p.pool, in[0], out[0], out[1]);
    case WT_NODE_SOFTMAX_AXIS: return wg_win_softmax_axis(ctx, n->p.row.op, in[0], out[0]);
    case WT_NODE_ATTENTION: {
        wt_attention_args a = wt_node_attention_args(n);
        return wg_win_attention(ctx, &a);
    }
    case WT_NODE_ATTENTION_BACKWARD:
        return wg_attention_backward(ctx, in[0], in[1], in[2], in[3], in[4], in[5], n->p.attention.causal, n->p.attention.scale,
                                     out[0], out[1], out[2]);
    case WT_NODE_ROPE: return wg_win_rope(ctx, in[0], in[1], n->p.rope.theta, n->p.rope.offset, out[0]);
    case WT_NODE_INTERPOLATE: return wg_win_interpolate(ctx, &n->p.interp, false, in[0], out[0]);
    case WT_NODE_INTERPOLATE_BACKWARD: return wg_win_interpolate(ctx, &n->p.interp, true, in[0], out[0]);
    case WT_NODE_SAMPLE:
        return wg_sample(ctx, in[0], in[1], n->p.sample.inv_temp, n->p.sample.top_k, n->p.sample.top_p,
                         n->p.sample.seed, out[0]);
    case WT_NODE_DEQUANTIZE: return wg_dequantize(ctx, n->p.quant.type, n->p.quant.k, in[0], out[0]);
    case WT_NODE_LINEAR_QUANT:
        return wg_linear_quant(ctx, n->p.quant.type, n->p.quant.k, in[0], in[1], in[2], in[3], in[4],
                               n->p.quant.rms_norm, n->p.quant.swiglu, n->p.quant.eps, out[0]);
    case WT_NODE_ROPE_KV_CACHE:
        return wg_rope_kv_cache(ctx, in[0], in[1], &n->p.rope_kv.freqs, n->p.rope_kv.offset, n->p.rope_kv.q_heads,
                                out[0], out[1]);
    case WT_NODE_ROPE_KV_ATTENTION:
        return wg_rope_kv_attention(ctx, in[0], in[1], in[2], &n->p.rope_kv.freqs, n->p.rope_kv.offset,
                                    n->p.rope_kv.q_heads, n->p.rope_kv.scale, out[0], out[1]);
    case WT_NODE_NORM_BACKWARD:
        /* The kernel binds whole storages; past one binding the caller composes it. */
        if (wg_needs_windows(ctx, in[0]) || wg_needs_windows(ctx, in[1]) || wg_needs_windows(ctx, out[0]) ||
            (out[1] && wg_needs_windows(ctx, out[1])))
            return wt_fail(WT_ERR_UNSUPPORTED, "webgpu norm_backward: tensors past one binding");
        return wg_op_norm_backward(ctx, n->p.row.op, in[0], in[1], in[2], n->p.row.eps, out[0], out[1]);
    case WT_NODE_LINEAR_FUSED:
        return wg_linear_fused(ctx, in[0], in[1], in[2], in[3], in[4], n->p.linear.rms_norm, n->p.linear.swiglu,
                               n->p.linear.eps, out[0]);
    case WT_NODE_ACT_BACKWARD: return wg_win_act_backward(ctx, n->p.act_backward, in[0], in[1], out[0]);
    case WT_NODE_CROSS_ENTROPY:
        return wg_win_cross_entropy(ctx, in[0], in[1], n->p.ignore, out[0], out[1]);
    case WT_NODE_CROSS_ENTROPY_BACKWARD:
        return wg_win_cross_entropy_backward(ctx, in[0], in[1], n->p.ignore, in[2], out[0]);
    case WT_NODE_SCATTER_ADD_ROWS:
        return wg_win_scatter_add_rows(ctx, in[0], in[1], n->p.rows.plane, n->p.rows.plane_rows, out[0]);
    case WT_NODE_OPTIMIZER_STEP: {
        wt_optimizer_update u = wt_node_optimizer_update(n);
        if (u.clip_norm && (wg_needs_windows(ctx, u.clip_norm) || u.clip_norm->storage == u.param->storage ||
                            (u.m && u.clip_norm->storage == u.m->storage) ||
                            (u.v && u.clip_norm->storage == u.v->storage)))
            return wt_fail(WT_ERR_UNSUPPORTED, "webgpu optimizer step: the norm of clipping is past one binding "
                                               "or in an updated buffer");
        return wg_win_optimizer_step(ctx, &u);
    }
    case WT_NODE_GRAD_CLIP_SCALE:
        if (wg_needs_windows(ctx, in[0])) return wt_fail(WT_ERR_UNSUPPORTED, "webgpu grad_clip_scale: tensors past one binding");
        for (int k = 0; k < 3; k++) {
            if (!out[k]) continue;
            if (wg_needs_windows(ctx, out[k]))
                return wt_fail(WT_ERR_UNSUPPORTED, "webgpu grad_clip_scale: tensors past one binding");
            for (int j = 0; j < k; j++)
                if (out[j] && out[j]->storage == out[k]->storage)
                    return wt_fail(WT_ERR_UNSUPPORTED, "webgpu grad_clip_scale: two gradients in one buffer");
            if (out[k]->storage == in[0]->storage)
                return wt_fail(WT_ERR_UNSUPPORTED, "webgpu grad_clip_scale: the norm lives in a gradient's buffer");
        }
        return wg_op_grad_clip_scale(ctx, in[0], n->p.clip.max_norm, out);
    case WT_NODE_GRAD_NORMS: {
        int count = 0;
        while (count < WT_NODE_MAX_IN && in[count]) count++;
        for (int k = 0; k < count; k++)
            if (wg_needs_windows(ctx, in[k]))
                return wt_fail(WT_ERR_UNSUPPORTED, "webgpu grad_norms: tensors past one binding");
        if (wg_needs_windows(ctx, out[0]))
            return wt_fail(WT_ERR_UNSUPPORTED, "webgpu grad_norms: tensors past one binding");
        return wg_op_grad_norms(ctx, count, in, out[0]);
    }
    case WT_NODE_CONV_TRANSPOSE2D:
        return wg_op_conv_transpose2d(ctx, in[0], in[1], in[2], &n->p.window.win, n->p.window.groups,
                                      out[0]);
    case WT_NODE_KERNEL_DISPATCH:
        return wg_kernel_dispatch(ctx, n->p.kernel.k, n->p.kernel.tensors, n->p.kernel.params,
                                  n->p.kernel.groups);
    default:
        return wt_fail(WT_ERR_UNSUPPORTED, "%s: not available on the webgpu backend", wt_node_label(n));
    }
}

/* The tiled attention kernel writes the rows' log-sum-exp where it runs in
 * one piece: tensors past one binding go through windows, whose pieces
 * would each need their own rows of it. */
static bool webgpu_attention_writes_lse(wt_context *ctx, const wt_attention_args *a)
{
    return !wg_attention_needs_windows(ctx, a) && wg_attention_lse_fits(ctx, a);
}

const wt_backend_ops wt_webgpu_backend = {
    .name = "webgpu",
    .create = webgpu_create,
    .destroy = webgpu_destroy,
    .sync = webgpu_sync,
    .timer_begin = wg_timer_begin,
    .timer_end = wg_timer_end,
    .storage_alloc = webgpu_storage_alloc,
    .storage_free = webgpu_storage_free,
    .upload = webgpu_upload,
    .download = webgpu_download,
    .run = webgpu_run,
    .runs = WT_NODE_BIT(WT_NODE_KIND_COUNT) - 1,
    .attention_backward_preferred = wg_attention_backward_preferred,
    .rope_kv_attention_fits = wg_rope_kv_attention_fits,
    .attention_writes_lse = webgpu_attention_writes_lse,
    /* The tiled kernel, which writes the log-sum-exp, is also the one that
     * writes a result laid out [B, S, H, D]. */
    .attention_out_heads_inner = webgpu_attention_writes_lse,
    .attention_backward_views = wg_attention_backward_views,
    .norm_backward_fits = wg_norm_backward_fits,
    .adapter_info = webgpu_adapter_info,
    .trim = webgpu_trim,
    .context_info = webgpu_context_info,
    .lose_device = wg_lose_device,
    .recover = wg_recover,
    .pipeline_stats = webgpu_pipeline_stats,
    .profile_begin = wg_profile_begin,
    .profile_end = wg_profile_end,
    .profile_summary = wg_profile_summary,
    .flush = wg_flush,
    .event_start = wg_event_start,
    .event_poll = wg_event_poll,
    .event_release = wg_event_release,
    .kernel_compile = wg_kernel_compile,
    .list_adapters = wt_webgpu_list_adapters,
    .graph_state_free = wg_graph_state_free,
    .graph_storage_refs = wg_graph_storage_refs,
    .graph_replay_begin = wg_graph_replay_begin,
    .graph_replay_end = wg_graph_replay_end,
    .graph_replay_list = wg_graph_replay_list,
};
