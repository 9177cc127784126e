/* Internal state of the WebGPU runtime, shared by its files (loader,
 * adapter, pool, pipeline cache, recorder, backend). Kernels do not include
 * this; they see src/webgpu/wg.h only. */
#ifndef WT_WG_RUNTIME_H
#define WT_WG_RUNTIME_H

#include "webgpu/wg.h"
#include "webgpu/wgpu_abi.h"
#include "core/profile.h"

/* ------------------------------------------------------------- loader */

typedef struct wg_library {
    void *handle;
    wgpu_procs p;
} wg_library;

/* dlopen + dlsym of every entry point; path order is in loader.c. */
wt_status wg_library_load(const char *requested_path, wg_library *out);
void wg_library_unload(wg_library *lib);
/* An extra symbol of the loaded library (Dawn's C++ and free functions
 * outside the standard table), or of the whole process; NULL where there
 * is none, as in the WebAssembly build. */
void *wg_library_symbol(const wg_library *lib, const char *name);
void *wg_process_symbol(const char *name);

/* Waits for one future (the instance has TimedWaitAny). */
wt_status wg_wait(const wg_library *lib, WGPUInstance instance, WGPUFuture future,
                  const char *what);

/* A WGPUStringView copied into a nul-terminated buffer. */
void wg_copy_string(char *dst, size_t cap, WGPUStringView s);

/* ------------------------------------------------------------ adapter */

/* The instance with the features this runtime needs; EGL_PLATFORM is set
 * to surfaceless first (Mesa's EGL needs it without a display).
 * allow_unsafe: Dawn's allow_unsafe_apis (experimental features). */
wt_status wg_instance_create(const wg_library *lib, WGPUInstance *out);
wt_status wg_instance_create_with(const wg_library *lib, bool allow_unsafe, WGPUInstance *out);
/* Where the OpenGL ES path's EGL comes from ("EGL from libEGL.so.1"). */
const char *wg_egl_note(void);
/* A software renderer (llvmpipe, lavapipe, SwiftShader): never AUTO's choice. */
bool wg_adapter_is_software(const wt_adapter_info *info);

typedef struct wg_adapter_query {
    wt_gpu_api gpu_api;
    wt_power_preference power;
    bool experimental; /* WT_EXPERIMENTAL_SUBGROUP_MATRIX asked for */
} wg_adapter_query;

typedef struct wg_adapter_entry {
    WGPUAdapter adapter;
    wt_adapter_info info;
} wg_adapter_entry;

/* Requests adapters over the GPU APIs gpu_api allows, drops Dawn's Null
 * adapter and duplicates, sorts best first (entry 0 is AUTO's choice).
 * The caller releases the adapters with wg_adapters_release. */
wt_status wg_adapters_enumerate(const wg_library *lib, WGPUInstance instance,
                                const wg_adapter_query *q, wg_adapter_entry **out, int *count);
void wg_adapters_release(const wg_library *lib, wg_adapter_entry *list, int count);

/* The device on w->adapter with the adapter's limits and the features the
 * kernels use; fills w->device, queue, limits and caps. */
wt_status wg_device_create(wt_context *ctx);

/* ---------------------------------------------------------------- pool */

/* The device object behind a wt_storage (s->device). */
typedef struct wg_buffer {
    WGPUBuffer buffer;
    uint64_t size;       /* bytes of the buffer (its size class); of the window for a window */
    uint64_t last_batch; /* recorder batch that last bound it */
    /* A window (windows.c): bytes [offset, offset + size) of parent's
     * buffer, bound as one binding. 0 and NULL for a whole buffer. */
    uint64_t offset;
    struct wg_buffer *parent;
    uint32_t generation; /* of the device it was made on (recovery.c) */
} wg_buffer;

/* A window over a large storage and a view through it (windows.c): a
 * storage that is never released and a buffer that is bytes of another. */
struct wg_window_buf {
    wt_storage storage;
    wg_buffer buffer;
    wt_tensor tensor;
};

typedef struct wg_pool {
    wg_buffer **free_list;
    int count, capacity;
    uint64_t pooled_bytes;
    uint64_t limit; /* pooled bytes kept at most; 0 until read */
} wg_pool;

/* Storage buffer of at least bytes, from the pool or freshly created. */
wt_status wg_pool_acquire(wt_context *ctx, size_t bytes, wg_buffer **out);
void wg_pool_release(wt_context *ctx, wg_buffer *b);
/* Releases every pooled buffer. */
void wg_pool_trim(wt_context *ctx);
void wg_pool_destroy(wt_context *ctx);
/* Creates a buffer inside error scopes: OOM and validation errors come
 * back as a status instead of an uncaptured error. */
