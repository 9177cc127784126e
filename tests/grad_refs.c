/* Whole-model gradients against PyTorch: an MLP, the LeNet of
 * examples/train_fashion_mnist.c and one pre-norm block of
 * examples/train_gpt.c, with the weights, inputs, loss and every
 * parameter's gradient that bench/grad_refs_torch.py wrote from PyTorch
 * (f32, TF32 off, on an NVIDIA H200) into tests/data/grad_refs. Here the
 * same models run forward through the library's ops and backward through
 * its tape, on the backend under test.
 *
 * Tolerance, per parameter: max |g - ref| <= 1e-4 * max |ref| + 1e-6 *
 * (the model's largest gradient); the last term lets a gradient that is
 * zero in exact arithmetic (the key bias of attention: softmax does not
 * see a shift shared by every key) be float noise. The loss: relative
 * 1e-5. */
#include "test_util.h"
#include "webtensor_io.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef WT_GRAD_REFS_DIR
#error "WT_GRAD_REFS_DIR must name tests/data/grad_refs"
#endif

static wt_context *g_ctx;

static wt_tensor *load(const char *model, const char *what, const char *name)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s_%s%s.npy", WT_GRAD_REFS_DIR, model, what, name);
    wt_tensor *t = NULL;
    if (wt_npy_load(g_ctx, path, &t) != WT_OK) CHECK(false, "loading %s: %s", path, wt_last_error());
    return t;
}

/* The tensors of one model by name: its parameters (requiring grad) and
 * inputs. */
typedef struct named {
    const char *name;
    wt_tensor *t;
} named;

static wt_tensor *get(named *v, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(v[i].name, name)) return v[i].t;
    return NULL;
}

/* out = op(...), kept in the step's list for release; NULL once failed. */
typedef struct step {
    wt_status st, last;
    wt_tensor *keep[128];
    int n;
} step;

static wt_tensor *kept(step *s, wt_status st, wt_tensor *t)
{
    if (s->st != WT_OK) return NULL;
    if (st != WT_OK || s->n == 128) {
        s->st = st != WT_OK ? st : WT_ERR_OUT_OF_MEMORY;
        wt_tensor_release(t);
        return NULL;
    }
    return s->keep[s->n++] = t;
}
/* The comma sequences the call before tmp_ is read. */
#define OP(s, fn, ...) ((s)->st != WT_OK ? NULL : ((s)->last = fn(__VA_ARGS__, &tmp_), kept((s), (s)->last, tmp_)))

static wt_tensor *fwd_mlp(step *s, named *p, int np, named *in, int ni)
{
    wt_tensor *tmp_ = NULL;
    wt_tensor *h = OP(s, wt_gelu, OP(s, wt_linear, get(in, ni, "x"), get(p, np, "w1"), get(p, np, "b1")));
    wt_tensor *logits = OP(s, wt_linear, h, get(p, np, "w2"), get(p, np, "b2"));
    return OP(s, wt_cross_entropy, logits, get(in, ni, "labels"), NULL);
}

static wt_tensor *fwd_lenet(step *s, named *p, int np, named *in, int ni)
{
    wt_tensor *tmp_ = NULL, *p1 = NULL, *p2 = NULL;
    wt_conv_options co;
    wt_conv_options_init(&co);
    co.padding[0] = co.padding[1] = co.padding[2] = co.padding[3] = 2;
    wt_pool2d_options po;
    wt_pool2d_options_init(&po);
    po.kernel[0] = po.kernel[1] = 2;
    wt_tensor *r1 = OP(s, wt_relu, OP(s, wt_conv2d, get(in, ni, "x"), get(p, np, "c1w"), get(p, np, "c1b"), &co));
    if (s->st == WT_OK) s->last = wt_max_pool2d_v2(r1, &po, &tmp_, NULL), p1 = kept(s, s->last, tmp_);
    wt_tensor *r2 = OP(s, wt_relu, OP(s, wt_conv2d, p1, get(p, np, "c2w"), get(p, np, "c2b"), &co));
    if (s->st == WT_OK) s->last = wt_max_pool2d_v2(r2, &po, &tmp_, NULL), p2 = kept(s, s->last, tmp_);
    wt_tensor *flat = OP(s, wt_reshape, p2, 2, (const int64_t[]){-1, 1568});
    wt_tensor *h = OP(s, wt_relu, OP(s, wt_linear, flat, get(p, np, "f1w"), get(p, np, "f1b")));
    wt_tensor *logits = OP(s, wt_linear, h, get(p, np, "f2w"), get(p, np, "f2b"));
    return OP(s, wt_cross_entropy, logits, get(in, ni, "labels"), NULL);
}

