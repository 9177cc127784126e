/*
 * Output of `webtensor bench`: a console table with one column group per
 * backend (side by side), and optional CSV / JSON files with one row per
 * case and backend. bench/compare.py reads the CSV (by column name); its
 * columns are:
 *   case,shape,backend,device,median_ms,metric,work,rate,unit,status,error,timer,wall_ms
 * metric is "bytes" (rate in GB/s) or "flops" (rate in GFLOP/s); status is
 * "OK" or the wt_status name of the failure. timer says what median_ms
 * (and rate) is: "gpu", GPU time from timestamp queries, or "wall", the
 * wall clock around the launches and a sync; wall_ms is the wall-clock
 * median either way.
 */
#include "bench_engine.h"

#include <string.h>

void bench_format_time(double seconds, char *buf, size_t len)
{
    if (seconds < 1e-3) snprintf(buf, len, "%.2f us", seconds * 1e6);
    else if (seconds < 1.0) snprintf(buf, len, "%.3f ms", seconds * 1e3);
    else snprintf(buf, len, "%.3f s", seconds);
}

static void format_rate(const bench_case *c, double rate, char *buf, size_t len)
{
    if (c->metric == BENCH_BYTES) snprintf(buf, len, "%.1f GB/s", rate);
    else if (rate >= 1000.0) snprintf(buf, len, "%.2f TFLOP/s", rate / 1000.0);
    else snprintf(buf, len, "%.1f GFLOP/s", rate);
}

/* CSV field: quoted when it holds a comma, quote or newline. */
static void csv_field(FILE *f, const char *s, bool last)
{
    if (strpbrk(s, ",\"\n")) {
        fputc('"', f);
        for (; *s; s++) {
            if (*s == '"') fputc('"', f);
            fputc(*s == '\n' ? ' ' : *s, f);
        }
        fputc('"', f);
    } else {
        fputs(s, f);
    }
    fputc(last ? '\n' : ',', f);
}

static void json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\') fprintf(f, "\\%c", ch);
        else if (ch < 0x20) fprintf(f, "\\u%04x", ch);
        else fputc(ch, f);
    }
    fputc('"', f);
}

#define CASE_W 10
#define SHAPE_W 18
#define TIME_W 11
#define RATE_W 15
#define INNER_W 3

void bench_report_header(bench_report *r, bench_size size, int reps, double target_rep_s,
                         int min_inner, int max_inner)
{
    char target[32];
    bench_format_time(target_rep_s, target, sizeof target);
    printf("webtensor bench, sizes: %s, f32 (f16 in the *_f16 cases).\n"
           "A repetition is n launches back to back, then a wait for the work; n (%d to %d)\n"
           "makes it last about %s of wall time. Time per op: the median over up to %d\n"
           "repetitions, divided by n, of the GPU time from timestamp queries (\"gpu\": the sum\n"
           "of the compute passes' durations, without the submit and sync gaps between them)\n"
           "where the device has them, else of the wall clock around the launches and one\n"
           "wt_context_sync (\"wall\"). Latency cases (add_chain) always use the wall clock:\n"
           "they measure what a caller waits. GB/s: inputs read once + output written once.\n",
           bench_size_name(size), min_inner, max_inner, target, reps);
    for (int b = 0; b < r->nbackends; b++)
        printf("  %-7s %s; %s\n", r->backends[b].name, r->backends[b].device,
               r->backends[b].gpu_timer ? "GPU time from timestamp queries" : "wall clock");
    printf("\n%-*s %-*s", CASE_W, "case", SHAPE_W, "shape");
    for (int b = 0; b < r->nbackends; b++) {
        char head[64];
        snprintf(head, sizeof head, "%s %s", r->backends[b].name,
                 r->backends[b].gpu_timer ? "gpu" : "wall");
        printf(" | %*s %*s %*s", TIME_W, head, RATE_W, "rate", INNER_W, "n");
    }
    printf("%s\n", r->nbackends > 1 ? " | check" : "");
    int width = CASE_W + 1 + SHAPE_W + r->nbackends * (3 + TIME_W + 1 + RATE_W + 1 + INNER_W) +
                (r->nbackends > 1 ? 8 : 0);
    for (int i = 0; i < width; i++) putchar('-');
    putchar('\n');
    fflush(stdout);

    if (r->csv)
        fprintf(r->csv,
                "case,shape,backend,device,median_ms,metric,work,rate,unit,status,error,timer,wall_ms\n");
    if (r->json) fprintf(r->json, "{\n  \"sizes\": \"%s\",\n  \"results\": [", bench_size_name(size));
}

