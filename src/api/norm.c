/* Batch and group normalisation: statistics from the backend's
 * channel_moments (batch norm) or the row-wise layer norm (group norm),
 * then one pass of the backend's per-channel map (channel_norm). Batch
 * statistics take two passes over x (mean, then squared deviations from
 * it), so a large mean costs no precision. */
#include "api/api.h"
#include "autograd/tape.h"

#include <math.h>
#include <string.h>

void wt_batch_norm_options_init(wt_batch_norm_options *opts)
{
    if (!opts) return;
    memset(opts, 0, sizeof *opts);
    opts->struct_size = sizeof *opts;
    opts->momentum = 0.1;
    opts->eps = 1e-5;
}

static wt_status check_channels(const char *fn, const char *what, const wt_tensor *x, const wt_tensor *p,
                                int64_t C)
{
    if (!p) return WT_OK;
    wt_status st = wt_check_input(fn, p);
    if (st != WT_OK || (st = wt_check_same_context(fn, x, p)) != WT_OK) return st;
    if (p->ndim != 1 || p->shape[0] != C)
        return wt_fail(WT_ERR_SHAPE, "%s: %s must have shape [%lld]", fn, what, (long long)C);
    return WT_OK;
}

/* x [N, C, ...] as [N, C, S]: a view when the trailing axes step as one,
 * else a view of a contiguous copy. */
static wt_status as_ncs(const wt_tensor *x, wt_tensor **out)
{
    int64_t S, step;
    int64_t vshape[3] = {x->shape[0], x->shape[1], 0}, vstr[3] = {x->strides[0], x->strides[1], 0};
    if (wt_fold_axes(x, 2, x->ndim, &S, &step)) {
        vshape[2] = S, vstr[2] = step;
        return wt_tensor_view(x, 3, vshape, vstr, x->offset, out);
    }
    wt_tensor *c = NULL;
    wt_status st = wt_contiguous(x, &c);
    if (st == WT_OK) {
        vshape[2] = S, vstr[0] = x->shape[1] * S, vstr[1] = S, vstr[2] = 1;
        st = wt_tensor_view(c, 3, vshape, vstr, c->offset, out);
    }
    wt_tensor_release(c);
    return st;
}

/* out = (x - mean[c]) / sqrt(var[c] + eps) * weight[c] + bias[c] along
 * axis 1 of x, in one pass; mean, var, weight, bias are [C] (f32 or f16)
 * or NULL (0, 1, 1, 0). */
wt_status wt_channel_norm(const wt_tensor *x, const wt_tensor *mean, const wt_tensor *var,
                          const wt_tensor *weight, const wt_tensor *bias, float eps, wt_tensor **out)
{
    wt_context *ctx = wt_ctx_of(x);
    const int64_t C = x->shape[1];
    if (!wt_backend_runs(ctx, WT_NODE_CHANNEL_NORM))
        return wt_fail(WT_ERR_UNSUPPORTED, "normalisation: not available on the %s backend", ctx->ops->name);
    wt_tensor *t = NULL, *stats = NULL, *xv = NULL, *tv = NULL;
    wt_status st = wt_tensor_alloc(ctx, WT_F32, x->ndim, x->shape, &t);
    if (st != WT_OK || t->numel == 0) goto done;
    int64_t sshape[2] = {4, C};
    if ((st = wt_tensor_alloc(ctx, WT_F32, 2, sshape, &stats)) != WT_OK) goto done;
    const wt_tensor *rows[4] = {mean, var, weight, bias};
    for (int k = 0; k < 4 && st == WT_OK; k++) {
        wt_tensor *row = NULL;
        int64_t one = 1;
        if ((st = wt_tensor_view(stats, 1, &C, &one, k * C, &row)) == WT_OK)
            st = rows[k] ? wt_node_run(ctx, &(wt_node){.kind = WT_NODE_CAST, .in = {rows[k]}, .out = {row}}) : wt_fill_f32(ctx, row, k == 1 || k == 2 ? 1.0f : 0.0f);
        wt_tensor_release(row);
    }
    if (st == WT_OK && (st = as_ncs(x, &xv)) == WT_OK &&
        (st = wt_tensor_view(t, 3, xv->shape, (int64_t[3]){C * xv->shape[2], xv->shape[2], 1}, 0, &tv)) == WT_OK)
        st = wt_node_run(ctx, &(wt_node){.kind = WT_NODE_CHANNEL_NORM, .in = {xv, stats}, .out = {tv}, .p.eps = eps});
done:
    wt_tensor_release(stats);
    wt_tensor_release(xv);
    wt_tensor_release(tv);
    if (st != WT_OK) {
        wt_tensor_release(t);
        return st;
    }
    *out = t;
    return WT_OK;
}

