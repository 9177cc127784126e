/* dtypes <cpu|vulkan|gles>: i32 and bool tensors. Round trips bit for bit
 * (i32 patterns that are NaNs or subnormals as floats included), zeros and
 * full, views read back and copied, every cast between f32, f16, i32 and
 * bool on special values against references computed here, storage sizes,
 * and the refusals of ops that take floating point only. */
#include "test_util.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static wt_context *g_ctx;

static uint32_t f32_bits(float f)
{
    uint32_t b;
    memcpy(&b, &f, sizeof b);
    return b;
}

static float bits_f32(uint32_t b)
{
    float f;
    memcpy(&f, &b, sizeof f);
    return f;
}

static wt_tensor *make(wt_dtype dt, int ndim, const int64_t *shape, const void *data)
{
    wt_tensor *t = NULL;
    wt_status s = wt_tensor_from_data(g_ctx, dt, ndim, shape, data, &t);
    CHECK(s == WT_OK, "from_data %s: %s (%s)", wt_dtype_name(dt), wt_status_string(s), wt_last_error());
    return t;
}

/* Reads t into a buffer with guard bytes after it; checks the guard. */
static void *read_all(const wt_tensor *t)
{
    size_t n = (size_t)wt_tensor_numel(t) * wt_dtype_size(wt_tensor_dtype(t));
    unsigned char *buf = malloc(n + 16);
    memset(buf, 0xA5, n + 16);
    wt_status s = wt_tensor_read(t, buf, n + 16);
    CHECK(s == WT_OK, "read %s: %s (%s)", wt_dtype_name(wt_tensor_dtype(t)), wt_status_string(s),
          wt_last_error());
    for (size_t i = n; i < n + 16; i++)
        if (buf[i] != 0xA5) {
            CHECK(false, "read wrote past the end (%zu bytes)", n);
            break;
        }
    return buf;
}

/* ---------------------------------------------------------- round trips */

static const int32_t k_ints[] = {0, 1, -1, INT32_MAX, INT32_MIN, 0x7fc00001, 0x7f800001,
                                 (int32_t)0xffc00000u, 0x00000001, (int32_t)0x80000001u, 12345678,
                                 -7, 0x7f800000, (int32_t)0xff800000u, 16777217};
#define NINTS ((int)(sizeof k_ints / sizeof k_ints[0]))

static void test_round_trips(void)
{
    int64_t shapes[][3] = {{NINTS, 0, 0}, {3, 5, 7}, {0, 0, 0}};
    int ndims[] = {1, 3, 1};
    for (int c = 0; c < 3; c++) {
        int64_t n = 1;
        for (int d = 0; d < ndims[c]; d++) n *= shapes[c][d];
        int32_t *iv = malloc((size_t)(n ? n : 1) * 4);
        uint8_t *bv = malloc((size_t)(n ? n : 1));
        for (int64_t i = 0; i < n; i++) {
            /* wraps past INT32_MAX on purpose: unsigned, no UB */
            iv[i] = (int32_t)((uint32_t)k_ints[i % NINTS] + (uint32_t)(i / NINTS));
            bv[i] = (uint8_t)(i % 3 == 0 ? 0 : i % 3 == 1 ? 1 : 0x80 + i);
        }
        wt_tensor *ti = make(WT_I32, ndims[c], shapes[c], iv);
        wt_tensor *tb = make(WT_BOOL, ndims[c], shapes[c], bv);
        if (ti && tb) {
            CHECK(wt_tensor_dtype(ti) == WT_I32 && wt_tensor_dtype(tb) == WT_BOOL, "dtypes kept");
            int32_t *gi = read_all(ti);
            uint8_t *gb = read_all(tb);
            CHECK(n == 0 || memcmp(gi, iv, (size_t)n * 4) == 0, "i32 round trip of %lld elements", (long long)n);
            int64_t bad = 0;
            for (int64_t i = 0; i < n; i++) bad += gb[i] != (bv[i] != 0);
            CHECK(bad == 0, "bool round trip: %lld of %lld wrong (nonzero bytes read back as 1)", (long long)bad,
                  (long long)n);
            free(gi);
            free(gb);
        }
        wt_tensor_release(ti);
        wt_tensor_release(tb);
        free(iv);
        free(bv);
    }
    /* 0-d. */
    int32_t one = -42;
    uint8_t yes = 7;
    wt_tensor *ti = make(WT_I32, 0, NULL, &one), *tb = make(WT_BOOL, 0, NULL, &yes);
    int32_t gi = 0;
    uint8_t gb = 9;
    CHECK(ti && wt_tensor_read(ti, &gi, 4) == WT_OK && gi == -42, "0-d i32 reads %d", gi);
    CHECK(tb && wt_tensor_read(tb, &gb, 1) == WT_OK && gb == 1, "0-d bool reads %d", gb);
    CHECK(tb && wt_tensor_read(tb, &gb, 0) == WT_ERR_INVALID_ARGUMENT, "bool read into 0 bytes refused");
    wt_tensor_release(ti);
    wt_tensor_release(tb);
}

