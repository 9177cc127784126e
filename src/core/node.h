/* The op node: what the API layer hands a backend to compute.
 *
 * Every op, after its front-end has checked the arguments, resolved
 * broadcasting and dtypes and allocated the outputs, becomes one or more
 * nodes: a kernel kind (below), its input and output tensors and a
 * parameter block (which names the catalogue op where a kind serves many:
 * p.ew.op, p.reduce.op ...). A backend runs nodes through one entry point (wt_backend_ops.run);
 * what goes around every kernel - naming, host timing, recording - is
 * written once, in wt_node_run (core/node.c).
 *
 * Conventions of every node: inputs may be any strided view (zero strides
 * included) unless the kind says otherwise; outputs are fresh contiguous
 * tensors of the backend's storage, except for the kinds that update a
 * tensor in place (COPY_INTO, SCATTER_ADD, SCATTER_ADD_ROWS,
 * OPTIMIZER_STEP, GRAD_CLIP_SCALE, KERNEL_DISPATCH), whose mutated tensors are outputs too. */
#ifndef WT_NODE_H
#define WT_NODE_H

#include "webtensor.h"

#include <stdbool.h>
#include <stdint.h>

/* Every op, from the catalogue (core/ops.def): WT_OP_ADD, WT_OP_CONV2D ... */
typedef enum wt_op {
#define WT_UNARY(NAME, ...) WT_OP_##NAME,
#define WT_BINARY(NAME, ...) WT_OP_##NAME,
#define WT_KERNEL(NAME, ...) WT_OP_##NAME,
#include "core/ops.def"
    WT_OP_COUNT
} wt_op;


/* One elementwise op for a backend: out = op(in[0] [, in[1]]; params).
 * The inputs are expanded to out's shape (zero strides where broadcast)
 * and of the dtype the op computes in (one the backend answered NATIVE
 * for; the API has done the casts); out is contiguous, of the op's result
 * dtype (a comparison's is bool). params are 32-bit patterns of scalars
 * in the lane type (f32 bits, or i32 for i32 lanes): a unary op's
 * parameters; for a binary op with in[1] NULL, params[1] is the scalar b
 * (wt_<op>_scalar: no tensor, no upload). */
typedef struct wt_ew_args {
    wt_op op;
    int nin;
    const wt_tensor *in[2];
    uint32_t params[2];
    wt_tensor *out;
} wt_ew_args;

typedef enum wt_rowwise_op {
    WT_ROW_SOFTMAX, WT_ROW_LAYERNORM, WT_ROW_RMSNORM,
    WT_ROW_LOG_SOFTMAX, /* transformer ops */
    WT_ROW_COUNT
} wt_rowwise_op;

/* --- reductions, scans, random numbers --- */

/* The reduction family, one row per op in core/reduce_ops.def. */
typedef enum wt_combine { WT_COMBINE_ADD, WT_COMBINE_MUL, WT_COMBINE_MAX, WT_COMBINE_MIN } wt_combine;
typedef enum wt_shift { WT_SHIFT_NONE, WT_SHIFT_MEAN, WT_SHIFT_MAX } wt_shift;
enum { WT_RD_FLOAT = 1, WT_RD_I32 = 2, WT_RD_BOOL = 4 };
/* --- transformer ops --- */
/* One attention call as the API layer hands it to a backend:
 * q [B, Hq, Sq, D], k [B, Hkv, Skv, D], v [B, Hkv, Skv, Dv], any strides;
 * Hkv divides Hq. mask: NULL or a [B, Hq, Sq, Skv] view (stride 0 on
 * broadcast axes) of f32 scores to add, or of 0/1 words when mask_is_bool
 * (nonzero: attend). out: [B, Hq, Sq, Dv] contiguous. Query i sees key j
 * only if j <= i + Skv - Sq when causal. scale is final (never 0). A row
 * without a visible key (all scores -inf) is written as 0s. */
