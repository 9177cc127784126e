/* The part of the standard webgpu.h C API (v1, as implemented by Dawn) that
 * the WebGPU backend uses, declared here because the implementation is
 * loaded with dlopen and ships no header.
 *
 * Struct layouts and enum values are an ABI contract with the loaded
 * library: field order and types follow webgpu-native/webgpu-headers of the
 * Dawn build in third_party/dawn (mid-2025: instance "capabilities",
 * BindGroupLayoutEntry.bindingArraySize, Limits.maxImmediateSize, the
 * feature numbering from before the renumbering). tests/test_abi.c checks them, at compile time
 * against the upstream header's sizes and offsets and at run time against
 * the library itself. Only the members and values used are declared.
 */
#ifndef WT_WGPU_ABI_H
#define WT_WGPU_ABI_H

#include <stddef.h>
#include <stdint.h>

/* ------------------------------------------------------------ handles */

typedef struct WGPUAdapterImpl *WGPUAdapter;
typedef struct WGPUBindGroupImpl *WGPUBindGroup;
typedef struct WGPUBindGroupLayoutImpl *WGPUBindGroupLayout;
typedef struct WGPUBufferImpl *WGPUBuffer;
typedef struct WGPUCommandBufferImpl *WGPUCommandBuffer;
typedef struct WGPUCommandEncoderImpl *WGPUCommandEncoder;
typedef struct WGPUComputePassEncoderImpl *WGPUComputePassEncoder;
typedef struct WGPUComputePipelineImpl *WGPUComputePipeline;
typedef struct WGPUDeviceImpl *WGPUDevice;
typedef struct WGPUInstanceImpl *WGPUInstance;
typedef struct WGPUPipelineLayoutImpl *WGPUPipelineLayout;
typedef struct WGPUQuerySetImpl *WGPUQuerySet;
typedef struct WGPUQueueImpl *WGPUQueue;
typedef struct WGPUShaderModuleImpl *WGPUShaderModule;

typedef uint32_t WGPUBool;
typedef uint64_t WGPUFlags;
typedef WGPUFlags WGPUBufferUsage;
typedef WGPUFlags WGPUMapMode;
typedef WGPUFlags WGPUShaderStage;

#define WGPU_STRLEN SIZE_MAX
#define WGPU_WHOLE_SIZE UINT64_MAX
#define WGPU_LIMIT_U32_UNDEFINED UINT32_MAX
#define WGPU_LIMIT_U64_UNDEFINED UINT64_MAX

/* -------------------------------------------------------------- enums
 * Plain uint32_t typedefs with #defined values: the C enums of webgpu.h are
 * 32-bit (their Force32 member), and this keeps the header free of enum
 * size questions. */

typedef uint32_t WGPUAdapterType;
#define WGPUAdapterType_DiscreteGPU 0x00000001u
#define WGPUAdapterType_IntegratedGPU 0x00000002u
#define WGPUAdapterType_CPU 0x00000003u
#define WGPUAdapterType_Unknown 0x00000004u

typedef uint32_t WGPUBackendType;
#define WGPUBackendType_Undefined 0x00000000u
#define WGPUBackendType_Null 0x00000001u
#define WGPUBackendType_WebGPU 0x00000002u
#define WGPUBackendType_D3D11 0x00000003u
#define WGPUBackendType_D3D12 0x00000004u
#define WGPUBackendType_Metal 0x00000005u
#define WGPUBackendType_Vulkan 0x00000006u
#define WGPUBackendType_OpenGL 0x00000007u
#define WGPUBackendType_OpenGLES 0x00000008u

typedef uint32_t WGPUBufferBindingType;
#define WGPUBufferBindingType_BindingNotUsed 0x00000000u
#define WGPUBufferBindingType_Undefined 0x00000001u
#define WGPUBufferBindingType_Uniform 0x00000002u
#define WGPUBufferBindingType_Storage 0x00000003u
#define WGPUBufferBindingType_ReadOnlyStorage 0x00000004u

typedef uint32_t WGPUCallbackMode;
#define WGPUCallbackMode_WaitAnyOnly 0x00000001u
#define WGPUCallbackMode_AllowProcessEvents 0x00000002u
#define WGPUCallbackMode_AllowSpontaneous 0x00000003u

