/* The matrix-product kernels against float64 references, through every
 * tile configuration of the WebGPU backend (forced one after another, with
 * and without split-k), on shapes that are not multiples of any tile:
 * transposed operands (the linear layout a @ w^T included), broadcast
 * batches, bias and activations in the epilogue, f16 operands, K = 0, and
 * the 16-byte-load variants. A tile edge computed wrong, a stage read
 * before it is written, a split counted twice: each shows as a wrong
 * element. Usage: gemm_check cpu|vulkan|gles. */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include "api/api.h"
#include "core/knobs.h"
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
    /* Matrix-vector products in f16: the bandwidth kernel (k % 8 == 0),
     * odd row counts, and the fallback. */
    {"f16 A @ x, 37 rows", 2, 37, 1, 48, false, false, false, false, WT_MATMUL_ACT_NONE, true},
    {"f16 decode x @ w^T", 1, 1, 70, 64, false, true, false, false, WT_MATMUL_ACT_NONE, true},
    {"f16 x @ w^T, k % 8 != 0", 1, 1, 6, 20, false, true, false, false, WT_MATMUL_ACT_NONE, true},
    /* Whole 16 x 16 tiles: the matrix units where the context has them. */
    {"f16 aligned 256x128x64", 1, 256, 128, 64, false, false, false, true, WT_MATMUL_ACT_NONE, true},
    {"f16 aligned linear layout, gelu", 2, 48, 80, 32, false, true, true, true, WT_MATMUL_ACT_GELU, true},
    /* f32 shapes that divide every tile (M, N multiples of 128, K of 16
     * and, split in three, of 32): the interior kernel
     * (gemm_interior.wgsl) in the three layouts of training - x @ w^T,
     * dy @ w, dy^T @ x - and with both operands transposed, a broadcast
     * a, a bias and an activation (its epilogue pass). */
    {"interior x @ w^T", 1, 256, 128, 96, false, true, false, false, WT_MATMUL_ACT_NONE, false},
    {"interior dy^T @ x", 1, 128, 256, 96, true, false, false, false, WT_MATMUL_ACT_NONE, false},
    {"interior dy @ w, batch 2", 2, 128, 128, 192, false, false, false, false, WT_MATMUL_ACT_NONE, false},
    {"interior a^T b^T, bias, gelu", 2, 128, 256, 96, true, true, false, true, WT_MATMUL_ACT_GELU, false},
    {"interior broadcast a, bias", 3, 128, 128, 96, false, true, true, true, WT_MATMUL_ACT_NONE, false},
    /* A bias without an activation: in the product's own stores on every
     * tile (WT_BIAS_IN_PRODUCT=0: the second pass on the large ones), at
     * tile edges and partial quads, and in the interior kernel. */
    {"linear layout, bias only", 2, 67, 130, 64, false, true, false, true, WT_MATMUL_ACT_NONE, false},
    {"interior dy^T @ x, bias", 1, 128, 256, 96, true, false, false, true, WT_MATMUL_ACT_NONE, false},
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

/* gelu'(x) in float64: Phi(x) + x phi(x). */
static double gelu_grad_ref(double x)
{
    return 0.5 * erfc(-x / sqrt(2.0)) + x * exp(-0.5 * x * x) / sqrt(2.0 * 3.14159265358979323846);
}

/* wt_matmul_epilogue (the product's epilogue with an operand of the
 * result's shape): act(a @ b + bias) + aux, and (a @ b + bias) *
 * gelu'(aux), a [M, K] and b given as w^T (the linear layout) or plain,
 * against float64, under the forced configuration in force. On the CPU,
 * and where the device has fewer than five storage buffers a stage, the
 * answer must be WT_ERR_UNSUPPORTED with nothing made. */
