/* Tensors larger than one binding (maxStorageBufferBindingSize: 128 MiB on
 * lavapipe and many browsers) up to maxBufferSize.
 *
 * A tensor lives in one buffer however large. A kernel never sees more
 * than a binding can hold: wg_windowed cuts the op into pieces along the
 * output's leading axes until every operand of a piece spans few enough
 * bytes, and hands the kernel, for each large operand, a window storage:
 * a range of the big buffer that the binding layer binds by offset and
 * size (wg_buffer.parent), with the view's offset made relative to it.
 * Kernels need nothing of their own: a piece is an ordinary call on
 * smaller tensors. Small ops (everything fits) go straight through.
 *
 * What holds: an op whose output element depends on its inputs at the
 * same leading indices (elementwise, copy, cast, fill, rows of rowwise
 * ops, batches and rows of matmul, the kept axes of reductions) is split
 * here; a reduction whose reduced part alone is too large is split along
 * its reduced axes into partial results that are reduced again. A strided
 * input that no cut makes small enough (its rows span the buffer) is first
 * copied contiguous. An operand that still does not fit (one contiguous
 * row of a rowwise op past the limit, a matmul's B matrix past it) is
 * WT_ERR_UNSUPPORTED with the sizes. */
#include "webgpu/wg_runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_OPERANDS 5

/* Bytes from the first to one past the last element the view touches. */
static uint64_t span_bytes(const wt_tensor *t)
{
    if (t->numel == 0)
        return 0;
    uint64_t last = 0;
    for (int d = 0; d < t->ndim; d++)
        last += (uint64_t)(t->shape[d] - 1) * (uint64_t)t->strides[d];
    return (last + 1) * wt_dtype_size(t->dtype);
}

typedef struct window_limits {
    uint64_t binding; /* maxStorageBufferBindingSize */
    uint64_t usable;  /* the span a window may have after alignment slack */
    uint64_t align;   /* minStorageBufferOffsetAlignment */
} window_limits;

static window_limits limits_of(const wt_context *ctx)
{
    const wg_context *w = wg_ctx(ctx);
    window_limits l;
    l.binding = w->limits.maxStorageBufferBindingSize & ~(uint64_t)15;
    l.align = w->limits.minStorageBufferOffsetAlignment ? w->limits.minStorageBufferOffsetAlignment
                                                        : 256;
    /* Leading slack up to the alignment, trailing up to a whole vec4. */
    l.usable = l.binding > l.align + 32 ? l.binding - l.align - 32 : 0;
    /* WT_WINDOW_BYTES lowers the limit, so tests reach windows cheaply. */
    uint64_t forced = wg_env_number("WT_WINDOW_BYTES", 0);
    if (forced && forced < l.usable) {
        l.usable = forced;
        l.binding = forced + l.align + 32;
    }
    return l;
}

static bool fits(const wt_tensor *t, const window_limits *l)
{
    return t->storage->bytes <= l->binding || span_bytes(t) <= l->usable;
}

/* A window over t's storage and a view of it, both in *ws / *wt (caller
 * memory), when t's storage is too large to bind whole; else *view = t. */
typedef struct windowed_operand {
    wt_storage storage;
    wg_buffer buffer;
    wt_tensor tensor;
} windowed_operand;

static const wt_tensor *make_window(const wt_tensor *t, const window_limits *l,
                                    windowed_operand *w)
{
    if (t->storage->bytes <= l->binding || t->numel == 0)
        return t;
    wg_buffer *parent = t->storage->device;
    size_t esize = wt_dtype_size(t->dtype);
    uint64_t first = (uint64_t)t->offset * esize;
    uint64_t base = first / l->align * l->align;
    uint64_t end = (first + span_bytes(t) + 15) & ~(uint64_t)15;
    if (end > parent->size)
        end = parent->size;
    memset(w, 0, sizeof *w);
    w->buffer.buffer = parent->buffer;
    w->buffer.offset = base;
    w->buffer.size = end - base;
    w->buffer.parent = parent;
    w->buffer.last_batch = parent->last_batch;
    w->storage.refcount = 1; /* never released to 0: not a real storage */
    w->storage.ctx = t->storage->ctx;
    w->storage.bytes = (size_t)(end - base);
    w->storage.device = &w->buffer;
    w->tensor = *t;
    w->tensor.refcount = 1;
    w->tensor.storage = &w->storage;
    w->tensor.offset = t->offset - (int64_t)(base / esize);
    return &w->tensor;
}

