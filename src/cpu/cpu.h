/* CPU backend internals shared by its source files. */
#ifndef WT_CPU_H
#define WT_CPU_H

#include "core/internal.h"
#include "core/profile.h"

/* Freed large blocks kept for reuse (pool.c): a fresh multi-megabyte
 * block costs a page fault per 4 KiB on first touch, often more than the
 * op that writes it. Blocks are matched by size class. */
#define CPU_POOL_SLOTS 16
/* Small blocks (a few KiB: the outputs of small ops) are kept apart, so
 * that a run of small ops reuses them without evicting the large ones:
 * an aligned malloc and free cost as much as an add of a thousand floats. */
#define CPU_POOL_SMALL_SLOTS 8
typedef struct cpu_pool {
    void *block[CPU_POOL_SLOTS];
    size_t capacity[CPU_POOL_SLOTS];
    int count;   /* oldest first */
    size_t bytes;
    void *small_block[CPU_POOL_SMALL_SLOTS];
    size_t small_capacity[CPU_POOL_SMALL_SLOTS];
    int small_count; /* oldest first */
    size_t small_bytes;
} cpu_pool;

/* Per-context state of the CPU backend. */
/* --- runtime: per-op profiling (cpu/profile.c) --- */
typedef struct cpu_prof {
    bool active; /* wt_node_run times every node */
    wt_prof_log log;
} cpu_prof;

typedef struct cpu_state {
    int num_threads; /* OpenMP threads for this context's parallel regions */
    bool auto_threads; /* num_threads left to the library: cpu_auto_threads */
    cpu_pool pool;
    cpu_prof prof;
} cpu_state;

void cpu_profile_create(wt_context *ctx);  /* WT_TRACE: profiles from the start */
void cpu_profile_destroy(wt_context *ctx); /* writes the trace's events */
wt_status cpu_profile_begin(wt_context *ctx);
wt_status cpu_profile_end(wt_context *ctx);
wt_status cpu_profile_summary(const wt_context *ctx, wt_profile_entry *out, int capacity, int *count,
                              bool *gpu_timed);

/* Host memory of s->bytes, 64-byte aligned, from the pool when it has a
 * block of that size class. */
wt_status cpu_pool_alloc(wt_context *ctx, wt_storage *s);
void cpu_pool_free(wt_context *ctx, wt_storage *s);
/* Gives every pooled block back to the system. */
void cpu_pool_trim(wt_context *ctx);

/* The cores other processes leave free, at least 1 (cpu/threads.c). */
int cpu_auto_threads(void);
/* OpenBLAS's thread count for the products that follow. */
void cpu_blas_threads(int n);
/* Warns once when OpenBLAS runs kernels far older than the CPU (cpu/blas_check.c). */
void cpu_blas_check(void);

static inline int cpu_threads(const wt_context *ctx) {
    const cpu_state *st = (const cpu_state *)ctx->impl;
    return st->auto_threads ? cpu_auto_threads() : st->num_threads;
}

/* Threads for host work of any context (the API's load-time steps): a
 * CPU context's own count, else the free cores. */
static inline int cpu_host_threads(const wt_context *ctx) {
    return ctx && ctx->kind == WT_BACKEND_CPU ? cpu_threads(ctx) : cpu_auto_threads();
}

/* Element pointer of a tensor at its offset (f32 only in this backend). */
static inline float *cpu_data(const wt_tensor *t) {
    return (float *)t->storage->host + t->offset;
}

/* Below this many elements a parallel region costs more than it saves. */
#define CPU_PARALLEL_MIN 32768

/* Function multiversioning: the hot loops are compiled for AVX-512, AVX2
 * and baseline x86-64 and the loader picks the best for the running CPU,
 * so the library stays portable while using the wide vectors it finds. */
/* Not under ThreadSanitizer: the loader runs the clones' resolvers while
 * relocating the library, before the sanitizer's runtime is set up, and
 * an instrumented resolver crashes there. */
#if defined(__x86_64__) && defined(__linux__) && defined(__GNUC__) && !defined(__clang__) && \
    !defined(__SANITIZE_THREAD__)
#define CPU_MULTIVERSION \
    __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define CPU_MULTIVERSION
#endif

/* A strided view walked in row-major order: shape, strides (elements). */
typedef struct cpu_layout {
    int ndim;
    int64_t shape[WT_MAX_DIMS];
    int64_t strides[WT_MAX_DIMS];
} cpu_layout;

static inline int64_t cpu_layout_numel(const cpu_layout *l) {
    int64_t n = 1;
    for (int d = 0; d < l->ndim; d++)
        n *= l->shape[d];
    return n;
}

/* Copies elements [start, start + len) (row-major positions of l's shape)
 * of the view at base into dst, contiguous. */
void cpu_gather(const float *base, const cpu_layout *l, int64_t start, int64_t len,
                float *dst);

