/* Argument checks shared by every front-end. */
#include "api/api.h"

#include <stdio.h>
#include <string.h>

wt_status wt_check_tensor(const char *fn, const wt_tensor *x)
{
    if (!x) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: input tensor is NULL", fn);
    return WT_OK;
}

wt_status wt_check_input(const char *fn, const wt_tensor *x)
{
    if (!x) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: input tensor is NULL", fn);
    if (x->dtype != WT_F32 && x->dtype != WT_F16)
        return wt_fail(WT_ERR_UNSUPPORTED, "%s: dtype %s is not supported (f32 and f16 only)", fn,
                       wt_dtype_name(x->dtype));
    return WT_OK;
}

wt_status wt_check_out(const char *fn, wt_tensor **out)
{
    if (!out) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: out is NULL", fn);
    *out = NULL;
    return WT_OK;
}

wt_status wt_check_same_context(const char *fn, const wt_tensor *a, const wt_tensor *b)
{
    if (a->storage->ctx != b->storage->ctx)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: tensors belong to different contexts", fn);
    return WT_OK;
}

wt_status wt_check_step_value(const char *fn, const char *what, const wt_tensor *x, const wt_tensor *t)
{
    wt_status st = wt_check_tensor(fn, t);
    if (st != WT_OK) return st;
    if ((st = wt_check_same_context(fn, x, t)) != WT_OK) return st;
    if (t->dtype != WT_I32 || t->numel != 1)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: %s must be an i32 tensor of one element (got %s, %lld elements)",
                       fn, what, wt_dtype_name(t->dtype), (long long)t->numel);
    return WT_OK;
}

wt_status wt_check_shape(const char *fn, int ndim, const int64_t *shape)
{
    if (ndim < 0 || ndim > WT_MAX_DIMS)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: ndim %d is outside [0, %d]", fn, ndim, WT_MAX_DIMS);
    if (ndim > 0 && !shape) return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: shape is NULL", fn);
    for (int i = 0; i < ndim; i++)
        if (shape[i] < 0)
            return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: shape[%d] = %lld is negative", fn, i,
                           (long long)shape[i]);
    return WT_OK;
}

const char *wt_shape_str(int ndim, const int64_t *shape, char *buf, size_t size)
{
    size_t n = 0;
    n += (size_t)snprintf(buf + n, size - n, "[");
    for (int i = 0; i < ndim && n < size; i++)
        n += (size_t)snprintf(buf + n, size - n, i ? ",%lld" : "%lld", (long long)shape[i]);
    if (n < size) snprintf(buf + n, size - n, "]");
    return buf;
}

bool wt_norm_axis(int axis, int ndim, int *out)
{
    if (axis < -ndim || axis >= ndim) return false;
    *out = axis < 0 ? axis + ndim : axis;
    return true;
}

/* --- transformer ops --- */
bool wt_fold_axes(const wt_tensor *x, int first, int last, int64_t *size, int64_t *stride)
{
    int n = last - first;
    int64_t shape[WT_MAX_DIMS], str[1][WT_MAX_DIMS];
    *size = 1;
    for (int i = 0; i < n; i++) {
        shape[i] = x->shape[first + i], str[0][i] = x->strides[first + i];
        *size *= shape[i];
    }
    *stride = 1;
    if (n == 0) return true;
    wt_coalesce(&n, shape, 1, str);
    if (n == 1) *stride = str[0][0];
    return n <= 1;
}

/* --- convolution, pooling, normalisation --- */
wt_status wt_read_options(const char *fn, const char *what, const void *in, size_t min_size, void *out,
                          size_t size)
{
    uint32_t given;
    memcpy(&given, in, sizeof given);
    if (given < min_size || given > size)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: options struct_size %u is not valid (call %s)", fn,
                       (unsigned)given, what);
    memcpy(out, in, given);
    memcpy(out, &(uint32_t){(uint32_t)size}, sizeof(uint32_t));
    return WT_OK;
}
