/* Derivatives of reductions, matrix products and the nn ops. Composed of
 * public ops, or of the library's backward ops where one exists
 * (conv2d_backward, the pooling backward ops, cross_entropy_backward,
 * interpolate_backward, activation_backward). */
#include "autograd/rules.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define G (gout[0])
#define X (n->saved_in[0])
#define Y (n->saved_out[0])

static wt_status finish(chain *c)
{
    chain_release(c);
    return c->st;
}

static const int *axes_of(const wt_grad_node *n, int *buf)
{
    for (int k = 0; k < WT_MAX_DIMS; k++) buf[k] = (int)n->p.i[1 + k];
    return buf;
}

/* --- reductions: p.i[0] naxes, p.i[1..] axes, p.b[0] keepdims --- */

RULE(grad_sum) { return wt_grad_expand_back(n, G, &gin[0]); }

RULE(grad_mean)
{
    chain c = {0};
    wt_tensor *e = STEP(&c, wt_grad_expand_back, n, G);
    keep_as(&c, STEP(&c, wt_div_scalar, e, wt_grad_reduced_count(n)), &gin[0]);
    return finish(&c);
}

/* The reduction's gradient g shared evenly by the elements of v equal to
 * the result y (ties split it): (v == y) * g / count(v == y). */
static wt_tensor *share_among_ties(chain *c, const wt_grad_node *n, const wt_tensor *v, wt_tensor *const *gout)
{
    wt_tensor *ye = STEP(c, wt_grad_expand_back, n, Y);
    wt_tensor *hit = STEP(c, wt_eq, v, ye);
    wt_tensor *h = STEP(c, wt_cast, hit, WT_F32);
    int axes[WT_MAX_DIMS];
    wt_tensor *cnt = STEP(c, wt_sum, h, (int)n->p.i[0], axes_of(n, axes), true);
    wt_tensor *gk = STEP(c, wt_grad_keepdims, n, G);
    wt_tensor *share = STEP(c, wt_div, gk, cnt);
    return STEP(c, wt_mul, h, share);
}

/* max / min: shared evenly by the elements equal to the result (PyTorch's
 * amax / amin). */
RULE(grad_maxmin)
{
    chain c = {0};
    keep_as(&c, share_among_ties(&c, n, X, gout), &gin[0]);
    return finish(&c);
}

/* prod: g * y / x (an input equal to 0 gives a non-finite gradient). */
RULE(grad_prod)
{
    chain c = {0};
    wt_tensor *gy = STEP(&c, wt_mul, G, Y);
    wt_tensor *e = STEP(&c, wt_grad_expand_back, n, gy);
    keep_as(&c, STEP(&c, wt_div, e, X), &gin[0]);
    return finish(&c);
}

/* var: 2 (x - mean) / (N - correction); std: that / (2 std). */
static wt_status var_std(const wt_grad_node *n, wt_tensor *const *gout, wt_tensor **gin, bool is_std)
{
    chain c = {0};
    int axes[WT_MAX_DIMS];
    wt_tensor *m = STEP(&c, wt_mean, X, (int)n->p.i[0], axes_of(n, axes), true);
    wt_tensor *d = STEP(&c, wt_sub, X, m);
    double dof = wt_grad_reduced_count(n) - n->p.d[0];
    wt_tensor *g = (wt_tensor *)G;
    if (is_std) g = STEP(&c, wt_div, G, Y);
    wt_tensor *e = STEP(&c, wt_grad_expand_back, n, g);
    wt_tensor *p = STEP(&c, wt_mul, e, d);
    keep_as(&c, STEP(&c, wt_mul_scalar, p, (is_std ? 1.0 : 2.0) / dof), &gin[0]);
    return finish(&c);
}
RULE(grad_var) { return var_std(n, gout, gin, false); }
RULE(grad_std) { return var_std(n, gout, gin, true); }

RULE(grad_logsumexp) /* g exp(x - y) */
{
    chain c = {0};
    wt_tensor *ye = STEP(&c, wt_grad_expand_back, n, Y);
    wt_tensor *d = STEP(&c, wt_sub, X, ye);
    wt_tensor *e = STEP(&c, wt_exp, d);
    wt_tensor *ge = STEP(&c, wt_grad_expand_back, n, G);
    keep_as(&c, STEP(&c, wt_mul, ge, e), &gin[0]);
    return finish(&c);
}

/* norm, p.d[0] = ord: 1: g sign(x); 2: g x / y (0 where y is 0); inf: g
 * sign(x) shared by the elements of largest magnitude. */
