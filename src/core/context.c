/* Contexts: options, lifetime (refcounted by live storages), memory
 * statistics. The backend choice is the registry's (src/registry). */
#include "core/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Most CPU threads a context may ask for. */
#define WT_MAX_THREADS 1024

void wt_context_options_init(wt_context_options *opts)
{
    if (!opts) return;
    memset(opts, 0, sizeof *opts);
    opts->struct_size = sizeof *opts;
    opts->backend = WT_BACKEND_AUTO;
    opts->gpu_api = WT_GPU_API_AUTO;
    opts->adapter_index = -1;
}

/* Copies the caller's options, accepting structs from older headers
 * (smaller struct_size) by keeping the defaults for the fields they lack. */
wt_status wt_context_options_read(const wt_context_options *in, wt_context_options *out)
{
    wt_context_options_init(out);
    if (!in) return WT_OK;
    if (in->struct_size < offsetof(wt_context_options, gpu_api) || in->struct_size > sizeof *out)
        return wt_fail(WT_ERR_INVALID_ARGUMENT,
                       "context options: struct_size %u is not valid (call wt_context_options_init)",
                       in->struct_size);
    memcpy(out, in, in->struct_size);
    out->struct_size = sizeof *out;
    if (out->backend < WT_BACKEND_AUTO || out->backend > WT_BACKEND_WEBGPU)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "context options: unknown backend %d", (int)out->backend);
    if (out->gpu_api < WT_GPU_API_AUTO || out->gpu_api > WT_GPU_API_BROWSER)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "context options: unknown gpu_api %d", (int)out->gpu_api);
    if (out->power_preference < WT_POWER_DEFAULT || out->power_preference > WT_POWER_LOW_POWER)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "context options: unknown power_preference %d",
                       (int)out->power_preference);
    if (out->experimental & ~WT_EXPERIMENTAL_SUBGROUP_MATRIX)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "context options: unknown experimental bits 0x%x",
                       out->experimental & ~WT_EXPERIMENTAL_SUBGROUP_MATRIX);
    if (out->adapter_index < -1)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "context options: adapter_index %d < -1", out->adapter_index);
    /* OpenMP ends the process when it cannot start its threads: keep the
     * count to something a machine can start. */
    if (out->num_threads < 0 || out->num_threads > WT_MAX_THREADS)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "context options: num_threads %d is outside [0, %d]",
                       out->num_threads, WT_MAX_THREADS);
    return WT_OK;
}

wt_status wt_context_create_with(const wt_backend_ops *ops, wt_backend kind,
                                 const wt_context_options *opts, const char *reason, wt_context **out)
{
    wt_context *ctx = calloc(1, sizeof *ctx);
    if (!ctx) return wt_fail(WT_ERR_OUT_OF_MEMORY, "out of host memory");
    /* Contexts are numbered in creation order (their trace tracks). */
    static _Atomic unsigned next_id = 1;
    ctx->id = next_id++;
    ctx->refcount = 1;
    ctx->kind = kind;
    ctx->ops = ops;
    ctx->opts = *opts;
    ctx->opts.webgpu_library = NULL; /* the caller's strings are not kept */
    ctx->opts.toggles = NULL;
    if (reason)
        snprintf(ctx->reason, sizeof ctx->reason, "%s", reason);
    wt_status st = ops->create(ctx, opts);
    if (st != WT_OK) {
        free(ctx);
        return st;
    }
    *out = ctx;
    return WT_OK;
}

void wt_context_ref(wt_context *ctx) { ctx->refcount++; }

void wt_context_unref(wt_context *ctx)
{
    if (--ctx->refcount > 0) return;
    ctx->ops->destroy(ctx);
    free(ctx);
}

void wt_context_destroy(wt_context *ctx)
{
    if (!ctx) return;
    /* The leak report: tensors still alive keep the context (and its
     * device) until they go; say so, since nothing else will. */
    uint64_t n = ctx->stats.live_tensors, bytes = ctx->stats.live_bytes;
    if (n > 0)
        wt_log_message(WT_LOG_WARNING,
                       "wt_context_destroy: %llu tensor%s still alive (%llu bytes, %.1f MiB) on this %s context; it "
                       "and its memory are freed when the last is released",
                       (unsigned long long)n, n == 1 ? "" : "s", (unsigned long long)bytes, (double)bytes / 1048576.0,
                       ctx->ops->name);
    wt_context_unref(ctx);
}

