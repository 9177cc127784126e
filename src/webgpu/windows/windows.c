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
 * same indices along some output axes (elementwise, copy, cast, fill,
 * rows of rowwise ops, the kept axes of reductions; windows/ops.c has the
 * other families) is split here (wg_windowed_plan says how each input
 * follows the output); a reduction whose reduced part alone is too large
 * is split along its reduced axes into partial results that are reduced
 * again. A strided input that no cut makes small enough (its rows span
 * the buffer) is first copied contiguous. An operand that still does not
 * fit (one contiguous row of a rowwise op past the limit) is
 * WT_ERR_UNSUPPORTED with the sizes. */
#include "webgpu/wg_runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>


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
    uint64_t forced = wt_knob_number(WT_KNOB_WINDOW_BYTES, 0);
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

/* A window over t's storage and a view of it, both in *w (caller
 * memory), when t's storage is too large to bind whole; else t. */
typedef wg_window_buf windowed_operand;

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
    const wg_window_plan *plan;
    const wt_tensor *out;      /* the whole output */
    const wt_tensor *const *in; /* the whole inputs */
    bool no_cut; /* split failed for want of a cut (not a kernel's failure) */
} split_job;

/* t with axis d cut to [start, start + count). */
static wt_tensor slice_axis(const wt_tensor *t, int d, int64_t start, int64_t count)
{
    wt_tensor v = *t;
    v.offset += start * t->strides[d];
    v.numel = count == 0 ? 0 : t->numel / (t->shape[d] ? t->shape[d] : 1) * count;
    v.shape[d] = count;
    return v;
}

wt_tensor wg_window_slice(const wt_tensor *t, int axis, int64_t start, int64_t count)
{
    return slice_axis(t, axis, start, count);
}

void wg_window_follow(const wt_tensor *in, uint32_t follow, const int64_t *start,
                      const wt_tensor *piece, wt_tensor *view)
{
    *view = *in;
    for (int d = 0; d < piece->ndim && d < in->ndim; d++)
        if (follow >> d & 1u)
            *view = slice_axis(view, d, start[d], piece->shape[d]);
}

/* The views of the inputs for the piece of out at start. */
static void piece_views(const split_job *j, const int64_t *start, const wt_tensor *piece,
                        wt_tensor *v, const wt_tensor **pin)
{
    const wg_window_plan *p = j->plan;
    for (int i = 0; i < p->nin; i++) {
        pin[i] = NULL;
        if (!j->in[i])
            continue;
        if (p->view)
            p->view(p->arg, i, j->in[i], start, piece, &v[i]);
        else
            wg_window_follow(j->in[i], p->follow[i], start, piece, &v[i]);
        pin[i] = &v[i];
    }
}

static bool all_fit(const split_job *j, const wt_tensor *out, const wt_tensor *const *in)
{
    if (!fits(out, &j->lim))
        return false;
    for (int i = 0; i < j->plan->nin; i++) {
        if (!in[i])
            continue;
        wt_tensor part = *in[i];
        if ((j->plan->own >> i & 1u) && j->plan->probe)
            j->plan->probe(j->plan->arg, i, in[i], &part);
        if (!fits(&part, &j->lim))
            return false;
    }
    return true;
}

/* Runs the piece; an output the kernel cannot take as it is (not
 * contiguous, or not at offset 0 of its binding: plan->out_layout) is
 * computed into a temporary and copied into place. */
