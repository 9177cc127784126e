/* Derivative rules of the nn ops against finite differences, their f16
 * forms against f32, and the fused attention backward against the
 * composed rule. */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include "autograd_test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --------------------------------------------------------------- nn ops */

static wt_status fwd_matmul(wt_tensor *const *in, wt_tensor **out) { return wt_matmul(in[0], in[1], out); }
static wt_status fwd_linear(wt_tensor *const *in, wt_tensor **out) { return wt_linear(in[0], in[1], in[2], out); }
/* x, w (gate and up rows), bias, norm weight, residual: recorded as its parts. */
static wt_status fwd_linear_fused(wt_tensor *const *in, wt_tensor **out)
{
    wt_linear_fused_options o;
    wt_linear_fused_options_init(&o);
    o.rms_norm = true;
    o.norm_weight = in[3];
    o.swiglu = true;
    o.residual = in[4];
    return wt_linear_fused(in[0], in[1], in[2], &o, out);
}
/* x (the pre-activation), w, bias, residual: one recorded op (f32, many
 * rows), GELU's backward in the product dy @ w's stores on WebGPU. */
static bool g_input_gelu;
static wt_status fwd_linear_rows(wt_tensor *const *in, wt_tensor **out)
{
    wt_linear_fused_options o;
    wt_linear_fused_options_init(&o);
    o.input_gelu = g_input_gelu;
    o.residual = in[3];
    return wt_linear_fused(in[0], in[1], in[2], &o, out);
}
static int g_axis;
static wt_status fwd_softmax(wt_tensor *const *in, wt_tensor **out) { return wt_softmax(in[0], g_axis, out); }
static wt_status fwd_log_softmax(wt_tensor *const *in, wt_tensor **out) { return wt_log_softmax(in[0], g_axis, out); }
static wt_status fwd_layer_norm(wt_tensor *const *in, wt_tensor **out)
{
    return wt_layer_norm(in[0], 2, in[1], in[2], 1e-5f, out);
}
static wt_status fwd_layernorm(wt_tensor *const *in, wt_tensor **out) { return wt_layernorm(in[0], in[1], in[2], 1e-5f, out); }
static wt_status fwd_rms_norm(wt_tensor *const *in, wt_tensor **out) { return wt_rms_norm(in[0], 1, in[1], 1e-5f, out); }
static wt_status fwd_cross_entropy(wt_tensor *const *in, wt_tensor **out) { return wt_cross_entropy(in[0], in[1], NULL, out); }
static bool g_causal;
static wt_status fwd_attention(wt_tensor *const *in, wt_tensor **out)
{
    return wt_scaled_dot_product_attention(in[0], in[1], in[2], NULL, g_causal, 0.0f, out);
}
static wt_status fwd_attention_mask(wt_tensor *const *in, wt_tensor **out)
{
    return wt_scaled_dot_product_attention(in[0], in[1], in[2], in[3], false, 0.7f, out);
}
static wt_status fwd_rope(wt_tensor *const *in, wt_tensor **out) { return wt_rope(in[0], 10000.0, 3, WT_ROPE_BHSD, out); }
static wt_status fwd_conv2d(wt_tensor *const *in, wt_tensor **out)
{
    wt_conv_options o;
    wt_conv_options_init(&o);
    o.stride[0] = 2;
    o.padding[0] = o.padding[1] = o.padding[2] = o.padding[3] = 1;
    return wt_conv2d(in[0], in[1], in[2], &o, out);
}
static wt_status fwd_conv1d(wt_tensor *const *in, wt_tensor **out)
{
    wt_conv_options o;
    wt_conv_options_init(&o);
    o.padding[0] = 1;
    o.dilation[0] = 2;
    return wt_conv1d(in[0], in[1], in[2], &o, out);
}
static wt_status fwd_max_pool(wt_tensor *const *in, wt_tensor **out)
{
    wt_pool_options o;
    wt_pool_options_init(&o);
    o.kernel[0] = o.kernel[1] = 2;
    return wt_max_pool2d(in[0], &o, out, NULL);
}
static wt_status fwd_avg_pool(wt_tensor *const *in, wt_tensor **out)
{
    wt_pool_options o;
    wt_pool_options_init(&o);
    o.kernel[0] = o.kernel[1] = 3;
    o.stride[0] = o.stride[1] = 2;
    o.padding[0] = o.padding[1] = 1;
    return wt_avg_pool2d(in[0], &o, out);
}
static wt_status fwd_global_avg(wt_tensor *const *in, wt_tensor **out) { return wt_global_avg_pool2d(in[0], out); }
static wt_status fwd_global_max(wt_tensor *const *in, wt_tensor **out) { return wt_global_max_pool2d(in[0], out); }
static wt_status fwd_adaptive_max(wt_tensor *const *in, wt_tensor **out) { return wt_adaptive_max_pool2d(in[0], 2, 2, out, NULL); }
static wt_status fwd_dropout(wt_tensor *const *in, wt_tensor **out) { return wt_dropout(in[0], 0.3f, 7, out); }
static wt_status fwd_upsample(wt_tensor *const *in, wt_tensor **out) { return wt_upsample2d(in[0], 2.0, WT_INTERP_BILINEAR, out); }

static wt_status fwd_group_norm(wt_tensor *const *in, wt_tensor **out)
{
    return wt_group_norm_v2(in[0], 2, NULL, NULL, NULL, out);
}
static wt_status fwd_group_norm_affine(wt_tensor *const *in, wt_tensor **out)
{
    return wt_group_norm_v2(in[0], 2, in[1], in[2], NULL, out);
}
static wt_status fwd_conv_t(wt_tensor *const *in, wt_tensor **out)
{
    wt_conv_options o;
    wt_conv_options_init(&o);
    o.stride[0] = 2;
    return wt_conv_transpose2d(in[0], in[1], in[2], &o, out);
}
static wt_status fwd_adaptive_avg(wt_tensor *const *in, wt_tensor **out) { return wt_adaptive_avg_pool2d(in[0], 2, 3, out); }
static wt_status fwd_adaptive_avg3(wt_tensor *const *in, wt_tensor **out) { return wt_adaptive_avg_pool2d(in[0], 3, 3, out); }
static wt_status fwd_conv_t_grouped(wt_tensor *const *in, wt_tensor **out)
{
    wt_conv_options o;
    wt_conv_options_init(&o);
    o.stride[0] = o.stride[1] = 2;
    o.padding[0] = o.padding[1] = 1;
    o.dilation[1] = 2;
    o.groups = 2;
    o.output_padding[0] = 1;
    return wt_conv_transpose2d(in[0], in[1], in[2], &o, out);
}
static wt_status fwd_batch_norm_train(wt_tensor *const *in, wt_tensor **out)
{
    wt_batch_norm_options o;
    wt_batch_norm_options_init(&o);
    o.training = true;
    return wt_batch_norm(in[0], NULL, NULL, in[1], in[2], &o, out, NULL, NULL);
}
static wt_status fwd_batch_norm_eval(wt_tensor *const *in, wt_tensor **out)
{
    return wt_batch_norm(in[0], in[3], in[4], in[1], in[2], NULL, out, NULL, NULL);
}

