/* The op families beyond the elementwise ones, cut into pieces that fit
 * one binding (the machinery is windows.c's wg_windowed_plan).
 *
 * - gather (gather, index_select, embedding): out and index are cut
 *   along out's axes; x follows out's axes before the gathered one, and
 *   an x still too large (an embedding table) is gathered part by part
 *   along the gathered axis, each part writing the elements whose index
 *   falls in it.
 * - matmul: out is cut along batches and rows; a b matrix past one
 *   binding is cut along N when its columns are apart in memory (w^T of
 *   a linear layer [out, in]: each cut is a block of w's rows), else
 *   along K, the partial products summed (no bias or activation then).
 * - copy_into (copies of views, concat, slice assignment), remap (pad,
 *   flip, roll, repeat, tril/triu), softmax along an axis, attention
 *   (cut along batches and heads), direct conv2d, pool2d and
 *   channel_norm (cut along images, pooling also along channels).
 * - random numbers (parts of one Philox stream), rope, arg-reductions,
 *   scans (whole slabs), sorting (whole rows), the training kernels
 *   (activation gradients and optimizer steps as flat arrays,
 *   cross-entropy by rows, the embedding gradient by blocks of the
 *   table's rows), im2col/col2im (whole, on windows), and batch-norm
 *   statistics (blocks of images combined on the host).
 * What stays refused: "tensors past one binding" in webtensor.h. */
#include "webgpu/wg_runtime.h"

#include <stdlib.h>
#include <string.h>

static uint32_t first_axes(int n) { return n >= 32 ? ~0u : (1u << n) - 1u; }

/* ------------------------------------------------------------ gather */

typedef struct gather_arg {
    int axis;
    bool trusted;
} gather_arg;

/* The part of x that must fit: one index along the gathered axis. */
static void gather_probe(const void *arg, int i, const wt_tensor *in, wt_tensor *part)
{
    (void)i;
    const gather_arg *g = arg;
    *part = wg_window_slice(in, g->axis, 0, in->shape[g->axis] ? 1 : 0);
}

static wt_status piece_gather(wt_context *ctx, const wt_tensor *const *in, wt_tensor *out,
                              const int64_t *start, const void *arg)
{
    (void)start;
    const gather_arg *g = arg;
    const wt_tensor *x = in[0];
    const int64_t n = x->shape[g->axis];
    wg_window_buf buf;
    if (wg_window_fits(ctx, x))
        return wg_op_gather(ctx, wg_window_of(ctx, x, &buf), g->axis, in[1], g->trusted, out);
    /* Parts along the axis that fit, halving from the whole. */
    int64_t c = n;
    for (;;) {
        wt_tensor part = wg_window_slice(x, g->axis, 0, c);
        if (c == 1 || wg_window_fits(ctx, &part))
            break;
        c = (c + 1) / 2;
    }
    wt_status st = WT_OK;
    for (int64_t b = 0; b < n && st == WT_OK; b += c) {
        wt_tensor part = wg_window_slice(x, g->axis, b, n - b < c ? n - b : c);
        /* Every part sees every index: the first checks them. */
        st = wg_op_gather_part(ctx, wg_window_of(ctx, &part, &buf), g->axis, in[1],
                               g->trusted || b > 0, b, n, out);
    }
    return st;
}

wt_status wg_win_gather(wt_context *ctx, const wt_tensor *x, int axis, const wt_tensor *index,
                        bool trusted, wt_tensor *out)
{
    gather_arg g = {axis, trusted};
    const wt_tensor *in[2] = {x, index};
    wg_window_plan plan = {
        .nin = 2, .follow = {first_axes(axis), first_axes(out->ndim)}, .own = 1u,
        .probe = gather_probe, .out_layout = WG_OUT_AT_ZERO, .fn = piece_gather, .arg = &g,
    };
    return wg_windowed_plan(ctx, out, in, &plan);
}

/* ------------------------------------------------------------ matmul */

typedef struct matmul_arg {
    const wt_tensor *bias;
    wt_matmul_act act;
    bool fused;
} matmul_arg;

static wt_status matmul_direct(wt_context *ctx, const wt_tensor *a, const wt_tensor *b,
                               const matmul_arg *m, wt_tensor *out)
{
    if (!m->fused)
        return wg_op_matmul(ctx, a, b, out);
    wg_window_buf buf;
    const wt_tensor *bias = m->bias ? wg_window_of(ctx, m->bias, &buf) : NULL;
    return wg_op_matmul_fused(ctx, a, b, bias, m->act, out);
}

static wt_status piece_matmul(wt_context *ctx, const wt_tensor *const *in, wt_tensor *out,
                              const int64_t *start, const void *arg)
{
    (void)start;
    return matmul_direct(ctx, in[0], in[1], arg, out);
}

static wt_status matmul_windowed(wt_context *ctx, const wt_tensor *a, const wt_tensor *b,
                                 const matmul_arg *m, wt_tensor *out);

/* b past one binding per batch, its columns apart (b[k, n] at n * s):
 * column blocks of b, each product into a temporary copied into out's
 * columns. */
