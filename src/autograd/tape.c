/* Recording public op calls into the graph, and freeing it (tape.h). */
#include "autograd/tape.h"

#include <stdlib.h>
#include <string.h>

/* --------------------------------------------------------------- records */

static void meta_share(struct wt_grad_meta *m);
static wt_status check_unrecorded(wt_context *ctx, const struct wt_node *n);

/* The core reaches records only through these (core/internal.h). */
static const wt_grad_hooks core_hooks = {wt_grad_meta_drop, meta_share, check_unrecorded};

static wt_grad_meta *meta_new(void)
{
    wt_grad_hooks_install(&core_hooks); /* before any tensor has a record */
    wt_grad_meta *m = calloc(1, sizeof *m);
    if (!m) return NULL;
    m->refcount = 1;
    m->nondiff_op = -1;
    m->want = -1;
    return m;
}

static void node_unref(wt_grad_node *n);

static void meta_unref(wt_grad_meta *m)
{
    if (!m || --m->refcount > 0) return;
    wt_tensor_release(m->grad);
    wt_tensor_release(m->pending);
    wt_grad_node *fn = m->fn;
    free(m);
    node_unref(fn);
}

void wt_grad_meta_drop(struct wt_grad_meta *m) { meta_unref(m); }

static void meta_share(struct wt_grad_meta *m) { m->refcount++; }

/* A tensor's record, made when it has none. */
static wt_grad_meta *meta_of(wt_tensor *t)
{
    if (!t->autograd) t->autograd = meta_new();
    return t->autograd;
}

static bool tracks(const wt_tensor *t)
{
    return t && t->autograd && (t->autograd->requires_grad || t->autograd->fn);
}

/* Frees the saved tensors of a node (after a backward that did not
 * retain the graph, or when the node goes). */
void wt_grad_node_release_saved(wt_grad_node *n)
{
    for (int i = 0; i < WT_GRAD_MAX_IN; i++) {
        wt_tensor_release(n->saved_in[i]);
        n->saved_in[i] = NULL;
    }
    for (int k = 0; k < WT_GRAD_MAX_SAVED_OUT; k++) {
        wt_tensor_release(n->saved_out[k]);
        n->saved_out[k] = NULL;
    }
    for (int k = 0; k < 2; k++) {
        wt_tensor_release(n->extra[k]);
        n->extra[k] = NULL;
    }
}

/* Iterative, so that a long chain of nodes does not recurse as deep. */
static void node_unref(wt_grad_node *first)
{
    wt_grad_node *stack[64];
    int depth = 0;
    if (first) stack[depth++] = first;
    while (depth > 0) {
        wt_grad_node *n = stack[--depth];
        if (--n->refcount > 0) continue;
        wt_grad_node_release_saved(n);
        if (n->out) {
            for (int k = 0; k < n->nout; k++) wt_tensor_release(n->out[k].grad);
            free(n->out);
        }
        for (int i = 0; i < n->nin; i++) {
            meta_unref(n->next[i].leaf);
            wt_grad_node *up = n->next[i].fn;
            if (!up) continue;
            if (depth < (int)(sizeof stack / sizeof stack[0])) stack[depth++] = up;
            else node_unref(up); /* a wide fan-in past the stack: recurse once */
        }
        wt_context_unref(n->ctx);
        free(n);
    }
}

/* -------------------------------------------------------------- pausing */

void wt_grad_pause_begin(wt_context *ctx, wt_grad_pause *p)
{
    p->ctx = ctx;
    p->scope = ctx->scope;
    ctx->scope = NULL;
    ctx->grad_paused++;
}

void wt_grad_pause_end(wt_grad_pause *p)
{
    p->ctx->grad_paused--;
    p->ctx->scope = p->scope;
}

static wt_status check_unrecorded(wt_context *ctx, const struct wt_node *n)
{
    (void)ctx;
    for (int i = 0; i < WT_NODE_MAX_IN; i++)
        if (tracks(n->in[i]))
            return wt_fail(WT_ERR_UNSUPPORTED,
                           "%s: an input requires grad and this op has no derivative rule yet (call it "
                           "inside wt_no_grad_begin/end, or on wt_detach'ed inputs)",
                           wt_node_label(n));
    return WT_OK;
}

