/*
 * webtensor: tensor compute on any GPU through WebGPU, with a CPU backend.
 *
 * The whole public C API. Conventions:
 *  - Every fallible call returns a wt_status (WT_OK == 0, errors negative)
 *    and writes its result through an out-pointer. On failure the
 *    out-pointer is set to NULL (where it is a handle) and
 *    wt_last_error() holds a message for the calling thread.
 *  - A function that creates a handle returns one reference to it; drop it
 *    with the matching _release/_destroy. Views share storage and keep it
 *    alive.
 *  - Ops never modify their inputs. Results are new, contiguous tensors.
 *  - Thread safety, per object: a context and everything made from it
 *    (tensors, views, kernels, events) are used by one thread at a time;
 *    a context may move between threads between calls. Different contexts
 *    may be used concurrently from different threads, and created from
 *    several threads at once (the library's global state, the loaded
 *    WebGPU library, the EGL loader and the environment reads, is set up
 *    under pthread_once and a lock). wt_tensor_to uses two contexts: both
 *    must be free for the calling thread. wt_list_adapters may run from any
 *    thread at any time. wt_last_error() is per thread;
 *    wt_context_last_error() is per context.
 *  - Execution is deferred on the GPU: ops are recorded and submitted in
 *    batches. wt_tensor_read() and wt_context_sync() wait for the work.
 */
#ifndef WEBTENSOR_H
#define WEBTENSOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define WT_VERSION_MAJOR 0
#define WT_VERSION_MINOR 1
#define WT_VERSION_PATCH 0
#define WT_VERSION_STRING "0.1.0"

/* Largest number of dimensions a tensor may have. */
#define WT_MAX_DIMS 8

#if defined(_WIN32) && defined(WT_BUILD_SHARED)
#define WT_API __declspec(dllexport)
#elif defined(__GNUC__)
#define WT_API __attribute__((visibility("default")))
#else
#define WT_API
#endif

/* ---------------------------------------------------------------- status */

typedef enum wt_status {
    WT_OK = 0,
    WT_ERR_INVALID_ARGUMENT = -1, /* NULL where a value is needed, bad axis, bad dtype ... */
    WT_ERR_SHAPE = -2,            /* shapes that do not fit together */
    WT_ERR_OUT_OF_MEMORY = -3,    /* message says the requested bytes (and the limit, where known) */
    WT_ERR_NO_DEVICE = -4,        /* no WebGPU library or no real adapter */
    WT_ERR_DEVICE_LOST = -5,      /* the GPU device was lost; the context is unusable */
    WT_ERR_UNSUPPORTED = -6,      /* op or dtype not available on this backend */
    WT_ERR_SHADER = -7,           /* a shader failed to compile (message has the compiler's) */
    WT_ERR_BACKEND = -8           /* any other error reported by the backend; one the GPU
                                     reports on its own (work was dropped) stays, like
                                     WT_ERR_DEVICE_LOST: the context is unusable */
} wt_status;

/* Name of a status code ("WT_ERR_SHAPE"); never NULL. */
WT_API const char *wt_status_string(wt_status s);
/* Detail of the last failure on this thread; "" if none. Valid until the
 * next failing call on this thread. */
WT_API const char *wt_last_error(void);
/* "MAJOR.MINOR.PATCH" of the library actually loaded. */
WT_API const char *wt_version(void);

/* ----------------------------------------------------------------- types */

typedef enum wt_dtype { WT_F32 = 0, WT_F16 = 1, WT_I32 = 2 } wt_dtype;

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
    WT_GPU_API_D3D12 = 4
} wt_gpu_api;

typedef struct wt_context wt_context;
typedef struct wt_tensor wt_tensor;

/* --------------------------------------------------------------- context */

