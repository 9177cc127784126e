/* Shape classes of the conformance suite, per op kind. Inputs are written
 * in the notation of input_spec.h. */
#ifndef WT_TEST_CONFORMANCE_H
#define WT_TEST_CONFORMANCE_H

#include <stdbool.h>

/* Elements in a "big" case: more than 65,535 workgroups of 256 threads. */
#define BIG "17000003"

typedef struct unary_case {
    const char *cls, *x;
    bool big;         /* run only for ops flagged big */
    bool heavy;       /* a million elements or more: see op_runs_heavy_cases */
    const char *only; /* run only for this op (NULL: all of the kind) */
} unary_case;

typedef struct binary_case {
    const char *cls, *a, *b;
    bool big;
    bool heavy;
} binary_case;

typedef struct reduce_case {
    const char *cls, *x;
    int naxes;
    int axes[8];
    bool keepdims;
    bool big;
    float lo, hi; /* input range override (0, 0: the op's) */
} reduce_case;

/* View cases: the last view step of x names the op tested (transpose,
 * permute, slice, expand, reshape). */
typedef struct view_case {
    const char *cls, *x;
} view_case;

/* softmax, layernorm, rmsnorm. w and b: weight and bias inputs (NULL: none;
 * softmax ignores them). */
typedef struct rowwise_case {
    const char *cls, *x, *w, *b;
    int axis;         /* softmax only */
    const char *only; /* run only for this op (NULL: all three) */
    float lo, hi;     /* input range override (0, 0: the op's) */
} rowwise_case;

extern const unary_case g_unary_cases[];
extern const int g_n_unary_cases;
extern const binary_case g_binary_cases[];
extern const int g_n_binary_cases;
extern const binary_case g_matmul_cases[];
extern const int g_n_matmul_cases;
extern const reduce_case g_reduce_cases[];
extern const int g_n_reduce_cases;
extern const rowwise_case g_rowwise_cases[];
extern const int g_n_rowwise_cases;
extern const view_case g_view_cases[];
extern const int g_n_view_cases;

#endif /* WT_TEST_CONFORMANCE_H */
