/* Quantised weights (ggml's Q8_0, Q4_0, Q4_K and Q6_K blocks): hand-made
 * blocks whose
 * bytes are derived below from the format, dequantised against float64
 * computed here from the block definition; quantisation against the bytes
 * the reference quantisers give (each case worked out in its comment) and
 * round trips; the fused linear against float64 and against dequantise +
 * the library's matmul; a GGUF file round trip. */
#define _POSIX_C_SOURCE 200809L
#include "test_util.h"
#include "webtensor_io.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static wt_context *g_ctx;

enum { Q8_BYTES = 34, Q4_BYTES = 18, Q4K_BYTES = 144, Q6K_BYTES = 210 };

static int block_bytes(wt_quant_type t)
{
    return t == WT_QUANT_Q8_0 ? Q8_BYTES : t == WT_QUANT_Q4_0 ? Q4_BYTES : t == WT_QUANT_Q4_K ? Q4K_BYTES : Q6K_BYTES;
}
/* Elements per block. */
static int block_elems(wt_quant_type t) { return t == WT_QUANT_Q4_K || t == WT_QUANT_Q6_K ? 256 : 32; }
static const char *tname(wt_quant_type t)
{
    return t == WT_QUANT_Q8_0 ? "Q8_0" : t == WT_QUANT_Q4_0 ? "Q4_0" : t == WT_QUANT_Q4_K ? "Q4_K" : "Q6_K";
}
static const wt_quant_type all_types[4] = {WT_QUANT_Q8_0, WT_QUANT_Q4_0, WT_QUANT_Q4_K, WT_QUANT_Q6_K};

static double half_field(const uint8_t *b) { return test_half_to_double((uint16_t)(b[0] | b[1] << 8)); }

/* Q4_K's 6-bit scale and min of sub-block s, as the format defines them. */
static void q4k_sm(const uint8_t *S, int s, int *sc, int *m)
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
static double ref_elem_mag(wt_quant_type t, const uint8_t *blk, int j, double *mag)
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
static double ref_elem(wt_quant_type t, const uint8_t *blk, int j) { return ref_elem_mag(t, blk, j, NULL); }

/* Element j of row r of n rows x k, in float64. */
static double ref_at(wt_quant_type t, const uint8_t *blocks, int64_t k, int64_t r, int64_t j, double *mag)
{
    const int be = block_elems(t);
    return ref_elem_mag(t, blocks + (r * (k / be) + j / be) * block_bytes(t), (int)(j % be), mag);
}

/* The raw block bytes of a quantised tensor [n, W] (padding dropped). */
static bool read_blocks(const wt_tensor *w, wt_quant_type t, int64_t n, int64_t k, uint8_t *dst)
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

static float *read_f32(const wt_tensor *t)
{
    char err[128];
    float *v = test_read_guarded(t, err, sizeof err);
    if (!v) CHECK(false, "read: %s", err);
    return v;
}

/* ---------------------------------------------------------------- layout */

static void test_layout(void)
{
    /* W = ceil(K/32 * bytes / 4): Q8_0 K=32: 34 -> 9 words (2 bytes of
     * padding); K=64: 68 -> 17 (none). Q4_0 K=32: 18 -> 5; K=64: 36 -> 9. */
    const struct { wt_quant_type t; int64_t k, words; } cases[] = {
        {WT_QUANT_Q8_0, 32, 9}, {WT_QUANT_Q8_0, 64, 17}, {WT_QUANT_Q4_0, 32, 5}, {WT_QUANT_Q4_0, 64, 9},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const int64_t k = cases[c].k;
        uint8_t blocks[2 * 68];
        const size_t bytes = (size_t)(2 * k / 32 * block_bytes(cases[c].t));
        for (size_t i = 0; i < bytes; i++) blocks[i] = (uint8_t)(i * 13 + 1);
        for (int64_t b = 0; b < 2 * k / 32; b++) blocks[b * block_bytes(cases[c].t) + 1] = 0x3c; /* finite d */
        wt_tensor *w = NULL;
        wt_status st = wt_quant_from_blocks(g_ctx, cases[c].t, 2, k, blocks, bytes, &w);
        CHECK(st == WT_OK, "from_blocks %s K=%lld: %s", tname(cases[c].t), (long long)k, wt_last_error());
        if (st != WT_OK) continue;
        CHECK(wt_tensor_dtype(w) == WT_I32 && wt_tensor_ndim(w) == 2 && wt_tensor_shape(w)[0] == 2 &&
                  wt_tensor_shape(w)[1] == cases[c].words,
              "%s K=%lld: i32 [2, %lld]", tname(cases[c].t), (long long)k, (long long)cases[c].words);
        /* Byte b of a row is bits 8*(b%4) of word b/4: word 0 of row 0
         * holds bytes 0..3 little-endian. */
        int32_t w0 = 0;
        uint8_t back[2 * 68];
        CHECK(read_blocks(w, cases[c].t, 2, k, back) && memcmp(back, blocks, bytes) == 0,
              "%s K=%lld: the words hold the bytes in order, padding zero", tname(cases[c].t), (long long)k);
        uint32_t words[2 * 17];
        if (wt_tensor_read(w, words, sizeof(uint32_t) * (size_t)(2 * cases[c].words)) == WT_OK) w0 = (int32_t)words[0];
        CHECK((uint32_t)w0 == ((uint32_t)blocks[0] | (uint32_t)blocks[1] << 8 | (uint32_t)blocks[2] << 16 |
                               (uint32_t)blocks[3] << 24),
              "%s: word 0 is bytes 0..3 little-endian", tname(cases[c].t));
        wt_tensor_release(w);
    }
}

/* ------------------------------------------------------------ dequantise */

/* Checks dequantise of n rows x k of blocks against float64: f32 equal to
 * the float64 value rounded to f32 (exact for Q8_0, Q4_0 and Q6_K; Q4_K
 * rounds its one difference), f16 equal to that f32 rounded to f16. */
static void check_dequant(wt_quant_type t, int64_t n, int64_t k, const uint8_t *blocks, const char *what)
{
    wt_tensor *w = NULL, *y = NULL, *yh = NULL, *yh32 = NULL;
    const size_t bytes = (size_t)(n * k / block_elems(t) * block_bytes(t));
    wt_status st = wt_quant_from_blocks(g_ctx, t, n, k, blocks, bytes, &w);
    if (!CHECK(st == WT_OK, "%s: from_blocks: %s", what, wt_last_error())) return;
    st = wt_dequantize(w, t, WT_F32, &y);
    CHECK(st == WT_OK, "%s: dequantize: %s", what, wt_last_error());
    float *v = y ? read_f32(y) : NULL;
    int bad = 0, bad16 = 0;
    if (v) {
        for (int64_t r = 0; r < n; r++)
            for (int64_t j = 0; j < k; j++) {
                const double want = (double)(float)ref_at(t, blocks, k, r, j, NULL);
                if ((double)v[r * k + j] != want && bad++ < 3)
                    printf("  %s [%lld,%lld] = %.9g, want %.9g\n", what, (long long)r, (long long)j,
                           (double)v[r * k + j], want);
            }
    }
    CHECK(v && bad == 0, "%s: dequantised f32 equals float64 of the definition (%d differ)", what, bad);
    st = wt_dequantize(w, t, WT_F16, &yh);
    CHECK(st == WT_OK && wt_tensor_dtype(yh) == WT_F16, "%s: dequantize to f16: %s", what, wt_last_error());
    if (st == WT_OK && wt_cast(yh, WT_F32, &yh32) == WT_OK) {
        float *h = read_f32(yh32);
        for (int64_t i = 0; h && i < n * k; i++) {
            const double want = (double)(float)ref_at(t, blocks, k, i / k, i % k, NULL);
            if ((double)h[i] != test_half_to_double(test_double_to_half(want))) bad16++;
        }
        CHECK(h && bad16 == 0, "%s: dequantised f16 equals float64 rounded to f16 (%d differ)", what, bad16);
        free(h);
    }
    free(v);
    wt_tensor_release(w);
    wt_tensor_release(y);
    wt_tensor_release(yh);
    wt_tensor_release(yh32);
}

