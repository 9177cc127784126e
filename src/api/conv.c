/* Convolution front-ends: conv2d, conv1d and conv_transpose2d.
 *
 * A convolution is a matrix product per group between the weights and the
 * input's windows laid out as columns (im2col); the transposed convolution
 * is the same product with the weights transposed, its columns summed back
 * into the output plane (col2im, the adjoint of im2col). The backend
 * brings im2col, col2im and matmul; this file brings the shapes and cuts
 * the work in chunks so that the column matrix stays below a budget
 * (WT_CONV_CHUNK_BYTES, 64 MiB by default): whole images when they fit,
 * else bands of output rows (conv2d) or blocks of output channels
 * (conv_transpose2d) of one image. A backend with a convolution kernel of
 * its own would take over here, behind the same front-end. */
#include "api/api.h"
#include "autograd/tape.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

void wt_conv_options_init(wt_conv_options *opts)
{
    if (!opts) return;
    memset(opts, 0, sizeof *opts);
    opts->struct_size = sizeof *opts;
    opts->stride[0] = opts->stride[1] = 1;
    opts->dilation[0] = opts->dilation[1] = 1;
    opts->groups = 1;
}

/* Floats the column matrix (plus the product) of one chunk may take. */
static int64_t chunk_floats(void)
{
    const char *v = wt_knob_text(WT_KNOB_CONV_CHUNK_BYTES);
    long long b = v ? atoll(v) : 0;
    /* 64 MiB: the column matrix stays inside the 128 MiB every WebGPU
     * device can bind; on an H200 a 32x64x56x56 3x3 conv took 0.78 ms with
     * it against 0.94 with 32 MiB (more output tiles per product). */
    if (b <= 0) b = 64ll << 20;
    return b / 4 > 1 ? b / 4 : 1;
}

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

/* The options checked; opts NULL gives the defaults. */
static wt_status read_options(const char *fn, const wt_conv_options *opts, wt_conv_options *o)
{
    wt_conv_options_init(o);
    wt_status st;
    if (opts && (st = wt_read_options(fn, "wt_conv_options_init", opts, offsetof(wt_conv_options, same), o,
                                      sizeof *o)) != WT_OK)
        return st;
    for (int i = 0; i < 2; i++) {
        if (o->stride[i] <= 0 || o->dilation[i] <= 0)
            return wt_fail(WT_ERR_INVALID_ARGUMENT,
                           "%s: stride and dilation must be positive (stride %lld, dilation %lld)",
                           fn, (long long)o->stride[i], (long long)o->dilation[i]);
        if (o->output_padding[i] < 0)
            return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: output_padding %lld is negative", fn,
                           (long long)o->output_padding[i]);
    }
    for (int i = 0; i < 4; i++)
        if (o->padding[i] < 0)
            return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: padding %lld is negative", fn,
                           (long long)o->padding[i]);
    if (o->groups <= 0)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: groups %lld must be positive", fn,
                       (long long)o->groups);
    return WT_OK;
}

/* x and w as 4-D views ([N, C, H, W], [O, C/g, KH, KW]): 1-D ones get a
 * height of 1 and unbatched ones a batch of 1. */
static wt_status as_4d(const char *fn, const wt_tensor *x, const wt_tensor *w, int spatial,
                       wt_tensor **x4, wt_tensor **w4, bool *unbatched)
{
    char b1[160];
    *x4 = *w4 = NULL;
    if (x->ndim != spatial + 2 && x->ndim != spatial + 1)
        return wt_fail(WT_ERR_SHAPE, "%s: x must have %d or %d axes, got %s", fn, spatial + 1,
                       spatial + 2, wt_shape_str(x->ndim, x->shape, b1, sizeof b1));
    if (w->ndim != spatial + 2)
        return wt_fail(WT_ERR_SHAPE, "%s: weight must have %d axes, got %s", fn, spatial + 2,
                       wt_shape_str(w->ndim, w->shape, b1, sizeof b1));
    *unbatched = x->ndim == spatial + 1;
    int64_t shape[4], strides[4];
    /* Axis i of the 4-D view is axis src[i] of x, or a new one (-1). */
    int src[4] = {0, 1, 2, 3};
    if (spatial == 1) src[2] = -1, src[3] = 2;
    if (*unbatched)
        for (int i = 0; i < 4; i++) src[i] = i == 0 || src[i] < 0 ? -1 : src[i] - 1;
    for (int i = 0; i < 4; i++) {
        shape[i] = src[i] >= 0 ? x->shape[src[i]] : 1;
        strides[i] = src[i] >= 0 ? x->strides[src[i]] : 0;
    }
    wt_status st = wt_tensor_view(x, 4, shape, strides, x->offset, x4);
    if (st != WT_OK) return st;
    for (int i = 0; i < 4; i++) {
        int s = spatial == 2 ? i : (int[]){0, 1, -1, 2}[i];
        shape[i] = s >= 0 ? w->shape[s] : 1;
        strides[i] = s >= 0 ? w->strides[s] : 0;
    }
    if ((st = wt_tensor_view(w, 4, shape, strides, w->offset, w4)) != WT_OK) {
        wt_tensor_release(*x4);
        *x4 = NULL;
    }
    return st;
}

