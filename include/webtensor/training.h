/* Section 13 of webtensor.h: training: backward ops, losses, optimizers, autograd. */
#ifndef WEBTENSOR_TRAINING_H
#define WEBTENSOR_TRAINING_H

#include "errors.h"
#include "types.h"
#include "networks.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ======== 13. Training =================================================== */
/* Backward ops, a fused loss and in-place optimizer steps. Gradients are
 * f32 (f16 inputs are computed through f32, like the forward ops).
 *
 * In place (rule 4): wt_sgd_step and wt_adamw_step write into param and
 * the optimizer state they are given and allocate nothing. Those
 * tensors must be f32 and contiguous (views with an offset are fine), of
 * one context and one shape, and must not share storage with each other
 * or with grad (WT_ERR_INVALID_ARGUMENT): an update reads each element
 * once and writes it once, so aliasing would make it depend on order. */

/* The activations with a backward op (wt_<name>_backward below). */
typedef enum wt_activation {
    WT_ACT_RELU = 0,      /* dx = dy * (x > 0)  (0 at x == 0 and for NaN, like PyTorch) */
    WT_ACT_SIGMOID = 1,   /* dx = dy * s * (1 - s), s = sigmoid(x) */
    WT_ACT_TANH = 2,      /* dx = dy * (1 - tanh(x)^2) */
    WT_ACT_SILU = 3,      /* dx = dy * s * (1 + x * (1 - s)) */
    WT_ACT_GELU = 4,      /* exact form: dx = dy * (Phi(x) + x * phi(x)) */
    WT_ACT_GELU_TANH = 5  /* the tanh approximation's derivative */
} wt_activation;

/* dx = dy * f'(x) for the forward op f (wt_relu, wt_sigmoid, ...), from
 * its input x; dy and x of one shape. The derivatives are those of
 * wt_activation above. */
WT_API wt_status wt_relu_backward(const wt_tensor *dy, const wt_tensor *x, wt_tensor **dx);
WT_API wt_status wt_sigmoid_backward(const wt_tensor *dy, const wt_tensor *x, wt_tensor **dx);
WT_API wt_status wt_tanh_backward(const wt_tensor *dy, const wt_tensor *x, wt_tensor **dx);
WT_API wt_status wt_silu_backward(const wt_tensor *dy, const wt_tensor *x, wt_tensor **dx);
WT_API wt_status wt_gelu_backward(const wt_tensor *dy, const wt_tensor *x, wt_tensor **dx);
WT_API wt_status wt_gelu_tanh_backward(const wt_tensor *dy, const wt_tensor *x, wt_tensor **dx);

typedef enum wt_reduction { WT_REDUCTION_MEAN = 0, WT_REDUCTION_SUM = 1, WT_REDUCTION_NONE = 2 } wt_reduction;

typedef struct wt_cross_entropy_options {
    uint32_t struct_size;    /* set by _init */
    wt_reduction reduction;  /* default WT_REDUCTION_MEAN */
    int32_t ignore_index;    /* rows with this label count for nothing; default -100 */
} wt_cross_entropy_options;
WT_API void wt_cross_entropy_options_init(wt_cross_entropy_options *opts);

/* Softmax cross-entropy of logits [N, C] against i32 class labels [N]
 * (PyTorch's cross_entropy): per row logsumexp(x) - x[label]; mean over
 * the rows whose label is not ignore_index (NaN when there are none, like
 * PyTorch), their sum, or the [N] row losses (0 for ignored rows). A label
 * outside [0, C) that is not ignore_index makes its row's loss and
 * gradient NaN on every backend (no host round trip is spent checking
 * labels on the GPU). opts NULL: defaults. */
WT_API wt_status wt_cross_entropy(const wt_tensor *logits, const wt_tensor *labels,
                                  const wt_cross_entropy_options *opts, wt_tensor **loss);
/* d loss / d logits [N, C], scaled by dloss: NULL (1), or a tensor of the
 * loss's shape (0-d for mean and sum, [N] for none). */
WT_API wt_status wt_cross_entropy_backward_v2(const wt_tensor *dloss, const wt_tensor *logits,
                                              const wt_tensor *labels, const wt_cross_entropy_options *opts,
                                              wt_tensor **dlogits);

