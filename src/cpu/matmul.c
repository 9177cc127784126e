/* CPU batched matrix product through CBLAS. */
#include "cpu/cpu.h"

wt_status cpu_matmul(wt_context *ctx, const wt_tensor *a, const wt_tensor *b, wt_tensor *out) {
    return wt_fail(WT_ERR_UNSUPPORTED, "cpu: matmul is not implemented yet");
}
