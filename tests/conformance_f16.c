/* conformance_f16 <cpu|vulkan|gles>: f16 tensors on a representative subset
 * of ops (cast, add, mul, exp, sum, max, matmul, softmax, views, mixed
 * f16/f32 promotion) against float64 references.
 *
 * Inputs are random f32 values rounded to f16 on the host (a conversion
 * written here, independent of the library's); the references run on
 * those rounded values. An f16 result must be within about one f16
 * rounding (rtol 1e-3) of the reference, plus f32 accumulation error for
 * sums. */
#include "reference.h"
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static wt_context *g_ctx;

/* A random f16 tensor: device tensor and the host values it holds. */
typedef struct f16_input {
    host_tensor host;
    wt_tensor *dev;
} f16_input;

static bool make_input(int ndim, const int64_t *shape, float lo, float hi, f16_input *in)
{
    memset(in, 0, sizeof *in);
    if (!host_alloc(&in->host, ndim, shape)) return false;
    uint16_t *bits = malloc((size_t)(in->host.numel ? in->host.numel : 1) * 2);
    if (!bits) return false;
    for (int64_t i = 0; i < in->host.numel; i++) {
        bits[i] = test_double_to_half(test_rng_uniform(lo, hi));
        in->host.data[i] = (float)test_half_to_double(bits[i]);
    }
    wt_status st = wt_tensor_from_data(g_ctx, WT_F16, ndim, shape, bits, &in->dev);
    free(bits);
    return CHECK(st == WT_OK, "from_data(WT_F16): %s", wt_last_error());
}

static void free_input(f16_input *in)
{
    host_free(&in->host);
    wt_tensor_release(in->dev);
}

/* Reads t (of dtype want_dtype) and compares with ref within rtol of each
 * value plus rtol_terms of its sum of |terms|. */
static void check_against(const char *what, const wt_tensor *t, wt_dtype want_dtype,
                          const ref_result *ref, double rtol, double rtol_terms)
{
    if (!CHECK(t != NULL, "%s: no result: %s", what, wt_last_error())) return;
    CHECK(wt_tensor_dtype(t) == want_dtype, "%s: dtype %d, want %d", what, (int)wt_tensor_dtype(t),
          (int)want_dtype);
    CHECK(wt_tensor_numel(t) == ref->numel, "%s: %lld elements, want %lld", what,
          (long long)wt_tensor_numel(t), (long long)ref->numel);
    if (wt_tensor_numel(t) != ref->numel) return;
    size_t n = (size_t)(ref->numel ? ref->numel : 1);
    double *got = malloc(n * sizeof *got);
    void *raw = malloc(n * 4 + 64);
    memset(raw, 0xa5, n * 4 + 64);
    size_t esize = want_dtype == WT_F16 ? 2 : 4;
    wt_status st = wt_tensor_read(t, raw, n * 4 + 64);
    CHECK(st == WT_OK, "%s: read: %s", what, wt_last_error());
    /* Nothing written past the result. */
    const unsigned char *guard = (const unsigned char *)raw + (size_t)ref->numel * esize;
    bool guard_ok = true;
    for (size_t i = 0; i < 64; i++) guard_ok &= guard[i] == 0xa5;
    CHECK(guard_ok, "%s: the read wrote past the result", what);
    int64_t bad = 0, worst = -1;
    for (int64_t i = 0; i < ref->numel; i++) {
        got[i] = esize == 2 ? test_half_to_double(((uint16_t *)raw)[i]) : ((float *)raw)[i];
        double want = ref->value[i];
        double allowed = 1e-6 + rtol * fabs(want) + rtol_terms * (ref->abs_terms ? ref->abs_terms[i] : 0);
        bool ok = isnan(want) ? isnan(got[i]) : fabs(got[i] - want) <= allowed;
        if (!ok && bad++ == 0) worst = i;
    }
    CHECK(bad == 0, "%s: %lld of %lld values wrong; first at %lld: got %.9g, want %.9g", what,
          (long long)bad, (long long)ref->numel, (long long)worst, worst >= 0 ? got[worst] : 0.0,
          worst >= 0 ? ref->value[worst] : 0.0);
    free(got);
    free(raw);
}

