/* Section 12 of webtensor.h: networks: norms, attention, sampling, convolution, pooling. */
#ifndef WEBTENSOR_NETWORKS_H
#define WEBTENSOR_NETWORKS_H

#include "errors.h"
#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ======== 12. Networks =================================================== */

/* --- softmax and norms --- */

/* exp(x - max) / sum along axis (NumPy/PyTorch semantics; axis may be
 * negative). */
WT_API wt_status wt_softmax(const wt_tensor *x, int axis, wt_tensor **out);

/* log(softmax(x)) along axis, computed as (x - max) - log(sum(exp(x - max)))
 * (no overflow for large inputs, no log of an underflowed 0). A row of
 * -inf gives NaN, as in PyTorch. Any axis; negative axes count from the end;
 * wt_softmax and wt_log_softmax read a middle axis in place (no transpose).
 * f32 and f16 (through f32); WT_ERR_UNSUPPORTED for i32 and bool. */
WT_API wt_status wt_log_softmax(const wt_tensor *x, int axis, wt_tensor **out);

/* Layer norm and RMS norm over the last normalized_ndim axes of x (PyTorch's
 * normalized_shape = x.shape[-normalized_ndim:]), C elements each:
 *   layer_norm: (x - mean) / sqrt(var + eps) * weight + bias  (biased var)
 *   rms_norm:   x / sqrt(mean(x^2) + eps) * weight
 * weight and bias have the normalised shape or are NULL (1 and 0).
 * Statistics are over all normalised elements together. normalized_ndim
 * in [1, x's ndim], eps finite and >= 0 (1e-5 is PyTorch's default; rms
 * norm models use 1e-6). Finite rows never overflow inside the norms, up
 * to the top of the f32 range: the statistics are kept in range on every
 * backend. */
WT_API wt_status wt_layer_norm(const wt_tensor *x, int normalized_ndim, const wt_tensor *weight,
                               const wt_tensor *bias, double eps, wt_tensor **out);
WT_API wt_status wt_rms_norm(const wt_tensor *x, int normalized_ndim, const wt_tensor *weight,
                             double eps, wt_tensor **out);

typedef struct wt_batch_norm_options {
    uint32_t struct_size; /* set by wt_batch_norm_options_init */
    bool training;        /* false: normalise with the running statistics */
    double momentum;      /* 0.1: running = (1 - momentum) * running + momentum * batch */
    double eps;           /* 1e-5 */
} wt_batch_norm_options;
WT_API void wt_batch_norm_options_init(wt_batch_norm_options *opts);

/* x [N, C, ...] (at least 2 axes), normalised per channel c:
 *   out = (x - mean[c]) / sqrt(var[c] + eps) * weight[c] + bias[c]
 * weight, bias: [C] or NULL (1 and 0). Inference: mean and var are
 * running_mean and running_var ([C], required). Training: the biased
 * mean and variance of x over every axis but 1 (at least 2 values per
 * channel, else WT_ERR_SHAPE); running_mean and running_var, if given
 * (both or neither; [C], f32 or f16, contiguous), are updated in place
 * with PyTorch's rule: the running variance takes the UNBIASED batch
 * variance (times n / (n - 1)). batch_mean and batch_var may be NULL; in
 * training they receive the batch mean and the biased batch variance
 * ([C] f32 views of one [2, C] tensor), in inference NULL. Statistics are
 * two-pass (squared deviations from the mean): a large mean costs no
 * precision. */
WT_API wt_status wt_batch_norm(const wt_tensor *x, wt_tensor *running_mean, wt_tensor *running_var,
                               const wt_tensor *weight, const wt_tensor *bias,
                               const wt_batch_norm_options *opts, wt_tensor **out,
                               wt_tensor **batch_mean, wt_tensor **batch_var);
/* x [N, C, ...]: the channels split into num_groups groups; each (n,
 * group) is normalised by its own mean and biased variance, then
 * out = normalised * weight[c] + bias[c] (weight, bias [C] or NULL).
 * batch_norm and group_norm compute f16 through f32; the result has x's
 * dtype. */
