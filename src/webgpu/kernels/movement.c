/* Data-movement kernels (mv_*.wgsl): remap, copy_into, gather and
 * scatter_add. Elements move as 2- or 4-byte bit patterns in u32 words, so
 * one shader serves every dtype and needs no device feature.
 *
 * Out-of-range indices (gather, scatter_add): every access is clamped (or
 * skipped) in the shader, which raises a flag in a 2-word buffer; the
 * kernel reads the flag back before it returns, so the caller gets the
 * error from the op that caused it. That costs one wait for the GPU per
 * checked op, which an embedding lookup per forward pass can afford; a
 * deferred check at the next sync would save it but report the error away
 * from its cause, after the bad result had been used. */
#include "webgpu/wg.h"
#include "webgpu/wg_params.h"

#include <stdio.h>
#include <string.h>

#define MV_WG 256u

/* Every index the shaders compute is a u32 (positions as i32 in remap);
 * bindings are smaller than 4 GiB, so this fails only for layouts that
 * could not be bound anyway. */
wt_status wg_mv_check_indexing(const char *what, const wt_tensor *t)
{
    const int64_t limit = INT32_MAX - 1;
    if (t->offset < 0 || t->offset > limit || t->numel > limit)
        return wt_fail(WT_ERR_UNSUPPORTED, "webgpu %s: tensor too large for 32-bit indexing", what);
    for (int d = 0; d < t->ndim; d++)
        if (t->strides[d] < 0 || t->strides[d] > limit || t->shape[d] > limit)
            return wt_fail(WT_ERR_UNSUPPORTED, "webgpu %s: strides or shape beyond 32-bit indexing", what);
    return WT_OK;
}

static bool elem2(const wt_tensor *t) { return wt_dtype_storage_size(t->dtype) == 2; }

static void copy_dims(uint32_t *dst, const int64_t *src, int n)
{
    for (int d = 0; d < n; d++) dst[d] = (uint32_t)src[d];
}

static uint64_t groups_for(uint64_t threads) { return (threads + MV_WG - 1) / MV_WG; }

static void elem_prelude(char *buf, size_t size, const wt_tensor *t)
{
    snprintf(buf, size, "const ELEM2: bool = %s;\nconst WG: u32 = %uu;\n", elem2(t) ? "true" : "false", MV_WG);
}

/* --------------------------------------------------------------- remap */

wt_status wg_op_remap(wt_context *ctx, const wt_tensor *x, const wt_remap *r, wt_tensor *out)
{
    wt_status st;
    if ((st = wg_mv_check_indexing("remap", x)) != WT_OK || (st = wg_mv_check_indexing("remap", out)) != WT_OK)
        return st;
    remap_params p;
    memset(&p, 0, sizeof p);
    p.n = (uint32_t)out->numel;
    p.ndim = (uint32_t)out->ndim;
    p.x_offset = (uint32_t)x->offset;
    p.fill = r->fill_bits;
    p.tri = (uint32_t)r->tri;
    /* The API clamps diag to the extents; this keeps it an i32 too. */
    p.diag = (int32_t)(r->diag > INT32_MAX ? INT32_MAX : r->diag < -INT32_MAX ? -INT32_MAX : r->diag);
    copy_dims(p.out_shape, out->shape, out->ndim);
    copy_dims(p.x_shape, x->shape, x->ndim);
    copy_dims(p.x_strides, x->strides, x->ndim);
    for (int d = 0; d < out->ndim; d++) {
        if (r->start[d] < INT32_MIN + 1 || r->start[d] > INT32_MAX - 1)
            return wt_fail(WT_ERR_UNSUPPORTED, "webgpu remap: offsets beyond 32-bit indexing");
        p.start[d] = (int32_t)r->start[d];
        p.axis_mode[d] = (uint32_t)r->mode[d] | (r->flip[d] ? 4u : 0u);
    }
    char prelude[96];
    elem_prelude(prelude, sizeof prelude, x);
    uint64_t threads = elem2(out) ? ((uint64_t)out->numel + 1) / 2 : (uint64_t)out->numel;
    wg_launch l = {
        .shader = "mv_remap", .prelude = prelude, .libraries = {"mv_words"}, .params = &p, .params_size = sizeof p,
        .bindings = {{x->storage, false}, {out->storage, true}}, .nbindings = 2,
        .workgroups = groups_for(threads),
    };
    return wg_dispatch(ctx, &l);
}

/* ----------------------------------------------------------- copy_into */

wt_status wg_op_copy_into(wt_context *ctx, const wt_tensor *src, wt_tensor *dst)
{
    return wg_op_copy_into_at(ctx, src, NULL, 0, 0, dst);
}

