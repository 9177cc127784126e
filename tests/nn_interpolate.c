/* wt_interpolate / wt_upsample2d / wt_interpolate_backward against float64
 * references written here from PyTorch's definition of F.interpolate
 * (modes 'nearest' and 'bilinear'), plus values PyTorch prints for small
 * inputs. The backward is checked against a reference that scatters each
 * output's gradient onto its taps (the library gathers) and by the adjoint
 * identity <interp(x), g> == <x, interp_backward(g)>.
 * Usage: nn_interpolate <cpu|vulkan|gles>. */
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static wt_context *g_ctx;

/* ------------------------------------------------------------ reference */

/* One resampling as the reference sees it. */
typedef struct spec {
    wt_interp_mode mode;
    bool align;
    int64_t size[2];   /* 0: scale gives the size */
    double scale[2];
} spec;

static int64_t out_extent(const spec *s, int a, int64_t in)
{
    return s->size[a] ? s->size[a] : (int64_t)floor((double)in * s->scale[a]);
}

/* PyTorch's source taps of output o along an axis of n_in inputs and
 * n_out outputs (aten/src/ATen/native/UpSample.h): its coordinate scale is
 * an f32, and the nearest index is floor of an f32 product (part of the
 * definition: 26 -> 22 rows reads row 12 for output 11, where 11 * 26 / 22
 * = 13 exactly; factor 2.2 reads row 15 for output 33, not 14); the
 * bilinear coordinate is an f32 too (opmath), its weights are then taken
 * in double. */
static void taps(const spec *s, int a, int64_t o, int64_t n_in, int64_t n_out, int64_t i[2], double w[2])
{
    float scale;
    if (s->mode == WT_INTERP_BILINEAR && s->align)
        scale = n_out > 1 ? (float)(n_in - 1) / (float)(n_out - 1) : 0.0f;
    else
        scale = s->size[a] ? (float)n_in / (float)n_out : (float)(1.0 / s->scale[a]);
    if (s->mode == WT_INTERP_NEAREST) {
        const float f = floorf((float)o * scale);
        i[0] = i[1] = (int64_t)f < n_in - 1 ? (int64_t)f : n_in - 1;
        w[0] = 1.0, w[1] = 0.0;
        return;
    }
    const float rf = s->align ? scale * (float)o : scale * ((float)o + 0.5f) - 0.5f;
    double r = rf < 0.0f ? 0.0 : (double)rf;
    int64_t i0 = (int64_t)floor(r);
    if (i0 > n_in - 1) i0 = n_in - 1;
    i[0] = i0;
    i[1] = i0 < n_in - 1 ? i0 + 1 : i0;
    w[1] = r - (double)i0;
    w[0] = 1.0 - w[1];
}

/* out [N, C, OH, OW] from x [N, C, H, W] (row-major doubles). */
static void ref_forward(const spec *s, const double *x, int64_t N, int64_t C, int64_t H, int64_t W, int64_t OH,
                        int64_t OW, double *out)
{
    for (int64_t p = 0; p < N * C; p++)
        for (int64_t oy = 0; oy < OH; oy++) {
            int64_t iy[2], ix[2];
            double wy[2], wx[2];
            taps(s, 0, oy, H, OH, iy, wy);
            for (int64_t ox = 0; ox < OW; ox++) {
                taps(s, 1, ox, W, OW, ix, wx);
                double v = 0.0;
                if (s->mode == WT_INTERP_NEAREST) {
                    v = x[(p * H + iy[0]) * W + ix[0]];
                } else {
                    for (int a = 0; a < 2; a++)
                        for (int b = 0; b < 2; b++) v += wy[a] * wx[b] * x[(p * H + iy[a]) * W + ix[b]];
                }
                out[(p * OH + oy) * OW + ox] = v;
            }
        }
}

/* dx [N, C, H, W] = the adjoint of ref_forward applied to g: each output
 * scatters its gradient onto its taps. */
