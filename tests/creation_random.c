/* creation_random <cpu|vulkan|gles>: ones, arange, linspace, eye against
 * values computed here; rand, randn and dropout against a Philox4x32-10
 * written here from the published algorithm (checked on the published
 * known-answer vectors, as is the library's own), bit for bit, and on a
 * WebGPU backend also bit for bit against the CPU backend; statistical
 * sanity of the distributions; bad input. */
#include "core/philox.h"
#include "test_util.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static wt_context *g_ctx, *g_cpu; /* g_cpu: a CPU context beside a WebGPU one */
static const char *g_backend;

#define EXPECT_OK(call, what)                                                                     \
    do {                                                                                          \
        wt_status s_ = (call);                                                                    \
        CHECK(s_ == WT_OK, "%s [%s]: %s (%s)", what, g_backend, wt_status_string(s_), wt_last_error()); \
    } while (0)

/* ----------------------------------------------------- Philox, written here */

static uint32_t mulhi(uint32_t a, uint32_t b, uint32_t *lo)
{
    uint64_t p = (uint64_t)a * b;
    *lo = (uint32_t)p;
    return (uint32_t)(p >> 32);
}

/* Salmon et al., "Parallel random numbers: as easy as 1, 2, 3" (SC'11). */
static void philox_ref(const uint32_t in[4], const uint32_t key[2], uint32_t out[4])
{
    uint32_t x[4] = {in[0], in[1], in[2], in[3]}, k[2] = {key[0], key[1]};
    for (int r = 0; r < 10; r++) {
        if (r > 0) k[0] += 0x9E3779B9u, k[1] += 0xBB67AE85u;
        uint32_t lo0, lo1;
        uint32_t hi0 = mulhi(0xD2511F53u, x[0], &lo0), hi1 = mulhi(0xCD9E8D57u, x[2], &lo1);
        uint32_t y[4] = {hi1 ^ x[1] ^ k[0], lo1, hi0 ^ x[3] ^ k[1], lo0};
        memcpy(x, y, sizeof x);
    }
    memcpy(out, x, sizeof x);
}

/* Word i of the stream of seed. */
static uint32_t word(uint64_t seed, int64_t i)
{
    static uint64_t last_seed;
    static int64_t last_block = -1;
    static uint32_t w[4];
    if (i / 4 != last_block || seed != last_seed) {
        const uint32_t key[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)};
        const uint32_t ctr[4] = {(uint32_t)(i / 4), (uint32_t)((uint64_t)(i / 4) >> 32), 0, 0};
        philox_ref(ctr, key, w);
        last_block = i / 4, last_seed = seed;
    }
    return w[i % 4];
}

static void check_kat(void)
{
    /* Random123's kat_vectors: philox4x32 10 rounds, counter, key, output. */
    static const uint32_t kat[3][10] = {
        {0, 0, 0, 0, 0, 0, 0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8},
        {0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0x408f276d, 0x41c83b0e,
         0xa20bc7c6, 0x6d5451fd},
        {0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344, 0xa4093822, 0x299f31d0, 0xd16cfe09, 0x94fdcceb,
         0x5001e420, 0x24126ea1},
    };
    for (int v = 0; v < 3; v++) {
        uint32_t ours[4], lib[4];
        philox_ref(kat[v], kat[v] + 4, ours);
        wt_philox4x32_10(kat[v], kat[v] + 4, lib);
        CHECK(memcmp(ours, kat[v] + 6, 16) == 0, "test's Philox fails known-answer vector %d", v);
        CHECK(memcmp(lib, kat[v] + 6, 16) == 0, "library's Philox fails known-answer vector %d", v);
    }
    /* Through the public API: seed 0 is key (0, 0); elements 0..3 are the
     * first vector's words (top 24 bits). */
    const int64_t four = 4;
    wt_tensor *t = NULL;
    float got[4] = {0};
    EXPECT_OK(wt_rand(g_ctx, WT_F32, 1, &four, 0, &t), "wt_rand seed 0");
    if (t && wt_tensor_read(t, got, sizeof got) == WT_OK)
        for (int k = 0; k < 4; k++)
            CHECK(got[k] == (float)(kat[0][6 + k] >> 8) / 16777216.0f, "wt_rand seed 0 element %d [%s]: %.9g", k,
                  g_backend, (double)got[k]);
    wt_tensor_release(t);
}