typedef uint32_t WGPUDeviceLostReason;
#define WGPUDeviceLostReason_Unknown 0x00000001u
#define WGPUDeviceLostReason_Destroyed 0x00000002u
#define WGPUDeviceLostReason_CallbackCancelled 0x00000003u
#define WGPUDeviceLostReason_FailedCreation 0x00000004u

typedef uint32_t WGPUErrorFilter;
#define WGPUErrorFilter_Validation 0x00000001u
#define WGPUErrorFilter_OutOfMemory 0x00000002u
#define WGPUErrorFilter_Internal 0x00000003u

typedef uint32_t WGPUErrorType;
#define WGPUErrorType_NoError 0x00000001u
#define WGPUErrorType_Validation 0x00000002u
#define WGPUErrorType_OutOfMemory 0x00000003u
#define WGPUErrorType_Internal 0x00000004u
#define WGPUErrorType_Unknown 0x00000005u

typedef uint32_t WGPUFeatureLevel;
#define WGPUFeatureLevel_Undefined 0x00000000u
#define WGPUFeatureLevel_Compatibility 0x00000001u
#define WGPUFeatureLevel_Core 0x00000002u

/* Feature values of the pinned Dawn build: it still uses the numbering
 * from before webgpu-headers renumbered features (June 2025), so these
 * differ from the current upstream header (which has ShaderF16 0x0B,
 * Subgroups 0x12). Checked against the library: a device created with
 * 0x0A compiles `enable f16;`, with 0x11 `enable subgroups;`, and Dawn's
 * own messages name 0x00050037 ChromiumExperimentalSubgroupMatrix.
 * tests/test_abi.c repeats those checks. */
typedef uint32_t WGPUFeatureName;
#define WGPUFeatureName_TimestampQuery 0x00000003u
#define WGPUFeatureName_ShaderF16 0x0000000Au
#define WGPUFeatureName_Subgroups 0x00000011u
#define WGPUFeatureName_CoreFeaturesAndLimits 0x00000012u
#define WGPUFeatureName_ChromiumExperimentalSubgroupMatrix 0x00050037u

typedef uint32_t WGPUMapAsyncStatus;
#define WGPUMapAsyncStatus_Success 0x00000001u
#define WGPUMapAsyncStatus_CallbackCancelled 0x00000002u
#define WGPUMapAsyncStatus_Error 0x00000003u
#define WGPUMapAsyncStatus_Aborted 0x00000004u

typedef uint32_t WGPUPopErrorScopeStatus;
#define WGPUPopErrorScopeStatus_Success 0x00000001u
#define WGPUPopErrorScopeStatus_CallbackCancelled 0x00000002u
#define WGPUPopErrorScopeStatus_Error 0x00000003u

typedef uint32_t WGPUPowerPreference;
#define WGPUPowerPreference_Undefined 0x00000000u
#define WGPUPowerPreference_LowPower 0x00000001u
#define WGPUPowerPreference_HighPerformance 0x00000002u

typedef uint32_t WGPUQueryType;
#define WGPUQueryType_Occlusion 0x00000001u
#define WGPUQueryType_Timestamp 0x00000002u

typedef uint32_t WGPUQueueWorkDoneStatus;
#define WGPUQueueWorkDoneStatus_Success 0x00000001u
#define WGPUQueueWorkDoneStatus_CallbackCancelled 0x00000002u
#define WGPUQueueWorkDoneStatus_Error 0x00000003u

typedef uint32_t WGPURequestAdapterStatus;
#define WGPURequestAdapterStatus_Success 0x00000001u
#define WGPURequestAdapterStatus_CallbackCancelled 0x00000002u
#define WGPURequestAdapterStatus_Unavailable 0x00000003u
#define WGPURequestAdapterStatus_Error 0x00000004u

typedef uint32_t WGPURequestDeviceStatus;
#define WGPURequestDeviceStatus_Success 0x00000001u
#define WGPURequestDeviceStatus_CallbackCancelled 0x00000002u
#define WGPURequestDeviceStatus_Error 0x00000003u

typedef uint32_t WGPUStatus;
#define WGPUStatus_Success 0x00000001u
#define WGPUStatus_Error 0x00000002u

