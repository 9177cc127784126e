/* wt_linear_fused against a float64 reference written here (RMSNorm,
 * product, bias, SwiGLU, residual from their definitions) and against the
 * composition of the library's own ops (wt_rms_norm, wt_linear, wt_silu,
 * wt_mul, wt_add), for f32 and f16 tensors, odd and even extents, row
 * counts on both sides of the fused kernels' limit, weights read through
 * views (a row stride, an offset, a transposed view), plus the argument
 * errors. Usage: linear_fused <cpu|vulkan|gles>. */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static wt_context *g_ctx;

/* What one case fuses. */
typedef struct fuse {
    bool norm, norm_w, bias, swiglu, residual;
    bool gelu; /* input_gelu */
} fuse;

/* The dtypes of one case: x (and the norm weight), w, bias, residual; the
 * result in f32 when result_f32. */
typedef struct dtypes {
    wt_dtype x, w, b, r;
    bool result_f32;
} dtypes;

/* Host values rounded to the dtype (f16: through halves), so that the
 * reference sees exactly what the device holds. */
static void fill(float *v, int64_t n, float scale, wt_dtype dt)
{
    for (int64_t i = 0; i < n; i++) {
        double d = test_rng_uniform(-scale, scale);
        v[i] = dt == WT_F16 ? (float)test_half_to_double(test_double_to_half(d)) : (float)d;
    }
}

static wt_tensor *make(wt_dtype dt, int ndim, const int64_t *shape, const float *v)
{
    wt_tensor *t = NULL, *c = NULL;
    if (wt_tensor_from_data(g_ctx, WT_F32, ndim, shape, v, &t) != WT_OK) return NULL;
    if (dt == WT_F32) return t;
    wt_status st = wt_cast(t, dt, &c);
    wt_tensor_release(t);
    return st == WT_OK ? c : NULL;
}

/* The result as f32 on the host (NULL on failure). */
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

/* out [M, n_out] in float64 from the definition. */
static void reference(const float *x, const float *w, const float *b, const float *g, const float *r, int64_t M,
                      int64_t K, int64_t N, int64_t w_stride, const fuse *f, double eps, double *out)
{
    const int64_t n_out = f->swiglu ? N / 2 : N;
    double *y = malloc(sizeof *y * (size_t)N), *h = malloc(sizeof *h * (size_t)K);
    for (int64_t m = 0; m < M; m++) {
        double ss = 0.0;
        for (int64_t k = 0; k < K; k++) ss += (double)x[m * K + k] * x[m * K + k];
        const double inv = f->norm ? 1.0 / sqrt(ss / (double)K + eps) : 1.0;
        for (int64_t k = 0; k < K; k++) {
            h[k] = x[m * K + k] * inv * (f->norm_w ? g[k] : 1.0);
            if (f->gelu) h[k] = 0.5 * h[k] * erfc(-h[k] / sqrt(2.0));
        }
        for (int64_t n = 0; n < N; n++) {
            double s = f->bias ? b[n] : 0.0;
            for (int64_t k = 0; k < K; k++) s += (double)w[n * w_stride + k] * h[k];
            y[n] = s;
        }
        for (int64_t j = 0; j < n_out; j++) {
            double v = f->swiglu ? y[j] / (1.0 + exp(-y[j])) * y[j + n_out] : y[j];
            out[m * n_out + j] = v + (f->residual ? r[m * n_out + j] : 0.0);
        }
    }
    free(y);
    free(h);
}