/* ------------------------------------------------------------- recording */

bool wt_grad_begin(wt_grad_call *c)
{
    wt_context *ctx = NULL;
    bool any = false;
    for (int i = 0; i < c->nin; i++) {
        if (!c->in[i]) continue;
        if (!ctx) ctx = c->in[i]->storage->ctx;
        if (tracks(c->in[i])) any = true;
    }
    if (!any || !ctx || ctx->grad_paused || ctx->no_grad_depth) return false;
    c->ctx = ctx;
    ctx->grad_paused++;
    return true;
}

/* A view of t without a record, for the node to keep. */
static wt_status save(wt_context *ctx, const wt_tensor *t, wt_tensor **out, uint64_t *version)
{
    wt_grad_pause pz;
    wt_grad_pause_begin(ctx, &pz);
    wt_status st = wt_tensor_view(t, t->ndim, t->shape, t->strides, t->offset, out);
    wt_grad_pause_end(&pz);
    *version = t->storage->version;
    return st;
}

static void release_outs(int nout, wt_tensor **outs)
{
    for (int k = 0; k < nout; k++) {
        wt_tensor_release(outs[k]);
        outs[k] = NULL;
    }
}

static wt_status record(wt_grad_call *c, int nout, wt_tensor **outs)
{
    const wt_grad_rule *rule = &wt_grad_rules[c->op];
    wt_context *ctx = c->ctx;
    if (rule->kind == WT_GRAD_NONDIFF || c->nondiff) {
        /* The results are constants; their records name the op, for the
         * message of a backward asked through them. */
        for (int k = 0; k < nout; k++) {
            if (!outs[k] || outs[k]->autograd) continue;
            wt_grad_meta *m = meta_of(outs[k]);
            if (!m) return wt_fail(WT_ERR_OUT_OF_MEMORY, "%s: out of host memory for autograd", wt_op_table[c->op].name);
            m->nondiff_op = (int)c->op;
        }
        return WT_OK;
    }
    if (rule->kind != WT_GRAD_RULE)
        return wt_fail(WT_ERR_UNSUPPORTED, "%s: an input requires grad and the op has no derivative rule yet",
                       wt_op_table[c->op].name);
    wt_grad_node *n = calloc(1, sizeof *n);
    wt_grad_out *o = n ? calloc((size_t)(nout > 0 ? nout : 1), sizeof *o) : NULL;
    if (!o) {
        free(n);
        return wt_fail(WT_ERR_OUT_OF_MEMORY, "%s: out of host memory for autograd", wt_op_table[c->op].name);
    }
    n->refcount = 1; /* dropped below once the results hold it */
    n->op = c->op;
    n->ctx = ctx;
    wt_context_ref(ctx);
    n->nin = c->nin;
    n->nout = nout;
    n->out = o;
    n->topo = -1;
    n->p = c->p;
    for (int k = 0; k < 2; k++) {
        n->extra[k] = c->extra[k];
        c->extra[k] = NULL;
        if (n->extra[k]) n->version_extra[k] = n->extra[k]->storage->version;
    }
    wt_status st = WT_OK;
    for (int i = 0; i < c->nin; i++) {
        const wt_tensor *t = c->in[i];
        if (!t) continue;
        n->given[i] = true;
        n->in_ndim[i] = t->ndim;
        memcpy(n->in_shape[i], t->shape, sizeof n->in_shape[i]);
        n->in_dtype[i] = t->dtype;
        wt_grad_meta *m = t->autograd;
        if (m && m->fn) {
            n->next[i].fn = m->fn;
            n->next[i].slot = m->slot;
            m->fn->refcount++;
        } else if (m && m->requires_grad) {
            n->next[i].leaf = m;
            m->refcount++;
        }
        if ((rule->save_in >> i) & 1u && st == WT_OK) st = save(ctx, t, &n->saved_in[i], &n->version_in[i]);
    }
    for (int k = 0; k < nout && st == WT_OK; k++) {
        o[k].ndim = outs[k]->ndim;
        memcpy(o[k].shape, outs[k]->shape, sizeof o[k].shape);
        if (k < WT_GRAD_MAX_SAVED_OUT && ((rule->save_out >> k) & 1u))
            st = save(ctx, outs[k], &n->saved_out[k], &n->version_out[k]);
    }
    /* The results' records, made before any is attached (so a failure
     * leaves every result as it was). */
    wt_grad_meta *metas[64] = {0};
    if (nout > 64) st = wt_fail(WT_ERR_UNSUPPORTED, "%s: more than 64 results to record", wt_op_table[c->op].name);
    for (int k = 0; k < nout && st == WT_OK; k++) {
        if (outs[k]->autograd) continue; /* an input returned as it is */
        if (!(metas[k] = meta_new()))
            st = wt_fail(WT_ERR_OUT_OF_MEMORY, "%s: out of host memory for autograd", wt_op_table[c->op].name);
    }
    if (st != WT_OK) {
        for (int k = 0; k < nout && k < 64; k++) free(metas[k]);
        node_unref(n);
        return st;
    }
    for (int k = 0; k < nout; k++) {
        if (!metas[k]) continue;
        metas[k]->fn = n;
        metas[k]->slot = k;
        n->refcount++;
        outs[k]->autograd = metas[k];
    }
    node_unref(n); /* the results hold it now (freed here if none does) */
    return WT_OK;
}

