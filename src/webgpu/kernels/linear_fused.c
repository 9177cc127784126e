/* WebGPU wt_linear_fused (node LINEAR_FUSED): wgsl/linear_fused.wgsl,
 * reading its operands 16 bytes at a time (linear_fused_vec.wgsl) where
 * k, the offsets and w's row stride allow it, else element by element
 * (linear_fused_scalar.wgsl). Each operand has its own dtype (the norm
 * weight x's). */
#include "webgpu/wg.h"
#include "webgpu/wg_params.h"

#include <stdio.h>

static uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

/* Every element of the storage reachable with u32 indices. */
static bool fits_u32(const wt_tensor *t)
{
    return !t || (t->storage->bytes / 2 < (1ull << 32) && t->offset >= 0 && t->offset < (1ll << 31));
}

static bool aligned(const wt_tensor *t, int64_t e) { return !t || t->offset % e == 0; }

static const char *tf(bool v) { return v ? "true" : "false"; }

wt_status wg_linear_fused(wt_context *ctx, const wt_tensor *x, const wt_tensor *w, const wt_tensor *bias,
                          const wt_tensor *norm_weight, const wt_tensor *residual, bool rms_norm, bool swiglu,
                          float eps, wt_tensor *out)
{
    const bool x16 = x->dtype == WT_F16, w16 = w->dtype == WT_F16, o16 = out->dtype == WT_F16;
    const bool any16 = x16 || w16 || o16 || (bias && bias->dtype == WT_F16) || (residual && residual->dtype == WT_F16);
    const int64_t M = x->shape[0], K = x->shape[1], n_out = out->shape[1];
    const int64_t row_stride = w->shape[0] > 1 ? w->strides[0] : K;
    if (!fits_u32(x) || !fits_u32(w) || !fits_u32(bias) || !fits_u32(norm_weight) || !fits_u32(residual) ||
        !fits_u32(out) || (uint64_t)M * n_out >= (1ull << 31) || K >= (1ll << 31) || row_stride >= (1ll << 31) ||
        (o16 && out->offset % 2))
        return wt_fail(WT_ERR_UNSUPPORTED, "linear_fused: operands beyond 32-bit indexing on webgpu");
    /* 16-byte words: E elements of w, EX of x (and of g, x's dtype). */
    const int64_t e = w16 ? 8 : 4, ex = x16 ? 8 : 4;
    const bool vec = !(x16 && !w16) && K % e == 0 && row_stride % e == 0 && aligned(w, e) && aligned(x, ex) &&
                     aligned(norm_weight, ex);
    /* Threads an output: a decode step's rows are 2048..8192 long; 64
     * threads keep 16-byte loads of a whole row in flight in few steps. */
    uint32_t tpr = (uint32_t)wt_knob_number(WT_KNOB_LINEAR_FUSED_TPR, 64);
    if (!wg_is_pow2(tpr) || tpr < 2 || tpr > 256) tpr = 64;
    /* Steps in flight a thread (vector path): 2 measured on the H200 with
     * 64 threads an output; 1, 4 and 8 for comparison. */
    uint32_t unroll = (uint32_t)wt_knob_number(WT_KNOB_LINEAR_FUSED_UNROLL, 2);
    if (unroll != 1 && unroll != 2 && unroll != 4 && unroll != 8) unroll = 2;
    const uint32_t wg = 256;
    linear_fused_params p = {
        .outputs = (uint32_t)(M * n_out), .n_out = (uint32_t)n_out, .k = (uint32_t)K,
        .w_offset = (uint32_t)w->offset, .w_row_stride = (uint32_t)row_stride, .x_offset = (uint32_t)x->offset,
        .g_offset = norm_weight ? (uint32_t)norm_weight->offset : 0,
        .bias_offset = bias ? (uint32_t)bias->offset : 0,
        .res_offset = residual ? (uint32_t)residual->offset : 0, .out_offset = (uint32_t)out->offset, .eps = eps,
    };
    char prelude[440];
    snprintf(prelude, sizeof prelude,
             "const WG: u32 = %uu;\nconst TPR: u32 = %uu;\nconst UNROLL: u32 = %uu;\nconst X_F16: bool = %s;\nconst W_F16: bool = %s;\n"
             "const B_F16: bool = %s;\nconst R_F16: bool = %s;\nconst O_F16: bool = %s;\nconst NORM: bool = %s;\n"
             "const NORM_W: bool = %s;\nconst BIAS: bool = %s;\nconst RESID: bool = %s;\nconst SWIGLU: bool = %s;\n",
             wg, tpr, unroll, tf(x16), tf(w16), tf(bias && bias->dtype == WT_F16), tf(residual && residual->dtype == WT_F16),
             tf(o16), tf(rms_norm), tf(norm_weight), tf(bias), tf(residual), tf(swiglu));
    wt_storage *none = x->storage; /* bound where an operand is absent, never read */
    wg_launch l = {
        .shader = "linear_fused",
        .prelude = prelude,
        .libraries = {vec ? "linear_fused_vec" : "linear_fused_scalar", any16 ? wg_f16_library(ctx) : "f16_bits"},
        .params = &p,
        .params_size = sizeof p,
        .bindings = {{x->storage, false},
                     {w->storage, false},
                     {norm_weight ? norm_weight->storage : none, false},
                     {bias ? bias->storage : none, false},
                     {residual ? residual->storage : none, false},
                     {out->storage, true}},
        .nbindings = 6,
        .workgroups = ceil_div((uint64_t)M * n_out, wg / tpr),
    };
    return wg_dispatch(ctx, &l);
}
