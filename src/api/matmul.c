/* Matrix product front-end: NumPy matmul rules, reduced to the backend's
 * [B, M, K] x [B, K, N] contract. */
#include "api/api.h"
#include "autograd/tape.h"

#include <string.h>

/* The operands after promotion of 1-D inputs, as (batch..., rows, cols). */
typedef struct operand {
    int ndim;
    int64_t shape[WT_MAX_DIMS];
    int64_t strides[WT_MAX_DIMS];
} operand;

static void promote(const wt_tensor *t, bool is_left, operand *o)
{
    if (t->ndim == 1) {
        o->ndim = 2;
        if (is_left) { /* [K] -> [1, K] */
            o->shape[0] = 1, o->strides[0] = 0;
            o->shape[1] = t->shape[0], o->strides[1] = t->strides[0];
        } else { /* [K] -> [K, 1] */
            o->shape[0] = t->shape[0], o->strides[0] = t->strides[0];
            o->shape[1] = 1, o->strides[1] = 0;
        }
        return;
    }
    o->ndim = t->ndim;
    memcpy(o->shape, t->shape, sizeof o->shape);
    memcpy(o->strides, t->strides, sizeof o->strides);
}

/* The product in the operands' own dtype (f32, or f16 where the backend
 * takes it natively): see wt_matmul_fused. */
