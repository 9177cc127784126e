/*
 * What `webtensor bench` measures: one table of cases, each a plan (input
 * shapes, label, work) and a run (the ops), and one table of parameters per
 * size set. bench/torch_peer.py times the same cases at the "large" sizes;
 * keep the labels of both in step.
 */
#include <stdio.h>
#include <string.h>

#include "bench_engine.h"

static bench_shape shape1(int64_t a)
{
    bench_shape s = {1, {a}};
    return s;
}
static bench_shape shape2(int64_t a, int64_t b)
{
    bench_shape s = {2, {a, b}};
    return s;
}
static bench_shape shape3(int64_t a, int64_t b, int64_t c)
{
    bench_shape s = {3, {a, b, c}};
    return s;
}

/* ------------------------------------------------------- elementwise */

/* params: n */
static void plan_binary(const int64_t *p, bench_plan *plan)
{
    plan->ninputs = 2;
    plan->inputs[0] = plan->inputs[1] = shape1(p[0]);
    snprintf(plan->label, sizeof plan->label, "%lld", (long long)p[0]);
    plan->work = 3.0 * 4.0 * (double)p[0];
}
static wt_status run_add(wt_tensor *const *in, const int64_t *p, wt_tensor **out)
{
    return wt_add(in[0], in[1], out);
}

static void plan_unary(const int64_t *p, bench_plan *plan)
{
    plan->ninputs = 1;
    plan->inputs[0] = shape1(p[0]);
    snprintf(plan->label, sizeof plan->label, "%lld", (long long)p[0]);
    plan->work = 2.0 * 4.0 * (double)p[0];
}
static wt_status run_exp(wt_tensor *const *in, const int64_t *p, wt_tensor **out)
{
    return wt_exp(in[0], out);
}

/* The same ops on f16 inputs (and so f16 outputs): 2 bytes an element. */
static void plan_binary_f16(const int64_t *p, bench_plan *plan)
{
    plan_binary(p, plan);
    plan->input_dtype = WT_F16;
    plan->work = 3.0 * 2.0 * (double)p[0];
}
static void plan_unary_f16(const int64_t *p, bench_plan *plan)
{
    plan_unary(p, plan);
    plan->input_dtype = WT_F16;
    plan->work = 2.0 * 2.0 * (double)p[0];
}

/* params: length of the chain, n. Each add depends on the previous one, so
 * the time per op is the latency of a small op, not its throughput. */
static void plan_add_chain(const int64_t *p, bench_plan *plan)
{
    plan->ninputs = 2;
    plan->inputs[0] = plan->inputs[1] = shape1(p[1]);
    snprintf(plan->label, sizeof plan->label, "%lldx%lld", (long long)p[0], (long long)p[1]);
    plan->work = 3.0 * 4.0 * (double)p[1];
    plan->ops_per_run = (int)p[0];
}
static wt_status run_add_chain(wt_tensor *const *in, const int64_t *p, wt_tensor **out)
{
    wt_tensor *x = NULL;
    wt_status s = wt_add(in[0], in[1], &x);
    for (int64_t i = 1; s == WT_OK && i < p[0]; i++) {
        wt_tensor *next = NULL;
        s = wt_add(x, in[1], &next);
        wt_tensor_release(x);
        x = next;
    }
    *out = x;
    return s;
}

/* -------------------------------------------------------- reductions */

static void plan_sum_all(const int64_t *p, bench_plan *plan)
{
    plan->ninputs = 1;
    plan->inputs[0] = shape1(p[0]);
    snprintf(plan->label, sizeof plan->label, "%lld", (long long)p[0]);
    plan->work = 4.0 * (double)p[0] + 4.0;
    /* One number summed in different orders: rounding grows with n, while
     * the result itself (random signs) grows only like sqrt(n). */
    plan->check_atol = 1e-6 * (double)p[0];
}
static wt_status run_sum_all(wt_tensor *const *in, const int64_t *p, wt_tensor **out)
{
    return wt_sum(in[0], 0, NULL, false, out);
}
/* The same on f16 input (f32 accumulation, an f16 result). */
static void plan_sum_all_f16(const int64_t *p, bench_plan *plan)
{
    plan_sum_all(p, plan);
    plan->input_dtype = WT_F16;
    plan->work = 2.0 * (double)p[0] + 2.0;
}

