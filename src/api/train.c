/* Training front-ends: activation backward, softmax cross-entropy and its
 * backward, embedding backward (kernels of their own in each backend),
 * layer-norm and batch-norm backward (composed from public ops), and the
 * in-place SGD and AdamW steps. */
#include "api/api.h"
#include "autograd/tape.h"
#include "api/chain.h"

#include <math.h>
#include <string.h>

/* ------------------------------------------------------------- helpers */

static wt_status check_float(const char *fn, const char *what, const wt_tensor *t)
{
    if (!t) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: %s is NULL", fn, what);
    if (t->dtype != WT_F32 && t->dtype != WT_F16)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: %s must be f32 or f16", fn, what);
    return WT_OK;
}

static bool same_shape(const wt_tensor *a, const wt_tensor *b)
{
    if (a->ndim != b->ndim) return false;
    for (int i = 0; i < a->ndim; i++)
        if (a->shape[i] != b->shape[i]) return false;
    return true;
}

static wt_status need_op(const char *fn, wt_node_kind kind, const wt_context *ctx)
{
    if (!wt_backend_runs(ctx, kind)) return wt_fail(WT_ERR_UNSUPPORTED, "%s: not available on the %s backend", fn, ctx->ops->name);
    return WT_OK;
}

/* -------------------------------------------------- activation backward */

static wt_status activation_backward(const char *fn, wt_activation act, const wt_tensor *dy, const wt_tensor *x,
                                     wt_tensor **dx)
{
    wt_status st = wt_check_out(fn, dx);
    if (st != WT_OK || (st = check_float(fn, "dy", dy)) != WT_OK || (st = check_float(fn, "x", x)) != WT_OK ||
        (st = wt_check_same_context(fn, dy, x)) != WT_OK)
        return st;
    if ((unsigned)act > WT_ACT_GELU_TANH) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: unknown activation %d", fn, (int)act);
    if (!same_shape(dy, x)) return wt_fail(WT_ERR_SHAPE, "%s: dy and x differ in shape", fn);
    wt_context *ctx = wt_ctx_of(x);
    if ((st = need_op(fn, WT_NODE_ACT_BACKWARD, ctx)) != WT_OK) return st;
    chain c = {0};
    wt_tensor *g = f32_contiguous(&c, dy), *xs = f32_contiguous(&c, x);
    wt_tensor *out = STEP(&c, wt_tensor_alloc, ctx, WT_F32, x->ndim, x->shape);
    if (c.st == WT_OK && out->numel > 0) c.st = wt_node_run(ctx, &(wt_node){.kind = WT_NODE_ACT_BACKWARD, .in = {g, xs}, .out = {out}, .p.act_backward = act});
    if (c.st == WT_OK) give(out, dx);
    chain_release(&c);
    return c.st;
}

wt_status wt_relu_backward(const wt_tensor *dy, const wt_tensor *x, wt_tensor **dx)
{
    return activation_backward("wt_relu_backward", WT_ACT_RELU, dy, x, dx);
}

wt_status wt_sigmoid_backward(const wt_tensor *dy, const wt_tensor *x, wt_tensor **dx)
{
    return activation_backward("wt_sigmoid_backward", WT_ACT_SIGMOID, dy, x, dx);
}

wt_status wt_tanh_backward(const wt_tensor *dy, const wt_tensor *x, wt_tensor **dx)
{
    return activation_backward("wt_tanh_backward", WT_ACT_TANH, dy, x, dx);
}

wt_status wt_silu_backward(const wt_tensor *dy, const wt_tensor *x, wt_tensor **dx)
{
    return activation_backward("wt_silu_backward", WT_ACT_SILU, dy, x, dx);
}

wt_status wt_gelu_backward(const wt_tensor *dy, const wt_tensor *x, wt_tensor **dx)
{
    return activation_backward("wt_gelu_backward", WT_ACT_GELU, dy, x, dx);
}

wt_status wt_gelu_tanh_backward(const wt_tensor *dy, const wt_tensor *x, wt_tensor **dx)
{
    return activation_backward("wt_gelu_tanh_backward", WT_ACT_GELU_TANH, dy, x, dx);
}

/* -------------------------------------------------------- cross-entropy */

void wt_cross_entropy_options_init(wt_cross_entropy_options *opts)
{
    if (!opts) return;
    memset(opts, 0, sizeof *opts);
    opts->struct_size = sizeof *opts;
    opts->reduction = WT_REDUCTION_MEAN;
    opts->ignore_index = -100;
}