wt_status wt_context_sync(wt_context *ctx)
{
    if (!ctx) return wt_fail(WT_ERR_INVALID_ARGUMENT, "wt_context_sync: ctx is NULL");
    wt_status st = ctx->ops->sync(ctx);
    if (st != WT_OK) wt_context_record_error(ctx, st);
    return st;
}

wt_status wt_context_timer_begin(wt_context *ctx)
{
    if (!ctx) return wt_fail(WT_ERR_INVALID_ARGUMENT, "wt_context_timer_begin: ctx is NULL");
    if (!ctx->ops->timer_begin)
        return wt_fail(WT_ERR_UNSUPPORTED,
                       "wt_context_timer_begin: the %s backend has no GPU timer; time with the "
                       "wall clock around wt_context_sync instead",
                       ctx->ops->name);
    return ctx->ops->timer_begin(ctx);
}

wt_status wt_context_timer_end(wt_context *ctx, double *gpu_seconds)
{
    if (gpu_seconds) *gpu_seconds = 0;
    if (!ctx || !gpu_seconds)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "wt_context_timer_end: %s is NULL",
                       !ctx ? "ctx" : "gpu_seconds");
    if (!ctx->ops->timer_end)
        return wt_fail(WT_ERR_UNSUPPORTED, "wt_context_timer_end: the %s backend has no GPU timer",
                       ctx->ops->name);
    return ctx->ops->timer_end(ctx, gpu_seconds);
}

wt_backend wt_context_backend(const wt_context *ctx)
{
    return ctx ? ctx->kind : WT_BACKEND_AUTO;
}

void wt_stats_on_alloc(wt_context *ctx, size_t bytes)
{
    ctx->stats.live_bytes += bytes;
    ctx->stats.live_tensors++;
    if (ctx->stats.live_bytes > ctx->stats.peak_bytes) ctx->stats.peak_bytes = ctx->stats.live_bytes;
}

void wt_stats_on_free(wt_context *ctx, size_t bytes)
{
    ctx->stats.live_bytes -= bytes;
    ctx->stats.live_tensors--;
}

wt_status wt_context_memory_stats(const wt_context *ctx, wt_memory_stats *out)
{
    if (!ctx || !out) return wt_fail(WT_ERR_INVALID_ARGUMENT, "wt_context_memory_stats: NULL argument");
    *out = ctx->stats;
    out->memory_limit = ctx->opts.memory_limit;
    return WT_OK;
}

wt_status wt_memory_limit_check(wt_context *ctx, size_t bytes)
{
    uint64_t limit = ctx->opts.memory_limit;
    if (!limit) return WT_OK;
    if (ctx->stats.live_bytes + ctx->stats.pooled_bytes + bytes > limit && ctx->ops->trim)
        ctx->ops->trim(ctx);
    if (ctx->stats.live_bytes + bytes <= limit) return WT_OK;
    return wt_fail(WT_ERR_OUT_OF_MEMORY,
                   "out of memory: requested %zu bytes, available %llu of the context's "
                   "memory_limit of %llu bytes (%llu held by live tensors)",
                   bytes, (unsigned long long)(limit > ctx->stats.live_bytes ? limit - ctx->stats.live_bytes : 0),
                   (unsigned long long)limit, (unsigned long long)ctx->stats.live_bytes);
}

wt_status wt_context_trim(wt_context *ctx)
{
    if (!ctx) return wt_fail(WT_ERR_INVALID_ARGUMENT, "wt_context_trim: ctx is NULL");
    if (ctx->ops->trim) ctx->ops->trim(ctx);
    return WT_OK;
}

wt_status wt_context_adapter_info(const wt_context *ctx, wt_adapter_info *out)
{
    if (!ctx || !out) return wt_fail(WT_ERR_INVALID_ARGUMENT, "wt_context_adapter_info: NULL argument");
    if (!ctx->ops->adapter_info)
        return wt_fail(WT_ERR_UNSUPPORTED, "wt_context_adapter_info: the %s backend has no adapter",
                       ctx->ops->name);
    return ctx->ops->adapter_info(ctx, out);
}


