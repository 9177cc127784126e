/* wt_rope_kv_cache against a float64 reference written here (rotate_half
 * rotary embedding at positions p + s, the cache's rows from the clamped
 * start) and against the composition of the library's own ops
 * (wt_rope_v2 on the heads, wt_copy_into_at into the cache), for f32 and
 * f16 projections, host and device positions, a strided projection and a
 * strided cache, plus the argument errors; and wt_rope_kv_attention (the
 * same, then attention over the cache) against a float64 reference and
 * the two calls it stands for.
 * Usage: rope_kv_cache <cpu|vulkan|gles>. */
#include "test_util.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static wt_context *g_ctx;

typedef struct rkv_case {
    wt_dtype dt;
    int64_t B, S, Hq, Hkv, D, T;
    int64_t offset, device_pos; /* device_pos < 0: no position tensor */
    bool strided;               /* qkv a view with a gap between heads, the cache a view of a wider one */
    wt_rope_scaling scaling;    /* scaled cases: theta 500000, factor 8, low 1, high 4, L 64 */
} rkv_case;

/* The scaled cases' parameters: a short original context (64) so that
 * the head dims tested have frequencies in all three bands. */
#define SC_THETA 500000.0
#define SC_FACTOR 8.0
#define SC_LOW 1.0
#define SC_HIGH 4.0
#define SC_ORIG 64

/* Frequency i of a head of D, written out here from the scaling's
 * definition (transformers' llama3 rope initialisation) as the reference. */
static double ref_freq(wt_rope_scaling sc, int64_t i, int64_t D)
{
    const double theta = sc == WT_ROPE_SCALING_NONE ? 10000.0 : SC_THETA;
    const double f = 1.0 / pow(theta, (double)(2 * i) / (double)D);
    if (sc == WT_ROPE_SCALING_LINEAR) return f / SC_FACTOR;
    if (sc != WT_ROPE_SCALING_LLAMA3) return f;
    const double low_wavelen = SC_ORIG / SC_LOW, high_wavelen = SC_ORIG / SC_HIGH, wavelen = 2 * 3.141592653589793 / f;
    const double scaled = wavelen > low_wavelen ? f / SC_FACTOR : f;
    const double smooth = (SC_ORIG / wavelen - SC_LOW) / (SC_HIGH - SC_LOW);
    const bool medium = !(wavelen < high_wavelen) && !(wavelen > low_wavelen);
    return medium ? (1 - smooth) * scaled / SC_FACTOR + smooth * scaled : scaled;
}

/* q's heads rotated the way a model's own code does scaled RoPE with the
 * library's ops (examples/llama.c): cos and sin tables [S, D] made on the
 * host, rotate_half as a product with a +-1 matrix, x cos + rot(x) sin.
 * qh [B, S, Hq, D] f32 -> *out [B, Hq, S, D]. */
static wt_status composed_scaled(const rkv_case *c, int64_t p, const wt_tensor *qh, wt_tensor **out)
{
    const int64_t S = c->S, D = c->D, H = D / 2;
    float *cs = malloc(sizeof *cs * (size_t)(S * D)), *sn = malloc(sizeof *sn * (size_t)(S * D));
    float *rot = calloc((size_t)(D * D), sizeof *rot);
    for (int64_t s = 0; s < S; s++)
        for (int64_t j = 0; j < D; j++) {
            const double a = (double)(p + s) * ref_freq(c->scaling, j % H, D);
            cs[s * D + j] = (float)cos(a);
            sn[s * D + j] = (float)sin(a);
        }
    for (int64_t j = 0; j < H; j++) rot[j * D + j + H] = -1.0f;
    for (int64_t j = H; j < D; j++) rot[j * D + j - H] = 1.0f;
    const int64_t tshape[4] = {1, S, 1, D}, rshape[2] = {D, D}, rows[2] = {c->B * S * c->Hq, D};
    wt_tensor *tc = NULL, *ts = NULL, *tr = NULL, *flat = NULL, *rh = NULL, *rh4 = NULL, *a = NULL, *b = NULL,
              *y = NULL, *qc = NULL;
    wt_status st = wt_tensor_from_data(g_ctx, WT_F32, 4, tshape, cs, &tc);
    if (st == WT_OK) st = wt_tensor_from_data(g_ctx, WT_F32, 4, tshape, sn, &ts);
    if (st == WT_OK) st = wt_tensor_from_data(g_ctx, WT_F32, 2, rshape, rot, &tr);
    if (st == WT_OK) st = wt_contiguous(qh, &qc);
    if (st == WT_OK) st = wt_reshape(qc, 2, rows, &flat);
    if (st == WT_OK) st = wt_linear(flat, tr, NULL, &rh);
    if (st == WT_OK) st = wt_reshape(rh, 4, wt_tensor_shape(qh), &rh4);
    if (st == WT_OK) st = wt_mul(qc, tc, &a);
    if (st == WT_OK) st = wt_mul(rh4, ts, &b);
    if (st == WT_OK) st = wt_add(a, b, &y);
    if (st == WT_OK) st = wt_transpose(y, 1, 2, out);
    wt_tensor *rel[] = {tc, ts, tr, flat, rh, rh4, a, b, y, qc};
    for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) wt_tensor_release(rel[i]);
    free(cs);
    free(sn);
    free(rot);
    return st;
}