wt_status wg_op_copy_into_at(wt_context *ctx, const wt_tensor *src, const wt_tensor *start, int64_t stride,
                             int64_t limit, wt_tensor *dst)
{
    wt_status st;
    if ((st = wg_mv_check_indexing("copy_into", src)) != WT_OK ||
        (st = wg_mv_check_indexing("copy_into", dst)) != WT_OK)
        return st;
    if (src->storage == dst->storage) {
        /* One buffer cannot be bound read-only and writable in a dispatch:
         * through a temporary (the API made sure the views are apart). */
        wt_tensor *tmp;
        if ((st = wt_tensor_alloc(ctx, src->dtype, src->ndim, src->shape, &tmp)) != WT_OK) return st;
        if ((st = wg_op_copy_into(ctx, src, tmp)) == WT_OK) st = wg_op_copy_into_at(ctx, tmp, start, stride, limit, dst);
        wt_tensor_release(tmp);
        return st;
    }
    int nd;
    int64_t shape[WT_MAX_DIMS], strides[2][WT_MAX_DIMS];
    wt_coalesce_pair(dst, src->strides, dst->strides, &nd, shape, strides);
    copy_params p;
    memset(&p, 0, sizeof p);
    p.n = (uint32_t)dst->numel;
    p.ndim = (uint32_t)nd;
    p.src_offset = (uint32_t)src->offset;
    p.dst_offset = (uint32_t)dst->offset;
    copy_dims(p.shape, shape, nd);
    copy_dims(p.src_strides, strides[0], nd);
    copy_dims(p.dst_strides, strides[1], nd);
    if (start) {
        /* The moved window stays inside dst's storage: its last element is
         * at most limit * stride past the window's. */
        if (stride < 0 || limit < 0 || (uint64_t)stride > UINT32_MAX || (uint64_t)limit > UINT32_MAX ||
            (uint64_t)dst->offset + (uint64_t)limit * (uint64_t)stride + (uint64_t)dst->numel > UINT32_MAX ||
            (uint64_t)start->offset > UINT32_MAX)
            return wt_fail(WT_ERR_UNSUPPORTED, "webgpu copy_into_at: dst is too large for 32-bit indexing");
        p.dyn_stride = (uint32_t)stride;
        p.dyn_limit = (uint32_t)limit;
        p.dyn_at = (uint32_t)start->offset;
        p.dyn_on = 1;
    }
    /* Plain stores unless 2-byte elements land in a scattered dst, where
     * two threads could own the halves of one word. */
    bool words = !elem2(dst) || wt_tensor_is_contiguous(dst);
    uint64_t threads = (uint64_t)dst->numel;
    if (elem2(dst) && words)
        threads = start ? (uint64_t)dst->numel / 2 + 1 /* the start's parity is known on the device only */
                        : ((uint64_t)dst->offset + (uint64_t)dst->numel + 1) / 2 - (uint64_t)dst->offset / 2;
    char prelude[96];
    elem_prelude(prelude, sizeof prelude, dst);
    wg_launch l = {
        .shader = words ? "mv_copy_words" : "mv_copy_into", .prelude = prelude, .libraries = {"mv_copy"}, .params = &p,
        .params_size = sizeof p, .bindings = {{src->storage, false}, {dst->storage, true}, {start ? start->storage : src->storage, false}},
        .nbindings = 3,
        .workgroups = groups_for(threads),
    };
    return wg_dispatch(ctx, &l);
}

/* ------------------------------------------------------ gather / scatter */

/* Dispatches l with a two-word flag as its last binding: unless trusted,
 * a slot the context reads at its next sync (checks.c; zero until a kernel
 * raises it), so the op never waits for the GPU and can be captured;
 * trusted (the library made the indices), a scratch word pair nobody
 * reads. No dispatch of its own either way. */
static wt_status dispatch_checked(wt_context *ctx, wg_launch *l, int64_t extent, bool trusted)
{
    wt_storage *flag = NULL;
    wt_status st = trusted ? wg_scratch(ctx, 2 * sizeof(uint32_t), &flag)
                           : wg_checks_slot(ctx, ctx->node ? wt_node_label(ctx->node) : l->shader, extent, &flag);
    if (st != WT_OK) return st;
    l->bindings[l->nbindings++] = (wg_binding){flag, true};
    st = wg_dispatch(ctx, l);
    if (trusted) wg_scratch_release(ctx, flag);
    return st;
}

/* A part of an axis: count entries from base, inside an axis of extent
 * entries (at most INT32_MAX: the shaders compare i32 indices with it). */
static wt_status check_part(const char *op, int64_t base, int64_t count, int64_t extent)
{
    if (base < 0 || base + count > extent || extent > INT32_MAX)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "webgpu %s: a part [%lld, +%lld) outside an axis of %lld", op,
                       (long long)base, (long long)count, (long long)extent);
    return WT_OK;
}