/* --- runtime --- */
wt_status wt_context_get_info(const wt_context *ctx, wt_context_info *out)
{
    if (!ctx || !out)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "wt_context_get_info: %s is NULL",
                       !ctx ? "ctx" : "out");
    memset(out, 0, sizeof *out);
    out->backend = ctx->kind;
    snprintf(out->reason, sizeof out->reason, "%s", ctx->reason);
    out->validation = ctx->opts.validation;
    out->memory_limit = ctx->opts.memory_limit;
    out->pipeline_cache = true;
    out->adapter.index = -1;
    if (ctx->ops->context_info)
        ctx->ops->context_info(ctx, out);
    return WT_OK;
}

void wt_context_record_error(wt_context *ctx, wt_status st)
{
    ctx->last_status = st;
    snprintf(ctx->last_error, sizeof ctx->last_error, "%s", wt_last_error());
}

const char *wt_context_last_message(const wt_context *ctx) { return ctx ? ctx->last_error : ""; }

wt_status wt_context_last_status(const wt_context *ctx) { return ctx ? ctx->last_status : WT_OK; }

/* Deprecated: the pair above in one call. */
const char *wt_context_last_error(const wt_context *ctx, wt_status *status)
{
    if (status) *status = wt_context_last_status(ctx);
    return wt_context_last_message(ctx);
}

wt_status wt_context_lose_device(wt_context *ctx)
{
    if (!ctx) return wt_fail(WT_ERR_INVALID_ARGUMENT, "wt_context_lose_device: ctx is NULL");
    if (!ctx->ops->lose_device)
        return wt_fail(WT_ERR_UNSUPPORTED, "wt_context_lose_device: the %s backend has no device",
                       ctx->ops->name);
    return ctx->ops->lose_device(ctx);
}

wt_status wt_context_recover(wt_context *ctx)
{
    if (!ctx) return wt_fail(WT_ERR_INVALID_ARGUMENT, "wt_context_recover: ctx is NULL");
    if (!ctx->ops->recover) return WT_OK;
    wt_status st = ctx->ops->recover(ctx);
    if (st != WT_OK) wt_context_record_error(ctx, st);
    return st;
}

wt_status wt_context_pipeline_stats(const wt_context *ctx, wt_pipeline_stats *out)
{
    if (!ctx || !out)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "wt_context_pipeline_stats: %s is NULL",
                       !ctx ? "ctx" : "out");
    memset(out, 0, sizeof *out);
    if (ctx->ops->pipeline_stats) ctx->ops->pipeline_stats(ctx, out);
    return WT_OK;
}

wt_status wt_context_profile_begin(wt_context *ctx)
{
    if (!ctx) return wt_fail(WT_ERR_INVALID_ARGUMENT, "wt_context_profile_begin: ctx is NULL");
    if (!ctx->ops->profile_begin)
        return wt_fail(WT_ERR_UNSUPPORTED, "wt_context_profile_begin: the %s backend has no profiler",
                       ctx->ops->name);
    return ctx->ops->profile_begin(ctx);
}

wt_status wt_context_profile_end(wt_context *ctx)
{
    if (!ctx) return wt_fail(WT_ERR_INVALID_ARGUMENT, "wt_context_profile_end: ctx is NULL");
    if (!ctx->ops->profile_end)
        return wt_fail(WT_ERR_UNSUPPORTED, "wt_context_profile_end: the %s backend has no profiler",
                       ctx->ops->name);
    return ctx->ops->profile_end(ctx);
}

wt_status wt_context_profile_summary(const wt_context *ctx, wt_profile_entry *entries,
                                     int capacity, int *count, bool *gpu_timed)
{
    if (count) *count = 0;
    if (!ctx || !count || capacity < 0 || (capacity > 0 && !entries))
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "wt_context_profile_summary: bad arguments");
    if (!ctx->ops->profile_summary)
        return wt_fail(WT_ERR_UNSUPPORTED, "wt_context_profile_summary: the %s backend has no profiler",
                       ctx->ops->name);
    return ctx->ops->profile_summary(ctx, entries, capacity, count, gpu_timed);
}