/* The same through the library's separate ops. */
static wt_status composed(const wt_tensor *x, const wt_tensor *w, const wt_tensor *b, const wt_tensor *g,
                          const wt_tensor *r, const fuse *f, double eps, wt_tensor **out)
{
    wt_tensor *h = NULL, *y = NULL, *gt = NULL, *up = NULL, *sg = NULL, *p = NULL, *ge = NULL;
    wt_status st = WT_OK;
    if (f->norm) st = wt_rms_norm(x, 1, g, eps, &h);
    if (st == WT_OK && f->gelu) st = wt_gelu(h ? h : x, &ge);
    if (st == WT_OK) st = wt_linear(ge ? ge : h ? h : x, w, b, &y);
    const int last = wt_tensor_ndim(x) - 1;
    const int64_t N = wt_tensor_shape(w)[0];
    if (st == WT_OK && f->swiglu && (st = wt_slice(y, last, 0, N / 2, 1, &gt)) == WT_OK &&
        (st = wt_slice(y, last, N / 2, N, 1, &up)) == WT_OK && (st = wt_silu(gt, &sg)) == WT_OK) {
        st = wt_mul(sg, up, &p);
    }
    const wt_tensor *v = p ? p : y;
    if (st == WT_OK && r) st = wt_add(v, r, out);
    else if (st == WT_OK) st = wt_contiguous(v, out);
    wt_tensor_release(h);
    wt_tensor_release(ge);
    wt_tensor_release(y);
    wt_tensor_release(gt);
    wt_tensor_release(up);
    wt_tensor_release(sg);
    wt_tensor_release(p);
    return st;
}

/* Worst |a - b| / (atol + rtol |ref|) over the elements (<= 1 passes). */
static double worst(const float *a, const double *ref, int64_t n, double atol, double rtol)
{
    double w = 0.0;
    for (int64_t i = 0; i < n; i++) {
        double e = fabs((double)a[i] - ref[i]) / (atol + rtol * fabs(ref[i]));
        if (!(e <= w)) w = e; /* NaN counts as the worst */
    }
    return w;
}

/* One case: x [M, K] (3-D [2, M/2, K] when split3), w [N, K] read as rows
 * w_row0.. of a [N + 3, K + pad] matrix (a view with a row stride and an
 * offset when pad or w_row0), or as the transpose of a [K, N] one. */
