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
 * f32 products whose shape divides the chosen tile (M, N, every split's k
 * range; both operands read as 16-byte words) run gemm_interior.wgsl
 * instead: the same structure and summation order without the edge
 * handling (WT_GEMM_KERNEL=general keeps gemm.wgsl for them).
 *
 * Tile configurations, as BM x BN x BK / TM x TN (workgroup tile, k slab,
 * per-thread block): chosen per adapter and shape (gemm_choose), or forced
 * with WT_GEMM_TILE (e.g. "64x64x16/4x4") and WT_GEMM_SPLITK (0 or 1 = never)
 * for measurements; a configuration the device cannot run falls back to the
 * small one, which every adapter runs (64 threads, 4 KiB of workgroup
 * memory). */
#include "webgpu/wg.h"
#include "webgpu/wg_params.h"

#include <stdio.h>
#include <string.h>

typedef struct gemm_config {
    uint32_t bm, bn, bk, tm, tn;
} gemm_config;

/* The small configuration comes first: the fallback. On the H200
 * (2026-11-22, one run each, GPU time): 4096^3 took 4.77 ms with 64x64x16,
 * 4.23 with 128x64x16, 3.75 with 128x128x8 and 4.26 with 128x128x16;
 * 1024^3 86.9 us with 64x64x16 and 80.1 us with 128x64x16 split in two. */
static const gemm_config gemm_configs[] = {
    {32, 32, 8, 4, 4},     /* every adapter; CPU adapters (small workgroups) */
    {64, 64, 16, 4, 4},    /* 256 threads: mid-size outputs */
    {128, 64, 16, 8, 4},   /* 256 threads */
    {128, 128, 8, 8, 8},   /* 256 threads, 64 outputs each: large outputs */
    {64, 128, 8, 8, 8},    /* 128 threads, 64 outputs each */
    {128, 64, 8, 8, 8},
    /* Slabs of 16: measurements (WT_GEMM_TILE) unless chosen below. */
    {128, 128, 16, 8, 8},
    {64, 128, 16, 8, 8},
    {128, 64, 16, 8, 8},
};
#define GEMM_NCONFIGS ((int)(sizeof gemm_configs / sizeof gemm_configs[0]))

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
    const char *s = wt_knob_text(WT_KNOB_GEMM_TILE);
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

/* The first tile of the preference list (per dtype and layout, from the
 * H200's measurements above) that gives GEMM_FILL workgroups; else, for a
 * long k, 128 x 64 tiles with k split to make up the count (1024^3: 80 us
 * against 87 us unsplit with 64 x 64); else 64 x 64 tiles. */
static void gemm_choose(const wg_caps *caps, bool f16, bool b_n_fast, bool conv, uint64_t B, uint64_t M,
                        uint64_t N, uint64_t K, gemm_plan *pl)
{
    int forced = forced_config >= 0 ? forced_config : env_config();
    uint64_t splits = 1;
    if (forced >= 0 && config_fits(caps, &gemm_configs[forced])) {
        plan_with(&gemm_configs[forced], B, M, N, K, pl);
    } else if (caps->cpu_adapter || !config_fits(caps, &gemm_configs[1])) {
        plan_with(&gemm_configs[0], B, M, N, K, pl);
    } else {
        /* 4096^3 f16: 3.43 ms with 64 x 128 x 8, 3.85 with 128 x 64 x 16,
         * 5.23 with 128 x 128 x 8; f32 bmm 64 x 512^3 477 us with
         * 64 x 128 x 8, 497 with 128 x 128 x 8; a @ w^T (b read along k)
         * 8192 x 4096 x 4096 7.54 ms with 128 x 128 x 8, 7.91 with 64 x 128 x 8.
         * With the fragments read a step ahead (gemm.wgsl), f32 4096^3 took
         * 3.562 ms with 128 x 128 x 8 and 3.643 with 64 x 128 x 8, the bmm
         * (k 512) 470.8 and 461.5 us: the large tile for a long k; f16
         * 4096^3 3.260 ms with 128 x 128 x 8, 3.478 with 64 x 128 x 8. */
        static const int prefer_f16[] = {4, 2}, prefer_n_fast[] = {4, 3, 2}, prefer_k_fast[] = {3, 4, 2};
        /* b read along k with a short k (a linear layer's x @ w^T), 16384
         * rows (H200, f32): [16384, 384] x [384, 384] took 146.6 us with
         * 128 x 64 x 8 / 8 x 8 against 160.1 with 128 x 128 x 8, and
         * x [384, 1536] 540.5 against 562.7 us, x [1536, 384] 548.4
         * against 590.8 us. */
        static const int prefer_k_fast_short[] = {5, 3, 4, 2};
        /* A convolution's gathered b: 32 x 64 x 56^2 x 64 3x3 took 351 us
         * with 64 x 64 x 16 / 4 x 4 (f16 380), 494 with 64 x 128 x 8,
         * 547 with 128 x 64 x 16, 622 with 128 x 128 x 8 (H200). */
        static const int prefer_conv[] = {1};
        bool long_k = K >= 2048;
        const int *prefer = conv  ? prefer_conv
                            : f16 ? (b_n_fast && long_k ? prefer_k_fast : prefer_f16)
                                  : (b_n_fast ? (long_k ? prefer_k_fast : prefer_n_fast)
                                              : (long_k ? prefer_k_fast : prefer_k_fast_short));
        int nprefer = conv ? 1 : prefer == prefer_f16 ? 2 : prefer == prefer_k_fast_short ? 4 : 3, pick = -1;
        for (int i = 0; i < nprefer && pick < 0; i++) {
            const gemm_config *c = &gemm_configs[prefer[i]];
            if (config_fits(caps, c) && B * ceil_div(M, c->bm) * ceil_div(N, c->bn) >= GEMM_FILL)
                pick = prefer[i];
        }
        if (pick < 0) {
            pick = config_fits(caps, &gemm_configs[2]) && K >= 1024 ? 2 : 1;
            uint64_t groups = B * ceil_div(M, gemm_configs[pick].bm) * ceil_div(N, gemm_configs[pick].bn);
            /* A very long k over a small output (a weight gradient x^T dy
             * over 16384 rows) splits towards twice the count: [1536,
             * 16384] x [16384, 384] took 815.8 us in 4 splits, 651.0 in 8
             * (128 x 64 x 16, H200). */
            uint64_t fill = K >= 8192 ? 2 * GEMM_FILL : GEMM_FILL;
            if (groups < fill && K >= 1024) {
                splits = ceil_div(fill, groups);
                /* Over enough output tiles, splits of at most
                 * WT_GEMM_SPLITK_CHUNK (1024) of k, past the count the
                 * fill asks for: [1536, 16384] x [16384, 384] (72 tiles,
                 * the fill's 8 splits of 2048) took 526 us, in 16 splits
                 * of 1024 483 us, in 48 536 and in 64 552 (128 x 64 x
                 * 16, H200); [384, 16384] x [16384, 384] (18 tiles) kept
                 * the fill's 29 splits: 130 us, against 165 in 16 and 145
                 * in 48. 0 turns the floor off (the fill alone). f32
                 * products only: f16 and convolutions were not measured. */
                uint64_t chunk = wt_knob_count(WT_KNOB_GEMM_SPLITK_CHUNK, 1024);
                if (!f16 && !conv && K >= 8192 && chunk > 0 && K / chunk > splits) splits = K / chunk;
                if (splits > K / 512) splits = K / 512;
            }
        }
        plan_with(&gemm_configs[pick], B, M, N, K, pl);
    }
    /* WT_GEMM_SPLITK=0 means never, as 1 does; unset keeps the choice. */
    uint64_t want = forced_splits > 0 ? (uint64_t)forced_splits : wt_knob_count(WT_KNOB_GEMM_SPLITK, UINT64_MAX);
    if (want != UINT64_MAX) splits = want > 1 ? want : 1;
    if (splits > K) splits = K;
    if (splits > 1) {
        uint64_t chunk = ceil_div(ceil_div(K, splits), pl->cfg->bk) * pl->cfg->bk;
        pl->splits = (uint32_t)ceil_div(K, chunk);
        pl->k_chunk = (uint32_t)chunk;
    }
}