typedef struct split_job {
    wt_context *ctx;
    window_limits lim;
    int nin;
    const int *shared;
    wg_piece_fn fn;
    const void *arg;
    bool no_cut; /* split failed for want of a cut (not a kernel's failure) */
} split_job;

static wt_status run_piece(const split_job *j, wt_tensor *out, const wt_tensor *const *in)
{
    windowed_operand win[MAX_OPERANDS + 1];
    const wt_tensor *pin[MAX_OPERANDS];
    for (int i = 0; i < j->nin; i++)
        pin[i] = in[i] ? make_window(in[i], &j->lim, &win[i]) : NULL;
    wt_tensor *pout = (wt_tensor *)make_window(out, &j->lim, &win[MAX_OPERANDS]);
    return j->fn(j->ctx, pin, pout, j->arg);
}

/* t with axis d cut to [start, start + count). */
static wt_tensor slice_axis(const wt_tensor *t, int d, int64_t start, int64_t count)
{
    wt_tensor v = *t;
    v.offset += start * t->strides[d];
    v.numel = count == 0 ? 0 : t->numel / (t->shape[d] ? t->shape[d] : 1) * count;
    v.shape[d] = count;
    return v;
}

static bool all_fit(const split_job *j, const wt_tensor *out, const wt_tensor *const *in)
{
    if (!fits(out, &j->lim))
        return false;
    for (int i = 0; i < j->nin; i++)
        if (in[i] && !fits(in[i], &j->lim))
            return false;
    return true;
}

static wt_status split(const split_job *j, const wt_tensor *out, const wt_tensor *const *in,
                       int d)
{
    if (all_fit(j, out, in))
        return run_piece(j, (wt_tensor *)out, in);
    while (d < out->ndim && out->shape[d] <= 1)
        d++;
    if (d >= out->ndim) {
        ((split_job *)j)->no_cut = true;
        uint64_t worst = span_bytes(out);
        for (int i = 0; i < j->nin; i++)
            if (in[i] && span_bytes(in[i]) > worst)
                worst = span_bytes(in[i]);
        return wt_fail(WT_ERR_UNSUPPORTED,
                       "webgpu: an operand spans %llu bytes that no cut along the output's "
                       "leading axes brings under one binding (%llu bytes) on this device",
                       (unsigned long long)worst, (unsigned long long)j->lim.usable);
    }
    /* The largest chunk along d (halving from the whole axis) that fits. */
    int64_t n = out->shape[d], c = n;
    wt_tensor vout, vin[MAX_OPERANDS];
    const wt_tensor *pin[MAX_OPERANDS];
    for (;;) {
        vout = slice_axis(out, d, 0, c);
        for (int i = 0; i < j->nin; i++) {
            if (in[i] && j->shared[i] > d)
                vin[i] = slice_axis(in[i], d, 0, c);
            else if (in[i])
                vin[i] = *in[i];
            pin[i] = in[i] ? &vin[i] : NULL;
        }
        if (c == 1 || all_fit(j, &vout, pin))
            break;
        c = (c + 1) / 2;
    }
    for (int64_t start = 0; start < n; start += c) {
        int64_t count = n - start < c ? n - start : c;
        vout = slice_axis(out, d, start, count);
        for (int i = 0; i < j->nin; i++) {
            if (in[i] && j->shared[i] > d)
                vin[i] = slice_axis(in[i], d, start, count);
            else if (in[i])
                vin[i] = *in[i];
            pin[i] = in[i] ? &vin[i] : NULL;
        }
        wt_status st = split(j, &vout, pin, d + 1);
        if (st != WT_OK)
            return st;
    }
    return WT_OK;
}

