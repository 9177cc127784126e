/* Data movement without index tensors: squeeze / unsqueeze / flatten
 * (views), split / chunk (views), concat / stack, and copy_into, the
 * in-place write every other op here builds on. */
#include "api/movement.h"
#include "autograd/tape.h"

#include <stdlib.h>
#include <string.h>

wt_status mv_check_input(const char *fn, const wt_tensor *x)
{
    if (!x) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: input tensor is NULL", fn);
    if (wt_dtype_size(x->dtype) == 0)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: unknown dtype %d", fn, (int)x->dtype);
    return WT_OK;
}

wt_status mv_check_index(const char *fn, const wt_tensor *x, const wt_tensor *index)
{
    if (!index) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: index tensor is NULL", fn);
    if (index->dtype != WT_I32)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: indices must be i32 (got %s)", fn,
                       wt_dtype_name(index->dtype));
    return x ? wt_check_same_context(fn, x, index) : WT_OK;
}

wt_status mv_need(const char *fn, const wt_context *ctx, wt_node_kind kind)
{
    if (!wt_backend_runs(ctx, kind))
        return wt_fail(WT_ERR_UNSUPPORTED, "%s: not available on the %s backend", fn, ctx->ops->name);
    return WT_OK;
}

wt_status mv_materialize(const wt_tensor *x, wt_tensor **out)
{
    *out = NULL;
    wt_context *ctx = wt_ctx_of(x);
    wt_status st = mv_need("copy", ctx, WT_NODE_COPY_INTO);
    if (st != WT_OK) return st;
    wt_tensor *t;
    if ((st = wt_tensor_alloc(ctx, x->dtype, x->ndim, x->shape, &t)) != WT_OK) return st;
    if (t->numel > 0 && (st = wt_node_run(ctx, &(wt_node){.kind = WT_NODE_COPY_INTO, .in = {x}, .out = {t}})) != WT_OK) {
        wt_tensor_release(t);
        return st;
    }
    *out = t;
    return WT_OK;
}

wt_status mv_contiguous(const wt_tensor *x, wt_tensor **out)
{
    if (!wt_tensor_is_contiguous(x)) return mv_materialize(x, out);
    wt_tensor_retain((wt_tensor *)x);
    *out = (wt_tensor *)x;
    return WT_OK;
}

wt_status mv_at_least_1d(const wt_tensor *x, wt_tensor **out)
{
    const int64_t one = 1;
    if (x->ndim > 0) return wt_tensor_view(x, x->ndim, x->shape, x->strides, x->offset, out);
    return wt_tensor_view(x, 1, &one, &one, x->offset, out);
}

/* ------------------------------------------------------------- views */

wt_status wt_squeeze(const wt_tensor *x, int naxes, const int *axes, wt_tensor **out)
{
    WT_GRAD_HOOK((x, NULL, NULL, NULL), 1, out, wt_squeeze(x, naxes, axes, out),
                 .op = WT_OP_SQUEEZE, .nin = 1, .in = {x});
    const char *fn = "wt_squeeze";
    wt_status st = wt_check_out(fn, out);
    if (st != WT_OK || (st = mv_check_input(fn, x)) != WT_OK) return st;
    if (naxes < 0 || naxes > WT_MAX_DIMS || (naxes > 0 && !axes))
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: bad axis list (naxes %d)", fn, naxes);
    bool drop[WT_MAX_DIMS] = {0}, seen[WT_MAX_DIMS] = {0};
    for (int i = 0; i < naxes; i++) {
        int a;
        /* A 0-d tensor accepts axis 0 / -1 as PyTorch does. */
        if (x->ndim == 0 && (axes[i] == 0 || axes[i] == -1)) continue;
        if (!wt_norm_axis(axes[i], x->ndim, &a))
            return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: axis %d out of range for %d dims", fn, axes[i], x->ndim);
        if (seen[a]) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: axis %d repeats", fn, axes[i]);
        seen[a] = true;
        drop[a] = x->shape[a] == 1;
    }
    int64_t shape[WT_MAX_DIMS], strides[WT_MAX_DIMS];
    int n = 0;
    for (int d = 0; d < x->ndim; d++) {
        if (naxes == 0 ? x->shape[d] == 1 : drop[d]) continue;
        shape[n] = x->shape[d];
        strides[n++] = x->strides[d];
    }
    return wt_tensor_view(x, n, shape, strides, x->offset, out);
}

