/* Scaled dot-product attention front-end: checks, grouped-query shapes,
 * the mask broadcast to [B, Hq, Sq, Skv] as a view, and the f16 rule; the
 * backend runs one fused kernel. */
#include "api/api.h"
#include "autograd/tape.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

/* x as a 4-D view: itself, or [1, H, S, D] for a 3-D x. */
static wt_status as_4d(const wt_tensor *x, wt_tensor **out)
{
    int64_t shape[4], strides[4];
    int lead = 4 - x->ndim;
    for (int i = 0; i < 4; i++) {
        shape[i] = i < lead ? 1 : x->shape[i - lead];
        strides[i] = i < lead ? 0 : x->strides[i - lead];
    }
    return wt_tensor_view(x, 4, shape, strides, x->offset, out);
}

/* The mask broadcast to shape (NumPy rules) as a view with zero strides. */
static wt_status expand_mask(const char *fn, const wt_tensor *m, const int64_t *shape, wt_tensor **out)
{
    char b1[160], b2[160];
    int64_t strides[4];
    if (m->ndim > 4)
        return wt_fail(WT_ERR_SHAPE, "%s: mask %s has more than 4 dims", fn,
                       wt_shape_str(m->ndim, m->shape, b1, sizeof b1));
    int lead = 4 - m->ndim;
    for (int i = 0; i < 4; i++) {
        int64_t s = i < lead ? 1 : m->shape[i - lead];
        if (s != shape[i] && s != 1)
            return wt_fail(WT_ERR_SHAPE, "%s: mask %s does not broadcast to the scores %s", fn,
                           wt_shape_str(m->ndim, m->shape, b1, sizeof b1), wt_shape_str(4, shape, b2, sizeof b2));
        strides[i] = (i < lead || s == 1) ? 0 : m->strides[i - lead];
    }
    return wt_tensor_view(m, 4, shape, strides, m->offset, out);
}

int wt_attention_heads_layout(const wt_tensor *t)
{
    if (t->ndim != 4 || t->offset != 0) return -1;
    const int64_t H = t->shape[1], S = t->shape[2], D = t->shape[3];
    const int64_t dense[4] = {H * S * D, S * D, D, 1}, heads_inner[4] = {S * H * D, D, H * D, 1};
    bool is_dense = true, is_inner = true;
    for (int i = 0; i < 4; i++) {
        if (t->shape[i] == 1) continue;
        is_dense = is_dense && t->strides[i] == dense[i];
        is_inner = is_inner && t->strides[i] == heads_inner[i];
    }
    return is_dense ? 0 : is_inner ? 1 : -1;
}

bool wt_attention_heads_rows(const wt_tensor *t, int64_t *pitch)
{
    if (t->ndim != 4 || t->offset < 0) return false;
    const int64_t B = t->shape[0], H = t->shape[1], S = t->shape[2], D = t->shape[3];
    /* The pitch from the rows' stride, or the batches' where one row a batch. */
    const int64_t P = S > 1 ? t->strides[2] : B > 1 ? t->strides[0] : H * D;
    if (P < H * D || (B > 1 && t->strides[0] != S * P) || (H > 1 && t->strides[1] != D) ||
        (D > 1 && t->strides[3] != 1))
        return false;
    *pitch = P;
    return true;
}

/* A new tensor of shape [B, H, S, D] whose storage is laid out
 * [B, S, H, D] (wt_attention_heads_layout 1). */
static wt_status alloc_heads_inner(wt_context *ctx, wt_dtype dtype, const int64_t *shape, wt_tensor **out)
{
    const int64_t B = shape[0], H = shape[1], S = shape[2], D = shape[3];
    wt_tensor *base = NULL;
    wt_status st = wt_tensor_alloc(ctx, dtype, 4, (const int64_t[]){B, S, H, D}, &base);
    if (st != WT_OK) return st;
    st = wt_tensor_view(base, 4, shape, (const int64_t[]){S * H * D, D, H * D, 1}, 0, out);
    wt_tensor_release(base);
    return st;
}

/* WT_ATTN_HEAD_VIEWS=0: dense [B, H, S, D] copies and results, as before
 * the kernels read heads laid out [B, S, H, D]. */
static bool head_views(void)
{
    const char *knob = wt_knob_text(WT_KNOB_ATTN_HEAD_VIEWS);
    return !(knob && strcmp(knob, "0") == 0);
}

static bool mask_dtype_ok(wt_dtype d) { return d == WT_BOOL || d == WT_F32 || d == WT_F16; }

