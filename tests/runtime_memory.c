/* Memory: statistics (live, peak, pooled, buffers, bytes moved each way),
 * trim, out-of-memory past the device's limits and past a per-context
 * memory limit (requested and available bytes in the message, nothing
 * held afterwards, the context still usable), and the leak report of a
 * context destroyed with tensors alive.
 *
 *   runtime_memory cpu|vulkan|gles
 */
#include "test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What the log handler was given. */
static struct {
    int calls;
    wt_log_level level;
    char last[1024];
} g_log;

static void capture_log(wt_log_level level, const char *message, void *user)
{
    (void)user;
    g_log.calls++;
    g_log.level = level;
    snprintf(g_log.last, sizeof g_log.last, "%s", message);
}

/* A context destroyed while tensors live says how many and how large,
 * once, through the log handler; one destroyed empty says nothing. */
static void leak_report(test_backend b)
{
    wt_context_options o;
    test_backend_options(b, &o);
    wt_context *ctx = NULL;
    if (!CHECK(wt_context_create(&o, &ctx) == WT_OK, "leak report: context: %s", wt_last_error())) return;
    wt_set_log_handler(capture_log, NULL);
    memset(&g_log, 0, sizeof g_log);
    wt_tensor *a = NULL, *b2 = NULL, *v = NULL;
    CHECK(wt_tensor_zeros(ctx, WT_F32, 1, (int64_t[]){1000}, &a) == WT_OK &&
              wt_tensor_zeros(ctx, WT_F16, 2, (int64_t[]){10, 30}, &b2) == WT_OK &&
              wt_slice(a, 0, 0, 10, 1, &v) == WT_OK,
          "leak report: tensors made");
    wt_context_destroy(ctx); /* a, b2 and the view v of a still alive */
    CHECK(g_log.calls == 1 && g_log.level == WT_LOG_WARNING, "leak report: one warning (%d calls)", g_log.calls);
    CHECK(strstr(g_log.last, "2 tensors still alive") && strstr(g_log.last, "(4600 bytes"),
          "leak report says how many and how large: \"%s\"", g_log.last);
    wt_tensor_release(v);
    wt_tensor_release(a);
    wt_tensor_release(b2);
    CHECK(g_log.calls == 1, "releasing the leaked tensors afterwards reports nothing more");
    ctx = NULL;
    if (wt_context_create(&o, &ctx) == WT_OK) {
        wt_tensor *t = NULL;
        wt_tensor_zeros(ctx, WT_F32, 1, (int64_t[]){4}, &t);
        wt_tensor_release(t);
        wt_context_destroy(ctx);
    }
    CHECK(g_log.calls == 1, "a context destroyed with nothing alive reports nothing");
    wt_set_log_handler(NULL, NULL);
}

static wt_memory_stats stats(wt_context *ctx)
{
    wt_memory_stats m;
    memset(&m, 0, sizeof m);
    CHECK(wt_context_memory_stats(ctx, &m) == WT_OK, "memory stats");
    return m;
}

static void check_usable(wt_context *ctx, const char *what)
{
    float a[3] = {1, 2, 3}, r[3] = {0};
    int64_t n = 3;
    wt_tensor *t = NULL, *u = NULL;
    wt_status s = wt_tensor_from_data(ctx, WT_F32, 1, &n, a, &t);
    if (s == WT_OK) s = wt_add(t, t, &u);
    if (s == WT_OK) s = wt_tensor_read(u, r, sizeof r);
    CHECK(s == WT_OK && r[0] == 2 && r[1] == 4 && r[2] == 6, "%s: the context still works: %s",
          what, wt_last_error());
    wt_tensor_release(t);
    wt_tensor_release(u);
}

/* A real exhaustion (GPU machines only: "runtime_memory vulkan exhaust"):
 * 8 GiB tensors until the device says no, then everything released and
 * the context still usable. Stops at 192 GiB. */
static void exhaust(wt_context *ctx)
{
    enum { MAX = 24 };
    wt_tensor *t[MAX] = {0};
    int64_t n = (int64_t)1 << 31; /* 8 GiB of f32 */
    wt_status s = WT_OK;
    int k = 0;
    for (; k < MAX && s == WT_OK; k++) {
        s = wt_tensor_zeros(ctx, WT_F32, 1, &n, &t[k]);
        if (s == WT_OK) s = wt_context_sync(ctx);
    }
    printf("exhaust: %d tensors of 8 GiB made, then %s: %s\n", k - 1, wt_status_string(s), wt_last_error());
    CHECK(s == WT_ERR_OUT_OF_MEMORY, "the device runs out: %s", wt_status_string(s));
    CHECK(strstr(wt_last_error(), "requested") && strstr(wt_last_error(), "available"),
          "message with the sizes");
    for (int i = 0; i < MAX; i++) wt_tensor_release(t[i]);
    CHECK(wt_context_trim(ctx) == WT_OK, "trim");
    wt_memory_stats m = stats(ctx);
    CHECK(m.live_bytes == 0 && m.pooled_bytes == 0, "nothing held: live %llu pooled %llu",
          (unsigned long long)m.live_bytes, (unsigned long long)m.pooled_bytes);
    check_usable(ctx, "after exhausting the device");
}

