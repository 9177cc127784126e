/* Internal objects shared by the API layer and the backends. */
#ifndef WT_INTERNAL_H
#define WT_INTERNAL_H

#include "webtensor.h"

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

/* Bytes of one element in a backend's storage: 4, 2, 4, 4 for f32, f16,
 * i32, bool (a bool is a 4-byte word 0 or 1 on every backend; the host
 * size, wt_dtype_size, is 1). Every count of storage bytes uses this. */
size_t wt_dtype_storage_size(wt_dtype dtype);

/* Overflow-checked arithmetic for sizes (false on overflow). */
bool wt_mul_size(size_t a, size_t b, size_t *out);

/* --------------------------------------------------------------- storage */

typedef struct wt_backend_ops wt_backend_ops;

/* A block of device (or host) memory that tensors view. Refcounted. */
typedef struct wt_storage {
    int refcount;
    wt_context *ctx;  /* holds a context reference */
    size_t bytes;
    void *host;       /* CPU backend: the memory */
    void *device;     /* WebGPU backend: its buffer object */
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
};

struct wt_context {
    int refcount; /* the user's + one per live storage */
    wt_backend kind;
    const wt_backend_ops *ops;
    void *impl; /* backend state */
    wt_context_options opts;
    wt_memory_stats stats;
};

/* ------------------------------------------------------------- backends */

/* Every op, from the catalogue (core/ops.def): WT_OP_ADD, WT_OP_CONV2D ... */
typedef enum wt_op {
#define WT_UNARY(NAME, ...) WT_OP_##NAME,
#define WT_BINARY(NAME, ...) WT_OP_##NAME,
#define WT_KERNEL(NAME, ...) WT_OP_##NAME,
#include "core/ops.def"
    WT_OP_COUNT
} wt_op;

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

/* One elementwise op for a backend: out = op(in[0] [, in[1]]; params).
 * The inputs are expanded to out's shape (zero strides where broadcast)
 * and of the dtype the op computes in (one the backend answered NATIVE
 * for; the API has done the casts); out is contiguous, of the op's result
 * dtype (a comparison's is bool). params are 32-bit patterns of scalars
 * in the lane type (f32 bits, or i32 for i32 lanes): a unary op's
 * parameters; for a binary op with in[1] NULL, params[1] is the scalar b
 * (wt_<op>_scalar: no tensor, no upload). */
typedef struct wt_ew_args {
    wt_op op;
    int nin;
    const wt_tensor *in[2];
    uint32_t params[2];
    wt_tensor *out;
} wt_ew_args;

typedef enum wt_rowwise_op {
    WT_ROW_SOFTMAX, WT_ROW_LAYERNORM, WT_ROW_RMSNORM, WT_ROW_COUNT
} wt_rowwise_op;

typedef enum wt_reduce_op {
    WT_REDUCE_SUM, WT_REDUCE_MEAN, WT_REDUCE_MAX, WT_REDUCE_MIN, WT_REDUCE_COUNT
} wt_reduce_op;

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

    /* out (contiguous, of a 4-byte dtype: f32, i32, bool) = the 32-bit
     * pattern bits in every element (wt_fill_f32 in api.h for a float). */
    wt_status (*fill_bits)(wt_context *ctx, wt_tensor *out, uint32_t bits);
    /* out (contiguous, same shape) = x; f32 only (other dtypes copy through
     * cast). */
    wt_status (*copy)(wt_context *ctx, const wt_tensor *x, wt_tensor *out);
    /* out (contiguous, same shape) = x converted to out's dtype, any pair of
     * f32, f16, i32, bool (same dtype: a bit-exact copy), by the rules of
     * wt_cast in webtensor.h. */
    wt_status (*cast)(wt_context *ctx, const wt_tensor *x, wt_tensor *out);
    /* An elementwise op of the catalogue (see wt_ew_args). With f16
     * lanes (answered NATIVE by supports) WT_ERR_UNSUPPORTED for a layout
     * the kernel does not take sends the API to the f32 path. */
    wt_status (*elementwise)(wt_context *ctx, const wt_ew_args *args);
    /* out = mask ? a : b elementwise; mask bool, a, b and out of one
     * 4-byte dtype, all expanded to out's shape (out contiguous). a NULL:
     * the scalar whose 32-bit pattern is a_bits instead. */
    wt_status (*where)(wt_context *ctx, const wt_tensor *mask, const wt_tensor *a,
                       const wt_tensor *b, uint32_t a_bits, wt_tensor *out);
    /* Optional (NULL: the catalogue's answers): how this backend computes
     * op on inputs of dtype, given the catalogue's answer. */
    wt_support (*supports)(const wt_context *ctx, wt_op op, wt_dtype dtype, wt_support catalogue);
    /* a: [B, M, K], b: [B, K, N], out: [B, M, N] contiguous. Any strides,
     * batch strides may be 0 (broadcast). */
    wt_status (*matmul)(wt_context *ctx, const wt_tensor *a, const wt_tensor *b, wt_tensor *out);
    /* x: ndim = out->ndim + nreduced; its first out->ndim axes match out's
     * shape, its last nreduced axes are reduced. Mean divides by the count
     * of reduced elements. The count is > 0 for max/min. */
    wt_status (*reduce)(wt_context *ctx, wt_reduce_op op, const wt_tensor *x, int nreduced,
                        wt_tensor *out);

    /* out [R, C] contiguous = op applied to each row of x [R, C] (any
     * strides; C > 0). weight and bias: contiguous [C] or NULL (1 and 0);
     * bias only for layernorm. */
    wt_status (*rowwise)(wt_context *ctx, wt_rowwise_op op, const wt_tensor *x,
                         const wt_tensor *weight, const wt_tensor *bias, float eps, wt_tensor *out);

    /* Optional: describe the adapter (NULL for the CPU). */
    wt_status (*adapter_info)(const wt_context *ctx, wt_adapter_info *out);
    /* Optional: release pooled memory. */
    void (*trim)(wt_context *ctx);
};

extern const wt_backend_ops wt_cpu_backend;
extern const wt_backend_ops wt_webgpu_backend;

/* WebGPU adapter listing (src/webgpu), used by wt_list_adapters. */
wt_status wt_webgpu_list_adapters(const wt_context_options *opts, wt_adapter_info *infos,
                                  int capacity, int *count);

/* ----------------------------------------------------- tensor internals */

/* New contiguous tensor with fresh storage of ctx (contents undefined). */
wt_status wt_tensor_alloc(wt_context *ctx, wt_dtype dtype, int ndim, const int64_t *shape,
                          wt_tensor **out);
/* New tensor header viewing x's storage with the given layout. */
wt_status wt_tensor_view(const wt_tensor *x, int ndim, const int64_t *shape,
                         const int64_t *strides, int64_t offset, wt_tensor **out);
/* Row-major strides for shape; returns the element count. */
int64_t wt_contiguous_strides(int ndim, const int64_t *shape, int64_t *strides);
bool wt_layout_is_contiguous(int ndim, const int64_t *shape, const int64_t *strides);

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

#endif /* WT_INTERNAL_H */
