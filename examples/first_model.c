/* A first model trained with autograd (docs/TRAINING.md walks through it):
 * a two-layer network that learns y = sin(3x) on [-1, 1], AdamW, one scope
 * per step, then a gradient check of one op against finite differences
 * (the check a user can run on any op).
 *
 *   first_model [--backend auto|cpu|webgpu|vulkan|gles] [--steps N] [--max-loss L]
 *
 * Exit status 0 when the final loss is below --max-loss (default 0.01) and
 * the gradient check passes. */
#include "example_context.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 64 /* points */
#define H 32 /* hidden units */

#define TRY(call)                                                                         \
    do {                                                                                  \
        wt_status st_ = (call);                                                           \
        if (st_ != WT_OK) {                                                               \
            fprintf(stderr, "%s: %s\n", #call, wt_last_error());                          \
            return st_;                                                                   \
        }                                                                                 \
    } while (0)

/* Parameters, the optimizer that updates them, and the data. */
typedef struct model {
    wt_tensor *w1, *b1, *w2, *b2;
    wt_optimizer *opt;
    wt_tensor *x, *y;
} model;

static wt_status param(wt_context *ctx, int ndim, const int64_t *shape, double scale, uint64_t seed, wt_tensor **p)
{
    wt_tensor *r = NULL;
    TRY(wt_tensor_randn(ctx, WT_F32, ndim, shape, seed, &r));
    wt_status st = wt_mul_scalar(r, scale, p); /* a leaf: made, then marked */
    wt_tensor_release(r);
    TRY(st);
    return wt_tensor_set_requires_grad(*p, true);
}

/* One step: forward, loss, backward, AdamW; every temporary in a scope. */
static wt_status step(wt_context *ctx, model *md, double *loss_out)
{
    wt_scope *s = NULL;
    TRY(wt_scope_begin(ctx, &s));
    wt_tensor *h = NULL, *a = NULL, *p = NULL, *d = NULL, *sq = NULL, *loss = NULL;
    wt_status st = wt_linear(md->x, md->w1, md->b1, &h);
    if (st == WT_OK) st = wt_tanh(h, &a);
    if (st == WT_OK) st = wt_linear(a, md->w2, md->b2, &p);
    if (st == WT_OK) st = wt_sub(p, md->y, &d);
    if (st == WT_OK) st = wt_square(d, &sq);
    if (st == WT_OK) st = wt_mean(sq, 0, NULL, false, &loss);
    if (st == WT_OK) st = wt_backward(loss);
    float l = NAN;
    if (st == WT_OK) st = wt_tensor_read(loss, &l, sizeof l);
    /* The update writes the parameters in place (recording off inside);
     * their gradients are then dropped for the next step. */
    if (st == WT_OK) st = wt_optimizer_step(md->opt);
    if (st == WT_OK) st = wt_optimizer_zero_grad(md->opt);
    wt_scope_end(s); /* h, a, p, d, sq and loss */
    *loss_out = l;
    return st;
}

/* d sum(tanh(x) * c) / dx by the tape against central differences of the
 * forward op in float64: the check to run on any op. */
static wt_status gradient_check(wt_context *ctx, double *worst)
{
    float xv[8], cv[8];
    for (int i = 0; i < 8; i++) xv[i] = -1.5f + 0.4f * (float)i, cv[i] = 0.5f + 0.1f * (float)i;
    const int64_t n = 8;
    wt_scope *s = NULL;
    TRY(wt_scope_begin(ctx, &s));
    wt_tensor *x = NULL, *c = NULL, *t = NULL, *tc = NULL, *out = NULL, *g = NULL;
    wt_status st = wt_tensor_from_data(ctx, WT_F32, 1, &n, xv, &x);
    if (st == WT_OK) st = wt_tensor_from_data(ctx, WT_F32, 1, &n, cv, &c);
    if (st == WT_OK) st = wt_tensor_set_requires_grad(x, true);
    if (st == WT_OK) st = wt_tanh(x, &t);
    if (st == WT_OK) st = wt_mul(t, c, &tc);
    if (st == WT_OK) st = wt_sum(tc, 0, NULL, false, &out);
    /* The functional form: d out / d x, without touching x's .grad. */
    if (st == WT_OK) st = wt_grad(1, &out, NULL, 1, &x, NULL, &g);
    float got[8];
    if (st == WT_OK) st = wt_tensor_read(g, got, sizeof got);
    wt_tensor_release(g); /* wt_grad's results are the caller's */
    wt_scope_end(s);
    *worst = 0;
    for (int i = 0; st == WT_OK && i < 8; i++) {
        const double e = 1e-4, fp = tanh(xv[i] + e) * cv[i], fm = tanh(xv[i] - e) * cv[i];
        const double fd = (fp - fm) / (2 * e), err = fabs(got[i] - fd) / (1 + fabs(fd));
        if (err > *worst) *worst = err;
    }
    return st;
}

int main(int argc, char **argv)
{
    const char *backend = "auto";
    int steps = 300;
    double max_loss = 0.01;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--backend")) backend = argv[i + 1];
        else if (!strcmp(argv[i], "--steps")) steps = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--max-loss")) max_loss = atof(argv[i + 1]);
        else {
            fprintf(stderr, "usage: first_model [--backend NAME] [--steps N] [--max-loss L]\n");
            return 2;
        }
    }
    wt_context *ctx = NULL;
    if (!make_context(backend, &ctx)) return 1;
    model md;
    memset(&md, 0, sizeof md);
    float xv[N], yv[N];
    for (int i = 0; i < N; i++) xv[i] = -1.0f + 2.0f * (float)i / (N - 1), yv[i] = sinf(3.0f * xv[i]);
    const int64_t sx[2] = {N, 1}, s1[2] = {H, 1}, sb1[1] = {H}, s2[2] = {1, H}, sb2[1] = {1};
    wt_status st = wt_tensor_from_data(ctx, WT_F32, 2, sx, xv, &md.x);
    if (st == WT_OK) st = wt_tensor_from_data(ctx, WT_F32, 2, sx, yv, &md.y);
    if (st == WT_OK) st = param(ctx, 2, s1, 1.0, 1, &md.w1);
    if (st == WT_OK) st = param(ctx, 1, sb1, 0.5, 2, &md.b1);
    if (st == WT_OK) st = param(ctx, 2, s2, 0.3, 3, &md.w2);
    if (st == WT_OK) st = param(ctx, 1, sb2, 0.0, 4, &md.b2);
    wt_adamw_options o;
    wt_adamw_options_init(&o);
    o.lr = 0.02;
    o.weight_decay = 0;
    wt_tensor *params[4] = {md.w1, md.b1, md.w2, md.b2};
    if (st == WT_OK) st = wt_optimizer_create_adamw(4, params, &o, &md.opt);
    double loss = NAN, first = NAN;
    for (int t = 1; st == WT_OK && t <= steps; t++) {
        st = step(ctx, &md, &loss);
        if (t == 1) first = loss;
        if (st == WT_OK && (t == 1 || t % 50 == 0)) printf("step %4d  loss %.5f\n", t, loss);
    }
    double worst = INFINITY;
    if (st == WT_OK) st = gradient_check(ctx, &worst);
    if (st == WT_OK) printf("gradient check of tanh * c: worst relative error %.2e\n", worst);
    wt_optimizer_release(md.opt);
    wt_tensor *all[] = {md.w1, md.b1, md.w2, md.b2, md.x, md.y};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) wt_tensor_release(all[i]);
    wt_context_destroy(ctx);
    if (st != WT_OK) {
        fprintf(stderr, "error: %s\n", wt_last_error());
        return 1;
    }
    const bool ok = loss < max_loss && loss < first && worst < 1e-3;
    printf("loss %.5f -> %.5f (bound %.3g), gradient check %s: %s\n", first, loss, max_loss,
           worst < 1e-3 ? "ok" : "FAILED", ok ? "ok" : "FAIL");
    return ok ? 0 : 1;
}
