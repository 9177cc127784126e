/* wt_linear_quant_fused (an RMSNorm before a quantised product, a SwiGLU
 * and a residual add after it) against float64 of the definition and
 * against the composition of the library's ops (wt_rms_norm,
 * wt_linear_quant, wt_silu, wt_mul, wt_add), for every type, row counts on
 * both sides of the fused kernel's limit, x and the norm weight at offsets
 * the kernel does not take (the composition then), plus argument errors. */
#include "quant_test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct fuse {
    bool norm, bias, swiglu, residual;
} fuse;

/* A float tensor of n values at element offset off of its storage (a
 * slice of a larger one when off > 0). */
static wt_tensor *make_at(int ndim, const int64_t *shape, const float *v, int64_t off)
{
    int64_t n = 1;
    for (int i = 0; i < ndim; i++) n *= shape[i];
    float *buf = calloc((size_t)(n + off), sizeof *buf);
    memcpy(buf + off, v, sizeof *v * (size_t)n);
    const int64_t flat = n + off;
    wt_tensor *all = NULL, *part = NULL, *t = NULL;
    if (wt_tensor_from_data(g_ctx, WT_F32, 1, &flat, buf, &all) == WT_OK &&
        wt_slice(all, 0, off, flat, 1, &part) == WT_OK && wt_reshape(part, ndim, shape, &t) != WT_OK)
        t = NULL;
    free(buf);
    wt_tensor_release(all);
    wt_tensor_release(part);
    return t;
}

/* How far rounding h (the product's input) to 8 bits may move h . w_r,
 * 0 where h stays f32. The CPU (the header's bound): a block's max |h| /
 * 254 times its sum of |w|. WebGPU rounding x (WT_QUANT_GEMV_X8; tests/
 * quant_linear.c's bound): half of a block of 32's step max |h| / 127
 * times each term's magnitude, Q4_0's 8 |d| included. */
static double x8_bound(const double *h, const uint8_t *blocks, wt_quant_type t, int64_t k, int64_t r, int64_t m)
{
    const char *v = getenv("WT_CPU_QUANT_DOT");
    const bool gpu_x8 = !g_cpu && x8_knob_on(t);
    if (m > 4 || (g_cpu && v && strcmp(v, "f32") == 0) || (!g_cpu && !gpu_x8)) return 0.0;
    double bound = 0.0;
    const int64_t be = g_cpu ? block_elems(t) : 32;
    for (int64_t b = 0; b < k / be; b++) {
        double amax = 0.0, wsum = 0.0;
        for (int64_t j = be * b; j < be * b + be; j++) {
            double wm = 0.0;
            amax = fmax(amax, fabs(h[j]));
            const double wv = ref_at(t, blocks, k, r, j, &wm);
            wsum += g_cpu ? fabs(wv) : wm;
            if (!g_cpu && t == WT_QUANT_Q4_0) wsum += 8.0 * fabs(half_field(blocks + (r * (k / 32) + j / 32) * Q4_BYTES));
        }
        bound += wsum * amax / 254.0;
    }
    return bound * 1.001;
}

/* The composition, from the public ops. */
static wt_status composed(const wt_tensor *x, const wt_tensor *w, wt_quant_type t, const wt_tensor *b,
                          const wt_linear_fused_options *o, wt_tensor **out)
{
    wt_tensor *h = NULL, *y = NULL, *g = NULL, *u = NULL, *sg = NULL, *p = NULL;
    wt_status st = WT_OK;
    if (o->rms_norm) st = wt_rms_norm(x, 1, o->norm_weight, o->norm_eps, &h);
    if (st == WT_OK) st = wt_linear_quant(h ? h : x, w, t, b, &y);
    const wt_tensor *v = y;
    if (st == WT_OK && o->swiglu) {
        const int64_t n = wt_tensor_shape(y)[1] / 2;
        if ((st = wt_slice(y, 1, 0, n, 1, &g)) == WT_OK && (st = wt_slice(y, 1, n, 2 * n, 1, &u)) == WT_OK &&
            (st = wt_silu(g, &sg)) == WT_OK)
            st = wt_mul(sg, u, &p);
        v = p;
    }
    if (st == WT_OK && o->residual) {
        st = wt_add(v, o->residual, out);
    } else if (st == WT_OK) {
        *out = (wt_tensor *)v;
        wt_tensor_retain(*out);
    }
    wt_tensor_release(h);
    wt_tensor_release(y);
    wt_tensor_release(g);
    wt_tensor_release(u);
    wt_tensor_release(sg);
    wt_tensor_release(p);
    return st;
}

