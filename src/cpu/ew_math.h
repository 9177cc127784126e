/* Scalar helpers of the CPU elementwise rows (core/ops.def): integer
 * arithmetic that wraps instead of overflowing, and the float functions
 * whose special values (NaN, +-0, inf) need spelling out. Inline, so that
 * the kernels' loops vectorise where the math allows. */
#ifndef WT_CPU_EW_MATH_H
#define WT_CPU_EW_MATH_H

#include "cpu/vmath.h"

#include <math.h>
#include <stdint.h>

/* Two's complement wrap-around, computed in unsigned arithmetic. */
static inline int32_t ew_wrap(uint32_t u) { return (int32_t)u; }
static inline int32_t ew_add_i32(int32_t a, int32_t b) { return ew_wrap((uint32_t)a + (uint32_t)b); }
static inline int32_t ew_sub_i32(int32_t a, int32_t b) { return ew_wrap((uint32_t)a - (uint32_t)b); }
static inline int32_t ew_mul_i32(int32_t a, int32_t b) { return ew_wrap((uint32_t)a * (uint32_t)b); }
static inline int32_t ew_neg_i32(int32_t x) { return ew_wrap(0u - (uint32_t)x); }
static inline int32_t ew_abs_i32(int32_t x) { return x < 0 ? ew_neg_i32(x) : x; }

static inline int32_t ew_clamp_i32(int32_t x, int32_t lo, int32_t hi) {
    int32_t y = x < lo ? lo : x;
    return y > hi ? hi : y;
}

/* Python's // and % on integers; b == 0 gives 0 (NumPy's result). */
static inline int32_t ew_floor_div_i32(int32_t a, int32_t b) {
    if (b == 0)
        return 0;
    if (b == -1)
        return ew_neg_i32(a); /* INT32_MIN // -1 wraps */
    int32_t q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

static inline int32_t ew_remainder_i32(int32_t a, int32_t b) {
    if (b == 0 || b == -1)
        return 0;
    int32_t r = a % b;
    return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}

/* The kernels are built without errno for math (see elementwise.c):
 * the instruction, NaN for negatives. */
static inline float ew_sqrtf(float x) { return __builtin_sqrtf(x); }

static inline float ew_signf(float x) { return x > 0.0f ? 1.0f : (x < 0.0f ? -1.0f : x); }

/* NumPy's maximum / minimum: NaN in either operand gives NaN. */
static inline float ew_maxf(float a, float b) { return (a >= b || a != a) ? a : b; }
static inline float ew_minf(float a, float b) { return (a <= b || a != a) ? a : b; }

static inline float ew_clampf(float x, float lo, float hi) {
    float y = x < lo ? lo : x;
    return y > hi ? hi : y;
}

static inline float ew_relu6(float x) { return x < 0.0f ? 0.0f : (x > 6.0f ? 6.0f : x); }

static inline float ew_softplus(float x) {
    float m = x > 0.0f ? x : 0.0f;
    return m + log1pf(vm_expf(-fabsf(x)));
}

/* x / (1 + |x|); +-1 at the infinities, where the quotient would be inf / inf. */
static inline float ew_softsign(float x) { return isinf(x) ? copysignf(1.0f, x) : x / (1.0f + fabsf(x)); }

/* x Phi(x); erff is a libm call, which kept this loop scalar. -inf gives
 * NaN (-inf * 0), as PyTorch's formula. */
static inline float ew_gelu(float x) { return 0.5f * x * vm_two_phi(x); }

static inline float ew_gelu_tanh(float x) {
    float inner = 0.79788456080286536f * (x + 0.044715f * x * x * x);
    return 0.5f * x * (1.0f + vm_tanhf(inner));
}

/* NumPy's floor_divide and remainder on floats (npy_divmod): the quotient
 * from fmod, so that it is the floor of the exact quotient. */
static inline float ew_floor_divf(float a, float b) {
    float mod = fmodf(a, b);
    if (b == 0.0f)
        return a / b;
    float div = (a - mod) / b;
    if (mod != 0.0f && ((b < 0.0f) != (mod < 0.0f)))
        div -= 1.0f;
    if (div == 0.0f)
        return copysignf(0.0f, a / b);
    float fl = floorf(div);
    return div - fl > 0.5f ? fl + 1.0f : fl;
}

static inline float ew_remainderf(float a, float b) {
    float mod = fmodf(a, b);
    if (b == 0.0f)
        return mod;
    if (mod != 0.0f)
        return ((b < 0.0f) != (mod < 0.0f)) ? mod + b : mod;
    return copysignf(0.0f, b);
}

#endif /* WT_CPU_EW_MATH_H */
