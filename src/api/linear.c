/* linear: x @ w^T + bias with w stored [out_features, in_features]. w^T is
 * a transposed view handed to wt_matmul, whose backends read any strides,
 * so the weight is never copied; x's leading axes fold into one matrix
 * (one GEMM instead of a batch of them; a non-contiguous x is gathered
 * for that, never w). The bias goes into the product (wt_matmul_fused:
 * on WebGPU added in the kernel's own stores, so no second pass over the
 * result) when operands share a float dtype and the product is a matrix
 * one; a matrix-vector product keeps its own kernels and a separate add. */
#include "api/api.h"
#include "autograd/tape.h"

#include <math.h>
#include <string.h>

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
    const int64_t K = w->shape[1], N = w->shape[0];
    const bool bias_in_product = bias && bias->dtype == x->dtype && w->dtype == x->dtype &&
                                 (x->dtype == WT_F32 || x->dtype == WT_F16) && K > 0 && N > 1 &&
                                 x->numel / K > 1 && wt_knob_count(WT_KNOB_BIAS_IN_PRODUCT, 1) != 0 &&
                                 wt_backend_runs(wt_ctx_of(x), WT_NODE_MATMUL_FUSED);
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
    st = bias_in_product ? wt_matmul_fused(xa, wt, bias, WT_MATMUL_ACT_NONE, &y) : wt_matmul(xa, wt, &y);
    if (st != WT_OK) goto done;
    if (x2) {
        int64_t oshape[WT_MAX_DIMS];
        for (int i = 0; i < x->ndim - 1; i++) oshape[i] = x->shape[i];
        oshape[x->ndim - 1] = w->shape[0];
        if ((st = wt_reshape(y, x->ndim, oshape, &y2)) != WT_OK) goto done;
        wt_tensor_release(y);
        y = y2;
        y2 = NULL;
    }
    if (bias && !bias_in_product) {
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