static wt_status matmul_typed(const char *fn, const wt_tensor *a, const wt_tensor *b,
                              const wt_tensor *bias, wt_matmul_act act, wt_tensor **out)
{
    wt_status st;
    char b1[160], b2[160];
    if (a->ndim == 0 || b->ndim == 0)
        return wt_fail(WT_ERR_SHAPE, "%s: operands must have at least 1 dimension (got %d and %d)", fn,
                       a->ndim, b->ndim);
    operand pa, pb;
    promote(a, true, &pa);
    promote(b, false, &pb);
    int64_t M = pa.shape[pa.ndim - 2], K = pa.shape[pa.ndim - 1], N = pb.shape[pb.ndim - 1];
    if (pb.shape[pb.ndim - 2] != K)
        return wt_fail(WT_ERR_SHAPE, "%s: inner dimensions differ: a is %s, b is %s", fn,
                       wt_shape_str(a->ndim, a->shape, b1, sizeof b1), wt_shape_str(b->ndim, b->shape, b2, sizeof b2));

    /* Broadcast the batch axes. */
    int nba = pa.ndim - 2, nbb = pb.ndim - 2, nb = nba > nbb ? nba : nbb;
    int64_t bshape[WT_MAX_DIMS], bstr[3][WT_MAX_DIMS];
    for (int i = 0; i < nb; i++) {
        int ia = i - (nb - nba), ib = i - (nb - nbb);
        int64_t sa = ia >= 0 ? pa.shape[ia] : 1, sb = ib >= 0 ? pb.shape[ib] : 1;
        if (sa != sb && sa != 1 && sb != 1)
            return wt_fail(WT_ERR_SHAPE, "%s: batch dimensions of %s and %s do not broadcast", fn,
                           wt_shape_str(a->ndim, a->shape, b1, sizeof b1), wt_shape_str(b->ndim, b->shape, b2, sizeof b2));
        bshape[i] = sa == 1 ? sb : sa;
        bstr[0][i] = (ia >= 0 && sa != 1) ? pa.strides[ia] : 0;
        bstr[1][i] = (ib >= 0 && sb != 1) ? pb.strides[ib] : 0;
    }

    /* The result's shape, with the promoted axes dropped again. */
    int ondim = 0;
    int64_t oshape[WT_MAX_DIMS];
    for (int i = 0; i < nb; i++) oshape[ondim++] = bshape[i];
    if (a->ndim > 1) oshape[ondim++] = M;
    if (b->ndim > 1) oshape[ondim++] = N;
    wt_context *ctx = wt_ctx_of(a);
    wt_tensor *t = NULL, *va = NULL, *vb = NULL, *vo = NULL, *ca = NULL, *cb = NULL, *cbias = NULL;
    if (bias && (bias->ndim != 1 || bias->shape[0] != N))
        return wt_fail(WT_ERR_SHAPE, "%s: bias must be 1-D of the result's last extent %lld, got %s",
                       fn, (long long)N, wt_shape_str(bias->ndim, bias->shape, b1, sizeof b1));
    if ((st = wt_tensor_alloc(ctx, a->dtype, ondim, oshape, &t)) != WT_OK) return st;
    if (t->numel == 0) goto done;

    /* Fold the batch axes into one: possible when every operand steps
     * uniformly across them; otherwise materialise the broadcast operands
     * (contiguous copies fold always). */
    int64_t B = 1;
    for (int i = 0; i < nb; i++) B *= bshape[i];
    int64_t ostr[WT_MAX_DIMS];
    {
        int64_t s = M * N;
        for (int i = nb - 1; i >= 0; i--) ostr[i] = s, s *= bshape[i];
    }
    for (int i = 0; i < nb; i++) bstr[2][i] = ostr[i];
    int nfold = nb;
    int64_t fshape[WT_MAX_DIMS];
    memcpy(fshape, bshape, sizeof fshape);
    if (nfold > 0) wt_coalesce(&nfold, fshape, 3, bstr);
    int64_t sba = 0, sbb = 0;
    const wt_tensor *src_a = a, *src_b = b;
    if (nb > 0 && nfold > 1) {
        /* Materialise a and b expanded to the full batch shape. */
        int64_t full[WT_MAX_DIMS];
        memcpy(full, bshape, sizeof(int64_t) * (size_t)nb);
        full[nb] = M, full[nb + 1] = K;
        wt_tensor *ea = NULL, *eb = NULL;
        int64_t stra[WT_MAX_DIMS], strb[WT_MAX_DIMS];
        for (int i = 0; i < nb; i++) {
            int ia = i - (nb - nba), ib = i - (nb - nbb);
            stra[i] = (ia >= 0 && pa.shape[ia] != 1) ? pa.strides[ia] : 0;
            strb[i] = (ib >= 0 && pb.shape[ib] != 1) ? pb.strides[ib] : 0;
        }
        stra[nb] = pa.strides[pa.ndim - 2], stra[nb + 1] = pa.strides[pa.ndim - 1];
        if ((st = wt_tensor_view(a, nb + 2, full, stra, a->offset, &ea)) != WT_OK) goto done;
        st = wt_copy(ea, &ca);
        wt_tensor_release(ea);
        if (st != WT_OK) goto done;
        full[nb] = K, full[nb + 1] = N;
        strb[nb] = pb.strides[pb.ndim - 2], strb[nb + 1] = pb.strides[pb.ndim - 1];
        if ((st = wt_tensor_view(b, nb + 2, full, strb, b->offset, &eb)) != WT_OK) goto done;
        st = wt_copy(eb, &cb);
        wt_tensor_release(eb);
        if (st != WT_OK) goto done;
        src_a = ca, src_b = cb;
        sba = M * K, sbb = K * N;
    } else if (nb > 0) {
        sba = bstr[0][0], sbb = bstr[1][0];
    }
    int64_t s3a[3] = {sba, pa.strides[pa.ndim - 2], pa.strides[pa.ndim - 1]};
    int64_t s3b[3] = {sbb, pb.strides[pb.ndim - 2], pb.strides[pb.ndim - 1]};
    if (src_a == ca) s3a[1] = K, s3a[2] = 1;
    if (src_b == cb) s3b[1] = N, s3b[2] = 1;
    int64_t sha[3] = {B, M, K}, shb[3] = {B, K, N}, sho[3] = {B, M, N}, s3o[3] = {M * N, N, 1};
    /* b the same matrix for every batch, and a's batches one run of rows
     * (batch stride M row strides, as a contiguous [B, M, K] has): one
     * [B*M, K] x [K, N] product instead of B small ones, a shape the
     * kernels tile better (x @ W for a batch of sequences). */
    if (B > 1 && sbb == 0 && sba == M * s3a[1]) {
        sha[0] = shb[0] = sho[0] = 1;
        sha[1] = sho[1] = B * M;
        s3o[0] = B * M * N;
    }
    if ((st = wt_tensor_view(src_a, 3, sha, s3a, src_a->offset, &va)) != WT_OK ||
        (st = wt_tensor_view(src_b, 3, shb, s3b, src_b->offset, &vb)) != WT_OK ||
        (st = wt_tensor_view(t, 3, sho, s3o, 0, &vo)) != WT_OK)
        goto done;
    if (bias && bias->strides[0] != 1 && N > 1) { /* the kernels read a contiguous bias */
        if ((st = wt_copy(bias, &cbias)) != WT_OK) goto done;
        bias = cbias;
    }
    if (bias || act != WT_MATMUL_ACT_NONE || a->dtype != WT_F32)
        st = wt_backend_runs(ctx, WT_NODE_MATMUL_FUSED) ? wt_node_run(ctx, &(wt_node){.kind = WT_NODE_MATMUL_FUSED, .in = {va, vb, bias}, .out = {vo}, .p.act = act})
                                    : wt_fail(WT_ERR_UNSUPPORTED, "%s: no fused product here", fn);
    else if (K == 0)
        st = wt_fill_f32(ctx, vo, 0.0f);
    else
        st = wt_node_run(ctx, &(wt_node){.kind = WT_NODE_MATMUL, .in = {va, vb}, .out = {vo}});
done:
    wt_tensor_release(va);
    wt_tensor_release(vb);
    wt_tensor_release(vo);
    wt_tensor_release(ca);
    wt_tensor_release(cb);
    wt_tensor_release(cbias);
    if (st != WT_OK) {
        wt_tensor_release(t);
        return st;
    }
    *out = t;
    return WT_OK;
}

