/* The fused quantised linear against float64 of the definition and
 * against dequantise + wt_linear, and the 8-bit x GEMV. */
#define _POSIX_C_SOURCE 200809L
#include "quant_test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- linear */

/* y = x @ W^T + bias for random blocks, against float64 of the
 * definition and against dequantise + wt_linear. */
enum { X_PLAIN, X_TRANSPOSED, X_OFFSET, X_GRID };

/* The bound the 8-bit x allows also holds the exact f32 path, which the
 * kernels keep where they do not round. */
bool x8_knob_on(wt_quant_type t)
{
    const char *v = getenv("WT_QUANT_GEMV_X8");
    if (!v || strcmp(v, "auto") == 0) return t != WT_QUANT_Q6_K;
    return strcmp(v, "1") == 0 || strcmp(v, "2") == 0 || strcmp(v, "3") == 0;
}

/* Whether wt_linear_quant rounds x to 8-bit blocks here (the header's
 * contract: the CPU backend, any of the four types, one to four rows of
 * x, unless WT_CPU_QUANT_DOT=f32). */
static bool x_rounded(wt_quant_type t, int64_t m)
{
    const char *v = getenv("WT_CPU_QUANT_DOT");
    (void)t;
    return g_cpu && m <= 4 && !(v && strcmp(v, "f32") == 0);
}

/* How far rounding x to 8-bit blocks may move x_i . w_r: each x_j moves by
 * at most half its block's step max|x| / 127 (round to nearest; a block is
 * 32 elements for Q8_0 / Q4_0, the super-block of 256 for Q4_K / Q6_K), so
 * the dot by at most the sum over blocks of (sum of |w_j|) * max|x| / 254;
 * the integer products and their sums are exact, and the f32 work after
 * them is the f32 path's own rounding (the caller's 1e-5 of the
 * magnitude). The 1.001 covers x * (127 / max|x|) being an f32 product, a
 * few ulps from the exact quotient. */
static double x_rounding_bound(const float *xi, const uint8_t *blocks, wt_quant_type t, int64_t k, int64_t r)
{
    double bound = 0.0;
    const int64_t be = block_elems(t);
    for (int64_t b = 0; b < k / be; b++) {
        double amax = 0.0, wsum = 0.0;
        for (int64_t j = be * b; j < be * b + be; j++) {
            amax = fmax(amax, fabs((double)xi[j]));
            wsum += fabs(ref_at(t, blocks, k, r, j, NULL));
        }
        bound += wsum * amax / 254.0;
    }
    return bound * 1.001;
}

/* x_form: X_TRANSPOSED hands x over as a transposed view (copied to
 * contiguous rows inside), X_OFFSET as contiguous rows starting at element
 * 1 of its storage (not at a whole vec4); X_GRID as X_PLAIN with values
 * i / 64 (|i| <= 127) and +-127/64 in every block of 32: rounding x to
 * 8 bits per block (WT_QUANT_GEMV_X8) leaves them exact, so that path
 * must meet the f32 kernels' tolerance. */
