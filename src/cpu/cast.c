/* CPU cast: f32 <-> f16 conversion (and same-dtype copies) from any strided
 * view into a contiguous output. The output is walked row by row of the
 * merged layout; each row is one tight loop over the input's last axis. */
#include "cpu/cpu.h"
#include "cpu/half.h"
#include "cpu/half_simd.h"

#include <string.h>

/* Converts n elements, the input stepping by step elements. */
static void cast_run(wt_dtype from, wt_dtype to, const void *src, int64_t step, void *dst,
                     int64_t n) {
    if (step == 1 && cpu_halves_convert(from, to, src, dst, n)) /* F16C: memory speed */
        return;
    if (from == WT_F16 && to == WT_F32) {
        const uint16_t *s = src;
        uint32_t *d = dst;
        for (int64_t i = 0; i < n; i++)
            d[i] = cpu_half_to_f32_bits(s[i * step]);
    } else if (from == WT_F32 && to == WT_F16) {
        const uint32_t *s = src;
        uint16_t *d = dst;
        for (int64_t i = 0; i < n; i++)
            d[i] = cpu_f32_bits_to_half(s[i * step]);
    } else if (from == WT_F16) {
        const uint16_t *s = src;
        uint16_t *d = dst;
        for (int64_t i = 0; i < n; i++)
            d[i] = s[i * step];
    } else {
        const uint32_t *s = src;
        uint32_t *d = dst;
        for (int64_t i = 0; i < n; i++)
            d[i] = s[i * step];
    }
}

static bool castable(wt_dtype d) { return d == WT_F32 || d == WT_F16; }

wt_status cpu_cast(wt_context *ctx, const wt_tensor *x, wt_tensor *out) {
    if (!castable(x->dtype) || !castable(out->dtype))
        return wt_fail(WT_ERR_UNSUPPORTED, "cpu cast: dtypes %d -> %d are not supported",
                       (int)x->dtype, (int)out->dtype);
    if (out->numel == 0)
        return WT_OK;
    int ndim = out->ndim;
    int64_t shape[WT_MAX_DIMS], strides[2][WT_MAX_DIMS];
    memcpy(shape, out->shape, sizeof shape);
    wt_contiguous_strides(out->ndim, out->shape, strides[0]);
    memcpy(strides[1], x->strides, sizeof strides[1]);
    wt_coalesce(&ndim, shape, 2, strides);

    const size_t in_size = wt_dtype_size(x->dtype), out_size = wt_dtype_size(out->dtype);
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
        cast_run(from, to, in_base + off * (int64_t)in_size, xs[last],
                 out_base + r * inner * (int64_t)out_size, inner);
    }
    return WT_OK;
}
