/* Optimizer objects, gradient clipping, learning-rate schedules and
 * gradient accumulation (webtensor.h, "optimizers").
 *
 * Updates are checked against PyTorch's update formulas computed here in
 * double from the same gradients; clipping against the norm computed
 * here; schedules against their closed forms; accumulation over
 * micro-batches against the whole batch's gradients and step; and memory
 * stays flat over training steps. A whole training step captured as a
 * graph and replayed equals the eager steps bit for bit, and the device's
 * scheduled learning rates equal wt_lr_schedule_at's to float rounding. */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static wt_context *g_ctx;

static wt_tensor *param(const float *v, int64_t n)
{
    wt_tensor *t = NULL;
    wt_tensor_from_data(g_ctx, WT_F32, 1, &n, v, &t);
    wt_tensor_set_requires_grad(t, true);
    return t;
}

static bool read_vec(const wt_tensor *t, float *v, int64_t n)
{
    return t && wt_tensor_numel(t) == n && wt_tensor_read(t, v, (size_t)n * sizeof *v) == WT_OK;
}

/* Accumulates d/dw sum(w * x) = x into w's gradient. */
static bool grad_is(wt_tensor *w, const float *x, int64_t n)
{
    wt_tensor *xt = NULL, *p = NULL, *s = NULL;
    bool ok = wt_tensor_from_data(g_ctx, WT_F32, 1, &n, x, &xt) == WT_OK && wt_mul(w, xt, &p) == WT_OK &&
              wt_sum(p, 0, NULL, false, &s) == WT_OK && wt_backward(s) == WT_OK;
    wt_tensor_release(xt), wt_tensor_release(p), wt_tensor_release(s);
    return ok;
}

enum { N = 5, STEPS = 4 };

static float grad_at(int step, int k) { return (float)(0.3 * sin(1.7 * step + 0.9 * k) + 0.1 * (k - 2)); }

/* PyTorch's SGD on the host. */
static void sgd_ref(double *p, double *buf, const double *g0, int t, double lr, double mom, double damp,
                    double wd, bool nesterov)
{
    for (int k = 0; k < N; k++) {
        double g = g0[k] + wd * p[k];
        if (mom > 0) {
            buf[k] = t == 1 ? g : mom * buf[k] + (1 - damp) * g;
            g = nesterov ? g + mom * buf[k] : buf[k];
        }
        p[k] -= lr * g;
    }
}

static void test_sgd(bool nesterov, double damp)
{
    const double lr = 0.1, mom = 0.9, wd = 0.05;
    float init[N] = {0.5f, -1.0f, 2.0f, 0.25f, -0.75f};
    double ref[N], buf[N] = {0};
    for (int k = 0; k < N; k++) ref[k] = init[k];
    wt_tensor *w = param(init, N), *other = param(init, N);
    wt_sgd_options o;
    wt_sgd_options_init(&o);
    o.lr = lr, o.momentum = mom, o.dampening = damp, o.weight_decay = wd, o.nesterov = nesterov;
    wt_optimizer *opt = NULL;
    wt_tensor *both[2] = {w, other};
    bool ok = wt_optimizer_create_sgd(2, both, &o, &opt) == WT_OK;
    for (int t = 1; t <= STEPS && ok; t++) {
        float g[N];
        double gd[N];
        for (int k = 0; k < N; k++) gd[k] = g[k] = grad_at(t, k);
        ok = grad_is(w, g, N) && wt_optimizer_step(opt) == WT_OK && wt_optimizer_zero_grad(opt) == WT_OK;
        sgd_ref(ref, buf, gd, t, lr, mom, damp, wd, nesterov);
    }
    float got[N], untouched[N];
    ok = ok && read_vec(w, got, N) && read_vec(other, untouched, N);
    double err = 0;
    for (int k = 0; ok && k < N; k++) err = fmax(err, fabs(got[k] - ref[k]));
    CHECK(ok && err < 1e-5, "sgd (momentum, %s, dampening %.1f, weight decay): %d steps match PyTorch's formulas "
          "(max error %.2g; %s)", nesterov ? "nesterov" : "no nesterov", damp, STEPS, err, ok ? "" : wt_last_error());
    CHECK(ok && memcmp(untouched, init, sizeof init) == 0, "sgd: a parameter without a gradient is not updated");
    CHECK(wt_optimizer_steps(opt) == STEPS, "sgd: step count %lld", (long long)wt_optimizer_steps(opt));
    wt_optimizer_release(opt);
    wt_tensor_release(w), wt_tensor_release(other);
}

static void test_adamw(void)
{
    const double lr = 0.05, b1 = 0.8, b2 = 0.95, eps = 1e-6, wd = 0.1;
    float init[N] = {0.5f, -1.0f, 2.0f, 0.25f, -0.75f};
    double ref[2][N], m[2][N] = {{0}}, v[2][N] = {{0}};
    wt_tensor *w = param(init, N), *b = param(init, N);
    for (int k = 0; k < N; k++) ref[0][k] = ref[1][k] = init[k];
    wt_adamw_options o;
    wt_adamw_options_init(&o);
    o.lr = lr, o.beta1 = b1, o.beta2 = b2, o.eps = eps, o.weight_decay = wd;
    wt_optimizer *opt = NULL;
    /* b is a group of its own without weight decay. */
    bool ok = wt_optimizer_create_adamw(1, &w, &o, &opt) == WT_OK && wt_optimizer_add_params(opt, 1, &b, 0.0) == WT_OK;
    for (int t = 1; t <= STEPS && ok; t++) {
        float g[N];
        for (int k = 0; k < N; k++) g[k] = grad_at(t, k);
        ok = grad_is(w, g, N) && grad_is(b, g, N) && wt_optimizer_step(opt) == WT_OK &&
             wt_optimizer_zero_grad(opt) == WT_OK;
        for (int j = 0; j < 2; j++)
            for (int k = 0; k < N; k++) {
                double gd = g[k];
                ref[j][k] *= 1 - lr * (j == 0 ? wd : 0.0);
                m[j][k] = b1 * m[j][k] + (1 - b1) * gd;
                v[j][k] = b2 * v[j][k] + (1 - b2) * gd * gd;
                ref[j][k] -= lr * (m[j][k] / (1 - pow(b1, t))) / (sqrt(v[j][k] / (1 - pow(b2, t))) + eps);
            }
    }
    float got[2][N];
    ok = ok && read_vec(w, got[0], N) && read_vec(b, got[1], N);
    double err = 0;
    for (int j = 0; ok && j < 2; j++)
        for (int k = 0; k < N; k++) err = fmax(err, fabs(got[j][k] - ref[j][k]));
    CHECK(ok && err < 2e-5, "adamw (two groups: weight decay 0.1 and 0): %d steps match PyTorch's formulas (max "
          "error %.2g; %s)", STEPS, err, ok ? "" : wt_last_error());
    CHECK(wt_optimizer_add_params(opt, 1, &b, 0.0) == WT_ERR_INVALID_ARGUMENT, "add_params after a step is refused");
    wt_tensor *fresh = param(init, N);
    CHECK(wt_optimizer_add_params(opt, 1, &fresh, 0.0) == WT_ERR_INVALID_ARGUMENT, "add_params after steps: refused");
    wt_optimizer_release(opt);
    opt = NULL;
    wt_tensor *twice[2] = {w, w};
    CHECK(wt_optimizer_create_adamw(2, twice, NULL, &opt) == WT_ERR_INVALID_ARGUMENT && !opt,
          "a parameter listed twice is refused: %s", wt_last_error());
    wt_tensor *plain = NULL;
    wt_tensor_zeros(g_ctx, WT_F32, 1, (int64_t[]){N}, &plain);
    CHECK(wt_optimizer_create_sgd(1, &plain, NULL, &opt) == WT_ERR_INVALID_ARGUMENT && !opt,
          "a tensor that does not require grad is refused: %s", wt_last_error());
    wt_tensor_release(plain), wt_tensor_release(fresh), wt_tensor_release(w), wt_tensor_release(b);
}

