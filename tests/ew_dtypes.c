/* ew_dtypes <cpu|vulkan|gles>: the elementwise ops beyond f32 inputs of
 * the conformance suite. Every row of the catalogue (src/core/ops.def)
 * with i32 lanes against an integer reference (wrap-around, Python
 * division), bool inputs and results, promotion between dtypes, where and
 * masked_fill, f16 through every float row (natively on the GPU where the
 * layout allows, else through f32), and the binary float ops on every pair
 * of special values (NaN, +-0, +-inf, 1e30 ...). */
#include "op_table.h"
#include "test_util.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static wt_context *g_ctx;

/* ------------------------------------------------------------ helpers */

static wt_tensor *make(wt_dtype dt, int ndim, const int64_t *shape, const void *data)
{
    wt_tensor *t = NULL;
    wt_status s = wt_tensor_from_data(g_ctx, dt, ndim, shape, data, &t);
    CHECK(s == WT_OK, "from_data %s: %s", wt_dtype_name(dt), wt_last_error());
    return t;
}

/* Reads t as doubles (any dtype), row-major; NULL on failure (counted). */
static double *read_doubles(const wt_tensor *t)
{
    int64_t n = wt_tensor_numel(t);
    size_t es = wt_dtype_size(wt_tensor_dtype(t));
    unsigned char *raw = malloc((size_t)(n ? n : 1) * es);
    double *d = malloc((size_t)(n ? n : 1) * sizeof *d);
    if (!CHECK(wt_tensor_read(t, raw, (size_t)n * es) == WT_OK, "read: %s", wt_last_error())) {
        free(raw);
        free(d);
        return NULL;
    }
    for (int64_t i = 0; i < n; i++) {
        switch (wt_tensor_dtype(t)) {
        case WT_F32: { float f; memcpy(&f, raw + 4 * i, 4); d[i] = f; break; }
        case WT_F16: { uint16_t h; memcpy(&h, raw + 2 * i, 2); d[i] = test_half_to_double(h); break; }
        case WT_I32: { int32_t v; memcpy(&v, raw + 4 * i, 4); d[i] = v; break; }
        case WT_BOOL: d[i] = raw[i]; break;
        }
    }
    free(raw);
    return d;
}

static bool same(double got, double want, double tol)
{
    if (isnan(want) || isnan(got)) return isnan(want) && isnan(got);
    if (isinf(want) || isinf(got)) return got == want;
    return fabs(got - want) <= tol * (1e-6 / 1.2e-5 + fabs(want)) || got == want;
}

/* ------------------------------------------------------- i32 references */

static int32_t wrap(int64_t v) { return (int32_t)(uint32_t)(uint64_t)v; }
static int64_t ri_neg(int64_t x, int64_t p0, int64_t p1) { (void)p0, (void)p1; return wrap(-x); }
static int64_t ri_relu(int64_t x, int64_t p0, int64_t p1) { (void)p0, (void)p1; return x < 0 ? 0 : x; }
static int64_t ri_abs(int64_t x, int64_t p0, int64_t p1) { (void)p0, (void)p1; return wrap(x < 0 ? -x : x); }
static int64_t ri_sign(int64_t x, int64_t p0, int64_t p1) { (void)p0, (void)p1; return (x > 0) - (x < 0); }
static int64_t ri_square(int64_t x, int64_t p0, int64_t p1) { (void)p0, (void)p1; return wrap(x * x); }
static int64_t ri_clamp(int64_t x, int64_t lo, int64_t hi) { return x < lo ? lo : x > hi ? hi : x; }
static int64_t ri_add(int64_t a, int64_t b) { return wrap(a + b); }
static int64_t ri_sub(int64_t a, int64_t b) { return wrap(a - b); }
static int64_t ri_mul(int64_t a, int64_t b) { return wrap(a * b); }
static int64_t ri_maximum(int64_t a, int64_t b) { return a > b ? a : b; }
static int64_t ri_minimum(int64_t a, int64_t b) { return a < b ? a : b; }
/* Python's // and %; NumPy's 0 for a zero divisor; INT32_MIN // -1 wraps. */
static int64_t ri_floor_divide(int64_t a, int64_t b)
{
    if (b == 0) return 0;
    int64_t q = a / b;
    if (q * b != a && ((a < 0) != (b < 0))) q--;
    return wrap(q);
}
static int64_t ri_remainder(int64_t a, int64_t b)
{
    if (b == 0) return 0;
    int64_t r = a % b;
    return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}
static int64_t ri_eq(int64_t a, int64_t b) { return a == b; }
static int64_t ri_ne(int64_t a, int64_t b) { return a != b; }
static int64_t ri_lt(int64_t a, int64_t b) { return a < b; }
static int64_t ri_le(int64_t a, int64_t b) { return a <= b; }
static int64_t ri_gt(int64_t a, int64_t b) { return a > b; }
static int64_t ri_ge(int64_t a, int64_t b) { return a >= b; }

typedef struct i32_row {
    const char *name;
    int arity;
    bool bool_result;
    int64_t (*ref1)(int64_t, int64_t, int64_t);
    int64_t (*ref2)(int64_t, int64_t);
    wt_status (*fn1)(const wt_tensor *, wt_tensor **);
    wt_status (*fn2)(const wt_tensor *, const wt_tensor *, wt_tensor **);
} i32_row;

/* clamp's test bounds: rounded inward to -5 and 7 for i32. */
static wt_status call_clamp_i32(const wt_tensor *x, wt_tensor **out) { return wt_clamp(x, -5.5, 7.9, out); }
#define FN1_0(name) wt_##name
#define FN1_2(name) call_##name##_i32

