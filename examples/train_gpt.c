/* Trains a small character-level GPT with webtensor's autograd, on the GPU
 * or the CPU backend, and samples text from it:
 *
 *   token + position embeddings
 *   N pre-norm blocks: x += proj(attention(norm(x)))   (causal, fused)
 *                      x += fc2(gelu(fc1(norm(x))))
 *   final norm, output head tied to the token embeddings, cross-entropy
 *
 * The forward pass is written with the ordinary ops; wt_backward gives the
 * parameters' gradients and an AdamW optimizer (wt_optimizer) updates them
 * in place, with a linear warm-up and a cosine decay of the learning rate
 * (its schedule). Every step runs in a scope, so its temporaries (and the
 * tape that refers to them) are released together at its end: the memory
 * held stays constant from step to step. The progress lines show it, and
 * the run fails if the live tensors, live bytes or pooled bytes at the
 * last progress line differ from those at the first.
 *
 *   train_gpt [--backend auto|cpu|webgpu|vulkan|gles] [--data PATH]
 *             [--layers 6] [--dim 384] [--heads 6] [--context 256]
 *             [--batch 64] [--steps 5000] [--lr 1e-3] [--min-lr LR/10]
 *             [--warmup 100] [--weight-decay 0.1] [--clip 1.0] [--clip-mode in-step|separate] [--norm layer|rms]
 *             [--qkv fused|separate]
 *             [--seed 1] [--print-every 100] [--eval-every 500]
 *             [--eval-batches 20] [--sample 400] [--temperature 0.8]
 *             [--max-loss X] [--print-loss] [--save-init FILE] [--graph]
 *             [--dist [--check-sync] [--dist-timeout S] [--dist-pack auto|never|always] [--dist-overlap on|off] [--dist-f16]
 *                     [--fail-step K [--fail-rank R]]]
 *
 * The corpus is English text: the fortune cookie files of Debian's
 * `fortunes` package (/usr/share/games/fortunes, every data file but the
 * .dat indexes), or --data FILE / --data DIR. The vocabulary is the bytes
 * the corpus uses; the last 10 % of the text is held out for validation.
 * A progress line every --print-every steps gives the mean training loss
 * since the last one, tokens/s and the memory held; the validation loss
 * (--eval-batches batches of the held-out text) follows every --eval-every
 * steps (0: at the end only). --clip clips the gradients by their global
 * norm (0: off): inside the AdamW step (wt_optimizer_step_clipped), or with
 * --clip-mode separate first on the gradients themselves
 * (wt_optimizer_clip_grad_norm, then wt_optimizer_step). After training, --sample characters are drawn from the
 * model (--temperature 0: always the most likely one). --qkv separate
 * computes each block's q, k and v by three products instead of one on
 * their weights joined (the same model and parameters either way).
 * --max-loss makes the run fail (exit 1) unless the mean training loss of
 * the last progress interval is below X; a validation loss that is not
 * finite always fails it. --print-loss prints every step's loss, "step K
 * loss X" (9 significant digits). --save-init FILE writes the initial
 * parameters (before the first step) as safetensors, named as the PyTorch
 * peer's state_dict (bench/gpt_torch.py --init FILE trains from them):
 * tok.weight [vocab, dim], pos [context, dim], blocks.L.{ln1,ln2}.{weight,
 * bias}, blocks.L.{q,k,v,o,fc1,fc2}.{weight [out, in], bias}, ln.{weight,
 * bias}; the model's sizes go into the file's metadata.
 *
 * --graph captures the whole first step - forward pass, backward pass,
 * gradient clipping and the AdamW step - as a graph (wt_graph_begin /
 * wt_graph_end) and replays it for every later batch, the batch written
 * into the graph's token and target tensors first. The optimizer keeps
 * its step number, scheduled learning rate and bias corrections on the
 * device and advances them in the step, so each replay is the next step.
 * The losses are those of the eager steps, bit for bit.
 *
 * --dist trains data-parallel under mpirun -np N (webtensor_dist.h):
 * parameters broadcast from rank 0; each step draws the global batch of
 * N * --batch windows (the same draws on every rank) and rank r trains on
 * the r-th --batch of them; gradients and loss are averaged over the ranks
 * before clipping and AdamW, so N ranks at --batch B follow one process at
 * --batch N*B. tokens/s counts all ranks. With one GPU per rank, rank r
 * on a host takes the host's r-th adapter. Rank 0 prints; it alone
 * validates and samples. --check-sync compares the parameters across the
 * ranks after every step and fails unless they are bit-identical.
 * --fail-step K makes rank --fail-rank (default 1)
 * fail at step K instead of reducing (every rank then stops with its
 * message); --dist-timeout: seconds a rank waits for the others (default
 * 300); --dist-pack: whether a bucket of gradients is concatenated on the
 * GPU before its read-back (wt_dist_pack; default auto). --dist-overlap
 * on|off: whether the reduction starts during the backward pass, bucket by
 * bucket as the gradients become final (wt_dist_grad_sync; default on),
 * or after it (wt_dist_allreduce); the results are the same bits.
 * --dist-f16: the gradients travel and are reduced as f16 (half the
 * bytes; wt_dist_options.reduce_f16 states the tolerance).
 */
#define _POSIX_C_SOURCE 200809L
#include <webtensor.h>
#include <webtensor_io.h>

#include "example_context.h"
#include "example_dist.h"

#include <dirent.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#define DEFAULT_DATA "/usr/share/games/fortunes"

/* ---------------------------------------------------------------- corpus */

typedef struct corpus {
    int32_t *ids;  /* the text as vocabulary indices */
    size_t n;      /* characters */
    size_t ntrain; /* the first 90 %; the rest is validation */
    int vocab;
    unsigned char byte_of[256]; /* index -> byte */
} corpus;

/* Appends the file at path to *buf; 1 on success. */
static int append_file(const char *path, unsigned char **buf, size_t *n, size_t *cap)
{
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    int ok = 1;
    for (;;) {
        if (*cap - *n < 65536) {
            size_t c = *cap ? *cap * 2 : 1 << 20;
            unsigned char *b = realloc(*buf, c);
            if (!b) { ok = 0; break; }
            *buf = b;
            *cap = c;
        }
        size_t got = fread(*buf + *n, 1, *cap - *n, f);
        *n += got;
        if (got == 0) break;
    }
    fclose(f);
    return ok;
}

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Reads a file, or every regular file of a directory in name order except
 * the strfile indexes (*.dat) and symbolic links (the .u8 aliases). */
