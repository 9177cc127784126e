/* Elementwise front-ends: one engine for every unary and binary row of the
 * catalogue (core/ops.def), whose public wrappers are generated at the end
 * of this file. The engine applies the row's dtype rule (which dtype the
 * op computes in and returns), NumPy broadcasting, and the backend's
 * answer for that dtype (native, or through f32), then calls the backend's
 * elementwise kernel. where and masked_fill have kernels of their own. */
#include "api/api.h"
#include "autograd/tape.h"

#include <math.h>
#include <string.h>

wt_dtype wt_promote(wt_dtype a, wt_dtype b)
{
    static const int rank[4] = {[WT_BOOL] = 0, [WT_I32] = 1, [WT_F16] = 2, [WT_F32] = 3};
    if (a == b) return a;
    if ((a == WT_I32 && b == WT_F16) || (a == WT_F16 && b == WT_I32)) return WT_F32;
    return rank[a] > rank[b] ? a : b;
}

wt_status wt_broadcast_shapes(const char *fn, int n, const wt_tensor *const *t, int *ndim, int64_t *shape)
{
    int nd = 0;
    for (int k = 0; k < n; k++)
        if (t[k]->ndim > nd) nd = t[k]->ndim;
    for (int i = 0; i < nd; i++) {
        int64_t s = 1;
        for (int k = 0; k < n; k++) {
            int ik = i - (nd - t[k]->ndim);
            int64_t sk = ik >= 0 ? t[k]->shape[ik] : 1;
            if (sk != 1 && s != 1 && sk != s) {
                char b1[160], b2[160];
                return wt_fail(WT_ERR_SHAPE, "%s: shapes %s and %s do not broadcast (axis %d: %lld vs %lld)", fn,
                               wt_shape_str(t[0]->ndim, t[0]->shape, b1, sizeof b1),
                               wt_shape_str(t[k]->ndim, t[k]->shape, b2, sizeof b2), i, (long long)s, (long long)sk);
            }
            if (sk != 1) s = sk;
        }
        shape[i] = s;
    }
    *ndim = nd;
    return WT_OK;
}

/* x converted to dtype (x itself, one more reference, when it is already). */
static wt_status as_dtype(const wt_tensor *x, wt_dtype dtype, wt_tensor **out)
{
    if (x->dtype != dtype) return wt_cast(x, dtype, out);
    wt_tensor_retain((wt_tensor *)x);
    *out = (wt_tensor *)x;
    return WT_OK;
}

/* A scalar parameter as the 32-bit pattern of its lane type. */
static wt_status param_bits(const char *fn, wt_op op, int k, double v, wt_dtype lanes, uint32_t *bits)
{
    if (op == WT_OP_CLAMP && isnan(v)) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: a bound is NaN", fn);
    if (lanes == WT_F32 || lanes == WT_F16) {
        float f = (float)v;
        memcpy(bits, &f, sizeof f);
        return WT_OK;
    }
    if (lanes == WT_BOOL) {
        *bits = v != 0.0; /* NaN is true */
        return WT_OK;
    }
    /* i32 clamp: the bounds rounded inward (ceil lo, floor hi), saturated. */
    double r = op == WT_OP_CLAMP ? (k == 0 ? ceil(v) : floor(v)) : trunc(v);
    int32_t i = r >= 2147483647.0 ? INT32_MAX : r <= -2147483648.0 ? INT32_MIN : (int32_t)r;
    memcpy(bits, &i, sizeof i);
    return WT_OK;
}

/* out = op(in...) computed in lanes (the inputs are cast to it) and
 * returned as out_dtype; the shape is the inputs' broadcast. */
static wt_status compute(const char *fn, wt_op op, int nin, const wt_tensor *const *in, const double *params,
                         wt_dtype lanes, wt_dtype out_dtype, wt_tensor **out)
{
    wt_context *ctx = wt_ctx_of(in[0]);
    int ndim = 0;
    int64_t shape[WT_MAX_DIMS];
    /* in[1] NULL: a binary op's scalar b, params[1]. */
    int ntensors = nin == 2 && !in[1] ? 1 : nin;
    wt_status st = wt_broadcast_shapes(fn, ntensors, in, &ndim, shape);
    if (st != WT_OK) return st;
    wt_node node = {.kind = WT_NODE_ELEMENTWISE, .p.ew = {.op = op, .nin = nin}};
    for (int k = 0; k < 2 && st == WT_OK; k++)
        st = param_bits(fn, op, k, params ? params[k] : 0.0, lanes, &node.p.ew.params[k]);
    wt_tensor *cast[2] = {NULL, NULL}, *t = NULL;
    for (int k = 0; k < ntensors && st == WT_OK; k++) {
        wt_tensor *c = NULL;
        if ((st = as_dtype(in[k], lanes, &c)) == WT_OK) {
            /* Already of the broadcast shape (the common case): no view. */
            if (c->ndim == ndim && memcmp(c->shape, shape, sizeof shape[0] * (size_t)ndim) == 0) {
                cast[k] = c;
            } else {
                st = wt_expand(c, ndim, shape, &cast[k]);
                wt_tensor_release(c);
            }
        }
        node.in[k] = cast[k];
    }
    if (st == WT_OK) st = wt_tensor_alloc(ctx, out_dtype, ndim, shape, &t);
    node.out[0] = t;
    if (st == WT_OK && t->numel > 0) st = wt_node_run(ctx, &node);
    for (int k = 0; k < nin; k++) wt_tensor_release(cast[k]);
    if (st != WT_OK) {
        wt_tensor_release(t);
        return st;
    }
    *out = t;
    return WT_OK;
}