wt_status wg_create_buffer(wt_context *ctx, uint64_t size, WGPUBufferUsage usage,
                           const char *label, WGPUBuffer *out);

/* ----------------------------------------------------------- pipelines */

typedef struct wg_pipeline {
    uint64_t hash; /* of the key, compared first */
    char *key; /* shader stem + '\n' + binding signature + '\n' + prelude */
    WGPUComputePipeline pipeline;
    WGPUBindGroupLayout layout; /* owned by the layout cache */
} wg_pipeline;

typedef struct wg_layout {
    uint32_t nbindings;   /* storage bindings after the uniform */
    uint32_t writable;    /* bit i: binding i+1 is read_write */
    WGPUBindGroupLayout layout;
    WGPUPipelineLayout pipeline_layout;
} wg_layout;

#define WG_BIND_GROUP_CACHE 1024

typedef struct wg_bind_group_slot {
    WGPUBindGroupLayout layout;
    WGPUBuffer buffers[WG_MAX_BINDINGS];
    uint64_t offsets[WG_MAX_BINDINGS], sizes[WG_MAX_BINDINGS]; /* windows */
    int nbuffers;
    WGPUBindGroup group;
} wg_bind_group_slot;

typedef struct wg_pipeline_cache {
    wg_pipeline *pipelines;
    int npipelines, cap_pipelines;
    wg_layout *layouts;
    int nlayouts, cap_layouts;
    wg_bind_group_slot *groups; /* direct-mapped by hash; WG_BIND_GROUP_CACHE */
} wg_pipeline_cache;

/* The pipeline for a launch (compiled on first use). */
wt_status wg_pipeline_get(wt_context *ctx, const wg_launch *launch, const wg_pipeline **out);
/* The bind-group slot of a replay's dispatch ordinal, in the graph's own
 * state (ctx->replay_state; made on first use). */
wt_status wg_replay_slot(wt_context *ctx, int64_t ordinal, wg_bind_group_slot **out);
/* Releases a graph's bind groups and list (wt_backend_ops.graph_state_free). */
void wg_graph_state_free(wt_context *ctx, void *state);
/* The storage references a graph's state holds on s (wt_backend_ops.graph_storage_refs). */
int64_t wg_graph_storage_refs(const void *state, const wt_storage *s);
/* Replays from a recorded list of dispatches (replay.c; wt_backend_ops). */
bool wg_graph_replay_begin(wt_context *ctx, void **state);
void wg_graph_replay_end(wt_context *ctx, void *state, wt_status ran);
wt_status wg_graph_replay_list(wt_context *ctx, void *state);
/* What the recording replay notes (replay.c): a dispatch, a check slot
 * taken, and work a list of dispatches cannot repeat. */
void wg_replay_note_dispatch(wt_context *ctx, const wg_pipeline *pipe, const wg_launch *launch,
                             uint32_t x, uint32_t y, uint32_t z);
void wg_replay_note_check(wt_context *ctx, int slot, const char *op, int64_t extent);
void wg_replay_not_cacheable(wt_context *ctx);
/* A bind group for (layout, arena, buffers), cached. */
wt_status wg_bind_group_get(wt_context *ctx, const wg_pipeline *pipe, const wg_launch *launch,
                            WGPUBindGroup *out);
/* Forgets cached bind groups that hold buffer (NULL: all of them). */
void wg_bind_groups_forget(wt_context *ctx, WGPUBuffer buffer);
void wg_pipeline_cache_destroy(wt_context *ctx);

/* ------------------------------------------------------------ recorder */

/* Finished asynchronous reads keep up to this many staging buffers. */
#define WG_ASYNC_STAGING_KEEP 16

/* Staged uploads go through a ring of this many buffers: the host fills
 * one while the device copies out of the others. */
#define WG_UPLOAD_RING 4

typedef struct wg_upload_slot {
    WGPUBuffer buffer;        /* MapWrite | CopySrc, or NULL */
    uint64_t size;
    bool mapped;              /* mapped for writing: ready to fill */
    bool pending;             /* a map was requested, its future not waited on */
    WGPUFuture future;
    WGPUMapAsyncStatus status; /* the map's, set by its callback */
} wg_upload_slot;

