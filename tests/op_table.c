#include "op_table.h"

#include <math.h>

static double r_neg(double x) { return -x; }
static double r_exp(double x) { return exp(x); }
static double r_log(double x) { return log(x); }
static double r_sqrt(double x) { return sqrt(x); }
static double r_relu(double x) { return x > 0 || isnan(x) ? x : 0.0; } /* NaN stays NaN (PyTorch) */
static double r_sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }
static double r_tanh(double x) { return tanh(x); }
static double r_add(double a, double b) { return a + b; }
static double r_sub(double a, double b) { return a - b; }
static double r_mul(double a, double b) { return a * b; }
static double r_div(double a, double b) { return a / b; }

/* Edges that naive kernels get wrong: huge and tiny magnitudes, values
 * where a formula overflows in an intermediate (tanh via exp(2x),
 * sigmoid via exp(-x)), exact points (log 1, sqrt 4). Kept inside the
 * domains WGSL defines, since the GPU backends follow WGSL's accuracy. */
static const float s_neg[] = {1e30f, -1e-30f, 3.5f, -0.0f, 0.0f, 1.0f, NAN, INFINITY};
static const float s_exp[] = {0.0f, -100.0f, -20.0f, 20.0f, 1.0f, -1.0f, 1e-6f, NAN, INFINITY, -INFINITY};
static const float s_log[] = {1.0f, 2.0f, 1e-30f, 1e30f, 0.5f, 3.4e38f, NAN, INFINITY, 0.0f, -1.0f};
static const float s_sqrt[] = {0.0f, 1.0f, 4.0f, 1e-30f, 1e30f, 2.0f, NAN, INFINITY, -1.0f};
static const float s_relu[] = {-1e30f, 1e30f, -1e-30f, 1e-30f, 0.0f, -3.0f, NAN, INFINITY, -INFINITY};
static const float s_sigmoid[] = {0.0f, -100.0f, 100.0f, -20.0f, 20.0f, 1e-6f, NAN, INFINITY, -INFINITY};
static const float s_tanh[] = {0.0f, -100.0f, 100.0f, 1e-4f, -20.0f, 20.0f, 0.5f, NAN, INFINITY, -INFINITY};

#define SPECIAL(a) a, (int)(sizeof(a) / sizeof((a)[0]))

#define UNARY(nm, fn, tolc, lo_, hi_, sp, big_) \
    {.name = #nm, .kind = OP_UNARY, .tol = tolc, .unary = fn, .ref1 = r_##nm, .lo = lo_, \
     .hi = hi_, .special = SPECIAL(sp), .big = big_}
#define BINARY(nm, fn, tolc, lo_, hi_, lo2_, hi2_, big_) \
    {.name = #nm, .kind = OP_BINARY, .tol = tolc, .binary = fn, .ref2 = r_##nm, .lo = lo_, \
     .hi = hi_, .lo2 = lo2_, .hi2 = hi2_, .big = big_}
#define REDUCE(nm, fn, rop, tolc, big_) \
    {.name = #nm, .kind = OP_REDUCE, .tol = tolc, .reduce = fn, .ref_reduce = rop, .lo = -1.0f, \
     .hi = 1.0f, .big = big_}
#define VIEW(nm, vk) {.name = #nm, .kind = OP_VIEW, .tol = TOL_EXACT, .view = vk, .lo = -1, .hi = 1}

const op_entry g_ops[] = {
    BINARY(add, wt_add, TOL_ELEMENTWISE, -1, 1, -1, 1, true),
    BINARY(sub, wt_sub, TOL_ELEMENTWISE, -1, 1, -1, 1, false),
    BINARY(mul, wt_mul, TOL_ELEMENTWISE, -2, 2, -2, 2, false),
    /* Denominators kept away from 0 so the quotient stays moderate. */
    BINARY(div, wt_div, TOL_ELEMENTWISE, -2, 2, 0.25f, 4, false),

    UNARY(neg, wt_neg, TOL_EXACT, -4, 4, s_neg, false),
    UNARY(exp, wt_exp, TOL_TRANSCENDENTAL, -10, 10, s_exp, true),
    UNARY(log, wt_log, TOL_TRANSCENDENTAL, 1e-3f, 1e3f, s_log, false),
    UNARY(sqrt, wt_sqrt, TOL_TRANSCENDENTAL, 1e-3f, 1e3f, s_sqrt, false),
    UNARY(relu, wt_relu, TOL_EXACT, -4, 4, s_relu, false),
    UNARY(sigmoid, wt_sigmoid, TOL_TRANSCENDENTAL, -12, 12, s_sigmoid, false),
    UNARY(tanh, wt_tanh, TOL_TRANSCENDENTAL, -6, 6, s_tanh, false),

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