static wt_status check_bias(const char *fn, const wt_tensor *x, const wt_tensor *bias, int64_t O)
{
    if (!bias) return WT_OK;
    wt_status st = wt_check_input(fn, bias);
    if (st != WT_OK || (st = wt_check_same_context(fn, x, bias)) != WT_OK) return st;
    if (bias->ndim != 1 || bias->shape[0] != O)
        return wt_fail(WT_ERR_SHAPE, "%s: bias must have shape [%lld]", fn, (long long)O);
    return WT_OK;
}

/* Fills in the window of a (non-transposed) convolution along one axis:
 * padding before/after (resolved for "same") and the output size. */
static wt_status forward_axis(const char *fn, const char *axis, int64_t in, int64_t k, int64_t s,
                              int64_t d, bool same, const int64_t pad_in[2], int64_t *pad_before,
                              int64_t *pad_after, int64_t *out)
{
    int64_t before = pad_in[0], after = pad_in[1], span, padded;
    /* Options near INT64_MAX must not overflow into a plausible size. */
    if (__builtin_mul_overflow(d, k - 1, &span) || span >= ((int64_t)1 << 62) || s >= ((int64_t)1 << 62) ||
        __builtin_add_overflow(in, before, &padded) || __builtin_add_overflow(padded, after, &padded))
        return wt_fail(WT_ERR_SHAPE, "%s: kernel %lld, dilation %lld, stride %lld and padding overflow the %s", fn,
                       (long long)k, (long long)d, (long long)s, axis);
    span += 1;
    if (same) {
        int64_t o = (in + s - 1) / s;
        int64_t total = (o - 1) * s + span - in;
        if (total < 0) total = 0;
        before = total / 2;
        after = total - before;
    }
    if (in + before + after < span)
        return wt_fail(WT_ERR_SHAPE,
                       "%s: the kernel spans %lld %s, more than the padded input's %lld", fn,
                       (long long)span, axis, (long long)(in + before + after));
    *pad_before = before, *pad_after = after;
    *out = (in + before + after - span) / s + 1;
    return WT_OK;
}

/* ------------------------------------------------------------- conv2d */

/* A 1x1 convolution with unit stride and no padding over planes stored
 * row after row is a matrix product on x itself, without im2col: batched
 * over the images with one group (w's batch stride 0), over the groups
 * with one image. The product lands in out as it is (a bias is added
 * after, in one pass). */
static bool pointwise_fits(const wt_tensor *x, const wt_window2d *win, int64_t G)
{
    return (G == 1 || x->shape[0] == 1) && win->kernel_h == 1 && win->kernel_w == 1 &&
           win->stride_h == 1 && win->stride_w == 1 && win->pad_top == 0 && win->pad_bottom == 0 &&
           win->pad_left == 0 && win->pad_right == 0 && x->strides[3] == 1 &&
           (x->shape[2] == 1 || x->strides[2] == x->shape[3]);
}

static wt_status conv_pointwise(const wt_tensor *x, const wt_tensor *w, int64_t G, wt_tensor *out)
{
    wt_context *ctx = wt_ctx_of(x);
    const int64_t N = x->shape[0], C = x->shape[1], P = x->shape[2] * x->shape[3], O = w->shape[0];
    const int64_t Cg = C / G, Og = O / G;
    int64_t ash[3] = {N, O, C}, ast[3] = {0, C, 1};
    int64_t bsh[3] = {N, C, P}, bst[3] = {x->strides[0], x->strides[1], 1};
    int64_t osh[3] = {N, O, P}, ost[3] = {O * P, P, 1};
    if (G > 1) { /* one image */
        ash[0] = bsh[0] = osh[0] = G;
        ash[1] = osh[1] = Og, ash[2] = bsh[1] = Cg;
        ast[0] = Og * Cg, ast[1] = Cg;
        bst[0] = Cg * x->strides[1];
        ost[0] = Og * P;
    }
    wt_tensor *av = NULL, *bv = NULL, *ov = NULL;
    wt_status st = wt_tensor_view(w, 3, ash, ast, w->offset, &av);
    if (st == WT_OK) st = wt_tensor_view(x, 3, bsh, bst, x->offset, &bv);
    if (st == WT_OK) st = wt_tensor_view(out, 3, osh, ost, 0, &ov);
    if (st == WT_OK) st = wt_node_run(ctx, &(wt_node){.kind = WT_NODE_MATMUL, .in = {av, bv}, .out = {ov}});
    wt_tensor_release(av);
    wt_tensor_release(bv);
    wt_tensor_release(ov);
    return st;
}

