/* f16 <-> f32 conversion of contiguous runs with the processor's own
 * conversion instructions (x86-64 F16C) where it has them. */
#ifndef WT_CPU_HALF_SIMD_H
#define WT_CPU_HALF_SIMD_H

#include "core/internal.h"

/* Converts n contiguous elements from -> to when one is f16 and the other
 * f32 and the processor converts in hardware (rounding to nearest even,
 * overflow to infinity, NaN kept a NaN: the scalar routines' results);
 * false (nothing written) otherwise. */
bool cpu_halves_convert(wt_dtype from, wt_dtype to, const void *src, void *dst, int64_t n);

/* Whether the processor has AVX and F16C and the OS saves the YMM
 * registers (asked once; false off x86-64). Read from CPUID, since not
 * every compiler's __builtin_cpu_supports knows "f16c" (clang 14 does not). */
bool cpu_has_f16c(void);

#endif /* WT_CPU_HALF_SIMD_H */
