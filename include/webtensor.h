/*
 * webtensor: tensor compute on any GPU through WebGPU, with a CPU backend.
 *
 * The whole public C API (webtensor_io.h adds model files: .npy,
 * safetensors, GGUF). By concept:
 *
 *    1. errors and version            9. reductions and scans
 *    2. types                        10. data movement
 *    3. contexts: the runtime        11. linear algebra
 *    4. scopes                       12. networks
 *    5. tensors: make, read, inspect 13. training
 *    6. dtypes and casts             14. the op catalogue
 *    7. views and copies             15. custom kernels, several devices
 *    8. elementwise                  16. deprecated names
 *
 * ------------------------------------------------------------- the rules
 * Every declaration of this header follows them; tests/api_rules.c checks
 * the ones marked [checked] on every function and struct (the deprecated
 * names of section 16 excepted), so a new function that breaks one fails
 * the build's tests.
 *
 *  1. Status and results. A call that can fail returns a wt_status
 *     (WT_OK == 0, errors negative) and writes its results through
 *     out-pointers. On failure every tensor out-pointer is set to NULL,
 *     nothing leaks and wt_last_error() holds a message for the calling
 *     thread.
 *  2. Argument order: what the call works on first (the tensor an op
 *     reads, the context of a creation function, the handle of a
 *     runtime call); then the op's other arguments in the order of
 *     PyTorch's functional form where it has one (wt_layer_norm(x,
 *     normalized_ndim, weight, bias, eps) as F.layer_norm), with an axis
 *     before the index tensor or sizes it qualifies (wt_gather(x, axis,
 *     index), wt_split(x, axis, n, sizes)) and a count right before its
 *     array (n, xs; naxes, axes); the options struct after the tensors and
 *     scalars; the out-pointers last, in the order of the results.
 *     [checked: no argument follows a wt_tensor ** except another one]
 *  3. Backward ops, wt_<op>_backward (or _backward_v2, rule 11) for the
 *     forward op wt_<op>: the upstream gradient first (dy, or dloss for a
 *     loss); then the forward's results that the gradient reads
 *     (max_pool2d's indices); then the forward's arguments that it reads,
 *     in the forward's order (tensors, scalars and options alike; a
 *     tensor of which only the size is needed is given by that size after
 *     the tensors, as embedding's num_embeddings); then the gradient
 *     out-pointers (dx, dweight, ...) in the order of the forward's inputs,
 *     any of them NULL to skip it where the op says so. [checked: the
 *     first argument is a const wt_tensor * named d..., every out-pointer
 *     comes last and is named d...]
 *  4. Ops never modify their inputs: input tensors are `const wt_tensor *`
 *     and results are new tensors (contiguous, unless the op makes a
 *     view). A tensor whose elements a call writes in place is a
 *     `wt_tensor *` and comes first: wt_copy_into's dst, the optimizer
 *     steps' param. The only other tensors written in place are state the
 *     caller keeps between calls: the optimizer steps' moments
 *     (momentum_buf, m, v) and batch norm's running_mean and running_var in
 *     training; each op says so. [checked: a wt_tensor * argument is the
 *     first one or one of these]
 *  5. Creation functions are wt_tensor_<what>(ctx, dtype, ...): the
 *     dtype comes right after the context. [checked]
 *  6. Options: an op with more than two tunables, or one whose PyTorch
 *     form has tunables still to come (attention, rope, group norm,
 *     dropout), takes `const wt_<op>_options *opts` after its tensors and
 *     before its out-pointers; NULL means the defaults, which
 *     wt_<op>_options_init writes. Every options struct begins with
 *     uint32_t struct_size, set by its _init, so that later versions can
 *     add fields without breaking programs built against this one.
 *     [checked: struct_size first in every wt_*_options, and an _init]
 *  7. Host scalars are double (integers for counts, extents and axes,
 *     bool for switches, enums for modes); a kernel that computes in f32 rounds them once and
 *     refuses values that are not finite in f32. [checked: no float
 *     argument or options field]
 *  8. Arrays of input tensors are `wt_tensor *const *`, so that a
 *     wt_tensor ** (or wt_tensor *[]) passes without a cast.
 *  9. Names: one name per op, PyTorch's spelling where PyTorch has the op
 *     (layer_norm, rms_norm, scaled_dot_product_attention); an axis
 *     argument is `axis` (int, negative counts from the end), a list of
 *     them `naxes, axes`; sort order is `descending` for every op that
 *     orders (sort, argsort, topk); a 2-D padding is int64_t padding[4],
 *     (top, bottom, left, right), for convolution and pooling alike.
 *     [checked: no options struct has a padding[2]] Getters are wt_<object>_<property>
 *     (wt_tensor_shape, wt_context_backend, wt_context_memory_stats); one
 *     that fills a struct takes it last, as out; get_ only where C gives
 *     the plain name to the struct (wt_context_get_info fills a
 *     wt_context_info).
 * 10. Handles: a function that creates a handle returns one reference to
 *     it; drop it with the matching _release/_destroy (NULL is ignored).
 *     Views share storage and keep it alive.
 * 11. A changed signature gets a new name (the _v2 suffix where the name
 *     itself is right); the old name stays a working, exported function
 *     for one release and is listed in section 16, the only place where
 *     deprecated names are declared.
 *
 * Threads: a context and everything made from it (tensors, views,
 * kernels, events, scopes) are used by one thread at a time; a context may
 * move between threads between calls. Different contexts may be used
 * concurrently from different threads, and created from several threads
 * at once (the library's global state, the loaded WebGPU library, the EGL
 * loader and the environment reads, is set up under pthread_once and a
 * lock). wt_tensor_to uses two contexts: both must be free for the calling
 * thread. wt_list_adapters may run from any thread at any time.
 * wt_last_error() is per thread; wt_context_last_message() and
 * wt_context_last_status() are per context.
 *
 * Execution is deferred on the GPU: ops are recorded and submitted in
 * batches. wt_tensor_read() and wt_context_sync() wait for the work.
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

/* ======== 1. Errors and version ========================================== */

typedef enum wt_status {
    WT_OK = 0,
    WT_ERR_INVALID_ARGUMENT = -1, /* NULL where a value is needed, bad axis, bad dtype ... */
    WT_ERR_SHAPE = -2,            /* shapes that do not fit together */
    WT_ERR_OUT_OF_MEMORY = -3,    /* message says the requested bytes (and the limit, where known) */
    WT_ERR_NO_DEVICE = -4,        /* no WebGPU library or no real adapter */
    WT_ERR_DEVICE_LOST = -5,      /* the GPU device was lost; the context is unusable */
    WT_ERR_UNSUPPORTED = -6,      /* op or dtype not available on this backend */
    WT_ERR_SHADER = -7,           /* a shader failed to compile (message has the compiler's) */
    WT_ERR_BACKEND = -8,          /* the GPU implementation failed (an error it reported,
                                     a wait that failed). One it reports on its own (work
                                     was dropped) stays, like WT_ERR_DEVICE_LOST: the
                                     context is unusable until wt_context_recover. Files
                                     and names have codes of their own (below) */
    WT_ERR_IO = -9,               /* a file could not be opened, read or written (the
                                     message has the path and the system's reason) */
    WT_ERR_NOT_FOUND = -10        /* a name or key that is not there (a tensor name of
                                     a safetensors file) */
} wt_status;

/* Name of a status code ("WT_ERR_SHAPE"); never NULL. */
WT_API const char *wt_status_string(wt_status s);
/* Detail of the last failure on this thread; "" if none. Valid until the
 * next failing call on this thread. */
WT_API const char *wt_last_error(void);
/* Records message (NULL: "") as wt_last_error() of the calling thread and
 * returns status: for layers built on the library's public API (the
 * distributed layer of webtensor_dist.h, a program's own ops) to report a
 * failure the way the library's own calls do. */
WT_API wt_status wt_set_last_error(wt_status status, const char *message);
/* "MAJOR.MINOR.PATCH" of the library actually loaded. */
WT_API const char *wt_version(void);

/* Messages the library gives outside a call's status - today the leak
 * report of wt_context_destroy (a context destroyed while tensors are
 * still alive: how many and how many bytes) - go to the log handler: by
 * default one line each on stderr, prefixed "webtensor: ". The handler
 * is process-wide and may be called from any thread that destroys a
 * context; a handler that does nothing silences the library. */
typedef enum wt_log_level { WT_LOG_WARNING = 1 } wt_log_level;
typedef void (*wt_log_handler)(wt_log_level level, const char *message, void *user);
/* handler NULL: back to the default (stderr). */
WT_API void wt_set_log_handler(wt_log_handler handler, void *user);

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

/* ======== 3. Contexts: the runtime ======================================= */

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
    /* 0: WT_NUM_THREADS if set, else as many as the cores that other
     * processes leave free, re-measured while ops run (at least 1); at
     * most 1024. Reductions that split a row across threads may round
     * differently at another count: set it for bit-identical runs. */
    int num_threads;
    /* Device choice and configuration (WebGPU only). */
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

/* --- adapters --- */

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

/* --- what a context runs on, and why --- */
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
    int num_threads;           /* CPU backend: the threads its ops use now */
} wt_context_info;

/* Fills *out for any context (CPU or WebGPU). */
WT_API wt_status wt_context_get_info(const wt_context *ctx, wt_context_info *out);

/* --- errors and recovery ---
 *
 * The last error of a context (like sqlite3_errmsg): failures the device
 * reports (device lost, a validation or out-of-memory error found at a
 * later submit or sync, maybe on another thread than the op that caused
 * it), failed allocations and failed syncs on the context.
 * wt_context_last_message says what happened ("" if nothing did; valid
 * until the next error on the context), wt_context_last_status its code
 * (WT_OK if none); both accept NULL ("" and WT_OK). Errors the implementation reports are never dropped:
 * one it reports on its own (outside a call that checks for it) means
 * recorded work did not run, and stays, like a device loss, until
 * wt_context_recover.
 *
 * Checks only the device can make (an index out of range in gather,
 * index_select, embedding, scatter_add, index_add, one_hot): on the CPU
 * the call itself fails. On a GPU the kernel raises a flag instead of the
 * call waiting for the device (so that ops never read the device back
 * while they run, and can be captured and replayed); the call returns
 * WT_OK, and the next call that synchronises - wt_context_sync or a
 * blocking read (wt_tensor_read and the calls built on it) - returns
 * WT_ERR_INVALID_ARGUMENT naming the op and the offending index, once.
 * Nothing is read or written out of bounds; the op's output is undefined.
 *
 * Device loss: once the device is lost (driver reset, GPU removed, or
 * wt_context_lose_device), every call on the context that touches the
 * device fails with WT_ERR_DEVICE_LOST and the reason; results of work
 * recorded since the last successful sync are lost. Views, shapes and
 * releases still work. A kernel that never ends is not a device loss
 * where the driver has no watchdog: on lavapipe (Vulkan and GLES) and on
 * an NVIDIA H200 without a display, a custom kernel looping forever kept
 * wt_context_sync waiting until the process was killed (45-100 s tried).
 *
 * wt_context_recover makes a new device on the same adapter (WT_OK with
 * nothing done when the device is fine, and on the CPU backend); in the
 * WebAssembly build, where a WebGPU adapter makes one device, on a fresh
 * adapter of the host (same options, the same vendor and architecture
 * preferred). Tensors
 * made before the loss keep their handles, shapes and dtypes, but their
 * memory is gone: any op, read or write on them fails with
 * WT_ERR_DEVICE_LOST ("made on a device this context lost"); release them
 * and make them again (the host data is the caller's to keep). Memory
 * statistics count them until they are released. Tensors made after the
 * recovery work as usual. If no device can be made, the context stays
 * lost and recover returns WT_ERR_DEVICE_LOST. */
WT_API const char *wt_context_last_message(const wt_context *ctx);
WT_API wt_status wt_context_last_status(const wt_context *ctx);
WT_API wt_status wt_context_recover(wt_context *ctx);
/* Destroys the context's device as a driver reset would, to test the
 * recovery path of a program. WT_ERR_UNSUPPORTED on the CPU backend. */
WT_API wt_status wt_context_lose_device(wt_context *ctx);

/* --- asynchronous work ---
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

/* --- profiling ---
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
 * On the CPU backend each op is timed on the host around the backend's
 * kernel (gpu_timed false) and named by op ("add", "sum", "matmul",
 * "softmax", "conv2d" ...; an op made of several kernels lists each,
 * e.g. "cast" and "add" for an f16 add computed in f32); outside a
 * profile the CPU runs untimed, at no cost.
 *
 * Setting WT_TRACE=<file> in the environment profiles every context
 * (WebGPU and CPU) of the process from its creation and writes each op as an event
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

/* --- pipeline cache statistics ---
 * Shader variants compiled and reused by a WebGPU context (all zero on the
 * CPU backend). */
typedef struct wt_pipeline_stats {
    uint64_t variants;        /* compiled pipelines held (built-in variants and custom kernels) */
    uint64_t compiles;        /* compiles done (more than variants with the cache off) */
    uint64_t hits;            /* launches and kernel creations served from the cache */
    double compile_seconds;   /* host time spent compiling */
    uint64_t bind_groups_made, bind_group_hits;
    uint64_t dispatches, submits;
    /* Bytes of captured graphs' temporaries that replays bind in the
     * buffer of an earlier temporary whose uses had ended, not in their
     * own (WT_GRAPH_REPLAY_SHARE; "captured graphs" below): the bytes a
     * replay's list no longer touches. Summed over the graphs of the
     * context, each counted at its first replay from the list. */
    uint64_t replay_shared_bytes;
} wt_pipeline_stats;
WT_API wt_status wt_context_pipeline_stats(const wt_context *ctx, wt_pipeline_stats *out);

/* --- tensors past one binding ---
 * On WebGPU a tensor may be as large as max_buffer_size although one
 * shader binds at most max_binding_size bytes (128 MiB on lavapipe and in
 * many browsers): ops run in pieces, each on windows of the large buffers.
 * An op refuses with WT_ERR_UNSUPPORTED (and the sizes) only where one
 * indivisible unit of its work spans more than one binding:
 *  - row-wise ops (softmax, log_softmax, layer_norm, rms_norm), cross-entropy
 *    and its gradient: one row; softmax along another axis: one line along
 *    that axis; rope: one vector of D;
 *  - reductions (sum, mean, max, min, prod, all, any, var, std,
 *    logsumexp, the norms) reduce a part past one binding in partial
 *    results; argmax and argmin: the elements of one output;
 *  - matmul: one row of a; b past one binding is cut along N when its
 *    columns lie apart (w^T in wt_linear: blocks of w's rows), else along
 *    K with the parts summed;
 *  - gather, index_select, embedding: x cut to one index along the axis
 *    (one row of an embedding table); larger tables are read in parts;
 *  - scaled_dot_product_attention: one (batch, key head)'s K or V, or the
 *    queries of one head (the query axis is never cut);
 *  - conv2d: one image (direct kernel) or the few images the im2col path
 *    takes at once; pooling and batch/group-norm application: one image
 *    (pooling: one plane); pad/flip/roll/repeat/tril: an axis read with
 *    reflect, replicate or circular wrapping is read whole;
 *  - embedding gradient: dy and the indices (the table is done in blocks
 *    of rows);
 *  - cumsum/cumprod: the elements along the axis and after it for one
 *    index of the axes before it (a cumsum of a flat tensor is one unit);
 *    sort/argsort/topk: one row; the statistics of batch and group norm:
 *    one image;
 *  - scatter_add, index_add, one_hot: the index and src (an out past one
 *    binding is added to in parts along the axis: one index's slab);
 *  - dequantize and linear_quant (quantised weights) are not cut yet: x,
 *    the weight's words, bias and the result must each fit one binding.
 * Custom kernels refuse any tensor whose storage is past one binding
 * (each tensor binds its whole storage). WT_WINDOW_BYTES=<n> in the environment
 * lowers the window size (to test this on small tensors). */

/* ======== 4. Scopes ====================================================== */
/* *
 * A scope releases the temporaries of a computation together. While a
 * scope is the innermost open scope of its context, every tensor made on
 * that context (the result of any op, a view, a created or loaded tensor)
 * is owned by the scope: the reference the call returns is the scope's,
 * and wt_scope_end releases it. The caller uses such a tensor as usual
 * until then:
 *
 *     wt_scope *s;
 *     wt_scope_begin(ctx, &s);
 *     wt_tensor *h, *y, *out;
 *     wt_linear(x, w1, NULL, &h);
 *     wt_relu(h, &y);
 *     wt_linear(y, w2, NULL, &out);
 *     wt_scope_keep(s, out);   (out outlives the scope)
 *     wt_scope_end(s);         (h and y are released)
 *
 *  - wt_scope_keep(s, t) hands the scope's reference to t on: to the
 *    enclosing scope of the context if there is one (which releases it
 *    when it ends, unless kept again), else to the caller, who releases it
 *    with wt_tensor_release. t must be owned by s (made while s was the
 *    innermost scope, or kept into s from a scope inside it), else
 *    WT_ERR_INVALID_ARGUMENT.
 *  - wt_tensor_retain adds a reference of the caller's own: the tensor
 *    then outlives the scope (one release of the caller's is due).
 *  - Releasing a tensor by hand inside the scope is allowed: the scope
 *    never releases a tensor that is gone, so nothing is released twice.
 *  - Scopes nest: wt_scope_begin inside an open scope opens an inner one,
 *    which owns what is made until it ends. They end in the reverse order:
 *    ending a scope while a scope begun after it is still open returns
 *    WT_ERR_INVALID_ARGUMENT, releases nothing and leaves both open.
 *  - wt_scope_end frees the handle (a later use of it is a use after
 *    free, like a second wt_tensor_release). A scope keeps its context
 *    alive: it may end after wt_context_destroy.
 *  - Every tensor a call returns inside a scope is a new handle the scope
 *    owns (wt_contiguous gives a view rather than its input); ops inside
 *    the library make and release their own temporaries, and take no
 *    lasting reference to their inputs, so a tensor made outside the scope
 *    is never released by it.
 *  - Thread safety: a scope belongs to its context (one thread at a time).
 *    Tensors of other contexts are not affected by it.
 *  - Costs: one pointer per tensor owned; a tensor made outside any scope
 *    costs nothing. Making a tensor inside a scope may fail with
 *    WT_ERR_OUT_OF_MEMORY when the scope's list cannot grow. */
