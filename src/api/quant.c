/* Quantised weights (webtensor.h, "quantised weights"): ggml's Q8_0,
 * Q4_0, Q4_K and Q6_K blocks held in an i32 tensor [N, W] (core/quant.h). Making one from
 * file bytes and quantising run on the host (load-time steps); dequantise
 * and the quantised linear are backend nodes. */
#include "api/api.h"
#include "autograd/tape.h"
#include "core/quant.h"
#include "cpu/cpu.h" /* cpu_host_threads */
#include "cpu/half.h"

#include <math.h>
#include <stdlib.h>

static const char *type_name(wt_quant_type type) { return wt_quant_type_name(type); }

static wt_status check_type(const char *fn, wt_quant_type type)
{
    if (wt_quant_block_bytes(type) == 0)
        return wt_fail(WT_ERR_INVALID_ARGUMENT,
                       "%s: type %d is not WT_QUANT_Q8_0, WT_QUANT_Q4_0, WT_QUANT_Q4_K or WT_QUANT_Q6_K", fn,
                       (int)type);
    return WT_OK;
}

/* Rows larger than this are refused: the kernels index a row's words and a
 * row's elements in 32 bits. */
#define MAX_K ((int64_t)1 << 30)

static wt_status check_extents(const char *fn, wt_quant_type type, int64_t n, int64_t k)
{
    const int be = wt_quant_block_elems(type);
    if (n <= 0 || k <= 0 || k % be != 0)
        return wt_fail(WT_ERR_SHAPE, "%s: [N, K] = [%lld, %lld] needs N > 0 and K > 0 a multiple of %d (%s)", fn,
                       (long long)n, (long long)k, be, type_name(type));
    if (k > MAX_K || n > INT64_MAX / wt_quant_row_words(WT_QUANT_Q8_0, k) / 4)
        return wt_fail(WT_ERR_SHAPE, "%s: [N, K] = [%lld, %lld] is too large", fn, (long long)n, (long long)k);
    return WT_OK;
}

/* The K of w (an i32 [N, W] of type), or an error naming fn (api.h). */
wt_status wt_quant_weight_k(const char *fn, const wt_tensor *w, wt_quant_type type, int64_t *k)
{
    wt_status st = wt_check_tensor(fn, w);
    if (st != WT_OK || (st = check_type(fn, type)) != WT_OK) return st;
    if (w->dtype != WT_I32)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: w must be the i32 form of a quantised weight (got %s)", fn,
                       wt_dtype_name(w->dtype));
    char b[160];
    if (w->ndim != 2 || (*k = wt_quant_row_elems(type, w->shape[1])) < 0 || w->shape[0] <= 0 || *k > MAX_K)
        return wt_fail(WT_ERR_SHAPE, "%s: w %s is no [N, W] of %s rows (W = ceil(K/%d * %d / 4))", fn,
                       wt_shape_str(w->ndim, w->shape, b, sizeof b), type_name(type), wt_quant_block_elems(type),
                       wt_quant_block_bytes(type));
    return WT_OK;
}

/* Packs n rows of nbytes block bytes each (row after row in src) into
 * words rows of W words, zero-padded. */
static void pack_rows(const uint8_t *src, int64_t n, int64_t row_bytes, int64_t words, uint32_t *dst)
{
    for (int64_t r = 0; r < n; r++) {
        uint32_t *row = dst + r * words;
        memset(row, 0, (size_t)words * 4);
        for (int64_t b = 0; b < row_bytes; b++)
            row[b / 4] |= (uint32_t)src[r * row_bytes + b] << (8 * (b % 4));
    }
}

static wt_status upload_blocks(wt_context *ctx, wt_quant_type type, int64_t n, int64_t k, const uint8_t *blocks,
                               wt_tensor **out)
{
    const int64_t words = wt_quant_row_words(type, k),
                  row_bytes = k / wt_quant_block_elems(type) * wt_quant_block_bytes(type);
    uint32_t *packed = malloc((size_t)(n * words) * 4);
    if (!packed)
        return wt_fail(WT_ERR_OUT_OF_MEMORY, "quantised weight: cannot allocate %lld bytes on the host",
                       (long long)(n * words * 4));
    pack_rows(blocks, n, row_bytes, words, packed);
    const int64_t shape[2] = {n, words};
    wt_status st = wt_tensor_from_data(ctx, WT_I32, 2, shape, packed, out);
    free(packed);
    return st;
}