/* params: rows, cols */
static void plan_rows(const int64_t *p, bench_plan *plan)
{
    plan->ninputs = 1;
    plan->inputs[0] = shape2(p[0], p[1]);
    snprintf(plan->label, sizeof plan->label, "%lldx%lld", (long long)p[0], (long long)p[1]);
    plan->work = 4.0 * (double)p[0] * (double)p[1] + 4.0 * (double)p[0];
}
static wt_status run_rowsum(wt_tensor *const *in, const int64_t *p, wt_tensor **out)
{
    const int axis = 1;
    return wt_sum(in[0], 1, &axis, false, out);
}

/* ---------------------------------------------------------- row-wise */

/* params: rows, cols. Softmax and the norms work over the last axis; one
 * pass over x in and one over the output is the least any kernel can move
 * (weight and bias are [cols], read once as well). */
static void plan_softmax(const int64_t *p, bench_plan *plan)
{
    plan->ninputs = 1;
    plan->inputs[0] = shape2(p[0], p[1]);
    snprintf(plan->label, sizeof plan->label, "%lldx%lld", (long long)p[0], (long long)p[1]);
    plan->work = 2.0 * 4.0 * (double)p[0] * (double)p[1];
}
static wt_status run_softmax(wt_tensor *const *in, const int64_t *p, wt_tensor **out)
{
    return wt_softmax(in[0], -1, out);
}

#define LAYERNORM_EPS 1e-5f
#define RMSNORM_EPS 1e-6f

static void plan_layernorm(const int64_t *p, bench_plan *plan)
{
    plan_softmax(p, plan);
    plan->ninputs = 3;
    plan->inputs[1] = plan->inputs[2] = shape1(p[1]);
    plan->work += 2.0 * 4.0 * (double)p[1];
}
static wt_status run_layernorm(wt_tensor *const *in, const int64_t *p, wt_tensor **out)
{
    return wt_layer_norm(in[0], 1, in[1], in[2], LAYERNORM_EPS, out);
}

/* The same on f16 rows: half the bytes each way. */
static void plan_softmax_f16(const int64_t *p, bench_plan *plan)
{
    plan_softmax(p, plan);
    plan->input_dtype = WT_F16;
    plan->work = 2.0 * 2.0 * (double)p[0] * (double)p[1];
}
static void plan_layernorm_f16(const int64_t *p, bench_plan *plan)
{
    plan_layernorm(p, plan);
    plan->input_dtype = WT_F16;
    plan->work = 2.0 * 2.0 * (double)p[0] * (double)p[1] + 2.0 * 2.0 * (double)p[1];
}

static void plan_rmsnorm(const int64_t *p, bench_plan *plan)
{
    plan_softmax(p, plan);
    plan->ninputs = 2;
    plan->inputs[1] = shape1(p[1]);
    plan->work += 4.0 * (double)p[1];
}
static wt_status run_rmsnorm(wt_tensor *const *in, const int64_t *p, wt_tensor **out)
{
    return wt_rms_norm(in[0], 1, in[1], RMSNORM_EPS, out);
}

/* ------------------------------------------------------------ layout */

static void plan_transpose(const int64_t *p, bench_plan *plan)
{
    plan_rows(p, plan);
    plan->work = 2.0 * 4.0 * (double)p[0] * (double)p[1];
}
static wt_status run_transpose(wt_tensor *const *in, const int64_t *p, wt_tensor **out)
{
    wt_tensor *view = NULL;
    wt_status s = wt_transpose(in[0], 0, 1, &view);
    if (s != WT_OK) return s;
    s = wt_contiguous(view, out);
    wt_tensor_release(view);
    return s;
}

/* ------------------------------------------------------------ matmul */

