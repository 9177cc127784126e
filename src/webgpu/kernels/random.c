/* WebGPU random numbers (random.wgsl): the Philox stream of
 * core/philox.h, one thread per block of four elements. The normal
 * quantile table is uploaded with each wt_randn call (24 KiB). */
#include "core/philox.h"
#include "webgpu/wg.h"
#include "webgpu/wg_params.h"
#include "webgpu/wg_runtime.h"

#include <stdio.h>

#define RANDOM_WG 64u

wt_status wg_op_random(wt_context *ctx, const wt_random_args *r, const wt_tensor *x, wt_tensor *out)
{
    return wg_op_random_part(ctx, r, x, 0, out);
}

wt_status wg_op_random_part(wt_context *ctx, const wt_random_args *r, const wt_tensor *x,
                            uint64_t first_block, wt_tensor *out)
{
    if (out->dtype != WT_F32 || (x && x->dtype != WT_F32))
        return wt_fail(WT_ERR_UNSUPPORTED, "random: only f32 on webgpu");
    if (out->numel == 0) return WT_OK;
    if ((uint64_t)out->numel + 4 * first_block >= (1ull << 32) - 4)
        return wt_fail(WT_ERR_UNSUPPORTED, "random: %lld elements exceed 32-bit indexing on webgpu",
                       (long long)out->numel);
    wt_status st = WT_OK;
    wt_tensor *table = NULL;
    if (r->kind == WT_RANDOM_NORMAL) {
        const int64_t len = WT_NORMAL_TABLE_LEN;
        if ((st = wt_tensor_alloc(ctx, WT_F32, 1, &len, &table)) != WT_OK) return st;
        wg_ctx(ctx)->constant_upload = true;
        st = ctx->ops->upload(ctx, table->storage, 0, wt_normal_table(), (size_t)len * 4);
        wg_ctx(ctx)->constant_upload = false;
        if (st != WT_OK) {
            wt_tensor_release(table);
            return st;
        }
    }
    random_params p = {(uint32_t)out->numel, (uint32_t)r->seed, (uint32_t)(r->seed >> 32), 32u - r->bits,
                       1.0f / (float)(1u << r->bits), r->p, r->scale, x ? (uint32_t)x->offset : 0,
                       (uint32_t)out->offset, (uint32_t)first_block, 0, 0};
    char prelude[96];
    snprintf(prelude, sizeof prelude, "const KIND: u32 = %uu;\nconst WG: u32 = %uu;\n", (unsigned)r->kind,
             RANDOM_WG);
    wt_storage *any = table ? table->storage : x ? x->storage : out->storage;
    wg_launch l = {.shader = "random", .prelude = prelude, .libraries = {"philox"}, .params = &p,
                   .params_size = sizeof p,
                   .bindings = {{out->storage, true},
                                {table ? table->storage : any, false},
                                {x ? x->storage : any, false}},
                   .nbindings = 3,
                   .workgroups = ((uint64_t)out->numel + 4 * RANDOM_WG - 1) / (4 * RANDOM_WG)};
    /* Unused read bindings must not be out itself (a written buffer). */
    if (!table && !x) {
        wt_tensor *dummy = NULL;
        const int64_t one = 1;
        if ((st = wt_tensor_alloc(ctx, WT_F32, 1, &one, &dummy)) != WT_OK) return st;
        l.bindings[1].storage = l.bindings[2].storage = dummy->storage;
        st = wg_dispatch(ctx, &l);
        wt_tensor_release(dummy);
        return st;
    }
    st = wg_dispatch(ctx, &l);
    wt_tensor_release(table);
    return st;
}