void test_nn(void)
{
    /* group_norm without weight and bias is made of recorded ops: its
     * gradient comes by composition. */
    spec gn[1] = {{4, {2, 4, 3, 3}, ANY, true}};
    gradcheck("group_norm (no affine: by composition)", fwd_group_norm, 1, gn, 2e-2, 5e-3);
    spec gna[3] = {{4, {2, 4, 3, 2}, ANY, true}, {1, {4}, ANY, true}, {1, {4}, ANY, true}};
    gradcheck("group_norm with weight and bias", fwd_group_norm_affine, 3, gna, 2e-2, 5e-3);
    spec ct[3] = {{4, {2, 4, 3, 3}, ANY, true}, {4, {4, 3, 2, 2}, ANY, true}, {1, {3}, ANY, true}};
    gradcheck("conv_transpose2d (stride 2, bias)", fwd_conv_t, 3, ct, 2e-2, 5e-3);
    spec ctg[3] = {{3, {4, 3, 4}, ANY, true}, {4, {4, 1, 3, 2}, ANY, true}, {1, {2}, ANY, true}};
    gradcheck("conv_transpose2d (unbatched, groups 2, padding, dilation, output_padding)", fwd_conv_t_grouped, 3,
              ctg, 2e-2, 5e-3);
    spec aa[1] = {{4, {2, 3, 5, 7}, ANY, true}};
    gradcheck("adaptive_avg_pool2d (5x7 -> 2x3, overlapping windows)", fwd_adaptive_avg, 1, aa, 1e-2, 2e-3);
    spec aa3[1] = {{3, {2, 4, 4}, ANY, true}};
    gradcheck("adaptive_avg_pool2d (unbatched, 4x4 -> 3x3)", fwd_adaptive_avg3, 1, aa3, 1e-2, 2e-3);
    spec bnt[3] = {{4, {3, 2, 2, 3}, ANY, true}, {1, {2}, ANY, true}, {1, {2}, ANY, true}};
    gradcheck("batch_norm (training)", fwd_batch_norm_train, 3, bnt, 2e-2, 5e-3);
    spec bne[5] = {{3, {4, 3, 2}, ANY, true}, {1, {3}, ANY, true}, {1, {3}, ANY, true}, {1, {3}, ANY, false},
                   {1, {3}, POSITIVE, false}};
    gradcheck("batch_norm (inference, running statistics)", fwd_batch_norm_eval, 5, bne, 2e-2, 5e-3);
    spec mm[2] = {{3, {2, 3, 4}, ANY, true}, {2, {4, 2}, ANY, true}};
    gradcheck("matmul (broadcast batch)", fwd_matmul, 2, mm, 1e-2, 3e-3);
    spec mv[2] = {{1, {4}, ANY, true}, {3, {2, 4, 3}, ANY, true, true}};
    gradcheck("matmul (1-D a, transposed b)", fwd_matmul, 2, mv, 1e-2, 3e-3);
    spec mv2[2] = {{2, {3, 4}, ANY, true}, {1, {4}, ANY, true}};
    gradcheck("matmul (1-D b)", fwd_matmul, 2, mv2, 1e-2, 3e-3);
    spec li[3] = {{3, {2, 2, 4}, ANY, true}, {2, {3, 4}, ANY, true}, {1, {3}, ANY, true}};
    gradcheck("linear", fwd_linear, 3, li, 1e-2, 3e-3);
    spec lf[5] = {{2, {2, 4}, ANY, true}, {2, {6, 4}, ANY, true}, {1, {6}, ANY, true}, {1, {4}, ANY, true},
                  {2, {2, 3}, ANY, true}};
    gradcheck("linear_fused (rms_norm, swiglu, residual)", fwd_linear_fused, 5, lf, 1e-2, 3e-3);
    /* 18 rows: the one-op path under each WT_MATMUL_EPILOGUE (the
     * default: the residual in the product's stores; 0: the separate
     * passes; 2: GELU's backward in the stores of dy @ w too). */
    spec lr[4] = {{3, {3, 6, 8}, ANY, true}, {2, {5, 8}, ANY, true}, {1, {5}, ANY, true},
                  {3, {3, 6, 5}, ANY, true}};
    static const char *const epilogue_knob[3] = {NULL, "0", "2"};
    for (int e = 0; e < 3; e++) {
        char name[96];
        if (epilogue_knob[e]) setenv("WT_MATMUL_EPILOGUE", epilogue_knob[e], 1);
        g_input_gelu = true;
        snprintf(name, sizeof name, "linear_fused (input_gelu, residual; WT_MATMUL_EPILOGUE %s)",
                 epilogue_knob[e] ? epilogue_knob[e] : "unset");
        gradcheck(name, fwd_linear_rows, 4, lr, 1e-2, 3e-3);
        g_input_gelu = false;
        snprintf(name, sizeof name, "linear_fused (residual; WT_MATMUL_EPILOGUE %s)",
                 epilogue_knob[e] ? epilogue_knob[e] : "unset");
        gradcheck(name, fwd_linear_rows, 4, lr, 1e-2, 3e-3);
        if (epilogue_knob[e]) unsetenv("WT_MATMUL_EPILOGUE");
    }
    spec sm[1] = {{3, {2, 3, 4}, ANY, true}};
    for (g_axis = -1; g_axis <= 1; g_axis += 2) {
        gradcheck(g_axis < 0 ? "softmax (last axis)" : "softmax (axis 1)", fwd_softmax, 1, sm, 1e-2, 2e-3);
        gradcheck(g_axis < 0 ? "log_softmax (last axis)" : "log_softmax (axis 1)", fwd_log_softmax, 1, sm, 1e-2,
                  2e-3);
    }
    spec ln[3] = {{3, {2, 3, 4}, ANY, true}, {2, {3, 4}, ANY, true}, {2, {3, 4}, ANY, true}};
    gradcheck("layer_norm (2 axes)", fwd_layer_norm, 3, ln, 2e-2, 5e-3);
    spec ln1[3] = {{2, {3, 5}, ANY, true}, {1, {5}, ANY, true}, {1, {5}, ANY, true}};
    gradcheck("layernorm", fwd_layernorm, 3, ln1, 2e-2, 5e-3);
    spec rn[2] = {{2, {3, 5}, ANY, true}, {1, {5}, ANY, true}};
    gradcheck("rms_norm", fwd_rms_norm, 2, rn, 2e-2, 5e-3);
    spec ce[2] = {{2, {4, 5}, ANY, true}, {1, {4}, INDEX, false, false, 5}};
    gradcheck("cross_entropy", fwd_cross_entropy, 2, ce, 1e-2, 2e-3);
    spec at[3] = {{4, {1, 2, 3, 4}, ANY, true}, {4, {1, 1, 5, 4}, ANY, true}, {4, {1, 1, 5, 3}, ANY, true}};
    g_causal = false;
    gradcheck("attention (grouped heads)", fwd_attention, 3, at, 2e-2, 3e-3);
    g_causal = true;
    gradcheck("attention (causal)", fwd_attention, 3, at, 2e-2, 3e-3);
    spec am[4] = {{3, {2, 3, 4}, ANY, true}, {3, {2, 4, 4}, ANY, true}, {3, {2, 4, 2}, ANY, true},
                  {2, {3, 4}, ANY, true}};
    gradcheck("attention (3-D, float mask)", fwd_attention_mask, 4, am, 2e-2, 3e-3);
    spec ro[1] = {{4, {1, 2, 3, 6}, ANY, true}};
    gradcheck("rope", fwd_rope, 1, ro, 1e-2, 2e-3);
    spec cv[3] = {{4, {2, 2, 5, 5}, ANY, true}, {4, {3, 2, 3, 3}, ANY, true}, {1, {3}, ANY, true}};
    gradcheck("conv2d (stride 2, padding)", fwd_conv2d, 3, cv, 2e-2, 5e-3);
    spec c1[3] = {{3, {2, 2, 7}, ANY, true}, {3, {3, 2, 3}, ANY, true}, {1, {3}, ANY, true}};
    gradcheck("conv1d (dilation 2)", fwd_conv1d, 3, c1, 2e-2, 5e-3);
    spec pl[1] = {{4, {1, 2, 4, 4}, SPREAD, true}};
    gradcheck("max_pool2d", fwd_max_pool, 1, pl, 1e-2, 2e-3);
    gradcheck("avg_pool2d", fwd_avg_pool, 1, pl, 1e-2, 2e-3);
    gradcheck("global_avg_pool2d", fwd_global_avg, 1, pl, 1e-2, 2e-3);
    gradcheck("global_max_pool2d", fwd_global_max, 1, pl, 1e-2, 2e-3);
    gradcheck("adaptive_max_pool2d", fwd_adaptive_max, 1, pl, 1e-2, 2e-3);
    gradcheck("dropout", fwd_dropout, 1, pl, 1e-2, 2e-3);
    spec up[1] = {{4, {1, 1, 3, 3}, ANY, true}};
    gradcheck("upsample2d bilinear", fwd_upsample, 1, up, 1e-2, 2e-3);
}