#define F16_RTOL 1e-3 /* f16 keeps 11 bits: one rounding is <= 4.9e-4 */

static double ref_add(double a, double b) { return a + b; }
static double ref_mul(double a, double b) { return a * b; }

static void test_cast_values(void)
{
    /* Rounding edges: ties to even (also among subnormals), overflow, NaN. */
    const float in[] = {0.0f, -0.0f, 1.0f, 65504.0f, 65520.0f, 65519.0f, -1e9f, INFINITY, NAN,
                        0x1p-24f, 0x1p-25f, 0x1.8p-24f, 0x1.4p-23f, 0x1p-14f, 0x1.002p0f, 0x1.006p0f};
    const uint16_t want[] = {0x0000, 0x8000, 0x3c00, 0x7bff, 0x7c00, 0x7bff, 0xfc00, 0x7c00, 0x7e00,
                             0x0001, 0x0000, 0x0002, 0x0002, 0x0400, 0x3c00, 0x3c02};
    int64_t n = (int64_t)(sizeof in / sizeof in[0]);
    wt_tensor *x = NULL, *h = NULL, *back = NULL;
    uint16_t got[32];
    float gotf[32];
    if (!CHECK(wt_tensor_from_data(g_ctx, WT_F32, 1, &n, in, &x) == WT_OK, "from_data") ||
        !CHECK(wt_cast(x, WT_F16, &h) == WT_OK, "cast to f16: %s", wt_last_error()) ||
        !CHECK(wt_tensor_read(h, got, sizeof got) == WT_OK, "read: %s", wt_last_error()))
        goto done;
    for (int64_t i = 0; i < n; i++) {
        bool nan_ok = isnan(in[i]) && (got[i] & 0x7c00) == 0x7c00 && (got[i] & 0x3ff);
        CHECK(got[i] == want[i] || nan_ok, "cast f32 %a -> f16: %04x, want %04x", (double)in[i],
              got[i], want[i]);
    }
    if (CHECK(wt_cast(h, WT_F32, &back) == WT_OK && wt_tensor_read(back, gotf, sizeof gotf) == WT_OK,
              "cast back: %s", wt_last_error()))
        for (int64_t i = 0; i < n; i++) {
            double w = test_half_to_double(want[i]);
            CHECK(isnan(w) ? isnan(gotf[i]) : (double)gotf[i] == w, "cast f16 %04x -> f32: %a", want[i],
                  (double)gotf[i]);
        }
done:
    wt_tensor_release(x);
    wt_tensor_release(h);
    wt_tensor_release(back);
}

/* Every f16 bit pattern, through f32 and back (a 256 x 256 tensor), and
 * read through a transposed view and a strided slice at odd offsets. */
static void test_all_halves_and_views(void)
{
    static uint16_t all[65536], got[65536];
    static float f[65536];
    for (int i = 0; i < 65536; i++) all[i] = (uint16_t)i;
    int64_t shape[2] = {256, 256};
    wt_tensor *h = NULL, *f32 = NULL, *h2 = NULL, *tv = NULL, *sl = NULL, *slc = NULL;
    if (!CHECK(wt_tensor_from_data(g_ctx, WT_F16, 2, shape, all, &h) == WT_OK, "from_data f16") ||
        !CHECK(wt_cast(h, WT_F32, &f32) == WT_OK && wt_tensor_read(f32, f, sizeof f) == WT_OK,
               "f16 -> f32: %s", wt_last_error()) ||
        !CHECK(wt_cast(f32, WT_F16, &h2) == WT_OK && wt_tensor_read(h2, got, sizeof got) == WT_OK,
               "f32 -> f16: %s", wt_last_error()))
        goto done;
    int bad = 0;
    for (int i = 0; i < 65536; i++) {
        double w = test_half_to_double(all[i]);
        bool nan = isnan(w);
        if (nan ? !isnan(f[i]) || got[i] != all[i] : (double)f[i] != w || got[i] != all[i]) bad++;
    }
    CHECK(bad == 0, "%d of 65536 f16 values do not survive f16 -> f32 -> f16", bad);
    /* A transposed view read (gathered by the library) and copied. */
    if (CHECK(wt_transpose(h, 0, 1, &tv) == WT_OK && wt_tensor_read(tv, got, sizeof got) == WT_OK,
              "transposed read: %s", wt_last_error())) {
        bad = 0;
        for (int i = 0; i < 256; i++)
            for (int j = 0; j < 256; j++) bad += got[i * 256 + j] != all[j * 256 + i];
        CHECK(bad == 0, "transposed f16 read: %d wrong", bad);
    }
    /* Columns 3, 6, ..., 249: odd and even element offsets, 83 per row. */
    if (CHECK(wt_slice(h, 1, 3, 250, 3, &sl) == WT_OK && wt_copy(sl, &slc) == WT_OK &&
                  wt_tensor_read(slc, got, sizeof got) == WT_OK,
              "sliced copy: %s", wt_last_error())) {
        bad = 0;
        for (int i = 0; i < 256; i++)
            for (int j = 0; j < 83; j++) bad += got[i * 83 + j] != all[i * 256 + 3 + 3 * j];
        CHECK(bad == 0 && wt_tensor_dtype(slc) == WT_F16, "sliced f16 copy: %d wrong", bad);
    }
done:
    wt_tensor_release(h);
    wt_tensor_release(f32);
    wt_tensor_release(h2);
    wt_tensor_release(tv);
    wt_tensor_release(sl);
    wt_tensor_release(slc);
}