typedef struct wt_group_norm_options {
    uint32_t struct_size; /* set by wt_group_norm_options_init */
    double eps;           /* 1e-5 */
} wt_group_norm_options;
WT_API void wt_group_norm_options_init(wt_group_norm_options *opts);
/* num_groups > 0 divides C; opts NULL: the defaults. */
WT_API wt_status wt_group_norm_v2(const wt_tensor *x, int64_t num_groups, const wt_tensor *weight,
                                  const wt_tensor *bias, const wt_group_norm_options *opts, wt_tensor **out);

/* --- attention --- */

/* Attention, fused (no [Sq, Skv] score matrix is stored):
 *   out = softmax(q @ k^T * scale + mask) @ v
 * q [B, Hq, Sq, D], k [B, Hkv, Skv, D], v [B, Hkv, Skv, Dv] -> out
 * [B, Hq, Sq, Dv] (3-D inputs are [H, S, D], B = 1, and give a 3-D result).
 * Grouped-query attention: Hkv divides Hq, and q head h reads k/v head
 * h / (Hq / Hkv) (PyTorch's enable_gqa, repeat_interleave order).
 * mask: NULL, or broadcastable (NumPy rules, up to 4 dims) to
 *   [B, Hq, Sq, Skv]: WT_F32/WT_F16 values are added to the scores
 *   (-inf masks); a WT_BOOL mask keeps the keys where it is true
 *   (PyTorch's boolean attn_mask).
 * causal: the causal
 *   triangle is aligned to the END of the keys (bottom-right), which is
 *   what a KV cache needs (decode: Sq = 1 sees every key). PyTorch's
 *   is_causal aligns it top-left; the two agree when Sq == Skv. causal and
 *   a mask may be combined (a key must pass both); PyTorch refuses that.
 * opts (NULL: the defaults of wt_attention_options_init):
 *   causal: query i sees key j only if j <= i + (Skv - Sq) (below);
 *   scale: 0 for 1/sqrt(D), else any value finite in f32.
 * A query row that sees no key (every score -inf: fully masked, or
 *   causal with Sq > Skv, or Skv = 0) gives 0s, as PyTorch's
 *   scaled_dot_product_attention does (not NaN).
 * q, k, v: f32, or f16 computed in f32 (the result is f16 only if q, k
 * and v all are); WT_ERR_UNSUPPORTED for i32 and bool.
 * Errors: WT_ERR_SHAPE for ranks other than 3/4, mismatched batch, D or
 * Skv, Hkv not dividing Hq, a mask that does not broadcast;
 * WT_ERR_INVALID_ARGUMENT for a NaN/inf scale or an i32 mask.
 * The WebGPU kernels hold a query tile and a key/value tile in workgroup
 * memory, which bounds D and Dv (about D + max(D, Dv) <= 4000 with
 * WebGPU's minimum 16 KiB; tested up to 256): WT_ERR_UNSUPPORTED beyond.
 * On WebGPU, work without a mask with D == Dv a multiple of 4 and rows
 * of q, k, v aligned to 4 elements (prefill) runs a register-tiled kernel
 * that reads f16 q, k, v as f16 (f32 sums, f16 result); other f16 work
 * is computed through f32 copies. There, for f32 q given as the [B, Hq,
 * Sq, D] view of a dense [B, Sq, Hq, D] (transpose(1, 2) of a linear
 * layer's split heads), out is such a view too (its storage [B, Sq, Hq,
 * Dv]), so that merging the heads back is a view; and the fused backward
 * reads such q, k, v without copies (WT_ATTN_HEAD_VIEWS=0: dense). */
typedef struct wt_attention_options {
    uint32_t struct_size; /* set by wt_attention_options_init */
    bool causal;          /* false */
    double scale;         /* 0: 1/sqrt(D) */
    /* NULL, or an i32 tensor of one element (any shape) read by the
     * kernel on the device: only the first kv_length keys are seen (the
     * value clamped to [0, Skv]), and causal aligns to the end of those
     * keys. A decode step over a KV cache of fixed size Skv then stays
     * the same graph while the cache fills (see "values that change per
     * step" under captured graphs). Not differentiable (a q, k or v that
     * requires grad: WT_ERR_UNSUPPORTED). */
    const wt_tensor *kv_length;
} wt_attention_options;
WT_API void wt_attention_options_init(wt_attention_options *opts);
WT_API wt_status wt_scaled_dot_product_attention_v2(const wt_tensor *q, const wt_tensor *k,
                                                    const wt_tensor *v, const wt_tensor *mask,
                                                    const wt_attention_options *opts, wt_tensor **out);

