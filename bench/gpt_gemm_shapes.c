/* GPU time of the matrix products of one step of examples/train_gpt.c at
 * its default size (6 layers, dim 384, context 256, batch 64: 16384 rows),
 * each with the operand layouts training gives it: the forward x @ w^T (w
 * read along k), the input gradient dy @ w (w read along n) and the weight
 * gradient dy^T @ x (dy read along m, a transposed view), for dims 384 and
 * 1536. The tile and the k split are the library's choice unless
 * WT_GEMM_TILE / WT_GEMM_SPLITK force them, so one run per setting gives
 * a table of settings by shape.
 *
 *   bench_gpt_gemm [--backend webgpu] [--reps N] [--rows R] [--bias 1]
 *                  [--only fwd|dx|dw]
 *
 * --bias 1 times the forward products only, each as the layer training
 * runs: wt_linear(x, w, bias) (with WT_BIAS_IN_PRODUCT=0 its old route,
 * the product and then a separate add).
 *
 * --only times one kind of product (forward, input or weight gradient):
 * a sweep of WT_GEMM_TILE / WT_GEMM_SPLITK over one kind, one process per
 * setting, spends no time on the others.
 *
 * --rows replaces the 16384 rows (batch times context) for a quick check
 * on a slow adapter. */
#include <webtensor.h>

#include "../examples/example_context.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum { FORWARD, INPUT_GRAD, WEIGHT_GRAD } product_kind;

typedef struct shape_case {
    const char *name;
    product_kind kind;
    int64_t m, n, k;
} shape_case;

static const shape_case cases[] = {
    {"fwd x@w^T 384->384", FORWARD, 16384, 384, 384},
    {"fwd x@w^T 384->1536", FORWARD, 16384, 1536, 384},
    {"fwd x@w^T 1536->384", FORWARD, 16384, 384, 1536},
    {"dx dy@w 384<-384", INPUT_GRAD, 16384, 384, 384},
    {"dx dy@w 384<-1536", INPUT_GRAD, 16384, 384, 1536},
    {"dx dy@w 1536<-384", INPUT_GRAD, 16384, 1536, 384},
    {"dw dy^T@x 384x384", WEIGHT_GRAD, 384, 384, 16384},
    {"dw dy^T@x 1536x384", WEIGHT_GRAD, 1536, 384, 16384},
    {"dw dy^T@x 384x1536", WEIGHT_GRAD, 384, 1536, 16384},
};

