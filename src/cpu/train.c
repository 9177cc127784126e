/* CPU kernels of the training ops (front-ends in api/train.c). Inputs are
 * contiguous f32 (labels and indices i32) unless said. */
/* As in rowwise.c: lets GCC turn vmath.h's selects into vector blends
 * (these kernels never read the floating-point flags). */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("no-trapping-math")
#endif

#include "cpu/cpu.h"
#include "cpu/vmath.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static float sigmoidf_(float x) { return 1.0f / (1.0f + expf(-x)); }

/* d/dx x Phi(x) = Phi(x) + x phi(x). */
static inline float gelu_grad(float x)
{
    const float inv_sqrt_2pi = 0.39894228040143268f;
    return 0.5f * vm_two_phi(x) + x * inv_sqrt_2pi * vm_expf(-0.5f * x * x);
}

/* GELU's backward on its own loop: the switch of act_grad per element
 * keeps the compiler from vectorising. */
CPU_MULTIVERSION
static void gelu_backward_span(const float *restrict g, const float *restrict x, float *restrict o, int64_t n)
{
#pragma omp simd
    for (int64_t i = 0; i < n; i++) o[i] = g[i] * gelu_grad(x[i]);
}

static float act_grad(wt_activation act, float x)
{
    switch (act) {
    case WT_ACT_RELU: return x > 0.0f ? 1.0f : 0.0f;
    case WT_ACT_SIGMOID: {
        float s = sigmoidf_(x);
        return s * (1.0f - s);
    }
    case WT_ACT_TANH: {
        float t = tanhf(x);
        return 1.0f - t * t;
    }
    case WT_ACT_SILU: {
        float s = sigmoidf_(x);
        return s * (1.0f + x * (1.0f - s));
    }
    case WT_ACT_GELU: return gelu_grad(x);
    case WT_ACT_GELU_TANH: {
        const float k = 0.79788456080286536f, c = 0.044715f;
        float u = k * (x + c * x * x * x), t = tanhf(u);
        return 0.5f * (1.0f + t) + 0.5f * x * (1.0f - t * t) * k * (1.0f + 3.0f * c * x * x);
    }
    }
    return NAN;
}

wt_status cpu_act_backward(wt_context *ctx, wt_activation act, const wt_tensor *dy, const wt_tensor *x,
                           wt_tensor *out)
{
    const float *g = cpu_data(dy), *xv = cpu_data(x);
    float *o = cpu_data(out);
    int64_t n = out->numel;
    if (act == WT_ACT_GELU) {
        const int64_t chunk = 16384, chunks = (n + chunk - 1) / chunk;
#pragma omp parallel for num_threads(cpu_threads(ctx)) if (n >= CPU_PARALLEL_MIN)
        for (int64_t c = 0; c < chunks; c++) {
            const int64_t lo = c * chunk, len = n - lo < chunk ? n - lo : chunk;
            gelu_backward_span(g + lo, xv + lo, o + lo, len);
        }
        return WT_OK;
    }
#pragma omp parallel for num_threads(cpu_threads(ctx)) if (n >= CPU_PARALLEL_MIN)
    for (int64_t i = 0; i < n; i++) o[i] = g[i] * act_grad(act, xv[i]);
    return WT_OK;
}

static const int32_t *labels_of(const wt_tensor *t) { return (const int32_t *)t->storage->host + t->offset; }

/* max and sum of exp(x - max) of one row. */
static void row_stats(const float *x, int64_t c, float *mx, float *sum)
{
    float m = -INFINITY;
    for (int64_t j = 0; j < c; j++) m = x[j] > m || isnan(x[j]) ? x[j] : m;
    double s = 0;
    for (int64_t j = 0; j < c; j++) s += expf(x[j] - m);
    *mx = m;
    *sum = (float)s;
}

