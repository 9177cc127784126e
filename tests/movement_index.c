/* movement_index <cpu|vulkan|gles>: the index-driven ops (gather,
 * index_select, embedding, scatter_add, index_add, one_hot) and sorting
 * (sort, argsort, topk), for f32, f16, i32 and bool data (scatter: not
 * bool), against host
 * references computed here; out-of-range and float indices, bad axes and
 * mismatched shapes get their expected codes. */
#include "mv_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const wt_dtype k_dtypes[] = {WT_F32, WT_F16, WT_I32, WT_BOOL};
static char g_what[256];

#define WHAT(...) (snprintf(g_what, sizeof g_what, __VA_ARGS__), g_what)

/* An i32 tensor of the given values. */
static wt_tensor *make_index(int ndim, const int64_t *shape, const int32_t *v)
{
    wt_tensor *t = NULL;
    wt_status st = wt_tensor_from_data(g_ctx, WT_I32, ndim, shape, v, &t);
    CHECK(st == WT_OK, "index from_data: %s", wt_last_error());
    return t;
}

static int32_t *random_indices(int64_t n, int32_t lo, int32_t hi)
{
    int32_t *v = malloc((size_t)(n ? n : 1) * sizeof *v);
    for (int64_t i = 0; v && i < n; i++) v[i] = lo + (int32_t)(test_rng_next() % (uint64_t)(hi - lo));
    return v;
}

/* Small integers as elements of dt (exact sums in every dtype). */
static bool make_ints(wt_dtype dt, int ndim, const int64_t *shape, mv_input *in)
{
    int64_t n = mv_numel(ndim, shape);
    uint32_t *b = malloc((size_t)(n ? n : 1) * 4);
    for (int64_t i = 0; b && i < n; i++) b[i] = mv_bits_of(dt, (double)((int)(test_rng_next() % 17) - 8));
    bool ok = b && mv_make_from(dt, ndim, shape, b, in);
    free(b);
    return ok;
}

/* ------------------------------------------------------------- gather */

