/* norm_range <cpu|vulkan|gles>: layernorm and rmsnorm over rows whose
 * values reach the top of the f32 range. The normalised values of such a
 * row are ordinary numbers, and the float64 reference gets them; a kernel
 * that sums squares (or x - mean) in f32 overflows once an |x| passes
 * 2^64 (2^127 for x - mean) and gives 0 or NaN. Rows in every launch shape
 * of the WebGPU kernel: short rows (registers), long rows (loops), rows of
 * a multiple of 4 (vec4 units) and strided views (single elements). */
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static wt_context *g_ctx;

/* Row j of the pattern at scale s: big values of both signs with small
 * ones between them, so that mean, spread and maximum all matter. */
static float pattern(int64_t j, int64_t row, float s)
{
    static const float base[7] = {1.0f, -0.75f, 0.5f, 0.0f, -1.0f, 0.25f, 0.875f};
    const float v = base[(j + row) % 7];
    return (j % 5 == 3) ? v : v * s; /* every fifth element stays small */
}

/* float64 layernorm/rmsnorm of one row, with weight w and bias b. */
static void reference(bool layer, const float *x, int64_t C, float eps, const float *w,
                      const float *b, double *out)
{
    double mean = 0.0, ss = 0.0;
    if (layer) {
        for (int64_t j = 0; j < C; j++) mean += x[j];
        mean /= (double)C;
    }
    for (int64_t j = 0; j < C; j++) ss += (x[j] - mean) * (x[j] - mean);
    const double rstd = 1.0 / sqrt(ss / (double)C + eps);
    for (int64_t j = 0; j < C; j++) {
        double y = (x[j] - mean) * rstd * (w ? w[j] : 1.0);
        out[j] = y + (b ? b[j] : 0.0);
    }
}

/* One case: R rows of C at scale s (a constant row when constant is
 * set); strided takes the rows as every second column of a [R, 2C] tensor. */
static void run_case(bool layer, int64_t R, int64_t C, float s, bool constant, bool strided,
                     bool affine, float eps)
{
    const int64_t W = strided ? 2 * C : C;
    float *host = malloc(sizeof(float) * (size_t)(R * W));
    float *row = malloc(sizeof(float) * (size_t)C);
    float *w = malloc(sizeof(float) * (size_t)C), *b = malloc(sizeof(float) * (size_t)C);
    double *want = malloc(sizeof(double) * (size_t)C);
    for (int64_t r = 0; r < R; r++)
        for (int64_t j = 0; j < W; j++) host[r * W + j] = constant ? s : pattern(j, r, s);
    for (int64_t j = 0; j < C; j++) {
        w[j] = 0.5f + (float)(j % 3);
        b[j] = (float)(j % 4) - 1.5f;
    }
    char label[160];
    snprintf(label, sizeof label, "%s R=%lld C=%lld scale %g%s%s%s eps %g",
             layer ? "layernorm" : "rmsnorm", (long long)R, (long long)C, (double)s,
             constant ? " constant" : "", strided ? " strided" : "", affine ? " affine" : "",
             (double)eps);

    wt_tensor *x = NULL, *xv = NULL, *wt = NULL, *bt = NULL, *y = NULL;
    const int64_t shape[2] = {R, W}, cshape[1] = {C};
    wt_status st = wt_tensor_from_data(g_ctx, WT_F32, 2, shape, host, &x);
    if (st == WT_OK && strided) st = wt_slice(x, 1, 1, W, 2, &xv);
    if (st == WT_OK && affine) st = wt_tensor_from_data(g_ctx, WT_F32, 1, cshape, w, &wt);
    if (st == WT_OK && affine && layer) st = wt_tensor_from_data(g_ctx, WT_F32, 1, cshape, b, &bt);
    const wt_tensor *in = strided ? xv : x;
    if (st == WT_OK)
        st = layer ? wt_layernorm(in, wt, bt, eps, &y) : wt_rmsnorm(in, wt, eps, &y);
    float *got = NULL;
    char err[256] = "";
    if (st == WT_OK) got = test_read_guarded(y, err, sizeof err);
    if (CHECK(st == WT_OK && got, "%s: %s %s", label, wt_status_string(st),
              st == WT_OK ? err : wt_last_error())) {
        int bad = 0;
        for (int64_t r = 0; r < R && bad < 3; r++) {
            for (int64_t j = 0; j < C; j++) row[j] = host[r * W + (strided ? 2 * j + 1 : j)];
            reference(layer, row, C, eps, affine ? w : NULL, affine && layer ? b : NULL, want);
            for (int64_t j = 0; j < C && bad < 3; j++) {
                const double g = got[r * C + j];
                if (!(fabs(g - want[j]) <= 1e-4 * (1.0 + fabs(want[j])))) {
                    bad++;
                    CHECK(false, "%s: row %lld element %lld: got %.9g, want %.9g", label,
                          (long long)r, (long long)j, g, want[j]);
                }
            }
        }
        if (bad == 0) CHECK(true, "%s", label);
    }
    free(got);
    wt_tensor_release(y);
    wt_tensor_release(bt);
    wt_tensor_release(wt);
    wt_tensor_release(xv);
    wt_tensor_release(x);
    free(want);
    free(b);
    free(w);
    free(row);
    free(host);
}

