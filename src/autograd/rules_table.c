/* The derivative of every catalogue op (core/ops.def), one row each:
 * what the rule needs kept from the forward pass, or why there is none.
 * tests/autograd.c fails for an op without a row. */
#include "autograd/rules.h"

#define R(OP, fn, in, out) [WT_OP_##OP] = {WT_GRAD_RULE, fn, in, out},
#define NONDIFF(OP) [WT_OP_##OP] = {WT_GRAD_NONDIFF, NULL, 0, 0},
#define NO_INPUTS(OP) [WT_OP_##OP] = {WT_GRAD_NO_INPUTS, NULL, 0, 0},
#define IN_PLACE(OP) [WT_OP_##OP] = {WT_GRAD_IN_PLACE, NULL, 0, 0},
#define NO_RULE_YET(OP) [WT_OP_##OP] = {WT_GRAD_NO_RULE_YET, NULL, 0, 0},
#define COMPOSED(OP) [WT_OP_##OP] = {WT_GRAD_COMPOSED, NULL, 0, 0},
/* bits of the inputs / outputs kept */
#define NONE 0u
#define I0 1u
#define I1 2u
#define I01 3u
#define O0 1u

const wt_grad_rule wt_grad_rules[WT_OP_COUNT] = {
    /* elementwise: unary */
    R(NEG, grad_neg, NONE, NONE)
    R(EXP, grad_exp, NONE, O0)
    R(LOG, grad_log, I0, NONE)
    R(SQRT, grad_sqrt, NONE, O0)
    R(RELU, grad_relu, I0, NONE)
    R(SIGMOID, grad_sigmoid, I0, NONE)
    R(TANH, grad_tanh, I0, NONE)
    R(ABS, grad_abs, I0, NONE)
    R(SIGN, grad_zero, NONE, NONE)
    R(FLOOR, grad_zero, NONE, NONE)
    R(CEIL, grad_zero, NONE, NONE)
    R(ROUND, grad_zero, NONE, NONE)
    R(SQUARE, grad_square, I0, NONE)
    R(RECIPROCAL, grad_reciprocal, NONE, O0)
    R(RSQRT, grad_rsqrt, NONE, O0)
    R(SIN, grad_sin, I0, NONE)
    R(COS, grad_cos, I0, NONE)
    R(EXP2, grad_exp2, NONE, O0)
    R(LOG2, grad_log2, I0, NONE)
    R(LOG1P, grad_log1p, I0, NONE)
    R(EXPM1, grad_expm1, NONE, O0)
    R(ERF, grad_erf, I0, NONE)
    R(GELU, grad_gelu, I0, NONE)
    R(GELU_TANH, grad_gelu_tanh, I0, NONE)
    R(SILU, grad_silu, I0, NONE)
    R(SOFTPLUS, grad_softplus, I0, NONE)
    R(SOFTSIGN, grad_softsign, I0, NONE)
    R(MISH, grad_mish, I0, NONE)
    R(HARDSIGMOID, grad_hardsigmoid, I0, NONE)
    R(HARDSWISH, grad_hardswish, I0, NONE)
    R(LEAKY_RELU, grad_leaky_relu, I0, NONE)
    R(ELU, grad_elu, I0, NONE)
    R(CLAMP, grad_clamp, I0, NONE)
    NONDIFF(LOGICAL_NOT)
    /* elementwise: binary */
    R(ADD, grad_add, NONE, NONE)
    R(SUB, grad_sub, NONE, NONE)
    R(MUL, grad_mul, I01, NONE)
    R(DIV, grad_div, I01, NONE)
    R(MAXIMUM, grad_maximum, I01, NONE)
    R(MINIMUM, grad_minimum, I01, NONE)
    R(POW, grad_pow, I01, O0)
    R(FMOD, grad_fmod, I01, NONE)
    R(ATAN2, grad_atan2, I01, NONE)
    R(FLOOR_DIVIDE, grad_zero, NONE, NONE)
    R(REMAINDER, grad_remainder, I01, NONE)
    NONDIFF(EQ) NONDIFF(NE) NONDIFF(LT) NONDIFF(LE) NONDIFF(GT) NONDIFF(GE)
    NONDIFF(LOGICAL_AND) NONDIFF(LOGICAL_OR) NONDIFF(LOGICAL_XOR)
    /* elementwise: own kernels */
    R(WHERE, grad_where, I0, NONE)
    R(MASKED_FILL, grad_masked_fill, I1, NONE)
    R(CAST, grad_reshape, NONE, NONE)
    /* views and copies */
    R(RESHAPE, grad_reshape, NONE, NONE)
    R(PERMUTE, grad_permute, NONE, NONE)
    R(TRANSPOSE, grad_transpose, NONE, NONE)
    R(SLICE, grad_slice, NONE, NONE)
    R(EXPAND, grad_expand, NONE, NONE)
    R(COPY, grad_reshape, NONE, NONE)
    R(CONTIGUOUS, grad_reshape, NONE, NONE)
    /* linear algebra */
    R(MATMUL, grad_matmul, I01, NONE)
    /* quantised weights: the blocks are integers (quantize's result,
     * dequantize's input); linear_quant's dx (dy @ W) is still to come */
    NONDIFF(QUANTIZE) NONDIFF(DEQUANTIZE)
    NO_RULE_YET(LINEAR_QUANT)
    /* reductions, scans */
    R(SUM, grad_sum, NONE, NONE)
    R(MEAN, grad_mean, NONE, NONE)
    R(MAX, grad_maxmin, I0, O0)
    R(MIN, grad_maxmin, I0, O0)
    R(PROD, grad_prod, I0, O0)
    R(VAR, grad_var, I0, NONE)
    R(STD, grad_std, I0, O0)
    R(LOGSUMEXP, grad_logsumexp, I0, O0)
    R(NORM, grad_norm, I0, O0)
    NONDIFF(ALL) NONDIFF(ANY) NONDIFF(ARGMAX) NONDIFF(ARGMIN)
    NONDIFF(SAMPLE) /* token ids */
    R(CUMSUM, grad_cumsum, NONE, NONE)
    R(CUMPROD, grad_cumprod, I0, O0)
    /* creation and random numbers */
    NO_INPUTS(TENSOR_ONES) NO_INPUTS(ARANGE) NO_INPUTS(LINSPACE) NO_INPUTS(EYE)
    NO_INPUTS(RAND) NO_INPUTS(RANDN)
    R(DROPOUT, grad_dropout, NONE, NONE)
    /* data movement */
    R(SQUEEZE, grad_reshape, NONE, NONE)
    R(UNSQUEEZE, grad_reshape, NONE, NONE)
    R(FLATTEN, grad_reshape, NONE, NONE)
    R(SPLIT, grad_split, NONE, NONE)
    R(CHUNK, grad_split, NONE, NONE)
    R(CONCAT, grad_concat, NONE, NONE)
    R(STACK, grad_stack, NONE, NONE)
    IN_PLACE(COPY_INTO)
    R(PAD, grad_pad, NONE, NONE)
    R(REPEAT, grad_repeat, NONE, NONE)
    R(TILE, grad_repeat, NONE, NONE)
    R(FLIP, grad_flip, NONE, NONE)
    R(ROLL, grad_roll, NONE, NONE)
    R(TRIL, grad_tril, NONE, NONE)
    R(TRIU, grad_triu, NONE, NONE)
    R(GATHER, grad_gather, I1, NONE)
    R(INDEX_SELECT, grad_index_select, I1, NONE)
    R(EMBEDDING, grad_embedding, I1, NONE)
    R(SCATTER_ADD, grad_scatter_add, I1, NONE)
    R(INDEX_ADD, grad_index_add, I1, NONE)
    NONDIFF(ONE_HOT)
    R(SORT, grad_sort, NONE, NONE)
    NONDIFF(ARGSORT)
    R(TOPK, grad_sort, NONE, NONE)
    /* nn: convolution, pooling, batch and group norm */
    R(CONV2D, grad_conv2d, I01, NONE)
    R(CONV1D, grad_conv1d, I01, NONE)
    R(CONV_TRANSPOSE2D, grad_conv_transpose2d, I01, NONE)
    R(MAX_POOL2D, grad_max_pool2d, I0, NONE)
    R(AVG_POOL2D, grad_avg_pool2d, I0, NONE)
    R(ADAPTIVE_AVG_POOL2D, grad_adaptive_avg_pool2d, NONE, NONE)
    R(ADAPTIVE_MAX_POOL2D, grad_max_pool2d, I0, NONE)
    R(GLOBAL_AVG_POOL2D, grad_mean, NONE, NONE)
    R(GLOBAL_MAX_POOL2D, grad_maxmin, I0, O0)
    R(BATCH_NORM, grad_batch_norm, I01, NONE)
    R(GROUP_NORM, grad_group_norm, I01, NONE)
    R(INTERPOLATE, grad_interpolate, I0, NONE)
    R(UPSAMPLE2D, grad_interpolate, I0, NONE)
    /* nn: attention, rope, linear, softmax and norms */
    R(SOFTMAX, grad_softmax, NONE, O0)
    R(LAYERNORM, grad_layer_norm, I01, NONE)
    R(RMSNORM, grad_rms_norm, I01, NONE)
    R(LOG_SOFTMAX, grad_log_softmax, NONE, O0)
    R(LAYER_NORM, grad_layer_norm, I01, NONE)
    R(RMS_NORM, grad_rms_norm, I01, NONE)
    R(SCALED_DOT_PRODUCT_ATTENTION, grad_attention, 0xfu, O0)
    R(ROPE, grad_rope, NONE, NONE)
    R(LINEAR, grad_linear, I01, NONE)
    /* One op without rms_norm and swiglu (f32); else recorded as its parts:
     * rms_norm, gelu, linear, silu, mul, add. */
    R(LINEAR_FUSED, grad_linear_fused, I01, NONE)
    IN_PLACE(ROPE_KV_CACHE) /* writes the cache; refused while recording */
    IN_PLACE(ROPE_KV_ATTENTION) /* writes the cache, as ROPE_KV_CACHE */
    /* training: backward ops are not differentiated again (no
     * higher-order gradients); the loss is; optimizer steps update in place */
    NO_RULE_YET(ACTIVATION_BACKWARD)
    R(CROSS_ENTROPY, grad_cross_entropy, I01, NONE)
    NO_RULE_YET(CROSS_ENTROPY_BACKWARD)
    NO_RULE_YET(EMBEDDING_BACKWARD)
    NO_RULE_YET(LAYERNORM_BACKWARD)
    NO_RULE_YET(BATCH_NORM_BACKWARD)
    NO_RULE_YET(CONV2D_BACKWARD)
    NO_RULE_YET(MAX_POOL2D_BACKWARD)
    NO_RULE_YET(AVG_POOL2D_BACKWARD)
    NO_RULE_YET(INTERPOLATE_BACKWARD)
    IN_PLACE(SGD_STEP)
    IN_PLACE(ADAMW_STEP)
};

wt_op_grad wt_op_gradient(int op)
{
    if (op < 0 || op >= WT_OP_COUNT) return WT_OP_GRAD_UNKNOWN;
    switch (wt_grad_rules[op].kind) {
    case WT_GRAD_RULE: return wt_grad_rules[op].rule ? WT_OP_GRAD_RULE : WT_OP_GRAD_UNKNOWN;
    case WT_GRAD_NONDIFF: return WT_OP_GRAD_NOT_DIFFERENTIABLE;
    case WT_GRAD_NO_INPUTS: return WT_OP_GRAD_NO_INPUTS;
    case WT_GRAD_IN_PLACE: return WT_OP_GRAD_IN_PLACE;
    case WT_GRAD_NO_RULE_YET: return WT_OP_GRAD_NO_RULE_YET;
    case WT_GRAD_COMPOSED: return WT_OP_GRAD_RULE;
    case WT_GRAD_MISSING: break;
    }
    return WT_OP_GRAD_UNKNOWN;
}
