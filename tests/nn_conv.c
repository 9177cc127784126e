/* Convolution, pooling and normalisation against float64 references
 * written here with direct loops (independent of the library's im2col /
 * col2im formulation: the transposed convolution's reference scatters,
 * the library gathers). Usage: nn_conv <cpu|vulkan|gles> [conv]. */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include "test_util.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static wt_context *g_ctx;
static bool g_make_f16; /* make() builds f16 tensors (views of an f16 cast) */

/* t as f16 when g_make_f16 (t released), else t. */
static wt_tensor *maybe_f16(wt_tensor *t)
{
    if (!g_make_f16 || !t) return t;
    wt_tensor *h = NULL;
    if (wt_cast(t, WT_F16, &h) != WT_OK) printf("cast: %s\n", wt_last_error());
    wt_tensor_release(t);
    return h;
}

/* ------------------------------------------------------------ helpers */

static float *random_floats(int64_t n, float lo, float hi)
{
    float *v = malloc(sizeof(float) * (size_t)(n > 0 ? n : 1));
    for (int64_t i = 0; i < n; i++) v[i] = test_rng_uniform(lo, hi);
    return v;
}

/* A view of data (row-major, shape) whose two last axes are transposed in
 * storage: the last axis steps by more than 1. */
static wt_tensor *make_transposed(const float *data, int ndim, const int64_t *shape)
{
    int64_t st[8];
    memcpy(st, shape, sizeof(int64_t) * (size_t)ndim);
    const int64_t R = shape[ndim - 2], C = shape[ndim - 1];
    st[ndim - 2] = C, st[ndim - 1] = R;
    int64_t outer = 1;
    for (int i = 0; i < ndim - 2; i++) outer *= shape[i];
    float *buf = malloc(sizeof(float) * (size_t)(outer * R * C + 1));
    for (int64_t o = 0; o < outer; o++)
        for (int64_t r = 0; r < R; r++)
            for (int64_t c = 0; c < C; c++) buf[(o * C + c) * R + r] = data[(o * R + r) * C + c];
    wt_tensor *s = NULL, *t = NULL;
    if (wt_tensor_from_data(g_ctx, WT_F32, ndim, st, buf, &s) == WT_OK && (s = maybe_f16(s)))
        wt_transpose(s, -1, -2, &t);
    wt_tensor_release(s);
    free(buf);
    return t;
}

/* A tensor holding data (row-major, shape). strided 1: a non-contiguous
 * view, the last axis a slice of a wider tensor; 2: make_transposed. */
static wt_tensor *make(const float *data, int ndim, const int64_t *shape, int strided)
{
    wt_tensor *t = NULL;
    if (strided == 2) return make_transposed(data, ndim, shape);
    if (!strided) {
        if (wt_tensor_from_data(g_ctx, WT_F32, ndim, shape, data, &t) != WT_OK)
            printf("from_data: %s\n", wt_last_error());
        return maybe_f16(t);
    }
    int64_t wide[8];
    memcpy(wide, shape, sizeof(int64_t) * (size_t)ndim);
    const int64_t inner = shape[ndim - 1], pad = 3;
    wide[ndim - 1] = inner + pad;
    int64_t rows = 1;
    for (int i = 0; i < ndim - 1; i++) rows *= shape[i];
    float *buf = malloc(sizeof(float) * (size_t)(rows * (inner + pad) + 1));
    for (int64_t r = 0; r < rows; r++) {
        for (int64_t c = 0; c < pad; c++) buf[r * (inner + pad) + c] = 1e6f; /* never read */
        memcpy(buf + r * (inner + pad) + pad, data + r * inner, sizeof(float) * (size_t)inner);
    }
    wt_tensor *w = NULL;
    if (wt_tensor_from_data(g_ctx, WT_F32, ndim, wide, buf, &w) == WT_OK && (w = maybe_f16(w)))
        wt_slice(w, ndim - 1, pad, pad + inner, 1, &t);
    wt_tensor_release(w);
    free(buf);
    return t;
}

/* Compares t (f32) with ref: |got - ref| <= tol[i] (absolute, per element). */
static bool compare(const char *name, const wt_tensor *t, int ndim, const int64_t *shape,
                    const double *ref, const double *tol, int64_t n)
{
    char err[256], b1[64], b2[64];
    if (!CHECK(t != NULL, "%s: no result", name)) return false;
    bool ok = CHECK(wt_tensor_ndim(t) == ndim &&
                        memcmp(wt_tensor_shape(t), shape, sizeof(int64_t) * (size_t)ndim) == 0,
                    "%s: shape %s, expected %s", name,
                    test_shape_str(wt_tensor_ndim(t), wt_tensor_shape(t), b1, sizeof b1),
                    test_shape_str(ndim, shape, b2, sizeof b2));
    if (!ok) return false;
    float *got = test_read_guarded(t, err, sizeof err);
    if (!CHECK(got != NULL, "%s: read: %s", name, err)) return false;
    int bad = 0;
    int64_t first = -1;
    for (int64_t i = 0; i < n; i++) {
        bool same = (isnan(ref[i]) && isnan(got[i])) || (isinf(ref[i]) && got[i] == ref[i]) ||
                    fabs((double)got[i] - ref[i]) <= tol[i];
        if (!same && bad++ == 0) first = i;
    }
    ok = CHECK(bad == 0, "%s: %d of %lld elements differ; first at %lld: got %.9g, expected %.9g", name,
               bad, (long long)n, (long long)first, first >= 0 ? got[first] : 0.0,
               first >= 0 ? ref[first] : 0.0);
    free(got);
    return ok;
}

static void expect_code(wt_status got, wt_status want, const char *what)
{
    CHECK(got == want, "%s: got %s, expected %s (%s)", what, wt_status_string(got), wt_status_string(want),
          wt_last_error());
}

/* -------------------------------------------------------------- conv2d */

typedef struct conv_case {
    const char *name;
    int64_t N, C, H, W, O, KH, KW;
    int64_t sh, sw, pt, pb, pl, pr, dh, dw, G;
    bool bias;
    int strided; /* make()'s: 0, 1 or 2 */
    bool same, unbatched;
    const char *chunk; /* WT_CONV_CHUNK_BYTES for this case, or NULL */
} conv_case;

/* Resolves "same" padding as the header states. */
static void same_pad(int64_t in, int64_t k, int64_t s, int64_t d, int64_t *before, int64_t *after)
{
    int64_t o = (in + s - 1) / s, total = (o - 1) * s + d * (k - 1) + 1 - in;
    if (total < 0) total = 0;
    *before = total / 2, *after = total - *before;
}

/* Values as f16 holds them (round to nearest even). */
static void round_f16(float *v, int64_t n)
{
    for (int64_t i = 0; i < n; i++) v[i] = (float)test_half_to_double(test_double_to_half(v[i]));
}

/* f16: every operand f16 (inputs rounded to f16 first, so that the
 * float64 reference sees the same values); the result is f16, within its
 * rounding (2^-11 relative) plus the f32 sums' error. */
static void run_conv2d_as(const conv_case *c, bool f16)
{
    conv_case k = *c;
    if (k.same) {
        same_pad(k.H, k.KH, k.sh, k.dh, &k.pt, &k.pb);
        same_pad(k.W, k.KW, k.sw, k.dw, &k.pl, &k.pr);
    }
    const int64_t Cg = k.C / k.G, Og = k.O / k.G;
    const int64_t OH = (k.H + k.pt + k.pb - k.dh * (k.KH - 1) - 1) / k.sh + 1;
    const int64_t OW = (k.W + k.pl + k.pr - k.dw * (k.KW - 1) - 1) / k.sw + 1;
    const int64_t nx = k.N * k.C * k.H * k.W, nw = k.O * Cg * k.KH * k.KW, no = k.N * k.O * OH * OW;
    float *x = random_floats(nx, -1, 1), *w = random_floats(nw, -1, 1), *b = random_floats(k.O, -1, 1);
    if (f16) round_f16(x, nx), round_f16(w, nw), round_f16(b, k.O);
    double *ref = calloc((size_t)no + 1, sizeof(double)), *tol = calloc((size_t)no + 1, sizeof(double));
    for (int64_t n = 0; n < k.N; n++)
        for (int64_t o = 0; o < k.O; o++)
            for (int64_t oy = 0; oy < OH; oy++)
                for (int64_t ox = 0; ox < OW; ox++) {
                    double s = k.bias ? b[o] : 0.0, mag = fabs(s);
                    const int64_t g = o / Og;
                    for (int64_t ci = 0; ci < Cg; ci++)
                        for (int64_t ky = 0; ky < k.KH; ky++)
                            for (int64_t kx = 0; kx < k.KW; kx++) {
                                int64_t iy = oy * k.sh - k.pt + ky * k.dh, ix = ox * k.sw - k.pl + kx * k.dw;
                                if (iy < 0 || iy >= k.H || ix < 0 || ix >= k.W) continue;
                                double v = (double)x[((n * k.C + g * Cg + ci) * k.H + iy) * k.W + ix] *
                                           w[((o * Cg + ci) * k.KH + ky) * k.KW + kx];
                                s += v, mag += fabs(v);
                            }
                    int64_t i = ((n * k.O + o) * OH + oy) * OW + ox;
                    ref[i] = s, tol[i] = 1e-5 * mag + 1e-6 + (f16 ? fabs(s) / 2048.0 + 6e-8 : 0.0);
                }
    int64_t xs[4] = {k.N, k.C, k.H, k.W}, ws[4] = {k.O, Cg, k.KH, k.KW}, bs[1] = {k.O};
    int64_t os[4] = {k.N, k.O, OH, OW};
    const int off = k.unbatched ? 1 : 0;
    g_make_f16 = f16; /* f16 views of the same layouts */
    wt_tensor *tx = make(x, 4 - off, xs + off, k.strided), *tw = make(w, 4, ws, k.strided != 0);
    wt_tensor *tb = k.bias ? make(b, 1, bs, false) : NULL, *out = NULL;
    g_make_f16 = false;
    wt_conv_options o;
    wt_conv_options_init(&o);
    o.stride[0] = c->sh, o.stride[1] = c->sw;
    o.padding[0] = c->pt, o.padding[1] = c->pb, o.padding[2] = c->pl, o.padding[3] = c->pr;
    o.dilation[0] = c->dh, o.dilation[1] = c->dw;
    o.groups = c->G;
    o.same = c->same;
    if (c->chunk) setenv("WT_CONV_CHUNK_BYTES", c->chunk, 1);
    wt_status st = wt_conv2d(tx, tw, tb, &o, &out);
    if (c->chunk) unsetenv("WT_CONV_CHUNK_BYTES");
    if (CHECK(st == WT_OK, "conv2d %s: %s", c->name, wt_last_error()) && f16 &&
        CHECK(wt_tensor_dtype(out) == WT_F16, "conv2d %s: result dtype %d", c->name, (int)wt_tensor_dtype(out))) {
        wt_tensor *o32 = NULL;
        if (CHECK(wt_cast(out, WT_F32, &o32) == WT_OK, "conv2d %s: cast: %s", c->name, wt_last_error()))
            compare(c->name, o32, 4 - off, os + off, ref, tol, no);
        wt_tensor_release(o32);
    } else if (st == WT_OK) {
        compare(c->name, out, 4 - off, os + off, ref, tol, no);
    }
    wt_tensor_release(tx);
    wt_tensor_release(tw);
    wt_tensor_release(tb);
    wt_tensor_release(out);
    free(x), free(w), free(b), free(ref), free(tol);
}

