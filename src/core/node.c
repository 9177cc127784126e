/* Running nodes: the one path from every op's front-end to its backend
 * (core/node.h), and the names a node goes by in profiles and traces. */
#include "core/internal.h"
#include "core/profile.h"

static const char *const kind_names[WT_NODE_KIND_COUNT] = {
#define WT_NODE_KIND_NAME(ID, name) #name,
    WT_NODE_KINDS(WT_NODE_KIND_NAME)
#undef WT_NODE_KIND_NAME
};

const char *wt_node_kind_name(wt_node_kind kind)
{
    return (int)kind >= 0 && kind < WT_NODE_KIND_COUNT ? kind_names[kind] : "node";
}

static const char *op_name(wt_op op)
{
    return (int)op >= 0 && op < WT_OP_COUNT ? wt_op_table[op].name : NULL;
}

static const char *row_name(wt_rowwise_op op)
{
    switch (op) {
    case WT_ROW_SOFTMAX: return "softmax";
    case WT_ROW_LAYERNORM: return "layer_norm";
    case WT_ROW_RMSNORM: return "rms_norm";
    case WT_ROW_LOG_SOFTMAX: return "log_softmax";
    default: return NULL;
    }
}

const char *wt_node_label(const wt_node *n)
{
    const char *name = NULL;
    switch (n->kind) {
    case WT_NODE_ELEMENTWISE: name = op_name(n->p.ew.op); break;
    case WT_NODE_REDUCE: {
        const wt_reduce_info *r = wt_reduce_info_of(n->p.reduce.op);
        name = r ? r->name : NULL;
        break;
    }
    case WT_NODE_ROWWISE:
    case WT_NODE_SOFTMAX_AXIS: name = row_name(n->p.row.op); break;
    case WT_NODE_ARGREDUCE: name = n->p.argreduce.is_min ? "argmin" : "argmax"; break;
    case WT_NODE_SCAN: name = n->p.scan.op == WT_SCAN_SUM ? "cumsum" : "cumprod"; break;
    case WT_NODE_RANDOM: name = n->p.random.kind == WT_RANDOM_DROPOUT ? "dropout" : "random"; break;
    case WT_NODE_OPTIMIZER_STEP:
        name = n->p.opt.kind == WT_OPT_SGD ? "sgd_step" : n->p.opt.kind == WT_OPT_ADAMW ? "adamw_step" : "optimizer_advance";
        break;
    case WT_NODE_FILL: name = "fill"; break;
    case WT_NODE_NORM_BACKWARD:
        name = n->p.row.op == WT_ROW_RMSNORM ? "rms_norm_backward" : "layer_norm_backward";
        break;
    default: break;
    }
    return name ? name : wt_node_kind_name(n->kind);
}

wt_attention_args wt_node_attention_args(const wt_node *n)
{
    wt_attention_args a = {.q = n->in[0], .k = n->in[1], .v = n->in[2], .mask = n->in[3],
                           .kv_length = n->in[4], .mask_is_bool = n->p.attention.mask_is_bool,
                           .causal = n->p.attention.causal, .scale = n->p.attention.scale,
                           .out = n->out[0], .lse = n->out[1]};
    return a;
}

wt_optimizer_update wt_node_optimizer_update(const wt_node *n)
{
    wt_optimizer_update u = n->p.opt;
    u.param = n->out[0];
    u.m = n->out[1];
    u.v = n->out[2];
    u.grad = n->in[0];
    u.sched = n->in[1];
    u.clip_norm = n->in[2];
    return u;
}

bool wt_backend_runs(const wt_context *ctx, wt_node_kind kind)
{
    return (unsigned)kind < WT_NODE_KIND_COUNT && (ctx->ops->runs & WT_NODE_BIT(kind));
}

/* Host time around the node, for a backend whose work is done when run
 * returns (ctx->host_log is set while its profile runs). */
static wt_status run_timed(wt_context *ctx, const wt_node *n)
{
    wt_prof_log *log = ctx->host_log;
    ctx->node = n;
    double t0 = wt_now_us();
    wt_status st = ctx->ops->run(ctx, n);
    double t1 = wt_now_us();
    ctx->node = NULL;
    char shapes[160];
    if (log->trace)
        wt_node_shapes(n, shapes, sizeof shapes);
    wt_prof_record_detail(log, wt_node_label(n), log->trace ? shapes : NULL, t0,
                          (uint64_t)((t1 - t0) * 1e3));
    if (st == WT_OK && ctx->capture) st = ctx->capture_record(ctx->capture, n);
    return st;
}

/* Every storage the node writes gets a new version, so that a tensor saved
 * for backward and then modified in place is caught (autograd/tape.c).
 * Fresh outputs are bumped too, before anything can have saved them. */
static inline bool reads_autograd(const wt_node *n)
{
    for (int i = 0; i < WT_NODE_MAX_IN; i++)
        if (n->in[i] && n->in[i]->autograd) return true;
    return false;
}

static void bump_versions(const wt_node *n)
{
    for (int i = 0; i < WT_NODE_MAX_OUT; i++)
        if (n->out[i]) n->out[i]->storage->version++;
    if (n->kind == WT_NODE_KERNEL_DISPATCH && n->p.kernel.k)
        for (int i = 0; i < n->p.kernel.k->num_tensors; i++)
            if (n->p.kernel.tensors[i]) n->p.kernel.tensors[i]->storage->version++;
}

wt_status wt_node_run(wt_context *ctx, const wt_node *n)
{
    if (!wt_backend_runs(ctx, n->kind))
        return wt_fail(WT_ERR_UNSUPPORTED, "%s: not available on the %s backend", wt_node_label(n),
                       ctx->ops->name);
    if (reads_autograd(n) && !ctx->grad_paused && !ctx->no_grad_depth) {
        wt_status refused = wt_grad_hooks_get()->check_unrecorded(ctx, n);
        if (refused != WT_OK) return refused;
    }
    bump_versions(n);
    const wt_node *outer = ctx->node;
    /* A node run inside another counts once, as the outer one. */
    if (ctx->host_log && !outer)
        return run_timed(ctx, n);
    ctx->node = n;
    wt_status st = ctx->ops->run(ctx, n);
    ctx->node = outer;
    /* A capture records what ran (a node inside another is the outer's). */
    if (st == WT_OK && ctx->capture && !outer) st = ctx->capture_record(ctx->capture, n);
    /* A node that failed is not captured, but may have dispatched part of
     * its work: the backend's list of the capture's dispatches is given up. */
    if (st != WT_OK && ctx->capture && !outer && ctx->replay_state && ctx->ops->graph_replay_end)
        ctx->ops->graph_replay_end(ctx, *ctx->replay_state, st);
    return st;
}
