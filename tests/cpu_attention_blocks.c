/* cpu_attention_blocks cpu: the CPU attention that runs blocks of queries
 * through the BLAS (the default) against its one-row loops
 * (WT_CPU_ATTENTION=rows), forward and fused backward, on shapes past one
 * block of 64 queries: a GPT layer's heads, grouped heads with more keys
 * than queries, more queries than keys under causality (rows that see no
 * key), head dims that differ between k and v, masks (float and bool) and
 * a strided q. */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct attn_shape {
    int64_t B, Hq, Hkv, Sq, Skv, D, Dv;
    bool causal;
} attn_shape;

/* out, dq, dk, dv of loss = sum(seed * attention(q, k, v)) under the given
 * WT_CPU_ATTENTION, the backward forced to the fused kernel. */
static bool run_case(wt_context *ctx, const char *mode, const attn_shape *c, float *const *host, float *const *res)
{
    setenv("WT_CPU_ATTENTION", mode, 1);
    setenv("WT_ATTN_BACKWARD", "fused", 1);
    const int64_t shapes[4][4] = {{c->B, c->Hq, c->Sq, c->D},
                                  {c->B, c->Hkv, c->Skv, c->D},
                                  {c->B, c->Hkv, c->Skv, c->Dv},
                                  {c->B, c->Hq, c->Sq, c->Dv}};
    wt_tensor *t[4] = {0}, *y = NULL;
    bool ok = true;
    for (int i = 0; i < 4 && ok; i++) {
        ok = wt_tensor_from_data(ctx, WT_F32, 4, shapes[i], host[i], &t[i]) == WT_OK;
        if (ok && i < 3) ok = wt_tensor_set_requires_grad(t[i], true) == WT_OK;
    }
    ok = ok && wt_scaled_dot_product_attention(t[0], t[1], t[2], NULL, c->causal, 0.0, &y) == WT_OK &&
         wt_tensor_read(y, res[0], sizeof(float) * (size_t)wt_tensor_numel(y)) == WT_OK &&
         wt_backward_ex(1, &y, &t[3], NULL) == WT_OK;
    for (int i = 0; i < 3 && ok; i++) {
        wt_tensor *g = NULL;
        ok = wt_tensor_grad(t[i], &g) == WT_OK && g &&
             wt_tensor_read(g, res[i + 1], sizeof(float) * (size_t)wt_tensor_numel(t[i])) == WT_OK;
        wt_tensor_release(g);
    }
    CHECK(ok, "attention (%s): %s", mode, wt_last_error());
    wt_tensor_release(y);
    for (int i = 0; i < 4; i++) wt_tensor_release(t[i]);
    unsetenv("WT_CPU_ATTENTION");
    unsetenv("WT_ATTN_BACKWARD");
    return ok;
}

/* Largest difference over the largest magnitude of the reference. */
static void compare(const char *what, const attn_shape *c, const float *got, const float *ref, size_t n)
{
    double err = 0, big = 0;
    for (size_t e = 0; e < n; e++) {
        err = fmax(err, fabs((double)got[e] - ref[e]));
        if (got[e] != got[e]) err = INFINITY;
        big = fmax(big, fabs(ref[e]));
    }
    printf("%s, B %lld Hq %lld Hkv %lld Sq %lld Skv %lld D %lld Dv %lld%s: blocks - rows %.2g (largest %.2g)\n",
           what, (long long)c->B, (long long)c->Hq, (long long)c->Hkv, (long long)c->Sq, (long long)c->Skv,
           (long long)c->D, (long long)c->Dv, c->causal ? " causal" : "", err, big);
    CHECK(big > 0 && err <= 1e-5 * big + 1e-7, "%s, Sq %lld Skv %lld%s: blocks and rows differ by %.2g (largest %.2g)",
          what, (long long)c->Sq, (long long)c->Skv, c->causal ? " causal" : "", err, big);
}

static void check_shapes(wt_context *ctx)
{
    static const attn_shape cases[] = {
        {2, 6, 6, 256, 256, 64, 64, true},  /* a GPT layer's heads (batch 2) */
        {1, 4, 2, 200, 300, 32, 24, true},  /* grouped heads, more keys than queries */
        {2, 2, 1, 130, 70, 16, 16, true},   /* more queries than keys: rows see no key */
        {3, 2, 2, 65, 65, 8, 8, false},     /* one block and one row */
        {2, 3, 3, 100, 129, 40, 48, false}, /* no causality, Dv > D */
    };
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
        const attn_shape *c = &cases[ci];
        const size_t n[4] = {(size_t)(c->B * c->Hq * c->Sq * c->D), (size_t)(c->B * c->Hkv * c->Skv * c->D),
                             (size_t)(c->B * c->Hkv * c->Skv * c->Dv), (size_t)(c->B * c->Hq * c->Sq * c->Dv)};
        const size_t rn[4] = {n[3], n[0], n[1], n[2]}; /* out, dq, dk, dv */
        float *host[4], *blocks[4], *rows[4];
        for (int i = 0; i < 4; i++) {
            host[i] = malloc(sizeof(float) * n[i]);
            for (size_t e = 0; e < n[i]; e++) host[i][e] = test_rng_uniform(-1.5f, 1.5f);
            blocks[i] = malloc(sizeof(float) * rn[i]);
            rows[i] = malloc(sizeof(float) * rn[i]);
        }
        if (run_case(ctx, "blocks", c, host, blocks) && run_case(ctx, "rows", c, host, rows)) {
            static const char *names[4] = {"out", "dq", "dk", "dv"};
            for (int i = 0; i < 4; i++) compare(names[i], c, blocks[i], rows[i], rn[i]);
        }
        for (int i = 0; i < 4; i++) free(host[i]), free(blocks[i]), free(rows[i]);
    }
}

