/* bad_input <cpu|vulkan|gles>: every public function x every class of bad
 * argument, generated from two tables:
 *
 *   FUNCTIONS  one row per public function: its name, its signature kind
 *              (how to call it) and the function itself;
 *   the generator gen_case(): for a signature kind and a class of bad
 *              argument, the variants of that class which the kind can
 *              take, each with the codes it must return.
 *
 * Every call must return the expected code, leave a message in
 * wt_last_error(), write NULL to a tensor out-pointer on failure and not
 * crash; a valid call of each function must succeed (so a function that
 * fails everything does not pass). tests/RELIABILITY.md says how to add a
 * row or a kind. The count of cases is printed. */
#include "bad_input.h"
#include "test_util.h"

#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* Where a call must write NULL on failure; never dereferenced. */
#define POISON ((wt_tensor *)(uintptr_t)0x10)

/* ---------------------------------------------------------- signatures */

typedef enum sig {
    SIG_UNARY,       /* (x, out) */
    SIG_BINARY,      /* (a, b, out), NumPy broadcasting */
    SIG_MATMUL,      /* (a, b, out), inner dimensions must agree */
    SIG_REDUCE,      /* (x, naxes, axes, keepdims, out) */
    SIG_AXIS,        /* (x, axis, out) */
    SIG_LAYERNORM,   /* (x, weight, bias, eps, out) */
    SIG_RMSNORM,     /* (x, weight, eps, out) */
    SIG_CAST,        /* (x, dtype, out) */
    SIG_SHAPE_VIEW,  /* (x, ndim, shape, out): reshape, expand */
    SIG_PERMUTE,     /* (x, perm, out) */
    SIG_TRANSPOSE,   /* (x, axis0, axis1, out) */
    SIG_SLICE,       /* (x, axis, start, stop, step, out) */
    SIG_SCALAR,      /* (x, double alpha, out) */
    SIG_CLAMP,       /* (x, double lo, double hi, out) */
    SIG_WHERE,       /* (mask, a, b, out) */
    SIG_MASKED_FILL, /* (x, mask, double value, out) */
    SIG_VAR,         /* (x, naxes, axes, double correction, keepdims, out) */
    SIG_NORM,        /* (x, double ord, naxes, axes, keepdims, out) */
    SIG_DROPOUT,     /* (x, float p, uint64_t seed, out) */
    SIG_CUM,         /* (x, axis, out): cumsum, cumprod */
    SIG_COPY_INTO,   /* (dst, src): in place, dst must not repeat elements */
    SIG_FROM_DATA,   /* (ctx, dtype, ndim, shape, data, out) */
    SIG_CREATE,      /* (ctx, dtype, ndim, shape, out) */
    SIG_FULL,        /* (ctx, dtype, ndim, shape, value, out) */
    SIG_RANDOM,      /* (ctx, dtype, ndim, shape, seed, out) */
    SIG_ARANGE,      /* (ctx, start, stop, step, dtype, out) */
    SIG_LINSPACE,    /* (ctx, start, stop, num, endpoint, dtype, out) */
    SIG_EYE,         /* (ctx, n, m, k, dtype, out) */
    SIG_OP_SUPPORT,  /* (ctx, op, dtype, wt_support *) */
    SIG_READ,        /* (t, dst, bytes) */
    SIG_CTX,         /* (ctx) */
    SIG_CTX_STATS,   /* (ctx, wt_memory_stats *) */
    SIG_CTX_ADAPTER, /* (ctx, wt_adapter_info *) */
    SIG_CTX_SECONDS, /* (ctx, double *) */
    SIG_CTX_CREATE,  /* (opts, ctx out) */
    SIG_LIST,        /* (opts, infos, capacity, count) */
} sig;

typedef void (*any_fn)(void);

typedef struct fn_row {
    const char *name;
    sig sig;
    any_fn fn;
    /* The valid call may also return this (e.g. no GPU timer on the CPU). */
    wt_status valid_alt;
    bool bool_input; /* the valid first input is a WT_BOOL mask (all, any) */
} fn_row;

#define ROW(s, f) {#f, s, (any_fn)f, WT_OK, false}
#define ROW_ALT(s, f, alt) {#f, s, (any_fn)f, alt, false}
#define ROW_BOOL(s, f) {#f, s, (any_fn)f, WT_OK, true}

/* Every public function that returns a wt_status. The getters, retain,
 * release and destroy take NULL silently (checked at the end). */