/* ------------------------------------------------------------- helpers */

/* Reads t (f32, f16 or i32) as floats; NULL on failure (counted). */
static float *read_floats(const wt_tensor *t)
{
    int64_t n = wt_tensor_numel(t);
    wt_dtype d = wt_tensor_dtype(t);
    size_t es = wt_dtype_size(d);
    void *raw = malloc((size_t)(n ? n : 1) * es);
    float *f = malloc((size_t)(n ? n : 1) * sizeof *f);
    wt_status s = wt_tensor_read(t, raw, (size_t)n * es);
    CHECK(s == WT_OK, "read [%s]: %s", g_backend, wt_last_error());
    if (s != WT_OK) {
        free(raw), free(f);
        return NULL;
    }
    for (int64_t i = 0; i < n; i++) {
        if (d == WT_F32) f[i] = ((float *)raw)[i];
        else if (d == WT_F16) f[i] = (float)test_half_to_double(((uint16_t *)raw)[i]);
        else f[i] = (float)((int32_t *)raw)[i];
    }
    free(raw);
    return f;
}

/* Bit-exact comparison of a result with expected floats. */
static void check_values(const wt_tensor *t, wt_dtype dtype, int ndim, const int64_t *shape, const float *want,
                         const char *what)
{
    char a[128], b[128];
    bool shape_ok = wt_tensor_ndim(t) == ndim && (!ndim || !memcmp(wt_tensor_shape(t), shape, (size_t)ndim * 8));
    CHECK(shape_ok, "%s [%s]: shape %s, want %s", what, g_backend,
          test_shape_str(wt_tensor_ndim(t), wt_tensor_shape(t), a, sizeof a), test_shape_str(ndim, shape, b, sizeof b));
    CHECK(wt_tensor_dtype(t) == dtype, "%s [%s]: dtype %d, want %d", what, g_backend, (int)wt_tensor_dtype(t),
          (int)dtype);
    if (!shape_ok) return;
    float *got = read_floats(t);
    if (!got) return;
    int64_t n = wt_tensor_numel(t), bad = 0, first = -1;
    for (int64_t i = 0; i < n; i++)
        if (memcmp(&got[i], &want[i], 4) != 0 && !(isnan(got[i]) && isnan(want[i])))
            if (bad++ == 0) first = i;
    CHECK(bad == 0, "%s [%s]: %" PRId64 " of %" PRId64 " wrong; element %" PRId64 ": got %.9g, want %.9g", what,
          g_backend, bad, n, first, first >= 0 ? (double)got[first] : 0.0, first >= 0 ? (double)want[first] : 0.0);
    free(got);
}

static float round_to(wt_dtype d, double v)
{
    if (d == WT_I32) return (float)(int32_t)v;
    if (d == WT_F16) return (float)test_half_to_double(test_double_to_half((double)(float)v));
    return (float)v;
}

/* ------------------------------------------------------------ creation */

static void check_arange(double start, double stop, double step, wt_dtype d, int64_t want_len)
{
    char what[128];
    snprintf(what, sizeof what, "arange(%g, %g, %g, dtype %d)", start, stop, step, (int)d);
    wt_tensor *t = NULL;
    wt_status s = wt_arange(g_ctx, start, stop, step, d, &t);
    CHECK(s == WT_OK, "%s [%s]: %s (%s)", what, g_backend, wt_status_string(s), wt_last_error());
    if (s != WT_OK) return;
    float *want = malloc((size_t)(want_len ? want_len : 1) * sizeof *want);
    for (int64_t i = 0; i < want_len; i++) want[i] = round_to(d, start + (double)i * step);
    check_values(t, d, 1, &want_len, want, what);
    free(want);
    wt_tensor_release(t);
}