static int load_text(const char *path, unsigned char **text, size_t *n)
{
    struct stat sb;
    size_t cap = 0;
    *text = NULL;
    *n = 0;
    if (stat(path, &sb) != 0) return 0;
    if (!S_ISDIR(sb.st_mode)) return append_file(path, text, n, &cap);
    DIR *d = opendir(path);
    if (!d) return 0;
    char **names = NULL;
    size_t count = 0, ncap = 0;
    int ok = 1;
    for (struct dirent *e; ok && (e = readdir(d)) != NULL;) {
        size_t len = strlen(e->d_name);
        if (e->d_name[0] == '.' || (len > 4 && strcmp(e->d_name + len - 4, ".dat") == 0)) continue;
        char full[4096];
        struct stat fs;
        snprintf(full, sizeof full, "%s/%s", path, e->d_name);
        if (lstat(full, &fs) != 0 || !S_ISREG(fs.st_mode)) continue;
        if (count == ncap) {
            char **nn = realloc(names, (ncap = ncap ? ncap * 2 : 64) * sizeof *names);
            if (!nn) { ok = 0; break; }
            names = nn;
        }
        if (!(names[count] = strdup(full))) ok = 0;
        else count++;
    }
    closedir(d);
    if (count) qsort(names, count, sizeof *names, by_name);
    for (size_t i = 0; i < count; i++) {
        if (ok) ok = append_file(names[i], text, n, &cap);
        free(names[i]);
    }
    free(names);
    return ok && *n > 0;
}

static int corpus_load(const char *path, corpus *c)
{
    unsigned char *text = NULL;
    size_t n = 0;
    memset(c, 0, sizeof *c);
    if (!load_text(path, &text, &n)) {
        free(text);
        return 0;
    }
    int index_of[256];
    bool seen[256] = {false};
    for (size_t i = 0; i < n; i++) seen[text[i]] = true;
    for (int b = 0; b < 256; b++)
        if (seen[b]) {
            c->byte_of[c->vocab] = (unsigned char)b;
            index_of[b] = c->vocab++;
        }
    c->ids = malloc(n * sizeof *c->ids);
    if (!c->ids) {
        free(text);
        return 0;
    }
    for (size_t i = 0; i < n; i++) c->ids[i] = index_of[text[i]];
    free(text);
    c->n = n;
    c->ntrain = n - n / 10;
    return 1;
}

