/* Helpers shared by the data-movement front-ends (movement_*.c). */
#ifndef WT_API_MOVEMENT_H
#define WT_API_MOVEMENT_H

#include "api/api.h"

/* x is non-NULL and of a known dtype (movement ops take every dtype). */
wt_status mv_check_input(const char *fn, const wt_tensor *x);
/* index is non-NULL, of x's context and WT_I32. */
wt_status mv_check_index(const char *fn, const wt_tensor *x, const wt_tensor *index);
/* The backend runs nodes of kind (else WT_ERR_UNSUPPORTED). */
wt_status mv_need(const char *fn, const wt_context *ctx, wt_node_kind kind);
/* A fresh contiguous tensor with x's elements (any dtype). */
wt_status mv_materialize(const wt_tensor *x, wt_tensor **out);
/* x itself (one more reference) when contiguous, else mv_materialize. */
wt_status mv_contiguous(const wt_tensor *x, wt_tensor **out);
/* A view of x; a 0-d x as 1-d [1], so that every kernel sees an axis. */
wt_status mv_at_least_1d(const wt_tensor *x, wt_tensor **out);
/* Backend gather/scatter behind the shape checks of the callers. */
wt_status mv_gather(const char *fn, const wt_tensor *x, int axis, const wt_tensor *index,
                    wt_tensor **out);
wt_status mv_scatter_add(const char *fn, const wt_tensor *x, int axis, const wt_tensor *index,
                         const wt_tensor *src, wt_tensor **out);

#endif
