/* Per-op profiling. While a profile runs, every dispatch gets a compute
 * pass of its own whose timestamps (the timer's query set, timer.c) give
 * the op's GPU time; without the timestamp-query feature each op is
 * submitted and waited for, and timed on the host. Ops are named by their
 * shader (e.g. "binary", "reduce_rows", "custom:main"). The summary sums
 * by name; WT_TRACE=<file> keeps every op as a Chrome trace event
 * ("ph":"X") and appends them to the file when the context ends. */
#include "webgpu/wg_runtime.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

double wg_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

static wg_profile_entry *entry_of(wg_profile *pr, const char *name)
{
    for (int i = 0; i < pr->nentries; i++)
        if (strcmp(pr->entries[i]->name, name) == 0)
            return pr->entries[i];
    if (pr->nentries == pr->cap_entries) {
        int cap = pr->cap_entries ? pr->cap_entries * 2 : 32;
        wg_profile_entry **grown = realloc(pr->entries, (size_t)cap * sizeof *grown);
        if (!grown)
            return NULL;
        pr->entries = grown;
        pr->cap_entries = cap;
    }
    wg_profile_entry *e = calloc(1, sizeof *e);
    if (!e)
        return NULL;
    snprintf(e->name, sizeof e->name, "%s", name);
    pr->entries[pr->nentries++] = e;
    return e;
}

const char *wg_profile_intern(wt_context *ctx, const char *name)
{
    wg_profile_entry *e = entry_of(&wg_ctx(ctx)->prof, name);
    return e ? e->name : NULL;
}

static void add_event(wg_profile *pr, const char *name, double ts_us, double dur_us)
{
    if (!pr->trace)
        return;
    if (pr->nevents == pr->cap_events) {
        size_t cap = pr->cap_events ? pr->cap_events * 2 : 1024;
        wg_trace_event *grown = realloc(pr->events, cap * sizeof *grown);
        if (!grown)
            return; /* the trace misses events; the summary is still right */
        pr->events = grown;
        pr->cap_events = cap;
    }
    pr->events[pr->nevents++] = (wg_trace_event){name, ts_us, dur_us};
}

void wg_profile_pass(wt_context *ctx, const char *name, uint64_t begin_ns, uint64_t end_ns)
{
    wg_profile *pr = &wg_ctx(ctx)->prof;
    wg_profile_entry *e = entry_of(pr, name);
    uint64_t dur = end_ns > begin_ns ? end_ns - begin_ns : 0;
    if (e) {
        e->count++;
        e->total_ns += dur;
    }
    if (!pr->have_base) {
        pr->have_base = true;
        pr->gpu_base_ns = begin_ns;
    }
    /* GPU clock placed on the host's: the first pass at the profile's start. */
    add_event(pr, e ? e->name : name, pr->host_base_us + (double)(begin_ns - pr->gpu_base_ns) * 1e-3,
              (double)dur * 1e-3);
}

wt_status wg_profile_after_dispatch(wt_context *ctx, const char *name, double host_start_us)
{
    wg_profile *pr = &wg_ctx(ctx)->prof;
    if (pr->gpu)
        return WT_OK; /* timed by its pass, harvested later */
    wt_status st = wg_finish(ctx);
    double end = wg_now_us();
    wg_profile_entry *e = entry_of(pr, name);
    if (e) {
        e->count++;
        e->total_ns += (uint64_t)((end - host_start_us) * 1e3);
    }
    add_event(pr, e ? e->name : name, host_start_us, end - host_start_us);
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
    for (int i = 0; i < pr->nentries; i++)
        pr->entries[i]->count = pr->entries[i]->total_ns = 0;
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
    uint64_t total = 0;
    int n = 0;
    for (int i = 0; i < pr->nentries; i++)
        if (pr->entries[i]->count) {
            total += pr->entries[i]->total_ns;
            n++;
        }
    *count = n;
    if (gpu_timed)
        *gpu_timed = pr->gpu;
    int k = 0;
    for (int i = 0; i < pr->nentries && k < capacity; i++) {
        const wg_profile_entry *e = pr->entries[i];
        if (!e->count)
            continue;
        wt_profile_entry *o = &out[k++];
        memset(o, 0, sizeof *o);
        snprintf(o->name, sizeof o->name, "%s", e->name);
        o->count = e->count;
        o->total_seconds = (double)e->total_ns * 1e-9;
        o->mean_seconds = o->total_seconds / (double)e->count;
        o->share = total ? (double)e->total_ns / (double)total : 0;
    }
    /* Largest total first. */
    for (int i = 1; i < k; i++) {
        wt_profile_entry e = out[i];
        int j = i - 1;
        while (j >= 0 && out[j].total_seconds < e.total_seconds) {
            out[j + 1] = out[j];
            j--;
        }
        out[j + 1] = e;
    }
    return WT_OK;
}

/* ----------------------------------------------------- the trace file */

static pthread_mutex_t trace_lock = PTHREAD_MUTEX_INITIALIZER;
static FILE *trace_file;
static bool trace_closed;

static void trace_close(void)
{
    pthread_mutex_lock(&trace_lock);
    if (trace_file) {
        /* A last metadata event closes the array (events end with commas). */
        fprintf(trace_file, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":0,"
                            "\"args\":{\"name\":\"webtensor\"}}\n]\n",
                (int)getpid());
        fclose(trace_file);
        trace_file = NULL;
    }
    trace_closed = true;
    pthread_mutex_unlock(&trace_lock);
}

bool wg_trace_wanted(void)
{
    const char *path = wg_env_string("WT_TRACE");
    return path && *path;
}

static void trace_write(wt_context *ctx)
{
    wg_context *w = wg_ctx(ctx);
    wg_profile *pr = &w->prof;
    const char *path = wg_env_string("WT_TRACE");
    if (!pr->trace || !path || !*path || pr->nevents == 0)
        return;
    pthread_mutex_lock(&trace_lock);
    if (!trace_file && !trace_closed) {
        trace_file = fopen(path, "w");
        if (trace_file) {
            fputs("[\n", trace_file);
            atexit(trace_close);
        }
    }
    if (trace_file) {
        /* One track per context: tid is the context's address, hashed small. */
        unsigned tid = (unsigned)(((uintptr_t)ctx >> 4) & 0xffff);
        fprintf(trace_file,
                "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":%u,"
                "\"args\":{\"name\":\"%s (%s)\"}},\n",
                (int)getpid(), tid, w->info.name, pr->gpu ? "GPU timestamps" : "host time");
        for (size_t i = 0; i < pr->nevents; i++)
            fprintf(trace_file,
                    "{\"name\":\"%s\",\"cat\":\"webgpu\",\"ph\":\"X\",\"pid\":%d,\"tid\":%u,"
                    "\"ts\":%.3f,\"dur\":%.3f},\n",
                    pr->events[i].name, (int)getpid(), tid, pr->events[i].ts_us,
                    pr->events[i].dur_us);
        fflush(trace_file);
    }
    pthread_mutex_unlock(&trace_lock);
}

void wg_profile_destroy(wt_context *ctx)
{
    wg_context *w = wg_ctx(ctx);
    wg_profile *pr = &w->prof;
    if (pr->active && w->device && !w->lost)
        (void)wg_profile_end(ctx);
    trace_write(ctx);
    for (int i = 0; i < pr->nentries; i++)
        free(pr->entries[i]);
    free(pr->entries);
    free(pr->events);
    memset(pr, 0, sizeof *pr);
}
