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