/* out [N, O, OH, OW] = conv of x [N, C, H, W] with w [O, C/G, KH, KW]
 * (contiguous) through im2col and the backend's matmul. */
static wt_status conv_forward(const wt_tensor *x, const wt_tensor *w, const wt_tensor *bias,
                              const wt_window2d *win, int64_t G, wt_tensor *out)
{
    wt_context *ctx = wt_ctx_of(x);
    const int64_t N = x->shape[0], C = x->shape[1], O = w->shape[0];
    const int64_t OH = win->out_h, OW = win->out_w, P = OH * OW;
    const int64_t KG = (C / G) * win->kernel_h * win->kernel_w, Og = O / G;
    const int64_t per_col = C * win->kernel_h * win->kernel_w + O;
    const int64_t budget = chunk_floats();
    int64_t nimg = 1, rows = OH;
    if (per_col * P <= budget) {
        nimg = min64(N, budget / (per_col * P));
    } else {
        rows = budget / (per_col * OW);
        rows = rows < 1 ? 1 : min64(rows, OH);
    }
    wt_status st = WT_OK;
    for (int64_t n0 = 0; st == WT_OK && n0 < N; n0 += nimg) {
        const int64_t ni = min64(nimg, N - n0);
        for (int64_t oy0 = 0; st == WT_OK && oy0 < OH; oy0 += rows) {
            const int64_t nr = min64(rows, OH - oy0), ncols = ni * nr * OW;
            wt_tensor *xv = NULL, *col = NULL, *av = NULL, *colv = NULL, *prod = NULL, *pv = NULL, *ov = NULL;
            int64_t xshape[4] = {ni, C, x->shape[2], x->shape[3]};
            int64_t cshape[2] = {C * win->kernel_h * win->kernel_w, ncols};
            /* Batched over the groups: [G, Og, KG] @ [G, KG, ncols]. */
            int64_t ash[3] = {G, Og, KG}, ast[3] = {Og * KG, KG, 1};
            int64_t bsh[3] = {G, KG, ncols}, bst[3] = {KG * ncols, ncols, 1};
            int64_t psh[3] = {G, Og, ncols}, pst[3] = {Og * ncols, ncols, 1};
            /* Whole images and no bias: the product lands in out. With one
             * group it is batched over the images instead, image i's
             * columns P apart, so that it lands in NCHW order. */
            const bool direct = !bias && nr == OH && (ni == 1 || G == 1);
            if (direct && ni > 1) {
                ash[0] = bsh[0] = psh[0] = ni;
                ast[0] = 0;
                bsh[2] = psh[2] = P, bst[0] = P;
                pst[0] = O * P, pst[1] = P;
            }
            if ((st = wt_tensor_view(x, 4, xshape, x->strides, x->offset + n0 * x->strides[0], &xv)) != WT_OK ||
                (st = wt_tensor_alloc(ctx, WT_F32, 2, cshape, &col)) != WT_OK ||
                (st = wt_node_run(ctx, &(wt_node){.kind = WT_NODE_IM2COL, .in = {xv}, .out = {col}, .p.window = {*win, oy0, nr, 0}})) != WT_OK ||
                (st = wt_tensor_view(w, 3, ash, ast, w->offset, &av)) != WT_OK ||
                (st = wt_tensor_view(col, 3, bsh, bst, 0, &colv)) != WT_OK)
                goto next;
            if (direct)
                st = wt_tensor_view(out, 3, psh, pst, n0 * O * P, &pv);
            else if ((st = wt_tensor_alloc(ctx, WT_F32, 3, psh, &prod)) == WT_OK)
                st = wt_tensor_view(prod, 3, psh, pst, 0, &pv);
            if (st != WT_OK || (st = wt_node_run(ctx, &(wt_node){.kind = WT_NODE_MATMUL, .in = {av, colv}, .out = {pv}})) != WT_OK || direct) goto next;
            /* The product [O, ni * nr * OW] into out's rows, plus the bias:
             * col2im with a 1x1 window is that store. */
            {
                int64_t oshape[4] = {ni, O, nr, OW};
                wt_window2d id = {.in_h = nr, .in_w = OW, .out_h = nr, .out_w = OW,
                                  .kernel_h = 1, .kernel_w = 1, .stride_h = 1, .stride_w = 1,
                                  .dilation_h = 1, .dilation_w = 1};
                if ((st = wt_tensor_view(out, 4, oshape, out->strides, n0 * O * P + oy0 * OW, &ov)) == WT_OK)
                    st = wt_node_run(ctx, &(wt_node){.kind = WT_NODE_COL2IM, .in = {prod, bias}, .out = {ov}, .p.window = {id, 0, 0, 0}});
            }
        next:
            wt_tensor_release(xv);
            wt_tensor_release(col);
            wt_tensor_release(av);
            wt_tensor_release(colv);
            wt_tensor_release(prod);
            wt_tensor_release(pv);
            wt_tensor_release(ov);
        }
    }
    return st;
}

