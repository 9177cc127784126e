/* nn_transformer <cpu|vulkan|gles>: the transformer ops (attention, rope,
 * linear, softmax / log_softmax on any axis, layer / rms norm over the last
 * k axes) against float64 references computed here, plus bad-input codes.
 *
 * Inputs are random f32 values; the references run in double on exactly
 * those values. Tolerances are f32-sized: |got - ref| <= atol + rtol |ref|. */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static wt_context *g_ctx;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---------------------------------------------------------------- helpers */

/* A host array of f32-representable doubles and its device tensor. */
typedef struct tin {
    int ndim;
    int64_t shape[WT_MAX_DIMS];
    int64_t n;
    double *v;
    wt_tensor *t;
} tin;

static int64_t count(int ndim, const int64_t *shape)
{
    int64_t n = 1;
    for (int i = 0; i < ndim; i++) n *= shape[i];
    return n;
}

/* Uploads v (n values, rounded to f32 in place so the reference sees what
 * the device holds). */
static wt_tensor *upload(double *v, int ndim, const int64_t *shape)
{
    int64_t n = count(ndim, shape);
    float *f = malloc(sizeof(float) * (size_t)(n ? n : 1));
    for (int64_t i = 0; i < n; i++) f[i] = (float)v[i], v[i] = f[i];
    wt_tensor *t = NULL;
    wt_status st = wt_tensor_from_data(g_ctx, WT_F32, ndim, shape, f, &t);
    CHECK(st == WT_OK, "upload: %s", wt_last_error());
    free(f);
    return t;
}

static tin make(int ndim, const int64_t *shape, double lo, double hi)
{
    tin a;
    memset(&a, 0, sizeof a);
    a.ndim = ndim;
    memcpy(a.shape, shape, sizeof(int64_t) * (size_t)ndim);
    a.n = count(ndim, shape);
    a.v = malloc(sizeof(double) * (size_t)(a.n ? a.n : 1));
    for (int64_t i = 0; i < a.n; i++) a.v[i] = test_rng_uniform((float)lo, (float)hi);
    a.t = upload(a.v, ndim, shape);
    return a;
}

static void drop(tin *a)
{
    free(a->v);
    wt_tensor_release(a->t);
    memset(a, 0, sizeof *a);
}

/* Reads t and compares it with ref (shape and values). NaN matches NaN. */
static bool compare(const char *what, wt_status st, wt_tensor *t, int ndim, const int64_t *shape,
                    const double *ref, double atol, double rtol)
{
    if (!CHECK(st == WT_OK && t, "%s: failed: %s", what, wt_last_error())) return false;
    char b1[128], b2[128];
    bool ok = wt_tensor_ndim(t) == ndim && memcmp(wt_tensor_shape(t), shape, sizeof(int64_t) * (size_t)ndim) == 0;
    if (!CHECK(ok, "%s: shape %s, expected %s", what, test_shape_str(wt_tensor_ndim(t), wt_tensor_shape(t), b1, sizeof b1),
               test_shape_str(ndim, shape, b2, sizeof b2)))
        return false;
    char err[256] = "";
    float *got = test_read_guarded(t, err, sizeof err);
    if (!CHECK(got != NULL, "%s: read: %s", what, err)) return false;
    int64_t n = count(ndim, shape), bad = 0, first = -1;
    double worst = 0;
    for (int64_t i = 0; i < n; i++) {
        double g = got[i], r = ref[i];
        bool good = (isnan(r) && isnan(g)) || g == r || fabs(g - r) <= atol + rtol * fabs(r);
        if (!good) {
            if (first < 0) first = i;
            bad++;
            if (fabs(g - r) > worst || isnan(g)) worst = fabs(g - r);
        }
    }
    ok = CHECK(bad == 0, "%s: %lld of %lld wrong; first at %lld: got %.9g, expected %.9g (worst diff %.3g)", what,
               (long long)bad, (long long)n, (long long)first, first >= 0 ? got[first] : 0.0,
               first >= 0 ? ref[first] : 0.0, worst);
    free(got);
    return ok;
}

static void expect_code(const char *what, wt_status st, wt_status want, wt_tensor *out)
{
    CHECK(st == want, "%s: got %s, expected %s (%s)", what, wt_status_string(st), wt_status_string(want),
          wt_last_error());
    CHECK(out == NULL, "%s: out not NULL on failure", what);
    if (st == want) CHECK(wt_last_error()[0] != '\0', "%s: no message", what);
    wt_tensor_release(out);
}

/* -------------------------------------------------------------- attention */

typedef struct attn_case {
    const char *name;
    int64_t B, Hq, Hkv, Sq, Skv, D, Dv;
    bool causal;
    float scale;
    int mask_ndim; /* 0: none */
    int64_t mask_shape[4];
    double mask_neg_inf_frac; /* share of mask entries set to -inf */
    bool q_permuted;          /* q given as a [B, S, H, D] buffer permuted to [B, H, S, D] */
    bool mask_first_row;      /* the mask's first row all -inf (a query that sees nothing) */
} attn_case;

