/* Instance, adapters and device. There is no adapter enumeration in the
 * standard C API, so adapters are requested once per GPU API and power
 * preference and deduplicated. Dawn's Null adapter (which accepts every
 * command and computes nothing) is never offered. */
#include "webgpu/wg_runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <dlfcn.h>
#include <pthread.h>

wt_status wg_instance_create_with(const wg_library *lib, bool allow_unsafe, WGPUInstance *out)
{
    /* EGL_PLATFORM was set when the library was loaded (loader.c). */
    static const char *const unsafe[] = {"allow_unsafe_apis"};
    WGPUDawnTogglesDescriptor toggles;
    memset(&toggles, 0, sizeof toggles);
    toggles.chain.sType = WGPUSType_DawnTogglesDescriptor;
    toggles.enabledToggleCount = 1;
    toggles.enabledToggles = unsafe;
    WGPUInstanceDescriptor desc;
    memset(&desc, 0, sizeof desc);
    desc.nextInChain = allow_unsafe ? &toggles.chain : NULL;
    desc.capabilities.timedWaitAnyEnable = 1;
    desc.capabilities.timedWaitAnyMaxCount = 0;
    *out = lib->p.CreateInstance(&desc);
    if (!*out)
        return wt_fail(WT_ERR_NO_DEVICE, "webgpu: creating the WebGPU instance failed");
    return WT_OK;
}

wt_status wg_instance_create(const wg_library *lib, WGPUInstance *out)
{
    return wg_instance_create_with(lib, false, out);
}

/* ---------------------------------------------------------- requests */

/* Dawn's OpenGL ES backend dlopens "libEGL.so", a name only the EGL
 * development package provides; machines with just the runtime package
 * have "libEGL.so.1". Loading the runtime library here and handing Dawn
 * its eglGetProcAddress (Dawn's RequestAdapterOptionsGetGLProc) makes the
 * development package unnecessary. WT_EGL_LIB names another library. */
static pthread_once_t egl_once = PTHREAD_ONCE_INIT;
static void *(*egl_get_proc)(const char *name);
static char egl_note[256];

static void egl_load(void)
{
#ifdef WT_BROWSER_WEBGPU
    snprintf(egl_note, sizeof egl_note, "no EGL: the host's WebGPU is used");
#else
    const char *env = wt_knob_text(WT_KNOB_EGL_LIB);
    const char *names[] = {env && *env ? env : "libEGL.so.1", "libEGL.so"};
    for (size_t i = 0; i < 2 && !egl_get_proc; i++) {
        void *h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
        void *sym = h ? dlsym(h, "eglGetProcAddress") : NULL;
        if (sym) {
            memcpy(&egl_get_proc, &sym, sizeof sym);
            snprintf(egl_note, sizeof egl_note, "EGL from %s", names[i]);
        }
    }
    if (!egl_get_proc)
        snprintf(egl_note, sizeof egl_note, "no EGL library (libEGL.so.1) could be loaded");
#endif
}

const char *wg_egl_note(void)
{
    pthread_once(&egl_once, egl_load);
    return egl_note;
}

typedef struct adapter_request_result {
    WGPUAdapter adapter;
    WGPURequestAdapterStatus status;
} adapter_request_result;

static void on_adapter(WGPURequestAdapterStatus status, WGPUAdapter adapter,
                       WGPUStringView message, void *userdata1, void *userdata2)
{
    (void)message;
    (void)userdata2;
    adapter_request_result *r = userdata1;
    r->status = status;
    r->adapter = status == WGPURequestAdapterStatus_Success ? adapter : NULL;
}

/* The request options with their chain: adapter toggles (Dawn builds that
 * have vulkan_enable_f16_on_nvidia offer shader-f16 on NVIDIA's Vulkan
 * driver only with it; the pinned build has no such toggle, ignores the
 * name, and offers no shader-f16 on the H200 (seen 2026-11-22); the
 * subgroup-matrix feature needs the unsafe APIs and, on Vulkan, the
 * Vulkan memory model: only when asked for) and, for OpenGL ES, the EGL
 * entry point. */
typedef struct request_options {
    WGPURequestAdapterOptions opts;
    WGPUDawnTogglesDescriptor toggles;
    WGPURequestAdapterOptionsGetGLProc gl;
} request_options;