/* The dtype rules (core/internal.h, wt_rule): the lanes an op computes in
 * and its result, for inputs whose promoted dtype is `in`. */
static wt_status resolve(const char *fn, const wt_op_info *info, wt_dtype in, wt_dtype *lanes, wt_dtype *result)
{
    bool is_float = in == WT_F32 || in == WT_F16;
    *lanes = *result = in;
    switch (info->rule) {
    case WT_RULE_FLOAT:
        *lanes = *result = is_float ? in : WT_F32;
        return WT_OK;
    case WT_RULE_NUM:
    case WT_RULE_ROUND:
        if (in == WT_BOOL)
            return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: dtype bool is not a number (cast it first)", fn);
        return WT_OK;
    case WT_RULE_LOGIC:
        *lanes = *result = WT_BOOL;
        return WT_OK;
    case WT_RULE_ARITH:
    case WT_RULE_INTDIV:
        if (in == WT_BOOL)
            return wt_fail(WT_ERR_INVALID_ARGUMENT,
                           "%s: arithmetic on two bool tensors (use the logical ops, or cast)", fn);
        return WT_OK;
    case WT_RULE_CMP:
        *result = WT_BOOL;
        return WT_OK;
    case WT_RULE_KERNEL:
        break;
    }
    return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: not an elementwise op", fn);
}

/* The dtype a scalar b takes beside a tensor of dtype a (a "weak" scalar,
 * as PyTorch's Python numbers): a float tensor's own; beside i32 or bool,
 * i32 when b is an integer in the i32 range, else f32. */
static wt_dtype scalar_dtype(wt_dtype a, double b)
{
    if (a == WT_F32 || a == WT_F16) return a;
    return b == trunc(b) && b >= -2147483648.0 && b <= 2147483647.0 ? WT_I32 : WT_F32;
}

/* op(a, b), b a tensor or (b NULL) the scalar *scalar, or op(a; params). */
static wt_status ew_run_any(const char *fn, wt_op op, const wt_tensor *a, const wt_tensor *b, const double *scalar,
                            const double *params, wt_tensor **out)
{
    if (wt_grad_any(a, scalar ? NULL : b, NULL, NULL)) {
        wt_grad_call gc = {.op = op, .nin = wt_op_table[op].arity == 2 && !scalar ? 2 : 1, .in = {a, scalar ? NULL : b}};
        gc.p.d[0] = params ? params[0] : 0.0;
        gc.p.d[1] = params ? params[1] : 0.0;
        gc.p.b[0] = scalar != NULL;
        gc.p.d[2] = scalar ? *scalar : 0.0;
        if (wt_grad_begin(&gc)) return wt_grad_end(&gc, ew_run_any(fn, op, a, b, scalar, params, out), 1, out);
    }
    const wt_op_info *info = &wt_op_table[op];
    wt_status st = wt_check_out(fn, out);
    if (st != WT_OK || (st = wt_check_tensor(fn, a)) != WT_OK) return st;
    if (info->arity == 2 && !scalar &&
        ((st = wt_check_tensor(fn, b)) != WT_OK || (st = wt_check_same_context(fn, a, b)) != WT_OK))
        return st;
    wt_dtype in = a->dtype;
    if (info->arity == 2) in = scalar ? wt_promote(a->dtype, scalar_dtype(a->dtype, *scalar))
                                      : wt_promote(a->dtype, b->dtype);
    /* A scalar beside a bool tensor counts as a number (bool + 1 is i32),
     * except for the logical ops. */
    wt_dtype lanes, result;
    if ((st = resolve(fn, info, in, &lanes, &result)) != WT_OK) return st;
    if (info->rule == WT_RULE_ROUND && lanes == WT_I32) return wt_copy(a, out); /* integers are already round */
    const wt_tensor *in_t[2] = {a, b};
    double p[2] = {params ? params[0] : 0.0, scalar ? *scalar : (params ? params[1] : 0.0)};
    wt_context *ctx = wt_ctx_of(a);
    wt_support sup = wt_op_support_on(ctx, op, lanes);
    const wt_tensor *const *in_ = in_t;
    const double *params_ = p;
    if (sup == WT_SUPPORT_NATIVE && lanes == WT_F16) {
        /* The backend's f16 kernels take some layouts only; WT_ERR_UNSUPPORTED
         * means "through f32". */
        st = compute(fn, op, info->arity, in_, params_, lanes, result, out);
        if (st != WT_ERR_UNSUPPORTED) return st;
        sup = WT_SUPPORT_VIA_F32;
    }
    if (sup == WT_SUPPORT_VIA_F32 && lanes == WT_F16) {
        wt_tensor *r = NULL;
        st = compute(fn, op, info->arity, in_, params_, WT_F32, result == WT_F16 ? WT_F32 : result, &r);
        return wt_land(st, r, result == WT_F16 ? WT_F16 : WT_F32, out);
    }
    if (sup != WT_SUPPORT_NATIVE)
        return wt_fail(WT_ERR_UNSUPPORTED, "%s: dtype %s is not supported on the %s backend", fn,
                       wt_dtype_name(lanes), ctx->ops->name);
    return compute(fn, op, info->arity, in_, params_, lanes, result, out);
}

