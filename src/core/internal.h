/* Internal objects shared by the API layer and the backends. */
#ifndef WT_INTERNAL_H
#define WT_INTERNAL_H

#include "webtensor.h"
#include "core/knobs.h"

#include <stdarg.h>

/* ---------------------------------------------------------------- errors */

/* Records a message for wt_last_error() and returns s, so that a failure
 * reads `return wt_fail(WT_ERR_SHAPE, "add: ...", ...);`. */
wt_status wt_fail(wt_status s, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Prefixes the current message with "what: " (for errors bubbling up). */
void wt_error_prefix(const char *what);
/* A message outside any call's status, to the log handler
 * (wt_set_log_handler; stderr by default). */
void wt_log_message(wt_log_level level, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Bytes of one element in a backend's storage: 4, 2, 4, 4 for f32, f16,
 * i32, bool (a bool is a 4-byte word 0 or 1 on every backend; the host
 * size, wt_dtype_size, is 1). Every count of storage bytes uses this. */
size_t wt_dtype_storage_size(wt_dtype dtype);

/* Overflow-checked arithmetic for sizes (false on overflow). */
bool wt_mul_size(size_t a, size_t b, size_t *out);
/* --- 32-bit sizes (WebAssembly) --- */
/* count elements of esize bytes as a byte count; false when count is
 * negative or the bytes do not fit a size_t. Every int64 element count
 * becomes a size through this, never a bare (size_t) cast, which on a
 * 32-bit size_t drops the high bits (2^32 elements became 0). */
bool wt_bytes_of(int64_t count, size_t esize, size_t *out);
/* v as a size_t; false when negative or too large for one. */
bool wt_size_of_i64(int64_t v, size_t *out);

/* --------------------------------------------------------------- storage */

typedef struct wt_backend_ops wt_backend_ops;

/* A block of device (or host) memory that tensors view. Refcounted. */
typedef struct wt_storage {
    int refcount;
    wt_context *ctx;  /* holds a context reference */
    size_t bytes;
    void *host;       /* CPU backend: the memory */
    void *device;     /* WebGPU backend: its buffer object */
    /* Bumped by every node that writes the storage (core/node.c): autograd
     * refuses a saved tensor whose storage changed since it was saved. */
    uint64_t version;
    /* Made by the backend as scratch (its own release, not wt_storage_unref). */
    bool backend_scratch;
    /* Memory the caller lent (wt_tensor_from_host_memory): the backend did
     * not allocate it and does not free it; release(release_data), if set,
     * hands it back when the last tensor on it goes. */
    bool borrowed;
    wt_host_release_fn release;
    void *release_data;
} wt_storage;

struct wt_tensor {
    int refcount;
    wt_storage *storage;
    wt_dtype dtype;
    int ndim;
    int64_t shape[WT_MAX_DIMS];
    int64_t strides[WT_MAX_DIMS]; /* elements; 0 for broadcast axes */
    int64_t offset;               /* elements from the storage's start */
    int64_t numel;
    int scope_refs;               /* entries of open scopes that own a reference */
    /* NULL unless the tensor takes part in automatic differentiation: a
     * leaf that requires grad, or the result of a recorded op
     * (autograd/tape.h). Inference tensors never have one. */
    struct wt_grad_meta *autograd;
};

struct wt_context {
    int refcount; /* the user's + one per live storage */
    wt_backend kind;
    const wt_backend_ops *ops;
    void *impl; /* backend state */
    wt_context_options opts;
    wt_memory_stats stats;
    /* --- runtime --- */
    char reason[512]; /* why this backend (wt_context_info.reason) */
    wt_status last_status;  /* wt_context_last_status / _last_message */
    char last_error[1024];
    wt_scope *scope;        /* the innermost open scope (core/tensor.c); NULL: none */
    /* --- nodes (core/node.c) --- */
    const struct wt_node *node; /* the node running now (names GPU passes) */
    /* Set by a backend whose work is done when run returns (the CPU) while
     * a profile runs: wt_node_run times every node on the host into it. */
    struct wt_prof_log *host_log;
    unsigned id;                /* this context's number (its trace track) */
    /* The capture running on the context (core/graph.c), and how
     * wt_node_run hands it each node that ran. */
    struct wt_graph *capture;
    wt_status (*capture_record)(struct wt_graph *g, const struct wt_node *n);
    /* During a replay: the graph's backend state (what the backend keeps
     * per graph, e.g. its bind groups) and the ordinal of the next
     * dispatch; NULL otherwise (core/graph.c). */
    void **replay_state;
    int64_t replay_pos;
    /* The graph being replayed (core/graph.c), for wt_graph_storage_refs. */
    struct wt_graph *replaying;
    /* --- autograd (autograd/tape.c) --- */
    int no_grad_depth; /* open wt_no_grad_begin scopes */
    int grad_paused;   /* > 0 inside a recorded op or a backward pass */
};

/* An open scope: the references it owns, in the order they were made.
 * A slot is NULL once its tensor is gone or kept. */
struct wt_scope {
    wt_context *ctx;   /* holds a context reference */
    wt_scope *parent;  /* the scope it was begun in */
    wt_tensor **owned;
    int count, cap, holes;
};

/* Gives the innermost open scope of ctx, if any, the reference to t that
 * a call is about to return (t was just made, or is handed out again);
 * WT_ERR_OUT_OF_MEMORY when the scope cannot grow (t is untouched). */
wt_status wt_scope_adopt(wt_context *ctx, wt_tensor *t);
/* t is being freed: clears the slots of open scopes that still name it. */
void wt_scope_forget(wt_tensor *t);
/* x for a caller, for ops that return their input unchanged: x itself
 * (one more reference) outside scopes; inside one a new view of x, which
 * the scope owns like any result. */
wt_status wt_tensor_share(const wt_tensor *x, wt_tensor **out);

/* --- autograd's hooks in the core ---
 * A tensor's autograd record belongs to the layer above (autograd/tape.c);
 * the core reaches it only through these, which that layer installs when
 * it makes its first record, so a tensor with a record implies they are
 * set, and the core names no function of the layer. */
typedef struct wt_grad_hooks {
    /* Drops a tensor's record (its tensor is being freed). */
    void (*meta_drop)(struct wt_grad_meta *m);
    /* One more tensor shares the record m: a view made by the body of an
     * op that is not recorded (recording on), so that the kernel reading
     * it is refused as any unrecorded use of a tracked tensor is. */
    void (*meta_share)(struct wt_grad_meta *m);
    /* WT_OK, or the refusal of a node that reads a tensor requiring grad
     * while recording is on: an op without a derivative rule, which would
     * otherwise give a silent zero gradient (core/node.c asks before
     * every such node). */
    wt_status (*check_unrecorded)(wt_context *ctx, const struct wt_node *n);
} wt_grad_hooks;
void wt_grad_hooks_install(const wt_grad_hooks *hooks);
const wt_grad_hooks *wt_grad_hooks_get(void);

/* ------------------------------------------------------------- backends */

struct wt_prof_log; /* core/profile.h */

#include "core/node.h"

/* The dtype rules of the elementwise rows (ops.def). "Lanes" are what a
 * kernel computes in: f32 (f16 natively where a backend can), i32, or
 * bool as i32 lanes holding 0/1.
 *   FLOAT  float math: f32/f16 lanes; i32 and bool inputs are cast to
 *          f32 first (the result is f32).
 *   NUM    numbers: f32/f16/i32 lanes, the result of the input's dtype;
 *          bool refused (WT_ERR_INVALID_ARGUMENT).
 *   ROUND  floor/ceil/round: f32/f16 lanes; i32 is returned unchanged (a
 *          copy); bool refused.
 *   LOGIC  logical ops: inputs are cast to bool (x != 0), bool lanes,
 *          bool result.
 *   ARITH  binary arithmetic: inputs promoted (WT_PROMOTE below) and
 *          computed in the common dtype; two bools refused.
 *   INTDIV floor_divide/remainder: as ARITH.
 *   CMP    comparisons: inputs promoted, bool result (two bools compare
 *          as 0/1). */
typedef enum wt_rule {
    WT_RULE_FLOAT, WT_RULE_NUM, WT_RULE_ROUND, WT_RULE_LOGIC, WT_RULE_ARITH, WT_RULE_INTDIV,
    WT_RULE_CMP, WT_RULE_KERNEL
} wt_rule;

/* One row of the catalogue (core/ops.c). */
typedef struct wt_op_info {
    const char *name;    /* "add": the public function is wt_add */
    const char *family;  /* "elementwise", "reduce", "nn" ... */
    int arity;           /* 1, 2 for elementwise rows; 0 for kernel rows */
    int nparams;         /* scalar parameters of a unary row */
    wt_rule rule;
    wt_support support[4]; /* the catalogue's answer per dtype (f32, f16, i32, bool) */
} wt_op_info;

extern const wt_op_info wt_op_table[WT_OP_COUNT];

/* How ctx's backend computes op on inputs of dtype: the catalogue's
 * answer, corrected by the backend's supports() hook. The elementwise
 * front-ends act on it, and `webtensor ops` prints it. */
wt_support wt_op_support_on(const wt_context *ctx, wt_op op, wt_dtype dtype);

/* What the API layer asks of a backend. The API layer has checked every
 * argument; outputs are fresh contiguous tensors of the backend's own
 * storage; inputs may be any strided view (zero strides included). Every
 * function returns a status and sets the message through wt_fail. */
struct wt_backend_ops {
    const char *name;
    /* Context lifetime. create fills ctx->impl. */
    wt_status (*create)(wt_context *ctx, const wt_context_options *opts);
    void (*destroy)(wt_context *ctx);
    wt_status (*sync)(wt_context *ctx);
    /* Optional (NULL: WT_ERR_UNSUPPORTED): GPU time of the work recorded
     * between begin and end; end waits for that work. The API layer has
     * checked ctx and gpu_seconds. */
    wt_status (*timer_begin)(wt_context *ctx);
    wt_status (*timer_end)(wt_context *ctx, double *gpu_seconds);

    /* Storage: alloc fills s->host or s->device for s->bytes (contents
     * undefined); free gives it back (to a pool, say). */
    wt_status (*storage_alloc)(wt_context *ctx, wt_storage *s);
    void (*storage_free)(wt_context *ctx, wt_storage *s);
    wt_status (*upload)(wt_context *ctx, wt_storage *s, size_t offset, const void *src, size_t bytes);
    /* Waits for pending work that writes s, then copies out. */
    wt_status (*download)(wt_context *ctx, wt_storage *s, size_t offset, void *dst, size_t bytes);

    /* Runs one node (core/node.h): the only op entry of a backend. The
     * API layer has checked every argument, and wt_node_run has checked
     * that the kind is one this backend runs (bit WT_NODE_BIT(kind) of
     * runs). A backend may still answer WT_ERR_UNSUPPORTED for a dtype or
     * layout it does not take where the kind says the API has a fallback
     * (ELEMENTWISE on f16 lanes, MATMUL_FUSED, CONV2D, CONV_TRANSPOSE2D). */
    wt_status (*run)(wt_context *ctx, const wt_node *node);
    uint64_t runs;
    /* Optional (NULL: the catalogue's answers): how this backend computes
     * op on inputs of dtype, given the catalogue's answer. */
    wt_support (*supports)(const wt_context *ctx, wt_op op, wt_dtype dtype, wt_support catalogue);
    /* Optional (NULL: yes): whether this backend's ATTENTION_BACKWARD
     * kernel is the better way to the gradients of attention without a mask
     * on these shapes (q [B, Hq, Sq, D], k [B, Hkv, Skv, D], v [B, Hkv,
     * Skv, Dv], any dtype and layout) than autograd's composition of matrix
     * products. WT_ATTN_BACKWARD overrides the answer. */
    bool (*attention_backward_preferred)(const wt_context *ctx, const wt_tensor *q, const wt_tensor *k,
                                         const wt_tensor *v, bool causal);
    /* Optional (NULL: never): whether this backend's ATTENTION kernel
     * for these arguments (a.lse still NULL) also writes the rows'
     * log-sum-exp (wt_attention_args.lse). Asked before the node runs, so
     * that no node fails for it (a failed node costs a graph capture its
     * replay list). */
    bool (*attention_writes_lse)(wt_context *ctx, const wt_attention_args *a);
    /* Optional (NULL: never): whether this backend's ATTENTION kernel for
     * these arguments writes a.out given as the [B, H, S, D] view of a
     * dense [B, S, H, D] (wt_attention_heads_layout 1). Asked before the
     * node runs, as above. */
    bool (*attention_out_heads_inner)(wt_context *ctx, const wt_attention_args *a);
    /* Optional (NULL: never): whether this backend's ATTENTION_BACKWARD
     * kernel takes q, k, v, dout and out as they are (f32, layouts 0 or 1
     * of wt_attention_heads_layout, q's side and k's side each of one
     * layout) and writes dq in q's layout, dk and dv in k's. Otherwise the
     * caller gives dense [B, H, S, D] copies. */
    bool (*attention_backward_views)(const wt_context *ctx, const wt_tensor *q, const wt_tensor *k,
                                     const wt_tensor *v, const wt_tensor *dout, const wt_tensor *out);
    /* Optional (NULL: every shape): whether this backend's NORM_BACKWARD
     * kernel takes rows x cols f32 tensors. Asked before the node runs, so
     * that shapes it would refuse are composed without a failed node (which
     * would also cost a graph capture its replay list). */
    bool (*norm_backward_fits)(const wt_context *ctx, int64_t rows, int64_t cols);
    /* Optional (NULL: every shape): whether this backend's
     * ROPE_KV_ATTENTION kernel takes these operands (checked as
     * wt_rope_kv_attention checks them; out a new f32 [B, Hq, S, D]).
     * Asked before the node runs, as norm_backward_fits; the rest is
     * composed of ROPE_KV_CACHE and ATTENTION. */
    bool (*rope_kv_attention_fits)(const wt_context *ctx, const wt_tensor *qkv, const wt_tensor *kv_cache,
                                   const wt_tensor *position, const wt_tensor *kv_length, int64_t offset);
    /* Optional: describe the adapter (NULL for the CPU). */
    wt_status (*adapter_info)(const wt_context *ctx, wt_adapter_info *out);
    /* Optional: release pooled memory. */
    void (*trim)(wt_context *ctx);
    /* --- runtime --- */
    /* Optional: the backend's part of wt_context_get_info (the core has
     * filled backend, reason, validation and memory_limit). */
    void (*context_info)(const wt_context *ctx, wt_context_info *out);
    /* Optional (NULL: nothing to lose / recover): destroy the device as a
     * driver reset would; bring up a new one after a loss. */
    wt_status (*lose_device)(wt_context *ctx);
    wt_status (*recover)(wt_context *ctx);
    /* Optional (NULL: work is done when calls return): asynchronous work.
     * event_start fills e->impl for a marker (dst NULL) or a read of
     * bytes at offset of s into dst; event_poll completes it when it can
     * (wait: blocks until then) and sets e->done; event_release frees
     * e->impl (after waiting if pending). */
    wt_status (*flush)(wt_context *ctx);
    wt_status (*event_start)(wt_context *ctx, wt_event *e, wt_storage *s, size_t offset,
                             void *dst, size_t bytes);
    wt_status (*event_poll)(wt_context *ctx, wt_event *e, bool wait);
    void (*event_release)(wt_context *ctx, wt_event *e);
    /* Optional (NULL: WT_ERR_UNSUPPORTED): per-op profiling. */
    wt_status (*profile_begin)(wt_context *ctx);
    wt_status (*profile_end)(wt_context *ctx);
    wt_status (*profile_summary)(const wt_context *ctx, wt_profile_entry *out, int capacity,
                                 int *count, bool *gpu_timed);
    /* Optional (NULL: zeros): wt_context_pipeline_stats. */
    void (*pipeline_stats)(const wt_context *ctx, wt_pipeline_stats *out);
    /* Optional (NULL: WT_ERR_UNSUPPORTED): custom kernels. The API layer
     * (src/api/kernel.c) has checked the descriptor and the arguments'
     * counts and contexts. */
    wt_status (*kernel_compile)(wt_context *ctx, const wt_kernel *k);
    /* Optional: frees what the backend kept for a captured graph through
     * ctx->replay_state (core/graph.c calls it when the graph goes). */
    void (*graph_state_free)(wt_context *ctx, void *state);
    /* Optional: replays from a list the backend recorded. begin says
     * whether the list runs this replay (then replay_list runs it);
     * otherwise the nodes run, the backend may record them, and
     * replay_end hears how that went. */
    bool (*graph_replay_begin)(wt_context *ctx, void **state);
    void (*graph_replay_end)(wt_context *ctx, void *state, wt_status ran);
    wt_status (*graph_replay_list)(wt_context *ctx, void *state);
    /* Optional (NULL: none): the references to s the backend holds for a
     * graph through its state (ctx->replay_state). */
    int64_t (*graph_storage_refs)(const void *state, const wt_storage *s);
    /* Optional (NULL: no adapters): the adapters this backend could use
     * with opts, without a context (wt_list_adapters). */
    wt_status (*list_adapters)(const wt_context_options *opts, wt_adapter_info *infos, int capacity,
                               int *count);
};

/* An event (wt_event_record, wt_tensor_read_async). */
struct wt_event {
    wt_context *ctx; /* holds a context reference */
    void *impl;      /* backend state; NULL once complete */
    bool done;
    wt_status status; /* of the completion */
};

/* A custom kernel (wt_kernel_create); its strings are owned copies. */
struct wt_kernel {
    wt_context *ctx; /* holds a context reference */
    char *source;
    char *entry_point;
    int num_tensors;
    uint32_t writable_mask;
    size_t params_size;
};

/* The caller's options, checked, with the defaults of fields an older
 * header's struct lacks (core/context.c). */
wt_status wt_context_options_read(const wt_context_options *in, wt_context_options *out);
/* A context on the backend ops (kind, and why it was chosen), for the
 * backend registry (src/registry/backends.c), which names the backends:
 * the core names none. */
wt_status wt_context_create_with(const wt_backend_ops *ops, wt_backend kind,
                                 const wt_context_options *opts, const char *reason, wt_context **out);

/* ----------------------------------------------------- tensor internals */

/* New contiguous tensor with fresh storage of ctx (contents undefined). */
/* A tensor over caller-owned host memory of `bytes` bytes (the CPU
 * backend's storage without its pool): checked by the caller. */
wt_status wt_tensor_borrow(wt_context *ctx, wt_dtype dtype, int ndim, const int64_t *shape,
                           const int64_t *strides, void *data, size_t bytes, wt_host_release_fn release,
                           void *release_data, wt_tensor **out);
wt_status wt_tensor_alloc(wt_context *ctx, wt_dtype dtype, int ndim, const int64_t *shape,
                          wt_tensor **out);
/* New tensor header viewing x's storage with the given layout. */
/* A new handle on x's elements (same storage, shape, strides, offset)
 * that belongs to nobody else: no scope adopts it and it takes no part in
 * autograd. What a captured graph holds, so that no other owner's release
 * can take its reference (a scope's slot stands for the reference an
 * op's temporary was made with, which the op itself drops). */
wt_status wt_tensor_alias(const wt_tensor *x, wt_tensor **out);
/* Drops one reference to a storage (freed with the last one). */
void wt_storage_unref(wt_storage *s);
wt_status wt_tensor_view(const wt_tensor *x, int ndim, const int64_t *shape,
                         const int64_t *strides, int64_t offset, wt_tensor **out);
/* The layout of a 4-D attention operand [B, H, S, D] at offset 0: 0
 * dense, 1 the [B, H, S, D] view of a dense [B, S, H, D] (the heads of a
 * linear layer's output, split and transposed), -1 neither. Axes of one
 * element count for neither, so a tensor that is both is 0. */
int wt_attention_heads_layout(const wt_tensor *t);
/* Whether a 4-D attention operand [B, H, S, D] holds its heads in rows of
 * *pitch >= H D elements: element (b, h, s, d) at offset + (b S + s) pitch
 * + h D + d (layout 1 above at pitch H D and offset 0; q, k or v as the
 * heads of one linear layer's output [B, S, (Hq + 2 Hkv) D] at the pitch
 * of its rows). */
bool wt_attention_heads_rows(const wt_tensor *t, int64_t *pitch);
/* Row-major strides for shape; returns the element count. */
int64_t wt_contiguous_strides(int ndim, const int64_t *shape, int64_t *strides);
bool wt_layout_is_contiguous(int ndim, const int64_t *shape, const int64_t *strides);

/* --- runtime --- */
/* Keeps wt_last_error() as the context's last error (st: its status). */
void wt_context_record_error(wt_context *ctx, wt_status st);
/* WT_ERR_OUT_OF_MEMORY when bytes more would pass the context's
 * memory_limit (after trimming the pool); WT_OK otherwise. */
wt_status wt_memory_limit_check(wt_context *ctx, size_t bytes);

/* Memory accounting, called by storage create/destroy. */
void wt_stats_on_alloc(wt_context *ctx, size_t bytes);
void wt_stats_on_free(wt_context *ctx, size_t bytes);

/* Context reference counting (storages hold one). */
void wt_context_ref(wt_context *ctx);
void wt_context_unref(wt_context *ctx);

/* -------------------------------------------------------- layout helpers */

/* Merges axes that can be walked as one for every one of n layouts sharing
 * shape (e.g. an output and its expanded inputs), and drops size-1 axes.
 * Rewrites ndim/shape/strides in place; a 0-d result becomes 1-d [1]. */
void wt_coalesce(int *ndim, int64_t *shape, int n, int64_t (*strides)[WT_MAX_DIMS]);
/* wt_coalesce of two layouts of t's shape, a's strides and b's (NULL: t's
 * shape contiguous), into *ndim, shape, strides[0] (a's) and strides[1]
 * (b's): e.g. a copy's destination and source. */
void wt_coalesce_pair(const wt_tensor *t, const int64_t *a, const int64_t *b, int *ndim, int64_t *shape,
                      int64_t (*strides)[WT_MAX_DIMS]);

/* The references graph g's own tensors hold on storage s (core/graph.c):
 * with the backend's own, all of s's references when nothing outside the
 * graph can read or write s. */
int64_t wt_graph_storage_refs(const struct wt_graph *g, const wt_storage *s);

#endif /* WT_INTERNAL_H */
