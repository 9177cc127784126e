/* The one table of ops the conformance suite runs: each op's entry point,
 * its float64 reference, the inputs it accepts and how close it must be.
 * Adding an op to the library means adding a row here (and, if it needs
 * new shapes, cases in conformance_cases.c). */
#ifndef WT_TEST_OP_TABLE_H
#define WT_TEST_OP_TABLE_H

#include "reference.h"

typedef enum op_kind {
    OP_UNARY, OP_BINARY, OP_MATMUL, OP_REDUCE, OP_VIEW, OP_COPY, OP_ROWWISE
} op_kind;

typedef enum rowwise_op { ROW_SOFTMAX, ROW_LAYERNORM, ROW_RMSNORM } rowwise_op;

typedef enum tol_class {
    TOL_EXACT,          /* bit-exact: views, copies, max/min, neg, relu */
    TOL_ELEMENTWISE,    /* correctly rounded f32 arithmetic: rtol 1e-5, atol 1e-6 */
    TOL_TRANSCENDENTAL, /* a few ulp more: rtol 1.2e-5, atol 1e-6 */
    TOL_ACCUMULATE      /* matmul, sum, mean, row-wise: normalised by the reference's
                           scale of each output (sum |terms|) */
} tol_class;

typedef wt_status (*unary_fn)(const wt_tensor *, wt_tensor **);
typedef wt_status (*binary_fn)(const wt_tensor *, const wt_tensor *, wt_tensor **);
typedef wt_status (*reduce_fn)(const wt_tensor *, int, const int *, bool, wt_tensor **);
typedef wt_status (*scalar_fn)(const wt_tensor *, double, wt_tensor **);

typedef struct op_entry {
    const char *name;
    op_kind kind;
    tol_class tol;
    /* The library's entry point; one of these is set, by kind. */
    unary_fn unary;   /* OP_UNARY, OP_COPY */
    binary_fn binary; /* OP_BINARY, OP_MATMUL */
    scalar_fn binary_scalar; /* OP_BINARY: the op with a scalar b (wt_<op>_scalar) */
    reduce_fn reduce; /* OP_REDUCE */
    view_kind view;   /* OP_VIEW: which view step of a case string it tests */
    rowwise_op row;   /* OP_ROWWISE: which of softmax, layernorm, rmsnorm */
    /* Float64 references. */
    double (*ref1)(double);
    double (*ref2)(double, double);
    ref_reduce_op ref_reduce;
    /* Random inputs are uniform in [lo, hi) (never 0); the second operand
     * of a binary op in [lo2, hi2). */
    float lo, hi, lo2, hi2;
    /* Values worth a case of their own (edges of the function). */
    const float *special;
    int nspecial;
    /* Run the case over 65,535 workgroups for this op (slow on software
     * renderers, so only a few ops; see op_runs_big_cases). */
    bool big;
    /* The result is WT_BOOL (compared as 0/1). */
    bool out_bool;
} op_entry;

extern const op_entry g_ops[];
extern const int g_nops;

/* Whether op runs the cases marked heavy (a million elements or more) and
 * the big ones. */
bool op_runs_heavy_cases(const op_entry *op);
bool op_runs_big_cases(const op_entry *op);

#endif /* WT_TEST_OP_TABLE_H */
