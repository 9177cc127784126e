/* movement <cpu|vulkan|gles>: views (squeeze, unsqueeze, flatten, split,
 * chunk), concat / stack, pad, repeat / tile, flip, roll, tril / triu and
 * copy_into, for f32, f16, i32 and bool, against host references computed here
 * on the elements' bits (data movement must be exact). Inputs include
 * transposed, strided and expanded views and empty tensors; bad input
 * gets its expected code. */
#include "mv_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const wt_dtype k_dtypes[] = {WT_F32, WT_F16, WT_I32, WT_BOOL};
static char g_what[256];

#define WHAT(...) (snprintf(g_what, sizeof g_what, __VA_ARGS__), g_what)

/* Row-major bits of a host view. */
static uint32_t *view_bits(const hview *v)
{
    int64_t n = mv_numel(v->ndim, v->shape), c[8];
    uint32_t *e = malloc((size_t)(n ? n : 1) * 4);
    for (int64_t i = 0; e && i < n; i++) {
        mv_coord(i, v->ndim, v->shape, c);
        e[i] = hv_at(v, c);
    }
    return e;
}

/* A transposed view [b, a] of a fresh [a, b] input. */
static bool make_transposed(wt_dtype dt, int64_t a, int64_t b, mv_input *in, wt_tensor **view)
{
    const int64_t shape[2] = {a, b};
    if (!mv_make(dt, 2, shape, in)) return false;
    return CHECK(wt_transpose(in->dev, 0, 1, view) == WT_OK, "transpose: %s", wt_last_error());
}

/* ------------------------------------------------------------- views */

static void test_views(wt_dtype dt)
{
    const char *dn = mv_dtype_name(dt);
    const int64_t shape[3] = {3, 1, 5};
    mv_input x;
    if (!mv_make(dt, 3, shape, &x)) return;
    wt_tensor *t = NULL;
    const int64_t sq[2] = {3, 5};
    CHECK(wt_squeeze(x.dev, 0, NULL, &t) == WT_OK, "squeeze: %s", wt_last_error());
    mv_expect(WHAT("%s squeeze", dn), t, dt, 2, sq, x.bits);
    wt_tensor_release(t);
    int ax = 0; /* extent 3: stays */
    const int64_t same[3] = {3, 1, 5};
    CHECK(wt_squeeze(x.dev, 1, &ax, &t) == WT_OK, "squeeze(0): %s", wt_last_error());
    mv_expect(WHAT("%s squeeze(non-1 axis) keeps it", dn), t, dt, 3, same, x.bits);
    wt_tensor_release(t);
    const int64_t us[4] = {3, 1, 5, 1};
    CHECK(wt_unsqueeze(x.dev, -1, &t) == WT_OK, "unsqueeze: %s", wt_last_error());
    mv_expect(WHAT("%s unsqueeze(-1)", dn), t, dt, 4, us, x.bits);
    wt_tensor_release(t);
    mv_expect_code("unsqueeze axis 5", wt_unsqueeze(x.dev, 5, &t), WT_ERR_INVALID_ARGUMENT);
    mv_expect_code("squeeze axis 3", wt_squeeze(x.dev, 1, (int[]){3}, &t), WT_ERR_INVALID_ARGUMENT);
    mv_expect_code("squeeze repeated axis", wt_squeeze(x.dev, 2, (int[]){0, -3}, &t), WT_ERR_INVALID_ARGUMENT);
    mv_expect_code("squeeze NULL x", wt_squeeze(NULL, 0, NULL, &t), WT_ERR_INVALID_ARGUMENT);
    mv_expect_code("flip NULL out", wt_flip(x.dev, 0, NULL, NULL), WT_ERR_INVALID_ARGUMENT);
    mv_expect_code("pad NULL x", wt_pad(NULL, 0, NULL, WT_PAD_CONSTANT, 0, &t), WT_ERR_INVALID_ARGUMENT);
    mv_expect_code("copy_into NULL src", wt_copy_into(x.dev, NULL), WT_ERR_INVALID_ARGUMENT);
    mv_expect_code("concat NULL entry", wt_concat(2, (wt_tensor *[]){x.dev, NULL}, 0, &t),
                   WT_ERR_INVALID_ARGUMENT);
    mv_free(&x);

    /* flatten of a transposed view: a copy, in the view's order. */
    mv_input y;
    wt_tensor *v = NULL;
    if (make_transposed(dt, 4, 7, &y, &v)) {
        hview h = hv_of(y.bits, v);
        uint32_t *e = view_bits(&h);
        const int64_t fl[1] = {28};
        CHECK(wt_flatten(v, 0, -1, &t) == WT_OK, "flatten: %s", wt_last_error());
        mv_expect(WHAT("%s flatten(transposed)", dn), t, dt, 1, fl, e);
        wt_tensor_release(t);
        /* flatten of a contiguous tensor is a view. */
        CHECK(wt_flatten(y.dev, 0, 1, &t) == WT_OK && wt_tensor_offset(t) == 0, "flatten view");
        mv_expect(WHAT("%s flatten(contiguous)", dn), t, dt, 1, fl, y.bits);
        wt_tensor_release(t);
        mv_expect_code("flatten 1..0", wt_flatten(v, 1, 0, &t), WT_ERR_INVALID_ARGUMENT);
        free(e);
    }
    wt_tensor_release(v);
    mv_free(&y);

    /* Contiguous copies of permuted views whose innermost axis stays put
     * (attention's heads moved across the sequence; GPUs walk these in
     * fours): inner extents of 8 (whole fours) and 6 (not), a view at an
     * offset of 24 elements (rows 1..2 of axis 1) and one at an offset of
     * 1 (elements 1..4 of the innermost axis). */
    static const int64_t pshapes[4][4] = {{2, 3, 5, 8}, {2, 3, 5, 6}, {2, 4, 3, 8}, {2, 4, 3, 8}};
    for (int c = 0; c < 4; c++) {
        mv_input z;
        wt_tensor *pv = NULL, *sl = NULL;
        if (!mv_make(dt, 4, pshapes[c], &z)) continue;
        const wt_tensor *src = z.dev;
        if (c >= 2 && CHECK(wt_slice(z.dev, c == 2 ? 1 : 3, 1, c == 2 ? 3 : 5, 1, &sl) == WT_OK, "slice: %s",
                            wt_last_error()))
            src = sl;
        if (CHECK(wt_transpose(src, 1, 2, &pv) == WT_OK, "transpose: %s", wt_last_error())) {
            hview h = hv_of(z.bits, pv);
            uint32_t *e = view_bits(&h);
            CHECK(wt_contiguous(pv, &t) == WT_OK, "contiguous: %s", wt_last_error());
            mv_expect(WHAT("%s contiguous(transpose 1, 2) of [%lld, %lld, %lld, %lld]%s", dn, (long long)pshapes[c][0],
                           (long long)pshapes[c][1], (long long)pshapes[c][2], (long long)pshapes[c][3],
                           c >= 2 ? " sliced" : ""),
                      t, dt, 4, wt_tensor_shape(pv), e);
            wt_tensor_release(t);
            free(e);
        }
        wt_tensor_release(pv);
        wt_tensor_release(sl);
        mv_free(&z);
    }
}

