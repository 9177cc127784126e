/* Captured graphs: the nodes a sequence of ops ran, recorded as they run
 * (wt_node_run hands each to the capture through ctx->capture_record) and
 * run again on replay without the ops' front-ends - no argument checks,
 * shape work, allocations or dtype decisions - like a prepared statement
 * or a CUDA graph (webtensor.h, "captured graphs").
 *
 * A node keeps its parameter block by value, so a recorded node is a copy
 * of the node; its tensors are replaced by handles of the graph's own
 * (wt_tensor_alias: the same storage, shape, strides and offset), so the
 * storages the kernels read and write stay what they were at the capture,
 * whatever the caller, a scope or an op releases. (Holding the op's own
 * handles would not do: a temporary made inside a scope is released once
 * by its op and once more by the scope, whatever else holds it.) */
#include "core/internal.h"

#include <stdlib.h>
#include <string.h>

struct wt_graph {
    wt_context *ctx; /* holds a context reference */
    wt_node *nodes;
    int64_t n, cap;
    wt_tensor **held; /* one reference per tensor slot of every node */
    int64_t nheld, cap_held;
    wt_status failed; /* a failure while capturing (capture_end reports it) */
    void *backend_state; /* the backend's, for its replays (ctx->replay_state) */
    char why[256];
};

static bool grow(void **items, int64_t *cap, int64_t need, size_t size)
{
    if (need <= *cap) return true;
    int64_t c = *cap ? *cap * 2 : 64;
    while (c < need) c *= 2;
    void *p = realloc(*items, (size_t)c * size);
    if (!p) return false;
    *items = p;
    *cap = c;
    return true;
}

static void fail_capture(wt_graph *g, wt_status st, const char *why)
{
    if (g->failed != WT_OK) return;
    g->failed = st;
    strncpy(g->why, why, sizeof g->why - 1);
}

/* ctx->capture_record: keeps a copy of n and a reference to its tensors. */
static wt_status record(struct wt_graph *g, const wt_node *n)
{
    if (g->failed != WT_OK) return WT_OK; /* the capture is already lost */
    if (n->kind == WT_NODE_KERNEL_DISPATCH) {
        fail_capture(g, WT_ERR_UNSUPPORTED, "a custom kernel (wt_kernel_dispatch) ran: not captured yet");
        return WT_OK;
    }
    if (!grow((void **)&g->nodes, &g->cap, g->n + 1, sizeof *g->nodes) ||
        !grow((void **)&g->held, &g->cap_held, g->nheld + WT_NODE_MAX_IN + WT_NODE_MAX_OUT, sizeof *g->held)) {
        fail_capture(g, WT_ERR_OUT_OF_MEMORY, "out of host memory for the graph's nodes");
        return WT_OK;
    }
    wt_node copy = *n;
    for (int i = 0; i < WT_NODE_MAX_IN + WT_NODE_MAX_OUT; i++) {
        const wt_tensor *t = i < WT_NODE_MAX_IN ? n->in[i] : n->out[i - WT_NODE_MAX_IN];
        if (!t) continue;
        wt_tensor *own = NULL;
        if (wt_tensor_alias(t, &own) != WT_OK) {
            fail_capture(g, WT_ERR_OUT_OF_MEMORY, "out of host memory for the graph's tensors");
            return WT_OK;
        }
        g->held[g->nheld++] = own;
        if (i < WT_NODE_MAX_IN) copy.in[i] = own;
        else copy.out[i - WT_NODE_MAX_IN] = own;
    }
    g->nodes[g->n++] = copy;
    return WT_OK;
}

static void graph_free(wt_graph *g)
{
    if (g->backend_state && g->ctx->ops->graph_state_free) g->ctx->ops->graph_state_free(g->ctx, g->backend_state);
    for (int64_t i = 0; i < g->nheld; i++) wt_tensor_release(g->held[i]);
    free(g->held);
    free(g->nodes);
    wt_context *ctx = g->ctx;
    free(g);
    wt_context_unref(ctx);
}

