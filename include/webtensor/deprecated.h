/* Section 16 of webtensor.h: the deprecated names, declared nowhere else. */
#ifndef WEBTENSOR_DEPRECATED_H
#define WEBTENSOR_DEPRECATED_H

#include "errors.h"
#include "types.h"
#include "scopes.h"
#include "networks.h"
#include "training.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ======== 16. Deprecated names ============================================
 * The names and argument orders of earlier versions: still exported and
 * working (thin functions over their replacements, so bindings that look
 * symbols up by name keep working) for this release, then removed. Each
 * comment names the replacement. Defining WT_WARN_DEPRECATED before
 * including this header makes the compiler warn at each use. */
#if defined(WT_WARN_DEPRECATED) && defined(__GNUC__)
#define WT_DEPRECATED(use) __attribute__((deprecated("use " use)))
#else
#define WT_DEPRECATED(use)
#endif

/* wt_context_last_message and wt_context_last_status: the message, with
 * the code written through status (may be NULL). */
WT_API WT_DEPRECATED("wt_context_last_message") const char *wt_context_last_error(const wt_context *ctx,
                                                                                   wt_status *status);
/* wt_tensor_arange, wt_tensor_linspace, wt_tensor_eye: dtype after ctx. */
WT_API WT_DEPRECATED("wt_tensor_arange") wt_status wt_arange(wt_context *ctx, double start, double stop,
                                                              double step, wt_dtype dtype, wt_tensor **out);
WT_API WT_DEPRECATED("wt_tensor_linspace") wt_status wt_linspace(wt_context *ctx, double start, double stop,
                                                                  int64_t num, bool endpoint, wt_dtype dtype,
                                                                  wt_tensor **out);
WT_API WT_DEPRECATED("wt_tensor_eye") wt_status wt_eye(wt_context *ctx, int64_t n, int64_t m, int64_t k,
                                                        wt_dtype dtype, wt_tensor **out);
/* wt_tensor_rand, wt_tensor_randn: the same arguments. */
WT_API WT_DEPRECATED("wt_tensor_rand") wt_status wt_rand(wt_context *ctx, wt_dtype dtype, int ndim,
                                                          const int64_t *shape, uint64_t seed, wt_tensor **out);
WT_API WT_DEPRECATED("wt_tensor_randn") wt_status wt_randn(wt_context *ctx, wt_dtype dtype, int ndim,
                                                            const int64_t *shape, uint64_t seed, wt_tensor **out);
/* wt_dropout_v2 with wt_dropout_options {p, seed}. */
WT_API WT_DEPRECATED("wt_dropout_v2") wt_status wt_dropout(const wt_tensor *x, float p, uint64_t seed,
                                                            wt_tensor **out);
/* wt_topk_v2(x, k, -1, largest, values, indices). */
WT_API WT_DEPRECATED("wt_topk_v2") wt_status wt_topk(const wt_tensor *x, int64_t k, bool largest,
                                                      wt_tensor **values, wt_tensor **indices);
/* wt_layer_norm and wt_rms_norm with normalized_ndim 1. */
WT_API WT_DEPRECATED("wt_layer_norm") wt_status wt_layernorm(const wt_tensor *x, const wt_tensor *weight,
                                                              const wt_tensor *bias, float eps, wt_tensor **out);
WT_API WT_DEPRECATED("wt_rms_norm") wt_status wt_rmsnorm(const wt_tensor *x, const wt_tensor *weight, float eps,
                                                          wt_tensor **out);
/* wt_group_norm_v2 with wt_group_norm_options {eps}. */
WT_API WT_DEPRECATED("wt_group_norm_v2") wt_status wt_group_norm(const wt_tensor *x, int64_t num_groups,
                                                                  const wt_tensor *weight, const wt_tensor *bias,
                                                                  float eps, wt_tensor **out);
/* wt_scaled_dot_product_attention_v2 with wt_attention_options {causal,
 * scale}. */
WT_API WT_DEPRECATED("wt_scaled_dot_product_attention_v2") wt_status
wt_scaled_dot_product_attention(const wt_tensor *q, const wt_tensor *k, const wt_tensor *v,
                                const wt_tensor *mask, bool causal, float scale, wt_tensor **out);
/* wt_rope_v2 with wt_rope_options {theta, offset, layout}. */
WT_API WT_DEPRECATED("wt_rope_v2") wt_status wt_rope(const wt_tensor *x, double theta, int64_t offset,
                                                      wt_rope_layout layout, wt_tensor **out);
