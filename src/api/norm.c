/* Batch and group normalisation: statistics from the reductions (batch
 * norm) or the row-wise layer norm (group norm), then one pass of the
 * backend's per-channel affine map. Batch statistics take two passes
 * (mean, then the mean of squared deviations), so a large mean costs no
 * precision. */
#include "api/api.h"

#include <math.h>
#include <string.h>

void wt_batch_norm_options_init(wt_batch_norm_options *opts)
{
    if (!opts) return;
    memset(opts, 0, sizeof *opts);
    opts->struct_size = sizeof *opts;
    opts->momentum = 0.1f;
    opts->eps = 1e-5f;
}

/* t ([C]) as [1, C, 1, ...] to broadcast along axis 1 of an ndim tensor. */
static wt_status per_channel(const wt_tensor *t, int ndim, wt_tensor **out)
{
    int64_t shape[WT_MAX_DIMS];
    for (int i = 0; i < ndim; i++) shape[i] = i == 1 ? t->shape[0] : 1;
    return wt_reshape(t, ndim, shape, out);
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
    int n = x->ndim - 2;
    int64_t shape[WT_MAX_DIMS], str[1][WT_MAX_DIMS];
    for (int i = 0; i < n; i++) shape[i] = x->shape[i + 2], str[0][i] = x->strides[i + 2];
    if (n > 0) wt_coalesce(&n, shape, 1, str);
    int64_t S = x->numel / (x->shape[0] * x->shape[1]);
    int64_t vshape[3] = {x->shape[0], x->shape[1], S}, vstr[3] = {x->strides[0], x->strides[1], 1};
    if (n == 1) {
        vstr[2] = str[0][0];
        return wt_tensor_view(x, 3, vshape, vstr, x->offset, out);
    }
    wt_tensor *c = NULL;
    wt_status st = wt_contiguous(x, &c);
    if (st == WT_OK) {
        vstr[0] = x->shape[1] * S, vstr[1] = S;
        st = wt_tensor_view(c, 3, vshape, vstr, c->offset, out);
    }
    wt_tensor_release(c);
    return st;
}

/* out = (x - shift[c]) * scale[c] + bias[c] along axis 1 of x, in one
 * pass; shift, scale and bias are [C] or NULL (0, 1, 0). */
static wt_status channel_affine(const wt_tensor *x, const wt_tensor *shift, const wt_tensor *scale,
                                const wt_tensor *bias, wt_tensor **out)
{
    wt_context *ctx = wt_ctx_of(x);
    const int64_t C = x->shape[1];
    if (!ctx->ops->channel_affine)
        return wt_fail(WT_ERR_UNSUPPORTED, "normalisation: not available on the %s backend", ctx->ops->name);
    wt_tensor *t = NULL, *coef = NULL, *xv = NULL, *tv = NULL;
    wt_status st = wt_tensor_alloc(ctx, WT_F32, x->ndim, x->shape, &t);
    if (st != WT_OK || t->numel == 0) goto done;
    int64_t cshape[2] = {3, C};
    if ((st = wt_tensor_alloc(ctx, WT_F32, 2, cshape, &coef)) != WT_OK) goto done;
    const wt_tensor *rows[3] = {shift, scale, bias};
    for (int k = 0; k < 3 && st == WT_OK; k++) {
        wt_tensor *row = NULL;
        int64_t one = 1;
        if ((st = wt_tensor_view(coef, 1, &C, &one, k * C, &row)) == WT_OK)
            st = rows[k] ? ctx->ops->copy(ctx, rows[k], row) : wt_fill_f32(ctx, row, k == 1 ? 1.0f : 0.0f);
        wt_tensor_release(row);
    }
    if (st == WT_OK && (st = as_ncs(x, &xv)) == WT_OK &&
        (st = wt_tensor_view(t, 3, xv->shape, (int64_t[3]){C * xv->shape[2], xv->shape[2], 1}, 0, &tv)) == WT_OK)
        st = ctx->ops->channel_affine(ctx, xv, coef, tv);
done:
    wt_tensor_release(coef);
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
    if (st == WT_OK) st = ctx->ops->cast(ctx, sum, running);
    wt_tensor_release(r32);
    wt_tensor_release(keep);
    wt_tensor_release(take);
    wt_tensor_release(a);
    wt_tensor_release(b);
    wt_tensor_release(sum);
    return st;
}

static wt_status check_running(const char *fn, const wt_tensor *x, const wt_tensor *r, const char *what,
                               int64_t C)
{
    wt_status st = check_channels(fn, what, x, r, C);
    if (st == WT_OK && !wt_tensor_is_contiguous(r))
        st = wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: %s is updated in place and must be contiguous", fn, what);
    return st;
}

