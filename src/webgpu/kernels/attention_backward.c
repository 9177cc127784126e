/* WebGPU backward of attention without a mask (core/node.h,
 * ATTENTION_BACKWARD), flash-attention 2's scheme: nothing of size
 * Sq x Skv is stored.
 *
 * Tiled (head dims equal, a multiple of 4, tiles within the device's
 * workgroup memory): wgsl/attention_backward_pipelined_q.wgsl (a workgroup
 * a block of 32 queries: the rows' log-sum-exp L, D = dout . out from the
 * forward's output, then dq) and wgsl/attention_backward_pipelined_kv.wgsl
 * (a workgroup a block of 32 keys: dk and dv over the query blocks that see
 * them, P recomputed from L), each loading the next tile's rows from
 * global memory into registers while the current one is computed, and,
 * where the device's workgroup memory holds them, taking larger tiles
 * between barriers: K and V side by side in pass 1, 32 queries a tile in
 * pass 2 (WT_ATTN_BWD_KERNEL=small: the smallest forms only). Other
 * shapes: the untiled kernels, a thread a row
 * (wgsl/attention_backward_q.wgsl, then _kv.wgsl).
 * On the H200 (48 KiB of workgroup memory) a GPT layer's backward (B 64,
 * H 6, S 256, D 64, causal) took 467 + 632 us with the first tiled pair
 * (no prefetch, since removed: the smallest forms take its workgroup
 * memory, so they run wherever it did), 404 + 560 with the smallest forms
 * and 391 + 449 with the larger ones. Cutting the tile products into roles
 * (half the threads the scores, half dout . v, 4 x 4 each) ran slower
 * there (429 + 467 us) and was not kept. The key kernel's forms
 * (key_kernel_forms: warps of 4 x 8 keys x queries with a thread's keys 8
 * apart, padded score rows, the scores as FMA chains) took 437.8 us of
 * the GPT layer's backward on an H200 against 464.4 without them
 * (WT_ATTN_BWD_KEYS=main); dispatching the key blocks that see the most
 * queries first over all heads (458.4 with the forms), the next tile
 * loaded after the scores (473.6 with both) and the forms on the smallest
 * tile (523.4) were slower and not kept.
 *
 * Short sequences (dq_product_fits): the key kernel also stores scale ds
 * and dq = ds @ K runs as its own kernel (wgsl/attention_backward_dq.wgsl,
 * dq_kernel) or, with WT_ATTN_BWD_DQ=product, through the library's GEMM
 * (dq_product), the query kernel's walk dropped; the key kernel's
 * statistics then come from wgsl/attention_backward_stats.wgsl (the
 * forward's log-sum-exp at hand) or from the query kernel without its dq
 * (DQ_PASS false). On the H200 the GPT layer's dq took 152 us by the
 * kernel against 75 + 190 + 75 us by the GEMM on heads laid out [B, S, H,
 * D] (the keys' dense copy, the product, the copy into dq); forms of the
 * kernel with 8 x 8 results a thread (128 or 64 rows a workgroup) took 280
 * and 252 us, 32 rows of 4 x 8 a thread 169, and were not kept. */
#include "webgpu/wg.h"
#include "webgpu/wg_params.h"

#include <stdio.h>
#include <string.h>

#define ATTN_BW_WG 64u
/* The untiled rows' private arrays are sized by the prelude: larger heads
 * would spill too much per thread; the rule composes them instead. */
#define ATTN_BW_MAX_D 256
/* The tiled kernels' shapes (their WGSL constants). */
#define TILED_BW_Q_ROWS 32u /* queries of a pass-1 workgroup */
#define TILED_BW_KEYS 32u   /* keys of a pass-2 workgroup, and of a pass-1 key tile */
#define TILED_BW_THREADS 128u
#define TILED_BW_TX 16u

/* The pipelined kernels' workgroup memory: pass 1 with K and V side by side
 * (split) or in one buffer; pass 2 with qpt queries a thread (tiles of 16
 * qpt queries). */
static uint64_t pipelined_q_bytes(uint64_t dq, bool split)
{
    return 16u * (dq + 1) * (2u * TILED_BW_Q_ROWS + (split ? 2u : 1u) * TILED_BW_KEYS) +
           16u * TILED_BW_KEYS * TILED_BW_Q_ROWS / 4;
}