static wt_status matmul_cut_n(wt_context *ctx, const wt_tensor *a, const wt_tensor *b, int64_t c,
                              const matmul_arg *m, wt_tensor *out)
{
    const int64_t N = out->shape[2];
    wt_status st = WT_OK;
    for (int64_t n0 = 0; n0 < N && st == WT_OK; n0 += c) {
        int64_t cnt = N - n0 < c ? N - n0 : c;
        wt_tensor bs = wg_window_slice(b, 2, n0, cnt), os = wg_window_slice(out, 2, n0, cnt);
        wt_tensor bias_s;
        matmul_arg ms = *m;
        if (m->bias) {
            bias_s = wg_window_slice(m->bias, 0, n0, cnt);
            ms.bias = &bias_s;
        }
        wt_tensor *tmp = NULL;
        int64_t shape[3] = {out->shape[0], out->shape[1], cnt};
        if ((st = wt_tensor_alloc(ctx, out->dtype, 3, shape, &tmp)) == WT_OK &&
            (st = matmul_windowed(ctx, a, &bs, &ms, tmp)) == WT_OK)
            st = wg_win_copy_into(ctx, tmp, &os);
        wt_tensor_release(tmp);
    }
    return st;
}

/* b past one binding per batch with rows apart: blocks of K, the partial
 * products summed. */
static wt_status matmul_cut_k(wt_context *ctx, const wt_tensor *a, const wt_tensor *b, int64_t c,
                              const matmul_arg *m, wt_tensor *out)
{
    if (m->bias || m->act != WT_MATMUL_ACT_NONE)
        return wt_fail(WT_ERR_UNSUPPORTED,
                       "webgpu matmul: b spans more than one binding (%llu bytes) along K; that "
                       "is summed in parts without a fused bias or activation only",
                       (unsigned long long)wg_window_usable(ctx));
    const int64_t K = a->shape[2];
    wt_tensor *sum = NULL, *part = NULL, *next = NULL;
    wt_status st = WT_OK;
    for (int64_t k0 = 0; k0 < K && st == WT_OK; k0 += c) {
        int64_t cnt = K - k0 < c ? K - k0 : c;
        wt_tensor as = wg_window_slice(a, 2, k0, cnt), bs = wg_window_slice(b, 1, k0, cnt);
        bool last = k0 + cnt >= K;
        if ((st = wt_tensor_alloc(ctx, out->dtype, 3, out->shape, &part)) == WT_OK)
            st = matmul_windowed(ctx, &as, &bs, m, part);
        if (st == WT_OK && sum) {
            /* One buffer cannot be read and written by one dispatch: the
             * running sum moves to a new tensor (the last one to out). */
            if (!last)
                st = wt_tensor_alloc(ctx, out->dtype, 3, out->shape, &next);
            wt_ew_args add = {.op = WT_OP_ADD, .nin = 2, .in = {sum, part}, .out = last ? out : next};
            if (st == WT_OK)
                st = wg_win_elementwise(ctx, &add);
            wt_tensor_release(sum);
            wt_tensor_release(part);
            sum = next, part = next = NULL;
        } else if (st == WT_OK) {
            sum = part, part = NULL;
        }
    }
    wt_tensor_release(part);
    wt_tensor_release(next);
    wt_tensor_release(sum);
    return st;
}

static wt_status matmul_windowed(wt_context *ctx, const wt_tensor *a, const wt_tensor *b,
                                 const matmul_arg *m, wt_tensor *out)
{
    wt_tensor b1 = wg_window_slice(b, 0, 0, b->shape[0] ? 1 : 0);
    if (wg_window_fits(ctx, &b1) || out->numel == 0 || a->shape[2] == 0) {
        /* out [B, M, N]: a [B, M, K] follows batches and rows, b [B, K, N]
         * batches only; the bias is small. */
        const wt_tensor *in[2] = {a, b};
        wg_window_plan plan = {
            .nin = 2, .follow = {3u, 1u}, .out_layout = WG_OUT_CONTIGUOUS, .fn = piece_matmul,
            .arg = m,
        };
        return wg_windowed_plan(ctx, out, in, &plan);
    }
    /* The widest block of columns (halving) whose span fits; f16 blocks
     * stay even (the f16 kernels write whole words). */
    const int64_t N = out->shape[2], K = a->shape[2];
    const bool f16 = out->dtype == WT_F16;
    int64_t c = N;
    for (;;) {
        wt_tensor bs = wg_window_slice(&b1, 2, 0, c);
        if (wg_window_fits(ctx, &bs) || c <= (f16 ? 2 : 1))
            break;
        c = (c + 1) / 2;
        if (f16 && c > 1)
            c += c & 1;
    }
    wt_tensor bs = wg_window_slice(&b1, 2, 0, c);
    if (wg_window_fits(ctx, &bs))
        return matmul_cut_n(ctx, a, b, c, m, out);
    int64_t kc = K;
    for (;;) {
        wt_tensor bk = wg_window_slice(&b1, 1, 0, kc);
        if (wg_window_fits(ctx, &bk) || kc == 1)
            break;
        kc = (kc + 1) / 2;
    }
    return matmul_cut_k(ctx, a, b, kc, m, out);
}

