/* The host side of f16 attention on the matrix units: which devices and
 * head dims take attention_matrix.wgsl, with which workgroup (subgroups,
 * keys a block), on made-up device capabilities, so that it is checked
 * where no device has subgroup matrices; and, on the backend given, that
 * a context asked for the matrix units still gives f16 attention through
 * the other kernels when its device lacks them (the count of declines
 * says why). The kernel itself runs only where a device has the units
 * (bench/matrix_units_node.mjs ... attn checks it against float64).
 * Usage: attention_matrix_plan cpu|vulkan|gles. */
#include "api/api.h"
#include "test_util.h"
#include "webgpu/wg.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static int g_failed, g_passed;

static void expect(bool ok, const char *what)
{
    if (ok) {
        g_passed++;
    } else {
        g_failed++;
        printf("FAIL %s\n", what);
    }
}

/* A device like an H200 through Dawn: f16, subgroups of 32, the f16 ->
 * f32 16 x 16 x 16 config, 48 KiB of workgroup memory. */
static wg_caps matrix_device(void)
{
    wg_caps c;
    memset(&c, 0, sizeof c);
    c.subgroup_matrix = c.shader_f16 = c.subgroups = true;
    c.subgroup_min_size = c.subgroup_max_size = 32;
    c.max_workgroup_storage = 49152;
    c.max_invocations = 256;
    c.matrix_config_count = 2;
    c.matrix_configs[0].component = 2, c.matrix_configs[0].result = 2; /* f16 -> f16 */
    c.matrix_configs[1].component = 2, c.matrix_configs[1].result = 1; /* f16 -> f32 */
    for (int i = 0; i < 2; i++) c.matrix_configs[i].m = c.matrix_configs[i].n = c.matrix_configs[i].k = 16;
    return c;
}

/* plan(D, tile) gives sgs, bk (want_sgs 0: declined). */
static void plan_case(const char *what, const wg_caps *c, uint64_t D, const char *tile, uint32_t want_sgs,
                      uint32_t want_bk)
{
    uint32_t sgs = 0, bk = 0;
    const char *why = wg_attention_matrix_plan(c, D, tile, &sgs, &bk);
    bool ok = want_sgs ? !why && sgs == want_sgs && bk == want_bk : why != NULL;
    if (!ok)
        printf("  %s: D %llu tile %s: got %s (%u subgroups, %u keys), want %u, %u\n", what, (unsigned long long)D,
               tile ? tile : "-", why ? why : "a plan", sgs, bk, want_sgs, want_bk);
    expect(ok, what);
}

static void test_plans(void)
{
    wg_caps c = matrix_device();
    plan_case("D 128: 4 subgroups, 32 keys (21 KiB)", &c, 128, NULL, 4, 32);
    plan_case("D 64", &c, 64, NULL, 4, 32);
    plan_case("D 80: five fragments", &c, 80, NULL, 4, 32);
    plan_case("D 16", &c, 16, NULL, 4, 32);
    plan_case("D 40: not whole fragments", &c, 40, NULL, 0, 0);
    plan_case("D 144: more than eight fragments", &c, 144, NULL, 0, 0);
    plan_case("tile 2,32", &c, 128, "2,32", 2, 32);
    plan_case("tile 8,32", &c, 128, "8,32", 8, 32);
    plan_case("tile 8,64 does not fit 48 KiB", &c, 128, "8,64", 0, 0);
    plan_case("a tile that is not one: the default", &c, 128, "4,48", 4, 32);
    plan_case("tile 4,64 (41 KiB)", &c, 128, "4,64", 4, 64);
    c.max_workgroup_storage = 16384;
    plan_case("16 KiB: blocks of 16 keys", &c, 128, NULL, 4, 16);
    c.max_workgroup_storage = 8192;
    plan_case("8 KiB: nothing fits", &c, 128, NULL, 0, 0);
    c = matrix_device();
    c.max_invocations = 64;
    plan_case("64 invocations: 4 subgroups do not fit", &c, 128, NULL, 0, 0);
    c = matrix_device();
    c.subgroup_matrix = false;
    plan_case("no subgroup matrices", &c, 128, NULL, 0, 0);
    c = matrix_device();
    c.shader_f16 = false;
    plan_case("no shader-f16", &c, 128, NULL, 0, 0);
    c = matrix_device();
    c.subgroup_min_size = 16;
    plan_case("subgroups of 16 too", &c, 128, NULL, 0, 0);
    c = matrix_device();
    c.matrix_config_count = 1;
    plan_case("only an f16 -> f16 config", &c, 128, NULL, 0, 0);
}

