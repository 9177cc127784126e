/* Rotary position embedding front-end: x seen as [A, S, C, D] (A the axes
 * before the sequence axis, C those between it and D), read in place when
 * those axes fold, else gathered once. */
#include "api/api.h"
#include "autograd/tape.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

static wt_status run(const char *fn, const wt_tensor *x, const wt_tensor *position, double theta, int64_t offset,
                     int seq_axis, wt_tensor **out)
{
    wt_context *ctx = wt_ctx_of(x);
    wt_tensor *t = NULL, *src = NULL, *vx = NULL, *vo = NULL;
    wt_status st = wt_tensor_alloc(ctx, WT_F32, x->ndim, x->shape, &t);
    if (st != WT_OK || t->numel == 0) goto done;
    if (!wt_backend_runs(ctx, WT_NODE_ROPE)) {
        st = wt_fail(WT_ERR_UNSUPPORTED, "%s: not available on the %s backend", fn, ctx->ops->name);
        goto done;
    }
    int64_t A, sa, C, sc;
    if (wt_fold_axes(x, 0, seq_axis, &A, &sa) && wt_fold_axes(x, seq_axis + 1, x->ndim - 1, &C, &sc)) {
        wt_tensor_retain((wt_tensor *)x);
        src = (wt_tensor *)x;
    } else {
        if ((st = wt_copy(x, &src)) != WT_OK) goto done;
        wt_fold_axes(src, 0, seq_axis, &A, &sa);
        wt_fold_axes(src, seq_axis + 1, src->ndim - 1, &C, &sc);
    }
    const int64_t S = x->shape[seq_axis], D = x->shape[x->ndim - 1];
    int64_t shape4[4] = {A, S, C, D};
    int64_t sx[4] = {sa, src->strides[seq_axis], sc, src->strides[src->ndim - 1]};
    int64_t so[4] = {S * C * D, C * D, D, 1};
    if ((st = wt_tensor_view(src, 4, shape4, sx, src->offset, &vx)) != WT_OK ||
        (st = wt_tensor_view(t, 4, shape4, so, 0, &vo)) != WT_OK)
        goto done;
    st = wt_node_run(ctx, &(wt_node){.kind = WT_NODE_ROPE, .in = {vx, position}, .out = {vo}, .p.rope = {theta, offset}});
done:
    wt_tensor_release(src);
    wt_tensor_release(vx);
    wt_tensor_release(vo);
    if (st != WT_OK) {
        wt_tensor_release(t);
        return st;
    }
    *out = t;
    return WT_OK;
}

void wt_rope_options_init(wt_rope_options *opts)
{
    if (!opts) return;
    memset(opts, 0, sizeof *opts);
    opts->struct_size = sizeof *opts;
    opts->theta = 10000.0;
    opts->layout = WT_ROPE_BHSD;
}

wt_status wt_rope_v2(const wt_tensor *x, const wt_rope_options *opts, wt_tensor **out)
{
    const char *fn = "wt_rope_v2";
    wt_status st = wt_check_out(fn, out);
    if (st != WT_OK || (st = wt_check_input(fn, x)) != WT_OK) return st;
    wt_rope_options o;
    wt_rope_options_init(&o);
    if (opts) {
        /* Programs built before `position` existed pass the shorter size. */
        if (opts->struct_size == sizeof *opts) o = *opts;
        else if (opts->struct_size == offsetof(wt_rope_options, position)) memcpy(&o, opts, opts->struct_size);
        else return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: options not initialised with wt_rope_options_init", fn);
        o.struct_size = sizeof o;
    }
    const double theta = o.theta;
    const int64_t offset = o.offset;
    const wt_rope_layout layout = o.layout;
    const wt_tensor *position = o.position;
    if (position) {
        if ((st = wt_check_input(fn, x)) != WT_OK || (st = wt_check_step_value(fn, "position", x, position)) != WT_OK)
            return st;
        if (wt_grad_tracks(x) && wt_grad_recording(wt_ctx_of(x)))
            return wt_fail(WT_ERR_UNSUPPORTED, "%s: a device-side position is not differentiable (x requires grad)", fn);
    }
    WT_GRAD_HOOK((x, NULL, NULL, NULL), 1, out, wt_rope_v2(x, &o, out),
                 .op = WT_OP_ROPE, .nin = 1, .in = {x}, .p.d = {theta}, .p.i = {offset, layout});
    if (layout != WT_ROPE_BHSD && layout != WT_ROPE_BSHD)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: unknown layout %d", fn, (int)layout);
    if (!(theta > 0.0) || isinf(theta))
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: theta must be finite and > 0", fn);
    if (offset < 0) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: offset %lld is negative", fn, (long long)offset);
    const int need = layout == WT_ROPE_BHSD ? 2 : 3;
    if (x->ndim < need)
        return wt_fail(WT_ERR_SHAPE, "%s: x needs at least %d dims for layout %s (got %d)", fn, need,
                       layout == WT_ROPE_BHSD ? "BHSD" : "BSHD", x->ndim);
    if (x->shape[x->ndim - 1] % 2 != 0)
        return wt_fail(WT_ERR_SHAPE, "%s: the last axis (%lld) must be even", fn, (long long)x->shape[x->ndim - 1]);
    if (offset > INT64_MAX - x->shape[x->ndim - need])
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: offset %lld overflows the positions", fn, (long long)offset);
    if (wt_has_f16(x, NULL, NULL)) {
        wt_lifted l;
        wt_tensor *r = NULL;
        if ((st = wt_lift_f16(x, NULL, NULL, &l)) == WT_OK) st = run(fn, l.in[0], position, theta, offset, x->ndim - need, &r);
        wt_lifted_release(&l);
        return wt_land(st, r, l.result, out);
    }
    return run(fn, x, position, theta, offset, x->ndim - need, out);
}