#define TRY(call)                                                          \
    do {                                                                   \
        if ((call) != WT_OK) {                                             \
            fprintf(stderr, "error: %s: %s\n", #call, wt_last_error());    \
            goto done;                                                     \
        }                                                                  \
    } while (0)

/* a [m, k] and b [k, n] as training lays them out: a view where the
 * stored tensor is the transpose. */
static int time_case(wt_context *ctx, const shape_case *c, bool with_bias, int reps, double *us)
{
    int ok = 0;
    wt_tensor *as = NULL, *bs = NULL, *a = NULL, *b = NULL, *out = NULL, *bias = NULL;
    int64_t n1[1] = {c->n};
    if (with_bias) TRY(wt_tensor_randn(ctx, WT_F32, 1, n1, 3, &bias));
    int64_t mk[2] = {c->m, c->k}, km[2] = {c->k, c->m}, kn[2] = {c->k, c->n}, nk[2] = {c->n, c->k};
    switch (c->kind) {
    case FORWARD: /* x [m, k] @ (w [n, k])^T */
        TRY(wt_tensor_randn(ctx, WT_F32, 2, mk, 1, &as));
        TRY(wt_tensor_randn(ctx, WT_F32, 2, nk, 2, &bs));
        a = as, wt_tensor_retain(a);
        TRY(wt_transpose(bs, 0, 1, &b));
        break;
    case INPUT_GRAD: /* dy [m, k] @ w [k, n] */
        TRY(wt_tensor_randn(ctx, WT_F32, 2, mk, 1, &as));
        TRY(wt_tensor_randn(ctx, WT_F32, 2, kn, 2, &bs));
        a = as, wt_tensor_retain(a);
        b = bs, wt_tensor_retain(b);
        break;
    case WEIGHT_GRAD: /* (dy [k, m])^T @ x [k, n] */
        TRY(wt_tensor_randn(ctx, WT_F32, 2, km, 1, &as));
        TRY(wt_tensor_randn(ctx, WT_F32, 2, kn, 2, &bs));
        TRY(wt_transpose(as, 0, 1, &a));
        b = bs, wt_tensor_retain(b);
        break;
    }
    for (int w = 0; w < 3; w++) { /* pipelines built, pool warm */
        wt_tensor_release(out);
        out = NULL;
        TRY(bias ? wt_linear(as, bs, bias, &out) : wt_matmul(a, b, &out));
    }
    TRY(wt_context_sync(ctx));
    double gpu = 0;
    TRY(wt_context_timer_begin(ctx));
    for (int r = 0; r < reps; r++) {
        wt_tensor_release(out);
        out = NULL;
        TRY(bias ? wt_linear(as, bs, bias, &out) : wt_matmul(a, b, &out));
    }
    TRY(wt_context_timer_end(ctx, &gpu));
    *us = gpu / reps * 1e6;
    ok = 1;
done:
    wt_tensor_release(out);
    wt_tensor_release(a);
    wt_tensor_release(b);
    wt_tensor_release(as);
    wt_tensor_release(bs);
    wt_tensor_release(bias);
    return ok;
}

int main(int argc, char **argv)
{
    const char *backend = "webgpu";
    int reps = 20;
    int64_t rows = 16384;
    bool with_bias = false;
    int only = -1; /* a product_kind, or -1: all */
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--backend") == 0) backend = argv[i + 1];
        else if (strcmp(argv[i], "--reps") == 0) reps = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--rows") == 0) rows = atoll(argv[i + 1]);
        else if (strcmp(argv[i], "--bias") == 0) with_bias = atoi(argv[i + 1]) != 0;
        else if (strcmp(argv[i], "--only") == 0) {
            const char *k = argv[i + 1];
            only = strcmp(k, "fwd") == 0 ? FORWARD : strcmp(k, "dx") == 0 ? INPUT_GRAD
                                                     : strcmp(k, "dw") == 0 ? WEIGHT_GRAD : -2;
            if (only == -2) {
                fprintf(stderr, "--only takes fwd, dx or dw\n");
                return 2;
            }
        }
        else {
            fprintf(stderr, "unknown option %s\n", argv[i]);
            return 2;
        }
    }
    if (reps < 1 || reps > 10000) reps = 20;
    if (rows < 1 || rows > 16384) rows = 16384;
    setvbuf(stdout, NULL, _IOLBF, 0);
    wt_context *ctx = NULL;
    if (!make_context_on(backend, -1, &ctx)) return 1;
    const char *tile = getenv("WT_GEMM_TILE"), *split = getenv("WT_GEMM_SPLITK");
    const char *in_product = getenv("WT_BIAS_IN_PRODUCT");
    printf("tile %s, k splits %s%s%s\n", tile ? tile : "(chosen)", split ? split : "(chosen)",
           with_bias ? ", linear with bias, WT_BIAS_IN_PRODUCT=" : "",
           with_bias ? (in_product ? in_product : "(unset)") : "");
    int rc = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        shape_case c_rows = cases[i];
        if (c_rows.m == 16384) c_rows.m = rows;
        if (c_rows.k == 16384) c_rows.k = rows;
        const shape_case *c = &c_rows;
        if (with_bias && c->kind != FORWARD) continue;
        if (only >= 0 && (int)c->kind != only) continue;
        double us = 0;
        if (!time_case(ctx, c, with_bias, reps, &us)) {
            rc = 1;
            continue;
        }
        double tflops = 2.0 * (double)c->m * (double)c->n * (double)c->k / (us * 1e-6) / 1e12;
        printf("%-22s %6lldx%5lldx%6lld %9.1f us %6.1f TFLOP/s\n", c->name, (long long)c->m, (long long)c->n,
               (long long)c->k, us, tflops);
    }
    wt_context_destroy(ctx);
    return rc;
}
