/* Checks that src/webgpu/wgpu_abi.h matches the WebGPU library it is used
 * with. Compile time: sizes and offsets from the upstream webgpu.h
 * (webgpu-native/webgpu-headers; the instance descriptor from the
 * revision before instance features/limits, as the pinned Dawn has it).
 * Run time: values that only come out right when the layouts agree with
 * the loaded library. */
#include "webgpu/wg_runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if UINTPTR_MAX == 0xffffffffffffffffu
#define WG_ABI_SIZE(T, n) _Static_assert(sizeof(T) == (n), "sizeof " #T)
#define WG_ABI_OFFSET(T, f, n) _Static_assert(offsetof(T, f) == (n), "offsetof " #T "." #f)
#else /* the reference numbers are for 64-bit targets */
#define WG_ABI_SIZE(T, n) _Static_assert(1, "")
#define WG_ABI_OFFSET(T, f, n) _Static_assert(1, "")
#endif

WG_ABI_SIZE(WGPUInstanceCapabilities, 24);
WG_ABI_OFFSET(WGPUInstanceCapabilities, timedWaitAnyEnable, 8);
WG_ABI_OFFSET(WGPUInstanceCapabilities, timedWaitAnyMaxCount, 16);
WG_ABI_SIZE(WGPUInstanceDescriptor, 32);
WG_ABI_OFFSET(WGPUInstanceDescriptor, capabilities, 8);
WG_ABI_SIZE(WGPUStringView, 16);
WG_ABI_SIZE(WGPUChainedStruct, 16);
WG_ABI_SIZE(WGPUFuture, 8);
WG_ABI_SIZE(WGPUFutureWaitInfo, 16);
WG_ABI_OFFSET(WGPUFutureWaitInfo, completed, 8);
WG_ABI_SIZE(WGPURequestAdapterOptions, 32);
WG_ABI_OFFSET(WGPURequestAdapterOptions, featureLevel, 8);
WG_ABI_OFFSET(WGPURequestAdapterOptions, backendType, 20);
WG_ABI_OFFSET(WGPURequestAdapterOptions, compatibleSurface, 24);
WG_ABI_SIZE(WGPUAdapterInfo, 96);
WG_ABI_OFFSET(WGPUAdapterInfo, vendor, 8);
WG_ABI_OFFSET(WGPUAdapterInfo, description, 56);
WG_ABI_OFFSET(WGPUAdapterInfo, backendType, 72);
WG_ABI_OFFSET(WGPUAdapterInfo, adapterType, 76);
WG_ABI_OFFSET(WGPUAdapterInfo, vendorID, 80);
WG_ABI_OFFSET(WGPUAdapterInfo, deviceID, 84);
WG_ABI_OFFSET(WGPUAdapterInfo, subgroupMinSize, 88);
WG_ABI_OFFSET(WGPUAdapterInfo, subgroupMaxSize, 92);
WG_ABI_SIZE(WGPULimits, 152);
WG_ABI_OFFSET(WGPULimits, maxUniformBufferBindingSize, 64);
WG_ABI_OFFSET(WGPULimits, maxStorageBufferBindingSize, 72);
WG_ABI_OFFSET(WGPULimits, minUniformBufferOffsetAlignment, 80);
WG_ABI_OFFSET(WGPULimits, minStorageBufferOffsetAlignment, 84);
WG_ABI_OFFSET(WGPULimits, maxBufferSize, 96);
WG_ABI_OFFSET(WGPULimits, maxComputeWorkgroupStorageSize, 124);
WG_ABI_OFFSET(WGPULimits, maxComputeInvocationsPerWorkgroup, 128);
WG_ABI_OFFSET(WGPULimits, maxComputeWorkgroupSizeX, 132);
WG_ABI_OFFSET(WGPULimits, maxComputeWorkgroupsPerDimension, 144);
WG_ABI_OFFSET(WGPULimits, maxImmediateSize, 148);
WG_ABI_SIZE(WGPUSupportedFeatures, 16);
WG_ABI_SIZE(WGPURequestAdapterCallbackInfo, 40);
WG_ABI_OFFSET(WGPURequestAdapterCallbackInfo, mode, 8);
WG_ABI_OFFSET(WGPURequestAdapterCallbackInfo, callback, 16);
WG_ABI_OFFSET(WGPURequestAdapterCallbackInfo, userdata1, 24);
WG_ABI_OFFSET(WGPURequestAdapterCallbackInfo, userdata2, 32);
WG_ABI_SIZE(WGPUUncapturedErrorCallbackInfo, 32);
WG_ABI_OFFSET(WGPUUncapturedErrorCallbackInfo, callback, 8);
WG_ABI_SIZE(WGPUDeviceDescriptor, 144);
WG_ABI_OFFSET(WGPUDeviceDescriptor, requiredFeatureCount, 24);
WG_ABI_OFFSET(WGPUDeviceDescriptor, requiredLimits, 40);
WG_ABI_OFFSET(WGPUDeviceDescriptor, defaultQueue, 48);
WG_ABI_OFFSET(WGPUDeviceDescriptor, deviceLostCallbackInfo, 72);
WG_ABI_OFFSET(WGPUDeviceDescriptor, uncapturedErrorCallbackInfo, 112);
WG_ABI_SIZE(WGPUBufferDescriptor, 48);
WG_ABI_OFFSET(WGPUBufferDescriptor, usage, 24);
WG_ABI_OFFSET(WGPUBufferDescriptor, size, 32);
WG_ABI_OFFSET(WGPUBufferDescriptor, mappedAtCreation, 40);
WG_ABI_SIZE(WGPUShaderSourceWGSL, 32);
WG_ABI_OFFSET(WGPUShaderSourceWGSL, code, 16);
WG_ABI_SIZE(WGPUBufferBindingLayout, 24);
WG_ABI_OFFSET(WGPUBufferBindingLayout, hasDynamicOffset, 12);
WG_ABI_OFFSET(WGPUBufferBindingLayout, minBindingSize, 16);
WG_ABI_SIZE(WGPUSamplerBindingLayout, 16);
WG_ABI_SIZE(WGPUTextureBindingLayout, 24);
WG_ABI_SIZE(WGPUStorageTextureBindingLayout, 24);
WG_ABI_SIZE(WGPUBindGroupLayoutEntry, 120);
WG_ABI_OFFSET(WGPUBindGroupLayoutEntry, visibility, 16);
WG_ABI_OFFSET(WGPUBindGroupLayoutEntry, bindingArraySize, 24);
WG_ABI_OFFSET(WGPUBindGroupLayoutEntry, buffer, 32);
WG_ABI_OFFSET(WGPUBindGroupLayoutEntry, sampler, 56);
WG_ABI_OFFSET(WGPUBindGroupLayoutEntry, texture, 72);
WG_ABI_OFFSET(WGPUBindGroupLayoutEntry, storageTexture, 96);
WG_ABI_SIZE(WGPUBindGroupLayoutDescriptor, 40);
WG_ABI_OFFSET(WGPUBindGroupLayoutDescriptor, entries, 32);
WG_ABI_SIZE(WGPUBindGroupEntry, 56);
WG_ABI_OFFSET(WGPUBindGroupEntry, buffer, 16);
WG_ABI_OFFSET(WGPUBindGroupEntry, offset, 24);
WG_ABI_OFFSET(WGPUBindGroupEntry, size, 32);
WG_ABI_SIZE(WGPUBindGroupDescriptor, 48);
WG_ABI_OFFSET(WGPUBindGroupDescriptor, layout, 24);
WG_ABI_OFFSET(WGPUBindGroupDescriptor, entries, 40);
WG_ABI_SIZE(WGPUPipelineLayoutDescriptor, 48);
WG_ABI_OFFSET(WGPUPipelineLayoutDescriptor, bindGroupLayouts, 32);
WG_ABI_OFFSET(WGPUPipelineLayoutDescriptor, immediateSize, 40);
WG_ABI_SIZE(WGPUComputeState, 48);
WG_ABI_OFFSET(WGPUComputeState, entryPoint, 16);
WG_ABI_OFFSET(WGPUComputeState, constants, 40);
WG_ABI_SIZE(WGPUComputePipelineDescriptor, 80);
WG_ABI_OFFSET(WGPUComputePipelineDescriptor, layout, 24);
WG_ABI_OFFSET(WGPUComputePipelineDescriptor, compute, 32);
WG_ABI_SIZE(WGPUComputePassDescriptor, 32);
WG_ABI_OFFSET(WGPUComputePassDescriptor, timestampWrites, 24);
WG_ABI_SIZE(WGPUPassTimestampWrites, 24);
WG_ABI_OFFSET(WGPUPassTimestampWrites, querySet, 8);
WG_ABI_OFFSET(WGPUPassTimestampWrites, beginningOfPassWriteIndex, 16);
WG_ABI_OFFSET(WGPUPassTimestampWrites, endOfPassWriteIndex, 20);
WG_ABI_SIZE(WGPUQuerySetDescriptor, 32);
WG_ABI_OFFSET(WGPUQuerySetDescriptor, type, 24);
WG_ABI_OFFSET(WGPUQuerySetDescriptor, count, 28);

