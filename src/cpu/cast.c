/* CPU cast: conversions between f32, f16, i32 and bool (and same-dtype
 * copies) from any strided view into a contiguous output. The output is walked row by row of the
 * merged layout; each row is one tight loop over the input's last axis. */
#include "cpu/cpu.h"
#include "cpu/half.h"
#include "cpu/half_simd.h"
#include "cpu/vmath.h"

#include <stdint.h>
#include <string.h>

/* Element conversions by the rules of wt_cast (webtensor.h). Floats are
 * handled as their bits where the value must not depend on the
 * floating-point environment. */
/* Truncation toward zero; NaN -> 0, beyond the range saturates. */
static inline int32_t f32_to_i32(uint32_t b) {
    if ((b & 0x7fffffffu) > 0x7f800000u)
        return 0;
    float f = vm_float(b);
    if (f >= 2147483648.0f)
        return INT32_MAX;
    if (f <= -2147483648.0f)
        return INT32_MIN;
    return (int32_t)f;
}

static inline uint32_t i32_to_f32_bits(int32_t i) { return vm_bits((float)i); }

void cpu_cast_run(wt_dtype from, wt_dtype to, const void *src, int64_t step, void *dst,
                     int64_t n) {
#define CAST_LOOP(TS, TD, EXPR)                                                                    \
    do {                                                                                           \
        const TS *s = src;                                                                         \
        TD *d = dst;                                                                               \
        for (int64_t i = 0; i < n; i++) {                                                          \
            const TS v = s[i * step];                                                              \
            d[i] = (EXPR);                                                                         \
        }                                                                                          \
    } while (0)
    if (step == 1 && cpu_halves_convert(from, to, src, dst, n)) /* F16C: memory speed */
        return;
    /* bool is a 4-byte word 0/1; i32 data are read as int32_t. */
    switch (from * 4 + to) {
    case WT_F32 * 4 + WT_F32: CAST_LOOP(uint32_t, uint32_t, v); break;
    case WT_F32 * 4 + WT_F16: CAST_LOOP(uint32_t, uint16_t, cpu_f32_bits_to_half(v)); break;
    case WT_F32 * 4 + WT_I32: CAST_LOOP(uint32_t, int32_t, f32_to_i32(v)); break;
    case WT_F32 * 4 + WT_BOOL: CAST_LOOP(uint32_t, uint32_t, (v & 0x7fffffffu) != 0); break;
    case WT_F16 * 4 + WT_F32: CAST_LOOP(uint16_t, uint32_t, cpu_half_to_f32_bits(v)); break;
    case WT_F16 * 4 + WT_F16: CAST_LOOP(uint16_t, uint16_t, v); break;
    case WT_F16 * 4 + WT_I32: CAST_LOOP(uint16_t, int32_t, f32_to_i32(cpu_half_to_f32_bits(v))); break;
    case WT_F16 * 4 + WT_BOOL: CAST_LOOP(uint16_t, uint32_t, (v & 0x7fffu) != 0); break;
    /* An i32 is exact in f32 up to 2^24 and every i32 of f16 range is, so
     * i32 -> f16 rounds once. */
    case WT_I32 * 4 + WT_F32: CAST_LOOP(int32_t, uint32_t, i32_to_f32_bits(v)); break;
    case WT_I32 * 4 + WT_F16: CAST_LOOP(int32_t, uint16_t, cpu_f32_bits_to_half(i32_to_f32_bits(v))); break;
    case WT_I32 * 4 + WT_I32: CAST_LOOP(int32_t, int32_t, v); break;
    case WT_I32 * 4 + WT_BOOL: CAST_LOOP(int32_t, uint32_t, v != 0); break;
    case WT_BOOL * 4 + WT_F32: CAST_LOOP(uint32_t, uint32_t, v ? 0x3f800000u : 0u); break;
    case WT_BOOL * 4 + WT_F16: CAST_LOOP(uint32_t, uint16_t, (uint16_t)(v ? 0x3c00u : 0u)); break;
    case WT_BOOL * 4 + WT_I32: CAST_LOOP(uint32_t, int32_t, v != 0); break;
    case WT_BOOL * 4 + WT_BOOL: CAST_LOOP(uint32_t, uint32_t, v != 0); break;
    default: break; /* rejected by cpu_cast */
    }
#undef CAST_LOOP
}

static bool castable(wt_dtype d) { return d == WT_F32 || d == WT_F16 || d == WT_I32 || d == WT_BOOL; }

wt_status cpu_cast(wt_context *ctx, const wt_tensor *x, wt_tensor *out) {
    if (!castable(x->dtype) || !castable(out->dtype))
        return wt_fail(WT_ERR_UNSUPPORTED, "cpu cast: %s -> %s is not supported",
                       wt_dtype_name(x->dtype), wt_dtype_name(out->dtype));
    if (out->numel == 0)
        return WT_OK;
    int ndim;
    int64_t shape[WT_MAX_DIMS], strides[2][WT_MAX_DIMS];
    wt_coalesce_pair(out, NULL, x->strides, &ndim, shape, strides);

    const size_t in_size = wt_dtype_storage_size(x->dtype), out_size = wt_dtype_storage_size(out->dtype);
    const char *in_base = (const char *)x->storage->host + (size_t)x->offset * in_size;
    char *out_base = (char *)out->storage->host + (size_t)out->offset * out_size;
    const int last = ndim - 1;
    const int64_t inner = shape[last], rows = out->numel / inner;
    const wt_dtype from = x->dtype, to = out->dtype;
    const int64_t *xs = strides[1];
#pragma omp parallel for num_threads(cpu_threads(ctx)) if (out->numel >= CPU_PARALLEL_MIN)
    for (int64_t r = 0; r < rows; r++) {
        /* The input offset of row r: its index over the outer axes. */
        int64_t rem = r, off = 0;
        for (int d = last - 1; d >= 0; d--) {
            off += (rem % shape[d]) * xs[d];
            rem /= shape[d];
        }
        cpu_cast_run(from, to, in_base + off * (int64_t)in_size, xs[last],
                 out_base + r * inner * (int64_t)out_size, inner);
    }
    return WT_OK;
}