typedef struct wt_context_options {
    /* Set by wt_context_options_init; lets later versions add fields. */
    uint32_t struct_size;
    wt_backend backend;
    /* WebGPU only. */
    wt_gpu_api gpu_api;
    int adapter_index;           /* -1: AUTO's choice; else an index of wt_list_adapters */
    const char *webgpu_library;  /* NULL: $WT_WEBGPU_LIB, the build's path, the system's */
    uint32_t dispatches_per_submit; /* 0: default; ops recorded before a submit */
    /* CPU only. */
    int num_threads;             /* 0: one per core; at most 1024 */
    /* --- runtime: device choice and configuration (WebGPU only) --- */
    wt_power_preference power_preference; /* which GPU ranks first when there are several */
    /* Debug mode: every recorded op is submitted and waited for, so an
     * error the implementation reports names the op that caused it (slow). */
    bool validation;
    /* Largest single buffer (tensor storage) the context may make; 0: the
     * adapter's maxBufferSize. Larger requests fail with WT_ERR_OUT_OF_MEMORY. */
    uint64_t max_buffer_size;
    /* Compile every shader variant on each use instead of keeping it
     * (for measuring compile cost); the default keeps them. */
    bool disable_pipeline_cache;
    /* Dawn device toggles applied after the library's own choice, a
     * comma-separated list: "+name" enables, "-name" disables, "=name"
     * leaves it to Dawn (the environment's WT_DAWN_TOGGLES comes first). */
    const char *toggles;
    /* WT_EXPERIMENTAL_* bits: features the implementation hides behind its
     * unsafe-API switch. Off by default. */
    uint32_t experimental;
    /* Bytes of live tensor storage the context may hold at once (its
     * pooled memory is trimmed before this is enforced); 0: no limit.
     * Past it, allocations fail with WT_ERR_OUT_OF_MEMORY. Both backends. */
    uint64_t memory_limit;
} wt_context_options;

WT_API void wt_context_options_init(wt_context_options *opts);

/* opts may be NULL for defaults. */
WT_API wt_status wt_context_create(const wt_context_options *opts, wt_context **out);
/* Drops the caller's reference. Tensors still alive keep the context's
 * resources until they are released; NULL is ignored. */
WT_API void wt_context_destroy(wt_context *ctx);
/* Waits for all recorded work; reports a device error that happened in it. */
WT_API wt_status wt_context_sync(wt_context *ctx);
/* GPU time of the work recorded between wt_context_timer_begin and
 * wt_context_timer_end, from the device's timestamp queries: the sum over
 * the compute passes that work ran in of (pass end - pass start), i.e. the
 * time the GPU was busy with it. Gaps between passes (submits, waits on
 * the host) are not counted; wall time around wt_context_sync counts them.
 * end waits for the work, like wt_context_sync, and writes *gpu_seconds
 * (0 on failure). Work recorded before begin is not counted.
 * WT_ERR_UNSUPPORTED on the CPU backend and on devices without the
 * timestamp-query feature (wt_adapter_info.timestamp_query; e.g. OpenGL
 * ES); WT_ERR_INVALID_ARGUMENT for begin while a timer runs, or end
 * without a begin. */
WT_API wt_status wt_context_timer_begin(wt_context *ctx);
WT_API wt_status wt_context_timer_end(wt_context *ctx, double *gpu_seconds);
/* The backend in use (what AUTO chose). WT_BACKEND_AUTO for NULL. */
WT_API wt_backend wt_context_backend(const wt_context *ctx);

typedef struct wt_memory_stats {
    uint64_t live_bytes;   /* held by tensors now */
    uint64_t peak_bytes;   /* highest live_bytes so far */
    uint64_t pooled_bytes; /* freed by tensors, kept for reuse */
    uint64_t live_tensors; /* storages alive */
    /* --- runtime --- */
    uint64_t buffers;           /* WebGPU buffers held (live and pooled); 0 on the CPU backend */
    uint64_t bytes_to_device;   /* copied host -> tensors (uploads) since the context began */
    uint64_t bytes_from_device; /* copied tensors -> host (reads) */
    uint64_t memory_limit;      /* wt_context_options.memory_limit; 0: none */
} wt_memory_stats;

WT_API wt_status wt_context_memory_stats(const wt_context *ctx, wt_memory_stats *out);
/* Frees the pooled (unused) memory of the context.
 *
 * Out of memory: an allocation past the largest buffer (maxBufferSize or
 * the max_buffer_size option), past the memory_limit option, or that the
 * device cannot satisfy fails with WT_ERR_OUT_OF_MEMORY; the message gives
 * the requested and the available bytes (where the implementation knows
 * them). Pooled memory is given back and the allocation retried first.
 * Nothing is held after such a failure and the context stays usable. */
