/* Derivatives of the elementwise ops (the unary and binary rows of
 * core/ops.def, where, masked_fill, cast and copies). A binary op called
 * with a scalar b (wt_add_scalar ...) records p.b[0] and b in p.d[2];
 * unary parameters are p.d[0], p.d[1]. Gradients of broadcast operands
 * are summed back to their shapes. */
#include "autograd/rules.h"

#include <math.h>

#define X (n->saved_in[0])
#define Y (n->saved_out[0])
#define G (gout[0])
#define SCALAR_B (n->p.b[0])
#define B_VALUE (n->p.d[2])

/* gin[0] = g * d, d computed by the caller's chain. */
static wt_status times(chain *c, const wt_tensor *g, wt_tensor *d, wt_tensor **gin)
{
    wt_tensor *r = STEP(c, wt_mul, g, d);
    keep_as(c, r, gin);
    chain_release(c);
    return c->st;
}

RULE(grad_neg) { (void)n; return wt_neg(G, &gin[0]); }
RULE(grad_pass) { (void)n; return wt_grad_identity(G, &gin[0]); }
RULE(grad_zero) { (void)gout; return wt_grad_zeros_in(n, 0, &gin[0]); }
RULE(grad_exp) { return wt_mul(G, Y, &gin[0]); }
RULE(grad_log) { return wt_div(G, X, &gin[0]); }

RULE(grad_sqrt)
{
    chain c = {0};
    wt_tensor *t = STEP(&c, wt_div, G, Y);
    wt_tensor *r = STEP(&c, wt_mul_scalar, t, 0.5);
    keep_as(&c, r, &gin[0]);
    chain_release(&c);
    return c.st;
}

static wt_status act(const wt_grad_node *n, wt_activation a, wt_tensor *const *gout, wt_tensor **gin)
{
    return wt_activation_backward(a, G, X, &gin[0]);
}
RULE(grad_relu) { return act(n, WT_ACT_RELU, gout, gin); }
RULE(grad_sigmoid) { return act(n, WT_ACT_SIGMOID, gout, gin); }
RULE(grad_tanh) { return act(n, WT_ACT_TANH, gout, gin); }
RULE(grad_gelu) { return act(n, WT_ACT_GELU, gout, gin); }
RULE(grad_gelu_tanh) { return act(n, WT_ACT_GELU_TANH, gout, gin); }
RULE(grad_silu) { return act(n, WT_ACT_SILU, gout, gin); }

RULE(grad_abs)
{
    chain c = {0};
    return times(&c, G, STEP(&c, wt_sign, X), gin);
}

RULE(grad_square)
{
    chain c = {0};
    return times(&c, G, STEP(&c, wt_mul_scalar, X, 2.0), gin);
}

RULE(grad_reciprocal) /* -g y^2 */
{
    chain c = {0};
    wt_tensor *y2 = STEP(&c, wt_square, Y);
    return times(&c, G, STEP(&c, wt_mul_scalar, y2, -1.0), gin);
}

RULE(grad_rsqrt) /* -g y^3 / 2 */
{
    chain c = {0};
    wt_tensor *y2 = STEP(&c, wt_square, Y);
    wt_tensor *y3 = STEP(&c, wt_mul, y2, Y);
    return times(&c, G, STEP(&c, wt_mul_scalar, y3, -0.5), gin);
}

RULE(grad_sin)
{
    chain c = {0};
    return times(&c, G, STEP(&c, wt_cos, X), gin);
}

RULE(grad_cos)
{
    chain c = {0};
    wt_tensor *s = STEP(&c, wt_sin, X);
    return times(&c, G, STEP(&c, wt_neg, s), gin);
}

RULE(grad_exp2)
{
    chain c = {0};
    return times(&c, G, STEP(&c, wt_mul_scalar, Y, log(2.0)), gin);
}

RULE(grad_log2)
{
    chain c = {0};
    wt_tensor *d = STEP(&c, wt_mul_scalar, X, log(2.0));
    wt_tensor *r = STEP(&c, wt_div, G, d);
    keep_as(&c, r, &gin[0]);
    chain_release(&c);
    return c.st;
}

RULE(grad_log1p)
{
    chain c = {0};
    wt_tensor *d = STEP(&c, wt_add_scalar, X, 1.0);
    wt_tensor *r = STEP(&c, wt_div, G, d);
    keep_as(&c, r, &gin[0]);
    chain_release(&c);
    return c.st;
}

RULE(grad_expm1)
{
    chain c = {0};
    return times(&c, G, STEP(&c, wt_add_scalar, Y, 1.0), gin);
}