static void test_schedules(void)
{
    wt_lr_schedule_options s;
    wt_lr_schedule_options_init(&s);
    s.kind = WT_LR_COSINE, s.lr = 1.0, s.warmup_steps = 4, s.total_steps = 14, s.min_lr = 0.1;
    double lr = 0, err = 0;
    for (int64_t i = 0; i < 20; i++) {
        double want = i < 4 ? (i + 1) / 4.0
                            : 0.1 + 0.45 * (1 + cos(3.14159265358979 * fmin(1.0, (double)(i - 4) / 10.0)));
        if (wt_lr_schedule_at(&s, i, &lr) != WT_OK) err = INFINITY;
        err = fmax(err, fabs(lr - want));
    }
    CHECK(err < 1e-12, "cosine with warm-up: 20 steps match the closed form (%.2g)", err);
    s.kind = WT_LR_STEP, s.warmup_steps = 0, s.step_size = 3, s.gamma = 0.5;
    err = 0;
    for (int64_t i = 0; i < 10; i++) {
        wt_lr_schedule_at(&s, i, &lr);
        err = fmax(err, fabs(lr - pow(0.5, (double)(i / 3))));
    }
    CHECK(err < 1e-12, "step decay: 10 steps match lr * gamma^floor(i / step_size) (%.2g)", err);
    CHECK(wt_lr_schedule_at(&s, -1, &lr) == WT_ERR_INVALID_ARGUMENT && isnan(lr), "a negative step is refused");

    /* The optimizer follows its schedule: plain SGD moves w by lr * g. */
    float init[1] = {0}, g1[1] = {1};
    wt_tensor *w = param(init, 1);
    wt_optimizer *opt = NULL;
    s.kind = WT_LR_COSINE, s.lr = 0.5, s.warmup_steps = 2, s.total_steps = 6, s.min_lr = 0.0;
    bool ok = wt_optimizer_create_sgd(1, &w, NULL, &opt) == WT_OK && wt_optimizer_set_schedule(opt, &s) == WT_OK;
    double moved = 0, want = 0;
    for (int i = 0; i < 6 && ok; i++) {
        double lri = 0;
        wt_lr_schedule_at(&s, i, &lri);
        ok = fabs(wt_optimizer_lr(opt) - lri) < 1e-15 && grad_is(w, g1, 1) && wt_optimizer_step(opt) == WT_OK &&
             wt_optimizer_zero_grad(opt) == WT_OK;
        want -= lri;
    }
    float got = NAN;
    ok = ok && read_vec(w, &got, 1);
    moved = got;
    CHECK(ok && fabs(moved - want) < 1e-6, "the optimizer steps with its schedule's rates (%g, want %g)", moved, want);
    CHECK(wt_optimizer_set_schedule(opt, NULL) == WT_OK && wt_optimizer_set_lr(opt, 0.25) == WT_OK &&
              wt_optimizer_lr(opt) == 0.25,
          "without a schedule the set rate is used");
    wt_optimizer_release(opt);
    wt_tensor_release(w);
}

static void test_clip(void)
{
    float a0[3] = {1, 2, 3}, b0[2] = {4, 5};
    float ga[3] = {3, 0, -4}, gb[2] = {12, 0}; /* norm 13 */
    wt_tensor *a = param(a0, 3), *b = param(b0, 2), *c = param(b0, 2), *norm = NULL;
    wt_tensor *ps[3] = {a, b, c};
    bool ok = grad_is(a, ga, 3) && grad_is(b, gb, 2);
    ok = ok && wt_clip_grad_norm(3, ps, 6.5, &norm) == WT_OK;
    float nv = NAN, got_a[3], got_b[2];
    wt_tensor *g = NULL, *h = NULL;
    ok = ok && read_vec(norm, &nv, 1) && wt_tensor_grad(a, &g) == WT_OK && read_vec(g, got_a, 3) &&
         wt_tensor_grad(b, &h) == WT_OK && read_vec(h, got_b, 2);
    double s = 6.5 / (13 + 1e-6), err = fabs(nv - 13);
    for (int k = 0; k < 3; k++) err = fmax(err, fabs(got_a[k] - ga[k] * s));
    for (int k = 0; k < 2; k++) err = fmax(err, fabs(got_b[k] - gb[k] * s));
    CHECK(ok && err < 1e-5, "clip_grad_norm: total norm 13 (read %g), gradients scaled by 6.5/13 (max error %.2g)",
          nv, err);
    wt_tensor_release(g), wt_tensor_release(h), wt_tensor_release(norm);
    g = NULL;
    /* Below the bound nothing changes (the factor is min(1, ...)). */
    ok = wt_clip_grad_norm(3, ps, 100.0, NULL) == WT_OK && wt_tensor_grad(a, &g) == WT_OK && read_vec(g, got_a, 3);
    CHECK(ok && fabs(got_a[2] - ga[2] * s) < 1e-5, "clip_grad_norm below max_norm leaves gradients as they are");
    wt_tensor_release(g);
    CHECK(wt_clip_grad_norm(3, ps, 0.0, NULL) == WT_ERR_INVALID_ARGUMENT, "max_norm 0 is refused");
    wt_tensor_zero_grad(a), wt_tensor_zero_grad(b);
    norm = NULL;
    ok = wt_clip_grad_norm(3, ps, 1.0, &norm) == WT_OK && read_vec(norm, &nv, 1);
    CHECK(ok && nv == 0, "no gradients: norm 0");
    wt_tensor_release(norm);
    wt_tensor_release(a), wt_tensor_release(b), wt_tensor_release(c);
}

/* Clipping against the global norm and the scaled gradients computed here
 * in double: gradients of several shapes (one of many elements, a 0-d
 * one, an empty one), a parameter without a gradient and, where the
 * backend has f16, an f16 one; the factor below 1 and at 1. */
enum { CLIP_PARAMS = 7 };

