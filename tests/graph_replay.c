/* graph_replay <cpu|vulkan|gles>: captured graphs (webtensor.h, "captured
 * graphs") replay the kernels of their ops and give the bits the ops give
 * when run again: an inference chain (linear, gelu, softmax, embedding,
 * sum, matmul) replayed on new inputs against the same ops run eagerly on
 * those inputs, and a training step (autograd backward, SGD) replayed N
 * times against N eager steps from the same weights. Then the errors: a
 * second capture, replay during a capture, a failing op losing the
 * capture, a replay after the device is lost, released tensors, leaks.
 * A decode step over a KV cache of fixed size (values that change per
 * step read on the device: rope's position, copy_into_at's start,
 * attention's kv_length) is captured once and replayed for every token,
 * against the same step run eagerly with host offsets and slices, f32 and
 * f16. On WebGPU the replays after the first encode the dispatches the
 * first recorded (WT_GRAPH_REPLAY_LIST): the same bits as running the
 * nodes, and the embedding's index check still raised on a later replay.
 * Temporaries in a line share buffers in those replays (counted in
 * wt_pipeline_stats.replay_shared_bytes; none with WT_GRAPH_REPLAY_SHARE=0,
 * the same bits), temporaries alive together never do, and both give the
 * host's values. */
#define _POSIX_C_SOURCE 200809L
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
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
    /* Replays from the recorded list (the default) and from the nodes
     * (WT_GRAPH_REPLAY_LIST=0) give the same bits. */
    float by_list[B * V], by_nodes[B * V];
    CHECK(wt_graph_replay(g) == WT_OK && wt_tensor_read(y, by_list, sizeof by_list) == WT_OK, "replay [%s]: %s",
          g_mode, wt_last_error());
    setenv("WT_GRAPH_REPLAY_LIST", "0", 1);
    CHECK(wt_graph_replay(g) == WT_OK && wt_tensor_read(y, by_nodes, sizeof by_nodes) == WT_OK,
          "replay through the nodes [%s]: %s", g_mode, wt_last_error());
    unsetenv("WT_GRAPH_REPLAY_LIST");
    CHECK(memcmp(by_list, by_nodes, sizeof by_list) == 0, "a replay from the list equals one from the nodes [%s]",
          g_mode);
    /* An index out of range on a later replay is still caught (at the
     * replay or at the next sync), and the graph replays on afterwards. */
    for (int round = 0; round < 2; round++) {
        int32_t badv[B] = {1, 2, V + 5, 3};
        CHECK(wt_tensor_write(idx, badv, sizeof badv) == WT_OK, "write a bad index");
        wt_status st = wt_graph_replay(g);
        if (st == WT_OK) st = wt_context_sync(g_ctx);
        CHECK(st == WT_ERR_INVALID_ARGUMENT, "replay %d with index %d of %d rows fails [%s]: %s", round, V + 5, V,
              g_mode, wt_status_string(st));
        CHECK(wt_tensor_write(idx, iv, sizeof iv) == WT_OK && wt_graph_replay(g) == WT_OK &&
                  wt_context_sync(g_ctx) == WT_OK,
              "a good index replays again [%s]: %s", g_mode, wt_last_error());
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


/* ------------------------------------------------ a decode step, replayed */

enum { DM = 32, HQ = 4, HKV = 2, HD = 8, CACHE = 12, STEPS = 7 };

typedef struct decode_weights {
    wt_tensor *wq, *wk, *wv, *wo;
} decode_weights;

/* [1, DM] -> [1, n, 1, HD] heads of x @ w^T, roped at pos (host offset, or
 * the device's position when pos_t is set). */
static wt_status heads(const wt_tensor *x, const wt_tensor *w, int64_t n, bool rope, int64_t pos,
                       const wt_tensor *pos_t, wt_tensor **out)
{
    wt_tensor *p = NULL, *p4 = NULL, *r = NULL;
    const int64_t s4[4] = {1, 1, n, HD};
    wt_status st = wt_linear(x, w, NULL, &p);
    if (st == WT_OK) st = wt_reshape(p, 4, s4, &p4);
    if (st == WT_OK && rope) {
        wt_rope_options ro;
        wt_rope_options_init(&ro);
        ro.layout = WT_ROPE_BSHD;
        ro.theta = 500.0;
        ro.offset = pos_t ? 0 : pos;
        ro.position = pos_t;
        st = wt_rope_v2(p4, &ro, &r);
    }
    if (st == WT_OK) st = wt_transpose(r ? r : p4, 1, 2, out);
    wt_tensor_release(p), wt_tensor_release(p4), wt_tensor_release(r);
    return st;
}

/* One decode step of one attention layer: the token's keys and values go
 * into the caches at pos, then attention over the first pos + 1 keys.
 * Eager form (pos_t NULL): host offsets and slices, as a program without
 * capture writes it. Device form: pos_t / len_t hold pos and pos + 1. */
static wt_status decode_step(const decode_weights *w, const wt_tensor *x, wt_tensor *kc, wt_tensor *vc, int64_t pos,
                             const wt_tensor *pos_t, const wt_tensor *len_t, wt_tensor **y)
{
    wt_tensor *q = NULL, *k = NULL, *v = NULL, *ks = NULL, *vs = NULL, *ka = NULL, *va = NULL, *a = NULL, *at = NULL,
              *a2 = NULL;
    wt_status st = heads(x, w->wq, HQ, true, pos, pos_t, &q);
    if (st == WT_OK) st = heads(x, w->wk, HKV, true, pos, pos_t, &k);
    if (st == WT_OK) st = heads(x, w->wv, HKV, false, pos, pos_t, &v);
    wt_attention_options ao;
    wt_attention_options_init(&ao);
    ao.causal = true;
    if (pos_t) {
        if (st == WT_OK) st = wt_copy_into_at(kc, 2, pos_t, k);
        if (st == WT_OK) st = wt_copy_into_at(vc, 2, pos_t, v);
        ao.kv_length = len_t;
        if (st == WT_OK) st = wt_scaled_dot_product_attention_v2(q, kc, vc, NULL, &ao, &a);
    } else {
        if (st == WT_OK) st = wt_slice(kc, 2, pos, pos + 1, 1, &ks);
        if (st == WT_OK) st = wt_slice(vc, 2, pos, pos + 1, 1, &vs);
        if (st == WT_OK) st = wt_copy_into(ks, k);
        if (st == WT_OK) st = wt_copy_into(vs, v);
        if (st == WT_OK) st = wt_slice(kc, 2, 0, pos + 1, 1, &ka);
        if (st == WT_OK) st = wt_slice(vc, 2, 0, pos + 1, 1, &va);
        if (st == WT_OK) st = wt_scaled_dot_product_attention_v2(q, ka, va, NULL, &ao, &a);
    }
    const int64_t s2[2] = {1, HQ * HD};
    if (st == WT_OK) st = wt_transpose(a, 1, 2, &at);
    if (st == WT_OK) st = wt_reshape(at, 2, s2, &a2);
    if (st == WT_OK) st = wt_linear(a2, w->wo, NULL, y);
    wt_tensor *all[] = {q, k, v, ks, vs, ka, va, a, at, a2};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) wt_tensor_release(all[i]);
    return st;
}

