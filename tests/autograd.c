/* Reverse-mode automatic differentiation (webtensor.h, "autograd").
 *
 * Every derivative rule is checked through the tape on the backend under
 * test against float64 central finite differences that this program
 * computes from the forward op alone, run on the CPU backend (never from
 * the library's backward). Then the tape's contract: accumulation,
 * retain_graph, no-grad, detach, the version check, non-differentiable
 * ops, the functional wt_grad, memory that stays flat over training
 * steps, the catalogue (every op has a rule or is marked), and a small
 * MLP trained with the tape. */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static wt_context *g_ctx; /* the backend under test */
static wt_context *g_cpu; /* finite differences */

/* SPREAD: distinct magnitudes 0.07 apart (no near-ties for max-like ops
 * within the finite-difference step). */
enum { ANY = 0, POSITIVE, AWAY_FROM_0, SMALL, INDEX, SPREAD, ABOVE_1 };

typedef struct spec {
    int ndim;
    int64_t shape[5];
    int kind;         /* how values are drawn */
    bool grad;        /* requires grad (checked) */
    bool transposed;  /* a transposed view of the last two axes */
    int32_t index_hi; /* INDEX: values in [0, index_hi) */
} spec;

typedef wt_status (*fwd_fn)(wt_tensor *const *in, wt_tensor **out);

static int64_t numel_of(const spec *s)
{
    int64_t n = 1;
    for (int i = 0; i < s->ndim; i++) n *= s->shape[i];
    return n;
}

static double draw(int kind)
{
    double u = test_rng_uniform(0.0f, 1.0f);
    switch (kind) {
    case POSITIVE: return 0.5 + 1.5 * u;
    case AWAY_FROM_0: return (test_rng_next() & 1 ? 1 : -1) * (0.2 + 1.6 * u);
    case SMALL: return 0.1 + 0.8 * u;
    case ABOVE_1: return 1.0 + u;
    default: return -2.0 + 4.0 * u;
    }
}

/* A tensor of s's shape holding host values (row-major in s's shape). */
static wt_tensor *make_input(wt_context *ctx, const spec *s, const float *f, const int32_t *idx)
{
    wt_tensor *t = NULL, *v = NULL;
    if (s->kind == INDEX) {
        if (wt_tensor_from_data(ctx, WT_I32, s->ndim, s->shape, idx, &t) != WT_OK) return NULL;
        return t;
    }
    if (!s->transposed) {
        if (wt_tensor_from_data(ctx, WT_F32, s->ndim, s->shape, f, &t) != WT_OK) return NULL;
        return t;
    }
    /* Stored as the transpose, viewed back: a non-contiguous input. */
    int64_t sh[5];
    memcpy(sh, s->shape, sizeof sh);
    int a = s->ndim - 2, b = s->ndim - 1;
    sh[a] = s->shape[b], sh[b] = s->shape[a];
    int64_t n = numel_of(s), rows = s->shape[a], cols = s->shape[b], plane = rows * cols;
    float *tr = malloc((size_t)n * sizeof *tr);
    for (int64_t p = 0; p < n / plane; p++)
        for (int64_t i = 0; i < rows; i++)
            for (int64_t j = 0; j < cols; j++) tr[p * plane + j * rows + i] = f[p * plane + i * cols + j];
    wt_status st = wt_tensor_from_data(ctx, WT_F32, s->ndim, sh, tr, &t);
    free(tr);
    if (st != WT_OK) return NULL;
    st = wt_transpose(t, a, b, &v);
    wt_tensor_release(t);
    return st == WT_OK ? v : NULL;
}

/* sum(r * f(inputs)) in double, on the CPU backend. */
static bool cpu_objective(fwd_fn f, int nin, const spec *sp, float *const *data, int32_t *const *idx,
                          const double *r, int64_t ny, double *out)
{
    wt_tensor *in[6] = {0}, *y = NULL;
    bool ok = true;
    for (int i = 0; i < nin; i++) ok = ok && (in[i] = make_input(g_cpu, &sp[i], data[i], idx[i]));
    if (ok) ok = f(in, &y) == WT_OK && wt_tensor_numel(y) == ny;
    float *yv = ok ? malloc((size_t)(ny ? ny : 1) * sizeof *yv) : NULL;
    if (ok) ok = wt_tensor_read(y, yv, (size_t)ny * sizeof *yv) == WT_OK;
    double s = 0;
    for (int64_t k = 0; ok && k < ny; k++) s += r[k] * (double)yv[k];
    *out = s;
    free(yv);
    wt_tensor_release(y);
    for (int i = 0; i < nin; i++) wt_tensor_release(in[i]);
    return ok;
}

static void gradcheck(const char *name, fwd_fn f, int nin, const spec *sp, double rtol, double atol)
{
    float *data[6] = {0};
    int32_t *idx[6] = {0};
    wt_tensor *in[6] = {0}, *y = NULL, *seed = NULL;
    for (int i = 0; i < nin; i++) {
        int64_t n = numel_of(&sp[i]);
        data[i] = malloc((size_t)(n ? n : 1) * sizeof(float));
        idx[i] = malloc((size_t)(n ? n : 1) * sizeof(int32_t));
        for (int64_t k = 0; k < n; k++) {
            data[i][k] = (float)draw(sp[i].kind);
            idx[i][k] = sp[i].index_hi ? (int32_t)(test_rng_next() % (uint64_t)sp[i].index_hi) : 0;
        }
        if (sp[i].kind == SPREAD) {
            for (int64_t k = 0; k < n; k++) data[i][k] = (float)((test_rng_next() & 1 ? 1 : -1) * (0.2 + 0.07 * (double)k));
            for (int64_t k = n - 1; k > 0; k--) {
                int64_t j = (int64_t)(test_rng_next() % (uint64_t)(k + 1));
                float t = data[i][k];
                data[i][k] = data[i][j], data[i][j] = t;
            }
        }
        in[i] = make_input(g_ctx, &sp[i], data[i], idx[i]);
        if (!in[i]) {
            CHECK(false, "%s: input %d: %s", name, i, wt_last_error());
            goto done;
        }
        if (sp[i].grad && wt_tensor_set_requires_grad(in[i], true) != WT_OK) {
            CHECK(false, "%s: set_requires_grad: %s", name, wt_last_error());
            goto done;
        }
    }
    if (f(in, &y) != WT_OK) {
        CHECK(false, "%s: forward: %s", name, wt_last_error());
        goto done;
    }
    if (!CHECK(wt_tensor_requires_grad(y), "%s: the result requires grad", name)) goto done;
    int64_t ny = wt_tensor_numel(y);
    double *r = malloc((size_t)(ny ? ny : 1) * sizeof *r);
    float *rf = malloc((size_t)(ny ? ny : 1) * sizeof *rf);
    for (int64_t k = 0; k < ny; k++) rf[k] = (float)(r[k] = test_rng_uniform(-1.0f, 1.0f));
    wt_status st = wt_tensor_from_data(g_ctx, WT_F32, wt_tensor_ndim(y), wt_tensor_shape(y), rf, &seed);
    if (st == WT_OK) st = wt_backward_ex(1, &y, &seed, NULL);
    if (!CHECK(st == WT_OK, "%s: backward: %s", name, wt_last_error())) {
        free(r);
        free(rf);
        goto done;
    }
    for (int i = 0; i < nin; i++) {
        if (!sp[i].grad) continue;
        int64_t n = numel_of(&sp[i]);
        wt_tensor *g = NULL;
        if (wt_tensor_grad(in[i], &g) != WT_OK || !g) {
            CHECK(false, "%s: input %d has no gradient (%s)", name, i, wt_last_error());
            continue;
        }
        float *gv = malloc((size_t)(n ? n : 1) * sizeof *gv);
        bool ok = wt_tensor_numel(g) == n && wt_tensor_read(g, gv, (size_t)n * sizeof *gv) == WT_OK;
        wt_tensor_release(g);
        for (int64_t k = 0; ok && k < n; k++) {
            float keep = data[i][k];
            double h = 4e-3 * (fabs(keep) > 1 ? fabs(keep) : 1.0), lp = 0, lm = 0;
            data[i][k] = (float)(keep + h);
            double hp = (double)data[i][k] - keep;
            ok = cpu_objective(f, nin, sp, data, idx, r, ny, &lp);
            data[i][k] = (float)(keep - h);
            double hm = keep - (double)data[i][k];
            ok = ok && cpu_objective(f, nin, sp, data, idx, r, ny, &lm);
            data[i][k] = keep;
            double want = (lp - lm) / (hp + hm), got = gv[k];
            if (!ok) break;
            if (!(fabs(got - want) <= atol + rtol * fabs(want))) {
                ok = false;
                CHECK(false, "%s: d/d input %d [%lld] = %.6g, finite differences %.6g", name, i, (long long)k,
                      got, want);
            }
        }
        if (ok) CHECK(true, "%s: input %d", name, i);
        free(gv);
    }
    free(r);
    free(rf);
done:
    wt_tensor_release(seed);
    wt_tensor_release(y);
    for (int i = 0; i < nin; i++) {
        wt_tensor_release(in[i]);
        free(data[i]);
        free(idx[i]);
    }
}