typedef struct wg_recorder {
    WGPUCommandEncoder encoder;
    WGPUComputePassEncoder pass;
    uint32_t dispatches;     /* recorded in the open batch */
    uint32_t per_submit;     /* batch size */
    uint64_t batch;          /* serial of the open batch, starts at 1 */
    /* Uniform arena: one 256-byte-aligned slot per dispatch of a batch,
     * staged in host memory and written just before the batch is
     * submitted, so the write lands in queue order before the batch and
     * after the previous one. */
    WGPUBuffer arena;
    uint8_t *arena_host;
    uint32_t slot_size;
    /* Readback staging buffer (MapRead), grown on demand; a large read
     * goes in pieces through it and a second one, the device copying one
     * piece while the host copies the other out. */
    WGPUBuffer readback;
    uint64_t readback_size;
    WGPUBuffer readback_b;
    uint64_t readback_b_size;
    /* Staging buffers of finished asynchronous reads, kept for the next
     * ones (events.c): a new MapRead buffer costs an allocation of
     * host-visible memory and its first-touch page faults on every read. */
    WGPUBuffer async_staging[WG_ASYNC_STAGING_KEEP];
    uint64_t async_staging_size[WG_ASYNC_STAGING_KEEP];
    int async_staging_count;
    /* Upload staging (upload.c): a ring of MapWrite | CopySrc buffers. */
    wg_upload_slot upload[WG_UPLOAD_RING];
    int upload_next;
} wg_recorder;

wt_status wg_recorder_init(wt_context *ctx, uint32_t per_submit);
void wg_recorder_destroy(wt_context *ctx);
/* Ends the open pass and submits the batch (nothing if empty). */
wt_status wg_flush(wt_context *ctx);
/* The open encoder with its compute pass ended, for copies that must run
 * after the batch's dispatches; submitted by the next flush. */
wt_status wg_copy_encoder(wt_context *ctx, WGPUCommandEncoder *out);
/* Opens the batch's compute pass if none is open (a replay's list goes in). */
wt_status wg_recorder_open_pass(wt_context *ctx);
/* Flushes, then waits for the queue to finish. */
wt_status wg_finish(wt_context *ctx);
/* Copies bytes of src into b at offset (both multiples of 4) through the
 * upload staging ring, in pieces of at most piece bytes: each piece is
 * written into a mapped staging buffer and copied on the device after the
 * open batch's work (so in program order), the batch submitted; the
 * staging buffer is mapped again for a later piece. WT_ERR_UNSUPPORTED
 * when the WebGPU library cannot map for writing (the caller falls back
 * to queue writes). */
wt_status wg_upload_staged(wt_context *ctx, WGPUBuffer dst, uint64_t offset, const void *src, uint64_t bytes,
                           uint64_t piece);
void wg_upload_staging_release(wt_context *ctx);

/* Maps [0, len) of a MapRead buffer whose copies are submitted, waiting for
 * them; *out is the mapped range, which the caller unmaps. */
wt_status wg_map_read(wt_context *ctx, WGPUBuffer buffer, uint64_t len, const char *what,
                      const void **out);

/* --------------------------------------------------------------- timer */

/* GPU timing through timestamp queries (timer.c): while a timer runs,
 * every compute pass the recorder begins writes its start and end
 * timestamps into a query set; the timer sums end - start over the
 * passes. */
typedef struct wg_timer {
    bool supported;          /* the device has the timestamp-query feature */
    bool active;             /* between begin and end */
    WGPUQuerySet queries;    /* made on first use, then kept */
    WGPUBuffer resolved;     /* QueryResolve | CopySrc, one uint64 per query */
    WGPUBuffer readback;     /* MapRead | CopyDst, the same size */
    uint32_t used;           /* queries written since the last harvest */
    uint64_t total_ns;       /* sum over harvested passes */
    wt_status failed;        /* a harvest before the end failed */
    /* --- runtime: profiling (profile.c) --- */
    const char *pass_names[2048];   /* the op of each timed pass (query index / 2) */
    const char *pass_details[2048]; /* its shapes (the trace's), or NULL */
} wg_timer;

/* What the recorder and the timer call into the layers above them (the
 * timer, the profiler), set once when the context is made (backend.c): so
 * the recorder names neither and the timer names no profiler. A NULL
 * entry does nothing. */