static void request_options_fill(request_options *r, WGPUBackendType backend,
                                 WGPUFeatureLevel level, WGPUPowerPreference power,
                                 bool experimental)
{
    static const char *const plain[] = {"vulkan_enable_f16_on_nvidia"};
    static const char *const unsafe[] = {"vulkan_enable_f16_on_nvidia", "allow_unsafe_apis",
                                         "use_vulkan_memory_model"};
    memset(r, 0, sizeof *r);
    r->toggles.chain.sType = WGPUSType_DawnTogglesDescriptor;
    r->toggles.enabledToggleCount = experimental ? 3 : 1;
    r->toggles.enabledToggles = experimental ? unsafe : plain;
    if (backend == WGPUBackendType_OpenGLES || backend == WGPUBackendType_OpenGL) {
        (void)wg_egl_note();
        if (egl_get_proc) {
            r->gl.chain.sType = WGPUSType_RequestAdapterOptionsGetGLProc;
            r->gl.getProc = egl_get_proc;
            r->toggles.chain.next = &r->gl.chain;
        }
    }
    r->opts.nextInChain = &r->toggles.chain;
    r->opts.backendType = backend;
    r->opts.featureLevel = level;
    r->opts.powerPreference = power;
}

static WGPUAdapter request_adapter(const wg_library *lib, WGPUInstance instance,
                                   WGPUBackendType backend, WGPUFeatureLevel level,
                                   WGPUPowerPreference power, bool experimental)
{
    request_options ro;
    request_options_fill(&ro, backend, level, power, experimental);
    adapter_request_result r = {NULL, 0};
    WGPURequestAdapterCallbackInfo cb;
    memset(&cb, 0, sizeof cb);
    cb.mode = WGPUCallbackMode_WaitAnyOnly;
    cb.callback = on_adapter;
    cb.userdata1 = &r;
    WGPUFuture f = lib->p.InstanceRequestAdapter(instance, &ro.opts, cb);
    if (wg_wait(lib, instance, f, "an adapter request") != WT_OK)
        return NULL; /* no adapter of this kind; not an error for the caller */
    return r.adapter;
}

/* Every adapter of one backend. The standard API hands out one adapter per
 * request, so two identical GPUs would look like one; Dawn's native
 * InstanceBase::EnumerateAdapters lists them all. It is C++: a member
 * function returning std::vector<Ref<AdapterBase>>, which the x86-64 and
 * AArch64 C++ ABIs return through a hidden pointer passed before `this`
 * (a WGPUInstance is the InstanceBase); a Ref is one pointer holding one
 * reference (a WGPUAdapter we then own); the vector's storage is freed
 * with the C++ runtime's operator delete. Where the symbols are missing
 * (another WebGPU implementation), *n is -1 and requests are used. */
typedef struct cxx_pointer_vector {
    void **begin, **end, **capacity;
} cxx_pointer_vector;

static void enumerate_backend(const wg_library *lib, WGPUInstance instance,
                              WGPUBackendType backend, WGPUFeatureLevel level, bool experimental,
                              WGPUAdapter *out, int cap, int *n)
{
    *n = -1;
    void *sym = wg_library_symbol(lib, "_ZN4dawn6native12InstanceBase17Enumerate"
                                       "AdaptersEPKNS0_21RequestAdapterOptionsE");
    /* The operator delete that pairs with the operator new Dawn called:
     * the global one when the process has one (a sanitizer's, which then
     * also served Dawn's new), else the C++ runtime Dawn brought. */
    void *del = sym ? wg_process_symbol("_ZdlPv") : NULL;
    if (!del)
        del = wg_library_symbol(lib, "_ZdlPv");
    if (!sym || !del || wt_knob_text(WT_KNOB_NO_ENUMERATE))
        return;
    void (*enumerate)(cxx_pointer_vector *, WGPUInstance, const WGPURequestAdapterOptions *);
    void (*cxx_delete)(void *);
    memcpy(&enumerate, &sym, sizeof sym);
    memcpy(&cxx_delete, &del, sizeof del);
    request_options ro;
    request_options_fill(&ro, backend, level, WGPUPowerPreference_HighPerformance, experimental);
    cxx_pointer_vector v = {NULL, NULL, NULL};
    enumerate(&v, instance, &ro.opts);
    *n = 0;
    for (void **p = v.begin; p && p < v.end; p++) {
        if (*n < cap)
            out[(*n)++] = (WGPUAdapter)*p;
        else
            lib->p.AdapterRelease((WGPUAdapter)*p);
    }
    if (v.begin)
        cxx_delete(v.begin);
}

/* ------------------------------------------------------------- info */