/* ------------------------------------------------------------ run time */

static int passed, failed;

static void check(bool ok, const char *what)
{
    if (ok) {
        passed++;
    } else {
        failed++;
        printf("FAIL: %s\n", what);
    }
}

static bool is_pow2(uint64_t x) { return x && !(x & (x - 1)); }

/* Valid UTF-8, no NUL inside, a sane length. */
static bool string_view_ok(WGPUStringView s)
{
    if (!s.data)
        return s.length == 0 || s.length == WGPU_STRLEN;
    size_t n = s.length == WGPU_STRLEN ? strlen(s.data) : s.length;
    if (n > 4096)
        return false;
    const unsigned char *p = (const unsigned char *)s.data;
    for (size_t i = 0; i < n;) {
        unsigned c = p[i];
        size_t extra = c < 0x80 ? 0 : (c >> 5) == 6 ? 1 : (c >> 4) == 14 ? 2 : (c >> 3) == 30 ? 3 : 9;
        if (c == 0 || extra == 9 || i + extra >= n + (extra ? 0 : 1))
            return false;
        for (size_t k = 1; k <= extra; k++)
            if ((p[i + k] & 0xC0) != 0x80)
                return false;
        i += extra + 1;
    }
    return true;
}

/* Bytes after sizeof(T) in a guarded buffer stay untouched when the
 * library's struct is not larger than ours. */
