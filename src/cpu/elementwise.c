/* CPU elementwise kernels: fill, copy, unary, binary.
 *
 * One driver serves them all. The output is contiguous, so after merging
 * axes the work is a range [0, n) of output positions, cut into blocks.
 * An input that is contiguous too is read in place; any other view is
 * gathered block by block into a small buffer first, so the math itself
 * only ever runs over contiguous spans, where it vectorises. */

/* These kernels never read the floating-point exception flags, so GCC may
 * evaluate both sides of a select: only then do the branch-free selects of
 * vmath.h become vector blends (results are unchanged). Set before the
 * includes so that vmath.h's functions share the options and inline. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("no-trapping-math")
#endif

#include "cpu/cpu.h"
#include "cpu/vmath.h"

#include <string.h>
#if defined(__SSE2__)
#include <immintrin.h>
#endif

/* Elements per block: two gathered operands fit in L1/L2 (2 x 16 KiB). */
#define EW_BLOCK 4096

typedef enum ew_kind { EW_FILL, EW_COPY, EW_UNARY, EW_BINARY } ew_kind;

typedef struct ew_job {
    ew_kind kind;
    int op;            /* wt_unary_op or wt_binary_op */
    uint32_t bits;     /* fill: the 32-bit word of every element */
    int nin;
    const float *in[2];
    bool in_contiguous[2];
    cpu_layout in_layout[2];
    float *out;
    int64_t n;
} ew_job;

/* sqrtf may set errno, so without -fno-math-errno GCC keeps it scalar with
 * a libm call for every negative input; the SSE instruction (x86-64's
 * baseline) gives the same results, NaN for negatives, four at a time. */
static inline void sqrt_span(const float *restrict x, float *restrict y, int64_t n) {
    int64_t i = 0;
#if defined(__SSE2__)
    for (; i + 4 <= n; i += 4)
        _mm_storeu_ps(y + i, _mm_sqrt_ps(_mm_loadu_ps(x + i)));
#endif
    for (; i < n; i++)
        y[i] = x[i] < 0.0f ? NAN : __builtin_sqrtf(x[i]);
}

CPU_MULTIVERSION
static void unary_span(wt_unary_op op, const float *restrict x, float *restrict y, int64_t n) {
    switch (op) {
    case WT_UNARY_NEG:
#pragma omp simd
        for (int64_t i = 0; i < n; i++)
            y[i] = -x[i];
        break;
    case WT_UNARY_EXP:
#pragma omp simd
        for (int64_t i = 0; i < n; i++)
            y[i] = vm_expf(x[i]);
        break;
    case WT_UNARY_LOG:
#pragma omp simd
        for (int64_t i = 0; i < n; i++)
            y[i] = vm_logf(x[i]);
        break;
    case WT_UNARY_SQRT:
        sqrt_span(x, y, n);
        break;
    case WT_UNARY_RELU:
        /* NaN stays NaN (NumPy's maximum(x, 0) propagates it). */
#pragma omp simd
        for (int64_t i = 0; i < n; i++)
            y[i] = x[i] < 0.0f ? 0.0f : x[i];
        break;
    case WT_UNARY_SIGMOID:
#pragma omp simd
        for (int64_t i = 0; i < n; i++)
            y[i] = vm_sigmoidf(x[i]);
        break;
    case WT_UNARY_TANH:
#pragma omp simd
        for (int64_t i = 0; i < n; i++)
            y[i] = vm_tanhf(x[i]);
        break;
    default:
        break; /* rejected before any work starts */
    }
}

CPU_MULTIVERSION
static void binary_span(wt_binary_op op, const float *restrict a, const float *restrict b,
                        float *restrict y, int64_t n) {
    switch (op) {
    case WT_BINARY_ADD:
#pragma omp simd
        for (int64_t i = 0; i < n; i++)
            y[i] = a[i] + b[i];
        break;
    case WT_BINARY_SUB:
#pragma omp simd
        for (int64_t i = 0; i < n; i++)
            y[i] = a[i] - b[i];
        break;
    case WT_BINARY_MUL:
#pragma omp simd
        for (int64_t i = 0; i < n; i++)
            y[i] = a[i] * b[i];
        break;
    case WT_BINARY_DIV:
#pragma omp simd
        for (int64_t i = 0; i < n; i++)
            y[i] = a[i] / b[i];
        break;
    default:
        break;
    }
}

CPU_MULTIVERSION
static void fill_span(uint32_t bits, uint32_t *restrict y, int64_t n) {
#pragma omp simd
    for (int64_t i = 0; i < n; i++)
        y[i] = bits;
}