static void ref_backward(const spec *s, const double *g, int64_t N, int64_t C, int64_t H, int64_t W, int64_t OH,
                         int64_t OW, double *dx)
{
    memset(dx, 0, sizeof(double) * (size_t)(N * C * H * W));
    for (int64_t p = 0; p < N * C; p++)
        for (int64_t oy = 0; oy < OH; oy++) {
            int64_t iy[2], ix[2];
            double wy[2], wx[2];
            taps(s, 0, oy, H, OH, iy, wy);
            for (int64_t ox = 0; ox < OW; ox++) {
                taps(s, 1, ox, W, OW, ix, wx);
                const double v = g[(p * OH + oy) * OW + ox];
                for (int a = 0; a < 2; a++)
                    for (int b = 0; b < 2; b++) dx[(p * H + iy[a]) * W + ix[b]] += wy[a] * wx[b] * v;
            }
        }
}

/* -------------------------------------------------------------- helpers */

/* data (row-major [N, C, H, W]) as a tensor: layout 0 contiguous, 1 the
 * last axis a slice of a wider tensor, 2 the planes stored transposed
 * (a permuted view), 3 every channel an expanded copy of channel 0 (zero
 * stride: data must repeat along C). f16: made as f16. */
static wt_tensor *make(const float *data, const int64_t shape[4], int layout, bool f16)
{
    const int64_t N = shape[0], C = shape[1], H = shape[2], W = shape[3];
    wt_tensor *base = NULL, *t = NULL;
    if (layout == 0 || layout == 3) {
        int64_t s1[4] = {N, layout == 3 ? 1 : C, H, W};
        float *buf = malloc(sizeof(float) * (size_t)(N * s1[1] * H * W + 1));
        for (int64_t n = 0; n < N; n++)
            memcpy(buf + n * s1[1] * H * W, data + n * C * H * W, sizeof(float) * (size_t)(s1[1] * H * W));
        wt_tensor_from_data(g_ctx, WT_F32, 4, s1, buf, &base);
        free(buf);
    } else if (layout == 1) {
        const int64_t pad = 3, wide[4] = {N, C, H, W + pad};
        float *buf = malloc(sizeof(float) * (size_t)(N * C * H * (W + pad)));
        for (int64_t r = 0; r < N * C * H; r++) {
            for (int64_t c = 0; c < pad; c++) buf[r * (W + pad) + c] = 1e6f; /* never read */
            memcpy(buf + r * (W + pad) + pad, data + r * W, sizeof(float) * (size_t)W);
        }
        wt_tensor_from_data(g_ctx, WT_F32, 4, wide, buf, &base);
        free(buf);
    } else {
        const int64_t st[4] = {N, C, W, H};
        float *buf = malloc(sizeof(float) * (size_t)(N * C * H * W));
        for (int64_t p = 0; p < N * C; p++)
            for (int64_t y = 0; y < H; y++)
                for (int64_t x = 0; x < W; x++) buf[(p * W + x) * H + y] = data[(p * H + y) * W + x];
        wt_tensor_from_data(g_ctx, WT_F32, 4, st, buf, &base);
        free(buf);
    }
    if (!base) {
        printf("from_data: %s\n", wt_last_error());
        return NULL;
    }
    if (f16) {
        wt_tensor *h = NULL;
        wt_cast(base, WT_F16, &h);
        wt_tensor_release(base);
        base = h;
    }
    wt_status st = WT_OK;
    if (layout == 0) {
        t = base, base = NULL;
    } else if (layout == 1) {
        st = wt_slice(base, 3, 3, 3 + W, 1, &t);
    } else if (layout == 2) {
        st = wt_transpose(base, 2, 3, &t);
    } else {
        st = wt_expand(base, 4, shape, &t);
    }
    if (st != WT_OK) printf("view: %s\n", wt_last_error());
    wt_tensor_release(base);
    return t;
}