static float *read_f32(const wt_tensor *t)
{
    wt_tensor *c = NULL;
    if (wt_cast(t, WT_F32, &c) != WT_OK) return NULL;
    char err[160];
    float *v = test_read_guarded(c, err, sizeof err);
    if (!v) CHECK(false, "read: %s", err);
    wt_tensor_release(c);
    return v;
}

/* The case's cache [B, 2 Hkv, T, D]: a fresh tensor, or the first D
 * columns of a [B, 2 Hkv, T, D + 2] one (strided). init holds its values. */
static wt_status make_cache(const rkv_case *c, const float *init, wt_tensor **base, wt_tensor **cache)
{
    const int64_t Dw = c->strided ? c->D + 2 : c->D;
    const int64_t shape[4] = {c->B, 2 * c->Hkv, c->T, Dw};
    wt_status st = wt_tensor_from_data(g_ctx, WT_F32, 4, shape, init, base);
    if (st != WT_OK) return st;
    return wt_slice(*base, 3, 0, c->D, 1, cache);
}

/* The float64 reference of wt_rope_kv_cache: q [B, Hq, S, D] and the
 * cache (of row length Dw) after the call, from the projection x [B, S,
 * heads + gap, D] and the cache's values before. */
static void reference(const rkv_case *c, const float *x, const float *init, double *qref, double *cref)
{
    const int64_t B = c->B, S = c->S, Hq = c->Hq, Hkv = c->Hkv, D = c->D, T = c->T, H = D / 2;
    const int64_t heads = Hq + 2 * Hkv, gap = c->strided ? 1 : 0, Dw = c->strided ? D + 2 : D;
    const int64_t ncache = B * 2 * Hkv * T * Dw;
    const int64_t p = c->offset + (c->device_pos > 0 ? c->device_pos : 0);
    const int64_t t0 = p < T - S ? p : T - S;
    for (int64_t i = 0; i < ncache; i++) cref[i] = init[i];
    for (int64_t b = 0; b < B; b++)
        for (int64_t s = 0; s < S; s++)
            for (int64_t h = 0; h < heads; h++) {
                const float *row = x + ((b * S + s) * (heads + gap) + h) * D;
                for (int64_t i = 0; i < H; i++) {
                    const double a = (double)(p + s) * ref_freq(c->scaling, i, D);
                    double y1 = row[i], y2 = row[i + H];
                    if (h < Hq + Hkv) {
                        y1 = row[i] * cos(a) - row[i + H] * sin(a);
                        y2 = row[i + H] * cos(a) + row[i] * sin(a);
                    }
                    if (h < Hq) {
                        qref[((b * Hq + h) * S + s) * D + i] = y1;
                        qref[((b * Hq + h) * S + s) * D + i + H] = y2;
                    } else {
                        const int64_t o = ((b * 2 * Hkv + (h - Hq)) * T + t0 + s) * Dw;
                        cref[o + i] = y1;
                        cref[o + i + H] = y2;
                    }
                }
            }
}

