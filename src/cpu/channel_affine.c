/* CPU per-channel affine map, the last pass of batch and group norm. */
#include "cpu/cpu.h"

wt_status cpu_channel_affine(wt_context *ctx, const wt_tensor *x, const wt_tensor *coef, wt_tensor *out)
{
    wt_status st = cpu_check_f32("channel_affine", x);
    if (st != WT_OK || (st = cpu_check_f32("channel_affine", coef)) != WT_OK ||
        (st = cpu_check_f32("channel_affine", out)) != WT_OK)
        return st;
    const int64_t N = x->shape[0], C = x->shape[1], S = x->shape[2];
    const float *xd = cpu_data(x), *k = cpu_data(coef);
    float *od = cpu_data(out);
    const int64_t s0 = x->strides[0], s1 = x->strides[1], s2 = x->strides[2];
#pragma omp parallel for num_threads(cpu_threads(ctx)) schedule(static) if (out->numel >= CPU_PARALLEL_MIN)
    for (int64_t p = 0; p < N * C; p++) {
        const int64_t c = p % C;
        const float shift = k[c], scale = k[C + c], bias = k[2 * C + c];
        const float *src = xd + (p / C) * s0 + c * s1;
        float *dst = od + p * S;
        if (s2 == 1)
            for (int64_t i = 0; i < S; i++) dst[i] = (src[i] - shift) * scale + bias;
        else
            for (int64_t i = 0; i < S; i++) dst[i] = (src[i * s2] - shift) * scale + bias;
    }
    return WT_OK;
}
