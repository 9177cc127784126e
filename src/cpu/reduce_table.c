/* CPU reductions for every row of core/reduce_ops.def: the row's map,
 * combine and finish are inlined into one span function per row, so a
 * new row needs no code here. f32 accumulates in double; i32 and bool in
 * 64-bit integers, truncated to 32 bits at the end (for sums and products
 * that equals wrapping at every step). Outputs run in parallel; a few
 * outputs over many elements split their range into chunks merged in a
 * fixed order (the result does not depend on the thread count). */
#include "cpu/cpu.h"

#include <math.h>
#include <stdlib.h>

static inline double fz_c(double s) { return isfinite(s) ? s : 0.0; }

/* NaN wins and then stays: nothing compares greater or less than it. */
static inline double comb_WT_COMBINE_ADD(double a, double b) { return a + b; }
static inline double comb_WT_COMBINE_MUL(double a, double b) { return a * b; }
static inline double comb_WT_COMBINE_MAX(double a, double b) { return b > a || b != b ? b : a; }
static inline double comb_WT_COMBINE_MIN(double a, double b) { return b < a || b != b ? b : a; }

static double combine_f(wt_combine c, double a, double b)
{
    switch (c) {
    case WT_COMBINE_ADD: return comb_WT_COMBINE_ADD(a, b);
    case WT_COMBINE_MUL: return comb_WT_COMBINE_MUL(a, b);
    case WT_COMBINE_MAX: return comb_WT_COMBINE_MAX(a, b);
    case WT_COMBINE_MIN: return comb_WT_COMBINE_MIN(a, b);
    }
    return a;
}

static int64_t combine_i(wt_combine c, int64_t a, int64_t b)
{
    switch (c) {
    case WT_COMBINE_ADD: return (int64_t)((uint64_t)a + (uint64_t)b);
    case WT_COMBINE_MUL: return (int64_t)((uint64_t)a * (uint64_t)b);
    case WT_COMBINE_MAX: return b > a ? b : a;
    case WT_COMBINE_MIN: return b < a ? b : a;
    }
    return a;
}

/* Whether a combine may be reassociated into vector lanes: the norms'
 * sums over contiguous elements (a chain of dependent double adds would
 * bound them by the add's latency; gradient clipping takes one norm per
 * parameter). The other rows keep their order. */
#define LANE_SUMS(ID) (WT_REDUCE_##ID == WT_REDUCE_NORM1 || WT_REDUCE_##ID == WT_REDUCE_NORM2)

/* One span function and one finish per row. */
#define WT_REDUCE_OP(ID, nm, comb, ident, sh, eok, dt, mc, fc, mw, fw)                    \
    CPU_MULTIVERSION                                                                      \
    static double span_##ID(const float *restrict x, int64_t n, int64_t step, double s,   \
                            double a) {                                                   \
        (void)s;                                                                          \
        if (LANE_SUMS(ID) && step == 1) {                                                 \
            double acc = 0.0;                                                             \
            _Pragma("omp simd reduction(+ : acc)")                                        \
            for (int64_t i = 0; i < n; i++) {                                             \
                const double v = (double)x[i];                                            \
                acc += (mc);                                                              \
            }                                                                             \
            return a + acc;                                                               \
        }                                                                                 \
        for (int64_t i = 0; i < n; i++) {                                                 \
            const double v = (double)x[i * step];                                         \
            a = comb_##comb(a, (mc));                                                     \
        }                                                                                 \
        return a;                                                                         \
    }                                                                                     \
    static double finish_##ID(double a, double s, double n) {                             \
        (void)a, (void)s, (void)n;                                                        \
        return (fc);                                                                      \
    }
#include "core/reduce_ops.def"
#undef WT_REDUCE_OP

static double span_f(wt_reduce_op op, const float *x, int64_t n, int64_t step, double s, double a)
{
    switch (op) {
#define WT_REDUCE_OP(ID, ...) case WT_REDUCE_##ID: return span_##ID(x, n, step, s, a);
#include "core/reduce_ops.def"
#undef WT_REDUCE_OP
    case WT_REDUCE_COUNT: break;
    }
    return a;
}

static double finish_f(wt_reduce_op op, double a, double s, double n)
{
    switch (op) {
#define WT_REDUCE_OP(ID, ...) case WT_REDUCE_##ID: return finish_##ID(a, s, n);
#include "core/reduce_ops.def"
#undef WT_REDUCE_OP
    case WT_REDUCE_COUNT: break;
    }
    return a;
}

static int64_t span_i(wt_combine c, const int32_t *x, int64_t n, int64_t step, int64_t a)
{
    for (int64_t i = 0; i < n; i++)
        a = combine_i(c, a, x[i * step]);
    return a;
}

/* The element type's accumulator. */
typedef union acc_t {
    double f;
    int64_t i;
} acc_t;

