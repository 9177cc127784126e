/* The fused linear layer (node LINEAR_FUSED) on the CPU: per row of x the
 * RMSNorm's inverse root and the scaled row g * x in f32, then one dot
 * product per weight row (f16 rows converted in registers), the bias, the
 * SwiGLU and the residual in f32, one rounding at the end. */
#include "cpu/cpu.h"
#include "cpu/gemv_simd.h"
#include "cpu/half.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static float load(const wt_tensor *t, int64_t i)
{
    if (t->dtype == WT_F16) {
        uint32_t b = cpu_half_to_f32_bits(((const uint16_t *)t->storage->host)[t->offset + i]);
        float f;
        memcpy(&f, &b, sizeof f);
        return f;
    }
    return ((const float *)t->storage->host)[t->offset + i];
}

static void store(wt_tensor *t, int64_t i, float v)
{
    if (t->dtype == WT_F16) {
        uint32_t b;
        memcpy(&b, &v, sizeof b);
        ((uint16_t *)t->storage->host)[t->offset + i] = cpu_f32_bits_to_half(b);
    } else {
        ((float *)t->storage->host)[t->offset + i] = v;
    }
}

/* sum over k of w's row n times h. */
static float row_dot(const wt_tensor *w, int64_t n, const float *h, int64_t K)
{
    const int64_t base = w->offset + n * w->strides[0];
    if (w->dtype == WT_F16) return cpu_dot_f16((const uint16_t *)w->storage->host + base, h, K);
    const float *a = (const float *)w->storage->host + base;
    float s = 0.0f;
#pragma omp simd reduction(+ : s)
    for (int64_t k = 0; k < K; k++) s += a[k] * h[k];
    return s;
}

wt_status cpu_linear_fused(wt_context *ctx, const wt_tensor *x, const wt_tensor *w, const wt_tensor *bias,
                           const wt_tensor *norm_weight, const wt_tensor *residual, bool rms_norm, bool swiglu,
                           float eps, wt_tensor *out)
{
    const int64_t M = x->shape[0], K = x->shape[1], N = w->shape[0], n_out = out->shape[1];
    float *h = malloc(sizeof *h * (size_t)(K ? K : 1));
    if (!h) return wt_fail(WT_ERR_OUT_OF_MEMORY, "linear_fused: %lld bytes of scratch", (long long)(K * 4));
    const int threads = cpu_threads(ctx);
    for (int64_t m = 0; m < M; m++) {
        /* h = g * x; the norm's 1/rms scales the dot products instead. */
        double ss = 0.0;
        for (int64_t k = 0; k < K; k++) {
            const float v = load(x, m * K + k);
            ss += (double)v * v;
            h[k] = norm_weight ? v * load(norm_weight, k) : v;
        }
        const float scale = rms_norm ? 1.0f / sqrtf((float)(ss / (double)K) + eps) : 1.0f;
#pragma omp parallel for num_threads(threads) if (N * K > CPU_PARALLEL_MIN) schedule(static)
        for (int64_t j = 0; j < n_out; j++) {
            float y = row_dot(w, j, h, K) * scale + (bias ? load(bias, j) : 0.0f);
            if (swiglu) {
                const float u = row_dot(w, j + n_out, h, K) * scale + (bias ? load(bias, j + n_out) : 0.0f);
                y = y / (1.0f + expf(-y)) * u;
            }
            if (residual) y += load(residual, m * n_out + j);
            store(out, m * n_out + j, y);
        }
    }
    (void)N;
    free(h);
    return WT_OK;
}
