/* Per-op profiling on the CPU backend: host time around each backend call
 * (CPU ops finish before they return), named by op ("add", "sum",
 * "matmul", "softmax" ...), in the summary and trace of core/profile.h.
 *
 * While a profile runs (or from creation under WT_TRACE) the context's
 * ops table is a copy of the CPU's whose op entries are timed wrappers;
 * otherwise the plain table runs and profiling costs nothing. A backend
 * op that calls another through ctx->ops counts once, as the outer op. */
#include "core/profile.h"
#include "cpu/cpu.h"

#include <pthread.h>
#include <stdio.h>

static const char *rowwise_name(wt_rowwise_op op)
{
    switch (op) {
    case WT_ROW_SOFTMAX: return "softmax";
    case WT_ROW_LAYERNORM: return "layer_norm";
    case WT_ROW_RMSNORM: return "rms_norm";
    case WT_ROW_LOG_SOFTMAX: return "log_softmax";
    default: return "rowwise";
    }
}

static const char *reduce_name(wt_reduce_op op)
{
    const wt_reduce_info *r = wt_reduce_info_of(op);
    return r ? r->name : "reduce";
}

static const char *ew_name(wt_op op)
{
    return (int)op >= 0 && op < WT_OP_COUNT && wt_op_table[op].name ? wt_op_table[op].name
                                                                    : "elementwise";
}

/* One wrapper per op entry: times the plain entry at the outermost level. */
#define TIMED(FIELD, NAME, PARAMS, ARGS)                                              \
    static wt_status timed_##FIELD PARAMS                                             \
    {                                                                                 \
        cpu_prof *p = &((cpu_state *)ctx->impl)->prof;                                \
        if (!p->active || p->depth)                                                   \
            return wt_cpu_backend.FIELD ARGS;                                         \
        p->depth++;                                                                   \
        double t0 = wt_now_us();                                                      \
        wt_status st = wt_cpu_backend.FIELD ARGS;                                     \
        double t1 = wt_now_us();                                                      \
        p->depth--;                                                                   \
        wt_prof_record(&p->log, NAME, t0, (uint64_t)((t1 - t0) * 1e3));               \
        return st;                                                                    \
    }

TIMED(fill_bits, "fill", (wt_context *ctx, wt_tensor *out, uint32_t bits), (ctx, out, bits))
TIMED(copy, "copy", (wt_context *ctx, const wt_tensor *x, wt_tensor *out), (ctx, x, out))
TIMED(cast, "cast", (wt_context *ctx, const wt_tensor *x, wt_tensor *out), (ctx, x, out))
TIMED(elementwise, ew_name(a->op), (wt_context *ctx, const wt_ew_args *a), (ctx, a))
TIMED(where, "where",
      (wt_context *ctx, const wt_tensor *m, const wt_tensor *a, const wt_tensor *b, uint32_t bits,
       wt_tensor *out),
      (ctx, m, a, b, bits, out))
TIMED(matmul, "matmul", (wt_context *ctx, const wt_tensor *a, const wt_tensor *b, wt_tensor *out),
      (ctx, a, b, out))
TIMED(matmul_fused, "matmul",
      (wt_context *ctx, const wt_tensor *a, const wt_tensor *b, const wt_tensor *bias,
       wt_matmul_act act, wt_tensor *out),
      (ctx, a, b, bias, act, out))
TIMED(reduce, reduce_name(r->op),
      (wt_context *ctx, const wt_reduce_args *r, const wt_tensor *x, int nreduced, wt_tensor *out),
      (ctx, r, x, nreduced, out))
TIMED(rowwise, rowwise_name(op),
      (wt_context *ctx, wt_rowwise_op op, const wt_tensor *x, const wt_tensor *w,
       const wt_tensor *b, float eps, wt_tensor *out),
      (ctx, op, x, w, b, eps, out))
TIMED(argreduce, is_min ? "argmin" : "argmax",
      (wt_context *ctx, bool is_min, const wt_tensor *x, int nreduced, wt_tensor *out),
      (ctx, is_min, x, nreduced, out))
TIMED(scan, op == WT_SCAN_SUM ? "cumsum" : "cumprod",
      (wt_context *ctx, wt_scan_op op, const wt_tensor *x, int64_t n, int64_t inner, wt_tensor *out),
      (ctx, op, x, n, inner, out))
TIMED(random, r->kind == WT_RANDOM_DROPOUT ? "dropout" : "random",
      (wt_context *ctx, const wt_random_args *r, const wt_tensor *x, wt_tensor *out),
      (ctx, r, x, out))
TIMED(remap, "remap", (wt_context *ctx, const wt_tensor *x, const wt_remap *r, wt_tensor *out),
      (ctx, x, r, out))
TIMED(copy_into, "copy_into", (wt_context *ctx, const wt_tensor *src, wt_tensor *dst), (ctx, src, dst))
TIMED(gather, "gather",
      (wt_context *ctx, const wt_tensor *x, int axis, const wt_tensor *index, bool trusted,
       wt_tensor *out),
      (ctx, x, axis, index, trusted, out))
TIMED(scatter_add, "scatter_add",
      (wt_context *ctx, wt_tensor *out, int axis, const wt_tensor *index, const wt_tensor *src),
      (ctx, out, axis, index, src))
TIMED(argsort_rows, "argsort",
      (wt_context *ctx, const wt_tensor *x, bool descending, int64_t k, wt_tensor *out),
      (ctx, x, descending, k, out))
TIMED(im2col, "im2col",
      (wt_context *ctx, const wt_tensor *x, const wt_window2d *win, int64_t row0, int64_t rows,
       wt_tensor *col),
      (ctx, x, win, row0, rows, col))
