/* wt_cast, and the f16 rule every other op follows: f16 inputs are cast to
 * f32, the f32 op runs, and the result is cast back to f16 when every input
 * was f16 (mixed f16/f32 inputs give f32, like PyTorch's promotion). One
 * place for it keeps the backends f32-only apart from their cast kernel. */
#include "api/api.h"
#include "autograd/tape.h"

wt_status wt_cast(const wt_tensor *x, wt_dtype dtype, wt_tensor **out)
{
    WT_GRAD_HOOK((x, NULL, NULL, NULL), 1, out, wt_cast(x, dtype, out),
                 .op = WT_OP_CAST, .nin = 1, .in = {x}, .nondiff = dtype != WT_F32 && dtype != WT_F16);
    const char *fn = "wt_cast";
    wt_status st = wt_check_out(fn, out);
    if (st != WT_OK || (st = wt_check_tensor(fn, x)) != WT_OK) return st;
    if (wt_dtype_size(dtype) == 0)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: unknown dtype %d", fn, (int)dtype);
    wt_context *ctx = wt_ctx_of(x);
    if (!wt_backend_runs(ctx, WT_NODE_CAST))
        return wt_fail(WT_ERR_UNSUPPORTED, "%s: not available on the %s backend", fn, ctx->ops->name);
    wt_tensor *t;
    if ((st = wt_tensor_alloc(ctx, dtype, x->ndim, x->shape, &t)) != WT_OK) return st;
    if (t->numel > 0 && (st = wt_node_run(ctx, &(wt_node){.kind = WT_NODE_CAST, .in = {x}, .out = {t}})) != WT_OK) {
        wt_tensor_release(t);
        return st;
    }
    *out = t;
    return WT_OK;
}

bool wt_has_f16(const wt_tensor *a, const wt_tensor *b, const wt_tensor *c)
{
    return (a && a->dtype == WT_F16) || (b && b->dtype == WT_F16) || (c && c->dtype == WT_F16);
}

/* x itself (one more reference) unless it is f16; NULL stays NULL. */
static wt_status as_f32(const wt_tensor *x, wt_tensor **out)
{
    *out = NULL;
    if (!x) return WT_OK;
    if (x->dtype != WT_F16) {
        wt_tensor_retain((wt_tensor *)x);
        *out = (wt_tensor *)x;
        return WT_OK;
    }
    return wt_cast(x, WT_F32, out);
}

wt_status wt_lift_f16(const wt_tensor *a, const wt_tensor *b, const wt_tensor *c, wt_lifted *l)
{
    const wt_tensor *in[3] = {a, b, c};
    l->result = WT_F16;
    for (int i = 0; i < 3; i++) {
        l->in[i] = NULL;
        if (in[i] && in[i]->dtype != WT_F16) l->result = WT_F32;
    }
    for (int i = 0; i < 3; i++) {
        wt_status st = as_f32(in[i], &l->in[i]);
        if (st != WT_OK) {
            wt_lifted_release(l);
            return st;
        }
    }
    return WT_OK;
}

void wt_lifted_release(wt_lifted *l)
{
    for (int i = 0; i < 3; i++) {
        wt_tensor_release(l->in[i]);
        l->in[i] = NULL;
    }
}

wt_status wt_land(wt_status st, wt_tensor *r, wt_dtype dtype, wt_tensor **out)
{
    if (st != WT_OK || dtype == WT_F32) {
        if (st != WT_OK) wt_tensor_release(r);
        else *out = r;
        return st;
    }
    st = wt_cast(r, dtype, out);
    wt_tensor_release(r);
    return st;
}
