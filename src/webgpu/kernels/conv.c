/* WebGPU convolutions: a direct kernel for depthwise shapes
 * (wgsl/conv2d_direct.wgsl), the implicit matrix product for the others
 * (kernels/gemm.c), and im2col and col2im (wgsl/im2col.wgsl,
 * wgsl/col2im.wgsl), the data movement around the matrix products of what
 * those two do not take (api/conv.c cuts that work in chunks) and of the
 * transposed convolution. And 2-D pooling (wgsl/pool2d.wgsl), which shares
 * their window. */
#include "webgpu/wg.h"
#include "webgpu/wg_params.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CONV_WG 256u

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

/* These kernels bind whole storages: a tensor past one binding (see
 * windows.c) is refused here rather than at the dispatch. */
static wt_status check(const wt_context *ctx, const char *what, const wt_tensor *t)
{
    if (t && t->dtype != WT_F32)
        return wt_fail(WT_ERR_UNSUPPORTED, "webgpu %s: f32 only", what);
    if (t && !fits_u32(t))
        return wt_fail(WT_ERR_UNSUPPORTED, "webgpu %s: tensor beyond 32-bit indexing", what);
    if (t && wg_needs_windows(ctx, t))
        return wt_fail(WT_ERR_UNSUPPORTED, "webgpu %s: a tensor of %zu bytes is larger than one binding",
                       what, t->storage->bytes);
    return WT_OK;
}

