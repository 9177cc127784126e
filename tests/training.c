/* Training ops: every gradient against central finite differences of a
 * float64 forward pass written here, the optimizer steps against float64
 * updates written from PyTorch's definitions, and bad input.
 *
 *   training <cpu|vulkan|gles>
 */
#define _GNU_SOURCE /* M_PI */
#include "grad_check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------- helpers */

static void fill_uniform(float *x, size_t n, float lo, float hi)
{
    for (size_t i = 0; i < n; i++) x[i] = test_rng_uniform(lo, hi);
}

#define FD_H 1e-6

/* Finite-difference gradient of f (float64, over n inputs) at x. */
typedef double (*scalar_fn)(const double *x, void *ctx);
static void fd_grad(scalar_fn f, void *ctx, double *x, size_t n, double *grad)
{
    for (size_t i = 0; i < n; i++) {
        double keep = x[i];
        x[i] = keep + FD_H;
        double up = f(x, ctx);
        x[i] = keep - FD_H;
        double down = f(x, ctx);
        x[i] = keep;
        grad[i] = (up - down) / (2 * FD_H);
    }
}

/* ------------------------------------------------------------ activations */

static double act_ref(wt_activation a, double x)
{
    switch (a) {
    case WT_ACT_RELU: return x > 0 ? x : 0;
    case WT_ACT_SIGMOID: return 1 / (1 + exp(-x));
    case WT_ACT_TANH: return tanh(x);
    case WT_ACT_SILU: return x / (1 + exp(-x));
    case WT_ACT_GELU: return 0.5 * x * (1 + erf(x / sqrt(2.0)));
    case WT_ACT_GELU_TANH: return 0.5 * x * (1 + tanh(sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
    }
    return NAN;
}

static void test_activations(void)
{
    const char *names[] = {"relu", "sigmoid", "tanh", "silu", "gelu", "gelu_tanh"};
    int64_t shape[2] = {37, 29};
    size_t n = 37 * 29;
    float *x = malloc(n * 4), *dy = malloc(n * 4);
    double *want = malloc(n * 8);
    for (int a = WT_ACT_RELU; a <= WT_ACT_GELU_TANH; a++) {
        fill_uniform(x, n, -6, 6);
        fill_uniform(dy, n, -2, 2);
        for (size_t i = 0; i < n; i++) {
            if (fabsf(x[i]) < 1e-3f) x[i] = 0.5f; /* off relu's kink */
            double up = act_ref((wt_activation)a, (double)x[i] + FD_H), dn = act_ref((wt_activation)a, (double)x[i] - FD_H);
            want[i] = dy[i] * (up - dn) / (2 * FD_H);
        }
        x[0] = 60.0f; x[1] = -60.0f; /* saturated: no overflow into NaN */
        for (int k = 0; k < 2; k++) {
            double up = act_ref((wt_activation)a, (double)x[k] + FD_H), dn = act_ref((wt_activation)a, (double)x[k] - FD_H);
            want[k] = dy[k] * (up - dn) / (2 * FD_H);
        }
        wt_tensor *tx = make(2, shape, x), *tg = make(2, shape, dy), *dx = NULL;
        CHECK(wt_activation_backward((wt_activation)a, tg, tx, &dx) == WT_OK, "%s backward: %s", names[a], wt_last_error());
        float *got = dx ? read_all(dx, n) : NULL;
        char what[64];
        snprintf(what, sizeof what, "%s backward vs finite differences", names[a]);
        close_all(what, got, want, n, 2e-4, 2e-5);
        free(got);
        wt_tensor_release(dx);
        /* A transposed view as dy: the front-end gathers it. */
        wt_tensor *tt = NULL, *xt = NULL;
        wt_transpose(tg, 0, 1, &tt);
        wt_transpose(tx, 0, 1, &xt);
        dx = NULL;
        CHECK(wt_activation_backward((wt_activation)a, tt, xt, &dx) == WT_OK && wt_tensor_shape(dx)[0] == 29,
              "%s backward of views", names[a]);
        wt_tensor_release(dx);
        wt_tensor_release(tt);
        wt_tensor_release(xt);
        wt_tensor_release(tx);
        wt_tensor_release(tg);
    }
    /* Empty and 0-d. */
    int64_t e[1] = {0};
    wt_tensor *te = make(1, e, NULL), *dx = NULL;
    float one = 0.3f;
    CHECK(wt_activation_backward(WT_ACT_SILU, te, te, &dx) == WT_OK && wt_tensor_numel(dx) == 0, "empty");
    wt_tensor_release(dx);
    wt_tensor *s = make(0, NULL, &one);
    dx = NULL;
    CHECK(wt_activation_backward(WT_ACT_TANH, s, s, &dx) == WT_OK && wt_tensor_ndim(dx) == 0, "0-d");
    wt_tensor_release(dx);
    dx = (wt_tensor *)1;
    CHECK(wt_activation_backward((wt_activation)9, s, s, &dx) == WT_ERR_INVALID_ARGUMENT && !dx, "unknown activation");
    CHECK(wt_activation_backward(WT_ACT_RELU, s, te, &dx) == WT_ERR_SHAPE, "shape mismatch");
    CHECK(wt_activation_backward(WT_ACT_RELU, NULL, te, &dx) == WT_ERR_INVALID_ARGUMENT, "NULL dy");
    wt_tensor_release(s);
    wt_tensor_release(te);
    free(x);
    free(dy);
    free(want);
}

/* ---------------------------------------------------------- cross-entropy */

typedef struct ce_ref {
    int n, c;
    const int32_t *labels;
    int32_t ignore;
    wt_reduction red;
    const double *dloss; /* none: [n]; else one value */
} ce_ref;

static double ce_loss(const double *x, void *vp)
{
    const ce_ref *r = vp;
    double total = 0;
    int count = 0;
    for (int i = 0; i < r->n; i++) {
        if (r->labels[i] == r->ignore) continue;
        const double *row = x + i * r->c;
        double m = row[0], s = 0;
        for (int j = 1; j < r->c; j++) m = row[j] > m ? row[j] : m;
        for (int j = 0; j < r->c; j++) s += exp(row[j] - m);
        double l = m + log(s) - row[r->labels[i]];
        total += r->red == WT_REDUCTION_NONE ? l * r->dloss[i] : l;
        count++;
    }
    if (r->red == WT_REDUCTION_MEAN) return total / count * r->dloss[0];
    if (r->red == WT_REDUCTION_SUM) return total * r->dloss[0];
    return total;
}

static void test_cross_entropy(void)
{
    enum { N = 9, C = 13 };
    int64_t shape[2] = {N, C}, ns[1] = {N};
    float x[N * C];
    double xd[N * C], want[N * C];
    int32_t labels[N] = {0, 12, 5, -100, 7, 3, 3, -100, 11};
    fill_uniform(x, N * C, -8, 8);
    x[2 * C + 1] = 80.0f; /* large logits: no overflow */
    for (int i = 0; i < N * C; i++) xd[i] = x[i];
    wt_tensor *tx = make(2, shape, x), *ty = make_i32(1, ns, labels);
    double dl_none[N];
    for (int i = 0; i < N; i++) dl_none[i] = 0.25 + 0.1 * i;
    float dl_none_f[N];
    for (int i = 0; i < N; i++) dl_none_f[i] = (float)dl_none[i];
    const char *rname[3] = {"mean", "sum", "none"};
    for (int red = 0; red < 3; red++) {
        wt_cross_entropy_options o;
        wt_cross_entropy_options_init(&o);
        o.reduction = (wt_reduction)red;
        double one = red == WT_REDUCTION_NONE ? 0 : 1.5;
        ce_ref r = {N, C, labels, -100, (wt_reduction)red, red == WT_REDUCTION_NONE ? dl_none : &one};
        /* The loss itself (dloss 1). */
        double unit = 1.0;
        ce_ref r1 = r;
        if (red != WT_REDUCTION_NONE) r1.dloss = &unit;
        wt_tensor *loss = NULL;
        CHECK(wt_cross_entropy(tx, ty, &o, &loss) == WT_OK, "ce %s: %s", rname[red], wt_last_error());
        if (loss && red != WT_REDUCTION_NONE) {
            float *got = read_all(loss, 1);
            double w = ce_loss(xd, &r1);
            close_all(rname[red], got, &w, 1, 1e-5, 1e-5);
            free(got);
        } else if (loss) {
            float *got = read_all(loss, N);
            double rows[N];
            for (int i = 0; i < N; i++) {
                double d1[N] = {0};
                d1[i] = 1;
                ce_ref ri = {N, C, labels, -100, WT_REDUCTION_NONE, d1};
                rows[i] = ce_loss(xd, &ri);
            }
            close_all("ce none rows", got, rows, N, 1e-5, 1e-5);
            free(got);
        }
        wt_tensor_release(loss);
        /* The gradient, scaled by dloss. */
        fd_grad(ce_loss, &r, xd, N * C, want);
        float onef = 1.5f;
        wt_tensor *dl = red == WT_REDUCTION_NONE ? make(1, ns, dl_none_f) : make(0, NULL, &onef), *dx = NULL;
        CHECK(wt_cross_entropy_backward(tx, ty, dl, &o, &dx) == WT_OK, "ce backward %s: %s", rname[red], wt_last_error());
        float *got = dx ? read_all(dx, N * C) : NULL;
        char what[64];
        snprintf(what, sizeof what, "ce %s backward vs finite differences", rname[red]);
        close_all(what, got, want, N * C, 1e-3, 1e-6);
        free(got);
        wt_tensor_release(dx);
        wt_tensor_release(dl);
    }
    /* A label outside [0, C): NaN, stated in the header. */
    int32_t bad[N] = {0, 13, 5, -100, 7, 3, 3, -100, 11};
    wt_tensor *tb = make_i32(1, ns, bad), *loss = NULL;
    wt_cross_entropy_options o;
    wt_cross_entropy_options_init(&o);
    o.reduction = WT_REDUCTION_NONE;
    CHECK(wt_cross_entropy(tx, tb, &o, &loss) == WT_OK, "ce with a bad label runs");
    float *rows = loss ? read_all(loss, N) : NULL;
    CHECK(rows && isnan(rows[1]) && !isnan(rows[0]) && rows[3] == 0.0f, "bad label row is NaN, ignored row 0");
    free(rows);
    wt_tensor_release(loss);
    wt_tensor_release(tb);
    /* Bad input. */
    wt_tensor *out = (wt_tensor *)1;
    CHECK(wt_cross_entropy(tx, tx, NULL, &out) == WT_ERR_INVALID_ARGUMENT && !out, "float labels refused");
    CHECK(wt_cross_entropy(ty, ty, NULL, &out) == WT_ERR_INVALID_ARGUMENT, "i32 logits refused");
    int64_t s4[1] = {4};
    int32_t four[4] = {0, 1, 2, 3};
    wt_tensor *t4 = make_i32(1, s4, four);
    CHECK(wt_cross_entropy(tx, t4, NULL, &out) == WT_ERR_SHAPE, "label count mismatch");
    wt_tensor_release(t4);
    o.struct_size = 3;
    CHECK(wt_cross_entropy(tx, ty, &o, &out) == WT_ERR_INVALID_ARGUMENT, "uninitialised options");
    wt_cross_entropy_options_init(&o);
    float z = 1;
    wt_tensor *s0 = make(0, NULL, &z);
    o.reduction = WT_REDUCTION_NONE;
    CHECK(wt_cross_entropy_backward(tx, ty, s0, &o, &out) == WT_ERR_SHAPE, "dloss shape for none");
    wt_tensor_release(s0);
    wt_tensor_release(tx);
    wt_tensor_release(ty);
}

/* ------------------------------------------------------ embedding backward */

typedef struct emb_ref {
    int v, d, n;
    const int32_t *idx;
    const double *dy;
} emb_ref;

static double emb_loss(const double *w, void *vp)
{
    const emb_ref *r = vp;
    double s = 0;
    for (int i = 0; i < r->n; i++)
        if (r->idx[i] >= 0 && r->idx[i] < r->v)
            for (int j = 0; j < r->d; j++) s += r->dy[i * r->d + j] * w[r->idx[i] * r->d + j];
    return s;
}

static void test_embedding(void)
{
    enum { V = 11, D = 7, B = 3, S = 5 };
    int32_t idx[B * S] = {1, 4, 4, 0, 10, 4, 9, 9, 2, 1, 4, 7, 3, 4, 0};
    float dy[B * S * D];
    double dyd[B * S * D], w[V * D] = {0}, want[V * D];
    fill_uniform(dy, B * S * D, -1, 1);
    for (int i = 0; i < B * S * D; i++) dyd[i] = dy[i];
    emb_ref r = {V, D, B * S, idx, dyd};
    fd_grad(emb_loss, &r, w, V * D, want);
    int64_t is[2] = {B, S}, gs[3] = {B, S, D};
    wt_tensor *ti = make_i32(2, is, idx), *tg = make(3, gs, dy), *dw = NULL;
    CHECK(wt_embedding_backward(tg, ti, V, &dw) == WT_OK, "embedding backward: %s", wt_last_error());
    CHECK(dw && wt_tensor_shape(dw)[0] == V && wt_tensor_shape(dw)[1] == D, "dweight shape");
    float *got = dw ? read_all(dw, V * D) : NULL;
    close_all("embedding backward vs finite differences", got, want, V * D, 1e-5, 1e-5);
    free(got);
    wt_tensor_release(dw);
    wt_tensor *out = (wt_tensor *)1;
    CHECK(wt_embedding_backward(tg, tg, V, &out) == WT_ERR_INVALID_ARGUMENT && !out, "float indices refused");
    CHECK(wt_embedding_backward(ti, ti, V, &out) == WT_ERR_INVALID_ARGUMENT, "i32 dy refused");
    CHECK(wt_embedding_backward(tg, ti, -1, &out) == WT_ERR_INVALID_ARGUMENT, "negative num_embeddings");
    int64_t bad[2] = {S, B};
    wt_tensor *tb = make_i32(2, bad, idx);
    CHECK(wt_embedding_backward(tg, tb, V, &out) == WT_ERR_SHAPE, "index shape mismatch");
    wt_tensor_release(tb);
    wt_tensor_release(ti);
    wt_tensor_release(tg);
    /* Both ways a backend may sum (a small table, a large one past 1,024
     * rows), with indices outside the table that must add nothing. */
    const int64_t tables[2] = {V, 1500};
    for (int t = 0; t < 2; t++) {
        const int64_t v = tables[t];
        int32_t ix[B * S];
        for (int i = 0; i < B * S; i++) ix[i] = (int32_t)((idx[i] * 131) % v);
        ix[2] = -1, ix[7] = (int32_t)v, ix[11] = (int32_t)v + 5; /* outside: skipped */
        double *ref = calloc((size_t)(v * D), sizeof *ref);
        for (int i = 0; ref && i < B * S; i++)
            if (ix[i] >= 0 && ix[i] < v)
                for (int j = 0; j < D; j++) ref[ix[i] * D + j] += dy[i * D + j];
        wt_tensor *tix = make_i32(2, is, ix), *tdy = make(3, gs, dy), *g = NULL;
        CHECK(wt_embedding_backward(tdy, tix, v, &g) == WT_OK, "embedding backward, %lld rows: %s", (long long)v,
              wt_last_error());
        float *gv = g ? read_all(g, (int)(v * D)) : NULL;
        if (gv && ref) close_all(v == V ? "embedding backward, small table, indices outside skipped"
                                        : "embedding backward, 1500 rows, indices outside skipped",
                                 gv, ref, (int)(v * D), 1e-5, 1e-5);
        free(gv);
        free(ref);
        wt_tensor_release(g), wt_tensor_release(tix), wt_tensor_release(tdy);
    }
}

/* ------------------------------------------------------ normalisation */

typedef struct norm_ref {
    int ndim;
    const int64_t *shape;
    bool batch;       /* batch norm over all axes but 1; else layer norm over the last */
    bool training;    /* batch norm: batch statistics */
    const double *rm, *rv;
    double eps;
    const double *dy;
    int which;        /* 0: gradient wrt x; 1: wrt weight; 2: wrt bias */
    double *x, *w, *b;
} norm_ref;

/* sum(dy * y) where y is the normalised x (weight, bias applied). */
static double norm_loss_at(const norm_ref *r)
{
    size_t n = 1;
    for (int i = 0; i < r->ndim; i++) n *= (size_t)r->shape[i];
    size_t C = r->batch ? (size_t)r->shape[1] : (size_t)r->shape[r->ndim - 1];
    size_t inner = 1;
    for (int i = 2; r->batch && i < r->ndim; i++) inner *= (size_t)r->shape[i];
    double total = 0;
    if (!r->batch) {
        for (size_t row = 0; row < n / C; row++) {
            const double *xr = r->x + row * C;
            double m = 0, v = 0;
            for (size_t j = 0; j < C; j++) m += xr[j];
            m /= C;
            for (size_t j = 0; j < C; j++) v += (xr[j] - m) * (xr[j] - m);
            v /= C;
            for (size_t j = 0; j < C; j++)
                total += r->dy[row * C + j] * ((xr[j] - m) / sqrt(v + r->eps) * r->w[j] + r->b[j]);
        }
        return total;
    }
    size_t N = (size_t)r->shape[0];
    for (size_t c = 0; c < C; c++) {
        double m = 0, v = 0, cnt = (double)(N * inner);
        if (r->training) {
            for (size_t a = 0; a < N; a++)
                for (size_t k = 0; k < inner; k++) m += r->x[(a * C + c) * inner + k];
            m /= cnt;
            for (size_t a = 0; a < N; a++)
                for (size_t k = 0; k < inner; k++) {
                    double d = r->x[(a * C + c) * inner + k] - m;
                    v += d * d;
                }
            v /= cnt;
        } else {
            m = r->rm[c];
            v = r->rv[c];
        }
        for (size_t a = 0; a < N; a++)
            for (size_t k = 0; k < inner; k++) {
                size_t i = (a * C + c) * inner + k;
                total += r->dy[i] * ((r->x[i] - m) / sqrt(v + r->eps) * r->w[c] + r->b[c]);
            }
    }
    return total;
}

static double norm_loss(const double *p, void *vp)
{
    (void)p; /* the perturbed array is the one r points into */
    return norm_loss_at(vp);
}

static void norm_case(const char *what, int ndim, const int64_t *shape, bool batch, bool training)
{
    size_t n = 1;
    for (int i = 0; i < ndim; i++) n *= (size_t)shape[i];
    size_t C = batch ? (size_t)shape[1] : (size_t)shape[ndim - 1];
    float *x = malloc(n * 4), *dy = malloc(n * 4), w[64], b[64], rm[64], rv[64];
    double *xd = malloc(n * 8), *dyd = malloc(n * 8), wd[64], bd[64], rmd[64], rvd[64];
    double *gx = malloc(n * 8), gw[64], gb[64];
    fill_uniform(x, n, -2, 2);
    fill_uniform(dy, n, -1, 1);
    fill_uniform(w, C, 0.5f, 1.5f);
    fill_uniform(b, C, -0.5f, 0.5f);
    fill_uniform(rm, C, -0.3f, 0.3f);
    fill_uniform(rv, C, 0.5f, 2.0f);
    for (size_t i = 0; i < n; i++) { xd[i] = x[i]; dyd[i] = dy[i]; }
    for (size_t i = 0; i < C; i++) { wd[i] = w[i]; bd[i] = b[i]; rmd[i] = rm[i]; rvd[i] = rv[i]; }
    norm_ref r = {ndim, shape, batch, training, rmd, rvd, 1e-5, dyd, 0, xd, wd, bd};
    fd_grad(norm_loss, &r, xd, n, gx);
    fd_grad(norm_loss, &r, wd, C, gw);
    fd_grad(norm_loss, &r, bd, C, gb);
    int64_t cs[1] = {(int64_t)C};
    wt_tensor *tx = make(ndim, shape, x), *tg = make(ndim, shape, dy), *tw = make(1, cs, w);
    wt_tensor *trm = make(1, cs, rm), *trv = make(1, cs, rv);
    wt_tensor *dx = NULL, *dw = NULL, *db = NULL;
    wt_status st = batch ? wt_batch_norm_backward(tx, tw, trm, trv, training, 1e-5f, tg, &dx, &dw, &db)
                         : wt_layernorm_backward(tx, tw, tg, 1e-5f, &dx, &dw, &db);
    CHECK(st == WT_OK, "%s: %s", what, wt_last_error());
    char name[96];
    float *got = dx ? read_all(dx, n) : NULL;
    snprintf(name, sizeof name, "%s dx vs finite differences", what);
    close_all(name, got, gx, n, 2e-3, 2e-5);
    free(got);
    got = dw ? read_all(dw, C) : NULL;
    snprintf(name, sizeof name, "%s dweight vs finite differences", what);
    close_all(name, got, gw, C, 2e-3, 2e-5);
    free(got);
    got = db ? read_all(db, C) : NULL;
    snprintf(name, sizeof name, "%s dbias vs finite differences", what);
    close_all(name, got, gb, C, 2e-3, 2e-5);
    free(got);
    wt_tensor_release(dx);
    wt_tensor_release(dw);
    wt_tensor_release(db);
    /* Only dx asked for. */
    dx = NULL;
    st = batch ? wt_batch_norm_backward(tx, NULL, trm, trv, training, 1e-5f, tg, &dx, NULL, NULL)
               : wt_layernorm_backward(tx, NULL, tg, 1e-5f, &dx, NULL, NULL);
    CHECK(st == WT_OK && dx, "%s without weight", what);
    wt_tensor_release(dx);
    wt_tensor_release(tx);
    wt_tensor_release(tg);
    wt_tensor_release(tw);
    wt_tensor_release(trm);
    wt_tensor_release(trv);
    free(x); free(dy); free(xd); free(dyd); free(gx);
}

static void test_norms(void)
{
    int64_t ln2[2] = {5, 11}, ln3[3] = {2, 3, 17}, bn4[4] = {3, 4, 5, 3}, bn2[2] = {6, 5};
    norm_case("layernorm [5,11]", 2, ln2, false, false);
    norm_case("layernorm [2,3,17]", 3, ln3, false, false);
    norm_case("batchnorm train [3,4,5,3]", 4, bn4, true, true);
    norm_case("batchnorm eval [3,4,5,3]", 4, bn4, true, false);
    norm_case("batchnorm train [6,5]", 2, bn2, true, true);
    float v[6] = {1, 2, 3, 4, 5, 6};
    int64_t s6[1] = {6}, s23[2] = {2, 3};
    wt_tensor *x1 = make(1, s6, v), *x2 = make(2, s23, v), *dx = (wt_tensor *)1;
    CHECK(wt_batch_norm_backward(x1, NULL, NULL, NULL, true, 1e-5f, x1, &dx, NULL, NULL) == WT_ERR_SHAPE && !dx,
          "batch norm of 1-D refused");
    CHECK(wt_batch_norm_backward(x2, NULL, NULL, NULL, false, 1e-5f, x2, &dx, NULL, NULL) == WT_ERR_INVALID_ARGUMENT,
          "eval without running stats refused");
    CHECK(wt_layernorm_backward(x2, x1, x2, 1e-5f, &dx, NULL, NULL) == WT_ERR_SHAPE, "weight of the wrong size");
    CHECK(wt_layernorm_backward(x2, NULL, x2, -1.0f, &dx, NULL, NULL) == WT_ERR_INVALID_ARGUMENT, "negative eps");
    wt_tensor *dw = NULL;
    CHECK(wt_layernorm_backward(x2, NULL, x2, 1e-5f, NULL, &dw, NULL) == WT_ERR_INVALID_ARGUMENT, "dweight without weight");
    wt_tensor_release(x1);
    wt_tensor_release(x2);
}

/* ------------------------------------------------------------ optimizers */

static void test_optimizers(void)
{
    enum { N = 1031 };
    int64_t s[1] = {N};
    float p0[N], g[3][N];
    fill_uniform(p0, N, -1, 1);
    for (int k = 0; k < 3; k++) fill_uniform(g[k], N, -1, 1);
    /* SGD with momentum, weight decay, nesterov; then plain SGD. */
    for (int variant = 0; variant < 3; variant++) {
        wt_sgd_options o;
        wt_sgd_options_init(&o);
        o.lr = 0.1f;
        o.momentum = variant == 2 ? 0.0f : 0.9f;
        o.weight_decay = 0.01f;
        o.nesterov = variant == 1;
        o.dampening = variant == 0 ? 0.1f : 0.0f;
        double p[N], buf[N] = {0};
        for (int i = 0; i < N; i++) p[i] = p0[i];
        wt_tensor *tp = make(1, s, p0), *tm = NULL;
        wt_tensor_zeros(g_ctx, WT_F32, 1, s, &tm);
        for (int k = 0; k < 3; k++) {
            wt_tensor *tg = make(1, s, g[k]);
            CHECK(wt_sgd_step(tp, tg, variant == 2 ? NULL : tm, &o) == WT_OK, "sgd step: %s", wt_last_error());
            wt_tensor_release(tg);
            for (int i = 0; i < N; i++) {
                double gi = g[k][i] + (double)o.weight_decay * p[i];
                if (o.momentum > 0) {
                    buf[i] = o.momentum * buf[i] + (1 - (double)o.dampening) * gi;
                    gi = o.nesterov ? gi + o.momentum * buf[i] : buf[i];
                }
                p[i] -= (double)o.lr * gi;
            }
        }
        float *got = read_all(tp, N);
        const char *vn[3] = {"sgd momentum+dampening", "sgd nesterov", "sgd plain"};
        close_all(vn[variant], got, p, N, 1e-5, 1e-6);
        free(got);
        wt_tensor_release(tp);
        wt_tensor_release(tm);
    }
    /* AdamW, three steps. */
    wt_adamw_options o;
    wt_adamw_options_init(&o);
    o.lr = 0.01f;
    o.weight_decay = 0.1f;
    double p[N], m[N] = {0}, v[N] = {0};
    for (int i = 0; i < N; i++) p[i] = p0[i];
    wt_tensor *tp = make(1, s, p0), *tm = NULL, *tv = NULL;
    wt_tensor_zeros(g_ctx, WT_F32, 1, s, &tm);
    wt_tensor_zeros(g_ctx, WT_F32, 1, s, &tv);
    for (int k = 0; k < 3; k++) {
        wt_tensor *tg = make(1, s, g[k]);
        CHECK(wt_adamw_step(tp, tg, tm, tv, k + 1, &o) == WT_OK, "adamw step: %s", wt_last_error());
        wt_tensor_release(tg);
        double b1 = 1 - pow(o.beta1, k + 1), b2 = 1 - pow(o.beta2, k + 1);
        for (int i = 0; i < N; i++) {
            p[i] *= 1 - (double)o.lr * o.weight_decay;
            m[i] = o.beta1 * m[i] + (1 - (double)o.beta1) * g[k][i];
            v[i] = o.beta2 * v[i] + (1 - (double)o.beta2) * g[k][i] * g[k][i];
            p[i] -= o.lr * (m[i] / b1) / (sqrt(v[i] / b2) + o.eps);
        }
    }
    float *got = read_all(tp, N);
    close_all("adamw", got, p, N, 1e-4, 1e-6);
    free(got);
    got = read_all(tm, N);
    close_all("adamw m", got, m, N, 1e-5, 1e-7);
    free(got);
    /* In place means in place: the same storage, no new tensor. */
    wt_memory_stats before, after;
    wt_context_memory_stats(g_ctx, &before);
    wt_tensor *tg = make(1, s, g[0]);
    wt_adamw_step(tp, tg, tm, tv, 4, &o);
    wt_context_memory_stats(g_ctx, &after);
    CHECK(after.live_tensors == before.live_tensors + 1, "adamw allocates nothing but the caller's grad");
    /* Bad input. */
    CHECK(wt_adamw_step(tp, tg, tm, tm, 1, &o) == WT_ERR_INVALID_ARGUMENT, "m aliasing v refused");
    CHECK(wt_adamw_step(tp, tg, tm, tv, 0, &o) == WT_ERR_INVALID_ARGUMENT, "step 0 refused");
    CHECK(wt_adamw_step(tp, tp, tm, tv, 1, &o) == WT_ERR_INVALID_ARGUMENT, "grad aliasing param refused");
    wt_tensor *view = NULL;
    int64_t s2[2] = {1, N};
    wt_tensor *tp2 = NULL, *tpt = NULL;
    wt_reshape(tp, 2, s2, &tp2);
    wt_transpose(tp2, 0, 1, &tpt);
    wt_slice(tp, 0, 0, N, 2, &view);
    wt_tensor *g2 = NULL;
    wt_slice(tg, 0, 0, N, 2, &g2);
    CHECK(wt_sgd_step(tp, g2, NULL, NULL) == WT_ERR_SHAPE, "shape mismatch refused");
    CHECK(wt_sgd_step(view, g2, NULL, NULL) == WT_ERR_INVALID_ARGUMENT, "strided param refused");
    wt_sgd_options so;
    wt_sgd_options_init(&so);
    so.momentum = 0.9f;
    CHECK(wt_sgd_step(tp, tg, NULL, &so) == WT_ERR_INVALID_ARGUMENT, "momentum without buffer refused");
    so.lr = NAN;
    CHECK(wt_sgd_step(tp, tg, tm, &so) == WT_ERR_INVALID_ARGUMENT, "NaN lr refused");
    wt_tensor_release(g2);
    wt_tensor_release(view);
    wt_tensor_release(tp2);
    wt_tensor_release(tpt);
    wt_tensor_release(tg);
    wt_tensor_release(tp);
    wt_tensor_release(tm);
    wt_tensor_release(tv);
}

int main(int argc, char **argv)
{
    test_run run;
    if (!test_begin(&run, "training", argc, argv)) return run.status;
    g_ctx = run.ctx;
    test_activations();
    test_cross_entropy();
    test_embedding();
    test_norms();
    test_optimizers();
    return test_end(&run);
}
