/* Derivative rules of the tensor ops against finite differences:
 * elementwise (every unary op of the catalogue, binary, select), reductions,
 * views and movement. */
#include "autograd_test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------- elementwise rows */

typedef wt_status (*unary_fn)(const wt_tensor *, wt_tensor **);
static unary_fn g_unary;
static wt_status fwd_unary(wt_tensor *const *in, wt_tensor **out) { return g_unary(in[0], out); }

static const struct {
    const char *name;
    unary_fn fn;
    int kind;
    bool zero; /* piecewise constant: the gradient is 0 */
} unary_rows[] = {
#define WT_UNARY(NAME, name, rule, nparams, ...) UNARY_ROW_##nparams(NAME, name)
#define UNARY_ROW_0(NAME, name) {#name, wt_##name, 0, false},
#define UNARY_ROW_1(NAME, name)
#define UNARY_ROW_2(NAME, name)
#include "core/ops.def"
};

static int unary_kind(const char *name)
{
    const char *pos[] = {"log", "sqrt", "rsqrt", "reciprocal", "log2", "log1p"};
    for (size_t i = 0; i < sizeof pos / sizeof pos[0]; i++)
        if (!strcmp(name, pos[i])) return POSITIVE;
    return AWAY_FROM_0;
}

static bool zero_grad_op(const char *name)
{
    return !strcmp(name, "sign") || !strcmp(name, "floor") || !strcmp(name, "ceil") || !strcmp(name, "round");
}

static wt_status fwd_leaky(wt_tensor *const *in, wt_tensor **out) { return wt_leaky_relu(in[0], 0.1, out); }
static wt_status fwd_elu(wt_tensor *const *in, wt_tensor **out) { return wt_elu(in[0], 0.7, out); }
static wt_status fwd_clamp(wt_tensor *const *in, wt_tensor **out) { return wt_clamp(in[0], -0.9, 1.1, out); }

/* The gradient of a piecewise-constant op is exactly 0. */
static void zero_check(const char *name, unary_fn fn)
{
    wt_tensor *x = NULL, *y = NULL, *g = NULL;
    float v[6] = {0.3f, -1.7f, 2.2f, -0.4f, 1.1f, 0.8f}, gv[6];
    wt_tensor_from_data(g_ctx, WT_F32, 1, (int64_t[]){6}, v, &x);
    wt_tensor_set_requires_grad(x, true);
    wt_status st = fn(x, &y);
    wt_tensor *s = NULL;
    if (st == WT_OK) st = wt_sum(y, 0, NULL, false, &s);
    if (st == WT_OK) st = wt_backward(s);
    if (st == WT_OK) st = wt_tensor_grad(x, &g);
    bool ok = st == WT_OK && g && wt_tensor_read(g, gv, sizeof gv) == WT_OK;
    for (int i = 0; ok && i < 6; i++) ok = gv[i] == 0.0f;
    CHECK(ok, "%s: zero gradient (%s)", name, st == WT_OK ? "" : wt_last_error());
    wt_tensor_release(g);
    wt_tensor_release(s);
    wt_tensor_release(y);
    wt_tensor_release(x);
}

void test_unary(void)
{
    for (size_t i = 0; i < sizeof unary_rows / sizeof unary_rows[0]; i++) {
        const char *name = unary_rows[i].name;
        if (!strcmp(name, "logical_not")) continue;
        if (zero_grad_op(name)) {
            zero_check(name, unary_rows[i].fn);
            continue;
        }
        g_unary = unary_rows[i].fn;
        spec sp[1] = {{2, {3, 4}, unary_kind(name), true}};
        gradcheck(name, fwd_unary, 1, sp, 1e-2, 2e-3);
    }
    spec sp[1] = {{2, {3, 4}, AWAY_FROM_0, true}};
    gradcheck("leaky_relu", fwd_leaky, 1, sp, 1e-2, 2e-3);
    gradcheck("elu", fwd_elu, 1, sp, 1e-2, 2e-3);
    gradcheck("clamp", fwd_clamp, 1, sp, 1e-2, 2e-3);
    /* A non-contiguous input and a 0-d one. */
    g_unary = wt_tanh;
    spec tr[1] = {{3, {2, 3, 4}, ANY, true, true}};
    gradcheck("tanh (transposed view)", fwd_unary, 1, tr, 1e-2, 2e-3);
    spec z[1] = {{0, {0}, ANY, true}};
    gradcheck("tanh (0-d)", fwd_unary, 1, z, 1e-2, 2e-3);
}