wt_status wg_windowed(wt_context *ctx, wt_tensor *out, int nin, const wt_tensor *const *in,
                      const int *shared, wg_piece_fn fn, const void *arg)
{
    window_limits lim = limits_of(ctx);
    bool small = out->storage->bytes <= lim.binding;
    for (int i = 0; i < nin; i++)
        small = small && (!in[i] || in[i]->storage->bytes <= lim.binding);
    if (small)
        return fn(ctx, in, out, arg);
    if (nin > MAX_OPERANDS)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "webgpu: wg_windowed takes at most %d inputs",
                       MAX_OPERANDS);
    split_job j = {ctx, lim, nin, shared, fn, arg, false};
    wt_status st = split(&j, out, in, 0);
    if (st != WT_ERR_UNSUPPORTED || !j.no_cut)
        return st;
    /* No cut works for a strided input whose rows span the buffer (e.g. a
     * softmax along axis 0 sees columns): a contiguous copy of it (the
     * copy itself is cut along both axes) usually does. Pieces that ran
     * before the failure run again: out = f(in) writes the same values. */
    const wt_tensor *packed_in[MAX_OPERANDS];
    wt_tensor *copies[MAX_OPERANDS] = {0};
    bool any = false;
    st = WT_OK;
    for (int i = 0; i < nin && st == WT_OK; i++) {
        packed_in[i] = in[i];
        if (!in[i] || in[i]->storage->bytes <= lim.binding ||
            wt_layout_is_contiguous(in[i]->ndim, in[i]->shape, in[i]->strides))
            continue;
        st = wt_tensor_alloc(ctx, in[i]->dtype, in[i]->ndim, in[i]->shape, &copies[i]);
        if (st == WT_OK)
            st = in[i]->dtype == WT_F32 ? wg_win_copy(ctx, in[i], copies[i])
                                        : wg_win_cast(ctx, in[i], copies[i]);
        packed_in[i] = copies[i];
        any = true;
    }
    if (st == WT_OK && any) {
        j.no_cut = false;
        st = split(&j, out, packed_in, 0);
    } else if (st == WT_OK) {
        st = WT_ERR_UNSUPPORTED; /* nothing to copy: the first failure's message stands */
    }
    for (int i = 0; i < nin; i++)
        wt_tensor_release(copies[i]);
    return st;
}

/* ------------------------------------------- the backend ops, windowed */

typedef struct op_arg {
    int op;
    int nreduced;
    float value, eps;
} op_arg;

static wt_status piece_unary(wt_context *ctx, const wt_tensor *const *in, wt_tensor *out,
                             const void *arg)
{
    return wg_op_unary(ctx, (wt_unary_op)((const op_arg *)arg)->op, in[0], out);
}
static wt_status piece_unary_f16(wt_context *ctx, const wt_tensor *const *in, wt_tensor *out,
                                 const void *arg)
{
    return wg_op_unary_f16(ctx, (wt_unary_op)((const op_arg *)arg)->op, in[0], out);
}
static wt_status piece_binary(wt_context *ctx, const wt_tensor *const *in, wt_tensor *out,
                              const void *arg)
{
    return wg_op_binary(ctx, (wt_binary_op)((const op_arg *)arg)->op, in[0], in[1], out);
}
static wt_status piece_binary_f16(wt_context *ctx, const wt_tensor *const *in, wt_tensor *out,
                                  const void *arg)
{
    return wg_op_binary_f16(ctx, (wt_binary_op)((const op_arg *)arg)->op, in[0], in[1], out);
}
static wt_status piece_copy(wt_context *ctx, const wt_tensor *const *in, wt_tensor *out,
                            const void *arg)
{
    (void)arg;
    return wg_op_copy(ctx, in[0], out);
}
static wt_status piece_cast(wt_context *ctx, const wt_tensor *const *in, wt_tensor *out,
                            const void *arg)
{
    (void)arg;
    return wg_op_cast(ctx, in[0], out);
}
static wt_status piece_fill(wt_context *ctx, const wt_tensor *const *in, wt_tensor *out,
                            const void *arg)
{
    (void)in;
    return wg_op_fill(ctx, out, ((const op_arg *)arg)->value);
}
static wt_status piece_matmul(wt_context *ctx, const wt_tensor *const *in, wt_tensor *out,
                              const void *arg)
{
    (void)arg;
    return wg_op_matmul(ctx, in[0], in[1], out);
}
static wt_status piece_rowwise(wt_context *ctx, const wt_tensor *const *in, wt_tensor *out,
                               const void *arg)
{
    const op_arg *a = arg;
    return wg_op_rowwise(ctx, (wt_rowwise_op)a->op, in[0], in[1], in[2], a->eps, out);
}
static wt_status piece_reduce(wt_context *ctx, const wt_tensor *const *in, wt_tensor *out,
                              const void *arg)
{
    const op_arg *a = arg;
    return wg_op_reduce(ctx, (wt_reduce_op)a->op, in[0], a->nreduced, out);
}