typedef struct wt_scope wt_scope;
WT_API wt_status wt_scope_begin(wt_context *ctx, wt_scope **out);
WT_API wt_status wt_scope_keep(wt_scope *scope, wt_tensor *t);
WT_API wt_status wt_scope_end(wt_scope *scope);

/* --- captured graphs ---
 *
 * A graph records the kernels that a sequence of ops runs and runs them
 * again on wt_graph_replay without the ops' front-ends (argument checks,
 * shapes, dtype decisions, allocations): a prepared statement, or a CUDA
 * graph. Between wt_graph_begin and wt_graph_end the ops run as usual (their
 * results are real); the graph holds a reference to every tensor they
 * read or wrote:
 *
 *     wt_graph *g;
 *     wt_graph_begin(ctx);
 *     wt_linear(x, w, b, &h); wt_gelu(h, &y); wt_tensor_release(h);
 *     wt_graph_end(ctx, &g);
 *     for (each step) {
 *         wt_tensor_write(x, host_input, bytes);   (the new input, in place)
 *         wt_graph_replay(g);                      (y holds the new result)
 *         wt_tensor_read(y, host_output, bytes);
 *     }
 *     wt_graph_release(g);
 *
 *  - A replay runs the same kernels on the same tensors with the same
 *    parameters, so it gives the same bits as running the ops again on the
 *    same values. Inputs are changed in place (wt_tensor_write,
 *    wt_copy_into); results are read from the tensors the captured ops
 *    returned, which stay valid while the graph lives even if released.
 *    Temporaries no handle reaches any more (every handle released before
 *    the first replay) may share device memory in replays on WebGPU, as
 *    eager ops reuse freed buffers (WT_GRAPH_REPLAY_SHARE=0: never;
 *    wt_pipeline_stats.replay_shared_bytes counts them).
 *  - Everything an op decided at the capture is frozen: shapes, dtypes,
 *    scalars, the kernel chosen, and what an op read back from the device
 *    (one_hot with num_classes -1). Ops on other contexts are not captured.
 *  - An op that fails during the capture fails as usual and loses the
 *    capture: wt_graph_end then returns its error and no graph.
 *    Custom kernels (wt_kernel_dispatch) are not captured yet (the capture
 *    is lost with WT_ERR_UNSUPPORTED).
 *  - Values that change per step: a replay cannot change a captured
 *    scalar, so ops whose scalar moves from step to step read it from a
 *    small i32 tensor on the device instead, which the caller updates with
 *    wt_tensor_write before each replay: wt_rope_options.position (the
 *    position of the first token), wt_copy_into_at (the place a slice is
 *    written, e.g. a KV-cache row), wt_attention_options.kv_length (how
 *    many cached keys are valid). A decode step over a KV cache of fixed
 *    size is captured once and replayed for every token:
 *        int32_t pos = prompt_len + i;
 *        wt_tensor_write(position, &pos, sizeof pos);
 *        wt_graph_replay(step);
 *    Ops such as wt_embedding and wt_gather take their indices from a
 *    device tensor already (the next token, chosen by wt_argmax in the
 *    graph, stays on the device).
 *  - A whole training step is capturable: forward, wt_backward,
 *    wt_optimizer_clip_grad_norm and wt_optimizer_step, whose step number,
 *    learning rate and bias corrections live on the device and advance in
 *    every replay (see wt_optimizer_step).
 *  - Errors of a replay are the kernels': WT_ERR_DEVICE_LOST after a
 *    device loss (the graph's tensors died with it: release the graph),
 *    index checks found on a GPU at the next sync.
 *  - Autograd: the kernels of a backward pass captured are replayed like
 *    any others; a replay records nothing.
 *  - A graph keeps its context alive; wt_graph_end (or wt_graph_release
 *    of the capturing graph) must end a capture. One capture per context at a
 *    time; replay during a capture is WT_ERR_INVALID_ARGUMENT. */
typedef struct wt_graph wt_graph;
/* Ops of ctx run from here on are captured. */
WT_API wt_status wt_graph_begin(wt_context *ctx);
/* Ends the capture begun on ctx and gives its graph (or the error that
 * lost it, and no graph). */
WT_API wt_status wt_graph_end(wt_context *ctx, wt_graph **out);
/* Runs the captured kernels again on the tensors they were captured with. */
WT_API wt_status wt_graph_replay(wt_graph *graph);
/* The number of kernels (nodes) a replay runs. */
WT_API wt_status wt_graph_node_count(const wt_graph *graph, int64_t *count);
/* NULL is ignored. */
WT_API void wt_graph_release(wt_graph *graph);

/* ======== 5. Tensors: make, read, inspect ================================ */

/* New tensor holding a copy of data (row-major, dtype elements as the host
 * sees them: float, uint16_t f16 bits, int32_t, or one byte per WT_BOOL
 * element where any nonzero byte is true). */
WT_API wt_status wt_tensor_from_data(wt_context *ctx, wt_dtype dtype, int ndim,
                                     const int64_t *shape, const void *data, wt_tensor **out);
WT_API wt_status wt_tensor_zeros(wt_context *ctx, wt_dtype dtype, int ndim,
                                 const int64_t *shape, wt_tensor **out);
/* Every element = value, converted to dtype: f32/f16 round to nearest;
 * WT_I32 truncates toward zero (WT_ERR_INVALID_ARGUMENT for NaN or a value
 * outside the i32 range); WT_BOOL is value != 0 (NaN is true). */
WT_API wt_status wt_tensor_full(wt_context *ctx, wt_dtype dtype, int ndim,
                                const int64_t *shape, double value, wt_tensor **out);
/* The creation functions below: dtype WT_F32, WT_F16 (or WT_I32 where
 * said). Values are computed in double on the host and rounded once to the
 * dtype. */
WT_API wt_status wt_tensor_ones(wt_context *ctx, wt_dtype dtype, int ndim, const int64_t *shape,
                                wt_tensor **out);
/* 1-D: start, start + step, ... while < stop (> stop for a negative step);
 * NumPy's length ceil((stop - start) / step), 0 when negative. Element i is
 * start + i * step in double, rounded to dtype (f32, f16, i32: i32 needs
 * integral start and step). step 0, a non-finite argument or a length
 * beyond 2^31 elements: WT_ERR_INVALID_ARGUMENT. */
WT_API wt_status wt_tensor_arange(wt_context *ctx, wt_dtype dtype, double start, double stop, double step,
                                  wt_tensor **out);
/* 1-D, num values evenly spaced from start to stop (endpoint: stop is the
 * last; else num intervals that end before it). NumPy's rule: element i is
 * start + i * delta, the last one exactly stop when endpoint. num >= 0. */
WT_API wt_status wt_tensor_linspace(wt_context *ctx, wt_dtype dtype, double start, double stop, int64_t num,
                                    bool endpoint, wt_tensor **out);
/* [n, m] with ones on diagonal k (0 main, > 0 above, < 0 below), zeros
 * elsewhere. n, m >= 0. */
WT_API wt_status wt_tensor_eye(wt_context *ctx, wt_dtype dtype, int64_t n, int64_t m, int64_t k,
                               wt_tensor **out);
/* Random tensors from a 64-bit seed through Philox4x32-10 (counter-based:
 * element i of the row-major result takes word i % 4 of the block
 * Philox(counter = (i / 4, 0), key = seed)). The same seed and shape give
 * the same bits on the CPU and on every GPU, and element i does not depend
 * on the shape. wt_tensor_rand: uniform in [0, 1) on a grid of 2^-24
 * (f32) or 2^-11 (f16). wt_tensor_randn: standard normal by an inverse-CDF
 * table in integer arithmetic (within 2e-6 of the exact quantile, on a grid of
 * 2^-21, |value| <= 6.24); f16 results are the f32 values rounded. */
WT_API wt_status wt_tensor_rand(wt_context *ctx, wt_dtype dtype, int ndim, const int64_t *shape,
                                uint64_t seed, wt_tensor **out);
WT_API wt_status wt_tensor_randn(wt_context *ctx, wt_dtype dtype, int ndim, const int64_t *shape,
                                 uint64_t seed, wt_tensor **out);

/* Copies src_bytes of host data (row-major, as wt_tensor_from_data takes
 * it: WT_BOOL one byte per element) into t, which must be contiguous;
 * src_bytes must be numel * wt_dtype_size(dtype). The new values are what
 * later work reads (inputs of a captured graph are changed this way).
 * Returns before the copy reaches the device. */
WT_API wt_status wt_tensor_write(wt_tensor *t, const void *src, size_t src_bytes);

/* Copies the tensor's elements, row-major, into dst (views are gathered).
 * dst_bytes must be at least numel * wt_dtype_size(dtype) (WT_BOOL: one
 * byte per element, 0 or 1). Waits for the GPU. */
WT_API wt_status wt_tensor_read(const wt_tensor *t, void *dst, size_t dst_bytes);

/* --- host memory shared with the caller (CPU backend) ---
 *
 * For zero-copy exchange with other array libraries (DLPack, NumPy's
 * buffers). Both are WT_ERR_UNSUPPORTED on a WebGPU context and for
 * WT_BOOL (whose elements are stored as 4-byte words, not the host's
 * bytes); use wt_tensor_read / wt_tensor_from_data there.
 *
 * wt_tensor_host_data: *data = the address of t's first element (its
 * offset applied) in the CPU backend's memory, where element i of the
 * view is at data + sum(index[d] * wt_tensor_strides(t)[d]) elements. The
 * memory lives as long as t or any view of its storage; CPU ops finish
 * before they return, so it holds every result already made. Writes
 * through it are seen by later ops but not by autograd's check that a
 * saved tensor was not modified. */
WT_API wt_status wt_tensor_host_data(wt_tensor *t, void **data);
/* Called once, when the last tensor over lent memory is released. */
typedef void (*wt_host_release_fn)(void *user_data);
/* A tensor over the caller's host memory, no copy: element i of the
 * result is at data + sum(index[d] * strides[d]) elements (strides >= 0,
 * in elements; NULL: row-major contiguous). dtype WT_F32, WT_F16 or
 * WT_I32; data aligned to the element size (it may be NULL only when the
 * tensor has no elements). The tensor and its views read and write that
 * memory; when the last of them is released, release(user_data) is
 * called (release may be NULL: the caller keeps the memory alive longer
 * than the tensors). On failure release is not called. The memory is not
 * counted in wt_memory_stats.live_bytes (the storage is, in live_tensors)
 * nor against memory_limit. */
WT_API wt_status wt_tensor_from_host_memory(wt_context *ctx, wt_dtype dtype, int ndim,
                                            const int64_t *shape, const int64_t *strides, void *data,
                                            wt_host_release_fn release, void *user_data,
                                            wt_tensor **out);

WT_API int            wt_tensor_ndim(const wt_tensor *t);
WT_API const int64_t *wt_tensor_shape(const wt_tensor *t);
WT_API const int64_t *wt_tensor_strides(const wt_tensor *t); /* in elements */
WT_API int64_t        wt_tensor_offset(const wt_tensor *t);  /* in elements */
WT_API int64_t        wt_tensor_numel(const wt_tensor *t);
WT_API wt_dtype       wt_tensor_dtype(const wt_tensor *t);
WT_API bool           wt_tensor_is_contiguous(const wt_tensor *t);
WT_API wt_context    *wt_tensor_context(const wt_tensor *t);
/* Bytes of one element as the host sees it (wt_tensor_from_data,
 * wt_tensor_read): 4, 2, 4, 1 for f32, f16, i32, bool; 0 for an unknown
 * dtype. */
WT_API size_t         wt_dtype_size(wt_dtype dtype);
/* "f32", "f16", "i32", "bool"; "?" for an unknown dtype. */
WT_API const char    *wt_dtype_name(wt_dtype dtype);
WT_API void wt_tensor_retain(wt_tensor *t);
WT_API void wt_tensor_release(wt_tensor *t); /* NULL is ignored */

/* ======== 6. Dtypes and casts ============================================ */
/*
 * WT_F32: IEEE binary32. WT_F16: IEEE binary16 (host data are uint16_t bit
 * patterns). WT_I32: int32_t. WT_BOOL: a mask, true or false; on the host
 * one byte per element (0 or 1, like NumPy's bool; from_data takes any
 * nonzero byte as true); on every backend one 4-byte word per element
 * (0 or 1), so that the 4-byte kernels (copy, gather, concat ...) serve
 * it and GPU threads never share a word.
 *
 * Views, copies, wt_tensor_read/from_data/zeros/full and wt_cast take every
 * dtype; the elementwise ops state theirs below; matmul, the reductions
 * (sum, mean, max, min) and the row-wise ops take f32 and f16. An op given
 * a dtype it does not take fails with WT_ERR_UNSUPPORTED (or
 * WT_ERR_INVALID_ARGUMENT where the op has no meaning for it) and a message
 * naming op and dtype; wt_op_support and `webtensor ops` list them all.
 * Ops on f16 inputs compute in f32 and round the result to f16; when an
 * op mixes f16 and f32 inputs the result is f32. */

/* A new contiguous tensor with x's elements converted to dtype (the same
 * dtype makes a copy). Every pair of f32, f16, i32, bool converts:
 *  - f32 -> f16 rounds to nearest, ties to even (f16 subnormals included);
 *    values beyond the f16 range become +-inf; a NaN stays a NaN. f16 ->
 *    f32 is exact.
 *  - f32/f16 -> i32 truncates toward zero; NaN becomes 0 and values beyond
 *    the i32 range saturate to INT32_MIN / INT32_MAX (NumPy leaves these
 *    undefined; PyTorch's CPU gives INT32_MIN).
 *  - i32 -> f32 rounds to nearest even (exact up to 2^24); i32 -> f16
 *    rounds once to nearest even, beyond +-65504 (after rounding) +-inf.
 *  - anything -> bool is x != 0 (NaN is true, -0 false, like NumPy);
 *    bool -> numbers is 0 or 1.
 * WT_ERR_INVALID_ARGUMENT for an unknown dtype. */
WT_API wt_status wt_cast(const wt_tensor *x, wt_dtype dtype, wt_tensor **out);

/* f32 subnormals (|x| < 2^-126). The CPU backend follows IEEE 754: it
 * keeps them as inputs and as results. WGSL lets a GPU flush them to zero
 * in arithmetic (as input or result), so on WebGPU an op whose inputs or
 * exact result are subnormal may compute as if they were +-0: x / x of a
 * subnormal x is 1 on the CPU and may be NaN (0 / 0) on a GPU; x * 2^-10
 * may be 0. Data movement (wt_copy, views, wt_contiguous, wt_tensor_read,
 * wt_cast to the same dtype) keeps every bit on both backends. Results
 * with normal inputs and normal exact results do not differ for this. */

/* ======== 7. Views and copies ============================================ */
/* Views share the input's storage; no data moves. */

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
/* x itself (one more reference) if contiguous, else wt_copy. Inside a
 * scope (see "scopes") a contiguous x gives a new view of it instead,
 * which the scope owns like any other result. */
WT_API wt_status wt_contiguous(const wt_tensor *x, wt_tensor **out);

/* Views. squeeze drops the listed axes of size 1 (a listed axis of another
 * size stays, as in PyTorch); naxes 0 drops every size-1 axis. unsqueeze
 * inserts an axis of size 1 at position axis in [-ndim-1, ndim]. flatten
 * merges axes start..end (inclusive) into one: a view when x is contiguous,
 * else of a contiguous copy (like wt_reshape); a 0-d x becomes [1]. */
WT_API wt_status wt_squeeze(const wt_tensor *x, int naxes, const int *axes, wt_tensor **out);
WT_API wt_status wt_unsqueeze(const wt_tensor *x, int axis, wt_tensor **out);
WT_API wt_status wt_flatten(const wt_tensor *x, int start_axis, int end_axis, wt_tensor **out);

/* split writes n views of x into outs[0..n-1]: sizes[i] consecutive
 * elements along axis each (sizes >= 0 summing to the extent, else
 * WT_ERR_SHAPE). chunk splits into at most chunks pieces of
 * ceil(extent / chunks) elements (the last smaller), as torch.chunk: it
 * writes *nout <= chunks views into outs (capacity chunks). On failure no
 * view is returned (outs entries NULL). */
WT_API wt_status wt_split(const wt_tensor *x, int axis, int n, const int64_t *sizes,
                          wt_tensor **outs);
WT_API wt_status wt_chunk(const wt_tensor *x, int axis, int chunks, int *nout, wt_tensor **outs);