/* params: m, n, k */
static void plan_matmul(const int64_t *p, bench_plan *plan)
{
    plan->ninputs = 2;
    plan->inputs[0] = shape2(p[0], p[2]);
    plan->inputs[1] = shape2(p[2], p[1]);
    snprintf(plan->label, sizeof plan->label, "%lldx%lldx%lld", (long long)p[0], (long long)p[1],
             (long long)p[2]);
    plan->work = 2.0 * (double)p[0] * (double)p[1] * (double)p[2];
}
static wt_status run_matmul(wt_tensor *const *in, const int64_t *p, wt_tensor **out)
{
    return wt_matmul(in[0], in[1], out);
}

/* params: batch, m, n, k */
static void plan_bmm(const int64_t *p, bench_plan *plan)
{
    plan->ninputs = 2;
    plan->inputs[0] = shape3(p[0], p[1], p[3]);
    plan->inputs[1] = shape3(p[0], p[3], p[2]);
    snprintf(plan->label, sizeof plan->label, "%lldx%lldx%lldx%lld", (long long)p[0],
             (long long)p[1], (long long)p[2], (long long)p[3]);
    plan->work = 2.0 * (double)p[0] * (double)p[1] * (double)p[2] * (double)p[3];
}

/* params: rows, cols. Matrix [rows, cols] times vector [cols]: memory-bound,
 * so counted in bytes like the decode step of a language model. */
static void plan_gemv(const int64_t *p, bench_plan *plan)
{
    plan->ninputs = 2;
    plan->inputs[0] = shape2(p[0], p[1]);
    plan->inputs[1] = shape1(p[1]);
    snprintf(plan->label, sizeof plan->label, "%lldx%lld", (long long)p[0], (long long)p[1]);
    plan->work = 4.0 * ((double)p[0] * (double)p[1] + (double)p[0] + (double)p[1]);
}

/* --- matrix products: f16, and the linear layout --- */

/* params: m, n, k. f16 operands, f32 accumulation, f16 result. */
static void plan_matmul_f16(const int64_t *p, bench_plan *plan)
{
    plan_matmul(p, plan);
    plan->input_dtype = WT_F16;
}

/* params: batch, m, n, k in f16. */
static void plan_bmm_f16(const int64_t *p, bench_plan *plan)
{
    plan_bmm(p, plan);
    plan->input_dtype = WT_F16;
}

/* params: rows, cols: [rows, cols] @ [cols] in f16, bytes at 2 each. */
static void plan_gemv_f16(const int64_t *p, bench_plan *plan)
{
    plan_gemv(p, plan);
    plan->input_dtype = WT_F16;
    plan->work /= 2.0;
}

/* --- quantised weights: the fused dequantise-GEMV of decode --- */

/* params: rows N, cols K: y [1, N] = x [1, K] @ W^T with W [N, K] in
 * ggml blocks, counted in the weight's quantised bytes (plus x and y),
 * rotating through at least 256 MB of weights so that none is served
 * from a GPU's L2. */
