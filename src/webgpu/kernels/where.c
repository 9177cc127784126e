/* where and masked_fill (where.wgsl): a select of 32-bit words, with the
 * mask and both values as strided views, or a scalar in place of a (the
 * value of masked_fill, passed in the parameters: no upload). */
#include "webgpu/wg.h"
#include "webgpu/wg_params.h"

#include <stdio.h>
#include <string.h>

#define WHERE_WG 256u

wt_status wg_op_where(wt_context *ctx, const wt_tensor *mask, const wt_tensor *a, const wt_tensor *b,
                      uint32_t a_bits, wt_tensor *out)
{
    if (mask->dtype != WT_BOOL || wt_dtype_storage_size(b->dtype) != 4 || (a && a->dtype != b->dtype) ||
        out->dtype != b->dtype)
        return wt_fail(WT_ERR_UNSUPPORTED, "webgpu where: a bool mask and 4-byte values of one dtype only");
    const wt_tensor *in[3] = {mask, a, b};
    for (int k = 0; k < 3; k++)
        if (in[k] && !wg_fits_u32(in[k]))
            return wt_fail(WT_ERR_UNSUPPORTED, "webgpu where: tensor too large for 32-bit indexing");
    if (!wg_fits_u32(out))
        return wt_fail(WT_ERR_UNSUPPORTED, "webgpu where: tensor too large for 32-bit indexing");
    if (out->numel == 0)
        return WT_OK;
    /* Merge axes over out and the three inputs (a scalar a: stride 0). */
    int ndim = out->ndim;
    int64_t shape[WT_MAX_DIMS], strides[4][WT_MAX_DIMS];
    memset(strides, 0, sizeof strides);
    memcpy(shape, out->shape, sizeof shape);
    wt_contiguous_strides(out->ndim, out->shape, strides[0]);
    for (int k = 0; k < 3; k++)
        if (in[k])
            memcpy(strides[k + 1], in[k]->strides, sizeof strides[0]);
    wt_coalesce(&ndim, shape, 4, strides);
    where_params p;
    memset(&p, 0, sizeof p);
    p.n = (uint32_t)out->numel;
    p.ndim = (uint32_t)ndim;
    p.a_bits = a_bits;
    p.out_offset = (uint32_t)out->offset;
    for (int k = 0; k < 3; k++)
        p.offsets[k] = in[k] ? (uint32_t)in[k]->offset : 0;
    for (int d = 0; d < ndim; d++) {
        p.shape[d] = (uint32_t)shape[d];
        for (int k = 0; k < 3; k++)
            p.strides[k][d] = (uint32_t)strides[k + 1][d];
    }
    char prelude[96];
    snprintf(prelude, sizeof prelude, "const WG: u32 = %uu;\nconst A_SCALAR: bool = %s;\n", WHERE_WG,
             a ? "false" : "true");
    wg_launch l;
    memset(&l, 0, sizeof l);
    l.shader = "where";
    l.prelude = prelude;
    l.params = &p;
    l.params_size = sizeof p;
    l.bindings[0] = (wg_binding){mask->storage, false};
    /* A scalar a still needs a binding: the mask's storage stands in. */
    l.bindings[1] = (wg_binding){a ? a->storage : mask->storage, false};
    l.bindings[2] = (wg_binding){b->storage, false};
    l.bindings[3] = (wg_binding){out->storage, true};
    l.nbindings = 4;
    l.workgroups = ((uint64_t)out->numel + WHERE_WG - 1) / WHERE_WG;
    return wg_dispatch(ctx, &l);
}
