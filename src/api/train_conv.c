/* Backward of conv2d and the 2-D poolings.
 *
 * conv2d and avg_pool2d backward are composed from the forward ops:
 *  - dx of a convolution is the transposed convolution of dy with the
 *    same weights;
 *  - dw is itself a convolution, of x with dy as the kernel, stride and
 *    dilation swapped, with x's batch axis as channels and the groups
 *    kept apart in the channel axis;
 *  - avg_pool2d's dx is a depthwise transposed convolution of dy divided
 *    by each window's divisor, with a kernel of ones.
 * max_pool2d's dx scatters dy to the positions its indices name (the
 * backends' scatter_add_rows, by planes). */
#include "api/api.h"
#include "api/chain.h"

#include <stdlib.h>
#include <string.h>

static wt_status check_4d(const char *fn, const char *what, const wt_tensor *t)
{
    if (!t) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: %s is NULL", fn, what);
    if (t->dtype != WT_F32 && t->dtype != WT_F16)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: %s must be f32 or f16", fn, what);
    if (t->ndim != 4) return wt_fail(WT_ERR_SHAPE, "%s: %s must be 4-D (N, C, H, W)", fn, what);
    return WT_OK;
}

/* Padding before and after along one axis, as the forward pass used it. */
static void resolve_padding(const wt_conv_options *o, int axis, int64_t in, int64_t k, int64_t *before, int64_t *after)
{
    int64_t s = o->stride[axis], d = o->dilation[axis];
    if (!o->same) {
        *before = o->padding[2 * axis];
        *after = o->padding[2 * axis + 1];
        return;
    }
    int64_t out = (in + s - 1) / s, total = (out - 1) * s + d * (k - 1) + 1 - in;
    if (total < 0) total = 0;
    *before = total / 2;
    *after = total - total / 2;
}

/* Padding and output_padding for a transposed convolution from out
 * positions back to exactly `in`: before as the forward pass; after cut
 * to what the windows reached, the rows past it (< stride) given back
 * as output padding. */
static void transpose_fit(int64_t in, int64_t out, int64_t s, int64_t d, int64_t k, int64_t before, int64_t *after,
                          int64_t *out_pad)
{
    int64_t need = (out - 1) * s - before + d * (k - 1) + 1 - in;
    *after = need > 0 ? need : 0;
    *out_pad = need < 0 ? -need : 0;
}

