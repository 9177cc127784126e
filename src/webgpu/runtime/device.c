/* Device creation and device-level errors. Errors Dawn reports through
 * callbacks are recorded in the context and returned by the next call;
 * errors of calls that can fail for the caller's reasons (shader compile,
 * buffer creation) are caught with error scopes instead. */
#include "webgpu/wg_runtime.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <pthread.h>
#include <string.h>

static void record_error(wg_context *w, wt_status st, const char *what, WGPUStringView message)
{
    if (w->pending_status != WT_OK)
        return; /* keep the first: later errors tend to be consequences */
    char text[sizeof w->pending_message - 64];
    wg_copy_string(text, sizeof text, message);
    snprintf(w->pending_message, sizeof w->pending_message, "webgpu: %s: %s", what, text);
    w->pending_status = st;
}

static void on_device_lost(const WGPUDevice *device, WGPUDeviceLostReason reason,
                           WGPUStringView message, void *userdata1, void *userdata2)
{
    (void)device;
    (void)userdata2;
    wg_context *w = userdata1;
    /* Destroyed / cancelled: our own teardown, not an error, unless the
     * device was destroyed on purpose to test recovery. */
    if (reason == WGPUDeviceLostReason_CallbackCancelled ||
        (reason == WGPUDeviceLostReason_Destroyed && !w->losing_on_purpose))
        return;
    w->lost = true;
    w->pending_status = WT_OK; /* device loss outranks an earlier error */
    record_error(w, WT_ERR_DEVICE_LOST, "device lost", message);
}

static void on_uncaptured_error(const WGPUDevice *device, WGPUErrorType type,
                                WGPUStringView message, void *userdata1, void *userdata2)
{
    (void)device;
    (void)userdata2;
    wg_context *w = userdata1;
    wt_status st = type == WGPUErrorType_OutOfMemory ? WT_ERR_OUT_OF_MEMORY : WT_ERR_BACKEND;
    const char *what = type == WGPUErrorType_Validation    ? "validation error"
                       : type == WGPUErrorType_OutOfMemory ? "out of device memory"
                       : type == WGPUErrorType_Internal    ? "internal error"
                                                           : "error";
    record_error(w, st, what, message);
}

wt_status wg_check_device(wt_context *ctx)
{
    wg_context *w = wg_ctx(ctx);
    if (w->pending_status == WT_OK)
        return WT_OK;
    /* The error stays, like device loss: an error the device reported on
     * its own (not in one of our scopes) means a submitted batch was
     * rejected and its ops never ran, so any later result of this context
     * could be silently stale. */
    wt_status st = wt_fail(w->pending_status, "%s", w->pending_message);
    wt_context_record_error(ctx, st);
    return st;
}

/* ------------------------------------------------------- error scopes */

typedef struct scope_result {
    WGPUPopErrorScopeStatus status;
    WGPUErrorType type;
    char message[1024];
} scope_result;

static void on_scope_popped(WGPUPopErrorScopeStatus status, WGPUErrorType type,
                            WGPUStringView message, void *userdata1, void *userdata2)
{
    (void)userdata2;
    scope_result *r = userdata1;
    r->status = status;
    r->type = type;
    wg_copy_string(r->message, sizeof r->message, message);
}

wt_status wg_pop_error_scope(wt_context *ctx, wt_status filter_status, const char *what)
{
    wg_context *w = wg_ctx(ctx);
    scope_result r;
    memset(&r, 0, sizeof r);
    WGPUPopErrorScopeCallbackInfo cb;
    memset(&cb, 0, sizeof cb);
    cb.mode = WGPUCallbackMode_WaitAnyOnly;
    cb.callback = on_scope_popped;
    cb.userdata1 = &r;
    WGPUFuture f = w->lib.p.DevicePopErrorScope(w->device, cb);
    wt_status st = wg_wait(&w->lib, w->instance, f, "an error scope");
    if (st != WT_OK)
        return st;
    if (r.status != WGPUPopErrorScopeStatus_Success)
        return wt_fail(WT_ERR_BACKEND, "webgpu: %s: popping an error scope failed: %s", what,
                       r.message);
    if (r.type == WGPUErrorType_NoError)
        return WT_OK;
    return wt_fail(filter_status, "webgpu: %s: %s", what, r.message);
}

/* ------------------------------------------------------------ toggles */