static void test_clip_reference(void)
{
    static const int ndims[CLIP_PARAMS] = {2, 1, 3, 0, 1, 1, 1};
    static const int64_t shapes[CLIP_PARAMS][3] = {{257, 33}, {7}, {2, 3, 4}, {0}, {0}, {5}, {9}};
    wt_tensor *ps[CLIP_PARAMS] = {0};
    float *gv[CLIP_PARAMS] = {0};
    int64_t counts[CLIP_PARAMS];
    bool ok = true, has_f16 = true;
    double sumsq = 0;
    for (int i = 0; i < CLIP_PARAMS && ok; i++) {
        int64_t n = 1;
        for (int d = 0; d < ndims[i]; d++) n *= shapes[i][d];
        counts[i] = n;
        gv[i] = calloc((size_t)(n ? n : 1), sizeof(float));
        float *w0 = calloc((size_t)(n ? n : 1), sizeof(float));
        ok = gv[i] && w0;
        for (int64_t k = 0; ok && k < n; k++) {
            w0[k] = (float)(0.01 * (double)k);
            gv[i][k] = (float)(0.5 * sin(0.37 * (double)k + i) + 0.05 * (double)(i - 3));
            if (i == 6) gv[i][k] = (float)ldexp(round(ldexp(gv[i][k], 10)), -10); /* exact in f16 */
        }
        wt_tensor *w = NULL, *x = NULL, *p = NULL, *s = NULL, *x16 = NULL;
        ok = ok && wt_tensor_from_data(g_ctx, WT_F32, ndims[i], shapes[i], w0, &w) == WT_OK;
        if (ok && i == 6) { /* an f16 parameter, where the backend has f16 */
            wt_tensor *h = NULL;
            if (wt_cast(w, WT_F16, &h) != WT_OK) {
                has_f16 = false;
                wt_tensor_release(w);
                w = NULL;
            } else {
                wt_tensor_release(w);
                w = h;
            }
        }
        if (ok && w) {
            ok = wt_tensor_set_requires_grad(w, true) == WT_OK;
            ps[i] = w;
        }
        /* Parameter 5 has no gradient: left out of the norm. */
        if (ok && w && i != 5) {
            ok = wt_tensor_from_data(g_ctx, WT_F32, ndims[i], shapes[i], gv[i], &x) == WT_OK;
            if (ok && i == 6) ok = wt_cast(x, WT_F16, &x16) == WT_OK;
            ok = ok && wt_mul(w, x16 ? x16 : x, &p) == WT_OK && wt_sum(p, 0, NULL, false, &s) == WT_OK &&
                 wt_backward(s) == WT_OK;
            for (int64_t k = 0; ok && k < n; k++) sumsq += (double)gv[i][k] * gv[i][k];
        }
        wt_tensor_release(x), wt_tensor_release(x16), wt_tensor_release(p), wt_tensor_release(s);
        free(w0);
    }
    int np = has_f16 ? CLIP_PARAMS : CLIP_PARAMS - 1;
    double want = sqrt(sumsq);
    for (int round = 0; round < 2 && ok; round++) {
        /* First a bound below the norm (scaled), then above it (unchanged). */
        double max_norm = round == 0 ? want / 3 : want * 4;
        double factor = fmin(1.0, max_norm / (want + 1e-6));
        wt_tensor *norm = NULL, *before = NULL;
        float nv = NAN, kept[7] = {0};
        /* A handle taken before clipping keeps the values it had. */
        ok = wt_tensor_grad(ps[1], &before) == WT_OK;
        ok = ok && wt_clip_grad_norm(np, ps, max_norm, &norm) == WT_OK && read_vec(norm, &nv, 1) &&
             read_vec(before, kept, 7);
        bool kept_ok = true;
        for (int k = 0; k < 7; k++) kept_ok = kept_ok && kept[k] == gv[1][k];
        wt_tensor_release(before);
        double norm_err = fabs(nv - want) / want, grad_err = 0, half_err = 0;
        bool missing_ok = true;
        for (int i = 0; i < np && ok; i++) {
            wt_tensor *g = NULL, *g32 = NULL;
            ok = wt_tensor_grad(ps[i], &g) == WT_OK;
            if (i == 5) {
                missing_ok = g == NULL;
                continue;
            }
            ok = ok && g && wt_cast(g, WT_F32, &g32) == WT_OK;
            float *got = malloc((size_t)(counts[i] ? counts[i] : 1) * sizeof *got);
            ok = ok && got && (counts[i] == 0 || read_vec(g32, got, counts[i]));
            for (int64_t k = 0; ok && k < counts[i]; k++) {
                double ref = (double)gv[i][k] * factor;
                if (i == 6) /* f16 keeps 11 bits */
                    half_err = fmax(half_err, fabs(got[k] - ref) / (fabs(ref) + 1e-3));
                else
                    grad_err = fmax(grad_err, fabs(got[k] - ref) / (fabs(ref) + 1e-6));
                /* The next round starts from the clipped gradients. */
                gv[i][k] = got[k];
            }
            free(got);
            wt_tensor_release(g), wt_tensor_release(g32);
        }
        CHECK(ok && norm_err < 1e-5 && grad_err < 1e-5 && half_err < 1e-3 && missing_ok && kept_ok,
              "clip_grad_norm (%d gradients%s, %s; an earlier handle unchanged): global norm %.9g vs %.9g in double (rel %.2g), gradients x %.6g "
              "(max rel error %.2g f32, %.2g f16)", np - 1, has_f16 ? " one f16" : "",
              round == 0 ? "clipped" : "below the bound", nv, want, norm_err, factor, grad_err, half_err);
        wt_tensor_release(norm);
        sumsq = 0;
        for (int i = 0; i < np; i++)
            if (i != 5)
                for (int64_t k = 0; k < counts[i]; k++) sumsq += (double)gv[i][k] * gv[i][k];
        want = sqrt(sumsq);
    }
    for (int i = 0; i < CLIP_PARAMS; i++) wt_tensor_release(ps[i]), free(gv[i]);
}

/* Whether the profile of g_ctx lists the batched per-gradient norms. */
static bool profile_lists_grad_norms(void)
{
    wt_profile_entry e[64];
    int count = 0;
    bool gpu = false;
    if (wt_context_profile_summary(g_ctx, e, 64, &count, &gpu) != WT_OK) return false;
    for (int i = 0; i < count && i < 64; i++)
        if (strcmp(e[i].name, "grad_norms") == 0) return true;
    return false;
}

/* Clipping of many gradients, with WT_CLIP_NORMS set to knob (NULL: the
 * default, several gradients' norms a kernel): sizes below, at and above
 * one workgroup's chunk of the WebGPU kernel, in batches of one dispatch
 * (small ones only) and of two, against the global norm and the scaled
 * gradients in double. The batched kernel runs by default wherever the
 * backend can bind it, never with "each". */
enum { MANY_PARAMS = 15 };

