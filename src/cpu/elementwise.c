/* CPU elementwise kernels: fill, copy, unary, binary.
 *
 * One driver serves them all. The output is contiguous, so after merging
 * axes the work is a range [0, n) of output positions, cut into blocks.
 * An input that is contiguous too is read in place; any other view is
 * gathered block by block into a small buffer first, so the math itself
 * only ever runs over contiguous spans, where it vectorises. */

/* These kernels never read the floating-point exception flags or errno,
 * so GCC may evaluate both sides of a select (only then do the branch-free
 * selects of vmath.h become vector blends) and use the square root
 * instruction without a libm call for negatives; results are unchanged.
 * Set before the includes so that the inline helpers share the options. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("no-trapping-math", "no-math-errno")
#endif

#include "cpu/cpu.h"
#include "cpu/ew_math.h"

#include <string.h>

/* Elements per block: two gathered operands fit in L1/L2 (2 x 16 KiB). */
#define EW_BLOCK 4096

typedef enum ew_kind { EW_FILL, EW_COPY, EW_OP, EW_WHERE } ew_kind;

/* i32 and bool lanes are read and written through these: the data are
 * gathered as 4-byte floats (plain moves, bit exact), so the int views of
 * the same memory must be allowed to alias them. */
#if defined(__GNUC__)
typedef int32_t ew_i32 __attribute__((may_alias));
typedef uint32_t ew_u32 __attribute__((may_alias));
#else
typedef int32_t ew_i32;
typedef uint32_t ew_u32;
#endif

#define EW_MAX_IN 3

typedef struct ew_job {
    ew_kind kind;
    wt_op op;          /* EW_OP */
    bool i32_lanes;    /* EW_OP: i32 (or bool) lanes, else f32 */
    uint32_t bits;     /* fill: the 32-bit word of every element; where: the scalar a */
    uint32_t params[2];
    int nin;
    const float *in[EW_MAX_IN];
    bool in_contiguous[EW_MAX_IN];
    cpu_layout in_layout[EW_MAX_IN];
    float *out;
    int64_t n;
    /* f16 operands and out (EW_OP, f32 lanes): each block is widened into
     * the scratch rows, computed there and narrowed into out_h. */
    bool f16;
    const uint16_t *in_h[EW_MAX_IN];
    uint16_t *out_h;
} ew_job;

/* The elementwise rows of core/ops.def, generated. Each row becomes two
 * scalar functions, ewf_<name> on f32 lanes and ewi_<name> on i32 lanes
 * (a comparison returns the int 0/1 of a bool), and a case of each lane
 * type's span switch: per dtype rule, a loop writing float or int
 * results, or nothing where the rule has no such lanes. */
#define RET_F32_FLOAT float
#define RET_F32_NUM float
#define RET_F32_ROUND float
#define RET_F32_LOGIC int32_t
#define RET_F32_ARITH float
#define RET_F32_INTDIV float
#define RET_F32_CMP int32_t

#define WT_UNARY(NAME, name, rule, nparams, c_f32, c_i32, wgsl)                                   \
    static inline RET_F32_##rule ewf_##name(float x, float p0, float p1) {                        \
        (void)p0, (void)p1;                                                                        \
        return (RET_F32_##rule)(c_f32);                                                            \
    }                                                                                              \
    static inline int32_t ewi_##name(int32_t x, int32_t p0, int32_t p1) {                         \
        (void)x, (void)p0, (void)p1;                                                               \
        return (int32_t)(c_i32);                                                                   \
    }
#define WT_BINARY(NAME, name, rule, c_f32, c_i32, wgsl)                                           \
    static inline RET_F32_##rule ewf_##name(float a, float b) { return (RET_F32_##rule)(c_f32); } \
    static inline int32_t ewi_##name(int32_t a, int32_t b) {                                      \
        (void)a, (void)b;                                                                          \
        return (int32_t)(c_i32);                                                                   \
    }
#include "core/ops.def"

#define EW_LOOP(OUT, E)                                                                            \
    _Pragma("omp simd") for (int64_t i = 0; i < n; i++) OUT[i] = (E);
