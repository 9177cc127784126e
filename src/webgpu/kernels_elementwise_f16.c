/* Native f16 elementwise kernels (unary_f16.wgsl, binary_f16.wgsl): the
 * memory-bound ops read and write halves directly instead of casting
 * every operand to f32 and back (a third of the traffic). The API calls
 * them only for contiguous f16 operands of one shape at even element
 * offsets; anything else goes through f32. The math is the f32 kernels'
 * (unary_math, binary_math), the conversions cast's (f16_bits), so both
 * paths give the same bits. */
#include "webgpu/wg.h"

#include <stdio.h>
#include <string.h>

#define F16_WG 256u

typedef struct f16_unary_params {
    uint32_t n, x_word, out_word, pad0;
} f16_unary_params;

typedef struct f16_binary_params {
    uint32_t n, a_word, b_word, out_word;
} f16_binary_params;

/* The layout every operand must have; out's shape is the reference.
 * Indices are u32 and element n of thread t's word (2t + 1) must not wrap. */
static wt_status check_operand(const char *op, const wt_tensor *t, const wt_tensor *out)
{
    if (t->dtype != WT_F16)
        return wt_fail(WT_ERR_UNSUPPORTED, "webgpu %s: f16 operands only", op);
    if (t->ndim != out->ndim || memcmp(t->shape, out->shape, sizeof t->shape[0] * (size_t)t->ndim) != 0)
        return wt_fail(WT_ERR_UNSUPPORTED, "webgpu %s: operands of one shape only", op);
    if (t->offset % 2 != 0 || t->offset < 0 || t->offset + t->numel > (int64_t)UINT32_MAX - 1)
        return wt_fail(WT_ERR_UNSUPPORTED, "webgpu %s: an operand at odd offset or beyond 32-bit indexing", op);
    int64_t expect = 1;
    for (int d = t->ndim - 1; d >= 0; d--) {
        if (t->shape[d] != 1 && t->strides[d] != expect)
            return wt_fail(WT_ERR_UNSUPPORTED, "webgpu %s: contiguous operands only", op);
        expect *= t->shape[d];
    }
    return WT_OK;
}

static wt_status launch(wt_context *ctx, const char *op, const char *shader, unsigned shader_op,
                        const char *math_lib, const void *params, size_t params_size,
                        const wt_tensor *const *inputs, int ninputs, wt_tensor *out)
{
    char prelude[256];
    snprintf(prelude, sizeof prelude,
             "const OP: u32 = %uu;\nconst WG: u32 = %uu;\nalias T = vec2<f32>;\n"
             "alias U = vec2<u32>;\nalias B = vec2<bool>;\n",
             shader_op, F16_WG);
    wg_launch l;
    memset(&l, 0, sizeof l);
    l.shader = shader;
    /* The GPU's own conversions where they were found exact, else the
     * exact integer routines (f16_probe.c). */
    l.libraries[0] = wg_f16_hw_exact(ctx) ? "f16_hw" : "f16_bits";
    l.libraries[1] = math_lib;
    l.prelude = prelude;
    l.params = params;
    l.params_size = params_size;
    for (int i = 0; i < ninputs; i++)
        l.bindings[i] = (wg_binding){inputs[i]->storage, false};
    l.bindings[ninputs] = (wg_binding){out->storage, true};
    l.nbindings = ninputs + 1;
    l.workgroups = (((uint64_t)out->numel + 1) / 2 + F16_WG - 1) / F16_WG; /* a thread per word */
    return wg_dispatch(ctx, &l);
}

wt_status wg_op_unary_f16(wt_context *ctx, wt_unary_op op, const wt_tensor *x, wt_tensor *out)
{
    wt_status st;
    if ((unsigned)op >= WT_UNARY_COUNT)
        return wt_fail(WT_ERR_UNSUPPORTED, "webgpu unary_f16: unknown op %d", (int)op);
    if ((st = check_operand("unary_f16", x, out)) != WT_OK ||
        (st = check_operand("unary_f16", out, out)) != WT_OK)
        return st;
    if (out->numel == 0)
        return WT_OK;
    f16_unary_params p = {(uint32_t)out->numel, (uint32_t)(x->offset / 2),
                          (uint32_t)(out->offset / 2), 0};
    const wt_tensor *in[1] = {x};
    /* unary_math's OP numbers follow wt_unary_op. */
    return launch(ctx, "unary_f16", "unary_f16", (unsigned)op, "unary_math", &p, sizeof p, in, 1, out);
}

wt_status wg_op_binary_f16(wt_context *ctx, wt_binary_op op, const wt_tensor *a,
                           const wt_tensor *b, wt_tensor *out)
{
    wt_status st;
    if ((unsigned)op >= WT_BINARY_COUNT)
        return wt_fail(WT_ERR_UNSUPPORTED, "webgpu binary_f16: unknown op %d", (int)op);
    if ((st = check_operand("binary_f16", a, out)) != WT_OK ||
        (st = check_operand("binary_f16", b, out)) != WT_OK ||
        (st = check_operand("binary_f16", out, out)) != WT_OK)
        return st;
    if (out->numel == 0)
        return WT_OK;
    f16_binary_params p = {(uint32_t)out->numel, (uint32_t)(a->offset / 2),
                           (uint32_t)(b->offset / 2), (uint32_t)(out->offset / 2)};
    const wt_tensor *in[2] = {a, b};
    /* binary_math's OP numbers follow wt_binary_op. */
    return launch(ctx, "binary_f16", "binary_f16", (unsigned)op, "binary_math", &p, sizeof p, in, 2, out);
}