static void test_dequant_hand(void)
{
    /* Q8_0, two rows of one block each.
     * Row 0: d = 0x3800 = 0.5 (bytes 00 38); q = 1, -1 (0xff), 127 (0x7f),
     *   -128 (0x80), 0, then 0x10 (16) ...: values 0.5, -0.5, 63.5, -64, 0, 8.
     * Row 1: d = 0xb400 = -0.25 (a negative d is valid in the format: the
     *   reference quantiser never writes one, files may): q = 4 -> -1.0,
     *   -4 (0xfc) -> 1.0, then subnormal d is in the Q4_0 case below. */
    uint8_t q8[2 * Q8_BYTES] = {0x00, 0x38, 0x01, 0xff, 0x7f, 0x80, 0x00};
    for (int j = 5; j < 32; j++) q8[2 + j] = 0x10;
    uint8_t *r1 = q8 + Q8_BYTES;
    r1[0] = 0x00, r1[1] = 0xb4, r1[2] = 0x04, r1[3] = 0xfc;
    for (int j = 2; j < 32; j++) r1[2 + j] = (uint8_t)(j * 9);
    /* Spot checks of the paper values before the whole comparison. */
    CHECK(ref_elem(WT_QUANT_Q8_0, q8, 2) == 63.5 && ref_elem(WT_QUANT_Q8_0, q8, 3) == -64.0 &&
              ref_elem(WT_QUANT_Q8_0, r1, 0) == -1.0 && ref_elem(WT_QUANT_Q8_0, r1, 1) == 1.0,
          "Q8_0 hand block: the reference reads the paper values");
    check_dequant(WT_QUANT_Q8_0, 2, 32, q8, "Q8_0 hand blocks");

    /* Q4_0, one row of two blocks.
     * Block 0: d = 0xc000 = -2.0 (bytes 00 c0); qs[0] = 0x0f: element 0 =
     *   15 - 8 = 7 -> -14, element 16 = 0 - 8 -> +16; qs[1] = 0x80: element
     *   1 = -8 -> 16, element 17 = 0 -> 0; qs[2] = 0x98: element 2 = 0 ->
     *   0, element 18 = 1 -> -2; the rest 0x88: zeros.
     * Block 1: d = 0x0001 = 2^-24 (the smallest subnormal f16): qs[0] =
     *   0xf0: element 0 = -8 * 2^-24, element 16 = 7 * 2^-24. */
    uint8_t q4[2 * Q4_BYTES] = {0x00, 0xc0, 0x0f, 0x80, 0x98};
    for (int j = 3; j < 16; j++) q4[2 + j] = 0x88;
    uint8_t *b1 = q4 + Q4_BYTES;
    b1[0] = 0x01, b1[1] = 0x00, b1[2] = 0xf0;
    for (int j = 1; j < 16; j++) b1[2 + j] = (uint8_t)(0x11 * j);
    CHECK(ref_elem(WT_QUANT_Q4_0, q4, 0) == -14.0 && ref_elem(WT_QUANT_Q4_0, q4, 16) == 16.0 &&
              ref_elem(WT_QUANT_Q4_0, q4, 1) == 16.0 && ref_elem(WT_QUANT_Q4_0, q4, 18) == -2.0 &&
              ref_elem(WT_QUANT_Q4_0, b1, 0) == -8.0 * ldexp(1.0, -24) &&
              ref_elem(WT_QUANT_Q4_0, b1, 16) == 7.0 * ldexp(1.0, -24),
          "Q4_0 hand blocks: the reference reads the paper values");
    check_dequant(WT_QUANT_Q4_0, 1, 64, q4, "Q4_0 hand blocks");
}

/* Q4_K, one row of two super-blocks, bytes derived from the layout in
 * webtensor.h.
 * Block 0: d = 0x3c00 = 1 (bytes 00 3c), dmin = 0x3800 = 0.5 (00 38).
 *   Scales S[0..11] (bytes 4..15): S[0] = 0x41: sc[0] = 1, its top bits
 *   (1) become bits 4..5 of sc[4]; S[1] = 0x3f: sc[1] = 63; S[4] = 0x82:
 *   m[0] = 2, top bits (2) into m[4]; S[5] = 0xc1: m[1] = 1, top bits (3)
 *   into m[5]; S[8] = 0x53: sc[4] = 3 | 1 << 4 = 19, m[4] = 5 | 2 << 4 =
 *   37; S[9] = 0: sc[5] = 0 | (S[1] >> 6 = 0) << 4 = 0, m[5] = 0 | 3 << 4
 *   = 48; the other scales and mins 0.
 *   qs (bytes 16..143): qs[0] = 0xf3: element 0 (sub-block 0, low nibble
 *   3) = 1*1*3 - 0.5*2 = 2; element 32 (sub-block 1, high nibble 15) =
 *   63*15 - 0.5*1 = 944.5. qs[64] = 0x2a: element 128 (sub-block 4, 10) =
 *   19*10 - 0.5*37 = 171.5; element 160 (sub-block 5, 2) = 0*2 - 0.5*48 =
 *   -24. Other nibbles 0: -1 in sub-block 0, -0.5 in 1, -18.5 in 4, -24
 *   in 5, 0 in 2, 3, 6, 7.
 * Block 1: d = 1, dmin = 0x0001 = 2^-24, S[0] = 1, S[4] = 1 (sc[0] =
 *   m[0] = 1), qs[0] = 0x03: element 0 = 3 - 2^-24, which f32 rounds to 3
 *   (a quarter of its ulp below); element 1 (nibble 0) = -2^-24, exact.
 */
static void test_dequant_hand_q4k(void)
{
    uint8_t b[2 * Q4K_BYTES] = {0x00, 0x3c, 0x00, 0x38};
    uint8_t *S = b + 4, *qs = b + 16;
    S[0] = 0x41, S[1] = 0x3f, S[4] = 0x82, S[5] = 0xc1, S[8] = 0x53;
    qs[0] = 0xf3, qs[64] = 0x2a;
    uint8_t *b1 = b + Q4K_BYTES;
    b1[0] = 0x00, b1[1] = 0x3c, b1[2] = 0x01, b1[3] = 0x00, b1[4] = 1, b1[8] = 1, b1[16] = 0x03;
    const struct { int j; double v; } paper[] = {
        {0, 2.0}, {32, 944.5}, {1, -1.0}, {33, -0.5}, {128, 171.5}, {160, -24.0}, {129, -18.5}, {161, -24.0},
        {64, 0.0}, {200, 0.0}, {256, 3.0 - ldexp(1.0, -24)}, {257, -ldexp(1.0, -24)},
    };
    int wrong = 0;
    for (size_t i = 0; i < sizeof paper / sizeof paper[0]; i++)
        if (ref_at(WT_QUANT_Q4_K, b, 512, 0, paper[i].j, NULL) != paper[i].v) wrong++;
    CHECK(wrong == 0 && (float)(3.0 - ldexp(1.0, -24)) == 3.0f,
          "Q4_K hand blocks: the reference reads the paper values (%d differ)", wrong);
    check_dequant(WT_QUANT_Q4_K, 1, 512, b, "Q4_K hand blocks");
}

/* Q6_K, one super-block. d = 0x3800 = 0.5 (bytes 208, 209 = 00 38);
 * scales (bytes 192..207): sc[0] = 2, sc[1] = -3 (0xfd), sc[2] = 127,
 * sc[3] = -128 (0x80), sc[4] = 1, sc[6] = -2 (0xfe), sc[9] = 5, others 0.
 * ql[0] = 0x5a, ql[32] = 0x0f, ql[80] = 0x07; qh[0] = 0xe4 (bit pairs 0,
 * 1, 2, 3 from the bottom), qh[48] = 0x03; every other byte 0.
 *   element 0 (h 0, quarter 0, l 0): low nibble of ql[0] = 10, qh[0] bits
 *     0..1 = 0: q = 10 - 32 = -22; x = 0.5 * 2 * -22 = -22;
 *   element 32 (quarter 1): low nibble of ql[32] = 15, qh bits 2..3 = 1:
 *     q = 31 - 32 = -1; scale sc[2]: x = 0.5 * 127 * -1 = -63.5;
 *   element 64 (quarter 2): high nibble of ql[0] = 5, bits 4..5 = 2: q =
 *     37 - 32 = 5; sc[4]: x = 2.5;
 *   element 96 (quarter 3): high nibble of ql[32] = 0, bits 6..7 = 3:
 *     q = 48 - 32 = 16; sc[6]: x = 0.5 * -2 * 16 = -16;
 *   element 16 (quarter 0, second sub-block): q = -32, sc[1]: x = 48;
 *   element 48: q = -32, sc[3] = -128: x = 2048;
 *   element 144 (h 1, quarter 0, l 16): ql[64 + 16] = 7, qh[32 + 16] bits
 *     0..1 = 3: q = 55 - 32 = 23, sc[8 + 1]: x = 0.5 * 5 * 23 = 57.5;
 *   element 1: q = -32, sc[0]: x = -32; element 128: sc[8] = 0: x = 0. */
static void test_dequant_hand_q6k(void)
{
    uint8_t b[Q6K_BYTES] = {0};
    b[0] = 0x5a, b[32] = 0x0f, b[80] = 0x07;
    b[128] = 0xe4, b[128 + 48] = 0x03;
    int8_t *sc = (int8_t *)(b + 192);
    sc[0] = 2, sc[1] = -3, sc[2] = 127, sc[3] = -128, sc[4] = 1, sc[6] = -2, sc[9] = 5;
    b[208] = 0x00, b[209] = 0x38;
    CHECK(b[193] == 0xfd && b[195] == 0x80 && b[198] == 0xfe, "Q6_K hand block: the scale bytes");
    const struct { int j; double v; } paper[] = {
        {0, -22.0}, {32, -63.5}, {64, 2.5}, {96, -16.0}, {16, 48.0}, {48, 2048.0}, {144, 57.5}, {1, -32.0}, {128, 0.0},
    };
    int wrong = 0;
    for (size_t i = 0; i < sizeof paper / sizeof paper[0]; i++)
        if (ref_at(WT_QUANT_Q6_K, b, 256, 0, paper[i].j, NULL) != paper[i].v) wrong++;
    CHECK(wrong == 0, "Q6_K hand block: the reference reads the paper values (%d differ)", wrong);
    check_dequant(WT_QUANT_Q6_K, 1, 256, b, "Q6_K hand block");
}

/* With it set, random_scale makes subnormal scales. */
static bool g_subnormal_scales;

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
static void random_blocks(wt_quant_type t, int64_t n, int64_t k, uint8_t *dst)
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

static void test_dequant_random(void)
{
    const int64_t ks[] = {32, 96, 160}, kks[] = {256, 768};
    for (int ti = 0; ti < 4; ti++) {
        const wt_quant_type t = all_types[ti];
        const bool super = block_elems(t) == 256;
        for (size_t c = 0; c < (super ? 2u : 3u); c++) {
            const int64_t n = 7, k = super ? kks[c] : ks[c];
            uint8_t *blocks = malloc((size_t)(n * k / block_elems(t) * block_bytes(t)));
            if (!blocks) continue;
            random_blocks(t, n, k, blocks);
            char what[64];
            snprintf(what, sizeof what, "%s random [%lld, %lld]", tname(t), (long long)n, (long long)k);
            check_dequant(t, n, k, blocks, what);
            free(blocks);
        }
    }
}

/* -------------------------------------------------------------- quantise */

