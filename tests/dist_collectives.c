/* The distributed layer's collectives against values computed directly,
 * run under mpirun -np N (N >= 2) on one backend (argv[1]: cpu, vulkan,
 * gles): allreduce (sum, mean; several buckets and a tensor larger than a
 * bucket; read per tensor and packed on the device), broadcast from the last rank, allgather, barrier; then every
 * rank failing together: bad arguments on one rank, shapes that differ
 * between ranks, a rank calling wt_dist_fail - each fails the collective on
 * every rank with a message naming the rank, and the group stays usable;
 * and NULL arguments. Values are small integers, so sums are exact and
 * compared bit for bit. Also reads past the pipelined read-back's pieces.
 *
 * argv[2] "timeout": instead, rank 1 joins a barrier 4 s late while the
 * others wait 1 s: they must return a timeout message (the test's pass
 * pattern), not hang. */
#define _POSIX_C_SOURCE 200809L
#include "webtensor_dist.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int g_fail, g_rank;

#define CHECK(cond, ...)                                                                          \
    do {                                                                                          \
        if (!(cond)) {                                                                            \
            fprintf(stderr, "rank %d FAIL %s:%d: ", g_rank, __FILE__, __LINE__);                  \
            fprintf(stderr, __VA_ARGS__);                                                         \
            fprintf(stderr, " [%s]\n", wt_last_error());                                          \
            g_fail++;                                                                             \
        }                                                                                         \
    } while (0)

static wt_context *make_ctx(const char *name)
{
    wt_context_options o;
    wt_context_options_init(&o);
    if (strcmp(name, "cpu") == 0) o.backend = WT_BACKEND_CPU;
    else if (strcmp(name, "vulkan") == 0) o.backend = WT_BACKEND_WEBGPU, o.gpu_api = WT_GPU_API_VULKAN;
    else if (strcmp(name, "gles") == 0) o.backend = WT_BACKEND_WEBGPU, o.gpu_api = WT_GPU_API_OPENGLES;
    else return NULL;
    wt_context *ctx = NULL;
    if (wt_context_create(&o, &ctx) != WT_OK) fprintf(stderr, "no %s context: %s\n", name, wt_last_error());
    return ctx;
}

/* Element j of tensor i on rank r: small integers (exact sums). */
static float value(int r, int i, int64_t j) { return (float)((r + 1) * (i + 1) + (j % 97) - 40); }

static wt_tensor *filled(wt_context *ctx, int rank, int i, int64_t n)
{
    float *v = malloc((size_t)n * sizeof *v);
    wt_tensor *t = NULL;
    for (int64_t j = 0; j < n; j++) v[j] = value(rank, i, j);
    int64_t shape[1] = {n};
    if (wt_tensor_from_data(ctx, WT_F32, 1, shape, v, &t) != WT_OK) t = NULL;
    free(v);
    return t;
}

static void test_allreduce(wt_dist *d, wt_context *ctx, wt_dist_reduce op)
{
    int rank = wt_dist_rank(d), size = wt_dist_size(d);
    /* With 4 KiB buckets: several tensors per bucket, one of 40,000
     * floats alone in its own, and a 0-d one. */
    const int64_t sizes[6] = {1, 300, 700, 40000, 5, 1000};
    wt_tensor *ts[7] = {NULL};
    for (int i = 0; i < 6; i++) ts[i] = filled(ctx, rank, i, sizes[i]);
    float scalar = (float)rank;
    CHECK(wt_tensor_from_data(ctx, WT_F32, 0, NULL, &scalar, &ts[6]) == WT_OK, "0-d tensor");
    CHECK(wt_dist_allreduce(d, 7, ts, op) == WT_OK, "allreduce op %d", (int)op);
    for (int i = 0; i < 6; i++) {
        float *got = malloc((size_t)sizes[i] * sizeof *got);
        CHECK(wt_tensor_read(ts[i], got, (size_t)sizes[i] * sizeof *got) == WT_OK, "read");
        int bad = 0;
        for (int64_t j = 0; j < sizes[i]; j++) {
            double want = 0;
            for (int r = 0; r < size; r++) want += value(r, i, j);
            /* The mean is the sum times the float 1/size, as documented. */
            float w = op == WT_DIST_MEAN ? (float)want * (1.0f / (float)size) : (float)want;
            if (got[j] != w && bad++ < 3)
                fprintf(stderr, "rank %d: tensor %d element %lld: %g, want %g\n", rank, i, (long long)j, got[j], w);
        }
        CHECK(bad == 0, "allreduce op %d tensor %d: %d wrong elements", (int)op, i, bad);
        free(got);
    }
    float s = -1;
    double want = (double)size * (size - 1) / 2;
    CHECK(wt_tensor_read(ts[6], &s, sizeof s) == WT_OK &&
              s == (op == WT_DIST_MEAN ? (float)want * (1.0f / (float)size) : (float)want),
          "0-d allreduce: %g", s);
    for (int i = 0; i < 7; i++) wt_tensor_release(ts[i]);
}