static void test_sizes_and_storage(void)
{
    CHECK(wt_dtype_size(WT_BOOL) == 1 && wt_dtype_size(WT_I32) == 4, "host sizes of bool and i32");
    CHECK(!strcmp(wt_dtype_name(WT_BOOL), "bool") && !strcmp(wt_dtype_name(WT_I32), "i32") &&
              !strcmp(wt_dtype_name((wt_dtype)77), "?"),
          "dtype names");
    /* A bool element takes a 4-byte word of storage. */
    wt_memory_stats a, b;
    wt_context_memory_stats(g_ctx, &a);
    wt_tensor *t = NULL;
    int64_t shape[1] = {1001};
    CHECK(wt_tensor_zeros(g_ctx, WT_BOOL, 1, shape, &t) == WT_OK, "bool zeros: %s", wt_last_error());
    wt_context_memory_stats(g_ctx, &b);
    CHECK(b.live_bytes - a.live_bytes == 4004, "a [1001] bool holds %llu bytes of storage, want 4004",
          (unsigned long long)(b.live_bytes - a.live_bytes));
    wt_tensor_release(t);
}

/* ------------------------------------------------------------ zeros/full */

static void check_full(wt_dtype dt, double value, wt_status want_st, int32_t want)
{
    int64_t shape[2] = {5, 13};
    wt_tensor *t = NULL;
    wt_status s = wt_tensor_full(g_ctx, dt, 2, shape, value, &t);
    CHECK(s == want_st, "full(%s, %g): %s, want %s (%s)", wt_dtype_name(dt), value, wt_status_string(s),
          wt_status_string(want_st), wt_last_error());
    if (s != WT_OK) {
        CHECK(t == NULL, "out set on failure");
        CHECK(strstr(wt_last_error(), "wt_tensor_full") != NULL, "message names the function: %s", wt_last_error());
        return;
    }
    void *got = read_all(t);
    bool ok = true;
    for (int i = 0; i < 65; i++)
        ok &= dt == WT_BOOL ? ((uint8_t *)got)[i] == (uint8_t)want : ((int32_t *)got)[i] == want;
    CHECK(ok, "full(%s, %g) holds %d everywhere", wt_dtype_name(dt), value, want);
    free(got);
    wt_tensor_release(t);
}

static void test_full(void)
{
    check_full(WT_I32, 0.0, WT_OK, 0);
    check_full(WT_I32, -7.9, WT_OK, -7);
    check_full(WT_I32, 7.9, WT_OK, 7);
    check_full(WT_I32, 2147483647.0, WT_OK, INT32_MAX);
    check_full(WT_I32, -2147483648.0, WT_OK, INT32_MIN);
    check_full(WT_I32, 16777217.0, WT_OK, 16777217); /* not an f32 value */
    check_full(WT_I32, 2147483648.0, WT_ERR_INVALID_ARGUMENT, 0);
    check_full(WT_I32, NAN, WT_ERR_INVALID_ARGUMENT, 0);
    check_full(WT_I32, -INFINITY, WT_ERR_INVALID_ARGUMENT, 0);
    check_full(WT_BOOL, 0.0, WT_OK, 0);
    check_full(WT_BOOL, -0.0, WT_OK, 0);
    check_full(WT_BOOL, 0.25, WT_OK, 1);
    check_full(WT_BOOL, NAN, WT_OK, 1);
    /* f32 fill is a bit pattern fill now: -0 and NaN keep their bits. */
    int64_t shape[1] = {9};
    wt_tensor *t = NULL;
    CHECK(wt_tensor_full(g_ctx, WT_F32, 1, shape, -0.0, &t) == WT_OK, "full f32 -0");
    float got[9];
    CHECK(t && wt_tensor_read(t, got, sizeof got) == WT_OK && signbit(got[0]) && got[8] == 0.0f, "full f32 -0 keeps the sign");
    wt_tensor_release(t);
}