wt_status wg_win_matmul(wt_context *ctx, const wt_tensor *a, const wt_tensor *b, wt_tensor *out)
{
    matmul_arg m = {NULL, WT_MATMUL_ACT_NONE, false};
    return matmul_windowed(ctx, a, b, &m, out);
}

wt_status wg_win_matmul_fused(wt_context *ctx, const wt_tensor *a, const wt_tensor *b,
                              const wt_tensor *bias, wt_matmul_act act, wt_tensor *out)
{
    matmul_arg m = {bias, act, true};
    return matmul_windowed(ctx, a, b, &m, out);
}

/* With the epilogue's operand: whole tensors only (each within one
 * binding); WT_ERR_UNSUPPORTED otherwise, for the caller's composition. */
wt_status wg_win_matmul_aux(wt_context *ctx, const wt_tensor *a, const wt_tensor *b, const wt_tensor *bias,
                            wt_matmul_act act, const wt_tensor *aux, wt_tensor *out)
{
    if (!wg_window_fits(ctx, a) || !wg_window_fits(ctx, b) || !wg_window_fits(ctx, out) ||
        !wg_window_fits(ctx, aux) || (bias && !wg_window_fits(ctx, bias)))
        return wt_fail(WT_ERR_UNSUPPORTED, "matmul: an operand of the fused epilogue spans more than one binding");
    return wg_op_matmul_aux(ctx, a, b, bias, act, aux, out);
}

/* ------------------------------------------------------- data movement */

static wt_status piece_copy_into(wt_context *ctx, const wt_tensor *const *in, wt_tensor *out,
                                 const int64_t *start, const void *arg)
{
    (void)start, (void)arg;
    return wg_op_copy_into(ctx, in[0], out);
}

wt_status wg_win_copy_into(wt_context *ctx, const wt_tensor *src, wt_tensor *dst)
{
    wg_window_plan plan = {.nin = 1, .follow = {~0u}, .fn = piece_copy_into};
    if (src->storage != dst->storage || !wg_needs_windows(ctx, dst))
        return wg_windowed_plan(ctx, dst, &src, &plan);
    /* Windows of one buffer would be bound read-only and writable in one
     * dispatch: through a temporary (the views do not overlap). */
    wt_tensor *tmp = NULL;
    wt_status st = wt_tensor_alloc(ctx, src->dtype, src->ndim, src->shape, &tmp);
    const wt_tensor *t = tmp;
    if (st == WT_OK && (st = wg_windowed_plan(ctx, tmp, &src, &plan)) == WT_OK)
        st = wg_windowed_plan(ctx, dst, &t, &plan);
    wt_tensor_release(tmp);
    return st;
}

/* remap: out's piece at start reads x at j = r.start[d] + o (flip:
 * r.start[d] - o) along axis d. Where that range lies in x, or the mode
 * fills it with a constant, x is cut to the range (the part outside x
 * stays outside the cut); a wrapping mode keeps the axis whole. */
static bool remap_cut(const wt_remap *r, const wt_tensor *x, int d, int64_t s, int64_t c,
                      int64_t *lo, int64_t *hi)
{
    int64_t extent = x->shape[d];
    int64_t j0 = r->flip[d] ? r->start[d] - s - (c - 1) : r->start[d] + s;
    int64_t j1 = j0 + c; /* exclusive */
    bool inside = j0 >= 0 && j1 <= extent;
    if (extent == 0 || (!inside && r->mode[d] != WT_REMAP_CONSTANT))
        return false;
    *lo = j0 < 0 ? 0 : j0;
    *hi = j1 > extent ? extent : j1;
    if (*lo >= *hi) { /* all outside: one element at the nearer edge */
        *lo = j1 <= 0 ? 0 : extent - 1;
        *hi = *lo + 1;
    }
    return true;
}

typedef struct remap_arg {
    const wt_remap *r;
    const wt_tensor *x; /* whole */
} remap_arg;

static void remap_view(const void *arg, int i, const wt_tensor *in, const int64_t *start,
                       const wt_tensor *piece, wt_tensor *v)
{
    (void)i;
    const wt_remap *r = ((const remap_arg *)arg)->r;
    *v = *in;
    for (int d = 0; d < in->ndim; d++) {
        int64_t lo, hi;
        if (remap_cut(r, in, d, start[d], piece->shape[d], &lo, &hi))
            *v = wg_window_slice(v, d, lo, hi - lo);
    }
}

