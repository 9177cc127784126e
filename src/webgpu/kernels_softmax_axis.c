/* WebGPU softmax / log-softmax along a middle axis (wgsl/softmax_axis.wgsl):
 * x [O, C, I] read in place through its strides, I > 1. A workgroup of 256
 * threads covers TI columns (up to 64, enough for coalesced rows) with the
 * rest of its threads splitting C, so both wide (I large) and tall (C
 * large, I small) shapes keep a workgroup busy. */
#include "webgpu/wg.h"

#include <stdio.h>
#include <string.h>

/* Same layout as softmax_axis.wgsl's Params. */
typedef struct softmax_axis_params {
    uint32_t outer, cols, inner, x_offset;
    uint32_t so, sc, si, col_groups;
    uint32_t neg_inf, pad[3];
} softmax_axis_params;

wt_status wg_op_softmax_axis(wt_context *ctx, wt_rowwise_op op, const wt_tensor *x, wt_tensor *out)
{
    if (op != WT_ROW_SOFTMAX && op != WT_ROW_LOG_SOFTMAX)
        return wt_fail(WT_ERR_UNSUPPORTED, "webgpu softmax_axis: unknown op %d", (int)op);
    if (x->dtype != WT_F32)
        return wt_fail(WT_ERR_UNSUPPORTED, "webgpu softmax_axis: x must be f32");
    const uint64_t O = (uint64_t)x->shape[0], C = (uint64_t)x->shape[1], I = (uint64_t)x->shape[2];
    bool fits = x->offset >= 0 && x->offset <= UINT32_MAX && x->storage->bytes / 4 <= UINT32_MAX &&
                out->storage->bytes / 4 <= UINT32_MAX;
    for (int d = 0; d < 3; d++) fits = fits && x->strides[d] >= 0 && x->strides[d] <= UINT32_MAX;
    if (!fits) return wt_fail(WT_ERR_UNSUPPORTED, "webgpu softmax_axis: x is too large for 32-bit indexing");
    if (O == 0 || C == 0 || I == 0) return WT_OK;

    uint32_t wg = 256;
    while (wg > 32 && (wg > wg_get_caps(ctx)->max_invocations || wg * 8 > wg_get_caps(ctx)->max_workgroup_storage))
        wg /= 2;
    uint32_t ti = 1;
    while (ti < 64 && ti < I && ti < wg) ti *= 2;
    const uint32_t tc = wg / ti;
    softmax_axis_params p;
    memset(&p, 0, sizeof p);
    p.outer = (uint32_t)O, p.cols = (uint32_t)C, p.inner = (uint32_t)I;
    p.x_offset = (uint32_t)x->offset;
    p.so = O == 1 ? 0 : (uint32_t)x->strides[0];
    p.sc = (uint32_t)x->strides[1], p.si = (uint32_t)x->strides[2];
    p.col_groups = (uint32_t)((I + ti - 1) / ti);
    p.neg_inf = 0xff800000u;
    if ((uint64_t)p.col_groups * O > UINT32_MAX)
        return wt_fail(WT_ERR_UNSUPPORTED, "webgpu softmax_axis: too many workgroups");

    char prelude[128];
    snprintf(prelude, sizeof prelude, "const OP: u32 = %uu;\nconst TI: u32 = %uu;\nconst TC: u32 = %uu;\nconst WG: u32 = %uu;\n",
             (unsigned)op, ti, tc, wg);
    wg_launch l;
    memset(&l, 0, sizeof l);
    l.shader = "softmax_axis";
    l.prelude = prelude;
    l.params = &p;
    l.params_size = sizeof p;
    l.bindings[0] = (wg_binding){x->storage, false};
    l.bindings[1] = (wg_binding){out->storage, true};
    l.nbindings = 2;
    l.workgroups = (uint64_t)p.col_groups * O;
    return wg_dispatch(ctx, &l);
}