/* The rows with i32 lanes, from the catalogue: a row whose rule has i32
 * lanes needs its ri_<name> here or this does not compile. */
#define I32_UNARY_NUM(name, np) {#name, 1, false, ri_##name, NULL, FN1_##np(name), NULL},
#define I32_UNARY_FLOAT(name, np)
#define I32_UNARY_ROUND(name, np)
#define I32_UNARY_LOGIC(name, np)
#define I32_BINARY_ARITH(name) {#name, 2, false, NULL, ri_##name, NULL, wt_##name},
#define I32_BINARY_INTDIV(name) {#name, 2, false, NULL, ri_##name, NULL, wt_##name},
#define I32_BINARY_CMP(name) {#name, 2, true, NULL, ri_##name, NULL, wt_##name},
#define I32_BINARY_FLOAT(name)
#define I32_BINARY_LOGIC(name)
static const i32_row k_i32_rows[] = {
#define WT_UNARY(NAME, name, rule, nparams, ...) I32_UNARY_##rule(name, nparams)
#define WT_BINARY(NAME, name, rule, ...) I32_BINARY_##rule(name)
#include "core/ops.def"
};

static const int32_t k_int_pool[] = {0, 1, -1, 2, -2, 3, -3, 7, -7, 100, -100, 46341, -46341, 65536,
                                     INT32_MAX, INT32_MIN, INT32_MAX - 1, INT32_MIN + 1, 5, -5, 8, -8};
#define POOL_N ((int)(sizeof k_int_pool / sizeof k_int_pool[0]))

static int32_t pool_value(uint64_t r) { return (r & 3) ? k_int_pool[(r >> 2) % POOL_N] : (int32_t)(r >> 32) % 1000; }

/* Every pair of pool values, then random ones, through a broadcast and a
 * transposed view. */
static void test_i32_rows(void)
{
    for (size_t k = 0; k < sizeof k_i32_rows / sizeof k_i32_rows[0]; k++) {
        const i32_row *row = &k_i32_rows[k];
        for (int layout = 0; layout < 3; layout++) {
            /* 0: [P*P] x [P*P] every pair; 1: [6,9] x [9]; 2: [9,6].T x 0-d */
            int64_t na = layout == 0 ? POOL_N * POOL_N : 54;
            int32_t *a = malloc((size_t)na * 4), *b = malloc((size_t)na * 4);
            for (int64_t i = 0; i < na; i++) {
                a[i] = layout == 0 ? k_int_pool[i / POOL_N] : pool_value(test_rng_next());
                b[i] = layout == 0 ? k_int_pool[i % POOL_N] : pool_value(test_rng_next());
            }
            int64_t sa[2] = {layout == 2 ? 9 : 6, layout == 2 ? 6 : 9}, sb[1] = {9}, s0[1] = {na};
            wt_tensor *ta = layout == 0 ? make(WT_I32, 1, s0, a) : make(WT_I32, 2, sa, a);
            wt_tensor *tb = layout == 0 ? make(WT_I32, 1, s0, b) : layout == 1 ? make(WT_I32, 1, sb, b)
                                                                             : make(WT_I32, 0, NULL, b);
            wt_tensor *va = NULL, *out = NULL;
            if (layout == 2) wt_transpose(ta, 0, 1, &va);
            const wt_tensor *x = layout == 2 ? va : ta;
            wt_status s = row->arity == 1 ? row->fn1(x, &out) : row->fn2(x, tb, &out);
            if (CHECK(s == WT_OK, "i32 %s (layout %d): %s (%s)", row->name, layout, wt_status_string(s),
                      wt_last_error())) {
                wt_dtype want_dt = row->bool_result ? WT_BOOL : WT_I32;
                CHECK(wt_tensor_dtype(out) == want_dt, "i32 %s: result dtype %s", row->name,
                      wt_dtype_name(wt_tensor_dtype(out)));
                double *got = read_doubles(out);
                int64_t bad = 0, first = -1;
                for (int64_t i = 0; got && i < na; i++) {
                    int64_t ia = layout == 2 ? (i % 9) * 6 + i / 9 : i; /* out [6,9] from a [9,6].T */
                    int64_t xa = a[ia], xb = layout == 0 ? b[i] : layout == 1 ? b[i % 9] : b[0];
                    int64_t want = row->arity == 1 ? row->ref1(xa, -5, 7) : row->ref2(xa, xb);
                    if ((double)want != got[i] && bad++ == 0) first = i;
                }
                if (got)
                    CHECK(bad == 0, "i32 %s (layout %d): %lld wrong; first at %lld: got %.0f", row->name, layout,
                          (long long)bad, (long long)first, first >= 0 ? got[first] : 0.0);
                free(got);
            }
            wt_tensor_release(out);
            wt_tensor_release(va);
            wt_tensor_release(ta);
            wt_tensor_release(tb);
            free(a);
            free(b);
        }
    }
}

/* --------------------------------------------- promotion, bool, refusals */

/* op(a, b) on one-element tensors of the given dtypes holding va and vb:
 * the result's dtype and value. */