/* One case: M rows of x (K = 512), N rows of w; x_off and g_off the
 * element offsets of x and of the norm weight in their storage. */
static void one_case(wt_quant_type t, int64_t M, int64_t N, const fuse *f, int64_t x_off, int64_t g_off)
{
    const int64_t K = 512, n_out = f->swiglu ? N / 2 : N, bytes = N * K / block_elems(t) * block_bytes(t);
    const double eps = 1e-5;
    uint8_t *blocks = malloc((size_t)bytes);
    float *x = malloc(sizeof *x * (size_t)(M * K)), *g = malloc(sizeof *g * (size_t)K);
    float *b = malloc(sizeof *b * (size_t)N), *r = malloc(sizeof *r * (size_t)(M * n_out));
    random_blocks(t, N, K, blocks);
    for (int64_t i = 0; i < M * K; i++) x[i] = test_rng_uniform(-1.0f, 1.0f);
    for (int64_t i = 0; i < K; i++) g[i] = test_rng_uniform(0.5f, 1.5f);
    for (int64_t i = 0; i < N; i++) b[i] = test_rng_uniform(-1.0f, 1.0f);
    for (int64_t i = 0; i < M * n_out; i++) r[i] = test_rng_uniform(-4.0f, 4.0f);
    const int64_t xs[2] = {M, K}, rs[2] = {M, n_out};
    wt_tensor *w = NULL, *tx = make_at(2, xs, x, x_off), *tg = make_at(1, &K, g, g_off), *tb = make_at(1, &N, b, 0),
              *tr = make_at(2, rs, r, 0), *fused = NULL, *comp = NULL;
    char what[160];
    snprintf(what, sizeof what, "%s M=%lld N=%lld norm=%d bias=%d swiglu=%d residual=%d x_off=%lld g_off=%lld",
             quant_type_name(t), (long long)M, (long long)N, f->norm, f->bias, f->swiglu, f->residual,
             (long long)x_off, (long long)g_off);
    wt_linear_fused_options o;
    wt_linear_fused_options_init(&o);
    o.rms_norm = f->norm;
    o.norm_weight = f->norm ? tg : NULL;
    o.norm_eps = eps;
    o.swiglu = f->swiglu;
    o.residual = f->residual ? tr : NULL;
    const wt_tensor *bias = f->bias ? tb : NULL;
    if (!tx || !tg || !tb || !tr || wt_quant_from_blocks(g_ctx, t, N, K, blocks, (size_t)bytes, &w) != WT_OK) {
        CHECK(false, "%s: setup: %s", what, wt_last_error());
    } else if (wt_linear_quant_fused(tx, w, t, bias, &o, &fused) != WT_OK) {
        CHECK(false, "%s: wt_linear_quant_fused: %s", what, wt_last_error());
    } else if (composed(tx, w, t, bias, &o, &comp) != WT_OK) {
        CHECK(false, "%s: composition: %s", what, wt_last_error());
    } else {
        const int64_t *s = wt_tensor_shape(fused);
        CHECK(wt_tensor_ndim(fused) == 2 && s[0] == M && s[1] == n_out && wt_tensor_dtype(fused) == WT_F32,
              "%s: result shape / dtype", what);
        float *yf = read_f32(fused), *yc = read_f32(comp);
        double *h = malloc(sizeof *h * (size_t)K), *y = malloc(sizeof *y * (size_t)N),
               *e = malloc(sizeof *e * (size_t)N);
        double worst = 0.0, worst_c = 0.0;
        int bad = 0;
        for (int64_t m = 0; yf && yc && m < M; m++) {
            double ss = 0.0;
            for (int64_t k = 0; k < K; k++) ss += (double)x[m * K + k] * x[m * K + k];
            const double inv = f->norm ? 1.0 / sqrt(ss / (double)K + eps) : 1.0;
            for (int64_t k = 0; k < K; k++) h[k] = x[m * K + k] * inv * (f->norm ? g[k] : 1.0);
            for (int64_t n = 0; n < N; n++) {
                double sum = f->bias ? b[n] : 0.0, mag = fabs(sum);
                for (int64_t k = 0; k < K; k++) {
                    const double p = ref_at(t, blocks, K, n, k, NULL) * h[k];
                    sum += p;
                    mag += fabs(p);
                }
                y[n] = sum;
                /* f32 sums and the norm's f32 factor: 2e-5 of the
                 * magnitude; the CPU's 8-bit h on top. */
                e[n] = 2e-5 * mag + x8_bound(h, blocks, t, K, n, M) + 1e-6;
            }
            for (int64_t j = 0; j < n_out; j++) {
                double v = y[j], tol = e[j];
                if (f->swiglu) {
                    const double gt = y[j], up = y[j + n_out], sg = gt / (1.0 + exp(-gt));
                    v = sg * up;
                    /* silu's slope is at most 1.1 */
                    tol = 1.1 * e[j] * (fabs(up) + e[j + n_out]) + fabs(sg) * e[j + n_out] + 1e-6 * fabs(v);
                }
                if (f->residual) {
                    v += r[m * n_out + j];
                    tol += 1e-6 * fabs(v);
                }
                const double df = fabs(yf[m * n_out + j] - v), dc = fabs(yf[m * n_out + j] - yc[m * n_out + j]);
                if (df > tol || dc > 2.0 * tol || !isfinite(yf[m * n_out + j])) bad++;
                worst = fmax(worst, df / tol);
                worst_c = fmax(worst_c, dc / (2.0 * tol));
            }
        }
        CHECK(yf && yc && bad == 0, "%s: %d outputs off (worst %.3g of the bound against float64, %.3g against "
              "the composition)", what, bad, worst, worst_c);
        free(h);
        free(y);
        free(e);
        free(yf);
        free(yc);
    }
    wt_tensor_release(w);
    wt_tensor_release(tx);
    wt_tensor_release(tg);
    wt_tensor_release(tb);
    wt_tensor_release(tr);
    wt_tensor_release(fused);
    wt_tensor_release(comp);
    free(blocks);
    free(x);
    free(g);
    free(b);
    free(r);
}

