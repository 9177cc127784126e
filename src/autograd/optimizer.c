/* Optimizer objects over the tape's gradients, gradient clipping by
 * global norm and learning-rate schedules (webtensor.h, "optimizers");
 * dynamic loss scaling around their steps is grad_scaler.c.
 *
 * The update itself is wt_sgd_step / wt_adamw_step (one kernel per
 * parameter); this layer keeps the state, the step count and the
 * learning rate, and reads each leaf's accumulated gradient from its
 * record. Everything it makes runs with recording and the caller's scope
 * paused: the state lives as long as the optimizer, not the step. */
#include "api/api.h"
#include "api/chain.h"
#include "autograd/optimizer.h"
#include "autograd/tape.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

/* ------------------------------------------------------------ schedules */

void wt_lr_schedule_options_init(wt_lr_schedule_options *opts)
{
    if (!opts) return;
    memset(opts, 0, sizeof *opts);
    opts->struct_size = sizeof *opts;
    opts->kind = WT_LR_CONSTANT;
    opts->lr = 1e-3;
    opts->step_size = 1;
    opts->gamma = 0.1;
    opts->total_steps = 1;
}

static wt_status check_schedule(const char *fn, const wt_lr_schedule_options *s)
{
    if (!s) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: schedule is NULL", fn);
    if (s->struct_size != sizeof *s)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: schedule not initialised with wt_lr_schedule_options_init", fn);
    if ((unsigned)s->kind > WT_LR_COSINE) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: unknown schedule kind %d", fn, (int)s->kind);
    if (!isfinite(s->lr) || s->lr < 0 || !isfinite(s->min_lr) || s->min_lr < 0 || !isfinite(s->gamma) || s->gamma < 0)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: lr, min_lr and gamma must be finite and >= 0", fn);
    if (s->warmup_steps < 0 || s->step_size < 1 || s->total_steps < 0)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: warmup_steps and total_steps must be >= 0, step_size >= 1", fn);
    return WT_OK;
}

static double schedule_lr(const wt_lr_schedule_options *s, int64_t i)
{
    if (i < s->warmup_steps) return s->lr * (double)(i + 1) / (double)s->warmup_steps;
    int64_t after = i - s->warmup_steps;
    switch (s->kind) {
    case WT_LR_STEP: return s->lr * pow(s->gamma, (double)(after / s->step_size));
    case WT_LR_COSINE: {
        int64_t span = s->total_steps - s->warmup_steps;
        double p = span > 0 ? (double)after / (double)span : 1.0;
        if (p > 1) p = 1;
        return s->min_lr + 0.5 * (s->lr - s->min_lr) * (1.0 + cos(M_PI * p));
    }
    default: return s->lr;
    }
}

wt_status wt_lr_schedule_at(const wt_lr_schedule_options *schedule, int64_t step, double *lr)
{
    const char *fn = "wt_lr_schedule_at";
    if (lr) *lr = NAN;
    wt_status st = check_schedule(fn, schedule);
    if (st != WT_OK) return st;
    if (!lr) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: lr is NULL", fn);
    if (step < 0) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: step counts from 0 (got %lld)", fn, (long long)step);
    *lr = schedule_lr(schedule, step);
    return WT_OK;
}

/* ----------------------------------------------------------- parameters */

static wt_status check_params(const char *fn, const wt_optimizer *o, int n, wt_tensor *const *params)
{
    if (n < 1) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: nparams must be >= 1 (got %d)", fn, n);
    if (!params) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: params is NULL", fn);
    wt_context *ctx = o ? o->ctx : NULL;
    for (int i = 0; i < n; i++) {
        const wt_tensor *t = params[i];
        if (!t) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: params[%d] is NULL", fn, i);
        if (t->dtype != WT_F32)
            return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: params[%d] must be f32 (master weights; cast for f16 compute)", fn, i);
        if (!wt_layout_is_contiguous(t->ndim, t->shape, t->strides))
            return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: params[%d] must be contiguous (it is updated in place)", fn, i);
        if (!t->autograd || !t->autograd->requires_grad)
            return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: params[%d] is not a leaf that requires grad (wt_tensor_set_requires_grad)", fn, i);
        if (!ctx) ctx = t->storage->ctx;
        if (t->storage->ctx != ctx) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: params[%d] belongs to another context", fn, i);
        for (int j = 0; j < i; j++)
            if (params[j]->storage == t->storage)
                return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: params[%d] shares storage with params[%d]", fn, i, j);
        for (int j = 0; o && j < o->n; j++)
            if (o->p[j].t->storage == t->storage)
                return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: params[%d] is already one of the optimizer's", fn, i);
    }
    return WT_OK;
}

