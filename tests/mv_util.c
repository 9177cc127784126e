#include "mv_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

wt_context *g_ctx;
test_backend g_backend;

static uint32_t f32_bits(float f)
{
    uint32_t b;
    memcpy(&b, &f, 4);
    return b;
}

/* Exact double -> f16 for values on the f16 grid (the tests use only
 * those, and random bit patterns). */
static uint16_t half_of_exact(double v)
{
    uint16_t sign = signbit(v) ? 0x8000 : 0;
    double a = fabs(v);
    if (isnan(v)) return 0x7e00;
    if (isinf(v)) return sign | 0x7c00;
    if (a == 0) return sign;
    if (a < ldexp(1, -14)) return sign | (uint16_t)ldexp(a, 24);
    int e;
    double f = frexp(a, &e); /* a = f * 2^e, f in [0.5, 1) */
    return sign | (uint16_t)((e - 1 + 15) << 10) | (uint16_t)(ldexp(f, 11) - 1024);
}

uint32_t mv_bits_of(wt_dtype dtype, double v)
{
    if (dtype == WT_F32) return f32_bits((float)v);
    if (dtype == WT_F16) return half_of_exact(v);
    if (dtype == WT_BOOL) return v != 0;
    return (uint32_t)(int32_t)v;
}

double mv_value_of(wt_dtype dtype, uint32_t bits)
{
    if (dtype == WT_F32) {
        float f;
        memcpy(&f, &bits, 4);
        return f;
    }
    if (dtype == WT_F16) {
        int e = (bits >> 10) & 0x1f, m = bits & 0x3ff;
        double s = (bits & 0x8000) ? -1.0 : 1.0;
        if (e == 0x1f) return m ? NAN : s * INFINITY;
        if (e == 0) return s * ldexp(m, -24);
        return s * ldexp(1024 + m, e - 25);
    }
    return (double)(int32_t)bits;
}

const char *mv_dtype_name(wt_dtype dtype)
{
    return wt_dtype_name(dtype);
}

int64_t mv_numel(int ndim, const int64_t *shape)
{
    int64_t n = 1;
    for (int d = 0; d < ndim; d++) n *= shape[d];
    return n;
}

void mv_coord(int64_t i, int ndim, const int64_t *shape, int64_t *coord)
{
    for (int d = ndim - 1; d >= 0; d--) {
        coord[d] = shape[d] ? i % shape[d] : 0;
        i = shape[d] ? i / shape[d] : 0;
    }
}

bool mv_make_from(wt_dtype dtype, int ndim, const int64_t *shape, const uint32_t *bits, mv_input *in)
{
    memset(in, 0, sizeof *in);
    in->dtype = dtype;
    in->numel = mv_numel(ndim, shape);
    size_t n = (size_t)(in->numel ? in->numel : 1);
    in->bits = malloc(n * 4);
    void *data = malloc(n * 4);
    if (!in->bits || !data) {
        free(data);
        return CHECK(false, "out of host memory");
    }
    for (int64_t i = 0; i < in->numel; i++) {
        in->bits[i] = bits[i];
        if (dtype == WT_F16) ((uint16_t *)data)[i] = (uint16_t)bits[i];
        else if (dtype == WT_BOOL) ((uint8_t *)data)[i] = (uint8_t)bits[i];
        else ((uint32_t *)data)[i] = bits[i];
    }
    wt_status st = wt_tensor_from_data(g_ctx, dtype, ndim, shape, data, &in->dev);
    free(data);
    return CHECK(st == WT_OK, "from_data(%s): %s", mv_dtype_name(dtype), wt_last_error());
}

bool mv_make(wt_dtype dtype, int ndim, const int64_t *shape, mv_input *in)
{
    int64_t n = mv_numel(ndim, shape);
    uint32_t *b = malloc((size_t)(n ? n : 1) * 4);
    if (!b) return CHECK(false, "out of host memory");
    for (int64_t i = 0; i < n; i++) {
        uint64_t r = test_rng_next();
        if (dtype == WT_F32) b[i] = f32_bits(test_rng_uniform(-100.0f, 100.0f));
        else if (dtype == WT_F16) {
            uint32_t h = (uint32_t)(r & 0xffff);
            if ((h & 0x7c00) == 0x7c00) h &= 0xbfff; /* no inf / NaN */
            b[i] = h;
        } else if (dtype == WT_BOOL)
            b[i] = (uint32_t)(r & 1);
        else
            b[i] = (uint32_t)((int32_t)(r % 2000) - 1000);
    }
    bool ok = mv_make_from(dtype, ndim, shape, b, in);
    free(b);
    return ok;
}

void mv_free(mv_input *in)
{
    wt_tensor_release(in->dev);
    free(in->bits);
    memset(in, 0, sizeof *in);
}

