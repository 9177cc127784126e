/* Per-op profiling. While a profile runs, every dispatch gets a compute
 * pass of its own whose timestamps (the timer's query set, timer.c) give
 * the op's GPU time; without the timestamp-query feature each op is
 * submitted and waited for, and timed on the host. Passes are named by
 * the node that dispatched them (its op: "add", "sum", "matmul" ...;
 * core/node.c), and by their shader outside a node. The summary sums
 * by name; WT_TRACE=<file> keeps every op as a Chrome trace event
 * ("ph":"X") and appends them to the file when the context ends. */
#include "webgpu/wg_runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

double wg_now_us(void) { return wt_now_us(); }

void wg_profile_name_next(wt_context *ctx, const char *shader)
{
    wg_profile *pr = &wg_ctx(ctx)->prof;
    const wt_node *n = ctx->node;
    const char *name = n ? wt_node_label(n) : shader;
    /* Products and attention say whether the matrix units ran them, and,
     * where the context asked for them but one could not use them, why. */
    wg_context *w = wg_ctx(ctx);
    char tagged[160];
    if (strncmp(shader, "gemm_matrix", 11) == 0 || strcmp(shader, "attention_matrix") == 0) {
        snprintf(tagged, sizeof tagged, "%s [matrix units]", name);
        name = tagged;
    } else if ((strcmp(shader, "gemm") == 0 || strncmp(shader, "attention", 9) == 0) && w->matrix.declined_now) {
        snprintf(tagged, sizeof tagged, "%s [no matrix units: %s]", name, w->matrix.why);
        name = tagged;
    }
    if (strcmp(shader, "gemm_splitk") != 0) w->matrix.declined_now = false;
    pr->next_name = wt_prof_intern(&pr->log, name);
    pr->next_detail = NULL;
    if (n && pr->log.trace) {
        char shapes[160];
        wt_node_shapes(n, shapes, sizeof shapes);
        pr->next_detail = wt_prof_detail(&pr->log, shapes);
    }
}

void wg_profile_pass(wt_context *ctx, const char *name, const char *detail, uint64_t begin_ns,
                     uint64_t end_ns)
{
    wg_profile *pr = &wg_ctx(ctx)->prof;
    uint64_t dur = end_ns > begin_ns ? end_ns - begin_ns : 0;
    if (!pr->have_base) {
        pr->have_base = true;
        pr->gpu_base_ns = begin_ns;
    }
    /* GPU clock placed on the host's: the first pass at the profile's start. */
    wt_prof_record_detail(&pr->log, name, detail,
                          pr->host_base_us + (double)(begin_ns - pr->gpu_base_ns) * 1e-3, dur);
}

wt_status wg_profile_after_dispatch(wt_context *ctx, double host_start_us)
{
    wg_profile *pr = &wg_ctx(ctx)->prof;
    if (pr->gpu)
        return WT_OK; /* timed by its pass, harvested later */
    wt_status st = wg_finish(ctx);
    double end = wg_now_us();
    if (pr->next_name)
        wt_prof_record_detail(&pr->log, pr->next_name, pr->next_detail, host_start_us,
                              (uint64_t)((end - host_start_us) * 1e3));
    return st;
}

wt_status wg_profile_begin(wt_context *ctx)
{
    wg_context *w = wg_ctx(ctx);
    wg_profile *pr = &w->prof;
    wt_status st = wg_check_device(ctx);
    if (st == WT_OK && w->timer.supported)
        st = wg_timer_objects(ctx);
    if (st == WT_OK)
        st = wg_flush(ctx); /* work recorded before is not profiled */
    if (st != WT_OK)
        return st;
    wt_prof_reset(&pr->log);
    pr->gpu = w->timer.supported;
    pr->have_base = false;
    pr->host_base_us = wg_now_us();
    pr->active = true;
    return WT_OK;
}

wt_status wg_profile_end(wt_context *ctx)
{
    wg_context *w = wg_ctx(ctx);
    wg_profile *pr = &w->prof;
    if (!pr->active)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "wt_context_profile_end: no profile is running");
    wt_status st = pr->gpu && w->timer.used > 0 ? wg_timer_harvest(ctx) : wg_finish(ctx);
    pr->active = false;
    return st;
}

wt_status wg_profile_summary(const wt_context *ctx, wt_profile_entry *out, int capacity,
                             int *count, bool *gpu_timed)
{
    const wg_profile *pr = &wg_ctx(ctx)->prof;
    if (pr->active)
        return wt_fail(WT_ERR_INVALID_ARGUMENT,
                       "wt_context_profile_summary: the profile still runs (end it first)");
    wt_prof_summary(&pr->log, out, capacity, count);
    if (gpu_timed)
        *gpu_timed = pr->gpu;
    return WT_OK;
}

bool wg_trace_wanted(void) { return wt_trace_path() != NULL; }

void wg_profile_destroy(wt_context *ctx)
{
    wg_context *w = wg_ctx(ctx);
    wg_profile *pr = &w->prof;
    if (pr->active && w->device && !w->lost)
        (void)wg_profile_end(ctx);
    char track[300];
    snprintf(track, sizeof track, "%s (%s)", w->info.name, pr->gpu ? "GPU timestamps" : "host time");
    wt_prof_finish(&pr->log, ctx, track, "webgpu");
    memset(pr, 0, sizeof *pr);
}
