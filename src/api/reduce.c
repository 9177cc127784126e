/* Reduction front-ends, driven by the rows of core/reduce_ops.def: axis
 * checks, result shape and dtype, the shift pass (mean for var/std, max
 * for logsumexp), empty reductions, and the permuted view (kept axes
 * first, reduced axes last) that the backends reduce. argmax/argmin share
 * the axis handling. */
#include "api/api.h"
#include "autograd/tape.h"

#include <math.h>

/* The axes of a reduction, resolved. */
typedef struct reduce_plan {
    wt_tensor *view;             /* x with kept axes first, reduced last */
    int nkept, nred, ondim;
    int64_t kshape[WT_MAX_DIMS]; /* kept extents */
    int64_t oshape[WT_MAX_DIMS]; /* result shape (keepdims applied) */
    int64_t count;               /* reduced elements per output */
    int64_t out_numel;
} reduce_plan;

static wt_status plan_axes(const char *fn, const wt_tensor *x, int naxes, const int *axes,
                           bool keepdims, reduce_plan *pl)
{
    pl->view = NULL;
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

    int64_t vshape[WT_MAX_DIMS], vstrides[WT_MAX_DIMS];
    pl->nkept = pl->nred = pl->ondim = 0;
    pl->count = 1;
    for (int i = 0; i < x->ndim; i++)
        if (!reduced[i]) {
            pl->kshape[pl->nkept] = x->shape[i];
            vshape[pl->nkept] = x->shape[i], vstrides[pl->nkept] = x->strides[i];
            pl->nkept++;
        }
    for (int i = 0; i < x->ndim; i++)
        if (reduced[i]) {
            vshape[pl->nkept + pl->nred] = x->shape[i], vstrides[pl->nkept + pl->nred] = x->strides[i];
            pl->count *= x->shape[i];
            pl->nred++;
        }
    pl->out_numel = 1;
    for (int i = 0; i < x->ndim; i++) {
        if (!reduced[i]) pl->oshape[pl->ondim++] = x->shape[i];
        else if (keepdims) pl->oshape[pl->ondim++] = 1;
    }
    for (int i = 0; i < pl->ondim; i++) pl->out_numel *= pl->oshape[i];
    return wt_tensor_view(x, x->ndim, vshape, vstrides, x->offset, &pl->view);
}

/* t (contiguous, the result) seen with the kept axes only. */
static wt_status kept_view(const wt_tensor *t, const reduce_plan *pl, wt_tensor **out)
{
    int64_t kstrides[WT_MAX_DIMS];
    wt_contiguous_strides(pl->nkept, pl->kshape, kstrides);
    return wt_tensor_view(t, pl->nkept, pl->kshape, kstrides, t->offset, out);
}

static double fz_c(double s) { return isfinite(s) ? s : 0.0; }

/* The op's finish of its identity: the value of an empty reduction. */
static double finish_host(wt_reduce_op op, double n)
{
    const double a = wt_reduce_info_of(op)->identity, s = 0.0;
    (void)a, (void)s, (void)n;
    switch (op) {
#define WT_REDUCE_OP(ID, nm, comb, ident, sh, eok, dt, mc, fc, mw, fw) \
    case WT_REDUCE_##ID: return (fc);
#include "core/reduce_ops.def"
#undef WT_REDUCE_OP
    case WT_REDUCE_COUNT: break;
    }
    return NAN;
}

/* Fills t (contiguous; f32, i32 or bool) with value. */
static wt_status fill_value(wt_tensor *t, double value)
{
    if (t->numel == 0) return WT_OK;
    wt_context *ctx = wt_ctx_of(t);
    if (t->dtype == WT_F32) return wt_fill_f32(ctx, t, (float)value);
    return wt_node_run(ctx, &(wt_node){.kind = WT_NODE_FILL, .out = {t}, .p.bits = (uint32_t)(int32_t)value});
}

static unsigned dtype_class(wt_dtype d)
{
    switch (d) {
    case WT_F32: case WT_F16: return WT_RD_FLOAT;
    case WT_I32: return WT_RD_I32;
    default: return WT_RD_BOOL;
    }
}

static wt_status reduce_into(const char *fn, wt_reduce_op op, const wt_tensor *x, int naxes, const int *axes,
                             bool keepdims, double correction, wt_dtype result, wt_tensor **out);

