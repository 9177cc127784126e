/* The backward pass: from outputs and their seed gradients, every node
 * reached, in an order where a node runs once all the nodes that use its
 * results have given it their gradients (Kahn's algorithm on the graph).
 * Leaf gradients are gathered aside and committed only when the whole
 * pass succeeded, so a failure leaves every .grad as it was. A leaf with
 * a gradient-ready hook gets its final .grad made as soon as its last
 * contribution arrived (each leaf counts the edges of the pass into it),
 * and the hook sees it then; the commit just installs it. */
#include "autograd/tape.h"

#include <stdlib.h>
#include <string.h>

typedef struct pass {
    wt_context *ctx;
    bool hooks;            /* gradient-ready hooks fire (not in wt_grad) */
    wt_grad_node **nodes;
    int n, cap;
    wt_grad_meta **leaves; /* leaves that received a gradient */
    int nleaves, leaves_cap;
} pass;

static wt_status grow(void **arr, int *cap, int need, size_t size)
{
    if (need <= *cap) return WT_OK;
    int c = *cap ? *cap * 2 : 32;
    while (c < need) c *= 2;
    void *p = realloc(*arr, (size_t)c * size);
    if (!p) return wt_fail(WT_ERR_OUT_OF_MEMORY, "backward: out of host memory");
    *arr = p;
    *cap = c;
    return WT_OK;
}

static const char *op_name(wt_op op) { return wt_op_table[op].name; }

static bool tracks_root(const wt_tensor *t)
{
    return t->autograd && (t->autograd->requires_grad || t->autograd->fn);
}

static wt_status check_saved(const wt_grad_node *n, const wt_tensor *t, uint64_t version, const char *which)
{
    if (!t || t->storage->version == version) return WT_OK;
    return wt_fail(WT_ERR_INVALID_ARGUMENT,
                   "backward: %s of %s, saved for its gradient, was modified in place since (version %llu, now "
                   "%llu); keep a copy, or modify it after backward",
                   which, op_name(n->op), (unsigned long long)version, (unsigned long long)t->storage->version);
}

/* Every node reachable from the roots, each once, with the count of edges
 * into it from nodes of the pass; refuses freed graphs and changed saved
 * tensors before anything is computed. */
static wt_status collect(pass *ps, int nroots, wt_tensor *const *roots)
{
    wt_status st = WT_OK;
    for (int r = 0; r < nroots && st == WT_OK; r++) {
        wt_grad_node *fn = roots[r]->autograd->fn;
        if (!fn || fn->topo >= 0) continue;
        if ((st = grow((void **)&ps->nodes, &ps->cap, ps->n + 1, sizeof *ps->nodes)) != WT_OK) break;
        fn->topo = ps->n;
        fn->deps = 0;
        ps->nodes[ps->n++] = fn;
    }
    /* Breadth first over the list itself. */
    for (int i = 0; i < ps->n && st == WT_OK; i++) {
        wt_grad_node *n = ps->nodes[i];
        if (n->released)
            return wt_fail(WT_ERR_INVALID_ARGUMENT,
                           "backward: the graph through %s was freed by an earlier backward; pass retain_graph "
                           "(wt_backward_options) to the first one to go through it twice",
                           op_name(n->op));
        for (int k = 0; k < WT_GRAD_MAX_IN && st == WT_OK; k++)
            st = check_saved(n, n->saved_in[k], n->version_in[k], "an input");
        for (int k = 0; k < WT_GRAD_MAX_SAVED_OUT && st == WT_OK; k++)
            st = check_saved(n, n->saved_out[k], n->version_out[k], "the result");
        for (int k = 0; k < 2 && st == WT_OK; k++)
            st = check_saved(n, n->extra[k], n->version_extra[k], "a tensor");
        for (int k = 0; k < n->nin && st == WT_OK; k++) {
            wt_grad_node *up = n->next[k].fn;
            if (!up) continue;
            if (up->topo < 0) {
                if ((st = grow((void **)&ps->nodes, &ps->cap, ps->n + 1, sizeof *ps->nodes)) != WT_OK) break;
                up->topo = ps->n;
                up->deps = 0;
                ps->nodes[ps->n++] = up;
            }
            up->deps++;
        }
    }
    return st;
}

/* *acc += g (takes g's reference). Gradients are f32. */
static wt_status accumulate(wt_tensor **acc, wt_tensor *g)
{
    wt_status st = WT_OK;
    if (g->dtype != WT_F32) {
        wt_tensor *c = NULL;
        st = wt_cast(g, WT_F32, &c);
        wt_tensor_release(g);
        if (st != WT_OK) return st;
        g = c;
    }
    if (!*acc) {
        *acc = g;
        return WT_OK;
    }
    wt_tensor *sum = NULL;
    st = wt_add(*acc, g, &sum);
    wt_tensor_release(g);
    if (st != WT_OK) return st;
    wt_tensor_release(*acc);
    *acc = sum;
    return WT_OK;
}

