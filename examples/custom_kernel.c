/* A fused custom op: y = gelu(x + bias) over the rows of a matrix, in one
 * WGSL kernel instead of two library ops (one pass over memory instead of
 * three), recorded between library ops like any other op. Falls back to
 * the library's ops on a CPU context, where custom kernels do not run.
 *
 * Build: cc custom_kernel.c $(pkg-config --cflags --libs webtensor) -lm
 * Run:   ./custom_kernel [webgpu] */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "webtensor.h"

static const char *BIAS_GELU =
    "struct P { rows: u32, cols: u32 }\n"
    "@group(0) @binding(0) var<uniform> p: P;\n"
    "@group(0) @binding(1) var<storage, read> x: array<f32>;\n"
    "@group(0) @binding(2) var<storage, read> bias: array<f32>;\n"
    "@group(0) @binding(3) var<storage, read_write> y: array<f32>;\n"
    "@compute @workgroup_size(256)\n"
    "fn main(@builtin(global_invocation_id) g: vec3<u32>) {\n"
    "    let i = g.x;\n"
    "    if (i >= p.rows * p.cols) { return; }\n"
    "    let v = x[i] + bias[i % p.cols];\n"
    "    // tanh approximation of GELU\n"
    "    y[i] = 0.5 * v * (1.0 + tanh(0.7978845608 * (v + 0.044715 * v * v * v)));\n"
    "}\n";

#define TRY(call)                                                                         \
    do {                                                                                  \
        wt_status s_ = (call);                                                            \
        if (s_ != WT_OK) {                                                                \
            fprintf(stderr, "%s failed: %s: %s\n", #call, wt_status_string(s_), wt_last_error()); \
            return 1;                                                                     \
        }                                                                                 \
    } while (0)

int main(int argc, char **argv)
{
    enum { ROWS = 512, COLS = 768 };
    float *hx = malloc(sizeof(float) * ROWS * COLS), hb[COLS], *hy = malloc(sizeof(float) * ROWS * COLS);
    if (!hx || !hy) return 1;
    for (int i = 0; i < ROWS * COLS; i++) hx[i] = (float)((i * 37) % 200 - 100) / 50.0f;
    for (int j = 0; j < COLS; j++) hb[j] = (float)(j % 10) / 10.0f - 0.5f;

    /* "webgpu" as the argument asks for WebGPU even on a software adapter. */
    wt_context_options opts;
    wt_context_options_init(&opts);
    if (argc > 1 && strcmp(argv[1], "webgpu") == 0) opts.backend = WT_BACKEND_WEBGPU;
    wt_context *ctx = NULL;
    TRY(wt_context_create(&opts, &ctx));
    wt_context_info info;
    TRY(wt_context_get_info(ctx, &info));
    printf("context: %s (%s)\n", info.backend == WT_BACKEND_WEBGPU ? info.adapter.name : "CPU backend",
           info.reason);

    int64_t shape[2] = {ROWS, COLS}, bshape[1] = {COLS};
    wt_tensor *x = NULL, *bias = NULL, *y = NULL;
    TRY(wt_tensor_from_data(ctx, WT_F32, 2, shape, hx, &x));
    TRY(wt_tensor_from_data(ctx, WT_F32, 1, bshape, hb, &bias));

    wt_kernel_desc desc = {BIAS_GELU, "main", 3, 0x4, 2 * sizeof(uint32_t)};
    wt_kernel *k = NULL;
    wt_status s = wt_kernel_create(ctx, &desc, &k);
    if (s == WT_OK) {
        uint32_t params[2] = {ROWS, COLS};
        wt_tensor *args[3] = {x, bias, NULL};
        TRY(wt_tensor_zeros(ctx, WT_F32, 2, shape, &y));
        args[2] = y;
        TRY(wt_kernel_dispatch(k, 3, args, params, sizeof params, (ROWS * COLS + 255) / 256, 1, 1));
        printf("fused bias+gelu: one custom kernel\n");
    } else if (s == WT_ERR_UNSUPPORTED) {
        /* CPU context: the same op from library ops. */
        wt_tensor *v = NULL, *v3 = NULL, *t = NULL;
        TRY(wt_add(x, bias, &v));
        /* 0.5 v (1 + tanh(0.79788456 (v + 0.044715 v^3))) */
        TRY(wt_mul(v, v, &t));
        TRY(wt_mul(t, v, &v3));
        wt_tensor_release(t);
        wt_tensor *c1 = NULL, *c2 = NULL, *c3 = NULL, *u = NULL, *w = NULL, *z = NULL;
        int64_t one = 1;
        TRY(wt_tensor_full(ctx, WT_F32, 1, &one, 0.044715, &c1));
        TRY(wt_tensor_full(ctx, WT_F32, 1, &one, 0.7978845608, &c2));
        TRY(wt_tensor_full(ctx, WT_F32, 1, &one, 1.0, &c3));
        TRY(wt_mul(v3, c1, &u));
        TRY(wt_add(v, u, &w));
        wt_tensor_release(u);
        TRY(wt_mul(w, c2, &u));
        wt_tensor_release(w);
        TRY(wt_tanh(u, &w));
        TRY(wt_add(w, c3, &z));
        wt_tensor_release(u);
        TRY(wt_mul(v, z, &u));
        wt_tensor_release(w);
        TRY(wt_tensor_full(ctx, WT_F32, 1, &one, 0.5, &w));
        TRY(wt_mul(u, w, &y));
        wt_tensor_release(v); wt_tensor_release(v3); wt_tensor_release(c1); wt_tensor_release(c2);
        wt_tensor_release(c3); wt_tensor_release(u); wt_tensor_release(w); wt_tensor_release(z);
        printf("fused bias+gelu: custom kernels need WebGPU; computed with library ops\n");
    } else {
        fprintf(stderr, "wt_kernel_create: %s: %s\n", wt_status_string(s), wt_last_error());
        return 1;
    }
    /* A library op after the custom one reads its result in the same batch. */
    wt_tensor *row_sums = NULL;
    int axis = 1;
    TRY(wt_sum(y, 1, &axis, false, &row_sums));
    TRY(wt_tensor_read(y, hy, sizeof(float) * ROWS * COLS));
    float sums[ROWS];
    TRY(wt_tensor_read(row_sums, sums, sizeof sums));

    double max_err = 0;
    for (int i = 0; i < ROWS * COLS; i++) {
        double v = (double)hx[i] + hb[i % COLS];
        double ref = 0.5 * v * (1.0 + tanh(0.7978845608 * (v + 0.044715 * v * v * v)));
        double e = fabs(hy[i] - ref);
        if (e > max_err) max_err = e;
    }
    printf("max |error| against double: %.3g; row 0 sum %.4f\n", max_err, sums[0]);
    wt_tensor_release(x); wt_tensor_release(bias); wt_tensor_release(y); wt_tensor_release(row_sums);
    wt_kernel_destroy(k);
    wt_context_destroy(ctx);
    free(hx);
    free(hy);
    return max_err < 1e-4 ? 0 : 1;
}
