/* WebGPU attention: one fused dispatch (wgsl/attention.wgsl).
 *
 * Tile shape, chosen per call: a workgroup of up to 64 threads holds BQ
 * rows (query x grouped q head) with TPQ threads each. Many rows
 * (prefill): BQ = 16, TPQ = 4, key tiles of 32. Few rows (decode, Sq = 1):
 * fewer rows per workgroup and more threads per row, e.g. one row of 64
 * threads with key tiles of 64, so a lone query still splits its keys and
 * output columns over a whole workgroup. The tiles are shrunk until they
 * fit the device's workgroup memory (16 KiB at least in WebGPU). */
#include "webgpu/wg.h"

#include <stdio.h>
#include <string.h>

#define ATTN_WG 64u

/* Same layout as attention.wgsl's Params. */
typedef struct attn_params {
    uint32_t q[5], k[5], v[5], m[5]; /* offset, then strides of b, h, s, d */
    uint32_t hq, hkv, sq, skv;
    uint32_t group, blocks, workgroups, neg_inf;
    float scale;
    uint32_t d, bk, pad0;
} attn_params;

typedef struct attn_plan {
    uint32_t bq, bk, tpq, ks;
} attn_plan;

static uint64_t tile_bytes(const attn_plan *t, uint64_t D)
{
    return 4u * ((uint64_t)t->bq * (D + 1) + (uint64_t)t->bk * t->ks + 2u * (uint64_t)t->bq * (t->bk + 1));
}

static bool plan_tiles(uint64_t rows, uint64_t D, uint64_t Dv, uint64_t limit, attn_plan *t)
{
    t->bq = 16;
    while (t->bq > 1 && t->bq / 2 >= rows) t->bq /= 2;
    t->tpq = ATTN_WG / t->bq;
    t->bk = t->tpq > 32 ? t->tpq : 32;
    t->ks = (uint32_t)((D > Dv ? D : Dv) + 1);
    while (tile_bytes(t, D) > limit) {
        if (t->bk > t->tpq)
            t->bk /= 2;
        else if (t->bq > 1)
            t->bq /= 2;
        else if (t->tpq > 1)
            t->tpq /= 2, t->bk = t->tpq;
        else
            return false;
    }
    return true;
}

/* Offset and four strides of a 4-D view as u32, or false. */
static bool pack_view(const wt_tensor *t, uint32_t *dst)
{
    if (t->offset < 0 || t->offset > UINT32_MAX || t->storage->bytes / 4 > UINT32_MAX) return false;
    dst[0] = (uint32_t)t->offset;
    for (int d = 0; d < 4; d++) {
        if (t->strides[d] < 0 || t->strides[d] > UINT32_MAX) return false;
        dst[1 + d] = t->shape[d] == 1 ? 0 : (uint32_t)t->strides[d];
    }
    return true;
}

wt_status wg_op_attention(wt_context *ctx, const wt_attention_args *a)
{
    const wt_tensor *q = a->q, *k = a->k, *v = a->v, *m = a->mask;
    const uint64_t B = (uint64_t)q->shape[0], Hq = (uint64_t)q->shape[1], Sq = (uint64_t)q->shape[2],
                   D = (uint64_t)q->shape[3], Hkv = (uint64_t)k->shape[1], Skv = (uint64_t)k->shape[2],
                   Dv = (uint64_t)v->shape[3];
    attn_params p;
    memset(&p, 0, sizeof p);
    if (!pack_view(q, p.q) || !pack_view(k, p.k) || !pack_view(v, p.v) || (m && !pack_view(m, p.m)) ||
        a->out->storage->bytes / 4 > UINT32_MAX || Sq * Hq > UINT32_MAX || Skv > INT32_MAX)
        return wt_fail(WT_ERR_UNSUPPORTED, "webgpu attention: operands too large for 32-bit indexing");
    if (q->dtype != WT_F32 || k->dtype != WT_F32 || v->dtype != WT_F32)
        return wt_fail(WT_ERR_UNSUPPORTED, "webgpu attention: q, k, v must be f32");
    const uint64_t group = Hq / Hkv, rows = group * Sq;
    attn_plan t;
    if (!plan_tiles(rows, D, Dv, wg_get_caps(ctx)->max_workgroup_storage, &t))
        return wt_fail(WT_ERR_UNSUPPORTED,
                       "webgpu attention: head dims D = %llu, Dv = %llu do not fit the device's %u bytes of workgroup memory",
                       (unsigned long long)D, (unsigned long long)Dv, wg_get_caps(ctx)->max_workgroup_storage);
    const uint64_t blocks = (rows + t.bq - 1) / t.bq, workgroups = B * Hkv * blocks;
    if (workgroups > UINT32_MAX)
        return wt_fail(WT_ERR_UNSUPPORTED, "webgpu attention: %llu workgroups exceed 32-bit indexing",
                       (unsigned long long)workgroups);
    p.hq = (uint32_t)Hq, p.hkv = (uint32_t)Hkv, p.sq = (uint32_t)Sq, p.skv = (uint32_t)Skv;
    p.group = (uint32_t)group, p.blocks = (uint32_t)blocks, p.workgroups = (uint32_t)workgroups;
    p.neg_inf = 0xff800000u;
    p.scale = a->scale;
    p.d = (uint32_t)D, p.bk = t.bk;

    const uint32_t dvt = (uint32_t)((Dv + t.tpq - 1) / t.tpq);
    const unsigned mask_kind = !m ? 0u : a->mask_is_bool ? 2u : 1u;
    char prelude[512];
    int n = snprintf(prelude, sizeof prelude,
                     "const D: u32 = %lluu;\nconst DV: u32 = %lluu;\nconst KS: u32 = %uu;\n"
                     "const QS: u32 = %lluu;\nconst PS: u32 = %uu;\n"
                     "const BQ: u32 = %uu;\nconst BK: u32 = %uu;\nconst TPQ: u32 = %uu;\n"
                     "const WG: u32 = %uu;\nconst KPT: u32 = %uu;\nconst DVT: u32 = %uu;\n"
                     "const DV_EXACT: bool = %s;\nconst MASK: u32 = %uu;\nconst CAUSAL: bool = %s;\n"
                     "alias MT = %s;\n",
                     (unsigned long long)D, (unsigned long long)Dv, t.ks, (unsigned long long)D + 1, t.bk + 1, t.bq, t.bk, t.tpq, t.bq * t.tpq,
                     t.bk / t.tpq, dvt, (uint64_t)dvt * t.tpq == Dv ? "true" : "false", mask_kind,
                     a->causal ? "true" : "false", mask_kind == 2 ? "u32" : "f32");
    if (n <= 0 || (size_t)n >= sizeof prelude)
        return wt_fail(WT_ERR_BACKEND, "webgpu attention: shader prelude does not fit");

    wg_launch l;
    memset(&l, 0, sizeof l);
    l.shader = "attention";
    l.prelude = prelude;
    l.params = &p;
    l.params_size = sizeof p;
    l.bindings[0] = (wg_binding){q->storage, false};
    l.bindings[1] = (wg_binding){k->storage, false};
    l.bindings[2] = (wg_binding){v->storage, false};
    l.bindings[3] = (wg_binding){m ? m->storage : q->storage, false};
    l.bindings[4] = (wg_binding){a->out->storage, true};
    l.nbindings = 5;
    l.workgroups = workgroups;
    return wg_dispatch(ctx, &l);
}
