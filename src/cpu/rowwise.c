/* Row-wise ops on the CPU: softmax, layernorm, rmsnorm. One pass to gather
 * the row statistics (in double, so long rows stay accurate), one pass to
 * write; rows run in parallel. */
/* As in elementwise.c: lets GCC turn vmath.h's selects into vector
 * blends (these kernels never read the floating-point flags). */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("no-trapping-math")
#endif

#include "cpu/cpu.h"
#include "cpu/vmath.h"

#include <math.h>

/* The largest non-NaN element (-inf for none). A compare and select, not
 * fmaxf: GCC calls libm's fmaxf once an element (its NaN rule keeps it
 * out of vector code), which made this pass the slowest of softmax's
 * three. NaNs need no care here: they reach the output through exp. */
CPU_MULTIVERSION
static float row_max(const float *restrict x, int64_t n)
{
    float m = -INFINITY;
#pragma omp simd reduction(max : m)
    for (int64_t j = 0; j < n; j++) {
        const float v = x[j];
        m = v > m ? v : m;
    }
    return m;
}

/* o = exp(x - m), returning the sum. x may be o itself. */
CPU_MULTIVERSION
static float exp_shifted(const float *x, float m, float *o, int64_t n)
{
    float s = 0.0f;
#pragma omp simd reduction(+ : s)
    for (int64_t j = 0; j < n; j++) {
        float e = vm_expf(x[j] - m);
        o[j] = e;
        s += e;
    }
    return s;
}

CPU_MULTIVERSION
static void scale_row(float *restrict o, float f, int64_t n)
{
#pragma omp simd
    for (int64_t j = 0; j < n; j++) o[j] *= f;
}

static void softmax_row(const float *x, int64_t sx, float *restrict o, int64_t C)
{
    /* A strided row is gathered into the output first, so the passes below
     * always run over contiguous memory. */
    if (sx != 1) {
        for (int64_t j = 0; j < C; j++) o[j] = x[j * sx];
        x = o;
    }
    float m = row_max(x, C);
    /* A row of -inf (or all NaN) has no finite maximum; subtracting 0 keeps
     * exp's result what the math gives (NaN for such rows). Every term is
     * in [0, 1] after the shift, so a float sum split over the SIMD lanes
     * loses nothing that matters at f32 output precision. */
    if (isinf(m)) m = m > 0 ? m : 0.0f;
    float s = exp_shifted(x, m, o, C);
    scale_row(o, 1.0f / s, C);
}

/* log_softmax: (x - max) - log(sum(exp(x - max))), the sum in double so
 * that rows of 100,000s stay accurate; x - max first, exact near the max
 * however large x is. */
static void log_softmax_row(const float *x, int64_t sx, float *restrict o, int64_t C)
{
    if (sx != 1) {
        for (int64_t j = 0; j < C; j++) o[j] = x[j * sx];
        x = o;
    }
    float m = row_max(x, C);
    if (isinf(m)) m = m > 0 ? m : 0.0f; /* as softmax_row: a row of -inf gives NaN */
    double s = 0.0;
    for (int64_t j = 0; j < C; j++) s += vm_expf(x[j] - m);
    const float ls = (float)log(s);
    for (int64_t j = 0; j < C; j++) o[j] = (x[j] - m) - ls;
}

/* The passes of norm_row over a contiguous row, for the vectoriser: a
 * double sum in program order cannot be split over SIMD lanes, an omp simd
 * reduction can (the order of a double sum of floats moves nothing that
 * survives the rounding to f32). */
CPU_MULTIVERSION
static void sums_contiguous(const float *restrict x, int64_t n, double *sum, double *sum_sq)
{
    double s = 0.0, s2 = 0.0;
#pragma omp simd reduction(+ : s, s2)
    for (int64_t j = 0; j < n; j++) {
        const double v = x[j];
        s += v;
        s2 += v * v;
    }
    *sum = s, *sum_sq = s2;
}

CPU_MULTIVERSION
static double squared_deviations(const float *restrict x, int64_t n, double mean)
{
    double var = 0.0;
#pragma omp simd reduction(+ : var)
    for (int64_t j = 0; j < n; j++) {
        const double d = x[j] - mean;
        var += d * d;
    }
    return var;
}

