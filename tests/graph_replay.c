/* graph_replay <cpu|vulkan|gles>: captured graphs (webtensor.h, "captured
 * graphs") replay the kernels of their ops and give the bits the ops give
 * when run again: an inference chain (linear, gelu, softmax, embedding,
 * sum, matmul) replayed on new inputs against the same ops run eagerly on
 * those inputs, and a training step (autograd backward, SGD) replayed N
 * times against N eager steps from the same weights. Then the errors: a
 * second capture, replay during a capture, a failing op losing the
 * capture, a replay after the device is lost, released tensors, leaks. */
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const char *g_mode;
static wt_context *g_ctx;

static wt_tensor *make(wt_dtype dt, int ndim, const int64_t *shape, const void *v)
{
    wt_tensor *t = NULL;
    CHECK(wt_tensor_from_data(g_ctx, dt, ndim, shape, v, &t) == WT_OK, "from_data [%s]: %s", g_mode, wt_last_error());
    return t;
}

static void fill(float *v, int n, unsigned seed, float scale)
{
    unsigned s = seed * 2654435761u + 1;
    for (int i = 0; i < n; i++) {
        s = s * 1664525u + 1013904223u;
        v[i] = scale * ((float)(s >> 8) / 16777216.0f - 0.5f);
    }
}

static uint64_t live(void)
{
    wt_memory_stats ms;
    return wt_context_memory_stats(g_ctx, &ms) == WT_OK ? ms.live_tensors : UINT64_MAX;
}

enum { B = 4, D = 16, H = 24, V = 10 };

/* The chain: y = softmax(gelu(x @ w1^T + b1) @ w2^T) + rowsum(embedding(idx)) */
static wt_status chain(const wt_tensor *x, const wt_tensor *idx, const wt_tensor *w1, const wt_tensor *b1,
                       const wt_tensor *w2, const wt_tensor *table, wt_tensor **y)
{
    wt_tensor *h = NULL, *g = NULL, *l = NULL, *p = NULL, *e = NULL, *es = NULL;
    int ax = 1;
    wt_status st = wt_linear(x, w1, b1, &h);
    if (st == WT_OK) st = wt_gelu(h, &g);
    if (st == WT_OK) st = wt_linear(g, w2, NULL, &l);
    if (st == WT_OK) st = wt_softmax(l, -1, &p);
    if (st == WT_OK) st = wt_embedding(table, idx, &e);
    if (st == WT_OK) st = wt_sum(e, 1, &ax, true, &es);
    if (st == WT_OK) st = wt_add(p, es, y);
    wt_tensor_release(h), wt_tensor_release(g), wt_tensor_release(l);
    wt_tensor_release(p), wt_tensor_release(e), wt_tensor_release(es);
    return st;
}

