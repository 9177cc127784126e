/* Creation from a rule: ones, arange, linspace, eye (values computed in
 * double on the host, rounded once, uploaded), and the random tensors
 * (rand, randn, dropout) that the backends generate from Philox. */
#include "api/api.h"
#include "autograd/tape.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static wt_status check_dtype(const char *fn, wt_dtype dtype, bool allow_i32)
{
    if (wt_dtype_size(dtype) == 0) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: unknown dtype %d", fn, (int)dtype);
    if (dtype != WT_F32 && dtype != WT_F16 && !(allow_i32 && dtype == WT_I32))
        return wt_fail(WT_ERR_UNSUPPORTED, "%s: dtype %d is not supported (f32, f16%s)", fn, (int)dtype,
                       allow_i32 ? ", i32" : "");
    return WT_OK;
}

/* Takes t (f32, or already dtype), the result of a step that returned st:
 * *out = t, cast to f16 when dtype is f16. */
static wt_status land(wt_status st, wt_tensor *t, wt_dtype dtype, wt_tensor **out)
{
    if (st == WT_OK && dtype == WT_F16 && t->dtype != WT_F16) {
        wt_tensor *h = NULL;
        st = wt_cast(t, WT_F16, &h);
        wt_tensor_release(t);
        t = h;
    }
    if (st != WT_OK) {
        wt_tensor_release(t);
        return st;
    }
    *out = t;
    return WT_OK;
}

/* A 1-D or 2-D tensor of dtype from n doubles: f32 (or i32) uploaded, f16
 * through one rounding cast of the f32 values. vals is freed. */
static wt_status from_values(const char *fn, wt_context *ctx, wt_dtype dtype, int ndim, const int64_t *shape,
                             double *vals, int64_t n, wt_tensor **out)
{
    void *buf = malloc((size_t)(n > 0 ? n : 1) * 4);
    if (!buf) {
        free(vals);
        return wt_fail(WT_ERR_OUT_OF_MEMORY, "%s: no host memory for %lld values", fn, (long long)n);
    }
    for (int64_t i = 0; i < n; i++) {
        if (dtype == WT_I32) ((int32_t *)buf)[i] = (int32_t)vals[i];
        else ((float *)buf)[i] = (float)vals[i];
    }
    free(vals);
    wt_tensor *t = NULL;
    wt_status st = wt_tensor_alloc(ctx, dtype == WT_F16 ? WT_F32 : dtype, ndim, shape, &t);
    if (st == WT_OK && n > 0) st = ctx->ops->upload(ctx, t->storage, 0, buf, (size_t)n * 4);
    free(buf);
    return land(st, t, dtype, out);
}

static wt_status values(const char *fn, int64_t n, double **vals)
{
    *vals = malloc((size_t)(n > 0 ? n : 1) * sizeof **vals);
    if (!*vals) return wt_fail(WT_ERR_OUT_OF_MEMORY, "%s: no host memory for %lld values", fn, (long long)n);
    return WT_OK;
}

wt_status wt_tensor_ones(wt_context *ctx, wt_dtype dtype, int ndim, const int64_t *shape, wt_tensor **out)
{
    return wt_tensor_full(ctx, dtype, ndim, shape, 1.0, out);
}

#define MAX_RANGE ((double)INT32_MAX)

wt_status wt_tensor_arange(wt_context *ctx, wt_dtype dtype, double start, double stop, double step,
                           wt_tensor **out)
{
    const char *fn = "wt_tensor_arange";
    wt_status st = wt_check_out(fn, out);
    if (st != WT_OK) return st;
    if (!ctx) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: ctx is NULL", fn);
    if ((st = check_dtype(fn, dtype, true)) != WT_OK) return st;
    if (!isfinite(start) || !isfinite(stop) || !isfinite(step) || step == 0)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: start %g, stop %g, step %g (finite, step != 0)", fn, start,
                       stop, step);
    if (dtype == WT_I32 && (start != floor(start) || step != floor(step)))
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: i32 needs integral start and step (%g, %g)", fn, start, step);
    double len = ceil((stop - start) / step);
    if (!(len > 0)) len = 0;
    if (len > MAX_RANGE)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: %g elements are more than 2^31 - 1", fn, len);
    const int64_t n = (int64_t)len;
    double *v;
    if ((st = values(fn, n, &v)) != WT_OK) return st;
    for (int64_t i = 0; i < n; i++) v[i] = start + (double)i * step;
    return from_values(fn, ctx, dtype, 1, &n, v, n, out);
}

wt_status wt_tensor_linspace(wt_context *ctx, wt_dtype dtype, double start, double stop, int64_t num,
                             bool endpoint, wt_tensor **out)
{
    const char *fn = "wt_tensor_linspace";
    wt_status st = wt_check_out(fn, out);
    if (st != WT_OK) return st;
    if (!ctx) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: ctx is NULL", fn);
    if ((st = check_dtype(fn, dtype, false)) != WT_OK) return st;
    if (num < 0 || (double)num > MAX_RANGE)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: num %lld is outside [0, 2^31 - 1]", fn, (long long)num);
    if (!isfinite(start) || !isfinite(stop))
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: start %g and stop %g must be finite", fn, start, stop);
    double *v;
    if ((st = values(fn, num, &v)) != WT_OK) return st;
    const int64_t div = endpoint ? num - 1 : num;
    const double delta = div > 0 ? (stop - start) / (double)div : 0.0;
    for (int64_t i = 0; i < num; i++) v[i] = start + (double)i * delta;
    if (endpoint && num > 1) v[num - 1] = stop;
    return from_values(fn, ctx, dtype, 1, &num, v, num, out);
}