/* Quantises one row of 32 values and compares the 18/34 bytes. */
static void check_quant_block(wt_quant_type t, const float *x, const uint8_t *want, const char *what)
{
    const int64_t shape[2] = {1, 32};
    wt_tensor *xt = NULL, *q = NULL;
    uint8_t got[Q8_BYTES];
    wt_status st = wt_tensor_from_data(g_ctx, WT_F32, 2, shape, x, &xt);
    if (st == WT_OK) st = wt_quantize(xt, t, &q);
    CHECK(st == WT_OK, "%s: quantize: %s", what, wt_last_error());
    if (st == WT_OK && read_blocks(q, t, 1, 32, got)) {
        int first = -1;
        for (int i = 0; i < block_bytes(t) && first < 0; i++)
            if (got[i] != want[i]) first = i;
        CHECK(first < 0, "%s: byte %d is 0x%02x, want 0x%02x", what, first, first < 0 ? 0 : got[first],
              first < 0 ? 0 : want[first]);
    }
    wt_tensor_release(xt);
    wt_tensor_release(q);
}

static void test_quant_hand(void)
{
    /* Q8_0 (d = amax / 127, q = roundf(x / d), halves away from zero):
     * x = 127, -63.5, 0.5, 1.5, -0.5, 2.5, -127, 126.49, zeros: amax = 127,
     * d = 1 (f16 0x3c00: bytes 00 3c), 1/d = 1; q = 127 (7f), -64 (c0: the
     * half away from zero, not to even -64 either way), 1, 2, -1 (ff), 3
     * (to even would be 2), -127 (81), 126 (7e), zeros. */
    {
        float x[32] = {127.0f, -63.5f, 0.5f, 1.5f, -0.5f, 2.5f, -127.0f, 126.49f};
        uint8_t want[Q8_BYTES] = {0x00, 0x3c, 0x7f, 0xc0, 0x01, 0x02, 0xff, 0x03, 0x81, 0x7e};
        check_quant_block(WT_QUANT_Q8_0, x, want, "Q8_0 d = 1, rounding halves");
    }
    /* x = 1, -0.25, zeros: d = fl32(1/127) = 0.0078740157..., which rounds
     * to f16 0x2008 (2^-7 * (1 + 8/1024) = 0.0078735...; the mantissa
     * (d/2^-7 - 1) * 1024 = 8.06 -> 8); 1/d = 127 exactly in f32 (the f32
     * d, not the f16 one, divides); q = 127 (7f), roundf(-31.75) = -32 (e0). */
    {
        float x[32] = {1.0f, -0.25f};
        uint8_t want[Q8_BYTES] = {0x08, 0x20, 0x7f, 0xe0};
        check_quant_block(WT_QUANT_Q8_0, x, want, "Q8_0 d rounded to f16");
    }
    /* All zeros: d = 0, quants 0 (1/d taken as 0). */
    {
        float x[32] = {0};
        uint8_t want[Q8_BYTES] = {0};
        check_quant_block(WT_QUANT_Q8_0, x, want, "Q8_0 zeros");
    }
    /* Q4_0 (m = the first element of largest magnitude, d = m / -8,
     * q = min(15, trunc(x / d + 8.5))), a negative m: x[0] = -8, x[1] = 7,
     * x[2] = 8 (as large as x[0] but later: m stays -8), x[3] = 0, x[4] =
     * -0.5, x[5] = 0.5, x[6] = -3.5, x[7] = -3.6, x[16] = 1.25, x[17] = -7.9,
     * zeros elsewhere. d = 1 (00 3c), 1/d = 1:
     *   x[0]: 0.5 -> 0; x[1]: 15.5 -> 15; x[2]: 16.5 -> 16 -> 15 (clamped);
     *   x[3]: 8; x[4]: 8.0 -> 8; x[5]: 9; x[6]: 5.0 -> 5; x[7]: fl32(-3.6)
     *   + 8.5 = 4.9000001 -> 4; x[16]: 9.75 -> 9; x[17]: 0.6 -> 0; zeros 8.
     * Bytes qs[j] = q[j] | q[j+16] << 4: 90 0f 8f 88 88 89 85 84, 88 x 8. */
    {
        float x[32] = {-8.0f, 7.0f, 8.0f, 0.0f, -0.5f, 0.5f, -3.5f, -3.6f};
        x[16] = 1.25f, x[17] = -7.9f;
        uint8_t want[Q4_BYTES] = {0x00, 0x3c, 0x90, 0x0f, 0x8f, 0x88, 0x88, 0x89, 0x85, 0x84};
        for (int j = 8; j < 16; j++) want[2 + j] = 0x88;
        check_quant_block(WT_QUANT_Q4_0, x, want, "Q4_0 negative max (d > 0)");
    }
    /* A positive m: x[0] = 4, x[1] = -4, x[2] = 1, x[3] = -1, x[4] = 0.25,
     * x[20] = -4, x[21] = 3.9, zeros elsewhere. d = 4 / -8 = -0.5 (f16
     * 0xb800: 00 b8), 1/d = -2: x[0]: -8 + 8.5 -> 0; x[1]: 16.5 -> 15;
     * x[2]: 6.5 -> 6; x[3]: 10.5 -> 10; x[4]: 8.0 -> 8; x[20]: 15;
     * x[21]: -7.8 + 8.5 = 0.7 -> 0; zeros 8.
     * qs: 80 8f 86 8a f8 08, 88 x 10. */
    {
        float x[32] = {4.0f, -4.0f, 1.0f, -1.0f, 0.25f};
        x[20] = -4.0f, x[21] = 3.9f;
        uint8_t want[Q4_BYTES] = {0x00, 0xb8, 0x80, 0x8f, 0x86, 0x8a, 0xf8, 0x08};
        for (int j = 6; j < 16; j++) want[2 + j] = 0x88;
        check_quant_block(WT_QUANT_Q4_0, x, want, "Q4_0 positive max (d < 0)");
    }
    /* All zeros: m = 0, d = 0 / -8 = -0 (f16 0x8000: bytes 00 80), 1/d
     * taken as 0, every q = trunc(8.5) = 8. */
    {
        float x[32] = {0};
        uint8_t want[Q4_BYTES] = {0x00, 0x80};
        for (int j = 0; j < 16; j++) want[2 + j] = 0x88;
        check_quant_block(WT_QUANT_Q4_0, x, want, "Q4_0 zeros");
    }
}

/* Quantises one row of 256 values to a super-block type and compares the
 * 144 / 210 bytes with want. */
static void check_quant_super(wt_quant_type t, const float *x, const uint8_t *want, const char *what)
{
    const int64_t shape[2] = {1, 256};
    wt_tensor *xt = NULL, *q = NULL;
    uint8_t got[Q6K_BYTES];
    wt_status st = wt_tensor_from_data(g_ctx, WT_F32, 2, shape, x, &xt);
    if (st == WT_OK) st = wt_quantize(xt, t, &q);
    CHECK(st == WT_OK, "%s: quantize: %s", what, wt_last_error());
    if (st == WT_OK && read_blocks(q, t, 1, 256, got)) {
        int first = -1;
        for (int i = 0; i < block_bytes(t) && first < 0; i++)
            if (got[i] != want[i]) first = i;
        CHECK(first < 0, "%s: byte %d is 0x%02x, want 0x%02x", what, first, first < 0 ? 0 : got[first],
              first < 0 ? 0 : want[first]);
    }
    wt_tensor_release(xt);
    wt_tensor_release(q);
}

/* The codes' places, from the format's definition in the header. */
static void pack_q4k_codes(const int *L, uint8_t *qs)
{
    memset(qs, 0, 128);
    for (int e = 0; e < 256; e++) qs[32 * (e / 64) + e % 32] |= (uint8_t)(L[e] << (e % 64 < 32 ? 0 : 4));
}
static void pack_q6k_codes(const int *L, uint8_t *blk)
{
    memset(blk, 0, 192);
    for (int e = 0; e < 256; e++) {
        const int h = e / 128, g = e % 128 / 32, l = e % 32;
        blk[64 * h + 32 * (g & 1) + l] |= (uint8_t)((L[e] & 15) << (g < 2 ? 0 : 4));
        blk[128 + 32 * h + l] |= (uint8_t)((L[e] >> 4) << (2 * g));
    }
}

/* K-quants on blocks whose search has an exact answer, so the bytes follow
 * on paper. */
