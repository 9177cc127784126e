/* Ops driven by i32 index tensors: gather, index_select, embedding,
 * scatter_add, index_add, one_hot. Each reduces to the backend's gather or
 * scatter_add over views (an index_select index is a gather index broadcast
 * over the other axes). */
#include "api/movement.h"
#include "autograd/tape.h"

#include <stdlib.h>
#include <string.h>

wt_status mv_gather(const char *fn, const wt_tensor *x, int axis, const wt_tensor *index, wt_tensor **out)
{
    wt_context *ctx = wt_ctx_of(x);
    wt_status st = mv_need(fn, ctx, WT_NODE_GATHER);
    if (st != WT_OK) return st;
    wt_tensor *t;
    if ((st = wt_tensor_alloc(ctx, x->dtype, index->ndim, index->shape, &t)) != WT_OK) return st;
    if (t->numel > 0 && (st = wt_node_run(ctx, &(wt_node){.kind = WT_NODE_GATHER, .in = {x, index}, .out = {t}, .p.index = {axis, false}})) != WT_OK) {
        wt_tensor_release(t);
        wt_error_prefix(fn);
        return st;
    }
    *out = t;
    return WT_OK;
}

wt_status mv_scatter_add(const char *fn, const wt_tensor *x, int axis, const wt_tensor *index,
                         const wt_tensor *src, wt_tensor **out)
{
    wt_context *ctx = wt_ctx_of(x);
    wt_status st = mv_need(fn, ctx, WT_NODE_SCATTER_ADD);
    if (st != WT_OK) return st;
    if (x->dtype != WT_F32 && x->dtype != WT_F16 && x->dtype != WT_I32)
        return wt_fail(WT_ERR_UNSUPPORTED, "%s: %s cannot be added to (f32, f16, i32)", fn, wt_dtype_name(x->dtype));
    wt_tensor *t;
    if ((st = mv_materialize(x, &t)) != WT_OK) return st;
    if (index->numel > 0 && (st = wt_node_run(ctx, &(wt_node){.kind = WT_NODE_SCATTER_ADD, .in = {index, src}, .out = {t}, .p.index = {axis, false}})) != WT_OK) {
        wt_tensor_release(t);
        wt_error_prefix(fn);
        return st;
    }
    *out = t;
    return WT_OK;
}

/* The checks every op here starts with: out, x (and, with_src, src of x's
 * dtype and context), an i32 index of x's context, axis -> *a (a 0-d x
 * counts as 1-d). */
static wt_status check_indexed(const char *fn, const wt_tensor *x, int axis, const wt_tensor *index,
                               bool with_src, const wt_tensor *src, wt_tensor **out, int *a)
{
    wt_status st = wt_check_out(fn, out);
    if (st != WT_OK || (st = mv_check_input(fn, x)) != WT_OK || (st = mv_check_index(fn, x, index)) != WT_OK)
        return st;
    if (with_src) {
        if ((st = mv_check_input(fn, src)) != WT_OK || (st = wt_check_same_context(fn, x, src)) != WT_OK)
            return st;
        if (src->dtype != x->dtype)
            return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: src is %s, x is %s", fn, wt_dtype_name(src->dtype),
                           wt_dtype_name(x->dtype));
    }
    if (!wt_norm_axis(axis, x->ndim > 0 ? x->ndim : 1, a))
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: axis %d out of range for %d dims", fn, axis, x->ndim);
    return WT_OK;
}

/* *out = r (taken), back to 0-d when x was 0-d. */
static wt_status land_like(const wt_tensor *x, wt_status st, wt_tensor *r, wt_tensor **out)
{
    if (st == WT_OK && x->ndim == 0) {
        st = wt_tensor_view(r, 0, NULL, NULL, 0, out);
        wt_tensor_release(r);
        return st;
    }
    *out = r;
    return st;
}

