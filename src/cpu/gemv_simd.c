/* Matrix-vector products on the stored weight (cpu/gemv_simd.h). */
#include "cpu/gemv_simd.h"
#include "cpu/cpu.h"
#include "cpu/half.h"
#include "cpu/half_simd.h"
#include "core/knobs.h"

#include <float.h>
#include <math.h>
#include <stdatomic.h>

#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define GEMV_X86 1
#include <immintrin.h>
#define AVX2_FMA_F16C __attribute__((target("avx2,fma,f16c")))
#else
#define GEMV_X86 0
#endif

static float half_to_float(uint16_t h)
{
    const uint32_t bits = cpu_half_to_f32_bits(h);
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

static uint16_t float_to_half(float f)
{
    uint32_t bits;
    memcpy(&bits, &f, 4);
    return cpu_f32_bits_to_half(bits);
}

/* Q4_K's eight 6-bit scales (out[0..7]) and mins (out[8..15]) from its
 * 12 packed bytes S: sub-blocks 0..3 keep their six bits in bytes 0..3
 * (scales) and 4..7 (mins); sub-blocks 4..7 take their low four bits from
 * bytes 8..11 (the scale in the low nibble, the min in the high one) and
 * their top two from the top bits of bytes 0..3 (scales) and 4..7
 * (mins). Four bytes at a time in a 32-bit word. */
static void q4k_unpack(const uint8_t *S, uint8_t out[16])
{
    uint32_t w0, w1, w2;
    memcpy(&w0, S, 4);
    memcpy(&w1, S + 4, 4);
    memcpy(&w2, S + 8, 4);
    const uint32_t six = 0x3f3f3f3fu, four = 0x0f0f0f0fu, two = 0x03030303u;
    const uint32_t words[4] = {w0 & six, (w2 & four) | ((w0 >> 6) & two) << 4, w1 & six,
                               ((w2 >> 4) & four) | ((w1 >> 6) & two) << 4};
    memcpy(out, words, 16);
}

#if GEMV_X86
#include <cpuid.h>
/* AVX-512 VNNI with the 256-bit forms (VL) and byte ops (BW), from CPUID
 * leaf 7: clang 14's __builtin_cpu_supports has no name for "avx512vnni"
 * that gcc shares. The caller has checked AVX-512F (so the OS saves the
 * wide registers). */
static bool cpu_reports_vnni(void)
{
    unsigned a, b, c, d;
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return false;
    const unsigned bw = 1u << 30, vl = 1u << 31, vnni = 1u << 11;
    return (b & (bw | vl)) == (bw | vl) && (c & vnni) != 0;
}
#endif

/* Which wide paths may run: 0 none, 1 AVX2 + FMA + F16C, 2 those and
 * AVX-512F, 3 those and AVX-512 VNNI (+ VL, BW); at most what
 * WT_CPU_GEMV_SIMD allows (so that every path can be tested on one
 * machine; avx512 allows VNNI). Asked once; two threads may ask at once, so
 * the answer is kept in an atomic. F16C comes from CPUID (cpu_has_f16c):
 * clang 14's __builtin_cpu_supports does not know "f16c". */
static int wide_level(void)
{
#if GEMV_X86
    static atomic_int cached = -1;
    int level = atomic_load_explicit(&cached, memory_order_relaxed);
    if (level < 0) {
        __builtin_cpu_init();
        const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && cpu_has_f16c();
        level = !avx2 ? 0 : __builtin_cpu_supports("avx512f") ? 2 : 1;
        if (level == 2 && cpu_reports_vnni()) level = 3;
        const char *cap = wt_knob_text(WT_KNOB_CPU_GEMV_SIMD);
        if (cap && strcmp(cap, "none") == 0) level = 0;
        if (cap && strcmp(cap, "avx2") == 0 && level > 1) level = 1;
        atomic_store_explicit(&cached, level, memory_order_relaxed);
    }
    return level;
#else
    return 0;
#endif
}
static bool wide_ok(void) { return wide_level() >= 1; }

#if GEMV_X86
AVX2_FMA_F16C static float hsum256(__m256 v)
{
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

AVX2_FMA_F16C static float dot_f16_wide(const uint16_t *a, const float *x, int64_t k)
{
    __m256 acc0 = _mm256_setzero_ps(), acc1 = acc0, acc2 = acc0, acc3 = acc0;
    int64_t j = 0;
    for (; j + 32 <= k; j += 32) {
        acc0 = _mm256_fmadd_ps(_mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(a + j))), _mm256_loadu_ps(x + j), acc0);
        acc1 = _mm256_fmadd_ps(_mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(a + j + 8))),
                               _mm256_loadu_ps(x + j + 8), acc1);
        acc2 = _mm256_fmadd_ps(_mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(a + j + 16))),
                               _mm256_loadu_ps(x + j + 16), acc2);
        acc3 = _mm256_fmadd_ps(_mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(a + j + 24))),
                               _mm256_loadu_ps(x + j + 24), acc3);
    }
    for (; j + 8 <= k; j += 8)
        acc0 = _mm256_fmadd_ps(_mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(a + j))), _mm256_loadu_ps(x + j), acc0);
    float s = hsum256(_mm256_add_ps(_mm256_add_ps(acc0, acc1), _mm256_add_ps(acc2, acc3)));
    for (; j < k; j++) s += _cvtsh_ss(a[j]) * x[j];
    return s;
}

/* Eight int8 at p as floats. */
AVX2_FMA_F16C static __m256 i8x8(const void *p)
{
    return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)p)));
}

AVX2_FMA_F16C static float dot_q8_0_wide(const uint8_t *row, const float *x, int64_t nblocks)
{
    __m256 acc0 = _mm256_setzero_ps(), acc1 = acc0;
    int64_t b = 0;
    for (; b < nblocks; b++) {
        const uint8_t *blk = row + b * 34;
        const float *xb = x + b * 32;
        __m256 s = _mm256_mul_ps(i8x8(blk + 2), _mm256_loadu_ps(xb));
        __m256 t = _mm256_mul_ps(i8x8(blk + 10), _mm256_loadu_ps(xb + 8));
        s = _mm256_fmadd_ps(i8x8(blk + 18), _mm256_loadu_ps(xb + 16), s);
        t = _mm256_fmadd_ps(i8x8(blk + 26), _mm256_loadu_ps(xb + 24), t);
        const __m256 d = _mm256_set1_ps(_cvtsh_ss((uint16_t)(blk[0] | blk[1] << 8)));
        if (b & 1)
            acc1 = _mm256_fmadd_ps(d, _mm256_add_ps(s, t), acc1);
        else
            acc0 = _mm256_fmadd_ps(d, _mm256_add_ps(s, t), acc0);
    }
    return hsum256(_mm256_add_ps(acc0, acc1));
}