static void test_clip_many(const char *knob)
{
    static const int64_t sizes[MANY_PARAMS] = {1, 3, 384, 4096, 4097, 25700, 7, 1536, 9000, 2, 65, 40000, 12, 384, 5};
    wt_tensor *ps[MANY_PARAMS] = {0};
    float *gv[MANY_PARAMS] = {0};
    double sumsq = 0;
    bool ok = true;
    if (knob) setenv("WT_CLIP_NORMS", knob, 1);
    for (int i = 0; i < MANY_PARAMS && ok; i++) {
        int64_t n = sizes[i];
        gv[i] = malloc((size_t)n * sizeof(float));
        float *w0 = calloc((size_t)n, sizeof(float));
        ok = gv[i] && w0;
        for (int64_t k = 0; ok && k < n; k++) {
            gv[i][k] = (float)(0.3 * cos(0.11 * (double)k + 0.7 * i) + 0.01 * (double)(i % 5));
            sumsq += (double)gv[i][k] * gv[i][k];
        }
        ok = ok && (ps[i] = param(w0, n)) != NULL && grad_is(ps[i], gv[i], n);
        free(w0);
    }
    double want = sqrt(sumsq), max_norm = want / 5, factor = max_norm / (want + 1e-6);
    wt_tensor *norm = NULL;
    float nv = NAN;
    ok = ok && wt_context_profile_begin(g_ctx) == WT_OK;
    ok = ok && wt_clip_grad_norm(MANY_PARAMS, ps, max_norm, &norm) == WT_OK && read_vec(norm, &nv, 1);
    ok = wt_context_profile_end(g_ctx) == WT_OK && ok;
    bool batched = ok && profile_lists_grad_norms();
    /* A WebGPU device that binds fewer than seven storage buffers a
     * stage has no batched kernel. */
    wt_adapter_info info;
    bool can_batch = wt_context_adapter_info(g_ctx, &info) != WT_OK || info.max_storage_buffers_per_shader_stage >= 7;
    double grad_err = 0;
    for (int i = 0; i < MANY_PARAMS && ok; i++) {
        wt_tensor *g = NULL;
        float *got = malloc((size_t)sizes[i] * sizeof *got);
        ok = got && wt_tensor_grad(ps[i], &g) == WT_OK && read_vec(g, got, sizes[i]);
        for (int64_t k = 0; ok && k < sizes[i]; k++)
            grad_err = fmax(grad_err, fabs(got[k] - gv[i][k] * factor) / (fabs(gv[i][k] * factor) + 1e-6));
        free(got);
        wt_tensor_release(g);
    }
    double norm_err = fabs(nv - want) / want;
    bool expect = knob == NULL && can_batch;
    CHECK(ok && norm_err < 1e-5 && grad_err < 1e-5 && batched == expect,
          "clip_grad_norm of %d gradients (WT_CLIP_NORMS=%s): norm %.9g vs %.9g in double (rel %.2g), gradients "
          "x %.6g (max rel error %.2g), batched norms kernel %s (expected %s)",
          MANY_PARAMS, knob ? knob : "default", nv, want, norm_err, factor, grad_err, batched ? "ran" : "did not run",
          expect ? "to run" : "not to");
    wt_tensor_release(norm);
    for (int i = 0; i < MANY_PARAMS; i++) wt_tensor_release(ps[i]), free(gv[i]);
    if (knob) unsetenv("WT_CLIP_NORMS");
}

/* wt_optimizer_step_clipped against wt_optimizer_clip_grad_norm then
 * wt_optimizer_step on a copy of the same parameters and gradients (AdamW
 * and SGD with momentum, three steps, the bound below the norm and above
 * it): the same parameters to f32 rounding, the same total norm, and the
 * gradients left as backward made them. */
enum { SC_PARAMS = 8 };

static void test_step_clipped(bool adamw)
{
    static const int64_t sizes[SC_PARAMS] = {3, 384, 5000, 1, 12, 700, 64, 9};
    wt_tensor *a[SC_PARAMS] = {0}, *b[SC_PARAMS] = {0};
    float *gv[SC_PARAMS] = {0}, *w0[SC_PARAMS] = {0};
    bool ok = true;
    for (int i = 0; i < SC_PARAMS && ok; i++) {
        gv[i] = malloc((size_t)sizes[i] * sizeof(float));
        w0[i] = malloc((size_t)sizes[i] * sizeof(float));
        ok = gv[i] && w0[i];
        for (int64_t k = 0; ok && k < sizes[i]; k++) {
            w0[i][k] = (float)(0.1 * sin(0.3 * (double)k + i));
            gv[i][k] = (float)(0.4 * cos(0.17 * (double)k + 1.3 * i));
        }
        ok = ok && (a[i] = param(w0[i], sizes[i])) != NULL && (b[i] = param(w0[i], sizes[i])) != NULL;
    }
    wt_optimizer *oa = NULL, *ob = NULL;
    if (adamw) {
        wt_adamw_options o;
        wt_adamw_options_init(&o);
        o.lr = 0.05f;
        ok = ok && wt_optimizer_create_adamw(SC_PARAMS, a, &o, &oa) == WT_OK &&
             wt_optimizer_create_adamw(SC_PARAMS, b, &o, &ob) == WT_OK;
    } else {
        wt_sgd_options o;
        wt_sgd_options_init(&o);
        o.lr = 0.05f;
        o.momentum = 0.9f;
        o.weight_decay = 0.01f;
        ok = ok && wt_optimizer_create_sgd(SC_PARAMS, a, &o, &oa) == WT_OK &&
             wt_optimizer_create_sgd(SC_PARAMS, b, &o, &ob) == WT_OK;
    }
    double param_err = 0, norm_err = 0;
    bool grads_kept = true;
    for (int round = 0; round < 3 && ok; round++) {
        for (int i = 0; i < SC_PARAMS && ok; i++)
            ok = grad_is(a[i], gv[i], sizes[i]) && grad_is(b[i], gv[i], sizes[i]);
        /* Rounds 0 and 2 clip (the gradients' norm is about 30), 1 does not. */
        double max_norm = round == 1 ? 1000.0 : 2.0;
        wt_tensor *na = NULL, *nb = NULL;
        float va = NAN, vb = NAN;
        ok = ok && wt_optimizer_step_clipped(oa, max_norm, &na) == WT_OK &&
             wt_optimizer_clip_grad_norm(ob, max_norm, &nb) == WT_OK && wt_optimizer_step(ob) == WT_OK &&
             read_vec(na, &va, 1) && read_vec(nb, &vb, 1);
        norm_err = fmax(norm_err, fabs(va - vb) / fabs(vb));
        for (int i = 0; i < SC_PARAMS && ok; i++) {
            float *pa = malloc((size_t)sizes[i] * sizeof(float)), *pb = malloc((size_t)sizes[i] * sizeof(float));
            float *ga = malloc((size_t)sizes[i] * sizeof(float));
            wt_tensor *g = NULL;
            ok = pa && pb && ga && read_vec(a[i], pa, sizes[i]) && read_vec(b[i], pb, sizes[i]) &&
                 wt_tensor_grad(a[i], &g) == WT_OK && read_vec(g, ga, sizes[i]);
            for (int64_t k = 0; ok && k < sizes[i]; k++) {
                param_err = fmax(param_err, fabs(pa[k] - pb[k]) / (fabs(pb[k]) + 1e-3));
                grads_kept = grads_kept && ga[k] == gv[i][k];
            }
            wt_tensor_release(g);
            free(pa), free(pb), free(ga);
        }
        wt_tensor_release(na), wt_tensor_release(nb);
        ok = ok && wt_optimizer_zero_grad(oa) == WT_OK && wt_optimizer_zero_grad(ob) == WT_OK;
    }
    CHECK(ok && param_err < 1e-6 && norm_err < 1e-6 && grads_kept,
          "step_clipped (%s, 3 steps, clipped and not) equals clip_grad_norm then step: params max rel diff %.2g, "
          "norms %.2g, gradients %s",
          adamw ? "AdamW" : "SGD momentum", param_err, norm_err, grads_kept ? "unchanged" : "CHANGED");
    CHECK(wt_optimizer_step_clipped(oa, 0.0, NULL) == WT_ERR_INVALID_ARGUMENT &&
              wt_optimizer_step_clipped(oa, NAN, NULL) == WT_ERR_INVALID_ARGUMENT,
          "step_clipped refuses max_norm 0 and NaN");
    wt_optimizer_release(oa), wt_optimizer_release(ob);
    for (int i = 0; i < SC_PARAMS; i++) wt_tensor_release(a[i]), wt_tensor_release(b[i]), free(gv[i]), free(w0[i]);
}