#define S1(a) {1, {a}}
#define S2(a, b) {2, {a, b}}
#define S3(a, b, c) {3, {a, b, c}}
#define S4(a, b, c, d) {4, {a, b, c, d}}

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

static void test_unary(void)
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

static void test_binary(void)
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

static void test_select(void)
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

static void test_reductions(void)
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
static wt_status fwd_embedding(wt_tensor *const *in, wt_tensor **out) { return wt_embedding(in[0], in[1], out); }
static wt_status fwd_scatter_add(wt_tensor *const *in, wt_tensor **out) { return wt_scatter_add(in[0], 1, in[1], in[2], out); }
static wt_status fwd_index_add(wt_tensor *const *in, wt_tensor **out) { return wt_index_add(in[0], 0, in[1], in[2], out); }
static wt_status fwd_sort(wt_tensor *const *in, wt_tensor **out) { return wt_sort(in[0], 1, true, out, NULL); }
static wt_status fwd_topk(wt_tensor *const *in, wt_tensor **out) { return wt_topk(in[0], 2, true, out, NULL); }

static void test_movement(void)
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

/* --------------------------------------------------------------- nn ops */

static wt_status fwd_matmul(wt_tensor *const *in, wt_tensor **out) { return wt_matmul(in[0], in[1], out); }
static wt_status fwd_linear(wt_tensor *const *in, wt_tensor **out) { return wt_linear(in[0], in[1], in[2], out); }
/* x, w (gate and up rows), bias, norm weight, residual: recorded as its parts. */
static wt_status fwd_linear_fused(wt_tensor *const *in, wt_tensor **out)
{
    wt_linear_fused_options o;
    wt_linear_fused_options_init(&o);
    o.rms_norm = true;
    o.norm_weight = in[3];
    o.swiglu = true;
    o.residual = in[4];
    return wt_linear_fused(in[0], in[1], in[2], &o, out);
}
static int g_axis;
static wt_status fwd_softmax(wt_tensor *const *in, wt_tensor **out) { return wt_softmax(in[0], g_axis, out); }
static wt_status fwd_log_softmax(wt_tensor *const *in, wt_tensor **out) { return wt_log_softmax(in[0], g_axis, out); }
static wt_status fwd_layer_norm(wt_tensor *const *in, wt_tensor **out)
{
    return wt_layer_norm(in[0], 2, in[1], in[2], 1e-5f, out);
}
static wt_status fwd_layernorm(wt_tensor *const *in, wt_tensor **out) { return wt_layernorm(in[0], in[1], in[2], 1e-5f, out); }
static wt_status fwd_rms_norm(wt_tensor *const *in, wt_tensor **out) { return wt_rms_norm(in[0], 1, in[1], 1e-5f, out); }
static wt_status fwd_cross_entropy(wt_tensor *const *in, wt_tensor **out) { return wt_cross_entropy(in[0], in[1], NULL, out); }
static bool g_causal;
static wt_status fwd_attention(wt_tensor *const *in, wt_tensor **out)
{
    return wt_scaled_dot_product_attention(in[0], in[1], in[2], NULL, g_causal, 0.0f, out);
}
static wt_status fwd_attention_mask(wt_tensor *const *in, wt_tensor **out)
{
    return wt_scaled_dot_product_attention(in[0], in[1], in[2], in[3], false, 0.7f, out);
}
static wt_status fwd_rope(wt_tensor *const *in, wt_tensor **out) { return wt_rope(in[0], 10000.0, 3, WT_ROPE_BHSD, out); }
static wt_status fwd_conv2d(wt_tensor *const *in, wt_tensor **out)
{
    wt_conv_options o;
    wt_conv_options_init(&o);
    o.stride[0] = 2;
    o.padding[0] = o.padding[1] = o.padding[2] = o.padding[3] = 1;
    return wt_conv2d(in[0], in[1], in[2], &o, out);
}
static wt_status fwd_conv1d(wt_tensor *const *in, wt_tensor **out)
{
    wt_conv_options o;
    wt_conv_options_init(&o);
    o.padding[0] = 1;
    o.dilation[0] = 2;
    return wt_conv1d(in[0], in[1], in[2], &o, out);
}
static wt_status fwd_max_pool(wt_tensor *const *in, wt_tensor **out)
{
    wt_pool_options o;
    wt_pool_options_init(&o);
    o.kernel[0] = o.kernel[1] = 2;
    return wt_max_pool2d(in[0], &o, out, NULL);
}
static wt_status fwd_avg_pool(wt_tensor *const *in, wt_tensor **out)
{
    wt_pool_options o;
    wt_pool_options_init(&o);
    o.kernel[0] = o.kernel[1] = 3;
    o.stride[0] = o.stride[1] = 2;
    o.padding[0] = o.padding[1] = 1;
    return wt_avg_pool2d(in[0], &o, out);
}
static wt_status fwd_global_avg(wt_tensor *const *in, wt_tensor **out) { return wt_global_avg_pool2d(in[0], out); }
static wt_status fwd_global_max(wt_tensor *const *in, wt_tensor **out) { return wt_global_max_pool2d(in[0], out); }
static wt_status fwd_adaptive_max(wt_tensor *const *in, wt_tensor **out) { return wt_adaptive_max_pool2d(in[0], 2, 2, out, NULL); }
static wt_status fwd_dropout(wt_tensor *const *in, wt_tensor **out) { return wt_dropout(in[0], 0.3f, 7, out); }
static wt_status fwd_upsample(wt_tensor *const *in, wt_tensor **out) { return wt_upsample2d(in[0], 2.0, WT_INTERP_BILINEAR, out); }

static wt_status fwd_group_norm(wt_tensor *const *in, wt_tensor **out)
{
    return wt_group_norm_v2(in[0], 2, NULL, NULL, NULL, out);
}
static wt_status fwd_group_norm_affine(wt_tensor *const *in, wt_tensor **out)
{
    return wt_group_norm_v2(in[0], 2, in[1], in[2], NULL, out);
}
static wt_status fwd_conv_t(wt_tensor *const *in, wt_tensor **out)
{
    wt_conv_options o;
    wt_conv_options_init(&o);
    o.stride[0] = 2;
    return wt_conv_transpose2d(in[0], in[1], in[2], &o, out);
}
static wt_status fwd_adaptive_avg(wt_tensor *const *in, wt_tensor **out) { return wt_adaptive_avg_pool2d(in[0], 2, 3, out); }
static wt_status fwd_adaptive_avg3(wt_tensor *const *in, wt_tensor **out) { return wt_adaptive_avg_pool2d(in[0], 3, 3, out); }
static wt_status fwd_conv_t_grouped(wt_tensor *const *in, wt_tensor **out)
{
    wt_conv_options o;
    wt_conv_options_init(&o);
    o.stride[0] = o.stride[1] = 2;
    o.padding[0] = o.padding[1] = 1;
    o.dilation[1] = 2;
    o.groups = 2;
    o.output_padding[0] = 1;
    return wt_conv_transpose2d(in[0], in[1], in[2], &o, out);
}
static wt_status fwd_batch_norm_train(wt_tensor *const *in, wt_tensor **out)
{
    wt_batch_norm_options o;
    wt_batch_norm_options_init(&o);
    o.training = true;
    return wt_batch_norm(in[0], NULL, NULL, in[1], in[2], &o, out, NULL, NULL);
}
static wt_status fwd_batch_norm_eval(wt_tensor *const *in, wt_tensor **out)
{
    return wt_batch_norm(in[0], in[3], in[4], in[1], in[2], NULL, out, NULL, NULL);
}

