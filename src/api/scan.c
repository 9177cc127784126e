/* Cumulative sums and products along one axis. The backends scan a
 * contiguous [outer, n, inner] block; a view is made contiguous first. */
#include "api/api.h"
#include "autograd/tape.h"

static wt_status scan(const char *fn, wt_scan_op op, const wt_tensor *x, int axis, wt_tensor **out)
{
    wt_status st = wt_check_out(fn, out);
    if (st != WT_OK) return st;
    if (!x) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: input tensor is NULL", fn);
    if (x->dtype != WT_F32 && x->dtype != WT_F16 && x->dtype != WT_I32 && x->dtype != WT_BOOL)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: unknown dtype %d", fn, (int)x->dtype);
    int a = 0;
    if (x->ndim == 0 ? (axis != 0 && axis != -1) : !wt_norm_axis(axis, x->ndim, &a))
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: axis %d out of range for %d dims", fn, axis, x->ndim);
    if (x->dtype == WT_BOOL) { /* a mask counts as its 0/1 in i32 */
        wt_tensor *i = NULL, *r = NULL;
        if ((st = wt_cast(x, WT_I32, &i)) == WT_OK) st = scan(fn, op, i, axis, &r);
        wt_tensor_release(i);
        if (st == WT_OK) *out = r;
        return st;
    }
    if (x->dtype == WT_F16) {
        wt_lifted l;
        wt_tensor *r = NULL;
        if ((st = wt_lift_f16(x, NULL, NULL, &l)) == WT_OK) st = scan(fn, op, l.in[0], axis, &r);
        wt_lifted_release(&l);
        return wt_land(st, r, l.result, out);
    }
    int64_t n = x->ndim ? x->shape[a] : 1, inner = 1;
    for (int i = a + 1; i < x->ndim; i++) inner *= x->shape[i];
    wt_context *ctx = wt_ctx_of(x);
    wt_tensor *c = NULL, *t = NULL;
    if ((st = wt_tensor_alloc(ctx, x->dtype, x->ndim, x->shape, &t)) != WT_OK) return st;
    if (t->numel > 0 && (st = wt_contiguous(x, &c)) == WT_OK)
        st = wt_node_run(ctx, &(wt_node){.kind = WT_NODE_SCAN, .in = {c}, .out = {t}, .p.scan = {op, n, inner}});
    wt_tensor_release(c);
    if (st != WT_OK) {
        wt_tensor_release(t);
        return st;
    }
    *out = t;
    return WT_OK;
}

wt_status wt_cumsum(const wt_tensor *x, int axis, wt_tensor **out)
{
    WT_GRAD_HOOK((x, NULL, NULL, NULL), 1, out, wt_cumsum(x, axis, out),
                 .op = WT_OP_CUMSUM, .nin = 1, .in = {x}, .p.i = {axis});
    return scan("wt_cumsum", WT_SCAN_SUM, x, axis, out);
}

wt_status wt_cumprod(const wt_tensor *x, int axis, wt_tensor **out)
{
    WT_GRAD_HOOK((x, NULL, NULL, NULL), 1, out, wt_cumprod(x, axis, out),
                 .op = WT_OP_CUMPROD, .nin = 1, .in = {x}, .p.i = {axis});
    return scan("wt_cumprod", WT_SCAN_PROD, x, axis, out);
}
