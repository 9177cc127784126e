/* The gradient checks: the tape against float64 finite differences on the
 * CPU backend, and f16 inputs against f32 ones. */
#include "autograd_test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

wt_context *g_ctx;
wt_context *g_cpu;

static int64_t numel_of(const spec *s)
{
    int64_t n = 1;
    for (int i = 0; i < s->ndim; i++) n *= s->shape[i];
    return n;
}

static double draw(int kind)
{
    double u = test_rng_uniform(0.0f, 1.0f);
    switch (kind) {
    case POSITIVE: return 0.5 + 1.5 * u;
    case AWAY_FROM_0: return (test_rng_next() & 1 ? 1 : -1) * (0.2 + 1.6 * u);
    case SMALL: return 0.1 + 0.8 * u;
    case ABOVE_1: return 1.0 + u;
    default: return -2.0 + 4.0 * u;
    }
}

/* A tensor of s's shape holding host values (row-major in s's shape). */
static wt_tensor *make_input(wt_context *ctx, const spec *s, const float *f, const int32_t *idx)
{
    wt_tensor *t = NULL, *v = NULL;
    if (s->kind == INDEX) {
        if (wt_tensor_from_data(ctx, WT_I32, s->ndim, s->shape, idx, &t) != WT_OK) return NULL;
        return t;
    }
    if (!s->transposed) {
        if (wt_tensor_from_data(ctx, WT_F32, s->ndim, s->shape, f, &t) != WT_OK) return NULL;
        return t;
    }
    /* Stored as the transpose, viewed back: a non-contiguous input. */
    int64_t sh[5];
    memcpy(sh, s->shape, sizeof sh);
    int a = s->ndim - 2, b = s->ndim - 1;
    sh[a] = s->shape[b], sh[b] = s->shape[a];
    int64_t n = numel_of(s), rows = s->shape[a], cols = s->shape[b], plane = rows * cols;
    float *tr = malloc((size_t)n * sizeof *tr);
    for (int64_t p = 0; p < n / plane; p++)
        for (int64_t i = 0; i < rows; i++)
            for (int64_t j = 0; j < cols; j++) tr[p * plane + j * rows + i] = f[p * plane + i * cols + j];
    wt_status st = wt_tensor_from_data(ctx, WT_F32, s->ndim, sh, tr, &t);
    free(tr);
    if (st != WT_OK) return NULL;
    st = wt_transpose(t, a, b, &v);
    wt_tensor_release(t);
    return st == WT_OK ? v : NULL;
}

/* sum(r * f(inputs)) in double, on the CPU backend. */
static bool cpu_objective(fwd_fn f, int nin, const spec *sp, float *const *data, int32_t *const *idx,
                          const double *r, int64_t ny, double *out)
{
    wt_tensor *in[6] = {0}, *y = NULL;
    bool ok = true;
    for (int i = 0; i < nin; i++) ok = ok && (in[i] = make_input(g_cpu, &sp[i], data[i], idx[i]));
    if (ok) ok = f(in, &y) == WT_OK && wt_tensor_numel(y) == ny;
    float *yv = ok ? malloc((size_t)(ny ? ny : 1) * sizeof *yv) : NULL;
    if (ok) ok = wt_tensor_read(y, yv, (size_t)ny * sizeof *yv) == WT_OK;
    double s = 0;
    for (int64_t k = 0; ok && k < ny; k++) s += r[k] * (double)yv[k];
    *out = s;
    free(yv);
    wt_tensor_release(y);
    for (int i = 0; i < nin; i++) wt_tensor_release(in[i]);
    return ok;
}

