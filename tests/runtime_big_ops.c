/* The op families past one binding beyond the elementwise ones
 * (src/webgpu/windows/ops.c), on tensors of 136 MB against lavapipe's
 * 128 MiB maxStorageBufferBindingSize, checked against float64
 * references:
 *   an f16 table [34000, 2000]: embedding, index_select along both axes,
 *   linear (a decode-time GEMV on the table as the weight: cut along N),
 *   matmul with the table as a row-major b (cut along K), and copies of
 *   views of it: concat, a strided column slice, a transposed block, pad
 *   (constant and reflect), flip, tril;
 *   an f32 tensor of 34M elements: attention over it as a KV cache
 *   (grouped heads), softmax along axis 0 of a strided view, max pooling
 *   with indices and a strided convolution over it as images, argmax and
 *   cross-entropy of its rows, the gradients of cross-entropy and rope
 *   on slices of it, cumsum and topk of rows past its first 128 MiB,
 *   norm2/logsumexp/var/std of all of it, batch norm, index_add of its
 *   rows, and a relu gradient and an SGD step (in place) over all of it;
 *   the gradient of a 136 MB f32 embedding table; wt_rand of 34M elements
 *   against the CPU backend's.
 * At most two large tensors live at a time (272 MB; the host copy made
 * to upload one is freed first).
 *
 *   runtime_big_ops vulkan|gles|cpu
 */
#define _POSIX_C_SOURCE 200809L
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define V 34000
#define D 2000 /* 34000 x 2000 f16 = 136,000,000 bytes */
#define NX 34000000LL /* f32: 136,000,000 bytes */

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Exact in f16: k / 256 with |k| <= 1000. */
static double val(int64_t i) { return (double)((i * 7919) % 2001 - 1000) / 256.0; }
static double tab(int64_t r, int64_t c) { return val(r * D + c); }

/* t's elements as doubles (f16, f32 or i32), row-major; NULL on failure. */
static double *read_all(const wt_tensor *t, const char *what)
{
    int64_t n = 1;
    for (int d = 0; d < wt_tensor_ndim(t); d++) n *= wt_tensor_shape(t)[d];
    wt_dtype dt = wt_tensor_dtype(t);
    size_t es = dt == WT_F16 ? 2 : 4;
    void *raw = malloc((size_t)n * es + 1);
    double *out = malloc((size_t)n * sizeof(double) + 1);
    wt_status s = raw && out ? wt_tensor_read(t, raw, (size_t)n * es) : WT_ERR_OUT_OF_MEMORY;
    if (!CHECK(s == WT_OK, "%s: read: %s %s", what, wt_status_string(s), wt_last_error())) {
        free(raw);
        free(out);
        return NULL;
    }
    for (int64_t i = 0; i < n; i++)
        out[i] = dt == WT_F16 ? test_half_to_double(((uint16_t *)raw)[i])
                 : dt == WT_F32 ? (double)((float *)raw)[i]
                                : (double)((int32_t *)raw)[i];
    free(raw);
    return out;
}

static bool ok(wt_status s, const char *what)
{
    return CHECK(s == WT_OK, "%s: %s %s", what, wt_status_string(s), wt_last_error());
}

/* Checks t against ref(i) (n elements) within tol(i). */
typedef double (*ref_fn)(int64_t i, const void *arg, double *tol);
static void expect(wt_tensor *t, int64_t n, ref_fn ref, const void *arg, const char *what,
                   double t0)
{
    wt_context_sync(wt_tensor_context(t));
    double secs = now() - t0;
    double *got = read_all(t, what);
    if (!got) return;
    int64_t bad = 0, first = -1;
    for (int64_t i = 0; i < n; i++) {
        double tol = 0, r = ref(i, arg, &tol);
        if (!(fabs(got[i] - r) <= tol) && !(isnan(r) && isnan(got[i]))) {
            if (first < 0) first = i;
            bad++;
        }
    }
    CHECK(bad == 0, "%s: %lld of %lld wrong (first at %lld: %g)", what, (long long)bad, (long long)n,
          (long long)first, first >= 0 ? got[first] : 0.0);
    printf("  %-34s %.3f s\n", what, secs);
    free(got);
}

/* ------------------------------------------------ references, f16 table */

