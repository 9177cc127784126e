/* f16_layouts <cpu|vulkan|gles>: f16 elementwise ops and reductions on the
 * layouts the native f16 kernels walk differently: contiguous runs of
 * every length around the 8-half unit and the workgroup's span (empty,
 * 0-d, odd), slices starting at odd and unaligned elements, steps,
 * broadcasts (a row, a column, a 0-d tensor, a Python-style scalar),
 * transposed views and a unary op with parameters; reductions over long
 * rows (split into chunks), columns and sliced rows. Each elementwise
 * result is compared, half by half, with the float64 reference of the same
 * f16 inputs rounded to f16: one f16 ulp at most (the kernels compute in
 * f32, which may round twice); a reduction's within one f16 ulp plus the
 * f32 sum's rounding. */
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static wt_context *g_ctx;

typedef double (*ref2_fn)(double, double);
static double r_add(double a, double b) { return a + b; }
static double r_mul(double a, double b) { return a * b; }
static double r_div(double a, double b) { return a / b; }
static double r_max(double a, double b) { return isnan(a) || isnan(b) ? NAN : a > b ? a : b; }
static double r_exp(double a, double b) { (void)b; return exp(a); }
static double r_clamp(double a, double b) { (void)b; return a < -0.5 ? -0.5 : a > 0.75 ? 0.75 : a; }

/* The f16 data behind the tensors of one case: row-major values of the
 * base tensors a and b. */
static uint16_t *random_halves(int64_t n, double lo, double hi)
{
    uint16_t *h = malloc((size_t)(n ? n : 1) * 2);
    for (int64_t i = 0; i < n; i++) h[i] = test_double_to_half(test_rng_uniform((float)lo, (float)hi));
    return h;
}

static wt_tensor *make_f16(int ndim, const int64_t *shape, const uint16_t *h)
{
    wt_tensor *t = NULL;
    CHECK(wt_tensor_from_data(g_ctx, WT_F16, ndim, shape, h, &t) == WT_OK, "from_data: %s", wt_last_error());
    return t;
}

static int64_t half_ulps(uint16_t x, uint16_t y)
{
    int64_t a = (x & 0x8000) ? -(int64_t)(x & 0x7fff) : (int64_t)x;
    int64_t b = (y & 0x8000) ? -(int64_t)(y & 0x7fff) : (int64_t)y;
    return a > b ? a - b : b - a;
}

/* *out (f16, n elements; read after st is known) against want[i] = ref(x[i], y[i]) rounded to f16. */
static void expect(const char *what, wt_status st, wt_tensor *const *out, int64_t n, const double *x, const double *y,
                   ref2_fn ref)
{
    const wt_tensor *o = *out;
    if (!CHECK(st == WT_OK && o && wt_tensor_dtype(o) == WT_F16 && wt_tensor_numel(o) == n, "%s: %s", what,
               st == WT_OK ? "wrong dtype or size" : wt_last_error()))
        return;
    uint16_t *g = malloc((size_t)(n ? n : 1) * 2);
    if (CHECK(wt_tensor_read(o, g, (size_t)n * 2) == WT_OK, "%s: read: %s", what, wt_last_error())) {
        int64_t bad = 0, first = -1;
        uint16_t want_first = 0;
        for (int64_t i = 0; i < n; i++) {
            uint16_t want = test_double_to_half(ref(x[i], y ? y[i] : 0.0));
            bool nan_w = (want & 0x7fff) > 0x7c00, nan_g = (g[i] & 0x7fff) > 0x7c00;
            bool ok = nan_w || nan_g ? nan_w && nan_g
                                     : half_ulps(g[i], want) <= 1 || ((g[i] & 0x7fff) == 0 && (want & 0x7fff) == 0);
            if (!ok && bad++ == 0) first = i, want_first = want;
        }
        CHECK(bad == 0, "%s: %lld of %lld wrong; first at %lld: got %04x want %04x", what, (long long)bad,
              (long long)n, (long long)first, first >= 0 ? g[first] : 0, want_first);
    }
    free(g);
}