hview hv_of(const uint32_t *base, const wt_tensor *view)
{
    hview v;
    memset(&v, 0, sizeof v);
    v.base = base;
    v.ndim = wt_tensor_ndim(view);
    memcpy(v.shape, wt_tensor_shape(view), sizeof(int64_t) * (size_t)v.ndim);
    memcpy(v.strides, wt_tensor_strides(view), sizeof(int64_t) * (size_t)v.ndim);
    v.offset = wt_tensor_offset(view);
    return v;
}

uint32_t hv_at(const hview *v, const int64_t *coord)
{
    int64_t e = v->offset;
    for (int d = 0; d < v->ndim; d++) e += coord[d] * v->strides[d];
    return v->base[e];
}

#define GUARD_BYTES 64

static uint32_t host_elem(const unsigned char *buf, size_t es, int64_t i)
{
    return es == 1 ? buf[i] : es == 2 ? ((const uint16_t *)buf)[i] : ((const uint32_t *)buf)[i];
}

bool mv_expect(const char *what, const wt_tensor *t, wt_dtype dtype, int ndim, const int64_t *shape,
               const uint32_t *expect)
{
    if (!t) return CHECK(false, "%s: no tensor (%s)", what, wt_last_error());
    char b1[128], b2[128];
    bool shape_ok = wt_tensor_ndim(t) == ndim && wt_tensor_dtype(t) == dtype &&
                    (ndim == 0 || memcmp(wt_tensor_shape(t), shape, sizeof(int64_t) * (size_t)ndim) == 0);
    if (!shape_ok)
        return CHECK(false, "%s: got %s dtype %d, expected %s dtype %d", what,
                     test_shape_str(wt_tensor_ndim(t), wt_tensor_shape(t), b1, sizeof b1), (int)wt_tensor_dtype(t),
                     test_shape_str(ndim, shape, b2, sizeof b2), (int)dtype);
    int64_t n = mv_numel(ndim, shape);
    size_t es = wt_dtype_size(dtype), bytes = (size_t)n * es;
    unsigned char *buf = malloc(bytes + GUARD_BYTES);
    if (!buf) return CHECK(false, "%s: out of host memory", what);
    memset(buf, 0xA5, bytes + GUARD_BYTES);
    wt_status st = wt_tensor_read(t, buf, bytes + GUARD_BYTES);
    bool ok = CHECK(st == WT_OK, "%s: read failed: %s", what, wt_last_error());
    for (size_t i = bytes; ok && i < bytes + GUARD_BYTES; i++)
        if (buf[i] != 0xA5) ok = CHECK(false, "%s: read wrote past the end", what);
    int64_t bad = 0, first = -1;
    for (int64_t i = 0; ok && i < n; i++) {
        uint32_t got = host_elem(buf, es, i);
        if (got != expect[i]) {
            if (first < 0) first = i;
            bad++;
        }
    }
    if (ok && bad) {
        uint32_t got = host_elem(buf, es, first);
        ok = CHECK(false, "%s: %lld of %lld elements differ; first at %lld: got 0x%x, expected 0x%x", what,
                   (long long)bad, (long long)n, (long long)first, got, expect[first]);
    } else if (ok) {
        CHECK(true, "%s", what);
    }
    free(buf);
    return ok;
}

bool mv_expect_index_error(const char *what, wt_status st, wt_tensor **out, wt_context *ctx,
                           const char *index_text)
{
    bool ok;
    if (st == WT_OK && wt_context_backend(ctx) != WT_BACKEND_CPU) {
        /* Found on the GPU: the call returned, the next sync reports it,
         * once. */
        wt_tensor_release(*out);
        *out = NULL;
        st = wt_context_sync(ctx);
        ok = CHECK(st == WT_ERR_INVALID_ARGUMENT, "%s: the next sync gave %s, expected WT_ERR_INVALID_ARGUMENT (%s)",
                   what, wt_status_string(st), wt_last_error());
        ok &= CHECK(wt_context_sync(ctx) == WT_OK, "%s: reported once, then cleared (%s)", what, wt_last_error());
        if (index_text && st != WT_OK)
            ok &= CHECK(strstr(wt_last_error(), index_text) != NULL, "%s: the message names the op and the index: %s",
                        what, wt_last_error());
        return ok;
    }
    ok = CHECK(st == WT_ERR_INVALID_ARGUMENT, "%s: got %s, expected WT_ERR_INVALID_ARGUMENT (%s)", what,
               wt_status_string(st), wt_last_error());
    ok &= CHECK(*out == NULL, "%s: the failure leaves out NULL", what);
    if (index_text && st != WT_OK)
        ok &= CHECK(strstr(wt_last_error(), index_text) != NULL, "%s: the message names the index: %s", what,
                    wt_last_error());
    return ok;
}

bool mv_expect_code(const char *what, wt_status st, wt_status want)
{
    return CHECK(st == want, "%s: got %s, expected %s (%s)", what, wt_status_string(st), wt_status_string(want),
                 wt_last_error());
}
