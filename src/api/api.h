/* Shared argument checks of the API layer. */
#ifndef WT_API_INTERNAL_H
#define WT_API_INTERNAL_H

#include "core/internal.h"

#include <string.h>

/* x is non-NULL (any dtype: views, copies, casts). */
wt_status wt_check_tensor(const char *fn, const wt_tensor *x);
/* x is non-NULL and floating point (f32 or f16): the check of ops that
 * compute in floating point only; WT_ERR_UNSUPPORTED names fn and dtype. */
wt_status wt_check_input(const char *fn, const wt_tensor *x);
/* out is non-NULL; sets *out to NULL. */
wt_status wt_check_out(const char *fn, wt_tensor **out);
/* a and b belong to the same context. */
wt_status wt_check_same_context(const char *fn, const wt_tensor *a, const wt_tensor *b);
/* A value that changes per step, read by a kernel on the device (a rope
 * position, a KV length, a copy's start): t is an i32 tensor of one
 * element on x's context. what names it in the message. */
wt_status wt_check_step_value(const char *fn, const char *what, const wt_tensor *x, const wt_tensor *t);
/* ndim in [0, WT_MAX_DIMS], shape non-NULL when ndim > 0, no negative extent. */
wt_status wt_check_shape(const char *fn, int ndim, const int64_t *shape);
/* Writes "[2,3,4]" into buf. */
const char *wt_shape_str(int ndim, const int64_t *shape, char *buf, size_t size);
/* The dtype of an op on a and b (webtensor.h, "elementwise"): bool < i32
 * < f16 < f32, and i32 with f16 gives f32. */
wt_dtype wt_promote(wt_dtype a, wt_dtype b);
/* NumPy broadcast of the shapes of n tensors into ndim / shape. */
wt_status wt_broadcast_shapes(const char *fn, int n, const wt_tensor *const *t, int *ndim, int64_t *shape);
/* Normalises a possibly negative axis; false if out of range. */
bool wt_norm_axis(int axis, int ndim, int *out);

/* The f16 rule of the ops (cast.c). An op given an f16 input runs in f32:
 *   if (wt_has_f16(a, b, NULL)) {
 *       wt_lifted l; wt_tensor *r = NULL;
 *       if ((st = wt_lift_f16(a, b, NULL, &l)) == WT_OK) st = op(l.in[0], l.in[1], &r);
 *       wt_lifted_release(&l);
 *       return wt_land(st, r, l.result, out);
 *   }
 * Inputs may be NULL (optional ones); the result is f16 only when every
 * given input is f16. */
typedef struct wt_lifted {
    wt_tensor *in[3]; /* f32 versions (or the input itself, one more reference) */
    wt_dtype result;
} wt_lifted;
bool wt_has_f16(const wt_tensor *a, const wt_tensor *b, const wt_tensor *c);
/* On failure nothing is held (l->in all NULL). */
wt_status wt_lift_f16(const wt_tensor *a, const wt_tensor *b, const wt_tensor *c, wt_lifted *l);
void wt_lifted_release(wt_lifted *l);
/* Takes r (the f32 result, or NULL when st failed): *out = r cast to dtype. */
wt_status wt_land(wt_status st, wt_tensor *r, wt_dtype dtype, wt_tensor **out);

/* --- matrix products --- */
/* out = act(a @ b + bias), one pass on the GPU: wt_matmul's rules for a and
 * b; bias NULL or 1-D of the result's last extent N, added to every row
 * (WT_ERR_SHAPE otherwise); act a wt_matmul_act. f16 operands (bias too)
 * give an f16 result, accumulated in f32. A linear layer x @ w^T + bias is
 * this with b a transposed view of w ([out, in] -> [in, out] by a stride
 * swap, wt_tensor_view): the kernels read w through its strides, no copy. */
wt_status wt_matmul_fused(const wt_tensor *a, const wt_tensor *b, const wt_tensor *bias,
                          wt_matmul_act act, wt_tensor **out);