/* Rotary position embedding, Llama / Hugging Face convention
 * ("rotate_half"): with D the last axis (even), h = D / 2, p = offset + s
 * the position of sequence index s, and f_i = theta^(-2i / D), i < h:
 *   out[i]     = x[i] * cos(p f_i) - x[i + h] * sin(p f_i)
 *   out[i + h] = x[i + h] * cos(p f_i) + x[i] * sin(p f_i)
 * layout names the sequence axis: WT_ROPE_BHSD ([..., S, D], the axis
 * before D, as q/k of wt_scaled_dot_product_attention_v2) or WT_ROPE_BSHD
 * ([..., S, H, D], two before D, the layout of a projection's output).
 * theta > 0 (10000 for Llama 2, 500000 for Llama 3), offset >= 0 (the
 * position of the first token, e.g. the KV-cache length when decoding).
 * Angles are exact to about 2e-6 rad (the CPU computes them in double;
 * WebGPU reduces them exactly in turns, for positions below 2^24, and
 * refuses larger ones with WT_ERR_UNSUPPORTED): more accurate than a
 * float32 cos/sin cache at long positions. f32 and f16 (through f32). */
typedef enum wt_rope_layout { WT_ROPE_BHSD = 0, WT_ROPE_BSHD = 1 } wt_rope_layout;
typedef struct wt_rope_options {
    uint32_t struct_size;  /* set by wt_rope_options_init */
    double theta;          /* 10000 */
    int64_t offset;        /* 0 */
    wt_rope_layout layout; /* WT_ROPE_BHSD */
    /* NULL, or an i32 tensor of one element (any shape) read by the
     * kernel on the device and added to offset (a sum below 0 counts as
     * 0; on WebGPU positions past 2^24 lose exactness). Not
     * differentiable (x requiring grad: WT_ERR_UNSUPPORTED). */
    const wt_tensor *position;
} wt_rope_options;
WT_API void wt_rope_options_init(wt_rope_options *opts);
/* opts NULL: the defaults. */
WT_API wt_status wt_rope_v2(const wt_tensor *x, const wt_rope_options *opts, wt_tensor **out);

/* The start of an attention layer's step with a joined q, k, v projection
 * and a joined KV cache, in one kernel: qkv [B, S, Hq + 2 Hkv, D] (the
 * projection's result viewed per head, any strides, f32 or f16) and
 * kv_cache [B, 2 Hkv, T, D] (f32; the keys' heads, then the values'), with
 * positions p + s, p = offset + position's value:
 *     kv_cache[b, j, t0 + s]       = rope(qkv[b, s, Hq + j], p + s)   j < Hkv
 *     kv_cache[b, Hkv + j, t0 + s] = qkv[b, s, Hq + Hkv + j]
 *     q[b, h, s]                   = rope(qkv[b, s, h], p + s)        h < Hq
 * rope as wt_rope_v2's (rotate_half, frequencies f_i = theta^(-2i/D),
 * or the scaled ones below); q is a new f32 [B, Hq, S, D]; the rows
 * written start at t0 = p clamped to [0, T - S], as wt_copy_into_at
 * clamps. kv_cache is updated in place (the state a decoder keeps between
 * steps). Not differentiable (a tensor requiring grad while recording:
 * WT_ERR_INVALID_ARGUMENT).
 * Scaled frequencies (a checkpoint's rope_scaling), computed in double:
 *  - WT_ROPE_SCALING_LINEAR: f_i / factor;
 *  - WT_ROPE_SCALING_LLAMA3 (Llama 3.1's "llama3"): with wavelength
 *    w = 2 pi / f_i and L = original_max_position, f_i / factor where
 *    w > L / low_freq_factor, f_i where w < L / high_freq_factor, and in
 *    between (1 - a) f_i / factor + a f_i, a = (L / w - low_freq_factor) /
 *    (high_freq_factor - low_freq_factor).
 * WT_ERR_INVALID_ARGUMENT for factor <= 0 (LINEAR, LLAMA3), for LLAMA3
 * unless 0 < low_freq_factor < high_freq_factor and original_max_position
 * >= 1, and for an unknown scaling. A caller built against the header
 * before the scaling fields (struct_size up to position) gets none. */