static void plan_gemv_quant(const int64_t *p, bench_plan *plan, wt_quant_type type)
{
    plan->ninputs = 2;
    plan->inputs[0] = shape2(p[0], p[1]);
    plan->inputs[1] = shape2(1, p[1]);
    plan->quant_type = (int)type;
    plan->rotate_bytes = 256.0 * 1024 * 1024;
    snprintf(plan->label, sizeof plan->label, "%lldx%lld", (long long)p[0], (long long)p[1]);
    const double elems = type == WT_QUANT_Q4_K || type == WT_QUANT_Q6_K ? 256.0 : 32.0;
    const double bytes = type == WT_QUANT_Q8_0 ? 34.0 : type == WT_QUANT_Q4_0 ? 18.0 : type == WT_QUANT_Q4_K ? 144.0 : 210.0;
    plan->work = (double)p[0] * (double)p[1] / elems * bytes + 4.0 * ((double)p[0] + (double)p[1]);
}
static void plan_gemv_q8_0(const int64_t *p, bench_plan *plan) { plan_gemv_quant(p, plan, WT_QUANT_Q8_0); }
static void plan_gemv_q4_0(const int64_t *p, bench_plan *plan) { plan_gemv_quant(p, plan, WT_QUANT_Q4_0); }
static void plan_gemv_q4_k(const int64_t *p, bench_plan *plan) { plan_gemv_quant(p, plan, WT_QUANT_Q4_K); }
static void plan_gemv_q6_k(const int64_t *p, bench_plan *plan) { plan_gemv_quant(p, plan, WT_QUANT_Q6_K); }
static wt_status run_gemv_q8_0(wt_tensor *const *in, const int64_t *p, wt_tensor **out)
{
    (void)p;
    return wt_linear_quant(in[1], in[0], WT_QUANT_Q8_0, NULL, out);
}
static wt_status run_gemv_q4_0(wt_tensor *const *in, const int64_t *p, wt_tensor **out)
{
    (void)p;
    return wt_linear_quant(in[1], in[0], WT_QUANT_Q4_0, NULL, out);
}
static wt_status run_gemv_q4_k(wt_tensor *const *in, const int64_t *p, wt_tensor **out)
{
    (void)p;
    return wt_linear_quant(in[1], in[0], WT_QUANT_Q4_K, NULL, out);
}
static wt_status run_gemv_q6_k(wt_tensor *const *in, const int64_t *p, wt_tensor **out)
{
    (void)p;
    return wt_linear_quant(in[1], in[0], WT_QUANT_Q6_K, NULL, out);
}

/* params: m, n, k. x [m, k] @ w^T for w stored [n, k]: a linear layer's
 * layout, read through a transposed view (no copy). */
static void plan_matmul_nt(const int64_t *p, bench_plan *plan)
{
    plan_matmul(p, plan);
    plan->inputs[1] = shape2(p[1], p[2]);
}
static wt_status run_matmul_nt(wt_tensor *const *in, const int64_t *p, wt_tensor **out)
{
    (void)p;
    wt_tensor *wt = NULL;
    wt_status st = wt_transpose(in[1], 0, 1, &wt);
    if (st == WT_OK) st = wt_matmul(in[0], wt, out);
    wt_tensor_release(wt);
    return st;
}

/* params: m, n, k: the linear layout in f16. */
static void plan_matmul_nt_f16(const int64_t *p, bench_plan *plan)
{
    plan_matmul_nt(p, plan);
    plan->input_dtype = WT_F16;
}

/* --- convolution and attention --- */

/* params: n, c, side, o. x [n, c, side, side] conv w [o, c, 3, 3], padding
 * 1 (the output has x's plane); FLOPs 2 n o side^2 c 9. */
static void plan_conv2d(const int64_t *p, bench_plan *plan)
{
    plan->ninputs = 2;
    plan->inputs[0] = (bench_shape){4, {p[0], p[1], p[2], p[2]}};
    plan->inputs[1] = (bench_shape){4, {p[3], p[1], 3, 3}};
    snprintf(plan->label, sizeof plan->label, "%lldx%lldx%lldx%lldx%lld", (long long)p[0], (long long)p[1],
             (long long)p[2], (long long)p[2], (long long)p[3]);
    plan->work = 2.0 * (double)p[0] * (double)p[3] * (double)p[2] * (double)p[2] * (double)p[1] * 9.0;
}
static void plan_conv2d_f16(const int64_t *p, bench_plan *plan)
{
    plan_conv2d(p, plan);
    plan->input_dtype = WT_F16;
}
static wt_status run_conv2d(wt_tensor *const *in, const int64_t *p, wt_tensor **out)
{
    (void)p;
    wt_conv_options o;
    wt_conv_options_init(&o);
    o.padding[0] = o.padding[1] = o.padding[2] = o.padding[3] = 1;
    return wt_conv2d(in[0], in[1], NULL, &o, out);
}

/* params: batch, q heads, kv heads, sequence. Causal self-attention with
 * head dim 128; FLOPs of the visible half: 4 b hq s^2 128 / 2. */