wt_status wt_matmul_fused(const wt_tensor *a, const wt_tensor *b, const wt_tensor *bias,
                          wt_matmul_act act, wt_tensor **out)
{
    const char *fn = "wt_matmul";
    wt_status st = wt_check_out(fn, out);
    if (st != WT_OK || (st = wt_check_input(fn, a)) != WT_OK || (st = wt_check_input(fn, b)) != WT_OK ||
        (st = wt_check_same_context(fn, a, b)) != WT_OK)
        return st;
    if (bias && ((st = wt_check_input(fn, bias)) != WT_OK ||
                 (st = wt_check_same_context(fn, a, bias)) != WT_OK))
        return st;
    if ((int)act < 0 || act >= WT_MATMUL_ACT_COUNT || act == WT_MATMUL_ACT_GELU_GRAD)
        return wt_fail(WT_ERR_INVALID_ARGUMENT, "%s: unknown activation %d", fn, (int)act);
    if (!wt_has_f16(a, b, bias)) return matmul_typed(fn, a, b, bias, act, out);
    /* f16 operands: natively where the backend takes them (f32
     * accumulation, one rounding at the end), else through f32. */
    if (a->dtype == WT_F16 && b->dtype == WT_F16 && (!bias || bias->dtype == WT_F16)) {
        st = matmul_typed(fn, a, b, bias, act, out);
        if (st != WT_ERR_UNSUPPORTED) return st;
    }
    wt_lifted l;
    wt_tensor *r = NULL;
    if ((st = wt_lift_f16(a, b, bias, &l)) == WT_OK) st = matmul_typed(fn, l.in[0], l.in[1], l.in[2], act, &r);
    wt_lifted_release(&l);
    return wt_land(st, r, l.result, out);
}

wt_status wt_matmul_epilogue(const wt_tensor *a, const wt_tensor *b, const wt_tensor *bias, wt_matmul_act act,
                             const wt_tensor *aux, wt_tensor **out)
{
    wt_context *ctx = wt_ctx_of(a);
    if (a->ndim != 2 || b->ndim != 2 || a->shape[1] != b->shape[0] || a->dtype != WT_F32 ||
        b->dtype != WT_F32 || aux->dtype != WT_F32 || (bias && (bias->dtype != WT_F32 || bias->ndim != 1 ||
                                                                 bias->shape[0] != b->shape[1])))
        return wt_fail(WT_ERR_UNSUPPORTED, "matmul epilogue: f32 matrices of matching shapes only");
    const int64_t M = a->shape[0], K = a->shape[1], N = b->shape[1];
    if (M * N != aux->numel || !wt_layout_is_contiguous(aux->ndim, aux->shape, aux->strides) || M == 0 || N == 0 || K == 0 ||
        (bias && bias->strides[0] != 1 && N > 1) || wt_knob_count(WT_KNOB_MATMUL_EPILOGUE, 1) == 0 ||
        !wt_backend_runs(ctx, WT_NODE_MATMUL_FUSED))
        return wt_fail(WT_ERR_UNSUPPORTED, "matmul epilogue: not fused here");
    const int64_t sha[3] = {1, M, K}, sta[3] = {0, a->strides[0], a->strides[1]};
    const int64_t shb[3] = {1, K, N}, stb[3] = {0, b->strides[0], b->strides[1]};
    const int64_t sho[3] = {1, M, N}, sto[3] = {M * N, N, 1};
    wt_tensor *t = NULL, *va = NULL, *vb = NULL, *vo = NULL, *vx = NULL;
    wt_status st = wt_tensor_alloc(ctx, WT_F32, 2, (const int64_t[]){M, N}, &t);
    if (st == WT_OK) st = wt_tensor_view(a, 3, sha, sta, a->offset, &va);
    if (st == WT_OK) st = wt_tensor_view(b, 3, shb, stb, b->offset, &vb);
    if (st == WT_OK) st = wt_tensor_view(t, 3, sho, sto, 0, &vo);
    if (st == WT_OK) st = wt_tensor_view(aux, 3, sho, sto, aux->offset, &vx);
    if (st == WT_OK)
        st = wt_node_run(ctx, &(wt_node){.kind = WT_NODE_MATMUL_FUSED, .in = {va, vb, bias, vx}, .out = {vo},
                                         .p.act = act});
    wt_tensor_release(va);
    wt_tensor_release(vb);
    wt_tensor_release(vo);
    wt_tensor_release(vx);
    if (st != WT_OK) {
        wt_tensor_release(t);
        return st;
    }
    *out = t;
    return WT_OK;
}

wt_status wt_matmul(const wt_tensor *a, const wt_tensor *b, wt_tensor **out)
{
    WT_GRAD_HOOK((a, b, NULL, NULL), 1, out, wt_matmul(a, b, out),
                 .op = WT_OP_MATMUL, .nin = 2, .in = {a, b});
    return wt_matmul_fused(a, b, NULL, WT_MATMUL_ACT_NONE, out);
}
