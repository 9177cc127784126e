/* Differential fuzzing of the whole op set: CPU backend against WebGPU.
 *
 * The input is decoded into a short program. Each step picks an op of the
 * public header, its operands from a pool of host tensors (or new ones:
 * 0-d to 4-d, axes of size 0 and 1 included, f32 or f16, values from a
 * seeded generator: uniform, small integers with ties, or special values),
 * a view to apply first (transpose, permute, slice, expand, reshape), and
 * the op's arguments (axes, keepdims, eps, dtype). The operands are made
 * from the same host values on both backends for every step, so one
 * rounding difference does not spread into later steps; the CPU's result
 * goes back into the pool as the operand of later steps.
 *
 * Both backends must return the same status code; on success the same
 * dtype and shape, and values within the op's tolerance (NaN where the
 * other has NaN; infinities equal). Differences the header states are
 * excepted: subnormal f32 values (inputs are generated without them, and a
 * subnormal result may be 0 on WebGPU).
 *
 * Built with libFuzzer (clang, -DWT_FUZZ=ON) this is a fuzz target; built
 * without it, main() replays the files named on the command line (the
 * seed corpus in tests/fuzz/corpus), which the plain test suite does. */
#include "webtensor.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FUZZ_OWN_MAIN /* prints what the replay covered */
#include "fuzz_main.h"

#define MAX_POOL 6
#define MAX_NUMEL 1024
#define MAX_STEPS 12

/* --------------------------------------------------------------- input */

typedef struct reader {
    const uint8_t *p;
    size_t n;
} reader;

static unsigned rd(reader *r)
{
    if (r->n == 0) return 0;
    r->n--;
    return *r->p++;
}

static uint64_t g_rng;
static uint32_t rng_next(void)
{
    g_rng ^= g_rng << 13;
    g_rng ^= g_rng >> 7;
    g_rng ^= g_rng << 17;
    return (uint32_t)(g_rng >> 16);
}

/* -------------------------------------------------------- host tensors */

typedef struct host_tensor {
    wt_dtype dtype;
    int ndim;
    int64_t shape[WT_MAX_DIMS];
    int64_t numel;
    float v[MAX_NUMEL];
} host_tensor;

static host_tensor g_pool[MAX_POOL];
static int g_npool;

static float f16_round(float f)
{
    /* Round through the library's own rules would test it against itself:
     * round here with the C compiler's _Float16 where it exists, else keep
     * the values on the f16 grid by construction (small integers/halves). */
#if defined(__FLT16_MAX__)
    return (float)(_Float16)f;
#else
    return f;
#endif
}

static bool is_subnormal(float f) { return f != 0 && fabsf(f) < 1.17549435e-38f; }

static float gen_value(int mode)
{
    static const float special[] = {0.0f, -0.0f, 1.0f, -1.0f, 0.5f, 2.0f, -3.0f, 1e30f, -1e30f,
                                    1e-30f, 65504.0f, 70000.0f, 88.0f, -104.0f, 1e-7f};
    uint32_t u = rng_next();
    switch (mode) {
    case 0: return ((float)(u % 20001) - 10000.0f) / 2500.0f; /* [-4, 4] */
    case 1: return (float)((int)(u % 7) - 3);                 /* ties */
    default:
        if (u % 8 == 0) return u & 8 ? INFINITY : -INFINITY;
        if (u % 16 == 1) return NAN;
        return special[(u >> 4) % (sizeof special / sizeof special[0])];
    }
}

static void new_tensor(reader *r, host_tensor *t)
{
    unsigned b = rd(r);
    t->dtype = b & 1 ? WT_F16 : WT_F32;
    t->ndim = (int)((b >> 1) % 5);
    t->numel = 1;
    for (int i = 0; i < t->ndim; i++) {
        unsigned d = rd(r);
        t->shape[i] = d < 200 ? d % 6 : d % 23; /* 0 and 1 often; now and then longer */
        if (t->numel * t->shape[i] > MAX_NUMEL / 4) t->shape[i] = 1;
        t->numel *= t->shape[i];
    }
    int mode = (int)((b >> 4) % 3);
    g_rng = 0x9E3779B97F4A7C15ull ^ ((uint64_t)rd(r) << 8 | rd(r));
    for (int64_t i = 0; i < t->numel; i++) {
        float v = gen_value(mode);
        if (t->dtype == WT_F16) v = f16_round(v);
        t->v[i] = v;
    }
}

/* --------------------------------------------------------------- failing */

static char g_step[512];
static const host_tensor *g_operands[3]; /* printed with a mismatch */