/* --- f16 elementwise lanes --- */
/* The same, from f16 data, each element widened to f32 (strided.c). */
void cpu_gather_f16(const uint16_t *base, const cpu_layout *l, int64_t start, int64_t len, float *dst);
/* Converts n elements between the dtypes of wt_cast, the input stepping by
 * step elements, into dst, contiguous (cast.c). */
void cpu_cast_run(wt_dtype from, wt_dtype to, const void *src, int64_t step, void *dst, int64_t n);

/* Rejects dtypes this backend does not compute. */
wt_status cpu_check_f32(const char *what, const wt_tensor *t);

/* out (4-byte dtype) = bits everywhere; cpu_fill is its f32 form. */
wt_status cpu_fill_bits(wt_context *ctx, wt_tensor *out, uint32_t bits);
wt_status cpu_fill(wt_context *ctx, wt_tensor *out, float value);
wt_status cpu_copy(wt_context *ctx, const wt_tensor *x, wt_tensor *out);
wt_status cpu_cast(wt_context *ctx, const wt_tensor *x, wt_tensor *out);
wt_status cpu_elementwise(wt_context *ctx, const wt_ew_args *args);
wt_status cpu_where(wt_context *ctx, const wt_tensor *mask, const wt_tensor *a, const wt_tensor *b,
                    uint32_t a_bits, wt_tensor *out);
wt_status cpu_matmul(wt_context *ctx, const wt_tensor *a, const wt_tensor *b, wt_tensor *out);
wt_status cpu_matmul_fused(wt_context *ctx, const wt_tensor *a, const wt_tensor *b,
                           const wt_tensor *bias, wt_matmul_act act, wt_tensor *out);
wt_status cpu_reduce(wt_context *ctx, const wt_reduce_args *r, const wt_tensor *x, int nreduced,
                     wt_tensor *out);

/* --- reductions, scans, random numbers --- */
/* The kept and reduced axes of a reduction (x: kept first), each group
 * merged where it can be walked as one (reduce.c). */
void cpu_reduce_layouts(const wt_tensor *x, const wt_tensor *out, int nreduced, cpu_layout *kept,
                        cpu_layout *red);
/* Offset in x of kept position p (row-major over kept's shape). */
static inline int64_t cpu_kept_offset(const cpu_layout *kept, int64_t p)
{
    int64_t off = 0;
    for (int d = kept->ndim - 1; d >= 0; d--) {
        off += (p % kept->shape[d]) * kept->strides[d];
        p /= kept->shape[d];
    }
    return off;
}
/* Any row of core/reduce_ops.def, any dtype it accepts (reduce_table.c). */
wt_status cpu_reduce_table(wt_context *ctx, const wt_reduce_args *r, const wt_tensor *x,
                           int nreduced, wt_tensor *out);
wt_status cpu_argreduce(wt_context *ctx, bool is_min, const wt_tensor *x, int nreduced,
                        wt_tensor *out);
wt_status cpu_scan(wt_context *ctx, wt_scan_op op, const wt_tensor *x, int64_t n, int64_t inner,
                   wt_tensor *out);
wt_status cpu_random(wt_context *ctx, const wt_random_args *r, const wt_tensor *x, wt_tensor *out);

wt_status cpu_rowwise(wt_context *ctx, wt_rowwise_op op, const wt_tensor *x, const wt_tensor *weight,
                      const wt_tensor *bias, float eps, wt_tensor *out);

/* --- data movement (movement.c) --- */
wt_status cpu_remap(wt_context *ctx, const wt_tensor *x, const wt_remap *r, wt_tensor *out);
wt_status cpu_copy_into(wt_context *ctx, const wt_tensor *src, wt_tensor *dst);
/* cpu_copy_into with dst moved by min(max(*start, 0), limit) * stride elements. */
wt_status cpu_copy_into_at(wt_context *ctx, const wt_tensor *src, const wt_tensor *start, int64_t stride, int64_t limit,
                           wt_tensor *dst);
wt_status cpu_gather_index(wt_context *ctx, const wt_tensor *x, int axis, const wt_tensor *index, bool trusted,
                     wt_tensor *out);
wt_status cpu_scatter_add(wt_context *ctx, wt_tensor *out, int axis, const wt_tensor *index,
                          const wt_tensor *src);
wt_status cpu_argsort_rows(wt_context *ctx, const wt_tensor *x, bool descending, int64_t k,
                           wt_tensor *out);
/* --- convolution and pooling --- */
wt_status cpu_im2col(wt_context *ctx, const wt_tensor *x, const wt_window2d *win, int64_t row0,
                     int64_t rows, wt_tensor *col);
wt_status cpu_col2im(wt_context *ctx, const wt_tensor *col, const wt_tensor *bias,
                     const wt_window2d *win, wt_tensor *out);
wt_status cpu_pool2d(wt_context *ctx, const wt_pool2d_desc *desc, const wt_tensor *x,
                     wt_tensor *out, wt_tensor *indices);
wt_status cpu_conv2d(wt_context *ctx, const wt_tensor *x, const wt_tensor *w, const wt_tensor *bias,
                     const wt_window2d *win, int64_t groups, wt_tensor *out);