static void param_free(opt_param *p)
{
    wt_tensor_release(p->t);
    wt_tensor_release(p->s1);
    wt_tensor_release(p->s2);
    memset(p, 0, sizeof *p);
}

/* Appends the parameters with zeroed state; on failure nothing is added. */
static wt_status add_params(wt_optimizer *o, int n, wt_tensor *const *params, double weight_decay)
{
    if (o->n + n > o->cap) {
        int cap = o->cap ? o->cap : 8;
        while (cap < o->n + n) cap *= 2;
        opt_param *p = realloc(o->p, (size_t)cap * sizeof *p);
        if (!p) return wt_fail(WT_ERR_OUT_OF_MEMORY, "optimizer: out of host memory (%zu bytes requested)", (size_t)cap * sizeof *p);
        o->p = p;
        o->cap = cap;
    }
    bool two = o->adamw, one = o->adamw || o->sgd.momentum > 0;
    wt_grad_pause pz;
    wt_grad_pause_begin(o->ctx, &pz);
    wt_status st = WT_OK;
    int made = 0;
    for (; made < n && st == WT_OK; made++) {
        opt_param *p = &o->p[o->n + made];
        memset(p, 0, sizeof *p);
        wt_tensor *t = params[made];
        if (one) st = wt_tensor_zeros(o->ctx, WT_F32, t->ndim, t->shape, &p->s1);
        if (st == WT_OK && two) st = wt_tensor_zeros(o->ctx, WT_F32, t->ndim, t->shape, &p->s2);
        wt_tensor_retain(t);
        p->t = t;
        p->weight_decay = weight_decay;
    }
    wt_grad_pause_end(&pz);
    if (st != WT_OK) {
        for (int i = 0; i < made; i++) param_free(&o->p[o->n + i]);
        return st;
    }
    o->n += n;
    return WT_OK;
}

static void put_f32(uint32_t *w, int i, double v)
{
    float f = (float)v;
    memcpy(&w[i], &f, sizeof f);
}

/* The words the host writes, WT_OPT_SCHED_SET_LR to the end, into the
 * device scalars: an upload, not an op, so a captured graph's replays
 * read the new values. */
static wt_status write_host_words(wt_optimizer *o)
{
    const size_t first = WT_OPT_SCHED_SET_LR;
    size_t offset = ((size_t)o->sched->offset + first) * sizeof(uint32_t);
    wt_status st = o->ctx->ops->upload(o->ctx, o->sched->storage, offset, &o->words[first],
                                       (WT_OPT_SCHED_WORDS - first) * sizeof(uint32_t));
    if (st == WT_OK) o->sched->storage->version++;
    return st;
}

/* The device scalars before the first step: t 0, bias corrections 0. */
static wt_status make_sched(wt_optimizer *o)
{
    memset(o->words, 0, sizeof o->words);
    put_f32(o->words, WT_OPT_SCHED_SET_LR, o->lr);
    o->words[WT_OPT_SCHED_STEP_SIZE] = 1;
    int64_t shape[1] = {WT_OPT_SCHED_WORDS};
    wt_grad_pause pz;
    wt_grad_pause_begin(o->ctx, &pz);
    wt_status st = wt_tensor_from_data(o->ctx, WT_I32, 1, shape, o->words, &o->sched);
    wt_grad_pause_end(&pz);
    return st;
}

static wt_status create(const char *fn, int n, wt_tensor *const *params, bool adamw, const wt_sgd_options *sgd,
                        const wt_adamw_options *adam, wt_optimizer **out)
{
    if (!out) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: out is NULL", fn);
    *out = NULL;
    wt_status st = check_params(fn, NULL, n, params);
    if (st != WT_OK) return st;
    wt_optimizer *o = calloc(1, sizeof *o);
    if (!o) return wt_fail(WT_ERR_OUT_OF_MEMORY, "%s: out of host memory (%zu bytes requested)", fn, sizeof *o);
    o->ctx = params[0]->storage->ctx;
    o->adamw = adamw;
    double wd;
    if (adamw) {
        o->adam = *adam;
        o->lr = adam->lr;
        wd = adam->weight_decay;
    } else {
        o->sgd = *sgd;
        o->lr = sgd->lr;
        wd = sgd->weight_decay;
    }
    if ((st = make_sched(o)) != WT_OK || (st = add_params(o, n, params, wd)) != WT_OK) {
        wt_tensor_release(o->sched);
        free(o->p);
        free(o);
        return st;
    }
    *out = o;
    return WT_OK;
}