static uint64_t pipelined_kv_bytes(uint64_t dq, uint32_t qpt, bool pad_p)
{
    const uint64_t bq = 16u * qpt;
    return 16u * (dq + 1) * (2u * TILED_BW_KEYS + 2u * bq) + 2u * 16u * bq * (TILED_BW_KEYS / 4 + (pad_p ? 1 : 0)) +
           8u * bq;
}

/* The key kernel's forms (wgsl/attention_backward_pipelined_kv.wgsl, its
 * header says what each does); WT_ATTN_BWD_KEYS names those to take
 * ("main": none of them, the kernel as it was before them). */
typedef struct {
    bool lanes, pad_p, fma_s;
} key_forms;

static key_forms key_kernel_forms(void)
{
    const key_forms defaults = {.lanes = true, .pad_p = true, .fma_s = true};
    const char *knob = wt_knob_text(WT_KNOB_ATTN_BWD_KEYS);
    if (!knob) return defaults;
    key_forms f = {0};
    if (strcmp(knob, "main") == 0) return f;
    /* A comma list of the forms' names; anything else: the defaults. */
    for (const char *t = knob; *t;) {
        const size_t n = strcspn(t, ",");
        if (n == 5 && strncmp(t, "lanes", n) == 0) f.lanes = true;
        else if (n == 3 && strncmp(t, "pad", n) == 0) f.pad_p = true;
        else if (n == 3 && strncmp(t, "fma", n) == 0) f.fma_s = true;
        else return defaults;
        t += n + (t[n] == ',');
    }
    return f;
}

static bool tiled_fits(const wt_context *ctx, uint64_t D, uint64_t Dv)
{
    const wg_caps *caps = wg_get_caps(ctx);
    if (D != Dv || D == 0 || D % 4 || caps->max_invocations < TILED_BW_THREADS) return false;
    const uint64_t dq = D / 4, limit = caps->max_workgroup_storage;
    return pipelined_q_bytes(dq, false) <= limit && pipelined_kv_bytes(dq, 1, false) <= limit;
}

/* WT_ATTN_BWD_KERNEL=small: the pipelined kernels in their smallest forms
 * only (the prefetch without the larger tiles, for measurements). */
static bool pipelined_small(void)
{
    const char *knob = wt_knob_text(WT_KNOB_ATTN_BWD_KERNEL);
    return knob && strcmp(knob, "small") == 0;
}

/* dq as a matrix product (pipelined kernels): the key kernel stores
 * scale ds, [B, Hq, Sq, Skv] in all, and dq = ds @ K runs through the
 * library's GEMM, with the query kernel reduced to the statistics the key
 * kernel needs. Only for short sequences: at most DS_PRODUCT_MAX_CELLS of
 * ds a head (256 x 256, so a long sequence never materialises a
 * [seq, seq] matrix) and DS_PRODUCT_MAX_BYTES in all. WT_ATTN_BWD_DQ=kernel
 * keeps the query kernel. */
#define DS_PRODUCT_MAX_CELLS (256u * 256u)
#define DS_PRODUCT_MAX_BYTES (128ull << 20)

static bool dq_product_fits(const wt_context *ctx, uint64_t B, uint64_t Hq, uint64_t Sq, uint64_t Skv)
{
    const char *knob = wt_knob_text(WT_KNOB_ATTN_BWD_DQ);
    if (knob && strcmp(knob, "kernel") == 0) return false;
    const wg_caps *caps = wg_get_caps(ctx);
    /* The key kernel's ninth binding (8 storage buffers); whole quads of
     * keys a row. */
    if (caps->max_storage_buffers < 8 || Sq == 0 || Skv == 0 || Skv % 4 || Sq * Skv > DS_PRODUCT_MAX_CELLS)
        return false;
    const uint64_t bytes = sizeof(float) * B * Hq * Sq * Skv;
    return bytes <= DS_PRODUCT_MAX_BYTES && bytes <= caps->max_storage_binding;
}

/* A contiguous f32 view [d0, d1, d2] of storage s. */
/* An f32 view of a storage for the product's and the copy's operands. */
static wt_tensor f32_strided(wt_storage *s, int64_t offset, int nd, const int64_t *shape, const int64_t *strides)
{
    wt_tensor t;
    memset(&t, 0, sizeof t);
    t.storage = s, t.dtype = WT_F32, t.ndim = nd, t.offset = offset, t.numel = 1;
    for (int i = 0; i < nd; i++) {
        t.shape[i] = shape[i], t.strides[i] = strides[i];
        t.numel *= shape[i];
    }
    return t;
}