static wt_status ew_run(const char *fn, wt_op op, const wt_tensor *a, const wt_tensor *b, const double *params,
                        wt_tensor **out)
{
    return ew_run_any(fn, op, a, b, NULL, params, out);
}

/* ------------------------------------------------------ where, masked_fill */

static wt_status check_mask(const char *fn, const wt_tensor *mask)
{
    wt_status st = wt_check_tensor(fn, mask);
    if (st == WT_OK && mask->dtype != WT_BOOL)
        st = wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: the mask is %s, not bool (compare, or cast it)", fn,
                     wt_dtype_name(mask->dtype));
    return st;
}

/* mask ? a : b with a (NULL: the scalar a_bits) and b of dtype (4-byte). */
static wt_status where_run(const char *fn, const wt_tensor *mask, const wt_tensor *a, const wt_tensor *b,
                           uint32_t a_bits, wt_dtype dtype, int ndim, const int64_t *shape, wt_tensor **out)
{
    wt_context *ctx = wt_ctx_of(b);
    const wt_tensor *in[3] = {mask, a, b};
    wt_tensor *ex[3] = {NULL, NULL, NULL}, *t = NULL;
    wt_status st = WT_OK;
    for (int k = 0; k < 3 && st == WT_OK; k++) {
        if (!in[k]) continue;
        wt_tensor *c = NULL;
        if ((st = as_dtype(in[k], k == 0 ? WT_BOOL : dtype, &c)) == WT_OK) {
            st = wt_expand(c, ndim, shape, &ex[k]);
            wt_tensor_release(c);
        }
    }
    if (st == WT_OK) st = wt_tensor_alloc(ctx, dtype, ndim, shape, &t);
    if (st == WT_OK && t->numel > 0) st = wt_node_run(ctx, &(wt_node){.kind = WT_NODE_WHERE, .in = {ex[0], ex[1], ex[2]}, .out = {t}, .p.bits = a_bits});
    for (int k = 0; k < 3; k++) wt_tensor_release(ex[k]);
    if (st != WT_OK) {
        wt_tensor_release(t);
        return st;
    }
    *out = t;
    return WT_OK;
}

wt_status wt_where(const wt_tensor *mask, const wt_tensor *a, const wt_tensor *b, wt_tensor **out)
{
    WT_GRAD_HOOK((mask, a, b, NULL), 1, out, wt_where(mask, a, b, out),
                 .op = WT_OP_WHERE, .nin = 3, .in = {mask, a, b});
    const char *fn = "wt_where";
    wt_status st = wt_check_out(fn, out);
    if (st != WT_OK || (st = check_mask(fn, mask)) != WT_OK || (st = wt_check_tensor(fn, a)) != WT_OK ||
        (st = wt_check_tensor(fn, b)) != WT_OK || (st = wt_check_same_context(fn, mask, a)) != WT_OK ||
        (st = wt_check_same_context(fn, a, b)) != WT_OK)
        return st;
    const wt_tensor *all[3] = {mask, a, b};
    int ndim = 0;
    int64_t shape[WT_MAX_DIMS];
    if ((st = wt_broadcast_shapes(fn, 3, all, &ndim, shape)) != WT_OK) return st;
    wt_dtype dtype = wt_promote(a->dtype, b->dtype);
    if (wt_op_support_on(wt_ctx_of(a), WT_OP_WHERE, dtype) == WT_SUPPORT_NATIVE)
        return where_run(fn, mask, a, b, 0, dtype, ndim, shape, out);
    /* f16: selected as f32 (exact both ways). */
    wt_tensor *r = NULL;
    st = where_run(fn, mask, a, b, 0, WT_F32, ndim, shape, &r);
    return wt_land(st, r, dtype, out);
}