#define F32_UNARY_FLOAT(E) EW_LOOP(yf, E)
#define F32_UNARY_NUM(E) EW_LOOP(yf, E)
#define F32_UNARY_ROUND(E) EW_LOOP(yf, E)
#define F32_UNARY_LOGIC(E)
#define I32_UNARY_FLOAT(E)
#define I32_UNARY_NUM(E) EW_LOOP(yi, E)
#define I32_UNARY_ROUND(E)
#define I32_UNARY_LOGIC(E) EW_LOOP(yi, E)
#define F32_BINARY_FLOAT(E) EW_LOOP(yf, E)
#define F32_BINARY_ARITH(E) EW_LOOP(yf, E)
#define F32_BINARY_INTDIV(E) EW_LOOP(yf, E)
#define F32_BINARY_CMP(E) EW_LOOP(yi, E)
#define F32_BINARY_LOGIC(E)
#define I32_BINARY_FLOAT(E)
#define I32_BINARY_ARITH(E) EW_LOOP(yi, E)
#define I32_BINARY_INTDIV(E) EW_LOOP(yi, E)
#define I32_BINARY_CMP(E) EW_LOOP(yi, E)
#define I32_BINARY_LOGIC(E) EW_LOOP(yi, E)

/* y = op(a[, b]) over n f32 lanes; y is float or int by the row's rule. */
CPU_MULTIVERSION
static void span_f32(wt_op op, const float *restrict a, const float *restrict b, const uint32_t prm[2],
                     void *restrict out, int64_t n) {
    float *restrict yf = out;
    ew_i32 *restrict yi = out;
    float p0, p1;
    memcpy(&p0, &prm[0], sizeof p0);
    memcpy(&p1, &prm[1], sizeof p1);
    switch (op) {
#define WT_UNARY(NAME, name, rule, nparams, c_f32, c_i32, wgsl)                                   \
    case WT_OP_##NAME:                                                                             \
        F32_UNARY_##rule(ewf_##name(a[i], p0, p1)) break;
#define WT_BINARY(NAME, name, rule, c_f32, c_i32, wgsl)                                           \
    case WT_OP_##NAME:                                                                             \
        F32_BINARY_##rule(ewf_##name(a[i], b[i])) break;
#define WT_KERNEL(NAME, ...) case WT_OP_##NAME:
#include "core/ops.def"
    case WT_OP_COUNT:
        break;
    }
}

/* The same over i32 lanes (bools are i32 lanes of 0/1). */
CPU_MULTIVERSION
static void span_i32(wt_op op, const ew_i32 *restrict a, const ew_i32 *restrict b, const uint32_t prm[2],
                     void *restrict out, int64_t n) {
    ew_i32 *restrict yi = out;
    const int32_t p0 = (int32_t)prm[0], p1 = (int32_t)prm[1];
    switch (op) {
#define WT_UNARY(NAME, name, rule, nparams, c_f32, c_i32, wgsl)                                   \
    case WT_OP_##NAME:                                                                             \
        I32_UNARY_##rule(ewi_##name(a[i], p0, p1)) break;
#define WT_BINARY(NAME, name, rule, c_f32, c_i32, wgsl)                                           \
    case WT_OP_##NAME:                                                                             \
        I32_BINARY_##rule(ewi_##name(a[i], b[i])) break;
#define WT_KERNEL(NAME, ...) case WT_OP_##NAME:
#include "core/ops.def"
    case WT_OP_COUNT:
        break;
    }
}

/* y = mask ? a : b on 32-bit words; a NULL: the word a_bits. */
CPU_MULTIVERSION
static void span_where(const ew_u32 *restrict m, const ew_u32 *restrict a, uint32_t a_bits,
                       const ew_u32 *restrict b, ew_u32 *restrict y, int64_t n) {
    if (a) {
#pragma omp simd
        for (int64_t i = 0; i < n; i++)
            y[i] = m[i] ? a[i] : b[i];
    } else {
#pragma omp simd
        for (int64_t i = 0; i < n; i++)
            y[i] = m[i] ? a_bits : b[i];
    }
}

CPU_MULTIVERSION
static void fill_span(uint32_t bits, ew_u32 *restrict y, int64_t n) {
#pragma omp simd
    for (int64_t i = 0; i < n; i++)
        y[i] = bits;
}

/* The op of job on n gathered lanes src[], into y. */
static void compute_span(const ew_job *job, const float *const *src, float *y, int64_t n) {
    if (job->kind == EW_WHERE)
        span_where((const ew_u32 *)src[0], (const ew_u32 *)src[1], job->bits,
                   (const ew_u32 *)src[2], (ew_u32 *)y, n);
    else if (job->i32_lanes)
        span_i32(job->op, (const ew_i32 *)src[0], (const ew_i32 *)src[1], job->params, y, n);
    else
        span_f32(job->op, src[0], src[1], job->params, y, n);
}