static float *random_floats(int64_t n)
{
    float *v = malloc(sizeof(float) * (size_t)(n > 0 ? n : 1));
    for (int64_t i = 0; i < n; i++) v[i] = test_rng_uniform(-1.0f, 1.0f);
    return v;
}

/* f16 value of v (round to nearest even), as the f16 inputs hold it. */
static double as_f16(double v) { return test_half_to_double(test_double_to_half(v)); }

/* Reads t as f32 (casting an f16 result) and compares with ref within
 * atol + rtol * |ref|. */
static bool compare(const char *name, const wt_tensor *t, const int64_t shape[4], const double *ref, double atol,
                    double rtol)
{
    char err[256], b1[64], b2[64];
    if (!CHECK(t != NULL, "%s: no result", name)) return false;
    if (!CHECK(wt_tensor_ndim(t) == 4 && memcmp(wt_tensor_shape(t), shape, sizeof(int64_t) * 4) == 0,
               "%s: shape %s, expected %s", name, test_shape_str(wt_tensor_ndim(t), wt_tensor_shape(t), b1, sizeof b1),
               test_shape_str(4, shape, b2, sizeof b2)))
        return false;
    wt_tensor *f = NULL;
    if (wt_tensor_dtype(t) != WT_F32 && !CHECK(wt_cast(t, WT_F32, &f) == WT_OK, "%s: cast: %s", name, wt_last_error()))
        return false;
    float *got = test_read_guarded(f ? f : t, err, sizeof err);
    wt_tensor_release(f);
    if (!CHECK(got != NULL, "%s: read: %s", name, err)) return false;
    const int64_t n = shape[0] * shape[1] * shape[2] * shape[3];
    int bad = 0;
    int64_t first = -1;
    for (int64_t i = 0; i < n; i++)
        if (!(fabs((double)got[i] - ref[i]) <= atol + rtol * fabs(ref[i])) && bad++ == 0) first = i;
    bool ok = CHECK(bad == 0, "%s: %d of %lld elements differ; first at %lld: got %.9g, expected %.9g", name, bad,
                    (long long)n, (long long)first, first >= 0 ? got[first] : 0.0, first >= 0 ? ref[first] : 0.0);
    free(got);
    return ok;
}

static double *read_doubles(const wt_tensor *t, int64_t n)
{
    char err[256];
    float *f = test_read_guarded(t, err, sizeof err);
    if (!f) return NULL;
    double *d = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
    for (int64_t i = 0; i < n; i++) d[i] = f[i];
    free(f);
    return d;
}

static wt_interpolate_options options_of(const spec *s)
{
    wt_interpolate_options o;
    wt_interpolate_options_init(&o);
    o.mode = s->mode;
    o.align_corners = s->align;
    o.size[0] = s->size[0], o.size[1] = s->size[1];
    o.scale_factor[0] = s->scale[0], o.scale_factor[1] = s->scale[1];
    return o;
}

/* ------------------------------------------------------------------ cases */

/* Values PyTorch 2.x prints for F.interpolate of [[1, 2], [3, 4]] to 4x4
 * and of [0, 1, 2] (one row) to 5 columns: fixed points of the definition,
 * independent of the reference above. */