static void plan_attention(const int64_t *p, bench_plan *plan)
{
    plan->ninputs = 3;
    plan->inputs[0] = (bench_shape){4, {p[0], p[1], p[3], 128}};
    plan->inputs[1] = plan->inputs[2] = (bench_shape){4, {p[0], p[2], p[3], 128}};
    snprintf(plan->label, sizeof plan->label, "%lldx%lldx%lldx%lldx128", (long long)p[0], (long long)p[1],
             (long long)p[2], (long long)p[3]);
    plan->work = 2.0 * (double)p[0] * (double)p[1] * (double)p[3] * (double)p[3] * 128.0;
}
static void plan_attention_f16(const int64_t *p, bench_plan *plan)
{
    plan_attention(p, plan);
    plan->input_dtype = WT_F16;
}
static wt_status run_attention(wt_tensor *const *in, const int64_t *p, wt_tensor **out)
{
    (void)p;
    wt_attention_options o;
    wt_attention_options_init(&o);
    o.causal = true;
    return wt_scaled_dot_product_attention_v2(in[0], in[1], in[2], NULL, &o, out);
}

/* ------------------------------------------------------------ tables */

static const bench_case cases[] = {
    {"add", "a + b, elementwise", BENCH_BYTES, plan_binary, run_add, false},
    {"exp", "exp(x), elementwise", BENCH_BYTES, plan_unary, run_exp, false},
    {"add_f16", "a + b, elementwise, f16", BENCH_BYTES, plan_binary_f16, run_add, false},
    {"exp_f16", "exp(x), elementwise, f16", BENCH_BYTES, plan_unary_f16, run_exp, false},
    {"sum", "sum of all elements", BENCH_BYTES, plan_sum_all, run_sum_all, false},
    {"sum_f16", "sum of all elements, f16", BENCH_BYTES, plan_sum_all_f16, run_sum_all, false},
    {"rowsum", "sum over axis 1 of [rows, cols]", BENCH_BYTES, plan_rows, run_rowsum, false},
    {"softmax", "softmax over the last axis of [rows, cols]", BENCH_BYTES, plan_softmax,
     run_softmax, false},
    {"layernorm", "layernorm over the last axis, weight and bias [cols]", BENCH_BYTES,
     plan_layernorm, run_layernorm, false},
    {"rmsnorm", "rmsnorm over the last axis, weight [cols]", BENCH_BYTES, plan_rmsnorm,
     run_rmsnorm, false},
    {"softmax_f16", "softmax over the last axis of [rows, cols], f16 (f32 arithmetic)", BENCH_BYTES,
     plan_softmax_f16, run_softmax, false},
    {"layernorm_f16", "layernorm over the last axis, f16 x, weight and bias (f32 arithmetic)",
     BENCH_BYTES, plan_layernorm_f16, run_layernorm, false},
    {"transpose", "transpose of [rows, cols] + contiguous copy", BENCH_BYTES, plan_transpose,
     run_transpose, false},
    {"matmul", "[m, k] @ [k, n]", BENCH_FLOPS, plan_matmul, run_matmul, false},
    {"bmm", "batched [b, m, k] @ [b, k, n]", BENCH_FLOPS, plan_bmm, run_matmul, false},
    {"gemv", "[rows, cols] @ [cols]", BENCH_BYTES, plan_gemv, run_matmul, false},
    {"matmul_f16", "[m, k] @ [k, n], f16 (f32 accumulation)", BENCH_FLOPS, plan_matmul_f16,
     run_matmul, false},
    {"matmul_nt", "[m, k] @ [n, k]^T, the linear layout", BENCH_FLOPS, plan_matmul_nt,
     run_matmul_nt, false},
    {"bmm_f16", "batched [b, m, k] @ [b, k, n], f16 (f32 accumulation)", BENCH_FLOPS, plan_bmm_f16, run_matmul,
     false},
    {"matmul_nt_f16", "[m, k] @ [n, k]^T, f16, the linear layout", BENCH_FLOPS, plan_matmul_nt_f16,
     run_matmul_nt, false},
    {"gemv_f16", "[rows, cols] @ [cols], f16", BENCH_BYTES, plan_gemv_f16, run_matmul, false},
    {"gemv_q8_0", "[1, cols] @ [rows, cols]^T, Q8_0 weight (quantised bytes)", BENCH_BYTES, plan_gemv_q8_0,
     run_gemv_q8_0, false},
    {"gemv_q4_0", "[1, cols] @ [rows, cols]^T, Q4_0 weight (quantised bytes)", BENCH_BYTES, plan_gemv_q4_0,
     run_gemv_q4_0, false},
    {"gemv_q4_k", "[1, cols] @ [rows, cols]^T, Q4_K weight (quantised bytes)", BENCH_BYTES, plan_gemv_q4_k,
     run_gemv_q4_k, false},
    {"gemv_q6_k", "[1, cols] @ [rows, cols]^T, Q6_K weight (quantised bytes)", BENCH_BYTES, plan_gemv_q6_k,
     run_gemv_q6_k, false},
    {"add_chain", "chain of dependent adds of small vectors: time per op", BENCH_BYTES,
     plan_add_chain, run_add_chain, true},
    {"conv2d", "conv2d [n, c, h, w] * [o, c, 3, 3], padding 1", BENCH_FLOPS, plan_conv2d, run_conv2d, false},
    {"conv2d_f16", "conv2d, f16 (f32 accumulation)", BENCH_FLOPS, plan_conv2d_f16, run_conv2d, false},
    {"attention", "causal attention [b, hq, s, 128], hkv kv heads", BENCH_FLOPS, plan_attention,
     run_attention, false},
    {"attention_f16", "causal attention, f16", BENCH_FLOPS, plan_attention_f16, run_attention, false},
};