/* ---------------------------------------------------------- rope_kv_cache */

void wt_rope_kv_cache_options_init(wt_rope_kv_cache_options *opts)
{
    if (!opts) return;
    memset(opts, 0, sizeof *opts);
    opts->struct_size = sizeof *opts;
    opts->theta = 10000.0;
    opts->scaling = WT_ROPE_SCALING_NONE;
    opts->factor = 1.0;
    opts->low_freq_factor = 1.0;
    opts->high_freq_factor = 4.0;
    opts->original_max_position = 8192;
}

/* The checks of wt_rope_kv_cache (and wt_rope_kv_attention), the options
 * with their defaults in *o and the frequencies the backends key by. */
static wt_status rope_kv_check(const char *fn, const wt_tensor *kv_cache, const wt_tensor *qkv, int64_t q_heads,
                               const wt_rope_kv_cache_options *opts, wt_rope_kv_cache_options *o,
                               wt_rope_freqs *freqs)
{
    wt_status st;
    if ((st = wt_check_input(fn, kv_cache)) != WT_OK || (st = wt_check_input(fn, qkv)) != WT_OK ||
        (st = wt_check_same_context(fn, kv_cache, qkv)) != WT_OK)
        return st;
    wt_rope_kv_cache_options_init(o);
    if (opts) {
        /* Callers built before the scaling fields pass the shorter size
         * and get no scaling. */
        if (opts->struct_size == sizeof *opts) *o = *opts;
        else if (opts->struct_size == offsetof(wt_rope_kv_cache_options, scaling)) memcpy(o, opts, opts->struct_size);
        else
            return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: options not initialised with wt_rope_kv_cache_options_init",
                           fn);
        o->struct_size = sizeof *o;
    }
    if (o->position && (st = wt_check_step_value(fn, "position", qkv, o->position)) != WT_OK) return st;
    wt_context *ctx = wt_ctx_of(qkv);
    if ((wt_grad_tracks(qkv) || wt_grad_tracks(kv_cache)) && wt_grad_recording(ctx))
        return wt_fail(WT_ERR_INVALID_ARGUMENT,
                       "%s: %s requires grad and the cache write is not differentiable (do it inside "
                       "wt_no_grad_begin/end)",
                       fn, wt_grad_tracks(qkv) ? "qkv" : "kv_cache");
    if (!(o->theta > 0.0) || isinf(o->theta))
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: theta must be finite and > 0", fn);
    if (o->offset < 0) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: offset %lld is negative", fn, (long long)o->offset);
    if (o->scaling != WT_ROPE_SCALING_NONE && o->scaling != WT_ROPE_SCALING_LINEAR &&
        o->scaling != WT_ROPE_SCALING_LLAMA3)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: unknown scaling %d", fn, (int)o->scaling);
    if (o->scaling != WT_ROPE_SCALING_NONE && (!(o->factor > 0.0) || isinf(o->factor)))
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: the scaling factor must be finite and > 0", fn);
    if (o->scaling == WT_ROPE_SCALING_LLAMA3 &&
        (!(o->low_freq_factor > 0.0) || !(o->high_freq_factor > o->low_freq_factor) || isinf(o->high_freq_factor) ||
         o->original_max_position < 1))
        return wt_fail(WT_ERR_INVALID_ARGUMENT,
                       "%s: llama3 scaling needs 0 < low_freq_factor < high_freq_factor (finite) and "
                       "original_max_position >= 1",
                       fn);
    char b1[160], b2[160];
    if (qkv->ndim != 4 || kv_cache->ndim != 4)
        return wt_fail(WT_ERR_SHAPE, "%s: qkv [B, S, Hq + 2 Hkv, D] and kv_cache [B, 2 Hkv, T, D] are 4-D (got %s, %s)",
                       fn, wt_shape_str(qkv->ndim, qkv->shape, b1, sizeof b1),
                       wt_shape_str(kv_cache->ndim, kv_cache->shape, b2, sizeof b2));
    const int64_t B = qkv->shape[0], S = qkv->shape[1], D = qkv->shape[3], kv2 = kv_cache->shape[1];
    if (kv2 % 2 != 0 || q_heads < 1 || qkv->shape[2] != q_heads + kv2 || kv_cache->shape[0] != B ||
        kv_cache->shape[3] != D || D % 2 != 0 || S > kv_cache->shape[2])
        return wt_fail(WT_ERR_SHAPE,
                       "%s: qkv %s does not fit kv_cache %s with %lld query heads ([B, S, Hq + 2 Hkv, D] against "
                       "[B, 2 Hkv, T >= S, D], D even)",
                       fn, wt_shape_str(qkv->ndim, qkv->shape, b1, sizeof b1),
                       wt_shape_str(kv_cache->ndim, kv_cache->shape, b2, sizeof b2), (long long)q_heads);
    if (kv_cache->dtype != WT_F32)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: kv_cache must be f32 (got %s)", fn, wt_dtype_name(kv_cache->dtype));
    if (qkv->dtype != WT_F32 && qkv->dtype != WT_F16)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: qkv must be f32 or f16 (got %s)", fn, wt_dtype_name(qkv->dtype));
    for (int i = 0; i < 4; i++)
        if (kv_cache->shape[i] > 1 && kv_cache->strides[i] == 0)
            return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: kv_cache repeats elements (an expanded view)", fn);
    if (qkv->storage == kv_cache->storage)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: qkv and kv_cache share storage", fn);
    if (o->offset > INT64_MAX - S)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: offset %lld overflows the positions", fn, (long long)o->offset);
    /* Only the fields the scaling uses (backends key tables by them). */
    memset(freqs, 0, sizeof *freqs);
    freqs->theta = o->theta;
    freqs->scaling = o->scaling;
    if (o->scaling != WT_ROPE_SCALING_NONE) freqs->factor = o->factor;
    if (o->scaling == WT_ROPE_SCALING_LLAMA3) {
        freqs->low_freq_factor = o->low_freq_factor;
        freqs->high_freq_factor = o->high_freq_factor;
        freqs->original_max_position = o->original_max_position;
    }
    return WT_OK;
}

