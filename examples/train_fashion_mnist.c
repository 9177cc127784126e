/* Trains a LeNet-style CNN on Fashion-MNIST with webtensor, on the GPU or
 * the CPU backend:
 *
 *   conv 5x5 (1 -> 16, pad 2) - relu - max-pool 2
 *   conv 5x5 (16 -> 32, pad 2) - relu - max-pool 2
 *   linear 1568 -> 128 - relu - linear 128 -> 10, softmax cross-entropy
 *
 * The gradients come from autograd (the parameters require grad; wt_backward
 * on the loss) and AdamW updates the parameters in place; minibatches are
 * shuffled with the library's seeded random numbers (the same on every
 * backend), weights initialised like PyTorch's layers (uniform in
 * +-1/sqrt(fan_in)) from the same generator.
 *
 *   train_fashion_mnist [--backend auto|cpu|webgpu|vulkan|gles] [--epochs 5]
 *                       [--batch 64] [--lr 1e-3] [--seed 1] [--data DIR]
 *                       [--train-limit N] [--steps N] [--max-loss X]
 *                       [--compare BACKEND,BACKEND [--exact]] [--eval-limit N]
 *                       [--print-loss] [--synthetic N] [--graph] [--optimizer adamw|sgd] [--gpu-time]
 *                       [--dist [--check-sync] [--dist-timeout S] [--dist-pack P] [--dist-overlap on|off] [--dist-f16]
 *                               [--fail-step K [--fail-rank R]]]
 *
 * --steps stops after that many steps, --max-loss then fails (exit 1)
 * unless the mean loss of the last 50 steps is below X. --compare trains
 * on two backends in lockstep and fails unless every step's loss agrees
 * within 1e-3 (relative). --eval-limit N evaluates on the first N images
 * of each split after every epoch (default: all; 0: none). --print-loss
 * prints every step's loss, "step K loss X" (9 significant digits).
 * --synthetic N trains on N random images with random labels instead of
 * the data set (for timing where the data are not at hand).
 *
 * --optimizer sgd trains with SGD (momentum 0.9, the same --lr) instead
 * of AdamW.
 *
 * After the steady-state "ms a step" (steps 11 on, wall time) a second
 * line gives the host's share: the calling thread's CPU time in the
 * steps' calls (batch upload, ops or replay, loss bookkeeping). Where it
 * is well under the wall time a step, the device sets the pace.
 * --gpu-time adds the GPU's busy time a step over the same steps
 * (wt_context_timer_*: the compute passes' own time, gaps excluded;
 * WebGPU devices with timestamp queries only).
 *
 * --graph captures the whole first training step - forward pass,
 * autograd's backward and the optimizer's update - as a graph
 * (wt_graph_begin / wt_graph_end) and replays it for every later batch,
 * the batch written into the captured input tensors first: the step runs
 * without the ops' front-ends. The optimizer object keeps AdamW's step
 * number and bias corrections on the device and advances them in the
 * step, so every replay is the next step. A replayed step gives the same
 * bits as an eager one:
 * --compare takes a backend with ":graph" (cpu,cpu:graph) and --exact
 * then demands bit-identical losses at every step.
 *
 * --dist trains data-parallel under mpirun -np N (webtensor_dist.h): the
 * parameters are broadcast from rank 0; every global batch of N * --batch
 * images of the shuffled order (the same order on every rank) is split
 * into N shards of --batch, rank r taking the r-th; the gradients and the
 * loss are averaged over the ranks before the AdamW step, which is then
 * the same on every rank. So N ranks at --batch B follow one process at
 * --batch N*B. Rank 0 prints. With one GPU per rank, rank r on a host
 * takes the host's r-th adapter. --check-sync compares every parameter
 * across the ranks after every step and fails unless they are
 * bit-identical. --fail-step K makes rank --fail-rank (default 1) fail at
 * step K instead of reducing its gradients (tests that every rank then
 * stops with its message). --dist-timeout: seconds a rank waits for the
 * others in a collective (default 300). --dist-pack auto|never|always:
 * whether a bucket of gradients is concatenated on the GPU before its
 * read-back (wt_dist_pack; default auto). --dist-overlap on|off: whether
 * the reduction starts during the backward pass, bucket by bucket as the
 * gradients become final (wt_dist_grad_sync; default on), or after it
 * (wt_dist_allreduce); the results are the same bits.
 * --dist-f16: the gradients travel and are reduced as f16 (half the
 * bytes; wt_dist_options.reduce_f16 states the tolerance).
 *
 * The data are the four .gz files of Debian's
 * dataset-fashion-mnist package (/usr/share/datasets/fashion-mnist), or
 * of --data DIR / $WT_FASHION_MNIST_DIR.
 */