static wt_status piece_remap(wt_context *ctx, const wt_tensor *const *in, wt_tensor *out,
                             const int64_t *start, const void *arg)
{
    const wt_remap *r = ((const remap_arg *)arg)->r;
    const wt_tensor *x = ((const remap_arg *)arg)->x;
    wt_remap p = *r;
    /* in[0] is x cut by remap_view; the reads shift by the piece's start
     * and the cut's first index. tril/triu compare out's row and column. */
    int nd = out->ndim;
    for (int d = 0; d < nd; d++) {
        int64_t lo = 0, hi;
        if (!remap_cut(r, x, d, start[d], out->shape[d], &lo, &hi))
            lo = 0;
        p.start[d] = (r->flip[d] ? r->start[d] - start[d] : r->start[d] + start[d]) - lo;
    }
    if (r->tri != WT_TRI_NONE && nd >= 2)
        p.diag = r->diag - start[nd - 1] + start[nd - 2];
    return wg_op_remap(ctx, in[0], &p, out);
}

wt_status wg_win_remap(wt_context *ctx, const wt_tensor *x, const wt_remap *r, wt_tensor *out)
{
    remap_arg a = {r, x};
    wg_window_plan plan = {
        .nin = 1, .view = remap_view, .out_layout = WG_OUT_AT_ZERO, .fn = piece_remap, .arg = &a,
    };
    return wg_windowed_plan(ctx, out, &x, &plan);
}

/* ------------------------------------------------- transformer ops */

static wt_status piece_softmax_axis(wt_context *ctx, const wt_tensor *const *in, wt_tensor *out,
                                    const int64_t *start, const void *arg)
{
    (void)start;
    return wg_op_softmax_axis(ctx, *(const wt_rowwise_op *)arg, in[0], out);
}

wt_status wg_win_softmax_axis(wt_context *ctx, wt_rowwise_op op, const wt_tensor *x, wt_tensor *out)
{
    /* [O, C, I]: pieces along O and I, every one with the whole of C. */
    wg_window_plan plan = {
        .nin = 1, .follow = {5u}, .keep = 2u, .out_layout = WG_OUT_AT_ZERO,
        .fn = piece_softmax_axis, .arg = &op,
    };
    return wg_windowed_plan(ctx, out, &x, &plan);
}

/* out [B, Hq, Sq, Dv]: pieces along batches and heads (whole groups of
 * query heads that share a key head); every piece sees all of Sq, which
 * keeps the causal alignment (keys j <= i + Skv - Sq). */
static void attention_view(const void *arg, int i, const wt_tensor *in, const int64_t *start,
                           const wt_tensor *piece, wt_tensor *v)
{
    const wt_attention_args *a = arg;
    if (i == 1 || i == 2) {
        int64_t group = a->q->shape[1] / a->k->shape[1];
        *v = wg_window_slice(in, 0, start[0], piece->shape[0]);
        *v = wg_window_slice(v, 1, start[1] / group, (piece->shape[1] + group - 1) / group);
    } else {
        wg_window_follow(in, 7u, start, piece, v); /* q, mask: B, H, Sq */
    }
}

static wt_status piece_attention(wt_context *ctx, const wt_tensor *const *in, wt_tensor *out,
                                 const int64_t *start, const void *arg)
{
    (void)start;
    wt_attention_args a = *(const wt_attention_args *)arg;
    a.q = in[0], a.k = in[1], a.v = in[2], a.mask = in[3], a.out = out;
    return wg_op_attention(ctx, &a);
}

bool wg_attention_needs_windows(wt_context *ctx, const wt_attention_args *a)
{
    return wg_needs_windows(ctx, a->q) || wg_needs_windows(ctx, a->k) || wg_needs_windows(ctx, a->v) ||
           (a->mask && wg_needs_windows(ctx, a->mask)) || wg_needs_windows(ctx, a->out);
}

wt_status wg_win_attention(wt_context *ctx, const wt_attention_args *a)
{
    const wt_tensor *in[4] = {a->q, a->k, a->v, a->mask};
    wg_window_plan plan = {
        .nin = 4, .view = attention_view, .keep = 12u, .out_layout = WG_OUT_AT_ZERO,
        .fn = piece_attention, .arg = a,
    };
    plan.quantum[1] = a->k->shape[1] ? a->q->shape[1] / a->k->shape[1] : 1;
    if (!wg_needs_windows(ctx, a->q) && !wg_needs_windows(ctx, a->k) &&
        !wg_needs_windows(ctx, a->v) && !(a->mask && wg_needs_windows(ctx, a->mask)) &&
        !wg_needs_windows(ctx, a->out))
        return wg_op_attention(ctx, a);
    if (a->lse) return wt_fail(WT_ERR_UNSUPPORTED, "webgpu attention: no log-sum-exp from windowed attention");
    return wg_windowed_plan(ctx, a->out, in, &plan);
}

/* -------------------------------------------- convolution and pooling */

typedef struct conv_arg {
    const wt_tensor *w, *bias;
    const wt_window2d *win;
    int64_t groups;
    const wt_pool2d_desc *pool;
    float eps;
} conv_arg;

static wt_status piece_conv2d(wt_context *ctx, const wt_tensor *const *in, wt_tensor *out,
                              const int64_t *start, const void *arg)
{
    (void)start;
    const conv_arg *c = arg;
    return wg_op_conv2d(ctx, in[0], in[1], in[2], c->win, c->groups, out);
}