typedef struct wt_attention_args {
    const wt_tensor *q, *k, *v, *mask;
    const wt_tensor *kv_length; /* NULL, or i32 (1 element): keys seen = min(max(it, 0), Skv) */
    bool mask_is_bool, causal;
    float scale;
    wt_tensor *out;
    /* NULL, or f32 [B, Hq, Sq] contiguous: each row's log-sum-exp of its
     * scaled scores (3.0e38 where no key is visible), for the backward
     * (autograd asks for it while recording). A backend or kernel that
     * cannot write it returns WT_ERR_UNSUPPORTED before any work, and the
     * caller runs the call again without it. */
    wt_tensor *lse;
} wt_attention_args;
/* --- matrix products --- */
/* The activation a matrix product's epilogue applies (wt_matmul_fused).
 * GELU_GRAD is no activation: with an operand of the result's shape (a
 * MATMUL_FUSED node's in[3], wt_matmul_epilogue's aux) the result is
 * (a @ b + bias) * gelu'(aux), GELU's backward in the product's stores;
 * the others with in[3] give act(a @ b + bias) + in[3] (a residual). */
typedef enum wt_matmul_act {
    WT_MATMUL_ACT_NONE, WT_MATMUL_ACT_RELU, WT_MATMUL_ACT_GELU, WT_MATMUL_ACT_GELU_TANH,
    WT_MATMUL_ACT_GELU_GRAD,
    WT_MATMUL_ACT_COUNT
} wt_matmul_act;

typedef enum wt_reduce_op {
#define WT_REDUCE_OP(ID, ...) WT_REDUCE_##ID,
#include "core/reduce_ops.def"
#undef WT_REDUCE_OP
    WT_REDUCE_COUNT
} wt_reduce_op;

typedef struct wt_reduce_info {
    const char *name; /* "sum": the public function is wt_sum */
    wt_combine combine;
    double identity;
    wt_shift shift;
    bool empty_ok;
    unsigned dtypes; /* WT_RD_* */
    const char *map_wgsl, *finish_wgsl;
} wt_reduce_info;
/* The row of op (core/reduce_table.c); NULL for an unknown op. */
const wt_reduce_info *wt_reduce_info_of(wt_reduce_op op);

/* One reduction as a backend sees it: shift (NULL unless the op's row
 * asks for one) is contiguous with out's element count, one value per
 * output; n is the count finish divides by. */
typedef struct wt_reduce_args {
    wt_reduce_op op;
    const wt_tensor *shift;
    double n;
} wt_reduce_args;

typedef enum wt_scan_op { WT_SCAN_SUM, WT_SCAN_PROD } wt_scan_op;

typedef enum wt_random_kind { WT_RANDOM_UNIFORM, WT_RANDOM_NORMAL, WT_RANDOM_DROPOUT } wt_random_kind;
/* Philox4x32-10, key = seed, counter = (element index / 4, 0): element i
 * takes word i % 4 of its block (core/philox.c). */
typedef struct wt_random_args {
    wt_random_kind kind;
    uint64_t seed;
    uint32_t bits;  /* uniform: the top `bits` bits of a word, times 2^-bits (24 for f32) */
    float p, scale; /* dropout: drop where uniform(24 bits) < p, else x * scale */
} wt_random_args;
/* --- data movement --- */
/* How a remap reads x for output position (o_0, ..., o_{ndim-1}): along
 * axis d the source index is j = start[d] + (flip[d] ? -o_d : o_d); a j
 * outside [0, x->shape[d]) is resolved by mode[d]: CONSTANT gives the
 * element fill_bits, REFLECT mirrors without repeating the edge (the caller
 * keeps j within one bounce), REPLICATE clamps, CIRCULAR wraps. Then, with
 * tri set, an element of the last two axes (row, col) with col - row > diag
 * (tri == WT_TRI_LOWER) or < diag (WT_TRI_UPPER) becomes fill_bits. Out has
 * x's ndim. This one map gives pad, flip, roll, tile/repeat, tril/triu. */