/* A two-layer MLP's mean cross-entropy over rows [r0, r1) of x. */
static wt_tensor *mlp_loss(wt_tensor *const *p, wt_tensor *x, wt_tensor *y, int64_t r0, int64_t r1)
{
    wt_tensor *xs = NULL, *ys = NULL, *h = NULL, *a = NULL, *logits = NULL, *loss = NULL;
    if (wt_slice(x, 0, r0, r1, 1, &xs) == WT_OK && wt_slice(y, 0, r0, r1, 1, &ys) == WT_OK &&
        wt_linear(xs, p[0], p[1], &h) == WT_OK && wt_tanh(h, &a) == WT_OK &&
        wt_linear(a, p[2], p[3], &logits) == WT_OK)
        wt_cross_entropy(logits, ys, NULL, &loss);
    wt_tensor_release(xs), wt_tensor_release(ys), wt_tensor_release(h), wt_tensor_release(a);
    wt_tensor_release(logits);
    return loss;
}

enum { B = 8, IN = 3, HID = 6, OUT = 4 };

static void make_mlp(wt_tensor **p, uint64_t seed)
{
    int64_t shapes[4][2] = {{HID, IN}, {HID, 0}, {OUT, HID}, {OUT, 0}};
    for (int k = 0; k < 4; k++) {
        int nd = shapes[k][1] ? 2 : 1;
        wt_tensor *r = NULL;
        wt_randn(g_ctx, WT_F32, nd, shapes[k], seed + (uint64_t)k, &r);
        wt_mul_scalar(r, 0.5, &p[k]);
        wt_tensor_release(r);
        wt_tensor_set_requires_grad(p[k], true);
    }
}

static void test_accumulation(void)
{
    float xv[B * IN];
    int32_t yv[B];
    for (int i = 0; i < B * IN; i++) xv[i] = test_rng_uniform(-1, 1);
    for (int i = 0; i < B; i++) yv[i] = (int32_t)(test_rng_next() % OUT);
    wt_tensor *x = NULL, *y = NULL, *whole[4] = {0}, *micro[4] = {0};
    wt_tensor_from_data(g_ctx, WT_F32, 2, (int64_t[]){B, IN}, xv, &x);
    wt_tensor_from_data(g_ctx, WT_I32, 1, (int64_t[]){B}, yv, &y);
    make_mlp(whole, 40);
    make_mlp(micro, 40);
    wt_adamw_options o;
    wt_adamw_options_init(&o);
    o.lr = 0.01;
    wt_optimizer *ow = NULL, *om = NULL;
    bool ok = wt_optimizer_create_adamw(4, whole, &o, &ow) == WT_OK && wt_optimizer_create_adamw(4, micro, &o, &om) == WT_OK;
    /* The whole batch in one backward; four micro-batches of 2, each loss * 1/4. */
    wt_tensor *l = ok ? mlp_loss(whole, x, y, 0, B) : NULL;
    ok = l && wt_backward(l) == WT_OK;
    wt_tensor_release(l);
    for (int mb = 0; mb < 4 && ok; mb++) {
        wt_tensor *lm = mlp_loss(micro, x, y, 2 * mb, 2 * mb + 2), *ls = NULL;
        ok = lm && wt_mul_scalar(lm, 0.25, &ls) == WT_OK && wt_backward(ls) == WT_OK;
        wt_tensor_release(lm), wt_tensor_release(ls);
    }
    double gerr = 0;
    for (int k = 0; k < 4 && ok; k++) {
        wt_tensor *gw = NULL, *gm = NULL;
        float a[OUT * HID + HID * IN], b[OUT * HID + HID * IN];
        int64_t n = wt_tensor_numel(whole[k]);
        ok = wt_tensor_grad(whole[k], &gw) == WT_OK && wt_tensor_grad(micro[k], &gm) == WT_OK && read_vec(gw, a, n) &&
             read_vec(gm, b, n);
        for (int64_t i = 0; ok && i < n; i++) gerr = fmax(gerr, fabs(a[i] - b[i]) / (1e-3 + fabs(a[i])));
        wt_tensor_release(gw), wt_tensor_release(gm);
    }
    CHECK(ok && gerr < 1e-4, "accumulation: 4 micro-batches (loss / 4) give the whole batch's gradients (max relative "
          "difference %.2g)", gerr);
    ok = ok && wt_optimizer_step(ow) == WT_OK && wt_optimizer_step(om) == WT_OK;
    double perr = 0;
    for (int k = 0; k < 4 && ok; k++) {
        float a[OUT * HID + HID * IN], b[OUT * HID + HID * IN];
        int64_t n = wt_tensor_numel(whole[k]);
        ok = read_vec(whole[k], a, n) && read_vec(micro[k], b, n);
        for (int64_t i = 0; ok && i < n; i++) perr = fmax(perr, fabs(a[i] - b[i]));
    }
    CHECK(ok && perr < 1e-6, "accumulation: the step equals the whole batch's (max difference %.2g)", perr);
    wt_optimizer_release(ow), wt_optimizer_release(om);
    for (int k = 0; k < 4; k++) wt_tensor_release(whole[k]), wt_tensor_release(micro[k]);
    wt_tensor_release(x), wt_tensor_release(y);
}

