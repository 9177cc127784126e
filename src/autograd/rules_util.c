/* Helpers the derivative rules share. */
#include "autograd/rules.h"

wt_status wt_grad_reduce_to(const wt_tensor *g, int ndim, const int64_t *shape, wt_tensor **out)
{
    int axes[WT_MAX_DIMS], naxes = 0;
    int lead = g->ndim - ndim;
    for (int i = 0; i < g->ndim; i++)
        if (i < lead || (shape[i - lead] == 1 && g->shape[i] != 1)) axes[naxes++] = i;
    if (naxes == 0 && lead == 0) {
        wt_tensor_retain((wt_tensor *)g);
        *out = (wt_tensor *)g;
        return WT_OK;
    }
    wt_tensor *s = NULL;
    wt_status st = wt_sum(g, naxes, axes, true, &s);
    if (st == WT_OK) st = wt_reshape(s, ndim, shape, out);
    wt_tensor_release(s);
    return st;
}

wt_status wt_grad_reduce_in(const wt_grad_node *n, int i, const wt_tensor *g, wt_tensor **out)
{
    return wt_grad_reduce_to(g, n->in_ndim[i], n->in_shape[i], out);
}

wt_status wt_grad_zeros_in(const wt_grad_node *n, int i, wt_tensor **out)
{
    return wt_tensor_zeros(n->ctx, WT_F32, n->in_ndim[i], n->in_shape[i], out);
}

wt_status wt_grad_identity(const wt_tensor *g, wt_tensor **out)
{
    wt_tensor_retain((wt_tensor *)g);
    *out = (wt_tensor *)g;
    return WT_OK;
}

wt_status wt_grad_reshape_in(const wt_grad_node *n, int i, const wt_tensor *g, wt_tensor **out)
{
    return wt_reshape(g, n->in_ndim[i], n->in_shape[i], out);
}

/* Reductions record p.i[0] = naxes, p.i[1..] = axes, p.b[0] = keepdims. */
int wt_grad_reduced_axes(const wt_grad_node *n, bool reduced[WT_MAX_DIMS])
{
    int ndim = n->in_ndim[0], naxes = (int)n->p.i[0];
    for (int a = 0; a < WT_MAX_DIMS; a++) reduced[a] = naxes == 0 && a < ndim;
    for (int k = 0; k < naxes; k++) {
        int a = (int)n->p.i[1 + k];
        if (a < 0) a += ndim;
        if (a >= 0 && a < ndim) reduced[a] = true;
    }
    int count = 0;
    for (int a = 0; a < ndim; a++) count += reduced[a];
    return count;
}

double wt_grad_reduced_count(const wt_grad_node *n)
{
    bool reduced[WT_MAX_DIMS];
    wt_grad_reduced_axes(n, reduced);
    double c = 1;
    for (int a = 0; a < n->in_ndim[0]; a++)
        if (reduced[a]) c *= (double)n->in_shape[0][a];
    return c;
}

wt_status wt_grad_keepdims(const wt_grad_node *n, const wt_tensor *t, wt_tensor **out)
{
    bool reduced[WT_MAX_DIMS];
    wt_grad_reduced_axes(n, reduced);
    int64_t shape[WT_MAX_DIMS];
    int ndim = n->in_ndim[0];
    for (int a = 0; a < ndim; a++) shape[a] = reduced[a] ? 1 : n->in_shape[0][a];
    return wt_reshape(t, ndim, shape, out);
}

wt_status wt_grad_expand_back(const wt_grad_node *n, const wt_tensor *t, wt_tensor **out)
{
    wt_tensor *k = NULL;
    wt_status st = wt_grad_keepdims(n, t, &k);
    if (st == WT_OK) st = wt_expand(k, n->in_ndim[0], n->in_shape[0], out);
    wt_tensor_release(k);
    return st;
}