typedef enum wt_remap_mode {
    WT_REMAP_CONSTANT, WT_REMAP_REFLECT, WT_REMAP_REPLICATE, WT_REMAP_CIRCULAR
} wt_remap_mode;
typedef enum wt_tri_kind { WT_TRI_NONE, WT_TRI_LOWER, WT_TRI_UPPER } wt_tri_kind;
typedef struct wt_remap {
    int64_t start[WT_MAX_DIMS];
    bool flip[WT_MAX_DIMS];
    wt_remap_mode mode[WT_MAX_DIMS];
    uint32_t fill_bits; /* an element's bits (low 16 for 2-byte dtypes) */
    wt_tri_kind tri;
    int64_t diag;
} wt_remap;

/* The order sort/topk use, as an unsigned key of an element's bits:
 * floats by value with -0 == +0 and every NaN above +inf (equal to each
 * other), i32 by value, bool false < true. */
static inline uint32_t wt_sort_key(wt_dtype dtype, uint32_t bits)
{
    if (dtype == WT_F16) {
        uint32_t h = bits & 0xffffu;
        if ((h & 0x7fffu) > 0x7c00u) return 0xffffffffu; /* NaN */
        if ((h & 0x7fffu) == 0) return 0x80000000u;      /* -0 as +0 */
        uint32_t k = (h & 0x8000u) ? (~h & 0xffffu) : (h | 0x8000u);
        return k << 16;
    }
    if (dtype == WT_F32) {
        if ((bits & 0x7fffffffu) > 0x7f800000u) return 0xffffffffu;
        if ((bits & 0x7fffffffu) == 0) return 0x80000000u;
        return (bits & 0x80000000u) ? ~bits : (bits | 0x80000000u);
    }
    return (dtype == WT_I32) ? bits ^ 0x80000000u : bits;
}
/* --- convolution and pooling --- */
/* A 2-D sliding window from an [in_h, in_w] plane to an [out_h, out_w]
 * one, every value resolved by the API layer: output (oy, ox) reads input
 * rows oy*stride_h - pad_top + ky*dilation_h for ky < kernel_h (columns
 * alike). pad_bottom / pad_right only bound average pooling's divisor. */
typedef struct wt_window2d {
    int64_t in_h, in_w, out_h, out_w;
    int64_t kernel_h, kernel_w, stride_h, stride_w;
    int64_t pad_top, pad_left, pad_bottom, pad_right;
    int64_t dilation_h, dilation_w;
} wt_window2d;

typedef enum wt_pool_op {
    WT_POOL_MAX, WT_POOL_AVG, WT_POOL_ADAPTIVE_MAX, WT_POOL_ADAPTIVE_AVG, WT_POOL_COUNT
} wt_pool_op;

/* Max: NaN wins, else the first largest (PyTorch). Avg: divisor > 0
 * divides every window; else the window's size clipped to the padded
 * plane (count_include_pad) or to the plane. Adaptive: window oy spans
 * rows [floor(oy*H/OH), ceil((oy+1)*H/OH)) (kernel, stride, padding
 * unused). */
typedef struct wt_pool2d_desc {
    wt_pool_op op;
    wt_window2d win;
    bool count_include_pad;
    int64_t divisor;
} wt_pool2d_desc;

/* A resampling of [N, C, H, W] planes (wt_interpolate). Along rows, output
 * oy reads, in f32 with scale_h: nearest row min(floor(oy * scale_h), H - 1);
 * linear r = scale_h * oy (align_corners) or max(scale_h * (oy + 0.5) - 0.5,
 * 0), rows floor(r) and min(floor(r) + 1, H - 1) with weights 1 - frac(r)
 * and frac(r). Columns alike with scale_w. The sizes are the tensors'. */
typedef struct wt_interp2d {
    bool linear, align_corners;
    float scale_h, scale_w;
} wt_interp2d;

/* One in-place optimizer update, elementwise over n elements of param,
 * grad, m (SGD: the momentum buffer) and v (AdamW only); every tensor f32
 * and contiguous; m/v NULL when unused. */