/* The body on f32 x, weight and bias. */
static wt_status batch_norm_f32(const char *fn, const wt_tensor *x, wt_tensor *rm, wt_tensor *rv,
                                const wt_tensor *weight, const wt_tensor *bias,
                                const wt_batch_norm_options *o, wt_tensor **out, wt_tensor **bm,
                                wt_tensor **bvar)
{
    wt_context *ctx = wt_ctx_of(x);
    const int64_t C = x->shape[1];
    int axes[WT_MAX_DIMS], naxes = 0;
    for (int i = 0; i < x->ndim; i++)
        if (i != 1) axes[naxes++] = i;
    wt_tensor *mean = NULL, *var = NULL, *mv = NULL, *d = NULL, *sq = NULL, *ve = NULL, *eps = NULL,
              *root = NULL, *scale = NULL, *one = NULL;
    wt_status st = WT_OK;
    if (o->training) {
        const int64_t n = C ? x->numel / C : 0;
        if (n < 2)
            return wt_fail(WT_ERR_SHAPE, "%s: training needs more than one value per channel (got %lld)", fn,
                           (long long)n);
        if ((st = wt_mean(x, naxes, axes, false, &mean)) == WT_OK && (st = per_channel(mean, x->ndim, &mv)) == WT_OK &&
            (st = wt_sub(x, mv, &d)) == WT_OK && (st = wt_mul(d, d, &sq)) == WT_OK)
            st = wt_mean(sq, naxes, axes, false, &var);
        if (st == WT_OK && rm) st = update_running(rm, mean, o->momentum, 1.0);
        if (st == WT_OK && rv) st = update_running(rv, var, o->momentum, (double)n / (double)(n - 1));
    } else {
        if ((st = wt_cast(rm, WT_F32, &mean)) == WT_OK) st = wt_cast(rv, WT_F32, &var);
    }
    /* scale = weight / sqrt(var + eps) */
    if (st == WT_OK) st = scalar(ctx, o->eps, &eps);
    if (st == WT_OK) st = wt_add(var, eps, &ve);
    if (st == WT_OK) st = wt_sqrt(ve, &root);
    if (st == WT_OK && weight) st = wt_div(weight, root, &scale);
    if (st == WT_OK && !weight && (st = scalar(ctx, 1.0, &one)) == WT_OK) st = wt_div(one, root, &scale);
    if (st == WT_OK) st = channel_affine(x, mean, scale, bias, out);
    if (st == WT_OK && o->training) {
        if (bm) wt_tensor_retain(*bm = mean);
        if (bvar) wt_tensor_retain(*bvar = var);
    }
    wt_tensor_release(mean);
    wt_tensor_release(var);
    wt_tensor_release(mv);
    wt_tensor_release(d);
    wt_tensor_release(sq);
    wt_tensor_release(ve);
    wt_tensor_release(eps);
    wt_tensor_release(root);
    wt_tensor_release(scale);
    wt_tensor_release(one);
    return st;
}

wt_status wt_batch_norm(const wt_tensor *x, wt_tensor *running_mean, wt_tensor *running_var,
                        const wt_tensor *weight, const wt_tensor *bias, const wt_batch_norm_options *opts,
                        wt_tensor **out, wt_tensor **batch_mean, wt_tensor **batch_var)
{
    const char *fn = "wt_batch_norm";
    if (batch_mean) *batch_mean = NULL;
    if (batch_var) *batch_var = NULL;
    wt_status st = wt_check_out(fn, out);
    if (st != WT_OK || (st = wt_check_input(fn, x)) != WT_OK) return st;
    wt_batch_norm_options o;
    wt_batch_norm_options_init(&o);
    if (opts) {
        if (opts->struct_size != sizeof *opts)
            return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: options not set up by wt_batch_norm_options_init", fn);
        o = *opts;
    }
    if (!(o.eps >= 0.0f) || isinf(o.eps) || !isfinite(o.momentum))
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
    if (running_mean && ((st = check_running(fn, x, running_mean, "running_mean", C)) != WT_OK ||
                         (st = check_running(fn, x, running_var, "running_var", C)) != WT_OK))
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

wt_status wt_group_norm(const wt_tensor *x, int64_t num_groups, const wt_tensor *weight, const wt_tensor *bias,
                        float eps, wt_tensor **out)
{
    const char *fn = "wt_group_norm";
    wt_status st = wt_check_out(fn, out);
    if (st != WT_OK || (st = wt_check_input(fn, x)) != WT_OK) return st;
    char b[160];
    if (x->ndim < 2)
        return wt_fail(WT_ERR_SHAPE, "%s: x must be [N, C, ...], got %s", fn, wt_shape_str(x->ndim, x->shape, b, sizeof b));
    const int64_t N = x->shape[0], C = x->shape[1];
    if (num_groups <= 0 || C % num_groups != 0)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: num_groups %lld must be positive and divide the %lld channels",
                       fn, (long long)num_groups, (long long)C);
    if (!(eps >= 0.0f) || isinf(eps)) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: eps must be finite and >= 0", fn);
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
            (st = wt_layernorm(rows, NULL, NULL, eps, &normed)) == WT_OK &&
            (st = wt_reshape(normed, xf->ndim, xf->shape, &back)) == WT_OK) {
            if (l.in[1] || l.in[2])
                st = channel_affine(back, NULL, l.in[1], l.in[2], &r);
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
