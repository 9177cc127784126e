/* Section 15 of webtensor.h: custom WGSL kernels, and tensors moved between devices. */
#ifndef WEBTENSOR_KERNELS_H
#define WEBTENSOR_KERNELS_H

#include "errors.h"
#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ======== 15. Custom kernels, several devices ============================ */

/* --- custom WGSL kernels ---
 *
 * A compute shader of your own, run on tensors like any op: recorded into
 * the context's batch of work (so it runs after the ops recorded before it
 * and before those after it, without a sync). WebGPU contexts only; on a
 * CPU context create and dispatch return WT_ERR_UNSUPPORTED.
 *
 * The shader's interface:
 *   @group(0) @binding(0) var<uniform> p: P;   the params block (params_size
 *                                              bytes, at most 256; may be
 *                                              left undeclared when 0)
 *   @group(0) @binding(1 + i)                  tensor i of the dispatch:
 *       var<storage, read_write> for i in writable_mask, else
 *       var<storage, read>; e.g. array<f32> for a WT_F32 tensor.
 * Each tensor binds its whole storage: a view's element offset and strides
 * (wt_tensor_offset, wt_tensor_strides) are for the shader to apply, e.g.
 * passed in the params. Outputs are made beforehand (wt_tensor_zeros).
 * A storage may be bound twice only when neither binding is writable.
 *
 * Errors: bad WGSL or an entry point that is missing or not a compute
 * shader gives WT_ERR_SHADER with the compiler's messages (line:column,
 * counted from the first line of source); a workgroup size past the
 * device's limits (maxComputeInvocationsPerWorkgroup, the per-dimension
 * sizes, workgroup storage) gives WT_ERR_SHADER from the compiler at
 * create. At dispatch: tensors from another context, a tensor count other
 * than num_tensors, a params size other than params_size, a workgroup
 * count past maxComputeWorkgroupsPerDimension, or an aliased writable
 * binding give WT_ERR_INVALID_ARGUMENT; a tensor larger than one binding
 * (maxStorageBufferBindingSize) WT_ERR_UNSUPPORTED. None of these reach
 * the device. Compiled pipelines are cached by (source, entry point,
 * bindings): creating the same kernel again costs no compile.
 * Thread safety: a kernel belongs to its context (one thread at a time). */
typedef struct wt_kernel wt_kernel;

typedef struct wt_kernel_desc {
    const char *source;      /* WGSL */
    const char *entry_point; /* NULL: "main" */
    int num_tensors;         /* storage bindings 1..num_tensors (at most 8) */
    uint32_t writable_mask;  /* bit i: tensor i is read_write */
    size_t params_size;      /* bytes of the uniform block; 0: none */
} wt_kernel_desc;

WT_API wt_status wt_kernel_create(wt_context *ctx, const wt_kernel_desc *desc, wt_kernel **out);
/* NULL is ignored. The kernel keeps its context alive until destroyed. */
WT_API void wt_kernel_destroy(wt_kernel *k);
/* Records one dispatch of groups_x * groups_y * groups_z workgroups (each
 * at least 1). params: params_size bytes (NULL when 0). */
WT_API wt_status wt_kernel_dispatch(wt_kernel *k, int ntensors, wt_tensor *const *tensors,
                                    const void *params, size_t params_size, uint32_t groups_x,
                                    uint32_t groups_y, uint32_t groups_z);

/* --- several devices ---
 *
 * One context per adapter (wt_list_adapters, then adapter_index); tensors
 * of different contexts do not mix in ops (WT_ERR_INVALID_ARGUMENT).
 * wt_tensor_to makes a new contiguous tensor on dst with x's elements,
 * whatever the two contexts are (CPU <-> GPU, GPU <-> GPU, the same
 * context: a copy). Between two devices the data goes through host
 * memory (WebGPU has no peer copies): it waits for the work that writes x
 * on its context; dst's work is not waited for. Both contexts must be
 * usable by the calling thread for the duration of the call. */
WT_API wt_status wt_tensor_to(const wt_tensor *x, wt_context *dst, wt_tensor **out);

#ifdef __cplusplus
}
#endif
#endif /* WEBTENSOR_KERNELS_H */
