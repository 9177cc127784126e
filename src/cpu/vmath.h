/* Single-precision math written for the auto-vectoriser.
 *
 * libm's expf/logf/tanhf are calls the compiler cannot vectorise, so the
 * elementwise kernels use these instead: straight-line code (selects, no
 * branches, no errno), so that a loop over them becomes SIMD code. The
 * file calling them is compiled without -ftrapping-math (a pragma): under
 * it GCC will not turn the selects into vector blends. Each is
 * accurate to about 1-2 ulp over the whole float range, with libm's
 * overflow, underflow, infinity and NaN results. */
#ifndef WT_CPU_VMATH_H
#define WT_CPU_VMATH_H

#include <math.h>
#include <stdint.h>
#include <string.h>

static inline uint32_t vm_bits(float x) {
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

static inline float vm_float(uint32_t u) {
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
}

/* 2^k for k in [-126, 127], built in the exponent field. */
static inline float vm_pow2i(int32_t k) {
    return vm_float((uint32_t)(k + 127) << 23);
}

/* ln 2 split so that n * VM_LN2_HI is exact for |n| < 2^15 (Cody-Waite). */
#define VM_LN2_HI 0.693359375f
#define VM_LN2_LO (-2.12194440e-4f)
#define VM_LOG2E 1.44269504088896341f
/* Adding 1.5 * 2^23 rounds a float of magnitude < 2^22 to an integer,
 * which then sits in the low mantissa bits. */
#define VM_ROUND_MAGIC 12582912.0f

/* e^r - 1 for |r| <= ln2/2, as r * q(r); Taylor to degree 8, whose
 * truncation error (< 6e-9 relative) is below half an ulp. */
static inline float vm_expm1_core(float r) {
    float q = 1.0f / 40320.0f;
    q = q * r + 1.0f / 5040.0f;
    q = q * r + 1.0f / 720.0f;
    q = q * r + 1.0f / 120.0f;
    q = q * r + 1.0f / 24.0f;
    q = q * r + 1.0f / 6.0f;
    q = q * r + 0.5f;
    q = q * r + 1.0f;
    return q * r;
}

/* Splits x (already clamped to [-104, 89]) into n * ln2 + r. */
static inline float vm_reduce_ln2(float x, int32_t *n) {
    float t = x * VM_LOG2E + VM_ROUND_MAGIC;
    float nf = t - VM_ROUND_MAGIC;
    *n = (int32_t)(vm_bits(t) - vm_bits(VM_ROUND_MAGIC));
    return (x - nf * VM_LN2_HI) - nf * VM_LN2_LO;
}

static inline float vm_expf(float x) {
    /* Clamping keeps n in [-150, 129]; beyond, the result is 0 or inf
     * anyway and the scaling below produces exactly that. NaN compares
     * false and flows through as NaN. */
    float xc = x > 89.0f ? 89.0f : x;
    xc = xc < -104.0f ? -104.0f : xc;
    int32_t n;
    float r = vm_reduce_ln2(xc, &n);
    float p = 1.0f + vm_expm1_core(r);
    /* 2^n in two factors so that neither leaves the normal range: the
     * result overflows to inf or rounds once into a subnormal. */
    int32_t n1 = n >> 1;
    return p * vm_pow2i(n1) * vm_pow2i(n - n1);
}

/* e^x - 1 for x in [0, 20]: no cancellation for small x. */
static inline float vm_expm1_small(float x) {
    int32_t n;
    float r = vm_reduce_ln2(x, &n);
    float s = vm_pow2i(n);
    return s * vm_expm1_core(r) + (s - 1.0f);
}

static inline float vm_logf(float x) {
    /* Subnormals: scale into the normal range first. */
    int subnormal = x < 1.17549435e-38f;
    float xs = x * (subnormal ? 8388608.0f : 1.0f); /* 2^23 */
    /* x = m * 2^e with m in [sqrt(1/2), sqrt(2)): subtracting the bits of
     * sqrt(1/2) makes the exponent field carry exactly at that point. The
     * shift is arithmetic on every compiler this builds with. */
    int32_t u = (int32_t)(vm_bits(xs) - 0x3f3504f3u);
    int32_t e = (u >> 23) - (subnormal ? 23 : 0);
    float m = vm_float(((uint32_t)u & 0x007fffffu) + 0x3f3504f3u);
    /* log(1+f) = f - f^2/2 + f^3 P(f) for f in [sqrt(1/2)-1, sqrt(2)-1],
     * P a least-squares fit on Chebyshev nodes (relative error < 8e-9).
     * No division: it keeps the loop branch-free for the vectoriser. */
    float f = m - 1.0f;
    float p = -0.07362867891788483f;
    p = p * f + 0.1262032687664032f;
    p = p * f - 0.13202103972434998f;
    p = p * f + 0.14227114617824554f;
    p = p * f - 0.16621370613574982f;
    p = p * f + 0.19999825954437256f;
    p = p * f - 0.2500085234642029f;
    p = p * f + 0.3333335518836975f;
    float f2 = f * f;
    float hfsq = 0.5f * f2;
    float ef = (float)e;
    float y = ef * VM_LN2_HI + (((f2 * f * p + ef * VM_LN2_LO) - hfsq) + f);
    /* Special values as libm: log(0) = -inf, log(<0) = NaN, log(inf) = inf,
     * log(NaN) = NaN. */
    float special = x == 0.0f ? -INFINITY : (x == INFINITY ? INFINITY : x + NAN);
    return x <= 0.0f || !(x < INFINITY) ? special : y;
}

static inline float vm_tanhf(float x) {
    float ax = fabsf(x);
    /* |x| < 0.625: tanh x = x + x z P(z), z = x^2, P a least-squares fit
     * on Chebyshev nodes (relative error < 5e-9 before rounding). */
    float z = ax * ax;
    float p = -0.0057189627550542355f;
    p = p * z + 0.020653124898672104f;
    p = p * z - 0.05374465882778168f;
    p = p * z + 0.13331513106822968f;
    p = p * z - 0.3333328664302826f;
    float small = ax + ax * (z * p);
    /* Otherwise (e^{2|x|} - 1) / (e^{2|x|} + 1), where the error of the
     * exponential is damped; past 9 the result rounds to 1. */
    float axc = ax > 9.0f ? 9.0f : ax;
    float em = vm_expm1_small(2.0f * axc);
    float large = em / (em + 2.0f);
    float t = ax < 0.625f ? small : large;
    t = ax > 9.0f ? 1.0f : t;
    t = x != x ? x : t;
    return copysignf(t, x);
}

static inline float vm_sigmoidf(float x) {
    /* With e = e^{-|x|} in (0, 1] nothing overflows: 1 / (1 + e) for
     * x >= 0 and e / (1 + e) for x < 0, both accurate in relative terms
     * (the latter down into the subnormals). */
    float e = vm_expf(-fabsf(x));
    return (x < 0.0f ? e : 1.0f) / (1.0f + e);
}

/* erfc(z) for z >= 0 (NaN stays NaN, inf gives 0): t exp(-z^2 + P(t)) with
 * t = 1 / (1 + z/2) and P the degree-9 Chebyshev fit of Numerical
 * Recipes' erfcc, whose relative error is below 1.2e-7 for every z >= 0;
 * so erfc's small tail keeps its digits, where 1 - erf would cancel. */
static inline float vm_erfc_nonneg(float z) {
    float t = 1.0f / (1.0f + 0.5f * z);
    float p = 0.17087277f;
    p = p * t - 0.82215223f;
    p = p * t + 1.48851587f;
    p = p * t - 1.13520398f;
    p = p * t + 0.27886807f;
    p = p * t - 0.18628806f;
    p = p * t + 0.09678418f;
    p = p * t + 0.37409196f;
    p = p * t + 1.00002368f;
    p = p * t - 1.26551223f;
    return t * vm_expf(p - z * z);
}

/* 1 + erf(x / sqrt 2) = erfc(-x / sqrt 2) = 2 Phi(x), Phi the normal
 * distribution: GELU's factor, accurate on both sides. */
static inline float vm_two_phi(float x) {
    float e = vm_erfc_nonneg(fabsf(x) * 0.70710678118654752f);
    return x > 0.0f ? 2.0f - e : e;
}

#endif /* WT_CPU_VMATH_H */