static bool same_bits(const wt_tensor *a, const wt_tensor *b)
{
    size_t n = (size_t)wt_tensor_numel(a) * wt_dtype_size(wt_tensor_dtype(a));
    unsigned char *ha = malloc(n + 1), *hb = malloc(n + 1);
    bool same = ha && hb && wt_tensor_numel(a) == wt_tensor_numel(b) && wt_tensor_read(a, ha, n) == WT_OK &&
                wt_tensor_read(b, hb, n) == WT_OK && memcmp(ha, hb, n) == 0;
    free(ha), free(hb);
    return same;
}

static void test_decode(wt_dtype dt)
{
    const char *dn = wt_dtype_name(dt);
    float wv[4][DM * DM];
    for (int i = 0; i < 4; i++) fill(wv[i], DM * DM, 20 + (unsigned)i, 0.4f);
    const int64_t sq[2] = {HQ * HD, DM}, skv[2] = {HKV * HD, DM}, so[2] = {DM, HQ * HD};
    const int64_t sc[4] = {1, HKV, CACHE, HD}, sx[2] = {1, DM}, one[1] = {1};
    decode_weights w = {0};
    wt_tensor *f[4] = {make(WT_F32, 2, sq, wv[0]), make(WT_F32, 2, skv, wv[1]), make(WT_F32, 2, skv, wv[2]),
                       make(WT_F32, 2, so, wv[3])};
    wt_tensor **slot[4] = {&w.wq, &w.wk, &w.wv, &w.wo};
    for (int i = 0; i < 4; i++) {
        CHECK(wt_cast(f[i], dt, slot[i]) == WT_OK, "cast [%s]", g_mode);
        wt_tensor_release(f[i]);
    }
    wt_tensor *kc = NULL, *vc = NULL, *kce = NULL, *vce = NULL, *x = NULL, *xe = NULL, *x32 = NULL;
    CHECK(wt_tensor_zeros(g_ctx, dt, 4, sc, &kc) == WT_OK && wt_tensor_zeros(g_ctx, dt, 4, sc, &vc) == WT_OK &&
              wt_tensor_zeros(g_ctx, dt, 4, sc, &kce) == WT_OK && wt_tensor_zeros(g_ctx, dt, 4, sc, &vce) == WT_OK &&
              wt_tensor_zeros(g_ctx, dt, 2, sx, &x) == WT_OK,
          "caches [%s %s]", g_mode, dn);
    int32_t pos0 = 0, len0 = 1;
    wt_tensor *pos_t = make(WT_I32, 1, one, &pos0), *len_t = make(WT_I32, 1, one, &len0);
    wt_graph *g = NULL;
    wt_tensor *y = NULL, *ye = NULL;
    float xv[DM];
    uint16_t xh[DM];
    for (int step = 0; step < STEPS; step++) {
        fill(xv, DM, 40 + (unsigned)step, 2.0f);
        x32 = make(WT_F32, 2, sx, xv);
        CHECK(wt_cast(x32, dt, &xe) == WT_OK, "cast x");
        if (dt == WT_F16) CHECK(wt_tensor_read(xe, xh, sizeof xh) == WT_OK, "read x");
        CHECK(wt_tensor_write(x, dt == WT_F16 ? (const void *)xh : (const void *)xv,
                              dt == WT_F16 ? sizeof xh : sizeof xv) == WT_OK,
              "write x [%s]: %s", g_mode, wt_last_error());
        int32_t pos = step, len = step + 1;
        CHECK(wt_tensor_write(pos_t, &pos, sizeof pos) == WT_OK && wt_tensor_write(len_t, &len, sizeof len) == WT_OK,
              "write step values [%s]", g_mode);
        if (step == 0) { /* the capture runs the step for real, inside a scope as a model's forward would */
            wt_scope *scope = NULL;
            CHECK(wt_graph_begin(g_ctx) == WT_OK && wt_scope_begin(g_ctx, &scope) == WT_OK, "graph_begin [%s]", g_mode);
            wt_status st = decode_step(&w, x, kc, vc, 0, pos_t, len_t, &y);
            if (st == WT_OK) st = wt_scope_keep(scope, y);
            /* The scope releases the ops' temporaries; the graph keeps its own. */
            CHECK(wt_scope_end(scope) == WT_OK, "scope_end");
            CHECK(st == WT_OK, "decode step with device values [%s %s]: %s", g_mode, dn, wt_last_error());
            CHECK(wt_graph_end(g_ctx, &g) == WT_OK && g, "graph_end [%s %s]: %s", g_mode, dn, wt_last_error());
        } else if (g) {
            CHECK(wt_graph_replay(g) == WT_OK, "replay [%s %s]: %s", g_mode, dn, wt_last_error());
        }
        CHECK(decode_step(&w, xe, kce, vce, step, NULL, NULL, &ye) == WT_OK, "eager step [%s %s]: %s", g_mode, dn,
              wt_last_error());
        CHECK(y && ye && same_bits(y, ye), "decode step %d: the replay equals the eager step bit for bit [%s %s]", step,
              g_mode, dn);
        wt_tensor_release(ye), wt_tensor_release(xe), wt_tensor_release(x32);
        ye = xe = x32 = NULL;
    }
    CHECK(same_bits(kc, kce) && same_bits(vc, vce), "the caches after %d steps: bit for bit [%s %s]", STEPS, g_mode,
          dn);
    int64_t nodes = 0;
    CHECK(g && wt_graph_node_count(g, &nodes) == WT_OK && nodes > 0, "node count");
    wt_graph_release(g);
    wt_tensor *rest[] = {y, kc, vc, kce, vce, x, pos_t, len_t, w.wq, w.wk, w.wv, w.wo};
    for (size_t i = 0; i < sizeof rest / sizeof rest[0]; i++) wt_tensor_release(rest[i]);
}