static void test_nn(void)
{
    /* group_norm without weight and bias is made of recorded ops: its
     * gradient comes by composition. */
    spec gn[1] = {{4, {2, 4, 3, 3}, ANY, true}};
    gradcheck("group_norm (no affine: by composition)", fwd_group_norm, 1, gn, 2e-2, 5e-3);
    spec gna[3] = {{4, {2, 4, 3, 2}, ANY, true}, {1, {4}, ANY, true}, {1, {4}, ANY, true}};
    gradcheck("group_norm with weight and bias", fwd_group_norm_affine, 3, gna, 2e-2, 5e-3);
    spec ct[3] = {{4, {2, 4, 3, 3}, ANY, true}, {4, {4, 3, 2, 2}, ANY, true}, {1, {3}, ANY, true}};
    gradcheck("conv_transpose2d (stride 2, bias)", fwd_conv_t, 3, ct, 2e-2, 5e-3);
    spec ctg[3] = {{3, {4, 3, 4}, ANY, true}, {4, {4, 1, 3, 2}, ANY, true}, {1, {2}, ANY, true}};
    gradcheck("conv_transpose2d (unbatched, groups 2, padding, dilation, output_padding)", fwd_conv_t_grouped, 3,
              ctg, 2e-2, 5e-3);
    spec aa[1] = {{4, {2, 3, 5, 7}, ANY, true}};
    gradcheck("adaptive_avg_pool2d (5x7 -> 2x3, overlapping windows)", fwd_adaptive_avg, 1, aa, 1e-2, 2e-3);
    spec aa3[1] = {{3, {2, 4, 4}, ANY, true}};
    gradcheck("adaptive_avg_pool2d (unbatched, 4x4 -> 3x3)", fwd_adaptive_avg3, 1, aa3, 1e-2, 2e-3);
    spec bnt[3] = {{4, {3, 2, 2, 3}, ANY, true}, {1, {2}, ANY, true}, {1, {2}, ANY, true}};
    gradcheck("batch_norm (training)", fwd_batch_norm_train, 3, bnt, 2e-2, 5e-3);
    spec bne[5] = {{3, {4, 3, 2}, ANY, true}, {1, {3}, ANY, true}, {1, {3}, ANY, true}, {1, {3}, ANY, false},
                   {1, {3}, POSITIVE, false}};
    gradcheck("batch_norm (inference, running statistics)", fwd_batch_norm_eval, 5, bne, 2e-2, 5e-3);
    spec mm[2] = {{3, {2, 3, 4}, ANY, true}, {2, {4, 2}, ANY, true}};
    gradcheck("matmul (broadcast batch)", fwd_matmul, 2, mm, 1e-2, 3e-3);
    spec mv[2] = {{1, {4}, ANY, true}, {3, {2, 4, 3}, ANY, true, true}};
    gradcheck("matmul (1-D a, transposed b)", fwd_matmul, 2, mv, 1e-2, 3e-3);
    spec mv2[2] = {{2, {3, 4}, ANY, true}, {1, {4}, ANY, true}};
    gradcheck("matmul (1-D b)", fwd_matmul, 2, mv2, 1e-2, 3e-3);
    spec li[3] = {{3, {2, 2, 4}, ANY, true}, {2, {3, 4}, ANY, true}, {1, {3}, ANY, true}};
    gradcheck("linear", fwd_linear, 3, li, 1e-2, 3e-3);
    spec lf[5] = {{2, {2, 4}, ANY, true}, {2, {6, 4}, ANY, true}, {1, {6}, ANY, true}, {1, {4}, ANY, true},
                  {2, {2, 3}, ANY, true}};
    gradcheck("linear_fused (rms_norm, swiglu, residual)", fwd_linear_fused, 5, lf, 1e-2, 3e-3);
    spec sm[1] = {{3, {2, 3, 4}, ANY, true}};
    for (g_axis = -1; g_axis <= 1; g_axis += 2) {
        gradcheck(g_axis < 0 ? "softmax (last axis)" : "softmax (axis 1)", fwd_softmax, 1, sm, 1e-2, 2e-3);
        gradcheck(g_axis < 0 ? "log_softmax (last axis)" : "log_softmax (axis 1)", fwd_log_softmax, 1, sm, 1e-2,
                  2e-3);
    }
    spec ln[3] = {{3, {2, 3, 4}, ANY, true}, {2, {3, 4}, ANY, true}, {2, {3, 4}, ANY, true}};
    gradcheck("layer_norm (2 axes)", fwd_layer_norm, 3, ln, 2e-2, 5e-3);
    spec ln1[3] = {{2, {3, 5}, ANY, true}, {1, {5}, ANY, true}, {1, {5}, ANY, true}};
    gradcheck("layernorm", fwd_layernorm, 3, ln1, 2e-2, 5e-3);
    spec rn[2] = {{2, {3, 5}, ANY, true}, {1, {5}, ANY, true}};
    gradcheck("rms_norm", fwd_rms_norm, 2, rn, 2e-2, 5e-3);
    spec ce[2] = {{2, {4, 5}, ANY, true}, {1, {4}, INDEX, false, false, 5}};
    gradcheck("cross_entropy", fwd_cross_entropy, 2, ce, 1e-2, 2e-3);
    spec at[3] = {{4, {1, 2, 3, 4}, ANY, true}, {4, {1, 1, 5, 4}, ANY, true}, {4, {1, 1, 5, 3}, ANY, true}};
    g_causal = false;
    gradcheck("attention (grouped heads)", fwd_attention, 3, at, 2e-2, 3e-3);
    g_causal = true;
    gradcheck("attention (causal)", fwd_attention, 3, at, 2e-2, 3e-3);
    spec am[4] = {{3, {2, 3, 4}, ANY, true}, {3, {2, 4, 4}, ANY, true}, {3, {2, 4, 2}, ANY, true},
                  {2, {3, 4}, ANY, true}};
    gradcheck("attention (3-D, float mask)", fwd_attention_mask, 4, am, 2e-2, 3e-3);
    spec ro[1] = {{4, {1, 2, 3, 6}, ANY, true}};
    gradcheck("rope", fwd_rope, 1, ro, 1e-2, 2e-3);
    spec cv[3] = {{4, {2, 2, 5, 5}, ANY, true}, {4, {3, 2, 3, 3}, ANY, true}, {1, {3}, ANY, true}};
    gradcheck("conv2d (stride 2, padding)", fwd_conv2d, 3, cv, 2e-2, 5e-3);
    spec c1[3] = {{3, {2, 2, 7}, ANY, true}, {3, {3, 2, 3}, ANY, true}, {1, {3}, ANY, true}};
    gradcheck("conv1d (dilation 2)", fwd_conv1d, 3, c1, 2e-2, 5e-3);
    spec pl[1] = {{4, {1, 2, 4, 4}, SPREAD, true}};
    gradcheck("max_pool2d", fwd_max_pool, 1, pl, 1e-2, 2e-3);
    gradcheck("avg_pool2d", fwd_avg_pool, 1, pl, 1e-2, 2e-3);
    gradcheck("global_avg_pool2d", fwd_global_avg, 1, pl, 1e-2, 2e-3);
    gradcheck("global_max_pool2d", fwd_global_max, 1, pl, 1e-2, 2e-3);
    gradcheck("adaptive_max_pool2d", fwd_adaptive_max, 1, pl, 1e-2, 2e-3);
    gradcheck("dropout", fwd_dropout, 1, pl, 1e-2, 2e-3);
    spec up[1] = {{4, {1, 1, 3, 3}, ANY, true}};
    gradcheck("upsample2d bilinear", fwd_upsample, 1, up, 1e-2, 2e-3);
}

/* ------------------------------------------------------ the tape's contract */

static wt_tensor *vec(const float *v, int64_t n)
{
    wt_tensor *t = NULL;
    wt_tensor_from_data(g_ctx, WT_F32, 1, &n, v, &t);
    return t;
}

static float read1(const wt_tensor *t, int64_t i)
{
    float buf[64] = {0};
    if (!t || wt_tensor_read(t, buf, sizeof(float) * (size_t)wt_tensor_numel(t)) != WT_OK) return NAN;
    return buf[i];
}

/* loss = sum(w * x) with w requiring grad. */
static wt_tensor *dot_loss(wt_tensor *w, wt_tensor *x)
{
    wt_tensor *p = NULL, *s = NULL;
    if (wt_mul(w, x, &p) == WT_OK) wt_sum(p, 0, NULL, false, &s);
    wt_tensor_release(p);
    return s;
}