static void ref_attention(const attn_case *c, const double *q, const double *k, const double *v,
                          const double *m, const int64_t *ms, double *out)
{
    const int64_t G = c->Hq / c->Hkv;
    const double scale = c->scale != 0 ? c->scale : 1.0 / sqrt((double)c->D);
    double *s = malloc(sizeof(double) * (size_t)(c->Skv ? c->Skv : 1));
    /* mask strides for broadcasting to [B, Hq, Sq, Skv] */
    int64_t mstr[4] = {0, 0, 0, 0};
    if (m) {
        int lead = 4 - c->mask_ndim;
        int64_t st = 1;
        for (int i = 3; i >= lead; i--) {
            mstr[i] = ms[i - lead] == 1 ? 0 : st;
            st *= ms[i - lead];
        }
    }
    for (int64_t b = 0; b < c->B; b++)
        for (int64_t h = 0; h < c->Hq; h++)
            for (int64_t i = 0; i < c->Sq; i++) {
                const int64_t kh = h / G;
                double mx = -INFINITY;
                for (int64_t j = 0; j < c->Skv; j++) {
                    double x = 0;
                    for (int64_t d = 0; d < c->D; d++)
                        x += q[((b * c->Hq + h) * c->Sq + i) * c->D + d] * k[((b * c->Hkv + kh) * c->Skv + j) * c->D + d];
                    x *= scale;
                    if (m) x += m[b * mstr[0] + h * mstr[1] + i * mstr[2] + j * mstr[3]];
                    if (c->causal && j > i + c->Skv - c->Sq) x = -INFINITY;
                    s[j] = x;
                    if (x > mx) mx = x;
                }
                double *o = out + ((b * c->Hq + h) * c->Sq + i) * c->Dv;
                for (int64_t d = 0; d < c->Dv; d++) o[d] = 0;
                if (mx == -INFINITY) continue; /* no visible key: zeros */
                double l = 0;
                for (int64_t j = 0; j < c->Skv; j++) {
                    double p = exp(s[j] - mx);
                    l += p;
                    for (int64_t d = 0; d < c->Dv; d++) o[d] += p * v[((b * c->Hkv + kh) * c->Skv + j) * c->Dv + d];
                }
                for (int64_t d = 0; d < c->Dv; d++) o[d] /= l;
            }
    free(s);
}

static bool g_bool_mask; /* run_attention gives the mask as WT_BOOL */
static bool g_kv_sliced; /* run_attention gives k as a view at odd offsets */

static void run_attention(const attn_case *c)
{
    int64_t qs[4] = {c->B, c->Hq, c->Sq, c->D}, ks[4] = {c->B, c->Hkv, c->Skv, c->D},
            vs[4] = {c->B, c->Hkv, c->Skv, c->Dv}, os[4] = {c->B, c->Hq, c->Sq, c->Dv};
    tin q, k, v = make(4, vs, -1, 1), m;
    if (g_kv_sliced) {
        /* k as a view [..., 1:D+1] of [B, Hkv, Skv, D+1]: rows at odd
         * offsets and strides (no vector loads). The reference takes the
         * viewed values. */
        int64_t wide[4] = {c->B, c->Hkv, c->Skv, c->D + 1};
        k = make(4, wide, -1, 1);
        wt_tensor *view = NULL;
        CHECK(wt_slice(k.t, 3, 1, c->D + 1, 1, &view) == WT_OK, "slice k");
        for (int64_t r = 0; r < k.n / (c->D + 1); r++)
            for (int64_t d = 0; d < c->D; d++) k.v[r * c->D + d] = k.v[r * (c->D + 1) + 1 + d];
        wt_tensor_release(k.t);
        k.t = view;
    } else {
        k = make(4, ks, -1, 1);
    }
    memset(&m, 0, sizeof m);
    wt_tensor *qv = NULL;
    if (c->q_permuted) {
        /* [B, S, H, D] storage, viewed as [B, H, S, D]: the layout a
         * projection produces. The reference wants [B, H, S, D] order. */
        int64_t bshd[4] = {c->B, c->Sq, c->Hq, c->D};
        q = make(4, bshd, -1, 1);
        const int perm[4] = {0, 2, 1, 3};
        CHECK(wt_permute(q.t, perm, &qv) == WT_OK, "permute");
        double *r = malloc(sizeof(double) * (size_t)(q.n ? q.n : 1));
        for (int64_t b = 0; b < c->B; b++)
            for (int64_t s = 0; s < c->Sq; s++)
                for (int64_t h = 0; h < c->Hq; h++)
                    for (int64_t d = 0; d < c->D; d++)
                        r[((b * c->Hq + h) * c->Sq + s) * c->D + d] = q.v[((b * c->Sq + s) * c->Hq + h) * c->D + d];
        free(q.v);
        q.v = r;
    } else {
        q = make(4, qs, -1, 1);
        qv = q.t;
        wt_tensor_retain(qv);
    }
    if (c->mask_ndim) {
        m = make(c->mask_ndim, c->mask_shape, -2, 2);
        if (c->mask_neg_inf_frac > 0 || c->mask_first_row) {
            for (int64_t i = 0; i < m.n; i++)
                if ((double)(test_rng_next() % 1000) < c->mask_neg_inf_frac * 1000) m.v[i] = -INFINITY;
            for (int64_t i = 0; c->mask_first_row && i < m.shape[m.ndim - 1]; i++) m.v[i] = -INFINITY;
            wt_tensor_release(m.t);
            m.t = upload(m.v, m.ndim, m.shape);
        }
        if (g_bool_mask) { /* the same mask as WT_BOOL: -inf -> false, else true (and 0 added) */
            unsigned char *bits = malloc((size_t)m.n + 1);
            for (int64_t i = 0; i < m.n; i++) {
                bits[i] = m.v[i] != -INFINITY;
                if (bits[i]) m.v[i] = 0;
            }
            wt_tensor_release(m.t);
            m.t = NULL;
            CHECK(wt_tensor_from_data(g_ctx, WT_BOOL, m.ndim, m.shape, bits, &m.t) == WT_OK, "bool mask: %s",
                  wt_last_error());
            free(bits);
        }
    }
    double *ref = malloc(sizeof(double) * (size_t)(count(4, os) ? count(4, os) : 1));
    ref_attention(c, q.v, k.v, v.v, c->mask_ndim ? m.v : NULL, m.shape, ref);
    wt_tensor *out = NULL;
    wt_status st = wt_scaled_dot_product_attention(qv, k.t, v.t, m.t, c->causal, c->scale, &out);
    char what[160];
    snprintf(what, sizeof what, "attention %s%s%s", c->name, g_bool_mask ? " (bool mask)" : "",
             g_kv_sliced ? " (k a sliced view)" : "");
    compare(what, st, out, 4, os, ref, 2e-5, 2e-4);
    wt_tensor_release(out);
    wt_tensor_release(qv);
    free(ref);
    drop(&q), drop(&k), drop(&v), drop(&m);
}