/* Small enough for a 2-core machine with a software GPU in under a minute. */
static const bench_item quick_items[] = {
    {"add", {1 << 20}},
    {"exp", {1 << 20}},
    {"add_f16", {1 << 20}},
    {"exp_f16", {1 << 20}},
    {"sum", {1 << 20}},
    {"sum_f16", {1 << 20}},
    {"rowsum", {1024, 1024}},
    {"softmax", {1024, 1024}},
    {"layernorm", {1024, 1024}},
    {"softmax_f16", {1024, 1024}},
    {"layernorm_f16", {1024, 1024}},
    {"rmsnorm", {1024, 1024}},
    {"transpose", {1024, 1024}},
    {"matmul", {256, 256, 256}},
    {"bmm", {16, 128, 128, 128}},
    {"gemv", {1024, 1024}},
    {"add_chain", {1000, 1024}},
    {"matmul_f16", {256, 256, 256}},
    {"matmul_nt", {256, 256, 256}},
    {"bmm_f16", {4, 128, 128, 128}},
    {"matmul_nt_f16", {256, 256, 256}},
    {"gemv_f16", {1024, 1024}},
    {"gemv_q8_0", {1024, 1024}},
    {"gemv_q4_0", {1024, 1024}},
    {"conv2d", {2, 16, 28, 16}},
};

/* Beyond CPU caches; within a 128 MiB storage binding. */
static const bench_item default_items[] = {
    {"add", {1 << 24}},
    {"exp", {1 << 24}},
    {"add_f16", {1 << 24}},
    {"exp_f16", {1 << 24}},
    {"sum", {1 << 24}},
    {"sum_f16", {1 << 24}},
    {"rowsum", {4096, 4096}},
    {"softmax", {4096, 4096}},
    {"layernorm", {4096, 4096}},
    {"softmax_f16", {4096, 4096}},
    {"layernorm_f16", {4096, 4096}},
    {"rmsnorm", {4096, 4096}},
    {"transpose", {4096, 4096}},
    {"matmul", {1024, 1024, 1024}},
    {"bmm", {32, 256, 256, 256}},
    {"gemv", {4096, 4096}},
    {"add_chain", {1000, 1024}},
    {"matmul_f16", {1024, 1024, 1024}},
    {"matmul_nt", {1024, 1024, 1024}},
    {"bmm_f16", {8, 512, 512, 512}},
    {"matmul_nt_f16", {1024, 1024, 1024}},
    {"gemv_f16", {4096, 4096}},
    {"gemv_q8_0", {4096, 4096}},
    {"gemv_q4_0", {4096, 4096}},
    {"gemv_q4_k", {4096, 4096}},
    {"gemv_q6_k", {4096, 4096}},
    {"conv2d", {8, 64, 56, 64}},
};