static void test_split_chunk(wt_dtype dt)
{
    const char *dn = mv_dtype_name(dt);
    const int64_t shape[2] = {7, 5};
    mv_input x;
    if (!mv_make(dt, 2, shape, &x)) return;
    wt_tensor *parts[4] = {0};
    const int64_t sizes[3] = {2, 0, 5};
    CHECK(wt_split(x.dev, 0, 3, sizes, parts) == WT_OK, "split: %s", wt_last_error());
    const int64_t s0[2] = {2, 5}, s1[2] = {0, 5}, s2[2] = {5, 5};
    mv_expect(WHAT("%s split part 0", dn), parts[0], dt, 2, s0, x.bits);
    mv_expect(WHAT("%s split part 1 (empty)", dn), parts[1], dt, 2, s1, x.bits);
    mv_expect(WHAT("%s split part 2", dn), parts[2], dt, 2, s2, x.bits + 10);
    for (int i = 0; i < 3; i++) wt_tensor_release(parts[i]);
    const int64_t bad[2] = {3, 3};
    mv_expect_code("split sizes not summing", wt_split(x.dev, 0, 2, bad, parts), WT_ERR_SHAPE);
    CHECK(parts[0] == NULL && parts[1] == NULL, "split failure leaves NULLs");
    /* chunk along axis 1 (extent 5) into 3: sizes 2, 2, 1, strided views. */
    int n = 0;
    CHECK(wt_chunk(x.dev, 1, 3, &n, parts) == WT_OK && n == 3, "chunk: %d pieces (%s)", n, wt_last_error());
    for (int i = 0; i < n; i++) {
        int64_t w = i < 2 ? 2 : 1, cs[2] = {7, w};
        uint32_t e[14];
        for (int r = 0; r < 7; r++)
            for (int c = 0; c < w; c++) e[r * w + c] = x.bits[r * 5 + 2 * i + c];
        mv_expect(WHAT("%s chunk %d", dn, i), parts[i], dt, 2, cs, e);
        wt_tensor_release(parts[i]);
    }
    /* 4 chunks of 5: torch gives 3 (sizes 2, 2, 1). */
    CHECK(wt_chunk(x.dev, 1, 4, &n, parts) == WT_OK && n == 3, "chunk(4) of 5 gives 3, got %d", n);
    for (int i = 0; i < n; i++) wt_tensor_release(parts[i]);
    mv_expect_code("chunk 0", wt_chunk(x.dev, 1, 0, &n, parts), WT_ERR_INVALID_ARGUMENT);
    mv_free(&x);
}

