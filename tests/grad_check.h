/* Shared by the training tests (training.c, training_conv.c): f32 and i32
 * tensors from host data in the test's context, whole reads, and the
 * comparison of a library gradient with a float64 one. */
#ifndef WT_TEST_GRAD_CHECK_H
#define WT_TEST_GRAD_CHECK_H

#include "test_util.h"

#include <math.h>
#include <stdlib.h>

static wt_context *g_ctx;

static inline wt_tensor *make(int ndim, const int64_t *shape, const float *data)
{
    wt_tensor *t = NULL;
    if (wt_tensor_from_data(g_ctx, WT_F32, ndim, shape, data, &t) != WT_OK)
        CHECK(false, "from_data: %s", wt_last_error());
    return t;
}

static inline wt_tensor *make_i32(int ndim, const int64_t *shape, const int32_t *data)
{
    wt_tensor *t = NULL;
    if (wt_tensor_from_data(g_ctx, WT_I32, ndim, shape, data, &t) != WT_OK)
        CHECK(false, "from_data i32: %s", wt_last_error());
    return t;
}

/* t's n f32 elements in a new buffer, or NULL (counted as a failure). */
static inline float *read_all(const wt_tensor *t, size_t n)
{
    float *b = malloc((n ? n : 1) * sizeof *b);
    if (!t || wt_tensor_read(t, b, n * sizeof *b) != WT_OK) {
        CHECK(false, "read: %s", wt_last_error());
        free(b);
        return NULL;
    }
    return b;
}

/* Compares a library gradient with a float64 one: |a - e| <= atol + rtol |e|. */
static inline bool close_all(const char *what, const float *got, const double *want, size_t n, double rtol,
                             double atol)
{
    if (!got) return CHECK(false, "%s: no result", what);
    for (size_t i = 0; i < n; i++) {
        double e = want[i], a = got[i];
        if (isnan(e) && isnan(a)) continue;
        if (!(fabs(a - e) <= atol + rtol * fabs(e)))
            return CHECK(false, "%s: element %zu is %.8g, expected %.8g", what, i, a, e);
    }
    return CHECK(true, "%s", what);
}

#endif /* WT_TEST_GRAD_CHECK_H */
