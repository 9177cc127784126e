/* Rotary position embedding on the CPU. The cos/sin of every (position,
 * frequency) pair are computed once per call, in double (sin/cos of the
 * exact angle, whatever the position), and shared by every head and batch
 * entry. */
#include "cpu/cpu.h"

#include <math.h>
#include <stdlib.h>

wt_status cpu_rope(wt_context *ctx, const wt_tensor *x, const wt_tensor *position, double theta, int64_t offset,
                  wt_tensor *out)
{
    if (position) { /* the step's position, read where the kernel runs */
        const int64_t p = ((const int32_t *)position->storage->host)[position->offset];
        offset += p > 0 ? p : 0;
    }
    const int64_t A = x->shape[0], S = x->shape[1], C = x->shape[2], D = x->shape[3], H = D / 2;
    const int64_t sa = x->strides[0], ss = x->strides[1], sc = x->strides[2], sd = x->strides[3];
    size_t bytes;
    if (!wt_mul_size((size_t)S, (size_t)H, &bytes) || !wt_mul_size(bytes, 2 * sizeof(float), &bytes))
        return wt_fail(WT_ERR_OUT_OF_MEMORY, "cpu: rope: table size overflows");
    float *tab = malloc(bytes ? bytes : 1);
    if (!tab) return wt_fail(WT_ERR_OUT_OF_MEMORY, "cpu: rope: cannot allocate %zu bytes", bytes);
    const int threads = A * S * C * D >= CPU_PARALLEL_MIN ? cpu_threads(ctx) : 1;
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int64_t s = 0; s < S; s++) {
        const double pos = (double)(offset + s);
        for (int64_t i = 0; i < H; i++) {
            const double a = pos * pow(theta, -2.0 * (double)i / (double)D);
            tab[(s * H + i) * 2] = (float)cos(a);
            tab[(s * H + i) * 2 + 1] = (float)sin(a);
        }
    }
    const float *xp = cpu_data(x);
    float *o = cpu_data(out);
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int64_t r = 0; r < A * S * C; r++) {
        const int64_t c = r % C, s = (r / C) % S, a = r / (C * S);
        const float *xr = xp + a * sa + s * ss + c * sc;
        const float *t = tab + s * H * 2;
        float *orow = o + r * D;
        for (int64_t i = 0; i < H; i++) {
            const float x1 = xr[i * sd], x2 = xr[(i + H) * sd], cs = t[2 * i], sn = t[2 * i + 1];
            orow[i] = x1 * cs - x2 * sn;
            orow[i + H] = x2 * cs + x1 * sn;
        }
    }
    free(tab);
    return WT_OK;
}