static wt_status ce_check(const char *fn, const wt_tensor *logits, const wt_tensor *labels,
                          const wt_cross_entropy_options *opts, wt_cross_entropy_options *o)
{
    wt_status st;
    if ((st = check_float(fn, "logits", logits)) != WT_OK) return st;
    if (!labels) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: labels is NULL", fn);
    if ((st = wt_check_same_context(fn, logits, labels)) != WT_OK) return st;
    if (labels->dtype != WT_I32) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: labels must be i32 class indices", fn);
    if (logits->ndim != 2 || labels->ndim != 1 || labels->shape[0] != logits->shape[0])
        return wt_fail(WT_ERR_SHAPE, "%s: logits must be [N, C] and labels [N]", fn);
    if (logits->shape[1] == 0 && logits->shape[0] > 0) return wt_fail(WT_ERR_SHAPE, "%s: no classes (C = 0)", fn);
    wt_cross_entropy_options_init(o);
    if (opts) {
        if (opts->struct_size != sizeof *opts)
            return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: options not initialised with wt_cross_entropy_options_init", fn);
        *o = *opts;
    }
    if ((unsigned)o->reduction > WT_REDUCTION_NONE) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: unknown reduction", fn);
    wt_context *ctx = wt_ctx_of(logits);
    if ((st = need_op(fn, WT_NODE_CROSS_ENTROPY, ctx)) != WT_OK) return st;
    return WT_OK;
}

/* The options as the autograd record keeps them (the defaults where the
 * caller's struct is NULL or older). */
static wt_grad_params grad_params(const wt_cross_entropy_options *opts)
{
    wt_grad_params p;
    memset(&p, 0, sizeof p);
    wt_cross_entropy_options_init(&p.o.ce);
    if (opts) (void)wt_read_options("", "", opts, sizeof(uint32_t), &p.o.ce, sizeof p.o.ce);
    return p;
}

/* Row losses [N] and the 0-d count of rows that count. */
static void ce_rows(chain *c, const wt_tensor *logits, const wt_tensor *labels, int32_t ignore, wt_tensor **loss,
                    wt_tensor **valid)
{
    wt_context *ctx = wt_ctx_of(logits);
    int64_t n = logits->shape[0];
    wt_tensor *x = f32_contiguous(c, logits), *y = STEP(c, wt_contiguous, labels);
    *loss = STEP(c, wt_tensor_alloc, ctx, WT_F32, 1, &n);
    *valid = STEP(c, wt_tensor_alloc, ctx, WT_F32, 1, &n);
    if (c->st == WT_OK && n > 0) c->st = wt_node_run(ctx, &(wt_node){.kind = WT_NODE_CROSS_ENTROPY, .in = {x, y}, .out = {*loss, *valid}, .p.ignore = ignore});
}

wt_status wt_cross_entropy(const wt_tensor *logits, const wt_tensor *labels, const wt_cross_entropy_options *opts,
                           wt_tensor **loss)
{
    WT_GRAD_HOOK((logits, labels, NULL, NULL), 1, loss, wt_cross_entropy(logits, labels, opts, loss),
                 .op = WT_OP_CROSS_ENTROPY, .nin = 2, .in = {logits, labels}, .p = grad_params(opts));
    const char *fn = "wt_cross_entropy";
    wt_cross_entropy_options o;
    wt_status st = wt_check_out(fn, loss);
    if (st != WT_OK || (st = ce_check(fn, logits, labels, opts, &o)) != WT_OK) return st;
    chain c = {0};
    wt_tensor *rows, *valid, *r = NULL;
    ce_rows(&c, logits, labels, o.ignore_index, &rows, &valid);
    if (o.reduction == WT_REDUCTION_NONE) {
        r = rows;
    } else {
        wt_tensor *total = STEP(&c, wt_sum, rows, 0, NULL, false);
        if (o.reduction == WT_REDUCTION_SUM) {
            r = total;
        } else {
            wt_tensor *count = STEP(&c, wt_sum, valid, 0, NULL, false);
            r = STEP(&c, wt_div, total, count);
        }
    }
    if (c.st == WT_OK) give(r, loss);
    chain_release(&c);
    return c.st;
}