/* ======== 8. Elementwise ================================================= */
/*
 * Broadcasting: NumPy's, for every operand (0-d tensors are scalars).
 * Promotion of two operands of different dtypes (NumPy-like, without
 * f64): bool < i32 < f16 < f32, and i32 with f16 gives f32 (f16 cannot
 * hold every i32; NumPy would give f64, PyTorch f16). A bool operand of
 * arithmetic counts as 0/1 of the other operand's dtype; arithmetic on two
 * bools is refused (WT_ERR_INVALID_ARGUMENT: use the logical ops).
 * Results are new contiguous tensors of the promoted dtype unless stated.
 *
 * dtypes: each op follows one of the rules below (the lists are
 * examples); `webtensor ops` prints every op's dtypes, and wt_op_support
 * answers at run time.
 *  - float math (e.g. exp log sigmoid gelu leaky_relu; div pow atan2):
 *    f32, f16; i32 and bool inputs are computed in f32 and give f32
 *    (NumPy's true division; pow of integers is not kept integral).
 *  - arithmetic exact on integers (e.g. neg abs relu clamp; add mul
 *    maximum floor_divide remainder): f32, f16, i32 (i32 results); bool
 *    refused (unary) or promoted (binary, see above).
 *  - rounding (e.g. floor ceil round): f32, f16; i32 is returned
 *    unchanged; bool refused.
 *  - comparisons eq ne lt le gt ge: any dtypes (promoted), WT_BOOL result.
 *  - logical_and/or/xor/not: any dtypes, x != 0 is true; WT_BOOL result.
 * i32 arithmetic wraps around (two's complement): add, sub, mul, neg,
 * square, abs(INT32_MIN) = INT32_MIN, INT32_MIN // -1 = INT32_MIN.
 *
 * Special values follow NumPy / C99: NaN propagates through every float op
 * (maximum/minimum/clamp/relu included: NaN in, NaN out); comparisons with
 * NaN are false except ne (defined on every backend: the GPU kernels test
 * NaN on the bits); round() ties to even; sign(+-0) = +-0, sign(NaN) = NaN.
 * gelu, silu, mish of -inf are NaN (x * 0, as PyTorch's formulas).
 * Accuracy: f32 ops agree with a float64 reference within 1.2e-5 relative
 * + 1e-6 absolute (tested on the CPU, Vulkan and OpenGL ES); exact: neg,
 * abs, sign, relu, square (i32), floor, ceil, round, clamp, maximum,
 * minimum, comparisons, logical ops. On GPUs the transcendental ops build
 * on WGSL's built-ins, whose accuracy the WebGPU spec bounds loosely
 * (e.g. sin/cos by an absolute error); sin and cos reduce their argument
 * first and are accurate for |x| up to about 1e4; pow is
 * exp2(b * log2|a|) there, with a relative error growing with |b log2 a|;
 * pow of a negative base is defined for integral exponents only (NaN
 * otherwise), as in C.
 * WebAssembly build: in a browser the GPU is whatever the page's
 * WebGPU offers (SwiftShader, a CPU renderer, in headless Chromium); WGSL
 * promises no NaN or inf behaviour, so NaN/inf results of the
 * transcendental ops (exp/log of special values) are the adapter's own
 * there. Chromium 156's SwiftShader gave the values above in every case of
 * the conformance suite (make test-wasm). */

/* Binary, NumPy broadcasting. div on a GPU divides as WGSL does: IEEE
 * results on the devices tested, but WGSL promises its accuracy only for
 * divisors of magnitude in [2^-126, 2^126] (not 0 or inf). */
WT_API wt_status wt_add(const wt_tensor *a, const wt_tensor *b, wt_tensor **out);
WT_API wt_status wt_sub(const wt_tensor *a, const wt_tensor *b, wt_tensor **out);
WT_API wt_status wt_mul(const wt_tensor *a, const wt_tensor *b, wt_tensor **out);
WT_API wt_status wt_div(const wt_tensor *a, const wt_tensor *b, wt_tensor **out);
/* NaN-propagating maximum / minimum (NumPy's maximum, not fmax). */
WT_API wt_status wt_maximum(const wt_tensor *a, const wt_tensor *b, wt_tensor **out);
WT_API wt_status wt_minimum(const wt_tensor *a, const wt_tensor *b, wt_tensor **out);
/* a ** b (C's pow: pow(x, 0) = 1 even for NaN x, pow(1, y) = 1). */
WT_API wt_status wt_pow(const wt_tensor *a, const wt_tensor *b, wt_tensor **out);
/* C's fmod: a - b * trunc(a / b), exact, with the sign of a; fmod(a, 0)
 * and fmod(inf, b) are NaN, fmod(a, inf) = a. */
WT_API wt_status wt_fmod(const wt_tensor *a, const wt_tensor *b, wt_tensor **out);
WT_API wt_status wt_atan2(const wt_tensor *a, const wt_tensor *b, wt_tensor **out);
/* Python's // and % (NumPy floor_divide / remainder): the quotient
 * rounded toward -inf and the remainder with the sign of b, computed as
 * NumPy does (from fmod, so the quotient is the floor of the exact one).
 * Division by zero: floats give +-inf or NaN (a // 0) and NaN (a % 0),
 * like NumPy; i32 gives 0 for both (NumPy also gives 0, with a warning). */
WT_API wt_status wt_floor_divide(const wt_tensor *a, const wt_tensor *b, wt_tensor **out);
WT_API wt_status wt_remainder(const wt_tensor *a, const wt_tensor *b, wt_tensor **out);
/* Comparisons: WT_BOOL results. */
WT_API wt_status wt_eq(const wt_tensor *a, const wt_tensor *b, wt_tensor **out);
WT_API wt_status wt_ne(const wt_tensor *a, const wt_tensor *b, wt_tensor **out);
WT_API wt_status wt_lt(const wt_tensor *a, const wt_tensor *b, wt_tensor **out);
WT_API wt_status wt_le(const wt_tensor *a, const wt_tensor *b, wt_tensor **out);
WT_API wt_status wt_gt(const wt_tensor *a, const wt_tensor *b, wt_tensor **out);
WT_API wt_status wt_ge(const wt_tensor *a, const wt_tensor *b, wt_tensor **out);
/* Logical ops: WT_BOOL results. */
WT_API wt_status wt_logical_and(const wt_tensor *a, const wt_tensor *b, wt_tensor **out);
WT_API wt_status wt_logical_or(const wt_tensor *a, const wt_tensor *b, wt_tensor **out);
WT_API wt_status wt_logical_xor(const wt_tensor *a, const wt_tensor *b, wt_tensor **out);
WT_API wt_status wt_logical_not(const wt_tensor *x, wt_tensor **out);

/* The binary ops with a scalar b that needs no tensor (no upload: on a
 * GPU the value travels with the kernel's parameters): the same results as
 * with a 0-d tensor b, except that b is "weak", as PyTorch's Python
 * numbers: it takes a's dtype when a is f32 or f16; beside an i32 or bool
 * tensor it is i32 when it is an integer in the i32 range, else f32
 * (i32 + 2.5 is f32). For the logical ops b is b != 0. */
WT_API wt_status wt_add_scalar(const wt_tensor *a, double b, wt_tensor **out);
WT_API wt_status wt_sub_scalar(const wt_tensor *a, double b, wt_tensor **out);
WT_API wt_status wt_mul_scalar(const wt_tensor *a, double b, wt_tensor **out);
WT_API wt_status wt_div_scalar(const wt_tensor *a, double b, wt_tensor **out);
WT_API wt_status wt_maximum_scalar(const wt_tensor *a, double b, wt_tensor **out);
WT_API wt_status wt_minimum_scalar(const wt_tensor *a, double b, wt_tensor **out);
WT_API wt_status wt_pow_scalar(const wt_tensor *a, double b, wt_tensor **out);
WT_API wt_status wt_fmod_scalar(const wt_tensor *a, double b, wt_tensor **out);
WT_API wt_status wt_atan2_scalar(const wt_tensor *a, double b, wt_tensor **out);
WT_API wt_status wt_floor_divide_scalar(const wt_tensor *a, double b, wt_tensor **out);
WT_API wt_status wt_remainder_scalar(const wt_tensor *a, double b, wt_tensor **out);
WT_API wt_status wt_eq_scalar(const wt_tensor *a, double b, wt_tensor **out);
WT_API wt_status wt_ne_scalar(const wt_tensor *a, double b, wt_tensor **out);
WT_API wt_status wt_lt_scalar(const wt_tensor *a, double b, wt_tensor **out);
WT_API wt_status wt_le_scalar(const wt_tensor *a, double b, wt_tensor **out);
WT_API wt_status wt_gt_scalar(const wt_tensor *a, double b, wt_tensor **out);
WT_API wt_status wt_ge_scalar(const wt_tensor *a, double b, wt_tensor **out);
WT_API wt_status wt_logical_and_scalar(const wt_tensor *a, double b, wt_tensor **out);
WT_API wt_status wt_logical_or_scalar(const wt_tensor *a, double b, wt_tensor **out);
WT_API wt_status wt_logical_xor_scalar(const wt_tensor *a, double b, wt_tensor **out);

/* Unary. */
WT_API wt_status wt_neg(const wt_tensor *x, wt_tensor **out);
WT_API wt_status wt_exp(const wt_tensor *x, wt_tensor **out);
WT_API wt_status wt_log(const wt_tensor *x, wt_tensor **out);
WT_API wt_status wt_sqrt(const wt_tensor *x, wt_tensor **out);
WT_API wt_status wt_relu(const wt_tensor *x, wt_tensor **out);
WT_API wt_status wt_sigmoid(const wt_tensor *x, wt_tensor **out);
WT_API wt_status wt_tanh(const wt_tensor *x, wt_tensor **out);
WT_API wt_status wt_abs(const wt_tensor *x, wt_tensor **out);
WT_API wt_status wt_sign(const wt_tensor *x, wt_tensor **out);
WT_API wt_status wt_floor(const wt_tensor *x, wt_tensor **out);
WT_API wt_status wt_ceil(const wt_tensor *x, wt_tensor **out);
/* Round half to even (NumPy's round, PyTorch's round). */
WT_API wt_status wt_round(const wt_tensor *x, wt_tensor **out);
WT_API wt_status wt_square(const wt_tensor *x, wt_tensor **out);
WT_API wt_status wt_reciprocal(const wt_tensor *x, wt_tensor **out);
/* 1 / sqrt(x). */
WT_API wt_status wt_rsqrt(const wt_tensor *x, wt_tensor **out);
WT_API wt_status wt_sin(const wt_tensor *x, wt_tensor **out);
WT_API wt_status wt_cos(const wt_tensor *x, wt_tensor **out);
WT_API wt_status wt_exp2(const wt_tensor *x, wt_tensor **out);
WT_API wt_status wt_log2(const wt_tensor *x, wt_tensor **out);
/* log(1 + x) and exp(x) - 1, accurate near 0. */
WT_API wt_status wt_log1p(const wt_tensor *x, wt_tensor **out);
WT_API wt_status wt_expm1(const wt_tensor *x, wt_tensor **out);
WT_API wt_status wt_erf(const wt_tensor *x, wt_tensor **out);
/* x * Phi(x) = 0.5 x (1 + erf(x / sqrt 2)) (PyTorch's gelu, approximate="none"). */
WT_API wt_status wt_gelu(const wt_tensor *x, wt_tensor **out);
/* 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) (approximate="tanh"). */
WT_API wt_status wt_gelu_tanh(const wt_tensor *x, wt_tensor **out);
/* x * sigmoid(x). */
WT_API wt_status wt_silu(const wt_tensor *x, wt_tensor **out);
/* log(1 + exp(x)), computed as max(x, 0) + log1p(exp(-|x|)) (no overflow). */
WT_API wt_status wt_softplus(const wt_tensor *x, wt_tensor **out);
/* x * tanh(softplus(x)). */
WT_API wt_status wt_mish(const wt_tensor *x, wt_tensor **out);
/* relu6(x + 3) / 6 and x * relu6(x + 3) / 6 (PyTorch's). */
WT_API wt_status wt_hardsigmoid(const wt_tensor *x, wt_tensor **out);
WT_API wt_status wt_hardswish(const wt_tensor *x, wt_tensor **out);
/* x / (1 + |x|) (ONNX Softsign); +-1 at +-inf. */
WT_API wt_status wt_softsign(const wt_tensor *x, wt_tensor **out);
/* x < 0 ? alpha * x : x. */
WT_API wt_status wt_leaky_relu(const wt_tensor *x, double alpha, wt_tensor **out);
/* x > 0 ? x : alpha * (exp(x) - 1). */
WT_API wt_status wt_elu(const wt_tensor *x, double alpha, wt_tensor **out);
/* min(max(x, lo), hi) (hi where lo > hi, like NumPy's clip); NaN stays NaN.
 * For i32 x the bounds are rounded inward to integers (ceil lo, floor
 * hi) and saturated to the i32 range. WT_ERR_INVALID_ARGUMENT for a NaN
 * bound. */
WT_API wt_status wt_clamp(const wt_tensor *x, double lo, double hi, wt_tensor **out);

/* mask ? a : b, all three broadcast together (NumPy's where). mask must be
 * WT_BOOL (WT_ERR_INVALID_ARGUMENT otherwise); a and b are promoted. */
WT_API wt_status wt_where(const wt_tensor *mask, const wt_tensor *a, const wt_tensor *b,
                          wt_tensor **out);
/* x with value where mask is true (PyTorch's masked_fill); mask (WT_BOOL)
 * broadcasts to x's shape; the result has x's shape and dtype (value
 * converted like wt_tensor_full). */
WT_API wt_status wt_masked_fill(const wt_tensor *x, const wt_tensor *mask, double value,
                                wt_tensor **out);

/* ======== 9. Reductions and scans ======================================== */

/* Reductions over the listed axes (naxes 0: all axes). Negative axes count
 * from the end; an axis may not repeat. Over all axes without keepdims the
 * result is 0-d. max/min of an empty reduction is WT_ERR_SHAPE; the sum of
 * nothing is 0 and its mean NaN. */
WT_API wt_status wt_sum(const wt_tensor *x, int naxes, const int *axes, bool keepdims, wt_tensor **out);
WT_API wt_status wt_mean(const wt_tensor *x, int naxes, const int *axes, bool keepdims, wt_tensor **out);
WT_API wt_status wt_max(const wt_tensor *x, int naxes, const int *axes, bool keepdims, wt_tensor **out);
WT_API wt_status wt_min(const wt_tensor *x, int naxes, const int *axes, bool keepdims, wt_tensor **out);

/* More reductions, with the axes, keepdims and empty rules of wt_sum. Each
 * is one row of the library's reduction table (core/reduce_ops.def).
 * dtypes: f32 and f16 (f16 inputs are reduced in f32 and the result
 * rounded to f16); f32 results accumulate in f32 or better: double on the
 * CPU; on the GPU f32 with pairwise-like partials (tree order), so a sum of
 * K terms is within about 1e-7 * sqrt(K) * sum|terms| in practice and
 * never worse than K * 6e-8 * sum|terms|. A long f16 sum is therefore as
 * precise as the f32 sum of the same values, then rounded once to f16
 * (relative 4.9e-4); it overflows to inf only when the result exceeds
 * 65504.
 * WT_I32 inputs: sum, prod, max and min give WT_I32 results, sums and
 * products wrapping modulo 2^32 (two's complement; NumPy's
 * np.sum(x, dtype=np.int32)); the other reductions of an i32 tensor run on
 * its f32 values and give f32 (NumPy's mean). The sum and product of a
 * WT_BOOL mask are WT_I32 (the sum counts the true elements); the other
 * reductions refuse bool (WT_ERR_INVALID_ARGUMENT) except all, any, argmax
 * and argmin. Empty reductions: sum 0,
 * prod 1, mean/var/std NaN, logsumexp -inf, norms 0, all true, any false;
 * max, min, argmax and argmin of nothing are WT_ERR_SHAPE. */
WT_API wt_status wt_prod(const wt_tensor *x, int naxes, const int *axes, bool keepdims, wt_tensor **out);
/* var = sum((x - mean)^2) / (N - correction) over the N reduced elements
 * (correction 1: Bessel's, the sample variance; 0: the population one);
 * std = sqrt(var). correction >= 0 and finite, else
 * WT_ERR_INVALID_ARGUMENT; correction >= N divides by 0 like NumPy: inf,
 * or NaN where the sum is 0. Two passes (the mean, then the squares about
 * it): no cancellation. */
WT_API wt_status wt_var(const wt_tensor *x, int naxes, const int *axes, double correction,
                        bool keepdims, wt_tensor **out);
WT_API wt_status wt_std(const wt_tensor *x, int naxes, const int *axes, double correction,
                        bool keepdims, wt_tensor **out);
/* log(sum(exp(x))), computed as m + log(sum(exp(x - m))) with m the
 * maximum (0 where the maximum is infinite): never overflows; all -inf
 * gives -inf, a +inf gives +inf, a NaN gives NaN. */
WT_API wt_status wt_logsumexp(const wt_tensor *x, int naxes, const int *axes, bool keepdims,
                              wt_tensor **out);
/* Vector norm over the listed axes taken together (torch.linalg.vector_norm):
 * ord 1: sum |x|; ord 2: sqrt(sum x^2) (no rescaling: on the GPU squares
 * beyond the f32 range overflow to inf); ord INFINITY: max |x|. Other ord:
 * WT_ERR_INVALID_ARGUMENT. */
WT_API wt_status wt_norm(const wt_tensor *x, double ord, int naxes, const int *axes, bool keepdims,
                         wt_tensor **out);
/* Whether all (any) elements of a WT_BOOL mask are true; the result is a
 * WT_BOOL tensor. Other dtypes: WT_ERR_INVALID_ARGUMENT (compare first). */