RULE(grad_norm)
{
    chain c = {0};
    double ord = n->p.d[0];
    wt_tensor *ge = NULL, *d = NULL;
    if (ord == 1.0) {
        ge = STEP(&c, wt_grad_expand_back, n, G);
        d = STEP(&c, wt_sign, X);
    } else if (ord == 2.0) {
        wt_tensor *zero = STEP(&c, wt_eq_scalar, Y, 0.0);
        wt_tensor *ys = STEP(&c, wt_masked_fill, Y, zero, INFINITY);
        wt_tensor *q = STEP(&c, wt_div, G, ys);
        ge = STEP(&c, wt_grad_expand_back, n, q);
        d = (wt_tensor *)X;
    } else {
        wt_tensor *ax = STEP(&c, wt_abs, X);
        ge = share_among_ties(&c, n, ax, gout);
        d = STEP(&c, wt_sign, X);
    }
    keep_as(&c, STEP(&c, wt_mul, ge, d), &gin[0]);
    return finish(&c);
}

/* --- matrix products --- */

RULE(grad_matmul)
{
    chain c = {0};
    const wt_tensor *a = n->saved_in[0], *b = n->saved_in[1];
    wt_tensor *a2 = a->ndim == 1 ? STEP(&c, wt_unsqueeze, a, 0) : (wt_tensor *)a;
    wt_tensor *b2 = b->ndim == 1 ? STEP(&c, wt_unsqueeze, b, 1) : (wt_tensor *)b;
    wt_tensor *g2 = (wt_tensor *)G;
    if (b->ndim == 1) g2 = STEP(&c, wt_unsqueeze, g2, -1);
    if (a->ndim == 1) g2 = STEP(&c, wt_unsqueeze, g2, g2 ? g2->ndim - 1 : 0);
    if (wt_grad_needs(n, 0) && c.st == WT_OK) {
        wt_tensor *bt = STEP(&c, wt_transpose, b2, -1, -2);
        wt_tensor *ga = STEP(&c, wt_matmul, g2, bt);
        wt_tensor *gr = STEP(&c, wt_grad_reduce_to, ga, a2->ndim, a2->shape);
        keep_as(&c, STEP(&c, wt_grad_reshape_in, n, 0, gr), &gin[0]);
    }
    if (wt_grad_needs(n, 1) && c.st == WT_OK) {
        wt_tensor *at = STEP(&c, wt_transpose, a2, -1, -2);
        wt_tensor *gb = STEP(&c, wt_matmul, at, g2);
        wt_tensor *gr = STEP(&c, wt_grad_reduce_to, gb, b2->ndim, b2->shape);
        keep_as(&c, STEP(&c, wt_grad_reshape_in, n, 1, gr), &gin[1]);
    }
    return finish(&c);
}

/* linear(x, w [out, in], bias [out]) */
RULE(grad_linear)
{
    chain c = {0};
    const wt_tensor *x = n->saved_in[0], *w = n->saved_in[1];
    int64_t nout = n->in_shape[1][0], nin = n->in_shape[1][1];
    if (wt_grad_needs(n, 0)) keep_as(&c, STEP(&c, wt_matmul, G, w), &gin[0]);
    if (wt_grad_needs(n, 1)) {
        wt_tensor *g2 = STEP(&c, wt_reshape, G, 2, (const int64_t[]){-1, nout});
        wt_tensor *x2 = STEP(&c, wt_reshape, x, 2, (const int64_t[]){-1, nin});
        wt_tensor *gt = STEP(&c, wt_transpose, g2, 0, 1);
        keep_as(&c, STEP(&c, wt_matmul, gt, x2), &gin[1]);
    }
    if (n->given[2] && wt_grad_needs(n, 2)) keep_as(&c, STEP(&c, wt_grad_reduce_in, n, 2, G), &gin[2]);
    return finish(&c);
}

/* linear_fused recorded as one op (api/linear_fused.c, rows_path): inputs x, w,
 * bias, residual; p.b[0] input_gelu, the product's input gelu(x) kept as
 * extra[0]. out = a @ w^T + bias + residual with a = gelu(x) or x:
 *   dx = (G @ w) * gelu'(x)   (G @ w without input_gelu)
 *   dw = G^T a,  dbias = sum of G's rows,  dresidual = G
 * GELU's derivative by wt_gelu_backward after the product; under
 * WT_MATMUL_EPILOGUE=2 or 3 in the product's stores where the backend has
 * that (wt_matmul_epilogue): on an H200 the GPT step's dy @ w2 took
 * 657 us so, against 524 us and 107 us for the product and the pass. */