/* The product of a 2-D a [M, K] and a 2-D b [K, N] (any strides: b may be
 * w^T as a view) with the epilogue's operand aux (M * N elements in
 * row-major order, contiguous, f32): act(a @ b + bias) + aux (a residual),
 * or with WT_MATMUL_ACT_GELU_GRAD (a @ b + bias) * gelu'(aux) (GELU's
 * backward through the product: dy @ w times gelu'(pre-activation)); the
 * result [M, N], f32, in one pass where the backend has one.
 * WT_ERR_UNSUPPORTED (nothing run) anywhere else, and with
 * WT_MATMUL_EPILOGUE=0: the caller composes the public ops instead.
 * (autograd's linear_fused rule asks for GELU_GRAD only under
 * WT_MATMUL_EPILOGUE=2 or 3: on an H200 the separate pass was faster.) */
wt_status wt_matmul_epilogue(const wt_tensor *a, const wt_tensor *b, const wt_tensor *bias, wt_matmul_act act,
                             const wt_tensor *aux, wt_tensor **out);

static inline wt_context *wt_ctx_of(const wt_tensor *t) { return t->storage->ctx; }

/* The K of a quantised weight w (an i32 [N, W] of type), or an error
 * naming fn (api/quant.c; wt_linear_quant_fused checks with it too). */
wt_status wt_quant_weight_k(const char *fn, const wt_tensor *w, wt_quant_type type, int64_t *k);
/* wt_linear_fused's checks past the weight (N rows of K elements, dense or
 * quantised): opts (NULL: defaults) into *o, the result's last extent into
 * *n_out. */
wt_status wt_linear_fused_check(const char *fn, const wt_tensor *x, int64_t N, int64_t K, const wt_tensor *bias,
                                const wt_linear_fused_options *opts, wt_linear_fused_options *o, int64_t *n_out);
/* wt_linear_fused as the public ops it stands for, in the dtype result;
 * the product wt_linear_quant's of type *qtype when qtype is not NULL. */
wt_status wt_linear_fused_composed(const wt_tensor *x, const wt_tensor *w, const wt_quant_type *qtype,
                                   const wt_tensor *bias, const wt_linear_fused_options *o, wt_dtype result,
                                   wt_tensor **out);
/* One fused linear node (node's kind and p set; its operands filled in
 * here): x [.., K] folded to [M, K], bias, norm weight and residual made
 * contiguous, w passed as given; the result of dtype result. */
wt_status wt_linear_fused_node_run(wt_node node, const wt_tensor *x, const wt_tensor *w, int64_t K,
                                   const wt_tensor *bias, const wt_linear_fused_options *o, int64_t n_out,
                                   wt_dtype result, wt_tensor **out);

/* The fused backward of attention without a mask (core/node.h,
 * ATTENTION_BACKWARD): dq, dk, dv (f32, contiguous) of 4-D q [B,Hq,Sq,D],
 * k [B,Hkv,Skv,D], v [B,Hkv,Skv,Dv] given dout [B,Hq,Sq,Dv] and the
 * forward's output out [B,Hq,Sq,Dv] (D = dout . out), and lse: NULL or
 * the forward's log-sum-exp of each row (f32 [B,Hq,Sq] contiguous, as
 * wt_attention_args.lse); scale final.
 * WT_ERR_UNSUPPORTED, nothing made, where the backend has no such kernel,
 * prefers the composition on these shapes (wt_backend_ops.
 * attention_backward_preferred, unless WT_ATTN_BACKWARD says) or the
 * tensors are empty or do not fit its limits: compose it then. */
wt_status wt_attention_backward_fused(const wt_tensor *q, const wt_tensor *k, const wt_tensor *v,
                                      const wt_tensor *dout, const wt_tensor *out, const wt_tensor *lse,
                                      bool causal, float scale, wt_tensor **dq, wt_tensor **dk, wt_tensor **dv);

/* The backward of layer norm (rms false) or RMS norm over the last k axes
 * of x in one pass a row (core/node.h, NORM_BACKWARD): dx and, when gxhat
 * is not NULL, dy x^ (the summand of the weight's gradient), both f32 of
 * x's shape, given dy of x's shape; weight NULL or with the normalised
 * axes' element count (the caller checked its shape). WT_ERR_UNSUPPORTED,
 * nothing made, where the backend has no such kernel or refuses these rows
 * (WebGPU: rows longer than its registers hold, tensors past one binding),
 * an operand is not f32, x is empty, eps is not finite and >= 0, or
 * WT_NORM_BACKWARD=composed: compose it then. */
