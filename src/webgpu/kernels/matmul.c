/* WebGPU matrix-vector products: a [B, M, K] @ b [B, K, N] -> out [B, M, N]
 * with M == 1 or N == 1 (the rest: kernels/gemm.c). Every output is one
 * dot product: with the matrix's rows contiguous along k (A @ x) a row reduction of
 * the matrix times the vector (wg_reduce_dot_rows); with the outputs
 * contiguous (x @ B) wgsl/matmul_gemv_cols.wgsl, threads across the
 * outputs; any other layout wgsl/matmul_gemv.wgsl, scalar loads.
 */
#include "webgpu/wg.h"
#include "webgpu/wg_params.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }


/* Tuning of the matrix-vector kernels, read from the environment (once per
 * process) so that variants can be compared without a rebuild:
 *   WT_GEMV_ROW_WG       A @ x: threads per row (a workgroup), 32..1024,
 *                        power of two (32)
 *   WT_GEMV_WG           x @ B: threads per workgroup, 32..1024, power of
 *                        two (256; 32 on a CPU adapter)
 *   WT_GEMV_COL_THREADS  x @ B: threads across the outputs (4 each) in a
 *                        workgroup, a power of two <= WT_GEMV_WG (32)
 *   WT_GEMV_GROUPS       x @ B: workgroups worth having; k is split across
 *                        workgroups (and a second pass adds up) below;
 *                        0: k is never split (1024)
 *   WT_GEMV_UNROLL       x @ B: rows in flight per lane: 1, 2, 4, 8 (4)
 *   WT_GEMV_FAST         0: the generic scalar kernel for every shape (1) */
typedef struct gemv_tuning {
    uint32_t wg, row_wg, col_threads, groups, unroll;
    bool fast;
} gemv_tuning;

static gemv_tuning read_gemv_tuning(const wt_context *ctx)
{
    const wg_caps *caps = wg_get_caps(ctx);
    gemv_tuning t;
    uint64_t fallback = caps->cpu_adapter ? 32 : 256;
    uint64_t wg = wt_knob_number(WT_KNOB_GEMV_WG, fallback);
    if (!wg_is_pow2(wg) || wg < 32 || wg > 1024) wg = fallback;
    /* The x @ B kernel keeps a vec4 per thread in workgroup memory. */
    while (wg > 32 && (wg > caps->max_invocations || wg * 16 > caps->max_workgroup_storage))
        wg >>= 1;
    t.wg = (uint32_t)wg;
    /* A @ x: one subgroup's worth of threads per row by default. On the
     * H200, 4096x4096 took 22.8 us at 32, 25.8 at 128 and 26.8 at 256 in
     * one run (PyTorch 23.8 us). */
    uint64_t rw = wt_knob_number(WT_KNOB_GEMV_ROW_WG, 32);
    t.row_wg = (uint32_t)(wg_is_pow2(rw) && rw >= 32 && rw <= caps->max_invocations ? rw : 32);
    uint64_t ct = wt_knob_number(WT_KNOB_GEMV_COL_THREADS, 32);
    t.col_threads = (uint32_t)(wg_is_pow2(ct) && ct <= wg ? ct : (wg < 32 ? wg : 32));
    uint64_t g = wt_knob_count(WT_KNOB_GEMV_GROUPS, 1024);
    t.groups = g > (1u << 20) ? (1u << 20) : (uint32_t)g;
    uint64_t u = wt_knob_number(WT_KNOB_GEMV_UNROLL, 4);
    t.unroll = (u == 1 || u == 2 || u == 4 || u == 8) ? (uint32_t)u : 4;
    const char *f = wt_knob_text(WT_KNOB_GEMV_FAST);
    t.fast = !(f && strcmp(f, "0") == 0);
    return t;
}

