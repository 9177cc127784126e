/* The derivative rules (one per catalogue op; the table is rules_table.c)
 * and the helpers they share. Rules are written with public ops, run
 * with recording paused; chain.h keeps their temporaries. */
#ifndef WT_AUTOGRAD_RULES_H
#define WT_AUTOGRAD_RULES_H

#include "api/chain.h"
#include "autograd/tape.h"

wt_status wt_grad_identity(const wt_tensor *g, wt_tensor **out);
/* g reshaped to input i's shape. */
wt_status wt_grad_reshape_in(const wt_grad_node *n, int i, const wt_tensor *g, wt_tensor **out);
/* Reductions (input 0; p.i[0] naxes, p.i[1..] axes, p.b[0] keepdims):
 * which axes were reduced and how many elements each output summed;
 * t (of the result's shape) with the reduced axes back as size 1, or
 * expanded to the input's shape. */
int wt_grad_reduced_axes(const wt_grad_node *n, bool reduced[WT_MAX_DIMS]);
double wt_grad_reduced_count(const wt_grad_node *n);
wt_status wt_grad_keepdims(const wt_grad_node *n, const wt_tensor *t, wt_tensor **out);
wt_status wt_grad_expand_back(const wt_grad_node *n, const wt_tensor *t, wt_tensor **out);

/* Keeps a chain's final result as gin (one more reference). */
static inline void keep_as(chain *c, wt_tensor *t, wt_tensor **gin)
{
    if (c->st == WT_OK && t) give(t, gin);
}

#define RULE(name) wt_status name(const wt_grad_node *n, wt_tensor *const *gout, wt_tensor **gin)
#define RULES_ELEMENTWISE(X)                                                                     \
    X(grad_neg) X(grad_exp) X(grad_log) X(grad_sqrt) X(grad_relu) X(grad_sigmoid) X(grad_tanh)    \
    X(grad_abs) X(grad_zero) X(grad_square) X(grad_reciprocal) X(grad_rsqrt) X(grad_sin)          \
    X(grad_cos) X(grad_exp2) X(grad_log2) X(grad_log1p) X(grad_expm1) X(grad_erf) X(grad_gelu)    \
    X(grad_gelu_tanh) X(grad_silu) X(grad_softplus) X(grad_softsign) X(grad_mish) X(grad_hardsigmoid)             \
    X(grad_hardswish) X(grad_leaky_relu) X(grad_elu) X(grad_clamp) X(grad_add) X(grad_sub)        \
    X(grad_mul) X(grad_div) X(grad_maximum) X(grad_minimum) X(grad_pow) X(grad_fmod)              \
    X(grad_atan2) X(grad_remainder) X(grad_where) X(grad_masked_fill) X(grad_pass)
#define RULES_SHAPE(X)                                                                           \
    X(grad_reshape) X(grad_permute) X(grad_transpose) X(grad_slice) X(grad_expand) X(grad_split)  \
    X(grad_concat) X(grad_stack) X(grad_pad) X(grad_repeat) X(grad_flip) X(grad_roll)             \
    X(grad_tril) X(grad_triu) X(grad_gather) X(grad_index_select) X(grad_embedding)               \
    X(grad_scatter_add) X(grad_index_add) X(grad_sort) X(grad_cumsum) X(grad_cumprod)
#define RULES_NN(X)                                                                              \
    X(grad_sum) X(grad_mean) X(grad_maxmin) X(grad_prod) X(grad_var) X(grad_std)                  \
    X(grad_logsumexp) X(grad_norm) X(grad_matmul) X(grad_linear) X(grad_linear_fused) X(grad_softmax)                 \
    X(grad_log_softmax) X(grad_layer_norm) X(grad_rms_norm) X(grad_cross_entropy)                 \
    X(grad_attention) X(grad_rope) X(grad_conv2d) X(grad_conv1d) X(grad_max_pool2d)               \
    X(grad_avg_pool2d) X(grad_dropout) X(grad_interpolate) X(grad_conv_transpose2d)                \
    X(grad_adaptive_avg_pool2d) X(grad_batch_norm) X(grad_group_norm)
#define DECLARE_RULE(name) RULE(name);
RULES_ELEMENTWISE(DECLARE_RULE)
RULES_SHAPE(DECLARE_RULE)
RULES_NN(DECLARE_RULE)
#undef DECLARE_RULE

#endif /* WT_AUTOGRAD_RULES_H */