/* Dawn's device toggles that change speed. Our defaults:
 *  + disable_robustness: Dawn otherwise clamps every storage access in
 *    every shader; our kernels guard their own indices.
 *  - lazy_clear_resource_on_first_use: Dawn otherwise zero-fills each new
 *    buffer on first use. Nothing here reads a byte it has not written:
 *    tensors are written by an upload, a fill or an op before any read;
 *    what else is read (the rest of a word around an unaligned upload or
 *    readback, the rest of the last vec4 a kernel loads) is never used.
 *  - timestamp_quantization: timestamps at full resolution.
 * WT_DAWN_TOGGLES edits this set for measurements, a comma-separated list:
 * "+name" enables a toggle, "-name" disables it, "=name" leaves it to
 * Dawn's default, and "dawn" drops all of ours (Dawn's defaults only).
 * Example: WT_DAWN_TOGGLES="=disable_robustness,+skip_validation". */

#define WG_MAX_TOGGLES 16
#define WG_TOGGLE_NAME 64

typedef struct toggle_set {
    char names[WG_MAX_TOGGLES][WG_TOGGLE_NAME];
    signed char state[WG_MAX_TOGGLES]; /* +1 enable, -1 disable, 0 Dawn's choice */
    int count;
    const char *enabled[WG_MAX_TOGGLES], *disabled[WG_MAX_TOGGLES];
    size_t nenabled, ndisabled;
} toggle_set;

static void toggle_set_state(toggle_set *t, const char *name, size_t len, int state)
{
    if (len == 0 || len >= WG_TOGGLE_NAME)
        return;
    for (int i = 0; i < t->count; i++)
        if (strlen(t->names[i]) == len && memcmp(t->names[i], name, len) == 0) {
            t->state[i] = (signed char)state;
            return;
        }
    if (t->count == WG_MAX_TOGGLES)
        return;
    memcpy(t->names[t->count], name, len);
    t->names[t->count][len] = '\0';
    t->state[t->count++] = (signed char)state;
}

static void toggles_apply(toggle_set *t, const char *list)
{
    for (const char *s = list; s && *s;) {
        size_t len = strcspn(s, ", ");
        int state = +1;
        const char *name = s;
        size_t nlen = len;
        if (len > 0 && (s[0] == '+' || s[0] == '-' || s[0] == '=')) {
            state = s[0] == '+' ? +1 : s[0] == '-' ? -1 : 0;
            name++;
            nlen--;
        }
        if (nlen == 4 && memcmp(name, "dawn", 4) == 0)
            t->count = 0;
        else
            toggle_set_state(t, name, nlen, state);
        s += len;
        s += strspn(s, ", ");
    }
}

/* Ours, then WT_DAWN_TOGGLES, then the context's options; experimental
 * features need allow_unsafe_apis on the device too. */
static void toggles_choose(toggle_set *t, const wt_context_options *opts)
{
    memset(t, 0, sizeof *t);
    toggle_set_state(t, "disable_robustness", strlen("disable_robustness"), +1);
    toggle_set_state(t, "lazy_clear_resource_on_first_use",
                     strlen("lazy_clear_resource_on_first_use"), -1);
    toggle_set_state(t, "timestamp_quantization", strlen("timestamp_quantization"), -1);
    if (opts->experimental & WT_EXPERIMENTAL_SUBGROUP_MATRIX)
        toggle_set_state(t, "allow_unsafe_apis", strlen("allow_unsafe_apis"), +1);
    toggles_apply(t, wt_knob_text(WT_KNOB_DAWN_TOGGLES));
    toggles_apply(t, opts->toggles);
    for (int i = 0; i < t->count; i++) {
        if (t->state[i] > 0)
            t->enabled[t->nenabled++] = t->names[i];
        else if (t->state[i] < 0)
            t->disabled[t->ndisabled++] = t->names[i];
    }
}

/* One line naming the toggles asked for, for WT_WEBGPU_STATS. */
static void toggles_describe(const toggle_set *t, char *dst, size_t cap)
{
    size_t used = 0;
    dst[0] = '\0';
    for (int i = 0; i < t->count && used + 1 < cap; i++) {
        if (t->state[i] == 0)
            continue;
        int n = snprintf(dst + used, cap - used, "%s%c%s", used ? "," : "",
                         t->state[i] > 0 ? '+' : '-', t->names[i]);
        if (n < 0)
            break;
        used += (size_t)n;
    }
}

/* --------------------------------------------------------- the device */

/* A tuning switch from the environment: one of the allowed values, else
 * the default. */