static wt_status gelu_input_grad(const wt_tensor *g2, const wt_tensor *w, const wt_tensor *x, wt_tensor **out)
{
    const int64_t nin = w->shape[1];
    wt_tensor *d = NULL, *p = NULL, *x2 = NULL;
    wt_status st = wt_knob_count(WT_KNOB_MATMUL_EPILOGUE, 1) >= 2
                       ? wt_matmul_epilogue(g2, w, NULL, WT_MATMUL_ACT_GELU_GRAD, x, &d)
                       : WT_ERR_UNSUPPORTED;
    if (st == WT_ERR_UNSUPPORTED) {
        if ((st = wt_matmul(g2, w, &p)) == WT_OK &&
            (st = wt_reshape(x, 2, (const int64_t[]){-1, nin}, &x2)) == WT_OK)
            st = wt_gelu_backward(p, x2, &d);
    }
    if (st == WT_OK) st = wt_reshape(d, x->ndim, x->shape, out);
    wt_tensor_release(d);
    wt_tensor_release(p);
    wt_tensor_release(x2);
    return st;
}

RULE(grad_linear_fused)
{
    chain c = {0};
    const wt_tensor *x = n->saved_in[0], *w = n->saved_in[1];
    const bool input_gelu = n->p.b[0];
    int64_t nout = n->in_shape[1][0], nin = n->in_shape[1][1];
    wt_tensor *g2 = STEP(&c, wt_reshape, G, 2, (const int64_t[]){-1, nout});
    if (wt_grad_needs(n, 0)) {
        if (input_gelu) keep_as(&c, STEP(&c, gelu_input_grad, g2, w, x), &gin[0]);
        else keep_as(&c, STEP(&c, wt_matmul, G, w), &gin[0]);
    }
    if (wt_grad_needs(n, 1)) {
        const wt_tensor *a = input_gelu ? n->extra[0] : x;
        wt_tensor *a2 = STEP(&c, wt_reshape, a, 2, (const int64_t[]){-1, nin});
        wt_tensor *gt = STEP(&c, wt_transpose, g2, 0, 1);
        keep_as(&c, STEP(&c, wt_matmul, gt, a2), &gin[1]);
    }
    if (n->given[2] && wt_grad_needs(n, 2)) keep_as(&c, STEP(&c, wt_grad_reduce_in, n, 2, G), &gin[2]);
    if (n->given[3] && wt_grad_needs(n, 3)) keep_as(&c, STEP(&c, wt_grad_identity, G), &gin[3]);
    return finish(&c);
}

/* --- softmax and norms --- */

RULE(grad_softmax) /* y (g - sum(g y)) */
{
    chain c = {0};
    int axis = (int)n->p.i[0];
    wt_tensor *gy = STEP(&c, wt_mul, G, Y);
    wt_tensor *s = STEP(&c, wt_sum, gy, 1, &axis, true);
    wt_tensor *d = STEP(&c, wt_sub, G, s);
    keep_as(&c, STEP(&c, wt_mul, Y, d), &gin[0]);
    return finish(&c);
}

RULE(grad_log_softmax) /* g - exp(y) sum(g) */
{
    chain c = {0};
    int axis = (int)n->p.i[0];
    wt_tensor *s = STEP(&c, wt_sum, G, 1, &axis, true);
    wt_tensor *e = STEP(&c, wt_exp, Y);
    wt_tensor *p = STEP(&c, wt_mul, e, s);
    keep_as(&c, STEP(&c, wt_sub, G, p), &gin[0]);
    return finish(&c);
}

/* The last k axes of an ndim tensor. */
static int last_axes(int ndim, int k, int *axes)
{
    for (int j = 0; j < k; j++) axes[j] = ndim - k + j;
    return k;
}

/* layer_norm (inputs x, weight, bias; p.i[0] the normalised axes, p.d[0]
 * eps) and rms_norm (x, weight), from x recomputed statistics:
 *   x^ = (x - mean) r, r = 1 / sqrt(var + eps)  (rms: x^ = x r, r = 1 / sqrt(mean(x^2) + eps))
 *   dx = r (g w - mean(g w) - x^ mean(g w x^))   (rms: without the middle term) */
