/* Pooling front-ends: max / average pooling with PyTorch's window rules,
 * adaptive pooling, and global pooling (through the reductions). */
#include "api/api.h"
#include "autograd/tape.h"

#include <string.h>

void wt_pool_options_init(wt_pool_options *opts)
{
    if (!opts) return;
    memset(opts, 0, sizeof *opts);
    opts->struct_size = sizeof *opts;
    opts->dilation[0] = opts->dilation[1] = 1;
    opts->count_include_pad = true;
}

void wt_pool2d_options_init(wt_pool2d_options *opts)
{
    if (!opts) return;
    memset(opts, 0, sizeof *opts);
    opts->struct_size = sizeof *opts;
    opts->dilation[0] = opts->dilation[1] = 1;
    opts->count_include_pad = true;
}

/* x ([N, C, H, W] or [C, H, W]) as a 4-D view. */
static wt_status as_planes(const char *fn, const wt_tensor *x, wt_tensor **x4, bool *unbatched)
{
    char b[160];
    *x4 = NULL;
    if (x->ndim != 3 && x->ndim != 4)
        return wt_fail(WT_ERR_SHAPE, "%s: x must be [N, C, H, W] or [C, H, W], got %s", fn,
                       wt_shape_str(x->ndim, x->shape, b, sizeof b));
    *unbatched = x->ndim == 3;
    int64_t shape[4], strides[4];
    for (int i = 0; i < 4; i++) {
        int s = *unbatched ? i - 1 : i;
        shape[i] = s >= 0 ? x->shape[s] : 1;
        strides[i] = s >= 0 ? x->strides[s] : 0;
    }
    return wt_tensor_view(x, 4, shape, strides, x->offset, x4);
}

/* Output size along one axis (PyTorch's pooling_output_shape). */
wt_status wt_pool_axis_size(const char *fn, const char *axis, int64_t in, int64_t k, int64_t s,
                            int64_t before, int64_t after, int64_t d, bool ceil_mode, bool is_max, int64_t *out)
{
    if (k <= 0 || s <= 0 || before < 0 || after < 0 || d <= 0)
        return wt_fail(WT_ERR_INVALID_ARGUMENT,
                       "%s: kernel %lld and dilation %lld must be positive, stride %lld and padding "
                       "%lld, %lld not negative",
                       fn, (long long)k, (long long)d, (long long)s, (long long)before, (long long)after);
    int64_t span;
    /* A window past 2^62 elements fits no input: refused before it overflows. */
    if (__builtin_mul_overflow(d, k - 1, &span) || span >= ((int64_t)1 << 62) || before >= ((int64_t)1 << 61) ||
        after >= ((int64_t)1 << 61) || s >= ((int64_t)1 << 62))
        return wt_fail(WT_ERR_SHAPE, "%s: a window of %lld x dilation %lld (stride %lld, padding %lld, %lld) is too large",
                       fn, (long long)k, (long long)d, (long long)s, (long long)before, (long long)after);
    span += 1;
    /* PyTorch's limit, on each side: a window never lies in padding only. */
    const int64_t half = (is_max ? span : k) / 2;
    if (before > half || after > half)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: padding %lld, %lld is more than half the %s %lld", fn,
                       (long long)before, (long long)after, is_max ? "dilated kernel" : "kernel",
                       (long long)(is_max ? span : k));
    if (in + before + after < span)
        return wt_fail(WT_ERR_SHAPE, "%s: the window spans %lld %s, more than the padded input's %lld",
                       fn, (long long)span, axis, (long long)(in + before + after));
    int64_t o = (in + before + after - span + (ceil_mode ? s - 1 : 0)) / s + 1;
    /* The last window must start inside the input or its leading padding. */
    if (ceil_mode && (o - 1) * s >= in + before) o--;
    *out = o;
    return WT_OK;
}