wt_status wt_optimizer_create_sgd(int nparams, wt_tensor *const *params, const wt_sgd_options *opts, wt_optimizer **out)
{
    const char *fn = "wt_optimizer_create_sgd";
    if (out) *out = NULL;
    wt_sgd_options o;
    wt_status st_opts = wt_sgd_options_read(fn, opts, &o);
    if (st_opts != WT_OK) return st_opts;
    if (!isfinite(o.lr) || o.lr < 0 || !(o.momentum >= 0) || !isfinite(o.momentum) || !isfinite(o.dampening) ||
        !isfinite(o.weight_decay))
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: lr (>= 0), momentum (>= 0), dampening and weight_decay must be finite", fn);
    if (o.nesterov && (o.momentum <= 0 || o.dampening != 0))
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: nesterov needs momentum > 0 and dampening 0", fn);
    return create(fn, nparams, params, false, &o, NULL, out);
}

wt_status wt_optimizer_create_adamw(int nparams, wt_tensor *const *params, const wt_adamw_options *opts,
                                    wt_optimizer **out)
{
    const char *fn = "wt_optimizer_create_adamw";
    if (out) *out = NULL;
    wt_adamw_options o;
    wt_status st_opts = wt_adamw_options_read(fn, opts, &o);
    if (st_opts != WT_OK) return st_opts;
    if (!isfinite(o.lr) || o.lr < 0 || !(o.beta1 >= 0 && o.beta1 < 1) || !(o.beta2 >= 0 && o.beta2 < 1) ||
        !(o.eps >= 0) || !isfinite(o.eps) || !isfinite(o.weight_decay))
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: betas must lie in [0, 1), eps >= 0, lr >= 0 and weight_decay finite", fn);
    return create(fn, nparams, params, true, NULL, &o, out);
}

wt_status wt_optimizer_add_params(wt_optimizer *opt, int nparams, wt_tensor *const *params, double weight_decay)
{
    const char *fn = "wt_optimizer_add_params";
    if (!opt) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: opt is NULL", fn);
    if (opt->steps > 0) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: the optimizer has taken steps already", fn);
    if (!isfinite(weight_decay)) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: weight_decay must be finite", fn);
    wt_status st = check_params(fn, opt, nparams, params);
    if (st != WT_OK) return st;
    return add_params(opt, nparams, params, weight_decay);
}

void wt_optimizer_release(wt_optimizer *opt)
{
    if (!opt) return;
    for (int i = 0; i < opt->n; i++) param_free(&opt->p[i]);
    wt_tensor_release(opt->sched);
    free(opt->p);
    free(opt);
}

/* ----------------------------------------------------------------- steps */

double wt_optimizer_lr(const wt_optimizer *opt)
{
    if (!opt) return NAN;
    return opt->scheduled ? schedule_lr(&opt->schedule, opt->steps) : opt->lr;
}

int64_t wt_optimizer_steps(const wt_optimizer *opt) { return opt ? opt->steps : 0; }

wt_status wt_optimizer_read_steps(const wt_optimizer *opt, int64_t *steps)
{
    const char *fn = "wt_optimizer_read_steps";
    if (steps) *steps = -1;
    if (!opt) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: opt is NULL", fn);
    if (!steps) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: steps is NULL", fn);
    uint32_t w[WT_OPT_SCHED_WORDS];
    wt_status st = wt_tensor_read(opt->sched, w, sizeof w);
    if (st == WT_OK) *steps = (int64_t)w[WT_OPT_SCHED_T];
    return st;
}

wt_status wt_optimizer_set_lr(wt_optimizer *opt, double lr)
{
    const char *fn = "wt_optimizer_set_lr";
    if (!opt) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: opt is NULL", fn);
    if (!isfinite(lr) || lr < 0) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: lr must be finite and >= 0", fn);
    uint32_t keep = opt->words[WT_OPT_SCHED_SET_LR];
    put_f32(opt->words, WT_OPT_SCHED_SET_LR, lr);
    wt_status st = write_host_words(opt);
    if (st != WT_OK) {
        opt->words[WT_OPT_SCHED_SET_LR] = keep;
        return st;
    }
    opt->lr = lr;
    return WT_OK;
}

