/* The uniform parameter blocks of the WebGPU kernels: each struct here is
 * the host's copy of a WGSL `struct Params` (src/webgpu/kernels/wgsl/) and is
 * written into the shader's uniform buffer byte for byte, so its size and
 * every field's offset must equal the WGSL layout (u32/i32/f32 at 4 bytes,
 * vec4 and arrays of vec4 at 16). tests/params_layout.c checks each pair
 * against the WGSL sources; a new Params block needs a row there. Kept
 * apart from the kernels so the check can see them. */
#ifndef WT_WEBGPU_PARAMS_H
#define WT_WEBGPU_PARAMS_H

#include <stdint.h>

/* ---- kernels/argreduce.c */

typedef struct arg_params {
    uint32_t work, chunks, chunk_len, row_len;
    uint32_t row_stride, elem_stride, x_offset, out_offset;
    uint32_t ident, pad0, pad1, pad2;
} arg_params;

/* ---- kernels/attention.c */

/* Same layout as attention.wgsl's Params. */
typedef struct attn_params {
    uint32_t q[5], k[5], v[5], m[5]; /* offset, then strides of b, h, s, d */
    uint32_t hq, hkv, sq, skv;
    uint32_t group, blocks, workgroups, neg_inf;
    float scale;
    uint32_t dw, bk, rows_total;
    uint32_t splits, chunk, kv_at, kv_on; /* kv_on: the key count is kv_length[kv_at] */
} attn_params;

/* ---- kernels/attention_backward.c */

/* Same layout as attention_backward_q.wgsl's and attention_backward_kv.wgsl's Params. */
typedef struct attn_bw_params {
    uint32_t hq, hkv, sq, skv;
    uint32_t group, rows, causal;
    float scale;
    uint32_t d, dv, pad0, pad1;
} attn_bw_params;

/* Same layout as attention_backward_pipelined_q.wgsl's and _kv.wgsl's
 * Params. */
typedef struct attn_bw_tiled_params {
    uint32_t hq, hkv, sq, skv;
    uint32_t group, blocks, workgroups;
    float scale;
    uint32_t dq, tile, neg_inf, pad0; /* dq: head dim / 4; tile: keys (q pass) or queries (kv pass) a tile */
} attn_bw_tiled_params;

/* Same layout as attention_backward_stats.wgsl's Params. */
typedef struct attn_bw_stats_params {
    uint32_t rows, dq, hq, sq; /* dq: head dim / 4; hq, sq: q heads, query rows */
} attn_bw_stats_params;

/* Same layout as attention_combine.wgsl's Params. */
typedef struct combine_params {
    uint32_t rows, splits, neg_inf, pad0;
} combine_params;

/* Same layout as attention_tiled.wgsl's Params. */
typedef struct tiled_params {
    uint32_t q[4], k[4], v[4]; /* offset, then strides of b, h, s (d: 1) */
    uint32_t hq, hkv, sq, skv;
    uint32_t group, blocks, workgroups, neg_inf;
    float scale;
    uint32_t dq, bk, pad0;
} tiled_params;

/* ---- kernels/cast.c */

typedef struct cast_params {
    uint32_t n, ndim, x_offset, out_offset;
    uint32_t shape[8];
    uint32_t x_strides[8];
} cast_params;

/* ---- kernels/conv.c */

/* Same layouts as window.wgsl's Window and View4. */
typedef struct window_params {
    int32_t in_h, in_w, out_h, out_w, kernel_h, kernel_w, stride_h, stride_w;
    int32_t pad_top, pad_left, pad_bottom, pad_right, dil_h, dil_w, pad0, pad1;
} window_params;

typedef struct view4_params {
    uint32_t offset, pad0, pad1, pad2;
    uint32_t strides[4];
} view4_params;

/* Same layout as im2col.wgsl's Params. */
typedef struct im2col_params {
    window_params win;
    view4_params x;
    uint32_t total, ncols, rows, row0;
} im2col_params;

