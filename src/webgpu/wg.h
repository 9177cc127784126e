/* The WebGPU backend's runtime as its kernels see it: launching a WGSL
 * compute shader over storage buffers, with small parameters.
 *
 * Shader conventions (every .wgsl in src/webgpu/kernels/wgsl follows them):
 *  - @group(0) @binding(0): `var<uniform> p: Params;` the op's parameters
 *    (at most WG_MAX_PARAMS bytes, placed in a shared uniform arena).
 *  - @group(0) @binding(1..n): the storage buffers, in the order of the
 *    bindings passed to wg_dispatch; read-only ones as
 *    `var<storage, read>`, written ones as `var<storage, read_write>`.
 *  - The entry point is `main`. Launches over 65,535 workgroups are folded
 *    into 2-D: a shader computes its linear workgroup index as
 *    `wid.x + wid.y * nwg.x` (nwg = @builtin(num_workgroups)) and must
 *    tolerate indices past the end (the fold may round up).
 *  - A shader variant is the source with a prelude of WGSL constants
 *    prepended (e.g. "const OP: u32 = 2u;"); source name + prelude is the
 *    pipeline cache key.
 *  - Tensor element offsets are passed as parameters, not binding offsets
 *    (binding offsets must be 256-byte aligned; views are not).
 */
#ifndef WT_WG_H
#define WT_WG_H

#include "core/internal.h"

#define WG_MAX_PARAMS 256
#define WG_MAX_BINDINGS 8
#define WG_MAX_LIBRARIES 4

typedef struct wg_context wg_context; /* ctx->impl of a WebGPU context */

/* One storage buffer of a launch: a tensor's whole storage, or a scratch
 * buffer from wg_scratch. */
typedef struct wg_binding {
    wt_storage *storage;
    bool writable;
} wg_binding;

typedef struct wg_launch {
    const char *shader;    /* file stem in src/webgpu/kernels/wgsl, e.g. "unary" */
    const char *prelude;   /* WGSL prepended to the source; NULL for none */
    /* Built-in WGSL libraries (file stems, e.g. "f16_bits") placed between
     * the prelude and the body; NULL ends the list. Part of the cache key
     * by name, so a launch never hashes their text. */
    const char *libraries[WG_MAX_LIBRARIES];
    const void *params;    /* copied; may be NULL when params_size is 0 */
    size_t params_size;    /* <= WG_MAX_PARAMS */
    wg_binding bindings[WG_MAX_BINDINGS];
    int nbindings;
    uint64_t workgroups;   /* total workgroups; folded into x and y */
    /* --- runtime: custom kernels --- */
    uint32_t grid[3];      /* nonzero grid[0]: dispatch exactly x, y, z (no fold) */
} wg_launch;

/* A launch whose shader is "custom:<entry point>" compiles its prelude as
 * the whole WGSL source (custom kernels, custom_kernel.c). */
#define WG_CUSTOM_PREFIX "custom:"

/* Records one dispatch into the context's open compute pass; submits when
 * the batch is full. 0 workgroups records nothing. */
wt_status wg_dispatch(wt_context *ctx, const wg_launch *launch);

/* A temporary storage of at least bytes (e.g. partial sums), released with
 * wg_scratch_release after the dispatches that use it are
 * recorded (the pool keeps it alive until the GPU is done with it). */
/* A flag for a check the context reads at its next sync (checks.c): two
 * u32 words the kernel zeroes or is given zeroed (the caller fills them
 * before the kernel), raised (nonzero) with the offending value when a
 * value of the op falls outside [0, extent). The storage stays valid until
 * that sync. */
wt_status wg_checks_slot(wt_context *ctx, const char *op, int64_t extent, wt_storage **flag);
wt_status wg_scratch(wt_context *ctx, size_t bytes, wt_storage **out);
void wg_scratch_release(wt_context *ctx, wt_storage *s);

/* --- runtime: tensors past one binding (windows.c) ---
 * A piece of an op: in[] and out are views small enough to bind (large
 * storages come as windows); start is the piece's first position in the
 * whole output. */
typedef wt_status (*wg_piece_fn)(wt_context *ctx, const wt_tensor *const *in, wt_tensor *out,
                                 const int64_t *start, const void *arg);
#define WG_WINDOW_MAX_IN 6
/* What a piece's kernel takes as its output: any view, a contiguous one,
 * or a contiguous one at offset 0 of its binding (else the piece runs
 * into a temporary that is copied into place). */