static wt_tensor f32_view(wt_storage *s, int64_t d0, int64_t d1, int64_t d2)
{
    return f32_strided(s, 0, 3, (const int64_t[]){d0, d1, d2}, (const int64_t[]){d1 * d2, d2, 1});
}

/* WT_ATTN_BWD_DQ=product: dq = ds @ K through the library's GEMM instead
 * of wgsl/attention_backward_dq.wgsl. */
static bool dq_by_gemm(void)
{
    const char *knob = wt_knob_text(WT_KNOB_ATTN_BWD_DQ);
    return knob && strcmp(knob, "product") == 0;
}

#define DQ_KERNEL_ROWS 64u  /* query rows of a dq-kernel workgroup */
#define DQ_KERNEL_QUADS 16u /* head-dim quads of a dq-kernel workgroup */

/* dq = ds @ K by wgsl/attention_backward_dq.wgsl: K read and dq written in
 * their layouts (rows, the prelude's q_head .. k_at), causal blocks
 * walking only the keys they see, which the key kernel then need not
 * write as zeros (ZERO_DS false). */
static wt_status dq_kernel(wt_context *ctx, wt_storage *ds, const wt_tensor *k, wt_tensor *dq, uint64_t B,
                           uint64_t Hq, uint64_t Hkv, uint64_t Sq, uint64_t Skv, uint64_t d4, bool causal,
                           const char *rows)
{
    /* Within 32 bits: tiled_sizes_ok bounds B Hq (Sq / 32) by 2^26, and the
     * tiled kernels' workgroup memory the head dim (dblocks). */
    const uint64_t rblocks = (Sq + DQ_KERNEL_ROWS - 1) / DQ_KERNEL_ROWS,
                   dblocks = (d4 + DQ_KERNEL_QUADS - 1) / DQ_KERNEL_QUADS, groups = B * Hq * rblocks * dblocks;
    char prelude[1280];
    snprintf(prelude, sizeof prelude, "const DQ: u32 = %lluu;\nconst CAUSAL: bool = %s;\n%s", (unsigned long long)d4,
             causal ? "true" : "false", rows);
    attn_bw_tiled_params p = {.hq = (uint32_t)Hq, .hkv = (uint32_t)Hkv, .sq = (uint32_t)Sq, .skv = (uint32_t)Skv,
                              .group = (uint32_t)(Hq / Hkv), .blocks = (uint32_t)rblocks,
                              .workgroups = (uint32_t)groups, .dq = (uint32_t)d4, .tile = (uint32_t)dblocks};
    wg_launch l = {
        .shader = "attention_backward_dq",
        .prelude = prelude,
        .params = &p,
        .params_size = sizeof p,
        .bindings = {{ds, false}, {k->storage, false}, {dq->storage, true}},
        .nbindings = 3,
        .workgroups = groups,
    };
    return wg_dispatch(ctx, &l);
}

/* dq = ds @ K (ds scaled by the key kernel). The q heads of a kv head are
 * consecutive: the group's rows of ds and of dq are one matrix against
 * the kv head's keys. Causal, the zeros above the diagonal are multiplied
 * too: on an H200 the GPT layer's product took 190 us; four products of
 * row blocks over the keys each sees (10/16 of the work, into a
 * chunk-major scratch and a strided copy to dq's order, the GEMM writing
 * whole batches contiguously) took 184 + 21 us and were not kept.
 * k and dq are [B, H, S, D] (offset 0: wt_attention_heads_layout), dense
 * or the views of [B, S, H, D]; in the second case the (b, head) batches
 * are not one stride apart for the product, so it runs on dense copies. */