typedef struct wg_hooks {
    /* The recorder opens a compute pass: timestamp writes to attach. */
    wt_status (*pass_writes)(wt_context *ctx, WGPUPassTimestampWrites *writes, bool *timed);
    /* Around each dispatch while a per-op profile runs. */
    void (*before_dispatch)(wt_context *ctx, const char *shader);
    wt_status (*after_dispatch)(wt_context *ctx, double host_start_us);
    /* The timer harvested a timed pass. */
    void (*timed_pass)(wt_context *ctx, const char *name, const char *detail, uint64_t begin_ns,
                       uint64_t end_ns);
    /* A graph's replay (replay.c) records what the runtime below does
     * while ctx->replay_state is set: the bind-group slot of a replayed
     * dispatch, each dispatch, each check slot taken, and work a list of
     * dispatches cannot repeat. */
    wt_status (*replay_slot)(wt_context *ctx, int64_t ordinal, wg_bind_group_slot **out);
    void (*replay_note_dispatch)(wt_context *ctx, const wg_pipeline *pipe, const wg_launch *launch, uint32_t x,
                                 uint32_t y, uint32_t z);
    void (*replay_note_check)(wt_context *ctx, int slot, const char *op, int64_t extent);
    void (*replay_not_cacheable)(wt_context *ctx);
} wg_hooks;

/* --- runtime: per-op profiling (profile.c) --- */
typedef struct wg_profile {
    bool active;             /* per-op timing on */
    bool gpu;                /* timestamps (else host time around each op) */
    wt_prof_log log;         /* the summary and the trace's events (core/profile.h) */
    double host_base_us;     /* host time of the first timed pass */
    uint64_t gpu_base_ns;    /* its GPU timestamp */
    bool have_base;
    const char *next_name;   /* the op whose pass the recorder opens next */
    const char *next_detail; /* its shapes, kept for the trace (or NULL) */
} wg_profile;

/* Copies [offset, offset + bytes) of b into dst after the work recorded
 * before (a submit and a wait; recorder.c). */
wt_status wg_read_buffer(wt_context *ctx, wg_buffer *b, size_t offset, void *dst, size_t bytes);

/* --- device-side checks read at the next sync (checks.c) --- */
/* One check not read yet: its slot of the context's flag area (two u32
 * words, raised and the offending value, at slot * alignment), bound
 * through a window of its own. */
typedef struct wg_check {
    wt_storage storage; /* what a kernel binds: device = &window */
    wg_buffer window;   /* the slot's bytes of the flag area */
    char op[32];        /* the op that ran the check */
    int64_t extent;     /* the axis extent the values had to stay below */
} wg_check;
/* Reads every pending slot (one read-back); the first raised one is the
 * error (WT_ERR_INVALID_ARGUMENT naming its op), recorded on ctx. */
wt_status wg_checks_verify(wt_context *ctx);
/* Forgets the pending checks unread and gives the flag area back
 * (teardown, a lost device). */
void wg_checks_drop(wt_context *ctx);
/* Gives the kept rope frequency tables back (kernels/rope.c). */
void wg_rope_tables_drop(wt_context *ctx);

/* The adapters of the WebGPU backend (wt_list_adapters, adapter.c). */
wt_status wt_webgpu_list_adapters(const wt_context_options *opts, wt_adapter_info *infos,
                                  int capacity, int *count);
/* Names the pass the recorder opens next: by the running node (its op and,
 * for the trace, its shapes), else by the shader. */
void wg_profile_name_next(wt_context *ctx, const char *shader);
/* Called by the timer's harvest for each timed pass. */
void wg_profile_pass(wt_context *ctx, const char *name, const char *detail, uint64_t begin_ns,
                     uint64_t end_ns);
/* Around one dispatch while profiling (recorder.c). */
wt_status wg_profile_after_dispatch(wt_context *ctx, double host_start_us);
double wg_now_us(void);
wt_status wg_profile_begin(wt_context *ctx);
wt_status wg_profile_end(wt_context *ctx);
void wg_profile_destroy(wt_context *ctx);
wt_status wg_profile_summary(const wt_context *ctx, wt_profile_entry *out, int capacity,
                             int *count, bool *gpu_timed);
bool wg_trace_wanted(void);
/* Harvests outstanding timestamps; makes the query set (timer.c). */
wt_status wg_timer_harvest(wt_context *ctx);
wt_status wg_timer_objects(wt_context *ctx);

/* Fills *writes for the pass about to begin and sets *timed; *timed is
 * false when no timer runs. May first harvest a full query set (a flush
 * and a wait). */
wt_status wg_timer_pass_writes(wt_context *ctx, WGPUPassTimestampWrites *writes, bool *timed);
wt_status wg_timer_begin(wt_context *ctx);
wt_status wg_timer_end(wt_context *ctx, double *gpu_seconds);
void wg_timer_destroy(wt_context *ctx);

/* ------------------------------------------------------------- context */