typedef enum wt_rope_scaling {
    WT_ROPE_SCALING_NONE = 0,
    WT_ROPE_SCALING_LINEAR = 1,
    WT_ROPE_SCALING_LLAMA3 = 2
} wt_rope_scaling;
typedef struct wt_rope_kv_cache_options {
    uint32_t struct_size;
    double theta;   /* 10000 */
    int64_t offset; /* added to the first position; 0 */
    /* NULL, or an i32 tensor of one element on the device whose value
     * (negative: 0) is added to offset when the kernel runs: the
     * position of a captured step (see wt_rope_options.position). */
    const wt_tensor *position;
    wt_rope_scaling scaling;                  /* WT_ROPE_SCALING_NONE */
    double factor;                            /* LINEAR, LLAMA3; 1 */
    double low_freq_factor, high_freq_factor; /* LLAMA3; 1, 4 */
    int64_t original_max_position;            /* LLAMA3; 8192 */
} wt_rope_kv_cache_options;
WT_API void wt_rope_kv_cache_options_init(wt_rope_kv_cache_options *opts);
WT_API wt_status wt_rope_kv_cache(wt_tensor *kv_cache, const wt_tensor *qkv, int64_t q_heads,
                                  const wt_rope_kv_cache_options *opts, wt_tensor **q);
/* wt_rope_kv_cache followed by attention of its q over the whole cache:
 *     wt_rope_kv_cache(kv_cache, qkv, q_heads, rope, &q);
 *     wt_scaled_dot_product_attention_v2(q, kv_cache[:, :Hkv],
 *                                        kv_cache[:, Hkv:], NULL, attn, out);
 * with the same arguments, rules and errors (attn NULL: the defaults;
 * slice the cache's T axis to give fewer keys, or set attn->kv_length for
 * a count read on the device). out is a new f32 [B, Hq, S, D]. A decode
 * step (S = 1) runs as one kernel on WebGPU, the rotated q never stored
 * and the step's key and value taken from qkv (f32 attention, D a
 * multiple of 4 with D / 4 a power of two, cache rows at 16-byte
 * boundaries, at most 2048 keys; otherwise the two kernels above);
 * WT_ROPE_KV_ATTENTION=0 asks for the two calls above. The CPU gives the
 * two calls' results, bit for bit. */
WT_API wt_status wt_rope_kv_attention(wt_tensor *kv_cache, const wt_tensor *qkv, int64_t q_heads,
                                      const wt_rope_kv_cache_options *rope, const wt_attention_options *attn,
                                      wt_tensor **out);