typedef enum wg_out_layout { WG_OUT_ANY, WG_OUT_CONTIGUOUS, WG_OUT_AT_ZERO } wg_out_layout;
/* How an op is cut into pieces along its output's axes. */
typedef struct wg_window_plan {
    int nin;
    /* Input i follows the output along the axes in follow[i] (its axis d
     * is out's axis d: a cut of out cuts it alike) and is whole along
     * the others; view (optional) replaces that rule: input i's view for
     * the piece of out at start. */
    uint32_t follow[WG_WINDOW_MAX_IN];
    void (*view)(const void *arg, int i, const wt_tensor *in, const int64_t *start,
                 const wt_tensor *piece, wt_tensor *v);
    /* Inputs in own the piece windows itself (wg_window_of); probe
     * (optional) gives the part of such an input that must fit. */
    uint32_t own;
    void (*probe)(const void *arg, int i, const wt_tensor *in, wt_tensor *part);
    uint32_t keep;                   /* out axes never cut */
    int64_t quantum[WT_MAX_DIMS];    /* cuts along d in multiples of this (0: 1) */
    wg_out_layout out_layout;
    wg_piece_fn fn;
    const void *arg;
} wg_window_plan;
wt_status wg_windowed_plan(wt_context *ctx, wt_tensor *out, const wt_tensor *const *in,
                           const wg_window_plan *plan);
/* Runs fn on out and the nin inputs directly when every storage fits one
 * binding; else on pieces cut along out's leading axes, where input i
 * follows out's first shared[i] axes (its axis d is out's axis d) and is
 * whole along the others. A new op family whose output element depends
 * on its inputs at the same leading indices gets tensors up to
 * maxBufferSize by routing its backend entry through this. */
wt_status wg_windowed(wt_context *ctx, wt_tensor *out, int nin, const wt_tensor *const *in,
                      const int *shared, wg_piece_fn fn, const void *arg);
/* Helpers for pieces: the default view rule; t cut along axis; whether
 * t's span fits one binding; a window over t's storage (t itself when
 * the storage fits whole) in caller memory; the bytes a window spans. */
void wg_window_follow(const wt_tensor *in, uint32_t follow, const int64_t *start,
                      const wt_tensor *piece, wt_tensor *view);
wt_tensor wg_window_slice(const wt_tensor *t, int axis, int64_t start, int64_t count);
bool wg_window_fits(const wt_context *ctx, const wt_tensor *t);
typedef struct wg_window_buf wg_window_buf; /* defined in wg_runtime.h */
const wt_tensor *wg_window_of(const wt_context *ctx, const wt_tensor *t, wg_window_buf *buf);
uint64_t wg_window_usable(const wt_context *ctx);
/* Whether t's storage is too large to bind whole (a kernel outside the
 * windowed entries refuses such tensors with WT_ERR_UNSUPPORTED). */
bool wg_needs_windows(const wt_context *ctx, const wt_tensor *t);
/* The backend table's entries: the wg_op_* kernels below, windowed. */
wt_status wg_win_elementwise(wt_context *ctx, const wt_ew_args *args);
wt_status wg_win_where(wt_context *ctx, const wt_tensor *mask, const wt_tensor *a,
                       const wt_tensor *b, uint32_t a_bits, wt_tensor *out);
wt_status wg_win_copy(wt_context *ctx, const wt_tensor *x, wt_tensor *out);
wt_status wg_win_cast(wt_context *ctx, const wt_tensor *x, wt_tensor *out);
wt_status wg_win_fill_bits(wt_context *ctx, wt_tensor *out, uint32_t bits);
wt_status wg_win_matmul(wt_context *ctx, const wt_tensor *a, const wt_tensor *b, wt_tensor *out);
wt_status wg_win_rowwise(wt_context *ctx, wt_rowwise_op op, const wt_tensor *x,
                         const wt_tensor *weight, const wt_tensor *bias, float eps, wt_tensor *out);
wt_status wg_win_reduce(wt_context *ctx, const wt_reduce_args *r, const wt_tensor *x, int nreduced,
                        wt_tensor *out);
/* (windows/ops.c) */
wt_status wg_win_gather(wt_context *ctx, const wt_tensor *x, int axis, const wt_tensor *index,
                        bool trusted, wt_tensor *out);
wt_status wg_win_matmul_fused(wt_context *ctx, const wt_tensor *a, const wt_tensor *b,
                              const wt_tensor *bias, wt_matmul_act act, wt_tensor *out);
wt_status wg_win_matmul_aux(wt_context *ctx, const wt_tensor *a, const wt_tensor *b, const wt_tensor *bias,
                            wt_matmul_act act, const wt_tensor *aux, wt_tensor *out);