static void test_contract(void)
{
    float wv[3] = {1, 2, 3}, xv[3] = {0.5f, -1, 2};
    wt_tensor *w = vec(wv, 3), *x = vec(xv, 3), *g = NULL;
    CHECK(!wt_tensor_requires_grad(w), "a new tensor does not require grad");
    CHECK(wt_tensor_set_requires_grad(w, true) == WT_OK && wt_tensor_requires_grad(w), "set_requires_grad");
    CHECK(wt_tensor_grad(w, &g) == WT_OK && !g, "no gradient before backward");

    /* accumulation over two backward calls */
    for (int k = 0; k < 2; k++) {
        wt_tensor *l = dot_loss(w, x);
        CHECK(wt_backward(l) == WT_OK, "backward %d: %s", k, wt_last_error());
        wt_tensor_release(l);
    }
    wt_tensor_grad(w, &g);
    CHECK(read1(g, 1) == -2.0f, "gradients accumulate (%g)", read1(g, 1));
    wt_tensor_release(g);
    wt_tensor_zero_grad(w);
    g = (wt_tensor *)1;
    CHECK(wt_tensor_grad(w, &g) == WT_OK && !g, "zero_grad drops the gradient");

    /* a second backward without retain_graph is refused; with it, allowed */
    wt_tensor *l = dot_loss(w, x);
    wt_backward_options o;
    wt_backward_options_init(&o);
    o.retain_graph = true;
    CHECK(wt_backward_ex(1, &l, NULL, &o) == WT_OK, "backward, retain_graph");
    CHECK(wt_backward(l) == WT_OK, "second backward of a retained graph");
    wt_status st = wt_backward(l);
    CHECK(st == WT_ERR_INVALID_ARGUMENT && strstr(wt_last_error(), "retain_graph"),
          "third backward refused: %s", wt_last_error());
    wt_tensor_grad(w, &g);
    CHECK(read1(g, 2) == 4.0f, "two backward calls counted (%g)", read1(g, 2));
    wt_tensor_release(g);
    wt_tensor_release(l);
    wt_tensor_zero_grad(w);

    /* no-grad scope, detach */
    wt_no_grad_begin(g_ctx);
    l = dot_loss(w, x);
    CHECK(!wt_tensor_requires_grad(l) && !wt_grad_enabled(g_ctx), "nothing recorded under no_grad");
    CHECK(wt_backward(l) == WT_ERR_INVALID_ARGUMENT, "backward of an unrecorded result is refused");
    wt_tensor_release(l);
    wt_no_grad_end(g_ctx);
    CHECK(wt_no_grad_end(g_ctx) == WT_ERR_INVALID_ARGUMENT, "no_grad_end without begin");
    wt_tensor *d = NULL;
    wt_detach(w, &d);
    l = dot_loss(d, x);
    CHECK(d && !wt_tensor_requires_grad(l), "detach stops the graph");
    wt_tensor_release(l);
    wt_tensor_release(d);

    /* the version check: w saved by mul, then updated in place */
    l = dot_loss(w, x);
    wt_sgd_options so;
    wt_sgd_options_init(&so);
    wt_tensor *fake = vec(xv, 3);
    CHECK(wt_sgd_step(w, fake, NULL, &so) == WT_OK, "sgd_step on a leaf");
    st = wt_backward(l);
    CHECK(st == WT_ERR_INVALID_ARGUMENT && strstr(wt_last_error(), "modified in place"),
          "a saved tensor changed in place is refused: %s", wt_last_error());
    g = NULL;
    wt_tensor_grad(w, &g);
    CHECK(!g, "a refused backward leaves .grad alone");
    wt_tensor_release(g);
    wt_tensor_release(l);
    wt_tensor_release(fake);
    CHECK(wt_copy_into(w, x) == WT_ERR_INVALID_ARGUMENT, "copy_into a leaf requiring grad is refused while recording");
    wt_no_grad_begin(g_ctx);
    CHECK(wt_copy_into(w, x) == WT_OK, "and allowed under no_grad");
    wt_no_grad_end(g_ctx);

    /* non-differentiable ops */
    wt_tensor *am = NULL;
    CHECK(wt_argmax(w, 0, NULL, false, &am) == WT_OK && !wt_tensor_requires_grad(am), "argmax is constant");
    st = wt_backward(am);
    CHECK(st == WT_ERR_INVALID_ARGUMENT && strstr(wt_last_error(), "argmax"), "backward through argmax names it: %s",
          wt_last_error());
    wt_tensor_release(am);
    wt_tensor *cmp = NULL;
    wt_gt(w, x, &cmp);
    CHECK(cmp && !wt_tensor_requires_grad(cmp), "a comparison is constant");
    wt_tensor_release(cmp);
    /* an op without a rule refuses rather than giving a zero gradient */
    wt_tensor *ct = NULL;
    st = wt_relu_backward(w, w, &ct);
    CHECK(st == WT_ERR_UNSUPPORTED && !ct && strstr(wt_last_error(), "no derivative rule"),
          "relu_backward (no rule yet) refuses a tracked input: %s", wt_last_error());
    wt_tensor_release(ct);
    CHECK(wt_tensor_set_requires_grad(x, true) == WT_OK, "x requires grad too");
    wt_tensor *i32 = NULL;
    int32_t iv[2] = {1, 2};
    wt_tensor_from_data(g_ctx, WT_I32, 1, (int64_t[]){2}, iv, &i32);
    CHECK(wt_tensor_set_requires_grad(i32, true) == WT_ERR_INVALID_ARGUMENT, "an i32 tensor cannot require grad");
    wt_tensor_release(i32);

    /* the functional form: gradients of a result and a leaf, no .grad */
    wt_tensor *h = NULL, *loss = NULL, *grads[2] = {0};
    wt_tanh(w, &h);
    loss = dot_loss(h, x);
    wt_tensor *ins[2] = {h, x};
    st = wt_grad(1, &loss, NULL, 2, ins, NULL, grads);
    CHECK(st == WT_OK && grads[0] && grads[1], "wt_grad: %s", wt_last_error());
    float tw = tanhf(read1(w, 0));
    CHECK(fabsf(read1(grads[0], 0) - xv[0]) < 1e-6f && fabsf(read1(grads[1], 0) - tw) < 1e-5f,
          "wt_grad values (%g %g)", read1(grads[0], 0), read1(grads[1], 0));
    g = NULL;
    wt_tensor_grad(x, &g);
    CHECK(!g, "wt_grad leaves .grad alone");
    wt_tensor_release(g);
    for (int j = 0; j < 2; j++) wt_tensor_release(grads[j]);
    wt_tensor_release(loss);
    wt_tensor_release(h);
    wt_tensor_release(w);
    wt_tensor_release(x);
}

/* ----------------------------------------------- memory and the catalogue */

static uint64_t live_tensors(void)
{
    wt_memory_stats s;
    wt_context_memory_stats(g_ctx, &s);
    return s.live_tensors;
}

/* ------------------------------------------------ f16 against f32 */

/* The gradient of sum(r * f(inputs)) with every float input f16 (leaves
 * of f16, so activations are f16 and gradients f32) against the same with
 * f32 inputs holding the same values: max |g16 - g32| <= tol * max |g32|.
 * f16 rounds each activation to 11 bits (relative 4.9e-4), so a few
 * roundings on the way give about 1e-3 of the largest gradient; the
 * stated tolerance is 5e-3. */
static void f16check(const char *name, fwd_fn f, int nin, const spec *sp)
{
    const double tol = 5e-3;
    float *data[6] = {0};
    int32_t *idx[6] = {0};
    wt_tensor *in32[6] = {0}, *in16[6] = {0}, *y32 = NULL, *y16 = NULL, *seed = NULL;
    bool ok = true;
    for (int i = 0; i < nin && ok; i++) {
        int64_t n = numel_of(&sp[i]);
        data[i] = malloc((size_t)(n ? n : 1) * sizeof(float));
        idx[i] = malloc((size_t)(n ? n : 1) * sizeof(int32_t));
        for (int64_t k = 0; k < n; k++) {
            data[i][k] = (float)draw(sp[i].kind);
            idx[i][k] = sp[i].index_hi ? (int32_t)(test_rng_next() % (uint64_t)sp[i].index_hi) : 0;
        }
        wt_tensor *raw = make_input(g_ctx, &sp[i], data[i], idx[i]), *h = NULL;
        ok = raw != NULL;
        if (ok && sp[i].kind == INDEX) {
            in32[i] = raw;
            wt_tensor_retain(in16[i] = raw);
            continue;
        }
        /* Both see the f16-rounded values. */
        ok = ok && wt_cast(raw, WT_F16, &in16[i]) == WT_OK && wt_cast(in16[i], WT_F32, &h) == WT_OK;
        in32[i] = h;
        wt_tensor_release(raw);
        if (ok && sp[i].grad)
            ok = wt_tensor_set_requires_grad(in32[i], true) == WT_OK && wt_tensor_set_requires_grad(in16[i], true) == WT_OK;
    }
    ok = ok && f(in32, &y32) == WT_OK && f(in16, &y16) == WT_OK;
    if (!CHECK(ok, "%s (f16): forward: %s", name, wt_last_error())) goto done;
    int64_t ny = wt_tensor_numel(y32);
    float *rf = malloc((size_t)(ny ? ny : 1) * sizeof *rf);
    for (int64_t k = 0; k < ny; k++) rf[k] = test_rng_uniform(-1.0f, 1.0f);
    ok = wt_tensor_from_data(g_ctx, WT_F32, wt_tensor_ndim(y32), wt_tensor_shape(y32), rf, &seed) == WT_OK &&
         wt_backward_ex(1, &y32, &seed, NULL) == WT_OK && wt_backward_ex(1, &y16, &seed, NULL) == WT_OK;
    free(rf);
    if (!CHECK(ok, "%s (f16): backward: %s", name, wt_last_error())) goto done;
    for (int i = 0; i < nin; i++) {
        if (!sp[i].grad) continue;
        int64_t n = numel_of(&sp[i]);
        wt_tensor *g32 = NULL, *g16 = NULL;
        float *a = malloc((size_t)(n ? n : 1) * sizeof *a), *b = malloc((size_t)(n ? n : 1) * sizeof *b);
        bool got = wt_tensor_grad(in32[i], &g32) == WT_OK && wt_tensor_grad(in16[i], &g16) == WT_OK && g32 && g16 &&
                   wt_tensor_dtype(g16) == WT_F32 && wt_tensor_read(g32, a, (size_t)n * sizeof *a) == WT_OK &&
                   wt_tensor_read(g16, b, (size_t)n * sizeof *b) == WT_OK;
        double big = 0, err = 0;
        for (int64_t k = 0; got && k < n; k++) {
            big = fmax(big, fabs(a[k]));
            err = fmax(err, fabs((double)a[k] - b[k]));
        }
        CHECK(got && err <= tol * big + 1e-6, "%s (f16 vs f32): input %d: max difference %.3g, %.2g of the largest "
              "gradient %.3g (tolerance %.0e)", name, i, err, big > 0 ? err / big : 0.0, big, tol);
        if (got) printf("f16 vs f32: %s, input %d: %.2g of the largest gradient\n", name, i, big > 0 ? err / big : 0.0);
        wt_tensor_release(g32), wt_tensor_release(g16);
        free(a), free(b);
    }
done:
    wt_tensor_release(seed), wt_tensor_release(y32), wt_tensor_release(y16);
    for (int i = 0; i < nin; i++) {
        wt_tensor_release(in32[i]), wt_tensor_release(in16[i]);
        free(data[i]), free(idx[i]);
    }
}

