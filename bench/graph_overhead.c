/* Host time per op of a chain of small ops run eagerly and replayed from a
 * captured graph (bench/RESULTS.md, "Captured graphs"):
 *   graph_overhead [cpu|webgpu] [ops] [rounds]
 * A chain of `ops` ops on a [64] f32 tensor (add_scalar, mul, tanh in turn)
 * is run eagerly and, captured once, replayed; each round ends with a
 * sync. Prints the median over rounds of the wall time per op, and of the
 * calling thread's CPU time per op in the calls that issue the work (the
 * ops, or the replay; not the sync): the host's cost, apart from the
 * device's and from other processes on a busy machine. */
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

static double thread_cpu(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static wt_status chain(wt_tensor *x, int ops, wt_tensor **out)
{
    wt_tensor *b = x;
    wt_tensor_retain(x);
    wt_status st = WT_OK;
    for (int i = 0; i < ops && st == WT_OK; i++) {
        wt_tensor *n = NULL;
        st = i % 3 == 0 ? wt_add_scalar(b, 0.001, &n) : i % 3 == 1 ? wt_mul(b, x, &n) : wt_tanh(b, &n);
        wt_tensor_release(b);
        b = n;
    }
    *out = b;
    return st;
}

int main(int argc, char **argv)
{
    const char *backend = argc > 1 ? argv[1] : "cpu";
    int ops = argc > 2 ? atoi(argv[2]) : 300, rounds = argc > 3 ? atoi(argv[3]) : 21;
    if (ops < 1 || rounds < 1 || rounds > 1000) return 2;
    wt_context_options o;
    wt_context_options_init(&o);
    o.backend = strcmp(backend, "cpu") == 0 ? WT_BACKEND_CPU : WT_BACKEND_WEBGPU;
    wt_context *ctx = NULL;
    if (wt_context_create(&o, &ctx) != WT_OK) {
        fprintf(stderr, "graph_overhead: %s\n", wt_last_error());
        return 1;
    }
    float h[64];
    for (int i = 0; i < 64; i++) h[i] = 0.01f * (float)i;
    int64_t n = 64;
    wt_tensor *x = NULL, *y = NULL;
    wt_graph *g = NULL;
    if (wt_tensor_from_data(ctx, WT_F32, 1, &n, h, &x) != WT_OK || wt_graph_begin(ctx) != WT_OK ||
        chain(x, ops, &y) != WT_OK || wt_graph_end(ctx, &g) != WT_OK) {
        fprintf(stderr, "graph_overhead: %s\n", wt_last_error());
        return 1;
    }
    wt_pipeline_stats ps0, ps1, ps2;
    memset(&ps0, 0, sizeof ps0), memset(&ps1, 0, sizeof ps1), memset(&ps2, 0, sizeof ps2);
    double *te = malloc(sizeof(double) * (size_t)rounds), *tr = malloc(sizeof(double) * (size_t)rounds);
    double *he = malloc(sizeof(double) * (size_t)rounds), *hr = malloc(sizeof(double) * (size_t)rounds);
    float a[64], b[64];
    for (int r = 0; r < rounds; r++) {
        if (r == rounds - 1) wt_context_pipeline_stats(ctx, &ps0);
        double t0 = now(), c0 = thread_cpu();
        wt_tensor *z = NULL;
        if (chain(x, ops, &z) != WT_OK) return 1;
        he[r] = (thread_cpu() - c0) / ops;
        if (wt_context_sync(ctx) != WT_OK) return 1;
        te[r] = (now() - t0) / ops;
        if (r == rounds - 1 && wt_tensor_read(z, a, sizeof a) != WT_OK) return 1;
        wt_tensor_release(z);
        if (r == rounds - 1) wt_context_pipeline_stats(ctx, &ps1);
        t0 = now(), c0 = thread_cpu();
        if (wt_graph_replay(g) != WT_OK) return 1;
        hr[r] = (thread_cpu() - c0) / ops;
        if (wt_context_sync(ctx) != WT_OK) return 1;
        tr[r] = (now() - t0) / ops;
        if (r == rounds - 1) wt_context_pipeline_stats(ctx, &ps2);
    }
    if (wt_tensor_read(y, b, sizeof b) != WT_OK) return 1;
    qsort(te, (size_t)rounds, sizeof *te, cmp);
    qsort(tr, (size_t)rounds, sizeof *tr, cmp);
    qsort(he, (size_t)rounds, sizeof *he, cmp);
    qsort(hr, (size_t)rounds, sizeof *hr, cmp);
    printf("%s, %d ops of [64] f32, median of %d rounds: eager %.2f us/op, replay %.2f us/op (%.2fx); "
           "results %s\n",
           backend, ops, rounds, te[rounds / 2] * 1e6, tr[rounds / 2] * 1e6, te[rounds / 2] / tr[rounds / 2],
           memcmp(a, b, sizeof a) == 0 ? "equal bit for bit" : "DIFFER");
    printf("  host (calling thread's CPU time in the calls that issue the work): eager %.2f us/op, replay %.2f "
           "us/op\n",
           he[rounds / 2] * 1e6, hr[rounds / 2] * 1e6);
    if (o.backend == WT_BACKEND_WEBGPU)
        printf("  last round: bind groups made eager %llu, replay %llu; dispatches eager %llu, replay %llu; "
               "submits eager %llu, replay %llu\n",
               (unsigned long long)(ps1.bind_groups_made - ps0.bind_groups_made),
               (unsigned long long)(ps2.bind_groups_made - ps1.bind_groups_made),
               (unsigned long long)(ps1.dispatches - ps0.dispatches), (unsigned long long)(ps2.dispatches - ps1.dispatches),
               (unsigned long long)(ps1.submits - ps0.submits), (unsigned long long)(ps2.submits - ps1.submits));
    wt_graph_release(g);
    wt_tensor_release(x), wt_tensor_release(y);
    wt_context_destroy(ctx);
    free(te), free(tr), free(he), free(hr);
    return memcmp(a, b, sizeof a) == 0 ? 0 : 1;
}
