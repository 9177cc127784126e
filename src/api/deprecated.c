/* The deprecated names of include/webtensor.h (its section 16): each one a
 * thin exported function over its replacement, so that callers compiled
 * against earlier versions, and bindings that look symbols up by name,
 * keep working for one release. Errors name the replacement, which did
 * the work. wt_context_last_error lives beside the context (core). */
#include "api/api.h"

wt_status wt_arange(wt_context *ctx, double start, double stop, double step, wt_dtype dtype, wt_tensor **out)
{
    return wt_tensor_arange(ctx, dtype, start, stop, step, out);
}

wt_status wt_linspace(wt_context *ctx, double start, double stop, int64_t num, bool endpoint, wt_dtype dtype,
                      wt_tensor **out)
{
    return wt_tensor_linspace(ctx, dtype, start, stop, num, endpoint, out);
}

wt_status wt_eye(wt_context *ctx, int64_t n, int64_t m, int64_t k, wt_dtype dtype, wt_tensor **out)
{
    return wt_tensor_eye(ctx, dtype, n, m, k, out);
}

wt_status wt_rand(wt_context *ctx, wt_dtype dtype, int ndim, const int64_t *shape, uint64_t seed, wt_tensor **out)
{
    return wt_tensor_rand(ctx, dtype, ndim, shape, seed, out);
}

wt_status wt_randn(wt_context *ctx, wt_dtype dtype, int ndim, const int64_t *shape, uint64_t seed, wt_tensor **out)
{
    return wt_tensor_randn(ctx, dtype, ndim, shape, seed, out);
}

wt_status wt_dropout(const wt_tensor *x, float p, uint64_t seed, wt_tensor **out)
{
    wt_dropout_options o;
    wt_dropout_options_init(&o);
    o.p = p;
    o.seed = seed;
    return wt_dropout_v2(x, &o, out);
}

wt_status wt_topk(const wt_tensor *x, int64_t k, bool largest, wt_tensor **values, wt_tensor **indices)
{
    return wt_topk_v2(x, k, -1, largest, values, indices);
}

wt_status wt_layernorm(const wt_tensor *x, const wt_tensor *weight, const wt_tensor *bias, float eps,
                       wt_tensor **out)
{
    return wt_layer_norm(x, 1, weight, bias, eps, out);
}

wt_status wt_rmsnorm(const wt_tensor *x, const wt_tensor *weight, float eps, wt_tensor **out)
{
    return wt_rms_norm(x, 1, weight, eps, out);
}

wt_status wt_group_norm(const wt_tensor *x, int64_t num_groups, const wt_tensor *weight, const wt_tensor *bias,
                        float eps, wt_tensor **out)
{
    wt_group_norm_options o;
    wt_group_norm_options_init(&o);
    o.eps = eps;
    return wt_group_norm_v2(x, num_groups, weight, bias, &o, out);
}

wt_status wt_scaled_dot_product_attention(const wt_tensor *q, const wt_tensor *k, const wt_tensor *v,
                                          const wt_tensor *mask, bool causal, float scale, wt_tensor **out)
{
    wt_attention_options o;
    wt_attention_options_init(&o);
    o.causal = causal;
    o.scale = scale;
    return wt_scaled_dot_product_attention_v2(q, k, v, mask, &o, out);
}

wt_status wt_rope(const wt_tensor *x, double theta, int64_t offset, wt_rope_layout layout, wt_tensor **out)
{
    wt_rope_options o;
    wt_rope_options_init(&o);
    o.theta = theta;
    o.offset = offset;
    o.layout = layout;
    return wt_rope_v2(x, &o, out);
}

wt_status wt_activation_backward(wt_activation act, const wt_tensor *dy, const wt_tensor *x, wt_tensor **dx)
{
    switch (act) {
    case WT_ACT_RELU: return wt_relu_backward(dy, x, dx);
    case WT_ACT_SIGMOID: return wt_sigmoid_backward(dy, x, dx);
    case WT_ACT_TANH: return wt_tanh_backward(dy, x, dx);
    case WT_ACT_SILU: return wt_silu_backward(dy, x, dx);
    case WT_ACT_GELU: return wt_gelu_backward(dy, x, dx);
    case WT_ACT_GELU_TANH: return wt_gelu_tanh_backward(dy, x, dx);
    }
    wt_status st = wt_check_out("wt_activation_backward", dx);
    if (st != WT_OK) return st;
    return wt_fail(WT_ERR_INVALID_ARGUMENT, "wt_activation_backward: unknown activation %d", (int)act);
}

