/* Resampling front-ends (wt_interpolate, wt_upsample2d and the backward):
 * the options resolved to the output size and PyTorch's f32 coordinate
 * scales, f16 through f32. */
#include "api/api.h"
#include "autograd/tape.h"

#include <math.h>

void wt_interpolate_options_init(wt_interpolate_options *opts)
{
    if (!opts) return;
    memset(opts, 0, sizeof *opts);
    opts->struct_size = sizeof *opts;
    opts->mode = WT_INTERP_NEAREST;
}

/* Output extents beyond this are refused: the kernels index a plane's
 * rows and columns in 32 bits, and the coordinates are f32 anyway. */
#define MAX_EXTENT ((int64_t)1 << 31)

/* The options against x [N, C, H, W]: the kernel's parameters and the
 * output size (*oh, *ow). */
static wt_status resolve(const char *fn, const wt_tensor *x, const wt_interpolate_options *opts,
                         wt_interp2d *p, int64_t *oh, int64_t *ow)
{
    if (!opts)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: options are NULL (a size or scale factor is needed)", fn);
    wt_interpolate_options o;
    wt_interpolate_options_init(&o);
    wt_status st = wt_read_options(fn, "wt_interpolate_options_init", opts, sizeof o, &o, sizeof o);
    if (st != WT_OK) return st;
    if (o.mode != WT_INTERP_NEAREST && o.mode != WT_INTERP_BILINEAR)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: unknown mode %d", fn, (int)o.mode);
    if (o.align_corners && o.mode == WT_INTERP_NEAREST)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: align_corners applies to bilinear only", fn);
    if (x->ndim != 4) {
        char b[160];
        return wt_fail(WT_ERR_SHAPE, "%s: x must be [N, C, H, W], got %s", fn,
                       wt_shape_str(x->ndim, x->shape, b, sizeof b));
    }
    const bool by_size = o.size[0] != 0 || o.size[1] != 0;
    const bool by_scale = o.scale_factor[0] != 0.0 || o.scale_factor[1] != 0.0;
    if (by_size == by_scale)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: set exactly one of size and scale_factor", fn);
    const int64_t in[2] = {x->shape[2], x->shape[3]};
    if (in[0] == 0 || in[1] == 0) return wt_fail(WT_ERR_SHAPE, "%s: the input plane is empty", fn);
    int64_t out[2];
    float scale[2];
    p->linear = o.mode == WT_INTERP_BILINEAR;
    p->align_corners = o.align_corners;
    for (int a = 0; a < 2; a++) {
        const double sf = o.scale_factor[a];
        if (by_size) {
            if (o.size[a] <= 0)
                return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: size %lldx%lld must be positive", fn,
                               (long long)o.size[0], (long long)o.size[1]);
            out[a] = o.size[a];
        } else {
            if (!(sf > 0.0) || isinf(sf))
                return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: scale_factor %gx%g must be finite and > 0", fn,
                               o.scale_factor[0], o.scale_factor[1]);
            const double e = floor((double)in[a] * sf);
            if (e < 1.0)
                return wt_fail(WT_ERR_SHAPE, "%s: scale_factor %g leaves no output of %lld %s", fn, sf,
                               (long long)in[a], a ? "columns" : "rows");
            out[a] = e < (double)MAX_EXTENT ? (int64_t)e : MAX_EXTENT;
        }
        if (out[a] >= MAX_EXTENT)
            return wt_fail(WT_ERR_SHAPE, "%s: an output extent past 2^31 (from %lld %s)", fn, (long long)in[a],
                           a ? "columns" : "rows");
        /* PyTorch's area_pixel_compute_scale, in f32 like its kernels. */
        if (p->linear && o.align_corners)
            scale[a] = out[a] > 1 ? (float)(in[a] - 1) / (float)(out[a] - 1) : 0.0f;
        else
            scale[a] = by_scale ? (float)(1.0 / sf) : (float)in[a] / (float)out[a];
    }
    p->scale_h = scale[0], p->scale_w = scale[1];
    *oh = out[0], *ow = out[1];
    return WT_OK;
}

/* One node of kind on src (f32) into a new f32 [N, C, rows, cols]. */
static wt_status run(const char *fn, wt_node_kind kind, const wt_tensor *src, const wt_interp2d *p,
                     int64_t rows, int64_t cols, wt_tensor **out)
{
    wt_context *ctx = wt_ctx_of(src);
    if (!wt_backend_runs(ctx, kind))
        return wt_fail(WT_ERR_UNSUPPORTED, "%s: not available on the %s backend", fn, ctx->ops->name);
    const int64_t shape[4] = {src->shape[0], src->shape[1], rows, cols};
    wt_tensor *t = NULL;
    wt_status st = wt_tensor_alloc(ctx, WT_F32, 4, shape, &t);
    if (st == WT_OK && t->numel > 0)
        st = wt_node_run(ctx, &(wt_node){.kind = kind, .in = {src}, .out = {t}, .p.interp = *p});
    if (st != WT_OK) {
        wt_tensor_release(t);
        return st;
    }
    *out = t;
    return WT_OK;
}

