/* A composed computation in the API layer: a chain of public ops whose
 * temporaries are kept and released together, each step running only
 * while every earlier one succeeded:
 *     chain c = {0};
 *     wt_tensor *m = STEP(&c, wt_mean, x, 1, &axis, true);
 *     wt_tensor *d = STEP(&c, wt_sub, x, m);
 *     if (c.st == WT_OK) give(d, out);
 *     chain_release(&c);
 *     return c.st;
 */
#ifndef WT_API_CHAIN_H
#define WT_API_CHAIN_H

#include "api/api.h"

/* Temporaries of a composed computation: each step runs only while every
 * earlier one succeeded, and everything is released at the end. */
typedef struct chain {
    wt_status st;
    int n;
    wt_tensor *t[48];
    wt_tensor *tmp;
} chain;

static inline wt_tensor *chain_keep(chain *c)
{
    wt_tensor *r = c->tmp;
    c->tmp = NULL;
    if (!r) return NULL;
    if (c->n == (int)(sizeof c->t / sizeof c->t[0])) {
        wt_tensor_release(r);
        c->st = wt_fail(WT_ERR_BACKEND, "training: too many temporaries");
        return NULL;
    }
    c->t[c->n++] = r;
    return r;
}

static inline void chain_release(chain *c)
{
    for (int i = 0; i < c->n; i++) wt_tensor_release(c->t[i]);
    c->n = 0;
}

/* R = fn(args..., &out) kept in the chain; NULL once anything failed. */
#define STEP(c, fn, ...) \
    ((c)->st == WT_OK ? ((c)->st = fn(__VA_ARGS__, &(c)->tmp), chain_keep(c)) : NULL)

/* Hands a chain's tensor to the caller (one more reference). */
static inline void give(wt_tensor *t, wt_tensor **out)
{
    if (!out) return;
    wt_tensor_retain(t);
    *out = t;
}

/* An f32 version of x (x itself when it is f32 and contiguous), kept in c. */
static inline wt_tensor *f32_contiguous(chain *c, const wt_tensor *x)
{
    if (c->st != WT_OK) return NULL;
    if (x->dtype == WT_F32) return STEP(c, wt_contiguous, x);
    return STEP(c, wt_cast, x, WT_F32);
}

static inline wt_tensor *scalar(chain *c, wt_context *ctx, double v)
{
    return STEP(c, wt_tensor_full, ctx, WT_F32, 0, NULL, v);
}

#endif /* WT_API_CHAIN_H */
