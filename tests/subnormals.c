/* subnormals <cpu|vulkan|gles>: the f32-subnormal behaviour the header
 * states. The CPU backend keeps subnormals (IEEE 754): every result equals
 * the float64 reference rounded to f32. On WebGPU each element is either
 * that IEEE result or the result computed with subnormal inputs and
 * subnormal results taken as zero (WGSL lets a GPU flush), and data
 * movement keeps every bit. The values: the smallest subnormal, a
 * mid-range one, the largest, their negatives, and a normal 1.5 beside
 * them so that a kernel which mixes lanes is seen. */
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 8

static const char *g_mode;
static bool g_cpu;

static float from_bits(uint32_t b)
{
    float f;
    memcpy(&f, &b, sizeof f);
    return f;
}

static uint32_t to_bits(float f)
{
    uint32_t b;
    memcpy(&b, &f, sizeof b);
    return b;
}

static bool is_subnormal(double v)
{
    return v != 0.0 && fabs(v) < 1.17549435082228750797e-38;
}

static double flush(double v) { return is_subnormal((float)v) ? 0.0 * v : v; }

/* f32 rounding of a float64 reference; NaN and infinities pass. */
static bool same_f32(float got, double want, double rel)
{
    if (isnan(want)) return isnan(got);
    if (isinf(want)) return got == (float)want;
    return got == (float)want || fabs((double)got - want) <= rel * fabs(want);
}

typedef double (*ref_fn)(double a, double b);
static double r_add(double a, double b) { return a + b; }
static double r_sub(double a, double b) { return a - b; }
static double r_mul(double a, double b) { return a * b; }
static double r_div(double a, double b) { return a / b; }
static double r_neg(double a, double b) { (void)b; return -a; }
static double r_log(double a, double b) { (void)b; return a < 0 ? NAN : a == 0 ? -INFINITY : log(a); }
static double r_sqrt(double a, double b) { (void)b; return a < 0 ? NAN : sqrt(a); }
static double r_relu(double a, double b) { (void)b; return a < 0 ? 0.0 : a; }
static double r_exp(double a, double b) { (void)b; return exp(a); }

/* Checks one elementwise result: IEEE everywhere, or flush-to-zero on
 * WebGPU (inputs and result flushed). */
static void check_elementwise(const char *what, const float *a, const float *b, const float *got,
                              ref_fn f, double rel)
{
    for (int i = 0; i < N; i++) {
        double ieee = f(a[i], b[i]);
        ieee = (double)(float)ieee; /* the f32 result the CPU must give */
        bool ok = same_f32(got[i], ieee, rel);
        if (!ok && !g_cpu) {
            double flushed = flush(f(flush(a[i]), flush(b[i])));
            ok = same_f32(got[i], flushed, rel) ||
                 (flushed == 0.0 && got[i] == 0.0f); /* either sign of zero */
        }
        CHECK(ok, "%s [%s] element %d: a=%g (0x%08x) b=%g: got %g (0x%08x), IEEE %g%s", what,
              g_mode, i, (double)a[i], to_bits(a[i]), (double)b[i], (double)got[i],
              to_bits(got[i]), ieee, g_cpu ? "" : " (or the flushed result)");
    }
}

typedef wt_status (*bin_op)(const wt_tensor *, const wt_tensor *, wt_tensor **);
typedef wt_status (*un_op)(const wt_tensor *, wt_tensor **);

static bool read_f32(const wt_tensor *t, float *dst, int n, const char *what)
{
    wt_status st = wt_tensor_read(t, dst, (size_t)n * sizeof(float));
    return CHECK(st == WT_OK, "%s [%s]: read: %s", what, g_mode, wt_last_error());
}

