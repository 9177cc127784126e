/* WebGPU matrix products with M, N > 1: a [B, M, K] @ b [B, K, N] (+ bias
 * [N], activation) -> out [B, M, N], through one register-tiled kernel
 * (wgsl/gemm.wgsl) of several tile configurations.
 *
 * Operands are read through their strides, so a transposed operand (the
 * weight of a linear layer, a @ w^T) or a broadcast batch (stride 0) needs
 * no copy; each operand's loads walk its unit-stride axis and are 16-byte
 * loads where that axis allows it (unit stride, extent and starts
 * multiples of 4). f16 operands are read as halves and accumulated in f32.
 * When the output tiles are too few to fill the GPU and K is long, k is
 * split across workgroups and a second pass (wgsl/gemm_splitk.wgsl) adds
 * the partial sums and applies the epilogue.
 *
 * Tile configurations, as BM x BN x BK / TM x TN (workgroup tile, k slab,
 * per-thread block): chosen per adapter and shape (gemm_choose), or forced
 * with WT_GEMM_TILE (e.g. "64x64x16/4x4") and WT_GEMM_SPLITK (1 = never)
 * for measurements; a configuration the device cannot run falls back to the
 * small one, which every adapter runs (64 threads, 4 KiB of workgroup
 * memory). */
#include "webgpu/wg.h"

#include <stdio.h>
#include <string.h>

typedef struct gemm_config {
    uint32_t bm, bn, bk, tm, tn;
} gemm_config;

/* The small configuration comes first: the fallback. */
static const gemm_config gemm_configs[] = {
    {32, 32, 8, 4, 4},     /* every adapter; CPU adapters (small workgroups) */
    {64, 64, 16, 4, 4},    /* 256 threads: mid-size outputs */
    {128, 64, 16, 8, 4},   /* 256 threads */
    {128, 128, 8, 8, 8},   /* 256 threads, 64 outputs each: large outputs */
    {128, 128, 16, 8, 8},
};
#define GEMM_NCONFIGS ((int)(sizeof gemm_configs / sizeof gemm_configs[0]))

/* Mirrors gemm.wgsl's Params. */
typedef struct gemm_params {
    uint32_t batch, m, n, k;
    uint32_t a_offset, a_batch_stride, a_row_stride, a_col_stride;
    uint32_t b_offset, b_batch_stride, b_row_stride, b_col_stride;
    uint32_t out_offset, tiles_m, tiles_n, k_chunk;
    uint32_t splits, bias_offset, pad0, pad1;
} gemm_params;

/* Mirrors gemm_splitk.wgsl's Params. */
typedef struct splitk_params {
    uint32_t count, n, splits, out_offset;
    uint32_t bias_offset, pad0, pad1, pad2;
} splitk_params;

static uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

static uint32_t config_threads(const gemm_config *c) { return (c->bm / c->tm) * (c->bn / c->tn); }

static uint32_t config_bytes(const gemm_config *c) { return 2u * c->bk * (c->bm + c->bn) * 4u; }

static bool config_fits(const wg_caps *caps, const gemm_config *c)
{
    return config_threads(c) <= caps->max_invocations && config_bytes(c) <= caps->max_workgroup_storage;
}

static int forced_config = -1; /* wg_gemm_force (tests) */
static int forced_splits = 0;

void wg_gemm_force(int config, int splits)
{
    forced_config = config < GEMM_NCONFIGS ? config : -1;
    forced_splits = splits;
}

int wg_gemm_config_count(void) { return GEMM_NCONFIGS; }

/* WT_GEMM_TILE as a configuration index, or -1. */
static int env_config(void)
{
    const char *s = wg_env_string("WT_GEMM_TILE");
    unsigned bm, bn, bk, tm, tn;
    if (!s || sscanf(s, "%ux%ux%u/%ux%u", &bm, &bn, &bk, &tm, &tn) != 5)
        return -1;
    for (int i = 0; i < GEMM_NCONFIGS; i++) {
        const gemm_config *c = &gemm_configs[i];
        if (c->bm == bm && c->bn == bn && c->bk == bk && c->tm == tm && c->tn == tn)
            return i;
    }
    return -1;
}