/* wt_graph_begin, wt_graph_end, wt_graph_release: the same arguments. */
WT_API WT_DEPRECATED("wt_graph_begin") wt_status wt_graph_capture_begin(wt_context *ctx);
WT_API WT_DEPRECATED("wt_graph_end") wt_status wt_graph_capture_end(wt_context *ctx, wt_graph **out);
WT_API WT_DEPRECATED("wt_graph_release") void wt_graph_destroy(wt_graph *graph);
/* wt_relu_backward, wt_sigmoid_backward, ... (the one of act). */
WT_API WT_DEPRECATED("wt_<activation>_backward") wt_status wt_activation_backward(wt_activation act,
                                                                                 const wt_tensor *dy,
                                                                                 const wt_tensor *x,
                                                                                 wt_tensor **dx);
/* wt_cross_entropy_backward_v2: dloss first. */
WT_API WT_DEPRECATED("wt_cross_entropy_backward_v2") wt_status
wt_cross_entropy_backward(const wt_tensor *logits, const wt_tensor *labels, const wt_tensor *dloss,
                          const wt_cross_entropy_options *opts, wt_tensor **dlogits);
/* wt_layer_norm_backward(dy, x, 1, weight, eps, ...). */
WT_API WT_DEPRECATED("wt_layer_norm_backward") wt_status
wt_layernorm_backward(const wt_tensor *x, const wt_tensor *weight, const wt_tensor *dy, float eps,
                      wt_tensor **dx, wt_tensor **dweight, wt_tensor **dbias);
/* wt_batch_norm_backward_v2: dy first, training and eps in the options. */
WT_API WT_DEPRECATED("wt_batch_norm_backward_v2") wt_status
wt_batch_norm_backward(const wt_tensor *x, const wt_tensor *weight, const wt_tensor *running_mean,
                       const wt_tensor *running_var, bool training, float eps, const wt_tensor *dy,
                       wt_tensor **dx, wt_tensor **dweight, wt_tensor **dbias);
/* wt_pool2d_options, wt_max_pool2d_v2, wt_avg_pool2d_v2,
 * wt_avg_pool2d_backward_v2: padding (h, w) on both sides becomes
 * (top, bottom, left, right), as wt_conv_options has it. */
typedef struct wt_pool_options {
    uint32_t struct_size;     /* set by wt_pool_options_init */
    int64_t kernel[2];        /* (h, w); must be set (> 0) */
    int64_t stride[2];        /* 0 (the default): the kernel size */
    int64_t padding[2];       /* (h, w), on both sides; at most half the (dilated) kernel */
    int64_t dilation[2];      /* max_pool2d only; 1 */
    bool ceil_mode;           /* round the output size up; a window must start inside
                                 the input or its leading padding (PyTorch) */
    bool count_include_pad;   /* avg_pool2d: padding counts in the divisor; true */
    int64_t divisor_override; /* avg_pool2d: > 0 divides every window; 0 */
} wt_pool_options;
WT_API WT_DEPRECATED("wt_pool2d_options_init") void wt_pool_options_init(wt_pool_options *opts);
WT_API WT_DEPRECATED("wt_max_pool2d_v2") wt_status wt_max_pool2d(const wt_tensor *x, const wt_pool_options *opts,
                                                                  wt_tensor **out, wt_tensor **indices);
WT_API WT_DEPRECATED("wt_avg_pool2d_v2") wt_status wt_avg_pool2d(const wt_tensor *x, const wt_pool_options *opts,
                                                                  wt_tensor **out);
WT_API WT_DEPRECATED("wt_avg_pool2d_backward_v2") wt_status
wt_avg_pool2d_backward(const wt_tensor *dy, const wt_tensor *x, const wt_pool_options *opts, wt_tensor **dx);
/* wt_conv2d_backward_v2: dy first. */
WT_API WT_DEPRECATED("wt_conv2d_backward_v2") wt_status
wt_conv2d_backward(const wt_tensor *x, const wt_tensor *w, const wt_tensor *dy, const wt_conv_options *opts,
                   wt_tensor **dx, wt_tensor **dw, wt_tensor **dbias);

#ifdef __cplusplus
}
#endif
#endif /* WEBTENSOR_DEPRECATED_H */