static void check_linear(wt_quant_type t, int64_t m, int64_t n, int64_t k, bool with_bias, int x_form, bool f16_x)
{
    const bool transposed_x = x_form == X_TRANSPOSED;
    char what[128];
    snprintf(what, sizeof what, "%s linear M=%lld N=%lld K=%lld%s%s%s", quant_type_name(t), (long long)m, (long long)n,
             (long long)k, with_bias ? " +bias" : "", transposed_x ? " (x a transposed view)" : "",
             x_form == X_OFFSET ? " (x at offset 1)" : x_form == X_GRID ? " (x on an 8-bit grid)" : f16_x ? " (f16 x)" : "");
    const size_t bytes = (size_t)(n * k / block_elems(t) * block_bytes(t));
    uint8_t *blocks = malloc(bytes);
    float *x = malloc(sizeof(float) * (size_t)(m * k)), *b = malloc(sizeof(float) * (size_t)n);
    if (!blocks || !x || !b) {
        CHECK(false, "%s: host memory", what);
        free(blocks), free(x), free(b);
        return;
    }
    random_blocks(t, n, k, blocks);
    for (int64_t i = 0; i < m * k; i++) x[i] = test_rng_uniform(-1.0f, 1.0f);
    if (x_form == X_GRID)
        for (int64_t i = 0; i < m * k; i++)
            x[i] = i % 32 == 7 ? (x[i] < 0 ? -127.0f : 127.0f) / 64.0f : (float)lrintf(x[i] * 127.0f) / 64.0f;
    for (int64_t i = 0; i < n; i++) b[i] = test_rng_uniform(-1.0f, 1.0f);
    if (f16_x)
        for (int64_t i = 0; i < m * k; i++) x[i] = (float)test_half_to_double(test_double_to_half(x[i]));
    wt_tensor *w = NULL, *xt = NULL, *xv = NULL, *bt = NULL, *y = NULL, *y32 = NULL, *wd = NULL, *yref = NULL;
    const int64_t xs[2] = {m, k}, xts[2] = {k, m};
    wt_status st = wt_quant_from_blocks(g_ctx, t, n, k, blocks, bytes, &w);
    if (st == WT_OK && transposed_x) {
        /* x stored as x^T [K, M], handed over as a transposed view */
        float *xtr = malloc(sizeof(float) * (size_t)(m * k));
        for (int64_t i = 0; xtr && i < m; i++)
            for (int64_t j = 0; j < k; j++) xtr[j * m + i] = x[i * k + j];
        st = xtr ? wt_tensor_from_data(g_ctx, WT_F32, 2, xts, xtr, &xt) : WT_ERR_OUT_OF_MEMORY;
        free(xtr);
        if (st == WT_OK) st = wt_transpose(xt, 0, 1, &xv);
    } else if (st == WT_OK && x_form == X_OFFSET) {
        /* x behind one leading element: a slice of a flat tensor, reshaped */
        float *xo = malloc(sizeof(float) * (size_t)(m * k + 1));
        const int64_t flat = m * k + 1;
        wt_tensor *sl = NULL;
        if (xo) {
            xo[0] = 1e30f;
            memcpy(xo + 1, x, sizeof(float) * (size_t)(m * k));
        }
        st = xo ? wt_tensor_from_data(g_ctx, WT_F32, 1, &flat, xo, &xt) : WT_ERR_OUT_OF_MEMORY;
        free(xo);
        if (st == WT_OK) st = wt_slice(xt, 0, 1, flat, 1, &sl);
        if (st == WT_OK) st = wt_reshape(sl, 2, xs, &xv);
        wt_tensor_release(sl);
    } else if (st == WT_OK) {
        st = wt_tensor_from_data(g_ctx, WT_F32, 2, xs, x, &xt);
        if (st == WT_OK) st = f16_x ? wt_cast(xt, WT_F16, &xv) : wt_contiguous(xt, &xv);
    }
    const int64_t nb = n;
    if (st == WT_OK && with_bias) st = wt_tensor_from_data(g_ctx, WT_F32, 1, &nb, b, &bt);
    if (st == WT_OK) st = wt_linear_quant(xv, w, t, bt, &y);
    CHECK(st == WT_OK, "%s: %s", what, wt_last_error());
    if (st != WT_OK) goto done;
    /* f16 only when every given input is (the library's f16 rule) */
    CHECK(wt_tensor_dtype(y) == (f16_x && !with_bias ? WT_F16 : WT_F32) && wt_tensor_shape(y)[0] == m && wt_tensor_shape(y)[1] == n,
          "%s: result dtype and shape", what);
    if (wt_cast(y, WT_F32, &y32) != WT_OK) goto done;
    /* dequantise + the library's linear (a dense path) */
    if ((st = wt_dequantize(w, t, WT_F32, &wd)) == WT_OK) {
        wt_tensor *x32 = NULL;
        st = wt_cast(xv, WT_F32, &x32);
        if (st == WT_OK) st = wt_linear(x32, wd, bt, &yref);
        wt_tensor_release(x32);
    }
    float *got = read_f32(y32), *dense = st == WT_OK ? read_f32(yref) : NULL;
    int bad = 0, bad_dense = 0;
    double worst = 0.0;
    /* WT_QUANT_GEMV_X8=1 or 2: the GEMV (M <= 4) rounds x to 8 bits per block
     * of 32, each value by at most d_x / 2 (d_x = the block's max |x| /
     * 127), and that error meets each element's quant term: |w| (Q8_0,
     * Q6_K), nibble * |d| (Q4_0: at most |w| + 8 |d|), d * scale * q (Q4_K:
     * at most the sum of its terms' magnitudes). */
    const bool x8 = x8_knob_on(t) && m <= 4 && x_form != X_GRID;
    for (int64_t i = 0; got && dense && i < m; i++)
        for (int64_t r = 0; r < n; r++) {
            double want = with_bias ? (double)b[r] : 0.0, mag = fabs(want), x8_err = 0.0, d_x = 0.0;
            for (int64_t j = 0; j < k; j++) {
                double wm = 0.0;
                const double wv = ref_at(t, blocks, k, r, j, &wm);
                want += (double)x[i * k + j] * wv;
                mag += fabs((double)x[i * k + j]) * wm;
                if (x8 && j % 32 == 0) {
                    double amax = 0.0;
                    for (int64_t e = j; e < j + 32; e++) amax = fmax(amax, fabs((double)x[i * k + e]));
                    d_x = amax / 127.0;
                }
                if (x8) {
                    double term = wm;
                    if (t == WT_QUANT_Q4_0)
                        term += 8.0 * fabs(half_field(blocks + (r * (k / 32) + j / 32) * Q4_BYTES));
                    x8_err += term * d_x / 2.0;
                }
            }
            /* f32 sums of k terms: well inside k * 2^-24 of the magnitude;
             * an f16 result adds its own rounding. */
            const bool f16_y = f16_x && !with_bias;
            const double tol = mag * (f16_y ? 2e-3 : 1e-5) + x8_err * 1.001 + 1e-30 +
                               (x_rounded(t, m) ? x_rounding_bound(x + i * k, blocks, t, k, r) : 0.0);
            const double g = got[i * n + r];
            /* an f16 result past f16's range is an infinity of its sign */
            const bool overflow = f16_y && isinf(g) && (g > 0) == (want > 0) && fabs(want) + tol >= 65520.0;
            const double e = overflow ? 0.0 : fabs(g - want);
            if (e / tol > worst) worst = e / tol;
            if (e > tol && bad++ < 3)
                printf("  %s [%lld,%lld] = %.9g, want %.9g\n", what, (long long)i, (long long)r, g, want);
            const double dd = f16_y ? test_half_to_double(test_double_to_half(dense[i * n + r])) : dense[i * n + r];
            if (fabs(g - dd) > tol) bad_dense++;
        }
    CHECK(got && dense && bad == 0, "%s: against float64 (%d outside; worst %.2f of the tolerance)", what, bad, worst);
    CHECK(got && dense && bad_dense == 0, "%s: against dequantise + wt_linear (%d outside)", what, bad_dense);
    free(got);
    free(dense);
done:
    wt_tensor_release(w);
    wt_tensor_release(xt);
    wt_tensor_release(xv);
    wt_tensor_release(bt);
    wt_tensor_release(y);
    wt_tensor_release(y32);
    wt_tensor_release(wd);
    wt_tensor_release(yref);
    free(blocks);
    free(x);
    free(b);
}