static wt_status scalar(wt_context *ctx, double v, wt_tensor **out)
{
    return wt_tensor_full(ctx, WT_F32, 0, NULL, v, out);
}

/* running = (1 - m) * running + m * batch * factor, written in place. */
static wt_status update_running(wt_tensor *running, const wt_tensor *batch, double m, double factor)
{
    wt_context *ctx = wt_ctx_of(running);
    wt_tensor *r32 = NULL, *keep = NULL, *take = NULL, *a = NULL, *b = NULL, *sum = NULL;
    wt_status st = wt_cast(running, WT_F32, &r32);
    if (st == WT_OK) st = scalar(ctx, 1.0 - m, &keep);
    if (st == WT_OK) st = scalar(ctx, m * factor, &take);
    if (st == WT_OK) st = wt_mul(r32, keep, &a);
    if (st == WT_OK) st = wt_mul(batch, take, &b);
    if (st == WT_OK) st = wt_add(a, b, &sum);
    /* Recorded after every read of running, so the GPU keeps the order. */
    if (st == WT_OK) st = wt_node_run(ctx, &(wt_node){.kind = WT_NODE_CAST, .in = {sum}, .out = {running}});
    wt_tensor_release(r32);
    wt_tensor_release(keep);
    wt_tensor_release(take);
    wt_tensor_release(a);
    wt_tensor_release(b);
    wt_tensor_release(sum);
    return st;
}

/* Running statistics are updated in place in training: contiguous. */
static wt_status check_running(const char *fn, const wt_tensor *x, const wt_tensor *r, const char *what,
                               int64_t C, bool training)
{
    wt_status st = check_channels(fn, what, x, r, C);
    if (st == WT_OK && training && !wt_tensor_is_contiguous(r))
        st = wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: %s is updated in place and must be contiguous", fn, what);
    return st;
}

/* The body on f32 x, weight and bias. */
static wt_status batch_norm_f32(const char *fn, const wt_tensor *x, wt_tensor *rm, wt_tensor *rv,
                                const wt_tensor *weight, const wt_tensor *bias,
                                const wt_batch_norm_options *o, wt_tensor **out, wt_tensor **bm,
                                wt_tensor **bvar)
{
    const int64_t C = x->shape[1];
    wt_tensor *mean = NULL, *var = NULL, *xv = NULL, *moments = NULL;
    wt_status st = WT_OK;
    if (o->training) {
        const int64_t n = C ? x->numel / C : 0;
        if (n < 2)
            return wt_fail(WT_ERR_SHAPE, "%s: training needs more than one value per channel (got %lld)", fn,
                           (long long)n);
        wt_context *ctx = wt_ctx_of(x);
        int64_t mshape[2] = {2, C}, one = 1;
        if (!wt_backend_runs(ctx, WT_NODE_CHANNEL_MOMENTS))
            st = wt_fail(WT_ERR_UNSUPPORTED, "%s: not available on the %s backend", fn, ctx->ops->name);
        if (st == WT_OK && (st = as_ncs(x, &xv)) == WT_OK && (st = wt_tensor_alloc(ctx, WT_F32, 2, mshape, &moments)) == WT_OK &&
            (st = wt_node_run(ctx, &(wt_node){.kind = WT_NODE_CHANNEL_MOMENTS, .in = {xv}, .out = {moments}})) == WT_OK &&
            (st = wt_tensor_view(moments, 1, &C, &one, 0, &mean)) == WT_OK)
            st = wt_tensor_view(moments, 1, &C, &one, C, &var);
        if (st == WT_OK && rm) st = update_running(rm, mean, o->momentum, 1.0);
        if (st == WT_OK && rv) st = update_running(rv, var, o->momentum, (double)n / (double)(n - 1));
        if (st == WT_OK) st = wt_channel_norm(x, mean, var, weight, bias, o->eps, out);
    } else {
        st = wt_channel_norm(x, rm, rv, weight, bias, o->eps, out);
    }
    if (st == WT_OK && o->training) {
        if (bm) wt_tensor_retain(*bm = mean);
        if (bvar) wt_tensor_retain(*bvar = var);
    }
    wt_tensor_release(mean);
    wt_tensor_release(var);
    wt_tensor_release(xv);
    wt_tensor_release(moments);
    return st;
}