AVX2_FMA_F16C static float dot_q4_0_wide(const uint8_t *row, const float *x, int64_t nblocks)
{
    const __m128i low4 = _mm_set1_epi8(0x0f), eight = _mm_set1_epi8(8);
    __m256 acc0 = _mm256_setzero_ps(), acc1 = acc0;
    for (int64_t b = 0; b < nblocks; b++) {
        const uint8_t *blk = row + b * 18;
        const float *xb = x + b * 32;
        const __m128i v = _mm_loadu_si128((const __m128i *)(blk + 2));
        /* nibble - 8 as int8: low nibbles are elements 0..15, high 16..31 */
        const __m128i lo = _mm_sub_epi8(_mm_and_si128(v, low4), eight);
        const __m128i hi = _mm_sub_epi8(_mm_and_si128(_mm_srli_epi16(v, 4), low4), eight);
        __m256 s = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(lo)), _mm256_loadu_ps(xb));
        __m256 t = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(lo, 8))),
                                 _mm256_loadu_ps(xb + 8));
        s = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(hi)), _mm256_loadu_ps(xb + 16), s);
        t = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(hi, 8))), _mm256_loadu_ps(xb + 24),
                            t);
        const __m256 d = _mm256_set1_ps(_cvtsh_ss((uint16_t)(blk[0] | blk[1] << 8)));
        if (b & 1)
            acc1 = _mm256_fmadd_ps(d, _mm256_add_ps(s, t), acc1);
        else
            acc0 = _mm256_fmadd_ps(d, _mm256_add_ps(s, t), acc0);
    }
    return hsum256(_mm256_add_ps(acc0, acc1));
}

#define AVX512 __attribute__((target("avx512f,avx2,fma,f16c")))

/* Sixteen int8 at p as floats. */
AVX512 static __m512 i8x16(__m128i v) { return _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(v)); }

/* AVX-512: sixteen quants per conversion, half the instructions of the
 * AVX2 loops (which run out of issue slots before memory runs out of
 * bandwidth on a few cores). */
AVX512 static float dot_q8_0_512(const uint8_t *row, const float *x, int64_t nblocks)
{
    __m512 acc0 = _mm512_setzero_ps(), acc1 = acc0;
    for (int64_t b = 0; b < nblocks; b++) {
        const uint8_t *blk = row + b * 34;
        const float *xb = x + b * 32;
        __m512 s = _mm512_mul_ps(i8x16(_mm_loadu_si128((const __m128i *)(blk + 2))), _mm512_loadu_ps(xb));
        s = _mm512_fmadd_ps(i8x16(_mm_loadu_si128((const __m128i *)(blk + 18))), _mm512_loadu_ps(xb + 16), s);
        const __m512 d = _mm512_set1_ps(_cvtsh_ss((uint16_t)(blk[0] | blk[1] << 8)));
        if (b & 1)
            acc1 = _mm512_fmadd_ps(d, s, acc1);
        else
            acc0 = _mm512_fmadd_ps(d, s, acc0);
    }
    return _mm512_reduce_add_ps(_mm512_add_ps(acc0, acc1));
}

/* Q4_K's 6-bit scale and min of sub-block s from its 12 bytes S. */
static void q4k_sm(const uint8_t *S, int s, int *sc, int *m)
{
    if (s < 4) {
        *sc = S[s] & 63, *m = S[s + 4] & 63;
    } else {
        *sc = (S[s + 4] & 15) | (S[s - 4] >> 6) << 4;
        *m = (S[s + 4] >> 4) | (S[s] >> 6) << 4;
    }
}

/* Sixteen unsigned bytes as floats. */
AVX512 static __m512 u8x16(__m128i v) { return _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(v)); }

/* Q4_K: per 64 elements two sub-blocks, sum d*sc * (q . x) - dmin*m *
 * (sum of x). */
AVX512 static float dot_q4_k_512(const uint8_t *row, const float *x, int64_t nblocks)
{
    const __m128i low4 = _mm_set1_epi8(0x0f);
    __m512 acc = _mm512_setzero_ps(), accm = acc;
    for (int64_t b = 0; b < nblocks; b++) {
        const uint8_t *blk = row + b * 144;
        const float d = _cvtsh_ss((uint16_t)(blk[0] | blk[1] << 8)), dmin = _cvtsh_ss((uint16_t)(blk[2] | blk[3] << 8));
        for (int c = 0; c < 4; c++) {
            int sc0, m0, sc1, m1;
            q4k_sm(blk + 4, 2 * c, &sc0, &m0);
            q4k_sm(blk + 4, 2 * c + 1, &sc1, &m1);
            const uint8_t *q = blk + 16 + 32 * c;
            const float *xc = x + b * 256 + 64 * c;
            const __m128i v0 = _mm_loadu_si128((const __m128i *)q), v1 = _mm_loadu_si128((const __m128i *)(q + 16));
            const __m512 x00 = _mm512_loadu_ps(xc), x01 = _mm512_loadu_ps(xc + 16);
            const __m512 x10 = _mm512_loadu_ps(xc + 32), x11 = _mm512_loadu_ps(xc + 48);
            __m512 s0 = _mm512_mul_ps(u8x16(_mm_and_si128(v0, low4)), x00);
            s0 = _mm512_fmadd_ps(u8x16(_mm_and_si128(v1, low4)), x01, s0);
            __m512 s1 = _mm512_mul_ps(u8x16(_mm_and_si128(_mm_srli_epi16(v0, 4), low4)), x10);
            s1 = _mm512_fmadd_ps(u8x16(_mm_and_si128(_mm_srli_epi16(v1, 4), low4)), x11, s1);
            acc = _mm512_fmadd_ps(_mm512_set1_ps(d * (float)sc0), s0, acc);
            acc = _mm512_fmadd_ps(_mm512_set1_ps(d * (float)sc1), s1, acc);
            accm = _mm512_fmadd_ps(_mm512_set1_ps(dmin * (float)m0), _mm512_add_ps(x00, x01), accm);
            accm = _mm512_fmadd_ps(_mm512_set1_ps(dmin * (float)m1), _mm512_add_ps(x10, x11), accm);
        }
    }
    return _mm512_reduce_add_ps(_mm512_sub_ps(acc, accm));
}

/* Q6_K: per 16 elements of a quarter, the 6-bit q - 32 from its low
 * nibble and high bit pair, times x, times d * sc. */
AVX512 static float dot_q6_k_512(const uint8_t *row, const float *x, int64_t nblocks)
{
    const __m128i low4 = _mm_set1_epi8(0x0f), three = _mm_set1_epi8(3), off = _mm_set1_epi8(32);
    __m512 acc0 = _mm512_setzero_ps(), acc1 = acc0;
    for (int64_t b = 0; b < nblocks; b++) {
        const uint8_t *blk = row + b * 210;
        const int8_t *sc = (const int8_t *)(blk + 192);
        const float d = _cvtsh_ss((uint16_t)(blk[208] | blk[209] << 8));
        for (int h = 0; h < 2; h++)
            for (int half = 0; half < 2; half++) {
                const __m128i H = _mm_loadu_si128((const __m128i *)(blk + 128 + 32 * h + 16 * half));
                const __m128i L0 = _mm_loadu_si128((const __m128i *)(blk + 64 * h + 16 * half));
                const __m128i L1 = _mm_loadu_si128((const __m128i *)(blk + 64 * h + 32 + 16 * half));
                const __m128i lo[4] = {_mm_and_si128(L0, low4), _mm_and_si128(L1, low4),
                                       _mm_and_si128(_mm_srli_epi16(L0, 4), low4),
                                       _mm_and_si128(_mm_srli_epi16(L1, 4), low4)};
                const __m128i hi[4] = {_mm_and_si128(H, three), _mm_and_si128(_mm_srli_epi16(H, 2), three),
                                       _mm_and_si128(_mm_srli_epi16(H, 4), three),
                                       _mm_and_si128(_mm_srli_epi16(H, 6), three)};
                for (int g = 0; g < 4; g++) {
                    const __m128i q = _mm_sub_epi8(_mm_or_si128(lo[g], _mm_slli_epi16(hi[g], 4)), off);
                    const __m512 s = _mm512_mul_ps(i8x16(q), _mm512_loadu_ps(x + b * 256 + 128 * h + 32 * g + 16 * half));
                    const __m512 ds = _mm512_set1_ps(d * (float)sc[8 * h + 2 * g + half]);
                    if (g & 1)
                        acc1 = _mm512_fmadd_ps(ds, s, acc1);
                    else
                        acc0 = _mm512_fmadd_ps(ds, s, acc0);
                }
            }
    }
    return _mm512_reduce_add_ps(_mm512_add_ps(acc0, acc1));
}

