/* WebGPU attention: one fused dispatch. Prefill-sized work without a
 * mask (f32 or f16) goes to a register-tiled kernel
 * (wgsl/attention_tiled_wide.wgsl, or wgsl/attention_tiled.wgsl where the
 * former's workgroup memory does not fit: below); the rest to
 * wgsl/attention.wgsl (f32), described here.
 *
 * Tile shape, chosen per call: a workgroup of up to 128 threads holds BQ
 * rows (query x grouped q head) with TPQ threads each. Many rows
 * (prefill): BQ = 32, TPQ = 4, key tiles of 32. Few rows (decode, Sq = 1):
 * fewer rows per workgroup and more threads per row, e.g. one row of 128
 * threads with key tiles of 128, so a lone query still splits its keys and
 * output columns over a whole workgroup. The tiles are shrunk until they
 * fit the device's workgroup memory (16 KiB at least in WebGPU).
 *
 * When (batch x kv heads x row blocks) gives too few workgroups for the
 * GPU, as in decoding, the keys are split into chunks across workgroups
 * (flash-decoding) and a second small dispatch merges the partial softmax
 * states (wgsl/attention_combine.wgsl).
 *
 * One query a head in f32 (a decode step) goes first to the one-pass
 * kernel wgsl/attention_decode.wgsl: a workgroup an output row, no split
 * and no combine dispatch. f16 attention where the context asked for the
 * matrix units and the device has them runs on them
 * (wgsl/attention_matrix.wgsl). */
#include "webgpu/wg.h"
#include "webgpu/wg_params.h"

#include <stdio.h>
#include <string.h>

#define ATTN_WG 128u

#define COMBINE_WG 256u

/* Key chunks per (batch, kv head, row block): enough workgroups to fill
 * the GPU (a decode step alone has only B x Hkv of them), but at least
 * MIN_TILES_PER_SPLIT key tiles each. WT_ATTN_SPLITS=1 turns it off. */
#define TARGET_WORKGROUPS 1024u
#define TARGET_WORKGROUPS_CPU 16u
#define MIN_TILES_PER_SPLIT 4u

static uint32_t choose_splits(const wt_context *ctx, uint64_t workgroups, uint64_t tiles)
{
    if (wt_knob_number(WT_KNOB_ATTN_SPLITS, 0) == 1) return 1;
    const uint64_t target = wg_get_caps(ctx)->cpu_adapter ? TARGET_WORKGROUPS_CPU : TARGET_WORKGROUPS;
    uint32_t splits = 1;
    while (workgroups * splits * 2 <= target && tiles / (splits * 2u) >= MIN_TILES_PER_SPLIT) splits *= 2;
    return splits;
}

/* Units of w floats (4: vec4 tiles); qs and ks are the padded row
 * lengths of the query and K/V tiles in units. */
typedef struct attn_plan {
    uint32_t bq, bk, tpq, w, qs, ks;
} attn_plan;

static uint64_t tile_bytes(const attn_plan *t)
{
    return 4u * ((uint64_t)t->w * ((uint64_t)t->bq * t->qs + (uint64_t)t->bk * t->ks) +
                 2u * (uint64_t)t->bq * (t->bk + 1));
}

/* Tuning knobs, read once per process, for comparing tile shapes without a
 * rebuild: WT_ATTN_WG (threads per workgroup, 32..256; 128, 64 on a
 * software adapter), WT_ATTN_BQ (rows per workgroup at most, 1..WG; 32,
 * 16 on a software adapter), WT_ATTN_BK (keys per tile at least, 4..256,
 * 32); powers of two. On the H200 (Vulkan, f32), 128 / 32 / 32 took
 * 3.9 ms for causal prefill B=1 Hq=32 Hkv=8 S=2048 D=128, 64 / 16 / 32
 * 8.1 ms (PyTorch's fp32 SDPA 3.2 ms); decode steps were within noise. */
static uint32_t knob(wt_knob id, uint32_t fallback, uint32_t lo, uint32_t hi)
{
    uint64_t v = wt_knob_number(id, fallback);
    return wg_is_pow2(v) && v >= lo && v <= hi ? (uint32_t)v : fallback;
}