wt_status wt_batch_norm(const wt_tensor *x, wt_tensor *running_mean, wt_tensor *running_var,
                        const wt_tensor *weight, const wt_tensor *bias, const wt_batch_norm_options *opts,
                        wt_tensor **out, wt_tensor **batch_mean, wt_tensor **batch_var)
{
    const char *fn = "wt_batch_norm";
    if (batch_mean) *batch_mean = NULL;
    if (batch_var) *batch_var = NULL;
    /* Recorded with x, weight and bias as inputs; the running statistics
     * are state, not inputs: in inference the node keeps them (extra) for
     * the rule, in training the rule recomputes the batch's. */
    if (wt_grad_any(x, weight, bias, NULL)) {
        wt_batch_norm_options go;
        wt_batch_norm_options_init(&go);
        if (opts) (void)wt_read_options("", "", opts, sizeof(uint32_t), &go, sizeof go);
        wt_grad_call gc = {.op = WT_OP_BATCH_NORM, .nin = 3, .in = {x, weight, bias},
                           .p.b = {go.training}, .p.d = {go.eps}};
        if (!go.training) {
            wt_tensor_retain(gc.extra[0] = running_mean);
            wt_tensor_retain(gc.extra[1] = running_var);
        }
        if (wt_grad_begin(&gc)) {
            wt_status st_ = wt_batch_norm(x, running_mean, running_var, weight, bias, opts, out, batch_mean, batch_var);
            st_ = wt_grad_end(&gc, st_, 1, out);
            if (st_ != WT_OK) {
                if (batch_mean) wt_tensor_release(*batch_mean), *batch_mean = NULL;
                if (batch_var) wt_tensor_release(*batch_var), *batch_var = NULL;
            }
            return st_;
        }
        wt_tensor_release(gc.extra[0]);
        wt_tensor_release(gc.extra[1]);
    }
    wt_status st = wt_check_out(fn, out);
    if (st != WT_OK || (st = wt_check_input(fn, x)) != WT_OK) return st;
    wt_batch_norm_options o;
    wt_batch_norm_options_init(&o);
    if (opts && (st = wt_read_options(fn, "wt_batch_norm_options_init", opts, sizeof o, &o, sizeof o)) != WT_OK)
        return st;
    if (!(o.eps >= 0.0) || !isfinite((float)o.eps) || !isfinite((float)o.momentum))
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: eps must be finite and >= 0, momentum finite", fn);
    char b[160];
    if (x->ndim < 2)
        return wt_fail(WT_ERR_SHAPE, "%s: x must be [N, C, ...], got %s", fn, wt_shape_str(x->ndim, x->shape, b, sizeof b));
    const int64_t C = x->shape[1];
    if ((st = check_channels(fn, "weight", x, weight, C)) != WT_OK ||
        (st = check_channels(fn, "bias", x, bias, C)) != WT_OK)
        return st;
    if (!running_mean != !running_var)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: give both running_mean and running_var, or neither", fn);
    if (!o.training && !running_mean)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: inference needs running_mean and running_var", fn);
    if (running_mean && ((st = check_running(fn, x, running_mean, "running_mean", C, o.training)) != WT_OK ||
                         (st = check_running(fn, x, running_var, "running_var", C, o.training)) != WT_OK))
        return st;
    wt_lifted l;
    if ((st = wt_lift_f16(x, weight, bias, &l)) != WT_OK) return st;
    wt_tensor *r = NULL;
    st = batch_norm_f32(fn, l.in[0], running_mean, running_var, l.in[1], l.in[2], &o, &r, batch_mean, batch_var);
    wt_lifted_release(&l);
    /* The result takes x's dtype: f16 only when x is (weight, bias f32 or not). */
    st = wt_land(st, r, x->dtype, out);
    if (st != WT_OK) {
        if (batch_mean) wt_tensor_release(*batch_mean), *batch_mean = NULL;
        if (batch_var) wt_tensor_release(*batch_var), *batch_var = NULL;
    }
    return st;
}