static void check_promotion(const char *what, wt_status (*fn)(const wt_tensor *, const wt_tensor *, wt_tensor **),
                            wt_dtype da, double va, wt_dtype db, double vb, wt_status want_st, wt_dtype want_dt,
                            double want)
{
    wt_tensor *a = NULL, *b = NULL, *o = NULL;
    int64_t one[1] = {1};
    wt_tensor_full(g_ctx, da, 1, one, va, &a);
    wt_tensor_full(g_ctx, db, 0, NULL, vb, &b);
    wt_status s = fn(a, b, &o);
    CHECK(s == want_st, "%s(%s, %s): %s, want %s (%s)", what, wt_dtype_name(da), wt_dtype_name(db),
          wt_status_string(s), wt_status_string(want_st), wt_last_error());
    if (s == WT_OK && o) {
        CHECK(wt_tensor_dtype(o) == want_dt, "%s(%s, %s) is %s, want %s", what, wt_dtype_name(da),
              wt_dtype_name(db), wt_dtype_name(wt_tensor_dtype(o)), wt_dtype_name(want_dt));
        double *g = read_doubles(o);
        CHECK(g && same(g[0], want, 1e-7), "%s(%s %g, %s %g) = %g, want %g", what, wt_dtype_name(da), va,
              wt_dtype_name(db), vb, g ? g[0] : 0.0, want);
        free(g);
    }
    if (s != WT_OK) CHECK(o == NULL && wt_last_error()[0], "%s: out set or no message on failure", what);
    wt_tensor_release(o);
    wt_tensor_release(a);
    wt_tensor_release(b);
}

static void check_unary_dtype(const char *what, wt_status (*fn)(const wt_tensor *, wt_tensor **), wt_dtype dt,
                              double v, wt_status want_st, wt_dtype want_dt, double want)
{
    wt_tensor *x = NULL, *o = NULL;
    int64_t shape[2] = {2, 3};
    wt_tensor_full(g_ctx, dt, 2, shape, v, &x);
    wt_status s = fn(x, &o);
    CHECK(s == want_st, "%s(%s): %s, want %s (%s)", what, wt_dtype_name(dt), wt_status_string(s),
          wt_status_string(want_st), wt_last_error());
    if (s == WT_OK && o) {
        CHECK(wt_tensor_dtype(o) == want_dt, "%s(%s) is %s, want %s", what, wt_dtype_name(dt),
              wt_dtype_name(wt_tensor_dtype(o)), wt_dtype_name(want_dt));
        double *g = read_doubles(o);
        CHECK(g && same(g[5], want, 2e-7), "%s(%s %g) = %g, want %g", what, wt_dtype_name(dt), v, g ? g[5] : 0.0,
              want);
        free(g);
    } else if (s != WT_OK) {
        CHECK(o == NULL && strstr(wt_last_error(), what), "%s: message \"%s\"", what, wt_last_error());
    }
    wt_tensor_release(o);
    wt_tensor_release(x);
}

