/* host_memory <cpu|vulkan|gles>: tensors sharing host memory with the
 * caller (wt_tensor_host_data, wt_tensor_from_host_memory), the base of
 * zero-copy DLPack exchange.
 *
 * CPU: lent memory is read and written in place by ops and views, with
 * strides and for every dtype it takes; the release callback runs once,
 * when the last view goes, and never on failure; host_data of a view
 * points at its first element and sees later results; the memory is not
 * counted in live_bytes. WebGPU: both refuse with WT_ERR_UNSUPPORTED. */
#include "test_util.h"

#include <stdio.h>
#include <string.h>

static int g_released;
static void *g_released_data;

static void count_release(void *user_data)
{
    g_released++;
    g_released_data = user_data;
}

static void cpu_checks(wt_context *ctx)
{
    float buf[12];
    for (int i = 0; i < 12; i++) buf[i] = (float)i;
    const int64_t shape[2] = {3, 4};
    wt_memory_stats before, during;
    wt_context_memory_stats(ctx, &before);

    /* Contiguous: an op reads the caller's values. */
    wt_tensor *a = NULL, *s = NULL, *v = NULL, *w = NULL;
    g_released = 0;
    CHECK(wt_tensor_from_host_memory(ctx, WT_F32, 2, shape, NULL, buf, count_release, buf, &a) == WT_OK,
          "wrap: %s", wt_last_error());
    int axis = 1;
    float sums[3] = {0};
    CHECK(wt_sum(a, 1, &axis, false, &s) == WT_OK && wt_tensor_read(s, sums, sizeof sums) == WT_OK,
          "sum: %s", wt_last_error());
    CHECK(sums[0] == 6 && sums[1] == 22 && sums[2] == 38, "row sums %g %g %g", sums[0], sums[1], sums[2]);
    /* The caller's later writes are what the next op sees (no copy was made). */
    buf[0] = 100;
    wt_tensor_release(s);
    s = NULL;
    CHECK(wt_sum(a, 1, &axis, false, &s) == WT_OK && wt_tensor_read(s, sums, sizeof sums) == WT_OK &&
              sums[0] == 106,
          "after a host write: %g", sums[0]);
    wt_context_memory_stats(ctx, &during);
    CHECK(during.live_tensors == before.live_tensors + 2, "live_tensors %llu, before %llu",
          (unsigned long long)during.live_tensors, (unsigned long long)before.live_tensors);
    CHECK(during.live_bytes == before.live_bytes + sizeof(float) * 3, "live_bytes counts lent memory: %llu",
          (unsigned long long)(during.live_bytes - before.live_bytes));

    /* A view of it keeps it lent; in-place writes reach the caller's memory. */
    CHECK(wt_slice(a, 1, 1, 4, 2, &v) == WT_OK, "slice: %s", wt_last_error());
    void *p = NULL;
    CHECK(wt_tensor_host_data(v, &p) == WT_OK && p == &buf[1], "host_data of a view: %p, want %p", p,
          (void *)&buf[1]);
    CHECK(wt_tensor_full(ctx, WT_F32, 2, (const int64_t[2]){3, 2}, -5.0, &w) == WT_OK &&
              wt_copy_into(v, w) == WT_OK,
          "copy_into: %s", wt_last_error());
    CHECK(buf[1] == -5 && buf[3] == -5 && buf[9] == -5 && buf[11] == -5 && buf[2] == 2 && buf[10] == 10,
          "copy_into through the view: %g %g %g", buf[1], buf[2], buf[3]);
    wt_tensor_release(a);
    CHECK(g_released == 0, "released while a view lives");
    wt_tensor_release(v);
    CHECK(g_released == 1 && g_released_data == buf, "release called %d times", g_released);
    wt_tensor_release(s);
    wt_tensor_release(w);

    /* Strides: a column-major [3, 4] over the same 12 values, i32 and f16. */
    int32_t ib[12];
    for (int i = 0; i < 12; i++) ib[i] = i * 10;
    const int64_t cm[2] = {1, 3};
    wt_tensor *c = NULL;
    int32_t got[12];
    CHECK(wt_tensor_from_host_memory(ctx, WT_I32, 2, shape, cm, ib, NULL, NULL, &c) == WT_OK &&
              wt_tensor_read(c, got, sizeof got) == WT_OK,
          "strided i32: %s", wt_last_error());
    bool ok = true;
    for (int r = 0; r < 3; r++)
        for (int k = 0; k < 4; k++) ok = ok && got[r * 4 + k] == ib[r + 3 * k];
    CHECK(ok, "strided i32 read the wrong elements");
    wt_tensor_release(c);
    uint16_t hb[4] = {0x3c00, 0x4000, 0x4200, 0x4400}; /* 1 2 3 4 */
    wt_tensor *h = NULL, *hf = NULL;
    float hv[4] = {0};
    CHECK(wt_tensor_from_host_memory(ctx, WT_F16, 1, (const int64_t[1]){4}, NULL, hb, NULL, NULL, &h) == WT_OK &&
              wt_cast(h, WT_F32, &hf) == WT_OK && wt_tensor_read(hf, hv, sizeof hv) == WT_OK,
          "f16: %s", wt_last_error());
    CHECK(hv[0] == 1 && hv[3] == 4, "f16 values %g %g", hv[0], hv[3]);
    wt_tensor_release(h);
    wt_tensor_release(hf);

    /* host_data of an op's result holds the result. */
    wt_tensor *x = NULL;
    CHECK(wt_tensor_arange(ctx, WT_F32, 0, 6, 1, &x) == WT_OK && wt_tensor_host_data(x, &p) == WT_OK &&
              ((float *)p)[5] == 5,
          "host_data of arange: %s", wt_last_error());
    wt_tensor_release(x);

    /* Refusals: none of them calls release. */
    g_released = 0;
    wt_tensor *bad = (wt_tensor *)(uintptr_t)0x10;
    CHECK(wt_tensor_from_host_memory(ctx, WT_BOOL, 2, shape, NULL, buf, count_release, NULL, &bad) ==
              WT_ERR_UNSUPPORTED && bad == NULL,
          "bool must be refused");
    bad = (wt_tensor *)(uintptr_t)0x10;
    CHECK(wt_tensor_from_host_memory(ctx, WT_F32, 2, shape, (const int64_t[2]){-4, 1}, buf, count_release,
                                     NULL, &bad) == WT_ERR_INVALID_ARGUMENT && bad == NULL,
          "negative strides must be refused");
    CHECK(wt_tensor_from_host_memory(ctx, WT_F32, 1, (const int64_t[1]){2}, NULL, (char *)buf + 2,
                                     count_release, NULL, &bad) == WT_ERR_INVALID_ARGUMENT,
          "misaligned data must be refused");
    CHECK(wt_tensor_from_host_memory(ctx, WT_F32, 2, (const int64_t[2]){2, 3},
                                     (const int64_t[2]){INT64_MAX / 2, 1}, buf, count_release, NULL,
                                     &bad) == WT_ERR_INVALID_ARGUMENT,
          "a span past the address space must be refused");
    CHECK(wt_tensor_from_host_memory(ctx, WT_F32, 1, (const int64_t[1]){0}, NULL, NULL, count_release,
                                     NULL, &bad) == WT_OK,
          "an empty tensor needs no data: %s", wt_last_error());
    wt_tensor_release(bad);
    CHECK(g_released == 1, "release calls after the refusals and an empty tensor: %d", g_released);
    wt_tensor *bt = NULL;
    CHECK(wt_tensor_full(ctx, WT_BOOL, 1, (const int64_t[1]){3}, 1.0, &bt) == WT_OK &&
              wt_tensor_host_data(bt, &p) == WT_ERR_UNSUPPORTED && p == NULL,
          "host_data of bool must be refused");
    wt_tensor_release(bt);
}