wt_status wt_optimizer_set_schedule(wt_optimizer *opt, const wt_lr_schedule_options *schedule)
{
    const char *fn = "wt_optimizer_set_schedule";
    if (!opt) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: opt is NULL", fn);
    uint32_t keep[WT_OPT_SCHED_WORDS];
    memcpy(keep, opt->words, sizeof keep);
    if (!schedule) {
        opt->words[WT_OPT_SCHED_ON] = 0;
    } else {
        wt_status st = check_schedule(fn, schedule);
        if (st != WT_OK) return st;
        /* The device counts steps in 32 bits. */
        if (schedule->warmup_steps > UINT32_MAX || schedule->step_size > UINT32_MAX ||
            schedule->total_steps > UINT32_MAX)
            return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: warmup_steps, step_size and total_steps must be < 2^32", fn);
        uint32_t *w = opt->words;
        w[WT_OPT_SCHED_ON] = 1;
        w[WT_OPT_SCHED_KIND] = (uint32_t)schedule->kind;
        w[WT_OPT_SCHED_WARMUP] = (uint32_t)schedule->warmup_steps;
        w[WT_OPT_SCHED_STEP_SIZE] = (uint32_t)schedule->step_size;
        w[WT_OPT_SCHED_TOTAL] = (uint32_t)schedule->total_steps;
        put_f32(w, WT_OPT_SCHED_PEAK, schedule->lr);
        put_f32(w, WT_OPT_SCHED_MIN_LR, schedule->min_lr);
        put_f32(w, WT_OPT_SCHED_GAMMA, schedule->gamma);
    }
    wt_status st = write_host_words(opt);
    if (st != WT_OK) {
        memcpy(opt->words, keep, sizeof keep);
        return st;
    }
    opt->scheduled = schedule != NULL;
    if (schedule) opt->schedule = *schedule;
    return WT_OK;
}

static wt_status scale_of(const wt_tensor *norm, double max_norm, wt_tensor **scale);

/* One parameter's update with gradient g, taken times clipping's factor
 * when clip_norm is set: inside the update kernel, or, where the backend
 * has no such kernel, through a scaled copy of g (*scale made once). */
static wt_status update_param(wt_optimizer *opt, opt_param *p, const wt_tensor *g, int64_t t,
                              const wt_tensor *clip_norm, double max_norm, wt_tensor **scale)
{
    wt_status st;
    if (opt->adamw) {
        wt_adamw_options o = opt->adam;
        o.weight_decay = p->weight_decay;
        st = wt_adamw_step_sched(p->t, g, p->s1, p->s2, t, opt->sched, clip_norm, max_norm, &o);
    } else {
        wt_sgd_options o = opt->sgd;
        o.weight_decay = p->weight_decay;
        st = wt_sgd_step_sched(p->t, g, p->s1, opt->sched, clip_norm, max_norm, &o);
    }
    if (st != WT_ERR_UNSUPPORTED || !clip_norm) return st;
    wt_tensor *scaled = NULL;
    st = *scale ? WT_OK : scale_of(clip_norm, max_norm, scale);
    if (st == WT_OK) st = wt_mul(g, *scale, &scaled);
    if (st == WT_OK) st = update_param(opt, p, scaled, t, NULL, 0.0, scale);
    wt_tensor_release(scaled);
    return st;
}

/* The advance of the device scalars, then one update per parameter that
 * reads them: all device work, so a captured step replays as the next
 * step (its own step number, rate and bias corrections). With clip_norm
 * the updates take the gradients times clipping's factor. */
static wt_status step(wt_optimizer *opt, const wt_tensor *clip_norm, double max_norm)
{
    int64_t t = opt->steps + 1;
    wt_grad_pause pz;
    wt_grad_pause_begin(opt->ctx, &pz);
    float omb1 = 0, omb2 = 0;
    if (opt->adamw) omb1 = (float)(1.0 - opt->adam.beta1), omb2 = (float)(1.0 - opt->adam.beta2);
    wt_tensor *scale = NULL;
    wt_status st = wt_optimizer_advance(opt->sched, omb1, omb2);
    for (int i = 0; i < opt->n && st == WT_OK; i++) {
        opt_param *p = &opt->p[i];
        wt_tensor *g = p->t->autograd ? p->t->autograd->grad : NULL;
        if (g) st = update_param(opt, p, g, t, clip_norm, max_norm, &scale);
    }
    wt_tensor_release(scale);
    wt_grad_pause_end(&pz);
    /* After a failure the device count may be ahead of the host's. */
    if (st == WT_OK) opt->steps = t;
    return st;
}