wt_status wg_win_copy_into(wt_context *ctx, const wt_tensor *src, wt_tensor *dst);
wt_status wg_win_remap(wt_context *ctx, const wt_tensor *x, const wt_remap *r, wt_tensor *out);
wt_status wg_win_softmax_axis(wt_context *ctx, wt_rowwise_op op, const wt_tensor *x, wt_tensor *out);
wt_status wg_win_attention(wt_context *ctx, const wt_attention_args *a);
/* Whether some operand of a is too large for one binding (windows/ops.c). */
bool wg_attention_needs_windows(wt_context *ctx, const wt_attention_args *a);
/* Whether the tiled kernel would write the rows' log-sum-exp for a (f32,
 * no mask, no kv_length, more than one query; the others never do); the
 * backend hook adds that no operand needs windows. */
bool wg_attention_lse_fits(wt_context *ctx, const wt_attention_args *a);
/* WT_NODE_ATTENTION_BACKWARD (kernels/attention_backward.c): tensors of
 * one binding each, head dims up to 256; WT_ERR_UNSUPPORTED otherwise.
 * out: the forward's output (the tiled kernels' dout . out); lse: NULL or
 * the forward's log-sum-exp (the tiled query kernel then skips its walk
 * over the keys for the softmax statistics). */
wt_status wg_attention_backward(wt_context *ctx, const wt_tensor *q, const wt_tensor *k, const wt_tensor *v,
                                const wt_tensor *dout, const wt_tensor *out, const wt_tensor *lse, bool causal,
                                float scale, wt_tensor *dq, wt_tensor *dk, wt_tensor *dv);
/* wt_backend_ops.attention_backward_views: the pipelined kernels read
 * dense [B, H, S, D] operands or the [B, H, S, D] views of dense [B, S, H,
 * D] ones (q, dout, out of one layout, k, v of one) and write dq, dk, dv
 * so too. */
bool wg_attention_backward_views(const wt_context *ctx, const wt_tensor *q, const wt_tensor *k, const wt_tensor *v,
                                 const wt_tensor *dout, const wt_tensor *out);
/* wt_backend_ops.attention_backward_preferred: the tiled kernels wherever
 * they fit; the untiled ones only for large scores. */
bool wg_attention_backward_preferred(const wt_context *ctx, const wt_tensor *q, const wt_tensor *k,
                                     const wt_tensor *v, bool causal);
/* Whether the tiled attention kernels (forward and backward) take their
 * loop bounds as constants: on a GPU, not on a software adapter, where
 * unrolled loops compile slowly; WT_ATTN_UNROLL decides when set. */
bool wg_attention_unrolled(const wt_context *ctx);
wt_status wg_win_conv2d(wt_context *ctx, const wt_tensor *x, const wt_tensor *w,
                        const wt_tensor *bias, const wt_window2d *win, int64_t groups,
                        wt_tensor *out);
wt_status wg_win_pool2d(wt_context *ctx, const wt_pool2d_desc *desc, const wt_tensor *x,
                        wt_tensor *out, wt_tensor *indices);
wt_status wg_win_channel_norm(wt_context *ctx, const wt_tensor *x, const wt_tensor *stats,
                              float eps, wt_tensor *out);
wt_status wg_win_random(wt_context *ctx, const wt_random_args *r, const wt_tensor *x, wt_tensor *out);
wt_status wg_win_rope(wt_context *ctx, const wt_tensor *x, const wt_tensor *position, double theta, int64_t offset,
                      wt_tensor *out);
/* DEQUANTIZE and LINEAR_QUANT (kernels/quant.c; core/node.h). */
/* SAMPLE (core/node.h; kernels/sample.c). */
wt_status wg_sample(wt_context *ctx, const wt_tensor *logits, const wt_tensor *step, float inv_temp, int64_t top_k,
                    float top_p, uint64_t seed, wt_tensor *out);
wt_status wg_dequantize(wt_context *ctx, wt_quant_type type, int64_t k, const wt_tensor *w, wt_tensor *out);
wt_status wg_linear_quant(wt_context *ctx, wt_quant_type type, int64_t k, const wt_tensor *x, const wt_tensor *w,
                          const wt_tensor *bias, const wt_tensor *norm_weight, const wt_tensor *residual,
                          bool rms_norm, bool swiglu, float eps, wt_tensor *out);
/* ROPE_KV_CACHE (core/node.h; kernels/rope.c). */
wt_status wg_rope_kv_cache(wt_context *ctx, const wt_tensor *qkv, const wt_tensor *position,
                           const wt_rope_freqs *freqs, int64_t offset, int64_t q_heads, wt_tensor *q,
                           wt_tensor *cache);