/* The forward alone with a float mask, a bool mask, and q a transposed
 * view ([B, S, H, D] stored): the mask is read per element and q's rows
 * are a stride apart. */
static void check_masks_and_views(wt_context *ctx)
{
    const attn_shape c = {2, 3, 3, 150, 150, 32, 32, true};
    const int64_t qs[4] = {c.B, c.Sq, c.Hq, c.D}, ks[4] = {c.B, c.Hkv, c.Skv, c.D}, ms[2] = {c.Sq, c.Skv};
    const size_t nq = (size_t)(c.B * c.Sq * c.Hq * c.D), nk = (size_t)(c.B * c.Hkv * c.Skv * c.D),
                 nm = (size_t)(c.Sq * c.Skv), no = (size_t)(c.B * c.Hq * c.Sq * c.D);
    float *hq = malloc(sizeof(float) * nq), *hk = malloc(sizeof(float) * nk), *hv = malloc(sizeof(float) * nk),
          *hm = malloc(sizeof(float) * nm);
    for (size_t e = 0; e < nq; e++) hq[e] = test_rng_uniform(-1.5f, 1.5f);
    for (size_t e = 0; e < nk; e++) hk[e] = test_rng_uniform(-1.5f, 1.5f), hv[e] = test_rng_uniform(-1.5f, 1.5f);
    /* A mask that hides about a quarter of the keys, and whole rows. */
    for (size_t e = 0; e < nm; e++) hm[e] = test_rng_uniform(0, 1) < 0.25f || e / (size_t)c.Skv % 37 == 5 ? -INFINITY : test_rng_uniform(-2, 2);
    wt_tensor *q4 = NULL, *q = NULL, *k = NULL, *v = NULL, *mf = NULL, *mb = NULL, *ninf = NULL;
    bool ok = wt_tensor_from_data(ctx, WT_F32, 4, qs, hq, &q4) == WT_OK && wt_transpose(q4, 1, 2, &q) == WT_OK &&
              wt_tensor_from_data(ctx, WT_F32, 4, ks, hk, &k) == WT_OK &&
              wt_tensor_from_data(ctx, WT_F32, 4, ks, hv, &v) == WT_OK &&
              wt_tensor_from_data(ctx, WT_F32, 2, ms, hm, &mf) == WT_OK &&
              wt_tensor_full(ctx, WT_F32, 2, ms, -INFINITY, &ninf) == WT_OK && wt_ne(mf, ninf, &mb) == WT_OK;
    CHECK(ok, "mask and view inputs: %s", wt_last_error());
    float *got = malloc(sizeof(float) * no), *ref = malloc(sizeof(float) * no);
    const wt_tensor *masks[3] = {NULL, mf, mb};
    static const char *names[3] = {"out, q a strided view", "out, float mask", "out, bool mask"};
    for (int mi = 0; ok && mi < 3; mi++) {
        float *dst[2] = {got, ref};
        static const char *modes[2] = {"blocks", "rows"};
        for (int r = 0; ok && r < 2; r++) {
            setenv("WT_CPU_ATTENTION", modes[r], 1);
            wt_tensor *y = NULL;
            ok = wt_scaled_dot_product_attention(q, k, v, masks[mi], c.causal, 0.0, &y) == WT_OK &&
                 wt_tensor_read(y, dst[r], sizeof(float) * no) == WT_OK;
            CHECK(ok, "%s (%s): %s", names[mi], modes[r], wt_last_error());
            wt_tensor_release(y);
            unsetenv("WT_CPU_ATTENTION");
        }
        if (ok) compare(names[mi], &c, got, ref, no);
    }
    wt_tensor_release(q4), wt_tensor_release(q), wt_tensor_release(k), wt_tensor_release(v);
    wt_tensor_release(mf), wt_tensor_release(mb), wt_tensor_release(ninf);
    free(hq), free(hk), free(hv), free(hm), free(got), free(ref);
}

int main(int argc, char **argv)
{
    test_run run;
    if (!test_begin(&run, "cpu_attention_blocks", argc, argv)) return run.status;
    /* Two threads: the blocks run in parallel, and the backward's
     * (batch, kv head) split is taken (it wants as many as threads). */
    wt_context_options opts;
    wt_context_options_init(&opts);
    opts.backend = WT_BACKEND_CPU;
    opts.num_threads = 2;
    wt_context *ctx = NULL;
    if (CHECK(wt_context_create(&opts, &ctx) == WT_OK, "CPU context: %s", wt_last_error())) {
        check_shapes(ctx);
        check_masks_and_views(ctx);
        test_check_nothing_alive(ctx);
        wt_context_destroy(ctx);
    }
    return test_end(&run);
}