AVX512 static float dot_q4_0_512(const uint8_t *row, const float *x, int64_t nblocks)
{
    const __m128i low4 = _mm_set1_epi8(0x0f), eight = _mm_set1_epi8(8);
    __m512 acc0 = _mm512_setzero_ps(), acc1 = acc0;
    for (int64_t b = 0; b < nblocks; b++) {
        const uint8_t *blk = row + b * 18;
        const float *xb = x + b * 32;
        const __m128i v = _mm_loadu_si128((const __m128i *)(blk + 2));
        const __m128i lo = _mm_sub_epi8(_mm_and_si128(v, low4), eight);
        const __m128i hi = _mm_sub_epi8(_mm_and_si128(_mm_srli_epi16(v, 4), low4), eight);
        __m512 s = _mm512_mul_ps(i8x16(lo), _mm512_loadu_ps(xb));
        s = _mm512_fmadd_ps(i8x16(hi), _mm512_loadu_ps(xb + 16), s);
        const __m512 d = _mm512_set1_ps(_cvtsh_ss((uint16_t)(blk[0] | blk[1] << 8)));
        if (b & 1)
            acc1 = _mm512_fmadd_ps(d, s, acc1);
        else
            acc0 = _mm512_fmadd_ps(d, s, acc0);
    }
    return _mm512_reduce_add_ps(_mm512_add_ps(acc0, acc1));
}

/* ---- the integer dot (cpu_x8) ---- */

/* A block's f16 scale times x's block scale, in all eight lanes. */
AVX2_FMA_F16C static __m256 block_scale(const uint8_t *blk, float dx)
{
    return _mm256_set1_ps(_cvtsh_ss((uint16_t)(blk[0] | blk[1] << 8)) * dx);
}

/* Q8_0, AVX2: vpmaddubsw takes unsigned times signed bytes, so |w| times
 * x with w's sign (|w| <= 128, |x| <= 127: a pair's sum, 32,512, stays
 * inside int16), then pairs of int16 into int32. */
AVX2_FMA_F16C static float dot_q8_0_x8_avx2(const uint8_t *row, cpu_x8 x8, int64_t nblocks)
{
    const __m256i ones = _mm256_set1_epi16(1);
    __m256 acc0 = _mm256_setzero_ps(), acc1 = acc0;
    for (int64_t b = 0; b < nblocks; b++) {
        const uint8_t *blk = row + b * 34;
        const __m256i w = _mm256_loadu_si256((const __m256i *)(blk + 2));
        const __m256i x = _mm256_loadu_si256((const __m256i *)(x8.q + b * 32));
        const __m256i p = _mm256_madd_epi16(_mm256_maddubs_epi16(_mm256_sign_epi8(w, w), _mm256_sign_epi8(x, w)), ones);
        if (b & 1)
            acc1 = _mm256_fmadd_ps(block_scale(blk, x8.d[b]), _mm256_cvtepi32_ps(p), acc1);
        else
            acc0 = _mm256_fmadd_ps(block_scale(blk, x8.d[b]), _mm256_cvtepi32_ps(p), acc0);
    }
    return hsum256(_mm256_add_ps(acc0, acc1));
}

/* Q4_0's 32 nibbles as bytes 0..15 in element order (the low nibbles
 * are elements 0..15, the high ones 16..31). */
AVX2_FMA_F16C static __m256i q4_0_nibbles(const uint8_t *blk)
{
    const __m128i v = _mm_loadu_si128((const __m128i *)(blk + 2));
    return _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(v, 4), v), _mm256_set1_epi8(0x0f));
}

/* Q4_0, AVX2: the nibble u (0..15) unsigned times x, and the offset 8
 * taken off as 8 * (sum of x's q) in lane 0: sum (u - 8) x = sum u x - 8
 * sum x. */
AVX2_FMA_F16C static float dot_q4_0_x8_avx2(const uint8_t *row, cpu_x8 x8, int64_t nblocks)
{
    const __m256i ones = _mm256_set1_epi16(1);
    __m256 acc0 = _mm256_setzero_ps(), acc1 = acc0;
    for (int64_t b = 0; b < nblocks; b++) {
        const uint8_t *blk = row + b * 18;
        const __m256i x = _mm256_loadu_si256((const __m256i *)(x8.q + b * 32));
        __m256i p = _mm256_madd_epi16(_mm256_maddubs_epi16(q4_0_nibbles(blk), x), ones);
        p = _mm256_add_epi32(p, _mm256_setr_epi32(-8 * x8.sum[b], 0, 0, 0, 0, 0, 0, 0));
        if (b & 1)
            acc1 = _mm256_fmadd_ps(block_scale(blk, x8.d[b]), _mm256_cvtepi32_ps(p), acc1);
        else
            acc0 = _mm256_fmadd_ps(block_scale(blk, x8.d[b]), _mm256_cvtepi32_ps(p), acc0);
    }
    return hsum256(_mm256_add_ps(acc0, acc1));
}

/* Bytes ahead of the block being read that the sixteen-block loops ask
 * the cache for: the integer dot is fast enough that one core's weight
 * stream stalls on memory's latency, which the hardware prefetcher alone
 * did not hide (a 4096 x 4096 weight from memory on one core, in GB per
 * CPU-second: Q4_0 about 4.3-6.7 without, 8.4-9.4 with 1-2 KiB ahead;
 * 4 KiB was worse again). */
#define GEMV_PREFETCH 2048
#define VNNI __attribute__((target("avx512vnni,avx512vl,avx512bw,avx512f,avx2,fma,f16c")))

/* Q8_0, VNNI: vpdpbusd sums four unsigned-times-signed byte products
 * into each int32 lane in one instruction (no int16 step to saturate):
 * w + 128 (w with its top bit flipped) times x, whose excess 128 * (sum
 * of x's q) starts the lane-0 sum negated. */