/* A training loop on the optimizer object: memory flat, loss falls. */
static void test_loop(void)
{
    float xv[B * IN];
    int32_t yv[B];
    for (int i = 0; i < B * IN; i++) xv[i] = test_rng_uniform(-1, 1);
    for (int i = 0; i < B; i++) yv[i] = (int32_t)(i % OUT);
    wt_tensor *x = NULL, *y = NULL, *p[4] = {0};
    wt_tensor_from_data(g_ctx, WT_F32, 2, (int64_t[]){B, IN}, xv, &x);
    wt_tensor_from_data(g_ctx, WT_I32, 1, (int64_t[]){B}, yv, &y);
    make_mlp(p, 7);
    wt_sgd_options o;
    wt_sgd_options_init(&o);
    o.lr = 0.2, o.momentum = 0.9;
    wt_optimizer *opt = NULL;
    bool ok = wt_optimizer_create_sgd(4, p, &o, &opt) == WT_OK;
    wt_memory_stats s0 = {0}, s1 = {0};
    float first = NAN, last = NAN;
    for (int step = 0; step < 60 && ok; step++) {
        wt_scope *sc = NULL;
        wt_tensor *norm = NULL;
        ok = wt_scope_begin(g_ctx, &sc) == WT_OK;
        wt_tensor *loss = ok ? mlp_loss(p, x, y, 0, B) : NULL;
        ok = loss && wt_backward(loss) == WT_OK && wt_optimizer_clip_grad_norm(opt, 5.0, &norm) == WT_OK &&
             wt_optimizer_step(opt) == WT_OK && wt_optimizer_zero_grad(opt) == WT_OK;
        if (ok && step == 0) wt_tensor_read(loss, &first, sizeof first);
        if (ok && step == 59) wt_tensor_read(loss, &last, sizeof last);
        wt_scope_end(sc);
        if (step == 1) wt_context_memory_stats(g_ctx, &s0);
    }
    wt_context_memory_stats(g_ctx, &s1);
    CHECK(ok && last < 0.5f * first, "loop (SGD momentum, clipping, one scope a step): loss %.4f -> %.4f in 60 steps",
          first, last);
    CHECK(s0.live_tensors == s1.live_tensors && s0.live_bytes == s1.live_bytes,
          "loop: live tensors %llu -> %llu, bytes %llu -> %llu from step 2 to 60",
          (unsigned long long)s0.live_tensors, (unsigned long long)s1.live_tensors,
          (unsigned long long)s0.live_bytes, (unsigned long long)s1.live_bytes);
    wt_optimizer_release(opt);
    for (int k = 0; k < 4; k++) wt_tensor_release(p[k]);
    wt_tensor_release(x), wt_tensor_release(y);
}

/* One training step of the MLP on p with opt: forward on x, backward,
 * clipping at 0.5 (it scales: the gradients' norm is above it), the
 * optimizer's step, zero_grad; in a scope of its own. With a grad scaler:
 * backward from the scaled loss, unscale before clipping, the scaler's
 * step. *loss (if asked) is kept beyond the scope. */
static bool mlp_step(wt_tensor *const *p, wt_optimizer *opt, wt_grad_scaler *scaler, wt_tensor *x, wt_tensor *y,
                     wt_tensor **loss_out)
{
    wt_scope *sc = NULL;
    if (wt_scope_begin(g_ctx, &sc) != WT_OK) return false;
    wt_tensor *loss = mlp_loss(p, x, y, 0, B), *scaled = NULL;
    bool ok = loss != NULL;
    if (scaler)
        ok = ok && wt_grad_scaler_scale(scaler, loss, &scaled) == WT_OK && wt_backward(scaled) == WT_OK &&
             wt_grad_scaler_unscale(scaler, opt) == WT_OK && wt_optimizer_clip_grad_norm(opt, 0.5, NULL) == WT_OK &&
             wt_grad_scaler_step(scaler, opt) == WT_OK;
    else
        ok = ok && wt_backward(loss) == WT_OK && wt_optimizer_clip_grad_norm(opt, 0.5, NULL) == WT_OK &&
             wt_optimizer_step(opt) == WT_OK;
    ok = ok && wt_optimizer_zero_grad(opt) == WT_OK;
    if (ok && loss_out) ok = wt_scope_keep(sc, loss) == WT_OK, *loss_out = ok ? loss : NULL;
    wt_scope_end(sc);
    return ok;
}

enum { CAPTURED_STEPS = 12, LATER_STEPS = 3 };

/* A whole training step (forward, backward, clipping, the optimizer's
 * step) captured once and replayed, against the same steps run eagerly on
 * a twin model: the optimizer's step number, scheduled learning rate and
 * bias corrections live on the device, so every replay is the next step.
 * The batch changes every step (written into the captured input). After
 * CAPTURED_STEPS the schedule is dropped and a rate set (both write the
 * device scalars, which later replays read). Bit for bit: the eager step
 * runs the same kernels. With a grad scaler (AdamW): its scale grows every
 * 3 clean steps, and a NaN in one batch skips that step on both models. */
