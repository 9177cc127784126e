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

/* --- reductions, scans, random numbers --- */

/* The reduction family, one row per op in core/reduce_ops.def. */
typedef enum wt_combine { WT_COMBINE_ADD, WT_COMBINE_MUL, WT_COMBINE_MAX, WT_COMBINE_MIN } wt_combine;
typedef enum wt_shift { WT_SHIFT_NONE, WT_SHIFT_MEAN, WT_SHIFT_MAX } wt_shift;
enum { WT_RD_FLOAT = 1, WT_RD_I32 = 2, WT_RD_BOOL = 4 };

typedef enum wt_reduce_op {
#define WT_REDUCE_OP(ID, ...) WT_REDUCE_##ID,
#include "core/reduce_ops.def"
#undef WT_REDUCE_OP
    WT_REDUCE_COUNT
} wt_reduce_op;

/* One in-place optimizer update, elementwise over n elements of param,
 * grad, m (SGD: the momentum buffer) and v (AdamW only); every tensor f32
 * and contiguous; m/v NULL when unused. */
typedef enum wt_optimizer_kind { WT_OPT_SGD, WT_OPT_ADAMW } wt_optimizer_kind;
typedef struct wt_optimizer_update {
    wt_optimizer_kind kind;
    wt_tensor *param, *m, *v;
    const wt_tensor *grad;
    float lr, weight_decay;
    float momentum, dampening; /* SGD */
    bool nesterov;             /* SGD */
    float beta1, beta2, eps;   /* AdamW */
    float bias1, bias2;        /* AdamW: 1 - beta^step */
} wt_optimizer_update;
/* --- convolution and pooling --- */
/* A 2-D sliding window from an [in_h, in_w] plane to an [out_h, out_w]
 * one, every value resolved by the API layer: output (oy, ox) reads input
 * rows oy*stride_h - pad_top + ky*dilation_h for ky < kernel_h (columns
 * alike). pad_bottom / pad_right only bound average pooling's divisor. */
typedef struct wt_window2d {
    int64_t in_h, in_w, out_h, out_w;
    int64_t kernel_h, kernel_w, stride_h, stride_w;
    int64_t pad_top, pad_left, pad_bottom, pad_right;
    int64_t dilation_h, dilation_w;
} wt_window2d;

typedef enum wt_pool_op {
    WT_POOL_MAX, WT_POOL_AVG, WT_POOL_ADAPTIVE_MAX, WT_POOL_ADAPTIVE_AVG, WT_POOL_COUNT
} wt_pool_op;

/* Max: NaN wins, else the first largest (PyTorch). Avg: divisor > 0
 * divides every window; else the window's size clipped to the padded
 * plane (count_include_pad) or to the plane. Adaptive: window oy spans
 * rows [floor(oy*H/OH), ceil((oy+1)*H/OH)) (kernel, stride, padding
 * unused). */
typedef struct wt_pool2d_desc {
    wt_pool_op op;
    wt_window2d win;
    bool count_include_pad;
    int64_t divisor;
} wt_pool2d_desc;
typedef struct wt_reduce_info {
    const char *name; /* "sum": the public function is wt_sum */
    wt_combine combine;
    double identity;
    wt_shift shift;
    bool empty_ok;
    unsigned dtypes; /* WT_RD_* */
    const char *map_wgsl, *finish_wgsl;
} wt_reduce_info;
/* The row of op (core/reduce_table.c); NULL for an unknown op. */
const wt_reduce_info *wt_reduce_info_of(wt_reduce_op op);

/* One reduction as a backend sees it: shift (NULL unless the op's row
 * asks for one) is contiguous with out's element count, one value per
 * output; n is the count finish divides by. */
typedef struct wt_reduce_args {
    wt_reduce_op op;
    const wt_tensor *shift;
    double n;
} wt_reduce_args;

typedef enum wt_scan_op { WT_SCAN_SUM, WT_SCAN_PROD } wt_scan_op;

typedef enum wt_random_kind { WT_RANDOM_UNIFORM, WT_RANDOM_NORMAL, WT_RANDOM_DROPOUT } wt_random_kind;
/* Philox4x32-10, key = seed, counter = (element index / 4, 0): element i
 * takes word i % 4 of its block (core/philox.c). */
