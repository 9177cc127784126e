/* Section 3 of webtensor.h: contexts, the runtime: options, adapters, recovery, profiling. */
#ifndef WEBTENSOR_CONTEXT_H
#define WEBTENSOR_CONTEXT_H

#include "errors.h"
#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

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
 * waiting; a captured graph's replay submits in pieces of 128 dispatches,
 * or of the batch where that is larger: WT_GRAPH_REPLAY_PER_SUBMIT).
 * wt_context_flush submits what is recorded now, without waiting. An
 * event marks the point of the stream where it is recorded: it completes
 * when everything recorded before it has run.
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

#ifdef __cplusplus
}
#endif
#endif /* WEBTENSOR_CONTEXT_H */