static void run_case_dt(dtypes d, int64_t M, int64_t K, int64_t N, const fuse *f, int64_t pad, bool split3,
                        bool transposed)
{
    const wt_dtype dt = d.x;
    const bool mixed = d.w != d.x || d.b != d.x || d.r != d.x || d.result_f32;
    const bool any16 = d.x == WT_F16 || d.w == WT_F16 || (f->bias && d.b == WT_F16) || (f->residual && d.r == WT_F16);
    const wt_dtype result = d.result_f32 ? WT_F32 : f->residual ? d.r : d.x;
    const int64_t n_out = f->swiglu ? N / 2 : N, ws = K + pad, w_rows = N + 3, row0 = pad ? 2 : 0;
    const double eps = 1e-5;
    char name[200];
    snprintf(name, sizeof name,
             "x %s w %s b %s r %s%s M=%lld K=%lld N=%lld norm=%d/%d gelu=%d bias=%d swiglu=%d res=%d pad=%lld%s%s",
             wt_dtype_name(d.x), wt_dtype_name(d.w), wt_dtype_name(d.b), wt_dtype_name(d.r),
             d.result_f32 ? " ->f32" : "", (long long)M, (long long)K, (long long)N, f->norm, f->norm_w, f->gelu,
             f->bias, f->swiglu, f->residual, (long long)pad, split3 ? " 3-d" : "", transposed ? " w^T view" : "");
    float *x = malloc(sizeof *x * (size_t)(M * K)), *wall = malloc(sizeof *wall * (size_t)(w_rows * ws));
    float *b = malloc(sizeof *b * (size_t)N), *g = malloc(sizeof *g * (size_t)K);
    float *r = malloc(sizeof *r * (size_t)(M * n_out)), *wd = malloc(sizeof *wd * (size_t)(N * K));
    double *ref = malloc(sizeof *ref * (size_t)(M * n_out));
    fill(x, M * K, 2.0f, d.x);
    fill(wall, w_rows * ws, (float)(1.5 / sqrt((double)K)), d.w);
    fill(b, N, 0.5f, d.b);
    fill(g, K, 1.5f, d.x);
    fill(r, M * n_out, 1.0f, d.r);
    for (int64_t n = 0; n < N; n++)
        for (int64_t k = 0; k < K; k++) wd[n * K + k] = wall[(row0 + n) * ws + k];
    reference(x, wd, b, g, r, M, K, N, K, f, eps, ref);

    const int64_t xs2[2] = {M, K}, xs3[3] = {2, M / 2, K}, ball[2] = {w_rows, ws}, bs[1] = {N}, gs[1] = {K};
    const int64_t rs2[2] = {M, n_out}, rs3[3] = {2, M / 2, n_out};
    wt_tensor *xt = make(dt, split3 ? 3 : 2, split3 ? xs3 : xs2, x), *wbig = NULL, *w = NULL, *wtr = NULL;
    wt_tensor *bt = f->bias ? make(d.b, 1, bs, b) : NULL, *gt = f->norm_w ? make(dt, 1, gs, g) : NULL;
    wt_tensor *rt = f->residual ? make(d.r, split3 ? 3 : 2, split3 ? rs3 : rs2, r) : NULL;
    wt_tensor *out = NULL, *comp = NULL;
    wt_status st = WT_OK;
    if (transposed) {
        /* w as the transposed view of a [K, N] matrix: k stride N. */
        float *wt_host = malloc(sizeof *wt_host * (size_t)(K * N));
        for (int64_t n = 0; n < N; n++)
            for (int64_t k = 0; k < K; k++) wt_host[k * N + n] = wd[n * K + k];
        const int64_t tshape[2] = {K, N};
        wtr = make(d.w, 2, tshape, wt_host);
        free(wt_host);
        st = wtr ? wt_transpose(wtr, 0, 1, &w) : WT_ERR_INVALID_ARGUMENT;
    } else {
        wbig = make(d.w, 2, ball, wall);
        st = wbig ? wt_slice(wbig, 0, row0, row0 + N, 1, &w) : WT_ERR_INVALID_ARGUMENT;
        if (st == WT_OK && pad) {
            wt_tensor *v = NULL;
            st = wt_slice(w, 1, 0, K, 1, &v);
            wt_tensor_release(w);
            w = v;
        }
    }
    wt_linear_fused_options o;
    wt_linear_fused_options_init(&o);
    o.rms_norm = f->norm;
    o.norm_weight = gt;
    o.norm_eps = eps;
    o.swiglu = f->swiglu;
    o.residual = rt;
    o.result_f32 = d.result_f32;
    o.input_gelu = f->gelu;
    if (st == WT_OK && xt) st = wt_linear_fused(xt, w, bt, &o, &out);
    CHECK(st == WT_OK && out, "%s: %s", name, wt_last_error());
    if (st == WT_OK && out) {
        const int64_t *os = wt_tensor_shape(out);
        CHECK(wt_tensor_dtype(out) == result && wt_tensor_ndim(out) == (split3 ? 3 : 2) && os[wt_tensor_ndim(out) - 1] == n_out,
              "%s: result dtype or shape", name);
        float *got = read_f32(out);
        const double atol = any16 ? 1e-2 : 1e-5, rtol = any16 ? 4e-3 : 1e-4;
        if (got) {
            double e = worst(got, ref, M * n_out, atol, rtol);
            CHECK(e <= 1.0, "%s: against the float64 reference, worst error %.3g of the tolerance", name, e);
        }
        /* The composition rounds after every op in f16: a wider bound.
         * (One dtype only: the separate ops' promotions are theirs.) */
        st = mixed ? WT_OK : composed(xt, w, bt, gt, rt, f, eps, &comp);
        CHECK(st == WT_OK, "%s: composition: %s", name, wt_last_error());
        float *c = comp ? read_f32(comp) : NULL;
        if (got && c) {
            double *cd = malloc(sizeof *cd * (size_t)(M * n_out));
            for (int64_t i = 0; i < M * n_out; i++) cd[i] = c[i];
            double e = worst(got, cd, M * n_out, dt == WT_F16 ? 3e-2 : 1e-5, dt == WT_F16 ? 1e-2 : 1e-4);
            CHECK(e <= 1.0, "%s: against the composition of ops, worst error %.3g of the tolerance", name, e);
            free(cd);
        }
        free(got);
        free(c);
    }
    wt_tensor_release(xt);
    wt_tensor_release(wbig);
    wt_tensor_release(wtr);
    wt_tensor_release(w);
    wt_tensor_release(bt);
    wt_tensor_release(gt);
    wt_tensor_release(rt);
    wt_tensor_release(out);
    wt_tensor_release(comp);
    free(x);
    free(wall);
    free(b);
    free(g);
    free(r);
    free(wd);
    free(ref);
}

