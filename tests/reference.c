#include "reference.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ref_free(ref_result *r)
{
    free(r->value);
    free(r->abs_terms);
    memset(r, 0, sizeof *r);
}

static bool ref_alloc(ref_result *r, int ndim, const int64_t *shape, bool with_terms)
{
    memset(r, 0, sizeof *r);
    r->ndim = ndim;
    for (int i = 0; i < ndim; i++)
        r->shape[i] = shape[i];
    r->numel = shape_numel(ndim, shape);
    size_t n = (size_t)(r->numel > 0 ? r->numel : 1);
    r->value = calloc(n, sizeof(double));
    r->abs_terms = with_terms ? calloc(n, sizeof(double)) : NULL;
    if (!r->value || (with_terms && !r->abs_terms)) {
        ref_free(r);
        return false;
    }
    return true;
}

static void shape_text(int ndim, const int64_t *shape, char *buf, size_t size)
{
    size_t n = (size_t)snprintf(buf, size, "[");
    for (int i = 0; i < ndim && n < size; i++)
        n += (size_t)snprintf(buf + n, size - n, "%s%lld", i ? "," : "", (long long)shape[i]);
    if (n < size)
        snprintf(buf + n, size - n, "]");
}

/* Row-major strides of shape, with 0 for the size-1 axes that broadcast
 * against out (shape right-aligned to out_ndim). */
static void broadcast_strides(int ndim, const int64_t *shape, int out_ndim, const int64_t *out_shape,
                              int64_t *strides)
{
    int64_t st = 1;
    for (int i = out_ndim - 1; i >= 0; i--) {
        int xi = i - (out_ndim - ndim);
        if (xi < 0) {
            strides[i] = 0;
            continue;
        }
        strides[i] = (shape[xi] == 1 && out_shape[i] != 1) ? 0 : st;
        st *= shape[xi];
    }
}

static bool broadcast_shapes(int na, const int64_t *sa, int nb, const int64_t *sb, int *nout,
                             int64_t *sout)
{
    int n = na > nb ? na : nb;
    for (int i = 0; i < n; i++) {
        int ia = i - (n - na), ib = i - (n - nb);
        int64_t da = ia >= 0 ? sa[ia] : 1, db = ib >= 0 ? sb[ib] : 1;
        if (da != db && da != 1 && db != 1)
            return false;
        sout[i] = da == 1 ? db : da;
    }
    *nout = n;
    return true;
}

bool ref_identity(const host_tensor *x, ref_result *out)
{
    if (!ref_alloc(out, x->ndim, x->shape, false))
        return false;
    for (int64_t i = 0; i < x->numel; i++)
        out->value[i] = x->data[i];
    return true;
}

bool ref_unary(double (*fn)(double), const host_tensor *x, ref_result *out)
{
    if (!ref_alloc(out, x->ndim, x->shape, false))
        return false;
    for (int64_t i = 0; i < x->numel; i++)
        out->value[i] = fn((double)x->data[i]);
    return true;
}

bool ref_binary(double (*fn)(double, double), const host_tensor *a, const host_tensor *b,
                ref_result *out, char *err, size_t err_size)
{
    int nd;
    int64_t shape[WT_MAX_DIMS] = {0};
    if (!broadcast_shapes(a->ndim, a->shape, b->ndim, b->shape, &nd, shape)) {
        char ta[96], tb[96];
        shape_text(a->ndim, a->shape, ta, sizeof ta);
        shape_text(b->ndim, b->shape, tb, sizeof tb);
        snprintf(err, err_size, "shapes %s and %s do not broadcast", ta, tb);
        return false;
    }
    if (!ref_alloc(out, nd, shape, false))
        return false;
    int64_t stra[WT_MAX_DIMS], strb[WT_MAX_DIMS], idx[WT_MAX_DIMS] = {0};
    broadcast_strides(a->ndim, a->shape, nd, shape, stra);
    broadcast_strides(b->ndim, b->shape, nd, shape, strb);
    int64_t oa = 0, ob = 0;
    for (int64_t i = 0; i < out->numel; i++) {
        out->value[i] = fn((double)a->data[oa], (double)b->data[ob]);
        /* Odometer step, keeping both input offsets in sync. */
        for (int d = nd - 1; d >= 0; d--) {
            oa += stra[d];
            ob += strb[d];
            if (++idx[d] < shape[d])
                break;
            oa -= stra[d] * shape[d];
            ob -= strb[d] * shape[d];
            idx[d] = 0;
        }
    }
    return true;
}