wt_status wt_quant_from_blocks(wt_context *ctx, wt_quant_type type, int64_t n, int64_t k, const void *blocks,
                               size_t bytes, wt_tensor **out)
{
    const char *fn = "wt_quant_from_blocks";
    wt_status st = wt_check_out(fn, out);
    if (st != WT_OK) return st;
    if (!ctx) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: ctx is NULL", fn);
    if ((st = check_type(fn, type)) != WT_OK || (st = check_extents(fn, type, n, k)) != WT_OK) return st;
    if (!blocks) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: blocks is NULL", fn);
    const int64_t need = n * (k / wt_quant_block_elems(type)) * wt_quant_block_bytes(type);
    if ((uint64_t)need != (uint64_t)bytes)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: %zu bytes given, [%lld, %lld] of %s takes %lld", fn, bytes,
                       (long long)n, (long long)k, type_name(type), (long long)need);
    return upload_blocks(ctx, type, n, k, blocks, out);
}

/* --- the reference quantisers (ggml's quantize_row_*_ref) --- */

static uint16_t to_half(float f)
{
    uint32_t bits;
    memcpy(&bits, &f, 4);
    return cpu_f32_bits_to_half(bits);
}

/* One block of 32 values into dst (34 bytes). Each product and sum is its
 * own statement so that no compiler fuses them (the reference rounds
 * each). */
static void quantize_q8_0(const float *x, uint8_t *dst)
{
    float amax = 0.0f;
    for (int j = 0; j < WT_QUANT_BLOCK; j++) amax = fmaxf(amax, fabsf(x[j]));
    const float d = amax / 127.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    const uint16_t h = to_half(d);
    dst[0] = (uint8_t)(h & 0xff), dst[1] = (uint8_t)(h >> 8);
    for (int j = 0; j < WT_QUANT_BLOCK; j++) {
        const float v = x[j] * id;
        dst[2 + j] = (uint8_t)(int8_t)roundf(v);
    }
}

static void quantize_q4_0(const float *x, uint8_t *dst)
{
    float amax = 0.0f, max = 0.0f;
    for (int j = 0; j < WT_QUANT_BLOCK; j++)
        if (amax < fabsf(x[j])) amax = fabsf(x[j]), max = x[j];
    const float d = max / -8.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    const uint16_t h = to_half(d);
    dst[0] = (uint8_t)(h & 0xff), dst[1] = (uint8_t)(h >> 8);
    for (int j = 0; j < WT_QUANT_BLOCK / 2; j++) {
        uint8_t q[2];
        for (int half = 0; half < 2; half++) {
            const float v = x[j + 16 * half] * id;
            const float shifted = v + 8.5f;
            const int t = (int8_t)shifted; /* in [0, 16]: |v| <= 8 */
            q[half] = (uint8_t)(t < 15 ? t : 15);
        }
        dst[2 + j] = (uint8_t)(q[0] | q[1] << 4);
    }
}

/* nblocks blocks of vals into blocks. The blocks are independent, so
 * threads change nothing in the bytes; they matter at load time: one core
 * quantises Q4_K at about 9 M weights a second (its scale search), so a
 * 7B checkpoint would take over ten minutes. */
static void quantize_blocks(wt_quant_type type, const float *vals, uint8_t *blocks, int64_t nblocks, int threads)
{
    const int be = wt_quant_block_elems(type), bb = wt_quant_block_bytes(type);
    (void)threads;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nblocks >= 256 ? threads : 1) schedule(static)
#endif
    for (int64_t blk = 0; blk < nblocks; blk++) {
        const float *xb = vals + blk * be;
        uint8_t *db = blocks + blk * bb;
        switch (type) {
        case WT_QUANT_Q8_0: quantize_q8_0(xb, db); break;
        case WT_QUANT_Q4_0: quantize_q4_0(xb, db); break;
        case WT_QUANT_Q4_K: wt_quantize_block_q4_k(xb, db); break;
        case WT_QUANT_Q6_K: wt_quantize_block_q6_k(xb, db); break;
        }
    }
}

wt_status wt_quantize(const wt_tensor *x, wt_quant_type type, wt_tensor **out)
{
    const char *fn = "wt_quantize";
    wt_status st = wt_check_out(fn, out);
    if (st != WT_OK || (st = wt_check_input(fn, x)) != WT_OK || (st = check_type(fn, type)) != WT_OK) return st;
    char b[160];
    if (x->ndim != 2)
        return wt_fail(WT_ERR_SHAPE, "%s: x must be 2-D [N, K] (got %s)", fn,
                       wt_shape_str(x->ndim, x->shape, b, sizeof b));
    const int64_t n = x->shape[0], k = x->shape[1];
    if ((st = check_extents(fn, type, n, k)) != WT_OK) return st;
    /* The values as f32 on the host (an f16 x is exact in f32). */
    wt_tensor *xf = NULL;
    float *vals = malloc((size_t)(n * k) * sizeof(float));
    const int be = wt_quant_block_elems(type), bb = wt_quant_block_bytes(type);
    uint8_t *blocks = malloc((size_t)(n * (k / be) * bb));
    if (!vals || !blocks) {
        st = wt_fail(WT_ERR_OUT_OF_MEMORY, "%s: cannot allocate host memory for [%lld, %lld]", fn, (long long)n,
                     (long long)k);
        goto done;
    }
    if ((st = wt_cast(x, WT_F32, &xf)) != WT_OK) goto done;
    if ((st = wt_tensor_read(xf, vals, (size_t)(n * k) * sizeof(float))) != WT_OK) goto done;
    for (int64_t i = 0; i < n * k; i++)
        if (!isfinite(vals[i])) {
            st = wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: element %lld of x is %g (only finite values quantise)", fn,
                         (long long)i, (double)vals[i]);
            goto done;
        }
    quantize_blocks(type, vals, blocks, n * k / be, cpu_host_threads(wt_ctx_of(x)));
    st = upload_blocks(wt_ctx_of(x), type, n, k, blocks, out);
