/* Quantised weights (ggml's Q8_0, Q4_0, Q4_K and Q6_K blocks): hand-made
 * blocks whose
 * bytes are derived below from the format, dequantised against float64
 * computed here from the block definition; quantisation against the bytes
 * the reference quantisers give (each case worked out in its comment) and
 * round trips; the fused linear against float64 and against dequantise +
 * the library's matmul; a GGUF file round trip. */
#define _POSIX_C_SOURCE 200809L
#include "quant_test.h"
#include "test_util.h"
#include "webtensor_io.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

wt_context *g_ctx;
bool g_cpu;

/* ------------------------------------------------------------- embedding */

/* Rows of a quantised table by index [2, 3] (repeats, the first and last
 * row): each row equal to float64 of the definition rounded to f32 (and
 * to f16); an empty index gives an empty result. */
static void test_embedding(void)
{
    const int32_t idx[6] = {4, 0, 4, 2, 5, 1};
    const int64_t ishape[2] = {2, 3}, eshape[1] = {0};
    for (int ti = 0; ti < 4; ti++) {
        const wt_quant_type t = all_types[ti];
        const int64_t v = 6, k = block_elems(t) * 2;
        const size_t bytes = (size_t)(v * k / block_elems(t) * block_bytes(t));
        uint8_t *blocks = malloc(bytes);
        if (!CHECK(blocks != NULL, "host memory")) return;
        random_blocks(t, v, k, blocks);
        wt_tensor *w = NULL, *ix = NULL, *y = NULL, *yh = NULL, *yh32 = NULL, *ie = NULL, *ye = NULL;
        wt_status st = wt_quant_from_blocks(g_ctx, t, v, k, blocks, bytes, &w);
        if (st == WT_OK) st = wt_tensor_from_data(g_ctx, WT_I32, 2, ishape, idx, &ix);
        if (st == WT_OK) st = wt_embedding_quant(w, t, ix, WT_F32, &y);
        CHECK(st == WT_OK && wt_tensor_ndim(y) == 3 && wt_tensor_shape(y)[0] == 2 && wt_tensor_shape(y)[1] == 3 &&
                  wt_tensor_shape(y)[2] == k,
              "%s embedding [2, 3] -> [2, 3, %lld]: %s", quant_type_name(t), (long long)k, wt_last_error());
        if (st == WT_OK) {
            float *got = read_f32(y);
            int bad = 0, bad16 = 0;
            for (int i = 0; got && i < 6; i++)
                for (int64_t j = 0; j < k; j++)
                    if ((double)got[i * k + j] != (double)(float)ref_at(t, blocks, k, idx[i], j, NULL)) bad++;
            CHECK(got && bad == 0, "%s embedding rows equal float64 of the definition (%d differ)", quant_type_name(t), bad);
            free(got);
            st = wt_embedding_quant(w, t, ix, WT_F16, &yh);
            if (st == WT_OK) st = wt_cast(yh, WT_F32, &yh32);
            float *h = st == WT_OK ? read_f32(yh32) : NULL;
            for (int i = 0; h && i < 6; i++)
                for (int64_t j = 0; j < k; j++) {
                    const double want = (double)(float)ref_at(t, blocks, k, idx[i], j, NULL);
                    if ((double)h[i * k + j] != test_half_to_double(test_double_to_half(want))) bad16++;
                }
            CHECK(h && bad16 == 0 && wt_tensor_dtype(yh) == WT_F16, "%s embedding to f16 (%d differ)", quant_type_name(t), bad16);
            free(h);
            st = wt_tensor_zeros(g_ctx, WT_I32, 1, eshape, &ie);
            if (st == WT_OK) st = wt_embedding_quant(w, t, ie, WT_F32, &ye);
            CHECK(st == WT_OK && wt_tensor_ndim(ye) == 2 && wt_tensor_shape(ye)[0] == 0 && wt_tensor_shape(ye)[1] == k,
                  "%s embedding of an empty index: [0, %lld] (%s)", quant_type_name(t), (long long)k, wt_last_error());
        }
        wt_tensor_release(w);
        wt_tensor_release(ix);
        wt_tensor_release(y);
        wt_tensor_release(yh);
        wt_tensor_release(yh32);
        wt_tensor_release(ie);
        wt_tensor_release(ye);
        free(blocks);
    }
}