/* Workgroups worth having in flight on a discrete GPU: a few per
 * multiprocessor of a large one (WebGPU does not say how many it has). */
#define GEMM_FILL 256u

typedef struct gemm_plan {
    const gemm_config *cfg;
    uint64_t tiles_m, tiles_n;
    uint32_t splits, k_chunk;
} gemm_plan;

static void plan_with(const gemm_config *c, uint64_t B, uint64_t M, uint64_t N, uint64_t K,
                      gemm_plan *pl)
{
    pl->cfg = c;
    pl->tiles_m = ceil_div(M, c->bm);
    pl->tiles_n = ceil_div(N, c->bn);
    pl->splits = 1;
    pl->k_chunk = (uint32_t)K;
}

/* The largest tile that still gives GEMM_FILL workgroups; when even the
 * mid-size tile gives too few and k is long, split k. */
static void gemm_choose(const wg_caps *caps, uint64_t B, uint64_t M, uint64_t N, uint64_t K,
                        gemm_plan *pl)
{
    int forced = forced_config >= 0 ? forced_config : env_config();
    if (forced >= 0 && config_fits(caps, &gemm_configs[forced])) {
        plan_with(&gemm_configs[forced], B, M, N, K, pl);
    } else if (caps->cpu_adapter) {
        plan_with(&gemm_configs[0], B, M, N, K, pl);
    } else {
        int pick = -1;
        for (int i = GEMM_NCONFIGS - 1; i >= 1 && pick < 0; i--) {
            const gemm_config *c = &gemm_configs[i];
            if (!config_fits(caps, c) || (c->bk == 8 && c->bm == 128))
                continue;
            if (B * ceil_div(M, c->bm) * ceil_div(N, c->bn) >= GEMM_FILL) pick = i;
        }
        if (pick < 0) pick = config_fits(caps, &gemm_configs[1]) ? 1 : 0;
        plan_with(&gemm_configs[pick], B, M, N, K, pl);
    }
    uint64_t groups = B * pl->tiles_m * pl->tiles_n;
    uint64_t splits = 1;
    int env_splits = (int)wg_env_number("WT_GEMM_SPLITK", 0);
    int want = forced_splits > 0 ? forced_splits : env_splits;
    if (want > 0)
        splits = (uint64_t)want;
    else if (!caps->cpu_adapter && groups < GEMM_FILL / 2 && K >= 1024)
        /* Each split keeps at least 256 of k. */
        splits = ceil_div(GEMM_FILL, groups);
    uint64_t most = ceil_div(K, 256);
    if (want <= 0 && splits > most) splits = most;
    if (splits > 1) {
        uint64_t chunk = ceil_div(ceil_div(K, splits), pl->cfg->bk) * pl->cfg->bk;
        pl->splits = (uint32_t)ceil_div(K, chunk);
        pl->k_chunk = (uint32_t)chunk;
    }
}

/* The shaders index with u32: every element of every storage they bind
 * must be reachable below 2^31, and every extent and stride too. */
static bool fits_u32(const wt_tensor *t)
{
    size_t esize = t->dtype == WT_F16 ? 2 : 4;
    if (t->storage->bytes / esize >= (1ull << 31)) return false;
    for (int i = 0; i < t->ndim; i++)
        if (t->shape[i] >= (1ll << 31) || t->strides[i] < 0 || t->strides[i] >= (1ll << 31))
            return false;
    return t->offset >= 0 && t->offset < (1ll << 31);
}

/* Four elements along the fast axis are one aligned load. */
static bool vec_ok(int64_t offset, int64_t batch_stride, int64_t slow_stride, int64_t fast_extent)
{
    return ((offset | batch_stride | slow_stride | fast_extent) & 3) == 0;
}