static wt_status fwd_gelu(wt_tensor *const *in, wt_tensor **out) { return wt_gelu(in[0], out); }

static void test_f16(void)
{
    spec li[3] = {{2, {6, 16}, ANY, true}, {2, {8, 16}, ANY, true}, {1, {8}, ANY, true}};
    f16check("linear", fwd_linear, 3, li);
    spec mm[2] = {{3, {2, 5, 8}, ANY, true}, {2, {8, 3}, ANY, true}};
    f16check("matmul (broadcast batch)", fwd_matmul, 2, mm);
    spec un[1] = {{2, {4, 9}, ANY, true}};
    f16check("gelu", fwd_gelu, 1, un);
    g_axis = -1;
    f16check("softmax", fwd_softmax, 1, un);
    f16check("log_softmax", fwd_log_softmax, 1, un);
    spec ln[3] = {{3, {2, 3, 8}, ANY, true}, {2, {3, 8}, ANY, true}, {2, {3, 8}, ANY, true}};
    f16check("layer_norm", fwd_layer_norm, 3, ln);
    spec rn[2] = {{2, {3, 16}, ANY, true}, {1, {16}, ANY, true}};
    f16check("rms_norm", fwd_rms_norm, 2, rn);
    spec ce[2] = {{2, {6, 7}, ANY, true}, {1, {6}, INDEX, false, false, 7}};
    f16check("cross_entropy", fwd_cross_entropy, 2, ce);
    spec at[3] = {{4, {1, 2, 6, 8}, ANY, true}, {4, {1, 2, 6, 8}, ANY, true}, {4, {1, 2, 6, 8}, ANY, true}};
    g_causal = true;
    f16check("attention (causal)", fwd_attention, 3, at);
    spec cv[3] = {{4, {2, 3, 6, 6}, ANY, true}, {4, {4, 3, 3, 3}, ANY, true}, {1, {4}, ANY, true}};
    f16check("conv2d", fwd_conv2d, 3, cv);
    spec gna[3] = {{4, {2, 4, 3, 2}, ANY, true}, {1, {4}, ANY, true}, {1, {4}, ANY, true}};
    f16check("group_norm with weight and bias", fwd_group_norm_affine, 3, gna);
    spec emb[2] = {{2, {9, 8}, ANY, true}, {2, {2, 5}, INDEX, false, false, 9}};
    f16check("embedding", fwd_embedding, 2, emb);
}

/* The attention rule without a mask runs the fused backward when asked
 * (WT_ATTN_BACKWARD=fused; by default where the backend prefers it): on a
 * fresh context, the backward of a causal attention over
 * 512 keys must not hold a [512, 512] matrix (1 MiB) at any time, and its
 * gradients equal those of the composed rule (taken by adding an all-true
 * bool mask). */
static void test_attention_fused(test_backend b)
{
    wt_context *ctx = NULL;
    if (test_create_context(b, &ctx) != WT_OK) return;
    setenv("WT_ATTN_BACKWARD", "fused", 1);
    enum { T = 512, DH = 16 };
    const int64_t shape[4] = {1, 1, T, DH};
    float *h = malloc(sizeof(float) * T * DH);
    wt_tensor *in[3] = {0}, *y = NULL, *seed = NULL, *loss = NULL, *mask = NULL;
    for (int i = 0; i < 3; i++) {
        for (int k = 0; k < T * DH; k++) h[k] = test_rng_uniform(-1, 1);
        wt_tensor_from_data(ctx, WT_F32, 4, shape, h, &in[i]);
        wt_tensor_set_requires_grad(in[i], true);
    }
    for (int k = 0; k < T * DH; k++) h[k] = test_rng_uniform(-1, 1);
    wt_tensor_from_data(ctx, WT_F32, 4, shape, h, &seed);
    wt_memory_stats m0 = {0}, m1 = {0};
    bool ok = wt_scaled_dot_product_attention(in[0], in[1], in[2], NULL, true, 0.0, &y) == WT_OK &&
              wt_context_sync(ctx) == WT_OK && wt_context_memory_stats(ctx, &m0) == WT_OK &&
              wt_backward_ex(1, &y, &seed, NULL) == WT_OK && wt_context_sync(ctx) == WT_OK &&
              wt_context_memory_stats(ctx, &m1) == WT_OK;
    uint64_t rise = m1.peak_bytes - m0.live_bytes;
    CHECK(ok && rise < (uint64_t)T * T * 4 / 2, "fused attention backward, causal, 512 keys: the peak rose by %llu "
          "bytes (a [512, 512] matrix is %d)", (unsigned long long)rise, T * T * 4);
    printf("fused attention backward (512 keys, head 16): peak %llu bytes above the live ones\n",
           (unsigned long long)rise);
    /* The composed rule, through an all-true mask. */
    const size_t bytes = sizeof(float) * T * DH;
    float *g1 = malloc(3 * bytes), *g2 = malloc(3 * bytes);
    for (int i = 0; ok && i < 3; i++) {
        wt_tensor *g = NULL;
        ok = wt_tensor_grad(in[i], &g) == WT_OK && g && wt_tensor_read(g, g1 + i * T * DH, bytes) == WT_OK;
        wt_tensor_release(g);
        wt_tensor_zero_grad(in[i]);
    }
    wt_tensor_release(y);
    y = NULL;
    ok = ok && wt_tensor_full(ctx, WT_BOOL, 2, (const int64_t[]){T, T}, 1.0, &mask) == WT_OK &&
         wt_scaled_dot_product_attention(in[0], in[1], in[2], mask, true, 0.0, &y) == WT_OK &&
         wt_backward_ex(1, &y, &seed, NULL) == WT_OK;
    double err = 0, big = 0;
    for (int i = 0; ok && i < 3; i++) {
        wt_tensor *g = NULL;
        ok = wt_tensor_grad(in[i], &g) == WT_OK && g && wt_tensor_read(g, g2 + i * T * DH, bytes) == WT_OK;
        wt_tensor_release(g);
        for (int k = i * T * DH; ok && k < (i + 1) * T * DH; k++) {
            err = fmax(err, fabs(g1[k] - g2[k]));
            big = fmax(big, fabs(g2[k]));
        }
    }
    CHECK(ok && err <= 1e-4 * big + 1e-6, "fused and composed attention backward agree (max difference %.2g, "
          "largest %.2g)", err, big);
    free(g1), free(g2);
    wt_tensor_release(y), wt_tensor_release(seed), wt_tensor_release(loss), wt_tensor_release(mask);
    for (int i = 0; i < 3; i++) wt_tensor_release(in[i]);
    free(h);
    wt_context_destroy(ctx);
    unsetenv("WT_ATTN_BACKWARD");
}

/* The gradients of q, k, v for loss = sum(seed * attention(q, k, v)) with
 * WT_ATTN_BACKWARD set to knob; false when a step fails. */