static wt_status check_shapes(const char *fn, const wt_tensor *q, const wt_tensor *k, const wt_tensor *v)
{
    char b1[160], b2[160], b3[160];
    if ((q->ndim != 3 && q->ndim != 4) || k->ndim != q->ndim || v->ndim != q->ndim)
        return wt_fail(WT_ERR_SHAPE, "%s: q, k, v must all be 4-D [B, H, S, D] (or all 3-D [H, S, D]); got %s, %s, %s",
                       fn, wt_shape_str(q->ndim, q->shape, b1, sizeof b1),
                       wt_shape_str(k->ndim, k->shape, b2, sizeof b2), wt_shape_str(v->ndim, v->shape, b3, sizeof b3));
    const int o = q->ndim - 3; /* index of the heads axis */
    bool ok = true;
    const char *what = "";
    if (o == 1 && (k->shape[0] != q->shape[0] || v->shape[0] != q->shape[0]))
        ok = false, what = "batch sizes differ";
    else if (k->shape[o] != v->shape[o])
        ok = false, what = "k and v have different head counts";
    else if (k->shape[o] == 0 ? q->shape[o] != 0 : q->shape[o] % k->shape[o] != 0)
        ok = false, what = "k/v heads must divide q heads";
    else if (k->shape[o + 1] != v->shape[o + 1])
        ok = false, what = "k and v have different sequence lengths";
    else if (k->shape[o + 2] != q->shape[o + 2])
        ok = false, what = "q and k have different head dims";
    if (!ok)
        return wt_fail(WT_ERR_SHAPE, "%s: %s: q %s, k %s, v %s", fn, what,
                       wt_shape_str(q->ndim, q->shape, b1, sizeof b1),
                       wt_shape_str(k->ndim, k->shape, b2, sizeof b2), wt_shape_str(v->ndim, v->shape, b3, sizeof b3));
    return WT_OK;
}

/* lse: NULL, or where the rows' log-sum-exp goes (f32 [B, Hq, Sq]) when
 * the backend's kernel for this call writes it (left NULL otherwise). */
static wt_status run(const char *fn, const wt_tensor *q, const wt_tensor *k, const wt_tensor *v,
                     const wt_tensor *mask, const wt_tensor *kv_length, bool causal, float scale, wt_tensor **out,
                     wt_tensor **lse)
{
    wt_context *ctx = wt_ctx_of(q);
    wt_tensor *q4 = NULL, *k4 = NULL, *v4 = NULL, *m4 = NULL, *t = NULL, *o4 = NULL;
    const int o = q->ndim - 3;
    const int64_t Hq = q->shape[o], Sq = q->shape[o + 1], D = q->shape[o + 2];
    const int64_t Skv = k->shape[o + 1], Dv = v->shape[o + 2];
    int64_t oshape[4];
    memcpy(oshape, q->shape, sizeof(int64_t) * (size_t)q->ndim);
    oshape[q->ndim - 1] = Dv;
    wt_status st = wt_tensor_alloc(ctx, q->dtype, q->ndim, oshape, &t);
    if (st != WT_OK) return st;
    if (t->numel == 0) goto done;
    if (q->dtype != WT_F32 && (Skv == 0 || !wt_backend_runs(ctx, WT_NODE_ATTENTION))) {
        st = WT_ERR_UNSUPPORTED; /* the caller reruns it in f32 */
        goto done;
    }
    if (Skv == 0) { /* no key for any query: PyTorch's zeros */
        st = wt_fill_f32(ctx, t, 0.0f);
        goto done;
    }
    if (!wt_backend_runs(ctx, WT_NODE_ATTENTION)) {
        st = wt_fail(WT_ERR_UNSUPPORTED, "%s: not available on the %s backend", fn, ctx->ops->name);
        goto done;
    }
    if ((st = as_4d(q, &q4)) != WT_OK || (st = as_4d(k, &k4)) != WT_OK || (st = as_4d(v, &v4)) != WT_OK ||
        (st = as_4d(t, &o4)) != WT_OK)
        goto done;
    int64_t sshape[4] = {q4->shape[0], Hq, Sq, Skv};
    if (mask && (st = expand_mask(fn, mask, sshape, &m4)) != WT_OK) goto done;
    wt_attention_args a = {
        .q = q4, .k = k4, .v = v4, .mask = m4, .kv_length = kv_length, .mask_is_bool = mask && mask->dtype != WT_F32,
        .causal = causal, .scale = scale != 0.0f ? scale : (D > 0 ? (float)(1.0 / sqrt((double)D)) : 1.0f),
        .out = o4,
    };
    /* q the [B, H, S, D] view of [B, S, H, D] (heads split from a linear
     * layer's output, alone or beside k and v in its rows): the result
     * laid out [B, S, H, D] where the backend writes it so, and merging
     * the heads back is a view, not a copy. */
    int64_t q_pitch = 0;
    if (q->ndim == 4 && head_views() && wt_attention_heads_layout(q) != 0 && wt_attention_heads_rows(q, &q_pitch) &&
        ctx->ops->attention_out_heads_inner) {
        wt_tensor *t2 = NULL;
        if ((st = alloc_heads_inner(ctx, q->dtype, oshape, &t2)) != WT_OK) goto done;
        a.out = t2;
        if (ctx->ops->attention_out_heads_inner(ctx, &a)) {
            wt_tensor_release(t);
            wt_tensor_release(o4);
            t = t2;
            o4 = NULL;
            if ((st = as_4d(t, &o4)) != WT_OK) goto done;
        } else {
            wt_tensor_release(t2);
        }
        a.out = o4;
    }
    if (lse && !m4 && !kv_length && q->dtype == WT_F32 && ctx->ops->attention_writes_lse &&
        ctx->ops->attention_writes_lse(ctx, &a)) {
        if ((st = wt_tensor_alloc(ctx, WT_F32, 3, q4->shape, lse)) != WT_OK) goto done;
        a.lse = *lse;
    }
    st = wt_node_run(ctx, &(wt_node){.kind = WT_NODE_ATTENTION, .in = {a.q, a.k, a.v, a.mask, a.kv_length},
                                     .out = {a.out, a.lse}, .p.attention = {a.mask_is_bool, a.causal, a.scale}});
done:
    wt_tensor_release(q4);
    wt_tensor_release(k4);
    wt_tensor_release(v4);
    wt_tensor_release(m4);
    wt_tensor_release(o4);
    if (st != WT_OK) {
        wt_tensor_release(t);
        if (lse) {
            wt_tensor_release(*lse);
            *lse = NULL;
        }
        return st;
    }
    *out = t;
    return WT_OK;
}

