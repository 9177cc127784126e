/* cpu_norm_backward cpu: the gradients of layer norm and RMS norm, which
 * the CPU takes in one pass a row (the NORM_BACKWARD node), against a
 * float64 evaluation of the formulas here: over one and two axes, with
 * and without weight and bias, and from a transposed (strided) x. */
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct norm_case {
    const char *name;
    bool rms, weight, bias, transposed;
    int k;              /* normalised axes */
    int64_t shape[3];   /* x's shape (transposed: of the stored tensor, last two swapped in x) */
} norm_case;

/* dx, dw, db of sum(seed * norm(x)) in float64, rows of C. */
static void reference(const norm_case *c, const double *x, const double *g, const double *w, int64_t R, int64_t C,
                      double eps, double *dx, double *dw, double *db)
{
    for (int64_t j = 0; j < C; j++) dw[j] = db[j] = 0.0;
    for (int64_t r = 0; r < R; r++) {
        const double *xr = x + r * C, *gr = g + r * C;
        double mean = 0, var = 0;
        if (!c->rms) {
            for (int64_t j = 0; j < C; j++) mean += xr[j];
            mean /= (double)C;
        }
        for (int64_t j = 0; j < C; j++) var += (xr[j] - mean) * (xr[j] - mean);
        const double rstd = 1.0 / sqrt(var / (double)C + eps);
        double m1 = 0, m2 = 0;
        for (int64_t j = 0; j < C; j++) {
            const double gw = gr[j] * (w ? w[j] : 1.0), xh = (xr[j] - mean) * rstd;
            m1 += gw, m2 += gw * xh;
            dw[j] += gr[j] * xh;
            db[j] += gr[j];
        }
        m1 /= (double)C, m2 /= (double)C;
        for (int64_t j = 0; j < C; j++) {
            const double gw = gr[j] * (w ? w[j] : 1.0), xh = (xr[j] - mean) * rstd;
            dx[r * C + j] = rstd * (gw - xh * m2 - (c->rms ? 0.0 : m1));
        }
    }
}

static void compare(const char *what, const char *name, const float *got, const double *ref, int64_t n)
{
    double err = 0, big = 0;
    for (int64_t i = 0; i < n; i++) {
        err = fmax(err, fabs(got[i] - ref[i]));
        if (got[i] != got[i]) err = INFINITY;
        big = fmax(big, fabs(ref[i]));
    }
    printf("%s, %s: largest difference %.2g to float64 (largest %.2g)\n", name, what, err, big);
    CHECK(big > 0 && err <= 2e-6 * big + 1e-7, "%s, %s: %.2g from float64 (largest %.2g)", name, what, err, big);
}