/* copy_into_at's start clamps into [0, extent - n] (f16 words written
 * whole or in halves by the start's parity); kv_length clamps into
 * [0, Skv], 0 giving zeros; rope's position adds to offset. Against the
 * host's own arithmetic. */
static void test_step_values(void)
{
    const int64_t s10[1] = {10}, s3[1] = {3}, one[1] = {1};
    const uint16_t src_bits[3] = {0x3c00, 0x4000, 0x4200}; /* 1, 2, 3 in f16 */
    const int32_t starts[5] = {0, 3, 6, 7, -4};           /* 6 and 7 clamp to 7; -4 to 0 */
    for (int dtf = 0; dtf < 2; dtf++) {
        const wt_dtype dt = dtf ? WT_F16 : WT_F32;
        const float srcf[3] = {1, 2, 3};
        for (int i = 0; i < 5; i++) {
            wt_tensor *dst = NULL, *st = make(WT_I32, 1, one, &starts[i]);
            wt_tensor *src = dtf ? make(WT_F16, 1, s3, src_bits) : make(WT_F32, 1, s3, srcf);
            CHECK(wt_tensor_zeros(g_ctx, dt, 1, s10, &dst) == WT_OK, "zeros");
            CHECK(wt_copy_into_at(dst, 0, st, src) == WT_OK, "copy_into_at [%s]: %s", g_mode, wt_last_error());
            int s = starts[i] < 0 ? 0 : starts[i] > 7 ? 7 : starts[i];
            float want[10] = {0};
            uint16_t want_h[10] = {0};
            for (int j = 0; j < 3; j++) want[s + j] = srcf[j], want_h[s + j] = src_bits[j];
            CHECK(test_same_tensor_bytes(dst, dtf ? (const void *)want_h : (const void *)want, dtf ? 20 : 40),
                  "copy_into_at %s start %d -> %d [%s]", wt_dtype_name(dt), starts[i], s, g_mode);
            wt_tensor_release(dst), wt_tensor_release(st), wt_tensor_release(src);
        }
    }
    /* kv_length: 0 keys give zeros; past Skv counts as Skv. */
    const int64_t sq[4] = {1, 2, 1, 4}, sk[4] = {1, 1, 5, 4};
    float qv[8], kv[20], vv[20];
    fill(qv, 8, 60, 1.0f), fill(kv, 20, 61, 1.0f), fill(vv, 20, 62, 1.0f);
    wt_tensor *q = make(WT_F32, 4, sq, qv), *k = make(WT_F32, 4, sk, kv), *v = make(WT_F32, 4, sk, vv);
    const int32_t lens[3] = {0, 3, 9};
    for (int i = 0; i < 3; i++) {
        wt_tensor *lt = make(WT_I32, 1, one, &lens[i]), *a = NULL, *ref = NULL, *k3 = NULL, *v3 = NULL;
        wt_attention_options ao;
        wt_attention_options_init(&ao);
        ao.kv_length = lt;
        CHECK(wt_scaled_dot_product_attention_v2(q, k, v, NULL, &ao, &a) == WT_OK, "attention kv_length [%s]: %s",
              g_mode, wt_last_error());
        const int n = lens[i] > 5 ? 5 : lens[i];
        CHECK(wt_slice(k, 2, 0, n, 1, &k3) == WT_OK && wt_slice(v, 2, 0, n, 1, &v3) == WT_OK, "slices");
        CHECK(wt_scaled_dot_product_attention_v2(q, k3, v3, NULL, NULL, &ref) == WT_OK, "attention ref");
        CHECK(a && ref && same_bits(a, ref), "attention kv_length %d equals the first %d keys [%s]", lens[i], n,
              g_mode);
        wt_tensor_release(lt), wt_tensor_release(a), wt_tensor_release(ref), wt_tensor_release(k3),
            wt_tensor_release(v3);
    }
    /* rope: offset 2 + position 5 equals offset 7. */
    const int32_t five = 5;
    wt_tensor *pt = make(WT_I32, 1, one, &five), *r1 = NULL, *r2 = NULL;
    wt_rope_options ro;
    wt_rope_options_init(&ro);
    ro.offset = 2;
    ro.position = pt;
    CHECK(wt_rope_v2(k, &ro, &r1) == WT_OK, "rope position [%s]: %s", g_mode, wt_last_error());
    ro.offset = 7;
    ro.position = NULL;
    CHECK(wt_rope_v2(k, &ro, &r2) == WT_OK, "rope offset");
    CHECK(r1 && r2 && same_bits(r1, r2), "rope: offset 2 + position 5 equals offset 7 [%s]", g_mode);
    /* Wrong step values. */
    wt_tensor *bad = NULL;
    const float fz = 0;
    wt_tensor *ff = make(WT_F32, 1, one, &fz);
    ro.position = ff;
    CHECK(wt_rope_v2(k, &ro, &bad) == WT_ERR_INVALID_ARGUMENT && !bad, "rope: an f32 position refused");
    wt_attention_options ao;
    wt_attention_options_init(&ao);
    ao.kv_length = q; /* 8 f32 elements */
    CHECK(wt_scaled_dot_product_attention_v2(q, k, v, NULL, &ao, &bad) == WT_ERR_INVALID_ARGUMENT && !bad,
          "attention: a kv_length of 8 f32 elements refused");
    CHECK(wt_copy_into_at(k, 2, pt, q) == WT_ERR_SHAPE, "copy_into_at: src's extent 1 fits but heads differ: %s",
          wt_last_error());
    const int64_t s8[4] = {1, 1, 8, 4};
    float big[32] = {0};
    wt_tensor *tall = make(WT_F32, 4, s8, big);
    CHECK(wt_copy_into_at(k, 2, pt, tall) == WT_ERR_SHAPE, "copy_into_at: src longer than dst refused");
    CHECK(wt_copy_into_at(k, 4, pt, k) == WT_ERR_INVALID_ARGUMENT, "copy_into_at: axis 4 of 4 dims refused");
    wt_tensor *rest[] = {q, k, v, pt, r1, r2, ff, tall};
    for (size_t i = 0; i < sizeof rest / sizeof rest[0]; i++) wt_tensor_release(rest[i]);
}

