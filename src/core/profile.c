/* Per-op profile bookkeeping for every backend (see core/profile.h): the
 * summary by name and the Chrome trace file of WT_TRACE. */
#define _POSIX_C_SOURCE 200809L
#include "core/profile.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

double wt_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

static pthread_once_t trace_once = PTHREAD_ONCE_INIT;
static char trace_path_buf[4096];

static void read_trace_path(void)
{
    const char *v = wt_knob_text(WT_KNOB_TRACE);
    if (v && strlen(v) < sizeof trace_path_buf)
        strcpy(trace_path_buf, v);
}

const char *wt_trace_path(void)
{
    pthread_once(&trace_once, read_trace_path);
    return trace_path_buf[0] ? trace_path_buf : NULL;
}

static wt_prof_entry *entry_of(wt_prof_log *log, const char *name)
{
    for (int i = 0; i < log->nentries; i++)
        if (strcmp(log->entries[i]->name, name) == 0)
            return log->entries[i];
    if (log->nentries == log->cap_entries) {
        int cap = log->cap_entries ? log->cap_entries * 2 : 32;
        wt_prof_entry **grown = realloc(log->entries, (size_t)cap * sizeof *grown);
        if (!grown)
            return NULL;
        log->entries = grown;
        log->cap_entries = cap;
    }
    wt_prof_entry *e = calloc(1, sizeof *e);
    if (!e)
        return NULL;
    snprintf(e->name, sizeof e->name, "%s", name);
    log->entries[log->nentries++] = e;
    return e;
}

const char *wt_prof_intern(wt_prof_log *log, const char *name)
{
    wt_prof_entry *e = entry_of(log, name);
    return e ? e->name : NULL;
}

void wt_prof_record(wt_prof_log *log, const char *name, double ts_us, uint64_t dur_ns)
{
    wt_prof_record_detail(log, name, NULL, ts_us, dur_ns);
}

/* Distinct shapes of a long run are few; a bound keeps a pathological one
 * (a new shape every step) from growing the pool without end. */
enum { MAX_DETAILS = 4096 };

const char *wt_prof_detail(wt_prof_log *log, const char *detail)
{
    if (!log->trace || !detail)
        return NULL;
    for (int i = log->ndetails - 1; i >= 0; i--)
        if (strcmp(log->details[i], detail) == 0)
            return log->details[i];
    if (log->ndetails >= MAX_DETAILS)
        return NULL;
    if (log->ndetails == log->cap_details) {
        int cap = log->cap_details ? log->cap_details * 2 : 64;
        char **grown = realloc(log->details, (size_t)cap * sizeof *grown);
        if (!grown)
            return NULL;
        log->details = grown;
        log->cap_details = cap;
    }
    char *copy = strdup(detail);
    if (copy)
        log->details[log->ndetails++] = copy;
    return copy;
}

static void shape_text(const wt_tensor *t, char *buf, size_t size, size_t *k)
{
    if (*k + 1 >= size)
        return;
    int w = snprintf(buf + *k, size - *k, "%s[", *k ? " " : "");
    *k = w > 0 && (size_t)w < size - *k ? *k + (size_t)w : size - 1;
    for (int d = 0; d < t->ndim && *k + 1 < size; d++) {
        w = snprintf(buf + *k, size - *k, d ? ",%lld" : "%lld", (long long)t->shape[d]);
        *k = w > 0 && (size_t)w < size - *k ? *k + (size_t)w : size - 1;
    }
    if (*k + 1 < size) {
        buf[(*k)++] = ']';
        buf[*k] = '\0';
    }
}

