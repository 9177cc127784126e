/* api_forms <cpu|vulkan|gles>: the forms the API rules gave some functions
 * (include/webtensor.h, rules 3, 5, 6, 7 and section 16).
 *
 *  - What is new in them, against references computed here in double:
 *    layer norm backward over several trailing axes, topk along any axis
 *    in either order.
 *  - Each deprecated name gives exactly what its replacement gives for
 *    the same arguments (so every argument reaches its place: x and dy,
 *    for one, are different tensors).
 *  - The options structs: NULL gives the documented defaults, a struct not
 *    made by its _init is refused, and a double that is not finite in f32
 *    is refused where the kernels compute in f32. */
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MIN_(a, b) ((a) < (b) ? (a) : (b))
#define MAX_(a, b) ((a) > (b) ? (a) : (b))

static wt_context *g_ctx;

static wt_tensor *make(int ndim, const int64_t *shape, float lo, float hi)
{
    int64_t n = 1;
    for (int i = 0; i < ndim; i++) n *= shape[i];
    float *v = malloc((size_t)n * sizeof *v);
    for (int64_t i = 0; i < n; i++) v[i] = test_rng_uniform(lo, hi);
    wt_tensor *t = NULL;
    CHECK(wt_tensor_from_data(g_ctx, WT_F32, ndim, shape, v, &t) == WT_OK, "from_data: %s", wt_last_error());
    free(v);
    return t;
}

/* The elements of t as f32 (NULL after a reported failure). */
static float *values(const wt_tensor *t)
{
    if (!t) return NULL;
    char err[256];
    float *v = test_read_guarded(t, err, sizeof err);
    CHECK(v != NULL, "read: %s", err);
    return v;
}

static bool same_shape(const wt_tensor *a, const wt_tensor *b)
{
    if (wt_tensor_ndim(a) != wt_tensor_ndim(b)) return false;
    for (int i = 0; i < wt_tensor_ndim(a); i++)
        if (wt_tensor_shape(a)[i] != wt_tensor_shape(b)[i]) return false;
    return true;
}

/* a and b: the same shape, dtype and bits. Releases both. */
static void expect_same(const char *what, wt_status sa, wt_tensor *a, wt_status sb, wt_tensor *b)
{
    if (!CHECK(sa == WT_OK && sb == WT_OK, "%s: %s / %s (%s)", what, wt_status_string(sa), wt_status_string(sb),
               wt_last_error()) ||
        !CHECK(same_shape(a, b) && wt_tensor_dtype(a) == wt_tensor_dtype(b), "%s: shapes or dtypes differ", what)) {
        wt_tensor_release(a);
        wt_tensor_release(b);
        return;
    }
    size_t bytes = (size_t)wt_tensor_numel(a) * wt_dtype_size(wt_tensor_dtype(a));
    unsigned char *ha = malloc(bytes + 1), *hb = malloc(bytes + 1);
    CHECK(wt_tensor_read(a, ha, bytes) == WT_OK && wt_tensor_read(b, hb, bytes) == WT_OK, "%s: read", what);
    CHECK(memcmp(ha, hb, bytes) == 0, "%s: the deprecated form differs from its replacement", what);
    free(ha);
    free(hb);
    wt_tensor_release(a);
    wt_tensor_release(b);
}

/* ------------------------------------------------- what is new, by reference */

/* Layer norm backward over the last k axes of x [R, C...] (C elements per
 * row), in double. */
static void ref_layer_norm_backward(const float *x, const float *w, const float *dy, int64_t R, int64_t C, double eps,
                                    double *dx, double *dw, double *db)
{
    for (int64_t c = 0; c < C; c++) dw[c] = db[c] = 0;
    for (int64_t r = 0; r < R; r++) {
        const float *xr = x + r * C, *gr = dy + r * C;
        double mean = 0, var = 0;
        for (int64_t c = 0; c < C; c++) mean += xr[c];
        mean /= (double)C;
        for (int64_t c = 0; c < C; c++) var += (xr[c] - mean) * (xr[c] - mean);
        var /= (double)C;
        double rstd = 1.0 / sqrt(var + eps), mg = 0, mgx = 0;
        for (int64_t c = 0; c < C; c++) {
            double xhat = (xr[c] - mean) * rstd, g = gr[c] * w[c];
            mg += g;
            mgx += g * xhat;
            dw[c] += gr[c] * xhat;
            db[c] += gr[c];
        }
        mg /= (double)C;
        mgx /= (double)C;
        for (int64_t c = 0; c < C; c++) {
            double xhat = (xr[c] - mean) * rstd;
            dx[r * C + c] = rstd * (gr[c] * w[c] - mg - xhat * mgx);
        }
    }
}

