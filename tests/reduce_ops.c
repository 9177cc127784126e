/* reduce_ops <cpu|vulkan|gles>: the reduction family (one row per op of
 * src/core/reduce_ops.def, each with a float64 reference here), argmax and
 * argmin, cumsum and cumprod, over the suite's reduction shape classes
 * (conformance_cases.c) plus special values; then bad input. Every row of
 * the library's table must have a row here, or the run fails. */
#include "conformance.h"
#include "input_spec.h"
#include "test_util.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static wt_context *g_ctx;
static const char *g_backend;

/* ------------------------------------------------------------ references */

/* A reference reduces the n values of one output (row-major over the
 * reduced axes) and sets *scale, the size its rounding error is measured
 * against. */
typedef double (*ref_fn)(const double *v, int64_t n, double param, double *scale);

static double r_sum(const double *v, int64_t n, double param, double *scale)
{
    (void)param;
    double s = 0, a = 0;
    for (int64_t i = 0; i < n; i++) s += v[i], a += fabs(v[i]);
    *scale = a;
    return s;
}
static double r_mean(const double *v, int64_t n, double param, double *scale)
{
    double s = r_sum(v, n, param, scale);
    *scale /= (double)n;
    return s / (double)n;
}
static double r_max(const double *v, int64_t n, double param, double *scale)
{
    (void)param;
    double m = -INFINITY;
    for (int64_t i = 0; i < n; i++) {
        if (isnan(v[i])) return *scale = 0, NAN;
        if (v[i] > m) m = v[i];
    }
    return *scale = 0, m;
}
static double r_min(const double *v, int64_t n, double param, double *scale)
{
    (void)param;
    double m = INFINITY;
    for (int64_t i = 0; i < n; i++) {
        if (isnan(v[i])) return *scale = 0, NAN;
        if (v[i] < m) m = v[i];
    }
    return *scale = 0, m;
}
static double r_prod(const double *v, int64_t n, double param, double *scale)
{
    (void)param;
    double p = 1;
    for (int64_t i = 0; i < n; i++) p *= v[i];
    *scale = fabs(p);
    return p;
}
static double r_var(const double *v, int64_t n, double param, double *scale)
{
    double m = 0, s = 0;
    for (int64_t i = 0; i < n; i++) m += v[i];
    m /= (double)n;
    for (int64_t i = 0; i < n; i++) s += (v[i] - m) * (v[i] - m);
    double d = (double)n - param > 0 ? (double)n - param : 0;
    /* The f32 mean is off by about an ulp of |m|: that adds its square. */
    *scale = s / d + 1e-8 * m * m;
    return s / d;
}
static double r_std(const double *v, int64_t n, double param, double *scale)
{
    double r = sqrt(r_var(v, n, param, scale));
    double m = 0;
    for (int64_t i = 0; i < n; i++) m += v[i];
    /* As for var: an ulp of the mean shows when the spread is 0. */
    *scale = r + 0.03 * fabs(m / (double)n);
    return r;
}
static double r_logsumexp(const double *v, int64_t n, double param, double *scale)
{
    (void)param;
    double m = -INFINITY, s = 0;
    for (int64_t i = 0; i < n; i++) {
        if (isnan(v[i])) return *scale = 0, NAN;
        if (v[i] > m) m = v[i];
    }
    if (isinf(m)) return *scale = 0, m;
    for (int64_t i = 0; i < n; i++) s += exp(v[i] - m);
    double r = m + log(s);
    *scale = 1 + fabs(r);
    return r;
}
static double r_norm1(const double *v, int64_t n, double param, double *scale)
{
    (void)param;
    double s = 0;
    for (int64_t i = 0; i < n; i++) s += fabs(v[i]);
    return *scale = s, s;
}
static double r_norm2(const double *v, int64_t n, double param, double *scale)
{
    (void)param;
    double s = 0;
    for (int64_t i = 0; i < n; i++) s += v[i] * v[i];
    return *scale = sqrt(s), sqrt(s);
}
static double r_norminf(const double *v, int64_t n, double param, double *scale)
{
    (void)param;
    double m = 0;
    for (int64_t i = 0; i < n; i++) {
        if (isnan(v[i])) return *scale = 0, NAN;
        if (fabs(v[i]) > m) m = fabs(v[i]);
    }
    return *scale = 0, m;
}
static double r_all(const double *v, int64_t n, double param, double *scale)
{
    (void)param;
    *scale = 0;
    for (int64_t i = 0; i < n; i++)
        if (v[i] == 0) return 0;
    return 1;
}
static double r_any(const double *v, int64_t n, double param, double *scale)
{
    (void)param;
    *scale = 0;
    for (int64_t i = 0; i < n; i++)
        if (v[i] != 0) return 1;
    return 0;
}
/* Integer sums and products wrap modulo 2^32. */
static double wrap32(uint64_t u) { return (double)(int32_t)(uint32_t)u; }
static double r_isum(const double *v, int64_t n, double param, double *scale)
{
    (void)param;
    uint64_t s = 0;
    for (int64_t i = 0; i < n; i++) s += (uint64_t)(int64_t)v[i];
    return *scale = 0, wrap32(s);
}
static double r_iprod(const double *v, int64_t n, double param, double *scale)
{
    (void)param;
    uint64_t p = 1;
    for (int64_t i = 0; i < n; i++) p *= (uint64_t)(int64_t)v[i];
    return *scale = 0, wrap32(p);
}
/* First index of the extremum; the first NaN wins. */
static double r_argmax(const double *v, int64_t n, double param, double *scale)
{
    (void)param;
    *scale = 0;
    int64_t at = 0;
    for (int64_t i = 0; i < n; i++) {
        if (isnan(v[i])) return (double)i;
        if (v[i] > v[at]) at = i;
    }
    return (double)at;
}
static double r_argmin(const double *v, int64_t n, double param, double *scale)
{
    (void)param;
    *scale = 0;
    int64_t at = 0;
    for (int64_t i = 0; i < n; i++) {
        if (isnan(v[i])) return (double)i;
        if (v[i] < v[at]) at = i;
    }
    return (double)at;
}