/* ----------------------------------------------------------------- views */

/* Host model of a 2-D [R, C] i32 tensor's views. */
static void test_views(wt_dtype dt)
{
    enum { R = 67, C = 131 };
    int64_t shape[2] = {R, C};
    int32_t *iv = malloc(R * C * 4);
    uint8_t *bv = malloc(R * C);
    for (int i = 0; i < R * C; i++) {
        iv[i] = (int32_t)(0x7f800001u + (uint32_t)i * 2654435761u); /* NaN-like and all sorts */
        bv[i] = (uint8_t)((i * 7) % 5 == 0);
    }
    const void *data = dt == WT_I32 ? (const void *)iv : (const void *)bv;
    wt_tensor *x = make(dt, 2, shape, data);
    if (!x) goto done;
    const char *what = wt_dtype_name(dt);
    wt_tensor *v = NULL, *c = NULL;
    /* Transposed: element [j, i] = x[i, j]. */
    CHECK(wt_transpose(x, 0, 1, &v) == WT_OK, "transpose %s: %s", what, wt_last_error());
    if (v) {
        void *g = read_all(v);
        int64_t bad = 0;
        for (int j = 0; j < C; j++)
            for (int i = 0; i < R; i++)
                bad += dt == WT_I32 ? ((int32_t *)g)[j * R + i] != iv[i * C + j]
                                    : ((uint8_t *)g)[j * R + i] != bv[i * C + j];
        CHECK(bad == 0, "read of a transposed %s view: %lld wrong", what, (long long)bad);
        free(g);
        /* A copy and a contiguous version of the view, then a reshape of it. */
        CHECK(wt_copy(v, &c) == WT_OK && c && wt_tensor_is_contiguous(c) && wt_tensor_dtype(c) == dt,
              "copy of a transposed %s view: %s", what, wt_last_error());
        wt_tensor *cc = NULL, *r = NULL;
        CHECK(wt_contiguous(v, &cc) == WT_OK && cc && cc != v, "contiguous of a %s view", what);
        int64_t flat[1] = {-1};
        CHECK(wt_reshape(v, 1, flat, &r) == WT_OK && r, "reshape of a %s view", what);
        const wt_tensor *same[3] = {c, cc, r};
        for (int k = 0; k < 3; k++) {
            if (!same[k]) continue;
            void *g2 = read_all(same[k]);
            void *g1 = read_all(v);
            CHECK(memcmp(g1, g2, (size_t)R * C * wt_dtype_size(dt)) == 0, "%s copy %d equals the view", what, k);
            free(g1);
            free(g2);
        }
        wt_tensor_release(cc);
        wt_tensor_release(r);
    }
    wt_tensor_release(v);
    wt_tensor_release(c);
    /* Slice with a step, then an expand of a row. */
    v = NULL;
    CHECK(wt_slice(x, 1, 3, 100, 7, &v) == WT_OK, "slice %s", what);
    if (v) {
        void *g = read_all(v);
        int64_t bad = 0, cols = wt_tensor_shape(v)[1];
        for (int i = 0; i < R; i++)
            for (int64_t j = 0; j < cols; j++) {
                int src = i * C + 3 + (int)j * 7;
                bad += dt == WT_I32 ? ((int32_t *)g)[i * cols + j] != iv[src] : ((uint8_t *)g)[i * cols + j] != bv[src];
            }
        CHECK(bad == 0 && cols == 14, "sliced %s view: %lld wrong", what, (long long)bad);
        free(g);
    }
    wt_tensor_release(v);
    wt_tensor *row = NULL, *e = NULL;
    CHECK(wt_slice(x, 0, 5, 6, 1, &row) == WT_OK, "row slice");
    int64_t eshape[3] = {2, 3, C};
    CHECK(row && wt_expand(row, 3, eshape, &e) == WT_OK, "expand %s: %s", what, wt_last_error());
    if (e) {
        void *g = read_all(e);
        int64_t bad = 0;
        for (int k = 0; k < 6; k++)
            for (int j = 0; j < C; j++)
                bad += dt == WT_I32 ? ((int32_t *)g)[k * C + j] != iv[5 * C + j] : ((uint8_t *)g)[k * C + j] != bv[5 * C + j];
        CHECK(bad == 0, "expanded %s view: %lld wrong", what, (long long)bad);
        free(g);
    }
    wt_tensor_release(row);
    wt_tensor_release(e);
    wt_tensor_release(x);
done:
    free(iv);
    free(bv);
}