static void test_gather(wt_dtype dt)
{
    const char *dn = mv_dtype_name(dt);
    const int64_t xs[2] = {6, 4};
    mv_input x;
    wt_tensor *v = NULL, *t = NULL;
    if (!mv_make(dt, 2, xs, &x) || !CHECK(wt_transpose(x.dev, 0, 1, &v) == WT_OK, "transpose")) return;
    hview h = hv_of(x.bits, v); /* v: [4, 6] */
    /* axis 1: index [3, 5] (fewer rows than x), values in [0, 6) */
    const int64_t is1[2] = {3, 5};
    int32_t *iv = random_indices(15, 0, 6);
    wt_tensor *idx = make_index(2, is1, iv);
    uint32_t e[64];
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 5; c++) {
            int64_t co[2] = {r, iv[r * 5 + c]};
            e[r * 5 + c] = hv_at(&h, co);
        }
    CHECK(wt_gather(v, 1, idx, &t) == WT_OK, "gather: %s", wt_last_error());
    mv_expect(WHAT("%s gather axis 1 of a transposed view", dn), t, dt, 2, is1, e);
    wt_tensor_release(t);
    /* axis 0 through an expanded index view [7, 6] of a [7, 1] index */
    const int64_t col[2] = {7, 1}, is0[2] = {7, 6};
    int32_t *iv0 = random_indices(7, 0, 4);
    wt_tensor *idx0 = make_index(2, col, iv0), *idx0e = NULL;
    CHECK(wt_expand(idx0, 2, is0, &idx0e) == WT_OK, "expand");
    for (int r = 0; r < 7; r++)
        for (int c = 0; c < 6; c++) {
            int64_t co[2] = {iv0[r], c};
            e[r * 6 + c] = hv_at(&h, co);
        }
    CHECK(wt_gather(v, -2, idx0e, &t) == WT_OK, "gather axis 0: %s", wt_last_error());
    mv_expect(WHAT("%s gather axis 0, expanded index", dn), t, dt, 2, is0, e);
    wt_tensor_release(t);
    /* empty index */
    const int64_t ie[2] = {0, 3};
    wt_tensor *empty = make_index(2, ie, NULL);
    CHECK(wt_gather(v, 1, empty, &t) == WT_OK, "gather empty: %s", wt_last_error());
    mv_expect(WHAT("%s gather of an empty index", dn), t, dt, 2, ie, NULL);
    wt_tensor_release(t);
    /* bad input */
    iv[7] = 6;
    wt_tensor *bad = make_index(2, is1, iv);
    mv_expect_index_error("gather index == extent", wt_gather(v, 1, bad, &t), &t, g_ctx, "index 6");
    wt_tensor_release(bad);
    iv[7] = -1;
    bad = make_index(2, is1, iv);
    mv_expect_index_error("gather negative index", wt_gather(v, 1, bad, &t), &t, g_ctx, "index -1");
    wt_tensor_release(bad);
    /* A float index is cast to i32 and range-checked like an i32 one. */
    mv_expect_index_error("gather float index", wt_gather(v, 1, v, &t), &t, g_ctx, NULL);
    mv_expect_code("gather bad axis", wt_gather(v, 2, idx, &t), WT_ERR_INVALID_ARGUMENT);
    const int64_t big[2] = {5, 5};
    int32_t zeros[25] = {0};
    bad = make_index(2, big, zeros);
    mv_expect_code("gather index larger than x off axis", wt_gather(v, 1, bad, &t), WT_ERR_SHAPE);
    wt_tensor_release(bad);
    bad = make_index(1, (int64_t[]){3}, zeros);
    mv_expect_code("gather index ndim", wt_gather(v, 1, bad, &t), WT_ERR_SHAPE);

    /* index_select: axis 1 with repeats; 0-d index on axis 0 */
    const int32_t sel[5] = {5, 0, 5, 2, 3};
    wt_tensor *si = make_index(1, (int64_t[]){5}, sel);
    for (int r = 0; r < 4; r++)
        for (int c = 0; c < 5; c++) {
            int64_t co[2] = {r, sel[c]};
            e[r * 5 + c] = hv_at(&h, co);
        }
    const int64_t ss[2] = {4, 5};
    CHECK(wt_index_select(v, 1, si, &t) == WT_OK, "index_select: %s", wt_last_error());
    mv_expect(WHAT("%s index_select", dn), t, dt, 2, ss, e);
    wt_tensor_release(t);
    wt_tensor *s0 = make_index(0, NULL, (int32_t[]){2});
    for (int c = 0; c < 6; c++) {
        int64_t co[2] = {2, c};
        e[c] = hv_at(&h, co);
    }
    CHECK(wt_index_select(v, 0, s0, &t) == WT_OK, "index_select 0-d: %s", wt_last_error());
    mv_expect(WHAT("%s index_select with a 0-d index", dn), t, dt, 2, (int64_t[]){1, 6}, e);
    wt_tensor_release(t);
    mv_expect_code("index_select 2-D index", wt_index_select(v, 1, idx, &t), WT_ERR_SHAPE);
    mv_expect_index_error("index_select out of range", wt_index_select(v, 0, si, &t), &t, g_ctx, NULL);
    wt_tensor_release(s0);
    wt_tensor_release(si);
    wt_tensor_release(bad);
    wt_tensor_release(empty);
    wt_tensor_release(idx);
    wt_tensor_release(idx0);
    wt_tensor_release(idx0e);
    free(iv);
    free(iv0);
    wt_tensor_release(v);
    mv_free(&x);
}