static void run_block(const ew_job *job, int64_t start, int64_t len,
                      float (*scratch)[EW_BLOCK]) {
    float *y = job->out + start;
    if (job->kind == EW_FILL) {
        fill_span(job->bits, (uint32_t *)(void *)y, len);
        return;
    }
    if (job->kind == EW_COPY) {
        if (job->in_contiguous[0])
            memcpy(y, job->in[0] + start, (size_t)len * sizeof *y);
        else
            cpu_gather(job->in[0], &job->in_layout[0], start, len, y);
        return;
    }
    const float *src[2] = {NULL, NULL};
    for (int k = 0; k < job->nin; k++) {
        if (job->in_contiguous[k]) {
            src[k] = job->in[k] + start;
        } else {
            cpu_gather(job->in[k], &job->in_layout[k], start, len, scratch[k]);
            src[k] = scratch[k];
        }
    }
    if (job->kind == EW_UNARY)
        unary_span((wt_unary_op)job->op, src[0], y, len);
    else
        binary_span((wt_binary_op)job->op, src[0], src[1], y, len);
}

/* Tiles of the transposed path: EW_TILE x EW_TILE floats, one scratch. */
#define EW_TILE 64
_Static_assert(EW_TILE * EW_TILE <= EW_BLOCK, "a tile fits one scratch buffer");

/* An input read across its rows (unit stride on the second-last axis, not
 * the last: a transposed view) would touch one cache line and one page per
 * element in run order. Square tiles read it in contiguous runs instead. */
static bool wants_tiles(const ew_job *job) {
    if (job->kind == EW_FILL || job->in_layout[0].ndim < 2)
        return false;
    const int last = job->in_layout[0].ndim - 1;
    for (int k = 0; k < job->nin; k++) {
        const int64_t *st = job->in_layout[k].strides;
        if (!job->in_contiguous[k] && st[last] != 1 && st[last] != 0 && st[last - 1] == 1)
            return true;
    }
    return false;
}

/* One tile [r0, r0 + th) x [c0, c0 + tw) of the last two axes of the
 * outer position `outer`. */
static void run_tile(const ew_job *job, int64_t outer, int64_t r0, int64_t c0, int64_t th,
                     int64_t tw, float (*scratch)[EW_BLOCK]) {
    const cpu_layout *l0 = &job->in_layout[0];
    const int last = l0->ndim - 1;
    const int64_t R = l0->shape[last - 1], C = l0->shape[last];
    const float *src[2] = {NULL, NULL};
    for (int k = 0; k < job->nin; k++) {
        const cpu_layout *l = &job->in_layout[k];
        /* The outer axes' offset of this input, then the tile's corner. */
        int64_t off = 0, rem = outer;
        for (int d = last - 2; d >= 0; d--) {
            off += (rem % l->shape[d]) * l->strides[d];
            rem /= l->shape[d];
        }
        const int64_t sr = l->strides[last - 1], sc = l->strides[last];
        const float *base = job->in[k] + off + r0 * sr + c0 * sc;
        float *restrict t = scratch[k];
        /* Walk the input along its smaller stride; the tile is in L1. */
        if (sr < sc) {
            for (int64_t c = 0; c < tw; c++)
                for (int64_t r = 0; r < th; r++)
                    t[r * tw + c] = base[r * sr + c * sc];
        } else {
            for (int64_t r = 0; r < th; r++)
                for (int64_t c = 0; c < tw; c++)
                    t[r * tw + c] = base[r * sr + c * sc];
        }
        src[k] = t;
    }
    float *y = job->out + outer * R * C + r0 * C + c0;
    for (int64_t r = 0; r < th; r++, y += C) {
        if (job->kind == EW_COPY)
            memcpy(y, src[0] + r * tw, (size_t)tw * sizeof *y);
        else if (job->kind == EW_UNARY)
            unary_span((wt_unary_op)job->op, src[0] + r * tw, y, tw);
        else
            binary_span((wt_binary_op)job->op, src[0] + r * tw, src[1] + r * tw, y, tw);
    }
}

static void run_tiled(wt_context *ctx, const ew_job *job) {
    const cpu_layout *l0 = &job->in_layout[0];
    const int last = l0->ndim - 1;
    const int64_t R = l0->shape[last - 1], C = l0->shape[last];
    const int64_t nouter = job->n / (R * C);
    const int64_t tr = (R + EW_TILE - 1) / EW_TILE, tc = (C + EW_TILE - 1) / EW_TILE;
    const int64_t ntiles = nouter * tr * tc;
    const bool parallel = job->n > CPU_PARALLEL_MIN;
#pragma omp parallel for num_threads(cpu_threads(ctx)) if (parallel) schedule(static)
    for (int64_t t = 0; t < ntiles; t++) {
        _Alignas(64) float scratch[2][EW_BLOCK];
        const int64_t outer = t / (tr * tc), r0 = (t / tc) % tr * EW_TILE,
                      c0 = t % tc * EW_TILE;
        const int64_t th = R - r0 < EW_TILE ? R - r0 : EW_TILE;
        const int64_t tw = C - c0 < EW_TILE ? C - c0 : EW_TILE;
        run_tile(job, outer, r0, c0, th, tw, scratch);
    }
}