static void test_known_values(void)
{
    const float x[4] = {1, 2, 3, 4};
    const int64_t xs[4] = {1, 1, 2, 2}, os[4] = {1, 1, 4, 4};
    const double bilinear[16] = {1.0, 1.25, 1.75, 2.0, 1.5, 1.75, 2.25, 2.5,
                                 2.5, 2.75, 3.25, 3.5, 3.0, 3.25, 3.75, 4.0};
    double aligned[16];
    for (int y = 0; y < 4; y++)
        for (int c = 0; c < 4; c++) aligned[y * 4 + c] = 1.0 + 2.0 * y / 3.0 + c / 3.0;
    const double nearest[16] = {1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4};
    wt_tensor *t = make(x, xs, 0, false), *out = NULL;
    wt_interpolate_options o;
    wt_interpolate_options_init(&o);
    o.mode = WT_INTERP_BILINEAR;
    o.scale_factor[0] = o.scale_factor[1] = 2.0;
    if (CHECK(wt_interpolate(t, &o, &out) == WT_OK, "bilinear 2x: %s", wt_last_error()))
        compare("known bilinear 2x", out, os, bilinear, 1e-6, 0);
    wt_tensor_release(out), out = NULL;
    o.align_corners = true;
    if (CHECK(wt_interpolate(t, &o, &out) == WT_OK, "aligned 2x: %s", wt_last_error()))
        compare("known bilinear align_corners 2x", out, os, aligned, 1e-6, 0);
    wt_tensor_release(out), out = NULL;
    if (CHECK(wt_upsample2d(t, 2.0, WT_INTERP_NEAREST, &out) == WT_OK, "upsample2d: %s", wt_last_error()))
        compare("known upsample2d nearest 2x", out, os, nearest, 0, 0);
    wt_tensor_release(out), out = NULL;
    if (CHECK(wt_upsample2d(t, 2.0, WT_INTERP_BILINEAR, &out) == WT_OK, "upsample2d: %s", wt_last_error()))
        compare("known upsample2d bilinear 2x", out, os, bilinear, 1e-6, 0);
    wt_tensor_release(out), out = NULL;
    wt_tensor_release(t);

    const float r[3] = {0, 1, 2};
    const int64_t rs[4] = {1, 1, 1, 3}, ros[4] = {1, 1, 1, 5};
    const double near5[5] = {0, 0, 1, 1, 2};
    t = make(r, rs, 0, false);
    wt_interpolate_options_init(&o);
    o.size[0] = 1, o.size[1] = 5;
    if (CHECK(wt_interpolate(t, &o, &out) == WT_OK, "nearest 3->5: %s", wt_last_error()))
        compare("known nearest 3 -> 5", out, ros, near5, 0, 0);
    wt_tensor_release(out);
    wt_tensor_release(t);
}

/* One forward case against the reference; f16: x made as f16 (the
 * reference reads the f16 values, the result is f16). */
static void run_forward(const char *name, const spec *s, const int64_t xs[4], int layout, bool f16)
{
    const int64_t N = xs[0], C = xs[1], H = xs[2], W = xs[3], n = N * C * H * W;
    float *x = random_floats(n);
    if (layout == 3) /* every channel as channel 0 */
        for (int64_t i = 0; i < n; i++) x[i] = x[(i / (C * H * W)) * C * H * W + i % (H * W)];
    double *xd = malloc(sizeof(double) * (size_t)n);
    for (int64_t i = 0; i < n; i++) xd[i] = f16 ? as_f16(x[i]) : x[i];
    const int64_t OH = out_extent(s, 0, H), OW = out_extent(s, 1, W), os[4] = {N, C, OH, OW};
    double *ref = malloc(sizeof(double) * (size_t)(N * C * OH * OW));
    ref_forward(s, xd, N, C, H, W, OH, OW, ref);
    wt_tensor *t = make(x, xs, layout, f16), *out = NULL;
    const wt_interpolate_options o = options_of(s);
    char label[160];
    snprintf(label, sizeof label, "%s (%s%s, layout %d%s)", name, s->mode == WT_INTERP_NEAREST ? "nearest" : "bilinear",
             s->align ? " align_corners" : "", layout, f16 ? ", f16" : "");
    if (CHECK(t != NULL && wt_interpolate(t, &o, &out) == WT_OK, "%s: %s", label, wt_last_error())) {
        CHECK(wt_tensor_dtype(out) == (f16 ? WT_F16 : WT_F32), "%s: result dtype %d", label,
              (int)wt_tensor_dtype(out));
        /* Nearest copies (exact); bilinear sums four products in f32, and
         * its coordinate may differ by an ulp (a fused multiply-add) at
         * slopes up to 2; an f16 result is rounded once more. */
        const double ulp = (double)(H > W ? H : W) * 0x1p-23;
        const double atol = s->mode == WT_INTERP_NEAREST ? 0 : 2e-6 + 2.0 * ulp, rtol = f16 ? 1.0 / 1024 : 1e-5;
        compare(label, out, os, ref, f16 && s->mode == WT_INTERP_BILINEAR ? 1e-4 : atol, rtol);
    }
    wt_tensor_release(out);
    wt_tensor_release(t);
    free(ref);
    free(xd);
    free(x);
}

