/* IEEE binary16 <-> binary32 conversions in integer arithmetic, so that the
 * result never depends on the floating-point environment (rounding mode,
 * flush-to-zero). */
#ifndef WT_CPU_HALF_H
#define WT_CPU_HALF_H

#include <stdint.h>

/* Exact: every binary16 value is a binary32 value. */
static inline uint32_t cpu_half_to_f32_bits(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu, man = h & 0x3ffu;
    if (exp == 0x1fu) /* inf, or NaN with its payload */
        return sign | 0x7f800000u | (man << 13);
    if (exp != 0)
        return sign | ((exp + 112u) << 23) | (man << 13);
    if (man == 0)
        return sign;
    /* Subnormal: normalise the mantissa into an f32 normal. */
    int shift = 0;
    while (!(man & 0x400u)) {
        man <<= 1;
        shift++;
    }
    return sign | ((uint32_t)(113 - shift) << 23) | ((man & 0x3ffu) << 13);
}

/* Round to nearest, ties to even; beyond the largest half (65504) rounds to
 * inf; a NaN stays a NaN (its top payload bits kept, never turned into
 * inf). */
static inline uint16_t cpu_f32_bits_to_half(uint32_t x) {
    uint32_t sign = (x >> 16) & 0x8000u, ax = x & 0x7fffffffu;
    if (ax > 0x7f800000u) {
        uint32_t man = (ax >> 13) & 0x3ffu;
        return (uint16_t)(sign | 0x7c00u | (man ? man : 0x200u));
    }
    if (ax >= 0x477ff000u) /* >= 65520, the midpoint above 65504 */
        return (uint16_t)(sign | 0x7c00u);
    if (ax >= 0x38800000u) { /* >= 2^-14: a normal half */
        uint32_t r = ax - 0x38000000u; /* exponent bias 127 -> 15 */
        r += 0xfffu + ((r >> 13) & 1u);
        return (uint16_t)(sign | (r >> 13));
    }
    /* Subnormal half (units of 2^-24) or zero. */
    uint32_t exp = ax >> 23;
    uint32_t shift = 126u - exp; /* value = man * 2^-shift units */
    if (shift > 24u)
        return (uint16_t)sign;
    uint32_t man = (ax & 0x7fffffu) | 0x800000u;
    uint32_t q = man >> shift, rem = man & ((1u << shift) - 1u), half = 1u << (shift - 1u);
    q += (rem > half || (rem == half && (q & 1u))) ? 1u : 0u;
    return (uint16_t)(sign | q);
}

#endif /* WT_CPU_HALF_H */