static void check_linspace(double start, double stop, int64_t num, bool endpoint, wt_dtype d)
{
    char what[128];
    snprintf(what, sizeof what, "linspace(%g, %g, %" PRId64 ", %d, dtype %d)", start, stop, num, (int)endpoint, (int)d);
    wt_tensor *t = NULL;
    wt_status s = wt_linspace(g_ctx, start, stop, num, endpoint, d, &t);
    CHECK(s == WT_OK, "%s [%s]: %s (%s)", what, g_backend, wt_status_string(s), wt_last_error());
    if (s != WT_OK) return;
    float *want = malloc((size_t)(num ? num : 1) * sizeof *want);
    int64_t div = endpoint ? num - 1 : num;
    for (int64_t i = 0; i < num; i++) want[i] = round_to(d, start + (double)i * (div > 0 ? (stop - start) / (double)div : 0));
    if (endpoint && num > 1) want[num - 1] = round_to(d, stop);
    check_values(t, d, 1, &num, want, what);
    free(want);
    wt_tensor_release(t);
}

static void check_eye(int64_t n, int64_t m, int64_t k, wt_dtype d)
{
    char what[128];
    snprintf(what, sizeof what, "eye(%" PRId64 ", %" PRId64 ", %" PRId64 ", dtype %d)", n, m, k, (int)d);
    wt_tensor *t = NULL;
    wt_status s = wt_eye(g_ctx, n, m, k, d, &t);
    CHECK(s == WT_OK, "%s [%s]: %s (%s)", what, g_backend, wt_status_string(s), wt_last_error());
    if (s != WT_OK) return;
    float *want = calloc((size_t)(n * m > 0 ? n * m : 1), sizeof *want);
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < m; j++) want[i * m + j] = j - i == k ? 1.0f : 0.0f;
    const int64_t shape[2] = {n, m};
    check_values(t, d, 2, shape, want, what);
    free(want);
    wt_tensor_release(t);
}

static void expect_code(wt_status got, wt_status want, wt_tensor *out, const char *what)
{
    CHECK(got == want, "%s [%s]: returned %s, want %s", what, g_backend, wt_status_string(got), wt_status_string(want));
    CHECK(got == WT_OK || wt_last_error()[0], "%s [%s]: empty wt_last_error()", what, g_backend);
    CHECK(got == WT_OK || out == NULL, "%s [%s]: *out set on failure", what, g_backend);
    wt_tensor_release(out);
}

