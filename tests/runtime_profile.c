/* Profiling: per-kernel summary (counts, totals, means, shares), the
 * pipeline-cache statistics, and the Chrome trace file that WT_TRACE
 * writes (made in a child process, checked by the parent).
 *
 *   runtime_profile cpu|vulkan|gles
 */
#define _POSIX_C_SOURCE 200809L
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* Three adds, two exps, a sum: the ops being profiled. */
static void workload(wt_context *ctx)
{
    float h[1000];
    for (int i = 0; i < 1000; i++) h[i] = (float)i * 1e-3f;
    int64_t n = 1000;
    wt_tensor *x = NULL, *y = NULL, *z = NULL, *s = NULL;
    CHECK(wt_tensor_from_data(ctx, WT_F32, 1, &n, h, &x) == WT_OK, "x");
    for (int i = 0; i < 3; i++) {
        CHECK(wt_add(x, x, &y) == WT_OK, "add");
        wt_tensor_release(y);
    }
    for (int i = 0; i < 2; i++) {
        CHECK(wt_exp(x, &z) == WT_OK, "exp");
        wt_tensor_release(z);
    }
    CHECK(wt_sum(x, 0, NULL, false, &s) == WT_OK, "sum");
    wt_tensor_release(s);
    wt_tensor_release(x);
}

static void check_trace(test_backend b, const char *exe)
{
    char path[256];
    snprintf(path, sizeof path, "/tmp/webtensor_trace_%d.json", (int)getpid());
    pid_t pid = fork();
    if (pid == 0) {
        setenv("WT_TRACE", path, 1);
        execl(exe, exe, test_backend_name(b), "child", (char *)NULL);
        _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "traced child ran");
    FILE *f = fopen(path, "r");
    if (!CHECK(f != NULL, "trace file %s written", path)) return;
    static char text[1 << 16];
    size_t len = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    remove(path);
    text[len] = '\0';
    int events = 0;
    for (const char *p = text; (p = strstr(p, "\"ph\":\"X\"")); p++) events++;
    CHECK(text[0] == '[' && strstr(text, "]\n") == text + len - 2, "a JSON array, closed");
    CHECK(events >= 6, "at least the 6 ops as complete events: %d", events);
    /* Every backend names an event by its op, with the node's shapes. */
    CHECK(strstr(text, "\"name\":\"add\"") && strstr(text, "\"name\":\"exp\"") &&
              strstr(text, "\"name\":\"sum\""),
          "ops named add, exp, sum");
    if (b == TEST_BACKEND_CPU) CHECK(strstr(text, "\"cat\":\"cpu\"") != NULL, "CPU category");
    CHECK(strstr(text, "\"shapes\":\"[1000] [1000] -> [1000]\"") != NULL, "the add's shapes");
    CHECK(strstr(text, "\"shapes\":\"[1000] -> [1]\"") || strstr(text, "\"shapes\":\"[1000] -> []\""),
          "the sum's shapes");
    CHECK(strstr(text, "\"ts\":") && strstr(text, "\"dur\":"), "timestamps and durations");
}