static const fn_row FUNCTIONS[] = {
    /* The elementwise rows of the catalogue (src/core/ops.def), made from
     * it: a unary op takes (x, out), with one or two scalar parameters
     * (x, p0[, p1], out); a binary op (a, b, out) and its _scalar form. */
#define EW_SIG_0 SIG_UNARY
#define EW_SIG_1 SIG_SCALAR
#define EW_SIG_2 SIG_CLAMP
#define WT_UNARY(NAME, name, rule, nparams, ...) ROW(EW_SIG_##nparams, wt_##name),
#define WT_BINARY(NAME, name, ...) ROW(SIG_BINARY, wt_##name), ROW(SIG_SCALAR, wt_##name##_scalar),
#include "core/ops.def"
#undef EW_SIG_0
#undef EW_SIG_1
#undef EW_SIG_2
    ROW(SIG_UNARY, wt_copy), ROW(SIG_UNARY, wt_contiguous),
    ROW(SIG_WHERE, wt_where), ROW(SIG_MASKED_FILL, wt_masked_fill),
    ROW(SIG_REDUCE, wt_prod), ROW_BOOL(SIG_REDUCE, wt_all), ROW_BOOL(SIG_REDUCE, wt_any),
    ROW(SIG_REDUCE, wt_argmax), ROW(SIG_REDUCE, wt_argmin), ROW(SIG_REDUCE, wt_logsumexp),
    ROW(SIG_VAR, wt_var), ROW(SIG_VAR, wt_std), ROW(SIG_NORM, wt_norm),
    ROW(SIG_CUM, wt_cumsum), ROW(SIG_CUM, wt_cumprod),
    ROW(SIG_CREATE, wt_tensor_ones), ROW(SIG_RANDOM, wt_rand), ROW(SIG_RANDOM, wt_randn),
    ROW(SIG_DROPOUT, wt_dropout), ROW(SIG_ARANGE, wt_arange), ROW(SIG_LINSPACE, wt_linspace),
    ROW(SIG_EYE, wt_eye), ROW(SIG_OP_SUPPORT, wt_op_support),
    /* --- added with the runtime and the nn ops --- */
    ROW(SIG_CTX, wt_context_flush), ROW(SIG_AXIS, wt_log_softmax), ROW(SIG_COPY_INTO, wt_copy_into),
    ROW(SIG_MATMUL, wt_matmul),
    ROW(SIG_REDUCE, wt_sum), ROW(SIG_REDUCE, wt_mean), ROW(SIG_REDUCE, wt_max),
    ROW(SIG_REDUCE, wt_min),
    ROW(SIG_AXIS, wt_softmax),
    ROW(SIG_LAYERNORM, wt_layernorm),
    ROW(SIG_RMSNORM, wt_rmsnorm),
    ROW(SIG_CAST, wt_cast),
    ROW(SIG_SHAPE_VIEW, wt_reshape), ROW(SIG_SHAPE_VIEW, wt_expand),
    ROW(SIG_PERMUTE, wt_permute),
    ROW(SIG_TRANSPOSE, wt_transpose),
    ROW(SIG_SLICE, wt_slice),
    ROW(SIG_FROM_DATA, wt_tensor_from_data),
    ROW(SIG_CREATE, wt_tensor_zeros),
    ROW(SIG_FULL, wt_tensor_full),
    ROW(SIG_READ, wt_tensor_read),
    ROW(SIG_CTX, wt_context_sync), ROW(SIG_CTX, wt_context_trim),
    ROW_ALT(SIG_CTX, wt_context_timer_begin, WT_ERR_UNSUPPORTED),
    ROW_ALT(SIG_CTX_SECONDS, wt_context_timer_end, WT_ERR_UNSUPPORTED),
    ROW(SIG_CTX_STATS, wt_context_memory_stats),
    ROW_ALT(SIG_CTX_ADAPTER, wt_context_adapter_info, WT_ERR_UNSUPPORTED),
    ROW(SIG_CTX_CREATE, wt_context_create),
    ROW(SIG_LIST, wt_list_adapters),
};

/* ------------------------------------------------------ bad arguments */

typedef enum bad {
    BAD_NONE,        /* the valid call */
    BAD_NULL,        /* NULL for a handle, an array or an out-pointer */
    BAD_OTHER_CTX,   /* an input from another context */
    BAD_DTYPE,       /* a dtype that is not one, or one not supported */
    BAD_AXIS,        /* an axis out of range, repeated, or a bad count */
    BAD_SIZE,        /* negative, overflowing or mismatched sizes; bad ndim */
    BAD_BUFFER,      /* a buffer too small */
    BAD_VALUE,       /* another out-of-range scalar (eps, step, capacity) */
    BAD_ALIAS,       /* an output aliasing an input where forbidden: no function
                        of the header takes an output tensor yet */
    BAD_CLASSES
} bad;

static const char *const BAD_NAMES[BAD_CLASSES] = {
    "valid", "NULL", "other context", "dtype", "axis", "size", "buffer", "value", "aliasing"};

/* The arguments of one call; gen_case fills the ones its signature uses. */
typedef struct call_args {
    wt_context *ctx;
    const wt_tensor *t[3];
    bool null_out;
    int ndim;
    const int64_t *shape;
    int naxes;
    const int *axes;
    int axis, axis1;
    int64_t start, stop, step;
    wt_dtype dtype;
    float eps;
    const void *data;
    void *dst;
    size_t bytes;
    int capacity;
    const wt_context_options *opts;
    double scalar, scalar2; /* alpha, lo/hi, value, correction, ord, p, start/stop */
    int64_t n, m2, k2;      /* linspace num; eye n, m, k */
    int op;                 /* wt_op_support */
    wt_status want, want2; /* want2 == WT_OK: only want */
    char what[96];
} call_args;

/* What the generator draws from: tensors of the context under test and of
 * a second (CPU) context. x: [3,5] f32, x16: [3,5] f16, v: [5], m: [5,4],
 * o*: the same shapes in the other context. */
typedef struct env {
    wt_context *ctx, *other;
    wt_tensor *x, *x16, *v, *m, *ox, *ov, *om;
    wt_tensor *xi, *xb; /* [3,5] i32 and bool */
    wt_tensor *dst, *xe; /* [3,5] written by copy_into; v expanded to [3,5] (repeats elements) */
} env;