/* Gradient of an embedding lookup: dweight [num_embeddings, D] with
 * dweight[indices[i]] += dy[i, :] over every position i. dy is
 * [*indices.shape, D]; indices i32. An index outside [0, num_embeddings)
 * contributes nothing. On the GPU a table of more than 1,024 rows sums
 * with atomic adds, so their order (and the last bits of a sum over
 * repeated indices) may vary; a smaller one is the product of the
 * indices' one-hot matrix with dy (deterministic; many positions on few
 * rows make the atomic adds contend). */
WT_API wt_status wt_embedding_backward(const wt_tensor *dy, const wt_tensor *indices,
                                       int64_t num_embeddings, wt_tensor **dweight);

/* Backward of wt_layer_norm(x, normalized_ndim, weight, bias, eps): dx
 * (x's shape), dweight and dbias (the normalised shape); any may be NULL
 * to skip it; dweight needs weight (the bias is not read). */
WT_API wt_status wt_layer_norm_backward(const wt_tensor *dy, const wt_tensor *x, int normalized_ndim,
                                        const wt_tensor *weight, double eps, wt_tensor **dx,
                                        wt_tensor **dweight, wt_tensor **dbias);
/* Backward of wt_batch_norm(x, running_mean, running_var, weight, bias,
 * opts) over every axis but 1. opts->training: the statistics are the
 * batch's (biased variance), as in the forward pass in training mode (the
 * running statistics are not read and may be NULL); else running_mean and
 * running_var [C] were used. opts->eps as in the forward; momentum is not
 * read; opts NULL: the defaults (inference, eps 1e-5). weight [C] or NULL.
 * Any output may be NULL to skip it. */
WT_API wt_status wt_batch_norm_backward_v2(const wt_tensor *dy, const wt_tensor *x,
                                           const wt_tensor *running_mean, const wt_tensor *running_var,
                                           const wt_tensor *weight, const wt_batch_norm_options *opts,
                                           wt_tensor **dx, wt_tensor **dweight, wt_tensor **dbias);

typedef struct wt_sgd_options {
    uint32_t struct_size;
    double lr;           /* default 0.01 */
    double momentum;     /* default 0: no momentum buffer needed */
    double dampening;    /* default 0 */
    double weight_decay; /* L2, added to the gradient; default 0 */
    bool nesterov;       /* default false */
} wt_sgd_options;
WT_API void wt_sgd_options_init(wt_sgd_options *opts);
/* PyTorch's SGD step, in place: g = grad + wd * param; with momentum,
 * buf = momentum * buf + (1 - dampening) * g and g = buf (nesterov:
 * g + momentum * buf); param -= lr * g. momentum_buf (may be NULL when
 * momentum is 0) starts as zeros, so with dampening > 0 the first step
 * differs from PyTorch's, which starts it at the first gradient. */
WT_API wt_status wt_sgd_step(wt_tensor *param, const wt_tensor *grad, wt_tensor *momentum_buf,
                             const wt_sgd_options *opts);

typedef struct wt_adamw_options {
    uint32_t struct_size;
    double lr;           /* default 1e-3 */
    double beta1, beta2; /* default 0.9, 0.999 */
    double eps;          /* default 1e-8 */
    double weight_decay; /* decoupled; default 0.01 */
} wt_adamw_options;
WT_API void wt_adamw_options_init(wt_adamw_options *opts);
/* PyTorch's AdamW step number step (1, 2, ...), in place:
 * param *= 1 - lr * wd; m = b1 m + (1 - b1) g; v = b2 v + (1 - b2) g^2;
 * param -= lr * (m / (1 - b1^step)) / (sqrt(v / (1 - b2^step)) + eps).
 * m and v start as zeros. */
WT_API wt_status wt_adamw_step(wt_tensor *param, const wt_tensor *grad, wt_tensor *m, wt_tensor *v,
                               int64_t step, const wt_adamw_options *opts);