int main(int argc, char **argv)
{
    test_run run;
    if (!test_begin(&run, "subnormals", argc, argv)) return run.status;
    g_mode = run.mode;
    g_cpu = run.backend == TEST_BACKEND_CPU;
    wt_context *ctx = run.ctx;

    const float a[N] = {from_bits(0x00000001u), from_bits(0x00012345u), from_bits(0x007fffffu),
                        -from_bits(0x00000001u), -from_bits(0x00400000u), 1.5f,
                        1e-40f, -3e-39f};
    const float b_same[N] = {a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7]};
    const float b_scale[N] = {1.0f, 0.5f, 0.25f, 1.0f, 1024.0f, 1e-38f, 1.0f, 2.0f};
    const int64_t shape[1] = {N};
    wt_tensor *ta = NULL, *tb = NULL, *ts = NULL;
    if (!CHECK(wt_tensor_from_data(ctx, WT_F32, 1, shape, a, &ta) == WT_OK &&
                   wt_tensor_from_data(ctx, WT_F32, 1, shape, b_same, &tb) == WT_OK &&
                   wt_tensor_from_data(ctx, WT_F32, 1, shape, b_scale, &ts) == WT_OK,
               "from_data [%s]: %s", g_mode, wt_last_error()))
        goto done;

    /* Data movement keeps every bit. */
    float got[N];
    if (read_f32(ta, got, N, "read"))
        CHECK(!memcmp(got, a, sizeof a), "read [%s] changed the bits of subnormals", g_mode);
    wt_tensor *c = NULL;
    if (CHECK(wt_copy(ta, &c) == WT_OK, "copy [%s]: %s", g_mode, wt_last_error()) &&
        read_f32(c, got, N, "copy"))
        CHECK(!memcmp(got, a, sizeof a), "copy [%s] changed the bits of subnormals", g_mode);
    wt_tensor_release(c);
    wt_tensor *sl = NULL;
    c = NULL;
    if (CHECK(wt_slice(ta, 0, 0, N, 2, &sl) == WT_OK && wt_contiguous(sl, &c) == WT_OK,
              "strided copy [%s]: %s", g_mode, wt_last_error()) &&
        read_f32(c, got, N / 2, "strided copy")) {
        bool same = true;
        for (int i = 0; i < N / 2; i++)
            same &= to_bits(got[i]) == to_bits(a[2 * i]);
        CHECK(same, "strided copy [%s] changed the bits of subnormals", g_mode);
    }
    wt_tensor_release(c);
    wt_tensor_release(sl);

    /* Binary ops: x op x, and x op a scale that makes or keeps subnormals. */
    struct { const char *name; bin_op op; ref_fn ref; } bins[] = {
        {"add", wt_add, r_add}, {"sub", wt_sub, r_sub}, {"mul", wt_mul, r_mul}, {"div", wt_div, r_div}};
    for (size_t k = 0; k < sizeof bins / sizeof bins[0]; k++) {
        for (int which = 0; which < 2; which++) {
            const float *bv = which ? b_scale : b_same;
            wt_tensor *r = NULL;
            char what[64];
            snprintf(what, sizeof what, "%s(x, %s)", bins[k].name, which ? "scale" : "x");
            if (CHECK(bins[k].op(ta, which ? ts : tb, &r) == WT_OK, "%s [%s]: %s", what, g_mode,
                      wt_last_error()) &&
                read_f32(r, got, N, what))
                check_elementwise(what, a, bv, got, bins[k].ref, 1e-6);
            wt_tensor_release(r);
        }
    }
    /* Unary ops. log of a subnormal was -88.0 instead of -92.1 on lavapipe. */
    struct { const char *name; un_op op; ref_fn ref; double rel; } uns[] = {
        {"neg", wt_neg, r_neg, 0}, {"relu", wt_relu, r_relu, 0}, {"sqrt", wt_sqrt, r_sqrt, 1e-6},
        {"log", wt_log, r_log, 1e-6}, {"exp", wt_exp, r_exp, 1e-6}};
    for (size_t k = 0; k < sizeof uns / sizeof uns[0]; k++) {
        wt_tensor *r = NULL;
        if (CHECK(uns[k].op(ta, &r) == WT_OK, "%s [%s]: %s", uns[k].name, g_mode, wt_last_error()) &&
            read_f32(r, got, N, uns[k].name))
            check_elementwise(uns[k].name, a, b_same, got, uns[k].ref, uns[k].rel);
        wt_tensor_release(r);
    }

    /* Reductions: max/min pick a value (no arithmetic), so they return it
     * unchanged or flushed; the sum of the subnormals alone. */
    wt_tensor *sub = NULL, *r = NULL;
    if (CHECK(wt_slice(ta, 0, 0, 5, 1, &sub) == WT_OK, "slice [%s]", g_mode)) {
        double want = 0;
        for (int i = 0; i < 5; i++)
            want += a[i];
        if (CHECK(wt_sum(sub, 0, NULL, false, &r) == WT_OK, "sum [%s]: %s", g_mode, wt_last_error()) &&
            read_f32(r, got, 1, "sum"))
            CHECK(got[0] == (float)want || (!g_cpu && got[0] == 0.0f),
                  "sum of subnormals [%s]: got %g (0x%08x), want %g", g_mode, (double)got[0],
                  to_bits(got[0]), want);
        wt_tensor_release(r);
        r = NULL;
        if (CHECK(wt_max(sub, 0, NULL, false, &r) == WT_OK, "max [%s]: %s", g_mode, wt_last_error()) &&
            read_f32(r, got, 1, "max"))
            CHECK(got[0] == a[2] || (!g_cpu && got[0] == 0.0f), "max of subnormals [%s]: got %g",
                  g_mode, (double)got[0]);
        wt_tensor_release(r);
        r = NULL;
        if (CHECK(wt_min(sub, 0, NULL, false, &r) == WT_OK, "min [%s]: %s", g_mode, wt_last_error()) &&
            read_f32(r, got, 1, "min"))
            CHECK(got[0] == a[4] || (!g_cpu && got[0] == 0.0f), "min of subnormals [%s]: got %g",
                  g_mode, (double)got[0]);
        wt_tensor_release(r);
    }
    wt_tensor_release(sub);

done:
    wt_tensor_release(ta);
    wt_tensor_release(tb);
    wt_tensor_release(ts);
    return test_end(&run);
}