wt_status wt_conv2d_backward_v2(const wt_tensor *dy, const wt_tensor *x, const wt_tensor *w,
                                const wt_conv_options *opts, wt_tensor **dx, wt_tensor **dw, wt_tensor **dbias)
{
    const char *fn = "wt_conv2d_backward_v2";
    if (dx) *dx = NULL;
    if (dw) *dw = NULL;
    if (dbias) *dbias = NULL;
    wt_status st;
    if ((st = check_4d(fn, "x", x)) != WT_OK || (st = check_4d(fn, "w", w)) != WT_OK ||
        (st = check_4d(fn, "dy", dy)) != WT_OK || (st = wt_check_same_context(fn, x, w)) != WT_OK ||
        (st = wt_check_same_context(fn, x, dy)) != WT_OK)
        return st;
    wt_conv_options o;
    wt_conv_options_init(&o);
    if (opts) {
        if (opts->struct_size != sizeof *opts)
            return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: options not set up by wt_conv_options_init", fn);
        o = *opts;
    }
    int64_t N = x->shape[0], C = x->shape[1], H = x->shape[2], W = x->shape[3];
    int64_t O = w->shape[0], KH = w->shape[2], KW = w->shape[3], G = o.groups;
    if (G <= 0 || C % G != 0 || O % G != 0 || w->shape[1] != C / G)
        return wt_fail(WT_ERR_SHAPE, "%s: w [%lld, %lld, ..] does not fit x's %lld channels in %lld groups", fn,
                       (long long)O, (long long)w->shape[1], (long long)C, (long long)G);
    for (int a = 0; a < 2; a++)
        if (o.stride[a] <= 0 || o.dilation[a] <= 0)
            return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: stride and dilation must be positive", fn);
    for (int a = 0; a < 4; a++)
        if (o.padding[a] < 0) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: padding %lld is negative", fn, (long long)o.padding[a]);
    /* Options near INT64_MAX: refused before the sizes below overflow. */
    for (int a = 0; a < 2; a++)
        if (o.stride[a] >= ((int64_t)1 << 40) || o.dilation[a] >= ((int64_t)1 << 40) ||
            o.padding[2 * a] >= ((int64_t)1 << 40) || o.padding[2 * a + 1] >= ((int64_t)1 << 40))
            return wt_fail(WT_ERR_SHAPE, "%s: stride, dilation or padding past 2^40 fits no tensor", fn);
    int64_t top, bottom, left, right;
    resolve_padding(&o, 0, H, KH, &top, &bottom);
    resolve_padding(&o, 1, W, KW, &left, &right);
    int64_t Ho = (H + top + bottom - o.dilation[0] * (KH - 1) - 1) / o.stride[0] + 1;
    int64_t Wo = (W + left + right - o.dilation[1] * (KW - 1) - 1) / o.stride[1] + 1;
    if (dy->shape[0] != N || dy->shape[1] != O || dy->shape[2] != Ho || dy->shape[3] != Wo)
        return wt_fail(WT_ERR_SHAPE, "%s: dy must be [%lld, %lld, %lld, %lld], conv2d's output", fn, (long long)N,
                       (long long)O, (long long)Ho, (long long)Wo);
    chain c = {0};
    wt_tensor *g = f32_contiguous(&c, dy);
    wt_tensor *rdx = NULL, *rdw = NULL, *rdb = NULL;
    if (dx) {
        wt_conv_options t;
        wt_conv_options_init(&t);
        memcpy(t.stride, o.stride, sizeof t.stride);
        memcpy(t.dilation, o.dilation, sizeof t.dilation);
        t.groups = G;
        t.padding[0] = top;
        t.padding[2] = left;
        transpose_fit(H, Ho, o.stride[0], o.dilation[0], KH, top, &t.padding[1], &t.output_padding[0]);
        transpose_fit(W, Wo, o.stride[1], o.dilation[1], KW, left, &t.padding[3], &t.output_padding[1]);
        wt_tensor *wf = f32_contiguous(&c, w);
        rdx = STEP(&c, wt_conv_transpose2d, g, wf, NULL, &t);
    }
    if (dw) {
        /* x as [C/G, G*N, H, W] (channel g*N + n), dy as [O, N, Ho, Wo]. */
        int64_t s5[5] = {N, G, C / G, H, W}, s4[4] = {C / G, G * N, H, W};
        int perm5[5] = {2, 1, 0, 3, 4}, perm4[4] = {1, 0, 2, 3};
        wt_tensor *xf = f32_contiguous(&c, x);
        wt_tensor *x5 = STEP(&c, wt_reshape, xf, 5, s5);
        wt_tensor *xp = STEP(&c, wt_permute, x5, perm5);
        wt_tensor *xg = STEP(&c, wt_reshape, xp, 4, s4);
        wt_tensor *gk = STEP(&c, wt_permute, g, perm4);
        wt_conv_options k;
        wt_conv_options_init(&k);
        k.stride[0] = o.dilation[0];
        k.stride[1] = o.dilation[1];
        k.dilation[0] = o.stride[0];
        k.dilation[1] = o.stride[1];
        k.padding[0] = top;
        k.padding[1] = bottom;
        k.padding[2] = left;
        k.padding[3] = right;
        k.groups = G;
        wt_tensor *full = STEP(&c, wt_conv2d, xg, gk, NULL, &k); /* [C/G, O, >= KH, >= KW] */
        wt_tensor *cut = STEP(&c, wt_slice, full, 2, 0, KH, 1);
        cut = STEP(&c, wt_slice, cut, 3, 0, KW, 1);
        wt_tensor *t = STEP(&c, wt_permute, cut, perm4);
        rdw = STEP(&c, wt_contiguous, t);
    }
    if (dbias) {
        int axes[3] = {0, 2, 3};
        rdb = STEP(&c, wt_sum, g, 3, axes, false);
    }
    if (c.st == WT_OK) {
        give(rdx, dx);
        give(rdw, dw);
        give(rdb, dbias);
    }
    chain_release(&c);
    return c.st;
}