WT_API wt_status wt_all(const wt_tensor *x, int naxes, const int *axes, bool keepdims, wt_tensor **out);
WT_API wt_status wt_any(const wt_tensor *x, int naxes, const int *axes, bool keepdims, wt_tensor **out);
/* Index (WT_I32) of the first maximum (minimum) over the listed axes: naxes
 * 0 gives the index into the flattened tensor (NumPy's axis=None), one axis
 * the index along it; several axes the row-major index within the block
 * they span. Ties: the first index. NaN: like NumPy, the first NaN's index
 * (a NaN counts as the maximum and as the minimum). f32, f16, i32 and bool
 * inputs. An empty reduction is WT_ERR_SHAPE; more than 2^31 - 1 elements
 * per output WT_ERR_UNSUPPORTED. */
WT_API wt_status wt_argmax(const wt_tensor *x, int naxes, const int *axes, bool keepdims, wt_tensor **out);
WT_API wt_status wt_argmin(const wt_tensor *x, int naxes, const int *axes, bool keepdims, wt_tensor **out);
/* Inclusive cumulative sum (product) along axis (negative counts from the
 * end); the result has x's shape. A 0-d x is treated as [1]. f32 and f16
 * (computed in f32: a double running value on the CPU, a blocked parallel
 * scan in f32 on the GPU); i32 gives i32, wrapping modulo 2^32; a WT_BOOL
 * mask gives i32 (the running count of true elements). */
WT_API wt_status wt_cumsum(const wt_tensor *x, int axis, wt_tensor **out);
WT_API wt_status wt_cumprod(const wt_tensor *x, int axis, wt_tensor **out);

/* ======== 10. Data movement ============================================== */

/* Shape and data-movement ops. They move elements as they are, so every
 * dtype works (f32, f16, i32, bool) and results are exact.
 * Axes may be negative (counted from the end). Index tensors are WT_I32
 * (another dtype: WT_ERR_INVALID_ARGUMENT); an index outside its axis
 * (negative ones included: they do not wrap) is WT_ERR_INVALID_ARGUMENT and
 * never reads or writes out of bounds. On the CPU indices are checked as
 * they are read and the call fails. On the GPU every access is clamped and
 * a bad index raises a flag in a small device buffer that the context reads
 * at the next sync: gather, index_select, embedding, scatter_add, index_add
 * and one_hot return without waiting for the GPU, and the next
 * wt_context_sync or blocking read returns the error (section 3, "errors
 * and recovery"). */

/* concat joins n >= 1 tensors of one dtype and context along an existing
 * axis (other extents equal); stack along a new axis at position axis in
 * [-ndim-1, ndim] (shapes equal). The result is a new tensor.
 * WT_ERR_SHAPE for extents that differ, WT_ERR_INVALID_ARGUMENT for dtypes
 * that differ, bad axes, n < 1 or a NULL entry. */
WT_API wt_status wt_concat(int n, wt_tensor *const *xs, int axis, wt_tensor **out);
WT_API wt_status wt_stack(int n, wt_tensor *const *xs, int axis, wt_tensor **out);

/* torch.gather: out (index's shape) = x[..., index[i], ...] along axis;
 * index has x's ndim and, on every other axis, an extent <= x's. */
WT_API wt_status wt_gather(const wt_tensor *x, int axis, const wt_tensor *index, wt_tensor **out);
/* torch.index_select: index is 1-D (or 0-d, one entry); out is x with the
 * axis's extent replaced by the index count (a 0-d x takes one index and
 * gives a 0-d result). */
WT_API wt_status wt_index_select(const wt_tensor *x, int axis, const wt_tensor *index,
                                 wt_tensor **out);
/* Embedding lookup: table [V, D], index of any shape -> [index..., D]. */
WT_API wt_status wt_embedding(const wt_tensor *table, const wt_tensor *index, wt_tensor **out);
/* torch.scatter_add: out = x with src[i] added at [..., index[i], ...]
 * along axis (index has x's ndim; its extents are <= src's on every axis
 * and <= x's on the others; src elements past index's extents are not
 * used). index_add: out = x with src's slice i added at slice index[i]
 * along axis (index 1-D; src is x's shape with that extent = the index
 * count). Dtypes f32, f16 (each addition rounds to f16) and i32 (wraps);
 * src has x's dtype. Repeated indices accumulate. Determinism: the CPU
 * adds in index order; the GPU adds with atomic compare-and-swap loops, so
 * float sums over repeated indices may differ in the last bits between
 * runs (i32 sums are exact). */
WT_API wt_status wt_scatter_add(const wt_tensor *x, int axis, const wt_tensor *index,
                                const wt_tensor *src, wt_tensor **out);
WT_API wt_status wt_index_add(const wt_tensor *x, int axis, const wt_tensor *index,
                              const wt_tensor *src, wt_tensor **out);
/* one_hot: i32 index of any shape -> i32 [index..., num_classes] with 1 at
 * each index and 0 elsewhere. num_classes -1: max(index) + 1 (reads the
 * index back, a wait on the GPU). An index outside [0, num_classes):
 * WT_ERR_INVALID_ARGUMENT. */
WT_API wt_status wt_one_hot(const wt_tensor *index, int64_t num_classes, wt_tensor **out);

/* pad: pads holds npads (even, <= 2 * ndim) extents in torch.nn.functional.pad
 * order: (before, after) of the last axis, then of the one before it ...
 * Pads are >= 0 (negative: WT_ERR_INVALID_ARGUMENT). CONSTANT fills with
 * value (converted to x's dtype: f16 rounds to nearest even, i32 truncates
 * toward zero and must fit, bool is value != 0); REFLECT mirrors without
 * repeating the edge and needs each pad < the axis's extent (else
 * WT_ERR_INVALID_ARGUMENT, as PyTorch); REPLICATE repeats the edge and
 * needs a non-empty axis where it pads. */
typedef enum wt_pad_mode { WT_PAD_CONSTANT = 0, WT_PAD_REFLECT = 1, WT_PAD_REPLICATE = 2 } wt_pad_mode;
WT_API wt_status wt_pad(const wt_tensor *x, int npads, const int64_t *pads, wt_pad_mode mode,
                        double value, wt_tensor **out);
/* torch.Tensor.repeat: n >= ndim counts (>= 0); x is first viewed with
 * n - ndim leading axes of size 1. tile (numpy.tile / torch.tile): the same
 * with counts padded with leading 1s when n < ndim. */
WT_API wt_status wt_repeat(const wt_tensor *x, int n, const int64_t *repeats, wt_tensor **out);
WT_API wt_status wt_tile(const wt_tensor *x, int n, const int64_t *reps, wt_tensor **out);
/* flip reverses the listed axes (no repeats). roll shifts elements along
 * each listed axis (torch.roll; elements leaving one end enter the other);
 * naxes 0 rolls the flattened tensor by shifts[0] and keeps the shape. */
WT_API wt_status wt_flip(const wt_tensor *x, int naxes, const int *axes, wt_tensor **out);
WT_API wt_status wt_roll(const wt_tensor *x, int naxes, const int64_t *shifts, const int *axes,
                         wt_tensor **out);
/* tril / triu of the last two axes (ndim >= 2): keep elements with
 * col - row <= diagonal (tril) or >= diagonal (triu), zero the others. */
WT_API wt_status wt_tril(const wt_tensor *x, int64_t diagonal, wt_tensor **out);
WT_API wt_status wt_triu(const wt_tensor *x, int64_t diagonal, wt_tensor **out);

/* Sorting. Order: numbers by value, -0 equal to +0, NaN above +inf (NaNs
 * equal), false before true; descending reverses it (NaN first). Sorts are stable: equal
 * elements keep their order, so ties give the lower index first, also for
 * descending and for topk. sort writes the sorted values and, when indices
 * is not NULL, their positions (i32) along axis; argsort only the
 * positions. topk: the first k elements of that order along axis (the k
 * largest, descending, or the k smallest), values and i32 positions
 * (indices may be NULL); 0 <= k <= extent.
 * The GPU sorts (key, position) pairs with a bitonic network: rows up to
 * 2048 in workgroup memory, longer rows with global merge passes. */
WT_API wt_status wt_sort(const wt_tensor *x, int axis, bool descending, wt_tensor **values,
                         wt_tensor **indices);
WT_API wt_status wt_argsort(const wt_tensor *x, int axis, bool descending, wt_tensor **out);
WT_API wt_status wt_topk_v2(const wt_tensor *x, int64_t k, int axis, bool descending, wt_tensor **values,
                            wt_tensor **indices);

/* In place: dst = src, src broadcast to dst's shape (NumPy rules; dst's
 * shape does not change). dst may be any view (a slice of a KV cache, a
 * transposed view) but must not repeat elements (an expanded view:
 * WT_ERR_INVALID_ARGUMENT). A src of another float dtype is converted as
 * wt_cast does. Aliasing: when src and dst share storage and their element
 * ranges overlap, src is first copied to a temporary, so the result is as
 * if src were read entirely before dst is written. */
WT_API wt_status wt_copy_into(wt_tensor *dst, const wt_tensor *src);
/* dst's slice [s, s + n) along axis = src, where n is src's extent there
 * and s = start's one element (i32, any shape, read by the kernel on the
 * device) clamped to [0, extent - n], as XLA's dynamic_update_slice does.
 * src broadcasts (NumPy rules) to dst's shape with extent n on axis, and
 * is converted to dst's dtype; dst is updated in place (a view whose
 * elements are distinct). The write of a step's keys and values into a KV
 * cache at a position that changes per step, in a captured graph.
 * Not differentiable (either tensor requiring grad while recording:
 * WT_ERR_INVALID_ARGUMENT, as wt_copy_into). */
WT_API wt_status wt_copy_into_at(wt_tensor *dst, int axis, const wt_tensor *start, const wt_tensor *src);

/* ======== 11. Linear algebra ============================================= */

/* NumPy matmul: 1-D operands are promoted and the added axis removed;
 * batch axes broadcast. Transposed, sliced and broadcast views are read
 * through their strides (no copy on WebGPU unless batch axes do not fold
 * into one). f16 operands give an f16 result accumulated in f32 and
 * rounded once (on the CPU backend: computed in f32, then rounded).
 * WT_ERR_SHAPE when the inner extents or the batch axes do not fit;
 * WT_ERR_UNSUPPORTED beyond 32-bit indexing on WebGPU. */
WT_API wt_status wt_matmul(const wt_tensor *a, const wt_tensor *b, wt_tensor **out);

/* out = x @ w^T + bias, with w in [out_features, in_features] layout (the
 * PyTorch / safetensors convention), read in place through a transposed
 * view (never copied). x: [..., in_features]; bias: [out_features] or
 * NULL. Result [..., out_features]. */
WT_API wt_status wt_linear(const wt_tensor *x, const wt_tensor *w, const wt_tensor *bias,
                           wt_tensor **out);

/* What wt_linear_fused does around the product. */
typedef struct wt_linear_fused_options {
    uint32_t struct_size;
    /* RMSNorm of x over its last axis first (wt_rms_norm(x, 1, norm_weight,
     * norm_eps)); norm_weight [in_features] or NULL (no scale). */
    bool rms_norm;
    const wt_tensor *norm_weight;
    double norm_eps; /* 1e-6 */
    /* SwiGLU of the product (w's rows are gate then up, joined):
     * silu(y[..., :N/2]) * y[..., N/2:], N = out_features, even. */
    bool swiglu;
    /* NULL, or a tensor of the result's shape added last. */
    const wt_tensor *residual;
    /* The result in f32 whatever the inputs' dtypes (an f16 product's
     * sums never rounded to f16). */
    bool result_f32;
} wt_linear_fused_options;

WT_API void wt_linear_fused_options_init(wt_linear_fused_options *opts);

/* A linear layer with its neighbours in one kernel where the backend has
 * one (WebGPU and CPU, for up to 16 rows of x: a decode step), else as the
 * composition of the public ops:
 *     h   = rms_norm ? wt_rms_norm(x, 1, norm_weight, norm_eps) : x
 *     y   = h @ w^T + bias                      [..., N]
 *     y   = swiglu ? silu(y[.., :N/2]) * y[.., N/2:] : y
 *     out = y + residual   (residual NULL: y)
 * Tensors are f32 or f16, in any mix (the norm weight of x's dtype for the
 * fused kernel); the result has the residual's dtype when there is one,
 * else x's, or f32 with result_f32. The fused kernel computes in f32 and
 * rounds the result once, so with f16 tensors it differs from the
 * composition (which rounds after each op) in the last bits. Recorded for
 * autograd as the composition's ops. */
WT_API wt_status wt_linear_fused(const wt_tensor *x, const wt_tensor *w, const wt_tensor *bias,
                                 const wt_linear_fused_options *opts, wt_tensor **out);

/* --- quantised weights: ggml's block formats ---
 * A weight matrix [N, K] quantised in blocks of consecutive elements of a
 * row, the layouts of ggml and GGUF files (all multi-byte fields
 * little-endian, f16 fields IEEE binary16). K is a multiple of the block:
 * 32 for Q8_0 and Q4_0, 256 for the super-block formats Q4_K and Q6_K.
 *
 *   WT_QUANT_Q8_0: 34 bytes = f16 d, then 32 int8 q[i]; x[i] = q[i] * d.
 *   WT_QUANT_Q4_0: 18 bytes = f16 d, then 16 bytes qs[j]; element j is the
 *                  low nibble of qs[j], element j + 16 its high nibble;
 *                  x = (nibble - 8) * d.
 *   WT_QUANT_Q4_K: 144 bytes for 256 elements, eight sub-blocks of 32 with
 *                  a 6-bit scale sc[s] and a 6-bit min m[s] each:
 *                    bytes 0..1 f16 d, 2..3 f16 dmin, 4..15 the 12 bytes
 *                    S[0..11] of scales and mins, 16..143 the 128 bytes
 *                    qs[0..127] of nibbles.
 *                  For s < 4: sc[s] = S[s] & 63, m[s] = S[s+4] & 63; for
 *                  s >= 4: sc[s] = (S[s+4] & 15) | (S[s-4] >> 6) << 4,
 *                  m[s] = (S[s+4] >> 4) | (S[s] >> 6) << 4.
 *                  Element e (0..255): c = e / 64, l = e % 32, s = e / 32;
 *                  q = the low nibble of qs[32c + l] when e % 64 < 32,
 *                  else its high nibble; x = d*sc[s] * q - dmin*m[s].
 *   WT_QUANT_Q6_K: 210 bytes for 256 elements, sixteen sub-blocks of 16
 *                  with an int8 scale each:
 *                    bytes 0..127 ql[0..127] (low 4 bits), 128..191
 *                    qh[0..63] (high 2 bits), 192..207 int8 sc[0..15],
 *                    208..209 f16 d.
 *                  Element e: h = e / 128, g = e % 128 / 32, l = e % 32;
 *                  low = ql[64h + 32(g & 1) + l], its low nibble for g < 2,
 *                  else its high nibble; high = (qh[32h + l] >> 2g) & 3;
 *                  q = (low | high << 4) - 32 (-32 .. 31);
 *                  x = d * sc[8h + 2g + l/16] * q.
 *
 * Every Q8_0, Q4_0 and Q6_K value is exact in f32 (an f16 times integers
 * of at most 24 bits together); a Q4_K value is the f32 rounding of the
 * exact d*sc*q - dmin*m (both products are exact in f32, the difference
 * is rounded once). The enum values are ggml's type ids (GGUF's tensor
 * type field).
 *
 * The library holds such a weight in an ordinary WT_I32 tensor of shape
 * [N, W]: row n carries the K/B blocks of row n back to back (B the
 * block's elements), byte b of the row in bits 8*(b%4) .. 8*(b%4)+7 of
 * word b/4 (the bytes of the file, as a little-endian host reads them into
 * words), the row's last word padded with zero bytes. W = ceil(K/B *
 * block_bytes / 4). Why words:
 * 34, 18 and 210 are not multiples of 4, and GPU storage is read in 32-bit
 * words; padding each row to a word keeps every row starting on a word
 * so that a kernel finds row n at word n*W. A tensor of this form is
 * handled like any other (wt_tensor_to, wt_tensor_release, views of whole
 * rows); K follows from W and the type, and a [N, W] that no K gives is
 * refused. The ops below take the type with the tensor. */
typedef enum wt_quant_type {
    WT_QUANT_Q4_0 = 2,
    WT_QUANT_Q8_0 = 8,
    WT_QUANT_Q4_K = 12,
    WT_QUANT_Q6_K = 14
} wt_quant_type;

/* The quantised weight [N, K] of type from its ggml blocks in host memory
 * (what wt_gguf_read_raw gives for a GGUF tensor of dims {K, N}): bytes
 * must be exactly N * K/B * block_bytes. N > 0, K > 0 and a multiple of
 * the block's B elements (32, or 256 for Q4_K and Q6_K). */
WT_API wt_status wt_quant_from_blocks(wt_context *ctx, wt_quant_type type, int64_t n, int64_t k,
                                      const void *blocks, size_t bytes, wt_tensor **out);