/* WT_GRAPH_REPLAY_SHARE: a WebGPU list lets temporaries whose dispatches
 * do not overlap share buffers, counted in replay_shared_bytes. */
static uint64_t shared_bytes(void)
{
    wt_pipeline_stats ps;
    return wt_context_pipeline_stats(g_ctx, &ps) == WT_OK ? ps.replay_shared_bytes : UINT64_MAX;
}

enum { SN = 1024 }; /* 4 KiB a temporary */

/* Four temporaries in a line, each read only by the next op: t1 and t2
 * take buffers of their own, then t3 (written while t2 is read) may take
 * t1's and t4 t2's. y = exp(|-relu(x)| + 1) = exp(relu(x) + 1). */
static wt_status line_of_temporaries(const wt_tensor *x, const wt_tensor *one, wt_tensor **y)
{
    wt_tensor *t1 = NULL, *t2 = NULL, *t3 = NULL, *t4 = NULL;
    wt_status st = wt_relu(x, &t1);
    if (st == WT_OK) st = wt_neg(t1, &t2);
    if (st == WT_OK) st = wt_abs(t2, &t3);
    if (st == WT_OK) st = wt_add(t3, one, &t4);
    if (st == WT_OK) st = wt_exp(t4, y);
    wt_tensor_release(t1), wt_tensor_release(t2), wt_tensor_release(t3), wt_tensor_release(t4);
    return st;
}