static wt_status run_piece(const split_job *j, wt_tensor *out, const wt_tensor *const *in,
                           const int64_t *start)
{
    const wg_window_plan *p = j->plan;
    windowed_operand win[WG_WINDOW_MAX_IN + 1];
    const wt_tensor *pin[WG_WINDOW_MAX_IN];
    for (int i = 0; i < p->nin; i++)
        pin[i] = in[i] && !(p->own >> i & 1u) ? make_window(in[i], &j->lim, &win[i]) : in[i];
    wt_tensor *pout = (wt_tensor *)make_window(out, &j->lim, &win[WG_WINDOW_MAX_IN]);
    bool contiguous = wt_layout_is_contiguous(pout->ndim, pout->shape, pout->strides);
    if (p->out_layout == WG_OUT_ANY || (contiguous && (p->out_layout == WG_OUT_CONTIGUOUS ||
                                                       pout->offset == 0)))
        return p->fn(j->ctx, pin, pout, start, p->arg);
    wt_tensor *tmp = NULL;
    wt_status st = wt_tensor_alloc(j->ctx, out->dtype, out->ndim, out->shape, &tmp);
    if (st == WT_OK)
        st = p->fn(j->ctx, pin, tmp, start, p->arg);
    if (st == WT_OK)
        st = wg_op_copy_into(j->ctx, tmp, pout);
    wt_tensor_release(tmp);
    return st;
}

/* The box of out at start with extents count. */
static wt_tensor box_of(const wt_tensor *out, const int64_t *start, const int64_t *count)
{
    wt_tensor v = *out;
    for (int d = 0; d < out->ndim; d++)
        v = slice_axis(&v, d, start[d], count[d]);
    return v;
}

static wt_status split(const split_job *j, int64_t *start, int64_t *count, int d)
{
    const wg_window_plan *p = j->plan;
    wt_tensor vout = box_of(j->out, start, count), vin[WG_WINDOW_MAX_IN];
    const wt_tensor *pin[WG_WINDOW_MAX_IN];
    piece_views(j, start, &vout, vin, pin);
    if (all_fit(j, &vout, pin))
        return run_piece(j, &vout, pin, start);
    int64_t q = 1;
    for (;; d++) {
        if (d >= j->out->ndim)
            break;
        q = p->quantum[d] > 1 ? p->quantum[d] : 1;
        if (count[d] > q && !(p->keep >> d & 1u))
            break;
    }
    if (d >= j->out->ndim) {
        ((split_job *)j)->no_cut = true;
        uint64_t worst = span_bytes(&vout);
        for (int i = 0; i < p->nin; i++)
            if (pin[i] && span_bytes(pin[i]) > worst)
                worst = span_bytes(pin[i]);
        return wt_fail(WT_ERR_UNSUPPORTED,
                       "webgpu: an operand spans %llu bytes that no cut of the output brings "
                       "under one binding (%llu bytes) on this device",
                       (unsigned long long)worst, (unsigned long long)j->lim.usable);
    }
    /* The largest chunk along d (halving from the whole axis, in steps of
     * the quantum) that fits. */
    int64_t n = count[d], c = n, first = start[d];
    for (;;) {
        count[d] = c;
        vout = box_of(j->out, start, count);
        piece_views(j, start, &vout, vin, pin);
        if (c <= q || all_fit(j, &vout, pin))
            break;
        c = (c + 1) / 2;
        c = c > q ? c / q * q : q;
    }
    wt_status st = WT_OK;
    for (int64_t s = 0; s < n && st == WT_OK; s += c) {
        start[d] = first + s;
        count[d] = n - s < c ? n - s : c;
        st = split(j, start, count, d + 1);
    }
    start[d] = first;
    count[d] = n;
    return st;
}

static bool plan_small(const window_limits *lim, const wt_tensor *out, int nin,
                       const wt_tensor *const *in)
{
    bool small = out->storage->bytes <= lim->binding;
    for (int i = 0; i < nin; i++)
        small = small && (!in[i] || in[i]->storage->bytes <= lim->binding);
    return small;
}