wt_status cpu_cross_entropy(wt_context *ctx, const wt_tensor *logits, const wt_tensor *labels, int32_t ignore,
                            wt_tensor *loss, wt_tensor *valid)
{
    int64_t n = logits->shape[0], c = logits->shape[1];
    const float *x = cpu_data(logits);
    const int32_t *y = labels_of(labels);
    float *l = cpu_data(loss), *v = cpu_data(valid);
#pragma omp parallel for num_threads(cpu_threads(ctx)) if (n * c >= CPU_PARALLEL_MIN)
    for (int64_t i = 0; i < n; i++) {
        const float *row = x + i * c;
        if (y[i] == ignore) {
            l[i] = 0.0f;
            v[i] = 0.0f;
            continue;
        }
        v[i] = 1.0f;
        if (y[i] < 0 || y[i] >= c) {
            l[i] = NAN;
            continue;
        }
        float m, s;
        row_stats(row, c, &m, &s);
        l[i] = m + logf(s) - row[y[i]];
    }
    return WT_OK;
}

wt_status cpu_cross_entropy_backward(wt_context *ctx, const wt_tensor *logits, const wt_tensor *labels,
                                     int32_t ignore, const wt_tensor *scale, wt_tensor *out)
{
    int64_t n = logits->shape[0], c = logits->shape[1];
    const float *x = cpu_data(logits), *sc = cpu_data(scale);
    int64_t sstride = scale->strides[0];
    const int32_t *y = labels_of(labels);
    float *o = cpu_data(out);
#pragma omp parallel for num_threads(cpu_threads(ctx)) if (n * c >= CPU_PARALLEL_MIN)
    for (int64_t i = 0; i < n; i++) {
        const float *row = x + i * c;
        float *orow = o + i * c;
        if (y[i] == ignore) {
            for (int64_t j = 0; j < c; j++) orow[j] = 0.0f;
            continue;
        }
        if (y[i] < 0 || y[i] >= c) {
            for (int64_t j = 0; j < c; j++) orow[j] = NAN;
            continue;
        }
        float m, s, g = sc[i * sstride];
        row_stats(row, c, &m, &s);
        float inv = 1.0f / s;
        for (int64_t j = 0; j < c; j++) orow[j] = (expf(row[j] - m) * inv - (j == y[i] ? 1.0f : 0.0f)) * g;
    }
    return WT_OK;
}

wt_status cpu_scatter_add_rows(wt_context *ctx, const wt_tensor *dy, const wt_tensor *indices, int64_t plane,
                               int64_t plane_rows, wt_tensor *out)
{
    int64_t n = dy->shape[0], d = dy->shape[1], v = out->shape[0];
    const float *g = cpu_data(dy);
    const int32_t *idx = labels_of(indices);
    float *o = cpu_data(out);
    if (plane > 0) {
        /* Planes are independent: one thread per plane, in index order. */
#pragma omp parallel for num_threads(cpu_threads(ctx)) if (n * d >= CPU_PARALLEL_MIN)
        for (int64_t pl = 0; pl < n / plane; pl++)
            for (int64_t i = pl * plane; i < (pl + 1) * plane; i++)
                if (idx[i] >= 0 && idx[i] < plane_rows)
                    for (int64_t j = 0; j < d; j++) o[(pl * plane_rows + idx[i]) * d + j] += g[i * d + j];
        return WT_OK;
    }
    /* Threads split the columns, so each output element has one writer
     * and the sums run in index order: deterministic. */
#pragma omp parallel for num_threads(cpu_threads(ctx)) if (n * d >= CPU_PARALLEL_MIN)
    for (int64_t j = 0; j < d; j++)
        for (int64_t i = 0; i < n; i++)
            if (idx[i] >= 0 && idx[i] < v) o[idx[i] * d + j] += g[i * d + j];
    return WT_OK;
}

/* An optimizer's device scalars (core/node.h, WT_OPT_SCHED_*). */
static uint32_t *sched_words(const wt_tensor *t) { return (uint32_t *)t->storage->host + t->offset; }

static float word_f32(const uint32_t *w, int i)
{
    float f;
    memcpy(&f, &w[i], sizeof f);
    return f;
}

static void set_word_f32(uint32_t *w, int i, float f) { memcpy(&w[i], &f, sizeof f); }

/* sin(pi/2 q) for q in [0, 1]: its Taylor series to q^15 in Horner form
 * (the terms left are below 1e-9), the same operations as the WGSL
 * advance (optimizer_advance.wgsl). */
