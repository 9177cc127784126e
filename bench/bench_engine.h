/*
 * Benchmark engine of the `webtensor bench` command.
 *
 * Three parts:
 *  - bench_cases.c: the table of cases (what is measured) and the size sets
 *    (at which shapes). Adding a case means one entry in the case table and
 *    one line per size set.
 *  - bench_engine.c: options, input creation, the timing loop.
 *  - bench_report.c: the console table and the CSV / JSON files.
 * Only the public API (webtensor.h) is used.
 */
#ifndef WEBTENSOR_BENCH_ENGINE_H
#define WEBTENSOR_BENCH_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "webtensor.h"

#define BENCH_MAX_INPUTS 4
#define BENCH_MAX_PARAMS 4
#define BENCH_MAX_BACKENDS 2
/* Launches per timed repetition in the large size set, at least. */
#define BENCH_MIN_INNER_LARGE 20

/* What a case's throughput is counted in. */
typedef enum bench_metric {
    BENCH_BYTES, /* inputs read once + output written once -> GB/s */
    BENCH_FLOPS  /* arithmetic operations -> GFLOP/s */
} bench_metric;

typedef struct bench_shape {
    int ndim;
    int64_t dims[WT_MAX_DIMS];
} bench_shape;

/* What a case says about itself at given parameters. */
typedef struct bench_plan {
    int ninputs;
    bench_shape inputs[BENCH_MAX_INPUTS];
    char label[64];     /* shape as printed and joined on: "32768x4096" */
    double work;        /* bytes or flops of one op */
    int ops_per_run;    /* ops one run() performs (a dependent chain: its length) */
    double check_atol;  /* absolute slack when backends' outputs are compared */
    wt_dtype input_dtype; /* of every input (WT_F32 unless the plan says otherwise) */
    /* Non-zero: input 0 ([N, K]) is a quantised weight of this
     * wt_quant_type, random blocks with finite scales; the others f32. */
    int quant_type;
    /* Bytes of inputs to rotate through at least (0: the engine's
     * default), for cases whose inputs must not sit in a GPU's L2. */
    double rotate_bytes;
} bench_plan;

typedef struct bench_case {
    const char *name;
    const char *description;
    bench_metric metric;
    /* Fills the plan from the case's parameters. */
    void (*plan)(const int64_t *params, bench_plan *plan);
    /* Launches the op(s) of one run on inputs; *out is the final result,
     * which the engine releases. */
    wt_status (*run)(wt_tensor *const *inputs, const int64_t *params, wt_tensor **out);
    /* Time per op as the caller waits for it (recording and submission
     * included): always the wall clock, never GPU busy time. */
    bool latency;
} bench_case;

/* One row of a size set: a case at one set of parameters. */
typedef struct bench_item {
    const char *case_name;
    int64_t params[BENCH_MAX_PARAMS];
} bench_item;

typedef enum bench_size { BENCH_SIZE_QUICK, BENCH_SIZE_DEFAULT, BENCH_SIZE_LARGE } bench_size;

const bench_case *bench_find_case(const char *name);
/* The items of a size set; *count gets their number. */
const bench_item *bench_size_items(bench_size size, int *count);
const char *bench_size_name(bench_size size);
/* Prints every case name and description (for help). */
void bench_print_cases(FILE *f);

/* Result of one item on one backend. */
typedef struct bench_result {
    bool ran;            /* the backend was asked to run it */
    wt_status status;    /* WT_OK or why it failed */
    char error[512];
    double median_s;     /* per op: GPU time where the backend's timer works, else wall */
    double wall_median_s; /* per op, wall clock (the same as median_s without a GPU timer) */
    double rate;         /* GB/s or GFLOP/s */
    int reps, inner, sets;
    double checksum;     /* sum of |output| of one run, for cross-backend checks */
    bool gpu_timed;      /* median_s is GPU time (else wall clock) */
} bench_result;

typedef struct bench_backend_run {
    wt_backend backend;
    const char *name;    /* "cpu" / "webgpu" */
    char device[256];    /* adapter name or "cpu" */
    bool gpu_timer;      /* repetitions are timed with wt_context_timer_* (GPU time) */
} bench_backend_run;

/* Report writers (bench_report.c). */
typedef struct bench_report {
    FILE *csv;
    FILE *json;
    int json_rows;
    int nbackends;
    const bench_backend_run *backends;
} bench_report;

/* reps: repetitions at most; a repetition is sized to last target_rep_s,
 * with between min_inner and max_inner launches. */
void bench_report_header(bench_report *r, bench_size size, int reps, double target_rep_s,
                         int min_inner, int max_inner);
void bench_report_row(bench_report *r, const bench_case *c, const bench_plan *plan,
                      const bench_result *results, const char *check);
void bench_report_finish(bench_report *r);
/* "1.23 ms" style text for a time in seconds. */
void bench_format_time(double seconds, char *buf, size_t len);

int bench_main(int argc, char **argv);
void bench_usage(FILE *f);

#endif