bool ref_matmul(const host_tensor *a, const host_tensor *b, ref_result *out, char *err,
                size_t err_size)
{
    char ta[96], tb[96];
    shape_text(a->ndim, a->shape, ta, sizeof ta);
    shape_text(b->ndim, b->shape, tb, sizeof tb);
    if (a->ndim < 1 || b->ndim < 1) {
        snprintf(err, err_size, "matmul of a 0-d operand (%s, %s)", ta, tb);
        return false;
    }
    /* NumPy: a 1-D a is [1,K] and b 1-D is [K,1]; the added axes go away. */
    int64_t M = a->ndim == 1 ? 1 : a->shape[a->ndim - 2];
    int64_t K = a->shape[a->ndim - 1];
    int64_t Kb = b->ndim == 1 ? b->shape[0] : b->shape[b->ndim - 2];
    int64_t N = b->ndim == 1 ? 1 : b->shape[b->ndim - 1];
    if (K != Kb) {
        snprintf(err, err_size, "inner dimensions differ: %s @ %s", ta, tb);
        return false;
    }
    int nba = a->ndim > 2 ? a->ndim - 2 : 0, nbb = b->ndim > 2 ? b->ndim - 2 : 0;
    int nbatch;
    int64_t batch[WT_MAX_DIMS];
    if (!broadcast_shapes(nba, a->shape, nbb, b->shape, &nbatch, batch)) {
        snprintf(err, err_size, "batch dimensions do not broadcast: %s @ %s", ta, tb);
        return false;
    }
    int64_t shape[WT_MAX_DIMS + 2];
    int nd = 0;
    for (int i = 0; i < nbatch; i++)
        shape[nd++] = batch[i];
    if (a->ndim > 1)
        shape[nd++] = M;
    if (b->ndim > 1)
        shape[nd++] = N;
    if (nd > WT_MAX_DIMS) {
        snprintf(err, err_size, "result has more than %d dimensions", WT_MAX_DIMS);
        return false;
    }
    if (!ref_alloc(out, nd, shape, true))
        return false;
    out->terms = K;
    /* Batch strides in units of whole matrices, 0 where broadcast. */
    int64_t sba[WT_MAX_DIMS], sbb[WT_MAX_DIMS];
    broadcast_strides(nba, a->shape, nbatch, batch, sba);
    broadcast_strides(nbb, b->shape, nbatch, batch, sbb);
    int64_t nb = shape_numel(nbatch, batch);
    int64_t idx[WT_MAX_DIMS] = {0};
    for (int64_t bi = 0; bi < nb; bi++) {
        int64_t ma = 0, mb = 0;
        for (int d = 0; d < nbatch; d++)
            ma += idx[d] * sba[d], mb += idx[d] * sbb[d];
        const float *pa = a->data + ma * M * K, *pb = b->data + mb * K * N;
        double *po = out->value + bi * M * N, *pt = out->abs_terms + bi * M * N;
        for (int64_t i = 0; i < M; i++)
            for (int64_t j = 0; j < N; j++) {
                double acc = 0, mag = 0;
                for (int64_t k = 0; k < K; k++) {
                    double t = (double)pa[i * K + k] * (double)pb[k * N + j];
                    acc += t;
                    mag += fabs(t);
                }
                po[i * N + j] = acc;
                pt[i * N + j] = mag;
            }
        for (int d = nbatch - 1; d >= 0; d--) {
            if (++idx[d] < batch[d])
                break;
            idx[d] = 0;
        }
    }
    return true;
}

bool ref_reduce(ref_reduce_op op, const host_tensor *x, int naxes, const int *axes,
                bool keepdims, ref_result *out, char *err, size_t err_size)
{
    bool reduced[WT_MAX_DIMS] = {false};
    if (naxes == 0) {
        for (int d = 0; d < x->ndim; d++)
            reduced[d] = true;
    }
    for (int i = 0; i < naxes; i++) {
        int a = axes[i] < 0 ? axes[i] + x->ndim : axes[i];
        if (a < 0 || a >= x->ndim || reduced[a]) {
            snprintf(err, err_size, "bad or repeated axis %d for %d-d input", axes[i], x->ndim);
            return false;
        }
        reduced[a] = true;
    }
    /* Walk x as [kept..., reduced...]: each output is a run of K terms. */
    int64_t xstr[WT_MAX_DIMS], st = 1;
    for (int d = x->ndim - 1; d >= 0; d--) {
        xstr[d] = st;
        st *= x->shape[d];
    }
    int64_t shape[WT_MAX_DIMS], kshape[WT_MAX_DIMS], kstr[WT_MAX_DIMS], rshape[WT_MAX_DIMS],
        rstr[WT_MAX_DIMS];
    int nd = 0, nk = 0, nr = 0;
    int64_t K = 1;
    for (int d = 0; d < x->ndim; d++) {
        if (reduced[d]) {
            rshape[nr] = x->shape[d], rstr[nr++] = xstr[d];
            K *= x->shape[d];
            if (keepdims)
                shape[nd++] = 1;
        } else {
            kshape[nk] = x->shape[d], kstr[nk++] = xstr[d];
            shape[nd++] = x->shape[d];
        }
    }
    if (K == 0 && (op == REF_MAX || op == REF_MIN) && shape_numel(nd, shape) > 0) {
        snprintf(err, err_size, "max/min over an empty reduction");
        return false;
    }
    if (!ref_alloc(out, nd, shape, true))
        return false;
    out->terms = K;
    int64_t kidx[WT_MAX_DIMS] = {0};
    for (int64_t o = 0; o < out->numel; o++) {
        int64_t base = 0;
        for (int d = 0; d < nk; d++)
            base += kidx[d] * kstr[d];
        double acc = op == REF_MAX ? -INFINITY : op == REF_MIN ? INFINITY : 0.0, mag = 0;
        int64_t ridx[WT_MAX_DIMS] = {0};
        for (int64_t k = 0; k < K; k++) {
            int64_t off = base;
            for (int d = 0; d < nr; d++)
                off += ridx[d] * rstr[d];
            double v = x->data[off];
            if (op == REF_MAX)
                acc = v > acc ? v : acc;
            else if (op == REF_MIN)
                acc = v < acc ? v : acc;
            else
                acc += v;
            mag += fabs(v);
            for (int d = nr - 1; d >= 0; d--) {
                if (++ridx[d] < rshape[d])
                    break;
                ridx[d] = 0;
            }
        }
        if (op == REF_MEAN) {
            acc = K > 0 ? acc / (double)K : NAN;
            mag = K > 0 ? mag / (double)K : 0;
        }
        out->value[o] = acc;
        /* max/min are exact: no rounding is allowed. */
        out->abs_terms[o] = (op == REF_MAX || op == REF_MIN) ? 0 : mag;
        for (int d = nk - 1; d >= 0; d--) {
            if (++kidx[d] < kshape[d])
                break;
            kidx[d] = 0;
        }
    }
    return true;
}