static void test_ops(void)
{
    char err[300];
    ref_result ref;
    f16_input a, b, m1, m2;
    int64_t sa[2] = {37, 53}, sb[1] = {53}, s1[2] = {33, 65}, s2[2] = {65, 17};
    if (!make_input(2, sa, -2.0f, 2.0f, &a) || !make_input(1, sb, -2.0f, 2.0f, &b) ||
        !make_input(2, s1, -1.0f, 1.0f, &m1) || !make_input(2, s2, -1.0f, 1.0f, &m2))
        goto done;
    wt_tensor *r = NULL;
    /* Binary ops with broadcasting. */
    if (ref_binary(ref_add, &a.host, &b.host, &ref, err, sizeof err)) {
        CHECK(wt_add(a.dev, b.dev, &r) == WT_OK, "add: %s", wt_last_error());
        check_against("add", r, WT_F16, &ref, F16_RTOL, 0);
        wt_tensor_release(r), r = NULL;
        ref_free(&ref);
    }
    if (ref_binary(ref_mul, &a.host, &b.host, &ref, err, sizeof err)) {
        CHECK(wt_mul(a.dev, b.dev, &r) == WT_OK, "mul: %s", wt_last_error());
        check_against("mul", r, WT_F16, &ref, F16_RTOL, 0);
        wt_tensor_release(r), r = NULL;
        ref_free(&ref);
    }
    /* Mixed f16 and f32: f32 result, no rounding to f16. */
    {
        wt_tensor *bf = NULL;
        if (CHECK(wt_tensor_from_data(g_ctx, WT_F32, 1, sb, b.host.data, &bf) == WT_OK, "f32 input") &&
            ref_binary(ref_add, &a.host, &b.host, &ref, err, sizeof err)) {
            CHECK(wt_add(a.dev, bf, &r) == WT_OK, "mixed add: %s", wt_last_error());
            check_against("mixed f16 + f32 add", r, WT_F32, &ref, 1e-6, 0);
            wt_tensor_release(r), r = NULL;
            ref_free(&ref);
        }
        wt_tensor_release(bf);
    }
    /* exp of a transposed view. */
    {
        wt_tensor *t = NULL;
        host_tensor ht;
        int64_t ts[2] = {53, 37};
        if (host_alloc(&ht, 2, ts)) {
            for (int i = 0; i < 53; i++)
                for (int j = 0; j < 37; j++) ht.data[i * 37 + j] = a.host.data[j * 53 + i];
            if (CHECK(wt_transpose(a.dev, 0, 1, &t) == WT_OK, "transpose") && ref_unary(exp, &ht, &ref)) {
                CHECK(wt_exp(t, &r) == WT_OK, "exp: %s", wt_last_error());
                check_against("exp of a transposed f16 view", r, WT_F16, &ref, F16_RTOL, 0);
                wt_tensor_release(r), r = NULL;
                ref_free(&ref);
                CHECK(wt_copy(t, &r) == WT_OK, "copy: %s", wt_last_error());
                if (ref_identity(&ht, &ref)) {
                    check_against("copy of a transposed f16 view", r, WT_F16, &ref, 0, 0);
                    ref_free(&ref);
                }
                wt_tensor_release(r), r = NULL;
            }
            host_free(&ht);
        }
        wt_tensor_release(t);
    }
    /* Reductions. */
    int axis1 = 1;
    if (ref_reduce(REF_SUM, &a.host, 1, &axis1, false, &ref, err, sizeof err)) {
        CHECK(wt_sum(a.dev, 1, &axis1, false, &r) == WT_OK, "sum: %s", wt_last_error());
        check_against("sum", r, WT_F16, &ref, F16_RTOL, 1e-5);
        wt_tensor_release(r), r = NULL;
        ref_free(&ref);
    }
    if (ref_reduce(REF_MAX, &a.host, 0, NULL, false, &ref, err, sizeof err)) {
        CHECK(wt_max(a.dev, 0, NULL, false, &r) == WT_OK, "max: %s", wt_last_error());
        check_against("max", r, WT_F16, &ref, 0, 0);
        wt_tensor_release(r), r = NULL;
        ref_free(&ref);
    }
    if (ref_matmul(&m1.host, &m2.host, &ref, err, sizeof err)) {
        CHECK(wt_matmul(m1.dev, m2.dev, &r) == WT_OK, "matmul: %s", wt_last_error());
        check_against("matmul", r, WT_F16, &ref, F16_RTOL, 1e-5);
        wt_tensor_release(r), r = NULL;
        ref_free(&ref);
    }
    if (ref_softmax(&a.host, 0, &ref, err, sizeof err)) {
        CHECK(wt_softmax(a.dev, 0, &r) == WT_OK, "softmax: %s", wt_last_error());
        check_against("softmax (axis 0)", r, WT_F16, &ref, F16_RTOL, 1e-5);
        wt_tensor_release(r), r = NULL;
        ref_free(&ref);
    }
    /* zeros and full of f16. */
    {
        uint16_t v[6] = {1, 1, 1, 1, 1, 1};
        int64_t s23[2] = {2, 3};
        if (CHECK(wt_tensor_zeros(g_ctx, WT_F16, 2, s23, &r) == WT_OK && wt_tensor_read(r, v, sizeof v) == WT_OK,
                  "zeros(f16): %s", wt_last_error()))
            CHECK(!v[0] && !v[1] && !v[2] && !v[3] && !v[4] && !v[5], "zeros(f16) is not all zero");
        wt_tensor_release(r), r = NULL;
        if (CHECK(wt_tensor_full(g_ctx, WT_F16, 2, s23, 1.0 / 3.0, &r) == WT_OK &&
                      wt_tensor_read(r, v, sizeof v) == WT_OK,
                  "full(f16): %s", wt_last_error()))
            CHECK(v[0] == 0x3555 && v[5] == 0x3555, "full(f16, 1/3): %04x, want 3555", v[0]);
        wt_tensor_release(r), r = NULL;
    }
done:
    free_input(&a);
    free_input(&b);
    free_input(&m1);
    free_input(&m2);
}