/* The shared body of conv2d and conv1d on 4-D views and 2-D options.
 * f16 operands (all of them) go to the backend's own kernel alone: its
 * WT_ERR_UNSUPPORTED comes back, and the caller reruns the work in f32. */
static wt_status conv_run(const char *fn, const wt_tensor *x, const wt_tensor *w,
                          const wt_tensor *bias, const wt_conv_options *o, int spatial,
                          wt_tensor **out)
{
    const wt_dtype dt = x->dtype;
    wt_tensor *x4 = NULL, *w4 = NULL, *wc = NULL, *bc = NULL, *t = NULL;
    bool unbatched = false;
    char b1[160], b2[160];
    wt_status st = as_4d(fn, x, w, spatial, &x4, &w4, &unbatched);
    if (st != WT_OK) return st;
    const int64_t C = x4->shape[1], O = w4->shape[0], G = o->groups;
    wt_window2d win = {.in_h = x4->shape[2], .in_w = x4->shape[3],
                       .kernel_h = w4->shape[2], .kernel_w = w4->shape[3],
                       .stride_h = o->stride[0], .stride_w = o->stride[1],
                       .dilation_h = o->dilation[0], .dilation_w = o->dilation[1]};
    if (C % G != 0 || O % G != 0) {
        st = wt_fail(WT_ERR_INVALID_ARGUMENT,
                     "%s: groups %lld must divide the input channels %lld and the output channels %lld",
                     fn, (long long)G, (long long)C, (long long)O);
        goto done;
    }
    if (C == 0 || w4->shape[1] != C / G || win.kernel_h == 0 || win.kernel_w == 0) {
        st = wt_fail(WT_ERR_SHAPE, "%s: weight %s does not fit x %s with %lld groups", fn,
                     wt_shape_str(w->ndim, w->shape, b1, sizeof b1),
                     wt_shape_str(x->ndim, x->shape, b2, sizeof b2), (long long)G);
        goto done;
    }
    if ((st = check_bias(fn, x, bias, O)) != WT_OK ||
        (st = forward_axis(fn, "rows", win.in_h, win.kernel_h, win.stride_h, win.dilation_h, o->same,
                           o->padding, &win.pad_top, &win.pad_bottom, &win.out_h)) != WT_OK ||
        (st = forward_axis(fn, "columns", win.in_w, win.kernel_w, win.stride_w, win.dilation_w,
                           o->same, o->padding + 2, &win.pad_left, &win.pad_right, &win.out_w)) != WT_OK)
        goto done;
    wt_context *ctx = wt_ctx_of(x);
    int64_t oshape[4] = {x4->shape[0], O, win.out_h, win.out_w};
    if ((st = wt_tensor_alloc(ctx, dt, 4, oshape, &t)) != WT_OK) goto done;
    if (t->numel > 0) {
        if ((!bias || (st = wt_contiguous(bias, &bc)) == WT_OK) && (st = wt_contiguous(w4, &wc)) == WT_OK) {
            /* The backend's own kernel where it has one for this shape. */
            st = wt_backend_runs(ctx, WT_NODE_CONV2D) ? wt_node_run(ctx, &(wt_node){.kind = WT_NODE_CONV2D, .in = {x4, wc, bc}, .out = {t}, .p.window = {win, 0, 0, G}}) : WT_ERR_UNSUPPORTED;
            if (st == WT_ERR_UNSUPPORTED && dt != WT_F32) {
                /* the caller reruns it in f32 */
            } else if (st == WT_ERR_UNSUPPORTED && (!wt_backend_runs(ctx, WT_NODE_IM2COL) || !wt_backend_runs(ctx, WT_NODE_COL2IM))) {
                st = wt_fail(WT_ERR_UNSUPPORTED, "%s: not available on the %s backend", fn, ctx->ops->name);
            } else if (st == WT_ERR_UNSUPPORTED && pointwise_fits(x4, &win, G)) {
                if ((st = conv_pointwise(x4, wc, G, t)) == WT_OK && bc) {
                    wt_tensor *biased = NULL;
                    st = wt_channel_norm(t, NULL, NULL, NULL, bc, 0.0f, &biased);
                    wt_tensor_release(t);
                    t = biased;
                }
            } else if (st == WT_ERR_UNSUPPORTED) {
                st = conv_forward(x4, wc, bc, &win, G, t);
            }
        }
        if (st != WT_OK) goto done;
    }
    /* Back to the caller's rank: drop the added axes. */
    int64_t rshape[4];
    int nd = 0;
    if (!unbatched) rshape[nd++] = oshape[0];
    rshape[nd++] = O;
    if (spatial == 2) rshape[nd++] = win.out_h;
    rshape[nd++] = win.out_w;
    st = wt_reshape(t, nd, rshape, out);
done:
    wt_tensor_release(x4);
    wt_tensor_release(w4);
    wt_tensor_release(wc);
    wt_tensor_release(bc);
    wt_tensor_release(t);
    return st;
}