int main(int argc, char **argv)
{
    test_run run;
    if (!test_begin(&run, "runtime_memory", argc, argv)) return run.status;
    const test_backend b = run.backend;
    bool gpu = b != TEST_BACKEND_CPU;
    wt_context *ctx = run.ctx;
    if (gpu && argc > 2 && strcmp(argv[2], "exhaust") == 0) {
        exhaust(ctx);
        return test_end(&run);
    }

    /* Statistics follow uploads, reads, frees and trims. */
    wt_memory_stats m0 = stats(ctx);
    enum { N = 100000 };
    float *h = malloc(N * sizeof(float));
    for (int i = 0; i < N; i++) h[i] = (float)i;
    int64_t n = N;
    wt_tensor *t = NULL, *u = NULL;
    CHECK(wt_tensor_from_data(ctx, WT_F32, 1, &n, h, &t) == WT_OK, "upload");
    CHECK(wt_exp(t, &u) == WT_OK, "exp");
    wt_memory_stats m1 = stats(ctx);
    CHECK(m1.live_bytes == m0.live_bytes + 2 * N * 4, "live %llu", (unsigned long long)m1.live_bytes);
    CHECK(m1.live_tensors == m0.live_tensors + 2, "live storages");
    CHECK(m1.peak_bytes >= m1.live_bytes, "peak >= live");
    CHECK(m1.bytes_to_device == m0.bytes_to_device + N * 4, "bytes to device %llu",
          (unsigned long long)(m1.bytes_to_device - m0.bytes_to_device));
    if (gpu) CHECK(m1.buffers >= m0.buffers + 2, "buffers %llu", (unsigned long long)m1.buffers);
    CHECK(wt_tensor_read(u, h, N * sizeof(float)) == WT_OK, "read");
    wt_memory_stats m2 = stats(ctx);
    CHECK(m2.bytes_from_device == m1.bytes_from_device + N * 4, "bytes from device %llu",
          (unsigned long long)(m2.bytes_from_device - m1.bytes_from_device));
    wt_tensor_release(t);
    wt_tensor_release(u);
    wt_memory_stats m3 = stats(ctx);
    CHECK(m3.live_bytes == m0.live_bytes && m3.live_tensors == m0.live_tensors, "freed");
    if (gpu)
        CHECK(m3.pooled_bytes >= 2 * N * 4, "freed storages are pooled: %llu",
              (unsigned long long)m3.pooled_bytes);
    CHECK(m3.peak_bytes == m1.peak_bytes, "peak kept");
    CHECK(wt_context_trim(ctx) == WT_OK, "trim");
    wt_memory_stats m4 = stats(ctx);
    CHECK(m4.pooled_bytes == 0, "trim empties the pool");
    if (gpu) CHECK(m4.buffers == m0.buffers, "trim frees the buffers (%llu, %llu)",
                   (unsigned long long)m4.buffers, (unsigned long long)m0.buffers);

    /* Past the largest buffer: out of memory with the sizes, nothing held. */
    wt_context_info ci;
    CHECK(wt_context_get_info(ctx, &ci) == WT_OK, "info");
    if (gpu) {
        int64_t big = (int64_t)(ci.max_buffer_size / 4) + 16;
        wt_tensor *x = NULL;
        wt_status s = wt_tensor_zeros(ctx, WT_F32, 1, &big, &x);
        CHECK(s == WT_ERR_OUT_OF_MEMORY && !x, "past maxBufferSize: %s", wt_status_string(s));
        CHECK(strstr(wt_last_error(), "requested") && strstr(wt_last_error(), "available"),
              "the message has the sizes: %s", wt_last_error());
        wt_memory_stats m5 = stats(ctx);
        CHECK(m5.live_bytes == m4.live_bytes && m5.buffers == m4.buffers &&
                  m5.live_tensors == m4.live_tensors,
              "nothing held after the failure");
        check_usable(ctx, "after out of memory");
    } else { /* --- runtime: host memory runs out (2^60 bytes) --- */
        int64_t big = (int64_t)1 << 58;
        wt_tensor *x = NULL;
        wt_status s = wt_tensor_zeros(ctx, WT_F32, 1, &big, &x);
        CHECK(s == WT_ERR_OUT_OF_MEMORY && !x, "past host memory: %s", wt_status_string(s));
        CHECK(strstr(wt_last_error(), "requested 1152921504606846976 bytes") &&
                  strstr(wt_last_error(), "available"),
              "the message has the sizes: %s", wt_last_error());
        CHECK(stats(ctx).live_bytes == m4.live_bytes, "nothing held after the failure");
        check_usable(ctx, "after out of memory");
    }
    wt_context_destroy(ctx);

    /* A memory limit per context. */
    wt_context_options o;
    test_backend_options(b, &o);
    o.memory_limit = 1 << 20;
    ctx = NULL;
    CHECK(wt_context_create(&o, &ctx) == WT_OK, "context with a memory limit: %s", wt_last_error());
    if (ctx) {
        int64_t k = 150000; /* 600 KB */
        wt_tensor *x = NULL, *y = NULL;
        CHECK(wt_tensor_zeros(ctx, WT_F32, 1, &k, &x) == WT_OK, "first 600 KB fits");
        wt_status s = wt_tensor_zeros(ctx, WT_F32, 1, &k, &y);
        CHECK(s == WT_ERR_OUT_OF_MEMORY && !y, "second 600 KB passes the limit: %s", wt_status_string(s));
        CHECK(strstr(wt_last_error(), "requested 600000 bytes") && strstr(wt_last_error(), "available"),
              "message: %s", wt_last_error());
        wt_memory_stats ml = stats(ctx);
        CHECK(ml.memory_limit == (1u << 20) && ml.live_bytes == 600000, "stats under the limit");
        wt_tensor_release(x);
        CHECK(wt_tensor_zeros(ctx, WT_F32, 1, &k, &y) == WT_OK, "fits again once freed: %s",
              wt_last_error());
        wt_tensor_release(y);
        check_usable(ctx, "with a memory limit");
        wt_context_destroy(ctx);
    }
    free(h);
    leak_report(b);
    return test_summary(run.prefix);
}
