/* Custom WGSL kernels on the WebGPU backend: the source goes through the
 * pipeline cache like a built-in shader (as the launch's prelude, so the
 * cache compares the whole text), and a dispatch is one more launch in
 * the open batch. */
#include "webgpu/wg_runtime.h"

#include <stdio.h>
#include <string.h>

static void launch_of(const wt_kernel *k, char *shader, size_t cap, wg_launch *l)
{
    snprintf(shader, cap, "%s%s", WG_CUSTOM_PREFIX, k->entry_point);
    memset(l, 0, sizeof *l);
    l->shader = shader;
    l->prelude = k->source;
    l->nbindings = k->num_tensors;
    for (int i = 0; i < k->num_tensors; i++)
        l->bindings[i].writable = (k->writable_mask >> i) & 1;
}

wt_status wg_kernel_compile(wt_context *ctx, const wt_kernel *k)
{
    wg_context *w = wg_ctx(ctx);
    wt_status st = wg_check_device(ctx);
    if (st != WT_OK)
        return st;
    if ((uint32_t)k->num_tensors > w->limits.maxStorageBuffersPerShaderStage)
        return wt_fail(WT_ERR_INVALID_ARGUMENT,
                       "wt_kernel_create: %d storage bindings, the device allows %u per stage",
                       k->num_tensors, w->limits.maxStorageBuffersPerShaderStage);
    char shader[160];
    wg_launch l;
    launch_of(k, shader, sizeof shader, &l);
    const wg_pipeline *pipe = NULL;
    st = wg_pipeline_get(ctx, &l, &pipe);
    if (st != WT_OK)
        wt_error_prefix("wt_kernel_create");
    return st;
}

wt_status wg_kernel_dispatch(wt_context *ctx, const wt_kernel *k, wt_tensor *const *tensors,
                             const void *params, const uint32_t groups[3])
{
    wg_context *w = wg_ctx(ctx);
    for (int d = 0; d < 3; d++)
        if (groups[d] > w->limits.maxComputeWorkgroupsPerDimension)
            return wt_fail(WT_ERR_INVALID_ARGUMENT,
                           "wt_kernel_dispatch: %u workgroups in dimension %c, the device allows "
                           "%u (maxComputeWorkgroupsPerDimension)",
                           groups[d], "xyz"[d], w->limits.maxComputeWorkgroupsPerDimension);
    for (int i = 0; i < k->num_tensors; i++) {
        const wg_buffer *b = tensors[i]->storage->device;
        if (b->size > w->limits.maxStorageBufferBindingSize)
            return wt_fail(WT_ERR_UNSUPPORTED,
                           "wt_kernel_dispatch: tensor %d's storage is %llu bytes, more than one "
                           "binding holds here (maxStorageBufferBindingSize %llu)",
                           i, (unsigned long long)b->size,
                           (unsigned long long)w->limits.maxStorageBufferBindingSize);
    }
    char shader[160];
    wg_launch l;
    launch_of(k, shader, sizeof shader, &l);
    for (int i = 0; i < k->num_tensors; i++)
        l.bindings[i].storage = tensors[i]->storage;
    l.params = params;
    l.params_size = k->params_size;
    l.grid[0] = groups[0];
    l.grid[1] = groups[1];
    l.grid[2] = groups[2];
    l.workgroups = (uint64_t)groups[0] * groups[1] * groups[2];
    return wg_dispatch(ctx, &l);
}