static wt_status norm_rule(const wt_grad_node *n, wt_tensor *const *gout, wt_tensor **gin, bool rms)
{
    chain c = {0};
    int axes[WT_MAX_DIMS];
    int k = last_axes(n->in_ndim[0], (int)n->p.i[0], axes);
    const wt_tensor *w = n->given[1] ? n->saved_in[1] : NULL;
    const bool want_w = n->given[1] && wt_grad_needs(n, 1);
    /* One pass a row where the backend has it (the NORM_BACKWARD node): dx,
     * and dy x^ for the weight's gradient. */
    if (wt_grad_needs(n, 0)) {
        wt_tensor *fdx = NULL, *fgx = NULL;
        wt_status fst = wt_norm_backward_fused(G, X, k, w, rms, n->p.d[0], &fdx, want_w ? &fgx : NULL);
        if (fst == WT_OK) {
            give(fdx, &gin[0]);
            if (want_w) keep_as(&c, STEP(&c, wt_grad_reduce_in, n, 1, fgx), &gin[1]);
            if (!rms && n->given[2] && wt_grad_needs(n, 2))
                keep_as(&c, STEP(&c, wt_grad_reduce_in, n, 2, G), &gin[2]);
            wt_tensor_release(fdx), wt_tensor_release(fgx);
            return finish(&c);
        }
        if (fst != WT_ERR_UNSUPPORTED) return fst;
    }
    wt_tensor *xc = (wt_tensor *)X;
    if (!rms) {
        wt_tensor *m = STEP(&c, wt_mean, X, k, axes, true);
        xc = STEP(&c, wt_sub, X, m);
    }
    wt_tensor *sq = STEP(&c, wt_square, xc);
    wt_tensor *v = STEP(&c, wt_mean, sq, k, axes, true);
    wt_tensor *ve = STEP(&c, wt_add_scalar, v, n->p.d[0]);
    wt_tensor *r = STEP(&c, wt_rsqrt, ve);
    wt_tensor *xh = STEP(&c, wt_mul, xc, r);
    if (wt_grad_needs(n, 0)) {
        wt_tensor *gw = w ? STEP(&c, wt_mul, G, w) : (wt_tensor *)G;
        wt_tensor *gx = STEP(&c, wt_mul, gw, xh);
        wt_tensor *m2 = STEP(&c, wt_mean, gx, k, axes, true);
        wt_tensor *t = STEP(&c, wt_mul, xh, m2);
        wt_tensor *d = STEP(&c, wt_sub, gw, t);
        if (!rms) {
            wt_tensor *m1 = STEP(&c, wt_mean, gw, k, axes, true);
            d = STEP(&c, wt_sub, d, m1);
        }
        keep_as(&c, STEP(&c, wt_mul, d, r), &gin[0]);
    }
    if (want_w) {
        wt_tensor *gx = STEP(&c, wt_mul, G, xh);
        keep_as(&c, STEP(&c, wt_grad_reduce_in, n, 1, gx), &gin[1]);
    }
    if (!rms && n->given[2] && wt_grad_needs(n, 2)) keep_as(&c, STEP(&c, wt_grad_reduce_in, n, 2, G), &gin[2]);
    return finish(&c);
}
RULE(grad_layer_norm) { return norm_rule(n, gout, gin, false); }
RULE(grad_rms_norm) { return norm_rule(n, gout, gin, true); }

RULE(grad_cross_entropy)
{
    return wt_cross_entropy_backward(X, n->saved_in[1], G, &n->p.o.ce, &gin[0]);
}

/* --- attention (inputs q, k, v, mask; p.b[0] causal, p.d[0] scale) ---
 * Recomputes the probabilities P = softmax(q k^T s + mask) and takes
 *   dv = P^T g, dS = P (g v^T - rowsum(g v^T P)), dq = dS k s, dk = dS^T q s
 * (grouped heads: k and v repeated to q's heads, their gradients summed
 * back). This first version holds the [Sq, Skv] matrices. */
