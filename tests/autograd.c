/* Reverse-mode automatic differentiation (webtensor.h, "autograd").
 *
 * Every derivative rule is checked through the tape on the backend under
 * test against float64 central finite differences that this program
 * computes from the forward op alone, run on the CPU backend (never from
 * the library's backward). Then the tape's contract: accumulation,
 * retain_graph, no-grad, detach, the version check, non-differentiable
 * ops, the functional wt_grad, memory that stays flat over training
 * steps, the catalogue (every op has a rule or is marked), and a small
 * MLP trained with the tape.
 *
 * This file: the tape's contract, memory, the catalogue, the MLP, the
 * ready hooks and main; the rules' checks are in autograd_ops.c and
 * autograd_nn.c, the checkers in autograd_gradcheck.c. */
#include "autograd_test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------ the tape's contract */

static wt_tensor *vec(const float *v, int64_t n)
{
    wt_tensor *t = NULL;
    wt_tensor_from_data(g_ctx, WT_F32, 1, &n, v, &t);
    return t;
}

static float read1(const wt_tensor *t, int64_t i)
{
    float buf[64] = {0};
    if (!t || wt_tensor_read(t, buf, sizeof(float) * (size_t)wt_tensor_numel(t)) != WT_OK) return NAN;
    return buf[i];
}

/* loss = sum(w * x) with w requiring grad. */
static wt_tensor *dot_loss(wt_tensor *w, wt_tensor *x)
{
    wt_tensor *p = NULL, *s = NULL;
    if (wt_mul(w, x, &p) == WT_OK) wt_sum(p, 0, NULL, false, &s);
    wt_tensor_release(p);
    return s;
}