static const int32_t EMB_IDX[5] = {0, 33999, 17000, 5, 33999};
static double ref_embedding(int64_t i, const void *a, double *tol)
{
    (void)a;
    *tol = 0;
    return tab(EMB_IDX[i / D], i % D);
}
static const int32_t COL_IDX[3] = {1999, 0, 7};
static double ref_select_cols(int64_t i, const void *a, double *tol)
{
    (void)a;
    *tol = 0;
    return tab(i / 3, COL_IDX[i % 3]);
}
static double xin(int64_t j) { return (double)(j % 13 - 6) / 8.0; }
static double ref_linear(int64_t n, const void *a, double *tol)
{
    (void)a;
    double s = 0, m = 0;
    for (int64_t j = 0; j < D; j++) s += xin(j) * tab(n, j), m += fabs(xin(j) * tab(n, j));
    *tol = 2e-3 * m + 1e-3;
    return s;
}
static double ain(int64_t r, int64_t k) { return (double)((k + 3 * r) % 9 - 4) / 16.0; }
static double ref_matmul_k(int64_t i, const void *a, double *tol)
{
    (void)a;
    int64_t r = i / 64, c = i % 64;
    double s = 0, m = 0;
    for (int64_t k = 0; k < V; k++) s += ain(r, k) * tab(k, c), m += fabs(ain(r, k) * tab(k, c));
    *tol = 2e-3 * m + 1e-3;
    return s;
}
static double ref_concat(int64_t i, const void *a, double *tol)
{
    (void)a;
    *tol = 0;
    int64_t r = i / D, c = i % D;
    return tab(r < 2 ? 33998 + r : 0, c);
}
static double ref_strided(int64_t i, const void *a, double *tol)
{
    (void)a;
    *tol = 0;
    return tab(i / 3, 1000 + i % 3);
}
static double ref_transposed(int64_t i, const void *a, double *tol)
{
    (void)a;
    *tol = 0;
    return tab(100 + i % 200, i / 200); /* [50, 200] = T[100:300, 0:50]^T */
}
/* pad (1, 1) of the columns and (2, 2) of the rows of T[33990:34000, 1990:2000]. */
static double ref_pad(int64_t i, const void *a, double *tol)
{
    *tol = 0;
    bool reflect = *(const int *)a;
    int64_t r = i / 12 - 2, c = i % 12 - 1;
    if (!reflect && (r < 0 || r >= 10 || c < 0 || c >= 10)) return 7.0;
    r = r < 0 ? -r : r >= 10 ? 18 - r : r;
    c = c < 0 ? -c : c >= 10 ? 18 - c : c;
    return tab(33990 + r, 1990 + c);
}
static double ref_flip(int64_t i, const void *a, double *tol)
{
    (void)a;
    *tol = 0;
    return tab(4 - i / D, i % D);
}
static double ref_tril(int64_t i, const void *a, double *tol)
{
    (void)a;
    *tol = 0;
    int64_t r = i / 10, c = i % 10;
    return c - r <= 1 ? tab(10 + r, 5 + c) : 0.0;
}

static void f16_table_ops(wt_context *ctx)
{
    printf("f16 table [%d, %d] (%lld bytes):\n", V, D, (long long)V * D * 2);
    uint16_t *h = malloc((size_t)V * D * 2);
    if (!CHECK(h != NULL, "host memory")) return;
    uint16_t lut[2001]; /* val takes 2001 values */
    for (int k = 0; k < 2001; k++) lut[k] = test_double_to_half((double)(k - 1000) / 256.0);
    for (int64_t i = 0; i < (int64_t)V * D; i++) h[i] = lut[(i * 7919) % 2001];
    int64_t shape[2] = {V, D};
    wt_tensor *T = NULL;
    wt_status s = wt_tensor_from_data(ctx, WT_F16, 2, shape, h, &T);
    free(h);
    if (!ok(s, "upload the table")) return;
    wt_tensor *idx = NULL, *r = NULL, *v1 = NULL, *v2 = NULL, *x = NULL;
    double t0;

    int64_t n5 = 5, n3 = 3;
    if (ok(wt_tensor_from_data(ctx, WT_I32, 1, &n5, EMB_IDX, &idx), "index")) {
        t0 = now();
        if (ok(wt_embedding(T, idx, &r), "embedding"))
            expect(r, 5 * D, ref_embedding, NULL, "embedding (5 rows)", t0);
        wt_tensor_release(r), r = NULL;
        /* An index past the table is an error, found in the first part. */
        int32_t badi[2] = {1, V};
        wt_tensor *bad = NULL;
        int64_t n2 = 2;
        if (ok(wt_tensor_from_data(ctx, WT_I32, 1, &n2, badi, &bad), "bad index")) {
            s = wt_embedding(T, bad, &r);
            /* Found on the GPU: the call returns, the next sync reports it. */
            if (s == WT_OK) {
                wt_tensor_release(r), r = NULL;
                s = wt_context_sync(ctx);
            }
            CHECK(s == WT_ERR_INVALID_ARGUMENT && r == NULL && strstr(wt_last_error(), "index"),
                  "embedding of index %d: %s (%s)", V, wt_status_string(s), wt_last_error());
        }
        wt_tensor_release(bad);
    }
    wt_tensor_release(idx), idx = NULL;
    if (ok(wt_tensor_from_data(ctx, WT_I32, 1, &n3, COL_IDX, &idx), "index")) {
        t0 = now();
        if (ok(wt_index_select(T, 1, idx, &r), "index_select axis 1"))
            expect(r, (int64_t)V * 3, ref_select_cols, NULL, "index_select (axis 1)", t0);
        wt_tensor_release(r), r = NULL;
    }
    wt_tensor_release(idx), idx = NULL;

    /* linear: x [1, D] @ T^T (a decode step on a vocabulary projection). */
    uint16_t hx[D];
    for (int j = 0; j < D; j++) hx[j] = test_double_to_half(xin(j));
    int64_t xs[2] = {1, D};
    t0 = now();
    if (ok(wt_tensor_from_data(ctx, WT_F16, 2, xs, hx, &x), "x") && ok(wt_linear(x, T, NULL, &r), "linear"))
        expect(r, V, ref_linear, NULL, "linear GEMV (cut along N)", t0);
    wt_tensor_release(x), x = NULL;
    wt_tensor_release(r), r = NULL;

    /* matmul: a [1, V] @ T[:, :64] (rows of b apart: cut along K). */
    uint16_t *ha = malloc(V * 2);
    for (int64_t i = 0; ha && i < V; i++) ha[i] = test_double_to_half(ain(0, i));
    int64_t as[2] = {1, V};
    t0 = now();
    if (ha && ok(wt_tensor_from_data(ctx, WT_F16, 2, as, ha, &x), "a") &&
        ok(wt_slice(T, 1, 0, 64, 1, &v1), "slice") && ok(wt_matmul(x, v1, &r), "matmul"))
        expect(r, 64, ref_matmul_k, NULL, "matmul [1,V]@T[:, :64] (cut along K)", t0);
    wt_tensor_release(v1), v1 = NULL;
    free(ha);
    wt_tensor_release(x), x = NULL;
    wt_tensor_release(r), r = NULL;

    /* Copies of views of the table. */
    t0 = now();
    if (ok(wt_slice(T, 0, V - 2, V, 1, &v1), "slice") && ok(wt_slice(T, 0, 0, 1, 1, &v2), "slice")) {
        wt_tensor *parts[2] = {v1, v2};
        if (ok(wt_concat(2, parts, 0, &r), "concat")) expect(r, 3 * D, ref_concat, NULL, "concat of rows", t0);
    }
    wt_tensor_release(v1), wt_tensor_release(v2), wt_tensor_release(r);
    v1 = v2 = r = NULL;
    t0 = now();
    if (ok(wt_slice(T, 1, 1000, 1003, 1, &v1), "slice") && ok(wt_copy(v1, &r), "copy"))
        expect(r, (int64_t)V * 3, ref_strided, NULL, "copy of T[:, 1000:1003]", t0);
    wt_tensor_release(v1), wt_tensor_release(r);
    v1 = r = NULL;
    wt_tensor *v3 = NULL;
    t0 = now();
    if (ok(wt_slice(T, 0, 100, 300, 1, &v1), "slice") && ok(wt_slice(v1, 1, 0, 50, 1, &v2), "slice") &&
        ok(wt_transpose(v2, 0, 1, &v3), "transpose") && ok(wt_copy(v3, &r), "copy"))
        expect(r, 50 * 200, ref_transposed, NULL, "copy of a transposed block", t0);
    wt_tensor_release(v1), wt_tensor_release(v2), wt_tensor_release(v3), wt_tensor_release(r);
    v1 = v2 = v3 = r = NULL;
    int64_t pads[4] = {1, 1, 2, 2};
    for (int reflect = 0; reflect < 2; reflect++) {
        t0 = now();
        if (ok(wt_slice(T, 0, 33990, V, 1, &v1), "slice") && ok(wt_slice(v1, 1, 1990, D, 1, &v2), "slice") &&
            ok(wt_pad(v2, 4, pads, reflect ? WT_PAD_REFLECT : WT_PAD_CONSTANT, 7.0, &r), "pad"))
            expect(r, 14 * 12, ref_pad, &reflect, reflect ? "pad (reflect) of a corner" : "pad (constant) of a corner", t0);
        wt_tensor_release(v1), wt_tensor_release(v2), wt_tensor_release(r);
        v1 = v2 = r = NULL;
    }
    int axis0 = 0;
    t0 = now();
    if (ok(wt_slice(T, 0, 0, 5, 1, &v1), "slice") && ok(wt_flip(v1, 1, &axis0, &r), "flip"))
        expect(r, 5 * D, ref_flip, NULL, "flip of 5 rows", t0);
    wt_tensor_release(v1), wt_tensor_release(r);
    v1 = r = NULL;
    t0 = now();
    if (ok(wt_slice(T, 0, 10, 20, 1, &v1), "slice") && ok(wt_slice(v1, 1, 5, 15, 1, &v2), "slice") &&
        ok(wt_tril(v2, 1, &r), "tril"))
        expect(r, 100, ref_tril, NULL, "tril of a block", t0);
    wt_tensor_release(v1), wt_tensor_release(v2), wt_tensor_release(r);
    wt_tensor_release(T);
}