static bool attention_grads(wt_context *ctx, const char *knob, const int64_t *const *shapes, bool causal,
                            float *const *host, float *const *grads)
{
    setenv("WT_ATTN_BACKWARD", knob, 1);
    wt_tensor *t[4] = {0}, *y = NULL;
    bool ok = true;
    for (int i = 0; i < 4 && ok; i++) {
        ok = wt_tensor_from_data(ctx, WT_F32, 4, shapes[i], host[i], &t[i]) == WT_OK;
        if (ok && i < 3) ok = wt_tensor_set_requires_grad(t[i], true) == WT_OK;
    }
    ok = ok && wt_scaled_dot_product_attention(t[0], t[1], t[2], NULL, causal, 0.0, &y) == WT_OK &&
         wt_backward_ex(1, &y, &t[3], NULL) == WT_OK;
    for (int i = 0; i < 3 && ok; i++) {
        wt_tensor *g = NULL;
        ok = wt_tensor_grad(t[i], &g) == WT_OK && g &&
             wt_tensor_read(g, grads[i], sizeof(float) * (size_t)wt_tensor_numel(t[i])) == WT_OK;
        wt_tensor_release(g);
    }
    wt_tensor_release(y);
    for (int i = 0; i < 4; i++) wt_tensor_release(t[i]);
    unsetenv("WT_ATTN_BACKWARD");
    return ok;
}

/* The fused attention backward against the composed rule (public ops,
 * on the CPU: matrix products and softmax there, and no shader for a
 * software adapter to compile) over shapes that reach the tiled kernels' edges: sequence lengths that
 * are no multiple of a tile, more queries than keys under causality (rows
 * that see no key), grouped heads, a single query, head dims below 64 (16:
 * the shader variants the test above compiles) and at 64, and head dims
 * the tiled kernels do not take (the untiled ones run). Few shader
 * variants: a software adapter compiles each for seconds to tens. */
static void test_attention_fused_shapes(test_backend b)
{
    wt_context *ctx = NULL;
    if (test_create_context(b, &ctx) != WT_OK) return;
    static const struct {
        int64_t B, Hq, Hkv, Sq, Skv, D, Dv;
        bool causal;
    } cases[] = {
        {2, 4, 2, 37, 45, 16, 16, false}, {2, 4, 2, 37, 45, 16, 16, true}, {1, 2, 1, 45, 33, 16, 16, true},
        {2, 2, 1, 1, 17, 16, 16, false},  {1, 1, 1, 70, 70, 64, 64, true}, {1, 2, 2, 19, 23, 6, 5, true},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const int64_t qs[4] = {cases[c].B, cases[c].Hq, cases[c].Sq, cases[c].D},
                      ks[4] = {cases[c].B, cases[c].Hkv, cases[c].Skv, cases[c].D},
                      vs[4] = {cases[c].B, cases[c].Hkv, cases[c].Skv, cases[c].Dv},
                      gs[4] = {cases[c].B, cases[c].Hq, cases[c].Sq, cases[c].Dv};
        const size_t n[4] = {(size_t)(qs[0] * qs[1] * qs[2] * qs[3]), (size_t)(ks[0] * ks[1] * ks[2] * ks[3]),
                             (size_t)(vs[0] * vs[1] * vs[2] * vs[3]), (size_t)(gs[0] * gs[1] * gs[2] * gs[3])};
        float *host[4], *fused[3], *composed[3];
        for (int i = 0; i < 4; i++) {
            host[i] = malloc(sizeof(float) * n[i]);
            for (size_t e = 0; e < n[i]; e++) host[i][e] = test_rng_uniform(-1.5f, 1.5f);
        }
        for (int i = 0; i < 3; i++) fused[i] = malloc(sizeof(float) * n[i]), composed[i] = malloc(sizeof(float) * n[i]);
        const int64_t *shapes[4] = {qs, ks, vs, gs};
        bool ok = attention_grads(ctx, "fused", shapes, cases[c].causal, host, fused) &&
                  attention_grads(g_cpu, "composed", shapes, cases[c].causal, host, composed);
        double err = 0, big = 0;
        for (int i = 0; ok && i < 3; i++)
            for (size_t e = 0; e < n[i]; e++) {
                err = fmax(err, fabs(fused[i][e] - composed[i][e]));
                big = fmax(big, fabs(composed[i][e]));
            }
        printf("fused attention backward, B %lld Hq %lld Hkv %lld Sq %lld Skv %lld D %lld Dv %lld%s: max "
               "difference %.2g to the composed rule (largest %.2g)\n", (long long)qs[0], (long long)qs[1],
               (long long)ks[1], (long long)qs[2], (long long)ks[2], (long long)qs[3], (long long)vs[3],
               cases[c].causal ? " causal" : "", err, big);
        CHECK(ok && err <= 2e-5 * (big + 1.0), "fused attention backward, B %lld Hq %lld Hkv %lld Sq %lld Skv %lld "
              "D %lld Dv %lld%s: max difference %.2g to the composed rule (largest %.2g)", (long long)qs[0],
              (long long)qs[1], (long long)ks[1], (long long)qs[2], (long long)ks[2], (long long)qs[3],
              (long long)vs[3], cases[c].causal ? " causal" : "", err, big);
        for (int i = 0; i < 4; i++) free(host[i]);
        for (int i = 0; i < 3; i++) free(fused[i]), free(composed[i]);
    }
    wt_context_destroy(ctx);
}

/* The gradients of x, weight and bias for loss = sum(seed * layer_norm(x))
 * over the last k axes of x (shape xs, nd axes; weight / bias when
 * given), WT_NORM_BACKWARD set to knob; false when a step fails. */
static bool layer_norm_grads(wt_context *ctx, const char *knob, int nd, const int64_t *xs, int k, bool weight,
                             bool bias, float *const *host, float *const *grads)
{
    setenv("WT_NORM_BACKWARD", knob, 1);
    int64_t C = 1, n = 1;
    for (int i = 0; i < nd; i++) n *= xs[i];
    for (int i = nd - k; i < nd; i++) C *= xs[i];
    wt_tensor *x = NULL, *w = NULL, *b = NULL, *seed = NULL, *y = NULL;
    bool ok = wt_tensor_from_data(ctx, WT_F32, nd, xs, host[0], &x) == WT_OK &&
              wt_tensor_set_requires_grad(x, true) == WT_OK &&
              wt_tensor_from_data(ctx, WT_F32, nd, xs, host[3], &seed) == WT_OK;
    if (ok && weight)
        ok = wt_tensor_from_data(ctx, WT_F32, k, xs + nd - k, host[1], &w) == WT_OK &&
             wt_tensor_set_requires_grad(w, true) == WT_OK;
    if (ok && bias)
        ok = wt_tensor_from_data(ctx, WT_F32, k, xs + nd - k, host[2], &b) == WT_OK &&
             wt_tensor_set_requires_grad(b, true) == WT_OK;
    ok = ok && wt_layer_norm(x, k, w, b, 1e-5f, &y) == WT_OK && wt_backward_ex(1, &y, &seed, NULL) == WT_OK;
    wt_tensor *src[3] = {x, w, b};
    const int64_t count[3] = {n, C, C};
    for (int i = 0; i < 3 && ok; i++) {
        if (!src[i]) continue;
        wt_tensor *g = NULL;
        ok = wt_tensor_grad(src[i], &g) == WT_OK && g &&
             wt_tensor_read(g, grads[i], sizeof(float) * (size_t)count[i]) == WT_OK;
        wt_tensor_release(g);
    }
    wt_tensor_release(y), wt_tensor_release(seed);
    for (int i = 0; i < 3; i++) wt_tensor_release(src[i]);
    unsetenv("WT_NORM_BACKWARD");
    return ok;
}

/* Layer norm's one-kernel backward (WebGPU; elsewhere the composed rule
 * runs both times) against the composed rule on the CPU: rows of
 * four-element units shared by several rows a workgroup (384, the GPT
 * example's) and one row a workgroup (2560: subgroup reductions where the
 * device has them), odd rows read element by element, two normalised
 * axes, without a weight or a bias, and rows far from zero (the mean
 * shifted by 1000). */
