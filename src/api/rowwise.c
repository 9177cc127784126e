/* Row-wise front-ends (softmax, layernorm, rmsnorm): the input is seen as
 * [rows, C] with C the normalised axis, and the backend does one pass per
 * row. */
#include "api/api.h"
#include "autograd/tape.h"

#include <math.h>
#include <string.h>

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

/* Runs op over the rows of x along its last axis into a new tensor: f32,
 * or f16 for f16 operands (a backend that cannot take them returns
 * WT_ERR_UNSUPPORTED, and the callers go through f32 copies). */
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
    if (!wt_backend_runs(ctx, WT_NODE_ROWWISE)) {
        st = wt_fail(WT_ERR_UNSUPPORTED, "%s: not available on the %s backend", fn, ctx->ops->name);
        goto done;
    }
    if ((st = wt_tensor_alloc(ctx, x->dtype == WT_F16 ? WT_F16 : WT_F32, x->ndim, x->shape, &t)) != WT_OK)
        goto done;
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
    st = wt_node_run(ctx, &(wt_node){.kind = WT_NODE_ROWWISE, .in = {rows, cw, cb}, .out = {orows}, .p.row = {op, eps}});
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

/* softmax / log_softmax along axis a of x (f32). The last axis (or one
 * followed only by size-1 axes) runs as rows; another runs in place as
 * [outer, C, inner] through the backend's softmax_axis. */
static wt_status softmax_any(const char *fn, wt_rowwise_op op, const wt_tensor *x, int axis, wt_tensor **out)
{
    int a = 0;
    if (x->ndim > 0 && !wt_norm_axis(axis, x->ndim, &a))
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: axis %d out of range for %d dims", fn, axis, x->ndim);
    if (x->ndim == 0 && axis != 0 && axis != -1)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: axis %d out of range for a 0-d tensor", fn, axis);
    if (x->ndim == 0 || a == x->ndim - 1) return run_rows(fn, op, x, NULL, NULL, 0.0f, out);
    wt_context *ctx = wt_ctx_of(x);
    wt_tensor *t = NULL, *src = NULL, *vx = NULL, *vo = NULL, *rows = NULL;
    wt_status st = wt_tensor_alloc(ctx, WT_F32, x->ndim, x->shape, &t);
    if (st != WT_OK || t->numel == 0) goto done;
    int64_t O, so, I, si;
    const int64_t C = x->shape[a];
    if (wt_fold_axes(x, 0, a, &O, &so) && wt_fold_axes(x, a + 1, x->ndim, &I, &si)) {
        wt_tensor_retain((wt_tensor *)x);
        src = (wt_tensor *)x;
    } else { /* axes that do not fold: gather once */
        if ((st = wt_copy(x, &src)) != WT_OK) goto done;
        wt_fold_axes(src, 0, a, &O, &so);
        wt_fold_axes(src, a + 1, src->ndim, &I, &si);
    }
    if (I == 1) { /* only size-1 axes after it: rows */
        int64_t shape2[2] = {O, C}, str2[2] = {so, src->strides[a]};
        if ((st = wt_tensor_view(src, 2, shape2, str2, src->offset, &vx)) != WT_OK ||
            (st = run_rows(fn, op, vx, NULL, NULL, 0.0f, &rows)) != WT_OK)
            goto done;
        wt_tensor_release(t);
        t = NULL;
        st = wt_reshape(rows, x->ndim, x->shape, &t);
        goto done;
    }
    if (!wt_backend_runs(ctx, WT_NODE_SOFTMAX_AXIS)) {
        st = wt_fail(WT_ERR_UNSUPPORTED, "%s: not available on the %s backend", fn, ctx->ops->name);
        goto done;
    }
    int64_t shape3[3] = {O, C, I}, str3[3] = {so, src->strides[a], si}, ostr[3] = {C * I, I, 1};
    if ((st = wt_tensor_view(src, 3, shape3, str3, src->offset, &vx)) != WT_OK ||
        (st = wt_tensor_view(t, 3, shape3, ostr, 0, &vo)) != WT_OK)
        goto done;
    st = wt_node_run(ctx, &(wt_node){.kind = WT_NODE_SOFTMAX_AXIS, .in = {vx}, .out = {vo}, .p.row = {op, 0}});
done:
    wt_tensor_release(src);
    wt_tensor_release(vx);
    wt_tensor_release(vo);
    wt_tensor_release(rows);
    if (st != WT_OK) {
        wt_tensor_release(t);
        return st;
    }
    *out = t;
    return WT_OK;
}