typedef wt_status (*binary_fn)(const wt_tensor *, const wt_tensor *, wt_tensor **);
typedef wt_status (*binary_scalar_fn)(const wt_tensor *, double, wt_tensor **);
static binary_fn g_binary;
static binary_scalar_fn g_binary_scalar;
static wt_status fwd_binary(wt_tensor *const *in, wt_tensor **out) { return g_binary(in[0], in[1], out); }
static wt_status fwd_binary_scalar(wt_tensor *const *in, wt_tensor **out) { return g_binary_scalar(in[0], 1.3, out); }

void test_binary(void)
{
    static const struct {
        const char *name;
        binary_fn fn;
        binary_scalar_fn sfn;
        int ka, kb;
    } rows[] = {
        {"add", wt_add, wt_add_scalar, ANY, ANY},
        {"sub", wt_sub, wt_sub_scalar, ANY, ANY},
        {"mul", wt_mul, wt_mul_scalar, ANY, ANY},
        {"div", wt_div, wt_div_scalar, ANY, POSITIVE},
        {"maximum", wt_maximum, wt_maximum_scalar, SPREAD, SPREAD},
        {"minimum", wt_minimum, wt_minimum_scalar, SPREAD, SPREAD},
        {"pow", wt_pow, wt_pow_scalar, POSITIVE, ANY},
        {"fmod", wt_fmod, wt_fmod_scalar, SMALL, ABOVE_1},
        {"atan2", wt_atan2, wt_atan2_scalar, ANY, POSITIVE},
        {"remainder", wt_remainder, wt_remainder_scalar, SMALL, ABOVE_1},
    };
    char label[96];
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        g_binary = rows[i].fn;
        /* b broadcast along two axes of a, and a along one of b. */
        spec sp[2] = {{3, {2, 1, 4}, rows[i].ka, true}, {2, {3, 1}, rows[i].kb, true}};
        snprintf(label, sizeof label, "%s (broadcast)", rows[i].name);
        gradcheck(label, fwd_binary, 2, sp, 1e-2, 2e-3);
        g_binary_scalar = rows[i].sfn;
        snprintf(label, sizeof label, "%s_scalar", rows[i].name);
        gradcheck(label, fwd_binary_scalar, 1, sp, 1e-2, 2e-3);
    }
}

static wt_status fwd_where(wt_tensor *const *in, wt_tensor **out)
{
    wt_tensor *m = NULL;
    wt_status st = wt_gt_scalar(in[2], 0.0, &m);
    if (st == WT_OK) st = wt_where(m, in[0], in[1], out);
    wt_tensor_release(m);
    return st;
}

static wt_status fwd_masked_fill(wt_tensor *const *in, wt_tensor **out)
{
    wt_tensor *m = NULL;
    wt_status st = wt_gt_scalar(in[1], 0.0, &m);
    if (st == WT_OK) st = wt_masked_fill(in[0], m, 2.5, out);
    wt_tensor_release(m);
    return st;
}

static wt_status fwd_cast(wt_tensor *const *in, wt_tensor **out)
{
    wt_tensor *h = NULL, *sq = NULL;
    wt_status st = wt_cast(in[0], WT_F16, &h);
    if (st == WT_OK) st = wt_square(h, &sq);
    if (st == WT_OK) st = wt_cast(sq, WT_F32, out);
    wt_tensor_release(h);
    wt_tensor_release(sq);
    return st;
}

void test_select(void)
{
    spec w[3] = {{2, {3, 4}, ANY, true}, {1, {4}, ANY, true}, {2, {3, 1}, AWAY_FROM_0, false}};
    gradcheck("where", fwd_where, 3, w, 1e-2, 2e-3);
    spec m[2] = {{2, {3, 4}, ANY, true}, {1, {4}, AWAY_FROM_0, false}};
    gradcheck("masked_fill", fwd_masked_fill, 2, m, 1e-2, 2e-3);
    spec c[1] = {{2, {3, 4}, SMALL, true}};
    gradcheck("cast f16 and back", fwd_cast, 1, c, 3e-2, 2e-2);
}

/* ------------------------------------------------------------ reductions */