wt_status wt_grad_end(wt_grad_call *c, wt_status st, int nout, wt_tensor **outs)
{
    c->ctx->grad_paused--;
    if (st == WT_OK && (st = record(c, nout, outs)) != WT_OK) release_outs(nout, outs);
    for (int k = 0; k < 2; k++) {
        wt_tensor_release(c->extra[k]);
        c->extra[k] = NULL;
    }
    return st;
}

/* ------------------------------------------------------------ public API */

wt_status wt_tensor_set_requires_grad(wt_tensor *t, bool requires_grad)
{
    const char *fn = "wt_tensor_set_requires_grad";
    if (!t) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: tensor is NULL", fn);
    if (t->autograd && t->autograd->fn)
        return wt_fail(WT_ERR_INVALID_ARGUMENT,
                       "%s: the tensor is the result of a recorded op (only leaves are set; wt_detach it first)", fn);
    if (requires_grad && t->dtype != WT_F32 && t->dtype != WT_F16)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: a %s tensor cannot require grad (f32 and f16 only)", fn,
                       wt_dtype_name(t->dtype));
    if (!requires_grad && !t->autograd) return WT_OK;
    wt_grad_meta *m = meta_of(t);
    if (!m) return wt_fail(WT_ERR_OUT_OF_MEMORY, "%s: out of host memory", fn);
    m->requires_grad = requires_grad;
    return WT_OK;
}

bool wt_tensor_requires_grad(const wt_tensor *t) { return tracks(t); }

wt_status wt_tensor_grad(const wt_tensor *t, wt_tensor **grad)
{
    const char *fn = "wt_tensor_grad";
    wt_status st = wt_check_out(fn, grad);
    if (st != WT_OK || (st = wt_check_tensor(fn, t)) != WT_OK) return st;
    if (!t->autograd || !t->autograd->grad) return WT_OK;
    return wt_tensor_share(t->autograd->grad, grad);
}

wt_status wt_tensor_set_grad_ready_hook(wt_tensor *t, wt_grad_ready_fn fn, void *user)
{
    const char *name = "wt_tensor_set_grad_ready_hook";
    wt_status st = wt_check_tensor(name, t);
    if (st != WT_OK) return st;
    if (t->autograd && t->autograd->fn)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: the tensor is the result of a recorded op; hooks go on leaves",
                       name);
    if (!fn && !t->autograd) return WT_OK;
    wt_grad_meta *m = meta_of(t);
    if (!m) return wt_fail(WT_ERR_OUT_OF_MEMORY, "%s: out of host memory", name);
    m->ready_fn = fn;
    m->ready_user = fn ? user : NULL;
    return WT_OK;
}

wt_status wt_tensor_zero_grad(wt_tensor *t)
{
    wt_status st = wt_check_tensor("wt_tensor_zero_grad", t);
    if (st != WT_OK) return st;
    if (t->autograd) {
        wt_tensor_release(t->autograd->grad);
        t->autograd->grad = NULL;
    }
    return WT_OK;
}

