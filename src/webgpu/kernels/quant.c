/* WebGPU kernels of quantised weights (core/quant.h): dequantise
 * (wgsl/quant_dequant.wgsl) and the linear layer, as a fused
 * dequantise-GEMV for few rows of x (quant_gemv_slots.wgsl; the unit
 * kernels quant_gemv_rows.wgsl / _rows4 by WT_QUANT_GEMV_RPT; quant_gemv.wgsl
 * for Q8_0 / Q4_0 when x is not at a whole vec4; with WT_QUANT_GEMV_X8, x
 * rounded to 8 bits by quant_x8.wgsl and integer dot products in
 * quant_gemv_x8.wgsl) and a tiled dequantise-GEMM for more
 * (quant_gemm.wgsl). The blocks are read from
 * their i32 words with bit operations (wgsl/quant_blocks.wgsl): no f16
 * shader support needed. Tensors past one binding are refused for now. */
#include "core/quant.h"
#include "webgpu/wg_params.h"
#include "webgpu/wg.h"

#include <stdio.h>
#include <string.h>

#define DEQUANT_WG 256u
#define GEMV_WG 64u
/* quant_gemv_rows: rows of W per workgroup x threads per row (lanes) =
 * 256; the lanes from WT_QUANT_GEMV_LANES. */
#define GEMV_THREADS 256u
/* Up to this many rows of x, one GEMV pass per row beats staging tiles:
 * each weight block is read M times, but from cache after the first. */
#define GEMV_MAX_ROWS 4

/* Weight rows per thread of the row kernel: 1 (quant_gemv_rows.wgsl) or 4
 * (quant_gemv_rows4.wgsl). By default 4 for the 4-bit formats, whose
 * blocks are small against the x they are multiplied with (on an H100,
 * 14336x4096: Q4_0 495 -> 1,134 GB/s, Q4_K 476 -> 946), and 1 for Q8_0 and
 * Q6_K, which four rows a thread did not speed up. */
static unsigned gemv_rpt(wt_quant_type type)
{
    const bool four_bit = type == WT_QUANT_Q4_0 || type == WT_QUANT_Q4_K;
    const uint64_t v = wt_knob_number(WT_KNOB_QUANT_GEMV_RPT, four_bit ? 4 : 1);
    return v == 4 ? 4u : v == 1 ? 1u : four_bit ? 4u : 1u;
}

/* The slot kernel (quant_gemv_slots.wgsl: neighbouring threads read
 * neighbouring words of four weight rows and of x) serves every type
 * unless WT_QUANT_GEMV_RPT names one of the unit kernels (1 or 4); Q4_K's
 * vec4 reads need the weight at a multiple of four words. */
static bool gemv_slots(wt_quant_type type, const wt_tensor *w)
{
    if (wt_knob_number(WT_KNOB_QUANT_GEMV_RPT, 0) != 0) return false;
    return type == WT_QUANT_Q4_0 || type == WT_QUANT_Q8_0 || type == WT_QUANT_Q6_K ||
           (type == WT_QUANT_Q4_K && w->offset % 4 == 0);
}

/* x rounded to 8 bits per block of 32 and the products as integer dot
 * products of four bytes, which changes the result by x's rounding (at
 * most max |x| / 254 of a block times the element's quant term), where the
 * f32 kernels round only their sums.
 * 0: off; 1: x rounded by a pass of its own (quant_x8.wgsl), then
 * quant_gemv_x8.wgsl, a unit a thread; 2: the same, the units of Q8_0,
 * Q4_0 and Q4_K split over consecutive threads (contiguous reads); 3 and
 * auto (the default): below. */
#define X8_AUTO (-1)
static int gemv_x8(void)
{
    const char *v = wt_knob_text(WT_KNOB_QUANT_GEMV_X8);
    return !v || strcmp(v, "auto") == 0 ? X8_AUTO
           : strcmp(v, "1") == 0       ? 1
           : strcmp(v, "2") == 0       ? 2
           : strcmp(v, "3") == 0       ? 3
                                       : 0;
}

