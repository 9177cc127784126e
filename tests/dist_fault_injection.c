/* dist_fault_injection, under mpirun -np N (N >= 2), CPU backend: the
 * distributed layer with host allocations failing on one rank.
 *
 * The program is linked with the library and the layer's sources
 * statically and -Wl,--wrap for the allocation functions
 * (tests/host_faults.c), so the library's and the layer's own allocations
 * - not MPI's - go through the hooks. For N = 1, 2, ... the Nth
 * allocation of rank 1's workload fails, until a run makes fewer than N.
 * The workload: a gradient synchroniser made over a small model's
 * parameters, two overlapped steps (forward, loss given, backward - its
 * hooks start the buckets - and finish), an allreduce, a broadcast and an
 * allgather, the synchroniser destroyed. A rank whose own work fails
 * calls wt_dist_fail where its next collective would be, as a program
 * should.
 *
 * Each run must end alike everywhere: either every rank finishes the
 * workload with the numbers of a run without failures, or every rank
 * stops at the same collective - rank 1 with WT_ERR_OUT_OF_MEMORY, the
 * others with WT_ERR_BACKEND naming rank 1 - with no host block left
 * behind on rank 1, and the group usable (a barrier and a clean workload
 * run right after). */
#include "host_faults.h"
#include "webtensor_dist.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { NP = 4, IN = 8, HID = 16, OUT = 4, BATCH = 3, MAX_RANKS = 8,
       NRESULT = 2 * (HID * IN + HID + OUT * HID + OUT + 1) + 8 + 8 * MAX_RANKS };

static int g_rank, g_fail;

#define CHECK(cond, ...)                                                       \
    do {                                                                       \
        if (!(cond)) {                                                         \
            fprintf(stderr, "rank %d FAIL %s:%d: ", g_rank, __FILE__, __LINE__); \
            fprintf(stderr, __VA_ARGS__);                                      \
            fprintf(stderr, " [%s]\n", wt_last_error());                       \
            g_fail++;                                                          \
        }                                                                      \
    } while (0)

typedef struct outcome {
    int stage;        /* the stage that failed; 0: none */
    wt_status st;
    char msg[256];
} outcome;

static void failed(outcome *o, int stage, wt_status st)
{
    if (o->stage) return;
    o->stage = stage;
    o->st = st;
    snprintf(o->msg, sizeof o->msg, "%s", wt_last_error());
}

static wt_tensor *filled(wt_context *ctx, int ndim, const int64_t *shape, float base)
{
    int64_t n = 1;
    for (int i = 0; i < ndim; i++) n *= shape[i];
    float v[HID * IN];
    for (int64_t j = 0; j < n; j++) v[j] = base + 0.013f * (float)(j % 29) - 0.17f;
    wt_tensor *t = NULL;
    if (wt_tensor_from_data(ctx, WT_F32, ndim, shape, v, &t) != WT_OK) return NULL;
    return t;
}

/* A local failure becomes the group's: wt_dist_fail where the next
 * collective (stage s) would be; the others stop there. */
static void local_failure(wt_dist *d, outcome *o, int s, wt_status st)
{
    failed(o, s, st);
    wt_dist_fail(d, o->msg);
}

static wt_tensor *model_loss(wt_tensor *const *p, wt_tensor *x)
{
    wt_tensor *h = NULL, *a = NULL, *y = NULL, *loss = NULL;
    if (wt_linear(x, p[0], p[1], &h) == WT_OK && wt_tanh(h, &a) == WT_OK && wt_linear(a, p[2], p[3], &y) == WT_OK)
        wt_sum(y, 0, NULL, false, &loss);
    wt_tensor_release(h), wt_tensor_release(a), wt_tensor_release(y);
    return loss;
}

