/* WebGPU rotary position embedding (wgsl/rope.wgsl). The per-frequency
 * table (f_i / 2 pi as a hi + lo pair of f32) is made on the host in
 * double and uploaded once per (frequencies, D) and context: D/2 pairs, a few
 * hundred bytes, kept while the context lives (a model has one or two). */
#include "webgpu/wg.h"
#include "webgpu/wg_params.h"
#include "webgpu/wg_runtime.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ROPE_WG 256u

static bool same_freqs(const wt_rope_freqs *a, const wt_rope_freqs *b)
{
    return a->theta == b->theta && a->scaling == b->scaling && a->factor == b->factor &&
           a->low_freq_factor == b->low_freq_factor && a->high_freq_factor == b->high_freq_factor &&
           a->original_max_position == b->original_max_position;
}

/* The table of (frequencies, D): a kept one, or made now in a slot of its
 * own (the oldest of eight goes when all are taken). */
static wt_status rope_table(wt_context *ctx, const wt_rope_freqs *freqs, uint64_t D, wt_storage **out)
{
    wg_context *w = wg_ctx(ctx);
    const int slots = (int)(sizeof w->rope_tables / sizeof w->rope_tables[0]);
    for (int i = 0; i < slots; i++)
        if (w->rope_tables[i].table && same_freqs(&w->rope_tables[i].freqs, freqs) && w->rope_tables[i].d == D) {
            *out = w->rope_tables[i].table;
            return WT_OK;
        }
    const uint64_t H = D / 2;
    float *tab = malloc(sizeof(float) * 2 * H);
    if (!tab) return wt_fail(WT_ERR_OUT_OF_MEMORY, "webgpu rope: out of host memory");
    for (uint64_t i = 0; i < H; i++) {
        const double f = wt_rope_frequency(freqs, (int64_t)i, (int64_t)D) / (2.0 * M_PI);
        tab[2 * i] = (float)f;
        tab[2 * i + 1] = (float)(f - (double)tab[2 * i]);
    }
    wt_storage *freq = NULL;
    wt_status st = wg_scratch(ctx, sizeof(float) * 2 * H, &freq);
    if (st == WT_OK) {
        w->constant_upload = true;
        st = ctx->ops->upload(ctx, freq, 0, tab, sizeof(float) * 2 * H);
        w->constant_upload = false;
    }
    free(tab);
    if (st != WT_OK) {
        if (freq) wg_scratch_release(ctx, freq);
        return st;
    }
    const int i = w->rope_next;
    w->rope_next = (i + 1) % slots;
    if (w->rope_tables[i].table) wg_scratch_release(ctx, w->rope_tables[i].table);
    w->rope_tables[i].freqs = *freqs;
    w->rope_tables[i].d = D;
    w->rope_tables[i].table = freq;
    *out = freq;
    return WT_OK;
}

void wg_rope_tables_drop(wt_context *ctx)
{
    wg_context *w = wg_ctx(ctx);
    for (size_t i = 0; i < sizeof w->rope_tables / sizeof w->rope_tables[0]; i++) {
        if (w->rope_tables[i].table) wg_scratch_release(ctx, w->rope_tables[i].table);
        w->rope_tables[i].table = NULL;
    }
    w->rope_next = 0;
}