static void test_contract(void)
{
    float wv[3] = {1, 2, 3}, xv[3] = {0.5f, -1, 2};
    wt_tensor *w = vec(wv, 3), *x = vec(xv, 3), *g = NULL;
    CHECK(!wt_tensor_requires_grad(w), "a new tensor does not require grad");
    CHECK(wt_tensor_set_requires_grad(w, true) == WT_OK && wt_tensor_requires_grad(w), "set_requires_grad");
    CHECK(wt_tensor_grad(w, &g) == WT_OK && !g, "no gradient before backward");

    /* accumulation over two backward calls */
    for (int k = 0; k < 2; k++) {
        wt_tensor *l = dot_loss(w, x);
        CHECK(wt_backward(l) == WT_OK, "backward %d: %s", k, wt_last_error());
        wt_tensor_release(l);
    }
    wt_tensor_grad(w, &g);
    CHECK(read1(g, 1) == -2.0f, "gradients accumulate (%g)", read1(g, 1));
    wt_tensor_release(g);
    wt_tensor_zero_grad(w);
    g = (wt_tensor *)1;
    CHECK(wt_tensor_grad(w, &g) == WT_OK && !g, "zero_grad drops the gradient");

    /* a second backward without retain_graph is refused; with it, allowed */
    wt_tensor *l = dot_loss(w, x);
    wt_backward_options o;
    wt_backward_options_init(&o);
    o.retain_graph = true;
    CHECK(wt_backward_ex(1, &l, NULL, &o) == WT_OK, "backward, retain_graph");
    CHECK(wt_backward(l) == WT_OK, "second backward of a retained graph");
    wt_status st = wt_backward(l);
    CHECK(st == WT_ERR_INVALID_ARGUMENT && strstr(wt_last_error(), "retain_graph"),
          "third backward refused: %s", wt_last_error());
    wt_tensor_grad(w, &g);
    CHECK(read1(g, 2) == 4.0f, "two backward calls counted (%g)", read1(g, 2));
    wt_tensor_release(g);
    wt_tensor_release(l);
    wt_tensor_zero_grad(w);

    /* no-grad scope, detach */
    wt_no_grad_begin(g_ctx);
    l = dot_loss(w, x);
    CHECK(!wt_tensor_requires_grad(l) && !wt_grad_enabled(g_ctx), "nothing recorded under no_grad");
    CHECK(wt_backward(l) == WT_ERR_INVALID_ARGUMENT, "backward of an unrecorded result is refused");
    wt_tensor_release(l);
    wt_no_grad_end(g_ctx);
    CHECK(wt_no_grad_end(g_ctx) == WT_ERR_INVALID_ARGUMENT, "no_grad_end without begin");
    wt_tensor *d = NULL;
    wt_detach(w, &d);
    l = dot_loss(d, x);
    CHECK(d && !wt_tensor_requires_grad(l), "detach stops the graph");
    wt_tensor_release(l);
    wt_tensor_release(d);

    /* the version check: w saved by mul, then updated in place */
    l = dot_loss(w, x);
    wt_sgd_options so;
    wt_sgd_options_init(&so);
    wt_tensor *fake = vec(xv, 3);
    CHECK(wt_sgd_step(w, fake, NULL, &so) == WT_OK, "sgd_step on a leaf");
    st = wt_backward(l);
    CHECK(st == WT_ERR_INVALID_ARGUMENT && strstr(wt_last_error(), "modified in place"),
          "a saved tensor changed in place is refused: %s", wt_last_error());
    g = NULL;
    wt_tensor_grad(w, &g);
    CHECK(!g, "a refused backward leaves .grad alone");
    wt_tensor_release(g);
    wt_tensor_release(l);
    wt_tensor_release(fake);
    CHECK(wt_copy_into(w, x) == WT_ERR_INVALID_ARGUMENT, "copy_into a leaf requiring grad is refused while recording");
    wt_no_grad_begin(g_ctx);
    CHECK(wt_copy_into(w, x) == WT_OK, "and allowed under no_grad");
    wt_no_grad_end(g_ctx);

    /* non-differentiable ops */
    wt_tensor *am = NULL;
    CHECK(wt_argmax(w, 0, NULL, false, &am) == WT_OK && !wt_tensor_requires_grad(am), "argmax is constant");
    st = wt_backward(am);
    CHECK(st == WT_ERR_INVALID_ARGUMENT && strstr(wt_last_error(), "argmax"), "backward through argmax names it: %s",
          wt_last_error());
    wt_tensor_release(am);
    wt_tensor *cmp = NULL;
    wt_gt(w, x, &cmp);
    CHECK(cmp && !wt_tensor_requires_grad(cmp), "a comparison is constant");
    wt_tensor_release(cmp);
    /* an op without a rule refuses rather than giving a zero gradient */
    wt_tensor *ct = NULL;
    st = wt_relu_backward(w, w, &ct);
    CHECK(st == WT_ERR_UNSUPPORTED && !ct && strstr(wt_last_error(), "no derivative rule"),
          "relu_backward (no rule yet) refuses a tracked input: %s", wt_last_error());
    wt_tensor_release(ct);
    CHECK(wt_tensor_set_requires_grad(x, true) == WT_OK, "x requires grad too");
    wt_tensor *i32 = NULL;
    int32_t iv[2] = {1, 2};
    wt_tensor_from_data(g_ctx, WT_I32, 1, (int64_t[]){2}, iv, &i32);
    CHECK(wt_tensor_set_requires_grad(i32, true) == WT_ERR_INVALID_ARGUMENT, "an i32 tensor cannot require grad");
    wt_tensor_release(i32);

    /* the functional form: gradients of a result and a leaf, no .grad */
    wt_tensor *h = NULL, *loss = NULL, *grads[2] = {0};
    wt_tanh(w, &h);
    loss = dot_loss(h, x);
    wt_tensor *ins[2] = {h, x};
    st = wt_grad(1, &loss, NULL, 2, ins, NULL, grads);
    CHECK(st == WT_OK && grads[0] && grads[1], "wt_grad: %s", wt_last_error());
    float tw = tanhf(read1(w, 0));
    CHECK(fabsf(read1(grads[0], 0) - xv[0]) < 1e-6f && fabsf(read1(grads[1], 0) - tw) < 1e-5f,
          "wt_grad values (%g %g)", read1(grads[0], 0), read1(grads[1], 0));
    g = NULL;
    wt_tensor_grad(x, &g);
    CHECK(!g, "wt_grad leaves .grad alone");
    wt_tensor_release(g);
    for (int j = 0; j < 2; j++) wt_tensor_release(grads[j]);
    wt_tensor_release(loss);
    wt_tensor_release(h);
    wt_tensor_release(w);
    wt_tensor_release(x);
}