/* The workload; result: the numbers it read (NRESULT floats). */
static outcome workload(wt_dist *d, wt_context *ctx, wt_tensor *const *p, float *result)
{
    outcome o = {0, WT_OK, ""};
    int64_t k = 0;
    const int64_t xs[2] = {BATCH, IN};
    wt_tensor *x = filled(ctx, 2, xs, 0.1f * (float)g_rank), *zero = NULL, *slots[NP + 1] = {NULL};
    float z = 0;
    if (!x || wt_tensor_from_data(ctx, WT_F32, 0, NULL, &z, &zero) != WT_OK) local_failure(d, &o, 2, WT_ERR_OUT_OF_MEMORY);
    wt_dist_grad_sync *s = NULL;
    if (!o.stage) {
        memcpy(slots, p, NP * sizeof *p);
        slots[NP] = zero;
        wt_status st = wt_dist_grad_sync_create(d, NP + 1, slots, WT_DIST_MEAN, &s);
        if (st != WT_OK) failed(&o, 2, st);
    }
    for (int step = 0; step < 2 && !o.stage; step++) {
        for (int i = 0; i < NP; i++) wt_tensor_zero_grad(p[i]);
        wt_tensor *loss = model_loss(p, x), *copy = NULL;
        wt_status st = loss ? wt_mul_scalar(loss, 1.0, &copy) : WT_ERR_OUT_OF_MEMORY;
        if (st == WT_OK) st = wt_dist_grad_sync_give(s, NP, copy);
        if (st == WT_OK) st = wt_backward(loss);
        if (st != WT_OK) local_failure(d, &o, 3 + step, st);
        else if ((st = wt_dist_grad_sync_finish(s)) != WT_OK) failed(&o, 3 + step, st);
        for (int i = 0; i < NP && !o.stage; i++) {
            wt_tensor *g = NULL;
            st = wt_tensor_grad(p[i], &g);
            int64_t c = g ? wt_tensor_numel(g) : 0;
            if (st == WT_OK && g) st = wt_tensor_read(g, result + k, (size_t)c * sizeof(float));
            k += c;
            wt_tensor_release(g);
            if (st != WT_OK) local_failure(d, &o, step == 0 ? 4 : 7, st);
        }
        if (!o.stage && wt_tensor_read(copy, result + k++, sizeof(float)) != WT_OK)
            local_failure(d, &o, step == 0 ? 4 : 7, WT_ERR_OUT_OF_MEMORY);
        wt_tensor_release(loss), wt_tensor_release(copy);
    }
    /* The other collectives. */
    const int64_t vs[1] = {8};
    wt_tensor *v = o.stage ? NULL : filled(ctx, 1, vs, (float)g_rank), *all = NULL;
    if (!o.stage && !v) local_failure(d, &o, 7, WT_ERR_OUT_OF_MEMORY);
    wt_status st;
    if (!o.stage && (st = wt_dist_allreduce(d, 1, &v, WT_DIST_SUM)) != WT_OK) failed(&o, 7, st);
    if (!o.stage && (st = wt_dist_broadcast(d, 1, &v, 0)) != WT_OK) failed(&o, 8, st);
    if (!o.stage && (st = wt_dist_allgather(d, v, &all)) != WT_OK) failed(&o, 9, st);
    if (!o.stage && (st = wt_tensor_read(v, result + k, 8 * sizeof(float))) != WT_OK) local_failure(d, &o, 10, st);
    k += 8;
    if (!o.stage && (st = wt_tensor_read(all, result + k, (size_t)(8 * wt_dist_size(d)) * sizeof(float))) != WT_OK)
        local_failure(d, &o, 10, st);
    /* A last collective, where a failure of the reads above is told. */
    if (!o.stage && (st = wt_dist_barrier(d)) != WT_OK) failed(&o, 10, st);
    wt_tensor_release(all), wt_tensor_release(v);
    wt_dist_grad_sync_destroy(s);
    wt_tensor_release(x), wt_tensor_release(zero);
    for (int i = 0; i < NP; i++) wt_tensor_zero_grad(p[i]); /* the same blocks after every run */
    return o;
}