static wt_status fwd_gelu(wt_tensor *const *in, wt_tensor **out) { return wt_gelu(in[0], out); }

void test_f16(void)
{
    spec li[3] = {{2, {6, 16}, ANY, true}, {2, {8, 16}, ANY, true}, {1, {8}, ANY, true}};
    f16check("linear", fwd_linear, 3, li);
    spec mm[2] = {{3, {2, 5, 8}, ANY, true}, {2, {8, 3}, ANY, true}};
    f16check("matmul (broadcast batch)", fwd_matmul, 2, mm);
    spec un[1] = {{2, {4, 9}, ANY, true}};
    f16check("gelu", fwd_gelu, 1, un);
    g_axis = -1;
    f16check("softmax", fwd_softmax, 1, un);
    f16check("log_softmax", fwd_log_softmax, 1, un);
    spec ln[3] = {{3, {2, 3, 8}, ANY, true}, {2, {3, 8}, ANY, true}, {2, {3, 8}, ANY, true}};
    f16check("layer_norm", fwd_layer_norm, 3, ln);
    spec rn[2] = {{2, {3, 16}, ANY, true}, {1, {16}, ANY, true}};
    f16check("rms_norm", fwd_rms_norm, 2, rn);
    spec ce[2] = {{2, {6, 7}, ANY, true}, {1, {6}, INDEX, false, false, 7}};
    f16check("cross_entropy", fwd_cross_entropy, 2, ce);
    spec at[3] = {{4, {1, 2, 6, 8}, ANY, true}, {4, {1, 2, 6, 8}, ANY, true}, {4, {1, 2, 6, 8}, ANY, true}};
    g_causal = true;
    f16check("attention (causal)", fwd_attention, 3, at);
    spec cv[3] = {{4, {2, 3, 6, 6}, ANY, true}, {4, {4, 3, 3, 3}, ANY, true}, {1, {4}, ANY, true}};
    f16check("conv2d", fwd_conv2d, 3, cv);
    spec gna[3] = {{4, {2, 4, 3, 2}, ANY, true}, {1, {4}, ANY, true}, {1, {4}, ANY, true}};
    f16check("group_norm with weight and bias", fwd_group_norm_affine, 3, gna);
    spec emb[2] = {{2, {9, 8}, ANY, true}, {2, {2, 5}, INDEX, false, false, 9}};
    f16check("embedding", fwd_embedding, 2, emb);
}

/* The attention rule without a mask runs the fused backward when asked
 * (WT_ATTN_BACKWARD=fused; by default where the backend prefers it): on a
 * fresh context, the backward of a causal attention over
 * 512 keys must not hold a [512, 512] matrix (1 MiB) at any time, and its
 * gradients equal those of the composed rule (taken by adding an all-true
 * bool mask). */
void test_attention_fused(test_backend b)
{
    wt_context *ctx = NULL;
    if (test_create_context(b, &ctx) != WT_OK) return;
    setenv("WT_ATTN_BACKWARD", "fused", 1);
    enum { T = 512, DH = 16 };
    const int64_t shape[4] = {1, 1, T, DH};
    float *h = malloc(sizeof(float) * T * DH);
    wt_tensor *in[3] = {0}, *y = NULL, *seed = NULL, *loss = NULL, *mask = NULL;
    for (int i = 0; i < 3; i++) {
        for (int k = 0; k < T * DH; k++) h[k] = test_rng_uniform(-1, 1);
        wt_tensor_from_data(ctx, WT_F32, 4, shape, h, &in[i]);
        wt_tensor_set_requires_grad(in[i], true);
    }
    for (int k = 0; k < T * DH; k++) h[k] = test_rng_uniform(-1, 1);
    wt_tensor_from_data(ctx, WT_F32, 4, shape, h, &seed);
    wt_memory_stats m0 = {0}, m1 = {0};
    bool ok = wt_scaled_dot_product_attention(in[0], in[1], in[2], NULL, true, 0.0, &y) == WT_OK &&
              wt_context_sync(ctx) == WT_OK && wt_context_memory_stats(ctx, &m0) == WT_OK &&
              wt_backward_ex(1, &y, &seed, NULL) == WT_OK && wt_context_sync(ctx) == WT_OK &&
              wt_context_memory_stats(ctx, &m1) == WT_OK;
    uint64_t rise = m1.peak_bytes - m0.live_bytes;
    CHECK(ok && rise < (uint64_t)T * T * 4 / 2, "fused attention backward, causal, 512 keys: the peak rose by %llu "
          "bytes (a [512, 512] matrix is %d)", (unsigned long long)rise, T * T * 4);
    printf("fused attention backward (512 keys, head 16): peak %llu bytes above the live ones\n",
           (unsigned long long)rise);
    /* The composed rule, through an all-true mask. */
    const size_t bytes = sizeof(float) * T * DH;
    float *g1 = malloc(3 * bytes), *g2 = malloc(3 * bytes);
    for (int i = 0; ok && i < 3; i++) {
        wt_tensor *g = NULL;
        ok = wt_tensor_grad(in[i], &g) == WT_OK && g && wt_tensor_read(g, g1 + i * T * DH, bytes) == WT_OK;
        wt_tensor_release(g);
        wt_tensor_zero_grad(in[i]);
    }
    wt_tensor_release(y);
    y = NULL;
    ok = ok && wt_tensor_full(ctx, WT_BOOL, 2, (const int64_t[]){T, T}, 1.0, &mask) == WT_OK &&
         wt_scaled_dot_product_attention(in[0], in[1], in[2], mask, true, 0.0, &y) == WT_OK &&
         wt_backward_ex(1, &y, &seed, NULL) == WT_OK;
    double err = 0, big = 0;
    for (int i = 0; ok && i < 3; i++) {
        wt_tensor *g = NULL;
        ok = wt_tensor_grad(in[i], &g) == WT_OK && g && wt_tensor_read(g, g2 + i * T * DH, bytes) == WT_OK;
        wt_tensor_release(g);
        for (int k = i * T * DH; ok && k < (i + 1) * T * DH; k++) {
            err = fmax(err, fabs(g1[k] - g2[k]));
            big = fmax(big, fabs(g2[k]));
        }
    }
    CHECK(ok && err <= 1e-4 * big + 1e-6, "fused and composed attention backward agree (max difference %.2g, "
          "largest %.2g)", err, big);
    free(g1), free(g2);
    wt_tensor_release(y), wt_tensor_release(seed), wt_tensor_release(loss), wt_tensor_release(mask);
    for (int i = 0; i < 3; i++) wt_tensor_release(in[i]);
    free(h);
    wt_context_destroy(ctx);
    unsetenv("WT_ATTN_BACKWARD");
}