#define GUARD 0xA5
static bool guard_intact(const unsigned char *buf, size_t used, size_t total)
{
    for (size_t i = used; i < total; i++)
        if (buf[i] != GUARD)
            return false;
    return true;
}

typedef struct callback_seen {
    int calls;
    void *userdata2;
    uint32_t status;
    WGPUAdapter adapter;
    WGPUDevice device;
    uint32_t error_type;
    char message[512];
} callback_seen;

static void on_adapter(WGPURequestAdapterStatus status, WGPUAdapter adapter,
                       WGPUStringView message, void *u1, void *u2)
{
    (void)message;
    callback_seen *s = u1;
    s->calls++;
    s->userdata2 = u2;
    s->status = status;
    s->adapter = adapter;
}

static void on_device(WGPURequestDeviceStatus status, WGPUDevice device, WGPUStringView message,
                      void *u1, void *u2)
{
    callback_seen *s = u1;
    s->calls++;
    s->userdata2 = u2;
    s->status = status;
    s->device = device;
    wg_copy_string(s->message, sizeof s->message, message);
}

static void on_uncaptured(const WGPUDevice *device, WGPUErrorType type, WGPUStringView message,
                          void *u1, void *u2)
{
    (void)device;
    callback_seen *s = u1;
    s->calls++;
    s->userdata2 = u2;
    s->error_type = type;
    wg_copy_string(s->message, sizeof s->message, message);
}

static void on_scope(WGPUPopErrorScopeStatus status, WGPUErrorType type, WGPUStringView message,
                     void *u1, void *u2)
{
    callback_seen *s = u1;
    s->calls++;
    s->userdata2 = u2;
    s->status = status;
    s->error_type = type;
    wg_copy_string(s->message, sizeof s->message, message);
}

