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

#endif /* WT_CPU_HALF_SIMD_H */