/* Common checks; with an f16 input, reruns fn's body in f32. */
typedef wt_status (*conv_fn)(const wt_tensor *, const wt_tensor *, const wt_tensor *,
                             const wt_conv_options *, wt_tensor **);

static wt_status conv_prologue(const char *fn, const wt_tensor *x, const wt_tensor *w,
                               const wt_tensor *bias, wt_tensor **out)
{
    wt_status st = wt_check_out(fn, out);
    if (st != WT_OK || (st = wt_check_input(fn, x)) != WT_OK || (st = wt_check_input(fn, w)) != WT_OK ||
        (st = wt_check_same_context(fn, x, w)) != WT_OK)
        return st;
    if (bias && ((st = wt_check_input(fn, bias)) != WT_OK || (st = wt_check_same_context(fn, x, bias)) != WT_OK))
        return st;
    return WT_OK;
}

static wt_status conv_lifted(conv_fn f, const wt_tensor *x, const wt_tensor *w, const wt_tensor *bias,
                             const wt_conv_options *opts, wt_tensor **out)
{
    wt_lifted l;
    wt_tensor *r = NULL;
    wt_status st = wt_lift_f16(x, w, bias, &l);
    if (st == WT_OK) st = f(l.in[0], l.in[1], l.in[2], opts, &r);
    wt_lifted_release(&l);
    return wt_land(st, r, l.result, out);
}

/* The options as the autograd record keeps them (the defaults where the
 * caller's struct is NULL or older). */
static wt_grad_params grad_params(const wt_conv_options *opts)
{
    wt_grad_params p;
    memset(&p, 0, sizeof p);
    wt_conv_options_init(&p.o.conv);
    if (opts) (void)wt_read_options("", "", opts, sizeof(uint32_t), &p.o.conv, sizeof p.o.conv);
    return p;
}

/* Every operand f16: the backend may run it natively (conv_run). */
static bool all_f16(const wt_tensor *x, const wt_tensor *w, const wt_tensor *bias)
{
    return x->dtype == WT_F16 && w->dtype == WT_F16 && (!bias || bias->dtype == WT_F16);
}

wt_status wt_conv2d(const wt_tensor *x, const wt_tensor *w, const wt_tensor *bias,
                    const wt_conv_options *opts, wt_tensor **out)
{
    WT_GRAD_HOOK((x, w, bias, NULL), 1, out, wt_conv2d(x, w, bias, opts, out),
                 .op = WT_OP_CONV2D, .nin = 3, .in = {x, w, bias}, .p = grad_params(opts));
    const char *fn = "wt_conv2d";
    wt_status st = conv_prologue(fn, x, w, bias, out);
    if (st != WT_OK) return st;
    if (wt_has_f16(x, w, bias) && !all_f16(x, w, bias)) return conv_lifted(wt_conv2d, x, w, bias, opts, out);
    wt_conv_options o;
    if ((st = read_options(fn, opts, &o)) != WT_OK) return st;
    st = conv_run(fn, x, w, bias, &o, 2, out);
    if (st == WT_ERR_UNSUPPORTED && x->dtype == WT_F16) return conv_lifted(wt_conv2d, x, w, bias, opts, out);
    return st;
}

wt_status wt_conv1d(const wt_tensor *x, const wt_tensor *w, const wt_tensor *bias,
                    const wt_conv_options *opts, wt_tensor **out)
{
    WT_GRAD_HOOK((x, w, bias, NULL), 1, out, wt_conv1d(x, w, bias, opts, out),
                 .op = WT_OP_CONV1D, .nin = 3, .in = {x, w, bias}, .p = grad_params(opts));
    const char *fn = "wt_conv1d";
    wt_status st = conv_prologue(fn, x, w, bias, out);
    if (st != WT_OK) return st;
    if (wt_has_f16(x, w, bias) && !all_f16(x, w, bias)) return conv_lifted(wt_conv1d, x, w, bias, opts, out);
    wt_conv_options o, o2;
    if ((st = read_options(fn, opts, &o)) != WT_OK) return st;
    /* The one axis becomes the columns of a plane of height 1. */
    wt_conv_options_init(&o2);
    o2.stride[1] = o.stride[0];
    o2.dilation[1] = o.dilation[0];
    o2.padding[2] = o.padding[0];
    o2.padding[3] = o.padding[1];
    o2.groups = o.groups;
    o2.same = o.same;
    st = conv_run(fn, x, w, bias, &o2, 1, out);
    if (st == WT_ERR_UNSUPPORTED && x->dtype == WT_F16) return conv_lifted(wt_conv1d, x, w, bias, opts, out);
    return st;
}