/* ROPE_KV_ATTENTION (core/node.h; kernels/rope.c): one dispatch
 * (wgsl/rope_kv_attention.wgsl) where wg_rope_kv_attention_fits, the
 * wt_backend_ops hook, says yes. */
bool wg_rope_kv_attention_fits(const wt_context *ctx, const wt_tensor *qkv, const wt_tensor *kv_cache,
                               const wt_tensor *position, const wt_tensor *kv_length, int64_t offset);
wt_status wg_rope_kv_attention(wt_context *ctx, const wt_tensor *qkv, const wt_tensor *position,
                               const wt_tensor *kv_length, const wt_rope_freqs *freqs, int64_t offset,
                               int64_t q_heads, float scale, wt_tensor *out, wt_tensor *cache);
/* LINEAR_FUSED (core/node.h; kernels/linear_fused.c). */
wt_status wg_linear_fused(wt_context *ctx, const wt_tensor *x, const wt_tensor *w, const wt_tensor *bias,
                          const wt_tensor *norm_weight, const wt_tensor *residual, bool rms_norm, bool swiglu,
                          float eps, wt_tensor *out);
/* INTERPOLATE (src x, out the result) and its backward (src dy, out dx)
 * (kernels/interpolate.c). */
wt_status wg_win_interpolate(wt_context *ctx, const wt_interp2d *p, bool backward, const wt_tensor *src,
                             wt_tensor *out);
wt_status wg_win_argreduce(wt_context *ctx, bool is_min, const wt_tensor *x, int nreduced,
                           wt_tensor *out);
wt_status wg_win_act_backward(wt_context *ctx, wt_activation act, const wt_tensor *dy,
                              const wt_tensor *x, wt_tensor *out);
wt_status wg_win_optimizer_step(wt_context *ctx, const wt_optimizer_update *u);
wt_status wg_win_scatter_add_rows(wt_context *ctx, const wt_tensor *dy, const wt_tensor *indices,
                                  int64_t plane, int64_t plane_rows, wt_tensor *out);
wt_status wg_win_im2col(wt_context *ctx, const wt_tensor *x, const wt_window2d *win, int64_t row0,
                        int64_t rows, wt_tensor *col);
wt_status wg_win_col2im(wt_context *ctx, const wt_tensor *col, const wt_tensor *bias,
                        const wt_window2d *win, wt_tensor *out);
wt_status wg_win_scan(wt_context *ctx, wt_scan_op op, const wt_tensor *x, int64_t n,
                      int64_t inner, wt_tensor *out);
wt_status wg_win_argsort_rows(wt_context *ctx, const wt_tensor *x, bool descending, int64_t k,
                              wt_tensor *out);
wt_status wg_win_channel_moments(wt_context *ctx, const wt_tensor *x, wt_tensor *out);
wt_status wg_win_scatter_add(wt_context *ctx, wt_tensor *out, int axis, const wt_tensor *index,
                             const wt_tensor *src);
wt_status wg_win_cross_entropy(wt_context *ctx, const wt_tensor *logits, const wt_tensor *labels,
                               int32_t ignore, wt_tensor *loss, wt_tensor *valid);
wt_status wg_win_cross_entropy_backward(wt_context *ctx, const wt_tensor *logits,
                                        const wt_tensor *labels, int32_t ignore,
                                        const wt_tensor *scale, wt_tensor *out);

/* Limits and capabilities of the device in use. */
typedef struct wg_caps {
    uint64_t max_storage_binding;
    uint32_t max_workgroups_per_dim;
    uint32_t max_invocations;
    uint32_t max_workgroup_storage;
    uint32_t max_storage_buffers; /* storage buffers a shader stage may bind */
    bool subgroups;
    bool shader_f16;
    uint32_t subgroup_min_size, subgroup_max_size;
    /* Elementwise tuning, read from the environment when the device is
     * made (device.c), so that one run can compare variants. */
    uint32_t vec4_per_thread; /* WT_EW_VEC4_PER_THREAD: 1, 2, 4 or 8; 0: no vec4 kernels */
    uint32_t binary_vec4_per_thread; /* the same for binary ops (WT_EW_BINARY_VEC4_PER_THREAD) */
    uint32_t transpose_tile;  /* WT_TRANSPOSE_TILE: 32 or 64; 0: no tiled transpose */
    bool transpose_vec4;      /* WT_TRANSPOSE_VEC4=0 turns the 16-byte transpose off */
    bool cpu_adapter;         /* a software renderer: small workgroups suit it */
    /* --- runtime: experimental features --- */
    /* Subgroup matrices (WGSL `enable chromium_experimental_subgroup_matrix;`),
     * on only when the context asked for WT_EXPERIMENTAL_SUBGROUP_MATRIX and
     * the adapter has them; the shapes the device offers. Component types
     * as in Dawn: 1 f32, 2 f16, 3 u32, 4 i32. */
    bool subgroup_matrix;
    uint32_t matrix_config_count;
    struct {
        uint32_t component, result, m, n, k;
    } matrix_configs[16];
} wg_caps;
const wg_caps *wg_get_caps(const wt_context *ctx);
/* Whether the device was asked for the matrix units
 * (WT_EXPERIMENTAL_SUBGROUP_MATRIX, or an adapter that offers them). */