/* Quantises x (f32 or f16, 2-D [N, K], K a multiple of the type's block:
 * 32, or 256 for Q4_K and Q6_K) into type, byte for byte as ggml's
 * reference quantisers (quantize_row_*_ref, what llama.cpp's quantize
 * tool does without an importance matrix):
 *   Q8_0: amax = max |x|, d = amax / 127, q = roundf(x * (1/d)) (halves
 *         away from zero; 0 when d == 0);
 *   Q4_0: m = the element of largest magnitude (the first of equals),
 *         d = m / -8, nibble = min(15, trunc(x * (1/d) + 8.5)) (0 .. 15);
 *   Q4_K: per sub-block of 32, a scale and a min (the min clamped to
 *         <= 0) fitted by ggml's search (make_qkx2_quants: 21 stretched
 *         scales over the range, each refined by weighted least squares,
 *         weights RMS + |x|, the least weighted squared error kept); the
 *         eight scales and mins stored as 6-bit multiples of d = max
 *         scale / 63 and dmin = max min / 63, and the nibbles requantised
 *         against the stored values: round((x + dmin*m) / (d*sc));
 *   Q6_K: per sub-block of 16, a symmetric scale from ggml's search
 *         (make_qx_quants: 19 stretched scales, least squares weighted by
 *         x^2), stored as int8 multiples of d (the largest of magnitude
 *         -128), the codes requantised against the stored values:
 *         round(x / (d*sc)) in -32 .. 31;
 * rounding to an integer is to nearest, ties to even (ggml's nearest_int)
 * except Q8_0's and Q4_0's stated above; every intermediate in f32 in the
 * reference's order; d computed in f32 and stored rounded to f16 (to
 * nearest, ties even). Runs on the host (a load-time step: x is read
 * back), on every backend. NaN or infinite elements are refused. */
WT_API wt_status wt_quantize(const wt_tensor *x, wt_quant_type type, wt_tensor **out);
/* w (the i32 form above) as a dense [N, K] tensor of dtype (WT_F32 or
 * WT_F16): the f32 values stated above (f16: those rounded to f16). */
WT_API wt_status wt_dequantize(const wt_tensor *w, wt_quant_type type, wt_dtype dtype, wt_tensor **out);
/* out = x @ W^T + bias, as wt_linear with the quantised w [N, K] never
 * made dense: x [..., K] and bias [N] or NULL (f32, or f16 through f32:
 * the result is f16 when every given one is), result [..., N]. One row of x (decode) runs a fused
 * dequantise-GEMV, several a tiled dequantise-GEMM; sums in f32.
 * Tolerance: on the CPU backend, weights of all four types with one to
 * four rows of x (decode) round x once per call to 8-bit blocks, as
 * llama.cpp does (a step d = max|x| / 127 and q = round(x / d) per 32
 * elements for Q8_0 and Q4_0, per super-block of 256 for Q4_K and Q6_K),
 * and sum integer products exactly: each result may then differ from
 * the f32 one by up to the sum over blocks of (sum of |w_j|) * max|x_j| /
 * 254 (half a step of x per element; the errors of independent
 * elements largely cancel, so typically far less).
 * WT_CPU_QUANT_DOT=f32 keeps x exact; x holding an inf or a NaN, or a
 * block whose max|x| is nonzero but below 127 * 2^-100 (about 1e-28),
 * always takes the exact path. On WebGPU x stays f32 unless WT_QUANT_GEMV_X8 is
 * set (docs/KNOBS.md; up to 4 rows of x): the GEMV then rounds x the same
 * way first, each element's product differing by at most max |x| of its
 * block / 254 times the weight's quant term (faster, not the same
 * values). Other types and row counts: f32. */
WT_API wt_status wt_linear_quant(const wt_tensor *x, const wt_tensor *w, wt_quant_type type,
                                 const wt_tensor *bias, wt_tensor **out);
/* wt_linear_fused with a quantised weight w (wt_linear_quant's form and
 * type): the RMSNorm before the product, the SwiGLU and the residual add
 * after it as opts asks (NULL: none of them), that is
 *     h   = rms_norm ? wt_rms_norm(x, 1, norm_weight, norm_eps) : x
 *     y   = wt_linear_quant(h, w, type, bias)   [..., N]
 *     y   = swiglu ? silu(y[.., :N/2]) * y[.., N/2:] : y
 *     out = y + residual   (residual NULL: y)
 * with the result's dtype chosen as wt_linear_fused does. On WebGPU, for
 * up to 4 rows of f32 x (a decode step) with Q8_0, Q4_0 or Q4_K weights,
 * f32 bias, norm weight and residual, and x and the norm weight starting
 * at a multiple of 4 elements of their storage, one kernel does it all,
 * the norm's 1/rms applied to the product's sums (so the result differs
 * from the composition's in the last bits); elsewhere (an RMSNorm without
 * a weight, WT_QUANT_GEMV_X8 or WT_QUANT_GEMV_RPT set, the CPU backend)
 * it is that composition. Recorded for autograd as the composition. */
WT_API wt_status wt_linear_quant_fused(const wt_tensor *x, const wt_tensor *w, wt_quant_type type,
                                       const wt_tensor *bias, const wt_linear_fused_options *opts,
                                       wt_tensor **out);
/* Embedding lookup in a quantised table (the i32 form above, [V, K]):
 * index (i32, any shape, entries in [0, V), checked as wt_embedding's)
 * -> [index..., K] of dtype (WT_F32 or WT_F16), each row dequantised as
 * wt_dequantize does. Only the rows looked up are made dense. */
WT_API wt_status wt_embedding_quant(const wt_tensor *table, wt_quant_type type, const wt_tensor *index,
                                    wt_dtype dtype, wt_tensor **out);

/* ======== 12. Networks =================================================== */

/* --- softmax and norms --- */

/* exp(x - max) / sum along axis (NumPy/PyTorch semantics; axis may be
 * negative). */
WT_API wt_status wt_softmax(const wt_tensor *x, int axis, wt_tensor **out);

/* log(softmax(x)) along axis, computed as (x - max) - log(sum(exp(x - max)))
 * (no overflow for large inputs, no log of an underflowed 0). A row of
 * -inf gives NaN, as in PyTorch. Any axis; negative axes count from the end;
 * wt_softmax and wt_log_softmax read a middle axis in place (no transpose).
 * f32 and f16 (through f32); WT_ERR_UNSUPPORTED for i32 and bool. */
WT_API wt_status wt_log_softmax(const wt_tensor *x, int axis, wt_tensor **out);

/* Layer norm and RMS norm over the last normalized_ndim axes of x (PyTorch's
 * normalized_shape = x.shape[-normalized_ndim:]), C elements each:
 *   layer_norm: (x - mean) / sqrt(var + eps) * weight + bias  (biased var)
 *   rms_norm:   x / sqrt(mean(x^2) + eps) * weight
 * weight and bias have the normalised shape or are NULL (1 and 0).
 * Statistics are over all normalised elements together. normalized_ndim
 * in [1, x's ndim], eps finite and >= 0 (1e-5 is PyTorch's default; rms
 * norm models use 1e-6). Finite rows never overflow inside the norms, up
 * to the top of the f32 range: the statistics are kept in range on every
 * backend. */
WT_API wt_status wt_layer_norm(const wt_tensor *x, int normalized_ndim, const wt_tensor *weight,
                               const wt_tensor *bias, double eps, wt_tensor **out);
WT_API wt_status wt_rms_norm(const wt_tensor *x, int normalized_ndim, const wt_tensor *weight,
                             double eps, wt_tensor **out);

typedef struct wt_batch_norm_options {
    uint32_t struct_size; /* set by wt_batch_norm_options_init */
    bool training;        /* false: normalise with the running statistics */
    double momentum;      /* 0.1: running = (1 - momentum) * running + momentum * batch */
    double eps;           /* 1e-5 */
} wt_batch_norm_options;
WT_API void wt_batch_norm_options_init(wt_batch_norm_options *opts);

/* x [N, C, ...] (at least 2 axes), normalised per channel c:
 *   out = (x - mean[c]) / sqrt(var[c] + eps) * weight[c] + bias[c]
 * weight, bias: [C] or NULL (1 and 0). Inference: mean and var are
 * running_mean and running_var ([C], required). Training: the biased
 * mean and variance of x over every axis but 1 (at least 2 values per
 * channel, else WT_ERR_SHAPE); running_mean and running_var, if given
 * (both or neither; [C], f32 or f16, contiguous), are updated in place
 * with PyTorch's rule: the running variance takes the UNBIASED batch
 * variance (times n / (n - 1)). batch_mean and batch_var may be NULL; in
 * training they receive the batch mean and the biased batch variance
 * ([C] f32 views of one [2, C] tensor), in inference NULL. Statistics are
 * two-pass (squared deviations from the mean): a large mean costs no
 * precision. */
WT_API wt_status wt_batch_norm(const wt_tensor *x, wt_tensor *running_mean, wt_tensor *running_var,
                               const wt_tensor *weight, const wt_tensor *bias,
                               const wt_batch_norm_options *opts, wt_tensor **out,
                               wt_tensor **batch_mean, wt_tensor **batch_var);
/* x [N, C, ...]: the channels split into num_groups groups; each (n,
 * group) is normalised by its own mean and biased variance, then
 * out = normalised * weight[c] + bias[c] (weight, bias [C] or NULL).
 * batch_norm and group_norm compute f16 through f32; the result has x's
 * dtype. */
typedef struct wt_group_norm_options {
    uint32_t struct_size; /* set by wt_group_norm_options_init */
    double eps;           /* 1e-5 */
} wt_group_norm_options;
WT_API void wt_group_norm_options_init(wt_group_norm_options *opts);
/* num_groups > 0 divides C; opts NULL: the defaults. */
WT_API wt_status wt_group_norm_v2(const wt_tensor *x, int64_t num_groups, const wt_tensor *weight,
                                  const wt_tensor *bias, const wt_group_norm_options *opts, wt_tensor **out);

/* --- attention --- */

/* Attention, fused (no [Sq, Skv] score matrix is stored):
 *   out = softmax(q @ k^T * scale + mask) @ v
 * q [B, Hq, Sq, D], k [B, Hkv, Skv, D], v [B, Hkv, Skv, Dv] -> out
 * [B, Hq, Sq, Dv] (3-D inputs are [H, S, D], B = 1, and give a 3-D result).
 * Grouped-query attention: Hkv divides Hq, and q head h reads k/v head
 * h / (Hq / Hkv) (PyTorch's enable_gqa, repeat_interleave order).
 * mask: NULL, or broadcastable (NumPy rules, up to 4 dims) to
 *   [B, Hq, Sq, Skv]: WT_F32/WT_F16 values are added to the scores
 *   (-inf masks); a WT_BOOL mask keeps the keys where it is true
 *   (PyTorch's boolean attn_mask).
 * causal: the causal
 *   triangle is aligned to the END of the keys (bottom-right), which is
 *   what a KV cache needs (decode: Sq = 1 sees every key). PyTorch's
 *   is_causal aligns it top-left; the two agree when Sq == Skv. causal and
 *   a mask may be combined (a key must pass both); PyTorch refuses that.
 * opts (NULL: the defaults of wt_attention_options_init):
 *   causal: query i sees key j only if j <= i + (Skv - Sq) (below);
 *   scale: 0 for 1/sqrt(D), else any value finite in f32.
 * A query row that sees no key (every score -inf: fully masked, or
 *   causal with Sq > Skv, or Skv = 0) gives 0s, as PyTorch's
 *   scaled_dot_product_attention does (not NaN).
 * q, k, v: f32, or f16 computed in f32 (the result is f16 only if q, k
 * and v all are); WT_ERR_UNSUPPORTED for i32 and bool.
 * Errors: WT_ERR_SHAPE for ranks other than 3/4, mismatched batch, D or
 * Skv, Hkv not dividing Hq, a mask that does not broadcast;
 * WT_ERR_INVALID_ARGUMENT for a NaN/inf scale or an i32 mask.
 * The WebGPU kernels hold a query tile and a key/value tile in workgroup
 * memory, which bounds D and Dv (about D + max(D, Dv) <= 4000 with
 * WebGPU's minimum 16 KiB; tested up to 256): WT_ERR_UNSUPPORTED beyond.
 * On WebGPU, work without a mask with D == Dv a multiple of 4 and rows
 * of q, k, v aligned to 4 elements (prefill) runs a register-tiled kernel
 * that reads f16 q, k, v as f16 (f32 sums, f16 result); other f16 work
 * is computed through f32 copies. */
typedef struct wt_attention_options {
    uint32_t struct_size; /* set by wt_attention_options_init */
    bool causal;          /* false */
    double scale;         /* 0: 1/sqrt(D) */
    /* NULL, or an i32 tensor of one element (any shape) read by the
     * kernel on the device: only the first kv_length keys are seen (the
     * value clamped to [0, Skv]), and causal aligns to the end of those
     * keys. A decode step over a KV cache of fixed size Skv then stays
     * the same graph while the cache fills (see "values that change per
     * step" under captured graphs). Not differentiable (a q, k or v that
     * requires grad: WT_ERR_UNSUPPORTED). */
    const wt_tensor *kv_length;
} wt_attention_options;
WT_API void wt_attention_options_init(wt_attention_options *opts);
WT_API wt_status wt_scaled_dot_product_attention_v2(const wt_tensor *q, const wt_tensor *k,
                                                    const wt_tensor *v, const wt_tensor *mask,
                                                    const wt_attention_options *opts, wt_tensor **out);

/* Rotary position embedding, Llama / Hugging Face convention
 * ("rotate_half"): with D the last axis (even), h = D / 2, p = offset + s
 * the position of sequence index s, and f_i = theta^(-2i / D), i < h:
 *   out[i]     = x[i] * cos(p f_i) - x[i + h] * sin(p f_i)
 *   out[i + h] = x[i + h] * cos(p f_i) + x[i] * sin(p f_i)
 * layout names the sequence axis: WT_ROPE_BHSD ([..., S, D], the axis
 * before D, as q/k of wt_scaled_dot_product_attention_v2) or WT_ROPE_BSHD
 * ([..., S, H, D], two before D, the layout of a projection's output).
 * theta > 0 (10000 for Llama 2, 500000 for Llama 3), offset >= 0 (the
 * position of the first token, e.g. the KV-cache length when decoding).
 * Angles are exact to about 2e-6 rad (the CPU computes them in double;
 * WebGPU reduces them exactly in turns, for positions below 2^24, and
 * refuses larger ones with WT_ERR_UNSUPPORTED): more accurate than a
 * float32 cos/sin cache at long positions. f32 and f16 (through f32). */
typedef enum wt_rope_layout { WT_ROPE_BHSD = 0, WT_ROPE_BSHD = 1 } wt_rope_layout;
typedef struct wt_rope_options {
    uint32_t struct_size;  /* set by wt_rope_options_init */
    double theta;          /* 10000 */
    int64_t offset;        /* 0 */
    wt_rope_layout layout; /* WT_ROPE_BHSD */
    /* NULL, or an i32 tensor of one element (any shape) read by the
     * kernel on the device and added to offset (a sum below 0 counts as
     * 0; on WebGPU positions past 2^24 lose exactness). Not
     * differentiable (x requiring grad: WT_ERR_UNSUPPORTED). */
    const wt_tensor *position;
} wt_rope_options;
WT_API void wt_rope_options_init(wt_rope_options *opts);
/* opts NULL: the defaults. */
WT_API wt_status wt_rope_v2(const wt_tensor *x, const wt_rope_options *opts, wt_tensor **out);

/* The start of an attention layer's step with a joined q, k, v projection
 * and a joined KV cache, in one kernel: qkv [B, S, Hq + 2 Hkv, D] (the
 * projection's result viewed per head, any strides, f32 or f16) and
 * kv_cache [B, 2 Hkv, T, D] (f32; the keys' heads, then the values'), with
 * positions p + s, p = offset + position's value:
 *     kv_cache[b, j, t0 + s]       = rope(qkv[b, s, Hq + j], p + s)   j < Hkv
 *     kv_cache[b, Hkv + j, t0 + s] = qkv[b, s, Hq + Hkv + j]
 *     q[b, h, s]                   = rope(qkv[b, s, h], p + s)        h < Hq
 * rope as wt_rope_v2's (rotate_half, frequencies f_i = theta^(-2i/D),
 * or the scaled ones below); q is a new f32 [B, Hq, S, D]; the rows
 * written start at t0 = p clamped to [0, T - S], as wt_copy_into_at
 * clamps. kv_cache is updated in place (the state a decoder keeps between
 * steps). Not differentiable (a tensor requiring grad while recording:
 * WT_ERR_INVALID_ARGUMENT).
 * Scaled frequencies (a checkpoint's rope_scaling), computed in double:
 *  - WT_ROPE_SCALING_LINEAR: f_i / factor;
 *  - WT_ROPE_SCALING_LLAMA3 (Llama 3.1's "llama3"): with wavelength
 *    w = 2 pi / f_i and L = original_max_position, f_i / factor where
 *    w > L / low_freq_factor, f_i where w < L / high_freq_factor, and in
 *    between (1 - a) f_i / factor + a f_i, a = (L / w - low_freq_factor) /
 *    (high_freq_factor - low_freq_factor).
 * WT_ERR_INVALID_ARGUMENT for factor <= 0 (LINEAR, LLAMA3), for LLAMA3
 * unless 0 < low_freq_factor < high_freq_factor and original_max_position
 * >= 1, and for an unknown scaling. A caller built against the header
 * before the scaling fields (struct_size up to position) gets none. */
