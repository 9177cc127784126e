/* WebGPU reductions (sum, mean, max, min) over the innermost axes. */
#include "webgpu/wg.h"

wt_status wg_op_reduce(wt_context *ctx, wt_reduce_op op, const wt_tensor *x, int nreduced,
                       wt_tensor *out)
{
    (void)ctx; (void)op; (void)x; (void)nreduced; (void)out;
    return wt_fail(WT_ERR_UNSUPPORTED, "reduce: not implemented on webgpu yet");
}
