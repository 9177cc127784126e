/* Quantising f32 to the super-block formats Q4_K and Q6_K (webtensor.h,
 * "quantised weights"), byte for byte as ggml's reference quantisers
 * quantize_row_q4_K_ref and quantize_row_q6_K_ref. The bytes depend on
 * every rounding of the search for the scales, so each sum, product and
 * quotient below is evaluated in f32 in the reference's order, and no
 * multiply-add may be fused (the pragma; GCC in ISO C mode does not fuse
 * across statements either). */
#include "core/quant.h"
#include "cpu/half.h"

#include <math.h>
#include <string.h>

#ifdef __clang__
#pragma STDC FP_CONTRACT OFF
#endif

/* ggml's nearest_int: round to nearest (ties to even) by adding 1.5 * 2^23
 * and reading the low mantissa bits. For |v| <= 2^22 - 1 this is rintf;
 * beyond, the reference's result is whatever those bits give (the callers
 * clamp it), and the same bits are read here so that the bytes agree there
 * too. Never a float-to-int conversion of an out-of-range value. */
static int nearest_int(float v)
{
    const float shifted = v + 12582912.0f;
    int32_t bits;
    memcpy(&bits, &shifted, sizeof bits);
    return (bits & 0x007fffff) - 0x00400000;
}

static uint16_t to_half(float f)
{
    uint32_t bits;
    memcpy(&bits, &f, sizeof bits);
    return cpu_f32_bits_to_half(bits);
}

