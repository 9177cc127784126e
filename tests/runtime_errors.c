/* Device loss and recovery, and the context's last error.
 *
 *   runtime_errors cpu|vulkan|gles (webgpu in the WebAssembly build)
 */
#include "test_util.h"

#include <stdio.h>
#include <string.h>

static bool add_ok(wt_context *ctx, float base)
{
    float a[4] = {base, base + 1, base + 2, base + 3}, r[4] = {0};
    int64_t n = 4;
    wt_tensor *t = NULL, *u = NULL;
    wt_status s = wt_tensor_from_data(ctx, WT_F32, 1, &n, a, &t);
    if (s == WT_OK) s = wt_add(t, t, &u);
    if (s == WT_OK) s = wt_tensor_read(u, r, sizeof r);
    bool ok = s == WT_OK;
    for (int i = 0; ok && i < 4; i++) ok = r[i] == 2 * a[i];
    wt_tensor_release(t);
    wt_tensor_release(u);
    return ok;
}

int main(int argc, char **argv)
{
    test_run run;
    if (!test_begin(&run, "runtime_errors", argc, argv)) return run.status;
    const test_backend b = run.backend;
    wt_context *ctx = run.ctx;
    wt_status ls = WT_ERR_BACKEND;
    CHECK(strcmp(wt_context_last_message(ctx), "") == 0 && wt_context_last_status(ctx) == WT_OK,
          "no error at first");
    CHECK(strcmp(wt_context_last_message(NULL), "") == 0 && wt_context_last_status(NULL) == WT_OK,
          "NULL context: empty message, WT_OK");
    /* The deprecated getter: the same pair in one call. */
    CHECK(strcmp(wt_context_last_error(ctx, &ls), "") == 0 && ls == WT_OK, "deprecated getter: no error");
    CHECK(strcmp(wt_context_last_error(NULL, NULL), "") == 0, "deprecated getter, NULL context");

    if (b == TEST_BACKEND_CPU) {
        CHECK(wt_context_lose_device(ctx) == WT_ERR_UNSUPPORTED, "CPU: no device to lose");
        CHECK(wt_context_recover(ctx) == WT_OK, "CPU: recover is a no-op");
        CHECK(add_ok(ctx, 1), "CPU works");
        return test_end(&run);
    }

    float h[6] = {1, 2, 3, 4, 5, 6}, r[6];
    int64_t shape[2] = {2, 3};
    wt_tensor *A = NULL, *B = NULL, *C = NULL, *V = NULL;
    CHECK(wt_tensor_from_data(ctx, WT_F32, 2, shape, h, &A) == WT_OK, "A");
    CHECK(wt_exp(A, &B) == WT_OK && wt_context_sync(ctx) == WT_OK, "B = exp(A)");
    CHECK(wt_context_recover(ctx) == WT_OK, "recover of a healthy device does nothing");
    CHECK(add_ok(ctx, 10), "works before the loss");

    /* Lose the device: every call that needs it fails with the reason. */
    CHECK(wt_context_lose_device(ctx) == WT_OK, "lose the device: %s", wt_last_error());
    wt_status s = wt_add(A, A, &C);
    CHECK(s == WT_ERR_DEVICE_LOST && !C, "op after the loss: %s", wt_status_string(s));
    CHECK(strstr(wt_last_error(), "lost") != NULL, "message names the loss: %s", wt_last_error());
    int64_t n = 8;
    s = wt_tensor_zeros(ctx, WT_F32, 1, &n, &C);
    CHECK(s == WT_ERR_DEVICE_LOST && !C, "allocation after the loss: %s", wt_status_string(s));
    CHECK(wt_tensor_read(A, r, sizeof r) == WT_ERR_DEVICE_LOST, "read after the loss");
    CHECK(wt_context_sync(ctx) == WT_ERR_DEVICE_LOST, "sync after the loss");
    const char *msg = wt_context_last_message(ctx);
    CHECK(wt_context_last_status(ctx) == WT_ERR_DEVICE_LOST && strstr(msg, "lost") != NULL,
          "the context keeps the error: %s (%s)", msg, wt_status_string(wt_context_last_status(ctx)));
    CHECK(wt_context_last_error(ctx, &ls) == msg && ls == WT_ERR_DEVICE_LOST,
          "the deprecated getter gives the same message and code");
    CHECK(wt_reshape(A, 1, (int64_t[]){6}, &V) == WT_OK, "views still work");
    wt_tensor_release(V);
    V = NULL;

    /* Recover: a new device on the same adapter. */
    wt_adapter_info before, after;
    CHECK(wt_context_adapter_info(ctx, &before) == WT_OK, "adapter info");
    CHECK(wt_context_recover(ctx) == WT_OK, "recover: %s", wt_last_error());
    CHECK(wt_context_adapter_info(ctx, &after) == WT_OK && strcmp(before.name, after.name) == 0 &&
              before.api == after.api,
          "same adapter");
    CHECK(add_ok(ctx, 20), "new tensors work after the recovery: %s", wt_last_error());
    CHECK(add_ok(ctx, 30), "and again");
    s = wt_add(A, A, &C);
    CHECK(s == WT_ERR_DEVICE_LOST && !C, "tensors from the lost device fail: %s", wt_status_string(s));
    CHECK(strstr(wt_last_error(), "lost") != NULL, "and say why: %s", wt_last_error());
    CHECK(wt_tensor_read(B, r, sizeof r) == WT_ERR_DEVICE_LOST, "reading them fails too");
    wt_context_info ci;
    CHECK(wt_context_get_info(ctx, &ci) == WT_OK && strstr(ci.reason, "recovered") != NULL,
          "info says it recovered: %s", ci.reason);
    wt_tensor_release(A);
    wt_tensor_release(B);
    wt_memory_stats m;
    CHECK(wt_context_memory_stats(ctx, &m) == WT_OK && m.live_bytes == 0 && m.live_tensors == 0,
          "old tensors released: live %llu", (unsigned long long)m.live_bytes);
    CHECK(wt_tensor_from_data(ctx, WT_F32, 2, shape, h, &A) == WT_OK &&
              wt_tensor_read(A, r, sizeof r) == WT_OK && r[5] == 6,
          "made again, they work");
    wt_tensor_release(A);
    /* A second loss and recovery. */
    CHECK(wt_context_lose_device(ctx) == WT_OK && wt_context_recover(ctx) == WT_OK,
          "a second loss and recovery");
    CHECK(add_ok(ctx, 40), "works after the second recovery");
    return test_end(&run);
}