RULE(grad_erf) /* 2 / sqrt(pi) exp(-x^2) */
{
    chain c = {0};
    wt_tensor *x2 = STEP(&c, wt_square, X);
    wt_tensor *m = STEP(&c, wt_mul_scalar, x2, -1.0);
    wt_tensor *e = STEP(&c, wt_exp, m);
    return times(&c, G, STEP(&c, wt_mul_scalar, e, 2.0 / sqrt(3.14159265358979323846)), gin);
}

RULE(grad_softsign) /* g / (1 + |x|)^2 */
{
    chain c = {0};
    /* One STEP a statement: a STEP inside another's arguments would run
     * the outer op on the inner one's NULL after a failure, and its error
     * would replace the first. */
    wt_tensor *ax = STEP(&c, wt_abs, X);
    wt_tensor *d = STEP(&c, wt_add_scalar, ax, 1.0);
    wt_tensor *d2 = STEP(&c, wt_square, d);
    return times(&c, G, STEP(&c, wt_reciprocal, d2), gin);
}

RULE(grad_softplus)
{
    chain c = {0};
    return times(&c, G, STEP(&c, wt_sigmoid, X), gin);
}

RULE(grad_mish) /* tanh(sp) + x sigmoid(x) (1 - tanh(sp)^2) */
{
    chain c = {0};
    wt_tensor *sp = STEP(&c, wt_softplus, X);
    wt_tensor *t = STEP(&c, wt_tanh, sp);
    wt_tensor *t2 = STEP(&c, wt_square, t);
    wt_tensor *one_m = STEP(&c, wt_sub_scalar, t2, 1.0); /* t^2 - 1 */
    wt_tensor *s = STEP(&c, wt_sigmoid, X);
    wt_tensor *xs = STEP(&c, wt_mul, X, s);
    wt_tensor *p = STEP(&c, wt_mul, xs, one_m);
    wt_tensor *d = STEP(&c, wt_sub, t, p);
    return times(&c, G, d, gin);
}

/* Where mask holds g * value_in, elsewhere g * value_out. */
static wt_status select_scaled(chain *c, const wt_tensor *g, const wt_tensor *mask, double value_in, double value_out,
                               wt_tensor **gin)
{
    wt_tensor *gi = STEP(c, wt_mul_scalar, g, value_in);
    wt_tensor *go = STEP(c, wt_mul_scalar, g, value_out);
    wt_tensor *r = STEP(c, wt_where, mask, gi, go);
    keep_as(c, r, gin);
    chain_release(c);
    return c->st;
}

RULE(grad_hardsigmoid) /* 1/6 on (-3, 3) */
{
    chain c = {0};
    wt_tensor *lo = STEP(&c, wt_gt_scalar, X, -3.0);
    wt_tensor *hi = STEP(&c, wt_lt_scalar, X, 3.0);
    wt_tensor *in = STEP(&c, wt_logical_and, lo, hi);
    return select_scaled(&c, G, in, 1.0 / 6.0, 0.0, gin);
}

RULE(grad_hardswish) /* 0 below -3, (2x + 3) / 6 up to 3, 1 above (PyTorch) */
{
    chain c = {0};
    wt_tensor *mid = STEP(&c, wt_mul_scalar, X, 1.0 / 3.0);
    wt_tensor *mid2 = STEP(&c, wt_add_scalar, mid, 0.5);
    wt_tensor *above = STEP(&c, wt_gt_scalar, X, 3.0);
    wt_tensor *below = STEP(&c, wt_lt_scalar, X, -3.0);
    wt_tensor *d1 = STEP(&c, wt_masked_fill, mid2, above, 1.0);
    wt_tensor *d = STEP(&c, wt_masked_fill, d1, below, 0.0);
    return times(&c, G, d, gin);
}

RULE(grad_leaky_relu) /* x > 0 ? 1 : alpha */
{
    chain c = {0};
    wt_tensor *pos = STEP(&c, wt_gt_scalar, X, 0.0);
    return select_scaled(&c, G, pos, 1.0, n->p.d[0], gin);
}

RULE(grad_elu) /* x > 0 ? 1 : alpha exp(x) */
{
    chain c = {0};
    wt_tensor *pos = STEP(&c, wt_gt_scalar, X, 0.0);
    wt_tensor *e = STEP(&c, wt_exp, X);
    wt_tensor *ae = STEP(&c, wt_mul_scalar, e, n->p.d[0]);
    wt_tensor *d = STEP(&c, wt_masked_fill, ae, pos, 1.0);
    return times(&c, G, d, gin);
}

