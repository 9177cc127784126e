/* Section 2 of webtensor.h: the shared types: dtypes, backends, GPU APIs, the context and tensor handles. */
#ifndef WEBTENSOR_TYPES_H
#define WEBTENSOR_TYPES_H

#ifdef __cplusplus
extern "C" {
#endif

/* ======== 2. Types ======================================================= */

/* Element types (see "dtypes" below for storage, promotion and casts). */
typedef enum wt_dtype { WT_F32 = 0, WT_F16 = 1, WT_I32 = 2, WT_BOOL = 3 } wt_dtype;

typedef enum wt_backend {
    WT_BACKEND_AUTO = 0,   /* WebGPU on a real GPU, else CPU (never a software
                              renderer: wt_context_info.reason says why) */
    WT_BACKEND_CPU = 1,
    WT_BACKEND_WEBGPU = 2  /* fails with WT_ERR_NO_DEVICE if there is none */
} wt_backend;

/* Which adapter ranks first when a machine has several real GPUs. */
typedef enum wt_power_preference {
    WT_POWER_DEFAULT = 0,          /* discrete GPUs first */
    WT_POWER_HIGH_PERFORMANCE = 1, /* the same, said explicitly */
    WT_POWER_LOW_POWER = 2         /* integrated GPUs first */
} wt_power_preference;

/* wt_context_options.experimental bits. */
#define WT_EXPERIMENTAL_SUBGROUP_MATRIX 0x1u /* matrix units through Dawn's
    chromium_experimental_subgroup_matrix (turns on Dawn's allow_unsafe_apis
    and, on Vulkan, use_vulkan_memory_model) */

/* Which native GPU API the WebGPU implementation runs on. */
typedef enum wt_gpu_api {
    WT_GPU_API_AUTO = 0,    /* the best real adapter over any API */
    WT_GPU_API_VULKAN = 1,
    WT_GPU_API_OPENGLES = 2, /* WebGPU compatibility mode */
    WT_GPU_API_METAL = 3,
    WT_GPU_API_D3D12 = 4,
    /* --- WebAssembly build --- */
    WT_GPU_API_BROWSER = 5 /* the host's WebGPU (a browser's navigator.gpu, or Node's): the
                              only API of the WebAssembly build, which cannot see the native
                              API underneath */
} wt_gpu_api;

typedef struct wt_context wt_context;
typedef struct wt_tensor wt_tensor;

/* How a backend computes an op on inputs of a dtype (wt_op_support). */
typedef enum wt_support {
    WT_SUPPORT_NONE = 0,    /* refused (WT_ERR_UNSUPPORTED or WT_ERR_INVALID_ARGUMENT) */
    WT_SUPPORT_NATIVE = 1,  /* a kernel for that dtype */
    WT_SUPPORT_VIA_F32 = 2, /* inputs cast to f32, computed in f32 (result cast back
                               to f16 for an f16 op) */
    WT_SUPPORT_VIA_CAST = 3 /* inputs cast to another dtype first (e.g. logical ops
                               on numbers through bool; floor of i32 is a copy) */
} wt_support;

#ifdef __cplusplus
}
#endif
#endif /* WEBTENSOR_TYPES_H */