static uint32_t env_choice(wt_knob id, unsigned fallback, const unsigned *allowed,
                           int nallowed)
{
    const char *env = wt_knob_text(id);
    if (!env || !*env)
        return fallback;
    char *end = NULL;
    unsigned long v = strtoul(env, &end, 10);
    for (int i = 0; end && *end == '\0' && i < nallowed; i++)
        if (v == allowed[i])
            return (uint32_t)v;
    return fallback;
}

/* The subgroup-matrix shapes, chained on the adapter's info. */
static void read_matrix_configs(wg_context *w)
{
    WGPUAdapterPropertiesSubgroupMatrixConfigs cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.chain.sType = WGPUSType_AdapterPropertiesSubgroupMatrixConfigs;
    WGPUAdapterInfo ai;
    memset(&ai, 0, sizeof ai);
    ai.nextInChain = &cfg.chain;
    if (w->lib.p.AdapterGetInfo(w->adapter, &ai) != WGPUStatus_Success)
        return;
    for (size_t i = 0; i < cfg.configCount && w->caps.matrix_config_count < 16; i++) {
        uint32_t n = w->caps.matrix_config_count++;
        w->caps.matrix_configs[n].component = cfg.configs[i].componentType;
        w->caps.matrix_configs[n].result = cfg.configs[i].resultComponentType;
        w->caps.matrix_configs[n].m = cfg.configs[i].M;
        w->caps.matrix_configs[n].n = cfg.configs[i].N;
        w->caps.matrix_configs[n].k = cfg.configs[i].K;
    }
    /* The configs are Dawn's memory: its own free function, where present;
     * the browser binding's are malloc'd. */
    void *sym = wg_library_symbol(&w->lib, "wgpuAdapterPropertiesSubgroupMatrixConfigsFreeMembers");
    if (w->info.api == WT_GPU_API_BROWSER) {
        free((void *)cfg.configs);
    } else if (sym) {
        void (*free_configs)(WGPUAdapterPropertiesSubgroupMatrixConfigs);
        memcpy(&free_configs, &sym, sizeof sym);
        free_configs(cfg);
    }
    w->lib.p.AdapterInfoFreeMembers(ai);
}

/* One line per feature: on or off, and why (wt_context_info.features). */
static void describe_features(wg_context *w, bool want_matrix)
{
    const wg_caps *c = &w->caps;
    bool nvidia_vk = w->info.vendor_id == 0x10de && w->info.api == WT_GPU_API_VULKAN;
    char matrix[256] = "";
    size_t used = 0;
    for (uint32_t i = 0; i < c->matrix_config_count && used < sizeof matrix; i++) {
        static const char *const kinds[] = {"?", "f32", "f16", "u32", "i32"};
        unsigned a = c->matrix_configs[i].component, r = c->matrix_configs[i].result;
        int n = snprintf(matrix + used, sizeof matrix - used, "%s%s->%s %ux%ux%u", i ? ", " : "",
                         a < 5 ? kinds[a] : "?", r < 5 ? kinds[r] : "?", c->matrix_configs[i].m,
                         c->matrix_configs[i].n, c->matrix_configs[i].k);
        if (n < 0)
            break;
        used += (size_t)n;
    }
    snprintf(w->features, sizeof w->features,
             "shader-f16: %s; subgroups: %s; timestamp-query: %s; subgroup-matrix: %s",
             c->shader_f16 ? (nvidia_vk ? "on (NVIDIA: adapter toggle vulkan_enable_f16_on_nvidia)"
                                        : "on")
                           : nvidia_vk ? "off (the adapter does not offer it; this Dawn build has "
                                         "no vulkan_enable_f16_on_nvidia toggle)"
                                       : "off (the adapter does not offer it)",
             c->subgroups ? "on" : "off (the adapter does not offer it)",
             w->timer.supported ? "on (GPU timers, profiling)"
                                : "off (the adapter does not offer it; host timing instead)",
             c->subgroup_matrix ? (matrix[0] ? matrix : "on")
             : !want_matrix ? "off (experimental: ask with WT_EXPERIMENTAL_SUBGROUP_MATRIX)"
                            : "off (asked for, but the adapter does not offer it)");
}

typedef struct device_request_result {
    WGPURequestDeviceStatus status;
    WGPUDevice device;
    char message[512];
} device_request_result;

static void on_device(WGPURequestDeviceStatus status, WGPUDevice device, WGPUStringView message,
                      void *userdata1, void *userdata2)
{
    (void)userdata2;
    device_request_result *r = userdata1;
    r->status = status;
    r->device = status == WGPURequestDeviceStatus_Success ? device : NULL;
    wg_copy_string(r->message, sizeof r->message, message);
}