wt_status wg_windowed_plan(wt_context *ctx, wt_tensor *out, const wt_tensor *const *in,
                           const wg_window_plan *plan)
{
    window_limits lim = limits_of(ctx);
    int64_t zero[WT_MAX_DIMS] = {0};
    if (plan->nin > WG_WINDOW_MAX_IN)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "webgpu: a windowed op takes at most %d inputs",
                       WG_WINDOW_MAX_IN);
    if (plan_small(&lim, out, plan->nin, in) && !plan->view)
        return plan->fn(ctx, in, out, zero, plan->arg);
    split_job j = {ctx, lim, plan, out, in, false};
    int64_t start[WT_MAX_DIMS] = {0}, count[WT_MAX_DIMS];
    memcpy(count, out->shape, sizeof count);
    wt_status st = split(&j, start, count, 0);
    if (st != WT_ERR_UNSUPPORTED || !j.no_cut)
        return st;
    /* No cut works for a strided input whose rows span the buffer (e.g. a
     * softmax along axis 0 sees columns): a contiguous copy of it (the
     * copy itself is cut along both axes) usually does. Pieces that ran
     * before the failure run again: out = f(in) writes the same values. */
    const wt_tensor *packed_in[WG_WINDOW_MAX_IN];
    wt_tensor *copies[WG_WINDOW_MAX_IN] = {0};
    bool any = false;
    st = WT_OK;
    for (int i = 0; i < plan->nin && st == WT_OK; i++) {
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
        j.in = packed_in;
        st = split(&j, start, count, 0);
    } else if (st == WT_OK) {
        st = WT_ERR_UNSUPPORTED; /* nothing to copy: the first failure's message stands */
    }
    for (int i = 0; i < plan->nin; i++)
        wt_tensor_release(copies[i]);
    return st;
}

wt_status wg_windowed(wt_context *ctx, wt_tensor *out, int nin, const wt_tensor *const *in,
                      const int *shared, wg_piece_fn fn, const void *arg)
{
    wg_window_plan plan = {.nin = nin, .fn = fn, .arg = arg};
    for (int i = 0; i < nin && i < WG_WINDOW_MAX_IN; i++)
        plan.follow[i] = shared[i] >= 32 ? ~0u : (1u << shared[i]) - 1u;
    return wg_windowed_plan(ctx, out, in, &plan);
}

uint64_t wg_window_usable(const wt_context *ctx) { return limits_of(ctx).usable; }

bool wg_window_fits(const wt_context *ctx, const wt_tensor *t)
{
    window_limits l = limits_of(ctx);
    return fits(t, &l);
}

