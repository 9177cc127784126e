/* CPU batched matrix product through CBLAS (or its portable stand-in,
 * cpu/blas.h).
 *
 * BLAS takes a matrix stored row-major or transposed, each with a leading
 * dimension. A strided view that is neither (a slice with a step along the
 * inner axis, an expanded axis) is gathered into a contiguous temporary
 * first, once per distinct batch. */
#include "cpu/cpu.h"
#include "cpu/gemv_simd.h"

#include "cpu/blas.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* How BLAS can read one operand: rows x cols with strides (rs, cs). */
typedef struct blas_operand {
    bool direct;     /* usable in place */
    bool transposed; /* stored column-major: BLAS reads its transpose */
    int ld;          /* leading dimension */
} blas_operand;

/* A size-1 axis never moves the index, so its stride may be anything; BLAS
 * still wants a leading dimension of at least the other extent. */
static blas_operand classify(int64_t rows, int64_t cols, int64_t rs, int64_t cs) {
    blas_operand o = {false, false, 0};
    const int64_t max_ld = 0x7fffffff;
    const bool unit_cols = cols == 1 || cs == 1;
    const bool unit_rows = rows == 1 || rs == 1;
    if (unit_cols) {
        int64_t ld = rows == 1 ? cols : rs;
        if (ld >= cols && ld >= 1 && ld <= max_ld) {
            o.direct = true;
            o.ld = (int)ld;
            return o;
        }
    }
    if (unit_rows) {
        int64_t ld = cols == 1 ? rows : cs;
        if (ld >= rows && ld >= 1 && ld <= max_ld) {
            o.direct = true;
            o.transposed = true;
            o.ld = (int)ld;
        }
    }
    return o;
}

/* One operand of the batched product: its data, per-batch stride, and how
 * BLAS reads it (directly, or after gathering into scratch). */
typedef struct mm_operand {
    const float *data;
    int64_t batch_stride;
    cpu_layout matrix; /* the 2-D view of one batch */
    blas_operand blas;
    float *scratch;        /* rows * cols floats when gathered */
    int64_t gathered_batch; /* which batch scratch holds; -1: none */
} mm_operand;

static wt_status prepare(const char *name, const wt_tensor *t, mm_operand *op) {
    const int64_t rows = t->shape[1], cols = t->shape[2];
    op->data = cpu_data(t);
    op->batch_stride = t->strides[0];
    op->matrix.ndim = 2;
    op->matrix.shape[0] = rows;
    op->matrix.shape[1] = cols;
    op->matrix.strides[0] = t->strides[1];
    op->matrix.strides[1] = t->strides[2];
    op->blas = classify(rows, cols, t->strides[1], t->strides[2]);
    op->scratch = NULL;
    op->gathered_batch = -1;
    if (op->blas.direct)
        return WT_OK;
    if (cols > 0x7fffffff)
        return wt_fail(WT_ERR_UNSUPPORTED, "cpu: matmul: %s has %lld columns, more than BLAS takes",
                       name, (long long)cols);
    size_t bytes;
    if (!wt_mul_size((size_t)rows, (size_t)cols, &bytes) ||
        !wt_mul_size(bytes, sizeof(float), &bytes))
        return wt_fail(WT_ERR_OUT_OF_MEMORY, "cpu: matmul: temporary for %s overflows", name);
    op->scratch = malloc(bytes ? bytes : 1);
    if (!op->scratch)
        return wt_fail(WT_ERR_OUT_OF_MEMORY,
                       "cpu: matmul: cannot allocate %zu bytes to gather %s", bytes, name);
    op->blas.ld = cols > 0 ? (int)cols : 1;
    return WT_OK;
}

/* The matrix of batch b as BLAS reads it. */
static const float *operand_matrix(mm_operand *op, int64_t b) {
    const float *m = op->data + b * op->batch_stride;
    if (op->blas.direct)
        return m;
    /* A broadcast batch (stride 0) is gathered only once. */
    const int64_t key = op->batch_stride == 0 ? 0 : b;
    if (op->gathered_batch != key) {
        cpu_gather(m, &op->matrix, 0, op->matrix.shape[0] * op->matrix.shape[1], op->scratch);
        op->gathered_batch = key;
    }
    return op->scratch;
}