/* One backward case: dx against the scattering reference, and the adjoint
 * identity with the library's own forward pass. */
static void run_backward(const char *name, const spec *s, const int64_t xs[4], int layout, bool f16)
{
    const int64_t N = xs[0], C = xs[1], H = xs[2], W = xs[3], n = N * C * H * W;
    const int64_t OH = out_extent(s, 0, H), OW = out_extent(s, 1, W), os[4] = {N, C, OH, OW};
    const int64_t m = N * C * OH * OW;
    float *g = random_floats(m), *x = random_floats(n);
    if (layout == 3)
        for (int64_t i = 0; i < m; i++) g[i] = g[(i / (C * OH * OW)) * C * OH * OW + i % (OH * OW)];
    double *gd = malloc(sizeof(double) * (size_t)m), *ref = malloc(sizeof(double) * (size_t)n);
    for (int64_t i = 0; i < m; i++) gd[i] = f16 ? as_f16(g[i]) : g[i];
    ref_backward(s, gd, N, C, H, W, OH, OW, ref);
    wt_tensor *tg = make(g, os, layout, f16), *tx = make(x, xs, 0, false), *dx = NULL, *y = NULL;
    const wt_interpolate_options o = options_of(s);
    char label[160];
    snprintf(label, sizeof label, "%s backward (%s%s, layout %d%s)", name,
             s->mode == WT_INTERP_NEAREST ? "nearest" : "bilinear", s->align ? " align_corners" : "", layout,
             f16 ? ", f16 dy" : "");
    if (CHECK(tg && tx && wt_interpolate_backward(tg, tx, &o, &dx) == WT_OK, "%s: %s", label, wt_last_error())) {
        CHECK(wt_tensor_dtype(dx) == WT_F32, "%s: dx is not f32", label);
        /* A pixel sums up to (2 * scale)^2 terms of |g| <= 1 in f32. */
        compare(label, dx, xs, ref, 1e-5, 1e-5);
        double *dxd = read_doubles(dx, n);
        if (CHECK(wt_interpolate(tx, &o, &y) == WT_OK, "%s: forward: %s", label, wt_last_error()) && dxd) {
            double *yd = read_doubles(y, m), lhs = 0.0, rhs = 0.0, mag = 0.0;
            for (int64_t i = 0; yd && i < m; i++) lhs += yd[i] * gd[i], mag += fabs(yd[i] * gd[i]);
            for (int64_t i = 0; i < n; i++) rhs += (double)x[i] * dxd[i];
            CHECK(yd && fabs(lhs - rhs) <= 1e-5 * (mag + 1.0), "%s: <interp(x), g> %.9g != <x, dx> %.9g", label, lhs,
                  rhs);
            free(yd);
        }
        free(dxd);
    }
    wt_tensor_release(y);
    wt_tensor_release(dx);
    wt_tensor_release(tg);
    wt_tensor_release(tx);
    free(ref);
    free(gd);
    free(g);
    free(x);
}

typedef struct shape_case {
    const char *name;
    int64_t x[4];
    int64_t size[2];
    double scale[2];
} shape_case;

/* Up and down, by sizes and by factors (factors whose inverse is not the
 * ratio of the sizes: 1.7, 0.6, 3, 2.2), a single output row, and shapes
 * where PyTorch's f32 index differs from the exact one. */