static void webgpu_checks(wt_context *ctx)
{
    float buf[4] = {1, 2, 3, 4};
    wt_tensor *t = (wt_tensor *)(uintptr_t)0x10, *x = NULL;
    g_released = 0;
    CHECK(wt_tensor_from_host_memory(ctx, WT_F32, 1, (const int64_t[1]){4}, NULL, buf, count_release, NULL,
                                     &t) == WT_ERR_UNSUPPORTED && t == NULL && g_released == 0,
          "WebGPU must refuse lent host memory");
    void *p = (void *)buf;
    CHECK(wt_tensor_from_data(ctx, WT_F32, 1, (const int64_t[1]){4}, buf, &x) == WT_OK &&
              wt_tensor_host_data(x, &p) == WT_ERR_UNSUPPORTED && p == NULL,
          "WebGPU has no host pointer: %s", wt_last_error());
    wt_tensor_release(x);
}

int main(int argc, char **argv)
{
    test_run run;
    if (!test_begin(&run, "host_memory", argc, argv)) return run.status;
    if (wt_context_backend(run.ctx) == WT_BACKEND_CPU)
        cpu_checks(run.ctx);
    else
        webgpu_checks(run.ctx);
    test_check_nothing_alive(run.ctx);
    return test_end(&run);
}
