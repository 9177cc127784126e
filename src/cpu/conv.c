/* CPU im2col and col2im, the data movement around the convolutions'
 * matrix products (api/conv.c; the products go to OpenBLAS). */
#include "cpu/cpu.h"

#include <string.h>

/* The output columns [*lo, *hi) whose input column ox*stride + x0 lies in
 * [0, W): the taps of one kernel column that land inside the plane. */
static void inside(int64_t x0, int64_t stride, int64_t W, int64_t OW, int64_t *lo, int64_t *hi)
{
    int64_t a = x0 >= 0 ? 0 : (-x0 + stride - 1) / stride;
    int64_t b = W - x0 <= 0 ? 0 : (W - x0 + stride - 1) / stride;
    *lo = a < OW ? a : OW;
    *hi = b < OW ? b : OW;
    if (*hi < *lo) *hi = *lo;
}

wt_status cpu_im2col(wt_context *ctx, const wt_tensor *x, const wt_window2d *win, int64_t row0,
                     int64_t rows, wt_tensor *col)
{
    wt_status st = cpu_check_f32("im2col", x);
    if (st != WT_OK || (st = cpu_check_f32("im2col", col)) != WT_OK) return st;
    const int64_t N = x->shape[0], C = x->shape[1], H = x->shape[2], W = x->shape[3];
    const int64_t KH = win->kernel_h, KW = win->kernel_w, OW = win->out_w, sw = win->stride_w;
    const int64_t nrows = C * KH * KW, ncols = N * rows * OW;
    if (col->numel != nrows * ncols)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "cpu: im2col: col has %lld elements, wanted %lld",
                       (long long)col->numel, (long long)(nrows * ncols));
    const float *xd = cpu_data(x);
    float *cd = cpu_data(col);
    const int64_t *xs = x->strides;
    /* One row of col per task: a channel and a kernel tap, every image. */
#pragma omp parallel for num_threads(cpu_threads(ctx)) schedule(static) if (nrows * ncols >= CPU_PARALLEL_MIN)
    for (int64_t r = 0; r < nrows; r++) {
        const int64_t c = r / (KH * KW), ky = (r / KW) % KH, kx = r % KW;
        const int64_t x0 = kx * win->dilation_w - win->pad_left;
        int64_t lo, hi;
        inside(x0, sw, W, OW, &lo, &hi);
        float *dst = cd + r * ncols;
        for (int64_t i = 0; i < N; i++) {
            const float *plane = xd + i * xs[0] + c * xs[1];
            for (int64_t oy = 0; oy < rows; oy++, dst += OW) {
                const int64_t iy = (row0 + oy) * win->stride_h - win->pad_top + ky * win->dilation_h;
                if (iy < 0 || iy >= H) {
                    memset(dst, 0, sizeof(float) * (size_t)OW);
                    continue;
                }
                const float *line = plane + iy * xs[2] + x0 * xs[3];
                memset(dst, 0, sizeof(float) * (size_t)lo);
                if (sw == 1 && xs[3] == 1)
                    memcpy(dst + lo, line + lo, sizeof(float) * (size_t)(hi - lo));
                else
                    for (int64_t ox = lo; ox < hi; ox++) dst[ox] = line[ox * sw * xs[3]];
                memset(dst + hi, 0, sizeof(float) * (size_t)(OW - hi));
            }
        }
    }
    return WT_OK;
}

wt_status cpu_col2im(wt_context *ctx, const wt_tensor *col, const wt_tensor *bias,
                     const wt_window2d *win, wt_tensor *out)
{
    wt_status st = cpu_check_f32("col2im", col);
    if (st != WT_OK || (st = cpu_check_f32("col2im", out)) != WT_OK ||
        (bias && (st = cpu_check_f32("col2im", bias)) != WT_OK))
        return st;
    const int64_t N = out->shape[0], C = out->shape[1], H = out->shape[2], W = out->shape[3];
    const int64_t KH = win->kernel_h, KW = win->kernel_w, OH = win->out_h, OW = win->out_w;
    const int64_t ncols = N * OH * OW;
    if (col->numel != C * KH * KW * ncols || H != win->in_h || W != win->in_w)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "cpu: col2im: col or out does not fit the window");
    const float *cd = cpu_data(col);
    const float *bd = bias ? cpu_data(bias) : NULL;
    float *od = cpu_data(out);
    const int64_t *os = out->strides;
    /* A plane of out per task, so that no two tasks add into one place:
     * set to the bias, then every tap's columns added where they land. */