typedef struct job {
    const wt_reduce_info *info;
    wt_reduce_op op;
    bool integer;
    const void *base; /* x's element at its offset */
    cpu_layout red;
} job;

/* Combines reduced positions [q0, q1) of the output at element offset off. */
static acc_t run_range(const job *j, int64_t off0, int64_t q0, int64_t q1, double s, acc_t a)
{
    const cpu_layout *red = &j->red;
    const int last = red->ndim - 1;
    int64_t idx[WT_MAX_DIMS], off = off0, rem = q0;
    for (int d = last; d >= 0; d--) {
        idx[d] = rem % red->shape[d];
        rem /= red->shape[d];
        off += idx[d] * red->strides[d];
    }
    const int64_t inner = red->shape[last], step = red->strides[last];
    int64_t left = q1 - q0;
    while (left > 0) {
        int64_t run = inner - idx[last];
        if (run > left) run = left;
        if (j->integer)
            a.i = span_i(j->info->combine, (const int32_t *)j->base + off, run, step, a.i);
        else
            a.f = span_f(j->op, (const float *)j->base + off, run, step, s, a.f);
        left -= run;
        if (left == 0) break;
        off -= idx[last] * step;
        idx[last] = 0;
        for (int d = last - 1; d >= 0; d--) {
            off += red->strides[d];
            if (++idx[d] < red->shape[d]) break;
            off -= red->shape[d] * red->strides[d];
            idx[d] = 0;
        }
    }
    return a;
}

static acc_t identity_of(const job *j)
{
    acc_t a;
    const double id = j->info->identity;
    if (!j->integer) {
        a.f = id;
    } else {
        a.i = id == -INFINITY ? INT32_MIN : id == INFINITY ? INT32_MAX : (int64_t)id;
    }
    return a;
}

static acc_t merge(const job *j, acc_t a, acc_t b)
{
    if (j->integer) a.i = combine_i(j->info->combine, a.i, b.i);
    else a.f = combine_f(j->info->combine, a.f, b.f);
    return a;
}

wt_status cpu_reduce_table(wt_context *ctx, const wt_reduce_args *r, const wt_tensor *x,
                           int nreduced, wt_tensor *out)
{
    job j = {.info = wt_reduce_info_of(r->op), .op = r->op};
    if (x->dtype != out->dtype || wt_dtype_storage_size(x->dtype) != 4 || x->dtype == WT_F16)
        return wt_fail(WT_ERR_UNSUPPORTED, "cpu: reduction of dtype %d into %d", (int)x->dtype,
                       (int)out->dtype);
    j.integer = x->dtype != WT_F32;
    j.base = (const char *)x->storage->host + (size_t)x->offset * 4;
    cpu_layout kept;
    cpu_reduce_layouts(x, out, nreduced, &kept, &j.red);
    const int64_t P = cpu_layout_numel(&kept), Q = cpu_layout_numel(&j.red);
    if (P == 0 || Q == 0) return WT_OK; /* the API fills empty reductions */
    const float *shift = r->shift ? cpu_data(r->shift) : NULL;
    float *of = cpu_data(out);
    int32_t *oi = (int32_t *)out->storage->host + out->offset;
    const int nthreads = cpu_threads(ctx);

    /* Few outputs over many elements: chunks of each output's range. */
    enum { MAX_CHUNKS = 64 };
    int64_t nchunks = (P < 2 * nthreads && nthreads > 1) ? Q / CPU_PARALLEL_MIN : 1;
    if (nchunks > MAX_CHUNKS) nchunks = MAX_CHUNKS;
    if (nchunks < 1) nchunks = 1;
    const bool parallel_rows = nchunks == 1 && P > 1 && P * Q > CPU_PARALLEL_MIN;
#pragma omp parallel for num_threads(nthreads) if (parallel_rows) schedule(static)
    for (int64_t p = 0; p < P; p++) {
        const int64_t off = cpu_kept_offset(&kept, p);
        const double s = shift ? (double)shift[p] : 0.0;
        acc_t a = identity_of(&j);
        if (nchunks == 1) {
            a = run_range(&j, off, 0, Q, s, a);
        } else {
            acc_t parts[MAX_CHUNKS];
#pragma omp parallel for num_threads(nthreads) schedule(static)
            for (int64_t c = 0; c < nchunks; c++)
                parts[c] = run_range(&j, off, Q * c / nchunks, Q * (c + 1) / nchunks, s, identity_of(&j));
            for (int64_t c = 0; c < nchunks; c++) a = merge(&j, a, parts[c]);
        }
        if (j.integer) oi[p] = (int32_t)(uint32_t)(uint64_t)a.i;
        else of[p] = (float)finish_f(r->op, a.f, s, r->n);
    }
    return WT_OK;
}
