/* WebGPU im2col and col2im (wgsl/im2col.wgsl, wgsl/col2im.wgsl): the data
 * movement around the convolutions' matrix products, which run on the
 * backend's matmul (api/conv.c cuts the work in chunks). A direct
 * convolution kernel would replace this pair behind the same front-end.
 * And 2-D pooling (wgsl/pool2d.wgsl), which shares their window. */
#include "webgpu/wg.h"

#include <stdio.h>
#include <string.h>

#define CONV_WG 256u

/* Same layout as im2col.wgsl's Params. */
typedef struct im2col_params {
    uint32_t total, ncols, ow, rows;
    uint32_t kh, kw, row0, x_offset;
    int32_t h, w, stride_h, stride_w;
    int32_t pad_top, pad_left, dil_h, dil_w;
    uint32_t xs_n, xs_c, xs_h, xs_w;
} im2col_params;

/* Same layout as col2im.wgsl's Params. */
typedef struct col2im_params {
    uint32_t total, c, h, w;
    uint32_t kh, kw, oh, ow;
    int32_t stride_h, stride_w, pad_top, pad_left;
    int32_t dil_h, dil_w;
    uint32_t ncols, out_offset;
    uint32_t os_n, os_c, os_h, os_w;
    uint32_t bias_offset, bias_stride, pad0, pad1;
} col2im_params;

static bool fits_u32(const wt_tensor *t)
{
    if (t->storage->bytes / 4 >= (1ull << 31) || t->offset < 0 || t->offset >= (1ll << 31)) return false;
    for (int i = 0; i < t->ndim; i++)
        if (t->shape[i] >= (1ll << 31) || t->strides[i] < 0 || t->strides[i] >= (1ll << 31)) return false;
    return true;
}

static bool window_fits_i32(const wt_window2d *w)
{
    const int64_t v[] = {w->in_h, w->in_w, w->out_h, w->out_w, w->kernel_h, w->kernel_w,
                         w->stride_h, w->stride_w, w->pad_top, w->pad_left, w->pad_bottom,
                         w->pad_right, w->dilation_h, w->dilation_w,
                         /* the farthest tap and the farthest window start */
                         w->dilation_h * w->kernel_h + w->in_h + w->pad_top,
                         w->dilation_w * w->kernel_w + w->in_w + w->pad_left,
                         w->stride_h * w->out_h + w->in_h, w->stride_w * w->out_w + w->in_w};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        if (v[i] < 0 || v[i] >= (1ll << 30)) return false;
    return true;
}

static wt_status check(const char *what, const wt_tensor *t)
{
    if (t && t->dtype != WT_F32)
        return wt_fail(WT_ERR_UNSUPPORTED, "webgpu %s: f32 only", what);
    if (t && !fits_u32(t))
        return wt_fail(WT_ERR_UNSUPPORTED, "webgpu %s: tensor beyond 32-bit indexing", what);
    return WT_OK;
}

static wt_status launch(wt_context *ctx, const char *shader, const char *extra, const void *params,
                        size_t size, const wg_binding *bindings, int n, uint64_t threads)
{
    char prelude[512];
    snprintf(prelude, sizeof prelude, "const WG: u32 = %uu;\n%s", CONV_WG, extra);
    wg_launch l;
    memset(&l, 0, sizeof l);
    l.shader = shader;
    l.prelude = prelude;
    l.params = params;
    l.params_size = size;
    memcpy(l.bindings, bindings, sizeof(wg_binding) * (size_t)n);
    l.nbindings = n;
    l.workgroups = (threads + CONV_WG - 1) / CONV_WG;
    return wg_dispatch(ctx, &l);
}

