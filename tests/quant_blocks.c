/* Quantised blocks: the tensor layout, dequantisation of hand-made and
 * random blocks against float64 from the block definition, and
 * quantisation against the reference quantisers' bytes, round trips and
 * golden K-quant rows. */
#include "quant_test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- layout */

void test_layout(void)
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
        CHECK(st == WT_OK, "from_blocks %s K=%lld: %s", quant_type_name(cases[c].t), (long long)k, wt_last_error());
        if (st != WT_OK) continue;
        CHECK(wt_tensor_dtype(w) == WT_I32 && wt_tensor_ndim(w) == 2 && wt_tensor_shape(w)[0] == 2 &&
                  wt_tensor_shape(w)[1] == cases[c].words,
              "%s K=%lld: i32 [2, %lld]", quant_type_name(cases[c].t), (long long)k, (long long)cases[c].words);
        /* Byte b of a row is bits 8*(b%4) of word b/4: word 0 of row 0
         * holds bytes 0..3 little-endian. */
        int32_t w0 = 0;
        uint8_t back[2 * 68];
        CHECK(read_blocks(w, cases[c].t, 2, k, back) && memcmp(back, blocks, bytes) == 0,
              "%s K=%lld: the words hold the bytes in order, padding zero", quant_type_name(cases[c].t), (long long)k);
        uint32_t words[2 * 17];
        if (wt_tensor_read(w, words, sizeof(uint32_t) * (size_t)(2 * cases[c].words)) == WT_OK) w0 = (int32_t)words[0];
        CHECK((uint32_t)w0 == ((uint32_t)blocks[0] | (uint32_t)blocks[1] << 8 | (uint32_t)blocks[2] << 16 |
                               (uint32_t)blocks[3] << 24),
              "%s: word 0 is bytes 0..3 little-endian", quant_type_name(cases[c].t));
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

void test_dequant_hand(void)
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
void test_dequant_hand_q4k(void)
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
void test_dequant_hand_q6k(void)
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

void test_dequant_random(void)
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
            snprintf(what, sizeof what, "%s random [%lld, %lld]", quant_type_name(t), (long long)n, (long long)k);
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

void test_quant_hand(void)
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
void test_quant_hand_kquants(void)
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
void test_quant_roundtrip_kquants(void)
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
            CHECK(st == WT_OK, "%s round trip (%s x): %s", quant_type_name(t), half ? "f16" : "f32", wt_last_error());
            float *v = st == WT_OK ? read_f32(y) : NULL;
            if (v && read_blocks(q, t, n, k, b1) && read_blocks(q2, t, n, k, b2)) {
                CHECK(memcmp(b1, b2, (size_t)(n * k / 256 * block_bytes(t))) == 0, "%s (%s x): deterministic",
                      quant_type_name(t), half ? "f16" : "f32");
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
                CHECK(bad == 0, "%s (%s x): %d elements beyond 1.5 steps", quant_type_name(t), half ? "f16" : "f32", bad);
                CHECK(rel <= (t == WT_QUANT_Q4_K ? 0.07 : 0.02), "%s (%s x): relative RMS error %.4f", quant_type_name(t),
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

/* FNV-1a 64 of n bytes. */
static uint64_t fnv1a(const uint8_t *p, size_t n)
{
    uint64_t h = 14695981039346656037ull;
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

/* The K-quant bytes of those blocks against ggml's: the FNV-1a 64 hashes
 * below are of the bytes ggml's quantize_row_q4_K_ref and
 * quantize_row_q6_K_ref (ggml-quants.c, compiled with GCC without
 * contracted multiply-adds) give for them, so a change of one byte
 * anywhere fails. (The hand-made blocks above check the format; these,
 * every rounding of the search.) */
void test_quant_golden_kquants(void)
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
        CHECK(st == WT_OK, "golden %s: %s", quant_type_name(t), wt_last_error());
        if (st == WT_OK && read_blocks(q, t, ROWS, 256, b)) {
            const uint64_t h = fnv1a(b, (size_t)ROWS * block_bytes(t));
            CHECK(h == want[ti], "golden %s: bytes hash to %016llx, ggml's to %016llx", quant_type_name(t),
                  (unsigned long long)h, (unsigned long long)want[ti]);
        }
        wt_tensor_release(q);
    }
    wt_tensor_release(xt);
    /* The same rows eight times over: 512 blocks, which wt_quantize shares
     * among threads; each copy must still hash to ggml's bytes. */
    enum { COPIES = 8 };
    float *x8 = malloc(sizeof *x8 * COPIES * ROWS * 256);
    uint8_t *b8 = malloc((size_t)COPIES * ROWS * Q6K_BYTES);
    const int64_t shape8[2] = {COPIES * ROWS, 256};
    xt = NULL;
    st = x8 && b8 ? WT_OK : WT_ERR_OUT_OF_MEMORY;
    for (int c = 0; x8 && c < COPIES; c++) memcpy(x8 + c * ROWS * 256, x, sizeof *x * ROWS * 256);
    if (st == WT_OK) st = wt_tensor_from_data(g_ctx, WT_F32, 2, shape8, x8, &xt);
    for (int ti = 0; ti < 2 && st == WT_OK; ti++) {
        const wt_quant_type t = ti ? WT_QUANT_Q6_K : WT_QUANT_Q4_K;
        wt_tensor *q = NULL;
        st = wt_quantize(xt, t, &q);
        int bad = 0;
        if (st == WT_OK && read_blocks(q, t, COPIES * ROWS, 256, b8))
            for (int c = 0; c < COPIES; c++)
                bad += fnv1a(b8 + (size_t)c * ROWS * block_bytes(t), (size_t)ROWS * block_bytes(t)) != want[ti];
        else
            bad = COPIES;
        CHECK(st == WT_OK && bad == 0, "golden %s, 512 blocks at once: %d of %d copies differ from ggml's bytes (%s)",
              quant_type_name(t), bad, COPIES, st == WT_OK ? "ok" : wt_last_error());
        wt_tensor_release(q);
    }
    CHECK(st == WT_OK, "golden K-quants, 512 blocks: %s", wt_last_error());
    wt_tensor_release(xt);
    free(x8);
    free(b8);
    free(x);
    free(b);
}

/* Random x: dequantise(quantise(x)) is within the format's step of x, and
 * quantising the dequantised values gives the same bytes again (its
 * largest magnitude is 127 d or -8 d exactly, so d comes back). From f16
 * x too. */
void test_quant_roundtrip(void)
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
            CHECK(st == WT_OK, "%s round trip (%s x): %s", quant_type_name(t), half ? "f16" : "f32", wt_last_error());
            float *v = st == WT_OK ? read_f32(y) : NULL;
            if (v && read_blocks(q, t, n, k, b1) && read_blocks(q2, t, n, k, b2)) {
                CHECK(memcmp(b1, b2, (size_t)(n * k / 32 * block_bytes(t))) == 0,
                      "%s (%s x): quantise(dequantise(q)) == q", quant_type_name(t), half ? "f16" : "f32");
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
                CHECK(bad == 0, "%s (%s x): dequantised within a step of x (%d outside)", quant_type_name(t),
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
