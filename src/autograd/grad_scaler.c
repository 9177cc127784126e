/* Dynamic loss scaling for f16 training (webtensor.h, "mixed precision"): the
 * loss is multiplied by a scale before backward, the optimizer's gradients
 * divided by it before its step, and a step whose gradients held inf or
 * NaN is put back while the scale backs off; after growth_interval clean
 * steps it grows. The scale, its tracker and the found-inf flag stay on
 * the device, so no step waits for the GPU. */
#include "api/api.h"
#include "api/chain.h"
#include "autograd/optimizer.h"
#include "autograd/tape.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct wt_grad_scaler {
    wt_context *ctx;
    wt_grad_scaler_options o;
    wt_tensor *scale, *tracker, *found; /* 0-d f32 on the device */
    const wt_optimizer *unscaled;       /* unscaled for this optimizer's step ... */
    int64_t unscaled_at;                /* ... number (its steps before the step) */
};

void wt_grad_scaler_options_init(wt_grad_scaler_options *opts)
{
    if (!opts) return;
    memset(opts, 0, sizeof *opts);
    opts->struct_size = sizeof *opts;
    opts->init_scale = 65536.0;
    opts->growth_factor = 2.0;
    opts->backoff_factor = 0.5;
    opts->growth_interval = 2000;
}

void wt_grad_scaler_release(wt_grad_scaler *scaler)
{
    if (!scaler) return;
    wt_tensor_release(scaler->scale);
    wt_tensor_release(scaler->tracker);
    wt_tensor_release(scaler->found);
    free(scaler);
}

wt_status wt_grad_scaler_create(wt_context *ctx, const wt_grad_scaler_options *opts, wt_grad_scaler **out)
{
    const char *fn = "wt_grad_scaler_create";
    if (!out) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: out is NULL", fn);
    *out = NULL;
    if (!ctx) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: ctx is NULL", fn);
    wt_grad_scaler_options o;
    wt_grad_scaler_options_init(&o);
    if (opts) {
        if (opts->struct_size != sizeof *opts)
            return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: options not initialised with wt_grad_scaler_options_init", fn);
        o = *opts;
    }
    if (!(o.init_scale > 0) || !isfinite((float)o.init_scale) || !(o.growth_factor >= 1) ||
        !isfinite((float)o.growth_factor) || !(o.backoff_factor > 0 && o.backoff_factor <= 1) || o.growth_interval < 1)
        return wt_fail(WT_ERR_INVALID_ARGUMENT,
                       "%s: init_scale must be > 0 and finite in f32, growth_factor >= 1, backoff_factor in (0, 1], "
                       "growth_interval >= 1", fn);
    wt_grad_scaler *s = calloc(1, sizeof *s);
    if (!s) return wt_fail(WT_ERR_OUT_OF_MEMORY, "%s: out of host memory (%zu bytes requested)", fn, sizeof *s);
    s->ctx = ctx;
    s->o = o;
    wt_grad_pause pz;
    wt_grad_pause_begin(ctx, &pz);
    wt_status st = wt_tensor_full(ctx, WT_F32, 0, NULL, o.init_scale, &s->scale);
    if (st == WT_OK) st = wt_tensor_zeros(ctx, WT_F32, 0, NULL, &s->tracker);
    if (st == WT_OK) st = wt_tensor_zeros(ctx, WT_F32, 0, NULL, &s->found);
    wt_grad_pause_end(&pz);
    if (st != WT_OK) {
        wt_grad_scaler_release(s);
        return st;
    }
    *out = s;
    return WT_OK;
}

wt_status wt_grad_scaler_scale(wt_grad_scaler *scaler, const wt_tensor *loss, wt_tensor **out)
{
    const char *fn = "wt_grad_scaler_scale";
    if (out) *out = NULL;
    if (!scaler) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: scaler is NULL", fn);
    if (!loss) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: loss is NULL", fn);
    if (loss->storage->ctx != scaler->ctx)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: loss belongs to another context than the scaler", fn);
    return wt_mul(loss, scaler->scale, out);
}


wt_status wt_grad_scaler_current_scale(const wt_grad_scaler *scaler, wt_tensor **scale)
{
    if (scale) *scale = NULL;
    if (!scaler || !scale) return wt_fail(WT_ERR_INVALID_ARGUMENT, "wt_grad_scaler_current_scale: NULL argument");
    return wt_copy(scaler->scale, scale);
}