wt_status wt_unsqueeze(const wt_tensor *x, int axis, wt_tensor **out)
{
    WT_GRAD_HOOK((x, NULL, NULL, NULL), 1, out, wt_unsqueeze(x, axis, out),
                 .op = WT_OP_UNSQUEEZE, .nin = 1, .in = {x});
    const char *fn = "wt_unsqueeze";
    wt_status st = wt_check_out(fn, out);
    if (st != WT_OK || (st = mv_check_input(fn, x)) != WT_OK) return st;
    int a;
    if (x->ndim == WT_MAX_DIMS)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: x already has %d dims", fn, WT_MAX_DIMS);
    if (!wt_norm_axis(axis, x->ndim + 1, &a))
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: axis %d out of range [%d, %d]", fn, axis,
                       -x->ndim - 1, x->ndim);
    int64_t shape[WT_MAX_DIMS], strides[WT_MAX_DIMS];
    for (int d = 0, s = 0; d <= x->ndim; d++) {
        if (d == a) {
            shape[d] = 1;
            strides[d] = s < x->ndim ? x->strides[s] * x->shape[s] : 1;
            continue;
        }
        shape[d] = x->shape[s];
        strides[d] = x->strides[s++];
    }
    return wt_tensor_view(x, x->ndim + 1, shape, strides, x->offset, out);
}

wt_status wt_flatten(const wt_tensor *x, int start_axis, int end_axis, wt_tensor **out)
{
    WT_GRAD_HOOK((x, NULL, NULL, NULL), 1, out, wt_flatten(x, start_axis, end_axis, out),
                 .op = WT_OP_FLATTEN, .nin = 1, .in = {x});
    const char *fn = "wt_flatten";
    wt_status st = wt_check_out(fn, out);
    if (st != WT_OK || (st = mv_check_input(fn, x)) != WT_OK) return st;
    int nd = x->ndim > 0 ? x->ndim : 1, s, e;
    if (!wt_norm_axis(start_axis, nd, &s) || !wt_norm_axis(end_axis, nd, &e) || s > e)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: axes %d..%d are not a range of %d dims", fn,
                       start_axis, end_axis, x->ndim);
    if (x->ndim == 0) {
        const int64_t one = 1;
        return wt_tensor_view(x, 1, &one, &one, x->offset, out);
    }
    int64_t shape[WT_MAX_DIMS];
    int n = 0;
    for (int d = 0; d < x->ndim; d++) {
        if (d > s && d <= e) {
            shape[n - 1] *= x->shape[d];
            continue;
        }
        shape[n++] = x->shape[d];
    }
    /* Axes whose strides chain merge without a copy, even in a view. */
    bool chained = true;
    int64_t inner = 1, prev = -1;
    for (int d = s; d <= e; d++) {
        if (x->shape[d] == 0) break; /* no elements: any strides do */
        if (x->shape[d] == 1) continue;
        if (prev >= 0 && x->strides[prev] != x->strides[d] * x->shape[d]) chained = false;
        prev = d;
        inner = x->strides[d];
    }
    if (chained) {
        int64_t strides[WT_MAX_DIMS];
        for (int d = 0, k = 0; d < x->ndim; d++)
            if (d <= s || d > e) strides[k++] = x->strides[d];
        strides[s] = inner;
        return wt_tensor_view(x, n, shape, strides, x->offset, out);
    }
    wt_tensor *c;
    if ((st = mv_materialize(x, &c)) != WT_OK) return st;
    int64_t strides[WT_MAX_DIMS];
    wt_contiguous_strides(n, shape, strides);
    st = wt_tensor_view(c, n, shape, strides, 0, out);
    wt_tensor_release(c);
    return st;
}

/* ------------------------------------------------------ split / chunk */

