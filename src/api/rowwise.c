/* Row-wise front-ends (softmax, layernorm, rmsnorm): the input is seen as
 * [rows, C] with C the normalised axis, and the backend does one pass per
 * row. */
#include "api/api.h"

#include <math.h>

/* Checks an optional [C] parameter tensor and gives a contiguous version. */
static wt_status param_vector(const char *fn, const char *what, const wt_tensor *x, const wt_tensor *p,
                              int64_t C, wt_tensor **out)
{
    *out = NULL;
    if (!p) return WT_OK;
    wt_status st = wt_check_input(fn, p);
    if (st != WT_OK || (st = wt_check_same_context(fn, x, p)) != WT_OK) return st;
    if (p->ndim != 1 || p->shape[0] != C)
        return wt_fail(WT_ERR_SHAPE, "%s: %s must have shape [%lld]", fn, what, (long long)C);
    return wt_contiguous(p, out);
}

/* Runs op over the rows of x along its last axis into a new tensor. */
static wt_status run_rows(const char *fn, wt_rowwise_op op, const wt_tensor *x, const wt_tensor *w,
                          const wt_tensor *b, float eps, wt_tensor **out)
{
    wt_context *ctx = wt_ctx_of(x);
    wt_tensor *t = NULL, *rows = NULL, *orows = NULL, *cw = NULL, *cb = NULL;
    int64_t C = x->ndim ? x->shape[x->ndim - 1] : 1;
    wt_status st;
    if ((st = param_vector(fn, "weight", x, w, C, &cw)) != WT_OK ||
        (st = param_vector(fn, "bias", x, b, C, &cb)) != WT_OK)
        goto done;
    if (!ctx->ops->rowwise) {
        st = wt_fail(WT_ERR_UNSUPPORTED, "%s: not available on the %s backend", fn, ctx->ops->name);
        goto done;
    }
    if ((st = wt_tensor_alloc(ctx, WT_F32, x->ndim, x->shape, &t)) != WT_OK) goto done;
    if (t->numel == 0) goto done;
    /* [rows, C] views: rows fold when x's leading axes are contiguous
     * among themselves; otherwise gather x first. */
    const wt_tensor *src = x;
    wt_tensor *gathered = NULL;
    int n = x->ndim > 1 ? x->ndim - 1 : 0;
    int64_t lshape[WT_MAX_DIMS], lstr[1][WT_MAX_DIMS];
    for (int i = 0; i < n; i++) lshape[i] = x->shape[i], lstr[0][i] = x->strides[i];
    wt_coalesce(&n, lshape, 1, lstr);
    if (n > 1) {
        if ((st = wt_copy(x, &gathered)) != WT_OK) goto done;
        src = gathered;
        lstr[0][0] = C;
    }
    int64_t R = t->numel / C;
    int64_t shape2[2] = {R, C}, sx[2] = {lstr[0][0], x->ndim ? src->strides[src->ndim - 1] : 1},
            so[2] = {C, 1};
    if (R == 1) sx[0] = C;
    st = wt_tensor_view(src, 2, shape2, sx, src->offset, &rows);
    wt_tensor_release(gathered);
    if (st != WT_OK || (st = wt_tensor_view(t, 2, shape2, so, 0, &orows)) != WT_OK) goto done;
    st = ctx->ops->rowwise(ctx, op, rows, cw, cb, eps, orows);
done:
    wt_tensor_release(rows);
    wt_tensor_release(orows);
    wt_tensor_release(cw);
    wt_tensor_release(cb);
    if (st != WT_OK) {
        wt_tensor_release(t);
        return st;
    }
    *out = t;
    return WT_OK;
}

wt_status wt_softmax(const wt_tensor *x, int axis, wt_tensor **out)
{
    const char *fn = "wt_softmax";
    wt_status st = wt_check_out(fn, out);
    if (st != WT_OK || (st = wt_check_input(fn, x)) != WT_OK) return st;
    if (wt_has_f16(x, NULL, NULL)) {
        wt_lifted l;
        wt_tensor *r = NULL;
        if ((st = wt_lift_f16(x, NULL, NULL, &l)) == WT_OK) st = wt_softmax(l.in[0], axis, &r);
        wt_lifted_release(&l);
        return wt_land(st, r, l.result, out);
    }
    int a = 0;
    if (x->ndim > 0 && !wt_norm_axis(axis, x->ndim, &a))
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: axis %d out of range for %d dims", fn, axis, x->ndim);
    if (x->ndim == 0 && axis != 0 && axis != -1)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: axis %d out of range for a 0-d tensor", fn, axis);
    if (x->ndim == 0 || a == x->ndim - 1) return run_rows(fn, WT_ROW_SOFTMAX, x, NULL, NULL, 0.0f, out);
    /* Another axis: move it last, run, and move it back. */
    wt_tensor *moved = NULL, *res = NULL, *back = NULL;
    if ((st = wt_transpose(x, a, -1, &moved)) == WT_OK &&
        (st = run_rows(fn, WT_ROW_SOFTMAX, moved, NULL, NULL, 0.0f, &res)) == WT_OK &&
        (st = wt_transpose(res, a, -1, &back)) == WT_OK)
        st = wt_copy(back, out);
    wt_tensor_release(moved);
    wt_tensor_release(res);
    wt_tensor_release(back);
    return st;
}

static wt_status check_norm(const char *fn, const wt_tensor *x, float eps, wt_tensor **out)
{
    wt_status st = wt_check_out(fn, out);
    if (st != WT_OK || (st = wt_check_input(fn, x)) != WT_OK) return st;
    if (x->ndim == 0) return wt_fail(WT_ERR_SHAPE, "%s: input must have at least 1 dimension", fn);
    if (!(eps >= 0.0f) || isinf(eps)) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: eps must be finite and >= 0", fn);
    return WT_OK;
}

wt_status wt_layernorm(const wt_tensor *x, const wt_tensor *weight, const wt_tensor *bias, float eps,
                       wt_tensor **out)
{
    wt_status st = check_norm("wt_layernorm", x, eps, out);
    if (st != WT_OK) return st;
    if (wt_has_f16(x, weight, bias)) {
        wt_lifted l;
        wt_tensor *r = NULL;
        if ((st = wt_lift_f16(x, weight, bias, &l)) == WT_OK) st = wt_layernorm(l.in[0], l.in[1], l.in[2], eps, &r);
        wt_lifted_release(&l);
        return wt_land(st, r, l.result, out);
    }
    return run_rows("wt_layernorm", WT_ROW_LAYERNORM, x, weight, bias, eps, out);
}

wt_status wt_rmsnorm(const wt_tensor *x, const wt_tensor *weight, float eps, wt_tensor **out)
{
    wt_status st = check_norm("wt_rmsnorm", x, eps, out);
    if (st != WT_OK) return st;
    if (wt_has_f16(x, weight, NULL)) {
        wt_lifted l;
        wt_tensor *r = NULL;
        if ((st = wt_lift_f16(x, weight, NULL, &l)) == WT_OK) st = wt_rmsnorm(l.in[0], l.in[1], eps, &r);
        wt_lifted_release(&l);
        return wt_land(st, r, l.result, out);
    }
    return run_rows("wt_rmsnorm", WT_ROW_RMSNORM, x, weight, NULL, eps, out);
}