/* Same layout as im2col_rows_f16.wgsl's Params. */
typedef struct im2col_rows_params {
    window_params win;
    view4_params x;
    uint32_t total, k, pixels, image0;
} im2col_rows_params;

/* Same layout as col2im.wgsl's Params. */
typedef struct col2im_params {
    window_params win;
    view4_params out;
    uint32_t total, c, bias_offset, bias_stride;
} col2im_params;

/* Same layout as pool2d.wgsl's Params. */
typedef struct pool_params {
    window_params win;
    view4_params x;
    uint32_t total, c, divisor, neg_inf;
    uint32_t out_offset, idx_offset, pad0, pad1;
} pool_params;

/* Same layout as conv2d_direct.wgsl's Params. */
typedef struct direct_params {
    window_params win;
    view4_params x;
    uint32_t total, o, cg, og;
    uint32_t w_offset, bias_offset, out_offset, pad0;
} direct_params;

/* Same layout as channel_norm.wgsl's Params. */
typedef struct channel_norm_params {
    uint32_t total, c, s, x_offset;
    uint32_t xs_n, xs_c, xs_s, stats_offset;
    uint32_t out_offset;
    float eps;
    uint32_t pad0, pad1;
} channel_norm_params;

/* Same layout as channel_moments.wgsl's Params. */
typedef struct moments_params {
    uint32_t c, s, count, chunks;
    uint32_t chunk_len, x_offset, xs_n, xs_c;
    uint32_t xs_s, out_offset, pad0, pad1;
} moments_params;

/* Same layout as moments_combine.wgsl's Params. */
typedef struct moments_combine_params {
    uint32_t c, parts, per, n;
    float s;
    uint32_t out_offset, pad0, pad1;
} moments_combine_params;

/* ---- kernels/elementwise.c */

typedef struct fill_params {
    uint32_t n, tail, out_offset, bits;
} fill_params;

typedef struct transpose_params {
    uint32_t rows, cols, x_row_stride, x_col_stride;
    uint32_t out_row_stride, x_offset, out_offset, nbatch_dims;
    uint32_t tiles_r, tiles_c, nbatch, pad0;
    uint32_t batch_shape[8];
    uint32_t batch_x_strides[8];
    uint32_t batch_out_strides[8];
} transpose_params;

typedef struct unary_params {
    uint32_t n, tail, ndim, x_offset, out_offset, p0, p1, pad0;
    uint32_t shape[8];
    uint32_t x_strides[8];
} unary_params;

typedef struct binary_params {
    uint32_t n, tail, ndim, inner;
    uint32_t a_offset, b_offset, out_offset, a_col_stride;
    uint32_t b_col_stride, b_bits, pad1, pad2;
    uint32_t shape[8];
    uint32_t a_strides[8];
    uint32_t b_strides[8];
} binary_params;

/* ---- kernels/elementwise_f16.c */

/* ew_f16_io.wgsl's Params. */
typedef struct f16_params {
    uint32_t n, units, ndim, a_offset, b_offset, out_offset, p0, p1;
    uint32_t shape[8], a_strides[8], b_strides[8];
} f16_params;

/* ---- kernels/gemm.c */

/* Mirrors gemm.wgsl's Params (and gemm_interior.wgsl's, the same words). */
typedef struct gemm_params {
    uint32_t batch, m, n, k;
    uint32_t a_offset, a_batch_stride, a_row_stride, a_col_stride;
    uint32_t b_offset, b_batch_stride, b_row_stride, b_col_stride;
    uint32_t out_offset, tiles_m, tiles_n, k_chunk;
    uint32_t splits, bias_offset, a_batch_mod, bias_rows;
    /* The convolution's window (gemm_b_conv.wgsl), zero otherwise. */
    uint32_t c_kk, c_kw, c_ow, c_groups;
    uint32_t c_sh, c_sw, c_dh, c_dw;
    uint32_t c_pt, c_pl, c_in_h, c_in_w;
    uint32_t c_xs_n, c_xs_c, c_xs_h, c_xs_w;
    uint32_t c_cg;
    uint32_t aux_offset; /* the AUX operand's offset (wg_op_matmul_aux) */
    uint32_t c_pad1, c_pad2;
} gemm_params;