static wt_status softmax_front(const char *fn, wt_rowwise_op op, const wt_tensor *x, int axis, wt_tensor **out)
{
    wt_status st = wt_check_out(fn, out);
    if (st != WT_OK || (st = wt_check_input(fn, x)) != WT_OK) return st;
    if (wt_has_f16(x, NULL, NULL)) {
        /* Rows along the last axis read and write the halves where the
         * backend can; else through f32 copies. */
        if (axis == -1 || axis == (x->ndim ? x->ndim - 1 : 0)) {
            st = run_rows(fn, op, x, NULL, NULL, 0.0f, out);
            if (st != WT_ERR_UNSUPPORTED) return st;
        }
        wt_lifted l;
        wt_tensor *r = NULL;
        if ((st = wt_lift_f16(x, NULL, NULL, &l)) == WT_OK) st = softmax_any(fn, op, l.in[0], axis, &r);
        wt_lifted_release(&l);
        return wt_land(st, r, l.result, out);
    }
    return softmax_any(fn, op, x, axis, out);
}

wt_status wt_softmax(const wt_tensor *x, int axis, wt_tensor **out)
{
    WT_GRAD_HOOK((x, NULL, NULL, NULL), 1, out, wt_softmax(x, axis, out),
                 .op = WT_OP_SOFTMAX, .nin = 1, .in = {x}, .p.i = {axis});
    return softmax_front("wt_softmax", WT_ROW_SOFTMAX, x, axis, out);
}

wt_status wt_log_softmax(const wt_tensor *x, int axis, wt_tensor **out)
{
    WT_GRAD_HOOK((x, NULL, NULL, NULL), 1, out, wt_log_softmax(x, axis, out),
                 .op = WT_OP_LOG_SOFTMAX, .nin = 1, .in = {x}, .p.i = {axis});
    return softmax_front("wt_log_softmax", WT_ROW_LOG_SOFTMAX, x, axis, out);
}

/* eps is a double in the API and a float in the kernels: it must be finite in both. */
static wt_status check_norm(const char *fn, const wt_tensor *x, double eps, wt_tensor **out)
{
    wt_status st = wt_check_out(fn, out);
    if (st != WT_OK || (st = wt_check_input(fn, x)) != WT_OK) return st;
    if (x->ndim == 0) return wt_fail(WT_ERR_SHAPE, "%s: input must have at least 1 dimension", fn);
    if (!(eps >= 0.0) || !isfinite((float)eps))
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: eps must be finite and >= 0", fn);
    return WT_OK;
}

/* The norm over the last axis, weight and bias [C]: rows read any
 * strides, so nothing is reshaped. */
static wt_status norm_last_axis(const char *fn, wt_rowwise_op op, const wt_tensor *x, const wt_tensor *weight,
                                const wt_tensor *bias, float eps, wt_tensor **out)
{
    wt_status st;
    if (wt_has_f16(x, weight, bias)) {
        /* All f16: the backend reads and writes the halves where it can. */
        if (x->dtype == WT_F16 && (!weight || weight->dtype == WT_F16) && (!bias || bias->dtype == WT_F16)) {
            st = run_rows(fn, op, x, weight, bias, eps, out);
            if (st != WT_ERR_UNSUPPORTED) return st;
        }
        wt_lifted l;
        wt_tensor *r = NULL;
        if ((st = wt_lift_f16(x, weight, bias, &l)) == WT_OK)
            st = norm_last_axis(fn, op, l.in[0], l.in[1], l.in[2], eps, &r);
        wt_lifted_release(&l);
        return wt_land(st, r, l.result, out);
    }
    return run_rows(fn, op, x, weight, bias, eps, out);
}

/* --- transformer ops: norms over the last k axes --- */

/* p (weight or bias) must have x's last k extents; gives it as a [C] view
 * (contiguous first when needed). */