static bool api_of_backend(WGPUBackendType backend, wt_gpu_api *api)
{
    switch (backend) {
    case WGPUBackendType_Vulkan: *api = WT_GPU_API_VULKAN; return true;
    case WGPUBackendType_OpenGLES:
    case WGPUBackendType_OpenGL: *api = WT_GPU_API_OPENGLES; return true;
    case WGPUBackendType_Metal: *api = WT_GPU_API_METAL; return true;
    case WGPUBackendType_D3D12: *api = WT_GPU_API_D3D12; return true;
#ifdef WT_BROWSER_WEBGPU
    case WGPUBackendType_WebGPU: *api = WT_GPU_API_BROWSER; return true; /* the host's */
#endif
    default: return false; /* Null, D3D11, WebGPU-on-WebGPU: not offered */
    }
}

static wt_adapter_type type_of_adapter(WGPUAdapterType t)
{
    switch (t) {
    case WGPUAdapterType_DiscreteGPU: return WT_ADAPTER_DISCRETE_GPU;
    case WGPUAdapterType_IntegratedGPU: return WT_ADAPTER_INTEGRATED_GPU;
    case WGPUAdapterType_CPU: return WT_ADAPTER_CPU;
    default: return WT_ADAPTER_UNKNOWN;
    }
}

/* The device-local heaps' total, where Dawn reports heaps; 0 otherwise. */
static uint64_t device_local_bytes(const wg_library *lib, WGPUAdapter adapter)
{
    if (!lib->p.AdapterHasFeature(adapter, WGPUFeatureName_AdapterPropertiesMemoryHeaps))
        return 0;
    WGPUAdapterPropertiesMemoryHeaps heaps;
    memset(&heaps, 0, sizeof heaps);
    heaps.chain.sType = WGPUSType_AdapterPropertiesMemoryHeaps;
    WGPUAdapterInfo ai;
    memset(&ai, 0, sizeof ai);
    ai.nextInChain = &heaps.chain;
    if (lib->p.AdapterGetInfo(adapter, &ai) != WGPUStatus_Success)
        return 0;
    uint64_t total = 0;
    for (size_t i = 0; heaps.heapInfo && i < heaps.heapCount && i < 64; i++)
        if (heaps.heapInfo[i].properties & WGPUHeapProperty_DeviceLocal)
            total += heaps.heapInfo[i].size;
    void *sym = wg_library_symbol(lib, "wgpuAdapterPropertiesMemoryHeapsFreeMembers");
    if (sym) {
        void (*free_heaps)(WGPUAdapterPropertiesMemoryHeaps);
        memcpy(&free_heaps, &sym, sizeof sym);
        free_heaps(heaps);
    }
    lib->p.AdapterInfoFreeMembers(ai);
    return total;
}

/* Fills info; false for an adapter that must not be used (the Null one). */
static bool describe_adapter(const wg_library *lib, WGPUAdapter adapter, wt_adapter_info *info)
{
    memset(info, 0, sizeof *info);
    WGPUAdapterInfo ai;
    memset(&ai, 0, sizeof ai);
    if (lib->p.AdapterGetInfo(adapter, &ai) != WGPUStatus_Success)
        return false;
    wt_gpu_api api;
    bool usable = api_of_backend(ai.backendType, &api);
    wg_copy_string(info->name, sizeof info->name, ai.device);
    wg_copy_string(info->vendor, sizeof info->vendor, ai.vendor);
    wg_copy_string(info->architecture, sizeof info->architecture, ai.architecture);
    wg_copy_string(info->driver, sizeof info->driver, ai.description);
    if (!info->name[0])
        snprintf(info->name, sizeof info->name, "%s", info->driver);
    /* Dawn's Null adapter: backend Null, named "Null backend". */
    if (strncasecmp(info->name, "null", 4) == 0)
        usable = false;
    info->vendor_id = ai.vendorID;
    info->device_id = ai.deviceID;
    info->api = usable ? api : WT_GPU_API_AUTO;
    info->type = type_of_adapter(ai.adapterType);
    info->subgroup_min_size = ai.subgroupMinSize;
    info->subgroup_max_size = ai.subgroupMaxSize;
    lib->p.AdapterInfoFreeMembers(ai);
    if (!usable)
        return false;

    WGPULimits lim;
    memset(&lim, 0, sizeof lim);
    if (lib->p.AdapterGetLimits(adapter, &lim) != WGPUStatus_Success)
        return false;
    info->max_buffer_size = lim.maxBufferSize;
    info->max_storage_buffer_binding_size = lim.maxStorageBufferBindingSize;
    info->max_compute_workgroup_storage_size = lim.maxComputeWorkgroupStorageSize;
    info->max_compute_invocations_per_workgroup = lim.maxComputeInvocationsPerWorkgroup;
    info->max_compute_workgroups_per_dimension = lim.maxComputeWorkgroupsPerDimension;
    info->max_storage_buffers_per_shader_stage = lim.maxStorageBuffersPerShaderStage;

    info->compatibility_mode =
        !lib->p.AdapterHasFeature(adapter, WGPUFeatureName_CoreFeaturesAndLimits);
    info->shader_f16 = lib->p.AdapterHasFeature(adapter, WGPUFeatureName_ShaderF16);
    info->subgroups = lib->p.AdapterHasFeature(adapter, WGPUFeatureName_Subgroups);
    info->timestamp_query = lib->p.AdapterHasFeature(adapter, WGPUFeatureName_TimestampQuery);
    info->subgroup_matrix =
        lib->p.AdapterHasFeature(adapter, WGPUFeatureName_ChromiumExperimentalSubgroupMatrix);
    if (!info->subgroups)
        info->subgroup_min_size = info->subgroup_max_size = 0;
    info->memory_bytes = device_local_bytes(lib, adapter);
    return true;
}