/* 3: x rounded the same way by each workgroup of the GEMV itself
 * (quant_gemv_x8_fused.wgsl), so no pass of its own and the norm, SwiGLU and
 * residual of wt_linear_quant_fused in the same kernel; Q4_0, Q8_0, Q4_K and
 * Q6_K with K a multiple of 64 (units of 64 weights), x and the norm weight
 * at a multiple of 4 elements, and x's rounded row within the workgroup
 * memory (1.5 K bytes beside 4 KiB); Q4_K's weight at a multiple of four
 * words. Elsewhere the f32 kernels run. "auto" (the default) is 3 but for
 * Q6_K: on the H200 the 852M Llama's Q4_0 decode went from 1,128 to 1,312
 * tok/s with it; on an H100 its Q4_K_M decode from 790 to 950 (Q4_K's GEMV of
 * 14336x4096 from 26.4 to 19.3 us) once the kernel read Q4_K's words 16 bytes
 * at a time and decoded its scales without branches; with its f16 scales
 * converted without branches as well, on the H200, Q8_0's from 1,046-1,054 to
 * 1,186-1,195 (bench/RESULTS.md). Q6_K only under 3: it gained 34.0 -> 30.4
 * us at 14336x4096 but lost at the 852M Llama's shapes (512x2048 4.5 -> 6.6
 * us) and its Q4_K_M decode 1,087-1,091 -> 1,071-1,075 tok/s (H200). 16 lanes
 * a pair of rows measured ahead of 32 and 8 there. */
#define X8_FUSED_LANES 16u
static bool x8_fused_takes(wt_context *ctx, wt_quant_type type, int64_t m, int64_t k, const wt_tensor *x,
                           const wt_tensor *w, const wt_tensor *norm_weight)
{
    const int mode = gemv_x8();
    const bool q4 = type == WT_QUANT_Q4_0, q4k = type == WT_QUANT_Q4_K, q8 = type == WT_QUANT_Q8_0,
               q6k = type == WT_QUANT_Q6_K;
    if (m > GEMV_MAX_ROWS || !(mode == 3 ? q4 || q4k || q8 || q6k : mode == X8_AUTO && (q4 || q4k || q8)))
        return false;
    if (q4k && w->offset % 4 != 0) return false; /* read as 16-byte words */
    if (k % 64 != 0 || x->offset % 4 != 0 || (norm_weight && norm_weight->offset % 4 != 0)) return false;
    const uint64_t bytes = (uint64_t)k / 32u * (32u + 4u + 8u + 4u) + GEMV_THREADS * 16u;
    return bytes <= wg_get_caps(ctx)->max_workgroup_storage;
}

static unsigned gemv_lanes_or(unsigned fallback)
{
    const uint64_t v = wt_knob_number(WT_KNOB_QUANT_GEMV_LANES, fallback);
    return v >= 4 && v <= GEMV_THREADS && (v & (v - 1)) == 0 ? (unsigned)v : fallback;
}
static unsigned gemv_lanes(void) { return gemv_lanes_or(32); }
/* The slot kernel's threads a group of four rows: its slots are small (8
 * or 32 elements), so a row takes more threads than the unit kernels' 32.
 * On the H200 (bench/RESULTS.md) 128 and 256 were within 10 % of each
 * other on both shapes of 4096 and 14336, 128 ahead at 14336x4096; 64 was
 * up to 14 % slower (Q4_0 4096x14336: 27.9, 26.2, 31.7 us at 128, 256, 64). */
#define SLOT_LANES 128u

static bool fits32(int64_t v) { return v >= 0 && v < ((int64_t)1 << 31); }

static wt_status check_tensor(wt_context *ctx, const char *what, const wt_tensor *t, wt_dtype dtype)
{
    if (t->dtype != dtype || !wt_layout_is_contiguous(t->ndim, t->shape, t->strides))
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "webgpu %s: a %s operand that is not contiguous %s", what,
                       wt_dtype_name(t->dtype), wt_dtype_name(dtype));
    if (!fits32(t->offset) || !fits32(t->numel) || !fits32(t->offset + t->numel) || wg_needs_windows(ctx, t))
        return wt_fail(WT_ERR_UNSUPPORTED, "webgpu %s: a tensor beyond one binding or 32-bit indexing", what);
    return WT_OK;
}