/* The gradients of q, k, v for loss = sum(seed * attention(q, k, v)) with
 * WT_ATTN_BACKWARD set to knob; false when a step fails. */
static bool attention_grads(wt_context *ctx, const char *knob, const int64_t *const *shapes, bool causal,
                            float *const *host, float *const *grads)
{
    setenv("WT_ATTN_BACKWARD", knob, 1);
    wt_tensor *t[4] = {0}, *y = NULL;
    bool ok = true;
    for (int i = 0; i < 4 && ok; i++) {
        ok = wt_tensor_from_data(ctx, WT_F32, 4, shapes[i], host[i], &t[i]) == WT_OK;
        if (ok && i < 3) ok = wt_tensor_set_requires_grad(t[i], true) == WT_OK;
    }
    ok = ok && wt_scaled_dot_product_attention(t[0], t[1], t[2], NULL, causal, 0.0, &y) == WT_OK &&
         wt_backward_ex(1, &y, &t[3], NULL) == WT_OK;
    for (int i = 0; i < 3 && ok; i++) {
        wt_tensor *g = NULL;
        ok = wt_tensor_grad(t[i], &g) == WT_OK && g &&
             wt_tensor_read(g, grads[i], sizeof(float) * (size_t)wt_tensor_numel(t[i])) == WT_OK;
        wt_tensor_release(g);
    }
    wt_tensor_release(y);
    for (int i = 0; i < 4; i++) wt_tensor_release(t[i]);
    unsetenv("WT_ATTN_BACKWARD");
    return ok;
}

/* The fused attention backward against the composed rule (public ops,
 * on the CPU: matrix products and softmax there, and no shader for a
 * software adapter to compile) over shapes that reach the tiled kernels' edges: sequence lengths that
 * are no multiple of a tile, more queries than keys under causality (rows
 * that see no key), grouped heads, a single query, head dims below 64 (16:
 * the shader variants the test above compiles) and at 64, and head dims
 * the tiled kernels do not take (the untiled ones run). Few shader
 * variants: a software adapter compiles each for seconds to tens. */