RULE(grad_attention)
{
    chain c = {0};
    const wt_tensor *q = n->saved_in[0], *k = n->saved_in[1], *v = n->saved_in[2], *mask = n->saved_in[3];
    bool three = q->ndim == 3;
    wt_tensor *q4 = three ? STEP(&c, wt_unsqueeze, q, 0) : (wt_tensor *)q;
    wt_tensor *k4 = three ? STEP(&c, wt_unsqueeze, k, 0) : (wt_tensor *)k;
    wt_tensor *v4 = three ? STEP(&c, wt_unsqueeze, v, 0) : (wt_tensor *)v;
    wt_tensor *g4 = three ? STEP(&c, wt_unsqueeze, G, 0) : (wt_tensor *)G;
    wt_tensor *y4 = three ? STEP(&c, wt_unsqueeze, Y, 0) : (wt_tensor *)Y;
    if (c.st != WT_OK) return finish(&c);
    int64_t B = q4->shape[0], Hq = q4->shape[1], Sq = q4->shape[2], D = q4->shape[3];
    int64_t Hkv = k4->shape[1], Skv = k4->shape[2], Dv = v4->shape[3], grp = Hq / Hkv;
    double s = n->p.d[0] != 0.0 ? n->p.d[0] : 1.0 / sqrt((double)D);
    /* Without a mask: the fused kernel, which stores no [Sq, Skv] matrix;
     * the composition below where the backend has none or prefers it. */
    if (!mask) {
        wt_tensor *f[3] = {0};
        wt_status fst = wt_attention_backward_fused(q4, k4, v4, g4, y4, n->extra[0], n->p.b[0], (float)s, &f[0], &f[1],
                                                    &f[2]);
        if (fst == WT_OK) {
            /* 4-D: the gradients as they are, which may be laid out as
             * their inputs (wt_reshape would copy such a view). */
            for (int j = 0; j < 3 && c.st == WT_OK; j++) {
                if (!wt_grad_needs(n, j)) continue;
                if (three) {
                    c.st = wt_grad_reshape_in(n, j, f[j], &gin[j]);
                } else {
                    gin[j] = f[j];
                    f[j] = NULL;
                }
            }
            for (int j = 0; j < 3; j++) wt_tensor_release(f[j]);
            return finish(&c);
        }
        if (fst != WT_ERR_UNSUPPORTED) {
            c.st = fst;
            return finish(&c);
        }
    }
    wt_tensor *kx = k4, *vx = v4;
    if (grp > 1) {
        wt_tensor *ku = STEP(&c, wt_unsqueeze, k4, 2);
        wt_tensor *ke = STEP(&c, wt_expand, ku, 5, (const int64_t[]){B, Hkv, grp, Skv, D});
        kx = STEP(&c, wt_reshape, ke, 4, (const int64_t[]){B, Hq, Skv, D});
        wt_tensor *vu = STEP(&c, wt_unsqueeze, v4, 2);
        wt_tensor *vE = STEP(&c, wt_expand, vu, 5, (const int64_t[]){B, Hkv, grp, Skv, Dv});
        vx = STEP(&c, wt_reshape, vE, 4, (const int64_t[]){B, Hq, Skv, Dv});
    }
    wt_tensor *kt = STEP(&c, wt_transpose, kx, -1, -2);
    wt_tensor *qk = STEP(&c, wt_matmul, q4, kt);
    wt_tensor *S = STEP(&c, wt_mul_scalar, qk, s);
    if (mask && mask->dtype == WT_BOOL) {
        wt_tensor *off = STEP(&c, wt_logical_not, mask);
        S = STEP(&c, wt_masked_fill, S, off, -INFINITY);
    } else if (mask) {
        S = STEP(&c, wt_add, S, mask);
    }
    if (n->p.b[0]) {
        wt_tensor *ones = STEP(&c, wt_tensor_full, n->ctx, WT_BOOL, 2, (const int64_t[]){Sq, Skv}, 1.0);
        wt_tensor *keep = STEP(&c, wt_tril, ones, Skv - Sq);
        wt_tensor *off = STEP(&c, wt_logical_not, keep);
        S = STEP(&c, wt_masked_fill, S, off, -INFINITY);
    }
    wt_tensor *P0 = STEP(&c, wt_softmax, S, -1);
    wt_tensor *nan = STEP(&c, wt_ne, P0, P0); /* rows that see no key: 0 */
    wt_tensor *P = STEP(&c, wt_masked_fill, P0, nan, 0.0);
    wt_tensor *gvx = NULL, *gkx = NULL;
    if (wt_grad_needs(n, 2)) {
        wt_tensor *pt = STEP(&c, wt_transpose, P, -1, -2);
        gvx = STEP(&c, wt_matmul, pt, g4);
    }
    wt_tensor *vt = STEP(&c, wt_transpose, vx, -1, -2);
    wt_tensor *gP = STEP(&c, wt_matmul, g4, vt);
    wt_tensor *gpp = STEP(&c, wt_mul, gP, P);
    wt_tensor *rs = STEP(&c, wt_sum, gpp, 1, (const int[]){-1}, true);
    wt_tensor *dd = STEP(&c, wt_sub, gP, rs);
    wt_tensor *gS = STEP(&c, wt_mul, P, dd);
    if (wt_grad_needs(n, 0)) {
        wt_tensor *gq = STEP(&c, wt_matmul, gS, kx);
        wt_tensor *gqs = STEP(&c, wt_mul_scalar, gq, s);
        keep_as(&c, STEP(&c, wt_grad_reshape_in, n, 0, gqs), &gin[0]);
    }
    if (wt_grad_needs(n, 1)) {
        wt_tensor *st_ = STEP(&c, wt_transpose, gS, -1, -2);
        wt_tensor *gk = STEP(&c, wt_matmul, st_, q4);
        gkx = STEP(&c, wt_mul_scalar, gk, s);
    }
    wt_tensor *grads[2] = {gkx, gvx};
    for (int j = 0; j < 2; j++) {
        int in = 1 + j;
        if (!grads[j] || c.st != WT_OK) continue;
        wt_tensor *gsum = grads[j];
        if (grp > 1) {
            int64_t d = j == 0 ? D : Dv;
            wt_tensor *r5 = STEP(&c, wt_reshape, grads[j], 5, (const int64_t[]){B, Hkv, grp, Skv, d});
            gsum = STEP(&c, wt_sum, r5, 1, (const int[]){2}, false);
        }
        keep_as(&c, STEP(&c, wt_grad_reshape_in, n, in, gsum), &gin[in]);
    }
    if (mask && mask->dtype != WT_BOOL && wt_grad_needs(n, 3)) {
        wt_tensor *gm = three ? STEP(&c, wt_squeeze, gS, 1, (const int[]){0}) : gS;
        keep_as(&c, STEP(&c, wt_grad_reduce_in, n, 3, gm), &gin[3]);
    }
    return finish(&c);
}