/* splitmix64: the batches' positions, the same on every backend. */
static uint64_t next_random(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Inputs [B, T] and next-character targets [B * T] from random windows of
 * ids[lo, hi). */
static void make_batch(const corpus *c, size_t lo, size_t hi, int B, int T, uint64_t *rng, int32_t *x, int32_t *y)
{
    size_t span = hi - lo - (size_t)T - 1;
    for (int b = 0; b < B; b++) {
        size_t off = lo + next_random(rng) % span;
        memcpy(x + (size_t)b * T, c->ids + off, (size_t)T * sizeof *x);
        memcpy(y + (size_t)b * T, c->ids + off + 1, (size_t)T * sizeof *y);
    }
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

typedef struct config {
    int layers, dim, heads, context, vocab;
    bool rms; /* rms_norm instead of layer_norm */
    bool qkv_separate; /* q, k, v by three products instead of one */
} config;

/* A parameter; decay: weight decay applies (matrices and embeddings, not
 * biases or norm weights, as GPT-2's training does). */
typedef struct param {
    wt_tensor *t;
    bool decay;
    char name[48]; /* the PyTorch peer's state_dict name */
} param;

typedef struct block {
    wt_tensor *ln1_w, *ln1_b, *wq, *bq, *wk, *bk, *wv, *bv, *wo, *bo;
    wt_tensor *ln2_w, *ln2_b, *w1, *b1, *w2, *b2;
} block;

typedef struct model {
    wt_context *ctx;
    config cfg;
    wt_tensor *tok, *pos, *lnf_w, *lnf_b;
    block *blocks;
    param *params;
    int nparams;
    uint64_t seed;
    wt_optimizer *opt; /* AdamW over every parameter, its moments */
    wt_lr_schedule_options sched; /* opt's schedule (replays do not move opt's host count) */
} model;

enum init { INIT_NORMAL, INIT_ZEROS, INIT_ONES };

/* A new parameter (requires grad) of the given shape: normal(0, std),
 * zeros or ones. NULL with a message on failure. */
static wt_tensor *new_param(model *md, const char *name, int ndim, int64_t d0, int64_t d1, enum init init,
                            double std, bool decay)
{
    int64_t shape[2] = {d0, d1};
    wt_tensor *r = NULL, *t = NULL;
    param *p = &md->params[md->nparams];
    snprintf(p->name, sizeof p->name, "%s", name);
    wt_status st;
    if (init == INIT_NORMAL) {
        st = wt_randn(md->ctx, WT_F32, ndim, shape, md->seed * 100003 + (uint64_t)md->nparams, &r);
        if (st == WT_OK) st = wt_mul_scalar(r, std, &t);
        wt_tensor_release(r);
    } else {
        st = wt_tensor_full(md->ctx, WT_F32, ndim, shape, init == INIT_ONES ? 1.0 : 0.0, &t);
    }
    if (st == WT_OK) st = wt_tensor_set_requires_grad(t, true);
    p->t = t;
    p->decay = decay;
    md->nparams++; /* model_free releases what was made, even on failure */
    if (st != WT_OK) {
        fprintf(stderr, "error: initialising the model: %s\n", wt_last_error());
        return NULL;
    }
    return t;
}

static void model_free(model *md)
{
    wt_optimizer_release(md->opt);
    for (int i = 0; i < md->nparams; i++) wt_tensor_release(md->params[i].t);
    free(md->params);
    free(md->blocks);
}

/* GPT-2's initialisation: weights normal(0, 0.02), the projections into
 * the residual stream scaled by 1/sqrt(2 layers), biases 0, norms 1. */
static int model_init(model *md, wt_context *ctx, const config *cfg, uint64_t seed)
{
    memset(md, 0, sizeof *md);
    md->ctx = ctx;
    md->cfg = *cfg;
    md->seed = seed;
    int64_t D = cfg->dim, L = cfg->layers;
    md->blocks = calloc((size_t)L, sizeof *md->blocks);
    md->params = calloc((size_t)(4 + 16 * L), sizeof *md->params);
    if (!md->blocks || !md->params) return 0;
    double std = 0.02, res_std = 0.02 / sqrt(2.0 * (double)L);
    bool rms = cfg->rms;
    char nm[48];
#define P(dst, ...) if (!((dst) = new_param(md, nm, __VA_ARGS__))) return 0
#define NAMED(...) snprintf(nm, sizeof nm, __VA_ARGS__)
    NAMED("tok.weight");
    P(md->tok, 2, cfg->vocab, D, INIT_NORMAL, std, true);
    NAMED("pos");
    P(md->pos, 2, cfg->context, D, INIT_NORMAL, std, true);
    for (int64_t l = 0; l < L; l++) {
        block *b = &md->blocks[l];
        long long li = (long long)l;
        NAMED("blocks.%lld.ln1.weight", li);
        P(b->ln1_w, 1, D, 0, INIT_ONES, 0, false);
        NAMED("blocks.%lld.ln1.bias", li);
        if (!rms) P(b->ln1_b, 1, D, 0, INIT_ZEROS, 0, false);
        NAMED("blocks.%lld.q.weight", li);
        P(b->wq, 2, D, D, INIT_NORMAL, std, true);
        NAMED("blocks.%lld.q.bias", li);
        P(b->bq, 1, D, 0, INIT_ZEROS, 0, false);
        NAMED("blocks.%lld.k.weight", li);
        P(b->wk, 2, D, D, INIT_NORMAL, std, true);
        NAMED("blocks.%lld.k.bias", li);
        P(b->bk, 1, D, 0, INIT_ZEROS, 0, false);
        NAMED("blocks.%lld.v.weight", li);
        P(b->wv, 2, D, D, INIT_NORMAL, std, true);
        NAMED("blocks.%lld.v.bias", li);
        P(b->bv, 1, D, 0, INIT_ZEROS, 0, false);
        NAMED("blocks.%lld.o.weight", li);
        P(b->wo, 2, D, D, INIT_NORMAL, res_std, true);
        NAMED("blocks.%lld.o.bias", li);
        P(b->bo, 1, D, 0, INIT_ZEROS, 0, false);
        NAMED("blocks.%lld.ln2.weight", li);
        P(b->ln2_w, 1, D, 0, INIT_ONES, 0, false);
        NAMED("blocks.%lld.ln2.bias", li);
        if (!rms) P(b->ln2_b, 1, D, 0, INIT_ZEROS, 0, false);
        NAMED("blocks.%lld.fc1.weight", li);
        P(b->w1, 2, 4 * D, D, INIT_NORMAL, std, true);
        NAMED("blocks.%lld.fc1.bias", li);
        P(b->b1, 1, 4 * D, 0, INIT_ZEROS, 0, false);
        NAMED("blocks.%lld.fc2.weight", li);
        P(b->w2, 2, D, 4 * D, INIT_NORMAL, res_std, true);
        NAMED("blocks.%lld.fc2.bias", li);
        P(b->b2, 1, D, 0, INIT_ZEROS, 0, false);
    }
    NAMED("ln.weight");
    P(md->lnf_w, 1, D, 0, INIT_ONES, 0, false);
    NAMED("ln.bias");
    if (!rms) P(md->lnf_b, 1, D, 0, INIT_ZEROS, 0, false);
#undef NAMED
#undef P
    return 1;
}

static int64_t model_size(const model *md)
{
    int64_t n = 0;
    for (int i = 0; i < md->nparams; i++) n += wt_tensor_numel(md->params[i].t);
    return n;
}

/* --save-init: every parameter under its PyTorch name, the sizes as
 * metadata. */
static int save_params(const model *md, const char *path)
{
    const char **names = malloc((size_t)md->nparams * sizeof *names);
    wt_tensor **ts = malloc((size_t)md->nparams * sizeof *ts);
    char vals[5][24];
    snprintf(vals[0], sizeof vals[0], "%d", md->cfg.layers);
    snprintf(vals[1], sizeof vals[1], "%d", md->cfg.dim);
    snprintf(vals[2], sizeof vals[2], "%d", md->cfg.heads);
    snprintf(vals[3], sizeof vals[3], "%d", md->cfg.context);
    snprintf(vals[4], sizeof vals[4], "%d", md->cfg.vocab);
    const char *keys[6] = {"layers", "dim", "heads", "context", "vocab", "norm"};
    const char *values[6] = {vals[0], vals[1], vals[2], vals[3], vals[4], md->cfg.rms ? "rms" : "layer"};
    wt_status st = WT_ERR_OUT_OF_MEMORY;
    if (names && ts) {
        for (int i = 0; i < md->nparams; i++) names[i] = md->params[i].name, ts[i] = md->params[i].t;
        st = wt_safetensors_save(path, md->nparams, names, ts, 6, keys, values);
    }
    free(names);
    free(ts);
    if (st != WT_OK) fprintf(stderr, "error: writing the initial parameters to %s: %s\n", path, wt_last_error());
    else printf("initial parameters written to %s (%d tensors)\n", path, md->nparams);
    return st == WT_OK;
}

static wt_tensor *norm(step *a, const model *md, wt_tensor *x, wt_tensor *w, wt_tensor *b)
{
    if (md->cfg.rms) return OP(a, wt_rms_norm, x, 1, w, 1e-5f);
    return OP(a, wt_layer_norm, x, 1, w, b, 1e-5f);
}

/* [B, T, D] -> [B, H, T, D / H] (a view). */
static wt_tensor *split_heads(step *a, wt_tensor *x, int64_t B, int64_t T, int64_t H, int64_t hd)
{
    int64_t s[4] = {B, T, H, hd};
    wt_tensor *r = OP(a, wt_reshape, x, 4, s);
    return OP(a, wt_transpose, r, 1, 2);
}

/* q, k, v [B, H, T, hd] of h [B, T, D]. By default one product against
 * the three weights joined ([3 D, D], a small copy each step; their
 * gradients come back as slices of the joined one's) and the heads views
 * of its rows [B, T, 3 D], which the attention reads in place and whose
 * gradients its backward writes into one [B, T, 3 D] tensor; with
 * --qkv separate three products. The parameters are the same either way. */
static void qkv_heads(step *a, const model *md, const block *b, wt_tensor *h, int64_t B, int64_t T, int64_t H,
                      int64_t hd, wt_tensor **q, wt_tensor **k, wt_tensor **v)
{
    *q = *k = *v = NULL;
    if (md->cfg.qkv_separate) {
        *q = split_heads(a, OP(a, wt_linear, h, b->wq, b->bq), B, T, H, hd);
        *k = split_heads(a, OP(a, wt_linear, h, b->wk, b->bk), B, T, H, hd);
        *v = split_heads(a, OP(a, wt_linear, h, b->wv, b->bv), B, T, H, hd);
        return;
    }
    wt_tensor *ws[3] = {b->wq, b->wk, b->wv}, *bs[3] = {b->bq, b->bk, b->bv};
    wt_tensor *w = OP(a, wt_concat, 3, ws, 0);
    wt_tensor *bias = OP(a, wt_concat, 3, bs, 0);
    wt_tensor *y = OP(a, wt_linear, h, w, bias);
    int64_t s[4] = {B, T, 3 * H, hd};
    wt_tensor *heads = OP(a, wt_transpose, OP(a, wt_reshape, y, 4, s), 1, 2); /* [B, 3 H, T, hd] */
    wt_tensor *parts[3] = {0};
    if (a->st == WT_OK && ok(a, wt_split(heads, 1, 3, (const int64_t[]){H, H, H}, parts)))
        *q = parts[0], *k = parts[1], *v = parts[2];
}

/* residual + linear(input_gelu ? gelu(x) : x, w, b) as one op
 * (wt_linear_fused): on the GPU the residual is added in the product's
 * own stores, not by a pass of its own. */
static wt_tensor *residual_linear(step *a, wt_tensor *x, wt_tensor *w, wt_tensor *b, wt_tensor *residual,
                                  bool input_gelu)
{
    wt_linear_fused_options o;
    wt_linear_fused_options_init(&o);
    o.residual = residual;
    o.input_gelu = input_gelu;
    return OP(a, wt_linear_fused, x, w, b, &o);
}

/* Logits [B, T, vocab] of tokens [B, T]. */
static wt_tensor *forward(step *a, const model *md, wt_tensor *tokens)
{
    if (a->st != WT_OK) return NULL;
    const int64_t *ts = wt_tensor_shape(tokens);
    int64_t B = ts[0], T = ts[1], D = md->cfg.dim, H = md->cfg.heads, hd = D / H;
    wt_tensor *tok = OP(a, wt_embedding, md->tok, tokens);
    wt_tensor *pos = OP(a, wt_slice, md->pos, 0, 0, T, 1);
    wt_tensor *x = OP(a, wt_add, tok, pos);
    for (int l = 0; l < md->cfg.layers; l++) {
        const block *b = &md->blocks[l];
        wt_tensor *h = norm(a, md, x, b->ln1_w, b->ln1_b);
        wt_tensor *q, *k, *v;
        qkv_heads(a, md, b, h, B, T, H, hd, &q, &k, &v);
        wt_tensor *att = OP(a, wt_scaled_dot_product_attention, q, k, v, NULL, true, 0.0f);
        wt_tensor *merged = OP(a, wt_transpose, att, 1, 2);
        int64_t ms[3] = {B, T, D};
        wt_tensor *flat = OP(a, wt_reshape, merged, 3, ms);
        x = residual_linear(a, flat, b->wo, b->bo, x, false);
        h = norm(a, md, x, b->ln2_w, b->ln2_b);
        x = residual_linear(a, OP(a, wt_linear, h, b->w1, b->b1), b->w2, b->b2, x, true);
    }
    x = norm(a, md, x, md->lnf_w, md->lnf_b);
    return OP(a, wt_linear, x, md->tok, NULL);
}

/* Mean cross-entropy of the next-character predictions (0-d) of tokens
 * [B, T] against targets [B * T]. */
static wt_tensor *loss_on(step *a, const model *md, wt_tensor *tokens, wt_tensor *targets)
{
    const int64_t *ts = a->st == WT_OK ? wt_tensor_shape(tokens) : NULL;
    if (!ts) return NULL;
    int64_t ls[2] = {ts[0] * ts[1], md->cfg.vocab};
    wt_tensor *logits = forward(a, md, tokens);
    wt_tensor *rows = OP(a, wt_reshape, logits, 2, ls);
    return OP(a, wt_cross_entropy, rows, targets, NULL);
}

/* The same from host arrays. */
static wt_tensor *loss_of(step *a, const model *md, const int32_t *x, const int32_t *y, int B, int T)
{
    int64_t xs[2] = {B, T}, ys[1] = {(int64_t)B * T};
    wt_tensor *tokens = OP(a, wt_tensor_from_data, md->ctx, WT_I32, 2, xs, x);
    wt_tensor *targets = OP(a, wt_tensor_from_data, md->ctx, WT_I32, 1, ys, y);
    return loss_on(a, md, tokens, targets);
}

/* ------------------------------------------------------------- training */

/* AdamW over the parameters, weight decay on those that decay, the
 * learning rate warmed up linearly over `warmup` steps, then a cosine down
 * to min_lr at the last step. */
static int optimizer_init(model *md, int steps, int warmup, double lr, double min_lr, double weight_decay)
{
    wt_tensor **decay = malloc((size_t)md->nparams * sizeof *decay), **rest = malloc((size_t)md->nparams * sizeof *rest);
    int nd = 0, nr = 0;
    for (int i = 0; decay && rest && i < md->nparams; i++) {
        if (md->params[i].decay) decay[nd++] = md->params[i].t;
        else rest[nr++] = md->params[i].t;
    }
    wt_adamw_options adam;
    wt_adamw_options_init(&adam);
    adam.beta2 = 0.99; /* small batches of a small corpus: nanoGPT's choice */
    adam.weight_decay = weight_decay;
    wt_lr_schedule_options *sched = &md->sched;
    wt_lr_schedule_options_init(sched);
    sched->kind = WT_LR_COSINE;
    sched->lr = lr, sched->min_lr = min_lr, sched->warmup_steps = warmup, sched->total_steps = steps;
    wt_status st = decay && rest ? wt_optimizer_create_adamw(nd, decay, &adam, &md->opt) : WT_ERR_OUT_OF_MEMORY;
    if (st == WT_OK && nr > 0) st = wt_optimizer_add_params(md->opt, nr, rest, 0.0);
    if (st == WT_OK) st = wt_optimizer_set_schedule(md->opt, sched);
    free(decay);
    free(rest);
    if (st != WT_OK) fprintf(stderr, "error: making the optimizer: %s\n", wt_last_error());
    return st == WT_OK;
}

/* --clip-mode separate: the gradients clipped first, then the step. */
static bool g_clip_separate;

/* The AdamW step, clipped by the global norm clip (0: not) as
 * --clip-mode says. */
static wt_status clip_and_step(wt_optimizer *opt, double clip)
{
    if (clip <= 0) return wt_optimizer_step(opt);
    if (!g_clip_separate) return wt_optimizer_step_clipped(opt, clip, NULL);
    wt_status st = wt_optimizer_clip_grad_norm(opt, clip, NULL);
    return st == WT_OK ? wt_optimizer_step(opt) : st;
}

/* Backward from loss, then one AdamW step (the optimizer object) on every
 * parameter and their gradients dropped. Data-parallel: the loss (a copy
 * off the tape, replacing *loss) and every gradient are averaged over the
 * ranks in one call, before clipping. clip > 0: the gradients are first
 * clipped to that global norm, on the device (nothing is read back, so the
 * step does not wait for the GPU). */
static bool optimize(step *a, model *md, wt_tensor **loss, int64_t t, double clip, dist_group *grp, bool fail_here)
{
    /* Overlapped (dist_sync_begin): the loss's copy goes first; backward's
     * gradient-ready hooks start the gradients' buckets; finish ends it. */
    if (dist_overlapping(grp) && ok(a, wt_no_grad_begin(md->ctx))) {
        wt_tensor *mean_loss = OP(a, wt_mul_scalar, *loss, 1.0);
        wt_no_grad_end(md->ctx);
        if (a->st == WT_OK && ok(a, dist_sync_give_loss(grp, md->nparams, mean_loss)) && ok(a, wt_backward(*loss))) {
            if (fail_here) {
                char msg[96];
                snprintf(msg, sizeof msg, "failure injected at step %lld (--fail-step)", (long long)t);
                ok(a, dist_fail(grp, msg));
            } else if (ok(a, dist_sync_finish(grp))) {
                *loss = mean_loss;
            }
        }
    } else if (ok(a, wt_backward(*loss)) && dist_on(grp) && ok(a, wt_no_grad_begin(md->ctx))) {
        wt_tensor **list = malloc((size_t)(md->nparams + 1) * sizeof *list);
        if (!list) ok(a, wt_set_last_error(WT_ERR_OUT_OF_MEMORY, "out of host memory"));
        /* Handles sharing the gradients' storage (the step's scope owns
         * them): the mean is written back into the gradients themselves. */
        for (int i = 0; list && i < md->nparams && a->st == WT_OK; i++) {
            list[i] = NULL;
            ok(a, wt_tensor_grad(md->params[i].t, &list[i]));
            if (a->st == WT_OK && !list[i])
                ok(a, wt_set_last_error(WT_ERR_INVALID_ARGUMENT, "a parameter has no gradient"));
        }
        wt_tensor *mean_loss = OP(a, wt_mul_scalar, *loss, 1.0);
        if (list && a->st == WT_OK) {
            list[md->nparams] = *loss = mean_loss;
            if (fail_here) {
                char msg[96];
                snprintf(msg, sizeof msg, "failure injected at step %lld (--fail-step)", (long long)t);
                ok(a, dist_fail(grp, msg));
            } else {
                ok(a, dist_mean(grp, md->nparams + 1, list));
            }
        }
        free(list);
        wt_no_grad_end(md->ctx);
    }
    if (a->st == WT_OK) ok(a, clip_and_step(md->opt, clip));
    wt_optimizer_zero_grad(md->opt);
    return a->st == WT_OK;
}

/* --graph: the whole step (forward, backward, clipping, AdamW) captured
 * once and replayed; the tensors the batch is written into and the loss
 * each replay writes. */
typedef struct replay {
    wt_graph *graph;
    wt_tensor *tokens, *targets, *loss;
} replay;

static void replay_free(replay *rp)
{
    wt_graph_release(rp->graph);
    wt_tensor_release(rp->tokens);
    wt_tensor_release(rp->targets);
    wt_tensor_release(rp->loss);
    memset(rp, 0, sizeof *rp);
}

/* One training step through the graph (the first call captures it while
 * it runs); returns the loss tensor, the graph's. */
static wt_tensor *replayed_step(step *a, model *md, replay *rp, const int32_t *x, const int32_t *y, int B, int T,
                                double clip)
{
    size_t n = (size_t)B * T * sizeof(int32_t);
    if (!rp->tokens) {
        int64_t xs[2] = {B, T}, ys[1] = {(int64_t)B * T};
        wt_tensor *tokens = NULL, *targets = NULL;
        /* They outlive the step's scope. */
        if (!ok(a, wt_tensor_zeros(md->ctx, WT_I32, 2, xs, &tokens)) || !ok(a, wt_scope_keep(a->scope, tokens)))
            return NULL;
        rp->tokens = tokens;
        if (!ok(a, wt_tensor_zeros(md->ctx, WT_I32, 1, ys, &targets)) || !ok(a, wt_scope_keep(a->scope, targets)))
            return NULL;
        rp->targets = targets;
    }
    if (!ok(a, wt_tensor_write(rp->tokens, x, n)) || !ok(a, wt_tensor_write(rp->targets, y, n))) return NULL;
    if (rp->graph) return ok(a, wt_graph_replay(rp->graph)) ? rp->loss : NULL;
    if (!ok(a, wt_graph_begin(md->ctx))) return NULL;
    wt_tensor *loss = loss_on(a, md, rp->tokens, rp->targets);
    if (loss && ok(a, wt_backward(loss))) ok(a, clip_and_step(md->opt, clip));
    /* Dropping the gradients records nothing: every replay writes them
     * again (the graph holds them) before its AdamW step reads them. */
    wt_optimizer_zero_grad(md->opt);
    wt_status end = wt_graph_end(md->ctx, &rp->graph);
    if (a->st != WT_OK || !ok(a, end) || !ok(a, wt_scope_keep(a->scope, loss))) return NULL;
    rp->loss = loss;
    return loss;
}

/* Mean loss over n batches of the validation split, the same batches at
 * every evaluation; NAN on failure. */
static double validation_loss(model *md, const corpus *c, int n, int B, int T, int32_t *x, int32_t *y)
{
    uint64_t rng = 0x5eed;
    double total = 0;
    int done = 0;
    if (wt_no_grad_begin(md->ctx) != WT_OK) return NAN;
    for (int i = 0; i < n; i++, done++) {
        step a;
        float v = NAN;
        if (!step_begin(&a, md->ctx)) break;
        make_batch(c, c->ntrain, c->n, B, T, &rng, x, y);
        wt_tensor *loss = loss_of(&a, md, x, y, B, T);
        if (loss) ok(&a, wt_tensor_read(loss, &v, sizeof v));
        step_end(&a);
        if (a.st != WT_OK) break;
        total += v;
    }
    wt_no_grad_end(md->ctx);
    return n > 0 && done == n ? total / n : NAN;
}

/* ------------------------------------------------------------- sampling */

/* Appends n characters to the text, each drawn from the model's
 * distribution of the next character (logits / temperature; 0: the most
 * likely one) with uniform numbers from wt_tensor_rand(seed). */
static int sample(model *md, const corpus *c, int n, double temperature, uint64_t seed)
{
    int T = md->cfg.context, V = md->cfg.vocab, len = 1, status = 0;
    int32_t *ids = malloc((size_t)(n + 1) * sizeof *ids);
    float *logits = malloc((size_t)V * sizeof *logits), *u = malloc((size_t)(n ? n : 1) * sizeof *u);
    double *p = malloc((size_t)V * sizeof *p);
    wt_tensor *r = NULL;
    int64_t us[1] = {n};
    if (!ids || !logits || !u || !p || wt_tensor_rand(md->ctx, WT_F32, 1, us, seed, &r) != WT_OK ||
        wt_tensor_read(r, u, (size_t)n * sizeof *u) != WT_OK || wt_no_grad_begin(md->ctx) != WT_OK) {
        fprintf(stderr, "error: sampling: %s\n", wt_last_error());
        free(ids), free(logits), free(u), free(p);
        wt_tensor_release(r);
        return 1;
    }
    wt_tensor_release(r);
    /* The text starts after a newline (or the first character). */
    ids[0] = 0;
    for (int i = 0; i < V; i++)
        if (c->byte_of[i] == '\n') ids[0] = i;
    printf("--- sample (%d characters, temperature %.2f) ---\n", n, temperature);
    for (int i = 0; i < n && status == 0; i++) {
        int t = len < T ? len : T;
        step a;
        if (!step_begin(&a, md->ctx)) { status = 1; break; }
        int64_t xs[2] = {1, t};
        wt_tensor *tokens = OP(&a, wt_tensor_from_data, md->ctx, WT_I32, 2, xs, ids + len - t);
        wt_tensor *last = OP(&a, wt_slice, forward(&a, md, tokens), 1, t - 1, t, 1);
        if (last) ok(&a, wt_tensor_read(last, logits, (size_t)V * sizeof *logits));
        step_end(&a);
        if (a.st != WT_OK) { status = 1; break; }
        int next = 0;
        for (int k = 1; k < V; k++)
            if (logits[k] > logits[next]) next = k;
        if (temperature > 0) {
            double sum = 0, acc = 0;
            for (int k = 0; k < V; k++) sum += p[k] = exp((logits[k] - logits[next]) / temperature);
            for (next = 0; next < V - 1; next++)
                if ((acc += p[next] / sum) > u[i]) break;
        }
        ids[len++] = next;
        putchar(c->byte_of[next]);
    }
    printf("\n---\n");
    wt_no_grad_end(md->ctx);
    free(ids), free(logits), free(u), free(p);
    return status;
}

/* ------------------------------------------------------------------ main */

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    const char *backend = "auto", *data = DEFAULT_DATA, *norm_name = "layer", *save_init = NULL, *qkv = "fused";
    config cfg = {.layers = 6, .dim = 384, .heads = 6, .context = 256};
    int batch = 64, steps = 5000, warmup = 100, print_every = 100, eval_every = 500, eval_batches = 20;
    int sample_len = 400;
    double lr = 1e-3, min_lr = -1, weight_decay = 0.1, temperature = 0.8, max_loss = 0, clip = 1.0;
    double dist_timeout = 0;
    const char *dist_pack = NULL, *dist_overlap = "on";
    bool dist_f16 = false;
    int fail_step = 0, fail_rank = 1;
    bool use_dist = false, print_loss = false, check_sync = false, graph = false;
    uint64_t seed = 1;
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(o, "--dist") == 0) { use_dist = true; continue; }
        if (strcmp(o, "--dist-f16") == 0) { dist_f16 = true; continue; }
        if (strcmp(o, "--print-loss") == 0) { print_loss = true; continue; }
        if (strcmp(o, "--check-sync") == 0) { check_sync = true; continue; }
        if (strcmp(o, "--graph") == 0) { graph = true; continue; }
        if (!v) { fprintf(stderr, "option %s needs a value\n", o); return 2; }
        if (strcmp(o, "--backend") == 0) backend = v;
        else if (strcmp(o, "--data") == 0) data = v;
        else if (strcmp(o, "--layers") == 0) cfg.layers = atoi(v);
        else if (strcmp(o, "--dim") == 0) cfg.dim = atoi(v);
        else if (strcmp(o, "--heads") == 0) cfg.heads = atoi(v);
        else if (strcmp(o, "--context") == 0) cfg.context = atoi(v);
        else if (strcmp(o, "--batch") == 0) batch = atoi(v);
        else if (strcmp(o, "--steps") == 0) steps = atoi(v);
        else if (strcmp(o, "--lr") == 0) lr = atof(v);
        else if (strcmp(o, "--min-lr") == 0) min_lr = atof(v);
        else if (strcmp(o, "--warmup") == 0) warmup = atoi(v);
        else if (strcmp(o, "--weight-decay") == 0) weight_decay = atof(v);
        else if (strcmp(o, "--clip") == 0) clip = atof(v);
        else if (strcmp(o, "--clip-mode") == 0) {
            if (strcmp(v, "separate") != 0 && strcmp(v, "in-step") != 0) {
                fprintf(stderr, "--clip-mode is in-step or separate\n");
                return 2;
            }
            g_clip_separate = strcmp(v, "separate") == 0;
        }
        else if (strcmp(o, "--norm") == 0) norm_name = v;
        else if (strcmp(o, "--qkv") == 0) qkv = v;
        else if (strcmp(o, "--seed") == 0) seed = strtoull(v, NULL, 10);
        else if (strcmp(o, "--print-every") == 0) print_every = atoi(v);
        else if (strcmp(o, "--eval-every") == 0) eval_every = atoi(v);
        else if (strcmp(o, "--eval-batches") == 0) eval_batches = atoi(v);
        else if (strcmp(o, "--sample") == 0) sample_len = atoi(v);
        else if (strcmp(o, "--temperature") == 0) temperature = atof(v);
        else if (strcmp(o, "--max-loss") == 0) max_loss = atof(v);
        else if (strcmp(o, "--dist-timeout") == 0) dist_timeout = atof(v);
        else if (strcmp(o, "--dist-pack") == 0) dist_pack = v;
        else if (strcmp(o, "--dist-overlap") == 0) dist_overlap = v;
        else if (strcmp(o, "--fail-step") == 0) fail_step = atoi(v);
        else if (strcmp(o, "--fail-rank") == 0) fail_rank = atoi(v);
        else if (strcmp(o, "--save-init") == 0) save_init = v;
        else { fprintf(stderr, "unknown option %s (see the comment at the top of the source)\n", o); return 2; }
        i++;
    }
    if (strcmp(norm_name, "layer") != 0 && strcmp(norm_name, "rms") != 0) {
        fprintf(stderr, "--norm is layer or rms\n");
        return 2;
    }
    cfg.rms = strcmp(norm_name, "rms") == 0;
    if (strcmp(qkv, "fused") != 0 && strcmp(qkv, "separate") != 0) {
        fprintf(stderr, "--qkv is fused or separate\n");
        return 2;
    }
    cfg.qkv_separate = strcmp(qkv, "separate") == 0;
    if (cfg.layers <= 0 || cfg.dim <= 0 || cfg.heads <= 0 || cfg.dim % cfg.heads != 0 || cfg.context <= 0 ||
        batch <= 0 || steps <= 0 || warmup < 0 || print_every <= 0 || eval_batches <= 0 || sample_len < 0 ||
        !(lr > 0) || temperature < 0 || !(clip >= 0)) {
        fprintf(stderr, "sizes, steps and lr must be positive, and heads must divide dim\n");
        return 2;
    }
    if (graph && use_dist) {
        fprintf(stderr, "--graph and --dist do not go together\n");
        return 2;
    }
    if (min_lr < 0) min_lr = lr / 10;
    if (warmup == 0) warmup = 1;

    dist_group grp;
    if (strcmp(dist_overlap, "on") != 0 && strcmp(dist_overlap, "off") != 0) {
        fprintf(stderr, "error: --dist-overlap is on or off\n");
        return 2;
    }
    if (!dist_start(use_dist, dist_timeout, dist_pack, dist_f16, &grp)) return 1;
    grp.overlap = strcmp(dist_overlap, "on") == 0;
    /* Only rank 0 speaks (errors excepted). */
    if (grp.rank != 0 && !freopen("/dev/null", "w", stdout)) { dist_stop(&grp); return 1; }
    corpus c;
    if (!corpus_load(data, &c)) {
        dist_stop(&grp);
        fprintf(stderr,
                "No text found at %s.\n"
                "Install Debian's fortune cookie files (apt-get install fortunes), or point --data at\n"
                "an English text file or a folder of them.\n",
                data);
        return 2;
    }
    if (c.n - c.ntrain < (size_t)cfg.context + 2) {
        fprintf(stderr, "the text (%zu characters) is too short for a context of %d\n", c.n, cfg.context);
        free(c.ids);
        dist_stop(&grp);
        return 2;
    }
    cfg.vocab = c.vocab;
    printf("corpus %s: %zu characters (%zu for training, %zu held out), vocabulary %d\n", data, c.n, c.ntrain,
           c.n - c.ntrain, c.vocab);

    wt_context *ctx = NULL;
    model md;
    memset(&md, 0, sizeof md);
    if (!make_context_on(backend, grp.local_rank, &ctx)) {
        free(c.ids);
        dist_stop(&grp);
        return 1;
    }
    int status = 0;
    if (!model_init(&md, ctx, &cfg, seed) || !optimizer_init(&md, steps, warmup, lr, min_lr, weight_decay)) status = 1;
    /* Every rank starts from rank 0's parameters. */
    wt_tensor **ps = status == 0 ? malloc((size_t)md.nparams * sizeof *ps) : NULL;
    for (int i = 0; ps && i < md.nparams; i++) ps[i] = md.params[i].t;
    if (status == 0 && (!ps || dist_broadcast(&grp, md.nparams, ps) != WT_OK)) {
        fprintf(stderr, "error: broadcasting the parameters: %s\n", wt_last_error());
        status = 1;
    }
    if (status == 0 && dist_sync_begin(&grp, ctx, md.nparams, ps) != WT_OK) {
        fprintf(stderr, "error: --dist: %s\n", wt_last_error());
        status = 1;
    }
    if (status == 0 && save_init && grp.rank == 0 && !save_params(&md, save_init)) status = 1;
    if (status == 0)
        printf("model: %d layers, dim %d, %d heads, context %d, %s norm: %lld parameters\n", cfg.layers, cfg.dim,
               cfg.heads, cfg.context, norm_name, (long long)model_size(&md));

    /* The global batch (all ranks' shards); tokens/s counts them all. */
    size_t tokens = (size_t)batch * cfg.context * (size_t)grp.size;
    int32_t *x = malloc(tokens * sizeof *x), *y = malloc(tokens * sizeof *y);
    size_t shard = (size_t)grp.rank * batch * cfg.context;
    uint64_t rng = seed;
    wt_tensor *loss_sum = NULL; /* the interval's losses, added on the device */
    replay rp = {0};
    double t_interval = now(), t_start = t_interval, last_mean = NAN;
    int interval_steps = 0;
    /* The memory at the first and the last progress line. */
    wt_memory_stats mem_first = {0}, mem_last = {0};
    bool have_mem = false;
    for (int s = 0; s < steps && status == 0; s++) {
        step a;
        if (!step_begin(&a, ctx)) { status = 1; break; }
        double step_lr = NAN; /* the schedule's at step s (the optimizer's host count skips replays) */
        wt_lr_schedule_at(&md.sched, s, &step_lr);
        make_batch(&c, 0, c.ntrain, batch * grp.size, cfg.context, &rng, x, y);
        bool fail_here = fail_step > 0 && s + 1 == fail_step && grp.rank == fail_rank;
        wt_tensor *loss = graph ? replayed_step(&a, &md, &rp, x, y, batch, cfg.context, clip)
                                : loss_of(&a, &md, x + shard, y + shard, batch, cfg.context);
        if (loss && (graph || optimize(&a, &md, &loss, s + 1, clip, &grp, fail_here))) {
            if (print_loss) {
                float lv = 0;
                if (ok(&a, wt_tensor_read(loss, &lv, sizeof lv))) printf("step %d loss %.9g\n", s + 1, lv);
            }
            /* Off the tape: the sum must not keep this step's graph (and
             * a copy of a replayed loss, which the next replay rewrites). */
            wt_tensor *sum = NULL;
            if (ok(&a, wt_no_grad_begin(ctx))) {
                if (loss_sum ? ok(&a, wt_add(loss_sum, loss, &sum))
                             : graph ? ok(&a, wt_mul_scalar(loss, 1.0, &sum)) : ok(&a, wt_detach(loss, &sum)))
                    ok(&a, wt_scope_keep(a.scope, sum));
                wt_no_grad_end(ctx);
            }
            if (a.st == WT_OK) {
                wt_tensor_release(loss_sum);
                loss_sum = sum;
            }
        }
        step_end(&a);
        if (a.st != WT_OK) { status = 1; break; }
        if (check_sync && !dist_identical(&grp, md.nparams, ps)) { status = 1; break; }
        interval_steps++;
        bool last = s + 1 == steps;
        if ((s + 1) % print_every == 0 || last) {
            float total = 0;
            if (wt_tensor_read(loss_sum, &total, sizeof total) != WT_OK) {
                fprintf(stderr, "error: %s\n", wt_last_error());
                status = 1;
                break;
            }
            wt_tensor_release(loss_sum);
            loss_sum = NULL;
            double t = now(), secs = t - t_interval;
            last_mean = total / interval_steps;
            wt_memory_stats ms;
            if (wt_context_memory_stats(ctx, &ms) != WT_OK) { status = 1; break; }
            if (!have_mem) mem_first = ms, have_mem = true;
            mem_last = ms;
            printf("step %5d/%d  loss %.4f  lr %.2e  %.0f tokens/s  %.1f ms/step  live tensors %llu (%.1f MB, %.1f MB pooled)\n",
                   s + 1, steps, last_mean, step_lr, interval_steps * (double)tokens / secs,
                   1e3 * secs / interval_steps, (unsigned long long)ms.live_tensors, ms.live_bytes / 1e6, ms.pooled_bytes / 1e6);
            dist_report(&grp, interval_steps, secs);
            dist_reset_stats(&grp);
            if (grp.rank == 0 && ((eval_every > 0 && (s + 1) % eval_every == 0) || last)) {
                double vl = validation_loss(&md, &c, eval_batches, batch, cfg.context, x, y);
                printf("step %5d/%d  validation loss %.4f (%d batches)\n", s + 1, steps, vl, eval_batches);
                if (!isfinite(vl)) {
                    fprintf(stderr, "the validation loss is not finite\n");
                    status = 1;
                }
            }
            fflush(stdout);
            interval_steps = 0;
            t_interval = now();
        }
    }
    wt_tensor_release(loss_sum);
    if (status == 0) {
        printf("trained %d steps in %.1f s%s\n", steps, now() - t_start,
               graph ? " (every step after the first replayed from the first's graph)" : "");
        printf("memory at the first and the last progress line: %llu and %llu live tensors, %llu and %llu "
               "bytes live, %llu and %llu bytes pooled\n",
               (unsigned long long)mem_first.live_tensors, (unsigned long long)mem_last.live_tensors,
               (unsigned long long)mem_first.live_bytes, (unsigned long long)mem_last.live_bytes,
               (unsigned long long)mem_first.pooled_bytes, (unsigned long long)mem_last.pooled_bytes);
        if (mem_first.live_tensors != mem_last.live_tensors || mem_first.live_bytes != mem_last.live_bytes ||
            mem_first.pooled_bytes != mem_last.pooled_bytes) {
            fprintf(stderr, "the memory changed from step to step\n");
            status = 1;
        }
    }
    if (status == 0 && check_sync && dist_on(&grp))
        printf("parameters bit-identical on all %d ranks after each of the %d steps\n", grp.size, steps);
    free(ps);
    if (status == 0 && sample_len > 0 && grp.rank == 0) status = sample(&md, &c, sample_len, temperature, seed * 7 + 3);
    if (status == 0 && max_loss > 0) {
        printf("mean training loss of the last interval: %.4f (must be below %.4f)\n", last_mean, max_loss);
        if (!(last_mean < max_loss)) status = 1;
    }
    free(x);
    free(y);
    replay_free(&rp);
    model_free(&md);
    wt_context_destroy(ctx);
    free(c.ids);
    dist_stop(&grp);
    return status;
}