static void run_epilogue_case(wt_context *ctx, test_backend be, int64_t M, int64_t K, int64_t N, bool b_t,
                              bool bias_on, wt_matmul_act act, const char *tag)
{
    float *a = malloc(sizeof(float) * (size_t)(M * K)), *b = malloc(sizeof(float) * (size_t)(K * N));
    float *bias = malloc(sizeof(float) * (size_t)N), *aux = malloc(sizeof(float) * (size_t)(M * N));
    double *ref = malloc(sizeof(double) * (size_t)(M * N)), *mag = malloc(sizeof(double) * (size_t)(M * N));
    for (int64_t i = 0; i < M * K; i++) a[i] = test_rng_uniform(-1, 1);
    for (int64_t i = 0; i < K * N; i++) b[i] = test_rng_uniform(-1, 1);
    for (int64_t i = 0; i < N; i++) bias[i] = test_rng_uniform(-1, 1);
    for (int64_t i = 0; i < M * N; i++) aux[i] = test_rng_uniform(-3, 3);
    const bool grad = act == WT_MATMUL_ACT_GELU_GRAD;
    for (int64_t i = 0; i < M; i++)
        for (int64_t j = 0; j < N; j++) {
            double sum = 0, m = 0;
            for (int64_t k = 0; k < K; k++) {
                double y = b_t ? b[j * K + k] : b[k * N + j];
                sum += a[i * K + k] * y, m += fabs(a[i * K + k] * y);
            }
            if (bias_on) sum += bias[j], m += fabs(bias[j]);
            double x = aux[i * N + j];
            ref[i * N + j] = grad ? sum * gelu_grad_ref(x) : act_ref(act, sum) + x;
            mag[i * N + j] = grad ? m * 1.2 : m + fabs(x);
        }
    int64_t sa[2] = {M, K}, sb[2] = {b_t ? N : K, b_t ? K : N}, so[2] = {M, N};
    wt_tensor *ta = upload(ctx, false, 2, sa, a), *tb = upload(ctx, false, 2, sb, b);
    wt_tensor *tbias = bias_on ? upload(ctx, false, 1, &N, bias) : NULL, *taux = upload(ctx, false, 2, so, aux);
    wt_tensor *vb = NULL, *out = NULL;
    char what[200];
    snprintf(what, sizeof what, "%s: epilogue %s%s %lldx%lldx%lld%s", tag, grad ? "gelu'" : "residual",
             act == WT_MATMUL_ACT_GELU ? " after gelu" : "", (long long)M, (long long)N, (long long)K,
             b_t ? ", b = w^T" : "");
    bool ok = ta && tb && taux && (!bias_on || tbias);
    if (ok && b_t) ok = wt_transpose(tb, 0, 1, &vb) == WT_OK;
    else if (ok) vb = tb, wt_tensor_retain(tb);
    wt_status st = ok ? wt_matmul_epilogue(ta, vb, tbias, act, taux, &out) : WT_ERR_BACKEND;
    const bool fused_here = be != TEST_BACKEND_CPU && wg_get_caps(ctx)->max_storage_buffers >= 5;
    if (!fused_here) {
        if (st == WT_ERR_UNSUPPORTED && !out) {
            g_passed++;
        } else {
            printf("FAIL %s: want WT_ERR_UNSUPPORTED here, got %d\n", what, (int)st);
            g_failed++;
        }
    } else {
        char err[256] = "";
        float *got = st == WT_OK ? test_read_guarded(out, err, sizeof err) : NULL;
        if (!got) {
            printf("FAIL %s: %s %s\n", what, wt_last_error(), err);
            g_failed++;
        } else {
            int64_t bad = -1;
            for (int64_t i = 0; i < M * N && bad < 0; i++)
                if (!(fabs(got[i] - ref[i]) <= 2e-6 * fabs(ref[i]) + 2e-6 * (mag[i] + 1e-3))) bad = i;
            if (bad >= 0) {
                printf("FAIL %s: element %lld = %.8g, want %.8g\n", what, (long long)bad, got[bad], ref[bad]);
                g_failed++;
            } else {
                g_passed++;
            }
        }
        free(got);
    }
    wt_tensor_release(out), wt_tensor_release(vb), wt_tensor_release(ta), wt_tensor_release(tb);
    wt_tensor_release(tbias), wt_tensor_release(taux);
    free(a), free(b), free(bias), free(aux), free(ref), free(mag);
}

/* The epilogue's cases on the usual choice (every mode, edge and aligned
 * shapes) and, on a GPU, on the large tiles (the activation through the
 * second pass) and split k (the residual and gelu' in gemm_splitk.wgsl). */
static void check_epilogue(wt_context *ctx, test_backend be)
{
    static const struct { int cfg, splits; } runs[] = {{-1, 0}, {3, 0}, {4, 0}, {1, 3}};
    int nruns = be == TEST_BACKEND_CPU ? 1 : (int)(sizeof runs / sizeof runs[0]);
    for (int r = 0; r < nruns; r++) {
        char tag[64];
        snprintf(tag, sizeof tag, "config %d, splits %d", runs[r].cfg, runs[r].splits);
        if (be != TEST_BACKEND_CPU) wg_gemm_force(runs[r].cfg, runs[r].splits);
        run_epilogue_case(ctx, be, 67, 40, 36, true, true, WT_MATMUL_ACT_NONE, tag);
        run_epilogue_case(ctx, be, 67, 40, 36, false, false, WT_MATMUL_ACT_GELU_GRAD, tag);
        if (r == 0 || runs[r].splits) {
            run_epilogue_case(ctx, be, 33, 20, 13, false, true, WT_MATMUL_ACT_GELU, tag);
            run_epilogue_case(ctx, be, 33, 21, 13, true, true, WT_MATMUL_ACT_GELU_GRAD, tag);
        }
    }
    /* WT_MATMUL_EPILOGUE=3: GELU's derivative in the stores themselves. */
    setenv("WT_MATMUL_EPILOGUE", "3", 1);
    for (int r = 0; r < nruns; r++) {
        char tag[80];
        snprintf(tag, sizeof tag, "config %d, splits %d, WT_MATMUL_EPILOGUE=3", runs[r].cfg, runs[r].splits);
        if (be != TEST_BACKEND_CPU) wg_gemm_force(runs[r].cfg, runs[r].splits);
        run_epilogue_case(ctx, be, 67, 40, 36, false, true, WT_MATMUL_ACT_GELU_GRAD, tag);
        if (r == 0) run_epilogue_case(ctx, be, 33, 21, 13, true, false, WT_MATMUL_ACT_GELU_GRAD, tag);
    }
    unsetenv("WT_MATMUL_EPILOGUE");
    if (be != TEST_BACKEND_CPU) wg_gemm_force(-1, 0);
}

