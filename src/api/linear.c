/* linear: x @ w^T + bias with w stored [out_features, in_features]. w^T is
 * a transposed view handed to wt_matmul, whose backends read any strides,
 * so the weight is never copied; x's leading axes fold into one matrix
 * (one GEMM instead of a batch of them; a non-contiguous x is gathered
 * for that, never w). */
#include "api/api.h"
#include "autograd/tape.h"

wt_status wt_linear(const wt_tensor *x, const wt_tensor *w, const wt_tensor *bias, wt_tensor **out)
{
    WT_GRAD_HOOK((x, w, bias, NULL), 1, out, wt_linear(x, w, bias, out),
                 .op = WT_OP_LINEAR, .nin = 3, .in = {x, w, bias});
    const char *fn = "wt_linear";
    wt_status st = wt_check_out(fn, out);
    if (st != WT_OK || (st = wt_check_input(fn, x)) != WT_OK || (st = wt_check_input(fn, w)) != WT_OK ||
        (st = wt_check_same_context(fn, x, w)) != WT_OK)
        return st;
    char b1[160], b2[160];
    if (w->ndim != 2)
        return wt_fail(WT_ERR_SHAPE, "%s: w must be 2-D [out_features, in_features] (got %s)", fn,
                       wt_shape_str(w->ndim, w->shape, b1, sizeof b1));
    if (x->ndim < 1 || x->shape[x->ndim - 1] != w->shape[1])
        return wt_fail(WT_ERR_SHAPE, "%s: x %s does not end in in_features = %lld of w %s", fn,
                       wt_shape_str(x->ndim, x->shape, b1, sizeof b1), (long long)w->shape[1],
                       wt_shape_str(w->ndim, w->shape, b2, sizeof b2));
    if (bias) {
        if ((st = wt_check_input(fn, bias)) != WT_OK || (st = wt_check_same_context(fn, x, bias)) != WT_OK) return st;
        if (bias->ndim != 1 || bias->shape[0] != w->shape[0])
            return wt_fail(WT_ERR_SHAPE, "%s: bias must have shape [%lld] (got %s)", fn, (long long)w->shape[0],
                           wt_shape_str(bias->ndim, bias->shape, b1, sizeof b1));
    }
    wt_tensor *wt = NULL, *x2 = NULL, *y = NULL, *y2 = NULL;
    if ((st = wt_transpose(w, 0, 1, &wt)) != WT_OK) return st;
    const wt_tensor *xa = x;
    if (x->ndim > 2) {
        /* One [rows, in] matrix (x gathered first if its leading axes do
         * not fold: a batched product over unfoldable axes would expand
         * w^T over the batch, copying w). */
        const int64_t shape2[2] = {-1, x->shape[x->ndim - 1]};
        if ((st = wt_reshape(x, 2, shape2, &x2)) != WT_OK) goto done;
        xa = x2;
    }
    if ((st = wt_matmul(xa, wt, &y)) != WT_OK) goto done;
    if (x2) {
        int64_t oshape[WT_MAX_DIMS];
        for (int i = 0; i < x->ndim - 1; i++) oshape[i] = x->shape[i];
        oshape[x->ndim - 1] = w->shape[0];
        if ((st = wt_reshape(y, x->ndim, oshape, &y2)) != WT_OK) goto done;
        wt_tensor_release(y);
        y = y2;
        y2 = NULL;
    }
    if (bias) {
        st = wt_add(y, bias, &y2);
        wt_tensor_release(y);
        y = y2;
    }
done:
    wt_tensor_release(wt);
    wt_tensor_release(x2);
    if (st != WT_OK) {
        wt_tensor_release(y);
        return st;
    }
    *out = y;
    return WT_OK;
}
