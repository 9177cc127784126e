/* Rotary position embedding on the CPU. The cos/sin of every (position,
 * frequency) pair are computed once per call, in double (sin/cos of the
 * exact angle, whatever the position), and shared by every head and batch
 * entry. */
#include "cpu/cpu.h"
#include "cpu/half.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

wt_status cpu_rope(wt_context *ctx, const wt_tensor *x, const wt_tensor *position, double theta, int64_t offset,
                  wt_tensor *out)
{
    if (position) { /* the step's position, read where the kernel runs */
        const int64_t p = ((const int32_t *)position->storage->host)[position->offset];
        offset += p > 0 ? p : 0;
    }
    const int64_t A = x->shape[0], S = x->shape[1], C = x->shape[2], D = x->shape[3], H = D / 2;
    const int64_t sa = x->strides[0], ss = x->strides[1], sc = x->strides[2], sd = x->strides[3];
    size_t bytes;
    if (!wt_mul_size((size_t)S, (size_t)H, &bytes) || !wt_mul_size(bytes, 2 * sizeof(float), &bytes))
        return wt_fail(WT_ERR_OUT_OF_MEMORY, "cpu: rope: table size overflows");
    float *tab = malloc(bytes ? bytes : 1);
    if (!tab) return wt_fail(WT_ERR_OUT_OF_MEMORY, "cpu: rope: cannot allocate %zu bytes", bytes);
    const int threads = A * S * C * D >= CPU_PARALLEL_MIN ? cpu_threads(ctx) : 1;
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int64_t s = 0; s < S; s++) {
        const double pos = (double)(offset + s);
        for (int64_t i = 0; i < H; i++) {
            const double a = pos * pow(theta, -2.0 * (double)i / (double)D);
            tab[(s * H + i) * 2] = (float)cos(a);
            tab[(s * H + i) * 2 + 1] = (float)sin(a);
        }
    }
    const float *xp = cpu_data(x);
    float *o = cpu_data(out);
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int64_t r = 0; r < A * S * C; r++) {
        const int64_t c = r % C, s = (r / C) % S, a = r / (C * S);
        const float *xr = xp + a * sa + s * ss + c * sc;
        const float *t = tab + s * H * 2;
        float *orow = o + r * D;
        for (int64_t i = 0; i < H; i++) {
            const float x1 = xr[i * sd], x2 = xr[(i + H) * sd], cs = t[2 * i], sn = t[2 * i + 1];
            orow[i] = x1 * cs - x2 * sn;
            orow[i + H] = x2 * cs + x1 * sn;
        }
    }
    free(tab);
    return WT_OK;
}

/* wt_rope_kv_cache (node ROPE_KV_CACHE): the tables as cpu_rope makes them,
 * q's heads rotated into q, k's rotated and v's copied into the cache's
 * rows t0 .. t0 + S - 1. */
