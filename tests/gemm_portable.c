/* The portable SGEMM/SGEMV (src/cpu/gemm_portable.c, the CPU backend's
 * matrix product where the build has no BLAS, as in WebAssembly) against
 * float64 references: every transpose combination, sizes around the block
 * and strip edges, leading dimensions wider than the matrix, alpha/beta,
 * k = 0, NaN and inf propagation, and beta = 0 leaving C unread. Runs in
 * every build (natively too, though the native library uses OpenBLAS). */
#include "cpu/blas.h"
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static float at(const float *m, int ld, int trans, int i, int j)
{
    return trans ? m[(size_t)j * ld + i] : m[(size_t)i * ld + j];
}

/* One product against doubles; C starts as 0.5 (or NaN where beta is 0:
 * it must not be read). */
static void check_gemm(int m, int n, int k, int ta, int tb, float alpha, float beta, int pad)
{
    const int arows = ta ? k : m, acols = ta ? m : k, brows = tb ? n : k, bcols = tb ? k : n;
    const int lda = acols + pad, ldb = bcols + pad, ldc = n + pad;
    float *a = malloc(sizeof(float) * ((size_t)arows * lda + 1));
    float *b = malloc(sizeof(float) * ((size_t)brows * ldb + 1));
    float *c = malloc(sizeof(float) * ((size_t)m * ldc + 1));
    for (size_t i = 0; i < (size_t)arows * lda; i++) a[i] = test_rng_uniform(-1.0f, 1.0f);
    for (size_t i = 0; i < (size_t)brows * ldb; i++) b[i] = test_rng_uniform(-1.0f, 1.0f);
    for (size_t i = 0; i < (size_t)m * ldc; i++) c[i] = beta == 0.0f ? NAN : 0.5f;
    wt_portable_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
                      m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    double worst = 0.0;
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) {
            double s = 0.0, mag = 0.0;
            for (int p = 0; p < k; p++) {
                double t = (double)at(a, lda, ta, i, p) * at(b, ldb, tb, p, j);
                s += t;
                mag += fabs(t);
            }
            double want = alpha * s + (beta == 0.0f ? 0.0 : beta * 0.5);
            double err = fabs(c[(size_t)i * ldc + j] - want) / (1e-6 + fabs(alpha) * mag + 0.5);
            if (!(err <= worst)) worst = isnan(err) ? INFINITY : err;
        }
    CHECK(worst < 1e-5, "sgemm m=%d n=%d k=%d ta=%d tb=%d alpha=%g beta=%g pad=%d: error %g", m, n,
          k, ta, tb, alpha, beta, pad, worst);
    /* The padding between rows of C is never written. */
    bool pad_kept = true;
    for (int i = 0; i < m; i++)
        for (int j = n; j < ldc; j++) {
            float v = c[(size_t)i * ldc + j];
            pad_kept = pad_kept && (beta == 0.0f ? isnan(v) : v == 0.5f);
        }
    CHECK(pad_kept, "sgemm m=%d n=%d k=%d: wrote outside C", m, n, k);
    free(a);
    free(b);
    free(c);
}

static void check_gemv(int m, int n, int trans, int incx, int incy, float beta)
{
    float *a = malloc(sizeof(float) * (size_t)m * n);
    const int xlen = trans ? m : n, ylen = trans ? n : m;
    float *x = malloc(sizeof(float) * ((size_t)xlen * incx + 1));
    float *y = malloc(sizeof(float) * ((size_t)ylen * incy + 1));
    for (size_t i = 0; i < (size_t)m * n; i++) a[i] = test_rng_uniform(-1.0f, 1.0f);
    for (size_t i = 0; i < (size_t)xlen * incx; i++) x[i] = test_rng_uniform(-1.0f, 1.0f);
    for (size_t i = 0; i < (size_t)ylen * incy; i++) y[i] = beta == 0.0f ? NAN : 0.25f;
    wt_portable_sgemv(CblasRowMajor, trans ? CblasTrans : CblasNoTrans, m, n, 2.0f, a, n, x, incx,
                      beta, y, incy);
    double worst = 0.0;
    for (int i = 0; i < ylen; i++) {
        double s = 0.0, mag = 0.0;
        for (int p = 0; p < xlen; p++) {
            double t = (double)(trans ? a[(size_t)p * n + i] : a[(size_t)i * n + p]) * x[(size_t)p * incx];
            s += t;
            mag += fabs(t);
        }
        double want = 2.0 * s + (beta == 0.0f ? 0.0 : beta * 0.25);
        double err = fabs(y[(size_t)i * incy] - want) / (1e-6 + 2.0 * mag + 0.25);
        if (!(err <= worst)) worst = isnan(err) ? INFINITY : err;
    }
    CHECK(worst < 1e-5, "sgemv m=%d n=%d trans=%d incx=%d incy=%d beta=%g: error %g", m, n, trans,
          incx, incy, beta, worst);
    free(a);
    free(x);
    free(y);
}

int main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    test_rng_seed(test_seed());
    /* Around MR=4, NR=16, KC=256, MC=64, NC=512. */
    const int sizes[][3] = {{1, 1, 1},   {3, 5, 7},     {4, 16, 1},   {5, 17, 3},  {63, 65, 255},
                            {64, 16, 256}, {65, 33, 257}, {7, 513, 9}, {130, 3, 300}, {2, 1, 600}};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
        for (int ta = 0; ta < 2; ta++)
            for (int tb = 0; tb < 2; tb++)
                check_gemm(sizes[s][0], sizes[s][1], sizes[s][2], ta, tb, 1.0f, 0.0f, s % 3);
    check_gemm(9, 10, 11, 0, 0, -0.5f, 2.0f, 1);
    check_gemm(70, 20, 300, 1, 0, 1.5f, 1.0f, 0);
    check_gemm(6, 5, 0, 0, 0, 1.0f, 3.0f, 2); /* k = 0: C = beta C */
    check_gemm(6, 5, 0, 0, 0, 1.0f, 0.0f, 0); /* k = 0, beta 0: zeros, C unread */
    check_gemm(0, 5, 3, 0, 0, 1.0f, 0.0f, 0); /* nothing to do */

    /* NaN and inf in A reach only their row of C; 0 * inf is NaN. */
    {
        float a[2 * 3] = {1, NAN, 1, 1, 1, 1}, b[3 * 2] = {1, 0, 1, 0, 1, INFINITY}, c[4];
        wt_portable_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, 2, 2, 3, 1.0f, a, 3, b, 2,
                          0.0f, c, 2);
        CHECK(isnan(c[0]) && isnan(c[1]) && c[2] == 3.0f && isinf(c[3]) && c[3] > 0,
              "sgemm special values: %g %g %g %g", c[0], c[1], c[2], c[3]);
    }

    for (int trans = 0; trans < 2; trans++) {
        check_gemv(1, 1, trans, 1, 1, 0.0f);
        check_gemv(37, 19, trans, 1, 1, 0.0f);
        check_gemv(37, 19, trans, 3, 1, 1.0f);
        check_gemv(300, 5, trans, 1, 2, 0.0f);
        check_gemv(5, 300, trans, 2, 3, -1.0f);
    }
    return test_summary("gemm_portable");
}