/* The usual choice of tile and k splits for the GPT step's weight
 * gradients (dy^T @ x over 16384 rows) and one forward product, on a
 * made-up discrete adapter (the choice is the same code on every
 * adapter; software renderers never reach it): the 72-tile outputs split
 * k into pieces of 1024 (16 splits), unless WT_GEMM_SPLITK_CHUNK=0 leaves
 * the fill's 8; the 18-tile output keeps the fill's 29; a short k is not
 * split; f16 keeps the fill's count. Skipped (said so) when
 * WT_GEMM_TILE or WT_GEMM_SPLITK force the choice. */
static void check_split_choice(wt_context *ctx)
{
    if (getenv("WT_GEMM_TILE") || getenv("WT_GEMM_SPLITK")) {
        printf("split choice: not checked (WT_GEMM_TILE / WT_GEMM_SPLITK set)\n");
        return;
    }
    wg_caps caps = *wg_get_caps(ctx);
    caps.cpu_adapter = false, caps.max_invocations = 1024, caps.max_workgroup_storage = 32768;
    const bool floor_on = wt_knob_count(WT_KNOB_GEMM_SPLITK_CHUNK, 1024) != 0;
    static const struct {
        uint64_t m, n, k;
        bool b_n_fast;
        int config;
        uint32_t splits, splits_fill_alone;
    } want[] = {
        {1536, 384, 16384, true, 2, 16, 8},
        {384, 1536, 16384, true, 2, 16, 8},
        {384, 384, 16384, true, 2, 29, 29},
        {16384, 384, 384, false, 5, 1, 1},
    };
    /* f16 keeps the fill's count. */
    {
        int config = -1;
        uint32_t splits = 0;
        wg_gemm_plan_for(&caps, true, true, 1, 1536, 384, 16384, &config, &splits);
        if (splits == 8) {
            g_passed++;
        } else {
            g_failed++;
            printf("FAIL split choice f16 1536x384x16384: %u splits (want 8)\n", splits);
        }
    }
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        int config = -1;
        uint32_t splits = 0, expect = floor_on ? want[i].splits : want[i].splits_fill_alone;
        wg_gemm_plan_for(&caps, false, want[i].b_n_fast, 1, want[i].m, want[i].n, want[i].k, &config, &splits);
        if (config == want[i].config && splits == expect) {
            g_passed++;
        } else {
            g_failed++;
            printf("FAIL split choice %llux%llux%llu: config %d, %u splits (want %d, %u)\n",
                   (unsigned long long)want[i].m, (unsigned long long)want[i].n, (unsigned long long)want[i].k,
                   config, splits, want[i].config, expect);
        }
    }
}

/* `perf`: GPU time of the fused linear layer of the benchmark issue,
 * x [8192, 4096] @ w^T ([4096, 4096] stored [out, in]) + bias, gelu, in
 * f32 and f16: median of 5 repetitions of 10 launches. Not a test. */