/* rope rotates pairs (i, i + D/2) by position angles: its transpose is
 * the rotation by the opposite angles, which is rope between two swaps of
 * the halves (a roll by D/2). p.d[0] theta, p.i[0] offset, p.i[1] layout. */
RULE(grad_rope)
{
    chain c = {0};
    int64_t half = n->in_shape[0][n->in_ndim[0] - 1] / 2;
    wt_tensor *a = STEP(&c, wt_roll, G, 1, &half, (const int[]){-1});
    wt_tensor *r = STEP(&c, wt_rope, a, n->p.d[0], n->p.i[0], (wt_rope_layout)n->p.i[1]);
    keep_as(&c, STEP(&c, wt_roll, r, 1, &half, (const int[]){-1}), &gin[0]);
    return finish(&c);
}

/* --- convolution and pooling --- */

/* t with a leading batch axis when it has none (the ops' unbatched form). */
static wt_tensor *batched(chain *c, const wt_tensor *t, int ndim)
{
    return t->ndim == ndim ? (wt_tensor *)t : STEP(c, wt_unsqueeze, t, 0);
}

RULE(grad_conv2d) /* inputs x, weight, bias; p.o.conv */
{
    chain c = {0};
    wt_tensor *x = batched(&c, X, 4), *g = batched(&c, G, 4);
    wt_tensor *dx = NULL, *dw = NULL, *db = NULL;
    if (c.st == WT_OK)
        c.st = wt_conv2d_backward(x, n->saved_in[1], g, &n->p.o.conv, wt_grad_needs(n, 0) ? &dx : NULL,
                                  wt_grad_needs(n, 1) ? &dw : NULL,
                                  n->given[2] && wt_grad_needs(n, 2) ? &db : NULL);
    if (c.st == WT_OK && dx) c.st = wt_grad_reshape_in(n, 0, dx, &gin[0]);
    wt_tensor_release(dx);
    gin[1] = dw;
    gin[2] = db;
    return finish(&c);
}

/* conv1d: conv2d over [N, C, 1, L]. */
RULE(grad_conv1d)
{
    chain c = {0};
    const wt_conv_options *o = &n->p.o.conv;
    wt_conv_options o2;
    wt_conv_options_init(&o2);
    o2.stride[1] = o->stride[0];
    o2.dilation[1] = o->dilation[0];
    o2.padding[2] = o->padding[0];
    o2.padding[3] = o->padding[1];
    o2.groups = o->groups;
    o2.same = o->same;
    wt_tensor *x = batched(&c, X, 3), *g = batched(&c, G, 3);
    wt_tensor *x4 = STEP(&c, wt_unsqueeze, x, 2);
    wt_tensor *g4 = STEP(&c, wt_unsqueeze, g, 2);
    wt_tensor *w4 = STEP(&c, wt_unsqueeze, n->saved_in[1], 2);
    wt_tensor *dx = NULL, *dw = NULL, *db = NULL;
    if (c.st == WT_OK)
        c.st = wt_conv2d_backward(x4, w4, g4, &o2, wt_grad_needs(n, 0) ? &dx : NULL, wt_grad_needs(n, 1) ? &dw : NULL,
                                  n->given[2] && wt_grad_needs(n, 2) ? &db : NULL);
    if (c.st == WT_OK && dx) c.st = wt_grad_reshape_in(n, 0, dx, &gin[0]);
    if (c.st == WT_OK && dw) c.st = wt_grad_reshape_in(n, 1, dw, &gin[1]);
    wt_tensor_release(dx);
    wt_tensor_release(dw);
    gin[2] = db;
    return finish(&c);
}