/*
 * With sched (an optimizer's device scalars, below) the update reads its
 * learning rate, bias corrections and step number from it instead of lr,
 * bias1 and bias2 (SGD: no dampening on step 1), so a captured update
 * replays with each step's values.
 *
 * WT_OPT_ADVANCE is the tiny update that runs first in every optimizer
 * step: param is the scalars (nothing else is set but beta1 and beta2,
 * which then hold 1 - beta1 and 1 - beta2 rounded from double), advanced
 * to the next step: t += 1, the bias corrections and lr from the schedule
 * (when one is set) or the set rate. A bias correction follows
 * c(t) = c(t-1) + (1 - beta) (1 - c(t-1)) from c(0) = 0: 1 - beta^t with
 * no cancellation, c(1) the f32 of 1 - beta as the host computed it. */
typedef enum wt_optimizer_kind { WT_OPT_SGD, WT_OPT_ADAMW, WT_OPT_ADVANCE } wt_optimizer_kind;
typedef struct wt_optimizer_update {
    wt_optimizer_kind kind;
    wt_tensor *param, *m, *v;
    const wt_tensor *grad;
    const wt_tensor *sched;    /* NULL: lr, bias1 and bias2 below */
    float lr, weight_decay;
    float momentum, dampening; /* SGD */
    bool nesterov;             /* SGD */
    float beta1, beta2, eps;   /* AdamW */
    float bias1, bias2;        /* AdamW: 1 - beta^step */
    /* NULL, or the global norm of clipping: grad is taken times
     * min(1, max_norm / (norm + 1e-6)), computed in f32 on the device. */
    const wt_tensor *clip_norm;
    float max_norm;
} wt_optimizer_update;

/* An optimizer's device scalars: WT_OPT_SCHED_WORDS 32-bit words of an i32
 * tensor, each a u32 or the bits of an f32 as named. The update kernels
 * read T, LR, BIAS1 and BIAS2; the advance writes them from the rest, which wt_optimizer_set_lr and
 * wt_optimizer_set_schedule write. */
enum {
    WT_OPT_SCHED_T = 0,         /* u32: steps taken */
    WT_OPT_SCHED_LR = 1,        /* f32: the last step's learning rate */
    WT_OPT_SCHED_BIAS1 = 2,     /* f32: 1 - beta1^t */
    WT_OPT_SCHED_BIAS2 = 3,     /* f32: 1 - beta2^t */
    WT_OPT_SCHED_SET_LR = 6,    /* f32: the set learning rate */
    WT_OPT_SCHED_ON = 7,        /* u32: 1 when a schedule is followed */
    WT_OPT_SCHED_KIND = 8,      /* u32: wt_lr_schedule_kind */
    WT_OPT_SCHED_WARMUP = 9,    /* u32 */
    WT_OPT_SCHED_STEP_SIZE = 10, /* u32 */
    WT_OPT_SCHED_TOTAL = 11,    /* u32 */
    WT_OPT_SCHED_PEAK = 12,     /* f32: the schedule's lr */
    WT_OPT_SCHED_MIN_LR = 13,   /* f32 */
    WT_OPT_SCHED_GAMMA = 14,    /* f32 */
    WT_OPT_SCHED_WORDS = 16
};


/* --- the node --- */

