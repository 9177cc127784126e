/* Views (no data moves) and copies. */
#include "api/api.h"
#include "autograd/tape.h"

#include <string.h>

wt_status wt_copy(const wt_tensor *x, wt_tensor **out)
{
    WT_GRAD_HOOK((x, NULL, NULL, NULL), 1, out, wt_copy(x, out),
                 .op = WT_OP_COPY, .nin = 1, .in = {x});
    wt_status st = wt_check_out("wt_copy", out);
    if (st != WT_OK || (st = wt_check_tensor("wt_copy", x)) != WT_OK) return st;
    if (x->dtype != WT_F32) return wt_cast(x, x->dtype, out); /* the backends' copy is f32's */
    wt_context *ctx = wt_ctx_of(x);
    wt_tensor *t;
    if ((st = wt_tensor_alloc(ctx, x->dtype, x->ndim, x->shape, &t)) != WT_OK) return st;
    if (t->numel > 0 && (st = wt_node_run(ctx, &(wt_node){.kind = WT_NODE_COPY, .in = {x}, .out = {t}})) != WT_OK) {
        wt_tensor_release(t);
        return st;
    }
    *out = t;
    return WT_OK;
}

wt_status wt_contiguous(const wt_tensor *x, wt_tensor **out)
{
    WT_GRAD_HOOK((x, NULL, NULL, NULL), 1, out, wt_contiguous(x, out),
                 .op = WT_OP_CONTIGUOUS, .nin = 1, .in = {x});
    wt_status st = wt_check_out("wt_contiguous", out);
    if (st != WT_OK || (st = wt_check_tensor("wt_contiguous", x)) != WT_OK) return st;
    if (!wt_tensor_is_contiguous(x)) return wt_copy(x, out);
    return wt_tensor_share(x, out); /* x itself, one more reference */
}

wt_status wt_reshape(const wt_tensor *x, int ndim, const int64_t *shape_in, wt_tensor **out)
{
    WT_GRAD_HOOK((x, NULL, NULL, NULL), 1, out, wt_reshape(x, ndim, shape_in, out),
                 .op = WT_OP_RESHAPE, .nin = 1, .in = {x});
    const char *fn = "wt_reshape";
    wt_status st = wt_check_out(fn, out);
    if (st != WT_OK || (st = wt_check_tensor(fn, x)) != WT_OK) return st;
    if (ndim < 0 || ndim > WT_MAX_DIMS)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: ndim %d is outside [0, %d]", fn, ndim, WT_MAX_DIMS);
    if (ndim > 0 && !shape_in) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: shape is NULL", fn);
    int64_t shape[WT_MAX_DIMS], strides[WT_MAX_DIMS];
    int infer = -1;
    int64_t known = 1;
    for (int i = 0; i < ndim; i++) {
        shape[i] = shape_in[i];
        if (shape[i] == -1) {
            if (infer >= 0) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: more than one -1 in shape", fn);
            infer = i;
        } else if (shape[i] < 0) {
            return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: shape[%d] = %lld is negative", fn, i,
                           (long long)shape[i]);
        } else if (shape[i] > 0 && known > INT64_MAX / shape[i]) {
            return wt_fail(WT_ERR_SHAPE, "%s: shape has too many elements", fn);
        } else {
            known *= shape[i];
        }
    }
    char b1[160], b2[160];
    if (infer >= 0) {
        if (known == 0 || x->numel % known != 0)
            return wt_fail(WT_ERR_SHAPE, "%s: cannot infer -1 to reshape %s into %s", fn,
                           wt_shape_str(x->ndim, x->shape, b1, sizeof b1),
                           wt_shape_str(ndim, shape_in, b2, sizeof b2));
        shape[infer] = x->numel / known;
        known = x->numel;
    }
    if (known != x->numel)
        return wt_fail(WT_ERR_SHAPE, "%s: %s has %lld elements, %s has %lld", fn,
                       wt_shape_str(x->ndim, x->shape, b1, sizeof b1), (long long)x->numel,
                       wt_shape_str(ndim, shape, b2, sizeof b2), (long long)known);
    wt_contiguous_strides(ndim, shape, strides);
    if (wt_tensor_is_contiguous(x)) return wt_tensor_view(x, ndim, shape, strides, x->offset, out);
    /* Not expressible as a view of these strides in general: copy first. */
    wt_tensor *c;
    if ((st = wt_copy(x, &c)) != WT_OK) return st;
    st = wt_tensor_view(c, ndim, shape, strides, 0, out);
    wt_tensor_release(c);
    return st;
}

wt_status wt_permute(const wt_tensor *x, const int *perm, wt_tensor **out)
{
    WT_GRAD_HOOK((x, NULL, NULL, NULL), 1, out, wt_permute(x, perm, out),
                 .op = WT_OP_PERMUTE, .nin = 1, .in = {x}, .p = wt_grad_ints(x->ndim, perm));
    const char *fn = "wt_permute";
    wt_status st = wt_check_out(fn, out);
    if (st != WT_OK || (st = wt_check_tensor(fn, x)) != WT_OK) return st;
    if (x->ndim > 0 && !perm) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: perm is NULL", fn);
    int64_t shape[WT_MAX_DIMS], strides[WT_MAX_DIMS];
    bool seen[WT_MAX_DIMS] = {0};
    for (int i = 0; i < x->ndim; i++) {
        int a;
        if (!wt_norm_axis(perm[i], x->ndim, &a))
            return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: axis %d out of range for %d dims", fn, perm[i], x->ndim);
        if (seen[a]) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: axis %d repeats", fn, perm[i]);
        seen[a] = true;
        shape[i] = x->shape[a];
        strides[i] = x->strides[a];
    }
    return wt_tensor_view(x, x->ndim, shape, strides, x->offset, out);
}