static float sin_half_pi(float q)
{
    float y = 1.57079632679489662f * q, y2 = y * y;
    float s = -7.6471637318198164759e-13f; /* -1/15! */
    s = s * y2 + 1.6059043836821614599e-10f; /* 1/13! */
    s = s * y2 - 2.5052108385441718775e-8f;  /* 1/11! */
    s = s * y2 + 2.7557319223985890653e-6f;  /* 1/9! */
    s = s * y2 - 1.9841269841269841270e-4f;  /* 1/7! */
    s = s * y2 + 8.3333333333333333333e-3f;  /* 1/5! */
    s = s * y2 - 1.6666666666666666667e-1f;  /* 1/3! */
    s = s * y2 + 1.0f;
    return y * s;
}

/* The schedule's learning rate at step i (from 0) in f32: wt_lr_schedule_at's
 * formulas; cosine as min_lr + (lr - min_lr) sin^2(pi/2 (1 - p)), which
 * equals its (1 + cos(pi p)) / 2 without the cancellation near p = 1. */
static float sched_lr(const uint32_t *w, uint32_t i)
{
    uint32_t warmup = w[WT_OPT_SCHED_WARMUP], total = w[WT_OPT_SCHED_TOTAL];
    float peak = word_f32(w, WT_OPT_SCHED_PEAK), min_lr = word_f32(w, WT_OPT_SCHED_MIN_LR);
    if (i < warmup) return peak * (float)(i + 1u) / (float)warmup;
    uint32_t after = i - warmup;
    if (w[WT_OPT_SCHED_KIND] == WT_LR_STEP) {
        uint32_t k = after / w[WT_OPT_SCHED_STEP_SIZE];
        float base = word_f32(w, WT_OPT_SCHED_GAMMA), r = 1.0f;
        for (; k; k >>= 1, base *= base)
            if (k & 1u) r *= base;
        return peak * r;
    }
    if (w[WT_OPT_SCHED_KIND] == WT_LR_COSINE) {
        float p = 1.0f;
        if (total > warmup) p = fminf((float)after / (float)(total - warmup), 1.0f);
        float s = sin_half_pi(1.0f - p);
        return min_lr + (peak - min_lr) * (s * s);
    }
    return peak;
}

static void optimizer_advance(const wt_optimizer_update *u)
{
    uint32_t *w = sched_words(u->param);
    uint32_t t = w[WT_OPT_SCHED_T] + 1u;
    w[WT_OPT_SCHED_T] = t;
    float c1 = word_f32(w, WT_OPT_SCHED_BIAS1), c2 = word_f32(w, WT_OPT_SCHED_BIAS2);
    set_word_f32(w, WT_OPT_SCHED_BIAS1, c1 + u->beta1 * (1.0f - c1));
    set_word_f32(w, WT_OPT_SCHED_BIAS2, c2 + u->beta2 * (1.0f - c2));
    set_word_f32(w, WT_OPT_SCHED_LR, w[WT_OPT_SCHED_ON] ? sched_lr(w, t - 1u) : word_f32(w, WT_OPT_SCHED_SET_LR));
}

/* Clipping's factor min(1, max_norm / (norm + 1e-6)), a NaN kept (as
 * PyTorch's clamp keeps it): the clip kernel's and the clipped step's. */
static float clip_factor(float norm, float max_norm)
{
    const float q = max_norm / (norm + 1e-6f);
    return isnan(q) ? q : fminf(q, 1.0f);
}