wt_status wg_op_rope(wt_context *ctx, const wt_tensor *x, const wt_tensor *position, double theta, int64_t offset,
                     wt_tensor *out)
{
    const uint64_t A = (uint64_t)x->shape[0], S = (uint64_t)x->shape[1], C = (uint64_t)x->shape[2],
                   D = (uint64_t)x->shape[3], H = D / 2;
    if (x->dtype != WT_F32) return wt_fail(WT_ERR_UNSUPPORTED, "webgpu rope: x must be f32");
    if (H == 0 || A * S * C == 0) return WT_OK;
    bool fits = x->offset >= 0 && x->offset <= UINT32_MAX && x->storage->bytes / 4 <= UINT32_MAX &&
                out->storage->bytes / 4 <= UINT32_MAX && A * S * C * H <= UINT32_MAX;
    for (int d = 0; d < 4; d++) fits = fits && x->strides[d] >= 0 && x->strides[d] <= UINT32_MAX;
    if (!fits) return wt_fail(WT_ERR_UNSUPPORTED, "webgpu rope: x is too large for 32-bit indexing");
    if (position && (uint64_t)position->offset >= UINT32_MAX)
        return wt_fail(WT_ERR_UNSUPPORTED, "webgpu rope: the position tensor is too large for 32-bit indexing");
    if ((uint64_t)offset + S > (1u << 24))
        return wt_fail(WT_ERR_UNSUPPORTED, "webgpu rope: positions up to %llu exceed 2^24",
                       (unsigned long long)((uint64_t)offset + S));

    wt_storage *freq = NULL;
    const wt_rope_freqs plain = {.theta = theta};
    wt_status st = rope_table(ctx, &plain, D, &freq);
    if (st != WT_OK) return st;
    rope_params p = {
        .a_n = (uint32_t)A, .s_n = (uint32_t)S, .c_n = (uint32_t)C, .half = (uint32_t)H,
        .x_offset = (uint32_t)x->offset, .sa = (uint32_t)x->strides[0], .ss = (uint32_t)x->strides[1],
        .sc = (uint32_t)x->strides[2], .sd = (uint32_t)x->strides[3], .offset = (uint32_t)offset,
        .pairs = (uint32_t)(A * S * C * H), .pos_at = position ? (uint32_t)position->offset : ~0u,
    };
    char prelude[48];
    snprintf(prelude, sizeof prelude, "const WG: u32 = %uu;\n", ROPE_WG);
    wg_launch l;
    memset(&l, 0, sizeof l);
    l.shader = "rope";
    l.prelude = prelude;
    l.libraries[0] = "rope_turns";
    l.params = &p;
    l.params_size = sizeof p;
    l.bindings[0] = (wg_binding){x->storage, false};
    l.bindings[1] = (wg_binding){freq, false};
    l.bindings[2] = (wg_binding){out->storage, true};
    l.bindings[3] = (wg_binding){position ? position->storage : freq, false};
    l.nbindings = 4;
    l.workgroups = (A * S * C * H + ROPE_WG - 1) / ROPE_WG;
    return wg_dispatch(ctx, &l);
}

/* wt_rope_kv_cache (node ROPE_KV_CACHE): wgsl/rope_kv_cache.wgsl, the
 * rotation of rope.wgsl with its table. */
wt_status wg_rope_kv_cache(wt_context *ctx, const wt_tensor *qkv, const wt_tensor *position,
                           const wt_rope_freqs *freqs, int64_t offset, int64_t q_heads, wt_tensor *q,
                           wt_tensor *cache)
{
    const uint64_t B = (uint64_t)qkv->shape[0], S = (uint64_t)qkv->shape[1], heads = (uint64_t)qkv->shape[2],
                   D = (uint64_t)qkv->shape[3], H = D / 2, T = (uint64_t)cache->shape[2];
    if (H == 0 || B * S * heads == 0) return WT_OK;
    const bool f16 = qkv->dtype == WT_F16;
    bool fits = qkv->offset >= 0 && qkv->offset <= UINT32_MAX && qkv->storage->bytes / 2 <= UINT32_MAX &&
                cache->offset >= 0 && cache->offset <= UINT32_MAX && cache->storage->bytes / 4 <= UINT32_MAX &&
                q->storage->bytes / 4 <= UINT32_MAX && B * S * heads * H <= UINT32_MAX && T <= UINT32_MAX;
    for (int d = 0; d < 4; d++)
        fits = fits && qkv->strides[d] >= 0 && qkv->strides[d] <= UINT32_MAX && cache->strides[d] >= 0 &&
               cache->strides[d] <= UINT32_MAX;
    if (!fits) return wt_fail(WT_ERR_UNSUPPORTED, "webgpu rope_kv_cache: operands too large for 32-bit indexing");
    if (position && (uint64_t)position->offset >= UINT32_MAX)
        return wt_fail(WT_ERR_UNSUPPORTED, "webgpu rope_kv_cache: the position tensor is too large for 32-bit indexing");
    if ((uint64_t)offset + S > (1u << 24))
        return wt_fail(WT_ERR_UNSUPPORTED, "webgpu rope_kv_cache: positions up to %llu exceed 2^24",
                       (unsigned long long)((uint64_t)offset + S));
    wt_storage *freq = NULL;
    wt_status st = rope_table(ctx, freqs, D, &freq);
    if (st != WT_OK) return st;
    rope_kv_cache_params p = {
        .b_n = (uint32_t)B, .s_n = (uint32_t)S, .heads = (uint32_t)heads, .half = (uint32_t)H,
        .q_heads = (uint32_t)q_heads, .kv = (uint32_t)(cache->shape[1] / 2), .t_n = (uint32_t)T,
        .offset = (uint32_t)offset, .x_offset = (uint32_t)qkv->offset, .sb = (uint32_t)qkv->strides[0],
        .ss = (uint32_t)qkv->strides[1], .sh = (uint32_t)qkv->strides[2], .sd = (uint32_t)qkv->strides[3],
        .pos_at = position ? (uint32_t)position->offset : ~0u, .c_offset = (uint32_t)cache->offset,
        .cb = (uint32_t)cache->strides[0], .ch = (uint32_t)cache->strides[1], .ct = (uint32_t)cache->strides[2],
        .cd = (uint32_t)cache->strides[3], .pairs = (uint32_t)(B * S * heads * H),
    };
    char prelude[80];
    snprintf(prelude, sizeof prelude, "const WG: u32 = %uu;\nconst F16: bool = %s;\n", ROPE_WG,
             f16 ? "true" : "false");
    wg_launch l;
    memset(&l, 0, sizeof l);
    l.shader = "rope_kv_cache";
    l.prelude = prelude;
    l.libraries[0] = "rope_turns";
    l.libraries[1] = f16 ? wg_f16_library(ctx) : "f16_bits";
    l.params = &p;
    l.params_size = sizeof p;
    l.bindings[0] = (wg_binding){qkv->storage, false};
    l.bindings[1] = (wg_binding){freq, false};
    l.bindings[2] = (wg_binding){q->storage, true};
    l.bindings[3] = (wg_binding){cache->storage, true};
    l.bindings[4] = (wg_binding){position ? position->storage : freq, false};
    l.nbindings = 5;
    l.workgroups = (B * S * heads * H + ROPE_WG - 1) / ROPE_WG;
    return wg_dispatch(ctx, &l);
}