static void run_job(wt_context *ctx, const ew_job *job) {
    if (wants_tiles(job)) {
        run_tiled(ctx, job);
        return;
    }
    const int64_t nblocks = (job->n + EW_BLOCK - 1) / EW_BLOCK;
    const bool parallel = job->n > CPU_PARALLEL_MIN;
    /* Static schedule: each thread gets one run of neighbouring blocks,
     * which keeps the hardware prefetchers streaming. */
#pragma omp parallel for num_threads(cpu_threads(ctx)) if (parallel) schedule(static)
    for (int64_t blk = 0; blk < nblocks; blk++) {
        _Alignas(64) float scratch[2][EW_BLOCK];
        const int64_t start = blk * EW_BLOCK;
        const int64_t len = job->n - start < EW_BLOCK ? job->n - start : EW_BLOCK;
        run_block(job, start, len, scratch);
    }
}

/* Fills job's input descriptions: the inputs' axes merged together with
 * out's (one shape for all), and whether each is then a plain array. */
static void describe_inputs(ew_job *job, const wt_tensor *const *ins, const wt_tensor *out) {
    int ndim = out->ndim;
    int64_t shape[WT_MAX_DIMS];
    int64_t strides[3][WT_MAX_DIMS];
    memcpy(shape, out->shape, sizeof(int64_t) * (size_t)ndim);
    memcpy(strides[0], out->strides, sizeof(int64_t) * (size_t)ndim);
    for (int k = 0; k < job->nin; k++)
        memcpy(strides[k + 1], ins[k]->strides, sizeof(int64_t) * (size_t)ndim);
    wt_coalesce(&ndim, shape, job->nin + 1, strides);
    for (int k = 0; k < job->nin; k++) {
        cpu_layout *l = &job->in_layout[k];
        l->ndim = ndim;
        memcpy(l->shape, shape, sizeof(int64_t) * (size_t)ndim);
        memcpy(l->strides, strides[k + 1], sizeof(int64_t) * (size_t)ndim);
        job->in[k] = cpu_data(ins[k]);
        /* out is contiguous, so a single merged axis of stride 1 means the
         * input matches it element for element. */
        job->in_contiguous[k] = (ndim == 1 && l->strides[0] == 1) || job->n <= 1;
    }
}

wt_status cpu_fill_bits(wt_context *ctx, wt_tensor *out, uint32_t bits) {
    if (wt_dtype_storage_size(out->dtype) != 4)
        return wt_fail(WT_ERR_UNSUPPORTED, "cpu: fill of dtype %s (4-byte dtypes only)",
                       wt_dtype_name(out->dtype));
    ew_job job = {.kind = EW_FILL, .bits = bits, .out = cpu_data(out), .n = out->numel};
    run_job(ctx, &job);
    return WT_OK;
}

wt_status cpu_fill(wt_context *ctx, wt_tensor *out, float value) {
    uint32_t bits;
    memcpy(&bits, &value, sizeof bits);
    return cpu_fill_bits(ctx, out, bits);
}

wt_status cpu_copy(wt_context *ctx, const wt_tensor *x, wt_tensor *out) {
    wt_status st = cpu_check_f32("copy", x);
    if (st != WT_OK || (st = cpu_check_f32("copy", out)) != WT_OK)
        return st;
    ew_job job = {.kind = EW_COPY, .nin = 1, .out = cpu_data(out), .n = out->numel};
    if (job.n == 0)
        return WT_OK;
    describe_inputs(&job, &x, out);
    run_job(ctx, &job);
    return WT_OK;
}

wt_status cpu_unary(wt_context *ctx, wt_unary_op op, const wt_tensor *x, wt_tensor *out) {
    if ((unsigned)op >= WT_UNARY_COUNT)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "cpu: unknown unary op %d", (int)op);
    wt_status st = cpu_check_f32("unary op", x);
    if (st != WT_OK || (st = cpu_check_f32("unary op", out)) != WT_OK)
        return st;
    ew_job job = {.kind = EW_UNARY, .op = op, .nin = 1, .out = cpu_data(out), .n = out->numel};
    if (job.n == 0)
        return WT_OK;
    describe_inputs(&job, &x, out);
    run_job(ctx, &job);
    return WT_OK;
}

wt_status cpu_binary(wt_context *ctx, wt_binary_op op, const wt_tensor *a, const wt_tensor *b,
                     wt_tensor *out) {
    if ((unsigned)op >= WT_BINARY_COUNT)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "cpu: unknown binary op %d", (int)op);
    wt_status st = cpu_check_f32("binary op", a);
    if (st != WT_OK || (st = cpu_check_f32("binary op", b)) != WT_OK ||
        (st = cpu_check_f32("binary op", out)) != WT_OK)
        return st;
    ew_job job = {.kind = EW_BINARY, .op = op, .nin = 2, .out = cpu_data(out), .n = out->numel};
    if (job.n == 0)
        return WT_OK;
    const wt_tensor *ins[2] = {a, b};
    describe_inputs(&job, ins, out);
    run_job(ctx, &job);
    return WT_OK;
}
