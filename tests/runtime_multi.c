/* Several contexts: tensors moved between any two (CPU <-> GPU, GPU <->
 * GPU on two contexts of one adapter), and two contexts driven from two
 * threads at once (with the library's global state first initialised by
 * both threads together).
 *
 *   runtime_multi move|threads <backend: cpu|vulkan|gles>
 */
#define _POSIX_C_SOURCE 200809L
#include "test_util.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

enum { N = 3001 };

static void move_tests(test_backend gb)
{
    wt_context *cpu = NULL, *g1 = NULL, *g2 = NULL;
    if (test_create_context(TEST_BACKEND_CPU, &cpu) != WT_OK || test_create_context(gb, &g1) != WT_OK ||
        test_create_context(gb, &g2) != WT_OK)
        goto out;
    static float h[N], r[N];
    for (int i = 0; i < N; i++) h[i] = (float)i * 0.25f - 100.0f;
    int64_t n = N, shape2[2] = {3, 1000};
    wt_tensor *a = NULL, *b = NULL, *c = NULL, *d = NULL, *e = NULL, *v = NULL, *x = NULL;
    CHECK(wt_tensor_from_data(cpu, WT_F32, 1, &n, h, &a) == WT_OK, "cpu tensor");
    CHECK(wt_tensor_to(a, g1, &b) == WT_OK && wt_tensor_context(b) == g1, "CPU -> GPU 1: %s", wt_last_error());
    CHECK(wt_tensor_to(b, g2, &c) == WT_OK && wt_tensor_context(c) == g2, "GPU 1 -> GPU 2: %s", wt_last_error());
    CHECK(wt_tensor_to(c, cpu, &d) == WT_OK && wt_tensor_context(d) == cpu, "GPU 2 -> CPU: %s", wt_last_error());
    CHECK(wt_tensor_to(c, g2, &e) == WT_OK && e != c, "same context: a copy");
    const wt_tensor *all[4] = {b, c, d, e};
    for (int k = 0; k < 4; k++)
        if (all[k] && CHECK(wt_tensor_read(all[k], r, sizeof r) == WT_OK, "read %d", k))
            CHECK(memcmp(r, h, sizeof r) == 0, "values survive move %d", k);
    /* A view on one GPU lands contiguous on the other; ops do not mix contexts. */
    wt_tensor *m = NULL;
    CHECK(wt_reshape(b, 1, (int64_t[]){N}, &m) == WT_OK, "reshape");
    wt_tensor_release(m);
    wt_tensor *b2 = NULL;
    CHECK(wt_tensor_from_data(g1, WT_F32, 2, shape2, h, &b2) == WT_OK &&
              wt_transpose(b2, 0, 1, &v) == WT_OK && wt_tensor_to(v, g2, &x) == WT_OK,
          "a transposed view moves: %s", wt_last_error());
    if (x && CHECK(wt_tensor_read(x, r, sizeof(float) * 3000) == WT_OK, "read the moved view")) {
        int bad = 0;
        for (int i = 0; i < 1000; i++)
            for (int j = 0; j < 3; j++) bad += r[i * 3 + j] != h[j * 1000 + i];
        CHECK(bad == 0 && wt_tensor_is_contiguous(x), "view values and layout (%d bad)", bad);
    }
    wt_tensor *mixed = NULL;
    CHECK(wt_add(b, c, &mixed) == WT_ERR_INVALID_ARGUMENT && !mixed, "ops on two contexts refused");
    CHECK(wt_tensor_to(NULL, g1, &mixed) == WT_ERR_INVALID_ARGUMENT, "NULL tensor");
    CHECK(wt_tensor_to(a, NULL, &mixed) == WT_ERR_INVALID_ARGUMENT, "NULL context");
    wt_memory_stats s1, s2;
    CHECK(wt_context_memory_stats(g1, &s1) == WT_OK && wt_context_memory_stats(g2, &s2) == WT_OK &&
              s1.bytes_from_device >= (uint64_t)N * 4 && s2.bytes_to_device >= (uint64_t)N * 4,
          "transfers counted");
    wt_tensor_release(a); wt_tensor_release(b); wt_tensor_release(c); wt_tensor_release(d);
    wt_tensor_release(e); wt_tensor_release(v); wt_tensor_release(x); wt_tensor_release(b2);
out:
    wt_context_destroy(cpu);
    wt_context_destroy(g1);
    wt_context_destroy(g2);
}

/* ------------------------------------------------------------ threads */

typedef struct worker {
    test_backend backend;
    int id;
    pthread_barrier_t *start;
    int failures;
    char why[256];
} worker;

/* More of the library at once from both threads (for ThreadSanitizer):
 * the random-number table (initialised once per process), matmul,
 * layernorm, softmax, a reduction, f16 casts, an event and an async read.
 * Each row of a softmax sums to 1, so the total is the row count. */