static void test_embedding(wt_dtype dt)
{
    const char *dn = mv_dtype_name(dt);
    const int64_t ts[2] = {11, 5}, is[2] = {2, 3}, os[3] = {2, 3, 5};
    mv_input table;
    if (!mv_make(dt, 2, ts, &table)) return;
    int32_t *iv = random_indices(6, 0, 11);
    iv[4] = 10;
    wt_tensor *idx = make_index(2, is, iv), *t = NULL;
    uint32_t e[30];
    for (int i = 0; i < 6; i++)
        for (int d = 0; d < 5; d++) e[i * 5 + d] = table.bits[iv[i] * 5 + d];
    CHECK(wt_embedding(table.dev, idx, &t) == WT_OK, "embedding: %s", wt_last_error());
    mv_expect(WHAT("%s embedding", dn), t, dt, 3, os, e);
    wt_tensor_release(t);
    wt_tensor *i0 = make_index(0, NULL, (int32_t[]){7});
    CHECK(wt_embedding(table.dev, i0, &t) == WT_OK, "embedding 0-d: %s", wt_last_error());
    mv_expect(WHAT("%s embedding of a 0-d index", dn), t, dt, 1, (int64_t[]){5}, table.bits + 35);
    wt_tensor_release(t);
    wt_tensor_release(i0);
    iv[2] = 11;
    wt_tensor *bad = make_index(2, is, iv);
    mv_expect_index_error("embedding index == V", wt_embedding(table.dev, bad, &t), &t, g_ctx, "index 11");
    mv_expect_index_error("embedding float index", wt_embedding(table.dev, table.dev, &t), &t, g_ctx, NULL);
    wt_tensor *flat = NULL;
    CHECK(wt_flatten(table.dev, 0, -1, &flat) == WT_OK, "flatten");
    mv_expect_code("embedding 1-D table", wt_embedding(flat, idx, &t), WT_ERR_SHAPE);
    wt_tensor_release(flat);
    wt_tensor_release(bad);
    wt_tensor_release(idx);
    free(iv);
    mv_free(&table);
}

/* ------------------------------------------------------------ scatter */

static void test_scatter(wt_dtype dt)
{
    const char *dn = mv_dtype_name(dt);
    const int64_t xs[2] = {5, 4}, is[2] = {7, 4}, ss[2] = {8, 4};
    mv_input x, src;
    if (!make_ints(dt, 2, xs, &x) || !make_ints(dt, 2, ss, &src)) return;
    int32_t *iv = random_indices(28, 0, 5);
    wt_tensor *idx = make_index(2, is, iv), *t = NULL;
    double acc[20];
    uint32_t e[20];
    for (int i = 0; i < 20; i++) acc[i] = mv_value_of(dt, x.bits[i]);
    for (int r = 0; r < 7; r++)
        for (int c = 0; c < 4; c++) acc[iv[r * 4 + c] * 4 + c] += mv_value_of(dt, src.bits[r * 4 + c]);
    for (int i = 0; i < 20; i++) e[i] = mv_bits_of(dt, acc[i]);
    CHECK(wt_scatter_add(x.dev, 0, idx, src.dev, &t) == WT_OK, "scatter_add: %s", wt_last_error());
    mv_expect(WHAT("%s scatter_add with repeated indices", dn), t, dt, 2, xs, e);
    wt_tensor_release(t);
    mv_expect(WHAT("%s scatter_add leaves x", dn), x.dev, dt, 2, xs, x.bits);
    /* index_add along axis 1: index [3] with a repeat, src [5, 3] */
    const int32_t sel[3] = {3, 0, 3};
    wt_tensor *si = make_index(1, (int64_t[]){3}, sel);
    mv_input s2;
    const int64_t s2s[2] = {5, 3};
    if (make_ints(dt, 2, s2s, &s2)) {
        for (int i = 0; i < 20; i++) acc[i] = mv_value_of(dt, x.bits[i]);
        for (int r = 0; r < 5; r++)
            for (int k = 0; k < 3; k++) acc[r * 4 + sel[k]] += mv_value_of(dt, s2.bits[r * 3 + k]);
        for (int i = 0; i < 20; i++) e[i] = mv_bits_of(dt, acc[i]);
        CHECK(wt_index_add(x.dev, 1, si, s2.dev, &t) == WT_OK, "index_add: %s", wt_last_error());
        mv_expect(WHAT("%s index_add", dn), t, dt, 2, xs, e);
        wt_tensor_release(t);
        mv_expect_code("index_add src shape", wt_index_add(x.dev, 0, si, s2.dev, &t), WT_ERR_SHAPE);
        mv_free(&s2);
    }
    iv[9] = 5;
    wt_tensor *bad = make_index(2, is, iv);
    mv_expect_index_error("scatter_add index == extent", wt_scatter_add(x.dev, 0, bad, src.dev, &t), &t, g_ctx,
                          "index 5");
    mv_expect_index_error("scatter_add float index", wt_scatter_add(x.dev, 0, x.dev, src.dev, &t), &t, g_ctx,
                          NULL);
    mv_expect_code("scatter_add index beyond src", wt_scatter_add(x.dev, 0, idx, x.dev, &t), WT_ERR_SHAPE);
    mv_expect_code("scatter_add bad axis", wt_scatter_add(x.dev, 2, idx, src.dev, &t), WT_ERR_INVALID_ARGUMENT);
    wt_tensor_release(bad);
    wt_tensor_release(si);
    wt_tensor_release(idx);
    free(iv);
    mv_free(&x);
    mv_free(&src);
}

