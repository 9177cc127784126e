/* The runtime's device choice and configuration: what AUTO takes (a real
 * GPU, else the CPU backend; a software renderer only when asked for),
 * context info with the reason, the OpenGL ES path with only the runtime
 * EGL library, device features and the experimental switch, options.
 *
 *   runtime_device choice   AUTO and explicit requests
 *   runtime_device gles     OpenGL ES (run with hide_egl_dev preloaded)
 *   runtime_device vulkan   features, toggles and options on Vulkan
 */
#include "test_util.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

static bool is_software(const wt_adapter_info *a)
{
    return a->type == WT_ADAPTER_CPU ||
           (a->type == WT_ADAPTER_UNKNOWN &&
            (strstr(a->name, "llvmpipe") || strstr(a->name, "SwiftShader")));
}

/* out = a + b on ctx, read back and checked against the doubles. */
static void check_add(wt_context *ctx, const char *what)
{
    float a[5] = {1, -2, 3.5f, 1e6f, 0.25f}, b[5] = {4, 2, -0.5f, 1, 0.5f}, r[5] = {0};
    int64_t n = 5;
    wt_tensor *ta = NULL, *tb = NULL, *tc = NULL;
    wt_status s = wt_tensor_from_data(ctx, WT_F32, 1, &n, a, &ta);
    if (s == WT_OK) s = wt_tensor_from_data(ctx, WT_F32, 1, &n, b, &tb);
    if (s == WT_OK) s = wt_add(ta, tb, &tc);
    if (s == WT_OK) s = wt_tensor_read(tc, r, sizeof r);
    if (CHECK(s == WT_OK, "%s: add failed: %s %s", what, wt_status_string(s), wt_last_error()))
        for (int i = 0; i < 5; i++)
            CHECK(r[i] == (float)((double)a[i] + (double)b[i]), "%s: add[%d] = %g", what, i, r[i]);
    wt_tensor_release(ta);
    wt_tensor_release(tb);
    wt_tensor_release(tc);
}

static wt_context *make(const wt_context_options *o, const char *what)
{
    wt_context *ctx = NULL;
    wt_status s = wt_context_create(o, &ctx);
    CHECK(s == WT_OK && ctx, "%s: context creation failed: %s %s", what, wt_status_string(s),
          wt_last_error());
    return ctx;
}

static void test_choice(void)
{
    wt_adapter_info list[16];
    int n = 0;
    wt_status s = wt_list_adapters(NULL, list, 16, &n);
    CHECK(s == WT_OK, "list adapters: %s", wt_last_error());
    int real = -1, soft = -1;
    for (int i = 0; i < n && i < 16; i++) {
        if (is_software(&list[i]) && soft < 0) soft = i;
        if (!is_software(&list[i]) && real < 0) real = i;
        CHECK(!list[i].auto_choice || !is_software(&list[i]),
              "adapter %d (%s) is a software renderer yet marked AUTO's choice", i, list[i].name);
    }
    if (real >= 0) CHECK(list[0].auto_choice && real == 0, "a real GPU must rank first");

    wt_context_options o;
    wt_context_options_init(&o);
    wt_context *ctx = make(&o, "AUTO");
    wt_context_info ci;
    if (ctx) {
        CHECK(wt_context_get_info(ctx, &ci) == WT_OK, "info: %s", wt_last_error());
        printf("AUTO: %s: %s\n", ci.backend == WT_BACKEND_CPU ? "cpu" : "webgpu", ci.reason);
        CHECK(ci.reason[0] != '\0', "AUTO gives a reason");
        if (real >= 0) {
            CHECK(ci.backend == WT_BACKEND_WEBGPU && ci.has_adapter && !is_software(&ci.adapter),
                  "AUTO must take the real GPU %s", list[real].name);
        } else {
            CHECK(ci.backend == WT_BACKEND_CPU && !ci.has_adapter,
                  "AUTO must take the CPU backend when no real GPU exists");
            CHECK(ci.num_threads > 0, "CPU info has threads");
            if (soft >= 0)
                CHECK(strstr(ci.reason, "software") != NULL, "the reason names the software renderer: %s",
                      ci.reason);
        }
        check_add(ctx, "AUTO");
        wt_context_destroy(ctx);
    }
    if (soft < 0) return;
    /* Asked for: each explicit way takes the software adapter. */
    wt_context_options e[3];
    for (int k = 0; k < 3; k++) wt_context_options_init(&e[k]);
    e[0].backend = WT_BACKEND_WEBGPU;
    e[1].gpu_api = list[soft].api;
    e[2].adapter_index = soft;
    for (int k = 0; k < 3; k++) {
        ctx = make(&e[k], "explicit");
        if (!ctx) continue;
        CHECK(wt_context_backend(ctx) == WT_BACKEND_WEBGPU, "explicit request %d gives WebGPU", k);
        CHECK(wt_context_get_info(ctx, &ci) == WT_OK && ci.has_adapter && ci.reason[0],
              "explicit request %d: info with adapter and reason", k);
        wt_context_destroy(ctx);
    }
}

static void test_options_rejected(void)
{
    wt_context_options o;
    wt_context *ctx = NULL;
    wt_context_options_init(&o);
    o.power_preference = (wt_power_preference)7;
    CHECK(wt_context_create(&o, &ctx) == WT_ERR_INVALID_ARGUMENT && !ctx, "bad power preference");
    wt_context_options_init(&o);
    o.experimental = 0x80;
    CHECK(wt_context_create(&o, &ctx) == WT_ERR_INVALID_ARGUMENT && !ctx, "bad experimental bits");
    wt_context_info ci;
    CHECK(wt_context_get_info(NULL, &ci) == WT_ERR_INVALID_ARGUMENT, "info of NULL");
}