static void test_promotion_and_bools(void)
{
    check_promotion("wt_add", wt_add, WT_I32, 3, WT_F32, 0.25, WT_OK, WT_F32, 3.25);
    check_promotion("wt_add", wt_add, WT_I32, 16777217, WT_F32, 0, WT_OK, WT_F32, 16777216);
    check_promotion("wt_add", wt_add, WT_I32, 3, WT_F16, 0.5, WT_OK, WT_F32, 3.5);
    check_promotion("wt_add", wt_add, WT_F16, 1.5, WT_F32, 0.25, WT_OK, WT_F32, 1.75);
    check_promotion("wt_add", wt_add, WT_BOOL, 1, WT_I32, 41, WT_OK, WT_I32, 42);
    check_promotion("wt_add", wt_add, WT_BOOL, 1, WT_F16, 0.5, WT_OK, WT_F16, 1.5);
    check_promotion("wt_mul", wt_mul, WT_F32, 2.5, WT_BOOL, 0, WT_OK, WT_F32, 0);
    check_promotion("wt_add", wt_add, WT_BOOL, 1, WT_BOOL, 1, WT_ERR_INVALID_ARGUMENT, WT_BOOL, 0);
    check_promotion("wt_maximum", wt_maximum, WT_BOOL, 1, WT_BOOL, 0, WT_ERR_INVALID_ARGUMENT, WT_BOOL, 0);
    check_promotion("wt_div", wt_div, WT_I32, 7, WT_I32, 2, WT_OK, WT_F32, 3.5);
    check_promotion("wt_pow", wt_pow, WT_I32, 3, WT_I32, 4, WT_OK, WT_F32, 81);
    check_promotion("wt_floor_divide", wt_floor_divide, WT_I32, -7, WT_I32, 2, WT_OK, WT_I32, -4);
    check_promotion("wt_remainder", wt_remainder, WT_I32, -7, WT_F32, 2, WT_OK, WT_F32, 1);
    check_promotion("wt_lt", wt_lt, WT_I32, 16777217, WT_F32, 16777216, WT_OK, WT_BOOL, 0); /* compared in f32 */
    check_promotion("wt_lt", wt_lt, WT_I32, 3, WT_I32, 4, WT_OK, WT_BOOL, 1);
    check_promotion("wt_eq", wt_eq, WT_F16, 0.5, WT_F16, 0.5, WT_OK, WT_BOOL, 1);
    check_promotion("wt_eq", wt_eq, WT_BOOL, 1, WT_BOOL, 1, WT_OK, WT_BOOL, 1);
    check_promotion("wt_gt", wt_gt, WT_BOOL, 1, WT_BOOL, 0, WT_OK, WT_BOOL, 1);
    check_promotion("wt_ne", wt_ne, WT_BOOL, 0, WT_I32, 0, WT_OK, WT_BOOL, 0);
    check_promotion("wt_logical_and", wt_logical_and, WT_F32, NAN, WT_I32, 5, WT_OK, WT_BOOL, 1);
    check_promotion("wt_logical_or", wt_logical_or, WT_F32, -0.0, WT_F16, 0, WT_OK, WT_BOOL, 0);
    check_promotion("wt_logical_xor", wt_logical_xor, WT_BOOL, 1, WT_F32, 2, WT_OK, WT_BOOL, 0);
    check_unary_dtype("wt_neg", wt_neg, WT_BOOL, 1, WT_ERR_INVALID_ARGUMENT, WT_BOOL, 0);
    check_unary_dtype("wt_floor", wt_floor, WT_BOOL, 1, WT_ERR_INVALID_ARGUMENT, WT_BOOL, 0);
    check_unary_dtype("wt_floor", wt_floor, WT_I32, -7, WT_OK, WT_I32, -7);
    check_unary_dtype("wt_round", wt_round, WT_I32, INT32_MAX, WT_OK, WT_I32, INT32_MAX);
    check_unary_dtype("wt_sqrt", wt_sqrt, WT_I32, 16, WT_OK, WT_F32, 4);
    check_unary_dtype("wt_sin", wt_sin, WT_BOOL, 1, WT_OK, WT_F32, sin(1.0));
    check_unary_dtype("wt_exp", wt_exp, WT_I32, -2, WT_OK, WT_F32, exp(-2.0));
    check_unary_dtype("wt_logical_not", wt_logical_not, WT_F32, NAN, WT_OK, WT_BOOL, 0);
    check_unary_dtype("wt_logical_not", wt_logical_not, WT_I32, 0, WT_OK, WT_BOOL, 1);
    check_unary_dtype("wt_logical_not", wt_logical_not, WT_F16, 0.5, WT_OK, WT_BOOL, 0);
    check_unary_dtype("wt_abs", wt_abs, WT_F16, -2.5, WT_OK, WT_F16, 2.5);

    /* Logical ops on bool tensors, every combination, with a broadcast. */
    uint8_t av[4] = {0, 0, 1, 1}, bv[2] = {0, 1};
    int64_t sa[2] = {2, 2}, sb[1] = {2};
    wt_tensor *a = make(WT_BOOL, 2, sa, av), *b = make(WT_BOOL, 1, sb, bv);
    struct { const char *name; wt_status (*fn)(const wt_tensor *, const wt_tensor *, wt_tensor **); int want[4]; } L[] = {
        {"logical_and", wt_logical_and, {0, 0, 0, 1}}, {"logical_or", wt_logical_or, {0, 1, 1, 1}},
        {"logical_xor", wt_logical_xor, {0, 1, 1, 0}}, {"eq", wt_eq, {1, 0, 0, 1}}, {"lt", wt_lt, {0, 1, 0, 0}},
        {"ge", wt_ge, {1, 0, 1, 1}}};
    for (size_t k = 0; a && b && k < sizeof L / sizeof L[0]; k++) {
        wt_tensor *o = NULL;
        if (!CHECK(L[k].fn(a, b, &o) == WT_OK, "%s of bools: %s", L[k].name, wt_last_error())) continue;
        uint8_t g[4] = {9, 9, 9, 9};
        CHECK(wt_tensor_dtype(o) == WT_BOOL && wt_tensor_read(o, g, 4) == WT_OK, "%s: bool result", L[k].name);
        for (int i = 0; i < 4; i++)
            CHECK(g[i] == L[k].want[i], "%s of bools [%d]: %d, want %d", L[k].name, i, g[i], L[k].want[i]);
        wt_tensor_release(o);
    }
    wt_tensor *o = NULL;
    CHECK(a && wt_logical_not(a, &o) == WT_OK, "logical_not of bools");
    uint8_t g[4];
    CHECK(o && wt_tensor_read(o, g, 4) == WT_OK && g[0] == 1 && g[1] == 1 && g[2] == 0 && g[3] == 0,
          "logical_not of bools");
    wt_tensor_release(o);
    wt_tensor_release(a);
    wt_tensor_release(b);
}

/* ---------------------------------------------------- where, masked_fill */