typedef uint32_t WGPUSType;
#define WGPUSType_ShaderSourceWGSL 0x00000002u
#define WGPUSType_DawnTogglesDescriptor 0x0005000Au
#define WGPUSType_AdapterPropertiesSubgroupMatrixConfigs 0x0005003Bu
/* Dawn: {chain, getProc, display} on WGPURequestAdapterOptions; lets the
 * OpenGL ES backend use an EGL the caller loaded (0x0005000D in every Dawn
 * header since the v1 API). */
#define WGPUSType_RequestAdapterOptionsGetGLProc 0x0005000Du

typedef uint32_t WGPUWaitStatus;
#define WGPUWaitStatus_Success 0x00000001u
#define WGPUWaitStatus_TimedOut 0x00000002u
#define WGPUWaitStatus_Error 0x00000003u

#define WGPUBufferUsage_MapRead ((WGPUBufferUsage)0x0001)
#define WGPUBufferUsage_MapWrite ((WGPUBufferUsage)0x0002)
#define WGPUBufferUsage_CopySrc ((WGPUBufferUsage)0x0004)
#define WGPUBufferUsage_CopyDst ((WGPUBufferUsage)0x0008)
#define WGPUBufferUsage_Uniform ((WGPUBufferUsage)0x0040)
#define WGPUBufferUsage_Storage ((WGPUBufferUsage)0x0080)
#define WGPUBufferUsage_QueryResolve ((WGPUBufferUsage)0x0200)

#define WGPUMapMode_Read ((WGPUMapMode)0x0001)
#define WGPUMapMode_Write ((WGPUMapMode)0x0002)

#define WGPUShaderStage_Compute ((WGPUShaderStage)0x0004)

/* ------------------------------------------------------------ structs */

typedef struct WGPUStringView {
    const char *data;
    size_t length; /* WGPU_STRLEN: nul-terminated */
} WGPUStringView;

typedef struct WGPUChainedStruct {
    struct WGPUChainedStruct *next;
    WGPUSType sType;
} WGPUChainedStruct;

typedef struct WGPUFuture {
    uint64_t id;
} WGPUFuture;

typedef struct WGPUFutureWaitInfo {
    WGPUFuture future;
    WGPUBool completed;
} WGPUFutureWaitInfo;

typedef struct WGPUInstanceCapabilities {
    WGPUChainedStruct *nextInChain;
    WGPUBool timedWaitAnyEnable;
    size_t timedWaitAnyMaxCount;
} WGPUInstanceCapabilities;

typedef struct WGPUInstanceDescriptor {
    WGPUChainedStruct *nextInChain;
    WGPUInstanceCapabilities capabilities;
} WGPUInstanceDescriptor;

/* Dawn's toggles, chained on instance/adapter-options/device descriptors. */
typedef struct WGPUDawnTogglesDescriptor {
    WGPUChainedStruct chain;
    size_t enabledToggleCount;
    const char *const *enabledToggles;
    size_t disabledToggleCount;
    const char *const *disabledToggles;
} WGPUDawnTogglesDescriptor;

/* Chained on WGPUAdapterInfo (output) when the adapter has the
 * subgroup-matrix feature; freed with
 * wgpuAdapterPropertiesSubgroupMatrixConfigsFreeMembers. Component types:
 * 1 f32, 2 f16, 3 u32, 4 i32 (and 8-bit kinds in later Dawn). */
typedef struct WGPUSubgroupMatrixConfig {
    uint32_t componentType;
    uint32_t resultComponentType;
    uint32_t M, N, K;
} WGPUSubgroupMatrixConfig;

typedef struct WGPUAdapterPropertiesSubgroupMatrixConfigs {
    WGPUChainedStruct chain;
    size_t configCount;
    const WGPUSubgroupMatrixConfig *configs;
} WGPUAdapterPropertiesSubgroupMatrixConfigs;

/* Dawn's memory heaps, chained on WGPUAdapterInfo where the adapter has
 * the feature; freed with wgpuAdapterPropertiesMemoryHeapsFreeMembers.
 * In the pinned build: sType 0x00050013 (checked by probing every Dawn
 * sType on AdapterGetInfo), feature 0x00050017 (Dawn headers of the same
 * sType numbering say 0x00050014; this build's features sit 3 higher,
 * as ChromiumExperimentalSubgroupMatrix does). */