/* The products below this many multiply-adds run on one thread. */
#define GEMM_PARALLEL_MIN (1 << 18)

/* Rows (or columns) per part when n are split into at most parts parts
 * of a multiple of 16 (whole register tiles of the BLAS kernels). */
static int split_chunk(int n, int parts) {
    int chunk = (n + parts - 1) / parts;
    return (chunk + 15) / 16 * 16;
}

/* C [M, N] = op(A) op(B), split into blocks of rows of C (or of columns
 * when C has few rows), one single-threaded BLAS call per block on the
 * context's OpenMP threads. OpenBLAS's own thread pool stays at one thread:
 * two pools (its workers and OpenMP's, each spinning while it waits) took
 * turns on the same cores, and only OpenMP's follows the context's thread
 * count (cpu/threads.c). */
static void sgemm_split(int threads, CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int M, int N, int K,
                        const float *a, int lda, const float *b, int ldb, float *c) {
    const bool by_rows = M >= N || M >= 16 * threads;
    const int extent = by_rows ? M : N;
    int chunk = split_chunk(extent, threads);
    int parts = (extent + chunk - 1) / chunk;
    if ((double)M * N * K < GEMM_PARALLEL_MIN || threads < 2)
        parts = 1, chunk = extent;
#pragma omp parallel for num_threads(parts) schedule(static) if (parts > 1)
    for (int p = 0; p < parts; p++) {
        const int lo = p * chunk, n = extent - lo < chunk ? extent - lo : chunk;
        if (by_rows) {
            /* Rows lo.. of op(A): row offsets of A as stored, or columns
             * of its transpose. */
            const float *ap = ta == CblasNoTrans ? a + (size_t)lo * lda : a + lo;
            cblas_sgemm(CblasRowMajor, ta, tb, n, N, K, 1.0f, ap, lda, b, ldb, 0.0f, c + (size_t)lo * N, N);
        } else {
            const float *bp = tb == CblasNoTrans ? b + lo : b + (size_t)lo * ldb;
            cblas_sgemm(CblasRowMajor, ta, tb, M, n, K, 1.0f, a, lda, bp, ldb, 0.0f, c + lo, N);
        }
    }
}

/* y [M] = op(A) x, split into blocks of y; A is [M, K] as stored, or
 * [K, M] when transposed. */
static void sgemv_split(int threads, bool transposed, int M, int K, const float *a, int lda, const float *x,
                        int incx, float *y) {
    int chunk = split_chunk(M, threads);
    int parts = (M + chunk - 1) / chunk;
    if ((double)M * K < GEMM_PARALLEL_MIN || threads < 2)
        parts = 1, chunk = M;
#pragma omp parallel for num_threads(parts) schedule(static) if (parts > 1)
    for (int p = 0; p < parts; p++) {
        const int lo = p * chunk, n = M - lo < chunk ? M - lo : chunk;
        if (transposed)
            cblas_sgemv(CblasRowMajor, CblasTrans, K, n, 1.0f, a + lo, lda, x, incx, 0.0f, y + lo, 1);
        else
            cblas_sgemv(CblasRowMajor, CblasNoTrans, n, K, 1.0f, a + (size_t)lo * lda, lda, x, incx, 0.0f,
                        y + lo, 1);
    }
}