bool wg_matrix_asked(const wt_context *ctx);
/* Why the device cannot run the f16 kernels on the matrix units, or NULL. */
const char *wg_matrix_device_gap(const wg_caps *caps);
/* The f16 attention kernel on the matrix units for head dim D: subgroups
 * a workgroup and keys a block (tile: WT_ATTN_MATRIX_TILE or NULL), or
 * why not (kernels/attention.c). */
const char *wg_attention_matrix_plan(const wg_caps *caps, uint64_t D, const char *tile, uint32_t *sgs, uint32_t *bk);
/* A product the matrix units ran (declined NULL), or one they were asked
 * for and did not run, with why (a static string): counted for the
 * context's info, and the product's next dispatch named so in profiles. */
void wg_matrix_note(wt_context *ctx, const char *declined);

/* Tuning knobs: core/knobs.h (wt_knob_number, wt_knob_count, wt_knob_text). */
static inline bool wg_is_pow2(uint64_t v) { return v && (v & (v - 1)) == 0; }
/* Whether every index of t's layout (offset, extents, strides, numel) is
 * a u32, as the kernels compute them. */
static inline bool wg_fits_u32(const wt_tensor *t)
{
    if (t->offset < 0 || t->offset > UINT32_MAX || t->numel > UINT32_MAX)
        return false;
    for (int d = 0; d < t->ndim; d++)
        if (t->strides[d] < 0 || t->strides[d] > UINT32_MAX || t->shape[d] > UINT32_MAX)
            return false;
    return true;
}

/* Embedded shader sources (generated at build time from the wgsl folder). */
const char *wg_shader_source(const char *name);

/* Kernels (src/webgpu/kernels_*.c), the bodies of the backend ops. */
/* out (4-byte dtype) = bits everywhere; wg_op_fill is its f32 form. */
wt_status wg_op_fill_bits(wt_context *ctx, wt_tensor *out, uint32_t bits);
wt_status wg_op_fill(wt_context *ctx, wt_tensor *out, float value);
wt_status wg_op_copy(wt_context *ctx, const wt_tensor *x, wt_tensor *out);
wt_status wg_op_cast(wt_context *ctx, const wt_tensor *x, wt_tensor *out);
/* An elementwise op of the catalogue (kernels/elementwise.c); f16 lanes
 * go to wg_ew_f16. */
wt_status wg_op_elementwise(wt_context *ctx, const wt_ew_args *args);
/* The same on f16 inputs of any layout (expanded to out's shape; a NULL b
 * is the scalar params[1]) and an f16 out at an even element offset
 * (kernels/elementwise_f16.c); WT_ERR_UNSUPPORTED for anything else. */
wt_status wg_ew_f16(wt_context *ctx, const wt_ew_args *args);
/* out = mask ? a : b (kernels/where.c; see wt_backend_ops.where). */
wt_status wg_op_where(wt_context *ctx, const wt_tensor *mask, const wt_tensor *a,
                      const wt_tensor *b, uint32_t a_bits, wt_tensor *out);
/* WGSL of an elementwise launch (ew_wgsl.c): `alias S / T / TO` for lanes
 * of dtype lanes and an output of dtype out, in units of width (1, 2 or
 * 4) elements, and apply() from op's row of ops.def (op < 0: a copy).
 * Returns the length written, -1 when cap is too small. The launch adds
 * MODE/WG/... and U, B; apply's parameters are p.p0 and p.p1. */
int wg_ew_prelude(char *buf, size_t cap, int op, wt_dtype lanes, wt_dtype out, int width);
/* The helper library of those lanes: "ew_float", "ew_int" or "ew_bool". */
const char *wg_ew_library(wt_dtype lanes);
/* Whether pack2x16float / unpack2x16float are exact on this device (every
 * f16 value, every tie, the overflow edge), probed on the first call; false
 * when the probe cannot run or WT_F16_HW=0. */
