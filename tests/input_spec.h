/* Test inputs written as short strings, so that case tables read like the
 * shapes they test:
 *
 *   "[]"                  0-d tensor
 *   "[1029,917]"          contiguous tensor of that shape
 *   "[37,53].T(0,1)"      wt_transpose of it
 *   "[6,7,8].P(2,0,1)"    wt_permute
 *   "[40,30].S(1,1,29,3)" wt_slice(axis 1, start 1, stop 29, step 3)
 *   "[1,33].E(17,33)"     wt_expand to [17,33]
 *   "[6,4].R(3,-1)"       wt_reshape
 *
 * Views chain left to right. The same string builds the tensor through the
 * public API and its expected contents on the host, independently. */
#ifndef WT_TEST_INPUT_SPEC_H
#define WT_TEST_INPUT_SPEC_H

#include "webtensor.h"

#include <stdbool.h>
#include <stdint.h>

#define SPEC_MAX_VIEWS 4

typedef enum view_kind { VIEW_TRANSPOSE, VIEW_PERMUTE, VIEW_SLICE, VIEW_EXPAND, VIEW_RESHAPE } view_kind;

typedef struct view_step {
    view_kind kind;
    int nargs;
    int64_t args[WT_MAX_DIMS];
} view_step;

typedef struct input_spec {
    int ndim;
    int64_t shape[WT_MAX_DIMS];
    int nviews;
    view_step views[SPEC_MAX_VIEWS];
} input_spec;

/* Parses text; false (with a message in err) on a malformed string. */
bool spec_parse(const char *text, input_spec *out, char *err, size_t err_size);

/* A host tensor: row-major float data of a logical shape. */
typedef struct host_tensor {
    int ndim;
    int64_t shape[WT_MAX_DIMS];
    int64_t numel;
    float *data;
} host_tensor;

bool host_alloc(host_tensor *t, int ndim, const int64_t *shape);
void host_free(host_tensor *t);
int64_t shape_numel(int ndim, const int64_t *shape);

/* Applies one view step on the host (a gathered copy); false if the step
 * does not apply to this shape (a mistake in the test's table). */
bool host_apply_view(const host_tensor *x, const view_step *v, host_tensor *out);
/* The same step through the public API. */
wt_status device_apply_view(const wt_tensor *x, const view_step *v, wt_tensor **out);

/* Builds both sides of an input: the base is filled with uniform values in
 * [lo, hi) (never 0) from the test RNG, uploaded, and every view applied on
 * the host and on the device. dev_base receives the uploaded base (so that
 * it can be checked unchanged) and dev the final view; both are owned by
 * the caller. The host side is the view's logical contents. */
typedef struct test_input {
    host_tensor base, host;
    wt_tensor *dev_base, *dev;
} test_input;

wt_status input_build(wt_context *ctx, const input_spec *spec, float lo, float hi,
                      const float *special, int nspecial, test_input *out, char *err,
                      size_t err_size);
void input_free(test_input *in);

#endif /* WT_TEST_INPUT_SPEC_H */