static void perf(wt_context *ctx)
{
    int64_t M = 8192, N = 4096, K = 4096;
    float *h = malloc(sizeof(float) * (size_t)(M * K));
    for (int64_t i = 0; i < M * K; i++) h[i] = test_rng_uniform(-1, 1);
    for (int f16 = 0; f16 < 2; f16++)
        for (int fused = 0; fused < 2; fused++) {
            int64_t sx[2] = {M, K}, sw[2] = {N, K};
            wt_tensor *x = upload(ctx, f16, 2, sx, h), *w = upload(ctx, f16, 2, sw, h);
            wt_tensor *bias = upload(ctx, f16, 1, &N, h), *wt = NULL;
            if (!x || !w || !bias || wt_transpose(w, 0, 1, &wt) != WT_OK) {
                printf("perf: setup failed: %s\n", wt_last_error());
                return;
            }
            double t[5];
            for (int rep = -1; rep < 5; rep++) {
                wt_context_timer_begin(ctx);
                for (int i = 0; i < 10; i++) {
                    wt_tensor *o = NULL;
                    if (wt_matmul_fused(x, wt, fused ? bias : NULL,
                                        fused ? WT_MATMUL_ACT_GELU : WT_MATMUL_ACT_NONE, &o) != WT_OK)
                        printf("perf: %s\n", wt_last_error());
                    wt_tensor_release(o);
                }
                double sec = 0;
                wt_context_timer_end(ctx, &sec);
                if (rep >= 0) t[rep] = sec / 10;
            }
            for (int i = 0; i < 5; i++)
                for (int j = i + 1; j < 5; j++)
                    if (t[j] < t[i]) { double z = t[i]; t[i] = t[j]; t[j] = z; }
            printf("perf linear %s %lldx%lldx%lld %s: %.3f ms, %.1f TFLOP/s\n", f16 ? "f16" : "f32",
                   (long long)M, (long long)N, (long long)K, fused ? "+ bias + gelu (fused)" : "(product only)",
                   t[2] * 1e3, 2.0 * M * N * K / t[2] / 1e12);
            wt_tensor_release(x), wt_tensor_release(w), wt_tensor_release(bias), wt_tensor_release(wt);
        }
    free(h);
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
    wt_context_options opts;
    test_backend_options(be, &opts);
    /* WT_TEST_SUBGROUP_MATRIX=1: the experimental matrix-unit kernel too. */
    const char *sm = getenv("WT_TEST_SUBGROUP_MATRIX");
    if (sm && strcmp(sm, "1") == 0) opts.experimental |= WT_EXPERIMENTAL_SUBGROUP_MATRIX;
    if (wt_context_create(&opts, &ctx) != WT_OK) {
        printf("FAIL context: %s\n", wt_last_error());
        return 1;
    }
    if (be != TEST_BACKEND_CPU) {
        const wg_caps *caps = wg_get_caps(ctx);
        printf("matrix units (subgroup matrices): %s; shader-f16 %s; subgroups %u..%u; configs:",
               caps->subgroup_matrix ? "on" : "off", caps->shader_f16 ? "on" : "off",
               caps->subgroup_min_size, caps->subgroup_max_size);
        for (uint32_t i = 0; i < caps->matrix_config_count; i++)
            printf(" %ux%ux%u (%u->%u)", caps->matrix_configs[i].m, caps->matrix_configs[i].n,
                   caps->matrix_configs[i].k, caps->matrix_configs[i].component,
                   caps->matrix_configs[i].result);
        printf("\n");
    }
    if (argc > 2 && strcmp(argv[2], "perf") == 0) {
        perf(ctx);
        wt_context_destroy(ctx);
        return 0;
    }
    int ncfg = be == TEST_BACKEND_CPU ? 0 : wg_gemm_config_count();
    /* A software renderer compiles each variant slowly (about a second of
     * CPU each on llvmpipe): there, the usual choice skips four cases that
     * add little on it, each forced configuration runs an odd linear
     * layout with the epilogue, and split-k runs on one configuration
     * with that case and f16. */
    bool brief = be != TEST_BACKEND_CPU && wg_get_caps(ctx)->cpu_adapter;
    /* ... and the forced configurations the interior kernel's two
     * layouts of each operand (x @ w^T, dy^T @ x) and a bias alone (in
     * the stores of every tile). */
    static const int brief_cases[] = {1, 10, 17, 18, 22, 23};
    /* WT_GEMM_CHECK_CONFIGS="-1,3": only these (-1: the usual choice). */
    const char *only = getenv("WT_GEMM_CHECK_CONFIGS");
    for (int cfg = -1; cfg < ncfg; cfg++)
        for (int splits = 0; splits <= (cfg < 0 || (brief && cfg != 3) ? 0 : 3); splits += 3) {
            char tag[64], key[16];
            snprintf(key, sizeof key, "%d", cfg);
            if (only && !strstr(only, key)) continue;
            snprintf(tag, sizeof tag, "config %d, splits %d", cfg, splits);
            if (be != TEST_BACKEND_CPU) wg_gemm_force(cfg, splits);
            if (brief && cfg >= 0) {
                for (int i = 0; i < (int)(sizeof brief_cases / sizeof brief_cases[0]); i++)
                    if (splits || i != 1) run_case(ctx, &cases[brief_cases[i]], tag); /* f16: split-k only */
            } else {
                for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
                    if (!brief || !(i == 5 || i == 6 || i == 15 || i == 16)) run_case(ctx, &cases[i], tag);
            }
        }
    if (be != TEST_BACKEND_CPU) wg_gemm_force(-1, 0);
    check_epilogue(ctx, be);
    if (be != TEST_BACKEND_CPU) check_split_choice(ctx);
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