static void run_creation(void)
{
    const int64_t shape[3] = {3, 1, 5};
    for (int d = 0; d < 3; d++) {
        const wt_dtype dt = d == 0 ? WT_F32 : d == 1 ? WT_F16 : WT_I32;
        wt_tensor *t = NULL;
        EXPECT_OK(wt_tensor_ones(g_ctx, dt, 3, shape, &t), "wt_tensor_ones");
        float ones[15];
        for (int i = 0; i < 15; i++) ones[i] = 1.0f;
        if (t) check_values(t, dt, 3, shape, ones, "ones");
        wt_tensor_release(t);
        t = NULL;
        EXPECT_OK(wt_tensor_ones(g_ctx, dt, 0, NULL, &t), "wt_tensor_ones 0-d");
        if (t) check_values(t, dt, 0, NULL, ones, "ones 0-d");
        wt_tensor_release(t);
    }
    /* NumPy's lengths: ceil((stop - start) / step), at least 0. */
    check_arange(0, 10, 3, WT_F32, 4);
    check_arange(10, 0, -3, WT_F32, 4);
    check_arange(0, 1, 0.1, WT_F32, 10);
    check_arange(1, 2, 0.3, WT_F32, 4);
    check_arange(5, 5, 1, WT_F32, 0);
    check_arange(0, -1, 1, WT_F32, 0);
    check_arange(-3.5, 1000.25, 0.75, WT_F32, 1339);
    check_arange(-7, 8, 2, WT_I32, 8);
    check_arange(5, -5, -3, WT_I32, 4);
    check_arange(0, 100, 0.37, WT_F16, 271);
    check_arange(0, 100003, 1, WT_F32, 100003);
    check_linspace(0, 1, 5, true, WT_F32);
    check_linspace(0, 1, 5, false, WT_F32);
    check_linspace(2, 3, 1, true, WT_F32);
    check_linspace(2, 3, 0, true, WT_F32);
    check_linspace(1, -1, 7, true, WT_F32);
    check_linspace(-10, 10, 1001, true, WT_F16);
    check_linspace(0, 1, 3, false, WT_F16);
    check_eye(3, 3, 0, WT_F32);
    check_eye(3, 5, 2, WT_F32);
    check_eye(4, 2, -1, WT_F32);
    check_eye(0, 3, 0, WT_F32);
    check_eye(2, 2, 5, WT_F32);
    check_eye(1, 1, 0, WT_F32);
    check_eye(5, 4, 1, WT_I32);
    check_eye(7, 9, -2, WT_F16);

    wt_tensor *o = NULL;
    expect_code(wt_arange(g_ctx, 0, 1, 0, WT_F32, &o), WT_ERR_INVALID_ARGUMENT, o, "arange step 0"), o = NULL;
    expect_code(wt_arange(g_ctx, 0, NAN, 1, WT_F32, &o), WT_ERR_INVALID_ARGUMENT, o, "arange NaN stop"), o = NULL;
    expect_code(wt_arange(g_ctx, 0, INFINITY, 1, WT_F32, &o), WT_ERR_INVALID_ARGUMENT, o, "arange inf stop"), o = NULL;
    expect_code(wt_arange(g_ctx, 0, 1e12, 1, WT_F32, &o), WT_ERR_INVALID_ARGUMENT, o, "arange of 1e12"), o = NULL;
    expect_code(wt_arange(g_ctx, 0, 5, 0.5, WT_I32, &o), WT_ERR_INVALID_ARGUMENT, o, "arange i32, step 0.5"), o = NULL;
    expect_code(wt_arange(NULL, 0, 5, 1, WT_F32, &o), WT_ERR_INVALID_ARGUMENT, o, "arange NULL ctx"), o = NULL;
    expect_code(wt_arange(g_ctx, 0, 5, 1, (wt_dtype)99, &o), WT_ERR_INVALID_ARGUMENT, o, "arange dtype 99"), o = NULL;
    expect_code(wt_arange(g_ctx, 0, 5, 1, WT_BOOL, &o), WT_ERR_UNSUPPORTED, o, "arange bool"), o = NULL;
    CHECK(wt_arange(g_ctx, 0, 5, 1, WT_F32, NULL) == WT_ERR_INVALID_ARGUMENT, "arange NULL out [%s]", g_backend);
    expect_code(wt_linspace(g_ctx, 0, 1, -1, true, WT_F32, &o), WT_ERR_INVALID_ARGUMENT, o, "linspace num -1"), o = NULL;
    expect_code(wt_linspace(g_ctx, NAN, 1, 3, true, WT_F32, &o), WT_ERR_INVALID_ARGUMENT, o, "linspace NaN"), o = NULL;
    expect_code(wt_linspace(g_ctx, 0, 1, 3, true, WT_I32, &o), WT_ERR_UNSUPPORTED, o, "linspace i32"), o = NULL;
    expect_code(wt_eye(g_ctx, -1, 3, 0, WT_F32, &o), WT_ERR_INVALID_ARGUMENT, o, "eye n -1"), o = NULL;
    expect_code(wt_eye(g_ctx, 3, -2, 0, WT_F32, &o), WT_ERR_INVALID_ARGUMENT, o, "eye m -2"), o = NULL;
    expect_code(wt_eye(g_ctx, 1 << 20, 1 << 20, 0, WT_F32, &o), WT_ERR_INVALID_ARGUMENT, o, "eye 2^40 elements"), o = NULL;
}

/* -------------------------------------------------------------- random */

/* The library's value rules, on words of the test's own Philox. */
static float uniform_of(uint32_t w, int bits) { return (float)(w >> (32 - bits)) / (float)(1u << bits); }

/* Exact inverse normal CDF for p in (0, 1): bisection on erfc. */
static double quantile(double p)
{
    double lo = -40, hi = 40;
    for (int i = 0; i < 200 && hi - lo > 1e-15; i++) {
        double mid = 0.5 * (lo + hi);
        if (0.5 * erfc(-mid / sqrt(2.0)) < p) lo = mid;
        else hi = mid;
    }
    return 0.5 * (lo + hi);
}