wt_status wt_graph_begin(wt_context *ctx)
{
    if (!ctx) return wt_fail(WT_ERR_INVALID_ARGUMENT, "wt_graph_begin: ctx is NULL");
    if (ctx->capture)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "wt_graph_begin: a capture already runs on this context");
    if (ctx->node)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "wt_graph_begin: called while an op runs");
    wt_graph *g = calloc(1, sizeof *g);
    if (!g) return wt_fail(WT_ERR_OUT_OF_MEMORY, "wt_graph_begin: out of host memory");
    wt_context_ref(ctx);
    g->ctx = ctx;
    ctx->capture = g;
    ctx->capture_record = record;
    /* The backend may record the dispatches of the captured ops as they
     * run, for replays that need not run the nodes again. */
    if (ctx->ops->graph_replay_begin) {
        ctx->replay_state = &g->backend_state;
        ctx->replay_pos = 0;
        ctx->ops->graph_replay_begin(ctx, &g->backend_state);
    }
    return WT_OK;
}

wt_status wt_graph_end(wt_context *ctx, wt_graph **out)
{
    if (out) *out = NULL;
    if (!ctx) return wt_fail(WT_ERR_INVALID_ARGUMENT, "wt_graph_end: ctx is NULL");
    wt_graph *g = ctx->capture;
    if (!g) return wt_fail(WT_ERR_INVALID_ARGUMENT, "wt_graph_end: no capture runs on this context");
    /* The capture ends whatever happens next: a failed one is given up. */
    ctx->capture = NULL;
    ctx->capture_record = NULL;
    if (ctx->ops->graph_replay_end) {
        ctx->ops->graph_replay_end(ctx, g->backend_state, g->failed);
        ctx->replay_state = NULL;
    }
    if (!out) {
        graph_free(g);
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "wt_graph_end: out is NULL (the capture is dropped)");
    }
    if (g->failed != WT_OK) {
        wt_status st = g->failed;
        char why[256];
        memcpy(why, g->why, sizeof why);
        graph_free(g);
        return wt_fail(st, "wt_graph_end: the capture is lost: %s", why);
    }
    *out = g;
    return WT_OK;
}

wt_status wt_graph_replay(wt_graph *g)
{
    if (!g) return wt_fail(WT_ERR_INVALID_ARGUMENT, "wt_graph_replay: graph is NULL");
    wt_context *ctx = g->ctx;
    if (ctx->capture)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "wt_graph_replay: a capture runs on the graph's context");
    /* The captured ops were recorded for autograd (or not) when they ran;
     * their kernels run again as they are. */
    ctx->grad_paused++;
    /* The backend may keep per-graph state across replays (bind groups
     * made once, one per dispatch in order). */
    ctx->replay_state = &g->backend_state;
    ctx->replay_pos = 0;
    ctx->replaying = g;
    wt_status st = WT_OK;
    /* A backend that recorded the dispatches of an earlier replay encodes
     * them again without the nodes (the versions still move: autograd's
     * check of a saved tensor sees the writes). */
    if (ctx->ops->graph_replay_begin && ctx->ops->graph_replay_begin(ctx, &g->backend_state)) {
        for (int64_t i = 0; i < g->n; i++)
            for (int k = 0; k < WT_NODE_MAX_OUT; k++)
                if (g->nodes[i].out[k]) g->nodes[i].out[k]->storage->version++;
        st = ctx->ops->graph_replay_list(ctx, g->backend_state);
        if (st != WT_OK) wt_error_prefix("wt_graph_replay");
    } else {
        for (int64_t i = 0; i < g->n && st == WT_OK; i++) {
            st = wt_node_run(ctx, &g->nodes[i]);
            if (st != WT_OK) wt_error_prefix("wt_graph_replay");
        }
        if (ctx->ops->graph_replay_end) ctx->ops->graph_replay_end(ctx, g->backend_state, st);
    }
    ctx->replay_state = NULL;
    ctx->replaying = NULL;
    ctx->grad_paused--;
    if (st != WT_OK) wt_context_record_error(ctx, st);
    return st;
}

int64_t wt_graph_storage_refs(const struct wt_graph *g, const wt_storage *s)
{
    int64_t n = 0;
    for (int64_t i = 0; g && i < g->nheld; i++) n += g->held[i]->storage == s;
    return n;
}

wt_status wt_graph_node_count(const wt_graph *g, int64_t *count)
{
    if (count) *count = 0;
    if (!g || !count) return wt_fail(WT_ERR_INVALID_ARGUMENT, "wt_graph_node_count: graph or count is NULL");
    *count = g->n;
    return WT_OK;
}

void wt_graph_release(wt_graph *g)
{
    if (!g) return;
    if (g->ctx->capture == g) { /* released while capturing: the capture ends */
        g->ctx->capture = NULL;
        g->ctx->capture_record = NULL;
        g->ctx->replay_state = NULL;
    }
    graph_free(g);
}