static void test_scatter_bool(void)
{
    mv_input x;
    const int64_t two = 2;
    if (!mv_make(WT_BOOL, 1, &two, &x)) return;
    wt_tensor *idx = make_index(1, &two, (int32_t[]){0, 1}), *t = NULL;
    mv_expect_code("scatter_add of bool", wt_scatter_add(x.dev, 0, idx, x.dev, &t), WT_ERR_UNSUPPORTED);
    wt_tensor_release(idx);
    mv_free(&x);
}

static void test_one_hot(void)
{
    const int64_t is[2] = {2, 3};
    const int32_t v[6] = {0, 3, 1, 1, 2, 0};
    wt_tensor *idx = make_index(2, is, v), *t = NULL;
    uint32_t e[30] = {0};
    for (int i = 0; i < 6; i++) e[i * 5 + v[i]] = 1;
    CHECK(wt_one_hot(idx, 5, &t) == WT_OK, "one_hot: %s", wt_last_error());
    mv_expect("one_hot 5 classes", t, WT_I32, 3, (int64_t[]){2, 3, 5}, e);
    wt_tensor_release(t);
    uint32_t e4[24] = {0};
    for (int i = 0; i < 6; i++) e4[i * 4 + v[i]] = 1;
    CHECK(wt_one_hot(idx, -1, &t) == WT_OK, "one_hot -1: %s", wt_last_error());
    mv_expect("one_hot inferred classes", t, WT_I32, 3, (int64_t[]){2, 3, 4}, e4);
    wt_tensor_release(t);
    mv_expect_index_error("one_hot index >= classes", wt_one_hot(idx, 3, &t), &t, g_ctx, NULL);
    wt_tensor *neg = make_index(1, (int64_t[]){2}, (int32_t[]){1, -1});
    mv_expect_index_error("one_hot negative index", wt_one_hot(neg, 4, &t), &t, g_ctx, NULL);
    mv_expect_code("one_hot classes -2", wt_one_hot(idx, -2, &t), WT_ERR_INVALID_ARGUMENT);
    wt_tensor *empty = make_index(1, (int64_t[]){0}, NULL);
    mv_expect_code("one_hot -1 of empty", wt_one_hot(empty, -1, &t), WT_ERR_INVALID_ARGUMENT);
    CHECK(wt_one_hot(empty, 3, &t) == WT_OK, "one_hot empty: %s", wt_last_error());
    mv_expect("one_hot of an empty index", t, WT_I32, 2, (int64_t[]){0, 3}, NULL);
    wt_tensor_release(t);
    wt_tensor_release(empty);
    wt_tensor_release(neg);
    wt_tensor_release(idx);
}