wt_status wt_grad_scaler_found_inf(const wt_grad_scaler *scaler, wt_tensor **found)
{
    if (found) *found = NULL;
    if (!scaler || !found) return wt_fail(WT_ERR_INVALID_ARGUMENT, "wt_grad_scaler_found_inf: NULL argument");
    return wt_copy(scaler->found, found);
}

/* The gradients divided by the scale (replacing the records' once all are
 * made) and found = 1 where one of them is not finite: the sum of g * 0
 * over every element is NaN exactly then. */
static wt_status unscale(wt_grad_scaler *s, wt_optimizer *opt)
{
    wt_tensor *inv = NULL, *total = NULL, *nan = NULL, *f = NULL;
    wt_tensor **scaled = calloc((size_t)opt->n, sizeof *scaled);
    if (!scaled) return wt_fail(WT_ERR_OUT_OF_MEMORY, "wt_grad_scaler_unscale: out of host memory");
    wt_status st = wt_reciprocal(s->scale, &inv);
    for (int i = 0; i < opt->n && st == WT_OK; i++) {
        wt_tensor *g = opt->p[i].t->autograd ? opt->p[i].t->autograd->grad : NULL, *z = NULL, *zs = NULL, *acc = NULL;
        if (!g) continue;
        st = wt_mul(g, inv, &scaled[i]);
        if (st == WT_OK) st = wt_mul_scalar(scaled[i], 0.0, &z);
        if (st == WT_OK) st = wt_sum(z, 0, NULL, false, &zs);
        if (st == WT_OK && total) {
            st = wt_add(total, zs, &acc);
            wt_tensor_release(zs);
            zs = acc;
        }
        wt_tensor_release(z);
        if (st == WT_OK) {
            wt_tensor_release(total);
            total = zs;
        } else {
            wt_tensor_release(zs);
        }
    }
    if (st == WT_OK && total && (st = wt_ne(total, total, &nan)) == WT_OK && (st = wt_cast(nan, WT_F32, &f)) == WT_OK)
        st = wt_copy_into(s->found, f);
    else if (st == WT_OK && !total && (st = wt_tensor_zeros(s->ctx, WT_F32, 0, NULL, &f)) == WT_OK)
        st = wt_copy_into(s->found, f);
    for (int i = 0; i < opt->n; i++) {
        if (!scaled[i]) continue;
        if (st == WT_OK) {
            wt_tensor_release(opt->p[i].t->autograd->grad);
            opt->p[i].t->autograd->grad = scaled[i];
        } else {
            wt_tensor_release(scaled[i]);
        }
    }
    free(scaled);
    wt_tensor_release(inv), wt_tensor_release(total), wt_tensor_release(nan), wt_tensor_release(f);
    return st;
}

static wt_status check_pair(const char *fn, const wt_grad_scaler *s, const wt_optimizer *opt)
{
    if (!s) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: scaler is NULL", fn);
    if (!opt) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: opt is NULL", fn);
    if (opt->ctx != s->ctx) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: the optimizer and the scaler belong to different contexts", fn);
    return WT_OK;
}

wt_status wt_grad_scaler_unscale(wt_grad_scaler *scaler, wt_optimizer *opt)
{
    const char *fn = "wt_grad_scaler_unscale";
    wt_status st = check_pair(fn, scaler, opt);
    if (st != WT_OK) return st;
    if (scaler->unscaled == opt && scaler->unscaled_at == opt->steps)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: the gradients of this step are unscaled already", fn);
    wt_grad_pause pz;
    wt_grad_pause_begin(scaler->ctx, &pz);
    st = unscale(scaler, opt);
    wt_grad_pause_end(&pz);
    if (st == WT_OK) scaler->unscaled = opt, scaler->unscaled_at = opt->steps;
    return st;
}

/* t = found ? old : t, in place. */
static wt_status keep_if_found(const wt_tensor *found, wt_tensor *t, const wt_tensor *old)
{
    wt_tensor *sel = NULL;
    wt_status st = wt_where(found, old, t, &sel);
    if (st == WT_OK) st = wt_copy_into(t, sel);
    wt_tensor_release(sel);
    return st;
}

/* 1 - t (each step its own statement: a STEP inside another's arguments
 * would run the outer one after the inner failed). */