static void test_where(void)
{
    /* mask [4,1] x a [1,5] (i32) x b 0-d (i32) -> [4,5]. */
    uint8_t mv[4] = {1, 0, 7, 0};
    int32_t av[5] = {INT32_MIN, -1, 0x7fc00001, 5, INT32_MAX};
    int32_t bv[1] = {-42};
    int64_t sm[2] = {4, 1}, sa[2] = {1, 5};
    wt_tensor *m = make(WT_BOOL, 2, sm, mv), *a = make(WT_I32, 2, sa, av), *b = make(WT_I32, 0, NULL, bv), *o = NULL;
    if (CHECK(wt_where(m, a, b, &o) == WT_OK, "where i32: %s", wt_last_error())) {
        int32_t g[20];
        CHECK(wt_tensor_dtype(o) == WT_I32 && wt_tensor_ndim(o) == 2 && wt_tensor_shape(o)[0] == 4 &&
                  wt_tensor_shape(o)[1] == 5 && wt_tensor_read(o, g, sizeof g) == WT_OK,
              "where i32: [4,5] i32");
        for (int i = 0; i < 20; i++)
            CHECK(g[i] == (mv[i / 5] ? av[i % 5] : bv[0]), "where i32 [%d] = %d", i, g[i]);
    }
    wt_tensor_release(o);
    o = NULL;
    /* f32 values (a NaN payload kept), b a transposed view; f16; bool. */
    float fa[6] = {1.5f, -0.0f, INFINITY, 0, 0, 0}, fb[6] = {10, 20, 30, 40, 50, 60};
    uint32_t nan_bits = 0x7fa00001u;
    memcpy(&fa[3], &nan_bits, 4);
    int64_t s23[2] = {2, 3}, s32[2] = {3, 2}, s3[1] = {3};
    uint8_t m3[3] = {1, 0, 1};
    wt_tensor *tfa = make(WT_F32, 2, s23, fa), *tfb = make(WT_F32, 2, s32, fb), *tfbt = NULL, *m1 = make(WT_BOOL, 1, s3, m3);
    wt_transpose(tfb, 0, 1, &tfbt);
    if (CHECK(tfbt && wt_where(m1, tfa, tfbt, &o) == WT_OK, "where f32: %s", wt_last_error())) {
        uint32_t g[6], wa[6], wb[6];
        memcpy(wa, fa, sizeof wa);
        memcpy(wb, fb, sizeof wb);
        CHECK(wt_tensor_read(o, g, sizeof g) == WT_OK, "read");
        for (int i = 0; i < 6; i++) {
            int r = i / 3, c = i % 3;
            uint32_t want = m3[c] ? wa[i] : wb[c * 2 + r];
            CHECK(g[i] == want, "where f32 [%d]: bits %08x, want %08x", i, g[i], want);
        }
    }
    wt_tensor_release(o);
    o = NULL;
    wt_tensor *h = NULL, *hb = NULL;
    wt_cast(tfa, WT_F16, &h);
    wt_cast(tfbt, WT_F16, &hb);
    if (CHECK(h && hb && wt_where(m1, h, hb, &o) == WT_OK && wt_tensor_dtype(o) == WT_F16, "where f16: %s",
              wt_last_error())) {
        double *g = read_doubles(o);
        for (int i = 0; g && i < 6; i++) {
            int r = i / 3, c = i % 3;
            double want = m3[c] ? (double)fa[i] : (double)fb[c * 2 + r];
            CHECK(same(g[i], want, 0), "where f16 [%d]: %g, want %g", i, g[i], want);
        }
        free(g);
    }
    wt_tensor_release(o);
    o = NULL;
    /* Mixed value dtypes promote (i32 and f32: f32). */
    CHECK(wt_where(m1, b, tfa, &o) == WT_OK && wt_tensor_dtype(o) == WT_F32, "where(i32, f32) is f32: %s",
          wt_last_error());
    wt_tensor_release(o);
    o = NULL;
    /* Refusals. */
    CHECK(wt_where(tfa, tfa, tfa, &o) == WT_ERR_INVALID_ARGUMENT && !o, "where with an f32 mask");
    CHECK(wt_where(m, tfa, tfa, &o) == WT_ERR_SHAPE && !o, "where with shapes [4,1], [2,3]");
    CHECK(wt_where(NULL, tfa, tfa, &o) == WT_ERR_INVALID_ARGUMENT && !o, "where with a NULL mask");

    /* masked_fill: x a transposed f32 view, a broadcast mask row. */
    if (CHECK(wt_masked_fill(tfbt, m1, -INFINITY, &o) == WT_OK, "masked_fill f32: %s", wt_last_error())) {
        float g[6];
        CHECK(wt_tensor_read(o, g, sizeof g) == WT_OK, "read");
        for (int i = 0; i < 6; i++) {
            int r = i / 3, c = i % 3;
            float want = m3[c] ? -INFINITY : fb[c * 2 + r];
            CHECK(g[i] == want, "masked_fill f32 [%d]: %g, want %g", i, (double)g[i], (double)want);
        }
    }
    wt_tensor_release(o);
    o = NULL;
    int64_t s4[1] = {4};
    int32_t iv[4] = {1, 2, 3, 4};
    uint8_t mk[4] = {0, 1, 1, 0};
    wt_tensor *ti = make(WT_I32, 1, s4, iv), *mm = make(WT_BOOL, 1, s4, mk), *tb = NULL;
    if (CHECK(wt_masked_fill(ti, mm, 7.9, &o) == WT_OK, "masked_fill i32: %s", wt_last_error())) {
        int32_t g[4];
        CHECK(wt_tensor_read(o, g, sizeof g) == WT_OK && g[0] == 1 && g[1] == 7 && g[2] == 7 && g[3] == 4,
              "masked_fill i32: %d %d %d %d", g[0], g[1], g[2], g[3]);
    }
    wt_tensor_release(o);
    o = NULL;
    CHECK(wt_masked_fill(ti, mm, NAN, &o) == WT_ERR_INVALID_ARGUMENT && !o, "masked_fill i32 with NaN");
    CHECK(wt_masked_fill(ti, ti, 1, &o) == WT_ERR_INVALID_ARGUMENT && !o, "masked_fill with an i32 mask");
    CHECK(wt_masked_fill(ti, m, 1, &o) == WT_ERR_SHAPE && !o, "masked_fill with a mask of another shape");
    wt_cast(ti, WT_BOOL, &tb);
    if (CHECK(tb && wt_masked_fill(tb, mm, 0, &o) == WT_OK, "masked_fill bool: %s", wt_last_error())) {
        uint8_t g[4];
        CHECK(wt_tensor_read(o, g, 4) == WT_OK && g[0] == 1 && g[1] == 0 && g[2] == 0 && g[3] == 1,
              "masked_fill bool");
    }
    wt_tensor_release(o);
    o = NULL;
    wt_tensor *th = NULL;
    wt_cast(ti, WT_F16, &th);
    if (CHECK(th && wt_masked_fill(th, mm, 1.0 / 3.0, &o) == WT_OK && wt_tensor_dtype(o) == WT_F16,
              "masked_fill f16: %s", wt_last_error())) {
        double *g = read_doubles(o);
        CHECK(g && g[0] == 1 && g[1] == test_half_to_double(test_double_to_half(1.0 / 3.0)) && g[3] == 4,
              "masked_fill f16 rounds value to f16");
        free(g);
    }
    wt_tensor_release(o);
    wt_tensor *list[] = {m, a, b, tfa, tfb, tfbt, m1, h, hb, ti, mm, tb, th};
    for (size_t i = 0; i < sizeof list / sizeof list[0]; i++) wt_tensor_release(list[i]);
}

