/* Elementwise front-ends: NumPy broadcasting for binary ops. */
#include "api/api.h"

#include <string.h>

/* NumPy broadcast of two shapes (aligned at the right). */
static wt_status broadcast_shape(const char *fn, const wt_tensor *a, const wt_tensor *b, int *ndim,
                                 int64_t *shape)
{
    int n = a->ndim > b->ndim ? a->ndim : b->ndim;
    for (int i = 0; i < n; i++) {
        int ia = i - (n - a->ndim), ib = i - (n - b->ndim);
        int64_t sa = ia >= 0 ? a->shape[ia] : 1, sb = ib >= 0 ? b->shape[ib] : 1;
        if (sa != sb && sa != 1 && sb != 1) {
            char b1[160], b2[160];
            return wt_fail(WT_ERR_SHAPE, "%s: shapes %s and %s do not broadcast (axis %d: %lld vs %lld)", fn,
                           wt_shape_str(a->ndim, a->shape, b1, sizeof b1),
                           wt_shape_str(b->ndim, b->shape, b2, sizeof b2), i, (long long)sa, (long long)sb);
        }
        shape[i] = sa == 1 ? sb : sa;
    }
    *ndim = n;
    return WT_OK;
}

/* The layout the backends' native f16 kernels take: f16, contiguous, at
 * an even element offset (their threads work on 2-element words). */
static bool native_f16_layout(const wt_tensor *t)
{
    if (t->dtype != WT_F16 || t->offset % 2 != 0) return false;
    int64_t expect = 1;
    for (int d = t->ndim - 1; d >= 0; d--) {
        if (t->shape[d] != 1 && t->strides[d] != expect) return false;
        expect *= t->shape[d];
    }
    return true;
}

static bool same_shape(const wt_tensor *a, const wt_tensor *b)
{
    return a->ndim == b->ndim && memcmp(a->shape, b->shape, sizeof a->shape[0] * (size_t)a->ndim) == 0;
}

/* f16 ops without the trip through f32, where the backend has them and the
 * layout suits. *done says whether the result (or a failure) is final:
 * WT_ERR_UNSUPPORTED from the backend means "use the f32 path". */
static wt_status native_f16(wt_unary_op uop, wt_binary_op bop, const wt_tensor *a,
                            const wt_tensor *b, wt_tensor **out, bool *done)
{
    *done = false;
    wt_context *ctx = wt_ctx_of(a);
    bool ok = b ? ctx->ops->binary_f16 && native_f16_layout(a) && native_f16_layout(b) && same_shape(a, b)
                : ctx->ops->unary_f16 && native_f16_layout(a);
    if (!ok) return WT_OK;
    wt_tensor *t = NULL;
    wt_status st = wt_tensor_alloc(ctx, WT_F16, a->ndim, a->shape, &t);
    if (st == WT_OK && t->numel > 0)
        st = b ? ctx->ops->binary_f16(ctx, bop, a, b, t) : ctx->ops->unary_f16(ctx, uop, a, t);
    if (st == WT_OK) {
        *out = t;
        *done = true;
        return WT_OK;
    }
    wt_tensor_release(t);
    *done = st != WT_ERR_UNSUPPORTED;
    return st;
}