enum { B = 2, T = 8, D = 16, H = 2 };

static wt_tensor *heads(step *s, wt_tensor *t)
{
    wt_tensor *tmp_ = NULL;
    wt_tensor *r = OP(s, wt_reshape, t, 4, (const int64_t[]){B, T, H, D / H});
    return OP(s, wt_transpose, r, 1, 2);
}

static wt_tensor *fwd_block(step *s, named *p, int np, named *in, int ni)
{
    wt_tensor *tmp_ = NULL, *x = get(in, ni, "x");
    wt_tensor *h = OP(s, wt_layer_norm, x, 1, get(p, np, "ln1_w"), get(p, np, "ln1_b"), 1e-5);
    wt_tensor *q = heads(s, OP(s, wt_linear, h, get(p, np, "wq"), get(p, np, "bq")));
    wt_tensor *k = heads(s, OP(s, wt_linear, h, get(p, np, "wk"), get(p, np, "bk")));
    wt_tensor *v = heads(s, OP(s, wt_linear, h, get(p, np, "wv"), get(p, np, "bv")));
    wt_tensor *att = OP(s, wt_scaled_dot_product_attention, q, k, v, NULL, true, 0.0);
    wt_tensor *merged = OP(s, wt_reshape, OP(s, wt_transpose, att, 1, 2), 3, (const int64_t[]){B, T, D});
    x = OP(s, wt_add, x, OP(s, wt_linear, merged, get(p, np, "wo"), get(p, np, "bo")));
    h = OP(s, wt_layer_norm, x, 1, get(p, np, "ln2_w"), get(p, np, "ln2_b"), 1e-5);
    wt_tensor *up = OP(s, wt_gelu, OP(s, wt_linear, h, get(p, np, "w1"), get(p, np, "b1")));
    x = OP(s, wt_add, x, OP(s, wt_linear, up, get(p, np, "w2"), get(p, np, "b2")));
    return OP(s, wt_sum, OP(s, wt_mul, x, get(in, ni, "r")), 0, NULL, false);
}

typedef wt_tensor *(*forward_fn)(step *, named *, int, named *, int);

static bool read_all(const wt_tensor *t, float **v, int64_t *n)
{
    *n = wt_tensor_numel(t);
    *v = malloc((size_t)(*n ? *n : 1) * sizeof **v);
    return *v && wt_tensor_read(t, *v, (size_t)*n * sizeof **v) == WT_OK;
}