/* ----------------------------------------------- memory and the catalogue */

static uint64_t live_tensors(void)
{
    wt_memory_stats s;
    wt_context_memory_stats(g_ctx, &s);
    return s.live_tensors;
}

static void test_memory(void)
{
    int64_t xs[2] = {8, 4}, ws[2] = {3, 4};
    wt_tensor *x = NULL, *w = NULL, *b = NULL;
    wt_randn(g_ctx, WT_F32, 2, xs, 1, &x);
    wt_randn(g_ctx, WT_F32, 2, ws, 2, &w);
    wt_tensor_zeros(g_ctx, WT_F32, 1, (int64_t[]){3}, &b);
    wt_tensor_set_requires_grad(w, true);
    wt_tensor_set_requires_grad(b, true);
    int32_t lab[8] = {0, 1, 2, 0, 1, 2, 0, 1};
    wt_tensor *labels = NULL;
    wt_tensor_from_data(g_ctx, WT_I32, 1, (int64_t[]){8}, lab, &labels);
    uint64_t after_first = 0;
    bool flat = true;
    for (int step = 0; step < 12; step++) {
        wt_scope *s = NULL;
        wt_scope_begin(g_ctx, &s);
        wt_tensor *y = NULL, *a = NULL, *loss = NULL, *gw = NULL, *gb = NULL;
        wt_linear(x, w, b, &y);
        wt_gelu(y, &a);
        wt_cross_entropy(a, labels, NULL, &loss);
        if (step % 3 == 2) {
            /* a forward pass never differentiated frees its graph too */
        } else if (wt_backward(loss) != WT_OK) {
            flat = CHECK(false, "memory: backward: %s", wt_last_error());
        }
        wt_tensor_grad(w, &gw);
        wt_tensor_grad(b, &gb);
        wt_sgd_options o;
        wt_sgd_options_init(&o);
        if (gw) wt_sgd_step(w, gw, NULL, &o);
        if (gb) wt_sgd_step(b, gb, NULL, &o);
        wt_tensor_zero_grad(w);
        wt_tensor_zero_grad(b);
        wt_scope_end(s);
        uint64_t live = live_tensors();
        if (step == 0) after_first = live;
        else if (live != after_first) flat = false;
    }
    CHECK(flat, "live tensors stay at %llu over training steps (now %llu)", (unsigned long long)after_first,
          (unsigned long long)live_tensors());
    wt_tensor_release(x);
    wt_tensor_release(w);
    wt_tensor_release(b);
    wt_tensor_release(labels);
}

static void test_catalogue(void)
{
    /* Ops that are differentiable but have no rule yet: this list and the
     * table must agree, so a rule added (or lost) shows here. */
    static const char *const no_rule_yet[] = {
        "activation_backward",
        "cross_entropy_backward", "embedding_backward", "layernorm_backward", "batch_norm_backward",
        "conv2d_backward", "max_pool2d_backward", "avg_pool2d_backward", "interpolate_backward",
        "linear_quant"};
    int missing = 0, rules = 0, marked = 0;
    for (int op = 0; op < wt_op_count(); op++) {
        wt_op_grad k = wt_op_gradient(op);
        const char *name = wt_op_name(op);
        bool listed = false;
        for (size_t j = 0; j < sizeof no_rule_yet / sizeof no_rule_yet[0]; j++)
            listed = listed || !strcmp(no_rule_yet[j], name);
        if (k == WT_OP_GRAD_UNKNOWN) {
            missing++;
            CHECK(false, "catalogue: %s has no derivative row (src/autograd/rules_table.c)", name);
        } else if (k == WT_OP_GRAD_RULE) {
            rules++;
        } else {
            marked++;
        }
        if (listed != (k == WT_OP_GRAD_NO_RULE_YET))
            CHECK(false, "catalogue: %s is %s the list of ops without a rule yet", name,
                  listed ? "wrongly on" : "not on");
    }
    CHECK(wt_op_gradient(-1) == WT_OP_GRAD_UNKNOWN && wt_op_gradient(wt_op_count()) == WT_OP_GRAD_UNKNOWN,
          "catalogue: indices out of range");
    printf("catalogue: %d ops with a rule, %d marked, %d missing\n", rules, marked, missing);
    CHECK(missing == 0, "catalogue: %d ops with a rule, %d marked (non-differentiable, creation, in place, no rule "
                        "yet), %d missing",
          rules, marked, missing);
}