/* ------------------------------------------------------------------ gguf */

/* quantise (Q8_0, Q4_0) or random blocks made into a weight (Q4_K, Q6_K)
 * -> the blocks into a GGUF file (add_raw, dims {K, N}) -> read back
 * (read_raw) -> a quantised tensor again: the same words. */
static void test_gguf_roundtrip(void)
{
    const int64_t n = 6, k = 256;
    float x[6 * 256];
    for (int i = 0; i < n * k; i++) x[i] = test_rng_uniform(-2.0f, 2.0f);
    char path[64];
    snprintf(path, sizeof path, "/tmp/wt_quant_%d.gguf", (int)getpid());
    for (int ti = 0; ti < 4; ti++) {
        const wt_quant_type t = all_types[ti];
        const size_t bytes = (size_t)(n * k / block_elems(t) * block_bytes(t));
        uint8_t blocks[6 * 8 * Q8_BYTES], back[6 * 8 * Q8_BYTES];
        const int64_t shape[2] = {n, k};
        const uint64_t dims[2] = {(uint64_t)k, (uint64_t)n};
        wt_tensor *xt = NULL, *q = NULL, *q2 = NULL;
        wt_gguf_writer *wr = NULL;
        wt_gguf *f = NULL;
        wt_status st = wt_tensor_from_data(g_ctx, WT_F32, 2, shape, x, &xt);
        if (ti < 2) {
            if (st == WT_OK) st = wt_quantize(xt, t, &q);
            if (st == WT_OK) st = read_blocks(q, t, n, k, blocks) ? WT_OK : WT_ERR_BACKEND;
        } else {
            random_blocks(t, n, k, blocks);
            if (st == WT_OK) st = wt_quant_from_blocks(g_ctx, t, n, k, blocks, bytes, &q);
        }
        if (st == WT_OK) st = wt_gguf_writer_create(&wr);
        if (st == WT_OK) st = wt_gguf_writer_add_raw(wr, "w", (uint32_t)t, 2, dims, blocks, bytes);
        if (st == WT_OK) st = wt_gguf_writer_save(wr, path);
        if (st == WT_OK) st = wt_gguf_open(path, &f);
        wt_gguf_tensor_info info;
        memset(&info, 0, sizeof info);
        if (st == WT_OK) st = wt_gguf_tensor_at(f, 0, &info);
        if (st == WT_OK) st = wt_gguf_read_raw(f, "w", back, bytes);
        if (st == WT_OK) st = wt_quant_from_blocks(g_ctx, (wt_quant_type)info.ggml_type, n, k, back, bytes, &q2);
        CHECK(st == WT_OK, "%s GGUF round trip: %s", quant_type_name(t), wt_last_error());
        if (st == WT_OK) {
            CHECK(info.ggml_type == (uint32_t)t && memcmp(back, blocks, bytes) == 0,
                  "%s GGUF round trip: the type and bytes come back", quant_type_name(t));
            const int64_t words = wt_tensor_shape(q)[1];
            int32_t *a = malloc(sizeof(int32_t) * (size_t)(n * words)), *c = malloc(sizeof(int32_t) * (size_t)(n * words));
            CHECK(a && c && wt_tensor_read(q, a, sizeof(int32_t) * (size_t)(n * words)) == WT_OK &&
                      wt_tensor_read(q2, c, sizeof(int32_t) * (size_t)(n * words)) == WT_OK &&
                      memcmp(a, c, sizeof(int32_t) * (size_t)(n * words)) == 0,
                  "%s GGUF round trip: the same words", quant_type_name(t));
            free(a);
            free(c);
        }
        wt_gguf_close(f);
        wt_gguf_writer_destroy(wr);
        wt_tensor_release(xt);
        wt_tensor_release(q);
        wt_tensor_release(q2);
    }
    remove(path);
}

/* ---------------------------------------------------------------- errors */