wt_status wt_optimizer_step(wt_optimizer *opt)
{
    if (!opt) return wt_fail(WT_ERR_INVALID_ARGUMENT, "wt_optimizer_step: opt is NULL");
    return step(opt, NULL, 0.0);
}

wt_status wt_optimizer_zero_grad(wt_optimizer *opt)
{
    if (!opt) return wt_fail(WT_ERR_INVALID_ARGUMENT, "wt_optimizer_zero_grad: opt is NULL");
    for (int i = 0; i < opt->n; i++) wt_tensor_zero_grad(opt->p[i].t);
    return WT_OK;
}

/* -------------------------------------------------------------- clipping */

/* The gradient of t, or NULL. */
static wt_tensor *grad_of(const wt_tensor *t) { return t->autograd ? t->autograd->grad : NULL; }

/* Writes the 2-norm of g (not empty) into slot (a 0-d f32 view): one
 * reduction, no temporaries. A backend that cannot read g's dtype in the
 * reduction gets an f32 copy. */
static wt_status grad_norm_into(wt_context *ctx, const wt_tensor *g, wt_tensor *slot)
{
    wt_tensor *flat = NULL, *lifted = NULL;
    wt_status st;
    const wt_tensor *x = g;
    int nred = g->ndim;
    if (wt_layout_is_contiguous(g->ndim, g->shape, g->strides)) {
        int64_t one = 1;
        if ((st = wt_tensor_view(g, 1, &g->numel, &one, g->offset, &flat)) != WT_OK) return st;
        x = flat, nred = 1;
    }
    wt_node n = {.kind = WT_NODE_REDUCE, .in = {x, NULL}, .out = {slot},
                 .p.reduce = {WT_REDUCE_NORM2, (double)g->numel, nred}};
    st = wt_node_run(ctx, &n);
    if (st == WT_ERR_UNSUPPORTED && g->dtype != WT_F32 && (st = wt_cast(g, WT_F32, &lifted)) == WT_OK) {
        n.in[0] = lifted, n.p.reduce.nreduced = lifted->ndim;
        st = wt_node_run(ctx, &n);
    }
    wt_tensor_release(flat);
    wt_tensor_release(lifted);
    return st;
}

/* Whether g's norm can be one of a GRAD_NORMS node's. */
static bool norm_batches(const wt_tensor *g)
{
    return g->dtype == WT_F32 && g->numel > 0 && wt_layout_is_contiguous(g->ndim, g->shape, g->strides);
}

static int by_numel(const void *a, const void *b)
{
    const wt_tensor *ga = *(const wt_tensor *const *)a, *gb = *(const wt_tensor *const *)b;
    return ga->numel < gb->numel ? -1 : ga->numel > gb->numel;
}

/* Slots first..first+count-1 of norms: the norms of g[0..count-1]. */
static wt_status norms_of_batch(wt_context *ctx, wt_tensor *const *g, int count, wt_tensor *norms, int64_t first)
{
    wt_tensor *slots = NULL;
    int64_t len = count, one = 1;
    wt_status st = wt_tensor_view(norms, 1, &len, &one, norms->offset + first, &slots);
    if (st != WT_OK) return st;
    wt_node node = {.kind = WT_NODE_GRAD_NORMS, .out = {slots}};
    for (int k = 0; k < count; k++) node.in[k] = g[k];
    st = wt_node_run(ctx, &node);
    wt_tensor_release(slots);
    return st;
}

/* The norm of every gradient of ts[0..n-1] that has elements, each in a
 * slot of norms (in no particular order: only their norm is used). f32
 * contiguous gradients go WT_NODE_MAX_IN a node, similar sizes together
 * (a node of small ones is one dispatch on WebGPU, a node with a large one
 * two), unless WT_CLIP_NORMS=each; the others, and a node's gradients
 * where the backend has no kernel for them, are a reduction each. */