static void test_quant_hand_kquants(void)
{
    /* Q4_K. Sub-block j holds x = s_j * v + min_j with v = (7i + j) % 16
     * for i = 0..31 (every code 0..15, 0 and 15 included), s_j a power of
     * two and min_j <= 0:
     *   j:     0    1     2      3      4    5     6       7
     *   s_j:   1   1/2   1/4    (x=0)   1   1/2   1/8      1
     *   min_j: 0   -1    -1/2    0     -1    0    -1/4   -1/2
     * The search's first try is exact: the range is 15 s_j, its scale
     * 15 / (15 s_j) = 1/s_j and the codes v are exact, so the weighted
     * error is 0 and no later try (which must be < 0) replaces it: scale
     * s_j, min -min_j. Sub-block 3 (all 0) has max == min: codes 0, scale
     * 0, min 0. max scale = 1, max min = 1:
     *   d = dmin = f16(1/63): 1/63 = 2^-6 * 1.015873 -> mantissa 16.25 ->
     *   16: 0x2410 (= 0.015869140625), bytes 10 24 10 24;
     *   sc = nearest(63 s_j): 63, 31.5 -> 32 (the tie to even), 15.75 ->
     *   16, 0, 63, 32, 7.875 -> 8, 63;
     *   m = nearest(63 * -min_j): 0, 63, 32, 0, 63, 0, 16, 32.
     * The 12 bytes S: S[j] = sc_j, S[j+4] = m_j for j < 4 (3f 20 10 00,
     * 00 3f 20 00); for j >= 4, S[j+4] = (sc & 15) | (m & 15) << 4 and the
     * top two bits of sc_j into S[j-4] bits 6-7, of m_j into S[j]'s:
     *   j 4 (63, 63): S8 = ff, S0 = 3f|c0 = ff, S4 = c0;
     *   j 5 (32, 0):  S9 = 00, S1 = 20|80 = a0;
     *   j 6 (8, 16):  S10 = 08, S6 = 20|40 = 60;
     *   j 7 (63, 32): S11 = 0f, S3 = c0, S7 = 80;
     *   S = ff a0 10 c0 c0 3f 60 80 ff 00 08 0f.
     * The codes again against the stored values, (x + dmin m) / (d sc):
     * d sc = 0.99975586 (sc 63), 0.5078125 (32), 0.25390625 (16),
     * 0.12695313 (8); dmin m = 0.99975586 (63), 0.5078125 (32), 0.25390625
     * (16); e.g. j 6: (v/8 - 1/4 + 0.25390625) / 0.12695313 = 0.985 v +
     * 0.031, within 0.27 of v for v <= 15: every code is v again (0 in
     * sub-block 3: its d sc is 0, it keeps the search's codes). */
    {
        static const float s[8] = {1, 0.5f, 0.25f, 0, 1, 0.5f, 0.125f, 1},
                           mn[8] = {0, -1, -0.5f, 0, -1, 0, -0.25f, -0.5f};
        float x[256];
        int L[256];
        for (int j = 0; j < 8; j++)
            for (int i = 0; i < 32; i++) {
                const int v = (7 * i + j) % 16;
                x[32 * j + i] = s[j] * (float)v + mn[j];
                L[32 * j + i] = j == 3 ? 0 : v;
            }
        uint8_t want[Q4K_BYTES] = {0x10, 0x24, 0x10, 0x24, 0xff, 0xa0, 0x10, 0xc0,
                                   0xc0, 0x3f, 0x60, 0x80, 0xff, 0x00, 0x08, 0x0f};
        pack_q4k_codes(L, want + 16);
        check_quant_super(WT_QUANT_Q4_K, x, want, "Q4_K exact sub-blocks");
    }
    /* All zeros: every sub-block max == min = 0, max scale = max min = 0:
     * every byte 0. */
    {
        float x[256] = {0};
        uint8_t want[Q4K_BYTES] = {0};
        check_quant_super(WT_QUANT_Q4_K, x, want, "Q4_K zeros");
    }
    /* Q6_K. Sub-block b (16 values) is s_b * v with v = -32, 1, -1, 2,
     * then zeros, s_b = 1 for even b and 1/2 for odd, except b 15 = 0 and
     * b 14 = -1/2 (its largest magnitude positive). The search's first try:
     * max = -32 s_b, iscale = -32 / max = 1/s_b: codes l = v exactly, the
     * least-squares scale (weights x^2) sum(w x l) / sum(w l^2) = s_b
     * exactly (integers below 2^24 times powers of two), and it explains
     * all of x, which no later try exceeds (a strict > is needed): scale
     * s_b. For b 14 (max = +16): iscale = -2, l = v again, scale -1/2.
     * Sub-block 15 is all 0: codes 0, scale 0. Largest |scale| 1 (b 0,
     * the first), iscale = -128 / 1, d = f16(-1/128) = 0xa000 (bytes
     * 00 a0 at 208); sc = nearest(-128 s_b): -128 (80) for s 1, -64 (c0)
     * for 1/2, 64 (40) for b 14, 0 for b 15. The codes against the stored
     * values, x / (d sc): d sc = s_b exactly (1, 1/2; b 14: -1/2), so
     * code = v + 32: 0, 33, 31, 34, then 32s; b 15 (d sc = 0) keeps the
     * search's codes 0. */
    {
        float x[256] = {0};
        int L[256];
        uint8_t want[Q6K_BYTES] = {0};
        static const int v[4] = {-32, 1, -1, 2};
        for (int b = 0; b < 16; b++) {
            const float sb = b == 15 ? 0.0f : b == 14 ? -0.5f : b % 2 ? 0.5f : 1.0f;
            for (int i = 0; i < 16; i++) {
                const int vi = i < 4 ? v[i] : 0;
                x[16 * b + i] = sb * (float)vi;
                L[16 * b + i] = b == 15 ? 0 : vi + 32;
            }
            want[192 + b] = b == 15 ? 0x00 : b == 14 ? 0x40 : b % 2 ? 0xc0 : 0x80;
        }
        pack_q6k_codes(L, want);
        want[208] = 0x00, want[209] = 0xa0;
        check_quant_super(WT_QUANT_Q6_K, x, want, "Q6_K exact sub-blocks");
    }
    /* All zeros: every |scale| below 1e-15: every byte 0. */
    {
        float x[256] = {0};
        uint8_t want[Q6K_BYTES] = {0};
        check_quant_super(WT_QUANT_Q6_K, x, want, "Q6_K zeros");
    }
}

/* Random x to Q4_K / Q6_K: every element within 1.5 steps of its
 * sub-block's stored scale (a step d*sc; plus dmin for Q4_K's rounded
 * min: the search may stretch the scale so that the top code clamps), the
 * relative RMS error within 7 % (Q4_K) / 2 % (Q6_K) on uniform values
 * (5.5 % and 1.3 % measured), from f16 x too; quantising twice gives the
 * same bytes. */
static void test_quant_roundtrip_kquants(void)
{
    const int64_t n = 4, k = 512;
    float *x = malloc(sizeof *x * (size_t)(n * k));
    if (!x) return;
    for (int i = 0; i < n * k; i++) x[i] = test_rng_uniform(-3.0f, 3.0f) * (float)(1 + i / 32 % 4);
    const int64_t shape[2] = {n, k};
    for (int ti = 0; ti < 2; ti++) {
        const wt_quant_type t = ti ? WT_QUANT_Q6_K : WT_QUANT_Q4_K;
        for (int half = 0; half < 2; half++) {
            wt_tensor *xt = NULL, *xin = NULL, *q = NULL, *q2 = NULL, *y = NULL;
            uint8_t *b1 = malloc((size_t)(n * k / 256 * Q6K_BYTES)), *b2 = malloc((size_t)(n * k / 256 * Q6K_BYTES));
            wt_status st = b1 && b2 ? wt_tensor_from_data(g_ctx, WT_F32, 2, shape, x, &xt) : WT_ERR_OUT_OF_MEMORY;
            if (st == WT_OK && half) st = wt_cast(xt, WT_F16, &xin);
            if (st == WT_OK) st = wt_quantize(half ? xin : xt, t, &q);
            if (st == WT_OK) st = wt_quantize(half ? xin : xt, t, &q2);
            if (st == WT_OK) st = wt_dequantize(q, t, WT_F32, &y);
            CHECK(st == WT_OK, "%s round trip (%s x): %s", tname(t), half ? "f16" : "f32", wt_last_error());
            float *v = st == WT_OK ? read_f32(y) : NULL;
            if (v && read_blocks(q, t, n, k, b1) && read_blocks(q2, t, n, k, b2)) {
                CHECK(memcmp(b1, b2, (size_t)(n * k / 256 * block_bytes(t))) == 0, "%s (%s x): deterministic",
                      tname(t), half ? "f16" : "f32");
                int bad = 0;
                double err2 = 0, sum2 = 0;
                for (int64_t i = 0; i < n * k; i++) {
                    const uint8_t *blk = b1 + (i / 256) * block_bytes(t);
                    const int e = (int)(i % 256);
                    double step, slack = 0;
                    if (t == WT_QUANT_Q4_K) {
                        int sc, m;
                        q4k_sm(blk + 4, e / 32, &sc, &m);
                        step = half_field(blk) * sc;
                        slack = half_field(blk + 2);
                    } else {
                        step = fabs(half_field(blk + 208) * (int8_t)blk[192 + e / 16]);
                    }
                    const double xi = half ? test_half_to_double(test_double_to_half(x[i])) : x[i];
                    const double err = fabs((double)v[i] - xi);
                    if (err > 1.5 * step + slack) bad++;
                    err2 += err * err, sum2 += xi * xi;
                }
                const double rel = sqrt(err2 / sum2);
                CHECK(bad == 0, "%s (%s x): %d elements beyond 1.5 steps", tname(t), half ? "f16" : "f32", bad);
                CHECK(rel <= (t == WT_QUANT_Q4_K ? 0.07 : 0.02), "%s (%s x): relative RMS error %.4f", tname(t),
                      half ? "f16" : "f32", rel);
            }
            free(v);
            free(b1);
            free(b2);
            wt_tensor_release(xt);
            wt_tensor_release(xin);
            wt_tensor_release(q);
            wt_tensor_release(q2);
            wt_tensor_release(y);
        }
    }
    free(x);
}

/* 64 super-blocks of varied x (uniform, cubed, one-signed, sparse, a
 * constant sub-block, sub-blocks 1024 times smaller, outliers, multiples
 * of 1/4; scales 2^-8 .. 2^7), made with exact float operations only, so
 * they are the same on every machine. */
static uint64_t golden_state;
static uint64_t golden_next(void)
{
    golden_state ^= golden_state << 13, golden_state ^= golden_state >> 7, golden_state ^= golden_state << 17;
    return golden_state;
}
static float golden_unit(void) { return (float)((int32_t)(golden_next() >> 40) - (1 << 23)) * (1.0f / 8388608.0f); }
static void golden_row(int r, float *x)
{
    const float scale = (float)(1u << (r % 16)) / 256.0f;
    for (int i = 0; i < 256; i++) {
        float v = golden_unit();
        switch (r % 8) {
        case 1: v = v * v * v; break;
        case 2: v = v < 0 ? -v : v; break;
        case 3: v = (golden_next() & 3) ? 0.0f : v; break;
        case 4: v = i / 32 == 2 ? 0.75f : v; break;
        case 5: v = i / 16 % 2 ? v / 1024.0f : v; break;
        case 6: v = i % 37 == 0 ? v * 64.0f : v; break;
        case 7: v = (float)(int)(v * 20.0f) / 4.0f; break;
        }
        x[i] = v * scale;
    }
}

