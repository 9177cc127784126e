#include "input_spec.h"

#include "test_util.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --------------------------------------------------------------- parsing */

static bool parse_list(const char **p, char open, char close, int64_t *vals, int *n, int max)
{
    const char *s = *p;
    if (*s != open)
        return false;
    s++;
    *n = 0;
    while (isspace((unsigned char)*s))
        s++;
    if (*s == close) {
        *p = s + 1;
        return true;
    }
    for (;;) {
        char *end;
        long long v = strtoll(s, &end, 10);
        if (end == s || *n >= max)
            return false;
        vals[(*n)++] = v;
        s = end;
        while (isspace((unsigned char)*s))
            s++;
        if (*s == close) {
            *p = s + 1;
            return true;
        }
        if (*s != ',')
            return false;
        s++;
    }
}

bool spec_parse(const char *text, input_spec *out, char *err, size_t err_size)
{
    memset(out, 0, sizeof *out);
    const char *p = text;
    if (!parse_list(&p, '[', ']', out->shape, &out->ndim, WT_MAX_DIMS)) {
        snprintf(err, err_size, "bad shape in \"%s\"", text);
        return false;
    }
    while (*p == '.') {
        p++;
        if (out->nviews >= SPEC_MAX_VIEWS) {
            snprintf(err, err_size, "too many views in \"%s\"", text);
            return false;
        }
        view_step *v = &out->views[out->nviews++];
        switch (*p) {
        case 'T': v->kind = VIEW_TRANSPOSE; break;
        case 'P': v->kind = VIEW_PERMUTE; break;
        case 'S': v->kind = VIEW_SLICE; break;
        case 'E': v->kind = VIEW_EXPAND; break;
        case 'R': v->kind = VIEW_RESHAPE; break;
        default:
            snprintf(err, err_size, "unknown view '%c' in \"%s\"", *p, text);
            return false;
        }
        p++;
        if (!parse_list(&p, '(', ')', v->args, &v->nargs, WT_MAX_DIMS)) {
            snprintf(err, err_size, "bad view arguments in \"%s\"", text);
            return false;
        }
        bool ok = (v->kind == VIEW_TRANSPOSE && v->nargs == 2) ||
                  (v->kind == VIEW_SLICE && v->nargs == 4) ||
                  v->kind == VIEW_PERMUTE || v->kind == VIEW_EXPAND || v->kind == VIEW_RESHAPE;
        if (!ok) {
            snprintf(err, err_size, "wrong argument count in \"%s\"", text);
            return false;
        }
    }
    if (*p) {
        snprintf(err, err_size, "trailing text in \"%s\"", text);
        return false;
    }
    return true;
}

/* ------------------------------------------------------------ host side */

int64_t shape_numel(int ndim, const int64_t *shape)
{
    int64_t n = 1;
    for (int i = 0; i < ndim; i++)
        n *= shape[i];
    return n;
}

bool host_alloc(host_tensor *t, int ndim, const int64_t *shape)
{
    memset(t, 0, sizeof *t);
    t->ndim = ndim;
    for (int i = 0; i < ndim; i++)
        t->shape[i] = shape[i];
    t->numel = shape_numel(ndim, shape);
    t->data = malloc((size_t)(t->numel > 0 ? t->numel : 1) * sizeof(float));
    return t->data != NULL;
}

void host_free(host_tensor *t)
{
    free(t->data);
    memset(t, 0, sizeof *t);
}

/* Gathers x's data seen through (shape, strides, offset) into out. */
static bool gather(const host_tensor *x, int ndim, const int64_t *shape, const int64_t *strides,
                   int64_t offset, host_tensor *out)
{
    if (!host_alloc(out, ndim, shape))
        return false;
    int64_t idx[WT_MAX_DIMS] = {0};
    for (int64_t i = 0; i < out->numel; i++) {
        int64_t src = offset;
        for (int d = 0; d < ndim; d++)
            src += idx[d] * strides[d];
        out->data[i] = x->data[src];
        for (int d = ndim - 1; d >= 0; d--) {
            if (++idx[d] < shape[d])
                break;
            idx[d] = 0;
        }
    }
    return true;
}

static int norm_axis(int64_t axis, int ndim) { return (int)(axis < 0 ? axis + ndim : axis); }

