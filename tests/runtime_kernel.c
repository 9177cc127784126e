/* Custom WGSL kernels: a fused op checked against doubles, composed with
 * the library's own ops in one batch, compiler errors with line and
 * column, limits checked before the device sees them, the CPU refusal.
 *
 *   runtime_kernel cpu|vulkan|gles
 */
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const char *AXPY =
    "struct P { alpha: f32, n: u32 }\n"
    "@group(0) @binding(0) var<uniform> p: P;\n"
    "@group(0) @binding(1) var<storage, read> x: array<f32>;\n"
    "@group(0) @binding(2) var<storage, read> y: array<f32>;\n"
    "@group(0) @binding(3) var<storage, read_write> out: array<f32>;\n"
    "@compute @workgroup_size(64)\n"
    "fn axpy_relu(@builtin(global_invocation_id) g: vec3<u32>) {\n"
    "    if (g.x < p.n) { out[g.x] = max(p.alpha * x[g.x] + y[g.x], 0.0); }\n"
    "}\n";

typedef struct { float alpha; uint32_t n; } axpy_params;

static wt_kernel *make_axpy(wt_context *ctx, wt_status *st)
{
    wt_kernel_desc d = {AXPY, "axpy_relu", 3, 0x4, sizeof(axpy_params)};
    wt_kernel *k = NULL;
    *st = wt_kernel_create(ctx, &d, &k);
    return k;
}

static wt_status try_source(wt_context *ctx, const char *src, const char *entry)
{
    wt_kernel_desc d = {src, entry, 1, 0x1, 0};
    wt_kernel *k = NULL;
    wt_status st = wt_kernel_create(ctx, &d, &k);
    CHECK((st == WT_OK) == (k != NULL), "out set exactly on success");
    wt_kernel_destroy(k);
    return st;
}