RULE(grad_clamp) /* g where lo <= x <= hi (PyTorch) */
{
    chain c = {0};
    wt_tensor *lo = STEP(&c, wt_ge_scalar, X, n->p.d[0]);
    wt_tensor *hi = STEP(&c, wt_le_scalar, X, n->p.d[1]);
    wt_tensor *in = STEP(&c, wt_logical_and, lo, hi);
    return select_scaled(&c, G, in, 1.0, 0.0, gin);
}

/* --- binary --- */

/* gin[i] = t summed to input i's shape. */
static void to_input(chain *c, const wt_grad_node *n, int i, wt_tensor *t, wt_tensor **gin)
{
    if (c->st != WT_OK || !t || !wt_grad_needs(n, i)) return;
    c->st = wt_grad_reduce_in(n, i, t, &gin[i]);
}

static wt_status finish(chain *c)
{
    chain_release(c);
    return c->st;
}

RULE(grad_add)
{
    chain c = {0};
    to_input(&c, n, 0, G, gin);
    if (!SCALAR_B) to_input(&c, n, 1, G, gin);
    return finish(&c);
}

RULE(grad_sub)
{
    chain c = {0};
    to_input(&c, n, 0, G, gin);
    if (!SCALAR_B && wt_grad_needs(n, 1)) to_input(&c, n, 1, STEP(&c, wt_neg, G), gin);
    return finish(&c);
}

RULE(grad_mul)
{
    chain c = {0};
    if (SCALAR_B) {
        to_input(&c, n, 0, STEP(&c, wt_mul_scalar, G, B_VALUE), gin);
        return finish(&c);
    }
    if (wt_grad_needs(n, 0)) to_input(&c, n, 0, STEP(&c, wt_mul, G, n->saved_in[1]), gin);
    if (wt_grad_needs(n, 1)) to_input(&c, n, 1, STEP(&c, wt_mul, G, X), gin);
    return finish(&c);
}

RULE(grad_div) /* a / b: g / b, -g a / b^2 */
{
    chain c = {0};
    if (SCALAR_B) {
        to_input(&c, n, 0, STEP(&c, wt_div_scalar, G, B_VALUE), gin);
        return finish(&c);
    }
    const wt_tensor *b = n->saved_in[1];
    wt_tensor *ga = STEP(&c, wt_div, G, b);
    to_input(&c, n, 0, ga, gin);
    if (wt_grad_needs(n, 1)) {
        wt_tensor *q = STEP(&c, wt_div, ga, b);
        wt_tensor *p = STEP(&c, wt_mul, q, X);
        to_input(&c, n, 1, STEP(&c, wt_neg, p), gin);
    }
    return finish(&c);
}

/* maximum / minimum: the gradient goes to the winner, half each on ties
 * (PyTorch). */
static wt_status extremum(const wt_grad_node *n, wt_tensor *const *gout, wt_tensor **gin, bool is_max)
{
    chain c = {0};
    wt_tensor *win = SCALAR_B ? (is_max ? STEP(&c, wt_gt_scalar, X, B_VALUE) : STEP(&c, wt_lt_scalar, X, B_VALUE))
                              : (is_max ? STEP(&c, wt_gt, X, n->saved_in[1]) : STEP(&c, wt_lt, X, n->saved_in[1]));
    wt_tensor *tie = SCALAR_B ? STEP(&c, wt_eq_scalar, X, B_VALUE) : STEP(&c, wt_eq, X, n->saved_in[1]);
    wt_tensor *w1 = STEP(&c, wt_cast, win, WT_F32);
    wt_tensor *t1 = STEP(&c, wt_cast, tie, WT_F32);
    wt_tensor *th = STEP(&c, wt_mul_scalar, t1, 0.5);
    wt_tensor *wa = STEP(&c, wt_add, w1, th); /* a's share */
    to_input(&c, n, 0, STEP(&c, wt_mul, G, wa), gin);
    if (!SCALAR_B && wt_grad_needs(n, 1)) {
        wt_tensor *nb = STEP(&c, wt_mul_scalar, wa, -1.0);
        wt_tensor *wb = STEP(&c, wt_add_scalar, nb, 1.0);
        to_input(&c, n, 1, STEP(&c, wt_mul, G, wb), gin);
    }
    return finish(&c);
}
RULE(grad_maximum) { return extremum(n, gout, gin, true); }
RULE(grad_minimum) { return extremum(n, gout, gin, false); }