bool host_apply_view(const host_tensor *x, const view_step *v, host_tensor *out)
{
    int64_t strides[WT_MAX_DIMS], shape[WT_MAX_DIMS], nstrides[WT_MAX_DIMS];
    int64_t st = 1;
    for (int d = x->ndim - 1; d >= 0; d--) {
        strides[d] = st;
        st *= x->shape[d];
    }
    int nd = x->ndim;
    switch (v->kind) {
    case VIEW_TRANSPOSE: {
        int a = norm_axis(v->args[0], nd), b = norm_axis(v->args[1], nd);
        if (a < 0 || a >= nd || b < 0 || b >= nd)
            return false;
        memcpy(shape, x->shape, sizeof shape);
        memcpy(nstrides, strides, sizeof nstrides);
        shape[a] = x->shape[b], shape[b] = x->shape[a];
        nstrides[a] = strides[b], nstrides[b] = strides[a];
        return gather(x, nd, shape, nstrides, 0, out);
    }
    case VIEW_PERMUTE: {
        if (v->nargs != nd)
            return false;
        for (int i = 0; i < nd; i++) {
            int a = norm_axis(v->args[i], nd);
            if (a < 0 || a >= nd)
                return false;
            shape[i] = x->shape[a];
            nstrides[i] = strides[a];
        }
        return gather(x, nd, shape, nstrides, 0, out);
    }
    case VIEW_SLICE: {
        int axis = norm_axis(v->args[0], nd);
        if (axis < 0 || axis >= nd || v->args[3] < 1)
            return false;
        int64_t n = x->shape[axis], start = v->args[1], stop = v->args[2], step = v->args[3];
        /* Python's clamping. */
        if (start < 0)
            start += n;
        if (stop < 0)
            stop += n;
        start = start < 0 ? 0 : start > n ? n : start;
        stop = stop < 0 ? 0 : stop > n ? n : stop;
        int64_t count = stop > start ? (stop - start + step - 1) / step : 0;
        memcpy(shape, x->shape, sizeof shape);
        memcpy(nstrides, strides, sizeof nstrides);
        shape[axis] = count;
        nstrides[axis] = strides[axis] * step;
        return gather(x, nd, shape, nstrides, count > 0 ? start * strides[axis] : 0, out);
    }
    case VIEW_EXPAND: {
        int ond = v->nargs;
        if (ond < nd)
            return false;
        for (int i = 0; i < ond; i++) {
            int xi = i - (ond - nd);
            shape[i] = v->args[i];
            if (xi < 0) {
                nstrides[i] = 0;
            } else if (x->shape[xi] == v->args[i]) {
                nstrides[i] = strides[xi];
            } else if (x->shape[xi] == 1) {
                nstrides[i] = 0;
            } else {
                return false;
            }
        }
        return gather(x, ond, shape, nstrides, 0, out);
    }
    case VIEW_RESHAPE: {
        int ond = v->nargs, infer = -1;
        int64_t known = 1;
        for (int i = 0; i < ond; i++) {
            shape[i] = v->args[i];
            if (shape[i] == -1)
                infer = i;
            else
                known *= shape[i];
        }
        if (infer >= 0)
            shape[infer] = known ? x->numel / known : 0;
        if (shape_numel(ond, shape) != x->numel)
            return false;
        if (!host_alloc(out, ond, shape))
            return false;
        if (x->numel > 0)
            memcpy(out->data, x->data, (size_t)x->numel * sizeof(float));
        return true;
    }
    }
    return false;
}

wt_status device_apply_view(const wt_tensor *x, const view_step *v, wt_tensor **out)
{
    switch (v->kind) {
    case VIEW_TRANSPOSE:
        return wt_transpose(x, (int)v->args[0], (int)v->args[1], out);
    case VIEW_PERMUTE: {
        int perm[WT_MAX_DIMS];
        for (int i = 0; i < v->nargs; i++)
            perm[i] = (int)v->args[i];
        return wt_permute(x, perm, out);
    }
    case VIEW_SLICE:
        return wt_slice(x, (int)v->args[0], v->args[1], v->args[2], v->args[3], out);
    case VIEW_EXPAND:
        return wt_expand(x, v->nargs, v->args, out);
    case VIEW_RESHAPE:
        return wt_reshape(x, v->nargs, v->args, out);
    }
    return WT_ERR_INVALID_ARGUMENT;
}

/* ---------------------------------------------------------------- inputs */

void input_free(test_input *in)
{
    host_free(&in->base);
    host_free(&in->host);
    wt_tensor_release(in->dev);
    wt_tensor_release(in->dev_base);
    memset(in, 0, sizeof *in);
}

wt_status input_build(wt_context *ctx, const input_spec *spec, float lo, float hi,
                      const float *special, int nspecial, test_input *out, char *err,
                      size_t err_size)
{
    memset(out, 0, sizeof *out);
    if (!host_alloc(&out->base, spec->ndim, spec->shape)) {
        snprintf(err, err_size, "host allocation failed");
        return WT_ERR_OUT_OF_MEMORY;
    }
    for (int64_t i = 0; i < out->base.numel; i++)
        out->base.data[i] = nspecial > 0 ? special[i % nspecial] : test_rng_uniform(lo, hi);

    wt_status s = wt_tensor_from_data(ctx, WT_F32, spec->ndim, spec->shape, out->base.data,
                                      &out->dev_base);
    if (s != WT_OK) {
        snprintf(err, err_size, "wt_tensor_from_data: %s (%s)", wt_status_string(s), wt_last_error());
        input_free(out);
        return s;
    }
    /* Host copy of the current view, walked through the chain. */
    host_tensor cur;
    if (!host_alloc(&cur, out->base.ndim, out->base.shape)) {
        input_free(out);
        return WT_ERR_OUT_OF_MEMORY;
    }
    if (cur.numel > 0)
        memcpy(cur.data, out->base.data, (size_t)cur.numel * sizeof(float));
    wt_tensor *dev = out->dev_base;
    wt_tensor_retain(dev);
    for (int i = 0; i < spec->nviews; i++) {
        host_tensor next;
        if (!host_apply_view(&cur, &spec->views[i], &next)) {
            snprintf(err, err_size, "view %d does not apply on the host (bad test table)", i);
            host_free(&cur);
            wt_tensor_release(dev);
            input_free(out);
            return WT_ERR_INVALID_ARGUMENT;
        }
        host_free(&cur);
        cur = next;
        wt_tensor *v = NULL;
        s = device_apply_view(dev, &spec->views[i], &v);
        wt_tensor_release(dev);
        dev = v;
        if (s != WT_OK) {
            snprintf(err, err_size, "view %d: %s (%s)", i, wt_status_string(s), wt_last_error());
            host_free(&cur);
            input_free(out);
            return s;
        }
    }
    out->host = cur;
    out->dev = dev;
    return WT_OK;
}