CPU_MULTIVERSION
static void normalise_contiguous(const float *restrict x, int64_t n, double mean, double rstd,
                                 const float *restrict w, const float *restrict b, float *restrict o)
{
    if (w && b) {
#pragma omp simd
        for (int64_t j = 0; j < n; j++) o[j] = (float)((x[j] - mean) * rstd) * w[j] + b[j];
    } else {
#pragma omp simd
        for (int64_t j = 0; j < n; j++) {
            float v = (float)((x[j] - mean) * rstd);
            if (w) v *= w[j];
            if (b) v += b[j];
            o[j] = v;
        }
    }
}

static void norm_row(wt_rowwise_op op, const float *x, int64_t sx, const float *w, const float *b,
                     float eps, float *o, int64_t C)
{
    double s = 0.0, s2 = 0.0;
    if (sx == 1) {
        sums_contiguous(x, C, &s, &s2);
        double mean = 0.0, rstd;
        if (op == WT_ROW_LAYERNORM) {
            mean = s / (double)C;
            rstd = 1.0 / sqrt(squared_deviations(x, C, mean) / (double)C + eps);
        } else {
            rstd = 1.0 / sqrt(s2 / (double)C + eps);
        }
        normalise_contiguous(x, C, mean, rstd, w, b, o);
        return;
    }
    for (int64_t j = 0; j < C; j++) {
        double v = x[j * sx];
        s += v;
        s2 += v * v;
    }
    /* The statistics stay in double to the end: (x - mean) * rstd in
     * float would overflow for rows near the top of the f32 range whose
     * normalised values are ordinary. */
    double mean = 0.0, rstd;
    if (op == WT_ROW_LAYERNORM) {
        mean = s / (double)C;
        /* Second pass for the variance: E[x^2] - mu^2 cancels badly when
         * the mean is large against the spread. */
        double var = 0.0;
        for (int64_t j = 0; j < C; j++) {
            double d = x[j * sx] - mean;
            var += d * d;
        }
        rstd = 1.0 / sqrt(var / (double)C + eps);
    } else {
        rstd = 1.0 / sqrt(s2 / (double)C + eps);
    }
    for (int64_t j = 0; j < C; j++) {
        float v = (float)((x[j * sx] - mean) * rstd);
        if (w) v *= w[j];
        if (b) v += b[j];
        o[j] = v;
    }
}

static void one_row(wt_rowwise_op op, const float *x, int64_t sx, const float *w, const float *b, float eps,
                    float *o, int64_t C)
{
    if (op == WT_ROW_SOFTMAX)
        softmax_row(x, sx, o, C);
    else if (op == WT_ROW_LOG_SOFTMAX)
        log_softmax_row(x, sx, o, C);
    else
        norm_row(op, x, sx, w, b, eps, o, C);
}

wt_status cpu_rowwise(wt_context *ctx, wt_rowwise_op op, const wt_tensor *x, const wt_tensor *weight,
                      const wt_tensor *bias, float eps, wt_tensor *out)
{
    if (x->dtype != WT_F32 || out->dtype != WT_F32 || (weight && weight->dtype != WT_F32) ||
        (bias && bias->dtype != WT_F32))
        return wt_fail(WT_ERR_UNSUPPORTED, "cpu rowwise: f32 operands only");
    const int64_t R = x->shape[0], C = x->shape[1], sr = x->strides[0], sc = x->strides[1];
    const float *xp = cpu_data(x);
    const float *w = weight ? cpu_data(weight) : NULL, *b = bias ? cpu_data(bias) : NULL;
    float *op_ = cpu_data(out);
    if (R * C < CPU_PARALLEL_MIN) {
        /* Inline: a parallel region, even of one thread, costs more than a
         * small op. */
        for (int64_t r = 0; r < R; r++)
            one_row(op, xp + r * sr, sc, w, b, eps, op_ + r * C, C);
        return WT_OK;
    }
#pragma omp parallel for num_threads(cpu_threads(ctx)) schedule(static)
    for (int64_t r = 0; r < R; r++)
        one_row(op, xp + r * sr, sc, w, b, eps, op_ + r * C, C);
    return WT_OK;
}