static void test_errors(void)
{
    uint8_t blocks[2 * Q8_BYTES] = {0};
    wt_tensor *w = (wt_tensor *)(uintptr_t)1;
    /* K not a multiple of 32; bytes not what [N, K] needs; a weight whose
     * W no K gives; x of another K; NaN refused by the quantiser. */
    CHECK(wt_quant_from_blocks(g_ctx, WT_QUANT_Q8_0, 2, 48, blocks, sizeof blocks, &w) == WT_ERR_SHAPE && !w,
          "from_blocks K = 48: WT_ERR_SHAPE, out NULL");
    CHECK(wt_quant_from_blocks(g_ctx, WT_QUANT_Q4_0, 2, 32, blocks, sizeof blocks, &w) == WT_ERR_INVALID_ARGUMENT,
          "from_blocks with Q8_0's byte count for Q4_0: refused");
    /* the super-block formats take K in 256s; 68 bytes are no Q6_K row */
    CHECK(wt_quant_from_blocks(g_ctx, WT_QUANT_Q4_K, 1, 128, blocks, 72, &w) == WT_ERR_SHAPE && !w,
          "from_blocks Q4_K K = 128: WT_ERR_SHAPE");
    CHECK(wt_quant_from_blocks(g_ctx, WT_QUANT_Q6_K, 1, 256, blocks, sizeof blocks, &w) == WT_ERR_INVALID_ARGUMENT &&
              !w,
          "from_blocks Q6_K with 68 bytes: refused");
    const int64_t s10[2] = {2, 10}, s2_64[2] = {2, 64};
    wt_tensor *bad = NULL, *x = NULL, *y = (wt_tensor *)(uintptr_t)1;
    if (wt_tensor_zeros(g_ctx, WT_I32, 2, s10, &bad) == WT_OK) {
        /* 40 bytes: Q8_0 K = 32 takes 9 words, K = 64 takes 17 */
        CHECK(wt_dequantize(bad, WT_QUANT_Q8_0, WT_F32, &y) == WT_ERR_SHAPE && !y, "dequantize of i32 [2, 10] as Q8_0");
        wt_tensor_release(bad);
    }
    if (wt_quant_from_blocks(g_ctx, WT_QUANT_Q8_0, 2, 32, blocks, sizeof blocks, &w) == WT_OK &&
        wt_tensor_zeros(g_ctx, WT_F32, 2, s2_64, &x) == WT_OK) {
        y = (wt_tensor *)(uintptr_t)1;
        CHECK(wt_linear_quant(x, w, WT_QUANT_Q8_0, NULL, &y) == WT_ERR_SHAPE && !y, "linear_quant K 64 vs 32");
    }
    wt_tensor_release(x);
    wt_tensor_release(w);
    float nanrow[32] = {NAN};
    const int64_t s1[2] = {1, 32};
    if (wt_tensor_from_data(g_ctx, WT_F32, 2, s1, nanrow, &x) == WT_OK) {
        y = (wt_tensor *)(uintptr_t)1;
        CHECK(wt_quantize(x, WT_QUANT_Q4_0, &y) == WT_ERR_INVALID_ARGUMENT && !y, "quantize of NaN refused");
        y = (wt_tensor *)(uintptr_t)1;
        CHECK(wt_quantize(x, WT_QUANT_Q4_K, &y) == WT_ERR_SHAPE && !y, "quantize [1, 32] to Q4_K: K not of 256");
        wt_tensor_release(x);
    }
    float infrow256[256] = {0};
    infrow256[200] = INFINITY;
    const int64_t s256[2] = {1, 256};
    if (wt_tensor_from_data(g_ctx, WT_F32, 2, s256, infrow256, &x) == WT_OK) {
        y = (wt_tensor *)(uintptr_t)1;
        CHECK(wt_quantize(x, WT_QUANT_Q6_K, &y) == WT_ERR_INVALID_ARGUMENT && !y, "quantize of inf to Q6_K refused");
        wt_tensor_release(x);
    }
}

int main(int argc, char **argv)
{
    test_run run;
    if (!test_begin(&run, "quant", argc, argv)) return run.status;
    g_ctx = run.ctx;
    g_cpu = run.backend == TEST_BACKEND_CPU;
    test_rng_seed(test_seed());
    test_layout();
    test_dequant_hand();
    test_dequant_hand_q4k();
    test_dequant_hand_q6k();
    test_dequant_random();
    test_quant_hand();
    test_quant_roundtrip();
    test_quant_hand_kquants();
    test_quant_roundtrip_kquants();
    test_quant_golden_kquants();
    test_linear();
    test_linear_x8();
    test_linear_fused_quant();
    test_embedding();
    test_gguf_roundtrip();
    test_errors();
    test_check_nothing_alive(g_ctx);
    return test_end(&run);
}