void test_linear(void)
{
    for (int ti = 0; ti < 2; ti++) {
        const wt_quant_type t = ti ? WT_QUANT_Q4_0 : WT_QUANT_Q8_0;
        /* M = 1 (decode, GEMV), 3 (GEMV per row), 20 and 33 (tiled, with
         * edge tiles); N not a multiple of 16; K with and without row
         * padding (K = 96: Q8_0 rows of 102 bytes, Q4_0 of 54). */
        check_linear(t, 1, 37, 96, true, false, false);
        check_linear(t, 1, 300, 256, false, false, false);
        check_linear(t, 3, 37, 64, false, false, false);
        check_linear(t, 20, 19, 96, true, false, false);
        check_linear(t, 33, 40, 160, true, false, false);
        check_linear(t, 5, 17, 64, true, true, false);
        check_linear(t, 2, 9, 64, true, false, true);
        check_linear(t, 24, 9, 32, false, false, true);
        check_linear(t, 1, 11, 96, true, X_OFFSET, false);
        check_linear(t, 3, 5, 64, false, X_OFFSET, false);
        /* four rows, N odd, K of an odd number of blocks (the last unit
         * of two blocks half full), f32 and f16 x */
        check_linear(t, 4, 45, 1056, true, X_PLAIN, false);
        check_linear(t, 4, 23, 224, false, X_PLAIN, true);
        check_linear(t, 2, 29, 160, true, X_GRID, false);
        /* the CPU's integer dot takes sixteen blocks at a time: K = 672
         * is one such group and five blocks more, 1024 two groups */
        check_linear(t, 1, 40, 672, true, X_PLAIN, false);
        check_linear(t, 4, 21, 1024, false, X_PLAIN, false);
        /* K = 4160 (65 pairs of blocks, 260 half blocks): past one pass of
         * WT_QUANT_GEMV_X8=3's lanes over a row and of its threads over x */
        check_linear(t, 2, 19, 4160, true, X_PLAIN, false);
        /* K = 2304: 36 pairs of blocks, more than the lanes of a row
         * several times over when they are forced to 4 */
        check_linear(t, 1, 37, 2304, true, X_PLAIN, false);
    }
    /* The super-block formats: M = 1 and 4 (the row GEMV), 2 at an offset
     * (the GEMM takes it), 17 (tiled); K = 256 (one super-block), 768. */
    for (int ti = 2; ti < 4; ti++) {
        const wt_quant_type t = all_types[ti];
        check_linear(t, 1, 37, 256, true, X_PLAIN, false);
        check_linear(t, 1, 50, 768, false, X_PLAIN, false);
        check_linear(t, 4, 9, 512, false, X_PLAIN, false);
        check_linear(t, 2, 9, 256, true, X_OFFSET, false);
        check_linear(t, 17, 21, 512, true, X_PLAIN, false);
        check_linear(t, 3, 7, 256, false, X_TRANSPOSED, false);
        check_linear(t, 1, 6, 256, false, X_PLAIN, true);
        check_linear(t, 4, 33, 1280, true, X_PLAIN, false);
        check_linear(t, 3, 13, 512, false, X_PLAIN, true);
        check_linear(t, 2, 29, 512, true, X_GRID, false);
        /* enough rows for the product to run on several threads (N * K
         * past the parallel threshold), N odd */
        check_linear(t, 1, 131, 768, true, X_PLAIN, false);
        check_linear(t, 3, 67, 1024, false, X_PLAIN, false);
    }
    /* Every scale (and Q4_K's every min) subnormal: the GEMV kernels
     * convert the f16 fields themselves, subnormals included. */
    g_subnormal_scales = true;
    for (int ti = 0; ti < 4; ti++) {
        const wt_quant_type t = all_types[ti];
        check_linear(t, 1, 37, 512, true, X_PLAIN, false);
        check_linear(t, 4, 9, 256, false, X_PLAIN, false);
    }
    g_subnormal_scales = false;
    /* x [..., K] with leading axes: [2, 3, K] -> [2, 3, N]. */
    uint8_t blocks[4 * Q8_BYTES];
    random_blocks(WT_QUANT_Q8_0, 4, 32, blocks);
    wt_tensor *w = NULL, *x = NULL, *y = NULL;
    const int64_t s3[3] = {2, 3, 32};
    wt_status st = wt_quant_from_blocks(g_ctx, WT_QUANT_Q8_0, 4, 32, blocks, sizeof blocks, &w);
    if (st == WT_OK) st = wt_tensor_full(g_ctx, WT_F32, 3, s3, 0.5, &x);
    if (st == WT_OK) st = wt_linear_quant(x, w, WT_QUANT_Q8_0, NULL, &y);
    CHECK(st == WT_OK && wt_tensor_ndim(y) == 3 && wt_tensor_shape(y)[0] == 2 && wt_tensor_shape(y)[1] == 3 &&
              wt_tensor_shape(y)[2] == 4,
          "linear_quant of x [2, 3, 32]: y [2, 3, 4] (%s)", wt_last_error());
    if (st == WT_OK) {
        float *v = read_f32(y);
        int bad = 0;
        for (int i = 0; v && i < 24; i++) {
            double want = 0.0;
            for (int j = 0; j < 32; j++) want += 0.5 * ref_elem(WT_QUANT_Q8_0, blocks + (i % 4) * Q8_BYTES, j);
            if (fabs(v[i] - want) > 1e-4 * (1.0 + fabs(want))) bad++;
        }
        CHECK(v && bad == 0, "linear_quant of x [2, 3, 32]: values (%d wrong)", bad);
        free(v);
    }
    wt_tensor_release(w);
    wt_tensor_release(x);
    wt_tensor_release(y);
}