/* ------------------------------------------------------------------------
 * Unary and binary ops on contiguous f16 operands of one shape: the WebGPU
 * backends compute these natively on packed halves (the CPU through f32).
 * Every result must be within 1 f16 ulp of the f16 rounding of the exact
 * op on the (f16) inputs; 2 ulp for exp, log, sigmoid and tanh, whose f32
 * versions are approximations; 0 for neg, relu and mul (exact in f32). Inputs: half random bit patterns (every
 * magnitude, subnormals, infinities and NaN), half uniform in [-8, 8]. */

static double d_neg(double v) { return -v; }
static double d_relu(double v) { return isnan(v) || v >= 0 ? v : 0.0; }
static double d_sigmoid(double v) { return 1.0 / (1.0 + exp(-v)); }
static double d_sub(double a, double b) { return a - b; }
static double d_div(double a, double b) { return a / b; }

/* Distance in f16 steps; +0 and -0 are one point. */
static int64_t ulp_distance(uint16_t x, uint16_t y)
{
    int64_t ox = (x & 0x8000) ? -(int64_t)(x & 0x7fff) : (int64_t)(x & 0x7fff);
    int64_t oy = (y & 0x8000) ? -(int64_t)(y & 0x7fff) : (int64_t)(y & 0x7fff);
    return ox > oy ? ox - oy : oy - ox;
}