wt_status cpu_matmul(wt_context *ctx, const wt_tensor *a, const wt_tensor *b, wt_tensor *out) {
    wt_status st = cpu_check_f32("matmul", a);
    if (st != WT_OK || (st = cpu_check_f32("matmul", b)) != WT_OK ||
        (st = cpu_check_f32("matmul", out)) != WT_OK)
        return st;
    if (a->ndim != 3 || b->ndim != 3 || out->ndim != 3)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "cpu: matmul wants 3-d operands (got %d, %d, %d)",
                       a->ndim, b->ndim, out->ndim);
    const int64_t B = out->shape[0], M = out->shape[1], N = out->shape[2], K = a->shape[2];
    if (B == 0 || M == 0 || N == 0)
        return WT_OK;
    if (K == 0)
        return cpu_fill(ctx, out, 0.0f);
    const int64_t max_int = 0x7fffffff;
    if (M > max_int || N > max_int || K > max_int)
        return wt_fail(WT_ERR_UNSUPPORTED,
                       "cpu: matmul of [%lld, %lld] x [%lld, %lld] exceeds BLAS's int sizes",
                       (long long)M, (long long)K, (long long)K, (long long)N);

    mm_operand pa, pb;
    if ((st = prepare("a", a, &pa)) != WT_OK)
        return st;
    if ((st = prepare("b", b, &pb)) != WT_OK) {
        free(pa.scratch);
        return st;
    }
    float *c = cpu_data(out);
    const CBLAS_TRANSPOSE ta = pa.blas.transposed ? CblasTrans : CblasNoTrans;
    const CBLAS_TRANSPOSE tb = pb.blas.transposed ? CblasTrans : CblasNoTrans;
    const int threads = cpu_threads(ctx);
    cpu_blas_threads(1);
    /* Batches run one after another; each product is split over the
     * context's threads. */
    for (int64_t i = 0; i < B; i++) {
        const float *am = operand_matrix(&pa, i);
        const float *bm = operand_matrix(&pb, i);
        if (N == 1) {
            /* Matrix times vector: sgemv reads A once, where sgemm with one
             * column runs at a third of the speed (measured 4096x4096). The
             * vector's elements are ld apart in a row-major [K, 1] operand,
             * adjacent in a transposed one. */
            const int incx = pb.blas.transposed ? 1 : pb.blas.ld;
            sgemv_split(threads, pa.blas.transposed, (int)M, (int)K, am, pa.blas.ld, bm, incx, c + i * M);
            continue;
        }
        sgemm_split(threads, ta, tb, (int)M, (int)N, (int)K, am, pa.blas.ld, bm, pb.blas.ld, c + i * M * N);
    }
    free(pa.scratch);
    free(pb.scratch);
    return WT_OK;
}

/* --- matrix products: the epilogue --- */

/* gelu(x) = x/2 erfc(-x / sqrt 2), as the WebGPU epilogue computes it. */
static float act_apply(wt_matmul_act act, float x) {
    switch (act) {
    case WT_MATMUL_ACT_RELU:
        return x < 0.0f ? 0.0f : x;
    case WT_MATMUL_ACT_GELU:
        return 0.5f * x * erfcf(-x * 0.70710678118654752f);
    case WT_MATMUL_ACT_GELU_TANH: {
        float u = 0.7978845608028654f * (x + 0.044715f * x * x * x);
        return 0.5f * x * (1.0f + tanhf(u));
    }
    case WT_MATMUL_ACT_NONE:
    case WT_MATMUL_ACT_GELU_GRAD: /* needs its operand: never reaches this backend */
    case WT_MATMUL_ACT_COUNT:
        break;
    }
    return x;
}

wt_status cpu_matmul_fused(wt_context *ctx, const wt_tensor *a, const wt_tensor *b,
                           const wt_tensor *bias, wt_matmul_act act, wt_tensor *out) {
    wt_status st = WT_OK;
    /* f16 matrix times vector: converted in registers, never widened in
     * memory (cpu/gemv_simd.h); other f16 shapes are lifted to f32 by the
     * caller on this function's WT_ERR_UNSUPPORTED. */
    if (a->dtype == WT_F16 && act == WT_MATMUL_ACT_NONE && (st = cpu_gemv_f16(ctx, a, b, bias, out)) != WT_ERR_UNSUPPORTED)
        return st;
    st = WT_OK;
    if (bias && (st = cpu_check_f32("matmul", bias)) != WT_OK)
        return st;
    if ((st = cpu_matmul(ctx, a, b, out)) != WT_OK || (!bias && act == WT_MATMUL_ACT_NONE))
        return st;
    const int64_t N = out->shape[2], rows = out->numel / (N ? N : 1);
    float *c = cpu_data(out);
    const float *bv = bias ? cpu_data(bias) : NULL;
    const int64_t bs = bias ? bias->strides[0] : 0;
#pragma omp parallel for num_threads(cpu_threads(ctx)) if (out->numel > CPU_PARALLEL_MIN) schedule(static)
    for (int64_t r = 0; r < rows; r++)
        for (int64_t j = 0; j < N; j++) {
            float v = c[r * N + j] + (bv ? bv[j * bs] : 0.0f);
            c[r * N + j] = act_apply(act, v);
        }
    return WT_OK;
}
