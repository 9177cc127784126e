/* Bad-input rows of the ops: shape and index ops, sorting, creation,
 * convolution, pooling, normalisation, transformer ops, quantised weights. */
#define _POSIX_C_SOURCE 200809L
#include "bad_input_slots.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* shape ops */
ROWFN(squeeze) { static const int ax[1] = {0}; return wt_squeeze(TA("x", e->one), 1, PTR("axes", ax), OUT("out")); }
ROWFN(unsqueeze) { return wt_unsqueeze(TA("x", e->m35), AX("axis", 1), OUT("out")); }
ROWFN(flatten) { return wt_flatten(TA("x", e->x4), AX("start", 1), AX("end", -1), OUT("out")); }
ROWFN(concat)
{
    const wt_tensor *xs[2] = {TA("xs[0]", e->m35), T("xs[1]", e->m35)};
    return wt_concat((int)POS("n", 2), PTR("xs", xs), AX("axis", 0), OUT("out"));
}
ROWFN(stack)
{
    const wt_tensor *xs[2] = {TA("xs[0]", e->m35), T("xs[1]", e->m35)};
    return wt_stack((int)POS("n", 2), PTR("xs", xs), AX("axis", 0), OUT("out"));
}
ROWFN(split)
{
    static const int64_t sizes[2] = {2, 3};
    return wt_split(TA("x", e->m35), AX("axis", 1), (int)POS("n", 2), PTR("sizes", sizes), out_array(m, "outs", 2));
}
ROWFN(chunk)
{
    int nout = 0;
    return wt_chunk(TA("x", e->m35), AX("axis", 1), (int)POS("chunks", 2), PTR("nout", &nout), out_array(m, "outs", 2));
}
ROWFN(gather) { return wt_gather(TA("x", e->m35), AX("axis", 0), TI("index", e->idx35), OUT("out")); }
ROWFN(index_select) { return wt_index_select(TA("x", e->m35), AX("axis", 0), TI("index", e->idx2), OUT("out")); }
ROWFN(embedding) { return wt_embedding(TA("table", e->table), TI("index", e->idx2), OUT("out")); }
ROWFN(scatter_add)
{
    return wt_scatter_add(T("x", e->m35), AX("axis", 0), TI("index", e->idx35), T("src", e->m35), OUT("out"));
}
ROWFN(index_add)
{
    return wt_index_add(T("x", e->table), AX("axis", 0), TI("index", e->idx2), T("src", e->dy25), OUT("out"));
}
ROWFN(copy_into_at)
{
    return wt_copy_into_at(TWA("dst", e->cache35), AX("axis", 0), TI("start", e->start1), TA("src", e->v5));
}
/* num_classes -1 means max(index) + 1: -2 is the bad count. */
ROWFN(one_hot) { return wt_one_hot(TI("index", e->idx2), scalar_slot(m, K_NEG2, "num_classes", 4), OUT("out")); }
ROWFN(pad)
{
    static const int64_t pads[2] = {1, 2};
    return wt_pad(TA("x", e->m35), (int)POS("npads", 2), PTR("pads", pads), WT_PAD_CONSTANT, 0.0, OUT("out"));
}
ROWFN(repeat)
{
    static const int64_t reps[2] = {2, 1};
    return wt_repeat(TA("x", e->m35), (int)POS("n", 2), PTR("repeats", reps), OUT("out"));
}
ROWFN(tile)
{
    static const int64_t reps[2] = {2, 1};
    return wt_tile(TA("x", e->m35), (int)POS("n", 2), PTR("reps", reps), OUT("out"));
}
ROWFN(flip) { static const int ax[1] = {1}; return wt_flip(TA("x", e->m35), (int)POS("naxes", 1), PTR("axes", ax), OUT("out")); }
ROWFN(roll)
{
    static const int ax[1] = {1};
    static const int64_t sh[1] = {2};
    return wt_roll(TA("x", e->m35), (int)POS("naxes", 1), PTR("shifts", sh), PTR("axes", ax), OUT("out"));
}
ROWFN(tril) { return wt_tril(TA("x", e->m35), 0, OUT("out")); }
ROWFN(triu) { return wt_triu(TA("x", e->m35), 0, OUT("out")); }
ROWFN(sort) { return wt_sort(TA("x", e->m35), AX("axis", 1), false, OUT("values"), OUTO("indices")); }
ROWFN(argsort) { return wt_argsort(TA("x", e->m35), AX("axis", 1), true, OUT("out")); }
ROWFN(topk) { return wt_topk(TA("x", e->m35), INDEX("k", 2), true, OUT("values"), OUTO("indices")); }
ROWFN(topk_v2)
{
    return wt_topk_v2(TA("x", e->m35), INDEX("k", 2), AX("axis", 0), false, OUT("values"), OUTO("indices"));
}