static void test_concat_stack(wt_dtype dt)
{
    const char *dn = mv_dtype_name(dt);
    mv_input a, b, c;
    wt_tensor *at = NULL, *bs = NULL;
    /* a: transposed [2, 3]; b: [2, 9] sliced with step 2 -> [2, 5];
     * c: empty [2, 0]. */
    const int64_t bshape[2] = {2, 9}, cshape[2] = {2, 0};
    if (!make_transposed(dt, 3, 2, &a, &at) || !mv_make(dt, 2, bshape, &b) || !mv_make(dt, 2, cshape, &c)) return;
    CHECK(wt_slice(b.dev, 1, 0, 9, 2, &bs) == WT_OK, "slice");
    wt_tensor *xs[3] = {at, c.dev, bs};
    wt_tensor *t = NULL;
    CHECK(wt_concat(3, xs, -1, &t) == WT_OK, "concat: %s", wt_last_error());
    hview ha = hv_of(a.bits, at), hb = hv_of(b.bits, bs);
    uint32_t e[16];
    for (int r = 0; r < 2; r++)
        for (int k = 0; k < 8; k++) {
            int64_t co[2] = {r, k < 3 ? k : k - 3};
            e[r * 8 + k] = k < 3 ? hv_at(&ha, co) : hv_at(&hb, co);
        }
    const int64_t cs[2] = {2, 8};
    mv_expect(WHAT("%s concat(transposed, empty, strided)", dn), t, dt, 2, cs, e);
    wt_tensor_release(t);
    /* stack [2, 3] x2 at axis 1 -> [2, 2, 3]. */
    wt_tensor *ys[2] = {at, at};
    CHECK(wt_stack(2, ys, 1, &t) == WT_OK, "stack: %s", wt_last_error());
    uint32_t s[12];
    for (int r = 0; r < 2; r++)
        for (int k = 0; k < 2; k++)
            for (int j = 0; j < 3; j++) {
                int64_t co[2] = {r, j};
                s[r * 6 + k * 3 + j] = hv_at(&ha, co);
            }
    const int64_t ss[3] = {2, 2, 3};
    mv_expect(WHAT("%s stack axis 1", dn), t, dt, 3, ss, s);
    wt_tensor_release(t);
    mv_expect_code("concat mismatched", wt_concat(2, (wt_tensor *[]){at, b.dev}, 0, &t), WT_ERR_SHAPE);
    CHECK(t == NULL, "concat failure leaves out NULL");
    mv_expect_code("stack mismatched", wt_stack(2, (wt_tensor *[]){at, bs}, 0, &t), WT_ERR_SHAPE);
    mv_expect_code("concat bad axis", wt_concat(1, xs, 2, &t), WT_ERR_INVALID_ARGUMENT);
    mv_expect_code("concat n 0", wt_concat(0, xs, 0, &t), WT_ERR_INVALID_ARGUMENT);
    wt_tensor_release(at);
    wt_tensor_release(bs);
    mv_free(&a);
    mv_free(&b);
    mv_free(&c);
}

/* ------------------------------------------------------------- remaps */

/* Source index along an axis of extent n for output o, or -1 (fill). */
static int64_t pad_source(wt_pad_mode mode, int64_t o, int64_t before, int64_t n)
{
    int64_t j = o - before;
    if (j >= 0 && j < n) return j;
    if (mode == WT_PAD_CONSTANT) return -1;
    if (mode == WT_PAD_REPLICATE) return j < 0 ? 0 : n - 1;
    return j < 0 ? -j : 2 * (n - 1) - j;
}