wt_status wt_cross_entropy_backward_v2(const wt_tensor *dloss, const wt_tensor *logits, const wt_tensor *labels,
                                       const wt_cross_entropy_options *opts, wt_tensor **dlogits)
{
    const char *fn = "wt_cross_entropy_backward_v2";
    wt_cross_entropy_options o;
    wt_status st = wt_check_out(fn, dlogits);
    if (st != WT_OK || (st = ce_check(fn, logits, labels, opts, &o)) != WT_OK) return st;
    int64_t n = logits->shape[0];
    if (dloss) {
        if ((st = check_float(fn, "dloss", dloss)) != WT_OK || (st = wt_check_same_context(fn, dloss, logits)) != WT_OK)
            return st;
        bool ok = o.reduction == WT_REDUCTION_NONE ? dloss->ndim == 1 && dloss->shape[0] == n : dloss->ndim == 0;
        if (!ok) return wt_fail(WT_ERR_SHAPE, "%s: dloss must have the loss's shape (%s)", fn,
                                o.reduction == WT_REDUCTION_NONE ? "[N]" : "0-d");
    }
    wt_context *ctx = wt_ctx_of(logits);
    chain c = {0};
    /* The per-row scale: dloss[n] for none; dloss / count (mean) or dloss
     * (sum) for every row. */
    wt_tensor *g = dloss ? f32_contiguous(&c, dloss) : scalar(&c, ctx, 1.0);
    if (o.reduction == WT_REDUCTION_MEAN) {
        /* The rows that count, from the labels alone: no second softmax
         * pass over the logits (the gradient kernel makes its own). */
        wt_tensor *counted = STEP(&c, wt_ne_scalar, labels, (double)o.ignore_index);
        wt_tensor *count = STEP(&c, wt_sum, counted, 0, NULL, false); /* i32 */
        g = STEP(&c, wt_div, g, count);
    }
    wt_tensor *scale = g;
    if (c.st == WT_OK && g->ndim == 0) scale = STEP(&c, wt_expand, g, 1, &n);
    wt_tensor *x = f32_contiguous(&c, logits), *y = STEP(&c, wt_contiguous, labels);
    wt_tensor *out = STEP(&c, wt_tensor_alloc, ctx, WT_F32, 2, logits->shape);
    if (c.st == WT_OK && out->numel > 0)
        c.st = wt_node_run(ctx, &(wt_node){.kind = WT_NODE_CROSS_ENTROPY_BACKWARD, .in = {x, y, scale}, .out = {out}, .p.ignore = o.ignore_index});
    if (c.st == WT_OK) give(out, dlogits);
    chain_release(&c);
    return c.st;
}

/* ---------------------------------------------------- embedding backward */

wt_status wt_embedding_backward(const wt_tensor *dy, const wt_tensor *indices, int64_t num_embeddings,
                                wt_tensor **dweight)
{
    const char *fn = "wt_embedding_backward";
    wt_status st = wt_check_out(fn, dweight);
    if (st != WT_OK || (st = check_float(fn, "dy", dy)) != WT_OK) return st;
    if (!indices) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: indices is NULL", fn);
    if ((st = wt_check_same_context(fn, dy, indices)) != WT_OK) return st;
    if (indices->dtype != WT_I32) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: indices must be i32", fn);
    if (num_embeddings < 0) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: num_embeddings is negative", fn);
    bool ok = dy->ndim == indices->ndim + 1;
    for (int i = 0; ok && i < indices->ndim; i++) ok = dy->shape[i] == indices->shape[i];
    if (!ok) return wt_fail(WT_ERR_SHAPE, "%s: dy must be [*indices.shape, D]", fn);
    wt_context *ctx = wt_ctx_of(dy);
    if ((st = need_op(fn, WT_NODE_SCATTER_ADD_ROWS, ctx)) != WT_OK) return st;
    int64_t d = dy->shape[dy->ndim - 1], n = indices->numel;
    int64_t wshape[2] = {num_embeddings, d}, g2[2] = {n, d};
    chain c = {0};
    wt_tensor *g = f32_contiguous(&c, dy);
    wt_tensor *g2d = STEP(&c, wt_reshape, g, 2, g2);
    wt_tensor *idx = STEP(&c, wt_contiguous, indices);
    wt_tensor *idx1 = STEP(&c, wt_reshape, idx, 1, &n);
    /* A small table on a GPU: many rows land on few embeddings, so the
     * scatter's atomic adds contend (a character-level GPT's 16,384
     * tokens into 114 rows took 15 ms a step on the H200). There
     * dweight = onehot(indices)^T @ dy, a matrix product, which is also
     * deterministic; an index outside [0, num_embeddings) matches no
     * column and contributes nothing, as in the scatter. */
    if (ctx->kind == WT_BACKEND_WEBGPU && n > 0 && d > 0 && num_embeddings > 0 && num_embeddings <= 1024 &&
        n <= ((int64_t)1 << 24) / num_embeddings) {
        const int64_t col[2] = {n, 1};
        wt_tensor *ids = STEP(&c, wt_reshape, idx1, 2, col);
        wt_tensor *rows = STEP(&c, wt_tensor_arange, ctx, WT_I32, 0.0, (double)num_embeddings, 1.0);
        wt_tensor *hot = STEP(&c, wt_eq, ids, rows);
        wt_tensor *hotf = STEP(&c, wt_cast, hot, WT_F32);
        wt_tensor *hott = STEP(&c, wt_transpose, hotf, 0, 1);
        wt_tensor *dw = STEP(&c, wt_matmul, hott, g2d);
        if (c.st == WT_OK) give(dw, dweight);
        chain_release(&c);
        return c.st;
    }
    wt_tensor *out = STEP(&c, wt_tensor_zeros, ctx, WT_F32, 2, wshape);
    if (c.st == WT_OK && n > 0 && out->numel > 0) c.st = wt_node_run(ctx, &(wt_node){.kind = WT_NODE_SCATTER_ADD_ROWS, .in = {g2d, idx1}, .out = {out}, .p.rows = {0, 0}});
    if (c.st == WT_OK) give(out, dweight);
    chain_release(&c);
    return c.st;
}