static void test_attention(void)
{
    const attn_case cases[] = {
        {"plain MHA D=64", 2, 4, 4, 7, 7, 64, 64, false, 0, 0, {0}, 0, false, false},
        {"GQA causal odd", 1, 6, 2, 13, 13, 16, 16, true, 0, 0, {0}, 0, false, false},
        {"causal Sq<Skv, 3 key tiles+", 1, 4, 1, 5, 333, 64, 64, true, 0, 0, {0}, 0, false, false},
        {"causal Sq>Skv (empty rows)", 1, 2, 1, 6, 4, 8, 8, true, 0, 0, {0}, 0, false, false},
        {"decode Sq=1 GQA", 2, 8, 2, 1, 517, 64, 64, true, 0, 0, {0}, 0, false, false},
        {"decode + padding mask", 2, 4, 4, 1, 701, 32, 32, false, 0, 4, {2, 1, 1, 701}, 0.2, false, false},
        /* One query a head: the one-pass decode kernel, at its bounds and past them. */
        {"decode Sq=1 D=128 MHA", 1, 4, 4, 1, 300, 128, 128, false, 0, 0, {0}, 0, false, false},
        {"decode Sq=1 D=8 Dv=12", 2, 2, 1, 1, 50, 8, 12, true, 0.7f, 0, {0}, 0, false, false},
        {"decode Sq=1 Skv=2048", 1, 2, 1, 1, 2048, 16, 16, true, 0, 0, {0}, 0, false, false},
        {"decode Sq=1 Skv=2049", 1, 2, 1, 1, 2049, 16, 16, true, 0, 0, {0}, 0, false, false},
        {"decode Sq=1 Skv=1", 1, 3, 1, 1, 1, 4, 4, true, 0, 0, {0}, 0, false, false},
        {"odd D, Dv != D, 2-D mask", 2, 3, 3, 9, 11, 13, 7, false, 0.3f, 2, {9, 11}, 0, false, false},
        {"mask [Hq,1,Skv] + causal", 1, 4, 2, 17, 17, 24, 24, true, 0, 3, {4, 1, 17}, 0.1, false, false},
        {"fully masked rows", 1, 2, 2, 5, 6, 8, 8, false, 0, 4, {1, 2, 5, 6}, 0.5, false, true},
        {"q permuted view, D=128", 1, 4, 2, 19, 70, 128, 128, false, 0, 0, {0}, 0, true, false},
        {"D=256 prefill", 1, 2, 1, 20, 40, 256, 256, true, 0, 0, {0}, 0, false, false},
        {"D=1 Skv=1", 3, 1, 1, 2, 1, 1, 1, false, 0, 0, {0}, 0, false, false},
        {"Skv=0", 1, 2, 1, 3, 0, 8, 5, false, 0, 0, {0}, 0, false, false},
        {"Sq=0", 1, 2, 1, 0, 5, 8, 8, true, 0, 0, {0}, 0, false, false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) run_attention(&cases[i]);
    /* The masked cases again with WT_BOOL masks (true = attend). */
    g_bool_mask = true;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        if (cases[i].mask_neg_inf_frac > 0) run_attention(&cases[i]);
    g_bool_mask = false;
    g_kv_sliced = true; /* decode (split keys) and prefill with k read through odd strides */
    run_attention(&cases[1]);
    run_attention(&cases[4]);
    g_kv_sliced = false;

    /* 3-D inputs [H, S, D] and f16 inputs. */
    int64_t s3[3] = {2, 5, 8};
    tin q = make(3, s3, -1, 1), k = make(3, s3, -1, 1), v = make(3, s3, -1, 1);
    attn_case c3 = {"3-D", 1, 2, 2, 5, 5, 8, 8, false, 0, 0, {0}, 0, false, false};
    double ref[80];
    ref_attention(&c3, q.v, k.v, v.v, NULL, NULL, ref);
    wt_tensor *out = NULL;
    wt_status st = wt_scaled_dot_product_attention(q.t, k.t, v.t, NULL, false, 0, &out);
    compare("attention 3-D", st, out, 3, s3, ref, 2e-5, 2e-4);
    wt_tensor_release(out);
    wt_tensor *qh = NULL, *kh = NULL, *vh = NULL, *o32 = NULL;
    CHECK(wt_cast(q.t, WT_F16, &qh) == WT_OK && wt_cast(k.t, WT_F16, &kh) == WT_OK &&
              wt_cast(v.t, WT_F16, &vh) == WT_OK, "cast to f16");
    out = NULL;
    st = wt_scaled_dot_product_attention(qh, kh, vh, NULL, false, 0, &out);
    if (CHECK(st == WT_OK && wt_tensor_dtype(out) == WT_F16, "attention f16: %s", wt_last_error()) &&
        CHECK(wt_cast(out, WT_F32, &o32) == WT_OK, "cast back"))
        compare("attention f16", WT_OK, o32, 3, s3, ref, 3e-3, 3e-3);
    wt_tensor_release(out);
    wt_tensor_release(o32);

    /* bad input */
    int64_t s4[4] = {1, 2, 5, 8}, s4b[4] = {1, 3, 5, 8}, s4d[4] = {1, 2, 5, 7}, s5[5] = {1, 1, 2, 5, 8};
    wt_tensor *q4 = NULL, *k3h = NULL, *kd = NULL, *q5 = NULL, *mbad = NULL;
    wt_tensor_zeros(g_ctx, WT_F32, 4, s4, &q4);
    wt_tensor_zeros(g_ctx, WT_F32, 4, s4b, &k3h);
    wt_tensor_zeros(g_ctx, WT_F32, 4, s4d, &kd);
    wt_tensor_zeros(g_ctx, WT_F32, 5, s5, &q5);
    int64_t mb[2] = {4, 5};
    wt_tensor_zeros(g_ctx, WT_F32, 2, mb, &mbad);
    out = NULL;
    expect_code("attention NULL q", wt_scaled_dot_product_attention(NULL, q4, q4, NULL, false, 0, &out),
                WT_ERR_INVALID_ARGUMENT, out);
    CHECK(wt_scaled_dot_product_attention(q4, q4, q4, NULL, false, 0, NULL) == WT_ERR_INVALID_ARGUMENT, "NULL out");
    out = NULL;
    expect_code("attention heads 2 vs 3", wt_scaled_dot_product_attention(q4, k3h, k3h, NULL, false, 0, &out),
                WT_ERR_SHAPE, out);
    out = NULL;
    expect_code("attention D differs", wt_scaled_dot_product_attention(q4, kd, q4, NULL, false, 0, &out),
                WT_ERR_SHAPE, out);
    out = NULL;
    expect_code("attention 5-D", wt_scaled_dot_product_attention(q5, q5, q5, NULL, false, 0, &out), WT_ERR_SHAPE, out);
    out = NULL;
    expect_code("attention 3-D q with 4-D k", wt_scaled_dot_product_attention(q.t, q4, q4, NULL, false, 0, &out),
                WT_ERR_SHAPE, out);
    out = NULL;
    expect_code("attention mask [4,5]", wt_scaled_dot_product_attention(q4, q4, q4, mbad, false, 0, &out),
                WT_ERR_SHAPE, out);
    out = NULL;
    wt_tensor *mi32 = NULL;
    wt_tensor_zeros(g_ctx, WT_I32, 4, s4, &mi32);
    out = NULL;
    expect_code("attention i32 mask", wt_scaled_dot_product_attention(q4, q4, q4, mi32, false, 0, &out),
                WT_ERR_INVALID_ARGUMENT, out);
    wt_tensor_release(mi32);
    out = NULL;
    expect_code("attention NaN scale", wt_scaled_dot_product_attention(q4, q4, q4, NULL, false, NAN, &out),
                WT_ERR_INVALID_ARGUMENT, out);
    wt_tensor_release(q4), wt_tensor_release(k3h), wt_tensor_release(kd), wt_tensor_release(q5);
    wt_tensor_release(mbad), wt_tensor_release(qh), wt_tensor_release(kh), wt_tensor_release(vh);
    drop(&q), drop(&k), drop(&v);
}

/* ------------------------------------------------------------------- rope */

static void ref_rope(const double *x, const int64_t *shape, int ndim, int seq_axis, double theta, int64_t offset,
                     double *out)
{
    const int64_t D = shape[ndim - 1], H = D / 2, n = count(ndim, shape);
    for (int64_t e = 0; e < n; e += D) {
        int64_t rest = e / D, s = 0;
        for (int ax = ndim - 2; ax >= 0; ax--) {
            if (ax == seq_axis) s = rest % shape[ax];
            rest /= shape[ax];
        }
        for (int64_t i = 0; i < H; i++) {
            double a = (double)(offset + s) * pow(theta, -2.0 * (double)i / (double)D);
            double x1 = x[e + i], x2 = x[e + i + H];
            out[e + i] = x1 * cos(a) - x2 * sin(a);
            out[e + i + H] = x2 * cos(a) + x1 * sin(a);
        }
    }
}

static void rope_case(const char *name, int ndim, const int64_t *shape, wt_rope_layout layout, double theta,
                      int64_t offset, bool transposed)
{
    tin x = make(ndim, shape, -1, 1);
    double *ref = malloc(sizeof(double) * (size_t)(x.n ? x.n : 1));
    ref_rope(x.v, shape, ndim, ndim - (layout == WT_ROPE_BHSD ? 2 : 3), theta, offset, ref);
    wt_tensor *in = x.t, *tr = NULL, *back = NULL, *out = NULL;
    wt_tensor_retain(in);
    if (transposed) { /* a non-contiguous input: the same values through a double transpose */
        CHECK(wt_transpose(x.t, 0, 1, &tr) == WT_OK && wt_copy(tr, &back) == WT_OK, "transpose");
        wt_tensor_release(in);
        wt_tensor_release(tr);
        CHECK(wt_transpose(back, 0, 1, &in) == WT_OK, "transpose back");
        wt_tensor_release(back);
    }
    wt_status st = wt_rope(in, theta, offset, layout, &out);
    char what[128];
    snprintf(what, sizeof what, "rope %s", name);
    compare(what, st, out, ndim, shape, ref, 2e-5, 1e-5);
    wt_tensor_release(out);
    wt_tensor_release(in);
    free(ref);
    drop(&x);
}

static void test_rope(void)
{
    int64_t a[4] = {2, 3, 5, 8}, b[4] = {2, 5, 3, 16}, c[4] = {1, 2, 3, 128}, d[2] = {7, 6}, e[4] = {3, 4, 6, 64};
    rope_case("BHSD offset 0", 4, a, WT_ROPE_BHSD, 10000, 0, false);
    rope_case("BHSD offset 1000", 4, a, WT_ROPE_BHSD, 10000, 1000, false);
    rope_case("BSHD offset 7", 4, b, WT_ROPE_BSHD, 10000, 7, false);
    rope_case("positions ~100000, theta 500000, D=128", 4, c, WT_ROPE_BHSD, 500000, 99999, false);
    rope_case("2-D [S, D]", 2, d, WT_ROPE_BHSD, 10000, 3, false);
    rope_case("non-contiguous BSHD", 4, e, WT_ROPE_BSHD, 10000, 11, true);
    wt_tensor *x = NULL, *out = NULL;
    int64_t odd[3] = {2, 3, 5};
    wt_tensor_zeros(g_ctx, WT_F32, 3, odd, &x);
    expect_code("rope odd D", wt_rope(x, 10000, 0, WT_ROPE_BHSD, &out), WT_ERR_SHAPE, out);
    wt_tensor_release(x);
    wt_tensor_zeros(g_ctx, WT_F32, 4, a, &x);
    out = NULL;
    expect_code("rope theta 0", wt_rope(x, 0, 0, WT_ROPE_BHSD, &out), WT_ERR_INVALID_ARGUMENT, out);
    out = NULL;
    expect_code("rope offset -1", wt_rope(x, 10000, -1, WT_ROPE_BHSD, &out), WT_ERR_INVALID_ARGUMENT, out);
    out = NULL;
    expect_code("rope layout 7", wt_rope(x, 10000, 0, (wt_rope_layout)7, &out), WT_ERR_INVALID_ARGUMENT, out);
    wt_tensor_release(x);
    int64_t one[1] = {8};
    wt_tensor_zeros(g_ctx, WT_F32, 1, one, &x);
    out = NULL;
    expect_code("rope 1-D", wt_rope(x, 10000, 0, WT_ROPE_BHSD, &out), WT_ERR_SHAPE, out);
    wt_tensor_release(x);
}

/* ----------------------------------------------------------------- linear */

static void linear_case(const char *name, int xnd, const int64_t *xs, int64_t O, bool bias)
{
    const int64_t I = xs[xnd - 1];
    int64_t ws[2] = {O, I}, bs[1] = {O};
    tin x = make(xnd, xs, -1, 1), w = make(2, ws, -1, 1), b;
    memset(&b, 0, sizeof b);
    if (bias) b = make(1, bs, -1, 1);
    const int64_t rows = x.n / (I ? I : 1);
    double *ref = malloc(sizeof(double) * (size_t)(rows * O + 1));
    for (int64_t r = 0; r < rows; r++)
        for (int64_t o = 0; o < O; o++) {
            double s = bias ? b.v[o] : 0.0;
            for (int64_t i = 0; i < I; i++) s += x.v[r * I + i] * w.v[o * I + i];
            ref[r * O + o] = s;
        }
    int64_t os[WT_MAX_DIMS];
    memcpy(os, xs, sizeof(int64_t) * (size_t)xnd);
    os[xnd - 1] = O;
    wt_tensor *out = NULL;
    wt_status st = wt_linear(x.t, w.t, b.t, &out);
    char what[128];
    snprintf(what, sizeof what, "linear %s", name);
    compare(what, st, out, xnd, os, ref, 1e-5, 1e-4);
    wt_tensor_release(out);
    free(ref);
    drop(&x), drop(&w), drop(&b);
}

static void test_linear(void)
{
    int64_t a[3] = {3, 5, 7}, b[2] = {1, 64}, c[1] = {33}, d[2] = {67, 45};
    linear_case("batched x, bias", 3, a, 4, true);
    linear_case("batched x, no bias", 3, a, 4, false);
    linear_case("decode row", 2, b, 96, true);
    linear_case("1-D x", 1, c, 17, true);
    linear_case("odd", 2, d, 29, false);
    /* non-contiguous x (a transposed view) */
    int64_t xs[2] = {9, 6}, ws[2] = {5, 9};
    tin x = make(2, xs, -1, 1), w = make(2, ws, -1, 1);
    wt_tensor *xt = NULL, *out = NULL;
    CHECK(wt_transpose(x.t, 0, 1, &xt) == WT_OK, "transpose");
    double ref[30];
    for (int r = 0; r < 6; r++)
        for (int o = 0; o < 5; o++) {
            double s = 0;
            for (int i = 0; i < 9; i++) s += x.v[i * 6 + r] * w.v[o * 9 + i];
            ref[r * 5 + o] = s;
        }
    int64_t os[2] = {6, 5};
    wt_status st = wt_linear(xt, w.t, NULL, &out);
    compare("linear transposed x", st, out, 2, os, ref, 1e-5, 1e-4);
    wt_tensor_release(out);
    {   /* a 3-D x whose leading axes do not fold: [4, 3, 6] transposed to [3, 4, 6] */
        int64_t x3s[3] = {4, 3, 6}, w3s[2] = {5, 6}, b3s[1] = {5}, o3s[3] = {3, 4, 5};
        tin x3 = make(3, x3s, -1, 1), w3 = make(2, w3s, -1, 1), b3 = make(1, b3s, -1, 1);
        wt_tensor *x3t = NULL, *o3 = NULL;
        CHECK(wt_transpose(x3.t, 0, 1, &x3t) == WT_OK, "transpose");
        double r3[60];
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 4; j++)
                for (int o = 0; o < 5; o++) {
                    double acc = b3.v[o];
                    for (int k = 0; k < 6; k++) acc += x3.v[(j * 3 + i) * 6 + k] * w3.v[o * 6 + k];
                    r3[(i * 4 + j) * 5 + o] = acc;
                }
        wt_status s3 = wt_linear(x3t, w3.t, b3.t, &o3);
        compare("linear 3-D transposed x, bias", s3, o3, 3, o3s, r3, 1e-5, 1e-4);
        wt_tensor_release(o3);
        wt_tensor_release(x3t);
        drop(&x3), drop(&w3), drop(&b3);
    }
    out = NULL;
    expect_code("linear in_features differ", wt_linear(x.t, w.t, NULL, &out), WT_ERR_SHAPE, out);
    out = NULL;
    expect_code("linear bias shape", wt_linear(xt, w.t, xt, &out), WT_ERR_SHAPE, out);
    out = NULL;
    expect_code("linear NULL w", wt_linear(xt, NULL, NULL, &out), WT_ERR_INVALID_ARGUMENT, out);
    wt_tensor_release(xt);
    drop(&x), drop(&w);
}