static void test_broadcast_allgather(wt_dist *d, wt_context *ctx)
{
    int rank = wt_dist_rank(d), size = wt_dist_size(d), root = size - 1;
    wt_tensor *ts[2] = {filled(ctx, rank, 3, 1234), NULL};
    int32_t iv[6] = {rank, rank * 2, -rank, 7, 8, 9};
    int64_t s23[2] = {2, 3};
    CHECK(wt_tensor_from_data(ctx, WT_I32, 2, s23, iv, &ts[1]) == WT_OK, "i32 tensor");
    CHECK(wt_dist_broadcast(d, 2, ts, root) == WT_OK, "broadcast");
    float f[1234];
    int32_t gi[6];
    CHECK(wt_tensor_read(ts[0], f, sizeof f) == WT_OK && wt_tensor_read(ts[1], gi, sizeof gi) == WT_OK, "read");
    int bad = 0;
    for (int j = 0; j < 1234; j++) bad += f[j] != value(root, 3, j);
    CHECK(bad == 0 && gi[0] == root && gi[1] == 2 * root && gi[2] == -root && gi[5] == 9,
          "broadcast from rank %d: %d wrong", root, bad);

    wt_tensor *all = NULL;
    CHECK(wt_tensor_from_data(ctx, WT_I32, 2, s23, iv, &ts[1]) == WT_OK, "i32 tensor");
    wt_tensor_release(ts[1]);
    int32_t mine[6] = {rank, rank * 2, -rank, 7, 8, 9};
    CHECK(wt_tensor_from_data(ctx, WT_I32, 2, s23, mine, &ts[1]) == WT_OK, "i32 tensor");
    CHECK(wt_dist_allgather(d, ts[1], &all) == WT_OK, "allgather");
    if (all) {
        CHECK(wt_tensor_ndim(all) == 3 && wt_tensor_shape(all)[0] == size && wt_tensor_shape(all)[1] == 2 &&
                  wt_tensor_shape(all)[2] == 3,
              "allgather shape");
        int32_t *g = malloc((size_t)size * 6 * sizeof *g);
        CHECK(wt_tensor_read(all, g, (size_t)size * 6 * sizeof *g) == WT_OK, "read");
        bad = 0;
        for (int r = 0; r < size; r++)
            bad += g[r * 6] != r || g[r * 6 + 1] != 2 * r || g[r * 6 + 2] != -r || g[r * 6 + 3] != 7;
        CHECK(bad == 0, "allgather values: %d ranks wrong", bad);
        free(g);
    }
    wt_tensor_release(all);
    wt_tensor_release(ts[0]);
    wt_tensor_release(ts[1]);
    CHECK(wt_dist_barrier(d) == WT_OK, "barrier");
}

/* Reads larger than the read-back's pipelined pieces (8 MiB), the path of
 * a broadcast's root: every byte, from an offset that is not a whole word
 * and to a length that is not one either (a bool view). */