static wt_status launch(wt_context *ctx, const char *shader, const char *extra, const void *params,
                        size_t size, const wg_binding *bindings, int n, uint64_t threads)
{
    /* WGSL's enable directives come before every declaration. */
    const bool directive = strncmp(extra, "enable ", 7) == 0;
    char prelude[512];
    snprintf(prelude, sizeof prelude, "%sconst WG: u32 = %uu;\n%s", directive ? extra : "", CONV_WG,
             directive ? "" : extra);
    wg_launch l;
    memset(&l, 0, sizeof l);
    l.shader = shader;
    l.libraries[0] = strcmp(shader, "channel_norm") ? "window" : NULL;
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
    wt_status st = check(ctx, "im2col", x);
    if (st != WT_OK || (st = check(ctx, "im2col", col)) != WT_OK) return st;
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

wt_status wg_op_im2col_rows_f16(wt_context *ctx, const wt_tensor *x, const wt_tensor *w, const wt_window2d *win,
                                int64_t image0, int64_t images, int64_t kp, int64_t pp, wt_storage *col)
{
    const int64_t K = w->shape[1] * win->kernel_h * win->kernel_w, P = win->out_h * win->out_w;
    /* MODE 0: rows of pp pixels, kp of them an image; MODE 1: O rows of kp. */
    const int64_t rows = x ? images * kp : w->shape[0], per_row = x ? pp : kp;
    const uint64_t words = (uint64_t)rows * (uint64_t)per_row / 8;
    if (!window_fits_i32(win) || words >= (1ull << 31) || K >= (1ll << 31) || kp % 8 || kp < K ||
        (x && (pp % 8 || pp < P)) || words * 16 > col->bytes)
        return wt_fail(WT_ERR_UNSUPPORTED, "webgpu im2col_rows_f16: sizes beyond 32-bit indexing");
    if (words == 0) return WT_OK;
    const wt_tensor *src = x ? x : w;
    im2col_rows_params p = {
        .win = window_of(win), .x = view_of(src), .total = (uint32_t)words, .k = (uint32_t)K,
        .pixels = (uint32_t)P, .image0 = (uint32_t)image0,
    };
    char extra[256];
    snprintf(extra, sizeof extra,
             "enable f16;\nconst MODE: u32 = %du;\nconst KW: u32 = %uu;\nconst KK: u32 = %uu;\n"
             "const OW: u32 = %uu;\nconst WORDS_PER_ROW: u32 = %uu;\nconst KP: u32 = %uu;\n",
             x ? 0 : 1, (unsigned)win->kernel_w, (unsigned)(win->kernel_h * win->kernel_w),
             (unsigned)(win->out_w > 0 ? win->out_w : 1), (unsigned)(per_row / 8), (unsigned)kp);
    wg_binding b[2] = {{src->storage, false}, {col, true}};
    return launch(ctx, "im2col_rows_f16", extra, &p, sizeof p, b, 2, words);
}

wt_status wg_op_col2im(wt_context *ctx, const wt_tensor *col, const wt_tensor *bias,
                       const wt_window2d *win, wt_tensor *out)
{
    wt_status st = check(ctx, "col2im", col);
    if (st != WT_OK || (st = check(ctx, "col2im", out)) != WT_OK || (st = check(ctx, "col2im", bias)) != WT_OK)
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

wt_status wg_op_pool2d(wt_context *ctx, const wt_pool2d_desc *d, const wt_tensor *x, wt_tensor *out,
                       wt_tensor *indices)
{
    wt_status st = check(ctx, "pool2d", x);
    if (st != WT_OK || (st = check(ctx, "pool2d", out)) != WT_OK) return st;
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

/* Input channels per group up to which a thread per output beats the
 * matrix product (WT_CONV_DIRECT_MAX_CG overrides, 0 turns the direct
 * kernel off). On an H100 a depthwise 3x3 over 32x128x56x56 took 1.2 ms
 * through im2col + matmul, against PyTorch's 0.13. */
#define DIRECT_MAX_CG 1

/* The other shapes: the implicit matrix product (kernels/gemm.c), unless
 * WT_CONV_GEMM=0 sends them back to the API's im2col + matmul. */
static wt_status conv_gemm(wt_context *ctx, const wt_tensor *x, const wt_tensor *w, const wt_tensor *bias,
                           const wt_window2d *win, int64_t groups, bool transposed, wt_tensor *out)
{
    const char *knob = wt_knob_text(WT_KNOB_CONV_GEMM);
    if (knob && strcmp(knob, "0") == 0)
        return wt_fail(WT_ERR_UNSUPPORTED, "webgpu conv2d: WT_CONV_GEMM=0 sends it to im2col");
    const wt_tensor *all[4] = {x, w, bias, out};
    for (int i = 0; i < 4; i++)
        if (all[i] && wg_needs_windows(ctx, all[i]))
            return wt_fail(WT_ERR_UNSUPPORTED, "webgpu conv2d: a tensor of %zu bytes is larger than one binding",
                           all[i]->storage->bytes);
    if (!window_fits_i32(win))
        return wt_fail(WT_ERR_UNSUPPORTED, "webgpu conv2d: sizes beyond 32-bit indexing");
    return transposed ? wg_gemm_conv_transpose2d(ctx, x, w, bias, win, groups, out)
                      : wg_gemm_conv2d(ctx, x, w, bias, win, groups, out);
}

wt_status wg_op_conv_transpose2d(wt_context *ctx, const wt_tensor *x, const wt_tensor *w, const wt_tensor *bias,
                                 const wt_window2d *win, int64_t groups, wt_tensor *out)
{
    return conv_gemm(ctx, x, w, bias, win, groups, true, out);
}

wt_status wg_op_conv2d(wt_context *ctx, const wt_tensor *x, const wt_tensor *w, const wt_tensor *bias,
                       const wt_window2d *win, int64_t groups, wt_tensor *out)
{
    const int64_t C = x->shape[1], O = w->shape[0], cg = C / groups;
    const char *knob = wt_knob_text(WT_KNOB_CONV_DIRECT_MAX_CG);
    const long long max_cg = knob && *knob ? atoll(knob) : DIRECT_MAX_CG;
    if (cg > max_cg) return conv_gemm(ctx, x, w, bias, win, groups, false, out);
    wt_status st = check(ctx, "conv2d", x);
    if (st != WT_OK || (st = check(ctx, "conv2d", w)) != WT_OK || (st = check(ctx, "conv2d", bias)) != WT_OK ||
        (st = check(ctx, "conv2d", out)) != WT_OK)
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

wt_status wg_op_channel_norm(wt_context *ctx, const wt_tensor *x, const wt_tensor *stats, float eps,
                             wt_tensor *out)
{
    wt_status st = check(ctx, "channel_norm", x);
    if (st != WT_OK || (st = check(ctx, "channel_norm", stats)) != WT_OK ||
        (st = check(ctx, "channel_norm", out)) != WT_OK)
        return st;
    if (out->numel >= (1ll << 32))
        return wt_fail(WT_ERR_UNSUPPORTED, "webgpu channel_norm: sizes beyond 32-bit indexing");
    if (out->numel == 0) return WT_OK;
    const int64_t C = x->shape[1], S = x->shape[2];
    /* Whole vec4s of one channel when x is contiguous and aligned. */
    const bool vec4 = S % 4 == 0 && x->strides[2] == 1 && x->strides[1] == S &&
                      (x->shape[0] == 1 || x->strides[0] == C * S) && x->offset % 4 == 0 &&
                      out->offset % 4 == 0;
    const uint32_t u = vec4 ? 4 : 1;
    channel_norm_params p = {
        .total = (uint32_t)(out->numel / u), .c = (uint32_t)C, .s = (uint32_t)(S / u),
        .x_offset = (uint32_t)(x->offset / u), .xs_n = (uint32_t)(x->strides[0] / u),
        .xs_c = (uint32_t)(x->strides[1] / u), .xs_s = vec4 ? 1 : (uint32_t)x->strides[2],
        .stats_offset = (uint32_t)stats->offset, .out_offset = (uint32_t)(out->offset / u), .eps = eps,
    };
    wg_binding b[3] = {{x->storage, false}, {stats->storage, false}, {out->storage, true}};
    return launch(ctx, "channel_norm", vec4 ? "alias T = vec4<f32>;\n" : "alias T = f32;\n", &p, sizeof p, b,
                  3, (uint64_t)p.total);
}

/* Elements a workgroup of channel_moments sums at least (16 a thread),
 * and the most workgroups a channel is cut into. */
#define MOMENTS_CHUNK 4096u
#define MOMENTS_MAX_CHUNKS 1024u

wt_status wg_op_channel_moments(wt_context *ctx, const wt_tensor *x, wt_tensor *out)
{
    wt_status st = check(ctx, "channel_moments", x);
    if (st != WT_OK || (st = check(ctx, "channel_moments", out)) != WT_OK) return st;
    const uint64_t C = (uint64_t)x->shape[1], count = (uint64_t)(x->shape[0] * x->shape[2]);
    if (count >= (1ull << 32) || C == 0) 
        return wt_fail(WT_ERR_UNSUPPORTED, "webgpu channel_moments: %llu values per channel", (unsigned long long)count);
    uint64_t chunks = (count + MOMENTS_CHUNK - 1) / MOMENTS_CHUNK;
    if (chunks > MOMENTS_MAX_CHUNKS) chunks = MOMENTS_MAX_CHUNKS;
    if (chunks == 0) chunks = 1;
    moments_params p = {
        .c = (uint32_t)C, .s = (uint32_t)x->shape[2], .count = (uint32_t)count, .chunks = (uint32_t)chunks,
        .chunk_len = (uint32_t)((count + chunks - 1) / chunks), .x_offset = (uint32_t)x->offset,
        .xs_n = (uint32_t)x->strides[0], .xs_c = (uint32_t)x->strides[1], .xs_s = (uint32_t)x->strides[2],
        .out_offset = (uint32_t)out->offset,
    };
    wt_storage *part = NULL;
    if ((st = wg_scratch(ctx, (size_t)(2 * C * chunks) * sizeof(float), &part)) != WT_OK) return st;
    const char *modes[3] = {"const MODE: u32 = 0u;\n", "const MODE: u32 = 1u;\n", "const MODE: u32 = 2u;\n"};
    for (int m = 0; m < 3 && st == WT_OK; m++) {
        wg_binding b[2] = {{m < 2 ? x->storage : part, false}, {m < 2 ? part : out->storage, true}};
        /* launch() counts threads: MODE 0 and 1 take a workgroup per chunk. */
        st = launch(ctx, "channel_moments", modes[m], &p, sizeof p, b, 2, m < 2 ? C * chunks * CONV_WG : C);
    }
    wg_scratch_release(ctx, part);
    return st;
}

wt_status wg_op_moments_combine(wt_context *ctx, const wt_tensor *parts, int64_t per, int64_t n, int64_t s,
                                wt_tensor *out)
{
    wt_status st = check(ctx, "moments_combine", parts);
    if (st != WT_OK || (st = check(ctx, "moments_combine", out)) != WT_OK) return st;
    const int64_t C = out->shape[1], nparts = (n + per - 1) / per;
    if (parts->offset != 0 || parts->numel != 2 * C * nparts || n >= (1ll << 32))
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "webgpu moments_combine: %lld values for %lld parts of %lld channels",
                       (long long)parts->numel, (long long)nparts, (long long)C);
    moments_combine_params p = {
        .c = (uint32_t)C, .parts = (uint32_t)nparts, .per = (uint32_t)per, .n = (uint32_t)n,
        .s = (float)s, .out_offset = (uint32_t)out->offset,
    };
    wg_binding b[2] = {{parts->storage, false}, {out->storage, true}};
    return launch(ctx, "moments_combine", "", &p, sizeof p, b, 2, (uint64_t)C);
}