wt_status wt_gather(const wt_tensor *x, int axis, const wt_tensor *index, wt_tensor **out)
{
    WT_GRAD_HOOK((x, index, NULL, NULL), 1, out, wt_gather(x, axis, index, out),
                 .op = WT_OP_GATHER, .nin = 2, .in = {x, index}, .p.i = {axis});
    const char *fn = "wt_gather";
    int a;
    wt_status st = check_indexed(fn, x, axis, index, false, NULL, out, &a);
    if (st != WT_OK) return st;
    char b1[160], b2[160];
    bool fits = index->ndim == x->ndim;
    for (int d = 0; fits && d < x->ndim; d++)
        if (d != a && index->shape[d] > x->shape[d]) fits = false;
    if (!fits)
        return wt_fail(WT_ERR_SHAPE, "%s: index %s does not fit x %s (same ndim, extents <= x's off axis %d)", fn,
                       wt_shape_str(index->ndim, index->shape, b1, sizeof b1),
                       wt_shape_str(x->ndim, x->shape, b2, sizeof b2), axis);
    wt_tensor *xv = NULL, *iv = NULL, *r = NULL;
    if ((st = mv_at_least_1d(x, &xv)) == WT_OK && (st = mv_at_least_1d(index, &iv)) == WT_OK)
        st = mv_gather(fn, xv, a, iv, &r);
    wt_tensor_release(xv);
    wt_tensor_release(iv);
    return land_like(index, st, r, out);
}

wt_status wt_index_select(const wt_tensor *x, int axis, const wt_tensor *index, wt_tensor **out)
{
    WT_GRAD_HOOK((x, index, NULL, NULL), 1, out, wt_index_select(x, axis, index, out),
                 .op = WT_OP_INDEX_SELECT, .nin = 2, .in = {x, index}, .p.i = {axis});
    const char *fn = "wt_index_select";
    int a;
    wt_status st = check_indexed(fn, x, axis, index, false, NULL, out, &a);
    if (st != WT_OK) return st;
    if (index->ndim > 1)
        return wt_fail(WT_ERR_SHAPE, "%s: index must be 1-D or 0-d (it has %d dims)", fn, index->ndim);
    if (x->ndim == 0 && index->numel != 1)
        return wt_fail(WT_ERR_SHAPE, "%s: a 0-d x takes exactly one index (got %lld)", fn, (long long)index->numel);
    wt_tensor *xv, *iv = NULL, *r = NULL;
    if ((st = mv_at_least_1d(x, &xv)) != WT_OK) return st;
    int64_t shape[WT_MAX_DIMS], strides[WT_MAX_DIMS] = {0};
    memcpy(shape, xv->shape, sizeof shape);
    shape[a] = index->ndim ? index->shape[0] : 1;
    strides[a] = index->ndim ? index->strides[0] : 0;
    if ((st = wt_tensor_view(index, xv->ndim, shape, strides, index->offset, &iv)) == WT_OK)
        st = mv_gather(fn, xv, a, iv, &r);
    wt_tensor_release(xv);
    wt_tensor_release(iv);
    return land_like(x, st, r, out);
}

wt_status wt_embedding(const wt_tensor *table, const wt_tensor *index, wt_tensor **out)
{
    WT_GRAD_HOOK((table, index, NULL, NULL), 1, out, wt_embedding(table, index, out),
                 .op = WT_OP_EMBEDDING, .nin = 2, .in = {table, index});
    const char *fn = "wt_embedding";
    wt_status st = wt_check_out(fn, out);
    if (st != WT_OK || (st = mv_check_input(fn, table)) != WT_OK ||
        (st = mv_check_index(fn, table, index)) != WT_OK)
        return st;
    if (table->ndim != 2)
        return wt_fail(WT_ERR_SHAPE, "%s: table must be [V, D] (it has %d dims)", fn, table->ndim);
    if (index->ndim >= WT_MAX_DIMS)
        return wt_fail(WT_ERR_SHAPE, "%s: index of %d dims leaves no room for D", fn, index->ndim);
    /* out[i..., d] = table[index[i...], d] as a gather along the index's
     * last axis: the table viewed as [1.., V, D] (broadcast over the index's
     * leading axes), the index as [i..., D] (broadcast over D). */
    int m = index->ndim > 0 ? index->ndim : 1;
    int64_t tshape[WT_MAX_DIMS], tstrides[WT_MAX_DIMS], ishape[WT_MAX_DIMS], istrides[WT_MAX_DIMS];
    for (int d = 0; d < m; d++) {
        ishape[d] = index->ndim ? index->shape[d] : 1;
        istrides[d] = index->ndim ? index->strides[d] : 0;
        tshape[d] = ishape[d];
        tstrides[d] = 0;
    }
    tshape[m - 1] = table->shape[0];
    tstrides[m - 1] = table->strides[0];
    tshape[m] = ishape[m] = table->shape[1];
    tstrides[m] = table->strides[1];
    istrides[m] = 0;
    wt_tensor *tv = NULL, *iv = NULL, *r = NULL;
    if ((st = wt_tensor_view(table, m + 1, tshape, tstrides, table->offset, &tv)) == WT_OK &&
        (st = wt_tensor_view(index, m + 1, ishape, istrides, index->offset, &iv)) == WT_OK)
        st = mv_gather(fn, tv, m - 1, iv, &r);
    wt_tensor_release(tv);
    wt_tensor_release(iv);
    if (st == WT_OK && index->ndim == 0) {
        st = wt_tensor_view(r, 1, &r->shape[1], &r->strides[1], 0, out);
        wt_tensor_release(r);
        return st;
    }
    *out = r;
    return st;
}