/* --- optimizers: the update step over a model's parameters ---
 * An optimizer holds a list of parameters (leaves that require grad, f32,
 * contiguous, of one context, each listed once) and its state for them:
 * SGD's momentum buffers or AdamW's moments, made as zeros when it is
 * created, and the number of steps taken. wt_optimizer_step updates every
 * parameter that has an accumulated gradient (wt_tensor_grad) in place,
 * with recording off, as wt_sgd_step / wt_adamw_step would; parameters
 * without one are skipped, as in PyTorch. A training loop:
 *
 *     wt_optimizer *opt;
 *     wt_optimizer_create_adamw(n, params, &adamw, &opt);
 *     for each step:                       (one wt_scope per step)
 *         forward; wt_backward(loss);
 *         wt_optimizer_clip_grad_norm(opt, 1.0, NULL);   (optional)
 *         wt_optimizer_step(opt);
 *         wt_optimizer_zero_grad(opt);
 *     wt_optimizer_release(opt);
 *
 * Gradient accumulation over k micro-batches: run forward and backward on
 * each micro-batch with its loss multiplied by 1/k (wt_mul_scalar) before
 * wt_backward, then one step and one zero_grad. Gradients add up across
 * the backward calls, so with mean losses over equal micro-batches the
 * step is the step of the whole batch.
 *
 * The optimizer keeps a reference to each parameter and owns its state
 * (none of it joins an open scope). SGD's momentum buffer starts at the
 * first gradient, as PyTorch's does. A step that fails on the device may
 * leave the parameters partly updated (the error is the context's). */
typedef struct wt_optimizer wt_optimizer;
/* An SGD optimizer over params[0..nparams-1]; opts NULL: the defaults. */
WT_API wt_status wt_optimizer_create_sgd(int nparams, wt_tensor *const *params, const wt_sgd_options *opts,
                                         wt_optimizer **out);
/* An AdamW optimizer over params[0..nparams-1]; opts NULL: the defaults. */
WT_API wt_status wt_optimizer_create_adamw(int nparams, wt_tensor *const *params, const wt_adamw_options *opts,
                                           wt_optimizer **out);
/* Adds parameters with their own weight decay (a parameter group: GPT-2
 * decays matrices but not biases and norm weights). Before the first step
 * only (WT_ERR_INVALID_ARGUMENT after it). */
WT_API wt_status wt_optimizer_add_params(wt_optimizer *opt, int nparams, wt_tensor *const *params,
                                         double weight_decay);
/* One update of every parameter with a gradient; the step count grows by
 * one (AdamW's bias correction reads it). The learning rate is the
 * schedule's at the step's index (0 for the first) when one is set, else
 * the last wt_optimizer_set_lr (at first the options').
 *
 * Capturable (PyTorch's capturable=True): the step count, the learning
 * rate and the bias corrections are scalars on the device, advanced by a
 * one-thread dispatch at the start of every step (the schedule computed
 * there from the count, in f32: wt_lr_schedule_at's value to float
 * rounding; a bias correction 1 - beta^t by a recurrence with no
 * cancellation, within a few f32 ulps of the double formula), and the
 * update kernels read them. So a step recorded between wt_graph_begin and
 * wt_graph_end (with the forward pass, wt_backward and
 * wt_optimizer_clip_grad_norm, which computes its scale on the device as
 * well) takes the next step's values on every wt_graph_replay. An eager
 * step does the same work, so N replays give N eager steps' bits.
 * wt_optimizer_set_lr and wt_optimizer_set_schedule write the device
 * scalars directly (not recorded): later replays follow them. */
WT_API wt_status wt_optimizer_step(wt_optimizer *opt);
/* Drops the gradient of every parameter (wt_tensor_zero_grad). */
WT_API wt_status wt_optimizer_zero_grad(wt_optimizer *opt);
/* The learning rate of the steps to come (no schedule); finite, >= 0. */
WT_API wt_status wt_optimizer_set_lr(wt_optimizer *opt, double lr);
/* The learning rate of step wt_optimizer_steps(opt) (the next one unless
 * graphs replayed steps): the schedule's or the set one, in double; NaN
 * for NULL. */
WT_API double wt_optimizer_lr(const wt_optimizer *opt);
/* The host's count: the wt_optimizer_step calls that succeeded (a step
 * run while a graph was captured counts once; its replays do not: the
 * host does not see them); 0 for NULL. wt_optimizer_read_steps gives the
 * device's count, replays included. */
WT_API int64_t wt_optimizer_steps(const wt_optimizer *opt);
/* *steps = the steps taken on the device: eager steps and replays of
 * captured ones, counted in 32 bits (waits for the device; -1 on
 * failure). Equals
 * wt_optimizer_steps without replays. The learning rate of the next step
 * is then wt_lr_schedule_at(schedule, *steps) (or the set rate). */
WT_API wt_status wt_optimizer_read_steps(const wt_optimizer *opt, int64_t *steps);
/* Scales the gradients of the optimizer's parameters as
 * wt_clip_grad_norm does. */