static void run(const rkv_case *c)
{
    const int64_t B = c->B, S = c->S, Hq = c->Hq, Hkv = c->Hkv, D = c->D, T = c->T;
    const int64_t heads = Hq + 2 * Hkv, gap = c->strided ? 1 : 0, Dw = c->strided ? D + 2 : D;
    char name[200];
    static const char *const scalings[3] = {"", " linear", " llama3"};
    snprintf(name, sizeof name, "%s B=%lld S=%lld Hq=%lld Hkv=%lld D=%lld T=%lld offset=%lld pos=%lld%s%s",
             wt_dtype_name(c->dt), (long long)B, (long long)S, (long long)Hq, (long long)Hkv, (long long)D,
             (long long)T, (long long)c->offset, (long long)c->device_pos, c->strided ? " strided" : "",
             scalings[c->scaling]);
    /* The projection [B, S, heads + gap, D]; qkv its first `heads` heads. */
    const int64_t n = B * S * (heads + gap) * D, ncache = B * 2 * Hkv * T * Dw;
    float *x = malloc(sizeof *x * (size_t)n), *init = malloc(sizeof *init * (size_t)ncache);
    for (int64_t i = 0; i < n; i++) {
        double v = test_rng_uniform(-2.0f, 2.0f);
        x[i] = c->dt == WT_F16 ? (float)test_half_to_double(test_double_to_half(v)) : (float)v;
    }
    for (int64_t i = 0; i < ncache; i++) init[i] = test_rng_uniform(-1.0f, 1.0f);

    /* float64 reference */
    const int64_t p = c->offset + (c->device_pos > 0 ? c->device_pos : 0);
    double *qref = malloc(sizeof *qref * (size_t)(B * Hq * S * D)), *cref = malloc(sizeof *cref * (size_t)ncache);
    reference(c, x, init, qref, cref);

    const int64_t xshape[4] = {B, S, heads + gap, D}, one = 1;
    wt_tensor *x32 = NULL, *xt = NULL, *qkv = NULL, *pos = NULL, *base = NULL, *cache = NULL, *q = NULL;
    wt_status st = wt_tensor_from_data(g_ctx, WT_F32, 4, xshape, x, &x32);
    if (st == WT_OK) st = c->dt == WT_F16 ? wt_cast(x32, WT_F16, &xt) : wt_contiguous(x32, &xt);
    if (st == WT_OK) st = wt_slice(xt, 2, 0, heads, 1, &qkv);
    if (st == WT_OK && c->device_pos >= 0) {
        const int32_t pv = (int32_t)c->device_pos;
        st = wt_tensor_from_data(g_ctx, WT_I32, 1, &one, &pv, &pos);
    }
    if (st == WT_OK) st = make_cache(c, init, &base, &cache);
    wt_rope_kv_cache_options o;
    wt_rope_kv_cache_options_init(&o);
    o.offset = c->offset;
    o.position = pos;
    if (c->scaling != WT_ROPE_SCALING_NONE) {
        o.theta = SC_THETA;
        o.scaling = c->scaling;
        o.factor = SC_FACTOR;
        o.low_freq_factor = SC_LOW;
        o.high_freq_factor = SC_HIGH;
        o.original_max_position = SC_ORIG;
    }
    if (st == WT_OK) st = wt_rope_kv_cache(cache, qkv, Hq, &o, &q);
    CHECK(st == WT_OK && q, "%s: %s", name, wt_last_error());
    const double tol = 2e-5 * (1.0 + (double)(p + S)); /* f32 angles: ~1e-7 turns a unit of position */
    if (st == WT_OK && q) {
        const int64_t *qs = wt_tensor_shape(q);
        CHECK(wt_tensor_dtype(q) == WT_F32 && qs[0] == B && qs[1] == Hq && qs[2] == S && qs[3] == D, "%s: q's shape",
              name);
        float *qv = read_f32(q), *cv = read_f32(base);
        double eq = 0, ec = 0;
        for (int64_t i = 0; qv && i < B * Hq * S * D; i++) eq = fmax(eq, fabs(qv[i] - qref[i]));
        for (int64_t i = 0; cv && i < ncache; i++) ec = fmax(ec, fabs(cv[i] - cref[i]));
        CHECK(qv && eq <= tol, "%s: q against the float64 reference: %.3g", name, eq);
        CHECK(cv && ec <= tol, "%s: the cache against the float64 reference: %.3g (columns past D untouched)", name,
              ec);
        free(qv);
        free(cv);
    }
    if (st == WT_OK && q && c->scaling != WT_ROPE_SCALING_NONE) {
        /* wt_rope_v2 has no scaling: the composition is a model's own
         * (tables made on the host), within the same tolerance. */
        wt_tensor *q32 = NULL, *qh = NULL, *qc = NULL;
        st = wt_cast(qkv, WT_F32, &q32);
        if (st == WT_OK) st = wt_slice(q32, 2, 0, Hq, 1, &qh);
        if (st == WT_OK) st = composed_scaled(c, p, qh, &qc);
        CHECK(st == WT_OK, "%s: composition: %s", name, wt_last_error());
        float *qv = read_f32(q), *q2 = st == WT_OK ? read_f32(qc) : NULL;
        double dq = 0;
        for (int64_t i = 0; q2 && qv && i < B * Hq * S * D; i++) dq = fmax(dq, fabs(qv[i] - q2[i]));
        CHECK(q2 && qv && dq <= tol, "%s: q against the composition with host tables: %.3g", name, dq);
        free(qv);
        free(q2);
        wt_tensor_release(q32);
        wt_tensor_release(qh);
        wt_tensor_release(qc);
    } else if (st == WT_OK && q) {
        float *qv = read_f32(q), *cv = read_f32(base);

        /* The composition: wt_rope_v2 (BSHD) on q's and k's heads, then
         * wt_copy_into_at of k and v into a second cache. */
        wt_tensor *base2 = NULL, *cache2 = NULL, *qh = NULL, *kh = NULL, *vh = NULL, *qr = NULL, *kr = NULL;
        wt_tensor *qt = NULL, *kt = NULL, *vt = NULL, *kc = NULL, *vc = NULL, *start = NULL, *q32 = NULL;
        st = make_cache(c, init, &base2, &cache2);
        wt_rope_options ro;
        wt_rope_options_init(&ro);
        ro.layout = WT_ROPE_BSHD;
        ro.offset = c->offset;
        ro.position = pos;
        const int32_t sv = (int32_t)p;
        if (st == WT_OK) st = wt_cast(qkv, WT_F32, &q32);
        if (st == WT_OK) st = wt_slice(q32, 2, 0, Hq, 1, &qh);
        if (st == WT_OK) st = wt_slice(q32, 2, Hq, Hq + Hkv, 1, &kh);
        if (st == WT_OK) st = wt_slice(q32, 2, Hq + Hkv, heads, 1, &vh);
        if (st == WT_OK) st = wt_rope_v2(qh, &ro, &qr);
        if (st == WT_OK) st = wt_rope_v2(kh, &ro, &kr);
        if (st == WT_OK) st = wt_transpose(qr, 1, 2, &qt);
        if (st == WT_OK) st = wt_transpose(kr, 1, 2, &kt);
        if (st == WT_OK) st = wt_transpose(vh, 1, 2, &vt);
        if (st == WT_OK) st = wt_slice(cache2, 1, 0, Hkv, 1, &kc);
        if (st == WT_OK) st = wt_slice(cache2, 1, Hkv, 2 * Hkv, 1, &vc);
        if (st == WT_OK) st = wt_tensor_from_data(g_ctx, WT_I32, 1, &one, &sv, &start);
        if (st == WT_OK) st = wt_copy_into_at(kc, 2, start, kt);
        if (st == WT_OK) st = wt_copy_into_at(vc, 2, start, vt);
        CHECK(st == WT_OK, "%s: composition: %s", name, wt_last_error());
        float *q2 = st == WT_OK ? read_f32(qt) : NULL, *c2 = st == WT_OK ? read_f32(base2) : NULL;
        double dq = 0, dc = 0;
        for (int64_t i = 0; q2 && qv && i < B * Hq * S * D; i++) dq = fmax(dq, fabs(qv[i] - q2[i]));
        for (int64_t i = 0; c2 && cv && i < ncache; i++) dc = fmax(dc, fabs(cv[i] - c2[i]));
        /* The same tables and the same arithmetic: equal to the last bit. */
        CHECK(q2 && c2 && dq == 0.0 && dc == 0.0, "%s: against the composition: q %.3g, cache %.3g", name, dq, dc);
        free(q2);
        free(c2);
        free(qv);
        free(cv);
        wt_tensor *rel[] = {base2, cache2, qh, kh, vh, qr, kr, qt, kt, vt, kc, vc, start, q32};
        for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) wt_tensor_release(rel[i]);
    }
    wt_tensor *rel[] = {x32, xt, qkv, pos, base, cache, q};
    for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) wt_tensor_release(rel[i]);
    free(x);
    free(init);
    free(qref);
    free(cref);
}

