/* Counter-based random numbers shared by every backend, so that one seed
 * gives the same bits everywhere.
 *
 * Philox4x32-10 (Salmon et al., SC'11): key = (seed low, seed high),
 * counter = (block low, block high, 0, 0) with block = element index / 4;
 * element i takes word i % 4 of its block's output.
 *
 * From a word u:
 *  - uniform: (u >> (32 - bits)) * 2^-bits, in [0, 1); exact in f32
 *    (bits 24) and in f16 (bits 11).
 *  - normal: the inverse normal CDF at (x + 0.5) / 2^32, by symmetry from
 *    the low 31 bits x (mirrored when the top bit is set), read from a
 *    table of Q21 fixed-point values and interpolated linearly in integer
 *    arithmetic, then scaled by 2^-21 (an exact conversion). No floating
 *    point transcendental runs at generation time, so the CPU and every
 *    GPU give the same bits. Within 2e-6 of the exact quantile; values
 *    lie on a grid of 2^-21 in [-6.24, 6.24].
 * The table: entries 0..255 for x < 256 exactly, then 256 knots per octave
 * [2^e, 2^(e+1)) for e = 8..30 (knot j at x = 2^e + j * 2^(e-8)), then the
 * knot at x = 2^31. */
#ifndef WT_PHILOX_H
#define WT_PHILOX_H

#include <stdint.h>

#define WT_NORMAL_TABLE_LEN (256 + 23 * 256 + 1)

void wt_philox4x32_10(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4]);
/* The table above (computed once, thread-safe). */
const int32_t *wt_normal_table(void);
/* The normal value of word u (the algorithm above, for the CPU). */
float wt_normal_from_word(uint32_t u, const int32_t *table);

#endif