WT_API wt_status wt_optimizer_clip_grad_norm(wt_optimizer *opt, double max_norm, wt_tensor **total_norm);
/* wt_optimizer_clip_grad_norm then wt_optimizer_step in one call, with the
 * same update (the same f32 operations: the factor min(1, max_norm /
 * (norm + 1e-6)) times each gradient element), but the factor is applied
 * inside the update kernels instead of to the gradients: afterwards
 * wt_tensor_grad returns the gradients as backward left them, not the
 * clipped ones (PyTorch's clip_grad_norm_ then step would leave the
 * clipped ones), and the step saves clipping's scaling kernels. total_norm
 * (NULL: not wanted) as wt_clip_grad_norm's. For dynamic loss scaling use
 * the two calls (wt_grad_scaler_step steps itself). A step recorded in a
 * graph replays as wt_optimizer_step's does. */
WT_API wt_status wt_optimizer_step_clipped(wt_optimizer *opt, double max_norm, wt_tensor **total_norm);
/* Drops the caller's reference to the optimizer, its state and its
 * references to the parameters; NULL is ignored. */
WT_API void wt_optimizer_release(wt_optimizer *opt);

/* Gradient clipping by global norm (torch.nn.utils.clip_grad_norm_):
 * with norm the 2-norm of all the parameters' gradients taken together,
 * every gradient is multiplied by min(1, max_norm / (norm + 1e-6)) (each
 * leaf's gradient is replaced by the scaled one: a handle taken earlier
 * with wt_tensor_grad keeps the values before clipping; a gradient nobody
 * else holds is scaled in its own buffer). Computed on the device, the
 * norms of f32 gradients six a kernel (WT_CLIP_NORMS), the scaling three
 * gradients a kernel: nothing is read back, so the step does not wait for
 * the GPU. total_norm (NULL: not wanted) gets norm as a 0-d f32
 * tensor, to read when wanted. Parameters without a gradient are skipped
 * (norm 0 when none has one). max_norm finite and > 0; nparams >= 1. */
WT_API wt_status wt_clip_grad_norm(int nparams, wt_tensor *const *params, double max_norm,
                                   wt_tensor **total_norm);

/* --- learning-rate schedules ---
 * The learning rate at step i (counted from 0), for the optimizer to
 * follow (wt_optimizer_set_schedule) or for the caller to compute:
 *  - warm-up (any kind): lr * (i + 1) / warmup_steps for i < warmup_steps;
 *  - WT_LR_CONSTANT: lr after it;
 *  - WT_LR_STEP: lr * gamma^floor((i - warmup_steps) / step_size) (StepLR);
 *  - WT_LR_COSINE: min_lr + (lr - min_lr) (1 + cos(pi p)) / 2 with
 *    p = (i - warmup_steps) / (total_steps - warmup_steps), held at 1 past
 *    the end (1 when total_steps <= warmup_steps). */
typedef enum wt_lr_schedule_kind { WT_LR_CONSTANT = 0, WT_LR_STEP = 1, WT_LR_COSINE = 2 } wt_lr_schedule_kind;
typedef struct wt_lr_schedule_options {
    uint32_t struct_size;     /* set by _init */
    wt_lr_schedule_kind kind; /* default WT_LR_CONSTANT */
    double lr;                /* the peak learning rate; default 1e-3 */
    int64_t warmup_steps;     /* default 0 */
    int64_t step_size;        /* WT_LR_STEP: steps between decays; default 1 */
    double gamma;             /* WT_LR_STEP: the decay factor; default 0.1 */
    int64_t total_steps;      /* WT_LR_COSINE: the step at which min_lr is reached; default 1 */
    double min_lr;            /* WT_LR_COSINE: default 0 */
} wt_lr_schedule_options;
WT_API void wt_lr_schedule_options_init(wt_lr_schedule_options *opts);
/* *lr = the schedule's learning rate at step (>= 0). */
WT_API wt_status wt_lr_schedule_at(const wt_lr_schedule_options *schedule, int64_t step, double *lr);
/* The optimizer's steps follow schedule from now on (copied); NULL: back
 * to the set learning rate. Its step counts must be < 2^32 (the device's
 * schedule counts in 32 bits). */
WT_API wt_status wt_optimizer_set_schedule(wt_optimizer *opt, const wt_lr_schedule_options *schedule);

