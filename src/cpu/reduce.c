/* CPU reductions: sum, mean, max, min over trailing axes.
 *
 * The API layer hands over x with its kept axes first and its reduced axes
 * last. Both groups are merged separately, then one of two plans runs:
 *  - columns: when the kept innermost axis is contiguous in x (say the sum
 *    over axis 0 of a row-major matrix), whole rows of x are accumulated
 *    into a block of outputs, so every load is a contiguous vector load;
 *  - rows: otherwise each output walks its reduced elements, the innermost
 *    run as one (vectorised, when contiguous) span. With few outputs the
 *    reduced range itself is split across threads.
 * Sums accumulate in double; max/min propagate NaN as NumPy does. */
#include "cpu/cpu.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The running state of one output: a double sum, or an extremum. */
typedef struct partial {
    double sum;
    float ext;
} partial;

static inline bool is_extremum(wt_reduce_op op) {
    return op == WT_REDUCE_MAX || op == WT_REDUCE_MIN;
}

/* Whether v replaces the running extremum a. NaN wins and then stays,
 * since nothing compares greater (or less) than it. */
static inline bool takes_max(float v, float a) { return v > a || v != v; }
static inline bool takes_min(float v, float a) { return v < a || v != v; }

static partial partial_init(wt_reduce_op op) {
    partial p = {0.0, 0.0f};
    if (op == WT_REDUCE_MAX)
        p.ext = -INFINITY;
    else if (op == WT_REDUCE_MIN)
        p.ext = INFINITY;
    return p;
}

static void partial_merge(wt_reduce_op op, partial *into, partial from) {
    into->sum += from.sum;
    if (op == WT_REDUCE_MAX && takes_max(from.ext, into->ext))
        into->ext = from.ext;
    if (op == WT_REDUCE_MIN && takes_min(from.ext, into->ext))
        into->ext = from.ext;
}

static float partial_result(wt_reduce_op op, partial p, int64_t count) {
    if (op == WT_REDUCE_SUM)
        return (float)p.sum;
    if (op == WT_REDUCE_MEAN)
        return (float)(p.sum / (double)count);
    return p.ext;
}

/* ------------------------------------------------------------- spans */

#define LANES 16 /* independent accumulators: hides add latency, fills a vector */

CPU_MULTIVERSION
static double sum_span(const float *restrict x, int64_t n, int64_t step) {
    double s = 0.0;
    if (step == 1) {
#pragma omp simd reduction(+ : s)
        for (int64_t i = 0; i < n; i++)
            s += (double)x[i];
    } else {
        for (int64_t i = 0; i < n; i++)
            s += (double)x[i * step];
    }
    return s;
}

/* One function for max and min: sign = +1 for max, -1 for min, so that
 * min(x) = -max(-x) and one vectorised loop serves both. */
CPU_MULTIVERSION
static float ext_span(const float *restrict x, int64_t n, int64_t step, float sign, float a) {
    int64_t i = 0;
    if (step == 1 && n >= LANES) {
        float acc[LANES];
        for (int j = 0; j < LANES; j++)
            acc[j] = a * sign;
        for (; i + LANES <= n; i += LANES)
            for (int j = 0; j < LANES; j++) {
                const float v = x[i + j] * sign;
                acc[j] = takes_max(v, acc[j]) ? v : acc[j];
            }
        for (int j = 0; j < LANES; j++)
            a = takes_max(acc[j], a * sign) ? acc[j] * sign : a;
    }
    for (; i < n; i++) {
        const float v = x[i * step] * sign;
        a = takes_max(v, a * sign) ? v * sign : a;
    }
    return a;
}

/* Reduces positions [q0, q1) (row-major over red's shape) of the view at
 * base into acc. */