static void on_work_done(WGPUQueueWorkDoneStatus status, WGPUStringView message, void *u1,
                         void *u2)
{
    (void)message;
    callback_seen *s = u1;
    s->calls++;
    s->userdata2 = u2;
    s->status = status;
}

static int marker; /* its address tells userdata2 apart from garbage */

static void check_adapter(const wg_library *lib, WGPUAdapter adapter)
{
    const wgpu_procs *p = &lib->p;
    unsigned char buf[1024];
    memset(buf, GUARD, sizeof buf);
    WGPUAdapterInfo *info = (WGPUAdapterInfo *)buf;
    info->nextInChain = NULL;
    check(p->AdapterGetInfo(adapter, info) == WGPUStatus_Success, "AdapterGetInfo succeeds");
    check(guard_intact(buf, sizeof *info, sizeof buf), "AdapterGetInfo writes no more than sizeof(WGPUAdapterInfo)");
    check(string_view_ok(info->vendor) && string_view_ok(info->architecture) &&
              string_view_ok(info->device) && string_view_ok(info->description),
          "adapter info strings are valid UTF-8 without NUL");
    check(info->backendType >= WGPUBackendType_Null && info->backendType <= WGPUBackendType_OpenGLES,
          "adapter backendType is a known value");
    check(info->adapterType >= WGPUAdapterType_DiscreteGPU && info->adapterType <= WGPUAdapterType_Unknown,
          "adapter adapterType is a known value");
    check(info->subgroupMinSize <= info->subgroupMaxSize && info->subgroupMaxSize <= 1024 &&
              (info->subgroupMinSize == 0 || is_pow2(info->subgroupMinSize)),
          "subgroup sizes are ordered powers of two");
    char name[256];
    wg_copy_string(name, sizeof name, info->device);
    printf("adapter: %s (backend %u, type %u)\n", name, info->backendType, info->adapterType);
    p->AdapterInfoFreeMembers(*info);

    memset(buf, GUARD, sizeof buf);
    WGPULimits *lim = (WGPULimits *)buf;
    lim->nextInChain = NULL;
    check(p->AdapterGetLimits(adapter, lim) == WGPUStatus_Success, "AdapterGetLimits succeeds");
    check(guard_intact(buf, sizeof *lim, sizeof buf), "AdapterGetLimits writes no more than sizeof(WGPULimits)");
    check(lim->maxComputeWorkgroupSizeX >= 256, "maxComputeWorkgroupSizeX >= 256");
    check(lim->maxComputeInvocationsPerWorkgroup >= 256, "maxComputeInvocationsPerWorkgroup >= 256");
    check(lim->maxComputeWorkgroupsPerDimension >= 65535, "maxComputeWorkgroupsPerDimension >= 65535");
    check(lim->maxComputeWorkgroupStorageSize >= 16384, "maxComputeWorkgroupStorageSize >= 16384");
    check(is_pow2(lim->minStorageBufferOffsetAlignment) && lim->minStorageBufferOffsetAlignment >= 4 &&
              lim->minStorageBufferOffsetAlignment <= 256,
          "minStorageBufferOffsetAlignment is a power of two in [4, 256]");
    check(is_pow2(lim->minUniformBufferOffsetAlignment) && lim->minUniformBufferOffsetAlignment >= 4 &&
              lim->minUniformBufferOffsetAlignment <= 256,
          "minUniformBufferOffsetAlignment is a power of two in [4, 256]");
    check(lim->maxStorageBufferBindingSize >= (128u << 20) &&
              lim->maxBufferSize >= lim->maxStorageBufferBindingSize / 2,
          "maxStorageBufferBindingSize >= 128 MiB, maxBufferSize in step");
    check(lim->maxBindGroups >= 4 && lim->maxBindGroups <= 64, "maxBindGroups in [4, 64]");

    WGPUSupportedFeatures features;
    memset(&features, 0, sizeof features);
    p->AdapterGetFeatures(adapter, &features);
    bool features_ok = features.featureCount < 512;
    for (size_t i = 0; features_ok && i < features.featureCount; i++)
        features_ok = p->AdapterHasFeature(adapter, features.features[i]) != 0;
    check(features_ok, "every listed feature is reported by AdapterHasFeature");
    p->SupportedFeaturesFreeMembers(features);
}