static void check_random_shape(int ndim, const int64_t *shape, uint64_t seed, bool normal_exact_check)
{
    char sh[128], what[200];
    test_shape_str(ndim, shape, sh, sizeof sh);
    int64_t n = 1;
    for (int i = 0; i < ndim; i++) n *= shape[i];
    float *want = malloc((size_t)(n ? n : 1) * sizeof *want);
    /* rand f32 and f16: exact. */
    for (int h = 0; h < 2; h++) {
        for (int64_t i = 0; i < n; i++) want[i] = uniform_of(word(seed, i), h ? 11 : 24);
        wt_tensor *t = NULL;
        snprintf(what, sizeof what, "rand %s %s seed %" PRIu64, h ? "f16" : "f32", sh, seed);
        EXPECT_OK(wt_rand(g_ctx, h ? WT_F16 : WT_F32, ndim, shape, seed, &t), what);
        if (t) check_values(t, h ? WT_F16 : WT_F32, ndim, shape, want, what);
        wt_tensor_release(t);
    }
    /* randn: within 2e-6 of the exact quantile of (x + 0.5) / 2^32. */
    wt_tensor *t = NULL;
    snprintf(what, sizeof what, "randn %s seed %" PRIu64, sh, seed);
    EXPECT_OK(wt_randn(g_ctx, WT_F32, ndim, shape, seed, &t), what);
    float *got = t ? read_floats(t) : NULL;
    if (got && normal_exact_check) {
        int64_t bad = 0, first = -1;
        double worst = 0;
        /* At most about 50,000 elements: the exact quantile is slow. */
        const int64_t step = n > 50000 ? n / 50000 : 1;
        for (int64_t i = 0; i < n; i += step) {
            uint32_t w = word(seed, i);
            double z = quantile(((double)w + 0.5) / 4294967296.0), err = fabs((double)got[i] - z);
            if (err > worst) worst = err;
            if (!(err <= 2e-6) && bad++ == 0) first = i;
        }
        CHECK(bad == 0, "%s [%s]: %" PRId64 " values off the quantile by more than 2e-6 (first %" PRId64 "); worst %.3g",
              what, g_backend, bad, first, worst);
    }
    free(got);
    wt_tensor_release(t);
    free(want);
}

/* The same seed and shape give the same bits on this backend and the CPU. */
static void check_same_bits_as_cpu(int ndim, const int64_t *shape, uint64_t seed)
{
    if (!g_cpu) return;
    char sh[128];
    test_shape_str(ndim, shape, sh, sizeof sh);
    for (int kind = 0; kind < 3; kind++) {
        wt_tensor *a = NULL, *b = NULL, *xa = NULL, *xb = NULL;
        if (kind == 2) { /* dropout of one input given to both backends */
            EXPECT_OK(wt_randn(g_ctx, WT_F32, ndim, shape, seed + 1, &xa), "randn input");
            EXPECT_OK(wt_randn(g_cpu, WT_F32, ndim, shape, seed + 1, &xb), "randn input (cpu)");
            if (xa && xb) {
                EXPECT_OK(wt_dropout(xa, 0.375f, seed, &a), "dropout");
                EXPECT_OK(wt_dropout(xb, 0.375f, seed, &b), "dropout (cpu)");
            }
        } else {
            wt_status (*fn)(wt_context *, wt_dtype, int, const int64_t *, uint64_t, wt_tensor **) =
                kind == 0 ? wt_rand : wt_randn;
            EXPECT_OK(fn(g_ctx, WT_F32, ndim, shape, seed, &a), "random");
            EXPECT_OK(fn(g_cpu, WT_F32, ndim, shape, seed, &b), "random (cpu)");
        }
        float *ga = a ? read_floats(a) : NULL, *gb = b ? read_floats(b) : NULL;
        if (ga && gb) {
            int64_t n = wt_tensor_numel(a), bad = 0, first = -1;
            for (int64_t i = 0; i < n; i++)
                if (memcmp(&ga[i], &gb[i], 4) && bad++ == 0) first = i;
            CHECK(bad == 0, "%s %s seed %" PRIu64 ": %" PRId64 " elements differ from the CPU's bits (first %" PRId64 ") [%s]",
                  kind == 0 ? "rand" : kind == 1 ? "randn" : "dropout", sh, seed, bad, first, g_backend);
        }
        free(ga), free(gb);
        wt_tensor_release(a), wt_tensor_release(b), wt_tensor_release(xa), wt_tensor_release(xb);
    }
}