wt_status wt_norm_backward_fused(const wt_tensor *dy, const wt_tensor *x, int k, const wt_tensor *weight, bool rms,
                                 double eps, wt_tensor **dx, wt_tensor **gxhat);

/* The backend's fill of an f32 tensor with value (its bits, NaN kept). */
static inline wt_status wt_fill_f32(wt_context *ctx, wt_tensor *t, float value)
{
    uint32_t bits;
    memcpy(&bits, &value, sizeof bits);
    return wt_node_run(ctx, &(wt_node){.kind = WT_NODE_FILL, .out = {t}, .p.bits = bits});
}

/* --- optimizer steps over an optimizer's device scalars (core/node.h,
 * WT_OPT_SCHED_*): wt_sgd_step / wt_adamw_step reading the learning rate,
 * the bias corrections and the step number from sched (NULL: as the
 * public functions) and, with clip_norm (NULL: none; f32, 1 element),
 * taking the gradient times min(1, max_norm / (clip_norm + 1e-6)) without
 * writing it; and the advance of sched to the next step. --- */
wt_status wt_sgd_step_sched(wt_tensor *param, const wt_tensor *grad, wt_tensor *momentum_buf, const wt_tensor *sched,
                            const wt_tensor *clip_norm, double max_norm, const wt_sgd_options *opts);
wt_status wt_adamw_step_sched(wt_tensor *param, const wt_tensor *grad, wt_tensor *m, wt_tensor *v, int64_t step,
                              const wt_tensor *sched, const wt_tensor *clip_norm, double max_norm,
                              const wt_adamw_options *opts);
wt_status wt_optimizer_advance(wt_tensor *sched, float beta1, float beta2);
/* *o = *opts, or the defaults when opts is NULL; fn's error when opts was
 * not made by wt_sgd_options_init / wt_adamw_options_init. */
wt_status wt_sgd_options_read(const char *fn, const wt_sgd_options *opts, wt_sgd_options *o);
wt_status wt_adamw_options_read(const char *fn, const wt_adamw_options *opts, wt_adamw_options *o);

/* --- transformer ops --- */
/* Axes [first, last) of x as one axis: *size their product, *stride the
 * step of the merged axis (1 when there is none). False when their strides
 * do not fold into one (the caller gathers x first). */
bool wt_fold_axes(const wt_tensor *x, int first, int last, int64_t *size, int64_t *stride);

/* --- convolution, pooling, normalisation --- */
/* Copies a caller's options struct (its first field a uint32_t
 * struct_size) over out, which holds the defaults: structs of older
 * headers (struct_size down to min_size) keep the defaults of the fields
 * they lack. what names the init function for the message. */
wt_status wt_read_options(const char *fn, const char *what, const void *in, size_t min_size, void *out,
                          size_t size);
/* out (new, x's shape) = (x - mean[c]) / sqrt(var[c] + eps) * weight[c]
 * + bias[c] along axis 1 of x (f32, at least 2 axes), in one backend
 * pass; mean, var, weight, bias are [C] (f32 or f16) or NULL (0, 1, 1, 0).
 * With bias alone it adds a per-channel bias (api/norm.c). */
wt_status wt_channel_norm(const wt_tensor *x, const wt_tensor *mean, const wt_tensor *var,
                          const wt_tensor *weight, const wt_tensor *bias, float eps, wt_tensor **out);
/* --- reliability: shared pooling shape rule --- */
/* A pooling's output extent along one axis from its input extent in, kernel
 * k, stride s, padding pad (both sides) and dilation d (PyTorch's rule;
 * api/pool.c); INVALID_ARGUMENT for bad options, SHAPE when the window
 * does not fit. */
wt_status wt_pool_axis_size(const char *fn, const char *axis, int64_t in, int64_t k, int64_t s,
                            int64_t before, int64_t after, int64_t d, bool ceil_mode, bool is_max, int64_t *out);

#endif