static int g_naxes;
static int g_axes[4];
static bool g_keep;
typedef wt_status (*reduce_fn)(const wt_tensor *, int, const int *, bool, wt_tensor **);
static reduce_fn g_reduce;
static wt_status fwd_reduce(wt_tensor *const *in, wt_tensor **out) { return g_reduce(in[0], g_naxes, g_axes, g_keep, out); }
static wt_status fwd_var(wt_tensor *const *in, wt_tensor **out) { return wt_var(in[0], g_naxes, g_axes, 1.0, g_keep, out); }
static wt_status fwd_std(wt_tensor *const *in, wt_tensor **out) { return wt_std(in[0], g_naxes, g_axes, 0.0, g_keep, out); }
static double g_ord;
static wt_status fwd_norm(wt_tensor *const *in, wt_tensor **out) { return wt_norm(in[0], g_ord, g_naxes, g_axes, g_keep, out); }

void test_reductions(void)
{
    static const struct {
        const char *name;
        reduce_fn fn;
        int kind;
    } rows[] = {{"sum", wt_sum, ANY}, {"mean", wt_mean, ANY}, {"max", wt_max, SPREAD}, {"min", wt_min, SPREAD},
                {"prod", wt_prod, AWAY_FROM_0}, {"logsumexp", wt_logsumexp, ANY}};
    static const struct {
        int naxes, axes[2];
        bool keep;
    } forms[] = {{0, {0}, false}, {1, {1}, false}, {2, {0, -1}, true}};
    char label[96];
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        for (size_t f = 0; f < sizeof forms / sizeof forms[0]; f++) {
            g_reduce = rows[i].fn;
            g_naxes = forms[f].naxes;
            memcpy(g_axes, forms[f].axes, sizeof forms[f].axes);
            g_keep = forms[f].keep;
            spec sp[1] = {{3, {2, 3, 4}, rows[i].kind, true}};
            snprintf(label, sizeof label, "%s (%d axes%s)", rows[i].name, g_naxes, g_keep ? ", keepdims" : "");
            gradcheck(label, fwd_reduce, 1, sp, 1e-2, 3e-3);
            snprintf(label, sizeof label, "var (%d axes)", g_naxes);
            if (i == 0) gradcheck(label, fwd_var, 1, sp, 1e-2, 3e-3);
            snprintf(label, sizeof label, "std (%d axes)", g_naxes);
            if (i == 0) gradcheck(label, fwd_std, 1, sp, 1e-2, 3e-3);
            for (int o = 0; i == 0 && o < 3; o++) {
                g_ord = o == 0 ? 1.0 : o == 1 ? 2.0 : INFINITY;
                spec nz[1] = {{3, {2, 3, 4}, SPREAD, true}};
                snprintf(label, sizeof label, "norm ord %g (%d axes)", g_ord, g_naxes);
                gradcheck(label, fwd_norm, 1, nz, 1e-2, 3e-3);
            }
        }
}

static wt_status fwd_cumsum(wt_tensor *const *in, wt_tensor **out) { return wt_cumsum(in[0], 1, out); }
static wt_status fwd_cumprod(wt_tensor *const *in, wt_tensor **out) { return wt_cumprod(in[0], -1, out); }

/* ----------------------------------------------------- views and movement */

