/* The frequencies of rotary position embedding, plain or scaled as a
 * checkpoint's rope_scaling asks (webtensor.h, wt_rope_kv_cache_options):
 * one definition for every backend, in double. */
#include "core/internal.h"

#include <math.h>

double wt_rope_frequency(const wt_rope_freqs *f, int64_t i, int64_t D)
{
    const double base = pow(f->theta, -2.0 * (double)i / (double)D);
    if (f->scaling == WT_ROPE_SCALING_LINEAR) return base / f->factor;
    if (f->scaling != WT_ROPE_SCALING_LLAMA3) return base;
    /* Llama 3.1: wavelengths longer than the original context's share
     * slowed by the factor, short ones kept, the band between blended. */
    const double L = (double)f->original_max_position;
    const double wavelength = 2.0 * M_PI / base;
    if (wavelength > L / f->low_freq_factor) return base / f->factor;
    if (wavelength < L / f->high_freq_factor) return base;
    const double a = (L / wavelength - f->low_freq_factor) / (f->high_freq_factor - f->low_freq_factor);
    return (1.0 - a) * base / f->factor + a * base;
}
