/* sort, argsort, topk: the backend orders positions (argsort_rows along
 * the last axis of a permuted view); values follow through a gather. */
#include "api/movement.h"
#include "autograd/tape.h"

/* A 0-d result of r (taking r) when x was 0-d. */
static wt_status back_to_0d(const wt_tensor *x, wt_tensor **r)
{
    if (!*r || x->ndim > 0) return WT_OK;
    wt_tensor *v;
    wt_status st = wt_tensor_view(*r, 0, NULL, NULL, 0, &v);
    wt_tensor_release(*r);
    *r = v;
    return st;
}

/* *indices (i32, x's shape with k along axis) and, when values is not
 * NULL, *values at them. */
static wt_status sort_impl(const char *fn, const wt_tensor *x0, int axis, bool descending, int64_t k,
                           wt_tensor **values, wt_tensor **indices)
{
    wt_context *ctx = wt_ctx_of(x0);
    wt_status st = mv_need(fn, ctx, WT_NODE_ARGSORT);
    if (st != WT_OK) return st;
    wt_tensor *x = NULL, *xl = NULL, *il = NULL, *idx = NULL, *iv = NULL, *v = NULL;
    if ((st = mv_at_least_1d(x0, &x)) != WT_OK) return st;
    int nd = x->ndim, a = axis < 0 ? axis + nd : axis;
    /* xl: x with the sorted axis last (a view). */
    int64_t shape[WT_MAX_DIMS], strides[WT_MAX_DIMS];
    int perm[WT_MAX_DIMS];
    for (int d = 0, j = 0; d < nd; d++)
        if (d != a) perm[j++] = d;
    perm[nd - 1] = a;
    for (int d = 0; d < nd; d++) {
        shape[d] = x->shape[perm[d]];
        strides[d] = x->strides[perm[d]];
    }
    if ((st = wt_tensor_view(x, nd, shape, strides, x->offset, &xl)) != WT_OK) goto done;
    shape[nd - 1] = k;
    if ((st = wt_tensor_alloc(ctx, WT_I32, nd, shape, &il)) != WT_OK) goto done;
    if (il->numel > 0 && (st = wt_node_run(ctx, &(wt_node){.kind = WT_NODE_ARGSORT, .in = {xl}, .out = {il}, .p.sort = {descending, k}})) != WT_OK) goto done;
    /* il back into x's axis order: the inverse permutation as a view. */
    int64_t ishape[WT_MAX_DIMS], istrides[WT_MAX_DIMS];
    for (int d = 0; d < nd; d++) {
        ishape[perm[d]] = il->shape[d];
        istrides[perm[d]] = il->strides[d];
    }
    if ((st = wt_tensor_view(il, nd, ishape, istrides, 0, &iv)) != WT_OK) goto done;
    if ((st = mv_contiguous(iv, &idx)) != WT_OK) goto done;
    if (values) {
        if ((st = wt_tensor_alloc(ctx, x->dtype, nd, idx->shape, &v)) != WT_OK) goto done;
        if (v->numel > 0 && (st = wt_node_run(ctx, &(wt_node){.kind = WT_NODE_GATHER, .in = {x, idx}, .out = {v}, .p.index = {a, true}})) != WT_OK) goto done;
        if ((st = back_to_0d(x0, &v)) != WT_OK) goto done;
    }
    if (indices && (st = back_to_0d(x0, &idx)) != WT_OK) goto done;
    if (values) {
        *values = v;
        v = NULL;
    }
    if (indices) {
        *indices = idx;
        idx = NULL;
    }
done:
    wt_tensor_release(x);
    wt_tensor_release(xl);
    wt_tensor_release(il);
    wt_tensor_release(iv);
    wt_tensor_release(idx);
    wt_tensor_release(v);
    if (st != WT_OK) wt_error_prefix(fn);
    return st;
}

static wt_status check_sort(const char *fn, const wt_tensor *x, int axis, wt_tensor **values,
                            wt_tensor **indices)
{
    wt_status st;
    if (values && (st = wt_check_out(fn, values)) != WT_OK) return st;
    if (indices && (st = wt_check_out(fn, indices)) != WT_OK) return st;
    if (!values && !indices) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: no output asked for", fn);
    if ((st = mv_check_input(fn, x)) != WT_OK) return st;
    int a;
    if (!wt_norm_axis(axis, x->ndim > 0 ? x->ndim : 1, &a))
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: axis %d out of range for %d dims", fn, axis, x->ndim);
    return WT_OK;
}

wt_status wt_sort(const wt_tensor *x, int axis, bool descending, wt_tensor **values, wt_tensor **indices)
{
    if (wt_grad_any(x, NULL, NULL, NULL) && values) {
        wt_grad_call gc = {.op = WT_OP_SORT, .nin = 1, .in = {x}, .p.i = {axis}};
        if (wt_grad_begin(&gc)) {
            wt_tensor *own = NULL;
            wt_status st_ = wt_sort(x, axis, descending, values, &own);
            return wt_grad_end_indexed(&gc, st_, values, own, indices);
        }
    }
    const char *fn = "wt_sort";
    if (indices) *indices = NULL; /* cleared even when values is NULL */
    if (!values) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: values is NULL", fn);
    wt_status st = check_sort(fn, x, axis, values, indices);
    if (st != WT_OK) return st;
    int a = axis < 0 ? axis + (x->ndim > 0 ? x->ndim : 1) : axis;
    return sort_impl(fn, x, axis, descending, x->ndim ? x->shape[a] : 1, values, indices);
}

wt_status wt_argsort(const wt_tensor *x, int axis, bool descending, wt_tensor **out)
{
    WT_GRAD_HOOK((x, NULL, NULL, NULL), 1, out, wt_argsort(x, axis, descending, out),
                 .op = WT_OP_ARGSORT, .nin = 1, .in = {x});
    const char *fn = "wt_argsort";
    if (!out) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: out is NULL", fn);
    wt_status st = check_sort(fn, x, axis, NULL, out);
    if (st != WT_OK) return st;
    int a = axis < 0 ? axis + (x->ndim > 0 ? x->ndim : 1) : axis;
    return sort_impl(fn, x, axis, descending, x->ndim ? x->shape[a] : 1, NULL, out);
}

wt_status wt_topk_v2(const wt_tensor *x, int64_t k, int axis, bool descending, wt_tensor **values,
                     wt_tensor **indices)
{
    if (wt_grad_any(x, NULL, NULL, NULL) && values) {
        wt_grad_call gc = {.op = WT_OP_TOPK, .nin = 1, .in = {x}, .p.i = {axis}};
        if (wt_grad_begin(&gc)) {
            wt_tensor *own = NULL;
            wt_status st_ = wt_topk_v2(x, k, axis, descending, values, &own);
            return wt_grad_end_indexed(&gc, st_, values, own, indices);
        }
    }
    const char *fn = "wt_topk_v2";
    if (indices) *indices = NULL; /* cleared even when values is NULL */
    if (!values) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: values is NULL", fn);
    wt_status st = check_sort(fn, x, axis, values, indices);
    if (st != WT_OK) return st;
    int a = axis < 0 ? axis + (x->ndim > 0 ? x->ndim : 1) : axis;
    int64_t n = x->ndim ? x->shape[a] : 1;
    if (k < 0 || k > n)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: k %lld outside [0, %lld]", fn, (long long)k, (long long)n);
    return sort_impl(fn, x, axis, descending, k, values, indices);
}