static void dump(const char *name, const host_tensor *h)
{
    if (!h) return;
    fprintf(stderr, "  %s: %s [", name, h->dtype == WT_F16 ? "f16" : "f32");
    for (int i = 0; i < h->ndim; i++)
        fprintf(stderr, "%s%lld", i ? "," : "", (long long)h->shape[i]);
    fprintf(stderr, "]");
    for (int64_t i = 0; i < h->numel && i < 64; i++)
        fprintf(stderr, " %.9g", (double)h->v[i]);
    fprintf(stderr, "%s\n", h->numel > 64 ? " ..." : "");
}

static void fail(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2), noreturn))
#endif
    ;

#include <stdarg.h>
static void fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "fuzz_diff: MISMATCH in %s: ", g_step);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    dump("x", g_operands[0]);
    dump("y", g_operands[1]);
    dump("w", g_operands[2]);
    abort();
}

/* ------------------------------------------------------------------ ops */

typedef enum op {
    OP_NEG, OP_EXP, OP_LOG, OP_SQRT, OP_RELU, OP_SIGMOID, OP_TANH,
    OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_MATMUL,
    OP_SUM, OP_MEAN, OP_MAX, OP_MIN,
    OP_SOFTMAX, OP_LAYERNORM, OP_RMSNORM,
    OP_CAST, OP_COPY, OP_CONTIGUOUS,
    OP_RESHAPE, OP_PERMUTE, OP_TRANSPOSE, OP_SLICE, OP_EXPAND,
    OP_UNARY_EXTRA, /* one of UNARY_EXTRA, chosen by a byte */
    OP_BINARY_EXTRA, /* one of BINARY_EXTRA */
    OP_COUNT
} op;

/* How results are compared. */
typedef enum tol_kind {
    TOL_EXACT, TOL_ARITH, TOL_TRANSCENDENTAL, TOL_ACCUMULATE, TOL_NORM,
    TOL_TRIG,     /* WGSL bounds sin/cos only on [-pi, pi] (absolute 2^-11) */
    TOL_FLOORING  /* floor(a / b): one division rounding apart can move it by one step */
} tol_kind;

typedef wt_status (*unary_fn)(const wt_tensor *, wt_tensor **);
typedef wt_status (*binary_fn)(const wt_tensor *, const wt_tensor *, wt_tensor **);

/* The ops of the catalogue beyond the first set: a row each. */
static const struct { const char *name; unary_fn fn; tol_kind tol; } UNARY_EXTRA[] = {
    {"abs", wt_abs, TOL_EXACT}, {"sign", wt_sign, TOL_EXACT}, {"floor", wt_floor, TOL_EXACT},
    {"ceil", wt_ceil, TOL_EXACT}, {"round", wt_round, TOL_EXACT}, {"square", wt_square, TOL_ARITH},
    {"reciprocal", wt_reciprocal, TOL_ARITH}, {"rsqrt", wt_rsqrt, TOL_TRANSCENDENTAL},
    {"sin", wt_sin, TOL_TRIG}, {"cos", wt_cos, TOL_TRIG}, {"exp2", wt_exp2, TOL_TRANSCENDENTAL},
    {"log2", wt_log2, TOL_TRANSCENDENTAL}, {"log1p", wt_log1p, TOL_TRANSCENDENTAL},
    {"expm1", wt_expm1, TOL_TRANSCENDENTAL}, {"erf", wt_erf, TOL_TRANSCENDENTAL},
    {"gelu", wt_gelu, TOL_TRANSCENDENTAL}, {"gelu_tanh", wt_gelu_tanh, TOL_TRANSCENDENTAL},
    {"silu", wt_silu, TOL_TRANSCENDENTAL}, {"softplus", wt_softplus, TOL_TRANSCENDENTAL},
    {"mish", wt_mish, TOL_TRANSCENDENTAL}, {"hardsigmoid", wt_hardsigmoid, TOL_ARITH},
    {"hardswish", wt_hardswish, TOL_ARITH}, {"logical_not", wt_logical_not, TOL_EXACT},
};
static const struct { const char *name; binary_fn fn; tol_kind tol; } BINARY_EXTRA[] = {
    {"maximum", wt_maximum, TOL_EXACT}, {"minimum", wt_minimum, TOL_EXACT},
    {"pow", wt_pow, TOL_TRANSCENDENTAL}, {"fmod", wt_fmod, TOL_FLOORING},
    {"atan2", wt_atan2, TOL_TRANSCENDENTAL}, {"floor_divide", wt_floor_divide, TOL_FLOORING},
    {"remainder", wt_remainder, TOL_FLOORING}, {"eq", wt_eq, TOL_EXACT}, {"ne", wt_ne, TOL_EXACT},
    {"lt", wt_lt, TOL_EXACT}, {"le", wt_le, TOL_EXACT}, {"gt", wt_gt, TOL_EXACT},
    {"ge", wt_ge, TOL_EXACT}, {"logical_and", wt_logical_and, TOL_EXACT},
    {"logical_or", wt_logical_or, TOL_EXACT}, {"logical_xor", wt_logical_xor, TOL_EXACT},
};
#define N_UNARY_EXTRA ((int)(sizeof UNARY_EXTRA / sizeof UNARY_EXTRA[0]))
#define N_BINARY_EXTRA ((int)(sizeof BINARY_EXTRA / sizeof BINARY_EXTRA[0]))