static wt_status grad_norms(const char *fn, wt_context *ctx, int n, wt_tensor *const *ts, wt_tensor *norms)
{
    const char *knob = wt_knob_text(WT_KNOB_CLIP_NORMS);
    bool batched = !(knob && strcmp(knob, "each") == 0) && wt_backend_runs(ctx, WT_NODE_GRAD_NORMS);
    wt_tensor **order = malloc((size_t)n * sizeof *order);
    if (!order) return wt_fail(WT_ERR_OUT_OF_MEMORY, "%s: out of host memory", fn);
    int nb = 0, m = 0;
    for (int i = 0; i < n; i++) {
        wt_tensor *g = grad_of(ts[i]);
        if (g && batched && norm_batches(g)) order[nb++] = g;
    }
    m = nb;
    for (int i = 0; i < n; i++) {
        wt_tensor *g = grad_of(ts[i]);
        if (g && g->numel > 0 && !(batched && norm_batches(g))) order[m++] = g;
    }
    qsort(order, (size_t)nb, sizeof *order, by_numel);
    wt_status st = WT_OK;
    int done = 0;
    for (int first = 0; first < nb && st == WT_OK; first += WT_NODE_MAX_IN) {
        int count = nb - first < WT_NODE_MAX_IN ? nb - first : WT_NODE_MAX_IN;
        st = norms_of_batch(ctx, order + first, count, norms, first);
        if (st == WT_ERR_UNSUPPORTED) break; /* the rest a reduction each */
        done = first + count;
    }
    if (st == WT_ERR_UNSUPPORTED) st = WT_OK;
    for (int k = done; k < m && st == WT_OK; k++) {
        wt_tensor *slot = NULL;
        if ((st = wt_tensor_view(norms, 0, NULL, NULL, norms->offset + k, &slot)) == WT_OK)
            st = grad_norm_into(ctx, order[k], slot);
        wt_tensor_release(slot);
    }
    free(order);
    return st;
}

/* One past the last element a tensor with strides >= 0 reaches. */
static int64_t reach_end(const wt_tensor *t)
{
    int64_t end = t->offset + 1;
    for (int d = 0; d < t->ndim; d++) end += (t->shape[d] - 1) * (t->strides[d] < 0 ? 0 : t->strides[d]);
    return end;
}

/* Whether g can be scaled in place: f32, contiguous, held by its record
 * alone (the references of open scopes aside: a handle the caller took
 * with wt_tensor_grad keeps the values before clipping, as documented),
 * its buffer seen by no other tensor but other entries' gradients apart
 * from it (no view or saved tensor sees the change; the references a
 * capturing graph and its backend state hold for their own nodes aside;
 * the gradients of parameters joined by concat are slices of one
 * buffer), never the same elements as another entry's gradient. Others
 * get a fresh tensor. */
static bool scales_in_place(wt_context *ctx, int i, int n, wt_tensor *const *ts)
{
    const wt_tensor *g = grad_of(ts[i]);
    int64_t graph_refs = wt_graph_storage_refs(ctx->capture, g->storage);
    if (ctx->capture && ctx->replay_state && ctx->ops->graph_storage_refs)
        graph_refs += ctx->ops->graph_storage_refs(*ctx->replay_state, g->storage);
    int64_t others = (int64_t)g->refcount - g->scope_refs - 1 + (g->storage->refcount - 1 - graph_refs);
    if (g->dtype != WT_F32 || g->storage->borrowed || !wt_layout_is_contiguous(g->ndim, g->shape, g->strides) ||
        !wt_backend_runs(ctx, WT_NODE_GRAD_CLIP_SCALE))
        return false;
    for (int j = 0; j < n; j++) {
        const wt_tensor *h = j == i ? NULL : grad_of(ts[j]);
        if (!h || h->storage != g->storage) continue;
        for (int d = 0; d < h->ndim; d++)
            if (h->strides[d] < 0) return false;
        if (h == g || (h->numel > 0 && h->offset < g->offset + g->numel && g->offset < reach_end(h))) return false;
        others--;
    }
    return others == 0;
}

/* max(1, max_norm / (norm + 1e-6)) as a 0-d tensor, for the gradients
 * scaled into fresh tensors. */