/* A block of f16 operands: widened to f32 (F16C where the processor has
 * it), the f32 span, then rounded to nearest even into out: the bits of
 * the path through f32 casts, without its three full passes. */
static void run_block_f16(const ew_job *job, int64_t start, int64_t len, float (*scratch)[EW_BLOCK]) {
    for (int k = 0; k < job->nin; k++) {
        if (!job->in_h[k]) /* a binary op's scalar b */
            fill_span(job->params[1], (ew_u32 *)scratch[k], len);
        else if (job->in_contiguous[k])
            cpu_cast_run(WT_F16, WT_F32, job->in_h[k] + start, 1, scratch[k], len);
        else
            cpu_gather_f16(job->in_h[k], &job->in_layout[k], start, len, scratch[k]);
    }
    float *y = scratch[EW_MAX_IN - 1];
    span_f32(job->op, scratch[0], scratch[1], job->params, y, len);
    cpu_cast_run(WT_F32, WT_F16, y, 1, job->out_h + start, len);
}

static void run_block(const ew_job *job, int64_t start, int64_t len,
                      float (*scratch)[EW_BLOCK]) {
    if (job->f16) {
        run_block_f16(job, start, len, scratch);
        return;
    }
    float *y = job->out + start;
    if (job->kind == EW_FILL) {
        fill_span(job->bits, (ew_u32 *)(void *)y, len);
        return;
    }
    if (job->kind == EW_COPY) {
        if (job->in_contiguous[0])
            memcpy(y, job->in[0] + start, (size_t)len * sizeof *y);
        else
            cpu_gather(job->in[0], &job->in_layout[0], start, len, y);
        return;
    }
    const float *src[EW_MAX_IN] = {NULL, NULL, NULL};
    for (int k = 0; k < job->nin; k++) {
        if (!job->in[k]) {
            /* where's scalar a is read by its span; a binary op's scalar b
             * is spread over a scratch row. */
            if (job->kind == EW_OP) {
                fill_span(job->params[1], (ew_u32 *)scratch[k], len);
                src[k] = scratch[k];
            }
        } else if (job->in_contiguous[k]) {
            src[k] = job->in[k] + start;
        } else {
            cpu_gather(job->in[k], &job->in_layout[k], start, len, scratch[k]);
            src[k] = scratch[k];
        }
    }
    compute_span(job, src, y, len);
}

/* Tiles of the transposed path: EW_TILE x EW_TILE floats, one scratch. */
#define EW_TILE 64
_Static_assert(EW_TILE * EW_TILE <= EW_BLOCK, "a tile fits one scratch buffer");

/* An input read across its rows (unit stride on the second-last axis, not
 * the last: a transposed view) would touch one cache line and one page per
 * element in run order. Square tiles read it in contiguous runs instead. */