void test_attention_fused_shapes(test_backend b)
{
    wt_context *ctx = NULL;
    if (test_create_context(b, &ctx) != WT_OK) return;
    static const struct {
        int64_t B, Hq, Hkv, Sq, Skv, D, Dv;
        bool causal;
    } cases[] = {
        {2, 4, 2, 37, 45, 16, 16, false}, {2, 4, 2, 37, 45, 16, 16, true}, {1, 2, 1, 45, 33, 16, 16, true},
        {2, 2, 1, 1, 17, 16, 16, false},  {1, 1, 1, 70, 70, 64, 64, true}, {1, 2, 2, 19, 23, 6, 5, true},
        {2, 4, 2, 50, 40, 32, 32, true},  {2, 4, 2, 37, 44, 16, 16, false}, {1, 2, 1, 33, 48, 16, 16, true},
        {2, 2, 2, 48, 64, 16, 16, true},  {1, 2, 2, 64, 64, 16, 16, true},  {1, 2, 1, 100, 92, 64, 64, true},
    };
    /* The WebGPU kernels (WT_ATTN_BWD_KERNEL, WT_ATTN_BWD_DQ): every case
     * on the default (the pipelined kernels: on a 32 KiB adapter their
     * larger forms at head dims 16 and 32, their smallest at 64; dq as
     * ds @ K by the dq kernel where the keys are a multiple of 4: cases 6 to 10,
     * grouped, causal with more queries than keys, with fewer and with as
     * many), then grouped causal cases at 16 and 32 and the case at 64 on
     * the kernels' smallest forms, two of the product's cases with dq from the query
     * kernel, one with the statistics from the query kernel (the
     * forward's log-sum-exp not kept), and two with the log-sum-exp from
     * the older forward kernel (WT_ATTN_FWD_KERNEL=tiled). Case 11 (head
     * dim 64, more queries than keys, rows and keys over several of the dq
     * kernel's blocks and chunks, no multiple of them) on the default;
     * cases 6, 8 and 11 with dq from the library's matrix product
     * (WT_ATTN_BWD_DQ=product). The key kernel as it was before its
     * forms (WT_ATTN_BWD_KEYS=main) on cases 1, 6 and 11, and without
     * its lanes (pad,fma: keys 4 a thread in a row) on cases 6 and 11. */
    static const struct {
        const char *kernel, *dq;
        int c;
    } runs[] = {{NULL, NULL, 0},    {NULL, NULL, 1},    {NULL, NULL, 2},    {NULL, NULL, 3},    {NULL, NULL, 4},
                {NULL, NULL, 5},    {NULL, NULL, 6},    {"small", NULL, 1}, {"small", NULL, 2}, {"small", NULL, 4},
                {"small", NULL, 6}, {NULL, NULL, 7},    {NULL, NULL, 8},
                {NULL, NULL, 9},     {NULL, NULL, 10},    {NULL, "kernel", 6}, {NULL, "kernel", 8},
                {NULL, "nolse", 9}, {NULL, "fwdtiled", 4}, {NULL, "fwdtiled", 6}, {NULL, NULL, 11},
                {NULL, "product", 6}, {NULL, "product", 8}, {NULL, "product", 11},
                {"keys=main", NULL, 1}, {"keys=main", NULL, 6}, {"keys=main", NULL, 11},
                {"keys=pad,fma", NULL, 6}, {"keys=pad,fma", NULL, 11}};
    for (size_t r = 0; r < sizeof runs / sizeof runs[0]; r++) {
        const int c = runs[r].c;
        const bool nolse = runs[r].dq && strcmp(runs[r].dq, "nolse") == 0;
        const bool fwd_tiled = runs[r].dq && strcmp(runs[r].dq, "fwdtiled") == 0;
        const bool gemm = runs[r].dq && strcmp(runs[r].dq, "product") == 0;
        const char *kernel = nolse ? "default, no saved log-sum-exp"
                             : fwd_tiled ? "default backward, older forward"
                             : gemm      ? "dq by the matrix product"
                             : runs[r].dq   ? "query-kernel dq"
                             : runs[r].kernel ? runs[r].kernel
                                              : "default";
        const int64_t qs[4] = {cases[c].B, cases[c].Hq, cases[c].Sq, cases[c].D},
                      ks[4] = {cases[c].B, cases[c].Hkv, cases[c].Skv, cases[c].D},
                      vs[4] = {cases[c].B, cases[c].Hkv, cases[c].Skv, cases[c].Dv},
                      gs[4] = {cases[c].B, cases[c].Hq, cases[c].Sq, cases[c].Dv};
        const size_t n[4] = {(size_t)(qs[0] * qs[1] * qs[2] * qs[3]), (size_t)(ks[0] * ks[1] * ks[2] * ks[3]),
                             (size_t)(vs[0] * vs[1] * vs[2] * vs[3]), (size_t)(gs[0] * gs[1] * gs[2] * gs[3])};
        float *host[4], *fused[3], *composed[3];
        for (int i = 0; i < 4; i++) {
            host[i] = malloc(sizeof(float) * n[i]);
            for (size_t e = 0; e < n[i]; e++) host[i][e] = test_rng_uniform(-1.5f, 1.5f);
        }
        for (int i = 0; i < 3; i++) fused[i] = malloc(sizeof(float) * n[i]), composed[i] = malloc(sizeof(float) * n[i]);
        const int64_t *shapes[4] = {qs, ks, vs, gs};
        if (runs[r].kernel && strncmp(runs[r].kernel, "keys=", 5) == 0)
            setenv("WT_ATTN_BWD_KEYS", runs[r].kernel + 5, 1);
        else if (runs[r].kernel)
            setenv("WT_ATTN_BWD_KERNEL", runs[r].kernel, 1);
        if (fwd_tiled)
            setenv("WT_ATTN_FWD_KERNEL", "tiled", 1);
        else if (runs[r].dq)
            setenv(nolse ? "WT_ATTN_SAVE_LSE" : "WT_ATTN_BWD_DQ", nolse ? "0" : runs[r].dq, 1);
        bool ok = attention_grads(ctx, "fused", shapes, cases[c].causal, host, fused);
        unsetenv("WT_ATTN_BWD_KERNEL");
        unsetenv("WT_ATTN_BWD_KEYS");
        unsetenv("WT_ATTN_BWD_DQ");
        unsetenv("WT_ATTN_SAVE_LSE");
        unsetenv("WT_ATTN_FWD_KERNEL");
        ok = ok && attention_grads(g_cpu, "composed", shapes, cases[c].causal, host, composed);
        double err = 0, big = 0;
        for (int i = 0; ok && i < 3; i++)
            for (size_t e = 0; e < n[i]; e++) {
                err = fmax(err, fabs(fused[i][e] - composed[i][e]));
                big = fmax(big, fabs(composed[i][e]));
            }
        printf("fused attention backward (%s kernels), B %lld Hq %lld Hkv %lld Sq %lld Skv %lld D %lld Dv %lld%s: "
               "max difference %.2g to the composed rule (largest %.2g)\n", kernel, (long long)qs[0],
               (long long)qs[1], (long long)ks[1], (long long)qs[2], (long long)ks[2], (long long)qs[3],
               (long long)vs[3], cases[c].causal ? " causal" : "", err, big);
        CHECK(ok && err <= 2e-5 * (big + 1.0), "fused attention backward (%s kernels), B %lld Hq %lld Hkv %lld Sq "
              "%lld Skv %lld D %lld Dv %lld%s: max difference %.2g to the composed rule (largest %.2g)", kernel,
              (long long)qs[0], (long long)qs[1], (long long)ks[1], (long long)qs[2], (long long)ks[2],
              (long long)qs[3], (long long)vs[3], cases[c].causal ? " causal" : "", err, big);
        for (int i = 0; i < 4; i++) free(host[i]);
        for (int i = 0; i < 3; i++) free(fused[i]), free(composed[i]);
    }
    wt_context_destroy(ctx);
}

/* Attention on heads split from [B, S, H, D] tensors (transpose(1, 2)
 * views, as a GPT's q, k, v from its linear layers) with the seed given
 * [B, S, H, D] too: y, and the gradients of the [B, S, H, D] leaves, on
 * the backend under test with WT_ATTN_HEAD_VIEWS unset (where the backend
 * takes such views: no copies, the result laid out [B, S, H, D]) or at
 * knob; false when a step fails. kv_inner: k and v so too (else dense
 * [B, H, S, D] leaves). */
static bool head_view_grads(wt_context *ctx, const char *knob, const int64_t *const *shapes, bool kv_inner,
                            bool causal, float *const *host, float *out, float *const *grads, bool *merged_view)
{
    if (knob) setenv("WT_ATTN_HEAD_VIEWS", knob, 1);
    wt_tensor *leaf[4] = {0}, *heads[3] = {0}, *y = NULL, *yt = NULL;
    bool ok = true;
    for (int i = 0; i < 4 && ok; i++) {
        const bool inner = i == 0 || i == 3 || kv_inner;
        const int64_t *s = shapes[i], bshd[4] = {s[0], s[2], s[1], s[3]};
        ok = wt_tensor_from_data(ctx, WT_F32, 4, inner ? bshd : s, host[i], &leaf[i]) == WT_OK;
        if (ok && i < 3) ok = wt_tensor_set_requires_grad(leaf[i], true) == WT_OK;
        if (ok && i < 3) {
            if (inner) ok = wt_transpose(leaf[i], 1, 2, &heads[i]) == WT_OK;
            else heads[i] = leaf[i], wt_tensor_retain(leaf[i]);
        }
    }
    ok = ok && wt_scaled_dot_product_attention(heads[0], heads[1], heads[2], NULL, causal, 0.0, &y) == WT_OK &&
         wt_transpose(y, 1, 2, &yt) == WT_OK && wt_backward_ex(1, &yt, &leaf[3], NULL) == WT_OK;
    if (ok) *merged_view = wt_tensor_is_contiguous(yt);
    ok = ok && wt_tensor_read(yt, out, sizeof(float) * (size_t)wt_tensor_numel(yt)) == WT_OK;
    for (int i = 0; i < 3 && ok; i++) {
        wt_tensor *g = NULL;
        ok = wt_tensor_grad(leaf[i], &g) == WT_OK && g &&
             wt_tensor_read(g, grads[i], sizeof(float) * (size_t)wt_tensor_numel(leaf[i])) == WT_OK;
        wt_tensor_release(g);
    }
    wt_tensor_release(y), wt_tensor_release(yt);
    for (int i = 0; i < 3; i++) wt_tensor_release(heads[i]);
    for (int i = 0; i < 4; i++) wt_tensor_release(leaf[i]);
    if (knob) unsetenv("WT_ATTN_HEAD_VIEWS");
    return ok;
}

