/* Prints the f16 path a WebGPU context took after one f16 add (with
 * WT_F16_ARITH=0 set, the probed one): quant_x8_f16_hw.sh builds it against
 * the library as new/probe_check. */
#include "webtensor.h"
#include <stdio.h>
int main(void) {
    wt_context *ctx; wt_context_options o; wt_context_options_init(&o);
    o.backend = WT_BACKEND_WEBGPU;
    if (wt_context_create(&o, &ctx) != WT_OK) { printf("ctx: %s\n", wt_last_error()); return 1; }
    int64_t sh[1] = {8}; wt_tensor *a, *b;
    if (wt_tensor_zeros(ctx, WT_F16, 1, sh, &a) != WT_OK || wt_add(a, a, &b) != WT_OK) { printf("op: %s\n", wt_last_error()); return 1; }
    wt_context_sync(ctx);
    wt_context_info info; wt_context_get_info(ctx, &info);
    printf("%s\n", info.features);
    return 0;
}