static void test_cases(void)
{
    const wt_dtype dts[2] = {WT_F32, WT_F16};
    for (int d = 0; d < 2; d++) {
        const wt_dtype dt = dts[d];
        run(&(rkv_case){dt, 1, 1, 4, 2, 8, 16, 0, 5, false, WT_ROPE_SCALING_NONE}); /* decode, device position */
        run(&(rkv_case){dt, 2, 1, 6, 3, 16, 12, 3, 7, true, WT_ROPE_SCALING_NONE}); /* batch 2, offset + pos, views */
        run(&(rkv_case){dt, 1, 5, 2, 1, 6, 9, 2, -1, false, WT_ROPE_SCALING_NONE}); /* a prompt, host offset */
        run(&(rkv_case){dt, 1, 3, 2, 2, 4, 6, 0, 40, true, WT_ROPE_SCALING_NONE}); /* rows clamped to T - S */
        run(&(rkv_case){dt, 1, 1, 1, 1, 64, 32, 1000, -1, false, WT_ROPE_SCALING_NONE});
        /* Scaled frequencies: D 64 has pairs in all three llama3 bands. */
        run(&(rkv_case){dt, 1, 1, 4, 2, 64, 16, 0, 700, false, WT_ROPE_SCALING_LLAMA3});
        run(&(rkv_case){dt, 2, 3, 2, 1, 64, 8, 5, -1, true, WT_ROPE_SCALING_LLAMA3});
        run(&(rkv_case){dt, 1, 2, 2, 1, 16, 8, 3000, 2, false, WT_ROPE_SCALING_LINEAR});
    }
}

