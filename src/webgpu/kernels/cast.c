/* Cast kernel: conversions between f32, f16, i32 and bool, and same-dtype
 * copies (cast.wgsl), from any strided view into a contiguous output. f16
 * needs no device feature: the shader works on u32 words. */
#include "webgpu/wg.h"
#include "webgpu/wg_params.h"

#include <stdio.h>
#include <string.h>

#define CAST_WG 256u

static bool castable(wt_dtype d) { return d == WT_F32 || d == WT_F16 || d == WT_I32 || d == WT_BOOL; }

/* The shader's IN_KIND / OUT_KIND: the dtype's value. */
_Static_assert(WT_F32 == 0 && WT_F16 == 1 && WT_I32 == 2 && WT_BOOL == 3, "cast.wgsl's kinds");

/* Every index the shader computes is a u32 (for f16, element 2t + 1 of
 * thread t too). Bindings are smaller than 4 GiB, so this only fails for
 * layouts that could not be bound anyway. */
static wt_status check_indexing(const wt_tensor *t)
{
    const int64_t limit = (int64_t)UINT32_MAX - 1;
    if (t->offset < 0 || t->offset > limit || t->numel > limit)
        return wt_fail(WT_ERR_UNSUPPORTED, "webgpu cast: tensor too large for 32-bit indexing");
    for (int d = 0; d < t->ndim; d++)
        if (t->strides[d] < 0 || t->strides[d] > limit || t->shape[d] > limit)
            return wt_fail(WT_ERR_UNSUPPORTED,
                           "webgpu cast: strides or shape beyond 32-bit indexing");
    return WT_OK;
}

wt_status wg_op_cast(wt_context *ctx, const wt_tensor *x, wt_tensor *out)
{
    if (!castable(x->dtype) || !castable(out->dtype))
        return wt_fail(WT_ERR_UNSUPPORTED, "webgpu cast: %s -> %s is not supported",
                       wt_dtype_name(x->dtype), wt_dtype_name(out->dtype));
    wt_status st;
    if ((st = check_indexing(x)) != WT_OK || (st = check_indexing(out)) != WT_OK)
        return st;
    bool out_f16 = out->dtype == WT_F16;
    /* Threads write whole words of an f16 output: its first element must
     * start one (the API's outputs start at 0). */
    if (out_f16 && out->offset % 2 != 0)
        return wt_fail(WT_ERR_UNSUPPORTED, "webgpu cast: an f16 output at odd offset %lld",
                       (long long)out->offset);
    if (out->numel == 0)
        return WT_OK;

    int ndim;
    int64_t shape[WT_MAX_DIMS], strides[2][WT_MAX_DIMS];
    wt_coalesce_pair(out, NULL, x->strides, &ndim, shape, strides);

    cast_params p;
    memset(&p, 0, sizeof p);
    p.n = (uint32_t)out->numel;
    p.ndim = (uint32_t)ndim;
    p.x_offset = (uint32_t)x->offset;
    p.out_offset = (uint32_t)out->offset;
    for (int d = 0; d < ndim; d++) {
        p.shape[d] = (uint32_t)shape[d];
        p.x_strides[d] = (uint32_t)strides[1][d];
    }
    uint64_t threads = out_f16 ? ((uint64_t)out->numel + 1) / 2 : (uint64_t)out->numel;

    char prelude[128];
    snprintf(prelude, sizeof prelude,
             "const IN_KIND: u32 = %uu;\nconst OUT_KIND: u32 = %uu;\nconst WG: u32 = %uu;\n",
             (unsigned)x->dtype, (unsigned)out->dtype, CAST_WG);
    wg_launch l;
    memset(&l, 0, sizeof l);
    l.shader = "cast";
    l.libraries[0] = "f16_bits";
    l.prelude = prelude;
    l.params = &p;
    l.params_size = sizeof p;
    l.bindings[0] = (wg_binding){x->storage, false};
    l.bindings[1] = (wg_binding){out->storage, true};
    l.nbindings = 2;
    l.workgroups = (threads + CAST_WG - 1) / CAST_WG;
    return wg_dispatch(ctx, &l);
}