static void check_device(const wg_library *lib, WGPUInstance instance, WGPUAdapter adapter)
{
    const wgpu_procs *p = &lib->p;
    WGPULimits want;
    memset(&want, 0, sizeof want);
    p->AdapterGetLimits(adapter, &want);
    want.nextInChain = NULL;
    callback_seen dev = {0}, err = {0};
    /* Feature numbers moved between header versions: a device with the
     * features must accept the WGSL that needs them. */
    WGPUFeatureName features[2];
    const char *enables[2];
    size_t nfeatures = 0;
    if (p->AdapterHasFeature(adapter, WGPUFeatureName_ShaderF16)) {
        enables[nfeatures] = "enable f16;\n@compute @workgroup_size(1) fn main() { var h: f16 = 1.0h; h = h + h; }\n";
        features[nfeatures++] = WGPUFeatureName_ShaderF16;
    }
    if (p->AdapterHasFeature(adapter, WGPUFeatureName_Subgroups)) {
        enables[nfeatures] = "enable subgroups;\n@compute @workgroup_size(64) fn main(@builtin(subgroup_size) s: u32) { }\n";
        features[nfeatures++] = WGPUFeatureName_Subgroups;
    }
    WGPUDeviceDescriptor desc;
    memset(&desc, 0, sizeof desc);
    desc.requiredFeatureCount = nfeatures;
    desc.requiredFeatures = features;
    desc.requiredLimits = &want;
    desc.uncapturedErrorCallbackInfo.callback = on_uncaptured;
    desc.uncapturedErrorCallbackInfo.userdata1 = &err;
    desc.uncapturedErrorCallbackInfo.userdata2 = &marker;
    WGPURequestDeviceCallbackInfo cb = {NULL, WGPUCallbackMode_WaitAnyOnly, on_device, &dev, &marker};
    WGPUFuture f = p->AdapterRequestDevice(adapter, &desc, cb);
    check(wg_wait(lib, instance, f, "device") == WT_OK && dev.calls == 1 &&
              dev.userdata2 == &marker && dev.status == WGPURequestDeviceStatus_Success && dev.device,
          "device request completes through WaitAny with userdata intact");
    if (!dev.device) {
        printf("  device: %s\n", dev.message);
        return;
    }
    WGPULimits got;
    memset(&got, 0, sizeof got);
    p->DeviceGetLimits(dev.device, &got);
    /* Only right when requiredLimits sits where Dawn reads it: defaults
     * are lower than what software and real GPUs offer. */
    check(got.maxComputeInvocationsPerWorkgroup == want.maxComputeInvocationsPerWorkgroup &&
              got.maxStorageBufferBindingSize == want.maxStorageBufferBindingSize &&
              got.maxBufferSize == want.maxBufferSize,
          "device limits equal the adapter limits that were required");

    /* An invalid buffer (MapRead with Storage): first inside an error
     * scope, then uncaptured. */
    WGPUBufferDescriptor bad;
    memset(&bad, 0, sizeof bad);
    bad.usage = WGPUBufferUsage_MapRead | WGPUBufferUsage_Storage;
    bad.size = 64;
    callback_seen scope = {0};
    p->DevicePushErrorScope(dev.device, WGPUErrorFilter_Validation);
    WGPUBuffer b = p->DeviceCreateBuffer(dev.device, &bad);
    WGPUPopErrorScopeCallbackInfo scb = {NULL, WGPUCallbackMode_WaitAnyOnly, on_scope, &scope, &marker};
    f = p->DevicePopErrorScope(dev.device, scb);
    check(wg_wait(lib, instance, f, "scope") == WT_OK && scope.calls == 1 &&
              scope.userdata2 == &marker && scope.error_type == WGPUErrorType_Validation &&
              scope.message[0],
          "error scope catches a validation error with a message");
    if (b)
        p->BufferRelease(b);
    b = p->DeviceCreateBuffer(dev.device, &bad);
    p->InstanceProcessEvents(instance);
    check(err.calls >= 1 && err.userdata2 == &marker && err.error_type == WGPUErrorType_Validation,
          "uncaptured validation error reaches its callback with userdata intact");
    if (b)
        p->BufferRelease(b);

    for (size_t i = 0; i < nfeatures; i++) {
        callback_seen compiled = {0};
        WGPUShaderSourceWGSL wgsl;
        memset(&wgsl, 0, sizeof wgsl);
        wgsl.chain.sType = WGPUSType_ShaderSourceWGSL;
        wgsl.code = (WGPUStringView){enables[i], WGPU_STRLEN};
        WGPUShaderModuleDescriptor mdesc;
        memset(&mdesc, 0, sizeof mdesc);
        mdesc.nextInChain = &wgsl.chain;
        p->DevicePushErrorScope(dev.device, WGPUErrorFilter_Validation);
        WGPUShaderModule m = p->DeviceCreateShaderModule(dev.device, &mdesc);
        WGPUPopErrorScopeCallbackInfo ccb = {NULL, WGPUCallbackMode_WaitAnyOnly, on_scope, &compiled, &marker};
        f = p->DevicePopErrorScope(dev.device, ccb);
        bool ok = wg_wait(lib, instance, f, "scope") == WT_OK &&
                  compiled.error_type == WGPUErrorType_NoError;
        if (!ok)
            printf("  feature 0x%x: %s\n", (unsigned)features[i], compiled.message);
        check(ok, features[i] == WGPUFeatureName_ShaderF16
                      ? "a device with ShaderF16 compiles `enable f16;`"
                      : "a device with Subgroups compiles `enable subgroups;`");
        if (m)
            p->ShaderModuleRelease(m);
    }

    WGPUQueue q = p->DeviceGetQueue(dev.device);
    callback_seen done = {0};
    WGPUQueueWorkDoneCallbackInfo qcb = {NULL, WGPUCallbackMode_WaitAnyOnly, on_work_done, &done, &marker};
    f = p->QueueOnSubmittedWorkDone(q, qcb);
    check(wg_wait(lib, instance, f, "queue") == WT_OK && done.calls == 1 &&
              done.userdata2 == &marker && done.status == WGPUQueueWorkDoneStatus_Success,
          "queue work-done callback (with message argument) keeps userdata intact");
    p->QueueRelease(q);
    p->DeviceDestroy(dev.device);
    p->DeviceRelease(dev.device);
    p->InstanceProcessEvents(instance);
}