/* Three temporaries alive together: each is read by the op that writes
 * the next, so none may take another's buffer. y = (relu(x) + -x) + exp(x). */
static wt_status overlapping_temporaries(const wt_tensor *x, wt_tensor **y)
{
    wt_tensor *a = NULL, *b = NULL, *c = NULL, *ab = NULL;
    wt_status st = wt_relu(x, &a);
    if (st == WT_OK) st = wt_neg(x, &b);
    if (st == WT_OK) st = wt_exp(x, &c);
    if (st == WT_OK) st = wt_add(a, b, &ab);
    if (st == WT_OK) st = wt_add(ab, c, y);
    wt_tensor_release(a), wt_tensor_release(b), wt_tensor_release(c), wt_tensor_release(ab);
    return st;
}

/* Captures build(x) and replays it three times (the list from the second
 * replay on), each on new x; the result of the last replay in *got, the
 * change of replay_shared_bytes in *shared. The results are checked
 * against the host's ref on every replay. */
static void replay_sharing(const char *what, bool share, bool line, float *got, uint64_t *shared)
{
    const int64_t shape[1] = {SN}, one_shape[1] = {1};
    float xv[SN], y[SN];
    const float onev = 1.0f;
    fill(xv, SN, 7, 4.0f);
    wt_tensor *x = make(WT_F32, 1, shape, xv), *one = make(WT_F32, 1, one_shape, &onev), *out = NULL;
    if (!share) setenv("WT_GRAPH_REPLAY_SHARE", "0", 1);
    const uint64_t before = shared_bytes();
    wt_graph *g = NULL;
    CHECK(wt_graph_begin(g_ctx) == WT_OK, "capture [%s]", g_mode);
    CHECK((line ? line_of_temporaries(x, one, &out) : overlapping_temporaries(x, &out)) == WT_OK,
          "%s while capturing [%s]: %s", what, g_mode, wt_last_error());
    CHECK(wt_graph_end(g_ctx, &g) == WT_OK && g, "capture_end [%s]: %s", g_mode, wt_last_error());
    for (int step = 0; step < 3 && g; step++) {
        fill(xv, SN, 20 + (unsigned)step, 4.0f);
        CHECK(wt_tensor_write(x, xv, sizeof xv) == WT_OK && wt_graph_replay(g) == WT_OK &&
                  wt_tensor_read(out, y, sizeof y) == WT_OK,
              "%s: replay %d [%s]: %s", what, step, g_mode, wt_last_error());
        int bad = 0;
        for (int i = 0; i < SN; i++) {
            const float relu = xv[i] > 0 ? xv[i] : 0;
            const double want = line ? exp((double)relu + 1.0) : (double)relu - xv[i] + exp((double)xv[i]);
            bad += !(fabs(y[i] - want) <= 1e-5 * fabs(want) + 1e-6);
        }
        CHECK(bad == 0, "%s: replay %d gives the host's values [%s] (%d of %d wrong)", what, step, g_mode, bad, SN);
    }
    *shared = shared_bytes() - before;
    unsetenv("WT_GRAPH_REPLAY_SHARE");
    memcpy(got, y, sizeof y);
    wt_graph_release(g);
    wt_tensor_release(x), wt_tensor_release(one), wt_tensor_release(out);
}