/* ----------------------------------------------------------------- casts */

/* A value of any dtype as the reference sees it. */
typedef struct value {
    wt_dtype dt;
    double v;     /* the number (bools 0/1) */
    uint32_t raw; /* f32 bits, f16 bits, i32 bits or 0/1 */
} value;

static uint32_t ref_convert(const value *in, wt_dtype to)
{
    double v = in->v;
    switch (to) {
    case WT_F32:
        if (in->dt == WT_F32) return in->raw;
        return f32_bits((float)v); /* f16, bool exact; i32: the C conversion rounds to nearest even */
    case WT_F16:
        if (in->dt == WT_F16) return in->raw;
        /* One rounding from the exact value (f32 and i32 both). */
        return test_double_to_half(v);
    case WT_I32:
        if (in->dt == WT_I32) return in->raw;
        if (isnan(v)) return 0;
        if (v >= 2147483648.0) return (uint32_t)INT32_MAX;
        if (v <= -2147483648.0) return 0x80000000u;
        return (uint32_t)(int32_t)trunc(v);
    case WT_BOOL:
        return v != 0.0 || isnan(v);
    }
    return 0;
}

static bool same_value(wt_dtype dt, uint32_t got, uint32_t want)
{
    if (dt == WT_F32 && isnan(bits_f32(got)) && isnan(bits_f32(want))) return true;
    if (dt == WT_F16 && (got & 0x7fff) > 0x7c00 && (want & 0x7fff) > 0x7c00) return true;
    return got == want;
}

static void load_values(wt_dtype dt, value *vals, int *n)
{
    static const float fs[] = {0.0f, -0.0f, 1.5f, -1.5f, 2.5f, -2.7f, 0.999f, -0.999f, 1e10f, -1e10f,
                               2147483520.0f, 2147483648.0f, -2147483648.0f, -2147483904.0f, 65504.0f,
                               65519.996f, 65520.0f, -65520.0f, 1e-8f, 2.9802322e-8f, 5.9604645e-8f,
                               1e-45f, 16777216.0f, 3.14159f, NAN, -NAN, INFINITY, -INFINITY};
    static const uint16_t hs[] = {0x0000, 0x8000, 0x3c00, 0xbe00, 0x7bff, 0xfbff, 0x7c00, 0xfc00, 0x7e00,
                                  0xfe01, 0x0001, 0x8001, 0x03ff, 0x4248, 0x3800, 0xb7ff, 0x3bff};
    static const int32_t is[] = {0, 1, -1, INT32_MAX, INT32_MIN, 16777217, 16777219, 33554435, -33554435,
                                 65504, 65519, 65520, -65536, 2049, 2051, -2051, 100000, 0x7fc00000};
    *n = 0;
    if (dt == WT_F32)
        for (size_t i = 0; i < sizeof fs / sizeof fs[0]; i++)
            vals[(*n)++] = (value){dt, fs[i], f32_bits(fs[i])};
    if (dt == WT_F16)
        for (size_t i = 0; i < sizeof hs / sizeof hs[0]; i++)
            vals[(*n)++] = (value){dt, test_half_to_double(hs[i]), hs[i]};
    if (dt == WT_I32)
        for (size_t i = 0; i < sizeof is / sizeof is[0]; i++)
            vals[(*n)++] = (value){dt, is[i], (uint32_t)is[i]};
    if (dt == WT_BOOL)
        for (int i = 0; i < 5; i++)
            vals[(*n)++] = (value){dt, i % 2, (uint32_t)(i % 2)};
}

/* Host data of n values of dtype dt. */
static void *host_data(const value *vals, int n, wt_dtype dt)
{
    size_t es = wt_dtype_size(dt);
    unsigned char *d = malloc((size_t)n * es + 1);
    for (int i = 0; i < n; i++) {
        if (es == 4) memcpy(d + 4 * i, &vals[i].raw, 4);
        else if (es == 2) { uint16_t h = (uint16_t)vals[i].raw; memcpy(d + 2 * i, &h, 2); }
        else d[i] = (unsigned char)vals[i].raw;
    }
    return d;
}

static uint32_t host_get(const void *d, int i, wt_dtype dt)
{
    size_t es = wt_dtype_size(dt);
    if (es == 4) { uint32_t w; memcpy(&w, (const char *)d + 4 * i, 4); return w; }
    if (es == 2) { uint16_t h; memcpy(&h, (const char *)d + 2 * i, 2); return h; }
    return ((const unsigned char *)d)[i];
}