/* --------------------------------------------------- conv_transpose2d */

/* out channels [o0, o0 + ob) of groups [g0, g0 + gn) for images
 * [n0, n0 + ni): col = w_g^T @ x_g, then col2im (with the bias) into out.
 * xg: x's channels of those groups as [gn, Cg, ni*H*W] (contiguous rows). */
static wt_status transposed_block(const wt_tensor *xg, const wt_tensor *w, const wt_tensor *bias,
                                  const wt_window2d *win, int64_t n0, int64_t ni, int64_t g0,
                                  int64_t gn, int64_t o0, int64_t ob, wt_tensor *out)
{
    wt_context *ctx = wt_ctx_of(xg);
    const int64_t Cg = xg->shape[1], Og = w->shape[1], KK = win->kernel_h * win->kernel_w;
    const int64_t ncols = xg->shape[2];
    /* w [C, Og, KH, KW] (contiguous): group g's [Cg, Og*KK] block, read
     * transposed; rows o*KK + k for o in [o0, o0 + ob). */
    int64_t ashape[3] = {gn, ob * KK, Cg}, astr[3] = {Cg * Og * KK, 1, Og * KK};
    int64_t cshape[3] = {gn, ob * KK, ncols};
    int64_t oshape[4] = {ni, gn * ob, out->shape[2], out->shape[3]};
    wt_tensor *av = NULL, *col = NULL, *ov = NULL, *bv = NULL;
    wt_status st = wt_tensor_view(w, 3, ashape, astr, w->offset + g0 * Cg * Og * KK + o0 * KK, &av);
    if (st == WT_OK) st = wt_tensor_alloc(ctx, WT_F32, 3, cshape, &col);
    if (st == WT_OK) st = wt_node_run(ctx, &(wt_node){.kind = WT_NODE_MATMUL, .in = {av, xg}, .out = {col}});
    const int64_t c0 = g0 * Og + o0;
    if (st == WT_OK && bias) {
        int64_t bshape[1] = {gn * ob};
        st = wt_tensor_view(bias, 1, bshape, bias->strides, bias->offset + c0 * bias->strides[0], &bv);
    }
    if (st == WT_OK)
        st = wt_tensor_view(out, 4, oshape, out->strides, n0 * out->strides[0] + c0 * out->strides[1], &ov);
    if (st == WT_OK) st = wt_node_run(ctx, &(wt_node){.kind = WT_NODE_COL2IM, .in = {col, bv}, .out = {ov}, .p.window = {*win, 0, 0, 0}});
    wt_tensor_release(av);
    wt_tensor_release(col);
    wt_tensor_release(ov);
    wt_tensor_release(bv);
    return st;
}

/* x's images [n0, n0 + ni) as [G, Cg, ni*H*W], contiguous rows. */
static wt_status gather_images(const wt_tensor *x, int64_t G, int64_t n0, int64_t ni, wt_tensor **xg)
{
    const int64_t C = x->shape[1], H = x->shape[2], W = x->shape[3];
    int64_t gshape[3] = {G, C / G, ni * H * W}, gstr[3] = {(C / G) * ni * H * W, ni * H * W, 1};
    *xg = NULL;
    if (ni == 1 && x->strides[3] == 1 && x->strides[2] == W && x->strides[1] == H * W) {
        gstr[0] = (C / G) * H * W;
        return wt_tensor_view(x, 3, gshape, gstr, x->offset + n0 * x->strides[0], xg);
    }
    /* [C, ni, H, W] gathered into a contiguous copy. */
    int64_t pshape[4] = {C, ni, H, W}, pstr[4] = {x->strides[1], x->strides[0], x->strides[2], x->strides[3]};
    wt_tensor *pv = NULL, *copy = NULL;
    wt_status st = wt_tensor_view(x, 4, pshape, pstr, x->offset + n0 * x->strides[0], &pv);
    if (st == WT_OK) st = wt_copy(pv, &copy);
    if (st == WT_OK) st = wt_tensor_view(copy, 3, gshape, gstr, 0, xg);
    wt_tensor_release(pv);
    wt_tensor_release(copy);
    return st;
}

