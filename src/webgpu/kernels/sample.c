/* WebGPU token sampling (wgsl/sample.wgsl): one workgroup per row of
 * logits, the step read from its i32 tensor by the kernel, so a captured
 * decode step samples anew on every replay. */
#include "webgpu/wg.h"
#include "webgpu/wg_params.h"

#include <string.h>

wt_status wg_sample(wt_context *ctx, const wt_tensor *logits, const wt_tensor *step, float inv_temp, int64_t top_k,
                    float top_p, uint64_t seed, wt_tensor *out)
{
    const int64_t B = logits->shape[0], V = logits->shape[1];
    if (logits->dtype != WT_F32 || out->dtype != WT_I32 ||
        !wt_layout_is_contiguous(logits->ndim, logits->shape, logits->strides))
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "webgpu sample: logits must be contiguous f32, out i32");
    if (B == 0) return WT_OK;
    if (logits->offset + logits->numel >= ((int64_t)1 << 31) || V >= ((int64_t)1 << 31) ||
        wg_needs_windows(ctx, logits))
        return wt_fail(WT_ERR_UNSUPPORTED, "webgpu sample: logits beyond one binding or 32-bit indexing");
    sample_params p = {.rows = (uint32_t)B,
                       .v = (uint32_t)V,
                       .x_offset = (uint32_t)logits->offset,
                       .out_offset = (uint32_t)out->offset,
                       .step_offset = step ? (uint32_t)step->offset : 0,
                       .has_step = step != NULL,
                       .top_k = top_k > 0 && top_k < V ? (uint32_t)top_k : 0,
                       .key0 = (uint32_t)seed,
                       .key1 = (uint32_t)(seed >> 32),
                       .inv_temp = inv_temp,
                       .top_p = top_p};
    wg_launch l;
    memset(&l, 0, sizeof l);
    l.shader = "sample";
    l.libraries[0] = "philox";
    l.params = &p;
    l.params_size = sizeof p;
    l.bindings[0] = (wg_binding){logits->storage, false};
    /* no step: the logits stand in (read-only bindings may share a buffer) */
    l.bindings[1] = (wg_binding){step ? step->storage : logits->storage, false};
    l.bindings[2] = (wg_binding){out->storage, true};
    l.nbindings = 3;
    l.workgroups = (uint64_t)B;
    return wg_dispatch(ctx, &l);
}