WT_API wt_status wt_context_trim(wt_context *ctx);

/* -------------------------------------------------------------- adapters */

typedef enum wt_adapter_type {
    WT_ADAPTER_UNKNOWN = 0, WT_ADAPTER_DISCRETE_GPU = 1,
    WT_ADAPTER_INTEGRATED_GPU = 2, WT_ADAPTER_CPU = 3
} wt_adapter_type;

typedef struct wt_adapter_info {
    int index;                   /* for wt_context_options.adapter_index */
    bool auto_choice;            /* the adapter WT_BACKEND_AUTO would take */
    char name[256];
    char vendor[128];
    char architecture[128];
    char driver[256];
    uint32_t vendor_id, device_id;
    wt_gpu_api api;
    wt_adapter_type type;
    bool compatibility_mode;     /* WebGPU compatibility feature level */
    uint64_t max_buffer_size;
    uint64_t max_storage_buffer_binding_size;
    uint32_t max_compute_workgroup_storage_size;
    uint32_t max_compute_invocations_per_workgroup;
    uint32_t max_compute_workgroups_per_dimension;
    uint32_t max_storage_buffers_per_shader_stage;
    uint32_t subgroup_min_size, subgroup_max_size; /* 0 if unknown */
    bool shader_f16, subgroups, timestamp_query, subgroup_matrix;
    /* --- runtime --- */
    uint64_t memory_bytes;       /* device-local memory where the implementation
                                    reports it (Dawn's memory heaps); 0: unknown */
} wt_adapter_info;

/* Lists every real WebGPU adapter (never Dawn's Null adapter). Writes up to
 * capacity entries and the total count. opts: NULL for defaults (only
 * gpu_api and webgpu_library are read). WT_ERR_NO_DEVICE if the WebGPU
 * library cannot be loaded; zero adapters is not an error. */
WT_API wt_status wt_list_adapters(const wt_context_options *opts, wt_adapter_info *infos,
                                  int capacity, int *count);
/* The adapter a WebGPU context runs on; WT_ERR_UNSUPPORTED for a CPU one. */
WT_API wt_status wt_context_adapter_info(const wt_context *ctx, wt_adapter_info *out);

/* --- runtime: custom WGSL kernels ---
 *
 * A compute shader of your own, run on tensors like any op: recorded into
 * the context's batch of work (so it runs after the ops recorded before it
 * and before those after it, without a sync). WebGPU contexts only; on a
 * CPU context create and dispatch return WT_ERR_UNSUPPORTED.
 *
 * The shader's interface:
 *   @group(0) @binding(0) var<uniform> p: P;   the params block (params_size
 *                                              bytes, at most 256; may be
 *                                              left undeclared when 0)
 *   @group(0) @binding(1 + i)                  tensor i of the dispatch:
 *       var<storage, read_write> for i in writable_mask, else
 *       var<storage, read>; e.g. array<f32> for a WT_F32 tensor.
 * Each tensor binds its whole storage: a view's element offset and strides
 * (wt_tensor_offset, wt_tensor_strides) are for the shader to apply, e.g.
 * passed in the params. Outputs are made beforehand (wt_tensor_zeros).
 * A storage may be bound twice only when neither binding is writable.
 *
 * Errors: bad WGSL or an entry point that is missing or not a compute
 * shader gives WT_ERR_SHADER with the compiler's messages (line:column,
 * counted from the first line of source); a workgroup size past the
 * device's limits (maxComputeInvocationsPerWorkgroup, the per-dimension
 * sizes, workgroup storage) gives WT_ERR_SHADER from the compiler at
 * create. At dispatch: tensors from another context, a tensor count other
 * than num_tensors, a params size other than params_size, a workgroup
 * count past maxComputeWorkgroupsPerDimension, or an aliased writable
 * binding give WT_ERR_INVALID_ARGUMENT; a tensor larger than one binding
 * (maxStorageBufferBindingSize) WT_ERR_UNSUPPORTED. None of these reach
 * the device. Compiled pipelines are cached by (source, entry point,
 * bindings): creating the same kernel again costs no compile.
 * Thread safety: a kernel belongs to its context (one thread at a time). */
