/* CPU reductions: sum, mean, max, min over trailing axes. */
#include "cpu/cpu.h"

wt_status cpu_reduce(wt_context *ctx, wt_reduce_op op, const wt_tensor *x, int nreduced,
                     wt_tensor *out) {
    return wt_fail(WT_ERR_UNSUPPORTED, "cpu: reductions are not implemented yet");
}