/* The kernels a backend runs, with the tensors each takes (in[i], out[i])
 * and its parameter block (wt_node.p.<field>):
 *   FILL           out0 (4-byte dtype) = the 32-bit pattern p.bits
 *   COPY           out0 = in0 (f32; other dtypes copy through CAST)
 *   CAST           out0 = in0 converted to out0's dtype (wt_cast's rules)
 *   ELEMENTWISE    out0 = op(in0 [, in1]); p.ew (see wt_ew_args)
 *   WHERE          out0 = in0 ? in1 : in2; in1 NULL: the scalar p.bits
 *   MATMUL         out0 [B,M,N] = in0 [B,M,K] @ in1 [B,K,N]
 *   MATMUL_FUSED   out0 = act(in0 @ in1 + in2); in2 NULL or [N]; p.act
 *   REDUCE         out0 = p.reduce.op over the last p.reduce.nreduced
 *                  axes of in0; in1: the shift (or NULL)
 *   ROWWISE        out0 [R,C] = p.row.op of each row of in0; in1 weight,
 *                  in2 bias (NULL: 1, 0); p.row.eps
 *   ARGREDUCE      out0 (i32) = arg-min/max; p.argreduce
 *   SCAN           out0 = the inclusive scan of in0; p.scan
 *   RANDOM         out0 from Philox; in0: dropout's input; p.random
 *   REMAP          out0 = in0 read through p.remap
 *   COPY_INTO      out0 (a view, updated) = in0; with in1 (i32, 1 element:
 *                  the device-side start s) out0's offset moves by
 *                  min(max(s, 0), p.copy_at.limit) * p.copy_at.stride
 *   GATHER         out0 = in0 gathered along p.index.axis by in1
 *   SCATTER_ADD    out0 (updated) [.., in0[i], ..] += in1[i]; p.index.axis
 *   ARGSORT        out0 (i32) = the first p.sort.k positions of each row
 *   IM2COL         out0 (col) = the windows of in0; p.window (row0, rows)
 *   COL2IM         out0 = in1 (bias or NULL) + the adjoint of im2col of in0
 *   CONV2D         out0 = conv(in0, in1 weight, in2 bias); p.window, groups
 *   CONV_TRANSPOSE2D  the transposed convolution; as CONV2D
 *   CHANNEL_NORM   out0 = the per-channel map of in0 by in1 stats; p.eps
 *   CHANNEL_MOMENTS out0 [2,C] = mean and variance per channel of in0
 *   POOL2D         out0 pooled, out1 (i32 argmax or NULL); p.pool
 *   SOFTMAX_AXIS   out0 = p.row.op along axis 1 of in0 [O,C,I]
 *   ATTENTION      out0 = attention(in0 q, in1 k, in2 v, in3 mask); in4 the
 *                  kv_length (i32, 1 element) or NULL; out1 NULL or the
 *                  rows' log-sum-exp (wt_attention_args.lse); p.attention
 *   ATTENTION_BACKWARD out0 dq, out1 dk, out2 dv of attention without a mask
 *                  from in0 q [B,Hq,Sq,D], in1 k [B,Hkv,Skv,D], in2 v
 *                  [B,Hkv,Skv,Dv], in3 dout [B,Hq,Sq,Dv], in4 the
 *                  forward's output [B,Hq,Sq,Dv] (for D = dout . out), in5
 *                  NULL or the forward's log-sum-exp [B,Hq,Sq] (then the
 *                  softmax statistics are not recomputed), all f32 and
 *                  contiguous (outputs too); p.attention (causal, scale).
 *                  Row by row (flash-attention's backward): no [Sq, Skv]
 *                  matrix is stored
 *   ROPE           out0 = rotary embedding of in0; in1 NULL or the i32
 *                  position (1 element) added to p.rope.offset
 *   INTERPOLATE    out0 [N,C,OH,OW] = in0 [N,C,H,W] resampled; p.interp
 *   INTERPOLATE_BACKWARD out0 [N,C,H,W] = the adjoint of INTERPOLATE from
 *                  in0 dy [N,C,OH,OW] (each out0 element gathers); p.interp
 *   ACT_BACKWARD   out0 = in0 (dy) * act'(in1 x); p.act_backward
 *   CROSS_ENTROPY  out0 loss, out1 valid from in0 logits, in1 labels; p.ignore
 *   CROSS_ENTROPY_BACKWARD out0 from in0 logits, in1 labels, in2 scale; p.ignore
 *   SCATTER_ADD_ROWS out0 (updated) [row(i)] += in0[i] by in1 indices; p.rows
 *   OPTIMIZER_STEP out0 param, out1 m, out2 v (updated) by in0 grad; in1 the
 *                  optimizer's device scalars or NULL; in2 NULL or the
 *                  global norm of clipping (f32, 1 element; the gradient
 *                  is taken times min(1, p.opt.max_norm / (in2 + 1e-6)),
 *                  as GRAD_CLIP_SCALE scales, and not written); p.opt. A
 *                  backend may refuse in2 (WT_ERR_UNSUPPORTED: the caller
 *                  scales a copy of the gradient)
 *   KERNEL_DISPATCH a custom kernel over p.kernel.tensors (any of them
 *                  written, as the kernel's writable mask says)
 *   DEQUANTIZE     out0 f32 [N, K] = the blocks of in0 (i32 [N, W],
 *                  contiguous; core/quant.h); p.quant
 *   SAMPLE         out0 (i32 [B]) = a token id per row of in0 (f32 [B, V],
 *                  contiguous); in1 NULL or the i32 step (1 element);
 *                  p.sample (wt_sample's rules)
 *   LINEAR_QUANT   out0 f32 [M, N] = in0 (f32 [M, K], contiguous) @ the
 *                  dequantised in1^T (i32 [N, W], contiguous) + in2 (f32
 *                  [N] contiguous, or NULL); p.quant. With p.quant.rms_norm
 *                  or swiglu or in4, wt_linear_quant_fused's node: in3
 *                  the norm weight (f32 [K] contiguous), in4 the residual
 *                  (f32 [M, N'] contiguous, or NULL), out0 [M, N'] (N' =
 *                  N / 2 with swiglu); a backend without those kernels
 *                  answers WT_ERR_UNSUPPORTED, having recorded nothing
 *   LINEAR_FUSED   out0 [M, N'] = wt_linear_fused of in0 x [M, K]
 *                  (contiguous), in1 w [N, K] (unit k stride, any row
 *                  stride), in2 bias [N], in3 norm weight [K], in4
 *                  residual [M, N'] (each contiguous, or NULL); each f32
 *                  or f16 (in3 of in0's dtype), out0 too; N' = N/2 with
 *                  p.linear.swiglu
 *   ROPE_KV_CACHE  out0 q [B, Hq, S, D] (f32, contiguous) and out1 the KV
 *                  cache [B, 2 Hkv, T, D] (f32, any strides; updated) from
 *                  in0 qkv [B, S, Hq + 2 Hkv, D] (f32 or f16, any
 *                  strides) and in1 NULL or the i32 position (1 element)
 *                  added to p.rope_kv.offset (wt_rope_kv_cache)
 *   ROPE_KV_ATTENTION ROPE_KV_CACHE's work (in0 qkv, in1 position, out1
 *                  the cache, p.rope_kv) then ATTENTION's of the rotated
 *                  q over the cache's key and value heads (all T rows,
 *                  in2 NULL or the i32 kv_length, p.rope_kv.causal and
 *                  .scale; no mask) into out0 [B, Hq, S, D] (f32,
 *                  contiguous); the q between them need not exist
 *                  (wt_rope_kv_attention)
 *   NORM_BACKWARD  out0 dx and out1 dy x^ (or NULL: not wanted) [R,C] of
 *                  p.row.op (LAYERNORM or RMSNORM, eps p.row.eps) over
 *                  the rows of in1 x [R,C] from in0 dy [R,C] and in2
 *                  weight [C] (or NULL: 1); all f32 and contiguous. dy x^
 *                  rather than x^: the weight's gradient is its column
 *                  sum, no product pass left. A backend may refuse rows
 *                  its kernel does not fit (WT_ERR_UNSUPPORTED: the
 *                  caller composes the backward then)
 *   GRAD_CLIP_SCALE out0, out1, out2 (f32, contiguous, on distinct buffers;
 *                  updated; out1 and out2 may be NULL) *= min(1, m / (in0
 *                  + 1e-6)) with m = p.clip.max_norm (as f32) and in0 the
 *                  global norm (f32, 1 element), a NaN factor kept
 *                  (wt_clip_grad_norm's scaling, in place)
 *   GRAD_NORMS     out0 [k] (f32, contiguous; k >= the inputs given) gets
 *                  the 2-norm of each of in0 .. in(k-1) (f32, contiguous,
 *                  not empty; the first NULL ends them) in order:
 *                  clipping's per-gradient norms, several a kernel. A
 *                  backend may refuse inputs its kernel cannot bind
 *                  (WT_ERR_UNSUPPORTED: the caller reduces each alone)
 * The backend-facing rules of each kind are those of wt_backend_ops before
 * nodes (the comments at the argument types above). */