/* max_pool2d, adaptive_max_pool2d: through the indices the forward pass
 * kept (extra[0]). */
RULE(grad_max_pool2d)
{
    chain c = {0};
    wt_tensor *x = batched(&c, X, 4), *g = batched(&c, G, 4), *i = batched(&c, n->extra[0], 4);
    wt_tensor *dx = STEP(&c, wt_max_pool2d_backward, g, i, x);
    keep_as(&c, STEP(&c, wt_grad_reshape_in, n, 0, dx), &gin[0]);
    return finish(&c);
}

RULE(grad_avg_pool2d)
{
    chain c = {0};
    wt_tensor *x = batched(&c, X, 4), *g = batched(&c, G, 4);
    wt_tensor *dx = STEP(&c, wt_avg_pool2d_backward_v2, g, x, &n->p.o.pool);
    keep_as(&c, STEP(&c, wt_grad_reshape_in, n, 0, dx), &gin[0]);
    return finish(&c);
}

/* dropout: the same mask again from the seed (p.d[0] p, p.i[0] seed). */
RULE(grad_dropout)
{
    chain c = {0};
    wt_tensor *ones = STEP(&c, wt_tensor_ones, n->ctx, WT_F32, n->in_ndim[0], n->in_shape[0]);
    wt_tensor *m = STEP(&c, wt_dropout, ones, (float)n->p.d[0], (uint64_t)n->p.i[0]);
    keep_as(&c, STEP(&c, wt_mul, G, m), &gin[0]);
    return finish(&c);
}

RULE(grad_interpolate) { return wt_interpolate_backward(G, X, &n->p.o.interp, &gin[0]); }

/* conv_transpose2d is the adjoint of conv2d in its input for the same
 * weight and options: dx = conv2d(g, w), and d<conv_transpose(x, w), g>/dw
 * = d<x, conv2d(g, w)>/dw, conv2d's weight gradient with x as its upstream
 * gradient and g as its input. output_padding only adds rows conv2d does
 * not read back. */
RULE(grad_conv_transpose2d) /* inputs x, weight, bias; p.o.conv */
{
    chain c = {0};
    wt_conv_options o = n->p.o.conv;
    o.output_padding[0] = o.output_padding[1] = 0;
    wt_tensor *x = batched(&c, X, 4), *g = batched(&c, G, 4);
    wt_tensor *gf = f32_contiguous(&c, g), *w = f32_contiguous(&c, n->saved_in[1]);
    if (wt_grad_needs(n, 0)) {
        wt_tensor *dx = STEP(&c, wt_conv2d, gf, w, NULL, &o);
        keep_as(&c, STEP(&c, wt_grad_reshape_in, n, 0, dx), &gin[0]);
    }
    if (wt_grad_needs(n, 1) && c.st == WT_OK) {
        wt_tensor *xf = f32_contiguous(&c, x);
        if (c.st == WT_OK) c.st = wt_conv2d_backward_v2(xf, gf, w, &o, NULL, &gin[1], NULL);
    }
    if (n->given[2] && wt_grad_needs(n, 2))
        keep_as(&c, STEP(&c, wt_sum, gf, 3, (const int[]){0, 2, 3}, false), &gin[2]);
    return finish(&c);
}

/* adaptive_avg_pool2d is separable: out = A_h x A_w^T with A [out, in]
 * holding 1 / (window length) over each output's window [floor(i in /
 * out), ceil((i + 1) in / out)), so dx = A_h^T g A_w. p.i[0], p.i[1]:
 * the output size. */
static wt_tensor *window_matrix(chain *c, wt_context *ctx, int64_t out, int64_t in, bool transposed)
{
    if (c->st != WT_OK) return NULL;
    float *a = calloc((size_t)(out * in), sizeof *a);
    if (!a) {
        c->st = wt_fail(WT_ERR_OUT_OF_MEMORY, "adaptive_avg_pool2d backward: out of host memory");
        return NULL;
    }
    for (int64_t i = 0; i < out; i++) {
        int64_t lo = i * in / out, hi = ((i + 1) * in + out - 1) / out;
        for (int64_t j = lo; j < hi; j++) {
            float v = 1.0f / (float)(hi - lo);
            if (transposed) a[j * out + i] = v;
            else a[i * in + j] = v;
        }
    }
    const int64_t shape[2] = {transposed ? in : out, transposed ? out : in};
    wt_tensor *t = STEP(c, wt_tensor_from_data, ctx, WT_F32, 2, shape, a);
    free(a);
    return t;
}