TIMED(col2im, "col2im",
      (wt_context *ctx, const wt_tensor *col, const wt_tensor *bias, const wt_window2d *win,
       wt_tensor *out),
      (ctx, col, bias, win, out))
TIMED(conv2d, "conv2d",
      (wt_context *ctx, const wt_tensor *x, const wt_tensor *w, const wt_tensor *bias,
       const wt_window2d *win, int64_t groups, wt_tensor *out),
      (ctx, x, w, bias, win, groups, out))
TIMED(channel_norm, "channel_norm",
      (wt_context *ctx, const wt_tensor *x, const wt_tensor *stats, float eps, wt_tensor *out),
      (ctx, x, stats, eps, out))
TIMED(channel_moments, "channel_moments", (wt_context *ctx, const wt_tensor *x, wt_tensor *out),
      (ctx, x, out))
TIMED(pool2d, "pool2d",
      (wt_context *ctx, const wt_pool2d_desc *d, const wt_tensor *x, wt_tensor *out,
       wt_tensor *indices),
      (ctx, d, x, out, indices))
TIMED(softmax_axis, rowwise_name(op),
      (wt_context *ctx, wt_rowwise_op op, const wt_tensor *x, wt_tensor *out), (ctx, op, x, out))
TIMED(attention, "attention", (wt_context *ctx, const wt_attention_args *a), (ctx, a))
TIMED(rope, "rope",
      (wt_context *ctx, const wt_tensor *x, double theta, int64_t offset, wt_tensor *out),
      (ctx, x, theta, offset, out))
TIMED(act_backward, "act_backward",
      (wt_context *ctx, wt_activation act, const wt_tensor *dy, const wt_tensor *x, wt_tensor *out),
      (ctx, act, dy, x, out))
TIMED(cross_entropy, "cross_entropy",
      (wt_context *ctx, const wt_tensor *logits, const wt_tensor *labels, int32_t ignore,
       wt_tensor *loss, wt_tensor *valid),
      (ctx, logits, labels, ignore, loss, valid))
TIMED(cross_entropy_backward, "cross_entropy_backward",
      (wt_context *ctx, const wt_tensor *logits, const wt_tensor *labels, int32_t ignore,
       const wt_tensor *scale, wt_tensor *out),
      (ctx, logits, labels, ignore, scale, out))
TIMED(scatter_add_rows, "scatter_add_rows",
      (wt_context *ctx, const wt_tensor *dy, const wt_tensor *indices, int64_t plane,
       int64_t plane_rows, wt_tensor *out),
      (ctx, dy, indices, plane, plane_rows, out))
TIMED(optimizer_step, u->kind == WT_OPT_SGD ? "sgd_step" : "adamw_step",
      (wt_context *ctx, const wt_optimizer_update *u), (ctx, u))

static wt_backend_ops timed_ops;
static pthread_once_t timed_once = PTHREAD_ONCE_INIT;

/* The CPU's table with every op entry it has timed. */
static void make_timed_ops(void)
{
    timed_ops = wt_cpu_backend;
#define USE(FIELD)                                                                    \
    if (timed_ops.FIELD)                                                              \
        timed_ops.FIELD = timed_##FIELD;
    USE(fill_bits) USE(copy) USE(cast) USE(elementwise) USE(where) USE(matmul)
    USE(matmul_fused) USE(reduce) USE(rowwise) USE(argreduce) USE(scan) USE(random)
    USE(remap) USE(copy_into) USE(gather) USE(scatter_add) USE(argsort_rows) USE(im2col)
    USE(col2im) USE(conv2d) USE(channel_norm) USE(channel_moments) USE(pool2d)
    USE(softmax_axis) USE(attention) USE(rope) USE(act_backward) USE(cross_entropy)
    USE(cross_entropy_backward) USE(scatter_add_rows) USE(optimizer_step)
#undef USE
}

static void set_timed(wt_context *ctx, bool on)
{
    pthread_once(&timed_once, make_timed_ops);
    ((cpu_state *)ctx->impl)->prof.active = on;
    ctx->ops = on ? &timed_ops : &wt_cpu_backend;
}

void cpu_profile_create(wt_context *ctx)
{
    if (wt_trace_path()) { /* WT_TRACE: profile from the start */
        ((cpu_state *)ctx->impl)->prof.log.trace = true;
        set_timed(ctx, true);
    }
}

void cpu_profile_destroy(wt_context *ctx)
{
    cpu_prof *p = &((cpu_state *)ctx->impl)->prof;
    char track[64];
    snprintf(track, sizeof track, "cpu (%d threads, host time)", cpu_threads(ctx));
    wt_prof_finish(&p->log, ctx, track, "cpu");
}

wt_status cpu_profile_begin(wt_context *ctx)
{
    wt_prof_reset(&((cpu_state *)ctx->impl)->prof.log);
    set_timed(ctx, true);
    return WT_OK;
}

wt_status cpu_profile_end(wt_context *ctx)
{
    cpu_prof *p = &((cpu_state *)ctx->impl)->prof;
    if (!p->active)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "wt_context_profile_end: no profile is running");
    set_timed(ctx, false);
    return WT_OK;
}

wt_status cpu_profile_summary(const wt_context *ctx, wt_profile_entry *out, int capacity, int *count,
                              bool *gpu_timed)
{
    const cpu_prof *p = &((const cpu_state *)ctx->impl)->prof;
    if (p->active)
        return wt_fail(WT_ERR_INVALID_ARGUMENT,
                       "wt_context_profile_summary: the profile still runs (end it first)");
    wt_prof_summary(&p->log, out, capacity, count);
    if (gpu_timed)
        *gpu_timed = false;
    return WT_OK;
}