wt_status wt_detach(const wt_tensor *x, wt_tensor **out)
{
    wt_status st = wt_check_out("wt_detach", out);
    if (st != WT_OK || (st = wt_check_tensor("wt_detach", x)) != WT_OK) return st;
    wt_context *ctx = x->storage->ctx;
    ctx->grad_paused++; /* the view gets no record */
    st = wt_tensor_view(x, x->ndim, x->shape, x->strides, x->offset, out);
    ctx->grad_paused--;
    return st;
}

wt_status wt_no_grad_begin(wt_context *ctx)
{
    if (!ctx) return wt_fail(WT_ERR_INVALID_ARGUMENT, "wt_no_grad_begin: ctx is NULL");
    ctx->no_grad_depth++;
    return WT_OK;
}

wt_status wt_no_grad_end(wt_context *ctx)
{
    if (!ctx) return wt_fail(WT_ERR_INVALID_ARGUMENT, "wt_no_grad_end: ctx is NULL");
    if (ctx->no_grad_depth == 0)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "wt_no_grad_end: no wt_no_grad_begin is open");
    ctx->no_grad_depth--;
    return WT_OK;
}

bool wt_grad_enabled(const wt_context *ctx) { return ctx && ctx->no_grad_depth == 0; }

wt_status wt_grad_end_indexed(wt_grad_call *c, wt_status st, wt_tensor **out, wt_tensor *idx, wt_tensor **indices)
{
    wt_context *ctx = c->ctx;
    if (st == WT_OK) {
        wt_tensor_retain(idx);
        c->extra[0] = idx;
    }
    st = wt_grad_end(c, st, 1, out);
    if (st == WT_OK && indices) {
        *indices = idx;
        return st;
    }
    /* Indices nobody asked for: inside a scope the scope owns the
     * reference the call made, and releases it itself. */
    if (st != WT_OK || !ctx->scope) wt_tensor_release(idx);
    return st;
}

wt_grad_params wt_grad_axes(int naxes, const int *axes, bool keepdims, double d0)
{
    wt_grad_params p;
    memset(&p, 0, sizeof p);
    p.i[0] = naxes;
    for (int k = 0; k < naxes && k < WT_MAX_DIMS && axes; k++) p.i[1 + k] = axes[k];
    p.b[0] = keepdims;
    p.d[0] = d0;
    return p;
}

wt_grad_params wt_grad_ints(int n, const int *v)
{
    wt_grad_params p;
    memset(&p, 0, sizeof p);
    for (int k = 0; k < n && k < (int)(sizeof p.i / sizeof p.i[0]) && v; k++) p.i[k] = v[k];
    return p;
}

bool wt_grad_tracks(const wt_tensor *t) { return tracks(t); }

bool wt_grad_recording(const wt_context *ctx) { return !ctx->grad_paused && !ctx->no_grad_depth; }

/* Options structs as the call gave them, over the defaults (a bad struct
 * is the op's to refuse; the defaults stand then). */
wt_status wt_grad_hook_list(wt_op op, int n, wt_tensor *const *xs, int axis, bool *handled,
                            wt_grad_call *c)
{
    *handled = false;
    if (n < 1 || !xs) return WT_OK;
    bool any = false;
    for (int i = 0; i < n; i++) any = any || wt_grad_tracks(xs[i]);
    if (!any) return WT_OK;
    if (n > WT_GRAD_MAX_IN) {
        for (int i = 0; i < n; i++)
            if (xs[i] && wt_grad_recording(xs[i]->storage->ctx))
                return wt_fail(WT_ERR_UNSUPPORTED,
                               "%s: more than %d tensors that require grad are not recorded yet (join them in "
                               "groups of %d)",
                               wt_op_table[op].name, WT_GRAD_MAX_IN, WT_GRAD_MAX_IN);
        return WT_OK;
    }
    memset(c, 0, sizeof *c);
    c->op = op;
    c->nin = n;
    for (int i = 0; i < n; i++) c->in[i] = xs[i];
    c->p.i[0] = axis;
    *handled = wt_grad_begin(c);
    return WT_OK;
}