/* A context that asked for the matrix units: f16 causal attention
 * (B1 H2 S40 D64, the shape the kernel would take) against float64 with
 * the attention tests' f16 tolerance, whichever kernel runs. */
static void test_fallback(test_backend be)
{
    wt_context_options opts;
    test_backend_options(be, &opts);
    opts.experimental |= WT_EXPERIMENTAL_SUBGROUP_MATRIX;
    wt_context *ctx = NULL;
    if (wt_context_create(&opts, &ctx) != WT_OK) {
        printf("FAIL context: %s\n", wt_last_error());
        g_failed++;
        return;
    }
    enum { H = 2, S = 40, D = 64 };
    static float q[H * S * D], k[H * S * D], v[H * S * D], got[H * S * D];
    for (int i = 0; i < H * S * D; i++) {
        q[i] = test_rng_uniform(-1, 1), k[i] = test_rng_uniform(-1, 1),
        v[i] = test_rng_uniform(-1, 1);
    }
    const int64_t shape[4] = {1, H, S, D};
    wt_tensor *t[3] = {NULL, NULL, NULL}, *h[3] = {NULL, NULL, NULL}, *back[3] = {NULL, NULL, NULL};
    wt_tensor *out = NULL, *out32 = NULL;
    const float *src[3] = {q, k, v};
    float *rounded[3] = {q, k, v};
    bool ok = true;
    for (int i = 0; i < 3 && ok; i++)
        ok = wt_tensor_from_data(ctx, WT_F32, 4, shape, src[i], &t[i]) == WT_OK && wt_cast(t[i], WT_F16, &h[i]) == WT_OK &&
             wt_cast(h[i], WT_F32, &back[i]) == WT_OK &&
             wt_tensor_read(back[i], rounded[i], sizeof(float) * H * S * D) == WT_OK;
    ok = ok && wt_scaled_dot_product_attention(h[0], h[1], h[2], NULL, true, 0, &out) == WT_OK &&
         wt_tensor_dtype(out) == WT_F16 && wt_cast(out, WT_F32, &out32) == WT_OK &&
         wt_tensor_read(out32, got, sizeof got) == WT_OK;
    expect(ok, "f16 attention runs where the matrix units were asked for");
    double worst = 0;
    for (int hh = 0; ok && hh < H; hh++)
        for (int i = 0; i < S; i++) {
            const float *qi = q + (hh * S + i) * D;
            double sc[S], mx = -INFINITY, den = 0;
            for (int j = 0; j <= i; j++) {
                double s = 0;
                for (int c = 0; c < D; c++) s += (double)qi[c] * k[(hh * S + j) * D + c];
                sc[j] = s / sqrt((double)D);
                if (sc[j] > mx) mx = sc[j];
            }
            for (int j = 0; j <= i; j++) den += sc[j] = exp(sc[j] - mx);
            for (int c = 0; c < D; c++) {
                double want = 0;
                for (int j = 0; j <= i; j++) want += sc[j] * v[(hh * S + j) * D + c];
                want /= den;
                double r = fabs(got[(hh * S + i) * D + c] - want) / (2e-3 + 2e-3 * fabs(want));
                if (r > worst) worst = r;
            }
        }
    if (ok) printf("  f16 causal attention 1x%dx%dx%d: worst error %.3f of the tolerance\n", H, S, D, worst);
    expect(ok && worst <= 1, "f16 attention within the f16 tolerance of float64");
    wt_context_info info;
    if (be != TEST_BACKEND_CPU && wt_context_get_info(ctx, &info) == WT_OK) {
        /* Without subgroup matrices the units are not counted at all. */
        const wg_caps *caps = wg_get_caps(ctx);
        printf("  device: subgroup matrices %s\n", caps->subgroup_matrix ? "on" : "off");
        expect(caps->subgroup_matrix || !strstr(info.features, "matrix units:"),
               "no count of matrix-unit runs without subgroup matrices");
    }
    for (int i = 0; i < 3; i++) wt_tensor_release(t[i]), wt_tensor_release(h[i]), wt_tensor_release(back[i]);
    wt_tensor_release(out), wt_tensor_release(out32);
    wt_context_destroy(ctx);
}

int main(int argc, char **argv)
{
    test_backend be = test_parse_backend(argc > 1 ? argv[1] : "cpu");
    if (be == TEST_BACKEND_INVALID) return 2;
    test_rng_seed(test_seed());
    test_plans();
    test_fallback(be);
    printf("attention_matrix_plan %s: %d passed, %d failed\n", test_backend_name(be), g_passed, g_failed);
    return g_failed ? 1 : 0;
}