/* creation (the dtype-second forms) and dropout */
static const int64_t SHAPE23[2] = {2, 3};
ROWFN(tensor_arange) { return wt_tensor_arange(CTX("ctx", e->ctx), DT("dtype", WT_F32), 0.0, 5.0, 1.0, OUT("out")); }
ROWFN(tensor_linspace)
{
    return wt_tensor_linspace(CTX("ctx", e->ctx), DT("dtype", WT_F32), 0.0, 1.0, NONNEG("num", 5), true, OUT("out"));
}
ROWFN(tensor_eye)
{
    return wt_tensor_eye(CTX("ctx", e->ctx), DT("dtype", WT_F32), NONNEG("n", 3), NONNEG("m", 4), 1, OUT("out"));
}
ROWFN(tensor_rand)
{
    return wt_tensor_rand(CTX("ctx", e->ctx), DT("dtype", WT_F32), (int)POS("ndim", 2), PTR("shape", SHAPE23), 7,
                          OUT("out"));
}
ROWFN(tensor_randn)
{
    return wt_tensor_randn(CTX("ctx", e->ctx), DT("dtype", WT_F16), (int)POS("ndim", 2), PTR("shape", SHAPE23), 7,
                           OUT("out"));
}
ROWFN(dropout_v2)
{
    wt_dropout_options o;
    wt_dropout_options_init(&o);
    o.p = 0.25;
    return wt_dropout_v2(TA("x", e->m35), PTRO("opts", &o), OUT("out"));
}

