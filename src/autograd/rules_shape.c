/* Derivatives of views, data movement and scans: each moves the gradient
 * back where its elements came from (a slice's gradient is written into
 * zeros, a gather's is scatter-added ...). Parameters as the front-ends
 * record them (autograd hooks in api/movement_*.c, api/views.c). */
#include "autograd/rules.h"

#include <stdlib.h>
#include <string.h>

#define G (gout[0])

static wt_status finish(chain *c)
{
    chain_release(c);
    return c->st;
}

static int norm_axis(int64_t axis, int ndim) { return (int)(axis < 0 ? axis + ndim : axis); }

RULE(grad_reshape) { return wt_grad_reshape_in(n, 0, G, &gin[0]); }
RULE(grad_expand) { return wt_grad_reduce_in(n, 0, G, &gin[0]); }

RULE(grad_permute)
{
    int ndim = n->in_ndim[0], inv[WT_MAX_DIMS];
    for (int i = 0; i < ndim; i++) inv[norm_axis(n->p.i[i], ndim)] = i;
    return wt_permute(G, inv, &gin[0]);
}

RULE(grad_transpose) { return wt_transpose(G, (int)n->p.i[0], (int)n->p.i[1], &gin[0]); }

/* g written into zeros of input 0's shape through view(zeros). */
typedef wt_status (*view_fn)(const wt_grad_node *n, const wt_tensor *z, wt_tensor **view);

static wt_status into_zeros(const wt_grad_node *n, int i, const wt_tensor *g, view_fn view, wt_tensor **gin)
{
    wt_tensor *z = NULL, *v = NULL;
    wt_status st = wt_grad_zeros_in(n, i, &z);
    if (st == WT_OK) st = view(n, z, &v);
    if (st == WT_OK) st = wt_copy_into(v, g);
    wt_tensor_release(v);
    if (st == WT_OK) *gin = z;
    else wt_tensor_release(z);
    return st;
}

static wt_status slice_view(const wt_grad_node *n, const wt_tensor *z, wt_tensor **v)
{
    return wt_slice(z, (int)n->p.i[0], n->p.i[1], n->p.i[2], n->p.i[3], v);
}
RULE(grad_slice) { return into_zeros(n, 0, G, slice_view, &gin[0]); }

/* The parts' gradients as one view where they already lie as the pieces
 * of one tensor: one storage, one set of strides, each part starting
 * where the one before ends along the axis (the fused attention backward
 * writes q, k and v's gradients so when they are the heads of one linear
 * layer's output). No gradient is written in place while another tensor
 * sees its storage (gradient clipping checks), so the view may stand for
 * a new tensor. */
static bool join_as_view(const wt_grad_node *n, wt_tensor *const *parts, int axis, wt_tensor **out)
{
    const wt_tensor *p0 = parts[0];
    const int ndim = n->in_ndim[0];
    int64_t at = p0->offset;
    for (int k = 0; k < n->nout; k++) {
        const wt_tensor *p = parts[k];
        if (p->storage != p0->storage || p->ndim != ndim || p->offset != at ||
            memcmp(p->strides, p0->strides, sizeof p->strides[0] * (size_t)ndim) != 0)
            return false;
        at += p->shape[axis] * p->strides[axis];
    }
    return wt_tensor_view(p0, ndim, n->in_shape[0], p0->strides, p0->offset, out) == WT_OK;
}

RULE(grad_split) /* the outputs' gradients joined again */
{
    wt_tensor *parts[64] = {0};
    for (int k = 0; k < n->nout && k < 64; k++) parts[k] = (wt_tensor *)gout[k];
    const int axis = norm_axis(n->p.i[0], n->in_ndim[0]);
    if (n->nout <= 64 && join_as_view(n, parts, axis, &gin[0])) return WT_OK;
    return wt_concat(n->nout, parts, (int)n->p.i[0], &gin[0]);
}

RULE(grad_concat)
{
    int axis = norm_axis(n->p.i[0], n->in_ndim[0]);
    int64_t at = 0;
    wt_status st = WT_OK;
    for (int i = 0; i < n->nin && st == WT_OK; i++) {
        int64_t len = n->in_shape[i][axis];
        if (wt_grad_needs(n, i)) st = wt_slice(G, axis, at, at + len, 1, &gin[i]);
        at += len;
    }
    return st;
}

RULE(grad_stack)
{
    int axis = norm_axis(n->p.i[0], n->in_ndim[0] + 1);
    wt_status st = WT_OK;
    for (int i = 0; i < n->nin && st == WT_OK; i++) {
        if (!wt_grad_needs(n, i)) continue;
        wt_tensor *s = NULL;
        st = wt_slice(G, axis, i, i + 1, 1, &s);
        if (st == WT_OK) st = wt_grad_reshape_in(n, i, s, &gin[i]);
        wt_tensor_release(s);
    }
    return st;
}

/* pad: p.i[0] npads, p.i[1..] the pads (torch order: last axis first),
 * p.i[17] the mode. A constant pad's gradient is the middle slice; a
 * reflect or replicate pad reads x through an index map along each axis,
 * whose adjoint is index_add of the gradient into zeros. */
