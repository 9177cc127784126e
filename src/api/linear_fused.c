/* linear_fused: a linear layer with what a transformer puts around it in
 * one op - an RMSNorm before it, a SwiGLU or GELU of its input, a residual
 * added after it - for dense weights (wt_linear_fused) and quantised ones
 * (wt_linear_quant_fused). Apart from linear.c and quant.c because it
 * builds on both: its composition calls wt_linear or wt_linear_quant. */
#include "api/api.h"
#include "autograd/tape.h"

#include <math.h>
#include <string.h>

/* ------------------------------------------------------------ linear_fused
 * A linear layer with an RMSNorm before it and a SwiGLU and a residual add
 * after it: one node (LINEAR_FUSED) for the few rows of a decode step,
 * else the composition of the public ops, which is also what autograd
 * records. */

/* The fused kernels take up to this many rows of x; past it the weight
 * would be read once per row (a GEMM's tiles do better). */
enum { LINEAR_FUSED_MAX_ROWS = 16 };

void wt_linear_fused_options_init(wt_linear_fused_options *opts)
{
    if (!opts) return;
    memset(opts, 0, sizeof *opts);
    opts->struct_size = sizeof *opts;
    opts->norm_eps = 1e-6;
}

/* The op as its parts: every step a public op (the product
 * wt_linear_quant's when qtype is not NULL). */
wt_status wt_linear_fused_composed(const wt_tensor *x, const wt_tensor *w, const wt_quant_type *qtype,
                                   const wt_tensor *bias, const wt_linear_fused_options *o, wt_dtype result,
                                   wt_tensor **out)
{
    wt_tensor *h = NULL, *y = NULL, *g = NULL, *u = NULL, *sg = NULL, *p = NULL, *r = NULL;
    wt_tensor *ga = NULL;
    wt_status st = WT_OK;
    if (o->rms_norm) st = wt_rms_norm(x, 1, o->norm_weight, o->norm_eps, &h);
    if (st == WT_OK && o->input_gelu) st = wt_gelu(h ? h : x, &ga);
    const wt_tensor *in = ga ? ga : h ? h : x;
    if (st == WT_OK) st = qtype ? wt_linear_quant(in, w, *qtype, bias, &y) : wt_linear(in, w, bias, &y);
    if (st == WT_OK && o->swiglu) {
        const int64_t n = w->shape[0] / 2;
        const int last = y->ndim - 1;
        if ((st = wt_slice(y, last, 0, n, 1, &g)) == WT_OK && (st = wt_slice(y, last, n, 2 * n, 1, &u)) == WT_OK &&
            (st = wt_silu(g, &sg)) == WT_OK)
            st = wt_mul(sg, u, &p);
    }
    const wt_tensor *res = p ? p : y;
    if (st == WT_OK && o->residual) st = wt_add(res, o->residual, &r);
    const wt_tensor *v = r ? r : res;
    if (st == WT_OK && v->dtype != result) {
        st = wt_cast(v, result, out);
    } else if (st == WT_OK) {
        *out = (wt_tensor *)v;
        wt_tensor_retain(*out);
    }
    wt_tensor_release(h);
    wt_tensor_release(ga);
    wt_tensor_release(y);
    wt_tensor_release(g);
    wt_tensor_release(u);
    wt_tensor_release(sg);
    wt_tensor_release(p);
    wt_tensor_release(r);
    return st;
}

static bool float_dtype(const wt_tensor *t) { return !t || t->dtype == WT_F32 || t->dtype == WT_F16; }

static bool f32_or_absent(const wt_tensor *t) { return !t || t->dtype == WT_F32; }

/* The calls that run as one product of any number of rows (and record as
 * one op, LINEAR_FUSED, under autograd): no norm and no SwiGLU, f32. */
static bool rows_path(const wt_tensor *x, const wt_tensor *w, const wt_tensor *bias,
                      const wt_linear_fused_options *o, wt_dtype result)
{
    return !o->rms_norm && !o->swiglu && result == WT_F32 && f32_or_absent(x) && f32_or_absent(w) &&
           f32_or_absent(bias) && f32_or_absent(o->residual);
}