static void run_case(wt_context *ctx, const norm_case *c)
{
    const int64_t n = c->shape[0] * c->shape[1] * c->shape[2];
    int64_t xs[3] = {c->shape[0], c->shape[1], c->shape[2]};
    if (c->transposed) xs[1] = c->shape[2], xs[2] = c->shape[1]; /* x's shape */
    const int64_t C = c->k == 1 ? xs[2] : xs[1] * xs[2], R = n / C;
    float *hx = malloc(sizeof(float) * n), *hg = malloc(sizeof(float) * n), *hw = malloc(sizeof(float) * C),
          *hb = malloc(sizeof(float) * C);
    for (int64_t i = 0; i < n; i++) hx[i] = test_rng_uniform(-2, 2) + 0.5f, hg[i] = test_rng_uniform(-1, 1);
    for (int64_t j = 0; j < C; j++) hw[j] = test_rng_uniform(0.5f, 1.5f), hb[j] = test_rng_uniform(-1, 1);
    const int64_t *pshape = c->k == 1 ? &xs[2] : &xs[1];
    wt_tensor *stored = NULL, *x = NULL, *w = NULL, *b = NULL, *g = NULL, *y = NULL, *gx = NULL, *gw = NULL,
              *gb = NULL;
    bool ok = wt_tensor_from_data(ctx, WT_F32, 3, c->shape, hx, &stored) == WT_OK &&
              (c->transposed ? wt_transpose(stored, 1, 2, &x) : wt_contiguous(stored, &x)) == WT_OK &&
              wt_tensor_set_requires_grad(x, true) == WT_OK &&
              wt_tensor_from_data(ctx, WT_F32, 3, xs, hg, &g) == WT_OK &&
              (!c->weight || (wt_tensor_from_data(ctx, WT_F32, c->k, pshape, hw, &w) == WT_OK &&
                              wt_tensor_set_requires_grad(w, true) == WT_OK)) &&
              (!c->bias || (wt_tensor_from_data(ctx, WT_F32, c->k, pshape, hb, &b) == WT_OK &&
                            wt_tensor_set_requires_grad(b, true) == WT_OK));
    const double eps = 1e-5;
    ok = ok && (c->rms ? wt_rms_norm(x, c->k, w, eps, &y) : wt_layer_norm(x, c->k, w, b, eps, &y)) == WT_OK &&
         wt_backward_ex(1, &y, &g, NULL) == WT_OK && wt_tensor_grad(x, &gx) == WT_OK && gx &&
         (!c->weight || (wt_tensor_grad(w, &gw) == WT_OK && gw)) &&
         (!c->bias || (wt_tensor_grad(b, &gb) == WT_OK && gb));
    CHECK(ok, "%s: %s", c->name, wt_last_error());
    if (ok) {
        /* x in row-major order of its own shape (the transposed view read through). */
        double *dx = malloc(sizeof(double) * n), *xd = malloc(sizeof(double) * n), *gd = malloc(sizeof(double) * n),
               *wd = malloc(sizeof(double) * C), *dw = malloc(sizeof(double) * C), *db = malloc(sizeof(double) * C);
        for (int64_t i = 0; i < n; i++) {
            int64_t a = i / (xs[1] * xs[2]), p = i / xs[2] % xs[1], q = i % xs[2];
            xd[i] = c->transposed ? hx[(a * c->shape[1] + q) * c->shape[2] + p] : hx[i];
            gd[i] = hg[i];
        }
        for (int64_t j = 0; j < C; j++) wd[j] = hw[j];
        reference(c, xd, gd, c->weight ? wd : NULL, R, C, eps, dx, dw, db);
        float *got = malloc(sizeof(float) * n);
        if (CHECK(wt_tensor_read(gx, got, sizeof(float) * n) == WT_OK, "read dx")) compare("dx", c->name, got, dx, n);
        if (gw && CHECK(wt_tensor_read(gw, got, sizeof(float) * C) == WT_OK, "read dw")) compare("dw", c->name, got, dw, C);
        if (gb && CHECK(wt_tensor_read(gb, got, sizeof(float) * C) == WT_OK, "read db")) compare("db", c->name, got, db, C);
        free(got), free(dx), free(xd), free(gd), free(wd), free(dw), free(db);
    }
    wt_tensor *all[9] = {stored, x, w, b, g, y, gx, gw, gb};
    for (int i = 0; i < 9; i++) wt_tensor_release(all[i]);
    free(hx), free(hg), free(hw), free(hb);
}

int main(int argc, char **argv)
{
    test_run run;
    if (!test_begin(&run, "cpu_norm_backward", argc, argv)) return run.status;
    static const norm_case cases[] = {
        {"layer norm, weight and bias", false, true, true, false, 1, {4, 37, 384}},
        {"layer norm over 2 axes", false, true, true, false, 2, {3, 5, 24}},
        {"layer norm, no weight", false, false, false, false, 1, {2, 16, 50}},
        {"layer norm of a transposed x", false, true, true, true, 1, {3, 40, 33}},
        {"RMS norm, weight", true, true, false, false, 1, {4, 37, 384}},
        {"RMS norm, no weight, transposed x", true, false, false, true, 1, {2, 24, 31}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) run_case(run.ctx, &cases[i]);
    test_check_nothing_alive(run.ctx);
    return test_end(&run);
}