/* Runs the backend's pool2d on x (f32, 3-D or 4-D); indices optional. */
static wt_status pool_run(const char *fn, wt_pool2d_desc *d, const wt_tensor *x, wt_tensor **out,
                          wt_tensor **indices)
{
    wt_context *ctx = wt_ctx_of(x);
    wt_tensor *x4 = NULL, *t = NULL, *ti = NULL;
    bool unbatched = false;
    wt_status st = as_planes(fn, x, &x4, &unbatched);
    if (st != WT_OK) return st;
    d->win.in_h = x4->shape[2], d->win.in_w = x4->shape[3];
    int64_t shape[4] = {x4->shape[0], x4->shape[1], d->win.out_h, d->win.out_w};
    if (!wt_backend_runs(ctx, WT_NODE_POOL2D))
        st = wt_fail(WT_ERR_UNSUPPORTED, "%s: not available on the %s backend", fn, ctx->ops->name);
    if (st == WT_OK) st = wt_tensor_alloc(ctx, WT_F32, 4, shape, &t);
    if (st == WT_OK && indices) st = wt_tensor_alloc(ctx, WT_I32, 4, shape, &ti);
    if (st == WT_OK && t->numel > 0) st = wt_node_run(ctx, &(wt_node){.kind = WT_NODE_POOL2D, .in = {x4}, .out = {t, ti}, .p.pool = *d});
    /* Unbatched: drop the added axis (a view; reshape would refuse i32). */
    const int nd = unbatched ? 3 : 4;
    if (st == WT_OK) st = wt_tensor_view(t, nd, shape + (4 - nd), t->strides + (4 - nd), 0, out);
    if (st == WT_OK && indices &&
        (st = wt_tensor_view(ti, nd, shape + (4 - nd), ti->strides + (4 - nd), 0, indices)) != WT_OK) {
        wt_tensor_release(*out);
        *out = NULL;
    }
    wt_tensor_release(x4);
    wt_tensor_release(t);
    wt_tensor_release(ti);
    return st;
}

/* Checks, the f16 lift (x computed in f32, the values landed as f16; the
 * indices are i32 either way), then pool_run. */
static wt_status pool_entry(const char *fn, wt_pool2d_desc *d, const wt_tensor *x, wt_tensor **out,
                            wt_tensor **indices)
{
    if (x->dtype != WT_F16) return pool_run(fn, d, x, out, indices);
    wt_lifted l;
    wt_tensor *r = NULL;
    wt_status st = wt_lift_f16(x, NULL, NULL, &l);
    if (st == WT_OK) st = pool_run(fn, d, l.in[0], &r, indices);
    wt_lifted_release(&l);
    st = wt_land(st, r, l.result, out);
    if (st != WT_OK && indices) {
        wt_tensor_release(*indices);
        *indices = NULL;
    }
    return st;
}

static wt_status check_args(const char *fn, const wt_tensor *x, wt_tensor **out, wt_tensor **indices)
{
    /* indices first: a failure for a NULL out must still clear it. */
    if (indices) *indices = NULL;
    wt_status st = wt_check_out(fn, out);
    if (st == WT_OK) st = wt_check_input(fn, x);
    return st;
}

/* The options as the autograd record keeps them (the defaults where the
 * caller's struct is NULL or older). */
static wt_grad_params grad_params(const wt_pool2d_options *opts)
{
    wt_grad_params p;
    memset(&p, 0, sizeof p);
    wt_pool2d_options_init(&p.o.pool);
    if (opts) (void)wt_read_options("", "", opts, sizeof(uint32_t), &p.o.pool, sizeof p.o.pool);
    return p;
}