#define WGPUSType_AdapterPropertiesMemoryHeaps 0x00050013u
#define WGPUFeatureName_AdapterPropertiesMemoryHeaps 0x00050017u
#define WGPUHeapProperty_DeviceLocal 0x1u
typedef struct WGPUMemoryHeapInfo {
    uint64_t properties;
    uint64_t size;
} WGPUMemoryHeapInfo;
typedef struct WGPUAdapterPropertiesMemoryHeaps {
    WGPUChainedStruct chain;
    size_t heapCount;
    const WGPUMemoryHeapInfo *heapInfo;
} WGPUAdapterPropertiesMemoryHeaps;

typedef struct WGPURequestAdapterOptionsGetGLProc {
    WGPUChainedStruct chain;
    void *(*getProc)(const char *name); /* eglGetProcAddress */
    void *display;                      /* EGLDisplay; NULL: EGL_DEFAULT_DISPLAY */
} WGPURequestAdapterOptionsGetGLProc;

typedef struct WGPURequestAdapterOptions {
    WGPUChainedStruct *nextInChain;
    WGPUFeatureLevel featureLevel;
    WGPUPowerPreference powerPreference;
    WGPUBool forceFallbackAdapter;
    WGPUBackendType backendType;
    void *compatibleSurface;
} WGPURequestAdapterOptions;

typedef struct WGPUAdapterInfo {
    WGPUChainedStruct *nextInChain;
    WGPUStringView vendor;
    WGPUStringView architecture;
    WGPUStringView device;
    WGPUStringView description;
    WGPUBackendType backendType;
    WGPUAdapterType adapterType;
    uint32_t vendorID;
    uint32_t deviceID;
    uint32_t subgroupMinSize;
    uint32_t subgroupMaxSize;
} WGPUAdapterInfo;

typedef struct WGPULimits {
    WGPUChainedStruct *nextInChain;
    uint32_t maxTextureDimension1D;
    uint32_t maxTextureDimension2D;
    uint32_t maxTextureDimension3D;
    uint32_t maxTextureArrayLayers;
    uint32_t maxBindGroups;
    uint32_t maxBindGroupsPlusVertexBuffers;
    uint32_t maxBindingsPerBindGroup;
    uint32_t maxDynamicUniformBuffersPerPipelineLayout;
    uint32_t maxDynamicStorageBuffersPerPipelineLayout;
    uint32_t maxSampledTexturesPerShaderStage;
    uint32_t maxSamplersPerShaderStage;
    uint32_t maxStorageBuffersPerShaderStage;
    uint32_t maxStorageTexturesPerShaderStage;
    uint32_t maxUniformBuffersPerShaderStage;
    uint64_t maxUniformBufferBindingSize;
    uint64_t maxStorageBufferBindingSize;
    uint32_t minUniformBufferOffsetAlignment;
    uint32_t minStorageBufferOffsetAlignment;
    uint32_t maxVertexBuffers;
    uint64_t maxBufferSize;
    uint32_t maxVertexAttributes;
    uint32_t maxVertexBufferArrayStride;
    uint32_t maxInterStageShaderVariables;
    uint32_t maxColorAttachments;
    uint32_t maxColorAttachmentBytesPerSample;
    uint32_t maxComputeWorkgroupStorageSize;
    uint32_t maxComputeInvocationsPerWorkgroup;
    uint32_t maxComputeWorkgroupSizeX;
    uint32_t maxComputeWorkgroupSizeY;
    uint32_t maxComputeWorkgroupSizeZ;
    uint32_t maxComputeWorkgroupsPerDimension;
    uint32_t maxImmediateSize;
} WGPULimits;

typedef struct WGPUSupportedFeatures {
    size_t featureCount;
    const WGPUFeatureName *features;
} WGPUSupportedFeatures;

/* Callbacks: every async call takes a callback-info struct; the result is
 * waited for with wgpuInstanceWaitAny on the returned future. */
typedef void (*WGPURequestAdapterCallback)(WGPURequestAdapterStatus status, WGPUAdapter adapter,
                                           WGPUStringView message, void *userdata1,
                                           void *userdata2);