static void check_close(const char *what, const float *got, const double *want, int64_t n, double tol)
{
    if (!got) return;
    double worst = 0;
    for (int64_t i = 0; i < n; i++) {
        double e = fabs(got[i] - want[i]) / (1.0 + fabs(want[i]));
        if (!(e <= worst)) worst = e;
    }
    CHECK(worst <= tol, "%s: relative error %.3g > %.3g", what, worst, tol);
}

static void layer_norm_backward_trailing_axes(void)
{
    const int64_t xs[3] = {2, 3, 4}, ws[2] = {3, 4};
    wt_tensor *x = make(3, xs, -2, 2), *dy = make(3, xs, -1, 1), *w = make(2, ws, 0.5f, 1.5f);
    wt_tensor *dx = NULL, *dw = NULL, *db = NULL;
    const double eps = 1e-5;
    wt_status st = wt_layer_norm_backward(dy, x, 2, w, eps, &dx, &dw, &db);
    if (CHECK(st == WT_OK, "layer_norm_backward(normalized_ndim 2): %s", wt_last_error())) {
        CHECK(same_shape(dx, x) && same_shape(dw, w) && same_shape(db, w), "layer_norm_backward: result shapes");
        float *hx = values(x), *hy = values(dy), *hw = values(w);
        float *gx = values(dx), *gw = values(dw), *gb = values(db);
        double rdx[24], rdw[12], rdb[12];
        if (hx && hy && hw) {
            ref_layer_norm_backward(hx, hw, hy, 2, 12, eps, rdx, rdw, rdb);
            check_close("layer_norm_backward dx", gx, rdx, 24, 2e-5);
            check_close("layer_norm_backward dweight", gw, rdw, 12, 2e-5);
            check_close("layer_norm_backward dbias", gb, rdb, 12, 2e-5);
        }
        free(hx), free(hy), free(hw), free(gx), free(gw), free(gb);
    }
    wt_tensor_release(dx);
    wt_tensor_release(dw);
    wt_tensor_release(db);
    /* normalized_ndim outside [1, ndim], and a weight of the wrong shape. */
    CHECK(wt_layer_norm_backward(dy, x, 4, w, eps, &dx, NULL, NULL) == WT_ERR_INVALID_ARGUMENT && dx == NULL,
          "layer_norm_backward: normalized_ndim 4 of 3 axes");
    CHECK(wt_layer_norm_backward(dy, x, 1, w, eps, &dx, NULL, NULL) == WT_ERR_SHAPE && dx == NULL,
          "layer_norm_backward: a [3, 4] weight for one axis");
    wt_tensor_release(x);
    wt_tensor_release(dy);
    wt_tensor_release(w);
}

static void topk_any_axis(void)
{
    /* Distinct values: the order has no ties to break. */
    const int64_t shape[2] = {5, 3};
    float v[15];
    for (int i = 0; i < 15; i++) v[i] = (float)((i * 7) % 15) - 6.5f;
    wt_tensor *x = NULL, *val = NULL, *idx = NULL;
    CHECK(wt_tensor_from_data(g_ctx, WT_F32, 2, shape, v, &x) == WT_OK, "from_data");
    for (int desc = 0; desc < 2; desc++) {
        wt_status st = wt_topk_v2(x, 2, 0, desc, &val, &idx);
        if (!CHECK(st == WT_OK, "topk_v2 axis 0: %s", wt_last_error())) continue;
        CHECK(wt_tensor_ndim(val) == 2 && wt_tensor_shape(val)[0] == 2 && wt_tensor_shape(val)[1] == 3,
              "topk_v2 axis 0: values [2, 3]");
        float *hv = values(val);
        int32_t hi[6] = {0};
        CHECK(wt_tensor_read(idx, hi, sizeof hi) == WT_OK, "topk_v2: read indices");
        for (int c = 0; c < 3 && hv; c++) {
            /* The reference: the column's rows in the asked order. */
            int order[5] = {0, 1, 2, 3, 4};
            for (int a = 0; a < 5; a++)
                for (int b = a + 1; b < 5; b++) {
                    float va = v[order[a] * 3 + c], vb = v[order[b] * 3 + c];
                    if (desc ? vb > va : vb < va) {
                        int t = order[a];
                        order[a] = order[b];
                        order[b] = t;
                    }
                }
            for (int j = 0; j < 2; j++)
                CHECK(hi[j * 3 + c] == order[j] && hv[j * 3 + c] == v[order[j] * 3 + c],
                      "topk_v2 axis 0 %s: column %d, rank %d: index %d (want %d)", desc ? "descending" : "ascending", c,
                      j, hi[j * 3 + c], order[j]);
        }
        free(hv);
        wt_tensor_release(val);
        wt_tensor_release(idx);
    }
    CHECK(wt_topk_v2(x, 6, 0, true, &val, NULL) == WT_ERR_INVALID_ARGUMENT && val == NULL,
          "topk_v2: k past the axis's extent");
    CHECK(wt_topk_v2(x, 1, 2, true, &val, NULL) == WT_ERR_INVALID_ARGUMENT && val == NULL, "topk_v2: axis 2 of 2");
    wt_tensor_release(x);
}