wt_status wt_masked_fill(const wt_tensor *x, const wt_tensor *mask, double value, wt_tensor **out)
{
    WT_GRAD_HOOK((x, mask, NULL, NULL), 1, out, wt_masked_fill(x, mask, value, out),
                 .op = WT_OP_MASKED_FILL, .nin = 2, .in = {x, mask});
    const char *fn = "wt_masked_fill";
    wt_status st = wt_check_out(fn, out);
    if (st != WT_OK || (st = wt_check_tensor(fn, x)) != WT_OK || (st = check_mask(fn, mask)) != WT_OK ||
        (st = wt_check_same_context(fn, x, mask)) != WT_OK)
        return st;
    const wt_tensor *all[2] = {x, mask};
    int ndim = 0;
    int64_t shape[WT_MAX_DIMS];
    if ((st = wt_broadcast_shapes(fn, 2, all, &ndim, shape)) != WT_OK) return st;
    if (ndim != x->ndim || memcmp(shape, x->shape, sizeof shape[0] * (size_t)ndim) != 0) {
        char b1[160], b2[160];
        return wt_fail(WT_ERR_SHAPE, "%s: a mask of %s does not broadcast to x's shape %s", fn,
                       wt_shape_str(mask->ndim, mask->shape, b1, sizeof b1),
                       wt_shape_str(x->ndim, x->shape, b2, sizeof b2));
    }
    wt_dtype dtype = x->dtype == WT_F16 ? WT_F32 : x->dtype; /* f16: selected as f32, exact */
    uint32_t bits;
    if (dtype == WT_I32) {
        if (isnan(value) || value <= -2147483649.0 || value >= 2147483648.0)
            return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: %g is not an i32 value", fn, value);
        int32_t i = (int32_t)value;
        memcpy(&bits, &i, sizeof bits);
    } else if (dtype == WT_BOOL) {
        bits = value != 0.0;
    } else {
        /* An f16 x gets value rounded to f16 (by the cast of the result). */
        float f = (float)value;
        memcpy(&bits, &f, sizeof bits);
    }
    wt_tensor *r = NULL;
    st = where_run(fn, mask, NULL, x, bits, dtype, ndim, shape, &r);
    if (x->dtype != WT_F16) {
        if (st == WT_OK) *out = r;
        return st;
    }
    return wt_land(st, r, WT_F16, out);
}

/* ------------------------------------------------- the generated wrappers */

#define WT_UNARY(NAME, name, rule, nparams, c_f32, c_i32, wgsl) WRAP_UNARY_##nparams(NAME, name)
#define WRAP_UNARY_0(NAME, name)                                                            \
    wt_status wt_##name(const wt_tensor *x, wt_tensor **out)                                \
    {                                                                                       \
        return ew_run("wt_" #name, WT_OP_##NAME, x, NULL, NULL, out);                       \
    }
#define WRAP_UNARY_1(NAME, name)                                                            \
    wt_status wt_##name(const wt_tensor *x, double p0, wt_tensor **out)                     \
    {                                                                                       \
        const double p[2] = {p0, 0.0};                                                      \
        return ew_run("wt_" #name, WT_OP_##NAME, x, NULL, p, out);                          \
    }
#define WRAP_UNARY_2(NAME, name)                                                            \
    wt_status wt_##name(const wt_tensor *x, double p0, double p1, wt_tensor **out)          \
    {                                                                                       \
        const double p[2] = {p0, p1};                                                       \
        return ew_run("wt_" #name, WT_OP_##NAME, x, NULL, p, out);                          \
    }
#define WT_BINARY(NAME, name, rule, c_f32, c_i32, wgsl)                                     \
    wt_status wt_##name(const wt_tensor *a, const wt_tensor *b, wt_tensor **out)            \
    {                                                                                       \
        return ew_run("wt_" #name, WT_OP_##NAME, a, b, NULL, out);                          \
    }                                                                                       \
    wt_status wt_##name##_scalar(const wt_tensor *a, double b, wt_tensor **out)             \
    {                                                                                       \
        return ew_run_any("wt_" #name "_scalar", WT_OP_##NAME, a, NULL, &b, NULL, out);     \
    }
#include "core/ops.def"