bool wg_adapter_is_software(const wt_adapter_info *info)
{
    /* Dawn's OpenGL ES backend reports no adapter type, hence the names. */
    if (info->type == WT_ADAPTER_CPU)
        return true;
    return info->type == WT_ADAPTER_UNKNOWN &&
           (strstr(info->name, "llvmpipe") || strstr(info->name, "lavapipe") ||
            strstr(info->name, "softpipe") || strstr(info->name, "SwiftShader"));
}

/* Lower is better: real GPUs (discrete first, or integrated first for low
 * power), then GPUs of unknown type, then software renderers; native APIs
 * before OpenGL ES (compatibility mode has fewer features). */
static int adapter_rank(const wt_adapter_info *info, wt_power_preference power)
{
    int type_rank = wg_adapter_is_software(info)                ? 3
                    : info->type == WT_ADAPTER_DISCRETE_GPU     ? (power == WT_POWER_LOW_POWER ? 1 : 0)
                    : info->type == WT_ADAPTER_INTEGRATED_GPU   ? (power == WT_POWER_LOW_POWER ? 0 : 1)
                                                                : 2;
    return type_rank * 2 + (info->api == WT_GPU_API_OPENGLES ? 1 : 0);
}

static bool same_adapter(const wt_adapter_info *a, const wt_adapter_info *b)
{
    return a->api == b->api && a->device_id == b->device_id && a->vendor_id == b->vendor_id &&
           strcmp(a->name, b->name) == 0;
}

#define WG_MAX_ENUMERATED 32

typedef struct request_plan {
    WGPUBackendType backend;
    WGPUFeatureLevel level;
    wt_gpu_api api; /* AUTO: any */
} request_plan;

