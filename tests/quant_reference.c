/* The formats' reference for the quantised-weights suite: block sizes,
 * the float64 value of each element from the block definition, readers
 * of a quantised tensor's bytes, random blocks. */
#include "quant_test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int block_bytes(wt_quant_type t)
{
    return t == WT_QUANT_Q8_0 ? Q8_BYTES : t == WT_QUANT_Q4_0 ? Q4_BYTES : t == WT_QUANT_Q4_K ? Q4K_BYTES : Q6K_BYTES;
}
/* Elements per block. */
int block_elems(wt_quant_type t) { return t == WT_QUANT_Q4_K || t == WT_QUANT_Q6_K ? 256 : 32; }
const char *quant_type_name(wt_quant_type t)
{
    return t == WT_QUANT_Q8_0 ? "Q8_0" : t == WT_QUANT_Q4_0 ? "Q4_0" : t == WT_QUANT_Q4_K ? "Q4_K" : "Q6_K";
}
const wt_quant_type all_types[4] = {WT_QUANT_Q8_0, WT_QUANT_Q4_0, WT_QUANT_Q4_K, WT_QUANT_Q6_K};

double half_field(const uint8_t *b) { return test_half_to_double((uint16_t)(b[0] | b[1] << 8)); }

/* Q4_K's 6-bit scale and min of sub-block s, as the format defines them. */
void q4k_sm(const uint8_t *S, int s, int *sc, int *m)
{
    if (s < 4) {
        *sc = S[s] & 63, *m = S[s + 4] & 63;
    } else {
        *sc = (S[s + 4] & 15) | (S[s - 4] >> 6) << 4;
        *m = (S[s + 4] >> 4) | (S[s] >> 6) << 4;
    }
}

/* Element j of a block, in float64, from the format's definition; *mag
 * (when not NULL) gets the sum of the magnitudes of its terms (Q4_K's two
 * products), the scale of its rounding. Exact in float64 for the blocks
 * made here (d of at most 2^15, products of at most 40 bits). */
double ref_elem_mag(wt_quant_type t, const uint8_t *blk, int j, double *mag)
{
    double v;
    if (t == WT_QUANT_Q8_0) {
        v = (double)(int8_t)blk[2 + j] * half_field(blk);
    } else if (t == WT_QUANT_Q4_0) {
        const int byte = blk[2 + (j & 15)];
        const int nib = j < 16 ? byte & 15 : byte >> 4;
        v = (double)(nib - 8) * half_field(blk);
    } else if (t == WT_QUANT_Q4_K) {
        int sc, m;
        const int s = j / 32;
        q4k_sm(blk + 4, s, &sc, &m);
        const int byte = blk[16 + 32 * (j / 64) + j % 32];
        const int q = s % 2 == 0 ? byte & 15 : byte >> 4;
        const double a = half_field(blk) * sc * q, b = half_field(blk + 2) * m;
        if (mag) *mag = fabs(a) + fabs(b);
        return a - b;
    } else {
        const int h = j / 128, g = j % 128 / 32, l = j % 32;
        const int lo = blk[64 * h + 32 * (g & 1) + l] >> (g < 2 ? 0 : 4) & 15;
        const int hi = blk[128 + 32 * h + l] >> (2 * g) & 3;
        v = half_field(blk + 208) * (int8_t)blk[192 + 8 * h + 2 * g + l / 16] * ((lo | hi << 4) - 32);
    }
    if (mag) *mag = fabs(v);
    return v;
}
double ref_elem(wt_quant_type t, const uint8_t *blk, int j) { return ref_elem_mag(t, blk, j, NULL); }

/* Element j of row r of n rows x k, in float64. */
double ref_at(wt_quant_type t, const uint8_t *blocks, int64_t k, int64_t r, int64_t j, double *mag)
{
    const int be = block_elems(t);
    return ref_elem_mag(t, blocks + (r * (k / be) + j / be) * block_bytes(t), (int)(j % be), mag);
}

/* The raw block bytes of a quantised tensor [n, W] (padding dropped). */
bool read_blocks(const wt_tensor *w, wt_quant_type t, int64_t n, int64_t k, uint8_t *dst)
{
    const int64_t words = wt_tensor_shape(w)[1], row_bytes = k / block_elems(t) * block_bytes(t);
    uint32_t *buf = malloc((size_t)(n * words) * 4);
    bool ok = buf && wt_tensor_read(w, buf, (size_t)(n * words) * 4) == WT_OK;
    for (int64_t r = 0; ok && r < n; r++) {
        for (int64_t b = 0; b < row_bytes; b++) dst[r * row_bytes + b] = (uint8_t)(buf[r * words + b / 4] >> (8 * (b % 4)));
        for (int64_t b = row_bytes; b < words * 4; b++)
            ok = ok && ((buf[r * words + b / 4] >> (8 * (b % 4))) & 0xff) == 0; /* padding is zero */
    }
    free(buf);
    return ok;
}

float *read_f32(const wt_tensor *t)
{
    char err[128];
    float *v = test_read_guarded(t, err, sizeof err);
    if (!v) CHECK(false, "read: %s", err);
    return v;
}

/* With it set, random_scale makes subnormal scales. */
bool g_subnormal_scales;

/* An f16 of either sign with exponent 8 .. 15 (2^-7 .. 1) into b[0..1], or
 * a subnormal one (2^-24 .. 1023 * 2^-24) while g_subnormal_scales. */
static void random_scale(uint8_t *b)
{
    const uint16_t sign = (uint16_t)(test_rng_next() & 0x8000u);
    const uint16_t h = g_subnormal_scales
                           ? (uint16_t)(sign | (1u + test_rng_next() % 1023u))
                           : (uint16_t)(sign | (8u + test_rng_next() % 8u) << 10 | (test_rng_next() & 0x3ffu));
    b[0] = (uint8_t)(h & 0xff), b[1] = (uint8_t)(h >> 8);
}

/* Random blocks (random bytes, finite scales of both signs). */
void random_blocks(wt_quant_type t, int64_t n, int64_t k, uint8_t *dst)
{
    const int bb = block_bytes(t);
    for (int64_t b = 0; b < n * k / block_elems(t); b++) {
        uint8_t *blk = dst + b * bb;
        for (int i = 0; i < bb; i++) blk[i] = (uint8_t)test_rng_next();
        if (t == WT_QUANT_Q4_K) {
            random_scale(blk);     /* d */
            random_scale(blk + 2); /* dmin */
        } else {
            random_scale(blk + (t == WT_QUANT_Q6_K ? 208 : 0));
        }
    }
}