typedef struct wt_kernel wt_kernel;

typedef struct wt_kernel_desc {
    const char *source;      /* WGSL */
    const char *entry_point; /* NULL: "main" */
    int num_tensors;         /* storage bindings 1..num_tensors (at most 8) */
    uint32_t writable_mask;  /* bit i: tensor i is read_write */
    size_t params_size;      /* bytes of the uniform block; 0: none */
} wt_kernel_desc;

WT_API wt_status wt_kernel_create(wt_context *ctx, const wt_kernel_desc *desc, wt_kernel **out);
/* NULL is ignored. The kernel keeps its context alive until destroyed. */
WT_API void wt_kernel_destroy(wt_kernel *k);
/* Records one dispatch of groups_x * groups_y * groups_z workgroups (each
 * at least 1). params: params_size bytes (NULL when 0). */
WT_API wt_status wt_kernel_dispatch(wt_kernel *k, int ntensors, wt_tensor *const *tensors,
                                    const void *params, size_t params_size, uint32_t groups_x,
                                    uint32_t groups_y, uint32_t groups_z);

/* --- runtime: asynchronous work ---
 *
 * GPU ops are recorded and submitted in batches (dispatches_per_submit of
 * wt_context_options sets the batch; a full batch is submitted without
 * waiting). wt_context_flush submits what is recorded now, without
 * waiting. An event marks the point of the stream where it is recorded:
 * it completes when everything recorded before it has run.
 * wt_tensor_read_async starts a read of the tensor as it is after the ops
 * recorded so far (later ops never change what it reads) and returns at
 * once; dst must stay valid, and is filled, when the event completes
 * (wt_event_query says done, or wt_event_wait returns). Recording may go
 * on meanwhile. On the CPU backend work is done when a call returns:
 * events are complete when recorded and reads are synchronous.
 * An event belongs to its context (one thread at a time) and keeps it
 * alive; destroying a pending event waits for it. A device error or loss
 * is returned by the query/wait of every pending event. */
typedef struct wt_event wt_event;
WT_API wt_status wt_context_flush(wt_context *ctx);
WT_API wt_status wt_event_record(wt_context *ctx, wt_event **out);
/* Never blocks: *done says whether the event has completed. */
WT_API wt_status wt_event_query(wt_event *e, bool *done);
WT_API wt_status wt_event_wait(wt_event *e);
WT_API void wt_event_destroy(wt_event *e); /* NULL is ignored */
/* Like wt_tensor_read (views are gathered first), but returns at once. */
WT_API wt_status wt_tensor_read_async(const wt_tensor *t, void *dst, size_t dst_bytes,
                                      wt_event **done);

/* --- runtime: several devices ---
 *
 * One context per adapter (wt_list_adapters, then adapter_index); tensors
 * of different contexts do not mix in ops (WT_ERR_INVALID_ARGUMENT).
 * wt_tensor_to makes a new contiguous tensor on dst with x's elements,
 * whatever the two contexts are (CPU <-> GPU, GPU <-> GPU, the same
 * context: a copy). Between two devices the data goes through host
 * memory (WebGPU has no peer copies): it waits for the work that writes x
 * on its context; dst's work is not waited for. Both contexts must be
 * usable by the calling thread for the duration of the call. */
WT_API wt_status wt_tensor_to(const wt_tensor *x, wt_context *dst, wt_tensor **out);