static float from_half(uint16_t h)
{
    const uint32_t bits = cpu_half_to_f32_bits(h);
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

static int clamp_int(int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }

/* --- Q4_K --- */

/* sum(w (scale L + min - x)^2) over n values, each step rounded in float
 * as ggml rounds it. */
static float weighted_error(int n, const float *x, const float *w, const uint8_t *L, float scale, float min)
{
    float error = 0.0f;
    for (int i = 0; i < n; i++) {
        const float fit = scale * (float)L[i];
        const float fit_min = fit + min;
        float diff = fit_min - x[i];
        diff = diff * diff;
        const float wd = w[i] * diff;
        error += wd;
    }
    return error;
}

/* One sub-block of n (<= 32) values x with weights w: an unsigned code
 * L[i] in 0..nmax, a scale and a min (returned as its negation, *neg_min,
 * >= 0) with x ~ scale * L - neg_min. Start from the plain range
 * (min clamped to <= 0), then try nstep + 1 stretched scales
 * (nmax + rmin + rdelta * is over the range), each followed by the
 * weighted least-squares scale and min for its codes, keeping the one of
 * least weighted squared error (ggml's make_qkx2_quants, use_mad off). */
static float fit_scale_min(int n, int nmax, const float *x, const float *w, uint8_t *L, float *neg_min, float rmin,
                           float rdelta, int nstep)
{
    float min = x[0], max = x[0];
    float sum_w = w[0];
    float sum_x = sum_w * x[0];
    for (int i = 1; i < n; i++) {
        if (x[i] < min) min = x[i];
        if (x[i] > max) max = x[i];
        sum_w += w[i];
        const float wx = w[i] * x[i];
        sum_x += wx;
    }
    if (min > 0) min = 0;
    if (max == min) {
        for (int i = 0; i < n; i++) L[i] = 0;
        *neg_min = -min;
        return 0.0f;
    }
    float iscale = (float)nmax / (max - min);
    float scale = 1.0f / iscale;
    for (int i = 0; i < n; i++) {
        const float shifted = x[i] - min;
        const float scaled = iscale * shifted;
        L[i] = (uint8_t)clamp_int(nearest_int(scaled), 0, nmax);
    }
    float best_error = weighted_error(n, x, w, L, scale, min);
    uint8_t Laux[32];
    for (int is = 0; is <= nstep; is++) {
        const float step = rdelta * (float)is;
        const float stretch = rmin + step;
        const float levels = stretch + (float)nmax;
        /* min is the best fit's so far (as in the reference): the range
         * and the codes of later steps are measured from it */
        const float range = max - min;
        iscale = levels / range;
        float sum_l = 0.0f, sum_l2 = 0.0f, sum_xl = 0.0f;
        for (int i = 0; i < n; i++) {
            const float shifted = x[i] - min;
            const float scaled = iscale * shifted;
            const int l = clamp_int(nearest_int(scaled), 0, nmax);
            Laux[i] = (uint8_t)l;
            const float wl = w[i] * (float)l;
            sum_l += wl;
            const float wll = wl * (float)l;
            sum_l2 += wll;
            const float wlx = wl * x[i];
            sum_xl += wlx;
        }
        const float p1 = sum_w * sum_l2, p2 = sum_l * sum_l;
        const float D = p1 - p2;
        if (D > 0) {
            const float a1 = sum_w * sum_xl, a2 = sum_x * sum_l;
            const float b1 = sum_l2 * sum_x, b2 = sum_l * sum_xl;
            const float num_scale = a1 - a2, num_min = b1 - b2;
            float this_scale = num_scale / D;
            float this_min = num_min / D;
            if (this_min > 0) {
                this_min = 0;
                this_scale = sum_xl / sum_l2;
            }
            const float cur_error = weighted_error(n, x, w, Laux, this_scale, this_min);
            if (cur_error < best_error) {
                memcpy(L, Laux, (size_t)n);
                best_error = cur_error;
                scale = this_scale;
                min = this_min;
            }
        }
    }
    *neg_min = -min;
    return scale;
}

void wt_quantize_block_q4_k(const float *x, uint8_t *dst)
{
    uint8_t L[256];
    float weights[32], scales[8], mins[8];
    float max_scale = 0.0f, max_min = 0.0f;
    for (int j = 0; j < 8; j++) {
        const float *xs = x + 32 * j;
        /* each element weighted by the sub-block's RMS plus its magnitude */
        float sum_x2 = 0.0f;
        for (int l = 0; l < 32; l++) {
            const float sq = xs[l] * xs[l];
            sum_x2 += sq;
        }
        const float av_x = sqrtf(sum_x2 / 32.0f);
        for (int l = 0; l < 32; l++) weights[l] = av_x + fabsf(xs[l]);
        scales[j] = fit_scale_min(32, 15, xs, weights, L + 32 * j, &mins[j], -1.0f, 0.1f, 20);
        if (scales[j] > max_scale) max_scale = scales[j];
        if (mins[j] > max_min) max_min = mins[j];
    }
    /* the eight scales and mins as 6-bit multiples of max / 63 */
    const float inv_scale = max_scale > 0 ? 63.0f / max_scale : 0.0f;
    const float inv_min = max_min > 0 ? 63.0f / max_min : 0.0f;
    uint8_t *S = dst + 4;
    memset(S, 0, 12);
    for (int j = 0; j < 8; j++) {
        /* the reference stores the int into a uint8_t (mod 256) before
         * clamping to 63 */
        uint8_t ls = (uint8_t)nearest_int(inv_scale * scales[j]);
        uint8_t lm = (uint8_t)nearest_int(inv_min * mins[j]);
        if (ls > 63) ls = 63;
        if (lm > 63) lm = 63;
        if (j < 4) {
            S[j] = ls;
            S[j + 4] = lm;
        } else {
            S[j + 4] = (uint8_t)((ls & 0xF) | (lm & 0xF) << 4);
            S[j - 4] |= (uint8_t)((ls >> 4) << 6);
            S[j] |= (uint8_t)((lm >> 4) << 6);
        }
    }
    const uint16_t hd = to_half(max_scale / 63.0f), hm = to_half(max_min / 63.0f);
    dst[0] = (uint8_t)(hd & 0xff), dst[1] = (uint8_t)(hd >> 8);
    dst[2] = (uint8_t)(hm & 0xff), dst[3] = (uint8_t)(hm >> 8);
    /* the codes again against the stored (rounded) scales and mins; a
     * sub-block whose scale rounds to 0 keeps the search's codes */
    const float d_all = from_half(hd), dmin_all = from_half(hm);
    for (int j = 0; j < 8; j++) {
        int sc, m;
        if (j < 4) {
            sc = S[j] & 63, m = S[j + 4] & 63;
        } else {
            sc = (S[j + 4] & 0xF) | (S[j - 4] >> 6) << 4;
            m = (S[j + 4] >> 4) | (S[j] >> 6) << 4;
        }
        const float d = d_all * (float)sc;
        if (d == 0.0f) continue;
        const float dm = dmin_all * (float)m;
        for (int i = 0; i < 32; i++) {
            const float shifted = x[32 * j + i] + dm;
            L[32 * j + i] = (uint8_t)clamp_int(nearest_int(shifted / d), 0, 15);
        }
    }
    /* 64 elements per 32 bytes: the first 32 in the low nibbles */
    uint8_t *q = dst + 16;
    for (int j = 0; j < 256; j += 64, q += 32)
        for (int l = 0; l < 32; l++) q[l] = (uint8_t)(L[j + l] | L[j + l + 32] << 4);
}

/* --- Q6_K --- */

/* The codes of x at iscale, l in -nmax .. nmax-1 (into L[i] as l + nmax
 * when L is not NULL), and the sums of the least-squares scale weighted by
 * x^2: sum(x^2 x l) and sum(x^2 l^2), each product rounded in float as
 * ggml rounds it. */
static void weighted_code_sums(int n, int nmax, const float *x, float iscale, int8_t *L, float *sumlx, float *suml2)
{
    float slx = 0.0f, sl2 = 0.0f;
    for (int i = 0; i < n; i++) {
        const int l = clamp_int(nearest_int(iscale * x[i]), -nmax, nmax - 1);
        if (L) L[i] = (int8_t)(l + nmax);
        const float w = x[i] * x[i];
        const float wx = w * x[i];
        const float wxl = wx * (float)l;
        slx += wxl;
        const float wl = w * (float)l;
        const float wll = wl * (float)l;
        sl2 += wll;
    }
    *sumlx = slx;
    *suml2 = sl2;
}

/* One sub-block of n values: signed codes in -nmax .. nmax-1 stored as
 * L[i] + nmax, and the scale, from the value of largest magnitude m (the
 * first of equals) mapped to -nmax, then 18 stretched scales -(nmax +
 * 0.1 is) / m, each with the least-squares scale of its codes weighted by
 * x^2, keeping the one that explains most of x (ggml's make_qx_quants with
 * rmse_type 1 and no importance weights). */
static float fit_scale_symmetric(int n, int nmax, const float *x, int8_t *L)
{
    float max = 0.0f, amax = 0.0f;
    for (int i = 0; i < n; i++) {
        const float ax = fabsf(x[i]);
        if (ax > amax) amax = ax, max = x[i];
    }
    if (amax < 1e-15f) { /* all (nearly) zero */
        for (int i = 0; i < n; i++) L[i] = 0;
        return 0.0f;
    }
    float iscale = (float)-nmax / max;
    float sumlx, suml2;
    weighted_code_sums(n, nmax, x, iscale, L, &sumlx, &suml2);
    float scale = suml2 != 0.0f ? sumlx / suml2 : 0.0f;
    float best = scale * sumlx;
    for (int is = -9; is <= 9; is++) {
        if (is == 0) continue;
        const float step = 0.1f * (float)is;
        const float levels = (float)nmax + step;
        iscale = -levels / max;
        weighted_code_sums(n, nmax, x, iscale, NULL, &sumlx, &suml2);
        const float gain = sumlx * sumlx, bound = best * suml2;
        if (suml2 > 0 && gain > bound) {
            for (int i = 0; i < n; i++)
                L[i] = (int8_t)(nmax + clamp_int(nearest_int(iscale * x[i]), -nmax, nmax - 1));
            scale = sumlx / suml2;
            best = scale * sumlx;
        }
    }
    return scale;
}

void wt_quantize_block_q6_k(const float *x, uint8_t *dst)
{
    int8_t L[256];
    float scales[16];
    float max_scale = 0.0f, max_abs_scale = 0.0f;
    for (int ib = 0; ib < 16; ib++) {
        scales[ib] = fit_scale_symmetric(16, 32, x + 16 * ib, L + 16 * ib);
        const float abs_scale = fabsf(scales[ib]);
        if (abs_scale > max_abs_scale) max_abs_scale = abs_scale, max_scale = scales[ib];
    }
    memset(dst, 0, 210);
    if (max_abs_scale < 1e-15f) return; /* every byte 0, d = +0 */
    /* the sub-block scales as int8 multiples of d, the largest one -128 */
    const float iscale = -128.0f / max_scale;
    const uint16_t hd = to_half(1.0f / iscale);
    dst[208] = (uint8_t)(hd & 0xff), dst[209] = (uint8_t)(hd >> 8);
    int8_t *sc = (int8_t *)(dst + 192);
    for (int ib = 0; ib < 16; ib++) {
        const int s = nearest_int(iscale * scales[ib]);
        sc[ib] = (int8_t)(s < 127 ? s : 127); /* -128 .. 127 */
    }
    /* the codes again against the stored scales; a sub-block whose scale
     * rounds to 0 keeps the search's codes */
    const float d_all = from_half(hd);
    for (int j = 0; j < 16; j++) {
        const float d = d_all * (float)sc[j];
        if (d == 0.0f) continue;
        for (int i = 0; i < 16; i++) {
            const int l = clamp_int(nearest_int(x[16 * j + i] / d), -32, 31);
            L[16 * j + i] = (int8_t)(l + 32);
        }
    }
    /* per 128 elements: 64 bytes of low nibbles (elements l and l + 64 in
     * byte l, l + 32 and l + 96 in byte l + 32), 32 bytes of the high two
     * bits of l, l + 32, l + 64, l + 96 */
    uint8_t *ql = dst, *qh = dst + 128;
    for (int j = 0; j < 256; j += 128, ql += 64, qh += 32)
        for (int l = 0; l < 32; l++) {
            const uint8_t q1 = (uint8_t)L[j + l], q2 = (uint8_t)L[j + l + 32], q3 = (uint8_t)L[j + l + 64],
                          q4 = (uint8_t)L[j + l + 96];
            ql[l] = (uint8_t)((q1 & 0xF) | (q3 & 0xF) << 4);
            ql[l + 32] = (uint8_t)((q2 & 0xF) | (q4 & 0xF) << 4);
            qh[l] = (uint8_t)(q1 >> 4 | (q2 >> 4) << 2 | (q3 >> 4) << 4 | (q4 >> 4) << 6);
        }
}