static void prelude_lanes(char *buf, size_t size, wt_quant_type type, unsigned wg, bool has_bias, unsigned lanes)
{
    snprintf(buf, size,
             "const WG: u32 = %uu;\nconst TYPE: u32 = %du;\nconst Q8: bool = %s;\nconst BLOCK_BYTES: u32 = %du;\n"
             "const HAS_BIAS: bool = %s;\nconst ROWS: u32 = %uu;\nconst LANES: u32 = %uu;\nconst COOP: bool = %s;\n",
             wg, (int)type, type == WT_QUANT_Q8_0 ? "true" : "false", wt_quant_block_bytes(type),
             has_bias ? "true" : "false", GEMV_THREADS / lanes, lanes, gemv_x8() == 2 ? "true" : "false");
}
static void prelude_of(char *buf, size_t size, wt_quant_type type, unsigned wg, bool has_bias)
{
    prelude_lanes(buf, size, type, wg, has_bias, gemv_lanes());
}

/* The f16 scales are converted by f16_bits.wgsl's exact integer routine
 * (one per block), not the GPU's conversions: those need a device probe,
 * whose own shader could fail in the way of a product. */
#define F16_LIBRARY "f16_bits"

wt_status wg_dequantize(wt_context *ctx, wt_quant_type type, int64_t k, const wt_tensor *w, wt_tensor *out)
{
    wt_status st = check_tensor(ctx, "dequantize", w, WT_I32);
    if (st != WT_OK || (st = check_tensor(ctx, "dequantize", out, WT_F32)) != WT_OK) return st;
    if (out->offset != 0) return wt_fail(WT_ERR_INVALID_ARGUMENT, "webgpu dequantize: out not at offset 0");
    dequant_params p = {.total = (uint32_t)out->numel, .k = (uint32_t)k, .words = (uint32_t)w->shape[1],
                        .w_offset = (uint32_t)w->offset};
    char prelude[320];
    prelude_of(prelude, sizeof prelude, type, DEQUANT_WG, false);
    wg_launch l;
    memset(&l, 0, sizeof l);
    l.shader = "quant_dequant";
    l.prelude = prelude;
    l.libraries[0] = F16_LIBRARY;
    l.libraries[1] = "quant_blocks";
    l.params = &p;
    l.params_size = sizeof p;
    l.bindings[0] = (wg_binding){w->storage, false};
    l.bindings[1] = (wg_binding){out->storage, true};
    l.nbindings = 2;
    l.workgroups = ((uint64_t)out->numel + DEQUANT_WG - 1) / DEQUANT_WG;
    return wg_dispatch(ctx, &l);
}

/* The 8-bit x path: x's blocks rounded into two scratch buffers (the int8
 * words, 32 bytes a block; the scale and f32 sum, 8 bytes), then the
 * integer-dot GEMV. */
static wt_status linear_x8(wt_context *ctx, wt_quant_type type, const quant_linear_params *p, const wt_tensor *x,
                           const wt_tensor *w, const wt_tensor *bias, wt_tensor *out)
{
    const uint64_t blocks = (uint64_t)p->m * (p->k / 32u);
    wt_storage *xq = NULL, *xds = NULL;
    wt_status st = wg_scratch(ctx, (size_t)blocks * 32u, &xq);
    if (st == WT_OK) st = wg_scratch(ctx, (size_t)blocks * 8u, &xds);
    char prelude[320];
    prelude_of(prelude, sizeof prelude, type, GEMV_WG, bias != NULL);
    wg_launch l;
    memset(&l, 0, sizeof l);
    l.prelude = prelude;
    l.params = p;
    l.params_size = sizeof *p;
    if (st == WT_OK) {
        l.shader = "quant_x8";
        l.bindings[0] = (wg_binding){x->storage, false};
        l.bindings[1] = (wg_binding){xq, true};
        l.bindings[2] = (wg_binding){xds, true};
        l.nbindings = 3;
        l.workgroups = (blocks * 8u + 255u) / 256u; /* a thread a word of 4 */
        st = wg_dispatch(ctx, &l);
    }
    if (st == WT_OK) {
        const uint64_t rows_per_wg = GEMV_THREADS / gemv_lanes();
        l.shader = "quant_gemv_x8";
        l.libraries[0] = F16_LIBRARY;
        l.libraries[1] = "quant_blocks";
        l.bindings[0] = (wg_binding){xq, false};
        l.bindings[1] = (wg_binding){xds, false};
        l.bindings[2] = (wg_binding){w->storage, false};
        /* Without a bias the shader never reads binding 4: w stands in. */
        l.bindings[3] = (wg_binding){bias ? bias->storage : w->storage, false};
        l.bindings[4] = (wg_binding){out->storage, true};
        l.nbindings = 5;
        l.workgroups = (uint64_t)p->m * (((uint64_t)p->n + rows_per_wg - 1) / rows_per_wg);
        st = wg_dispatch(ctx, &l);
    }
    wg_scratch_release(ctx, xq);
    wg_scratch_release(ctx, xds);
    return st;
}