/* Mirrors gemm_splitk.wgsl's Params. */
typedef struct splitk_params {
    uint32_t count, n, splits, out_offset;
    uint32_t bias_offset, bias_rows, aux_offset, pad2;
} splitk_params;

/* Mirrors gemm_matrix.wgsl's Params (and gemm_matrix_staged's, gemm_matrix_tiled's). */
typedef struct matrix_params {
    uint32_t batch, m, n, k;
    uint32_t a_offset, a_batch_stride, lda, b_offset;
    uint32_t b_batch_stride, ldb, out_offset, tiles_m;
    uint32_t tiles_n, bias_offset, pad0, pad1;
} matrix_params;

/* Mirrors gemm_matrix_conv.wgsl's Params. */
typedef struct conv_matrix_params {
    window_params win;
    view4_params x;
    uint32_t images, m, n, k;
    uint32_t a_offset, lda, tiles_m, tiles_n;
    uint32_t out_offset, bias_offset, pad0, pad1;
} conv_matrix_params;

/* Mirrors gemv_f16.wgsl's Params. */
typedef struct gemv_f16_params {
    uint32_t rows, rows_per_batch, k, out_word;
    uint32_t u_offset, u_batch_stride, u_row_stride, v_offset;
    uint32_t v_batch_stride, pad0, pad1, pad2;
} gemv_f16_params;

/* ---- kernels/linear_fused.c */

/* Mirrors linear_fused.wgsl's Params. */
typedef struct linear_fused_params {
    uint32_t outputs, n_out, k, w_offset;
    uint32_t w_row_stride, x_offset, g_offset, bias_offset;
    uint32_t res_offset, out_offset;
    float eps;
    uint32_t pad0;
} linear_fused_params;

/* ---- kernels/matmul.c */

/* Mirrors matmul_gemv.wgsl's Params. */
typedef struct gemv_params {
    uint32_t batch, outputs, k, out_offset;
    uint32_t u_offset, u_batch_stride, u_out_stride, u_k_stride;
    uint32_t v_offset, v_batch_stride, v_k_stride, groups_per_batch;
} gemv_params;

/* Mirrors matmul_gemv_cols.wgsl's Params. */
typedef struct gemv_cols_params {
    uint32_t batch, n, k, out_offset;
    uint32_t u_offset, u_batch_stride, u_k_stride, v_offset;
    uint32_t v_batch_stride, v_k_stride, col_groups, k_splits;
    uint32_t k_chunk, pad[3];
} gemv_cols_params;

/* ---- kernels/movement.c */

typedef struct remap_params {
    uint32_t n, ndim, x_offset, fill;
    uint32_t tri;
    int32_t diag;
    uint32_t pad0, pad1;
    uint32_t out_shape[8], x_shape[8], x_strides[8];
    int32_t start[8];
    uint32_t axis_mode[8];
} remap_params;

typedef struct copy_params {
    uint32_t n, ndim, src_offset, dst_offset;
    uint32_t shape[8], src_strides[8], dst_strides[8];
    /* dyn_on: dst moves by min(max(start[dyn_at], 0), dyn_limit) * dyn_stride */
    uint32_t dyn_stride, dyn_limit, dyn_at, dyn_on;
} copy_params;

typedef struct gather_params {
    uint32_t n, ndim, axis, x_offset, idx_offset, extent, base, count;
    uint32_t shape[8], x_strides[8], idx_strides[8];
} gather_params;

typedef struct scatter_params {
    uint32_t n, ndim, axis, out_offset, idx_offset, src_offset, extent, base;
    uint32_t count, pad0, pad1, pad2;
    uint32_t shape[8], out_strides[8], idx_strides[8], src_strides[8];
} scatter_params;

