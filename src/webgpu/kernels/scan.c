/* WebGPU cumulative sums and products (scan.wgsl): a row that fits one
 * block of WG * ITEMS elements is scanned by one workgroup; a longer row
 * first has each block's total computed (one workgroup per block), those
 * totals scanned (the same procedure, recursively), and then each block
 * scanned again with the total of the blocks before it as its carry. Work
 * is parallel across blocks at every level; no thread walks a row. */
#include "webgpu/wg.h"
#include "webgpu/wg_params.h"

#include <stdio.h>

/* Elements per thread (a block is WG of them): WT_SCAN_ITEMS, 1..32, a
 * power of two, for measuring; an invalid value means the default, 8
 * (on an H200 8 beat 4 by 8%; 16 and 32 lose to bank conflicts of the
 * threads' serial scans in workgroup memory). */
static uint32_t scan_items(void)
{
    uint64_t v = wt_knob_number(WT_KNOB_SCAN_ITEMS, 8);
    return wg_is_pow2(v) && v <= 32 ? (uint32_t)v : 8u;
}

static uint32_t scan_wg(const wt_context *ctx) { return wg_get_caps(ctx)->cpu_adapter ? 64u : 256u; }

static wt_status scan_launch(wt_context *ctx, wt_scan_op op, bool integer, wt_storage *x, uint64_t x_offset,
                             wt_storage *out, uint64_t out_offset, wt_storage *carry, bool totals,
                             uint64_t rows, uint64_t n, uint64_t inner, uint64_t blocks)
{
    scan_params p = {(uint32_t)rows, (uint32_t)n, (uint32_t)inner, (uint32_t)blocks,
                     (uint32_t)x_offset, (uint32_t)out_offset, 0, 0};
    char prelude[192];
    snprintf(prelude, sizeof prelude,
             "alias T = %s;\nconst OP: u32 = %uu;\nconst WG: u32 = %uu;\nconst ITEMS: u32 = %uu;\n"
             "const CARRY: bool = %s;\nconst TOTALS: bool = %s;\n",
             integer ? "i32" : "f32", op == WT_SCAN_PROD ? 1u : 0u, scan_wg(ctx), scan_items(), carry ? "true" : "false",
             totals ? "true" : "false");
    wg_launch l = {.shader = "scan", .prelude = prelude, .params = &p, .params_size = sizeof p,
                   .bindings = {{x, false}, {out, true}, {carry ? carry : x, false}},
                   .nbindings = 3, .workgroups = rows * blocks};
    return wg_dispatch(ctx, &l);
}

/* Inclusive scan of rows [rows, n] (layout as in scan.wgsl) from x into out. */
static wt_status scan_rows(wt_context *ctx, wt_scan_op op, bool integer, wt_storage *x, uint64_t x_offset,
                           wt_storage *out, uint64_t out_offset, uint64_t rows, uint64_t n, uint64_t inner)
{
    const uint64_t B = (uint64_t)scan_wg(ctx) * scan_items();
    const uint64_t blocks = (n + B - 1) / B;
    if (blocks == 1)
        return scan_launch(ctx, op, integer, x, x_offset, out, out_offset, NULL, false, rows, n, inner, 1);
    wt_storage *sums = NULL, *prefix = NULL;
    wt_status st;
    if ((st = wg_scratch(ctx, rows * blocks * 4, &sums)) != WT_OK) return st;
    if ((st = wg_scratch(ctx, rows * blocks * 4, &prefix)) == WT_OK &&
        (st = scan_launch(ctx, op, integer, x, x_offset, sums, 0, NULL, true, rows, n, inner, blocks)) == WT_OK &&
        (st = scan_rows(ctx, op, integer, sums, 0, prefix, 0, rows, blocks, 1)) == WT_OK)
        st = scan_launch(ctx, op, integer, x, x_offset, out, out_offset, prefix, false, rows, n, inner, blocks);
    wg_scratch_release(ctx, sums);
    if (prefix) wg_scratch_release(ctx, prefix);
    return st;
}

wt_status wg_op_scan(wt_context *ctx, wt_scan_op op, const wt_tensor *x, int64_t n, int64_t inner,
                     wt_tensor *out)
{
    if (x->dtype != out->dtype || (x->dtype != WT_F32 && x->dtype != WT_I32))
        return wt_fail(WT_ERR_UNSUPPORTED, "scan: f32 and i32 only on webgpu");
    if (x->numel == 0) return WT_OK;
    if (x->storage->bytes / 4 >= (1ull << 31) || out->storage->bytes / 4 >= (1ull << 31))
        return wt_fail(WT_ERR_UNSUPPORTED, "scan: %lld elements exceed 32-bit indexing on webgpu",
                       (long long)x->numel);
    const uint64_t rows = (uint64_t)(x->numel / n);
    return scan_rows(ctx, op, x->dtype == WT_I32, x->storage, (uint64_t)x->offset, out->storage,
                     (uint64_t)out->offset, rows,
                     (uint64_t)n, (uint64_t)inner);
}