static void test_errors(void)
{
    const int64_t qs[4] = {1, 1, 4, 4}, cs[4] = {1, 2, 8, 4}, cs_odd[4] = {1, 3, 8, 4}, cs_d[4] = {1, 2, 8, 6};
    wt_tensor *qkv = NULL, *cache = NULL, *codd = NULL, *cd = NULL, *c16 = NULL, *q = NULL;
    wt_tensor_zeros(g_ctx, WT_F32, 4, qs, &qkv);
    wt_tensor_zeros(g_ctx, WT_F32, 4, cs, &cache);
    wt_tensor_zeros(g_ctx, WT_F32, 4, cs_odd, &codd);
    wt_tensor_zeros(g_ctx, WT_F32, 4, cs_d, &cd);
    wt_tensor_zeros(g_ctx, WT_F16, 4, cs, &c16);
    wt_rope_kv_cache_options o;
    wt_rope_kv_cache_options_init(&o);
    CHECK(o.struct_size == sizeof o && o.theta == 10000.0 && o.offset == 0 && !o.position, "options defaults");
    CHECK(wt_rope_kv_cache(cache, qkv, 2, NULL, &q) == WT_OK && q, "the valid call");
    wt_tensor_release(q);
    q = NULL;
    CHECK(wt_rope_kv_cache(cache, qkv, 1, NULL, &q) == WT_ERR_SHAPE && !q, "q_heads that do not fit");
    CHECK(wt_rope_kv_cache(codd, qkv, 1, NULL, &q) == WT_ERR_SHAPE && !q, "an odd head count in the cache");
    CHECK(wt_rope_kv_cache(cd, qkv, 2, NULL, &q) == WT_ERR_SHAPE && !q, "head_dim that does not match");
    CHECK(wt_rope_kv_cache(c16, qkv, 2, NULL, &q) == WT_ERR_INVALID_ARGUMENT && !q, "an f16 cache");
    o.theta = 0.0;
    CHECK(wt_rope_kv_cache(cache, qkv, 2, &o, &q) == WT_ERR_INVALID_ARGUMENT && !q, "theta 0");
    wt_rope_kv_cache_options_init(&o);
    o.offset = -1;
    CHECK(wt_rope_kv_cache(cache, qkv, 2, &o, &q) == WT_ERR_INVALID_ARGUMENT && !q, "a negative offset");
    o.offset = 0;
    o.scaling = WT_ROPE_SCALING_LLAMA3;
    o.low_freq_factor = 4.0;
    CHECK(wt_rope_kv_cache(cache, qkv, 2, &o, &q) == WT_ERR_INVALID_ARGUMENT && !q, "llama3 with low >= high");
    o.low_freq_factor = 1.0;
    o.original_max_position = 0;
    CHECK(wt_rope_kv_cache(cache, qkv, 2, &o, &q) == WT_ERR_INVALID_ARGUMENT && !q, "llama3 with no context");
    wt_rope_kv_cache_options_init(&o);
    o.scaling = WT_ROPE_SCALING_LINEAR;
    o.factor = 0.0;
    CHECK(wt_rope_kv_cache(cache, qkv, 2, &o, &q) == WT_ERR_INVALID_ARGUMENT && !q, "a scaling factor of 0");
    o.scaling = (wt_rope_scaling)7;
    o.factor = 1.0;
    CHECK(wt_rope_kv_cache(cache, qkv, 2, &o, &q) == WT_ERR_INVALID_ARGUMENT && !q, "an unknown scaling");
    wt_rope_kv_cache_options_init(&o);
    /* A caller built before the scaling fields: its shorter options. */
    o.struct_size = (uint32_t)offsetof(wt_rope_kv_cache_options, scaling);
    o.scaling = (wt_rope_scaling)7; /* past its struct: not read */
    CHECK(wt_rope_kv_cache(cache, qkv, 2, &o, &q) == WT_OK && q, "the options of the older header");
    wt_tensor_release(q);
    q = NULL;
    o.struct_size = 1;
    CHECK(wt_rope_kv_cache(cache, qkv, 2, &o, &q) == WT_ERR_INVALID_ARGUMENT && !q, "an uninitialised options");
    wt_tensor *rel[] = {qkv, cache, codd, cd, c16};
    for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) wt_tensor_release(rel[i]);
}