static void test_inference(void)
{
    float w1v[H * D], b1v[H], w2v[V * H], tv[V * 8], xv[B * D];
    fill(w1v, H * D, 1, 0.5f), fill(b1v, H, 2, 0.1f), fill(w2v, V * H, 3, 0.5f), fill(tv, V * 8, 4, 1.0f);
    fill(xv, B * D, 5, 2.0f);
    int32_t iv[B] = {1, 4, 9, 0};
    const int64_t sw1[2] = {H, D}, sb1[1] = {H}, sw2[2] = {V, H}, st_[2] = {V, 8}, sx[2] = {B, D}, si[1] = {B};
    wt_tensor *w1 = make(WT_F32, 2, sw1, w1v), *b1 = make(WT_F32, 1, sb1, b1v), *w2 = make(WT_F32, 2, sw2, w2v);
    wt_tensor *table = make(WT_F32, 2, st_, tv), *x = make(WT_F32, 2, sx, xv), *idx = make(WT_I32, 1, si, iv);
    const uint64_t base = live();
    wt_graph *g = NULL;
    wt_tensor *y = NULL;
    CHECK(wt_graph_begin(g_ctx) == WT_OK, "capture_begin [%s]: %s", g_mode, wt_last_error());
    CHECK(chain(x, idx, w1, b1, w2, table, &y) == WT_OK, "the chain while capturing [%s]: %s", g_mode, wt_last_error());
    CHECK(wt_graph_end(g_ctx, &g) == WT_OK && g, "capture_end [%s]: %s", g_mode, wt_last_error());
    int64_t nodes = 0;
    CHECK(wt_graph_node_count(g, &nodes) == WT_OK && nodes >= 7, "the graph has the chain's kernels [%s]: %lld",
          g_mode, (long long)nodes);
    for (int step = 0; step < 3 && g; step++) {
        fill(xv, B * D, 100 + (unsigned)step, 2.0f);
        for (int i = 0; i < B; i++) iv[i] = (iv[i] + 3) % V;
        CHECK(wt_tensor_write(x, xv, sizeof xv) == WT_OK && wt_tensor_write(idx, iv, sizeof iv) == WT_OK,
              "write the inputs [%s]: %s", g_mode, wt_last_error());
        CHECK(wt_graph_replay(g) == WT_OK, "replay %d [%s]: %s", step, g_mode, wt_last_error());
        float got[B * V], want[B * V];
        CHECK(wt_tensor_read(y, got, sizeof got) == WT_OK, "read the replayed result [%s]", g_mode);
        /* The same ops, run eagerly on fresh tensors with the same values. */
        wt_tensor *x2 = make(WT_F32, 2, sx, xv), *i2 = make(WT_I32, 1, si, iv), *y2 = NULL;
        CHECK(chain(x2, i2, w1, b1, w2, table, &y2) == WT_OK && wt_tensor_read(y2, want, sizeof want) == WT_OK,
              "the eager chain [%s]: %s", g_mode, wt_last_error());
        CHECK(memcmp(got, want, sizeof got) == 0, "replay %d equals the eager ops bit for bit [%s] (%g vs %g)", step,
              g_mode, (double)got[0], (double)want[0]);
        /* And the replay really ran: the result follows the new input. */
        if (step == 0) {
            fill(xv, B * D, 999, 2.0f);
            wt_tensor_write(x, xv, sizeof xv);
            wt_graph_replay(g);
            float moved[B * V];
            CHECK(wt_tensor_read(y, moved, sizeof moved) == WT_OK && memcmp(moved, got, sizeof got) != 0,
                  "a new input gives a new result [%s]", g_mode);
        }
        wt_tensor_release(x2), wt_tensor_release(i2), wt_tensor_release(y2);
    }
    /* The caller's result released: the graph still holds its tensor. */
    wt_tensor_release(y);
    CHECK(wt_graph_replay(g) == WT_OK && wt_context_sync(g_ctx) == WT_OK, "replay after the result was released [%s]: %s",
          g_mode, wt_last_error());
    CHECK(live() > base, "the graph holds its tensors [%s]", g_mode);
    wt_graph_release(g);
    CHECK(live() == base, "destroying the graph frees what it held [%s]: %llu -> %llu", g_mode,
          (unsigned long long)base, (unsigned long long)live());
    wt_tensor_release(w1), wt_tensor_release(b1), wt_tensor_release(w2), wt_tensor_release(table);
    wt_tensor_release(x), wt_tensor_release(idx);
}