/* ------------------------------------------------------- a small MLP */

/* Two-class spirals-like data (points inside / outside a circle), a
 * 2-16-2 MLP with tanh, AdamW, trained with the tape. */
static void test_mlp(void)
{
    enum { N = 64, H = 16, STEPS = 300 };
    float xv[N * 2];
    int32_t yv[N];
    test_rng_seed(99);
    for (int i = 0; i < N; i++) {
        float a = test_rng_uniform(-1.5f, 1.5f), b = test_rng_uniform(-1.5f, 1.5f);
        xv[2 * i] = a, xv[2 * i + 1] = b;
        yv[i] = a * a + b * b < 1.0f;
    }
    wt_tensor *x = NULL, *y = NULL, *p[4] = {0}, *m[4] = {0}, *v[4] = {0};
    wt_tensor_from_data(g_ctx, WT_F32, 2, (int64_t[]){N, 2}, xv, &x);
    wt_tensor_from_data(g_ctx, WT_I32, 1, (int64_t[]){N}, yv, &y);
    int64_t shapes[4][2] = {{H, 2}, {H, 0}, {2, H}, {2, 0}};
    for (int k = 0; k < 4; k++) {
        int nd = shapes[k][1] ? 2 : 1;
        wt_tensor *r = NULL;
        wt_randn(g_ctx, WT_F32, nd, shapes[k], 10 + (uint64_t)k, &r);
        wt_mul_scalar(r, nd == 2 ? 0.5 : 0.0, &p[k]);
        wt_tensor_release(r);
        wt_tensor_set_requires_grad(p[k], true);
        wt_tensor_zeros(g_ctx, WT_F32, nd, shapes[k], &m[k]);
        wt_tensor_zeros(g_ctx, WT_F32, nd, shapes[k], &v[k]);
    }
    wt_adamw_options o;
    wt_adamw_options_init(&o);
    o.lr = 0.05f;
    o.weight_decay = 0.0f;
    float first = NAN, last = NAN;
    bool ok = true;
    for (int step = 1; step <= STEPS && ok; step++) {
        wt_scope *s = NULL;
        wt_scope_begin(g_ctx, &s);
        wt_tensor *h = NULL, *a = NULL, *logits = NULL, *loss = NULL;
        ok = wt_linear(x, p[0], p[1], &h) == WT_OK && wt_tanh(h, &a) == WT_OK &&
             wt_linear(a, p[2], p[3], &logits) == WT_OK && wt_cross_entropy(logits, y, NULL, &loss) == WT_OK &&
             wt_backward(loss) == WT_OK;
        for (int k = 0; k < 4 && ok; k++) {
            wt_tensor *g = NULL;
            ok = wt_tensor_grad(p[k], &g) == WT_OK && g && wt_adamw_step(p[k], g, m[k], v[k], step, &o) == WT_OK;
            wt_tensor_zero_grad(p[k]);
        }
        if (ok && (step == 1 || step == STEPS)) {
            float lv = NAN;
            wt_tensor_read(loss, &lv, sizeof lv);
            if (step == 1) first = lv;
            else last = lv;
        }
        wt_scope_end(s);
    }
    CHECK(ok, "mlp: training steps ran (%s)", ok ? "" : wt_last_error());
    printf("mlp: cross-entropy %.4f -> %.4f in %d steps\n", first, last, STEPS);
    CHECK(last < 0.25f && last < first, "mlp: loss %.4f -> %.4f after %d steps (bound 0.25)", first, last, STEPS);
    for (int k = 0; k < 4; k++) {
        wt_tensor_release(p[k]);
        wt_tensor_release(m[k]);
        wt_tensor_release(v[k]);
    }
    wt_tensor_release(x);
    wt_tensor_release(y);
}