/* -------------------------------------------------------- softmax & norms */

static void ref_softmax_axis(bool log_sm, const double *x, int ndim, const int64_t *shape, int axis, double *out)
{
    int64_t O = 1, I = 1, C = shape[axis];
    for (int i = 0; i < axis; i++) O *= shape[i];
    for (int i = axis + 1; i < ndim; i++) I *= shape[i];
    for (int64_t o = 0; o < O; o++)
        for (int64_t i = 0; i < I; i++) {
            const double *xs = x + o * C * I + i;
            double m = -INFINITY, s = 0;
            for (int64_t c = 0; c < C; c++) m = fmax(m, xs[c * I]);
            double shift = isinf(m) && m < 0 ? 0 : m;
            for (int64_t c = 0; c < C; c++) s += exp(xs[c * I] - shift);
            for (int64_t c = 0; c < C; c++) {
                double v = xs[c * I] - shift;
                out[o * C * I + c * I + i] = log_sm ? v - log(s) : exp(v) / s;
            }
        }
}

static void softmax_case(const char *name, int ndim, const int64_t *shape, int axis, double lo, double hi,
                         bool with_inf)
{
    tin x = make(ndim, shape, lo, hi);
    if (with_inf) {
        for (int64_t i = 0; i < x.n; i += 7) x.v[i] = -INFINITY;
        wt_tensor_release(x.t);
        x.t = upload(x.v, ndim, shape);
    }
    int a = axis < 0 ? axis + ndim : axis;
    double *ref = malloc(sizeof(double) * (size_t)x.n);
    for (int log_sm = 0; log_sm < 2; log_sm++) {
        ref_softmax_axis(log_sm, x.v, ndim, shape, a, ref);
        wt_tensor *out = NULL;
        wt_status st = log_sm ? wt_log_softmax(x.t, axis, &out) : wt_softmax(x.t, axis, &out);
        char what[160];
        snprintf(what, sizeof what, "%s %s", log_sm ? "log_softmax" : "softmax", name);
        if (log_sm)
            compare(what, st, out, ndim, shape, ref, 2e-5, 2e-6);
        else
            compare(what, st, out, ndim, shape, ref, 1e-9, 5e-5);
        wt_tensor_release(out);
    }
    free(ref);
    drop(&x);
}