/* into (wt_linear_fused_options.into): the result written into a view at
 * element offset off of a larger tensor, equal bit for bit to the result
 * the same call makes on its own, the tensor's other elements untouched
 * and *out the view itself; two products into the two halves of one
 * tensor (a decode step's q|k and v of two types). */
static void into_case(wt_quant_type t, int64_t M, int64_t N, const fuse *f, int64_t off)
{
    const int64_t K = 512, n_out = f->swiglu ? N / 2 : N, bytes = N * K / block_elems(t) * block_bytes(t);
    const int64_t total = off + M * n_out + 7;
    uint8_t *blocks = malloc((size_t)bytes);
    float *x = malloc(sizeof *x * (size_t)(M * K)), *g = malloc(sizeof *g * (size_t)K);
    float *r = malloc(sizeof *r * (size_t)(M * n_out)), *fill = malloc(sizeof *fill * (size_t)total);
    random_blocks(t, N, K, blocks);
    for (int64_t i = 0; i < M * K; i++) x[i] = test_rng_uniform(-1.0f, 1.0f);
    for (int64_t i = 0; i < K; i++) g[i] = test_rng_uniform(0.5f, 1.5f);
    for (int64_t i = 0; i < M * n_out; i++) r[i] = test_rng_uniform(-4.0f, 4.0f);
    for (int64_t i = 0; i < total; i++) fill[i] = 7.25f;
    const int64_t xs[2] = {M, K}, rs[2] = {M, n_out};
    wt_tensor *w = NULL, *tx = make_at(2, xs, x, 0), *tg = make_at(1, &K, g, 0), *tr = make_at(2, rs, r, 0);
    wt_tensor *big = NULL, *part = NULL, *view = NULL, *alone = NULL, *got = NULL;
    char what[160];
    snprintf(what, sizeof what, "into: %s M=%lld N=%lld norm=%d swiglu=%d residual=%d at %lld", quant_type_name(t),
             (long long)M, (long long)N, f->norm, f->swiglu, f->residual, (long long)off);
    wt_linear_fused_options o;
    wt_linear_fused_options_init(&o);
    o.rms_norm = f->norm;
    o.norm_weight = f->norm ? tg : NULL;
    o.norm_eps = 1e-5;
    o.swiglu = f->swiglu;
    o.residual = f->residual ? tr : NULL;
    if (!tx || !tg || !tr || wt_quant_from_blocks(g_ctx, t, N, K, blocks, (size_t)bytes, &w) != WT_OK ||
        wt_tensor_from_data(g_ctx, WT_F32, 1, &total, fill, &big) != WT_OK ||
        wt_slice(big, 0, off, off + M * n_out, 1, &part) != WT_OK || wt_reshape(part, 2, rs, &view) != WT_OK) {
        CHECK(false, "%s: setup: %s", what, wt_last_error());
    } else if (wt_linear_quant_fused(tx, w, t, NULL, &o, &alone) != WT_OK) {
        CHECK(false, "%s: without into: %s", what, wt_last_error());
    } else {
        o.into = view;
        const wt_status st = wt_linear_quant_fused(tx, w, t, NULL, &o, &got);
        CHECK(st == WT_OK && got == view, "%s: returns the view itself (%s)", what, st ? wt_last_error() : "");
        float *a = read_f32(alone), *all = read_f32(big);
        int differ = 0, touched = 0;
        for (int64_t i = 0; a && all && i < total; i++) {
            if (i >= off && i < off + M * n_out) differ += memcmp(&all[i], &a[i - off], sizeof *a) != 0;
            else touched += all[i] != 7.25f;
        }
        CHECK(a && all && differ == 0 && touched == 0,
              "%s: %d results differ from the call's own, %d elements outside the view written", what, differ,
              touched);
        free(a);
        free(all);
    }
    wt_tensor_release(w);
    wt_tensor_release(tx);
    wt_tensor_release(tg);
    wt_tensor_release(tr);
    wt_tensor_release(big);
    wt_tensor_release(part);
    wt_tensor_release(view);
    wt_tensor_release(alone);
    wt_tensor_release(got);
    free(blocks);
    free(x);
    free(g);
    free(r);
    free(fill);
}