/* Gradient-ready hooks: each fires once per backward pass, when its
 * leaf's gradient is final - read inside the hook, it already holds the
 * .grad the pass commits (w gets two contributions, so an early call
 * would see part of it) - and the .grad is bit for bit what it is
 * without hooks; accumulation over two passes, wt_grad (no calls), a
 * leaf the pass does not reach (no call), removal and bad arguments. */
typedef struct hook_log {
    int calls;
    float seen[32];
    int64_t n;
} hook_log;

static void log_ready(wt_tensor *grad, void *user)
{
    hook_log *h = user;
    h->calls++;
    if (wt_tensor_numel(grad) != h->n || wt_tensor_read(grad, h->seen, (size_t)h->n * sizeof(float)) != WT_OK)
        h->calls += 1000;
}

static wt_status hook_loss(wt_tensor *x, wt_tensor *w, wt_tensor *b, wt_tensor **loss)
{
    wt_tensor *y = NULL, *t = NULL, *ww = NULL, *s1 = NULL, *s2 = NULL, *s3 = NULL, *l1 = NULL;
    wt_status st = wt_linear(x, w, b, &y);
    if (st == WT_OK) st = wt_tanh(y, &t);
    if (st == WT_OK) st = wt_mul(w, w, &ww);
    if (st == WT_OK) st = wt_sum(t, 0, NULL, false, &s1);
    if (st == WT_OK) st = wt_sum(ww, 0, NULL, false, &s2);
    if (st == WT_OK) st = wt_sum(b, 0, NULL, false, &s3);
    if (st == WT_OK) st = wt_add(s1, s2, &l1);
    if (st == WT_OK) st = wt_add(l1, s3, loss);
    wt_tensor_release(y), wt_tensor_release(t), wt_tensor_release(ww), wt_tensor_release(s1);
    wt_tensor_release(s2), wt_tensor_release(s3), wt_tensor_release(l1);
    return st;
}