/* The attention forward and fused backward reading and writing heads laid
 * out [B, S, H, D] against the same on dense copies (WT_ATTN_HEAD_VIEWS=0)
 * and against the CPU: grouped causal heads with k and v so too, and k, v
 * dense [B, H, S, D] beside such q. Where the WebGPU kernels take the
 * views, merging the result's heads back is a view (its transpose is
 * contiguous); with the knob at 0 it is not. */
void test_attention_head_views(test_backend b)
{
    wt_context *ctx = NULL;
    if (test_create_context(b, &ctx) != WT_OK) return;
    static const struct {
        int64_t B, Hq, Hkv, Sq, Skv, D;
        bool kv_inner, causal;
    } cases[] = {{2, 4, 2, 37, 45, 16, true, true}, {2, 2, 2, 33, 33, 32, false, false},
                 /* keys a multiple of 4: dq as the product ds @ K, a product a kv
                  * head and a copy into q's layout (grouped, causal, then not) */
                 {2, 4, 2, 36, 40, 16, true, true}, {3, 2, 1, 24, 24, 32, true, false}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const int64_t qs[4] = {cases[c].B, cases[c].Hq, cases[c].Sq, cases[c].D},
                      ks[4] = {cases[c].B, cases[c].Hkv, cases[c].Skv, cases[c].D};
        const int64_t *shapes[4] = {qs, ks, ks, qs};
        const size_t n[4] = {(size_t)(qs[0] * qs[1] * qs[2] * qs[3]), (size_t)(ks[0] * ks[1] * ks[2] * ks[3]),
                             (size_t)(ks[0] * ks[1] * ks[2] * ks[3]), (size_t)(qs[0] * qs[1] * qs[2] * qs[3])};
        float *host[4], *res[3], *grads[3][3];
        for (int i = 0; i < 4; i++) {
            host[i] = malloc(sizeof(float) * n[i]);
            for (size_t e = 0; e < n[i]; e++) host[i][e] = test_rng_uniform(-1.5f, 1.5f);
        }
        for (int r = 0; r < 3; r++) {
            res[r] = malloc(sizeof(float) * n[0]);
            for (int i = 0; i < 3; i++) grads[r][i] = malloc(sizeof(float) * n[i]);
        }
        bool view[3] = {0};
        bool ok = head_view_grads(ctx, NULL, shapes, cases[c].kv_inner, cases[c].causal, host, res[0], grads[0], &view[0]) &&
                  head_view_grads(ctx, "0", shapes, cases[c].kv_inner, cases[c].causal, host, res[1], grads[1], &view[1]) &&
                  head_view_grads(g_cpu, NULL, shapes, cases[c].kv_inner, cases[c].causal, host, res[2], grads[2], &view[2]);
        double err[2] = {0, 0}, big = 0;
        for (int r = 0; ok && r < 2; r++) {
            for (size_t e = 0; e < n[0]; e++) err[r] = fmax(err[r], fabs(res[r][e] - res[2][e]));
            for (int i = 0; i < 3; i++)
                for (size_t e = 0; e < n[i]; e++) {
                    err[r] = fmax(err[r], fabs(grads[r][i][e] - grads[2][i][e]));
                    big = fmax(big, fabs(grads[2][i][e]));
                }
        }
        printf("attention on heads laid out [B, S, H, D] (%s), case %zu: max difference to the CPU %.2g (views), "
               "%.2g (dense copies), largest gradient %.2g; merged heads a view: %s\n",
               test_backend_name(b), c, err[0], err[1], big, view[0] ? "yes" : "no");
        CHECK(ok && err[0] <= 2e-5 * (big + 1.0) && err[1] <= 2e-5 * (big + 1.0),
              "attention on heads laid out [B, S, H, D], case %zu: max difference %.2g (views), %.2g (dense) "
              "to the CPU (largest %.2g)", c, err[0], err[1], big);
        if (b != TEST_BACKEND_CPU) {
            CHECK(ok && view[0] && !view[1], "attention on heads laid out [B, S, H, D], case %zu: the result's "
                  "heads merge as a view with the kernels reading the views (%d), not with WT_ATTN_HEAD_VIEWS=0 (%d)",
                  c, view[0], view[1]);
        }
        for (int i = 0; i < 4; i++) free(host[i]);
        for (int r = 0; r < 3; r++) {
            free(res[r]);
            for (int i = 0; i < 3; i++) free(grads[r][i]);
        }
    }
    wt_context_destroy(ctx);
}

/* Attention on q, k and v as the heads of one [B, S, (Hq + 2 Hkv) D]
 * leaf (a GPT's q, k, v from one linear layer: reshape, transpose(1, 2),
 * split into Hq, Hkv, Hkv heads), the seed given [B, S, Hq, D]: y and the
 * leaf's gradient, on ctx with WT_ATTN_HEAD_VIEWS unset or at knob; the
 * dispatches of the backward pass in *dispatches; false when a step
 * fails. */
static bool qkv_rows_grads(wt_context *ctx, const char *knob, const int64_t *dims, bool causal, const float *x,
                           const float *seed, float *out, float *grad, bool *merged_view, uint64_t *dispatches)
{
    const int64_t B = dims[0], Hq = dims[1], Hkv = dims[2], S = dims[3], D = dims[4], H = Hq + 2 * Hkv;
    if (knob) setenv("WT_ATTN_HEAD_VIEWS", knob, 1);
    wt_tensor *leaf = NULL, *sd = NULL, *r = NULL, *t = NULL, *qkv[3] = {0}, *y = NULL, *yt = NULL, *g = NULL;
    wt_pipeline_stats before = {0}, after = {0};
    bool ok = wt_tensor_from_data(ctx, WT_F32, 3, (const int64_t[]){B, S, H * D}, x, &leaf) == WT_OK &&
              wt_tensor_set_requires_grad(leaf, true) == WT_OK &&
              wt_tensor_from_data(ctx, WT_F32, 4, (const int64_t[]){B, S, Hq, D}, seed, &sd) == WT_OK &&
              wt_reshape(leaf, 4, (const int64_t[]){B, S, H, D}, &r) == WT_OK && wt_transpose(r, 1, 2, &t) == WT_OK &&
              wt_split(t, 1, 3, (const int64_t[]){Hq, Hkv, Hkv}, qkv) == WT_OK &&
              wt_scaled_dot_product_attention(qkv[0], qkv[1], qkv[2], NULL, causal, 0.0, &y) == WT_OK &&
              wt_transpose(y, 1, 2, &yt) == WT_OK && wt_context_sync(ctx) == WT_OK &&
              wt_context_pipeline_stats(ctx, &before) == WT_OK && wt_backward_ex(1, &yt, &sd, NULL) == WT_OK &&
              wt_context_pipeline_stats(ctx, &after) == WT_OK;
    if (ok) *merged_view = wt_tensor_is_contiguous(yt), *dispatches = after.dispatches - before.dispatches;
    ok = ok && wt_tensor_read(yt, out, sizeof(float) * (size_t)(B * S * Hq * D)) == WT_OK &&
         wt_tensor_grad(leaf, &g) == WT_OK && g && wt_tensor_read(g, grad, sizeof(float) * (size_t)(B * S * H * D)) == WT_OK;
    wt_tensor_release(g), wt_tensor_release(y), wt_tensor_release(yt), wt_tensor_release(t), wt_tensor_release(r);
    for (int i = 0; i < 3; i++) wt_tensor_release(qkv[i]);
    wt_tensor_release(sd), wt_tensor_release(leaf);
    if (knob) unsetenv("WT_ATTN_HEAD_VIEWS");
    return ok;
}