wt_status wg_adapters_enumerate(const wg_library *lib, WGPUInstance instance,
                                const wg_adapter_query *q, wg_adapter_entry **out, int *count)
{
    const wt_gpu_api gpu_api = q->gpu_api;
    static const request_plan plans[] = {
        {WGPUBackendType_Vulkan, WGPUFeatureLevel_Core, WT_GPU_API_VULKAN},
        {WGPUBackendType_Metal, WGPUFeatureLevel_Core, WT_GPU_API_METAL},
        {WGPUBackendType_D3D12, WGPUFeatureLevel_Core, WT_GPU_API_D3D12},
        {WGPUBackendType_Undefined, WGPUFeatureLevel_Core, WT_GPU_API_AUTO},
        {WGPUBackendType_OpenGLES, WGPUFeatureLevel_Compatibility, WT_GPU_API_OPENGLES},
    };
    static const WGPUPowerPreference powers[] = {WGPUPowerPreference_HighPerformance,
                                                 WGPUPowerPreference_LowPower};
    *out = NULL;
    *count = 0;
    int cap = 16, n = 0;
    bool enumerated_any = false;
    wg_adapter_entry *list = calloc((size_t)cap, sizeof *list);
    if (!list)
        return wt_fail(WT_ERR_OUT_OF_MEMORY, "webgpu: out of host memory listing adapters");

    for (size_t i = 0; i < sizeof plans / sizeof plans[0]; i++) {
        if (gpu_api != WT_GPU_API_AUTO && plans[i].api != gpu_api &&
            plans[i].api != WT_GPU_API_AUTO)
            continue;
        /* Every adapter of the backend where Dawn can list them (identical
         * GPUs are distinct entries then); else one request per power
         * preference, deduplicated. */
        WGPUAdapter found[WG_MAX_ENUMERATED];
        int nfound = -1;
        bool listed = false;
        if (plans[i].backend != WGPUBackendType_Undefined)
            enumerate_backend(lib, instance, plans[i].backend, plans[i].level, q->experimental,
                              found, WG_MAX_ENUMERATED, &nfound);
        if (nfound >= 0)
            listed = true;
        else if (plans[i].backend == WGPUBackendType_Undefined && enumerated_any)
            continue; /* the backends were listed one by one already */
        else
            nfound = 0;
        for (size_t j = 0; !listed && j < sizeof powers / sizeof powers[0]; j++) {
            WGPUAdapter a = request_adapter(lib, instance, plans[i].backend, plans[i].level,
                                            powers[j], q->experimental);
            if (a)
                found[nfound++] = a;
        }
        enumerated_any = enumerated_any || listed;
        for (int f = 0; f < nfound; f++) {
            WGPUAdapter a = found[f];
            wt_adapter_info info;
            bool keep = describe_adapter(lib, a, &info) &&
                        (gpu_api == WT_GPU_API_AUTO || info.api == gpu_api);
            for (int k = 0; keep && !listed && k < n; k++)
                if (same_adapter(&list[k].info, &info))
                    keep = false;
            if (keep && n == cap) {
                wg_adapter_entry *grown = realloc(list, (size_t)cap * 2 * sizeof *list);
                if (!grown) {
                    for (int r = f; r < nfound; r++)
                        lib->p.AdapterRelease(found[r]);
                    wg_adapters_release(lib, list, n);
                    return wt_fail(WT_ERR_OUT_OF_MEMORY,
                                   "webgpu: out of host memory listing adapters");
                }
                list = grown;
                cap *= 2;
            }
            if (!keep) {
                lib->p.AdapterRelease(a);
                continue;
            }
            list[n].adapter = a;
            list[n].info = info;
            n++;
        }
    }
    /* Stable insertion sort by rank, so request order breaks ties. */
    for (int i = 1; i < n; i++) {
        wg_adapter_entry e = list[i];
        int j = i - 1;
        while (j >= 0 && adapter_rank(&list[j].info, q->power) > adapter_rank(&e.info, q->power)) {
            list[j + 1] = list[j];
            j--;
        }
        list[j + 1] = e;
    }
    /* AUTO takes the first adapter only when it is a real GPU: a software
     * renderer is slower than the CPU backend. */
    for (int i = 0; i < n; i++) {
        list[i].info.index = i;
        list[i].info.auto_choice = i == 0 && !wg_adapter_is_software(&list[i].info);
    }
    *out = list;
    *count = n;
    return WT_OK;
}

void wg_adapters_release(const wg_library *lib, wg_adapter_entry *list, int count)
{
    for (int i = 0; list && i < count; i++)
        if (list[i].adapter)
            lib->p.AdapterRelease(list[i].adapter);
    free(list);
}

/* Public listing: loads the library, lists, unloads. */
wt_status wt_webgpu_list_adapters(const wt_context_options *opts, wt_adapter_info *infos,
                                  int capacity, int *count)
{
    if (count)
        *count = 0;
    wg_library lib;
    wt_status st = wg_library_load(opts ? opts->webgpu_library : NULL, &lib);
    if (st != WT_OK)
        return st;
    bool experimental = opts && (opts->experimental & WT_EXPERIMENTAL_SUBGROUP_MATRIX);
    WGPUInstance instance = NULL;
    st = wg_instance_create_with(&lib, experimental, &instance);
    if (st != WT_OK) {
        wg_library_unload(&lib);
        return st;
    }
    wg_adapter_entry *list = NULL;
    int n = 0;
    wg_adapter_query q = {opts ? opts->gpu_api : WT_GPU_API_AUTO,
                          opts ? opts->power_preference : WT_POWER_DEFAULT, experimental};
    st = wg_adapters_enumerate(&lib, instance, &q, &list, &n);
    if (st == WT_OK) {
        for (int i = 0; infos && i < n && i < capacity; i++)
            infos[i] = list[i].info;
        if (count)
            *count = n;
    }
    wg_adapters_release(&lib, list, n);
    lib.p.InstanceRelease(instance);
    wg_library_unload(&lib);
    return st;
}