static void run_case(wt_dtype dt, int64_t M, int64_t K, int64_t N, const fuse *f, int64_t pad, bool split3,
                     bool transposed)
{
    run_case_dt((dtypes){dt, dt, dt, dt, false}, M, K, N, f, pad, split3, transposed);
}

static void test_cases(void)
{
    const fuse all = {true, true, true, true, true, false}, norm_only = {true, true, false, false, false, false};
    const fuse norm_no_w = {true, false, true, false, true, false}, res_only = {false, false, false, false, true, false};
    const fuse swiglu_only = {false, false, false, true, false, false}, none = {false, false, false, false, false, false};
    const fuse mlp = {true, true, false, true, false, false}; /* a Llama MLP's first half */
    const wt_dtype dts[2] = {WT_F32, WT_F16};
    for (int d = 0; d < 2; d++) {
        const wt_dtype dt = dts[d];
        /* The vector path (k, offsets and row stride multiples of 8) ... */
        run_case(dt, 1, 256, 96, &all, 0, false, false);
        run_case(dt, 1, 512, 130, &mlp, 0, false, false);
        run_case(dt, 1, 64, 48, &norm_only, 0, false, false);
        run_case(dt, 4, 128, 40, &res_only, 0, true, false);
        run_case(dt, 16, 64, 34, &all, 0, false, false);
        /* rows long enough for the vector path's unrolled loop (64 threads
         * an output, steps of 8 halves or 4 floats) and its tail */
        run_case(dt, 2, 2056, 24, &all, 0, false, false);
        run_case(dt, 1, 4096, 16, &mlp, 8, false, false);
        /* ... an odd k, an odd out width, an odd row stride (element reads) */
        run_case(dt, 1, 37, 21, &norm_no_w, 0, false, false);
        run_case(dt, 3, 45, 34, &all, 0, false, false);
        run_case(dt, 2, 64, 26, &swiglu_only, 5, false, false);
        run_case(dt, 1, 40, 7, &none, 3, false, false);
        run_case(dt, 2, 48, 32, &all, 8, true, false);
        /* past the fused kernels' rows, and a weight whose rows do not run
         * along k: the composition */
        run_case(dt, 20, 32, 18, &all, 0, false, false);
        run_case(dt, 1, 24, 10, &all, 0, false, true);
        /* GELU of the input (a transformer MLP's fc2): f32 without norm
         * and swiglu is one product of any number of rows, the residual
         * in its stores where the backend has that (aligned and odd
         * extents, a w^T view, a row-strided weight); else the parts. */
        const fuse gelu_res = {false, false, true, false, true, true}, gelu_only = {false, false, false, false, false, true};
        const fuse norm_gelu = {true, true, true, false, true, true};
        run_case(dt, 40, 24, 20, &gelu_res, 0, true, false);
        run_case(dt, 37, 13, 7, &gelu_res, 0, false, false);
        run_case(dt, 30, 16, 12, &gelu_res, 0, true, true);
        run_case(dt, 22, 20, 9, &gelu_res, 4, false, false);
        run_case(dt, 4, 32, 16, &gelu_only, 0, false, false);
        run_case(dt, 24, 32, 16, &res_only, 0, true, false);
        run_case(dt, 20, 24, 16, &norm_gelu, 0, false, false);
    }
    /* WT_MATMUL_EPILOGUE=0: the residual by wt_add after the product. */
    const fuse gelu_res_off = {false, false, true, false, true, true};
    setenv("WT_MATMUL_EPILOGUE", "0", 1);
    run_case(WT_F32, 40, 24, 20, &gelu_res_off, 0, true, false);
    unsetenv("WT_MATMUL_EPILOGUE");
    /* Mixed dtypes: an f32 x against f16 weights into an f16 residual (a
     * decode step's attention output), f16 in and an f32 result (its q, k,
     * v projection), f32 biases, an f16 x against f32 weights. */
    const dtypes o_proj = {WT_F32, WT_F16, WT_F32, WT_F16, false}, qkv = {WT_F16, WT_F16, WT_F16, WT_F16, true};
    const dtypes x16_w32 = {WT_F16, WT_F32, WT_F16, WT_F32, false}, b32 = {WT_F16, WT_F16, WT_F32, WT_F32, false};
    const fuse res_bias = {false, false, true, false, true, false};
    run_case_dt(o_proj, 1, 256, 64, &res_bias, 0, false, false);
    run_case_dt(o_proj, 1, 2048, 32, &res_bias, 0, false, false);
    run_case_dt(o_proj, 2, 40, 24, &res_bias, 0, false, false);
    run_case_dt(o_proj, 1, 36, 17, &res_bias, 3, false, false);
    run_case_dt(qkv, 1, 128, 40, &norm_only, 0, false, false);
    run_case_dt(qkv, 3, 64, 34, &all, 0, false, false);
    run_case_dt(x16_w32, 1, 64, 20, &all, 0, false, false);
    run_case_dt(b32, 2, 64, 36, &all, 0, false, false);
    run_case_dt(o_proj, 20, 32, 18, &res_bias, 0, false, false);
}