static void test_softmax(void)
{
    int64_t a[3] = {3, 37, 5}, b[2] = {100, 3}, c[3] = {2, 100003, 3}, d[2] = {2, 100003}, e[3] = {4, 9, 1},
            f[4] = {2, 3, 130, 4};
    softmax_case("middle axis [3,37,5]", 3, a, 1, -3, 3, false);
    softmax_case("axis 0 of [100,3]", 2, b, 0, -3, 3, false);
    softmax_case("middle axis of 100003", 3, c, 1, -20, 20, false);
    softmax_case("last axis of 100003", 2, d, -1, -20, 20, false);
    softmax_case("large inputs axis 1", 3, a, 1, 1e4, 1.001e4, false);
    softmax_case("trailing 1 axis", 3, e, 1, -3, 3, false);
    softmax_case("-inf entries, axis 2", 4, f, 2, -5, 5, true);
    softmax_case("-inf entries, last axis", 4, f, -1, -5, 5, true);
    /* a middle axis of a non-contiguous view */
    int64_t g[3] = {6, 5, 4};
    tin x = make(3, g, -3, 3);
    wt_tensor *xt = NULL, *out = NULL;
    CHECK(wt_transpose(x.t, 0, 2, &xt) == WT_OK, "transpose"); /* [4, 5, 6] */
    double *xd = malloc(sizeof(double) * 120), *ref = malloc(sizeof(double) * 120);
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 5; j++)
            for (int k = 0; k < 6; k++) xd[(i * 5 + j) * 6 + k] = x.v[(k * 5 + j) * 4 + i];
    int64_t ts[3] = {4, 5, 6};
    ref_softmax_axis(false, xd, 3, ts, 1, ref);
    wt_status st = wt_softmax(xt, 1, &out);
    compare("softmax transposed view axis 1", st, out, 3, ts, ref, 1e-9, 5e-5);
    wt_tensor_release(out);
    out = NULL;
    expect_code("softmax axis 3 of 3-D", wt_softmax(xt, 3, &out), WT_ERR_INVALID_ARGUMENT, out);
    out = NULL;
    expect_code("log_softmax axis -4", wt_log_softmax(xt, -4, &out), WT_ERR_INVALID_ARGUMENT, out);
    out = NULL;
    expect_code("log_softmax NULL", wt_log_softmax(NULL, 0, &out), WT_ERR_INVALID_ARGUMENT, out);
    wt_tensor_release(xt);
    free(xd), free(ref);
    drop(&x);
}