static void reduce_range(wt_reduce_op op, const float *base, const cpu_layout *red, int64_t q0,
                         int64_t q1, partial *acc) {
    const int last = red->ndim - 1;
    int64_t idx[WT_MAX_DIMS], off = 0, rem = q0;
    for (int d = last; d >= 0; d--) {
        idx[d] = rem % red->shape[d];
        rem /= red->shape[d];
        off += idx[d] * red->strides[d];
    }
    const int64_t inner = red->shape[last], step = red->strides[last];
    const float sign = op == WT_REDUCE_MIN ? -1.0f : 1.0f;
    int64_t left = q1 - q0;
    while (left > 0) {
        int64_t run = inner - idx[last];
        if (run > left)
            run = left;
        if (is_extremum(op))
            acc->ext = ext_span(base + off, run, step, sign, acc->ext);
        else
            acc->sum += sum_span(base + off, run, step);
        left -= run;
        if (left == 0)
            break;
        off -= idx[last] * step;
        idx[last] = 0;
        for (int d = last - 1; d >= 0; d--) {
            off += red->strides[d];
            if (++idx[d] < red->shape[d])
                break;
            off -= red->shape[d] * red->strides[d];
            idx[d] = 0;
        }
    }
}

/* ------------------------------------------------------------- plans */

/* Few outputs, many elements each: threads split each output's range. */
static void reduce_split(wt_context *ctx, wt_reduce_op op, const float *x,
                         const cpu_layout *kept, const cpu_layout *red, int64_t P, int64_t Q,
                         float *out) {
    enum { MAX_CHUNKS = 64 };
    int64_t nchunks = Q / CPU_PARALLEL_MIN;
    if (nchunks > MAX_CHUNKS)
        nchunks = MAX_CHUNKS;
    if (nchunks < 1)
        nchunks = 1;
    for (int64_t p = 0; p < P; p++) {
        const float *base = x + cpu_kept_offset(kept, p);
        partial parts[MAX_CHUNKS];
#pragma omp parallel for num_threads(cpu_threads(ctx)) schedule(static)
        for (int64_t c = 0; c < nchunks; c++) {
            parts[c] = partial_init(op);
            reduce_range(op, base, red, Q * c / nchunks, Q * (c + 1) / nchunks, &parts[c]);
        }
        /* Merged in chunk order: the result does not depend on threads. */
        partial acc = partial_init(op);
        for (int64_t c = 0; c < nchunks; c++)
            partial_merge(op, &acc, parts[c]);
        out[p] = partial_result(op, acc, Q);
    }
}

/* Output p of reduce_rows. */
static void reduce_one(wt_reduce_op op, const float *x, const cpu_layout *kept, const cpu_layout *red,
                       int64_t Q, int64_t p, float *out) {
    partial acc = partial_init(op);
    reduce_range(op, x + cpu_kept_offset(kept, p), red, 0, Q, &acc);
    out[p] = partial_result(op, acc, Q);
}

/* Many outputs: threads split the outputs. */
static void reduce_rows(wt_context *ctx, wt_reduce_op op, const float *x, const cpu_layout *kept,
                        const cpu_layout *red, int64_t P, int64_t Q, float *out) {
    if (P == 1 || P * Q <= CPU_PARALLEL_MIN) {
        /* Inline: no parallel region for a small reduction. */
        for (int64_t p = 0; p < P; p++)
            reduce_one(op, x, kept, red, Q, p, out);
        return;
    }
#pragma omp parallel for num_threads(cpu_threads(ctx)) schedule(static)
    for (int64_t p = 0; p < P; p++)
        reduce_one(op, x, kept, red, Q, p, out);
}

/* Outputs per column task: its double accumulators stay in L1. */
#define COL_BLOCK 512

CPU_MULTIVERSION
static void col_accumulate(wt_reduce_op op, const float *restrict row, int64_t n,
                           double *restrict sum, float *restrict ext) {
    if (op == WT_REDUCE_SUM || op == WT_REDUCE_MEAN) {
#pragma omp simd
        for (int64_t j = 0; j < n; j++)
            sum[j] += (double)row[j];
    } else if (op == WT_REDUCE_MAX) {
#pragma omp simd
        for (int64_t j = 0; j < n; j++)
            ext[j] = takes_max(row[j], ext[j]) ? row[j] : ext[j];
    } else {
#pragma omp simd
        for (int64_t j = 0; j < n; j++)
            ext[j] = takes_min(row[j], ext[j]) ? row[j] : ext[j];
    }
}

/* The kept innermost axis is contiguous in x (length L): each task owns a
 * block of up to COL_BLOCK neighbouring outputs and adds whole rows in. */