/* convolution, pooling, normalisation */
ROWFN(conv2d) { return wt_conv2d(T("x", e->x4), T("w", e->w4), TO("bias", e->b4v), CONV("opts"), OUT("out")); }
ROWFN(conv1d) { return wt_conv1d(T("x", e->x3), T("w", e->w3), TO("bias", e->b4v), CONV("opts"), OUT("out")); }
ROWFN(conv_transpose2d)
{
    return wt_conv_transpose2d(T("x", e->dy4), T("w", e->w4), TO("bias", e->c3), CONV("opts"), OUT("out"));
}
ROWFN(max_pool2d) { return wt_max_pool2d(T("x", e->x4), POOL("opts"), OUT("out"), OUTO("indices")); }
ROWFN(avg_pool2d) { return wt_avg_pool2d(T("x", e->x4), POOL("opts"), OUT("out")); }
ROWFN(max_pool2d_v2) { return wt_max_pool2d_v2(T("x", e->x4), POOL2D("opts"), OUT("out"), OUTO("indices")); }
ROWFN(avg_pool2d_v2) { return wt_avg_pool2d_v2(T("x", e->x4), POOL2D("opts"), OUT("out")); }
ROWFN(adaptive_avg_pool2d) { return wt_adaptive_avg_pool2d(T("x", e->x4), POS("out_h", 2), POS("out_w", 3), OUT("out")); }
ROWFN(adaptive_max_pool2d)
{
    return wt_adaptive_max_pool2d(T("x", e->x4), POS("out_h", 2), POS("out_w", 3), OUT("out"), OUTO("indices"));
}
ROWFN(interpolate) { return wt_interpolate(T("x", e->x4), INTERP("opts"), OUT("out")); }
ROWFN(upsample2d) { return wt_upsample2d(T("x", e->x4), FACTOR("scale_factor", 2.0), WT_INTERP_BILINEAR, OUT("out")); }
ROWFN(global_avg_pool2d) { return wt_global_avg_pool2d(T("x", e->x4), OUT("out")); }
ROWFN(global_max_pool2d) { return wt_global_max_pool2d(T("x", e->x4), OUT("out")); }
ROWFN(batch_norm)
{
    wt_batch_norm_options o;
    wt_batch_norm_options_init(&o);
    o.training = true;
    /* Running statistics of their own for each call (updated in place). */
    wt_tensor *rm = NULL, *rv = NULL;
    const int64_t c = 3;
    if (wt_tensor_zeros(e->ctx, WT_F32, 1, &c, &rm) != WT_OK || wt_tensor_ones(e->ctx, WT_F32, 1, &c, &rv) != WT_OK) {
        wt_tensor_release(rm);
        return WT_ERR_BACKEND;
    }
    wt_status st = wt_batch_norm(T("x", e->x4), TW("running_mean", rm), TW("running_var", rv), TO("weight", e->c3),
                                 TO("bias", e->c3), PTRO("opts", &o), OUT("out"), OUTO("batch_mean"),
                                 OUTO("batch_var"));
    wt_tensor_release(rm);
    wt_tensor_release(rv);
    return st;
}
ROWFN(group_norm)
{
    return wt_group_norm(T("x", e->x4), POS("num_groups", 3), TO("weight", e->c3), TO("bias", e->c3), EPS("eps", 1e-5f),
                         OUT("out"));
}
ROWFN(group_norm_v2)
{
    return wt_group_norm_v2(T("x", e->x4), POS("num_groups", 3), TO("weight", e->c3), TO("bias", e->c3),
                            PTRO("opts", NULL), OUT("out"));
}
ROWFN(layer_norm)
{
    return wt_layer_norm(T("x", e->m35), (int)POS("normalized_ndim", 1), TO("weight", e->v5), TO("bias", e->v5),
                         EPS("eps", 1e-5f), OUT("out"));
}
ROWFN(rms_norm)
{
    return wt_rms_norm(T("x", e->m35), (int)POS("normalized_ndim", 1), TO("weight", e->v5), EPS("eps", 1e-5f), OUT("out"));
}
ROWFN(scaled_dot_product_attention)
{
    return wt_scaled_dot_product_attention(T("q", e->q), T("k", e->q), T("v", e->q), TO("mask", NULL), false, 0.0f,
                                           OUT("out"));
}
ROWFN(rope) { return wt_rope(T("x", e->q), 10000.0, NONNEG("offset", 0), WT_ROPE_BHSD, OUT("out")); }
ROWFN(scaled_dot_product_attention_v2)
{
    wt_attention_options o;
    wt_attention_options_init(&o);
    o.causal = true;
    return wt_scaled_dot_product_attention_v2(T("q", e->q), T("k", e->q), T("v", e->q), TO("mask", NULL),
                                              PTRO("opts", &o), OUT("out"));
}
ROWFN(rope_v2)
{
    wt_rope_options o;
    wt_rope_options_init(&o);
    o.offset = NONNEG("offset", 0);
    return wt_rope_v2(T("x", e->q), PTRO("opts", &o), OUT("out"));
}
ROWFN(linear) { return wt_linear(T("x", e->m35), T("w", e->w45), TO("bias", e->b4v), OUT("out")); }
ROWFN(rope_kv_cache)
{
    wt_rope_kv_cache_options o;
    wt_rope_kv_cache_options_init(&o);
    o.offset = NONNEG("offset", 0);
    return wt_rope_kv_cache(TW("kv_cache", e->kvc), T("qkv", e->qkv4), POS("q_heads", 1), PTRO("opts", &o),
                            OUT("q"));
}
ROWFN(rope_kv_attention)
{
    wt_rope_kv_cache_options o;
    wt_rope_kv_cache_options_init(&o);
    o.offset = NONNEG("offset", 0);
    wt_attention_options ao;
    wt_attention_options_init(&ao);
    return wt_rope_kv_attention(TW("kv_cache", e->kvc), T("qkv", e->qkv4), POS("q_heads", 1), PTRO("rope", &o),
                                PTRO("attn", &ao), OUT("out"));
}
ROWFN(linear_fused)
{
    wt_linear_fused_options o;
    wt_linear_fused_options_init(&o);
    o.rms_norm = true;
    o.norm_weight = e->v5;
    return wt_linear_fused(T("x", e->m35), T("w", e->w45), TO("bias", e->b4v), PTRO("opts", &o), OUT("out"));
}
ROWFN(sample)
{
    wt_sample_options o;
    wt_sample_options_init(&o);
    o.top_k = NONNEG("top_k", 0);
    return wt_sample(T("logits", e->m35), PTRO("opts", &o), OUT("out"));
}
/* quantised weights */
ROWFN(quant_from_blocks)
{
    return wt_quant_from_blocks(CTX("ctx", e->ctx), QTYPE("type", WT_QUANT_Q8_0), POS("n", 3), POS("k", 32),
                                PTR("blocks", e->qblocks), BYTES("bytes", sizeof e->qblocks), OUT("out"));
}
ROWFN(quantize) { return wt_quantize(T("x", e->qx), QTYPE("type", WT_QUANT_Q4_0), OUT("out")); }
ROWFN(dequantize)
{
    return wt_dequantize(TI("w", e->qw), QTYPE("type", WT_QUANT_Q8_0), DT("dtype", WT_F16), OUT("out"));
}
ROWFN(linear_quant)
{
    return wt_linear_quant(T("x", e->qx), TI("w", e->qw), QTYPE("type", WT_QUANT_Q8_0), TO("bias", e->qb),
                           OUT("out"));
}
ROWFN(linear_quant_fused)
{
    wt_linear_fused_options o;
    wt_linear_fused_options_init(&o);
    return wt_linear_quant_fused(T("x", e->qx), TI("w", e->qw), QTYPE("type", WT_QUANT_Q8_0), TO("bias", e->qb),
                                 PTRO("opts", &o), OUT("out"));
}
ROWFN(embedding_quant)
{
    return wt_embedding_quant(TI("table", e->qw), QTYPE("type", WT_QUANT_Q8_0), TI("index", e->idx2),
                              DT("dtype", WT_F32), OUT("out"));
}

