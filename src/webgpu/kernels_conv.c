/* WebGPU im2col and col2im (wgsl/im2col.wgsl, wgsl/col2im.wgsl): the data
 * movement around the convolutions' matrix products, which run on the
 * backend's matmul (api/conv.c cuts the work in chunks). A direct
 * convolution kernel would replace this pair behind the same front-end.
 * And 2-D pooling (wgsl/pool2d.wgsl), which shares their window. */
#include "webgpu/wg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CONV_WG 256u

/* Same layouts as window.wgsl's Window and View4. */
typedef struct window_params {
    int32_t in_h, in_w, out_h, out_w, kernel_h, kernel_w, stride_h, stride_w;
    int32_t pad_top, pad_left, pad_bottom, pad_right, dil_h, dil_w, pad0, pad1;
} window_params;

typedef struct view4_params {
    uint32_t offset, pad0, pad1, pad2;
    uint32_t strides[4];
} view4_params;

/* Same layout as im2col.wgsl's Params. */
typedef struct im2col_params {
    window_params win;
    view4_params x;
    uint32_t total, ncols, rows, row0;
} im2col_params;

/* Same layout as col2im.wgsl's Params. */
typedef struct col2im_params {
    window_params win;
    view4_params out;
    uint32_t total, c, bias_offset, bias_stride;
} col2im_params;

/* Callers have checked window_fits_i32 and fits_u32. */
static window_params window_of(const wt_window2d *w)
{
    return (window_params){
        .in_h = (int32_t)w->in_h, .in_w = (int32_t)w->in_w,
        .out_h = (int32_t)w->out_h, .out_w = (int32_t)w->out_w,
        .kernel_h = (int32_t)w->kernel_h, .kernel_w = (int32_t)w->kernel_w,
        .stride_h = (int32_t)w->stride_h, .stride_w = (int32_t)w->stride_w,
        .pad_top = (int32_t)w->pad_top, .pad_left = (int32_t)w->pad_left,
        .pad_bottom = (int32_t)w->pad_bottom, .pad_right = (int32_t)w->pad_right,
        .dil_h = (int32_t)w->dilation_h, .dil_w = (int32_t)w->dilation_w,
    };
}

static view4_params view_of(const wt_tensor *t)
{
    return (view4_params){
        .offset = (uint32_t)t->offset,
        .strides = {(uint32_t)t->strides[0], (uint32_t)t->strides[1], (uint32_t)t->strides[2],
                    (uint32_t)t->strides[3]},
    };
}

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
    l.libraries[0] = strcmp(shader, "channel_affine") ? "window" : NULL;
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
        .win = window_of(win), .x = view_of(x), .total = (uint32_t)col->numel,
        .ncols = (uint32_t)ncols, .rows = (uint32_t)rows, .row0 = (uint32_t)row0,
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
        .win = window_of(win), .out = view_of(out), .total = (uint32_t)out->numel,
        .c = (uint32_t)out->shape[1], .bias_offset = bias ? (uint32_t)bias->offset : 0,
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
    window_params win;
    view4_params x;
    uint32_t total, c, divisor, neg_inf;
    uint32_t out_offset, idx_offset, pad0, pad1;
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
        .win = window_of(w), .x = view_of(x), .total = (uint32_t)out->numel,
        .c = (uint32_t)x->shape[1], .divisor = (uint32_t)d->divisor, .neg_inf = 0xff800000u,
        .out_offset = (uint32_t)out->offset, .idx_offset = indices ? (uint32_t)indices->offset : 0,
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

/* Same layout as conv2d_direct.wgsl's Params. */
typedef struct direct_params {
    window_params win;
    view4_params x;
    uint32_t total, o, cg, og;
    uint32_t w_offset, bias_offset, out_offset, pad0;
} direct_params;

/* Input channels per group up to which a thread per output beats the
 * matrix product (WT_CONV_DIRECT_MAX_CG overrides, 0 turns the direct
 * kernel off). On an H100 a depthwise 3x3 over 32x128x56x56 took 1.2 ms
 * through im2col + matmul, against PyTorch's 0.13. */
#define DIRECT_MAX_CG 1

wt_status wg_op_conv2d(wt_context *ctx, const wt_tensor *x, const wt_tensor *w, const wt_tensor *bias,
                       const wt_window2d *win, int64_t groups, wt_tensor *out)
{
    const int64_t C = x->shape[1], O = w->shape[0], cg = C / groups;
    const char *knob = wg_env_string("WT_CONV_DIRECT_MAX_CG");
    const long long max_cg = knob && *knob ? atoll(knob) : DIRECT_MAX_CG;
    if (cg > max_cg)
        return wt_fail(WT_ERR_UNSUPPORTED, "webgpu conv2d: %lld channels per group go to im2col", (long long)cg);
    wt_status st = check("conv2d", x);
    if (st != WT_OK || (st = check("conv2d", w)) != WT_OK || (st = check("conv2d", bias)) != WT_OK ||
        (st = check("conv2d", out)) != WT_OK)
        return st;
    if (!window_fits_i32(win) || out->numel >= (1ll << 32))
        return wt_fail(WT_ERR_UNSUPPORTED, "webgpu conv2d: sizes beyond 32-bit indexing");
    if (out->numel == 0) return WT_OK;
    direct_params p = {
        .win = window_of(win), .x = view_of(x), .total = (uint32_t)out->numel, .o = (uint32_t)O,
        .cg = (uint32_t)cg, .og = (uint32_t)(O / groups), .w_offset = (uint32_t)w->offset,
        .bias_offset = bias ? (uint32_t)bias->offset : 0, .out_offset = (uint32_t)out->offset,
    };
    /* Without a bias, w stands in for it (the shader never reads it). */
    wg_binding b[4] = {{x->storage, false}, {w->storage, false},
                       {bias ? bias->storage : w->storage, false}, {out->storage, true}};
    return launch(ctx, "conv2d_direct",
                  bias ? "const HAS_BIAS: bool = true;\n" : "const HAS_BIAS: bool = false;\n", &p,
                  sizeof p, b, 4, (uint64_t)out->numel);
}

/* Same layout as channel_affine.wgsl's Params. */
typedef struct affine_params {
    uint32_t total, c, s, x_offset;
    uint32_t xs_n, xs_c, xs_s, coef_offset;
    uint32_t out_offset, pad0, pad1, pad2;
} affine_params;

wt_status wg_op_channel_affine(wt_context *ctx, const wt_tensor *x, const wt_tensor *coef, wt_tensor *out)
{
    wt_status st = check("channel_affine", x);
    if (st != WT_OK || (st = check("channel_affine", coef)) != WT_OK ||
        (st = check("channel_affine", out)) != WT_OK)
        return st;
    if (out->numel >= (1ll << 32))
        return wt_fail(WT_ERR_UNSUPPORTED, "webgpu channel_affine: sizes beyond 32-bit indexing");
    if (out->numel == 0) return WT_OK;
    affine_params p = {
        .total = (uint32_t)out->numel, .c = (uint32_t)x->shape[1], .s = (uint32_t)x->shape[2],
        .x_offset = (uint32_t)x->offset, .xs_n = (uint32_t)x->strides[0],
        .xs_c = (uint32_t)x->strides[1], .xs_s = (uint32_t)x->strides[2],
        .coef_offset = (uint32_t)coef->offset, .out_offset = (uint32_t)out->offset,
    };
    wg_binding b[3] = {{x->storage, false}, {coef->storage, false}, {out->storage, true}};
    return launch(ctx, "channel_affine", "", &p, sizeof p, b, 3, (uint64_t)out->numel);
}