/* --- sampling the next token ---
 * One token id per row of logits [B, V] (f32; f16 through f32), written
 * to out, i32 [B], on the device (so a decode step that samples can be
 * captured and replayed, the token never read back). Per row, in this
 * order (the order of Hugging Face's logits processors):
 *  - temperature 0 (or top_k 1): greedy, the first index of the largest
 *    logit (wt_argmax's choice); no random number is drawn;
 *  - weights w_i = exp((l_i - max l) / temperature);
 *  - top_k > 0: only logits >= the k-th largest are kept (ties with it
 *    are all kept, so a few more than k when values repeat);
 *  - top_p < 1: of those, the highest logits down to the largest
 *    threshold t whose kept weights (logit >= t) reach top_p of the kept
 *    total (nucleus; ties at t all kept; at least the largest is kept);
 *  - one uniform u in [0, 1) is drawn and the first kept index i (in index
 *    order) whose running sum of kept weights exceeds u * their total is
 *    the token.
 * The random word: Philox4x32-10 (as wt_tensor_rand) with key = seed and
 * counter = (step, row, 1, 0), step the value of opts->counter read on the
 * device (as unsigned 32-bit; NULL: 0), word 0, u = (word >> 8) * 2^-24.
 * Write a new step into counter before each replay (e.g. the position)
 * for a new draw. What is the same everywhere: u, bit for bit, on every
 * backend; the greedy choice; the kept sets of top_k (integer
 * comparisons of the logits' bits). The sums are made in one fixed order
 * on every backend (256 chunks, element i in chunk i mod 256, each summed
 * in index order, then a pairwise tree over the chunks; the draw walks
 * chunk after chunk), so the sampled id is the same on every backend
 * whose exp() gives the same bits; where exp() differs by an ulp (a GPU's
 * against the C library's) the id can differ only when u * total falls
 * within that rounding of a boundary of the running sum.
 * A row with a NaN, a +inf or no finite logit gets id -1 (an index that
 * wt_embedding then refuses). Not differentiable. Errors:
 * WT_ERR_INVALID_ARGUMENT for temperature < 0 or NaN, top_k < 0, top_p
 * outside (0, 1], a counter that is not an i32 tensor of one element, a
 * logits dtype other than f32/f16; WT_ERR_SHAPE unless logits is 2-D
 * with V >= 1. */
typedef struct wt_sample_options {
    uint32_t struct_size;      /* set by wt_sample_options_init */
    double temperature;        /* 1; 0: greedy */
    int64_t top_k;             /* 0: no top-k cut */
    double top_p;              /* 1: no nucleus cut */
    uint64_t seed;             /* 0 */
    const wt_tensor *counter;  /* NULL, or i32 [1] read on the device: the step */
} wt_sample_options;
WT_API void wt_sample_options_init(wt_sample_options *opts);
/* opts NULL: the defaults (temperature 1, no cuts, seed 0, step 0). */
WT_API wt_status wt_sample(const wt_tensor *logits, const wt_sample_options *opts, wt_tensor **out);

/* --- convolution and pooling ---
 * Layout NCHW: x is [N, C, H, W] (conv1d: [N, C, L]); an unbatched
 * input ([C, H, W], conv1d [C, L]) gives an unbatched result. Inputs may
 * be any strided view; f16 inputs compute in f32 (result f16 when every
 * given tensor is f16). Errors: WT_ERR_INVALID_ARGUMENT for NULLs, bad
 * options (zero or negative stride, kernel or dilation, negative padding,
 * groups that do not divide the channels; a pooling stride of 0 means the
 * kernel size), WT_ERR_SHAPE for shapes that do not fit (weight or bias
 * against x, a kernel larger than the padded input), WT_ERR_UNSUPPORTED
 * for dtypes other than f32/f16. The convolutions run as matrix products
 * over the input's windows (im2col). On WebGPU the convolutions (and
 * conv_transpose2d, whose windows are those of the adjoint) gather the
 * windows inside the product's loads: no column matrix in memory, and f16
 * operands stay f16 with f32 sums (an f16 result plane of odd size goes
 * through f32); depthwise conv2d (one input channel per group) runs
 * directly. Elsewhere the column matrix is cut in chunks whose
 * temporaries take up to WT_CONV_CHUNK_BYTES (64 MiB) beside the result. */

typedef struct wt_conv_options {
    uint32_t struct_size;       /* set by wt_conv_options_init */
    int64_t stride[2];          /* (h, w); 1 */
    int64_t padding[4];         /* top, bottom, left, right; 0. conv1d: left, right */
    int64_t dilation[2];        /* (h, w); 1 */
    int64_t groups;             /* 1; C and the output channels are multiples */
    /* "same" (conv2d, conv1d): padding is ignored; the output has
     * ceil(in / stride) positions and the padding is
     * total = max((out - 1)*stride + dilation*(k - 1) + 1 - in, 0),
     * total / 2 before and the rest after (ONNX's SAME_UPPER; with stride
     * 1 PyTorch's padding="same", which allows no other stride). */
    bool same;
    int64_t output_padding[2];  /* conv_transpose2d: rows/columns added after; < stride or < dilation */
} wt_conv_options;
WT_API void wt_conv_options_init(wt_conv_options *opts);

