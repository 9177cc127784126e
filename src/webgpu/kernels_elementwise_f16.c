/* Native f16 elementwise kernels (unary_f16.wgsl, binary_f16.wgsl): the
 * memory-bound ops read and write halves directly instead of casting
 * every operand to f32 and back (a third of the traffic). The API calls
 * them only for contiguous f16 operands of one shape at even element
 * offsets; anything else goes through f32. The math is the f32 kernels'
 * (the generated apply and ew_float), the conversions cast's (f16_bits),
 * so both paths give the same bits. */
#include "webgpu/wg.h"

#include <stdio.h>
#include <string.h>

#define F16_WG 256u

typedef struct f16_unary_params {
    uint32_t n, x_word, out_word, pad0, p0, p1, pad1, pad2;
} f16_unary_params;

typedef struct f16_binary_params {
    uint32_t n, a_word, b_word, out_word;
} f16_binary_params;

/* The layout every operand must have; out's shape is the reference.
 * Indices are u32 and element n of thread t's word (2t + 1) must not wrap.
 * WT_ERR_UNSUPPORTED sends the API to the f32 path, without a message
 * worth keeping. */
static bool operand_fits(const wt_tensor *t, const wt_tensor *out)
{
    if (t->dtype != WT_F16 || t->ndim != out->ndim ||
        memcmp(t->shape, out->shape, sizeof t->shape[0] * (size_t)t->ndim) != 0)
        return false;
    if (t->offset % 2 != 0 || t->offset < 0 || t->offset + t->numel > (int64_t)UINT32_MAX - 1)
        return false;
    int64_t expect = 1;
    for (int d = t->ndim - 1; d >= 0; d--) {
        if (t->shape[d] != 1 && t->strides[d] != expect)
            return false;
        expect *= t->shape[d];
    }
    return true;
}

wt_status wg_ew_f16(wt_context *ctx, const wt_ew_args *args)
{
    wt_tensor *out = args->out;
    const char *name = wt_op_table[args->op].name;
    bool fits = operand_fits(out, out);
    for (int k = 0; k < args->nin; k++)
        fits = fits && args->in[k] && operand_fits(args->in[k], out);
    if (!fits)
        return wt_fail(WT_ERR_UNSUPPORTED, "webgpu %s: f16 lanes need contiguous f16 operands of one shape", name);
    if (out->numel == 0)
        return WT_OK;
    char prelude[768];
    int used = snprintf(prelude, sizeof prelude, "const WG: u32 = %uu;\nalias U = vec2<u32>;\nalias B = vec2<bool>;\n",
                        F16_WG);
    if (used < 0 || wg_ew_prelude(prelude + used, sizeof prelude - (size_t)used, (int)args->op, WT_F32, WT_F32, 2) < 0)
        return wt_fail(WT_ERR_BACKEND, "webgpu %s: prelude too long", name);
    f16_unary_params pu = {(uint32_t)out->numel, (uint32_t)(args->in[0]->offset / 2), (uint32_t)(out->offset / 2),
                           0, args->params[0], args->params[1], 0, 0};
    f16_binary_params pb = {(uint32_t)out->numel, (uint32_t)(args->in[0]->offset / 2),
                            args->nin > 1 ? (uint32_t)(args->in[1]->offset / 2) : 0, (uint32_t)(out->offset / 2)};
    wg_launch l;
    memset(&l, 0, sizeof l);
    l.shader = args->nin == 1 ? "unary_f16" : "binary_f16";
    /* The GPU's own conversions where they were found exact, else the
     * exact integer routines (f16_probe.c). */
    l.libraries[0] = wg_f16_hw_exact(ctx) ? "f16_hw" : "f16_bits";
    l.libraries[1] = "ew_float";
    l.prelude = prelude;
    l.params = args->nin == 1 ? (const void *)&pu : (const void *)&pb;
    l.params_size = args->nin == 1 ? sizeof pu : sizeof pb;
    for (int k = 0; k < args->nin; k++)
        l.bindings[k] = (wg_binding){args->in[k]->storage, false};
    l.bindings[args->nin] = (wg_binding){out->storage, true};
    l.nbindings = args->nin + 1;
    l.workgroups = (((uint64_t)out->numel + 1) / 2 + F16_WG - 1) / F16_WG; /* a thread per word */
    return wg_dispatch(ctx, &l);
}