static wt_status scale_of(const wt_tensor *norm, double max_norm, wt_tensor **scale)
{
    wt_tensor *d = NULL, *r = NULL, *m = NULL;
    wt_status st = wt_add_scalar(norm, 1e-6, &d);
    if (st == WT_OK) st = wt_reciprocal(d, &r);
    if (st == WT_OK) st = wt_mul_scalar(r, max_norm, &m);
    if (st == WT_OK) st = wt_minimum_scalar(m, 1.0, scale);
    wt_tensor_release(d), wt_tensor_release(r), wt_tensor_release(m);
    return st;
}

/* The scaling of node's gradients in place; where the backend has no
 * kernel for them (a gradient past one binding), through a scaled copy. */
static wt_status scale_in_place(wt_context *ctx, const wt_node *node, const wt_tensor *norm, double max_norm,
                                wt_tensor **scale)
{
    wt_status st = wt_node_run(ctx, node);
    if (st != WT_ERR_UNSUPPORTED) return st;
    st = *scale ? WT_OK : scale_of(norm, max_norm, scale);
    for (int k = 0; k < WT_NODE_MAX_OUT && node->out[k] && st == WT_OK; k++) {
        wt_tensor *t = NULL;
        if ((st = wt_mul(node->out[k], *scale, &t)) == WT_OK) st = wt_copy_into(node->out[k], t);
        wt_tensor_release(t);
    }
    return st;
}

/* *norm = the 2-norm of the gradients of ts[0..n-1] taken together (0-d
 * f32; 0 without any), computed on the device; recording paused. */
static wt_status global_norm(const char *fn, wt_context *ctx, int n, wt_tensor *const *ts, wt_tensor **norm)
{
    int64_t m = 0;
    for (int i = 0; i < n; i++)
        if (grad_of(ts[i]) && grad_of(ts[i])->numel > 0) m++;
    if (m == 0) return wt_tensor_zeros(ctx, WT_F32, 0, NULL, norm);
    wt_tensor *norms = NULL;
    wt_status st = wt_tensor_alloc(ctx, WT_F32, 1, &m, &norms);
    if (st == WT_OK) st = grad_norms(fn, ctx, n, ts, norms);
    if (st == WT_OK) st = wt_norm(norms, 2.0, 0, NULL, false, norm);
    wt_tensor_release(norms);
    return st;
}

/* The gradients of n tensors (entries without one skipped) scaled by
 * min(1, max_norm / (norm + 1e-6)), norm the 2-norm of all of them. The
 * gradients' norms go into the slots of one [m] vector, several a kernel
 * (grad_norms), the global norm is that vector's norm, and the gradients
 * are scaled in place, three a kernel, which reads the norm on the
 * device: no fresh gradient buffers, nothing read back. A gradient that
 * cannot be scaled in place (scales_in_place) gets a scaled copy, which
 * replaces the record's only once all are made; an error in the in-place
 * kernels may leave some gradients scaled. */
static wt_status clip(const char *fn, wt_context *ctx, int n, wt_tensor *const *ts, double max_norm,
                      wt_tensor **total_norm)
{
    if (!isfinite(max_norm) || !(max_norm > 0))
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: max_norm must be finite and > 0", fn);
    wt_grad_pause pz;
    wt_grad_pause_begin(ctx, &pz);
    wt_tensor *norm = NULL, *scale = NULL, **scaled = NULL;
    bool *in_place = NULL;
    wt_status st = WT_OK;
    scaled = calloc((size_t)n, sizeof *scaled);
    in_place = calloc((size_t)n, sizeof *in_place);
    if (!scaled || !in_place) {
        st = wt_fail(WT_ERR_OUT_OF_MEMORY, "%s: out of host memory", fn);
        goto done;
    }
    st = global_norm(fn, ctx, n, ts, &norm);
    for (int i = 0; i < n && st == WT_OK; i++) {
        if (!grad_of(ts[i]) || grad_of(ts[i])->numel == 0) continue;
        if (scales_in_place(ctx, i, n, ts)) {
            in_place[i] = true;
            continue;
        }
        if (!scale) st = scale_of(norm, max_norm, &scale);
        if (st == WT_OK) st = wt_mul(grad_of(ts[i]), scale, &scaled[i]);
    }
    /* Three gradients a dispatch, while their elements stay far from 2^32,
     * each of its own buffer (one buffer bound writable twice in a
     * dispatch is refused by WebGPU). */
    wt_node scaling = {.kind = WT_NODE_GRAD_CLIP_SCALE, .in = {norm}, .p.clip = {max_norm}};
    int batched = 0;
    int64_t elements = 0;
    for (int i = 0; i <= n && st == WT_OK; i++) {
        wt_tensor *g = i < n && in_place[i] ? grad_of(ts[i]) : NULL;
        if (i < n && !g) continue;
        bool shares = false;
        for (int k = 0; g && k < batched; k++) shares = shares || scaling.out[k]->storage == g->storage;
        if (batched > 0 && (i == n || batched == 3 || shares || elements + g->numel > INT32_MAX)) {
            st = scale_in_place(ctx, &scaling, norm, max_norm, &scale);
            memset(scaling.out, 0, sizeof scaling.out);
            batched = 0, elements = 0;
        }
        if (g) scaling.out[batched++] = g, elements += g->numel;
    }
    for (int i = 0; i < n; i++) {
        if (!scaled[i]) continue;
        if (st == WT_OK) {
            wt_tensor_release(ts[i]->autograd->grad);
            ts[i]->autograd->grad = scaled[i];
        } else {
            wt_tensor_release(scaled[i]);
        }
    }
done:
    free(scaled);
    free(in_place);
    wt_tensor_release(scale);
    wt_grad_pause_end(&pz);
    if (st == WT_OK && total_norm) st = wt_tensor_share(norm, total_norm); /* the caller's scope owns it */
    wt_tensor_release(norm);
    return st;
}