/* ------------------------------------------------ rope_kv_attention */

/* wt_rope_kv_attention (node ROPE_KV_ATTENTION) for one query a head:
 * wgsl/rope_kv_attention.wgsl, rope_kv_cache's rotation and
 * attention_decode's one pass (its limits: a whole row's scores in
 * workgroup memory, so at most ROPE_ATTN_MAX_KEYS keys). */
#define ROPE_ATTN_MAX_KEYS 2048u

/* Threads a workgroup: attention_decode's (256 on a GPU, 64 on a software
 * adapter; WT_ATTN_WG overrides). */
static uint32_t rope_attn_threads(const wt_context *ctx)
{
    const uint32_t fallback = wg_get_caps(ctx)->cpu_adapter ? 64u : 256u;
    const uint64_t v = wt_knob_number(WT_KNOB_ATTN_WG, fallback);
    uint32_t wg = wg_is_pow2(v) && v >= 32 && v <= 256 ? (uint32_t)v : fallback;
    return wg > wg_get_caps(ctx)->max_invocations ? 64u : wg;
}

/* Score slots: the key capacity rounded up to a power of two (at least
 * 256), so that caches of nearby sizes share one pipeline. */
static uint32_t rope_attn_slots(uint64_t T)
{
    uint32_t sk = 256u;
    while (sk < T) sk *= 2u;
    return sk;
}

static bool u32_view(const wt_tensor *t)
{
    bool ok = t->offset >= 0 && t->offset <= UINT32_MAX && t->storage->bytes / 2 <= UINT32_MAX;
    for (int d = 0; d < 4; d++) ok = ok && t->strides[d] >= 0 && t->strides[d] <= UINT32_MAX;
    return ok;
}