static wt_status reduce(const char *fn, wt_reduce_op op, const wt_tensor *x, int naxes,
                        const int *axes, bool keepdims, double correction, wt_tensor **out)
{
    wt_status st = wt_check_out(fn, out);
    if (st != WT_OK) return st;
    if (!x) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: input tensor is NULL", fn);
    const wt_reduce_info *info = wt_reduce_info_of(op);
    if (!(info->dtypes & dtype_class(x->dtype))) {
        /* A float-valued reduction of integers runs on their f32 values
         * (NumPy's mean); the sum and product of a mask on its 0/1 as i32
         * (NumPy's count of true elements). */
        wt_dtype via = x->dtype == WT_I32 && (info->dtypes & WT_RD_FLOAT) ? WT_F32
                     : x->dtype == WT_BOOL && (op == WT_REDUCE_SUM || op == WT_REDUCE_PROD) ? WT_I32
                     : x->dtype;
        if (via != x->dtype) {
            wt_tensor *f = NULL, *r = NULL;
            if ((st = wt_cast(x, via, &f)) == WT_OK) st = reduce(fn, op, f, naxes, axes, keepdims, correction, &r);
            wt_tensor_release(f);
            if (st == WT_OK) *out = r;
            return st;
        }
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: input dtype %d is not accepted (%s)", fn, (int)x->dtype,
                       info->dtypes == WT_RD_BOOL ? "a WT_BOOL mask is needed" : "a numeric tensor is needed");
    }
    if (wt_has_f16(x, NULL, NULL)) {
        /* The backend reads the halves itself where it can (an f32 result,
         * rounded once at the end); else through an f32 copy. */
        wt_tensor *r = NULL;
        st = reduce_into(fn, op, x, naxes, axes, keepdims, correction, WT_F32, &r);
        if (st == WT_ERR_UNSUPPORTED) {
            wt_lifted l;
            if ((st = wt_lift_f16(x, NULL, NULL, &l)) == WT_OK)
                st = reduce(fn, op, l.in[0], naxes, axes, keepdims, correction, &r);
            wt_lifted_release(&l);
        }
        return wt_land(st, r, WT_F16, out);
    }
    return reduce_into(fn, op, x, naxes, axes, keepdims, correction, x->dtype, out);
}

/* The reduction of x (of an accepted dtype) into a fresh tensor of dtype
 * result: x's own, or f32 for f16 x. */
static wt_status reduce_into(const char *fn, wt_reduce_op op, const wt_tensor *x, int naxes, const int *axes,
                             bool keepdims, double correction, wt_dtype result, wt_tensor **out)
{
    const wt_reduce_info *info = wt_reduce_info_of(op);
    wt_status st;
    if (!(correction >= 0) || isinf(correction))
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: correction %g is not a finite value >= 0", fn, correction);
    reduce_plan pl;
    if ((st = plan_axes(fn, x, naxes, axes, keepdims, &pl)) != WT_OK) return st;
    /* Like NumPy: an error only when some output would need a value. */
    if (pl.count == 0 && pl.out_numel > 0 && !info->empty_ok) {
        wt_tensor_release(pl.view);
        return wt_fail(WT_ERR_SHAPE, "%s: reduction over an empty set of elements has no identity", fn);
    }
    double n = (double)pl.count;
    if (info->shift == WT_SHIFT_MEAN) n = n - correction > 0 ? n - correction : 0.0;

    wt_context *ctx = wt_ctx_of(x);
    wt_tensor *t = NULL, *kv = NULL, *shift = NULL;
    if ((st = wt_tensor_alloc(ctx, result, pl.ondim, pl.oshape, &t)) != WT_OK) goto done;
    if (t->numel == 0) goto done;
    if (pl.count == 0) {
        st = fill_value(t, finish_host(op, n));
        goto done;
    }
    if ((st = kept_view(t, &pl, &kv)) != WT_OK) goto done;
    wt_reduce_args args = {op, NULL, n};
    if (info->shift != WT_SHIFT_NONE) {
        wt_reduce_args first = {info->shift == WT_SHIFT_MEAN ? WT_REDUCE_MEAN : WT_REDUCE_MAX, NULL,
                                (double)pl.count};
        if ((st = wt_tensor_alloc(ctx, WT_F32, pl.nkept, pl.kshape, &shift)) != WT_OK ||
            (st = wt_node_run(ctx, &(wt_node){.kind = WT_NODE_REDUCE, .in = {pl.view, first.shift}, .out = {shift}, .p.reduce = {first.op, first.n, pl.nred}})) != WT_OK)
            goto done;
        args.shift = shift;
    }
    st = wt_node_run(ctx, &(wt_node){.kind = WT_NODE_REDUCE, .in = {pl.view, args.shift}, .out = {kv}, .p.reduce = {args.op, args.n, pl.nred}});
done:
    wt_tensor_release(pl.view);
    wt_tensor_release(kv);
    wt_tensor_release(shift);
    if (st != WT_OK) {
        wt_tensor_release(t);
        return st;
    }
    *out = t;
    return WT_OK;
}

