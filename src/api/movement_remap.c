/* Ops that read each output element from one computed input position (one
 * backend map, wt_remap): pad, repeat / tile, flip, roll, tril / triu. */
#include "api/movement.h"
#include "autograd/tape.h"
#include "cpu/half.h" /* integer f32 -> f16 rounding, no backend state */

#include <string.h>

static void remap_identity(wt_remap *r)
{
    memset(r, 0, sizeof *r);
    for (int d = 0; d < WT_MAX_DIMS; d++) r->mode[d] = WT_REMAP_CONSTANT;
}

/* out of shape (x's ndim) = remap r of x. */
static wt_status run_remap(const char *fn, const wt_tensor *x, const int64_t *shape, const wt_remap *r,
                           wt_tensor **out)
{
    wt_context *ctx = wt_ctx_of(x);
    wt_status st = mv_need(fn, ctx, WT_NODE_REMAP);
    if (st != WT_OK) return st;
    wt_tensor *t;
    if ((st = wt_tensor_alloc(ctx, x->dtype, x->ndim, shape, &t)) != WT_OK) return st;
    if (t->numel > 0 && (st = wt_node_run(ctx, &(wt_node){.kind = WT_NODE_REMAP, .in = {x}, .out = {t}, .p.remap = *r})) != WT_OK) {
        wt_tensor_release(t);
        wt_error_prefix(fn);
        return st;
    }
    *out = t;
    return WT_OK;
}

/* The bits of value as an element of dtype. */
static wt_status fill_bits(const char *fn, wt_dtype dtype, double value, uint32_t *bits)
{
    float f = (float)value;
    uint32_t fb;
    memcpy(&fb, &f, 4);
    if (dtype == WT_F32) *bits = fb;
    else if (dtype == WT_F16) *bits = cpu_f32_bits_to_half(fb);
    else if (dtype == WT_I32) {
        if (!(value > -2147483649.0 && value < 2147483648.0))
            return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: value %g does not fit in i32", fn, value);
        *bits = (uint32_t)(int32_t)value;
    } else
        *bits = value != 0.0; /* bool: one word of 0 or 1 */
    return WT_OK;
}

wt_status wt_pad(const wt_tensor *x, int npads, const int64_t *pads, wt_pad_mode mode, double value,
                 wt_tensor **out)
{
    if (wt_grad_any(x, NULL, NULL, NULL) && npads >= 0 && npads <= 16 && (pads || npads == 0)) {
        wt_grad_call gc = {.op = WT_OP_PAD, .nin = 1, .in = {x}, .p.i = {npads}};
        for (int k = 0; k < npads; k++) gc.p.i[1 + k] = pads[k];
        gc.p.i[17] = mode;
        if (wt_grad_begin(&gc)) return wt_grad_end(&gc, wt_pad(x, npads, pads, mode, value, out), 1, out);
    }
    const char *fn = "wt_pad";
    wt_status st = wt_check_out(fn, out);
    if (st != WT_OK || (st = mv_check_input(fn, x)) != WT_OK) return st;
    if (npads < 0 || npads % 2 != 0 || npads > 2 * x->ndim || (npads > 0 && !pads))
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: %d pad sizes for %d dims (need an even count <= %d)", fn,
                       npads, x->ndim, 2 * x->ndim);
    if (mode != WT_PAD_CONSTANT && mode != WT_PAD_REFLECT && mode != WT_PAD_REPLICATE)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: unknown mode %d", fn, (int)mode);
    wt_remap r;
    remap_identity(&r);
    if ((st = fill_bits(fn, x->dtype, value, &r.fill_bits)) != WT_OK) return st;
    int64_t shape[WT_MAX_DIMS];
    memcpy(shape, x->shape, sizeof shape);
    for (int i = 0; i < npads / 2; i++) {
        int d = x->ndim - 1 - i;
        int64_t before = pads[2 * i], after = pads[2 * i + 1], n = x->shape[d];
        if (before < 0 || after < 0)
            return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: negative pad (%lld, %lld) for axis %d", fn,
                           (long long)before, (long long)after, d);
        if (before > INT64_MAX / 4 - n || after > INT64_MAX / 4 - n - before)
            return wt_fail(WT_ERR_SHAPE, "%s: padded extent of axis %d overflows", fn, d);
        if (mode == WT_PAD_REFLECT && (before >= n || after >= n) && (before | after) != 0)
            return wt_fail(WT_ERR_INVALID_ARGUMENT,
                           "%s: reflect pad (%lld, %lld) must be less than the extent %lld of axis %d", fn,
                           (long long)before, (long long)after, (long long)n, d);
        if (mode == WT_PAD_REPLICATE && n == 0 && (before | after) != 0)
            return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: replicate pad of the empty axis %d", fn, d);
        shape[d] = n + before + after;
        r.start[d] = -before;
        r.mode[d] = mode == WT_PAD_REFLECT ? WT_REMAP_REFLECT
                    : mode == WT_PAD_REPLICATE ? WT_REMAP_REPLICATE : WT_REMAP_CONSTANT;
    }
    return run_remap(fn, x, shape, &r, out);
}