wt_status wg_win_conv2d(wt_context *ctx, const wt_tensor *x, const wt_tensor *w,
                        const wt_tensor *bias, const wt_window2d *win, int64_t groups,
                        wt_tensor *out)
{
    /* Pieces of whole images: x follows out's batch axis. */
    conv_arg c = {.win = win, .groups = groups};
    const wt_tensor *in[3] = {x, w, bias};
    wg_window_plan plan = {
        .nin = 3, .follow = {1u, 0u, 0u}, .keep = 14u, .out_layout = WG_OUT_CONTIGUOUS,
        .fn = piece_conv2d, .arg = &c,
    };
    return wg_windowed_plan(ctx, out, in, &plan);
}

static wt_status piece_pool2d(wt_context *ctx, const wt_tensor *const *in, wt_tensor *out,
                              const int64_t *start, const void *arg)
{
    (void)start;
    return wg_op_pool2d(ctx, ((const conv_arg *)arg)->pool, in[0], out, (wt_tensor *)in[1]);
}

wt_status wg_win_pool2d(wt_context *ctx, const wt_pool2d_desc *desc, const wt_tensor *x,
                        wt_tensor *out, wt_tensor *indices)
{
    /* Pieces of whole planes: x follows N and C; the indices (a second
     * output, written through its window) follow out. */
    conv_arg c = {.pool = desc};
    const wt_tensor *in[2] = {x, indices};
    wg_window_plan plan = {
        .nin = 2, .follow = {3u, 15u}, .keep = 12u, .out_layout = WG_OUT_CONTIGUOUS,
        .fn = piece_pool2d, .arg = &c,
    };
    return wg_windowed_plan(ctx, out, in, &plan);
}

static wt_status piece_channel_norm(wt_context *ctx, const wt_tensor *const *in, wt_tensor *out,
                                    const int64_t *start, const void *arg)
{
    (void)start;
    return wg_op_channel_norm(ctx, in[0], in[1], ((const conv_arg *)arg)->eps, out);
}

wt_status wg_win_channel_norm(wt_context *ctx, const wt_tensor *x, const wt_tensor *stats,
                              float eps, wt_tensor *out)
{
    /* Pieces of whole images (the kernel reads stats [4, C] whole). */
    conv_arg c = {.eps = eps};
    const wt_tensor *in[2] = {x, stats};
    wg_window_plan plan = {
        .nin = 2, .follow = {7u, 0u}, .keep = 6u, .out_layout = WG_OUT_CONTIGUOUS,
        .fn = piece_channel_norm, .arg = &c,
    };
    return wg_windowed_plan(ctx, out, in, &plan);
}

/* ------------------------------- random numbers, rope, arg-reductions */

/* A contiguous t as one axis of numel elements. */
static wt_tensor flat_of(const wt_tensor *t)
{
    wt_tensor v = *t;
    v.ndim = 1;
    v.shape[0] = t->numel;
    v.strides[0] = 1;
    return v;
}

typedef struct random_arg {
    const wt_random_args *r;
    bool has_x;
} random_arg;

static wt_status piece_random(wt_context *ctx, const wt_tensor *const *in, wt_tensor *out,
                              const int64_t *start, const void *arg)
{
    const random_arg *a = arg;
    return wg_op_random_part(ctx, a->r, a->has_x ? in[0] : NULL, (uint64_t)start[0] / 4, out);
}

wt_status wg_win_random(wt_context *ctx, const wt_random_args *r, const wt_tensor *x, wt_tensor *out)
{
    /* Pieces of whole Philox blocks (4 elements) of the flat tensor. */
    wt_tensor fo = flat_of(out), fx = x ? flat_of(x) : fo;
    const wt_tensor *in[1] = {&fx};
    random_arg a = {r, x != NULL};
    wg_window_plan plan = {
        .nin = x ? 1 : 0, .follow = {1u}, .out_layout = WG_OUT_CONTIGUOUS, .fn = piece_random,
        .arg = &a,
    };
    plan.quantum[0] = 4;
    return wg_windowed_plan(ctx, &fo, in, &plan);
}

typedef struct rope_arg {
    const wt_tensor *position;
    double theta;
    int64_t offset;
} rope_arg;

static wt_status piece_rope(wt_context *ctx, const wt_tensor *const *in, wt_tensor *out,
                            const int64_t *start, const void *arg)
{
    const rope_arg *a = arg;
    return wg_op_rope(ctx, in[0], a->position, a->theta, a->offset + start[1], out); /* positions follow S */
}

wt_status wg_win_rope(wt_context *ctx, const wt_tensor *x, const wt_tensor *position, double theta, int64_t offset,
                      wt_tensor *out)
{
    /* [A, S, C, D]: pieces along A, S and C, each with whole rows of D. */
    rope_arg a = {position, theta, offset};
    wg_window_plan plan = {
        .nin = 1, .follow = {15u}, .keep = 8u, .out_layout = WG_OUT_AT_ZERO, .fn = piece_rope,
        .arg = &a,
    };
    return wg_windowed_plan(ctx, out, &x, &plan);
}