RULE(grad_pad)
{
    int ndim = n->in_ndim[0], npads = (int)n->p.i[0];
    wt_pad_mode mode = (wt_pad_mode)n->p.i[17];
    wt_tensor *cur = NULL;
    wt_status st = wt_grad_identity(G, &cur);
    for (int j = 0; j < npads / 2 && st == WT_OK; j++) {
        int axis = ndim - 1 - j;
        int64_t before = n->p.i[1 + 2 * j], after = n->p.i[2 + 2 * j];
        int64_t len = n->in_shape[0][axis];
        if (before == 0 && after == 0) continue;
        wt_tensor *next = NULL;
        if (mode == WT_PAD_CONSTANT) {
            st = wt_slice(cur, axis, before, before + len, 1, &next);
        } else {
            int64_t total = before + len + after;
            int32_t *idx = malloc((size_t)(total > 0 ? total : 1) * sizeof *idx);
            if (!idx) {
                st = wt_fail(WT_ERR_OUT_OF_MEMORY, "pad: out of host memory");
                break;
            }
            for (int64_t o = 0; o < total; o++) {
                int64_t s = o - before;
                if (mode == WT_PAD_REFLECT) {
                    if (s < 0) s = -s;
                    if (s >= len) s = 2 * (len - 1) - s;
                } else {
                    s = s < 0 ? 0 : s >= len ? len - 1 : s;
                }
                idx[o] = (int32_t)s;
            }
            wt_tensor *it = NULL, *z = NULL;
            st = wt_tensor_from_data(n->ctx, WT_I32, 1, &total, idx, &it);
            free(idx);
            int64_t shape[WT_MAX_DIMS];
            memcpy(shape, cur->shape, sizeof shape);
            shape[axis] = len;
            if (st == WT_OK) st = wt_tensor_zeros(n->ctx, WT_F32, ndim, shape, &z);
            if (st == WT_OK) st = wt_index_add(z, axis, it, cur, &next);
            wt_tensor_release(it);
            wt_tensor_release(z);
        }
        wt_tensor_release(cur);
        cur = next;
    }
    if (st == WT_OK) gin[0] = cur;
    else wt_tensor_release(cur);
    return st;
}

/* repeat / tile: p.i[0] = n counts p.i[1..n] (n >= the input's ndim;
 * the input is viewed with n - ndim leading axes of 1). The gradient of
 * each input element sums its copies: per axis, [r * s] -> [r, s] and a
 * sum over r. */
RULE(grad_repeat)
{
    int nr = (int)n->p.i[0], ndim = n->in_ndim[0];
    int64_t base[WT_MAX_DIMS];
    for (int a = 0; a < nr; a++) base[a] = a < nr - ndim ? 1 : n->in_shape[0][a - (nr - ndim)];
    wt_tensor *cur = NULL;
    wt_status st = wt_grad_identity(G, &cur);
    for (int a = 0; a < nr && st == WT_OK; a++) {
        int64_t r = n->p.i[1 + a];
        if (r == 1) continue;
        /* cur has axes 0..a-1 already reduced to base; split axis a. */
        int64_t shape[WT_MAX_DIMS + 1];
        int k = 0;
        for (int b = 0; b < nr; b++) {
            if (b == a) {
                shape[k++] = r;
                shape[k++] = base[b];
            } else {
                shape[k++] = cur->shape[b];
            }
        }
        if (k > WT_MAX_DIMS) {
            st = wt_fail(WT_ERR_UNSUPPORTED, "repeat: the gradient of %d repeated axes needs %d dims", nr, k);
            break;
        }
        wt_tensor *v = NULL, *s = NULL;
        st = wt_reshape(cur, k, shape, &v);
        int ax = a;
        if (st == WT_OK) st = wt_sum(v, 1, &ax, false, &s);
        wt_tensor_release(v);
        wt_tensor_release(cur);
        cur = s;
    }
    if (st == WT_OK) st = wt_grad_reshape_in(n, 0, cur, &gin[0]);
    wt_tensor_release(cur);
    return st;
}

RULE(grad_flip)
{
    int axes[WT_MAX_DIMS];
    for (int k = 0; k < n->p.i[0]; k++) axes[k] = (int)n->p.i[1 + k];
    return wt_flip(G, (int)n->p.i[0], axes, &gin[0]);
}

RULE(grad_roll) /* p.i[0] naxes, shifts p.i[1..8], axes p.i[9..16] */
{
    int naxes = (int)n->p.i[0], axes[WT_MAX_DIMS];
    int64_t shifts[WT_MAX_DIMS];
    for (int k = 0; k < (naxes ? naxes : 1); k++) {
        shifts[k] = -n->p.i[1 + k];
        axes[k] = (int)n->p.i[9 + k];
    }
    return wt_roll(G, naxes, shifts, axes, &gin[0]);
}

RULE(grad_tril) { return wt_tril(G, n->p.i[0], &gin[0]); }
RULE(grad_triu) { return wt_triu(G, n->p.i[0], &gin[0]); }