static const char *const OP_NAMES[OP_COUNT] = {
    "neg", "exp", "log", "sqrt", "relu", "sigmoid", "tanh", "add", "sub", "mul", "div", "matmul",
    "sum", "mean", "max", "min", "softmax", "layernorm", "rmsnorm", "cast", "copy", "contiguous",
    "reshape", "permute", "transpose", "slice", "expand", "unary*", "binary*"};

static tol_kind op_tolerance(op o, int extra)
{
    switch (o) {
    case OP_UNARY_EXTRA: return UNARY_EXTRA[extra].tol;
    case OP_BINARY_EXTRA: return BINARY_EXTRA[extra].tol;
    case OP_NEG: case OP_RELU: case OP_MAX: case OP_MIN: case OP_CAST: case OP_COPY:
    case OP_CONTIGUOUS: case OP_RESHAPE: case OP_PERMUTE: case OP_TRANSPOSE: case OP_SLICE:
    case OP_EXPAND:
        return TOL_EXACT;
    case OP_ADD: case OP_SUB: case OP_MUL: case OP_DIV: case OP_SQRT:
        return TOL_ARITH;
    case OP_EXP: case OP_LOG: case OP_SIGMOID: case OP_TANH:
        return TOL_TRANSCENDENTAL;
    case OP_MATMUL: case OP_SUM: case OP_MEAN:
        return TOL_ACCUMULATE;
    case OP_SOFTMAX: case OP_LAYERNORM: case OP_RMSNORM:
        return TOL_NORM;
    case OP_COUNT: break;
    }
    return TOL_EXACT;
}

typedef struct step_args {
    op o;
    int extra; /* the row of UNARY_EXTRA / BINARY_EXTRA */
    int view;            /* 0 none, 1 transpose, 2 slice, 3 expand, 4 reshape to 1-D */
    unsigned view_arg[4];
    int axis, axis1;
    int naxes;
    int axes[WT_MAX_DIMS];
    bool keepdims;
    float eps;
    wt_dtype dtype;
    int64_t shape[WT_MAX_DIMS];
    int ndim;
    int perm[WT_MAX_DIMS];
    int64_t start, stop, step;
    bool use_weight, use_bias;
} step_args;

/* Makes a backend tensor from host values, in the host tensor's dtype. */
static wt_status upload(wt_context *ctx, const host_tensor *h, wt_tensor **out)
{
    wt_tensor *f = NULL;
    wt_status st = wt_tensor_from_data(ctx, WT_F32, h->ndim, h->shape, h->v, &f);
    if (st != WT_OK || h->dtype == WT_F32) {
        *out = f;
        return st;
    }
    st = wt_cast(f, WT_F16, out);
    wt_tensor_release(f);
    return st;
}

/* The view of the step, applied to x (one reference taken over). */
static wt_status apply_view(const step_args *a, wt_tensor *x, wt_tensor **out)
{
    int nd = wt_tensor_ndim(x);
    const int64_t *sh = wt_tensor_shape(x);
    wt_status st = WT_OK;
    *out = NULL;
    switch (a->view) {
    case 1:
        if (nd < 2) break;
        st = wt_transpose(x, (int)(a->view_arg[0] % (unsigned)nd), (int)(a->view_arg[1] % (unsigned)nd), out);
        break;
    case 2: {
        if (nd < 1) break;
        int ax = (int)(a->view_arg[0] % (unsigned)nd);
        int64_t n = sh[ax];
        st = wt_slice(x, ax, (int64_t)(a->view_arg[1] % 5) - 2, n - (int64_t)(a->view_arg[2] % 3),
                      1 + (int64_t)(a->view_arg[3] % 3), out);
        break;
    }
    case 3: {
        if (nd >= WT_MAX_DIMS) break;
        int64_t shape[WT_MAX_DIMS];
        shape[0] = 1 + a->view_arg[0] % 3;
        for (int i = 0; i < nd; i++)
            shape[i + 1] = sh[i] == 1 ? (int64_t)(a->view_arg[1] % 3) : sh[i];
        st = wt_expand(x, nd + 1, shape, out);
        break;
    }
    case 4: {
        int64_t m1 = -1;
        st = wt_reshape(x, 1, &m1, out);
        break;
    }
    default: break;
    }
    if (st == WT_OK && !*out) {
        *out = x;
        return WT_OK;
    }
    wt_tensor_release(x);
    return st;
}