typedef void (*WGPURequestDeviceCallback)(WGPURequestDeviceStatus status, WGPUDevice device,
                                          WGPUStringView message, void *userdata1,
                                          void *userdata2);
typedef void (*WGPUDeviceLostCallback)(const WGPUDevice *device, WGPUDeviceLostReason reason,
                                       WGPUStringView message, void *userdata1, void *userdata2);
typedef void (*WGPUUncapturedErrorCallback)(const WGPUDevice *device, WGPUErrorType type,
                                            WGPUStringView message, void *userdata1,
                                            void *userdata2);
typedef void (*WGPUPopErrorScopeCallback)(WGPUPopErrorScopeStatus status, WGPUErrorType type,
                                          WGPUStringView message, void *userdata1,
                                          void *userdata2);
typedef void (*WGPUBufferMapCallback)(WGPUMapAsyncStatus status, WGPUStringView message,
                                      void *userdata1, void *userdata2);
typedef void (*WGPUQueueWorkDoneCallback)(WGPUQueueWorkDoneStatus status, WGPUStringView message,
                                          void *userdata1, void *userdata2);

#define WGPU_DECLARE_CALLBACK_INFO(Name, Callback) \
    typedef struct Name {                          \
        WGPUChainedStruct *nextInChain;            \
        WGPUCallbackMode mode;                     \
        Callback callback;                         \
        void *userdata1;                           \
        void *userdata2;                           \
    } Name

WGPU_DECLARE_CALLBACK_INFO(WGPURequestAdapterCallbackInfo, WGPURequestAdapterCallback);
WGPU_DECLARE_CALLBACK_INFO(WGPURequestDeviceCallbackInfo, WGPURequestDeviceCallback);
WGPU_DECLARE_CALLBACK_INFO(WGPUDeviceLostCallbackInfo, WGPUDeviceLostCallback);
WGPU_DECLARE_CALLBACK_INFO(WGPUPopErrorScopeCallbackInfo, WGPUPopErrorScopeCallback);
WGPU_DECLARE_CALLBACK_INFO(WGPUBufferMapCallbackInfo, WGPUBufferMapCallback);
WGPU_DECLARE_CALLBACK_INFO(WGPUQueueWorkDoneCallbackInfo, WGPUQueueWorkDoneCallback);

/* The one callback info without a mode: it fires whenever an error is not
 * captured by a scope. */
typedef struct WGPUUncapturedErrorCallbackInfo {
    WGPUChainedStruct *nextInChain;
    WGPUUncapturedErrorCallback callback;
    void *userdata1;
    void *userdata2;
} WGPUUncapturedErrorCallbackInfo;

typedef struct WGPUQueueDescriptor {
    WGPUChainedStruct *nextInChain;
    WGPUStringView label;
} WGPUQueueDescriptor;

typedef struct WGPUDeviceDescriptor {
    WGPUChainedStruct *nextInChain;
    WGPUStringView label;
    size_t requiredFeatureCount;
    const WGPUFeatureName *requiredFeatures;
    const WGPULimits *requiredLimits;
    WGPUQueueDescriptor defaultQueue;
    WGPUDeviceLostCallbackInfo deviceLostCallbackInfo;
    WGPUUncapturedErrorCallbackInfo uncapturedErrorCallbackInfo;
} WGPUDeviceDescriptor;

typedef struct WGPUBufferDescriptor {
    WGPUChainedStruct *nextInChain;
    WGPUStringView label;
    WGPUBufferUsage usage;
    uint64_t size;
    WGPUBool mappedAtCreation;
} WGPUBufferDescriptor;

typedef struct WGPUShaderModuleDescriptor {
    WGPUChainedStruct *nextInChain;
    WGPUStringView label;
} WGPUShaderModuleDescriptor;

typedef struct WGPUShaderSourceWGSL {
    WGPUChainedStruct chain;
    WGPUStringView code;
} WGPUShaderSourceWGSL;

typedef struct WGPUBufferBindingLayout {
    WGPUChainedStruct *nextInChain;
    WGPUBufferBindingType type;
    WGPUBool hasDynamicOffset;
    uint64_t minBindingSize;
} WGPUBufferBindingLayout;