/* out[n, o, y, x] = bias[o] + sum over c in o's group, ky, kx of
 *   x[n, c, y*sh - pad_top + ky*dh, x*sw - pad_left + kx*dw] * w[o, c', ky, kx]
 * (cross-correlation, as PyTorch), zero outside x. w: [O, C/groups, KH,
 * KW]; bias: [O] or NULL; opts NULL for the defaults. Output size
 * (H + top + bottom - dh*(KH-1) - 1) / sh + 1 (floor). groups == C == O
 * is a depthwise convolution. */
WT_API wt_status wt_conv2d(const wt_tensor *x, const wt_tensor *w, const wt_tensor *bias,
                           const wt_conv_options *opts, wt_tensor **out);
/* conv2d along one axis: x [N, C, L], w [O, C/groups, K]; reads stride[0],
 * dilation[0], padding[0] (left) and padding[1] (right). */
WT_API wt_status wt_conv1d(const wt_tensor *x, const wt_tensor *w, const wt_tensor *bias,
                           const wt_conv_options *opts, wt_tensor **out);
/* The transpose (adjoint) of conv2d, as PyTorch's conv_transpose2d:
 * x [N, C, H, W], w [C, O/groups, KH, KW], bias [O] or NULL; output
 *   (H - 1)*sh - top - bottom + dh*(KH - 1) + output_padding[0] + 1
 * rows (columns alike). Padding may be asymmetric; `same` is refused. */
WT_API wt_status wt_conv_transpose2d(const wt_tensor *x, const wt_tensor *w, const wt_tensor *bias,
                                     const wt_conv_options *opts, wt_tensor **out);

typedef struct wt_pool2d_options {
    uint32_t struct_size;     /* set by wt_pool2d_options_init */
    int64_t kernel[2];        /* (h, w); must be set (> 0) */
    int64_t stride[2];        /* 0 (the default): the kernel size */
    int64_t padding[4];       /* top, bottom, left, right (as wt_conv_options); 0; each
                                 at most half the (dilated) kernel */
    int64_t dilation[2];      /* max pooling only; 1 */
    bool ceil_mode;           /* round the output size up; a window must start inside
                                 the input or its leading padding (PyTorch) */
    bool count_include_pad;   /* average pooling: padding counts in the divisor; true */
    int64_t divisor_override; /* average pooling: > 0 divides every window; 0 */
} wt_pool2d_options;
WT_API void wt_pool2d_options_init(wt_pool2d_options *opts);

/* Max over each window (padding never wins; ties give the first position;
 * a NaN wins, the window's last NaN giving the index, as PyTorch).
 * indices: NULL, or receives a WT_I32 tensor of out's shape holding the
 * position y*W + x of each maximum in its input plane (PyTorch's
 * return_indices). x [N, C, H, W] or [C, H, W]. */
WT_API wt_status wt_max_pool2d_v2(const wt_tensor *x, const wt_pool2d_options *opts, wt_tensor **out,
                                  wt_tensor **indices);
/* Mean over each window, as PyTorch's avg_pool2d: divisor_override, else
 * the window clipped to the padded input (count_include_pad) or to the
 * input (windows past the padded edge in ceil_mode count only what lies
 * inside). dilation must be 1. */
WT_API wt_status wt_avg_pool2d_v2(const wt_tensor *x, const wt_pool2d_options *opts, wt_tensor **out);
/* Output [.., out_h, out_w]; window oy covers rows floor(oy*H/out_h) to
 * ceil((oy+1)*H/out_h) (exclusive), columns alike. out_h, out_w > 0. */
WT_API wt_status wt_adaptive_avg_pool2d(const wt_tensor *x, int64_t out_h, int64_t out_w,
                                        wt_tensor **out);
WT_API wt_status wt_adaptive_max_pool2d(const wt_tensor *x, int64_t out_h, int64_t out_w,
                                        wt_tensor **out, wt_tensor **indices);