static void check_statistics(void)
{
    const int64_t n = 1 << 20;
    wt_tensor *u = NULL, *z = NULL;
    EXPECT_OK(wt_rand(g_ctx, WT_F32, 1, &n, 0x0123456789abcdefull, &u), "rand 2^20");
    EXPECT_OK(wt_randn(g_ctx, WT_F32, 1, &n, 0xfedcba9876543210ull, &z), "randn 2^20");
    float *a = u ? read_floats(u) : NULL, *b = z ? read_floats(z) : NULL;
    if (a && b) {
        double su = 0, su2 = 0, sz = 0, sz2 = 0, sz4 = 0, lo = 1, hi = 0;
        int64_t within1 = 0;
        for (int64_t i = 0; i < n; i++) {
            su += a[i], su2 += (double)a[i] * a[i];
            if (a[i] < lo) lo = a[i];
            if (a[i] > hi) hi = a[i];
            double v = b[i];
            sz += v, sz2 += v * v, sz4 += v * v * v * v;
            within1 += fabs(v) < 1;
        }
        double mu = su / n, vu = su2 / n - mu * mu, mz = sz / n, vz = sz2 / n - mz * mz;
        /* Five standard errors. */
        CHECK(fabs(mu - 0.5) < 5 * sqrt(1.0 / 12 / n), "rand mean %.6f [%s]", mu, g_backend);
        CHECK(fabs(vu - 1.0 / 12) < 5 * sqrt(1.0 / 180 / n), "rand variance %.6f [%s]", vu, g_backend);
        CHECK(lo >= 0 && hi < 1 && lo < 1e-4 && hi > 1 - 1e-4, "rand range [%g, %g] [%s]", lo, hi, g_backend);
        CHECK(fabs(mz) < 5 / sqrt((double)n), "randn mean %.6f [%s]", mz, g_backend);
        CHECK(fabs(vz - 1) < 5 * sqrt(2.0 / n), "randn variance %.6f [%s]", vz, g_backend);
        CHECK(fabs(sz4 / n - 3) < 5 * sqrt(96.0 / n), "randn fourth moment %.5f [%s]", sz4 / n, g_backend);
        double p1 = (double)within1 / n;
        CHECK(fabs(p1 - 0.682689492) < 5 * sqrt(0.2166 / n), "randn P(|z| < 1) %.5f [%s]", p1, g_backend);
    }
    free(a), free(b);
    wt_tensor_release(u), wt_tensor_release(z);
}