/* Sampler/texture/storage-texture layouts are never used by compute
 * kernels here; they are declared by size only (all zero = not used). */
typedef struct WGPUSamplerBindingLayout {
    WGPUChainedStruct *nextInChain;
    uint32_t type;
} WGPUSamplerBindingLayout;

typedef struct WGPUTextureBindingLayout {
    WGPUChainedStruct *nextInChain;
    uint32_t sampleType;
    uint32_t viewDimension;
    WGPUBool multisampled;
} WGPUTextureBindingLayout;

typedef struct WGPUStorageTextureBindingLayout {
    WGPUChainedStruct *nextInChain;
    uint32_t access;
    uint32_t format;
    uint32_t viewDimension;
} WGPUStorageTextureBindingLayout;

typedef struct WGPUBindGroupLayoutEntry {
    WGPUChainedStruct *nextInChain;
    uint32_t binding;
    WGPUShaderStage visibility;
    uint32_t bindingArraySize;
    WGPUBufferBindingLayout buffer;
    WGPUSamplerBindingLayout sampler;
    WGPUTextureBindingLayout texture;
    WGPUStorageTextureBindingLayout storageTexture;
} WGPUBindGroupLayoutEntry;

typedef struct WGPUBindGroupLayoutDescriptor {
    WGPUChainedStruct *nextInChain;
    WGPUStringView label;
    size_t entryCount;
    const WGPUBindGroupLayoutEntry *entries;
} WGPUBindGroupLayoutDescriptor;

typedef struct WGPUBindGroupEntry {
    WGPUChainedStruct *nextInChain;
    uint32_t binding;
    WGPUBuffer buffer;
    uint64_t offset;
    uint64_t size;
    void *sampler;
    void *textureView;
} WGPUBindGroupEntry;

typedef struct WGPUBindGroupDescriptor {
    WGPUChainedStruct *nextInChain;
    WGPUStringView label;
    WGPUBindGroupLayout layout;
    size_t entryCount;
    const WGPUBindGroupEntry *entries;
} WGPUBindGroupDescriptor;

typedef struct WGPUPipelineLayoutDescriptor {
    WGPUChainedStruct *nextInChain;
    WGPUStringView label;
    size_t bindGroupLayoutCount;
    const WGPUBindGroupLayout *bindGroupLayouts;
    uint32_t immediateSize;
} WGPUPipelineLayoutDescriptor;

typedef struct WGPUConstantEntry WGPUConstantEntry;

typedef struct WGPUComputeState {
    WGPUChainedStruct *nextInChain;
    WGPUShaderModule module;
    WGPUStringView entryPoint;
    size_t constantCount;
    const WGPUConstantEntry *constants;
} WGPUComputeState;

typedef struct WGPUComputePipelineDescriptor {
    WGPUChainedStruct *nextInChain;
    WGPUStringView label;
    WGPUPipelineLayout layout;
    WGPUComputeState compute;
} WGPUComputePipelineDescriptor;

typedef struct WGPUCommandEncoderDescriptor {
    WGPUChainedStruct *nextInChain;
    WGPUStringView label;
} WGPUCommandEncoderDescriptor;

typedef struct WGPUCommandBufferDescriptor {
    WGPUChainedStruct *nextInChain;
    WGPUStringView label;
} WGPUCommandBufferDescriptor;

typedef struct WGPUQuerySetDescriptor {
    WGPUChainedStruct *nextInChain;
    WGPUStringView label;
    WGPUQueryType type;
    uint32_t count;
} WGPUQuerySetDescriptor;

/* Where a pass writes its start and end timestamps (indices into a
 * Timestamp query set; the two must differ). */
typedef struct WGPUPassTimestampWrites {
    WGPUChainedStruct *nextInChain;
    WGPUQuerySet querySet;
    uint32_t beginningOfPassWriteIndex;
    uint32_t endOfPassWriteIndex;
} WGPUPassTimestampWrites;

typedef struct WGPUComputePassDescriptor {
    WGPUChainedStruct *nextInChain;
    WGPUStringView label;
    const WGPUPassTimestampWrites *timestampWrites;
} WGPUComputePassDescriptor;