static void check_model(const char *model, const char *const *pnames, int np, const char *const *inames, int ni,
                        forward_fn fwd)
{
    named p[16] = {{0}}, in[4] = {{0}};
    bool ok = true;
    for (int i = 0; i < np; i++) {
        p[i].name = pnames[i];
        p[i].t = load(model, "", pnames[i]);
        ok = ok && p[i].t && wt_tensor_set_requires_grad(p[i].t, true) == WT_OK;
    }
    for (int i = 0; i < ni; i++) {
        in[i].name = inames[i];
        ok = ok && (in[i].t = load(model, "", inames[i])) != NULL;
    }
    wt_tensor *ref_loss = load(model, "", "loss");
    step s = {.st = ok ? WT_OK : WT_ERR_INVALID_ARGUMENT};
    wt_tensor *loss = fwd(&s, p, np, in, ni);
    if (s.st == WT_OK) s.st = wt_backward(loss);
    float lv = NAN, rl = NAN;
    ok = CHECK(s.st == WT_OK && ref_loss, "%s: forward and backward: %s", model, wt_last_error()) &&
         wt_tensor_read(loss, &lv, sizeof lv) == WT_OK && wt_tensor_read(ref_loss, &rl, sizeof rl) == WT_OK;
    CHECK(ok && fabs((double)lv - rl) <= 1e-5 * fabs(rl), "%s: loss %.7f, PyTorch's %.7f", model, lv, rl);
    /* The model's gradient scale first, then each parameter. */
    float *ref[16] = {0}, *got[16] = {0};
    int64_t n[16] = {0};
    double scale = 0, worst = 0;
    const char *worst_name = "";
    for (int i = 0; ok && i < np; i++) {
        wt_tensor *r = load(model, "grad_", pnames[i]), *g = NULL;
        int64_t ng = 0;
        ok = r && wt_tensor_grad(p[i].t, &g) == WT_OK && g && read_all(r, &ref[i], &n[i]) &&
             read_all(g, &got[i], &ng) && ng == n[i];
        CHECK(ok, "%s: gradient of %s: %s", model, pnames[i], g ? wt_last_error() : "none");
        for (int64_t k = 0; ok && k < n[i]; k++) scale = fmax(scale, fabs(ref[i][k]));
        wt_tensor_release(r), wt_tensor_release(g);
    }
    for (int i = 0; ok && i < np; i++) {
        double big = 0, err = 0;
        for (int64_t k = 0; k < n[i]; k++) {
            big = fmax(big, fabs(ref[i][k]));
            err = fmax(err, fabs((double)got[i][k] - ref[i][k]));
        }
        double bound = 1e-4 * big + 1e-6 * scale;
        CHECK(err <= bound, "%s: d loss / d %s: max difference %.3g from PyTorch's (bound %.3g, largest %.3g)", model,
              pnames[i], err, bound, big);
        double used = err / bound;
        if (used > worst) worst = used, worst_name = pnames[i];
    }
    if (ok)
        printf("%s: loss %.7f (PyTorch %.7f); %d gradients, the closest to its bound: %s at %.2g of it\n", model, lv, rl,
               np, worst_name, worst);
    for (int i = 0; i < np; i++) free(ref[i]), free(got[i]), wt_tensor_release(p[i].t);
    for (int i = 0; i < ni; i++) wt_tensor_release(in[i].t);
    for (int i = 0; i < s.n; i++) wt_tensor_release(s.keep[i]);
    wt_tensor_release(ref_loss);
}

int main(int argc, char **argv)
{
    test_run run;
    if (!test_begin(&run, "grad_refs", argc, argv)) return run.status;
    g_ctx = run.ctx;
    static const char *const mlp_p[] = {"w1", "b1", "w2", "b2"}, *const mlp_i[] = {"x", "labels"};
    static const char *const lenet_p[] = {"c1w", "c1b", "c2w", "c2b", "f1w", "f1b", "f2w", "f2b"};
    static const char *const block_p[] = {"ln1_w", "ln1_b", "wq", "bq", "wk", "bk", "wv", "bv",
                                          "wo", "bo", "ln2_w", "ln2_b", "w1", "b1", "w2", "b2"};
    static const char *const block_i[] = {"x", "r"};
    check_model("mlp", mlp_p, 4, mlp_i, 2, fwd_mlp);
    check_model("lenet", lenet_p, 8, mlp_i, 2, fwd_lenet);
    check_model("block", block_p, 16, block_i, 2, fwd_block);
    test_check_nothing_alive(g_ctx);
    return test_end(&run);
}