wt_status wg_op_matmul_fused(wt_context *ctx, const wt_tensor *a, const wt_tensor *b,
                             const wt_tensor *bias, wt_matmul_act act, wt_tensor *out)
{
    bool f16 = a->dtype == WT_F16;
    if (a->dtype != b->dtype || (a->dtype != WT_F32 && a->dtype != WT_F16) ||
        (bias && bias->dtype != a->dtype) || out->dtype != a->dtype)
        return wt_fail(WT_ERR_UNSUPPORTED, "matmul: webgpu takes f32 or f16 operands of one dtype");
    if (a->ndim != 3 || b->ndim != 3 || out->ndim != 3 || (bias && bias->ndim != 1))
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "matmul: expects 3-d operands, got %d, %d, %d",
                       a->ndim, b->ndim, out->ndim);
    int64_t B = out->shape[0], M = out->shape[1], N = out->shape[2], K = a->shape[2];
    if (a->shape[0] != B || b->shape[0] != B || a->shape[1] != M || b->shape[1] != K ||
        b->shape[2] != N || (bias && bias->shape[0] != N))
        return wt_fail(WT_ERR_SHAPE, "matmul: operand shapes do not fit [B, M, K] @ [B, K, N]");
    if (B == 0 || M == 0 || N == 0) return WT_OK;
    if (f16 && (N % 2 != 0 || out->offset % 2 != 0 || (bias && bias->offset % 2 != 0)))
        return wt_fail(WT_ERR_UNSUPPORTED, "matmul: f16 results in whole words of two halves only");
    if (bias && bias->strides[0] != 1 && N > 1)
        return wt_fail(WT_ERR_UNSUPPORTED, "matmul: a contiguous bias only");
    if (!fits_u32(a) || !fits_u32(b) || !fits_u32(out))
        return wt_fail(WT_ERR_UNSUPPORTED,
                       "matmul: operands of [%lld, %lld, %lld] @ [%lld, %lld, %lld] exceed "
                       "32-bit indexing on webgpu",
                       (long long)B, (long long)M, (long long)K, (long long)B, (long long)K,
                       (long long)N);

    const wg_caps *caps = wg_get_caps(ctx);
    gemm_plan pl;
    gemm_choose(caps, (uint64_t)B, (uint64_t)M, (uint64_t)N, (uint64_t)(K ? K : 1), &pl);
    if (K == 0) pl.splits = 1, pl.k_chunk = 0;
    uint64_t work = pl.splits * (uint64_t)B * pl.tiles_m * pl.tiles_n;
    if (work >= (1ull << 32) || (pl.splits > 1 && (uint64_t)pl.splits * B * M * N >= (1ull << 31)))
        return wt_fail(WT_ERR_UNSUPPORTED, "matmul: %llu output tiles are too many",
                       (unsigned long long)work);

    gemm_params p;
    memset(&p, 0, sizeof p);
    p.batch = (uint32_t)B, p.m = (uint32_t)M, p.n = (uint32_t)N, p.k = (uint32_t)K;
    p.a_offset = (uint32_t)a->offset, p.a_batch_stride = (uint32_t)a->strides[0];
    p.a_row_stride = (uint32_t)a->strides[1], p.a_col_stride = (uint32_t)a->strides[2];
    p.b_offset = (uint32_t)b->offset, p.b_batch_stride = (uint32_t)b->strides[0];
    p.b_row_stride = (uint32_t)b->strides[1], p.b_col_stride = (uint32_t)b->strides[2];
    p.out_offset = (uint32_t)out->offset;
    p.tiles_m = (uint32_t)pl.tiles_m, p.tiles_n = (uint32_t)pl.tiles_n;
    p.k_chunk = pl.k_chunk, p.splits = pl.splits;
    p.bias_offset = bias ? (uint32_t)bias->offset : 0;

    /* Walk k fastest in a unless a is stored column-major (unit m stride);
     * walk n fastest in b unless b is (unit k stride). */
    bool a_k_fast = !(a->strides[1] == 1 && a->strides[2] != 1);
    bool b_n_fast = !(b->strides[1] == 1 && b->strides[2] != 1);
    bool a_vec = a_k_fast ? a->strides[2] == 1 && vec_ok(a->offset, a->strides[0], a->strides[1], K)
                          : vec_ok(a->offset, a->strides[0], a->strides[2], M);
    bool b_vec = b_n_fast ? b->strides[2] == 1 && vec_ok(b->offset, b->strides[0], b->strides[1], N)
                          : vec_ok(b->offset, b->strides[0], b->strides[2], K);
    if (M == 1) a_vec = a_vec && a_k_fast; /* one row: its "m stride" means nothing */
    if (N == 1) b_vec = b_vec && !b_n_fast;
    bool split = pl.splits > 1;

    wt_storage *partials = NULL;
    wt_status st;
    if (split && (st = wg_scratch(ctx, (size_t)pl.splits * B * M * N * sizeof(float), &partials)) != WT_OK)
        return st;

    const gemm_config *c = pl.cfg;
    char prelude[512];
    snprintf(prelude, sizeof prelude,
             "const BM: u32 = %uu;\nconst BN: u32 = %uu;\nconst BK: u32 = %uu;\n"
             "const TM: u32 = %uu;\nconst TN: u32 = %uu;\n"
             "const A_K_FAST: bool = %s;\nconst B_N_FAST: bool = %s;\n"
             "const A_VEC: bool = %s;\nconst B_VEC: bool = %s;\nconst SPLIT: bool = %s;\n"
             "const BIAS: bool = %s;\nconst ACT: u32 = %uu;\nconst OUT_F16: bool = %s;\n",
             c->bm, c->bn, c->bk, c->tm, c->tn, a_k_fast ? "true" : "false",
             b_n_fast ? "true" : "false", a_vec ? "true" : "false", b_vec ? "true" : "false",
             split ? "true" : "false", bias && !split ? "true" : "false",
             split ? 0u : (unsigned)act, f16 && !split ? "true" : "false");
    wg_launch l;
    memset(&l, 0, sizeof l);
    l.shader = "gemm";
    l.prelude = prelude;
    l.libraries[0] = f16 ? "gemm_io_f16" : "gemm_io_f32";
    l.libraries[1] = "gemm_epilogue";
    if (f16) l.libraries[2] = wg_f16_hw_exact(ctx) ? "f16_hw" : "f16_bits";
    l.params = &p;
    l.params_size = sizeof p;
    l.bindings[0] = (wg_binding){a->storage, false};
    l.bindings[1] = (wg_binding){b->storage, false};
    l.bindings[2] = (wg_binding){split ? partials : out->storage, true};
    l.bindings[3] = (wg_binding){bias && !split ? bias->storage : a->storage, false};
    l.nbindings = 4;
    l.workgroups = work;
    if (split) p.out_offset = 0;
    st = wg_dispatch(ctx, &l);
    if (st == WT_OK && split) {
        splitk_params q;
        memset(&q, 0, sizeof q);
        q.count = (uint32_t)(B * M * N), q.n = (uint32_t)N, q.splits = pl.splits;
        q.out_offset = (uint32_t)out->offset, q.bias_offset = p.bias_offset;
        snprintf(prelude, sizeof prelude,
                 "const WG: u32 = 256u;\nconst BIAS: bool = %s;\nconst ACT: u32 = %uu;\n"
                 "const OUT_F16: bool = %s;\n",
                 bias ? "true" : "false", (unsigned)act, f16 ? "true" : "false");
        l.shader = "gemm_splitk";
        l.params = &q;
        l.params_size = sizeof q;
        /* a and b are the io library's; the pass reads neither. */
        l.bindings[0] = (wg_binding){partials, false};
        l.bindings[1] = (wg_binding){partials, false};
        l.bindings[2] = (wg_binding){out->storage, true};
        l.bindings[3] = (wg_binding){bias ? bias->storage : partials, false};
        l.bindings[4] = (wg_binding){partials, false};
        l.nbindings = 5;
        l.workgroups = ceil_div(ceil_div((uint64_t)B * M * N, 2), 256);
        st = wg_dispatch(ctx, &l);
    }
    if (partials) wg_scratch_release(ctx, partials);
    return st;
}