/* ---------------------------------------------------------------- f16 */

static int64_t half_ulps(uint16_t x, uint16_t y)
{
    int64_t a = (x & 0x8000) ? -(int64_t)(x & 0x7fff) : (int64_t)x;
    int64_t b = (y & 0x8000) ? -(int64_t)(y & 0x7fff) : (int64_t)y;
    return a > b ? a - b : b - a;
}

/* Every float row on f16 inputs: [301] contiguous (the GPU's native f16
 * kernels) and [13,17].T (through f32), against the reference rounded to
 * f16, within one f16 ulp (exact rows: none). */
static void test_f16_rows(void)
{
    for (int k = 0; k < g_nops; k++) {
        const op_entry *op = &g_ops[k];
        if ((op->kind != OP_UNARY && op->kind != OP_BINARY) || op->out_bool) continue;
        for (int layout = 0; layout < 2; layout++) {
            int64_t n = layout == 0 ? 301 : 221, shape[2] = {13, 17};
            uint16_t *hv[2];
            for (int j = 0; j < 2; j++) {
                hv[j] = malloc((size_t)n * 2);
                float lo = j && op->kind == OP_BINARY ? op->lo2 : op->lo, hi = j && op->kind == OP_BINARY ? op->hi2 : op->hi;
                for (int64_t i = 0; i < n; i++) {
                    double v = (op->kind == OP_UNARY && op->nspecial && i % 5 == 0) ? op->special[(i / 5) % op->nspecial]
                                                                                     : test_rng_uniform(lo, hi);
                    hv[j][i] = test_double_to_half(v);
                }
            }
            wt_tensor *t[2] = {NULL, NULL}, *v[2] = {NULL, NULL}, *o = NULL;
            for (int j = 0; j < (op->kind == OP_UNARY ? 1 : 2); j++) {
                t[j] = layout == 0 ? make(WT_F16, 1, &n, hv[j]) : make(WT_F16, 2, shape, hv[j]);
                if (layout == 1) wt_transpose(t[j], 0, 1, &v[j]);
                else { v[j] = t[j]; wt_tensor_retain(t[j]); }
            }
            wt_status s = op->kind == OP_UNARY ? op->unary(v[0], &o) : op->binary(v[0], v[1], &o);
            if (CHECK(s == WT_OK && wt_tensor_dtype(o) == WT_F16, "f16 %s (layout %d): %s", op->name, layout,
                      wt_last_error())) {
                uint16_t *g = malloc((size_t)n * 2);
                CHECK(wt_tensor_read(o, g, (size_t)n * 2) == WT_OK, "read");
                int64_t bad = 0, first = -1;
                uint16_t want_first = 0;
                for (int64_t i = 0; i < n; i++) {
                    int64_t src = layout == 0 ? i : (i % 13) * 17 + i / 13; /* out [17,13] of x [13,17].T */
                    double x = test_half_to_double(hv[0][src]), y = test_half_to_double(hv[1][src]);
                    uint16_t want = test_double_to_half(op->kind == OP_UNARY ? op->ref1(x) : op->ref2(x, y));
                    bool nan_w = (want & 0x7fff) > 0x7c00, nan_g = (g[i] & 0x7fff) > 0x7c00;
                    bool ok = nan_w || nan_g ? nan_w && nan_g
                                             : half_ulps(g[i], want) <= (op->tol == TOL_EXACT ? 0 : 1) ||
                                                   ((g[i] & 0x7fff) == 0 && (want & 0x7fff) == 0);
                    /* A result that is tiny in f32 may flush on a GPU: allow
                     * the f32 test's absolute error. */
                    if (!ok && fabs(test_half_to_double(g[i]) - test_half_to_double(want)) <= 1e-6) ok = true;
                    if (!ok && bad++ == 0) first = i, want_first = want;
                }
                CHECK(bad == 0, "f16 %s (layout %d): %lld of %lld wrong; first at %lld: got %04x want %04x",
                      op->name, layout, (long long)bad, (long long)n, (long long)first,
                      first >= 0 ? g[first] : 0, want_first);
                free(g);
            }
            wt_tensor_release(o);
            for (int j = 0; j < 2; j++) {
                wt_tensor_release(t[j]);
                wt_tensor_release(v[j]);
                free(hv[j]);
            }
        }
    }
}

/* ------------------------------------------------ special-value pairs */

static const float k_specials[] = {0.0f, -0.0f, 1.0f, -1.0f, 0.5f, -2.5f, 2.0f, 3.0f, -7.0f,
                                   1e30f, -1e30f, INFINITY, -INFINITY, NAN};
#define NSPEC ((int)(sizeof k_specials / sizeof k_specials[0]))

/* The binary float rows on every pair of special values. Divisors of 0,
 * +-inf or beyond 2^126 are left out for div (WGSL leaves its division
 * undefined there; the CPU gives IEEE results). */
