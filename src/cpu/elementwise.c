/* CPU elementwise kernels: fill, copy, unary, binary. */
#include "cpu/cpu.h"

wt_status cpu_fill(wt_context *ctx, wt_tensor *out, float value) {
    return wt_fail(WT_ERR_UNSUPPORTED, "cpu: fill is not implemented yet");
}

wt_status cpu_copy(wt_context *ctx, const wt_tensor *x, wt_tensor *out) {
    return wt_fail(WT_ERR_UNSUPPORTED, "cpu: copy is not implemented yet");
}

wt_status cpu_unary(wt_context *ctx, wt_unary_op op, const wt_tensor *x, wt_tensor *out) {
    return wt_fail(WT_ERR_UNSUPPORTED, "cpu: unary ops are not implemented yet");
}

wt_status cpu_binary(wt_context *ctx, wt_binary_op op, const wt_tensor *a, const wt_tensor *b,
                     wt_tensor *out) {
    return wt_fail(WT_ERR_UNSUPPORTED, "cpu: binary ops are not implemented yet");
}