static wt_status binary(const char *fn, wt_binary_op op, const wt_tensor *a, const wt_tensor *b,
                        wt_tensor **out)
{
    wt_status st = wt_check_out(fn, out);
    if (st != WT_OK || (st = wt_check_input(fn, a)) != WT_OK || (st = wt_check_input(fn, b)) != WT_OK ||
        (st = wt_check_same_context(fn, a, b)) != WT_OK)
        return st;
    if (wt_has_f16(a, b, NULL)) {
        bool done;
        st = native_f16(WT_UNARY_COUNT, op, a, b, out, &done);
        if (done) return st;
        wt_lifted l;
        wt_tensor *r = NULL;
        if ((st = wt_lift_f16(a, b, NULL, &l)) == WT_OK) st = binary(fn, op, l.in[0], l.in[1], &r);
        wt_lifted_release(&l);
        return wt_land(st, r, l.result, out);
    }
    int ndim = 0;
    int64_t shape[WT_MAX_DIMS];
    if ((st = broadcast_shape(fn, a, b, &ndim, shape)) != WT_OK) return st;
    wt_context *ctx = wt_ctx_of(a);
    wt_tensor *ea = NULL, *eb = NULL, *t = NULL;
    if ((st = wt_expand(a, ndim, shape, &ea)) != WT_OK || (st = wt_expand(b, ndim, shape, &eb)) != WT_OK ||
        (st = wt_tensor_alloc(ctx, WT_F32, ndim, shape, &t)) != WT_OK)
        goto done;
    if (t->numel > 0) st = ctx->ops->binary(ctx, op, ea, eb, t);
done:
    wt_tensor_release(ea);
    wt_tensor_release(eb);
    if (st != WT_OK) {
        wt_tensor_release(t);
        return st;
    }
    *out = t;
    return WT_OK;
}

static wt_status unary(const char *fn, wt_unary_op op, const wt_tensor *x, wt_tensor **out)
{
    wt_status st = wt_check_out(fn, out);
    if (st != WT_OK || (st = wt_check_input(fn, x)) != WT_OK) return st;
    if (wt_has_f16(x, NULL, NULL)) {
        bool done;
        st = native_f16(op, WT_BINARY_COUNT, x, NULL, out, &done);
        if (done) return st;
        wt_lifted l;
        wt_tensor *r = NULL;
        if ((st = wt_lift_f16(x, NULL, NULL, &l)) == WT_OK) st = unary(fn, op, l.in[0], &r);
        wt_lifted_release(&l);
        return wt_land(st, r, l.result, out);
    }
    wt_context *ctx = wt_ctx_of(x);
    wt_tensor *t;
    if ((st = wt_tensor_alloc(ctx, WT_F32, x->ndim, x->shape, &t)) != WT_OK) return st;
    if (t->numel > 0 && (st = ctx->ops->unary(ctx, op, x, t)) != WT_OK) {
        wt_tensor_release(t);
        return st;
    }
    *out = t;
    return WT_OK;
}

wt_status wt_add(const wt_tensor *a, const wt_tensor *b, wt_tensor **out) { return binary("wt_add", WT_BINARY_ADD, a, b, out); }
wt_status wt_sub(const wt_tensor *a, const wt_tensor *b, wt_tensor **out) { return binary("wt_sub", WT_BINARY_SUB, a, b, out); }
wt_status wt_mul(const wt_tensor *a, const wt_tensor *b, wt_tensor **out) { return binary("wt_mul", WT_BINARY_MUL, a, b, out); }
wt_status wt_div(const wt_tensor *a, const wt_tensor *b, wt_tensor **out) { return binary("wt_div", WT_BINARY_DIV, a, b, out); }

wt_status wt_neg(const wt_tensor *x, wt_tensor **out) { return unary("wt_neg", WT_UNARY_NEG, x, out); }
wt_status wt_exp(const wt_tensor *x, wt_tensor **out) { return unary("wt_exp", WT_UNARY_EXP, x, out); }
wt_status wt_log(const wt_tensor *x, wt_tensor **out) { return unary("wt_log", WT_UNARY_LOG, x, out); }
wt_status wt_sqrt(const wt_tensor *x, wt_tensor **out) { return unary("wt_sqrt", WT_UNARY_SQRT, x, out); }
wt_status wt_relu(const wt_tensor *x, wt_tensor **out) { return unary("wt_relu", WT_UNARY_RELU, x, out); }
wt_status wt_sigmoid(const wt_tensor *x, wt_tensor **out) { return unary("wt_sigmoid", WT_UNARY_SIGMOID, x, out); }
wt_status wt_tanh(const wt_tensor *x, wt_tensor **out) { return unary("wt_tanh", WT_UNARY_TANH, x, out); }
