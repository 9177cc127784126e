/* CPU per-channel normalisation map, the last pass of batch and group
 * norm. */
#include "cpu/cpu.h"

#include <math.h>

wt_status cpu_channel_norm(wt_context *ctx, const wt_tensor *x, const wt_tensor *stats, float eps,
                           wt_tensor *out)
{
    wt_status st = cpu_check_f32("channel_norm", x);
    if (st != WT_OK || (st = cpu_check_f32("channel_norm", stats)) != WT_OK ||
        (st = cpu_check_f32("channel_norm", out)) != WT_OK)
        return st;
    const int64_t N = x->shape[0], C = x->shape[1], S = x->shape[2];
    const float *xd = cpu_data(x), *k = cpu_data(stats);
    float *od = cpu_data(out);
    const int64_t s0 = x->strides[0], s1 = x->strides[1], s2 = x->strides[2];
#pragma omp parallel for num_threads(cpu_threads(ctx)) schedule(static) if (out->numel >= CPU_PARALLEL_MIN)
    for (int64_t p = 0; p < N * C; p++) {
        const int64_t c = p % C;
        const float mean = k[c], scale = k[2 * C + c] / sqrtf(k[C + c] + eps), bias = k[3 * C + c];
        const float *src = xd + (p / C) * s0 + c * s1;
        float *dst = od + p * S;
        if (s2 == 1)
            for (int64_t i = 0; i < S; i++) dst[i] = (src[i] - mean) * scale + bias;
        else
            for (int64_t i = 0; i < S; i++) dst[i] = (src[i * s2] - mean) * scale + bias;
    }
    return WT_OK;
}

wt_status cpu_channel_moments(wt_context *ctx, const wt_tensor *x, wt_tensor *out)
{
    wt_status st = cpu_check_f32("channel_moments", x);
    if (st != WT_OK || (st = cpu_check_f32("channel_moments", out)) != WT_OK) return st;
    const int64_t N = x->shape[0], C = x->shape[1], S = x->shape[2];
    const int64_t s0 = x->strides[0], s1 = x->strides[1], s2 = x->strides[2];
    const float *xd = cpu_data(x);
    float *od = cpu_data(out);
    const double count = (double)(N * S);
    /* A channel per task, summed in double: two passes, the second over
     * squared deviations from the first's mean. */
#pragma omp parallel for num_threads(cpu_threads(ctx)) schedule(static) if (N * C * S >= CPU_PARALLEL_MIN)
    for (int64_t c = 0; c < C; c++) {
        double sum = 0.0, sq = 0.0;
        for (int64_t n = 0; n < N; n++) {
            const float *v = xd + n * s0 + c * s1;
            for (int64_t i = 0; i < S; i++) sum += v[i * s2];
        }
        const double mean = sum / count;
        for (int64_t n = 0; n < N; n++) {
            const float *v = xd + n * s0 + c * s1;
            for (int64_t i = 0; i < S; i++) sq += (v[i * s2] - mean) * (v[i * s2] - mean);
        }
        od[c] = (float)mean;
        od[C + c] = (float)(sq / count);
    }
    return WT_OK;
}
