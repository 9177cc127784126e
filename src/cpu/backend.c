/* CPU backend: the ops table, context state and host memory. */
#include "cpu/cpu.h"

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
    int n = opts ? opts->num_threads : 0;
#ifdef _OPENMP
    if (n <= 0)
        n = omp_get_num_procs();
#else
    n = 1; /* a build without threads (WebAssembly) runs every op on one */
#endif
    st->num_threads = n > 0 ? n : 1;
    ctx->impl = st;
    return WT_OK;
}

static void cpu_destroy(wt_context *ctx) {
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
    out->num_threads = ((const cpu_state *)ctx->impl)->num_threads;
    out->max_buffer_size = SIZE_MAX;
    out->max_binding_size = SIZE_MAX;
}

const wt_backend_ops wt_cpu_backend = {
    .name = "cpu",
    .create = cpu_create,
    .destroy = cpu_destroy,
    .sync = cpu_sync,
    .storage_alloc = cpu_pool_alloc,
    .storage_free = cpu_pool_free,
    .upload = cpu_upload,
    .download = cpu_download,
    .fill_bits = cpu_fill_bits,
    .copy = cpu_copy,
    .cast = cpu_cast,
    .elementwise = cpu_elementwise,
    .where = cpu_where,
    .supports = cpu_supports,
    .matmul = cpu_matmul,
    .matmul_fused = cpu_matmul_fused,
    .reduce = cpu_reduce,
    .rowwise = cpu_rowwise,
    /* --- reductions, scans, random numbers --- */
    .argreduce = cpu_argreduce,
    .scan = cpu_scan,
    .random = cpu_random,
    /* --- data movement --- */
    .remap = cpu_remap,
    .copy_into = cpu_copy_into,
    .gather = cpu_gather_index,
    .scatter_add = cpu_scatter_add,
    .argsort_rows = cpu_argsort_rows,
    /* --- convolution and pooling --- */
    .im2col = cpu_im2col,
    .col2im = cpu_col2im,
    .pool2d = cpu_pool2d,
    .conv2d = cpu_conv2d,
    .channel_norm = cpu_channel_norm,
    .channel_moments = cpu_channel_moments,
    /* --- transformer ops --- */
    .softmax_axis = cpu_softmax_axis,
    .attention = cpu_attention,
    .rope = cpu_rope,
    /* --- training --- */
    .act_backward = cpu_act_backward,
    .cross_entropy = cpu_cross_entropy,
    .cross_entropy_backward = cpu_cross_entropy_backward,
    .scatter_add_rows = cpu_scatter_add_rows,
    .optimizer_step = cpu_optimizer_step,
    .adapter_info = NULL,
    .trim = cpu_pool_trim,
    .context_info = cpu_context_info,
};