/* One SGD step of a two-layer MLP with autograd's backward. */
static wt_status train_step(wt_tensor *w1, wt_tensor *w2, const wt_tensor *x, const wt_tensor *labels)
{
    wt_tensor *h = NULL, *r = NULL, *l = NULL, *loss = NULL, *g1 = NULL, *g2 = NULL;
    wt_sgd_options so;
    wt_sgd_options_init(&so);
    so.lr = 0.1f;
    so.momentum = 0;
    wt_tensor_zero_grad(w1), wt_tensor_zero_grad(w2);
    wt_status st = wt_linear(x, w1, NULL, &h);
    if (st == WT_OK) st = wt_relu(h, &r);
    if (st == WT_OK) st = wt_linear(r, w2, NULL, &l);
    if (st == WT_OK) st = wt_cross_entropy(l, labels, NULL, &loss);
    if (st == WT_OK) st = wt_backward(loss);
    if (st == WT_OK) st = wt_tensor_grad(w1, &g1);
    if (st == WT_OK) st = wt_tensor_grad(w2, &g2);
    if (st == WT_OK) {
        wt_no_grad_begin(g_ctx);
        st = wt_sgd_step(w1, g1, NULL, &so);
        if (st == WT_OK) st = wt_sgd_step(w2, g2, NULL, &so);
        wt_no_grad_end(g_ctx);
    }
    wt_tensor_release(h), wt_tensor_release(r), wt_tensor_release(l), wt_tensor_release(loss);
    wt_tensor_release(g1), wt_tensor_release(g2);
    return st;
}

static void test_training(void)
{
    float w1v[H * D], w2v[V * H], xv[B * D];
    fill(w1v, H * D, 11, 0.5f), fill(w2v, V * H, 12, 0.5f), fill(xv, B * D, 13, 2.0f);
    const int32_t lv[B] = {3, 1, 7, 0};
    const int64_t sw1[2] = {H, D}, sw2[2] = {V, H}, sx[2] = {B, D}, sl[1] = {B};
    wt_tensor *x = make(WT_F32, 2, sx, xv), *labels = make(WT_I32, 1, sl, lv);
    /* Two copies of the weights: one trained eagerly, one by replays. */
    wt_tensor *ea1 = make(WT_F32, 2, sw1, w1v), *ea2 = make(WT_F32, 2, sw2, w2v);
    wt_tensor *re1 = make(WT_F32, 2, sw1, w1v), *re2 = make(WT_F32, 2, sw2, w2v);
    wt_tensor_set_requires_grad(ea1, true), wt_tensor_set_requires_grad(ea2, true);
    wt_tensor_set_requires_grad(re1, true), wt_tensor_set_requires_grad(re2, true);
    enum { STEPS = 5 };
    for (int s = 0; s < STEPS; s++)
        CHECK(train_step(ea1, ea2, x, labels) == WT_OK, "eager step %d [%s]: %s", s, g_mode, wt_last_error());
    wt_graph *g = NULL;
    CHECK(wt_graph_begin(g_ctx) == WT_OK, "capture_begin [%s]", g_mode);
    CHECK(train_step(re1, re2, x, labels) == WT_OK, "the captured step [%s]: %s", g_mode, wt_last_error());
    CHECK(wt_graph_end(g_ctx, &g) == WT_OK, "capture_end [%s]: %s", g_mode, wt_last_error());
    for (int s = 1; s < STEPS && g; s++)
        CHECK(wt_graph_replay(g) == WT_OK, "replayed step %d [%s]: %s", s, g_mode, wt_last_error());
    float a1[H * D], b1[H * D], a2[V * H], b2[V * H];
    CHECK(wt_tensor_read(ea1, a1, sizeof a1) == WT_OK && wt_tensor_read(re1, b1, sizeof b1) == WT_OK &&
              wt_tensor_read(ea2, a2, sizeof a2) == WT_OK && wt_tensor_read(re2, b2, sizeof b2) == WT_OK,
          "read the weights [%s]", g_mode);
    CHECK(memcmp(a1, b1, sizeof a1) == 0 && memcmp(a2, b2, sizeof a2) == 0,
          "%d replayed training steps equal %d eager ones bit for bit [%s]", STEPS, STEPS, g_mode);
    CHECK(memcmp(a1, w1v, sizeof a1) != 0, "the steps trained the weights [%s]", g_mode);
    wt_graph_release(g);
    wt_tensor_release(ea1), wt_tensor_release(ea2), wt_tensor_release(re1), wt_tensor_release(re2);
    wt_tensor_release(x), wt_tensor_release(labels);
}