/* --------------------------------------------------------------- sort */

typedef struct ref_item {
    double v;
    int64_t pos;
} ref_item;

static bool g_desc;

/* PyTorch's order: NaN above everything (NaNs equal), -0 == +0; ties by
 * position (a stable sort). */
static int ref_cmp(const void *pa, const void *pb)
{
    const ref_item *a = pa, *b = pb;
    int c;
    if (isnan(a->v) || isnan(b->v)) c = isnan(a->v) - isnan(b->v);
    else c = (a->v > b->v) - (a->v < b->v);
    if (g_desc) c = -c;
    if (c) return c;
    return (a->pos > b->pos) - (a->pos < b->pos);
}

/* Values with ties, signed zeros and (floats) NaN and infinities. */
static uint32_t special_bits(wt_dtype dt)
{
    uint64_t r = test_rng_next() % 16;
    if (dt == WT_I32) return (uint32_t)((int32_t)(test_rng_next() % 9) - 4 + (r == 0 ? INT32_MIN / 2 : 0));
    if (dt == WT_BOOL) return (uint32_t)(r & 1);
    double v = (double)((int)(test_rng_next() % 9) - 4) * 0.5;
    if (r == 0) v = NAN;
    if (r == 1) v = INFINITY;
    if (r == 2) v = -INFINITY;
    if (r == 3) v = -0.0;
    return mv_bits_of(dt, v);
}

/* Sorts x [rows, n] (through a transposed [n, rows] device view along
 * axis 0 when transposed) and checks values and indices. */
static void check_sort(wt_dtype dt, int64_t rows, int64_t n, bool desc, bool transposed)
{
    const char *dn = mv_dtype_name(dt);
    int64_t shape[2] = {rows, n};
    int64_t count = rows * n;
    uint32_t *b = malloc((size_t)count * 4);
    for (int64_t i = 0; i < count; i++) b[i] = special_bits(dt);
    mv_input x;
    if (!mv_make_from(dt, 2, shape, b, &x)) return;
    wt_tensor *view = NULL, *vals = NULL, *idx = NULL;
    if (transposed) CHECK(wt_transpose(x.dev, 0, 1, &view) == WT_OK, "transpose");
    wt_status st = wt_sort(transposed ? view : x.dev, transposed ? 0 : -1, desc, &vals, &idx);
    CHECK(st == WT_OK, "sort: %s", wt_last_error());
    /* Expected in the layout of the result: [rows, n], or [n, rows]. */
    uint32_t *ev = malloc((size_t)count * 4), *ei = malloc((size_t)count * 4);
    ref_item *items = malloc((size_t)n * sizeof *items);
    g_desc = desc;
    for (int64_t r = 0; r < rows; r++) {
        for (int64_t i = 0; i < n; i++) items[i] = (ref_item){mv_value_of(dt, b[r * n + i]), i};
        qsort(items, (size_t)n, sizeof *items, ref_cmp);
        for (int64_t i = 0; i < n; i++) {
            int64_t at = transposed ? i * rows + r : r * n + i;
            ev[at] = b[r * n + items[i].pos];
            ei[at] = (uint32_t)items[i].pos;
        }
    }
    int64_t rs[2] = {transposed ? n : rows, transposed ? rows : n};
    mv_expect(WHAT("%s sort [%lld, %lld]%s%s values", dn, (long long)rows, (long long)n, desc ? " descending" : "",
                   transposed ? " along axis 0 of a transposed view" : ""), vals, dt, 2, rs, ev);
    mv_expect(WHAT("%s sort [%lld, %lld]%s indices", dn, (long long)rows, (long long)n, desc ? " descending" : ""),
              idx, WT_I32, 2, rs, ei);
    wt_tensor_release(vals);
    wt_tensor_release(idx);
    /* topk of the same rows (contiguous case): the first k of the sort. */
    if (!transposed) {
        int64_t k = n < 5 ? n : 5, ks[2] = {rows, k};
        uint32_t *kv = malloc((size_t)(rows * k) * 4), *ki = malloc((size_t)(rows * k) * 4);
        for (int64_t r = 0; r < rows; r++)
            for (int64_t i = 0; i < k; i++) {
                kv[r * k + i] = ev[r * n + i];
                ki[r * k + i] = ei[r * n + i];
            }
        CHECK(wt_topk(x.dev, k, desc, &vals, &idx) == WT_OK, "topk: %s", wt_last_error());
        mv_expect(WHAT("%s topk %lld of %lld %s values", dn, (long long)k, (long long)n, desc ? "largest" : "smallest"),
                  vals, dt, 2, ks, kv);
        mv_expect(WHAT("%s topk indices", dn), idx, WT_I32, 2, ks, ki);
        wt_tensor_release(vals);
        wt_tensor_release(idx);
        free(kv);
        free(ki);
    }
    wt_tensor_release(view);
    free(items);
    free(ev);
    free(ei);
    free(b);
    mv_free(&x);
}

