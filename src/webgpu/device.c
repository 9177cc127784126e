/* Device creation and device-level errors. Errors Dawn reports through
 * callbacks are recorded in the context and returned by the next call;
 * errors of calls that can fail for the caller's reasons (shader compile,
 * buffer creation) are caught with error scopes instead. */
#include "webgpu/wg_runtime.h"

#include <stdio.h>
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
    /* Destroyed / cancelled: our own teardown, not an error. */
    if (reason == WGPUDeviceLostReason_Destroyed ||
        reason == WGPUDeviceLostReason_CallbackCancelled)
        return;
    wg_context *w = userdata1;
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
    wt_status st = wt_fail(w->pending_status, "%s", w->pending_message);
    if (!w->lost)
        w->pending_status = WT_OK;
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

/* --------------------------------------------------------- the device */

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

    WGPUFeatureName features[4];
    size_t nfeatures = 0;
    if (w->info.shader_f16)
        features[nfeatures++] = WGPUFeatureName_ShaderF16;
    if (w->info.subgroups)
        features[nfeatures++] = WGPUFeatureName_Subgroups;

    WGPUDeviceDescriptor desc;
    memset(&desc, 0, sizeof desc);
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
    w->caps.max_workgroups_per_dim = w->limits.maxComputeWorkgroupsPerDimension;
    w->caps.max_invocations = w->limits.maxComputeInvocationsPerWorkgroup;
    w->caps.max_workgroup_storage = w->limits.maxComputeWorkgroupStorageSize;
    w->caps.subgroups = p->DeviceHasFeature(w->device, WGPUFeatureName_Subgroups) != 0;
    w->caps.shader_f16 = p->DeviceHasFeature(w->device, WGPUFeatureName_ShaderF16) != 0;
    w->caps.subgroup_min_size = w->caps.subgroups ? w->info.subgroup_min_size : 0;
    w->caps.subgroup_max_size = w->caps.subgroups ? w->info.subgroup_max_size : 0;
    return WT_OK;
}