/* The attention forward and fused backward on q, k, v as the heads of one
 * tensor's rows (qkv_rows_grads) against the same on dense copies
 * (WT_ATTN_HEAD_VIEWS=0) and against the CPU. Where the WebGPU kernels
 * read the rows in place, the result's heads merge as a view and the
 * backward pass is the seed's f32 copy and the attention backward's
 * kernels alone (at most three: the gradients land in one tensor, which
 * the split before them joins as a view, and the leaf takes it as it is);
 * on dense copies it takes more. Cases: grouped causal heads whose keys are a multiple of 4
 * (dq as its own product of ds), then single heads with 37 keys (the query
 * kernel computes dq), not causal. */
void test_attention_qkv_rows(test_backend b)
{
    wt_context *ctx = NULL;
    if (test_create_context(b, &ctx) != WT_OK) return;
    static const struct {
        int64_t dims[5]; /* B, Hq, Hkv, S, D */
        bool causal;
    } cases[] = {{{2, 4, 2, 36, 16}, true}, {{2, 2, 2, 37, 32}, false}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const int64_t *d = cases[c].dims;
        const size_t ny = (size_t)(d[0] * d[3] * d[1] * d[4]), nx = (size_t)(d[0] * d[3] * (d[1] + 2 * d[2]) * d[4]);
        float *x = malloc(sizeof(float) * nx), *seed = malloc(sizeof(float) * ny), *res[3], *grad[3];
        for (size_t e = 0; e < nx; e++) x[e] = test_rng_uniform(-1.5f, 1.5f);
        for (size_t e = 0; e < ny; e++) seed[e] = test_rng_uniform(-1.0f, 1.0f);
        for (int r = 0; r < 3; r++) res[r] = malloc(sizeof(float) * ny), grad[r] = malloc(sizeof(float) * nx);
        bool view[3] = {0};
        uint64_t disp[3] = {0};
        bool ok = qkv_rows_grads(ctx, NULL, d, cases[c].causal, x, seed, res[0], grad[0], &view[0], &disp[0]) &&
                  qkv_rows_grads(ctx, "0", d, cases[c].causal, x, seed, res[1], grad[1], &view[1], &disp[1]) &&
                  qkv_rows_grads(g_cpu, NULL, d, cases[c].causal, x, seed, res[2], grad[2], &view[2], &disp[2]);
        double err[2] = {0, 0}, big = 0;
        for (int r = 0; ok && r < 2; r++) {
            for (size_t e = 0; e < ny; e++) err[r] = fmax(err[r], fabs(res[r][e] - res[2][e]));
            for (size_t e = 0; e < nx; e++) {
                err[r] = fmax(err[r], fabs(grad[r][e] - grad[2][e]));
                big = fmax(big, fabs(grad[2][e]));
            }
        }
        printf("attention on q, k, v as the heads of one tensor's rows (%s), case %zu: max difference to the CPU "
               "%.2g (rows read in place), %.2g (dense copies), largest gradient %.2g; merged heads a view: %s; "
               "backward dispatches %llu (in place), %llu (dense copies)\n",
               test_backend_name(b), c, err[0], err[1], big, view[0] ? "yes" : "no", (unsigned long long)disp[0],
               (unsigned long long)disp[1]);
        CHECK(ok && err[0] <= 2e-5 * (big + 1.0) && err[1] <= 2e-5 * (big + 1.0),
              "attention on q, k, v as the heads of one tensor's rows, case %zu: max difference %.2g (in place), "
              "%.2g (dense) to the CPU (largest %.2g)", c, err[0], err[1], big);
        if (b != TEST_BACKEND_CPU) {
            CHECK(ok && view[0] && !view[1] && disp[0] <= 4 && disp[1] > disp[0],
                  "attention on q, k, v as the heads of one tensor's rows, case %zu: the result's heads merge as a "
                  "view (%d; not with WT_ATTN_HEAD_VIEWS=0: %d) and the backward is the seed's copy and the "
                  "attention's kernels alone (%llu dispatches, at most 4; %llu on dense copies)", c, view[0], view[1], (unsigned long long)disp[0],
                  (unsigned long long)disp[1]);
        }
        free(x), free(seed);
        for (int r = 0; r < 3; r++) free(res[r]), free(grad[r]);
    }
    wt_context_destroy(ctx);
}

/* Whether the profile of ctx lists the one-pass norm backward (the
 * NORM_BACKWARD node's label). */
static bool profile_lists_norm_backward(wt_context *ctx)
{
    wt_profile_entry e[64];
    int count = 0;
    bool gpu = false;
    if (wt_context_profile_summary(ctx, e, 64, &count, &gpu) != WT_OK) return false;
    for (int i = 0; i < count && i < 64; i++)
        if (strcmp(e[i].name, "layer_norm_backward") == 0 || strcmp(e[i].name, "rms_norm_backward") == 0) return true;
    return false;
}

/* The gradients of x, weight and bias for loss = sum(seed * norm(x)),
 * layer norm or (rms) RMS norm over the last k axes of x (shape xs, nd
 * axes; weight / bias when given), WT_NORM_BACKWARD set to knob; *one_pass
 * whether the backward ran the one-pass node. False when a step fails. */
static bool norm_grads(wt_context *ctx, const char *knob, bool rms, int nd, const int64_t *xs, int k, bool weight,
                       bool bias, float *const *host, float *const *grads, bool *one_pass)
{
    setenv("WT_NORM_BACKWARD", knob, 1);
    int64_t C = 1, n = 1;
    for (int i = 0; i < nd; i++) n *= xs[i];
    for (int i = nd - k; i < nd; i++) C *= xs[i];
    wt_tensor *x = NULL, *w = NULL, *b = NULL, *seed = NULL, *y = NULL;
    bool ok = wt_tensor_from_data(ctx, WT_F32, nd, xs, host[0], &x) == WT_OK &&
              wt_tensor_set_requires_grad(x, true) == WT_OK &&
              wt_tensor_from_data(ctx, WT_F32, nd, xs, host[3], &seed) == WT_OK;
    if (ok && weight)
        ok = wt_tensor_from_data(ctx, WT_F32, k, xs + nd - k, host[1], &w) == WT_OK &&
             wt_tensor_set_requires_grad(w, true) == WT_OK;
    if (ok && bias)
        ok = wt_tensor_from_data(ctx, WT_F32, k, xs + nd - k, host[2], &b) == WT_OK &&
             wt_tensor_set_requires_grad(b, true) == WT_OK;
    ok = ok && (rms ? wt_rms_norm(x, k, w, 1e-5f, &y) : wt_layer_norm(x, k, w, b, 1e-5f, &y)) == WT_OK;
    ok = ok && wt_context_profile_begin(ctx) == WT_OK;
    ok = ok && wt_backward_ex(1, &y, &seed, NULL) == WT_OK;
    ok = ok && wt_context_profile_end(ctx) == WT_OK;
    *one_pass = ok && profile_lists_norm_backward(ctx);
    wt_tensor *src[3] = {x, w, b};
    const int64_t count[3] = {n, C, C};
    for (int i = 0; i < 3 && ok; i++) {
        if (!src[i]) continue;
        wt_tensor *g = NULL;
        ok = wt_tensor_grad(src[i], &g) == WT_OK && g &&
             wt_tensor_read(g, grads[i], sizeof(float) * (size_t)count[i]) == WT_OK;
        wt_tensor_release(g);
    }
    wt_tensor_release(y), wt_tensor_release(seed);
    for (int i = 0; i < 3; i++) wt_tensor_release(src[i]);
    unsetenv("WT_NORM_BACKWARD");
    return ok;
}