wt_status wt_sum(const wt_tensor *x, int naxes, const int *axes, bool keepdims, wt_tensor **out)
{
    WT_GRAD_HOOK((x, NULL, NULL, NULL), 1, out, wt_sum(x, naxes, axes, keepdims, out),
                 .op = WT_OP_SUM, .nin = 1, .in = {x}, .p = wt_grad_axes(naxes, axes, keepdims, 0.0));
    return reduce("wt_sum", WT_REDUCE_SUM, x, naxes, axes, keepdims, 0, out);
}
wt_status wt_mean(const wt_tensor *x, int naxes, const int *axes, bool keepdims, wt_tensor **out)
{
    WT_GRAD_HOOK((x, NULL, NULL, NULL), 1, out, wt_mean(x, naxes, axes, keepdims, out),
                 .op = WT_OP_MEAN, .nin = 1, .in = {x}, .p = wt_grad_axes(naxes, axes, keepdims, 0.0));
    return reduce("wt_mean", WT_REDUCE_MEAN, x, naxes, axes, keepdims, 0, out);
}
wt_status wt_max(const wt_tensor *x, int naxes, const int *axes, bool keepdims, wt_tensor **out)
{
    WT_GRAD_HOOK((x, NULL, NULL, NULL), 1, out, wt_max(x, naxes, axes, keepdims, out),
                 .op = WT_OP_MAX, .nin = 1, .in = {x}, .p = wt_grad_axes(naxes, axes, keepdims, 0.0));
    return reduce("wt_max", WT_REDUCE_MAX, x, naxes, axes, keepdims, 0, out);
}
wt_status wt_min(const wt_tensor *x, int naxes, const int *axes, bool keepdims, wt_tensor **out)
{
    WT_GRAD_HOOK((x, NULL, NULL, NULL), 1, out, wt_min(x, naxes, axes, keepdims, out),
                 .op = WT_OP_MIN, .nin = 1, .in = {x}, .p = wt_grad_axes(naxes, axes, keepdims, 0.0));
    return reduce("wt_min", WT_REDUCE_MIN, x, naxes, axes, keepdims, 0, out);
}
wt_status wt_prod(const wt_tensor *x, int naxes, const int *axes, bool keepdims, wt_tensor **out)
{
    WT_GRAD_HOOK((x, NULL, NULL, NULL), 1, out, wt_prod(x, naxes, axes, keepdims, out),
                 .op = WT_OP_PROD, .nin = 1, .in = {x}, .p = wt_grad_axes(naxes, axes, keepdims, 0.0));
    return reduce("wt_prod", WT_REDUCE_PROD, x, naxes, axes, keepdims, 0, out);
}
wt_status wt_var(const wt_tensor *x, int naxes, const int *axes, double correction, bool keepdims,
                 wt_tensor **out)
{
    WT_GRAD_HOOK((x, NULL, NULL, NULL), 1, out, wt_var(x, naxes, axes, correction, keepdims, out),
                 .op = WT_OP_VAR, .nin = 1, .in = {x}, .p = wt_grad_axes(naxes, axes, keepdims, correction));
    return reduce("wt_var", WT_REDUCE_VAR, x, naxes, axes, keepdims, correction, out);
}
wt_status wt_std(const wt_tensor *x, int naxes, const int *axes, double correction, bool keepdims,
                 wt_tensor **out)
{
    WT_GRAD_HOOK((x, NULL, NULL, NULL), 1, out, wt_std(x, naxes, axes, correction, keepdims, out),
                 .op = WT_OP_STD, .nin = 1, .in = {x}, .p = wt_grad_axes(naxes, axes, keepdims, correction));
    return reduce("wt_std", WT_REDUCE_STD, x, naxes, axes, keepdims, correction, out);
}
wt_status wt_logsumexp(const wt_tensor *x, int naxes, const int *axes, bool keepdims, wt_tensor **out)
{
    WT_GRAD_HOOK((x, NULL, NULL, NULL), 1, out, wt_logsumexp(x, naxes, axes, keepdims, out),
                 .op = WT_OP_LOGSUMEXP, .nin = 1, .in = {x}, .p = wt_grad_axes(naxes, axes, keepdims, 0.0));
    return reduce("wt_logsumexp", WT_REDUCE_LOGSUMEXP, x, naxes, axes, keepdims, 0, out);
}
wt_status wt_norm(const wt_tensor *x, double ord, int naxes, const int *axes, bool keepdims,
                  wt_tensor **out)
{
    WT_GRAD_HOOK((x, NULL, NULL, NULL), 1, out, wt_norm(x, ord, naxes, axes, keepdims, out),
                 .op = WT_OP_NORM, .nin = 1, .in = {x}, .p = wt_grad_axes(naxes, axes, keepdims, ord));
    wt_reduce_op op = ord == 1.0 ? WT_REDUCE_NORM1 : ord == 2.0 ? WT_REDUCE_NORM2
                    : ord == INFINITY ? WT_REDUCE_NORMINF : WT_REDUCE_COUNT;
    if (op == WT_REDUCE_COUNT) {
        wt_status st = wt_check_out("wt_norm", out);
        if (st != WT_OK) return st;
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "wt_norm: ord %g is not 1, 2 or INFINITY", ord);
    }
    return reduce("wt_norm", op, x, naxes, axes, keepdims, 0, out);
}
wt_status wt_all(const wt_tensor *x, int naxes, const int *axes, bool keepdims, wt_tensor **out)
{
    WT_GRAD_HOOK((x, NULL, NULL, NULL), 1, out, wt_all(x, naxes, axes, keepdims, out),
                 .op = WT_OP_ALL, .nin = 1, .in = {x}, .p = wt_grad_axes(naxes, axes, keepdims, 0.0));
    return reduce("wt_all", WT_REDUCE_ALL, x, naxes, axes, keepdims, 0, out);
}
wt_status wt_any(const wt_tensor *x, int naxes, const int *axes, bool keepdims, wt_tensor **out)
{
    WT_GRAD_HOOK((x, NULL, NULL, NULL), 1, out, wt_any(x, naxes, axes, keepdims, out),
                 .op = WT_OP_ANY, .nin = 1, .in = {x}, .p = wt_grad_axes(naxes, axes, keepdims, 0.0));
    return reduce("wt_any", WT_REDUCE_ANY, x, naxes, axes, keepdims, 0, out);
}