/* ----------------------------------------------- normalisation backward */

/* dx, dweight, dbias of y = xhat * w + b, xhat = (x - mean) * rstd, with
 * the statistics over the axes `axes` (kept), given rstd (and xhat).
 * The shared tail of layer norm and batch norm (training). */
static void norm_backward_tail(chain *c, wt_tensor *dy, wt_tensor *xhat, wt_tensor *rstd, wt_tensor *wb, int naxes,
                               const int *axes, bool batch_stats, wt_tensor **dx)
{
    wt_tensor *gw = wb ? STEP(c, wt_mul, dy, wb) : dy;
    if (!batch_stats) { /* fixed statistics: a plain scale */
        *dx = STEP(c, wt_mul, gw, rstd);
        return;
    }
    wt_tensor *m1 = STEP(c, wt_mean, gw, naxes, axes, true);
    wt_tensor *gx = STEP(c, wt_mul, gw, xhat);
    wt_tensor *m2 = STEP(c, wt_mean, gx, naxes, axes, true);
    wt_tensor *t1 = STEP(c, wt_sub, gw, m1);
    wt_tensor *t2 = STEP(c, wt_mul, xhat, m2);
    wt_tensor *t3 = STEP(c, wt_sub, t1, t2);
    *dx = STEP(c, wt_mul, t3, rstd);
}

/* rstd = 1 / sqrt(var + eps). */
static wt_tensor *rstd_of(chain *c, wt_context *ctx, wt_tensor *var, double eps)
{
    wt_tensor *e = scalar(c, ctx, eps);
    wt_tensor *ve = STEP(c, wt_add, var, e);
    wt_tensor *sd = STEP(c, wt_sqrt, ve);
    wt_tensor *one = scalar(c, ctx, 1.0);
    return STEP(c, wt_div, one, sd);
}

/* Layer norm backward over the last axis (weight [C] or NULL). */
static wt_status layer_norm_backward_rows(const char *fn, const wt_tensor *dy, const wt_tensor *x,
                                          const wt_tensor *weight, double eps, wt_tensor **dx, wt_tensor **dweight,
                                          wt_tensor **dbias)
{
    wt_status st;
    if ((st = check_float(fn, "x", x)) != WT_OK || (st = check_float(fn, "dy", dy)) != WT_OK ||
        (st = wt_check_same_context(fn, x, dy)) != WT_OK)
        return st;
    if (x->ndim < 1 || !same_shape(x, dy)) return wt_fail(WT_ERR_SHAPE, "%s: x and dy must share a shape of >= 1 axis", fn);
    int64_t C = x->shape[x->ndim - 1];
    if (weight) {
        if ((st = check_float(fn, "weight", weight)) != WT_OK || (st = wt_check_same_context(fn, x, weight)) != WT_OK)
            return st;
        if (weight->ndim != 1 || weight->shape[0] != C) return wt_fail(WT_ERR_SHAPE, "%s: weight must be [C]", fn);
    }
    if (dweight && !weight) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: dweight asked without a weight", fn);
    if (!(eps >= 0) || !isfinite(eps)) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: eps must be finite and >= 0", fn);
    wt_context *ctx = wt_ctx_of(x);
    /* One pass a row for dx (and dy x^) where the backend has it (the
     * NORM_BACKWARD node); the parameter gradients are then sums over the
     * rows. */
    if (dx) {
        wt_tensor *fdx = NULL, *fgx = NULL;
        st = wt_norm_backward_fused(dy, x, 1, weight, false, eps, &fdx, dweight ? &fgx : NULL);
        if (st == WT_OK) {
            chain c = {0};
            int lead[WT_MAX_DIMS];
            for (int i = 0; i < x->ndim - 1; i++) lead[i] = i;
            int64_t cshape[1] = {C};
            wt_tensor *rdw = NULL, *rdb = NULL;
            if (dweight) {
                rdw = x->ndim > 1 ? STEP(&c, wt_sum, fgx, x->ndim - 1, lead, false) : fgx;
                rdw = STEP(&c, wt_reshape, rdw, 1, cshape);
            }
            if (dbias) {
                wt_tensor *g = f32_contiguous(&c, dy);
                rdb = x->ndim > 1 ? STEP(&c, wt_sum, g, x->ndim - 1, lead, false) : g;
                rdb = STEP(&c, wt_reshape, rdb, 1, cshape);
            }
            if (c.st == WT_OK) {
                *dx = fdx, fdx = NULL;
                give(rdw, dweight);
                give(rdb, dbias);
            }
            chain_release(&c);
            wt_tensor_release(fdx);
            wt_tensor_release(fgx);
            return c.st;
        }
        if (st != WT_ERR_UNSUPPORTED) return st;
    }
    chain c = {0};
    int last = -1;
    wt_tensor *xs = f32_contiguous(&c, x), *g = f32_contiguous(&c, dy);
    wt_tensor *w = weight ? f32_contiguous(&c, weight) : NULL;
    wt_tensor *mean = STEP(&c, wt_mean, xs, 1, &last, true);
    wt_tensor *xc = STEP(&c, wt_sub, xs, mean);
    wt_tensor *sq = STEP(&c, wt_mul, xc, xc);
    wt_tensor *var = STEP(&c, wt_mean, sq, 1, &last, true);
    wt_tensor *rstd = rstd_of(&c, ctx, var, eps);
    wt_tensor *xhat = STEP(&c, wt_mul, xc, rstd);
    wt_tensor *rdx = NULL, *rdw = NULL, *rdb = NULL;
    if (dx) norm_backward_tail(&c, g, xhat, rstd, w, 1, &last, true, &rdx);
    /* Parameter gradients sum over every axis but the last. */
    int lead[WT_MAX_DIMS];
    for (int i = 0; i < x->ndim - 1; i++) lead[i] = i;
    int64_t cshape[1] = {C};
    if (dweight) {
        wt_tensor *p = STEP(&c, wt_mul, g, xhat);
        rdw = x->ndim > 1 ? STEP(&c, wt_sum, p, x->ndim - 1, lead, false) : p;
        rdw = STEP(&c, wt_reshape, rdw, 1, cshape);
    }
    if (dbias) {
        rdb = x->ndim > 1 ? STEP(&c, wt_sum, g, x->ndim - 1, lead, false) : g;
        rdb = STEP(&c, wt_reshape, rdb, 1, cshape);
    }
    if (c.st == WT_OK) {
        give(rdx, dx);
        give(rdw, dweight);
        give(rdb, dbias);
    }
    chain_release(&c);
    return c.st;
}