#define _POSIX_C_SOURCE 200809L
#include <webtensor.h>

#include "example_context.h"
#include "example_dist.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>

#define IMG 784
#define CLASSES 10

/* ------------------------------------------------------------------ data */

typedef struct dataset {
    int n;
    float *images; /* n x 784, scaled to [0, 1] */
    int32_t *labels;
} dataset;

static unsigned char *gunzip_file(const char *path, size_t *size)
{
    gzFile f = gzopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 1 << 20, n = 0;
    unsigned char *buf = malloc(cap);
    for (;;) {
        if (n == cap) {
            unsigned char *b = realloc(buf, cap *= 2);
            if (!b) break;
            buf = b;
        }
        int got = gzread(f, buf + n, (unsigned)(cap - n));
        if (got <= 0) break;
        n += (size_t)got;
    }
    gzclose(f);
    *size = n;
    return buf;
}

static uint32_t be32(const unsigned char *p) { return (uint32_t)p[0] << 24 | p[1] << 16 | p[2] << 8 | p[3]; }

static int load_split(const char *dir, const char *prefix, dataset *d)
{
    char ip[1024], lp[1024];
    snprintf(ip, sizeof ip, "%s/%s-images-idx3-ubyte.gz", dir, prefix);
    snprintf(lp, sizeof lp, "%s/%s-labels-idx1-ubyte.gz", dir, prefix);
    size_t isz = 0, lsz = 0;
    unsigned char *im = gunzip_file(ip, &isz), *lb = gunzip_file(lp, &lsz);
    int ok = im && lb && isz >= 16 && lsz >= 8 && be32(im) == 2051 && be32(lb) == 2049 &&
             be32(im + 4) == be32(lb + 4) && be32(im + 8) == 28 && be32(im + 12) == 28 &&
             isz >= 16 + (size_t)be32(im + 4) * IMG && lsz >= 8 + be32(lb + 4);
    if (ok) {
        d->n = (int)be32(im + 4);
        d->images = malloc((size_t)d->n * IMG * sizeof(float));
        d->labels = malloc((size_t)d->n * sizeof(int32_t));
        for (size_t i = 0; i < (size_t)d->n * IMG; i++) d->images[i] = im[16 + i] / 255.0f;
        for (int i = 0; i < d->n; i++) d->labels[i] = lb[8 + i];
    }
    free(im);
    free(lb);
    return ok;
}