static void test_conv2d(void)
{
    static const conv_case cases[] = {
        /* name                 N  C  H   W  O  KH KW sh sw pt pb pl pr dh dw G  bias  strided same  unb */
        {"conv basic",          2, 3, 7,  9, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, true, false, false, false, NULL},
        {"conv stride>kernel",  1, 2, 11, 13, 3, 2, 2, 3, 4, 0, 0, 0, 0, 1, 1, 1, false, false, false, false, NULL},
        {"conv dilation asym",  2, 3, 9,  10, 2, 3, 2, 1, 2, 0, 2, 1, 3, 2, 3, 1, true, false, false, false, NULL},
        {"conv groups bigpad",  3, 4, 5,  6, 6, 3, 3, 2, 1, 3, 3, 3, 3, 1, 1, 2, true, false, false, false, NULL},
        {"conv depthwise",      2, 5, 9,  7, 5, 5, 5, 2, 2, 2, 2, 2, 2, 1, 1, 5, true, false, false, false, NULL},
        {"conv depth mult",     1, 3, 8,  8, 6, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 3, false, false, false, false, NULL},
        {"conv depthwise views",2, 4, 9,  8, 8, 3, 2, 2, 1, 2, 0, 0, 3, 2, 2, 4, true, 2, false, false, NULL},
        {"conv transposed view",2, 6, 7,  9, 4, 3, 3, 2, 1, 1, 1, 0, 2, 1, 2, 2, false, 2, false, false, NULL},
        {"conv depthwise s3",   1, 3, 10, 11, 3, 2, 3, 3, 2, 0, 1, 1, 0, 1, 1, 3, false, false, false, true, NULL},
        {"conv same s2 d2",     2, 3, 11, 8, 4, 4, 3, 2, 2, 0, 0, 0, 0, 2, 1, 1, true, false, true, false, NULL},
        {"conv same s1",        1, 2, 6,  5, 3, 4, 2, 1, 1, 0, 0, 0, 0, 1, 3, 1, false, false, true, false, NULL},
        {"conv strided views",  2, 4, 6,  7, 4, 3, 2, 1, 2, 1, 0, 2, 1, 1, 1, 2, true, true, false, false, NULL},
        {"conv 1x1",            3, 8, 5,  5, 7, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, true, false, false, false, NULL},
        {"conv 1x1 nobias",     3, 8, 5,  7, 6, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, false, 0, false, false, NULL},
        {"conv 1x1 groups",     1, 8, 3,  5, 6, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 2, false, 0, false, true, NULL},
        {"conv 1x1 row view",   2, 4, 1,  9, 3, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, false, 1, false, false, NULL},
        {"conv 1x1 sliced",     2, 4, 3,  6, 3, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, false, 1, false, false, NULL},
        {"conv unbatched",      1, 3, 6,  6, 2, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, true, false, false, true, NULL},
        {"conv chunk rows",     2, 3, 13, 11, 5, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, true, true, false, false, "2000"},
        {"conv chunk images",   5, 2, 4,  5, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, false, false, false, false, "2000"},
        {"conv chunk nobias",   3, 2, 6,  5, 3, 2, 2, 1, 1, 0, 0, 0, 0, 1, 1, 1, false, false, false, false, "600"},
        {"conv batch nobias",   3, 3, 6,  7, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, false, 1, false, false, NULL},
        {"conv 2 of 3 images",  3, 3, 6,  7, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, false, 0, false, false, "11000"},
        {"conv empty batch",    0, 3, 5,  5, 2, 3, 3, 1, 1, 0, 0, 0, 0, 1, 1, 1, true, false, false, false, NULL},
        {"conv larger",         2, 16, 17, 15, 24, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, true, false, false, false, NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) run_conv2d_as(&cases[i], false);
}

/* Shapes at the edges of the implicit matrix product's tiles (output
 * channels, planes and k = C/G * KH * KW not multiples of any tile; several
 * images and groups at once; a long k), in f32 and f16. An f16 result
 * plane of odd size runs through f32 on WebGPU ("conv basic f16"). */
static void test_conv2d_tiles(bool all)
{
    static const conv_case cases[] = {
        /* name                 N  C  H   W  O  KH KW sh sw pt pb pl pr dh dw G  bias  strided same  unb */
        {"tiles odd",           3, 5, 13, 11, 67, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, true, false, false, false, NULL},
        {"tiles groups images", 2, 12, 9, 10, 18, 3, 2, 2, 1, 1, 0, 2, 1, 1, 2, 3, true, 1, false, false, NULL},
        {"tiles long k",        1, 130, 6, 7, 9, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, true, false, false, false, NULL},
        {"tiles 1x1 planes",    2, 9, 12, 11, 33, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, true, false, false, false, NULL},
        {"tiles wide plane",    1, 3, 3, 150, 5, 2, 5, 1, 2, 0, 1, 2, 2, 1, 1, 1, false, 2, false, true, NULL},
    };
    /* f16 where the plane has an even size (the f16 kernel's own path);
     * the odd ones would repeat the f32 run. */
    static const bool f16_too[] = {false, true, true, true, false};
    /* !all: one case of each kind (odd sizes, f16 with groups, a long k). */
    static const bool in_short[] = {true, true, true, false, false};
    char name[96];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        if (!all && !in_short[i]) continue;
        for (int f16 = (all ? 0 : i == 1); f16 < (f16_too[i] ? 2 : 1); f16++) {
            conv_case c = cases[i];
            snprintf(name, sizeof name, "%s %s", c.name, f16 ? "f16" : "f32");
            c.name = name;
            run_conv2d_as(&c, f16);
        }
    }
    conv_case basic = {"conv basic f16", 2, 3, 7, 9, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, true, false, false, false, NULL};
    if (all) run_conv2d_as(&basic, true);
}

/* conv1d through its own reference: stride, dilation, asymmetric padding,
 * groups, "same". */
static void run_conv1d(const char *name, int64_t N, int64_t C, int64_t L, int64_t O, int64_t K, int64_t s,
                       int64_t pl, int64_t pr, int64_t d, int64_t G, bool same, bool bias)
{
    if (same) same_pad(L, K, s, d, &pl, &pr);
    const int64_t Cg = C / G, Og = O / G, OL = (L + pl + pr - d * (K - 1) - 1) / s + 1;
    float *x = random_floats(N * C * L, -1, 1), *w = random_floats(O * Cg * K, -1, 1), *b = random_floats(O, -1, 1);
    double *ref = calloc((size_t)(N * O * OL), sizeof(double)), *tol = calloc((size_t)(N * O * OL), sizeof(double));
    for (int64_t n = 0; n < N; n++)
        for (int64_t o = 0; o < O; o++)
            for (int64_t ol = 0; ol < OL; ol++) {
                double acc = bias ? b[o] : 0.0, mag = fabs(acc);
                for (int64_t ci = 0; ci < Cg; ci++)
                    for (int64_t k = 0; k < K; k++) {
                        int64_t il = ol * s - pl + k * d;
                        if (il < 0 || il >= L) continue;
                        double v = (double)x[(n * C + (o / Og) * Cg + ci) * L + il] * w[(o * Cg + ci) * K + k];
                        acc += v, mag += fabs(v);
                    }
                ref[(n * O + o) * OL + ol] = acc, tol[(n * O + o) * OL + ol] = 1e-5 * mag + 1e-6;
            }
    int64_t xs[3] = {N, C, L}, ws[3] = {O, Cg, K}, bs[1] = {O}, os[3] = {N, O, OL};
    wt_tensor *tx = make(x, 3, xs, true), *tw = make(w, 3, ws, false), *tb = bias ? make(b, 1, bs, false) : NULL;
    wt_tensor *out = NULL;
    wt_conv_options o;
    wt_conv_options_init(&o);
    o.stride[0] = s, o.dilation[0] = d, o.padding[0] = pl, o.padding[1] = pr, o.groups = G, o.same = same;
    if (CHECK(wt_conv1d(tx, tw, tb, &o, &out) == WT_OK, "conv1d %s: %s", name, wt_last_error()))
        compare(name, out, 3, os, ref, tol, N * O * OL);
    wt_tensor_release(tx), wt_tensor_release(tw), wt_tensor_release(tb), wt_tensor_release(out);
    free(x), free(w), free(b), free(ref), free(tol);
}

