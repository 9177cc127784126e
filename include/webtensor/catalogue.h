/* Section 14 of webtensor.h: the op catalogue: every op and how each backend runs it. */
#ifndef WEBTENSOR_CATALOGUE_H
#define WEBTENSOR_CATALOGUE_H

#include "errors.h"
#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ======== 14. The op catalogue =========================================== */
/*
 * The op catalogue: every op, its family and how each backend computes it
 * per dtype (what `webtensor ops` prints). op is an index in
 * [0, wt_op_count()); indices may change between versions, names do not. */
WT_API int wt_op_count(void);
/* "add", "conv2d" ...; NULL for an index out of range. */
WT_API const char *wt_op_name(int op);
/* "elementwise", "reduce", "nn" ...; NULL for an index out of range. */
WT_API const char *wt_op_family(int op);
/* How ctx's backend computes op on inputs of dtype. WT_ERR_INVALID_ARGUMENT
 * for a NULL ctx or out, an unknown op or dtype. */
WT_API wt_status wt_op_support(const wt_context *ctx, int op, wt_dtype dtype, wt_support *out);

#ifdef __cplusplus
}
#endif
#endif /* WEBTENSOR_CATALOGUE_H */