VNNI static float dot_q8_0_x8_vnni256(const uint8_t *row, cpu_x8 x8, int64_t nblocks)
{
    const __m256i top = _mm256_set1_epi8((char)0x80);
    __m256 acc0 = _mm256_setzero_ps(), acc1 = acc0;
    for (int64_t b = 0; b < nblocks; b++) {
        const uint8_t *blk = row + b * 34;
        const __m256i w = _mm256_xor_si256(_mm256_loadu_si256((const __m256i *)(blk + 2)), top);
        const __m256i x = _mm256_loadu_si256((const __m256i *)(x8.q + b * 32));
        const __m256i p = _mm256_dpbusd_epi32(_mm256_setr_epi32(-128 * x8.sum[b], 0, 0, 0, 0, 0, 0, 0), w, x);
        if (b & 1)
            acc1 = _mm256_fmadd_ps(block_scale(blk, x8.d[b]), _mm256_cvtepi32_ps(p), acc1);
        else
            acc0 = _mm256_fmadd_ps(block_scale(blk, x8.d[b]), _mm256_cvtepi32_ps(p), acc0);
    }
    return hsum256(_mm256_add_ps(acc0, acc1));
}

VNNI static float dot_q4_0_x8_vnni256(const uint8_t *row, cpu_x8 x8, int64_t nblocks)
{
    __m256 acc0 = _mm256_setzero_ps(), acc1 = acc0;
    for (int64_t b = 0; b < nblocks; b++) {
        const uint8_t *blk = row + b * 18;
        const __m256i x = _mm256_loadu_si256((const __m256i *)(x8.q + b * 32));
        const __m256i p =
            _mm256_dpbusd_epi32(_mm256_setr_epi32(-8 * x8.sum[b], 0, 0, 0, 0, 0, 0, 0), q4_0_nibbles(blk), x);
        if (b & 1)
            acc1 = _mm256_fmadd_ps(block_scale(blk, x8.d[b]), _mm256_cvtepi32_ps(p), acc1);
        else
            acc0 = _mm256_fmadd_ps(block_scale(blk, x8.d[b]), _mm256_cvtepi32_ps(p), acc0);
    }
    return hsum256(_mm256_add_ps(acc0, acc1));
}

/* Sixteen blocks' d_w * d[b] at once: the f16 scales gathered from the
 * block starts (index * 2 bytes apart: 17 for Q8_0's 34-byte blocks, 9
 * for Q4_0's 18), the low 16 bits of each dword kept. */
VNNI static __m512 scales16(const uint8_t *row, __m512i halfword_index, const float *dx)
{
    const __m512i words = _mm512_i32gather_epi32(halfword_index, (const void *)row, 2);
    return _mm512_mul_ps(_mm512_cvtph_ps(_mm512_cvtepi32_epi16(words)), _mm512_loadu_ps(dx));
}

/* Two blocks' integer dots in one vpdpbusd: lanes 0..7 block 2p, 8..15
 * block 2p + 1; their scales picked from the sixteen by a permute. */
#define X8_PAIR_ACC(p, dots)                                                                                      \
    do {                                                                                                      \
        const __m512 sc = _mm512_permutexvar_ps(_mm512_add_epi32(pair0, _mm512_set1_epi32(2 * (p))), s16);   \
        acc[(p) & 1] = _mm512_fmadd_ps(sc, _mm512_cvtepi32_ps(dots), acc[(p) & 1]);                          \
    } while (0)

VNNI static float dot_q8_0_x8_vnni(const uint8_t *row, cpu_x8 x8, int64_t nblocks)
{
    const __m512i index = _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                                             _mm512_set1_epi32(17));
    const __m512i pair0 = _mm512_setr_epi32(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1);
    __m512 acc[2] = {_mm512_setzero_ps(), _mm512_setzero_ps()};
    int64_t b = 0;
    for (; b + 16 <= nblocks; b += 16) {
        const uint8_t *blk = row + b * 34;
        for (int l = 0; l < 544; l += 64) _mm_prefetch((const char *)blk + GEMV_PREFETCH + l, _MM_HINT_T0);
        const __m512 s16 = scales16(blk, index, x8.d + b);
        for (int p = 0; p < 8; p++) {
            const uint8_t *w2 = blk + 68 * p;
            const __m512i w = _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_loadu_si256((const __m256i *)(w2 + 2))),
                                                 _mm256_loadu_si256((const __m256i *)(w2 + 36)), 1);
            const __m512i x = _mm512_loadu_si512(x8.q + (b + 2 * p) * 32);
            /* |w| times x with w's sign: the integer dot exactly, as
             * the 256-bit paths (AVX-512BW has no vpsignb) */
            const __m512i xs = _mm512_mask_sub_epi8(x, _mm512_movepi8_mask(w), _mm512_setzero_si512(), x);
            X8_PAIR_ACC(p, _mm512_dpbusd_epi32(_mm512_setzero_si512(), _mm512_abs_epi8(w), xs));
        }
    }
    float s = _mm512_reduce_add_ps(_mm512_add_ps(acc[0], acc[1]));
    if (b < nblocks)
        s += dot_q8_0_x8_vnni256(row + b * 34, (cpu_x8){x8.q + b * 32, x8.d + b, x8.sum + b}, nblocks - b);
    return s;
}

VNNI static float dot_q4_0_x8_vnni(const uint8_t *row, cpu_x8 x8, int64_t nblocks)
{
    const __m512i low4 = _mm512_set1_epi8(0x0f);
    const __m512i index = _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                                             _mm512_set1_epi32(9));
    const __m512i pair0 = _mm512_setr_epi32(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1);
    /* Q4_0's offset of 8 comes off as 8 * (sum of x's q) times the block's
     * scales, in f32 once per sixteen blocks (|8 sum q| is within 8/|u - 8|
     * of the dot's own terms: no cancellation f32 notices) */
    __m512 acc[2] = {_mm512_setzero_ps(), _mm512_setzero_ps()}, corr = _mm512_setzero_ps();
    int64_t b = 0;
    for (; b + 16 <= nblocks; b += 16) {
        const uint8_t *blk = row + b * 18;
        for (int l = 0; l < 288; l += 64) _mm_prefetch((const char *)blk + GEMV_PREFETCH + l, _MM_HINT_T0);
        const __m512 s16 = scales16(blk, index, x8.d + b);
        corr = _mm512_fmadd_ps(s16, _mm512_cvtepi32_ps(_mm512_loadu_si512(x8.sum + b)), corr);
        for (int p = 0; p < 8; p++) {
            const uint8_t *w2 = blk + 36 * p;
            /* [block 2p's 16 bytes, 2p + 1's] -> 128-bit lanes [2p, 2p,
             * 2p + 1, 2p + 1], the second of each pair shifted to its high
             * nibbles: elements 0..15, 16..31 of each block */
            const __m256i v = _mm256_set_m128i(_mm_loadu_si128((const __m128i *)(w2 + 20)),
                                               _mm_loadu_si128((const __m128i *)(w2 + 2)));
            __m512i w = _mm512_shuffle_i64x2(_mm512_castsi256_si512(v), _mm512_castsi256_si512(v), 0x50);
            w = _mm512_and_si512(_mm512_mask_srli_epi16(w, 0xFF00FF00u, w, 4), low4);
            const __m512i x = _mm512_loadu_si512(x8.q + (b + 2 * p) * 32);
            X8_PAIR_ACC(p, _mm512_dpbusd_epi32(_mm512_setzero_si512(), w, x));
        }
    }
    float s = _mm512_reduce_add_ps(_mm512_add_ps(acc[0], acc[1])) - 8.0f * _mm512_reduce_add_ps(corr);
    if (b < nblocks)
        s += dot_q4_0_x8_vnni256(row + b * 18, (cpu_x8){x8.q + b * 32, x8.d + b, x8.sum + b}, nblocks - b);
    return s;
}
#undef X8_PAIR_ACC