/* Runs the step on one backend; *out is the result (or NULL). */
static wt_status run_step(wt_context *ctx, const step_args *a, const host_tensor *ha,
                          const host_tensor *hb, const host_tensor *hw, wt_tensor **out)
{
    *out = NULL;
    wt_tensor *x = NULL, *y = NULL, *w = NULL, *bias = NULL, *raw = NULL;
    wt_status st = upload(ctx, ha, &raw);
    if (st == WT_OK) st = apply_view(a, raw, &x);
    if (st != WT_OK) return st;
    if (hb) st = upload(ctx, hb, &y);
    if (st == WT_OK && hw && a->use_weight) st = upload(ctx, hw, &w);
    if (st == WT_OK && hw && a->use_bias) st = upload(ctx, hw, &bias);
    if (st != WT_OK) goto done;
    switch (a->o) {
    case OP_NEG: st = wt_neg(x, out); break;
    case OP_EXP: st = wt_exp(x, out); break;
    case OP_LOG: st = wt_log(x, out); break;
    case OP_SQRT: st = wt_sqrt(x, out); break;
    case OP_RELU: st = wt_relu(x, out); break;
    case OP_SIGMOID: st = wt_sigmoid(x, out); break;
    case OP_TANH: st = wt_tanh(x, out); break;
    case OP_ADD: st = wt_add(x, y, out); break;
    case OP_SUB: st = wt_sub(x, y, out); break;
    case OP_MUL: st = wt_mul(x, y, out); break;
    case OP_DIV: st = wt_div(x, y, out); break;
    case OP_MATMUL: st = wt_matmul(x, y, out); break;
    case OP_SUM: st = wt_sum(x, a->naxes, a->axes, a->keepdims, out); break;
    case OP_MEAN: st = wt_mean(x, a->naxes, a->axes, a->keepdims, out); break;
    case OP_MAX: st = wt_max(x, a->naxes, a->axes, a->keepdims, out); break;
    case OP_MIN: st = wt_min(x, a->naxes, a->axes, a->keepdims, out); break;
    case OP_SOFTMAX: st = wt_softmax(x, a->axis, out); break;
    case OP_LAYERNORM: st = wt_layernorm(x, w, bias, a->eps, out); break;
    case OP_RMSNORM: st = wt_rmsnorm(x, w, a->eps, out); break;
    case OP_CAST: st = wt_cast(x, a->dtype, out); break;
    case OP_COPY: st = wt_copy(x, out); break;
    case OP_CONTIGUOUS: st = wt_contiguous(x, out); break;
    case OP_RESHAPE: st = wt_reshape(x, a->ndim, a->shape, out); break;
    case OP_PERMUTE: st = wt_permute(x, a->perm, out); break;
    case OP_TRANSPOSE: st = wt_transpose(x, a->axis, a->axis1, out); break;
    case OP_SLICE: st = wt_slice(x, a->axis, a->start, a->stop, a->step, out); break;
    case OP_EXPAND: st = wt_expand(x, a->ndim, a->shape, out); break;
    case OP_UNARY_EXTRA: st = UNARY_EXTRA[a->extra].fn(x, out); break;
    case OP_BINARY_EXTRA: st = BINARY_EXTRA[a->extra].fn(x, y, out); break;
    case OP_COUNT: break;
    }
done:
    wt_tensor_release(x);
    wt_tensor_release(y);
    wt_tensor_release(w);
    wt_tensor_release(bias);
    return st;
}

/* Reads t as f32 values (f16 through an exact cast on its own backend). */
static wt_status read_f32(const wt_tensor *t, float *dst)
{
    int64_t n = wt_tensor_numel(t);
    if (wt_tensor_dtype(t) == WT_F32) return wt_tensor_read(t, dst, (size_t)n * sizeof(float));
    wt_tensor *f = NULL;
    wt_status st = wt_cast(t, WT_F32, &f);
    if (st == WT_OK) st = wt_tensor_read(f, dst, (size_t)n * sizeof(float));
    wt_tensor_release(f);
    return st;
}

static float max_abs(const host_tensor *h)
{
    float m = 0;
    for (int64_t i = 0; h && i < h->numel; i++)
        if (isfinite(h->v[i]) && fabsf(h->v[i]) > m) m = fabsf(h->v[i]);
    return m;
}