/* ---------------------------------------------------- conv_transpose2d */

typedef struct convt_case {
    const char *name;
    int64_t N, C, H, W, O, KH, KW;
    int64_t sh, sw, pt, pb, pl, pr, oph, opw, dh, dw, G;
    bool bias;
    const char *chunk;
} convt_case;

static void run_convt_as(const convt_case *k, bool f16)
{
    const int64_t Cg = k->C / k->G, Og = k->O / k->G;
    const int64_t OH = (k->H - 1) * k->sh - k->pt - k->pb + k->dh * (k->KH - 1) + k->oph + 1;
    const int64_t OW = (k->W - 1) * k->sw - k->pl - k->pr + k->dw * (k->KW - 1) + k->opw + 1;
    const int64_t no = k->N * k->O * OH * OW;
    float *x = random_floats(k->N * k->C * k->H * k->W, -1, 1);
    float *w = random_floats(k->C * Og * k->KH * k->KW, -1, 1), *b = random_floats(k->O, -1, 1);
    if (f16) round_f16(x, k->N * k->C * k->H * k->W), round_f16(w, k->C * Og * k->KH * k->KW), round_f16(b, k->O);
    double *ref = calloc((size_t)no, sizeof(double)), *mag = calloc((size_t)no, sizeof(double));
    /* Scatter: every input pixel adds its kernel into the output. */
    for (int64_t n = 0; n < k->N; n++)
        for (int64_t o = 0; o < k->O; o++)
            for (int64_t p = 0; p < OH * OW; p++) {
                ref[(n * k->O + o) * OH * OW + p] = k->bias ? b[o] : 0.0;
                mag[(n * k->O + o) * OH * OW + p] = k->bias ? fabs(b[o]) : 0.0;
            }
    for (int64_t n = 0; n < k->N; n++)
        for (int64_t c = 0; c < k->C; c++)
            for (int64_t iy = 0; iy < k->H; iy++)
                for (int64_t ix = 0; ix < k->W; ix++)
                    for (int64_t og = 0; og < Og; og++)
                        for (int64_t ky = 0; ky < k->KH; ky++)
                            for (int64_t kx = 0; kx < k->KW; kx++) {
                                int64_t y = iy * k->sh - k->pt + ky * k->dh, xx = ix * k->sw - k->pl + kx * k->dw;
                                if (y < 0 || y >= OH || xx < 0 || xx >= OW) continue;
                                int64_t o = (c / Cg) * Og + og, i = ((n * k->O + o) * OH + y) * OW + xx;
                                double v = (double)x[((n * k->C + c) * k->H + iy) * k->W + ix] *
                                           w[((c * Og + og) * k->KH + ky) * k->KW + kx];
                                ref[i] += v, mag[i] += fabs(v);
                            }
    for (int64_t i = 0; i < no; i++) mag[i] = 1e-5 * mag[i] + 1e-6 + (f16 ? fabs(ref[i]) / 2048.0 + 6e-8 : 0.0);
    int64_t xs[4] = {k->N, k->C, k->H, k->W}, ws[4] = {k->C, Og, k->KH, k->KW}, bs[1] = {k->O};
    int64_t os[4] = {k->N, k->O, OH, OW};
    g_make_f16 = f16;
    wt_tensor *tx = make(x, 4, xs, k->N > 1 ? (k->G > 1 ? 2 : 1) : 0), *tw = make(w, 4, ws, false);
    wt_tensor *tb = k->bias ? make(b, 1, bs, false) : NULL, *out = NULL;
    g_make_f16 = false;
    wt_conv_options o;
    wt_conv_options_init(&o);
    o.stride[0] = k->sh, o.stride[1] = k->sw;
    o.padding[0] = k->pt, o.padding[1] = k->pb, o.padding[2] = k->pl, o.padding[3] = k->pr;
    o.output_padding[0] = k->oph, o.output_padding[1] = k->opw;
    o.dilation[0] = k->dh, o.dilation[1] = k->dw;
    o.groups = k->G;
    if (k->chunk) setenv("WT_CONV_CHUNK_BYTES", k->chunk, 1);
    wt_status st = wt_conv_transpose2d(tx, tw, tb, &o, &out);
    if (k->chunk) unsetenv("WT_CONV_CHUNK_BYTES");
    wt_tensor *o32 = NULL;
    if (CHECK(st == WT_OK, "conv_transpose2d %s: %s", k->name, wt_last_error()) &&
        (!f16 || CHECK(wt_tensor_dtype(out) == WT_F16 && wt_cast(out, WT_F32, &o32) == WT_OK,
                       "conv_transpose2d %s: f16 result: %s", k->name, wt_last_error())))
        compare(k->name, f16 ? o32 : out, 4, os, ref, mag, no);
    wt_tensor_release(o32);
    wt_tensor_release(tx), wt_tensor_release(tw), wt_tensor_release(tb), wt_tensor_release(out);
    free(x), free(w), free(b), free(ref), free(mag);
}

