/* f16_rows <cpu|vulkan|gles>: softmax, log_softmax, layernorm and rmsnorm
 * of f16 rows, which a WebGPU device reads and writes as halves (f32
 * arithmetic inside), and the f16 path the device's kernels take.
 *
 * Each result is compared with the float64 op on the same f16 inputs,
 * rounded to f16. Tolerance: 2 f16 ulps, plus an absolute 2^-14 (the f16
 * subnormal range, where the ulp count means little), for every op: the
 * kernels compute in f32 (about 2^-21 relative error from exp, the row
 * sums and the reciprocal square root) and round once to f16 (half an ulp),
 * and the hardware's rounding on the shader-f16 path may land one ulp
 * further. Rows of every layout the kernels treat differently: lengths
 * that are and are not multiples of 4 (these go through f32 copies), rows
 * short enough for registers and long enough for the loop kernel, a
 * row-sliced view, an f16 weight and bias.
 *
 * On a device with shader-f16 the context's info must say its f16
 * kernels use f16 types, unless WT_F16_ARITH=0 (the probed path: the
 * suite runs both ways); elsewhere it must not claim them. */
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static wt_context *g_ctx;

enum row_op { OP_SOFTMAX, OP_LOG_SOFTMAX, OP_LAYERNORM, OP_RMSNORM };
static const char *const op_names[] = {"softmax", "log_softmax", "layer_norm", "rms_norm"};

#define EPS 1e-5

/* The float64 op on one row of C values x (stride 1), weight w and bias b
 * (NULL: none), into y. */
static void ref_row(enum row_op op, const double *x, const double *w, const double *b, int64_t C, double *y)
{
    if (op == OP_SOFTMAX || op == OP_LOG_SOFTMAX) {
        double m = -INFINITY, s = 0;
        for (int64_t i = 0; i < C; i++) m = x[i] > m ? x[i] : m;
        for (int64_t i = 0; i < C; i++) s += exp(x[i] - m);
        for (int64_t i = 0; i < C; i++) y[i] = op == OP_SOFTMAX ? exp(x[i] - m) / s : x[i] - m - log(s);
        return;
    }
    double mean = 0, q = 0;
    if (op == OP_LAYERNORM) {
        for (int64_t i = 0; i < C; i++) mean += x[i];
        mean /= (double)C;
    }
    for (int64_t i = 0; i < C; i++) q += (x[i] - mean) * (x[i] - mean);
    double rstd = 1.0 / sqrt(q / (double)C + EPS);
    for (int64_t i = 0; i < C; i++) {
        double v = (x[i] - mean) * rstd;
        if (w) v *= w[i];
        if (b) v += b[i];
        y[i] = v;
    }
}

static wt_tensor *f16_tensor(int ndim, const int64_t *shape, const uint16_t *h)
{
    wt_tensor *t = NULL;
    CHECK(wt_tensor_from_data(g_ctx, WT_F16, ndim, shape, h, &t) == WT_OK, "from_data: %s", wt_last_error());
    return t;
}

static uint16_t *random_halves(int64_t n, double lo, double hi)
{
    uint16_t *h = malloc((size_t)(n ? n : 1) * 2);
    for (int64_t i = 0; h && i < n; i++) h[i] = test_double_to_half(test_rng_uniform((float)lo, (float)hi));
    return h;
}

/* One case: op over rows [R, C] of x, where x is columns [col0, col0 + C)
 * of a stored [R, CS] tensor (CS = C when col0 is 0 and not sliced). */