void wt_attention_options_init(wt_attention_options *opts)
{
    if (!opts) return;
    memset(opts, 0, sizeof *opts);
    opts->struct_size = sizeof *opts;
}

static wt_status attention(const char *fn, const wt_tensor *q, const wt_tensor *k, const wt_tensor *v,
                           const wt_tensor *mask, const wt_tensor *kv_length, bool causal, float scale, wt_tensor **out,
                           wt_tensor **lse)
{
    if (kv_length && q && (wt_grad_tracks(q) || wt_grad_tracks(k) || wt_grad_tracks(v)) &&
        wt_grad_recording(wt_ctx_of(q)))
        return wt_fail(WT_ERR_UNSUPPORTED, "%s: kv_length is not differentiable (q, k or v requires grad)", fn);
    /* Recorded: the node keeps the rows' log-sum-exp where the kernel
     * writes it (extra[0]), so that the fused backward need not compute
     * the softmax statistics again; a call not recorded never makes it. */
    if (wt_grad_any(q, k, v, mask)) {
        wt_grad_call gc = {.op = WT_OP_SCALED_DOT_PRODUCT_ATTENTION, .nin = 4, .in = {q, k, v, mask},
                           .p.b = {causal}, .p.d = {scale}};
        if (wt_grad_begin(&gc)) {
            const char *knob = wt_knob_text(WT_KNOB_ATTN_SAVE_LSE);
            const bool keep = !mask && !(knob && strcmp(knob, "0") == 0);
            wt_tensor *saved_lse = NULL;
            wt_status st = attention(fn, q, k, v, mask, kv_length, causal, scale, out, keep ? &saved_lse : NULL);
            if (st == WT_OK && saved_lse) {
                wt_tensor_retain(saved_lse);
                gc.extra[0] = saved_lse;
            }
            st = wt_grad_end(&gc, st, 1, out);
            /* Inside a scope the scope owns the reference the call made
             * (as wt_grad_end_indexed's indices); after a failure it goes
             * now, not at the scope's end. */
            if (saved_lse && (st != WT_OK || !gc.ctx->scope)) wt_tensor_release(saved_lse);
            return st;
        }
    }
    wt_status st = wt_check_out(fn, out);
    if (st != WT_OK || (st = wt_check_input(fn, q)) != WT_OK || (st = wt_check_input(fn, k)) != WT_OK ||
        (st = wt_check_input(fn, v)) != WT_OK || (st = wt_check_same_context(fn, q, k)) != WT_OK ||
        (st = wt_check_same_context(fn, q, v)) != WT_OK)
        return st;
    if (mask) {
        if (!mask_dtype_ok(mask->dtype))
            return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: mask must be f32, f16 or bool (got %s)", fn,
                           wt_dtype_name(mask->dtype));
        if ((st = wt_check_same_context(fn, q, mask)) != WT_OK) return st;
    }
    if (kv_length && (st = wt_check_step_value(fn, "kv_length", q, kv_length)) != WT_OK) return st;
    if (!isfinite(scale)) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: scale must be finite", fn);
    if ((st = check_shapes(fn, q, k, v)) != WT_OK) return st;
    if (mask && mask->dtype == WT_F16) {
        wt_tensor *m32 = NULL;
        if ((st = wt_cast(mask, WT_F32, &m32)) != WT_OK) return st;
        st = attention(fn, q, k, v, m32, kv_length, causal, scale, out, NULL);
        wt_tensor_release(m32);
        return st;
    }
    /* f16 throughout: the backend's own kernel where it has one (its
     * WT_ERR_UNSUPPORTED: the work again in f32). */
    if (q->dtype == WT_F16 && k->dtype == WT_F16 && v->dtype == WT_F16 &&
        (st = run(fn, q, k, v, mask, kv_length, causal, scale, out, NULL)) != WT_ERR_UNSUPPORTED)
        return st;
    if (wt_has_f16(q, k, v)) {
        wt_lifted l;
        wt_tensor *r = NULL;
        if ((st = wt_lift_f16(q, k, v, &l)) == WT_OK)
            st = run(fn, l.in[0], l.in[1], l.in[2], mask, kv_length, causal, scale, &r, NULL);
        wt_lifted_release(&l);
        return wt_land(st, r, l.result, out);
    }
    return run(fn, q, k, v, mask, kv_length, causal, scale, out, lse);
}

