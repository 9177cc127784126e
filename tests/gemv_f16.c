/* f16 matrix times vector (the decode step of an f16 checkpoint): wt_matmul
 * of [M, K] f16 by a [K] vector (contiguous and strided) and wt_linear of
 * one row by an f16 weight [N, K] with and without an f16 bias, against
 * float64 of the f16 inputs. K with and without a tail past whole vectors
 * (7, 33, 300, 1030). The CPU backend runs these shapes converting the
 * weight in registers; the other shapes keep the general path. */
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static wt_context *g_ctx;

/* n f16 values: their f16 bits as doubles in host, a tensor of shape. */
static wt_tensor *half_tensor(int ndim, const int64_t *shape, double *host, int64_t n)
{
    float *f = malloc(sizeof(float) * (size_t)n);
    wt_tensor *t32 = NULL, *t16 = NULL;
    if (!f) return NULL;
    for (int64_t i = 0; i < n; i++) {
        host[i] = test_half_to_double(test_double_to_half(test_rng_uniform(-1.0f, 1.0f)));
        f[i] = (float)host[i];
    }
    if (wt_tensor_from_data(g_ctx, WT_F32, ndim, shape, f, &t32) == WT_OK) wt_cast(t32, WT_F16, &t16);
    wt_tensor_release(t32);
    free(f);
    return t16;
}

/* got (f16 result, n values) against want: within the f16 rounding of the
 * value, f32 sums of the terms' magnitudes, and (pre not NULL) a rounding
 * to f16 of the product pre before the bias is added (the general path
 * rounds there too). */
static void check_result(const char *what, const wt_tensor *y, const double *want, const double *mag,
                         const double *pre, int64_t n)
{
    wt_tensor *y32 = NULL;
    CHECK(wt_tensor_dtype(y) == WT_F16 && wt_tensor_numel(y) == n, "%s: f16 result of %lld values", what, (long long)n);
    if (wt_cast(y, WT_F32, &y32) != WT_OK) return;
    char err[128];
    float *got = test_read_guarded(y32, err, sizeof err);
    int bad = 0;
    for (int64_t i = 0; got && i < n; i++) {
        const double tol = (fabs(want[i]) + (pre ? fabs(pre[i]) : 0.0)) * ldexp(1.0, -11) + mag[i] * 1e-6 + 1e-7;
        if (fabs((double)got[i] - want[i]) > tol && bad++ < 3)
            printf("  %s [%lld] = %.8g, want %.8g\n", what, (long long)i, (double)got[i], want[i]);
    }
    CHECK(got && bad == 0, "%s: against float64 (%d outside)", what, bad);
    free(got);
    wt_tensor_release(y32);
}

/* [m, k] @ v, v [k] or every second element of [2k] */
static void check_matvec(int64_t m, int64_t k, bool strided)
{
    char what[96];
    snprintf(what, sizeof what, "matmul [%lld, %lld] @ [%lld]%s", (long long)m, (long long)k, (long long)k,
             strided ? " (strided)" : "");
    const int64_t as[2] = {m, k}, vs[1] = {strided ? 2 * k : k};
    double *a = malloc(sizeof(double) * (size_t)(m * k)), *v = malloc(sizeof(double) * (size_t)(2 * k));
    double *want = calloc((size_t)m, sizeof(double)), *mag = calloc((size_t)m, sizeof(double));
    wt_tensor *ta = a ? half_tensor(2, as, a, m * k) : NULL, *tv = v ? half_tensor(1, vs, v, vs[0]) : NULL;
    wt_tensor *view = NULL, *y = NULL;
    wt_status st = ta && tv && want && mag ? WT_OK : WT_ERR_OUT_OF_MEMORY;
    if (st == WT_OK) st = strided ? wt_slice(tv, 0, 0, 2 * k, 2, &view) : wt_contiguous(tv, &view);
    if (st == WT_OK) st = wt_matmul(ta, view, &y);
    CHECK(st == WT_OK, "%s: %s", what, wt_last_error());
    if (st == WT_OK) {
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < k; j++) {
                const double p = a[i * k + j] * v[strided ? 2 * j : j];
                want[i] += p, mag[i] += fabs(p);
            }
        check_result(what, y, want, mag, NULL, m);
    }
    wt_tensor_release(ta), wt_tensor_release(tv), wt_tensor_release(view), wt_tensor_release(y);
    free(a), free(v), free(want), free(mag);
}

/* linear: x [1, k] @ w [n, k]^T (+ bias [n]) */
static void check_linear(int64_t n, int64_t k, bool with_bias)
{
    char what[96];
    snprintf(what, sizeof what, "linear [1, %lld] by [%lld, %lld]%s", (long long)k, (long long)n, (long long)k,
             with_bias ? " + bias" : "");
    const int64_t xs[2] = {1, k}, ws[2] = {n, k}, bs[1] = {n};
    double *x = malloc(sizeof(double) * (size_t)k), *w = malloc(sizeof(double) * (size_t)(n * k));
    double *b = malloc(sizeof(double) * (size_t)n);
    double *want = calloc((size_t)n, sizeof(double)), *mag = calloc((size_t)n, sizeof(double));
    double *pre = calloc((size_t)n, sizeof(double));
    wt_tensor *tx = x ? half_tensor(2, xs, x, k) : NULL, *tw = w ? half_tensor(2, ws, w, n * k) : NULL;
    wt_tensor *tb = with_bias && b ? half_tensor(1, bs, b, n) : NULL, *y = NULL;
    wt_status st = tx && tw && want && mag && pre && (!with_bias || tb) ? WT_OK : WT_ERR_OUT_OF_MEMORY;
    if (st == WT_OK) st = wt_linear(tx, tw, tb, &y);
    CHECK(st == WT_OK, "%s: %s", what, wt_last_error());
    if (st == WT_OK) {
        for (int64_t r = 0; r < n; r++) {
            want[r] = with_bias ? b[r] : 0.0, mag[r] = fabs(want[r]);
            for (int64_t j = 0; j < k; j++) pre[r] += x[j] * w[r * k + j], mag[r] += fabs(x[j] * w[r * k + j]);
            want[r] += pre[r];
        }
        check_result(what, y, want, mag, with_bias ? pre : NULL, n);
    }
    wt_tensor_release(tx), wt_tensor_release(tw), wt_tensor_release(tb), wt_tensor_release(y);
    free(x), free(w), free(b), free(want), free(mag), free(pre);
}

int main(int argc, char **argv)
{
    test_run run;
    if (!test_begin(&run, "gemv_f16", argc, argv)) return run.status;
    g_ctx = run.ctx;
    test_rng_seed(test_seed());
    const int64_t ks[] = {7, 33, 300, 1030};
    for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++) {
        check_matvec(37, ks[i], false);
        check_matvec(5, ks[i], true);
        check_linear(45, ks[i], false);
        check_linear(19, ks[i], true);
    }
    test_check_nothing_alive(g_ctx);
    return test_end(&run);
}