static wt_status conv_transposed(const wt_tensor *x, const wt_tensor *w, const wt_tensor *bias,
                                 const wt_window2d *win, int64_t G, wt_tensor *out)
{
    const int64_t N = x->shape[0], C = x->shape[1], HW = x->shape[2] * x->shape[3];
    const int64_t Og = w->shape[1], KK = win->kernel_h * win->kernel_w, O = Og * G;
    const int64_t budget = chunk_floats();
    const int64_t per_image = (C + O * KK) * HW;
    int64_t nimg = per_image <= budget ? min64(N, budget / per_image) : 1;
    /* One image too large: blocks of output channels, group by group. */
    const bool split = per_image > budget;
    int64_t ob = Og;
    if (split) {
        ob = (budget - C * HW) / (KK * HW);
        ob = ob < 1 ? 1 : min64(ob, Og);
    }
    wt_tensor *wc = NULL;
    wt_status st = wt_contiguous(w, &wc);
    for (int64_t n0 = 0; st == WT_OK && n0 < N; n0 += nimg) {
        const int64_t ni = min64(nimg, N - n0);
        wt_tensor *xg = NULL, *xgv = NULL;
        if ((st = gather_images(x, G, n0, ni, &xg)) != WT_OK) break;
        if (!split) {
            st = transposed_block(xg, wc, bias, win, n0, ni, 0, G, 0, Og, out);
        } else {
            for (int64_t g = 0; st == WT_OK && g < G; g++) {
                int64_t vshape[3] = {1, xg->shape[1], xg->shape[2]};
                st = wt_tensor_view(xg, 3, vshape, xg->strides, xg->offset + g * xg->strides[0], &xgv);
                for (int64_t o0 = 0; st == WT_OK && o0 < Og; o0 += ob)
                    st = transposed_block(xgv, wc, bias, win, n0, ni, g, 1, o0, min64(ob, Og - o0), out);
                wt_tensor_release(xgv);
                xgv = NULL;
            }
        }
        wt_tensor_release(xg);
    }
    wt_tensor_release(wc);
    return st;
}

/* The backend's own transposed convolution, with w [C, O/G, KH, KW]
 * regrouped as [O, C/G, KH, KW] (what it takes); WT_ERR_UNSUPPORTED when
 * it has none for this shape. */
static wt_status transposed_own(const wt_tensor *x, const wt_tensor *w, const wt_tensor *bias,
                                const wt_window2d *win, int64_t G, wt_tensor *out)
{
    wt_context *ctx = wt_ctx_of(x);
    if (!wt_backend_runs(ctx, WT_NODE_CONV_TRANSPOSE2D)) return WT_ERR_UNSUPPORTED;
    const int64_t C = w->shape[0], Og = w->shape[1], KH = w->shape[2], KW = w->shape[3], Cg = C / G;
    int64_t vsh[5] = {G, Og, Cg, KH, KW};
    int64_t vst[5] = {Cg * w->strides[0], w->strides[1], w->strides[0], w->strides[2], w->strides[3]};
    int64_t rsh[4] = {G * Og, Cg, KH, KW};
    wt_tensor *v = NULL, *c = NULL, *r = NULL;
    wt_status st = wt_tensor_view(w, 5, vsh, vst, w->offset, &v);
    if (st == WT_OK) st = wt_contiguous(v, &c);
    if (st == WT_OK) st = wt_reshape(c, 4, rsh, &r);
    if (st == WT_OK) st = wt_node_run(ctx, &(wt_node){.kind = WT_NODE_CONV_TRANSPOSE2D, .in = {x, r, bias}, .out = {out}, .p.window = {*win, 0, 0, G}});
    wt_tensor_release(v);
    wt_tensor_release(c);
    wt_tensor_release(r);
    return st;
}

static wt_status transpose_run(const char *fn, const wt_tensor *x, const wt_tensor *w, const wt_tensor *bias,
                               const wt_conv_options *opts, wt_tensor **out);

static wt_status transposed_axis(const char *fn, const char *axis, int64_t in, int64_t k,
                                 int64_t s, int64_t d, int64_t before, int64_t after, int64_t op,
                                 int64_t *out)
{
    if (op >= s && op >= d)
        return wt_fail(WT_ERR_INVALID_ARGUMENT,
                       "%s: output_padding %lld must be smaller than the stride %lld or the dilation %lld",
                       fn, (long long)op, (long long)s, (long long)d);
    int64_t o = 0, span = 0;
    /* Options near INT64_MAX must not overflow into a plausible size. */
    if (in > 0 && (__builtin_mul_overflow(in - 1, s, &o) || __builtin_mul_overflow(d, k - 1, &span) ||
                   __builtin_add_overflow(o, span, &o) || __builtin_add_overflow(o, op + 1, &o) ||
                   __builtin_sub_overflow(o, before, &o) || __builtin_sub_overflow(o, after, &o)))
        return wt_fail(WT_ERR_SHAPE, "%s: %lld input %s with stride %lld and dilation %lld overflow the output size",
                       fn, (long long)in, axis, (long long)s, (long long)d);
    if (in == 0 || o <= 0)
        return wt_fail(WT_ERR_SHAPE, "%s: %lld input %s give %lld output %s", fn, (long long)in, axis,
                       (long long)o, axis);
    *out = o;
    return WT_OK;
}