static void test_large_reads(wt_dist *d, wt_context *ctx)
{
    int rank = wt_dist_rank(d);
    const int64_t n = 17 * 1000 * 1000 + 3;
    unsigned char *v = malloc((size_t)n), *got = malloc((size_t)n);
    for (int64_t j = 0; j < n; j++) v[j] = (unsigned char)((j * 7 + rank) % 3 == 0);
    wt_tensor *t = NULL, *view = NULL;
    CHECK(wt_tensor_from_data(ctx, WT_BOOL, 1, &n, v, &t) == WT_OK, "a large bool tensor");
    CHECK(wt_slice(t, 0, 1, n, 1, &view) == WT_OK && wt_tensor_read(view, got, (size_t)n - 1) == WT_OK,
          "reading a large view");
    CHECK(memcmp(got, v + 1, (size_t)n - 1) == 0, "the large view's bytes");
    wt_tensor *one[1] = {t};
    CHECK(wt_dist_broadcast(d, 1, one, 0) == WT_OK, "broadcasting 17 MB");
    for (int64_t j = 0; j < n; j++) v[j] = (unsigned char)((j * 7) % 3 == 0);
    CHECK(wt_tensor_read(t, got, (size_t)n) == WT_OK && memcmp(got, v, (size_t)n) == 0, "17 MB from rank 0");
    wt_tensor_release(view);
    wt_tensor_release(t);
    free(v);
    free(got);
}

/* Failures that every rank must see, after which the group still works. */
static void test_failures(wt_dist *d, wt_context *ctx)
{
    int rank = wt_dist_rank(d), size = wt_dist_size(d);
    wt_tensor *a = filled(ctx, rank, 0, 12), *v = NULL;
    /* Rank 1 passes a view that is not contiguous. */
    int64_t s34[2] = {3, 4};
    wt_tensor *m = NULL;
    CHECK(wt_reshape(a, 2, s34, &m) == WT_OK && wt_transpose(m, 0, 1, &v) == WT_OK, "view");
    wt_tensor *arg[1] = {rank == 1 ? v : a};
    wt_status st = wt_dist_allreduce(d, 1, arg, WT_DIST_SUM);
    CHECK(st == (rank == 1 ? WT_ERR_INVALID_ARGUMENT : WT_ERR_BACKEND), "a non-contiguous tensor on rank 1: %s",
          wt_status_string(st));
    CHECK(rank == 1 ? strstr(wt_last_error(), "not contiguous") != NULL
                    : strstr(wt_last_error(), "rank 1 failed") != NULL && strstr(wt_last_error(), "not contiguous"),
          "the message names rank 1 and its reason");
    /* Shapes that differ: rank 0 gives 13 elements. */
    wt_tensor *b = filled(ctx, rank, 0, rank == 0 ? 13 : 12);
    wt_tensor *barg[1] = {b};
    st = wt_dist_allreduce(d, 1, barg, WT_DIST_SUM);
    CHECK(st == WT_ERR_INVALID_ARGUMENT && strstr(wt_last_error(), "different tensors"), "shapes differ: %s",
          wt_status_string(st));
    /* The last rank fails; the others are in an allreduce. */
    wt_tensor *one[1] = {a};
    if (rank == size - 1) {
        st = wt_dist_fail(d, "out of coffee");
        CHECK(st == WT_ERR_BACKEND && strstr(wt_last_error(), "out of coffee"), "fail on the failing rank");
    } else {
        st = wt_dist_allreduce(d, 1, one, WT_DIST_SUM);
        char want[64];
        snprintf(want, sizeof want, "rank %d failed", size - 1);
        CHECK(st == WT_ERR_BACKEND && strstr(wt_last_error(), want) && strstr(wt_last_error(), "out of coffee"),
              "the others hear of it: %s", wt_status_string(st));
    }
    /* Still in step: a sum works. */
    CHECK(wt_dist_allreduce(d, 1, one, WT_DIST_SUM) == WT_OK, "allreduce after failures");
    float got[12] = {0};
    double want = 0;
    for (int r = 0; r < size; r++) want += value(r, 0, 5);
    CHECK(wt_tensor_read(a, got, sizeof got) == WT_OK && got[5] == (float)want, "sum after failures: %g", got[5]);
    /* Bad inputs, called alike on every rank. */
    CHECK(wt_dist_allreduce(NULL, 1, one, WT_DIST_SUM) == WT_ERR_INVALID_ARGUMENT, "NULL group");
    CHECK(wt_dist_allreduce(d, 1, NULL, WT_DIST_SUM) == WT_ERR_INVALID_ARGUMENT, "NULL tensors");
    CHECK(wt_dist_allreduce(d, 1, one, (wt_dist_reduce)7) == WT_ERR_INVALID_ARGUMENT, "bad op");
    CHECK(wt_dist_broadcast(d, 1, one, size) == WT_ERR_INVALID_ARGUMENT, "root out of range");
    wt_tensor *out = (wt_tensor *)1;
    CHECK(wt_dist_allgather(d, NULL, &out) == WT_ERR_INVALID_ARGUMENT && out == NULL, "allgather NULL x");
    CHECK(wt_dist_get_stats(d, NULL) == WT_ERR_INVALID_ARGUMENT && wt_dist_rank(NULL) == -1 &&
              wt_dist_size(NULL) == -1 && wt_dist_local_rank(NULL) == -1,
          "NULL queries");
    wt_dist_stats stats;
    wt_dist_stats_init(&stats);
    CHECK(wt_dist_get_stats(d, &stats) == WT_OK && stats.calls > 0 && stats.bytes_reduced > 0, "stats");
    CHECK(wt_dist_barrier(d) == WT_OK, "barrier at the end");
    wt_tensor_release(a), wt_tensor_release(b), wt_tensor_release(m), wt_tensor_release(v);
}