/* Contiguous operands of every length around the unit (8 halves) and a
 * workgroup's span (256 threads x 2 units x 8 = 4096 halves), 0-d too. */
static void test_lengths(void)
{
    static const int64_t lengths[] = {0, 1, 2, 7, 8, 9, 15, 17, 4095, 4096, 4097, 12301};
    for (size_t k = 0; k < sizeof lengths / sizeof lengths[0]; k++) {
        int64_t n = lengths[k];
        uint16_t *ha = random_halves(n, -4, 4), *hb = random_halves(n, -4, 4);
        double *x = malloc((size_t)(n ? n : 1) * sizeof *x), *y = malloc((size_t)(n ? n : 1) * sizeof *y);
        for (int64_t i = 0; i < n; i++) x[i] = test_half_to_double(ha[i]), y[i] = test_half_to_double(hb[i]);
        wt_tensor *a = make_f16(1, &n, ha), *b = make_f16(1, &n, hb), *o = NULL;
        char what[64];
        snprintf(what, sizeof what, "add [%lld]", (long long)n);
        expect(what, wt_add(a, b, &o), &o, n, x, y, r_add);
        wt_tensor_release(o), o = NULL;
        snprintf(what, sizeof what, "exp [%lld]", (long long)n);
        expect(what, wt_exp(a, &o), &o, n, x, NULL, r_exp);
        wt_tensor_release(o), o = NULL;
        snprintf(what, sizeof what, "clamp [%lld]", (long long)n);
        expect(what, wt_clamp(a, -0.5, 0.75, &o), &o, n, x, NULL, r_clamp);
        wt_tensor_release(o), o = NULL;
        snprintf(what, sizeof what, "mul by 0.3 [%lld]", (long long)n);
        double *s = malloc((size_t)(n ? n : 1) * sizeof *s);
        for (int64_t i = 0; i < n; i++) s[i] = (double)0.3f; /* the scalar is an f32 */
        expect(what, wt_mul_scalar(a, 0.3, &o), &o, n, x, s, r_mul);
        wt_tensor_release(o), o = NULL;
        free(s);
        wt_tensor_release(a), wt_tensor_release(b);
        free(ha), free(hb), free(x), free(y);
    }
    /* 0-d operands. */
    uint16_t h2[2] = {test_double_to_half(1.5), test_double_to_half(-0.25)};
    wt_tensor *a = make_f16(0, NULL, &h2[0]), *b = make_f16(0, NULL, &h2[1]), *o = NULL;
    double x = 1.5, y = -0.25;
    expect("add of 0-d", wt_add(a, b, &o), &o, 1, &x, &y, r_add);
    wt_tensor_release(o), wt_tensor_release(a), wt_tensor_release(b);
}

/* Slices of a base of 5000 starting at elements 0..9 (aligned and not)
 * and with step 3, added to contiguous operands and to each other. */
static void test_slices(void)
{
    const int64_t base_n = 5000, n = 4099;
    uint16_t *ha = random_halves(base_n, -8, 8), *hb = random_halves(base_n, -8, 8);
    wt_tensor *a = make_f16(1, &base_n, ha), *b = make_f16(1, &base_n, hb);
    double *x = malloc((size_t)n * sizeof *x), *y = malloc((size_t)n * sizeof *y);
    for (int64_t start = 0; start < 10; start++) {
        for (int64_t step = 1; step <= 3; step += 2) {
            int64_t m = step == 1 ? n : (base_n - 10) / 3;
            wt_tensor *sa = NULL, *sb = NULL, *o = NULL;
            CHECK(wt_slice(a, 0, start, start + m * step, step, &sa) == WT_OK, "slice: %s", wt_last_error());
            CHECK(wt_slice(b, 0, 9 - start, 9 - start + m * step, step, &sb) == WT_OK, "slice: %s", wt_last_error());
            for (int64_t i = 0; i < m; i++) {
                x[i] = test_half_to_double(ha[start + i * step]);
                y[i] = test_half_to_double(hb[9 - start + i * step]);
            }
            char what[80];
            snprintf(what, sizeof what, "max of slices at %lld and %lld, step %lld", (long long)start,
                     (long long)(9 - start), (long long)step);
            expect(what, wt_maximum(sa, sb, &o), &o, m, x, y, r_max);
            wt_tensor_release(o), o = NULL;
            snprintf(what, sizeof what, "exp of a slice at %lld, step %lld", (long long)start, (long long)step);
            expect(what, wt_exp(sa, &o), &o, m, x, NULL, r_exp);
            wt_tensor_release(o);
            wt_tensor_release(sa), wt_tensor_release(sb);
        }
    }
    free(x), free(y), free(ha), free(hb);
    wt_tensor_release(a), wt_tensor_release(b);
}