/* ------------------------------------------------ references, f32 tensor */

#define HKV 125
#define SKV 4250
#define HD 64 /* 125 * 4250 * 64 = NX */
#define HQ 250

static double qin(int64_t h, int64_t d) { return (double)((h * 31 + d * 7) % 17 - 8) / 64.0; }
static double ref_attention(int64_t i, const void *a, double *tol)
{
    (void)a;
    int64_t h = i / HD, d = i % HD, kh = h / (HQ / HKV);
    static int64_t cached = -1;
    static double p[SKV], z;
    if (cached != h) { /* the head's probabilities (elements come in order) */
        double m = -INFINITY;
        for (int64_t j = 0; j < SKV; j++) {
            double dot = 0;
            for (int64_t e = 0; e < HD; e++) dot += qin(h, e) * val((kh * SKV + j) * HD + e);
            p[j] = dot * 0.125;
            m = fmax(m, p[j]);
        }
        z = 0;
        for (int64_t j = 0; j < SKV; j++) z += (p[j] = exp(p[j] - m));
        cached = h;
    }
    double s = 0;
    for (int64_t j = 0; j < SKV; j++) s += p[j] * val((kh * SKV + j) * HD + d);
    *tol = 1e-4 + 1e-4 * fabs(s / z);
    return s / z;
}
#define SR 17000 /* X as [SR, D] */
static double ref_softmax0(int64_t i, const void *a, double *tol)
{
    const double *colstats = a; /* max, sum per column */
    int64_t r = i / 3, c = i % 3;
    *tol = 1e-6 + 1e-4 * exp(val(r * D + c) - colstats[2 * c]) / colstats[2 * c + 1];
    return exp(val(r * D + c) - colstats[2 * c]) / colstats[2 * c + 1];
}
/* X as images [1700, 1, 100, 200]: 2x2 max pooling, 4x4 stride-4 conv. */
#define NI 1700
#define IH 100
#define IW 200
static double ref_pool(int64_t i, const void *a, double *tol)
{
    bool want_index = *(const int *)a;
    *tol = 0;
    int64_t n = i / (50 * 100), oy = i / 100 % 50, ox = i % 100;
    double best = -INFINITY;
    int64_t at = 0;
    for (int ky = 0; ky < 2; ky++)
        for (int kx = 0; kx < 2; kx++) {
            int64_t y = 2 * oy + ky, x = 2 * ox + kx;
            double v = val(n * IH * IW + y * IW + x);
            if (v > best) best = v, at = y * IW + x;
        }
    return want_index ? (double)at : best;
}
static double wconv(int ky, int kx) { return (double)(ky * 4 + kx - 7) / 8.0; }
static double ref_conv(int64_t i, const void *a, double *tol)
{
    (void)a;
    int64_t n = i / (25 * 50), oy = i / 50 % 25, ox = i % 50;
    double s = 0, m = 0;
    for (int ky = 0; ky < 4; ky++)
        for (int kx = 0; kx < 4; kx++) {
            double t = wconv(ky, kx) * val(n * IH * IW + (4 * oy + ky) * IW + 4 * ox + kx);
            s += t, m += fabs(t);
        }
    *tol = 1e-5 * m + 1e-6;
    return s;
}