/* --- runtime: profiling ---
 *
 * Between begin and end every op the context runs is timed: on the GPU
 * through timestamp queries where the device has them (each op then runs
 * in a compute pass of its own), else on the host around each op, which
 * is then submitted and waited for on its own (gpu_timed says which).
 * Profiling changes how work is batched; time a whole workload with
 * wt_context_timer_* instead. Ops are named by the kernel that ran them
 * (one library op may run several, e.g. "reduce_rows" twice for a large
 * sum; custom kernels are "custom:<entry point>"). end waits for the work.
 * The summary lists one entry per kernel name, largest total first, with
 * count, total and mean seconds and the share of all profiled time;
 * *count is the number of names (entries written: at most capacity).
 * WebGPU only (WT_ERR_UNSUPPORTED on the CPU backend).
 *
 * Setting WT_TRACE=<file> in the environment profiles every WebGPU
 * context of the process from its creation and writes each op as an event
 * of the Chrome trace-event JSON format (opens in Perfetto or
 * chrome://tracing) to <file> when the context is destroyed; the file is
 * completed at process exit. */
typedef struct wt_profile_entry {
    char name[64];
    uint64_t count;
    double total_seconds, mean_seconds;
    double share; /* of the profile's total, 0..1 */
} wt_profile_entry;
WT_API wt_status wt_context_profile_begin(wt_context *ctx);
WT_API wt_status wt_context_profile_end(wt_context *ctx);
WT_API wt_status wt_context_profile_summary(const wt_context *ctx, wt_profile_entry *entries,
                                            int capacity, int *count, bool *gpu_timed);

/* --- runtime: pipeline cache statistics ---
 * Shader variants compiled and reused by a WebGPU context (all zero on the
 * CPU backend). */
typedef struct wt_pipeline_stats {
    uint64_t variants;        /* compiled pipelines held (built-in variants and custom kernels) */
    uint64_t compiles;        /* compiles done (more than variants with the cache off) */
    uint64_t hits;            /* launches and kernel creations served from the cache */
    double compile_seconds;   /* host time spent compiling */
    uint64_t bind_groups_made, bind_group_hits;
    uint64_t dispatches, submits;
} wt_pipeline_stats;
WT_API wt_status wt_context_pipeline_stats(const wt_context *ctx, wt_pipeline_stats *out);

/* --- runtime: errors and recovery ---
 *
 * The last error of a context (like sqlite3_errmsg): failures the device
 * reports (device lost, a validation or out-of-memory error found at a
 * later submit or sync, maybe on another thread than the op that caused
 * it), failed allocations and failed syncs on the context. "" and WT_OK
 * (through status, which may be NULL) if none; valid until the next error
 * on the context. Errors the implementation reports are never dropped:
 * one it reports on its own (outside a call that checks for it) means
 * recorded work did not run, and stays, like a device loss, until
 * wt_context_recover.
 *
 * Device loss: once the device is lost (driver reset, GPU removed, or
 * wt_context_lose_device), every call on the context that touches the
 * device fails with WT_ERR_DEVICE_LOST and the reason; results of work
 * recorded since the last successful sync are lost. Views, shapes and
 * releases still work.
 *
 * wt_context_recover makes a new device on the same adapter (WT_OK with
 * nothing done when the device is fine, and on the CPU backend). Tensors
 * made before the loss keep their handles, shapes and dtypes, but their
 * memory is gone: any op, read or write on them fails with
 * WT_ERR_DEVICE_LOST ("made on a device this context lost"); release them
 * and make them again (the host data is the caller's to keep). Memory
 * statistics count them until they are released. Tensors made after the
 * recovery work as usual. If no device can be made, the context stays
 * lost and recover returns WT_ERR_DEVICE_LOST. */
WT_API const char *wt_context_last_error(const wt_context *ctx, wt_status *status);
WT_API wt_status wt_context_recover(wt_context *ctx);
/* Destroys the context's device as a driver reset would, to test the
 * recovery path of a program. WT_ERR_UNSUPPORTED on the CPU backend. */
WT_API wt_status wt_context_lose_device(wt_context *ctx);