static bool wants_tiles(const ew_job *job) {
    if (job->kind == EW_FILL || job->f16 || job->in_layout[0].ndim < 2)
        return false;
    const int last = job->in_layout[0].ndim - 1;
    for (int k = 0; k < job->nin; k++) {
        const int64_t *st = job->in_layout[k].strides;
        if (job->in[k] && !job->in_contiguous[k] && st[last] != 1 && st[last] != 0 &&
            st[last - 1] == 1)
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
    const float *src[EW_MAX_IN] = {NULL, NULL, NULL};
    for (int k = 0; k < job->nin; k++) {
        if (!job->in[k]) {
            if (job->kind == EW_OP) { /* a binary op's scalar b */
                fill_span(job->params[1], (ew_u32 *)scratch[k], th * tw);
                src[k] = scratch[k];
            }
            continue;
        }
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
        if (job->kind == EW_COPY) {
            memcpy(y, src[0] + r * tw, (size_t)tw * sizeof *y);
            continue;
        }
        const float *row[EW_MAX_IN];
        for (int k = 0; k < EW_MAX_IN; k++)
            row[k] = src[k] ? src[k] + r * tw : NULL;
        compute_span(job, row, y, tw);
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
        _Alignas(64) float scratch[EW_MAX_IN][EW_BLOCK];
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
    if (!parallel) {
        /* Inline: even a parallel region of one thread costs about as much
         * as an add of a thousand floats. */
        _Alignas(64) float scratch[EW_MAX_IN][EW_BLOCK];
        for (int64_t start = 0; start < job->n; start += EW_BLOCK)
            run_block(job, start, job->n - start < EW_BLOCK ? job->n - start : EW_BLOCK, scratch);
        return;
    }
    /* Static schedule: each thread gets one run of neighbouring blocks,
     * which keeps the hardware prefetchers streaming. */
#pragma omp parallel for num_threads(cpu_threads(ctx)) if (parallel) schedule(static)
    for (int64_t blk = 0; blk < nblocks; blk++) {
        _Alignas(64) float scratch[EW_MAX_IN][EW_BLOCK];
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
    int64_t strides[EW_MAX_IN + 1][WT_MAX_DIMS] = {{0}};
    memcpy(shape, out->shape, sizeof(int64_t) * (size_t)ndim);
    memcpy(strides[0], out->strides, sizeof(int64_t) * (size_t)ndim);
    for (int k = 0; k < job->nin; k++)
        if (ins[k]) /* NULL: where's scalar, stride 0 */
            memcpy(strides[k + 1], ins[k]->strides, sizeof(int64_t) * (size_t)ndim);
    wt_coalesce(&ndim, shape, job->nin + 1, strides);
    for (int k = 0; k < job->nin; k++) {
        cpu_layout *l = &job->in_layout[k];
        l->ndim = ndim;
        memcpy(l->shape, shape, sizeof(int64_t) * (size_t)ndim);
        memcpy(l->strides, strides[k + 1], sizeof(int64_t) * (size_t)ndim);
        if (job->f16)
            job->in_h[k] = ins[k] ? (const uint16_t *)ins[k]->storage->host + ins[k]->offset : NULL;
        else
            job->in[k] = ins[k] ? cpu_data(ins[k]) : NULL;
        /* out is contiguous, so a single merged axis of stride 1 means the
         * input matches it element for element. */
        job->in_contiguous[k] = ins[k] && ((ndim == 1 && l->strides[0] == 1) || job->n <= 1);
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

/* The lanes a dtype computes in: f32, or i32 for i32 and bool. */
static bool lanes_i32(wt_dtype d) { return d == WT_I32 || d == WT_BOOL; }

wt_status cpu_elementwise(wt_context *ctx, const wt_ew_args *args) {
    const wt_tensor *x = args->in[0];
    if ((unsigned)args->op >= WT_OP_COUNT || wt_op_table[args->op].arity != args->nin)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "cpu: op %d is not an elementwise op of %d inputs",
                       (int)args->op, args->nin);
    const bool f16 = x->dtype == WT_F16;
    for (int k = 0; k < args->nin; k++)
        if ((args->in[k] && args->in[k]->dtype != x->dtype) ||
            (x->dtype != WT_F32 && !f16 && !lanes_i32(x->dtype)))
            return wt_fail(WT_ERR_UNSUPPORTED, "cpu %s: inputs of dtype %s (f32, f16, i32 and bool lanes only)",
                           wt_op_table[args->op].name, wt_dtype_name(x->dtype));
    if (f16 ? args->out->dtype != WT_F16 : wt_dtype_storage_size(args->out->dtype) != 4)
        return wt_fail(WT_ERR_UNSUPPORTED, "cpu %s: an output of dtype %s", wt_op_table[args->op].name,
                       wt_dtype_name(args->out->dtype));
    ew_job job = {.kind = EW_OP, .op = args->op, .i32_lanes = lanes_i32(x->dtype), .nin = args->nin,
                  .n = args->out->numel, .f16 = f16};
    if (f16)
        job.out_h = (uint16_t *)args->out->storage->host + args->out->offset;
    else
        job.out = cpu_data(args->out);
    memcpy(job.params, args->params, sizeof job.params);
    if (job.n == 0)
        return WT_OK;
    describe_inputs(&job, args->in, args->out);
    run_job(ctx, &job);
    return WT_OK;
}

wt_status cpu_where(wt_context *ctx, const wt_tensor *mask, const wt_tensor *a, const wt_tensor *b,
                    uint32_t a_bits, wt_tensor *out) {
    if (mask->dtype != WT_BOOL || wt_dtype_storage_size(b->dtype) != 4 || (a && a->dtype != b->dtype) ||
        out->dtype != b->dtype)
        return wt_fail(WT_ERR_UNSUPPORTED, "cpu where: a bool mask and 4-byte values of one dtype only");
    ew_job job = {.kind = EW_WHERE, .bits = a_bits, .nin = 3, .out = cpu_data(out), .n = out->numel};
    if (job.n == 0)
        return WT_OK;
    const wt_tensor *ins[3] = {mask, a, b};
    describe_inputs(&job, ins, out);
    run_job(ctx, &job);
    return WT_OK;
}
