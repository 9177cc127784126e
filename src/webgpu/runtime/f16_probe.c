/* A one-time check of the GPU's own f16 conversions. The exact integer
 * routines of f16_bits.wgsl cost some 35 integer operations per element,
 * which on a large GPU makes f16 elementwise ops compute-bound; the
 * hardware conversions cost one instruction, but WGSL does not promise
 * their rounding, overflow or subnormals. So each device is asked once:
 * f16_probe.wgsl compares both on every f16 value and every tie, and the
 * fast path is taken only where they agree.
 *
 * A device with shader-f16 converts with WGSL's f16 type instead
 * (f16_native.wgsl): no probe, a few instructions a pair, and the
 * hardware's rounding (tested with f16 tolerances). WT_F16_ARITH=0 keeps
 * such a device on the probed path, whose results match the f32 path's
 * bit for bit. */
#include "webgpu/wg_runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROBE_WG 256u
#define PROBE_VALUES 65536u

/* The probe's flags over every half: 1 unpack, 2 pack of exact values,
 * 4 pack of ties and their neighbours, 8 pack around the overflow edge
 * (f16_probe.wgsl); 16 when the probe could not run. */
static bool probe(wt_context *ctx)
{
    wg_context *w = wg_ctx(ctx);
    w->f16_probe_flags = 16;
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
        uint32_t any = 0;
        for (uint32_t i = 0; i < PROBE_VALUES; i++) any |= host[i];
        w->f16_probe_flags = any;
        exact = any == 0;
    }
    uint32_t f = w->f16_probe_flags;
    snprintf(w->f16_probe_note, sizeof w->f16_probe_note, "integer routines (%s%s%s%s%s)",
             f & 16 ? "the probe could not run" : "hardware:", f & 1 ? " unpack inexact;" : "",
             f & 2 ? " pack of exact values inexact;" : "", f & 4 ? " pack rounding of ties inexact;" : "",
             f & 8 ? " pack at the overflow edge inexact;" : "");
    free(host);
    wg_scratch_release(ctx, flags);
    return exact;
}

bool wg_f16_hw_exact(wt_context *ctx)
{
    wg_context *w = wg_ctx(ctx);
    if (!w->f16_hw_probed) {
        const char *off = wt_knob_text(WT_KNOB_F16_HW);
        w->f16_probe_ran = !(off && strcmp(off, "0") == 0);
        w->f16_hw_exact = w->f16_probe_ran && probe(ctx);
        w->f16_hw_probed = true;
    }
    return w->f16_hw_exact;
}

bool wg_f16_arith(const wt_context *ctx)
{
    return wg_get_caps(ctx)->shader_f16 && wt_knob_count(WT_KNOB_F16_ARITH, 1) != 0;
}

const char *wg_f16_library(wt_context *ctx)
{
    if (wg_f16_arith(ctx)) return "f16_native";
    return wg_f16_hw_exact(ctx) ? "f16_hw" : "f16_bits";
}

const char *wg_f16_path(const wt_context *ctx)
{
    const wg_context *w = wg_ctx((wt_context *)ctx);
    if (wg_f16_arith(ctx)) return "f16 types (shader-f16)";
    if (!w->f16_hw_probed) return "not yet chosen (probed at the first f16 kernel)";
    if (w->f16_hw_exact) return "hardware pack/unpack (probed exact)";
    if (!w->f16_probe_ran) return "integer routines (WT_F16_HW=0)";
    return w->f16_probe_note;
}
