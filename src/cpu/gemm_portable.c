/* Portable single-precision GEMM/GEMV for builds without a BLAS (the
 * WebAssembly build): blocked so a block of A and a panel of B stay in
 * cache, both packed into zero-padded MR- and NR-wide strips so the inner
 * kernel is a fixed-size multiply-add the compiler turns into vectors
 * (SIMD128 on wasm32, SSE/AVX natively). Single-threaded: the builds that
 * use it have no threads. */
#include "cpu/blas.h"

#include <stdlib.h>
#include <string.h>

enum { MR = 4, NR = 16, KC = 256, MC = 64, NC = 512 };

/* Element (i, j) of a row-major matrix read as itself or transposed. */
static inline float at(const float *m, int ld, int trans, int i, int j) {
    return trans ? m[(size_t)j * (size_t)ld + (size_t)i] : m[(size_t)i * (size_t)ld + (size_t)j];
}

/* A[i0 .. i0+mc, k0 .. k0+kc] into MR-row strips: strip s holds, for each
 * k, MR consecutive rows (zeros past the edge). */
static void pack_a(const float *a, int lda, int ta, int i0, int mc, int k0, int kc, float *dst) {
    for (int s = 0; s < mc; s += MR)
        for (int k = 0; k < kc; k++)
            for (int r = 0; r < MR; r++)
                *dst++ = s + r < mc ? at(a, lda, ta, i0 + s + r, k0 + k) : 0.0f;
}

/* B[k0 .. k0+kc, j0 .. j0+nc] into NR-column strips, k-major in each. */
static void pack_b(const float *b, int ldb, int tb, int k0, int kc, int j0, int nc, float *dst) {
    for (int s = 0; s < nc; s += NR)
        for (int k = 0; k < kc; k++)
            for (int c = 0; c < NR; c++)
                *dst++ = s + c < nc ? at(b, ldb, tb, k0 + k, j0 + s + c) : 0.0f;
}

/* acc = the MR x NR product of one A strip and one B strip over kc. */
static void kernel(int kc, const float *restrict ap, const float *restrict bp,
                   float acc[MR][NR]) {
    float t[MR][NR] = {{0}};
    for (int k = 0; k < kc; k++) {
        const float *bk = bp + k * NR;
        for (int r = 0; r < MR; r++) {
            const float av = ap[k * MR + r];
            for (int c = 0; c < NR; c++)
                t[r][c] += av * bk[c];
        }
    }
    memcpy(acc, t, sizeof t);
}

/* C block = alpha acc (+ beta C when this is the first k block; later k
 * blocks add onto what the first stored). */
static void store(float *c, int ldc, int rows, int cols, float alpha, float beta, int first,
                  float acc[MR][NR]) {
    for (int r = 0; r < rows; r++) {
        float *cr = c + (size_t)r * (size_t)ldc;
        for (int j = 0; j < cols; j++) {
            float v = alpha * acc[r][j];
            if (!first)
                cr[j] += v;
            else if (beta == 0.0f)
                cr[j] = v;
            else
                cr[j] = v + beta * cr[j];
        }
    }
}

/* Without any k (k == 0) the product is only the beta term. */
static void scale_only(int m, int n, float beta, float *c, int ldc) {
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++)
            c[(size_t)i * (size_t)ldc + j] = beta == 0.0f ? 0.0f : beta * c[(size_t)i * (size_t)ldc + j];
}

void wt_portable_sgemm(int order, int trans_a, int trans_b, int m, int n, int k, float alpha,
                       const float *a, int lda, const float *b, int ldb, float beta, float *c,
                       int ldc) {
    (void)order;
    if (m <= 0 || n <= 0)
        return;
    if (k <= 0) {
        scale_only(m, n, beta, c, ldc);
        return;
    }
    const int ta = trans_a == CblasTrans || trans_a == CblasConjTrans;
    const int tb = trans_b == CblasTrans || trans_b == CblasConjTrans;
    /* Packing buffers of fixed size (about 600 KiB): on the stack they
     * could overflow a small wasm stack, so they come from the heap. */
    float *ap = malloc(sizeof(float) * (size_t)MC * KC);
    float *bp = malloc(sizeof(float) * (size_t)KC * NC);
    if (!ap || !bp) {
        /* Out of memory for 600 KiB: fall back to the unblocked loop,
         * which needs nothing, rather than leave C unwritten. */
        free(ap);
        free(bp);
        for (int i = 0; i < m; i++)
            for (int j = 0; j < n; j++) {
                float s = 0.0f;
                for (int p = 0; p < k; p++)
                    s += at(a, lda, ta, i, p) * at(b, ldb, tb, p, j);
                float *cij = c + (size_t)i * (size_t)ldc + j;
                *cij = beta == 0.0f ? alpha * s : alpha * s + beta * *cij;
            }
        return;
    }
    float acc[MR][NR];
    for (int j0 = 0; j0 < n; j0 += NC) {
        const int nc = n - j0 < NC ? n - j0 : NC;
        for (int k0 = 0; k0 < k; k0 += KC) {
            const int kc = k - k0 < KC ? k - k0 : KC;
            pack_b(b, ldb, tb, k0, kc, j0, nc, bp);
            for (int i0 = 0; i0 < m; i0 += MC) {
                const int mc = m - i0 < MC ? m - i0 : MC;
                pack_a(a, lda, ta, i0, mc, k0, kc, ap);
                for (int js = 0; js < nc; js += NR)
                    for (int is = 0; is < mc; is += MR) {
                        kernel(kc, ap + (size_t)is * kc, bp + (size_t)js * kc, acc);
                        store(c + (size_t)(i0 + is) * (size_t)ldc + (size_t)(j0 + js), ldc,
                              mc - is < MR ? mc - is : MR, nc - js < NR ? nc - js : NR, alpha,
                              beta, k0 == 0, acc);
                    }
            }
        }
    }
    free(ap);
    free(bp);
}

void wt_portable_sgemv(int order, int trans, int m, int n, float alpha, const float *a, int lda,
                       const float *x, int incx, float beta, float *y, int incy) {
    (void)order;
    const int t = trans == CblasTrans || trans == CblasConjTrans;
    const int ylen = t ? n : m, xlen = t ? m : n;
    for (int i = 0; i < ylen; i++) {
        float *yi = y + (size_t)i * (size_t)incy;
        *yi = beta == 0.0f ? 0.0f : beta * *yi;
    }
    if (xlen <= 0)
        return;
    if (!t) {
        /* y_i = A row i . x */
        for (int i = 0; i < m; i++) {
            const float *row = a + (size_t)i * (size_t)lda;
            float s = 0.0f;
            if (incx == 1)
                for (int j = 0; j < n; j++)
                    s += row[j] * x[j];
            else
                for (int j = 0; j < n; j++)
                    s += row[j] * x[(size_t)j * (size_t)incx];
            y[(size_t)i * (size_t)incy] += alpha * s;
        }
        return;
    }
    /* y = A^T x: rows of A scaled by x_i, added up (reads A row by row). */
    if (incy == 1) {
        for (int i = 0; i < m; i++) {
            const float *row = a + (size_t)i * (size_t)lda;
            const float xi = alpha * x[(size_t)i * (size_t)incx];
            for (int j = 0; j < n; j++)
                y[j] += xi * row[j];
        }
        return;
    }
    for (int j = 0; j < n; j++) {
        float s = 0.0f;
        for (int i = 0; i < m; i++)
            s += a[(size_t)i * (size_t)lda + j] * x[(size_t)i * (size_t)incx];
        y[(size_t)j * (size_t)incy] += alpha * s;
    }
}
