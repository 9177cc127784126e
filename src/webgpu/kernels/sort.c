/* Row sort on the GPU (sort_*.wgsl): a bitonic network over (key,
 * position) pairs, each row padded to P = the next power of two.
 *   sort_keys     builds the pairs (keys ordered as wt_sort_key);
 *   sort_local    sorts tiles of SORT_TILE pairs in workgroup memory (rows
 *                 up to SORT_TILE are done in this one pass);
 *   sort_global   for longer rows, the steps of a stage with distance >=
 *                 SORT_TILE, two steps a dispatch (each thread owns four
 *                 pairs), each stage finished by a sort_local merge of
 *                 the smaller distances;
 *   sort_extract  the first k positions of each row.
 * Rows of P > TILE take log2(P / TILE) stages past the first local pass;
 * stage s makes ceil(s / 2) global passes and one local one: O(n log^2 n)
 * work. Positions break ties, so the order is
 * total: the sort is stable and the same on every device. */
#include "webgpu/wg.h"
#include "webgpu/wg_params.h"

#include <stdio.h>
#include <string.h>

#define SORT_WG 256u
/* 2048 pairs: 16 KiB, the workgroup memory every WebGPU device offers. */
#define SORT_TILE (8u * SORT_WG)

static uint64_t groups_for(uint64_t threads, uint32_t per_group) { return (threads + per_group - 1) / per_group; }

static wt_status dispatch_pairs(wt_context *ctx, const char *shader, const char *prelude, const step_params *p,
                                wt_storage *pairs, uint64_t workgroups)
{
    wg_launch l = {
        .shader = shader, .prelude = prelude, .params = p, .params_size = sizeof *p,
        .bindings = {{pairs, true}}, .nbindings = 1, .workgroups = workgroups,
    };
    return wg_dispatch(ctx, &l);
}

wt_status wg_op_argsort_rows(wt_context *ctx, const wt_tensor *x, bool descending, int64_t k, wt_tensor *out)
{
    wt_status st;
    if ((st = wg_mv_check_indexing("sort", x)) != WT_OK || (st = wg_mv_check_indexing("sort", out)) != WT_OK)
        return st;
    const int nd = x->ndim;
    const int64_t n = x->shape[nd - 1], rows = x->numel / n;
    uint32_t log2_p = 0;
    while (((int64_t)1 << log2_p) < n) log2_p++;
    const uint64_t P = (uint64_t)1 << log2_p, total = (uint64_t)rows * P;
    const uint64_t bytes = total * 8;
    if (total > UINT32_MAX || bytes > wg_get_caps(ctx)->max_storage_binding)
        return wt_fail(WT_ERR_UNSUPPORTED,
                       "webgpu sort: %lld rows of %lld (padded to %llu) need %llu bytes of pairs, beyond the "
                       "device's binding limit", (long long)rows, (long long)n, (unsigned long long)P,
                       (unsigned long long)bytes);
    unsigned kind = x->dtype == WT_F32 ? 0 : x->dtype == WT_F16 ? 1 : x->dtype == WT_I32 ? 2 : 3;
    wt_storage *pairs;
    if ((st = wg_scratch(ctx, (size_t)bytes, &pairs)) != WT_OK) return st;

    keys_params kp;
    memset(&kp, 0, sizeof kp);
    kp.total = (uint32_t)total;
    kp.n = (uint32_t)n;
    kp.log2_p = log2_p;
    kp.ndim = (uint32_t)(nd - 1);
    kp.x_offset = (uint32_t)x->offset;
    kp.inner = (uint32_t)x->strides[nd - 1];
    for (int d = 0; d < nd - 1; d++) {
        kp.shape[d] = (uint32_t)x->shape[d];
        kp.strides[d] = (uint32_t)x->strides[d];
    }
    char prelude[128];
    snprintf(prelude, sizeof prelude, "const KIND: u32 = %uu;\nconst DESC: bool = %s;\nconst WG: u32 = %uu;\n",
             kind, descending ? "true" : "false", SORT_WG);
    wg_launch l = {
        .shader = "sort_keys", .prelude = prelude, .params = &kp, .params_size = sizeof kp,
        .bindings = {{x->storage, false}, {pairs, true}}, .nbindings = 2,
        .workgroups = groups_for(total, SORT_WG),
    };
    st = wg_dispatch(ctx, &l);

    char local_prelude[96], wg_prelude[64];
    snprintf(local_prelude, sizeof local_prelude, "const TILE: u32 = %uu;\nconst WG: u32 = %uu;\n", SORT_TILE,
             SORT_WG);
    snprintf(wg_prelude, sizeof wg_prelude, "const WG: u32 = %uu;\n", SORT_WG);
    char global1_prelude[64], global2_prelude[64];
    snprintf(global1_prelude, sizeof global1_prelude, "const TWO: bool = false;\nconst WG: u32 = %uu;\n", SORT_WG);
    snprintf(global2_prelude, sizeof global2_prelude, "const TWO: bool = true;\nconst WG: u32 = %uu;\n", SORT_WG);
    step_params sp = {(uint32_t)total, (uint32_t)P, 0, 0};
    const uint64_t tiles = groups_for(total, SORT_TILE);
    if (st == WT_OK) st = dispatch_pairs(ctx, "sort_local", local_prelude, &sp, pairs, tiles);
    for (uint64_t kk = 2 * (uint64_t)SORT_TILE; st == WT_OK && kk <= P; kk <<= 1) {
        /* Two steps a pass while two are left above the tile, then one. */
        for (uint64_t j = kk / 2; st == WT_OK && j >= SORT_TILE;) {
            bool two = j >= 2 * (uint64_t)SORT_TILE;
            uint64_t threads = two ? total / 4 : total / 2;
            step_params gp = {(uint32_t)threads, (uint32_t)P, (uint32_t)kk, (uint32_t)j};
            st = dispatch_pairs(ctx, "sort_global", two ? global2_prelude : global1_prelude, &gp, pairs,
                                groups_for(threads, SORT_WG));
            j >>= two ? 2 : 1;
        }
        step_params mp = {(uint32_t)total, (uint32_t)P, (uint32_t)kk, 0};
        if (st == WT_OK) st = dispatch_pairs(ctx, "sort_local", local_prelude, &mp, pairs, tiles);
    }
    if (st == WT_OK) {
        step_params ep = {(uint32_t)out->numel, (uint32_t)k, log2_p, 0};
        wg_launch e = {
            .shader = "sort_extract", .prelude = wg_prelude, .params = &ep, .params_size = sizeof ep,
            .bindings = {{pairs, false}, {out->storage, true}}, .nbindings = 2,
            .workgroups = groups_for((uint64_t)out->numel, SORT_WG),
        };
        st = wg_dispatch(ctx, &e);
    }
    wg_scratch_release(ctx, pairs);
    return st;
}