/* into's argument errors: a wrong shape, dtype, a view that is not
 * contiguous, a storage shared with an operand. */
static void into_errors(void)
{
    uint8_t blocks[4 * Q8_BYTES];
    random_blocks(WT_QUANT_Q8_0, 4, 32, blocks);
    const int64_t xs[2] = {2, 32}, ys[2] = {2, 4}, wide[2] = {2, 8}, three[2] = {2, 3};
    float xv[64] = {0};
    wt_tensor *w = NULL, *x = make_at(2, xs, xv, 0), *y = NULL, *bad = NULL, *w8 = NULL, *half = NULL;
    wt_tensor *i32 = NULL, *res = NULL, *res_part = NULL;
    if (wt_quant_from_blocks(g_ctx, WT_QUANT_Q8_0, 4, 32, blocks, sizeof blocks, &w) != WT_OK || !x ||
        wt_tensor_zeros(g_ctx, WT_F32, 2, three, &bad) != WT_OK || wt_tensor_zeros(g_ctx, WT_F32, 2, wide, &w8) != WT_OK ||
        wt_slice(w8, 1, 0, 4, 1, &half) != WT_OK || wt_tensor_zeros(g_ctx, WT_I32, 2, ys, &i32) != WT_OK ||
        wt_slice(w8, 1, 4, 8, 1, &res_part) != WT_OK || wt_contiguous(res_part, &res) != WT_OK) {
        CHECK(false, "into errors: setup: %s", wt_last_error());
    } else {
        wt_linear_fused_options o;
        wt_linear_fused_options_init(&o);
        o.rms_norm = true;
        o.into = bad;
        CHECK(wt_linear_quant_fused(x, w, WT_QUANT_Q8_0, NULL, &o, &y) == WT_ERR_SHAPE && !y,
              "into [2, 3] for [2, 4] refused");
        o.into = i32;
        const wt_status st = wt_linear_quant_fused(x, w, WT_QUANT_Q8_0, NULL, &o, &y);
        CHECK(st == WT_ERR_INVALID_ARGUMENT && !y, "an i32 into refused (%d: %s)", (int)st, wt_last_error());
        o.into = half;
        CHECK(wt_linear_quant_fused(x, w, WT_QUANT_Q8_0, NULL, &o, &y) == WT_ERR_INVALID_ARGUMENT && !y,
              "into that is not contiguous (half of each row) refused");
        wt_tensor *view = NULL;
        if (wt_reshape(res, 2, ys, &view) == WT_OK) {
            o.into = view;
            o.rms_norm = false;
            o.residual = view;
            CHECK(wt_linear_quant_fused(x, w, WT_QUANT_Q8_0, NULL, &o, &y) == WT_ERR_INVALID_ARGUMENT && !y,
                  "into in the residual's storage refused");
        }
        wt_tensor_release(view);
    }
    wt_tensor_release(w);
    wt_tensor_release(x);
    wt_tensor_release(bad);
    wt_tensor_release(w8);
    wt_tensor_release(half);
    wt_tensor_release(i32);
    wt_tensor_release(res);
    wt_tensor_release(res_part);
}