typedef enum wt_rope_scaling {
    WT_ROPE_SCALING_NONE = 0,
    WT_ROPE_SCALING_LINEAR = 1,
    WT_ROPE_SCALING_LLAMA3 = 2
} wt_rope_scaling;
typedef struct wt_rope_kv_cache_options {
    uint32_t struct_size;
    double theta;   /* 10000 */
    int64_t offset; /* added to the first position; 0 */
    /* NULL, or an i32 tensor of one element on the device whose value
     * (negative: 0) is added to offset when the kernel runs: the
     * position of a captured step (see wt_rope_options.position). */
    const wt_tensor *position;
    wt_rope_scaling scaling;                  /* WT_ROPE_SCALING_NONE */
    double factor;                            /* LINEAR, LLAMA3; 1 */
    double low_freq_factor, high_freq_factor; /* LLAMA3; 1, 4 */
    int64_t original_max_position;            /* LLAMA3; 8192 */
} wt_rope_kv_cache_options;
WT_API void wt_rope_kv_cache_options_init(wt_rope_kv_cache_options *opts);
WT_API wt_status wt_rope_kv_cache(wt_tensor *kv_cache, const wt_tensor *qkv, int64_t q_heads,
                                  const wt_rope_kv_cache_options *opts, wt_tensor **q);
/* wt_rope_kv_cache followed by attention of its q over the whole cache:
 *     wt_rope_kv_cache(kv_cache, qkv, q_heads, rope, &q);
 *     wt_scaled_dot_product_attention_v2(q, kv_cache[:, :Hkv],
 *                                        kv_cache[:, Hkv:], NULL, attn, out);
 * with the same arguments, rules and errors (attn NULL: the defaults;
 * slice the cache's T axis to give fewer keys, or set attn->kv_length for
 * a count read on the device). out is a new f32 [B, Hq, S, D]. A decode
 * step (S = 1) runs as one kernel on WebGPU, the rotated q never stored
 * and the step's key and value taken from qkv (f32 attention, D a
 * multiple of 4 with D / 4 a power of two, cache rows at 16-byte
 * boundaries, at most 2048 keys; otherwise the two kernels above);
 * WT_ROPE_KV_ATTENTION=0 asks for the two calls above. The CPU gives the
 * two calls' results, bit for bit. */
WT_API wt_status wt_rope_kv_attention(wt_tensor *kv_cache, const wt_tensor *qkv, int64_t q_heads,
                                      const wt_rope_kv_cache_options *rope, const wt_attention_options *attn,
                                      wt_tensor **out);

/* --- sampling the next token ---
 * One token id per row of logits [B, V] (f32; f16 through f32), written
 * to out, i32 [B], on the device (so a decode step that samples can be
 * captured and replayed, the token never read back). Per row, in this
 * order (the order of Hugging Face's logits processors):
 *  - temperature 0 (or top_k 1): greedy, the first index of the largest
 *    logit (wt_argmax's choice); no random number is drawn;
 *  - weights w_i = exp((l_i - max l) / temperature);
 *  - top_k > 0: only logits >= the k-th largest are kept (ties with it
 *    are all kept, so a few more than k when values repeat);
 *  - top_p < 1: of those, the highest logits down to the largest
 *    threshold t whose kept weights (logit >= t) reach top_p of the kept
 *    total (nucleus; ties at t all kept; at least the largest is kept);
 *  - one uniform u in [0, 1) is drawn and the first kept index i (in index
 *    order) whose running sum of kept weights exceeds u * their total is
 *    the token.
 * The random word: Philox4x32-10 (as wt_tensor_rand) with key = seed and
 * counter = (step, row, 1, 0), step the value of opts->counter read on the
 * device (as unsigned 32-bit; NULL: 0), word 0, u = (word >> 8) * 2^-24.
 * Write a new step into counter before each replay (e.g. the position)
 * for a new draw. What is the same everywhere: u, bit for bit, on every
 * backend; the greedy choice; the kept sets of top_k (integer
 * comparisons of the logits' bits). The sums are made in one fixed order
 * on every backend (256 chunks, element i in chunk i mod 256, each summed
 * in index order, then a pairwise tree over the chunks; the draw walks
 * chunk after chunk), so the sampled id is the same on every backend
 * whose exp() gives the same bits; where exp() differs by an ulp (a GPU's
 * against the C library's) the id can differ only when u * total falls
 * within that rounding of a boundary of the running sum.
 * A row with a NaN, a +inf or no finite logit gets id -1 (an index that
 * wt_embedding then refuses). Not differentiable. Errors:
 * WT_ERR_INVALID_ARGUMENT for temperature < 0 or NaN, top_k < 0, top_p
 * outside (0, 1], a counter that is not an i32 tensor of one element, a
 * logits dtype other than f32/f16; WT_ERR_SHAPE unless logits is 2-D
 * with V >= 1. */
typedef struct wt_sample_options {
    uint32_t struct_size;      /* set by wt_sample_options_init */
    double temperature;        /* 1; 0: greedy */
    int64_t top_k;             /* 0: no top-k cut */
    double top_p;              /* 1: no nucleus cut */
    uint64_t seed;             /* 0 */
    const wt_tensor *counter;  /* NULL, or i32 [1] read on the device: the step */
} wt_sample_options;
WT_API void wt_sample_options_init(wt_sample_options *opts);
/* opts NULL: the defaults (temperature 1, no cuts, seed 0, step 0). */
WT_API wt_status wt_sample(const wt_tensor *logits, const wt_sample_options *opts, wt_tensor **out);

/* --- convolution and pooling ---
 * Layout NCHW: x is [N, C, H, W] (conv1d: [N, C, L]); an unbatched
 * input ([C, H, W], conv1d [C, L]) gives an unbatched result. Inputs may
 * be any strided view; f16 inputs compute in f32 (result f16 when every
 * given tensor is f16). Errors: WT_ERR_INVALID_ARGUMENT for NULLs, bad
 * options (zero or negative stride, kernel or dilation, negative padding,
 * groups that do not divide the channels; a pooling stride of 0 means the
 * kernel size), WT_ERR_SHAPE for shapes that do not fit (weight or bias
 * against x, a kernel larger than the padded input), WT_ERR_UNSUPPORTED
 * for dtypes other than f32/f16. The convolutions run as matrix products
 * over the input's windows (im2col). On WebGPU the convolutions (and
 * conv_transpose2d, whose windows are those of the adjoint) gather the
 * windows inside the product's loads: no column matrix in memory, and f16
 * operands stay f16 with f32 sums (an f16 result plane of odd size goes
 * through f32); depthwise conv2d (one input channel per group) runs
 * directly. Elsewhere the column matrix is cut in chunks whose
 * temporaries take up to WT_CONV_CHUNK_BYTES (64 MiB) beside the result. */

typedef struct wt_conv_options {
    uint32_t struct_size;       /* set by wt_conv_options_init */
    int64_t stride[2];          /* (h, w); 1 */
    int64_t padding[4];         /* top, bottom, left, right; 0. conv1d: left, right */
    int64_t dilation[2];        /* (h, w); 1 */
    int64_t groups;             /* 1; C and the output channels are multiples */
    /* "same" (conv2d, conv1d): padding is ignored; the output has
     * ceil(in / stride) positions and the padding is
     * total = max((out - 1)*stride + dilation*(k - 1) + 1 - in, 0),
     * total / 2 before and the rest after (ONNX's SAME_UPPER; with stride
     * 1 PyTorch's padding="same", which allows no other stride). */
    bool same;
    int64_t output_padding[2];  /* conv_transpose2d: rows/columns added after; < stride or < dilation */
} wt_conv_options;
WT_API void wt_conv_options_init(wt_conv_options *opts);

/* out[n, o, y, x] = bias[o] + sum over c in o's group, ky, kx of
 *   x[n, c, y*sh - pad_top + ky*dh, x*sw - pad_left + kx*dw] * w[o, c', ky, kx]
 * (cross-correlation, as PyTorch), zero outside x. w: [O, C/groups, KH,
 * KW]; bias: [O] or NULL; opts NULL for the defaults. Output size
 * (H + top + bottom - dh*(KH-1) - 1) / sh + 1 (floor). groups == C == O
 * is a depthwise convolution. */
WT_API wt_status wt_conv2d(const wt_tensor *x, const wt_tensor *w, const wt_tensor *bias,
                           const wt_conv_options *opts, wt_tensor **out);
/* conv2d along one axis: x [N, C, L], w [O, C/groups, K]; reads stride[0],
 * dilation[0], padding[0] (left) and padding[1] (right). */
WT_API wt_status wt_conv1d(const wt_tensor *x, const wt_tensor *w, const wt_tensor *bias,
                           const wt_conv_options *opts, wt_tensor **out);
/* The transpose (adjoint) of conv2d, as PyTorch's conv_transpose2d:
 * x [N, C, H, W], w [C, O/groups, KH, KW], bias [O] or NULL; output
 *   (H - 1)*sh - top - bottom + dh*(KH - 1) + output_padding[0] + 1
 * rows (columns alike). Padding may be asymmetric; `same` is refused. */
WT_API wt_status wt_conv_transpose2d(const wt_tensor *x, const wt_tensor *w, const wt_tensor *bias,
                                     const wt_conv_options *opts, wt_tensor **out);

typedef struct wt_pool2d_options {
    uint32_t struct_size;     /* set by wt_pool2d_options_init */
    int64_t kernel[2];        /* (h, w); must be set (> 0) */
    int64_t stride[2];        /* 0 (the default): the kernel size */
    int64_t padding[4];       /* top, bottom, left, right (as wt_conv_options); 0; each
                                 at most half the (dilated) kernel */
    int64_t dilation[2];      /* max pooling only; 1 */
    bool ceil_mode;           /* round the output size up; a window must start inside
                                 the input or its leading padding (PyTorch) */
    bool count_include_pad;   /* average pooling: padding counts in the divisor; true */
    int64_t divisor_override; /* average pooling: > 0 divides every window; 0 */
} wt_pool2d_options;
WT_API void wt_pool2d_options_init(wt_pool2d_options *opts);

/* Max over each window (padding never wins; ties give the first position;
 * a NaN wins, the window's last NaN giving the index, as PyTorch).
 * indices: NULL, or receives a WT_I32 tensor of out's shape holding the
 * position y*W + x of each maximum in its input plane (PyTorch's
 * return_indices). x [N, C, H, W] or [C, H, W]. */
WT_API wt_status wt_max_pool2d_v2(const wt_tensor *x, const wt_pool2d_options *opts, wt_tensor **out,
                                  wt_tensor **indices);
/* Mean over each window, as PyTorch's avg_pool2d: divisor_override, else
 * the window clipped to the padded input (count_include_pad) or to the
 * input (windows past the padded edge in ceil_mode count only what lies
 * inside). dilation must be 1. */
WT_API wt_status wt_avg_pool2d_v2(const wt_tensor *x, const wt_pool2d_options *opts, wt_tensor **out);
/* Output [.., out_h, out_w]; window oy covers rows floor(oy*H/out_h) to
 * ceil((oy+1)*H/out_h) (exclusive), columns alike. out_h, out_w > 0. */
WT_API wt_status wt_adaptive_avg_pool2d(const wt_tensor *x, int64_t out_h, int64_t out_w,
                                        wt_tensor **out);
WT_API wt_status wt_adaptive_max_pool2d(const wt_tensor *x, int64_t out_h, int64_t out_w,
                                        wt_tensor **out, wt_tensor **indices);
/* Mean / max over the two last axes, keeping them as size 1 ([N, C, 1, 1]). */
WT_API wt_status wt_global_avg_pool2d(const wt_tensor *x, wt_tensor **out);
WT_API wt_status wt_global_max_pool2d(const wt_tensor *x, wt_tensor **out);

/* Resampling of the planes of x [N, C, H, W] to [N, C, out_h, out_w], as
 * PyTorch's F.interpolate (and ONNX Resize with the matching modes). The
 * output size is size, or floor(H * scale_factor[0]) x floor(W *
 * scale_factor[1]) when scale factors are given (exactly one of the two;
 * every extent > 0). Output row oy reads the input through a source
 * coordinate with scale s = H / out_h, or 1 / scale_factor[0] when scale
 * factors are given (PyTorch's recompute_scale_factor=False, its default;
 * pass size for recompute_scale_factor=True), computed in f32 as PyTorch
 * does (columns alike):
 *   nearest:  row min(floor(oy * s), H - 1) (PyTorch's mode='nearest'; its
 *             CPU kernel alone maps out_h == H or 2H by oy and oy / 2 even
 *             where 1 / scale_factor differs from H / out_h: not followed)
 *   bilinear: r = oy * (H - 1) / (out_h - 1) (0 when out_h == 1) with
 *             align_corners, else max((oy + 0.5) * s - 0.5, 0); the rows
 *             floor(r) and floor(r) + 1 (clamped to H - 1) weighted by
 *             1 - frac(r) and frac(r).
 * Bilinear with a non-finite neighbour gives NaN or inf where its weight
 * is 0, as PyTorch. f16 x computes in f32 and gives f16. */
typedef enum wt_interp_mode { WT_INTERP_NEAREST = 0, WT_INTERP_BILINEAR = 1 } wt_interp_mode;

typedef struct wt_interpolate_options {
    uint32_t struct_size;    /* set by wt_interpolate_options_init */
    wt_interp_mode mode;     /* WT_INTERP_NEAREST */
    bool align_corners;      /* bilinear only (true with nearest is refused); false */
    int64_t size[2];         /* (out_h, out_w); 0: scale_factor gives the size */
    double scale_factor[2];  /* (h, w), finite and > 0; 0: size is used */
} wt_interpolate_options;
WT_API void wt_interpolate_options_init(wt_interpolate_options *opts);

/* opts: mode, align_corners and either size or scale_factor (NULL is
 * refused: no size). WT_ERR_SHAPE for x not 4-D, an empty input plane or
 * an output extent of 0 (or past 2^31). */
WT_API wt_status wt_interpolate(const wt_tensor *x, const wt_interpolate_options *opts, wt_tensor **out);
/* nn.Upsample(scale_factor=scale_factor, mode=mode): wt_interpolate with
 * the same factor on both axes and align_corners false. */
WT_API wt_status wt_upsample2d(const wt_tensor *x, double scale_factor, wt_interp_mode mode,
                               wt_tensor **out);

/* --- dropout --- */

/* Inverted dropout: element i is 0 where wt_tensor_rand(seed)'s element i
 * (f32) is below p, else x * (1 / (1 - p)) (p and the scale rounded to
 * f32 first). p = 0: a copy of x; p = 1: zeros. A dropped element is 0
 * even when x is NaN or inf. p outside [0, 1] or NaN:
 * WT_ERR_INVALID_ARGUMENT. f32 and f16. opts NULL: the defaults (p 0.5,
 * seed 0: the same mask on every call; pass a new seed per step). */
typedef struct wt_dropout_options {
    uint32_t struct_size; /* set by wt_dropout_options_init */
    double p;             /* 0.5 */
    uint64_t seed;        /* 0 */
} wt_dropout_options;
WT_API void wt_dropout_options_init(wt_dropout_options *opts);
WT_API wt_status wt_dropout_v2(const wt_tensor *x, const wt_dropout_options *opts, wt_tensor **out);

/* ======== 13. Training =================================================== */
/* Backward ops, a fused loss and in-place optimizer steps. Gradients are
 * f32 (f16 inputs are computed through f32, like the forward ops).
 *
 * In place (rule 4): wt_sgd_step and wt_adamw_step write into param and
 * the optimizer state they are given and allocate nothing. Those
 * tensors must be f32 and contiguous (views with an offset are fine), of
 * one context and one shape, and must not share storage with each other
 * or with grad (WT_ERR_INVALID_ARGUMENT): an update reads each element
 * once and writes it once, so aliasing would make it depend on order. */

/* The activations with a backward op (wt_<name>_backward below). */
typedef enum wt_activation {
    WT_ACT_RELU = 0,      /* dx = dy * (x > 0)  (0 at x == 0 and for NaN, like PyTorch) */
    WT_ACT_SIGMOID = 1,   /* dx = dy * s * (1 - s), s = sigmoid(x) */
    WT_ACT_TANH = 2,      /* dx = dy * (1 - tanh(x)^2) */
    WT_ACT_SILU = 3,      /* dx = dy * s * (1 + x * (1 - s)) */
    WT_ACT_GELU = 4,      /* exact form: dx = dy * (Phi(x) + x * phi(x)) */
    WT_ACT_GELU_TANH = 5  /* the tanh approximation's derivative */
} wt_activation;

/* dx = dy * f'(x) for the forward op f (wt_relu, wt_sigmoid, ...), from
 * its input x; dy and x of one shape. The derivatives are those of
 * wt_activation above. */
WT_API wt_status wt_relu_backward(const wt_tensor *dy, const wt_tensor *x, wt_tensor **dx);
WT_API wt_status wt_sigmoid_backward(const wt_tensor *dy, const wt_tensor *x, wt_tensor **dx);
WT_API wt_status wt_tanh_backward(const wt_tensor *dy, const wt_tensor *x, wt_tensor **dx);
WT_API wt_status wt_silu_backward(const wt_tensor *dy, const wt_tensor *x, wt_tensor **dx);
WT_API wt_status wt_gelu_backward(const wt_tensor *dy, const wt_tensor *x, wt_tensor **dx);
WT_API wt_status wt_gelu_tanh_backward(const wt_tensor *dy, const wt_tensor *x, wt_tensor **dx);

typedef enum wt_reduction { WT_REDUCTION_MEAN = 0, WT_REDUCTION_SUM = 1, WT_REDUCTION_NONE = 2 } wt_reduction;

typedef struct wt_cross_entropy_options {
    uint32_t struct_size;    /* set by _init */
    wt_reduction reduction;  /* default WT_REDUCTION_MEAN */
    int32_t ignore_index;    /* rows with this label count for nothing; default -100 */
} wt_cross_entropy_options;
WT_API void wt_cross_entropy_options_init(wt_cross_entropy_options *opts);

