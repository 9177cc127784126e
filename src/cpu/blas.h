/* The two BLAS routines the CPU backend calls (matmul.c): OpenBLAS's CBLAS
 * where the build has it (WT_HAVE_CBLAS), else the portable blocked
 * kernels of gemm_portable.c under the same names, so matmul.c reads the
 * same either way. The portable ones are always compiled: the test suite
 * checks them against float64 on every build. */
#ifndef WT_CPU_BLAS_H
#define WT_CPU_BLAS_H

#ifdef WT_HAVE_CBLAS
#include <cblas.h>
#else
typedef enum { CblasRowMajor = 101, CblasColMajor = 102 } CBLAS_ORDER;
typedef enum { CblasNoTrans = 111, CblasTrans = 112, CblasConjTrans = 113 } CBLAS_TRANSPOSE;
#define cblas_sgemm wt_portable_sgemm
#define cblas_sgemv wt_portable_sgemv
#endif

/* Row-major only (the order argument is ignored; CblasRowMajor is all
 * this library passes). C = alpha op(A) op(B) + beta C, with C left
 * unread when beta is 0, as BLAS specifies. */
void wt_portable_sgemm(int order, int trans_a, int trans_b, int m, int n, int k, float alpha,
                       const float *a, int lda, const float *b, int ldb, float beta, float *c,
                       int ldc);
/* y = alpha op(A) x + beta y for the m x n row-major A. */
void wt_portable_sgemv(int order, int trans, int m, int n, float alpha, const float *a, int lda,
                       const float *x, int incx, float beta, float *y, int incy);

#endif