void test_linear_fused_quant(void)
{
    /* The Llama step's three uses (norm before q/k/v; norm and SwiGLU of
     * gate/up; residual after o_proj and down), then all four at once. */
    const fuse uses[] = {
        {.norm = true}, {.norm = true, .swiglu = true}, {.residual = true},
        {.norm = true, .bias = true, .swiglu = true, .residual = true}, {.bias = true, .residual = true},
    };
    for (int ti = 0; ti < 4; ti++)
        for (size_t u = 0; u < sizeof uses / sizeof uses[0]; u++)
            for (int64_t M = 1; M <= 5; M += 2) one_case(all_types[ti], M, 22, &uses[u], 0, 0);
    /* Past the kernel's reach: x and the norm weight not at a vec4, and
     * an odd number of output pairs. */
    const fuse all = {.norm = true, .bias = true, .swiglu = true, .residual = true};
    one_case(WT_QUANT_Q4_0, 1, 22, &all, 1, 0);
    one_case(WT_QUANT_Q4_0, 1, 22, &all, 0, 2);
    one_case(WT_QUANT_Q8_0, 2, 6, &all, 0, 0);
    one_case(WT_QUANT_Q4_K, 1, 2, &all, 0, 0);
    /* into: the Llama step's uses at offsets of a larger tensor (4 is
     * q|k's end in a [q|k, v] row of the tests' sizes, 22 past a vec4). */
    for (int ti = 0; ti < 4; ti++)
        for (size_t u = 0; u < sizeof uses / sizeof uses[0]; u++) into_case(all_types[ti], 1, 22, &uses[u], 4);
    into_case(WT_QUANT_Q4_0, 3, 22, &uses[0], 22);
    into_case(WT_QUANT_Q6_K, 1, 22, &uses[1], 0);
    into_case(WT_QUANT_Q8_0, 5, 22, &all, 3); /* past the fused kernel's rows: the composition, copied in */
    into_errors();

    /* Argument errors. */
    uint8_t blocks[3 * Q8_BYTES];
    random_blocks(WT_QUANT_Q8_0, 3, 32, blocks);
    const int64_t xs[2] = {1, 32}, rs[2] = {1, 2};
    float xv[32] = {0}, rv[2] = {0};
    wt_tensor *w = NULL, *x = make_at(2, xs, xv, 0), *r = make_at(2, rs, rv, 0), *y = NULL;
    if (wt_quant_from_blocks(g_ctx, WT_QUANT_Q8_0, 3, 32, blocks, sizeof blocks, &w) != WT_OK || !x || !r) {
        CHECK(false, "errors: setup: %s", wt_last_error());
    } else {
        wt_linear_fused_options o;
        wt_linear_fused_options_init(&o);
        o.swiglu = true;
        CHECK(wt_linear_quant_fused(x, w, WT_QUANT_Q8_0, NULL, &o, &y) == WT_ERR_SHAPE && !y,
              "swiglu of 3 rows refused");
        wt_linear_fused_options_init(&o);
        o.residual = r;
        CHECK(wt_linear_quant_fused(x, w, WT_QUANT_Q8_0, NULL, &o, &y) == WT_ERR_SHAPE && !y,
              "residual [1, 2] for 3 outputs refused");
        wt_linear_fused_options_init(&o);
        o.struct_size = 3;
        CHECK(wt_linear_quant_fused(x, w, WT_QUANT_Q8_0, NULL, &o, &y) == WT_ERR_INVALID_ARGUMENT && !y,
              "options not from wt_linear_fused_options_init refused");
        CHECK(wt_linear_quant_fused(x, w, WT_QUANT_Q4_0, NULL, NULL, &y) != WT_OK && !y,
              "a Q8_0 weight named Q4_0 refused");
    }
    wt_tensor_release(w);
    wt_tensor_release(x);
    wt_tensor_release(r);
}