/* A data-centre GPU; the same shapes as bench/torch_peer.py. */
static const bench_item large_items[] = {
    {"add", {1 << 28}},
    {"exp", {1 << 28}},
    {"add_f16", {1 << 28}},
    {"exp_f16", {1 << 28}},
    {"sum", {1 << 28}},
    {"sum_f16", {1 << 28}},
    {"rowsum", {32768, 4096}},
    {"softmax", {32768, 4096}},
    {"layernorm", {32768, 4096}},
    {"softmax_f16", {32768, 4096}},
    {"layernorm_f16", {32768, 4096}},
    {"rmsnorm", {32768, 4096}},
    {"transpose", {32768, 4096}},
    {"matmul", {1024, 1024, 1024}},
    {"matmul", {4096, 4096, 4096}},
    {"bmm", {64, 512, 512, 512}},
    {"gemv", {4096, 4096}},
    {"add_chain", {1000, 1024}},
    {"matmul_f16", {4096, 4096, 4096}},
    {"matmul_nt", {8192, 4096, 4096}},
    {"bmm_f16", {8, 2048, 2048, 2048}},
    {"matmul_nt_f16", {4096, 4096, 4096}},
    {"gemv_f16", {4096, 4096}},
    {"gemv_q8_0", {14336, 4096}},
    {"gemv_q4_0", {14336, 4096}},
    {"gemv_q4_k", {14336, 4096}},
    {"gemv_q6_k", {14336, 4096}},
    {"gemv_q8_0", {4096, 14336}},
    {"gemv_q4_0", {4096, 14336}},
    {"gemv_q4_k", {4096, 14336}},
    {"gemv_q6_k", {4096, 14336}},
    /* A 1B Llama's decode step (dim 2048, 8 of 32 heads for k and v, MLP
     * 5632): the fused q/k/v rows, the o rows, gate and up, down, the
     * output head. */
    {"gemv_q8_0", {2048, 2048}},
    {"gemv_q4_0", {3072, 2048}},
    {"gemv_q4_0", {2048, 2048}},
    {"gemv_q4_0", {11264, 2048}},
    {"gemv_q4_0", {2048, 5632}},
    {"gemv_q4_0", {32000, 2048}},
    {"gemv_q8_0", {11264, 2048}},
    {"gemv_q8_0", {2048, 5632}},
    /* The same step in Q4_K_M: q and k (Q4_K), v (Q6_K in half the
     * layers), gate and up, down (Q6_K in half), the Q6_K head. */
    {"gemv_q4_k", {2560, 2048}},
    {"gemv_q6_k", {512, 2048}},
    {"gemv_q4_k", {11264, 2048}},
    {"gemv_q4_k", {2048, 5632}},
    {"gemv_q6_k", {2048, 5632}},
    {"gemv_q6_k", {32000, 2048}},
    {"conv2d", {32, 64, 56, 64}},
    {"conv2d_f16", {32, 64, 56, 64}},
    {"attention", {1, 32, 8, 2048}},
    {"attention_f16", {8, 32, 32, 2048}},
};

#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

const bench_case *bench_find_case(const char *name)
{
    for (int i = 0; i < COUNT(cases); i++)
        if (strcmp(cases[i].name, name) == 0) return &cases[i];
    return NULL;
}

const bench_item *bench_size_items(bench_size size, int *count)
{
    switch (size) {
    case BENCH_SIZE_QUICK: *count = COUNT(quick_items); return quick_items;
    case BENCH_SIZE_LARGE: *count = COUNT(large_items); return large_items;
    default: *count = COUNT(default_items); return default_items;
    }
}

const char *bench_size_name(bench_size size)
{
    switch (size) {
    case BENCH_SIZE_QUICK: return "quick";
    case BENCH_SIZE_LARGE: return "large";
    default: return "default";
    }
}

void bench_print_cases(FILE *f)
{
    for (int i = 0; i < COUNT(cases); i++)
        fprintf(f, "  %-10s %s\n", cases[i].name, cases[i].description);
}