/* y of x [m, k] (f32) and random blocks through wt_linear_quant; NULL on
 * an error (reported). */
static float *linear_of(wt_quant_type t, int64_t m, int64_t n, int64_t k, const float *x, const uint8_t *blocks)
{
    const size_t bytes = (size_t)(n * k / block_elems(t) * block_bytes(t));
    const int64_t xs[2] = {m, k};
    wt_tensor *w = NULL, *xt = NULL, *y = NULL;
    wt_status st = wt_quant_from_blocks(g_ctx, t, n, k, blocks, bytes, &w);
    if (st == WT_OK) st = wt_tensor_from_data(g_ctx, WT_F32, 2, xs, x, &xt);
    if (st == WT_OK) st = wt_linear_quant(xt, w, t, NULL, &y);
    CHECK(st == WT_OK, "%s linear M=%lld K=%lld: %s", quant_type_name(t), (long long)m, (long long)k, wt_last_error());
    float *v = st == WT_OK ? read_f32(y) : NULL;
    wt_tensor_release(w);
    wt_tensor_release(xt);
    wt_tensor_release(y);
    return v;
}

/* The CPU's integer dots (x rounded to 8-bit blocks of 32 for Q8_0 /
 * Q4_0, of 256 for Q4_K / Q6_K):
 * - x whose blocks are already 8-bit blocks (a power-of-two step, one
 *   element at +-127 steps): the rounding moves nothing, so y is the
 *   float64 definition within the f32 path's 1e-5 of the magnitude, far
 *   inside the rounding bound that check_linear allows; a wrong step,
 *   offset or sign in any kernel shows here;
 * - WT_CPU_QUANT_DOT=f32: the exact path, check_linear's f32 tolerance;
 * - an inf or a NaN in x, or a block of x below 127 * 2^-100: the f32
 *   path's result bit for bit (8-bit blocks cannot carry them). */