/* The view of x holding [start, start + len) along axis a. */
static wt_status narrow(const wt_tensor *x, int a, int64_t start, int64_t len, wt_tensor **out)
{
    int64_t shape[WT_MAX_DIMS];
    memcpy(shape, x->shape, sizeof shape);
    shape[a] = len;
    return wt_tensor_view(x, x->ndim, shape, x->strides, x->offset + (len > 0 ? start * x->strides[a] : 0),
                          out);
}

static void release_all(int n, wt_tensor **ts)
{
    for (int i = 0; i < n; i++) {
        wt_tensor_release(ts[i]);
        ts[i] = NULL;
    }
}

wt_status wt_split(const wt_tensor *x, int axis, int n, const int64_t *sizes, wt_tensor **outs)
{
    WT_GRAD_HOOK((x, NULL, NULL, NULL), n, outs, wt_split(x, axis, n, sizes, outs),
                 .op = WT_OP_SPLIT, .nin = 1, .in = {x}, .p.i = {axis});
    const char *fn = "wt_split";
    if (!outs) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: outs is NULL", fn);
    for (int i = 0; i < n; i++) outs[i] = NULL; /* before any failure that knows n */
    if (n < 1 || !sizes) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: needs n >= 1 sizes (n %d)", fn, n);
    wt_status st = mv_check_input(fn, x);
    if (st != WT_OK) return st;
    int a;
    if (!wt_norm_axis(axis, x->ndim, &a))
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: axis %d out of range for %d dims", fn, axis, x->ndim);
    int64_t total = 0;
    for (int i = 0; i < n; i++) {
        if (sizes[i] < 0 || sizes[i] > x->shape[a] - total)
            return wt_fail(WT_ERR_SHAPE, "%s: sizes do not sum to the extent %lld of axis %d", fn,
                           (long long)x->shape[a], axis);
        total += sizes[i];
    }
    if (total != x->shape[a])
        return wt_fail(WT_ERR_SHAPE, "%s: sizes sum to %lld, the extent of axis %d is %lld", fn,
                       (long long)total, axis, (long long)x->shape[a]);
    int64_t start = 0;
    for (int i = 0; i < n; i++) {
        if ((st = narrow(x, a, start, sizes[i], &outs[i])) != WT_OK) {
            release_all(i, outs);
            return st;
        }
        start += sizes[i];
    }
    return WT_OK;
}

wt_status wt_chunk(const wt_tensor *x, int axis, int chunks, int *nout, wt_tensor **outs)
{
    if (wt_grad_any(x, NULL, NULL, NULL)) {
        wt_grad_call gc = {.op = WT_OP_CHUNK, .nin = 1, .in = {x}, .p.i = {axis}};
        if (wt_grad_begin(&gc)) {
            wt_status st_ = wt_chunk(x, axis, chunks, nout, outs);
            return wt_grad_end(&gc, st_, st_ == WT_OK ? *nout : 0, outs);
        }
    }
    const char *fn = "wt_chunk";
    if (outs)
        for (int i = 0; i < chunks; i++) outs[i] = NULL; /* before any failure that knows chunks */
    if (!outs || !nout) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: outs or nout is NULL", fn);
    *nout = 0;
    if (chunks < 1) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: chunks %d < 1", fn, chunks);
    wt_status st = mv_check_input(fn, x);
    if (st != WT_OK) return st;
    int a;
    if (!wt_norm_axis(axis, x->ndim, &a))
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: axis %d out of range for %d dims", fn, axis, x->ndim);
    int64_t extent = x->shape[a];
    int64_t size = (extent + chunks - 1) / chunks;
    int n = size > 0 ? (int)((extent + size - 1) / size) : 1;
    for (int i = 0; i < n; i++) {
        int64_t start = (int64_t)i * size, len = extent - start < size ? extent - start : size;
        if ((st = narrow(x, a, start, len, &outs[i])) != WT_OK) {
            release_all(i, outs);
            return st;
        }
    }
    *nout = n;
    return WT_OK;
}

/* ----------------------------------------------------- concat / stack */