wt_status wg_op_im2col(wt_context *ctx, const wt_tensor *x, const wt_window2d *win, int64_t row0,
                       int64_t rows, wt_tensor *col)
{
    wt_status st = check("im2col", x);
    if (st != WT_OK || (st = check("im2col", col)) != WT_OK) return st;
    if (!window_fits_i32(win) || col->numel >= (1ll << 32) || row0 + rows > win->out_h)
        return wt_fail(WT_ERR_UNSUPPORTED, "webgpu im2col: sizes beyond 32-bit indexing");
    const int64_t ncols = x->shape[0] * rows * win->out_w;
    if (col->numel == 0) return WT_OK;
    im2col_params p = {
        .total = (uint32_t)col->numel, .ncols = (uint32_t)ncols, .ow = (uint32_t)win->out_w,
        .rows = (uint32_t)rows, .kh = (uint32_t)win->kernel_h, .kw = (uint32_t)win->kernel_w,
        .row0 = (uint32_t)row0, .x_offset = (uint32_t)x->offset,
        .h = (int32_t)x->shape[2], .w = (int32_t)x->shape[3],
        .stride_h = (int32_t)win->stride_h, .stride_w = (int32_t)win->stride_w,
        .pad_top = (int32_t)win->pad_top, .pad_left = (int32_t)win->pad_left,
        .dil_h = (int32_t)win->dilation_h, .dil_w = (int32_t)win->dilation_w,
        .xs_n = (uint32_t)x->strides[0], .xs_c = (uint32_t)x->strides[1],
        .xs_h = (uint32_t)x->strides[2], .xs_w = (uint32_t)x->strides[3],
    };
    wg_binding b[2] = {{x->storage, false}, {col->storage, true}};
    if (col->offset != 0) return wt_fail(WT_ERR_INVALID_ARGUMENT, "webgpu im2col: col must start its storage");
    return launch(ctx, "im2col", "", &p, sizeof p, b, 2, (uint64_t)col->numel);
}

wt_status wg_op_col2im(wt_context *ctx, const wt_tensor *col, const wt_tensor *bias,
                       const wt_window2d *win, wt_tensor *out)
{
    wt_status st = check("col2im", col);
    if (st != WT_OK || (st = check("col2im", out)) != WT_OK || (st = check("col2im", bias)) != WT_OK)
        return st;
    if (!window_fits_i32(win) || out->numel >= (1ll << 32) || col->numel >= (1ll << 31))
        return wt_fail(WT_ERR_UNSUPPORTED, "webgpu col2im: sizes beyond 32-bit indexing");
    if (out->numel == 0) return WT_OK;
    col2im_params p = {
        .total = (uint32_t)out->numel, .c = (uint32_t)out->shape[1],
        .h = (uint32_t)out->shape[2], .w = (uint32_t)out->shape[3],
        .kh = (uint32_t)win->kernel_h, .kw = (uint32_t)win->kernel_w,
        .oh = (uint32_t)win->out_h, .ow = (uint32_t)win->out_w,
        .stride_h = (int32_t)win->stride_h, .stride_w = (int32_t)win->stride_w,
        .pad_top = (int32_t)win->pad_top, .pad_left = (int32_t)win->pad_left,
        .dil_h = (int32_t)win->dilation_h, .dil_w = (int32_t)win->dilation_w,
        .ncols = (uint32_t)(out->shape[0] * win->out_h * win->out_w),
        .out_offset = (uint32_t)out->offset,
        .os_n = (uint32_t)out->strides[0], .os_c = (uint32_t)out->strides[1],
        .os_h = (uint32_t)out->strides[2], .os_w = (uint32_t)out->strides[3],
        .bias_offset = bias ? (uint32_t)bias->offset : 0,
        .bias_stride = bias ? (uint32_t)bias->strides[0] : 0,
    };
    if (col->offset != 0) return wt_fail(WT_ERR_INVALID_ARGUMENT, "webgpu col2im: col must start its storage");
    /* Without a bias, col stands in for it (the shader never reads it). */
    wg_binding b[3] = {{col->storage, false}, {bias ? bias->storage : col->storage, false},
                       {out->storage, true}};
    return launch(ctx, "col2im", bias ? "const HAS_BIAS: bool = true;\n" : "const HAS_BIAS: bool = false;\n",
                  &p, sizeof p, b, 3, (uint64_t)out->numel);
}