static void check_dropout(void)
{
    const int64_t shape[2] = {37, 53};
    const int64_t n = 37 * 53;
    float *x = malloc((size_t)n * sizeof *x), *want = malloc((size_t)n * sizeof *want);
    for (int64_t i = 0; i < n; i++) x[i] = (float)((i * 7919) % 2001 - 1000) / 37.0f;
    wt_tensor *xt = NULL, *xv = NULL, *o = NULL;
    EXPECT_OK(wt_tensor_from_data(g_ctx, WT_F32, 2, shape, x, &xt), "upload");
    if (!xt) return;
    const float ps[] = {0.0f, 0.1f, 0.5f, 0.9f, 1.0f};
    for (int k = 0; k < 5; k++) {
        const float p = ps[k], scale = p < 1 ? 1.0f / (1.0f - p) : 0.0f;
        for (int64_t i = 0; i < n; i++) {
            float u = uniform_of(word(77, i), 24);
            want[i] = u < p ? 0.0f : x[i] * scale;
        }
        char what[64];
        snprintf(what, sizeof what, "dropout p=%g", (double)p);
        EXPECT_OK(wt_dropout(xt, p, 77, &o), what);
        if (o) check_values(o, WT_F32, 2, shape, p == 0 ? x : want, what);
        wt_tensor_release(o), o = NULL;
    }
    /* A transposed view: element i of the logical (row-major) order. */
    EXPECT_OK(wt_transpose(xt, 0, 1, &xv), "transpose");
    if (xv) {
        const int64_t tshape[2] = {53, 37};
        for (int64_t r = 0; r < 53; r++)
            for (int64_t c = 0; c < 37; c++) {
                int64_t i = r * 37 + c;
                want[i] = uniform_of(word(5, i), 24) < 0.25f ? 0.0f : x[c * 53 + r] * (1.0f / 0.75f);
            }
        EXPECT_OK(wt_dropout(xv, 0.25f, 5, &o), "dropout of a view");
        if (o) check_values(o, WT_F32, 2, tshape, want, "dropout of a view");
        wt_tensor_release(o), o = NULL;
    }
    /* f16: the f32 result of the f16 values, rounded once. */
    wt_tensor *h = NULL;
    EXPECT_OK(wt_cast(xt, WT_F16, &h), "cast");
    if (h) {
        for (int64_t i = 0; i < n; i++)
            want[i] = round_to(WT_F16, uniform_of(word(9, i), 24) < 0.5f ? 0.0f : round_to(WT_F16, x[i]) * 2.0f);
        EXPECT_OK(wt_dropout(h, 0.5f, 9, &o), "dropout f16");
        if (o) check_values(o, WT_F16, 2, shape, want, "dropout f16");
        wt_tensor_release(o), o = NULL;
    }
    expect_code(wt_dropout(xt, -0.1f, 1, &o), WT_ERR_INVALID_ARGUMENT, o, "dropout p -0.1"), o = NULL;
    expect_code(wt_dropout(xt, 1.5f, 1, &o), WT_ERR_INVALID_ARGUMENT, o, "dropout p 1.5"), o = NULL;
    expect_code(wt_dropout(xt, NAN, 1, &o), WT_ERR_INVALID_ARGUMENT, o, "dropout p NaN"), o = NULL;
    expect_code(wt_dropout(NULL, 0.5f, 1, &o), WT_ERR_INVALID_ARGUMENT, o, "dropout NULL x"), o = NULL;
    wt_tensor *xi = NULL;
    EXPECT_OK(wt_cast(xt, WT_I32, &xi), "cast i32");
    if (xi) expect_code(wt_dropout(xi, 0.5f, 1, &o), WT_ERR_UNSUPPORTED, o, "dropout of i32"), o = NULL;
    const int64_t two = 2;
    expect_code(wt_rand(g_ctx, WT_I32, 1, &two, 1, &o), WT_ERR_UNSUPPORTED, o, "rand i32"), o = NULL;
    expect_code(wt_randn(NULL, WT_F32, 1, &two, 1, &o), WT_ERR_INVALID_ARGUMENT, o, "randn NULL ctx"), o = NULL;
    const int64_t neg = -2;
    expect_code(wt_rand(g_ctx, WT_F32, 1, &neg, 1, &o), WT_ERR_INVALID_ARGUMENT, o, "rand negative extent"), o = NULL;
    wt_tensor_release(xi), wt_tensor_release(h), wt_tensor_release(xv), wt_tensor_release(xt);
    free(x), free(want);
}

int main(int argc, char **argv)
{
    test_run run;
    if (!test_begin(&run, "creation_random", argc, argv)) return run.status;
    g_ctx = run.ctx;
    g_backend = run.mode;
    if (run.backend != TEST_BACKEND_CPU && test_create_context(TEST_BACKEND_CPU, &g_cpu) != WT_OK)
        return test_end(&run);
    /* Listed in the catalogue (webtensor ops), f32 native. */
    const char *names[] = {"tensor_ones", "arange", "linspace", "eye", "rand", "randn", "dropout"};
    for (int i = 0; i < 7; i++) {
        int op = 0;
        wt_support sup = WT_SUPPORT_NONE;
        while (op < wt_op_count() && strcmp(wt_op_name(op), names[i]) != 0) op++;
        CHECK(op < wt_op_count() && wt_op_support(g_ctx, op, WT_F32, &sup) == WT_OK && sup == WT_SUPPORT_NATIVE,
              "catalogue: %s is not listed, or not native on f32", names[i]);
    }
    check_kat();
    run_creation();
    const int64_t s0[1] = {0}, s1[1] = {7}, s3[3] = {3, 5, 7}, s2[2] = {1029, 917};
    check_random_shape(0, NULL, 1, true);
    check_random_shape(1, s0, 2, true);
    check_random_shape(1, s1, 3, true);
    check_random_shape(3, s3, 0xffffffffffffffffull, true);
    check_random_shape(2, s2, 12345, true);
    check_same_bits_as_cpu(2, s2, 12345);
    check_same_bits_as_cpu(0, NULL, 4);
    /* More than 65,535 workgroups of 256 elements. */
    const int64_t big[1] = {17000003};
    check_random_shape(1, big, 99, false);
    check_statistics();
    check_dropout();
    wt_context_destroy(g_cpu);
    return test_end(&run);
}