/* The 8-bit-x kernel's shape: threads a workgroup (wg), lanes a group of
 * rows and rows a group; by default 256, 16 and 2, except 32 lanes for
 * few outputs (<= 4096) of rows of 49 to 96 pairs of blocks (a decode
 * step's down projection, K = 5632: three pairs a lane, all loaded at
 * once, and twice the workgroups, against six pairs in turn; on the H200
 * 2048x5632 went from 8.1-10.3 to 7.5 us, while 14336x4096 and
 * 4096x14336 lost 7 % and 18 % at 32 lanes, bench/RESULTS.md).
 * WT_QUANT_GEMV_WG, _LANES and _ROWS override each. */
typedef struct x8_shape {
    unsigned wg, lanes, rows;
} x8_shape;

static x8_shape x8_shape_for(uint32_t n, uint32_t k)
{
    const uint32_t pairs = k / 64u;
    const bool wide = n <= 4096u && pairs > 3u * X8_FUSED_LANES && pairs <= 6u * X8_FUSED_LANES;
    x8_shape s = {GEMV_THREADS, wide ? 2u * X8_FUSED_LANES : X8_FUSED_LANES, 2u};
    s.lanes = gemv_lanes_or(s.lanes);
    const uint64_t rows = wt_knob_number(WT_KNOB_QUANT_GEMV_ROWS, s.rows);
    s.rows = rows == 1 ? 1u : 2u;
    const uint64_t wg = wt_knob_number(WT_KNOB_QUANT_GEMV_WG, s.wg);
    s.wg = wg == 64 || wg == 128 || wg == 256 ? (unsigned)wg : s.wg;
    if (s.lanes > s.wg) s.lanes = s.wg;
    return s;
}

static wt_status linear_x8_fused(wt_context *ctx, wt_quant_type type, const quant_slots_params *p,
                                 const wt_tensor *x, const wt_tensor *w, const wt_tensor *bias,
                                 const wt_tensor *norm_weight, const wt_tensor *residual, bool swiglu,
                                 wt_tensor *out)
{
    const x8_shape s = x8_shape_for(swiglu ? p->n / 2u : p->n, p->k);
    const unsigned pairs = p->k / 64u, iter = (pairs + s.lanes - 1u) / s.lanes;
    char prelude[400];
    snprintf(prelude, sizeof prelude,
             "const TYPE: u32 = %du;\nconst HAS_BIAS: bool = %s;\nconst NORM: bool = %s;\nconst SWIGLU: bool = %s;\n"
             "const RESIDUAL: bool = %s;\nconst ROWS: u32 = %uu;\nconst WG: u32 = %uu;\n"
             "const LANES: u32 = %uu;\nconst KB: u32 = %uu;\nconst ITER: u32 = %uu;\n",
             (int)type, bias ? "true" : "false", norm_weight ? "true" : "false", swiglu ? "true" : "false",
             residual ? "true" : "false", s.rows, s.wg, s.lanes, p->k / 32u, iter);
    wg_launch l;
    memset(&l, 0, sizeof l);
    l.shader = "quant_gemv_x8_fused";
    l.prelude = prelude;
    l.libraries[0] = F16_LIBRARY;
    l.params = p;
    l.params_size = sizeof *p;
    /* Bindings the prelude turns off are never read: x stands in. */
    l.bindings[0] = (wg_binding){x->storage, false};
    l.bindings[1] = (wg_binding){w->storage, false};
    l.bindings[2] = (wg_binding){bias ? bias->storage : x->storage, false};
    l.bindings[3] = (wg_binding){out->storage, true};
    l.bindings[4] = (wg_binding){norm_weight ? norm_weight->storage : x->storage, false};
    l.bindings[5] = (wg_binding){residual ? residual->storage : x->storage, false};
    l.bindings[6] = (wg_binding){w->storage, false}; /* Q4_K's 16-byte view */
    l.nbindings = 7;
    /* ROWS rows a group of lanes (one SwiGLU output). */
    const uint64_t outs = swiglu ? p->n / 2u : p->n;
    const uint64_t per_wg = s.wg / s.lanes * (swiglu ? 1u : s.rows);
    l.workgroups = (uint64_t)p->m * ((outs + per_wg - 1) / per_wg);
    return wg_dispatch(ctx, &l);
}