static void test_pad(wt_dtype dt)
{
    const char *dn = mv_dtype_name(dt);
    mv_input x;
    wt_tensor *v = NULL, *t = NULL;
    if (!make_transposed(dt, 5, 4, &x, &v)) return; /* v: [4, 5] */
    hview h = hv_of(x.bits, v);
    const wt_pad_mode modes[3] = {WT_PAD_CONSTANT, WT_PAD_REFLECT, WT_PAD_REPLICATE};
    const int64_t pads[3][4] = {{1, 2, 3, 0}, {4, 2, 3, 1}, {6, 1, 0, 5}}; /* (last before, after, first ...) */
    for (int m = 0; m < 3; m++) {
        const int64_t *p = pads[m];
        int64_t os[2] = {4 + p[2] + p[3], 5 + p[0] + p[1]};
        uint32_t *e = malloc((size_t)(os[0] * os[1]) * 4);
        uint32_t fill = mv_bits_of(dt, -2.5 * (dt != WT_I32) + 7 * (dt == WT_I32));
        for (int64_t r = 0; r < os[0]; r++)
            for (int64_t c = 0; c < os[1]; c++) {
                int64_t sr = pad_source(modes[m], r, p[2], 4), sc = pad_source(modes[m], c, p[0], 5);
                int64_t co[2] = {sr, sc};
                e[r * os[1] + c] = (sr < 0 || sc < 0) ? fill : hv_at(&h, co);
            }
        wt_status st = wt_pad(v, 4, p, modes[m], dt == WT_I32 ? 7.0 : -2.5, &t);
        CHECK(st == WT_OK, "pad mode %d: %s", m, wt_last_error());
        mv_expect(WHAT("%s pad mode %d of a transposed view", dn, m), t, dt, 2, os, e);
        wt_tensor_release(t);
        free(e);
    }
    /* A slice starting at an odd element offset (f16: inside a word). */
    wt_tensor *odd_view = NULL;
    if (CHECK(wt_slice(x.dev, 1, 1, 4, 1, &odd_view) == WT_OK, "slice")) { /* [5, 3] at offset 1 */
        hview ho = hv_of(x.bits, odd_view);
        const int64_t po[2] = {2, 1}, os[2] = {5, 6};
        uint32_t e[30];
        for (int64_t r = 0; r < 5; r++)
            for (int64_t c = 0; c < 6; c++) {
                int64_t co[2] = {r, pad_source(WT_PAD_REFLECT, c, 2, 3)};
                e[r * 6 + c] = hv_at(&ho, co);
            }
        CHECK(wt_pad(odd_view, 2, po, WT_PAD_REFLECT, 0, &t) == WT_OK, "pad odd offset: %s", wt_last_error());
        mv_expect(WHAT("%s reflect pad of a view at an odd offset", dn), t, dt, 2, os, e);
        wt_tensor_release(t);
    }
    wt_tensor_release(odd_view);
    /* Only the last axis, of a 1-element tensor, and of an empty one. */
    const int64_t p1[2] = {2, 3};
    const int64_t es[2] = {0, 3};
    mv_input z;
    if (mv_make(dt, 2, es, &z)) {
        const int64_t zs[2] = {0, 8};
        CHECK(wt_pad(z.dev, 2, p1, WT_PAD_CONSTANT, 0, &t) == WT_OK, "pad empty: %s", wt_last_error());
        mv_expect(WHAT("%s pad of an empty tensor", dn), t, dt, 2, zs, NULL);
        wt_tensor_release(t);
        mv_free(&z);
    }
    const int64_t neg[2] = {1, -1}, big[2] = {5, 0}, odd[3] = {1, 1, 1};
    mv_expect_code("pad negative", wt_pad(v, 2, neg, WT_PAD_CONSTANT, 0, &t), WT_ERR_INVALID_ARGUMENT);
    mv_expect_code("reflect pad >= extent", wt_pad(v, 2, big, WT_PAD_REFLECT, 0, &t), WT_ERR_INVALID_ARGUMENT);
    mv_expect_code("pad odd count", wt_pad(v, 3, odd, WT_PAD_CONSTANT, 0, &t), WT_ERR_INVALID_ARGUMENT);
    mv_expect_code("pad too many", wt_pad(v, 6, (int64_t[]){1, 1, 1, 1, 1, 1}, WT_PAD_CONSTANT, 0, &t),
                   WT_ERR_INVALID_ARGUMENT);
    CHECK(t == NULL, "pad failure leaves out NULL");
    wt_tensor_release(v);
    mv_free(&x);
}

