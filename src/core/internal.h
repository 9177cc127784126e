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
    wt_scope *scope;        /* the innermost open scope (core/scope.c); NULL: none */
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
    WT_ROW_SOFTMAX, WT_ROW_LAYERNORM, WT_ROW_RMSNORM,
    WT_ROW_LOG_SOFTMAX, /* transformer ops */
    WT_ROW_COUNT
} wt_rowwise_op;

/* --- reductions, scans, random numbers --- */

/* The reduction family, one row per op in core/reduce_ops.def. */
typedef enum wt_combine { WT_COMBINE_ADD, WT_COMBINE_MUL, WT_COMBINE_MAX, WT_COMBINE_MIN } wt_combine;
typedef enum wt_shift { WT_SHIFT_NONE, WT_SHIFT_MEAN, WT_SHIFT_MAX } wt_shift;
enum { WT_RD_FLOAT = 1, WT_RD_I32 = 2, WT_RD_BOOL = 4 };
/* --- transformer ops --- */
/* One attention call as the API layer hands it to a backend:
 * q [B, Hq, Sq, D], k [B, Hkv, Skv, D], v [B, Hkv, Skv, Dv], any strides;
 * Hkv divides Hq. mask: NULL or a [B, Hq, Sq, Skv] view (stride 0 on
 * broadcast axes) of f32 scores to add, or of 0/1 words when mask_is_bool
 * (nonzero: attend). out: [B, Hq, Sq, Dv] contiguous. Query i sees key j
 * only if j <= i + Skv - Sq when causal. scale is final (never 0). A row
 * without a visible key (all scores -inf) is written as 0s. */
typedef struct wt_attention_args {
    const wt_tensor *q, *k, *v, *mask;
    bool mask_is_bool, causal;
    float scale;
    wt_tensor *out;
} wt_attention_args;
/* --- matrix products --- */
/* The activation a matrix product's epilogue applies (wt_matmul_fused). */
typedef enum wt_matmul_act {
    WT_MATMUL_ACT_NONE, WT_MATMUL_ACT_RELU, WT_MATMUL_ACT_GELU, WT_MATMUL_ACT_GELU_TANH,
    WT_MATMUL_ACT_COUNT
} wt_matmul_act;

typedef enum wt_reduce_op {
#define WT_REDUCE_OP(ID, ...) WT_REDUCE_##ID,
#include "core/reduce_ops.def"
#undef WT_REDUCE_OP
    WT_REDUCE_COUNT
} wt_reduce_op;

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
/* --- data movement --- */
/* How a remap reads x for output position (o_0, ..., o_{ndim-1}): along
 * axis d the source index is j = start[d] + (flip[d] ? -o_d : o_d); a j
 * outside [0, x->shape[d]) is resolved by mode[d]: CONSTANT gives the
 * element fill_bits, REFLECT mirrors without repeating the edge (the caller
 * keeps j within one bounce), REPLICATE clamps, CIRCULAR wraps. Then, with
 * tri set, an element of the last two axes (row, col) with col - row > diag
 * (tri == WT_TRI_LOWER) or < diag (WT_TRI_UPPER) becomes fill_bits. Out has
 * x's ndim. This one map gives pad, flip, roll, tile/repeat, tril/triu. */
typedef enum wt_remap_mode {
    WT_REMAP_CONSTANT, WT_REMAP_REFLECT, WT_REMAP_REPLICATE, WT_REMAP_CIRCULAR
} wt_remap_mode;
typedef enum wt_tri_kind { WT_TRI_NONE, WT_TRI_LOWER, WT_TRI_UPPER } wt_tri_kind;
typedef struct wt_remap {
    int64_t start[WT_MAX_DIMS];
    bool flip[WT_MAX_DIMS];
    wt_remap_mode mode[WT_MAX_DIMS];
    uint32_t fill_bits; /* an element's bits (low 16 for 2-byte dtypes) */
    wt_tri_kind tri;
    int64_t diag;
} wt_remap;

/* The order sort/topk use, as an unsigned key of an element's bits:
 * floats by value with -0 == +0 and every NaN above +inf (equal to each
 * other), i32 by value, bool false < true. */