const wt_tensor *wg_window_of(const wt_context *ctx, const wt_tensor *t, wg_window_buf *buf)
{
    window_limits l = limits_of(ctx);
    return make_window(t, &l, buf);
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
                                   const int64_t *start, const void *arg)
{
    (void)start;
    wt_ew_args a = *((const op_arg *)arg)->ew;
    for (int i = 0; i < a.nin; i++)
        a.in[i] = in[i];
    a.out = out;
    return wg_op_elementwise(ctx, &a);
}
static wt_status piece_where(wt_context *ctx, const wt_tensor *const *in, wt_tensor *out,
                             const int64_t *start, const void *arg)
{
    (void)start;
    return wg_op_where(ctx, in[0], in[1], in[2], ((const op_arg *)arg)->bits, out);
}
static wt_status piece_copy(wt_context *ctx, const wt_tensor *const *in, wt_tensor *out,
                            const int64_t *start, const void *arg)
{
    (void)start;
    (void)arg;
    return wg_op_copy(ctx, in[0], out);
}
static wt_status piece_cast(wt_context *ctx, const wt_tensor *const *in, wt_tensor *out,
                            const int64_t *start, const void *arg)
{
    (void)start;
    (void)arg;
    return wg_op_cast(ctx, in[0], out);
}
static wt_status piece_fill(wt_context *ctx, const wt_tensor *const *in, wt_tensor *out,
                            const int64_t *start, const void *arg)
{
    (void)start;
    (void)in;
    return wg_op_fill_bits(ctx, out, ((const op_arg *)arg)->bits);
}
static wt_status piece_rowwise(wt_context *ctx, const wt_tensor *const *in, wt_tensor *out,
                               const int64_t *start, const void *arg)
{
    (void)start;
    const op_arg *a = arg;
    return wg_op_rowwise(ctx, (wt_rowwise_op)a->op, in[0], in[1], in[2], a->eps, out);
}
static wt_status piece_reduce(wt_context *ctx, const wt_tensor *const *in, wt_tensor *out,
                              const int64_t *start, const void *arg)
{
    (void)start;
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

wt_status wg_win_rowwise(wt_context *ctx, wt_rowwise_op op, const wt_tensor *x,
                         const wt_tensor *weight, const wt_tensor *bias, float eps, wt_tensor *out)
{
    op_arg a = {.op = op, .eps = eps};
    const wt_tensor *in[3] = {x, weight, bias};
    int shared[3] = {out->ndim - 1, 0, 0};
    return wg_windowed(ctx, out, 3, in, shared, piece_rowwise, &a);
}

/* How partial results of op over parts of the reduced elements combine:
 * each part reduces with part (given the op's shift, when shifted, and a
 * divisor of 1), the stacked parts with combine (a logsumexp keeps the
 * shift: the overall maximum bounds every part's exponent), then scaled
 * divides by the op's n and root takes the square root. A mean is a sum of
 * sums, a variance the sum of the parts' squared deviations about the
 * overall mean, a norm2 the norm2 of the parts' norm2s. */
typedef struct reduce_parts {
    wt_reduce_op part, combine;
    bool shifted, scaled, root;
} reduce_parts;

static bool parts_of(wt_reduce_op op, reduce_parts *p)
{
    *p = (reduce_parts){op, op, false, false, false};
    switch (op) {
    case WT_REDUCE_SUM: case WT_REDUCE_MAX: case WT_REDUCE_MIN: case WT_REDUCE_PROD:
    case WT_REDUCE_ALL: case WT_REDUCE_ANY: case WT_REDUCE_NORM2:
        return true;
    case WT_REDUCE_MEAN:
        p->part = p->combine = WT_REDUCE_SUM;
        p->scaled = true;
        return true;
    case WT_REDUCE_NORM1:
        p->combine = WT_REDUCE_SUM;
        return true;
    case WT_REDUCE_NORMINF:
        p->combine = WT_REDUCE_MAX;
        return true;
    case WT_REDUCE_LOGSUMEXP:
        p->shifted = true;
        return true;
    case WT_REDUCE_VAR: case WT_REDUCE_STD:
        p->part = WT_REDUCE_VAR;
        p->combine = WT_REDUCE_SUM;
        p->shifted = p->scaled = true;
        p->root = op == WT_REDUCE_STD;
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
    reduce_parts rp;
    if (!parts_of(r->op, &rp) || (r->shift && !rp.shifted))
        return wt_fail(WT_ERR_UNSUPPORTED,
                       "webgpu: this reduction over more than one binding (%llu bytes) per output "
                       "element is not supported",
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
    wt_reduce_args pr = {.op = rp.part, .shift = rp.shifted ? r->shift : NULL, .n = 1};
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
    wt_reduce_args cr = {.op = rp.combine,
                         .shift = rp.combine == WT_REDUCE_LOGSUMEXP ? r->shift : NULL, .n = 1};
    wt_tensor *scaled = NULL;
    if (st == WT_OK && !rp.scaled) {
        st = wg_win_reduce(ctx, &cr, &sv, 1, out);
    } else if (st == WT_OK) {
        st = wg_win_reduce(ctx, &cr, &sv, 1, partial);
        if (st == WT_OK && rp.root)
            st = wt_tensor_alloc(ctx, out->dtype, out->ndim, out->shape, &scaled);
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
            wt_ew_args mul = {.op = WT_OP_MUL, .nin = 2, .in = {partial, &sc},
                              .out = rp.root ? scaled : out};
            st = wg_win_elementwise(ctx, &mul);
        }
        if (st == WT_OK && rp.root) {
            wt_ew_args root = {.op = WT_OP_SQRT, .nin = 1, .in = {scaled}, .out = out};
            st = wg_win_elementwise(ctx, &root);
        }
        wt_tensor_release(scale);
    }
    wt_tensor_release(scaled);
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