wt_status wg_op_gather(wt_context *ctx, const wt_tensor *x, int axis, const wt_tensor *index, bool trusted,
                       wt_tensor *out)
{
    return wg_op_gather_part(ctx, x, axis, index, trusted, 0, x->shape[axis], out);
}

wt_status wg_op_gather_part(wt_context *ctx, const wt_tensor *x, int axis, const wt_tensor *index,
                            bool trusted, int64_t base, int64_t extent, wt_tensor *out)
{
    wt_status st;
    if ((st = wg_mv_check_indexing("gather", x)) != WT_OK || (st = wg_mv_check_indexing("gather", index)) != WT_OK ||
        (st = wg_mv_check_indexing("gather", out)) != WT_OK)
        return st;
    gather_params p;
    memset(&p, 0, sizeof p);
    p.n = (uint32_t)out->numel;
    p.ndim = (uint32_t)out->ndim;
    p.axis = (uint32_t)axis;
    p.x_offset = (uint32_t)x->offset;
    p.idx_offset = (uint32_t)index->offset;
    if ((st = check_part("gather", base, x->shape[axis], extent)) != WT_OK) return st;
    p.extent = (uint32_t)extent;
    p.base = (uint32_t)base;
    p.count = (uint32_t)x->shape[axis];
    copy_dims(p.shape, out->shape, out->ndim);
    copy_dims(p.x_strides, x->strides, x->ndim);
    copy_dims(p.idx_strides, index->strides, index->ndim);
    char prelude[96];
    elem_prelude(prelude, sizeof prelude, x);
    uint64_t threads = elem2(out) ? ((uint64_t)out->numel + 1) / 2 : (uint64_t)out->numel;
    wg_launch l = {
        .shader = "mv_gather", .prelude = prelude, .libraries = {"mv_words"}, .params = &p, .params_size = sizeof p,
        .bindings = {{x->storage, false}, {index->storage, false}, {out->storage, true}},
        .nbindings = 3,
        .workgroups = groups_for(threads),
    };
    return dispatch_checked(ctx, &l, extent, trusted);
}

wt_status wg_op_scatter_add(wt_context *ctx, wt_tensor *out, int axis, const wt_tensor *index,
                            const wt_tensor *src)
{
    return wg_op_scatter_add_part(ctx, out, axis, index, src, 0, out->shape[axis], false);
}

wt_status wg_op_scatter_add_part(wt_context *ctx, wt_tensor *out, int axis, const wt_tensor *index,
                                 const wt_tensor *src, int64_t base, int64_t extent, bool trusted)
{
    wt_status st;
    if ((st = wg_mv_check_indexing("scatter_add", out)) != WT_OK ||
        (st = wg_mv_check_indexing("scatter_add", index)) != WT_OK ||
        (st = wg_mv_check_indexing("scatter_add", src)) != WT_OK)
        return st;
    unsigned kind = out->dtype == WT_F32 ? 0 : out->dtype == WT_F16 ? 1 : out->dtype == WT_I32 ? 2 : 3;
    if (kind == 3)
        return wt_fail(WT_ERR_UNSUPPORTED, "webgpu scatter_add: dtype %d", (int)out->dtype);
    scatter_params p;
    memset(&p, 0, sizeof p);
    p.n = (uint32_t)index->numel;
    p.ndim = (uint32_t)index->ndim;
    p.axis = (uint32_t)axis;
    p.out_offset = (uint32_t)out->offset;
    p.idx_offset = (uint32_t)index->offset;
    p.src_offset = (uint32_t)src->offset;
    if ((st = check_part("scatter_add", base, out->shape[axis], extent)) != WT_OK) return st;
    p.extent = (uint32_t)extent;
    p.base = (uint32_t)base;
    p.count = (uint32_t)out->shape[axis];
    copy_dims(p.shape, index->shape, index->ndim);
    copy_dims(p.out_strides, out->strides, out->ndim);
    copy_dims(p.idx_strides, index->strides, index->ndim);
    copy_dims(p.src_strides, src->strides, src->ndim);
    char prelude[96];
    snprintf(prelude, sizeof prelude, "const KIND: u32 = %uu;\nconst WG: u32 = %uu;\n", kind, MV_WG);
    wg_launch l = {
        .shader = "mv_scatter_add", .prelude = prelude, .libraries = {"f16_bits"},
        .params = &p, .params_size = sizeof p,
        .bindings = {{index->storage, false}, {src->storage, false}, {out->storage, true}},
        .nbindings = 3,
        .workgroups = groups_for(index->numel),
    };
    return dispatch_checked(ctx, &l, extent, trusted);
}
