/* Backward of conv2d, max_pool2d and avg_pool2d against central finite
 * differences of float64 forward passes written here with direct loops.
 *
 *   training_conv <cpu|vulkan|gles>
 */
#include "grad_check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double *to_double(const float *f, size_t n)
{
    double *d = malloc(n * sizeof *d);
    for (size_t i = 0; i < n; i++) d[i] = f[i];
    return d;
}

static float *uniform(size_t n, float lo, float hi)
{
    float *f = malloc(n * sizeof *f);
    for (size_t i = 0; i < n; i++) f[i] = test_rng_uniform(lo, hi);
    return f;
}

/* ------------------------------------------------------------------ conv */

typedef struct conv_case {
    const char *name;
    int64_t n, c, h, w, o, kh, kw, groups;
    int64_t stride[2], dil[2], pad[4]; /* top, bottom, left, right */
    bool same;
} conv_case;

typedef struct conv_ref {
    const conv_case *k;
    int64_t ho, wo, pad[4];
    double *x, *w, *b;
    const double *dy;
} conv_ref;

/* sum(dy * conv2d(x, w) + b), direct loops in float64. */
static double conv_loss(const conv_ref *r)
{
    const conv_case *k = r->k;
    int64_t cg = k->c / k->groups, og = k->o / k->groups;
    double total = 0;
    for (int64_t n = 0; n < k->n; n++)
        for (int64_t o = 0; o < k->o; o++)
            for (int64_t y = 0; y < r->ho; y++)
                for (int64_t xx = 0; xx < r->wo; xx++) {
                    double s = r->b[o];
                    int64_t g = o / og;
                    for (int64_t ci = 0; ci < cg; ci++)
                        for (int64_t ky = 0; ky < k->kh; ky++)
                            for (int64_t kx = 0; kx < k->kw; kx++) {
                                int64_t iy = y * k->stride[0] - r->pad[0] + ky * k->dil[0];
                                int64_t ix = xx * k->stride[1] - r->pad[2] + kx * k->dil[1];
                                if (iy < 0 || iy >= k->h || ix < 0 || ix >= k->w) continue;
                                s += r->x[((n * k->c + g * cg + ci) * k->h + iy) * k->w + ix] *
                                     r->w[((o * cg + ci) * k->kh + ky) * k->kw + kx];
                            }
                    total += r->dy[((n * k->o + o) * r->ho + y) * r->wo + xx] * s;
                }
    return total;
}

static void fd(conv_ref *r, double *p, size_t n, double *grad)
{
    const double h = 1e-6;
    for (size_t i = 0; i < n; i++) {
        double keep = p[i];
        p[i] = keep + h;
        double up = conv_loss(r);
        p[i] = keep - h;
        double dn = conv_loss(r);
        p[i] = keep;
        grad[i] = (up - dn) / (2 * h);
    }
}