static const slot_row ROWS[] = {
    /* --- shape and index ops, sorting --- */
    R(squeeze), R(unsqueeze), R(flatten), R(concat), R(stack), R(split), R(chunk), R(gather),
    R(index_select), R(embedding), R(scatter_add), R(index_add), R(copy_into_at), R(one_hot), R(pad), R(repeat),
    R(tile), R(flip), R(roll), R(tril), R(triu), R(sort), R(argsort), R(topk),
    R(topk_v2), R(tensor_arange), R(tensor_linspace), R(tensor_eye), R(tensor_rand), R(tensor_randn),
    R(dropout_v2),
    /* --- convolution, pooling, normalisation, transformer ops --- */
    R(conv2d), R(conv1d), R(conv_transpose2d), R(max_pool2d), R(avg_pool2d), R(max_pool2d_v2), R(avg_pool2d_v2),
    R(adaptive_avg_pool2d),
    R(adaptive_max_pool2d), R(global_avg_pool2d), R(global_max_pool2d), R(batch_norm), R(group_norm),
    R(interpolate), R(upsample2d),
    R(layer_norm), R(rms_norm), R(scaled_dot_product_attention), R(rope), R(linear), R(linear_fused), R(rope_kv_cache),
    R(rope_kv_attention),
    R(group_norm_v2), R(scaled_dot_product_attention_v2), R(rope_v2),
    R(quant_from_blocks), R(quantize), R(dequantize), R(linear_quant), R(linear_quant_fused), R(embedding_quant),
    R(sample),
};
const slot_table bad_input_rows_ops = {ROWS, sizeof ROWS / sizeof ROWS[0]};
