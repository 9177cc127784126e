/* WebGPU softmax / log-softmax along a middle axis (wgsl/softmax_axis.wgsl):
 * x [O, C, I] read in place through its strides. A workgroup of 256
 * threads covers TI columns (up to 64, enough for coalesced rows) with the
 * rest of its threads splitting C, so both wide (I large) and tall (C
 * large, I small) shapes keep a workgroup busy; when that still gives too
 * few workgroups (a few long rows), C is cut into chunks over workgroups
 * and two dispatches run (chunk statistics, then merge and write). Also
 * serves wg_op_rowwise's softmax of a few long rows (I = 1). */
#include "webgpu/wg.h"
#include "webgpu/wg_params.h"

#include <stdio.h>
#include <string.h>

/* Workgroups worth having before C is cut into chunks, and the least a
 * thread should walk of one chunk. */
#define TARGET_WORKGROUPS 512u
#define TARGET_WORKGROUPS_CPU 8u
#define MIN_PER_THREAD 32u

static wt_status launch(wt_context *ctx, wt_rowwise_op op, const wt_tensor *x, wt_tensor *out,
                        wt_storage *stats, const softmax_axis_params *p, uint32_t ti, uint32_t tc,
                        unsigned phase)
{
    const char *stat_access =
        phase ? "@group(0) @binding(3) var<storage, read_write> stats: array<f32>;\n"
                "fn get_stat(i: u32) -> f32 { return stats[i]; }\n"
                "fn put_stat(i: u32, v: f32) { stats[i] = v; }\n"
              : "fn get_stat(i: u32) -> f32 { return 0.0; }\n"
                "fn put_stat(i: u32, v: f32) { }\n";
    char prelude[512];
    snprintf(prelude, sizeof prelude,
             "const OP: u32 = %uu;\nconst TI: u32 = %uu;\nconst TC: u32 = %uu;\nconst WG: u32 = %uu;\n"
             "const PHASE: u32 = %uu;\n%s",
             (unsigned)op, ti, tc, ti * tc, phase, stat_access);
    wg_launch l;
    memset(&l, 0, sizeof l);
    l.shader = "softmax_axis";
    l.prelude = prelude;
    l.params = p;
    l.params_size = sizeof *p;
    l.bindings[0] = (wg_binding){x->storage, false};
    l.bindings[1] = (wg_binding){out->storage, true};
    l.bindings[2] = (wg_binding){stats, true};
    l.nbindings = stats ? 3 : 2;
    l.workgroups = (uint64_t)p->col_groups * p->outer * p->chunks;
    return wg_dispatch(ctx, &l);
}

wt_status wg_op_softmax_axis(wt_context *ctx, wt_rowwise_op op, const wt_tensor *x, wt_tensor *out)
{
    if (op != WT_ROW_SOFTMAX && op != WT_ROW_LOG_SOFTMAX)
        return wt_fail(WT_ERR_UNSUPPORTED, "webgpu softmax_axis: unknown op %d", (int)op);
    if (x->dtype != WT_F32)
        return wt_fail(WT_ERR_UNSUPPORTED, "webgpu softmax_axis: x must be f32");
    const uint64_t O = (uint64_t)x->shape[0], C = (uint64_t)x->shape[1], I = (uint64_t)x->shape[2];
    bool fits = x->offset >= 0 && x->offset <= UINT32_MAX && x->storage->bytes / 4 <= UINT32_MAX &&
                out->storage->bytes / 4 <= UINT32_MAX;
    for (int d = 0; d < 3; d++) fits = fits && x->strides[d] >= 0 && x->strides[d] <= UINT32_MAX;
    if (!fits) return wt_fail(WT_ERR_UNSUPPORTED, "webgpu softmax_axis: x is too large for 32-bit indexing");
    if (O == 0 || C == 0 || I == 0) return WT_OK;

    const wg_caps *caps = wg_get_caps(ctx);
    const uint64_t target = caps->cpu_adapter ? TARGET_WORKGROUPS_CPU : TARGET_WORKGROUPS;
    uint32_t wg = 256;
    while (wg > 32 && (wg > caps->max_invocations || wg * 8 > caps->max_workgroup_storage)) wg /= 2;
    /* Columns per workgroup: up to 64 (whole 256-byte row segments), fewer
     * (down to 16) while that leaves the GPU short of workgroups. */
    uint32_t ti = 1;
    while (ti < 64 && ti < I && ti < wg) ti *= 2;
    while (ti > 16 && O * ((I + ti - 1) / ti) < target) ti /= 2;
    const uint32_t tc = wg / ti;
    const uint64_t groups = (I + ti - 1) / ti;
    /* Still short of workgroups with a long C: cut C into chunks. */
    uint64_t chunks = 1;
    if (O * groups < target) {
        chunks = (target + O * groups - 1) / (O * groups);
        const uint64_t most = C / ((uint64_t)tc * MIN_PER_THREAD);
        if (chunks > most) chunks = most ? most : 1;
    }
    softmax_axis_params p;
    memset(&p, 0, sizeof p);
    p.outer = (uint32_t)O, p.cols = (uint32_t)C, p.inner = (uint32_t)I;
    p.x_offset = (uint32_t)x->offset;
    p.so = O == 1 ? 0 : (uint32_t)x->strides[0];
    p.sc = (uint32_t)x->strides[1], p.si = I == 1 ? 0 : (uint32_t)x->strides[2];
    p.col_groups = (uint32_t)groups;
    p.neg_inf = 0xff800000u;
    p.chunk_len = (uint32_t)((C + chunks - 1) / chunks);
    p.chunks = (uint32_t)((C + p.chunk_len - 1) / p.chunk_len);
    if (groups * O * p.chunks > UINT32_MAX || O * p.chunks * I * 2 > UINT32_MAX)
        return wt_fail(WT_ERR_UNSUPPORTED, "webgpu softmax_axis: too many workgroups");
    if (p.chunks == 1) return launch(ctx, op, x, out, NULL, &p, ti, tc, 0);

    wt_storage *stats = NULL;
    wt_status st = wg_scratch(ctx, sizeof(float) * 2 * O * p.chunks * I, &stats);
    if (st != WT_OK) return st;
    if ((st = launch(ctx, op, x, out, stats, &p, ti, tc, 1)) == WT_OK)
        st = launch(ctx, op, x, out, stats, &p, ti, tc, 2);
    wg_scratch_release(ctx, stats);
    return st;
}