/* Pooling with asymmetric padding (top, bottom, left, right) against a
 * reference here: max ignores the padding; the average divides by the
 * window clipped to the padded input (count_include_pad) or to the input;
 * the average's backward is its adjoint. */
static void pooling_asymmetric(void)
{
    const int64_t N = 1, C = 2, H = 5, W = 4, shape[4] = {1, 2, 5, 4};
    wt_tensor *x = make(4, shape, -2, 2);
    float *hx = values(x);
    wt_pool2d_options o;
    wt_pool2d_options_init(&o);
    o.kernel[0] = 3, o.kernel[1] = 2;
    o.stride[0] = 2, o.stride[1] = 1;
    o.padding[0] = 1, o.padding[1] = 0, o.padding[2] = 0, o.padding[3] = 1;
    const int64_t top = 1, bottom = 0, left = 0, right = 1;
    const int64_t Ho = (H + top + bottom - 3) / 2 + 1, Wo = (W + left + right - 2) / 1 + 1;
    for (int kind = 0; kind < 3 && hx; kind++) { /* max, avg with and without the padding */
        o.count_include_pad = kind == 1;
        wt_tensor *y = NULL;
        wt_status st = kind == 0 ? wt_max_pool2d_v2(x, &o, &y, NULL) : wt_avg_pool2d_v2(x, &o, &y);
        if (!CHECK(st == WT_OK, "pool2d_v2 %d: %s", kind, wt_last_error())) continue;
        CHECK(wt_tensor_shape(y)[2] == Ho && wt_tensor_shape(y)[3] == Wo, "pool2d_v2 %d: output %lldx%lld", kind,
              (long long)Ho, (long long)Wo);
        float *hy = values(y);
        double *want = calloc((size_t)(N * C * Ho * Wo), sizeof *want);
        double *dxw = calloc((size_t)(N * C * H * W), sizeof *dxw);
        for (int64_t c = 0; c < C; c++)
            for (int64_t oy = 0; oy < Ho; oy++)
                for (int64_t ox = 0; ox < Wo; ox++) {
                    int64_t ys = oy * 2 - top, xs = ox - left, ye = ys + 3, xe = xs + 2;
                    double m = -INFINITY, sum = 0;
                    int64_t padded = (MIN_(ye, H + bottom) - MAX_(ys, -top)) * (MIN_(xe, W + right) - MAX_(xs, -left));
                    int64_t inside = (MIN_(ye, H) - MAX_(ys, 0)) * (MIN_(xe, W) - MAX_(xs, 0));
                    for (int64_t yy = MAX_(ys, 0); yy < MIN_(ye, H); yy++)
                        for (int64_t xx = MAX_(xs, 0); xx < MIN_(xe, W); xx++) {
                            double v = hx[(c * H + yy) * W + xx];
                            m = v > m ? v : m;
                            sum += v;
                        }
                    double div = (double)(kind == 1 ? padded : inside);
                    want[(c * Ho + oy) * Wo + ox] = kind == 0 ? m : sum / div;
                    /* The adjoint of the average, for dy = 1 + the output's index. */
                    double g = 1.0 + (double)((c * Ho + oy) * Wo + ox);
                    for (int64_t yy = MAX_(ys, 0); yy < MIN_(ye, H); yy++)
                        for (int64_t xx = MAX_(xs, 0); xx < MIN_(xe, W); xx++) dxw[(c * H + yy) * W + xx] += g / div;
                }
        check_close(kind == 0 ? "max_pool2d_v2 asymmetric" : "avg_pool2d_v2 asymmetric", hy, want, N * C * Ho * Wo,
                    1e-6);
        if (kind > 0) {
            const int64_t dys[4] = {N, C, Ho, Wo};
            float *g = malloc((size_t)(N * C * Ho * Wo) * sizeof *g);
            for (int64_t i = 0; i < N * C * Ho * Wo; i++) g[i] = 1.0f + (float)i;
            wt_tensor *dy = NULL, *dx = NULL;
            CHECK(wt_tensor_from_data(g_ctx, WT_F32, 4, dys, g, &dy) == WT_OK, "dy");
            st = wt_avg_pool2d_backward_v2(dy, x, &o, &dx);
            if (CHECK(st == WT_OK, "avg_pool2d_backward_v2 asymmetric: %s", wt_last_error())) {
                float *hd = values(dx);
                check_close("avg_pool2d_backward_v2 asymmetric", hd, dxw, N * C * H * W, 1e-5);
                free(hd);
            }
            wt_tensor_release(dy);
            wt_tensor_release(dx);
            free(g);
        }
        free(hy);
        free(want);
        free(dxw);
        wt_tensor_release(y);
    }
    free(hx);
    wt_tensor_release(x);
}