wt_status wg_win_unary(wt_context *ctx, wt_unary_op op, const wt_tensor *x, wt_tensor *out)
{
    op_arg a = {.op = op};
    int shared[1] = {out->ndim};
    return wg_windowed(ctx, out, 1, &x, shared, piece_unary, &a);
}

wt_status wg_win_unary_f16(wt_context *ctx, wt_unary_op op, const wt_tensor *x, wt_tensor *out)
{
    op_arg a = {.op = op};
    int shared[1] = {out->ndim};
    return wg_windowed(ctx, out, 1, &x, shared, piece_unary_f16, &a);
}

wt_status wg_win_binary(wt_context *ctx, wt_binary_op op, const wt_tensor *a, const wt_tensor *b,
                        wt_tensor *out)
{
    op_arg arg = {.op = op};
    const wt_tensor *in[2] = {a, b};
    int shared[2] = {out->ndim, out->ndim};
    return wg_windowed(ctx, out, 2, in, shared, piece_binary, &arg);
}

wt_status wg_win_binary_f16(wt_context *ctx, wt_binary_op op, const wt_tensor *a,
                            const wt_tensor *b, wt_tensor *out)
{
    op_arg arg = {.op = op};
    const wt_tensor *in[2] = {a, b};
    int shared[2] = {out->ndim, out->ndim};
    return wg_windowed(ctx, out, 2, in, shared, piece_binary_f16, &arg);
}

wt_status wg_win_copy(wt_context *ctx, const wt_tensor *x, wt_tensor *out)
{
    int shared[1] = {out->ndim};
    return wg_windowed(ctx, out, 1, &x, shared, piece_copy, NULL);
}

wt_status wg_win_cast(wt_context *ctx, const wt_tensor *x, wt_tensor *out)
{
    int shared[1] = {out->ndim};
    return wg_windowed(ctx, out, 1, &x, shared, piece_cast, NULL);
}

wt_status wg_win_fill(wt_context *ctx, wt_tensor *out, float value)
{
    op_arg a = {.value = value};
    return wg_windowed(ctx, out, 0, NULL, NULL, piece_fill, &a);
}

wt_status wg_win_matmul(wt_context *ctx, const wt_tensor *a, const wt_tensor *b, wt_tensor *out)
{
    /* out [B, M, N]: a [B, M, K] follows batches and rows, b [B, K, N]
     * batches only. */
    const wt_tensor *in[2] = {a, b};
    int shared[2] = {2, 1};
    return wg_windowed(ctx, out, 2, in, shared, piece_matmul, NULL);
}

wt_status wg_win_rowwise(wt_context *ctx, wt_rowwise_op op, const wt_tensor *x,
                         const wt_tensor *weight, const wt_tensor *bias, float eps, wt_tensor *out)
{
    op_arg a = {.op = op, .eps = eps};
    const wt_tensor *in[3] = {x, weight, bias};
    int shared[3] = {out->ndim - 1, 0, 0};
    return wg_windowed(ctx, out, 3, in, shared, piece_rowwise, &a);
}

/* A reduction whose reduced part alone is too large for a binding: cut
 * x along its first reduced axis of extent > 1 into P chunks, reduce each
 * into a partial (recursively windowed), stack the partials as [P, out]
 * and reduce that over P. A mean is a sum of sums scaled at the end. */