/* ---------------------------------------- overlapped gradient reduction */

/* A small model whose gradients have non-integer values (so that the
 * order of additions shows in the bits with 3 ranks), its data drawn
 * per rank. Four parameters and the loss slot, in four buckets of at
 * most 4 KiB: W1 [64, 40] (10 KiB, alone), b1, W2 [16, 64], then b2 and
 * the loss. */
enum { GS_IN = 40, GS_HID = 64, GS_OUT = 16, GS_BATCH = 6, GS_NP = 4 };

static wt_tensor *seeded(wt_context *ctx, int ndim, const int64_t *shape, uint64_t seed, double scale)
{
    wt_tensor *r = NULL, *t = NULL;
    if (wt_randn(ctx, WT_F32, ndim, shape, seed, &r) == WT_OK) wt_mul_scalar(r, scale, &t);
    wt_tensor_release(r);
    return t;
}

static wt_tensor *gs_loss(wt_tensor *const *p, wt_tensor *x)
{
    wt_tensor *h = NULL, *a = NULL, *y = NULL, *sq = NULL, *loss = NULL;
    if (wt_linear(x, p[0], p[1], &h) == WT_OK && wt_tanh(h, &a) == WT_OK && wt_linear(a, p[2], p[3], &y) == WT_OK &&
        wt_mul(y, y, &sq) == WT_OK)
        wt_mean(sq, 0, NULL, false, &loss);
    wt_tensor_release(h), wt_tensor_release(a), wt_tensor_release(y), wt_tensor_release(sq);
    return loss;
}

/* Two steps (the second without zeroing: .grad accumulates) of forward,
 * backward and the mean over the ranks of the gradients and the loss;
 * `overlap`: through s (hooks during backward, then finish), else
 * wt_dist_allreduce after backward. out: every reduced value, in order. */