static void test_layer_norm_fused(test_backend b)
{
    wt_context *ctx = NULL;
    if (test_create_context(b, &ctx) != WT_OK) return;
    static const struct {
        int nd;
        int64_t shape[4];
        int k;
        bool weight, bias;
        float shift;
    } cases[] = {
        {3, {3, 5, 384}, 1, true, true, 0.0f},   {2, {3, 2560}, 1, true, true, 0.0f},
        {3, {2, 7, 37}, 1, true, false, 0.0f},   {4, {4, 3, 8, 12}, 2, false, true, 0.0f},
        {2, {6, 64}, 1, true, true, 1000.0f},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        int64_t n = 1, C = 1;
        for (int i = 0; i < cases[c].nd; i++) n *= cases[c].shape[i];
        for (int i = cases[c].nd - cases[c].k; i < cases[c].nd; i++) C *= cases[c].shape[i];
        const int64_t count[4] = {n, C, C, n};
        float *host[4], *fused[3], *composed[3];
        for (int i = 0; i < 4; i++) {
            host[i] = malloc(sizeof(float) * (size_t)count[i]);
            for (int64_t e = 0; e < count[i]; e++)
                host[i][e] = test_rng_uniform(-1.5f, 1.5f) + (i == 0 ? cases[c].shift : 0.0f);
        }
        for (int i = 0; i < 3; i++) {
            fused[i] = calloc((size_t)count[i], sizeof(float));
            composed[i] = calloc((size_t)count[i], sizeof(float));
        }
        bool ok = layer_norm_grads(ctx, "fused", cases[c].nd, cases[c].shape, cases[c].k, cases[c].weight,
                                   cases[c].bias, host, fused) &&
                  layer_norm_grads(g_cpu, "composed", cases[c].nd, cases[c].shape, cases[c].k, cases[c].weight,
                                   cases[c].bias, host, composed);
        double err[3] = {0}, big[3] = {0};
        for (int i = 0; ok && i < 3; i++)
            for (int64_t e = 0; e < count[i]; e++) {
                err[i] = fmax(err[i], fabs(fused[i][e] - composed[i][e]));
                big[i] = fmax(big[i], fabs(composed[i][e]));
            }
        /* x's gradient scales with 1 / the row's spread, not with the shift. */
        CHECK(ok && err[0] <= 1e-4 * (big[0] + 1.0) && err[1] <= 1e-4 * (big[1] + 1.0) &&
                  err[2] <= 1e-4 * (big[2] + 1.0),
              "layer norm backward, %lld elements, rows of %lld%s: max difference to the composed rule dx %.2g "
              "(largest %.2g), dweight %.2g (%.2g), dbias %.2g (%.2g)",
              (long long)n, (long long)C, cases[c].shift != 0.0f ? ", shifted by 1000" : "", err[0], big[0], err[1],
              big[1], err[2], big[2]);
        for (int i = 0; i < 4; i++) free(host[i]);
        for (int i = 0; i < 3; i++) free(fused[i]), free(composed[i]);
    }
    wt_context_destroy(ctx);
}

static void test_memory(void)
{
    int64_t xs[2] = {8, 4}, ws[2] = {3, 4};
    wt_tensor *x = NULL, *w = NULL, *b = NULL;
    wt_randn(g_ctx, WT_F32, 2, xs, 1, &x);
    wt_randn(g_ctx, WT_F32, 2, ws, 2, &w);
    wt_tensor_zeros(g_ctx, WT_F32, 1, (int64_t[]){3}, &b);
    wt_tensor_set_requires_grad(w, true);
    wt_tensor_set_requires_grad(b, true);
    int32_t lab[8] = {0, 1, 2, 0, 1, 2, 0, 1};
    wt_tensor *labels = NULL;
    wt_tensor_from_data(g_ctx, WT_I32, 1, (int64_t[]){8}, lab, &labels);
    uint64_t after_first = 0;
    bool flat = true;
    for (int step = 0; step < 12; step++) {
        wt_scope *s = NULL;
        wt_scope_begin(g_ctx, &s);
        wt_tensor *y = NULL, *a = NULL, *loss = NULL, *gw = NULL, *gb = NULL;
        wt_linear(x, w, b, &y);
        wt_gelu(y, &a);
        wt_cross_entropy(a, labels, NULL, &loss);
        if (step % 3 == 2) {
            /* a forward pass never differentiated frees its graph too */
        } else if (wt_backward(loss) != WT_OK) {
            flat = CHECK(false, "memory: backward: %s", wt_last_error());
        }
        wt_tensor_grad(w, &gw);
        wt_tensor_grad(b, &gb);
        wt_sgd_options o;
        wt_sgd_options_init(&o);
        if (gw) wt_sgd_step(w, gw, NULL, &o);
        if (gb) wt_sgd_step(b, gb, NULL, &o);
        wt_tensor_zero_grad(w);
        wt_tensor_zero_grad(b);
        wt_scope_end(s);
        uint64_t live = live_tensors();
        if (step == 0) after_first = live;
        else if (live != after_first) flat = false;
    }
    CHECK(flat, "live tensors stay at %llu over training steps (now %llu)", (unsigned long long)after_first,
          (unsigned long long)live_tensors());
    wt_tensor_release(x);
    wt_tensor_release(w);
    wt_tensor_release(b);
    wt_tensor_release(labels);
}

static void test_catalogue(void)
{
    /* Ops that are differentiable but have no rule yet: this list and the
     * table must agree, so a rule added (or lost) shows here. */
    static const char *const no_rule_yet[] = {
        "activation_backward",
        "cross_entropy_backward", "embedding_backward", "layernorm_backward", "batch_norm_backward",
        "conv2d_backward", "max_pool2d_backward", "avg_pool2d_backward", "interpolate_backward",
        "linear_quant"};
    int missing = 0, rules = 0, marked = 0;
    for (int op = 0; op < wt_op_count(); op++) {
        wt_op_grad k = wt_op_gradient(op);
        const char *name = wt_op_name(op);
        bool listed = false;
        for (size_t j = 0; j < sizeof no_rule_yet / sizeof no_rule_yet[0]; j++)
            listed = listed || !strcmp(no_rule_yet[j], name);
        if (k == WT_OP_GRAD_UNKNOWN) {
            missing++;
            CHECK(false, "catalogue: %s has no derivative row (src/autograd/rules_table.c)", name);
        } else if (k == WT_OP_GRAD_RULE) {
            rules++;
        } else {
            marked++;
        }
        if (listed != (k == WT_OP_GRAD_NO_RULE_YET))
            CHECK(false, "catalogue: %s is %s the list of ops without a rule yet", name,
                  listed ? "wrongly on" : "not on");
    }
    CHECK(wt_op_gradient(-1) == WT_OP_GRAD_UNKNOWN && wt_op_gradient(wt_op_count()) == WT_OP_GRAD_UNKNOWN,
          "catalogue: indices out of range");
    printf("catalogue: %d ops with a rule, %d marked, %d missing\n", rules, marked, missing);
    CHECK(missing == 0, "catalogue: %d ops with a rule, %d marked (non-differentiable, creation, in place, no rule "
                        "yet), %d missing",
          rules, marked, missing);
}

/* ------------------------------------------------------- a small MLP */

/* Two-class spirals-like data (points inside / outside a circle), a
 * 2-16-2 MLP with tanh, AdamW, trained with the tape. */
static void test_mlp(void)
{
    enum { N = 64, H = 16, STEPS = 300 };
    float xv[N * 2];
    int32_t yv[N];
    test_rng_seed(99);
    for (int i = 0; i < N; i++) {
        float a = test_rng_uniform(-1.5f, 1.5f), b = test_rng_uniform(-1.5f, 1.5f);
        xv[2 * i] = a, xv[2 * i + 1] = b;
        yv[i] = a * a + b * b < 1.0f;
    }
    wt_tensor *x = NULL, *y = NULL, *p[4] = {0}, *m[4] = {0}, *v[4] = {0};
    wt_tensor_from_data(g_ctx, WT_F32, 2, (int64_t[]){N, 2}, xv, &x);
    wt_tensor_from_data(g_ctx, WT_I32, 1, (int64_t[]){N}, yv, &y);
    int64_t shapes[4][2] = {{H, 2}, {H, 0}, {2, H}, {2, 0}};
    for (int k = 0; k < 4; k++) {
        int nd = shapes[k][1] ? 2 : 1;
        wt_tensor *r = NULL;
        wt_randn(g_ctx, WT_F32, nd, shapes[k], 10 + (uint64_t)k, &r);
        wt_mul_scalar(r, nd == 2 ? 0.5 : 0.0, &p[k]);
        wt_tensor_release(r);
        wt_tensor_set_requires_grad(p[k], true);
        wt_tensor_zeros(g_ctx, WT_F32, nd, shapes[k], &m[k]);
        wt_tensor_zeros(g_ctx, WT_F32, nd, shapes[k], &v[k]);
    }
    wt_adamw_options o;
    wt_adamw_options_init(&o);
    o.lr = 0.05f;
    o.weight_decay = 0.0f;
    float first = NAN, last = NAN;
    bool ok = true;
    for (int step = 1; step <= STEPS && ok; step++) {
        wt_scope *s = NULL;
        wt_scope_begin(g_ctx, &s);
        wt_tensor *h = NULL, *a = NULL, *logits = NULL, *loss = NULL;
        ok = wt_linear(x, p[0], p[1], &h) == WT_OK && wt_tanh(h, &a) == WT_OK &&
             wt_linear(a, p[2], p[3], &logits) == WT_OK && wt_cross_entropy(logits, y, NULL, &loss) == WT_OK &&
             wt_backward(loss) == WT_OK;
        for (int k = 0; k < 4 && ok; k++) {
            wt_tensor *g = NULL;
            ok = wt_tensor_grad(p[k], &g) == WT_OK && g && wt_adamw_step(p[k], g, m[k], v[k], step, &o) == WT_OK;
            wt_tensor_zero_grad(p[k]);
        }
        if (ok && (step == 1 || step == STEPS)) {
            float lv = NAN;
            wt_tensor_read(loss, &lv, sizeof lv);
            if (step == 1) first = lv;
            else last = lv;
        }
        wt_scope_end(s);
    }
    CHECK(ok, "mlp: training steps ran (%s)", ok ? "" : wt_last_error());
    printf("mlp: cross-entropy %.4f -> %.4f in %d steps\n", first, last, STEPS);
    CHECK(last < 0.25f && last < first, "mlp: loss %.4f -> %.4f after %d steps (bound 0.25)", first, last, STEPS);
    for (int k = 0; k < 4; k++) {
        wt_tensor_release(p[k]);
        wt_tensor_release(m[k]);
        wt_tensor_release(v[k]);
    }
    wt_tensor_release(x);
    wt_tensor_release(y);
}