/* rows_path's calls: input_gelu's result into *act_in when asked for (the
 * reference its making gave, which an open scope owns: the op's saved
 * tensor for w's gradient; NULL without input_gelu), the residual
 * added in the product's stores where the backend has that (else by
 * wt_add), and the bias as wt_linear adds it. */
static wt_status linear_rows(const wt_tensor *x, const wt_tensor *w, const wt_tensor *bias,
                             const wt_linear_fused_options *o, wt_tensor **out, wt_tensor **act_in)
{
    const int64_t N = w->shape[0], K = w->shape[1];
    wt_tensor *ga = NULL, *y = NULL, *in2 = NULL, *wt = NULL, *y2 = NULL;
    wt_status st = o->input_gelu ? wt_gelu(x, &ga) : WT_OK;
    const wt_tensor *in = ga ? ga : x;
    if (st == WT_OK && o->residual && in->numel / (K ? K : 1) > 1 && K > 0 && N > 1) {
        /* in @ w^T + bias + residual in one product: in as [rows, K]. */
        if ((st = wt_reshape(in, 2, (const int64_t[]){-1, K}, &in2)) == WT_OK &&
            (st = wt_transpose(w, 0, 1, &wt)) == WT_OK) {
            st = wt_matmul_epilogue(in2, wt, bias, WT_MATMUL_ACT_NONE, o->residual, &y2);
            if (st == WT_OK) {
                int64_t oshape[WT_MAX_DIMS];
                for (int i = 0; i < x->ndim - 1; i++) oshape[i] = x->shape[i];
                oshape[x->ndim - 1] = N;
                st = wt_reshape(y2, x->ndim, oshape, out);
            }
        }
        if (st != WT_ERR_UNSUPPORTED) goto done;
        st = WT_OK; /* no fused epilogue here: the product, then wt_add */
    }
    if (st == WT_OK && (st = wt_linear(in, w, bias, &y)) == WT_OK) {
        if (o->residual) st = wt_add(y, o->residual, out);
        else {
            *out = y;
            y = NULL;
        }
    }
done:
    if (st == WT_OK && act_in) {
        *act_in = ga;
        ga = NULL;
    }
    wt_tensor_release(ga);
    wt_tensor_release(y);
    wt_tensor_release(in2);
    wt_tensor_release(wt);
    wt_tensor_release(y2);
    return st;
}

/* One fused linear node, its kind and parameters in node (LINEAR_FUSED, or
 * LINEAR_QUANT with the fused prologue and epilogue): x [.., K] folded to
 * [M, K], the small operands made contiguous, w as the caller gives it
 * (LINEAR_FUSED reads it in place: its rows must run along k). */