static void test_conv_transpose2d(void)
{
    static const convt_case cases[] = {
        /* name               N  C  H  W  O  KH KW sh sw pt pb pl pr oph opw dh dw G bias chunk */
        {"convT s2 p1 op1",   2, 3, 5, 4, 4, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, true, NULL},
        {"convT groups dil",  1, 4, 6, 5, 6, 3, 2, 1, 2, 0, 0, 1, 1, 0, 1, 2, 2, 2, false, NULL},
        {"convT asym pad",    2, 2, 4, 7, 3, 4, 3, 3, 1, 2, 0, 0, 1, 2, 0, 1, 1, 1, true, NULL},
        {"convT stride>k",    1, 2, 3, 3, 2, 2, 2, 3, 3, 0, 0, 0, 0, 0, 0, 1, 1, 1, true, NULL},
        {"convT depthwise",   2, 4, 5, 5, 4, 3, 3, 2, 2, 1, 1, 1, 1, 0, 0, 1, 1, 4, true, NULL},
        {"convT chunk imgs",  4, 3, 4, 4, 2, 3, 3, 2, 2, 1, 1, 1, 1, 0, 0, 1, 1, 1, true, "1000"},
        {"convT chunk chans", 2, 4, 5, 6, 6, 3, 3, 1, 1, 1, 1, 1, 1, 0, 0, 1, 1, 2, true, "400"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) run_convt_as(&cases[i], false);
}

/* The transposed convolution at the edges of the implicit product's
 * tiles (odd channels, strides with rows no tap reaches, groups and
 * several images), in f32 and f16. */
static void test_conv_transpose2d_tiles(bool all)
{
    static const convt_case cases[] = {
        /* name                 N  C  H  W  O   KH KW sh sw pt pb pl pr oph opw dh dw G bias chunk */
        {"convT tiles f32",     2, 6, 7, 5, 70, 3, 4, 2, 3, 1, 2, 0, 1, 1, 0, 1, 1, 2, true, NULL},
        {"convT tiles f16",     3, 9, 5, 6, 10, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 2, 1, 1, true, NULL},
    };
    if (all) run_convt_as(&cases[0], false);
    run_convt_as(&cases[1], true);
}

/* ------------------------------------------------------------- pooling */

typedef struct pool_case {
    const char *name;
    int64_t N, C, H, W, KH, KW, sh, sw, ph, pw, dh, dw;
    bool ceil, count_pad;
    int strided; /* make()'s: 0, 1 or 2 */
    int64_t divisor;
} pool_case;

/* PyTorch's output size, written out again for the reference. */
static int64_t pool_out(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d, bool ceil_mode)
{
    int64_t num = in + 2 * p - d * (k - 1) - 1;
    int64_t o = (ceil_mode ? (num + s - 1) / s : num / s) + 1;
    if (ceil_mode && (o - 1) * s >= in + p) o--;
    return o;
}

static void run_pool(const pool_case *c, bool is_max, bool nan_inputs)
{
    const int64_t sh = c->sh ? c->sh : c->KH, sw = c->sw ? c->sw : c->KW;
    const int64_t OH = pool_out(c->H, c->KH, sh, c->ph, c->dh, c->ceil);
    const int64_t OW = pool_out(c->W, c->KW, sw, c->pw, c->dw, c->ceil);
    const int64_t planes = c->N * c->C, no = planes * OH * OW;
    float *x = random_floats(planes * c->H * c->W, -3, 3);
    if (nan_inputs)
        for (int64_t i = 0; i < planes * c->H * c->W; i += 7) x[i] = (i / 7) % 3 == 0 ? NAN : -INFINITY;
    double *ref = calloc((size_t)no, sizeof(double)), *tol = calloc((size_t)no, sizeof(double));
    int32_t *ref_idx = calloc((size_t)no + 1, sizeof(int32_t));
    for (int64_t p = 0; p < planes; p++)
        for (int64_t oy = 0; oy < OH; oy++)
            for (int64_t ox = 0; ox < OW; ox++) {
                const int64_t o = (p * OH + oy) * OW + ox;
                const float *pl = x + p * c->H * c->W;
                if (is_max) {
                    double m = -INFINITY;
                    int64_t best = -1;
                    for (int64_t ky = 0; ky < c->KH; ky++)
                        for (int64_t kx = 0; kx < c->KW; kx++) {
                            int64_t y = oy * sh - c->ph + ky * c->dh, xx = ox * sw - c->pw + kx * c->dw;
                            if (y < 0 || y >= c->H || xx < 0 || xx >= c->W) continue;
                            double v = pl[y * c->W + xx];
                            if (best < 0) best = y * c->W + xx;
                            if (v > m || isnan(v)) m = v, best = y * c->W + xx;
                        }
                    ref[o] = m, ref_idx[o] = (int32_t)best;
                } else {
                    int64_t y0 = oy * sh - c->ph, x0 = ox * sw - c->pw;
                    int64_t y1 = y0 + c->KH < c->H + c->ph ? y0 + c->KH : c->H + c->ph;
                    int64_t x1 = x0 + c->KW < c->W + c->pw ? x0 + c->KW : c->W + c->pw;
                    int64_t padded = (y1 - y0) * (x1 - x0);
                    double s = 0;
                    int64_t inside = 0;
                    for (int64_t y = y0; y < y1; y++)
                        for (int64_t xx = x0; xx < x1; xx++)
                            if (y >= 0 && y < c->H && xx >= 0 && xx < c->W) s += pl[y * c->W + xx], inside++;
                    ref[o] = s / (double)(c->divisor ? c->divisor : c->count_pad ? padded : inside);
                }
                tol[o] = 1e-5 * fabs(ref[o]) + 1e-6;
            }
    int64_t xs[4] = {c->N, c->C, c->H, c->W}, os[4] = {c->N, c->C, OH, OW};
    wt_tensor *tx = make(x, 4, xs, c->strided), *out = NULL, *idx = NULL;
    wt_pool_options o;
    wt_pool_options_init(&o);
    o.kernel[0] = c->KH, o.kernel[1] = c->KW, o.stride[0] = c->sh, o.stride[1] = c->sw;
    o.padding[0] = c->ph, o.padding[1] = c->pw, o.dilation[0] = c->dh, o.dilation[1] = c->dw;
    o.ceil_mode = c->ceil, o.count_include_pad = c->count_pad, o.divisor_override = c->divisor;
    wt_status st = is_max ? wt_max_pool2d(tx, &o, &out, &idx) : wt_avg_pool2d(tx, &o, &out);
    if (CHECK(st == WT_OK, "%s: %s", c->name, wt_last_error()) && compare(c->name, out, 4, os, ref, tol, no) &&
        is_max) {
        int32_t *got = calloc((size_t)no + 1, sizeof(int32_t));
        CHECK(wt_tensor_dtype(idx) == WT_I32, "%s: indices dtype", c->name);
        if (CHECK(wt_tensor_read(idx, got, sizeof(int32_t) * (size_t)(no + 1)) == WT_OK, "%s: read indices: %s",
                  c->name, wt_last_error())) {
            int bad = 0;
            for (int64_t i = 0; i < no; i++) bad += got[i] != ref_idx[i];
            CHECK(bad == 0, "%s: %d indices differ", c->name, bad);
        }
        free(got);
    }
    wt_tensor_release(tx), wt_tensor_release(out), wt_tensor_release(idx);
    free(x), free(ref), free(tol), free(ref_idx);
}

static void test_pooling(void)
{
    static const pool_case maxes[] = {
        /* name               N  C  H   W  KH KW sh sw ph pw dh dw ceil  cpad  strided div */
        {"max 3x3 s2 p1",     2, 3, 9,  8, 3, 3, 2, 2, 1, 1, 1, 1, false, true, false, 0},
        {"max ceil dil",      1, 2, 10, 11, 3, 2, 2, 3, 1, 1, 2, 1, true, true, 2, 0},
        {"max stride>kernel", 2, 2, 11, 7, 2, 2, 4, 3, 0, 0, 1, 1, false, true, false, 0},
        {"max default stride",1, 3, 7,  7, 2, 3, 0, 0, 1, 1, 1, 1, true, true, false, 0},
    };
    for (size_t i = 0; i < sizeof maxes / sizeof maxes[0]; i++) run_pool(&maxes[i], true, false);
    run_pool(&maxes[0], true, true); /* NaN and -inf inputs */
    static const pool_case avgs[] = {
        {"avg pad counted",   2, 3, 9,  8, 3, 3, 2, 2, 1, 1, 1, 1, false, true, false, 0},
        {"avg pad not counted",2, 3, 9, 8, 3, 3, 2, 2, 1, 1, 1, 1, false, false, true, 0},
        {"avg ceil counted",  1, 2, 10, 7, 3, 2, 2, 2, 1, 1, 1, 1, true, true, false, 0},
        {"avg ceil uncounted",1, 2, 10, 7, 3, 2, 2, 2, 1, 1, 1, 1, true, false, false, 0},
        {"avg divisor",       2, 1, 6,  9, 2, 4, 1, 3, 1, 2, 1, 1, true, true, 2, 5},
    };
    for (size_t i = 0; i < sizeof avgs / sizeof avgs[0]; i++) run_pool(&avgs[i], false, false);
}

static void run_adaptive(int64_t N, int64_t C, int64_t H, int64_t W, int64_t OH, int64_t OW, bool is_max)
{
    const int64_t planes = N * C, no = planes * OH * OW;
    float *x = random_floats(planes * H * W, -2, 2);
    double *ref = calloc((size_t)no, sizeof(double)), *tol = calloc((size_t)no, sizeof(double));
    int32_t *ref_idx = calloc((size_t)no, sizeof(int32_t));
    for (int64_t p = 0; p < planes; p++)
        for (int64_t oy = 0; oy < OH; oy++)
            for (int64_t ox = 0; ox < OW; ox++) {
                /* floor(oy * H / OH) to ceil((oy + 1) * H / OH) */
                int64_t y0 = (int64_t)floor((double)oy * H / OH), y1 = (int64_t)ceil((double)(oy + 1) * H / OH);
                int64_t x0 = (int64_t)floor((double)ox * W / OW), x1 = (int64_t)ceil((double)(ox + 1) * W / OW);
                double s = 0, m = -INFINITY;
                int32_t best = 0;
                for (int64_t y = y0; y < y1; y++)
                    for (int64_t xx = x0; xx < x1; xx++) {
                        double v = x[(p * H + y) * W + xx];
                        s += v;
                        if (v > m) m = v, best = (int32_t)(y * W + xx);
                    }
                const int64_t o = (p * OH + oy) * OW + ox;
                ref[o] = is_max ? m : s / (double)((y1 - y0) * (x1 - x0));
                ref_idx[o] = best;
                tol[o] = 1e-5 * fabs(ref[o]) + 1e-6;
            }
    int64_t xs[4] = {N, C, H, W}, os[4] = {N, C, OH, OW};
    wt_tensor *tx = make(x, 4, xs, is_max ? 2 : 1), *out = NULL, *idx = NULL;
    char name[64];
    snprintf(name, sizeof name, "adaptive %s %lldx%lld->%lldx%lld", is_max ? "max" : "avg", (long long)H,
             (long long)W, (long long)OH, (long long)OW);
    wt_status st = is_max ? wt_adaptive_max_pool2d(tx, OH, OW, &out, &idx) : wt_adaptive_avg_pool2d(tx, OH, OW, &out);
    if (CHECK(st == WT_OK, "%s: %s", name, wt_last_error()) && compare(name, out, 4, os, ref, tol, no) && is_max) {
        int32_t *got = calloc((size_t)no, sizeof(int32_t));
        if (CHECK(wt_tensor_read(idx, got, sizeof(int32_t) * (size_t)no) == WT_OK, "%s: indices", name)) {
            int bad = 0;
            for (int64_t i = 0; i < no; i++) bad += got[i] != ref_idx[i];
            CHECK(bad == 0, "%s: %d indices differ", name, bad);
        }
        free(got);
    }
    wt_tensor_release(tx), wt_tensor_release(out), wt_tensor_release(idx);
    free(x), free(ref), free(tol), free(ref_idx);
}

static void test_global(void)
{
    const int64_t N = 2, C = 3, H = 5, W = 7;
    float *x = random_floats(N * C * H * W, -2, 2);
    double ravg[6], rmax[6], tol[6];
    for (int64_t p = 0; p < N * C; p++) {
        double s = 0, m = -INFINITY;
        for (int64_t i = 0; i < H * W; i++) s += x[p * H * W + i], m = fmax(m, x[p * H * W + i]);
        ravg[p] = s / (double)(H * W), rmax[p] = m, tol[p] = 1e-5;
    }
    int64_t xs[4] = {N, C, H, W}, os[4] = {N, C, 1, 1};
    wt_tensor *tx = make(x, 4, xs, 2), *a = NULL, *m = NULL;
    if (CHECK(wt_global_avg_pool2d(tx, &a) == WT_OK, "global avg: %s", wt_last_error()))
        compare("global avg", a, 4, os, ravg, tol, N * C);
    if (CHECK(wt_global_max_pool2d(tx, &m) == WT_OK, "global max: %s", wt_last_error()))
        compare("global max", m, 4, os, rmax, tol, N * C);
    wt_tensor_release(tx), wt_tensor_release(a), wt_tensor_release(m);
    free(x);
}

/* ------------------------------------------------------- normalisation */

/* view: make()'s kind for x; with 0 and H * W a multiple of 4 the GPU
 * takes whole vec4s. */
static void test_batch_norm(bool training, bool affine, int64_t H, int64_t W, int view)
{
    const int64_t N = 3, C = 4, S = H * W, n = N * S;
    float *x = random_floats(N * C * S, -2, 2), *g = random_floats(C, 0.5f, 1.5f), *b = random_floats(C, -1, 1);
    float *rm = random_floats(C, -0.5f, 0.5f), *rv = random_floats(C, 0.5f, 2.0f);
    for (int64_t i = 0; i < N * C * S; i++) x[i] += 100.0f; /* a large mean */
    double mean[4], var[4], new_rm[4], new_rv[4], tolc[4]; /* C = 4 */
    const double momentum = 0.25, eps = 1e-3;
    for (int64_t c = 0; c < C; c++) {
        double s = 0, q = 0;
        for (int64_t i = 0; i < N; i++)
            for (int64_t j = 0; j < S; j++) s += x[(i * C + c) * S + j];
        double m = s / n;
        for (int64_t i = 0; i < N; i++)
            for (int64_t j = 0; j < S; j++) q += pow(x[(i * C + c) * S + j] - m, 2);
        mean[c] = m, var[c] = q / n, tolc[c] = 1e-4;
        new_rm[c] = (1 - momentum) * rm[c] + momentum * m;
        new_rv[c] = (1 - momentum) * rv[c] + momentum * q / (n - 1);
    }
    double *ref = malloc(sizeof(double) * (size_t)(N * C * S)), *tol = malloc(sizeof(double) * (size_t)(N * C * S));
    for (int64_t i = 0; i < N; i++)
        for (int64_t c = 0; c < C; c++)
            for (int64_t j = 0; j < S; j++) {
                double m = training ? mean[c] : rm[c], v = training ? var[c] : rv[c];
                double y = (x[(i * C + c) * S + j] - m) / sqrt(v + eps);
                if (affine) y = y * g[c] + b[c];
                ref[(i * C + c) * S + j] = y, tol[(i * C + c) * S + j] = 2e-4;
            }
    int64_t xs[4] = {N, C, H, W}, cs[1] = {C};
    wt_tensor *tx = make(x, 4, xs, view), *tg = affine ? make(g, 1, cs, false) : NULL;
    wt_tensor *tb = affine ? make(b, 1, cs, false) : NULL, *trm = make(rm, 1, cs, false), *trv = make(rv, 1, cs, false);
    wt_tensor *out = NULL, *bm = NULL, *bv = NULL;
    wt_batch_norm_options o;
    wt_batch_norm_options_init(&o);
    o.training = training, o.momentum = (float)momentum, o.eps = (float)eps;
    const char *name = training ? (affine ? (H > 5 ? "batch_norm train chunked" : "batch_norm train") : "batch_norm train plain")
                                : (affine ? "batch_norm eval" : "batch_norm eval plain");
    wt_status st = wt_batch_norm(tx, trm, trv, tg, tb, &o, &out, &bm, &bv);
    if (CHECK(st == WT_OK, "%s: %s", name, wt_last_error())) {
        compare(name, out, 4, xs, ref, tol, N * C * S);
        if (training) {
            for (int c = 0; c < C; c++) tolc[c] = 1e-5 * fabs(mean[c]) + 1e-5;
            compare("batch_norm batch mean", bm, 1, cs, mean, tolc, C);
            compare("batch_norm batch var", bv, 1, cs, var, tolc, C);
            compare("batch_norm running mean", trm, 1, cs, new_rm, tolc, C);
            compare("batch_norm running var", trv, 1, cs, new_rv, tolc, C);
        } else {
            CHECK(bm == NULL && bv == NULL, "%s: batch statistics in inference", name);
        }
    }
    wt_tensor_release(tx), wt_tensor_release(tg), wt_tensor_release(tb), wt_tensor_release(trm);
    wt_tensor_release(trv), wt_tensor_release(out), wt_tensor_release(bm), wt_tensor_release(bv);
    free(x), free(g), free(b), free(rm), free(rv), free(ref), free(tol);
}

static void test_group_norm(int64_t N, int64_t C, int64_t H, int64_t W, int64_t G, bool affine)
{
    const int64_t S = H * W, Cg = C / G, total = N * C * S;
    float *x = random_floats(total, -2, 2), *g = random_floats(C, 0.5f, 1.5f), *b = random_floats(C, -1, 1);
    double *ref = malloc(sizeof(double) * (size_t)total), *tol = malloc(sizeof(double) * (size_t)total);
    const double eps = 1e-5;
    for (int64_t i = 0; i < N; i++)
        for (int64_t gr = 0; gr < G; gr++) {
            const float *v = x + (i * C + gr * Cg) * S;
            double s = 0, q = 0;
            for (int64_t j = 0; j < Cg * S; j++) s += v[j];
            double m = s / (double)(Cg * S);
            for (int64_t j = 0; j < Cg * S; j++) q += pow(v[j] - m, 2);
            double inv = 1.0 / sqrt(q / (double)(Cg * S) + eps);
            for (int64_t j = 0; j < Cg * S; j++) {
                int64_t c = gr * Cg + j / S, at = (i * C + gr * Cg) * S + j;
                ref[at] = (v[j] - m) * inv * (affine ? g[c] : 1.0) + (affine ? b[c] : 0.0);
                tol[at] = 1e-4;
            }
        }
    int64_t xs[4] = {N, C, H, W}, cs[1] = {C};
    wt_tensor *tx = make(x, 4, xs, affine ? 2 : 1), *tg = affine ? make(g, 1, cs, false) : NULL;
    wt_tensor *tb = affine ? make(b, 1, cs, false) : NULL, *out = NULL;
    if (CHECK(wt_group_norm(tx, G, tg, tb, (float)eps, &out) == WT_OK, "group_norm: %s", wt_last_error()))
        compare(affine ? "group_norm" : "group_norm plain", out, 4, xs, ref, tol, total);
    wt_tensor_release(tx), wt_tensor_release(tg), wt_tensor_release(tb), wt_tensor_release(out);
    free(x), free(g), free(b), free(ref), free(tol);
}

/* f16 in, f16 out: computed in f32 and rounded once. */
static void test_f16(void)
{
    const int64_t xs[4] = {1, 2, 5, 5}, ws[4] = {3, 2, 3, 3};
    /* Small integers and halves: exact in f16, sums exact in f32. */
    float xf[50], wf[54];
    for (int i = 0; i < 50; i++) xf[i] = (float)((i * 7) % 9 - 4) * 0.5f;
    for (int i = 0; i < 54; i++) wf[i] = (float)((i * 5) % 7 - 3);
    wt_tensor *x32 = make(xf, 4, xs, false), *w32 = make(wf, 4, ws, false), *x16 = NULL, *w16 = NULL, *o = NULL,
              *ref = NULL, *p = NULL;
    wt_cast(x32, WT_F16, &x16);
    wt_cast(w32, WT_F16, &w16);
    wt_conv_options co;
    wt_conv_options_init(&co);
    co.padding[0] = co.padding[1] = co.padding[2] = co.padding[3] = 1;
    if (CHECK(wt_conv2d(x16, w16, NULL, &co, &o) == WT_OK, "conv2d f16: %s", wt_last_error()) &&
        CHECK(wt_conv2d(x32, w32, NULL, &co, &ref) == WT_OK, "conv2d f32: %s", wt_last_error())) {
        CHECK(wt_tensor_dtype(o) == WT_F16, "conv2d f16: result dtype %d", (int)wt_tensor_dtype(o));
        float want[75];
        wt_tensor *back = NULL;
        if (wt_cast(o, WT_F32, &back) == WT_OK && wt_tensor_read(back, want, sizeof want) == WT_OK) {
            float r32[75];
            wt_tensor_read(ref, r32, sizeof r32);
            int bad = 0;
            for (int i = 0; i < 75; i++) bad += want[i] != r32[i];
            CHECK(bad == 0, "conv2d f16: %d values differ from the exact f32 result", bad);
        }
        wt_tensor_release(back);
    }
    wt_pool_options po;
    wt_pool_options_init(&po);
    po.kernel[0] = po.kernel[1] = 2;
    wt_tensor *pi = NULL;
    if (CHECK(wt_max_pool2d(x16, &po, &p, &pi) == WT_OK, "max_pool2d f16: %s", wt_last_error()))
        CHECK(wt_tensor_dtype(p) == WT_F16 && wt_tensor_dtype(pi) == WT_I32, "max_pool2d f16: dtypes");
    /* Norms on f16 x with f32 statistics: the result is f16, equal to the
     * f32 result rounded once. */
    {
        int64_t cs[1] = {2};
        float rm[2] = {0.5f, -0.25f}, rv[2] = {4.0f, 0.25f};
        wt_tensor *trm = make(rm, 1, cs, 0), *trv = make(rv, 1, cs, 0), *b16 = NULL, *b32 = NULL, *g16 = NULL,
                  *g32 = NULL;
        wt_batch_norm_options bo;
        wt_batch_norm_options_init(&bo);
        bo.eps = 0.0f;
        if (CHECK(wt_batch_norm(x16, trm, trv, NULL, NULL, &bo, &b16, NULL, NULL) == WT_OK &&
                      wt_batch_norm(x32, trm, trv, NULL, NULL, &bo, &b32, NULL, NULL) == WT_OK &&
                      wt_group_norm(x16, 2, NULL, NULL, 1e-5f, &g16) == WT_OK &&
                      wt_group_norm(x32, 2, NULL, NULL, 1e-5f, &g32) == WT_OK,
                  "norms f16: %s", wt_last_error())) {
            CHECK(wt_tensor_dtype(b16) == WT_F16 && wt_tensor_dtype(g16) == WT_F16, "norms f16: result dtypes");
            wt_tensor *pairs[2][2] = {{b16, b32}, {g16, g32}};
            for (int k = 0; k < 2; k++) {
                wt_tensor *r16 = NULL;
                uint16_t h[50], hr[50];
                if (wt_cast(pairs[k][1], WT_F16, &r16) == WT_OK && wt_tensor_read(pairs[k][0], h, sizeof h) == WT_OK &&
                    wt_tensor_read(r16, hr, sizeof hr) == WT_OK)
                    CHECK(memcmp(h, hr, sizeof h) == 0, "%s f16: differs from the f32 result rounded",
                          k ? "group_norm" : "batch_norm");
                wt_tensor_release(r16);
            }
        }
        wt_tensor_release(trm), wt_tensor_release(trv), wt_tensor_release(b16), wt_tensor_release(b32);
        wt_tensor_release(g16), wt_tensor_release(g32);
    }
    wt_tensor_release(x32), wt_tensor_release(w32), wt_tensor_release(x16), wt_tensor_release(w16);
    wt_tensor_release(o), wt_tensor_release(ref), wt_tensor_release(p), wt_tensor_release(pi);
}

/* Unbatched [C, H, W] input: [C, OH, OW] results. */
static void test_unbatched_pool(void)
{
    const int64_t C = 2, H = 5, W = 6, OH = 2, OW = 3;
    float *x = random_floats(C * H * W, -1, 1);
    double ref[12], tol[12] = {0};
    int32_t ref_idx[12];
    for (int64_t c = 0; c < C; c++)
        for (int64_t oy = 0; oy < OH; oy++)
            for (int64_t ox = 0; ox < OW; ox++) {
                double m = -INFINITY;
                int32_t best = 0;
                for (int64_t ky = 0; ky < 2; ky++)
                    for (int64_t kx = 0; kx < 2; kx++) {
                        int64_t y = oy * 2 + ky, xx = ox * 2 + kx;
                        if (x[(c * H + y) * W + xx] > m) m = x[(c * H + y) * W + xx], best = (int32_t)(y * W + xx);
                    }
                ref[(c * OH + oy) * OW + ox] = m, ref_idx[(c * OH + oy) * OW + ox] = best;
            }
    int64_t xs[3] = {C, H, W}, os[3] = {C, OH, OW};
    wt_tensor *tx = make(x, 3, xs, 1), *out = NULL, *idx = NULL;
    wt_pool_options po;
    wt_pool_options_init(&po);
    po.kernel[0] = po.kernel[1] = 2;
    if (CHECK(wt_max_pool2d(tx, &po, &out, &idx) == WT_OK, "unbatched max_pool2d: %s", wt_last_error()) &&
        compare("unbatched max_pool2d", out, 3, os, ref, tol, 12)) {
        int32_t got[12];
        CHECK(wt_tensor_ndim(idx) == 3 && wt_tensor_read(idx, got, sizeof got) == WT_OK &&
                  memcmp(got, ref_idx, sizeof got) == 0,
              "unbatched max_pool2d: indices");
    }
    wt_tensor_release(tx), wt_tensor_release(out), wt_tensor_release(idx);
    free(x);
}

/* Empty batches give empty results of the right shape; an empty plane
 * with padding gives the bias alone. */
static void test_empty(void)
{
    char b1[64];
    float v[4] = {0.5f, 0.5f, 0.5f, 0.5f};
    int64_t xs[4] = {0, 3, 5, 5}, o_pool[4] = {0, 3, 2, 2}, o_adapt[4] = {0, 3, 3, 1}, o_glob[4] = {0, 3, 1, 1};
    int64_t cs[1] = {3};
    wt_tensor *x = NULL, *out = NULL, *idx = NULL, *rm = make(v, 1, cs, 0), *rv = make(v, 1, cs, 0);
    wt_tensor_zeros(g_ctx, WT_F32, 4, xs, &x);
    wt_pool_options po;
    wt_pool_options_init(&po);
    po.kernel[0] = po.kernel[1] = 2;
#define EXPECT_SHAPE(call, shape, what)                                                                  \
    do {                                                                                               \
        wt_status st_ = (call);                                                                        \
        if (CHECK(st_ == WT_OK, "%s: %s", what, wt_last_error()))                                      \
            CHECK(wt_tensor_ndim(out) == 4 && !memcmp(wt_tensor_shape(out), shape, sizeof(int64_t) * 4), \
                  "%s: shape %s", what, test_shape_str(wt_tensor_ndim(out), wt_tensor_shape(out), b1, sizeof b1)); \
        wt_tensor_release(out), out = NULL;                                                            \
    } while (0)
    EXPECT_SHAPE(wt_max_pool2d(x, &po, &out, &idx), o_pool, "empty max_pool2d");
    CHECK(idx && wt_tensor_numel(idx) == 0 && wt_tensor_dtype(idx) == WT_I32, "empty max_pool2d: indices");
    wt_tensor_release(idx);
    EXPECT_SHAPE(wt_avg_pool2d(x, &po, &out), o_pool, "empty avg_pool2d");
    EXPECT_SHAPE(wt_adaptive_avg_pool2d(x, 3, 1, &out), o_adapt, "empty adaptive_avg_pool2d");
    EXPECT_SHAPE(wt_global_max_pool2d(x, &out), o_glob, "empty global_max_pool2d");
    EXPECT_SHAPE(wt_global_avg_pool2d(x, &out), o_glob, "empty global_avg_pool2d");
    wt_batch_norm_options bo;
    wt_batch_norm_options_init(&bo);
    EXPECT_SHAPE(wt_batch_norm(x, rm, rv, NULL, NULL, &bo, &out, NULL, NULL), xs, "empty batch_norm");
    EXPECT_SHAPE(wt_group_norm(x, 3, NULL, NULL, 1e-5f, &out), xs, "empty group_norm");
    int64_t wts[4] = {3, 2, 3, 3}, o_t[4] = {0, 2, 11, 11};
    wt_tensor *wt = NULL;
    wt_tensor_zeros(g_ctx, WT_F32, 4, wts, &wt);
    wt_conv_options co;
    wt_conv_options_init(&co);
    co.stride[0] = co.stride[1] = 2;
    EXPECT_SHAPE(wt_conv_transpose2d(x, wt, NULL, &co, &out), o_t, "empty conv_transpose2d");
    /* A plane of no rows, padded: every output is the bias. */
    int64_t ps[4] = {1, 1, 0, 3}, ws[4] = {2, 1, 1, 1}, bs[1] = {2}, o_pad[4] = {1, 2, 2, 3};
    float bias[2] = {1.5f, -2.0f}, w1[2] = {3.0f, 4.0f};
    wt_tensor *px = NULL, *pw = make(w1, 4, ws, 0), *pb = make(bias, 1, bs, 0);
    wt_tensor_zeros(g_ctx, WT_F32, 4, ps, &px);
    co.stride[0] = co.stride[1] = 1;
    co.padding[0] = co.padding[1] = 1;
    double ref[12], tol[12] = {0};
    for (int i = 0; i < 12; i++) ref[i] = bias[i / 6];
    if (CHECK(wt_conv2d(px, pw, pb, &co, &out) == WT_OK, "conv2d of an empty plane: %s", wt_last_error()))
        compare("conv2d of an empty plane", out, 4, o_pad, ref, tol, 12);
    wt_tensor_release(out);
#undef EXPECT_SHAPE
    wt_tensor_release(x), wt_tensor_release(rm), wt_tensor_release(rv), wt_tensor_release(wt);
    wt_tensor_release(px), wt_tensor_release(pw), wt_tensor_release(pb);
}

/* Outputs of more than 65,535 x 256 elements: the GPU folds the launch
 * into two dimensions (every kernel here uses the same fold). Values are
 * small integers, so every result is exact. Run on Vulkan only: the fold
 * does not depend on the API, and these sizes take seconds on a software
 * renderer. */
static void test_large(void)
{
    const int64_t side = 4100, n = side * side; /* 16.8M > 65,535 * 256 */
    float *x = malloc(sizeof(float) * (size_t)n * 2);
    for (int64_t i = 0; i < 2 * n; i++) x[i] = (float)(i % 7) - 3.0f;
    double *ref = malloc(sizeof(double) * (size_t)n), *tol = calloc((size_t)n, sizeof(double));
    int64_t xs[4] = {1, 1, side, side};
    wt_tensor *tx = make(x, 4, xs, 0), *out = NULL;
    /* Average pooling with a 1x1 window: the identity. */
    wt_pool_options po;
    wt_pool_options_init(&po);
    po.kernel[0] = po.kernel[1] = 1;
    for (int64_t i = 0; i < n; i++) ref[i] = x[i];
    if (CHECK(wt_avg_pool2d(tx, &po, &out) == WT_OK, "large avg_pool2d: %s", wt_last_error()))
        compare("large avg_pool2d", out, 4, xs, ref, tol, n);
    wt_tensor_release(out), out = NULL;
    /* Depthwise 1x1 convolution (the direct kernel): 2x + 1. */
    float two = 2.0f, one = 1.0f;
    int64_t ws[4] = {1, 1, 1, 1}, bs[1] = {1};
    wt_tensor *tw = make(&two, 4, ws, 0), *tb = make(&one, 1, bs, 0);
    for (int64_t i = 0; i < n; i++) ref[i] = 2.0 * x[i] + 1.0;
    if (CHECK(wt_conv2d(tx, tw, tb, NULL, &out) == WT_OK, "large conv2d: %s", wt_last_error()))
        compare("large conv2d direct", out, 4, xs, ref, tol, n);
    wt_tensor_release(out), out = NULL;
    /* Batch norm in inference (the channel map): (x - 1) / sqrt(4) = (x - 1) / 2. */
    wt_tensor *rm = make(&one, 1, bs, 0), *rv = NULL;
    wt_tensor_full(g_ctx, WT_F32, 1, bs, 4.0, &rv);
    wt_batch_norm_options bo;
    wt_batch_norm_options_init(&bo);
    bo.eps = 0.0f;
    for (int64_t i = 0; i < n; i++) ref[i] = (x[i] - 1.0) / 2.0;
    if (CHECK(wt_batch_norm(tx, rm, rv, NULL, NULL, &bo, &out, NULL, NULL) == WT_OK, "large batch_norm: %s",
              wt_last_error()))
        compare("large batch_norm", out, 4, xs, ref, tol, n);
    wt_tensor_release(out), out = NULL;
    /* Two channels into one through im2col + matmul, with a chunk large
     * enough for the whole column matrix (2 * 2900^2 > 65,535 * 256
     * elements): x0 - x1 + 1. */
    const int64_t side2 = 2900, n2 = side2 * side2;
    int64_t x2s[4] = {1, 2, side2, side2}, w2s[4] = {1, 2, 1, 1}, o2s[4] = {1, 1, side2, side2};
    float w2[2] = {1.0f, -1.0f};
    /* (a view with a row stride past W: not the 1x1 shortcut on x itself) */
    wt_tensor *tx2 = make(x, 4, x2s, 1), *tw2 = make(w2, 4, w2s, 0);
    for (int64_t i = 0; i < n2; i++) ref[i] = (double)x[i] - x[n2 + i] + 1.0;
    setenv("WT_CONV_CHUNK_BYTES", "400000000", 1);
    if (CHECK(wt_conv2d(tx2, tw2, tb, NULL, &out) == WT_OK, "large conv2d im2col: %s", wt_last_error()))
        compare("large conv2d im2col", out, 4, o2s, ref, tol, n2);
    unsetenv("WT_CONV_CHUNK_BYTES");
    wt_tensor_release(out);
    wt_tensor_release(tx), wt_tensor_release(tw), wt_tensor_release(tb), wt_tensor_release(rm);
    wt_tensor_release(rv), wt_tensor_release(tx2), wt_tensor_release(tw2);
    free(x), free(ref), free(tol);
}

/* ----------------------------------------------------------- bad input */

static void test_errors(void)
{
    float data[256];
    for (int i = 0; i < 256; i++) data[i] = 1.0f;
    int64_t xs[4] = {1, 4, 5, 5}, ws[4] = {2, 4, 3, 3}, w3[4] = {3, 2, 3, 3}, big[4] = {2, 4, 7, 7};
    int64_t bs[1] = {3}, s1[1] = {4};
    wt_tensor *x = make(data, 4, xs, false), *w = make(data, 4, ws, false), *wg = make(data, 4, w3, false);
    wt_tensor *wbig = make(data, 4, big, false), *b3 = make(data, 1, bs, false), *c4 = make(data, 1, s1, false);
    wt_tensor *out = (wt_tensor *)&out, *idx = (wt_tensor *)&idx, *xi = NULL;
    wt_conv_options o;
    wt_conv_options_init(&o);

    expect_code(wt_conv2d(NULL, w, NULL, &o, &out), WT_ERR_INVALID_ARGUMENT, "conv2d NULL x");
    CHECK(out == NULL, "conv2d: out not cleared on failure");
    expect_code(wt_conv2d(x, w, NULL, &o, NULL), WT_ERR_INVALID_ARGUMENT, "conv2d NULL out");
    o.groups = 3;
    expect_code(wt_conv2d(x, wg, NULL, &o, &out), WT_ERR_INVALID_ARGUMENT, "conv2d groups not dividing C");
    o.groups = 0;
    expect_code(wt_conv2d(x, w, NULL, &o, &out), WT_ERR_INVALID_ARGUMENT, "conv2d zero groups");
    wt_conv_options_init(&o);
    o.stride[1] = 0;
    expect_code(wt_conv2d(x, w, NULL, &o, &out), WT_ERR_INVALID_ARGUMENT, "conv2d zero stride");
    wt_conv_options_init(&o);
    o.dilation[0] = -1;
    expect_code(wt_conv2d(x, w, NULL, &o, &out), WT_ERR_INVALID_ARGUMENT, "conv2d negative dilation");
    wt_conv_options_init(&o);
    o.padding[2] = -1;
    expect_code(wt_conv2d(x, w, NULL, &o, &out), WT_ERR_INVALID_ARGUMENT, "conv2d negative padding");
    wt_conv_options_init(&o);
    expect_code(wt_conv2d(x, wbig, NULL, &o, &out), WT_ERR_SHAPE, "conv2d kernel larger than input");
    o.padding[0] = o.padding[1] = 1;
    expect_code(wt_conv2d(x, wbig, NULL, &o, &out), WT_ERR_SHAPE, "conv2d kernel larger than padded rows");
    wt_conv_options_init(&o);
    o.dilation[0] = 3;
    expect_code(wt_conv2d(x, w, NULL, &o, &out), WT_ERR_SHAPE, "conv2d dilated kernel larger than input");
    wt_conv_options_init(&o);
    expect_code(wt_conv2d(x, wg, NULL, &o, &out), WT_ERR_SHAPE, "conv2d weight channels mismatch");
    expect_code(wt_conv2d(x, w, b3, &o, &out), WT_ERR_SHAPE, "conv2d bias of the wrong size");
    expect_code(wt_conv2d(c4, w, NULL, &o, &out), WT_ERR_SHAPE, "conv2d 1-D x");
    expect_code(wt_conv2d(x, c4, NULL, &o, &out), WT_ERR_SHAPE, "conv2d 1-D weight");
    o.struct_size = 3;
    expect_code(wt_conv2d(x, w, NULL, &o, &out), WT_ERR_INVALID_ARGUMENT, "conv2d options not initialised");
    /* A struct from an older header (up to `same`): the later fields keep
     * their defaults, whatever the memory beyond holds. */
    wt_conv_options_init(&o);
    o.struct_size = (uint32_t)offsetof(wt_conv_options, same);
    o.same = true;
    if (CHECK(wt_conv2d(x, w, NULL, &o, &out) == WT_OK, "conv2d older options: %s", wt_last_error()))
        CHECK(wt_tensor_shape(out)[2] == 3, "conv2d older options: `same` beyond struct_size was read");
    wt_tensor_release(out);
    out = NULL;
    int32_t ints[100] = {0};
    if (wt_tensor_from_data(g_ctx, WT_I32, 4, xs, ints, &xi) == WT_OK) {
        expect_code(wt_conv2d(xi, w, NULL, NULL, &out), WT_ERR_UNSUPPORTED, "conv2d i32 x");
        wt_pool_options po;
        wt_pool_options_init(&po);
        po.kernel[0] = po.kernel[1] = 2;
        expect_code(wt_max_pool2d(xi, &po, &out, &idx), WT_ERR_UNSUPPORTED, "max_pool2d i32 x");
    }
    wt_conv_options_init(&o);
    o.output_padding[0] = 1; /* not below stride 1 nor dilation 1 */
    expect_code(wt_conv_transpose2d(x, wg, NULL, &o, &out), WT_ERR_SHAPE, "conv_transpose2d weight mismatch");
    int64_t wt_shape[4] = {4, 2, 3, 3};
    wt_tensor *wt = make(data, 4, wt_shape, false);
    expect_code(wt_conv_transpose2d(x, wt, NULL, &o, &out), WT_ERR_INVALID_ARGUMENT, "conv_transpose2d output_padding");
    wt_conv_options_init(&o);
    o.same = true;
    expect_code(wt_conv_transpose2d(x, wt, NULL, &o, &out), WT_ERR_INVALID_ARGUMENT, "conv_transpose2d same");
    wt_conv_options_init(&o);
    o.padding[0] = 9;
    expect_code(wt_conv_transpose2d(x, wt, NULL, &o, &out), WT_ERR_SHAPE, "conv_transpose2d padding eats the output");
    wt_conv_options_init(&o);
    o.groups = 3;
    expect_code(wt_conv_transpose2d(x, wt, NULL, &o, &out), WT_ERR_INVALID_ARGUMENT, "conv_transpose2d groups");
    wt_conv_options_init(&o);
    expect_code(wt_conv1d(x, w, NULL, &o, &out), WT_ERR_SHAPE, "conv1d with 4-D input");

    /* Tensors of another context. */
    wt_context_options co;
    wt_context_options_init(&co);
    co.backend = WT_BACKEND_CPU;
    wt_context *other = NULL;
    if (CHECK(wt_context_create(&co, &other) == WT_OK, "second context: %s", wt_last_error())) {
        wt_tensor *wo = NULL, *co4 = NULL;
        wt_tensor_from_data(other, WT_F32, 4, ws, data, &wo);
        wt_tensor_from_data(other, WT_F32, 1, s1, data, &co4);
        expect_code(wt_conv2d(x, wo, NULL, NULL, &out), WT_ERR_INVALID_ARGUMENT, "conv2d weight of another context");
        wt_batch_norm_options bo2;
        wt_batch_norm_options_init(&bo2);
        expect_code(wt_batch_norm(x, co4, co4, NULL, NULL, &bo2, &out, NULL, NULL), WT_ERR_INVALID_ARGUMENT,
                    "batch_norm statistics of another context");
        expect_code(wt_group_norm(x, 2, co4, NULL, 1e-5f, &out), WT_ERR_INVALID_ARGUMENT,
                    "group_norm weight of another context");
        wt_tensor_release(wo), wt_tensor_release(co4);
        wt_context_destroy(other);
    }

    wt_pool_options po;
    wt_pool_options_init(&po);
    expect_code(wt_max_pool2d(x, &po, &out, &idx), WT_ERR_INVALID_ARGUMENT, "max_pool2d no kernel");
    CHECK(out == NULL && idx == NULL, "max_pool2d: outputs not cleared");
    po.kernel[0] = po.kernel[1] = 2;
    expect_code(wt_max_pool2d(x, NULL, &out, &idx), WT_ERR_INVALID_ARGUMENT, "max_pool2d NULL options");
    po.stride[0] = -1;
    expect_code(wt_max_pool2d(x, &po, &out, &idx), WT_ERR_INVALID_ARGUMENT, "max_pool2d negative stride");
    po.stride[0] = 0;
    po.padding[1] = -1;
    expect_code(wt_max_pool2d(x, &po, &out, NULL), WT_ERR_INVALID_ARGUMENT, "max_pool2d negative padding");
    po.padding[1] = 2;
    expect_code(wt_max_pool2d(x, &po, &out, NULL), WT_ERR_INVALID_ARGUMENT, "max_pool2d padding over half the kernel");
    po.padding[1] = 0;
    po.kernel[0] = 6;
    expect_code(wt_max_pool2d(x, &po, &out, NULL), WT_ERR_SHAPE, "max_pool2d kernel larger than input");
    po.kernel[0] = 2;
    po.dilation[0] = 2;
    expect_code(wt_avg_pool2d(x, &po, &out), WT_ERR_INVALID_ARGUMENT, "avg_pool2d with dilation");
    po.dilation[0] = 1;
    expect_code(wt_avg_pool2d(c4, &po, &out), WT_ERR_SHAPE, "avg_pool2d 1-D x");
    expect_code(wt_adaptive_avg_pool2d(x, 0, 2, &out), WT_ERR_INVALID_ARGUMENT, "adaptive pool zero size");
    expect_code(wt_adaptive_max_pool2d(c4, 2, 2, &out, &idx), WT_ERR_SHAPE, "adaptive max 1-D x");
    expect_code(wt_global_max_pool2d(c4, &out), WT_ERR_SHAPE, "global max 1-D x");

    wt_batch_norm_options bo;
    wt_batch_norm_options_init(&bo);
    expect_code(wt_batch_norm(x, NULL, NULL, NULL, NULL, &bo, &out, NULL, NULL), WT_ERR_INVALID_ARGUMENT,
                "batch_norm inference without running stats");
    expect_code(wt_batch_norm(x, c4, NULL, NULL, NULL, &bo, &out, NULL, NULL), WT_ERR_INVALID_ARGUMENT,
                "batch_norm one running stat");
    expect_code(wt_batch_norm(x, b3, b3, NULL, NULL, &bo, &out, NULL, NULL), WT_ERR_SHAPE,
                "batch_norm running stats of the wrong size");
    expect_code(wt_batch_norm(x, c4, c4, b3, NULL, &bo, &out, NULL, NULL), WT_ERR_SHAPE, "batch_norm weight size");
    bo.eps = -1.0f;
    expect_code(wt_batch_norm(x, c4, c4, NULL, NULL, &bo, &out, NULL, NULL), WT_ERR_INVALID_ARGUMENT,
                "batch_norm negative eps");
    wt_batch_norm_options_init(&bo);
    bo.training = true;
    int64_t one[4] = {1, 4, 1, 1};
    wt_tensor *x1 = make(data, 4, one, false);
    expect_code(wt_batch_norm(x1, NULL, NULL, NULL, NULL, &bo, &out, NULL, NULL), WT_ERR_SHAPE,
                "batch_norm training on one value per channel");
    expect_code(wt_group_norm(x, 3, NULL, NULL, 1e-5f, &out), WT_ERR_INVALID_ARGUMENT, "group_norm groups");
    expect_code(wt_group_norm(x, 2, b3, NULL, 1e-5f, &out), WT_ERR_SHAPE, "group_norm weight size");
    expect_code(wt_group_norm(c4, 2, NULL, NULL, 1e-5f, &out), WT_ERR_SHAPE, "group_norm 1-D x");

    wt_tensor_release(x), wt_tensor_release(w), wt_tensor_release(wg), wt_tensor_release(wbig);
    wt_tensor_release(b3), wt_tensor_release(c4), wt_tensor_release(xi), wt_tensor_release(wt);
    wt_tensor_release(x1);
}

int main(int argc, char **argv)
{
    test_run run;
    if (!test_begin(&run, "nn_conv", argc, argv)) return run.status;
    g_ctx = run.ctx;
    const test_backend be = run.backend;
    /* "tiles": a few tile-edge shapes alone (run again with other tiles). */
    if (argc > 2 && strcmp(argv[2], "tiles") == 0) {
        test_conv2d_tiles(false);
        test_conv_transpose2d_tiles(false);
        return test_end(&run);
    }
    test_conv2d();
    test_conv2d_tiles(true);
    run_conv1d("conv1d stride dil asym groups", 2, 4, 17, 6, 3, 2, 1, 3, 2, 2, false, true);
    run_conv1d("conv1d same", 1, 3, 10, 2, 4, 1, 0, 0, 1, 1, true, false);
    run_conv1d("conv1d depthwise", 3, 5, 9, 5, 3, 3, 2, 2, 1, 5, false, true);
    /* "conv": conv2d and conv1d alone (run again with another kernel
     * choice, e.g. WT_CONV_DIRECT_MAX_CG=64: every conv2d through the
     * direct one); "convolutions": the transposed one too. */
    const bool transposed_too = argc <= 2 || strcmp(argv[2], "conv") != 0;
    if (transposed_too) {
        test_conv_transpose2d();
        test_conv_transpose2d_tiles(true);
    }
    if (argc > 2 && (strcmp(argv[2], "conv") == 0 || strcmp(argv[2], "convolutions") == 0)) {
        return test_end(&run);
    }
    test_pooling();
    run_adaptive(2, 3, 7, 10, 3, 4, false);
    run_adaptive(2, 3, 7, 10, 3, 4, true);
    run_adaptive(1, 2, 5, 5, 7, 2, false); /* more outputs than inputs along rows */
    run_adaptive(1, 2, 5, 5, 7, 2, true);
    test_global();
    test_batch_norm(false, true, 5, 3, 1);
    test_batch_norm(false, false, 4, 4, 0);
    test_batch_norm(true, true, 5, 3, 2);
    test_batch_norm(true, false, 2, 4, 0);
    test_batch_norm(true, true, 40, 41, 1); /* > 4096 values a channel: the GPU sums in chunks */
    test_group_norm(2, 6, 5, 3, 3, true);
    test_group_norm(3, 4, 7, 1, 4, false);
    test_f16();
    test_unbatched_pool();
    test_empty();
    if (be == TEST_BACKEND_VULKAN) test_large();
    test_errors();
    /* Every tensor of the tests is released: a storage still alive is one
     * the library leaked (temporaries, error paths). */
    wt_memory_stats ms;
    if (CHECK(wt_context_memory_stats(g_ctx, &ms) == WT_OK, "memory stats: %s", wt_last_error()))
        CHECK(ms.live_tensors == 0, "%llu storages left alive", (unsigned long long)ms.live_tensors);
    return test_end(&run);
}