wt_status wt_scatter_add(const wt_tensor *x, int axis, const wt_tensor *index, const wt_tensor *src,
                         wt_tensor **out)
{
    WT_GRAD_HOOK((x, index, src, NULL), 1, out, wt_scatter_add(x, axis, index, src, out),
                 .op = WT_OP_SCATTER_ADD, .nin = 3, .in = {x, index, src}, .p.i = {axis});
    const char *fn = "wt_scatter_add";
    int a;
    wt_status st = check_indexed(fn, x, axis, index, true, src, out, &a);
    if (st != WT_OK) return st;
    bool fits = index->ndim == x->ndim && src->ndim == x->ndim;
    for (int d = 0; fits && d < x->ndim; d++)
        if (index->shape[d] > src->shape[d] || (d != a && index->shape[d] > x->shape[d])) fits = false;
    if (!fits) {
        char b1[160], b2[160], b3[160];
        return wt_fail(WT_ERR_SHAPE, "%s: index %s must have the ndim of x %s and src %s and extents <= src's "
                       "(and <= x's off axis %d)", fn,
                       wt_shape_str(index->ndim, index->shape, b1, sizeof b1),
                       wt_shape_str(x->ndim, x->shape, b2, sizeof b2),
                       wt_shape_str(src->ndim, src->shape, b3, sizeof b3), axis);
    }
    wt_tensor *xv = NULL, *iv = NULL, *sv = NULL, *r = NULL;
    if ((st = mv_at_least_1d(x, &xv)) == WT_OK && (st = mv_at_least_1d(index, &iv)) == WT_OK &&
        (st = mv_at_least_1d(src, &sv)) == WT_OK) {
        memcpy(sv->shape, iv->shape, sizeof sv->shape); /* the part of src the index covers */
        sv->numel = iv->numel;
        st = mv_scatter_add(fn, xv, a, iv, sv, &r);
    }
    wt_tensor_release(xv);
    wt_tensor_release(iv);
    wt_tensor_release(sv);
    return land_like(x, st, r, out);
}

wt_status wt_index_add(const wt_tensor *x, int axis, const wt_tensor *index, const wt_tensor *src,
                       wt_tensor **out)
{
    WT_GRAD_HOOK((x, index, src, NULL), 1, out, wt_index_add(x, axis, index, src, out),
                 .op = WT_OP_INDEX_ADD, .nin = 3, .in = {x, index, src}, .p.i = {axis});
    const char *fn = "wt_index_add";
    int a;
    wt_status st = check_indexed(fn, x, axis, index, true, src, out, &a);
    if (st != WT_OK) return st;
    if (index->ndim > 1)
        return wt_fail(WT_ERR_SHAPE, "%s: index must be 1-D or 0-d (it has %d dims)", fn, index->ndim);
    wt_tensor *xv = NULL, *iv = NULL, *sv = NULL, *r = NULL;
    if ((st = mv_at_least_1d(x, &xv)) != WT_OK) return st;
    int64_t want[WT_MAX_DIMS], strides[WT_MAX_DIMS] = {0};
    memcpy(want, xv->shape, sizeof want);
    want[a] = index->ndim ? index->shape[0] : 1;
    bool fits = (src->ndim == x->ndim || (x->ndim == 0 && src->ndim <= 1));
    for (int d = 0; fits && d < src->ndim; d++)
        if (src->shape[d] != want[d]) fits = false;
    if (!fits) {
        char b1[160], b2[160];
        st = wt_fail(WT_ERR_SHAPE, "%s: src is %s, expected %s", fn,
                     wt_shape_str(src->ndim, src->shape, b1, sizeof b1), wt_shape_str(xv->ndim, want, b2, sizeof b2));
        wt_tensor_release(xv);
        return st;
    }
    strides[a] = index->ndim ? index->strides[0] : 0;
    if ((st = wt_tensor_view(index, xv->ndim, want, strides, index->offset, &iv)) == WT_OK &&
        (st = mv_at_least_1d(src, &sv)) == WT_OK)
        st = mv_scatter_add(fn, xv, a, iv, sv, &r);
    wt_tensor_release(xv);
    wt_tensor_release(iv);
    wt_tensor_release(sv);
    return land_like(x, st, r, out);
}