wt_status wt_layer_norm_backward(const wt_tensor *dy, const wt_tensor *x, int normalized_ndim, const wt_tensor *weight,
                                 double eps, wt_tensor **dx, wt_tensor **dweight, wt_tensor **dbias)
{
    const char *fn = "wt_layer_norm_backward";
    wt_status st;
    if (dx) *dx = NULL;
    if (dweight) *dweight = NULL;
    if (dbias) *dbias = NULL;
    if ((st = check_float(fn, "x", x)) != WT_OK || (st = check_float(fn, "dy", dy)) != WT_OK) return st;
    const int k = normalized_ndim;
    if (x->ndim < 1) return wt_fail(WT_ERR_SHAPE, "%s: x must have at least 1 axis", fn);
    if (k < 1 || k > x->ndim)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: normalized_ndim %d is outside [1, %d]", fn, k, x->ndim);
    if (k == 1) return layer_norm_backward_rows(fn, dy, x, weight, eps, dx, dweight, dbias);
    /* The last k axes as one: rows of C = their product. */
    if (!same_shape(x, dy)) return wt_fail(WT_ERR_SHAPE, "%s: x and dy differ in shape", fn);
    if (weight) {
        bool ok = weight->ndim == k;
        for (int i = 0; ok && i < k; i++) ok = weight->shape[i] == x->shape[x->ndim - k + i];
        if (!ok) return wt_fail(WT_ERR_SHAPE, "%s: weight must have x's last %d extents", fn, k);
    }
    int64_t C = 1, rshape[WT_MAX_DIMS];
    for (int i = x->ndim - k; i < x->ndim; i++) C *= x->shape[i];
    for (int i = 0; i < x->ndim - k; i++) rshape[i] = x->shape[i];
    rshape[x->ndim - k] = C;
    chain c = {0};
    wt_tensor *xr = STEP(&c, wt_reshape, x, x->ndim - k + 1, rshape);
    wt_tensor *gr = STEP(&c, wt_reshape, dy, x->ndim - k + 1, rshape);
    wt_tensor *wr = weight ? STEP(&c, wt_reshape, weight, 1, &C) : NULL;
    wt_tensor *rdx = NULL, *rdw = NULL, *rdb = NULL;
    if (c.st == WT_OK)
        c.st = layer_norm_backward_rows(fn, gr, xr, wr, eps, dx ? &rdx : NULL, dweight ? &rdw : NULL,
                                        dbias ? &rdb : NULL);
    wt_tensor *ox = NULL, *ow = NULL, *ob = NULL;
    if (c.st == WT_OK && rdx) c.st = wt_reshape(rdx, x->ndim, x->shape, &ox);
    if (c.st == WT_OK && rdw) c.st = wt_reshape(rdw, k, x->shape + x->ndim - k, &ow);
    if (c.st == WT_OK && rdb) c.st = wt_reshape(rdb, k, x->shape + x->ndim - k, &ob);
    wt_tensor_release(rdx);
    wt_tensor_release(rdw);
    wt_tensor_release(rdb);
    if (c.st == WT_OK) {
        if (dx) *dx = ox;
        if (dweight) *dweight = ow;
        if (dbias) *dbias = ob;
    } else {
        wt_tensor_release(ox);
        wt_tensor_release(ow);
        wt_tensor_release(ob);
    }
    chain_release(&c);
    return c.st;
}