static void test_repeat_flip_roll(wt_dtype dt)
{
    const char *dn = mv_dtype_name(dt);
    mv_input x;
    wt_tensor *v = NULL, *t = NULL;
    if (!make_transposed(dt, 3, 2, &x, &v)) return; /* v: [2, 3] */
    hview h = hv_of(x.bits, v);
    /* repeat (2, 1, 3) -> [2, 2, 9] */
    const int64_t reps[3] = {2, 1, 3}, rs[3] = {2, 2, 9};
    uint32_t e[64];
    for (int64_t i = 0; i < 36; i++) {
        int64_t c[3];
        mv_coord(i, 3, rs, c);
        int64_t co[2] = {c[1] % 2, c[2] % 3};
        e[i] = hv_at(&h, co);
    }
    CHECK(wt_repeat(v, 3, reps, &t) == WT_OK, "repeat: %s", wt_last_error());
    mv_expect(WHAT("%s repeat", dn), t, dt, 3, rs, e);
    wt_tensor_release(t);
    /* tile with fewer counts: (4) -> [2, 12] */
    const int64_t ts[2] = {2, 12};
    for (int64_t i = 0; i < 24; i++) {
        int64_t co[2] = {i / 12, (i % 12) % 3};
        e[i] = hv_at(&h, co);
    }
    CHECK(wt_tile(v, 1, (int64_t[]){4}, &t) == WT_OK, "tile: %s", wt_last_error());
    mv_expect(WHAT("%s tile", dn), t, dt, 2, ts, e);
    wt_tensor_release(t);
    const int64_t zs[2] = {0, 3};
    CHECK(wt_repeat(v, 2, (int64_t[]){0, 1}, &t) == WT_OK, "repeat 0: %s", wt_last_error());
    mv_expect(WHAT("%s repeat by 0", dn), t, dt, 2, zs, NULL);
    wt_tensor_release(t);
    mv_expect_code("repeat fewer counts", wt_repeat(v, 1, (int64_t[]){2}, &t), WT_ERR_INVALID_ARGUMENT);
    mv_expect_code("repeat negative", wt_repeat(v, 2, (int64_t[]){2, -1}, &t), WT_ERR_INVALID_ARGUMENT);

    /* flip both axes */
    for (int64_t i = 0; i < 6; i++) {
        int64_t co[2] = {1 - i / 3, 2 - i % 3};
        e[i] = hv_at(&h, co);
    }
    const int64_t vs[2] = {2, 3};
    CHECK(wt_flip(v, 2, (int[]){0, -1}, &t) == WT_OK, "flip: %s", wt_last_error());
    mv_expect(WHAT("%s flip", dn), t, dt, 2, vs, e);
    wt_tensor_release(t);
    mv_expect_code("flip repeated axis", wt_flip(v, 2, (int[]){1, -1}, &t), WT_ERR_INVALID_ARGUMENT);
    /* An expanded input: row 1 of v broadcast to [3, 3], flipped along
     * its columns, and concatenated after v. */
    wt_tensor *row = NULL, *ex = NULL;
    if (CHECK(wt_slice(v, 0, 1, 2, 1, &row) == WT_OK && wt_expand(row, 2, (int64_t[]){3, 3}, &ex) == WT_OK,
              "expand")) {
        for (int64_t i = 0; i < 9; i++) {
            int64_t co[2] = {1, 2 - i % 3};
            e[i] = hv_at(&h, co);
        }
        CHECK(wt_flip(ex, 1, (int[]){1}, &t) == WT_OK, "flip expanded: %s", wt_last_error());
        mv_expect(WHAT("%s flip of an expanded view", dn), t, dt, 2, (int64_t[]){3, 3}, e);
        wt_tensor_release(t);
        for (int64_t i = 0; i < 15; i++) {
            int64_t co[2] = {i < 6 ? i / 3 : 1, i % 3};
            e[i] = hv_at(&h, co);
        }
        CHECK(wt_concat(2, (wt_tensor *[]){v, ex}, 0, &t) == WT_OK, "concat expanded: %s", wt_last_error());
        mv_expect(WHAT("%s concat with an expanded view", dn), t, dt, 2, (int64_t[]){5, 3}, e);
        wt_tensor_release(t);
    }
    wt_tensor_release(row);
    wt_tensor_release(ex);

    /* roll by (-4, 1) along (1, 0), and flattened by 2 */
    for (int64_t i = 0; i < 6; i++) {
        int64_t r = i / 3, c = i % 3;
        int64_t co[2] = {((r - 1) % 2 + 2) % 2, ((c + 4) % 3 + 3) % 3};
        e[i] = hv_at(&h, co);
    }
    CHECK(wt_roll(v, 2, (int64_t[]){-4, 1}, (int[]){1, 0}, &t) == WT_OK, "roll: %s", wt_last_error());
    mv_expect(WHAT("%s roll", dn), t, dt, 2, vs, e);
    wt_tensor_release(t);
    for (int64_t i = 0; i < 6; i++) {
        int64_t s = ((i - 2) % 6 + 6) % 6;
        int64_t co[2] = {s / 3, s % 3};
        e[i] = hv_at(&h, co);
    }
    CHECK(wt_roll(v, 0, (int64_t[]){2}, NULL, &t) == WT_OK, "roll flat: %s", wt_last_error());
    mv_expect(WHAT("%s roll flattened", dn), t, dt, 2, vs, e);
    wt_tensor_release(t);
    mv_expect_code("roll bad axis", wt_roll(v, 1, (int64_t[]){1}, (int[]){2}, &t), WT_ERR_INVALID_ARGUMENT);
    wt_tensor_release(v);
    mv_free(&x);
}