static wt_status dq_product(wt_context *ctx, wt_storage *ds, const wt_tensor *k, wt_tensor *dq, uint64_t B,
                            uint64_t Hq, uint64_t Hkv, uint64_t Sq, uint64_t Skv, uint64_t D)
{
    const int64_t G = (int64_t)(Hq / Hkv), BH = (int64_t)(B * Hkv);
    if (wt_attention_heads_layout(k) == 0 && wt_attention_heads_layout(dq) == 0) {
        wt_tensor ds_m = f32_view(ds, BH, G * (int64_t)Sq, (int64_t)Skv);
        wt_tensor k_m = f32_view(k->storage, BH, (int64_t)Skv, (int64_t)D);
        wt_tensor dq_m = f32_view(dq->storage, BH, G * (int64_t)Sq, (int64_t)D);
        return wg_op_matmul_fused(ctx, &ds_m, &k_m, NULL, WT_MATMUL_ACT_NONE, &dq_m);
    }
    /* Heads laid out [B, S, H, D]: the keys copied dense, one product
     * into a dense scratch, and one copy into dq's layout (a product a kv
     * head at the keys' row stride instead, 64 batches each here, left the
     * GPU a third full and was slower than the query kernel on an H200). */
    const int64_t b = (int64_t)B, hkv = (int64_t)Hkv, rows = G * (int64_t)Sq, skv = (int64_t)Skv, d = (int64_t)D;
    wt_storage *kd = NULL, *tmp = NULL;
    wt_status st = wg_scratch(ctx, sizeof(float) * B * Hkv * Skv * D, &kd);
    if (st == WT_OK) st = wg_scratch(ctx, sizeof(float) * B * Hq * Sq * D, &tmp);
    if (st == WT_OK) {
        const int64_t shape[4] = {b, hkv, skv, d};
        wt_tensor dense = f32_strided(kd, 0, 4, shape, (const int64_t[]){hkv * skv * d, skv * d, d, 1});
        st = wg_op_copy_into(ctx, k, &dense);
    }
    if (st == WT_OK) {
        wt_tensor ds_m = f32_view(ds, BH, rows, skv);
        wt_tensor k_m = f32_view(kd, BH, skv, d);
        wt_tensor o_m = f32_view(tmp, BH, rows, d);
        st = wg_op_matmul_fused(ctx, &ds_m, &k_m, NULL, WT_MATMUL_ACT_NONE, &o_m);
    }
    if (st == WT_OK) {
        /* tmp is [B, Hkv, G, Sq, D]; dq's q head h * G + g at its strides */
        const int64_t shape[5] = {b, hkv, G, (int64_t)Sq, d};
        wt_tensor src =
            f32_strided(tmp, 0, 5, shape, (const int64_t[]){hkv * rows * d, rows * d, (int64_t)Sq * d, d, 1});
        wt_tensor dst = f32_strided(dq->storage, dq->offset, 5, shape,
                                    (const int64_t[]){dq->strides[0], G * dq->strides[1], dq->strides[1],
                                                      dq->strides[2], dq->strides[3]});
        st = wg_op_copy_into(ctx, &src, &dst);
    }
    wg_scratch_release(ctx, kd);
    wg_scratch_release(ctx, tmp);
    return st;
}

/* An operand's place in its storage for the pipelined kernels: dense
 * [B, H, S, D] at offset 0, or its heads in rows of `pitch` quads from
 * quad `offset` on (wt_attention_heads_rows: the heads of a linear
 * layer's output, alone or beside others in its rows). */
typedef struct heads_place {
    bool rows;
    uint64_t pitch, offset;
} heads_place;

static bool place_of(const wt_tensor *t, heads_place *pl)
{
    int64_t pitch = 0;
    if (wt_attention_heads_layout(t) == 0) {
        *pl = (heads_place){false, 0, 0};
        return true;
    }
    if (!wt_attention_heads_rows(t, &pitch) || pitch % 4 || t->offset % 4) return false;
    *pl = (heads_place){true, (uint64_t)pitch / 4, (uint64_t)t->offset / 4};
    return true;
}

static bool same_place(const heads_place *a, const heads_place *b)
{
    return a->rows == b->rows && a->pitch == b->pitch && a->offset == b->offset;
}

/* The places of q, k, v, dout and out (pl[0..4]) as the pipelined kernels
 * take them: dout and out alike; k and v both dense or both in rows of one
 * pitch, v's heads at or after k's (v_at is k_at shifted). */
static bool places_agree(const wt_tensor *q, const wt_tensor *k, const wt_tensor *v, const wt_tensor *dout,
                         const wt_tensor *out, heads_place *pl)
{
    const wt_tensor *t[5] = {q, k, v, dout, out};
    for (int i = 0; i < 5; i++)
        if (!place_of(t[i], &pl[i])) return false;
    return same_place(&pl[3], &pl[4]) && pl[1].rows == pl[2].rows && pl[1].pitch == pl[2].pitch &&
           pl[2].offset >= pl[1].offset;
}

/* WGSL of NAME_head(b, h), the quad where head h of batch b starts, and
 * NAME_at(base, s), where its row s starts, for an operand at place pl
 * whose heads and rows the Params fields hn and sn count. No division:
 * the kernels call them in their loads. */