void wg_gemm_plan_for(const wg_caps *caps, bool f16, bool b_n_fast, uint64_t B, uint64_t M, uint64_t N,
                      uint64_t K, int *config, uint32_t *splits)
{
    gemm_plan pl;
    gemm_choose(caps, f16, b_n_fast, false, B, M, N, K ? K : 1, &pl);
    *config = (int)(pl.cfg - gemm_configs);
    *splits = pl.splits;
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

/* ------------------------------------------------- the matrix units */

/* Kernels on the matrix units, WT_GEMM_MATRIX_KERNEL: "tiled" (the
 * default: several subgroups a workgroup sharing slabs staged in
 * workgroup memory, gemm_matrix_tiled.wgsl, the slabs stored as 16 x 16
 * fragments), "tiled-rows" (the same with the slabs stored as padded
 * rows), "tiled-f16" (padded rows of halves and the builtins' older form,
 * for Dawn builds without the current one), "fragments" (one subgroup a workgroup,
 * fragments straight from global memory, gemm_matrix.wgsl) and "staged"
 * (one subgroup a workgroup with its slabs in workgroup memory,
 * gemm_matrix_staged.wgsl). */
typedef enum { MATRIX_TILED, MATRIX_TILED_ROWS, MATRIX_TILED_F16, MATRIX_FRAGMENTS, MATRIX_STAGED } matrix_kernel;

static matrix_kernel matrix_kernel_knob(void)
{
    const char *s = wt_knob_text(WT_KNOB_GEMM_MATRIX_KERNEL);
    if (!s) return MATRIX_TILED;
    if (strcmp(s, "tiled-rows") == 0) return MATRIX_TILED_ROWS;
    if (strcmp(s, "tiled-f16") == 0) return MATRIX_TILED_F16;
    if (strcmp(s, "fragments") == 0) return MATRIX_FRAGMENTS;
    if (strcmp(s, "staged") == 0) return MATRIX_STAGED;
    return MATRIX_TILED;
}

/* One subgroup a workgroup (fragments, staged): per subgroup SG_M x SG_N
 * result matrices of 16 x 16, WG_M x WG_N = 1 x 1; the first whose tile
 * divides the output runs. */
static const uint32_t matrix_tiles[][4] = {
    {4, 4, 1, 1}, {4, 2, 1, 1}, {2, 4, 1, 1}, {2, 2, 1, 1}, {2, 1, 1, 1}, {1, 1, 1, 1},
};

/* The tiled kernel's tiles without WT_GEMM_MATRIX_TILE: SG_M, SG_N (its
 * subgroups' results of 16 x 16), WG_M, WG_N (subgroups), and the k slab
 * unless WT_GEMM_MATRIX_BK sets it; the first that gives MATRIX_FILL
 * workgroups and fits the device runs, else the last. 128 x 128 tiles of
 * four subgroups of 4 x 4 results and k slabs of 16 ran fastest on an
 * H200 at 4096^3 (bench/RESULTS.md); smaller products take smaller tiles,
 * for more workgroups. At most 64 rows (a convolution's product has as
 * many as output channels, often 64) skip the 128-row tiles, which would
 * multiply zeros half the time or more, for 64 x 128 (two subgroups of
 * 4 x 4, SHORT_M_TILE) or 64 x 64; more rows never take SHORT_M_TILE. */
static const uint32_t matrix_tiled_tiles[][5] = {
    {4, 4, 2, 2, 16}, {4, 4, 1, 2, 16}, {2, 2, 4, 2, 32}, {2, 2, 2, 2, 32}};
#define MATRIX_FILL 128u
#define SHORT_M_TILE 1u

/* gemm_matrix's answer for a product it does not take: unsupported,
 * counted as declined (with why) when the context asked for the units. */
static wt_status matrix_declined(wt_context *ctx, const char *why)
{
    if (wg_matrix_asked(ctx)) wg_matrix_note(ctx, why);
    return WT_ERR_UNSUPPORTED;
}

/* WT_GEMM_MATRIX_TILE="SG_M,SG_N,WG_M,WG_N" into t, when it is four
 * positive numbers (subgroups a workgroup: 1 x 1 unless tiled; results a
 * subgroup: 1, 2 or 4 each way when tiled). */
static bool matrix_tile_knob(bool tiled, uint32_t t[4])
{
    const char *e = wt_knob_text(WT_KNOB_GEMM_MATRIX_TILE);
    return e && sscanf(e, "%u,%u,%u,%u", &t[0], &t[1], &t[2], &t[3]) == 4 && t[0] && t[1] && t[0] <= 8 &&
           t[1] <= 8 && t[2] && t[3] && t[2] <= 8 && t[3] <= 8 &&
           (tiled ? (t[0] == 1 || t[0] == 2 || t[0] == 4) && (t[1] == 1 || t[1] == 2 || t[1] == 4)
                  : t[2] == 1 && t[3] == 1);
}

/* Workgroup memory of the tiled kernel (gemm_matrix_tiled.wgsl): two
 * buffers of each slab and one 16 x 16 f32 block a subgroup. The slabs as
 * 16 x 16 fragments, unpadded (gemm_matrix_smem_blocks), or as rows
 * padded by 8 halves (gemm_matrix_smem_vec, _f16). */
static uint64_t tiled_bytes(matrix_kernel kernel, const uint32_t t[4], uint64_t bk, bool b_t)
{
    uint64_t bm = 16u * t[0] * t[2], bn = 16u * t[1] * t[3];
    uint64_t a_stage = bm * (bk + 8), b_stage = b_t ? bn * (bk + 8) : bk * (bn + 8);
    if (kernel == MATRIX_TILED) {
        a_stage = bm * bk;
        b_stage = bn * bk;
    }
    return 2 * 2 * (a_stage + b_stage) + 1024u * t[2] * t[3];
}

/* The tiled kernel's tile from matrix_tiled_tiles for B products of M x
 * N (and its k slab into *bk), or NULL when none fits the device. */
static const uint32_t *tiled_tile_choose(const wg_caps *caps, matrix_kernel kernel, bool b_t, uint64_t B,
                                         uint64_t M, uint64_t N, uint64_t knob_bk, uint64_t *bk)
{
    const size_t count = sizeof matrix_tiled_tiles / sizeof matrix_tiled_tiles[0];
    for (size_t i = 0; i < count; i++) {
        const uint32_t *c = matrix_tiled_tiles[i];
        uint64_t c_bk = knob_bk ? knob_bk : c[4];
        uint64_t groups = B * ceil_div(M, 16u * c[0] * c[2]) * ceil_div(N, 16u * c[1] * c[3]);
        bool last = i + 1 == count;
        bool short_m = M <= 64;
        if (!last && (short_m ? 16u * c[0] * c[2] > 64 : i == SHORT_M_TILE)) continue;
        if (32 * c[2] * c[3] <= caps->max_invocations &&
            tiled_bytes(kernel, c, c_bk, b_t) <= caps->max_workgroup_storage && (groups >= MATRIX_FILL || last)) {
            *bk = c_bk;
            return c;
        }
    }
    return NULL;
}

/* f16 on the matrix units (the context asked for them with
 * WT_EXPERIMENTAL_SUBGROUP_MATRIX): a row-major a, b row-major or stored
 * [n, k], 16-byte aligned rows. Returns WT_ERR_UNSUPPORTED (nothing
 * recorded) for anything else. */
static wt_status gemm_matrix_rows(wt_context *ctx, const wt_tensor *a, const wt_tensor *b, const wt_tensor *bias,
                                  bool conv, wt_matmul_act act, wt_tensor *out);

static wt_status gemm_matrix(wt_context *ctx, const wt_tensor *a, const wt_tensor *b,
                             const wt_tensor *bias, wt_matmul_act act, wt_tensor *out)
{
    return gemm_matrix_rows(ctx, a, b, bias, false, act, out);
}

/* With conv (gemm_conv_matrix's product): the bias indexed by row (a
 * convolution's output channel), and b's rows zero from N up to ldb, so
 * that N need not be a multiple of 8 where b is row-major; the tiled
 * kernels only. */
static wt_status gemm_matrix_rows(wt_context *ctx, const wt_tensor *a, const wt_tensor *b, const wt_tensor *bias,
                                  bool conv, wt_matmul_act act, wt_tensor *out)
{
    const wg_caps *caps = wg_get_caps(ctx);
    int64_t B = out->shape[0], M = out->shape[1], N = out->shape[2], K = a->shape[2];
    bool b_t = b->strides[1] == 1 && b->strides[2] != 1;
    int64_t lda = a->strides[1], ldb = b_t ? b->strides[2] : b->strides[1];
    if (a->dtype != WT_F16 || !wg_matrix_asked(ctx)) return WT_ERR_UNSUPPORTED;
    const char *gap = wg_matrix_device_gap(caps);
    if (gap) return matrix_declined(ctx, gap);
    if (wt_knob_number(WT_KNOB_GEMM_MATRIX_OFF, 0)) return matrix_declined(ctx, "WT_GEMM_MATRIX_OFF is set");
    if (a->strides[2] != 1 || (!b_t && b->strides[2] != 1))
        return matrix_declined(ctx, "an operand is not row-major (or b stored [n, k])");
    if (((a->offset | a->strides[0] | lda | b->offset | b->strides[0] | ldb) & 7) || out->offset % 2)
        return matrix_declined(ctx, "offsets or row strides not multiples of 8 halves");
    matrix_kernel kernel = matrix_kernel_knob();
    bool tiled = kernel == MATRIX_TILED || kernel == MATRIX_TILED_ROWS || kernel == MATRIX_TILED_F16;
    if (K == 0) return matrix_declined(ctx, "K is 0");
    if (conv && !tiled) return matrix_declined(ctx, "a convolution's product needs a tiled kernel");
    if (tiled && (K % 8 || (!b_t && N % 8 && !conv)))
        return matrix_declined(ctx, "K (or N, b row-major) not a multiple of 8");
    if (!tiled && (M % 16 || N % 16 || K % 16)) return matrix_declined(ctx, "M, N or K not a multiple of 16");
    /* The k slab of the staged kernels: the knob's, else the tile's
     * (tiled) or 32. */
    uint64_t knob_bk = wt_knob_count(WT_KNOB_GEMM_MATRIX_BK, 0);
    if (knob_bk != 16 && knob_bk != 32 && knob_bk != 64) knob_bk = 0;
    uint64_t bk = knob_bk ? knob_bk : 32;
    if (kernel == MATRIX_STAGED && K % (int64_t)bk) bk = K % 32 == 0 ? 32 : 16;
    uint32_t knob_tile[4];
    const uint32_t *t = NULL;
    if (matrix_tile_knob(tiled, knob_tile) && 32 * knob_tile[2] * knob_tile[3] <= caps->max_invocations &&
        (tiled ? tiled_bytes(kernel, knob_tile, bk, b_t) <= caps->max_workgroup_storage
               : M % (16 * knob_tile[0]) == 0 && N % (16 * knob_tile[1]) == 0))
        t = knob_tile;
    if (tiled && !t) {
        t = tiled_tile_choose(caps, kernel, b_t, (uint64_t)B, (uint64_t)M, (uint64_t)N, knob_bk, &bk);
    } else if (!tiled) {
        for (size_t i = 0; i < sizeof matrix_tiles / sizeof matrix_tiles[0] && !t; i++) {
            const uint32_t *c = matrix_tiles[i];
            if (M % (16 * c[0]) == 0 && N % (16 * c[1]) == 0) t = c;
        }
    }
    if (!t) return matrix_declined(ctx, "no workgroup tile fits the shape or the device");
    uint64_t tiles_m = ceil_div((uint64_t)M, 16u * t[0] * t[2]), tiles_n = ceil_div((uint64_t)N, 16u * t[1] * t[3]);
    matrix_params p = {
        .batch = (uint32_t)B, .m = (uint32_t)M, .n = (uint32_t)N, .k = (uint32_t)K,
        .a_offset = (uint32_t)a->offset, .a_batch_stride = (uint32_t)a->strides[0],
        .lda = (uint32_t)lda, .b_offset = (uint32_t)b->offset,
        .b_batch_stride = (uint32_t)b->strides[0], .ldb = (uint32_t)ldb,
        .out_offset = (uint32_t)out->offset, .tiles_m = (uint32_t)tiles_m,
        .tiles_n = (uint32_t)tiles_n, .bias_offset = bias ? (uint32_t)bias->offset : 0,
    };
    if (kernel == MATRIX_STAGED) {
        /* The slabs (rows padded by 8 halves) and one 16 x 16 f32 block. */
        uint64_t bm = 16u * t[0], bn = 16u * t[1];
        uint64_t staged_bytes = 2 * (bm * (bk + 8) + (b_t ? bn * (bk + 8) : bk * (bn + 8))) + 1024u;
        if (staged_bytes > caps->max_workgroup_storage) kernel = MATRIX_FRAGMENTS;
    }
    /* The tiled kernel's offsets differ between the subgroups of a
     * workgroup, which Dawn's uniformity analysis refuses unless told. */
    char prelude[480];
    snprintf(prelude, sizeof prelude,
             "enable f16;\nenable chromium_experimental_subgroup_matrix;\n%s"
             "const SG_M: u32 = %uu;\nconst SG_N: u32 = %uu;\nconst WG_M: u32 = %uu;\n"
             "const WG_N: u32 = %uu;\nconst B_T: bool = %s;\nconst BIAS: bool = %s;\n"
             "const BIAS_ROWS: bool = %s;\nconst ACT: u32 = %uu;\nconst BK: u32 = %uu;\n",
             tiled ? "diagnostic(off, chromium.subgroup_matrix_uniformity);\n" : "", t[0], t[1], t[2], t[3],
             b_t ? "true" : "false", bias ? "true" : "false", conv ? "true" : "false", (unsigned)act,
             (unsigned)bk);
    static const char *const shaders[] = {"gemm_matrix_tiled", "gemm_matrix_tiled", "gemm_matrix_tiled",
                                          "gemm_matrix", "gemm_matrix_staged"};
    static const char *const smem_libraries[] = {"gemm_matrix_smem_blocks", "gemm_matrix_smem_vec",
                                                 "gemm_matrix_smem_f16"};
    wg_launch l = {
        .shader = shaders[kernel],
        .prelude = prelude,
        .libraries = {"gemm_epilogue", wg_f16_library(ctx)},
        .params = &p,
        .params_size = sizeof p,
        .bindings = {{a->storage, false}, {b->storage, false}, {out->storage, true},
                     {bias ? bias->storage : a->storage, false}},
        .nbindings = 4,
        .workgroups = (uint64_t)B * tiles_m * tiles_n,
    };
    if (tiled) l.libraries[2] = smem_libraries[kernel];
    wt_status st = wg_dispatch(ctx, &l);
    if (st == WT_OK) wg_matrix_note(ctx, NULL);
    return st;
}

/* ------------------------------------------------ f16 matrix-vector */

/* M == 1 or N == 1 in f16 where the matrix's rows run along k (A @ x, or
 * x @ w^T: the decode step of a language model): a bandwidth-bound pass
 * of 16-byte loads. WT_ERR_UNSUPPORTED (nothing recorded) otherwise. */
static wt_status gemv_f16(wt_context *ctx, const wt_tensor *a, const wt_tensor *b, wt_tensor *out)
{
    int64_t B = out->shape[0], M = out->shape[1], N = out->shape[2], K = a->shape[2];
    const wt_tensor *u = M == 1 ? b : a, *v = M == 1 ? a : b;
    int64_t outputs = M == 1 ? N : M;
    int64_t u_row = M == 1 ? b->strides[2] : a->strides[1], u_k = M == 1 ? b->strides[1] : a->strides[2];
    int64_t v_k = M == 1 ? a->strides[2] : b->strides[1];
    if ((u_k != 1 && K > 1) || (v_k != 1 && K > 1) || K % 8 || K == 0 || out->offset % 2 ||
        ((u->offset | u->strides[0] | (outputs > 1 ? u_row : 0) | v->offset | v->strides[0]) & 7))
        return WT_ERR_UNSUPPORTED;
    /* Threads a row: 4096 x 4096 took 11.59 us with 64, 11.87 with 32,
     * 12.14 with 128 and 14.13 with 16 on the H200 (one run each). */
    uint32_t tpr = (uint32_t)wt_knob_number(WT_KNOB_GEMV_F16_TPR, 64);
    if (!wg_is_pow2(tpr) || tpr < 2 || tpr > 256) tpr = 64;
    uint32_t wg = 256;
    gemv_f16_params p = {
        .rows = (uint32_t)(B * outputs), .rows_per_batch = (uint32_t)outputs, .k = (uint32_t)K,
        .out_word = (uint32_t)(out->offset / 2), .u_offset = (uint32_t)u->offset,
        .u_batch_stride = (uint32_t)u->strides[0], .u_row_stride = (uint32_t)(outputs > 1 ? u_row : 0),
        .v_offset = (uint32_t)v->offset, .v_batch_stride = (uint32_t)v->strides[0],
    };
    char prelude[96];
    snprintf(prelude, sizeof prelude, "const WG: u32 = %uu;\nconst TPR: u32 = %uu;\n", wg, tpr);
    wg_launch l = {
        .shader = "gemv_f16",
        .prelude = prelude,
        .libraries = {wg_f16_library(ctx)},
        .params = &p,
        .params_size = sizeof p,
        .bindings = {{u->storage, false}, {v->storage, false}, {out->storage, true}},
        .nbindings = 3,
        .workgroups = ceil_div((uint64_t)B * outputs, wg / tpr),
    };
    return wg_dispatch(ctx, &l);
}

/* One product as gemm.wgsl takes it: a [B, M, K] through its strides (its
 * batch entry modulo p->a_batch_mod), b through its strides or, with conv,
 * a convolution's input read as its im2col matrix (gemm_b_conv.wgsl); out
 * [B, M, N] contiguous from its offset. Checked by the callers. */
typedef struct gemm_job {
    const wt_tensor *a, *b, *bias, *out;
    const wt_tensor *aux; /* NULL, or f32 [B, M, N] contiguous: the epilogue's operand (AUX) */
    wt_matmul_act act;
    uint64_t B, M, N, K;
    bool a_k_fast, b_n_fast, a_vec, b_vec;
    bool conv, pointwise, bias_rows, transposed;
} gemm_job;

/* ------------------------------------------- the interior kernel */

/* WT_GEMM_KERNEL: by default gemm_interior.wgsl takes the f32 products
 * whose shape divides the chosen tile and whose a is stored m-fast (a
 * weight gradient, dy^T x): on the H200 it took those 20 % faster but the
 * k-fast layouts (x w^T, dy w) 5-12 % slower than gemm.wgsl, whose scalar
 * transposing stores of a k-fast a cost less than its own. "interior"
 * gives it every layout, "general" none; "nopad", "noahead" and
 * "nostage" turn off the interior kernel's PAD, FRAG_AHEAD and
 * STAGE_REGS, "warp84" turns on WARP_8X4, for measurements. */
typedef struct interior_knob {
    bool off, all_layouts, pad, ahead, stage_regs, warp84;
} interior_knob;

static interior_knob interior_choice(void)
{
    interior_knob k = {false, false, true, true, true, false};
    const char *s = wt_knob_text(WT_KNOB_GEMM_KERNEL);
    if (!s) return k;
    k.off = strcmp(s, "general") == 0;
    k.all_layouts = strncmp(s, "interior", 8) == 0;
    k.pad = !strstr(s, "nopad");
    k.ahead = !strstr(s, "noahead");
    k.stage_regs = !strstr(s, "nostage");
    k.warp84 = strstr(s, "warp84") != NULL;
    return k;
}

/* Workgroup memory of gemm_interior.wgsl: two stages of each slab, a row
 * of an operand stored transposed one 16-byte word longer with pad. */
static uint64_t interior_bytes(const gemm_config *c, bool a_k_fast, bool b_n_fast, bool pad)
{
    uint64_t ap = c->bm / 4 + (pad && a_k_fast), bp = c->bn / 4 + (pad && !b_n_fast);
    return 2ull * c->bk * (ap + bp) * 16;
}

/* Whether gemm_interior.wgsl takes the job under the plan: f32, both
 * operands read as 16-byte words, tiles and k slabs that divide the shape
 * (every split's k range included), a result that starts on a word. */
static bool interior_fits(const wg_caps *caps, const gemm_job *j, const gemm_plan *pl, const interior_knob *k)
{
    const gemm_config *c = pl->cfg;
    return !k->off && (k->all_layouts || !j->a_k_fast) && j->a->dtype == WT_F32 && !j->conv && j->a_vec &&
           j->b_vec && j->K > 0 &&
           j->M % c->bm == 0 && j->N % c->bn == 0 && j->K % c->bk == 0 && pl->k_chunk % c->bk == 0 &&
           j->out->offset % 4 == 0 && config_threads(c) <= caps->max_invocations &&
           interior_bytes(c, j->a_k_fast, j->b_n_fast, k->pad) <= caps->max_workgroup_storage;
}

/* Records the product (and its split-k pass); p holds b's fields and the
 * window, the rest is filled in here. */
static wt_status gemm_run(wt_context *ctx, const gemm_job *j, gemm_params *p)
{
    const wt_tensor *a = j->a, *bias = j->bias, *out = j->out;
    const uint64_t B = j->B, M = j->M, N = j->N, K = j->K;
    const bool f16 = a->dtype == WT_F16;
    const wg_caps *caps = wg_get_caps(ctx);
    gemm_plan pl;
    gemm_choose(caps, f16, j->b_n_fast, j->conv, B, M, N, K ? K : 1, &pl);
    if (K == 0) pl.splits = 1, pl.k_chunk = 0;
    uint64_t work = pl.splits * B * pl.tiles_m * pl.tiles_n;
    if (work >= (1ull << 32) || (pl.splits > 1 && (uint64_t)pl.splits * B * M * N >= (1ull << 31)))
        return wt_fail(WT_ERR_UNSUPPORTED, "matmul: %llu output tiles are too many",
                       (unsigned long long)work);

    p->batch = (uint32_t)B, p->m = (uint32_t)M, p->n = (uint32_t)N, p->k = (uint32_t)K;
    p->a_offset = (uint32_t)a->offset, p->a_batch_stride = (uint32_t)a->strides[0];
    p->a_row_stride = (uint32_t)a->strides[1], p->a_col_stride = (uint32_t)a->strides[2];
    p->out_offset = (uint32_t)out->offset;
    p->tiles_m = (uint32_t)pl.tiles_m, p->tiles_n = (uint32_t)pl.tiles_n;
    p->k_chunk = pl.k_chunk, p->splits = pl.splits;
    p->bias_offset = bias ? (uint32_t)bias->offset : 0;
    if (!j->bias_rows) p->bias_rows = 1;

    const interior_knob ik = interior_choice();
    const bool interior = !j->aux && interior_fits(caps, j, &pl, &ik);
    /* An activation on the large tiles or the interior kernel: a second
     * pass (see gemm.wgsl), through the split-k route with one split. A
     * bias alone is added in the product's own stores unless
     * WT_BIAS_IN_PRODUCT=0 (the second pass for it too, as before). */
    const bool bias_in_store = wt_knob_count(WT_KNOB_BIAS_IN_PRODUCT, 1) != 0;
    /* GELU's backward (AUX 2) runs after the stores, apart from them:
     * no second pass for it. */
    const bool act_in_store = j->act != WT_MATMUL_ACT_NONE && j->act != WT_MATMUL_ACT_GELU_GRAD;
    bool epilogue_pass = (act_in_store || (bias && !bias_in_store)) &&
                         (interior || pl.cfg->tm * pl.cfg->tn >= 64);
    bool split = pl.splits > 1 || epilogue_pass;
    /* WT_MATMUL_EPILOGUE=3: GELU's derivative in the stores themselves
     * (AUX 3), for measurements: with its code there the GPT step's
     * dy @ w2 kept its accumulators out of registers on an H200 (86.6 ms
     * a step against 40.2). */
    const unsigned grad_mode = wt_knob_count(WT_KNOB_MATMUL_EPILOGUE, 1) == 3 ? 3u : 2u;
    const unsigned aux_mode = !j->aux ? 0u : j->act == WT_MATMUL_ACT_GELU_GRAD ? grad_mode : 1u;
    const wt_matmul_act act = j->act == WT_MATMUL_ACT_GELU_GRAD ? WT_MATMUL_ACT_NONE : j->act;
    /* The epilogue's operand: binding 5 and two functions, in the prelude
     * (stubs without one, which f16 results never have). */
    static const char aux_none[] =
        "fn aux_at(i: u32) -> f32 { return 0.0; }\nfn out_get(i: u32) -> f32 { return 0.0; }\n";
    const char *aux_wgsl = aux_mode ? "@group(0) @binding(5) var<storage, read> aux: array<f32>;\n"
                                      "fn aux_at(i: u32) -> f32 { return aux[i]; }\n"
                                      "fn out_get(i: u32) -> f32 { return out[i]; }\n"
                                    : aux_none;
    p->aux_offset = j->aux ? (uint32_t)j->aux->offset : 0;

    wt_storage *partials = NULL;
    wt_status st;
    if (split && (st = wg_scratch(ctx, (size_t)pl.splits * B * M * N * sizeof(float), &partials)) != WT_OK)
        return st;

    const gemm_config *c = pl.cfg;
    char prelude[1024];
    snprintf(prelude, sizeof prelude,
             "const BM: u32 = %uu;\nconst BN: u32 = %uu;\nconst BK: u32 = %uu;\n"
             "const TM: u32 = %uu;\nconst TN: u32 = %uu;\n"
             "const A_K_FAST: bool = %s;\nconst B_N_FAST: bool = %s;\n"
             "const A_VEC: bool = %s;\nconst B_VEC: bool = %s;\nconst SPLIT: bool = %s;\n"
             "const BIAS: bool = %s;\nconst ACT: u32 = %uu;\nconst OUT_F16: bool = %s;\n"
             "const BIAS_ROWS: bool = %s;\nconst POINTWISE: bool = %s;\nconst TRANSPOSED: bool = %s;\n"
             "const AUX: u32 = %uu;\n%s",
             c->bm, c->bn, c->bk, c->tm, c->tn, j->a_k_fast ? "true" : "false",
             j->b_n_fast ? "true" : "false", j->a_vec ? "true" : "false", j->b_vec ? "true" : "false",
             split ? "true" : "false", bias && !split ? "true" : "false",
             split ? 0u : (unsigned)act, f16 && !split ? "true" : "false",
             j->bias_rows ? "true" : "false", j->pointwise ? "true" : "false",
             j->transposed ? "true" : "false", split ? 0u : aux_mode, split ? aux_none : aux_wgsl);
    wg_launch l;
    memset(&l, 0, sizeof l);
    l.shader = "gemm";
    l.prelude = prelude;
    l.libraries[0] = f16 ? "gemm_io_f16" : "gemm_io_f32";
    l.libraries[1] = "gemm_epilogue";
    l.libraries[2] = j->conv ? "gemm_b_conv" : "gemm_b_strided";
    if (f16) l.libraries[3] = wg_f16_library(ctx);
    l.params = p;
    l.params_size = sizeof *p;
    l.bindings[0] = (wg_binding){a->storage, false};
    l.bindings[1] = (wg_binding){j->b->storage, false};
    l.bindings[2] = (wg_binding){split ? partials : out->storage, true};
    l.bindings[3] = (wg_binding){bias && !split ? bias->storage : a->storage, false};
    l.nbindings = 4;
    if (j->aux && !split) {
        l.bindings[4] = (wg_binding){j->aux->storage, false};
        l.nbindings = 5;
    }
    l.workgroups = work;
    char interior_prelude[640];
    wg_launch li = l;
    if (interior) {
        snprintf(interior_prelude, sizeof interior_prelude,
                 "const BM: u32 = %uu;\nconst BN: u32 = %uu;\nconst BK: u32 = %uu;\n"
                 "const TM: u32 = %uu;\nconst TN: u32 = %uu;\n"
                 "const A_K_FAST: bool = %s;\nconst B_N_FAST: bool = %s;\n"
                 "const PAD: bool = %s;\nconst FRAG_AHEAD: bool = %s;\nconst STAGE_REGS: bool = %s;\n"
                 "const WARP_8X4: bool = %s;\nconst BIAS: bool = %s;\n",
                 c->bm, c->bn, c->bk, c->tm, c->tn, j->a_k_fast ? "true" : "false",
                 j->b_n_fast ? "true" : "false", ik.pad ? "true" : "false", ik.ahead ? "true" : "false",
                 ik.stage_regs ? "true" : "false", ik.warp84 && (c->bm / c->tm) % 4 == 0 ? "true" : "false",
                 bias && !split ? "true" : "false");
        li.prelude = interior_prelude;
        li.shader = "gemm_interior";
        memset(li.libraries, 0, sizeof li.libraries);
        li.nbindings = 4; /* the bias, or a unread */
    }
    if (split) p->out_offset = 0;
    st = wg_dispatch(ctx, interior ? &li : &l);
    if (st == WT_OK && split) {
        splitk_params q;
        memset(&q, 0, sizeof q);
        q.count = (uint32_t)(B * M * N), q.n = (uint32_t)N, q.splits = pl.splits;
        q.out_offset = (uint32_t)out->offset, q.bias_offset = p->bias_offset, q.bias_rows = p->bias_rows;
        q.aux_offset = p->aux_offset;
        snprintf(prelude, sizeof prelude,
                 "const WG: u32 = 256u;\nconst BIAS: bool = %s;\nconst ACT: u32 = %uu;\n"
                 "const OUT_F16: bool = %s;\nconst BIAS_ROWS: bool = %s;\nconst AUX: u32 = %uu;\n%s",
                 bias ? "true" : "false", (unsigned)act, f16 ? "true" : "false",
                 j->bias_rows ? "true" : "false", aux_mode, aux_wgsl);
        l.shader = "gemm_splitk";
        l.libraries[2] = l.libraries[3]; /* no b operand library */
        l.libraries[3] = NULL;
        l.params = &q;
        l.params_size = sizeof q;
        /* The partial sums as the io library's a; its b goes unread. */
        l.bindings[0] = (wg_binding){partials, false};
        l.bindings[1] = (wg_binding){partials, false};
        l.bindings[2] = (wg_binding){out->storage, true};
        l.bindings[3] = (wg_binding){bias ? bias->storage : partials, false};
        l.nbindings = 4;
        if (j->aux) {
            l.bindings[4] = (wg_binding){j->aux->storage, false};
            l.nbindings = 5;
        }
        l.workgroups = ceil_div(ceil_div((uint64_t)B * M * N, 2), 256);
        st = wg_dispatch(ctx, &l);
    }
    if (partials) wg_scratch_release(ctx, partials);
    return st;
}

wt_status wg_op_matmul_fused(wt_context *ctx, const wt_tensor *a, const wt_tensor *b,
                             const wt_tensor *bias, wt_matmul_act act, wt_tensor *out)
{
    return wg_op_matmul_aux(ctx, a, b, bias, act, NULL, out);
}

/* The epilogue's operand where gemm.wgsl takes it: f32, [B, M, N]
 * contiguous like out, and a fifth storage binding on the device. */
static bool aux_fits(wt_context *ctx, const wt_tensor *aux, const wt_tensor *out)
{
    if (aux->dtype != WT_F32 || out->dtype != WT_F32 || aux->ndim != 3 || !fits_u32(aux) ||
        wg_get_caps(ctx)->max_storage_buffers < 5)
        return false;
    int64_t s = 1;
    for (int i = 2; i >= 0; i--) {
        if (aux->shape[i] != out->shape[i] || (aux->shape[i] > 1 && aux->strides[i] != s)) return false;
        s *= aux->shape[i];
    }
    return true;
}

wt_status wg_op_matmul_aux(wt_context *ctx, const wt_tensor *a, const wt_tensor *b, const wt_tensor *bias,
                           wt_matmul_act act, const wt_tensor *aux, wt_tensor *out)
{
    bool f16 = a->dtype == WT_F16;
    if (act == WT_MATMUL_ACT_GELU_GRAD && !aux)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "matmul: GELU's backward needs its operand");
    if (aux && !aux_fits(ctx, aux, out))
        return wt_fail(WT_ERR_UNSUPPORTED, "matmul: the epilogue's operand needs f32, the result's layout and "
                                           "five storage buffers");
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
    if (f16 && (M == 1 || N == 1) && !bias && act == WT_MATMUL_ACT_NONE && !aux && fits_u32(a) &&
        fits_u32(b) && fits_u32(out)) {
        wt_status vst = gemv_f16(ctx, a, b, out);
        if (vst != WT_ERR_UNSUPPORTED) return vst;
    }
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

    if (f16 && !aux) {
        wt_status mst = gemm_matrix(ctx, a, b, bias, act, out);
        if (mst != WT_ERR_UNSUPPORTED) return mst;
    }
    /* Walk k fastest in a unless a is stored column-major (unit m stride);
     * walk n fastest in b unless b is (unit k stride). */
    bool a_k_fast = !(a->strides[1] == 1 && a->strides[2] != 1);
    bool b_n_fast = !(b->strides[1] == 1 && b->strides[2] != 1);
    /* One batch entry: its batch stride (any number for an axis of 1) is
     * never used. */
    int64_t a_bs = B == 1 ? 0 : a->strides[0], b_bs = B == 1 ? 0 : b->strides[0];
    bool a_vec = a_k_fast ? a->strides[2] == 1 && vec_ok(a->offset, a_bs, a->strides[1], K)
                          : vec_ok(a->offset, a_bs, a->strides[2], M);
    bool b_vec = b_n_fast ? b->strides[2] == 1 && vec_ok(b->offset, b_bs, b->strides[1], N)
                          : vec_ok(b->offset, b_bs, b->strides[2], K);
    if (M == 1) a_vec = a_vec && a_k_fast; /* one row: its "m stride" means nothing */
    if (N == 1) b_vec = b_vec && !b_n_fast;
    gemm_job job = {
        .a = a, .b = b, .bias = bias, .out = out, .aux = aux, .act = act,
        .B = (uint64_t)B, .M = (uint64_t)M, .N = (uint64_t)N, .K = (uint64_t)K,
        .a_k_fast = a_k_fast, .b_n_fast = b_n_fast, .a_vec = a_vec, .b_vec = b_vec,
    };
    gemm_params p = {
        .b_offset = (uint32_t)b->offset, .b_batch_stride = (uint32_t)b->strides[0],
        .b_row_stride = (uint32_t)b->strides[1], .b_col_stride = (uint32_t)b->strides[2],
        .a_batch_mod = (uint32_t)B,
    };
    return gemm_run(ctx, &job, &p);
}