static wt_status flat_param(const char *fn, const char *what, const wt_tensor *x, int k, const wt_tensor *p,
                            int64_t C, wt_tensor **out)
{
    *out = NULL;
    if (!p) return WT_OK;
    wt_status st = wt_check_input(fn, p);
    if (st != WT_OK || (st = wt_check_same_context(fn, x, p)) != WT_OK) return st;
    bool ok = p->ndim == k;
    for (int i = 0; ok && i < k; i++) ok = p->shape[i] == x->shape[x->ndim - k + i];
    if (!ok) {
        char b1[160], b2[160];
        return wt_fail(WT_ERR_SHAPE, "%s: %s has shape %s, expected the normalised shape %s", fn, what,
                       wt_shape_str(p->ndim, p->shape, b1, sizeof b1),
                       wt_shape_str(k, x->shape + x->ndim - k, b2, sizeof b2));
    }
    const int64_t shape1[1] = {C};
    return wt_reshape(p, 1, shape1, out);
}

/* layer norm (bias may be given) or rms norm over the last k axes. */
static wt_status norm_last_k(const char *fn, wt_rowwise_op op, const wt_tensor *x, int k, const wt_tensor *w,
                             const wt_tensor *b, double eps, wt_tensor **out)
{
    wt_status st = check_norm(fn, x, eps, out);
    if (st != WT_OK) return st;
    if (k < 1 || k > x->ndim)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: normalized_ndim %d is outside [1, %d]", fn, k, x->ndim);
    /* One axis with [C] (or no) parameters: the rows directly, no views. */
    if (k == 1 && (!w || w->ndim == 1) && (!b || b->ndim == 1))
        return norm_last_axis(fn, op, x, w, b, (float)eps, out);
    if (wt_has_f16(x, w, b)) {
        wt_lifted l;
        wt_tensor *r = NULL;
        if ((st = wt_lift_f16(x, w, b, &l)) == WT_OK) st = norm_last_k(fn, op, l.in[0], k, l.in[1], l.in[2], eps, &r);
        wt_lifted_release(&l);
        return wt_land(st, r, l.result, out);
    }
    wt_tensor *fw = NULL, *fb = NULL, *fx = NULL, *r = NULL;
    int64_t C = 1;
    for (int i = x->ndim - k; i < x->ndim; i++) C *= x->shape[i];
    if ((st = flat_param(fn, "weight", x, k, w, C, &fw)) != WT_OK ||
        (st = flat_param(fn, "bias", x, k, b, C, &fb)) != WT_OK)
        goto done;
    int64_t fshape[WT_MAX_DIMS];
    for (int i = 0; i < x->ndim - k; i++) fshape[i] = x->shape[i];
    fshape[x->ndim - k] = C;
    if (k == 1) /* rows read any strides: no reshape (which may copy) */
        wt_tensor_retain((wt_tensor *)x), fx = (wt_tensor *)x;
    else if ((st = wt_reshape(x, x->ndim - k + 1, fshape, &fx)) != WT_OK)
        goto done;
    if ((st = run_rows(fn, op, fx, fw, fb, (float)eps, &r)) != WT_OK)
        goto done;
    st = wt_reshape(r, x->ndim, x->shape, out);
done:
    wt_tensor_release(fw);
    wt_tensor_release(fb);
    wt_tensor_release(fx);
    wt_tensor_release(r);
    return st;
}

wt_status wt_layer_norm(const wt_tensor *x, int normalized_ndim, const wt_tensor *weight, const wt_tensor *bias,
                        double eps, wt_tensor **out)
{
    WT_GRAD_HOOK((x, weight, bias, NULL), 1, out, wt_layer_norm(x, normalized_ndim, weight, bias, eps, out),
                 .op = WT_OP_LAYER_NORM, .nin = 3, .in = {x, weight, bias}, .p.i = {normalized_ndim}, .p.d = {eps});
    return norm_last_k("wt_layer_norm", WT_ROW_LAYERNORM, x, normalized_ndim, weight, bias, eps, out);
}

