/* The matrix-product kernels against float64 references, through every
 * tile configuration of the WebGPU backend (forced one after another, with
 * and without split-k), on shapes that are not multiples of any tile:
 * transposed operands (the linear layout a @ w^T included), broadcast
 * batches, bias and activations in the epilogue, f16 operands, K = 0, and
 * the 16-byte-load variants. A tile edge computed wrong, a stage read
 * before it is written, a split counted twice: each shows as a wrong
 * element. Usage: gemm_check cpu|vulkan|gles. */
#include "api/api.h"
#include "test_util.h"
#include "webgpu/wg.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int g_failed, g_passed;

typedef struct gcase {
    const char *name;
    int64_t batch, m, n, k;
    bool a_t, b_t;   /* operand stored transposed, passed as a transposed view */
    bool a_bcast;    /* a 2-D, broadcast over b's batch */
    bool bias;
    wt_matmul_act act;
    bool f16;
} gcase;

static const gcase cases[] = {
    {"plain 130x131x37", 1, 130, 131, 37, false, false, false, false, WT_MATMUL_ACT_NONE, false},
    {"linear layout, bias, gelu", 2, 67, 129, 64, false, true, false, true, WT_MATMUL_ACT_GELU, false},
    {"a^T, broadcast a, relu", 3, 33, 68, 20, true, false, true, false, WT_MATMUL_ACT_RELU, false},
    {"both transposed, odd", 2, 45, 37, 29, true, true, false, true, WT_MATMUL_ACT_NONE, false},
    {"aligned 136x132x72", 1, 136, 132, 72, false, false, false, true, WT_MATMUL_ACT_GELU_TANH, false},
    {"aligned, a^T and b^T", 2, 68, 72, 40, true, true, false, false, WT_MATMUL_ACT_NONE, false},
    {"long k 9x10x1000", 1, 9, 10, 1000, false, true, false, true, WT_MATMUL_ACT_NONE, false},
    {"K = 0 with bias", 2, 5, 6, 0, false, false, false, true, WT_MATMUL_ACT_RELU, false},
    {"one row with bias", 1, 1, 70, 33, false, true, false, true, WT_MATMUL_ACT_GELU, false},
    {"f16 plain", 1, 70, 132, 36, false, false, false, false, WT_MATMUL_ACT_NONE, true},
    {"f16 linear layout, bias, gelu", 2, 37, 66, 41, false, true, false, true, WT_MATMUL_ACT_GELU, true},
    {"f16 a^T, odd n", 1, 20, 33, 24, true, false, false, false, WT_MATMUL_ACT_NONE, true},
};

static float f16_round(float x) /* x rounded to the nearest f16, as a float */
{
    if (!(fabsf(x) < 65520.0f)) return x;
    int e;
    frexpf(x, &e);
    if (e < -13) e = -13; /* subnormal spacing 2^-24 */
    float q = ldexpf(1.0f, e - 11);
    return nearbyintf(x / q) * q;
}

static double act_ref(wt_matmul_act act, double x)
{
    switch (act) {
    case WT_MATMUL_ACT_RELU: return x < 0 ? 0 : x;
    case WT_MATMUL_ACT_GELU: return 0.5 * x * erfc(-x / sqrt(2.0));
    case WT_MATMUL_ACT_GELU_TANH: return 0.5 * x * (1 + tanh(0.79788456080286536 * (x + 0.044715 * x * x * x)));
    default: return x;
    }
}

static wt_tensor *upload(wt_context *ctx, bool f16, int ndim, const int64_t *shape, const float *v)
{
    wt_tensor *t = NULL, *h = NULL;
    if (wt_tensor_from_data(ctx, WT_F32, ndim, shape, v, &t) != WT_OK) return NULL;
    if (!f16) return t;
    wt_status st = wt_cast(t, WT_F16, &h);
    wt_tensor_release(t);
    return st == WT_OK ? h : NULL;
}