int main(int argc, char **argv)
{
    test_run run;
    if (!test_begin(&run, "runtime_kernel", argc, argv)) return run.status;
    const test_backend b = run.backend;
    wt_context *ctx = run.ctx;
    wt_status st;
    wt_kernel *k = make_axpy(ctx, &st);
    if (b == TEST_BACKEND_CPU) {
        CHECK(st == WT_ERR_UNSUPPORTED && !k, "CPU: custom kernels unsupported: %s", wt_status_string(st));
        return test_end(&run);
    }
    CHECK(st == WT_OK && k, "create: %s %s", wt_status_string(st), wt_last_error());

    /* A fused op, recorded between library ops: c = a + a; d = relu(2c + b); e = exp(-d). */
    enum { N = 1000 };
    float ha[N], hb[N], he[N];
    test_rng_seed(test_seed());
    for (int i = 0; i < N; i++) ha[i] = test_rng_uniform(-1, 1), hb[i] = test_rng_uniform(-1, 1);
    int64_t n = N;
    wt_tensor *A = NULL, *B = NULL, *C = NULL, *D = NULL, *E = NULL, *F = NULL;
    CHECK(wt_tensor_from_data(ctx, WT_F32, 1, &n, ha, &A) == WT_OK &&
              wt_tensor_from_data(ctx, WT_F32, 1, &n, hb, &B) == WT_OK &&
              wt_tensor_zeros(ctx, WT_F32, 1, &n, &D) == WT_OK,
          "inputs");
    CHECK(wt_add(A, A, &C) == WT_OK, "add");
    axpy_params p = {2.0f, N};
    wt_tensor *args[3] = {C, B, D};
    st = k ? wt_kernel_dispatch(k, 3, args, &p, sizeof p, (N + 63) / 64, 1, 1) : WT_ERR_BACKEND;
    CHECK(st == WT_OK, "dispatch: %s %s", wt_status_string(st), wt_last_error());
    CHECK(wt_neg(D, &F) == WT_OK && wt_exp(F, &E) == WT_OK, "ops after the kernel");
    if (CHECK(wt_tensor_read(E, he, sizeof he) == WT_OK, "read: %s", wt_last_error())) {
        int bad = 0;
        for (int i = 0; i < N; i++) {
            double d = fmax(2.0 * (2.0 * ha[i]) + hb[i], 0.0), ref = exp(-d);
            bad += fabs(he[i] - ref) > 1e-5 * fabs(ref) + 1e-6;
        }
        CHECK(bad == 0, "fused op: %d wrong", bad);
    }

    /* Cached: the same kernel again compiles nothing. */
    wt_pipeline_stats ps0, ps1;
    CHECK(wt_context_pipeline_stats(ctx, &ps0) == WT_OK, "pipeline stats");
    wt_kernel *k2 = make_axpy(ctx, &st);
    CHECK(st == WT_OK && wt_context_pipeline_stats(ctx, &ps1) == WT_OK &&
              ps1.variants == ps0.variants && ps1.hits > ps0.hits,
          "the same kernel comes from the cache (variants %llu -> %llu, hits %llu -> %llu)",
          (unsigned long long)ps0.variants, (unsigned long long)ps1.variants,
          (unsigned long long)ps0.hits, (unsigned long long)ps1.hits);
    wt_kernel_destroy(k2);

    /* Compiler errors with line and column. */
    st = try_source(ctx, "@compute @workgroup_size(1)\nfn main() {\n    let x: f32 = 1.0 +;\n}\n", NULL);
    CHECK(st == WT_ERR_SHADER && strstr(wt_last_error(), ":3:") != NULL,
          "syntax error on line 3: %s: %s", wt_status_string(st), wt_last_error());
    st = try_source(ctx, "@compute @workgroup_size(1)\nfn main() {}\n", "nope");
    CHECK(st == WT_ERR_SHADER, "missing entry point: %s: %s", wt_status_string(st), wt_last_error());
    st = try_source(ctx, "@compute @workgroup_size(4096)\nfn main() {}\n", NULL);
    CHECK(st == WT_ERR_SHADER, "workgroup of 4096 invocations: %s: %s", wt_status_string(st),
          wt_last_error());
    st = try_source(ctx,
                    "var<workgroup> big: array<f32, 1048576>;\n@compute @workgroup_size(1)\n"
                    "fn main() { big[0] = 1.0; }\n",
                    NULL);
    CHECK(st == WT_ERR_SHADER, "4 MiB of workgroup memory: %s: %s", wt_status_string(st),
          wt_last_error());
    wt_kernel_desc bad = {AXPY, "axpy_relu", 9, 0, 0};
    wt_kernel *kb = NULL;
    CHECK(wt_kernel_create(ctx, &bad, &kb) == WT_ERR_INVALID_ARGUMENT && !kb, "9 bindings");
    bad.num_tensors = 3;
    bad.params_size = 512;
    CHECK(wt_kernel_create(ctx, &bad, &kb) == WT_ERR_INVALID_ARGUMENT && !kb, "512 param bytes");
    CHECK(wt_kernel_create(ctx, NULL, &kb) == WT_ERR_INVALID_ARGUMENT, "NULL desc");

    /* Dispatch checks, before the device sees anything. */
    if (k) {
        CHECK(wt_kernel_dispatch(k, 3, args, &p, sizeof p, 70000, 1, 1) == WT_ERR_INVALID_ARGUMENT,
              "70000 workgroups in x");
        CHECK(wt_kernel_dispatch(k, 3, args, &p, sizeof p, 0, 1, 1) == WT_ERR_INVALID_ARGUMENT,
              "0 workgroups");
        CHECK(wt_kernel_dispatch(k, 2, args, &p, sizeof p, 1, 1, 1) == WT_ERR_INVALID_ARGUMENT,
              "tensor count");
        CHECK(wt_kernel_dispatch(k, 3, args, &p, 4, 1, 1, 1) == WT_ERR_INVALID_ARGUMENT, "params size");
        wt_tensor *alias[3] = {C, D, D};
        CHECK(wt_kernel_dispatch(k, 3, alias, &p, sizeof p, 1, 1, 1) == WT_ERR_INVALID_ARGUMENT,
              "aliased writable binding");
        wt_context *other = NULL;
        wt_tensor *O = NULL;
        if (test_create_context(b, &other) == WT_OK &&
            wt_tensor_zeros(other, WT_F32, 1, &n, &O) == WT_OK) {
            wt_tensor *mixed[3] = {C, B, O};
            CHECK(wt_kernel_dispatch(k, 3, mixed, &p, sizeof p, 1, 1, 1) == WT_ERR_INVALID_ARGUMENT,
                  "tensor of another context");
        }
        wt_tensor_release(O);
        wt_context_destroy(other);
    }
    /* None of it hurt the context. */
    float r[N];
    CHECK(wt_context_sync(ctx) == WT_OK && wt_tensor_read(D, r, sizeof r) == WT_OK,
          "context still fine: %s", wt_last_error());
    wt_tensor_release(A); wt_tensor_release(B); wt_tensor_release(C);
    wt_tensor_release(D); wt_tensor_release(E); wt_tensor_release(F);
    wt_kernel_destroy(k);
    return test_end(&run);
}