done:
    wt_tensor_release(xf);
    free(vals);
    free(blocks);
    return st;
}

/* --- dequantise and the quantised linear: backend nodes --- */

/* w itself or its contiguous copy, one reference for the caller. */
static wt_status dense_rows(const wt_tensor *w, wt_tensor **c) { return wt_contiguous(w, c); }

wt_status wt_dequantize(const wt_tensor *w, wt_quant_type type, wt_dtype dtype, wt_tensor **out)
{
    const char *fn = "wt_dequantize";
    wt_status st = wt_check_out(fn, out);
    int64_t k = 0;
    if (st != WT_OK || (st = wt_quant_weight_k(fn, w, type, &k)) != WT_OK) return st;
    if (dtype != WT_F32 && dtype != WT_F16)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: dtype must be WT_F32 or WT_F16 (got %d)", fn, (int)dtype);
    wt_context *ctx = wt_ctx_of(w);
    if (!wt_backend_runs(ctx, WT_NODE_DEQUANTIZE))
        return wt_fail(WT_ERR_UNSUPPORTED, "%s: not available on the %s backend", fn, ctx->ops->name);
    wt_tensor *wc = NULL, *r = NULL;
    const int64_t shape[2] = {w->shape[0], k};
    if ((st = dense_rows(w, &wc)) == WT_OK && (st = wt_tensor_alloc(ctx, WT_F32, 2, shape, &r)) == WT_OK)
        st = wt_node_run(ctx, &(wt_node){.kind = WT_NODE_DEQUANTIZE, .in = {wc}, .out = {r},
                                         .p.quant = {.type = type, .k = k}});
    wt_tensor_release(wc);
    if (st != WT_OK) {
        wt_tensor_release(r);
        return st;
    }
    if (dtype == WT_F32) {
        *out = r;
        return WT_OK;
    }
    return wt_land(WT_OK, r, dtype, out);
}

/* x2 [M, K] f32 contiguous, wc contiguous, bias f32 [N] contiguous or NULL. */
static wt_status linear_node(const wt_tensor *x2, const wt_tensor *wc, wt_quant_type type, int64_t k,
                             const wt_tensor *bias, wt_tensor **out)
{
    wt_context *ctx = wt_ctx_of(x2);
    const int64_t shape[2] = {x2->shape[0], wc->shape[0]};
    wt_tensor *r = NULL;
    wt_status st = wt_tensor_alloc(ctx, WT_F32, 2, shape, &r);
    if (st == WT_OK && r->numel > 0)
        st = wt_node_run(ctx, &(wt_node){.kind = WT_NODE_LINEAR_QUANT, .in = {x2, wc, bias}, .out = {r},
                                         .p.quant = {.type = type, .k = k}});
    if (st != WT_OK) {
        wt_tensor_release(r);
        return st;
    }
    *out = r;
    return WT_OK;
}

/* x f32 [..., K], bias f32 or NULL: the checks are done. */
static wt_status linear_f32(const wt_tensor *x, const wt_tensor *w, wt_quant_type type, int64_t k,
                            const wt_tensor *bias, wt_tensor **out)
{
    wt_tensor *xc = NULL, *x2 = NULL, *wc = NULL, *bc = NULL, *y = NULL;
    const int64_t shape2[2] = {x->numel / k, k};
    wt_status st = wt_contiguous(x, &xc);
    if (st == WT_OK) st = wt_reshape(xc, 2, shape2, &x2);
    if (st == WT_OK) st = dense_rows(w, &wc);
    if (st == WT_OK && bias) st = wt_contiguous(bias, &bc);
    if (st == WT_OK) st = linear_node(x2, wc, type, k, bc, &y);
    if (st == WT_OK) {
        int64_t oshape[WT_MAX_DIMS];
        for (int i = 0; i < x->ndim - 1; i++) oshape[i] = x->shape[i];
        oshape[x->ndim - 1] = w->shape[0];
        st = wt_reshape(y, x->ndim, oshape, out);
    }
    wt_tensor_release(xc);
    wt_tensor_release(x2);
    wt_tensor_release(wc);
    wt_tensor_release(bc);
    wt_tensor_release(y);
    return st;
}

