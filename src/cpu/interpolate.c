/* Resampling of [N, C, H, W] planes on the CPU (wt_interp2d): the taps of
 * every output row and column are computed once per call, in f32 as
 * PyTorch's kernels do, and shared by every plane. The backward gathers:
 * each input pixel sums the outputs that read it, so rows run in parallel
 * without atomics and every sum has one order. */
#include "cpu/cpu.h"

#include <math.h>
#include <stdlib.h>

/* Output index o reads input indices i0 and i1 with weights w0 and w1
 * (nearest: i1 == i0, w1 == 0, never multiplied). */
typedef struct tap {
    int64_t i0, i1;
    float w0, w1;
} tap;

static tap tap_of(const wt_interp2d *p, float scale, int64_t o, int64_t in)
{
    if (!p->linear) {
        int64_t i = (int64_t)floorf((float)o * scale);
        if (i > in - 1) i = in - 1;
        return (tap){i, i, 1.0f, 0.0f};
    }
    float r = p->align_corners ? scale * (float)o : scale * ((float)o + 0.5f) - 0.5f;
    if (r < 0.0f) r = 0.0f;
    int64_t i = (int64_t)r;
    /* Only a rounding of r past the last index needs this (never read
     * outside the plane). */
    if (i > in - 1) i = in - 1;
    float l1 = r - (float)i;
    l1 = l1 < 0.0f ? 0.0f : l1 > 1.0f ? 1.0f : l1;
    return (tap){i, i < in - 1 ? i + 1 : i, 1.0f - l1, l1};
}

/* What output o gives to input i. */
static float weight_to(const tap *t, int64_t i)
{
    return (t->i0 == i ? t->w0 : 0.0f) + (t->i1 == i ? t->w1 : 0.0f);
}

/* The taps of n_out outputs along one axis; with lo/hi (backward), the
 * outputs [lo[i], hi[i]) that read input i (an empty range: none). */
static void axis_taps(const wt_interp2d *p, float scale, int64_t n_out, int64_t n_in, tap *taps, int64_t *lo,
                      int64_t *hi)
{
    for (int64_t o = 0; o < n_out; o++) taps[o] = tap_of(p, scale, o, n_in);
    if (!lo) return;
    for (int64_t i = 0; i < n_in; i++) lo[i] = n_out, hi[i] = 0;
    /* An input's readers are contiguous (the source index never falls as
     * o grows), so the first and the last bound them. */
    for (int64_t o = 0; o < n_out; o++) {
        const int64_t ii[2] = {taps[o].i0, taps[o].i1};
        for (int k = 0; k < 2; k++) {
            if (o < lo[ii[k]]) lo[ii[k]] = o;
            if (o + 1 > hi[ii[k]]) hi[ii[k]] = o + 1;
        }
    }
}

/* src [N, C, SH, SW] (any strides) -> out [N, C, DH, DW] contiguous. The
 * forward pass has src = x, out = the result; the backward src = dy, out
 * = dx, and the taps are those of the forward (dy's axes). */
wt_status cpu_interpolate(wt_context *ctx, const wt_interp2d *p, bool backward, const wt_tensor *src,
                          wt_tensor *out)
{
    wt_status st = cpu_check_f32("interpolate", src);
    if (st != WT_OK || (st = cpu_check_f32("interpolate", out)) != WT_OK) return st;
    const int64_t C = src->shape[1], planes = out->shape[0] * C;
    /* The forward pass's input (H, W) and output (OH, OW) extents. */
    const int64_t H = backward ? out->shape[2] : src->shape[2], W = backward ? out->shape[3] : src->shape[3];
    const int64_t OH = backward ? src->shape[2] : out->shape[2], OW = backward ? src->shape[3] : out->shape[3];
    const size_t n_tabs = (size_t)(OH + OW), n_ranges = backward ? (size_t)(2 * (H + W)) : 0;
    tap *taps = malloc(sizeof(tap) * n_tabs);
    int64_t *ranges = n_ranges ? malloc(sizeof(int64_t) * n_ranges) : NULL;
    if (!taps || (n_ranges && !ranges)) {
        free(taps);
        free(ranges);
        return wt_fail(WT_ERR_OUT_OF_MEMORY, "cpu: interpolate: cannot allocate the tap tables");
    }
    tap *ty = taps, *tx = taps + OH;
    int64_t *lo_y = ranges, *hi_y = ranges ? ranges + H : NULL;
    int64_t *lo_x = ranges ? ranges + 2 * H : NULL, *hi_x = ranges ? ranges + 2 * H + W : NULL;
    axis_taps(p, p->scale_h, OH, H, ty, lo_y, hi_y);
    axis_taps(p, p->scale_w, OW, W, tx, lo_x, hi_x);

    const float *sd = cpu_data(src);
    float *od = cpu_data(out);
    const int64_t *ss = src->strides;
    const int64_t rows = planes * out->shape[2], cols = out->shape[3];
    const int threads = out->numel >= CPU_PARALLEL_MIN ? cpu_threads(ctx) : 1;
    if (!backward) {
#pragma omp parallel for num_threads(threads) schedule(static)
        for (int64_t r = 0; r < rows; r++) {
            const int64_t pl = r / OH, oy = r % OH;
            const float *plane = sd + (pl / C) * ss[0] + (pl % C) * ss[1];
            const float *x0 = plane + ty[oy].i0 * ss[2], *x1 = plane + ty[oy].i1 * ss[2];
            float *o = od + r * cols;
            if (!p->linear) {
                for (int64_t ox = 0; ox < OW; ox++) o[ox] = x0[tx[ox].i0 * ss[3]];
                continue;
            }
            const float a = ty[oy].w0, b = ty[oy].w1;
            for (int64_t ox = 0; ox < OW; ox++) {
                const tap *t = &tx[ox];
                const int64_t c0 = t->i0 * ss[3], c1 = t->i1 * ss[3];
                o[ox] = a * (t->w0 * x0[c0] + t->w1 * x0[c1]) + b * (t->w0 * x1[c0] + t->w1 * x1[c1]);
            }
        }
    } else {
#pragma omp parallel for num_threads(threads) schedule(static)
        for (int64_t r = 0; r < rows; r++) {
            const int64_t pl = r / H, iy = r % H;
            const float *plane = sd + (pl / C) * ss[0] + (pl % C) * ss[1];
            float *o = od + r * cols;
            for (int64_t ix = 0; ix < W; ix++) {
                float sum = 0.0f;
                for (int64_t oy = lo_y[iy]; oy < hi_y[iy]; oy++) {
                    const float *g = plane + oy * ss[2];
                    float row = 0.0f;
                    for (int64_t ox = lo_x[ix]; ox < hi_x[ix]; ox++)
                        row += weight_to(&tx[ox], ix) * g[ox * ss[3]];
                    sum += weight_to(&ty[oy], iy) * row;
                }
                o[ix] = sum;
            }
        }
    }
    free(taps);
    free(ranges);
    return WT_OK;
}
