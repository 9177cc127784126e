/* CPU backend internals shared by its source files. */
#ifndef WT_CPU_H
#define WT_CPU_H

#include "core/internal.h"

/* Per-context state of the CPU backend. */
typedef struct cpu_state {
    int num_threads; /* OpenMP threads for this context's parallel regions */
} cpu_state;

static inline int cpu_threads(const wt_context *ctx) {
    return ((const cpu_state *)ctx->impl)->num_threads;
}

/* Element pointer of a tensor at its offset (f32 only in this backend). */
static inline float *cpu_data(const wt_tensor *t) {
    return (float *)t->storage->host + t->offset;
}

wt_status cpu_fill(wt_context *ctx, wt_tensor *out, float value);
wt_status cpu_copy(wt_context *ctx, const wt_tensor *x, wt_tensor *out);
wt_status cpu_unary(wt_context *ctx, wt_unary_op op, const wt_tensor *x, wt_tensor *out);
wt_status cpu_binary(wt_context *ctx, wt_binary_op op, const wt_tensor *a, const wt_tensor *b,
                     wt_tensor *out);
wt_status cpu_matmul(wt_context *ctx, const wt_tensor *a, const wt_tensor *b, wt_tensor *out);
wt_status cpu_reduce(wt_context *ctx, wt_reduce_op op, const wt_tensor *x, int nreduced,
                     wt_tensor *out);

#endif /* WT_CPU_H */