wt_status wt_linear_quant(const wt_tensor *x, const wt_tensor *w, wt_quant_type type, const wt_tensor *bias,
                          wt_tensor **out)
{
    WT_GRAD_HOOK((x, bias, NULL, NULL), 1, out, wt_linear_quant(x, w, type, bias, out),
                 .op = WT_OP_LINEAR_QUANT, .nin = 3, .in = {x, w, bias});
    const char *fn = "wt_linear_quant";
    wt_status st = wt_check_out(fn, out);
    int64_t k = 0;
    if (st != WT_OK || (st = wt_check_input(fn, x)) != WT_OK || (st = wt_quant_weight_k(fn, w, type, &k)) != WT_OK ||
        (st = wt_check_same_context(fn, x, w)) != WT_OK)
        return st;
    char b1[160], b2[160];
    if (x->ndim < 1 || x->shape[x->ndim - 1] != k)
        return wt_fail(WT_ERR_SHAPE, "%s: x %s does not end in K = %lld of w %s (%s)", fn,
                       wt_shape_str(x->ndim, x->shape, b1, sizeof b1), (long long)k,
                       wt_shape_str(w->ndim, w->shape, b2, sizeof b2), type_name(type));
    if (bias) {
        if ((st = wt_check_input(fn, bias)) != WT_OK || (st = wt_check_same_context(fn, x, bias)) != WT_OK) return st;
        if (bias->ndim != 1 || bias->shape[0] != w->shape[0])
            return wt_fail(WT_ERR_SHAPE, "%s: bias must have shape [%lld] (got %s)", fn, (long long)w->shape[0],
                           wt_shape_str(bias->ndim, bias->shape, b1, sizeof b1));
    }
    wt_context *ctx = wt_ctx_of(x);
    if (!wt_backend_runs(ctx, WT_NODE_LINEAR_QUANT))
        return wt_fail(WT_ERR_UNSUPPORTED, "%s: not available on the %s backend", fn, ctx->ops->name);
    if (!wt_has_f16(x, bias, NULL)) return linear_f32(x, w, type, k, bias, out);
    wt_lifted l;
    wt_tensor *r = NULL;
    if ((st = wt_lift_f16(x, bias, NULL, &l)) == WT_OK) st = linear_f32(l.in[0], w, type, k, l.in[1], &r);
    wt_lifted_release(&l);
    return wt_land(st, r, l.result, out);
}

/* Rows of the quantised table gathered as words (the blocks of a row are
 * its W words, so the library's embedding moves them unchanged), then
 * dequantised: only the looked-up rows are ever made dense. */
wt_status wt_embedding_quant(const wt_tensor *table, wt_quant_type type, const wt_tensor *index, wt_dtype dtype,
                             wt_tensor **out)
{
    const char *fn = "wt_embedding_quant";
    wt_status st = wt_check_out(fn, out);
    int64_t k = 0;
    if (st != WT_OK || (st = wt_quant_weight_k(fn, table, type, &k)) != WT_OK || (st = wt_check_tensor(fn, index)) != WT_OK ||
        (st = wt_check_same_context(fn, table, index)) != WT_OK)
        return st;
    if (dtype != WT_F32 && dtype != WT_F16)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: dtype must be WT_F32 or WT_F16 (got %d)", fn, (int)dtype);
    if (index->ndim + 1 > WT_MAX_DIMS)
        return wt_fail(WT_ERR_SHAPE, "%s: index has %d axes; the result would have more than %d", fn, index->ndim,
                       WT_MAX_DIMS);
    int64_t oshape[WT_MAX_DIMS];
    for (int i = 0; i < index->ndim; i++) oshape[i] = index->shape[i];
    oshape[index->ndim] = k;
    if (index->numel == 0) return wt_tensor_zeros(wt_ctx_of(table), dtype, index->ndim + 1, oshape, out);
    wt_tensor *rows = NULL, *rows2 = NULL, *dense = NULL;
    const int64_t shape2[2] = {index->numel, table->shape[1]};
    st = wt_embedding(table, index, &rows);
    if (st == WT_OK) st = wt_reshape(rows, 2, shape2, &rows2);
    if (st == WT_OK) st = wt_dequantize(rows2, type, dtype, &dense);
    if (st == WT_OK) st = wt_reshape(dense, index->ndim + 1, oshape, out);
    wt_tensor_release(rows);
    wt_tensor_release(rows2);
    wt_tensor_release(dense);
    return st;
}