struct wg_context {
    wg_library lib;
    WGPUInstance instance;
    WGPUAdapter adapter;
    WGPUDevice device;
    WGPUQueue queue;
    wt_adapter_info info;
    WGPULimits limits;
    wg_caps caps;
    /* An error reported by a callback (device lost, uncaptured error),
     * returned by the next call into the backend. */
    wt_status pending_status;
    bool lost;
    char pending_message[1024];
    wg_pool pool;
    wg_pipeline_cache cache;
    wg_recorder rec;
    wg_timer timer;
    wg_profile prof;
    wg_hooks hooks;
    /* Device-side checks not read yet (checks.c): the flag area, made at
     * the first check and kept, and one slot per pending check. */
    wg_buffer *check_area;
    uint64_t check_align;
    wg_check *checks; /* WG_MAX_CHECKS slots */
    int ncheck;
    /* kernels/rope.c: frequency tables by (frequencies, head dim), uploaded
     * once and kept (an upload per call would also end the open batch: its
     * scratch buffer came back from the pool still bound in it). */
    struct {
        wt_rope_freqs freqs;
        uint64_t d;
        struct wt_storage *table;
    } rope_tables[8];
    int rope_next; /* the slot the next new table takes */
    /* Set around an upload of constant data into a buffer made for it
     * (rope's and random's tables): a graph's list of dispatches keeps
     * that buffer and need not repeat the upload (replay.c). */
    bool constant_upload;
    /* f16_probe.c: whether the GPU's f16 conversions are exact (probed once). */
    bool f16_hw_probed, f16_hw_exact, f16_probe_ran;
    uint32_t f16_probe_flags; /* what the probe found inexact (f16_probe.c) */
    char f16_probe_note[160];
    /* kernels/gemm.c: f16 products the matrix units ran, and those that the
     * context asked to run there but took the f32-arithmetic tiles (the
     * last one's reason); context info and the profile say so. */
    struct {
        uint64_t runs, declined;
        const char *why;  /* a static string */
        bool declined_now; /* the next dispatch is such a product */
    } matrix;
    bool matrix_wanted; /* device.c: the subgroup-matrix feature was asked for */
    /* Counts of what steady state should not do (device objects made per
     * op) and of batching; printed at teardown when WT_WEBGPU_STATS is set. */
    struct {
        uint64_t dispatches, submits, passes, pipelines, bind_groups_made, bind_group_hits;
        uint64_t pipeline_hits;  /* --- runtime: wt_context_pipeline_stats --- */
        uint64_t replay_shared_bytes; /* replay.c: share_buffers */
        double compile_seconds;
    } counters;
    char toggles[256]; /* the Dawn toggles asked for, "+a,-b" */
    /* --- runtime --- */
    wt_context_options opts; /* as the context was made (for recovery) */
    char features[768];      /* which features are on and why (context info) */
    uint64_t max_buffer;     /* effective largest buffer */
    /* recovery.c: wt_context_lose_device destroys the device on purpose;
     * each device made for this context (the first, and one per recovery)
     * has a generation, and buffers remember theirs. */
    bool losing_on_purpose;
    uint32_t generation;
};

/* A buffer made on a device this context has since lost (recovery.c). */
static inline bool wg_buffer_stale(const wg_context *w, const struct wg_buffer *b);

static inline wg_context *wg_ctx(const wt_context *ctx) { return (wg_context *)ctx->impl; }

/* Returns (and clears, unless the device is lost) a recorded device error. */
wt_status wg_check_device(wt_context *ctx);

/* Runs inside a pushed error scope; returns the scope's error as a status
 * (WT_OK when none). filter_status is the status for a captured error. */
wt_status wg_pop_error_scope(wt_context *ctx, wt_status filter_status, const char *what);

static inline bool wg_buffer_stale(const wg_context *w, const struct wg_buffer *b)
{
    return (b->parent ? b->parent->generation : b->generation) != w->generation;
}
/* WT_ERR_DEVICE_LOST for a tensor whose buffer died with a lost device. */
wt_status wg_check_buffer(wt_context *ctx, const wg_buffer *b, const char *what);

/* custom_kernel.c */
wt_status wg_kernel_compile(wt_context *ctx, const wt_kernel *k);
wt_status wg_kernel_dispatch(wt_context *ctx, const wt_kernel *k, wt_tensor *const *tensors,
                             const void *params, const uint32_t groups[3]);

/* events.c */
wt_status wg_event_start(wt_context *ctx, wt_event *e, wt_storage *s, size_t offset, void *dst,
                         size_t bytes);
wt_status wg_event_poll(wt_context *ctx, wt_event *e, bool wait);
void wg_event_release(wt_context *ctx, wt_event *e);

/* recovery.c */
wt_status wg_lose_device(wt_context *ctx);
wt_status wg_recover(wt_context *ctx);

#endif /* WT_WG_RUNTIME_H */