static int place_fns(char *dst, size_t cap, const char *name, const heads_place *pl, const char *hn, const char *sn)
{
    if (!pl->rows)
        return snprintf(dst, cap,
                        "fn %s_head(b: u32, h: u32) -> u32 { return ((b * %s + h) * %s) * DQ; }\n"
                        "fn %s_at(base: u32, s: u32) -> u32 { return base + s * DQ; }\n",
                        name, hn, sn, name);
    return snprintf(dst, cap,
                    "fn %s_head(b: u32, h: u32) -> u32 { return %lluu + b * %s * %lluu + h * DQ; }\n"
                    "fn %s_at(base: u32, s: u32) -> u32 { return base + s * %lluu; }\n",
                    name, (unsigned long long)pl->offset, sn, (unsigned long long)pl->pitch, name,
                    (unsigned long long)pl->pitch);
}

/* The prelude's addressing of every operand: q_head / q_at (q and dq),
 * k_head / k_at (k and dk), v_at (v and dv: k's rows, shifted to v's
 * heads) and g_head / g_at (dout and out). */
static bool place_prelude(char *dst, size_t cap, const heads_place *pl)
{
    size_t n = 0;
    int w = place_fns(dst, cap, "q", &pl[0], "p.hq", "p.sq");
    if (w < 0 || (size_t)w >= cap - n) return false;
    n += (size_t)w;
    w = place_fns(dst + n, cap - n, "k", &pl[1], "p.hkv", "p.skv");
    if (w < 0 || (size_t)w >= cap - n) return false;
    n += (size_t)w;
    w = place_fns(dst + n, cap - n, "g", &pl[3], "p.hq", "p.sq");
    if (w < 0 || (size_t)w >= cap - n) return false;
    n += (size_t)w;
    w = snprintf(dst + n, cap - n, "fn v_at(base: u32, s: u32) -> u32 { return k_at(base, s) + %lluu; }\n",
                 (unsigned long long)(pl[2].offset - pl[1].offset));
    return w >= 0 && (size_t)w < cap - n;
}

/* WT_ATTN_TILED=0 keeps the untiled kernels (as for the forward). */
static bool tiled_allowed(void)
{
    const char *knob = wt_knob_text(WT_KNOB_ATTN_TILED);
    return !(knob && strcmp(knob, "0") == 0);
}

/* The pipelined kernels (the only ones that read heads laid out [B, S, H,
 * D]) run for these operands. */
static bool views_fit(const wt_context *ctx, const wt_tensor *q, const wt_tensor *v)
{
    return tiled_allowed() && tiled_fits(ctx, (uint64_t)q->shape[3], (uint64_t)v->shape[3]);
}

/* The tiled and pipelined kernels' workgroup counts and row indices
 * within 32 bits. */
static bool tiled_sizes_ok(const wt_tensor *q, const wt_tensor *k)
{
    const uint64_t B = (uint64_t)q->shape[0], Hq = (uint64_t)q->shape[1], Sq = (uint64_t)q->shape[2],
                   Hkv = (uint64_t)k->shape[1], Skv = (uint64_t)k->shape[2];
    const uint64_t qgroups = B * Hq * ((Sq + TILED_BW_Q_ROWS - 1) / TILED_BW_Q_ROWS),
                   kgroups = B * Hkv * ((Skv + TILED_BW_KEYS - 1) / TILED_BW_KEYS);
    return qgroups <= UINT32_MAX / 64 && kgroups <= UINT32_MAX / 64 && Sq <= INT32_MAX / 2 && Skv <= INT32_MAX / 2;
}