/* ------------------------------------------------------- argmax, argmin */

static wt_status argreduce(const char *fn, bool is_min, const wt_tensor *x, int naxes, const int *axes,
                           bool keepdims, wt_tensor **out)
{
    wt_status st = wt_check_out(fn, out);
    if (st != WT_OK) return st;
    if (!x) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: input tensor is NULL", fn);
    if (x->dtype == WT_F16) { /* exact in f32 */
        wt_tensor *f = NULL, *r = NULL;
        if ((st = wt_cast(x, WT_F32, &f)) == WT_OK) st = argreduce(fn, is_min, f, naxes, axes, keepdims, &r);
        wt_tensor_release(f);
        if (st == WT_OK) *out = r;
        return st;
    }
    if (wt_dtype_storage_size(x->dtype) != 4)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: unknown dtype %d", fn, (int)x->dtype);
    reduce_plan pl;
    if ((st = plan_axes(fn, x, naxes, axes, keepdims, &pl)) != WT_OK) return st;
    if (pl.count == 0 && pl.out_numel > 0) {
        wt_tensor_release(pl.view);
        return wt_fail(WT_ERR_SHAPE, "%s: an empty set of elements has no extremum", fn);
    }
    if (pl.count > INT32_MAX) {
        wt_tensor_release(pl.view);
        return wt_fail(WT_ERR_UNSUPPORTED, "%s: %lld elements per output exceed i32 indices", fn,
                       (long long)pl.count);
    }
    wt_context *ctx = wt_ctx_of(x);
    wt_tensor *t = NULL, *kv = NULL;
    if ((st = wt_tensor_alloc(ctx, WT_I32, pl.ondim, pl.oshape, &t)) == WT_OK && t->numel > 0 &&
        (st = kept_view(t, &pl, &kv)) == WT_OK)
        st = wt_node_run(ctx, &(wt_node){.kind = WT_NODE_ARGREDUCE, .in = {pl.view}, .out = {kv}, .p.argreduce = {is_min, pl.nred}});
    wt_tensor_release(pl.view);
    wt_tensor_release(kv);
    if (st != WT_OK) {
        wt_tensor_release(t);
        return st;
    }
    *out = t;
    return WT_OK;
}

wt_status wt_argmax(const wt_tensor *x, int naxes, const int *axes, bool keepdims, wt_tensor **out)
{
    WT_GRAD_HOOK((x, NULL, NULL, NULL), 1, out, wt_argmax(x, naxes, axes, keepdims, out),
                 .op = WT_OP_ARGMAX, .nin = 1, .in = {x}, .p = wt_grad_axes(naxes, axes, keepdims, 0.0));
    return argreduce("wt_argmax", false, x, naxes, axes, keepdims, out);
}
wt_status wt_argmin(const wt_tensor *x, int naxes, const int *axes, bool keepdims, wt_tensor **out)
{
    WT_GRAD_HOOK((x, NULL, NULL, NULL), 1, out, wt_argmin(x, naxes, axes, keepdims, out),
                 .op = WT_OP_ARGMIN, .nin = 1, .in = {x}, .p = wt_grad_axes(naxes, axes, keepdims, 0.0));
    return argreduce("wt_argmin", true, x, naxes, axes, keepdims, out);
}