wt_status cpu_channel_norm(wt_context *ctx, const wt_tensor *x, const wt_tensor *stats, float eps,
                           wt_tensor *out);
wt_status cpu_channel_moments(wt_context *ctx, const wt_tensor *x, wt_tensor *out);
/* SAMPLE (core/node.h; cpu/sample.c). */
wt_status cpu_sample(wt_context *ctx, const wt_tensor *logits, const wt_tensor *step, float inv_temp, int64_t top_k,
                     float top_p, uint64_t seed, wt_tensor *out);
/* DEQUANTIZE and LINEAR_QUANT (core/node.h; cpu/quant.c). */
wt_status cpu_dequantize(wt_context *ctx, wt_quant_type type, int64_t k, const wt_tensor *w, wt_tensor *out);
/* node ROPE_KV_CACHE (core/node.h). */
wt_status cpu_rope_kv_cache(wt_context *ctx, const wt_tensor *qkv, const wt_tensor *position,
                            const wt_rope_freqs *freqs, int64_t offset, int64_t q_heads, wt_tensor *q,
                            wt_tensor *cache);
/* node ROPE_KV_ATTENTION (core/node.h): the two kernels above and below in turn. */
wt_status cpu_rope_kv_attention(wt_context *ctx, const wt_tensor *qkv, const wt_tensor *position,
                                const wt_tensor *kv_length, const wt_rope_freqs *freqs, int64_t offset,
                                int64_t q_heads, bool causal, float scale, wt_tensor *out, wt_tensor *cache);
/* node LINEAR_FUSED (core/node.h): f32 or f16 operands of one dtype. */
wt_status cpu_linear_fused(wt_context *ctx, const wt_tensor *x, const wt_tensor *w, const wt_tensor *bias,
                           const wt_tensor *norm_weight, const wt_tensor *residual, bool rms_norm, bool swiglu,
                           float eps, wt_tensor *out);
wt_status cpu_linear_quant(wt_context *ctx, wt_quant_type type, int64_t k, const wt_tensor *x, const wt_tensor *w,
                           const wt_tensor *bias, wt_tensor *out);
/* INTERPOLATE (src x, out the result) and its backward (src dy, out dx). */
wt_status cpu_interpolate(wt_context *ctx, const wt_interp2d *p, bool backward, const wt_tensor *src,
                          wt_tensor *out);
/* --- transformer ops --- */
wt_status cpu_attention(wt_context *ctx, const wt_attention_args *a);
/* wt_backend_ops.attention_writes_lse: both loops write it, without a mask
 * or kv_length. */
bool cpu_attention_writes_lse(wt_context *ctx, const wt_attention_args *a);
/* WT_NODE_ATTENTION_BACKWARD (core/node.h); lse: NULL or the forward's. */
wt_status cpu_attention_backward(wt_context *ctx, const wt_tensor *q, const wt_tensor *k, const wt_tensor *v,
                                 const wt_tensor *dout, const wt_tensor *lse, bool causal, float scale,
                                 wt_tensor *dq, wt_tensor *dk, wt_tensor *dv);
/* WT_NODE_NORM_BACKWARD (core/node.h), rowwise.c. */
wt_status cpu_norm_backward(wt_context *ctx, wt_rowwise_op op, const wt_tensor *dy, const wt_tensor *x,
                            const wt_tensor *weight, float eps, wt_tensor *dx, wt_tensor *gxhat);
wt_status cpu_softmax_axis(wt_context *ctx, wt_rowwise_op op, const wt_tensor *x, wt_tensor *out);
wt_status cpu_rope(wt_context *ctx, const wt_tensor *x, const wt_tensor *position, double theta, int64_t offset, wt_tensor *out);

/* --- training --- (train.c) */
wt_status cpu_act_backward(wt_context *ctx, wt_activation act, const wt_tensor *dy, const wt_tensor *x,
                           wt_tensor *out);
wt_status cpu_cross_entropy(wt_context *ctx, const wt_tensor *logits, const wt_tensor *labels, int32_t ignore,
                            wt_tensor *loss, wt_tensor *valid);
wt_status cpu_cross_entropy_backward(wt_context *ctx, const wt_tensor *logits, const wt_tensor *labels,
                                     int32_t ignore, const wt_tensor *scale, wt_tensor *out);
wt_status cpu_scatter_add_rows(wt_context *ctx, const wt_tensor *dy, const wt_tensor *indices, int64_t plane,
                               int64_t plane_rows, wt_tensor *out);
wt_status cpu_optimizer_step(wt_context *ctx, const wt_optimizer_update *u);
wt_status cpu_grad_clip_scale(wt_context *ctx, const wt_tensor *norm, double max_norm, wt_tensor *const g[3]);
wt_status cpu_grad_norms(wt_context *ctx, int count, const wt_tensor *const x[6], wt_tensor *out);

#endif /* WT_CPU_H */