/* Softmax cross-entropy of logits [N, C] against i32 class labels [N]
 * (PyTorch's cross_entropy): per row logsumexp(x) - x[label]; mean over
 * the rows whose label is not ignore_index (NaN when there are none, like
 * PyTorch), their sum, or the [N] row losses (0 for ignored rows). A label
 * outside [0, C) that is not ignore_index makes its row's loss and
 * gradient NaN on every backend (no host round trip is spent checking
 * labels on the GPU). opts NULL: defaults. */
WT_API wt_status wt_cross_entropy(const wt_tensor *logits, const wt_tensor *labels,
                                  const wt_cross_entropy_options *opts, wt_tensor **loss);
/* d loss / d logits [N, C], scaled by dloss: NULL (1), or a tensor of the
 * loss's shape (0-d for mean and sum, [N] for none). */
WT_API wt_status wt_cross_entropy_backward_v2(const wt_tensor *dloss, const wt_tensor *logits,
                                              const wt_tensor *labels, const wt_cross_entropy_options *opts,
                                              wt_tensor **dlogits);

/* Gradient of an embedding lookup: dweight [num_embeddings, D] with
 * dweight[indices[i]] += dy[i, :] over every position i. dy is
 * [*indices.shape, D]; indices i32. An index outside [0, num_embeddings)
 * contributes nothing. On the GPU a table of more than 1,024 rows sums
 * with atomic adds, so their order (and the last bits of a sum over
 * repeated indices) may vary; a smaller one is the product of the
 * indices' one-hot matrix with dy (deterministic; many positions on few
 * rows make the atomic adds contend). */
WT_API wt_status wt_embedding_backward(const wt_tensor *dy, const wt_tensor *indices,
                                       int64_t num_embeddings, wt_tensor **dweight);

/* Backward of wt_layer_norm(x, normalized_ndim, weight, bias, eps): dx
 * (x's shape), dweight and dbias (the normalised shape); any may be NULL
 * to skip it; dweight needs weight (the bias is not read). */
WT_API wt_status wt_layer_norm_backward(const wt_tensor *dy, const wt_tensor *x, int normalized_ndim,
                                        const wt_tensor *weight, double eps, wt_tensor **dx,
                                        wt_tensor **dweight, wt_tensor **dbias);
/* Backward of wt_batch_norm(x, running_mean, running_var, weight, bias,
 * opts) over every axis but 1. opts->training: the statistics are the
 * batch's (biased variance), as in the forward pass in training mode (the
 * running statistics are not read and may be NULL); else running_mean and
 * running_var [C] were used. opts->eps as in the forward; momentum is not
 * read; opts NULL: the defaults (inference, eps 1e-5). weight [C] or NULL.
 * Any output may be NULL to skip it. */
WT_API wt_status wt_batch_norm_backward_v2(const wt_tensor *dy, const wt_tensor *x,
                                           const wt_tensor *running_mean, const wt_tensor *running_var,
                                           const wt_tensor *weight, const wt_batch_norm_options *opts,
                                           wt_tensor **dx, wt_tensor **dweight, wt_tensor **dbias);

typedef struct wt_sgd_options {
    uint32_t struct_size;
    double lr;           /* default 0.01 */
    double momentum;     /* default 0: no momentum buffer needed */
    double dampening;    /* default 0 */
    double weight_decay; /* L2, added to the gradient; default 0 */
    bool nesterov;       /* default false */
} wt_sgd_options;
WT_API void wt_sgd_options_init(wt_sgd_options *opts);
/* PyTorch's SGD step, in place: g = grad + wd * param; with momentum,
 * buf = momentum * buf + (1 - dampening) * g and g = buf (nesterov:
 * g + momentum * buf); param -= lr * g. momentum_buf (may be NULL when
 * momentum is 0) starts as zeros, so with dampening > 0 the first step
 * differs from PyTorch's, which starts it at the first gradient. */
WT_API wt_status wt_sgd_step(wt_tensor *param, const wt_tensor *grad, wt_tensor *momentum_buf,
                             const wt_sgd_options *opts);

typedef struct wt_adamw_options {
    uint32_t struct_size;
    double lr;           /* default 1e-3 */
    double beta1, beta2; /* default 0.9, 0.999 */
    double eps;          /* default 1e-8 */
    double weight_decay; /* decoupled; default 0.01 */
} wt_adamw_options;
WT_API void wt_adamw_options_init(wt_adamw_options *opts);
/* PyTorch's AdamW step number step (1, 2, ...), in place:
 * param *= 1 - lr * wd; m = b1 m + (1 - b1) g; v = b2 v + (1 - b2) g^2;
 * param -= lr * (m / (1 - b1^step)) / (sqrt(v / (1 - b2^step)) + eps).
 * m and v start as zeros. */
WT_API wt_status wt_adamw_step(wt_tensor *param, const wt_tensor *grad, wt_tensor *m, wt_tensor *v,
                               int64_t step, const wt_adamw_options *opts);

/* --- optimizers: the update step over a model's parameters ---
 * An optimizer holds a list of parameters (leaves that require grad, f32,
 * contiguous, of one context, each listed once) and its state for them:
 * SGD's momentum buffers or AdamW's moments, made as zeros when it is
 * created, and the number of steps taken. wt_optimizer_step updates every
 * parameter that has an accumulated gradient (wt_tensor_grad) in place,
 * with recording off, as wt_sgd_step / wt_adamw_step would; parameters
 * without one are skipped, as in PyTorch. A training loop:
 *
 *     wt_optimizer *opt;
 *     wt_optimizer_create_adamw(n, params, &adamw, &opt);
 *     for each step:                       (one wt_scope per step)
 *         forward; wt_backward(loss);
 *         wt_optimizer_clip_grad_norm(opt, 1.0, NULL);   (optional)
 *         wt_optimizer_step(opt);
 *         wt_optimizer_zero_grad(opt);
 *     wt_optimizer_release(opt);
 *
 * Gradient accumulation over k micro-batches: run forward and backward on
 * each micro-batch with its loss multiplied by 1/k (wt_mul_scalar) before
 * wt_backward, then one step and one zero_grad. Gradients add up across
 * the backward calls, so with mean losses over equal micro-batches the
 * step is the step of the whole batch.
 *
 * The optimizer keeps a reference to each parameter and owns its state
 * (none of it joins an open scope). SGD's momentum buffer starts at the
 * first gradient, as PyTorch's does. A step that fails on the device may
 * leave the parameters partly updated (the error is the context's). */
typedef struct wt_optimizer wt_optimizer;
/* An SGD optimizer over params[0..nparams-1]; opts NULL: the defaults. */
WT_API wt_status wt_optimizer_create_sgd(int nparams, wt_tensor *const *params, const wt_sgd_options *opts,
                                         wt_optimizer **out);
/* An AdamW optimizer over params[0..nparams-1]; opts NULL: the defaults. */
WT_API wt_status wt_optimizer_create_adamw(int nparams, wt_tensor *const *params, const wt_adamw_options *opts,
                                           wt_optimizer **out);
/* Adds parameters with their own weight decay (a parameter group: GPT-2
 * decays matrices but not biases and norm weights). Before the first step
 * only (WT_ERR_INVALID_ARGUMENT after it). */
WT_API wt_status wt_optimizer_add_params(wt_optimizer *opt, int nparams, wt_tensor *const *params,
                                         double weight_decay);
/* One update of every parameter with a gradient; the step count grows by
 * one (AdamW's bias correction reads it). The learning rate is the
 * schedule's at the step's index (0 for the first) when one is set, else
 * the last wt_optimizer_set_lr (at first the options').
 *
 * Capturable (PyTorch's capturable=True): the step count, the learning
 * rate and the bias corrections are scalars on the device, advanced by a
 * one-thread dispatch at the start of every step (the schedule computed
 * there from the count, in f32: wt_lr_schedule_at's value to float
 * rounding; a bias correction 1 - beta^t by a recurrence with no
 * cancellation, within a few f32 ulps of the double formula), and the
 * update kernels read them. So a step recorded between wt_graph_begin and
 * wt_graph_end (with the forward pass, wt_backward and
 * wt_optimizer_clip_grad_norm, which computes its scale on the device as
 * well) takes the next step's values on every wt_graph_replay. An eager
 * step does the same work, so N replays give N eager steps' bits.
 * wt_optimizer_set_lr and wt_optimizer_set_schedule write the device
 * scalars directly (not recorded): later replays follow them. */
WT_API wt_status wt_optimizer_step(wt_optimizer *opt);
/* Drops the gradient of every parameter (wt_tensor_zero_grad). */
WT_API wt_status wt_optimizer_zero_grad(wt_optimizer *opt);
/* The learning rate of the steps to come (no schedule); finite, >= 0. */
WT_API wt_status wt_optimizer_set_lr(wt_optimizer *opt, double lr);
/* The learning rate of step wt_optimizer_steps(opt) (the next one unless
 * graphs replayed steps): the schedule's or the set one, in double; NaN
 * for NULL. */
WT_API double wt_optimizer_lr(const wt_optimizer *opt);
/* The host's count: the wt_optimizer_step calls that succeeded (a step
 * run while a graph was captured counts once; its replays do not: the
 * host does not see them); 0 for NULL. wt_optimizer_read_steps gives the
 * device's count, replays included. */
WT_API int64_t wt_optimizer_steps(const wt_optimizer *opt);
/* *steps = the steps taken on the device: eager steps and replays of
 * captured ones, counted in 32 bits (waits for the device; -1 on
 * failure). Equals
 * wt_optimizer_steps without replays. The learning rate of the next step
 * is then wt_lr_schedule_at(schedule, *steps) (or the set rate). */
WT_API wt_status wt_optimizer_read_steps(const wt_optimizer *opt, int64_t *steps);
/* Scales the gradients of the optimizer's parameters as
 * wt_clip_grad_norm does. */
WT_API wt_status wt_optimizer_clip_grad_norm(wt_optimizer *opt, double max_norm, wt_tensor **total_norm);
/* Drops the caller's reference to the optimizer, its state and its
 * references to the parameters; NULL is ignored. */
WT_API void wt_optimizer_release(wt_optimizer *opt);

/* Gradient clipping by global norm (torch.nn.utils.clip_grad_norm_):
 * with norm the 2-norm of all the parameters' gradients taken together,
 * every gradient is multiplied by min(1, max_norm / (norm + 1e-6)) (each
 * leaf's gradient is replaced by the scaled one: a handle taken earlier
 * with wt_tensor_grad keeps the values before clipping; a gradient nobody
 * else holds is scaled in its own buffer). Computed on the device, in a
 * small kernel a gradient and one for every three: nothing is read back,
 * so the step does not wait for the GPU. total_norm (NULL: not wanted) gets norm as a 0-d f32
 * tensor, to read when wanted. Parameters without a gradient are skipped
 * (norm 0 when none has one). max_norm finite and > 0; nparams >= 1. */
WT_API wt_status wt_clip_grad_norm(int nparams, wt_tensor *const *params, double max_norm,
                                   wt_tensor **total_norm);

/* --- learning-rate schedules ---
 * The learning rate at step i (counted from 0), for the optimizer to
 * follow (wt_optimizer_set_schedule) or for the caller to compute:
 *  - warm-up (any kind): lr * (i + 1) / warmup_steps for i < warmup_steps;
 *  - WT_LR_CONSTANT: lr after it;
 *  - WT_LR_STEP: lr * gamma^floor((i - warmup_steps) / step_size) (StepLR);
 *  - WT_LR_COSINE: min_lr + (lr - min_lr) (1 + cos(pi p)) / 2 with
 *    p = (i - warmup_steps) / (total_steps - warmup_steps), held at 1 past
 *    the end (1 when total_steps <= warmup_steps). */
typedef enum wt_lr_schedule_kind { WT_LR_CONSTANT = 0, WT_LR_STEP = 1, WT_LR_COSINE = 2 } wt_lr_schedule_kind;
typedef struct wt_lr_schedule_options {
    uint32_t struct_size;     /* set by _init */
    wt_lr_schedule_kind kind; /* default WT_LR_CONSTANT */
    double lr;                /* the peak learning rate; default 1e-3 */
    int64_t warmup_steps;     /* default 0 */
    int64_t step_size;        /* WT_LR_STEP: steps between decays; default 1 */
    double gamma;             /* WT_LR_STEP: the decay factor; default 0.1 */
    int64_t total_steps;      /* WT_LR_COSINE: the step at which min_lr is reached; default 1 */
    double min_lr;            /* WT_LR_COSINE: default 0 */
} wt_lr_schedule_options;
WT_API void wt_lr_schedule_options_init(wt_lr_schedule_options *opts);
/* *lr = the schedule's learning rate at step (>= 0). */
WT_API wt_status wt_lr_schedule_at(const wt_lr_schedule_options *schedule, int64_t step, double *lr);
/* The optimizer's steps follow schedule from now on (copied); NULL: back
 * to the set learning rate. Its step counts must be < 2^32 (the device's
 * schedule counts in 32 bits). */
WT_API wt_status wt_optimizer_set_schedule(wt_optimizer *opt, const wt_lr_schedule_options *schedule);

/* --- mixed precision: dynamic loss scaling ---
 * With f16 activations (parameters stay f32 master weights, cast to f16
 * in the forward pass) small gradients underflow; the loss is multiplied
 * by a scale before backward and the gradients divided by it before the
 * step, as torch.cuda.amp.GradScaler does:
 *
 *     wt_grad_scaler_scale(scaler, loss, &scaled);  wt_backward(scaled);
 *     wt_grad_scaler_step(scaler, opt);             (unscale, check, step)
 *     wt_optimizer_zero_grad(opt);
 *
 * Everything happens on the device, nothing is read back: the scale is a
 * 0-d f32 tensor; wt_grad_scaler_step divides every gradient by it, finds
 * whether any is not finite, runs the optimizer's step and, when one was
 * not, puts the parameters and the optimizer's state back as they were
 * (a skipped step); then the scale is multiplied by backoff_factor after
 * an overflow, by growth_factor after growth_interval steps in a row
 * without one. Unlike PyTorch, a skipped step still counts in the
 * optimizer's step number (AdamW's bias correction): the host does not
 * learn that it was skipped. Clip after unscaling: wt_grad_scaler_unscale,
 * then wt_optimizer_clip_grad_norm, then wt_grad_scaler_step (which then
 * does not unscale again). */
typedef struct wt_grad_scaler wt_grad_scaler;
typedef struct wt_grad_scaler_options {
    uint32_t struct_size;    /* set by _init */
    double init_scale;       /* default 65536 */
    double growth_factor;    /* default 2 */
    double backoff_factor;   /* default 0.5 */
    int64_t growth_interval; /* default 2000 */
} wt_grad_scaler_options;
WT_API void wt_grad_scaler_options_init(wt_grad_scaler_options *opts);
/* A scaler for the tensors of ctx; opts NULL: the defaults. */
WT_API wt_status wt_grad_scaler_create(wt_context *ctx, const wt_grad_scaler_options *opts, wt_grad_scaler **out);
/* *out = loss * scale (recorded: backward through it gives scaled gradients). */
WT_API wt_status wt_grad_scaler_scale(wt_grad_scaler *scaler, const wt_tensor *loss, wt_tensor **out);
/* Divides the gradients of opt's parameters by the scale, once per step. */
WT_API wt_status wt_grad_scaler_unscale(wt_grad_scaler *scaler, wt_optimizer *opt);
/* Unscales (unless done), steps opt unless a gradient is not finite, and
 * updates the scale; see above. */
WT_API wt_status wt_grad_scaler_step(wt_grad_scaler *scaler, wt_optimizer *opt);
/* The current scale (a new 0-d f32 tensor holding a copy). */
WT_API wt_status wt_grad_scaler_current_scale(const wt_grad_scaler *scaler, wt_tensor **scale);
/* 1 when the last wt_grad_scaler_step found a gradient that is not finite
 * (and skipped the step), else 0 (a new 0-d f32 tensor holding a copy). */
WT_API wt_status wt_grad_scaler_found_inf(const wt_grad_scaler *scaler, wt_tensor **found);
WT_API void wt_grad_scaler_release(wt_grad_scaler *scaler);
/* --- convolution, pooling and resampling backward ---
 * x, w, dy are 4-D (N, C, H, W); gradients are f32. */

/* Backward of wt_conv2d(x, w, bias, opts) given dy (its output's
 * gradient): dx like x, dw like w, dbias [O]; any may be NULL to skip it.
 * Composed from wt_conv_transpose2d and wt_conv2d, so it runs wherever
 * they do. */
WT_API wt_status wt_conv2d_backward_v2(const wt_tensor *dy, const wt_tensor *x, const wt_tensor *w,
                                       const wt_conv_options *opts, wt_tensor **dx, wt_tensor **dw,
                                       wt_tensor **dbias);
/* Backward of wt_max_pool2d_v2 from the indices it returned: dx (x's shape)
 * receives each dy at the position its index names, summed where windows
 * overlap (in index order on the CPU; by atomic adds on the GPU). */
WT_API wt_status wt_max_pool2d_backward(const wt_tensor *dy, const wt_tensor *indices, const wt_tensor *x,
                                        wt_tensor **dx);
/* Backward of wt_avg_pool2d_v2(x, opts): each dy spread evenly over its
 * window, divided by the divisor the forward pass used. */
WT_API wt_status wt_avg_pool2d_backward_v2(const wt_tensor *dy, const wt_tensor *x, const wt_pool2d_options *opts,
                                           wt_tensor **dx);