static double ref_argmax(int64_t r, const void *a, double *tol)
{
    (void)a;
    *tol = 0;
    int64_t best = 0;
    for (int64_t c = 1; c < D; c++)
        if (val(r * D + c) > val(r * D + best)) best = c;
    return (double)best;
}
static double ref_cross_entropy(int64_t r, const void *a, double *tol)
{
    (void)a;
    double m = -INFINITY, z = 0;
    for (int64_t c = 0; c < D; c++) m = fmax(m, val(r * D + c));
    for (int64_t c = 0; c < D; c++) z += exp(val(r * D + c) - m);
    double loss = m + log(z) - val(r * D + r % D);
    *tol = 1e-5 * (1 + fabs(loss));
    return loss;
}
/* d loss / d logits of rows 0..7 (reduction none, dloss 1). */
static double ref_ce_backward(int64_t i, const void *a, double *tol)
{
    (void)a;
    int64_t r = i / D, c = i % D;
    double m = -INFINITY, z = 0;
    for (int64_t k = 0; k < D; k++) m = fmax(m, val(r * D + k));
    for (int64_t k = 0; k < D; k++) z += exp(val(r * D + k) - m);
    *tol = 1e-6;
    return exp(val(r * D + c) - m) / z - (c == r % D ? 1.0 : 0.0);
}
/* rope (theta 10000, offset 3) of rows 16990..16999 seen as [1, 10, D]. */
static double ref_rope(int64_t i, const void *a, double *tol)
{
    (void)a;
    int64_t s = i / D, d = i % D, h = D / 2, k = d % h;
    double f = pow(10000.0, -2.0 * (double)k / D), ang = (double)(3 + s) * f;
    double x0 = val((16990 + s) * D + k), x1 = val((16990 + s) * D + k + h);
    *tol = 2e-5 * (fabs(x0) + fabs(x1)) + 1e-6;
    return d < h ? x0 * cos(ang) - x1 * sin(ang) : x1 * cos(ang) + x0 * sin(ang);
}

/* cumsum along the rows 16000..16999 of X as [SR, D]. */
static double ref_cumsum(int64_t i, const void *a, double *tol)
{
    (void)a;
    int64_t r = 16000 + i / D, c = i % D;
    double s = 0, m = 0;
    for (int64_t k = 0; k <= c; k++) s += val(r * D + k), m += fabs(val(r * D + k));
    *tol = 1e-5 * m + 1e-6;
    return s;
}
/* The 5 largest of each of the rows 16990..16999: values, descending. */
static int cmp_desc(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? 1 : a > b ? -1 : 0;
}
static double ref_topk(int64_t i, const void *a, double *tol)
{
    (void)a;
    *tol = 0;
    double row[D];
    int64_t r = 16990 + i / 5;
    for (int64_t c = 0; c < D; c++) row[c] = val(r * D + c);
    qsort(row, D, sizeof row[0], cmp_desc);
    return row[i % 5];
}

/* Compares a [NX] tensor with ref (or with the tensor other) slice by
 * slice, so that no host buffer holds all of it. */
static void expect_chunked(wt_tensor *t, wt_tensor *other, double (*ref)(int64_t), const char *what,
                           double t0)
{
    wt_context_sync(wt_tensor_context(t));
    double secs = now() - t0;
    const int64_t step = 1 << 22;
    float *got = malloc((size_t)step * 4), *want = malloc((size_t)step * 4);
    int64_t bad = 0, first = -1;
    for (int64_t a = 0; got && want && a < NX; a += step) {
        int64_t b = a + step < NX ? a + step : NX;
        wt_tensor *v = NULL, *w = NULL;
        if (!ok(wt_slice(t, 0, a, b, 1, &v), "slice") || !ok(wt_tensor_read(v, got, (size_t)(b - a) * 4), what) ||
            (other && (!ok(wt_slice(other, 0, a, b, 1, &w), "slice") ||
                       !ok(wt_tensor_read(w, want, (size_t)(b - a) * 4), what)))) {
            bad = -1;
            wt_tensor_release(v), wt_tensor_release(w);
            break;
        }
        for (int64_t i = a; i < b; i++) {
            double r = other ? (double)want[i - a] : ref(i);
            if (!(fabs(got[i - a] - r) <= 1e-6 * (1 + fabs(r)))) {
                if (first < 0) first = i;
                bad++;
            }
        }
        wt_tensor_release(v), wt_tensor_release(w);
    }
    CHECK(got && want && bad == 0, "%s: %lld wrong (first at %lld)", what, (long long)bad, (long long)first);
    printf("  %-34s %.3f s\n", what, secs);
    free(got), free(want);
}
static double bn_mean[4], bn_var[4];
static double ref_batch_norm(int64_t i)
{
    int k = (int)(i / (IH * IW) % 4);
    return (val(i) - bn_mean[k]) / sqrt(bn_var[k] + 1e-5);
}
static double ref_relu_backward(int64_t i) { return val(i) > 0 ? val(i) : 0.0; }
static double ref_sgd(int64_t i) { return (double)((float)val(i) - 0.5f * (float)ref_relu_backward(i)); }