static void run_case(wt_context *ctx, const gcase *c, const char *tag)
{
    int64_t B = c->batch, M = c->m, N = c->n, K = c->k;
    int64_t na = (c->a_bcast ? 1 : B) * M * K, nb = B * K * N;
    float *a = malloc(sizeof(float) * (size_t)(na + 1)), *b = malloc(sizeof(float) * (size_t)(nb + 1));
    float *bias = malloc(sizeof(float) * (size_t)N);
    double *ref = malloc(sizeof(double) * (size_t)(B * M * N)), *mag = malloc(sizeof(double) * (size_t)(B * M * N));
    for (int64_t i = 0; i < na; i++) a[i] = test_rng_uniform(-1, 1);
    for (int64_t i = 0; i < nb; i++) b[i] = test_rng_uniform(-1, 1);
    for (int64_t i = 0; i < N; i++) bias[i] = test_rng_uniform(-1, 1);
    if (c->f16) {
        for (int64_t i = 0; i < na; i++) a[i] = f16_round(a[i]);
        for (int64_t i = 0; i < nb; i++) b[i] = f16_round(b[i]);
        for (int64_t i = 0; i < N; i++) bias[i] = f16_round(bias[i]);
    }
    /* Stored layouts: a as [.., M, K] or [.., K, M] (a_t); b as [B, K, N] or [B, N, K] (b_t). */
    for (int64_t z = 0; z < B; z++)
        for (int64_t i = 0; i < M; i++)
            for (int64_t j = 0; j < N; j++) {
                double s = 0, m = 0;
                int64_t za = c->a_bcast ? 0 : z;
                for (int64_t k = 0; k < K; k++) {
                    double x = c->a_t ? a[(za * K + k) * M + i] : a[(za * M + i) * K + k];
                    double y = c->b_t ? b[(z * N + j) * K + k] : b[(z * K + k) * N + j];
                    s += x * y, m += fabs(x * y);
                }
                if (c->bias) s += bias[j], m += fabs(bias[j]);
                ref[(z * M + i) * N + j] = act_ref(c->act, s);
                mag[(z * M + i) * N + j] = m;
            }
    int64_t sa[3] = {B, c->a_t ? K : M, c->a_t ? M : K}, sb[3] = {B, c->b_t ? N : K, c->b_t ? K : N};
    int a_nd = c->a_bcast ? 2 : 3;
    wt_tensor *ta = upload(ctx, c->f16, a_nd, c->a_bcast ? sa + 1 : sa, a);
    wt_tensor *tb = upload(ctx, c->f16, 3, sb, b);
    wt_tensor *tbias = c->bias ? upload(ctx, c->f16, 1, &N, bias) : NULL;
    wt_tensor *va = NULL, *vb = NULL, *out = NULL, *out32 = NULL;
    char what[200];
    snprintf(what, sizeof what, "%s: %s", tag, c->name);
    bool ok = ta && tb && (!c->bias || tbias);
    if (ok && c->a_t) ok = wt_transpose(ta, a_nd - 2, a_nd - 1, &va) == WT_OK;
    else if (ok) va = ta, wt_tensor_retain(ta);
    if (ok && c->b_t) ok = wt_transpose(tb, 1, 2, &vb) == WT_OK;
    else if (ok) vb = tb, wt_tensor_retain(tb);
    wt_status st = ok ? wt_matmul_fused(va, vb, tbias, c->act, &out) : WT_ERR_BACKEND;
    if (st == WT_OK && c->f16) st = wt_cast(out, WT_F32, &out32);
    else if (st == WT_OK) out32 = out, wt_tensor_retain(out);
    char err[256] = "";
    float *got = st == WT_OK ? test_read_guarded(out32, err, sizeof err) : NULL;
    if (!got) {
        printf("FAIL %s: %s %s\n", what, wt_last_error(), err);
        g_failed++;
    } else {
        double rtol = c->f16 ? 1.5e-3 : 2e-6, mtol = c->f16 ? 1e-4 : 2e-6;
        int64_t bad = -1;
        for (int64_t i = 0; i < B * M * N && bad < 0; i++)
            if (!(fabs(got[i] - ref[i]) <= rtol * fabs(ref[i]) + mtol * (mag[i] + 1e-3))) bad = i;
        if (bad >= 0) {
            printf("FAIL %s: element %lld = %.8g, want %.8g\n", what, (long long)bad, got[bad], ref[bad]);
            g_failed++;
        } else {
            g_passed++;
        }
    }
    free(got);
    wt_tensor_release(out32), wt_tensor_release(out), wt_tensor_release(va), wt_tensor_release(vb);
    wt_tensor_release(ta), wt_tensor_release(tb), wt_tensor_release(tbias);
    free(a), free(b), free(bias), free(ref), free(mag);
}