wt_status cpu_optimizer_step(wt_context *ctx, const wt_optimizer_update *u)
{
    if (u->kind == WT_OPT_ADVANCE) {
        optimizer_advance(u);
        return WT_OK;
    }
    float *p = cpu_data(u->param), *m = u->m ? cpu_data(u->m) : NULL, *v = u->v ? cpu_data(u->v) : NULL;
    const float *g = cpu_data(u->grad);
    int64_t n = u->param->numel;
    /* The step's scalars: the optimizer's on the device, else the node's. */
    float lr = u->lr, bias1 = u->bias1, bias2 = u->bias2, dampening = u->dampening;
    float clip = 1.0f;
    if (u->clip_norm) {
        if (u->clip_norm->dtype != WT_F32) return wt_fail(WT_ERR_UNSUPPORTED, "cpu optimizer step: the norm must be f32");
        clip = clip_factor(cpu_data(u->clip_norm)[0], u->max_norm);
    }
    if (u->sched) {
        const uint32_t *w = sched_words(u->sched);
        lr = word_f32(w, WT_OPT_SCHED_LR);
        bias1 = word_f32(w, WT_OPT_SCHED_BIAS1);
        bias2 = word_f32(w, WT_OPT_SCHED_BIAS2);
        /* The buffer is zeros at first: without dampening on that step it
         * becomes the first gradient, as PyTorch starts it. */
        if (w[WT_OPT_SCHED_T] == 1u) dampening = 0.0f;
    }
    if (u->kind == WT_OPT_SGD) {
#pragma omp parallel for num_threads(cpu_threads(ctx)) if (n >= CPU_PARALLEL_MIN)
        for (int64_t i = 0; i < n; i++) {
            float gi = g[i] * clip + u->weight_decay * p[i];
            if (m) {
                float b = u->momentum * m[i] + (1.0f - dampening) * gi;
                m[i] = b;
                gi = u->nesterov ? gi + u->momentum * b : b;
            }
            p[i] -= lr * gi;
        }
    } else {
#pragma omp parallel for num_threads(cpu_threads(ctx)) if (n >= CPU_PARALLEL_MIN)
        for (int64_t i = 0; i < n; i++) {
            float gi = g[i] * clip;
            float pi = p[i] * (1.0f - lr * u->weight_decay);
            float mi = u->beta1 * m[i] + (1.0f - u->beta1) * gi;
            float vi = u->beta2 * v[i] + (1.0f - u->beta2) * gi * gi;
            m[i] = mi;
            v[i] = vi;
            p[i] = pi - lr * (mi / bias1) / (sqrtf(vi / bias2) + u->eps);
        }
    }
    return WT_OK;
}

/* g[0..2] (NULL: absent) *= min(1, max_norm / (norm + 1e-6)) in place, in
 * f32 as the WebGPU kernel computes it; a NaN factor (a NaN norm) is
 * kept, as PyTorch's clamp keeps it. */
wt_status cpu_grad_clip_scale(wt_context *ctx, const wt_tensor *norm, double max_norm, wt_tensor *const g[3])
{
    if (norm->dtype != WT_F32) return wt_fail(WT_ERR_UNSUPPORTED, "cpu grad_clip_scale: f32 tensors only");
    for (int k = 0; k < 3; k++)
        if (g[k] && g[k]->dtype != WT_F32) return wt_fail(WT_ERR_UNSUPPORTED, "cpu grad_clip_scale: f32 tensors only");
    const float s = clip_factor(cpu_data(norm)[0], (float)max_norm);
    for (int k = 0; k < 3; k++) {
        if (!g[k]) continue;
        float *x = cpu_data(g[k]);
        int64_t n = g[k]->numel;
#pragma omp parallel for num_threads(cpu_threads(ctx)) if (n >= CPU_PARALLEL_MIN)
        for (int64_t i = 0; i < n; i++) x[i] *= s;
    }
    return WT_OK;
}

/* out[k] = the 2-norm of x[k] (f32) for the first count of x, summed in
 * double. */
wt_status cpu_grad_norms(wt_context *ctx, int count, const wt_tensor *const x[6], wt_tensor *out)
{
    if (out->dtype != WT_F32 || out->numel < count)
        return wt_fail(WT_ERR_UNSUPPORTED, "cpu grad_norms: out must be f32 with %d elements", count);
    for (int k = 0; k < count; k++)
        if (x[k]->dtype != WT_F32) return wt_fail(WT_ERR_UNSUPPORTED, "cpu grad_norms: f32 tensors only");
    for (int k = 0; k < count; k++) {
        const float *v = cpu_data(x[k]);
        int64_t n = x[k]->numel;
        double acc = 0;
#pragma omp parallel for num_threads(cpu_threads(ctx)) reduction(+ : acc) if (n >= CPU_PARALLEL_MIN)
        for (int64_t i = 0; i < n; i++) acc += (double)v[i] * v[i];
        cpu_data(out)[k] = (float)sqrt(acc);
    }
    return WT_OK;
}