/* -------------------------------------- deprecated names and their replacements */

static void deprecated_forms(void)
{
    wt_tensor *a = NULL, *b = NULL, *c = NULL, *d = NULL;
    wt_status sa, sb;
    const int64_t s23[2] = {2, 3};

    sa = wt_arange(g_ctx, 1, 7, 1.5, WT_F16, &a);
    sb = wt_tensor_arange(g_ctx, WT_F16, 1, 7, 1.5, &b);
    expect_same("arange", sa, a, sb, b);
    sa = wt_linspace(g_ctx, -1, 2, 7, false, WT_F32, &a);
    sb = wt_tensor_linspace(g_ctx, WT_F32, -1, 2, 7, false, &b);
    expect_same("linspace", sa, a, sb, b);
    sa = wt_eye(g_ctx, 3, 4, 1, WT_I32, &a);
    sb = wt_tensor_eye(g_ctx, WT_I32, 3, 4, 1, &b);
    expect_same("eye", sa, a, sb, b);
    sa = wt_rand(g_ctx, WT_F32, 2, s23, 11, &a);
    sb = wt_tensor_rand(g_ctx, WT_F32, 2, s23, 11, &b);
    expect_same("rand", sa, a, sb, b);
    sa = wt_randn(g_ctx, WT_F16, 2, s23, 12, &a);
    sb = wt_tensor_randn(g_ctx, WT_F16, 2, s23, 12, &b);
    expect_same("randn", sa, a, sb, b);

    const int64_t s45[2] = {4, 5};
    wt_tensor *x = make(2, s45, -3, 3), *dy = make(2, s45, -1, 1), *w5 = make(1, s45 + 1, 0.5f, 2),
              *b5 = make(1, s45 + 1, -1, 1);
    wt_dropout_options dopt;
    wt_dropout_options_init(&dopt);
    dopt.p = 0.3;
    dopt.seed = 99;
    sa = wt_dropout(x, 0.3f, 99, &a);
    sb = wt_dropout_v2(x, &dopt, &b);
    expect_same("dropout", sa, a, sb, b);
    sa = wt_topk(x, 3, false, &a, &c);
    sb = wt_topk_v2(x, 3, -1, false, &b, &d);
    expect_same("topk values", sa, a, sb, b);
    expect_same("topk indices", sa, c, sb, d);
    sa = wt_layernorm(x, w5, b5, 1e-3f, &a);
    sb = wt_layer_norm(x, 1, w5, b5, 1e-3f, &b);
    expect_same("layernorm", sa, a, sb, b);
    sa = wt_rmsnorm(x, w5, 1e-3f, &a);
    sb = wt_rms_norm(x, 1, w5, 1e-3f, &b);
    expect_same("rmsnorm", sa, a, sb, b);

    static const wt_activation acts[6] = {WT_ACT_RELU, WT_ACT_SIGMOID, WT_ACT_TANH, WT_ACT_SILU, WT_ACT_GELU,
                                          WT_ACT_GELU_TANH};
    static wt_status (*const backward[6])(const wt_tensor *, const wt_tensor *, wt_tensor **) = {
        wt_relu_backward, wt_sigmoid_backward, wt_tanh_backward, wt_silu_backward, wt_gelu_backward,
        wt_gelu_tanh_backward};
    for (int i = 0; i < 6; i++) {
        char what[64];
        snprintf(what, sizeof what, "activation_backward %d", i);
        sa = wt_activation_backward(acts[i], dy, x, &a);
        sb = backward[i](dy, x, &b);
        expect_same(what, sa, a, sb, b);
    }
    CHECK(wt_activation_backward((wt_activation)17, dy, x, &a) == WT_ERR_INVALID_ARGUMENT && a == NULL,
          "activation_backward: an unknown activation");

    wt_tensor *dx1 = NULL, *dw1 = NULL, *db1 = NULL, *dx2 = NULL, *dw2 = NULL, *db2 = NULL;
    sa = wt_layernorm_backward(x, w5, dy, 1e-3f, &dx1, &dw1, &db1);
    sb = wt_layer_norm_backward(dy, x, 1, w5, 1e-3f, &dx2, &dw2, &db2);
    expect_same("layernorm_backward dx", sa, dx1, sb, dx2);
    expect_same("layernorm_backward dweight", sa, dw1, sb, dw2);
    expect_same("layernorm_backward dbias", sa, db1, sb, db2);

    /* Cross-entropy: logits [4, 5], labels [4], a per-row dloss. */
    const int32_t lab[4] = {1, 4, 0, 2};
    const int64_t n4 = 4;
    wt_tensor *labels = NULL, *dloss = make(1, &n4, 0.5f, 2);
    CHECK(wt_tensor_from_data(g_ctx, WT_I32, 1, &n4, lab, &labels) == WT_OK, "labels");
    wt_cross_entropy_options xo;
    wt_cross_entropy_options_init(&xo);
    xo.reduction = WT_REDUCTION_NONE;
    sa = wt_cross_entropy_backward(x, labels, dloss, &xo, &a);
    sb = wt_cross_entropy_backward_v2(dloss, x, labels, &xo, &b);
    expect_same("cross_entropy_backward", sa, a, sb, b);

    /* Batch norm and conv2d: x4 [2, 3, 4, 4]. */
    const int64_t s4[4] = {2, 3, 4, 4}, sw[4] = {3, 3, 3, 3}, c3 = 3;
    wt_tensor *x4 = make(4, s4, -2, 2), *dy4 = make(4, s4, -1, 1), *w3 = make(1, &c3, 0.5f, 2),
              *rm = make(1, &c3, -0.5f, 0.5f), *rv = make(1, &c3, 0.5f, 2), *wc = make(4, sw, -1, 1);
    for (int training = 0; training < 2; training++) {
        wt_batch_norm_options bo;
        wt_batch_norm_options_init(&bo);
        bo.training = training;
        bo.eps = 1e-3f;
        sa = wt_batch_norm_backward(x4, w3, rm, rv, training, 1e-3f, dy4, &dx1, &dw1, &db1);
        sb = wt_batch_norm_backward_v2(dy4, x4, rm, rv, w3, &bo, &dx2, &dw2, &db2);
        expect_same("batch_norm_backward dx", sa, dx1, sb, dx2);
        expect_same("batch_norm_backward dweight", sa, dw1, sb, dw2);
        expect_same("batch_norm_backward dbias", sa, db1, sb, db2);
    }
    wt_conv_options co;
    wt_conv_options_init(&co);
    co.padding[0] = co.padding[1] = co.padding[2] = co.padding[3] = 1;
    sa = wt_conv2d_backward(x4, wc, dy4, &co, &dx1, &dw1, &db1);
    sb = wt_conv2d_backward_v2(dy4, x4, wc, &co, &dx2, &dw2, &db2);
    expect_same("conv2d_backward dx", sa, dx1, sb, dx2);
    expect_same("conv2d_backward dw", sa, dw1, sb, dw2);
    expect_same("conv2d_backward dbias", sa, db1, sb, db2);
    /* Pooling: padding (h, w) on both sides as (top, bottom, left, right). */
    wt_pool_options po;
    wt_pool2d_options p2;
    wt_pool_options_init(&po);
    wt_pool2d_options_init(&p2);
    po.kernel[0] = p2.kernel[0] = 3, po.kernel[1] = p2.kernel[1] = 2;
    po.stride[0] = p2.stride[0] = 1, po.stride[1] = p2.stride[1] = 2;
    po.padding[0] = 1, po.padding[1] = 1;
    p2.padding[0] = p2.padding[1] = 1, p2.padding[2] = p2.padding[3] = 1;
    po.ceil_mode = p2.ceil_mode = true;
    sa = wt_max_pool2d(x4, &po, &a, &c);
    sb = wt_max_pool2d_v2(x4, &p2, &b, &d);
    expect_same("max_pool2d values", sa, a, sb, b);
    expect_same("max_pool2d indices", sa, c, sb, d);
    for (int inc = 0; inc < 2; inc++) {
        po.count_include_pad = p2.count_include_pad = inc;
        sa = wt_avg_pool2d(x4, &po, &a);
        sb = wt_avg_pool2d_v2(x4, &p2, &b);
        wt_tensor *gy = NULL;
        if (sa == WT_OK) {
            int64_t gs[4];
            for (int i = 0; i < 4; i++) gs[i] = wt_tensor_shape(a)[i];
            gy = make(4, gs, -1, 1);
        }
        expect_same("avg_pool2d", sa, a, sb, b);
        sa = wt_avg_pool2d_backward(gy, x4, &po, &a);
        sb = wt_avg_pool2d_backward_v2(gy, x4, &p2, &b);
        expect_same("avg_pool2d_backward", sa, a, sb, b);
        wt_tensor_release(gy);
    }
    wt_group_norm_options go;
    wt_group_norm_options_init(&go);
    go.eps = 1e-2f;
    sa = wt_group_norm(x4, 3, w3, rm, 1e-2f, &a);
    sb = wt_group_norm_v2(x4, 3, w3, rm, &go, &b);
    expect_same("group_norm", sa, a, sb, b);

    /* Attention and rope: q, k, v [1, 2, 4, 8] (BHSD). */
    const int64_t sq[4] = {1, 2, 4, 8};
    wt_tensor *q = make(4, sq, -1, 1), *k = make(4, sq, -1, 1), *v = make(4, sq, -1, 1);
    wt_attention_options ao;
    wt_attention_options_init(&ao);
    ao.causal = true;
    ao.scale = 0.3f;
    sa = wt_scaled_dot_product_attention(q, k, v, NULL, true, 0.3f, &a);
    sb = wt_scaled_dot_product_attention_v2(q, k, v, NULL, &ao, &b);
    expect_same("scaled_dot_product_attention", sa, a, sb, b);
    wt_rope_options ro;
    wt_rope_options_init(&ro);
    ro.theta = 500000;
    ro.offset = 7;
    ro.layout = WT_ROPE_BSHD;
    sa = wt_rope(q, 500000, 7, WT_ROPE_BSHD, &a);
    sb = wt_rope_v2(q, &ro, &b);
    expect_same("rope", sa, a, sb, b);

    /* Captured graphs: the deprecated capture_begin/_end and destroy make
     * the same graph as graph_begin/_end and release; both replayed on a
     * new x give its exp. */
    wt_graph *g_old = NULL, *g_new = NULL;
    wt_tensor *xg = make(1, sq + 3, -1, 1);
    sa = wt_graph_capture_begin(g_ctx);
    if (sa == WT_OK) sa = wt_exp(xg, &a);
    wt_status end_old = wt_graph_capture_end(g_ctx, &g_old);
    sb = wt_graph_begin(g_ctx);
    if (sb == WT_OK) sb = wt_exp(xg, &b);
    wt_status end_new = wt_graph_end(g_ctx, &g_new);
    CHECK(end_old == WT_OK && end_new == WT_OK && g_old && g_new, "graph capture, old and new names: %s",
          wt_last_error());
    float xs[8];
    for (int i = 0; i < 8; i++) xs[i] = 0.25f * (float)i - 1.0f;
    CHECK(wt_tensor_write(xg, xs, sizeof xs) == WT_OK, "tensor_write: %s", wt_last_error());
    if (g_old && g_new) {
        if (sa == WT_OK) sa = wt_graph_replay(g_old);
        if (sb == WT_OK) sb = wt_graph_replay(g_new);
    }
    wt_graph_destroy(g_old);
    wt_graph_release(g_new);
    expect_same("graph_capture_begin/_end, graph_destroy", sa, a, sb, b);
    wt_tensor_release(xg);

    /* ------------------------------------------- options: the defaults of NULL */
    sa = wt_rope(q, 10000, 0, WT_ROPE_BHSD, &a);
    sb = wt_rope_v2(q, NULL, &b);
    expect_same("rope_v2 NULL: theta 10000, offset 0, BHSD", sa, a, sb, b);
    sa = wt_scaled_dot_product_attention(q, k, v, NULL, false, 0, &a);
    sb = wt_scaled_dot_product_attention_v2(q, k, v, NULL, NULL, &b);
    expect_same("attention_v2 NULL: not causal, 1/sqrt(D)", sa, a, sb, b);
    sa = wt_group_norm(x4, 3, NULL, NULL, 1e-5f, &a);
    sb = wt_group_norm_v2(x4, 3, NULL, NULL, NULL, &b);
    expect_same("group_norm_v2 NULL: eps 1e-5", sa, a, sb, b);
    sa = wt_dropout(x, 0.5f, 0, &a);
    sb = wt_dropout_v2(x, NULL, &b);
    expect_same("dropout_v2 NULL: p 0.5, seed 0", sa, a, sb, b);

    /* ------------------------- options not made by _init; doubles past f32 */
    wt_attention_options ao0 = {0};
    wt_rope_options ro0 = {0};
    wt_group_norm_options go0 = {0};
    wt_dropout_options do0 = {0};
    CHECK(wt_scaled_dot_product_attention_v2(q, k, v, NULL, &ao0, &a) == WT_ERR_INVALID_ARGUMENT && !a,
          "attention_v2: struct_size 0 refused");
    CHECK(wt_rope_v2(q, &ro0, &a) == WT_ERR_INVALID_ARGUMENT && !a, "rope_v2: struct_size 0 refused");
    CHECK(wt_group_norm_v2(x4, 3, NULL, NULL, &go0, &a) == WT_ERR_INVALID_ARGUMENT && !a,
          "group_norm_v2: struct_size 0 refused");
    CHECK(wt_dropout_v2(x, &do0, &a) == WT_ERR_INVALID_ARGUMENT && !a, "dropout_v2: struct_size 0 refused");
    ao.scale = 1e300;
    CHECK(wt_scaled_dot_product_attention_v2(q, k, v, NULL, &ao, &a) == WT_ERR_INVALID_ARGUMENT && !a,
          "attention_v2: a scale past the f32 range refused");
    CHECK(wt_layer_norm(x, 1, NULL, NULL, 1e300, &a) == WT_ERR_INVALID_ARGUMENT && !a,
          "layer_norm: an eps past the f32 range refused");
    go.eps = 1e300;
    CHECK(wt_group_norm_v2(x4, 3, NULL, NULL, &go, &a) == WT_ERR_INVALID_ARGUMENT && !a,
          "group_norm_v2: an eps past the f32 range refused");
    dopt.p = 1.5;
    CHECK(wt_dropout_v2(x, &dopt, &a) == WT_ERR_INVALID_ARGUMENT && !a, "dropout_v2: p 1.5 refused");

    /* Arrays of inputs: a wt_tensor ** passes as it is (rule 8). */
    wt_tensor *list[2] = {x, dy};
    wt_tensor **pl = list;
    CHECK(wt_concat(2, pl, 0, &a) == WT_OK && wt_tensor_shape(a)[0] == 8, "concat of a wt_tensor **: %s",
          wt_last_error());
    wt_tensor_release(a);

    wt_tensor *all[] = {x, dy, w5, b5, labels, dloss, x4, dy4, w3, rm, rv, wc, q, k, v};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) wt_tensor_release(all[i]);
}

int main(int argc, char **argv)
{
    test_backend be = test_parse_backend(argc > 1 ? argv[1] : "cpu");
    if (be == TEST_BACKEND_INVALID) {
        fprintf(stderr, "usage: api_forms <cpu|vulkan|gles>\n");
        return 2;
    }
    test_rng_seed(test_seed());
    if (test_create_context(be, &g_ctx) != WT_OK) return test_summary("api_forms");
    layer_norm_backward_trailing_axes();
    topk_any_axis();
    pooling_asymmetric();
    deprecated_forms();
    wt_context_destroy(g_ctx);
    char prefix[64];
    snprintf(prefix, sizeof prefix, "api_forms %s", test_backend_name(be));
    return test_summary(prefix);
}