/* ------------------------------------------ convolution as a product */

/* The most bytes of window rows gemm_conv_matrix stages at once (and
 * never more than one binding): 32 images of 64 x 56^2 under a 3 x 3
 * window take 116 MB. */
#define CONV_MATRIX_COL_BYTES (128ull << 20)

/* A stack tensor of halves over a storage, for the product's operands. */
static wt_tensor half_view(wt_storage *s, int64_t offset, int64_t d0, int64_t d1, int64_t d2, int64_t s0,
                           int64_t s1, int64_t s2)
{
    wt_tensor t;
    memset(&t, 0, sizeof t);
    t.storage = s, t.dtype = WT_F16, t.ndim = 3, t.offset = offset;
    t.shape[0] = d0, t.shape[1] = d1, t.shape[2] = d2;
    t.strides[0] = s0, t.strides[1] = s1, t.strides[2] = s2;
    t.numel = d0 * d1 * d2;
    return t;
}

/* An f16 convolution (one group, not transposed) on the matrix units,
 * when the context asked for them: by default the implicit product
 * (conv_matrix_implicit); with WT_CONV_MATRIX_IM2COL the windows of x as columns of halves,
 * [KP, PP] an image (wgsl/im2col_rows_f16.wgsl; KP = C KH KW and PP =
 * OH*OW rounded up to 8, zeros past them), w as [O, KP] (copied when its
 * rows are not whole 16-byte words), and per image out [O, OH*OW] = w @
 * columns through the tiled kernel (b row-major): out's NCHW layout as it
 * stands, the bias added per row. Images go in chunks of at most
 * CONV_MATRIX_COL_BYTES of columns. WT_ERR_UNSUPPORTED (declined, with
 * why, when asked) otherwise. On an H200, 32 x 64 x 56^2 by 64 3 x 3:
 * 142 us of product and 77 of columns (profiled GPU time); the columns as
 * rows [OH*OW, KP] instead (b stored [n, k], a word of eight k of one
 * pixel) took 161 and 323. */
