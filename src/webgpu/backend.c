/* The WebGPU backend's ops table (skeleton: reports no device). */
#include "webgpu/wg.h"

static wt_status webgpu_create(wt_context *ctx, const wt_context_options *opts)
{
    (void)ctx;
    (void)opts;
    return wt_fail(WT_ERR_NO_DEVICE, "webgpu: backend not built yet");
}

static void webgpu_destroy(wt_context *ctx) { (void)ctx; }

const wt_backend_ops wt_webgpu_backend = {
    .name = "webgpu",
    .create = webgpu_create,
    .destroy = webgpu_destroy,
};

wt_status wt_webgpu_list_adapters(const wt_context_options *opts, wt_adapter_info *infos,
                                  int capacity, int *count)
{
    (void)opts;
    (void)infos;
    (void)capacity;
    if (count)
        *count = 0;
    return wt_fail(WT_ERR_NO_DEVICE, "webgpu: backend not built yet");
}