/* The frequencies of a rotary embedding: theta^(-2i/D), scaled as
 * wt_rope_kv_cache_options says (core/rope_freqs.c). */
typedef struct wt_rope_freqs {
    double theta;
    wt_rope_scaling scaling;
    double factor, low_freq_factor, high_freq_factor;
    int64_t original_max_position;
} wt_rope_freqs;
/* f_i of pair i of a head of D (radians a position). */
double wt_rope_frequency(const wt_rope_freqs *f, int64_t i, int64_t D);

#define WT_NODE_KINDS(X)                                                                   \
    X(FILL, fill) X(COPY, copy) X(CAST, cast) X(ELEMENTWISE, elementwise) X(WHERE, where)     \
    X(MATMUL, matmul) X(MATMUL_FUSED, matmul_fused) X(REDUCE, reduce) X(ROWWISE, rowwise)     \
    X(ARGREDUCE, argreduce) X(SCAN, scan) X(RANDOM, random) X(REMAP, remap)                   \
    X(COPY_INTO, copy_into) X(GATHER, gather) X(SCATTER_ADD, scatter_add)                     \
    X(ARGSORT, argsort) X(IM2COL, im2col) X(COL2IM, col2im) X(CONV2D, conv2d)                 \
    X(CONV_TRANSPOSE2D, conv_transpose2d) X(CHANNEL_NORM, channel_norm)                       \
    X(CHANNEL_MOMENTS, channel_moments) X(POOL2D, pool2d) X(SOFTMAX_AXIS, softmax_axis)       \
    X(ATTENTION, attention) X(ATTENTION_BACKWARD, attention_backward) X(ROPE, rope)          \
    X(ACT_BACKWARD, act_backward)                                                             \
    X(CROSS_ENTROPY, cross_entropy) X(CROSS_ENTROPY_BACKWARD, cross_entropy_backward)         \
    X(SCATTER_ADD_ROWS, scatter_add_rows) X(OPTIMIZER_STEP, optimizer_step)                   \
    X(KERNEL_DISPATCH, kernel) X(INTERPOLATE, interpolate)                                    \
    X(INTERPOLATE_BACKWARD, interpolate_backward) X(DEQUANTIZE, dequantize)                    \
    X(LINEAR_QUANT, linear_quant) X(SAMPLE, sample) X(LINEAR_FUSED, linear_fused)              \
    X(ROPE_KV_CACHE, rope_kv_cache) X(NORM_BACKWARD, norm_backward)                         \
    X(GRAD_CLIP_SCALE, grad_clip_scale) X(ROPE_KV_ATTENTION, rope_kv_attention)              \
    X(GRAD_NORMS, grad_norms)

