/* f16 <-> f32 runs through F16C (vcvtph2ps / vcvtps2ph, eight at a time).
 * The scalar routines of half.h take a few nanoseconds an element; these
 * run at memory speed, which is what lets f16 ops that go through f32
 * keep up with f32 ones. The hardware quiets signalling NaNs, the scalar
 * routines keep their bits: a block of eight holding such a NaN (f16 ->
 * f32) or any NaN (f32 -> f16) takes the scalar routine, so both paths
 * give the same bits. */
#include "cpu/half_simd.h"
#include "cpu/half.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#include <immintrin.h>
#include <stdatomic.h>

__attribute__((target("avx,f16c"))) static void to_f32(const uint16_t *s, uint32_t *d, int64_t n)
{
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m128i h = _mm_loadu_si128((const __m128i *)(s + i));
        __m128i snan = _mm_andnot_si128(
            _mm_cmpeq_epi16(_mm_and_si128(h, _mm_set1_epi16(0x01ff)), _mm_setzero_si128()),
            _mm_cmpeq_epi16(_mm_and_si128(h, _mm_set1_epi16(0x7e00)), _mm_set1_epi16(0x7c00)));
        if (_mm_movemask_epi8(snan)) {
            for (int j = 0; j < 8; j++) d[i + j] = cpu_half_to_f32_bits(s[i + j]);
            continue;
        }
        _mm256_storeu_ps((float *)(d + i), _mm256_cvtph_ps(h));
    }
    for (; i < n; i++)
        d[i] = cpu_half_to_f32_bits(s[i]);
}

__attribute__((target("avx,f16c"))) static void to_f16(const uint32_t *s, uint16_t *d, int64_t n)
{
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 x = _mm256_loadu_ps((const float *)(s + i));
        if (_mm256_movemask_ps(_mm256_cmp_ps(x, x, _CMP_UNORD_Q))) {
            for (int j = 0; j < 8; j++) d[i + j] = cpu_f32_bits_to_half(s[i + j]);
            continue;
        }
        _mm_storeu_si128((__m128i *)(d + i),
                         _mm256_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    }
    for (; i < n; i++)
        d[i] = cpu_f32_bits_to_half(s[i]);
}

/* AVX and F16C from CPUID, and the OS saving the YMM registers (XGETBV):
 * read directly, since not every compiler's __builtin_cpu_supports knows
 * "f16c" (clang 14 does not). */
static bool cpu_reports_f16c(void)
{
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return false;
    const unsigned osxsave = 1u << 27, avx = 1u << 28, f16c = 1u << 29;
    if ((c & (osxsave | avx | f16c)) != (osxsave | avx | f16c)) return false;
    unsigned lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    (void)hi;
    return (lo & 6u) == 6u;
}

bool cpu_has_f16c(void)
{
    /* Every thread computes the same answer, but two threads may ask at
     * once: an atomic keeps that defined (a plain int is a data race). */
    static atomic_int known = -1;
    int k = atomic_load_explicit(&known, memory_order_relaxed);
    if (k < 0) {
        k = cpu_reports_f16c();
        atomic_store_explicit(&known, k, memory_order_relaxed);
    }
    return k > 0;
}

bool cpu_halves_convert(wt_dtype from, wt_dtype to, const void *src, void *dst, int64_t n)
{
    if (!cpu_has_f16c()) return false;
    if (from == WT_F16 && to == WT_F32) {
        to_f32(src, dst, n);
        return true;
    }
    if (from == WT_F32 && to == WT_F16) {
        to_f16(src, dst, n);
        return true;
    }
    return false;
}
#else
bool cpu_has_f16c(void) { return false; }

bool cpu_halves_convert(wt_dtype from, wt_dtype to, const void *src, void *dst, int64_t n)
{
    (void)from, (void)to, (void)src, (void)dst, (void)n;
    return false;
}
#endif