#pragma omp parallel for num_threads(cpu_threads(ctx)) schedule(static) if (col->numel >= CPU_PARALLEL_MIN)
    for (int64_t plane = 0; plane < N * C; plane++) {
        const int64_t i = plane / C, c = plane % C;
        float *o = od + i * os[0] + c * os[1];
        const float b = bd ? bd[c * bias->strides[0]] : 0.0f;
        for (int64_t y = 0; y < H; y++)
            for (int64_t x = 0; x < W; x++) o[y * os[2] + x * os[3]] = b;
        for (int64_t ky = 0; ky < KH; ky++)
            for (int64_t kx = 0; kx < KW; kx++) {
                const float *src = cd + ((c * KH + ky) * KW + kx) * ncols + i * OH * OW;
                const int64_t x0 = kx * win->dilation_w - win->pad_left, sx = win->stride_w * os[3];
                int64_t lo, hi;
                inside(x0, win->stride_w, W, OW, &lo, &hi);
                for (int64_t oy = 0; oy < OH; oy++) {
                    const int64_t y = oy * win->stride_h - win->pad_top + ky * win->dilation_h;
                    if (y < 0 || y >= H) continue;
                    float *line = o + y * os[2] + x0 * os[3];
                    const float *s = src + oy * OW;
                    for (int64_t ox = lo; ox < hi; ox++) line[ox * sx] += s[ox];
                }
            }
    }
    return WT_OK;
}

/* Direct convolution for one input channel per group (depthwise and its
 * channel multipliers), where im2col would feed BLAS products of one row:
 * a plane of out per task, each kernel tap added along whole rows. Other
 * shapes go back to the API's im2col + matmul. */
wt_status cpu_conv2d(wt_context *ctx, const wt_tensor *x, const wt_tensor *w, const wt_tensor *bias,
                     const wt_window2d *win, int64_t groups, wt_tensor *out)
{
    const int64_t C = x->shape[1], O = w->shape[0];
    if (C != groups)
        return wt_fail(WT_ERR_UNSUPPORTED, "cpu: conv2d: %lld channels per group go to im2col",
                       (long long)(C / groups));
    wt_status st = cpu_check_f32("conv2d", x);
    if (st != WT_OK || (st = cpu_check_f32("conv2d", w)) != WT_OK ||
        (bias && (st = cpu_check_f32("conv2d", bias)) != WT_OK) || (st = cpu_check_f32("conv2d", out)) != WT_OK)
        return st;
    const int64_t N = x->shape[0], H = x->shape[2], W = x->shape[3], OH = win->out_h, OW = win->out_w;
    const int64_t KH = win->kernel_h, KW = win->kernel_w, Og = O / groups, sw = win->stride_w;
    const float *xd = cpu_data(x), *wd = cpu_data(w), *bd = bias ? cpu_data(bias) : NULL;
    float *od = cpu_data(out);
    const int64_t *xs = x->strides;
#pragma omp parallel for num_threads(cpu_threads(ctx)) schedule(static) if (out->numel * KH * KW >= CPU_PARALLEL_MIN)
    for (int64_t plane = 0; plane < N * O; plane++) {
        const int64_t n = plane / O, o = plane % O;
        const float *in = xd + n * xs[0] + (o / Og) * xs[1];
        float *dst = od + plane * OH * OW;
        const float b = bd ? bd[o] : 0.0f;
        for (int64_t i = 0; i < OH * OW; i++) dst[i] = b;
        for (int64_t ky = 0; ky < KH; ky++)
            for (int64_t kx = 0; kx < KW; kx++) {
                const float wv = wd[(o * KH + ky) * KW + kx];
                const int64_t x0 = kx * win->dilation_w - win->pad_left;
                int64_t lo, hi;
                inside(x0, sw, W, OW, &lo, &hi);
                for (int64_t oy = 0; oy < OH; oy++) {
                    const int64_t iy = oy * win->stride_h - win->pad_top + ky * win->dilation_h;
                    if (iy < 0 || iy >= H) continue;
                    const float *line = in + iy * xs[2] + x0 * xs[3];
                    float *row = dst + oy * OW;
                    if (sw == 1 && xs[3] == 1)
                        for (int64_t ox = lo; ox < hi; ox++) row[ox] += wv * line[ox];
                    else
                        for (int64_t ox = lo; ox < hi; ox++) row[ox] += wv * line[ox * sw * xs[3]];
                }
            }
    }
    return WT_OK;
}