/* --- runtime: what a context runs on, and why --- */
typedef struct wt_context_info {
    wt_backend backend;        /* what AUTO chose */
    /* Why this backend and adapter, e.g. "AUTO: the only WebGPU adapters
     * are software renderers (llvmpipe ... on Vulkan); the CPU backend is
     * faster (ask for WT_BACKEND_WEBGPU to use them)". */
    char reason[512];
    bool has_adapter;          /* WebGPU: adapter below is filled */
    wt_adapter_info adapter;
    /* Device features turned on (WebGPU); `features` says why each is on
     * or off, e.g. "shader-f16: off (the adapter does not offer it)". */
    bool shader_f16, subgroups, timestamp_query, subgroup_matrix;
    char features[768];
    char toggles[256];         /* Dawn device toggles asked for, "+a,-b" */
    uint32_t dispatches_per_submit;
    bool validation;           /* debug mode (wt_context_options.validation) */
    bool pipeline_cache;
    uint64_t max_buffer_size;  /* largest tensor storage, bytes */
    uint64_t max_binding_size; /* largest one shader binds at once; larger
                                  tensors are bound in windows (README) */
    uint64_t memory_limit;     /* 0: none */
    int num_threads;           /* CPU backend */
} wt_context_info;

/* Fills *out for any context (CPU or WebGPU). */
WT_API wt_status wt_context_get_info(const wt_context *ctx, wt_context_info *out);

/* --------------------------------------------------------------- tensors */

/* New tensor holding a copy of data (row-major, dtype elements). */
WT_API wt_status wt_tensor_from_data(wt_context *ctx, wt_dtype dtype, int ndim,
                                     const int64_t *shape, const void *data, wt_tensor **out);
WT_API wt_status wt_tensor_zeros(wt_context *ctx, wt_dtype dtype, int ndim,
                                 const int64_t *shape, wt_tensor **out);
WT_API wt_status wt_tensor_full(wt_context *ctx, wt_dtype dtype, int ndim,
                                const int64_t *shape, double value, wt_tensor **out);
/* Copies the tensor's elements, row-major, into dst (views are gathered).
 * dst_bytes must be at least numel * element size. Waits for the GPU. */
WT_API wt_status wt_tensor_read(const wt_tensor *t, void *dst, size_t dst_bytes);

WT_API int            wt_tensor_ndim(const wt_tensor *t);
WT_API const int64_t *wt_tensor_shape(const wt_tensor *t);
WT_API const int64_t *wt_tensor_strides(const wt_tensor *t); /* in elements */
WT_API int64_t        wt_tensor_offset(const wt_tensor *t);  /* in elements */
WT_API int64_t        wt_tensor_numel(const wt_tensor *t);
WT_API wt_dtype       wt_tensor_dtype(const wt_tensor *t);
WT_API bool           wt_tensor_is_contiguous(const wt_tensor *t);
WT_API wt_context    *wt_tensor_context(const wt_tensor *t);
WT_API size_t         wt_dtype_size(wt_dtype dtype); /* 0 for an unknown dtype */
WT_API void wt_tensor_retain(wt_tensor *t);
WT_API void wt_tensor_release(wt_tensor *t); /* NULL is ignored */

/* ----------------------------------------------------------------- views
 * Views share the input's storage; no data moves. */

/* Same elements, new shape. One entry of shape may be -1 (inferred). A view
 * of x when x is contiguous, else a view of a contiguous copy. */
WT_API wt_status wt_reshape(const wt_tensor *x, int ndim, const int64_t *shape, wt_tensor **out);
/* Axis i of the result is axis perm[i] of x. Negative axes count from the end. */
WT_API wt_status wt_permute(const wt_tensor *x, const int *perm, wt_tensor **out);
WT_API wt_status wt_transpose(const wt_tensor *x, int axis0, int axis1, wt_tensor **out);
/* Elements start, start+step, ... < stop along axis (step >= 1; start and
 * stop clamp like Python's slices, negative values count from the end). */
WT_API wt_status wt_slice(const wt_tensor *x, int axis, int64_t start, int64_t stop,
                          int64_t step, wt_tensor **out);
/* Broadcasts x to shape (NumPy rules) as a view with zero strides. */
WT_API wt_status wt_expand(const wt_tensor *x, int ndim, const int64_t *shape, wt_tensor **out);

/* A new contiguous tensor with x's elements (always a copy). */
WT_API wt_status wt_copy(const wt_tensor *x, wt_tensor **out);
/* x itself (one more reference) if contiguous, else wt_copy. */
WT_API wt_status wt_contiguous(const wt_tensor *x, wt_tensor **out);