static wt_status conv_matrix_implicit(wt_context *ctx, const wt_tensor *x, const wt_tensor *w, const wt_tensor *bias,
                                      const wt_window2d *win, wt_tensor *out);

static wt_status gemm_conv_matrix(wt_context *ctx, const wt_tensor *x, const wt_tensor *w, const wt_tensor *bias,
                                  const wt_window2d *win, int64_t groups, wt_tensor *out)
{
    if (x->dtype != WT_F16 || !wg_matrix_asked(ctx)) return WT_ERR_UNSUPPORTED;
    const wg_caps *caps = wg_get_caps(ctx);
    const char *gap = wg_matrix_device_gap(caps);
    if (gap) return matrix_declined(ctx, gap);
    if (wt_knob_number(WT_KNOB_GEMM_MATRIX_OFF, 0)) return matrix_declined(ctx, "WT_GEMM_MATRIX_OFF is set");
    if (groups != 1) return matrix_declined(ctx, "a grouped convolution");
    const int64_t N = x->shape[0], O = w->shape[0], P = out->shape[2] * out->shape[3];
    const int64_t K = w->shape[1] * win->kernel_h * win->kernel_w, KP = (K + 7) / 8 * 8, PP = (P + 7) / 8 * 8;
    if (!wt_layout_is_contiguous(out->ndim, out->shape, out->strides) || out->offset % 2 || P % 2)
        return matrix_declined(ctx, "a convolution's output not contiguous with an even plane");
    if (!wt_layout_is_contiguous(w->ndim, w->shape, w->strides))
        return matrix_declined(ctx, "a convolution's weight not contiguous");
    const uint64_t per_image = (uint64_t)PP * KP * 2;
    const uint64_t budget = CONV_MATRIX_COL_BYTES < caps->max_storage_binding ? CONV_MATRIX_COL_BYTES
                                                                              : caps->max_storage_binding;
    if (!wt_knob_number(WT_KNOB_CONV_MATRIX_IM2COL, 0)) return conv_matrix_implicit(ctx, x, w, bias, win, out);
    if (per_image > budget) return matrix_declined(ctx, "one image's window rows exceed one binding");
    int64_t chunk = (int64_t)(budget / per_image);
    if (chunk > N) chunk = N;
    wt_storage *col = NULL, *wpad = NULL;
    wt_status st = wg_scratch(ctx, (size_t)(chunk * per_image), &col);
    /* w's rows as they are when they are whole 16-byte words. */
    const bool copy_w = K != KP || w->offset % 8;
    if (st == WT_OK && copy_w && (st = wg_scratch(ctx, (size_t)(O * KP * 2), &wpad)) == WT_OK)
        st = wg_op_im2col_rows_f16(ctx, NULL, w, win, 0, 0, KP, 8, wpad);
    for (int64_t n0 = 0; n0 < N && st == WT_OK; n0 += chunk) {
        const int64_t images = N - n0 < chunk ? N - n0 : chunk;
        st = wg_op_im2col_rows_f16(ctx, x, w, win, n0, images, KP, PP, col);
        if (st != WT_OK) break;
        wt_tensor a = copy_w ? half_view(wpad, 0, images, O, KP, 0, KP, 1)
                             : half_view(w->storage, w->offset, images, O, KP, 0, KP, 1);
        wt_tensor b = half_view(col, 0, images, KP, P, KP * PP, PP, 1);
        wt_tensor o = half_view(out->storage, out->offset + n0 * O * P, images, O, P, O * P, P, 1);
        st = gemm_matrix_rows(ctx, &a, &b, bias, true, WT_MATMUL_ACT_NONE, &o);
        /* The first chunk may still go the other way; a later one cannot. */
        if (st == WT_ERR_UNSUPPORTED && n0 > 0)
            st = wt_fail(WT_ERR_BACKEND, "webgpu conv2d: the matrix units declined a later chunk of images");
    }
    if (wpad) wg_scratch_release(ctx, wpad);
    if (col) wg_scratch_release(ctx, col);
    return st;
}