/* ---- the K-quant integer dot (cpu_x8k) ---- */

/* Q4_K's scales (bytes 0..7) and mins (bytes 8..15) as q4k_unpack lays
 * them out, from the 12 packed bytes at S, in registers (a row of stores
 * and a 16-byte load back would stall on store forwarding). Reads 16
 * bytes: S + 12.. are the block's quants. 32-bit lanes: [w0, w2, w1, w2]
 * give the low bits, [w0, w0, w1, w1] the top two of sub-blocks 4..7. */
AVX2_FMA_F16C static __m128i q4k_unpack_128(const uint8_t *S)
{
    const __m128i v = _mm_loadu_si128((const __m128i *)S);
    const __m128i a = _mm_shuffle_epi32(v, _MM_SHUFFLE(2, 1, 2, 0)), b = _mm_shuffle_epi32(v, _MM_SHUFFLE(1, 1, 0, 0));
    const __m128i low = _mm_and_si128(_mm_srlv_epi32(a, _mm_setr_epi32(0, 0, 0, 4)),
                                      _mm_setr_epi32(0x3f3f3f3f, 0x0f0f0f0f, 0x3f3f3f3f, 0x0f0f0f0f));
    const __m128i top = _mm_slli_epi32(_mm_and_si128(_mm_srli_epi32(b, 6), _mm_set1_epi8(3)), 4);
    return _mm_or_si128(low, _mm_and_si128(top, _mm_setr_epi32(0, -1, 0, -1)));
}

/* The mins' term of a Q4_K super-block: sum over sub-blocks of m * (x's
 * two sums of 16), each min repeated over its two groups; int32 lanes. */
AVX2_FMA_F16C static __m256i q4k_mins_dot(__m128i scales_mins, const int16_t *sum16)
{
    const __m128i twice = _mm_setr_epi8(8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13, 14, 14, 15, 15);
    return _mm256_madd_epi16(_mm256_loadu_si256((const __m256i *)sum16),
                             _mm256_cvtepu8_epi16(_mm_shuffle_epi8(scales_mins, twice)));
}

/* Q4_K, AVX2: per sub-block of 32 the nibbles (0..15) unsigned times x's
 * int8 (vpmaddubsw: a pair's sum at most 2 * 15 * 127, inside int16),
 * times the 6-bit scale into int32 (vpmaddwd). Per super-block: d * d_x *
 * (scaled sum) - dmin * d_x * (mins' term). */
AVX2_FMA_F16C static float dot_q4_k_x8_avx2(const uint8_t *row, cpu_x8k x8, int64_t nblocks)
{
    const __m256i low4 = _mm256_set1_epi8(0x0f);
    __m256 acc = _mm256_setzero_ps(), accm = acc;
    for (int64_t b = 0; b < nblocks; b++) {
        const uint8_t *blk = row + b * 144;
        _mm_prefetch((const char *)blk + GEMV_PREFETCH, _MM_HINT_T0);
        _mm_prefetch((const char *)blk + GEMV_PREFETCH + 64, _MM_HINT_T0);
        _mm_prefetch((const char *)blk + GEMV_PREFETCH + 128, _MM_HINT_T0);
        const __m128i sm = q4k_unpack_128(blk + 4);
        /* the eight scales as int16 in both 128-bit lanes; vpshufb picks
         * one of them into every int16 */
        const __m256i s16 = _mm256_broadcastsi128_si256(_mm_cvtepu8_epi16(sm));
        const int8_t *xq = x8.q + b * 256;
        __m256i isum = _mm256_setzero_si256();
        for (int c = 0; c < 4; c++) {
            const __m256i v = _mm256_loadu_si256((const __m256i *)(blk + 16 + 32 * c));
            const __m256i p0 =
                _mm256_maddubs_epi16(_mm256_and_si256(v, low4), _mm256_loadu_si256((const __m256i *)(xq + 64 * c)));
            const __m256i p1 = _mm256_maddubs_epi16(_mm256_and_si256(_mm256_srli_epi16(v, 4), low4),
                                                    _mm256_loadu_si256((const __m256i *)(xq + 64 * c + 32)));
            const __m256i sc0 = _mm256_shuffle_epi8(s16, _mm256_set1_epi16((short)((4 * c + 1) << 8 | 4 * c)));
            const __m256i sc1 = _mm256_shuffle_epi8(s16, _mm256_set1_epi16((short)((4 * c + 3) << 8 | (4 * c + 2))));
            isum = _mm256_add_epi32(isum, _mm256_add_epi32(_mm256_madd_epi16(p0, sc0), _mm256_madd_epi16(p1, sc1)));
        }
        const float dx = x8.d[b];
        acc = _mm256_fmadd_ps(_mm256_set1_ps(_cvtsh_ss((uint16_t)(blk[0] | blk[1] << 8)) * dx), _mm256_cvtepi32_ps(isum),
                              acc);
        accm = _mm256_fmadd_ps(_mm256_set1_ps(_cvtsh_ss((uint16_t)(blk[2] | blk[3] << 8)) * dx),
                               _mm256_cvtepi32_ps(q4k_mins_dot(sm, x8.sum16 + b * 16)), accm);
    }
    return hsum256(_mm256_sub_ps(acc, accm));
}

/* Q6_K's 32 quants of group pair g (0..3) of half h as stored (0..63):
 * the low nibble from L (L0 for g even, L1 odd; the high nibble for g >=
 * 2), the high bit pair from H shifted by 2 g. */
#define Q6K_QUANTS(L, H, g)                                                                                        \
    _mm256_or_si256(_mm256_and_si256((g) < 2 ? (L) : _mm256_srli_epi16((L), 4), low4),                          \
                    _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16((H), 2 * (g)), three), 4))

/* Q6_K, AVX2: the 6-bit quants as stored unsigned times x's int8 (a
 * pair's sum at most 2 * 63 * 127 = 16,002, inside int16), times the int8
 * scale of their group of 16 into int32; the offset 32 comes off as 32 *
 * sum over groups of scale * (x's sum of the group), which starts the
 * lanes. Per super-block: d * d_x * (the int32 sum). */