/* The options as the autograd record keeps them (the defaults where the
 * caller's struct is NULL or older). */
static wt_grad_params grad_params(const wt_interpolate_options *opts)
{
    wt_grad_params p;
    memset(&p, 0, sizeof p);
    wt_interpolate_options_init(&p.o.interp);
    if (opts) (void)wt_read_options("", "", opts, sizeof(uint32_t), &p.o.interp, sizeof p.o.interp);
    return p;
}

static wt_status forward(const char *fn, const wt_tensor *x, const wt_interpolate_options *opts, wt_tensor **out)
{
    wt_status st = wt_check_out(fn, out);
    if (st != WT_OK || (st = wt_check_input(fn, x)) != WT_OK) return st;
    wt_interp2d p;
    int64_t oh, ow;
    if ((st = resolve(fn, x, opts, &p, &oh, &ow)) != WT_OK) return st;
    if (!wt_has_f16(x, NULL, NULL)) return run(fn, WT_NODE_INTERPOLATE, x, &p, oh, ow, out);
    wt_lifted l;
    wt_tensor *r = NULL;
    if ((st = wt_lift_f16(x, NULL, NULL, &l)) == WT_OK) st = run(fn, WT_NODE_INTERPOLATE, l.in[0], &p, oh, ow, &r);
    wt_lifted_release(&l);
    return wt_land(st, r, l.result, out);
}

wt_status wt_interpolate(const wt_tensor *x, const wt_interpolate_options *opts, wt_tensor **out)
{
    WT_GRAD_HOOK((x, NULL, NULL, NULL), 1, out, wt_interpolate(x, opts, out),
                 .op = WT_OP_INTERPOLATE, .nin = 1, .in = {x}, .p = grad_params(opts));
    return forward("wt_interpolate", x, opts, out);
}

wt_status wt_upsample2d(const wt_tensor *x, double scale_factor, wt_interp_mode mode, wt_tensor **out)
{
    if (wt_grad_any(x, NULL, NULL, NULL)) {
        wt_interpolate_options o;
        wt_interpolate_options_init(&o);
        o.mode = mode;
        o.scale_factor[0] = o.scale_factor[1] = scale_factor;
        wt_grad_call gc = {.op = WT_OP_UPSAMPLE2D, .nin = 1, .in = {x}, .p = grad_params(&o)};
        if (wt_grad_begin(&gc)) return wt_grad_end(&gc, wt_upsample2d(x, scale_factor, mode, out), 1, out);
    }
    const char *fn = "wt_upsample2d";
    if (!(scale_factor > 0.0) || isinf(scale_factor)) {
        if (out) *out = NULL;
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: scale_factor %g must be finite and > 0", fn, scale_factor);
    }
    wt_interpolate_options o;
    wt_interpolate_options_init(&o);
    o.mode = mode;
    o.scale_factor[0] = o.scale_factor[1] = scale_factor;
    return forward(fn, x, &o, out);
}

wt_status wt_interpolate_backward(const wt_tensor *dy, const wt_tensor *x, const wt_interpolate_options *opts,
                                  wt_tensor **dx)
{
    const char *fn = "wt_interpolate_backward";
    wt_status st = wt_check_out(fn, dx);
    if (st != WT_OK || (st = wt_check_input(fn, dy)) != WT_OK || (st = wt_check_input(fn, x)) != WT_OK ||
        (st = wt_check_same_context(fn, dy, x)) != WT_OK)
        return st;
    wt_interp2d p;
    int64_t oh, ow;
    if ((st = resolve(fn, x, opts, &p, &oh, &ow)) != WT_OK) return st;
    if (dy->ndim != 4 || dy->shape[0] != x->shape[0] || dy->shape[1] != x->shape[1] || dy->shape[2] != oh ||
        dy->shape[3] != ow) {
        char b[160];
        return wt_fail(WT_ERR_SHAPE, "%s: dy is %s, the forward's output is [%lld, %lld, %lld, %lld]", fn,
                       wt_shape_str(dy->ndim, dy->shape, b, sizeof b), (long long)x->shape[0],
                       (long long)x->shape[1], (long long)oh, (long long)ow);
    }
    const int64_t H = x->shape[2], W = x->shape[3];
    if (!wt_has_f16(dy, NULL, NULL)) return run(fn, WT_NODE_INTERPOLATE_BACKWARD, dy, &p, H, W, dx);
    /* Gradients are f32 whatever dy's dtype (the training section). */
    wt_tensor *g = NULL;
    if ((st = wt_cast(dy, WT_F32, &g)) != WT_OK) return st;
    st = run(fn, WT_NODE_INTERPOLATE_BACKWARD, g, &p, H, W, dx);
    wt_tensor_release(g);
    return st;
}