wt_status wt_linear_fused_node_run(wt_node node, const wt_tensor *x, const wt_tensor *w, int64_t K,
                                   const wt_tensor *bias, const wt_linear_fused_options *o, int64_t n_out,
                                   wt_dtype result, wt_tensor **out)
{
    wt_context *ctx = wt_ctx_of(x);
    const int64_t M = x->numel / K;
    const int64_t x2_shape[2] = {M, K}, out2_shape[2] = {M, n_out};
    wt_tensor *xc = NULL, *x2 = NULL, *bc = NULL, *gc = NULL, *rc = NULL, *r2 = NULL, *y = NULL;
    wt_status st = wt_contiguous(x, &xc);
    if (st == WT_OK) st = wt_reshape(xc, 2, x2_shape, &x2);
    if (st == WT_OK && bias) st = wt_contiguous(bias, &bc);
    if (st == WT_OK && o->rms_norm && o->norm_weight) st = wt_contiguous(o->norm_weight, &gc);
    if (st == WT_OK && o->residual && (st = wt_contiguous(o->residual, &rc)) == WT_OK)
        st = wt_reshape(rc, 2, out2_shape, &r2);
    /* into (checked: contiguous, the result's shape and dtype): the node
     * writes its [M, N] view. */
    if (st == WT_OK)
        st = o->into ? wt_reshape(o->into, 2, out2_shape, &y) : wt_tensor_alloc(ctx, result, 2, out2_shape, &y);
    if (st == WT_OK && y->numel > 0) {
        node.in[0] = x2, node.in[1] = w, node.in[2] = bc, node.in[3] = gc, node.in[4] = r2;
        node.out[0] = y;
        st = wt_node_run(ctx, &node);
    }
    if (st == WT_OK && o->into) {
        st = wt_tensor_share(o->into, out);
    } else if (st == WT_OK) {
        int64_t oshape[WT_MAX_DIMS];
        for (int i = 0; i < x->ndim - 1; i++) oshape[i] = x->shape[i];
        oshape[x->ndim - 1] = n_out;
        st = wt_reshape(y, x->ndim, oshape, out);
    }
    wt_tensor_release(xc);
    wt_tensor_release(x2);
    wt_tensor_release(bc);
    wt_tensor_release(gc);
    wt_tensor_release(rc);
    wt_tensor_release(r2);
    wt_tensor_release(y);
    return st;
}

/* The checks of wt_linear_fused's operands past the weight (N rows of K
 * elements; a quantised one too): opts into *o (defaults when NULL), the
 * result's last extent into *n_out. */
wt_status wt_linear_fused_check(const char *fn, const wt_tensor *x, int64_t N, int64_t K, const wt_tensor *bias,
                                const wt_linear_fused_options *opts, wt_linear_fused_options *o, int64_t *n_out)
{
    wt_status st = WT_OK;
    wt_linear_fused_options_init(o);
    if (opts) {
        if (opts->struct_size != sizeof *opts)
            return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: options not initialised with wt_linear_fused_options_init",
                           fn);
        *o = *opts;
    }
    char b1[160], b2[160];
    if (x->ndim < 1 || x->shape[x->ndim - 1] != K)
        return wt_fail(WT_ERR_SHAPE, "%s: x %s does not end in in_features = %lld of the weight", fn,
                       wt_shape_str(x->ndim, x->shape, b1, sizeof b1), (long long)K);
    if (bias) {
        if ((st = wt_check_input(fn, bias)) != WT_OK || (st = wt_check_same_context(fn, x, bias)) != WT_OK) return st;
        if (bias->ndim != 1 || bias->shape[0] != N)
            return wt_fail(WT_ERR_SHAPE, "%s: bias must have shape [%lld] (got %s)", fn, (long long)N,
                           wt_shape_str(bias->ndim, bias->shape, b1, sizeof b1));
    }
    if (!o->rms_norm && o->norm_weight)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: norm_weight given without rms_norm", fn);
    if (o->rms_norm) {
        if (!(o->norm_eps >= 0.0) || !isfinite((float)o->norm_eps))
            return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: norm_eps must be finite and >= 0 (got %g)", fn, o->norm_eps);
        const wt_tensor *g = o->norm_weight;
        if (g) {
            if ((st = wt_check_input(fn, g)) != WT_OK || (st = wt_check_same_context(fn, x, g)) != WT_OK) return st;
            if (g->ndim != 1 || g->shape[0] != K)
                return wt_fail(WT_ERR_SHAPE, "%s: norm_weight must have shape [%lld] (got %s)", fn, (long long)K,
                               wt_shape_str(g->ndim, g->shape, b1, sizeof b1));
        }
    }
    if (o->swiglu && N % 2 != 0)
        return wt_fail(WT_ERR_SHAPE, "%s: swiglu needs an even out_features (w has %lld rows)", fn, (long long)N);
    *n_out = o->swiglu ? N / 2 : N;
    if (o->residual) {
        const wt_tensor *r = o->residual;
        if ((st = wt_check_input(fn, r)) != WT_OK || (st = wt_check_same_context(fn, x, r)) != WT_OK) return st;
        bool same = r->ndim == x->ndim && r->shape[r->ndim - 1] == *n_out;
        for (int i = 0; same && i < x->ndim - 1; i++) same = r->shape[i] == x->shape[i];
        if (!same)
            return wt_fail(WT_ERR_SHAPE, "%s: residual %s must have the result's shape (x %s, %lld outputs)", fn,
                           wt_shape_str(r->ndim, r->shape, b1, sizeof b1),
                           wt_shape_str(x->ndim, x->shape, b2, sizeof b2), (long long)*n_out);
    }
    return WT_OK;
}