/* [R, C] against a row [C], a column [R, 1], a 0-d tensor, and a
 * transposed [C, R].T; odd R and C. */
static void test_broadcasts(void)
{
    const int64_t R = 37, C = 129, n = R * C;
    int64_t shape[2] = {R, C}, row = C, col[2] = {R, 1}, tshape[2] = {C, R};
    uint16_t *ha = random_halves(n, -4, 4), *hr = random_halves(C, 0.5, 2), *hc = random_halves(R, 0.5, 2);
    uint16_t *ht = random_halves(n, -4, 4), hs = test_double_to_half(1.75);
    wt_tensor *a = make_f16(2, shape, ha), *r = make_f16(1, &row, hr), *c = make_f16(2, col, hc);
    wt_tensor *s = make_f16(0, NULL, &hs), *t = make_f16(2, tshape, ht), *tt = NULL, *o = NULL;
    CHECK(wt_transpose(t, 0, 1, &tt) == WT_OK, "transpose: %s", wt_last_error());
    double *x = malloc((size_t)n * sizeof *x), *y = malloc((size_t)n * sizeof *y);
    for (int64_t i = 0; i < n; i++) x[i] = test_half_to_double(ha[i]);
    for (int64_t i = 0; i < n; i++) y[i] = test_half_to_double(hr[i % C]);
    expect("[R,C] / row", wt_div(a, r, &o), &o, n, x, y, r_div);
    wt_tensor_release(o), o = NULL;
    expect("row * [R,C]", wt_mul(r, a, &o), &o, n, y, x, r_mul);
    wt_tensor_release(o), o = NULL;
    for (int64_t i = 0; i < n; i++) y[i] = test_half_to_double(hc[i / C]);
    expect("[R,C] + column", wt_add(a, c, &o), &o, n, x, y, r_add);
    wt_tensor_release(o), o = NULL;
    for (int64_t i = 0; i < n; i++) y[i] = 1.75;
    expect("[R,C] * 0-d", wt_mul(a, s, &o), &o, n, x, y, r_mul);
    wt_tensor_release(o), o = NULL;
    for (int64_t i = 0; i < n; i++) y[i] = test_half_to_double(ht[(i % C) * R + i / C]);
    expect("[R,C] + [C,R].T", wt_add(a, tt, &o), &o, n, x, y, r_add);
    wt_tensor_release(o), o = NULL;
    expect("exp of [C,R].T", wt_exp(tt, &o), &o, n, y, NULL, r_exp);
    wt_tensor_release(o);
    /* column [R,1] + row [C]: both broadcast. */
    for (int64_t i = 0; i < n; i++) x[i] = test_half_to_double(hc[i / C]), y[i] = test_half_to_double(hr[i % C]);
    o = NULL;
    expect("column + row", wt_add(c, r, &o), &o, n, x, y, r_add);
    wt_tensor_release(o);
    free(x), free(y), free(ha), free(hr), free(hc), free(ht);
    wt_tensor_release(a), wt_tensor_release(r), wt_tensor_release(c), wt_tensor_release(s);
    wt_tensor_release(t), wt_tensor_release(tt);
}

/* sum, mean, max and var over axis 1 of a [rows, cols] f16 view of a
 * [rows, base_cols] tensor from column c0 (c0 > 0: rows start at odd and
 * unaligned elements), and sum over axis 0. */