static wt_status attention_backward_tiled(wt_context *ctx, const wt_tensor *q, const wt_tensor *k,
                                          const wt_tensor *v, const wt_tensor *dout, const wt_tensor *out,
                                          const wt_tensor *lse, bool causal, float scale, wt_tensor *dq,
                                          wt_tensor *dk, wt_tensor *dv)
{
    const uint64_t B = (uint64_t)q->shape[0], Hq = (uint64_t)q->shape[1], Sq = (uint64_t)q->shape[2],
                   D = (uint64_t)q->shape[3], Hkv = (uint64_t)k->shape[1], Skv = (uint64_t)k->shape[2];
    const uint64_t d4 = D / 4, qblocks = (Sq + TILED_BW_Q_ROWS - 1) / TILED_BW_Q_ROWS,
                   kblocks = (Skv + TILED_BW_KEYS - 1) / TILED_BW_KEYS;
    const uint64_t qgroups = B * Hq * qblocks, kgroups = B * Hkv * kblocks;
    if (!tiled_sizes_ok(q, k)) return WT_ERR_UNSUPPORTED;
    const uint32_t dt = (uint32_t)((d4 + TILED_BW_TX - 1) / TILED_BW_TX);
    const bool unrolled = wg_attention_unrolled(ctx);
    /* The larger forms where the workgroup memory holds them (the smallest
     * fit here: tiled_fits). */
    const uint64_t wg_bytes = pipelined_small() ? 0 : wg_get_caps(ctx)->max_workgroup_storage;
    const bool split_kv = pipelined_q_bytes(d4, true) <= wg_bytes;
    const uint32_t qpt = pipelined_kv_bytes(d4, 2, false) <= wg_bytes ? 2u : 1u;
    const key_forms forms = key_kernel_forms();
    /* The padding only where it still fits (the smallest form fits
     * without it: tiled_fits). */
    const bool pad_p = forms.pad_p && pipelined_kv_bytes(d4, qpt, true) <= wg_get_caps(ctx)->max_workgroup_storage;
    const bool by_product = dq_product_fits(ctx, B, Hq, Sq, Skv), by_gemm = by_product && dq_by_gemm();
    /* The forward's log-sum-exp takes a ninth binding (8 storage buffers):
     * where the device allows fewer, the query kernel computes it again. */
    if (lse && wg_get_caps(ctx)->max_storage_buffers < 8) lse = NULL;
    /* Where a head's first row starts (in quads) and where its row s
     * starts, for each operand (place_prelude). */
    heads_place pl[5];
    char rows[1024];
    if (!places_agree(q, k, v, dout, out, pl) || !place_prelude(rows, sizeof rows, pl)) return WT_ERR_UNSUPPORTED;
    /* dk and dv in one storage (the heads of one tensor, as q, k and v of
     * one linear layer's output): one binding the key kernel writes both
     * through, as two writable bindings of one buffer may not alias. */
    const bool dkv_shared = dk->storage == dv->storage;
    char prelude[2560], prelude_kv[3072];
    const int plen = snprintf(
        prelude, sizeof prelude,
        "const DQ: u32 = %lluu;\nconst DT: u32 = %uu;\nconst D_EXACT: bool = %s;\nconst CAUSAL: bool = %s;\n"
        "const UNROLL: bool = %s;\nconst SPLIT_KV: bool = %s;\nconst QPT: u32 = %uu;\n%s",
        (unsigned long long)d4, dt, dt * TILED_BW_TX == d4 ? "true" : "false", causal ? "true" : "false",
        unrolled ? "true" : "false", split_kv ? "true" : "false", qpt, rows);
    memcpy(prelude_kv, prelude, (size_t)plen + 1);
    snprintf(prelude + plen, sizeof prelude - (size_t)plen, "const DQ_PASS: bool = %s;\n%s",
             by_product ? "false" : "true",
             lse ? "const HAVE_LSE: bool = true;\n"
                   "@group(0) @binding(8) var<storage, read> lse_in: array<f32>;\n"
                   "fn load_lse(i: u32) -> f32 { return lse_in[i]; }\n"
                 : "const HAVE_LSE: bool = false;\nfn load_lse(i: u32) -> f32 { return 0.0; }\n");
    const int klen = snprintf(
        prelude_kv + plen, sizeof prelude_kv - (size_t)plen,
        "const LANES: bool = %s;\nconst PAD_P: bool = %s;\nconst FMA_S: bool = %s;\n", forms.lanes ? "true" : "false",
        pad_p ? "true" : "false", forms.fma_s ? "true" : "false");
    const int kvlen = klen + snprintf(
        prelude_kv + plen + klen, sizeof prelude_kv - (size_t)(plen + klen), "%s",
        dkv_shared ? "@group(0) @binding(6) var<storage, read_write> dkv: array<vec4<f32>>;\n"
                     "fn store_dk(i: u32, x: vec4<f32>) { dkv[i] = x; }\n"
                     "fn store_dv(i: u32, x: vec4<f32>) { dkv[i] = x; }\n"
                   : "@group(0) @binding(6) var<storage, read_write> dk: array<vec4<f32>>;\n"
                     "@group(0) @binding(7) var<storage, read_write> dv: array<vec4<f32>>;\n"
                     "fn store_dk(i: u32, x: vec4<f32>) { dk[i] = x; }\n"
                     "fn store_dv(i: u32, x: vec4<f32>) { dv[i] = x; }\n");
    /* ds takes the binding after dk and dv's. */
    const int ds_binding = dkv_shared ? 7 : 8;
    if (!by_product)
        snprintf(prelude_kv + plen + kvlen, sizeof prelude_kv - (size_t)(plen + kvlen),
                 "const WRITE_DS: bool = false;\nconst ZERO_DS: bool = false;\nfn store_ds(i: u32, x: vec4<f32>) {}\n");
    else
        snprintf(prelude_kv + plen + kvlen, sizeof prelude_kv - (size_t)(plen + kvlen),
                 "const WRITE_DS: bool = true;\nconst ZERO_DS: bool = %s;\n"
                 "@group(0) @binding(%d) var<storage, read_write> ds_out: array<vec4<f32>>;\n"
                 "fn store_ds(i: u32, x: vec4<f32>) { ds_out[i] = x; }\n",
                 by_gemm ? "true" : "false", ds_binding);
    attn_bw_tiled_params p = {.hq = (uint32_t)Hq, .hkv = (uint32_t)Hkv, .sq = (uint32_t)Sq, .skv = (uint32_t)Skv,
                              .group = (uint32_t)(Hq / Hkv), .blocks = (uint32_t)qblocks,
                              .workgroups = (uint32_t)qgroups, .scale = scale, .dq = (uint32_t)d4,
                              .tile = TILED_BW_KEYS, .neg_inf = 0xff800000u};
    wt_storage *stats = NULL, *ds = NULL;
    wt_status st = wg_scratch(ctx, sizeof(float) * 2 * B * Hq * Sq, &stats);
    if (st != WT_OK) return st;
    if (by_product) {
        st = wg_scratch(ctx, sizeof(float) * B * Hq * Sq * Skv, &ds);
        if (st != WT_OK) {
            wg_scratch_release(ctx, stats);
            return st;
        }
    }
    wg_launch l = {
        .shader = "attention_backward_pipelined_q",
        .prelude = prelude,
        .params = &p,
        .params_size = sizeof p,
        .bindings = {{q->storage, false}, {k->storage, false}, {v->storage, false}, {dout->storage, false},
                     {dq->storage, true}, {stats, true}, {out->storage, false}, {lse ? lse->storage : NULL, false}},
        .nbindings = lse ? 8 : 7,
        .workgroups = qgroups,
    };
    if (by_product && lse) {
        /* The statistics alone, a thread a row (the query kernel with
         * nothing else to do took 86 us on the GPT layer's backward on an
         * H200, for 50 MB read). */
        attn_bw_stats_params sp = {.rows = (uint32_t)(B * Hq * Sq), .dq = (uint32_t)d4, .hq = (uint32_t)Hq,
                                   .sq = (uint32_t)Sq};
        char stats_prelude[512];
        const int slen = snprintf(stats_prelude, sizeof stats_prelude, "const DQ: u32 = %lluu;\n", (unsigned long long)d4);
        place_fns(stats_prelude + slen, sizeof stats_prelude - (size_t)slen, "g", &pl[3], "p.hq", "p.sq");
        wg_launch sl = {
            .shader = "attention_backward_stats",
            .prelude = stats_prelude,
            .params = &sp,
            .params_size = sizeof sp,
            .bindings = {{dout->storage, false}, {out->storage, false}, {lse->storage, false}, {stats, true}},
            .nbindings = 4,
            .workgroups = (B * Hq * Sq + 63) / 64,
        };
        st = wg_dispatch(ctx, &sl);
    } else {
        st = wg_dispatch(ctx, &l);
    }
    if (st == WT_OK) {
        p.blocks = (uint32_t)kblocks;
        p.workgroups = (uint32_t)kgroups;
        p.tile = 16u * qpt;
        l.shader = "attention_backward_pipelined_kv";
        l.bindings[4] = (wg_binding){stats, false};
        l.bindings[5] = (wg_binding){dk->storage, true};
        int nb = 6;
        if (!dkv_shared) l.bindings[nb++] = (wg_binding){dv->storage, true};
        if (by_product) l.bindings[nb++] = (wg_binding){ds, true};
        l.nbindings = nb;
        l.prelude = prelude_kv;
        l.workgroups = kgroups;
        st = wg_dispatch(ctx, &l);
    }
    if (st == WT_OK && by_gemm) st = dq_product(ctx, ds, k, dq, B, Hq, Hkv, Sq, Skv, D);
    else if (st == WT_OK && by_product) st = dq_kernel(ctx, ds, k, dq, B, Hq, Hkv, Sq, Skv, d4, causal, rows);
    if (ds) wg_scratch_release(ctx, ds);
    wg_scratch_release(ctx, stats);
    return st;
}