/* n random images (uniform [0, 1)) with random labels, from splitmix64. */
static int synthetic_split(int n, uint64_t seed, dataset *d)
{
    d->n = n;
    d->images = malloc((size_t)n * IMG * sizeof(float));
    d->labels = malloc((size_t)n * sizeof(int32_t));
    if (!d->images || !d->labels) return 0;
    uint64_t s = seed;
    for (size_t i = 0; i < (size_t)n * IMG + (size_t)n; i++) {
        uint64_t z = (s += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        z ^= z >> 31;
        if (i < (size_t)n * IMG) d->images[i] = (float)(z >> 40) / (float)(1 << 24);
        else d->labels[i - (size_t)n * IMG] = (int32_t)(z % CLASSES);
    }
    return 1;
}

/* ------------------------------------------------------------ a step */

/* The work of one step: every tensor made in it belongs to a scope
 * (webtensor.h, "scopes"), released together at its end; after the first
 * failure the step runs nothing more. */
typedef struct step {
    wt_scope *scope;
    wt_status st;
    wt_tensor *tmp;
} step;

/* Records st (the first failure is printed); true while the step is fine. */
static bool ok(step *a, wt_status st)
{
    if (a->st == WT_OK && st != WT_OK) {
        a->st = st;
        fprintf(stderr, "error: %s\n", wt_last_error());
    }
    return a->st == WT_OK;
}

static bool step_begin(step *a, wt_context *ctx)
{
    a->scope = NULL;
    a->st = WT_OK;
    return ok(a, wt_scope_begin(ctx, &a->scope));
}

static void step_end(step *a)
{
    if (a->scope) wt_scope_end(a->scope);
    a->scope = NULL;
}

/* R = op(args..., &out); NULL (and nothing run) once the step failed. */
#define OP(a, fn, ...) ((a)->st != WT_OK ? NULL : ok((a), fn(__VA_ARGS__, &(a)->tmp)) ? (a)->tmp : NULL)

/* ------------------------------------------------------------------ model */

enum { C1W, C1B, C2W, C2B, F1W, F1B, F2W, F2B, NPARAM };
static const int64_t PSHAPE[NPARAM][4] = {
    {16, 1, 5, 5}, {16}, {32, 16, 5, 5}, {32}, {128, 1568}, {128}, {CLASSES, 128}, {CLASSES},
};
static const int PNDIM[NPARAM] = {4, 1, 4, 1, 2, 1, 2, 1};
static const int FAN_IN[NPARAM] = {25, 25, 400, 400, 1568, 1568, 128, 128};

/* A captured training step (--graph): the graph, the tensors it reads the
 * batch from, and the one each replay writes the loss to. */
typedef struct replay {
    bool on;
    wt_graph *graph;
    wt_tensor *x, *y;
    wt_tensor *loss;
} replay;

typedef struct model {
    wt_context *ctx;
    wt_tensor *p[NPARAM];
    bool sgd;          /* --optimizer sgd (momentum 0.9) instead of AdamW */
    wt_optimizer *opt; /* over p, with its state (moments, step number) */
    int64_t step;
    replay rp;
} model;

static int model_init(model *md, wt_context *ctx, uint64_t seed, float lr, bool sgd)
{
    memset(md, 0, sizeof *md);
    md->ctx = ctx;
    md->sgd = sgd;
    for (int i = 0; i < NPARAM; i++) {
        wt_tensor *r = NULL, *s = NULL, *o = NULL, *t = NULL;
        double bound = 1.0 / sqrt((double)FAN_IN[i]);
        /* uniform(-bound, bound) = rand * 2 bound - bound */
        if (wt_tensor_rand(ctx, WT_F32, PNDIM[i], PSHAPE[i], seed * 1000 + (uint64_t)i, &r) != WT_OK ||
            wt_tensor_full(ctx, WT_F32, 0, NULL, 2 * bound, &s) != WT_OK ||
            wt_tensor_full(ctx, WT_F32, 0, NULL, bound, &o) != WT_OK || wt_mul(r, s, &t) != WT_OK ||
            wt_sub(t, o, &md->p[i]) != WT_OK || wt_tensor_set_requires_grad(md->p[i], true) != WT_OK) {
            fprintf(stderr, "error: initialising the model: %s\n", wt_last_error());
            return 0;
        }
        wt_tensor_release(r);
        wt_tensor_release(s);
        wt_tensor_release(o);
        wt_tensor_release(t);
    }
    wt_status st;
    if (sgd) {
        wt_sgd_options o;
        wt_sgd_options_init(&o);
        o.lr = lr;
        o.momentum = 0.9;
        st = wt_optimizer_create_sgd(NPARAM, md->p, &o, &md->opt);
    } else {
        wt_adamw_options o;
        wt_adamw_options_init(&o);
        o.lr = lr;
        o.weight_decay = 0.0;
        st = wt_optimizer_create_adamw(NPARAM, md->p, &o, &md->opt);
    }
    if (st != WT_OK) {
        fprintf(stderr, "error: making the optimizer: %s\n", wt_last_error());
        return 0;
    }
    return 1;
}

static void model_free(model *md)
{
    wt_graph_release(md->rp.graph);
    wt_tensor_release(md->rp.x);
    wt_tensor_release(md->rp.y);
    wt_tensor_release(md->rp.loss);
    wt_optimizer_release(md->opt);
    for (int i = 0; i < NPARAM; i++) wt_tensor_release(md->p[i]);
}

static wt_tensor *forward(step *a, model *md, wt_tensor *x)
{
    wt_conv_options co;
    wt_conv_options_init(&co);
    co.padding[0] = co.padding[1] = co.padding[2] = co.padding[3] = 2;
    wt_pool2d_options po;
    wt_pool2d_options_init(&po);
    po.kernel[0] = po.kernel[1] = 2;
    wt_tensor *p1 = NULL, *p2 = NULL;
    wt_tensor *r1 = OP(a, wt_relu, OP(a, wt_conv2d, x, md->p[C1W], md->p[C1B], &co));
    if (a->st == WT_OK) ok(a, wt_max_pool2d_v2(r1, &po, &p1, NULL));
    wt_tensor *r2 = OP(a, wt_relu, OP(a, wt_conv2d, p1, md->p[C2W], md->p[C2B], &co));
    if (a->st == WT_OK) ok(a, wt_max_pool2d_v2(r2, &po, &p2, NULL));
    int64_t fs[2] = {-1, 1568};
    wt_tensor *h = OP(a, wt_relu, OP(a, wt_linear, OP(a, wt_reshape, p2, 2, fs), md->p[F1W], md->p[F1B]));
    return OP(a, wt_linear, h, md->p[F2W], md->p[F2B]);
}

/* The forward pass and its backward on a batch: returns the loss tensor
 * (0-d) and the parameters' gradients in grads. The tape records the
 * forward pass (the parameters require grad); wt_backward fills their
 * gradients. Data-parallel with overlap (g overlapping): a copy of the
 * loss off the tape (*sync_loss) is given to the synchroniser before
 * backward, whose gradient-ready hooks start the gradients' buckets. */
static wt_tensor *loss_and_grads(step *a, model *md, wt_tensor *x, wt_tensor *y, wt_tensor **grads, dist_group *g,
                                 wt_tensor **sync_loss)
{
    wt_tensor *loss = OP(a, wt_cross_entropy, forward(a, md, x), y, NULL);
    if (g && dist_overlapping(g) && a->st == WT_OK && ok(a, wt_no_grad_begin(md->ctx))) {
        *sync_loss = OP(a, wt_mul_scalar, loss, 1.0);
        wt_no_grad_end(md->ctx);
        if (a->st == WT_OK) ok(a, dist_sync_give_loss(g, NPARAM, *sync_loss));
    }
    if (a->st != WT_OK || !ok(a, wt_backward(loss))) return NULL;
    for (int i = 0; i < NPARAM && a->st == WT_OK; i++)
        if (ok(a, wt_tensor_grad(md->p[i], &grads[i])) && !grads[i])
            ok(a, wt_set_last_error(WT_ERR_INVALID_ARGUMENT, "a parameter has no gradient"));
    return a->st == WT_OK ? loss : NULL;
}

/* The optimizer's step on every parameter (in place, on the gradients
 * wt_backward left in the parameters' records); then the gradients are
 * dropped for the next step. */
static bool update(step *a, model *md)
{
    md->step++;
    if (ok(a, wt_optimizer_step(md->opt))) ok(a, wt_optimizer_zero_grad(md->opt));
    return a->st == WT_OK;
}

/* One training step on a batch; returns the loss tensor (0-d) of the step. */
static wt_tensor *train_step(step *a, model *md, wt_tensor *x, wt_tensor *y, dist_group *g, bool fail_here)
{
    wt_tensor *grads[NPARAM + 1] = {NULL}, *sync_loss = NULL;
    wt_tensor *loss = loss_and_grads(a, md, x, y, grads, g, &sync_loss);
    if (!loss) return NULL;
    /* Data-parallel: the loss (a copy off the tape) and the gradients,
     * averaged over the ranks in one call, or the overlapped reduction
     * that backward started finished. */
    if (dist_on(g) && a->st == WT_OK) {
        if (fail_here) {
            char msg[96];
            snprintf(msg, sizeof msg, "failure injected at step %lld (--fail-step)", (long long)md->step + 1);
            ok(a, dist_fail(g, msg));
        } else if (dist_overlapping(g)) {
            if (ok(a, dist_sync_finish(g))) loss = sync_loss;
        } else if (ok(a, wt_no_grad_begin(md->ctx))) {
            /* Off the tape: the loss's copy would otherwise require grad,
             * and the packed bucket holding it be recorded. */
            wt_tensor *mean_loss = OP(a, wt_mul_scalar, loss, 1.0);
            grads[NPARAM] = loss = mean_loss;
            ok(a, dist_mean(g, NPARAM + 1, grads));
            wt_no_grad_end(md->ctx);
        }
    }
    return a->st == WT_OK && update(a, md) ? loss : NULL;
}

/* The same step through the captured graph (--graph): the batch (host
 * data) is written into the graph's input tensors; the first call
 * captures the step, which runs for real while it is recorded, every
 * later one replays it. The loss tensor returned is the graph's, written
 * again by the next replay. */
static wt_tensor *replayed_step(step *a, model *md, const float *xbuf, const int32_t *ybuf, int batch)
{
    replay *rp = &md->rp;
    if (!ok(a, wt_tensor_write(rp->x, xbuf, (size_t)batch * IMG * sizeof(float))) ||
        !ok(a, wt_tensor_write(rp->y, ybuf, (size_t)batch * sizeof(int32_t))))
        return NULL;
    if (rp->graph) {
        if (!ok(a, wt_graph_replay(rp->graph))) return NULL;
        md->step++;
        return rp->loss;
    }
    if (!ok(a, wt_graph_begin(md->ctx))) return NULL;
    /* The gradients are the scope's (the graph holds what its kernels
     * write); the update reads them from the parameters' records. */
    wt_tensor *grads[NPARAM] = {NULL};
    wt_tensor *loss = loss_and_grads(a, md, rp->x, rp->y, grads, NULL, NULL);
    if (loss) update(a, md);
    /* A failed op lost the capture; ending it reports that again. */
    wt_status end = wt_graph_end(md->ctx, &rp->graph);
    if (a->st != WT_OK || !ok(a, end)) return NULL;
    /* The loss outlives the step's scope: every replay writes it. */
    if (!ok(a, wt_scope_keep(a->scope, loss))) return NULL;
    rp->loss = loss;
    return loss;
}

/* The graph's input tensors for batches of n (--graph). */
static int replay_init(model *md, int n)
{
    int64_t xs[4] = {n, 1, 28, 28}, ys[1] = {n};
    md->rp.on = true;
    if (wt_tensor_zeros(md->ctx, WT_F32, 4, xs, &md->rp.x) != WT_OK ||
        wt_tensor_zeros(md->ctx, WT_I32, 1, ys, &md->rp.y) != WT_OK) {
        fprintf(stderr, "error: %s\n", wt_last_error());
        return 0;
    }
    return 1;
}

/* The images and labels of order[start..start+n) into xbuf and ybuf. */
static void gather_batch(const dataset *d, const int *order, int start, int n, float *xbuf, int32_t *ybuf)
{
    for (int i = 0; i < n; i++) {
        int k = order ? order[start + i] : start + i;
        memcpy(xbuf + (size_t)i * IMG, d->images + (size_t)k * IMG, IMG * sizeof(float));
        ybuf[i] = d->labels[k];
    }
}

/* A batch of images [n, 1, 28, 28] and labels [n] of order[start..). */
static int make_batch(wt_context *ctx, const dataset *d, const int *order, int start, int n, float *xbuf,
                      int32_t *ybuf, wt_tensor **x, wt_tensor **y)
{
    gather_batch(d, order, start, n, xbuf, ybuf);
    int64_t xs[4] = {n, 1, 28, 28}, ys[1] = {n};
    if (wt_tensor_from_data(ctx, WT_F32, 4, xs, xbuf, x) != WT_OK ||
        wt_tensor_from_data(ctx, WT_I32, 1, ys, ybuf, y) != WT_OK) {
        fprintf(stderr, "error: %s\n", wt_last_error());
        return 0;
    }
    return 1;
}

/* Accuracy over the first `limit` examples of d. */
static double evaluate(model *md, const dataset *d, int limit)
{
    int n = limit < d->n ? limit : d->n, correct = 0;
    const int chunk = 1000;
    float *xbuf = malloc((size_t)chunk * IMG * sizeof(float));
    int32_t *ybuf = malloc(chunk * sizeof(int32_t)), *pred = malloc(chunk * sizeof(int32_t));
    for (int s = 0; s < n; s += chunk) {
        int b = n - s < chunk ? n - s : chunk;
        step a;
        wt_tensor *x = NULL, *y = NULL;
        if (!step_begin(&a, md->ctx)) break;
        if (!make_batch(md->ctx, d, NULL, s, b, xbuf, ybuf, &x, &y)) {
            step_end(&a);
            break;
        }
        /* Inference: nothing to record. */
        wt_tensor *logits = NULL;
        if (ok(&a, wt_no_grad_begin(md->ctx))) {
            logits = forward(&a, md, x);
            wt_no_grad_end(md->ctx);
        }
        int axis = 1;
        wt_tensor *am = OP(&a, wt_argmax, logits, 1, &axis, false);
        if (am && wt_tensor_read(am, pred, (size_t)b * sizeof(int32_t)) == WT_OK)
            for (int i = 0; i < b; i++) correct += pred[i] == ybuf[i];
        step_end(&a);
    }
    free(xbuf);
    free(ybuf);
    free(pred);
    return n ? (double)correct / n : 0.0;
}

/* A shuffled order of 0..n-1 from the library's generator: sort indices
 * by wt_rand's values (bit-identical on every backend). */
typedef struct keyed { float key; int idx; } keyed;
static int by_key(const void *a, const void *b)
{
    const keyed *x = a, *y = b;
    return x->key < y->key ? -1 : x->key > y->key ? 1 : x->idx - y->idx;
}

static int shuffle(wt_context *ctx, int n, uint64_t seed, int *order)
{
    int64_t s[1] = {n};
    wt_tensor *r = NULL;
    float *v = malloc((size_t)n * sizeof(float));
    keyed *k = malloc((size_t)n * sizeof(keyed));
    int ok = wt_tensor_rand(ctx, WT_F32, 1, s, seed, &r) == WT_OK && wt_tensor_read(r, v, (size_t)n * sizeof(float)) == WT_OK;
    if (ok) {
        for (int i = 0; i < n; i++) k[i] = (keyed){v[i], i};
        qsort(k, (size_t)n, sizeof *k, by_key);
        for (int i = 0; i < n; i++) order[i] = k[i].idx;
    }
    wt_tensor_release(r);
    free(v);
    free(k);
    return ok;
}

/* CPU time of the calling thread, seconds: the host's own cost of a call,
 * apart from the device and from other processes. */
static double thread_cpu(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    const char *backend = "auto", *data = getenv("WT_FASHION_MNIST_DIR"), *compare = NULL;
    int epochs = 5, batch = 64, train_limit = 0, steps = 0, eval_limit = -1, synthetic = 0;
    int fail_step = 0, fail_rank = 1;
    bool use_dist = false, print_loss = false, check_sync = false, graph = false, exact = false, gpu_time = false;
    const char *optimizer = "adamw";
    double lr = 1e-3, max_loss = 0, dist_timeout = 0;
    const char *dist_pack = NULL, *dist_overlap = "on";
    bool dist_f16 = false;
    uint64_t seed = 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--dist") == 0) { use_dist = true; continue; }
        if (strcmp(a, "--dist-f16") == 0) { dist_f16 = true; continue; }
        if (strcmp(a, "--print-loss") == 0) { print_loss = true; continue; }
        if (strcmp(a, "--check-sync") == 0) { check_sync = true; continue; }
        if (strcmp(a, "--graph") == 0) { graph = true; continue; }
        if (strcmp(a, "--gpu-time") == 0) { gpu_time = true; continue; }
        if (strcmp(a, "--exact") == 0) { exact = true; continue; }
        if (!v) { fprintf(stderr, "option %s needs a value\n", a); return 2; }
        if (strcmp(a, "--backend") == 0) backend = v;
        else if (strcmp(a, "--epochs") == 0) epochs = atoi(v);
        else if (strcmp(a, "--batch") == 0) batch = atoi(v);
        else if (strcmp(a, "--lr") == 0) lr = atof(v);
        else if (strcmp(a, "--seed") == 0) seed = strtoull(v, NULL, 10);
        else if (strcmp(a, "--data") == 0) data = v;
        else if (strcmp(a, "--train-limit") == 0) train_limit = atoi(v);
        else if (strcmp(a, "--steps") == 0) steps = atoi(v);
        else if (strcmp(a, "--max-loss") == 0) max_loss = atof(v);
        else if (strcmp(a, "--compare") == 0) compare = v;
        else if (strcmp(a, "--eval-limit") == 0) eval_limit = atoi(v);
        else if (strcmp(a, "--synthetic") == 0) synthetic = atoi(v);
        else if (strcmp(a, "--fail-step") == 0) fail_step = atoi(v);
        else if (strcmp(a, "--fail-rank") == 0) fail_rank = atoi(v);
        else if (strcmp(a, "--dist-timeout") == 0) dist_timeout = atof(v);
        else if (strcmp(a, "--dist-pack") == 0) dist_pack = v;
        else if (strcmp(a, "--optimizer") == 0) optimizer = v;
        else if (strcmp(a, "--dist-overlap") == 0) dist_overlap = v;
        else { fprintf(stderr, "unknown option %s (see the comment at the top of the source)\n", a); return 2; }
        i++;
    }
    if (!data) data = "/usr/share/datasets/fashion-mnist";
    if (batch <= 0 || epochs <= 0) { fprintf(stderr, "batch and epochs must be positive\n"); return 2; }
    if (use_dist && compare) { fprintf(stderr, "--dist and --compare do not go together\n"); return 2; }
    if (use_dist && graph) { fprintf(stderr, "--dist and --graph do not go together\n"); return 2; }
    if (strcmp(optimizer, "adamw") != 0 && strcmp(optimizer, "sgd") != 0) {
        fprintf(stderr, "--optimizer takes adamw or sgd\n");
        return 2;
    }
    dist_group grp;
    if (strcmp(dist_overlap, "on") != 0 && strcmp(dist_overlap, "off") != 0) {
        fprintf(stderr, "error: --dist-overlap is on or off\n");
        return 2;
    }
    if (!dist_start(use_dist, dist_timeout, dist_pack, dist_f16, &grp)) return 1;
    grp.overlap = strcmp(dist_overlap, "on") == 0;
    /* Only rank 0 speaks (errors excepted). */
    if (grp.rank != 0 && !freopen("/dev/null", "w", stdout)) { dist_stop(&grp); return 1; }
    dataset train = {0}, test = {0};
    if (synthetic > 0 ? !synthetic_split(synthetic, seed, &train) || !synthetic_split(1000, seed + 1, &test)
                      : !load_split(data, "train", &train) || !load_split(data, "t10k", &test)) {
        dist_stop(&grp);
        fprintf(stderr,
                "Fashion-MNIST not found in %s.\n"
                "Install Debian's package (apt-get install dataset-fashion-mnist), or point --data or\n"
                "$WT_FASHION_MNIST_DIR at a folder with train-images-idx3-ubyte.gz, train-labels-idx1-ubyte.gz,\n"
                "t10k-images-idx3-ubyte.gz and t10k-labels-idx1-ubyte.gz.\n",
                data);
        return 2;
    }
    int ntrain = train_limit > 0 && train_limit < train.n ? train_limit : train.n;

    /* One model, or two in lockstep for --compare. */
    char names[2][32] = {{0}};
    bool replayed[2] = {graph, graph};
    int nmodels = 1;
    if (compare) {
        const char *comma = strchr(compare, ',');
        if (!comma) { fprintf(stderr, "--compare takes two backends: cpu,vulkan\n"); return 2; }
        snprintf(names[0], sizeof names[0], "%.*s", (int)(comma - compare), compare);
        snprintf(names[1], sizeof names[1], "%s", comma + 1);
        nmodels = 2;
        /* "cpu:graph": that model replays a captured step. */
        for (int k = 0; k < 2; k++) {
            char *colon = strchr(names[k], ':');
            if (colon && strcmp(colon, ":graph") == 0) {
                *colon = 0;
                replayed[k] = true;
            } else if (colon) {
                fprintf(stderr, "--compare: unknown suffix %s (only :graph)\n", colon);
                return 2;
            }
        }
    } else {
        snprintf(names[0], sizeof names[0], "%s", backend);
    }
    wt_context *ctx[2] = {0};
    model md[2];
    for (int k = 0; k < nmodels; k++)
        if (!make_context_on(names[k], grp.local_rank, &ctx[k]) ||
            !model_init(&md[k], ctx[k], seed, (float)lr, strcmp(optimizer, "sgd") == 0) ||
            (replayed[k] && !replay_init(&md[k], batch))) {
            dist_stop(&grp);
            return 1;
        }
    /* Every rank starts from rank 0's parameters. */
    if (dist_broadcast(&grp, NPARAM, md[0].p) != WT_OK || dist_sync_begin(&grp, ctx[0], NPARAM, md[0].p) != WT_OK) {
        fprintf(stderr, "error: broadcasting the parameters: %s\n", wt_last_error());
        dist_stop(&grp);
        return 1;
    }
    const int global_batch = batch * grp.size;

    int *order = malloc((size_t)ntrain * sizeof(int));
    float *xbuf = malloc((size_t)batch * IMG * sizeof(float));
    int32_t *ybuf = malloc((size_t)batch * sizeof(int32_t));
    double recent[50] = {0};
    int done_steps = 0, status = 0, nrecent = 0;
    double worst_rel = 0, t_steady = 0, host_cpu = 0;
    bool timing_gpu = false;
    for (int epoch = 0; epoch < epochs && status == 0; epoch++) {
        if (!shuffle(ctx[0], ntrain, seed * 7919 + (uint64_t)epoch, order)) { status = 1; break; }
        double t0 = now(), loss_sum = 0;
        int nb = 0;
        wt_tensor *acc[2] = {NULL, NULL};
        for (int s = 0; s + global_batch <= ntrain && status == 0; s += global_batch) {
            float lv[2] = {0, 0};
            double cpu0 = thread_cpu();
            for (int k = 0; k < nmodels; k++) {
                step a;
                wt_tensor *x = NULL, *y = NULL;
                if (!step_begin(&a, ctx[k])) { status = 1; break; }
                bool fail_here = fail_step > 0 && done_steps + 1 == fail_step && grp.rank == fail_rank;
                wt_tensor *loss = NULL;
                if (md[k].rp.on) {
                    gather_batch(&train, order, s, batch, xbuf, ybuf);
                    loss = replayed_step(&a, &md[k], xbuf, ybuf, batch);
                } else if (make_batch(ctx[k], &train, order, s + grp.rank * batch, batch, xbuf, ybuf, &x, &y)) {
                    loss = train_step(&a, &md[k], x, y, &grp, fail_here);
                }
                if (!loss) { status = 1; step_end(&a); break; }
                if (check_sync && !dist_identical(&grp, NPARAM, md[k].p)) status = 1;
                if (nmodels == 2 || steps > 0 || print_loss) {
                    /* Lockstep comparison and CI runs read every loss. */
                    if (wt_tensor_read(loss, &lv[k], sizeof lv[k]) != WT_OK) status = 1;
                } else {
                    /* Otherwise losses add up on the device, read once an
                     * epoch: the sum is kept out of the step's scope (a
                     * copy of the first loss, which a replay overwrites). */
                    wt_tensor *sum = NULL;
                    if ((acc[k] ? wt_add(acc[k], loss, &sum) : wt_mul_scalar(loss, 1.0, &sum)) == WT_OK &&
                        wt_scope_keep(a.scope, sum) == WT_OK) {
                        wt_tensor_release(acc[k]);
                        acc[k] = sum;
                    } else {
                        status = 1;
                    }
                }
                step_end(&a);
            }
            if (done_steps >= 10) host_cpu += thread_cpu() - cpu0;
            if (status) break;
            if (nmodels == 2) {
                double rel = fabs(lv[0] - lv[1]) / fmax(fabs(lv[0]), 1e-6);
                if (rel > worst_rel) worst_rel = rel;
                if (exact ? memcmp(&lv[0], &lv[1], sizeof lv[0]) != 0 : rel > 1e-3) {
                    fprintf(stderr, "step %d: loss %s %.9g vs %s %.9g\n", done_steps, names[0], lv[0], names[1], lv[1]);
                    status = 1;
                }
            }
            if (print_loss) printf("step %d loss %.9g\n", done_steps + 1, lv[0]);
            if (nmodels == 2 || steps > 0 || print_loss) {
                loss_sum += lv[0];
                recent[nrecent++ % 50] = lv[0];
            }
            nb++;
            if (++done_steps == 10) {
                /* Steady state: after the shaders are compiled and the
                 * memory pools filled, timed from an idle device (the
                 * first ten steps' work, queued ahead, is not counted). */
                for (int k = 0; k < nmodels; k++)
                    if (wt_context_sync(ctx[k]) != WT_OK) status = 1;
                t_steady = now();
                dist_reset_stats(&grp);
                if (gpu_time) {
                    timing_gpu = wt_context_timer_begin(ctx[0]) == WT_OK;
                    if (!timing_gpu) printf("--gpu-time: %s\n", wt_last_error());
                }
            }
            if (done_steps == steps) break;
        }
        if (status) break;
        if (acc[0]) {
            float total = 0;
            if (wt_tensor_read(acc[0], &total, sizeof total) != WT_OK) status = 1;
            loss_sum = total;
        }
        for (int k = 0; k < 2; k++) wt_tensor_release(acc[k]);
        double secs = now() - t0;
        printf("epoch %d: loss %.4f, %.0f images/s (%.1f s)", epoch + 1, nb ? loss_sum / nb : 0.0,
               nb * global_batch / secs, secs);
        if (eval_limit != 0 && grp.rank == 0) {
            int lim_train = eval_limit < 0 ? 10000 : eval_limit, lim_test = eval_limit < 0 ? test.n : eval_limit;
            double train_acc = evaluate(&md[0], &train, lim_train), test_acc = evaluate(&md[0], &test, lim_test);
            printf(", train accuracy %.2f%% (first %d), test accuracy %.2f%% (%d images)", 100 * train_acc,
                   lim_train < train.n ? lim_train : train.n, 100 * test_acc, lim_test < test.n ? lim_test : test.n);
        }
        printf("\n");
        fflush(stdout);
        if (steps > 0 && done_steps == steps) break;
    }
    if (status == 0 && done_steps > 10) {
        double secs = now() - t_steady;
        printf("steps 11-%d: %.0f images/s, %.3f ms a step, %s (%d ranks, %d images a step)\n", done_steps,
               (done_steps - 10) * (double)global_batch / secs, 1e3 * secs / (done_steps - 10),
               replayed[0] ? "replayed step" : "eager", grp.size, global_batch);
        printf("steps 11-%d: host %.3f ms a step (the calling thread's CPU time in the steps' calls)", done_steps,
               1e3 * host_cpu / (done_steps - 10));
        double gpu_secs = 0;
        if (timing_gpu && wt_context_timer_end(ctx[0], &gpu_secs) == WT_OK)
            printf(", GPU busy %.3f ms a step", 1e3 * gpu_secs / (done_steps - 10));
        else if (timing_gpu)
            printf(", GPU time: %s", wt_last_error());
        printf("\n");
        dist_report(&grp, done_steps - 10, secs);
    }
    if (status == 0 && check_sync && dist_on(&grp))
        printf("parameters bit-identical on all %d ranks after each of the %d steps\n", grp.size, done_steps);
    if (status == 0 && nmodels == 2)
        printf("%d steps in lockstep: largest relative loss difference %.2e (%s%s vs %s%s)%s\n", done_steps,
               worst_rel, names[0], replayed[0] ? " replayed" : "", names[1], replayed[1] ? " replayed" : "",
               exact ? ", every loss bit-identical" : "");
    if (status == 0 && max_loss > 0) {
        int k = nrecent < 50 ? nrecent : 50;
        double m = 0;
        for (int i = 0; i < k; i++) m += recent[i];
        m = k ? m / k : INFINITY;
        printf("mean loss of the last %d steps: %.4f (must be below %.4f)\n", k, m, max_loss);
        if (!(m < max_loss)) status = 1;
    }
    free(order);
    free(xbuf);
    free(ybuf);
    for (int k = 0; k < nmodels; k++) {
        model_free(&md[k]);
        wt_context_destroy(ctx[k]);
    }
    free(train.images);
    free(train.labels);
    free(test.images);
    free(test.labels);
    dist_stop(&grp);
    return status;
}