static bool gs_steps(wt_dist *d, wt_dist_grad_sync *s, wt_tensor *const *p, wt_tensor *x, float *out, int64_t nout)
{
    int64_t k = 0;
    for (int i = 0; i < GS_NP; i++) wt_tensor_zero_grad(p[i]);
    for (int step = 0; step < 2; step++) {
        wt_tensor *loss = gs_loss(p, x), *lcopy = NULL, *grads[GS_NP + 1] = {NULL};
        if (!loss || wt_mul_scalar(loss, 1.0, &lcopy) != WT_OK) return false;
        bool ok = true;
        if (s) ok = wt_dist_grad_sync_give(s, GS_NP, lcopy) == WT_OK;
        ok = ok && wt_backward(loss) == WT_OK;
        if (ok && s) ok = wt_dist_grad_sync_finish(s) == WT_OK;
        for (int i = 0; ok && i < GS_NP; i++) ok = wt_tensor_grad(p[i], &grads[i]) == WT_OK && grads[i];
        grads[GS_NP] = lcopy;
        if (ok && !s) ok = wt_dist_allreduce(d, GS_NP + 1, grads, WT_DIST_MEAN) == WT_OK;
        for (int i = 0; ok && i <= GS_NP; i++) {
            int64_t c = wt_tensor_numel(grads[i]);
            ok = k + c <= nout && wt_tensor_read(grads[i], out + k, (size_t)c * sizeof(float)) == WT_OK;
            k += c;
        }
        for (int i = 0; i < GS_NP; i++) wt_tensor_release(grads[i]);
        wt_tensor_release(loss), wt_tensor_release(lcopy);
        if (!ok) return false;
    }
    return k == nout;
}

