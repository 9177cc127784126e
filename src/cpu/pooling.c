/* CPU 2-D pooling (max, average, adaptive), one plane of the output per
 * task. The window rules are those of wt_pool2d_desc (core/internal.h);
 * wgsl/pool2d.wgsl follows the same ones. */
#include "cpu/cpu.h"

#include <math.h>
#include <stdint.h>

/* Rows (or columns) [*lo, *hi) read by output position o along an axis
 * of n inputs, and for average pooling the count the divisor takes. */
static void axis_window(const wt_pool2d_desc *d, bool rows, int64_t o, int64_t n, int64_t *lo,
                        int64_t *hi, int64_t *padded)
{
    const wt_window2d *w = &d->win;
    const int64_t outs = rows ? w->out_h : w->out_w;
    if (d->op == WT_POOL_ADAPTIVE_AVG || d->op == WT_POOL_ADAPTIVE_MAX) {
        *lo = o * n / outs;
        *hi = ((o + 1) * n + outs - 1) / outs;
        *padded = *hi - *lo;
        return;
    }
    const int64_t k = rows ? w->kernel_h : w->kernel_w, s = rows ? w->stride_h : w->stride_w;
    const int64_t before = rows ? w->pad_top : w->pad_left, after = rows ? w->pad_bottom : w->pad_right;
    int64_t start = o * s - before, end = start + k;
    if (end > n + after) end = n + after;
    *padded = end - start;
    *lo = start > 0 ? start : 0;
    *hi = end < n ? end : n;
}

wt_status cpu_pool2d(wt_context *ctx, const wt_pool2d_desc *d, const wt_tensor *x, wt_tensor *out,
                     wt_tensor *indices)
{
    wt_status st = cpu_check_f32("pool2d", x);
    if (st != WT_OK || (st = cpu_check_f32("pool2d", out)) != WT_OK) return st;
    if (indices && indices->dtype != WT_I32)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "cpu: pool2d: indices must be i32");
    const wt_window2d *w = &d->win;
    const int64_t C = x->shape[1], H = x->shape[2], W = x->shape[3];
    const int64_t OH = w->out_h, OW = w->out_w, planes = x->shape[0] * C;
    const bool is_max = d->op == WT_POOL_MAX || d->op == WT_POOL_ADAPTIVE_MAX;
    const bool adaptive = d->op == WT_POOL_ADAPTIVE_MAX || d->op == WT_POOL_ADAPTIVE_AVG;
    const float *xd = cpu_data(x);
    float *od = cpu_data(out);
    int32_t *id = indices ? (int32_t *)indices->storage->host + indices->offset : NULL;
    const int64_t *xs = x->strides;
#pragma omp parallel for num_threads(cpu_threads(ctx)) schedule(static) if (out->numel * 4 >= CPU_PARALLEL_MIN)
    for (int64_t p = 0; p < planes; p++) {
        const float *plane = xd + (p / C) * xs[0] + (p % C) * xs[1];
        for (int64_t oy = 0; oy < OH; oy++) {
            int64_t y0, y1, ph;
            axis_window(d, true, oy, H, &y0, &y1, &ph);
            for (int64_t ox = 0; ox < OW; ox++) {
                int64_t x0, x1, pw;
                axis_window(d, false, ox, W, &x0, &x1, &pw);
                const int64_t o = (p * OH + oy) * OW + ox;
                if (!is_max) {
                    double sum = 0.0;
                    for (int64_t y = y0; y < y1; y++)
                        for (int64_t xx = x0; xx < x1; xx++) sum += plane[y * xs[2] + xx * xs[3]];
                    int64_t div = d->divisor > 0 ? d->divisor
                                  : (d->count_include_pad && !adaptive) ? ph * pw
                                                                        : (y1 - y0) * (x1 - x0);
                    od[o] = (float)(sum / (double)div);
                    continue;
                }
                /* Max: walk the taps (dilated) that land inside. */
                const int64_t dy = adaptive ? 1 : w->dilation_h, dx = adaptive ? 1 : w->dilation_w;
                int64_t ys = adaptive ? y0 : oy * w->stride_h - w->pad_top;
                int64_t xs0 = adaptive ? x0 : ox * w->stride_w - w->pad_left;
                int64_t ye = adaptive ? y1 : ys + (w->kernel_h - 1) * dy + 1;
                int64_t xe = adaptive ? x1 : xs0 + (w->kernel_w - 1) * dx + 1;
                while (ys < 0) ys += dy;
                while (xs0 < 0) xs0 += dx;
                if (ye > H) ye = H;
                if (xe > W) xe = W;
                float m = -INFINITY;
                int64_t best = ys * W + xs0;
                for (int64_t y = ys; y < ye; y += dy)
                    for (int64_t xx = xs0; xx < xe; xx += dx) {
                        const float v = plane[y * xs[2] + xx * xs[3]];
                        if (v > m || isnan(v)) m = v, best = y * W + xx;
                    }
                od[o] = m;
                if (id) id[o] = (int32_t)best;
            }
        }
    }
    return WT_OK;
}