/* --- the backward of layer and RMS norm, one pass a row ---
 * With x^ = (x - mean) r (RMS: x r), r = 1 / sqrt(var + eps) and
 * gw = dy w: dx = r (gw - x^ mean(gw x^) - mean(gw)) (RMS: without the
 * last term). dy x^ is an output too when asked: the weight's gradient is
 * its column sum. The composed rule took about 14 elementwise ops and
 * reductions, each a pass over the activations. x^ is kept in dx's row
 * until dx overwrites it, so no scratch is needed. */

/* x^ into xhat (and dy x^ into gxhat when given); the sums of gw and
 * gw x^ (in double). */
CPU_MULTIVERSION
static void norm_grad_sums(const float *restrict g, const float *restrict x, const float *restrict w, int64_t n,
                           double mean, double rstd, float *restrict xhat, float *restrict gxhat, double *sum_gw,
                           double *sum_gw_xhat)
{
    double a = 0.0, b = 0.0;
    if (w) {
#pragma omp simd reduction(+ : a, b)
        for (int64_t j = 0; j < n; j++) {
            const float xh = (float)((x[j] - mean) * rstd), gw = g[j] * w[j];
            xhat[j] = xh;
            a += gw;
            b += (double)gw * xh;
        }
    } else {
#pragma omp simd reduction(+ : a, b)
        for (int64_t j = 0; j < n; j++) {
            const float xh = (float)((x[j] - mean) * rstd);
            xhat[j] = xh;
            a += g[j];
            b += (double)g[j] * xh;
        }
    }
    if (gxhat) {
#pragma omp simd
        for (int64_t j = 0; j < n; j++) gxhat[j] = g[j] * xhat[j];
    }
    *sum_gw = a, *sum_gw_xhat = b;
}

/* dx from x^ stored in dx itself (read, then overwritten, element by element). */
CPU_MULTIVERSION
static void norm_grad_dx(const float *restrict g, const float *restrict w, int64_t n, float rstd, float mean_gw,
                         float mean_gw_xhat, float *restrict dx)
{
    if (w) {
#pragma omp simd
        for (int64_t j = 0; j < n; j++) dx[j] = rstd * (g[j] * w[j] - dx[j] * mean_gw_xhat - mean_gw);
    } else {
#pragma omp simd
        for (int64_t j = 0; j < n; j++) dx[j] = rstd * (g[j] - dx[j] * mean_gw_xhat - mean_gw);
    }
}

static void norm_backward_row(bool rms, const float *g, const float *x, const float *w, float eps, int64_t C,
                              float *dx, float *gxhat)
{
    double s = 0.0, s2 = 0.0;
    sums_contiguous(x, C, &s, &s2);
    const double mean = rms ? 0.0 : s / (double)C;
    const double var = rms ? s2 / (double)C : squared_deviations(x, C, mean) / (double)C;
    const double rstd = 1.0 / sqrt(var + eps);
    double sum_gw = 0.0, sum_gw_xhat = 0.0;
    norm_grad_sums(g, x, w, C, mean, rstd, dx, gxhat, &sum_gw, &sum_gw_xhat);
    norm_grad_dx(g, w, C, (float)rstd, rms ? 0.0f : (float)(sum_gw / (double)C), (float)(sum_gw_xhat / (double)C),
                 dx);
}

wt_status cpu_norm_backward(wt_context *ctx, wt_rowwise_op op, const wt_tensor *dy, const wt_tensor *x,
                            const wt_tensor *weight, float eps, wt_tensor *dx, wt_tensor *gxhat)
{
    const wt_tensor *all[5] = {dy, x, weight, dx, gxhat};
    for (int i = 0; i < 5; i++)
        if (all[i] && all[i]->dtype != WT_F32) return wt_fail(WT_ERR_UNSUPPORTED, "cpu norm backward: f32 operands only");
    const bool rms = op == WT_ROW_RMSNORM;
    const int64_t R = x->shape[0], C = x->shape[1];
    const float *g = cpu_data(dy), *xp = cpu_data(x), *w = weight ? cpu_data(weight) : NULL;
    float *dxp = cpu_data(dx), *gxp = gxhat ? cpu_data(gxhat) : NULL;
#pragma omp parallel for num_threads(cpu_threads(ctx)) schedule(static) if (R * C >= CPU_PARALLEL_MIN)
    for (int64_t r = 0; r < R; r++)
        norm_backward_row(rms, g + r * C, xp + r * C, w, eps, C, dxp + r * C, gxp ? gxp + r * C : NULL);
    return WT_OK;
}
