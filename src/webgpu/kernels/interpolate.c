/* WebGPU resampling (wgsl/interpolate.wgsl), forward and backward, cut
 * into pieces of whole planes when a tensor is past one binding. */
#include "webgpu/wg_params.h"
#include "webgpu/wg.h"

#include <stdio.h>
#include <string.h>

#define INTERP_WG 256u

/* Same layout as interpolate.wgsl's Params. */
typedef struct interp_arg {
    const wt_interp2d *p;
    bool backward;
} interp_arg;

/* One piece: src and out within one binding each, out contiguous at 0. */
static wt_status piece_interpolate(wt_context *ctx, const wt_tensor *const *in, wt_tensor *out,
                                   const int64_t *start, const void *arg)
{
    (void)start;
    const interp_arg *a = arg;
    const wt_tensor *src = in[0];
    if (src->dtype != WT_F32 || out->dtype != WT_F32)
        return wt_fail(WT_ERR_UNSUPPORTED, "webgpu interpolate: f32 only");
    bool fits = src->offset >= 0 && src->offset < (1ll << 31) && src->storage->bytes / 4 < (1ull << 31) &&
                out->numel < (1ll << 31) && out->offset == 0;
    for (int d = 0; d < 4; d++)
        fits = fits && src->shape[d] < (1ll << 31) && src->strides[d] >= 0 && src->strides[d] < (1ll << 31);
    if (!fits || wg_needs_windows(ctx, src) || wg_needs_windows(ctx, out))
        return wt_fail(WT_ERR_UNSUPPORTED, "webgpu interpolate: a piece beyond 32-bit indexing");
    /* The forward pass's extents: (H, W) of its input, (OH, OW) of its output. */
    const wt_tensor *fin = a->backward ? out : src, *fout = a->backward ? src : out;
    interp_params p = {
        .total = (uint32_t)out->numel, .c = (uint32_t)src->shape[1],
        .in_h = (uint32_t)fin->shape[2], .in_w = (uint32_t)fin->shape[3],
        .out_h = (uint32_t)fout->shape[2], .out_w = (uint32_t)fout->shape[3],
        .scale_h = a->p->scale_h, .scale_w = a->p->scale_w, .src_offset = (uint32_t)src->offset,
    };
    for (int d = 0; d < 4; d++) p.src_strides[d] = (uint32_t)src->strides[d];
    char prelude[160];
    snprintf(prelude, sizeof prelude,
             "const WG: u32 = %uu;\nconst LINEAR: bool = %s;\nconst ALIGN: bool = %s;\nconst BACKWARD: bool = %s;\n",
             INTERP_WG, a->p->linear ? "true" : "false", a->p->align_corners ? "true" : "false",
             a->backward ? "true" : "false");
    wg_launch l;
    memset(&l, 0, sizeof l);
    l.shader = "interpolate";
    l.prelude = prelude;
    l.params = &p;
    l.params_size = sizeof p;
    l.bindings[0] = (wg_binding){src->storage, false};
    l.bindings[1] = (wg_binding){out->storage, true};
    l.nbindings = 2;
    l.workgroups = ((uint64_t)out->numel + INTERP_WG - 1) / INTERP_WG;
    return wg_dispatch(ctx, &l);
}

wt_status wg_win_interpolate(wt_context *ctx, const wt_interp2d *p, bool backward, const wt_tensor *src,
                             wt_tensor *out)
{
    /* Pieces along N and C: src follows out there, planes stay whole. */
    interp_arg a = {p, backward};
    wg_window_plan plan = {
        .nin = 1, .follow = {3u}, .keep = 12u, .out_layout = WG_OUT_AT_ZERO,
        .fn = piece_interpolate, .arg = &a,
    };
    return wg_windowed_plan(ctx, out, &src, &plan);
}