wt_status wg_device_create(wt_context *ctx)
{
    wg_context *w = wg_ctx(ctx);
    const wgpu_procs *p = &w->lib.p;

    /* Ask for everything the adapter offers, so big buffers and large
     * workgroups work (the defaults are far below what GPUs have). */
    WGPULimits required;
    memset(&required, 0, sizeof required);
    if (p->AdapterGetLimits(w->adapter, &required) != WGPUStatus_Success)
        return wt_fail(WT_ERR_BACKEND, "webgpu: reading the adapter's limits failed");
    required.nextInChain = NULL;

    /* The matrix units whenever the adapter offers them (a browser, or
     * Dawn's Node addon, made with unsafe APIs on; natively, adapters show
     * them once the context asks with WT_EXPERIMENTAL_SUBGROUP_MATRIX,
     * which turns those APIs on). */
    bool want_matrix = (w->opts.experimental & WT_EXPERIMENTAL_SUBGROUP_MATRIX) != 0 || w->info.subgroup_matrix;
    w->matrix_wanted = want_matrix;
    WGPUFeatureName features[5];
    size_t nfeatures = 0;
    if (w->info.shader_f16)
        features[nfeatures++] = WGPUFeatureName_ShaderF16;
    if (w->info.subgroups)
        features[nfeatures++] = WGPUFeatureName_Subgroups;
    if (w->info.timestamp_query)
        features[nfeatures++] = WGPUFeatureName_TimestampQuery; /* wt_context_timer_* */
    if (want_matrix && w->info.subgroup_matrix)
        features[nfeatures++] = WGPUFeatureName_ChromiumExperimentalSubgroupMatrix;

    toggle_set toggles;
    toggles_choose(&toggles, &w->opts);
    toggles_describe(&toggles, w->toggles, sizeof w->toggles);
    WGPUDawnTogglesDescriptor toggles_desc;
    memset(&toggles_desc, 0, sizeof toggles_desc);
    toggles_desc.chain.sType = WGPUSType_DawnTogglesDescriptor;
    toggles_desc.enabledToggleCount = toggles.nenabled;
    toggles_desc.enabledToggles = toggles.enabled;
    toggles_desc.disabledToggleCount = toggles.ndisabled;
    toggles_desc.disabledToggles = toggles.disabled;

    WGPUDeviceDescriptor desc;
    memset(&desc, 0, sizeof desc);
    desc.nextInChain = &toggles_desc.chain;
    desc.label = (WGPUStringView){"webtensor", WGPU_STRLEN};
    desc.requiredFeatureCount = nfeatures;
    desc.requiredFeatures = features;
    desc.requiredLimits = &required;
    desc.deviceLostCallbackInfo.mode = WGPUCallbackMode_AllowSpontaneous;
    desc.deviceLostCallbackInfo.callback = on_device_lost;
    desc.deviceLostCallbackInfo.userdata1 = w;
    desc.uncapturedErrorCallbackInfo.callback = on_uncaptured_error;
    desc.uncapturedErrorCallbackInfo.userdata1 = w;

    device_request_result r;
    memset(&r, 0, sizeof r);
    WGPURequestDeviceCallbackInfo cb;
    memset(&cb, 0, sizeof cb);
    cb.mode = WGPUCallbackMode_WaitAnyOnly;
    cb.callback = on_device;
    cb.userdata1 = &r;
    WGPUFuture f = p->AdapterRequestDevice(w->adapter, &desc, cb);
    wt_status st = wg_wait(&w->lib, w->instance, f, "the device request");
    if (st != WT_OK)
        return st;
    if (!r.device)
        return wt_fail(WT_ERR_NO_DEVICE, "webgpu: creating a device on \"%s\" failed: %s",
                       w->info.name, r.message);
    w->device = r.device;
    w->queue = p->DeviceGetQueue(w->device);

    memset(&w->limits, 0, sizeof w->limits);
    if (p->DeviceGetLimits(w->device, &w->limits) != WGPUStatus_Success)
        return wt_fail(WT_ERR_BACKEND, "webgpu: reading the device's limits failed");
    w->caps.max_storage_binding = w->limits.maxStorageBufferBindingSize;
    w->caps.max_storage_buffers = w->limits.maxStorageBuffersPerShaderStage;
    w->caps.max_workgroups_per_dim = w->limits.maxComputeWorkgroupsPerDimension;
    w->caps.max_invocations = w->limits.maxComputeInvocationsPerWorkgroup;
    w->caps.max_workgroup_storage = w->limits.maxComputeWorkgroupStorageSize;
    w->caps.subgroups = p->DeviceHasFeature(w->device, WGPUFeatureName_Subgroups) != 0;
    w->caps.shader_f16 = p->DeviceHasFeature(w->device, WGPUFeatureName_ShaderF16) != 0;
    w->timer.supported = p->DeviceHasFeature(w->device, WGPUFeatureName_TimestampQuery) != 0;
    w->caps.subgroup_min_size = w->caps.subgroups ? w->info.subgroup_min_size : 0;
    w->caps.subgroup_max_size = w->caps.subgroups ? w->info.subgroup_max_size : 0;
    /* A CPU adapter (llvmpipe, SwiftShader) runs a workgroup's invocations
     * one SIMD batch after another and pays at every barrier: kernels pick
     * small workgroups for it. Dawn's OpenGL ES backend reports no adapter
     * type, hence the names. */
    w->caps.cpu_adapter = wg_adapter_is_software(&w->info);
    static const unsigned vpt_choices[] = {0, 1, 2, 4, 8}, tile_choices[] = {0, 32, 64};
    w->caps.vec4_per_thread = env_choice(WT_KNOB_EW_VEC4_PER_THREAD, 4, vpt_choices, 5);
    /* Binary ops carry two loads per unit; on the H200 8 vec4 per thread
     * ran a 2^28 add in 781/774 us against 800/804 us with 4 (two runs),
     * while exp with 8 was slower (929/983 against 563/561 us). */
    w->caps.binary_vec4_per_thread = env_choice(WT_KNOB_EW_BINARY_VEC4_PER_THREAD, 8, vpt_choices, 5);
    w->caps.transpose_tile = env_choice(WT_KNOB_TRANSPOSE_TILE, 32, tile_choices, 3);
    static const unsigned onoff[] = {0, 1};
    w->caps.transpose_vec4 = env_choice(WT_KNOB_TRANSPOSE_VEC4, 1, onoff, 2) != 0;
    /* A lower buffer limit the caller asked for (wt_context_options) is
     * ours to enforce: WebGPU raises requested limits below its defaults. */
    w->max_buffer = w->limits.maxBufferSize;
    if (w->opts.max_buffer_size && w->opts.max_buffer_size < w->max_buffer)
        w->max_buffer = w->opts.max_buffer_size;
    w->caps.subgroup_matrix =
        want_matrix && p->DeviceHasFeature(w->device, WGPUFeatureName_ChromiumExperimentalSubgroupMatrix);
    if (w->caps.subgroup_matrix)
        read_matrix_configs(w);
    describe_features(w, want_matrix);
    return WT_OK;
}