static void norm_case(const char *name, bool rms, int ndim, const int64_t *shape, int k, bool affine)
{
    tin x = make(ndim, shape, -2, 3), w, b;
    memset(&w, 0, sizeof w), memset(&b, 0, sizeof b);
    if (affine) {
        w = make(k, shape + ndim - k, 0.5, 1.5);
        if (!rms) b = make(k, shape + ndim - k, -1, 1);
    }
    const int64_t C = count(k, shape + ndim - k), R = x.n / C;
    const double eps = 1e-5;
    double *ref = malloc(sizeof(double) * (size_t)x.n);
    for (int64_t r = 0; r < R; r++) {
        const double *xr = x.v + r * C;
        double mu = 0, var = 0;
        for (int64_t j = 0; j < C; j++) mu += xr[j];
        mu = rms ? 0 : mu / (double)C;
        for (int64_t j = 0; j < C; j++) var += (xr[j] - mu) * (xr[j] - mu);
        const double rstd = 1.0 / sqrt(var / (double)C + eps);
        for (int64_t j = 0; j < C; j++)
            ref[r * C + j] = (xr[j] - mu) * rstd * (affine ? w.v[j] : 1.0) + (b.v ? b.v[j] : 0.0);
    }
    wt_tensor *out = NULL;
    wt_status st = rms ? wt_rms_norm(x.t, k, w.t, (float)eps, &out) : wt_layer_norm(x.t, k, w.t, b.t, (float)eps, &out);
    char what[128];
    snprintf(what, sizeof what, "%s %s", rms ? "rms_norm" : "layer_norm", name);
    compare(what, st, out, ndim, shape, ref, 2e-5, 2e-5);
    wt_tensor_release(out);
    free(ref);
    drop(&x), drop(&w), drop(&b);
}