enum { CAPTURE_ADAMW, CAPTURE_SGD, CAPTURE_SCALER };
static void test_captured_step(int mode)
{
    bool adamw = mode != CAPTURE_SGD;
    const char *what = mode == CAPTURE_ADAMW ? "AdamW, warm-up + cosine"
                       : mode == CAPTURE_SGD ? "SGD (momentum, dampening), step decay"
                                             : "AdamW with a grad scaler, a NaN batch skipped";
    float xv[B * IN];
    int32_t yv[B];
    for (int i = 0; i < B; i++) yv[i] = (int32_t)(i % OUT);
    wt_tensor *xe = NULL, *xg = NULL, *y = NULL, *pe[4] = {0}, *pg[4] = {0}, *loss_g = NULL;
    wt_tensor_zeros(g_ctx, WT_F32, 2, (int64_t[]){B, IN}, &xe);
    wt_tensor_zeros(g_ctx, WT_F32, 2, (int64_t[]){B, IN}, &xg);
    wt_tensor_from_data(g_ctx, WT_I32, 1, (int64_t[]){B}, yv, &y);
    make_mlp(pe, 90);
    make_mlp(pg, 90);
    wt_optimizer *oe = NULL, *og = NULL;
    wt_lr_schedule_options s;
    wt_lr_schedule_options_init(&s);
    bool ok;
    if (adamw) {
        wt_adamw_options o;
        wt_adamw_options_init(&o);
        o.weight_decay = 0.1;
        ok = wt_optimizer_create_adamw(4, pe, &o, &oe) == WT_OK && wt_optimizer_create_adamw(4, pg, &o, &og) == WT_OK;
        s.kind = WT_LR_COSINE, s.lr = 0.05, s.warmup_steps = 3, s.total_steps = 10, s.min_lr = 0.002;
    } else {
        wt_sgd_options o;
        wt_sgd_options_init(&o);
        o.momentum = 0.9, o.dampening = 0.3, o.weight_decay = 0.01;
        ok = wt_optimizer_create_sgd(4, pe, &o, &oe) == WT_OK && wt_optimizer_create_sgd(4, pg, &o, &og) == WT_OK;
        s.kind = WT_LR_STEP, s.lr = 0.3, s.warmup_steps = 2, s.step_size = 3, s.gamma = 0.5;
    }
    ok = ok && wt_optimizer_set_schedule(oe, &s) == WT_OK && wt_optimizer_set_schedule(og, &s) == WT_OK;
    wt_grad_scaler *se = NULL, *sg = NULL;
    if (mode == CAPTURE_SCALER) {
        wt_grad_scaler_options so;
        wt_grad_scaler_options_init(&so);
        so.init_scale = 256, so.growth_interval = 3;
        ok = ok && wt_grad_scaler_create(g_ctx, &so, &se) == WT_OK && wt_grad_scaler_create(g_ctx, &so, &sg) == WT_OK;
    }
    wt_graph *g = NULL;
    int same_losses = 0, steps = 0;
    for (int step = 0; step < CAPTURED_STEPS + LATER_STEPS && ok; step++, steps++) {
        if (step == CAPTURED_STEPS)
            ok = wt_optimizer_set_schedule(oe, NULL) == WT_OK && wt_optimizer_set_schedule(og, NULL) == WT_OK &&
                 wt_optimizer_set_lr(oe, 0.004) == WT_OK && wt_optimizer_set_lr(og, 0.004) == WT_OK;
        for (int i = 0; i < B * IN; i++) xv[i] = test_rng_uniform(-1, 1);
        if (mode == CAPTURE_SCALER && step == 5) xv[4] = NAN;
        ok = ok && wt_tensor_write(xe, xv, sizeof xv) == WT_OK && wt_tensor_write(xg, xv, sizeof xv) == WT_OK;
        wt_tensor *loss_e = NULL;
        ok = ok && mlp_step(pe, oe, se, xe, y, &loss_e);
        if (ok && !g) {
            ok = wt_graph_begin(g_ctx) == WT_OK;
            bool stepped = ok && mlp_step(pg, og, sg, xg, y, &loss_g);
            ok = wt_graph_end(g_ctx, &g) == WT_OK && stepped;
        } else if (ok) {
            ok = wt_graph_replay(g) == WT_OK;
        }
        float le = NAN, lg = NAN;
        ok = ok && wt_tensor_read(loss_e, &le, sizeof le) == WT_OK && wt_tensor_read(loss_g, &lg, sizeof lg) == WT_OK;
        if (ok && (memcmp(&le, &lg, sizeof le) == 0 || (isnan(le) && isnan(lg)))) same_losses++;
        wt_tensor_release(loss_e);
    }
    CHECK(ok && same_losses == steps, "captured step (%s): %d of %d replayed losses equal the eager steps' bit for bit%s%s",
          what, same_losses, steps, ok ? "" : ": ", ok ? "" : wt_last_error());
    int same = 0, total = 0;
    for (int k = 0; k < 4 && ok; k++) {
        float a[OUT * HID + HID * IN], b[OUT * HID + HID * IN];
        int64_t n = wt_tensor_numel(pe[k]);
        ok = read_vec(pe[k], a, n) && read_vec(pg[k], b, n);
        for (int64_t i = 0; ok && i < n; i++, total++) same += memcmp(&a[i], &b[i], sizeof a[i]) == 0;
    }
    CHECK(ok && same == total, "captured step (%s): after %d steps %d of %d parameters equal the eager ones bit for bit",
          what, steps, same, total);
    int64_t device_steps = -1;
    ok = ok && wt_optimizer_read_steps(og, &device_steps) == WT_OK;
    CHECK(ok && device_steps == steps && wt_optimizer_steps(og) == 1 && wt_optimizer_steps(oe) == steps,
          "captured step (%s): the device counts %lld steps (replays included), the host %lld (the captured call)",
          what, (long long)device_steps, (long long)wt_optimizer_steps(og));
    if (mode == CAPTURE_SCALER) {
        wt_tensor *ce = NULL, *cg = NULL;
        float scale_e = NAN, scale_g = NAN;
        ok = ok && wt_grad_scaler_current_scale(se, &ce) == WT_OK && wt_grad_scaler_current_scale(sg, &cg) == WT_OK &&
             wt_tensor_read(ce, &scale_e, sizeof scale_e) == WT_OK && wt_tensor_read(cg, &scale_g, sizeof scale_g) == WT_OK;
        /* 256, x2 after step 3, halved at the NaN (step 6), x2 after 9, 12
         * and 15 (8192 had no step been found not finite). */
        CHECK(ok && scale_e == scale_g && scale_e == 2048, "captured step (%s): the scale is %g replayed, %g eager "
              "(want 2048)", what, scale_g, scale_e);
        wt_tensor_release(ce), wt_tensor_release(cg);
    }
    wt_grad_scaler_release(se), wt_grad_scaler_release(sg);
    wt_graph_release(g);
    wt_tensor_release(loss_g);
    wt_optimizer_release(oe), wt_optimizer_release(og);
    for (int k = 0; k < 4; k++) wt_tensor_release(pe[k]), wt_tensor_release(pg[k]);
    wt_tensor_release(xe), wt_tensor_release(xg), wt_tensor_release(y);
}

/* The device's learning rates against wt_lr_schedule_at (double) step by
 * step: plain SGD with gradient 1 on a parameter at 0 moves it by -lr. */
static void test_device_schedule(wt_lr_schedule_kind kind)
{
    wt_lr_schedule_options s;
    wt_lr_schedule_options_init(&s);
    s.kind = kind, s.lr = 0.75, s.warmup_steps = 4, s.total_steps = 40, s.min_lr = 0.01, s.step_size = 5, s.gamma = 0.7;
    float zero[1] = {0}, one[1] = {1};
    wt_tensor *w = param(zero, 1);
    wt_optimizer *opt = NULL;
    bool ok = wt_optimizer_create_sgd(1, &w, NULL, &opt) == WT_OK && wt_optimizer_set_schedule(opt, &s) == WT_OK;
    double worst = 0;
    for (int i = 0; i < 45 && ok; i++) {
        float before = 0, after = 0;
        double want = 0;
        ok = wt_tensor_write(w, zero, sizeof zero) == WT_OK && grad_is(w, one, 1) && wt_optimizer_step(opt) == WT_OK &&
             wt_optimizer_zero_grad(opt) == WT_OK && read_vec(w, &after, 1) && wt_lr_schedule_at(&s, i, &want) == WT_OK;
        worst = fmax(worst, fabs((double)(before - after) - want) / want);
    }
    CHECK(ok && worst < 4e-7, "the device's %s schedule: 45 rates within %.2g (relative) of wt_lr_schedule_at",
          kind == WT_LR_COSINE ? "cosine" : kind == WT_LR_STEP ? "step" : "constant", worst);
    s.total_steps = (int64_t)1 << 32;
    CHECK(opt && wt_optimizer_set_schedule(opt, &s) == WT_ERR_INVALID_ARGUMENT,
          "a schedule counting past 2^32 steps is refused (the device counts in 32 bits)");
    wt_optimizer_release(opt);
    wt_tensor_release(w);
}

/* Mixed precision: f32 master weights cast to f16 in the forward pass,
 * the loss scaled. */
static wt_tensor *f16_loss(wt_tensor *w, wt_tensor *x, wt_tensor *y)
{
    wt_tensor *w16 = NULL, *x16 = NULL, *logits = NULL, *loss = NULL;
    if (wt_cast(w, WT_F16, &w16) == WT_OK && wt_cast(x, WT_F16, &x16) == WT_OK &&
        wt_linear(x16, w16, NULL, &logits) == WT_OK)
        wt_cross_entropy(logits, y, NULL, &loss);
    wt_tensor_release(w16), wt_tensor_release(x16), wt_tensor_release(logits);
    return loss;
}

static float read_scalar(wt_tensor *t)
{
    float v = NAN;
    if (t) wt_tensor_read(t, &v, sizeof v);
    wt_tensor_release(t);
    return v;
}