/* Records n multiplications under a running timer, then ends it. */
static wt_status timed_muls(wt_context *ctx, const wt_tensor *a, const wt_tensor *b, int n,
                            double *seconds)
{
    wt_status st = WT_OK;
    for (int i = 0; st == WT_OK && i < n; i++) {
        wt_tensor *t = NULL;
        st = wt_mul(a, b, &t);
        wt_tensor_release(t);
    }
    wt_status end = wt_context_timer_end(ctx, seconds);
    return st != WT_OK ? st : end;
}

static void check_compute(void)
{
    wt_context_options o;
    wt_context_options_init(&o);
    o.backend = WT_BACKEND_WEBGPU;
    wt_context *ctx = NULL;
    wt_status st = wt_context_create(&o, &ctx);
    check(st == WT_OK, "a WebGPU context is created on a real adapter");
    if (st != WT_OK) {
        printf("  %s\n", wt_last_error());
        return;
    }
    int64_t n = 1000;
    float a[1000], b[1000], c[1000];
    for (int i = 0; i < 1000; i++) {
        a[i] = (float)i;
        b[i] = 0.5f * (float)i + 1.0f;
    }
    wt_tensor *ta = NULL, *tb = NULL, *tc = NULL;
    st = wt_tensor_from_data(ctx, WT_F32, 1, &n, a, &ta);
    if (st == WT_OK)
        st = wt_tensor_from_data(ctx, WT_F32, 1, &n, b, &tb);
    if (st == WT_OK)
        st = wt_mul(ta, tb, &tc);
    if (st == WT_OK)
        st = wt_tensor_read(tc, c, sizeof c);
    bool ok = st == WT_OK;
    for (int i = 0; ok && i < 1000; i++)
        ok = c[i] == a[i] * b[i];
    check(ok, "a multiplication runs on the device and reads back right");

    /* Timestamp queries: the value is only plausible when the query set
     * descriptor, the pass's timestampWrites and the resolve agree with
     * the library (a wrong layout is a validation error or garbage). */
    wt_adapter_info info;
    if (wt_context_adapter_info(ctx, &info) == WT_OK) {
        double one = 0, ten = 0;
        st = wt_context_timer_begin(ctx);
        if (!info.timestamp_query) {
            check(st == WT_ERR_UNSUPPORTED, "no timestamp-query: the GPU timer is unsupported");
        } else {
            st = st != WT_OK ? st : timed_muls(ctx, ta, tb, 1, &one);
            st = st != WT_OK ? st : wt_context_timer_begin(ctx);
            st = st != WT_OK ? st : timed_muls(ctx, ta, tb, 10, &ten);
            if (st != WT_OK)
                printf("  timer: %s\n", wt_last_error());
            printf("GPU timer: 1 op %.1f us, 10 ops %.1f us\n", one * 1e6, ten * 1e6);
            /* Positive, below a second, and more for more work (loosely:
             * tiny ops on a shared machine are noisy). */
            check(st == WT_OK && one > 0 && one < 1.0 && ten > one && ten < 1.0,
                  "the GPU timer measures timestamped passes: 0 < t(1 op) < t(10 ops) < 1 s");
        }
    }
    wt_tensor_release(ta);
    wt_tensor_release(tb);
    wt_tensor_release(tc);
    wt_context_destroy(ctx);
}