static const int64_t SHAPE_35[2] = {3, 5}, SHAPE_15[2] = {1, 5}, SHAPE_5[1] = {5};
static const int64_t SHAPE_NEG[2] = {3, -2}, SHAPE_HUGE[2] = {INT64_MAX / 2, 3};
static const int64_t SHAPE_OVERFLOW[3] = {1LL << 32, 1LL << 32, 1LL << 32};
static const int64_t SHAPE_9[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
static const int64_t SHAPE_WRONG[2] = {4, 4}, SHAPE_TWO_INFER[2] = {-1, -1};
static const int AX_0[1] = {0}, AX_BIG[1] = {2}, AX_NEG[1] = {-3}, AX_REP[2] = {1, -1},
                 AX_MIN[1] = {INT_MIN};
static const int PERM_OK[2] = {1, 0}, PERM_REP[2] = {0, 0}, PERM_BIG[2] = {0, 2};
static float g_data[64], g_dst[64];

#define SET(a, code, code2, ...)                                         \
    do {                                                                 \
        (a)->want = (code);                                              \
        (a)->want2 = (code2);                                            \
        snprintf((a)->what, sizeof (a)->what, __VA_ARGS__);              \
    } while (0)

/* Fills variant k of class b for signature s; false when there is no
 * such variant. The base of every case is a valid call. */
static bool g_bool_input; /* the row's valid first input is a mask */

static bool gen_case(sig s, bad b, int k, const env *e, call_args *a)
{
    memset(a, 0, sizeof *a);
    a->ctx = e->ctx;
    a->t[0] = e->x;
    a->t[1] = s == SIG_MATMUL ? e->m : e->v;
    a->t[2] = e->v;
    a->ndim = 2;
    a->shape = SHAPE_35;
    a->naxes = 1;
    a->axes = AX_0;
    a->axis = 1;
    a->axis1 = 0;
    a->start = 0, a->stop = 3, a->step = 1;
    a->dtype = WT_F16;
    a->eps = s == SIG_ARANGE ? 1.0f : 1e-5f;
    a->data = g_data;
    a->dst = g_dst;
    a->bytes = 15 * sizeof(float);
    a->capacity = 0;
    a->scalar = 0.5, a->scalar2 = 2.0;
    a->n = 4, a->m2 = 3, a->k2 = 0;
    a->op = 0;
    if (s == SIG_WHERE) { a->t[0] = e->xb; a->t[1] = e->x; a->t[2] = e->x; }
    if (g_bool_input) a->t[0] = e->xb;
    if (s == SIG_COPY_INTO) { a->t[0] = e->dst; a->t[1] = e->v; }
    if (s == SIG_MASKED_FILL) a->t[1] = e->xb;
    if (s == SIG_VAR) a->scalar = 1.0;
    if (s == SIG_NORM) a->scalar = 2.0;
    if (s == SIG_ARANGE) a->scalar = 0.0, a->scalar2 = 3.0; /* step: a->eps below */
    const wt_status INV = WT_ERR_INVALID_ARGUMENT;
    if (s == SIG_SHAPE_VIEW) a->shape = SHAPE_35; /* reshape to itself, expand to itself */
    if (b == BAD_NONE) {
        if (k > 0) return false;
        SET(a, WT_OK, WT_OK, "valid");
        return true;
    }
    bool tensor_in = s <= SIG_COPY_INTO || s == SIG_READ;
    int ntensors = s == SIG_BINARY || s == SIG_MATMUL || s == SIG_MASKED_FILL || s == SIG_COPY_INTO ? 2
                   : s == SIG_LAYERNORM || s == SIG_WHERE                ? 3
                   : s == SIG_RMSNORM                                    ? 2
                                                                         : 1;
    bool ctx_in = (s >= SIG_FROM_DATA && s <= SIG_OP_SUPPORT) || (s >= SIG_CTX && s <= SIG_CTX_SECONDS);
    bool has_out = s != SIG_READ && s != SIG_CTX && s != SIG_LIST && s != SIG_COPY_INTO;
    switch (b) {
    case BAD_NULL:
        if (tensor_in && k < ntensors) {
            /* weight and bias may be NULL (1 and 0) */
            if ((s == SIG_LAYERNORM || s == SIG_RMSNORM) && k > 0) {
                a->t[k] = NULL;
                SET(a, WT_OK, WT_OK, "optional input %d NULL", k);
                return true;
            }
            a->t[k] = NULL;
            SET(a, INV, WT_OK, "input %d NULL", k);
            return true;
        }
        if (ctx_in && k == 0) {
            a->ctx = NULL;
            SET(a, INV, WT_OK, "ctx NULL");
            return true;
        }
        if (has_out && k == 3) {
            a->null_out = true;
            SET(a, INV, WT_OK, "out NULL");
            return true;
        }
        if (k == 4 && (s == SIG_SHAPE_VIEW || s == SIG_FROM_DATA || s == SIG_CREATE || s == SIG_FULL ||
                       s == SIG_RANDOM)) {
            a->shape = NULL;
            SET(a, INV, WT_OK, "shape NULL");
            return true;
        }
        if (k == 4 && (s == SIG_REDUCE || s == SIG_VAR || s == SIG_NORM)) {
            a->axes = NULL;
            SET(a, INV, WT_OK, "axes NULL with naxes 1");
            return true;
        }
        if (k == 4 && s == SIG_PERMUTE) {
            a->axes = NULL;
            SET(a, INV, WT_OK, "perm NULL");
            return true;
        }
        if (k == 4 && s == SIG_FROM_DATA) return false;
        if (k == 5 && s == SIG_FROM_DATA) {
            a->data = NULL;
            SET(a, INV, WT_OK, "data NULL");
            return true;
        }
        if (k == 4 && s == SIG_READ) {
            a->dst = NULL;
            SET(a, INV, WT_OK, "dst NULL");
            return true;
        }
        if (k == 4 && s == SIG_LIST) {
            a->null_out = true; /* count NULL */
            SET(a, INV, WT_OK, "count NULL");
            return true;
        }
        if (k == 5 && s == SIG_LIST) {
            a->capacity = 2; /* infos NULL with capacity > 0 */
            SET(a, INV, WT_OK, "infos NULL, capacity 2");
            return true;
        }
        return false;
    case BAD_OTHER_CTX:
        if (k >= ntensors || !tensor_in || s == SIG_READ || ntensors < 2) return false;
        a->t[k] = k == 0 ? e->ox : s == SIG_MATMUL ? e->om : e->ov;
        SET(a, INV, WT_OK, "input %d of another context", k);
        return true;
    case BAD_DTYPE: {
        /* A dtype argument that is no dtype. */
        static const int dts[2] = {99, -1};
        bool dtype_arg = s == SIG_CAST || (s >= SIG_FROM_DATA && s <= SIG_OP_SUPPORT);
        if (dtype_arg && k < 2) {
            a->dtype = (wt_dtype)dts[k];
            SET(a, INV, WT_OK, "dtype %d", dts[k]);
            return true;
        }
        /* An input of each other dtype: the expected code is read from the
         * catalogue (wt_op_support) in main, where the row's name is known. */
        if (tensor_in && s != SIG_READ && s != SIG_WHERE && s != SIG_MASKED_FILL && (k == 2 || k == 3)) {
            a->t[0] = k == 2 ? e->xi : e->xb;
            if (s == SIG_BINARY) a->t[1] = a->t[0];
            SET(a, WT_OK, WT_OK, "input of dtype %s", k == 2 ? "i32" : "bool");
            a->op = -2; /* marks "look up the catalogue" */
            return true;
        }
        return false;
    }
    case BAD_AXIS:
        if (s == SIG_REDUCE || s == SIG_VAR || s == SIG_NORM) {
            const int *ax[4] = {AX_BIG, AX_NEG, AX_REP, AX_MIN};
            if (k >= 5) return false;
            if (k == 4) {
                a->naxes = -1;
                SET(a, INV, WT_OK, "naxes -1");
                return true;
            }
            a->axes = ax[k];
            a->naxes = k == 2 ? 2 : 1;
            SET(a, INV, WT_OK, "axes {%d%s}", ax[k][0], k == 2 ? ", -1" : "");
            return true;
        }
        if (s == SIG_AXIS || s == SIG_CUM || s == SIG_SLICE || s == SIG_TRANSPOSE) {
            const int axs[3] = {2, -3, INT_MIN};
            if (k >= (s == SIG_TRANSPOSE ? 6 : 3)) return false;
            if (k < 3) a->axis = axs[k]; else a->axis1 = axs[k - 3];
            SET(a, INV, WT_OK, "axis %d", axs[k % 3]);
            return true;
        }
        if (s == SIG_PERMUTE) {
            if (k >= 2) return false;
            a->axes = k == 0 ? PERM_REP : PERM_BIG;
            SET(a, INV, WT_OK, "perm %s", k == 0 ? "{0,0}" : "{0,2}");
            return true;
        }
        return false;
    case BAD_SIZE:
        if (s == SIG_SHAPE_VIEW || s == SIG_FROM_DATA || s == SIG_CREATE || s == SIG_FULL ||
            s == SIG_RANDOM) {
            switch (k) {
            case 0: a->ndim = -1; SET(a, INV, WT_OK, "ndim -1"); return true;
            case 1: a->ndim = 9; a->shape = SHAPE_9; SET(a, INV, WT_OK, "ndim 9"); return true;
            case 2: a->shape = SHAPE_NEG; SET(a, INV, WT_ERR_SHAPE, "shape [3,-2]"); return true;
            case 3:
                a->shape = SHAPE_HUGE;
                /* a view or creation of 2^64 bytes: no memory, or refused as a shape */
                SET(a, s == SIG_SHAPE_VIEW ? WT_ERR_SHAPE : WT_ERR_OUT_OF_MEMORY,
                    s == SIG_SHAPE_VIEW ? WT_OK : INV, "shape [2^62,3]");
                return true;
            case 4:
                a->ndim = 3;
                a->shape = SHAPE_OVERFLOW;
                SET(a, s == SIG_SHAPE_VIEW ? WT_ERR_SHAPE : INV,
                    s == SIG_SHAPE_VIEW ? INV : WT_ERR_OUT_OF_MEMORY, "shape [2^32,2^32,2^32]");
                return true;
            case 5:
                if (s != SIG_SHAPE_VIEW) return false;
                a->shape = SHAPE_WRONG;
                SET(a, WT_ERR_SHAPE, WT_OK, "shape [4,4] for 15 elements");
                return true;
            case 6:
                if (s != SIG_SHAPE_VIEW) return false;
                a->shape = SHAPE_TWO_INFER;
                SET(a, INV, WT_ERR_SHAPE, "shape [-1,-1]");
                return true;
            }
            return false;
        }
        if (s == SIG_LINSPACE && k == 0) {
            a->n = -1;
            SET(a, INV, WT_OK, "num -1");
            return true;
        }
        if (s == SIG_EYE && k < 2) {
            if (k == 0) a->n = -1; else a->m2 = -1;
            SET(a, INV, WT_OK, "%s -1", k == 0 ? "n" : "m");
            return true;
        }
        if (s == SIG_ARANGE && k == 0) {
            a->scalar2 = 1e300; /* more elements than any memory */
            SET(a, WT_ERR_OUT_OF_MEMORY, INV, "arange(0, 1e300)");
            return true;
        }
        if ((s == SIG_WHERE || s == SIG_MASKED_FILL) && k == 0) {
            a->t[s == SIG_WHERE ? 1 : 0] = e->m; /* [5,4] against a [3,5] mask */
            SET(a, WT_ERR_SHAPE, WT_OK, "[5,4] with a [3,5] mask");
            return true;
        }
        if (s == SIG_COPY_INTO && k == 0) {
            a->t[1] = e->m; /* [5,4] into [3,5] */
            SET(a, WT_ERR_SHAPE, WT_OK, "[5,4] into [3,5]");
            return true;
        }
        if (s == SIG_BINARY && k == 0) {
            a->t[1] = e->m; /* [3,5] with [5,4] */
            SET(a, WT_ERR_SHAPE, WT_OK, "[3,5] with [5,4]");
            return true;
        }
        if (s == SIG_MATMUL && k == 0) {
            a->t[1] = e->x; /* [3,5] @ [3,5] */
            SET(a, WT_ERR_SHAPE, WT_OK, "[3,5] @ [3,5]");
            return true;
        }
        if ((s == SIG_LAYERNORM || s == SIG_RMSNORM) && k < 2) {
            a->t[1 + k] = e->m; /* weight or bias of the wrong size */
            if (s == SIG_RMSNORM && k == 1) return false;
            SET(a, WT_ERR_SHAPE, INV, "%s [5,4]", k == 0 ? "weight" : "bias");
            return true;
        }
        return false;
    case BAD_ALIAS:
        if (s != SIG_COPY_INTO || k > 0) return false;
        a->t[0] = e->xe; /* a destination that repeats elements */
        SET(a, INV, WT_OK, "dst an expanded view");
        return true;
    case BAD_BUFFER:
        if (s != SIG_READ || k >= 2) return false;
        a->bytes = k == 0 ? 15 * sizeof(float) - 1 : 0;
        SET(a, INV, WT_OK, "dst of %zu bytes for 60", a->bytes);
        return true;
    case BAD_VALUE:
        if ((s == SIG_LAYERNORM || s == SIG_RMSNORM) && k < 2) {
            a->eps = k == 0 ? -1.0f : NAN;
            SET(a, INV, WT_OK, "eps %g", (double)a->eps);
            return true;
        }
        if (s == SIG_SLICE && k < 2) {
            a->step = k == 0 ? 0 : -1;
            SET(a, INV, WT_OK, "step %lld", (long long)a->step);
            return true;
        }
        if (s == SIG_DROPOUT && k < 3) {
            const double ps[3] = {-0.1, 1.5, NAN};
            a->scalar = ps[k];
            SET(a, INV, WT_OK, "p %g", ps[k]);
            return true;
        }
        if (s == SIG_ARANGE && k == 0) {
            a->eps = 0; /* step 0 */
            SET(a, INV, WT_OK, "step 0");
            return true;
        }
        if (s == SIG_ARANGE && k == 1) {
            a->scalar = NAN;
            SET(a, INV, WT_OK, "start NaN");
            return true;
        }
        if (s == SIG_OP_SUPPORT && k < 2) {
            a->op = k == 0 ? -1 : 1 << 20;
            SET(a, INV, WT_OK, "op %d", a->op);
            return true;
        }
        if (s == SIG_CLAMP && k == 0) {
            a->scalar = NAN;
            SET(a, WT_OK, INV, "lo NaN");
            return true;
        }
        if (s == SIG_LIST && k == 0) {
            a->capacity = -1;
            SET(a, INV, WT_OK, "capacity -1");
            return true;
        }
        return false;
    default:
        return false;
    }
}

/* Calls row r with a; returns its status and the tensor it made (or
 * POISON if it did not write one). */
typedef wt_status (*f_unary)(const wt_tensor *, wt_tensor **);
typedef wt_status (*f_binary)(const wt_tensor *, const wt_tensor *, wt_tensor **);
typedef wt_status (*f_reduce)(const wt_tensor *, int, const int *, bool, wt_tensor **);
typedef wt_status (*f_axis)(const wt_tensor *, int, wt_tensor **);
typedef wt_status (*f_layernorm)(const wt_tensor *, const wt_tensor *, const wt_tensor *, float, wt_tensor **);
typedef wt_status (*f_rmsnorm)(const wt_tensor *, const wt_tensor *, float, wt_tensor **);
typedef wt_status (*f_cast)(const wt_tensor *, wt_dtype, wt_tensor **);
typedef wt_status (*f_shape_view)(const wt_tensor *, int, const int64_t *, wt_tensor **);
typedef wt_status (*f_permute)(const wt_tensor *, const int *, wt_tensor **);
typedef wt_status (*f_transpose)(const wt_tensor *, int, int, wt_tensor **);
typedef wt_status (*f_slice)(const wt_tensor *, int, int64_t, int64_t, int64_t, wt_tensor **);
typedef wt_status (*f_from_data)(wt_context *, wt_dtype, int, const int64_t *, const void *, wt_tensor **);
typedef wt_status (*f_create)(wt_context *, wt_dtype, int, const int64_t *, wt_tensor **);
typedef wt_status (*f_full)(wt_context *, wt_dtype, int, const int64_t *, double, wt_tensor **);
typedef wt_status (*f_read)(const wt_tensor *, void *, size_t);
typedef wt_status (*f_ctx)(wt_context *);
typedef wt_status (*f_ctx_stats)(const wt_context *, wt_memory_stats *);
typedef wt_status (*f_ctx_adapter)(const wt_context *, wt_adapter_info *);
typedef wt_status (*f_ctx_seconds)(wt_context *, double *);
typedef wt_status (*f_ctx_create)(const wt_context_options *, wt_context **);
typedef wt_status (*f_list)(const wt_context_options *, wt_adapter_info *, int, int *);
typedef wt_status (*f_scalar)(const wt_tensor *, double, wt_tensor **);
typedef wt_status (*f_clamp)(const wt_tensor *, double, double, wt_tensor **);
typedef wt_status (*f_where)(const wt_tensor *, const wt_tensor *, const wt_tensor *, wt_tensor **);
typedef wt_status (*f_masked_fill)(const wt_tensor *, const wt_tensor *, double, wt_tensor **);
typedef wt_status (*f_var)(const wt_tensor *, int, const int *, double, bool, wt_tensor **);
typedef wt_status (*f_norm)(const wt_tensor *, double, int, const int *, bool, wt_tensor **);
typedef wt_status (*f_dropout)(const wt_tensor *, float, uint64_t, wt_tensor **);
typedef wt_status (*f_random)(wt_context *, wt_dtype, int, const int64_t *, uint64_t, wt_tensor **);
typedef wt_status (*f_arange)(wt_context *, double, double, double, wt_dtype, wt_tensor **);
typedef wt_status (*f_linspace)(wt_context *, double, double, int64_t, bool, wt_dtype, wt_tensor **);
typedef wt_status (*f_eye)(wt_context *, int64_t, int64_t, int64_t, wt_dtype, wt_tensor **);
typedef wt_status (*f_op_support)(const wt_context *, int, wt_dtype, wt_support *);

static wt_status call_row(const fn_row *r, const call_args *a, wt_tensor **made, wt_context **made_ctx)
{
    wt_tensor *o = POISON;
    wt_tensor **out = a->null_out ? NULL : &o;
    wt_status st = WT_OK;
    *made_ctx = NULL;
    switch (r->sig) {
    case SIG_UNARY: st = ((f_unary)r->fn)(a->t[0], out); break;
    case SIG_BINARY:
    case SIG_MATMUL: st = ((f_binary)r->fn)(a->t[0], a->t[1], out); break;
    case SIG_REDUCE: st = ((f_reduce)r->fn)(a->t[0], a->naxes, a->axes, true, out); break;
    case SIG_AXIS: st = ((f_axis)r->fn)(a->t[0], a->axis, out); break;
    case SIG_LAYERNORM: st = ((f_layernorm)r->fn)(a->t[0], a->t[1], a->t[2], a->eps, out); break;
    case SIG_RMSNORM: st = ((f_rmsnorm)r->fn)(a->t[0], a->t[1], a->eps, out); break;
    case SIG_CAST: st = ((f_cast)r->fn)(a->t[0], a->dtype, out); break;
    case SIG_SHAPE_VIEW: st = ((f_shape_view)r->fn)(a->t[0], a->ndim, a->shape, out); break;
    case SIG_PERMUTE: st = ((f_permute)r->fn)(a->t[0], a->axes == AX_0 ? PERM_OK : a->axes, out); break;
    case SIG_TRANSPOSE: st = ((f_transpose)r->fn)(a->t[0], a->axis, a->axis1, out); break;
    case SIG_SLICE: st = ((f_slice)r->fn)(a->t[0], a->axis, a->start, a->stop, a->step, out); break;
    case SIG_FROM_DATA:
        st = ((f_from_data)r->fn)(a->ctx, a->dtype == WT_F16 ? WT_F32 : a->dtype, a->ndim, a->shape,
                                  a->data, out);
        break;
    case SIG_CREATE: st = ((f_create)r->fn)(a->ctx, a->dtype == WT_F16 ? WT_F32 : a->dtype, a->ndim, a->shape, out); break;
    case SIG_FULL: st = ((f_full)r->fn)(a->ctx, a->dtype == WT_F16 ? WT_F32 : a->dtype, a->ndim, a->shape, 1.0, out); break;
    case SIG_READ: st = ((f_read)r->fn)(a->t[0], a->dst, a->bytes); break;
    case SIG_SCALAR: st = ((f_scalar)r->fn)(a->t[0], a->scalar, out); break;
    case SIG_CLAMP: st = ((f_clamp)r->fn)(a->t[0], a->scalar, a->scalar2, out); break;
    case SIG_WHERE: st = ((f_where)r->fn)(a->t[0], a->t[1], a->t[2], out); break;
    case SIG_MASKED_FILL: st = ((f_masked_fill)r->fn)(a->t[0], a->t[1], a->scalar, out); break;
    case SIG_VAR: st = ((f_var)r->fn)(a->t[0], a->naxes, a->axes, a->scalar, true, out); break;
    case SIG_NORM: st = ((f_norm)r->fn)(a->t[0], a->scalar, a->naxes, a->axes, true, out); break;
    case SIG_DROPOUT: st = ((f_dropout)r->fn)(a->t[0], (float)a->scalar, 7, out); break;
    case SIG_CUM: st = ((f_axis)r->fn)(a->t[0], a->axis, out); break;
    case SIG_COPY_INTO:
        st = ((wt_status(*)(wt_tensor *, const wt_tensor *))r->fn)((wt_tensor *)a->t[0], a->t[1]);
        break;
    case SIG_RANDOM:
        st = ((f_random)r->fn)(a->ctx, a->dtype == WT_F16 ? WT_F32 : a->dtype, a->ndim, a->shape, 7, out);
        break;
    case SIG_ARANGE:
        st = ((f_arange)r->fn)(a->ctx, a->scalar, a->scalar2, a->eps, a->dtype == WT_F16 ? WT_F32 : a->dtype, out);
        break;
    case SIG_LINSPACE:
        st = ((f_linspace)r->fn)(a->ctx, 0.0, 1.0, a->n, true, a->dtype == WT_F16 ? WT_F32 : a->dtype, out);
        break;
    case SIG_EYE:
        st = ((f_eye)r->fn)(a->ctx, a->n, a->m2, a->k2, a->dtype == WT_F16 ? WT_F32 : a->dtype, out);
        break;
    case SIG_OP_SUPPORT: {
        wt_support sup;
        st = ((f_op_support)r->fn)(a->ctx, a->op < 0 && a->op != -1 ? 0 : a->op, a->dtype,
                                   a->null_out ? NULL : &sup);
        break;
    }
    case SIG_CTX: st = ((f_ctx)r->fn)(a->ctx); break;
    case SIG_CTX_STATS: {
        wt_memory_stats ms;
        st = ((f_ctx_stats)r->fn)(a->ctx, a->null_out ? NULL : &ms);
        break;
    }
    case SIG_CTX_ADAPTER: {
        wt_adapter_info info;
        st = ((f_ctx_adapter)r->fn)(a->ctx, a->null_out ? NULL : &info);
        break;
    }
    case SIG_CTX_SECONDS: {
        double secs = 1;
        st = ((f_ctx_seconds)r->fn)(a->ctx, a->null_out ? NULL : &secs);
        break;
    }
    case SIG_CTX_CREATE: {
        wt_context_options opts;
        wt_context_options_init(&opts);
        opts.backend = WT_BACKEND_CPU;
        wt_context *c = (wt_context *)(uintptr_t)0x10;
        st = ((f_ctx_create)r->fn)(&opts, a->null_out ? NULL : &c);
        if (!a->null_out) *made_ctx = c;
        break;
    }
    case SIG_LIST: {
        int count = 0;
        wt_context_options opts;
        wt_context_options_init(&opts);
        st = ((f_list)r->fn)(&opts, NULL, a->capacity, a->null_out ? NULL : &count);
        break;
    }
    }
    *made = o;
    return st;
}

/* The out-pointer a failing call must clear is a tensor or a context. */
static bool writes_tensor(sig s)
{
    return s <= SIG_EYE && s != SIG_COPY_INTO;
}

int main(int argc, char **argv)
{
    test_backend be = argc > 1 ? test_parse_backend(argv[1]) : TEST_BACKEND_INVALID;
    if (be == TEST_BACKEND_INVALID) {
        fprintf(stderr, "usage: %s cpu|vulkan|gles\n", argv[0]);
        return 2;
    }
    const char *mode = argv[1];
    env e;
    memset(&e, 0, sizeof e);
    if (test_create_context(be, &e.ctx) != WT_OK) return test_summary("bad_input");
    wt_context_options oo;
    wt_context_options_init(&oo);
    oo.backend = WT_BACKEND_CPU;
    if (!CHECK(wt_context_create(&oo, &e.other) == WT_OK, "second context: %s", wt_last_error()))
        return test_summary("bad_input");
    for (int i = 0; i < 64; i++)
        g_data[i] = 0.25f * (float)(i % 9) + 0.5f;
    const int64_t s54[2] = {5, 4};
    wt_tensor *x32 = NULL;
    bool made = wt_tensor_from_data(e.ctx, WT_F32, 2, SHAPE_35, g_data, &e.x) == WT_OK &&
                wt_tensor_from_data(e.ctx, WT_F32, 2, SHAPE_35, g_data, &x32) == WT_OK &&
                wt_cast(x32, WT_F16, &e.x16) == WT_OK &&
                wt_tensor_from_data(e.ctx, WT_F32, 1, SHAPE_5, g_data, &e.v) == WT_OK &&
                wt_tensor_from_data(e.ctx, WT_F32, 2, s54, g_data, &e.m) == WT_OK &&
                wt_tensor_from_data(e.other, WT_F32, 2, SHAPE_35, g_data, &e.ox) == WT_OK &&
                wt_tensor_from_data(e.other, WT_F32, 1, SHAPE_5, g_data, &e.ov) == WT_OK &&
                wt_tensor_from_data(e.other, WT_F32, 2, s54, g_data, &e.om) == WT_OK;
    wt_tensor_release(x32);
    made = made && wt_cast(e.x, WT_I32, &e.xi) == WT_OK && wt_cast(e.x, WT_BOOL, &e.xb) == WT_OK &&
           wt_tensor_zeros(e.ctx, WT_F32, 2, SHAPE_35, &e.dst) == WT_OK &&
           wt_expand(e.v, 2, SHAPE_35, &e.xe) == WT_OK;
    (void)SHAPE_15;
    if (!CHECK(made, "inputs [%s]: %s", mode, wt_last_error())) return test_summary("bad_input");

    int per_class[BAD_CLASSES] = {0};
    int cases = 0;
    const size_t nrows = sizeof FUNCTIONS / sizeof FUNCTIONS[0];
    for (size_t i = 0; i < nrows; i++) {
        const fn_row *r = &FUNCTIONS[i];
        int row_cases = 0;
        for (int b = 0; b < BAD_CLASSES; b++) {
            for (int k = 0; k < 8; k++) {
                call_args a;
                g_bool_input = r->bool_input;
                if (!gen_case(r->sig, (bad)b, k, &e, &a)) continue;
                /* The f16 input instead of x on the valid call too: every op
                 * takes both dtypes. */
                /* The catalogue says what an input of another dtype gets. */
                if (a.op == -2) {
                    int idx = -1;
                    for (int o = 0; o < wt_op_count(); o++)
                        if (!strcmp(wt_op_name(o), r->name + 3)) idx = o;
                    if (idx < 0) continue; /* not in the catalogue */
                    wt_support sup = WT_SUPPORT_NONE;
                    wt_op_support(e.ctx, idx, wt_tensor_dtype(a.t[0]), &sup);
                    if (sup == WT_SUPPORT_NONE) {
                        a.want = WT_ERR_UNSUPPORTED;
                        a.want2 = WT_ERR_INVALID_ARGUMENT;
                    }
                }
                bool data_first = r->sig <= SIG_CUM && r->sig != SIG_WHERE && !r->bool_input;
                if (a.op == -2 && r->sig == SIG_COPY_INTO) continue; /* not a catalogue op */
                for (int f16 = 0; f16 < (b == BAD_NONE && data_first ? 2 : 1); f16++) {
                    if (f16) a.t[0] = e.x16;
                    if (f16 && r->sig == SIG_LAYERNORM) a.t[1] = a.t[2] = NULL;
                    if (f16 && r->sig == SIG_RMSNORM) a.t[1] = NULL;
                    if (f16 && (r->sig == SIG_BINARY)) a.t[1] = e.x16;
                    wt_tensor *o;
                    wt_context *c;
                    wt_status st = call_row(r, &a, &o, &c);
                    bool ok = st == a.want || (a.want2 != WT_OK && st == a.want2) ||
                              (b == BAD_NONE && st == r->valid_alt);
                    CHECK(ok, "%s(%s%s) [%s]: returned %s, expected %s%s%s (%s)", r->name, a.what,
                          f16 ? ", f16" : "", mode, wt_status_string(st), wt_status_string(a.want),
                          a.want2 != WT_OK ? " or " : "", a.want2 != WT_OK ? wt_status_string(a.want2) : "",
                          st != WT_OK ? wt_last_error() : "");
                    if (st != WT_OK)
                        CHECK(wt_last_error()[0] != 0, "%s(%s) [%s]: failed without a message", r->name,
                              a.what, mode);
                    if (writes_tensor(r->sig) && !a.null_out) {
                        if (st != WT_OK)
                            CHECK(o == NULL, "%s(%s) [%s]: *out not NULL on failure", r->name, a.what, mode);
                        else if (o != POISON)
                            wt_tensor_release(o);
                    }
                    if (r->sig == SIG_CTX_CREATE && !a.null_out) {
                        if (st != WT_OK)
                            CHECK(c == NULL, "%s(%s) [%s]: *out not NULL on failure", r->name, a.what, mode);
                        else
                            wt_context_destroy(c);
                    }
                    per_class[b]++;
                    cases++;
                    row_cases++;
                }
            }
        }
        CHECK(row_cases > 1, "%s: no bad-argument case generated", r->name);
    }
    /* Functions without a status take NULL quietly. */
    wt_context_destroy(NULL);
    wt_tensor_release(NULL);
    wt_tensor_retain(NULL);
    wt_context_options_init(NULL);
    CHECK(wt_tensor_ndim(NULL) == 0 && wt_tensor_shape(NULL) == NULL && wt_tensor_strides(NULL) == NULL &&
              wt_tensor_offset(NULL) == 0 && wt_tensor_numel(NULL) == 0 &&
              !wt_tensor_is_contiguous(NULL) && wt_tensor_context(NULL) == NULL &&
              wt_context_backend(NULL) == WT_BACKEND_AUTO && wt_dtype_size((wt_dtype)99) == 0 &&
              wt_status_string((wt_status)-99) != NULL,
          "getters on NULL [%s]", mode);
    cases += 14;

    /* The functions of the slot rows, then every public function of the
     * headers must have a row somewhere. */
    int functions = (int)nrows;
    wt_context_options copts;
    test_backend_options(be, &copts);
    bad_input_slot_rows(e.ctx, e.other, &copts, mode, &functions, &cases, per_class);
    const char *names[sizeof FUNCTIONS / sizeof FUNCTIONS[0]];
    for (size_t i = 0; i < nrows; i++) names[i] = FUNCTIONS[i].name;
    bad_input_check_header(names, nrows);

    printf("bad_input [%s]: %d functions, %d cases:", mode, functions, cases);
    for (int b = 0; b < BAD_CLASSES; b++)
        printf(" %s %d%s", BAD_NAMES[b], per_class[b], b + 1 < BAD_CLASSES ? "," : "");
    printf(" (+14 NULL getters)\n");

    wt_tensor *all[] = {e.x, e.x16, e.v, e.m, e.ox, e.ov, e.om, e.xi, e.xb, e.dst, e.xe};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        wt_tensor_release(all[i]);
    wt_context_destroy(e.other);
    wt_context_destroy(e.ctx);
    char prefix[64];
    snprintf(prefix, sizeof prefix, "bad_input %s", mode);
    return test_summary(prefix);
}