/* The one-pass backward of layer norm and RMS norm (the NORM_BACKWARD node,
 * on this test's backend) against the composed rule on the CPU: rows of
 * four-element units shared by several rows a workgroup (384, the GPT
 * example's) and one row a workgroup (2560: subgroup reductions where the
 * device has them), odd rows read element by element, two normalised
 * axes, without a weight or a bias, rows far from zero (the mean
 * shifted by 1000), and rows longer than WebGPU's kernel takes. The
 * profile shows the node ran (and, with WT_NORM_BACKWARD=composed, that
 * it did not). */
void test_norm_backward_fused(test_backend b)
{
    wt_context *ctx = NULL;
    if (test_create_context(b, &ctx) != WT_OK) return;
    static const struct {
        bool rms;
        int nd;
        int64_t shape[4];
        int k;
        bool weight, bias;
        float shift;
    } cases[] = {
        {false, 3, {3, 5, 384}, 1, true, true, 0.0f},   {false, 2, {3, 2560}, 1, true, true, 0.0f},
        {false, 3, {2, 7, 37}, 1, true, false, 0.0f},   {false, 4, {4, 3, 8, 12}, 2, false, true, 0.0f},
        {false, 2, {6, 64}, 1, true, true, 1000.0f},
        {true, 3, {3, 5, 384}, 1, true, false, 0.0f},   {true, 2, {3, 2560}, 1, true, false, 0.0f},
        {true, 3, {2, 7, 37}, 1, true, false, 0.0f},    {true, 4, {4, 3, 8, 12}, 2, false, false, 0.0f},
        {true, 2, {6, 64}, 1, true, false, 1000.0f},    {true, 2, {5, 3}, 1, true, false, 0.0f},
        {true, 2, {2, 8200}, 1, true, false, 0.0f},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        int64_t n = 1, C = 1;
        for (int i = 0; i < cases[c].nd; i++) n *= cases[c].shape[i];
        for (int i = cases[c].nd - cases[c].k; i < cases[c].nd; i++) C *= cases[c].shape[i];
        const int64_t count[4] = {n, C, C, n};
        float *host[4], *fused[3], *composed[3];
        for (int i = 0; i < 4; i++) {
            host[i] = malloc(sizeof(float) * (size_t)count[i]);
            for (int64_t e = 0; e < count[i]; e++)
                host[i][e] = test_rng_uniform(-1.5f, 1.5f) + (i == 0 ? cases[c].shift : 0.0f);
        }
        for (int i = 0; i < 3; i++) {
            fused[i] = calloc((size_t)count[i], sizeof(float));
            composed[i] = calloc((size_t)count[i], sizeof(float));
        }
        wt_set_last_error(WT_OK, NULL);
        bool one_pass = false, composed_one_pass = true;
        bool ok = norm_grads(ctx, "fused", cases[c].rms, cases[c].nd, cases[c].shape, cases[c].k, cases[c].weight,
                             cases[c].bias, host, fused, &one_pass) &&
                  norm_grads(g_cpu, "composed", cases[c].rms, cases[c].nd, cases[c].shape, cases[c].k,
                             cases[c].weight, cases[c].bias, host, composed, &composed_one_pass);
        double err[3] = {0}, big[3] = {0};
        for (int i = 0; ok && i < 3; i++)
            for (int64_t e = 0; e < count[i]; e++) {
                err[i] = fmax(err[i], fabs(fused[i][e] - composed[i][e]));
                big[i] = fmax(big[i], fabs(composed[i][e]));
            }
        const char *name = cases[c].rms ? "rms norm" : "layer norm";
        printf("%s backward, %lld elements, rows of %lld%s: one pass %s; max difference to the composed rule dx %.2g "
               "(largest %.2g), dweight %.2g (%.2g), dbias %.2g (%.2g)\n",
               name, (long long)n, (long long)C, cases[c].shift != 0.0f ? ", shifted by 1000" : "",
               one_pass ? "ran" : "did not run", err[0], big[0], err[1], big[1], err[2], big[2]);
        /* The knob turns the node off on this backend too (one shape a norm: each run costs a pass). */
        if (ok && C == 384) {
            float *again[3] = {NULL, NULL, NULL};
            for (int i = 0; i < 3; i++) again[i] = calloc((size_t)count[i], sizeof(float));
            bool here = true;
            ok = norm_grads(ctx, "composed", cases[c].rms, cases[c].nd, cases[c].shape, cases[c].k, cases[c].weight,
                            cases[c].bias, host, again, &here);
            composed_one_pass = composed_one_pass || here;
            for (int i = 0; i < 3; i++) free(again[i]);
        }
        /* WebGPU's kernel holds rows of up to 8192 in registers; longer ones
         * are composed, without a refused node. */
        const bool expected = b == TEST_BACKEND_CPU || C <= 8192;
        CHECK(ok && one_pass == expected && !composed_one_pass && (expected || wt_last_error()[0] == 0),
              "%s backward, rows of %lld: the one-pass node ran %d (expected %d), with WT_NORM_BACKWARD=composed %d; "
              "last error '%s'", name, (long long)C, (int)one_pass, (int)expected, (int)composed_one_pass,
              wt_last_error());
        /* x's gradient scales with 1 / the row's spread, not with the shift. */
        CHECK(ok && err[0] <= 1e-4 * (big[0] + 1.0) && err[1] <= 1e-4 * (big[1] + 1.0) &&
                  err[2] <= 1e-4 * (big[2] + 1.0),
              "%s backward, %lld elements, rows of %lld%s: max difference to the composed rule dx %.2g "
              "(largest %.2g), dweight %.2g (%.2g), dbias %.2g (%.2g)",
              name, (long long)n, (long long)C, cases[c].shift != 0.0f ? ", shifted by 1000" : "", err[0], big[0],
              err[1], big[1], err[2], big[2]);
        for (int i = 0; i < 4; i++) free(host[i]);
        for (int i = 0; i < 3; i++) free(fused[i]), free(composed[i]);
    }
    wt_context_destroy(ctx);
}