AVX2_FMA_F16C static float dot_q6_k_x8_avx2(const uint8_t *row, cpu_x8k x8, int64_t nblocks)
{
    const __m256i low4 = _mm256_set1_epi8(0x0f), three = _mm256_set1_epi8(3);
    __m256 acc = _mm256_setzero_ps();
    for (int64_t b = 0; b < nblocks; b++) {
        const uint8_t *blk = row + b * 210;
        for (int l = 0; l < 256; l += 64) _mm_prefetch((const char *)blk + GEMV_PREFETCH + l, _MM_HINT_T0);
        const __m128i sc8 = _mm_loadu_si128((const __m128i *)(blk + 192));
        const int8_t *xq = x8.q + b * 256;
        __m256i isum = _mm256_sub_epi32(
            _mm256_setzero_si256(),
            _mm256_slli_epi32(
                _mm256_madd_epi16(_mm256_loadu_si256((const __m256i *)(x8.sum16 + b * 16)), _mm256_cvtepi8_epi16(sc8)),
                5));
        for (int h = 0; h < 2; h++) {
            const __m256i L0 = _mm256_loadu_si256((const __m256i *)(blk + 64 * h));
            const __m256i L1 = _mm256_loadu_si256((const __m256i *)(blk + 64 * h + 32));
            const __m256i H = _mm256_loadu_si256((const __m256i *)(blk + 128 + 32 * h));
            for (int g = 0; g < 4; g++) {
                /* groups 8h + 2g (elements 0..15 of the 32) and 8h + 2g + 1 */
                const int s = 8 * h + 2 * g;
                const __m128i pick = _mm_set_epi64x((long long)(0x0101010101010101ull * (unsigned)(s + 1)),
                                                    (long long)(0x0101010101010101ull * (unsigned)s));
                const __m256i scale = _mm256_cvtepi8_epi16(_mm_shuffle_epi8(sc8, pick));
                const __m256i q = Q6K_QUANTS(g & 1 ? L1 : L0, H, g);
                const __m256i p = _mm256_maddubs_epi16(q, _mm256_loadu_si256((const __m256i *)(xq + 128 * h + 32 * g)));
                isum = _mm256_add_epi32(isum, _mm256_madd_epi16(p, scale));
            }
        }
        acc = _mm256_fmadd_ps(_mm256_set1_ps(_cvtsh_ss((uint16_t)(blk[208] | blk[209] << 8)) * x8.d[b]),
                              _mm256_cvtepi32_ps(isum), acc);
    }
    return hsum256(acc);
}
#undef Q6K_QUANTS

/* Q4_K, AVX-512 VNNI: 64 elements (two sub-blocks) a step. A 32-byte
 * chunk of quants is sub-block 2c in its low nibbles and 2c + 1 in its
 * high ones: broadcast to both halves, the upper half shifted down by 4,
 * it meets x's 64 contiguous int8; vpdpwssd applies the two scales (each
 * 128-bit lane's picked by vpshufb) and sums into int32 in one step. */
VNNI static float dot_q4_k_x8_vnni(const uint8_t *row, cpu_x8k x8, int64_t nblocks)
{
    const __m512i low4 = _mm512_set1_epi8(0x0f);
    __m512i pick[4];
    for (int c = 0; c < 4; c++)
        pick[c] = _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_set1_epi16((short)((4 * c + 1) << 8 | 4 * c))),
                                     _mm256_set1_epi16((short)((4 * c + 3) << 8 | (4 * c + 2))), 1);
    __m512 acc = _mm512_setzero_ps();
    __m256 accm = _mm256_setzero_ps();
    for (int64_t b = 0; b < nblocks; b++) {
        const uint8_t *blk = row + b * 144;
        _mm_prefetch((const char *)blk + GEMV_PREFETCH, _MM_HINT_T0);
        _mm_prefetch((const char *)blk + GEMV_PREFETCH + 64, _MM_HINT_T0);
        _mm_prefetch((const char *)blk + GEMV_PREFETCH + 128, _MM_HINT_T0);
        const __m128i sm = q4k_unpack_128(blk + 4);
        const __m512i s16 = _mm512_broadcast_i32x4(_mm_cvtepu8_epi16(sm));
        const int8_t *xq = x8.q + b * 256;
        __m512i isum = _mm512_setzero_si512();
        for (int c = 0; c < 4; c++) {
            const __m512i v = _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)(blk + 16 + 32 * c)));
            const __m512i q = _mm512_and_si512(_mm512_mask_srli_epi16(v, 0xFFFF0000u, v, 4), low4);
            const __m512i p = _mm512_maddubs_epi16(q, _mm512_loadu_si512(xq + 64 * c));
            isum = _mm512_dpwssd_epi32(isum, p, _mm512_shuffle_epi8(s16, pick[c]));
        }
        const float dx = x8.d[b];
        acc = _mm512_fmadd_ps(_mm512_set1_ps(_cvtsh_ss((uint16_t)(blk[0] | blk[1] << 8)) * dx), _mm512_cvtepi32_ps(isum),
                              acc);
        accm = _mm256_fmadd_ps(_mm256_set1_ps(_cvtsh_ss((uint16_t)(blk[2] | blk[3] << 8)) * dx),
                               _mm256_cvtepi32_ps(q4k_mins_dot(sm, x8.sum16 + b * 16)), accm);
    }
    return _mm512_reduce_add_ps(acc) - hsum256(accm);
}

/* Q6_K, AVX-512 VNNI: 64 elements (four groups of 16) a step. The low
 * nibbles of the 64 bytes at 64 h are groups 8h + 0..3, their high
 * nibbles 8h + 4..7; the 32 bytes of high bit pairs serve both halves
 * (the upper one shifted by 2 first). Each 128-bit lane holds one group:
 * vpermw spreads the sixteen scales (int16) so, and vpdpwssd applies them
 * and sums into int32. */
VNNI static float dot_q6_k_x8_vnni(const uint8_t *row, cpu_x8k x8, int64_t nblocks)
{
    const __m512i low4 = _mm512_set1_epi8(0x0f), three = _mm512_set1_epi8(3);
    __m512i spread[4];
    for (int j = 0; j < 4; j++)
        spread[j] = _mm512_setr_epi32(0x00010001 * (4 * j), 0x00010001 * (4 * j), 0x00010001 * (4 * j),
                                      0x00010001 * (4 * j), 0x00010001 * (4 * j + 1), 0x00010001 * (4 * j + 1),
                                      0x00010001 * (4 * j + 1), 0x00010001 * (4 * j + 1), 0x00010001 * (4 * j + 2),
                                      0x00010001 * (4 * j + 2), 0x00010001 * (4 * j + 2), 0x00010001 * (4 * j + 2),
                                      0x00010001 * (4 * j + 3), 0x00010001 * (4 * j + 3), 0x00010001 * (4 * j + 3),
                                      0x00010001 * (4 * j + 3));
    __m512 acc = _mm512_setzero_ps();
    for (int64_t b = 0; b < nblocks; b++) {
        const uint8_t *blk = row + b * 210;
        for (int l = 0; l < 256; l += 64) _mm_prefetch((const char *)blk + GEMV_PREFETCH + l, _MM_HINT_T0);
        const __m256i sc16 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(blk + 192)));
        const __m512i sc = _mm512_castsi256_si512(sc16);
        const int8_t *xq = x8.q + b * 256;
        /* the offset's -32 * sum of scale * (x's group sum) in the low half */
        const __m256i off = _mm256_slli_epi32(
            _mm256_madd_epi16(_mm256_loadu_si256((const __m256i *)(x8.sum16 + b * 16)), sc16), 5);
        __m512i isum = _mm512_inserti64x4(_mm512_setzero_si512(), _mm256_sub_epi32(_mm256_setzero_si256(), off), 0);
        for (int h = 0; h < 2; h++) {
            const __m512i L = _mm512_loadu_si512(blk + 64 * h);
            const __m512i H0 = _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)(blk + 128 + 32 * h)));
            const __m512i H = _mm512_mask_srli_epi16(H0, 0xFFFF0000u, H0, 2);
            const __m512i q01 = _mm512_or_si512(_mm512_and_si512(L, low4), _mm512_slli_epi16(_mm512_and_si512(H, three), 4));
            const __m512i q23 = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(L, 4), low4),
                                                _mm512_slli_epi16(_mm512_and_si512(_mm512_srli_epi16(H, 4), three), 4));
            const __m512i p01 = _mm512_maddubs_epi16(q01, _mm512_loadu_si512(xq + 128 * h));
            const __m512i p23 = _mm512_maddubs_epi16(q23, _mm512_loadu_si512(xq + 128 * h + 64));
            isum = _mm512_dpwssd_epi32(isum, p01, _mm512_permutexvar_epi16(spread[2 * h], sc));
            isum = _mm512_dpwssd_epi32(isum, p23, _mm512_permutexvar_epi16(spread[2 * h + 1], sc));
        }
        acc = _mm512_fmadd_ps(_mm512_set1_ps(_cvtsh_ss((uint16_t)(blk[208] | blk[209] << 8)) * x8.d[b]),
                              _mm512_cvtepi32_ps(isum), acc);
    }
    return _mm512_reduce_add_ps(acc);
}
#endif

