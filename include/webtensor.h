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
 *  - Thread safety: a context and the tensors made from it are used by one
 *    thread at a time. Different contexts may be used concurrently.
 *    wt_last_error() is per thread.
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

/* Element types (see "dtypes" below for storage, promotion and casts). */
typedef enum wt_dtype { WT_F32 = 0, WT_F16 = 1, WT_I32 = 2, WT_BOOL = 3 } wt_dtype;

typedef enum wt_backend {
    WT_BACKEND_AUTO = 0,   /* WebGPU if a real adapter exists, else CPU */
    WT_BACKEND_CPU = 1,
    WT_BACKEND_WEBGPU = 2  /* fails with WT_ERR_NO_DEVICE if there is none */
} wt_backend;

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

/* How a backend computes an op on inputs of a dtype (wt_op_support). */
typedef enum wt_support {
    WT_SUPPORT_NONE = 0,    /* refused (WT_ERR_UNSUPPORTED or WT_ERR_INVALID_ARGUMENT) */
    WT_SUPPORT_NATIVE = 1,  /* a kernel for that dtype */
    WT_SUPPORT_VIA_F32 = 2, /* inputs cast to f32, computed in f32 (result cast back
                               to f16 for an f16 op) */
    WT_SUPPORT_VIA_CAST = 3 /* inputs cast to another dtype first (e.g. logical ops
                               on numbers through bool; floor of i32 is a copy) */
} wt_support;

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
} wt_memory_stats;

WT_API wt_status wt_context_memory_stats(const wt_context *ctx, wt_memory_stats *out);
/* Frees the pooled (unused) memory of the context. */
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
} wt_adapter_info;

/* Lists every real WebGPU adapter (never Dawn's Null adapter). Writes up to
 * capacity entries and the total count. opts: NULL for defaults (only
 * gpu_api and webgpu_library are read). WT_ERR_NO_DEVICE if the WebGPU
 * library cannot be loaded; zero adapters is not an error. */
WT_API wt_status wt_list_adapters(const wt_context_options *opts, wt_adapter_info *infos,
                                  int capacity, int *count);
/* The adapter a WebGPU context runs on; WT_ERR_UNSUPPORTED for a CPU one. */
WT_API wt_status wt_context_adapter_info(const wt_context *ctx, wt_adapter_info *out);

/* --------------------------------------------------------------- tensors */

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
/* Copies the tensor's elements, row-major, into dst (views are gathered).
 * dst_bytes must be at least numel * wt_dtype_size(dtype) (WT_BOOL: one
 * byte per element, 0 or 1). Waits for the GPU. */
WT_API wt_status wt_tensor_read(const wt_tensor *t, void *dst, size_t dst_bytes);

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

/* ------------------------------------------------------------------- ops
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

/* ------------------------------------------------------------ elementwise
 * Broadcasting: NumPy's, for every operand (0-d tensors are scalars).
 * Promotion of two operands of different dtypes (NumPy-like, without
 * f64): bool < i32 < f16 < f32, and i32 with f16 gives f32 (f16 cannot
 * hold every i32; NumPy would give f64, PyTorch f16). A bool operand of
 * arithmetic counts as 0/1 of the other operand's dtype; arithmetic on two
 * bools is refused (WT_ERR_INVALID_ARGUMENT: use the logical ops).
 * Results are new contiguous tensors of the promoted dtype unless stated.
 *
 * dtypes, per op (see also wt_op_support):
 *  - float math (exp log sqrt sigmoid tanh reciprocal rsqrt sin cos exp2
 *    log2 log1p expm1 erf gelu gelu_tanh silu softplus mish hardsigmoid
 *    hardswish leaky_relu elu; div pow fmod atan2): f32, f16; i32 and
 *    bool inputs are computed in f32 and give f32 (NumPy's true
 *    division; pow of integers is not kept integral).
 *  - neg abs sign square relu clamp; add sub mul maximum minimum
 *    floor_divide remainder: f32, f16, i32 (i32 results); bool refused
 *    (unary) or promoted (binary, see above).
 *  - floor ceil round: f32, f16; i32 is returned unchanged; bool refused.
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
 * otherwise), as in C. */

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