wt_status wt_rms_norm(const wt_tensor *x, int normalized_ndim, const wt_tensor *weight, double eps, wt_tensor **out)
{
    WT_GRAD_HOOK((x, weight, NULL, NULL), 1, out, wt_rms_norm(x, normalized_ndim, weight, eps, out),
                 .op = WT_OP_RMS_NORM, .nin = 2, .in = {x, weight}, .p.i = {normalized_ndim}, .p.d = {eps});
    return norm_last_k("wt_rms_norm", WT_ROW_RMSNORM, x, normalized_ndim, weight, NULL, eps, out);
}

wt_status wt_norm_backward_fused(const wt_tensor *dy, const wt_tensor *x, int k, const wt_tensor *weight, bool rms,
                                 double eps, wt_tensor **dx, wt_tensor **gxhat)
{
    *dx = NULL;
    if (gxhat) *gxhat = NULL;
    wt_context *ctx = wt_ctx_of(x);
    const char *knob = wt_knob_text(WT_KNOB_NORM_BACKWARD); /* "composed": the chain of ops, for comparisons */
    if ((knob && strcmp(knob, "composed") == 0) || !wt_backend_runs(ctx, WT_NODE_NORM_BACKWARD) || x->numel == 0 ||
        k < 1 || k > x->ndim || x->dtype != WT_F32 || dy->dtype != WT_F32 || (weight && weight->dtype != WT_F32) ||
        dy->ndim != x->ndim || !isfinite(eps) || !(eps >= 0))
        return WT_ERR_UNSUPPORTED;
    for (int i = 0; i < x->ndim; i++)
        if (dy->shape[i] != x->shape[i]) return WT_ERR_UNSUPPORTED;
    int64_t C = 1;
    for (int i = x->ndim - k; i < x->ndim; i++) C *= x->shape[i];
    if (C == 0 || (weight && weight->numel != C)) return WT_ERR_UNSUPPORTED;
    if (ctx->ops->norm_backward_fits && !ctx->ops->norm_backward_fits(ctx, x->numel / C, C)) return WT_ERR_UNSUPPORTED;
    const int64_t R = x->numel / C, shape2[2] = {R, C}, strides2[2] = {C, 1}, one = 1;
    wt_tensor *xc = NULL, *gc = NULL, *wc = NULL, *xv = NULL, *gv = NULL, *wv = NULL;
    wt_tensor *odx = NULL, *ogx = NULL, *dxv = NULL, *gxv = NULL;
    wt_status st;
    if ((st = wt_contiguous(x, &xc)) == WT_OK && (st = wt_contiguous(dy, &gc)) == WT_OK &&
        (!weight || (st = wt_contiguous(weight, &wc)) == WT_OK) &&
        (st = wt_tensor_view(xc, 2, shape2, strides2, xc->offset, &xv)) == WT_OK &&
        (st = wt_tensor_view(gc, 2, shape2, strides2, gc->offset, &gv)) == WT_OK &&
        (!weight || (st = wt_tensor_view(wc, 1, &C, &one, wc->offset, &wv)) == WT_OK) &&
        (st = wt_tensor_alloc(ctx, WT_F32, x->ndim, x->shape, &odx)) == WT_OK &&
        (!gxhat || (st = wt_tensor_alloc(ctx, WT_F32, x->ndim, x->shape, &ogx)) == WT_OK) &&
        (st = wt_tensor_view(odx, 2, shape2, strides2, 0, &dxv)) == WT_OK &&
        (!gxhat || (st = wt_tensor_view(ogx, 2, shape2, strides2, 0, &gxv)) == WT_OK))
        st = wt_node_run(ctx, &(wt_node){.kind = WT_NODE_NORM_BACKWARD, .in = {gv, xv, wv}, .out = {dxv, gxv},
                                         .p.row = {rms ? WT_ROW_RMSNORM : WT_ROW_LAYERNORM, (float)eps}});
    wt_tensor *tmp[8] = {xc, gc, wc, xv, gv, wv, dxv, gxv};
    for (int i = 0; i < 8; i++) wt_tensor_release(tmp[i]);
    if (st != WT_OK) {
        wt_tensor_release(odx);
        wt_tensor_release(ogx);
        return st;
    }
    *dx = odx;
    if (gxhat) *gxhat = ogx;
    return WT_OK;
}