void wt_group_norm_options_init(wt_group_norm_options *opts)
{
    if (!opts) return;
    memset(opts, 0, sizeof *opts);
    opts->struct_size = sizeof *opts;
    opts->eps = 1e-5;
}

wt_status wt_group_norm_v2(const wt_tensor *x, int64_t num_groups, const wt_tensor *weight, const wt_tensor *bias,
                           const wt_group_norm_options *opts, wt_tensor **out)
{
    WT_GRAD_HOOK((x, weight, bias, NULL), 1, out, wt_group_norm_v2(x, num_groups, weight, bias, opts, out),
                 .op = WT_OP_GROUP_NORM, .nin = 3, .in = {x, weight, bias}, .p.i = {num_groups},
                 .p.d = {opts && opts->struct_size == sizeof *opts ? opts->eps : 1e-5});
    const char *fn = "wt_group_norm_v2";
    wt_status st = wt_check_out(fn, out);
    if (st != WT_OK || (st = wt_check_input(fn, x)) != WT_OK) return st;
    wt_group_norm_options o;
    wt_group_norm_options_init(&o);
    if (opts) {
        if (opts->struct_size != sizeof *opts)
            return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: options not initialised with wt_group_norm_options_init", fn);
        o = *opts;
    }
    /* The statistics are kept in f32: eps must be finite there too. */
    if (!(o.eps >= 0.0) || !isfinite((float)o.eps))
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: eps must be finite and >= 0", fn);
    const float eps = (float)o.eps;
    char b[160];
    if (x->ndim < 2)
        return wt_fail(WT_ERR_SHAPE, "%s: x must be [N, C, ...], got %s", fn, wt_shape_str(x->ndim, x->shape, b, sizeof b));
    const int64_t N = x->shape[0], C = x->shape[1];
    if (num_groups <= 0 || C % num_groups != 0)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: num_groups %lld must be positive and divide the %lld channels",
                       fn, (long long)num_groups, (long long)C);
    if ((st = check_channels(fn, "weight", x, weight, C)) != WT_OK ||
        (st = check_channels(fn, "bias", x, bias, C)) != WT_OK)
        return st;
    wt_lifted l;
    if ((st = wt_lift_f16(x, weight, bias, &l)) != WT_OK) return st;
    wt_tensor *xc = NULL, *rows = NULL, *normed = NULL, *back = NULL, *r = NULL;
    const wt_tensor *xf = l.in[0];
    if (xf->numel == 0) {
        st = wt_copy(xf, &r);
    } else {
        /* Each (image, group) is one row of a layer norm without affine. */
        int64_t rshape[2] = {N * num_groups, xf->numel / (N * num_groups)};
        if ((st = wt_contiguous(xf, &xc)) == WT_OK && (st = wt_reshape(xc, 2, rshape, &rows)) == WT_OK &&
            (st = wt_layer_norm(rows, 1, NULL, NULL, eps, &normed)) == WT_OK &&
            (st = wt_reshape(normed, xf->ndim, xf->shape, &back)) == WT_OK) {
            if (l.in[1] || l.in[2])
                st = wt_channel_norm(back, NULL, NULL, l.in[1], l.in[2], 0.0f, &r);
            else
                wt_tensor_retain(r = back);
        }
    }
    if (st != WT_OK) wt_error_prefix(fn);
    wt_lifted_release(&l);
    wt_tensor_release(xc);
    wt_tensor_release(rows);
    wt_tensor_release(normed);
    wt_tensor_release(back);
    return wt_land(st, r, x->dtype, out);
}