int main(int argc, char **argv)
{
    test_run run;
    if (!test_begin(&run, "runtime_profile", argc, argv)) return run.status;
    const test_backend b = run.backend;
    wt_context *ctx = run.ctx;
    if (argc > 2 && strcmp(argv[2], "child") == 0) { /* traced by WT_TRACE */
        workload(ctx);
        return test_end(&run);
    }
    if (b == TEST_BACKEND_CPU) {
        /* Host time per op, named by op: exactly the workload's ops. */
        CHECK(wt_context_profile_end(ctx) == WT_ERR_INVALID_ARGUMENT, "end before begin");
        CHECK(wt_context_profile_begin(ctx) == WT_OK, "CPU begin: %s", wt_last_error());
        wt_profile_entry e[32];
        int n = 0;
        bool gpu = true;
        CHECK(wt_context_profile_summary(ctx, e, 32, &n, &gpu) == WT_ERR_INVALID_ARGUMENT,
              "no summary while it runs");
        workload(ctx);
        CHECK(wt_context_profile_end(ctx) == WT_OK, "CPU end: %s", wt_last_error());
        CHECK(wt_context_profile_summary(ctx, e, 32, &n, &gpu) == WT_OK && !gpu, "CPU summary, host time");
        uint64_t add = 0, ex = 0, sum = 0, other = 0;
        double share = 0;
        for (int i = 0; i < n && i < 32; i++) {
            printf("  %-20s %4llu  %9.3f ms  %5.1f%%\n", e[i].name, (unsigned long long)e[i].count,
                   e[i].total_seconds * 1e3, e[i].share * 100);
            uint64_t *slot = !strcmp(e[i].name, "add") ? &add : !strcmp(e[i].name, "exp") ? &ex
                           : !strcmp(e[i].name, "sum") ? &sum : &other;
            *slot += e[i].count;
            share += e[i].share;
            CHECK(e[i].total_seconds >= 0 && fabs(e[i].mean_seconds * (double)e[i].count - e[i].total_seconds) <=
                      1e-9 + 1e-6 * e[i].total_seconds, "mean = total / count");
            if (i) CHECK(e[i - 1].total_seconds >= e[i].total_seconds, "largest first");
        }
        CHECK(add == 3 && ex == 2 && sum == 1 && other == 0, "CPU counts: add %llu, exp %llu, sum %llu, other %llu",
              (unsigned long long)add, (unsigned long long)ex, (unsigned long long)sum, (unsigned long long)other);
        CHECK(fabs(share - 1.0) < 1e-6 || n == 0, "shares add to 1: %g", share);
        /* After the end, ops are not counted. */
        workload(ctx);
        int n2 = 0;
        CHECK(wt_context_profile_summary(ctx, e, 32, &n2, &gpu) == WT_OK && n2 == n, "nothing counted after end");
        wt_pipeline_stats ps;
        CHECK(wt_context_pipeline_stats(ctx, &ps) == WT_OK && ps.variants == 0, "CPU: no pipelines");
        wt_context_destroy(ctx);
        check_trace(b, argv[0]);
        return test_summary(run.prefix);
    }
    wt_adapter_info ai;
    wt_context_adapter_info(ctx, &ai);
    workload(ctx); /* compiles outside the profile */
    wt_pipeline_stats p0, p1;
    CHECK(wt_context_pipeline_stats(ctx, &p0) == WT_OK && p0.variants > 0 && p0.compiles >= p0.variants &&
              p0.compile_seconds > 0,
          "pipelines compiled: %llu variants in %.3f s", (unsigned long long)p0.variants,
          p0.compile_seconds);
    CHECK(wt_context_profile_begin(ctx) == WT_OK, "begin: %s", wt_last_error());
    wt_profile_entry e[32];
    int n = 0;
    bool gpu = false;
    CHECK(wt_context_profile_summary(ctx, e, 32, &n, &gpu) == WT_ERR_INVALID_ARGUMENT,
          "no summary while it runs");
    workload(ctx);
    CHECK(wt_context_profile_end(ctx) == WT_OK, "end: %s", wt_last_error());
    CHECK(wt_context_profile_end(ctx) == WT_ERR_INVALID_ARGUMENT, "end twice");
    CHECK(wt_context_profile_summary(ctx, e, 32, &n, &gpu) == WT_OK && n > 0, "summary");
    CHECK(gpu == ai.timestamp_query, "GPU timestamps exactly where the adapter has them");
    uint64_t ops = 0;
    double share = 0;
    for (int i = 0; i < n && i < 32; i++) {
        printf("  %-20s %4llu  %9.3f ms  %8.2f us  %5.1f%%\n", e[i].name,
               (unsigned long long)e[i].count, e[i].total_seconds * 1e3, e[i].mean_seconds * 1e6,
               e[i].share * 100);
        ops += e[i].count;
        share += e[i].share;
        CHECK(fabs(e[i].mean_seconds * (double)e[i].count - e[i].total_seconds) <=
                  1e-9 + 1e-6 * e[i].total_seconds,
              "mean = total / count");
        if (i) CHECK(e[i - 1].total_seconds >= e[i].total_seconds, "largest first");
    }
    CHECK(ops >= 6, "every op counted: %llu", (unsigned long long)ops);
    CHECK(fabs(share - 1.0) < 1e-6, "shares add to 1: %g", share);
    CHECK(wt_context_pipeline_stats(ctx, &p1) == WT_OK && p1.variants == p0.variants &&
              p1.hits >= p0.hits + 6,
          "the profiled ops hit the cache (hits %llu -> %llu)", (unsigned long long)p0.hits,
          (unsigned long long)p1.hits);
    wt_context_destroy(ctx);
    check_trace(b, argv[0]);
    return test_summary(run.prefix);
}
