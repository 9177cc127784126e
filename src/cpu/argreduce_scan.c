/* CPU argmax/argmin and cumulative sums/products. */
#include "cpu/cpu.h"

#include <math.h>

/* Index of the first extremum of n elements, step apart; the first NaN
 * ends the search (NumPy). */
static int64_t arg_f32(const float *x, int64_t n, int64_t step, bool is_min, float *best, int64_t base,
                       int64_t *at, bool *nan)
{
    for (int64_t i = 0; i < n; i++) {
        const float v = x[i * step];
        if (v != v) {
            *nan = true;
            *at = base + i;
            return *at;
        }
        if (is_min ? v < *best : v > *best) *best = v, *at = base + i;
    }
    return *at;
}

static void arg_i32(const int32_t *x, int64_t n, int64_t step, bool is_min, int64_t *best, int64_t base,
                    int64_t *at)
{
    for (int64_t i = 0; i < n; i++) {
        const int64_t v = x[i * step];
        if (is_min ? v < *best : v > *best) *best = v, *at = base + i;
    }
}

wt_status cpu_argreduce(wt_context *ctx, bool is_min, const wt_tensor *x, int nreduced, wt_tensor *out)
{
    if (out->dtype != WT_I32 || wt_dtype_storage_size(x->dtype) != 4 || x->dtype == WT_F16)
        return wt_fail(WT_ERR_UNSUPPORTED, "cpu: argmax/argmin of dtype %d", (int)x->dtype);
    cpu_layout kept, red;
    cpu_reduce_layouts(x, out, nreduced, &kept, &red);
    const int64_t P = cpu_layout_numel(&kept), Q = cpu_layout_numel(&red);
    if (P == 0 || Q == 0) return WT_OK;
    const bool is_float = x->dtype == WT_F32;
    const char *base = (const char *)x->storage->host + (size_t)x->offset * 4;
    int32_t *o = (int32_t *)out->storage->host + out->offset;
    const int last = red.ndim - 1;
    const int64_t inner = red.shape[last], step = red.strides[last];
#pragma omp parallel for num_threads(cpu_threads(ctx)) if (P > 1 && P * Q > CPU_PARALLEL_MIN) schedule(static)
    for (int64_t p = 0; p < P; p++) {
        const int64_t off0 = cpu_kept_offset(&kept, p);
        float bf = is_min ? INFINITY : -INFINITY;
        int64_t bi = is_min ? INT64_MAX : INT64_MIN, at = 0;
        bool nan = false;
        /* The first element decides the start, so that all -inf (or all
         * INT_MIN) still gives index 0. */
        int64_t idx[WT_MAX_DIMS] = {0}, off = off0;
        for (int64_t q = 0; q < Q && !nan; q += inner) {
            if (is_float) {
                const float *row = (const float *)base + off;
                if (q == 0) bf = row[0];
                arg_f32(row, inner, step, is_min, &bf, q, &at, &nan);
            } else {
                const int32_t *row = (const int32_t *)base + off;
                if (q == 0) bi = row[0];
                arg_i32(row, inner, step, is_min, &bi, q, &at);
            }
            for (int d = last - 1; d >= 0; d--) {
                off += red.strides[d];
                if (++idx[d] < red.shape[d]) break;
                off -= red.shape[d] * red.strides[d];
                idx[d] = 0;
            }
        }
        o[p] = (int32_t)at;
    }
    return WT_OK;
}

wt_status cpu_scan(wt_context *ctx, wt_scan_op op, const wt_tensor *x, int64_t n, int64_t inner,
                   wt_tensor *out)
{
    wt_status st = cpu_check_f32("scan", x);
    if (st != WT_OK || (st = cpu_check_f32("scan", out)) != WT_OK) return st;
    if (n == 0 || inner == 0 || x->numel == 0) return WT_OK;
    const int64_t outer = x->numel / (n * inner);
    const float *xd = cpu_data(x);
    float *o = cpu_data(out);
    /* Each (outer, inner) column runs serially with a double running value. */
    const int64_t cols = outer * inner;
#pragma omp parallel for num_threads(cpu_threads(ctx)) if (x->numel > CPU_PARALLEL_MIN && cols > 1) schedule(static)
    for (int64_t c = 0; c < cols; c++) {
        const int64_t start = (c / inner) * n * inner + c % inner;
        const float *xb = xd + start;
        float *ob = o + start;
        double acc = op == WT_SCAN_SUM ? 0.0 : 1.0;
        for (int64_t k = 0; k < n; k++) {
            acc = op == WT_SCAN_SUM ? acc + xb[k * inner] : acc * xb[k * inner];
            ob[k * inner] = (float)acc;
        }
    }
    return WT_OK;
}