bool wg_rope_kv_attention_fits(const wt_context *ctx, const wt_tensor *qkv, const wt_tensor *kv_cache,
                               const wt_tensor *position, const wt_tensor *kv_length, int64_t offset)
{
    const uint64_t B = (uint64_t)qkv->shape[0], S = (uint64_t)qkv->shape[1], D = (uint64_t)qkv->shape[3],
                   Hq = (uint64_t)qkv->shape[2] - (uint64_t)kv_cache->shape[1], T = (uint64_t)kv_cache->shape[2];
    const char *knob = wt_knob_text(WT_KNOB_ATTN_DECODE);
    if ((knob && strcmp(knob, "0") == 0) || S != 1 || D % 4 || !wg_is_pow2(D / 4) || T > ROPE_ATTN_MAX_KEYS)
        return false;
    /* The cache's rows whole vec4s at 16-byte boundaries. */
    bool ok = kv_cache->strides[3] == 1 && kv_cache->offset % 4 == 0;
    for (int d = 0; d < 3; d++) ok = ok && (kv_cache->shape[d] == 1 || kv_cache->strides[d] % 4 == 0);
    const uint32_t wg = rope_attn_threads(ctx);
    const uint64_t bytes = 4u * (3u * D + rope_attn_slots(T)) + 8u * wg + 16u * (uint64_t)wg;
    return ok && D / 4 <= wg && bytes <= wg_get_caps(ctx)->max_workgroup_storage && u32_view(qkv) &&
           u32_view(kv_cache) && kv_cache->storage->bytes / 4 <= UINT32_MAX && B * Hq * D <= UINT32_MAX &&
           !wg_needs_windows(ctx, qkv) && !wg_needs_windows(ctx, kv_cache) &&
           (!position || (uint64_t)position->offset < UINT32_MAX) &&
           (!kv_length || (uint64_t)kv_length->offset < UINT32_MAX) && (uint64_t)offset < (1u << 24);
}

wt_status wg_rope_kv_attention(wt_context *ctx, const wt_tensor *qkv, const wt_tensor *position,
                               const wt_tensor *kv_length, const wt_rope_freqs *freqs, int64_t offset,
                               int64_t q_heads, float scale, wt_tensor *out, wt_tensor *cache)
{
    if (!wg_rope_kv_attention_fits(ctx, qkv, cache, position, kv_length, offset) || wg_needs_windows(ctx, out) ||
        out->offset != 0)
        return wt_fail(WT_ERR_UNSUPPORTED, "webgpu rope_kv_attention: operands the one-pass kernel does not take");
    const uint64_t B = (uint64_t)qkv->shape[0], D = (uint64_t)qkv->shape[3], kv = (uint64_t)cache->shape[1] / 2,
                   T = (uint64_t)cache->shape[2];
    wt_storage *freq = NULL;
    wt_status st = rope_table(ctx, freqs, D, &freq);
    if (st != WT_OK) return st;
    rope_kv_attention_params p = {
        .x_off = (uint32_t)qkv->offset, .x_sb = (uint32_t)qkv->strides[0], .x_sh = (uint32_t)qkv->strides[2],
        .x_sd = (uint32_t)qkv->strides[3], .q_heads = (uint32_t)q_heads, .kv = (uint32_t)kv,
        .group = (uint32_t)((uint64_t)q_heads / kv), .t_n = (uint32_t)T, .c_off = (uint32_t)cache->offset,
        .c_sb = (uint32_t)cache->strides[0], .c_sh = (uint32_t)cache->strides[1], .c_st = (uint32_t)cache->strides[2],
        .offset = (uint32_t)offset, .pos_at = position ? (uint32_t)position->offset : ~0u,
        .kv_at = kv_length ? (uint32_t)kv_length->offset : ~0u, .workgroups = (uint32_t)(B * (uint64_t)q_heads),
        .scale = scale, .neg_inf = 0xff800000u,
    };
    const uint32_t wg = rope_attn_threads(ctx);
    char prelude[160];
    snprintf(prelude, sizeof prelude, "const WG: u32 = %uu;\nconst D: u32 = %lluu;\nconst SK: u32 = %uu;\nconst F16: bool = %s;\n",
             wg, (unsigned long long)D, rope_attn_slots(T), qkv->dtype == WT_F16 ? "true" : "false");
    wg_launch l;
    memset(&l, 0, sizeof l);
    l.shader = "rope_kv_attention";
    l.prelude = prelude;
    l.libraries[0] = "rope_turns";
    l.libraries[1] = qkv->dtype == WT_F16 ? wg_f16_library(ctx) : "f16_bits";
    l.params = &p;
    l.params_size = sizeof p;
    l.bindings[0] = (wg_binding){qkv->storage, false};
    l.bindings[1] = (wg_binding){freq, false};
    l.bindings[2] = (wg_binding){cache->storage, true};
    l.bindings[3] = (wg_binding){out->storage, true};
    l.bindings[4] = (wg_binding){position ? position->storage : freq, false};
    l.bindings[5] = (wg_binding){kv_length ? kv_length->storage : freq, false};
    l.nbindings = 6;
    l.workgroups = B * (uint64_t)q_heads;
    return wg_dispatch(ctx, &l);
}
