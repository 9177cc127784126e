/* Softmax and log-softmax along a middle axis on the CPU: x [O, C, I]
 * with I > 1. The I columns of one outer index are walked together, a
 * block of them at a time, row by row along C, so every pass reads memory
 * in the order it lies (no transpose, no gather): a max pass, a sum pass,
 * a write pass. Blocks of columns run in parallel. */
#include "cpu/cpu.h"
#include "cpu/vmath.h"

#include <math.h>

#define COLS 256 /* columns per block: the running max and sum stay in L1 */

CPU_MULTIVERSION
static void block_pass(wt_rowwise_op op, int pass, const float *x, int64_t sc, int64_t si, int64_t C,
                       int64_t n, float *restrict mx, double *restrict sum, float *o, int64_t oc)
{
    for (int64_t c = 0; c < C; c++) {
        const float *row = x + c * sc;
        float *orow = o + c * oc;
        if (pass == 0) {
            if (si == 1) {
#pragma omp simd
                for (int64_t j = 0; j < n; j++) mx[j] = fmaxf(mx[j], row[j]);
            } else {
                for (int64_t j = 0; j < n; j++) mx[j] = fmaxf(mx[j], row[j * si]);
            }
        } else if (pass == 1) {
            if (si == 1) {
#pragma omp simd
                for (int64_t j = 0; j < n; j++) sum[j] += vm_expf(row[j] - mx[j]);
            } else {
                for (int64_t j = 0; j < n; j++) sum[j] += vm_expf(row[j * si] - mx[j]);
            }
        } else if (op == WT_ROW_SOFTMAX) {
            /* sum holds 1 / sum here */
            for (int64_t j = 0; j < n; j++) orow[j] = vm_expf(row[j * si] - mx[j]) * (float)sum[j];
        } else {
            /* sum holds log(sum) here */
            for (int64_t j = 0; j < n; j++) orow[j] = (row[j * si] - mx[j]) - (float)sum[j];
        }
    }
}

wt_status cpu_softmax_axis(wt_context *ctx, wt_rowwise_op op, const wt_tensor *x, wt_tensor *out)
{
    const int64_t O = x->shape[0], C = x->shape[1], I = x->shape[2];
    const int64_t so = x->strides[0], sc = x->strides[1], si = x->strides[2];
    const int64_t blocks = (I + COLS - 1) / COLS, tasks = O * blocks;
    const float *xp = cpu_data(x);
    float *op_ = cpu_data(out);
    int threads = O * C * I >= CPU_PARALLEL_MIN ? cpu_threads(ctx) : 1;
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int64_t t = 0; t < tasks; t++) {
        const int64_t o = t / blocks, i0 = (t % blocks) * COLS;
        const int64_t n = I - i0 < COLS ? I - i0 : COLS;
        float mx[COLS];
        double sum[COLS]; /* C may be 100,000s: a float sum would drift */
        const float *xb = xp + o * so + i0 * si;
        float *ob = op_ + o * C * I + i0;
        for (int64_t j = 0; j < n; j++) mx[j] = -INFINITY, sum[j] = 0.0f;
        block_pass(op, 0, xb, sc, si, C, n, mx, sum, ob, I);
        /* A column of -inf has no finite maximum: shift by 0 (its softmax
         * is then 0/0 = NaN, as the math and PyTorch give). */
        for (int64_t j = 0; j < n; j++)
            if (isinf(mx[j])) mx[j] = mx[j] > 0 ? mx[j] : 0.0f;
        block_pass(op, 1, xb, sc, si, C, n, mx, sum, ob, I);
        for (int64_t j = 0; j < n; j++) sum[j] = op == WT_ROW_SOFTMAX ? 1.0 / sum[j] : log(sum[j]);
        block_pass(op, 2, xb, sc, si, C, n, mx, sum, ob, I);
    }
    return WT_OK;
}