static wt_status fwd_reshape(wt_tensor *const *in, wt_tensor **out) { return wt_reshape(in[0], 2, (int64_t[]){4, -1}, out); }
static wt_status fwd_permute(wt_tensor *const *in, wt_tensor **out) { return wt_permute(in[0], (int[]){2, 0, 1}, out); }
static wt_status fwd_transpose(wt_tensor *const *in, wt_tensor **out) { return wt_transpose(in[0], 0, -1, out); }
static wt_status fwd_slice(wt_tensor *const *in, wt_tensor **out) { return wt_slice(in[0], 1, 1, 6, 2, out); }
static wt_status fwd_expand(wt_tensor *const *in, wt_tensor **out) { return wt_expand(in[0], 3, (int64_t[]){2, 3, 4}, out); }
static wt_status fwd_squeeze(wt_tensor *const *in, wt_tensor **out) { return wt_squeeze(in[0], 0, NULL, out); }
static wt_status fwd_unsqueeze(wt_tensor *const *in, wt_tensor **out) { return wt_unsqueeze(in[0], 1, out); }
static wt_status fwd_flatten(wt_tensor *const *in, wt_tensor **out) { return wt_flatten(in[0], 0, 1, out); }
static wt_status fwd_contiguous(wt_tensor *const *in, wt_tensor **out) { return wt_contiguous(in[0], out); }
static wt_status fwd_concat(wt_tensor *const *in, wt_tensor **out)
{
    return wt_concat(3, (wt_tensor *const[]){in[0], in[1], in[2]}, 1, out);
}
static wt_status fwd_stack(wt_tensor *const *in, wt_tensor **out)
{
    return wt_stack(2, (wt_tensor *const[]){in[0], in[1]}, 1, out);
}
/* split and chunk: the pieces weighted differently, joined again. */
static wt_status join_weighted(int n, wt_tensor **parts, wt_tensor **out)
{
    wt_tensor *scaled[4] = {0};
    wt_status st = WT_OK;
    for (int i = 0; i < n && st == WT_OK; i++) st = wt_mul_scalar(parts[i], 1.0 + i, &scaled[i]);
    if (st == WT_OK) st = wt_concat(n, scaled, -1, out);
    for (int i = 0; i < n; i++) {
        wt_tensor_release(scaled[i]);
        wt_tensor_release(parts[i]);
    }
    return st;
}
static wt_status fwd_split(wt_tensor *const *in, wt_tensor **out)
{
    wt_tensor *p[3] = {0};
    wt_status st = wt_split(in[0], 1, 3, (int64_t[]){1, 3, 1}, p);
    if (st != WT_OK) return st;
    /* only two of the three pieces are used: the third gets zeros */
    wt_tensor_release(p[2]);
    return join_weighted(2, p, out);
}
static wt_status fwd_chunk(wt_tensor *const *in, wt_tensor **out)
{
    wt_tensor *p[3] = {0};
    int n = 0;
    wt_status st = wt_chunk(in[0], -1, 3, &n, p);
    if (st != WT_OK) return st;
    return join_weighted(n, p, out);
}
static wt_pad_mode g_pad_mode;
static wt_status fwd_pad(wt_tensor *const *in, wt_tensor **out)
{
    return wt_pad(in[0], 4, (int64_t[]){2, 1, 0, 2}, g_pad_mode, 0.5, out);
}
static wt_status fwd_repeat(wt_tensor *const *in, wt_tensor **out) { return wt_repeat(in[0], 3, (int64_t[]){2, 1, 3}, out); }
static wt_status fwd_tile(wt_tensor *const *in, wt_tensor **out) { return wt_tile(in[0], 1, (int64_t[]){2}, out); }
static wt_status fwd_flip(wt_tensor *const *in, wt_tensor **out) { return wt_flip(in[0], 2, (int[]){0, 2}, out); }
static wt_status fwd_roll(wt_tensor *const *in, wt_tensor **out)
{
    return wt_roll(in[0], 2, (int64_t[]){1, -2}, (int[]){0, 2}, out);
}
static wt_status fwd_tril(wt_tensor *const *in, wt_tensor **out) { return wt_tril(in[0], 0, out); }
static wt_status fwd_triu(wt_tensor *const *in, wt_tensor **out) { return wt_triu(in[0], 1, out); }
static wt_status fwd_gather(wt_tensor *const *in, wt_tensor **out) { return wt_gather(in[0], 1, in[1], out); }
static wt_status fwd_index_select(wt_tensor *const *in, wt_tensor **out) { return wt_index_select(in[0], 0, in[1], out); }
wt_status fwd_embedding(wt_tensor *const *in, wt_tensor **out) { return wt_embedding(in[0], in[1], out); }
static wt_status fwd_scatter_add(wt_tensor *const *in, wt_tensor **out) { return wt_scatter_add(in[0], 1, in[1], in[2], out); }
static wt_status fwd_index_add(wt_tensor *const *in, wt_tensor **out) { return wt_index_add(in[0], 0, in[1], in[2], out); }
static wt_status fwd_sort(wt_tensor *const *in, wt_tensor **out) { return wt_sort(in[0], 1, true, out, NULL); }
static wt_status fwd_topk(wt_tensor *const *in, wt_tensor **out) { return wt_topk(in[0], 2, true, out, NULL); }