wt_status wt_concat(int n, wt_tensor *const *xs, int axis, wt_tensor **out)
{
    WT_GRAD_HOOK_LIST(WT_OP_CONCAT, n, xs, axis, wt_concat(n, xs, axis, out), out);
    const char *fn = "wt_concat";
    wt_status st = wt_check_out(fn, out);
    if (st != WT_OK) return st;
    if (n < 1 || !xs) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: needs n >= 1 tensors (n %d)", fn, n);
    for (int i = 0; i < n; i++) {
        if ((st = mv_check_input(fn, xs[i])) != WT_OK) return st;
        if ((st = wt_check_same_context(fn, xs[0], xs[i])) != WT_OK) return st;
        if (xs[i]->dtype != xs[0]->dtype)
            return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: tensor %d is %s, tensor 0 is %s", fn, i,
                           wt_dtype_name(xs[i]->dtype), wt_dtype_name(xs[0]->dtype));
    }
    const wt_tensor *x0 = xs[0];
    int a;
    if (!wt_norm_axis(axis, x0->ndim, &a))
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: axis %d out of range for %d dims", fn, axis, x0->ndim);
    int64_t shape[WT_MAX_DIMS];
    memcpy(shape, x0->shape, sizeof shape);
    shape[a] = 0;
    for (int i = 0; i < n; i++) {
        char b1[160], b2[160];
        bool fits = xs[i]->ndim == x0->ndim;
        for (int d = 0; fits && d < x0->ndim; d++)
            if (d != a && xs[i]->shape[d] != x0->shape[d]) fits = false;
        if (!fits)
            return wt_fail(WT_ERR_SHAPE, "%s: tensor %d is %s, tensor 0 is %s (only axis %d may differ)", fn, i,
                           wt_shape_str(xs[i]->ndim, xs[i]->shape, b1, sizeof b1),
                           wt_shape_str(x0->ndim, x0->shape, b2, sizeof b2), axis);
        if (xs[i]->shape[a] > INT64_MAX / 2 - shape[a])
            return wt_fail(WT_ERR_SHAPE, "%s: the joined extent overflows", fn);
        shape[a] += xs[i]->shape[a];
    }
    wt_context *ctx = wt_ctx_of(x0);
    if ((st = mv_need(fn, ctx, WT_NODE_COPY_INTO)) != WT_OK) return st;
    wt_tensor *t;
    if ((st = wt_tensor_alloc(ctx, x0->dtype, x0->ndim, shape, &t)) != WT_OK) return st;
    int64_t start = 0;
    for (int i = 0; i < n && st == WT_OK; i++) {
        if (xs[i]->numel == 0) continue;
        wt_tensor *part;
        if ((st = narrow(t, a, start, xs[i]->shape[a], &part)) != WT_OK) break;
        st = wt_node_run(ctx, &(wt_node){.kind = WT_NODE_COPY_INTO, .in = {xs[i]}, .out = {part}});
        wt_tensor_release(part);
        start += xs[i]->shape[a];
    }
    if (st != WT_OK) {
        wt_tensor_release(t);
        wt_error_prefix(fn);
        return st;
    }
    *out = t;
    return WT_OK;
}

wt_status wt_stack(int n, wt_tensor *const *xs, int axis, wt_tensor **out)
{
    WT_GRAD_HOOK_LIST(WT_OP_STACK, n, xs, axis, wt_stack(n, xs, axis, out), out);
    const char *fn = "wt_stack";
    wt_status st = wt_check_out(fn, out);
    if (st != WT_OK) return st;
    if (n < 1 || !xs) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: needs n >= 1 tensors (n %d)", fn, n);
    for (int i = 0; i < n; i++) {
        if ((st = mv_check_input(fn, xs[i])) != WT_OK) return st;
        char b1[160], b2[160];
        if (xs[i]->ndim != xs[0]->ndim ||
            memcmp(xs[i]->shape, xs[0]->shape, sizeof(int64_t) * (size_t)xs[0]->ndim) != 0)
            return wt_fail(WT_ERR_SHAPE, "%s: tensor %d is %s, tensor 0 is %s", fn, i,
                           wt_shape_str(xs[i]->ndim, xs[i]->shape, b1, sizeof b1),
                           wt_shape_str(xs[0]->ndim, xs[0]->shape, b2, sizeof b2));
    }
    int a;
    if (xs[0]->ndim == WT_MAX_DIMS || !wt_norm_axis(axis, xs[0]->ndim + 1, &a))
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: axis %d out of range for %d dims", fn, axis,
                       xs[0]->ndim + 1);
    wt_tensor **views = calloc((size_t)n, sizeof *views);
    if (!views) return wt_fail(WT_ERR_OUT_OF_MEMORY, "%s: out of host memory", fn);
    for (int i = 0; i < n && st == WT_OK; i++) st = wt_unsqueeze(xs[i], a, &views[i]);
    if (st == WT_OK) st = wt_concat(n, views, a, out);
    for (int i = 0; i < n; i++) wt_tensor_release(views[i]);
    free(views);
    if (st != WT_OK) wt_error_prefix(fn);
    return st;
}