/* Non-finite on the device: an f16 tensor's values from 65520 up become
 * infinities there (the host keeps them where the compiler has no
 * _Float16 to round with). */
static bool has_nonfinite(const host_tensor *h)
{
    for (int64_t i = 0; h && i < h->numel; i++)
        if (!isfinite(h->v[i]) || (h->dtype == WT_F16 && fabsf(h->v[i]) >= 65520.0f)) return true;
    return false;
}

/* Element i of y under broadcasting into a result of shape rs (y goes to
 * the op as generated, without a view). */
static float broadcast_elem(const host_tensor *y, int rnd, const int64_t *rs, int64_t i)
{
    int64_t at = 0, stride = 1;
    for (int d = rnd - 1, e = y->ndim - 1; d >= 0; d--, e--) {
        const int64_t idx = rs[d] ? i % rs[d] : 0;
        i = rs[d] ? i / rs[d] : 0;
        if (e < 0) continue;
        if (y->shape[e] != 1) at += idx * stride;
        stride *= y->shape[e];
    }
    return y->v[at];
}

/* How far WGSL may move pow(x, y) = exp2(y log2 x) (the header's
 * elementwise accuracy) relative to a result r: log2 to 2^-21 absolute in
 * [0.5, 2] and 3 ulps elsewhere (at most 3 ulps of log2 r / y), which y
 * multiplies, then exp2 to 3 + 2 |y log2 x| ulps. */
static double pow_rel_bound(double y, double r)
{
    const double ulp = 1.0 / 8388608.0, lr = fabs(log2(fabs(r)));
    return 0.6931471805599453 * (fabs(y) * 4.0 * ulp + 3.0 * ulp * lr) + (3.0 + 2.0 * lr) * ulp;
}

static void compare(const step_args *a, wt_dtype dtype, const float *c, const float *g, int64_t n,
                    const host_tensor *ha, const host_tensor *hb, const host_tensor *hw,
                    int64_t reduce_len, int rnd, const int64_t *rshape)
{
    const bool is_pow = a->o == OP_BINARY_EXTRA && BINARY_EXTRA[a->extra].fn == wt_pow;
    tol_kind tk = op_tolerance(a->o, a->extra);
    double rtol = 0, atol = 0;
    double scale = max_abs(ha) > max_abs(hb) ? max_abs(ha) : max_abs(hb);
    /* A norm's result is normalised * weight + bias: an f32 rounding of the
     * normalised value (order 1) is one of the weight's size after the
     * product, and adding a bias of that size can cancel the leading digits
     * (weight 1e30, bias 1e30, normalised -1 + 1.4e-5 leaves 1.4e25 whose
     * error is the weight's ulp-sized one). */
    if (tk == TOL_NORM && (a->use_weight || a->use_bias) && max_abs(hw) > scale) scale = max_abs(hw);
    switch (tk) {
    case TOL_EXACT: break;
    case TOL_ARITH: rtol = 4e-7; break;
    case TOL_TRANSCENDENTAL: rtol = 3e-5; atol = 1e-6; break;
    case TOL_ACCUMULATE:
        rtol = 1e-5;
        atol = 1e-5 * (double)reduce_len * (a->o == OP_MATMUL ? scale * scale : scale);
        break;
    case TOL_NORM: rtol = 1e-4; atol = 1e-4 * (1 + scale); break;
    case TOL_TRIG:
        if (scale > 3.14159265) return; /* outside [-pi, pi] WGSL promises nothing */
        atol = 1e-3;
        break;
    case TOL_FLOORING: rtol = 1e-6; atol = 1e-6 * (1 + scale); break;
    }
    if (dtype == WT_F16 && tk != TOL_EXACT) {
        rtol += 1e-3; /* one f16 rounding apart */
        atol += 6e-8;
    }
    /* Inputs with infinities or NaN (a norm's weight and bias included):
     * accumulated results may differ in how they became non-finite, not
     * whether (an infinite weight times a normalised value that one
     * backend rounds to 0 is NaN there, inf on the other: the WebGPU norms
     * give rstd 0 where eps scaled with a tiny row overflows, the
     * documented 2^-20 / sqrt(eps) of the exact value). */
    const bool affine = (tk == TOL_NORM) && (a->use_weight || a->use_bias);
    const bool special = has_nonfinite(ha) || has_nonfinite(hb) || (affine && has_nonfinite(hw));
    const bool lenient = special && (tk == TOL_ACCUMULATE || tk == TOL_NORM);
    for (int64_t i = 0; i < n; i++) {
        float x = c[i], y = g[i];
        if (isnan(x) || isnan(y)) {
            if (isnan(x) && isnan(y)) continue;
            if (lenient && !isfinite(x) && !isfinite(y)) continue;
            fail("element %lld: cpu %g, webgpu %g", (long long)i, (double)x, (double)y);
        }
        if (x == y) continue;
        if (is_subnormal(x) && y == 0) continue; /* the header's flush */
        if (tk == TOL_EXACT)
            fail("element %lld: cpu %.9g, webgpu %.9g (must be equal)", (long long)i, (double)x, (double)y);
        if (isinf(x) || isinf(y)) {
            /* Overflow at the edge of the range: the other is huge, same sign. */
            if ((x > 0) == (y > 0) && fabsf(isinf(x) ? y : x) > 1e37f) continue;
            if (dtype == WT_F16 && (x > 0) == (y > 0) && fabsf(isinf(x) ? y : x) >= 65504.0f) continue;
            if (special && tk == TOL_ACCUMULATE) continue;
            fail("element %lld: cpu %g, webgpu %g", (long long)i, (double)x, (double)y);
        }
        double d = fabs((double)x - (double)y);
        if (d <= atol + rtol * fabs((double)x)) continue;
        if (is_pow && hb && d <= (atol + rtol * fabs((double)x)) +
                                pow_rel_bound(broadcast_elem(hb, rnd, rshape, i), x) * fabs((double)x))
            continue;
        if (lenient) continue;
        /* floor(a / b) one step apart: a quotient within an f32 rounding of
         * an integer, which WGSL's division (2.5 ulp) may put either side. */
        if (tk == TOL_FLOORING) {
            double step = a->o == OP_BINARY_EXTRA && BINARY_EXTRA[a->extra].fn == wt_floor_divide
                              ? 1.0 : (double)max_abs(hb);
            if (fabs(d - step) <= 1e-5 * (1 + step) || fabs(d) <= 1e-5 * (1 + scale)) continue;
        }
        fail("element %lld: cpu %.9g, webgpu %.9g (|diff| %.3g > %.3g)", (long long)i, (double)x,
             (double)y, d, atol + rtol * fabs((double)x));
    }
}