static void test_sort(wt_dtype dt)
{
    check_sort(dt, 3, 1, false, false);
    check_sort(dt, 5, 7, false, false);
    check_sort(dt, 4, 37, true, false);
    check_sort(dt, 2, 2049, true, false);  /* past one tile of 2048 */
    check_sort(dt, 9, 300, false, true);   /* axis 0 of a transposed view */
    wt_tensor *t = NULL, *i = NULL;
    mv_input x;
    const int64_t s[2] = {3, 4};
    if (mv_make(dt, 2, s, &x)) {
        mv_expect_code("sort bad axis", wt_sort(x.dev, 2, false, &t, &i), WT_ERR_INVALID_ARGUMENT);
        mv_expect_code("topk k > n", wt_topk(x.dev, 5, true, &t, &i), WT_ERR_INVALID_ARGUMENT);
        mv_expect_code("topk k < 0", wt_topk(x.dev, -1, true, &t, &i), WT_ERR_INVALID_ARGUMENT);
        CHECK(wt_topk(x.dev, 0, true, &t, &i) == WT_OK, "topk 0: %s", wt_last_error());
        mv_expect("topk 0", t, dt, 2, (int64_t[]){3, 0}, NULL);
        wt_tensor_release(t);
        wt_tensor_release(i);
        CHECK(wt_argsort(x.dev, 0, false, &i) == WT_OK, "argsort: %s", wt_last_error());
        wt_tensor_release(i);
        mv_free(&x);
    }
}

/* 0-d x and index: gather, index_select, sort keep 0-d results. */
static void test_zero_d(wt_dtype dt)
{
    const char *dn = mv_dtype_name(dt);
    mv_input x;
    if (!mv_make(dt, 0, NULL, &x)) return;
    wt_tensor *i0 = make_index(0, NULL, (int32_t[]){0}), *t = NULL, *i = NULL;
    CHECK(wt_gather(x.dev, 0, i0, &t) == WT_OK, "gather 0-d: %s", wt_last_error());
    mv_expect(WHAT("%s gather of 0-d", dn), t, dt, 0, NULL, x.bits);
    wt_tensor_release(t);
    CHECK(wt_index_select(x.dev, -1, i0, &t) == WT_OK, "index_select 0-d: %s", wt_last_error());
    mv_expect(WHAT("%s index_select of 0-d", dn), t, dt, 0, NULL, x.bits);
    wt_tensor_release(t);
    CHECK(wt_sort(x.dev, 0, true, &t, &i) == WT_OK, "sort 0-d: %s", wt_last_error());
    mv_expect(WHAT("%s sort of 0-d", dn), t, dt, 0, NULL, x.bits);
    mv_expect(WHAT("%s sort of 0-d: index", dn), i, WT_I32, 0, NULL, (uint32_t[]){0});
    wt_tensor_release(t);
    wt_tensor_release(i);
    wt_tensor *bad = make_index(0, NULL, (int32_t[]){1});
    mv_expect_index_error("gather 0-d out of range", wt_gather(x.dev, 0, bad, &t), &t, g_ctx, NULL);
    wt_tensor_release(bad);
    bad = make_index(1, (int64_t[]){2}, (int32_t[]){0, 0});
    mv_expect_code("index_select of 0-d with two indices", wt_index_select(x.dev, 0, bad, &t), WT_ERR_SHAPE);
    wt_tensor_release(bad);
    wt_tensor_release(i0);
    mv_free(&x);
}