int main(int argc, char **argv)
{
    test_backend be = test_parse_backend(argc > 1 ? argv[1] : NULL);
    if (be == TEST_BACKEND_INVALID) {
        fprintf(stderr, "usage: %s cpu|vulkan|gles\n", argv[0]);
        return 2;
    }
    test_rng_seed(test_seed());
    printf("gemm_check %s: seed %llu\n", test_backend_name(be), (unsigned long long)test_seed());
    wt_context *ctx = NULL;
    if (test_create_context(be, &ctx) != WT_OK) {
        printf("FAIL context: %s\n", wt_last_error());
        return 1;
    }
    int ncfg = be == TEST_BACKEND_CPU ? 0 : wg_gemm_config_count();
    /* A software renderer compiles each variant slowly: there, the forced
     * configurations run three cases (an odd linear layout with the
     * epilogue, the 16-byte loads, f16) and split-k one configuration. */
    bool brief = be != TEST_BACKEND_CPU && wg_get_caps(ctx)->cpu_adapter;
    static const int brief_cases[] = {1, 4, 10};
    for (int cfg = -1; cfg < ncfg; cfg++)
        for (int splits = 0; splits <= (cfg < 0 || (brief && cfg != 1) ? 0 : 3); splits += 3) {
            char tag[64];
            snprintf(tag, sizeof tag, "config %d, splits %d", cfg, splits);
            if (be != TEST_BACKEND_CPU) wg_gemm_force(cfg, splits);
            if (brief && cfg >= 0)
                for (int i = 0; i < 3; i++) run_case(ctx, &cases[brief_cases[i]], tag);
            else
                for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) run_case(ctx, &cases[i], tag);
        }
    if (be != TEST_BACKEND_CPU) wg_gemm_force(-1, 0);
    /* Bad input. */
    {
        int64_t s2[2] = {3, 4}, s1[1] = {5};
        float z[12] = {0};
        wt_tensor *x = NULL, *bad = NULL, *o = NULL;
        wt_tensor_from_data(ctx, WT_F32, 2, s2, z, &x);
        wt_tensor_from_data(ctx, WT_F32, 1, s1, z, &bad);
        wt_tensor *xt = NULL;
        wt_transpose(x, 0, 1, &xt);
        bool ok = wt_matmul_fused(x, xt, bad, WT_MATMUL_ACT_NONE, &o) == WT_ERR_SHAPE && !o &&
                  wt_matmul_fused(x, xt, NULL, (wt_matmul_act)99, &o) == WT_ERR_INVALID_ARGUMENT && !o;
        printf("%s bad bias / activation codes\n", ok ? "ok" : "FAIL");
        ok ? g_passed++ : g_failed++;
        wt_tensor_release(x), wt_tensor_release(bad), wt_tensor_release(xt);
    }
    wt_context_destroy(ctx);
    printf("gemm_check %s: %d passed, %d failed\n", test_backend_name(be), g_passed, g_failed);
    return g_failed ? 1 : 0;
}