static void conv_case_run(const conv_case *k)
{
    conv_ref r = {k, 0, 0, {0}, NULL, NULL, NULL, NULL};
    int64_t ins[2] = {k->h, k->w}, ks[2] = {k->kh, k->kw};
    for (int a = 0; a < 2; a++) {
        if (k->same) {
            int64_t out = (ins[a] + k->stride[a] - 1) / k->stride[a];
            int64_t tot = (out - 1) * k->stride[a] + k->dil[a] * (ks[a] - 1) + 1 - ins[a];
            if (tot < 0) tot = 0;
            r.pad[2 * a] = tot / 2;
            r.pad[2 * a + 1] = tot - tot / 2;
        } else {
            r.pad[2 * a] = k->pad[2 * a];
            r.pad[2 * a + 1] = k->pad[2 * a + 1];
        }
    }
    r.ho = (k->h + r.pad[0] + r.pad[1] - k->dil[0] * (k->kh - 1) - 1) / k->stride[0] + 1;
    r.wo = (k->w + r.pad[2] + r.pad[3] - k->dil[1] * (k->kw - 1) - 1) / k->stride[1] + 1;
    size_t nx = (size_t)(k->n * k->c * k->h * k->w), nw = (size_t)(k->o * (k->c / k->groups) * k->kh * k->kw);
    size_t ny = (size_t)(k->n * k->o * r.ho * r.wo);
    float *x = uniform(nx, -1, 1), *w = uniform(nw, -1, 1), *dy = uniform(ny, -1, 1), *b = uniform((size_t)k->o, -1, 1);
    r.x = to_double(x, nx);
    r.w = to_double(w, nw);
    r.b = to_double(b, (size_t)k->o);
    r.dy = to_double(dy, ny);
    double *gx = malloc(nx * 8), *gw = malloc(nw * 8), *gb = malloc((size_t)k->o * 8);
    fd(&r, r.x, nx, gx);
    fd(&r, r.w, nw, gw);
    fd(&r, r.b, (size_t)k->o, gb);
    int64_t xs[4] = {k->n, k->c, k->h, k->w}, wsh[4] = {k->o, k->c / k->groups, k->kh, k->kw};
    int64_t ys[4] = {k->n, k->o, r.ho, r.wo};
    wt_tensor *tx = make(4, xs, x), *tw = make(4, wsh, w), *ty = make(4, ys, dy);
    wt_conv_options o;
    wt_conv_options_init(&o);
    memcpy(o.stride, k->stride, sizeof o.stride);
    memcpy(o.dilation, k->dil, sizeof o.dilation);
    memcpy(o.padding, k->pad, sizeof o.padding);
    o.groups = k->groups;
    o.same = k->same;
    wt_tensor *dx = NULL, *dw = NULL, *db = NULL;
    CHECK(wt_conv2d_backward(tx, tw, ty, &o, &dx, &dw, &db) == WT_OK, "%s: %s", k->name, wt_last_error());
    char what[128];
    float *got = read_all(dx, nx);
    snprintf(what, sizeof what, "conv2d %s dx vs finite differences", k->name);
    close_all(what, got, gx, nx, 1e-3, 1e-4);
    free(got);
    got = read_all(dw, nw);
    snprintf(what, sizeof what, "conv2d %s dw vs finite differences", k->name);
    close_all(what, got, gw, nw, 1e-3, 1e-4);
    free(got);
    got = read_all(db, (size_t)k->o);
    snprintf(what, sizeof what, "conv2d %s dbias vs finite differences", k->name);
    close_all(what, got, gb, (size_t)k->o, 1e-3, 1e-4);
    free(got);
    wt_tensor_release(dx);
    wt_tensor_release(dw);
    wt_tensor_release(db);
    wt_tensor_release(tx);
    wt_tensor_release(tw);
    wt_tensor_release(ty);
    free(x); free(w); free(dy); free(b); free(r.x); free(r.w); free(r.b); free((void *)r.dy);
    free(gx); free(gw); free(gb);
}

