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
 * its reduced axes into partial results that are reduced again. An
 * operand that no such cut makes small enough (one row of a rowwise op
 * past the limit, a matmul's B matrix past it) is WT_ERR_UNSUPPORTED with
 * the sizes. */
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
    split_job j = {ctx, lim, nin, shared, fn, arg};
    return split(&j, out, in, 0);
}

bool wg_needs_windows(const wt_context *ctx, const wt_tensor *t)
{
    return t->storage->bytes > limits_of(ctx).binding;
}

/* ------------------------------------------- the backend ops, windowed */

typedef struct op_arg {
    int op;
    int nreduced;
    uint32_t bits;
    float eps;
    const wt_ew_args *ew;
    const wt_reduce_args *red;
} op_arg;

static wt_status piece_elementwise(wt_context *ctx, const wt_tensor *const *in, wt_tensor *out,
                                   const void *arg)
{
    wt_ew_args a = *((const op_arg *)arg)->ew;
    for (int i = 0; i < a.nin; i++)
        a.in[i] = in[i];
    a.out = out;
    return wg_op_elementwise(ctx, &a);
}
static wt_status piece_where(wt_context *ctx, const wt_tensor *const *in, wt_tensor *out,
                             const void *arg)
{
    return wg_op_where(ctx, in[0], in[1], in[2], ((const op_arg *)arg)->bits, out);
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
    return wg_op_fill_bits(ctx, out, ((const op_arg *)arg)->bits);
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
    wt_reduce_args r = *a->red;
    r.shift = in[1]; /* a shift follows the output */
    return wg_op_reduce(ctx, &r, in[0], a->nreduced, out);
}

wt_status wg_win_elementwise(wt_context *ctx, const wt_ew_args *args)
{
    op_arg a = {.ew = args};
    int shared[2] = {args->out->ndim, args->out->ndim};
    return wg_windowed(ctx, args->out, args->nin, args->in, shared, piece_elementwise, &a);
}

wt_status wg_win_where(wt_context *ctx, const wt_tensor *mask, const wt_tensor *a,
                       const wt_tensor *b, uint32_t a_bits, wt_tensor *out)
{
    op_arg arg = {.bits = a_bits};
    const wt_tensor *in[3] = {mask, a, b};
    int shared[3] = {out->ndim, out->ndim, out->ndim};
    return wg_windowed(ctx, out, 3, in, shared, piece_where, &arg);
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

wt_status wg_win_fill_bits(wt_context *ctx, wt_tensor *out, uint32_t bits)
{
    op_arg a = {.bits = bits};
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

/* The op that combines partial results of op, when one exists: the
 * reductions whose rows map by v (or |v|) and finish by a (or a / n):
 * partial results of the same op reduce again with the combine's own op.
 * A mean is a sum of sums, scaled at the end. */
static bool parts_op(wt_reduce_op op, wt_reduce_op *part, wt_reduce_op *combine)
{
    switch (op) {
    case WT_REDUCE_SUM: case WT_REDUCE_MAX: case WT_REDUCE_MIN: case WT_REDUCE_PROD:
    case WT_REDUCE_ALL: case WT_REDUCE_ANY:
        *part = *combine = op;
        return true;
    case WT_REDUCE_MEAN:
        *part = *combine = WT_REDUCE_SUM;
        return true;
    case WT_REDUCE_NORM1:
        *part = op;
        *combine = WT_REDUCE_SUM;
        return true;
    case WT_REDUCE_NORMINF:
        *part = op;
        *combine = WT_REDUCE_MAX;
        return true;
    default:
        return false;
    }
}

/* A reduction whose reduced part alone is too large for a binding: cut
 * x along its first reduced axis of extent > 1 into P chunks, reduce each
 * into a partial (recursively windowed), stack the partials as [P, out]
 * and reduce that over P. */
static wt_status reduce_in_parts(wt_context *ctx, const wt_reduce_args *r, const wt_tensor *x,
                                 int nreduced, wt_tensor *out, const window_limits *lim)
{
    wt_reduce_op part_op, combine_op;
    if (!parts_op(r->op, &part_op, &combine_op) || r->shift)
        return wt_fail(WT_ERR_UNSUPPORTED,
                       "webgpu: this reduction over more than one binding (%llu bytes) per output "
                       "element is not supported; sum, mean, max, min, prod, all, any and the "
                       "L1/max norms are",
                       (unsigned long long)lim->usable);
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
    int64_t sshape[WT_MAX_DIMS + 1];
    sshape[0] = parts;
    memcpy(sshape + 1, out->shape, sizeof(int64_t) * (size_t)out->ndim);
    wt_tensor *stack = NULL, *partial = NULL;
    wt_status st = wt_tensor_alloc(ctx, out->dtype, out->ndim + 1, sshape, &stack);
    if (st == WT_OK)
        st = wt_tensor_alloc(ctx, out->dtype, out->ndim, out->shape, &partial);
    wt_reduce_args pr = {.op = part_op, .shift = NULL, .n = 1};
    for (int64_t p = 0; st == WT_OK && p < parts; p++) {
        int64_t count = n - p * c < c ? n - p * c : c;
        wt_tensor chunk = slice_axis(x, k, p * c, count);
        st = wg_win_reduce(ctx, &pr, &chunk, nreduced, partial);
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
    wt_reduce_args cr = {.op = combine_op, .shift = NULL, .n = 1};
    if (st == WT_OK && r->op != WT_REDUCE_MEAN) {
        st = wg_win_reduce(ctx, &cr, &sv, 1, out);
    } else if (st == WT_OK) {
        st = wg_win_reduce(ctx, &cr, &sv, 1, partial);
        wt_tensor *scale = NULL;
        int64_t one = 1;
        if (st == WT_OK)
            st = wt_tensor_alloc(ctx, WT_F32, 1, &one, &scale);
        float inv = (float)(1.0 / r->n);
        uint32_t bits;
        memcpy(&bits, &inv, sizeof bits);
        if (st == WT_OK)
            st = wg_op_fill_bits(ctx, scale, bits);
        if (st == WT_OK) {
            wt_tensor sc = *scale; /* expanded to out's shape */
            sc.ndim = out->ndim;
            for (int d = 0; d < out->ndim; d++) {
                sc.shape[d] = out->shape[d];
                sc.strides[d] = 0;
            }
            sc.numel = out->numel;
            wt_ew_args mul = {.op = WT_OP_MUL, .nin = 2, .in = {partial, &sc}, .out = out};
            st = wg_win_elementwise(ctx, &mul);
        }
        wt_tensor_release(scale);
    }
    wt_tensor_release(partial);
    wt_tensor_release(stack);
    return st;
}

wt_status wg_win_reduce(wt_context *ctx, const wt_reduce_args *r, const wt_tensor *x, int nreduced,
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
            return reduce_in_parts(ctx, r, x, nreduced, out, &lim);
    }
    op_arg a = {.nreduced = nreduced, .red = r};
    const wt_tensor *in[2] = {x, r->shift};
    int shared[2] = {out->ndim, out->ndim};
    return wg_windowed(ctx, out, 2, in, shared, piece_reduce, &a);
}