static void test_errors(test_backend b)
{
    const float v[4] = {1, 2, 3, 4};
    const int64_t s4[1] = {4}, s3[1] = {3};
    wt_tensor *x = make(WT_F32, 1, s4, v), *z = make(WT_F32, 1, s3, v), *y = NULL;
    wt_graph *g = NULL;
    CHECK(wt_graph_begin(NULL) == WT_ERR_INVALID_ARGUMENT, "capture_begin(NULL)");
    CHECK(wt_graph_end(g_ctx, &g) == WT_ERR_INVALID_ARGUMENT && !g, "capture_end without a capture");
    CHECK(wt_graph_replay(NULL) == WT_ERR_INVALID_ARGUMENT, "replay(NULL)");
    wt_graph_release(NULL);
    /* A failing op loses the capture; the context can capture again. */
    CHECK(wt_graph_begin(g_ctx) == WT_OK, "capture");
    CHECK(wt_graph_begin(g_ctx) == WT_ERR_INVALID_ARGUMENT, "a second capture on the context [%s]", g_mode);
    CHECK(wt_exp(x, &y) == WT_OK, "an op");
    wt_tensor *bad = NULL;
    CHECK(wt_add(x, z, &bad) == WT_ERR_SHAPE, "a failing op while capturing fails as usual");
    CHECK(wt_graph_end(g_ctx, &g) == WT_OK, "a shape error before any kernel does not lose the capture");
    wt_graph *g2 = NULL;
    CHECK(wt_graph_begin(g_ctx) == WT_OK, "capture again");
    CHECK(wt_graph_replay(g) == WT_ERR_INVALID_ARGUMENT, "replay during a capture [%s]", g_mode);
    CHECK(wt_graph_end(g_ctx, NULL) == WT_ERR_INVALID_ARGUMENT, "capture_end(out NULL) drops the capture");
    CHECK(wt_graph_begin(g_ctx) == WT_OK && wt_graph_end(g_ctx, &g2) == WT_OK, "an empty capture");
    int64_t n = -1;
    CHECK(g2 && wt_graph_node_count(g2, &n) == WT_OK && n == 0 && wt_graph_replay(g2) == WT_OK,
          "an empty graph replays nothing");
    wt_graph_release(g2);
    /* Destroying the capturing graph is not possible (the caller has no
     * handle): a capture left open is ended by capture_end only. */
    CHECK(wt_graph_replay(g) == WT_OK, "replay [%s]: %s", g_mode, wt_last_error());
    wt_tensor_release(y);
    /* Device loss: a clean error, then recovery and a new capture. */
    if (b != TEST_BACKEND_CPU && wt_context_lose_device(g_ctx) == WT_OK) {
        wt_status st = wt_graph_replay(g);
        if (st == WT_OK) st = wt_context_sync(g_ctx);
        CHECK(st == WT_ERR_DEVICE_LOST, "replay after a device loss is WT_ERR_DEVICE_LOST [%s]: %s (%s)", g_mode,
              wt_status_string(st), wt_last_error());
        wt_graph_release(g);
        g = NULL;
        CHECK(wt_context_recover(g_ctx) == WT_OK, "recover [%s]: %s", g_mode, wt_last_error());
    }
    wt_graph_release(g);
    wt_tensor_release(x), wt_tensor_release(z);
}

int main(int argc, char **argv)
{
    test_backend b = test_parse_backend(argc > 1 ? argv[1] : "");
    if (b == TEST_BACKEND_INVALID) {
        fprintf(stderr, "usage: graph_replay cpu|vulkan|gles\n");
        return 2;
    }
    g_mode = test_backend_name(b);
    char prefix[64];
    snprintf(prefix, sizeof prefix, "graph_replay %s", g_mode);
    if (test_create_context(b, &g_ctx) != WT_OK) return test_summary(prefix);
    const uint64_t start = live();
    test_inference();
    test_training();
    CHECK(live() == start, "inference and training left the context as they found it [%s]: %llu -> %llu", g_mode,
          (unsigned long long)start, (unsigned long long)live());
    test_errors(b);
    wt_context_destroy(g_ctx);
    return test_summary(prefix);
}