/* The generic kernel: any strides, scalar loads. */
static wt_status gemv_generic(wt_context *ctx, const wt_tensor *u, const wt_tensor *v,
                              gemv_params *p, wt_tensor *out)
{
    /* Threads along k when u's rows are contiguous in k (coalesced along
     * k), else along the outputs (coalesced when u steps by 1 there). */
    bool k_fast = p->u_k_stride == 1 && !(p->u_out_stride == 1 && p->outputs > 1);
    uint32_t outs = k_fast ? 8 : 32;
    p->groups_per_batch = (uint32_t)ceil_div(p->outputs, outs);

    char prelude[96];
    snprintf(prelude, sizeof prelude, "const OUTS: u32 = %uu;\nconst K_FAST: bool = %s;\n", outs,
             k_fast ? "true" : "false");
    wg_launch l;
    memset(&l, 0, sizeof l);
    l.shader = "matmul_gemv";
    l.prelude = prelude;
    l.params = p;
    l.params_size = sizeof *p;
    l.bindings[0] = (wg_binding){u->storage, false};
    l.bindings[1] = (wg_binding){v->storage, false};
    l.bindings[2] = (wg_binding){out->storage, true};
    l.nbindings = 3;
    l.workgroups = (uint64_t)p->batch * p->groups_per_batch;
    return wg_dispatch(ctx, &l);
}

/* Outputs contiguous in u (x @ B): threads across the outputs, vec4 loads
 * along u's rows; k split across workgroups when the columns are few. */
static wt_status gemv_cols(wt_context *ctx, const wt_tensor *u, const wt_tensor *v,
                           const gemv_params *g, const gemv_tuning *t, wt_tensor *out)
{
    gemv_cols_params p;
    memset(&p, 0, sizeof p);
    p.batch = g->batch, p.n = g->outputs, p.k = g->k, p.out_offset = g->out_offset;
    p.u_offset = g->u_offset, p.u_batch_stride = g->u_batch_stride, p.u_k_stride = g->u_k_stride;
    p.v_offset = g->v_offset, p.v_batch_stride = g->v_batch_stride, p.v_k_stride = g->v_k_stride;
    uint32_t ct = t->col_threads, kl = t->wg / ct;
    uint64_t col_groups = ceil_div(p.n / 4, ct);
    uint64_t groups = (uint64_t)p.batch * col_groups;
    uint64_t splits = 1;
    if (groups < t->groups) {
        /* Each lane keeps at least 4 unrolled steps of its own. */
        uint64_t most = ceil_div(p.k, (uint64_t)kl * t->unroll * 4);
        splits = ceil_div(t->groups, groups);
        if (splits > most) splits = most;
    }
    uint64_t k_chunk = ceil_div(p.k, splits);
    splits = ceil_div(p.k, k_chunk);
    if (groups * splits >= (1ull << 32) || (uint64_t)p.batch * p.n * splits >= (1ull << 31))
        return wt_fail(WT_ERR_UNSUPPORTED, "matmul: %llu partial products are too many",
                       (unsigned long long)(groups * splits));
    p.col_groups = (uint32_t)col_groups, p.k_splits = (uint32_t)splits;
    p.k_chunk = (uint32_t)k_chunk;

    wt_storage *partials = NULL;
    wt_status st;
    if (splits > 1 &&
        (st = wg_scratch(ctx, (size_t)p.batch * p.n * splits * sizeof(float), &partials)) != WT_OK)
        return st;

    char prelude[128];
    wg_launch l;
    memset(&l, 0, sizeof l);
    l.shader = "matmul_gemv_cols";
    l.prelude = prelude;
    l.params = &p;
    l.params_size = sizeof p;
    l.nbindings = 3;
    snprintf(prelude, sizeof prelude,
             "const WG: u32 = %uu;\nconst CT: u32 = %uu;\nconst PASS: u32 = 1u;\n"
             "const UNROLL: u32 = %uu;\n", t->wg, ct, t->unroll);
    l.bindings[0] = (wg_binding){u->storage, false};
    l.bindings[1] = (wg_binding){v->storage, false};
    l.bindings[2] = (wg_binding){partials ? partials : out->storage, true};
    l.workgroups = groups * splits;
    st = wg_dispatch(ctx, &l);
    if (st == WT_OK && partials) {
        snprintf(prelude, sizeof prelude,
                 "const WG: u32 = %uu;\nconst CT: u32 = %uu;\nconst PASS: u32 = 2u;\n"
                 "const UNROLL: u32 = %uu;\n", t->wg, ct, t->unroll);
        l.bindings[0] = (wg_binding){partials, false};
        l.bindings[1] = (wg_binding){partials, false};
        l.bindings[2] = (wg_binding){out->storage, true};
        l.workgroups = ceil_div((uint64_t)p.batch * p.n, t->wg);
        st = wg_dispatch(ctx, &l);
    }
    if (partials) wg_scratch_release(ctx, partials);
    return st;
}