/* A long row: several global bitonic stages on the GPU. */
static void test_long_sort(void)
{
    check_sort(WT_F32, 1, 70001, false, false);
    check_sort(WT_F16, 2, 5000, true, false);
}

/* Every "movement" op of the catalogue is exercised by movement.c or this
 * program (a new row without a test fails here), and the support the
 * catalogue states for each dtype matches what the op does. */
static void test_catalogue(void)
{
    static const char *tested[] = {"concat", "stack", "copy_into", "pad", "repeat", "tile", "flip", "roll",
                                   "tril", "triu", "gather", "index_select", "embedding", "scatter_add",
                                   "index_add", "one_hot", "sort", "argsort", "topk"};
    int found = 0;
    for (int op = 0; op < wt_op_count(); op++) {
        if (strcmp(wt_op_family(op), "movement") != 0) continue;
        bool known = false;
        for (size_t i = 0; i < sizeof tested / sizeof *tested; i++) known |= strcmp(tested[i], wt_op_name(op)) == 0;
        CHECK(known, "catalogue op %s has no test in movement / movement_index", wt_op_name(op));
        found++;
        for (int dt = WT_F32; dt <= WT_BOOL; dt++) {
            wt_support sup = WT_SUPPORT_NONE;
            CHECK(wt_op_support(g_ctx, op, (wt_dtype)dt, &sup) == WT_OK, "wt_op_support");
            bool refused = (strstr(wt_op_name(op), "_add") && dt == WT_BOOL) ||
                           (strcmp(wt_op_name(op), "one_hot") == 0 && dt != WT_I32);
            CHECK((sup == WT_SUPPORT_NONE) == refused, "%s on %s: catalogue says %d", wt_op_name(op),
                  mv_dtype_name((wt_dtype)dt), (int)sup);
        }
    }
    CHECK(found == (int)(sizeof tested / sizeof *tested), "%d movement ops in the catalogue, %d tested", found,
          (int)(sizeof tested / sizeof *tested));
    /* one_hot takes i32 only: a float index is refused. */
    mv_input f;
    wt_tensor *t = NULL;
    if (mv_make(WT_F32, 1, (int64_t[]){3}, &f)) {
        mv_expect_code("one_hot of f32", wt_one_hot(f.dev, 4, &t), WT_ERR_INVALID_ARGUMENT);
        mv_free(&f);
    }
}

/* Every public function of the area: NULL inputs and NULL outputs are
 * WT_ERR_INVALID_ARGUMENT, and outputs stay NULL. */