static void test_grad_scaler(void)
{
    float xv[B * IN], w0[OUT * IN];
    int32_t yv[B];
    for (int i = 0; i < B * IN; i++) xv[i] = test_rng_uniform(-1, 1);
    for (int i = 0; i < OUT * IN; i++) w0[i] = test_rng_uniform(-0.5f, 0.5f);
    for (int i = 0; i < B; i++) yv[i] = (int32_t)(i % OUT);
    wt_tensor *x = NULL, *y = NULL, *ws = NULL, *wp = NULL;
    wt_tensor_from_data(g_ctx, WT_F32, 2, (int64_t[]){B, IN}, xv, &x);
    wt_tensor_from_data(g_ctx, WT_I32, 1, (int64_t[]){B}, yv, &y);
    wt_tensor_from_data(g_ctx, WT_F32, 2, (int64_t[]){OUT, IN}, w0, &ws);
    wt_tensor_from_data(g_ctx, WT_F32, 2, (int64_t[]){OUT, IN}, w0, &wp);
    wt_tensor_set_requires_grad(ws, true), wt_tensor_set_requires_grad(wp, true);
    wt_adamw_options o;
    wt_adamw_options_init(&o);
    o.lr = 0.01;
    wt_optimizer *os = NULL, *op = NULL;
    wt_grad_scaler *sc = NULL;
    wt_grad_scaler_options so;
    wt_grad_scaler_options_init(&so);
    so.init_scale = 1024.0;
    so.growth_interval = 2;
    bool ok = wt_optimizer_create_adamw(1, &ws, &o, &os) == WT_OK && wt_optimizer_create_adamw(1, &wp, &o, &op) == WT_OK &&
              wt_grad_scaler_create(g_ctx, &so, &sc) == WT_OK;
    /* Three steps with the scaler (a power of two: exact) equal three
     * plain steps; the scale doubles every two clean steps. */
    for (int step = 0; step < 3 && ok; step++) {
        wt_tensor *l1 = f16_loss(ws, x, y), *l2 = f16_loss(wp, x, y), *scaled = NULL;
        ok = l1 && l2 && wt_grad_scaler_scale(sc, l1, &scaled) == WT_OK && wt_backward(scaled) == WT_OK &&
             wt_grad_scaler_step(sc, os) == WT_OK && wt_optimizer_zero_grad(os) == WT_OK && wt_backward(l2) == WT_OK &&
             wt_optimizer_step(op) == WT_OK && wt_optimizer_zero_grad(op) == WT_OK;
        wt_tensor_release(l1), wt_tensor_release(l2), wt_tensor_release(scaled);
    }
    float a[OUT * IN], b[OUT * IN];
    ok = ok && read_vec(ws, a, OUT * IN) && read_vec(wp, b, OUT * IN);
    double err = 0;
    for (int i = 0; ok && i < OUT * IN; i++) err = fmax(err, fabs(a[i] - b[i]));
    CHECK(ok && err < 1e-6, "grad scaler: 3 scaled f16 steps equal 3 plain ones (max difference %.2g; %s)", err,
          ok ? "" : wt_last_error());
    wt_tensor *t = NULL;
    float scale = (wt_grad_scaler_current_scale(sc, &t), read_scalar(t));
    CHECK(scale == 2048.0f, "grad scaler: the scale doubled after 2 clean steps (1024 -> %g)", scale);
    /* An overflow: a loss scaled past f32's range makes every gradient
     * infinite or NaN; the step is skipped (weights and moments as they
     * were) and the scale backs off, all without a read-back. */
    wt_grad_scaler_release(sc);
    sc = NULL;
    so.init_scale = 3e38;
    ok = ok && wt_grad_scaler_create(g_ctx, &so, &sc) == WT_OK;
    wt_tensor *l1 = ok ? f16_loss(ws, x, y) : NULL, *scaled = NULL, *big = NULL;
    /* loss * 3e38 * 4 overflows */
    ok = l1 && wt_mul_scalar(l1, 4.0, &big) == WT_OK && wt_grad_scaler_scale(sc, big, &scaled) == WT_OK &&
         wt_backward(scaled) == WT_OK && wt_grad_scaler_step(sc, os) == WT_OK;
    wt_tensor_release(l1), wt_tensor_release(big), wt_tensor_release(scaled);
    float after[OUT * IN];
    ok = ok && read_vec(ws, after, OUT * IN);
    CHECK(ok && memcmp(after, a, sizeof after) == 0, "grad scaler: an overflowing step is skipped (weights unchanged)");
    float found = (t = NULL, wt_grad_scaler_found_inf(sc, &t), read_scalar(t));
    scale = (t = NULL, wt_grad_scaler_current_scale(sc, &t), read_scalar(t));
    CHECK(found == 1.0f && fabs(scale - 1.5e38) < 1e32, "grad scaler: overflow found (%g), scale backed off to %g", found,
          scale);
    /* The next clean step goes through with the backed-off scale... no:
     * 1.5e38 still overflows; back off until it does not. */
    for (int k = 0; k < 200 && ok && found == 1.0f; k++) {
        wt_optimizer_zero_grad(os);
        wt_tensor *l = f16_loss(ws, x, y), *sl = NULL;
        ok = l && wt_grad_scaler_scale(sc, l, &sl) == WT_OK && wt_backward(sl) == WT_OK &&
             wt_grad_scaler_step(sc, os) == WT_OK;
        wt_tensor_release(l), wt_tensor_release(sl);
        found = (t = NULL, wt_grad_scaler_found_inf(sc, &t), read_scalar(t));
    }
    ok = ok && read_vec(ws, after, OUT * IN);
    CHECK(ok && found == 0.0f && memcmp(after, a, sizeof after) != 0, "grad scaler: once the scale fits, steps apply");
    wt_optimizer_zero_grad(os);
    CHECK(wt_grad_scaler_unscale(sc, os) == WT_OK && wt_grad_scaler_unscale(sc, os) == WT_ERR_INVALID_ARGUMENT,
          "grad scaler: a second unscale of one step is refused");
    wt_grad_scaler_release(sc);
    wt_optimizer_release(os), wt_optimizer_release(op);
    wt_tensor_release(x), wt_tensor_release(y), wt_tensor_release(ws), wt_tensor_release(wp);
}

int main(int argc, char **argv)
{
    test_run run;
    if (!test_begin(&run, "optim", argc, argv)) return run.status;
    g_ctx = run.ctx;
    test_sgd(false, 0.0);
    test_sgd(false, 0.3);
    test_sgd(true, 0.0);
    test_adamw();
    test_schedules();
    test_clip();
    test_clip_reference();
    test_clip_many(NULL);
    test_clip_many("each");
    test_step_clipped(true);
    test_step_clipped(false);
    test_accumulation();
    test_loop();
    test_grad_scaler();
    test_captured_step(CAPTURE_ADAMW);
    test_captured_step(CAPTURE_SGD);
    test_captured_step(CAPTURE_SCALER);
    test_device_schedule(WT_LR_COSINE);
    test_device_schedule(WT_LR_STEP);
    test_device_schedule(WT_LR_CONSTANT);
    test_check_nothing_alive(g_ctx);
    return test_end(&run);
}