static wt_status to_leaf(pass *ps, wt_grad_meta *m, wt_tensor *g)
{
    if (!m->pending) {
        wt_status st = grow((void **)&ps->leaves, &ps->leaves_cap, ps->nleaves + 1, sizeof *ps->leaves);
        if (st != WT_OK) {
            wt_tensor_release(g);
            return st;
        }
        ps->leaves[ps->nleaves++] = m;
        m->refcount++;
    }
    return accumulate(&m->pending, g);
}

/* One contribution to leaf m has been handled (st: the pass so far).
 * With the last one, a hooked leaf's .grad-to-be is made and shown to its
 * hook: the same operations the commit would run, only earlier, so the
 * bits are the same as without a hook. */
static wt_status leaf_edge_done(pass *ps, wt_grad_meta *m, wt_status st)
{
    if (--m->ready_edges > 0 || st != WT_OK || !ps->hooks || !m->ready_fn || !m->pending || m->ready_final)
        return st;
    wt_tensor *fin = NULL;
    st = m->grad ? wt_add(m->grad, m->pending, &fin) : wt_contiguous(m->pending, &fin);
    if (st != WT_OK) return st;
    wt_tensor_release(m->pending);
    m->pending = fin;
    m->ready_final = true;
    m->ready_fn(fin, m->ready_user);
    return WT_OK;
}

/* Every leaf's count of contributions to come: an edge from each node of
 * the pass, plus the seed of a root that is a leaf. */
static void count_leaf_edges(pass *ps, int nroots, wt_tensor *const *roots)
{
    for (int pass2 = 0; pass2 < 2; pass2++) {
        for (int i = 0; i < ps->n; i++)
            for (int k = 0; k < ps->nodes[i]->nin; k++) {
                wt_grad_meta *m = ps->nodes[i]->next[k].leaf;
                if (m) m->ready_edges = pass2 ? m->ready_edges + 1 : 0;
            }
        for (int r = 0; r < nroots; r++) {
            wt_grad_meta *m = roots[r]->autograd;
            if (!m->fn) m->ready_edges = pass2 ? m->ready_edges + 1 : 0;
        }
    }
}

static bool same_shape(const wt_tensor *t, int ndim, const int64_t *shape)
{
    return t->ndim == ndim && (ndim == 0 || memcmp(t->shape, shape, sizeof shape[0] * (size_t)ndim) == 0);
}

static wt_status zeros(wt_context *ctx, int ndim, const int64_t *shape, wt_tensor **out)
{
    return wt_tensor_zeros(ctx, WT_F32, ndim, shape, out);
}

/* Runs n's rule on the gradients of its outputs and passes the results on. */
static wt_status run_node(pass *ps, wt_grad_node *n, int nwant, const wt_tensor *const *want, wt_tensor **wanted)
{
    const wt_grad_rule *rule = &wt_grad_rules[n->op];
    wt_status st = WT_OK;
    bool any = false;
    for (int k = 0; k < n->nout; k++) any = any || n->out[k].grad;
    /* Inputs asked for by wt_grad that are results of this node. */
    for (int j = 0; j < nwant && any; j++) {
        const wt_grad_meta *m = want[j]->autograd;
        if (m && m->fn == n && n->out[m->slot].grad && !wanted[j]) {
            wt_tensor_retain(n->out[m->slot].grad);
            wanted[j] = n->out[m->slot].grad;
        }
    }
    wt_tensor *gin[WT_GRAD_MAX_IN] = {0};
    if (any) {
        for (int k = 0; k < n->nout && st == WT_OK; k++)
            if (!n->out[k].grad) st = zeros(ps->ctx, n->out[k].ndim, n->out[k].shape, &n->out[k].grad);
        if (st == WT_OK) {
            wt_tensor *gout[64];
            for (int k = 0; k < n->nout && k < 64; k++) gout[k] = n->out[k].grad;
            st = rule->rule(n, gout, gin);
            if (st != WT_OK) wt_error_prefix(op_name(n->op));
        }
    }
    for (int i = 0; i < n->nin; i++) {
        wt_tensor *g = gin[i];
        gin[i] = NULL;
        wt_grad_meta *leaf = n->next[i].leaf;
        if (st != WT_OK || !g || !wt_grad_needs(n, i)) {
            wt_tensor_release(g);
        } else if (!same_shape(g, n->in_ndim[i], n->in_shape[i])) {
            wt_tensor_release(g);
            st = wt_fail(WT_ERR_BACKEND, "backward: the rule of %s gave input %d a gradient of another shape",
                         op_name(n->op), i);
        } else if (leaf) {
            st = to_leaf(ps, leaf, g);
        } else {
            st = accumulate(&n->next[i].fn->out[n->next[i].slot].grad, g);
        }
        if (leaf) st = leaf_edge_done(ps, leaf, st);
    }
    for (int k = 0; k < n->nout; k++) {
        wt_tensor_release(n->out[k].grad);
        n->out[k].grad = NULL;
    }
    return st;
}

