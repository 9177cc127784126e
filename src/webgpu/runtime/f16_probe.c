/* A one-time check of the GPU's own f16 conversions. The exact integer
 * routines of f16_bits.wgsl cost some 35 integer operations per element,
 * which on a large GPU makes f16 elementwise ops compute-bound; the
 * hardware conversions cost one instruction, but WGSL does not promise
 * their rounding, overflow or subnormals. So each device is asked once:
 * f16_probe.wgsl compares both on every f16 value and every tie, and the
 * fast path is taken only where they agree. */
#include "webgpu/wg_runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROBE_WG 256u
#define PROBE_VALUES 65536u

static bool probe(wt_context *ctx)
{
    char prelude[64];
    snprintf(prelude, sizeof prelude, "const WG: u32 = %uu;\n", PROBE_WG);
    wt_storage *flags = NULL;
    if (wg_scratch(ctx, PROBE_VALUES * sizeof(uint32_t), &flags) != WT_OK)
        return false;
    uint32_t params[4] = {0, 0, 0, 0};
    wg_launch l;
    memset(&l, 0, sizeof l);
    l.shader = "f16_probe";
    l.libraries[0] = "f16_bits";
    l.prelude = prelude;
    l.params = params;
    l.params_size = sizeof params;
    l.bindings[0] = (wg_binding){flags, true};
    l.nbindings = 1;
    l.workgroups = PROBE_VALUES / PROBE_WG;
    bool exact = false;
    uint32_t *host = malloc(PROBE_VALUES * sizeof(uint32_t));
    if (host && wg_dispatch(ctx, &l) == WT_OK &&
        ctx->ops->download(ctx, flags, 0, host, PROBE_VALUES * sizeof(uint32_t)) == WT_OK) {
        exact = true;
        for (uint32_t i = 0; i < PROBE_VALUES; i++)
            if (host[i] != 0)
                exact = false;
    }
    free(host);
    wg_scratch_release(ctx, flags);
    return exact;
}

bool wg_f16_hw_exact(wt_context *ctx)
{
    wg_context *w = wg_ctx(ctx);
    if (!w->f16_hw_probed) {
        const char *off = wt_knob_text(WT_KNOB_F16_HW);
        w->f16_hw_exact = !(off && strcmp(off, "0") == 0) && probe(ctx);
        w->f16_hw_probed = true;
    }
    return w->f16_hw_exact;
}