wt_status wt_batch_norm_backward_v2(const wt_tensor *dy, const wt_tensor *x, const wt_tensor *running_mean,
                                    const wt_tensor *running_var, const wt_tensor *weight,
                                    const wt_batch_norm_options *opts, wt_tensor **dx, wt_tensor **dweight,
                                    wt_tensor **dbias)
{
    const char *fn = "wt_batch_norm_backward_v2";
    wt_status st;
    if (dx) *dx = NULL;
    if (dweight) *dweight = NULL;
    if (dbias) *dbias = NULL;
    wt_batch_norm_options o;
    wt_batch_norm_options_init(&o);
    if (opts && (st = wt_read_options(fn, "wt_batch_norm_options_init", opts, sizeof o, &o, sizeof o)) != WT_OK)
        return st;
    if (!(o.eps >= 0) || !isfinite(o.eps)) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: eps must be finite and >= 0", fn);
    const bool training = o.training;
    const double eps = o.eps;
    if ((st = check_float(fn, "x", x)) != WT_OK || (st = check_float(fn, "dy", dy)) != WT_OK ||
        (st = wt_check_same_context(fn, x, dy)) != WT_OK)
        return st;
    if (x->ndim < 2 || !same_shape(x, dy)) return wt_fail(WT_ERR_SHAPE, "%s: x and dy must share a shape [N, C, ...]", fn);
    int64_t C = x->shape[1];
    const wt_tensor *vecs[3] = {weight, running_mean, running_var};
    const char *names[3] = {"weight", "running_mean", "running_var"};
    for (int i = 0; i < 3; i++) {
        if (!vecs[i]) continue;
        if ((st = check_float(fn, names[i], vecs[i])) != WT_OK || (st = wt_check_same_context(fn, x, vecs[i])) != WT_OK)
            return st;
        if (vecs[i]->ndim != 1 || vecs[i]->shape[0] != C) return wt_fail(WT_ERR_SHAPE, "%s: %s must be [C]", fn, names[i]);
    }
    if (!training && (!running_mean || !running_var))
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: running_mean and running_var are needed when not training", fn);
    if (dweight && !weight) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: dweight asked without a weight", fn);
    wt_context *ctx = wt_ctx_of(x);
    int axes[WT_MAX_DIMS], naxes = 0;
    for (int i = 0; i < x->ndim; i++)
        if (i != 1) axes[naxes++] = i;
    /* [C] vectors broadcast as [1, C, 1, ...]. */
    int64_t bshape[WT_MAX_DIMS];
    for (int i = 0; i < x->ndim; i++) bshape[i] = i == 1 ? C : 1;
    chain c = {0};
    wt_tensor *xs = f32_contiguous(&c, x), *g = f32_contiguous(&c, dy);
    wt_tensor *w = NULL, *mean, *var;
    if (weight) w = STEP(&c, wt_reshape, f32_contiguous(&c, weight), x->ndim, bshape);
    if (training) {
        mean = STEP(&c, wt_mean, xs, naxes, axes, true);
        wt_tensor *xc0 = STEP(&c, wt_sub, xs, mean);
        wt_tensor *sq = STEP(&c, wt_mul, xc0, xc0);
        var = STEP(&c, wt_mean, sq, naxes, axes, true);
    } else {
        mean = STEP(&c, wt_reshape, f32_contiguous(&c, running_mean), x->ndim, bshape);
        var = STEP(&c, wt_reshape, f32_contiguous(&c, running_var), x->ndim, bshape);
    }
    wt_tensor *xc = STEP(&c, wt_sub, xs, mean);
    wt_tensor *rstd = rstd_of(&c, ctx, var, eps);
    wt_tensor *xhat = STEP(&c, wt_mul, xc, rstd);
    wt_tensor *rdx = NULL, *rdw = NULL, *rdb = NULL;
    if (dx) norm_backward_tail(&c, g, xhat, rstd, w, naxes, axes, training, &rdx);
    if (dweight) {
        wt_tensor *p = STEP(&c, wt_mul, g, xhat);
        rdw = STEP(&c, wt_sum, p, naxes, axes, false);
    }
    if (dbias) rdb = STEP(&c, wt_sum, g, naxes, axes, false);
    if (c.st == WT_OK) {
        give(rdx, dx);
        give(rdw, dweight);
        give(rdb, dbias);
    }
    chain_release(&c);
    return c.st;
}

