/* Run with every Vulkan driver and EGL vendor hidden (see CMakeLists.txt):
 * Dawn then offers only its Null adapter, which accepts work and computes
 * nothing. The WebAssembly build runs it in Node on Dawn's Null backend
 * and with no navigator.gpu at all (tests/web/wasm_prelude.js). The library must refuse it: no adapters listed, a WebGPU
 * context fails with WT_ERR_NO_DEVICE, and AUTO falls back to the CPU. */
#include <stdio.h>
#include <webtensor.h>

static int passed, failed;

static void expect(int ok, const char *what)
{
    if (ok) {
        passed++;
    } else {
        failed++;
        printf("FAIL: %s (last error: %s)\n", what, wt_last_error());
    }
}

int main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    wt_adapter_info infos[8];
    int count = -1;
    wt_status st = wt_list_adapters(NULL, infos, 8, &count);
    expect(st == WT_OK, "wt_list_adapters succeeds with no real adapter");
    expect(count == 0, "no adapter is listed (Dawn's Null adapter is not one)");
    for (int i = 0; i < count && i < 8; i++) printf("  listed: %s\n", infos[i].name);

    wt_context_options opts;
    wt_context_options_init(&opts);
    opts.backend = WT_BACKEND_WEBGPU;
    wt_context *ctx = (wt_context *)&opts; /* must be overwritten with NULL */
    st = wt_context_create(&opts, &ctx);
    expect(st == WT_ERR_NO_DEVICE, "a WebGPU context is refused with WT_ERR_NO_DEVICE");
    expect(ctx == NULL, "the refused context is NULL");
    if (st == WT_OK) wt_context_destroy(ctx);

    opts.backend = WT_BACKEND_AUTO;
    st = wt_context_create(&opts, &ctx);
    expect(st == WT_OK && wt_context_backend(ctx) == WT_BACKEND_CPU, "AUTO falls back to the CPU");
    if (st == WT_OK) {
        /* And the fallback computes. */
        int64_t n = 3;
        float a[3] = {1, 2, 3}, out[3] = {0};
        wt_tensor *t = NULL, *e = NULL;
        st = wt_tensor_from_data(ctx, WT_F32, 1, &n, a, &t);
        if (st == WT_OK) st = wt_add(t, t, &e);
        if (st == WT_OK) st = wt_tensor_read(e, out, sizeof out);
        expect(st == WT_OK && out[0] == 2 && out[1] == 4 && out[2] == 6, "the CPU fallback computes");
        wt_tensor_release(e);
        wt_tensor_release(t);
        wt_context_destroy(ctx);
    }
    printf("no_real_adapter: %d passed, %d failed\n", passed, failed);
    return failed != 0;
}