/* opts->into, where given: contiguous, the result's shape (x's leading
 * extents, n_out) and dtype, on x's context, in a storage none of the
 * operands use (the kernels read them while writing it), and no operand
 * recorded for autograd (a write into a caller's tensor has no rule). */
static wt_status check_into(const char *fn, const wt_linear_fused_options *o, const wt_tensor *x,
                            const wt_tensor *w, const wt_tensor *bias, int64_t n_out, wt_dtype result)
{
    const wt_tensor *t = o->into;
    if (!t) return WT_OK;
    wt_status st;
    if (t->dtype != result)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: into is %s, the result %s", fn, wt_dtype_name(t->dtype),
                       wt_dtype_name(result));
    if ((st = wt_check_input(fn, t)) != WT_OK || (st = wt_check_same_context(fn, x, t)) != WT_OK) return st;
    char b1[160], b2[160];
    bool same = t->ndim == x->ndim && t->shape[t->ndim - 1] == n_out;
    for (int i = 0; same && i < x->ndim - 1; i++) same = t->shape[i] == x->shape[i];
    if (!same)
        return wt_fail(WT_ERR_SHAPE, "%s: into %s must have the result's shape (x %s, %lld outputs)", fn,
                       wt_shape_str(t->ndim, t->shape, b1, sizeof b1), wt_shape_str(x->ndim, x->shape, b2, sizeof b2),
                       (long long)n_out);
    if (!wt_tensor_is_contiguous(t))
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: into must be contiguous (a view of whole rows, or of one row)",
                       fn);
    const wt_tensor *ops[5] = {x, w, bias, o->rms_norm ? o->norm_weight : NULL, o->residual};
    for (int i = 0; i < 5; i++)
        if (ops[i] && ops[i]->storage == t->storage)
            return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: into shares a storage with an operand", fn);
    if (wt_grad_recording(wt_ctx_of(x)))
        for (int i = 0; i < 5; i++)
            if (ops[i] && wt_tensor_requires_grad(ops[i]))
                return wt_fail(WT_ERR_UNSUPPORTED, "%s: into while autograd records an operand", fn);
    return WT_OK;
}

/* The result of a path that made a tensor of its own (st, *out) copied
 * into opts->into, *out then a handle of into (wt_tensor_share: into
 * itself, or inside a scope a view the scope owns); a path that wrote
 * into already returned such a handle. */
static wt_status finish_into(const wt_linear_fused_options *o, wt_status st, wt_tensor **out)
{
    if (st != WT_OK || !o->into ||
        ((*out)->storage == o->into->storage && (*out)->offset == o->into->offset))
        return st;
    st = wt_copy_into(o->into, *out);
    wt_tensor_release(*out);
    *out = NULL;
    return st == WT_OK ? wt_tensor_share(o->into, out) : st;
}