bool ref_softmax(const host_tensor *x, int axis, ref_result *out, char *err, size_t err_size)
{
    int nd = x->ndim;
    int a = axis < 0 ? axis + (nd ? nd : 1) : axis;
    if (a < 0 || a >= (nd ? nd : 1)) {
        snprintf(err, err_size, "axis %d out of range for %d dims", axis, nd);
        return false;
    }
    if (!ref_alloc(out, nd, x->shape, true))
        return false;
    /* Walk x as [outer, C, inner]. */
    int64_t C = nd ? x->shape[a] : 1, inner = 1, outer = 1;
    for (int d = 0; d < nd; d++) {
        if (d < a)
            outer *= x->shape[d];
        if (d > a)
            inner *= x->shape[d];
    }
    out->terms = C;
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < inner; i++) {
            const float *px = x->data + o * C * inner + i;
            double mx = -INFINITY, sum = 0;
            for (int64_t c = 0; c < C; c++)
                mx = px[c * inner] > mx ? px[c * inner] : mx;
            for (int64_t c = 0; c < C; c++)
                sum += exp(px[c * inner] - mx);
            for (int64_t c = 0; c < C; c++) {
                int64_t at = o * C * inner + c * inner + i;
                out->value[at] = exp(px[c * inner] - mx) / sum;
                /* exp of (x - max) in f32 has an error that grows with
                 * |x - max|, then the division by the f32 sum. */
                out->abs_terms[at] = out->value[at] * (2.0 + 0.1 * fabs(px[c * inner] - mx));
            }
        }
    return true;
}

bool ref_norm(bool rms, const host_tensor *x, const host_tensor *weight, const host_tensor *bias,
              double eps, ref_result *out, char *err, size_t err_size)
{
    if (x->ndim == 0) {
        snprintf(err, err_size, "a 0-d input has no axis to normalise");
        return false;
    }
    int64_t C = x->shape[x->ndim - 1];
    if ((weight && (weight->ndim != 1 || weight->shape[0] != C)) ||
        (bias && (bias->ndim != 1 || bias->shape[0] != C))) {
        snprintf(err, err_size, "weight or bias is not [%lld]", (long long)C);
        return false;
    }
    if (!ref_alloc(out, x->ndim, x->shape, true))
        return false;
    out->terms = C;
    int64_t rows = C ? x->numel / C : 0;
    for (int64_t r = 0; r < rows; r++) {
        const float *px = x->data + r * C;
        double mean = 0, var = 0;
        if (!rms) {
            for (int64_t c = 0; c < C; c++)
                mean += px[c];
            mean /= (double)C;
        }
        for (int64_t c = 0; c < C; c++)
            var += (px[c] - mean) * (px[c] - mean);
        var /= (double)C;
        double rstd = 1.0 / sqrt(var + eps);
        for (int64_t c = 0; c < C; c++) {
            double w = weight ? weight->data[c] : 1.0, b = bias ? bias->data[c] : 0.0;
            out->value[r * C + c] = (px[c] - mean) * rstd * w + b;
            /* x and the mean are f32 values of magnitude |x|: their
             * difference carries their rounding, scaled by rstd. */
            out->abs_terms[r * C + c] = (fabs(px[c]) + fabs(mean)) * rstd * fabs(w) + fabs(b);
        }
    }
    return true;
}