/* --- mixed precision: dynamic loss scaling ---
 * With f16 activations (parameters stay f32 master weights, cast to f16
 * in the forward pass) small gradients underflow; the loss is multiplied
 * by a scale before backward and the gradients divided by it before the
 * step, as torch.cuda.amp.GradScaler does:
 *
 *     wt_grad_scaler_scale(scaler, loss, &scaled);  wt_backward(scaled);
 *     wt_grad_scaler_step(scaler, opt);             (unscale, check, step)
 *     wt_optimizer_zero_grad(opt);
 *
 * Everything happens on the device, nothing is read back: the scale is a
 * 0-d f32 tensor; wt_grad_scaler_step divides every gradient by it, finds
 * whether any is not finite, runs the optimizer's step and, when one was
 * not, puts the parameters and the optimizer's state back as they were
 * (a skipped step); then the scale is multiplied by backoff_factor after
 * an overflow, by growth_factor after growth_interval steps in a row
 * without one. Unlike PyTorch, a skipped step still counts in the
 * optimizer's step number (AdamW's bias correction): the host does not
 * learn that it was skipped. Clip after unscaling: wt_grad_scaler_unscale,
 * then wt_optimizer_clip_grad_norm, then wt_grad_scaler_step (which then
 * does not unscale again). */
typedef struct wt_grad_scaler wt_grad_scaler;
typedef struct wt_grad_scaler_options {
    uint32_t struct_size;    /* set by _init */
    double init_scale;       /* default 65536 */
    double growth_factor;    /* default 2 */
    double backoff_factor;   /* default 0.5 */
    int64_t growth_interval; /* default 2000 */
} wt_grad_scaler_options;
WT_API void wt_grad_scaler_options_init(wt_grad_scaler_options *opts);
/* A scaler for the tensors of ctx; opts NULL: the defaults. */
WT_API wt_status wt_grad_scaler_create(wt_context *ctx, const wt_grad_scaler_options *opts, wt_grad_scaler **out);
/* *out = loss * scale (recorded: backward through it gives scaled gradients). */
WT_API wt_status wt_grad_scaler_scale(wt_grad_scaler *scaler, const wt_tensor *loss, wt_tensor **out);
/* Divides the gradients of opt's parameters by the scale, once per step. */
WT_API wt_status wt_grad_scaler_unscale(wt_grad_scaler *scaler, wt_optimizer *opt);
/* Unscales (unless done), steps opt unless a gradient is not finite, and
 * updates the scale; see above. */
WT_API wt_status wt_grad_scaler_step(wt_grad_scaler *scaler, wt_optimizer *opt);
/* The current scale (a new 0-d f32 tensor holding a copy). */
WT_API wt_status wt_grad_scaler_current_scale(const wt_grad_scaler *scaler, wt_tensor **scale);
/* 1 when the last wt_grad_scaler_step found a gradient that is not finite
 * (and skipped the step), else 0 (a new 0-d f32 tensor holding a copy). */
WT_API wt_status wt_grad_scaler_found_inf(const wt_grad_scaler *scaler, wt_tensor **found);
WT_API void wt_grad_scaler_release(wt_grad_scaler *scaler);
/* --- convolution, pooling and resampling backward ---
 * x, w, dy are 4-D (N, C, H, W); gradients are f32. */

/* Backward of wt_conv2d(x, w, bias, opts) given dy (its output's
 * gradient): dx like x, dw like w, dbias [O]; any may be NULL to skip it.
 * Composed from wt_conv_transpose2d and wt_conv2d, so it runs wherever
 * they do. */
WT_API wt_status wt_conv2d_backward_v2(const wt_tensor *dy, const wt_tensor *x, const wt_tensor *w,
                                       const wt_conv_options *opts, wt_tensor **dx, wt_tensor **dw,
                                       wt_tensor **dbias);
/* Backward of wt_max_pool2d_v2 from the indices it returned: dx (x's shape)
 * receives each dy at the position its index names, summed where windows
 * overlap (in index order on the CPU; by atomic adds on the GPU). */
WT_API wt_status wt_max_pool2d_backward(const wt_tensor *dy, const wt_tensor *indices, const wt_tensor *x,
                                        wt_tensor **dx);
/* Backward of wt_avg_pool2d_v2(x, opts): each dy spread evenly over its
 * window, divided by the divisor the forward pass used. */
WT_API wt_status wt_avg_pool2d_backward_v2(const wt_tensor *dy, const wt_tensor *x, const wt_pool2d_options *opts,
                                           wt_tensor **dx);