static bool is_half_nan(uint16_t h) { return (h & 0x7fff) > 0x7c00; }

static uint16_t *random_halves(int64_t n)
{
    uint16_t *h = malloc((size_t)(n ? n : 1) * 2);
    for (int64_t i = 0; h && i < n; i++)
        h[i] = (test_rng_next() & 1) ? (uint16_t)(test_rng_next() >> 20)
                                     : test_double_to_half(test_rng_uniform(-8.0f, 8.0f));
    return h;
}

/* Compares n results with want(i), the f16 reference bits. */
static void check_halves(const char *what, int64_t n, const wt_tensor *r, const uint16_t *want, int max_ulp)
{
    if (!CHECK(r != NULL, "%s: no result: %s", what, wt_last_error())) return;
    CHECK(wt_tensor_dtype(r) == WT_F16 && wt_tensor_numel(r) == n, "%s: dtype %d, %lld elements", what,
          (int)wt_tensor_dtype(r), (long long)wt_tensor_numel(r));
    uint16_t *got = malloc((size_t)(n ? n : 1) * 2);
    if (!got || !CHECK(wt_tensor_read(r, got, (size_t)n * 2) == WT_OK, "%s: read: %s", what, wt_last_error())) {
        free(got);
        return;
    }
    int64_t bad = 0, first = -1;
    for (int64_t i = 0; i < n; i++) {
        bool ok = is_half_nan(want[i]) ? is_half_nan(got[i])
                                       : !is_half_nan(got[i]) && ulp_distance(got[i], want[i]) <= max_ulp;
        if (!ok && bad++ == 0) first = i;
    }
    CHECK(bad == 0, "%s (n = %lld): %lld values wrong; first at %lld: got %04x, want %04x", what, (long long)n,
          (long long)bad, (long long)first, first >= 0 ? got[first] : 0, first >= 0 ? want[first] : 0);
    free(got);
}

/* add_only: just wt_add (for lengths where the host reference is slow). */
static void test_native_elementwise_n(int64_t n, bool add_only)
{
    typedef wt_status (*unary_api)(const wt_tensor *, wt_tensor **);
    typedef wt_status (*binary_api)(const wt_tensor *, const wt_tensor *, wt_tensor **);
    static const struct { const char *name; unary_api api; double (*ref)(double); int ulp; } unary[] = {
        {"neg", wt_neg, d_neg, 0},   {"exp", wt_exp, exp, 2},   {"log", wt_log, log, 2},
        {"sqrt", wt_sqrt, sqrt, 1},  {"relu", wt_relu, d_relu, 0}, {"sigmoid", wt_sigmoid, d_sigmoid, 2},
        {"tanh", wt_tanh, tanh, 2},
    };
    /* The f32 product of two halves is exact: mul rounds once, like neg
     * and relu it must be exact. */
    static const struct { const char *name; binary_api api; double (*ref)(double, double); int ulp; } binary[] = {
        {"add", wt_add, ref_add, 1}, {"sub", wt_sub, d_sub, 1}, {"mul", wt_mul, ref_mul, 0}, {"div", wt_div, d_div, 1},
    };
    uint16_t *a = random_halves(n), *b = random_halves(n), *want = malloc((size_t)(n ? n : 1) * 2);
    wt_tensor *ta = NULL, *tb = NULL, *r = NULL;
    if (!CHECK(a && b && want, "out of host memory") ||
        !CHECK(wt_tensor_from_data(g_ctx, WT_F16, 1, &n, a, &ta) == WT_OK &&
                   wt_tensor_from_data(g_ctx, WT_F16, 1, &n, b, &tb) == WT_OK,
               "from_data(WT_F16): %s", wt_last_error()))
        goto done;
    for (size_t k = 0; !add_only && k < sizeof unary / sizeof unary[0]; k++) {
        for (int64_t i = 0; i < n; i++) want[i] = test_double_to_half(unary[k].ref(test_half_to_double(a[i])));
        CHECK(unary[k].api(ta, &r) == WT_OK, "f16 %s: %s", unary[k].name, wt_last_error());
        check_halves(unary[k].name, n, r, want, unary[k].ulp);
        wt_tensor_release(r), r = NULL;
    }
    for (size_t k = 0; k < (add_only ? 1 : sizeof binary / sizeof binary[0]); k++) {
        for (int64_t i = 0; i < n; i++)
            want[i] = test_double_to_half(binary[k].ref(test_half_to_double(a[i]), test_half_to_double(b[i])));
        CHECK(binary[k].api(ta, tb, &r) == WT_OK, "f16 %s: %s", binary[k].name, wt_last_error());
        check_halves(binary[k].name, n, r, want, binary[k].ulp);
        wt_tensor_release(r), r = NULL;
    }
done:
    wt_tensor_release(ta);
    wt_tensor_release(tb);
    free(a);
    free(b);
    free(want);
}