/* The K-quant bytes of those blocks against ggml's: the FNV-1a 64 hashes
 * below are of the bytes ggml's quantize_row_q4_K_ref and
 * quantize_row_q6_K_ref (ggml-quants.c, compiled with GCC without
 * contracted multiply-adds) give for them, so a change of one byte
 * anywhere fails. (The hand-made blocks above check the format; these,
 * every rounding of the search.) */
static void test_quant_golden_kquants(void)
{
    enum { ROWS = 64 };
    static const uint64_t want[2] = {0xa4349798e8b180b7ull, 0x81440cd82022d626ull}; /* Q4_K, Q6_K */
    float *x = malloc(sizeof *x * ROWS * 256);
    uint8_t *b = malloc((size_t)ROWS * Q6K_BYTES);
    if (!x || !b) {
        free(x), free(b);
        CHECK(false, "golden K-quants: out of memory");
        return;
    }
    golden_state = 0x2545f4914f6cdd1dull;
    for (int r = 0; r < ROWS; r++) golden_row(r, x + r * 256);
    const int64_t shape[2] = {ROWS, 256};
    wt_tensor *xt = NULL;
    wt_status st = wt_tensor_from_data(g_ctx, WT_F32, 2, shape, x, &xt);
    for (int ti = 0; ti < 2 && st == WT_OK; ti++) {
        const wt_quant_type t = ti ? WT_QUANT_Q6_K : WT_QUANT_Q4_K;
        wt_tensor *q = NULL;
        st = wt_quantize(xt, t, &q);
        CHECK(st == WT_OK, "golden %s: %s", tname(t), wt_last_error());
        if (st == WT_OK && read_blocks(q, t, ROWS, 256, b)) {
            uint64_t h = 14695981039346656037ull;
            for (int i = 0; i < ROWS * block_bytes(t); i++) h = (h ^ b[i]) * 1099511628211ull;
            CHECK(h == want[ti], "golden %s: bytes hash to %016llx, ggml's to %016llx", tname(t),
                  (unsigned long long)h, (unsigned long long)want[ti]);
        }
        wt_tensor_release(q);
    }
    wt_tensor_release(xt);
    free(x);
    free(b);
}

/* Random x: dequantise(quantise(x)) is within the format's step of x, and
 * quantising the dequantised values gives the same bytes again (its
 * largest magnitude is 127 d or -8 d exactly, so d comes back). From f16
 * x too. */
static void test_quant_roundtrip(void)
{
    const int64_t n = 5, k = 128;
    float x[5 * 128];
    for (int i = 0; i < n * k; i++) x[i] = test_rng_uniform(-3.0f, 3.0f) * (float)(1 + i / 32 % 4);
    const int64_t shape[2] = {n, k};
    for (int ti = 0; ti < 2; ti++) {
        const wt_quant_type t = ti ? WT_QUANT_Q4_0 : WT_QUANT_Q8_0;
        for (int half = 0; half < 2; half++) {
            wt_tensor *xt = NULL, *xin = NULL, *q = NULL, *y = NULL, *q2 = NULL;
            uint8_t b1[5 * 4 * Q8_BYTES], b2[5 * 4 * Q8_BYTES];
            wt_status st = wt_tensor_from_data(g_ctx, WT_F32, 2, shape, x, &xt);
            if (st == WT_OK && half) st = wt_cast(xt, WT_F16, &xin);
            if (st == WT_OK) st = wt_quantize(half ? xin : xt, t, &q);
            if (st == WT_OK) st = wt_dequantize(q, t, WT_F32, &y);
            if (st == WT_OK) st = wt_quantize(y, t, &q2);
            CHECK(st == WT_OK, "%s round trip (%s x): %s", tname(t), half ? "f16" : "f32", wt_last_error());
            float *v = st == WT_OK ? read_f32(y) : NULL;
            if (v && read_blocks(q, t, n, k, b1) && read_blocks(q2, t, n, k, b2)) {
                CHECK(memcmp(b1, b2, (size_t)(n * k / 32 * block_bytes(t))) == 0,
                      "%s (%s x): quantise(dequantise(q)) == q", tname(t), half ? "f16" : "f32");
                int bad = 0;
                for (int64_t i = 0; i < n * k; i++) {
                    const uint8_t *blk = b1 + (i / 32) * block_bytes(t);
                    const double d = fabs(test_half_to_double((uint16_t)(blk[0] | blk[1] << 8)));
                    /* Q8_0: half a step, plus the f16 rounding of d over
                     * 127 steps; Q4_0: a whole step at the clamped end. */
                    const double xi = half ? test_half_to_double(test_double_to_half(x[i])) : x[i];
                    const double tol = (t == WT_QUANT_Q8_0 ? 0.5 + 127.0 / 2048.0 : 1.0 + 8.0 / 2048.0) * d * 1.0001;
                    if (fabs((double)v[i] - xi) > tol) bad++;
                }
                CHECK(bad == 0, "%s (%s x): dequantised within a step of x (%d outside)", tname(t),
                      half ? "f16" : "f32", bad);
            }
            free(v);
            wt_tensor_release(xt);
            wt_tensor_release(xin);
            wt_tensor_release(q);
            wt_tensor_release(y);
            wt_tensor_release(q2);
        }
    }
}

/* ---------------------------------------------------------------- linear */

/* y = x @ W^T + bias for random blocks, against float64 of the
 * definition and against dequantise + wt_linear. */
enum { X_PLAIN, X_TRANSPOSED, X_OFFSET, X_GRID };

static bool g_cpu;

/* Whether WT_QUANT_GEMV_X8 asks WebGPU's GEMV to round x to 8 bits. */
static bool x8_knob_on(void)
{
    const char *v = getenv("WT_QUANT_GEMV_X8");
    return v && (strcmp(v, "1") == 0 || strcmp(v, "2") == 0);
}

/* Whether wt_linear_quant rounds x to 8-bit blocks here (the header's
 * contract: the CPU backend, Q8_0 / Q4_0, one to four rows of x, unless
 * WT_CPU_QUANT_DOT=f32). */
static bool x_rounded(wt_quant_type t, int64_t m)
{
    const char *v = getenv("WT_CPU_QUANT_DOT");
    return g_cpu && (t == WT_QUANT_Q8_0 || t == WT_QUANT_Q4_0) && m <= 4 && !(v && strcmp(v, "f32") == 0);
}

/* How far rounding x to 8-bit blocks may move x_i . w_r: each x_j moves by
 * at most half its block's step max|x| / 127 (round to nearest), so the
 * dot by at most the sum over blocks of (sum of |w_j|) * max|x| / 254; the
 * integer products and their sums are exact, and the f32 work after them
 * is the f32 path's own rounding (the caller's 1e-5 of the magnitude).
 * The 1.001 covers x * (127 / max|x|) being an f32 product, a few ulps
 * from the exact quotient. */
static double x_rounding_bound(const float *xi, const uint8_t *blocks, wt_quant_type t, int64_t k, int64_t r)
{
    double bound = 0.0;
    for (int64_t b = 0; b < k / 32; b++) {
        double amax = 0.0, wsum = 0.0;
        for (int64_t j = 32 * b; j < 32 * b + 32; j++) {
            amax = fmax(amax, fabs((double)xi[j]));
            wsum += fabs(ref_at(t, blocks, k, r, j, NULL));
        }
        bound += wsum * amax / 254.0;
    }
    return bound * 1.001;
}

/* x_form: X_TRANSPOSED hands x over as a transposed view (copied to
 * contiguous rows inside), X_OFFSET as contiguous rows starting at element
 * 1 of its storage (not at a whole vec4); X_GRID as X_PLAIN with values
 * i / 64 (|i| <= 127) and +-127/64 in every block of 32: rounding x to
 * 8 bits per block (WT_QUANT_GEMV_X8) leaves them exact, so that path
 * must meet the f32 kernels' tolerance. */