static void test_replay_sharing(test_backend b)
{
    static float on[SN], off[SN], overlapping[SN];
    uint64_t shared_on = 0, shared_off = 0, shared_overlapping = 0;
    replay_sharing("a line of temporaries", true, true, on, &shared_on);
    replay_sharing("a line of temporaries, WT_GRAPH_REPLAY_SHARE=0", false, true, off, &shared_off);
    CHECK(memcmp(on, off, sizeof on) == 0, "sharing buffers leaves the bits as they were [%s]", g_mode);
    CHECK(shared_off == 0, "WT_GRAPH_REPLAY_SHARE=0: no temporary shares a buffer [%s] (%llu bytes)", g_mode,
          (unsigned long long)shared_off);
    if (b == TEST_BACKEND_CPU) {
        CHECK(shared_on == 0, "the CPU backend replays no list [%s]", g_mode);
    } else {
        /* t3 and t4 in t1's and t2's buffers, at least 4 KiB each (the
         * pool may round a buffer up), and never t1 or t2 themselves. */
        CHECK(shared_on >= 2 * SN * sizeof(float) && shared_on < 4 * 2 * SN * sizeof(float),
              "the line's third and fourth temporaries take the first two's buffers [%s]: %llu bytes", g_mode,
              (unsigned long long)shared_on);
    }
    replay_sharing("temporaries alive together", true, false, overlapping, &shared_overlapping);
    CHECK(shared_overlapping == 0, "temporaries whose uses overlap keep buffers of their own [%s]: %llu bytes",
          g_mode, (unsigned long long)shared_overlapping);
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
    test_decode(WT_F32);
    test_decode(WT_F16);
    test_step_values();
    test_replay_sharing(b);
    CHECK(live() == start, "inference and training left the context as they found it [%s]: %llu -> %llu", g_mode,
          (unsigned long long)start, (unsigned long long)live());
    test_errors(b);
    wt_context_destroy(g_ctx);
    return test_summary(prefix);
}