static void write_files(bench_report *r, const bench_case *c, const bench_plan *plan,
                        const bench_backend_run *run, const bench_result *res)
{
    const char *metric = c->metric == BENCH_BYTES ? "bytes" : "flops";
    const char *unit = c->metric == BENCH_BYTES ? "GB/s" : "GFLOP/s";
    const char *status = res->status == WT_OK ? "OK" : wt_status_string(res->status);
    const char *timer = res->gpu_timed ? "gpu" : "wall";
    if (r->csv) {
        char num[64];
        csv_field(r->csv, c->name, false);
        csv_field(r->csv, plan->label, false);
        csv_field(r->csv, run->name, false);
        csv_field(r->csv, run->device, false);
        snprintf(num, sizeof num, "%.6f", res->median_s * 1e3);
        csv_field(r->csv, res->status == WT_OK ? num : "", false);
        csv_field(r->csv, metric, false);
        snprintf(num, sizeof num, "%.0f", plan->work);
        csv_field(r->csv, num, false);
        snprintf(num, sizeof num, "%.3f", res->rate);
        csv_field(r->csv, res->status == WT_OK ? num : "", false);
        csv_field(r->csv, unit, false);
        csv_field(r->csv, status, false);
        csv_field(r->csv, res->error, false);
        csv_field(r->csv, timer, false);
        snprintf(num, sizeof num, "%.6f", res->wall_median_s * 1e3);
        csv_field(r->csv, res->status == WT_OK ? num : "", true);
        fflush(r->csv);
    }
    if (r->json) {
        fprintf(r->json, "%s\n    {\"case\": ", r->json_rows++ ? "," : "");
        json_string(r->json, c->name);
        fprintf(r->json, ", \"shape\": ");
        json_string(r->json, plan->label);
        fprintf(r->json, ", \"backend\": ");
        json_string(r->json, run->name);
        fprintf(r->json, ", \"device\": ");
        json_string(r->json, run->device);
        if (res->status == WT_OK)
            fprintf(r->json, ", \"median_ms\": %.6f, \"rate\": %.3f, \"wall_ms\": %.6f",
                    res->median_s * 1e3, res->rate, res->wall_median_s * 1e3);
        fprintf(r->json, ", \"timer\": \"%s\"", timer);
        fprintf(r->json, ", \"metric\": \"%s\", \"work\": %.0f, \"unit\": \"%s\", \"reps\": %d, "
                         "\"inner\": %d, \"input_sets\": %d, \"status\": \"%s\", \"error\": ",
                metric, plan->work, unit, res->reps, res->inner, res->sets, status);
        json_string(r->json, res->error);
        fputc('}', r->json);
    }
}

void bench_report_row(bench_report *r, const bench_case *c, const bench_plan *plan,
                      const bench_result *results, const char *check)
{
    printf("%-*s %-*s", CASE_W, c->name, SHAPE_W, plan->label);
    for (int b = 0; b < r->nbackends; b++) {
        const bench_result *res = &results[b];
        char t[32] = "n/a", rate[32] = "", inner[16] = "";
        if (res->ran && res->status == WT_OK) {
            bench_format_time(res->median_s, t, sizeof t);
            format_rate(c, res->rate, rate, sizeof rate);
            snprintf(inner, sizeof inner, "%d", res->inner);
        } else if (res->ran) {
            snprintf(t, sizeof t, "FAILED");
        }
        printf(" | %*s %*s %*s", TIME_W, t, RATE_W, rate, INNER_W, inner);
    }
    printf("%s%s\n", r->nbackends > 1 ? " | " : "", r->nbackends > 1 ? check : "");
    for (int b = 0; b < r->nbackends; b++) {
        if (results[b].ran && results[b].status != WT_OK)
            printf("    %s: %.200s%s\n", r->backends[b].name, results[b].error,
                   strlen(results[b].error) > 200 ? " ..." : "");
        write_files(r, c, plan, &r->backends[b], &results[b]);
    }
    fflush(stdout);
}

void bench_report_finish(bench_report *r)
{
    if (r->json) fprintf(r->json, "\n  ]\n}\n");
}