int main(void)
{
    wt_dist_options opts;
    wt_dist_options_init(&opts);
    opts.bucket_bytes = 256; /* several buckets */
    opts.timeout_seconds = 60;
    wt_dist *d = NULL;
    if (wt_dist_init(MPI_COMM_WORLD, &opts, &d) != WT_OK) {
        fprintf(stderr, "wt_dist_init: %s\n", wt_last_error());
        return 1;
    }
    g_rank = wt_dist_rank(d);
    int size = wt_dist_size(d);
    wt_context_options co;
    wt_context_options_init(&co);
    co.backend = WT_BACKEND_CPU;
    wt_context *ctx = NULL;
    if (size < 2 || size > MAX_RANKS || wt_context_create(&co, &ctx) != WT_OK) {
        fprintf(stderr, "needs mpirun -np 2 or more and a CPU context\n");
        wt_dist_destroy(d);
        return 1;
    }
    const int64_t shapes[NP][2] = {{HID, IN}, {HID, 0}, {OUT, HID}, {OUT, 0}};
    wt_tensor *p[NP] = {NULL};
    for (int i = 0; i < NP; i++) {
        p[i] = filled(ctx, shapes[i][1] ? 2 : 1, shapes[i], 0.05f * (float)i);
        CHECK(p[i] && wt_tensor_set_requires_grad(p[i], true) == WT_OK, "parameter %d", i);
    }
    float *want = calloc(NRESULT, sizeof *want), *got = calloc(NRESULT, sizeof *got);
    /* Twice clean: the second sets the baseline of live blocks (caches
     * filled by the first). */
    outcome o = workload(d, ctx, p, want);
    CHECK(o.stage == 0, "clean run: stage %d: %s", o.stage, o.msg);
    o = workload(d, ctx, p, got);
    CHECK(o.stage == 0 && !memcmp(want, got, NRESULT * sizeof *got), "second clean run");
    long base = host_live(), points = 0, failing_runs = 0;
    for (long n = 1;; n++) {
        int failures = 0;
        MPI_Allreduce(&g_fail, &failures, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        if (failures) break;
        host_arm(g_rank == 1 ? n : 0);
        o = workload(d, ctx, p, got);
        long injected = host_injected();
        host_arm(0);
        long any = 0;
        MPI_Allreduce(&injected, &any, 1, MPI_LONG, MPI_MAX, MPI_COMM_WORLD);
        if (!any) break;
        points++;
        /* Every rank stopped at the same stage, or none did. */
        int stage_max = 0, stage_min = 0;
        MPI_Allreduce(&o.stage, &stage_max, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        MPI_Allreduce(&o.stage, &stage_min, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
        CHECK(stage_max == stage_min, "allocation %ld: the ranks stopped at stages %d..%d (%s)", n, stage_min,
              stage_max, o.msg);
        if (o.stage) {
            failing_runs++;
            if (g_rank == 1)
                CHECK(o.st == WT_ERR_OUT_OF_MEMORY, "allocation %ld: rank 1 got %s: %s", n, wt_status_string(o.st),
                      o.msg);
            else
                CHECK(o.st == WT_ERR_BACKEND && strstr(o.msg, "rank 1 failed"), "allocation %ld: got %s: %s", n,
                      wt_status_string(o.st), o.msg);
        } else {
            CHECK(!memcmp(want, got, NRESULT * sizeof *got), "allocation %ld: recovered with other numbers", n);
        }
        CHECK(host_live() == base, "allocation %ld: %ld host blocks left behind (stage %d)", n, host_live() - base,
              o.stage);
        /* The group is usable right after. */
        CHECK(wt_dist_barrier(d) == WT_OK, "allocation %ld: barrier after", n);
    }
    o = workload(d, ctx, p, got);
    CHECK(o.stage == 0 && !memcmp(want, got, NRESULT * sizeof *got), "a clean run at the end");
    if (g_rank == 1)
        printf("dist fault injection: %ld allocation points on rank 1, %ld runs failed on every rank alike, %s\n",
               points, failing_runs, g_fail ? "FAILED" : "every one clean");
    for (int i = 0; i < NP; i++) wt_tensor_release(p[i]);
    free(want), free(got);
    wt_context_destroy(ctx);
    wt_dist_destroy(d);
    return g_fail ? 1 : 0;
}