static void check_linear(wt_quant_type t, int64_t m, int64_t n, int64_t k, bool with_bias, int x_form, bool f16_x)
{
    const bool transposed_x = x_form == X_TRANSPOSED;
    char what[128];
    snprintf(what, sizeof what, "%s linear M=%lld N=%lld K=%lld%s%s%s", tname(t), (long long)m, (long long)n,
             (long long)k, with_bias ? " +bias" : "", transposed_x ? " (x a transposed view)" : "",
             x_form == X_OFFSET ? " (x at offset 1)" : x_form == X_GRID ? " (x on an 8-bit grid)" : f16_x ? " (f16 x)" : "");
    const size_t bytes = (size_t)(n * k / block_elems(t) * block_bytes(t));
    uint8_t *blocks = malloc(bytes);
    float *x = malloc(sizeof(float) * (size_t)(m * k)), *b = malloc(sizeof(float) * (size_t)n);
    if (!blocks || !x || !b) {
        CHECK(false, "%s: host memory", what);
        free(blocks), free(x), free(b);
        return;
    }
    random_blocks(t, n, k, blocks);
    for (int64_t i = 0; i < m * k; i++) x[i] = test_rng_uniform(-1.0f, 1.0f);
    if (x_form == X_GRID)
        for (int64_t i = 0; i < m * k; i++)
            x[i] = i % 32 == 7 ? (x[i] < 0 ? -127.0f : 127.0f) / 64.0f : (float)lrintf(x[i] * 127.0f) / 64.0f;
    for (int64_t i = 0; i < n; i++) b[i] = test_rng_uniform(-1.0f, 1.0f);
    if (f16_x)
        for (int64_t i = 0; i < m * k; i++) x[i] = (float)test_half_to_double(test_double_to_half(x[i]));
    wt_tensor *w = NULL, *xt = NULL, *xv = NULL, *bt = NULL, *y = NULL, *y32 = NULL, *wd = NULL, *yref = NULL;
    const int64_t xs[2] = {m, k}, xts[2] = {k, m};
    wt_status st = wt_quant_from_blocks(g_ctx, t, n, k, blocks, bytes, &w);
    if (st == WT_OK && transposed_x) {
        /* x stored as x^T [K, M], handed over as a transposed view */
        float *xtr = malloc(sizeof(float) * (size_t)(m * k));
        for (int64_t i = 0; xtr && i < m; i++)
            for (int64_t j = 0; j < k; j++) xtr[j * m + i] = x[i * k + j];
        st = xtr ? wt_tensor_from_data(g_ctx, WT_F32, 2, xts, xtr, &xt) : WT_ERR_OUT_OF_MEMORY;
        free(xtr);
        if (st == WT_OK) st = wt_transpose(xt, 0, 1, &xv);
    } else if (st == WT_OK && x_form == X_OFFSET) {
        /* x behind one leading element: a slice of a flat tensor, reshaped */
        float *xo = malloc(sizeof(float) * (size_t)(m * k + 1));
        const int64_t flat = m * k + 1;
        wt_tensor *sl = NULL;
        if (xo) {
            xo[0] = 1e30f;
            memcpy(xo + 1, x, sizeof(float) * (size_t)(m * k));
        }
        st = xo ? wt_tensor_from_data(g_ctx, WT_F32, 1, &flat, xo, &xt) : WT_ERR_OUT_OF_MEMORY;
        free(xo);
        if (st == WT_OK) st = wt_slice(xt, 0, 1, flat, 1, &sl);
        if (st == WT_OK) st = wt_reshape(sl, 2, xs, &xv);
        wt_tensor_release(sl);
    } else if (st == WT_OK) {
        st = wt_tensor_from_data(g_ctx, WT_F32, 2, xs, x, &xt);
        if (st == WT_OK) st = f16_x ? wt_cast(xt, WT_F16, &xv) : wt_contiguous(xt, &xv);
    }
    const int64_t nb = n;
    if (st == WT_OK && with_bias) st = wt_tensor_from_data(g_ctx, WT_F32, 1, &nb, b, &bt);
    if (st == WT_OK) st = wt_linear_quant(xv, w, t, bt, &y);
    CHECK(st == WT_OK, "%s: %s", what, wt_last_error());
    if (st != WT_OK) goto done;
    /* f16 only when every given input is (the library's f16 rule) */
    CHECK(wt_tensor_dtype(y) == (f16_x && !with_bias ? WT_F16 : WT_F32) && wt_tensor_shape(y)[0] == m && wt_tensor_shape(y)[1] == n,
          "%s: result dtype and shape", what);
    if (wt_cast(y, WT_F32, &y32) != WT_OK) goto done;
    /* dequantise + the library's linear (a dense path) */
    if ((st = wt_dequantize(w, t, WT_F32, &wd)) == WT_OK) {
        wt_tensor *x32 = NULL;
        st = wt_cast(xv, WT_F32, &x32);
        if (st == WT_OK) st = wt_linear(x32, wd, bt, &yref);
        wt_tensor_release(x32);
    }
    float *got = read_f32(y32), *dense = st == WT_OK ? read_f32(yref) : NULL;
    int bad = 0, bad_dense = 0;
    double worst = 0.0;
    /* WT_QUANT_GEMV_X8=1 or 2: the GEMV (M <= 4) rounds x to 8 bits per block
     * of 32, each value by at most d_x / 2 (d_x = the block's max |x| /
     * 127), and that error meets each element's quant term: |w| (Q8_0,
     * Q6_K), nibble * |d| (Q4_0: at most |w| + 8 |d|), d * scale * q (Q4_K:
     * at most the sum of its terms' magnitudes). */
    const bool x8 = x8_knob_on() && m <= 4 && x_form != X_GRID;
    for (int64_t i = 0; got && dense && i < m; i++)
        for (int64_t r = 0; r < n; r++) {
            double want = with_bias ? (double)b[r] : 0.0, mag = fabs(want), x8_err = 0.0, d_x = 0.0;
            for (int64_t j = 0; j < k; j++) {
                double wm = 0.0;
                const double wv = ref_at(t, blocks, k, r, j, &wm);
                want += (double)x[i * k + j] * wv;
                mag += fabs((double)x[i * k + j]) * wm;
                if (x8 && j % 32 == 0) {
                    double amax = 0.0;
                    for (int64_t e = j; e < j + 32; e++) amax = fmax(amax, fabs((double)x[i * k + e]));
                    d_x = amax / 127.0;
                }
                if (x8) {
                    double term = wm;
                    if (t == WT_QUANT_Q4_0)
                        term += 8.0 * fabs(half_field(blocks + (r * (k / 32) + j / 32) * Q4_BYTES));
                    x8_err += term * d_x / 2.0;
                }
            }
            /* f32 sums of k terms: well inside k * 2^-24 of the magnitude;
             * an f16 result adds its own rounding. */
            const bool f16_y = f16_x && !with_bias;
            const double tol = mag * (f16_y ? 2e-3 : 1e-5) + x8_err * 1.001 + 1e-30 +
                               (x_rounded(t, m) ? x_rounding_bound(x + i * k, blocks, t, k, r) : 0.0);
            const double g = got[i * n + r], e = fabs(g - want);
            if (e / tol > worst) worst = e / tol;
            if (e > tol && bad++ < 3)
                printf("  %s [%lld,%lld] = %.9g, want %.9g\n", what, (long long)i, (long long)r, g, want);
            const double dd = f16_y ? test_half_to_double(test_double_to_half(dense[i * n + r])) : dense[i * n + r];
            if (fabs(g - dd) > tol) bad_dense++;
        }
    CHECK(got && dense && bad == 0, "%s: against float64 (%d outside; worst %.2f of the tolerance)", what, bad, worst);
    CHECK(got && dense && bad_dense == 0, "%s: against dequantise + wt_linear (%d outside)", what, bad_dense);
    free(got);
    free(dense);
done:
    wt_tensor_release(w);
    wt_tensor_release(xt);
    wt_tensor_release(xv);
    wt_tensor_release(bt);
    wt_tensor_release(y);
    wt_tensor_release(y32);
    wt_tensor_release(wd);
    wt_tensor_release(yref);
    free(blocks);
    free(x);
    free(b);
}

static void test_linear(void)
{
    for (int ti = 0; ti < 2; ti++) {
        const wt_quant_type t = ti ? WT_QUANT_Q4_0 : WT_QUANT_Q8_0;
        /* M = 1 (decode, GEMV), 3 (GEMV per row), 20 and 33 (tiled, with
         * edge tiles); N not a multiple of 16; K with and without row
         * padding (K = 96: Q8_0 rows of 102 bytes, Q4_0 of 54). */
        check_linear(t, 1, 37, 96, true, false, false);
        check_linear(t, 1, 300, 256, false, false, false);
        check_linear(t, 3, 37, 64, false, false, false);
        check_linear(t, 20, 19, 96, true, false, false);
        check_linear(t, 33, 40, 160, true, false, false);
        check_linear(t, 5, 17, 64, true, true, false);
        check_linear(t, 2, 9, 64, true, false, true);
        check_linear(t, 24, 9, 32, false, false, true);
        check_linear(t, 1, 11, 96, true, X_OFFSET, false);
        check_linear(t, 3, 5, 64, false, X_OFFSET, false);
        /* four rows, N odd, K of an odd number of blocks (the last unit
         * of two blocks half full), f32 and f16 x */
        check_linear(t, 4, 45, 1056, true, X_PLAIN, false);
        check_linear(t, 4, 23, 224, false, X_PLAIN, true);
        check_linear(t, 2, 29, 160, true, X_GRID, false);
        /* the CPU's integer dot takes sixteen blocks at a time: K = 672
         * is one such group and five blocks more, 1024 two groups */
        check_linear(t, 1, 40, 672, true, X_PLAIN, false);
        check_linear(t, 4, 21, 1024, false, X_PLAIN, false);
    }
    /* The super-block formats: M = 1 and 4 (the row GEMV), 2 at an offset
     * (the GEMM takes it), 17 (tiled); K = 256 (one super-block), 768. */
    for (int ti = 2; ti < 4; ti++) {
        const wt_quant_type t = all_types[ti];
        check_linear(t, 1, 37, 256, true, X_PLAIN, false);
        check_linear(t, 1, 50, 768, false, X_PLAIN, false);
        check_linear(t, 4, 9, 512, false, X_PLAIN, false);
        check_linear(t, 2, 9, 256, true, X_OFFSET, false);
        check_linear(t, 17, 21, 512, true, X_PLAIN, false);
        check_linear(t, 3, 7, 256, false, X_TRANSPOSED, false);
        check_linear(t, 1, 6, 256, false, X_PLAIN, true);
        check_linear(t, 4, 33, 1280, true, X_PLAIN, false);
        check_linear(t, 3, 13, 512, false, X_PLAIN, true);
        check_linear(t, 2, 29, 512, true, X_GRID, false);
    }
    /* Every scale (and Q4_K's every min) subnormal: the GEMV kernels
     * convert the f16 fields themselves, subnormals included. */
    g_subnormal_scales = true;
    for (int ti = 0; ti < 4; ti++) {
        const wt_quant_type t = all_types[ti];
        check_linear(t, 1, 37, 512, true, X_PLAIN, false);
        check_linear(t, 4, 9, 256, false, X_PLAIN, false);
    }
    g_subnormal_scales = false;
    /* x [..., K] with leading axes: [2, 3, K] -> [2, 3, N]. */
    uint8_t blocks[4 * Q8_BYTES];
    random_blocks(WT_QUANT_Q8_0, 4, 32, blocks);
    wt_tensor *w = NULL, *x = NULL, *y = NULL;
    const int64_t s3[3] = {2, 3, 32};
    wt_status st = wt_quant_from_blocks(g_ctx, WT_QUANT_Q8_0, 4, 32, blocks, sizeof blocks, &w);
    if (st == WT_OK) st = wt_tensor_full(g_ctx, WT_F32, 3, s3, 0.5, &x);
    if (st == WT_OK) st = wt_linear_quant(x, w, WT_QUANT_Q8_0, NULL, &y);
    CHECK(st == WT_OK && wt_tensor_ndim(y) == 3 && wt_tensor_shape(y)[0] == 2 && wt_tensor_shape(y)[1] == 3 &&
              wt_tensor_shape(y)[2] == 4,
          "linear_quant of x [2, 3, 32]: y [2, 3, 4] (%s)", wt_last_error());
    if (st == WT_OK) {
        float *v = read_f32(y);
        int bad = 0;
        for (int i = 0; v && i < 24; i++) {
            double want = 0.0;
            for (int j = 0; j < 32; j++) want += 0.5 * ref_elem(WT_QUANT_Q8_0, blocks + (i % 4) * Q8_BYTES, j);
            if (fabs(v[i] - want) > 1e-4 * (1.0 + fabs(want))) bad++;
        }
        CHECK(v && bad == 0, "linear_quant of x [2, 3, 32]: values (%d wrong)", bad);
        free(v);
    }
    wt_tensor_release(w);
    wt_tensor_release(x);
    wt_tensor_release(y);
}