static void test_tri(wt_dtype dt)
{
    const char *dn = mv_dtype_name(dt);
    const int64_t shape[3] = {2, 5, 7};
    mv_input x;
    if (!mv_make(dt, 3, shape, &x)) return;
    const int64_t diags[4] = {0, 2, -3, 100};
    uint32_t e[70], zero = mv_bits_of(dt, 0);
    for (int k = 0; k < 4; k++)
        for (int upper = 0; upper < 2; upper++) {
            for (int64_t i = 0; i < 70; i++) {
                int64_t r = (i / 7) % 5, c = i % 7;
                bool keep = upper ? c - r >= diags[k] : c - r <= diags[k];
                e[i] = keep ? x.bits[i] : zero;
            }
            wt_tensor *t = NULL;
            wt_status st = upper ? wt_triu(x.dev, diags[k], &t) : wt_tril(x.dev, diags[k], &t);
            CHECK(st == WT_OK, "tri: %s", wt_last_error());
            mv_expect(WHAT("%s %s diagonal %lld", dn, upper ? "triu" : "tril", (long long)diags[k]), t, dt, 3,
                      shape, e);
            wt_tensor_release(t);
        }
    wt_tensor *t = NULL, *r = NULL;
    CHECK(wt_reshape(x.dev, 1, (int64_t[]){70}, &r) == WT_OK, "reshape");
    mv_expect_code("tril of 1-D", wt_tril(r, 0, &t), WT_ERR_INVALID_ARGUMENT);
    wt_tensor_release(r);
    mv_free(&x);
}

/* ----------------------------------------------------------- copy_into */

