/* Per-op profiles shared by the backends: a summary by op name (count,
 * total) and, under WT_TRACE=<file>, every op as a Chrome trace event
 * written to <file> when the context ends (core/profile.c). A backend
 * times its ops its own way (the CPU on the host around each backend
 * call, WebGPU by timestamp queries) and records them here. */
#ifndef WT_PROFILE_H
#define WT_PROFILE_H

#include "core/internal.h"

typedef struct wt_prof_entry {
    char name[64];
    uint64_t count;
    uint64_t total_ns;
} wt_prof_entry;

typedef struct wt_trace_event {
    const char *name;   /* an entry's name */
    const char *detail; /* the node's shapes (a detail string), or NULL */
    double ts_us, dur_us;
} wt_trace_event;

typedef struct wt_prof_log {
    bool trace;               /* keep events for the trace file */
    wt_prof_entry **entries;  /* each allocated once: names stay put */
    int nentries, cap_entries;
    wt_trace_event *events;
    size_t nevents, cap_events;
    char **details; /* distinct detail strings of the trace's events */
    int ndetails, cap_details;
} wt_prof_log;

/* Host time in microseconds (monotonic). */
double wt_now_us(void);
/* The WT_TRACE path (read once per process), NULL when unset or empty. */
const char *wt_trace_path(void);
/* The entry's stable copy of name (NULL when out of memory). */
const char *wt_prof_intern(wt_prof_log *log, const char *name);
/* One op: its name, start (host microseconds) and duration. */
void wt_prof_record(wt_prof_log *log, const char *name, double ts_us, uint64_t dur_ns);
/* The same with a detail for the trace (NULL: none). */
void wt_prof_record_detail(wt_prof_log *log, const char *name, const char *detail, double ts_us,
                           uint64_t dur_ns);
/* A stable copy of a detail string (the trace's only: NULL when the log
 * keeps no trace, when out of memory, or past a bound of distinct ones). */
const char *wt_prof_detail(wt_prof_log *log, const char *detail);
/* The shapes of n's tensors, "[2,3] [3] -> [2,3]", into buf. */
void wt_node_shapes(const wt_node *n, char *buf, size_t size);
/* Every count back to zero (a new profile). */
void wt_prof_reset(wt_prof_log *log);
/* The summary of wt_context_profile_summary (largest total first). */
void wt_prof_summary(const wt_prof_log *log, wt_profile_entry *out, int capacity, int *count);
/* Appends the events to the trace file on a track named track (for the
 * context ctx), then frees everything. */
void wt_prof_finish(wt_prof_log *log, const wt_context *ctx, const char *track, const char *category);

#endif /* WT_PROFILE_H */
