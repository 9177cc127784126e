/* Per-op costs that the WebAssembly build adds to the native one, on the
 * same adapter: built natively and to wasm (make wasm), run with the same
 * arguments; bench/RESULTS.md compares the two.
 *
 *   wasm_overhead BACKEND [REPS]     BACKEND: cpu, webgpu (any API), vulkan
 *
 * Prints milliseconds per op for:
 *   round trip  an add of one element, then its 4-byte read: a submit and
 *               a map, waited for (the latency a page sees per await)
 *   tiny add    adds of 256 elements queued back to back, one wait at the
 *               end: the host cost per op (JS glue, bind groups, encoding)
 *   new tensor  a tensor of a size not seen before, made and released: a
 *               device buffer creation with its two error scopes
 */
#include <webtensor.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int fail(const char *what)
{
    printf("%s failed: %s\n", what, wt_last_error());
    return 1;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s cpu|webgpu|vulkan [reps]\n", argv[0]);
        return 2;
    }
    const int reps = argc > 2 ? atoi(argv[2]) : 200;
    wt_context_options opts;
    wt_context_options_init(&opts);
    opts.backend = strcmp(argv[1], "cpu") ? WT_BACKEND_WEBGPU : WT_BACKEND_CPU;
    if (!strcmp(argv[1], "vulkan"))
        opts.gpu_api = WT_GPU_API_VULKAN;
    wt_context *ctx = NULL;
    if (wt_context_create(&opts, &ctx) != WT_OK)
        return fail("wt_context_create");
    wt_adapter_info info;
    if (opts.backend == WT_BACKEND_WEBGPU && wt_context_adapter_info(ctx, &info) == WT_OK)
        printf("adapter: %s\n", info.name);

    const int64_t one = 1, small = 256;
    wt_tensor *a = NULL, *b = NULL, *x = NULL, *y = NULL, *o = NULL;
    if (wt_tensor_full(ctx, WT_F32, 1, &one, 1.0, &a) != WT_OK ||
        wt_tensor_full(ctx, WT_F32, 1, &one, 2.0, &b) != WT_OK ||
        wt_tensor_full(ctx, WT_F32, 1, &small, 1.0, &x) != WT_OK ||
        wt_tensor_full(ctx, WT_F32, 1, &small, 2.0, &y) != WT_OK)
        return fail("creating the inputs");

    /* Warm-up: pipelines compiled, pools filled. */
    float v = 0.0f;
    for (int i = 0; i < 5; i++) {
        if (wt_add(a, b, &o) != WT_OK || wt_tensor_read(o, &v, sizeof v) != WT_OK)
            return fail("warm-up");
        wt_tensor_release(o);
        if (wt_add(x, y, &o) != WT_OK)
            return fail("warm-up");
        wt_tensor_release(o);
    }

    double t0 = now_ms();
    for (int i = 0; i < reps; i++) {
        if (wt_add(a, b, &o) != WT_OK || wt_tensor_read(o, &v, sizeof v) != WT_OK)
            return fail("round trip");
        wt_tensor_release(o);
    }
    const double round_trip = (now_ms() - t0) / reps;
    if (v != 3.0f)
        return fail("round trip value");

    t0 = now_ms();
    for (int i = 0; i < reps; i++) {
        if (wt_add(x, y, &o) != WT_OK)
            return fail("tiny add");
        wt_tensor_release(o);
    }
    if (wt_context_sync(ctx) != WT_OK)
        return fail("sync");
    const double tiny_add = (now_ms() - t0) / reps;

    const int creations = reps < 50 ? reps : 50;
    t0 = now_ms();
    for (int i = 0; i < creations; i++) {
        /* Sizes far apart, so the pool never has one. */
        const int64_t n = (int64_t)(1024 + 4096 * (i + 1));
        wt_tensor *t = NULL;
        if (wt_tensor_zeros(ctx, WT_F32, 1, &n, &t) != WT_OK)
            return fail("new tensor");
        wt_tensor_release(t);
        if (wt_context_trim(ctx) != WT_OK)
            return fail("trim");
    }
    const double new_tensor = (now_ms() - t0) / creations;

    printf("%-10s round trip %.3f ms, tiny add %.4f ms, new tensor %.3f ms (%d reps)\n", argv[1],
           round_trip, tiny_add, new_tensor, reps);
    /* For the wasm test driver (tests/web/run_suites.mjs), which runs it
     * in a browser page too: the three measurements completed. */
    printf("wasm_overhead %s: 3 passed, 0 failed\n", argv[1]);
    wt_tensor_release(a);
    wt_tensor_release(b);
    wt_tensor_release(x);
    wt_tensor_release(y);
    wt_context_destroy(ctx);
    return 0;
}