/* ----------------------------------------------------------------- dtypes
 * WT_F16 tensors hold IEEE binary16 values (2 bytes each; host data for
 * wt_tensor_from_data and from wt_tensor_read are uint16_t bit patterns).
 * Ops on f16 inputs compute in f32 and round the result to f16; when an
 * op mixes f16 and f32 inputs the result is f32. WT_I32 is not supported
 * yet (WT_ERR_UNSUPPORTED). */

/* A new contiguous tensor with x's elements converted to dtype (WT_F32 or
 * WT_F16; the same dtype makes a copy). f32 -> f16 rounds to nearest, ties
 * to even (f16 subnormals included); values beyond the f16 range become
 * +-inf; a NaN stays a NaN. f16 -> f32 is exact. WT_ERR_INVALID_ARGUMENT
 * for an unknown dtype, WT_ERR_UNSUPPORTED for WT_I32. */
WT_API wt_status wt_cast(const wt_tensor *x, wt_dtype dtype, wt_tensor **out);

/* ------------------------------------------------------------------- ops */

/* Elementwise with NumPy broadcasting. */
WT_API wt_status wt_add(const wt_tensor *a, const wt_tensor *b, wt_tensor **out);
WT_API wt_status wt_sub(const wt_tensor *a, const wt_tensor *b, wt_tensor **out);
WT_API wt_status wt_mul(const wt_tensor *a, const wt_tensor *b, wt_tensor **out);
WT_API wt_status wt_div(const wt_tensor *a, const wt_tensor *b, wt_tensor **out);

/* Elementwise unary. */
WT_API wt_status wt_neg(const wt_tensor *x, wt_tensor **out);
WT_API wt_status wt_exp(const wt_tensor *x, wt_tensor **out);
WT_API wt_status wt_log(const wt_tensor *x, wt_tensor **out);
WT_API wt_status wt_sqrt(const wt_tensor *x, wt_tensor **out);
WT_API wt_status wt_relu(const wt_tensor *x, wt_tensor **out);
WT_API wt_status wt_sigmoid(const wt_tensor *x, wt_tensor **out);
WT_API wt_status wt_tanh(const wt_tensor *x, wt_tensor **out);

/* NumPy matmul: 1-D operands are promoted and the added axis removed;
 * batch axes broadcast. */
WT_API wt_status wt_matmul(const wt_tensor *a, const wt_tensor *b, wt_tensor **out);

/* Reductions over the listed axes (naxes 0: all axes). Negative axes count
 * from the end; an axis may not repeat. Over all axes without keepdims the
 * result is 0-d. max/min of an empty reduction is WT_ERR_SHAPE; the sum of
 * nothing is 0 and its mean NaN. */
WT_API wt_status wt_sum(const wt_tensor *x, int naxes, const int *axes, bool keepdims, wt_tensor **out);
WT_API wt_status wt_mean(const wt_tensor *x, int naxes, const int *axes, bool keepdims, wt_tensor **out);
WT_API wt_status wt_max(const wt_tensor *x, int naxes, const int *axes, bool keepdims, wt_tensor **out);
WT_API wt_status wt_min(const wt_tensor *x, int naxes, const int *axes, bool keepdims, wt_tensor **out);

/* Row-wise ops. softmax: exp(x - max) / sum along axis (NumPy/PyTorch
 * semantics; axis may be negative). layernorm and rmsnorm normalise over
 * the last axis of size C:
 *   layernorm: (x - mean) / sqrt(var + eps) * weight + bias  (biased var)
 *   rmsnorm:   x / sqrt(mean(x^2) + eps) * weight
 * weight and bias are [C] tensors or NULL (1 and 0). eps >= 0. */
WT_API wt_status wt_softmax(const wt_tensor *x, int axis, wt_tensor **out);
WT_API wt_status wt_layernorm(const wt_tensor *x, const wt_tensor *weight, const wt_tensor *bias,
                              float eps, wt_tensor **out);
WT_API wt_status wt_rmsnorm(const wt_tensor *x, const wt_tensor *weight, float eps, wt_tensor **out);

#ifdef __cplusplus
}
#endif
#endif /* WEBTENSOR_H */