/* Views at even offsets take the native path too, odd ones go through
 * f32: both must give the same values. */
static void test_native_elementwise_views(void)
{
    int64_t n = 301;
    uint16_t *a = random_halves(n), *b = random_halves(n), *want = malloc((size_t)n * 2);
    wt_tensor *ta = NULL, *tb = NULL, *va = NULL, *vb = NULL, *r = NULL;
    if (!CHECK(a && b && want, "out of host memory") ||
        !CHECK(wt_tensor_from_data(g_ctx, WT_F16, 1, &n, a, &ta) == WT_OK &&
                   wt_tensor_from_data(g_ctx, WT_F16, 1, &n, b, &tb) == WT_OK,
               "from_data(WT_F16): %s", wt_last_error()))
        goto done;
    for (int64_t start = 0; start < 4; start++) {
        char what[64];
        wt_status st = wt_slice(ta, 0, 2, 2 + 250, 1, &va);
        if (st == WT_OK) st = wt_slice(tb, 0, start, start + 250, 1, &vb);
        if (!CHECK(st == WT_OK, "slice: %s", wt_last_error())) break;
        for (int64_t i = 0; i < 250; i++)
            want[i] = test_double_to_half(test_half_to_double(a[2 + i]) * test_half_to_double(b[start + i]));
        snprintf(what, sizeof what, "mul of views at offsets 2 and %lld", (long long)start);
        CHECK(wt_mul(va, vb, &r) == WT_OK, "%s: %s", what, wt_last_error());
        check_halves(what, 250, r, want, 0);
        wt_tensor_release(r), r = NULL;
        for (int64_t i = 0; i < 250; i++) want[i] = test_double_to_half(sqrt(test_half_to_double(b[start + i])));
        snprintf(what, sizeof what, "sqrt of a view at offset %lld", (long long)start);
        CHECK(wt_sqrt(vb, &r) == WT_OK, "%s: %s", what, wt_last_error());
        check_halves(what, 250, r, want, 1);
        wt_tensor_release(r), r = NULL;
        wt_tensor_release(va), va = NULL;
        wt_tensor_release(vb), vb = NULL;
    }
done:
    wt_tensor_release(ta);
    wt_tensor_release(tb);
    free(a);
    free(b);
    free(want);
}

/* big: also a length past 65,535 workgroups of 256 words (a grid folded
 * into two dimensions). */
static void test_native_elementwise(bool big)
{
    const int64_t lengths[] = {1, 2, 7, 1029 * 917};
    for (size_t i = 0; i < sizeof lengths / sizeof lengths[0]; i++) test_native_elementwise_n(lengths[i], false);
    if (big) test_native_elementwise_n(2 * 256 * (int64_t)65536 + 3, true);
    test_native_elementwise_views();
}

int main(int argc, char **argv)
{
    test_run run;
    if (!test_begin(&run, "conformance_f16", argc, argv)) return run.status;
    g_ctx = run.ctx;
    const test_backend be = run.backend;
    test_cast_values();
    test_all_halves_and_views();
    test_ops();
    test_native_elementwise(be == TEST_BACKEND_VULKAN);
    return test_end(&run);
}