static const shape_case CASES[] = {
    {"size up", {2, 3, 5, 7}, {11, 16}, {0, 0}},
    {"size down", {2, 2, 9, 13}, {4, 5}, {0, 0}},
    {"size 26 -> 22 (an f32 index)", {1, 2, 26, 5}, {22, 7}, {0, 0}},
    {"size to one row", {1, 2, 6, 5}, {1, 9}, {0, 0}},
    {"scale 2", {1, 3, 4, 5}, {0, 0}, {2.0, 2.0}},
    {"scale 1.7 x 0.6", {2, 2, 10, 10}, {0, 0}, {1.7, 0.6}},
    {"scale 3", {1, 1, 4, 6}, {0, 0}, {3.0, 3.0}},
    {"scale 0.45", {1, 2, 13, 17}, {0, 0}, {0.45, 0.45}},
    {"scale 2.2 (an f32 index)", {1, 1, 16, 3}, {0, 0}, {2.2, 1.0}},
};

static void test_cases(void)
{
    const int ncases = (int)(sizeof CASES / sizeof CASES[0]);
    for (int mode = 0; mode < 3; mode++) {
        spec s = {mode == 0 ? WT_INTERP_NEAREST : WT_INTERP_BILINEAR, mode == 2, {0, 0}, {0, 0}};
        for (int c = 0; c < ncases; c++) {
            const shape_case *k = &CASES[c];
            s.size[0] = k->size[0], s.size[1] = k->size[1];
            s.scale[0] = k->scale[0], s.scale[1] = k->scale[1];
            run_forward(k->name, &s, k->x, c % 3, false); /* contiguous, sliced, transposed */
            run_backward(k->name, &s, k->x, (c + 1) % 3, false);
        }
        /* Zero strides (an expanded channel) and f16. */
        s.size[0] = 7, s.size[1] = 3, s.scale[0] = s.scale[1] = 0;
        const int64_t xs[4] = {2, 3, 4, 6};
        run_forward("expanded", &s, xs, 3, false);
        run_backward("expanded", &s, xs, 3, false);
        run_forward("f16", &s, xs, 0, true);
        run_forward("f16 sliced", &s, xs, 1, true);
        run_backward("f16", &s, xs, 0, true);
        /* Enough elements for the CPU's threads (its planes are larger
         * than the bindings of the cut-into-pieces run). */
        if (!getenv("WT_WINDOW_BYTES")) {
            s.size[0] = 60, s.size[1] = 130;
            const int64_t big[4] = {2, 4, 100, 90};
            run_forward("threaded", &s, big, 1, false);
            run_backward("threaded", &s, big, 2, false);
        }
    }
}

/* NaN and inf: nearest copies them; bilinear spreads them to the outputs
 * that read them (a weight of 0 too, as PyTorch). */
static void test_special(void)
{
    const float x[4] = {NAN, 1.0f, INFINITY, 2.0f};
    const int64_t xs[4] = {1, 1, 1, 4};
    wt_tensor *t = make(x, xs, 0, false), *out = NULL;
    char err[256];
    if (CHECK(wt_upsample2d(t, 2.0, WT_INTERP_NEAREST, &out) == WT_OK, "special nearest: %s", wt_last_error())) {
        float *got = test_read_guarded(out, err, sizeof err);
        CHECK(got && isnan(got[0]) && isnan(got[1]) && got[2] == 1.0f && got[3] == 1.0f && isinf(got[4]) &&
                  got[6] == 2.0f,
              "special nearest: NaN and inf not copied");
        free(got);
    }
    wt_tensor_release(out), out = NULL;
    wt_interpolate_options o;
    wt_interpolate_options_init(&o);
    o.mode = WT_INTERP_BILINEAR;
    o.align_corners = true;
    o.size[0] = 1, o.size[1] = 4; /* the identity map, with weight 0 on the right-hand tap */
    if (CHECK(wt_interpolate(t, &o, &out) == WT_OK, "special bilinear: %s", wt_last_error())) {
        float *got = test_read_guarded(out, err, sizeof err);
        /* Output 1 reads 1 * x[1] + 0 * inf, and output 2 reads inf
         * through its single row twice (weights 1 and 0): NaN both, as
         * PyTorch; output 3 reads 2 alone. */
        CHECK(got && isnan(got[0]) && isnan(got[1]) && isnan(got[2]) && got[3] == 2.0f,
              "special bilinear: got %g %g %g %g", got ? got[0] : 0, got ? got[1] : 0, got ? got[2] : 0,
              got ? got[3] : 0);
        free(got);
    }
    wt_tensor_release(out);
    wt_tensor_release(t);
}