static void test_nulls(void)
{
    mv_input x;
    if (!mv_make(WT_F32, 2, (int64_t[]){2, 3}, &x)) return;
    wt_tensor *i = make_index(2, (int64_t[]){2, 3}, (int32_t[]){0, 1, 0, 1, 0, 1}), *t = NULL, *u = NULL;
    wt_tensor *parts[2] = {0};
    wt_tensor *one[1] = {NULL};
    int n = 0;
    const wt_status want = WT_ERR_INVALID_ARGUMENT;
    mv_expect_code("squeeze NULL out", wt_squeeze(x.dev, 0, NULL, NULL), want);
    mv_expect_code("unsqueeze NULL", wt_unsqueeze(NULL, 0, &t), want);
    mv_expect_code("flatten NULL", wt_flatten(NULL, 0, -1, &t), want);
    mv_expect_code("split NULL", wt_split(NULL, 0, 1, (int64_t[]){2}, parts), want);
    mv_expect_code("split NULL outs", wt_split(x.dev, 0, 1, (int64_t[]){2}, NULL), want);
    mv_expect_code("chunk NULL", wt_chunk(NULL, 0, 2, &n, parts), want);
    mv_expect_code("concat NULL list", wt_concat(1, NULL, 0, &t), want);
    mv_expect_code("stack NULL entry", wt_stack(1, one, 0, &t), want);
    mv_expect_code("gather NULL x", wt_gather(NULL, 0, i, &t), want);
    mv_expect_code("gather NULL index", wt_gather(x.dev, 0, NULL, &t), want);
    mv_expect_code("index_select NULL out", wt_index_select(x.dev, 0, i, NULL), want);
    mv_expect_code("embedding NULL", wt_embedding(NULL, i, &t), want);
    mv_expect_code("scatter_add NULL src", wt_scatter_add(x.dev, 0, i, NULL, &t), want);
    mv_expect_code("index_add NULL x", wt_index_add(NULL, 0, i, x.dev, &t), want);
    mv_expect_code("one_hot NULL", wt_one_hot(NULL, 3, &t), want);
    mv_expect_code("pad NULL out", wt_pad(x.dev, 0, NULL, WT_PAD_CONSTANT, 0, NULL), want);
    mv_expect_code("repeat NULL", wt_repeat(NULL, 0, NULL, &t), want);
    mv_expect_code("tile NULL counts", wt_tile(x.dev, 2, NULL, &t), want);
    mv_expect_code("flip NULL axes", wt_flip(x.dev, 1, NULL, &t), want);
    mv_expect_code("roll NULL shifts", wt_roll(x.dev, 1, NULL, (int[]){0}, &t), want);
    mv_expect_code("tril NULL", wt_tril(NULL, 0, &t), want);
    mv_expect_code("triu NULL out", wt_triu(x.dev, 0, NULL), want);
    mv_expect_code("sort NULL values", wt_sort(x.dev, 0, false, NULL, &u), want);
    mv_expect_code("argsort NULL", wt_argsort(NULL, 0, false, &t), want);
    mv_expect_code("topk NULL", wt_topk(NULL, 1, true, &t, &u), want);
    mv_expect_code("copy_into NULL dst", wt_copy_into(NULL, x.dev), want);
    CHECK(t == NULL && u == NULL && parts[0] == NULL, "outputs stay NULL on failure");
    mv_expect_code("pad bad mode", wt_pad(x.dev, 0, NULL, (wt_pad_mode)7, 0, &t), want);
    mv_expect_code("pad i32 value out of range", wt_pad(i, 2, (int64_t[]){1, 1}, WT_PAD_CONSTANT, 1e10, &t), want);
    wt_tensor_release(i);
    mv_free(&x);
}

int main(int argc, char **argv)
{
    test_run run;
    if (!test_begin(&run, "movement_index", argc, argv)) return run.status;
    g_ctx = run.ctx;
    g_backend = run.backend;
    for (int i = 0; i < 4; i++) {
        test_gather(k_dtypes[i]);
        test_embedding(k_dtypes[i]);
        if (k_dtypes[i] != WT_BOOL) test_scatter(k_dtypes[i]);
        test_sort(k_dtypes[i]);
        test_zero_d(k_dtypes[i]);
    }
    test_scatter_bool();
    test_one_hot();
    test_catalogue();
    test_nulls();
    test_long_sort();
    return test_end(&run);
}