bool wg_f16_hw_exact(wt_context *ctx);
/* Whether f16 kernels use WGSL's f16 type: the device has shader-f16 and
 * WT_F16_ARITH is not 0. */
bool wg_f16_arith(const wt_context *ctx);
/* The f16 conversion library a kernel reading or writing halves takes:
 * "f16_native" (wg_f16_arith), else "f16_hw" or "f16_bits" as probed. */
const char *wg_f16_library(wt_context *ctx);
/* In words, the f16 path this context's kernels take (info, profiles). */
const char *wg_f16_path(const wt_context *ctx);
wt_status wg_op_matmul(wt_context *ctx, const wt_tensor *a, const wt_tensor *b, wt_tensor *out);
/* --- matrix products (kernels/gemm.c) --- */
wt_status wg_op_matmul_fused(wt_context *ctx, const wt_tensor *a, const wt_tensor *b,
                             const wt_tensor *bias, wt_matmul_act act, wt_tensor *out);
/* wg_op_matmul_fused with aux (NULL: none), f32 [B, M, N] contiguous: the
 * result is act(a @ b + bias) + aux, or with WT_MATMUL_ACT_GELU_GRAD
 * (a @ b + bias) * gelu'(aux), in the product's own stores.
 * WT_ERR_UNSUPPORTED (nothing recorded) where the kernel cannot take aux. */
wt_status wg_op_matmul_aux(wt_context *ctx, const wt_tensor *a, const wt_tensor *b, const wt_tensor *bias,
                           wt_matmul_act act, const wt_tensor *aux, wt_tensor *out);
/* Tests: force tile configuration `config` (0 .. wg_gemm_config_count() - 1;
 * -1: the usual choice) and k split into `splits` (0: the usual choice)
 * for every later product of the process. */
void wg_gemm_force(int config, int splits);
int wg_gemm_config_count(void);
/* Tests: the tile configuration and k splits the usual choice (or the
 * forcing above) gives B products [M, K] @ [K, N] of f32 (f16) operands,
 * b read along n or not, on an adapter of these caps. */
void wg_gemm_plan_for(const wg_caps *caps, bool f16, bool b_n_fast, uint64_t B, uint64_t M, uint64_t N,
                      uint64_t K, int *config, uint32_t *splits);
/* --- convolution as an implicit matrix product (kernels/gemm.c) --- */
/* out [N, O, OH, OW] (contiguous) = conv of x [N, C, H, W] (any strides)
 * with w [O, C/groups, KH, KW] (contiguous) + bias [O] (or NULL), f32 or
 * all f16 (f32 sums), without an im2col matrix in memory. */
wt_status wg_gemm_conv2d(wt_context *ctx, const wt_tensor *x, const wt_tensor *w, const wt_tensor *bias,
                         const wt_window2d *win, int64_t groups, wt_tensor *out);
/* The same product for the transposed convolution (the ops table's
 * conv_transpose2d: w regrouped as [O, C/groups, KH, KW]). */
wt_status wg_gemm_conv_transpose2d(wt_context *ctx, const wt_tensor *x, const wt_tensor *w, const wt_tensor *bias,
                                   const wt_window2d *win, int64_t groups, wt_tensor *out);
wt_status wg_op_reduce(wt_context *ctx, const wt_reduce_args *r, const wt_tensor *x, int nreduced,
                       wt_tensor *out);
/* Matrix-vector products as row reductions (kernels/reduce.c): for
 * o < rows, with b = o / rows_per_batch and r = o % rows_per_batch,
 *   out[o] = sum_{k < len} u[u_offset + b * u_batch_stride + r * u_row_stride + k]
 *                        * v[v_offset + b * v_batch_stride + k]
 * into out (contiguous, rows elements). Every offset, stride and len must
 * be a multiple of 4 (whole aligned vec4s); wg_dot_rows_fits says so. */
typedef struct wg_dot_rows {
    wt_storage *u, *v;
    uint64_t u_offset, u_batch_stride, u_row_stride;
    uint64_t v_offset, v_batch_stride;
    uint64_t rows, rows_per_batch, len;
    uint32_t workgroup_size; /* threads per row; 0 for the reductions' own */
} wg_dot_rows;
bool wg_dot_rows_fits(const wg_dot_rows *d);
wt_status wg_reduce_dot_rows(wt_context *ctx, const wg_dot_rows *d, wt_tensor *out);
/* --- reductions, scans, random numbers --- */
/* Folds axes [first, first + n) of t into one run (kernels/reduce.c): false
 * when they do not merge into a single non-negative stride. */