/* ----------------------------------------------------------- copy_into */

/* Whether two elements of t can be one (a stride-0 axis, or strides that
 * interleave): sorted by stride, each non-trivial axis must step past
 * everything the smaller ones reach. */
static bool repeats_elements(const wt_tensor *t)
{
    int64_t st[WT_MAX_DIMS], sh[WT_MAX_DIMS];
    int n = 0;
    for (int d = 0; d < t->ndim; d++) {
        if (t->shape[d] <= 1) continue;
        int i = n++;
        while (i > 0 && st[i - 1] > t->strides[d]) {
            st[i] = st[i - 1];
            sh[i] = sh[i - 1];
            i--;
        }
        st[i] = t->strides[d];
        sh[i] = t->shape[d];
    }
    int64_t reach = 0; /* farthest element the smaller axes reach */
    for (int i = 0; i < n; i++) {
        if (st[i] <= reach) return true;
        reach += st[i] * (sh[i] - 1);
    }
    return false;
}

/* [first, last] elements of the storage a view touches (non-empty). */
static void extent_of(const wt_tensor *t, int64_t *first, int64_t *last)
{
    int64_t lo = t->offset, hi = t->offset;
    for (int d = 0; d < t->ndim; d++) {
        int64_t span = t->strides[d] * (t->shape[d] - 1);
        if (span < 0) lo += span;
        else hi += span;
    }
    *first = lo;
    *last = hi;
}

static bool may_overlap(const wt_tensor *a, const wt_tensor *b)
{
    if (a->storage != b->storage || a->numel == 0 || b->numel == 0) return false;
    int64_t a0, a1, b0, b1;
    extent_of(a, &a0, &a1);
    extent_of(b, &b0, &b1);
    size_t ea = wt_dtype_storage_size(a->dtype), eb = wt_dtype_storage_size(b->dtype);
    /* In bytes, since a cast source may have another element size. */
    return a0 * (int64_t)ea < (b1 + 1) * (int64_t)eb && b0 * (int64_t)eb < (a1 + 1) * (int64_t)ea;
}

wt_status wt_copy_into(wt_tensor *dst, const wt_tensor *src)
{
    if (dst && src && (wt_grad_tracks(src) || wt_grad_tracks(dst)) && wt_grad_recording(wt_ctx_of(dst)))
        return wt_fail(WT_ERR_INVALID_ARGUMENT,
                       "wt_copy_into: %s requires grad and in-place copies are not differentiable (do it inside "
                       "wt_no_grad_begin/end, or copy from a wt_detach'ed view)",
                       wt_grad_tracks(src) ? "src" : "dst");
    const char *fn = "wt_copy_into";
    wt_status st = mv_check_input(fn, dst);
    if (st != WT_OK || (st = mv_check_input(fn, src)) != WT_OK) return st;
    if ((st = wt_check_same_context(fn, dst, src)) != WT_OK) return st;
    if (repeats_elements(dst))
        return wt_fail(WT_ERR_INVALID_ARGUMENT,
                       "%s: dst repeats elements (an expanded view); writes to it would collide", fn);
    wt_context *ctx = wt_ctx_of(dst);
    if ((st = mv_need(fn, ctx, WT_NODE_COPY_INTO)) != WT_OK) return st;
    wt_tensor *s = NULL, *tmp = NULL;
    if ((st = wt_expand(src, dst->ndim, dst->shape, &s)) != WT_OK) return st;
    if (dst->numel == 0) {
        wt_tensor_release(s);
        return WT_OK;
    }
    if (s->dtype != dst->dtype) {
        st = wt_cast(s, dst->dtype, &tmp);
    } else if (may_overlap(s, dst)) {
        st = mv_materialize(s, &tmp); /* read all of src before dst changes */
    }
    if (tmp) {
        wt_tensor_release(s);
        s = tmp;
    }
    if (st == WT_OK) st = wt_node_run(ctx, &(wt_node){.kind = WT_NODE_COPY_INTO, .in = {s}, .out = {dst}});
    wt_tensor_release(s);
    if (st != WT_OK) wt_error_prefix(fn);
    return st;
}

