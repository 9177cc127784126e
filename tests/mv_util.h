/* Helpers of the data-movement tests: tensors of any dtype with their host
 * bits, host views that read those bits through a device view's layout,
 * and exact comparisons with guarded reads. */
#ifndef WT_MV_UTIL_H
#define WT_MV_UTIL_H

#include "test_util.h"

extern wt_context *g_ctx;
extern test_backend g_backend;

/* A device tensor and its elements' bits (one uint32 each: f32 bits, f16
 * bits in the low half, i32 as two's complement, bool 0 or 1). */
typedef struct mv_input {
    wt_tensor *dev;
    uint32_t *bits;
    int64_t numel;
    wt_dtype dtype;
} mv_input;

/* Random elements: f32 / f16 finite values of both signs (f16 random bit
 * patterns, NaN and inf excluded), i32 in [-1000, 1000), bool 0 / 1. */
bool mv_make(wt_dtype dtype, int ndim, const int64_t *shape, mv_input *in);
/* From given bits. */
bool mv_make_from(wt_dtype dtype, int ndim, const int64_t *shape, const uint32_t *bits, mv_input *in);
void mv_free(mv_input *in);

/* A layout over host bits, taken from a device view of the same storage. */
typedef struct hview {
    const uint32_t *base;
    int ndim;
    int64_t shape[8], strides[8], offset;
} hview;
hview hv_of(const uint32_t *base, const wt_tensor *view);
uint32_t hv_at(const hview *v, const int64_t *coord);
/* Row-major coordinates of position i of shape. */
void mv_coord(int64_t i, int ndim, const int64_t *shape, int64_t *coord);
int64_t mv_numel(int ndim, const int64_t *shape);

/* Reads t (dtype as given) and compares every element's bits with expect
 * (n elements) and its shape with (ndim, shape); counts one check. */
bool mv_expect(const char *what, const wt_tensor *t, wt_dtype dtype, int ndim, const int64_t *shape,
               const uint32_t *expect);
/* st == want (and, on failure, *out stays NULL when out is given). */
bool mv_expect_code(const char *what, wt_status st, wt_status want);
/* An index out of range: the call fails at once with WT_ERR_INVALID_ARGUMENT
 * and *out NULL (the CPU checks on the host), or on a GPU the call returns
 * and the next wt_context_sync reports it, once (webtensor.h, "Errors");
 * the message holds index_text when it is not NULL. */
bool mv_expect_index_error(const char *what, wt_status st, wt_tensor **out, wt_context *ctx,
                           const char *index_text);

/* The element bits of a float / int value in dtype. */
uint32_t mv_bits_of(wt_dtype dtype, double v);
double mv_value_of(wt_dtype dtype, uint32_t bits);
const char *mv_dtype_name(wt_dtype dtype);

#endif