static void test_copy_into(wt_dtype dt)
{
    const char *dn = mv_dtype_name(dt);
    /* A [5, 9] cache; write src [3, 4] (transposed view) into rows 1..3,
     * columns 1, 3, 5, 7 (a strided view at odd offsets). */
    const int64_t cs[2] = {5, 9};
    mv_input cache, s;
    wt_tensor *sv = NULL, *rows = NULL, *dst = NULL;
    if (!mv_make(dt, 2, cs, &cache) || !make_transposed(dt, 4, 3, &s, &sv)) return;
    CHECK(wt_slice(cache.dev, 0, 1, 4, 1, &rows) == WT_OK && wt_slice(rows, 1, 1, 9, 2, &dst) == WT_OK, "slices");
    hview hs = hv_of(s.bits, sv);
    uint32_t e[45];
    memcpy(e, cache.bits, sizeof e);
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 4; c++) {
            int64_t co[2] = {r, c};
            e[(1 + r) * 9 + 1 + 2 * c] = hv_at(&hs, co);
        }
    CHECK(wt_copy_into(dst, sv) == WT_OK, "copy_into: %s", wt_last_error());
    mv_expect(WHAT("%s copy_into a strided view", dn), cache.dev, dt, 2, cs, e);
    /* broadcast a [4] row into the same view */
    mv_input row;
    const int64_t four = 4;
    if (mv_make(dt, 1, &four, &row)) {
        for (int r = 0; r < 3; r++)
            for (int c = 0; c < 4; c++) e[(1 + r) * 9 + 1 + 2 * c] = row.bits[c];
        CHECK(wt_copy_into(dst, row.dev) == WT_OK, "copy_into broadcast: %s", wt_last_error());
        mv_expect(WHAT("%s copy_into broadcast", dn), cache.dev, dt, 2, cs, e);
        mv_free(&row);
    }
    /* Overlap: row 0 [0..8) <- row 0 [1..9) within the same storage, and
     * rows 1..4 <- rows 0..3 (overlapping ranges). */
    wt_tensor *a = NULL, *b = NULL;
    CHECK(wt_slice(cache.dev, 1, 0, 8, 1, &a) == WT_OK && wt_slice(cache.dev, 1, 1, 9, 1, &b) == WT_OK, "slices");
    uint32_t e2[45];
    memcpy(e2, e, sizeof e2);
    for (int r = 0; r < 5; r++)
        for (int c = 0; c < 8; c++) e2[r * 9 + c] = e[r * 9 + c + 1];
    CHECK(wt_copy_into(a, b) == WT_OK, "copy_into overlapping: %s", wt_last_error());
    mv_expect(WHAT("%s copy_into overlapping (shift left)", dn), cache.dev, dt, 2, cs, e2);
    memcpy(e, e2, sizeof e);
    for (int r = 0; r < 5; r++)
        for (int c = 0; c < 8; c++) e2[r * 9 + c + 1] = e[r * 9 + c];
    CHECK(wt_copy_into(b, a) == WT_OK, "copy_into overlapping: %s", wt_last_error());
    mv_expect(WHAT("%s copy_into overlapping (shift right)", dn), cache.dev, dt, 2, cs, e2);
    mv_expect_code("copy_into shape mismatch", wt_copy_into(dst, cache.dev), WT_ERR_SHAPE);
    /* Row 0 into row 4: one storage, apart (no temporary needed on the
     * CPU; a GPU binds one buffer once). */
    wt_tensor *r0 = NULL, *r4 = NULL;
    if (CHECK(wt_slice(cache.dev, 0, 0, 1, 1, &r0) == WT_OK && wt_slice(cache.dev, 0, 4, 5, 1, &r4) == WT_OK,
              "slices")) {
        memcpy(e2 + 36, e2, 9 * sizeof *e2);
        CHECK(wt_copy_into(r4, r0) == WT_OK, "copy_into same storage: %s", wt_last_error());
        mv_expect(WHAT("%s copy_into between rows of one tensor", dn), cache.dev, dt, 2, cs, e2);
    }
    wt_tensor_release(r0);
    wt_tensor_release(r4);
    /* A contiguous run at an odd offset with an odd count (2-byte
     * elements: both end words are shared with elements outside). */
    wt_tensor *flat = NULL, *run = NULL, *from = NULL;
    if (CHECK(wt_flatten(cache.dev, 0, -1, &flat) == WT_OK && wt_slice(flat, 0, 5, 12, 1, &run) == WT_OK &&
                  wt_slice(flat, 0, 21, 42, 3, &from) == WT_OK,
              "views")) {
        for (int i = 0; i < 7; i++) e2[5 + i] = e2[21 + 3 * i];
        CHECK(wt_copy_into(run, from) == WT_OK, "copy_into odd run: %s", wt_last_error());
        mv_expect(WHAT("%s copy_into a run at an odd offset", dn), cache.dev, dt, 2, cs, e2);
    }
    wt_tensor_release(flat);
    wt_tensor_release(run);
    wt_tensor_release(from);
    /* A 0-d src fills the view; an f32 src converts into an f16 dst. */
    mv_input sc;
    if (mv_make_from(dt, 0, NULL, (uint32_t[]){mv_bits_of(dt, 3)}, &sc)) {
        for (int r = 0; r < 3; r++)
            for (int c = 0; c < 4; c++) e2[(1 + r) * 9 + 1 + 2 * c] = mv_bits_of(dt, 3);
        CHECK(wt_copy_into(dst, sc.dev) == WT_OK, "copy_into 0-d: %s", wt_last_error());
        mv_expect(WHAT("%s copy_into from a 0-d src", dn), cache.dev, dt, 2, cs, e2);
        mv_free(&sc);
    }
    if (dt == WT_F16 && mv_make_from(WT_F32, 1, &four, (uint32_t[]){mv_bits_of(WT_F32, 1.5), mv_bits_of(WT_F32, -2),
                                                                   mv_bits_of(WT_F32, 0.25), mv_bits_of(WT_F32, 1e6)},
                                     &sc)) {
        const double vals[4] = {1.5, -2, 0.25, INFINITY};
        for (int r = 0; r < 3; r++)
            for (int c = 0; c < 4; c++) e2[(1 + r) * 9 + 1 + 2 * c] = mv_bits_of(WT_F16, vals[c]);
        CHECK(wt_copy_into(dst, sc.dev) == WT_OK, "copy_into f32 -> f16: %s", wt_last_error());
        mv_expect("f16 copy_into from an f32 src (converted)", cache.dev, dt, 2, cs, e2);
        mv_free(&sc);
    }
    wt_tensor *exp = NULL;
    const int64_t o1 = 1, e34[2] = {3, 4};
    mv_input o;
    if (mv_make(dt, 1, &o1, &o)) {
        CHECK(wt_expand(o.dev, 2, e34, &exp) == WT_OK, "expand");
        mv_expect_code("copy_into an expanded dst", wt_copy_into(exp, sv), WT_ERR_INVALID_ARGUMENT);
        mv_free(&o);
    }
    wt_tensor_release(exp);
    wt_tensor_release(a);
    wt_tensor_release(b);
    wt_tensor_release(rows);
    wt_tensor_release(dst);
    wt_tensor_release(sv);
    mv_free(&cache);
    mv_free(&s);
}

