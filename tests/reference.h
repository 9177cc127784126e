/* Float64 reference implementations, written for clarity, not speed. They
 * know NumPy's rules (broadcasting, matmul's 1-D promotion, reductions) on
 * their own, so that they check the library's shape inference too. */
#ifndef WT_TEST_REFERENCE_H
#define WT_TEST_REFERENCE_H

#include "input_spec.h"

typedef enum ref_reduce_op { REF_SUM, REF_MEAN, REF_MAX, REF_MIN } ref_reduce_op;

/* What a reference computed: the expected shape and values, and for
 * accumulating ops (matmul, sum, mean) the sum of |terms| of each output
 * and the number of terms, which set the error allowed. */
typedef struct ref_result {
    int ndim;
    int64_t shape[WT_MAX_DIMS];
    int64_t numel;
    double *value;
    double *abs_terms; /* NULL for elementwise results */
    int64_t terms;     /* terms per output (K) */
} ref_result;

void ref_free(ref_result *r);

/* Each returns false with a message in err when the shapes do not fit
 * (NumPy would raise): the library must then fail too. */
bool ref_unary(double (*fn)(double), const host_tensor *x, ref_result *out);
bool ref_binary(double (*fn)(double, double), const host_tensor *a, const host_tensor *b,
                ref_result *out, char *err, size_t err_size);
bool ref_matmul(const host_tensor *a, const host_tensor *b, ref_result *out, char *err,
                size_t err_size);
/* naxes 0: all axes. Empty max/min is an error (as in the library). */
bool ref_reduce(ref_reduce_op op, const host_tensor *x, int naxes, const int *axes,
                bool keepdims, ref_result *out, char *err, size_t err_size);
/* Row-wise ops. softmax along axis (a 0-d x is one row of one element);
 * layernorm and rmsnorm over the last axis (x at least 1-d), with optional
 * [C] weight and bias (NULL: 1 and 0). abs_terms holds each output's scale
 * of rounding: the magnitudes that enter it, so that cancellation is
 * allowed for. */
bool ref_softmax(const host_tensor *x, int axis, ref_result *out, char *err, size_t err_size);
bool ref_norm(bool rms, const host_tensor *x, const host_tensor *weight, const host_tensor *bias,
              double eps, ref_result *out, char *err, size_t err_size);
/* The identity with x's shape (for views and copies). */
bool ref_identity(const host_tensor *x, ref_result *out);

#endif /* WT_TEST_REFERENCE_H */