static void pass_end(pass *ps)
{
    for (int i = 0; i < ps->n; i++) {
        wt_grad_node *n = ps->nodes[i];
        n->topo = -1;
        for (int k = 0; k < n->nout; k++) {
            wt_tensor_release(n->out[k].grad);
            n->out[k].grad = NULL;
        }
    }
    for (int i = 0; i < ps->nleaves; i++) {
        wt_grad_meta *m = ps->leaves[i];
        wt_tensor_release(m->pending);
        m->pending = NULL;
        m->ready_final = false;
        wt_grad_meta_drop(m);
    }
    free(ps->nodes);
    free(ps->leaves);
}

/* The engine of wt_backward_ex and wt_grad: want NULL accumulates into
 * the leaves' .grad; else the gradients of want[0..nwant-1] are returned
 * in wanted (NULL where none reached) and no .grad changes. */
static wt_status run(const char *fn, int nroots, wt_tensor *const *roots, wt_tensor *const *seeds, bool retain,
                     int nwant, const wt_tensor *const *want, wt_tensor **wanted)
{
    if (nroots < 1 || !roots) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: no outputs", fn);
    wt_context *ctx = NULL;
    for (int r = 0; r < nroots; r++) {
        const wt_tensor *t = roots[r];
        if (!t) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: output %d is NULL", fn, r);
        if (!ctx) ctx = t->storage->ctx;
        if (t->storage->ctx != ctx)
            return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: the outputs belong to different contexts", fn);
        if (!tracks_root(t)) {
            if (t->autograd && t->autograd->nondiff_op >= 0)
                return wt_fail(WT_ERR_INVALID_ARGUMENT,
                               "%s: output %d comes from %s, which is not differentiable (its result does not "
                               "require grad)",
                               fn, r, op_name((wt_op)t->autograd->nondiff_op));
            return wt_fail(WT_ERR_INVALID_ARGUMENT,
                           "%s: output %d does not require grad (no input of the ops that made it requires "
                           "grad, or it was made with recording off)",
                           fn, r);
        }
        const wt_tensor *s = seeds ? seeds[r] : NULL;
        if (!s && t->numel != 1)
            return wt_fail(WT_ERR_INVALID_ARGUMENT,
                           "%s: output %d has %lld elements; a seed gradient is needed unless it has one", fn, r,
                           (long long)t->numel);
        if (s && (s->storage->ctx != ctx || !same_shape(s, t->ndim, t->shape)))
            return wt_fail(WT_ERR_SHAPE, "%s: the seed of output %d is not of its shape and context", fn, r);
    }
    for (int j = 0; j < nwant; j++) {
        if (!want[j]) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: input %d is NULL", fn, j);
        if (!tracks_root(want[j]))
            return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: input %d does not require grad", fn, j);
        wanted[j] = NULL;
    }
    wt_grad_pause pz;
    wt_grad_pause_begin(ctx, &pz);
    pass ps = {.ctx = ctx, .hooks = want == NULL};
    wt_status st = collect(&ps, nroots, roots);
    if (st == WT_OK) count_leaf_edges(&ps, nroots, roots);
    /* The seeds. */
    for (int r = 0; r < nroots && st == WT_OK; r++) {
        wt_tensor *g = NULL;
        const wt_tensor *s = seeds ? seeds[r] : NULL;
        st = s ? wt_cast(s, WT_F32, &g) : wt_tensor_full(ctx, WT_F32, roots[r]->ndim, roots[r]->shape, 1.0, &g);
        if (st != WT_OK) break;
        wt_grad_meta *m = roots[r]->autograd;
        if (m->fn) st = accumulate(&m->fn->out[m->slot].grad, g);
        else st = leaf_edge_done(&ps, m, to_leaf(&ps, m, g));
    }
    /* Kahn: a node runs when every node using its results has run. */
    int head = 0;
    wt_grad_node **ready = NULL;
    int ready_cap = 0, nready = 0;
    if (st == WT_OK) st = grow((void **)&ready, &ready_cap, ps.n > 0 ? ps.n : 1, sizeof *ready);
    for (int i = 0; i < ps.n && st == WT_OK; i++)
        if (ps.nodes[i]->deps == 0) ready[nready++] = ps.nodes[i];
    while (st == WT_OK && head < nready) {
        wt_grad_node *n = ready[head++];
        st = run_node(&ps, n, nwant, want, wanted);
        if (!retain) {
            wt_grad_node_release_saved(n);
            n->released = true;
        }
        for (int i = 0; i < n->nin; i++) {
            wt_grad_node *up = n->next[i].fn;
            if (up && --up->deps == 0) ready[nready++] = up;
        }
    }
    free(ready);
    if (st == WT_OK) {
        if (want) {
            for (int i = 0; i < ps.nleaves; i++) {
                wt_grad_meta *m = ps.leaves[i];
                for (int j = 0; j < nwant; j++)
                    if (want[j]->autograd == m && !wanted[j]) {
                        wt_tensor_retain(m->pending);
                        wanted[j] = m->pending;
                    }
            }
        } else {
            /* Commit: every new .grad is made before any is replaced. */
            wt_tensor **next = calloc((size_t)(ps.nleaves ? ps.nleaves : 1), sizeof *next);
            if (!next) st = wt_fail(WT_ERR_OUT_OF_MEMORY, "%s: out of host memory", fn);
            for (int i = 0; i < ps.nleaves && st == WT_OK; i++) {
                wt_grad_meta *m = ps.leaves[i];
                if (m->ready_final) {
                    wt_tensor_retain(m->pending);
                    next[i] = m->pending;
                } else {
                    st = m->grad ? wt_add(m->grad, m->pending, &next[i]) : wt_contiguous(m->pending, &next[i]);
                }
            }
            for (int i = 0; i < ps.nleaves && next; i++) {
                if (st != WT_OK) {
                    wt_tensor_release(next[i]);
                    continue;
                }
                wt_tensor_release(ps.leaves[i]->grad);
                ps.leaves[i]->grad = next[i];
            }
            free(next);
        }
    }
    if (st != WT_OK)
        for (int j = 0; j < nwant; j++) {
            wt_tensor_release(wanted[j]);
            wanted[j] = NULL;
        }
    pass_end(&ps);
    wt_grad_pause_end(&pz);
    /* The caller's results join its open scope, as every result does. */
    for (int j = 0; j < nwant && st == WT_OK; j++)
        if (wanted[j] && (st = wt_scope_adopt(ctx, wanted[j])) != WT_OK)
            for (int k = 0; k < nwant; k++) {
                wt_tensor_release(wanted[k]);
                wanted[k] = NULL;
            }
    return st;
}