static bool plan_tiles(const wt_context *ctx, uint64_t rows, uint64_t D, uint64_t Dv, attn_plan *t)
{
    const uint64_t limit = wg_get_caps(ctx)->max_workgroup_storage;
    /* A software adapter runs small workgroups best. */
    const bool soft = wg_get_caps(ctx)->cpu_adapter;
    uint32_t wg = knob(WT_KNOB_ATTN_WG, soft ? 64 : ATTN_WG, 32, 256);
    if (wg > wg_get_caps(ctx)->max_invocations) wg = 64;
    t->bq = knob(WT_KNOB_ATTN_BQ, soft ? 16 : 32, 1, wg);
    while (t->bq > 1 && t->bq / 2 >= rows) t->bq /= 2;
    t->tpq = wg / t->bq;
    const uint32_t bk = knob(WT_KNOB_ATTN_BK, 32, 4, 256);
    t->bk = t->tpq > bk ? t->tpq : bk;
    t->w = D % 4 == 0 && Dv % 4 == 0 ? 4 : 1;
    t->qs = (uint32_t)(D / t->w + 1);
    t->ks = (uint32_t)((D > Dv ? D : Dv) / t->w + 1);
    while (tile_bytes(t) > limit) {
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

/* Rows (the last axis) of a 4-D view are whole vec4s at 16-byte
 * boundaries: unit stride, and the offset and the other strides multiples
 * of 4. */
static bool aligned_rows(const wt_tensor *t)
{
    bool ok = t->strides[3] == 1 && t->offset % 4 == 0;
    for (int d = 0; d < 3; d++) ok = ok && (t->shape[d] == 1 || t->strides[d] % 4 == 0);
    return ok;
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

/* ------------------------------------------------ the tiled kernel */

#define TILED_BQ 32u
#define TILED_BK 32u
#define TILED_TX 16u

/* Workgroup memory of attention_tiled_wide.wgsl with ty row quads (4 ty
 * rows) at dq quads a row: the query tile, K and V tiles of TILED_BK keys
 * (rows padded by one quad), P [keys][ty + 1] and the threads' maxima
 * [128 / ty][ty], all vec4s. */
static uint64_t wide_bytes(uint64_t dq, uint32_t ty)
{
    return 16u * ((dq + 1) * (4u * ty + 2u * TILED_BK) + TILED_BK * (ty + 1u) + 128u);
}

/* Row quads of attention_tiled_wide.wgsl's form for dq quads a row, or 0
 * for attention_tiled.wgsl. Unset WT_ATTN_FWD_KERNEL: the 64-row form where
 * the workgroup memory holds it (44.5 KiB at head dim 64), else the 32-row
 * one, else the older kernel; =small: the 32-row form; =tiled: the older
 * kernel. On the H200 the 64-row form took 257 us a GPT layer (B 64, H 6,
 * S 256, D 64, causal) against the older kernel's 313 (bench/RESULTS.md);
 * a form of 64 threads of 8 rows each (fewer loads a multiply-add, half
 * the threads) took 515. */
static uint32_t wide_form(const wt_context *ctx, uint64_t dq)
{
    const char *knob = wt_knob_text(WT_KNOB_ATTN_FWD_KERNEL);
    const uint64_t limit = wg_get_caps(ctx)->max_workgroup_storage;
    if (knob && strcmp(knob, "tiled") == 0) return 0;
    if (!(knob && strcmp(knob, "small") == 0) && wide_bytes(dq, 16) <= limit) return 16;
    return wide_bytes(dq, 8) <= limit ? 8 : 0;
}

bool wg_attention_unrolled(const wt_context *ctx)
{
    const char *unroll = wt_knob_text(WT_KNOB_ATTN_UNROLL);
    return unroll && *unroll ? strcmp(unroll, "0") != 0 : !wg_get_caps(ctx)->cpu_adapter;
}

/* attention_tiled_wide.wgsl (or attention_tiled.wgsl: wide_form) for
 * prefill-sized work without a mask, D == Dv a
 * multiple of 4, rows of q, k, v whole aligned vec4s, f32 or f16
 * throughout; WT_ERR_UNSUPPORTED (nothing recorded) otherwise, and for
 * few rows with many keys (decoding: the split kernel below). On the
 * H200 (f32, causal, B=1 Hq=32 Hkv=8 S=2048 D=128): see bench/RESULTS.md.
 * WT_ATTN_TILED=0 turns it off, =1 takes it whenever it can. a->lse
 * (f32 only): the rows' log-sum-exp as well. check_only: WT_OK where it
 * would run, nothing dispatched. */
static wt_status attention_tiled(wt_context *ctx, const wt_attention_args *a, bool check_only)
{
    const wt_tensor *q = a->q, *k = a->k, *v = a->v;
    const uint64_t B = (uint64_t)q->shape[0], Hq = (uint64_t)q->shape[1], Sq = (uint64_t)q->shape[2],
                   D = (uint64_t)q->shape[3], Hkv = (uint64_t)k->shape[1], Skv = (uint64_t)k->shape[2];
    const wt_dtype dt = q->dtype;
    const char *knob = wt_knob_text(WT_KNOB_ATTN_TILED);
    const bool off = knob && strcmp(knob, "0") == 0, always = knob && strcmp(knob, "1") == 0;
    if (off || a->mask || (dt != WT_F32 && dt != WT_F16) || k->dtype != dt || v->dtype != dt ||
        a->out->dtype != dt || D % 4 || (uint64_t)v->shape[3] != D || !aligned_rows(q) || !aligned_rows(k) ||
        !aligned_rows(v) || wt_attention_heads_layout(a->out) < 0)
        return WT_ERR_UNSUPPORTED;
    /* The result dense [B, Hq, Sq, D], or laid out [B, Sq, Hq, D]. */
    const bool out_heads_inner = wt_attention_heads_layout(a->out) == 1;
    const uint64_t dq = D / 4, bytes = 16u * (dq + 1) * (TILED_BQ + TILED_BK) + 2u * 16u * TILED_BK * TILED_BQ / 4;
    const uint32_t wide_ty = wide_form(ctx, dq);
    if ((!wide_ty && bytes > wg_get_caps(ctx)->max_workgroup_storage) || wg_get_caps(ctx)->max_invocations < 128)
        return WT_ERR_UNSUPPORTED;
    /* Rows a workgroup and threads across a row's keys and output quads. */
    const uint32_t bq = wide_ty ? 4u * wide_ty : TILED_BQ, tx = wide_ty ? 128u / wide_ty : TILED_TX;
    const uint64_t group = Hq / Hkv, rows = group * Sq, blocks = (rows + bq - 1) / bq;
    const uint64_t workgroups = B * Hkv * blocks, tiles = (Skv + TILED_BK - 1) / TILED_BK;
    /* Whether to split the keys instead: judged on the older kernel's
     * 32-row blocks whichever kernel runs, so that the wide one takes
     * exactly the calls the older one took. */
    const uint64_t blocks32 = (rows + TILED_BQ - 1) / TILED_BQ;
    if (!always && (rows < 8 || choose_splits(ctx, B * Hkv * blocks32, tiles) > 1)) return WT_ERR_UNSUPPORTED;
    tiled_params p = {.hq = (uint32_t)Hq, .hkv = (uint32_t)Hkv, .sq = (uint32_t)Sq, .skv = (uint32_t)Skv,
                      .group = (uint32_t)group, .blocks = (uint32_t)blocks, .neg_inf = 0xff800000u,
                      .scale = a->scale, .dq = (uint32_t)dq, .bk = TILED_BK};
    uint32_t view[5];
    const wt_tensor *ops[3] = {q, k, v};
    uint32_t *dst[3] = {p.q, p.k, p.v};
    const size_t esize = dt == WT_F16 ? 2 : 4;
    for (int i = 0; i < 3; i++) {
        if (!pack_view(ops[i], view) || ops[i]->storage->bytes / esize > UINT32_MAX)
            return WT_ERR_UNSUPPORTED;
        memcpy(dst[i], view, sizeof(uint32_t) * 4);
    }
    if (workgroups > UINT32_MAX / 64 || B * Hq * Sq * D > UINT32_MAX || Skv > INT32_MAX)
        return WT_ERR_UNSUPPORTED;
    if (a->lse && (dt != WT_F32 || a->lse->offset != 0 || a->lse->dtype != WT_F32)) return WT_ERR_UNSUPPORTED;
    if (check_only) return WT_OK;
    p.workgroups = (uint32_t)workgroups;
    const uint32_t dvt = (uint32_t)((dq + tx - 1) / tx);
    const bool unrolled = wg_attention_unrolled(ctx);
    /* The older kernel fixes its own shape (TX, no TY). The log-sum-exp's
     * binding exists only in the variant that writes it. */
    char form[32] = "";
    if (wide_ty) snprintf(form, sizeof form, "const TY: u32 = %uu;\n", wide_ty);
    char prelude[512];
    snprintf(prelude, sizeof prelude,
             "%sconst DQ: u32 = %lluu;\nconst DVT: u32 = %uu;\nconst DV_EXACT: bool = %s;\n"
             "const CAUSAL: bool = %s;\nconst UNROLL: bool = %s;\nconst OUT_HEADS_INNER: bool = %s;\n%s",
             form, (unsigned long long)dq, dvt, dvt * tx == dq ? "true" : "false", a->causal ? "true" : "false",
             unrolled ? "true" : "false", out_heads_inner ? "true" : "false",
             a->lse ? "const WRITE_LSE: bool = true;\n"
                      "@group(0) @binding(5) var<storage, read_write> lse_out: array<f32>;\n"
                      "fn store_lse(i: u32, x: f32) { lse_out[i] = x; }\n"
                    : "const WRITE_LSE: bool = false;\nfn store_lse(i: u32, x: f32) {}\n");
    wg_launch l = {
        .shader = wide_ty ? "attention_tiled_wide" : "attention_tiled",
        .prelude = prelude,
        .libraries = {dt == WT_F16 ? "attention_io_f16" : "attention_io_f32",
                      dt == WT_F16 ? wg_f16_library(ctx) : NULL},
        .params = &p,
        .params_size = sizeof p,
        .bindings = {{q->storage, false}, {k->storage, false}, {v->storage, false}, {a->out->storage, true},
                     {a->lse ? a->lse->storage : NULL, true}},
        .nbindings = a->lse ? 5 : 4,
        .workgroups = workgroups,
    };
    return wg_dispatch(ctx, &l);
}

/* ------------------------------------------------ the matrix units */

/* Workgroup memory of attention_matrix.wgsl: the K / V block as 16 x 16
 * fragments of halves, the scores [16 sgs rows][bk + 4] in f32, P's
 * fragments, a factor a row and the flag (16 bytes, as Dawn counts it). */
static uint64_t matrix_attn_bytes(uint64_t D, uint32_t sgs, uint32_t bk)
{
    return 2u * bk * D + 4u * 16u * sgs * (bk + 4u) + 2u * 16u * sgs * bk + 4u * 16u * sgs + 16u;
}

/* The matrix attention kernel's workgroup for head dim D on a device with
 * these caps: *sgs subgroups of 16 queries and key blocks of *bk; NULL,
 * or why not. tile is WT_ATTN_MATRIX_TILE ("SUBGROUPS,KEYS") or NULL. The
 * default, 4 subgroups and blocks of 32 keys (21 KiB of workgroup memory
 * at D = 128), ran fastest on an H200 at B8 H32 S2048 D128 causal: 99.4
 * TFLOP/s, against 89.1 for 8 x 32 and 74.7 for 4 x 64 (bench/RESULTS.md);
 * blocks of 16 where 32 do not fit. */
const char *wg_attention_matrix_plan(const wg_caps *caps, uint64_t D, const char *tile, uint32_t *sgs, uint32_t *bk)
{
    const char *gap = wg_matrix_device_gap(caps);
    if (gap) return gap;
    if (D % 16 || D == 0 || D > 128) return "the head dim is not a multiple of 16 up to 128";
    unsigned s = 4, k = 32;
    bool forced = false;
    if (tile) {
        unsigned ts, tk;
        forced = sscanf(tile, "%u,%u", &ts, &tk) == 2 && ts >= 1 && ts <= 8 && (tk == 16 || tk == 32 || tk == 64);
        if (forced) s = ts, k = tk;
    }
    if (32u * s > caps->max_invocations) return "the workgroup exceeds the device's invocations";
    while (matrix_attn_bytes(D, s, k) > caps->max_workgroup_storage) {
        if (forced || k == 16) return "the tiles exceed the device's workgroup memory";
        k /= 2;
    }
    *sgs = s, *bk = k;
    return NULL;
}

/* Offset and strides (b, h, s) of a 4-D view in whole 16-byte words of
 * halves, unit stride along d. */
static bool word_rows(const wt_tensor *t)
{
    bool ok = t->strides[3] == 1 && t->offset % 8 == 0;
    for (int d = 0; d < 3; d++) ok = ok && (t->shape[d] == 1 || t->strides[d] % 8 == 0);
    return ok;
}

/* attention_matrix.wgsl: f16 q, k, v and result without a mask, D == Dv
 * a multiple of 16 up to 128, rows of whole 16-byte words, at least 16
 * queries, where the context asked for the matrix units and the device
 * has them (counted in info(), named "[matrix units]" in profiles);
 * WT_ERR_UNSUPPORTED (nothing recorded) otherwise. WT_ATTN_MATRIX=0 turns
 * it off. */
static wt_status attention_matrix(wt_context *ctx, const wt_attention_args *a)
{
    const wt_tensor *q = a->q, *k = a->k, *v = a->v;
    if (q->dtype != WT_F16 || !wg_matrix_asked(ctx) || wt_attention_heads_layout(a->out) != 0) return WT_ERR_UNSUPPORTED;
    const uint64_t B = (uint64_t)q->shape[0], Hq = (uint64_t)q->shape[1], Sq = (uint64_t)q->shape[2],
                   D = (uint64_t)q->shape[3], Hkv = (uint64_t)k->shape[1], Skv = (uint64_t)k->shape[2];
    const char *knob_text = wt_knob_text(WT_KNOB_ATTN_MATRIX);
    const char *why = NULL;
    uint32_t sgs = 0, bk = 0;
    if (knob_text && strcmp(knob_text, "0") == 0)
        why = "WT_ATTN_MATRIX=0";
    else if (a->mask || a->kv_length)
        why = "attention with a mask or a key count on the device";
    else if (k->dtype != WT_F16 || v->dtype != WT_F16 || a->out->dtype != WT_F16)
        why = "attention operands not all f16";
    else if ((uint64_t)v->shape[3] != D || Sq < 16)
        why = "attention with Dv != D or fewer than 16 queries";
    else if (!word_rows(q) || !word_rows(k) || !word_rows(v) || a->out->offset != 0)
        why = "attention rows not whole 16-byte words";
    else
        why = wg_attention_matrix_plan(wg_get_caps(ctx), D, wt_knob_text(WT_KNOB_ATTN_MATRIX_TILE), &sgs, &bk);
    const uint64_t bq = 16u * sgs, blocks = bq ? (Sq + bq - 1) / bq : 0, workgroups = B * Hq * blocks;
    if (!why && (workgroups > UINT32_MAX / 64 || B * Hq * Sq * D > UINT32_MAX || Skv > INT32_MAX ||
                 q->storage->bytes / 2 > UINT32_MAX || k->storage->bytes / 2 > UINT32_MAX ||
                 v->storage->bytes / 2 > UINT32_MAX))
        why = "attention operands too large for 32-bit indexing";
    if (why) {
        wg_matrix_note(ctx, why);
        return WT_ERR_UNSUPPORTED;
    }
    tiled_params p = {.hq = (uint32_t)Hq, .hkv = (uint32_t)Hkv, .sq = (uint32_t)Sq, .skv = (uint32_t)Skv,
                      .group = (uint32_t)(Hq / Hkv), .blocks = (uint32_t)blocks, .neg_inf = 0xff800000u,
                      .scale = a->scale * 1.4426950408889634f, .dq = (uint32_t)(D / 4), .bk = bk,
                      .workgroups = (uint32_t)workgroups};
    uint32_t view[5];
    const wt_tensor *ops[3] = {q, k, v};
    uint32_t *dst[3] = {p.q, p.k, p.v};
    for (int i = 0; i < 3; i++) {
        if (!pack_view(ops[i], view)) {
            wg_matrix_note(ctx, "attention operands too large for 32-bit indexing");
            return WT_ERR_UNSUPPORTED;
        }
        memcpy(dst[i], view, sizeof(uint32_t) * 4);
    }
    char prelude[320];
    snprintf(prelude, sizeof prelude,
             "enable f16;\nenable subgroups;\nenable chromium_experimental_subgroup_matrix;\n"
             "diagnostic(off, chromium.subgroup_matrix_uniformity);\n"
             "const D: u32 = %lluu;\nconst SGS: u32 = %uu;\nconst BK: u32 = %uu;\nconst CAUSAL: bool = %s;\n",
             (unsigned long long)D, sgs, bk, a->causal ? "true" : "false");
    wg_launch l = {
        .shader = "attention_matrix",
        .prelude = prelude,
        .libraries = {wg_f16_library(ctx)},
        .params = &p,
        .params_size = sizeof p,
        .bindings = {{q->storage, false}, {k->storage, false}, {v->storage, false}, {a->out->storage, true}},
        .nbindings = 4,
        .workgroups = workgroups,
    };
    wt_status st = wg_dispatch(ctx, &l);
    if (st == WT_OK) wg_matrix_note(ctx, NULL);
    return st;
}

/* ------------------------------------------------ the decode kernel */

#define DECODE_MAX_KEYS 2048u

/* attention_decode.wgsl for one query a head (a decode step): one
 * workgroup an output row, one dispatch (no key split, no combine). f32,
 * no mask, D and Dv multiples of 4 with Dv / 4 a power of two up to the
 * workgroup, K and V rows whole aligned vec4s, at most DECODE_MAX_KEYS
 * keys (their scores are held in workgroup memory); WT_ERR_UNSUPPORTED
 * (nothing recorded) otherwise. WT_ATTN_DECODE=0 turns it off. */
static wt_status attention_decode(wt_context *ctx, const wt_attention_args *a)
{
    const wt_tensor *q = a->q, *k = a->k, *v = a->v;
    const uint64_t B = (uint64_t)q->shape[0], Hq = (uint64_t)q->shape[1], Sq = (uint64_t)q->shape[2],
                   D = (uint64_t)q->shape[3], Hkv = (uint64_t)k->shape[1], Skv = (uint64_t)k->shape[2],
                   Dv = (uint64_t)v->shape[3];
    const char *knob_text = wt_knob_text(WT_KNOB_ATTN_DECODE);
    if ((knob_text && strcmp(knob_text, "0") == 0) || a->mask || Sq != 1 || q->dtype != WT_F32 ||
        k->dtype != WT_F32 || v->dtype != WT_F32 || a->out->dtype != WT_F32 || wt_attention_heads_layout(a->out) != 0 || D % 4 ||
        Dv % 4 || !wg_is_pow2(Dv / 4) || Skv > DECODE_MAX_KEYS || !aligned_rows(k) || !aligned_rows(v))
        return WT_ERR_UNSUPPORTED;
    /* 256 threads on a GPU (more keys and V slices in flight a row); a
     * software adapter runs small workgroups best. WT_ATTN_WG overrides. */
    uint32_t wg = knob(WT_KNOB_ATTN_WG, wg_get_caps(ctx)->cpu_adapter ? 64u : 256u, 32, 256);
    if (wg > wg_get_caps(ctx)->max_invocations) wg = 64u;
    if (Dv / 4 > wg) return WT_ERR_UNSUPPORTED;
    /* Score slots: the key capacity rounded up to a power of two (at
     * least 256), so that a growing cache reuses one pipeline. */
    uint32_t sk = 256u;
    while (sk < Skv) sk *= 2u;
    const uint64_t bytes = 4u * (D + sk + wg) + 16u * (uint64_t)wg;
    if (bytes > wg_get_caps(ctx)->max_workgroup_storage) return WT_ERR_UNSUPPORTED;
    const uint64_t rows_total = B * Hq * Sq;
    attn_params p;
    memset(&p, 0, sizeof p);
    if (!pack_view(q, p.q) || !pack_view(k, p.k) || !pack_view(v, p.v) || a->out->storage->bytes / 4 > UINT32_MAX ||
        rows_total * Dv > UINT32_MAX || rows_total > UINT32_MAX / 64 || Skv > INT32_MAX)
        return WT_ERR_UNSUPPORTED;
    p.hq = (uint32_t)Hq, p.hkv = (uint32_t)Hkv, p.sq = (uint32_t)Sq, p.skv = (uint32_t)Skv;
    p.group = (uint32_t)(Hq / Hkv), p.blocks = 1;
    p.workgroups = (uint32_t)rows_total, p.rows_total = (uint32_t)rows_total, p.splits = 1;
    p.neg_inf = 0xff800000u;
    p.scale = a->scale;
    if (a->kv_length) {
        if ((uint64_t)a->kv_length->offset >= UINT32_MAX) return WT_ERR_UNSUPPORTED;
        p.kv_at = (uint32_t)a->kv_length->offset;
        p.kv_on = 1;
    }
    char prelude[160];
    snprintf(prelude, sizeof prelude,
             "const WG: u32 = %uu;\nconst D: u32 = %lluu;\nconst DV: u32 = %lluu;\nconst SK: u32 = %uu;\n"
             "const CAUSAL: bool = %s;\n",
             wg, (unsigned long long)D, (unsigned long long)Dv, sk, a->causal ? "true" : "false");
    wg_launch l;
    memset(&l, 0, sizeof l);
    l.shader = "attention_decode";
    l.prelude = prelude;
    l.libraries[0] = "workgroup_tree";
    l.params = &p;
    l.params_size = sizeof p;
    l.bindings[0] = (wg_binding){q->storage, false};
    l.bindings[1] = (wg_binding){k->storage, false};
    l.bindings[2] = (wg_binding){v->storage, false};
    l.bindings[3] = (wg_binding){a->out->storage, true};
    l.bindings[4] = (wg_binding){a->kv_length ? a->kv_length->storage : q->storage, false};
    l.nbindings = 5;
    l.workgroups = rows_total;
    return wg_dispatch(ctx, &l);
}

bool wg_attention_lse_fits(wt_context *ctx, const wt_attention_args *a)
{
    /* Sq = 1 goes to the decode kernel first. */
    return !a->mask && !a->kv_length && a->q->dtype == WT_F32 && a->q->shape[2] != 1 &&
           attention_tiled(ctx, a, true) == WT_OK;
}

wt_status wg_op_attention(wt_context *ctx, const wt_attention_args *a)
{
    if (!a->lse) {
        wt_status dst = attention_decode(ctx, a);
        if (dst != WT_ERR_UNSUPPORTED) return dst;
    }
    /* The tiled kernel sizes its work by Skv on the host: not with a key
     * count known on the device only. */
    if (!a->kv_length) {
        if (!a->lse) {
            wt_status mst = attention_matrix(ctx, a);
            if (mst != WT_ERR_UNSUPPORTED) return mst;
        }
        wt_status tst = attention_tiled(ctx, a, false);
        if (tst != WT_ERR_UNSUPPORTED) return tst;
    }
    if (a->lse) return wt_fail(WT_ERR_UNSUPPORTED, "webgpu attention: the log-sum-exp comes from the tiled kernel only");
    if (wt_attention_heads_layout(a->out) != 0)
        return wt_fail(WT_ERR_UNSUPPORTED, "webgpu attention: a result laid out [B, S, H, D] comes from the tiled kernel only");
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
    if (!plan_tiles(ctx, rows, D, Dv, &t))
        return wt_fail(WT_ERR_UNSUPPORTED,
                       "webgpu attention: head dims D = %llu, Dv = %llu do not fit the device's %u bytes of workgroup memory",
                       (unsigned long long)D, (unsigned long long)Dv, wg_get_caps(ctx)->max_workgroup_storage);
    const uint64_t blocks = (rows + t.bq - 1) / t.bq, workgroups = B * Hkv * blocks;
    if (workgroups > UINT32_MAX / 64)
        return wt_fail(WT_ERR_UNSUPPORTED, "webgpu attention: %llu workgroups exceed 32-bit indexing",
                       (unsigned long long)workgroups);
    p.hq = (uint32_t)Hq, p.hkv = (uint32_t)Hkv, p.sq = (uint32_t)Sq, p.skv = (uint32_t)Skv;
    p.group = (uint32_t)group, p.blocks = (uint32_t)blocks;
    p.neg_inf = 0xff800000u;
    p.scale = a->scale;
    p.dw = (uint32_t)(D / t.w), p.bk = t.bk;
    const uint64_t tiles = (Skv + t.bk - 1) / t.bk;
    const uint32_t splits = choose_splits(ctx, workgroups, tiles);
    const uint64_t rows_total = B * Hq * Sq;
    if (rows_total * splits * (Dv + 2) > UINT32_MAX) /* partials beyond 32-bit indexing */
        return wt_fail(WT_ERR_UNSUPPORTED, "webgpu attention: operands too large for 32-bit indexing");
    p.rows_total = (uint32_t)rows_total;
    p.splits = splits;
    p.chunk = (uint32_t)((tiles + splits - 1) / splits * t.bk);
    p.workgroups = (uint32_t)(workgroups * splits);
    if (a->kv_length) {
        if ((uint64_t)a->kv_length->offset >= UINT32_MAX)
            return wt_fail(WT_ERR_UNSUPPORTED, "webgpu attention: kv_length is too large for 32-bit indexing");
        p.kv_at = (uint32_t)a->kv_length->offset;
        p.kv_on = 1;
    }

    const uint64_t dvw = Dv / t.w;
    const uint32_t dvt = (uint32_t)((dvw + t.tpq - 1) / t.tpq);
    const unsigned mask_kind = !m ? 0u : a->mask_is_bool ? 2u : 1u;
    const char *units =
        t.w == 4 ? "alias V = vec4<f32>;\n"
                   "fn vdot(a: V, b: V) -> f32 { return dot(a, b); }\n"
                   "fn unit(v: V, i: u32) -> f32 { return v[i]; }\n"
                   "fn put_q(i: u32, c: u32, x: f32) { q_tile[i][c] = x; }\n"
                   "fn put_kv(i: u32, c: u32, x: f32) { kv_tile[i][c] = x; }\n"
                 : "alias V = f32;\n"
                   "fn vdot(a: V, b: V) -> f32 { return a * b; }\n"
                   "fn unit(v: V, i: u32) -> f32 { return v; }\n"
                   "fn put_q(i: u32, c: u32, x: f32) { q_tile[i] = x; }\n"
                   "fn put_kv(i: u32, c: u32, x: f32) { kv_tile[i] = x; }\n";
    /* K and V rows as whole aligned vec4s: 16-byte global loads. */
    const bool gv = t.w == 4 && aligned_rows(k) && aligned_rows(v);
    const char *loads =
        gv ? "alias KT = vec4<f32>;\n"
             "fn k_at(i: u32) -> f32 { return k[i / 4u][i % 4u]; }\n"
             "fn v_at(i: u32) -> f32 { return v[i / 4u][i % 4u]; }\n"
             "fn k_unit(i: u32) -> V { return k[i / 4u]; }\n"
             "fn v_unit(i: u32) -> V { return v[i / 4u]; }\n"
           : "alias KT = f32;\n"
             "fn k_at(i: u32) -> f32 { return k[i]; }\n"
             "fn v_at(i: u32) -> f32 { return v[i]; }\n"
             "fn k_unit(i: u32) -> V { return V(k[i]); }\n"
             "fn v_unit(i: u32) -> V { return V(v[i]); }\n";
    char prelude[2048];
    int n = snprintf(prelude, sizeof prelude,
                     "%s%sconst GV: bool = %s;\nconst W: u32 = %uu;\nconst DVW: u32 = %lluu;\n"
                     "const D: u32 = %lluu;\nconst DV: u32 = %lluu;\nconst KS: u32 = %uu;\n"
                     "const QS: u32 = %uu;\nconst PS: u32 = %uu;\n"
                     "const BQ: u32 = %uu;\nconst BK: u32 = %uu;\nconst TPQ: u32 = %uu;\n"
                     "const WG: u32 = %uu;\nconst KPT: u32 = %uu;\nconst DVT: u32 = %uu;\n"
                     "const DV_EXACT: bool = %s;\nconst MASK: u32 = %uu;\nconst CAUSAL: bool = %s;\n"
                     "const SPLIT: bool = %s;\nalias MT = %s;\n",
                     units, loads, gv ? "true" : "false", t.w, (unsigned long long)dvw, (unsigned long long)D, (unsigned long long)Dv, t.ks, t.qs,
                     t.bk + 1, t.bq, t.bk, t.tpq, t.bq * t.tpq, t.bk / t.tpq, dvt,
                     (uint64_t)dvt * t.tpq == dvw ? "true" : "false", mask_kind,
                     a->causal ? "true" : "false", splits > 1 ? "true" : "false", mask_kind == 2 ? "u32" : "f32");
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
    l.bindings[5] = (wg_binding){a->kv_length ? a->kv_length->storage : q->storage, false};
    l.nbindings = 6;
    l.workgroups = workgroups * splits;
    if (splits == 1) {
        l.bindings[4] = (wg_binding){a->out->storage, true};
        return wg_dispatch(ctx, &l);
    }
    wt_storage *part = NULL;
    wt_status st = wg_scratch(ctx, sizeof(float) * rows_total * splits * (Dv + 2), &part);
    if (st != WT_OK) return st;
    l.bindings[4] = (wg_binding){part, true};
    st = wg_dispatch(ctx, &l);
    if (st == WT_OK) {
        combine_params cp = {(uint32_t)rows_total, splits, 0xff800000u, 0};
        char cprelude[64];
        snprintf(cprelude, sizeof cprelude, "const WG: u32 = %uu;\nconst DV: u32 = %lluu;\n", COMBINE_WG,
                 (unsigned long long)Dv);
        wg_launch c;
        memset(&c, 0, sizeof c);
        c.shader = "attention_combine";
        c.prelude = cprelude;
        c.params = &cp;
        c.params_size = sizeof cp;
        c.bindings[0] = (wg_binding){part, false};
        c.bindings[1] = (wg_binding){a->out->storage, true};
        c.nbindings = 2;
        c.workgroups = (rows_total * Dv + COMBINE_WG - 1) / COMBINE_WG;
        st = wg_dispatch(ctx, &c);
    }
    wg_scratch_release(ctx, part);
    return st;
}