/* y of x [m, k] (f32) and random blocks through wt_linear_quant; NULL on
 * an error (reported). */
static float *linear_of(wt_quant_type t, int64_t m, int64_t n, int64_t k, const float *x, const uint8_t *blocks)
{
    const size_t bytes = (size_t)(n * k / 32 * block_bytes(t));
    const int64_t xs[2] = {m, k};
    wt_tensor *w = NULL, *xt = NULL, *y = NULL;
    wt_status st = wt_quant_from_blocks(g_ctx, t, n, k, blocks, bytes, &w);
    if (st == WT_OK) st = wt_tensor_from_data(g_ctx, WT_F32, 2, xs, x, &xt);
    if (st == WT_OK) st = wt_linear_quant(xt, w, t, NULL, &y);
    CHECK(st == WT_OK, "%s linear M=%lld K=%lld: %s", tname(t), (long long)m, (long long)k, wt_last_error());
    float *v = st == WT_OK ? read_f32(y) : NULL;
    wt_tensor_release(w);
    wt_tensor_release(xt);
    wt_tensor_release(y);
    return v;
}

/* The CPU's integer dot for Q8_0 / Q4_0 (x rounded to 8-bit blocks):
 * - x whose blocks are already 8-bit blocks (a power-of-two step, one
 *   element at +-127 steps): the rounding moves nothing, so y is the
 *   float64 definition within the f32 path's 1e-5 of the magnitude, far
 *   inside the rounding bound that check_linear allows; a wrong step,
 *   offset or sign in any kernel shows here;
 * - WT_CPU_QUANT_DOT=f32: the exact path, check_linear's f32 tolerance;
 * - an inf or a NaN in x: the f32 path's result bit for bit (8-bit blocks
 *   cannot carry them). */
static void test_linear_x8(void)
{
    enum { N = 23, K = 672 }; /* 21 blocks: a group of sixteen and five */
    uint8_t blocks[N * (K / 32) * Q8_BYTES];
    float x[3 * K];
    for (int ti = 0; ti < 2; ti++) {
        const wt_quant_type t = ti ? WT_QUANT_Q4_0 : WT_QUANT_Q8_0;
        random_blocks(t, N, K, blocks);
        for (int b = 0; b < 3 * K / 32; b++) {
            const float step = ldexpf(1.0f, -(int)(test_rng_next() % 8));
            for (int j = 0; j < 32; j++) x[32 * b + j] = step * (float)((int)(test_rng_next() % 255) - 127);
            x[32 * b + (int)(test_rng_next() % 32)] = (b & 1 ? -127.0f : 127.0f) * step;
        }
        for (int64_t m = 1; m <= 3; m += 2) {
            float *y = linear_of(t, m, N, K, x, blocks);
            int bad = 0;
            for (int64_t i = 0; y && i < m; i++)
                for (int64_t r = 0; r < N; r++) {
                    double want = 0.0, mag = 0.0;
                    for (int64_t j = 0; j < K; j++) {
                        const double wv = ref_at(t, blocks, K, r, j, NULL);
                        want += (double)x[i * K + j] * wv;
                        mag += fabs((double)x[i * K + j] * wv);
                    }
                    if (fabs(y[i * N + r] - want) > 1e-5 * mag + 1e-30) bad++;
                }
            CHECK(y && bad == 0, "%s linear M=%lld, x already in 8-bit blocks: the definition within f32 rounding (%d outside)",
                  tname(t), (long long)m, bad);
            free(y);
        }
    }
    /* the exact path, where the knob asks for it (a call knob) */
    const char *was = getenv("WT_CPU_QUANT_DOT");
    char saved[32] = "";
    if (was) snprintf(saved, sizeof saved, "%s", was);
    setenv("WT_CPU_QUANT_DOT", "f32", 1);
    for (int ti = 0; ti < 2; ti++) {
        const wt_quant_type t = ti ? WT_QUANT_Q4_0 : WT_QUANT_Q8_0;
        check_linear(t, 1, 37, 96, true, false, false);
        check_linear(t, 3, 37, 64, false, false, false);
        check_linear(t, 2, 9, 64, true, false, true);
    }
    /* an inf and a NaN: the same bits with the knob as without */
    random_blocks(WT_QUANT_Q8_0, N, K, blocks);
    for (int j = 0; j < 3 * K; j++) x[j] = test_rng_uniform(-1.0f, 1.0f);
    x[37] = INFINITY;
    x[2 * K + 300] = NAN;
    float *exact = linear_of(WT_QUANT_Q8_0, 3, N, K, x, blocks);
    if (was)
        setenv("WT_CPU_QUANT_DOT", saved, 1);
    else
        unsetenv("WT_CPU_QUANT_DOT");
    float *got = linear_of(WT_QUANT_Q8_0, 3, N, K, x, blocks);
    int nonfinite = 0;
    for (int j = 0; got && j < 3 * N; j++) nonfinite += !isfinite(got[j]);
    /* WebGPU's opt-in 8-bit x (WT_QUANT_GEMV_X8) promises no fallback for
     * non-finite x: only that the rows holding them are not finite. */
    const bool gpu_x8 = !g_cpu && x8_knob_on();
    if (gpu_x8) {
        CHECK(got && nonfinite >= 2 * N, "Q8_0 linear with an inf and a NaN in x, 8-bit x: %d of %d results not finite",
              nonfinite, 3 * N);
    } else
    CHECK(got && exact && memcmp(got, exact, sizeof(float) * 3 * N) == 0 && nonfinite >= 2 * N,
          "Q8_0 linear with an inf and a NaN in x: the f32 path's bits (%d of %d results not finite)", nonfinite,
          3 * N);
    free(exact);
    free(got);
}

/* ------------------------------------------------------------- embedding */

/* Rows of a quantised table by index [2, 3] (repeats, the first and last
 * row): each row equal to float64 of the definition rounded to f32 (and
 * to f16); an empty index gives an empty result. */
static void test_embedding(void)
{
    const int32_t idx[6] = {4, 0, 4, 2, 5, 1};
    const int64_t ishape[2] = {2, 3}, eshape[1] = {0};
    for (int ti = 0; ti < 4; ti++) {
        const wt_quant_type t = all_types[ti];
        const int64_t v = 6, k = block_elems(t) * 2;
        const size_t bytes = (size_t)(v * k / block_elems(t) * block_bytes(t));
        uint8_t *blocks = malloc(bytes);
        if (!CHECK(blocks != NULL, "host memory")) return;
        random_blocks(t, v, k, blocks);
        wt_tensor *w = NULL, *ix = NULL, *y = NULL, *yh = NULL, *yh32 = NULL, *ie = NULL, *ye = NULL;
        wt_status st = wt_quant_from_blocks(g_ctx, t, v, k, blocks, bytes, &w);
        if (st == WT_OK) st = wt_tensor_from_data(g_ctx, WT_I32, 2, ishape, idx, &ix);
        if (st == WT_OK) st = wt_embedding_quant(w, t, ix, WT_F32, &y);
        CHECK(st == WT_OK && wt_tensor_ndim(y) == 3 && wt_tensor_shape(y)[0] == 2 && wt_tensor_shape(y)[1] == 3 &&
                  wt_tensor_shape(y)[2] == k,
              "%s embedding [2, 3] -> [2, 3, %lld]: %s", tname(t), (long long)k, wt_last_error());
        if (st == WT_OK) {
            float *got = read_f32(y);
            int bad = 0, bad16 = 0;
            for (int i = 0; got && i < 6; i++)
                for (int64_t j = 0; j < k; j++)
                    if ((double)got[i * k + j] != (double)(float)ref_at(t, blocks, k, idx[i], j, NULL)) bad++;
            CHECK(got && bad == 0, "%s embedding rows equal float64 of the definition (%d differ)", tname(t), bad);
            free(got);
            st = wt_embedding_quant(w, t, ix, WT_F16, &yh);
            if (st == WT_OK) st = wt_cast(yh, WT_F32, &yh32);
            float *h = st == WT_OK ? read_f32(yh32) : NULL;
            for (int i = 0; h && i < 6; i++)
                for (int64_t j = 0; j < k; j++) {
                    const double want = (double)(float)ref_at(t, blocks, k, idx[i], j, NULL);
                    if ((double)h[i * k + j] != test_half_to_double(test_double_to_half(want))) bad16++;
                }
            CHECK(h && bad16 == 0 && wt_tensor_dtype(yh) == WT_F16, "%s embedding to f16 (%d differ)", tname(t), bad16);
            free(h);
            st = wt_tensor_zeros(g_ctx, WT_I32, 1, eshape, &ie);
            if (st == WT_OK) st = wt_embedding_quant(w, t, ie, WT_F32, &ye);
            CHECK(st == WT_OK && wt_tensor_ndim(ye) == 2 && wt_tensor_shape(ye)[0] == 0 && wt_tensor_shape(ye)[1] == k,
                  "%s embedding of an empty index: [0, %lld] (%s)", tname(t), (long long)k, wt_last_error());
        }
        wt_tensor_release(w);
        wt_tensor_release(ix);
        wt_tensor_release(y);
        wt_tensor_release(yh);
        wt_tensor_release(yh32);
        wt_tensor_release(ie);
        wt_tensor_release(ye);
        free(blocks);
    }
}

