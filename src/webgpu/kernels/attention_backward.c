/* WebGPU backward of attention without a mask (core/node.h,
 * ATTENTION_BACKWARD), flash-attention's scheme with no [Sq, Skv] matrix
 * stored: wgsl/attention_backward_q.wgsl (a thread per query row: the
 * row's log-sum-exp L, D = dout . out and dq) then
 * wgsl/attention_backward_kv.wgsl (a thread per key row: dk, dv from L and
 * D). One thread per row keeps the kernels short; they are not tiled. */
#include "webgpu/wg.h"
#include "webgpu/wg_params.h"

#include <stdio.h>
#include <string.h>

#define ATTN_BW_WG 64u
/* The rows' private arrays are sized by the prelude: larger heads would
 * spill too much per thread; the rule composes them instead. */
#define ATTN_BW_MAX_D 256

wt_status wg_attention_backward(wt_context *ctx, const wt_tensor *q, const wt_tensor *k, const wt_tensor *v,
                                const wt_tensor *dout, bool causal, float scale, wt_tensor *dq, wt_tensor *dk,
                                wt_tensor *dv)
{
    const wt_tensor *all[7] = {q, k, v, dout, dq, dk, dv};
    const uint64_t limit = wg_get_caps(ctx)->max_storage_binding;
    for (int t = 0; t < 7; t++)
        if (all[t]->dtype != WT_F32 || all[t]->offset != 0 || all[t]->storage->bytes > limit ||
            (uint64_t)all[t]->numel > UINT32_MAX / 2)
            return wt_fail(WT_ERR_UNSUPPORTED, "webgpu attention backward: f32 tensors of one binding only");
    const uint64_t B = (uint64_t)q->shape[0], Hq = (uint64_t)q->shape[1], Sq = (uint64_t)q->shape[2],
                   D = (uint64_t)q->shape[3], Hkv = (uint64_t)k->shape[1], Skv = (uint64_t)k->shape[2],
                   Dv = (uint64_t)v->shape[3];
    if (D > ATTN_BW_MAX_D || Dv > ATTN_BW_MAX_D || D == 0 || Dv == 0)
        return wt_fail(WT_ERR_UNSUPPORTED, "webgpu attention backward: head dims of 1..%d only", ATTN_BW_MAX_D);
    const uint64_t rows = B * Hq * Sq, keys = B * Hkv * Skv;
    attn_bw_params p = {(uint32_t)Hq, (uint32_t)Hkv, (uint32_t)Sq, (uint32_t)Skv, (uint32_t)(Hq / Hkv),
                        (uint32_t)rows, causal ? 1u : 0u, scale, (uint32_t)D, (uint32_t)Dv, 0, 0};
    char prelude[128];
    snprintf(prelude, sizeof prelude, "const WG: u32 = %uu;\nconst D: u32 = %lluu;\nconst DV: u32 = %lluu;\n",
             ATTN_BW_WG, (unsigned long long)D, (unsigned long long)Dv);
    wt_storage *stats = NULL;
    wt_status st = wg_scratch(ctx, sizeof(float) * 2 * rows, &stats);
    if (st != WT_OK) return st;
    wg_launch l;
    memset(&l, 0, sizeof l);
    l.shader = "attention_backward_q";
    l.prelude = prelude;
    l.params = &p;
    l.params_size = sizeof p;
    l.bindings[0] = (wg_binding){q->storage, false};
    l.bindings[1] = (wg_binding){k->storage, false};
    l.bindings[2] = (wg_binding){v->storage, false};
    l.bindings[3] = (wg_binding){dout->storage, false};
    l.bindings[4] = (wg_binding){dq->storage, true};
    l.bindings[5] = (wg_binding){stats, true};
    l.nbindings = 6;
    l.workgroups = (rows + ATTN_BW_WG - 1) / ATTN_BW_WG;
    st = wg_dispatch(ctx, &l);
    if (st == WT_OK) {
        p.rows = (uint32_t)keys;
        l.shader = "attention_backward_kv";
        l.bindings[4] = (wg_binding){stats, false};
        l.bindings[5] = (wg_binding){dk->storage, true};
        l.bindings[6] = (wg_binding){dv->storage, true};
        l.nbindings = 7;
        l.workgroups = (keys + ATTN_BW_WG - 1) / ATTN_BW_WG;
        st = wg_dispatch(ctx, &l);
    }
    wg_scratch_release(ctx, stats);
    return st;
}