static void test_grad_sync(wt_dist *d, wt_context *ctx)
{
    int rank = wt_dist_rank(d), size = wt_dist_size(d);
    const int64_t shapes[GS_NP][2] = {{GS_HID, GS_IN}, {GS_HID, 0}, {GS_OUT, GS_HID}, {GS_OUT, 0}};
    wt_tensor *p[GS_NP + 1] = {NULL}, *unused = NULL;
    int64_t per_step = 1;
    for (int i = 0; i < GS_NP; i++) {
        int nd = shapes[i][1] ? 2 : 1;
        p[i] = seeded(ctx, nd, shapes[i], 7 + (uint64_t)i, 0.3);
        CHECK(p[i] && wt_tensor_set_requires_grad(p[i], true) == WT_OK, "grad sync: parameter %d", i);
        per_step += nd == 2 ? shapes[i][0] * shapes[i][1] : shapes[i][0];
    }
    float zero = 0;
    CHECK(wt_tensor_from_data(ctx, WT_F32, 0, NULL, &zero, &p[GS_NP]) == WT_OK, "the loss slot");
    wt_tensor *x = seeded(ctx, 2, (int64_t[]){GS_BATCH, GS_IN}, 100 + (uint64_t)rank, 1.0);
    int64_t nout = 2 * per_step;
    float *want = calloc((size_t)nout, sizeof *want), *got = calloc((size_t)nout, sizeof *got);
    CHECK(gs_steps(d, NULL, p, x, want, nout), "grad sync: the reference (allreduce after backward)");
    wt_dist_grad_sync *s = NULL;
    CHECK(wt_dist_grad_sync_create(d, GS_NP + 1, p, WT_DIST_MEAN, &s) == WT_OK, "grad sync: create");
    wt_dist_reset_stats(d);
    CHECK(gs_steps(d, s, p, x, got, nout), "grad sync: two steps");
    CHECK(!memcmp(want, got, (size_t)nout * sizeof *got), "grad sync: bit for bit the allreduce's results");
    wt_dist_stats st;
    wt_dist_stats_init(&st);
    wt_dist_get_stats(d, &st);
    if (rank == 0)
        printf("grad sync: %llu buckets reduced, %llu of them posted during backward\n",
               (unsigned long long)st.buckets, (unsigned long long)st.buckets_early);
    CHECK(st.buckets == 8 && st.calls == 2, "grad sync: 4 buckets a step: %llu", (unsigned long long)st.buckets);
    /* The last rank fails instead of finishing (after its backward, with
     * buckets posted); every rank stops with its message, and the next
     * steps are right again. */
    wt_tensor *loss = gs_loss(p, x), *lcopy = NULL;
    CHECK(loss && wt_mul_scalar(loss, 1.0, &lcopy) == WT_OK, "failing step: forward");
    wt_dist_grad_sync_give(s, GS_NP, lcopy);
    CHECK(wt_backward(loss) == WT_OK, "failing step: backward");
    wt_status r;
    if (rank == size - 1) {
        r = wt_dist_fail(d, "lost the device");
        CHECK(r == WT_ERR_BACKEND && strstr(wt_last_error(), "lost the device"), "grad sync: fail");
    } else {
        r = wt_dist_grad_sync_finish(s);
        CHECK(r == WT_ERR_BACKEND && strstr(wt_last_error(), "lost the device"), "grad sync: the others hear of it: %s",
              wt_last_error());
    }
    wt_tensor_release(loss), wt_tensor_release(lcopy);
    /* Rank 0 fails before its forward pass: it posted nothing. */
    loss = gs_loss(p, x), lcopy = NULL;
    CHECK(loss && wt_mul_scalar(loss, 1.0, &lcopy) == WT_OK, "failing step 2: forward");
    if (rank == 0) {
        r = wt_dist_fail(d, "no batch");
    } else {
        wt_dist_grad_sync_give(s, GS_NP, lcopy);
        CHECK(wt_backward(loss) == WT_OK, "failing step 2: backward");
        r = wt_dist_grad_sync_finish(s);
    }
    CHECK(r == WT_ERR_BACKEND && strstr(wt_last_error(), "no batch"), "grad sync: rank 0 failed early: %s",
          wt_last_error());
    wt_tensor_release(loss), wt_tensor_release(lcopy);
    memset(got, 0, (size_t)nout * sizeof *got);
    CHECK(gs_steps(d, s, p, x, got, nout) && !memcmp(want, got, (size_t)nout * sizeof *got),
          "grad sync: right again after the failures");
    /* Rank 1 gives the loss twice. */
    loss = gs_loss(p, x), lcopy = NULL;
    CHECK(loss && wt_mul_scalar(loss, 1.0, &lcopy) == WT_OK, "given twice: forward");
    wt_dist_grad_sync_give(s, GS_NP, lcopy);
    if (rank == 1) wt_dist_grad_sync_give(s, GS_NP, lcopy);
    CHECK(wt_backward(loss) == WT_OK, "given twice: backward");
    r = wt_dist_grad_sync_finish(s);
    CHECK(r != WT_OK && strstr(wt_last_error(), "given twice"), "grad sync: given twice: %s", wt_last_error());
    wt_tensor_release(loss), wt_tensor_release(lcopy);
    wt_dist_grad_sync_destroy(s);
    s = NULL;
    /* A parameter that gets no gradient fails the step on every rank. */
    unused = seeded(ctx, 1, (int64_t[]){5}, 3, 1.0);
    wt_tensor_set_requires_grad(unused, true);
    wt_tensor *with_unused[GS_NP + 2] = {p[0], p[1], p[2], p[3], p[4], unused};
    CHECK(wt_dist_grad_sync_create(d, GS_NP + 2, with_unused, WT_DIST_SUM, &s) == WT_OK, "create with an unused one");
    for (int i = 0; i < GS_NP; i++) wt_tensor_zero_grad(p[i]);
    loss = gs_loss(p, x), lcopy = NULL;
    CHECK(loss && wt_mul_scalar(loss, 1.0, &lcopy) == WT_OK, "unused: forward");
    wt_dist_grad_sync_give(s, GS_NP, lcopy);
    CHECK(wt_backward(loss) == WT_OK, "unused: backward");
    r = wt_dist_grad_sync_finish(s);
    CHECK(r != WT_OK && strstr(wt_last_error(), "no gradient"), "grad sync: no gradient: %d %s", (int)r, wt_last_error());
    wt_tensor_release(loss), wt_tensor_release(lcopy);
    wt_dist_grad_sync_destroy(s);
    /* Bad arguments, alike on every rank. */
    s = (wt_dist_grad_sync *)1;
    CHECK(wt_dist_grad_sync_create(NULL, GS_NP, p, WT_DIST_SUM, &s) == WT_ERR_INVALID_ARGUMENT && s == NULL,
          "create: NULL group");
    CHECK(wt_dist_grad_sync_create(d, 0, p, WT_DIST_SUM, &s) == WT_ERR_INVALID_ARGUMENT, "create: n 0");
    CHECK(wt_dist_grad_sync_create(d, GS_NP, NULL, WT_DIST_SUM, &s) == WT_ERR_INVALID_ARGUMENT, "create: NULL list");
    CHECK(wt_dist_grad_sync_create(d, GS_NP, p, (wt_dist_reduce)5, &s) == WT_ERR_INVALID_ARGUMENT, "create: bad op");
    CHECK(wt_dist_grad_sync_create(d, GS_NP, p, WT_DIST_SUM, NULL) == WT_ERR_INVALID_ARGUMENT, "create: NULL out");
    CHECK(wt_dist_grad_sync_create(d, GS_NP, p, WT_DIST_SUM, &s) == WT_OK, "create again");
    CHECK(wt_dist_grad_sync_give(NULL, 0, p[0]) == WT_ERR_INVALID_ARGUMENT &&
              wt_dist_grad_sync_give(s, GS_NP, p[0]) == WT_ERR_INVALID_ARGUMENT &&
              wt_dist_grad_sync_give(s, 0, NULL) == WT_ERR_INVALID_ARGUMENT &&
              wt_dist_grad_sync_finish(NULL) == WT_ERR_INVALID_ARGUMENT,
          "give / finish: NULL and out of range");
    /* A tensor of the wrong shape fails the step. */
    CHECK(wt_dist_grad_sync_give(s, 1, p[0]) == WT_ERR_INVALID_ARGUMENT, "give: wrong shape");
    CHECK(wt_dist_grad_sync_finish(s) == WT_ERR_INVALID_ARGUMENT, "finish after a wrong shape");
    wt_dist_grad_sync_destroy(NULL);
    wt_dist_grad_sync_destroy(s);
    CHECK(wt_dist_barrier(d) == WT_OK, "barrier after the grad sync tests");
    for (int i = 0; i <= GS_NP; i++) wt_tensor_release(p[i]);
    wt_tensor_release(unused), wt_tensor_release(x);
    free(want), free(got);
}