/* ------------------------------------------------------------ optimizers */

void wt_sgd_options_init(wt_sgd_options *opts)
{
    if (!opts) return;
    memset(opts, 0, sizeof *opts);
    opts->struct_size = sizeof *opts;
    opts->lr = 0.01f;
}

void wt_adamw_options_init(wt_adamw_options *opts)
{
    if (!opts) return;
    memset(opts, 0, sizeof *opts);
    opts->struct_size = sizeof *opts;
    opts->lr = 1e-3f;
    opts->beta1 = 0.9f;
    opts->beta2 = 0.999f;
    opts->eps = 1e-8f;
    opts->weight_decay = 0.01f;
}

wt_status wt_sgd_options_read(const char *fn, const wt_sgd_options *opts, wt_sgd_options *o)
{
    wt_sgd_options_init(o);
    if (!opts) return WT_OK;
    if (opts->struct_size != sizeof *opts)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: options not initialised with wt_sgd_options_init", fn);
    *o = *opts;
    return WT_OK;
}

wt_status wt_adamw_options_read(const char *fn, const wt_adamw_options *opts, wt_adamw_options *o)
{
    wt_adamw_options_init(o);
    if (!opts) return WT_OK;
    if (opts->struct_size != sizeof *opts)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: options not initialised with wt_adamw_options_init", fn);
    *o = *opts;
    return WT_OK;
}

/* An in-place target: f32, contiguous, of param's context and shape, not
 * sharing storage with the others. */
static wt_status check_state(const char *fn, const char *what, const wt_tensor *t, const wt_tensor *param,
                             const wt_tensor *const *others, int nothers)
{
    if (!t) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: %s is NULL", fn, what);
    if (t->dtype != WT_F32) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: %s must be f32", fn, what);
    if (t->storage->ctx != param->storage->ctx)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: %s belongs to another context", fn, what);
    if (!same_shape(t, param)) return wt_fail(WT_ERR_SHAPE, "%s: %s differs in shape from param", fn, what);
    if (!wt_layout_is_contiguous(t->ndim, t->shape, t->strides))
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: %s must be contiguous (it is updated in place)", fn, what);
    for (int i = 0; i < nothers; i++)
        if (others[i] && others[i]->storage == t->storage)
            return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: %s shares storage with another operand", fn, what);
    return WT_OK;
}

static wt_status run_update(const char *fn, wt_optimizer_update *u)
{
    wt_context *ctx = wt_ctx_of(u->param);
    wt_status st = need_op(fn, WT_NODE_OPTIMIZER_STEP, ctx);
    if (st != WT_OK || u->param->numel == 0) return st;
    /* grad may be any view: the kernels take it contiguous. */
    wt_tensor *g = NULL;
    if ((st = wt_contiguous(u->grad, &g)) != WT_OK) return st;
    u->grad = g;
    st = wt_node_run(ctx, &(wt_node){.kind = WT_NODE_OPTIMIZER_STEP, .in = {u->grad, u->sched, u->clip_norm},
                                     .out = {u->param, u->m, u->v}, .p.opt = *u});
    wt_tensor_release(g);
    return st;
}

/* sched: an optimizer's device scalars (node.h) or NULL; the others as
 * wt_sgd_step's. */
