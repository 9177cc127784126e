/* Walking strided views: the gather used by every kernel's general path. */
#include "cpu/cpu.h"

#include <string.h>

void cpu_gather(const float *base, const cpu_layout *l, int64_t start, int64_t len,
                float *restrict dst) {
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
        const float *restrict src = base + off;
        if (step == 1) {
            memcpy(dst, src, (size_t)run * sizeof *dst);
        } else if (step == 0) {
            const float v = *src;
            for (int64_t i = 0; i < run; i++)
                dst[i] = v;
        } else {
            for (int64_t i = 0; i < run; i++)
                dst[i] = src[i * step];
        }
        dst += run;
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

wt_status cpu_check_f32(const char *what, const wt_tensor *t) {
    if (t->dtype != WT_F32)
        return wt_fail(WT_ERR_UNSUPPORTED, "cpu: %s supports f32 only (got %s)", what,
                       wt_dtype_name(t->dtype));
    return WT_OK;
}
