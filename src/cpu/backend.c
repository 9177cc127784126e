/* CPU backend: the ops table, context state and host memory. */
#include "cpu/cpu.h"
#include "core/knobs.h"

#ifdef _OPENMP
#include <omp.h>
#endif
#include <stdlib.h>
#include <string.h>

static wt_status cpu_create(wt_context *ctx, const wt_context_options *opts) {
    cpu_state *st = calloc(1, sizeof *st);
    if (!st)
        return wt_fail(WT_ERR_OUT_OF_MEMORY, "cpu: cannot allocate %zu bytes of context state",
                       sizeof *st);
    /* The option, else WT_NUM_THREADS, else the library's choice, which
     * follows the load of the machine (cpu/threads.c). */
    int n = opts ? opts->num_threads : 0;
    if (n <= 0) {
        const uint64_t env = wt_knob_number(WT_KNOB_NUM_THREADS, 0);
        n = env <= 1024 ? (int)env : 0; /* the range of num_threads; outside it, the default */
    }
#ifdef _OPENMP
    st->auto_threads = n <= 0;
    if (n <= 0)
        n = omp_get_num_procs();
#else
    n = 1; /* a build without threads (WebAssembly) runs every op on one */
#endif
    st->num_threads = n > 0 ? n : 1;
    ctx->impl = st;
    cpu_blas_check();
    cpu_profile_create(ctx);
    return WT_OK;
}

static void cpu_destroy(wt_context *ctx) {
    cpu_profile_destroy(ctx);
    cpu_pool_trim(ctx);
    free(ctx->impl);
    ctx->impl = NULL;
}

static wt_status cpu_sync(wt_context *ctx) {
    (void)ctx;
    return WT_OK; /* CPU ops finish before they return */
}

static wt_status cpu_upload(wt_context *ctx, wt_storage *s, size_t offset, const void *src,
                            size_t bytes) {
    if (offset > s->bytes || bytes > s->bytes - offset)
        return wt_fail(WT_ERR_INVALID_ARGUMENT,
                       "cpu: upload of %zu bytes at offset %zu exceeds a storage of %zu bytes",
                       bytes, offset, s->bytes);
    if (bytes)
        memcpy((char *)s->host + offset, src, bytes);
    ctx->stats.bytes_to_device += bytes;
    return WT_OK;
}

static wt_status cpu_download(wt_context *ctx, wt_storage *s, size_t offset, void *dst,
                              size_t bytes) {
    if (offset > s->bytes || bytes > s->bytes - offset)
        return wt_fail(WT_ERR_INVALID_ARGUMENT,
                       "cpu: download of %zu bytes at offset %zu exceeds a storage of %zu bytes",
                       bytes, offset, s->bytes);
    if (bytes)
        memcpy(dst, (const char *)s->host + offset, bytes);
    ctx->stats.bytes_from_device += bytes;
    return WT_OK;
}

static void cpu_context_info(const wt_context *ctx, wt_context_info *out) {
    out->num_threads = cpu_threads(ctx);
    out->max_buffer_size = SIZE_MAX;
    out->max_binding_size = SIZE_MAX;
}