static void test_special_pairs(void)
{
    float av[NSPEC * NSPEC], bv[NSPEC * NSPEC];
    for (int i = 0; i < NSPEC * NSPEC; i++) {
        av[i] = k_specials[i / NSPEC];
        bv[i] = k_specials[i % NSPEC];
    }
    int64_t n = NSPEC * NSPEC;
    wt_tensor *a = make(WT_F32, 1, &n, av), *b = make(WT_F32, 1, &n, bv);
    for (int k = 0; a && b && k < g_nops; k++) {
        const op_entry *op = &g_ops[k];
        if (op->kind != OP_BINARY) continue;
        wt_tensor *o = NULL;
        if (!CHECK(op->binary(a, b, &o) == WT_OK, "%s of special pairs: %s", op->name, wt_last_error())) continue;
        double *g = read_doubles(o);
        int bad = 0;
        for (int i = 0; g && i < n; i++) {
            if (!strcmp(op->name, "div") && (bv[i] == 0 || isinf(bv[i]) || fabsf(bv[i]) > 1e30f)) continue;
            double want = op->ref2(av[i], bv[i]);
            if (!op->out_bool) want = (double)(float)want;
            double tol = op->tol == TOL_EXACT || op->out_bool ? 0 : 1.2e-5;
            if (!same(g[i], want, tol) && bad++ < 3)
                CHECK(false, "%s(%g, %g) = %.9g, want %.9g", op->name, (double)av[i], (double)bv[i], g[i], want);
        }
        CHECK(bad == 0, "%s: %d special pairs wrong", op->name, bad);
        free(g);
        wt_tensor_release(o);
    }
    wt_tensor_release(a);
    wt_tensor_release(b);
}

/* ------------------------------------------------------- scalar path */

/* wt_<op>_scalar(a, s) against wt_<op>(a, 0-d tensor of s's weak dtype):
 * the same dtype and the same values, for every binary row, on a
 * transposed f32 view, i32 with an integer and a fractional scalar, bool
 * and f16 tensors. */
static void test_scalar_path(void)
{
    int64_t shape[2] = {7, 5};
    for (int k = 0; k < g_nops; k++) {
        const op_entry *op = &g_ops[k];
        if (op->kind != OP_BINARY) continue;
        float fv[35];
        for (int i = 0; i < 35; i++) fv[i] = test_rng_uniform(op->lo, op->hi);
        int32_t iv[35];
        uint8_t bv[35];
        for (int i = 0; i < 35; i++) iv[i] = (i * 7) % 11 - 5, bv[i] = (uint8_t)(i % 3 == 0);
        wt_tensor *f = make(WT_F32, 2, shape, fv), *ft = NULL, *ti = make(WT_I32, 2, shape, iv);
        wt_tensor *tb = make(WT_BOOL, 2, shape, bv), *th = NULL;
        wt_transpose(f, 0, 1, &ft);
        wt_cast(f, WT_F16, &th);
        struct { const wt_tensor *a; double s; wt_dtype s_dt; } cases[] = {
            {ft, 0.5 * (op->lo2 + op->hi2) + 0.37, WT_F32}, {ft, NAN, WT_F32}, {ft, -2.0, WT_F32},
            {ti, 3.0, WT_I32}, {ti, -2.5, WT_F32}, {tb, 1.0, WT_I32}, {tb, 0.25, WT_F32}, {th, 1.5, WT_F16}};
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
            wt_tensor *sv = NULL, *r1 = NULL, *r2 = NULL;
            if (!cases[c].a) continue;
            wt_tensor_full(g_ctx, cases[c].s_dt, 0, NULL, cases[c].s, &sv);
            wt_status s1 = op->binary_scalar(cases[c].a, cases[c].s, &r1);
            wt_status s2 = op->binary(cases[c].a, sv, &r2);
            CHECK(s1 == s2, "%s_scalar(%s, %g): %s, with a 0-d tensor %s", op->name,
                  wt_dtype_name(wt_tensor_dtype(cases[c].a)), cases[c].s, wt_status_string(s1), wt_status_string(s2));
            if (s1 == WT_OK && s2 == WT_OK) {
                CHECK(wt_tensor_dtype(r1) == wt_tensor_dtype(r2), "%s_scalar dtype %s, with a tensor %s", op->name,
                      wt_dtype_name(wt_tensor_dtype(r1)), wt_dtype_name(wt_tensor_dtype(r2)));
                double *g1 = read_doubles(r1), *g2 = read_doubles(r2);
                int bad = 0;
                for (int i = 0; g1 && g2 && i < 35; i++) bad += !same(g1[i], g2[i], 0);
                CHECK(bad == 0, "%s_scalar(%s, %g): %d values differ from the 0-d tensor's", op->name,
                      wt_dtype_name(wt_tensor_dtype(cases[c].a)), cases[c].s, bad);
                free(g1);
                free(g2);
            }
            wt_tensor_release(sv);
            wt_tensor_release(r1);
            wt_tensor_release(r2);
        }
        wt_tensor *o = NULL;
        CHECK(op->binary_scalar(NULL, 1.0, &o) == WT_ERR_INVALID_ARGUMENT && !o, "%s_scalar(NULL)", op->name);
        CHECK(op->binary_scalar(f, 1.0, NULL) == WT_ERR_INVALID_ARGUMENT, "%s_scalar(out NULL)", op->name);
        wt_tensor *list[] = {f, ft, ti, tb, th};
        for (int i = 0; i < 5; i++) wt_tensor_release(list[i]);
    }
}

/* ------------------------------------------------------------- misuse */

/* Every elementwise row: NULLs, shapes that do not broadcast, tensors of
 * two contexts; and the catalogue's queries. */