wt_status wt_copy_into_at(wt_tensor *dst, int axis, const wt_tensor *start, const wt_tensor *src)
{
    const char *fn = "wt_copy_into_at";
    wt_status st = mv_check_input(fn, dst);
    if (st != WT_OK || (st = mv_check_input(fn, src)) != WT_OK) return st;
    if ((st = wt_check_same_context(fn, dst, src)) != WT_OK || (st = wt_check_step_value(fn, "start", dst, start)) != WT_OK)
        return st;
    if ((wt_grad_tracks(src) || wt_grad_tracks(dst)) && wt_grad_recording(wt_ctx_of(dst)))
        return wt_fail(WT_ERR_INVALID_ARGUMENT,
                       "%s: %s requires grad and in-place copies are not differentiable (do it inside "
                       "wt_no_grad_begin/end, or copy from a wt_detach'ed view)",
                       fn, wt_grad_tracks(src) ? "src" : "dst");
    int ax;
    if (!wt_norm_axis(axis, dst->ndim, &ax))
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: axis %d is out of range for %d dims", fn, axis, dst->ndim);
    /* src's extent along axis: its own there when it has that axis, else 1
     * (a broadcast). */
    const int lead = dst->ndim - src->ndim;
    if (lead < 0) {
        char b1[160], b2[160];
        return wt_fail(WT_ERR_SHAPE, "%s: src %s has more dims than dst %s", fn,
                       wt_shape_str(src->ndim, src->shape, b1, sizeof b1), wt_shape_str(dst->ndim, dst->shape, b2, sizeof b2));
    }
    const int64_t n = ax >= lead ? src->shape[ax - lead] : 1;
    if (n > dst->shape[ax])
        return wt_fail(WT_ERR_SHAPE, "%s: src's extent %lld along axis %d exceeds dst's %lld", fn, (long long)n, axis,
                       (long long)dst->shape[ax]);
    if (repeats_elements(dst))
        return wt_fail(WT_ERR_INVALID_ARGUMENT,
                       "%s: dst repeats elements (an expanded view); writes to it would collide", fn);
    wt_context *ctx = wt_ctx_of(dst);
    if ((st = mv_need(fn, ctx, WT_NODE_COPY_INTO)) != WT_OK) return st;
    /* The window at start 0; the kernel moves it by the device's start. */
    int64_t wshape[WT_MAX_DIMS];
    memcpy(wshape, dst->shape, sizeof(int64_t) * (size_t)dst->ndim);
    wshape[ax] = n;
    wt_tensor *win = NULL, *s = NULL, *tmp = NULL;
    if ((st = wt_tensor_view(dst, dst->ndim, wshape, dst->strides, dst->offset, &win)) != WT_OK) return st;
    if ((st = wt_expand(src, dst->ndim, wshape, &s)) != WT_OK || win->numel == 0) goto done;
    if (s->dtype != dst->dtype) st = wt_cast(s, dst->dtype, &tmp);
    else if (may_overlap(s, dst)) st = mv_materialize(s, &tmp); /* wherever the window lands */
    if (tmp) {
        wt_tensor_release(s);
        s = tmp;
    }
    if (st == WT_OK)
        st = wt_node_run(ctx, &(wt_node){.kind = WT_NODE_COPY_INTO, .in = {s, start}, .out = {win},
                                         .p.copy_at = {dst->strides[ax], dst->shape[ax] - n}});
done:
    wt_tensor_release(s);
    wt_tensor_release(win);
    if (st != WT_OK) wt_error_prefix(fn);
    return st;
}