/* The CPU's one op entry: each node kind to its kernel. */
static wt_status cpu_run(wt_context *ctx, const wt_node *n)
{
    const wt_tensor *const *in = n->in;
    wt_tensor *const *out = n->out;
    switch (n->kind) {
    case WT_NODE_FILL: return cpu_fill_bits(ctx, out[0], n->p.bits);
    case WT_NODE_COPY: return cpu_copy(ctx, in[0], out[0]);
    case WT_NODE_CAST: return cpu_cast(ctx, in[0], out[0]);
    case WT_NODE_ELEMENTWISE: {
        wt_ew_args a = wt_node_ew_args(n);
        return cpu_elementwise(ctx, &a);
    }
    case WT_NODE_WHERE: return cpu_where(ctx, in[0], in[1], in[2], n->p.bits, out[0]);
    case WT_NODE_MATMUL: return cpu_matmul(ctx, in[0], in[1], out[0]);
    case WT_NODE_MATMUL_FUSED:
        /* The epilogue's operand (wt_matmul_epilogue): composed by the caller here. */
        if (in[3]) return wt_fail(WT_ERR_UNSUPPORTED, "matmul: no fused epilogue operand on the cpu backend");
        return cpu_matmul_fused(ctx, in[0], in[1], in[2], n->p.act, out[0]);
    case WT_NODE_REDUCE: {
        wt_reduce_args r = {.op = n->p.reduce.op, .shift = in[1], .n = n->p.reduce.n};
        return cpu_reduce(ctx, &r, in[0], n->p.reduce.nreduced, out[0]);
    }
    case WT_NODE_ROWWISE:
        return cpu_rowwise(ctx, n->p.row.op, in[0], in[1], in[2], n->p.row.eps, out[0]);
    case WT_NODE_ARGREDUCE:
        return cpu_argreduce(ctx, n->p.argreduce.is_min, in[0], n->p.argreduce.nreduced, out[0]);
    case WT_NODE_SCAN: return cpu_scan(ctx, n->p.scan.op, in[0], n->p.scan.n, n->p.scan.inner, out[0]);
    case WT_NODE_RANDOM: return cpu_random(ctx, &n->p.random, in[0], out[0]);
    case WT_NODE_REMAP: return cpu_remap(ctx, in[0], &n->p.remap, out[0]);
    case WT_NODE_COPY_INTO:
        if (in[1]) return cpu_copy_into_at(ctx, in[0], in[1], n->p.copy_at.stride, n->p.copy_at.limit, out[0]);
        return cpu_copy_into(ctx, in[0], out[0]);
    case WT_NODE_GATHER:
        return cpu_gather_index(ctx, in[0], n->p.index.axis, in[1], n->p.index.trusted, out[0]);
    case WT_NODE_SCATTER_ADD: return cpu_scatter_add(ctx, out[0], n->p.index.axis, in[0], in[1]);
    case WT_NODE_ARGSORT: return cpu_argsort_rows(ctx, in[0], n->p.sort.descending, n->p.sort.k, out[0]);
    case WT_NODE_IM2COL:
        return cpu_im2col(ctx, in[0], &n->p.window.win, n->p.window.row0, n->p.window.rows, out[0]);
    case WT_NODE_COL2IM: return cpu_col2im(ctx, in[0], in[1], &n->p.window.win, out[0]);
    case WT_NODE_CONV2D:
        return cpu_conv2d(ctx, in[0], in[1], in[2], &n->p.window.win, n->p.window.groups, out[0]);
    case WT_NODE_CHANNEL_NORM: return cpu_channel_norm(ctx, in[0], in[1], n->p.eps, out[0]);
    case WT_NODE_CHANNEL_MOMENTS: return cpu_channel_moments(ctx, in[0], out[0]);
    case WT_NODE_POOL2D: return cpu_pool2d(ctx, &n->p.pool, in[0], out[0], out[1]);
    case WT_NODE_SOFTMAX_AXIS: return cpu_softmax_axis(ctx, n->p.row.op, in[0], out[0]);
    case WT_NODE_ATTENTION: {
        wt_attention_args a = wt_node_attention_args(n);
        return cpu_attention(ctx, &a);
    }
    case WT_NODE_ATTENTION_BACKWARD:
        return cpu_attention_backward(ctx, in[0], in[1], in[2], in[3], in[5], n->p.attention.causal,
                                      n->p.attention.scale, out[0], out[1], out[2]);
    case WT_NODE_NORM_BACKWARD:
        return cpu_norm_backward(ctx, n->p.row.op, in[0], in[1], in[2], n->p.row.eps, out[0], out[1]);
    case WT_NODE_ROPE: return cpu_rope(ctx, in[0], in[1], n->p.rope.theta, n->p.rope.offset, out[0]);
    case WT_NODE_INTERPOLATE: return cpu_interpolate(ctx, &n->p.interp, false, in[0], out[0]);
    case WT_NODE_INTERPOLATE_BACKWARD: return cpu_interpolate(ctx, &n->p.interp, true, in[0], out[0]);
    case WT_NODE_ACT_BACKWARD: return cpu_act_backward(ctx, n->p.act_backward, in[0], in[1], out[0]);
    case WT_NODE_CROSS_ENTROPY:
        return cpu_cross_entropy(ctx, in[0], in[1], n->p.ignore, out[0], out[1]);
    case WT_NODE_CROSS_ENTROPY_BACKWARD:
        return cpu_cross_entropy_backward(ctx, in[0], in[1], n->p.ignore, in[2], out[0]);
    case WT_NODE_SCATTER_ADD_ROWS:
        return cpu_scatter_add_rows(ctx, in[0], in[1], n->p.rows.plane, n->p.rows.plane_rows, out[0]);
    case WT_NODE_OPTIMIZER_STEP: {
        wt_optimizer_update u = wt_node_optimizer_update(n);
        return cpu_optimizer_step(ctx, &u);
    }
    case WT_NODE_GRAD_CLIP_SCALE: return cpu_grad_clip_scale(ctx, in[0], n->p.clip.max_norm, out);
    case WT_NODE_GRAD_NORMS: {
        int count = 0;
        while (count < WT_NODE_MAX_IN && in[count]) count++;
        return cpu_grad_norms(ctx, count, in, out[0]);
    }
    case WT_NODE_SAMPLE:
        return cpu_sample(ctx, in[0], in[1], n->p.sample.inv_temp, n->p.sample.top_k, n->p.sample.top_p,
                          n->p.sample.seed, out[0]);
    case WT_NODE_DEQUANTIZE: return cpu_dequantize(ctx, n->p.quant.type, n->p.quant.k, in[0], out[0]);
    case WT_NODE_LINEAR_QUANT:
        /* The fused prologue and epilogue: wt_linear_quant_fused composes
         * the public ops here. */
        if (n->p.quant.rms_norm || n->p.quant.swiglu || in[4])
            return wt_fail(WT_ERR_UNSUPPORTED, "cpu linear_quant: no fused norm, swiglu or residual");
        return cpu_linear_quant(ctx, n->p.quant.type, n->p.quant.k, in[0], in[1], in[2], out[0]);
    case WT_NODE_ROPE_KV_CACHE:
        return cpu_rope_kv_cache(ctx, in[0], in[1], &n->p.rope_kv.freqs, n->p.rope_kv.offset, n->p.rope_kv.q_heads,
                                 out[0], out[1]);
    case WT_NODE_ROPE_KV_ATTENTION:
        return cpu_rope_kv_attention(ctx, in[0], in[1], in[2], &n->p.rope_kv.freqs, n->p.rope_kv.offset,
                                     n->p.rope_kv.q_heads, n->p.rope_kv.causal, n->p.rope_kv.scale, out[0], out[1]);
    case WT_NODE_LINEAR_FUSED:
        return cpu_linear_fused(ctx, in[0], in[1], in[2], in[3], in[4], n->p.linear.rms_norm, n->p.linear.swiglu,
                                n->p.linear.eps, out[0]);
    default:
        return wt_fail(WT_ERR_UNSUPPORTED, "%s: not available on the cpu backend", wt_node_label(n));
    }
}

/* Every kind but those the CPU leaves to the API's fallbacks
 * (conv_transpose2d: matmul + col2im) and custom WGSL kernels. */
#define CPU_RUNS                                                                          \
    ((WT_NODE_BIT(WT_NODE_KIND_COUNT) - 1) &                                              \
     ~(WT_NODE_BIT(WT_NODE_CONV_TRANSPOSE2D) | WT_NODE_BIT(WT_NODE_KERNEL_DISPATCH)))

const wt_backend_ops wt_cpu_backend = {
    .name = "cpu",
    .create = cpu_create,
    .destroy = cpu_destroy,
    .sync = cpu_sync,
    .storage_alloc = cpu_pool_alloc,
    .storage_free = cpu_pool_free,
    .upload = cpu_upload,
    .download = cpu_download,
    .run = cpu_run,
    .runs = CPU_RUNS,
    .attention_writes_lse = cpu_attention_writes_lse,
    .adapter_info = NULL,
    .trim = cpu_pool_trim,
    .context_info = cpu_context_info,
    /* --- runtime: per-op host time (cpu/profile.c) --- */
    .profile_begin = cpu_profile_begin,
    .profile_end = cpu_profile_end,
    .profile_summary = cpu_profile_summary,
};