/* into: the result written into a view at element offset off of a larger
 * tensor of the result's dtype, equal bit for bit to the result the same
 * call makes on its own, the other elements untouched, *out the view. M =
 * 1 takes the fused kernel, M = 20 the composition. An f16 result at an
 * odd offset is not a whole word: WebGPU's kernel declines it and the
 * composition, copied in, rounds after each op (within f16 steps of the
 * fused kernel's one rounding), so there the check is to 2e-3. */
static void into_case(wt_dtype dt, int64_t M, int64_t off)
{
    const bool exact = !(dt == WT_F16 && off % 2 == 1);
    const int64_t K = 64, N = 24, n_out = N / 2, total = off + M * n_out + 5;
    const int64_t xs[2] = {M, K}, ws[2] = {N, K}, rs[2] = {M, n_out};
    float *x = malloc(sizeof *x * (size_t)(M * K)), *w = malloc(sizeof *w * (size_t)(N * K));
    float *r = malloc(sizeof *r * (size_t)(M * n_out)), *g = malloc(sizeof *g * (size_t)K);
    float *sent = malloc(sizeof *sent * (size_t)total);
    fill(x, M * K, 1.0f, dt);
    fill(w, N * K, 0.2f, dt);
    fill(r, M * n_out, 1.0f, dt);
    fill(g, K, 1.0f, dt);
    for (int64_t i = 0; i < total; i++) sent[i] = 3.5f;
    wt_tensor *tx = make(dt, 2, xs, x), *tw = make(dt, 2, ws, w), *tr = make(dt, 2, rs, r), *tg = make(dt, 1, &K, g);
    wt_tensor *big = make(dt, 1, &total, sent), *part = NULL, *view = NULL, *alone = NULL, *got = NULL;
    char what[96];
    snprintf(what, sizeof what, "into: %s M=%lld at %lld", wt_dtype_name(dt), (long long)M, (long long)off);
    wt_linear_fused_options o;
    wt_linear_fused_options_init(&o);
    o.rms_norm = true;
    o.norm_weight = tg;
    o.swiglu = true;
    o.residual = tr;
    if (!tx || !tw || !tr || !tg || !big || wt_slice(big, 0, off, off + M * n_out, 1, &part) != WT_OK ||
        wt_reshape(part, 2, rs, &view) != WT_OK || wt_linear_fused(tx, tw, NULL, &o, &alone) != WT_OK) {
        CHECK(false, "%s: setup: %s", what, wt_last_error());
    } else {
        o.into = view;
        const wt_status st = wt_linear_fused(tx, tw, NULL, &o, &got);
        CHECK(st == WT_OK && got == view, "%s: returns the view itself (%s)", what, st ? wt_last_error() : "");
        float *a = read_f32(alone), *all = read_f32(big);
        int differ = 0, touched = 0;
        for (int64_t i = 0; a && all && i < total; i++) {
            if (i < off || i >= off + M * n_out) touched += all[i] != 3.5f;
            else if (exact) differ += memcmp(&all[i], &a[i - off], sizeof *a) != 0;
            else differ += !(fabs(all[i] - a[i - off]) <= 2e-3 * fmax(1.0, fabs(a[i - off])));
        }
        CHECK(a && all && differ == 0 && touched == 0,
              "%s: %d results differ from the call's own, %d elements outside the view written", what, differ,
              touched);
        free(a);
        free(all);
    }
    wt_tensor *ro[] = {tx, tw, tr, tg, big, part, view, alone, got};
    for (size_t i = 0; i < sizeof ro / sizeof ro[0]; i++) wt_tensor_release(ro[i]);
    free(x);
    free(w);
    free(r);
    free(g);
    free(sent);
}