static void test_norms(void)
{
    int64_t a[3] = {3, 4, 5}, b[4] = {2, 3, 7, 9}, c[2] = {5, 1000};
    norm_case("k=2 affine", false, 3, a, 2, true);
    norm_case("k=3 plain", false, 4, b, 3, false);
    norm_case("k=1", false, 2, c, 1, true);
    norm_case("k=2 affine", true, 3, a, 2, true);
    norm_case("k=4 (all)", true, 4, b, 4, true);
    wt_tensor *x = NULL, *w = NULL, *out = NULL;
    wt_tensor_zeros(g_ctx, WT_F32, 3, a, &x);
    wt_tensor_zeros(g_ctx, WT_F32, 1, a + 2, &w);
    expect_code("layer_norm k=0", wt_layer_norm(x, 0, NULL, NULL, 1e-5f, &out), WT_ERR_INVALID_ARGUMENT, out);
    out = NULL;
    expect_code("layer_norm k=4 of 3-D", wt_layer_norm(x, 4, NULL, NULL, 1e-5f, &out), WT_ERR_INVALID_ARGUMENT, out);
    out = NULL;
    expect_code("rms_norm weight [5] for k=2", wt_rms_norm(x, 2, w, 1e-5f, &out), WT_ERR_SHAPE, out);
    out = NULL;
    expect_code("layer_norm eps -1", wt_layer_norm(x, 1, NULL, NULL, -1.0f, &out), WT_ERR_INVALID_ARGUMENT, out);
    wt_tensor_release(x), wt_tensor_release(w);
}

/* f16 inputs: the ops run in f32 and round the result to f16. The
 * reference takes the inputs as rounded to f16 (read back through an exact
 * f16 -> f32 cast). */
static bool to_f16(tin *x, wt_tensor **h)
{
    wt_tensor *back = NULL;
    bool ok = CHECK(wt_cast(x->t, WT_F16, h) == WT_OK && wt_cast(*h, WT_F32, &back) == WT_OK, "cast: %s",
                    wt_last_error());
    float *f = malloc(sizeof(float) * (size_t)x->n);
    ok = ok && CHECK(wt_tensor_read(back, f, sizeof(float) * (size_t)x->n) == WT_OK, "read");
    for (int64_t i = 0; ok && i < x->n; i++) x->v[i] = f[i];
    free(f);
    wt_tensor_release(back);
    return ok;
}

static void compare_f16(const char *what, wt_status st, wt_tensor *t, int ndim, const int64_t *shape, const double *ref)
{
    wt_tensor *f = NULL;
    if (!CHECK(st == WT_OK && wt_tensor_dtype(t) == WT_F16, "%s: %s", what, wt_last_error())) return;
    if (CHECK(wt_cast(t, WT_F32, &f) == WT_OK, "%s: cast", what)) compare(what, WT_OK, f, ndim, shape, ref, 2e-3, 2e-3);
    wt_tensor_release(f);
}

/* Shapes for the register-tiled kernels (prefill without a mask): several
 * row blocks and key tiles, none whole; grouped heads; causal with fewer
 * and with more queries than keys; head dims that leave some threads
 * without output quads (one head dim for the causal ones: one shader
 * variant each); the GPT's head dim 64 with q a [B, S, H, D] view. In
 * f32, then in f16 (inputs rounded to f16 first, so that the reference
 * sees the same values; the result is f16). Each case on the default
 * kernel (attention_tiled_wide.wgsl: on a 32 KiB adapter its 64-row form
 * at head dim 12, its 32-row form at 40 and 64), on its 32-row form
 * (WT_ATTN_FWD_KERNEL=small) and on the older kernel (=tiled). */
static void test_attention_tiled(void)
{
    const attn_case cases[] = {
        {"tiled causal GQA D=40", 2, 6, 2, 45, 45, 40, 40, true, 0, 0, {0}, 0, false, false},
        {"tiled causal Sq<Skv D=40", 1, 4, 4, 33, 97, 40, 40, true, 0, 0, {0}, 0, false, false},
        {"tiled causal Sq>Skv D=40", 1, 3, 1, 40, 21, 40, 40, true, 0, 0, {0}, 0, false, false},
        {"tiled odd D=12 scale", 1, 2, 1, 70, 37, 12, 12, false, 0.7f, 0, {0}, 0, false, false},
        {"tiled causal GQA D=64 q heads inner", 1, 4, 2, 50, 50, 64, 64, true, 0, 0, {0}, 0, true, false},
    };
    const char *kernels[] = {NULL, "small", "tiled"};
    char what[128];
    for (size_t run = 0; run < sizeof cases / sizeof cases[0] * 3; run++) {
        const attn_case *c = &cases[run % (sizeof cases / sizeof cases[0])];
        const char *kernel = kernels[run / (sizeof cases / sizeof cases[0])];
        if (kernel) setenv("WT_ATTN_FWD_KERNEL", kernel, 1);
        printf("attention %s: WT_ATTN_FWD_KERNEL=%s\n", c->name, kernel ? kernel : "(unset)");
        run_attention(c);
        int64_t qs[4] = {c->B, c->Hq, c->Sq, c->D}, ks[4] = {c->B, c->Hkv, c->Skv, c->D},
                os[4] = {c->B, c->Hq, c->Sq, c->Dv};
        tin q = make(4, qs, -1, 1), k = make(4, ks, -1, 1), v = make(4, ks, -1, 1);
        wt_tensor *qh = NULL, *kh = NULL, *vh = NULL, *out = NULL;
        double *ref = malloc(sizeof(double) * (size_t)count(4, os));
        if (to_f16(&q, &qh) && to_f16(&k, &kh) && to_f16(&v, &vh)) {
            ref_attention(c, q.v, k.v, v.v, NULL, NULL, ref);
            wt_status st = wt_scaled_dot_product_attention(qh, kh, vh, NULL, c->causal, c->scale, &out);
            snprintf(what, sizeof what, "attention %s f16 (WT_ATTN_FWD_KERNEL=%s)", c->name, kernel ? kernel : "unset");
            compare_f16(what, st, out, 4, os, ref);
        }
        free(ref);
        wt_tensor_release(qh), wt_tensor_release(kh), wt_tensor_release(vh), wt_tensor_release(out);
        drop(&q), drop(&k), drop(&v);
        unsetenv("WT_ATTN_FWD_KERNEL");
    }
}

/* f16 rows: rms_norm and layer_norm of f16 x with f16 weight (and bias)
 * give the bits of the same norm on f32 copies rounded to f16 once (a GPU
 * computes whole f16 rows itself; C = 6 and an offset row take the f32
 * copies). Rows of 12288 run the loop kernel. */
