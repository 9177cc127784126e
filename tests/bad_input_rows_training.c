/* Bad-input rows of the training functions: backward ops, losses and
 * optimizer steps. */
#define _POSIX_C_SOURCE 200809L
#include "bad_input_slots.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* training */
ROWFN(activation_backward) { return wt_activation_backward(WT_ACT_SILU, T("dy", e->m35), T("x", e->m35), OUT("dx")); }
ROWFN(relu_backward) { return wt_relu_backward(T("dy", e->m35), T("x", e->m35), OUT("dx")); }
ROWFN(sigmoid_backward) { return wt_sigmoid_backward(T("dy", e->m35), T("x", e->m35), OUT("dx")); }
ROWFN(tanh_backward) { return wt_tanh_backward(T("dy", e->m35), T("x", e->m35), OUT("dx")); }
ROWFN(silu_backward) { return wt_silu_backward(T("dy", e->m35), T("x", e->m35), OUT("dx")); }
ROWFN(gelu_backward) { return wt_gelu_backward(T("dy", e->m35), T("x", e->m35), OUT("dx")); }
ROWFN(gelu_tanh_backward) { return wt_gelu_tanh_backward(T("dy", e->m35), T("x", e->m35), OUT("dx")); }
ROWFN(cross_entropy)
{
    wt_cross_entropy_options o;
    wt_cross_entropy_options_init(&o);
    return wt_cross_entropy(T("logits", e->m35), TI("labels", e->lab3), PTRO("opts", &o), OUT("loss"));
}
ROWFN(cross_entropy_backward)
{
    return wt_cross_entropy_backward(T("logits", e->m35), TI("labels", e->lab3), TO("dloss", NULL), PTRO("opts", NULL),
                                     OUT("dlogits"));
}
ROWFN(cross_entropy_backward_v2)
{
    return wt_cross_entropy_backward_v2(TO("dloss", NULL), T("logits", e->m35), TI("labels", e->lab3),
                                        PTRO("opts", NULL), OUT("dlogits"));
}
ROWFN(embedding_backward)
{
    return wt_embedding_backward(T("dy", e->dy25), TI("indices", e->idx2), POS("num_embeddings", 3), OUT("dweight"));
}
ROWFN(layernorm_backward)
{
    return wt_layernorm_backward(T("x", e->m35), T("weight", e->v5), T("dy", e->m35), EPS("eps", 1e-5f), OUTO("dx"),
                                 OUTO("dweight"), OUTO("dbias"));
}
ROWFN(layer_norm_backward)
{
    return wt_layer_norm_backward(T("dy", e->m35), T("x", e->m35), (int)POS("normalized_ndim", 1), T("weight", e->v5),
                                  EPS("eps", 1e-5f), OUTO("dx"), OUTO("dweight"), OUTO("dbias"));
}
ROWFN(batch_norm_backward)
{
    return wt_batch_norm_backward(T("x", e->x4), T("weight", e->c3), T("running_mean", e->c3), T("running_var", e->c3pos),
                                  false, EPS("eps", 1e-5f), T("dy", e->x4), OUTO("dx"), OUTO("dweight"), OUTO("dbias"));
}
ROWFN(batch_norm_backward_v2)
{
    return wt_batch_norm_backward_v2(T("dy", e->x4), T("x", e->x4), T("running_mean", e->c3),
                                     T("running_var", e->c3pos), T("weight", e->c3), PTRO("opts", NULL), OUTO("dx"),
                                     OUTO("dweight"), OUTO("dbias"));
}
ROWFN(sgd_step)
{
    wt_sgd_options o;
    wt_sgd_options_init(&o);
    o.momentum = 0.9f;
    return wt_sgd_step(TW("param", e->s5a), T("grad", e->g5), TW("momentum_buf", e->s5b), PTRO("opts", &o));
}
ROWFN(adamw_step)
{
    wt_adamw_options o;
    wt_adamw_options_init(&o);
    return wt_adamw_step(TW("param", e->s5a), T("grad", e->g5), TW("m", e->s5b), TW("v", e->s5c), POS("step", 1),
                         PTRO("opts", &o));
}
ROWFN(conv2d_backward)
{
    m->shape_too = true;
    return wt_conv2d_backward(T("x", e->x4), T("w", e->w4), T("dy", e->dy4), CONV("opts"), OUTO("dx"), OUTO("dw"),
                              OUTO("dbias"));
}
ROWFN(conv2d_backward_v2)
{
    m->shape_too = true;
    return wt_conv2d_backward_v2(T("dy", e->dy4), T("x", e->x4), T("w", e->w4), CONV("opts"), OUTO("dx"), OUTO("dw"),
                                 OUTO("dbias"));
}
ROWFN(max_pool2d_backward)
{
    return wt_max_pool2d_backward(T("dy", e->pool_dy), TI("indices", e->pool_idx), T("x", e->x4), OUT("dx"));
}
ROWFN(interpolate_backward)
{
    return wt_interpolate_backward(T("dy", e->pool_dy), T("x", e->x4), INTERP("opts"), OUT("dx"));
}
ROWFN(avg_pool2d_backward) { m->shape_too = true; return wt_avg_pool2d_backward(T("dy", e->pool_dy), T("x", e->x4), POOL("opts"), OUT("dx")); }
ROWFN(avg_pool2d_backward_v2)
{
    m->shape_too = true;
    return wt_avg_pool2d_backward_v2(T("dy", e->pool_dy), T("x", e->x4), POOL2D("opts"), OUT("dx"));
}

static const slot_row ROWS[] = {
    R(activation_backward), R(cross_entropy), R(cross_entropy_backward), R(embedding_backward),
    R(layernorm_backward), R(batch_norm_backward), R(sgd_step), R(adamw_step), R(conv2d_backward),
    R(max_pool2d_backward), R(avg_pool2d_backward), R(interpolate_backward),
    R(relu_backward), R(sigmoid_backward), R(tanh_backward), R(silu_backward), R(gelu_backward),
    R(gelu_tanh_backward), R(cross_entropy_backward_v2), R(layer_norm_backward), R(batch_norm_backward_v2),
    R(conv2d_backward_v2), R(avg_pool2d_backward_v2),
};
const slot_table bad_input_rows_training = {ROWS, sizeof ROWS / sizeof ROWS[0]};
