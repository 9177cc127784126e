/* Native f16 elementwise kernels: the memory-bound ops read and write
 * halves directly instead of casting every operand to f32 and back (a
 * third of the traffic, and no temporaries). The math is the f32 kernels'
 * (the generated apply and ew_float), the conversions cast's (f16_bits,
 * or the GPU's own where f16_probe found them exact), so both paths give
 * the same bits.
 *  - ew_f16_x8: contiguous operands starting at 16-byte boundaries, read
 *    and written as vec4<u32> (8 halves), several units a thread: the
 *    fewest, widest memory transactions, as the f32 kernels' vec4 walk;
 *  - ew_f16_strided: everything else (broadcasts, transposed and sliced
 *    views, a scalar b), one word of out a thread, each half's source
 *    decoded from the merged strides. */
#include "webgpu/wg.h"
#include "webgpu/wg_params.h"

#include <stdio.h>
#include <string.h>

#define F16_WG 256u
#define F16_X8_VPT 1u      /* vec4 units a thread (WT_F16_VPT: 1-8, for sweeps; 1, 2 and 4 within 2 % on the H200) */
#define F16_STRIDED_VPT 2u /* words a thread */

/* Out and its (expanded) inputs with their axes merged; a NULL b (a scalar
 * or a unary op) keeps zero strides. */
typedef struct f16_layout {
    int ndim;
    int64_t shape[WT_MAX_DIMS];
    int64_t strides[3][WT_MAX_DIMS]; /* out, a, b */
} f16_layout;

/* The last element operand k reaches from offset, or -1 when some element
 * lies below 0 (negative strides). */
static int64_t last_element(const f16_layout *l, int k, int64_t offset)
{
    int64_t lo = offset, hi = offset;
    for (int d = 0; d < l->ndim; d++) {
        int64_t span = (l->shape[d] - 1) * l->strides[k][d];
        if (span > 0) hi += span;
        else lo += span;
    }
    return lo < 0 ? -1 : hi;
}

wt_status wg_ew_f16(wt_context *ctx, const wt_ew_args *args)
{
    wt_tensor *out = args->out;
    const wt_tensor *a = args->in[0], *b = args->nin == 2 ? args->in[1] : NULL;
    const char *name = wt_op_table[args->op].name;
    if (a->dtype != WT_F16 || (b && b->dtype != WT_F16) || out->dtype != WT_F16 || out->offset % 2 != 0)
        return wt_fail(WT_ERR_UNSUPPORTED, "webgpu %s: f16 lanes need f16 operands and an f16 output", name);
    if (out->numel == 0)
        return WT_OK;
    f16_layout l;
    memset(&l, 0, sizeof l);
    l.ndim = out->ndim;
    memcpy(l.shape, out->shape, sizeof l.shape);
    wt_contiguous_strides(out->ndim, out->shape, l.strides[0]);
    memcpy(l.strides[1], a->strides, sizeof l.strides[1]);
    if (b) memcpy(l.strides[2], b->strides, sizeof l.strides[2]);
    wt_coalesce(&l.ndim, l.shape, 3, l.strides);
    /* Every index the kernels compute is a u32. */
    int64_t a_last = last_element(&l, 1, a->offset), b_last = b ? last_element(&l, 2, b->offset) : 0;
    if (out->numel + out->offset >= (int64_t)UINT32_MAX - 8 || a_last < 0 || a_last >= (int64_t)UINT32_MAX - 8 ||
        b_last < 0 || b_last >= (int64_t)UINT32_MAX - 8)
        return wt_fail(WT_ERR_UNSUPPORTED, "webgpu %s: f16 operands beyond 32-bit indexing", name);

    bool linear = l.ndim == 1 && l.strides[1][0] == 1 && (!b || l.strides[2][0] == 1);
    bool x8 = linear && out->offset % 8 == 0 && a->offset % 8 == 0 && (!b || b->offset % 8 == 0);
    f16_params p;
    memset(&p, 0, sizeof p);
    p.n = (uint32_t)out->numel;
    p.ndim = (uint32_t)l.ndim;
    p.p0 = args->params[0];
    p.p1 = args->params[1];
    uint32_t vpt;
    if (x8) {
        p.units = (uint32_t)((out->numel + 7) / 8);
        p.a_offset = (uint32_t)(a->offset / 8);
        p.b_offset = b ? (uint32_t)(b->offset / 8) : 0;
        p.out_offset = (uint32_t)(out->offset / 8);
        uint64_t v = wt_knob_number(WT_KNOB_F16_VPT, F16_X8_VPT);
        vpt = v <= 8 ? (uint32_t)v : F16_X8_VPT;
    } else {
        p.units = (uint32_t)((out->numel + 1) / 2);
        p.a_offset = (uint32_t)a->offset;
        p.b_offset = b ? (uint32_t)b->offset : 0;
        p.out_offset = (uint32_t)(out->offset / 2);
        for (int d = 0; d < l.ndim; d++) {
            p.shape[d] = (uint32_t)l.shape[d];
            p.a_strides[d] = (uint32_t)l.strides[1][d]; /* negative strides wrap, and so do the sums */
            p.b_strides[d] = (uint32_t)l.strides[2][d];
        }
        vpt = F16_STRIDED_VPT;
    }

    /* apply2(u, v): the row's apply on u (and v, or the scalar p1). */
    const char *call = args->nin == 1 ? "apply(u)" : b ? "apply(u, v)" : "apply(u, T(bitcast<f32>(p.p1)))";
    char prelude[1024];
    int used = snprintf(prelude, sizeof prelude,
                        "const WG: u32 = %uu;\nconst VPT: u32 = %uu;\nconst B_READ: bool = %s;\n"
                        "alias U = vec%d<u32>;\nalias B = vec%d<bool>;\nalias W = %s;\n",
                        F16_WG, vpt, b ? "true" : "false", x8 ? 4 : 2, x8 ? 4 : 2, x8 ? "vec4<u32>" : "u32");
    int more = used < 0 ? -1
                        : wg_ew_prelude(prelude + used, sizeof prelude - (size_t)used, (int)args->op, WT_F32,
                                        WT_F32, x8 ? 4 : 2);
    if (more < 0 || snprintf(prelude + used + more, sizeof prelude - (size_t)(used + more),
                             "fn apply2(u: T, v: T) -> TO { return %s; }\n", call) < 0)
        return wt_fail(WT_ERR_BACKEND, "webgpu %s: prelude too long", name);

    wg_launch launch;
    memset(&launch, 0, sizeof launch);
    launch.shader = x8 ? "ew_f16_x8" : "ew_f16_strided";
    launch.libraries[0] = wg_f16_library(ctx);
    launch.libraries[1] = "ew_float";
    launch.libraries[2] = "ew_f16_io";
    launch.libraries[3] = x8 ? NULL : "ew_strided_index";
    launch.prelude = prelude;
    launch.params = &p;
    launch.params_size = sizeof p;
    launch.bindings[0] = (wg_binding){a->storage, false};
    /* No b tensor: a's storage stands in (never read). */
    launch.bindings[1] = (wg_binding){b ? b->storage : a->storage, false};
    launch.bindings[2] = (wg_binding){out->storage, true};
    launch.nbindings = 3;
    launch.workgroups = ((uint64_t)p.units + F16_WG * vpt - 1) / (F16_WG * vpt);
    return wg_dispatch(ctx, &launch);
}