/* wt_linear_fused past its checks: the path that computes it. */
static wt_status linear_fused_paths(const wt_tensor *x, const wt_tensor *w, const wt_tensor *bias,
                                    const wt_linear_fused_options *opts, int64_t K, int64_t n_out,
                                    wt_dtype result, wt_tensor **out)
{
    wt_status st;
    const wt_linear_fused_options o = *opts;
    const wt_tensor *g = o.rms_norm ? o.norm_weight : NULL;
    const bool rows = rows_path(x, w, bias, &o, result);
    if ((wt_grad_any(x, w, bias, g) || wt_grad_any(o.residual, NULL, NULL, NULL)) &&
        wt_grad_recording(wt_ctx_of(x))) {
        /* Recorded as one op (rules_nn.c, grad_linear_fused), or through
         * its parts, each with its own rule. */
        if (!rows) return wt_linear_fused_composed(x, w, NULL, bias, &o, result, out);
        wt_grad_call gc = {.op = WT_OP_LINEAR_FUSED, .nin = 4, .in = {x, w, bias, o.residual},
                           .p.b = {o.input_gelu}};
        if (wt_grad_begin(&gc)) {
            wt_tensor *act_in = NULL;
            st = linear_rows(x, w, bias, &o, out, &act_in);
            if (act_in) wt_tensor_retain(gc.extra[0] = act_in); /* the node's own reference */
            st = wt_grad_end(&gc, st, 1, out);
            /* Inside a scope the scope owns the reference the call made
             * (as attention's saved log-sum-exp); after a failure it goes
             * now, not at the scope's end. */
            if (act_in && (st != WT_OK || !gc.ctx->scope)) wt_tensor_release(act_in);
            return st;
        }
    }
    const bool fusable = float_dtype(x) && float_dtype(w) && float_dtype(bias) && float_dtype(o.residual) &&
                         (!g || g->dtype == x->dtype) && (result == WT_F32 || result == WT_F16) && K > 0 &&
                         !o.input_gelu && x->numel > 0 && x->numel / K <= LINEAR_FUSED_MAX_ROWS &&
                         w->strides[1] == 1 &&
                         w->strides[0] >= 0 && wt_backend_runs(wt_ctx_of(x), WT_NODE_LINEAR_FUSED);
    if (!fusable)
        return rows ? linear_rows(x, w, bias, &o, out, NULL) : wt_linear_fused_composed(x, w, NULL, bias, &o, result, out);
    st = wt_linear_fused_node_run((wt_node){.kind = WT_NODE_LINEAR_FUSED,
                                            .p.linear = {.rms_norm = o.rms_norm, .swiglu = o.swiglu,
                                                         .eps = (float)o.norm_eps}},
                                  x, w, K, bias, &o, n_out, result, out);
    /* Past the kernel's 32-bit indexing: nothing was recorded. */
    if (st == WT_ERR_UNSUPPORTED) return wt_linear_fused_composed(x, w, NULL, bias, &o, result, out);
    return st;
}

wt_status wt_linear_fused(const wt_tensor *x, const wt_tensor *w, const wt_tensor *bias,
                          const wt_linear_fused_options *opts, wt_tensor **out)
{
    const char *fn = "wt_linear_fused";
    wt_status st = wt_check_out(fn, out);
    if (st != WT_OK || (st = wt_check_input(fn, x)) != WT_OK || (st = wt_check_input(fn, w)) != WT_OK ||
        (st = wt_check_same_context(fn, x, w)) != WT_OK)
        return st;
    if (w->ndim != 2) {
        char b1[160];
        return wt_fail(WT_ERR_SHAPE, "%s: w must be 2-D [out_features, in_features] (got %s)", fn,
                       wt_shape_str(w->ndim, w->shape, b1, sizeof b1));
    }
    const int64_t N = w->shape[0], K = w->shape[1];
    wt_linear_fused_options o;
    int64_t n_out = 0;
    if ((st = wt_linear_fused_check(fn, x, N, K, bias, opts, &o, &n_out)) != WT_OK) return st;
    const wt_dtype result = o.result_f32 ? WT_F32 : o.residual ? o.residual->dtype : x->dtype;
    if ((st = check_into(fn, &o, x, w, bias, n_out, result)) != WT_OK) return st;
    return finish_into(&o, linear_fused_paths(x, w, bias, &o, K, n_out, result, out), out);
}

