/* An optimizer's state, shared by its own file (optimizer.c) and the
 * dynamic loss scaler (grad_scaler.c), which unscales the gradients of its
 * parameters and puts a step back when they held inf or NaN. */
#ifndef WT_AUTOGRAD_OPTIMIZER_H
#define WT_AUTOGRAD_OPTIMIZER_H

#include "core/internal.h"

typedef struct opt_param {
    wt_tensor *t;
    wt_tensor *s1, *s2; /* SGD: momentum buffer (or NULL); AdamW: m, v */
    double weight_decay;
} opt_param;

struct wt_optimizer {
    wt_context *ctx;
    bool adamw;
    wt_sgd_options sgd;
    wt_adamw_options adam;
    opt_param *p;
    int n, cap;
    int64_t steps; /* the host's count: wt_optimizer_step calls that ran */
    double lr;
    bool scheduled;
    wt_lr_schedule_options schedule;
    /* The device scalars each step reads (core/node.h, WT_OPT_SCHED_*),
     * so a captured step replays with the step's own values; words is
     * the host's copy of those only the host writes (set_lr, schedule). */
    wt_tensor *sched;
    uint32_t words[WT_OPT_SCHED_WORDS];
};

#endif