/* ---------------------------------------------------------------- driver */

static wt_context *g_cpu, *g_gpu;
static long g_steps, g_ok_steps;
static long g_op_ok[OP_COUNT], g_op_err[OP_COUNT];
static long g_unary_ok[N_UNARY_EXTRA], g_binary_ok[N_BINARY_EXTRA];

static bool make_contexts(void)
{
    wt_context_options o;
    wt_context_options_init(&o);
    o.backend = WT_BACKEND_CPU;
    o.num_threads = 1;
    if (wt_context_create(&o, &g_cpu) != WT_OK) return false;
    wt_context_options_init(&o);
    o.backend = WT_BACKEND_WEBGPU;
    o.gpu_api = getenv("WT_FUZZ_GLES") ? WT_GPU_API_OPENGLES : WT_GPU_API_VULKAN;
    if (wt_context_create(&o, &g_gpu) != WT_OK) {
        fprintf(stderr, "fuzz_diff: no WebGPU context: %s\n", wt_last_error());
        return false;
    }
    return true;
}

static void decode_args(reader *r, step_args *a, const host_tensor *ha)
{
    memset(a, 0, sizeof *a);
    a->o = (op)(rd(r) % OP_COUNT);
    unsigned x = rd(r);
    a->extra = a->o == OP_UNARY_EXTRA ? (int)(x % N_UNARY_EXTRA) : (int)(x % N_BINARY_EXTRA);
    unsigned v = rd(r);
    a->view = (int)(v % 8 < 5 ? v % 8 : 0);
    for (int i = 0; i < 4; i++)
        a->view_arg[i] = rd(r);
    int nd = ha->ndim + (a->view == 3) - (a->view == 4 ? ha->ndim - 1 : 0);
    if (nd < 0) nd = 0;
    unsigned p = rd(r);
    /* Axes mostly valid, now and then out of range (same error expected). */
    int span = nd > 0 ? 2 * nd : 1;
    a->axis = (int)(p % (unsigned)(span + 1)) - nd;
    a->axis1 = (int)((p >> 4) % (unsigned)(span + 1)) - nd;
    a->naxes = (int)(rd(r) % (unsigned)(nd + 1));
    for (int i = 0; i < a->naxes; i++)
        a->axes[i] = (int)(rd(r) % (unsigned)(span)) - nd;
    a->keepdims = p & 1;
    a->eps = (p & 2) ? 1e-5f : 0.0f;
    a->dtype = (p & 4) ? WT_F16 : WT_F32;
    a->use_weight = (p & 8) != 0;
    a->use_bias = (p & 16) != 0;
    /* reshape / expand target; permute */
    a->ndim = (int)(rd(r) % 4);
    for (int i = 0; i < a->ndim; i++) {
        unsigned d = rd(r);
        a->shape[i] = d % 9 == 8 ? -1 : (int64_t)(d % 6);
    }
    if (a->o == OP_RESHAPE && (p & 32)) {
        a->ndim = 2; /* a reshape that fits: [-1, last] */
        a->shape[0] = -1;
        a->shape[1] = ha->ndim > 0 ? ha->shape[ha->ndim - 1] : 1;
    }
    if (a->o == OP_EXPAND && (p & 32)) { /* an expand that fits */
        a->ndim = ha->ndim + 1;
        a->shape[0] = 2;
        for (int i = 0; i < ha->ndim; i++)
            a->shape[i + 1] = ha->shape[i] == 1 ? 3 : ha->shape[i];
    }
    for (int i = 0; i < WT_MAX_DIMS; i++)
        a->perm[i] = nd - 1 - i;
    if (nd >= 2 && (p & 64)) { /* a swap instead of the reversal */
        a->perm[0] = 0;
        a->perm[nd - 1] = nd - 1;
    }
    a->start = (int64_t)(rd(r) % 9) - 4;
    a->stop = (int64_t)(rd(r) % 12) - 3;
    a->step = (int64_t)(rd(r) % 4); /* 0: invalid */
}