static void check_reductions(int64_t rows, int64_t base_cols, int64_t c0, int64_t cols)
{
    int64_t shape[2] = {rows, base_cols};
    uint16_t *h = random_halves(rows * base_cols, -2, 2);
    wt_tensor *base = make_f16(2, shape, h), *x = NULL;
    CHECK(wt_slice(base, 1, c0, c0 + cols, 1, &x) == WT_OK, "slice: %s", wt_last_error());
    for (int k = 0; k < 5; k++) {
        const int axis = k == 4 ? 0 : 1;
        const int64_t nout = axis == 1 ? rows : cols, len = axis == 1 ? cols : rows;
        wt_tensor *o = NULL;
        wt_status st = k == 0 || k == 4 ? wt_sum(x, 1, &axis, false, &o)
                     : k == 1           ? wt_mean(x, 1, &axis, false, &o)
                     : k == 2           ? wt_max(x, 1, &axis, false, &o)
                                        : wt_var(x, 1, &axis, 1.0, false, &o);
        static const char *names[5] = {"sum", "mean", "max", "var", "sum over axis 0"};
        if (!CHECK(st == WT_OK && wt_tensor_dtype(o) == WT_F16 && wt_tensor_numel(o) == nout,
                   "%s of [%lld,%lld] from column %lld: %s", names[k], (long long)rows, (long long)cols,
                   (long long)c0, wt_last_error())) {
            wt_tensor_release(o);
            continue;
        }
        uint16_t *g = malloc((size_t)nout * 2);
        int64_t bad = 0;
        CHECK(wt_tensor_read(o, g, (size_t)nout * 2) == WT_OK, "read: %s", wt_last_error());
        for (int64_t r = 0; r < nout; r++) {
            double s = 0, s2 = 0, m = -INFINITY, scale = 0;
            for (int64_t j = 0; j < len; j++) {
                double v = test_half_to_double(axis == 1 ? h[r * base_cols + c0 + j] : h[j * base_cols + c0 + r]);
                s += v, s2 += v * v, m = v > m ? v : m, scale += fabs(v);
            }
            double mean = s / (double)len, want = k == 1 ? mean : k == 2 ? m : k == 3 ? 0 : s;
            if (k == 3) {
                for (int64_t j = 0; j < len; j++) {
                    double d = test_half_to_double(h[r * base_cols + c0 + j]) - mean;
                    want += d * d;
                }
                want /= (double)(len - 1);
                scale = s2 / (double)(len - 1);
            } else if (k == 1) {
                scale /= (double)len;
            }
            double got = test_half_to_double(g[r]);
            /* One f16 ulp of the result, plus f32 rounding over the terms. */
            double tol = fabs(want) / 1024.0 + 1e-6 * scale * (k == 2 ? 0 : 1) + 1e-7;
            if (fabs(got - want) > tol && bad++ == 0)
                CHECK(false, "%s of [%lld,%lld] from column %lld, output %lld: got %.6g, want %.6g", names[k],
                      (long long)rows, (long long)cols, (long long)c0, (long long)r, got, want);
        }
        CHECK(bad == 0, "%s of [%lld,%lld] from column %lld: %lld outputs wrong", names[k], (long long)rows,
              (long long)cols, (long long)c0, (long long)bad);
        free(g);
        wt_tensor_release(o);
    }
    free(h);
    wt_tensor_release(base), wt_tensor_release(x);
}

static void test_reductions(void)
{
    check_reductions(3, 40003, 0, 40003); /* long rows: chunks and a second pass */
    check_reductions(5, 3001, 3, 2995);   /* rows from odd, unaligned elements */
    check_reductions(67, 203, 1, 201);    /* many rows */
    check_reductions(1, 9, 0, 9);         /* a short row */
}

int main(int argc, char **argv)
{
    test_run run;
    if (!test_begin(&run, "f16_layouts", argc, argv)) return run.status;
    g_ctx = run.ctx;
    test_lengths();
    test_slices();
    test_broadcasts();
    test_reductions();
    CHECK(wt_context_sync(g_ctx) == WT_OK, "sync: %s", wt_last_error());
    test_check_nothing_alive(g_ctx);
    return test_end(&run);
}