void test_linear_x8(void)
{
    /* Q8_0 / Q4_0: 21 blocks, a group of sixteen and five; Q4_K / Q6_K:
     * three super-blocks (K = 768), N odd */
    enum { N = 23, KK = 768 };
    static uint8_t blocks[N * (672 / 32) * Q8_BYTES]; /* the largest of the four: Q8_0's 16,422 bytes */
    static float x[3 * KK];
    for (int ti = 0; ti < 4; ti++) {
        const wt_quant_type t = all_types[ti];
        const int be = block_elems(t), K = be == 256 ? KK : 672;
        random_blocks(t, N, K, blocks);
        for (int b = 0; b < 3 * K / be; b++) {
            const float step = ldexpf(1.0f, -(int)(test_rng_next() % 8));
            for (int j = 0; j < be; j++) x[be * b + j] = step * (float)((int)(test_rng_next() % 255) - 127);
            /* one element at +-127 steps in every 32: an 8-bit block per
             * 32 (WebGPU's WT_QUANT_GEMV_X8) as well as per 256 */
            for (int j = 0; j < be; j += 32)
                x[be * b + j + (int)(test_rng_next() % 32)] = ((b + j / 32) & 1 ? -127.0f : 127.0f) * step;
        }
        for (int64_t m = 1; m <= 3; m += 2) {
            float *y = linear_of(t, m, N, K, x, blocks);
            int bad = 0;
            for (int64_t i = 0; y && i < m; i++)
                for (int64_t r = 0; r < N; r++) {
                    double want = 0.0, mag = 0.0;
                    for (int64_t j = 0; j < K; j++) {
                        /* Q4_K: the magnitude of d * sc * q and dmin * m
                         * apart, which the integer dot sums separately */
                        double wm = 0.0;
                        const double wv = ref_at(t, blocks, K, r, j, &wm);
                        want += (double)x[i * K + j] * wv;
                        mag += fabs((double)x[i * K + j]) * wm;
                    }
                    if (fabs(y[i * N + r] - want) > 1e-5 * mag + 1e-30) bad++;
                }
            CHECK(y && bad == 0, "%s linear M=%lld, x already in 8-bit blocks: the definition within f32 rounding (%d outside)",
                  quant_type_name(t), (long long)m, bad);
            free(y);
        }
    }
    /* the exact path, where the knob asks for it (a call knob) */
    const char *was = getenv("WT_CPU_QUANT_DOT");
    char saved[32] = "";
    if (was) snprintf(saved, sizeof saved, "%s", was);
    setenv("WT_CPU_QUANT_DOT", "f32", 1);
    for (int ti = 0; ti < 2; ti++) {
        const wt_quant_type t = ti ? WT_QUANT_Q4_0 : WT_QUANT_Q8_0;
        check_linear(t, 1, 37, 96, true, false, false);
        check_linear(t, 3, 37, 64, false, false, false);
        check_linear(t, 2, 9, 64, true, false, true);
    }
    for (int ti = 2; ti < 4; ti++) {
        check_linear(all_types[ti], 1, 37, 256, true, X_PLAIN, false);
        check_linear(all_types[ti], 3, 13, 512, false, X_PLAIN, false);
    }
    /* an inf and a NaN, and (tiny) a block of x whose max is below
     * 127 * 2^-100: the same bits with the knob as without */
    for (int c = 0; c < 8; c++) {
        const wt_quant_type t = all_types[c % 4];
        const bool tiny = c >= 4;
        const int K = block_elems(t) == 256 ? KK : 672;
        random_blocks(t, N, K, blocks);
        for (int j = 0; j < 3 * K; j++) x[j] = test_rng_uniform(-1.0f, 1.0f);
        if (tiny) {
            for (int j = K; j < K + block_elems(t); j++) x[j] *= 1e-29f;
        } else {
            x[37] = INFINITY;
            x[2 * K + 300] = NAN;
        }
        setenv("WT_CPU_QUANT_DOT", "f32", 1);
        float *exact = linear_of(t, 3, N, K, x, blocks);
        if (was)
            setenv("WT_CPU_QUANT_DOT", saved, 1);
        else
            unsetenv("WT_CPU_QUANT_DOT");
        float *got = linear_of(t, 3, N, K, x, blocks);
        int nonfinite = 0;
        for (int j = 0; got && j < 3 * N; j++) nonfinite += !isfinite(got[j]);
        /* WebGPU's opt-in 8-bit x (WT_QUANT_GEMV_X8) promises no fallback
         * for non-finite x: only that the rows holding them are not
         * finite. */
        const bool gpu_x8 = !g_cpu && x8_knob_on(t);
        if (tiny) {
            if (!gpu_x8)
                CHECK(got && exact && memcmp(got, exact, sizeof(float) * 3 * N) == 0 && nonfinite == 0,
                      "%s linear with a block of x near 1e-29: the f32 path's bits", quant_type_name(t));
        } else if (gpu_x8) {
            CHECK(got && nonfinite >= 2 * N, "%s linear with an inf and a NaN in x, 8-bit x: %d of %d results not finite",
                  quant_type_name(t), nonfinite, 3 * N);
        } else
        CHECK(got && exact && memcmp(got, exact, sizeof(float) * 3 * N) == 0 && nonfinite >= 2 * N,
              "%s linear with an inf and a NaN in x: the f32 path's bits (%d of %d results not finite)", quant_type_name(t),
              nonfinite, 3 * N);
        free(exact);
        free(got);
    }
}