void gradcheck(const char *name, fwd_fn f, int nin, const spec *sp, double rtol, double atol)
{
    float *data[6] = {0};
    int32_t *idx[6] = {0};
    wt_tensor *in[6] = {0}, *y = NULL, *seed = NULL;
    for (int i = 0; i < nin; i++) {
        int64_t n = numel_of(&sp[i]);
        data[i] = malloc((size_t)(n ? n : 1) * sizeof(float));
        idx[i] = malloc((size_t)(n ? n : 1) * sizeof(int32_t));
        for (int64_t k = 0; k < n; k++) {
            data[i][k] = (float)draw(sp[i].kind);
            idx[i][k] = sp[i].index_hi ? (int32_t)(test_rng_next() % (uint64_t)sp[i].index_hi) : 0;
        }
        if (sp[i].kind == SPREAD) {
            for (int64_t k = 0; k < n; k++) data[i][k] = (float)((test_rng_next() & 1 ? 1 : -1) * (0.2 + 0.07 * (double)k));
            for (int64_t k = n - 1; k > 0; k--) {
                int64_t j = (int64_t)(test_rng_next() % (uint64_t)(k + 1));
                float t = data[i][k];
                data[i][k] = data[i][j], data[i][j] = t;
            }
        }
        in[i] = make_input(g_ctx, &sp[i], data[i], idx[i]);
        if (!in[i]) {
            CHECK(false, "%s: input %d: %s", name, i, wt_last_error());
            goto done;
        }
        if (sp[i].grad && wt_tensor_set_requires_grad(in[i], true) != WT_OK) {
            CHECK(false, "%s: set_requires_grad: %s", name, wt_last_error());
            goto done;
        }
    }
    if (f(in, &y) != WT_OK) {
        CHECK(false, "%s: forward: %s", name, wt_last_error());
        goto done;
    }
    if (!CHECK(wt_tensor_requires_grad(y), "%s: the result requires grad", name)) goto done;
    int64_t ny = wt_tensor_numel(y);
    double *r = malloc((size_t)(ny ? ny : 1) * sizeof *r);
    float *rf = malloc((size_t)(ny ? ny : 1) * sizeof *rf);
    for (int64_t k = 0; k < ny; k++) rf[k] = (float)(r[k] = test_rng_uniform(-1.0f, 1.0f));
    wt_status st = wt_tensor_from_data(g_ctx, WT_F32, wt_tensor_ndim(y), wt_tensor_shape(y), rf, &seed);
    if (st == WT_OK) st = wt_backward_ex(1, &y, &seed, NULL);
    if (!CHECK(st == WT_OK, "%s: backward: %s", name, wt_last_error())) {
        free(r);
        free(rf);
        goto done;
    }
    for (int i = 0; i < nin; i++) {
        if (!sp[i].grad) continue;
        int64_t n = numel_of(&sp[i]);
        wt_tensor *g = NULL;
        if (wt_tensor_grad(in[i], &g) != WT_OK || !g) {
            CHECK(false, "%s: input %d has no gradient (%s)", name, i, wt_last_error());
            continue;
        }
        float *gv = malloc((size_t)(n ? n : 1) * sizeof *gv);
        bool ok = wt_tensor_numel(g) == n && wt_tensor_read(g, gv, (size_t)n * sizeof *gv) == WT_OK;
        wt_tensor_release(g);
        for (int64_t k = 0; ok && k < n; k++) {
            float keep = data[i][k];
            double h = 4e-3 * (fabs(keep) > 1 ? fabs(keep) : 1.0), lp = 0, lm = 0;
            data[i][k] = (float)(keep + h);
            double hp = (double)data[i][k] - keep;
            ok = cpu_objective(f, nin, sp, data, idx, r, ny, &lp);
            data[i][k] = (float)(keep - h);
            double hm = keep - (double)data[i][k];
            ok = ok && cpu_objective(f, nin, sp, data, idx, r, ny, &lm);
            data[i][k] = keep;
            double want = (lp - lm) / (hp + hm), got = gv[k];
            if (!ok) break;
            if (!(fabs(got - want) <= atol + rtol * fabs(want))) {
                ok = false;
                CHECK(false, "%s: d/d input %d [%lld] = %.6g, finite differences %.6g", name, i, (long long)k,
                      got, want);
            }
        }
        if (ok) CHECK(true, "%s: input %d", name, i);
        free(gv);
    }
    free(r);
    free(rf);
done:
    wt_tensor_release(seed);
    wt_tensor_release(y);
    for (int i = 0; i < nin; i++) {
        wt_tensor_release(in[i]);
        free(data[i]);
        free(idx[i]);
    }
}

/* ------------------------------------------------ f16 against f32 */

/* The gradient of sum(r * f(inputs)) with every float input f16 (leaves
 * of f16, so activations are f16 and gradients f32) against the same with
 * f32 inputs holding the same values: max |g16 - g32| <= tol * max |g32|.
 * f16 rounds each activation to 11 bits (relative 4.9e-4), so a few
 * roundings on the way give about 1e-3 of the largest gradient; the
 * stated tolerance is 5e-3. */