static void run_case(enum row_op op, int64_t R, int64_t C, int64_t CS, int64_t col0, bool affine)
{
    char what[128];
    snprintf(what, sizeof what, "%s of [%lld, %lld]%s%s", op_names[op], (long long)R, (long long)C,
             CS != C ? " (a column slice)" : "", affine ? " with f16 weight and bias" : "");
    const int64_t shape[2] = {R, CS}, pshape[1] = {C};
    uint16_t *hx = random_halves(R * CS, -4.0, 4.0), *hw = random_halves(C, 0.5, 1.5), *hb = random_halves(C, -1, 1);
    double *x = malloc((size_t)C * sizeof *x), *w = malloc((size_t)C * sizeof *w), *b = malloc((size_t)C * sizeof *b),
           *y = malloc((size_t)C * sizeof *y);
    uint16_t *got = malloc((size_t)(R * C) * 2);
    wt_tensor *tx = NULL, *vx = NULL, *tw = NULL, *tb = NULL, *r = NULL;
    if (!CHECK(hx && hw && hb && x && w && b && y && got, "out of host memory")) goto done;
    tx = f16_tensor(2, shape, hx);
    if (affine) tw = f16_tensor(1, pshape, hw), tb = f16_tensor(1, pshape, hb);
    if (!tx || (affine && (!tw || !tb))) goto done;
    if (CS != C) {
        if (!CHECK(wt_slice(tx, 1, col0, col0 + C, 1, &vx) == WT_OK, "%s: slice: %s", what, wt_last_error()))
            goto done;
    } else {
        wt_tensor_retain(tx);
        vx = tx;
    }
    wt_status st = op == OP_SOFTMAX       ? wt_softmax(vx, -1, &r)
                   : op == OP_LOG_SOFTMAX ? wt_log_softmax(vx, -1, &r)
                   : op == OP_LAYERNORM   ? wt_layer_norm(vx, 1, tw, affine ? tb : NULL, EPS, &r)
                                          : wt_rms_norm(vx, 1, tw, EPS, &r);
    if (!CHECK(st == WT_OK && r && wt_tensor_dtype(r) == WT_F16, "%s: %s", what,
               st == WT_OK ? "not an f16 result" : wt_last_error()))
        goto done;
    if (!CHECK(wt_tensor_read(r, got, (size_t)(R * C) * 2) == WT_OK, "%s: read: %s", what, wt_last_error()))
        goto done;
    for (int64_t i = 0; i < C; i++) w[i] = test_half_to_double(hw[i]), b[i] = test_half_to_double(hb[i]);
    int64_t bad = 0;
    double worst = 0;
    for (int64_t row = 0; row < R; row++) {
        for (int64_t i = 0; i < C; i++) x[i] = test_half_to_double(hx[row * CS + col0 + i]);
        ref_row(op, x, affine ? w : NULL, affine && op == OP_LAYERNORM ? b : NULL, C, y);
        for (int64_t i = 0; i < C; i++) {
            double want = test_half_to_double(test_double_to_half(y[i]));
            double have = test_half_to_double(got[row * C + i]);
            /* 2 ulps of f16 at want's binade, plus 2^-14 absolute. */
            int e;
            frexp(want, &e);
            double ulp = ldexp(1.0, (e - 1 < -14 ? -14 : e - 1) - 10);
            double err = fabs(have - want);
            if (!(err <= 2 * ulp + ldexp(1.0, -14))) bad++;
            if (err > worst || isnan(err)) worst = err;
        }
    }
    CHECK(bad == 0, "%s: %lld of %lld values beyond 2 f16 ulps + 2^-14 (worst error %g)", what, (long long)bad,
          (long long)(R * C), worst);
done:
    wt_tensor_release(r);
    wt_tensor_release(vx);
    wt_tensor_release(tx);
    wt_tensor_release(tw);
    wt_tensor_release(tb);
    free(hx), free(hw), free(hb), free(x), free(w), free(b), free(y), free(got);
}

static void test_rows(bool gpu)
{
    /* C: multiples of 4 (halves read directly), odd (through f32 copies),
     * and, on a GPU, one past the register kernel's reach (loops). */
    const int64_t cols[] = {4, 28, 7, 1024, gpu ? 12288 : 2048};
    for (int op = 0; op < 4; op++) {
        for (size_t k = 0; k < sizeof cols / sizeof cols[0]; k++) {
            int64_t R = cols[k] > 2048 ? 3 : 37;
            run_case((enum row_op)op, R, cols[k], cols[k], 0, false);
        }
        run_case((enum row_op)op, 9, 64, 72, 8, false); /* a slice of wider rows */
        if (op >= OP_LAYERNORM) run_case((enum row_op)op, 21, 256, 256, 0, true);
    }
}

/* What the context says about its f16 kernels. */
static void test_info(void)
{
    wt_context_info info;
    if (!CHECK(wt_context_get_info(g_ctx, &info) == WT_OK, "info: %s", wt_last_error())) return;
    if (info.backend != WT_BACKEND_WEBGPU) return;
    const char *arith = getenv("WT_F16_ARITH");
    bool forced_off = arith && strcmp(arith, "0") == 0;
    bool claims = strstr(info.features, "f16 kernels: f16 types (shader-f16)") != NULL;
    printf("f16_rows: shader-f16 %s; %s\n", info.shader_f16 ? "on" : "off", strstr(info.features, "f16 kernels:"));
    CHECK(claims == (info.shader_f16 && !forced_off), "info says \"%s\" with shader-f16 %s and WT_F16_ARITH %s",
          info.features, info.shader_f16 ? "on" : "off", arith ? arith : "unset");
    CHECK(strstr(info.features, "f16 kernels: not yet chosen") == NULL, "the f16 path was not chosen: %s",
          info.features);
}

int main(int argc, char **argv)
{
    test_run run;
    if (!test_begin(&run, "f16_rows", argc, argv)) return run.status;
    g_ctx = run.ctx;
    test_rows(run.backend != TEST_BACKEND_CPU);
    test_info();
    CHECK(wt_context_sync(g_ctx) == WT_OK, "sync: %s", wt_last_error());
    test_check_nothing_alive(g_ctx);
    return test_end(&run);
}