static inline uint32_t wt_sort_key(wt_dtype dtype, uint32_t bits)
{
    if (dtype == WT_F16) {
        uint32_t h = bits & 0xffffu;
        if ((h & 0x7fffu) > 0x7c00u) return 0xffffffffu; /* NaN */
        if ((h & 0x7fffu) == 0) return 0x80000000u;      /* -0 as +0 */
        uint32_t k = (h & 0x8000u) ? (~h & 0xffffu) : (h | 0x8000u);
        return k << 16;
    }
    if (dtype == WT_F32) {
        if ((bits & 0x7fffffffu) > 0x7f800000u) return 0xffffffffu;
        if ((bits & 0x7fffffffu) == 0) return 0x80000000u;
        return (bits & 0x80000000u) ? ~bits : (bits | 0x80000000u);
    }
    return (dtype == WT_I32) ? bits ^ 0x80000000u : bits;
}
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

    /* --- reductions, scans, random numbers --- */
    /* out (i32, contiguous) = the index of the first maximum (is_min:
     * minimum) of each output's reduced elements, row-major over the
     * reduced axes; a NaN counts as larger (smaller) than everything, the
     * first NaN wins. x (f32 or i32) as for reduce, at least one element. */
    wt_status (*argreduce)(wt_context *ctx, bool is_min, const wt_tensor *x, int nreduced,
                           wt_tensor *out);
    /* x and out contiguous, one shape and dtype (f32, or i32: wrapping),
     * seen as [outer, n, inner]: out is the inclusive scan of x along n. */
    wt_status (*scan)(wt_context *ctx, wt_scan_op op, const wt_tensor *x, int64_t n,
                      int64_t inner, wt_tensor *out);
    /* out (f32, contiguous) from Philox (wt_random_args); x: dropout's
     * input (f32, contiguous, out's shape), else NULL. */
    wt_status (*random)(wt_context *ctx, const wt_random_args *r, const wt_tensor *x,
                        wt_tensor *out);
    /* --- data movement (src/api/movement*.c). Elements are moved as bit
     * patterns of 2 or 4 bytes, so these serve every dtype. Optional (NULL:
     * WT_ERR_UNSUPPORTED). --- */
    /* out (contiguous) = x read through r (see wt_remap). */
    wt_status (*remap)(wt_context *ctx, const wt_tensor *x, const wt_remap *r, wt_tensor *out);
    /* dst (any view without repeated elements) = src, which has dst's shape
     * (broadcast axes have stride 0) and dtype and does not overlap dst. */
    wt_status (*copy_into)(wt_context *ctx, const wt_tensor *src, wt_tensor *dst);
    /* out (contiguous, index's shape) = x[..., index[i], ...] along axis
     * (torch.gather): index is i32 of x's ndim; on the other axes position
     * i of index reads position i of x (x's extent >= index's). An index
     * outside [0, x->shape[axis]) fails with WT_ERR_INVALID_ARGUMENT and
     * nothing is read or written out of bounds. trusted: the library made
     * the indices (sort), so a GPU need not read its flag back. */
    wt_status (*gather)(wt_context *ctx, const wt_tensor *x, int axis, const wt_tensor *index,
                        bool trusted, wt_tensor *out);
    /* out (contiguous, holding the values to add to) [..., index[i], ...]
     * += src[i] along axis; index and src have one shape (src may be a
     * broadcast view); out's dtype is f32, f16 or i32. Errors as gather. */
    wt_status (*scatter_add)(wt_context *ctx, wt_tensor *out, int axis, const wt_tensor *index,
                             const wt_tensor *src);
    /* For each row of x along its last axis (any ndim >= 1, any strides;
     * the last extent n > 0), the positions of its k first elements in
     * ascending order (descending: reversed order) of wt_sort_key, ties by
     * position, as i32 into out (contiguous, x's shape with k last). */
    wt_status (*argsort_rows)(wt_context *ctx, const wt_tensor *x, bool descending, int64_t k,
                              wt_tensor *out);
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
    /* Optional (NULL or WT_ERR_UNSUPPORTED: the API runs im2col + matmul +
     * col2im): out [N, O, OH, OW] contiguous = the convolution of x
     * [N, C, H, W] (any strides) with w [O, C/groups, KH, KW] and bias [O]
     * (both contiguous; bias may be NULL). A backend takes the shapes its
     * own kernel serves best and refuses the others. */
    wt_status (*conv2d)(wt_context *ctx, const wt_tensor *x, const wt_tensor *w,
                        const wt_tensor *bias, const wt_window2d *win, int64_t groups,
                        wt_tensor *out);
    /* --- convolution: the transposed one as a product of its own --- */
    /* Optional, like conv2d (NULL or WT_ERR_UNSUPPORTED: matmul + col2im):
     * out [N, O, H, W] contiguous = the transposed convolution of x [N, C,
     * OH, OW] (any strides) with w [C, O/groups, KH, KW] and bias [O] (both
     * contiguous; bias may be NULL): the adjoint of the conv2d of window
     * win (H, W = win->in_h, in_w; OH, OW = win->out_h, out_w). */
    wt_status (*conv_transpose2d)(wt_context *ctx, const wt_tensor *x, const wt_tensor *w,
                                  const wt_tensor *bias, const wt_window2d *win, int64_t groups,
                                  wt_tensor *out);
    /* The per-channel map that ends batch and group norm: out [N, C, S]
     * contiguous = (x[n, c, s] - mean[c]) / sqrt(var[c] + eps) * weight[c]
     * + bias[c], x [N, C, S] any strides, stats [4, C] contiguous (rows
     * mean, var, weight, bias). */
    wt_status (*channel_norm)(wt_context *ctx, const wt_tensor *x, const wt_tensor *stats,
                              float eps, wt_tensor *out);
    /* out [2, C] contiguous = the mean (row 0) and biased variance (row 1)
     * of each channel of x [N, C, S] (any strides; N*S > 0), the variance
     * from squared deviations (two passes over x). */
    wt_status (*channel_moments)(wt_context *ctx, const wt_tensor *x, wt_tensor *out);
    /* out [N, C, OH, OW] contiguous = the pooled windows of x [N, C, H, W]
     * (any strides); indices (WT_I32, out's shape, contiguous) or NULL
     * receives the argmax of max pooling as y*W + x. */
    wt_status (*pool2d)(wt_context *ctx, const wt_pool2d_desc *desc, const wt_tensor *x,
                        wt_tensor *out, wt_tensor *indices);
    /* --- transformer ops --- */
    /* Softmax or log-softmax (WT_ROW_SOFTMAX / WT_ROW_LOG_SOFTMAX) along
     * axis 1 of x [O, C, I] (any strides, C > 0) into out [O, C, I]
     * contiguous at offset 0. (The API sends I == 1 to rowwise.) */
    wt_status (*softmax_axis)(wt_context *ctx, wt_rowwise_op op, const wt_tensor *x, wt_tensor *out);
    wt_status (*attention)(wt_context *ctx, const wt_attention_args *a);
    /* Rotary embedding of x [A, S, C, D] (any strides, D even) into out of
     * the same shape, contiguous; sequence index s has position offset + s
     * (see wt_rope). */
    wt_status (*rope)(wt_context *ctx, const wt_tensor *x, double theta, int64_t offset,
                      wt_tensor *out);
    /* --- matrix products --- */
    /* Optional (NULL: the API adds the bias and applies act with its own
     * ops): out = act(a @ b + bias), shapes as for matmul; bias NULL or a
     * [N] view. a, b, bias and out share one dtype; WT_ERR_UNSUPPORTED
     * (a dtype, a layout) sends the API to the f32 path. */
    wt_status (*matmul_fused)(wt_context *ctx, const wt_tensor *a, const wt_tensor *b,
                              const wt_tensor *bias, wt_matmul_act act, wt_tensor *out);

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
    wt_status (*kernel_dispatch)(wt_context *ctx, const wt_kernel *k, wt_tensor *const *tensors,
                                 const void *params, const uint32_t groups[3]);
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

#endif /* WT_INTERNAL_H */
