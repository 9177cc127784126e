#include "op_table.h"

#include <math.h>
#include <string.h>

/* ---------------------------------------------------- elementwise rows */

/* NumPy's floor_divide and remainder, exactly: a - fmod(a, b) is a
 * multiple of b computed without rounding in double. */
static double ref_floor_divide(double a, double b)
{
    if (b == 0) return a / b; /* NumPy: +-inf, or NaN for 0 // 0 */
    double m = fmod(a, b), q = (a - m) / b;
    return (m != 0 && ((m < 0) != (b < 0))) ? q - 1 : q;
}

static double ref_remainder(double a, double b)
{
    double m = fmod(a, b);
    return (m != 0 && ((m < 0) != (b < 0))) ? m + b : m;
}

/* The ops with scalar parameters called with their row's p0, p1: one
 * form per nparams of the catalogue (src/core/ops.def). */
#define CALL_0(name)
#define CALL_1(name)                                                                                  \
    static inline wt_status callp_##name(const wt_tensor *x, double p0, double p1, wt_tensor **out)   \
    {                                                                                                 \
        (void)p1;                                                                                     \
        return wt_##name(x, p0, out);                                                                 \
    }
#define CALL_2(name)                                                                                  \
    static inline wt_status callp_##name(const wt_tensor *x, double p0, double p1, wt_tensor **out)   \
    {                                                                                                 \
        return wt_##name(x, p0, p1, out);                                                             \
    }
#define WT_UNARY(NAME, name, rule, nparams, ...) CALL_##nparams(name)
#include "core/ops.def"
#undef CALL_0
#undef CALL_1
#undef CALL_2

/* First pass over the reference rows: the functions and special values. */
#define T_UNARY(nm, tolc, lo_, hi_, expr, ...)                                                        \
    static double r_##nm(double x) { return (expr); }                                                 \
    static const float s_##nm[] = {__VA_ARGS__};
#define T_UNARY_P(nm, tolc, lo_, hi_, p0_, p1_, expr, ...)                                            \
    static double r_##nm(double x)                                                                    \
    {                                                                                                 \
        const double p0 = (double)(p0_), p1 = (double)(p1_);                                          \
        (void)p0, (void)p1;                                                                           \
        return (expr);                                                                                \
    }                                                                                                 \
    static wt_status call_##nm(const wt_tensor *x, wt_tensor **out) { return callp_##nm(x, p0_, p1_, out); } \
    static const float s_##nm[] = {__VA_ARGS__};
#define T_UNARY_BOOL(nm, lo_, hi_, expr, ...) T_UNARY(nm, TOL_EXACT, lo_, hi_, expr, __VA_ARGS__)
#define T_BINARY(nm, tolc, lo_, hi_, lo2_, hi2_, expr)                                                \
    static double r_##nm(double a, double b) { return (expr); }                                       \
    static const float s_##nm[1] = {0};
#define T_BINARY_BOOL(nm, lo_, hi_, lo2_, hi2_, expr) T_BINARY(nm, TOL_EXACT, lo_, hi_, lo2_, hi2_, expr)
#include "ew_refs.def"

/* Every elementwise row of the library has its reference: this list names
 * s_<name> for each, so a missing one does not compile. (Only sizeof reads
 * it: unused, or clang warns that it is not needed.) */
static const void *const k_every_row_has_a_reference[] __attribute__((unused)) = {
#define WT_UNARY(NAME, name, ...) s_##name,
#define WT_BINARY(NAME, name, ...) s_##name,
#include "core/ops.def"
};
enum {
    N_LIBRARY_EW_ROWS = 0
#define WT_UNARY(NAME, ...) +1
#define WT_BINARY(NAME, ...) +1
#include "core/ops.def"
    ,
    N_REFERENCE_ROWS = 0
#define T_UNARY(nm, ...) +1
#define T_UNARY_P(nm, ...) +1
#define T_UNARY_BOOL(nm, ...) +1
#define T_BINARY(nm, ...) +1
#define T_BINARY_BOOL(nm, ...) +1
#include "ew_refs.def"
};
_Static_assert((int)N_LIBRARY_EW_ROWS == (int)N_REFERENCE_ROWS, "one reference row per elementwise row of ops.def");
_Static_assert(sizeof k_every_row_has_a_reference / sizeof k_every_row_has_a_reference[0] == N_LIBRARY_EW_ROWS,
               "every elementwise row is referenced");

#define SPECIAL(a) a, (int)(sizeof(a) / sizeof((a)[0]))

#define REDUCE(nm, fn, rop, tolc, big_) \
    {.name = #nm, .kind = OP_REDUCE, .tol = tolc, .reduce = fn, .ref_reduce = rop, .lo = -1.0f, \
     .hi = 1.0f, .big = big_}