/* ---- kernels/random.c */

typedef struct random_params {
    uint32_t n, key0, key1, shift;
    float unit, p, scale;
    uint32_t x_offset, out_offset, first_block, pad1, pad2;
} random_params;

/* ---- kernels/reduce.c */

/* Shared by both shaders (same WGSL struct layout). */
typedef struct reduce_params {
    uint32_t work;           /* rows * chunks */
    uint32_t chunks_or_rows; /* reduce_rows: chunks per row; reduce_strided, reduce_columns: rows */
    uint32_t chunk_len;
    uint32_t row_len;
    uint32_t row_stride;
    uint32_t elem_stride;
    uint32_t x_offset;
    uint32_t out_offset;
    float divisor;
    uint32_t identity;
    uint32_t rows_per_batch;
    uint32_t batch_stride;
    uint32_t v_offset;
    uint32_t v_batch_stride;
    uint32_t shift_offset;
    uint32_t pad1;
} reduce_params;

/* ---- kernels/rope.c */

/* Same layout as rope.wgsl's Params. */
typedef struct rope_params {
    uint32_t a_n, s_n, c_n, half;
    uint32_t x_offset, sa, ss, sc;
    uint32_t sd, offset, pairs, pos_at; /* pos_at: position[pos_at] adds; ~0u: none */
} rope_params;

/* Same layout as rope_kv_attention.wgsl's Params. */
typedef struct rope_kv_attention_params {
    uint32_t x_off, x_sb, x_sh, x_sd;
    uint32_t q_heads, kv, group, t_n;
    uint32_t c_off, c_sb, c_sh, c_st;
    uint32_t offset, pos_at, kv_at, workgroups; /* pos_at, kv_at: ~0u none */
    float scale;
    uint32_t neg_inf, pad0, pad1;
} rope_kv_attention_params;

/* Same layout as rope_kv_cache.wgsl's Params. */
typedef struct rope_kv_cache_params {
    uint32_t b_n, s_n, heads, half;
    uint32_t q_heads, kv, t_n, offset;
    uint32_t x_offset, sb, ss, sh;
    uint32_t sd, pos_at, c_offset, cb; /* pos_at: position[pos_at] adds; ~0u: none */
    uint32_t ch, ct, cd, pairs;
} rope_kv_cache_params;

/* ---- kernels/interpolate.c */

/* Same layout as interpolate.wgsl's Params. */
typedef struct interp_params {
    uint32_t total, c, in_h, in_w;
    uint32_t out_h, out_w;
    float scale_h, scale_w;
    uint32_t src_offset, pad0, pad1, pad2;
    uint32_t src_strides[4];
} interp_params;

/* ---- kernels/sample.c */

/* Same layout as sample.wgsl's Params. */
typedef struct sample_params {
    uint32_t rows, v, pad0, x_offset;
    uint32_t out_offset, step_offset, has_step, top_k;
    uint32_t key0, key1;
    float inv_temp, top_p;
} sample_params;

/* ---- kernels/quant.c */

/* Same layout as quant_dequant.wgsl's Params. */
typedef struct dequant_params {
    uint32_t total, k, words, w_offset;
} dequant_params;

/* Same layout as quant_gemv.wgsl's and quant_gemm.wgsl's Params. */
typedef struct quant_linear_params {
    uint32_t m, n, k, words;
    uint32_t x_offset, w_offset, b_offset, pad0;
} quant_linear_params;

/* Same layout as quant_gemv_slots.wgsl's, quant_gemv_rows.wgsl's and
 * quant_gemv_x8_fused.wgsl's Params: quant_linear_params and the fused
 * prologue's and epilogue's operands (element offsets of the norm weight,
 * a multiple of 4, and of the residual; the norm's eps), and the result's
 * element offset (a view the caller gave, wt_linear_fused_options.into). */