/* --------------------------------------------------------- functions
 * X-macro list: name, return type, parameter list. The loader resolves each
 * by name into a table of pointers of these types. */

#define WGPU_PROC_LIST(X)                                                                       \
    X(CreateInstance, WGPUInstance, (const WGPUInstanceDescriptor *descriptor))                 \
    X(InstanceRelease, void, (WGPUInstance instance))                                           \
    X(InstanceRequestAdapter, WGPUFuture,                                                       \
      (WGPUInstance instance, const WGPURequestAdapterOptions *options,                         \
       WGPURequestAdapterCallbackInfo callbackInfo))                                            \
    X(InstanceWaitAny, WGPUWaitStatus,                                                          \
      (WGPUInstance instance, size_t futureCount, WGPUFutureWaitInfo *futures,                  \
       uint64_t timeoutNS))                                                                     \
    X(InstanceProcessEvents, void, (WGPUInstance instance))                                     \
    X(AdapterGetInfo, WGPUStatus, (WGPUAdapter adapter, WGPUAdapterInfo *info))                 \
    X(AdapterInfoFreeMembers, void, (WGPUAdapterInfo info))                                     \
    X(AdapterGetLimits, WGPUStatus, (WGPUAdapter adapter, WGPULimits *limits))                  \
    X(AdapterHasFeature, WGPUBool, (WGPUAdapter adapter, WGPUFeatureName feature))              \
    X(AdapterGetFeatures, void, (WGPUAdapter adapter, WGPUSupportedFeatures *features))         \
    X(SupportedFeaturesFreeMembers, void, (WGPUSupportedFeatures features))                     \
    X(AdapterRequestDevice, WGPUFuture,                                                         \
      (WGPUAdapter adapter, const WGPUDeviceDescriptor *descriptor,                             \
       WGPURequestDeviceCallbackInfo callbackInfo))                                             \
    X(AdapterRelease, void, (WGPUAdapter adapter))                                              \
    X(DeviceGetLimits, WGPUStatus, (WGPUDevice device, WGPULimits *limits))                     \
    X(DeviceHasFeature, WGPUBool, (WGPUDevice device, WGPUFeatureName feature))                 \
    X(DeviceGetQueue, WGPUQueue, (WGPUDevice device))                                           \
    X(DevicePushErrorScope, void, (WGPUDevice device, WGPUErrorFilter filter))                  \
    X(DevicePopErrorScope, WGPUFuture,                                                          \
      (WGPUDevice device, WGPUPopErrorScopeCallbackInfo callbackInfo))                          \
    X(DeviceCreateBuffer, WGPUBuffer, (WGPUDevice device, const WGPUBufferDescriptor *desc))    \
    X(DeviceCreateShaderModule, WGPUShaderModule,                                               \
      (WGPUDevice device, const WGPUShaderModuleDescriptor *desc))                              \
    X(DeviceCreateBindGroupLayout, WGPUBindGroupLayout,                                         \
      (WGPUDevice device, const WGPUBindGroupLayoutDescriptor *desc))                           \
    X(DeviceCreateBindGroup, WGPUBindGroup,                                                     \
      (WGPUDevice device, const WGPUBindGroupDescriptor *desc))                                 \
    X(DeviceCreatePipelineLayout, WGPUPipelineLayout,                                           \
      (WGPUDevice device, const WGPUPipelineLayoutDescriptor *desc))                            \
    X(DeviceCreateComputePipeline, WGPUComputePipeline,                                         \
      (WGPUDevice device, const WGPUComputePipelineDescriptor *desc))                           \
    X(DeviceCreateQuerySet, WGPUQuerySet, (WGPUDevice device, const WGPUQuerySetDescriptor *desc)) \
    X(DeviceCreateCommandEncoder, WGPUCommandEncoder,                                           \
      (WGPUDevice device, const WGPUCommandEncoderDescriptor *desc))                            \
    X(DeviceDestroy, void, (WGPUDevice device))                                                 \
    X(DeviceRelease, void, (WGPUDevice device))                                                 \
    X(QueueSubmit, void, (WGPUQueue queue, size_t commandCount, const WGPUCommandBuffer *cmds)) \
    X(QueueWriteBuffer, void,                                                                   \
      (WGPUQueue queue, WGPUBuffer buffer, uint64_t offset, const void *data, size_t size))     \
    X(QueueOnSubmittedWorkDone, WGPUFuture,                                                     \
      (WGPUQueue queue, WGPUQueueWorkDoneCallbackInfo callbackInfo))                            \
    X(QueueRelease, void, (WGPUQueue queue))                                                    \
    X(BufferMapAsync, WGPUFuture,                                                               \
      (WGPUBuffer buffer, WGPUMapMode mode, size_t offset, size_t size,                         \
       WGPUBufferMapCallbackInfo callbackInfo))                                                 \
    X(BufferGetConstMappedRange, const void *, (WGPUBuffer buffer, size_t offset, size_t size)) \
    X(BufferGetMappedRange, void *, (WGPUBuffer buffer, size_t offset, size_t size))             \
    X(BufferUnmap, void, (WGPUBuffer buffer))                                                   \
    X(BufferDestroy, void, (WGPUBuffer buffer))                                                 \
    X(BufferRelease, void, (WGPUBuffer buffer))                                                 \
    X(QuerySetDestroy, void, (WGPUQuerySet querySet))                                           \
    X(QuerySetRelease, void, (WGPUQuerySet querySet))                                           \
    X(ShaderModuleRelease, void, (WGPUShaderModule module))                                     \
    X(BindGroupLayoutRelease, void, (WGPUBindGroupLayout layout))                               \
    X(BindGroupRelease, void, (WGPUBindGroup group))                                            \
    X(PipelineLayoutRelease, void, (WGPUPipelineLayout layout))                                 \
    X(ComputePipelineRelease, void, (WGPUComputePipeline pipeline))                             \
    X(CommandEncoderBeginComputePass, WGPUComputePassEncoder,                                   \
      (WGPUCommandEncoder encoder, const WGPUComputePassDescriptor *desc))                      \
    X(CommandEncoderCopyBufferToBuffer, void,                                                   \
      (WGPUCommandEncoder encoder, WGPUBuffer source, uint64_t sourceOffset,                    \
       WGPUBuffer destination, uint64_t destinationOffset, uint64_t size))                      \
    X(CommandEncoderResolveQuerySet, void,                                                      \
      (WGPUCommandEncoder encoder, WGPUQuerySet querySet, uint32_t firstQuery,                  \
       uint32_t queryCount, WGPUBuffer destination, uint64_t destinationOffset))                \
    X(CommandEncoderFinish, WGPUCommandBuffer,                                                  \
      (WGPUCommandEncoder encoder, const WGPUCommandBufferDescriptor *desc))                    \
    X(CommandEncoderRelease, void, (WGPUCommandEncoder encoder))                                \
    X(CommandBufferRelease, void, (WGPUCommandBuffer buffer))                                   \
    X(ComputePassEncoderSetPipeline, void,                                                      \
      (WGPUComputePassEncoder pass, WGPUComputePipeline pipeline))                              \
    X(ComputePassEncoderSetBindGroup, void,                                                     \
      (WGPUComputePassEncoder pass, uint32_t groupIndex, WGPUBindGroup group,                   \
       size_t dynamicOffsetCount, const uint32_t *dynamicOffsets))                              \
    X(ComputePassEncoderDispatchWorkgroups, void,                                               \
      (WGPUComputePassEncoder pass, uint32_t x, uint32_t y, uint32_t z))                        \
    X(ComputePassEncoderEnd, void, (WGPUComputePassEncoder pass))                               \
    X(ComputePassEncoderRelease, void, (WGPUComputePassEncoder pass))

#define WGPU_DECLARE_PROC_TYPE(name, ret, params) typedef ret(*WGPUProc##name) params;
WGPU_PROC_LIST(WGPU_DECLARE_PROC_TYPE)
#undef WGPU_DECLARE_PROC_TYPE

/* The resolved entry points of one loaded library. */
typedef struct wgpu_procs {
#define WGPU_DECLARE_PROC_FIELD(name, ret, params) WGPUProc##name name;
    WGPU_PROC_LIST(WGPU_DECLARE_PROC_FIELD)
#undef WGPU_DECLARE_PROC_FIELD
} wgpu_procs;

#endif /* WT_WGPU_ABI_H */