/* The kernels read the device's capabilities through this (wg.h). */
const wg_caps *wg_get_caps(const wt_context *ctx) { return &wg_ctx(ctx)->caps; }

/* Why the device cannot run the f16 kernels on the matrix units (the
 * products, conv2d, attention), or NULL when it can: they need f16,
 * subgroups of 32 invocations and an f16 -> f32 16 x 16 x 16 config. */
const char *wg_matrix_device_gap(const wg_caps *caps)
{
    if (!caps->subgroup_matrix) return "the device has no subgroup matrices";
    if (!caps->shader_f16) return "the device has no shader-f16";
    if (caps->subgroup_min_size != 32 || caps->subgroup_max_size != 32)
        return "subgroups are not all of 32 invocations";
    for (uint32_t i = 0; i < caps->matrix_config_count; i++)
        if (caps->matrix_configs[i].component == 2 && caps->matrix_configs[i].result == 1 &&
            caps->matrix_configs[i].m == 16 && caps->matrix_configs[i].n == 16 &&
            caps->matrix_configs[i].k == 16)
            return NULL;
    return "no f16->f32 16x16x16 config";
}

bool wg_matrix_asked(const wt_context *ctx)
{
    return wg_ctx((wt_context *)ctx)->matrix_wanted;
}

void wg_matrix_note(wt_context *ctx, const char *declined)
{
    wg_context *w = wg_ctx(ctx);
    if (!declined) {
        w->matrix.runs++;
        return;
    }
    w->matrix.declined++;
    w->matrix.why = declined;
    w->matrix.declined_now = true;
}