/* An f16 convolution (one group, not transposed) on the matrix units as
 * an implicit product (wgsl/gemm_matrix_conv.wgsl): the tiled kernel's
 * workgroups gather each k slab of the windows from x into workgroup
 * memory themselves, so that no window matrix is written; w as [O, KP]
 * (copied when its rows are not whole 16-byte words), all images in one
 * dispatch, out in NCHW with the bias per output channel. The tile and k
 * slab: CONV_MATRIX_TILE, or WT_GEMM_MATRIX_TILE and WT_GEMM_MATRIX_BK,
 * or the tiled product's choice where that one does not fit the device;
 * the slabs always in fragment blocks.
 * WT_ERR_UNSUPPORTED (declined, with why) when it cannot run. */
static const uint32_t CONV_MATRIX_TILE[5] = {2, 2, 2, 2, 32};

static wt_status conv_matrix_implicit(wt_context *ctx, const wt_tensor *x, const wt_tensor *w, const wt_tensor *bias,
                                      const wt_window2d *win, wt_tensor *out)
{
    const wg_caps *caps = wg_get_caps(ctx);
    const int64_t N = x->shape[0], O = w->shape[0], P = out->shape[2] * out->shape[3];
    const int64_t K = w->shape[1] * win->kernel_h * win->kernel_w, KP = (K + 7) / 8 * 8;
    const int64_t span[] = {win->in_h, win->in_w, win->out_w, win->kernel_h, win->kernel_w, win->stride_h,
                            win->stride_w, win->pad_top, win->pad_left, win->dilation_h, win->dilation_w,
                            win->dilation_h * win->kernel_h + win->in_h + win->pad_top,
                            win->dilation_w * win->kernel_w + win->in_w + win->pad_left,
                            win->stride_h * win->out_h + win->in_h, win->stride_w * win->out_w + win->in_w};
    for (size_t i = 0; i < sizeof span / sizeof span[0]; i++)
        if (span[i] < 0 || span[i] >= (1ll << 30)) return matrix_declined(ctx, "a window beyond 30-bit sizes");
    if (O * KP >= (1ll << 31)) return matrix_declined(ctx, "a weight beyond 32-bit indexing");
    uint64_t knob_bk = wt_knob_count(WT_KNOB_GEMM_MATRIX_BK, 0);
    if (knob_bk != 16 && knob_bk != 32 && knob_bk != 64) knob_bk = 0;
    uint64_t bk = knob_bk ? knob_bk : 32;
    uint32_t knob_tile[4];
    const uint32_t *t = NULL;
    if (matrix_tile_knob(true, knob_tile) && 32 * knob_tile[2] * knob_tile[3] <= caps->max_invocations &&
        tiled_bytes(MATRIX_TILED, knob_tile, bk, false) <= caps->max_workgroup_storage)
        t = knob_tile;
    /* Without the knobs: 64 x 64 tiles of four subgroups of 2 x 2 results
     * and k slabs of 32 (CONV_MATRIX_TILE). The gather wants more
     * invocations for fewer words each than a product with a b in memory:
     * on an H200, 32 x 64 x 56^2 by 64 3 x 3 took 169 us with it against
     * 237 us with the product's choice there (64 x 128, two subgroups of
     * 4 x 4, k 16). */
    if (!t && 32 * CONV_MATRIX_TILE[2] * CONV_MATRIX_TILE[3] <= caps->max_invocations &&
        tiled_bytes(MATRIX_TILED, CONV_MATRIX_TILE, knob_bk ? knob_bk : CONV_MATRIX_TILE[4], false) <=
            caps->max_workgroup_storage) {
        t = CONV_MATRIX_TILE;
        bk = knob_bk ? knob_bk : CONV_MATRIX_TILE[4];
    }
    if (!t) t = tiled_tile_choose(caps, MATRIX_TILED, false, (uint64_t)N, (uint64_t)O, (uint64_t)P, knob_bk, &bk);
    if (!t) return matrix_declined(ctx, "no workgroup tile fits the shape or the device");
    const uint64_t tiles_m = ceil_div((uint64_t)O, 16u * t[0] * t[2]), tiles_n = ceil_div((uint64_t)P, 16u * t[1] * t[3]);
    if ((uint64_t)N * tiles_m * tiles_n >= (1ull << 32)) return matrix_declined(ctx, "too many output tiles");

    wt_storage *wpad = NULL;
    wt_status st = WT_OK;
    const bool copy_w = K != KP || w->offset % 8;
    if (copy_w && (st = wg_scratch(ctx, (size_t)(O * KP * 2), &wpad)) == WT_OK)
        st = wg_op_im2col_rows_f16(ctx, NULL, w, win, 0, 0, KP, 8, wpad);
    if (st == WT_OK) {
        const wt_tensor *xv = x;
        conv_matrix_params p = {
            .win = {.in_h = (int32_t)win->in_h, .in_w = (int32_t)win->in_w, .out_h = (int32_t)win->out_h,
                    .out_w = (int32_t)win->out_w, .kernel_h = (int32_t)win->kernel_h,
                    .kernel_w = (int32_t)win->kernel_w, .stride_h = (int32_t)win->stride_h,
                    .stride_w = (int32_t)win->stride_w, .pad_top = (int32_t)win->pad_top,
                    .pad_left = (int32_t)win->pad_left, .pad_bottom = (int32_t)win->pad_bottom,
                    .pad_right = (int32_t)win->pad_right, .dil_h = (int32_t)win->dilation_h,
                    .dil_w = (int32_t)win->dilation_w},
            .x = {.offset = (uint32_t)xv->offset,
                  .strides = {(uint32_t)xv->strides[0], (uint32_t)xv->strides[1], (uint32_t)xv->strides[2],
                              (uint32_t)xv->strides[3]}},
            .images = (uint32_t)N, .m = (uint32_t)O, .n = (uint32_t)P, .k = (uint32_t)K,
            .a_offset = copy_w ? 0 : (uint32_t)w->offset, .lda = (uint32_t)KP,
            .tiles_m = (uint32_t)tiles_m, .tiles_n = (uint32_t)tiles_n,
            .out_offset = (uint32_t)out->offset, .bias_offset = bias ? (uint32_t)bias->offset : 0,
        };
        char prelude[512];
        snprintf(prelude, sizeof prelude,
                 "enable f16;\nenable chromium_experimental_subgroup_matrix;\n"
                 "diagnostic(off, chromium.subgroup_matrix_uniformity);\n"
                 "const SG_M: u32 = %uu;\nconst SG_N: u32 = %uu;\nconst WG_M: u32 = %uu;\n"
                 "const WG_N: u32 = %uu;\nconst B_T: bool = false;\nconst BIAS: bool = %s;\n"
                 "const ACT: u32 = 0u;\nconst BK: u32 = %uu;\nconst TAP_W: u32 = %uu;\n"
                 "const TAPS: u32 = %uu;\nconst OW: u32 = %uu;\n",
                 t[0], t[1], t[2], t[3], bias ? "true" : "false", (unsigned)bk, (unsigned)win->kernel_w,
                 (unsigned)(win->kernel_h * win->kernel_w), (unsigned)(win->out_w > 0 ? win->out_w : 1));
        wg_launch l = {
            .shader = "gemm_matrix_conv",
            .prelude = prelude,
            .libraries = {"window", "gemm_matrix_smem_blocks", "gemm_epilogue", wg_f16_library(ctx)},
            .params = &p,
            .params_size = sizeof p,
            .bindings = {{copy_w ? wpad : w->storage, false}, {x->storage, false}, {out->storage, true},
                         {bias ? bias->storage : x->storage, false}},
            .nbindings = 4,
            .workgroups = (uint64_t)N * tiles_m * tiles_n,
        };
        st = wg_dispatch(ctx, &l);
        if (st == WT_OK) wg_matrix_note(ctx, NULL);
    }
    if (wpad) wg_scratch_release(ctx, wpad);
    return st;
}