static int64_t reduce_length(const step_args *a, const host_tensor *ha, const host_tensor *hb)
{
    if (a->o == OP_MATMUL) return ha->ndim > 0 ? ha->shape[ha->ndim - 1] : 1;
    if (a->o == OP_SUM || a->o == OP_MEAN) return ha->numel > 0 ? ha->numel : 1;
    (void)hb;
    return 1;
}

static void run_program(const uint8_t *data, size_t size)
{
    reader r = {data, size};
    g_npool = 0;
    int nsteps = (int)(rd(&r) % MAX_STEPS) + 1;
    static float cbuf[MAX_NUMEL * 8], gbuf[MAX_NUMEL * 8];
    for (int s = 0; s < nsteps && r.n > 0; s++) {
        /* Operands: from the pool, or new. */
        const host_tensor *operand[3];
        static host_tensor fresh[3];
        for (int k = 0; k < 3; k++) {
            unsigned pick = rd(&r);
            if (g_npool > 0 && pick % 3 != 0) {
                operand[k] = &g_pool[pick % (unsigned)g_npool];
            } else {
                new_tensor(&r, &fresh[k]);
                operand[k] = &fresh[k];
            }
        }
        step_args a;
        decode_args(&r, &a, operand[0]);
        bool binary = (a.o >= OP_ADD && a.o <= OP_MATMUL) || a.o == OP_BINARY_EXTRA;
        bool norm = a.o == OP_LAYERNORM || a.o == OP_RMSNORM;
        /* Mostly, a second operand that fits the first (broadcast, inner
         * dimension, [C]), so that the ops run rather than all failing. */
        unsigned fit = rd(&r);
        if ((binary || norm) && fit % 4 != 0) {
            host_tensor *f = &fresh[binary ? 1 : 2];
            const host_tensor *x = operand[0];
            g_rng = 0x243F6A8885A308D3ull ^ fit;
            f->dtype = fit & 16 ? WT_F16 : x->dtype;
            if (norm) {
                f->ndim = 1;
                f->shape[0] = x->ndim > 0 ? x->shape[x->ndim - 1] : 1;
            } else if (a.o == OP_MATMUL) {
                f->ndim = x->ndim >= 1 ? 2 : 1;
                f->shape[0] = x->ndim > 0 ? x->shape[x->ndim - 1] : 1;
                f->shape[1] = 1 + (fit >> 5) % 5;
            } else {
                /* the same shape with some axes 1, or fewer leading axes */
                int drop = (int)((fit >> 5) % 2) && x->ndim > 0;
                f->ndim = x->ndim - drop;
                for (int i = 0; i < f->ndim; i++)
                    f->shape[i] = (fit >> (i + 2)) & 1 ? 1 : x->shape[i + drop];
            }
            f->numel = 1;
            for (int i = 0; i < f->ndim; i++)
                f->numel *= f->shape[i];
            if (f->numel > MAX_NUMEL) f->numel = 0, f->ndim = 1, f->shape[0] = 0;
            for (int64_t i = 0; i < f->numel; i++) {
                float v = gen_value((int)((fit >> 6) % 3));
                f->v[i] = f->dtype == WT_F16 ? f16_round(v) : v;
            }
            operand[binary ? 1 : 2] = f;
        }
        const host_tensor *hb = binary ? operand[1] : NULL;
        const host_tensor *hw = norm ? operand[2] : NULL;
        snprintf(g_step, sizeof g_step, "step %d: %s of a %dd %s tensor (view %d) axis %d,%d naxes %d",
                 s,
                 a.o == OP_UNARY_EXTRA    ? UNARY_EXTRA[a.extra].name
                 : a.o == OP_BINARY_EXTRA ? BINARY_EXTRA[a.extra].name
                                          : OP_NAMES[a.o], operand[0]->ndim, operand[0]->dtype == WT_F16 ? "f16" : "f32", a.view,
                 a.axis, a.axis1, a.naxes);
        g_operands[0] = operand[0];
        g_operands[1] = hb;
        g_operands[2] = hw;
        wt_tensor *tc = NULL, *tg = NULL;
        wt_status sc = run_step(g_cpu, &a, operand[0], hb, hw, &tc);
        wt_status sg = run_step(g_gpu, &a, operand[0], hb, hw, &tg);
        g_steps++;
        if (sc != sg) {
            char cmsg[256];
            snprintf(cmsg, sizeof cmsg, "%s", wt_last_error());
            fail("status: cpu %s, webgpu %s (%s)", wt_status_string(sc), wt_status_string(sg), cmsg);
        }
        if (sc != WT_OK) g_op_err[a.o]++;
        if (sc == WT_OK) {
            g_ok_steps++;
            g_op_ok[a.o]++;
            if (a.o == OP_UNARY_EXTRA) g_unary_ok[a.extra]++;
            if (a.o == OP_BINARY_EXTRA) g_binary_ok[a.extra]++;
            int nd = wt_tensor_ndim(tc);
            if (nd != wt_tensor_ndim(tg) || wt_tensor_dtype(tc) != wt_tensor_dtype(tg) ||
                memcmp(wt_tensor_shape(tc), wt_tensor_shape(tg), sizeof(int64_t) * (size_t)nd))
                fail("result dtype or shape differs");
            int64_t n = wt_tensor_numel(tc);
            if (n <= MAX_NUMEL * 8) {
                wt_status rc = read_f32(tc, cbuf), rg = read_f32(tg, gbuf);
                if (rc != WT_OK || rg != WT_OK)
                    fail("read: cpu %s, webgpu %s (%s)", wt_status_string(rc), wt_status_string(rg),
                         wt_last_error());
                compare(&a, wt_tensor_dtype(tc), cbuf, gbuf, n, operand[0], hb, hw,
                        reduce_length(&a, operand[0], hb), nd, wt_tensor_shape(tc));
                /* The CPU's result is an operand of later steps. */
                if (n <= MAX_NUMEL && nd <= 4) {
                    host_tensor *h = &g_pool[g_npool < MAX_POOL ? g_npool++ : s % MAX_POOL];
                    h->dtype = wt_tensor_dtype(tc);
                    h->ndim = nd;
                    memcpy(h->shape, wt_tensor_shape(tc), sizeof(int64_t) * (size_t)nd);
                    h->numel = n;
                    for (int64_t i = 0; i < n; i++)
                        h->v[i] = is_subnormal(cbuf[i]) ? 0.0f : cbuf[i];
                }
            }
        }
        wt_tensor_release(tc);
        wt_tensor_release(tg);
    }
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    if (!make_contexts()) abort();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    run_program(data, size);
    return 0;
}