/* Empty batches give empty results; an empty plane is refused. */
static void test_empty(void)
{
    const int64_t xs[4] = {0, 3, 4, 4};
    wt_tensor *t = NULL, *out = NULL, *dx = NULL;
    wt_tensor_zeros(g_ctx, WT_F32, 4, xs, &t);
    if (CHECK(wt_upsample2d(t, 2.0, WT_INTERP_BILINEAR, &out) == WT_OK, "empty batch: %s", wt_last_error())) {
        CHECK(wt_tensor_shape(out)[2] == 8 && wt_tensor_shape(out)[0] == 0, "empty batch: wrong shape");
        wt_interpolate_options o;
        wt_interpolate_options_init(&o);
        o.mode = WT_INTERP_BILINEAR;
        o.scale_factor[0] = o.scale_factor[1] = 2.0;
        CHECK(wt_interpolate_backward(out, t, &o, &dx) == WT_OK && wt_tensor_shape(dx)[1] == 3,
              "empty batch backward: %s", wt_last_error());
    }
    wt_tensor_release(dx);
    wt_tensor_release(out), out = NULL;
    wt_tensor_release(t), t = NULL;
    const int64_t es[4] = {1, 1, 0, 4};
    wt_tensor_zeros(g_ctx, WT_F32, 4, es, &t);
    CHECK(wt_upsample2d(t, 2.0, WT_INTERP_NEAREST, &out) == WT_ERR_SHAPE && out == NULL,
          "empty plane: not refused");
    wt_tensor_release(t);
}

static void expect(wt_status got, wt_status want, const char *what)
{
    CHECK(got == want, "%s: got %s, expected %s (%s)", what, wt_status_string(got), wt_status_string(want),
          wt_last_error());
}