/* X as [425, 4, 100, 200] images: a 3x3 stride-3 convolution of four
 * channels into two, with a bias (the im2col path), of the last 45
 * images (their views lie past the first 128 MiB of the storage). */
static double wconv4(int64_t o, int64_t c, int ky, int kx) { return (double)((o * 5 + c * 3 + ky * 2 + kx) % 7 - 3) / 8.0; }
static double ref_conv_im2col(int64_t i, const void *a, double *tol)
{
    (void)a;
    int64_t n = 380 + i / (2 * 33 * 66), o = i / (33 * 66) % 2, oy = i / 66 % 33, ox = i % 66;
    double s = o ? -0.5 : 0.25, m = fabs(s);
    for (int64_t c = 0; c < 4; c++)
        for (int ky = 0; ky < 3; ky++)
            for (int kx = 0; kx < 3; kx++) {
                double t = wconv4(o, c, ky, kx) * val(((n * 4 + c) * IH + 3 * oy + ky) * IW + 3 * ox + kx);
                s += t, m += fabs(t);
            }
    *tol = 1e-5 * m + 1e-6;
    return s;
}

static void f32_tensor_ops(wt_context *ctx)
{
    printf("f32 tensor of %lld elements (%lld bytes):\n", NX, NX * 4);
    float *h = malloc((size_t)NX * 4);
    if (!CHECK(h != NULL, "host memory")) return;
    for (int64_t i = 0; i < NX; i++) h[i] = (float)val(i);
    int64_t n1 = NX;
    wt_tensor *X = NULL, *kv = NULL, *q = NULL, *r = NULL, *v1 = NULL, *ri = NULL, *w = NULL;
    wt_status s = wt_tensor_from_data(ctx, WT_F32, 1, &n1, h, &X);
    free(h);
    if (!ok(s, "upload the tensor")) return;
    double t0;

    /* Attention: one query per head over a KV cache of 4250 positions,
     * two query heads per key head. */
    int64_t kvs[4] = {1, HKV, SKV, HD}, qs[4] = {1, HQ, 1, HD};
    float hq[HQ * HD];
    for (int64_t i = 0; i < HQ * HD; i++) hq[i] = (float)qin(i / HD, i % HD);
    t0 = now();
    if (ok(wt_reshape(X, 4, kvs, &kv), "reshape") && ok(wt_tensor_from_data(ctx, WT_F32, 4, qs, hq, &q), "q") &&
        ok(wt_scaled_dot_product_attention(q, kv, kv, NULL, false, 0.125f, &r), "attention"))
        expect(r, HQ * HD, ref_attention, NULL, "attention over a KV cache", t0);
    wt_tensor_release(kv), wt_tensor_release(q), wt_tensor_release(r);
    kv = q = r = NULL;

    /* softmax along axis 0 of X[:, 0:3] seen as [SR, D]. */
    double stats[6];
    for (int c = 0; c < 3; c++) {
        double m = -INFINITY, z = 0;
        for (int64_t i = 0; i < SR; i++) m = fmax(m, val(i * D + c));
        for (int64_t i = 0; i < SR; i++) z += exp(val(i * D + c) - m);
        stats[2 * c] = m, stats[2 * c + 1] = z;
    }
    int64_t xs2[2] = {SR, D};
    t0 = now();
    if (ok(wt_reshape(X, 2, xs2, &kv), "reshape") && ok(wt_slice(kv, 1, 0, 3, 1, &v1), "slice") &&
        ok(wt_softmax(v1, 0, &r), "softmax"))
        expect(r, (int64_t)SR * 3, ref_softmax0, stats, "softmax along axis 0 (strided)", t0);
    wt_tensor_release(kv), wt_tensor_release(v1), wt_tensor_release(r);
    kv = v1 = r = NULL;

    /* X as images: max pooling with indices, a strided convolution. */
    int64_t is[4] = {NI, 1, IH, IW};
    wt_pool_options po;
    wt_pool_options_init(&po);
    po.kernel[0] = po.kernel[1] = 2;
    t0 = now();
    int want = 0;
    if (ok(wt_reshape(X, 4, is, &kv), "reshape") && ok(wt_max_pool2d(kv, &po, &r, &ri), "max_pool2d")) {
        expect(r, (int64_t)NI * 50 * 100, ref_pool, &want, "max_pool2d with indices", t0);
        want = 1;
        expect(ri, (int64_t)NI * 50 * 100, ref_pool, &want, "  (its indices)", now());
    }
    wt_tensor_release(r), wt_tensor_release(ri);
    r = ri = NULL;
    float hw[16];
    for (int i = 0; i < 16; i++) hw[i] = (float)wconv(i / 4, i % 4);
    int64_t ws[4] = {1, 1, 4, 4};
    wt_conv_options co;
    wt_conv_options_init(&co);
    co.stride[0] = co.stride[1] = 4;
    t0 = now();
    if (kv && ok(wt_tensor_from_data(ctx, WT_F32, 4, ws, hw, &w), "w") &&
        ok(wt_conv2d(kv, w, NULL, &co, &r), "conv2d"))
        expect(r, (int64_t)NI * 25 * 50, ref_conv, NULL, "conv2d 4x4 stride 4", t0);
    wt_tensor_release(w), wt_tensor_release(r), wt_tensor_release(kv);
    w = r = kv = NULL;
    int64_t is4[4] = {425, 4, IH, IW}, ws4[4] = {2, 4, 3, 3}, two = 2;
    float hw4[72], hb[2] = {0.25f, -0.5f};
    for (int i = 0; i < 72; i++) hw4[i] = (float)wconv4(i / 36, i / 9 % 4, i / 3 % 3, i % 3);
    wt_tensor *bias = NULL;
    co.stride[0] = co.stride[1] = 3;
    t0 = now();
    if (ok(wt_reshape(X, 4, is4, &v1), "reshape") && ok(wt_slice(v1, 0, 380, 425, 1, &kv), "slice") &&
        ok(wt_tensor_from_data(ctx, WT_F32, 4, ws4, hw4, &w), "w") &&
        ok(wt_tensor_from_data(ctx, WT_F32, 1, &two, hb, &bias), "bias") &&
        ok(wt_conv2d(kv, w, bias, &co, &r), "conv2d (im2col)"))
        expect(r, 45LL * 2 * 33 * 66, ref_conv_im2col, NULL, "conv2d 4->2 channels (im2col)", t0);
    wt_tensor_release(w), wt_tensor_release(r), wt_tensor_release(kv), wt_tensor_release(bias);
    wt_tensor_release(v1), v1 = NULL;
    w = r = kv = NULL;

    /* X as [SR, D]: argmax of rows, cross-entropy of rows (and its
     * gradient and rope on slices of the big storage). */
    int one = 1;
    t0 = now();
    if (ok(wt_reshape(X, 2, xs2, &kv), "reshape") && ok(wt_argmax(kv, 1, &one, false, &r), "argmax"))
        expect(r, SR, ref_argmax, NULL, "argmax of rows", t0);
    wt_tensor_release(r), r = NULL;
    int32_t *lab = malloc(SR * 4);
    for (int64_t i = 0; lab && i < SR; i++) lab[i] = (int32_t)(i % D);
    int64_t nsr = SR;
    wt_cross_entropy_options ce;
    wt_cross_entropy_options_init(&ce);
    ce.reduction = WT_REDUCTION_NONE;
    wt_tensor *labels = NULL, *l8 = NULL;
    t0 = now();
    if (lab && ok(wt_tensor_from_data(ctx, WT_I32, 1, &nsr, lab, &labels), "labels") &&
        ok(wt_cross_entropy(kv, labels, &ce, &r), "cross_entropy"))
        expect(r, SR, ref_cross_entropy, NULL, "cross_entropy of rows", t0);
    free(lab);
    wt_tensor_release(r), r = NULL;
    t0 = now();
    if (labels && ok(wt_slice(kv, 0, 0, 8, 1, &v1), "slice") && ok(wt_slice(labels, 0, 0, 8, 1, &l8), "slice") &&
        ok(wt_cross_entropy_backward(v1, l8, NULL, &ce, &r), "cross_entropy_backward"))
        expect(r, 8 * D, ref_ce_backward, NULL, "cross_entropy_backward (8 rows)", t0);
    wt_tensor_release(v1), wt_tensor_release(l8), wt_tensor_release(labels), wt_tensor_release(r);
    v1 = r = NULL;
    wt_tensor *v2 = NULL;
    int64_t rs[3] = {1, 10, D};
    t0 = now();
    if (ok(wt_slice(kv, 0, SR - 10, SR, 1, &v1), "slice") && ok(wt_reshape(v1, 3, rs, &v2), "reshape") &&
        ok(wt_rope(v2, 10000.0, 3, WT_ROPE_BHSD, &r), "rope"))
        expect(r, 10 * D, ref_rope, NULL, "rope of 10 rows", t0);
    wt_tensor_release(v1), wt_tensor_release(v2), wt_tensor_release(r), wt_tensor_release(kv);
    v1 = r = kv = NULL;

    /* cumsum and topk along rows that lie past the first 128 MiB. */
    t0 = now();
    wt_tensor *kv2 = NULL, *ti = NULL;
    if (ok(wt_reshape(X, 2, xs2, &kv2), "reshape") && ok(wt_slice(kv2, 0, 16000, SR, 1, &v1), "slice") &&
        ok(wt_cumsum(v1, 1, &r), "cumsum"))
        expect(r, 1000LL * D, ref_cumsum, NULL, "cumsum of 1000 rows", t0);
    wt_tensor_release(v1), wt_tensor_release(r);
    v1 = r = NULL;
    t0 = now();
    if (kv2 && ok(wt_slice(kv2, 0, SR - 10, SR, 1, &v1), "slice") && ok(wt_topk(v1, 5, true, &r, &ti), "topk")) {
        expect(r, 50, ref_topk, NULL, "topk of 10 rows", t0);
        int32_t hi[50];
        float hv[50];
        if (ok(wt_tensor_read(ti, hi, sizeof hi), "read topk indices") && ok(wt_tensor_read(r, hv, sizeof hv), "read"))
            for (int i = 0; i < 50; i++)
                CHECK(hi[i] >= 0 && hi[i] < D && (float)val((SR - 10 + i / 5) * D + hi[i]) == hv[i],
                      "topk index %d points at its value", i);
    }
    wt_tensor_release(v1), wt_tensor_release(r), wt_tensor_release(ti), wt_tensor_release(kv2);
    v1 = r = NULL;

    /* Reductions of all of X, whose one output's part is past one binding:
     * norm2, logsumexp, var and std in partial results. */
    double sum = 0, sq = 0, mx = -INFINITY;
    for (int64_t i = 0; i < NX; i++) sum += val(i), sq += val(i) * val(i), mx = fmax(mx, val(i));
    double mean = sum / (double)NX, dev = 0, ez = 0;
    for (int64_t i = 0; i < NX; i++) dev += (val(i) - mean) * (val(i) - mean), ez += exp(val(i) - mx);
    const char *names[4] = {"norm2 of all", "logsumexp of all", "var of all", "std of all"};
    const double expected[4] = {sqrt(sq), mx + log(ez), dev / (double)(NX - 1), sqrt(dev / (double)(NX - 1))};
    for (int k = 0; k < 4; k++) {
        t0 = now();
        s = k == 0 ? wt_norm(X, 2.0, 0, NULL, false, &r)
            : k == 1 ? wt_logsumexp(X, 0, NULL, false, &r)
            : k == 2 ? wt_var(X, 0, NULL, 1.0, false, &r) : wt_std(X, 0, NULL, 1.0, false, &r);
        float got = 0;
        if (ok(s, names[k]) && ok(wt_tensor_read(r, &got, 4), names[k])) {
            CHECK(fabs(got - expected[k]) <= 1e-4 * fabs(expected[k]), "%s: %.9g, reference %.9g", names[k], got, expected[k]);
            printf("  %-34s %.3f s\n", names[k], now() - t0);
        }
        wt_tensor_release(r), r = NULL;
    }

    /* Batch norm (training) of X as [425, 4, 100, 200]: its statistics in
     * blocks of images, then the normalised 136 MB output. */
    for (int k = 0; k < 4; k++) bn_mean[k] = bn_var[k] = 0;
    for (int64_t i = 0; i < NX; i++) bn_mean[i / (IH * IW) % 4] += val(i);
    for (int k = 0; k < 4; k++) bn_mean[k] /= (double)(NX / 4);
    for (int64_t i = 0; i < NX; i++) {
        double d = val(i) - bn_mean[i / (IH * IW) % 4];
        bn_var[i / (IH * IW) % 4] += d * d;
    }
    for (int k = 0; k < 4; k++) bn_var[k] /= (double)(NX / 4);
    wt_batch_norm_options bo;
    wt_batch_norm_options_init(&bo);
    bo.training = true;
    wt_tensor *bm = NULL, *bvv = NULL, *flat = NULL;
    t0 = now();
    if (ok(wt_reshape(X, 4, is4, &kv), "reshape") && ok(wt_batch_norm(kv, NULL, NULL, NULL, NULL, &bo, &r, &bm, &bvv), "batch_norm")) {
        float hm[4], hv[4];
        if (ok(wt_tensor_read(bm, hm, sizeof hm), "read mean") && ok(wt_tensor_read(bvv, hv, sizeof hv), "read var"))
            for (int k = 0; k < 4; k++)
                CHECK(fabs(hm[k] - bn_mean[k]) <= 1e-5 * sqrt(bn_var[k]) && fabs(hv[k] - bn_var[k]) <= 1e-5 * bn_var[k],
                      "batch statistics of channel %d: %g %g, reference %g %g", k, hm[k], hv[k], bn_mean[k], bn_var[k]);
        int64_t nx = NX;
        if (ok(wt_reshape(r, 1, &nx, &flat), "reshape"))
            expect_chunked(flat, NULL, ref_batch_norm, "batch_norm (training, 136 MB)", t0);
    }
    wt_tensor_release(kv), wt_tensor_release(r), wt_tensor_release(bm), wt_tensor_release(bvv), wt_tensor_release(flat);
    kv = r = NULL;

    /* index_add along the rows of X as [SR, D] (a 136 MB result, added
     * to in parts along the axis). */
    {
        static const int32_t ia[3] = {0, SR - 1, 0};
        float *hs = malloc(3 * D * 4);
        for (int64_t i = 0; hs && i < 3 * D; i++) hs[i] = (float)val(i + 5);
        int64_t ss[2] = {3, D}, n3 = 3;
        wt_tensor *src = NULL, *ix = NULL;
        t0 = now();
        if (hs && ok(wt_reshape(X, 2, xs2, &kv), "reshape") && ok(wt_tensor_from_data(ctx, WT_F32, 2, ss, hs, &src), "src") &&
            ok(wt_tensor_from_data(ctx, WT_I32, 1, &n3, ia, &ix), "index") && ok(wt_index_add(kv, 0, ix, src, &r), "index_add")) {
            wt_context_sync(ctx);
            double secs = now() - t0;
            static const int64_t look[3] = {0, SR - 1, 1};
            float got[D];
            int64_t bad = 0;
            for (int k = 0; k < 3; k++) {
                wt_tensor *v = NULL;
                if (ok(wt_slice(r, 0, look[k], look[k] + 1, 1, &v), "slice") && ok(wt_tensor_read(v, got, sizeof got), "read"))
                    for (int64_t c = 0; c < D; c++) {
                        double expect_v = (float)val(look[k] * D + c);
                        for (int i = 0; i < 3; i++)
                            if (ia[i] == look[k]) expect_v += (double)(float)val(i * D + c + 5);
                        bad += fabs(got[c] - expect_v) > 1e-5 * (1 + fabs(expect_v));
                    }
                else
                    bad++;
                wt_tensor_release(v);
            }
            CHECK(bad == 0, "index_add: %lld wrong", (long long)bad);
            printf("  %-34s %.3f s\n", "index_add (136 MB)", secs);
        }
        free(hs);
        wt_tensor_release(src), wt_tensor_release(ix), wt_tensor_release(kv), wt_tensor_release(r);
        kv = r = NULL;
    }

    /* An activation gradient over all of X (a second 136 MB tensor). */
    t0 = now();
    if (ok(wt_activation_backward(WT_ACT_RELU, X, X, &r), "activation_backward")) {
        expect_chunked(r, NULL, ref_relu_backward, "relu backward (136 MB out)", t0);
        /* An SGD step on X (in place) with that gradient. */
        wt_sgd_options so;
        wt_sgd_options_init(&so);
        so.lr = 0.5f;
        t0 = now();
        if (ok(wt_sgd_step(X, r, NULL, &so), "sgd_step"))
            expect_chunked(X, NULL, ref_sgd, "sgd step on 136 MB in place", t0);
    }
    wt_tensor_release(r);
    wt_tensor_release(X);
}

