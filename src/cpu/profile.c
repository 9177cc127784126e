/* Per-op profiling on the CPU backend: host time around each backend call
 * (CPU ops finish before they return), named by op ("add", "sum",
 * "matmul", "softmax" ...), in the summary and trace of core/profile.h.
 *
 * While a profile runs (or from creation under WT_TRACE) wt_node_run
 * (core/node.c) times every node into the log that ctx->host_log points
 * to; otherwise profiling costs one test per node. */
#include "core/profile.h"
#include "cpu/cpu.h"

#include <stdio.h>

/* While a profile runs, wt_node_run times every node on the host into the
 * context's log (CPU ops finish before they return). */
static void set_timed(wt_context *ctx, bool on)
{
    cpu_prof *p = &((cpu_state *)ctx->impl)->prof;
    p->active = on;
    ctx->host_log = on ? &p->log : NULL;
}

void cpu_profile_create(wt_context *ctx)
{
    if (wt_trace_path()) { /* WT_TRACE: profile from the start */
        ((cpu_state *)ctx->impl)->prof.log.trace = true;
        set_timed(ctx, true);
    }
}

void cpu_profile_destroy(wt_context *ctx)
{
    cpu_prof *p = &((cpu_state *)ctx->impl)->prof;
    char track[64];
    snprintf(track, sizeof track, "cpu (%d threads, host time)", cpu_threads(ctx));
    wt_prof_finish(&p->log, ctx, track, "cpu");
}

wt_status cpu_profile_begin(wt_context *ctx)
{
    wt_prof_reset(&((cpu_state *)ctx->impl)->prof.log);
    set_timed(ctx, true);
    return WT_OK;
}

wt_status cpu_profile_end(wt_context *ctx)
{
    cpu_prof *p = &((cpu_state *)ctx->impl)->prof;
    if (!p->active)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "wt_context_profile_end: no profile is running");
    set_timed(ctx, false);
    return WT_OK;
}

wt_status cpu_profile_summary(const wt_context *ctx, wt_profile_entry *out, int capacity, int *count,
                              bool *gpu_timed)
{
    const cpu_prof *p = &((const cpu_state *)ctx->impl)->prof;
    if (p->active)
        return wt_fail(WT_ERR_INVALID_ARGUMENT,
                       "wt_context_profile_summary: the profile still runs (end it first)");
    wt_prof_summary(&p->log, out, capacity, count);
    if (gpu_timed)
        *gpu_timed = false;
    return WT_OK;
}
