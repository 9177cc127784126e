/* CPU backend internals shared by its source files. */
#ifndef WT_CPU_H
#define WT_CPU_H

#include "core/internal.h"

/* Freed large blocks kept for reuse (pool.c): a fresh multi-megabyte
 * block costs a page fault per 4 KiB on first touch, often more than the
 * op that writes it. Blocks are matched by size class. */
#define CPU_POOL_SLOTS 16
typedef struct cpu_pool {
    void *block[CPU_POOL_SLOTS];
    size_t capacity[CPU_POOL_SLOTS];
    int count;   /* oldest first */
    size_t bytes;
} cpu_pool;

/* Per-context state of the CPU backend. */
typedef struct cpu_state {
    int num_threads; /* OpenMP threads for this context's parallel regions */
    cpu_pool pool;
} cpu_state;

/* Host memory of s->bytes, 64-byte aligned, from the pool when it has a
 * block of that size class. */
wt_status cpu_pool_alloc(wt_context *ctx, wt_storage *s);
void cpu_pool_free(wt_context *ctx, wt_storage *s);
/* Gives every pooled block back to the system. */
void cpu_pool_trim(wt_context *ctx);

static inline int cpu_threads(const wt_context *ctx) {
    return ((const cpu_state *)ctx->impl)->num_threads;
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

/* Rejects dtypes this backend does not compute. */
wt_status cpu_check_f32(const char *what, const wt_tensor *t);

wt_status cpu_fill(wt_context *ctx, wt_tensor *out, float value);
wt_status cpu_copy(wt_context *ctx, const wt_tensor *x, wt_tensor *out);
wt_status cpu_cast(wt_context *ctx, const wt_tensor *x, wt_tensor *out);
wt_status cpu_unary(wt_context *ctx, wt_unary_op op, const wt_tensor *x, wt_tensor *out);
wt_status cpu_binary(wt_context *ctx, wt_binary_op op, const wt_tensor *a, const wt_tensor *b,
                     wt_tensor *out);
wt_status cpu_matmul(wt_context *ctx, const wt_tensor *a, const wt_tensor *b, wt_tensor *out);
wt_status cpu_reduce(wt_context *ctx, wt_reduce_op op, const wt_tensor *x, int nreduced,
                     wt_tensor *out);

wt_status cpu_rowwise(wt_context *ctx, wt_rowwise_op op, const wt_tensor *x, const wt_tensor *weight,
                      const wt_tensor *bias, float eps, wt_tensor *out);

#endif /* WT_CPU_H */