wt_status wt_clip_grad_norm(int nparams, wt_tensor *const *params, double max_norm, wt_tensor **total_norm)
{
    const char *fn = "wt_clip_grad_norm";
    if (total_norm) *total_norm = NULL;
    if (nparams < 1) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: nparams must be >= 1 (got %d)", fn, nparams);
    if (!params) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: params is NULL", fn);
    for (int i = 0; i < nparams; i++) {
        if (!params[i]) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: params[%d] is NULL", fn, i);
        if (params[i]->storage->ctx != params[0]->storage->ctx)
            return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: params[%d] belongs to another context", fn, i);
        for (int j = 0; j < i; j++)
            if (params[j] == params[i])
                return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: params[%d] is listed twice", fn, i);
    }
    return clip(fn, params[0]->storage->ctx, nparams, params, max_norm, total_norm);
}

/* The optimizer's parameters as a fresh array (*ts, freed by the caller). */
static wt_status param_list(const char *fn, const wt_optimizer *opt, wt_tensor ***ts)
{
    *ts = malloc((size_t)opt->n * sizeof **ts);
    if (!*ts) return wt_fail(WT_ERR_OUT_OF_MEMORY, "%s: out of host memory", fn);
    for (int i = 0; i < opt->n; i++) (*ts)[i] = opt->p[i].t;
    return WT_OK;
}

wt_status wt_optimizer_clip_grad_norm(wt_optimizer *opt, double max_norm, wt_tensor **total_norm)
{
    const char *fn = "wt_optimizer_clip_grad_norm";
    if (total_norm) *total_norm = NULL;
    if (!opt) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: opt is NULL", fn);
    wt_tensor **ts = NULL;
    wt_status st = param_list(fn, opt, &ts);
    if (st != WT_OK) return st;
    st = clip(fn, opt->ctx, opt->n, ts, max_norm, total_norm);
    free(ts);
    return st;
}

/* The norm on the device first (recording paused), then the step with the
 * factor applied in its update kernels: the gradients stay as they are. */
wt_status wt_optimizer_step_clipped(wt_optimizer *opt, double max_norm, wt_tensor **total_norm)
{
    const char *fn = "wt_optimizer_step_clipped";
    if (total_norm) *total_norm = NULL;
    if (!opt) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: opt is NULL", fn);
    if (!isfinite(max_norm) || !(max_norm > 0))
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: max_norm must be finite and > 0", fn);
    wt_tensor **ts = NULL, *norm = NULL;
    wt_status st = param_list(fn, opt, &ts);
    if (st != WT_OK) return st;
    wt_grad_pause pz;
    wt_grad_pause_begin(opt->ctx, &pz);
    st = global_norm(fn, opt->ctx, opt->n, ts, &norm);
    wt_grad_pause_end(&pz);
    free(ts);
    if (st == WT_OK) st = step(opt, norm, max_norm);
    if (st == WT_OK && total_norm) st = wt_tensor_share(norm, total_norm); /* the caller's scope owns it */
    wt_tensor_release(norm);
    return st;
}