wt_status wt_scaled_dot_product_attention_v2(const wt_tensor *q, const wt_tensor *k, const wt_tensor *v,
                                             const wt_tensor *mask, const wt_attention_options *opts,
                                             wt_tensor **out)
{
    const char *fn = "wt_scaled_dot_product_attention_v2";
    wt_status st = wt_check_out(fn, out);
    if (st != WT_OK) return st;
    wt_attention_options o;
    wt_attention_options_init(&o);
    if (opts) {
        /* Programs built before `kv_length` existed pass the shorter size. */
        if (opts->struct_size == sizeof *opts) o = *opts;
        else if (opts->struct_size == offsetof(wt_attention_options, kv_length)) memcpy(&o, opts, opts->struct_size);
        else return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: options not initialised with wt_attention_options_init", fn);
        o.struct_size = sizeof o;
    }
    /* The kernels scale in f32: a scale past the f32 range is refused, not turned to inf. */
    if (!isfinite(o.scale) || !isfinite((float)o.scale))
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: scale must be finite (in f32)", fn);
    return attention(fn, q, k, v, mask, o.kv_length, o.causal, (float)o.scale, out, NULL);
}

/* One past the last element a 4-D view reaches (strides >= 0). */
static int64_t view_end(const wt_tensor *t)
{
    int64_t end = t->offset + 1;
    for (int i = 0; i < 4; i++) end += (t->shape[i] - 1) * t->strides[i];
    return end;
}

/* q, k and v as the heads of one tensor's rows (one linear layer's output
 * [B, S, (Hq + 2 Hkv) D]): one storage, rows of one pitch from one first
 * row, the heads' columns side by side without overlap. */
static bool heads_of_one_tensor(const wt_tensor *const *t)
{
    int64_t pitch[3], lo[3], hi[3];
    for (int i = 0; i < 3; i++) {
        if (t[i]->storage != t[0]->storage || !wt_attention_heads_rows(t[i], &pitch[i]) || pitch[i] != pitch[0] ||
            t[i]->offset / pitch[0] != t[0]->offset / pitch[0] || t[i]->shape[0] != t[0]->shape[0] ||
            t[i]->shape[2] != t[0]->shape[2])
            return false;
        lo[i] = t[i]->offset % pitch[0];
        hi[i] = lo[i] + t[i]->shape[1] * t[i]->shape[3];
        if (hi[i] > pitch[0]) return false;
    }
    for (int i = 0; i < 3; i++)
        for (int j = i + 1; j < 3; j++)
            if (lo[i] < hi[j] && lo[j] < hi[i]) return false;
    return true;
}