static wt_status attention_backward_rows(wt_context *ctx, const wt_tensor *q, const wt_tensor *k,
                                         const wt_tensor *v, const wt_tensor *dout, bool causal, float scale,
                                         wt_tensor *dq, wt_tensor *dk, wt_tensor *dv)
{
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

wt_status wg_attention_backward(wt_context *ctx, const wt_tensor *q, const wt_tensor *k, const wt_tensor *v,
                                const wt_tensor *dout, const wt_tensor *out, const wt_tensor *lse, bool causal,
                                float scale, wt_tensor *dq, wt_tensor *dk, wt_tensor *dv)
{
    const wt_tensor *all[8] = {q, k, v, dout, dq, dk, dv, out};
    const uint64_t limit = wg_get_caps(ctx)->max_storage_binding;
    if (!out) return wt_fail(WT_ERR_UNSUPPORTED, "webgpu attention backward: the forward's output is needed");
    for (int t = 0; t < 8; t++)
        if (all[t]->dtype != WT_F32 || all[t]->storage->bytes > limit || (uint64_t)all[t]->numel > UINT32_MAX / 2)
            return wt_fail(WT_ERR_UNSUPPORTED, "webgpu attention backward: f32 tensors of one binding only");
    /* Each gradient laid out as its operand (the places: offsets included). */
    heads_place pl[5], gpl[3];
    if (!places_agree(q, k, v, dout, out, pl) || !place_of(dq, &gpl[0]) || !place_of(dk, &gpl[1]) ||
        !place_of(dv, &gpl[2]) || !same_place(&gpl[0], &pl[0]) || !same_place(&gpl[1], &pl[1]) ||
        !same_place(&gpl[2], &pl[2]))
        return wt_fail(WT_ERR_UNSUPPORTED, "webgpu attention backward: operands of mixed layouts");
    bool dense = true;
    for (int t = 0; t < 5; t++) dense = dense && !pl[t].rows;
    if (!dense && !views_fit(ctx, q, v))
        return wt_fail(WT_ERR_UNSUPPORTED, "webgpu attention backward: heads laid out [B, S, H, D] need the pipelined kernels");
    if (tiled_allowed() && tiled_fits(ctx, (uint64_t)q->shape[3], (uint64_t)v->shape[3])) {
        if (lse && (lse->dtype != WT_F32 || lse->offset != 0 || lse->numel != q->numel / q->shape[3])) lse = NULL;
        wt_status st = attention_backward_tiled(ctx, q, k, v, dout, out, lse, causal, scale, dq, dk, dv);
        if (st != WT_ERR_UNSUPPORTED) return st;
    }
    /* The untiled kernels read dense operands only. */
    if (!dense)
        return wt_fail(WT_ERR_UNSUPPORTED, "webgpu attention backward: heads laid out [B, S, H, D] beyond the pipelined kernels' sizes");
    return attention_backward_rows(ctx, q, k, v, dout, causal, scale, dq, dk, dv);
}

bool wg_attention_backward_preferred(const wt_context *ctx, const wt_tensor *q, const wt_tensor *k,
                                     const wt_tensor *v, bool causal)
{
    (void)causal;
    if (tiled_allowed() && tiled_fits(ctx, (uint64_t)q->shape[3], (uint64_t)v->shape[3])) return true;
    /* The untiled kernels (a thread a row) ran a GPT step (6 layers, dim
     * 384, context 256, batch 64) 4x slower than the composed rule's
     * matrix products on an H100 (274 against 67 ms): they serve only
     * where the composed rule's [B, Hq, Sq, Skv] f32 scores would take more
     * than 256 MiB. */
    const double scores = (double)q->shape[0] * (double)q->shape[1] * (double)q->shape[2] * (double)k->shape[2] * 4.0;
    return scores > 256.0 * 1024 * 1024;
}

bool wg_attention_backward_views(const wt_context *ctx, const wt_tensor *q, const wt_tensor *k, const wt_tensor *v,
                                 const wt_tensor *dout, const wt_tensor *out)
{
    const wt_tensor *all[5] = {q, k, v, dout, out};
    const uint64_t limit = wg_get_caps(ctx)->max_storage_binding;
    for (int t = 0; t < 5; t++)
        if (!all[t] || all[t]->dtype != WT_F32 || all[t]->storage->bytes > limit ||
            (uint64_t)all[t]->numel > UINT32_MAX / 2)
            return false;
    heads_place pl[5];
    return places_agree(q, k, v, dout, out, pl) && views_fit(ctx, q, v) && tiled_sizes_ok(q, k);
}