static void test_conv(void)
{
    static const conv_case cases[] = {
        {"plain 3x3", 2, 3, 6, 5, 4, 3, 3, 1, {1, 1}, {1, 1}, {1, 1, 1, 1}, false},
        {"groups, stride, dilation, asymmetric pad", 2, 4, 7, 6, 6, 3, 2, 2, {2, 1}, {1, 2}, {1, 0, 2, 1}, false},
        {"depthwise stride 2", 1, 3, 7, 7, 3, 3, 3, 3, {2, 2}, {1, 1}, {1, 1, 1, 1}, false},
        {"same", 1, 3, 5, 6, 4, 3, 3, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}, true},
        {"stride > kernel, unused rows", 2, 2, 9, 8, 3, 2, 2, 1, {3, 3}, {1, 1}, {0, 0, 0, 0}, false},
        {"1x1", 3, 5, 4, 3, 2, 1, 1, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}, false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) conv_case_run(&cases[i]);
    /* Bad input. */
    int64_t xs[4] = {1, 2, 4, 4}, wsh[4] = {3, 1, 3, 3}, ys[4] = {1, 3, 2, 2}, y3[3] = {3, 2, 2};
    float z[64] = {0};
    wt_tensor *tx = make(4, xs, z), *tw = make(4, wsh, z), *ty = make(4, ys, z), *t3 = make(3, y3, z), *dx = NULL;
    CHECK(wt_conv2d_backward(tx, tw, ty, NULL, &dx, NULL, NULL) == WT_ERR_SHAPE && !dx, "w channels do not fit x");
    wt_tensor_release(tw);
    int64_t w2[4] = {3, 2, 3, 3};
    tw = make(4, w2, z);
    CHECK(wt_conv2d_backward(tx, tw, t3, NULL, &dx, NULL, NULL) == WT_ERR_SHAPE, "3-D dy refused");
    int64_t bad[4] = {1, 3, 3, 2};
    wt_tensor *tb = make(4, bad, z);
    CHECK(wt_conv2d_backward(tx, tw, tb, NULL, &dx, NULL, NULL) == WT_ERR_SHAPE, "dy not conv2d's output shape");
    CHECK(wt_conv2d_backward(tx, tw, ty, NULL, &dx, NULL, NULL) == WT_OK, "the right shape works");
    wt_tensor_release(dx);
    wt_tensor_release(tb);
    wt_tensor_release(t3);
    wt_tensor_release(tx);
    wt_tensor_release(tw);
    wt_tensor_release(ty);
}

/* --------------------------------------------------------------- pooling */

typedef struct pool_ref {
    int64_t n, c, h, w, ho, wo;
    const wt_pool_options *o;
    bool max;
    double *x;
    const double *dy;
} pool_ref;

static double pool_loss(const pool_ref *r)
{
    const wt_pool_options *o = r->o;
    double total = 0;
    for (int64_t p = 0; p < r->n * r->c; p++)
        for (int64_t oy = 0; oy < r->ho; oy++)
            for (int64_t ox = 0; ox < r->wo; ox++) {
                int64_t hs = oy * o->stride[0] - o->padding[0], ws = ox * o->stride[1] - o->padding[1];
                double acc = r->max ? -INFINITY : 0;
                int64_t in = 0;
                for (int64_t ky = 0; ky < o->kernel[0]; ky++)
                    for (int64_t kx = 0; kx < o->kernel[1]; kx++) {
                        int64_t y = hs + ky, x = ws + kx;
                        if (y < 0 || y >= r->h || x < 0 || x >= r->w) continue;
                        double v = r->x[(p * r->h + y) * r->w + x];
                        acc = r->max ? (v > acc ? v : acc) : acc + v;
                        in++;
                    }
                if (!r->max) {
                    int64_t he = hs + o->kernel[0], we = ws + o->kernel[1];
                    if (he > r->h + o->padding[0]) he = r->h + o->padding[0];
                    if (we > r->w + o->padding[1]) we = r->w + o->padding[1];
                    double div = (double)((he - hs) * (we - ws));
                    if (!o->count_include_pad) div = (double)in;
                    acc /= div;
                }
                total += r->dy[(p * r->ho + oy) * r->wo + ox] * acc;
            }
    return total;
}