wt_status cpu_rope_kv_cache(wt_context *ctx, const wt_tensor *qkv, const wt_tensor *position,
                            const wt_rope_freqs *freqs, int64_t offset, int64_t q_heads, wt_tensor *q,
                            wt_tensor *cache)
{
    if (position) {
        const int64_t p = ((const int32_t *)position->storage->host)[position->offset];
        offset += p > 0 ? p : 0;
    }
    const int64_t B = qkv->shape[0], S = qkv->shape[1], D = qkv->shape[3], H = D / 2;
    const int64_t kv = cache->shape[1] / 2, T = cache->shape[2];
    const int64_t t0 = offset < T - S ? offset : T - S;
    float *tab = malloc(sizeof *tab * (size_t)(S * H * 2 + 1));
    double *f = malloc(sizeof *f * (size_t)(H + 1));
    if (!tab || !f) {
        free(tab);
        free(f);
        return wt_fail(WT_ERR_OUT_OF_MEMORY, "cpu: rope_kv_cache: cannot allocate its table");
    }
    for (int64_t i = 0; i < H; i++) f[i] = wt_rope_frequency(freqs, i, D);
    for (int64_t s = 0; s < S; s++) {
        const double pos = (double)(offset + s);
        for (int64_t i = 0; i < H; i++) {
            const double a = pos * f[i];
            tab[(s * H + i) * 2] = (float)cos(a);
            tab[(s * H + i) * 2 + 1] = (float)sin(a);
        }
    }
    const bool f16 = qkv->dtype == WT_F16;
    const void *src = qkv->storage->host;
    float *qo = cpu_data(q), *c = (float *)cache->storage->host;
    const int64_t heads = q_heads + 2 * kv;
    const int threads = B * S * heads * D >= CPU_PARALLEL_MIN ? cpu_threads(ctx) : 1;
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int64_t r = 0; r < B * S * heads; r++) {
        const int64_t h = r % heads, s = (r / heads) % S, b = r / (heads * S);
        const int64_t base = qkv->offset + b * qkv->strides[0] + s * qkv->strides[1] + h * qkv->strides[2];
        const int64_t sd = qkv->strides[3];
        const float *t = tab + s * H * 2;
        for (int64_t i = 0; i < H; i++) {
            float x1, x2;
            if (f16) {
                uint32_t u1 = cpu_half_to_f32_bits(((const uint16_t *)src)[base + i * sd]);
                uint32_t u2 = cpu_half_to_f32_bits(((const uint16_t *)src)[base + (i + H) * sd]);
                memcpy(&x1, &u1, sizeof x1);
                memcpy(&x2, &u2, sizeof x2);
            } else {
                x1 = ((const float *)src)[base + i * sd];
                x2 = ((const float *)src)[base + (i + H) * sd];
            }
            float y1 = x1, y2 = x2;
            if (h < q_heads + kv) { /* q and k heads turn; v's are copied */
                y1 = x1 * t[2 * i] - x2 * t[2 * i + 1];
                y2 = x2 * t[2 * i] + x1 * t[2 * i + 1];
            }
            if (h < q_heads) {
                float *o = qo + ((b * q_heads + h) * S + s) * D;
                o[i] = y1;
                o[i + H] = y2;
            } else {
                const int64_t ch = h - q_heads; /* k's heads, then v's: the cache's order */
                float *o = c + cache->offset + b * cache->strides[0] + ch * cache->strides[1] +
                           (t0 + s) * cache->strides[2];
                o[i * cache->strides[3]] = y1;
                o[(i + H) * cache->strides[3]] = y2;
            }
        }
    }
    free(tab);
    free(f);
    return WT_OK;
}

/* node ROPE_KV_ATTENTION: rope_kv_cache's kernel into a q of its own, then
 * the attention kernel over the cache's key and value heads, so the
 * results are the two ops', bit for bit. q lives in host memory of this
 * call (not the context's pool: a replayed step allocates nothing). */
wt_status cpu_rope_kv_attention(wt_context *ctx, const wt_tensor *qkv, const wt_tensor *position,
                                const wt_tensor *kv_length, const wt_rope_freqs *freqs, int64_t offset,
                                int64_t q_heads, bool causal, float scale, wt_tensor *out, wt_tensor *cache)
{
    const int64_t B = qkv->shape[0], S = qkv->shape[1], D = qkv->shape[3], n = B * q_heads * S * D;
    float *qbuf = malloc(sizeof *qbuf * (size_t)(n > 0 ? n : 1));
    if (!qbuf) return wt_fail(WT_ERR_OUT_OF_MEMORY, "cpu: rope_kv_attention: cannot allocate its q");
    wt_storage qs = {.refcount = 1, .ctx = ctx, .bytes = sizeof *qbuf * (size_t)n, .host = qbuf, .borrowed = true};
    wt_tensor q = {.refcount = 1, .storage = &qs, .dtype = WT_F32, .ndim = 4, .shape = {B, q_heads, S, D},
                   .strides = {q_heads * S * D, S * D, D, 1}, .numel = n};
    wt_status st = cpu_rope_kv_cache(ctx, qkv, position, freqs, offset, q_heads, &q, cache);
    if (st == WT_OK) {
        /* The cache's halves as views: k's heads, then v's. */
        wt_tensor k = *cache, v = *cache;
        k.shape[1] = v.shape[1] = cache->shape[1] / 2;
        k.numel = v.numel = cache->numel / 2;
        v.offset = cache->offset + k.shape[1] * cache->strides[1];
        wt_attention_args a = {.q = &q, .k = &k, .v = &v, .kv_length = kv_length, .causal = causal, .scale = scale,
                               .out = out};
        st = cpu_attention(ctx, &a);
    }
    free(qbuf);
    return st;
}