static void more_ops(wt_context *ctx, worker *wk, bool ok)
{
    /* Both threads meet here, then cast to f16 first thing: the library's
     * one-time probes on that path (the CPU's F16C flag) run in both at
     * once, with nothing between them that orders one before the other. */
    pthread_barrier_wait(wk->start);
    if (!ok) return;
    const int64_t shape[2] = {24, 40};
    wt_tensor *r = NULL, *rt = NULL, *m = NULL, *ln = NULL, *sm = NULL, *h = NULL, *f = NULL,
              *total = NULL, *ones = NULL, *ones16 = NULL;
    wt_event *ev = NULL;
    float got = 0.0f;
    wt_status s = wt_tensor_full(ctx, WT_F32, 2, shape, 1.0, &ones);
    if (s == WT_OK) s = wt_cast(ones, WT_F16, &ones16);
    wt_tensor_release(ones16);
    wt_tensor_release(ones);
    if (s == WT_OK) s = wt_randn(ctx, WT_F32, 2, shape, 1234 + (uint64_t)wk->id, &r);
    if (s == WT_OK) s = wt_transpose(r, 0, 1, &rt);
    if (s == WT_OK) s = wt_matmul(r, rt, &m);
    if (s == WT_OK) s = wt_layernorm(m, NULL, NULL, 1e-5f, &ln);
    if (s == WT_OK) s = wt_softmax(ln, -1, &sm);
    if (s == WT_OK) s = wt_cast(sm, WT_F16, &h);
    if (s == WT_OK) s = wt_cast(h, WT_F32, &f);
    if (s == WT_OK) s = wt_sum(f, 0, NULL, false, &total);
    if (s == WT_OK) s = wt_tensor_read_async(total, &got, sizeof got, &ev);
    if (s == WT_OK) s = wt_event_wait(ev);
    if (s != WT_OK) {
        wk->failures++;
        snprintf(wk->why, sizeof wk->why, "thread %d, more ops: %s: %s", wk->id,
                 wt_status_string(s), wt_last_error());
    } else if (!(got > 23.9f && got < 24.1f)) {
        wk->failures++;
        snprintf(wk->why, sizeof wk->why, "thread %d: softmax rows sum to %g, not 24", wk->id,
                 (double)got);
    }
    wt_event_destroy(ev);
    wt_tensor_release(total);
    wt_tensor_release(f);
    wt_tensor_release(h);
    wt_tensor_release(sm);
    wt_tensor_release(ln);
    wt_tensor_release(m);
    wt_tensor_release(rt);
    wt_tensor_release(r);
}

static void *work(void *arg)
{
    worker *wk = arg;
    pthread_barrier_wait(wk->start); /* both threads initialise the library at once */
    wt_adapter_info list[8];
    int count = 0;
    if (wk->backend != TEST_BACKEND_CPU && wt_list_adapters(NULL, list, 8, &count) != WT_OK) {
        wk->failures++;
        snprintf(wk->why, sizeof wk->why, "list: %s", wt_last_error());
    }
    wt_context_options o;
    test_backend_options(wk->backend, &o);
    wt_context *ctx = NULL;
    if (wt_context_create(&o, &ctx) != WT_OK) {
        wk->failures++;
        snprintf(wk->why, sizeof wk->why, "create: %s", wt_last_error());
        more_ops(NULL, wk, false); /* the other thread waits for this one there */
        return NULL;
    }
    static __thread float h[N], r[N];
    for (int i = 0; i < N; i++) h[i] = (float)(i % 50) + (float)wk->id * 1000.0f;
    int64_t n = N;
    wt_tensor *x = NULL, *one = NULL;
    int64_t k1 = 1;
    wt_status s = wt_tensor_from_data(ctx, WT_F32, 1, &n, h, &x);
    if (s == WT_OK) s = wt_tensor_full(ctx, WT_F32, 1, &k1, 1.0, &one);
    for (int step = 0; step < 40 && s == WT_OK; step++) {
        wt_tensor *y = NULL;
        s = wt_add(x, one, &y);
        wt_tensor_release(x);
        x = y;
    }
    if (s == WT_OK) s = wt_tensor_read(x, r, sizeof r);
    for (int i = 0; s == WT_OK && i < N; i++)
        if (r[i] != h[i] + 40.0f) {
            wk->failures++;
            snprintf(wk->why, sizeof wk->why, "thread %d: element %d is %g, not %g", wk->id, i, r[i],
                     h[i] + 40.0f);
            break;
        }
    if (s != WT_OK) {
        wk->failures++;
        snprintf(wk->why, sizeof wk->why, "thread %d: %s: %s", wk->id, wt_status_string(s), wt_last_error());
    }
    wt_tensor_release(x);
    wt_tensor_release(one);
    more_ops(ctx, wk, s == WT_OK);
    wt_context_destroy(ctx);
    return NULL;
}

static void thread_tests(test_backend b)
{
    pthread_barrier_t start;
    pthread_barrier_init(&start, NULL, 2);
    worker w[2] = {{b, 0, &start, 0, ""}, {b, 1, &start, 0, ""}};
    pthread_t t[2];
    for (int i = 0; i < 2; i++) pthread_create(&t[i], NULL, work, &w[i]);
    for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
    for (int i = 0; i < 2; i++) CHECK(w[i].failures == 0, "thread %d: %s", i, w[i].why);
    pthread_barrier_destroy(&start);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    test_backend b = test_parse_backend(argc > 2 ? argv[2] : "");
    if (b == TEST_BACKEND_INVALID || (strcmp(mode, "move") && strcmp(mode, "threads"))) {
        fprintf(stderr, "usage: runtime_multi move|threads cpu|vulkan|gles\n");
        return 2;
    }
    if (!strcmp(mode, "move")) move_tests(b);
    else thread_tests(b);
    return test_summary(mode);
}