wt_status wt_rope_kv_cache(wt_tensor *kv_cache, const wt_tensor *qkv, int64_t q_heads,
                           const wt_rope_kv_cache_options *opts, wt_tensor **q)
{
    const char *fn = "wt_rope_kv_cache";
    wt_rope_kv_cache_options o;
    wt_rope_freqs freqs;
    wt_status st = wt_check_out(fn, q);
    if (st != WT_OK || (st = rope_kv_check(fn, kv_cache, qkv, q_heads, opts, &o, &freqs)) != WT_OK) return st;
    wt_context *ctx = wt_ctx_of(qkv);
    if (!wt_backend_runs(ctx, WT_NODE_ROPE_KV_CACHE))
        return wt_fail(WT_ERR_UNSUPPORTED, "%s: not available on the %s backend", fn, ctx->ops->name);
    const int64_t qshape[4] = {qkv->shape[0], q_heads, qkv->shape[1], qkv->shape[3]};
    wt_tensor *t = NULL;
    if ((st = wt_tensor_alloc(ctx, WT_F32, 4, qshape, &t)) != WT_OK) return st;
    if (t->numel > 0)
        st = wt_node_run(ctx, &(wt_node){.kind = WT_NODE_ROPE_KV_CACHE, .in = {qkv, o.position}, .out = {t, kv_cache},
                                         .p.rope_kv = {freqs, o.offset, q_heads}});
    if (st != WT_OK) {
        wt_tensor_release(t);
        return st;
    }
    *q = t;
    return WT_OK;
}