/* ------------------------------------------------------------------ gguf */

/* quantise (Q8_0, Q4_0) or random blocks made into a weight (Q4_K, Q6_K)
 * -> the blocks into a GGUF file (add_raw, dims {K, N}) -> read back
 * (read_raw) -> a quantised tensor again: the same words. */
static void test_gguf_roundtrip(void)
{
    const int64_t n = 6, k = 256;
    float x[6 * 256];
    for (int i = 0; i < n * k; i++) x[i] = test_rng_uniform(-2.0f, 2.0f);
    char path[64];
    snprintf(path, sizeof path, "/tmp/wt_quant_%d.gguf", (int)getpid());
    for (int ti = 0; ti < 4; ti++) {
        const wt_quant_type t = all_types[ti];
        const size_t bytes = (size_t)(n * k / block_elems(t) * block_bytes(t));
        uint8_t blocks[6 * 8 * Q8_BYTES], back[6 * 8 * Q8_BYTES];
        const int64_t shape[2] = {n, k};
        const uint64_t dims[2] = {(uint64_t)k, (uint64_t)n};
        wt_tensor *xt = NULL, *q = NULL, *q2 = NULL;
        wt_gguf_writer *wr = NULL;
        wt_gguf *f = NULL;
        wt_status st = wt_tensor_from_data(g_ctx, WT_F32, 2, shape, x, &xt);
        if (ti < 2) {
            if (st == WT_OK) st = wt_quantize(xt, t, &q);
            if (st == WT_OK) st = read_blocks(q, t, n, k, blocks) ? WT_OK : WT_ERR_BACKEND;
        } else {
            random_blocks(t, n, k, blocks);
            if (st == WT_OK) st = wt_quant_from_blocks(g_ctx, t, n, k, blocks, bytes, &q);
        }
        if (st == WT_OK) st = wt_gguf_writer_create(&wr);
        if (st == WT_OK) st = wt_gguf_writer_add_raw(wr, "w", (uint32_t)t, 2, dims, blocks, bytes);
        if (st == WT_OK) st = wt_gguf_writer_save(wr, path);
        if (st == WT_OK) st = wt_gguf_open(path, &f);
        wt_gguf_tensor_info info;
        memset(&info, 0, sizeof info);
        if (st == WT_OK) st = wt_gguf_tensor_at(f, 0, &info);
        if (st == WT_OK) st = wt_gguf_read_raw(f, "w", back, bytes);
        if (st == WT_OK) st = wt_quant_from_blocks(g_ctx, (wt_quant_type)info.ggml_type, n, k, back, bytes, &q2);
        CHECK(st == WT_OK, "%s GGUF round trip: %s", tname(t), wt_last_error());
        if (st == WT_OK) {
            CHECK(info.ggml_type == (uint32_t)t && memcmp(back, blocks, bytes) == 0,
                  "%s GGUF round trip: the type and bytes come back", tname(t));
            const int64_t words = wt_tensor_shape(q)[1];
            int32_t *a = malloc(sizeof(int32_t) * (size_t)(n * words)), *c = malloc(sizeof(int32_t) * (size_t)(n * words));
            CHECK(a && c && wt_tensor_read(q, a, sizeof(int32_t) * (size_t)(n * words)) == WT_OK &&
                      wt_tensor_read(q2, c, sizeof(int32_t) * (size_t)(n * words)) == WT_OK &&
                      memcmp(a, c, sizeof(int32_t) * (size_t)(n * words)) == 0,
                  "%s GGUF round trip: the same words", tname(t));
            free(a);
            free(c);
        }
        wt_gguf_close(f);
        wt_gguf_writer_destroy(wr);
        wt_tensor_release(xt);
        wt_tensor_release(q);
        wt_tensor_release(q2);
    }
    remove(path);
}

/* ---------------------------------------------------------------- errors */

static void test_errors(void)
{
    uint8_t blocks[2 * Q8_BYTES] = {0};
    wt_tensor *w = (wt_tensor *)(uintptr_t)1;
    /* K not a multiple of 32; bytes not what [N, K] needs; a weight whose
     * W no K gives; x of another K; NaN refused by the quantiser. */
    CHECK(wt_quant_from_blocks(g_ctx, WT_QUANT_Q8_0, 2, 48, blocks, sizeof blocks, &w) == WT_ERR_SHAPE && !w,
          "from_blocks K = 48: WT_ERR_SHAPE, out NULL");
    CHECK(wt_quant_from_blocks(g_ctx, WT_QUANT_Q4_0, 2, 32, blocks, sizeof blocks, &w) == WT_ERR_INVALID_ARGUMENT,
          "from_blocks with Q8_0's byte count for Q4_0: refused");
    /* the super-block formats take K in 256s; 68 bytes are no Q6_K row */
    CHECK(wt_quant_from_blocks(g_ctx, WT_QUANT_Q4_K, 1, 128, blocks, 72, &w) == WT_ERR_SHAPE && !w,
          "from_blocks Q4_K K = 128: WT_ERR_SHAPE");
    CHECK(wt_quant_from_blocks(g_ctx, WT_QUANT_Q6_K, 1, 256, blocks, sizeof blocks, &w) == WT_ERR_INVALID_ARGUMENT &&
              !w,
          "from_blocks Q6_K with 68 bytes: refused");
    const int64_t s10[2] = {2, 10}, s2_64[2] = {2, 64};
    wt_tensor *bad = NULL, *x = NULL, *y = (wt_tensor *)(uintptr_t)1;
    if (wt_tensor_zeros(g_ctx, WT_I32, 2, s10, &bad) == WT_OK) {
        /* 40 bytes: Q8_0 K = 32 takes 9 words, K = 64 takes 17 */
        CHECK(wt_dequantize(bad, WT_QUANT_Q8_0, WT_F32, &y) == WT_ERR_SHAPE && !y, "dequantize of i32 [2, 10] as Q8_0");
        wt_tensor_release(bad);
    }
    if (wt_quant_from_blocks(g_ctx, WT_QUANT_Q8_0, 2, 32, blocks, sizeof blocks, &w) == WT_OK &&
        wt_tensor_zeros(g_ctx, WT_F32, 2, s2_64, &x) == WT_OK) {
        y = (wt_tensor *)(uintptr_t)1;
        CHECK(wt_linear_quant(x, w, WT_QUANT_Q8_0, NULL, &y) == WT_ERR_SHAPE && !y, "linear_quant K 64 vs 32");
    }
    wt_tensor_release(x);
    wt_tensor_release(w);
    float nanrow[32] = {NAN};
    const int64_t s1[2] = {1, 32};
    if (wt_tensor_from_data(g_ctx, WT_F32, 2, s1, nanrow, &x) == WT_OK) {
        y = (wt_tensor *)(uintptr_t)1;
        CHECK(wt_quantize(x, WT_QUANT_Q4_0, &y) == WT_ERR_INVALID_ARGUMENT && !y, "quantize of NaN refused");
        y = (wt_tensor *)(uintptr_t)1;
        CHECK(wt_quantize(x, WT_QUANT_Q4_K, &y) == WT_ERR_SHAPE && !y, "quantize [1, 32] to Q4_K: K not of 256");
        wt_tensor_release(x);
    }
    float infrow256[256] = {0};
    infrow256[200] = INFINITY;
    const int64_t s256[2] = {1, 256};
    if (wt_tensor_from_data(g_ctx, WT_F32, 2, s256, infrow256, &x) == WT_OK) {
        y = (wt_tensor *)(uintptr_t)1;
        CHECK(wt_quantize(x, WT_QUANT_Q6_K, &y) == WT_ERR_INVALID_ARGUMENT && !y, "quantize of inf to Q6_K refused");
        wt_tensor_release(x);
    }
}

int main(int argc, char **argv)
{
    test_run run;
    if (!test_begin(&run, "quant", argc, argv)) return run.status;
    g_ctx = run.ctx;
    g_cpu = run.backend == TEST_BACKEND_CPU;
    test_rng_seed(test_seed());
    test_layout();
    test_dequant_hand();
    test_dequant_hand_q4k();
    test_dequant_hand_q6k();
    test_dequant_random();
    test_quant_hand();
    test_quant_roundtrip();
    test_quant_hand_kquants();
    test_quant_roundtrip_kquants();
    test_quant_golden_kquants();
    test_linear();
    test_linear_x8();
    test_embedding();
    test_gguf_roundtrip();
    test_errors();
    test_check_nothing_alive(g_ctx);
    return test_end(&run);
}