static void pool_case(const char *name, bool max, int64_t n, int64_t c, int64_t h, int64_t w, int64_t k, int64_t s,
                      int64_t pad, bool ceil_mode, bool include_pad)
{
    wt_pool_options o;
    wt_pool_options_init(&o);
    o.kernel[0] = o.kernel[1] = k;
    o.stride[0] = o.stride[1] = s;
    o.padding[0] = o.padding[1] = pad;
    o.ceil_mode = ceil_mode;
    o.count_include_pad = include_pad;
    size_t nx = (size_t)(n * c * h * w);
    float *x = uniform(nx, -1, 1);
    int64_t xs[4] = {n, c, h, w};
    wt_tensor *tx = make(4, xs, x), *y = NULL, *idx = NULL;
    wt_status st = max ? wt_max_pool2d(tx, &o, &y, &idx) : wt_avg_pool2d(tx, &o, &y);
    CHECK(st == WT_OK, "%s forward: %s", name, wt_last_error());
    if (st != WT_OK) {
        wt_tensor_release(tx);
        free(x);
        return;
    }
    int64_t ho = wt_tensor_shape(y)[2], wo = wt_tensor_shape(y)[3];
    size_t ny = (size_t)(n * c * ho * wo);
    float *dy = uniform(ny, -1, 1);
    pool_ref r = {n, c, h, w, ho, wo, &o, max, to_double(x, nx), to_double(dy, ny)};
    double *want = malloc(nx * 8);
    for (size_t i = 0; i < nx; i++) {
        const double hh = 1e-6;
        double keep = r.x[i];
        r.x[i] = keep + hh;
        double up = pool_loss(&r);
        r.x[i] = keep - hh;
        double dn = pool_loss(&r);
        r.x[i] = keep;
        want[i] = (up - dn) / (2 * hh);
    }
    wt_tensor *ty = make(4, wt_tensor_shape(y), dy), *dx = NULL;
    st = max ? wt_max_pool2d_backward(ty, idx, tx, &dx) : wt_avg_pool2d_backward(ty, tx, &o, &dx);
    CHECK(st == WT_OK, "%s backward: %s", name, wt_last_error());
    float *got = read_all(dx, nx);
    char what[128];
    snprintf(what, sizeof what, "%s dx vs finite differences", name);
    close_all(what, got, want, nx, 1e-4, 1e-5);
    free(got);
    wt_tensor_release(dx);
    wt_tensor_release(ty);
    wt_tensor_release(y);
    wt_tensor_release(idx);
    wt_tensor_release(tx);
    free(x); free(dy); free(r.x); free((void *)r.dy); free(want);
}

static void test_pool(void)
{
    pool_case("max_pool2d 2x2", true, 2, 3, 8, 6, 2, 2, 0, false, true);
    pool_case("max_pool2d 3x3 stride 2 pad 1 (overlapping)", true, 2, 2, 7, 9, 3, 2, 1, false, true);
    pool_case("max_pool2d ceil_mode", true, 1, 2, 7, 6, 3, 2, 0, true, true);
    pool_case("avg_pool2d 2x2", false, 2, 3, 8, 6, 2, 2, 0, false, true);
    pool_case("avg_pool2d 3x3 stride 2 pad 1 include pad", false, 2, 2, 7, 9, 3, 2, 1, false, true);
    pool_case("avg_pool2d 3x3 stride 2 pad 1 exclude pad ceil", false, 1, 2, 7, 6, 3, 2, 1, true, false);
    pool_case("avg_pool2d stride > kernel", false, 1, 2, 9, 9, 2, 3, 0, false, true);
    /* Bad input. */
    int64_t xs[4] = {1, 1, 4, 4}, ys[4] = {1, 1, 2, 2};
    float z[16] = {0};
    wt_tensor *tx = make(4, xs, z), *ty = make(4, ys, z), *dx = (wt_tensor *)1;
    CHECK(wt_max_pool2d_backward(ty, ty, tx, &dx) == WT_ERR_INVALID_ARGUMENT && !dx, "float indices refused");
    CHECK(wt_avg_pool2d_backward(ty, tx, NULL, &dx) == WT_ERR_INVALID_ARGUMENT, "avg without options refused");
    wt_tensor_release(tx);
    wt_tensor_release(ty);
}

int main(int argc, char **argv)
{
    test_run run;
    if (!test_begin(&run, "training_conv", argc, argv)) return run.status;
    g_ctx = run.ctx;
    test_conv();
    test_pool();
    return test_end(&run);
}
