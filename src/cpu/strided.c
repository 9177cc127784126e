/* Walking strided views: the gather used by every kernel's general path. */
#include "cpu/cpu.h"

#include <string.h>

/* One run of a gather: n elements from src stepping by step (0: one
 * element repeated) into dst, contiguous. */
typedef void (*gather_run_fn)(const void *src, int64_t step, void *dst, int64_t n);

/* Walks elements [start, start + len) of l in runs along its last axis;
 * in_size / out_size: bytes of an element of base and of dst. Inlined
 * into each caller with its run function. */
static inline void walk_runs(const char *base, size_t in_size, const cpu_layout *l, int64_t start,
                             int64_t len, char *dst, size_t out_size, gather_run_fn run_fn) {
    if (len <= 0)
        return;
    int last = l->ndim - 1;
    int64_t idx[WT_MAX_DIMS];
    int64_t off = 0, rem = start;
    for (int d = last; d >= 0; d--) {
        idx[d] = rem % l->shape[d];
        rem /= l->shape[d];
        off += idx[d] * l->strides[d];
    }
    const int64_t inner = l->shape[last], step = l->strides[last];
    while (len > 0) {
        int64_t run = inner - idx[last];
        if (run > len)
            run = len;
        run_fn(base + off * (int64_t)in_size, step, dst, run);
        dst += run * (int64_t)out_size;
        len -= run;
        if (len == 0)
            break;
        /* The innermost axis is exhausted (len > 0 means the run reached
         * its end): back to the row's start, then carry outwards. */
        off -= idx[last] * step;
        idx[last] = 0;
        for (int d = last - 1; d >= 0; d--) {
            off += l->strides[d];
            if (++idx[d] < l->shape[d])
                break;
            off -= l->shape[d] * l->strides[d];
            idx[d] = 0;
        }
    }
}

static void copy_run_f32(const void *src_, int64_t step, void *dst_, int64_t n) {
    const float *restrict src = src_;
    float *restrict dst = dst_;
    if (step == 1) {
        memcpy(dst, src, (size_t)n * sizeof *dst);
    } else if (step == 0) {
        const float v = *src;
        for (int64_t i = 0; i < n; i++)
            dst[i] = v;
    } else {
        for (int64_t i = 0; i < n; i++)
            dst[i] = src[i * step];
    }
}

static void widen_run_f16(const void *src, int64_t step, void *dst_, int64_t n) {
    if (step != 0) {
        cpu_cast_run(WT_F16, WT_F32, src, step, dst_, n);
        return;
    }
    float *restrict dst = dst_;
    float v;
    cpu_cast_run(WT_F16, WT_F32, src, 1, &v, 1);
    for (int64_t i = 0; i < n; i++)
        dst[i] = v;
}

void cpu_gather(const float *base, const cpu_layout *l, int64_t start, int64_t len,
                float *restrict dst) {
    walk_runs((const char *)base, sizeof *base, l, start, len, (char *)dst, sizeof *dst, copy_run_f32);
}

void cpu_gather_f16(const uint16_t *base, const cpu_layout *l, int64_t start, int64_t len, float *dst) {
    walk_runs((const char *)base, sizeof *base, l, start, len, (char *)dst, sizeof *dst, widen_run_f16);
}

wt_status cpu_check_f32(const char *what, const wt_tensor *t) {
    if (t->dtype != WT_F32)
        return wt_fail(WT_ERR_UNSUPPORTED, "cpu: %s supports f32 only (got %s)", what,
                       wt_dtype_name(t->dtype));
    return WT_OK;
}