void test_movement(void)
{
    spec x234[1] = {{3, {2, 3, 4}, ANY, true}};
    spec x234t[1] = {{3, {2, 3, 4}, ANY, true, true}};
    gradcheck("reshape", fwd_reshape, 1, x234, 1e-2, 2e-3);
    gradcheck("reshape (non-contiguous)", fwd_reshape, 1, x234t, 1e-2, 2e-3);
    gradcheck("permute", fwd_permute, 1, x234, 1e-2, 2e-3);
    gradcheck("transpose", fwd_transpose, 1, x234, 1e-2, 2e-3);
    spec x27[1] = {{2, {2, 7}, ANY, true}};
    gradcheck("slice (step 2)", fwd_slice, 1, x27, 1e-2, 2e-3);
    spec x14[1] = {{2, {1, 4}, ANY, true}};
    gradcheck("expand", fwd_expand, 1, x14, 1e-2, 2e-3);
    spec x1314[1] = {{3, {3, 1, 4}, ANY, true}};
    gradcheck("squeeze", fwd_squeeze, 1, x1314, 1e-2, 2e-3);
    gradcheck("unsqueeze", fwd_unsqueeze, 1, x234, 1e-2, 2e-3);
    gradcheck("flatten", fwd_flatten, 1, x234t, 1e-2, 2e-3);
    gradcheck("contiguous", fwd_contiguous, 1, x234t, 1e-2, 2e-3);
    spec cat[3] = {{2, {2, 3}, ANY, true}, {2, {2, 1}, ANY, true}, {2, {2, 2}, ANY, false}};
    gradcheck("concat", fwd_concat, 3, cat, 1e-2, 2e-3);
    spec stk[2] = {{2, {2, 3}, ANY, true}, {2, {2, 3}, ANY, true}};
    gradcheck("stack", fwd_stack, 2, stk, 1e-2, 2e-3);
    spec sp5[1] = {{2, {2, 5}, ANY, true}};
    gradcheck("split", fwd_split, 1, sp5, 1e-2, 2e-3);
    spec ch[1] = {{2, {2, 7}, ANY, true}};
    gradcheck("chunk", fwd_chunk, 1, ch, 1e-2, 2e-3);
    spec pd[1] = {{2, {4, 3}, ANY, true}};
    const char *modes[] = {"pad constant", "pad reflect", "pad replicate"};
    for (int m = 0; m < 3; m++) {
        g_pad_mode = (wt_pad_mode)m;
        gradcheck(modes[m], fwd_pad, 1, pd, 1e-2, 2e-3);
    }
    spec rp[1] = {{2, {2, 3}, ANY, true}};
    gradcheck("repeat", fwd_repeat, 1, rp, 1e-2, 2e-3);
    gradcheck("tile", fwd_tile, 1, rp, 1e-2, 2e-3);
    gradcheck("flip", fwd_flip, 1, x234, 1e-2, 2e-3);
    gradcheck("roll", fwd_roll, 1, x234, 1e-2, 2e-3);
    gradcheck("tril", fwd_tril, 1, x234, 1e-2, 2e-3);
    gradcheck("triu", fwd_triu, 1, x234, 1e-2, 2e-3);
    spec ga[2] = {{2, {3, 4}, ANY, true}, {2, {3, 5}, INDEX, false, false, 4}};
    gradcheck("gather", fwd_gather, 2, ga, 1e-2, 2e-3);
    spec is[2] = {{2, {4, 3}, ANY, true}, {1, {5}, INDEX, false, false, 4}};
    gradcheck("index_select", fwd_index_select, 2, is, 1e-2, 2e-3);
    spec em[2] = {{2, {5, 3}, ANY, true}, {2, {2, 3}, INDEX, false, false, 5}};
    gradcheck("embedding", fwd_embedding, 2, em, 1e-2, 2e-3);
    spec sa[3] = {{2, {3, 4}, ANY, true}, {2, {3, 2}, INDEX, false, false, 4}, {2, {3, 3}, ANY, true}};
    gradcheck("scatter_add", fwd_scatter_add, 3, sa, 1e-2, 2e-3);
    spec ia[3] = {{2, {4, 3}, ANY, true}, {1, {3}, INDEX, false, false, 4}, {2, {3, 3}, ANY, true}};
    gradcheck("index_add", fwd_index_add, 3, ia, 1e-2, 2e-3);
    spec so[1] = {{2, {3, 5}, SPREAD, true}};
    gradcheck("sort values", fwd_sort, 1, so, 1e-2, 2e-3);
    gradcheck("topk values", fwd_topk, 1, so, 1e-2, 2e-3);
    gradcheck("cumsum", fwd_cumsum, 1, x234, 1e-2, 2e-3);
    spec cp[1] = {{2, {3, 4}, AWAY_FROM_0, true}};
    gradcheck("cumprod", fwd_cumprod, 1, cp, 1e-2, 3e-3);
}