static void test_errors(void)
{
    const int64_t xs[4] = {1, 2, 4, 4}, x3[3] = {2, 4, 4}, ds[4] = {1, 2, 8, 8};
    wt_tensor *x = NULL, *x3d = NULL, *xi = NULL, *dy = NULL, *out = (wt_tensor *)1;
    wt_tensor_zeros(g_ctx, WT_F32, 4, xs, &x);
    wt_tensor_zeros(g_ctx, WT_F32, 3, x3, &x3d);
    wt_tensor_zeros(g_ctx, WT_I32, 4, xs, &xi);
    wt_tensor_zeros(g_ctx, WT_F32, 4, ds, &dy);
    wt_interpolate_options o;
    wt_interpolate_options_init(&o);
    o.scale_factor[0] = o.scale_factor[1] = 2.0;
    expect(wt_interpolate(NULL, &o, &out), WT_ERR_INVALID_ARGUMENT, "NULL x");
    CHECK(out == NULL, "NULL x: out not cleared");
    expect(wt_interpolate(x, NULL, &out), WT_ERR_INVALID_ARGUMENT, "NULL options");
    expect(wt_interpolate(x, &o, NULL), WT_ERR_INVALID_ARGUMENT, "NULL out");
    expect(wt_interpolate(x3d, &o, &out), WT_ERR_SHAPE, "3-D x");
    expect(wt_interpolate(xi, &o, &out), WT_ERR_UNSUPPORTED, "i32 x");
    wt_interpolate_options b = o;
    b.struct_size = 0;
    expect(wt_interpolate(x, &b, &out), WT_ERR_INVALID_ARGUMENT, "struct_size 0");
    b = o, b.size[0] = 3, b.size[1] = 3;
    expect(wt_interpolate(x, &b, &out), WT_ERR_INVALID_ARGUMENT, "size and scale both");
    b = o, b.scale_factor[0] = b.scale_factor[1] = 0;
    expect(wt_interpolate(x, &b, &out), WT_ERR_INVALID_ARGUMENT, "neither size nor scale");
    b.size[0] = 3, b.size[1] = -1;
    expect(wt_interpolate(x, &b, &out), WT_ERR_INVALID_ARGUMENT, "negative size");
    b.size[1] = 0;
    expect(wt_interpolate(x, &b, &out), WT_ERR_INVALID_ARGUMENT, "size 0");
    b = o, b.scale_factor[1] = -2.0;
    expect(wt_interpolate(x, &b, &out), WT_ERR_INVALID_ARGUMENT, "negative scale");
    b.scale_factor[1] = NAN;
    expect(wt_interpolate(x, &b, &out), WT_ERR_INVALID_ARGUMENT, "NaN scale");
    b.scale_factor[1] = INFINITY;
    expect(wt_interpolate(x, &b, &out), WT_ERR_INVALID_ARGUMENT, "inf scale");
    b.scale_factor[1] = 0.1;
    expect(wt_interpolate(x, &b, &out), WT_ERR_SHAPE, "scale leaving no column");
    b.scale_factor[1] = 1e12;
    expect(wt_interpolate(x, &b, &out), WT_ERR_SHAPE, "scale past 2^31 columns");
    b = o, b.align_corners = true;
    expect(wt_interpolate(x, &b, &out), WT_ERR_INVALID_ARGUMENT, "align_corners with nearest");
    b = o, b.mode = (wt_interp_mode)7;
    expect(wt_interpolate(x, &b, &out), WT_ERR_INVALID_ARGUMENT, "unknown mode");
    expect(wt_upsample2d(x, 0.0, WT_INTERP_NEAREST, &out), WT_ERR_INVALID_ARGUMENT, "upsample2d factor 0");
    expect(wt_upsample2d(x, 2.0, (wt_interp_mode)-1, &out), WT_ERR_INVALID_ARGUMENT, "upsample2d bad mode");
    /* Backward: dy must be the forward's output shape. */
    wt_tensor *dx = (wt_tensor *)1;
    expect(wt_interpolate_backward(dy, x, &o, NULL), WT_ERR_INVALID_ARGUMENT, "backward NULL dx");
    expect(wt_interpolate_backward(NULL, x, &o, &dx), WT_ERR_INVALID_ARGUMENT, "backward NULL dy");
    CHECK(dx == NULL, "backward NULL dy: dx not cleared");
    expect(wt_interpolate_backward(dy, NULL, &o, &dx), WT_ERR_INVALID_ARGUMENT, "backward NULL x");
    expect(wt_interpolate_backward(dy, x, NULL, &dx), WT_ERR_INVALID_ARGUMENT, "backward NULL options");
    expect(wt_interpolate_backward(x, x, &o, &dx), WT_ERR_SHAPE, "backward dy of x's shape");
    expect(wt_interpolate_backward(dy, x3d, &o, &dx), WT_ERR_SHAPE, "backward 3-D x");
    b = o, b.struct_size = 3;
    expect(wt_interpolate_backward(dy, x, &b, &dx), WT_ERR_INVALID_ARGUMENT, "backward struct_size 3");
    expect(wt_interpolate_backward(dy, x, &o, &dx), WT_OK, "backward valid");
    wt_tensor_release(dx);
    wt_tensor_release(x);
    wt_tensor_release(x3d);
    wt_tensor_release(xi);
    wt_tensor_release(dy);
}

int main(int argc, char **argv)
{
    test_run run;
    if (!test_begin(&run, "nn_interpolate", argc, argv)) return run.status;
    g_ctx = run.ctx;
    test_known_values();
    test_cases();
    test_special();
    test_empty();
    test_errors();
    test_check_nothing_alive(g_ctx);
    return test_end(&run);
}