/* Backward of wt_interpolate(x, opts): dx (x's shape, f32) is the adjoint
 * of the resampling applied to dy (the forward's output shape): each input
 * pixel sums the dy of the outputs that read it, times their weights
 * (nearest: 1). Only x's shape is read. Deterministic on every backend
 * (each input pixel gathers its outputs; no atomics). */
WT_API wt_status wt_interpolate_backward(const wt_tensor *dy, const wt_tensor *x,
                                         const wt_interpolate_options *opts, wt_tensor **dx);

/* --- autograd ---
 * Reverse-mode automatic differentiation, as PyTorch's: mark the leaves
 * (parameters) with wt_tensor_set_requires_grad, run the forward pass
 * with the ordinary ops, call wt_backward on the loss, read each leaf's
 * gradient with wt_tensor_grad:
 *
 *     wt_tensor_set_requires_grad(w, true);
 *     wt_linear(x, w, NULL, &y);  wt_cross_entropy(y, labels, NULL, &loss);
 *     wt_backward(loss);           (w's gradient accumulates)
 *     wt_tensor_grad(w, &gw);      wt_sgd_step(w, gw, NULL, &opts);
 *     wt_tensor_release(gw);       wt_tensor_zero_grad(w);
 *
 * Recording: a call of a public op is recorded when one of its inputs
 * requires grad (a leaf marked so, or the result of a recorded call) and
 * recording is on; nothing is recorded otherwise, so inference costs
 * nothing. A result of a recorded call requires grad itself. The record
 * belongs to the result tensors: releasing them frees it, whether or not
 * backward ran. Gradients are f32 and of the input's shape, whatever its
 * dtype (f16 inputs get f32 gradients).
 *
 * Rules and limits:
 *  - Gradients accumulate into .grad over backward calls until
 *    wt_tensor_zero_grad. Only leaves keep a .grad.
 *  - A backward pass frees the tensors the graph saved (unless
 *    retain_graph): a second backward through the same graph is then
 *    WT_ERR_INVALID_ARGUMENT.
 *  - In-place changes: every op that writes a tensor's storage in place
 *    (wt_copy_into, wt_sgd_step, wt_adamw_step, custom kernels ...) bumps
 *    its version; backward refuses (WT_ERR_INVALID_ARGUMENT) a tensor that
 *    was saved for the gradient and changed since. wt_copy_into from a
 *    tensor that requires grad is refused while recording (it is not
 *    differentiable); do in-place updates inside wt_no_grad_begin/end.
 *  - Ops that are not differentiable (argmax, argmin, comparisons,
 *    logical ops, sort and topk indices, one_hot, random numbers) give
 *    results that do not require grad; a backward from such a result is
 *    WT_ERR_INVALID_ARGUMENT naming the op. Piecewise-constant ops (floor,
 *    ceil, round, sign, floor_divide) have zero gradients, as in PyTorch.
 *    An op that has no derivative rule yet refuses, while recording, an
 *    input that requires grad with WT_ERR_UNSUPPORTED naming it (never a
 *    silent zero gradient).
 *  - Higher-order gradients are not supported: the backward pass itself
 *    is not recorded (its results do not require grad).
 *  - wt_scaled_dot_product_attention without a mask differentiates through
 *    a fused kernel (CPU and WebGPU) that stores no [Sq, Skv] matrix, as
 *    flash-attention's backward, where the backend finds it the faster;
 *    with a mask, through matrix products (WT_ATTN_BACKWARD=composed or
 *    =fused forces either way).
 *  - Thread safety: the graph belongs to its tensors' context (one thread
 *    at a time). */

/* Marks a leaf tensor (f32 or f16) as requiring grad, or not. A result of
 * a recorded op is refused (WT_ERR_INVALID_ARGUMENT: wt_detach it). */
WT_API wt_status wt_tensor_set_requires_grad(wt_tensor *t, bool requires_grad);
/* Whether t requires grad (a marked leaf or a recorded result); false for
 * NULL. */
WT_API bool wt_tensor_requires_grad(const wt_tensor *t);
/* The leaf's accumulated gradient (a new reference, f32, t's shape);
 * *grad = NULL when it has none. */
WT_API wt_status wt_tensor_grad(const wt_tensor *t, wt_tensor **grad);
/* Drops t's accumulated gradient (PyTorch's zero_grad(set_to_none=True));
 * the next backward starts it anew. */
WT_API wt_status wt_tensor_zero_grad(wt_tensor *t);

/* A leaf's gradient-ready hook: called during wt_backward / wt_backward_ex
 * once the leaf's gradient from that pass is final - every recorded op of
 * the pass that uses the leaf has given it its part - while the pass goes
 * on with the rest of the graph (PyTorch's post-accumulate-grad hook).
 * grad is the tensor that becomes the leaf's .grad when the pass succeeds
 * (the earlier .grad plus this pass's part), borrowed for the call:
 * wt_tensor_retain it to keep it; read it (wt_tensor_read_async), but
 * write it only after the pass returned. The hook runs on the pass's
 * thread with recording off; it must not run a backward pass itself. It
 * is not called by wt_grad, for a leaf that gets no gradient, or after an
 * op of the pass failed (a failed pass leaves every .grad as it was and
 * the tensors given to hooks unused). What it is for: starting the
 * reduction of a gradient across processes before backward ends
 * (webtensor_dist.h). */
typedef void (*wt_grad_ready_fn)(wt_tensor *grad, void *user);
/* Sets t's gradient-ready hook (t a leaf, not the result of a recorded
 * op; fn NULL removes it); one per leaf: a new one replaces the old. user
 * is passed to fn as is. */
WT_API wt_status wt_tensor_set_grad_ready_hook(wt_tensor *t, wt_grad_ready_fn fn, void *user);

/* Backward from a one-element loss (seed 1): accumulates d loss / d leaf
 * into every leaf that requires grad and frees the graph's saved tensors. */
WT_API wt_status wt_backward(wt_tensor *loss);

typedef struct wt_backward_options {
    uint32_t struct_size; /* set by _init */
    bool retain_graph;    /* keep the saved tensors for another backward; false */
} wt_backward_options;
WT_API void wt_backward_options_init(wt_backward_options *opts);
/* Backward from n outputs at once, each with a seed gradient of its shape
 * (seeds NULL, or an entry NULL: 1, for one-element outputs). opts NULL:
 * defaults. */
WT_API wt_status wt_backward_ex(int n, wt_tensor *const *outputs, wt_tensor *const *seeds,
                                const wt_backward_options *opts);
/* The functional form: grads[j] = sum over outputs of seed . d output /
 * d inputs[j] (new references; NULL where inputs[j] does not reach the
 * outputs), without touching any .grad. inputs may be leaves or results
 * of recorded ops (each must require grad). */
WT_API wt_status wt_grad(int noutputs, wt_tensor *const *outputs, wt_tensor *const *seeds, int ninputs,
                         wt_tensor *const *inputs, const wt_backward_options *opts, wt_tensor **grads);

/* A new view of x's elements that does not require grad (no record):
 * gradients stop there. It shares x's storage (and version). */
WT_API wt_status wt_detach(const wt_tensor *x, wt_tensor **out);
/* Recording off on ctx between begin and end (PyTorch's torch.no_grad());
 * they nest, and end without a begin is WT_ERR_INVALID_ARGUMENT. */
WT_API wt_status wt_no_grad_begin(wt_context *ctx);
WT_API wt_status wt_no_grad_end(wt_context *ctx);
/* Whether recording is on for ctx (no wt_no_grad_begin open). */
WT_API bool wt_grad_enabled(const wt_context *ctx);

/* How autograd treats a catalogue op (an index as for wt_op_name). */
typedef enum wt_op_grad {
    WT_OP_GRAD_UNKNOWN = 0,           /* an index out of range (or an op without a row) */
    WT_OP_GRAD_RULE = 1,              /* differentiable: recorded, with a derivative rule */
    WT_OP_GRAD_NOT_DIFFERENTIABLE = 2, /* results are constants (argmax, comparisons ...) */
    WT_OP_GRAD_NO_INPUTS = 3,         /* makes tensors from nothing (creation, random) */
    WT_OP_GRAD_IN_PLACE = 4,          /* updates its arguments (copy_into, optimizer steps) */
    WT_OP_GRAD_NO_RULE_YET = 5        /* differentiable, no rule yet: a tracked input is
                                         refused with WT_ERR_UNSUPPORTED */
} wt_op_grad;
WT_API wt_op_grad wt_op_gradient(int op);

/* ======== 14. The op catalogue =========================================== */
/*
 * The op catalogue: every op, its family and how each backend computes it
 * per dtype (what `webtensor ops` prints). op is an index in
 * [0, wt_op_count()); indices may change between versions, names do not. */
WT_API int wt_op_count(void);
/* "add", "conv2d" ...; NULL for an index out of range. */
WT_API const char *wt_op_name(int op);
/* "elementwise", "reduce", "nn" ...; NULL for an index out of range. */
WT_API const char *wt_op_family(int op);
/* How ctx's backend computes op on inputs of dtype. WT_ERR_INVALID_ARGUMENT
 * for a NULL ctx or out, an unknown op or dtype. */
WT_API wt_status wt_op_support(const wt_context *ctx, int op, wt_dtype dtype, wt_support *out);

/* ======== 15. Custom kernels, several devices ============================ */

/* --- custom WGSL kernels ---
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

/* --- several devices ---
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

/* ======== 16. Deprecated names ============================================
 * The names and argument orders of earlier versions: still exported and
 * working (thin functions over their replacements, so bindings that look
 * symbols up by name keep working) for this release, then removed. Each
 * comment names the replacement. Defining WT_WARN_DEPRECATED before
 * including this header makes the compiler warn at each use. */
#if defined(WT_WARN_DEPRECATED) && defined(__GNUC__)
#define WT_DEPRECATED(use) __attribute__((deprecated("use " use)))
#else
#define WT_DEPRECATED(use)
#endif

/* wt_context_last_message and wt_context_last_status: the message, with
 * the code written through status (may be NULL). */
WT_API WT_DEPRECATED("wt_context_last_message") const char *wt_context_last_error(const wt_context *ctx,
                                                                                   wt_status *status);
/* wt_tensor_arange, wt_tensor_linspace, wt_tensor_eye: dtype after ctx. */
WT_API WT_DEPRECATED("wt_tensor_arange") wt_status wt_arange(wt_context *ctx, double start, double stop,
                                                              double step, wt_dtype dtype, wt_tensor **out);
WT_API WT_DEPRECATED("wt_tensor_linspace") wt_status wt_linspace(wt_context *ctx, double start, double stop,
                                                                  int64_t num, bool endpoint, wt_dtype dtype,
                                                                  wt_tensor **out);
WT_API WT_DEPRECATED("wt_tensor_eye") wt_status wt_eye(wt_context *ctx, int64_t n, int64_t m, int64_t k,
                                                        wt_dtype dtype, wt_tensor **out);
/* wt_tensor_rand, wt_tensor_randn: the same arguments. */
WT_API WT_DEPRECATED("wt_tensor_rand") wt_status wt_rand(wt_context *ctx, wt_dtype dtype, int ndim,
                                                          const int64_t *shape, uint64_t seed, wt_tensor **out);
WT_API WT_DEPRECATED("wt_tensor_randn") wt_status wt_randn(wt_context *ctx, wt_dtype dtype, int ndim,
                                                            const int64_t *shape, uint64_t seed, wt_tensor **out);
/* wt_dropout_v2 with wt_dropout_options {p, seed}. */
WT_API WT_DEPRECATED("wt_dropout_v2") wt_status wt_dropout(const wt_tensor *x, float p, uint64_t seed,
                                                            wt_tensor **out);
/* wt_topk_v2(x, k, -1, largest, values, indices). */
WT_API WT_DEPRECATED("wt_topk_v2") wt_status wt_topk(const wt_tensor *x, int64_t k, bool largest,
                                                      wt_tensor **values, wt_tensor **indices);
/* wt_layer_norm and wt_rms_norm with normalized_ndim 1. */
WT_API WT_DEPRECATED("wt_layer_norm") wt_status wt_layernorm(const wt_tensor *x, const wt_tensor *weight,
                                                              const wt_tensor *bias, float eps, wt_tensor **out);
WT_API WT_DEPRECATED("wt_rms_norm") wt_status wt_rmsnorm(const wt_tensor *x, const wt_tensor *weight, float eps,
                                                          wt_tensor **out);
/* wt_group_norm_v2 with wt_group_norm_options {eps}. */
WT_API WT_DEPRECATED("wt_group_norm_v2") wt_status wt_group_norm(const wt_tensor *x, int64_t num_groups,
                                                                  const wt_tensor *weight, const wt_tensor *bias,
                                                                  float eps, wt_tensor **out);
/* wt_scaled_dot_product_attention_v2 with wt_attention_options {causal,
 * scale}. */
WT_API WT_DEPRECATED("wt_scaled_dot_product_attention_v2") wt_status
wt_scaled_dot_product_attention(const wt_tensor *q, const wt_tensor *k, const wt_tensor *v,
                                const wt_tensor *mask, bool causal, float scale, wt_tensor **out);
/* wt_rope_v2 with wt_rope_options {theta, offset, layout}. */
WT_API WT_DEPRECATED("wt_rope_v2") wt_status wt_rope(const wt_tensor *x, double theta, int64_t offset,
                                                      wt_rope_layout layout, wt_tensor **out);
/* wt_graph_begin, wt_graph_end, wt_graph_release: the same arguments. */
WT_API WT_DEPRECATED("wt_graph_begin") wt_status wt_graph_capture_begin(wt_context *ctx);
WT_API WT_DEPRECATED("wt_graph_end") wt_status wt_graph_capture_end(wt_context *ctx, wt_graph **out);
WT_API WT_DEPRECATED("wt_graph_release") void wt_graph_destroy(wt_graph *graph);
/* wt_relu_backward, wt_sigmoid_backward, ... (the one of act). */
WT_API WT_DEPRECATED("wt_<activation>_backward") wt_status wt_activation_backward(wt_activation act,
                                                                                 const wt_tensor *dy,
                                                                                 const wt_tensor *x,
                                                                                 wt_tensor **dx);
/* wt_cross_entropy_backward_v2: dloss first. */
WT_API WT_DEPRECATED("wt_cross_entropy_backward_v2") wt_status
wt_cross_entropy_backward(const wt_tensor *logits, const wt_tensor *labels, const wt_tensor *dloss,
                          const wt_cross_entropy_options *opts, wt_tensor **dlogits);
/* wt_layer_norm_backward(dy, x, 1, weight, eps, ...). */
WT_API WT_DEPRECATED("wt_layer_norm_backward") wt_status
wt_layernorm_backward(const wt_tensor *x, const wt_tensor *weight, const wt_tensor *dy, float eps,
                      wt_tensor **dx, wt_tensor **dweight, wt_tensor **dbias);
/* wt_batch_norm_backward_v2: dy first, training and eps in the options. */
WT_API WT_DEPRECATED("wt_batch_norm_backward_v2") wt_status
wt_batch_norm_backward(const wt_tensor *x, const wt_tensor *weight, const wt_tensor *running_mean,
                       const wt_tensor *running_var, bool training, float eps, const wt_tensor *dy,
                       wt_tensor **dx, wt_tensor **dweight, wt_tensor **dbias);
/* wt_pool2d_options, wt_max_pool2d_v2, wt_avg_pool2d_v2,
 * wt_avg_pool2d_backward_v2: padding (h, w) on both sides becomes
 * (top, bottom, left, right), as wt_conv_options has it. */
typedef struct wt_pool_options {
    uint32_t struct_size;     /* set by wt_pool_options_init */
    int64_t kernel[2];        /* (h, w); must be set (> 0) */
    int64_t stride[2];        /* 0 (the default): the kernel size */
    int64_t padding[2];       /* (h, w), on both sides; at most half the (dilated) kernel */
    int64_t dilation[2];      /* max_pool2d only; 1 */
    bool ceil_mode;           /* round the output size up; a window must start inside
                                 the input or its leading padding (PyTorch) */
    bool count_include_pad;   /* avg_pool2d: padding counts in the divisor; true */
    int64_t divisor_override; /* avg_pool2d: > 0 divides every window; 0 */
} wt_pool_options;
WT_API WT_DEPRECATED("wt_pool2d_options_init") void wt_pool_options_init(wt_pool_options *opts);
WT_API WT_DEPRECATED("wt_max_pool2d_v2") wt_status wt_max_pool2d(const wt_tensor *x, const wt_pool_options *opts,
                                                                  wt_tensor **out, wt_tensor **indices);
WT_API WT_DEPRECATED("wt_avg_pool2d_v2") wt_status wt_avg_pool2d(const wt_tensor *x, const wt_pool_options *opts,
                                                                  wt_tensor **out);
WT_API WT_DEPRECATED("wt_avg_pool2d_backward_v2") wt_status
wt_avg_pool2d_backward(const wt_tensor *dy, const wt_tensor *x, const wt_pool_options *opts, wt_tensor **dx);
/* wt_conv2d_backward_v2: dy first. */
WT_API WT_DEPRECATED("wt_conv2d_backward_v2") wt_status
wt_conv2d_backward(const wt_tensor *x, const wt_tensor *w, const wt_tensor *dy, const wt_conv_options *opts,
                   wt_tensor **dx, wt_tensor **dw, wt_tensor **dbias);

#ifdef __cplusplus
}
#endif
#endif /* WEBTENSOR_H */
