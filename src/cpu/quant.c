/* Quantised weights on the CPU (core/quant.h): dequantise, and the linear
 * layer with a quantised weight. For a few rows of x each row of W is
 * dotted with x straight from its blocks (by default with x rounded to
 * 8-bit blocks, an integer dot); otherwise a row of W is dequantised once
 * into a thread's buffer and then meets every row of x, so the blocks are
 * read once per call; rows of W run in parallel. */
#include "core/quant.h"
#include "cpu/cpu.h"
#include "cpu/gemv_simd.h"
#include "cpu/half.h"
#include "core/knobs.h"

#ifdef _OPENMP
#include <omp.h>
#endif
#include <stdlib.h>
#include <string.h>

static float half_at(const uint8_t *b)
{
    const uint32_t bits = cpu_half_to_f32_bits((uint16_t)(b[0] | b[1] << 8));
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

/* Q4_K's 6-bit scale and min of sub-block s (0..7) from its 12 bytes. */
static void q4k_scale_min(const uint8_t *S, int s, int *sc, int *m)
{
    if (s < 4) {
        *sc = S[s] & 63, *m = S[s + 4] & 63;
    } else {
        *sc = (S[s + 4] & 15) | (S[s - 4] >> 6) << 4;
        *m = (S[s + 4] >> 4) | (S[s] >> 6) << 4;
    }
}

/* One Q4_K super-block (144 bytes) -> 256 floats: d*sc and dmin*m are
 * exact in f32, d*sc * q too, so the one rounding is the subtraction's. */
CPU_MULTIVERSION
static void dequant_q4_k(const uint8_t *b, float *o)
{
    const float d = half_at(b), dmin = half_at(b + 2);
    const uint8_t *S = b + 4, *qs = b + 16;
    for (int c = 0; c < 4; c++) {
        int sc0, m0, sc1, m1;
        q4k_scale_min(S, 2 * c, &sc0, &m0);
        q4k_scale_min(S, 2 * c + 1, &sc1, &m1);
        const float d0 = d * (float)sc0, mn0 = dmin * (float)m0, d1 = d * (float)sc1, mn1 = dmin * (float)m1;
        const uint8_t *q = qs + 32 * c;
        float *oc = o + 64 * c;
        for (int l = 0; l < 32; l++) oc[l] = d0 * (float)(q[l] & 15) - mn0;
        for (int l = 0; l < 32; l++) oc[32 + l] = d1 * (float)(q[l] >> 4) - mn1;
    }
}

/* One Q6_K super-block (210 bytes) -> 256 floats, exact. */
CPU_MULTIVERSION
static void dequant_q6_k(const uint8_t *b, float *o)
{
    const uint8_t *ql = b, *qh = b + 128;
    const int8_t *sc = (const int8_t *)(b + 192);
    const float d = half_at(b + 208);
    for (int h = 0; h < 2; h++)
        for (int g = 0; g < 4; g++) {
            const uint8_t *lo = ql + 64 * h + 32 * (g & 1), *hi = qh + 32 * h;
            const int shift = g < 2 ? 0 : 4;
            float *og = o + 128 * h + 32 * g;
            for (int half = 0; half < 2; half++) {
                const float ds = d * (float)sc[8 * h + 2 * g + half];
                for (int l = 16 * half; l < 16 * half + 16; l++) {
                    const int q = (int)((lo[l] >> shift & 15) | (hi[l] >> 2 * g & 3) << 4) - 32;
                    og[l] = ds * (float)q;
                }
            }
        }
}

/* Row words (i32 storage, little-endian bytes) -> k floats (the values
 * the header states: exact for Q8_0, Q4_0 and Q6_K). */
CPU_MULTIVERSION
static void dequant_row(wt_quant_type type, const uint32_t *row, int64_t k, float *dst)
{
    const uint8_t *bytes = (const uint8_t *)row; /* the words' bytes in file order (little-endian host) */
    const int bb = wt_quant_block_bytes(type), be = wt_quant_block_elems(type);
    for (int64_t blk = 0; blk < k / be; blk++) {
        const uint8_t *b = bytes + blk * bb;
        float *o = dst + blk * be;
        if (type == WT_QUANT_Q4_K) {
            dequant_q4_k(b, o);
            continue;
        }
        if (type == WT_QUANT_Q6_K) {
            dequant_q6_k(b, o);
            continue;
        }
        const float d = half_at(b);
        if (type == WT_QUANT_Q8_0) {
            for (int j = 0; j < WT_QUANT_BLOCK; j++) o[j] = (float)(int8_t)b[2 + j] * d;
        } else {
            /* Low nibbles, then high: two unit-stride loops the
             * compiler vectorises. */
            for (int j = 0; j < WT_QUANT_BLOCK / 2; j++) o[j] = (float)((int)(b[2 + j] & 0x0f) - 8) * d;
            for (int j = 0; j < WT_QUANT_BLOCK / 2; j++) o[j + 16] = (float)((int)(b[2 + j] >> 4) - 8) * d;
        }
    }
}

static wt_status check_words(const char *what, const wt_tensor *w)
{
    if (w->dtype != WT_I32 || !wt_layout_is_contiguous(w->ndim, w->shape, w->strides))
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "cpu %s: the blocks must be a contiguous i32 tensor", what);
    return WT_OK;
}