static void test_f16_rows(void)
{
    const int64_t widths[4] = {64, 6, 12288, 2048};
    for (int c = 0; c < 4; c++) {
        const int64_t s2[2] = {3, widths[c]}, s1[1] = {widths[c]};
        tin x = make(2, s2, -4, 4), w = make(1, s1, -1, 1), b = make(1, s1, -1, 1);
        wt_tensor *xh = NULL, *wh = NULL, *bh = NULL, *xv = NULL;
        bool ok = to_f16(&x, &xh) && to_f16(&w, &wh) && to_f16(&b, &bh);
        /* c == 3: a view starting one row in (its offset a multiple of 4). */
        if (ok && c == 3) ok = CHECK(wt_slice(xh, 0, 1, 3, 1, &xv) == WT_OK, "slice");
        const wt_tensor *in = xv ? xv : xh;
        for (int op = 0; ok && op < 2; op++) {
            wt_tensor *got = NULL, *x32 = NULL, *w32 = NULL, *b32 = NULL, *r32 = NULL, *want = NULL;
            wt_status st = op == 0 ? wt_rms_norm(in, 1, wh, 1e-5, &got) : wt_layer_norm(in, 1, wh, bh, 1e-5, &got);
            CHECK(wt_cast(in, WT_F32, &x32) == WT_OK && wt_cast(wh, WT_F32, &w32) == WT_OK &&
                      wt_cast(bh, WT_F32, &b32) == WT_OK,
                  "casts");
            wt_status sr = op == 0 ? wt_rms_norm(x32, 1, w32, 1e-5, &r32) : wt_layer_norm(x32, 1, w32, b32, 1e-5, &r32);
            if (sr == WT_OK) sr = wt_cast(r32, WT_F16, &want);
            size_t bytes = (size_t)wt_tensor_numel(in) * 2;
            uint16_t *hg = malloc(bytes), *hw = malloc(bytes);
            CHECK(st == WT_OK && sr == WT_OK && wt_tensor_dtype(got) == WT_F16 && wt_tensor_read(got, hg, bytes) == WT_OK &&
                      wt_tensor_read(want, hw, bytes) == WT_OK && memcmp(hg, hw, bytes) == 0,
                  "%s f16 rows of %lld: the bits of the norm on f32 copies rounded once (%s)", op == 0 ? "rms_norm" : "layer_norm",
                  (long long)widths[c], wt_last_error());
            free(hg), free(hw);
            wt_tensor *all[] = {got, x32, w32, b32, r32, want};
            for (size_t k = 0; k < 6; k++) wt_tensor_release(all[k]);
        }
        wt_tensor_release(xh), wt_tensor_release(wh), wt_tensor_release(bh), wt_tensor_release(xv);
        drop(&x), drop(&w), drop(&b);
    }
}

static void test_f16(void)
{
    int64_t s3[3] = {3, 40, 6}, s4[4] = {2, 3, 5, 8}, ws[2] = {7, 6};
    tin x = make(3, s3, -3, 3), r = make(4, s4, -1, 1), w = make(2, ws, -1, 1);
    wt_tensor *xh = NULL, *rh = NULL, *wh = NULL, *out = NULL;
    double *ref = malloc(sizeof(double) * 840); /* the largest result: linear, 120 x 7 */
    if (to_f16(&x, &xh) && to_f16(&r, &rh) && to_f16(&w, &wh)) {
        ref_softmax_axis(true, x.v, 3, s3, 1, ref);
        wt_status st = wt_log_softmax(xh, 1, &out);
        compare_f16("log_softmax f16 axis 1", st, out, 3, s3, ref);
        wt_tensor_release(out);
        ref_rope(r.v, s4, 4, 2, 10000, 5, ref);
        st = wt_rope(rh, 10000, 5, WT_ROPE_BHSD, &out);
        compare_f16("rope f16", st, out, 4, s4, ref);
        wt_tensor_release(out);
        for (int64_t i = 0; i < 120; i++) /* layer norm over the last 2 axes, no affine */ {
            double mu = 0, var = 0;
            const double *xr = x.v + (i / 40) * 240;
            if (i % 40) continue;
            for (int j = 0; j < 240; j++) mu += xr[j] / 240;
            for (int j = 0; j < 240; j++) var += (xr[j] - mu) * (xr[j] - mu) / 240;
            for (int j = 0; j < 240; j++) ref[(i / 40) * 240 + j] = (xr[j] - mu) / sqrt(var + 1e-5);
        }
        st = wt_layer_norm(xh, 2, NULL, NULL, 1e-5f, &out);
        compare_f16("layer_norm f16 k=2", st, out, 3, s3, ref);
        wt_tensor_release(out);
        for (int64_t rr = 0; rr < 120; rr++)
            for (int o = 0; o < 7; o++) {
                double acc = 0;
                for (int i = 0; i < 6; i++) acc += x.v[rr * 6 + i] * w.v[o * 6 + i];
                ref[rr * 7 + o] = acc;
            }
        int64_t os[3] = {3, 40, 7};
        st = wt_linear(xh, wh, NULL, &out);
        compare_f16("linear f16", st, out, 3, os, ref);
        wt_tensor_release(out);
    }
    free(ref);
    wt_tensor_release(xh), wt_tensor_release(rh), wt_tensor_release(wh);
    drop(&x), drop(&r), drop(&w);
}

int main(int argc, char **argv)
{
    test_run run;
    if (!test_begin(&run, "nn_transformer", argc, argv)) return run.status;
    g_ctx = run.ctx;
    const char *prefix = run.prefix;
    struct { const char *name; void (*fn)(void); } groups[] = {
        {"attention", test_attention}, {"attention tiled", test_attention_tiled}, {"rope", test_rope}, {"linear", test_linear},
        {"softmax", test_softmax}, {"norms", test_norms}, {"f16", test_f16}, {"f16 rows", test_f16_rows},
    };
    for (size_t i = 0; i < sizeof groups / sizeof groups[0]; i++) {
        double t0 = now_s();
        groups[i].fn();
        printf("%s: %s %.2f s\n", prefix, groups[i].name, now_s() - t0);
    }
    CHECK(wt_context_sync(g_ctx) == WT_OK, "final sync: %s", wt_last_error());
    return test_end(&run);
}