static wt_status windowed(const char *fn, bool is_max, const wt_tensor *x, const wt_pool2d_options *opts,
                          wt_tensor **out, wt_tensor **indices)
{
    wt_status st = check_args(fn, x, out, indices);
    if (st != WT_OK) return st;
    if (!opts) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: options are NULL (the kernel size is needed)", fn);
    wt_pool2d_options o;
    wt_pool2d_options_init(&o);
    if ((st = wt_read_options(fn, "wt_pool2d_options_init", opts, sizeof o, &o, sizeof o)) != WT_OK) return st;
    opts = &o;
    if (!is_max && (opts->dilation[0] != 1 || opts->dilation[1] != 1))
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: average pooling takes no dilation", fn);
    if (!is_max && opts->divisor_override < 0)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: divisor_override %lld is negative", fn,
                       (long long)opts->divisor_override);
    if (x->ndim != 3 && x->ndim != 4) {
        char b[160];
        return wt_fail(WT_ERR_SHAPE, "%s: x must be [N, C, H, W] or [C, H, W], got %s", fn,
                       wt_shape_str(x->ndim, x->shape, b, sizeof b));
    }
    wt_pool2d_desc d;
    memset(&d, 0, sizeof d);
    d.op = is_max ? WT_POOL_MAX : WT_POOL_AVG;
    d.count_include_pad = opts->count_include_pad;
    d.divisor = is_max ? 0 : opts->divisor_override;
    wt_window2d *w = &d.win;
    w->kernel_h = opts->kernel[0], w->kernel_w = opts->kernel[1];
    w->stride_h = opts->stride[0] ? opts->stride[0] : opts->kernel[0];
    w->stride_w = opts->stride[1] ? opts->stride[1] : opts->kernel[1];
    w->pad_top = opts->padding[0], w->pad_bottom = opts->padding[1];
    w->pad_left = opts->padding[2], w->pad_right = opts->padding[3];
    w->dilation_h = opts->dilation[0], w->dilation_w = opts->dilation[1];
    const int64_t H = x->shape[x->ndim - 2], W = x->shape[x->ndim - 1];
    if (opts->stride[0] < 0 || opts->stride[1] < 0)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: stride %lldx%lld is negative (0: the kernel)", fn,
                       (long long)opts->stride[0], (long long)opts->stride[1]);
    if ((st = wt_pool_axis_size(fn, "rows", H, w->kernel_h, w->stride_h, w->pad_top, w->pad_bottom,
                                w->dilation_h, opts->ceil_mode, is_max, &w->out_h)) != WT_OK ||
        (st = wt_pool_axis_size(fn, "columns", W, w->kernel_w, w->stride_w, w->pad_left, w->pad_right,
                                w->dilation_w, opts->ceil_mode, is_max, &w->out_w)) != WT_OK)
        return st;
    return pool_entry(fn, &d, x, out, indices);
}

wt_status wt_max_pool2d_v2(const wt_tensor *x, const wt_pool2d_options *opts, wt_tensor **out, wt_tensor **indices)
{
    if (wt_grad_any(x, NULL, NULL, NULL)) {
        wt_grad_call gc = {.op = WT_OP_MAX_POOL2D, .nin = 1, .in = {x}, .p = grad_params(opts)};
        if (wt_grad_begin(&gc)) {
            wt_tensor *own = NULL;
            wt_status st_ = wt_max_pool2d_v2(x, opts, out, &own);
            return wt_grad_end_indexed(&gc, st_, out, own, indices);
        }
    }
    return windowed("wt_max_pool2d_v2", true, x, opts, out, indices);
}

wt_status wt_avg_pool2d_v2(const wt_tensor *x, const wt_pool2d_options *opts, wt_tensor **out)
{
    WT_GRAD_HOOK((x, NULL, NULL, NULL), 1, out, wt_avg_pool2d_v2(x, opts, out),
                 .op = WT_OP_AVG_POOL2D, .nin = 1, .in = {x}, .p = grad_params(opts));
    return windowed("wt_avg_pool2d_v2", false, x, opts, out, NULL);
}