static void test_ready_hooks(void)
{
    float xv[12], wv[8], bv[4] = {0.1f, -0.2f, 0.3f, 0.05f};
    for (int i = 0; i < 12; i++) xv[i] = 0.37f * (float)(i % 5) - 0.61f;
    for (int i = 0; i < 8; i++) wv[i] = 0.23f * (float)i - 0.9f;
    wt_tensor *x = NULL, *w = NULL, *b = NULL, *u = NULL, *loss = NULL;
    wt_tensor_from_data(g_ctx, WT_F32, 2, (int64_t[]){6, 2}, xv, &x);
    wt_tensor_from_data(g_ctx, WT_F32, 2, (int64_t[]){4, 2}, wv, &w);
    wt_tensor_from_data(g_ctx, WT_F32, 1, (int64_t[]){4}, bv, &b);
    wt_tensor_from_data(g_ctx, WT_F32, 1, (int64_t[]){4}, bv, &u);
    wt_tensor_set_requires_grad(w, true);
    wt_tensor_set_requires_grad(b, true);
    wt_tensor_set_requires_grad(u, true);
    /* Without hooks: the reference .grad. */
    float ref_w[8] = {0}, ref_b[4] = {0}, got_w[8] = {0}, got_b[4] = {0};
    wt_tensor *g = NULL;
    CHECK(hook_loss(x, w, b, &loss) == WT_OK && wt_backward(loss) == WT_OK, "hooks: reference backward");
    wt_tensor_release(loss);
    wt_tensor_grad(w, &g), wt_tensor_read(g, ref_w, sizeof ref_w), wt_tensor_release(g), g = NULL;
    wt_tensor_grad(b, &g), wt_tensor_read(g, ref_b, sizeof ref_b), wt_tensor_release(g), g = NULL;
    wt_tensor_zero_grad(w), wt_tensor_zero_grad(b);
    hook_log hw = {.n = 8}, hb = {.n = 4}, hu = {.n = 4};
    CHECK(wt_tensor_set_grad_ready_hook(w, log_ready, &hw) == WT_OK &&
              wt_tensor_set_grad_ready_hook(b, log_ready, &hb) == WT_OK &&
              wt_tensor_set_grad_ready_hook(u, log_ready, &hu) == WT_OK,
          "hooks: set");
    for (int pass = 1; pass <= 2; pass++) {
        CHECK(hook_loss(x, w, b, &loss) == WT_OK && wt_backward(loss) == WT_OK, "hooks: backward %d", pass);
        wt_tensor_release(loss);
        wt_tensor_grad(w, &g), wt_tensor_read(g, got_w, sizeof got_w), wt_tensor_release(g), g = NULL;
        wt_tensor_grad(b, &g), wt_tensor_read(g, got_b, sizeof got_b), wt_tensor_release(g), g = NULL;
        CHECK(hw.calls == pass && hb.calls == pass && hu.calls == 0, "hooks: calls after pass %d: %d %d %d", pass,
              hw.calls, hb.calls, hu.calls);
        CHECK(!memcmp(hw.seen, got_w, sizeof got_w) && !memcmp(hb.seen, got_b, sizeof got_b),
              "hooks: pass %d: the hook saw the final .grad", pass);
        bool same = true;
        for (int i = 0; i < 8; i++) same = same && got_w[i] == (pass == 1 ? ref_w[i] : ref_w[i] + ref_w[i]);
        for (int i = 0; i < 4; i++) same = same && got_b[i] == (pass == 1 ? ref_b[i] : ref_b[i] + ref_b[i]);
        CHECK(same, "hooks: pass %d: .grad bit for bit as without hooks", pass);
    }
    /* wt_grad touches no .grad and calls no hook. */
    wt_tensor *gw[1] = {NULL};
    CHECK(hook_loss(x, w, b, &loss) == WT_OK && wt_grad(1, &loss, NULL, 1, &w, NULL, gw) == WT_OK && hw.calls == 2,
          "hooks: wt_grad calls none");
    wt_tensor_release(gw[0]);
    wt_tensor_release(loss);
    loss = NULL;
    /* Removed: no call. */
    CHECK(wt_tensor_set_grad_ready_hook(w, NULL, NULL) == WT_OK && hook_loss(x, w, b, &loss) == WT_OK &&
              wt_backward(loss) == WT_OK && hw.calls == 2 &&
              hb.calls == 3,
          "hooks: removal");
    wt_tensor *r = NULL;
    CHECK(hook_loss(x, w, b, &r) == WT_OK &&
              wt_tensor_set_grad_ready_hook(r, log_ready, &hw) == WT_ERR_INVALID_ARGUMENT &&
              wt_tensor_set_grad_ready_hook(NULL, log_ready, &hw) == WT_ERR_INVALID_ARGUMENT,
          "hooks: a recorded result and NULL are refused");
    wt_tensor_release(r), wt_tensor_release(loss);
    wt_tensor_release(x), wt_tensor_release(w), wt_tensor_release(b), wt_tensor_release(u);
}

int main(int argc, char **argv)
{
    test_backend b = test_parse_backend(argc > 1 ? argv[1] : "cpu");
    if (b == TEST_BACKEND_INVALID) {
        fprintf(stderr, "usage: autograd <cpu|vulkan|gles>\n");
        return 2;
    }
    printf("seed %llu\n", (unsigned long long)test_seed());
    test_rng_seed(test_seed());
    if (test_create_context(b, &g_ctx) != WT_OK) return test_summary("autograd");
    if (test_create_context(TEST_BACKEND_CPU, &g_cpu) != WT_OK) return test_summary("autograd");
    test_catalogue();
    test_contract();
    test_unary();
    test_binary();
    test_select();
    test_reductions();
    test_movement();
    test_nn();
    test_f16();
    test_attention_fused(b);
    test_attention_fused_shapes(b);
    test_attention_head_views(b);
    test_attention_qkv_rows(b);
    test_norm_backward_fused(b);
    test_memory();
    test_mlp();
    test_ready_hooks();
    wt_context_destroy(g_cpu);
    wt_context_destroy(g_ctx);
    return test_summary("autograd");
}