/* ------------------------------------------------------------ the table */

typedef wt_status (*red_call)(const wt_tensor *, int, const int *, bool, wt_tensor **);

static wt_status c_var1(const wt_tensor *x, int n, const int *a, bool k, wt_tensor **o) { return wt_var(x, n, a, 1.0, k, o); }
static wt_status c_var0(const wt_tensor *x, int n, const int *a, bool k, wt_tensor **o) { return wt_var(x, n, a, 0.0, k, o); }
static wt_status c_std1(const wt_tensor *x, int n, const int *a, bool k, wt_tensor **o) { return wt_std(x, n, a, 1.0, k, o); }
static wt_status c_std0(const wt_tensor *x, int n, const int *a, bool k, wt_tensor **o) { return wt_std(x, n, a, 0.0, k, o); }
static wt_status c_norm1(const wt_tensor *x, int n, const int *a, bool k, wt_tensor **o) { return wt_norm(x, 1, n, a, k, o); }
static wt_status c_norm2(const wt_tensor *x, int n, const int *a, bool k, wt_tensor **o) { return wt_norm(x, 2, n, a, k, o); }
static wt_status c_norminf(const wt_tensor *x, int n, const int *a, bool k, wt_tensor **o) { return wt_norm(x, INFINITY, n, a, k, o); }

typedef enum tol_kind { TOL_EXACT, TOL_SUM, TOL_PROD, TOL_LOG } tol_kind;

typedef struct red_entry {
    const char *name;  /* the table row it covers (names of src/core/reduce_ops.def) */
    red_call call;
    ref_fn ref;
    double param;
    wt_dtype in, out;  /* input dtype; result dtype */
    tol_kind tol;
    float lo, hi;      /* inputs uniform in [lo, hi) */
    bool empty_ok;     /* reducing nothing is not an error */
    bool big;          /* run the > 65,535-workgroup cases */
} red_entry;

#define ROW(nm, fn, rf, par, din, dout, tl, l, h, eok, bg) \
    {nm, fn, rf, par, din, dout, tl, l, h, eok, bg}
static const red_entry g_red[] = {
    ROW("sum", wt_sum, r_sum, 0, WT_F32, WT_F32, TOL_SUM, -1, 1, true, false),
    ROW("mean", wt_mean, r_mean, 0, WT_F32, WT_F32, TOL_SUM, -1, 1, true, false),
    ROW("max", wt_max, r_max, 0, WT_F32, WT_F32, TOL_EXACT, -1, 1, false, false),
    ROW("min", wt_min, r_min, 0, WT_F32, WT_F32, TOL_EXACT, -1, 1, false, false),
    /* Near 1, so that a million-term product stays in range. */
    ROW("prod", wt_prod, r_prod, 0, WT_F32, WT_F32, TOL_PROD, 0.99f, 1.01f, true, false),
    /* Far from 0: a one-pass E[x^2] - E[x]^2 would cancel. */
    ROW("var", c_var1, r_var, 1, WT_F32, WT_F32, TOL_SUM, 100, 102, true, true),
    ROW("var", c_var0, r_var, 0, WT_F32, WT_F32, TOL_SUM, -1, 1, true, false),
    ROW("std", c_std1, r_std, 1, WT_F32, WT_F32, TOL_SUM, -3, 3, true, false),
    ROW("std", c_std0, r_std, 0, WT_F32, WT_F32, TOL_SUM, 1000, 1001, true, false),
    /* exp(x) alone would overflow f32. */
    ROW("logsumexp", wt_logsumexp, r_logsumexp, 0, WT_F32, WT_F32, TOL_LOG, -100, 100, true, false),
    ROW("norm1", c_norm1, r_norm1, 0, WT_F32, WT_F32, TOL_SUM, -2, 2, true, false),
    ROW("norm2", c_norm2, r_norm2, 0, WT_F32, WT_F32, TOL_SUM, -2, 2, true, false),
    ROW("norminf", c_norminf, r_norminf, 0, WT_F32, WT_F32, TOL_EXACT, -2, 2, true, false),
    ROW("argmax", wt_argmax, r_argmax, 0, WT_F32, WT_I32, TOL_EXACT, -1, 1, false, true),
    ROW("argmin", wt_argmin, r_argmin, 0, WT_F32, WT_I32, TOL_EXACT, -1, 1, false, false),
    /* Integers (up to 2^24, exact in the host's float mirror): sums and
     * products wrap. */
    ROW("sum", wt_sum, r_isum, 0, WT_I32, WT_I32, TOL_EXACT, -16777216, 16777216, true, false),
    ROW("prod", wt_prod, r_iprod, 0, WT_I32, WT_I32, TOL_EXACT, -100000, 100000, true, false),
    ROW("max", wt_max, r_max, 0, WT_I32, WT_I32, TOL_EXACT, -16777216, 16777216, false, false),
    ROW("min", wt_min, r_min, 0, WT_I32, WT_I32, TOL_EXACT, -16777216, 16777216, false, false),
    ROW("argmax", wt_argmax, r_argmax, 0, WT_I32, WT_I32, TOL_EXACT, -5, 5, false, false),
    /* Masks, mostly true (all) or mostly false (any) so that both answers occur. */
    ROW("all", wt_all, r_all, 0, WT_BOOL, WT_BOOL, TOL_EXACT, 0, 1, true, false),
    ROW("any", wt_any, r_any, 0, WT_BOOL, WT_BOOL, TOL_EXACT, 0, 1, true, false),
    ROW("argmin", wt_argmin, r_argmin, 0, WT_BOOL, WT_I32, TOL_EXACT, 0, 1, false, false),
    /* The sum of a mask counts its true elements (i32). */
    ROW("sum", wt_sum, r_isum, 0, WT_BOOL, WT_I32, TOL_EXACT, 0, 1, true, false),
    /* i32 mean runs on the f32 values. */
    ROW("mean", wt_mean, r_mean, 0, WT_I32, WT_F32, TOL_SUM, -1000, 1000, true, false),
};
static const int g_nred = (int)(sizeof g_red / sizeof g_red[0]);