static void test_casts(void)
{
    const wt_dtype all[4] = {WT_F32, WT_F16, WT_I32, WT_BOOL};
    for (int a = 0; a < 4; a++) {
        value vals[64];
        int n;
        load_values(all[a], vals, &n);
        /* Twice over, the second half read through a step-2 slice (a
         * strided source). */
        value twice[128];
        for (int i = 0; i < 2 * n; i++) twice[i] = vals[i / 2];
        int64_t shape[1] = {2 * n};
        void *data = host_data(twice, 2 * n, all[a]);
        wt_tensor *x = make(all[a], 1, shape, data), *xs = NULL;
        free(data);
        if (!x) continue;
        CHECK(wt_slice(x, 0, 1, 2 * n, 2, &xs) == WT_OK, "slice");
        for (int b = 0; b < 4; b++) {
            for (int strided = 0; strided < 2; strided++) {
                wt_tensor *y = NULL;
                wt_status s = wt_cast(strided ? xs : x, all[b], &y);
                CHECK(s == WT_OK, "cast %s -> %s: %s (%s)", wt_dtype_name(all[a]), wt_dtype_name(all[b]),
                      wt_status_string(s), wt_last_error());
                if (s != WT_OK) continue;
                CHECK(wt_tensor_dtype(y) == all[b], "cast result dtype");
                void *got = read_all(y);
                int m = strided ? n : 2 * n;
                for (int i = 0; i < m; i++) {
                    const value *in = strided ? &vals[i] : &twice[i];
                    uint32_t want = ref_convert(in, all[b]), g = host_get(got, i, all[b]);
                    if (!CHECK(same_value(all[b], g, want),
                               "cast %s -> %s%s of %.9g (bits 0x%x): got 0x%x, want 0x%x", wt_dtype_name(all[a]),
                               wt_dtype_name(all[b]), strided ? " (strided)" : "", in->v, in->raw, g, want))
                        break;
                }
                free(got);
                wt_tensor_release(y);
            }
        }
        wt_tensor_release(xs);
        wt_tensor_release(x);
    }
    /* An odd-length f16 output from i32, and bool from a transposed f32. */
    int64_t shape[2] = {3, 5};
    float fv[15];
    for (int i = 0; i < 15; i++) fv[i] = (float)(i % 4) - 1.5f + (i % 4 == 1 ? 0.5f : 0.0f);
    wt_tensor *f = make(WT_F32, 2, shape, fv), *ft = NULL, *bt = NULL;
    CHECK(f && wt_transpose(f, 0, 1, &ft) == WT_OK && wt_cast(ft, WT_BOOL, &bt) == WT_OK, "bool of a transposed f32: %s",
          wt_last_error());
    if (bt) {
        uint8_t *g = read_all(bt);
        bool ok = true;
        for (int j = 0; j < 5; j++)
            for (int i = 0; i < 3; i++) ok &= g[j * 3 + i] == (fv[i * 5 + j] != 0.0f);
        CHECK(ok, "bool of a transposed f32 view");
        free(g);
    }
    wt_tensor_release(f);
    wt_tensor_release(ft);
    wt_tensor_release(bt);
    /* Unknown dtypes. */
    wt_tensor *t = NULL, *o = NULL;
    int64_t one[1] = {1};
    CHECK(wt_tensor_zeros(g_ctx, WT_I32, 1, one, &t) == WT_OK, "zeros i32");
    CHECK(wt_cast(t, (wt_dtype)9, &o) == WT_ERR_INVALID_ARGUMENT && !o, "cast to an unknown dtype");
    CHECK(wt_tensor_zeros(g_ctx, (wt_dtype)9, 1, one, &o) == WT_ERR_INVALID_ARGUMENT && !o, "zeros of an unknown dtype");
    CHECK(wt_tensor_from_data(g_ctx, (wt_dtype)-1, 1, one, fv, &o) == WT_ERR_INVALID_ARGUMENT && !o,
          "from_data of an unknown dtype");
    wt_tensor_release(t);
}

/* ------------------------------------------------------------- refusals */

/* Ops that compute in floating point only: given i32 or bool they refuse
 * with WT_ERR_UNSUPPORTED and a message naming the op and the dtype. */