/* M == 1 or N == 1: every output is one dot product over k, of a row
 * (or column) of the matrix u with the vector v. */
static wt_status matmul_gemv(wt_context *ctx, const wt_tensor *a, const wt_tensor *b,
                             wt_tensor *out)
{
    int64_t B = out->shape[0], M = out->shape[1], N = out->shape[2], K = a->shape[2];
    const wt_tensor *u, *v;
    gemv_params p;
    memset(&p, 0, sizeof p);
    if (M == 1) { /* out[n] = sum_k a[0, k] b[k, n] */
        u = b, v = a;
        p.outputs = (uint32_t)N;
        p.u_out_stride = (uint32_t)b->strides[2], p.u_k_stride = (uint32_t)b->strides[1];
        p.v_k_stride = (uint32_t)a->strides[2];
    } else { /* N == 1: out[m] = sum_k a[m, k] b[k, 0] */
        u = a, v = b;
        p.outputs = (uint32_t)M;
        p.u_out_stride = (uint32_t)a->strides[1], p.u_k_stride = (uint32_t)a->strides[2];
        p.v_k_stride = (uint32_t)b->strides[1];
    }
    p.batch = (uint32_t)B, p.k = (uint32_t)K, p.out_offset = (uint32_t)out->offset;
    p.u_offset = (uint32_t)u->offset, p.u_batch_stride = (uint32_t)u->strides[0];
    p.v_offset = (uint32_t)v->offset, p.v_batch_stride = (uint32_t)v->strides[0];

    gemv_tuning t = read_gemv_tuning(ctx);
    if (t.fast && p.u_k_stride == 1 && p.v_k_stride == 1) {
        /* u's rows contiguous along k (A @ x): a row reduction of u * v. */
        wg_dot_rows d = {
            .u = u->storage, .v = v->storage,
            .u_offset = p.u_offset, .u_batch_stride = p.u_batch_stride,
            .u_row_stride = p.outputs == 1 ? 0 : p.u_out_stride, /* any, for one row */
            .v_offset = p.v_offset, .v_batch_stride = p.v_batch_stride,
            .rows = (uint64_t)B * p.outputs, .rows_per_batch = p.outputs, .len = p.k,
            .workgroup_size = t.row_wg,
        };
        if (wg_dot_rows_fits(&d)) return wg_reduce_dot_rows(ctx, &d, out);
    }
    if (t.fast && p.u_out_stride == 1 && p.outputs % 4 == 0 &&
        (p.u_offset | p.u_batch_stride | p.u_k_stride) % 4 == 0)
        return gemv_cols(ctx, u, v, &p, &t, out);
    return gemv_generic(ctx, u, v, &p, out);
}

/* The shaders index with u32: every element of every storage they bind
 * must be reachable below 2^31, and every extent and stride too. */
static bool fits_u32(const wt_tensor *t)
{
    if (t->storage->bytes / sizeof(float) >= (1ull << 31)) return false;
    for (int i = 0; i < t->ndim; i++)
        if (t->shape[i] >= (1ll << 31) || t->strides[i] < 0 || t->strides[i] >= (1ll << 31))
            return false;
    return t->offset >= 0 && t->offset < (1ll << 31);
}

wt_status wg_op_matmul(wt_context *ctx, const wt_tensor *a, const wt_tensor *b, wt_tensor *out)
{
    if (a->dtype == WT_F32 && b->dtype == WT_F32 && out->dtype == WT_F32 && a->ndim == 3 &&
        b->ndim == 3 && out->ndim == 3 && (out->shape[1] == 1 || out->shape[2] == 1) &&
        out->numel > 0 && a->shape[2] > 0 && fits_u32(a) && fits_u32(b) && fits_u32(out))
        return matmul_gemv(ctx, a, b, out);
    return wg_op_matmul_fused(ctx, a, b, NULL, WT_MATMUL_ACT_NONE, out);
}