int main(int argc, char **argv)
{
    test_run run;
    if (!test_begin(&run, "norm_range", argc, argv)) return run.status;
    g_ctx = run.ctx;

    /* 2^64 and 2^100 pass the f32 square; 3e38 also the f32 x - mean; 1
     * checks the ordinary path; 1e-30 the small end (squares underflow). */
    const float scales[] = {1.0f, 1.9e19f, 1e30f, 3e38f, 1e-30f};
    /* C: 7 and 12 short rows (single and vec4 units), 8197 and 8200 long
     * rows (the loop kernel: more than 8192 floats a row). */
    const int64_t cols[] = {7, 12, 8197, 8200};
    for (int layer = 0; layer < 2; layer++)
        for (size_t si = 0; si < sizeof scales / sizeof scales[0]; si++)
            for (size_t ci = 0; ci < sizeof cols / sizeof cols[0]; ci++) {
                const int64_t C = cols[ci], R = C > 100 ? 2 : 5;
                run_case(layer, R, C, scales[si], false, false, ci % 2 == 0, 1e-5f);
                if (ci == 1) run_case(layer, R, C, scales[si], false, true, true, 1e-5f);
            }
    /* Constant rows: zero deviations exactly (layernorm gives the bias),
     * eps too small to matter once the row is scaled. */
    const float constants[] = {1e30f, -3e38f, 70000.0f};
    for (size_t k = 0; k < sizeof constants / sizeof constants[0]; k++) {
        run_case(true, 3, 7, constants[k], true, false, true, 1e-5f);
        run_case(true, 1, 8200, constants[k], true, false, true, 1e-5f);
        run_case(false, 3, 12, constants[k], true, false, true, 0.0f);
    }
    /* eps 0 on a big row: no eps to hide a lost variance. */
    run_case(true, 2, 9, 1e30f, false, false, false, 0.0f);
    run_case(false, 2, 9, 1e30f, false, false, false, 0.0f);
    /* eps 0 on tiny rows: the squares underflow f32 (found by fuzz_diff:
     * a row [-1.74e-30, 0] normalised to inf on WebGPU). */
    const int64_t tiny_cols[] = {2, 9, 8197};
    for (size_t ci = 0; ci < sizeof tiny_cols / sizeof tiny_cols[0]; ci++) {
        run_case(true, 2, tiny_cols[ci], 1e-30f, false, false, true, 0.0f);
        run_case(false, 2, tiny_cols[ci], 1e-30f, false, false, true, 0.0f);
    }

    return test_end(&run);
}