RULE(grad_pow) /* a^b: g b a^(b-1); g a^b log(a), 0 where a == 0 and b >= 0 */
{
    chain c = {0};
    if (SCALAR_B) {
        if (B_VALUE == 0.0) return wt_grad_zeros_in(n, 0, &gin[0]);
        wt_tensor *p = STEP(&c, wt_pow_scalar, X, B_VALUE - 1.0);
        wt_tensor *d = STEP(&c, wt_mul_scalar, p, B_VALUE);
        to_input(&c, n, 0, STEP(&c, wt_mul, G, d), gin);
        return finish(&c);
    }
    const wt_tensor *b = n->saved_in[1];
    if (wt_grad_needs(n, 0)) {
        wt_tensor *bm1 = STEP(&c, wt_sub_scalar, b, 1.0);
        wt_tensor *p = STEP(&c, wt_pow, X, bm1);
        wt_tensor *d = STEP(&c, wt_mul, p, b);
        /* b == 0: the derivative is 0 (pow(0, -1) * 0 would be NaN) */
        wt_tensor *bz = STEP(&c, wt_eq_scalar, b, 0.0);
        wt_tensor *d0 = STEP(&c, wt_masked_fill, d, bz, 0.0);
        to_input(&c, n, 0, STEP(&c, wt_mul, G, d0), gin);
    }
    if (wt_grad_needs(n, 1)) {
        wt_tensor *l = STEP(&c, wt_log, X);
        wt_tensor *d = STEP(&c, wt_mul, Y, l);
        wt_tensor *az = STEP(&c, wt_eq_scalar, X, 0.0);
        wt_tensor *bp = STEP(&c, wt_ge_scalar, b, 0.0);
        wt_tensor *m = STEP(&c, wt_logical_and, az, bp);
        wt_tensor *d0 = STEP(&c, wt_masked_fill, d, m, 0.0);
        to_input(&c, n, 1, STEP(&c, wt_mul, G, d0), gin);
    }
    return finish(&c);
}

/* fmod and remainder: a - b * q with q = trunc(a / b) or floor(a / b). */
static wt_status modulo(const wt_grad_node *n, wt_tensor *const *gout, wt_tensor **gin, bool floored)
{
    chain c = {0};
    to_input(&c, n, 0, G, gin);
    if (SCALAR_B || !wt_grad_needs(n, 1)) return finish(&c);
    wt_tensor *q = STEP(&c, wt_div, X, n->saved_in[1]);
    wt_tensor *f;
    if (floored) {
        f = STEP(&c, wt_floor, q);
    } else {
        wt_tensor *a = STEP(&c, wt_abs, q);
        wt_tensor *fa = STEP(&c, wt_floor, a);
        wt_tensor *s = STEP(&c, wt_sign, q);
        f = STEP(&c, wt_mul, fa, s);
    }
    wt_tensor *p = STEP(&c, wt_mul, G, f);
    to_input(&c, n, 1, STEP(&c, wt_neg, p), gin);
    return finish(&c);
}
RULE(grad_fmod) { return modulo(n, gout, gin, false); }
RULE(grad_remainder) { return modulo(n, gout, gin, true); }

RULE(grad_atan2) /* atan2(a, b): g b / (a^2 + b^2), -g a / (a^2 + b^2) */
{
    chain c = {0};
    wt_tensor *a2 = STEP(&c, wt_square, X);
    wt_tensor *den;
    if (SCALAR_B) den = STEP(&c, wt_add_scalar, a2, B_VALUE * B_VALUE);
    else {
        wt_tensor *b2 = STEP(&c, wt_square, n->saved_in[1]);
        den = STEP(&c, wt_add, a2, b2);
    }
    wt_tensor *gd = STEP(&c, wt_div, G, den);
    if (SCALAR_B) to_input(&c, n, 0, STEP(&c, wt_mul_scalar, gd, B_VALUE), gin);
    else to_input(&c, n, 0, STEP(&c, wt_mul, gd, n->saved_in[1]), gin);
    if (!SCALAR_B && wt_grad_needs(n, 1)) {
        wt_tensor *p = STEP(&c, wt_mul, gd, X);
        to_input(&c, n, 1, STEP(&c, wt_neg, p), gin);
    }
    return finish(&c);
}

/* where(mask, a, b): inputs mask, a, b. */
RULE(grad_where)
{
    chain c = {0};
    const wt_tensor *mask = n->saved_in[0];
    if (wt_grad_needs(n, 1)) {
        wt_tensor *nm = STEP(&c, wt_logical_not, mask);
        to_input(&c, n, 1, STEP(&c, wt_masked_fill, G, nm, 0.0), gin);
    }
    if (wt_grad_needs(n, 2)) to_input(&c, n, 2, STEP(&c, wt_masked_fill, G, mask, 0.0), gin);
    return finish(&c);
}

/* masked_fill(x, mask, value): inputs x, mask. */
RULE(grad_masked_fill) { return wt_masked_fill(G, n->saved_in[1], 0.0, &gin[0]); }