/* The gradient of an embedding table [SR, D] f32 (136 MB) from 6 rows,
 * two of them twice: the sums land in their rows, the others stay 0. */
static void embedding_backward_op(wt_context *ctx)
{
    static const int32_t rows[6] = {0, SR - 1, 8500, 0, SR - 1, 42};
    float *hdy = malloc(6 * D * 4);
    for (int64_t i = 0; hdy && i < 6 * D; i++) hdy[i] = (float)val(i + 77);
    int64_t ds[2] = {6, D}, n6 = 6;
    wt_tensor *dy = NULL, *idx = NULL, *g = NULL;
    double t0 = now();
    if (hdy && ok(wt_tensor_from_data(ctx, WT_F32, 2, ds, hdy, &dy), "dy") &&
        ok(wt_tensor_from_data(ctx, WT_I32, 1, &n6, rows, &idx), "indices") &&
        ok(wt_embedding_backward(dy, idx, SR, &g), "embedding_backward")) {
        wt_context_sync(ctx);
        double secs = now() - t0;
        static const int64_t look[6] = {0, SR - 1, 8500, 42, 1, 9000};
        float got[D];
        int64_t bad = 0;
        for (int k = 0; k < 6; k++) {
            wt_tensor *v = NULL;
            if (!ok(wt_slice(g, 0, look[k], look[k] + 1, 1, &v), "slice") ||
                !ok(wt_tensor_read(v, got, sizeof got), "read a row")) {
                bad++;
            } else {
                for (int64_t c = 0; c < D; c++) {
                    double want = 0;
                    for (int i = 0; i < 6; i++)
                        if (rows[i] == look[k]) want += (double)(float)val(i * D + c + 77);
                    bad += fabs(got[c] - want) > 1e-6 * (1 + fabs(want));
                }
            }
            wt_tensor_release(v);
        }
        CHECK(bad == 0, "embedding_backward: %lld wrong", (long long)bad);
        printf("  %-34s %.3f s\n", "embedding_backward (136 MB table)", secs);
    }
    free(hdy);
    wt_tensor_release(dy), wt_tensor_release(idx), wt_tensor_release(g);
}