typedef struct argreduce_arg {
    bool is_min;
    int nreduced;
} argreduce_arg;

static wt_status piece_argreduce(wt_context *ctx, const wt_tensor *const *in, wt_tensor *out,
                                 const int64_t *start, const void *arg)
{
    (void)start;
    const argreduce_arg *a = arg;
    return wg_op_argreduce(ctx, a->is_min, in[0], a->nreduced, out);
}

wt_status wg_win_argreduce(wt_context *ctx, bool is_min, const wt_tensor *x, int nreduced,
                           wt_tensor *out)
{
    /* x follows out's axes; the reduced ones stay whole. */
    argreduce_arg a = {is_min, nreduced};
    wg_window_plan plan = {
        .nin = 1, .follow = {first_axes(out->ndim)}, .out_layout = WG_OUT_CONTIGUOUS,
        .fn = piece_argreduce, .arg = &a,
    };
    return wg_windowed_plan(ctx, out, &x, &plan);
}

/* ------------------------------------------------------------ training */

static wt_status piece_act_backward(wt_context *ctx, const wt_tensor *const *in, wt_tensor *out,
                                    const int64_t *start, const void *arg)
{
    (void)start;
    return wg_op_act_backward(ctx, *(const wt_activation *)arg, in[0], in[1], out);
}

wt_status wg_win_act_backward(wt_context *ctx, wt_activation act, const wt_tensor *dy,
                              const wt_tensor *x, wt_tensor *out)
{
    wt_tensor fo = flat_of(out), fdy = flat_of(dy), fx = flat_of(x);
    const wt_tensor *in[2] = {&fdy, &fx};
    wg_window_plan plan = {
        .nin = 2, .follow = {1u, 1u}, .out_layout = WG_OUT_CONTIGUOUS, .fn = piece_act_backward,
        .arg = &act,
    };
    return wg_windowed_plan(ctx, &fo, in, &plan);
}

/* param is the output (updated in place); grad, m and v follow it (m and
 * v written through their windows). */
static wt_status piece_optimizer(wt_context *ctx, const wt_tensor *const *in, wt_tensor *out,
                                 const int64_t *start, const void *arg)
{
    (void)start;
    wt_optimizer_update u = *(const wt_optimizer_update *)arg;
    u.param = out;
    u.grad = in[0];
    u.m = (wt_tensor *)in[1];
    u.v = (wt_tensor *)in[2];
    return wg_op_optimizer_step(ctx, &u);
}

wt_status wg_win_optimizer_step(wt_context *ctx, const wt_optimizer_update *u)
{
    if (u->kind == WT_OPT_ADVANCE) return wg_op_optimizer_advance(ctx, u); /* 16 words: no windows */
    wt_tensor fp = flat_of(u->param), fg = flat_of(u->grad), fm, fv;
    if (u->m) fm = flat_of(u->m);
    if (u->v) fv = flat_of(u->v);
    const wt_tensor *in[3] = {&fg, u->m ? &fm : NULL, u->v ? &fv : NULL};
    wg_window_plan plan = {
        .nin = 3, .follow = {1u, 1u, 1u}, .out_layout = WG_OUT_CONTIGUOUS, .fn = piece_optimizer,
        .arg = u,
    };
    return wg_windowed_plan(ctx, &fp, in, &plan);
}

typedef struct ce_arg {
    int32_t ignore;
} ce_arg;

static wt_status piece_cross_entropy(wt_context *ctx, const wt_tensor *const *in, wt_tensor *out,
                                     const int64_t *start, const void *arg)
{
    (void)start;
    return wg_op_cross_entropy(ctx, in[0], in[1], ((const ce_arg *)arg)->ignore, out,
                               (wt_tensor *)in[2]);
}

wt_status wg_win_cross_entropy(wt_context *ctx, const wt_tensor *logits, const wt_tensor *labels,
                               int32_t ignore, wt_tensor *loss, wt_tensor *valid)
{
    /* Pieces of whole rows: logits, labels and valid (written) follow N. */
    ce_arg a = {ignore};
    const wt_tensor *in[3] = {logits, labels, valid};
    wg_window_plan plan = {
        .nin = 3, .follow = {1u, 1u, 1u}, .out_layout = WG_OUT_CONTIGUOUS,
        .fn = piece_cross_entropy, .arg = &a,
    };
    return wg_windowed_plan(ctx, loss, in, &plan);
}

static wt_status piece_ce_backward(wt_context *ctx, const wt_tensor *const *in, wt_tensor *out,
                                   const int64_t *start, const void *arg)
{
    (void)start;
    return wg_op_cross_entropy_backward(ctx, in[0], in[1], ((const ce_arg *)arg)->ignore, in[2], out);
}