wt_status wt_cross_entropy_backward(const wt_tensor *logits, const wt_tensor *labels, const wt_tensor *dloss,
                                    const wt_cross_entropy_options *opts, wt_tensor **dlogits)
{
    return wt_cross_entropy_backward_v2(dloss, logits, labels, opts, dlogits);
}

wt_status wt_layernorm_backward(const wt_tensor *x, const wt_tensor *weight, const wt_tensor *dy, float eps,
                                wt_tensor **dx, wt_tensor **dweight, wt_tensor **dbias)
{
    return wt_layer_norm_backward(dy, x, 1, weight, eps, dx, dweight, dbias);
}

wt_status wt_batch_norm_backward(const wt_tensor *x, const wt_tensor *weight, const wt_tensor *running_mean,
                                 const wt_tensor *running_var, bool training, float eps, const wt_tensor *dy,
                                 wt_tensor **dx, wt_tensor **dweight, wt_tensor **dbias)
{
    wt_batch_norm_options o;
    wt_batch_norm_options_init(&o);
    o.training = training;
    o.eps = eps;
    return wt_batch_norm_backward_v2(dy, x, running_mean, running_var, weight, &o, dx, dweight, dbias);
}

wt_status wt_conv2d_backward(const wt_tensor *x, const wt_tensor *w, const wt_tensor *dy, const wt_conv_options *opts,
                             wt_tensor **dx, wt_tensor **dw, wt_tensor **dbias)
{
    return wt_conv2d_backward_v2(dy, x, w, opts, dx, dw, dbias);
}

/* wt_pool_options (padding (h, w) on both sides) as wt_pool2d_options. */
static wt_status pool2d_of(const char *fn, const wt_pool_options *in, wt_pool2d_options *out)
{
    wt_pool2d_options_init(out);
    if (!in) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: options are NULL (the kernel size is needed)", fn);
    if (in->struct_size != sizeof *in)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: options struct_size %u is not valid (call wt_pool_options_init)",
                       fn, (unsigned)in->struct_size);
    for (int a = 0; a < 2; a++) {
        out->kernel[a] = in->kernel[a];
        out->stride[a] = in->stride[a];
        out->padding[2 * a] = out->padding[2 * a + 1] = in->padding[a];
        out->dilation[a] = in->dilation[a];
    }
    out->ceil_mode = in->ceil_mode;
    out->count_include_pad = in->count_include_pad;
    out->divisor_override = in->divisor_override;
    return WT_OK;
}

wt_status wt_max_pool2d(const wt_tensor *x, const wt_pool_options *opts, wt_tensor **out, wt_tensor **indices)
{
    if (indices) *indices = NULL;
    wt_status st = wt_check_out("wt_max_pool2d", out);
    wt_pool2d_options o;
    if (st == WT_OK) st = pool2d_of("wt_max_pool2d", opts, &o);
    return st != WT_OK ? st : wt_max_pool2d_v2(x, &o, out, indices);
}

wt_status wt_avg_pool2d(const wt_tensor *x, const wt_pool_options *opts, wt_tensor **out)
{
    wt_status st = wt_check_out("wt_avg_pool2d", out);
    wt_pool2d_options o;
    if (st == WT_OK) st = pool2d_of("wt_avg_pool2d", opts, &o);
    return st != WT_OK ? st : wt_avg_pool2d_v2(x, &o, out);
}

wt_status wt_avg_pool2d_backward(const wt_tensor *dy, const wt_tensor *x, const wt_pool_options *opts, wt_tensor **dx)
{
    wt_status st = wt_check_out("wt_avg_pool2d_backward", dx);
    wt_pool2d_options o;
    if (st == WT_OK) st = pool2d_of("wt_avg_pool2d_backward", opts, &o);
    return st != WT_OK ? st : wt_avg_pool2d_backward_v2(dy, x, &o, dx);
}

wt_status wt_graph_capture_begin(wt_context *ctx) { return wt_graph_begin(ctx); }

wt_status wt_graph_capture_end(wt_context *ctx, wt_graph **out) { return wt_graph_end(ctx, out); }

void wt_graph_destroy(wt_graph *graph) { wt_graph_release(graph); }
