/* Reduction front-ends: axis checks, result shape, and the permuted view
 * (kept axes first, reduced axes last) that the backends reduce. */
#include "api/api.h"

#include <math.h>

static wt_status reduce(const char *fn, wt_reduce_op op, const wt_tensor *x, int naxes,
                        const int *axes, bool keepdims, wt_tensor **out)
{
    wt_status st = wt_check_out(fn, out);
    if (st != WT_OK || (st = wt_check_input(fn, x)) != WT_OK) return st;
    if (wt_has_f16(x, NULL, NULL)) {
        wt_lifted l;
        wt_tensor *r = NULL;
        if ((st = wt_lift_f16(x, NULL, NULL, &l)) == WT_OK) st = reduce(fn, op, l.in[0], naxes, axes, keepdims, &r);
        wt_lifted_release(&l);
        return wt_land(st, r, l.result, out);
    }
    if (naxes < 0 || naxes > x->ndim)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: naxes %d is outside [0, %d]", fn, naxes, x->ndim);
    if (naxes > 0 && !axes) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: axes is NULL", fn);
    bool reduced[WT_MAX_DIMS] = {0};
    for (int i = 0; i < naxes; i++) {
        int a;
        if (!wt_norm_axis(axes[i], x->ndim, &a))
            return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: axis %d out of range for %d dims", fn, axes[i], x->ndim);
        if (reduced[a]) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: axis %d repeats", fn, axes[i]);
        reduced[a] = true;
    }
    if (naxes == 0)
        for (int i = 0; i < x->ndim; i++) reduced[i] = true;

    /* The view: kept axes in order, then reduced axes in order. */
    int64_t vshape[WT_MAX_DIMS], vstrides[WT_MAX_DIMS], kshape[WT_MAX_DIMS], oshape[WT_MAX_DIMS];
    int nkept = 0, nred = 0, ondim = 0;
    int64_t count = 1;
    for (int i = 0; i < x->ndim; i++)
        if (!reduced[i]) {
            kshape[nkept] = x->shape[i];
            vshape[nkept] = x->shape[i], vstrides[nkept] = x->strides[i];
            nkept++;
        }
    for (int i = 0; i < x->ndim; i++)
        if (reduced[i]) {
            vshape[nkept + nred] = x->shape[i], vstrides[nkept + nred] = x->strides[i];
            count *= x->shape[i];
            nred++;
        }
    for (int i = 0; i < x->ndim; i++) {
        if (!reduced[i]) oshape[ondim++] = x->shape[i];
        else if (keepdims) oshape[ondim++] = 1;
    }
    int64_t out_numel = 1;
    for (int i = 0; i < ondim; i++) out_numel *= oshape[i];
    /* Like NumPy: an error only when some output would need a value. */
    if (count == 0 && out_numel > 0 && (op == WT_REDUCE_MAX || op == WT_REDUCE_MIN))
        return wt_fail(WT_ERR_SHAPE, "%s: reduction over an empty set of elements has no identity", fn);

    wt_context *ctx = wt_ctx_of(x);
    wt_tensor *t = NULL, *v = NULL, *kv = NULL;
    if ((st = wt_tensor_alloc(ctx, WT_F32, ondim, oshape, &t)) != WT_OK) return st;
    if (t->numel == 0) goto done;
    if (count == 0) { /* the sum of nothing is 0, its mean 0/0 */
        st = wt_fill_f32(ctx, t, op == WT_REDUCE_SUM ? 0.0f : NAN);
        goto done;
    }
    int64_t kstrides[WT_MAX_DIMS];
    wt_contiguous_strides(nkept, kshape, kstrides);
    if ((st = wt_tensor_view(x, x->ndim, vshape, vstrides, x->offset, &v)) != WT_OK ||
        (st = wt_tensor_view(t, nkept, kshape, kstrides, 0, &kv)) != WT_OK)
        goto done;
    st = ctx->ops->reduce(ctx, op, v, nred, kv);
done:
    wt_tensor_release(v);
    wt_tensor_release(kv);
    if (st != WT_OK) {
        wt_tensor_release(t);
        return st;
    }
    *out = t;
    return WT_OK;
}

wt_status wt_sum(const wt_tensor *x, int naxes, const int *axes, bool keepdims, wt_tensor **out)
{
    return reduce("wt_sum", WT_REDUCE_SUM, x, naxes, axes, keepdims, out);
}
wt_status wt_mean(const wt_tensor *x, int naxes, const int *axes, bool keepdims, wt_tensor **out)
{
    return reduce("wt_mean", WT_REDUCE_MEAN, x, naxes, axes, keepdims, out);
}
wt_status wt_max(const wt_tensor *x, int naxes, const int *axes, bool keepdims, wt_tensor **out)
{
    return reduce("wt_max", WT_REDUCE_MAX, x, naxes, axes, keepdims, out);
}
wt_status wt_min(const wt_tensor *x, int naxes, const int *axes, bool keepdims, wt_tensor **out)
{
    return reduce("wt_min", WT_REDUCE_MIN, x, naxes, axes, keepdims, out);
}