static wt_tensor *one_minus(chain *c, wt_tensor *t)
{
    wt_tensor *neg = STEP(c, wt_mul_scalar, t, -1.0);
    return STEP(c, wt_add_scalar, neg, 1.0);
}

/* The scale after this step: found: scale * backoff, tracker 0; else the
 * tracker counts, and at growth_interval: scale * growth, tracker 0. */
static wt_status update_scale(wt_grad_scaler *s)
{
    chain c = {0};
    wt_tensor *clean = one_minus(&c, s->found);
    wt_tensor *next = STEP(&c, wt_add_scalar, s->tracker, 1.0);
    wt_tensor *t1 = STEP(&c, wt_mul, next, clean);
    wt_tensor *due = STEP(&c, wt_ge_scalar, t1, (double)s->o.growth_interval);
    wt_tensor *grow = STEP(&c, wt_cast, due, WT_F32);
    /* factor = found * backoff + clean * (1 + grow * (growth - 1)) */
    wt_tensor *g1 = STEP(&c, wt_mul_scalar, grow, s->o.growth_factor - 1.0);
    wt_tensor *up = STEP(&c, wt_add_scalar, g1, 1.0);
    wt_tensor *down = STEP(&c, wt_mul_scalar, s->found, s->o.backoff_factor);
    wt_tensor *kept = STEP(&c, wt_mul, clean, up);
    wt_tensor *factor = STEP(&c, wt_add, down, kept);
    wt_tensor *scale = STEP(&c, wt_mul, s->scale, factor);
    wt_tensor *stay = one_minus(&c, grow);
    wt_tensor *tracker = STEP(&c, wt_mul, t1, stay);
    if (c.st == WT_OK) c.st = wt_copy_into(s->scale, scale);
    if (c.st == WT_OK) c.st = wt_copy_into(s->tracker, tracker);
    chain_release(&c);
    return c.st;
}

wt_status wt_grad_scaler_step(wt_grad_scaler *scaler, wt_optimizer *opt)
{
    const char *fn = "wt_grad_scaler_step";
    wt_status st = check_pair(fn, scaler, opt);
    if (st != WT_OK) return st;
    wt_grad_pause pz;
    wt_grad_pause_begin(scaler->ctx, &pz);
    if (!(scaler->unscaled == opt && scaler->unscaled_at == opt->steps)) st = unscale(scaler, opt);
    scaler->unscaled = NULL;
    /* The state before the step, to put back when it must be skipped; the
     * kernels get finite gradients either way. */
    int n = opt->n;
    wt_tensor **old = calloc((size_t)(3 * (n ? n : 1)), sizeof *old), *fb = NULL;
    if (!old && st == WT_OK) st = wt_fail(WT_ERR_OUT_OF_MEMORY, "%s: out of host memory", fn);
    if (st == WT_OK) st = wt_gt_scalar(scaler->found, 0.5, &fb);
    for (int i = 0; i < n && st == WT_OK; i++) {
        opt_param *p = &opt->p[i];
        wt_tensor *g = p->t->autograd ? p->t->autograd->grad : NULL, *safe = NULL;
        if (!g) continue;
        st = wt_copy(p->t, &old[3 * i]);
        if (st == WT_OK && p->s1) st = wt_copy(p->s1, &old[3 * i + 1]);
        if (st == WT_OK && p->s2) st = wt_copy(p->s2, &old[3 * i + 2]);
        if (st == WT_OK) st = wt_masked_fill(g, fb, 0.0, &safe);
        if (st == WT_OK) {
            wt_tensor_release(p->t->autograd->grad);
            p->t->autograd->grad = safe;
        }
    }
    if (st == WT_OK) st = wt_optimizer_step(opt);
    for (int i = 0; i < n && st == WT_OK; i++) {
        opt_param *p = &opt->p[i];
        if (!old[3 * i]) continue;
        st = keep_if_found(fb, p->t, old[3 * i]);
        if (st == WT_OK && p->s1) st = keep_if_found(fb, p->s1, old[3 * i + 1]);
        if (st == WT_OK && p->s2) st = keep_if_found(fb, p->s2, old[3 * i + 2]);
    }
    if (st == WT_OK) st = update_scale(scaler);
    for (int i = 0; old && i < 3 * n; i++) wt_tensor_release(old[i]);
    free(old);
    wt_tensor_release(fb);
    wt_grad_pause_end(&pz);
    return st;
}