/* 0-d tensors through the remap ops and copy_into. */
static void test_zero_d(wt_dtype dt)
{
    const char *dn = mv_dtype_name(dt);
    mv_input x, y;
    if (!mv_make(dt, 0, NULL, &x) || !mv_make(dt, 0, NULL, &y)) return;
    wt_tensor *t = NULL;
    CHECK(wt_flip(x.dev, 0, NULL, &t) == WT_OK, "flip 0-d: %s", wt_last_error());
    mv_expect(WHAT("%s flip of 0-d", dn), t, dt, 0, NULL, x.bits);
    wt_tensor_release(t);
    CHECK(wt_pad(x.dev, 0, NULL, WT_PAD_REFLECT, 0, &t) == WT_OK, "pad 0-d: %s", wt_last_error());
    mv_expect(WHAT("%s pad of 0-d", dn), t, dt, 0, NULL, x.bits);
    wt_tensor_release(t);
    const int64_t two[2] = {2, 3};
    const uint32_t six[6] = {x.bits[0], x.bits[0], x.bits[0], x.bits[0], x.bits[0], x.bits[0]};
    CHECK(wt_tile(x.dev, 2, two, &t) == WT_OK, "tile 0-d: %s", wt_last_error());
    mv_expect(WHAT("%s tile of 0-d", dn), t, dt, 2, two, six);
    wt_tensor_release(t);
    CHECK(wt_copy_into(y.dev, x.dev) == WT_OK, "copy_into 0-d: %s", wt_last_error());
    mv_expect(WHAT("%s copy_into 0-d", dn), y.dev, dt, 0, NULL, x.bits);
    CHECK(wt_unsqueeze(x.dev, 0, &t) == WT_OK, "unsqueeze 0-d");
    mv_expect(WHAT("%s unsqueeze of 0-d", dn), t, dt, 1, (int64_t[]){1}, x.bits);
    wt_tensor_release(t);
    mv_free(&x);
    mv_free(&y);
}

/* More than 65,535 workgroups: a tile of f32 with 256 * 65535 + 6 elements
 * (one thread each). */
static void test_large(void)
{
    const int64_t three = 3, n = (256 * 65535 + 6) / 3, os[2] = {n, 3};
    mv_input x;
    if (!mv_make(WT_F32, 1, &three, &x)) return;
    uint32_t *e = malloc((size_t)(n * 3) * 4);
    for (int64_t i = 0; e && i < n * 3; i++) e[i] = x.bits[i % 3];
    wt_tensor *t = NULL;
    CHECK(wt_tile(x.dev, 2, (int64_t[]){n, 1}, &t) == WT_OK, "large tile: %s", wt_last_error());
    mv_expect("f32 tile past 65,535 workgroups", t, WT_F32, 2, os, e);
    wt_tensor_release(t);
    free(e);
    mv_free(&x);
}

int main(int argc, char **argv)
{
    test_run run;
    if (!test_begin(&run, "movement", argc, argv)) return run.status;
    g_ctx = run.ctx;
    g_backend = run.backend;
    for (int i = 0; i < 4; i++) {
        wt_dtype dt = k_dtypes[i];
        test_views(dt);
        test_split_chunk(dt);
        test_concat_stack(dt);
        test_pad(dt);
        test_repeat_flip_roll(dt);
        test_tri(dt);
        test_copy_into(dt);
        test_zero_d(dt);
    }
    if (g_backend == TEST_BACKEND_VULKAN) test_large();
    return test_end(&run);
}