/* ------------------------------------------------------ rope_kv_attention */

/* wt_rope_kv_attention on case c with attention's kv_length (< 0: none)
 * and causal: its result and cache against the float64 reference (rope,
 * then softmax(q k^T / sqrt(D)) v over the cache's first keys, causal
 * aligned to their end) and against the two calls it stands for, on a
 * second cache (the CPU: equal to the last bit). */
static void run_attention(const rkv_case *c, int64_t kv_len, bool causal)
{
    const int64_t B = c->B, S = c->S, Hq = c->Hq, Hkv = c->Hkv, D = c->D, T = c->T;
    const int64_t heads = Hq + 2 * Hkv, gap = c->strided ? 1 : 0, Dw = c->strided ? D + 2 : D;
    char name[200];
    snprintf(name, sizeof name, "rope_kv_attention %s B=%lld S=%lld Hq=%lld Hkv=%lld D=%lld T=%lld offset=%lld pos=%lld kv_length=%lld%s%s",
             wt_dtype_name(c->dt), (long long)B, (long long)S, (long long)Hq, (long long)Hkv, (long long)D,
             (long long)T, (long long)c->offset, (long long)c->device_pos, (long long)kv_len,
             c->strided ? " strided" : "", causal ? " causal" : "");
    const int64_t n = B * S * (heads + gap) * D, ncache = B * 2 * Hkv * T * Dw, nout = B * Hq * S * D;
    float *x = malloc(sizeof *x * (size_t)n), *init = malloc(sizeof *init * (size_t)ncache);
    for (int64_t i = 0; i < n; i++) {
        double v = test_rng_uniform(-2.0f, 2.0f);
        x[i] = c->dt == WT_F16 ? (float)test_half_to_double(test_double_to_half(v)) : (float)v;
    }
    for (int64_t i = 0; i < ncache; i++) init[i] = test_rng_uniform(-1.0f, 1.0f);
    double *qref = malloc(sizeof *qref * (size_t)nout), *cref = malloc(sizeof *cref * (size_t)ncache);
    double *oref = malloc(sizeof *oref * (size_t)nout), *w = malloc(sizeof *w * (size_t)T);
    reference(c, x, init, qref, cref);
    const int64_t keys = kv_len < 0 ? T : kv_len > T ? T : kv_len;
    for (int64_t b = 0; b < B; b++)
        for (int64_t h = 0; h < Hq; h++)
            for (int64_t s = 0; s < S; s++) {
                const int64_t kvh = h / (Hq / Hkv), end = causal ? (s + keys - S + 1 < keys ? s + keys - S + 1 : keys) : keys;
                const double *qr = qref + ((b * Hq + h) * S + s) * D;
                double mx = -INFINITY, sum = 0;
                for (int64_t j = 0; j < end; j++) {
                    const double *kr = cref + ((b * 2 * Hkv + kvh) * T + j) * Dw;
                    double d = 0;
                    for (int64_t e = 0; e < D; e++) d += qr[e] * kr[e];
                    w[j] = d / sqrt((double)D);
                    mx = fmax(mx, w[j]);
                }
                for (int64_t j = 0; j < end; j++) sum += (w[j] = exp(w[j] - mx));
                for (int64_t e = 0; e < D; e++) {
                    double a = 0;
                    for (int64_t j = 0; j < end; j++) a += w[j] * cref[((b * 2 * Hkv + Hkv + kvh) * T + j) * Dw + e];
                    oref[((b * Hq + h) * S + s) * D + e] = end > 0 ? a / sum : 0.0;
                }
            }

    const int64_t xshape[4] = {B, S, heads + gap, D}, one = 1;
    wt_tensor *x32 = NULL, *xt = NULL, *qkv = NULL, *pos = NULL, *kvl = NULL, *base = NULL, *cache = NULL;
    wt_tensor *out = NULL, *base2 = NULL, *cache2 = NULL, *q2 = NULL, *k2 = NULL, *v2 = NULL, *out2 = NULL;
    wt_status st = wt_tensor_from_data(g_ctx, WT_F32, 4, xshape, x, &x32);
    if (st == WT_OK) st = c->dt == WT_F16 ? wt_cast(x32, WT_F16, &xt) : wt_contiguous(x32, &xt);
    if (st == WT_OK) st = wt_slice(xt, 2, 0, heads, 1, &qkv);
    if (st == WT_OK && c->device_pos >= 0) {
        const int32_t pv = (int32_t)c->device_pos;
        st = wt_tensor_from_data(g_ctx, WT_I32, 1, &one, &pv, &pos);
    }
    if (st == WT_OK && kv_len >= 0) {
        const int32_t kv = (int32_t)kv_len;
        st = wt_tensor_from_data(g_ctx, WT_I32, 1, &one, &kv, &kvl);
    }
    if (st == WT_OK) st = make_cache(c, init, &base, &cache);
    if (st == WT_OK) st = make_cache(c, init, &base2, &cache2);
    wt_rope_kv_cache_options o;
    wt_rope_kv_cache_options_init(&o);
    o.offset = c->offset;
    o.position = pos;
    wt_attention_options ao;
    wt_attention_options_init(&ao);
    ao.causal = causal;
    ao.kv_length = kvl;
    if (st == WT_OK) st = wt_rope_kv_attention(cache, qkv, Hq, &o, &ao, &out);
    CHECK(st == WT_OK && out, "%s: %s", name, wt_last_error());
    if (st == WT_OK) st = wt_rope_kv_cache(cache2, qkv, Hq, &o, &q2);
    if (st == WT_OK) st = wt_slice(cache2, 1, 0, Hkv, 1, &k2);
    if (st == WT_OK) st = wt_slice(cache2, 1, Hkv, 2 * Hkv, 1, &v2);
    if (st == WT_OK) st = wt_scaled_dot_product_attention_v2(q2, k2, v2, NULL, &ao, &out2);
    CHECK(st == WT_OK, "%s: the two calls: %s", name, wt_last_error());
    if (st == WT_OK) {
        const int64_t *os = wt_tensor_shape(out);
        CHECK(wt_tensor_dtype(out) == WT_F32 && os[0] == B && os[1] == Hq && os[2] == S && os[3] == D,
              "%s: the result's shape", name);
        float *ov = read_f32(out), *cv = read_f32(base), *o2 = read_f32(out2), *c2 = read_f32(base2);
        double eo = 0, ec = 0, dout = 0, dc = 0;
        for (int64_t i = 0; ov && o2 && i < nout; i++) {
            eo = fmax(eo, fabs(ov[i] - oref[i]));
            dout = fmax(dout, fabs(ov[i] - o2[i]));
        }
        for (int64_t i = 0; cv && c2 && i < ncache; i++) {
            ec = fmax(ec, fabs(cv[i] - cref[i]));
            dc = fmax(dc, fabs(cv[i] - c2[i]));
        }
        const int64_t p = c->offset + (c->device_pos > 0 ? c->device_pos : 0);
        const double tol = 2e-5 * (1.0 + (double)(p + S));
        CHECK(ov && eo <= 4 * tol, "%s: the result against the float64 reference: %.3g", name, eo);
        CHECK(cv && ec <= tol, "%s: the cache against the float64 reference: %.3g", name, ec);
        /* The CPU runs the two kernels in turn; a GPU's one kernel rounds
         * the same sums in another order. */
        const bool cpu = wt_context_backend(g_ctx) == WT_BACKEND_CPU;
        CHECK(ov && o2 && (cpu ? dout == 0.0 : dout <= 1e-5), "%s: result against the two calls: %.3g", name, dout);
        CHECK(cv && c2 && (cpu ? dc == 0.0 : dc <= 1e-6), "%s: cache against the two calls: %.3g", name, dc);
        free(ov);
        free(cv);
        free(o2);
        free(c2);
    }
    wt_tensor *rel[] = {x32, xt, qkv, pos, kvl, base, cache, out, base2, cache2, q2, k2, v2, out2};
    for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) wt_tensor_release(rel[i]);
    free(x);
    free(init);
    free(qref);
    free(cref);
    free(oref);
    free(w);
}