/* Gradient-ready hooks: each fires once per backward pass, when its
 * leaf's gradient is final - read inside the hook, it already holds the
 * .grad the pass commits (w gets two contributions, so an early call
 * would see part of it) - and the .grad is bit for bit what it is
 * without hooks; accumulation over two passes, wt_grad (no calls), a
 * leaf the pass does not reach (no call), removal and bad arguments. */
typedef struct hook_log {
    int calls;
    float seen[32];
    int64_t n;
} hook_log;

static void log_ready(wt_tensor *grad, void *user)
{
    hook_log *h = user;
    h->calls++;
    if (wt_tensor_numel(grad) != h->n || wt_tensor_read(grad, h->seen, (size_t)h->n * sizeof(float)) != WT_OK)
        h->calls += 1000;
}

static wt_status hook_loss(wt_tensor *x, wt_tensor *w, wt_tensor *b, wt_tensor **loss)
{
    wt_tensor *y = NULL, *t = NULL, *ww = NULL, *s1 = NULL, *s2 = NULL, *s3 = NULL, *l1 = NULL;
    wt_status st = wt_linear(x, w, b, &y);
    if (st == WT_OK) st = wt_tanh(y, &t);
    if (st == WT_OK) st = wt_mul(w, w, &ww);
    if (st == WT_OK) st = wt_sum(t, 0, NULL, false, &s1);
    if (st == WT_OK) st = wt_sum(ww, 0, NULL, false, &s2);
    if (st == WT_OK) st = wt_sum(b, 0, NULL, false, &s3);
    if (st == WT_OK) st = wt_add(s1, s2, &l1);
    if (st == WT_OK) st = wt_add(l1, s3, loss);
    wt_tensor_release(y), wt_tensor_release(t), wt_tensor_release(ww), wt_tensor_release(s1);
    wt_tensor_release(s2), wt_tensor_release(s3), wt_tensor_release(l1);
    return st;
}

static void test_ready_hooks(void)
{
    float xv[12], wv[8], bv[4] = {0.1f, -0.2f, 0.3f, 0.05f};
    for (int i = 0; i < 12; i++) xv[i] = 0.37f * (float)(i % 5) - 0.61f;
    for (int i = 0; i < 8; i++) wv[i] = 0.23f * (float)i - 0.9f;
    wt_tensor *x = NULL, *w = NULL, *b = NULL, *u = NULL, *loss = NULL;
    wt_tensor_from_data(g_ctx, WT_F32, 2, (int64_t[]){6, 2}, xv, &x);
    wt_tensor_from_data(g_ctx, WT_F32, 2, (int64_t[]){4, 2}, wv, &w);
    wt_tensor_from_data(g_ctx, WT_F32, 1, (int64_t[]){4}, bv, &b);
    wt_tensor_from_data(g_ctx, WT_F32, 1, (int64_t[]){4}, bv, &u);
    wt_tensor_set_requires_grad(w, true);
    wt_tensor_set_requires_grad(b, true);
    wt_tensor_set_requires_grad(u, true);
    /* Without hooks: the reference .grad. */
    float ref_w[8] = {0}, ref_b[4] = {0}, got_w[8] = {0}, got_b[4] = {0};
    wt_tensor *g = NULL;
    CHECK(hook_loss(x, w, b, &loss) == WT_OK && wt_backward(loss) == WT_OK, "hooks: reference backward");
    wt_tensor_release(loss);
    wt_tensor_grad(w, &g), wt_tensor_read(g, ref_w, sizeof ref_w), wt_tensor_release(g), g = NULL;
    wt_tensor_grad(b, &g), wt_tensor_read(g, ref_b, sizeof ref_b), wt_tensor_release(g), g = NULL;
    wt_tensor_zero_grad(w), wt_tensor_zero_grad(b);
    hook_log hw = {.n = 8}, hb = {.n = 4}, hu = {.n = 4};
    CHECK(wt_tensor_set_grad_ready_hook(w, log_ready, &hw) == WT_OK &&
              wt_tensor_set_grad_ready_hook(b, log_ready, &hb) == WT_OK &&
              wt_tensor_set_grad_ready_hook(u, log_ready, &hu) == WT_OK,
          "hooks: set");
    for (int pass = 1; pass <= 2; pass++) {
        CHECK(hook_loss(x, w, b, &loss) == WT_OK && wt_backward(loss) == WT_OK, "hooks: backward %d", pass);
        wt_tensor_release(loss);
        wt_tensor_grad(w, &g), wt_tensor_read(g, got_w, sizeof got_w), wt_tensor_release(g), g = NULL;
        wt_tensor_grad(b, &g), wt_tensor_read(g, got_b, sizeof got_b), wt_tensor_release(g), g = NULL;
        CHECK(hw.calls == pass && hb.calls == pass && hu.calls == 0, "hooks: calls after pass %d: %d %d %d", pass,
              hw.calls, hb.calls, hu.calls);
        CHECK(!memcmp(hw.seen, got_w, sizeof got_w) && !memcmp(hb.seen, got_b, sizeof got_b),
              "hooks: pass %d: the hook saw the final .grad", pass);
        bool same = true;
        for (int i = 0; i < 8; i++) same = same && got_w[i] == (pass == 1 ? ref_w[i] : ref_w[i] + ref_w[i]);
        for (int i = 0; i < 4; i++) same = same && got_b[i] == (pass == 1 ? ref_b[i] : ref_b[i] + ref_b[i]);
        CHECK(same, "hooks: pass %d: .grad bit for bit as without hooks", pass);
    }
    /* wt_grad touches no .grad and calls no hook. */
    wt_tensor *gw[1] = {NULL};
    CHECK(hook_loss(x, w, b, &loss) == WT_OK && wt_grad(1, &loss, NULL, 1, &w, NULL, gw) == WT_OK && hw.calls == 2,
          "hooks: wt_grad calls none");
    wt_tensor_release(gw[0]);
    wt_tensor_release(loss);
    loss = NULL;
    /* Removed: no call. */
    CHECK(wt_tensor_set_grad_ready_hook(w, NULL, NULL) == WT_OK && hook_loss(x, w, b, &loss) == WT_OK &&
              wt_backward(loss) == WT_OK && hw.calls == 2 &&
              hb.calls == 3,
          "hooks: removal");
    wt_tensor *r = NULL;
    CHECK(hook_loss(x, w, b, &r) == WT_OK &&
              wt_tensor_set_grad_ready_hook(r, log_ready, &hw) == WT_ERR_INVALID_ARGUMENT &&
              wt_tensor_set_grad_ready_hook(NULL, log_ready, &hw) == WT_ERR_INVALID_ARGUMENT,
          "hooks: a recorded result and NULL are refused");
    wt_tensor_release(r), wt_tensor_release(loss);
    wt_tensor_release(x), wt_tensor_release(w), wt_tensor_release(b), wt_tensor_release(u);
}

int main(int argc, char **argv)
{
    test_backend b = test_parse_backend(argc > 1 ? argv[1] : "cpu");
    if (b == TEST_BACKEND_INVALID) {
        fprintf(stderr, "usage: autograd <cpu|vulkan|gles>\n");
        return 2;
    }
    printf("seed %llu\n", (unsigned long long)test_seed());
    test_rng_seed(test_seed());
    if (test_create_context(b, &g_ctx) != WT_OK) return test_summary("autograd");
    if (test_create_context(TEST_BACKEND_CPU, &g_cpu) != WT_OK) return test_summary("autograd");
    test_catalogue();
    test_contract();
    test_unary();
    test_binary();
    test_select();
    test_reductions();
    test_movement();
    test_nn();
    test_f16();
    test_attention_fused(b);
    test_attention_fused_shapes(b);
    test_layer_norm_fused(b);
    test_memory();
    test_mlp();
    test_ready_hooks();
    wt_context_destroy(g_cpu);
    wt_context_destroy(g_ctx);
    return test_summary("autograd");
}