static wt_status reduce_in_parts(wt_context *ctx, wt_reduce_op op, const wt_tensor *x,
                                 int nreduced, wt_tensor *out, const window_limits *lim)
{
    int k = out->ndim;
    while (k < x->ndim && x->shape[k] <= 1)
        k++;
    if (k >= x->ndim)
        return wt_fail(WT_ERR_UNSUPPORTED, "webgpu: reduce: a single element exceeds one binding");
    int64_t n = x->shape[k], c = n;
    /* Chunks whose reduced part (kept axes at one index) fits. */
    for (;;) {
        wt_tensor v = slice_axis(x, k, 0, c);
        for (int d = 0; d < out->ndim; d++)
            v = slice_axis(&v, d, 0, v.shape[d] ? 1 : 0);
        if (c == 1 || span_bytes(&v) <= lim->usable)
            break;
        c = (c + 1) / 2;
    }
    int64_t parts = (n + c - 1) / c;
    wt_reduce_op part_op = op == WT_REDUCE_MEAN ? WT_REDUCE_SUM : op;
    int64_t sshape[WT_MAX_DIMS + 1];
    sshape[0] = parts;
    memcpy(sshape + 1, out->shape, sizeof(int64_t) * (size_t)out->ndim);
    wt_tensor *stack = NULL, *partial = NULL;
    wt_status st = wt_tensor_alloc(ctx, WT_F32, out->ndim + 1, sshape, &stack);
    if (st == WT_OK)
        st = wt_tensor_alloc(ctx, WT_F32, out->ndim, out->shape, &partial);
    for (int64_t p = 0; st == WT_OK && p < parts; p++) {
        int64_t count = n - p * c < c ? n - p * c : c;
        wt_tensor chunk = slice_axis(x, k, p * c, count);
        st = wg_win_reduce(ctx, part_op, &chunk, nreduced, partial);
        if (st == WT_OK) {
            wt_tensor dst = slice_axis(stack, 0, p, 1);
            dst.ndim = out->ndim;
            memcpy(dst.shape, out->shape, sizeof(int64_t) * (size_t)out->ndim);
            memcpy(dst.strides, stack->strides + 1, sizeof(int64_t) * (size_t)out->ndim);
            st = wg_win_copy(ctx, partial, &dst);
        }
    }
    /* [P, out...] seen as [out..., P]: reduce the last axis. */
    wt_tensor sv;
    if (st == WT_OK) {
        sv = *stack;
        for (int d = 0; d < out->ndim; d++) {
            sv.shape[d] = stack->shape[d + 1];
            sv.strides[d] = stack->strides[d + 1];
        }
        sv.shape[out->ndim] = parts;
        sv.strides[out->ndim] = stack->strides[0];
    }
    if (st == WT_OK && op != WT_REDUCE_MEAN) {
        st = wg_win_reduce(ctx, part_op, &sv, 1, out);
    } else if (st == WT_OK) {
        double count = 1;
        for (int d = out->ndim; d < x->ndim; d++)
            count *= (double)x->shape[d];
        wt_tensor *scale = NULL;
        int64_t one = 1;
        st = wg_win_reduce(ctx, WT_REDUCE_SUM, &sv, 1, partial);
        if (st == WT_OK)
            st = wt_tensor_alloc(ctx, WT_F32, 1, &one, &scale);
        if (st == WT_OK)
            st = wg_op_fill(ctx, scale, (float)(1.0 / count));
        if (st == WT_OK) {
            wt_tensor sc = *scale; /* expanded to out's shape */
            sc.ndim = out->ndim;
            for (int d = 0; d < out->ndim; d++) {
                sc.shape[d] = out->shape[d];
                sc.strides[d] = 0;
            }
            sc.numel = out->numel;
            st = wg_win_binary(ctx, WT_BINARY_MUL, partial, &sc, out);
        }
        wt_tensor_release(scale);
    }
    wt_tensor_release(partial);
    wt_tensor_release(stack);
    return st;
}

wt_status wg_win_reduce(wt_context *ctx, wt_reduce_op op, const wt_tensor *x, int nreduced,
                        wt_tensor *out)
{
    window_limits lim = limits_of(ctx);
    if (x->storage->bytes > lim.binding && out->numel > 0) {
        /* The reduced part of one output element must fit one binding. */
        wt_tensor v = *x;
        for (int d = 0; d < out->ndim; d++)
            v = slice_axis(&v, d, 0, 1);
        bool empty = false;
        for (int d = out->ndim; d < x->ndim; d++)
            empty = empty || x->shape[d] == 0;
        if (!empty && span_bytes(&v) > lim.usable)
            return reduce_in_parts(ctx, op, x, nreduced, out, &lim);
    }
    op_arg a = {.op = op, .nreduced = nreduced};
    int shared[1] = {out->ndim};
    return wg_windowed(ctx, out, 1, &x, shared, piece_reduce, &a);
}