RULE(grad_adaptive_avg_pool2d)
{
    chain c = {0};
    int nd = n->in_ndim[0];
    int64_t H = n->in_shape[0][nd - 2], W = n->in_shape[0][nd - 1];
    wt_tensor *aht = window_matrix(&c, n->ctx, n->p.i[0], H, true); /* [H, oh] */
    wt_tensor *aw = window_matrix(&c, n->ctx, n->p.i[1], W, false); /* [ow, W] */
    wt_tensor *gf = f32_contiguous(&c, G);
    wt_tensor *rows = STEP(&c, wt_matmul, aht, gf);
    keep_as(&c, STEP(&c, wt_matmul, rows, aw), &gin[0]);
    return finish(&c);
}

/* batch_norm: wt_batch_norm_backward_v2 with the forward's mode (p.b[0]
 * training, p.d[0] eps); in inference, with the running statistics the
 * node kept (extra). */
RULE(grad_batch_norm) /* inputs x, weight, bias */
{
    wt_batch_norm_options o;
    wt_batch_norm_options_init(&o);
    o.training = n->p.b[0];
    o.eps = n->p.d[0];
    const wt_tensor *w = n->given[1] ? n->saved_in[1] : NULL;
    return wt_batch_norm_backward_v2(G, X, o.training ? NULL : n->extra[0], o.training ? NULL : n->extra[1], w, &o,
                                     wt_grad_needs(n, 0) ? &gin[0] : NULL,
                                     n->given[1] && wt_grad_needs(n, 1) ? &gin[1] : NULL,
                                     n->given[2] && wt_grad_needs(n, 2) ? &gin[2] : NULL);
}

/* group_norm: x_hat = group_norm(x) without affine, y = x_hat * w + b per
 * channel; dw, db summed over every axis but 1; dx is layer norm's input
 * gradient over each (image, group) row, from g * w. p.i[0] num_groups,
 * p.d[0] eps. */
RULE(grad_group_norm) /* inputs x, weight, bias */
{
    chain c = {0};
    const wt_tensor *x = X;
    int nd = x->ndim;
    int64_t N = x->shape[0], groups = n->p.i[0];
    int axes[WT_MAX_DIMS], naxes = 0;
    int64_t bshape[WT_MAX_DIMS];
    for (int i = 0; i < nd; i++) {
        if (i != 1) axes[naxes++] = i;
        bshape[i] = i == 1 ? x->shape[1] : 1;
    }
    wt_tensor *gf = f32_contiguous(&c, G), *xf = f32_contiguous(&c, x);
    wt_tensor *w = NULL;
    if (n->given[1]) {
        wt_tensor *wf = f32_contiguous(&c, n->saved_in[1]);
        w = STEP(&c, wt_reshape, wf, nd, bshape);
    }
    if (n->given[1] && wt_grad_needs(n, 1)) {
        wt_group_norm_options go;
        wt_group_norm_options_init(&go);
        go.eps = n->p.d[0];
        wt_tensor *xhat = STEP(&c, wt_group_norm_v2, xf, groups, NULL, NULL, &go);
        wt_tensor *p = STEP(&c, wt_mul, gf, xhat);
        keep_as(&c, STEP(&c, wt_sum, p, naxes, axes, false), &gin[1]);
    }
    if (n->given[2] && wt_grad_needs(n, 2)) keep_as(&c, STEP(&c, wt_sum, gf, naxes, axes, false), &gin[2]);
    if (wt_grad_needs(n, 0) && x->numel > 0) {
        wt_tensor *gh = w ? STEP(&c, wt_mul, gf, w) : gf;
        const int64_t rshape[2] = {N * groups, x->numel / (N * groups)};
        wt_tensor *xr = STEP(&c, wt_reshape, xf, 2, rshape);
        wt_tensor *ghc = STEP(&c, wt_contiguous, gh);
        wt_tensor *gr = STEP(&c, wt_reshape, ghc, 2, rshape);
        wt_tensor *dr = NULL;
        if (c.st == WT_OK) c.st = wt_layer_norm_backward(gr, xr, 1, NULL, n->p.d[0], &dr, NULL, NULL);
        if (c.st == WT_OK) c.st = wt_reshape(dr, nd, x->shape, &gin[0]);
        wt_tensor_release(dr);
    } else if (wt_grad_needs(n, 0)) {
        c.st = wt_grad_zeros_in(n, 0, &gin[0]);
    }
    return finish(&c);
}