wt_status wt_conv_transpose2d(const wt_tensor *x, const wt_tensor *w, const wt_tensor *bias,
                              const wt_conv_options *opts, wt_tensor **out)
{
    WT_GRAD_HOOK((x, w, bias, NULL), 1, out, wt_conv_transpose2d(x, w, bias, opts, out),
                 .op = WT_OP_CONV_TRANSPOSE2D, .nin = 3, .in = {x, w, bias}, .p = grad_params(opts));
    const char *fn = "wt_conv_transpose2d";
    wt_status st = conv_prologue(fn, x, w, bias, out);
    if (st != WT_OK) return st;
    if (wt_has_f16(x, w, bias) && !all_f16(x, w, bias)) return conv_lifted(wt_conv_transpose2d, x, w, bias, opts, out);
    st = transpose_run(fn, x, w, bias, opts, out);
    if (st == WT_ERR_UNSUPPORTED && x->dtype == WT_F16) return conv_lifted(wt_conv_transpose2d, x, w, bias, opts, out);
    return st;
}

static wt_status transpose_run(const char *fn, const wt_tensor *x, const wt_tensor *w, const wt_tensor *bias,
                               const wt_conv_options *opts, wt_tensor **out)
{
    wt_status st;
    wt_conv_options o;
    if ((st = read_options(fn, opts, &o)) != WT_OK) return st;
    if (o.same) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: \"same\" padding is not defined here", fn);
    wt_tensor *x4 = NULL, *w4 = NULL, *bc = NULL, *t = NULL;
    bool unbatched = false;
    char b1[160], b2[160];
    if ((st = as_4d(fn, x, w, 2, &x4, &w4, &unbatched)) != WT_OK) return st;
    const int64_t C = x4->shape[1], G = o.groups, O = w4->shape[1] * G;
    wt_window2d win = {.out_h = x4->shape[2], .out_w = x4->shape[3],
                       .kernel_h = w4->shape[2], .kernel_w = w4->shape[3],
                       .stride_h = o.stride[0], .stride_w = o.stride[1],
                       .pad_top = o.padding[0], .pad_bottom = o.padding[1],
                       .pad_left = o.padding[2], .pad_right = o.padding[3],
                       .dilation_h = o.dilation[0], .dilation_w = o.dilation[1]};
    if (C % G != 0) {
        st = wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: groups %lld must divide the input channels %lld",
                     fn, (long long)G, (long long)C);
        goto done;
    }
    if (C == 0 || w4->shape[0] != C || win.kernel_h == 0 || win.kernel_w == 0) {
        st = wt_fail(WT_ERR_SHAPE, "%s: weight %s does not fit x %s (wanted [%lld, O/groups, KH, KW])",
                     fn, wt_shape_str(w->ndim, w->shape, b1, sizeof b1),
                     wt_shape_str(x->ndim, x->shape, b2, sizeof b2), (long long)C);
        goto done;
    }
    if ((st = check_bias(fn, x, bias, O)) != WT_OK ||
        (st = transposed_axis(fn, "rows", win.out_h, win.kernel_h, win.stride_h, win.dilation_h,
                              win.pad_top, win.pad_bottom, o.output_padding[0], &win.in_h)) != WT_OK ||
        (st = transposed_axis(fn, "columns", win.out_w, win.kernel_w, win.stride_w, win.dilation_w,
                              win.pad_left, win.pad_right, o.output_padding[1], &win.in_w)) != WT_OK)
        goto done;
    wt_context *ctx = wt_ctx_of(x);
    int64_t oshape[4] = {x4->shape[0], O, win.in_h, win.in_w};
    if ((st = wt_tensor_alloc(ctx, x->dtype, 4, oshape, &t)) != WT_OK) goto done;
    if (t->numel > 0) {
        if (!bias || (st = wt_contiguous(bias, &bc)) == WT_OK)
            st = transposed_own(x4, w4, bc, &win, G, t);
        if (st == WT_ERR_UNSUPPORTED && x->dtype == WT_F32) {
            st = wt_backend_runs(ctx, WT_NODE_COL2IM) ? conv_transposed(x4, w4, bc, &win, G, t)
                                  : wt_fail(WT_ERR_UNSUPPORTED, "%s: not available on the %s backend", fn,
                                            ctx->ops->name);
        }
        if (st != WT_OK) goto done;
    }
    st = wt_reshape(t, unbatched ? 3 : 4, unbatched ? oshape + 1 : oshape, out);
done:
    wt_tensor_release(x4);
    wt_tensor_release(w4);
    wt_tensor_release(bc);
    wt_tensor_release(t);
    return st;
}