typedef struct quant_slots_params {
    uint32_t m, n, k, words;
    uint32_t x_offset, w_offset, b_offset, g_offset;
    uint32_t r_offset;
    float eps;
    uint32_t o_offset, pad1;
} quant_slots_params;

/* ---- kernels/rowwise.c */

/* Same layout as rowwise.wgsl's Params. */
typedef struct rowwise_params {
    uint32_t rows, cols, row_stride, col_stride;
    uint32_t x_offset, out_offset, w_offset, b_offset;
    float eps, count;
    uint32_t neg_inf, pad0;
} rowwise_params;

/* ---- kernels/scan.c */

typedef struct scan_params {
    uint32_t rows, n, inner, blocks, x_offset, out_offset, pad0, pad1;
} scan_params;

/* ---- kernels/softmax_axis.c */

/* Same layout as softmax_axis.wgsl's Params. */
typedef struct softmax_axis_params {
    uint32_t outer, cols, inner, x_offset;
    uint32_t so, sc, si, col_groups;
    uint32_t neg_inf, chunks, chunk_len, pad0;
} softmax_axis_params;

/* ---- kernels/sort.c */

typedef struct keys_params {
    uint32_t total, n, log2_p, ndim, x_offset, inner, pad0, pad1;
    uint32_t shape[8], strides[8];
} keys_params;

typedef struct step_params {
    uint32_t a, p, k, j;
} step_params;

/* ---- kernels/where.c */

typedef struct where_params {
    uint32_t n, ndim, a_bits, out_offset;
    uint32_t offsets[4];
    uint32_t shape[8];
    uint32_t strides[3][8];
} where_params;
/* ---- kernels/train.c */

/* Same layout as act_backward.wgsl's Params. */
typedef struct act_backward_params {
    uint32_t n, dy_offset, x_offset, out_offset;
} act_backward_params;

/* Same layout as cross_entropy.wgsl's Params. */
typedef struct cross_entropy_params {
    uint32_t rows, cols;
    int32_t ignore;
    uint32_t x_offset, y_offset, loss_offset, valid_offset, neg_inf;
} cross_entropy_params;

/* Same layout as cross_entropy_backward.wgsl's Params. */
typedef struct cross_entropy_backward_params {
    uint32_t rows, cols;
    int32_t ignore;
    uint32_t x_offset, y_offset, out_offset, s_offset, s_stride, neg_inf;
} cross_entropy_backward_params;

/* Same layout as scatter_add_rows.wgsl's Params. */
typedef struct scatter_rows_params {
    uint32_t n, d, v, dy_offset, idx_offset, out_offset, plane, plane_rows, first_row, rows, pad0, pad1;
} scatter_rows_params;

/* Same layout as optimizer.wgsl's Params. */
typedef struct optimizer_params {
    uint32_t n, p_offset, g_offset, m_offset, v_offset, nesterov;
    float lr, weight_decay, momentum, dampening, beta1, beta2, eps, bias1, bias2;
    uint32_t s_offset, c_offset;
    float max_norm;
} optimizer_params;

typedef struct optimizer_advance_params {
    uint32_t offset;
    float one_minus_b1, one_minus_b2;
    uint32_t pad0;
} optimizer_advance_params;

/* Same layout as grad_clip_scale.wgsl's Params. */
typedef struct grad_clip_scale_params {
    uint32_t n0, n1, n2, norm_offset, offset0, offset1, offset2;
    float max_norm;
} grad_clip_scale_params;

/* Same layout as grad_norms.wgsl's Params. */
typedef struct grad_norms_params {
    uint32_t n0, n1, n2, n3, n4, n5;
    uint32_t offset0, offset1, offset2, offset3, offset4, offset5;
    uint32_t start1, start2, start3, start4, start5;
    uint32_t groups, chunk, out_offset;
} grad_norms_params;

/* Same layout as grad_norms_finish.wgsl's Params. */
typedef struct grad_norms_finish_params {
    uint32_t start1, start2, start3, start4, start5;
    uint32_t end, count, out_offset;
} grad_norms_finish_params;

#endif