wt_status wg_win_cross_entropy_backward(wt_context *ctx, const wt_tensor *logits,
                                        const wt_tensor *labels, int32_t ignore,
                                        const wt_tensor *scale, wt_tensor *out)
{
    /* out [N, C]: pieces of whole rows. */
    ce_arg a = {ignore};
    const wt_tensor *in[3] = {logits, labels, scale};
    wg_window_plan plan = {
        .nin = 3, .follow = {1u, 1u, 1u}, .keep = 2u, .out_layout = WG_OUT_CONTIGUOUS,
        .fn = piece_ce_backward, .arg = &a,
    };
    return wg_windowed_plan(ctx, out, in, &plan);
}

/* Embedding (and max-pool) gradients into an out [V, D] past one
 * binding: out in blocks of rows, every block taking the adds that land
 * in it. dy and the indices are bound whole (a dy past one binding is
 * refused by the dispatch). */
wt_status wg_win_scatter_add_rows(wt_context *ctx, const wt_tensor *dy, const wt_tensor *indices,
                                  int64_t plane, int64_t plane_rows, wt_tensor *out)
{
    if (!wg_needs_windows(ctx, out) || out->numel == 0)
        return wg_op_scatter_add_rows(ctx, dy, indices, plane, plane_rows, out);
    const int64_t V = out->shape[0];
    int64_t c = V;
    for (;;) {
        wt_tensor part = wg_window_slice(out, 0, 0, c);
        if (c == 1 || wg_window_fits(ctx, &part))
            break;
        c = (c + 1) / 2;
    }
    wg_window_buf bo, bd, bi;
    wt_status st = WT_OK;
    for (int64_t r0 = 0; r0 < V && st == WT_OK; r0 += c) {
        wt_tensor part = wg_window_slice(out, 0, r0, V - r0 < c ? V - r0 : c);
        st = wg_op_scatter_add_rows_part(ctx, wg_window_of(ctx, dy, &bd), wg_window_of(ctx, indices, &bi),
                                         plane, plane_rows, r0, V,
                                         (wt_tensor *)wg_window_of(ctx, &part, &bo));
    }
    return st;
}

/* im2col and col2im run on views the API keeps small (a few images or
 * rows at a time) of tensors that may be past one binding: each runs
 * whole, on windows of the large storages (no cut). */
typedef struct cols_arg {
    const wt_window2d *win;
    int64_t row0, rows;
} cols_arg;

static wt_status piece_im2col(wt_context *ctx, const wt_tensor *const *in, wt_tensor *out,
                              const int64_t *start, const void *arg)
{
    (void)start;
    const cols_arg *c = arg;
    return wg_op_im2col(ctx, in[0], c->win, c->row0, c->rows, out);
}

wt_status wg_win_im2col(wt_context *ctx, const wt_tensor *x, const wt_window2d *win, int64_t row0,
                        int64_t rows, wt_tensor *col)
{
    cols_arg c = {win, row0, rows};
    wg_window_plan plan = {.nin = 1, .keep = ~0u, .fn = piece_im2col, .arg = &c};
    return wg_windowed_plan(ctx, col, &x, &plan);
}

static wt_status piece_col2im(wt_context *ctx, const wt_tensor *const *in, wt_tensor *out,
                              const int64_t *start, const void *arg)
{
    (void)start;
    return wg_op_col2im(ctx, in[0], in[1], ((const cols_arg *)arg)->win, out);
}

wt_status wg_win_col2im(wt_context *ctx, const wt_tensor *col, const wt_tensor *bias,
                        const wt_window2d *win, wt_tensor *out)
{
    cols_arg c = {win, 0, 0};
    const wt_tensor *in[2] = {col, bias};
    wg_window_plan plan = {.nin = 2, .keep = ~0u, .fn = piece_col2im, .arg = &c};
    return wg_windowed_plan(ctx, out, in, &plan);
}

/* ------------------------------------------------ scans and sorting */

typedef struct scan_arg {
    wt_scan_op op;
    int64_t n, inner;
} scan_arg;

static wt_status piece_scan(wt_context *ctx, const wt_tensor *const *in, wt_tensor *out,
                            const int64_t *start, const void *arg)
{
    (void)start;
    const scan_arg *a = arg;
    return wg_op_scan(ctx, a->op, in[0], a->n, a->inner, out);
}

wt_status wg_win_scan(wt_context *ctx, wt_scan_op op, const wt_tensor *x, int64_t n,
                      int64_t inner, wt_tensor *out)
{
    /* x and out contiguous, seen as [outer, n, inner]: pieces of whole
     * [n, inner] slabs. */
    if (n <= 0 || inner <= 0 || x->numel == 0)
        return wg_op_scan(ctx, op, x, n, inner, out);
    wt_tensor x3 = *x, o3 = *out;
    const int64_t shape[3] = {x->numel / (n * inner), n, inner}, strides[3] = {n * inner, inner, 1};
    x3.ndim = o3.ndim = 3;
    memcpy(x3.shape, shape, sizeof shape), memcpy(o3.shape, shape, sizeof shape);
    memcpy(x3.strides, strides, sizeof strides), memcpy(o3.strides, strides, sizeof strides);
    scan_arg a = {op, n, inner};
    const wt_tensor *in[1] = {&x3};
    wg_window_plan plan = {
        .nin = 1, .follow = {1u}, .keep = 6u, .out_layout = WG_OUT_CONTIGUOUS, .fn = piece_scan,
        .arg = &a,
    };
    return wg_windowed_plan(ctx, &o3, in, &plan);
}