/* The smallest nonzero max|x| of a block that 8-bit blocks carry: below
 * it the step max|x| / 127 times a weight's f16 scale (down to 2^-24)
 * could fall below f32's normal range and lose its precision, so such an
 * x takes the f32 path. 127 * 2^-100: the step is at least 2^-100. */
#define X8_SMALLEST_MAX 0x1.fcp-94f

bool cpu_x8_quantize(const float *x, int64_t nblocks, cpu_x8 x8)
{
    /* Loops of plain compares and adds that the compiler vectorises: this
     * runs once per product, but for a short weight it is not negligible. */
    const float round_add = 12582912.0f; /* 1.5 * 2^23: adding and taking it off rounds |v| < 2^22 to an integer */
    for (int64_t b = 0; b < nblocks; b++) {
        const float *xb = x + b * 32;
        float amax = 0.0f;
        int finite = 1;
        for (int j = 0; j < 32; j++) {
            const float a = fabsf(xb[j]);
            finite &= a <= FLT_MAX; /* false for inf and NaN */
            amax = a > amax ? a : amax;
        }
        if (!finite || (amax > 0.0f && amax < X8_SMALLEST_MAX)) return false;
        /* |x * id| <= 127 up to a few ulps: the rounding gives at most 127 */
        const float id = amax > 0.0f ? 127.0f / amax : 0.0f;
        int32_t s = 0;
        for (int j = 0; j < 32; j++) {
            const int32_t q = (int32_t)((xb[j] * id + round_add) - round_add);
            x8.q[b * 32 + j] = (int8_t)q;
            s += q;
        }
        x8.d[b] = amax / 127.0f;
        x8.sum[b] = s;
    }
    return true;
}

bool cpu_x8k_quantize(const float *x, int64_t nblocks, cpu_x8k x8)
{
    /* as cpu_x8_quantize, one step per 256 elements */
    const float round_add = 12582912.0f;
    for (int64_t b = 0; b < nblocks; b++) {
        const float *xb = x + b * 256;
        float amax = 0.0f;
        int finite = 1;
        for (int j = 0; j < 256; j++) {
            const float a = fabsf(xb[j]);
            finite &= a <= FLT_MAX;
            amax = a > amax ? a : amax;
        }
        if (!finite || (amax > 0.0f && amax < X8_SMALLEST_MAX)) return false;
        const float id = amax > 0.0f ? 127.0f / amax : 0.0f;
        for (int g = 0; g < 16; g++) {
            int32_t s = 0;
            for (int j = 16 * g; j < 16 * g + 16; j++) {
                const int32_t q = (int32_t)((xb[j] * id + round_add) - round_add);
                x8.q[b * 256 + j] = (int8_t)q;
                s += q;
            }
            x8.sum16[b * 16 + g] = (int16_t)s;
        }
        x8.d[b] = amax / 127.0f;
    }
    return true;
}

float cpu_dot_q4_k_x8(const uint8_t *row, cpu_x8k x8, int64_t nblocks)
{
#if GEMV_X86
    if (wide_level() == 3) return dot_q4_k_x8_vnni(row, x8, nblocks);
    if (wide_ok()) return dot_q4_k_x8_avx2(row, x8, nblocks);
#endif
    float acc = 0.0f;
    for (int64_t b = 0; b < nblocks; b++) {
        const uint8_t *blk = row + b * 144;
        const int8_t *xq = x8.q + b * 256;
        const int16_t *sum16 = x8.sum16 + b * 16;
        uint8_t sm[16];
        q4k_unpack(blk + 4, sm);
        int32_t isum = 0, msum = 0;
        for (int c = 0; c < 4; c++) {
            const uint8_t *q = blk + 16 + 32 * c;
            int32_t s0 = 0, s1 = 0;
            for (int l = 0; l < 32; l++) {
                s0 += (int32_t)(q[l] & 15) * xq[64 * c + l];
                s1 += (int32_t)(q[l] >> 4) * xq[64 * c + 32 + l];
            }
            isum += (int32_t)sm[2 * c] * s0 + (int32_t)sm[2 * c + 1] * s1;
        }
        for (int s = 0; s < 8; s++) msum += (int32_t)sm[8 + s] * (sum16[2 * s] + sum16[2 * s + 1]);
        const float dx = x8.d[b];
        acc += half_to_float((uint16_t)(blk[0] | blk[1] << 8)) * dx * (float)isum -
               half_to_float((uint16_t)(blk[2] | blk[3] << 8)) * dx * (float)msum;
    }
    return acc;
}

float cpu_dot_q6_k_x8(const uint8_t *row, cpu_x8k x8, int64_t nblocks)
{
#if GEMV_X86
    if (wide_level() == 3) return dot_q6_k_x8_vnni(row, x8, nblocks);
    if (wide_ok()) return dot_q6_k_x8_avx2(row, x8, nblocks);
#endif
    float acc = 0.0f;
    for (int64_t b = 0; b < nblocks; b++) {
        const uint8_t *blk = row + b * 210;
        const int8_t *sc = (const int8_t *)(blk + 192), *xq = x8.q + b * 256;
        int32_t isum = 0;
        for (int h = 0; h < 2; h++)
            for (int g = 0; g < 4; g++) {
                const uint8_t *lo = blk + 64 * h + 32 * (g & 1), *hi = blk + 128 + 32 * h;
                const int shift = g < 2 ? 0 : 4;
                for (int half = 0; half < 2; half++) {
                    const int s = 8 * h + 2 * g + half;
                    int32_t t = 0;
                    for (int l = 16 * half; l < 16 * half + 16; l++)
                        t += (int32_t)((lo[l] >> shift & 15) | (hi[l] >> 2 * g & 3) << 4) * xq[128 * h + 32 * g + l];
                    isum += (int32_t)sc[s] * (t - 32 * (int32_t)x8.sum16[b * 16 + s]);
                }
            }
        acc += half_to_float((uint16_t)(blk[208] | blk[209] << 8)) * x8.d[b] * (float)isum;
    }
    return acc;
}