int main(void)
{
    wg_library lib;
    if (wg_library_load(NULL, &lib) != WT_OK) {
        printf("FAIL: the WebGPU library does not load: %s\n0 passed, 1 failed\n", wt_last_error());
        return 1;
    }
    WGPUInstance instance = NULL;
    check(wg_instance_create(&lib, &instance) == WT_OK, "instance with TimedWaitAny is created");
    if (!instance) {
        printf("%d passed, %d failed\n", passed, failed);
        return 1;
    }
    /* A request for any adapter: WaitAny with a timeout only works when the
     * instance descriptor enabled TimedWaitAny where Dawn reads it. */
    const WGPUBackendType backends[] = {WGPUBackendType_Vulkan, WGPUBackendType_OpenGLES};
    int adapters = 0;
    for (size_t i = 0; i < sizeof backends / sizeof backends[0]; i++) {
        WGPURequestAdapterOptions opts;
        memset(&opts, 0, sizeof opts);
        opts.backendType = backends[i];
        opts.featureLevel = backends[i] == WGPUBackendType_OpenGLES ? WGPUFeatureLevel_Compatibility
                                                                    : WGPUFeatureLevel_Core;
        callback_seen seen = {0};
        WGPURequestAdapterCallbackInfo cb = {NULL, WGPUCallbackMode_WaitAnyOnly, on_adapter, &seen, &marker};
        WGPUFuture f = lib.p.InstanceRequestAdapter(instance, &opts, cb);
        check(wg_wait(&lib, instance, f, "adapter") == WT_OK && seen.calls == 1 &&
                  seen.userdata2 == &marker,
              "adapter request completes through a timed WaitAny with userdata intact");
        if (seen.status != WGPURequestAdapterStatus_Success || !seen.adapter)
            continue;
        adapters++;
        check_adapter(&lib, seen.adapter);
        check_device(&lib, instance, seen.adapter);
        lib.p.AdapterRelease(seen.adapter);
    }
    check(adapters > 0, "at least one Vulkan or OpenGL ES adapter exists");
    lib.p.InstanceRelease(instance);
    wg_library_unload(&lib);
    check_compute();
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