wt_status wt_max_pool2d_backward(const wt_tensor *dy, const wt_tensor *indices, const wt_tensor *x, wt_tensor **dx)
{
    const char *fn = "wt_max_pool2d_backward";
    wt_status st = wt_check_out(fn, dx);
    if (st != WT_OK || (st = check_4d(fn, "dy", dy)) != WT_OK || (st = check_4d(fn, "x", x)) != WT_OK) return st;
    if (!indices) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: indices is NULL", fn);
    if (indices->dtype != WT_I32) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: indices must be i32 (max_pool2d's)", fn);
    if ((st = wt_check_same_context(fn, dy, indices)) != WT_OK || (st = wt_check_same_context(fn, dy, x)) != WT_OK)
        return st;
    bool ok = indices->ndim == 4 && dy->shape[0] == x->shape[0] && dy->shape[1] == x->shape[1];
    for (int i = 0; ok && i < 4; i++) ok = indices->shape[i] == dy->shape[i];
    if (!ok) return wt_fail(WT_ERR_SHAPE, "%s: dy and indices must be [N, C, Ho, Wo] of x [N, C, H, W]", fn);
    wt_context *ctx = wt_ctx_of(dy);
    if (!wt_backend_runs(ctx, WT_NODE_SCATTER_ADD_ROWS))
        return wt_fail(WT_ERR_UNSUPPORTED, "%s: not available on the %s backend", fn, ctx->ops->name);
    int64_t plane = dy->shape[2] * dy->shape[3], plane_rows = x->shape[2] * x->shape[3];
    int64_t n = dy->numel, g2[2] = {n, 1}, rows[2] = {x->numel, 1};
    chain c = {0};
    wt_tensor *g = f32_contiguous(&c, dy);
    wt_tensor *gg = STEP(&c, wt_reshape, g, 2, g2);
    wt_tensor *idx = STEP(&c, wt_contiguous, indices);
    wt_tensor *idx1 = STEP(&c, wt_reshape, idx, 1, &n);
    wt_tensor *out = STEP(&c, wt_tensor_zeros, ctx, WT_F32, 2, rows);
    if (c.st == WT_OK && n > 0 && plane > 0)
        c.st = wt_node_run(ctx, &(wt_node){.kind = WT_NODE_SCATTER_ADD_ROWS, .in = {gg, idx1}, .out = {out}, .p.rows = {plane, plane_rows}});
    wt_tensor *r = STEP(&c, wt_reshape, out, 4, x->shape);
    if (c.st == WT_OK) give(r, dx);
    chain_release(&c);
    return c.st;
}

/* The divisor avg_pool2d used for window (oy, ox), as its header states. */
static double window_divisor(const wt_pool2d_options *o, int64_t H, int64_t W, int64_t oy, int64_t ox)
{
    if (o->divisor_override > 0) return (double)o->divisor_override;
    int64_t hs = oy * o->stride[0] - o->padding[0], ws = ox * o->stride[1] - o->padding[2];
    int64_t he = hs + o->kernel[0], we = ws + o->kernel[1];
    if (he > H + o->padding[1]) he = H + o->padding[1];
    if (we > W + o->padding[3]) we = W + o->padding[3];
    if (!o->count_include_pad) {
        if (hs < 0) hs = 0;
        if (ws < 0) ws = 0;
        if (he > H) he = H;
        if (we > W) we = W;
    }
    return (double)((he - hs) * (we - ws));
}

wt_status wt_avg_pool2d_backward_v2(const wt_tensor *dy, const wt_tensor *x, const wt_pool2d_options *opts,
                                     wt_tensor **dx)
{
    const char *fn = "wt_avg_pool2d_backward_v2";
    wt_status st = wt_check_out(fn, dx);
    if (st != WT_OK || (st = check_4d(fn, "dy", dy)) != WT_OK || (st = check_4d(fn, "x", x)) != WT_OK ||
        (st = wt_check_same_context(fn, dy, x)) != WT_OK)
        return st;
    if (!opts || opts->struct_size != sizeof *opts)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: options (with the kernel size) from wt_pool2d_options_init needed", fn);
    wt_pool2d_options o = *opts;
    for (int a = 0; a < 2; a++) {
        if (o.stride[a] == 0) o.stride[a] = o.kernel[a];
        if (o.kernel[a] <= 0 || o.stride[a] <= 0 || o.padding[2 * a] < 0 || o.padding[2 * a + 1] < 0)
            return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: kernel and stride must be positive, padding >= 0", fn);
    }
    int64_t N = x->shape[0], C = x->shape[1], H = x->shape[2], W = x->shape[3];
    int64_t Ho = dy->shape[2], Wo = dy->shape[3];
    /* dy must be what avg_pool2d(x, opts) gives: the same rules first. */
    int64_t fh, fw;
    if ((st = wt_pool_axis_size(fn, "rows", H, o.kernel[0], o.stride[0], o.padding[0], o.padding[1], 1, o.ceil_mode,
                                false, &fh)) != WT_OK ||
        (st = wt_pool_axis_size(fn, "columns", W, o.kernel[1], o.stride[1], o.padding[2], o.padding[3], 1,
                                o.ceil_mode, false, &fw)) != WT_OK)
        return st;
    if (dy->shape[0] != N || dy->shape[1] != C || Ho != fh || Wo != fw)
        return wt_fail(WT_ERR_SHAPE, "%s: dy must be [N, C, %lld, %lld], avg_pool2d's output for x [N, C, H, W]", fn,
                       (long long)fh, (long long)fw);
    if (Ho * Wo > ((int64_t)1 << 24)) return wt_fail(WT_ERR_UNSUPPORTED, "%s: output plane too large", fn);
    float *div = malloc((size_t)(Ho * Wo > 0 ? Ho * Wo : 1) * sizeof *div);
    if (!div) return wt_fail(WT_ERR_OUT_OF_MEMORY, "%s: out of host memory", fn);
    for (int64_t oy = 0; oy < Ho; oy++)
        for (int64_t ox = 0; ox < Wo; ox++) div[oy * Wo + ox] = (float)window_divisor(&o, H, W, oy, ox);
    wt_context *ctx = wt_ctx_of(dy);
    chain c = {0};
    int64_t ds[2] = {Ho, Wo}, ks[4] = {C, 1, o.kernel[0], o.kernel[1]};
    wt_tensor *tdiv = STEP(&c, wt_tensor_from_data, ctx, WT_F32, 2, ds, div);
    free(div);
    wt_tensor *g = f32_contiguous(&c, dy);
    wt_tensor *gs = STEP(&c, wt_div, g, tdiv);
    wt_tensor *ones = STEP(&c, wt_tensor_full, ctx, WT_F32, 4, ks, 1.0);
    wt_conv_options t;
    wt_conv_options_init(&t);
    t.stride[0] = o.stride[0];
    t.stride[1] = o.stride[1];
    t.groups = C;
    t.padding[0] = o.padding[0];
    t.padding[2] = o.padding[2];
    transpose_fit(H, Ho, o.stride[0], 1, o.kernel[0], o.padding[0], &t.padding[1], &t.output_padding[0]);
    transpose_fit(W, Wo, o.stride[1], 1, o.kernel[1], o.padding[2], &t.padding[3], &t.output_padding[1]);
    wt_tensor *r = STEP(&c, wt_conv_transpose2d, gs, ones, NULL, &t);
    if (c.st == WT_OK && (r->shape[2] != H || r->shape[3] != W))
        c.st = wt_fail(WT_ERR_SHAPE, "%s: dy [.., %lld, %lld] is not avg_pool2d's output for x", fn, (long long)Ho,
                       (long long)Wo);
    if (c.st == WT_OK) give(r, dx);
    chain_release(&c);
    return c.st;
}