static const uint32_t *words_of(const wt_tensor *w) { return (const uint32_t *)w->storage->host + w->offset; }

wt_status cpu_dequantize(wt_context *ctx, wt_quant_type type, int64_t k, const wt_tensor *w, wt_tensor *out)
{
    wt_status st = check_words("dequantize", w);
    if (st != WT_OK || (st = cpu_check_f32("dequantize", out)) != WT_OK) return st;
    const int64_t n = w->shape[0], words = w->shape[1];
    const uint32_t *src = words_of(w);
    float *dst = cpu_data(out);
#pragma omp parallel for num_threads(cpu_threads(ctx)) if (n * k >= CPU_PARALLEL_MIN)
    for (int64_t r = 0; r < n; r++) dequant_row(type, src + r * words, k, dst + r * k);
    return WT_OK;
}

/* The dot product of k floats (k a multiple of 8) in eight running sums:
 * independent chains that the wide vectors keep in flight. */
CPU_MULTIVERSION
static float dot8(const float *a, const float *b, int64_t k)
{
    float acc[8] = {0};
    for (int64_t j = 0; j < k; j += 8)
        for (int l = 0; l < 8; l++) acc[l] += a[j + l] * b[j + l];
    return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
}

/* Whether the decode product rounds x to 8-bit blocks (WT_CPU_QUANT_DOT;
 * anything but "f32" keeps the default). */
static bool x_rounds_to_int8(void)
{
    const char *v = wt_knob_text(WT_KNOB_CPU_QUANT_DOT);
    return !(v && strcmp(v, "f32") == 0);
}

/* The decode product through the integer dot (cpu/gemv_simd.h): the m
 * rows of x rounded to 8-bit blocks once, then every weight row dotted
 * with each. WT_ERR_UNSUPPORTED, nothing written, when x holds an inf or a
 * NaN. */
static wt_status linear_x8(int threads, wt_quant_type type, int64_t k, int64_t m, const float *xd, int64_t xs,
                           const uint32_t *src, int64_t words, int64_t n, const float *bd, int64_t bs, float *y)
{
    const int64_t nblocks = k / WT_QUANT_BLOCK;
    /* per row of x: k int8, then nblocks floats and nblocks int32 */
    const size_t row_bytes = (size_t)k + (size_t)nblocks * (sizeof(float) + sizeof(int32_t));
    uint8_t *mem = malloc(row_bytes * (size_t)m + 1);
    if (!mem) return wt_fail(WT_ERR_OUT_OF_MEMORY, "cpu linear_quant: cannot allocate x's 8-bit blocks (%lld bytes)",
                             (long long)(row_bytes * (size_t)m));
    cpu_x8 x8[4];
    for (int64_t i = 0; i < m; i++) {
        uint8_t *base = mem + (size_t)i * row_bytes;
        /* k is a multiple of 32: the floats and int32 after the bytes
         * stay 4-byte aligned */
        x8[i] = (cpu_x8){(int8_t *)base, (float *)(base + k), (int32_t *)(base + k) + nblocks};
        if (!cpu_x8_quantize(xd + i * xs, nblocks, x8[i])) {
            free(mem);
            return WT_ERR_UNSUPPORTED;
        }
    }
    const bool q8 = type == WT_QUANT_Q8_0;
#pragma omp parallel for num_threads(threads) if (n * k >= CPU_PARALLEL_MIN) schedule(static)
    for (int64_t r = 0; r < n; r++) {
        const uint8_t *row = (const uint8_t *)(src + r * words);
        const float b = bd ? bd[r * bs] : 0.0f;
        for (int64_t i = 0; i < m; i++)
            y[i * n + r] = (q8 ? cpu_dot_q8_0_x8(row, x8[i], nblocks) : cpu_dot_q4_0_x8(row, x8[i], nblocks)) + b;
    }
    free(mem);
    return WT_OK;
}

/* The same for Q4_K / Q6_K: the m rows of x rounded to 8 bits per
 * super-block of 256 (cpu_x8k), then every weight row dotted with each. */