#define VIEW(nm, vk) {.name = #nm, .kind = OP_VIEW, .tol = TOL_EXACT, .view = vk, .lo = -1, .hi = 1}

const op_entry g_ops[] = {
/* Second pass: the entries, in the order of ew_refs.def. */
#define T_UNARY(nm, tolc, lo_, hi_, expr, ...)                                                        \
    {.name = #nm, .kind = OP_UNARY, .tol = tolc, .unary = wt_##nm, .ref1 = r_##nm, .lo = lo_, .hi = hi_, \
     .special = SPECIAL(s_##nm)},
#define T_UNARY_P(nm, tolc, lo_, hi_, p0_, p1_, expr, ...)                                            \
    {.name = #nm, .kind = OP_UNARY, .tol = tolc, .unary = call_##nm, .ref1 = r_##nm, .lo = lo_, .hi = hi_, \
     .special = SPECIAL(s_##nm)},
#define T_UNARY_BOOL(nm, lo_, hi_, expr, ...)                                                         \
    {.name = #nm, .kind = OP_UNARY, .tol = TOL_EXACT, .unary = wt_##nm, .ref1 = r_##nm, .lo = lo_,      \
     .hi = hi_, .special = SPECIAL(s_##nm), .out_bool = true},
#define T_BINARY(nm, tolc, lo_, hi_, lo2_, hi2_, expr)                                                \
    {.name = #nm, .kind = OP_BINARY, .tol = tolc, .binary = wt_##nm, .binary_scalar = wt_##nm##_scalar,   \
     .ref2 = r_##nm, .lo = lo_, .hi = hi_, .lo2 = lo2_, .hi2 = hi2_},
#define T_BINARY_BOOL(nm, lo_, hi_, lo2_, hi2_, expr)                                                 \
    {.name = #nm, .kind = OP_BINARY, .tol = TOL_EXACT, .binary = wt_##nm, .binary_scalar = wt_##nm##_scalar, \
     .ref2 = r_##nm, .lo = lo_, .hi = hi_, .lo2 = lo2_, .hi2 = hi2_, .out_bool = true},
#include "ew_refs.def"

    {.name = "matmul", .kind = OP_MATMUL, .tol = TOL_ACCUMULATE, .binary = wt_matmul, .lo = -1,
     .hi = 1, .lo2 = -1, .hi2 = 1},

    REDUCE(sum, wt_sum, REF_SUM, TOL_ACCUMULATE, true),
    REDUCE(mean, wt_mean, REF_MEAN, TOL_ACCUMULATE, false),
    REDUCE(max, wt_max, REF_MAX, TOL_EXACT, false),
    REDUCE(min, wt_min, REF_MIN, TOL_EXACT, false),

    {.name = "softmax", .kind = OP_ROWWISE, .tol = TOL_ACCUMULATE, .row = ROW_SOFTMAX, .lo = -4,
     .hi = 4},
    {.name = "layernorm", .kind = OP_ROWWISE, .tol = TOL_ACCUMULATE, .row = ROW_LAYERNORM,
     .lo = -2, .hi = 2, .lo2 = -1.5f, .hi2 = 1.5f},
    {.name = "rmsnorm", .kind = OP_ROWWISE, .tol = TOL_ACCUMULATE, .row = ROW_RMSNORM, .lo = -2,
     .hi = 2, .lo2 = -1.5f, .hi2 = 1.5f},

    VIEW(transpose, VIEW_TRANSPOSE),
    VIEW(permute, VIEW_PERMUTE),
    VIEW(reshape, VIEW_RESHAPE),
    VIEW(slice, VIEW_SLICE),
    VIEW(expand, VIEW_EXPAND),

    {.name = "copy", .kind = OP_COPY, .tol = TOL_EXACT, .unary = wt_copy, .lo = -1, .hi = 1,
     .big = true},
    {.name = "contiguous", .kind = OP_COPY, .tol = TOL_EXACT, .unary = wt_contiguous, .lo = -1,
     .hi = 1},
};

const int g_nops = (int)(sizeof g_ops / sizeof g_ops[0]);

/* The elementwise ops that ran before the catalogue keep the heavy cases
 * (a million elements and more), add and exp the big one; the rows added
 * with it share their kernels, and skip them to keep the suite short. */
static const char *const k_heavy[] = {"add", "sub", "mul", "div", "neg", "exp", "log", "sqrt", "relu", "sigmoid",
                                      "tanh"};

bool op_runs_heavy_cases(const op_entry *op)
{
    if (op->kind != OP_UNARY && op->kind != OP_BINARY)
        return true;
    for (size_t i = 0; i < sizeof k_heavy / sizeof k_heavy[0]; i++)
        if (!strcmp(op->name, k_heavy[i]))
            return true;
    return false;
}

bool op_runs_big_cases(const op_entry *op)
{
    return op->big || !strcmp(op->name, "add") || !strcmp(op->name, "exp");
}