static wt_status repeat_impl(const char *fn, const wt_tensor *x, int n, const int64_t *reps, bool tile,
                             wt_tensor **out)
{
    wt_status st = wt_check_out(fn, out);
    if (st != WT_OK || (st = mv_check_input(fn, x)) != WT_OK) return st;
    if (n < 0 || n > WT_MAX_DIMS || (n > 0 && !reps))
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: bad count list (n %d)", fn, n);
    if (!tile && n < x->ndim)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: %d counts for %d dims (need at least as many)", fn, n,
                       x->ndim);
    int nd = n > x->ndim ? n : x->ndim, lead = nd - x->ndim;
    int64_t xshape[WT_MAX_DIMS] = {0}, xstrides[WT_MAX_DIMS] = {0}, shape[WT_MAX_DIMS];
    for (int d = 0; d < nd; d++) {
        xshape[d] = d < lead ? 1 : x->shape[d - lead];
        xstrides[d] = d < lead ? 0 : x->strides[d - lead];
        int64_t c = d - (nd - n) >= 0 ? reps[d - (nd - n)] : 1;
        if (c < 0) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: negative count %lld", fn, (long long)c);
        if (xshape[d] > 0 && c > INT64_MAX / 4 / xshape[d])
            return wt_fail(WT_ERR_SHAPE, "%s: the repeated extent of axis %d overflows", fn, d);
        shape[d] = xshape[d] * c;
    }
    wt_tensor *v;
    if ((st = wt_tensor_view(x, nd, xshape, xstrides, x->offset, &v)) != WT_OK) return st;
    wt_remap r;
    remap_identity(&r);
    for (int d = 0; d < nd; d++) r.mode[d] = WT_REMAP_CIRCULAR;
    st = run_remap(fn, v, shape, &r, out);
    wt_tensor_release(v);
    return st;
}

wt_status wt_repeat(const wt_tensor *x, int n, const int64_t *repeats, wt_tensor **out)
{
    if (wt_grad_any(x, NULL, NULL, NULL) && n >= 0 && n <= WT_MAX_DIMS && (repeats || n == 0)) {
        wt_grad_call gc = {.op = WT_OP_REPEAT, .nin = 1, .in = {x}, .p.i = {n}};
        for (int k = 0; k < n; k++) gc.p.i[1 + k] = repeats[k];
        if (wt_grad_begin(&gc)) return wt_grad_end(&gc, wt_repeat(x, n, repeats, out), 1, out);
    }
    return repeat_impl("wt_repeat", x, n, repeats, false, out);
}

wt_status wt_tile(const wt_tensor *x, int n, const int64_t *reps, wt_tensor **out)
{
    if (wt_grad_any(x, NULL, NULL, NULL) && n >= 0 && n <= WT_MAX_DIMS && (reps || n == 0)) {
        /* Recorded as the repeat it is: counts padded with leading 1s. */
        int total = n > x->ndim ? n : x->ndim;
        wt_grad_call gc = {.op = WT_OP_TILE, .nin = 1, .in = {x}, .p.i = {total}};
        for (int k = 0; k < total; k++) gc.p.i[1 + k] = k < total - n ? 1 : reps[k - (total - n)];
        if (wt_grad_begin(&gc)) return wt_grad_end(&gc, wt_tile(x, n, reps, out), 1, out);
    }
    return repeat_impl("wt_tile", x, n, reps, true, out);
}

wt_status wt_flip(const wt_tensor *x, int naxes, const int *axes, wt_tensor **out)
{
    if (wt_grad_any(x, NULL, NULL, NULL) && naxes >= 0 && naxes <= WT_MAX_DIMS && (axes || naxes == 0)) {
        wt_grad_call gc = {.op = WT_OP_FLIP, .nin = 1, .in = {x}, .p = wt_grad_axes(naxes, axes, false, 0.0)};
        if (wt_grad_begin(&gc)) return wt_grad_end(&gc, wt_flip(x, naxes, axes, out), 1, out);
    }
    const char *fn = "wt_flip";
    wt_status st = wt_check_out(fn, out);
    if (st != WT_OK || (st = mv_check_input(fn, x)) != WT_OK) return st;
    if (naxes < 0 || naxes > WT_MAX_DIMS || (naxes > 0 && !axes))
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: bad axis list (naxes %d)", fn, naxes);
    wt_remap r;
    remap_identity(&r);
    for (int i = 0; i < naxes; i++) {
        int a;
        if (!wt_norm_axis(axes[i], x->ndim, &a))
            return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: axis %d out of range for %d dims", fn, axes[i], x->ndim);
        if (r.flip[a]) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: axis %d repeats", fn, axes[i]);
        r.flip[a] = true;
        r.start[a] = x->shape[a] - 1;
    }
    return run_remap(fn, x, x->shape, &r, out);
}