wt_status wt_sgd_step_sched(wt_tensor *param, const wt_tensor *grad, wt_tensor *momentum_buf, const wt_tensor *sched,
                            const wt_tensor *clip_norm, double max_norm, const wt_sgd_options *opts)
{
    const char *fn = "wt_sgd_step";
    if (!param || !grad) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: param or grad is NULL", fn);
    wt_sgd_options o;
    wt_status st_opts = wt_sgd_options_read(fn, opts, &o);
    if (st_opts != WT_OK) return st_opts;
    if (!isfinite(o.lr) || !(o.momentum >= 0) || !isfinite(o.momentum) || !isfinite(o.dampening) ||
        !isfinite(o.weight_decay))
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: lr, momentum, dampening and weight_decay must be finite (momentum >= 0)", fn);
    if (o.nesterov && (o.momentum <= 0 || o.dampening != 0))
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: nesterov needs momentum > 0 and dampening 0", fn);
    if (o.momentum > 0 && !momentum_buf)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: momentum > 0 needs a momentum buffer", fn);
    const wt_tensor *all[3] = {param, grad, momentum_buf};
    wt_status st;
    if ((st = check_state(fn, "param", param, param, all + 1, 2)) != WT_OK) return st;
    if (momentum_buf && (st = check_state(fn, "momentum_buf", momentum_buf, param, all, 2)) != WT_OK) return st;
    if (grad->dtype != WT_F32 && grad->dtype != WT_F16) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: grad must be f32", fn);
    if (grad->storage->ctx != param->storage->ctx) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: grad belongs to another context", fn);
    if (!same_shape(grad, param)) return wt_fail(WT_ERR_SHAPE, "%s: grad differs in shape from param", fn);
    if (grad->dtype != WT_F32) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: grad must be f32", fn);
    wt_optimizer_update u = {.kind = WT_OPT_SGD, .param = param, .grad = grad,
                             .m = o.momentum > 0 ? momentum_buf : NULL, .lr = o.lr,
                             .weight_decay = o.weight_decay, .momentum = o.momentum,
                             .dampening = o.dampening, .nesterov = o.nesterov, .sched = sched,
                             .clip_norm = clip_norm, .max_norm = (float)max_norm};
    return run_update(fn, &u);
}

wt_status wt_sgd_step(wt_tensor *param, const wt_tensor *grad, wt_tensor *momentum_buf, const wt_sgd_options *opts)
{
    return wt_sgd_step_sched(param, grad, momentum_buf, NULL, NULL, 0.0, opts);
}

wt_status wt_adamw_step(wt_tensor *param, const wt_tensor *grad, wt_tensor *m, wt_tensor *v, int64_t step,
                        const wt_adamw_options *opts)
{
    return wt_adamw_step_sched(param, grad, m, v, step, NULL, NULL, 0.0, opts);
}

/* With sched (an optimizer's device scalars) step only passes the check. */
wt_status wt_adamw_step_sched(wt_tensor *param, const wt_tensor *grad, wt_tensor *m, wt_tensor *v, int64_t step,
                              const wt_tensor *sched, const wt_tensor *clip_norm, double max_norm,
                              const wt_adamw_options *opts)
{
    const char *fn = "wt_adamw_step";
    if (!param || !grad) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: param or grad is NULL", fn);
    wt_adamw_options o;
    wt_status st_opts = wt_adamw_options_read(fn, opts, &o);
    if (st_opts != WT_OK) return st_opts;
    if (step < 1) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: step counts from 1 (got %lld)", fn, (long long)step);
    if (!isfinite(o.lr) || !(o.beta1 >= 0 && o.beta1 < 1) || !(o.beta2 >= 0 && o.beta2 < 1) || !(o.eps >= 0) ||
        !isfinite(o.eps) || !isfinite(o.weight_decay))
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: betas must lie in [0, 1), eps >= 0, lr and weight_decay finite", fn);
    const wt_tensor *all[4] = {param, grad, m, v};
    wt_status st;
    if ((st = check_state(fn, "param", param, param, (const wt_tensor *const[]){grad, m, v}, 3)) != WT_OK ||
        (st = check_state(fn, "m", m, param, (const wt_tensor *const[]){param, grad, v}, 3)) != WT_OK ||
        (st = check_state(fn, "v", v, param, all, 3)) != WT_OK)
        return st;
    if (grad->dtype != WT_F32) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: grad must be f32", fn);
    if (grad->storage->ctx != param->storage->ctx) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: grad belongs to another context", fn);
    if (!same_shape(grad, param)) return wt_fail(WT_ERR_SHAPE, "%s: grad differs in shape from param", fn);
    double t = (double)step;
    wt_optimizer_update u = {.kind = WT_OPT_ADAMW, .param = param, .grad = grad, .m = m, .v = v, .lr = o.lr,
                             .weight_decay = o.weight_decay, .beta1 = o.beta1, .beta2 = o.beta2, .eps = o.eps,
                             .bias1 = (float)(1.0 - pow(o.beta1, t)), .bias2 = (float)(1.0 - pow(o.beta2, t)),
                             .sched = sched, .clip_norm = clip_norm, .max_norm = (float)max_norm};
    return run_update(fn, &u);
}

wt_status wt_optimizer_advance(wt_tensor *sched, float beta1, float beta2)
{
    wt_context *ctx = wt_ctx_of(sched);
    wt_status st = need_op("wt_optimizer_step", WT_NODE_OPTIMIZER_STEP, ctx);
    if (st != WT_OK) return st;
    wt_optimizer_update u = {.kind = WT_OPT_ADVANCE, .param = sched, .beta1 = beta1, .beta2 = beta2};
    return wt_node_run(ctx, &(wt_node){.kind = WT_NODE_OPTIMIZER_STEP, .out = {sched}, .p.opt = u});
}