wt_status wt_transpose(const wt_tensor *x, int axis0, int axis1, wt_tensor **out)
{
    WT_GRAD_HOOK((x, NULL, NULL, NULL), 1, out, wt_transpose(x, axis0, axis1, out),
                 .op = WT_OP_TRANSPOSE, .nin = 1, .in = {x}, .p.i = {axis0, axis1});
    const char *fn = "wt_transpose";
    wt_status st = wt_check_out(fn, out);
    if (st != WT_OK || (st = wt_check_tensor(fn, x)) != WT_OK) return st;
    int a0, a1;
    if (!wt_norm_axis(axis0, x->ndim, &a0) || !wt_norm_axis(axis1, x->ndim, &a1))
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: axes (%d, %d) out of range for %d dims", fn, axis0,
                       axis1, x->ndim);
    int perm[WT_MAX_DIMS];
    for (int i = 0; i < x->ndim; i++) perm[i] = i;
    perm[a0] = a1;
    perm[a1] = a0;
    return wt_permute(x, perm, out);
}

wt_status wt_slice(const wt_tensor *x, int axis, int64_t start, int64_t stop, int64_t step,
                   wt_tensor **out)
{
    WT_GRAD_HOOK((x, NULL, NULL, NULL), 1, out, wt_slice(x, axis, start, stop, step, out),
                 .op = WT_OP_SLICE, .nin = 1, .in = {x}, .p.i = {axis, start, stop, step});
    const char *fn = "wt_slice";
    wt_status st = wt_check_out(fn, out);
    if (st != WT_OK || (st = wt_check_tensor(fn, x)) != WT_OK) return st;
    int a;
    if (!wt_norm_axis(axis, x->ndim, &a))
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: axis %d out of range for %d dims", fn, axis, x->ndim);
    if (step < 1) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: step %lld < 1", fn, (long long)step);
    int64_t n = x->shape[a];
    /* Python slice clamping. */
    if (start < 0) start += n;
    if (stop < 0) stop += n;
    if (start < 0) start = 0;
    if (start > n) start = n;
    if (stop < start) stop = start;
    if (stop > n) stop = n;
    int64_t shape[WT_MAX_DIMS], strides[WT_MAX_DIMS];
    memcpy(shape, x->shape, sizeof shape);
    memcpy(strides, x->strides, sizeof strides);
    /* Written so that a huge step cannot overflow: (stop - start - 1) is
     * below n. */
    shape[a] = stop > start ? 1 + (stop - start - 1) / step : 0;
    /* One element or none: the stride never moves the index, and
     * stride * step could overflow. */
    strides[a] = shape[a] > 1 ? x->strides[a] * step : x->strides[a];
    int64_t offset = shape[a] > 0 ? x->offset + start * x->strides[a] : x->offset;
    return wt_tensor_view(x, x->ndim, shape, strides, offset, out);
}

wt_status wt_expand(const wt_tensor *x, int ndim, const int64_t *shape, wt_tensor **out)
{
    WT_GRAD_HOOK((x, NULL, NULL, NULL), 1, out, wt_expand(x, ndim, shape, out),
                 .op = WT_OP_EXPAND, .nin = 1, .in = {x});
    const char *fn = "wt_expand";
    wt_status st = wt_check_out(fn, out);
    if (st != WT_OK || (st = wt_check_tensor(fn, x)) != WT_OK) return st;
    if ((st = wt_check_shape(fn, ndim, shape)) != WT_OK) return st;
    if (ndim < x->ndim)
        return wt_fail(WT_ERR_SHAPE, "%s: cannot expand %d dims to %d", fn, x->ndim, ndim);
    int64_t strides[WT_MAX_DIMS];
    int64_t numel = 1;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] > 0 && numel > INT64_MAX / shape[i])
            return wt_fail(WT_ERR_SHAPE, "%s: the target shape has more than 2^63 elements", fn);
        numel *= shape[i];
    }
    int lead = ndim - x->ndim;
    for (int i = 0; i < ndim; i++) {
        if (i < lead) {
            strides[i] = 0;
            continue;
        }
        int64_t s = x->shape[i - lead];
        if (s == shape[i]) {
            strides[i] = x->strides[i - lead];
        } else if (s == 1) {
            strides[i] = 0;
        } else {
            char b1[160], b2[160];
            return wt_fail(WT_ERR_SHAPE, "%s: cannot broadcast %s to %s", fn,
                           wt_shape_str(x->ndim, x->shape, b1, sizeof b1), wt_shape_str(ndim, shape, b2, sizeof b2));
        }
    }
    return wt_tensor_view(x, ndim, shape, strides, x->offset, out);
}
