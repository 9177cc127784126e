/* Custom WGSL kernels: argument checks and lifetime; the WebGPU backend
 * compiles and records them (src/webgpu/runtime/custom_kernel.c). */
#include "api/api.h"

#include <stdlib.h>
#include <string.h>

#define KERNEL_MAX_TENSORS 8
#define KERNEL_MAX_PARAMS 256

static char *copy_string(const char *s)
{
    size_t n = strlen(s) + 1;
    char *c = malloc(n);
    if (c) memcpy(c, s, n);
    return c;
}

static void kernel_free(wt_kernel *k)
{
    if (!k) return;
    free(k->source);
    free(k->entry_point);
    free(k);
}

wt_status wt_kernel_create(wt_context *ctx, const wt_kernel_desc *desc, wt_kernel **out)
{
    if (!out) return wt_fail(WT_ERR_INVALID_ARGUMENT, "wt_kernel_create: out is NULL");
    *out = NULL;
    if (!ctx || !desc || !desc->source)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "wt_kernel_create: %s is NULL",
                       !ctx ? "ctx" : !desc ? "desc" : "desc->source");
    if (!ctx->ops->kernel_compile)
        return wt_fail(WT_ERR_UNSUPPORTED,
                       "wt_kernel_create: custom WGSL kernels need a WebGPU context (this one "
                       "is %s)", ctx->ops->name);
    if (desc->num_tensors < 0 || desc->num_tensors > KERNEL_MAX_TENSORS)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "wt_kernel_create: num_tensors %d is outside [0, %d]",
                       desc->num_tensors, KERNEL_MAX_TENSORS);
    if (desc->num_tensors < 32 && (desc->writable_mask >> desc->num_tensors) != 0)
        return wt_fail(WT_ERR_INVALID_ARGUMENT,
                       "wt_kernel_create: writable_mask 0x%x names tensors past num_tensors %d",
                       desc->writable_mask, desc->num_tensors);
    if (desc->params_size > KERNEL_MAX_PARAMS)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "wt_kernel_create: params_size %zu is more than %d",
                       desc->params_size, KERNEL_MAX_PARAMS);
    const char *entry = desc->entry_point ? desc->entry_point : "main";
    if (!*entry || strlen(entry) > 128)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "wt_kernel_create: the entry point name is empty or too long");
    wt_kernel *k = calloc(1, sizeof *k);
    if (!k) return wt_fail(WT_ERR_OUT_OF_MEMORY, "wt_kernel_create: out of host memory");
    k->source = copy_string(desc->source);
    k->entry_point = copy_string(entry);
    k->num_tensors = desc->num_tensors;
    k->writable_mask = desc->writable_mask;
    k->params_size = desc->params_size;
    k->ctx = ctx;
    wt_status st = k->source && k->entry_point
                       ? ctx->ops->kernel_compile(ctx, k)
                       : wt_fail(WT_ERR_OUT_OF_MEMORY, "wt_kernel_create: out of host memory");
    if (st != WT_OK) {
        wt_context_record_error(ctx, st);
        kernel_free(k);
        return st;
    }
    wt_context_ref(ctx);
    *out = k;
    return WT_OK;
}

void wt_kernel_destroy(wt_kernel *k)
{
    if (!k) return;
    wt_context *ctx = k->ctx;
    kernel_free(k);
    wt_context_unref(ctx);
}

wt_status wt_kernel_dispatch(wt_kernel *k, int ntensors, wt_tensor *const *tensors,
                             const void *params, size_t params_size, uint32_t groups_x,
                             uint32_t groups_y, uint32_t groups_z)
{
    if (!k) return wt_fail(WT_ERR_INVALID_ARGUMENT, "wt_kernel_dispatch: kernel is NULL");
    if (ntensors != k->num_tensors)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "wt_kernel_dispatch: %d tensors given, the kernel binds %d",
                       ntensors, k->num_tensors);
    if (ntensors > 0 && !tensors)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "wt_kernel_dispatch: tensors is NULL");
    if (params_size != k->params_size || (params_size > 0 && !params))
        return wt_fail(WT_ERR_INVALID_ARGUMENT,
                       "wt_kernel_dispatch: %zu parameter bytes%s given, the kernel takes %zu",
                       params_size, params_size && !params ? " (NULL)" : "", k->params_size);
    if (groups_x == 0 || groups_y == 0 || groups_z == 0)
        return wt_fail(WT_ERR_INVALID_ARGUMENT,
                       "wt_kernel_dispatch: workgroup counts %u x %u x %u: each must be at least 1",
                       groups_x, groups_y, groups_z);
    for (int i = 0; i < ntensors; i++) {
        if (!tensors[i])
            return wt_fail(WT_ERR_INVALID_ARGUMENT, "wt_kernel_dispatch: tensor %d is NULL", i);
        if (wt_ctx_of(tensors[i]) != k->ctx)
            return wt_fail(WT_ERR_INVALID_ARGUMENT,
                           "wt_kernel_dispatch: tensor %d belongs to another context", i);
        for (int j = 0; j < i; j++)
            if (tensors[j]->storage == tensors[i]->storage &&
                ((k->writable_mask >> i) & 1 || (k->writable_mask >> j) & 1))
                return wt_fail(WT_ERR_INVALID_ARGUMENT,
                               "wt_kernel_dispatch: tensors %d and %d share storage and one of "
                               "them is writable (WebGPU forbids aliased writable bindings)",
                               j, i);
    }
    const uint32_t groups[3] = {groups_x, groups_y, groups_z};
    wt_status st = wt_node_run(k->ctx, &(wt_node){.kind = WT_NODE_KERNEL_DISPATCH, .p.kernel = {k, tensors, params, {groups[0], groups[1], groups[2]}}});
    if (st != WT_OK) wt_context_record_error(k->ctx, st);
    return st;
}