/* reduce_f16: sums of small integers are exact in f16; the mean of other
 * values is within the documented tolerance of the exact one, the same
 * bits on every rank; the overlapped reduction matches allreduce bit for
 * bit in f16 mode too. */
static float value_f16(int r, int64_t j) { return (float)((j * 37 + r * 11) % 101 - 50) * 0.013f + 0.001f * (float)(r + 1); }

static void test_reduce_f16(wt_context *ctx)
{
    wt_dist_options o;
    wt_dist_options_init(&o);
    o.bucket_bytes = 4096;
    o.timeout_seconds = 120;
    o.reduce_f16 = true;
    wt_dist *d = NULL;
    CHECK(wt_dist_init(MPI_COMM_WORLD, &o, &d) == WT_OK, "a group reducing f16");
    if (!d) return;
    int rank = wt_dist_rank(d), size = wt_dist_size(d);
    test_allreduce(d, ctx, WT_DIST_SUM);
    enum { N = 3000 };
    float *v = malloc(N * sizeof *v), *all = malloc((size_t)size * N * sizeof *all);
    for (int64_t j = 0; j < N; j++) v[j] = value_f16(rank, j);
    wt_tensor *t = NULL, *gathered = NULL;
    int64_t n = N;
    CHECK(wt_tensor_from_data(ctx, WT_F32, 1, &n, v, &t) == WT_OK, "f16: tensor");
    CHECK(wt_dist_allreduce(d, 1, &t, WT_DIST_MEAN) == WT_OK, "f16: mean");
    CHECK(wt_dist_allgather(d, t, &gathered) == WT_OK &&
              wt_tensor_read(gathered, all, (size_t)size * N * sizeof *all) == WT_OK,
          "f16: gathered");
    double worst = 0, bound = (size + 1) * 0x1p-11;
    for (int64_t j = 0; j < N; j++) {
        double exact = 0, mag = 0;
        for (int r = 0; r < size; r++) exact += value_f16(r, j), mag += fabs(value_f16(r, j));
        exact /= size, mag /= size;
        double err = fabs(all[j] - exact) / mag;
        if (err > worst) worst = err;
    }
    CHECK(worst <= bound, "f16: mean off by %.3g of the mean magnitude (bound %.3g)", worst, bound);
    int same = 1;
    for (int r = 1; r < size; r++) same = same && !memcmp(all, all + (size_t)r * N, N * sizeof *all);
    CHECK(same, "f16: the same bits on every rank");
    if (rank == 0) printf("reduce_f16: mean of %d ranks within %.3g (bound %.3g)\n", size, worst, bound);
    wt_tensor_release(t), wt_tensor_release(gathered);
    free(v), free(all);
    test_grad_sync(d, ctx);
    wt_dist_destroy(d);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: mpirun -np N dist_collectives cpu|vulkan|gles [timeout]\n");
        return 2;
    }
    bool timeout_mode = argc > 2 && strcmp(argv[2], "timeout") == 0;
    wt_dist_options o;
    wt_dist_options_init(&o);
    o.bucket_bytes = 4096;
    o.timeout_seconds = timeout_mode ? 1 : 120;
    wt_dist *d = NULL;
    if (wt_dist_init(MPI_COMM_WORLD, &o, &d) != WT_OK) {
        fprintf(stderr, "wt_dist_init: %s\n", wt_last_error());
        return 1;
    }
    g_rank = wt_dist_rank(d);
    int size = wt_dist_size(d);
    if (timeout_mode) {
        if (g_rank == 1) {
            struct timespec ts = {4, 0};
            nanosleep(&ts, NULL);
        }
        wt_status st = wt_dist_barrier(d);
        printf("rank %d: barrier: %s: %s\n", g_rank, wt_status_string(st), wt_last_error());
        fflush(stdout);
        wt_dist_destroy(d);
        return st == WT_OK ? 0 : 1;
    }
    if (size < 2) {
        fprintf(stderr, "run under mpirun -np 2 or more\n");
        wt_dist_destroy(d);
        return 1;
    }
    CHECK(g_rank >= 0 && g_rank < size && wt_dist_local_rank(d) >= 0 && wt_dist_local_size(d) >= 1 &&
              wt_dist_local_size(d) <= size,
          "rank %d of %d, local %d of %d", g_rank, size, wt_dist_local_rank(d), wt_dist_local_size(d));
    wt_context *ctx = make_ctx(argv[1]);
    /* A rank without a context still takes part: it reports and fails. */
    if (!ctx) {
        wt_dist_fail(d, "no context");
        wt_dist_destroy(d);
        return 1;
    }
    if (wt_dist_barrier(d) != WT_OK) {
        fprintf(stderr, "rank %d: %s\n", g_rank, wt_last_error());
        wt_context_destroy(ctx);
        wt_dist_destroy(d);
        return 1;
    }
    test_allreduce(d, ctx, WT_DIST_SUM);
    test_allreduce(d, ctx, WT_DIST_MEAN);
    /* Again with buckets packed on the device (on a GPU) and read once. */
    wt_dist *packed = NULL;
    o.pack = WT_DIST_PACK_ALWAYS;
    CHECK(wt_dist_init(MPI_COMM_WORLD, &o, &packed) == WT_OK, "a second group, packing");
    if (packed) {
        test_allreduce(packed, ctx, WT_DIST_SUM);
        test_allreduce(packed, ctx, WT_DIST_MEAN);
        /* Overlapped, buckets read and written back packed. */
        test_grad_sync(packed, ctx);
        wt_dist_destroy(packed);
    }
    o.pack = (wt_dist_pack)9;
    CHECK(wt_dist_init(MPI_COMM_WORLD, &o, &packed) == WT_ERR_INVALID_ARGUMENT && packed == NULL, "a bad pack");
    test_broadcast_allgather(d, ctx);
    test_large_reads(d, ctx);
    test_failures(d, ctx);
    test_grad_sync(d, ctx);
    test_reduce_f16(ctx);
    wt_context_destroy(ctx);
    wt_dist_destroy(d);
    printf("rank %d of %d (%s): %s\n", g_rank, size, argv[1], g_fail ? "FAILED" : "collectives ok");
    return g_fail ? 1 : 0;
}
