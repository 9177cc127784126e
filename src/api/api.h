/* Shared argument checks of the API layer. */
#ifndef WT_API_INTERNAL_H
#define WT_API_INTERNAL_H

#include "core/internal.h"

/* x is non-NULL and of a dtype the ops support. */
wt_status wt_check_input(const char *fn, const wt_tensor *x);
/* out is non-NULL; sets *out to NULL. */
wt_status wt_check_out(const char *fn, wt_tensor **out);
/* a and b belong to the same context. */
wt_status wt_check_same_context(const char *fn, const wt_tensor *a, const wt_tensor *b);
/* ndim in [0, WT_MAX_DIMS], shape non-NULL when ndim > 0, no negative extent. */
wt_status wt_check_shape(const char *fn, int ndim, const int64_t *shape);
/* Writes "[2,3,4]" into buf. */
const char *wt_shape_str(int ndim, const int64_t *shape, char *buf, size_t size);
/* Normalises a possibly negative axis; false if out of range. */
bool wt_norm_axis(int axis, int ndim, int *out);

static inline wt_context *wt_ctx_of(const wt_tensor *t) { return t->storage->ctx; }

#endif