static void reduce_columns(wt_context *ctx, wt_reduce_op op, const float *x,
                           const cpu_layout *kept, const cpu_layout *red, int64_t P, int64_t Q,
                           float *out) {
    const int64_t L = kept->shape[kept->ndim - 1];
    const int64_t blocks_per_row = (L + COL_BLOCK - 1) / COL_BLOCK;
    const int64_t ntasks = (P / L) * blocks_per_row;
    const bool parallel = ntasks > 1 && P * Q > CPU_PARALLEL_MIN;
    /* The outer kept axes alone (the innermost is covered by the block). */
    cpu_layout outer = *kept;
    outer.shape[outer.ndim - 1] = 1;
#pragma omp parallel for num_threads(cpu_threads(ctx)) if (parallel) schedule(static)
    for (int64_t t = 0; t < ntasks; t++) {
        const int64_t orow = t / blocks_per_row;
        const int64_t j0 = (t % blocks_per_row) * COL_BLOCK;
        const int64_t n = L - j0 < COL_BLOCK ? L - j0 : COL_BLOCK;
        const float *base = x + cpu_kept_offset(&outer, orow) + j0;
        double sum[COL_BLOCK];
        float ext[COL_BLOCK];
        const partial init = partial_init(op);
        for (int64_t j = 0; j < n; j++) {
            sum[j] = 0.0;
            ext[j] = init.ext;
        }
        /* Walk every reduced position; each is one row of n floats. */
        int64_t idx[WT_MAX_DIMS] = {0}, off = 0;
        for (int64_t q = 0; q < Q; q++) {
            col_accumulate(op, base + off, n, sum, ext);
            for (int d = red->ndim - 1; d >= 0; d--) {
                off += red->strides[d];
                if (++idx[d] < red->shape[d])
                    break;
                off -= red->shape[d] * red->strides[d];
                idx[d] = 0;
            }
        }
        float *o = out + orow * L + j0;
        for (int64_t j = 0; j < n; j++) {
            const partial pj = {sum[j], ext[j]};
            o[j] = partial_result(op, pj, Q);
        }
    }
}

wt_status cpu_reduce(wt_context *ctx, const wt_reduce_args *r, const wt_tensor *x, int nreduced,
                     wt_tensor *out) {
    const wt_reduce_op op = r->op;
    if ((unsigned)op >= WT_REDUCE_COUNT)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "cpu: unknown reduction %d", (int)op);
    if (nreduced < 0 || out->ndim + nreduced != x->ndim)
        return wt_fail(WT_ERR_INVALID_ARGUMENT,
                       "cpu: reduction of %d axes from %d dims into %d dims", nreduced, x->ndim,
                       out->ndim);
    /* The planned kernels below serve the four classic reductions of f32;
     * every other row of the table runs through reduce_table.c. */
    if (op > WT_REDUCE_MIN || x->dtype != WT_F32 || r->shift)
        return cpu_reduce_table(ctx, r, x, nreduced, out);
    wt_status st = cpu_check_f32("reduction", x);
    if (st != WT_OK || (st = cpu_check_f32("reduction", out)) != WT_OK)
        return st;
    cpu_layout kept, red;
    cpu_reduce_layouts(x, out, nreduced, &kept, &red);

    const int64_t P = cpu_layout_numel(&kept), Q = cpu_layout_numel(&red);
    float *o = cpu_data(out);
    if (P == 0)
        return WT_OK;
    if (Q == 0) {
        if (is_extremum(op))
            return wt_fail(WT_ERR_SHAPE, "cpu: max/min over zero elements");
        return cpu_fill(ctx, out, op == WT_REDUCE_SUM ? 0.0f : NAN);
    }
    const float *xd = cpu_data(x);
    const int nthreads = cpu_threads(ctx);
    const int64_t L = kept.shape[kept.ndim - 1];
    const bool kept_inner_contiguous = P > 1 && kept.strides[kept.ndim - 1] == 1 && L >= 16;
    if (kept_inner_contiguous && red.strides[red.ndim - 1] != 1)
        reduce_columns(ctx, op, xd, &kept, &red, P, Q, o);
    else if (P < 2 * nthreads && Q >= 2 * CPU_PARALLEL_MIN && nthreads > 1)
        reduce_split(ctx, op, xd, &kept, &red, P, Q, o);
    else
        reduce_rows(ctx, op, xd, &kept, &red, P, Q, o);
    return WT_OK;
}