float cpu_dot_q8_0_x8(const uint8_t *row, cpu_x8 x8, int64_t nblocks)
{
#if GEMV_X86
    if (wide_level() == 3) return dot_q8_0_x8_vnni(row, x8, nblocks);
    if (wide_ok()) return dot_q8_0_x8_avx2(row, x8, nblocks);
#endif
    float acc = 0.0f;
    for (int64_t b = 0; b < nblocks; b++) {
        const uint8_t *blk = row + b * 34;
        int32_t s = 0;
        for (int j = 0; j < 32; j++) s += (int32_t)(int8_t)blk[2 + j] * x8.q[b * 32 + j];
        acc += half_to_float((uint16_t)(blk[0] | blk[1] << 8)) * x8.d[b] * (float)s;
    }
    return acc;
}

float cpu_dot_q4_0_x8(const uint8_t *row, cpu_x8 x8, int64_t nblocks)
{
#if GEMV_X86
    if (wide_level() == 3) return dot_q4_0_x8_vnni(row, x8, nblocks);
    if (wide_ok()) return dot_q4_0_x8_avx2(row, x8, nblocks);
#endif
    float acc = 0.0f;
    for (int64_t b = 0; b < nblocks; b++) {
        const uint8_t *blk = row + b * 18;
        const int8_t *xq = x8.q + b * 32;
        int32_t s = 0;
        for (int j = 0; j < 16; j++) s += (int32_t)((blk[2 + j] & 15) - 8) * xq[j] + (int32_t)((blk[2 + j] >> 4) - 8) * xq[16 + j];
        acc += half_to_float((uint16_t)(blk[0] | blk[1] << 8)) * x8.d[b] * (float)s;
    }
    return acc;
}

float cpu_dot_f16(const uint16_t *a, const float *x, int64_t k)
{
#if GEMV_X86
    if (wide_ok()) return dot_f16_wide(a, x, k);
#endif
    float acc[8] = {0};
    int64_t j = 0;
    for (; j + 8 <= k; j += 8)
        for (int l = 0; l < 8; l++) acc[l] += half_to_float(a[j + l]) * x[j + l];
    float s = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
    for (; j < k; j++) s += half_to_float(a[j]) * x[j];
    return s;
}

float cpu_dot_q8_0(const uint8_t *row, const float *x, int64_t nblocks)
{
#if GEMV_X86
    if (wide_level() >= 2) return dot_q8_0_512(row, x, nblocks);
    if (wide_ok()) return dot_q8_0_wide(row, x, nblocks);
#endif
    float acc = 0.0f;
    for (int64_t b = 0; b < nblocks; b++) {
        const uint8_t *blk = row + b * 34;
        float s = 0.0f;
        for (int j = 0; j < 32; j++) s += (float)(int8_t)blk[2 + j] * x[b * 32 + j];
        acc += half_to_float((uint16_t)(blk[0] | blk[1] << 8)) * s;
    }
    return acc;
}

float cpu_dot_q4_0(const uint8_t *row, const float *x, int64_t nblocks)
{
#if GEMV_X86
    if (wide_level() >= 2) return dot_q4_0_512(row, x, nblocks);
    if (wide_ok()) return dot_q4_0_wide(row, x, nblocks);
#endif
    float acc = 0.0f;
    for (int64_t b = 0; b < nblocks; b++) {
        const uint8_t *blk = row + b * 18;
        float s = 0.0f;
        for (int j = 0; j < 16; j++)
            s += (float)((blk[2 + j] & 15) - 8) * x[b * 32 + j] + (float)((blk[2 + j] >> 4) - 8) * x[b * 32 + 16 + j];
        acc += half_to_float((uint16_t)(blk[0] | blk[1] << 8)) * s;
    }
    return acc;
}

bool cpu_dot_kquant_wide(void) { return wide_level() >= 2; }

float cpu_dot_q4_k(const uint8_t *row, const float *x, int64_t nblocks)
{
#if GEMV_X86
    if (wide_level() >= 2) return dot_q4_k_512(row, x, nblocks);
#endif
    (void)row, (void)x, (void)nblocks;
    return 0.0f; /* callers ask cpu_dot_kquant_wide first */
}

float cpu_dot_q6_k(const uint8_t *row, const float *x, int64_t nblocks)
{
#if GEMV_X86
    if (wide_level() >= 2) return dot_q6_k_512(row, x, nblocks);
#endif
    (void)row, (void)x, (void)nblocks;
    return 0.0f; /* callers ask cpu_dot_kquant_wide first */
}

wt_status cpu_gemv_f16(wt_context *ctx, const wt_tensor *a, const wt_tensor *b, const wt_tensor *bias,
                       wt_tensor *out)
{
    if (a->dtype != WT_F16 || b->dtype != WT_F16 || out->dtype != WT_F16 || (bias && bias->dtype != WT_F16) ||
        a->ndim != 3 || b->ndim != 3 || out->ndim != 3 || out->shape[0] != 1)
        return WT_ERR_UNSUPPORTED;
    const int64_t M = out->shape[1], N = out->shape[2], K = a->shape[2];
    /* rows of the matrix (unit stride along K) and the vector */
    const uint16_t *mat, *vec;
    int64_t rows, row_stride, vec_stride, out_stride;
    const uint16_t *ah = (const uint16_t *)a->storage->host + a->offset,
                   *bh = (const uint16_t *)b->storage->host + b->offset;
    if (N == 1 && a->strides[2] == 1) {
        mat = ah, rows = M, row_stride = a->strides[1], vec = bh, vec_stride = b->strides[1];
        out_stride = out->strides[1];
    } else if (M == 1 && b->strides[1] == 1) {
        mat = bh, rows = N, row_stride = b->strides[2], vec = ah, vec_stride = a->strides[2];
        out_stride = out->strides[2];
    } else {
        return WT_ERR_UNSUPPORTED;
    }
    if (K == 0 || rows < 2) return WT_ERR_UNSUPPORTED; /* nothing to gain */
    float *xf = malloc(sizeof(float) * (size_t)K);
    if (!xf) return wt_fail(WT_ERR_OUT_OF_MEMORY, "cpu: gemv cannot allocate %lld floats", (long long)K);
    for (int64_t j = 0; j < K; j++) xf[j] = half_to_float(vec[j * vec_stride]);
    uint16_t *y = (uint16_t *)out->storage->host + out->offset;
    const uint16_t *bv = bias ? (const uint16_t *)bias->storage->host + bias->offset : NULL;
    const int64_t bs = bias ? bias->strides[0] : 0;
#pragma omp parallel for num_threads(cpu_threads(ctx)) if (rows * K >= CPU_PARALLEL_MIN) schedule(static)
    for (int64_t r = 0; r < rows; r++) {
        float v = cpu_dot_f16(mat + r * row_stride, xf, K);
        if (bv) v += half_to_float(bv[(N == 1 ? 0 : r) * bs]);
        y[r * out_stride] = float_to_half(v);
    }
    free(xf);
    return WT_OK;
}