#ifndef WT_FUZZ_LIBFUZZER
/* Replay: fuzz_diff FILE... (the plain build's regression run). */
int main(int argc, char **argv)
{
    const int files = fuzz_replay_files(argc, argv);
    if (files < 0) return 2;
    wt_context_destroy(g_gpu);
    wt_context_destroy(g_cpu);
    int ran = 0;
    for (int o = 0; o < OP_UNARY_EXTRA; o++)
        ran += g_op_ok[o] > 0;
    for (int o = 0; o < N_UNARY_EXTRA; o++)
        ran += g_unary_ok[o] > 0;
    for (int o = 0; o < N_BINARY_EXTRA; o++)
        ran += g_binary_ok[o] > 0;
    printf("fuzz_diff: %d inputs, %ld steps (%ld succeeded on both), %d of %d ops ran; cpu and webgpu "
           "agree\n", files, g_steps, g_ok_steps, ran, OP_UNARY_EXTRA + N_UNARY_EXTRA + N_BINARY_EXTRA);
    if (getenv("WT_FUZZ_VERBOSE"))
        for (int o = 0; o < OP_COUNT; o++)
            printf("  %-10s ok %ld, same error %ld\n", OP_NAMES[o], g_op_ok[o], g_op_err[o]);
    return 0;
}
#endif