/* max(index) + 1 from the host copy of index (the GPU waits). */
static wt_status infer_classes(const char *fn, const wt_tensor *index, int64_t *classes)
{
    if (index->numel == 0)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: cannot infer num_classes from an empty index", fn);
    size_t bytes;
    int32_t *v = wt_bytes_of(index->numel, sizeof *v, &bytes) ? malloc(bytes) : NULL;
    if (!v) return wt_fail(WT_ERR_OUT_OF_MEMORY, "%s: out of host memory", fn);
    wt_status st = wt_tensor_read(index, v, bytes);
    int64_t m = -1;
    for (int64_t i = 0; st == WT_OK && i < index->numel; i++)
        if (v[i] > m) m = v[i];
    free(v);
    *classes = m + 1; /* negative entries fail in the scatter */
    return st;
}

wt_status wt_one_hot(const wt_tensor *index, int64_t num_classes, wt_tensor **out)
{
    const char *fn = "wt_one_hot";
    wt_status st = wt_check_out(fn, out);
    if (st != WT_OK || (st = mv_check_index(fn, NULL, index)) != WT_OK) return st;
    if (num_classes < -1)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: num_classes %lld (need >= 0, or -1 to infer)", fn,
                       (long long)num_classes);
    if (index->ndim >= WT_MAX_DIMS)
        return wt_fail(WT_ERR_SHAPE, "%s: index of %d dims leaves no room for the classes", fn, index->ndim);
    if (num_classes == -1 && (st = infer_classes(fn, index, &num_classes)) != WT_OK) return st;
    if (num_classes > INT32_MAX)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: num_classes %lld exceeds i32", fn, (long long)num_classes);
    wt_context *ctx = wt_ctx_of(index);
    int nd = index->ndim + 1;
    int64_t shape[WT_MAX_DIMS], istrides[WT_MAX_DIMS], ishape[WT_MAX_DIMS], zeros[WT_MAX_DIMS] = {0};
    memcpy(shape, index->shape, sizeof(int64_t) * (size_t)index->ndim);
    memcpy(ishape, index->shape, sizeof(int64_t) * (size_t)index->ndim);
    memcpy(istrides, index->strides, sizeof(int64_t) * (size_t)index->ndim);
    shape[nd - 1] = num_classes;
    ishape[nd - 1] = 1;
    istrides[nd - 1] = 0;
    /* zeros [index..., C], then 1 added at each index along the last axis. */
    wt_tensor *z = NULL, *one = NULL, *ones = NULL, *iv = NULL;
    const int32_t one_value = 1;
    if ((st = wt_tensor_alloc(ctx, WT_I32, nd, shape, &z)) == WT_OK && z->numel > 0)
        st = wt_node_run(ctx, &(wt_node){.kind = WT_NODE_FILL, .out = {z}, .p.bits = 0});
    if (st == WT_OK && index->numel > 0) {
        if ((st = wt_tensor_alloc(ctx, WT_I32, 0, NULL, &one)) == WT_OK &&
            (st = ctx->ops->upload(ctx, one->storage, 0, &one_value, sizeof one_value)) == WT_OK &&
            (st = wt_tensor_view(one, nd, ishape, zeros, 0, &ones)) == WT_OK &&
            (st = wt_tensor_view(index, nd, ishape, istrides, index->offset, &iv)) == WT_OK &&
            (st = mv_need(fn, ctx, WT_NODE_SCATTER_ADD)) == WT_OK &&
            (st = wt_node_run(ctx, &(wt_node){.kind = WT_NODE_SCATTER_ADD, .in = {iv, ones}, .out = {z}, .p.index = {nd - 1, false}})) != WT_OK)
            wt_error_prefix(fn);
    }
    wt_tensor_release(one);
    wt_tensor_release(ones);
    wt_tensor_release(iv);
    if (st != WT_OK) {
        wt_tensor_release(z);
        return st;
    }
    *out = z;
    return WT_OK;
}
