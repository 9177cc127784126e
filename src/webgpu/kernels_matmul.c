/* WebGPU matrix multiplication: a [B, M, K] @ b [B, K, N] -> out [B, M, N].
 *
 * One register-tiled kernel (wgsl/matmul.wgsl) reads a and b through their
 * strides, so transposed and broadcast (batch stride 0) operands need no
 * copy; the shader variant picks, per operand, which axis its loads walk
 * fastest so that they stay coalesced. Each workgroup computes one output
 * tile of one batch entry; the (batch, tile) pairs are numbered linearly
 * and wg_dispatch folds them under the per-dimension workgroup limit.
 * Products with M == 1 or N == 1 go to a dot-product kernel instead
 * (wgsl/matmul_gemv.wgsl).
 */
#include "webgpu/wg.h"

#include <stdio.h>
#include <string.h>

#define MATMUL_TILE_N 64

/* Mirrors the shader's Params. */
typedef struct matmul_params {
    uint32_t batch, m, n, k;
    uint32_t a_offset, a_batch_stride, a_row_stride, a_col_stride;
    uint32_t b_offset, b_batch_stride, b_row_stride, b_col_stride;
    uint32_t out_offset, tiles_m, tiles_n, pad0;
} matmul_params;

/* Mirrors matmul_gemv.wgsl's Params. */
typedef struct gemv_params {
    uint32_t batch, outputs, k, out_offset;
    uint32_t u_offset, u_batch_stride, u_out_stride, u_k_stride;
    uint32_t v_offset, v_batch_stride, v_k_stride, groups_per_batch;
} gemv_params;

static uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

/* M == 1 or N == 1: every output is one dot product over k. */
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
    /* Threads along k when u's rows are contiguous in k (coalesced along
     * k), else along the outputs (coalesced when u steps by 1 there). */
    bool k_fast = p.u_k_stride == 1 && !(p.u_out_stride == 1 && p.outputs > 1);
    uint32_t outs = k_fast ? 8 : 32;
    p.groups_per_batch = (uint32_t)ceil_div(p.outputs, outs);

    char prelude[96];
    snprintf(prelude, sizeof prelude, "const OUTS: u32 = %uu;\nconst K_FAST: bool = %s;\n", outs,
             k_fast ? "true" : "false");
    wg_launch l;
    memset(&l, 0, sizeof l);
    l.shader = "matmul_gemv";
    l.prelude = prelude;
    l.params = &p;
    l.params_size = sizeof p;
    l.bindings[0] = (wg_binding){u->storage, false};
    l.bindings[1] = (wg_binding){v->storage, false};
    l.bindings[2] = (wg_binding){out->storage, true};
    l.nbindings = 3;
    l.workgroups = (uint64_t)B * p.groups_per_batch;
    return wg_dispatch(ctx, &l);
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
    if (a->dtype != WT_F32 || b->dtype != WT_F32 || out->dtype != WT_F32)
        return wt_fail(WT_ERR_UNSUPPORTED, "matmul: only f32 is supported on webgpu");
    if (a->ndim != 3 || b->ndim != 3 || out->ndim != 3)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "matmul: expects 3-d operands, got %d, %d, %d",
                       a->ndim, b->ndim, out->ndim);
    int64_t B = out->shape[0], M = out->shape[1], N = out->shape[2], K = a->shape[2];
    if (a->shape[0] != B || b->shape[0] != B || a->shape[1] != M || b->shape[1] != K ||
        b->shape[2] != N)
        return wt_fail(WT_ERR_SHAPE, "matmul: operand shapes do not fit [B, M, K] @ [B, K, N]");
    if (B == 0 || M == 0 || N == 0) return WT_OK;
    if (K == 0) return wg_op_fill(ctx, out, 0.0f);
    if (!fits_u32(a) || !fits_u32(b) || !fits_u32(out))
        return wt_fail(WT_ERR_UNSUPPORTED,
                       "matmul: operands of [%lld, %lld, %lld] @ [%lld, %lld, %lld] exceed "
                       "32-bit indexing on webgpu",
                       (long long)B, (long long)M, (long long)K, (long long)B, (long long)K,
                       (long long)N);

    if (M == 1 || N == 1) return matmul_gemv(ctx, a, b, out);

    /* Tall outputs take 128-row tiles (8 rows per thread: more reuse of
     * each staged value); short ones 64 rows (less work past the edge). */
    uint32_t rm = M >= 128 ? 8 : 4;
    uint64_t tiles_m = ceil_div((uint64_t)M, 16u * rm);
    uint64_t tiles_n = ceil_div((uint64_t)N, MATMUL_TILE_N);
    uint64_t work = (uint64_t)B * tiles_m * tiles_n;
    if (work >= (1ull << 32))
        return wt_fail(WT_ERR_UNSUPPORTED, "matmul: %llu output tiles are too many",
                       (unsigned long long)work);

    matmul_params p;
    memset(&p, 0, sizeof p);
    p.batch = (uint32_t)B, p.m = (uint32_t)M, p.n = (uint32_t)N, p.k = (uint32_t)K;
    p.a_offset = (uint32_t)a->offset;
    p.a_batch_stride = (uint32_t)a->strides[0];
    p.a_row_stride = (uint32_t)a->strides[1];
    p.a_col_stride = (uint32_t)a->strides[2];
    p.b_offset = (uint32_t)b->offset;
    p.b_batch_stride = (uint32_t)b->strides[0];
    p.b_row_stride = (uint32_t)b->strides[1];
    p.b_col_stride = (uint32_t)b->strides[2];
    p.out_offset = (uint32_t)out->offset;
    p.tiles_m = (uint32_t)tiles_m, p.tiles_n = (uint32_t)tiles_n;

    /* Walk k fastest in a unless a is stored column-major (unit m stride);
     * walk n fastest in b unless b is (unit k stride). */
    bool a_k_fast = !(a->strides[1] == 1 && a->strides[2] != 1);
    bool b_n_fast = !(b->strides[1] == 1 && b->strides[2] != 1);
    char prelude[128];
    snprintf(prelude, sizeof prelude,
             "const RM: u32 = %uu;\nconst A_K_FAST: bool = %s;\nconst B_N_FAST: bool = %s;\n", rm,
             a_k_fast ? "true" : "false", b_n_fast ? "true" : "false");

    wg_launch l;
    memset(&l, 0, sizeof l);
    l.shader = "matmul";
    l.prelude = prelude;
    l.params = &p;
    l.params_size = sizeof p;
    l.bindings[0] = (wg_binding){a->storage, false};
    l.bindings[1] = (wg_binding){b->storage, false};
    l.bindings[2] = (wg_binding){out->storage, true};
    l.nbindings = 3;
    l.workgroups = work;
    return wg_dispatch(ctx, &l);
}
