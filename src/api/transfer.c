/* Moving tensors between contexts: through host memory, which every pair
 * of backends shares (WebGPU has no copies between devices). */
#include "api/api.h"

#include <stdlib.h>

wt_status wt_tensor_to(const wt_tensor *x, wt_context *dst, wt_tensor **out)
{
    wt_status st = wt_check_out("wt_tensor_to", out);
    if (st != WT_OK || (st = wt_check_input("wt_tensor_to", x)) != WT_OK) return st;
    if (!dst) return wt_fail(WT_ERR_INVALID_ARGUMENT, "wt_tensor_to: dst is NULL");
    if (wt_ctx_of(x) == dst) return wt_copy(x, out);
    size_t bytes;
    if (!wt_bytes_of(x->numel, wt_dtype_size(x->dtype), &bytes))
        return wt_fail(WT_ERR_OUT_OF_MEMORY, "wt_tensor_to: %lld elements are too many",
                       (long long)x->numel);
    void *host = malloc(bytes ? bytes : 1);
    if (!host)
        return wt_fail(WT_ERR_OUT_OF_MEMORY, "wt_tensor_to: %zu bytes of host memory for the transfer",
                       bytes);
    st = wt_tensor_read(x, host, bytes);
    if (st == WT_OK) st = wt_tensor_from_data(dst, x->dtype, x->ndim, x->shape, host, out);
    free(host);
    if (st != WT_OK) wt_error_prefix("wt_tensor_to");
    return st;
}