static wt_status adaptive(const char *fn, bool is_max, const wt_tensor *x, int64_t oh, int64_t ow,
                          wt_tensor **out, wt_tensor **indices)
{
    wt_status st = check_args(fn, x, out, indices);
    if (st != WT_OK) return st;
    if (oh <= 0 || ow <= 0)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: output size %lldx%lld must be positive", fn,
                       (long long)oh, (long long)ow);
    if ((x->ndim == 3 || x->ndim == 4) && (x->shape[x->ndim - 1] == 0 || x->shape[x->ndim - 2] == 0))
        return wt_fail(WT_ERR_SHAPE, "%s: the input plane is empty", fn);
    wt_pool2d_desc d;
    memset(&d, 0, sizeof d);
    d.op = is_max ? WT_POOL_ADAPTIVE_MAX : WT_POOL_ADAPTIVE_AVG;
    d.win.out_h = oh, d.win.out_w = ow;
    return pool_entry(fn, &d, x, out, indices);
}

wt_status wt_adaptive_avg_pool2d(const wt_tensor *x, int64_t out_h, int64_t out_w, wt_tensor **out)
{
    WT_GRAD_HOOK((x, NULL, NULL, NULL), 1, out, wt_adaptive_avg_pool2d(x, out_h, out_w, out),
                 .op = WT_OP_ADAPTIVE_AVG_POOL2D, .nin = 1, .in = {x}, .p.i = {out_h, out_w});
    return adaptive("wt_adaptive_avg_pool2d", false, x, out_h, out_w, out, NULL);
}

wt_status wt_adaptive_max_pool2d(const wt_tensor *x, int64_t out_h, int64_t out_w, wt_tensor **out,
                                 wt_tensor **indices)
{
    if (wt_grad_any(x, NULL, NULL, NULL)) {
        wt_grad_call gc = {.op = WT_OP_ADAPTIVE_MAX_POOL2D, .nin = 1, .in = {x}};
        if (wt_grad_begin(&gc)) {
            wt_tensor *own = NULL;
            wt_status st_ = wt_adaptive_max_pool2d(x, out_h, out_w, out, &own);
            return wt_grad_end_indexed(&gc, st_, out, own, indices);
        }
    }
    return adaptive("wt_adaptive_max_pool2d", true, x, out_h, out_w, out, indices);
}

static wt_status global(const char *fn, bool is_max, const wt_tensor *x, wt_tensor **out)
{
    wt_status st = check_args(fn, x, out, NULL);
    if (st != WT_OK) return st;
    if (x->ndim != 3 && x->ndim != 4) {
        char b[160];
        return wt_fail(WT_ERR_SHAPE, "%s: x must be [N, C, H, W] or [C, H, W], got %s", fn,
                       wt_shape_str(x->ndim, x->shape, b, sizeof b));
    }
    int axes[2] = {-2, -1};
    st = is_max ? wt_max(x, 2, axes, true, out) : wt_mean(x, 2, axes, true, out);
    if (st != WT_OK) wt_error_prefix(fn);
    return st;
}

wt_status wt_global_avg_pool2d(const wt_tensor *x, wt_tensor **out)
{
    WT_GRAD_HOOK((x, NULL, NULL, NULL), 1, out, wt_global_avg_pool2d(x, out),
                 .op = WT_OP_GLOBAL_AVG_POOL2D, .nin = 1, .in = {x}, .p = wt_grad_axes(2, (const int[]){-2, -1}, true, 0.0));
    return global("wt_global_avg_pool2d", false, x, out);
}

wt_status wt_global_max_pool2d(const wt_tensor *x, wt_tensor **out)
{
    WT_GRAD_HOOK((x, NULL, NULL, NULL), 1, out, wt_global_max_pool2d(x, out),
                 .op = WT_OP_GLOBAL_MAX_POOL2D, .nin = 1, .in = {x}, .p = wt_grad_axes(2, (const int[]){-2, -1}, true, 0.0));
    return global("wt_global_max_pool2d", true, x, out);
}