/* gather(x, axis, index): scatter_add of g into zeros. */
RULE(grad_gather)
{
    chain c = {0};
    wt_tensor *z = STEP(&c, wt_grad_zeros_in, n, 0);
    wt_tensor *r = STEP(&c, wt_scatter_add, z, (int)n->p.i[0], n->saved_in[1], G);
    keep_as(&c, r, &gin[0]);
    return finish(&c);
}

RULE(grad_index_select)
{
    chain c = {0};
    if (n->in_ndim[0] == 0) return wt_grad_reshape_in(n, 0, G, &gin[0]);
    wt_tensor *z = STEP(&c, wt_grad_zeros_in, n, 0);
    const wt_tensor *idx = n->saved_in[1];
    wt_tensor *flat = idx->ndim == 0 ? STEP(&c, wt_reshape, idx, 1, (int64_t[]){1}) : (wt_tensor *)idx;
    wt_tensor *r = STEP(&c, wt_index_add, z, (int)n->p.i[0], flat, G);
    keep_as(&c, r, &gin[0]);
    return finish(&c);
}

RULE(grad_embedding) { return wt_embedding_backward(G, n->saved_in[1], n->in_shape[0][0], &gin[0]); }

/* scatter_add(x, axis, index, src) and index_add: x's gradient is g; src's
 * is g read back at the indices (src elements past index's extents were
 * not used: zeros). */
RULE(grad_scatter_add)
{
    chain c = {0};
    if (wt_grad_needs(n, 0)) c.st = wt_grad_identity(G, &gin[0]);
    if (wt_grad_needs(n, 2)) {
        wt_tensor *gs = STEP(&c, wt_gather, G, (int)n->p.i[0], n->saved_in[1]);
        if (c.st == WT_OK && gs->ndim == n->in_ndim[2] &&
            memcmp(gs->shape, n->in_shape[2], sizeof(int64_t) * (size_t)gs->ndim) == 0) {
            keep_as(&c, gs, &gin[2]);
        } else if (c.st == WT_OK) {
            wt_tensor *z = STEP(&c, wt_grad_zeros_in, n, 2);
            wt_tensor *v = z;
            for (int a = 0; a < gs->ndim && c.st == WT_OK; a++) v = STEP(&c, wt_slice, v, a, 0, gs->shape[a], 1);
            if (c.st == WT_OK) c.st = wt_copy_into(v, gs);
            keep_as(&c, z, &gin[2]);
        }
    }
    return finish(&c);
}

RULE(grad_index_add)
{
    chain c = {0};
    if (wt_grad_needs(n, 0)) c.st = wt_grad_identity(G, &gin[0]);
    if (wt_grad_needs(n, 2)) {
        wt_tensor *r = STEP(&c, wt_index_select, G, (int)n->p.i[0], n->saved_in[1]);
        keep_as(&c, r, &gin[2]);
    }
    return finish(&c);
}

/* sort / topk values: each went from the position its index names. */
RULE(grad_sort)
{
    chain c = {0};
    wt_tensor *z = STEP(&c, wt_grad_zeros_in, n, 0);
    wt_tensor *r = STEP(&c, wt_scatter_add, z, (int)n->p.i[0], n->extra[0], G);
    keep_as(&c, r, &gin[0]);
    return finish(&c);
}

/* cumsum: the reversed cumulative sum of g. A 0-d input was taken as [1]. */
static wt_status reverse_cumsum(const wt_tensor *g, int axis, wt_tensor **out)
{
    chain c = {0};
    wt_tensor *f = STEP(&c, wt_flip, g, 1, &axis);
    wt_tensor *s = STEP(&c, wt_cumsum, f, axis);
    wt_tensor *r = STEP(&c, wt_flip, s, 1, &axis);
    keep_as(&c, r, out);
    return finish(&c);
}

RULE(grad_cumsum)
{
    if (n->in_ndim[0] == 0) return wt_grad_reshape_in(n, 0, G, &gin[0]);
    return reverse_cumsum(G, (int)n->p.i[0], &gin[0]);
}

/* cumprod: dx_i = sum_{j >= i} g_j y_j / x_i (inputs equal to 0 give a
 * non-finite gradient). */
RULE(grad_cumprod)
{
    chain c = {0};
    const wt_tensor *x = n->saved_in[0], *y = n->saved_out[0];
    int axis = (int)n->p.i[0];
    wt_tensor *gy = STEP(&c, wt_mul, G, y);
    if (n->in_ndim[0] == 0) {
        wt_tensor *r = STEP(&c, wt_div, gy, x);
        wt_tensor *rr = STEP(&c, wt_grad_reshape_in, n, 0, r);
        keep_as(&c, rr, &gin[0]);
        return finish(&c);
    }
    wt_tensor *s = STEP(&c, reverse_cumsum, gy, axis);
    wt_tensor *r = STEP(&c, wt_div, s, x);
    keep_as(&c, r, &gin[0]);
    return finish(&c);
}