static wt_status linear_x8k(int threads, wt_quant_type type, int64_t k, int64_t m, const float *xd, int64_t xs,
                            const uint32_t *src, int64_t words, int64_t n, const float *bd, int64_t bs, float *y)
{
    const int64_t nblocks = k / 256;
    /* per row of x: k int8, then nblocks floats and 16 * nblocks int16 */
    const size_t row_bytes = (size_t)k + (size_t)nblocks * (sizeof(float) + 16 * sizeof(int16_t));
    uint8_t *mem = malloc(row_bytes * (size_t)m + 1);
    if (!mem) return wt_fail(WT_ERR_OUT_OF_MEMORY, "cpu linear_quant: cannot allocate x's 8-bit blocks (%lld bytes)",
                             (long long)(row_bytes * (size_t)m));
    cpu_x8k x8[4];
    for (int64_t i = 0; i < m; i++) {
        uint8_t *base = mem + (size_t)i * row_bytes;
        /* k is a multiple of 256 and row_bytes of 4: the floats and the
         * int16 after the bytes stay aligned */
        x8[i] = (cpu_x8k){(int8_t *)base, (float *)(base + k), (int16_t *)((float *)(base + k) + nblocks)};
        if (!cpu_x8k_quantize(xd + i * xs, nblocks, x8[i])) {
            free(mem);
            return WT_ERR_UNSUPPORTED;
        }
    }
    const bool q4k = type == WT_QUANT_Q4_K;
#pragma omp parallel for num_threads(threads) if (n * k >= CPU_PARALLEL_MIN) schedule(static)
    for (int64_t r = 0; r < n; r++) {
        const uint8_t *row = (const uint8_t *)(src + r * words);
        const float b = bd ? bd[r * bs] : 0.0f;
        for (int64_t i = 0; i < m; i++)
            y[i * n + r] = (q4k ? cpu_dot_q4_k_x8(row, x8[i], nblocks) : cpu_dot_q6_k_x8(row, x8[i], nblocks)) + b;
    }
    free(mem);
    return WT_OK;
}

/* y [M, N] = x [M, K] @ W^T + bias. */
wt_status cpu_linear_quant(wt_context *ctx, wt_quant_type type, int64_t k, const wt_tensor *x, const wt_tensor *w,
                           const wt_tensor *bias, wt_tensor *out)
{
    wt_status st = check_words("linear_quant", w);
    if (st != WT_OK || (st = cpu_check_f32("linear_quant", x)) != WT_OK ||
        (bias && (st = cpu_check_f32("linear_quant", bias)) != WT_OK) ||
        (st = cpu_check_f32("linear_quant", out)) != WT_OK)
        return st;
    const int64_t m = x->shape[0], n = w->shape[0], words = w->shape[1];
    const int64_t xs = x->strides[0], bs = bias ? bias->strides[0] : 0;
    const uint32_t *src = words_of(w);
    const float *xd = cpu_data(x), *bd = bias ? cpu_data(bias) : NULL;
    float *y = cpu_data(out);
    const int threads = cpu_threads(ctx);
    const bool kquant = type == WT_QUANT_Q4_K || type == WT_QUANT_Q6_K;
    if (m <= 4 && x_rounds_to_int8()) {
        st = kquant ? linear_x8k(threads, type, k, m, xd, xs, src, words, n, bd, bs, y)
                    : linear_x8(threads, type, k, m, xd, xs, src, words, n, bd, bs, y);
        if (st != WT_ERR_UNSUPPORTED) return st; /* else x is not finite or too small: the f32 path below */
    }
    if (m <= 4 && (!kquant || cpu_dot_kquant_wide())) {
        /* Decode: each row's blocks dotted with x as they are read, in
         * registers (cpu/gemv_simd.h); a few rows of x reuse the row from
         * the cache. */
        const int64_t nblocks = k / wt_quant_block_elems(type);
#pragma omp parallel for num_threads(threads) if (n * k >= CPU_PARALLEL_MIN) schedule(static)
        for (int64_t r = 0; r < n; r++) {
            const uint8_t *row = (const uint8_t *)(src + r * words);
            const float b = bd ? bd[r * bs] : 0.0f;
            for (int64_t i = 0; i < m; i++) {
                const float *xi = xd + i * xs;
                const float dot = type == WT_QUANT_Q8_0   ? cpu_dot_q8_0(row, xi, nblocks)
                                  : type == WT_QUANT_Q4_0 ? cpu_dot_q4_0(row, xi, nblocks)
                                  : type == WT_QUANT_Q4_K ? cpu_dot_q4_k(row, xi, nblocks)
                                                          : cpu_dot_q6_k(row, xi, nblocks);
                y[i * n + r] = dot + b;
            }
        }
        return WT_OK;
    }
    float *bufs = malloc(sizeof(float) * (size_t)k * (size_t)threads);
    if (!bufs) return wt_fail(WT_ERR_OUT_OF_MEMORY, "cpu linear_quant: cannot allocate %d row buffers", threads);
#pragma omp parallel num_threads(threads) if (n * k * (m < 4 ? m : 4) >= CPU_PARALLEL_MIN)
    {
        int t = 0;
#ifdef _OPENMP
        t = omp_get_thread_num();
#endif
        float *row = bufs + (size_t)t * (size_t)k;
#pragma omp for schedule(static)
        for (int64_t r = 0; r < n; r++) {
            dequant_row(type, src + r * words, k, row);
            const float b = bd ? bd[r * bs] : 0.0f;
            for (int64_t i = 0; i < m; i++) y[i * n + r] = dot8(xd + i * xs, row, k) + b;
        }
    }
    free(bufs);
    return WT_OK;
}