static void test_errors(void)
{
    const int64_t xs[2] = {2, 8}, ws[2] = {6, 8}, ws_odd[2] = {5, 8}, gs_bad[1] = {7}, rs_bad[2] = {2, 5};
    wt_tensor *x = NULL, *w = NULL, *wo = NULL, *gb = NULL, *rb = NULL, *out = NULL;
    wt_tensor_zeros(g_ctx, WT_F32, 2, xs, &x);
    wt_tensor_zeros(g_ctx, WT_F32, 2, ws, &w);
    wt_tensor_zeros(g_ctx, WT_F32, 2, ws_odd, &wo);
    wt_tensor_zeros(g_ctx, WT_F32, 1, gs_bad, &gb);
    wt_tensor_zeros(g_ctx, WT_F32, 2, rs_bad, &rb);
    wt_linear_fused_options o;
    wt_linear_fused_options_init(&o);
    CHECK(o.struct_size == sizeof o && o.norm_eps == 1e-6 && !o.rms_norm && !o.swiglu && !o.residual,
          "options defaults");
    o.swiglu = true;
    CHECK(wt_linear_fused(x, wo, NULL, &o, &out) == WT_ERR_SHAPE && !out, "swiglu with an odd out_features");
    wt_linear_fused_options_init(&o);
    o.norm_weight = gb;
    CHECK(wt_linear_fused(x, w, NULL, &o, &out) == WT_ERR_INVALID_ARGUMENT && !out, "norm_weight without rms_norm");
    o.rms_norm = true;
    CHECK(wt_linear_fused(x, w, NULL, &o, &out) == WT_ERR_SHAPE && !out, "norm_weight of the wrong length");
    o.norm_weight = NULL;
    o.norm_eps = -1.0;
    CHECK(wt_linear_fused(x, w, NULL, &o, &out) == WT_ERR_INVALID_ARGUMENT && !out, "a negative eps");
    wt_linear_fused_options_init(&o);
    o.residual = rb;
    CHECK(wt_linear_fused(x, w, NULL, &o, &out) == WT_ERR_SHAPE && !out, "a residual of the wrong shape");
    o.residual = NULL;
    o.struct_size = 3;
    CHECK(wt_linear_fused(x, w, NULL, &o, &out) == WT_ERR_INVALID_ARGUMENT && !out, "an uninitialised options");
    CHECK(wt_linear_fused(w, x, NULL, NULL, &out) == WT_OK, "x [6, 8] @ [2, 8]^T");
    wt_tensor_release(out);
    out = NULL;
    const int64_t ws_k[2] = {6, 9};
    wt_tensor *wk = NULL;
    wt_tensor_zeros(g_ctx, WT_F32, 2, ws_k, &wk);
    CHECK(wt_linear_fused(x, wk, NULL, NULL, &out) == WT_ERR_SHAPE && !out, "in_features that do not match");
    wt_tensor_release(wk);
    /* into: its shape, dtype and layout, a storage shared with an operand,
     * and autograd recording an operand (x [2, 8] @ w [6, 8]^T: [2, 6]) */
    const int64_t s25[2] = {2, 5}, s26[2] = {2, 6}, s212[2] = {2, 12};
    wt_tensor *i25 = NULL, *i26h = NULL, *wide = NULL, *cols = NULL, *i26 = NULL;
    wt_tensor_zeros(g_ctx, WT_F32, 2, s25, &i25);
    wt_tensor_zeros(g_ctx, WT_F16, 2, s26, &i26h);
    wt_tensor_zeros(g_ctx, WT_F32, 2, s212, &wide);
    wt_slice(wide, 1, 0, 6, 1, &cols);
    wt_tensor_zeros(g_ctx, WT_F32, 2, s26, &i26);
    wt_linear_fused_options_init(&o);
    o.into = i25;
    CHECK(wt_linear_fused(x, w, NULL, &o, &out) == WT_ERR_SHAPE && !out, "into of the wrong shape");
    o.into = i26h;
    CHECK(wt_linear_fused(x, w, NULL, &o, &out) == WT_ERR_INVALID_ARGUMENT && !out, "an f16 into for an f32 result");
    o.into = cols;
    CHECK(wt_linear_fused(x, w, NULL, &o, &out) == WT_ERR_INVALID_ARGUMENT && !out, "into that is not contiguous");
    o.into = i26;
    o.residual = i26;
    CHECK(wt_linear_fused(x, w, NULL, &o, &out) == WT_ERR_INVALID_ARGUMENT && !out, "into that is the residual");
    o.residual = NULL;
    CHECK(wt_tensor_set_requires_grad(w, true) == WT_OK, "w requires grad");
    CHECK(wt_linear_fused(x, w, NULL, &o, &out) == WT_ERR_UNSUPPORTED && !out, "into while autograd records w");
    wt_tensor_set_requires_grad(w, false);
    const wt_status sti = wt_linear_fused(x, w, NULL, &o, &out);
    CHECK(sti == WT_OK && out == i26, "into [2, 6]: the tensor itself (%d %s, %p %p)", (int)sti,
          sti ? wt_last_error() : "", (void *)out, (void *)i26);
    wt_tensor_release(out);
    out = NULL;
    wt_tensor *ro[] = {i25, i26h, wide, cols, i26};
    for (size_t i = 0; i < sizeof ro / sizeof ro[0]; i++) wt_tensor_release(ro[i]);
    wt_tensor_release(x);
    wt_tensor_release(w);
    wt_tensor_release(wo);
    wt_tensor_release(gb);
    wt_tensor_release(rb);
}

int main(int argc, char **argv)
{
    test_run run;
    if (!test_begin(&run, "linear_fused", argc, argv)) return run.status;
    g_ctx = run.ctx;
    test_cases();
    into_case(WT_F32, 1, 4);
    into_case(WT_F32, 20, 3);
    into_case(WT_F16, 1, 8);
    into_case(WT_F16, 1, 3);
    test_errors();
    test_check_nothing_alive(g_ctx);
    return test_end(&run);
}