void wt_node_shapes(const wt_node *n, char *buf, size_t size)
{
    size_t k = 0;
    if (!size)
        return;
    buf[0] = '\0';
    for (int i = 0; i < WT_NODE_MAX_IN; i++)
        if (n->in[i])
            shape_text(n->in[i], buf, size, &k);
    int w = snprintf(buf + k, size - k, "%s->", k ? " " : "");
    k = w > 0 && (size_t)w < size - k ? k + (size_t)w : size - 1;
    for (int i = 0; i < WT_NODE_MAX_OUT; i++)
        if (n->out[i])
            shape_text(n->out[i], buf, size, &k);
}

void wt_prof_record_detail(wt_prof_log *log, const char *name, const char *detail, double ts_us,
                           uint64_t dur_ns)
{
    wt_prof_entry *e = entry_of(log, name);
    if (e) {
        e->count++;
        e->total_ns += dur_ns;
    }
    if (!log->trace || !e)
        return;
    if (log->nevents == log->cap_events) {
        size_t cap = log->cap_events ? log->cap_events * 2 : 1024;
        wt_trace_event *grown = realloc(log->events, cap * sizeof *grown);
        if (!grown)
            return; /* the trace misses events; the summary is still right */
        log->events = grown;
        log->cap_events = cap;
    }
    log->events[log->nevents++] =
        (wt_trace_event){e->name, wt_prof_detail(log, detail), ts_us, (double)dur_ns * 1e-3};
}

void wt_prof_reset(wt_prof_log *log)
{
    for (int i = 0; i < log->nentries; i++)
        log->entries[i]->count = log->entries[i]->total_ns = 0;
}

void wt_prof_summary(const wt_prof_log *log, wt_profile_entry *out, int capacity, int *count)
{
    uint64_t total = 0;
    int n = 0;
    for (int i = 0; i < log->nentries; i++)
        if (log->entries[i]->count) {
            total += log->entries[i]->total_ns;
            n++;
        }
    *count = n;
    int k = 0;
    for (int i = 0; i < log->nentries && k < capacity; i++) {
        const wt_prof_entry *e = log->entries[i];
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

/* name with the characters JSON strings cannot hold as they are dropped. */
static void json_safe(char *dst, size_t size, const char *name)
{
    size_t k = 0;
    for (const char *p = name; *p && k + 1 < size; p++)
        if (*p != '"' && *p != '\\' && (unsigned char)*p >= 0x20)
            dst[k++] = *p;
    dst[k] = '\0';
}

static void trace_write(const wt_prof_log *log, const wt_context *ctx, const char *track,
                        const char *category)
{
    const char *path = wt_trace_path();
    if (!log->trace || !path || log->nevents == 0)
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
        /* One track per context: tid is the context's number. */
        unsigned tid = ctx->id;
        char label[160];
        json_safe(label, sizeof label, track);
        fprintf(trace_file,
                "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":%u,"
                "\"args\":{\"name\":\"%s\"}},\n",
                (int)getpid(), tid, label);
        for (size_t i = 0; i < log->nevents; i++) {
            char name[80], shapes[160];
            json_safe(name, sizeof name, log->events[i].name);
            json_safe(shapes, sizeof shapes, log->events[i].detail ? log->events[i].detail : "");
            fprintf(trace_file,
                    "{\"name\":\"%s\",\"cat\":\"%s\",\"ph\":\"X\",\"pid\":%d,\"tid\":%u,"
                    "\"ts\":%.3f,\"dur\":%.3f,\"args\":{\"shapes\":\"%s\"}},\n",
                    name, category, (int)getpid(), tid, log->events[i].ts_us,
                    log->events[i].dur_us, shapes);
        }
        fflush(trace_file);
    }
    pthread_mutex_unlock(&trace_lock);
}

void wt_prof_finish(wt_prof_log *log, const wt_context *ctx, const char *track, const char *category)
{
    trace_write(log, ctx, track, category);
    for (int i = 0; i < log->nentries; i++)
        free(log->entries[i]);
    free(log->entries);
    free(log->events);
    for (int i = 0; i < log->ndetails; i++)
        free(log->details[i]);
    free(log->details);
    memset(log, 0, sizeof *log);
}