/* wt_rand past one binding gives the CPU backend's numbers, element for
 * element (one Philox stream; the GPU makes it in parts). */
static void random_ops(wt_context *ctx)
{
    wt_context_options o;
    wt_context_options_init(&o);
    o.backend = WT_BACKEND_CPU;
    wt_context *cpu = NULL;
    if (!ok(wt_context_create(&o, &cpu), "CPU context")) return;
    int64_t n = NX;
    wt_tensor *g = NULL, *c = NULL;
    double t0 = now();
    if (ok(wt_rand(ctx, WT_F32, 1, &n, 1234, &g), "rand") && ok(wt_rand(cpu, WT_F32, 1, &n, 1234, &c), "CPU rand"))
        expect_chunked(g, c, NULL, "rand (136 MB) = the CPU's", t0);
    wt_tensor_release(g), wt_tensor_release(c);
    wt_context_destroy(cpu);
}

int main(int argc, char **argv)
{
    test_run run;
    if (!test_begin(&run, "runtime_big_ops", argc, argv)) return run.status;
    const test_backend b = run.backend;
    wt_context *ctx = run.ctx;
    wt_context_info ci;
    wt_context_get_info(ctx, &ci);
    printf("one binding holds %llu bytes\n", (unsigned long long)ci.max_binding_size);
    const char *forced = getenv("WT_WINDOW_BYTES");
    if (b != TEST_BACKEND_CPU)
        CHECK((uint64_t)NX * 4 > ci.max_binding_size || (forced && (uint64_t)atoll(forced) < (uint64_t)NX * 4),
              "the cases must exceed the binding limit (or WT_WINDOW_BYTES)");
    double t0 = now();
    f16_table_ops(ctx);
    f32_tensor_ops(ctx);
    embedding_backward_op(ctx);
    random_ops(ctx);
    printf("all: %.1f s (%s)\n", now() - t0, test_backend_name(b));
    return test_end(&run);
}
