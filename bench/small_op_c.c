/* The C side of bench/python_overhead.py: microseconds per small op
 * called from C, the same op the Python benchmark calls.
 *   small_op_c [cpu|webgpu] [elements] [ops] [rounds]
 * Each round makes and releases `ops` results of wt_add(a, b) on two
 * [elements] f32 tensors (then syncs); prints the median round's time per
 * op, wall clock and the process's CPU time (clock(): the figure to
 * compare on a machine shared with other work), and the same for
 * wt_add_scalar. */
#define _POSIX_C_SOURCE 200809L
#include "webtensor.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static int fail(const char *what)
{
    fprintf(stderr, "small_op_c: %s: %s\n", what, wt_last_error());
    return 1;
}

int main(int argc, char **argv)
{
    const char *backend = argc > 1 ? argv[1] : "cpu";
    int64_t n = argc > 2 ? atoll(argv[2]) : 16;
    int ops = argc > 3 ? atoi(argv[3]) : 10000, rounds = argc > 4 ? atoi(argv[4]) : 9;
    if (n < 1 || ops < 1 || rounds < 1 || rounds > 99) {
        fprintf(stderr, "usage: small_op_c [cpu|webgpu] [elements >= 1] [ops >= 1] [rounds 1..99]\n");
        return 2;
    }
    wt_context_options o;
    wt_context_options_init(&o);
    o.backend = strcmp(backend, "cpu") == 0 ? WT_BACKEND_CPU : WT_BACKEND_WEBGPU;
    wt_context *ctx = NULL;
    if (wt_context_create(&o, &ctx) != WT_OK) return fail("context");
    wt_tensor *a = NULL, *b = NULL;
    if (wt_tensor_full(ctx, WT_F32, 1, &n, 1.0, &a) != WT_OK || wt_tensor_full(ctx, WT_F32, 1, &n, 0.5, &b) != WT_OK)
        return fail("inputs");
    for (int kind = 0; kind < 2; kind++) {
        double t[99], cpu[99];
        for (int r = 0; r < rounds; r++) {
            double t0 = now();
            clock_t c0 = clock();
            for (int i = 0; i < ops; i++) {
                wt_tensor *c = NULL;
                wt_status st = kind == 0 ? wt_add(a, b, &c) : wt_add_scalar(a, 1.0, &c);
                if (st != WT_OK) return fail("op");
                wt_tensor_release(c);
            }
            if (wt_context_sync(ctx) != WT_OK) return fail("sync");
            t[r] = (now() - t0) / ops;
            cpu[r] = (double)(clock() - c0) / CLOCKS_PER_SEC / ops;
        }
        qsort(t, (size_t)rounds, sizeof t[0], cmp);
        qsort(cpu, (size_t)rounds, sizeof cpu[0], cmp);
        printf("%s %s [%lld] f32: %.3f us per op, %.3f us of CPU time (medians of %d rounds of %d)\n", backend,
               kind == 0 ? "add(a, b)" : "add_scalar(a, 1)", (long long)n, t[rounds / 2] * 1e6,
               cpu[rounds / 2] * 1e6, rounds, ops);
    }
    wt_tensor_release(a);
    wt_tensor_release(b);
    wt_context_destroy(ctx);
    return 0;
}