typedef enum wt_node_kind {
#define WT_NODE_KIND_ENUM(ID, name) WT_NODE_##ID,
    WT_NODE_KINDS(WT_NODE_KIND_ENUM)
#undef WT_NODE_KIND_ENUM
    WT_NODE_KIND_COUNT
} wt_node_kind;

/* The bit of kind in wt_backend_ops.runs. */
#define WT_NODE_BIT(kind) (UINT64_C(1) << (kind))

enum { WT_NODE_MAX_IN = 6, WT_NODE_MAX_OUT = 3 };

typedef struct wt_node {
    wt_node_kind kind;
    const wt_tensor *in[WT_NODE_MAX_IN];
    wt_tensor *out[WT_NODE_MAX_OUT];
    union {
        uint32_t bits; /* FILL, WHERE */
        struct { wt_op op; int nin; uint32_t params[2]; } ew;
        wt_matmul_act act;
        struct { wt_reduce_op op; double n; int nreduced; } reduce;
        struct { wt_rowwise_op op; float eps; } row;
        struct { bool is_min; int nreduced; } argreduce;
        struct { wt_scan_op op; int64_t n, inner; } scan;
        wt_random_args random;
        wt_remap remap;
        struct { int axis; bool trusted; } index; /* GATHER, SCATTER_ADD */
        struct { bool descending; int64_t k; } sort;
        struct { wt_window2d win; int64_t row0, rows, groups; } window;
        float eps; /* CHANNEL_NORM */
        wt_pool2d_desc pool;
        struct { bool mask_is_bool, causal; float scale; } attention;
        struct { double theta; int64_t offset; } rope;
        struct { int64_t stride, limit; } copy_at; /* COPY_INTO with in1 */
        wt_interp2d interp; /* INTERPOLATE(_BACKWARD) */
        wt_activation act_backward;
        int32_t ignore; /* CROSS_ENTROPY(_BACKWARD) */
        struct { int64_t plane, plane_rows; } rows;
        wt_optimizer_update opt; /* its tensors: out0, out1, out2, in0 */
        struct { double max_norm; } clip; /* GRAD_CLIP_SCALE */
        /* DEQUANTIZE, LINEAR_QUANT (rms_norm, swiglu, eps: LINEAR_QUANT's
         * fused prologue and epilogue, as LINEAR_FUSED's) */
        struct { wt_quant_type type; int64_t k; bool rms_norm, swiglu; float eps; } quant;
        struct { bool rms_norm, swiglu; float eps; } linear; /* LINEAR_FUSED */
        /* ROPE_KV_CACHE; ROPE_KV_ATTENTION also reads causal and scale */
        struct { wt_rope_freqs freqs; int64_t offset, q_heads; bool causal; float scale; } rope_kv;
        /* SAMPLE: inv_temp 0 = greedy; top_k 0 and top_p 1 = no cut */
        struct { float inv_temp, top_p; int64_t top_k; uint64_t seed; } sample;
        struct {
            const wt_kernel *k;
            wt_tensor *const *tensors;
            const void *params;
            uint32_t groups[3];
        } kernel;
    } p;
} wt_node;