/* The gradients of q, k, v (src[0..2]) laid out as their operands, as the
 * backend writes them where it reads views: each a view with its operand's
 * strides and offset of a new storage reaching as far; operands that are
 * the heads of one tensor (heads_of_one_tensor) share one new storage, so
 * that their gradients are the heads of one tensor too and the split
 * before them joins them as a view (autograd's split rule), no copy. */
static wt_status alloc_grads_like(wt_context *ctx, const wt_tensor *const *src, wt_tensor **grads)
{
    const bool shared = heads_of_one_tensor(src);
    wt_tensor *base[3] = {0};
    wt_status st = WT_OK;
    for (int i = 0; i < 3 && st == WT_OK; i++) {
        int64_t end = view_end(src[i]);
        if (shared) {
            if (i > 0) {
                base[i] = base[0];
                wt_tensor_retain(base[0]);
                continue;
            }
            for (int j = 1; j < 3; j++) end = view_end(src[j]) > end ? view_end(src[j]) : end;
        }
        st = wt_tensor_alloc(ctx, WT_F32, 1, &end, &base[i]);
    }
    for (int i = 0; i < 3 && st == WT_OK; i++)
        st = wt_tensor_view(base[i], 4, src[i]->shape, src[i]->strides, src[i]->offset, &grads[i]);
    for (int i = 0; i < 3; i++) wt_tensor_release(base[i]);
    return st;
}

wt_status wt_attention_backward_fused(const wt_tensor *q, const wt_tensor *k, const wt_tensor *v,
                                      const wt_tensor *dout, const wt_tensor *out, const wt_tensor *lse,
                                      bool causal, float scale, wt_tensor **dq, wt_tensor **dk, wt_tensor **dv)
{
    *dq = *dk = *dv = NULL;
    wt_context *ctx = wt_ctx_of(q);
    const char *knob = wt_knob_text(WT_KNOB_ATTN_BACKWARD);
    if (!wt_backend_runs(ctx, WT_NODE_ATTENTION_BACKWARD) || q->numel == 0 || k->numel == 0 || v->numel == 0)
        return WT_ERR_UNSUPPORTED;
    if (knob && strcmp(knob, "composed") == 0) return WT_ERR_UNSUPPORTED;
    /* Automatic: the backend says which way is faster on these shapes. */
    if ((!knob || strcmp(knob, "fused") != 0) && ctx->ops->attention_backward_preferred &&
        !ctx->ops->attention_backward_preferred(ctx, q, k, v, causal))
        return WT_ERR_UNSUPPORTED;
    if (!out) return WT_ERR_UNSUPPORTED;
    const wt_tensor *src[5] = {q, k, v, dout, out};
    wt_tensor *in[5] = {0}, *grads[3] = {0};
    wt_status st = WT_OK;
    /* Operands as they are where the backend reads them so (the heads of
     * linear layers' outputs, no copies), the gradients then in the
     * layouts of q and k (their transposes back to the linear layers are
     * views); dense [B, H, S, D] copies otherwise. */
    bool views = head_views() && ctx->ops->attention_backward_views &&
                 ctx->ops->attention_backward_views(ctx, q, k, v, dout, out);
    for (int i = 0; i < 5 && st == WT_OK; i++) {
        if (views) in[i] = (wt_tensor *)src[i], wt_tensor_retain(in[i]);
        else st = src[i]->dtype == WT_F32 ? wt_contiguous(src[i], &in[i]) : wt_cast(src[i], WT_F32, &in[i]);
    }
    if (views) st = alloc_grads_like(ctx, src, grads);
    for (int i = 0; i < 3 && st == WT_OK && !views; i++) st = wt_tensor_alloc(ctx, WT_F32, 4, src[i]->shape, &grads[i]);
    if (st == WT_OK)
        st = wt_node_run(ctx, &(wt_node){.kind = WT_NODE_ATTENTION_BACKWARD,
                                         .in = {in[0], in[1], in[2], in[3], in[4], lse},
                                         .out = {grads[0], grads[1], grads[2]}, .p.attention = {false, causal, scale}});
    for (int i = 0; i < 5; i++) wt_tensor_release(in[i]);
    if (st != WT_OK) {
        for (int i = 0; i < 3; i++) wt_tensor_release(grads[i]);
        return st;
    }
    *dq = grads[0], *dk = grads[1], *dv = grads[2];
    return WT_OK;
}