/* The library's table, to check that every row is covered. */
static const char *const g_table_names[] = {
#define WT_REDUCE_OP(ID, nm, ...) #nm,
#include "core/reduce_ops.def"
#undef WT_REDUCE_OP
};

/* --------------------------------------------------------------- helpers */

static int g_cases_passed, g_cases_failed;
static bool g_case_failed;
static char g_case_label[400];

static void fail(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;
static void fail(const char *fmt, ...)
{
    char msg[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    for (char *p = msg; *p; p++)
        if (*p == '\n') *p = ' ';
    printf("FAIL %s backend=%s seed=%" PRIu64 ": %s\n", g_case_label, g_backend, test_seed(), msg);
    fflush(stdout);
    g_case_failed = true;
}

static void case_begin(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;
static void case_begin(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(g_case_label, sizeof g_case_label, fmt, ap);
    va_end(ap);
    g_case_failed = false;
}

static void case_end(void)
{
    if (g_case_failed) g_cases_failed++;
    else g_cases_passed++;
}

/* Reads t (any dtype) as doubles; for 4-byte dtypes with guards after the
 * data. NULL (reported) on failure. */
static double *read_values(const wt_tensor *t)
{
    int64_t n = wt_tensor_numel(t);
    double *v = malloc((size_t)(n > 0 ? n : 1) * sizeof *v);
    if (!v) return NULL;
    wt_dtype d = wt_tensor_dtype(t);
    if (wt_dtype_size(d) == 4) {
        char err[300];
        float *raw = test_read_guarded(t, err, sizeof err);
        if (!raw) {
            fail("reading the result: %s", err);
            free(v);
            return NULL;
        }
        for (int64_t i = 0; i < n; i++) {
            int32_t iv;
            memcpy(&iv, &raw[i], 4);
            v[i] = d == WT_F32 ? (double)raw[i] : (double)iv;
        }
        free(raw);
        return v;
    }
    size_t es = wt_dtype_size(d);
    unsigned char *raw = malloc((size_t)(n > 0 ? n : 1) * es);
    wt_status s = wt_tensor_read(t, raw, (size_t)n * es);
    if (s != WT_OK) {
        fail("reading the result: %s (%s)", wt_status_string(s), wt_last_error());
        free(raw), free(v);
        return NULL;
    }
    for (int64_t i = 0; i < n; i++) {
        if (es == 2) {
            uint16_t h;
            memcpy(&h, raw + 2 * i, 2);
            v[i] = (float)test_half_to_double(h);
        } else {
            v[i] = raw[i];
        }
    }
    free(raw);
    return v;
}

/* Shape and values of the reference of a reduction: the values of each
 * output, row-major over its reduced axes. false: the axes are invalid. */
typedef struct groups {
    int ndim;
    int64_t shape[WT_MAX_DIMS];
    int64_t nout, count;
    double *vals; /* nout * count */
} groups;

static bool make_groups(const host_tensor *x, int naxes, const int *axes, bool keepdims, groups *g)
{
    bool red[WT_MAX_DIMS] = {0};
    for (int i = 0; i < naxes; i++) {
        int a = axes[i] < 0 ? axes[i] + x->ndim : axes[i];
        if (a < 0 || a >= x->ndim || red[a]) return false;
        red[a] = true;
    }
    if (naxes == 0)
        for (int i = 0; i < x->ndim; i++) red[i] = true;
    g->ndim = 0, g->nout = 1, g->count = 1;
    for (int i = 0; i < x->ndim; i++) {
        if (red[i]) g->count *= x->shape[i];
        else g->nout *= x->shape[i];
        if (!red[i]) g->shape[g->ndim++] = x->shape[i];
        else if (keepdims) g->shape[g->ndim++] = 1;
    }
    g->vals = malloc((size_t)(g->nout * g->count > 0 ? g->nout * g->count : 1) * sizeof(double));
    for (int64_t i = 0; i < x->numel; i++) {
        int64_t rem = i, ko = 0, ro = 0, kstride = 1, rstride = 1;
        for (int d = x->ndim - 1; d >= 0; d--) {
            int64_t id = rem % x->shape[d];
            rem /= x->shape[d];
            if (red[d]) ro += id * rstride, rstride *= x->shape[d];
            else ko += id * kstride, kstride *= x->shape[d];
        }
        g->vals[ko * g->count + ro] = x->data[i];
    }
    return true;
}

static double allowed(tol_kind tol, double scale, int64_t k, double want)
{
    double rk = 1e-5 * (k > 1024 ? sqrt((double)k / 1024.0) : 1.0);
    switch (tol) {
    case TOL_EXACT: return 0;
    case TOL_SUM: return 1e-6 + rk * scale + 6e-8 * fabs(want);
    case TOL_PROD: return 1e-6 + (rk + 1e-6 * log2((double)k + 1)) * scale;
    case TOL_LOG: return 2e-6 * scale + rk * scale;
    }
    return 0;
}

/* Compares result values with references (NaN matches NaN only). */
static void compare(const double *got, const double *want, const double *scale, int64_t n, int64_t k,
                    tol_kind tol)
{
    int64_t bad = 0, worst = -1;
    double worst_ratio = -1;
    for (int64_t i = 0; i < n; i++) {
        double g = got[i], w = want[i], a = allowed(tol, scale[i], k, w);
        bool ok;
        if (isnan(w) || isnan(g)) ok = isnan(w) && isnan(g);
        else if (isinf(w) || isinf(g)) ok = g == w;
        else if (tol == TOL_EXACT) ok = g == w || g == (double)(float)w;
        else ok = fabs(g - w) <= a;
        if (!ok) {
            bad++;
            double r = a > 0 ? fabs(g - w) / a : INFINITY;
            if (r > worst_ratio || worst < 0) worst_ratio = r, worst = i;
        }
    }
    if (bad)
        fail("%" PRId64 " of %" PRId64 " values wrong; element %" PRId64 ": got %.9g, want %.9g (allowed %.3g)", bad,
             n, worst, got[worst], want[worst], allowed(tol, scale[worst], k, want[worst]));
}

static void check_shape(const wt_tensor *t, int ndim, const int64_t *shape, wt_dtype dtype)
{
    char a[160], b[160];
    if (wt_tensor_ndim(t) != ndim || (ndim && memcmp(wt_tensor_shape(t), shape, (size_t)ndim * 8)))
        fail("shape %s, want %s", test_shape_str(wt_tensor_ndim(t), wt_tensor_shape(t), a, sizeof a),
             test_shape_str(ndim, shape, b, sizeof b));
    if (wt_tensor_dtype(t) != dtype) fail("dtype %d, want %d", (int)wt_tensor_dtype(t), (int)dtype);
    if (!wt_tensor_is_contiguous(t)) fail("result is not contiguous");
}

/* Integer-valued inputs (i32 or bool) of a spec: the base is uploaded as
 * dtype and the views applied on the device and on the host. */
static bool build_int_input(const char *text, wt_dtype dtype, int lo, int hi, test_input *in)
{
    input_spec spec;
    char err[256];
    memset(in, 0, sizeof *in);
    if (!spec_parse(text, &spec, err, sizeof err)) return fail("bad case: %s", err), false;
    host_alloc(&in->base, spec.ndim, spec.shape);
    int64_t n = in->base.numel;
    void *raw = malloc((size_t)(n > 0 ? n : 1) * 4);
    for (int64_t i = 0; i < n; i++) {
        int v = (int)(lo + (int64_t)(test_rng_next() % (uint64_t)((int64_t)hi - lo + 1)));
        in->base.data[i] = (float)v;
        if (dtype == WT_I32) ((int32_t *)raw)[i] = v;
        else ((unsigned char *)raw)[i] = (unsigned char)v;
    }
    wt_status s = wt_tensor_from_data(g_ctx, dtype, spec.ndim, spec.shape, raw, &in->dev_base);
    free(raw);
    if (s != WT_OK) return fail("upload: %s (%s)", wt_status_string(s), wt_last_error()), false;
    host_tensor cur = in->base, next;
    host_alloc(&cur, in->base.ndim, in->base.shape);
    if (n) memcpy(cur.data, in->base.data, (size_t)n * sizeof(float));
    wt_tensor *dev = in->dev_base;
    wt_tensor_retain(dev);
    for (int i = 0; i < spec.nviews; i++) {
        host_apply_view(&cur, &spec.views[i], &next);
        host_free(&cur);
        cur = next;
        wt_tensor *v = NULL;
        s = device_apply_view(dev, &spec.views[i], &v);
        wt_tensor_release(dev);
        dev = v;
        if (s != WT_OK) {
            host_free(&cur);
            return fail("view: %s (%s)", wt_status_string(s), wt_last_error()), false;
        }
    }
    in->host = cur;
    in->dev = dev;
    return true;
}

/* ------------------------------------------------------------ reductions */

static void run_reduction(const red_entry *e, const char *cls, const char *text, int naxes, const int *axes,
                          bool keepdims, float lo, float hi)
{
    case_begin("op=%s(%g) class=\"%s\" x=%s naxes=%d keepdims=%d", e->name, e->param, cls, text, naxes,
               (int)keepdims);
    test_input in;
    bool built;
    if (e->in == WT_F32) {
        input_spec spec;
        char err[256];
        built = spec_parse(text, &spec, err, sizeof err) &&
                input_build(g_ctx, &spec, lo, hi, NULL, 0, &in, err, sizeof err) == WT_OK;
        if (!built) fail("building the input: %s", err);
    } else {
        built = build_int_input(text, e->in, (int)lo, (int)hi, &in);
    }
    if (!built) {
        case_end();
        return;
    }
    groups g;
    bool ref_ok = make_groups(&in.host, naxes, axes, keepdims, &g);
    bool ref_empty_error = ref_ok && g.count == 0 && g.nout > 0 && !e->empty_ok;
    wt_tensor *out = NULL;
    wt_status s = e->call(in.dev, naxes, naxes ? axes : NULL, keepdims, &out);
    if (!ref_ok || ref_empty_error) {
        wt_status want = ref_ok ? WT_ERR_SHAPE : WT_ERR_INVALID_ARGUMENT;
        if (s != want) fail("returned %s, want %s", wt_status_string(s), wt_status_string(want));
        if (out) fail("set *out on failure");
    } else if (s != WT_OK) {
        fail("returned %s (%s)", wt_status_string(s), wt_last_error());
    } else {
        check_shape(out, g.ndim, g.shape, e->out);
        double *want = malloc((size_t)(g.nout > 0 ? g.nout : 1) * sizeof(double));
        double *scale = malloc((size_t)(g.nout > 0 ? g.nout : 1) * sizeof(double));
        for (int64_t o = 0; o < g.nout; o++) want[o] = e->ref(g.vals + o * g.count, g.count, e->param, &scale[o]);
        double *got = read_values(out);
        if (got) compare(got, want, scale, g.nout, g.count, e->tol);
        free(got), free(want), free(scale);
    }
    wt_tensor_release(out);
    if (ref_ok) free(g.vals);
    input_free(&in);
    case_end();
}

/* Special values: NaN, infinities, ties, in rows of 7 (axis 1) and as one
 * flattened reduction. */
static void run_specials(const red_entry *e)
{
    static const float rows[][7] = {
        {1, NAN, 3, NAN, 0, 0, 0},          {2, 5, 5, 1, 5, -1, 0},
        {-INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY},
        {INFINITY, 1, 2, -INFINITY, 3, 0, 1}, {-3, -3, -3, -3, -3, -3, -3},
        {0, -0.0f, 0, 0, 0, 0, NAN},        {7, 6, 5, 4, 3, 2, 1},
    };
    const int64_t shape[2] = {7, 7};
    wt_tensor *x = NULL;
    if (wt_tensor_from_data(g_ctx, WT_F32, 2, shape, rows, &x) != WT_OK) return;
    host_tensor h;
    host_alloc(&h, 2, shape);
    memcpy(h.data, rows, sizeof rows);
    for (int all = 0; all < 2; all++) {
        case_begin("op=%s(%g) class=\"special values\" %s", e->name, e->param, all ? "all" : "axis 1");
        int axis = 1;
        groups g;
        make_groups(&h, all ? 0 : 1, &axis, false, &g);
        wt_tensor *out = NULL;
        wt_status s = e->call(x, all ? 0 : 1, all ? NULL : &axis, false, &out);
        if (s != WT_OK) {
            fail("returned %s (%s)", wt_status_string(s), wt_last_error());
        } else {
            double want[7], scale[7];
            for (int64_t o = 0; o < g.nout; o++) want[o] = e->ref(g.vals + o * g.count, g.count, e->param, &scale[o]);
            double *got = read_values(out);
            if (got) compare(got, want, scale, g.nout, g.count, e->tol);
            free(got);
        }
        wt_tensor_release(out);
        free(g.vals);
        case_end();
    }
    host_free(&h);
    wt_tensor_release(x);
}

/* ------------------------------------------------------------------ scans */

typedef struct scan_case {
    const char *cls, *x;
    int axis;
} scan_case;

static const scan_case g_scan_cases[] = {
    {"0-d", "[]", 0},
    {"[1]", "[1]", 0},
    {"small", "[7]", -1},
    {"rows", "[5,7]", 1},
    {"columns", "[5,7]", 0},
    {"3-D middle", "[4,33,5]", 1},
    {"odd, last axis", "[1029,917]", 1},
    {"odd, first axis", "[1029,917]", 0},
    /* Several levels of block totals on the GPU. */
    {"long rows", "[3,100003]", 1},
    {"one long row", "[1000003]", 0},
    {"long columns", "[100003,3]", 0},
    {"empty", "[0]", 0},
    {"empty 3-D", "[3,0,5]", 1},
    {"transposed", "[37,53].T(0,1)", 1},
    {"sliced with step", "[40,30].S(1,1,29,3)", 1},
    {"expanded", "[1,33].E(17,33)", 0},
    {"many rows", "[70001,5]", 1},
    {"axis out of range", "[5,7]", 2},
    {"negative axis out of range", "[5,7]", -3},
};

static void run_scan(bool prod, const scan_case *sc)
{
    case_begin("op=%s class=\"%s\" x=%s axis=%d", prod ? "cumprod" : "cumsum", sc->cls, sc->x, sc->axis);
    input_spec spec;
    char err[256];
    test_input in;
    if (!spec_parse(sc->x, &spec, err, sizeof err) ||
        input_build(g_ctx, &spec, prod ? 0.99f : -1, prod ? 1.01f : 1, NULL, 0, &in, err, sizeof err) != WT_OK) {
        fail("building the input: %s", err);
        case_end();
        return;
    }
    const host_tensor *h = &in.host;
    int nd = h->ndim, a = sc->axis < 0 ? sc->axis + (nd ? nd : 1) : sc->axis;
    bool valid = a >= 0 && a < (nd ? nd : 1);
    wt_tensor *out = NULL;
    wt_status s = (prod ? wt_cumprod : wt_cumsum)(in.dev, sc->axis, &out);
    if (!valid) {
        if (s != WT_ERR_INVALID_ARGUMENT) fail("returned %s, want WT_ERR_INVALID_ARGUMENT", wt_status_string(s));
    } else if (s != WT_OK) {
        fail("returned %s (%s)", wt_status_string(s), wt_last_error());
    } else {
        check_shape(out, nd, h->shape, WT_F32);
        int64_t n = nd ? h->shape[a] : 1, inner = 1;
        for (int i = a + 1; i < nd; i++) inner *= h->shape[i];
        double *want = malloc((size_t)(h->numel ? h->numel : 1) * sizeof(double));
        double *scale = malloc((size_t)(h->numel ? h->numel : 1) * sizeof(double));
        for (int64_t c = 0; n && c < h->numel / n; c++) {
            int64_t start = (c / inner) * n * inner + c % inner;
            double acc = prod ? 1 : 0, abs_acc = 0;
            for (int64_t k = 0; k < n; k++) {
                double v = h->data[start + k * inner];
                acc = prod ? acc * v : acc + v;
                abs_acc += fabs(v);
                want[start + k * inner] = acc;
                scale[start + k * inner] = prod ? fabs(acc) : abs_acc;
            }
        }
        double *got = read_values(out);
        if (got) compare(got, want, scale, h->numel, n, prod ? TOL_PROD : TOL_SUM);
        free(got), free(want), free(scale);
    }
    wt_tensor_release(out);
    input_free(&in);
    case_end();
}

/* Integer scans: i32 wraps modulo 2^32; a mask scans as its 0/1 in i32. */
static void run_scan_int(bool prod, wt_dtype dtype, const char *cls, const char *text, int axis, int lo, int hi)
{
    case_begin("op=%s dtype=%d class=\"%s\" x=%s axis=%d", prod ? "cumprod" : "cumsum", (int)dtype, cls, text, axis);
    test_input in;
    if (!build_int_input(text, dtype, lo, hi, &in)) {
        case_end();
        return;
    }
    const host_tensor *h = &in.host;
    int nd = h->ndim, a = axis < 0 ? axis + nd : axis;
    wt_tensor *out = NULL;
    wt_status s = (prod ? wt_cumprod : wt_cumsum)(in.dev, axis, &out);
    if (s != WT_OK) {
        fail("returned %s (%s)", wt_status_string(s), wt_last_error());
    } else {
        check_shape(out, nd, h->shape, WT_I32);
        int64_t n = h->shape[a], inner = 1;
        for (int i = a + 1; i < nd; i++) inner *= h->shape[i];
        double *want = malloc((size_t)(h->numel ? h->numel : 1) * sizeof(double));
        double *zero = calloc((size_t)(h->numel ? h->numel : 1), sizeof(double));
        for (int64_t c = 0; n && c < h->numel / n; c++) {
            int64_t start = (c / inner) * n * inner + c % inner;
            uint32_t acc = prod ? 1u : 0u;
            for (int64_t k = 0; k < n; k++) {
                uint32_t v = (uint32_t)(int32_t)h->data[start + k * inner];
                acc = prod ? acc * v : acc + v;
                want[start + k * inner] = (double)(int32_t)acc;
            }
        }
        double *got = read_values(out);
        if (got) compare(got, want, zero, h->numel, n, TOL_EXACT);
        free(got), free(want), free(zero);
    }
    wt_tensor_release(out);
    input_free(&in);
    case_end();
}

/* ------------------------------------------------------------------- f16 */

/* f16 inputs reduce in f32 and round once to f16: the reference is the
 * float64 result of the f16 values, within half an f16 ulp plus the f32
 * allowance (argmax exact, i32). */
static void run_f16(const red_entry *e, const char *text, int naxes, const int *axes)
{
    case_begin("op=%s(%g) f16 x=%s naxes=%d", e->name, e->param, text, naxes);
    input_spec spec;
    char err[256];
    test_input in;
    if (!spec_parse(text, &spec, err, sizeof err) ||
        input_build(g_ctx, &spec, e->lo, e->hi, NULL, 0, &in, err, sizeof err) != WT_OK) {
        fail("building the input: %s", err);
        case_end();
        return;
    }
    wt_tensor *h = NULL, *out = NULL;
    wt_status s = wt_cast(in.dev, WT_F16, &h);
    for (int64_t i = 0; i < in.host.numel; i++)
        in.host.data[i] = (float)test_half_to_double(test_double_to_half(in.host.data[i]));
    groups g;
    make_groups(&in.host, naxes, axes, false, &g);
    if (s == WT_OK) s = e->call(h, naxes, axes, false, &out);
    if (s != WT_OK) {
        fail("returned %s (%s)", wt_status_string(s), wt_last_error());
    } else {
        wt_dtype want_dtype = e->out == WT_I32 ? WT_I32 : WT_F16;
        check_shape(out, g.ndim, g.shape, want_dtype);
        double *want = malloc((size_t)(g.nout ? g.nout : 1) * sizeof(double));
        double *scale = malloc((size_t)(g.nout ? g.nout : 1) * sizeof(double));
        for (int64_t o = 0; o < g.nout; o++) {
            want[o] = e->ref(g.vals + o * g.count, g.count, e->param, &scale[o]);
            /* Half an f16 ulp of the result, as a share of the op's scale. */
            if (want_dtype == WT_F16) scale[o] += fabs(want[o]) * 50.0;
        }
        double *got = read_values(out);
        tol_kind tol = want_dtype == WT_I32 ? TOL_EXACT : e->tol == TOL_EXACT ? TOL_SUM : e->tol;
        if (got) compare(got, want, scale, g.nout, g.count, tol);
        free(got), free(want), free(scale);
    }
    free(g.vals);
    wt_tensor_release(h);
    wt_tensor_release(out);
    input_free(&in);
    case_end();
}

static void run_scan_f16(void)
{
    case_begin("op=cumsum f16 x=[37,53] axis=1");
    const int64_t shape[2] = {37, 53};
    uint16_t bits[37 * 53];
    double vals[37 * 53];
    for (int i = 0; i < 37 * 53; i++) {
        bits[i] = test_double_to_half((double)((i * 37) % 101 - 50) / 16.0);
        vals[i] = test_half_to_double(bits[i]);
    }
    wt_tensor *x = NULL, *out = NULL;
    wt_status s = wt_tensor_from_data(g_ctx, WT_F16, 2, shape, bits, &x);
    if (s == WT_OK) s = wt_cumsum(x, 1, &out);
    if (s != WT_OK) {
        fail("returned %s (%s)", wt_status_string(s), wt_last_error());
    } else {
        check_shape(out, 2, shape, WT_F16);
        double *got = read_values(out);
        for (int r = 0; got && r < 37; r++) {
            double acc = 0;
            for (int c = 0; c < 53; c++) {
                acc += vals[r * 53 + c]; /* sums of sixteenths: exact in f32, then one f16 rounding */
                double want = test_half_to_double(test_double_to_half(acc));
                if (got[r * 53 + c] != want) {
                    fail("element [%d,%d]: got %.9g, want %.9g", r, c, got[r * 53 + c], want);
                    r = 37;
                    break;
                }
            }
        }
        free(got);
    }
    wt_tensor_release(x);
    wt_tensor_release(out);
    case_end();
}

/* -------------------------------------------------------------- bad input */

static void expect(wt_status got, wt_status want, wt_tensor *out, const char *what)
{
    case_begin("bad input: %s", what);
    if (got != want) fail("returned %s, want %s", wt_status_string(got), wt_status_string(want));
    else if (!wt_last_error()[0]) fail("empty wt_last_error()");
    if (out) fail("set *out on failure");
    wt_tensor_release(out);
    case_end();
}

static void run_bad_input(void)
{
    const int64_t shape[2] = {3, 4};
    float data[12] = {0};
    wt_tensor *x = NULL, *o = NULL;
    if (wt_tensor_from_data(g_ctx, WT_F32, 2, shape, data, &x) != WT_OK) return;
    int ax2 = 2, axm3 = -3, rep[2] = {1, -1}, ax1 = 1;
    for (int i = 0; i < g_nred; i++) {
        const red_entry *e = &g_red[i];
        char what[96];
        snprintf(what, sizeof what, "%s axis 2 of 2-D", e->name);
        expect(e->call(x, 1, &ax2, false, &o), WT_ERR_INVALID_ARGUMENT, o, what), o = NULL;
        snprintf(what, sizeof what, "%s axis -3 of 2-D", e->name);
        expect(e->call(x, 1, &axm3, false, &o), WT_ERR_INVALID_ARGUMENT, o, what), o = NULL;
        snprintf(what, sizeof what, "%s repeated axis", e->name);
        expect(e->call(x, 2, rep, false, &o), WT_ERR_INVALID_ARGUMENT, o, what), o = NULL;
        snprintf(what, sizeof what, "%s naxes 3 of 2-D", e->name);
        expect(e->call(x, 3, rep, false, &o), WT_ERR_INVALID_ARGUMENT, o, what), o = NULL;
        snprintf(what, sizeof what, "%s NULL axes", e->name);
        expect(e->call(x, 1, NULL, false, &o), WT_ERR_INVALID_ARGUMENT, o, what), o = NULL;
        snprintf(what, sizeof what, "%s NULL input", e->name);
        expect(e->call(NULL, 1, &ax1, false, &o), WT_ERR_INVALID_ARGUMENT, o, what), o = NULL;
        snprintf(what, sizeof what, "%s NULL out", e->name);
        case_begin("bad input: %s", what);
        if (e->call(x, 1, &ax1, false, NULL) != WT_ERR_INVALID_ARGUMENT) fail("not WT_ERR_INVALID_ARGUMENT");
        case_end();
    }
    expect(wt_var(x, 1, &ax1, -1.0, false, &o), WT_ERR_INVALID_ARGUMENT, o, "var correction -1"), o = NULL;
    expect(wt_std(x, 1, &ax1, NAN, false, &o), WT_ERR_INVALID_ARGUMENT, o, "std correction NaN"), o = NULL;
    expect(wt_var(x, 1, &ax1, INFINITY, false, &o), WT_ERR_INVALID_ARGUMENT, o, "var correction inf"), o = NULL;
    expect(wt_norm(x, 3, 1, &ax1, false, &o), WT_ERR_INVALID_ARGUMENT, o, "norm ord 3"), o = NULL;
    expect(wt_norm(x, 0, 1, &ax1, false, &o), WT_ERR_INVALID_ARGUMENT, o, "norm ord 0"), o = NULL;
    expect(wt_all(x, 0, NULL, false, &o), WT_ERR_INVALID_ARGUMENT, o, "all of an f32 tensor"), o = NULL;
    expect(wt_any(x, 0, NULL, false, &o), WT_ERR_INVALID_ARGUMENT, o, "any of an f32 tensor"), o = NULL;
    expect(wt_cumsum(NULL, 0, &o), WT_ERR_INVALID_ARGUMENT, o, "cumsum NULL input"), o = NULL;
    const unsigned char mask[4] = {1, 0, 1, 1};
    const int64_t four = 4;
    wt_tensor *m = NULL;
    if (wt_tensor_from_data(g_ctx, WT_BOOL, 1, &four, mask, &m) == WT_OK) {
        expect(wt_mean(m, 0, NULL, false, &o), WT_ERR_INVALID_ARGUMENT, o, "mean of a mask"), o = NULL;
        expect(wt_max(m, 0, NULL, false, &o), WT_ERR_INVALID_ARGUMENT, o, "max of a mask"), o = NULL;

    }
    wt_tensor_release(m);

    /* correction >= N divides by 0 (NumPy): inf, or NaN where the sum is 0. */
    case_begin("var with correction >= count");
    const float vals[3] = {1, 2, 4};
    const int64_t three = 3;
    wt_tensor *v = NULL;
    wt_tensor_from_data(g_ctx, WT_F32, 1, &three, vals, &v);
    float r[2] = {0, 0};
    if (wt_var(v, 0, NULL, 3.0, false, &o) != WT_OK || wt_tensor_read(o, &r[0], 4) != WT_OK) fail("var failed");
    wt_tensor_release(o), o = NULL;
    if (wt_std(x, 0, NULL, 12.0, false, &o) != WT_OK || wt_tensor_read(o, &r[1], 4) != WT_OK) fail("std failed");
    wt_tensor_release(o), o = NULL;
    if (!(isinf(r[0]) && r[0] > 0) || !isnan(r[1])) fail("var of [1,2,4] with correction 3: %g (want inf); std of zeros with correction 12: %g (want NaN)", (double)r[0], (double)r[1]);
    case_end();
    wt_tensor_release(v);
    wt_tensor_release(x);
}

int main(int argc, char **argv)
{
    test_run run;
    if (!test_begin(&run, "reduce_ops", argc, argv)) return run.status;
    g_ctx = run.ctx;
    g_backend = run.mode;

    /* Every row of the library's table is tested here. */
    for (size_t i = 0; i < sizeof g_table_names / sizeof g_table_names[0]; i++) {
        bool found = false;
        for (int j = 0; j < g_nred; j++) found |= strcmp(g_red[j].name, g_table_names[i]) == 0;
        CHECK(found, "reduction %s of src/core/reduce_ops.def has no row in tests/reduce_ops.c", g_table_names[i]);
    }

    /* The catalogue (webtensor ops) says each tested dtype is computed. */
    for (int i = 0; i < g_nred; i++) {
        const char *name = strncmp(g_red[i].name, "norm", 4) == 0 ? "norm" : g_red[i].name;
        wt_support sup = WT_SUPPORT_NONE;
        int op = 0;
        while (op < wt_op_count() && strcmp(wt_op_name(op), name) != 0) op++;
        CHECK(op < wt_op_count() && wt_op_support(g_ctx, op, g_red[i].in, &sup) == WT_OK && sup != WT_SUPPORT_NONE,
              "catalogue: %s on dtype %d is not listed as supported", name, (int)g_red[i].in);
    }
    const char *scans[2] = {"cumsum", "cumprod"};
    for (int i = 0; i < 2; i++) {
        int op = 0;
        while (op < wt_op_count() && strcmp(wt_op_name(op), scans[i]) != 0) op++;
        CHECK(op < wt_op_count(), "catalogue: no %s", scans[i]);
    }

    for (int i = 0; i < g_nred; i++) {
        const red_entry *e = &g_red[i];
        for (int c = 0; c < g_n_reduce_cases; c++) {
            const reduce_case *rc = &g_reduce_cases[c];
            if (rc->big) continue; /* 17M-element cases: sum's, in conformance */
            float lo = e->lo, hi = e->hi;
            if (rc->lo != rc->hi && e->tol == TOL_SUM && e->lo < 0) lo = rc->lo, hi = rc->hi;
            run_reduction(e, rc->cls, rc->x, rc->naxes, rc->axes, rc->keepdims, lo, hi);
        }
        /* One workgroup per row: more than 65,535 of them. */
        if (e->big) run_reduction(e, "many rows", "[70001,65]", 1, (const int[]){1}, false, e->lo, e->hi);
        /* Rows whose starts are 16-byte aligned: argmax's vec4 reads. */
        if (e->out == WT_I32) {
            run_reduction(e, "aligned rows", "[64,1000]", 1, (const int[]){1}, false, e->lo, e->hi);
            run_reduction(e, "aligned long rows", "[3,40004]", 1, (const int[]){-1}, true, e->lo, e->hi);
        }
        if (e->in == WT_F32) run_specials(e);
    }
    for (int i = 0; i < g_nred; i++) {
        if (g_red[i].in != WT_F32) continue;
        const int ax1 = 1;
        run_f16(&g_red[i], "[37,53]", 1, &ax1);
        run_f16(&g_red[i], "[29,31].T(0,1)", 0, NULL);
    }
    run_scan_f16();
    for (int p = 0; p < 2; p++)
        for (size_t i = 0; i < sizeof g_scan_cases / sizeof g_scan_cases[0]; i++) run_scan(p == 1, &g_scan_cases[i]);
    run_scan_int(false, WT_I32, "rows", "[5,7]", 1, -16777216, 16777216);
    run_scan_int(false, WT_I32, "long rows, wrapping", "[3,100003]", 1, -16777216, 16777216);
    run_scan_int(false, WT_I32, "odd, first axis", "[1029,917]", 0, -1000, 1000);
    run_scan_int(false, WT_I32, "transposed", "[37,53].T(0,1)", -1, -1000, 1000);
    run_scan_int(true, WT_I32, "products, wrapping", "[4,1000]", 1, -3, 3);
    run_scan_int(false, WT_BOOL, "mask counts", "[3,100003]", 1, 0, 1);
    run_scan_int(false, WT_BOOL, "mask counts, many rows", "[70001,5]", -1, 0, 1);
    run_bad_input();

    printf("reduce_ops %s: %d cases passed, %d failed\n", g_backend, g_cases_passed, g_cases_failed);
    g_test_passed += g_cases_passed;
    g_test_failed += g_cases_failed;
    return test_end(&run);
}