/* The kernel's name ("matmul", "reduce" ...). */
const char *wt_node_kind_name(wt_node_kind kind);
/* What profiles and traces call the node: the most specific name its
 * parameters give (an elementwise node's catalogue op, "sum", "softmax",
 * "cumsum", "dropout", "adamw_step" ...), else its kernel's. */
const char *wt_node_label(const wt_node *n);
/* The node's tensors as a kernel's argument structs expect them. */
static inline wt_ew_args wt_node_ew_args(const wt_node *n)
{
    wt_ew_args a = {.op = n->p.ew.op, .nin = n->p.ew.nin, .in = {n->in[0], n->in[1]},
                    .params = {n->p.ew.params[0], n->p.ew.params[1]}, .out = n->out[0]};
    return a;
}
wt_attention_args wt_node_attention_args(const wt_node *n);
wt_optimizer_update wt_node_optimizer_update(const wt_node *n);

/* Runs n on ctx's backend, with everything that goes around a kernel:
 * the context's current node (GPU profiles name their passes by it), host
 * timing while ctx->host_log is set, and a refusal of a kind the backend
 * does not run (WT_ERR_UNSUPPORTED). Every op goes through here. */
wt_status wt_node_run(wt_context *ctx, const wt_node *n);
/* Whether ctx's backend runs nodes of kind. */
bool wt_backend_runs(const wt_context *ctx, wt_node_kind kind);

#endif /* WT_NODE_H */