bool wg_merge_axes(const wt_tensor *t, int first, int n, uint64_t *extent, uint64_t *stride);
wt_status wg_op_argreduce(wt_context *ctx, bool is_min, const wt_tensor *x, int nreduced,
                          wt_tensor *out);
wt_status wg_op_scan(wt_context *ctx, wt_scan_op op, const wt_tensor *x, int64_t n, int64_t inner,
                     wt_tensor *out);
wt_status wg_op_random(wt_context *ctx, const wt_random_args *r, const wt_tensor *x, wt_tensor *out);
/* Elements [4 * first_block, ...) of the stream into out (x: dropout's
 * input for the same elements): a part of a tensor past one binding. */
wt_status wg_op_random_part(wt_context *ctx, const wt_random_args *r, const wt_tensor *x,
                            uint64_t first_block, wt_tensor *out);
wt_status wg_op_rowwise(wt_context *ctx, wt_rowwise_op op, const wt_tensor *x,
                        const wt_tensor *weight, const wt_tensor *bias, float eps, wt_tensor *out);
/* WT_NODE_NORM_BACKWARD (kernels/rowwise.c); wt_backend_ops.norm_backward_fits. */
bool wg_norm_backward_fits(const wt_context *ctx, int64_t rows, int64_t cols);
wt_status wg_op_norm_backward(wt_context *ctx, wt_rowwise_op op, const wt_tensor *dy, const wt_tensor *x,
                              const wt_tensor *weight, float eps, wt_tensor *dx, wt_tensor *gxh);

/* --- data movement (kernels/movement.c, kernels/sort.c) --- */
/* WT_ERR_UNSUPPORTED unless every index of t fits the shaders' 32-bit
 * (and signed 32-bit position) arithmetic. */
wt_status wg_mv_check_indexing(const char *what, const wt_tensor *t);
wt_status wg_op_remap(wt_context *ctx, const wt_tensor *x, const wt_remap *r, wt_tensor *out);
wt_status wg_op_copy_into(wt_context *ctx, const wt_tensor *src, wt_tensor *dst);
/* wg_op_copy_into with dst moved on the device by min(max(start, 0),
 * limit) * stride elements (start: i32, one element; NULL: not moved). */
wt_status wg_op_copy_into_at(wt_context *ctx, const wt_tensor *src, const wt_tensor *start, int64_t stride,
                             int64_t limit, wt_tensor *dst);
wt_status wg_op_gather(wt_context *ctx, const wt_tensor *x, int axis, const wt_tensor *index, bool trusted,
                       wt_tensor *out);
/* The gather of the elements whose index falls in [base, base + the
 * extent of x along axis) of an axis of extent: x holds just that part;
 * out keeps its other elements. Every index is checked against extent. */
wt_status wg_op_gather_part(wt_context *ctx, const wt_tensor *x, int axis, const wt_tensor *index,
                            bool trusted, int64_t base, int64_t extent, wt_tensor *out);
wt_status wg_op_scatter_add(wt_context *ctx, wt_tensor *out, int axis, const wt_tensor *index,
                            const wt_tensor *src);
/* The adds whose index falls in [base, base + out's extent along axis) of
 * an axis of extent: out holds just that part (a part of an out past one
 * binding). Every index is checked against extent unless trusted. */
wt_status wg_op_scatter_add_part(wt_context *ctx, wt_tensor *out, int axis, const wt_tensor *index,
                                 const wt_tensor *src, int64_t base, int64_t extent, bool trusted);
wt_status wg_op_argsort_rows(wt_context *ctx, const wt_tensor *x, bool descending, int64_t k, wt_tensor *out);
/* --- convolution and pooling (kernels/conv.c) --- */
wt_status wg_op_im2col(wt_context *ctx, const wt_tensor *x, const wt_window2d *win, int64_t row0,
                       int64_t rows, wt_tensor *col);
/* The f16 operands of a convolution on the matrix units
 * (wgsl/im2col_rows_f16.wgsl): with x, the windows of images [image0,
 * image0 + images) of x as columns [images, kp, pp] (pp >= OH*OW) into col;
 * with x NULL, the contiguous w [O, K] as rows [O, kp]; zero past the
 * data. kp and pp multiples of 8; col a scratch storage large enough. */