wt_status wt_tensor_eye(wt_context *ctx, wt_dtype dtype, int64_t n, int64_t m, int64_t k, wt_tensor **out)
{
    const char *fn = "wt_tensor_eye";
    wt_status st = wt_check_out(fn, out);
    if (st != WT_OK) return st;
    if (!ctx) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: ctx is NULL", fn);
    if ((st = check_dtype(fn, dtype, true)) != WT_OK) return st;
    if (n < 0 || m < 0 || (double)n * (double)m > MAX_RANGE)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: n %lld, m %lld (>= 0, at most 2^31 - 1 elements)", fn,
                       (long long)n, (long long)m);
    double *v;
    if ((st = values(fn, n * m, &v)) != WT_OK) return st;
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < m; j++) v[i * m + j] = j - i == k ? 1.0 : 0.0;
    const int64_t shape[2] = {n, m};
    return from_values(fn, ctx, dtype, 2, shape, v, n * m, out);
}

/* ------------------------------------------------------------- random */

static wt_status random_tensor(const char *fn, wt_context *ctx, wt_dtype dtype, int ndim, const int64_t *shape,
                               wt_random_args *r, const wt_tensor *x, wt_tensor **out)
{
    wt_tensor *t = NULL;
    wt_status st = wt_tensor_alloc(ctx, WT_F32, ndim, shape, &t);
    if (st == WT_OK && t->numel > 0) st = wt_node_run(ctx, &(wt_node){.kind = WT_NODE_RANDOM, .in = {x}, .out = {t}, .p.random = *r});
    if (st != WT_OK) wt_error_prefix(fn);
    return land(st, t, dtype, out);
}

static wt_status check_random(const char *fn, wt_context *ctx, wt_dtype dtype, int ndim, const int64_t *shape,
                              wt_tensor **out)
{
    wt_status st = wt_check_out(fn, out);
    if (st != WT_OK) return st;
    if (!ctx) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: ctx is NULL", fn);
    if ((st = check_dtype(fn, dtype, false)) != WT_OK) return st;
    return wt_check_shape(fn, ndim, shape);
}

wt_status wt_tensor_rand(wt_context *ctx, wt_dtype dtype, int ndim, const int64_t *shape, uint64_t seed,
                         wt_tensor **out)
{
    wt_status st = check_random("wt_tensor_rand", ctx, dtype, ndim, shape, out);
    if (st != WT_OK) return st;
    /* f16's 11 significant bits: every value exact in f16, none rounds up to 1. */
    wt_random_args r = {WT_RANDOM_UNIFORM, seed, dtype == WT_F16 ? 11u : 24u, 0, 0};
    return random_tensor("wt_tensor_rand", ctx, dtype, ndim, shape, &r, NULL, out);
}

wt_status wt_tensor_randn(wt_context *ctx, wt_dtype dtype, int ndim, const int64_t *shape, uint64_t seed,
                          wt_tensor **out)
{
    wt_status st = check_random("wt_tensor_randn", ctx, dtype, ndim, shape, out);
    if (st != WT_OK) return st;
    wt_random_args r = {WT_RANDOM_NORMAL, seed, 24, 0, 0};
    return random_tensor("wt_tensor_randn", ctx, dtype, ndim, shape, &r, NULL, out);
}

void wt_dropout_options_init(wt_dropout_options *opts)
{
    if (!opts) return;
    memset(opts, 0, sizeof *opts);
    opts->struct_size = sizeof *opts;
    opts->p = 0.5;
}

static wt_status dropout_f32(const char *fn, const wt_tensor *x, float p, uint64_t seed, wt_tensor **out)
{
    WT_GRAD_HOOK((x, NULL, NULL, NULL), 1, out, dropout_f32(fn, x, p, seed, out),
                 .op = WT_OP_DROPOUT, .nin = 1, .in = {x}, .p.d = {p}, .p.i = {(int64_t)seed});
    wt_status st;
    if (x->dtype == WT_F16) {
        wt_lifted l;
        wt_tensor *r = NULL;
        if ((st = wt_lift_f16(x, NULL, NULL, &l)) == WT_OK) st = dropout_f32(fn, l.in[0], p, seed, &r);
        wt_lifted_release(&l);
        return wt_land(st, r, l.result, out);
    }
    wt_tensor *c = NULL;
    if ((st = wt_contiguous(x, &c)) != WT_OK) return st;
    /* p = 1: every uniform value (< 1) is below p, so all drop; the scale is unused. */
    wt_random_args r = {WT_RANDOM_DROPOUT, seed, 24, p, p < 1.0f ? 1.0f / (1.0f - p) : 0.0f};
    st = random_tensor(fn, wt_ctx_of(x), WT_F32, x->ndim, x->shape, &r, c, out);
    wt_tensor_release(c);
    return st;
}

wt_status wt_dropout_v2(const wt_tensor *x, const wt_dropout_options *opts, wt_tensor **out)
{
    const char *fn = "wt_dropout_v2";
    wt_status st = wt_check_out(fn, out);
    if (st != WT_OK || (st = wt_check_input(fn, x)) != WT_OK) return st;
    wt_dropout_options o;
    wt_dropout_options_init(&o);
    if (opts) {
        if (opts->struct_size != sizeof *opts)
            return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: options not initialised with wt_dropout_options_init", fn);
        o = *opts;
    }
    /* The threshold is compared with f32 uniform values: p is taken in f32. */
    if (!(o.p >= 0.0 && o.p <= 1.0))
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: p %g is outside [0, 1]", fn, o.p);
    return dropout_f32(fn, x, (float)o.p, o.seed, out);
}