/* Same layout as pool2d.wgsl's Params. */
typedef struct pool_params {
    uint32_t total, c, h, w;
    uint32_t oh, ow, kh, kw;
    int32_t stride_h, stride_w, pad_top, pad_left;
    int32_t pad_bottom, pad_right, dil_h, dil_w;
    uint32_t x_offset, xs_n, xs_c, xs_h;
    uint32_t xs_w, divisor, neg_inf, out_offset;
    uint32_t idx_offset, pad0, pad1, pad2;
} pool_params;

wt_status wg_op_pool2d(wt_context *ctx, const wt_pool2d_desc *d, const wt_tensor *x, wt_tensor *out,
                       wt_tensor *indices)
{
    wt_status st = check("pool2d", x);
    if (st != WT_OK || (st = check("pool2d", out)) != WT_OK) return st;
    if (indices && (indices->dtype != WT_I32 || !fits_u32(indices)))
        return wt_fail(WT_ERR_UNSUPPORTED, "webgpu pool2d: indices must be i32 within 32-bit indexing");
    const wt_window2d *w = &d->win;
    /* Adaptive windows compute (o + 1) * n in u32. */
    if (!window_fits_i32(w) || out->numel >= (1ll << 32) || d->divisor >= (1ll << 31) ||
        (w->out_h + 1) * w->in_h >= (1ll << 32) || (w->out_w + 1) * w->in_w >= (1ll << 32))
        return wt_fail(WT_ERR_UNSUPPORTED, "webgpu pool2d: sizes beyond 32-bit indexing");
    if (out->numel == 0) return WT_OK;
    pool_params p = {
        .total = (uint32_t)out->numel, .c = (uint32_t)x->shape[1],
        .h = (uint32_t)x->shape[2], .w = (uint32_t)x->shape[3],
        .oh = (uint32_t)w->out_h, .ow = (uint32_t)w->out_w,
        .kh = (uint32_t)w->kernel_h, .kw = (uint32_t)w->kernel_w,
        .stride_h = (int32_t)w->stride_h, .stride_w = (int32_t)w->stride_w,
        .pad_top = (int32_t)w->pad_top, .pad_left = (int32_t)w->pad_left,
        .pad_bottom = (int32_t)w->pad_bottom, .pad_right = (int32_t)w->pad_right,
        .dil_h = (int32_t)w->dilation_h, .dil_w = (int32_t)w->dilation_w,
        .x_offset = (uint32_t)x->offset, .xs_n = (uint32_t)x->strides[0],
        .xs_c = (uint32_t)x->strides[1], .xs_h = (uint32_t)x->strides[2],
        .xs_w = (uint32_t)x->strides[3], .divisor = (uint32_t)d->divisor,
        .neg_inf = 0xff800000u, .out_offset = (uint32_t)out->offset,
        .idx_offset = indices ? (uint32_t)indices->offset : 0,
    };
    char extra[320];
    snprintf(extra, sizeof extra, "const OP: u32 = %uu;\nconst COUNT_PAD: bool = %s;\n%s", (unsigned)d->op,
             d->count_include_pad ? "true" : "false",
             indices ? "@group(0) @binding(3) var<storage, read_write> indices: array<i32>;\n"
                       "fn store_index(o: u32, v: i32) { indices[o] = v; }\n"
                     : "fn store_index(o: u32, v: i32) {}\n");
    wg_binding b[3] = {{x->storage, false}, {out->storage, true},
                       {indices ? indices->storage : NULL, true}};
    return launch(ctx, "pool2d", extra, &p, sizeof p, b, indices ? 3 : 2, (uint64_t)out->numel);
}