/* Backward of wt_interpolate(x, opts): dx (x's shape, f32) is the adjoint
 * of the resampling applied to dy (the forward's output shape): each input
 * pixel sums the dy of the outputs that read it, times their weights
 * (nearest: 1). Only x's shape is read. Deterministic on every backend
 * (each input pixel gathers its outputs; no atomics). */
WT_API wt_status wt_interpolate_backward(const wt_tensor *dy, const wt_tensor *x,
                                         const wt_interpolate_options *opts, wt_tensor **dx);

/* --- autograd ---
 * Reverse-mode automatic differentiation, as PyTorch's: mark the leaves
 * (parameters) with wt_tensor_set_requires_grad, run the forward pass
 * with the ordinary ops, call wt_backward on the loss, read each leaf's
 * gradient with wt_tensor_grad:
 *
 *     wt_tensor_set_requires_grad(w, true);
 *     wt_linear(x, w, NULL, &y);  wt_cross_entropy(y, labels, NULL, &loss);
 *     wt_backward(loss);           (w's gradient accumulates)
 *     wt_tensor_grad(w, &gw);      wt_sgd_step(w, gw, NULL, &opts);
 *     wt_tensor_release(gw);       wt_tensor_zero_grad(w);
 *
 * Recording: a call of a public op is recorded when one of its inputs
 * requires grad (a leaf marked so, or the result of a recorded call) and
 * recording is on; nothing is recorded otherwise, so inference costs
 * nothing. A result of a recorded call requires grad itself. The record
 * belongs to the result tensors: releasing them frees it, whether or not
 * backward ran. Gradients are f32 and of the input's shape, whatever its
 * dtype (f16 inputs get f32 gradients).
 *
 * Rules and limits:
 *  - Gradients accumulate into .grad over backward calls until
 *    wt_tensor_zero_grad. Only leaves keep a .grad.
 *  - A backward pass frees the tensors the graph saved (unless
 *    retain_graph): a second backward through the same graph is then
 *    WT_ERR_INVALID_ARGUMENT.
 *  - In-place changes: every op that writes a tensor's storage in place
 *    (wt_copy_into, wt_sgd_step, wt_adamw_step, custom kernels ...) bumps
 *    its version; backward refuses (WT_ERR_INVALID_ARGUMENT) a tensor that
 *    was saved for the gradient and changed since. wt_copy_into from a
 *    tensor that requires grad is refused while recording (it is not
 *    differentiable); do in-place updates inside wt_no_grad_begin/end.
 *  - Ops that are not differentiable (argmax, argmin, comparisons,
 *    logical ops, sort and topk indices, one_hot, random numbers) give
 *    results that do not require grad; a backward from such a result is
 *    WT_ERR_INVALID_ARGUMENT naming the op. Piecewise-constant ops (floor,
 *    ceil, round, sign, floor_divide) have zero gradients, as in PyTorch.
 *    An op that has no derivative rule yet refuses, while recording, an
 *    input that requires grad with WT_ERR_UNSUPPORTED naming it (never a
 *    silent zero gradient).
 *  - Higher-order gradients are not supported: the backward pass itself
 *    is not recorded (its results do not require grad).
 *  - wt_scaled_dot_product_attention without a mask differentiates through
 *    a fused kernel (CPU and WebGPU) that stores no [Sq, Skv] matrix, as
 *    flash-attention's backward, where the backend finds it the faster;
 *    with a mask, through matrix products (WT_ATTN_BACKWARD=composed or
 *    =fused forces either way).
 *  - Thread safety: the graph belongs to its tensors' context (one thread
 *    at a time). */

/* Marks a leaf tensor (f32 or f16) as requiring grad, or not. A result of
 * a recorded op is refused (WT_ERR_INVALID_ARGUMENT: wt_detach it). */
WT_API wt_status wt_tensor_set_requires_grad(wt_tensor *t, bool requires_grad);
/* Whether t requires grad (a marked leaf or a recorded result); false for
 * NULL. */
WT_API bool wt_tensor_requires_grad(const wt_tensor *t);
/* The leaf's accumulated gradient (a new reference, f32, t's shape);
 * *grad = NULL when it has none. */
WT_API wt_status wt_tensor_grad(const wt_tensor *t, wt_tensor **grad);
/* Drops t's accumulated gradient (PyTorch's zero_grad(set_to_none=True));
 * the next backward starts it anew. */
