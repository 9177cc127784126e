/* WebGPU matrix multiplication (batched, strided operands). */
#include "webgpu/wg.h"

wt_status wg_op_matmul(wt_context *ctx, const wt_tensor *a, const wt_tensor *b, wt_tensor *out)
{
    (void)ctx; (void)a; (void)b; (void)out;
    return wt_fail(WT_ERR_UNSUPPORTED, "matmul: not implemented on webgpu yet");
}