/* ------------------------------------------------------ rope_kv_attention */

/* The two calls wt_rope_kv_attention stands for. */
static wt_status rope_kv_attention_composed(wt_tensor *kv_cache, const wt_tensor *qkv, int64_t q_heads,
                                            const wt_rope_kv_cache_options *rope, const wt_attention_options *attn,
                                            wt_tensor **out)
{
    const int64_t kv = kv_cache->shape[1] / 2;
    wt_tensor *q = NULL, *k = NULL, *v = NULL;
    wt_status st = wt_rope_kv_cache(kv_cache, qkv, q_heads, rope, &q);
    if (st == WT_OK) st = wt_slice(kv_cache, 1, 0, kv, 1, &k);
    if (st == WT_OK) st = wt_slice(kv_cache, 1, kv, 2 * kv, 1, &v);
    if (st == WT_OK) st = wt_scaled_dot_product_attention_v2(q, k, v, NULL, attn, out);
    wt_tensor_release(q);
    wt_tensor_release(k);
    wt_tensor_release(v);
    return st;
}

wt_status wt_rope_kv_attention(wt_tensor *kv_cache, const wt_tensor *qkv, int64_t q_heads,
                               const wt_rope_kv_cache_options *rope, const wt_attention_options *attn,
                               wt_tensor **out)
{
    const char *fn = "wt_rope_kv_attention";
    wt_rope_kv_cache_options o;
    wt_rope_freqs freqs;
    wt_status st = wt_check_out(fn, out);
    if (st != WT_OK || (st = rope_kv_check(fn, kv_cache, qkv, q_heads, rope, &o, &freqs)) != WT_OK) return st;
    wt_attention_options a;
    wt_attention_options_init(&a);
    if (attn) {
        /* Programs built before `kv_length` existed pass the shorter size. */
        if (attn->struct_size == sizeof *attn) a = *attn;
        else if (attn->struct_size == offsetof(wt_attention_options, kv_length)) memcpy(&a, attn, attn->struct_size);
        else return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: options not initialised with wt_attention_options_init", fn);
        a.struct_size = sizeof a;
    }
    if (!isfinite(a.scale) || !isfinite((float)a.scale))
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: scale must be finite (in f32)", fn);
    if (a.kv_length && (st = wt_check_step_value(fn, "kv_length", qkv, a.kv_length)) != WT_OK) return st;
    wt_context *ctx = wt_ctx_of(qkv);
    const char *knob = wt_knob_text(WT_KNOB_ROPE_KV_ATTENTION);
    const int64_t B = qkv->shape[0], S = qkv->shape[1], D = qkv->shape[3];
    const int64_t kv = kv_cache->shape[1] / 2;
    /* The composition's checks and errors stand for the rest. */
    if ((knob && strcmp(knob, "0") == 0) || !wt_backend_runs(ctx, WT_NODE_ROPE_KV_ATTENTION) || B * S * D == 0 ||
        kv == 0 || q_heads % kv != 0 ||
        (ctx->ops->rope_kv_attention_fits &&
         !ctx->ops->rope_kv_attention_fits(ctx, qkv, kv_cache, o.position, a.kv_length, o.offset)))
        return rope_kv_attention_composed(kv_cache, qkv, q_heads, &o, &a, out);
    const float scale = a.scale != 0.0 ? (float)a.scale : (float)(1.0 / sqrt((double)D));
    const int64_t oshape[4] = {B, q_heads, S, D};
    wt_tensor *t = NULL;
    if ((st = wt_tensor_alloc(ctx, WT_F32, 4, oshape, &t)) != WT_OK) return st;
    st = wt_node_run(ctx, &(wt_node){.kind = WT_NODE_ROPE_KV_ATTENTION, .in = {qkv, o.position, a.kv_length},
                                     .out = {t, kv_cache}, .p.rope_kv = {freqs, o.offset, q_heads, a.causal, scale}});
    if (st != WT_OK) {
        wt_tensor_release(t);
        return st;
    }
    *out = t;
    return WT_OK;
}