/* Mean / max over the two last axes, keeping them as size 1 ([N, C, 1, 1]). */
WT_API wt_status wt_global_avg_pool2d(const wt_tensor *x, wt_tensor **out);
WT_API wt_status wt_global_max_pool2d(const wt_tensor *x, wt_tensor **out);

/* Resampling of the planes of x [N, C, H, W] to [N, C, out_h, out_w], as
 * PyTorch's F.interpolate (and ONNX Resize with the matching modes). The
 * output size is size, or floor(H * scale_factor[0]) x floor(W *
 * scale_factor[1]) when scale factors are given (exactly one of the two;
 * every extent > 0). Output row oy reads the input through a source
 * coordinate with scale s = H / out_h, or 1 / scale_factor[0] when scale
 * factors are given (PyTorch's recompute_scale_factor=False, its default;
 * pass size for recompute_scale_factor=True), computed in f32 as PyTorch
 * does (columns alike):
 *   nearest:  row min(floor(oy * s), H - 1) (PyTorch's mode='nearest'; its
 *             CPU kernel alone maps out_h == H or 2H by oy and oy / 2 even
 *             where 1 / scale_factor differs from H / out_h: not followed)
 *   bilinear: r = oy * (H - 1) / (out_h - 1) (0 when out_h == 1) with
 *             align_corners, else max((oy + 0.5) * s - 0.5, 0); the rows
 *             floor(r) and floor(r) + 1 (clamped to H - 1) weighted by
 *             1 - frac(r) and frac(r).
 * Bilinear with a non-finite neighbour gives NaN or inf where its weight
 * is 0, as PyTorch. f16 x computes in f32 and gives f16. */
typedef enum wt_interp_mode { WT_INTERP_NEAREST = 0, WT_INTERP_BILINEAR = 1 } wt_interp_mode;

typedef struct wt_interpolate_options {
    uint32_t struct_size;    /* set by wt_interpolate_options_init */
    wt_interp_mode mode;     /* WT_INTERP_NEAREST */
    bool align_corners;      /* bilinear only (true with nearest is refused); false */
    int64_t size[2];         /* (out_h, out_w); 0: scale_factor gives the size */
    double scale_factor[2];  /* (h, w), finite and > 0; 0: size is used */
} wt_interpolate_options;
WT_API void wt_interpolate_options_init(wt_interpolate_options *opts);

/* opts: mode, align_corners and either size or scale_factor (NULL is
 * refused: no size). WT_ERR_SHAPE for x not 4-D, an empty input plane or
 * an output extent of 0 (or past 2^31). */
WT_API wt_status wt_interpolate(const wt_tensor *x, const wt_interpolate_options *opts, wt_tensor **out);
/* nn.Upsample(scale_factor=scale_factor, mode=mode): wt_interpolate with
 * the same factor on both axes and align_corners false. */
WT_API wt_status wt_upsample2d(const wt_tensor *x, double scale_factor, wt_interp_mode mode,
                               wt_tensor **out);

/* --- dropout --- */

/* Inverted dropout: element i is 0 where wt_tensor_rand(seed)'s element i
 * (f32) is below p, else x * (1 / (1 - p)) (p and the scale rounded to
 * f32 first). p = 0: a copy of x; p = 1: zeros. A dropped element is 0
 * even when x is NaN or inf. p outside [0, 1] or NaN:
 * WT_ERR_INVALID_ARGUMENT. f32 and f16. opts NULL: the defaults (p 0.5,
 * seed 0: the same mask on every call; pass a new seed per step). */
typedef struct wt_dropout_options {
    uint32_t struct_size; /* set by wt_dropout_options_init */
    double p;             /* 0.5 */
    uint64_t seed;        /* 0 */
} wt_dropout_options;
WT_API void wt_dropout_options_init(wt_dropout_options *opts);
WT_API wt_status wt_dropout_v2(const wt_tensor *x, const wt_dropout_options *opts, wt_tensor **out);

#ifdef __cplusplus
}
#endif
#endif /* WEBTENSOR_NETWORKS_H */