static void test_attention(void)
{
    const wt_dtype dts[2] = {WT_F32, WT_F16};
    for (int d = 0; d < 2; d++) {
        const wt_dtype dt = dts[d];
        /* A decode step as the example's: device position, kv_length = position + 1. */
        run_attention(&(rkv_case){dt, 1, 1, 4, 2, 8, 16, 0, 5, false, WT_ROPE_SCALING_NONE}, 6, true);
        /* batch 2, groups of 3, every key of the cache (no kv_length), more keys than 256 score slots */
        run_attention(&(rkv_case){dt, 2, 1, 6, 2, 16, 300, 3, 290, false, WT_ROPE_SCALING_NONE}, -1, false);
        /* head dim 64, a host offset, kv_length past the row written */
        run_attention(&(rkv_case){dt, 1, 1, 2, 1, 64, 40, 20, -1, false, WT_ROPE_SCALING_NONE}, 30, true);
        /* the position past the cache: the last row written */
        run_attention(&(rkv_case){dt, 1, 1, 2, 2, 8, 8, 0, 40, false, WT_ROPE_SCALING_NONE}, 8, true);
        /* kv_length 0: no key, zeros */
        run_attention(&(rkv_case){dt, 1, 1, 2, 1, 8, 8, 0, 3, false, WT_ROPE_SCALING_NONE}, 0, true);
        /* a strided cache (rows not at 16 bytes) and head dim 12: the two kernels */
        run_attention(&(rkv_case){dt, 2, 1, 6, 3, 8, 12, 3, 7, true, WT_ROPE_SCALING_NONE}, 11, true);
        run_attention(&(rkv_case){dt, 1, 1, 2, 1, 12, 8, 1, 2, false, WT_ROPE_SCALING_NONE}, 4, true);
        /* a prompt (S > 1) into the first rows, causal */
        run_attention(&(rkv_case){dt, 1, 5, 4, 2, 8, 5, 0, -1, false, WT_ROPE_SCALING_NONE}, -1, true);
    }
    /* The checks of both calls. */
    const int64_t qs[4] = {1, 1, 4, 4}, cs[4] = {1, 2, 8, 4};
    wt_tensor *qkv = NULL, *cache = NULL, *out = NULL, *f = NULL;
    wt_tensor_zeros(g_ctx, WT_F32, 4, qs, &qkv);
    wt_tensor_zeros(g_ctx, WT_F32, 4, cs, &cache);
    wt_tensor_zeros(g_ctx, WT_F32, 1, qs, &f);
    wt_attention_options ao;
    wt_attention_options_init(&ao);
    CHECK(wt_rope_kv_attention(cache, qkv, 1, NULL, NULL, &out) == WT_ERR_SHAPE && !out, "attention: q_heads that do not fit");
    ao.scale = INFINITY;
    CHECK(wt_rope_kv_attention(cache, qkv, 2, NULL, &ao, &out) == WT_ERR_INVALID_ARGUMENT && !out, "attention: an infinite scale");
    wt_attention_options_init(&ao);
    ao.kv_length = f;
    CHECK(wt_rope_kv_attention(cache, qkv, 2, NULL, &ao, &out) == WT_ERR_INVALID_ARGUMENT && !out, "attention: an f32 kv_length");
    ao.kv_length = NULL;
    ao.struct_size = 1;
    CHECK(wt_rope_kv_attention(cache, qkv, 2, NULL, &ao, &out) == WT_ERR_INVALID_ARGUMENT && !out, "attention: an uninitialised options");
    CHECK(wt_rope_kv_attention(cache, qkv, 2, NULL, NULL, NULL) == WT_ERR_INVALID_ARGUMENT, "attention: no out-pointer");
    CHECK(wt_rope_kv_attention(cache, qkv, 2, NULL, NULL, &out) == WT_OK && out, "attention: the valid call");
    wt_tensor *rel[] = {qkv, cache, out, f};
    for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) wt_tensor_release(rel[i]);
}

int main(int argc, char **argv)
{
    test_run run;
    if (!test_begin(&run, "rope_kv_cache", argc, argv)) return run.status;
    g_ctx = run.ctx;
    test_cases();
    test_errors();
    test_attention();
    test_check_nothing_alive(g_ctx);
    return test_end(&run);
}