WT_API wt_status wt_tensor_zero_grad(wt_tensor *t);

/* A leaf's gradient-ready hook: called during wt_backward / wt_backward_ex
 * once the leaf's gradient from that pass is final - every recorded op of
 * the pass that uses the leaf has given it its part - while the pass goes
 * on with the rest of the graph (PyTorch's post-accumulate-grad hook).
 * grad is the tensor that becomes the leaf's .grad when the pass succeeds
 * (the earlier .grad plus this pass's part), borrowed for the call:
 * wt_tensor_retain it to keep it; read it (wt_tensor_read_async), but
 * write it only after the pass returned. The hook runs on the pass's
 * thread with recording off; it must not run a backward pass itself. It
 * is not called by wt_grad, for a leaf that gets no gradient, or after an
 * op of the pass failed (a failed pass leaves every .grad as it was and
 * the tensors given to hooks unused). What it is for: starting the
 * reduction of a gradient across processes before backward ends
 * (webtensor_dist.h). */
typedef void (*wt_grad_ready_fn)(wt_tensor *grad, void *user);
/* Sets t's gradient-ready hook (t a leaf, not the result of a recorded
 * op; fn NULL removes it); one per leaf: a new one replaces the old. user
 * is passed to fn as is. */
WT_API wt_status wt_tensor_set_grad_ready_hook(wt_tensor *t, wt_grad_ready_fn fn, void *user);

/* Backward from a one-element loss (seed 1): accumulates d loss / d leaf
 * into every leaf that requires grad and frees the graph's saved tensors. */
WT_API wt_status wt_backward(wt_tensor *loss);

typedef struct wt_backward_options {
    uint32_t struct_size; /* set by _init */
    bool retain_graph;    /* keep the saved tensors for another backward; false */
} wt_backward_options;
WT_API void wt_backward_options_init(wt_backward_options *opts);
/* Backward from n outputs at once, each with a seed gradient of its shape
 * (seeds NULL, or an entry NULL: 1, for one-element outputs). opts NULL:
 * defaults. */
WT_API wt_status wt_backward_ex(int n, wt_tensor *const *outputs, wt_tensor *const *seeds,
                                const wt_backward_options *opts);
/* The functional form: grads[j] = sum over outputs of seed . d output /
 * d inputs[j] (new references; NULL where inputs[j] does not reach the
 * outputs), without touching any .grad. inputs may be leaves or results
 * of recorded ops (each must require grad). */
WT_API wt_status wt_grad(int noutputs, wt_tensor *const *outputs, wt_tensor *const *seeds, int ninputs,
                         wt_tensor *const *inputs, const wt_backward_options *opts, wt_tensor **grads);

/* A new view of x's elements that does not require grad (no record):
 * gradients stop there. It shares x's storage (and version). */
WT_API wt_status wt_detach(const wt_tensor *x, wt_tensor **out);
/* Recording off on ctx between begin and end (PyTorch's torch.no_grad());
 * they nest, and end without a begin is WT_ERR_INVALID_ARGUMENT. */
WT_API wt_status wt_no_grad_begin(wt_context *ctx);
WT_API wt_status wt_no_grad_end(wt_context *ctx);
/* Whether recording is on for ctx (no wt_no_grad_begin open). */
WT_API bool wt_grad_enabled(const wt_context *ctx);

/* How autograd treats a catalogue op (an index as for wt_op_name). */
typedef enum wt_op_grad {
    WT_OP_GRAD_UNKNOWN = 0,           /* an index out of range (or an op without a row) */
    WT_OP_GRAD_RULE = 1,              /* differentiable: recorded, with a derivative rule */
    WT_OP_GRAD_NOT_DIFFERENTIABLE = 2, /* results are constants (argmax, comparisons ...) */
    WT_OP_GRAD_NO_INPUTS = 3,         /* makes tensors from nothing (creation, random) */
    WT_OP_GRAD_IN_PLACE = 4,          /* updates its arguments (copy_into, optimizer steps) */
    WT_OP_GRAD_NO_RULE_YET = 5        /* differentiable, no rule yet: a tracked input is
                                         refused with WT_ERR_UNSUPPORTED */
} wt_op_grad;
WT_API wt_op_grad wt_op_gradient(int op);

#ifdef __cplusplus
}
#endif
#endif /* WEBTENSOR_TRAINING_H */