typedef struct sort_arg {
    bool descending;
    int64_t k;
} sort_arg;

static wt_status piece_argsort(wt_context *ctx, const wt_tensor *const *in, wt_tensor *out,
                               const int64_t *start, const void *arg)
{
    (void)start;
    const sort_arg *a = arg;
    return wg_op_argsort_rows(ctx, in[0], a->descending, a->k, out);
}

wt_status wg_win_argsort_rows(wt_context *ctx, const wt_tensor *x, bool descending, int64_t k,
                              wt_tensor *out)
{
    /* Pieces of whole rows: x follows out's leading axes. */
    sort_arg a = {descending, k};
    const int last = out->ndim - 1;
    wg_window_plan plan = {
        .nin = 1, .follow = {first_axes(last)}, .keep = 1u << last, .out_layout = WG_OUT_AT_ZERO,
        .fn = piece_argsort, .arg = &a,
    };
    return wg_windowed_plan(ctx, out, &x, &plan);
}

/* Batch-norm statistics of x [N, C, S] past one binding: the moments of
 * blocks of whole images, each into its slice of a small device tensor,
 * then combined on the device (wg_op_moments_combine): nothing is read
 * back, so the op can be captured. */
wt_status wg_win_channel_moments(wt_context *ctx, const wt_tensor *x, wt_tensor *out)
{
    wg_window_buf bx, bo;
    if (wg_window_fits(ctx, x))
        return wg_op_channel_moments(ctx, wg_window_of(ctx, x, &bx),
                                     (wt_tensor *)wg_window_of(ctx, out, &bo));
    const int64_t N = x->shape[0], C = x->shape[1], S = x->shape[2];
    int64_t c = N;
    for (;;) {
        wt_tensor part = wg_window_slice(x, 0, 0, c);
        if (c == 1 || wg_window_fits(ctx, &part))
            break;
        c = (c + 1) / 2;
    }
    wt_tensor first = wg_window_slice(x, 0, 0, c);
    if (!wg_window_fits(ctx, &first))
        return wt_fail(WT_ERR_UNSUPPORTED,
                       "webgpu batch-norm statistics: one image of x spans more than one binding "
                       "(%llu bytes)", (unsigned long long)wg_window_usable(ctx));
    const int64_t parts = (N + c - 1) / c, all_n = parts * 2 * C, two_c[2] = {2, C};
    wt_tensor *all = NULL;
    wt_status st = wt_tensor_alloc(ctx, WT_F32, 1, &all_n, &all);
    for (int64_t p = 0; st == WT_OK && p < parts; p++) {
        wt_tensor part = wg_window_slice(x, 0, p * c, N - p * c < c ? N - p * c : c);
        wt_tensor *slot = NULL;
        int64_t strides[2] = {C, 1};
        if ((st = wt_tensor_view(all, 2, two_c, strides, p * 2 * C, &slot)) == WT_OK)
            st = wg_op_channel_moments(ctx, wg_window_of(ctx, &part, &bx), slot);
        wt_tensor_release(slot);
    }
    if (st == WT_OK)
        st = wg_op_moments_combine(ctx, all, c, N, S, (wt_tensor *)wg_window_of(ctx, out, &bo));
    wt_tensor_release(all);
    return st;
}

/* scatter_add / index_add / one_hot into an out past one binding: out in
 * parts along the axis, each taking the adds whose index falls in it
 * (index and src are bound whole; the first part checks the indices). */
wt_status wg_win_scatter_add(wt_context *ctx, wt_tensor *out, int axis, const wt_tensor *index,
                             const wt_tensor *src)
{
    wg_window_buf bo, bi, bs;
    const wt_tensor *wi = wg_window_of(ctx, index, &bi), *ws = wg_window_of(ctx, src, &bs);
    const int64_t n = out->shape[axis];
    if (wg_window_fits(ctx, out) || n == 0)
        return wg_op_scatter_add(ctx, (wt_tensor *)wg_window_of(ctx, out, &bo), axis, wi, ws);
    int64_t c = n;
    for (;;) {
        wt_tensor part = wg_window_slice(out, axis, 0, c);
        if (c == 1 || wg_window_fits(ctx, &part))
            break;
        c = (c + 1) / 2;
    }
    wt_status st = WT_OK;
    for (int64_t b = 0; b < n && st == WT_OK; b += c) {
        wt_tensor part = wg_window_slice(out, axis, b, n - b < c ? n - b : c);
        st = wg_op_scatter_add_part(ctx, (wt_tensor *)wg_window_of(ctx, &part, &bo), axis, wi, ws, b,
                                    n, b > 0);
    }
    return st;
}
