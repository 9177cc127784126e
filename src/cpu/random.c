/* CPU random numbers: the Philox stream of core/philox.h. */
#include "core/philox.h"
#include "cpu/cpu.h"

wt_status cpu_random(wt_context *ctx, const wt_random_args *r, const wt_tensor *x, wt_tensor *out)
{
    wt_status st = cpu_check_f32("random", out);
    if (st != WT_OK || (x && (st = cpu_check_f32("dropout", x)) != WT_OK)) return st;
    const int64_t n = out->numel, blocks = (n + 3) / 4;
    const uint32_t key[2] = {(uint32_t)r->seed, (uint32_t)(r->seed >> 32)};
    const int32_t *table = r->kind == WT_RANDOM_NORMAL ? wt_normal_table() : NULL;
    const float *xd = x ? cpu_data(x) : NULL;
    float *o = cpu_data(out);
    const float unit = 1.0f / (float)(1u << r->bits);
#pragma omp parallel for num_threads(cpu_threads(ctx)) if (n > CPU_PARALLEL_MIN) schedule(static)
    for (int64_t b = 0; b < blocks; b++) {
        const uint32_t ctr[4] = {(uint32_t)b, (uint32_t)((uint64_t)b >> 32), 0, 0};
        uint32_t w[4];
        wt_philox4x32_10(ctr, key, w);
        for (int64_t k = 0; k < 4 && b * 4 + k < n; k++) {
            const int64_t i = b * 4 + k;
            switch (r->kind) {
            case WT_RANDOM_UNIFORM:
                o[i] = (float)(w[k] >> (32 - r->bits)) * unit;
                break;
            case WT_RANDOM_NORMAL:
                o[i] = wt_normal_from_word(w[k], table);
                break;
            case WT_RANDOM_DROPOUT: {
                const float u = (float)(w[k] >> 8) * (1.0f / 16777216.0f);
                o[i] = u < r->p ? 0.0f : xd[i] * r->scale;
                break;
            }
            }
        }
    }
    return WT_OK;
}