/* ------------------------------------------------------------ public API */

void wt_backward_options_init(wt_backward_options *opts)
{
    if (!opts) return;
    memset(opts, 0, sizeof *opts);
    opts->struct_size = (uint32_t)sizeof *opts;
}

static wt_status read_opts(const char *fn, const wt_backward_options *in, wt_backward_options *out)
{
    wt_backward_options_init(out);
    if (!in) return WT_OK;
    return wt_read_options(fn, "wt_backward_options_init", in, sizeof(uint32_t) + sizeof(bool), out, sizeof *out);
}

wt_status wt_backward(wt_tensor *loss)
{
    return run("wt_backward", 1, &loss, NULL, false, 0, NULL, NULL);
}

wt_status wt_backward_ex(int n, wt_tensor *const *outputs, wt_tensor *const *seeds, const wt_backward_options *opts)
{
    wt_backward_options o;
    wt_status st = read_opts("wt_backward_ex", opts, &o);
    if (st != WT_OK) return st;
    return run("wt_backward_ex", n, outputs, seeds, o.retain_graph, 0, NULL, NULL);
}

wt_status wt_grad(int noutputs, wt_tensor *const *outputs, wt_tensor *const *seeds, int ninputs,
                  wt_tensor *const *inputs, const wt_backward_options *opts, wt_tensor **grads)
{
    const char *fn = "wt_grad";
    if (ninputs < 1 || !inputs || !grads)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: no inputs, or grads is NULL", fn);
    for (int j = 0; j < ninputs; j++) grads[j] = NULL;
    wt_backward_options o;
    wt_status st = read_opts(fn, opts, &o);
    if (st != WT_OK) return st;
    return run(fn, noutputs, outputs, seeds, o.retain_graph, ninputs, (const wt_tensor *const *)inputs, grads);
}