static void test_misuse(bool gpu)
{
    wt_context *other = NULL;
    wt_context_options o;
    wt_context_options_init(&o);
    o.backend = WT_BACKEND_CPU;
    CHECK(wt_context_create(&o, &other) == WT_OK, "a second (CPU) context");
    int64_t s23[2] = {2, 3}, s32[2] = {3, 2};
    wt_tensor *a = NULL, *b = NULL, *f = NULL;
    wt_tensor_full(g_ctx, WT_F32, 2, s23, 1.0, &a);
    wt_tensor_full(g_ctx, WT_F32, 2, s32, 1.0, &b);
    if (other) wt_tensor_full(other, WT_F32, 2, s23, 1.0, &f);
    for (int k = 0; a && b && k < g_nops; k++) {
        const op_entry *op = &g_ops[k];
        wt_tensor *out = (wt_tensor *)&out;
        if (op->kind == OP_UNARY) {
            CHECK(op->unary(NULL, &out) == WT_ERR_INVALID_ARGUMENT && out == NULL, "%s(NULL)", op->name);
            CHECK(op->unary(a, NULL) == WT_ERR_INVALID_ARGUMENT, "%s(out NULL)", op->name);
        } else if (op->kind == OP_BINARY) {
            CHECK(op->binary(NULL, a, &out) == WT_ERR_INVALID_ARGUMENT && out == NULL, "%s(NULL, b)", op->name);
            out = (wt_tensor *)&out;
            CHECK(op->binary(a, NULL, &out) == WT_ERR_INVALID_ARGUMENT && out == NULL, "%s(a, NULL)", op->name);
            CHECK(op->binary(a, a, NULL) == WT_ERR_INVALID_ARGUMENT, "%s(out NULL)", op->name);
            out = (wt_tensor *)&out;
            wt_status s = op->binary(a, b, &out);
            CHECK(s == WT_ERR_SHAPE && out == NULL && strstr(wt_last_error(), op->name),
                  "%s([2,3], [3,2]): %s \"%s\"", op->name, wt_status_string(s), wt_last_error());
            if (f) {
                out = (wt_tensor *)&out;
                CHECK(op->binary(a, f, &out) == WT_ERR_INVALID_ARGUMENT && out == NULL, "%s of two contexts",
                      op->name);
            }
        }
    }
    wt_tensor *out = NULL;
    CHECK(a && wt_clamp(a, NAN, 1.0, &out) == WT_ERR_INVALID_ARGUMENT && !out, "clamp with a NaN bound");
    wt_tensor_release(a);
    wt_tensor_release(b);
    wt_tensor_release(f);
    wt_context_destroy(other);

    /* The catalogue. */
    wt_support sup = WT_SUPPORT_NATIVE;
    CHECK(wt_op_support(NULL, 0, WT_F32, &sup) == WT_ERR_INVALID_ARGUMENT && sup == WT_SUPPORT_NONE,
          "wt_op_support(NULL ctx)");
    CHECK(wt_op_support(g_ctx, -1, WT_F32, &sup) == WT_ERR_INVALID_ARGUMENT, "wt_op_support(op -1)");
    CHECK(wt_op_support(g_ctx, wt_op_count(), WT_F32, &sup) == WT_ERR_INVALID_ARGUMENT, "wt_op_support(op count)");
    CHECK(wt_op_support(g_ctx, 0, (wt_dtype)9, &sup) == WT_ERR_INVALID_ARGUMENT, "wt_op_support(dtype 9)");
    CHECK(wt_op_support(g_ctx, 0, WT_F32, NULL) == WT_ERR_INVALID_ARGUMENT, "wt_op_support(out NULL)");
    CHECK(wt_op_name(-1) == NULL && wt_op_name(wt_op_count()) == NULL && wt_op_family(-1) == NULL,
          "names out of range");
    int add = -1;
    for (int i = 0; i < wt_op_count(); i++) {
        CHECK(wt_op_name(i) && wt_op_name(i)[0] && wt_op_family(i), "op %d has a name and a family", i);
        for (int j = 0; j < i; j++)
            CHECK(strcmp(wt_op_name(i), wt_op_name(j)) != 0, "op name %s repeats", wt_op_name(i));
        if (!strcmp(wt_op_name(i), "add")) add = i;
    }
    /* Every elementwise row of the tests is in the catalogue. */
    for (int k = 0; k < g_nops; k++) {
        bool found = false;
        for (int i = 0; i < wt_op_count(); i++) found |= !strcmp(wt_op_name(i), g_ops[k].name);
        CHECK(found, "%s is not in the catalogue", g_ops[k].name);
    }
    CHECK(add >= 0 && wt_op_support(g_ctx, add, WT_F32, &sup) == WT_OK && sup == WT_SUPPORT_NATIVE, "add f32 native");
    CHECK(wt_op_support(g_ctx, add, WT_I32, &sup) == WT_OK && sup == WT_SUPPORT_NATIVE, "add i32 native");
    CHECK(wt_op_support(g_ctx, add, WT_BOOL, &sup) == WT_OK && sup == WT_SUPPORT_NONE, "add of bools refused");
    CHECK(wt_op_support(g_ctx, add, WT_F16, &sup) == WT_OK &&
              sup == WT_SUPPORT_NATIVE,
          "add f16: %d", (int)sup);
}

int main(int argc, char **argv)
{
    test_run run;
    if (!test_begin(&run, "ew_dtypes", argc, argv)) return run.status;
    g_ctx = run.ctx;
    const test_backend be = run.backend;
    test_i32_rows();
    test_promotion_and_bools();
    test_where();
    test_f16_rows();
    test_special_pairs();
    test_scalar_path();
    test_misuse(be != TEST_BACKEND_CPU);
    wt_status s = wt_context_sync(g_ctx);
    CHECK(s == WT_OK, "sync: %s", wt_last_error());
    test_check_nothing_alive(g_ctx);
    return test_end(&run);
}