typedef struct wt_random_args {
    wt_random_kind kind;
    uint64_t seed;
    uint32_t bits;  /* uniform: the top `bits` bits of a word, times 2^-bits (24 for f32) */
    float p, scale; /* dropout: drop where uniform(24 bits) < p, else x * scale */
} wt_random_args;

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
     * shape, its last nreduced axes are reduced (at least one element),
     * as the op's row of core/reduce_ops.def says. x and out have one
     * dtype (f32, i32 or bool). */
    wt_status (*reduce)(wt_context *ctx, const wt_reduce_args *r, const wt_tensor *x, int nreduced,
                        wt_tensor *out);

    /* out [R, C] contiguous = op applied to each row of x [R, C] (any
     * strides; C > 0). weight and bias: contiguous [C] or NULL (1 and 0);
     * bias only for layernorm. */
    wt_status (*rowwise)(wt_context *ctx, wt_rowwise_op op, const wt_tensor *x,
                         const wt_tensor *weight, const wt_tensor *bias, float eps, wt_tensor *out);

    /* --- training --- (src/api/train.c) Inputs contiguous unless said.
     * out = dy * act'(x); dy, x, out f32 of one shape. */
    wt_status (*act_backward)(wt_context *ctx, wt_activation act, const wt_tensor *dy,
                              const wt_tensor *x, wt_tensor *out);
    /* logits [N, C] f32, labels [N] i32: loss[n] = logsumexp(row n) -
     * row n[label] (0 where label == ignore; NaN for a label outside
     * [0, C)), valid[n] = 1 or 0 (ignored). */
    wt_status (*cross_entropy)(wt_context *ctx, const wt_tensor *logits, const wt_tensor *labels,
                               int32_t ignore, wt_tensor *loss, wt_tensor *valid);
    /* out [N, C] = (softmax(row n) - onehot(label n)) * scale[n]; rows of
     * ignored labels 0. scale: [N] f32 (a view, stride 0 allowed). */
    wt_status (*cross_entropy_backward)(wt_context *ctx, const wt_tensor *logits,
                                        const wt_tensor *labels, int32_t ignore,
                                        const wt_tensor *scale, wt_tensor *out);
    /* out [V, D] (zeros on entry): out[row(i)] += dy[i, :] for i < N, with
     * row(i) = indices[i] + (plane ? i / plane * plane_rows : 0); an index
     * outside [0, plane ? plane_rows : V) is skipped. plane > 0 scatters
     * into independent planes (max-pool backward: plane = outputs per
     * channel, plane_rows = inputs per channel). indices i32 [N]. */
    wt_status (*scatter_add_rows)(wt_context *ctx, const wt_tensor *dy, const wt_tensor *indices,
                                  int64_t plane, int64_t plane_rows, wt_tensor *out);
    /* One in-place optimizer update (see wt_optimizer_update). */
    wt_status (*optimizer_step)(wt_context *ctx, const wt_optimizer_update *u);
    /* --- convolution and pooling (the geometry in wt_window2d) --- */
    /* col [C*KH*KW, n*rows*OW] contiguous = the windows of x [n, C, H, W]
     * (any strides) at output rows [row0, row0 + rows) of every image:
     * row (c*KH + ky)*KW + kx, column (i*rows + r)*OW + ox holds
     * x[i, c, (row0+r)*sh - pad_top + ky*dh, ox*sw - pad_left + kx*dw], 0
     * in the padding. */
    wt_status (*im2col)(wt_context *ctx, const wt_tensor *x, const wt_window2d *win, int64_t row0,
                        int64_t rows, wt_tensor *col);
    /* The adjoint of im2col, plus a bias: out [n, C, H, W] (any strides,
     * no two elements at one place; H, W = win->in_h, in_w) =
     * bias[c] (0 when NULL) + the sum of the col [C*KH*KW, n*OH*OW]
     * (contiguous; OH, OW = win->out_h, out_w) entries that im2col would
     * have taken from each position. */
    wt_status (*col2im)(wt_context *ctx, const wt_tensor *col, const wt_tensor *bias,
                        const wt_window2d *win, wt_tensor *out);
    /* out [N, C, OH, OW] contiguous = the pooled windows of x [N, C, H, W]
     * (any strides); indices (WT_I32, out's shape, contiguous) or NULL
     * receives the argmax of max pooling as y*W + x. */
    wt_status (*pool2d)(wt_context *ctx, const wt_pool2d_desc *desc, const wt_tensor *x,
                        wt_tensor *out, wt_tensor *indices);
    /* --- reductions, scans, random numbers --- */
    /* out (i32, contiguous) = the index of the first maximum (is_min:
     * minimum) of each output's reduced elements, row-major over the
     * reduced axes; a NaN counts as larger (smaller) than everything, the
     * first NaN wins. x (f32 or i32) as for reduce, at least one element. */
    wt_status (*argreduce)(wt_context *ctx, bool is_min, const wt_tensor *x, int nreduced,
                           wt_tensor *out);
    /* x and out contiguous, one shape, seen as [outer, n, inner]: out is
     * the inclusive scan of x along n (f32). */
    wt_status (*scan)(wt_context *ctx, wt_scan_op op, const wt_tensor *x, int64_t n,
                      int64_t inner, wt_tensor *out);
    /* out (f32, contiguous) from Philox (wt_random_args); x: dropout's
     * input (f32, contiguous, out's shape), else NULL. */
    wt_status (*random)(wt_context *ctx, const wt_random_args *r, const wt_tensor *x,
                        wt_tensor *out);

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