void f16check(const char *name, fwd_fn f, int nin, const spec *sp)
{
    const double tol = 5e-3;
    float *data[6] = {0};
    int32_t *idx[6] = {0};
    wt_tensor *in32[6] = {0}, *in16[6] = {0}, *y32 = NULL, *y16 = NULL, *seed = NULL;
    bool ok = true;
    for (int i = 0; i < nin && ok; i++) {
        int64_t n = numel_of(&sp[i]);
        data[i] = malloc((size_t)(n ? n : 1) * sizeof(float));
        idx[i] = malloc((size_t)(n ? n : 1) * sizeof(int32_t));
        for (int64_t k = 0; k < n; k++) {
            data[i][k] = (float)draw(sp[i].kind);
            idx[i][k] = sp[i].index_hi ? (int32_t)(test_rng_next() % (uint64_t)sp[i].index_hi) : 0;
        }
        wt_tensor *raw = make_input(g_ctx, &sp[i], data[i], idx[i]), *h = NULL;
        ok = raw != NULL;
        if (ok && sp[i].kind == INDEX) {
            in32[i] = raw;
            wt_tensor_retain(in16[i] = raw);
            continue;
        }
        /* Both see the f16-rounded values. */
        ok = ok && wt_cast(raw, WT_F16, &in16[i]) == WT_OK && wt_cast(in16[i], WT_F32, &h) == WT_OK;
        in32[i] = h;
        wt_tensor_release(raw);
        if (ok && sp[i].grad)
            ok = wt_tensor_set_requires_grad(in32[i], true) == WT_OK && wt_tensor_set_requires_grad(in16[i], true) == WT_OK;
    }
    ok = ok && f(in32, &y32) == WT_OK && f(in16, &y16) == WT_OK;
    if (!CHECK(ok, "%s (f16): forward: %s", name, wt_last_error())) goto done;
    int64_t ny = wt_tensor_numel(y32);
    float *rf = malloc((size_t)(ny ? ny : 1) * sizeof *rf);
    for (int64_t k = 0; k < ny; k++) rf[k] = test_rng_uniform(-1.0f, 1.0f);
    ok = wt_tensor_from_data(g_ctx, WT_F32, wt_tensor_ndim(y32), wt_tensor_shape(y32), rf, &seed) == WT_OK &&
         wt_backward_ex(1, &y32, &seed, NULL) == WT_OK && wt_backward_ex(1, &y16, &seed, NULL) == WT_OK;
    free(rf);
    if (!CHECK(ok, "%s (f16): backward: %s", name, wt_last_error())) goto done;
    for (int i = 0; i < nin; i++) {
        if (!sp[i].grad) continue;
        int64_t n = numel_of(&sp[i]);
        wt_tensor *g32 = NULL, *g16 = NULL;
        float *a = malloc((size_t)(n ? n : 1) * sizeof *a), *b = malloc((size_t)(n ? n : 1) * sizeof *b);
        bool got = wt_tensor_grad(in32[i], &g32) == WT_OK && wt_tensor_grad(in16[i], &g16) == WT_OK && g32 && g16 &&
                   wt_tensor_dtype(g16) == WT_F32 && wt_tensor_read(g32, a, (size_t)n * sizeof *a) == WT_OK &&
                   wt_tensor_read(g16, b, (size_t)n * sizeof *b) == WT_OK;
        double big = 0, err = 0;
        for (int64_t k = 0; got && k < n; k++) {
            big = fmax(big, fabs(a[k]));
            err = fmax(err, fabs((double)a[k] - b[k]));
        }
        CHECK(got && err <= tol * big + 1e-6, "%s (f16 vs f32): input %d: max difference %.3g, %.2g of the largest "
              "gradient %.3g (tolerance %.0e)", name, i, err, big > 0 ? err / big : 0.0, big, tol);
        if (got) printf("f16 vs f32: %s, input %d: %.2g of the largest gradient\n", name, i, big > 0 ? err / big : 0.0);
        wt_tensor_release(g32), wt_tensor_release(g16);
        free(a), free(b);
    }
done:
    wt_tensor_release(seed), wt_tensor_release(y32), wt_tensor_release(y16);
    for (int i = 0; i < nin; i++) {
        wt_tensor_release(in32[i]), wt_tensor_release(in16[i]);
        free(data[i]), free(idx[i]);
    }
}