static void test_refusals(void)
{
    int64_t shape[2] = {4, 4};
    for (int k = 0; k < 2; k++) {
        wt_dtype dt = k ? WT_BOOL : WT_I32;
        wt_tensor *x = NULL, *f = NULL, *o = NULL;
        CHECK(wt_tensor_zeros(g_ctx, dt, 2, shape, &x) == WT_OK, "zeros");
        CHECK(wt_tensor_zeros(g_ctx, WT_F32, 2, shape, &f) == WT_OK, "zeros");
        if (!x || !f) continue;
        int axis = 0;
        /* One call at a time: a call that unexpectedly succeeds must not
         * have its result overwritten by the next. i32 reductions and the
         * sum of a mask (a count) are supported (the reduction table's
         * rows), so only mean, max and min of a mask are refused here. */
        const char *names[] = {"wt_matmul", "wt_matmul", "wt_softmax", "wt_layernorm", "wt_rmsnorm",
                               "wt_mean", "wt_max", "wt_min"};
        int nchecks = dt == WT_BOOL ? 8 : 5;
        for (int i = 0; i < nchecks; i++) {
            wt_status s = WT_OK;
            switch (i) {
            case 0: s = wt_matmul(x, f, &o); break;
            case 1: s = wt_matmul(f, x, &o); break;
            case 2: s = wt_softmax(x, -1, &o); break;
            case 3: s = wt_layernorm(x, NULL, NULL, 1e-5f, &o); break;
            case 4: s = wt_rmsnorm(x, NULL, 1e-5f, &o); break;
            case 5: s = wt_mean(x, 0, NULL, false, &o); break;
            case 6: s = wt_max(x, 0, NULL, true, &o); break;
            default: s = wt_min(x, 1, &axis, false, &o); break;
            }
            CHECK(s == WT_ERR_UNSUPPORTED || s == WT_ERR_INVALID_ARGUMENT,
                  "%s of %s: %s, want a refusal", names[i], wt_dtype_name(dt), wt_status_string(s));
            CHECK(o == NULL, "%s of %s set out", names[i], wt_dtype_name(dt));
            wt_tensor_release(o);
            o = NULL;
        }
        /* Reductions (tests/reduce_ops.c checks their values): i32 sums,
         * extremes and means work; of a mask, the sum (a count) works and
         * the mean and extremes are refused. */
        const char *red_names[4] = {"wt_sum", "wt_mean", "wt_max", "wt_min"};
        wt_status red[4];
        for (int i = 0; i < 4; i++) {
            red[i] = i == 0 ? wt_sum(x, 1, &axis, false, &o)
                   : i == 1 ? wt_mean(x, 0, NULL, false, &o)
                   : i == 2 ? wt_max(x, 0, NULL, true, &o)
                            : wt_min(x, 1, &axis, false, &o);
            wt_tensor_release(o);
            o = NULL;
        }
        for (int i = 0; i < 4; i++) {
            bool ok = dt == WT_I32 || i == 0;
            CHECK(ok ? red[i] == WT_OK : red[i] == WT_ERR_INVALID_ARGUMENT, "%s of %s: %s", red_names[i],
                  wt_dtype_name(dt), wt_status_string(red[i]));
        }
        /* The message of the last refusal names op and dtype. */
        wt_status s = wt_softmax(x, 0, &o);
        CHECK(s == WT_ERR_UNSUPPORTED && strstr(wt_last_error(), "wt_softmax") &&
                  strstr(wt_last_error(), wt_dtype_name(dt)),
              "softmax of %s: %s \"%s\"", wt_dtype_name(dt), wt_status_string(s), wt_last_error());
        s = wt_layernorm(f, x, NULL, 1e-5f, &o);
        CHECK(s == WT_ERR_UNSUPPORTED && !o, "layernorm with a %s weight: %s", wt_dtype_name(dt), wt_status_string(s));
        wt_tensor_release(x);
        wt_tensor_release(f);
    }
}

int main(int argc, char **argv)
{
    test_run run;
    if (!test_begin(&run, "dtypes", argc, argv)) return run.status;
    g_ctx = run.ctx;
    test_sizes_and_storage();
    test_round_trips();
    test_full();
    test_views(WT_I32);
    test_views(WT_BOOL);
    test_casts();
    test_refusals();
    wt_status s = wt_context_sync(g_ctx);
    CHECK(s == WT_OK, "sync: %s (%s)", wt_status_string(s), wt_last_error());
    test_check_nothing_alive(g_ctx);
    return test_end(&run);
}