wt_status wg_op_im2col_rows_f16(wt_context *ctx, const wt_tensor *x, const wt_tensor *w, const wt_window2d *win,
                                int64_t image0, int64_t images, int64_t kp, int64_t pp, wt_storage *col);
wt_status wg_op_col2im(wt_context *ctx, const wt_tensor *col, const wt_tensor *bias,
                       const wt_window2d *win, wt_tensor *out);
wt_status wg_op_pool2d(wt_context *ctx, const wt_pool2d_desc *desc, const wt_tensor *x,
                       wt_tensor *out, wt_tensor *indices);
/* Direct convolution for few input channels per group (depthwise), an
 * implicit matrix product for the others (f32, or f16 throughout);
 * WT_ERR_UNSUPPORTED (the API then runs im2col + matmul in f32) for what
 * neither takes. */
wt_status wg_op_conv2d(wt_context *ctx, const wt_tensor *x, const wt_tensor *w,
                       const wt_tensor *bias, const wt_window2d *win, int64_t groups,
                       wt_tensor *out);
wt_status wg_op_conv_transpose2d(wt_context *ctx, const wt_tensor *x, const wt_tensor *w,
                                 const wt_tensor *bias, const wt_window2d *win, int64_t groups,
                                 wt_tensor *out);
wt_status wg_op_channel_norm(wt_context *ctx, const wt_tensor *x, const wt_tensor *stats,
                             float eps, wt_tensor *out);
wt_status wg_op_channel_moments(wt_context *ctx, const wt_tensor *x, wt_tensor *out);
/* out [2, C] = the mean and biased variance of each channel of an x whose
 * images were cut into parts of per (the last fewer, n in all) images of s
 * elements each, from the parts' moments: parts [nparts * 2 * C], part k's
 * channel_moments at offset k*2*C. Combined on the device (Chan et al.). */
wt_status wg_op_moments_combine(wt_context *ctx, const wt_tensor *parts, int64_t per, int64_t n, int64_t s,
                                wt_tensor *out);
/* --- transformer ops --- */
wt_status wg_op_softmax_axis(wt_context *ctx, wt_rowwise_op op, const wt_tensor *x, wt_tensor *out);
wt_status wg_op_attention(wt_context *ctx, const wt_attention_args *a);
wt_status wg_op_rope(wt_context *ctx, const wt_tensor *x, const wt_tensor *position, double theta, int64_t offset,
                     wt_tensor *out);

/* --- training --- (kernels/train.c) */
wt_status wg_op_act_backward(wt_context *ctx, wt_activation act, const wt_tensor *dy, const wt_tensor *x,
                             wt_tensor *out);
wt_status wg_op_cross_entropy(wt_context *ctx, const wt_tensor *logits, const wt_tensor *labels, int32_t ignore,
                              wt_tensor *loss, wt_tensor *valid);
wt_status wg_op_cross_entropy_backward(wt_context *ctx, const wt_tensor *logits, const wt_tensor *labels,
                                       int32_t ignore, const wt_tensor *scale, wt_tensor *out);
wt_status wg_op_scatter_add_rows(wt_context *ctx, const wt_tensor *dy, const wt_tensor *indices, int64_t plane,
                                 int64_t plane_rows, wt_tensor *out);
/* The adds that land in rows [first_row, first_row + out's rows) of an
 * out of total_rows rows, out holding just those (a part of an out past
 * one binding). */
wt_status wg_op_scatter_add_rows_part(wt_context *ctx, const wt_tensor *dy, const wt_tensor *indices,
                                      int64_t plane, int64_t plane_rows, int64_t first_row, int64_t total_rows,
                                      wt_tensor *out);
wt_status wg_op_optimizer_step(wt_context *ctx, const wt_optimizer_update *u);
wt_status wg_op_optimizer_advance(wt_context *ctx, const wt_optimizer_update *u);
/* g[0..2] (f32, contiguous, each within one binding, on distinct buffers;
 * NULL: absent) *= min(1, max_norm / (norm + 1e-6)), in one dispatch. */
wt_status wg_op_grad_clip_scale(wt_context *ctx, const wt_tensor *norm, double max_norm, wt_tensor *const g[3]);
/* out[k] = the 2-norm of x[k] for the first `count` (1..6) of x (f32,
 * contiguous, not empty, each within one binding); out f32, contiguous,
 * at least count long. One dispatch where every x[k] is one chunk, else
 * two. WT_ERR_UNSUPPORTED where the device binds fewer than seven
 * storage buffers a stage. */
wt_status wg_op_grad_norms(wt_context *ctx, int count, const wt_tensor *const x[6], wt_tensor *out);

#endif /* WT_WG_H */