static void test_gles(void)
{
    /* Under the preloaded shim, as with only the runtime package. */
    void *dev = dlopen("libEGL.so", RTLD_NOW | RTLD_LOCAL);
    CHECK(dev == NULL, "libEGL.so must be hidden in this test (preload hide_egl_dev)");
    wt_context_options o;
    wt_context_options_init(&o);
    o.backend = WT_BACKEND_WEBGPU;
    o.gpu_api = WT_GPU_API_OPENGLES;
    wt_context *ctx = make(&o, "OpenGL ES without libEGL.so");
    if (!ctx) return;
    wt_context_info ci;
    CHECK(wt_context_get_info(ctx, &ci) == WT_OK && ci.adapter.api == WT_GPU_API_OPENGLES,
          "GLES adapter");
    printf("GLES: %s\n  %s\n", ci.adapter.name, ci.features);
    CHECK(strstr(ci.features, "EGL from libEGL.so.1") != NULL, "features name the EGL library: %s",
          ci.features);
    check_add(ctx, "gles");
    wt_context_destroy(ctx);
}

static void test_vulkan(void)
{
    wt_context_options o;
    wt_context_options_init(&o);
    o.gpu_api = WT_GPU_API_VULKAN;
    wt_adapter_info list[16];
    int n = 0;
    CHECK(wt_list_adapters(&o, list, 16, &n) == WT_OK && n > 0, "a Vulkan adapter");
    wt_context *ctx = make(&o, "vulkan");
    if (!ctx) return;
    wt_context_info ci;
    CHECK(wt_context_get_info(ctx, &ci) == WT_OK, "info");
    printf("Vulkan: %s\n  %s\n  toggles %s\n", ci.adapter.name, ci.features, ci.toggles);
    CHECK(ci.shader_f16 == list[0].shader_f16, "shader-f16 on exactly when the adapter offers it");
    if (list[0].vendor_id == 0x10de)
        CHECK(ci.shader_f16, "NVIDIA: shader-f16 on (vulkan_enable_f16_on_nvidia)");
    CHECK(!ci.subgroup_matrix && strstr(ci.features, "subgroup-matrix: off (experimental") != NULL,
          "subgroup matrices off unless asked for: %s", ci.features);
    CHECK(ci.pipeline_cache && !ci.validation && ci.max_binding_size > 0 &&
              ci.max_buffer_size >= ci.max_binding_size,
          "defaults in info");
    wt_context_destroy(ctx);

    /* Experimental: on where the adapter has it, else off with the reason. */
    o.experimental = WT_EXPERIMENTAL_SUBGROUP_MATRIX;
    CHECK(wt_list_adapters(&o, list, 16, &n) == WT_OK && n > 0, "a Vulkan adapter (experimental)");
    ctx = make(&o, "vulkan experimental");
    if (ctx) {
        CHECK(wt_context_get_info(ctx, &ci) == WT_OK, "info");
        printf("experimental: %s\n", ci.features);
        CHECK(ci.subgroup_matrix == list[0].subgroup_matrix,
              "subgroup matrices on exactly when the adapter offers them");
        if (!ci.subgroup_matrix)
            CHECK(strstr(ci.features, "asked for, but") != NULL, "reason: %s", ci.features);
        CHECK(strstr(ci.toggles, "+allow_unsafe_apis") != NULL, "device toggles: %s", ci.toggles);
        check_add(ctx, "experimental");
        wt_context_destroy(ctx);
    }

    /* Options: validation mode, no pipeline cache, a smaller buffer limit,
     * toggles, low power. */
    wt_context_options_init(&o);
    o.gpu_api = WT_GPU_API_VULKAN;
    o.validation = true;
    o.disable_pipeline_cache = true;
    o.max_buffer_size = 1 << 20;
    o.toggles = "+skip_validation,-skip_validation";
    o.power_preference = WT_POWER_LOW_POWER;
    ctx = make(&o, "vulkan options");
    if (ctx) {
        CHECK(wt_context_get_info(ctx, &ci) == WT_OK, "info");
        CHECK(ci.validation && !ci.pipeline_cache && ci.max_buffer_size == (1u << 20),
              "options in info (validation %d, cache %d, max buffer %llu)", ci.validation,
              ci.pipeline_cache, (unsigned long long)ci.max_buffer_size);
        CHECK(strstr(ci.toggles, "-skip_validation") != NULL, "user toggles applied: %s", ci.toggles);
        check_add(ctx, "options");
        check_add(ctx, "options, again (compiled anew)");
        int64_t big = (1 << 20) / 4 + 1;
        wt_tensor *t = NULL;
        wt_status s = wt_tensor_zeros(ctx, WT_F32, 1, &big, &t);
        CHECK(s == WT_ERR_OUT_OF_MEMORY && !t, "past max_buffer_size: %s", wt_status_string(s));
        wt_context_destroy(ctx);
    }
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    if (!strcmp(mode, "choice")) {
        test_choice();
        test_options_rejected();
    } else if (!strcmp(mode, "gles")) {
        test_gles();
    } else if (!strcmp(mode, "vulkan")) {
        test_vulkan();
    } else {
        fprintf(stderr, "usage: runtime_device choice|gles|vulkan\n");
        return 2;
    }
    return test_summary(mode);
}