wt_status wt_roll(const wt_tensor *x, int naxes, const int64_t *shifts, const int *axes, wt_tensor **out)
{
    if (wt_grad_any(x, NULL, NULL, NULL) && naxes >= 0 && naxes <= WT_MAX_DIMS && shifts) {
        wt_grad_call gc = {.op = WT_OP_ROLL, .nin = 1, .in = {x}, .p.i = {naxes}};
        for (int k = 0; k < (naxes ? naxes : 1); k++) {
            gc.p.i[1 + k] = shifts[k];
            gc.p.i[9 + k] = naxes && axes ? axes[k] : 0;
        }
        if (wt_grad_begin(&gc)) return wt_grad_end(&gc, wt_roll(x, naxes, shifts, axes, out), 1, out);
    }
    const char *fn = "wt_roll";
    wt_status st = wt_check_out(fn, out);
    if (st != WT_OK || (st = mv_check_input(fn, x)) != WT_OK) return st;
    if (naxes < 0 || naxes > WT_MAX_DIMS || !shifts || (naxes > 0 && !axes))
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: bad shift/axis lists (naxes %d)", fn, naxes);
    if (naxes == 0) { /* the flattened tensor, shape kept */
        wt_tensor *flat, *rolled = NULL;
        int axis0 = 0;
        if ((st = wt_flatten(x, 0, -1, &flat)) != WT_OK) return st;
        st = wt_roll(flat, 1, shifts, &axis0, &rolled);
        wt_tensor_release(flat);
        if (st != WT_OK) return st;
        int64_t strides[WT_MAX_DIMS];
        wt_contiguous_strides(x->ndim, x->shape, strides);
        st = wt_tensor_view(rolled, x->ndim, x->shape, strides, 0, out);
        wt_tensor_release(rolled);
        return st;
    }
    wt_remap r;
    remap_identity(&r);
    bool seen[WT_MAX_DIMS] = {0};
    for (int i = 0; i < naxes; i++) {
        int a;
        if (!wt_norm_axis(axes[i], x->ndim, &a))
            return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: axis %d out of range for %d dims", fn, axes[i], x->ndim);
        if (seen[a]) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: axis %d repeats", fn, axes[i]);
        seen[a] = true;
        int64_t n = x->shape[a];
        r.mode[a] = WT_REMAP_CIRCULAR;
        /* out[i] = x[(i - shift) mod n] */
        r.start[a] = n > 0 ? ((-(shifts[i] % n)) % n + n) % n : 0;
    }
    return run_remap(fn, x, x->shape, &r, out);
}

static wt_status tri(const char *fn, const wt_tensor *x, int64_t diagonal, wt_tri_kind kind, wt_tensor **out)
{
    wt_status st = wt_check_out(fn, out);
    if (st != WT_OK || (st = mv_check_input(fn, x)) != WT_OK) return st;
    if (x->ndim < 2) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: needs >= 2 dims, x has %d", fn, x->ndim);
    wt_remap r;
    remap_identity(&r);
    r.tri = kind;
    /* Beyond every row/column distance the mask is all or nothing. */
    int64_t lim = x->shape[x->ndim - 1] + x->shape[x->ndim - 2] + 1;
    r.diag = diagonal > lim ? lim : diagonal < -lim ? -lim : diagonal;
    return run_remap(fn, x, x->shape, &r, out);
}

wt_status wt_tril(const wt_tensor *x, int64_t diagonal, wt_tensor **out)
{
    WT_GRAD_HOOK((x, NULL, NULL, NULL), 1, out, wt_tril(x, diagonal, out),
                 .op = WT_OP_TRIL, .nin = 1, .in = {x}, .p.i = {diagonal});
    return tri("wt_tril", x, diagonal, WT_TRI_LOWER, out);
}

wt_status wt_triu(const wt_tensor *x, int64_t diagonal, wt_tensor **out)
{
    WT_GRAD_HOOK((x, NULL, NULL, NULL), 1, out, wt_triu(x, diagonal, out),
                 .op = WT_OP_TRIU, .nin = 1, .in = {x}, .p.i = {diagonal});
    return tri("wt_triu", x, diagonal, WT_TRI_UPPER, out);
}