/* out [N, O, OH', OW'] = conv (or, transposed, its adjoint) of x [N, C, .,
 * .] (any strides) with w [O, Cg, KH, KW] (contiguous) plus bias [O]: per
 * image and group, w_g [Og, Cg KH KW] @ im2col(x_g) [Cg KH KW, OH' OW'],
 * with the columns gathered from x inside the product's loads
 * (gemm_b_conv.wgsl) instead of a column matrix in memory. x's plane is
 * win's input (conv) or output (transposed). f32, or f16 throughout (f32
 * sums). */
static wt_status gemm_conv(wt_context *ctx, const wt_tensor *x, const wt_tensor *w, const wt_tensor *bias,
                           const wt_window2d *win, int64_t groups, bool transposed, wt_tensor *out)
{
    const wt_dtype dt = x->dtype;
    const int64_t N = x->shape[0], C = x->shape[1], O = w->shape[0], Cg = C / groups, Og = O / groups;
    const int64_t KK = win->kernel_h * win->kernel_w, K = Cg * KK, P = out->shape[2] * out->shape[3];
    const bool f16 = dt == WT_F16;
    if ((dt != WT_F32 && dt != WT_F16) || w->dtype != dt || out->dtype != dt || (bias && bias->dtype != dt))
        return wt_fail(WT_ERR_UNSUPPORTED, "webgpu conv2d: f32 or f16 operands of one dtype");
    if (f16 && (P % 2 || out->offset % 2 || (bias && bias->offset % 2)))
        return wt_fail(WT_ERR_UNSUPPORTED, "webgpu conv2d: f16 planes of an even size only");
    if (!fits_u32(x) || !fits_u32(w) || !fits_u32(out) || (bias && !fits_u32(bias)) || K >= (1ll << 31) ||
        N * groups >= (1ll << 31) || P >= (1ll << 31))
        return wt_fail(WT_ERR_UNSUPPORTED, "webgpu conv2d: sizes beyond 32-bit indexing");
    if (out->numel == 0) return WT_OK;
    if (f16 && !transposed) {
        wt_status mst = gemm_conv_matrix(ctx, x, w, bias, win, groups, out);
        if (mst != WT_ERR_UNSUPPORTED) return mst;
    }
    /* w as [groups, Og, K]. */
    int64_t ash[3] = {groups, Og, K}, ast[3] = {Og * K, K, 1};
    wt_tensor *a = NULL;
    wt_status st = wt_tensor_view(w, 3, ash, ast, w->offset, &a);
    if (st != WT_OK) return st;
    const int64_t *xs = x->strides;
    const bool pointwise = !transposed && KK == 1 && win->stride_h == 1 && win->stride_w == 1 &&
                           win->pad_top == 0 && win->pad_left == 0 && win->out_h == win->in_h &&
                           win->out_w == win->in_w && xs[3] == 1 && (win->in_h == 1 || xs[2] == win->in_w);
    gemm_job job = {
        .a = a, .b = x, .bias = bias, .out = out, .act = WT_MATMUL_ACT_NONE,
        .B = (uint64_t)(N * groups), .M = (uint64_t)Og, .N = (uint64_t)P, .K = (uint64_t)K,
        .a_k_fast = true, .b_n_fast = true, .a_vec = vec_ok(w->offset, Og * K, K, K),
        .b_vec = pointwise && vec_ok(x->offset, xs[0], Cg * xs[1], P) && xs[1] % 4 == 0,
        .conv = true, .pointwise = pointwise, .bias_rows = true, .transposed = transposed,
    };
    gemm_params p = {
        .b_offset = (uint32_t)x->offset, .a_batch_mod = (uint32_t)groups, .bias_rows = (uint32_t)O,
        .c_kk = (uint32_t)KK, .c_kw = (uint32_t)win->kernel_w, .c_ow = (uint32_t)out->shape[3],
        .c_groups = (uint32_t)groups, .c_sh = (uint32_t)win->stride_h, .c_sw = (uint32_t)win->stride_w,
        .c_dh = (uint32_t)win->dilation_h, .c_dw = (uint32_t)win->dilation_w,
        .c_pt = (uint32_t)win->pad_top, .c_pl = (uint32_t)win->pad_left,
        .c_in_h = (uint32_t)x->shape[2], .c_in_w = (uint32_t)x->shape[3],
        .c_xs_n = (uint32_t)xs[0], .c_xs_c = (uint32_t)xs[1], .c_xs_h = (uint32_t)xs[2],
        .c_xs_w = (uint32_t)xs[3], .c_cg = (uint32_t)Cg,
    };
    st = gemm_run(ctx, &job, &p);
    wt_tensor_release(a);
    return st;
}

wt_status wg_gemm_conv2d(wt_context *ctx, const wt_tensor *x, const wt_tensor *w, const wt_tensor *bias,
                         const wt_window2d *win, int64_t groups, wt_tensor *out)
{
    return gemm_conv(ctx, x, w, bias, win, groups, false, out);
}

wt_status wg_gemm_conv_transpose2d(wt_context *ctx, const wt_tensor *x, const wt_tensor *w, const wt_tensor *bias,
                                   const wt_window2d *win, int64_t groups, wt_tensor *out)
{
    return gemm_conv(ctx, x, w, bias, win, groups, true, out);
}
