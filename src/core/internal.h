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

typedef enum wt_unary_op {
    WT_UNARY_NEG, WT_UNARY_EXP, WT_UNARY_LOG, WT_UNARY_SQRT,
    WT_UNARY_RELU, WT_UNARY_SIGMOID, WT_UNARY_TANH, WT_UNARY_COUNT
} wt_unary_op;

typedef enum wt_binary_op {
    WT_BINARY_ADD, WT_BINARY_SUB, WT_BINARY_MUL, WT_BINARY_DIV, WT_BINARY_COUNT
} wt_binary_op;

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
    /* out = op(x); x has out's shape. */
    wt_status (*unary)(wt_context *ctx, wt_unary_op op, const wt_tensor *x, wt_tensor *out);
    /* out = op(a, b); a and b are already expanded to out's shape
     * (broadcast axes have stride 0). */
    wt_status (*binary)(wt_context *ctx, wt_binary_op op, const wt_tensor *a,
                        const wt_tensor *b, wt_tensor *out);
    /* Optional (NULL: the API computes f16 through f32): unary / binary on
     * f16 operands and an f16 out, all contiguous, of one shape (no
     * broadcast), at even element offsets. WT_ERR_UNSUPPORTED sends the API
     * to the f32 path. */
    wt_status (*unary_f16)(wt_context *ctx, wt_unary_op op, const wt_tensor *x, wt_tensor *out);
    wt_status (*binary_f16)(wt_context *ctx, wt_binary_op op, const wt_tensor *a,
                            const wt_tensor *b, wt_tensor *out);
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