/* The prelude of the kernels with a prologue and an epilogue (the slot
 * kernel, the row kernel): the unit kernels' and their flags. */
static void prelude_fused(char *buf, size_t size, wt_quant_type type, bool has_bias, unsigned lanes, bool norm,
                          bool swiglu, bool residual)
{
    prelude_lanes(buf, size, type, GEMV_WG, has_bias, lanes);
    const size_t used = strlen(buf);
    snprintf(buf + used, size - used, "const NORM: bool = %s;\nconst SWIGLU: bool = %s;\nconst RESIDUAL: bool = %s;\n",
             norm ? "true" : "false", swiglu ? "true" : "false", residual ? "true" : "false");
}

wt_status wg_linear_quant(wt_context *ctx, wt_quant_type type, int64_t k, const wt_tensor *x, const wt_tensor *w,
                          const wt_tensor *bias, const wt_tensor *norm_weight, const wt_tensor *residual,
                          bool rms_norm, bool swiglu, float eps, wt_tensor *out)
{
    wt_status st = check_tensor(ctx, "linear_quant", x, WT_F32);
    if (st != WT_OK || (st = check_tensor(ctx, "linear_quant", w, WT_I32)) != WT_OK ||
        (bias && (st = check_tensor(ctx, "linear_quant", bias, WT_F32)) != WT_OK) ||
        (norm_weight && (st = check_tensor(ctx, "linear_quant", norm_weight, WT_F32)) != WT_OK) ||
        (residual && (st = check_tensor(ctx, "linear_quant", residual, WT_F32)) != WT_OK) ||
        (st = check_tensor(ctx, "linear_quant", out, WT_F32)) != WT_OK)
        return st;
    /* A result at an offset (a view the caller gave): the fused kernels
     * take it (o_offset); the others answer UNSUPPORTED, before any
     * dispatch, and the caller makes the result its own way. */
    if ((uint64_t)out->offset + (uint64_t)out->numel > UINT32_MAX)
        return wt_fail(WT_ERR_UNSUPPORTED, "webgpu linear_quant: out beyond 32-bit indexing");
    const int64_t m = x->shape[0], n = w->shape[0];
    const bool fused = rms_norm || swiglu || residual;
    quant_slots_params p = {.m = (uint32_t)m, .n = (uint32_t)n, .k = (uint32_t)k, .words = (uint32_t)w->shape[1],
                            .x_offset = (uint32_t)x->offset, .w_offset = (uint32_t)w->offset,
                            .b_offset = bias ? (uint32_t)bias->offset : 0,
                            .g_offset = norm_weight ? (uint32_t)norm_weight->offset : 0,
                            .r_offset = residual ? (uint32_t)residual->offset : 0, .eps = eps,
                            .o_offset = (uint32_t)out->offset};
    /* The unit kernels' Params: the slot kernel's first fields. */
    quant_linear_params pu = {.m = p.m, .n = p.n, .k = p.k, .words = p.words, .x_offset = p.x_offset,
                              .w_offset = p.w_offset, .b_offset = p.b_offset};
    if (x8_fused_takes(ctx, type, m, k, x, w, rms_norm ? norm_weight : NULL) && (!rms_norm || norm_weight))
        return linear_x8_fused(ctx, type, &p, x, w, bias, rms_norm ? norm_weight : NULL, residual, swiglu, out);
    const int x8_mode = gemv_x8();
    const bool x8 = m <= GEMV_MAX_ROWS && (x8_mode == 1 || x8_mode == 2);
    /* The row kernel reads x as vec4; the per-element GEMV (Q8_0 and Q4_0
     * only) takes an x elsewhere, the GEMM anything. */
    const bool rows = m <= GEMV_MAX_ROWS && x->offset % 4 == 0;
    const bool gemv = !rows && m <= GEMV_MAX_ROWS && (type == WT_QUANT_Q8_0 || type == WT_QUANT_Q4_0);
    const bool slots = rows && gemv_slots(type, w);
    const unsigned rpt = slots ? 4u : gemv_rpt(type);
    /* The norm, SwiGLU and residual live in the slot kernel and the row
     * kernel of one row a thread (the norm weight read as vec4, so at a
     * multiple of 4 elements); elsewhere the caller composes, nothing
     * recorded. */
    const bool rows1 = rows && !slots && rpt == 1;
    if (fused && (x8 || !(slots || rows1) || (rms_norm && (!norm_weight || norm_weight->offset % 4 != 0))))
        return wt_fail(WT_ERR_UNSUPPORTED, "webgpu linear_quant: no fused kernel for this type, row count or layout");
    if (out->offset != 0 && (x8 || !(slots || rows1)))
        return wt_fail(WT_ERR_UNSUPPORTED, "webgpu linear_quant: this kernel writes its result at offset 0 only");
    if (x8) return linear_x8(ctx, type, &pu, x, w, bias, out);
    const unsigned lanes = slots ? gemv_lanes_or(SLOT_LANES) : gemv_lanes();
    char prelude[400];
    if (slots || rows1)
        prelude_fused(prelude, sizeof prelude, type, bias != NULL, lanes, rms_norm, swiglu, residual != NULL);
    else
        prelude_lanes(prelude, sizeof prelude, type, GEMV_WG, bias != NULL, lanes);
    wg_launch l;
    memset(&l, 0, sizeof l);
    l.shader = slots  ? "quant_gemv_slots"
               : rows ? (rpt == 4 ? "quant_gemv_rows4" : "quant_gemv_rows")
               : gemv ? "quant_gemv"
                      : "quant_gemm";
    l.prelude = prelude;
    l.libraries[0] = F16_LIBRARY;
    l.libraries[1] = "quant_blocks";
    l.params = slots || rows1 ? (const void *)&p : (const void *)&pu;
    l.params_size = slots || rows1 ? sizeof p : sizeof pu;
    l.bindings[0] = (wg_binding){x->storage, false};
    l.bindings[1] = (wg_binding){w->storage, false};
    /* Without a bias the shader never reads binding 3: x stands in. */
    l.bindings[2] = (wg_binding){bias ? bias->storage : x->storage, false};
    l.bindings[3] = (wg_binding){out->storage, true};
    l.nbindings = 4;
    if (slots) { /* Q4_K's vec4 view of the same weight; the norm weight
                  * and the residual, or x standing in (never read) */
        l.bindings[4] = (wg_binding){w->storage, false};
        l.bindings[5] = (wg_binding){norm_weight ? norm_weight->storage : x->storage, false};
        l.bindings[6] = (wg_binding){residual ? residual->storage : x->storage, false};
        l.nbindings = 7;
    } else if (rows1) { /* the norm weight and the residual, or x */
        l.bindings[4] = (wg_binding){norm_weight ? norm_weight->storage : x->storage, false};
        l.bindings[5] = (wg_binding){residual ? residual->storage : x->storage, false};
        l.nbindings = 6;
    }
    const uint64_t rows_per_wg = GEMV_THREADS / lanes * rpt;
    /* With SwiGLU a workgroup's rows give half as many outputs (the slot
     * kernel's four rows a thread are two outputs; the row kernel's lanes
     * take a gate row and its up row for one). */
    const uint64_t n_out = swiglu ? (uint64_t)n / 2 : (uint64_t)n;
    const uint64_t outs_per_wg = swiglu && slots ? rows_per_wg / 2 : rows_per_wg;
    l.workgroups = rows   ? (uint64_t)m * ((n_out + outs_per_wg - 1) / outs_per_wg)
                   : gemv ? (uint64_t)m * (uint64_t)n
                          : (uint64_t)((m + 15) / 16) * (uint64_t)((n + 15) / 16);
    return wg_dispatch(ctx, &l);
}