/* One LINEAR_QUANT node with the fused prologue and epilogue (x, bias,
 * norm weight and residual f32, checked by the caller): linear_fused's
 * node runner, the weight's blocks made dense rows first. */
static wt_status linear_fused_node(const wt_tensor *x, const wt_tensor *w, wt_quant_type type, int64_t k,
                                   const wt_tensor *bias, const wt_linear_fused_options *o, int64_t n_out,
                                   wt_tensor **out)
{
    wt_tensor *wc = NULL;
    wt_status st = wt_contiguous(w, &wc);
    if (st == WT_OK)
        st = wt_linear_fused_node_run((wt_node){.kind = WT_NODE_LINEAR_QUANT,
                                                .p.quant = {.type = type, .k = k, .rms_norm = o->rms_norm,
                                                            .swiglu = o->swiglu, .eps = (float)o->norm_eps}},
                                      x, wc, k, bias, o, n_out, WT_F32, out);
    wt_tensor_release(wc);
    return st;
}

/* The fused node serves this many rows of x (the slot kernel's GEMV). */
enum { QUANT_FUSED_MAX_ROWS = 4 };

/* wt_linear_quant_fused past its checks: the path that computes it. */
static wt_status linear_quant_fused_paths(const wt_tensor *x, const wt_tensor *w, wt_quant_type type, int64_t k,
                                          const wt_tensor *bias, const wt_linear_fused_options *opts,
                                          int64_t n_out, wt_dtype result, wt_tensor **out)
{
    wt_status st;
    const wt_linear_fused_options o = *opts;
    const wt_tensor *g = o.rms_norm ? o.norm_weight : NULL;
    wt_context *ctx = wt_ctx_of(x);
    const bool f32 = x->dtype == WT_F32 && (!bias || bias->dtype == WT_F32) && (!g || g->dtype == WT_F32) &&
                     (!o.residual || o.residual->dtype == WT_F32) && result == WT_F32;
    /* Recording for autograd, or a case the kernel does not take: the
     * composition, each op with its own rule. */
    const bool fusable = f32 && !o.input_gelu && (!o.rms_norm || g) && (o.rms_norm || o.swiglu || o.residual) &&
                         x->numel > 0 && x->numel / k <= QUANT_FUSED_MAX_ROWS &&
                         !((wt_grad_any(x, bias, g, o.residual)) && wt_grad_recording(ctx)) &&
                         wt_backend_runs(ctx, WT_NODE_LINEAR_QUANT);
    if (!fusable) return wt_linear_fused_composed(x, w, &type, bias, &o, result, out);
    st = linear_fused_node(x, w, type, k, bias, &o, n_out, out);
    /* A backend or case without the fused kernel: nothing was recorded. */
    if (st == WT_ERR_UNSUPPORTED) return wt_linear_fused_composed(x, w, &type, bias, &o, result, out);
    return st;
}

wt_status wt_linear_quant_fused(const wt_tensor *x, const wt_tensor *w, wt_quant_type type, const wt_tensor *bias,
                                const wt_linear_fused_options *opts, wt_tensor **out)
{
    const char *fn = "wt_linear_quant_fused";
    wt_status st = wt_check_out(fn, out);
    int64_t k = 0, n_out = 0;
    if (st != WT_OK || (st = wt_check_input(fn, x)) != WT_OK || (st = wt_quant_weight_k(fn, w, type, &k)) != WT_OK ||
        (st = wt_check_same_context(fn, x, w)) != WT_OK)
        return st;
    wt_linear_fused_options o;
    if ((st = wt_linear_fused_check(fn, x, w->shape[0], k, bias, opts, &o, &n_out)) != WT_OK) return st;
    const wt_dtype result = o.result_f32 ? WT_F32 : o.residual ? o.residual->dtype : x->dtype;
    if ((st = check_into(fn, &o, x, w, bias, n_out, result)) != WT_OK) return st;
    return finish_into(&o, linear_quant_fused_paths(x, w, type, k, bias, &o, n_out, result, out), out);
}
