/* The WebGPU kernels' uniform parameter blocks, host side against shader
 * side: every `struct Params` of src/webgpu/kernels/wgsl/ is laid out here by the
 * WGSL rules for host-shareable types (u32/i32/f32 align 4, vec2 align 8,
 * vec3/vec4 align 16, an array's stride is its element's size rounded up
 * to its alignment, a struct aligns to its largest member and its size is
 * rounded up to that) and compared, size and every field's offset, size
 * and name, with sizeof/offsetof of its C struct in src/webgpu/wg_params.h.
 * The uniform address space's extra rules (arrays and structs at 16-byte
 * offsets, array strides of 16) are checked too. A Params block with no
 * row in the table below, a row whose block is gone, or a struct type
 * used inside a Params with no row of its own, fails. CPU only. */
#define _DEFAULT_SOURCE /* opendir / readdir under strict C11 */
#include "webgpu/wg_params.h"

#include <ctype.h>
#include <dirent.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------ the C side */

typedef struct c_field {
    const char *wgsl_name; /* the WGSL member this C member stands for */
    size_t offset, size;
} c_field;

/* A C member named as in WGSL, and one named otherwise (an array element
 * standing for several WGSL scalars, or a shared struct's other name). */
#define F(T, m) {#m, offsetof(T, m), sizeof(((T *)0)->m)}
#define AS(T, name, m) {name, offsetof(T, m), sizeof(((T *)0)->m)}

typedef struct layout_pair {
    const char *file;   /* stem of src/webgpu/kernels/wgsl/<file>.wgsl */
    const char *wgsl;   /* the struct's WGSL name */
    const char *c_name; /* its C typedef */
    size_t c_size;
    const c_field *fields;
    size_t nfields;
} layout_pair;

#define PAIR(file, wgsl, T, fields) {file, wgsl, #T, sizeof(T), fields, sizeof fields / sizeof fields[0]}

/* Rows: one per WGSL struct, its members in WGSL order. */
static const c_field wgsl_window_window[] = {
    F(window_params, in_h), F(window_params, in_w), F(window_params, out_h), F(window_params, out_w),
    F(window_params, kernel_h), F(window_params, kernel_w), F(window_params, stride_h),
    F(window_params, stride_w), F(window_params, pad_top), F(window_params, pad_left),
    F(window_params, pad_bottom), F(window_params, pad_right), F(window_params, dil_h),
    F(window_params, dil_w), F(window_params, pad0), F(window_params, pad1),
};
static const c_field wgsl_window_view4[] = {
    F(view4_params, offset), F(view4_params, pad0), F(view4_params, pad1), F(view4_params, pad2),
    F(view4_params, strides),
};
static const c_field wgsl_act_backward_params[] = {
    F(act_backward_params, n), F(act_backward_params, dy_offset), F(act_backward_params, x_offset),
    F(act_backward_params, out_offset),
};
static const c_field wgsl_argreduce_params[] = {
    F(arg_params, work), F(arg_params, chunks), F(arg_params, chunk_len), F(arg_params, row_len),
    F(arg_params, row_stride), F(arg_params, elem_stride), F(arg_params, x_offset), F(arg_params, out_offset),
    F(arg_params, ident), F(arg_params, pad0), F(arg_params, pad1), F(arg_params, pad2),
};
static const c_field wgsl_attention_params[] = {
    AS(attn_params, "q_off", q[0]), AS(attn_params, "q_sb", q[1]), AS(attn_params, "q_sh", q[2]),
    AS(attn_params, "q_ss", q[3]), AS(attn_params, "q_sd", q[4]), AS(attn_params, "k_off", k[0]),
    AS(attn_params, "k_sb", k[1]), AS(attn_params, "k_sh", k[2]), AS(attn_params, "k_ss", k[3]),
    AS(attn_params, "k_sd", k[4]), AS(attn_params, "v_off", v[0]), AS(attn_params, "v_sb", v[1]),
    AS(attn_params, "v_sh", v[2]), AS(attn_params, "v_ss", v[3]), AS(attn_params, "v_sd", v[4]),
    AS(attn_params, "m_off", m[0]), AS(attn_params, "m_sb", m[1]), AS(attn_params, "m_sh", m[2]),
    AS(attn_params, "m_ss", m[3]), AS(attn_params, "m_sk", m[4]), F(attn_params, hq), F(attn_params, hkv),
    F(attn_params, sq), F(attn_params, skv), F(attn_params, group), F(attn_params, blocks),
    F(attn_params, workgroups), F(attn_params, neg_inf), F(attn_params, scale), F(attn_params, dw),
    F(attn_params, bk), F(attn_params, rows_total), F(attn_params, splits), F(attn_params, chunk),
    F(attn_params, kv_at), F(attn_params, kv_on),
};
static const c_field wgsl_attention_backward_params[] = {
    F(attn_bw_params, hq), F(attn_bw_params, hkv), F(attn_bw_params, sq), F(attn_bw_params, skv),
    F(attn_bw_params, group), F(attn_bw_params, rows), F(attn_bw_params, causal), F(attn_bw_params, scale),
    F(attn_bw_params, d), F(attn_bw_params, dv), F(attn_bw_params, pad0), F(attn_bw_params, pad1),
};
static const c_field wgsl_attention_backward_tiled_params[] = {
    F(attn_bw_tiled_params, hq), F(attn_bw_tiled_params, hkv), F(attn_bw_tiled_params, sq),
    F(attn_bw_tiled_params, skv), F(attn_bw_tiled_params, group), F(attn_bw_tiled_params, blocks),
    F(attn_bw_tiled_params, workgroups), F(attn_bw_tiled_params, scale), F(attn_bw_tiled_params, dq),
    F(attn_bw_tiled_params, tile), F(attn_bw_tiled_params, neg_inf), F(attn_bw_tiled_params, pad0),
};
static const c_field wgsl_attention_backward_stats_params[] = {
    F(attn_bw_stats_params, rows), F(attn_bw_stats_params, dq), F(attn_bw_stats_params, hq),
    F(attn_bw_stats_params, sq),
};
static const c_field wgsl_attention_combine_params[] = {
    F(combine_params, rows), F(combine_params, splits), F(combine_params, neg_inf), F(combine_params, pad0),
};
static const c_field wgsl_attention_tiled_params[] = {
    AS(tiled_params, "q_off", q[0]), AS(tiled_params, "q_sb", q[1]), AS(tiled_params, "q_sh", q[2]),
    AS(tiled_params, "q_ss", q[3]), AS(tiled_params, "k_off", k[0]), AS(tiled_params, "k_sb", k[1]),
    AS(tiled_params, "k_sh", k[2]), AS(tiled_params, "k_ss", k[3]), AS(tiled_params, "v_off", v[0]),
    AS(tiled_params, "v_sb", v[1]), AS(tiled_params, "v_sh", v[2]), AS(tiled_params, "v_ss", v[3]),
    F(tiled_params, hq), F(tiled_params, hkv), F(tiled_params, sq), F(tiled_params, skv),
    F(tiled_params, group), F(tiled_params, blocks), F(tiled_params, workgroups), F(tiled_params, neg_inf),
    F(tiled_params, scale), F(tiled_params, dq), F(tiled_params, bk), F(tiled_params, pad0),
};
static const c_field wgsl_binary_params[] = {
    F(binary_params, n), F(binary_params, tail), F(binary_params, ndim), F(binary_params, inner),
    F(binary_params, a_offset), F(binary_params, b_offset), F(binary_params, out_offset),
    F(binary_params, a_col_stride), F(binary_params, b_col_stride), F(binary_params, b_bits),
    F(binary_params, pad1), F(binary_params, pad2), F(binary_params, shape), F(binary_params, a_strides),
    F(binary_params, b_strides),
};
static const c_field wgsl_cast_params[] = {
    F(cast_params, n), F(cast_params, ndim), F(cast_params, x_offset), F(cast_params, out_offset),
    F(cast_params, shape), F(cast_params, x_strides),
};
static const c_field wgsl_channel_moments_params[] = {
    F(moments_params, c), F(moments_params, s), F(moments_params, count), F(moments_params, chunks),
    F(moments_params, chunk_len), F(moments_params, x_offset), F(moments_params, xs_n),
    F(moments_params, xs_c), F(moments_params, xs_s), F(moments_params, out_offset), F(moments_params, pad0),
    F(moments_params, pad1),
};
static const c_field wgsl_channel_norm_params[] = {
    F(channel_norm_params, total), F(channel_norm_params, c), F(channel_norm_params, s),
    F(channel_norm_params, x_offset), F(channel_norm_params, xs_n), F(channel_norm_params, xs_c),
    F(channel_norm_params, xs_s), F(channel_norm_params, stats_offset), F(channel_norm_params, out_offset),
    F(channel_norm_params, eps), F(channel_norm_params, pad0), F(channel_norm_params, pad1),
};
static const c_field wgsl_col2im_params[] = {
    F(col2im_params, win), F(col2im_params, out), F(col2im_params, total), F(col2im_params, c),
    F(col2im_params, bias_offset), F(col2im_params, bias_stride),
};
static const c_field wgsl_conv2d_direct_params[] = {
    F(direct_params, win), F(direct_params, x), F(direct_params, total), F(direct_params, o),
    F(direct_params, cg), F(direct_params, og), F(direct_params, w_offset), F(direct_params, bias_offset),
    F(direct_params, out_offset), F(direct_params, pad0),
};
static const c_field wgsl_cross_entropy_params[] = {
    F(cross_entropy_params, rows), F(cross_entropy_params, cols), F(cross_entropy_params, ignore),
    F(cross_entropy_params, x_offset), F(cross_entropy_params, y_offset),
    F(cross_entropy_params, loss_offset), F(cross_entropy_params, valid_offset),
    F(cross_entropy_params, neg_inf),
};
static const c_field wgsl_cross_entropy_backward_params[] = {
    F(cross_entropy_backward_params, rows), F(cross_entropy_backward_params, cols),
    F(cross_entropy_backward_params, ignore), F(cross_entropy_backward_params, x_offset),
    F(cross_entropy_backward_params, y_offset), F(cross_entropy_backward_params, out_offset),
    F(cross_entropy_backward_params, s_offset), F(cross_entropy_backward_params, s_stride),
    F(cross_entropy_backward_params, neg_inf),
};
static const c_field wgsl_ew_f16_io_params[] = {
    F(f16_params, n), F(f16_params, units), F(f16_params, ndim), F(f16_params, a_offset),
    F(f16_params, b_offset), F(f16_params, out_offset), F(f16_params, p0), F(f16_params, p1),
    F(f16_params, shape), F(f16_params, a_strides), F(f16_params, b_strides),
};
static const c_field wgsl_fill_params[] = {
    F(fill_params, n), F(fill_params, tail), F(fill_params, out_offset), F(fill_params, bits),
};
static const c_field wgsl_gemm_params[] = {
    F(gemm_params, batch), F(gemm_params, m), F(gemm_params, n), F(gemm_params, k), F(gemm_params, a_offset),
    F(gemm_params, a_batch_stride), F(gemm_params, a_row_stride), F(gemm_params, a_col_stride),
    F(gemm_params, b_offset), F(gemm_params, b_batch_stride), F(gemm_params, b_row_stride),
    F(gemm_params, b_col_stride), F(gemm_params, out_offset), F(gemm_params, tiles_m),
    F(gemm_params, tiles_n), F(gemm_params, k_chunk), F(gemm_params, splits), F(gemm_params, bias_offset),
    F(gemm_params, a_batch_mod), F(gemm_params, bias_rows), F(gemm_params, c_kk), F(gemm_params, c_kw),
    F(gemm_params, c_ow), F(gemm_params, c_groups), F(gemm_params, c_sh), F(gemm_params, c_sw),
    F(gemm_params, c_dh), F(gemm_params, c_dw), F(gemm_params, c_pt), F(gemm_params, c_pl),
    F(gemm_params, c_in_h), F(gemm_params, c_in_w), F(gemm_params, c_xs_n), F(gemm_params, c_xs_c),
    F(gemm_params, c_xs_h), F(gemm_params, c_xs_w), F(gemm_params, c_cg), F(gemm_params, aux_offset),
    F(gemm_params, c_pad1), F(gemm_params, c_pad2),
};
static const c_field wgsl_gemm_matrix_params[] = {
    F(matrix_params, batch), F(matrix_params, m), F(matrix_params, n), F(matrix_params, k),
    F(matrix_params, a_offset), F(matrix_params, a_batch_stride), F(matrix_params, lda),
    F(matrix_params, b_offset), F(matrix_params, b_batch_stride), F(matrix_params, ldb),
    F(matrix_params, out_offset), F(matrix_params, tiles_m), F(matrix_params, tiles_n),
    F(matrix_params, bias_offset), F(matrix_params, pad0), F(matrix_params, pad1),
};
static const c_field wgsl_gemm_splitk_params[] = {
    F(splitk_params, count), F(splitk_params, n), F(splitk_params, splits), F(splitk_params, out_offset),
    F(splitk_params, bias_offset), F(splitk_params, bias_rows), F(splitk_params, aux_offset),
    F(splitk_params, pad2),
};
static const c_field wgsl_gemv_f16_params[] = {
    F(gemv_f16_params, rows), F(gemv_f16_params, rows_per_batch), F(gemv_f16_params, k),
    F(gemv_f16_params, out_word), F(gemv_f16_params, u_offset), F(gemv_f16_params, u_batch_stride),
    F(gemv_f16_params, u_row_stride), F(gemv_f16_params, v_offset), F(gemv_f16_params, v_batch_stride),
    F(gemv_f16_params, pad0), F(gemv_f16_params, pad1), F(gemv_f16_params, pad2),
};
static const c_field wgsl_linear_fused_params[] = {
    F(linear_fused_params, outputs), F(linear_fused_params, n_out), F(linear_fused_params, k),
    F(linear_fused_params, w_offset), F(linear_fused_params, w_row_stride), F(linear_fused_params, x_offset),
    F(linear_fused_params, g_offset), F(linear_fused_params, bias_offset), F(linear_fused_params, res_offset),
    F(linear_fused_params, out_offset), F(linear_fused_params, eps), F(linear_fused_params, pad0),
};
static const c_field wgsl_gemm_matrix_conv_params[] = {
    F(conv_matrix_params, win), F(conv_matrix_params, x), F(conv_matrix_params, images),
    F(conv_matrix_params, m), F(conv_matrix_params, n), F(conv_matrix_params, k),
    F(conv_matrix_params, a_offset), F(conv_matrix_params, lda), F(conv_matrix_params, tiles_m),
    F(conv_matrix_params, tiles_n), F(conv_matrix_params, out_offset), F(conv_matrix_params, bias_offset),
    F(conv_matrix_params, pad0), F(conv_matrix_params, pad1),
};
static const c_field wgsl_im2col_params[] = {
    F(im2col_params, win), F(im2col_params, x), F(im2col_params, total), F(im2col_params, ncols),
    F(im2col_params, rows), F(im2col_params, row0),
};
static const c_field wgsl_im2col_rows_params[] = {
    F(im2col_rows_params, win), F(im2col_rows_params, x), F(im2col_rows_params, total),
    F(im2col_rows_params, k), F(im2col_rows_params, pixels), F(im2col_rows_params, image0),
};
static const c_field wgsl_matmul_gemv_params[] = {
    F(gemv_params, batch), F(gemv_params, outputs), F(gemv_params, k), F(gemv_params, out_offset),
    F(gemv_params, u_offset), F(gemv_params, u_batch_stride), F(gemv_params, u_out_stride),
    F(gemv_params, u_k_stride), F(gemv_params, v_offset), F(gemv_params, v_batch_stride),
    F(gemv_params, v_k_stride), F(gemv_params, groups_per_batch),
};
static const c_field wgsl_matmul_gemv_cols_params[] = {
    F(gemv_cols_params, batch), F(gemv_cols_params, n), F(gemv_cols_params, k),
    F(gemv_cols_params, out_offset), F(gemv_cols_params, u_offset), F(gemv_cols_params, u_batch_stride),
    F(gemv_cols_params, u_k_stride), F(gemv_cols_params, v_offset), F(gemv_cols_params, v_batch_stride),
    F(gemv_cols_params, v_k_stride), F(gemv_cols_params, col_groups), F(gemv_cols_params, k_splits),
    F(gemv_cols_params, k_chunk), AS(gemv_cols_params, "pad0", pad[0]), AS(gemv_cols_params, "pad1", pad[1]),
    AS(gemv_cols_params, "pad2", pad[2]),
};
static const c_field wgsl_mv_copy_params[] = {
    F(copy_params, n), F(copy_params, ndim), F(copy_params, src_offset), F(copy_params, dst_offset),
    F(copy_params, shape), F(copy_params, src_strides), F(copy_params, dst_strides), F(copy_params, dyn_stride),
    F(copy_params, dyn_limit), F(copy_params, dyn_at), F(copy_params, dyn_on),
};
static const c_field wgsl_mv_gather_params[] = {
    F(gather_params, n), F(gather_params, ndim), F(gather_params, axis), F(gather_params, x_offset),
    F(gather_params, idx_offset), F(gather_params, extent), F(gather_params, base), F(gather_params, count),
    F(gather_params, shape), F(gather_params, x_strides), F(gather_params, idx_strides),
};
static const c_field wgsl_mv_remap_params[] = {
    F(remap_params, n), F(remap_params, ndim), F(remap_params, x_offset), F(remap_params, fill),
    F(remap_params, tri), F(remap_params, diag), F(remap_params, pad0), F(remap_params, pad1),
    F(remap_params, out_shape), F(remap_params, x_shape), F(remap_params, x_strides), F(remap_params, start),
    F(remap_params, axis_mode),
};
static const c_field wgsl_mv_scatter_add_params[] = {
    F(scatter_params, n), F(scatter_params, ndim), F(scatter_params, axis), F(scatter_params, out_offset),
    F(scatter_params, idx_offset), F(scatter_params, src_offset), F(scatter_params, extent),
    F(scatter_params, base), F(scatter_params, count), F(scatter_params, pad0), F(scatter_params, pad1),
    F(scatter_params, pad2), F(scatter_params, shape), F(scatter_params, out_strides),
    F(scatter_params, idx_strides), F(scatter_params, src_strides),
};
static const c_field wgsl_optimizer_params[] = {
    F(optimizer_params, n), F(optimizer_params, p_offset), F(optimizer_params, g_offset),
    F(optimizer_params, m_offset), F(optimizer_params, v_offset), F(optimizer_params, nesterov),
    F(optimizer_params, lr), F(optimizer_params, weight_decay), F(optimizer_params, momentum),
    F(optimizer_params, dampening), F(optimizer_params, beta1), F(optimizer_params, beta2),
    F(optimizer_params, eps), F(optimizer_params, bias1), F(optimizer_params, bias2),
    F(optimizer_params, s_offset), F(optimizer_params, c_offset), F(optimizer_params, max_norm),
};
static const c_field wgsl_grad_clip_scale_params[] = {
    F(grad_clip_scale_params, n0), F(grad_clip_scale_params, n1), F(grad_clip_scale_params, n2),
    F(grad_clip_scale_params, norm_offset), F(grad_clip_scale_params, offset0), F(grad_clip_scale_params, offset1),
    F(grad_clip_scale_params, offset2), F(grad_clip_scale_params, max_norm),
};
static const c_field wgsl_grad_norms_params[] = {
    F(grad_norms_params, n0), F(grad_norms_params, n1), F(grad_norms_params, n2), F(grad_norms_params, n3),
    F(grad_norms_params, n4), F(grad_norms_params, n5), F(grad_norms_params, offset0), F(grad_norms_params, offset1),
    F(grad_norms_params, offset2), F(grad_norms_params, offset3), F(grad_norms_params, offset4),
    F(grad_norms_params, offset5), F(grad_norms_params, start1), F(grad_norms_params, start2),
    F(grad_norms_params, start3), F(grad_norms_params, start4), F(grad_norms_params, start5),
    F(grad_norms_params, groups), F(grad_norms_params, chunk), F(grad_norms_params, out_offset),
};
static const c_field wgsl_grad_norms_finish_params[] = {
    F(grad_norms_finish_params, start1), F(grad_norms_finish_params, start2), F(grad_norms_finish_params, start3),
    F(grad_norms_finish_params, start4), F(grad_norms_finish_params, start5), F(grad_norms_finish_params, end),
    F(grad_norms_finish_params, count), F(grad_norms_finish_params, out_offset),
};
static const c_field wgsl_optimizer_advance_params[] = {
    F(optimizer_advance_params, offset), F(optimizer_advance_params, one_minus_b1),
    F(optimizer_advance_params, one_minus_b2), F(optimizer_advance_params, pad0),
};
static const c_field wgsl_pool2d_params[] = {
    F(pool_params, win), F(pool_params, x), F(pool_params, total), F(pool_params, c), F(pool_params, divisor),
    F(pool_params, neg_inf), F(pool_params, out_offset), F(pool_params, idx_offset), F(pool_params, pad0),
    F(pool_params, pad1),
};
static const c_field wgsl_random_params[] = {
    F(random_params, n), F(random_params, key0), F(random_params, key1), F(random_params, shift),
    F(random_params, unit), F(random_params, p), F(random_params, scale), F(random_params, x_offset),
    F(random_params, out_offset), F(random_params, first_block), F(random_params, pad1),
    F(random_params, pad2),
};
static const c_field wgsl_reduce_rows_params[] = {
    F(reduce_params, work), AS(reduce_params, "chunks", chunks_or_rows), F(reduce_params, chunk_len),
    F(reduce_params, row_len), F(reduce_params, row_stride), F(reduce_params, elem_stride),
    F(reduce_params, x_offset), F(reduce_params, out_offset), F(reduce_params, divisor),
    F(reduce_params, identity), F(reduce_params, rows_per_batch), F(reduce_params, batch_stride),
    F(reduce_params, v_offset), F(reduce_params, v_batch_stride), F(reduce_params, shift_offset),
    F(reduce_params, pad1),
};
static const c_field wgsl_reduce_strided_params[] = {
    F(reduce_params, work), AS(reduce_params, "rows", chunks_or_rows), F(reduce_params, chunk_len),
    F(reduce_params, row_len), F(reduce_params, row_stride), F(reduce_params, elem_stride),
    F(reduce_params, x_offset), F(reduce_params, out_offset), F(reduce_params, divisor),
    F(reduce_params, identity), F(reduce_params, rows_per_batch), F(reduce_params, batch_stride),
    F(reduce_params, v_offset), F(reduce_params, v_batch_stride), F(reduce_params, shift_offset),
    F(reduce_params, pad1),
};
static const c_field wgsl_interp_params[] = {
    F(interp_params, total), F(interp_params, c), F(interp_params, in_h), F(interp_params, in_w),
    F(interp_params, out_h), F(interp_params, out_w), F(interp_params, scale_h), F(interp_params, scale_w),
    F(interp_params, src_offset), F(interp_params, pad0), F(interp_params, pad1), F(interp_params, pad2),
    F(interp_params, src_strides),
};
static const c_field wgsl_sample_params[] = {
    F(sample_params, rows), F(sample_params, v), F(sample_params, pad0), F(sample_params, x_offset),
    F(sample_params, out_offset), F(sample_params, step_offset), F(sample_params, has_step),
    F(sample_params, top_k), F(sample_params, key0), F(sample_params, key1), F(sample_params, inv_temp),
    F(sample_params, top_p),
};
static const c_field wgsl_quant_dequant_params[] = {
    F(dequant_params, total), F(dequant_params, k), F(dequant_params, words), F(dequant_params, w_offset),
};
static const c_field wgsl_quant_slots_params[] = {
    F(quant_slots_params, m), F(quant_slots_params, n), F(quant_slots_params, k),
    F(quant_slots_params, words), F(quant_slots_params, x_offset), F(quant_slots_params, w_offset),
    F(quant_slots_params, b_offset), F(quant_slots_params, g_offset), F(quant_slots_params, r_offset),
    F(quant_slots_params, eps), F(quant_slots_params, o_offset), F(quant_slots_params, pad1),
};
static const c_field wgsl_quant_linear_params[] = {
    F(quant_linear_params, m), F(quant_linear_params, n), F(quant_linear_params, k),
    F(quant_linear_params, words), F(quant_linear_params, x_offset), F(quant_linear_params, w_offset),
    F(quant_linear_params, b_offset), F(quant_linear_params, pad0),
};
static const c_field wgsl_moments_combine_params[] = {
    F(moments_combine_params, c), F(moments_combine_params, parts), F(moments_combine_params, per),
    F(moments_combine_params, n), F(moments_combine_params, s), F(moments_combine_params, out_offset),
    F(moments_combine_params, pad0), F(moments_combine_params, pad1),
};
static const c_field wgsl_rope_params[] = {
    F(rope_params, a_n), F(rope_params, s_n), F(rope_params, c_n), F(rope_params, half),
    F(rope_params, x_offset), F(rope_params, sa), F(rope_params, ss), F(rope_params, sc), F(rope_params, sd),
    F(rope_params, offset), F(rope_params, pairs), F(rope_params, pos_at),
};
static const c_field wgsl_rope_kv_attention_params[] = {
    F(rope_kv_attention_params, x_off), F(rope_kv_attention_params, x_sb), F(rope_kv_attention_params, x_sh),
    F(rope_kv_attention_params, x_sd), F(rope_kv_attention_params, q_heads), F(rope_kv_attention_params, kv),
    F(rope_kv_attention_params, group), F(rope_kv_attention_params, t_n), F(rope_kv_attention_params, c_off),
    F(rope_kv_attention_params, c_sb), F(rope_kv_attention_params, c_sh), F(rope_kv_attention_params, c_st),
    F(rope_kv_attention_params, offset), F(rope_kv_attention_params, pos_at), F(rope_kv_attention_params, kv_at),
    F(rope_kv_attention_params, workgroups), F(rope_kv_attention_params, scale),
    F(rope_kv_attention_params, neg_inf), F(rope_kv_attention_params, pad0), F(rope_kv_attention_params, pad1),
};
static const c_field wgsl_rope_kv_cache_params[] = {
    F(rope_kv_cache_params, b_n), F(rope_kv_cache_params, s_n), F(rope_kv_cache_params, heads),
    F(rope_kv_cache_params, half), F(rope_kv_cache_params, q_heads), F(rope_kv_cache_params, kv),
    F(rope_kv_cache_params, t_n), F(rope_kv_cache_params, offset), F(rope_kv_cache_params, x_offset),
    F(rope_kv_cache_params, sb), F(rope_kv_cache_params, ss), F(rope_kv_cache_params, sh),
    F(rope_kv_cache_params, sd), F(rope_kv_cache_params, pos_at), F(rope_kv_cache_params, c_offset),
    F(rope_kv_cache_params, cb), F(rope_kv_cache_params, ch), F(rope_kv_cache_params, ct),
    F(rope_kv_cache_params, cd), F(rope_kv_cache_params, pairs),
};
static const c_field wgsl_rowwise_params[] = {
    F(rowwise_params, rows), F(rowwise_params, cols), F(rowwise_params, row_stride),
    F(rowwise_params, col_stride), F(rowwise_params, x_offset), F(rowwise_params, out_offset),
    F(rowwise_params, w_offset), F(rowwise_params, b_offset), F(rowwise_params, eps),
    F(rowwise_params, count), F(rowwise_params, neg_inf), F(rowwise_params, pad0),
};
static const c_field wgsl_scan_params[] = {
    F(scan_params, rows), F(scan_params, n), F(scan_params, inner), F(scan_params, blocks),
    F(scan_params, x_offset), F(scan_params, out_offset), F(scan_params, pad0), F(scan_params, pad1),
};
static const c_field wgsl_scatter_add_rows_params[] = {
    F(scatter_rows_params, n), F(scatter_rows_params, d), F(scatter_rows_params, v),
    F(scatter_rows_params, dy_offset), F(scatter_rows_params, idx_offset), F(scatter_rows_params, out_offset),
    F(scatter_rows_params, plane), F(scatter_rows_params, plane_rows), F(scatter_rows_params, first_row),
    F(scatter_rows_params, rows), F(scatter_rows_params, pad0), F(scatter_rows_params, pad1),
};
static const c_field wgsl_softmax_axis_params[] = {
    F(softmax_axis_params, outer), F(softmax_axis_params, cols), F(softmax_axis_params, inner),
    F(softmax_axis_params, x_offset), F(softmax_axis_params, so), F(softmax_axis_params, sc),
    F(softmax_axis_params, si), F(softmax_axis_params, col_groups), F(softmax_axis_params, neg_inf),
    F(softmax_axis_params, chunks), F(softmax_axis_params, chunk_len), F(softmax_axis_params, pad0),
};
static const c_field wgsl_sort_extract_params[] = {
    AS(step_params, "n", a), AS(step_params, "k", p), AS(step_params, "log2_p", k),
    AS(step_params, "pad0", j),
};
static const c_field wgsl_sort_global_params[] = {
    AS(step_params, "threads", a), F(step_params, p), F(step_params, k), F(step_params, j),
};
static const c_field wgsl_sort_keys_params[] = {
    F(keys_params, total), F(keys_params, n), F(keys_params, log2_p), F(keys_params, ndim),
    F(keys_params, x_offset), F(keys_params, inner), F(keys_params, pad0), F(keys_params, pad1),
    F(keys_params, shape), F(keys_params, strides),
};
static const c_field wgsl_sort_local_params[] = {
    AS(step_params, "total", a), F(step_params, p), AS(step_params, "k_merge", k), AS(step_params, "pad0", j),
};
static const c_field wgsl_transpose_tile_params[] = {
    F(transpose_params, rows), F(transpose_params, cols), F(transpose_params, x_row_stride),
    F(transpose_params, x_col_stride), F(transpose_params, out_row_stride), F(transpose_params, x_offset),
    F(transpose_params, out_offset), F(transpose_params, nbatch_dims), F(transpose_params, tiles_r),
    F(transpose_params, tiles_c), F(transpose_params, nbatch), F(transpose_params, pad0),
    F(transpose_params, batch_shape), F(transpose_params, batch_x_strides),
    F(transpose_params, batch_out_strides),
};
static const c_field wgsl_unary_params[] = {
    F(unary_params, n), F(unary_params, tail), F(unary_params, ndim), F(unary_params, x_offset),
    F(unary_params, out_offset), F(unary_params, p0), F(unary_params, p1), F(unary_params, pad0),
    F(unary_params, shape), F(unary_params, x_strides),
};
static const c_field wgsl_where_params[] = {
    F(where_params, n), F(where_params, ndim), F(where_params, a_bits), F(where_params, out_offset),
    F(where_params, offsets), F(where_params, shape), AS(where_params, "m_strides", strides[0]),
    AS(where_params, "a_strides", strides[1]), AS(where_params, "b_strides", strides[2]),
};

static const layout_pair pairs[] = {
    PAIR("window", "Window", window_params, wgsl_window_window),
    PAIR("window", "View4", view4_params, wgsl_window_view4),
    PAIR("act_backward", "Params", act_backward_params, wgsl_act_backward_params),
    PAIR("argreduce", "Params", arg_params, wgsl_argreduce_params),
    PAIR("attention", "Params", attn_params, wgsl_attention_params),
    PAIR("attention_backward_q", "Params", attn_bw_params, wgsl_attention_backward_params),
    PAIR("attention_backward_kv", "Params", attn_bw_params, wgsl_attention_backward_params),
    PAIR("attention_backward_pipelined_kv", "Params", attn_bw_tiled_params, wgsl_attention_backward_tiled_params),
    PAIR("attention_backward_pipelined_q", "Params", attn_bw_tiled_params, wgsl_attention_backward_tiled_params),
    PAIR("attention_backward_stats", "Params", attn_bw_stats_params, wgsl_attention_backward_stats_params),
    PAIR("attention_backward_dq", "Params", attn_bw_tiled_params, wgsl_attention_backward_tiled_params),
    PAIR("attention_combine", "Params", combine_params, wgsl_attention_combine_params),
    PAIR("attention_decode", "Params", attn_params, wgsl_attention_params),
    PAIR("attention_tiled", "Params", tiled_params, wgsl_attention_tiled_params),
    PAIR("attention_tiled_wide", "Params", tiled_params, wgsl_attention_tiled_params),
    PAIR("attention_matrix", "Params", tiled_params, wgsl_attention_tiled_params),
    PAIR("binary", "Params", binary_params, wgsl_binary_params),
    PAIR("cast", "Params", cast_params, wgsl_cast_params),
    PAIR("channel_moments", "Params", moments_params, wgsl_channel_moments_params),
    PAIR("channel_norm", "Params", channel_norm_params, wgsl_channel_norm_params),
    PAIR("col2im", "Params", col2im_params, wgsl_col2im_params),
    PAIR("conv2d_direct", "Params", direct_params, wgsl_conv2d_direct_params),
    PAIR("cross_entropy", "Params", cross_entropy_params, wgsl_cross_entropy_params),
    PAIR("cross_entropy_backward", "Params", cross_entropy_backward_params, wgsl_cross_entropy_backward_params),
    PAIR("ew_f16_io", "Params", f16_params, wgsl_ew_f16_io_params),
    PAIR("fill", "Params", fill_params, wgsl_fill_params),
    PAIR("gemm", "Params", gemm_params, wgsl_gemm_params),
    PAIR("gemm_interior", "Params", gemm_params, wgsl_gemm_params),
    PAIR("gemm_matrix", "Params", matrix_params, wgsl_gemm_matrix_params),
    PAIR("gemm_matrix_conv", "Params", conv_matrix_params, wgsl_gemm_matrix_conv_params),
    PAIR("gemm_matrix_staged", "Params", matrix_params, wgsl_gemm_matrix_params),
    PAIR("gemm_matrix_tiled", "Params", matrix_params, wgsl_gemm_matrix_params),
    PAIR("gemm_splitk", "Params", splitk_params, wgsl_gemm_splitk_params),
    PAIR("grad_clip_scale", "Params", grad_clip_scale_params, wgsl_grad_clip_scale_params),
    PAIR("grad_norms", "Params", grad_norms_params, wgsl_grad_norms_params),
    PAIR("grad_norms_finish", "Params", grad_norms_finish_params, wgsl_grad_norms_finish_params),
    PAIR("gemv_f16", "Params", gemv_f16_params, wgsl_gemv_f16_params),
    PAIR("linear_fused", "Params", linear_fused_params, wgsl_linear_fused_params),
    PAIR("im2col", "Params", im2col_params, wgsl_im2col_params),
    PAIR("im2col_rows_f16", "Params", im2col_rows_params, wgsl_im2col_rows_params),
    PAIR("matmul_gemv", "Params", gemv_params, wgsl_matmul_gemv_params),
    PAIR("matmul_gemv_cols", "Params", gemv_cols_params, wgsl_matmul_gemv_cols_params),
    PAIR("mv_copy", "Params", copy_params, wgsl_mv_copy_params),
    PAIR("mv_gather", "Params", gather_params, wgsl_mv_gather_params),
    PAIR("mv_remap", "Params", remap_params, wgsl_mv_remap_params),
    PAIR("mv_scatter_add", "Params", scatter_params, wgsl_mv_scatter_add_params),
    PAIR("optimizer", "Params", optimizer_params, wgsl_optimizer_params),
    PAIR("optimizer_advance", "Params", optimizer_advance_params, wgsl_optimizer_advance_params),
    PAIR("pool2d", "Params", pool_params, wgsl_pool2d_params),
    PAIR("random", "Params", random_params, wgsl_random_params),
    PAIR("reduce_rows", "Params", reduce_params, wgsl_reduce_rows_params),
    PAIR("reduce_strided", "Params", reduce_params, wgsl_reduce_strided_params),
    PAIR("reduce_columns", "Params", reduce_params, wgsl_reduce_strided_params),
    PAIR("reduce_column_blocks", "Params", reduce_params, wgsl_reduce_strided_params),
    PAIR("rope", "Params", rope_params, wgsl_rope_params),
    PAIR("rope_kv_cache", "Params", rope_kv_cache_params, wgsl_rope_kv_cache_params),
    PAIR("rope_kv_attention", "Params", rope_kv_attention_params, wgsl_rope_kv_attention_params),
    PAIR("interpolate", "Params", interp_params, wgsl_interp_params),
    PAIR("sample", "Params", sample_params, wgsl_sample_params),
    PAIR("quant_dequant", "Params", dequant_params, wgsl_quant_dequant_params),
    PAIR("quant_gemv", "Params", quant_linear_params, wgsl_quant_linear_params),
    PAIR("quant_gemm", "Params", quant_linear_params, wgsl_quant_linear_params),
    PAIR("quant_gemv_rows", "Params", quant_slots_params, wgsl_quant_slots_params),
    PAIR("quant_gemv_rows4", "Params", quant_linear_params, wgsl_quant_linear_params),
    PAIR("quant_gemv_slots", "Params", quant_slots_params, wgsl_quant_slots_params),
    PAIR("quant_gemv_x8_fused", "Params", quant_slots_params, wgsl_quant_slots_params),
    PAIR("quant_gemv_x8", "Params", quant_linear_params, wgsl_quant_linear_params),
    PAIR("quant_x8", "Params", quant_linear_params, wgsl_quant_linear_params),
    PAIR("moments_combine", "Params", moments_combine_params, wgsl_moments_combine_params),
    PAIR("norm_backward", "Params", rowwise_params, wgsl_rowwise_params),
    PAIR("rowwise", "Params", rowwise_params, wgsl_rowwise_params),
    PAIR("scan", "Params", scan_params, wgsl_scan_params),
    PAIR("scatter_add_rows", "Params", scatter_rows_params, wgsl_scatter_add_rows_params),
    PAIR("softmax_axis", "Params", softmax_axis_params, wgsl_softmax_axis_params),
    PAIR("sort_extract", "Params", step_params, wgsl_sort_extract_params),
    PAIR("sort_global", "Params", step_params, wgsl_sort_global_params),
    PAIR("sort_keys", "Params", keys_params, wgsl_sort_keys_params),
    PAIR("sort_local", "Params", step_params, wgsl_sort_local_params),
    PAIR("transpose_tile", "Params", transpose_params, wgsl_transpose_tile_params),
    PAIR("unary", "Params", unary_params, wgsl_unary_params),
    PAIR("where", "Params", where_params, wgsl_where_params),
};

#define NPAIRS (sizeof pairs / sizeof pairs[0])

/* ---------------------------------------------------- the WGSL side */

#define MAX_STRUCTS 256
#define MAX_MEMBERS 64

typedef struct wgsl_member {
    char name[64];
    char type[96];
} wgsl_member;

typedef struct wgsl_struct {
    char file[64];
    char name[64];
    wgsl_member members[MAX_MEMBERS];
    int nmembers;
    bool has_attributes;
} wgsl_struct;

static wgsl_struct structs[MAX_STRUCTS];
static int nstructs;
static int passed, failed;

static void fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("FAIL ", stdout);
    vprintf(fmt, ap);
    fputc('\n', stdout);
    va_end(ap);
    failed++;
}

/* The text with comments turned into spaces (block comments nest). */
static void strip_comments(char *s)
{
    for (char *p = s; *p;) {
        if (p[0] == '/' && p[1] == '/') {
            while (*p && *p != '\n') *p++ = ' ';
        } else if (p[0] == '/' && p[1] == '*') {
            int depth = 0;
            do {
                if (p[0] == '/' && p[1] == '*') { depth++; p[0] = p[1] = ' '; p += 2; }
                else if (p[0] == '*' && p[1] == '/') { depth--; p[0] = p[1] = ' '; p += 2; }
                else if (*p) { if (*p != '\n') *p = ' '; p++; }
                else break;
            } while (depth > 0);
        } else {
            p++;
        }
    }
}

static const char *skip_space(const char *p)
{
    while (*p && isspace((unsigned char)*p)) p++;
    return p;
}

static bool is_ident(char c) { return isalnum((unsigned char)c) || c == '_'; }

/* A type's text, whitespace dropped, up to the ',' or '}' that ends the
 * member (commas inside <...> belong to the type). */
static const char *read_type(const char *p, char *dst, size_t cap, const char *where)
{
    int depth = 0;
    size_t n = 0;
    for (; *p; p++) {
        if (*p == '<') depth++;
        else if (*p == '>') depth--;
        else if (depth == 0 && (*p == ',' || *p == '}')) break;
        if (isspace((unsigned char)*p)) continue;
        if (n + 1 >= cap) { fail("%s: a member's type is too long", where); return NULL; }
        dst[n++] = *p;
    }
    dst[n] = '\0';
    return p;
}

/* Every `struct Name { member: type, ... }` of one file. */
static void parse_file(const char *stem, char *text)
{
    strip_comments(text);
    for (const char *p = text; (p = strstr(p, "struct")) != NULL; p += 6) {
        if ((p > text && is_ident(p[-1])) || is_ident(p[6])) continue;
        const char *q = skip_space(p + 6);
        size_t len = 0;
        while (is_ident(q[len])) len++;
        const char *brace = skip_space(q + len);
        if (len == 0 || *brace != '{') continue;
        if (nstructs == MAX_STRUCTS) { fail("more than %d WGSL structs", MAX_STRUCTS); return; }
        wgsl_struct *s = &structs[nstructs++];
        memset(s, 0, sizeof *s);
        snprintf(s->file, sizeof s->file, "%s", stem);
        snprintf(s->name, sizeof s->name, "%.*s", (int)len, q);
        char where[160];
        snprintf(where, sizeof where, "%s.wgsl struct %s", stem, s->name);
        const char *m = skip_space(brace + 1);
        while (*m && *m != '}') {
            /* Attributes (@builtin of an entry point's input, @align or
             * @size): skipped here; a struct with them cannot be checked
             * (layout_struct refuses it). */
            while (*m == '@') {
                s->has_attributes = true;
                m++;
                while (is_ident(*m)) m++;
                m = skip_space(m);
                if (*m == '(') {
                    while (*m && *m != ')') m++;
                    if (*m) m++;
                }
                m = skip_space(m);
            }
            size_t nl = 0;
            while (is_ident(m[nl])) nl++;
            const char *colon = skip_space(m + nl);
            if (nl == 0 || *colon != ':') { fail("%s: cannot read a member near \"%.20s\"", where, m); return; }
            if (s->nmembers == MAX_MEMBERS) { fail("%s: more than %d members", where, MAX_MEMBERS); return; }
            wgsl_member *mem = &s->members[s->nmembers++];
            snprintf(mem->name, sizeof mem->name, "%.*s", (int)nl, m);
            m = read_type(colon + 1, mem->type, sizeof mem->type, where);
            if (!m) return;
            if (*m == ',') m++;
            m = skip_space(m);
        }
    }
}

static const wgsl_struct *find_struct(const char *file, const char *name)
{
    for (int i = 0; i < nstructs; i++)
        if (strcmp(structs[i].file, file) == 0 && strcmp(structs[i].name, name) == 0) return &structs[i];
    return NULL;
}

/* A struct named in a member type: the file's own, else the one library
 * file that defines it (window.wgsl is placed before the shaders that use
 * its structs). */
static const wgsl_struct *resolve_struct(const char *file, const char *name)
{
    const wgsl_struct *own = find_struct(file, name);
    if (own) return own;
    const wgsl_struct *found = NULL;
    for (int i = 0; i < nstructs; i++)
        if (strcmp(structs[i].name, name) == 0) {
            if (found) return NULL; /* ambiguous */
            found = &structs[i];
        }
    return found;
}

static size_t round_up(size_t v, size_t a) { return (v + a - 1) / a * a; }

typedef struct layout {
    size_t align, size;
    bool is_struct, is_array;
    size_t stride;                 /* arrays */
    const wgsl_struct *def;        /* structs */
} layout;

static bool layout_struct(const wgsl_struct *s, layout *out, size_t *offsets, const char *where);

/* AlignOf and SizeOf of a type's text (WGSL "Memory Layout"). */
static bool layout_type(const char *file, const char *t, layout *out, const char *where)
{
    memset(out, 0, sizeof *out);
    size_t scalar = 0;
    if (!strcmp(t, "u32") || !strcmp(t, "i32") || !strcmp(t, "f32") || !strcmp(t, "atomic<u32>") ||
        !strcmp(t, "atomic<i32>")) {
        out->align = out->size = 4;
        return true;
    }
    if (!strcmp(t, "f16")) {
        out->align = out->size = 2;
        return true;
    }
    /* vecN<T> and the shorthands vecNf / vecNi / vecNu / vecNh */
    if (!strncmp(t, "vec", 3) && t[3] >= '2' && t[3] <= '4') {
        const int n = t[3] - '0';
        const char *e = t + 4;
        if (!strcmp(e, "<f32>") || !strcmp(e, "<i32>") || !strcmp(e, "<u32>") || !strcmp(e, "f") ||
            !strcmp(e, "i") || !strcmp(e, "u"))
            scalar = 4;
        else if (!strcmp(e, "<f16>") || !strcmp(e, "h"))
            scalar = 2;
        if (scalar) {
            out->size = (size_t)n * scalar;
            out->align = (n == 2 ? 2 : 4) * scalar;
            return true;
        }
    }
    if (!strncmp(t, "array<", 6)) {
        char inner[96];
        const char *p = t + 6;
        int depth = 0;
        size_t n = 0;
        for (; *p && !(depth == 0 && (*p == ',' || *p == '>')); p++) {
            if (*p == '<') depth++;
            if (*p == '>') depth--;
            if (n + 1 < sizeof inner) inner[n++] = *p;
        }
        inner[n] = '\0';
        if (*p != ',') {
            fail("%s: runtime-sized %s has no place in a uniform block", where, t);
            return false;
        }
        char *end = NULL;
        unsigned long count = strtoul(p + 1, &end, 10);
        if (end && (*end == 'u' || *end == 'i')) end++;
        if (!end || end == p + 1 || strcmp(end, ">") != 0 || count == 0) {
            fail("%s: %s: only a literal element count is modelled", where, t);
            return false;
        }
        layout el;
        if (!layout_type(file, inner, &el, where)) return false;
        out->is_array = true;
        out->stride = round_up(el.size, el.align);
        out->align = el.align;
        out->size = count * out->stride;
        return true;
    }
    const wgsl_struct *def = resolve_struct(file, t);
    if (def) {
        if (!layout_struct(def, out, NULL, where)) return false;
        out->is_struct = true;
        out->def = def;
        return true;
    }
    fail("%s: type %s is not modelled (or not host-shareable)", where, t);
    return false;
}

static bool layout_struct(const wgsl_struct *s, layout *out, size_t *offsets, const char *where)
{
    size_t end = 0, align = 1;
    if (s->has_attributes) {
        fail("%s: struct %s has member attributes, which this check does not model", where, s->name);
        return false;
    }
    for (int i = 0; i < s->nmembers; i++) {
        layout m;
        if (!layout_type(s->file, s->members[i].type, &m, where)) return false;
        const size_t off = round_up(end, m.align);
        if (offsets) offsets[i] = off;
        end = off + m.size;
        if (m.align > align) align = m.align;
    }
    memset(out, 0, sizeof *out);
    out->align = align;
    out->size = round_up(end, align);
    return true;
}

/* The uniform address space's constraints: a struct or array member at a
 * multiple of 16, array strides of 16, and the member after a struct at
 * least the struct's size rounded up to 16 further on. */
static bool uniform_ok(const wgsl_struct *s, const char *where)
{
    size_t offsets[MAX_MEMBERS];
    layout whole;
    if (!layout_struct(s, &whole, offsets, where)) return false;
    bool ok = true;
    for (int i = 0; i < s->nmembers; i++) {
        layout m;
        if (!layout_type(s->file, s->members[i].type, &m, where)) return false;
        if ((m.is_struct || m.is_array) && offsets[i] % 16 != 0) {
            fail("%s: %s (%s) at offset %zu: the uniform address space needs a multiple of 16", where,
                 s->members[i].name, s->members[i].type, offsets[i]);
            ok = false;
        }
        if (m.is_array && m.stride % 16 != 0) {
            fail("%s: %s has an element stride of %zu: the uniform address space needs a multiple of 16", where,
                 s->members[i].name, m.stride);
            ok = false;
        }
        if (m.is_struct) {
            if (i + 1 < s->nmembers && offsets[i + 1] < offsets[i] + round_up(m.size, 16)) {
                fail("%s: %s follows struct member %s too closely for the uniform address space", where,
                     s->members[i + 1].name, s->members[i].name);
                ok = false;
            }
            ok = uniform_ok(m.def, where) && ok;
        }
    }
    return ok;
}

/* One row: the WGSL struct's layout against the C struct's. */
static void check_pair(const layout_pair *pr)
{
    char where[160];
    snprintf(where, sizeof where, "%s.wgsl %s / %s", pr->file, pr->wgsl, pr->c_name);
    const wgsl_struct *s = find_struct(pr->file, pr->wgsl);
    if (!s) {
        fail("%s: no such WGSL struct (a stale row?)", where);
        return;
    }
    size_t offsets[MAX_MEMBERS];
    layout whole;
    if (!layout_struct(s, &whole, offsets, where)) return;
    bool ok = true;
    if (whole.size != pr->c_size) {
        fail("%s: WGSL size %zu, sizeof(%s) %zu", where, whole.size, pr->c_name, pr->c_size);
        ok = false;
    }
    if ((size_t)s->nmembers != pr->nfields) {
        fail("%s: WGSL has %d members, the table's row %zu", where, s->nmembers, pr->nfields);
        ok = false;
    }
    const size_t n = (size_t)s->nmembers < pr->nfields ? (size_t)s->nmembers : pr->nfields;
    for (size_t i = 0; i < n; i++) {
        const wgsl_member *m = &s->members[i];
        const c_field *c = &pr->fields[i];
        layout ml;
        if (!layout_type(s->file, m->type, &ml, where)) return;
        if (strcmp(m->name, c->wgsl_name) != 0) {
            fail("%s: member %zu is %s in WGSL, %s in the table", where, i, m->name, c->wgsl_name);
            ok = false;
        }
        if (offsets[i] != c->offset || ml.size != c->size) {
            fail("%s: %s: WGSL offset %zu size %zu, C offset %zu size %zu", where, m->name, offsets[i], ml.size,
                 c->offset, c->size);
            ok = false;
        }
    }
    ok = uniform_ok(s, where) && ok;
    if (ok) passed++;
}

static char *read_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *buf = NULL;
    size_t len = 0, cap = 0, got;
    char chunk[4096];
    while ((got = fread(chunk, 1, sizeof chunk, f)) > 0) {
        if (len + got + 1 > cap) {
            cap = (len + got + 1) * 2;
            char *grown = realloc(buf, cap);
            if (!grown) { free(buf); fclose(f); return NULL; }
            buf = grown;
        }
        memcpy(buf + len, chunk, got);
        len += got;
    }
    fclose(f);
    if (!buf) buf = calloc(1, 1);
    else buf[len] = '\0';
    return buf;
}

static bool has_row(const char *file, const char *name)
{
    for (size_t i = 0; i < NPAIRS; i++)
        if (!strcmp(pairs[i].file, file) && !strcmp(pairs[i].wgsl, name)) return true;
    return false;
}

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : WT_WGSL_DIR;
    DIR *d = opendir(dir);
    if (!d) {
        printf("FAIL cannot open %s\n0 passed, 1 failed\n", dir);
        return 1;
    }
    int files = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        const size_t len = strlen(e->d_name);
        if (len < 6 || strcmp(e->d_name + len - 5, ".wgsl") != 0 || len - 5 >= sizeof structs[0].file) continue;
        char path[4096], stem[64];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        snprintf(stem, sizeof stem, "%.*s", (int)(len - 5), e->d_name);
        char *text = read_text(path);
        if (!text) {
            fail("cannot read %s", path);
            continue;
        }
        parse_file(stem, text);
        free(text);
        files++;
    }
    closedir(d);
    if (files == 0) fail("no .wgsl files in %s", dir);

    /* Completeness: every Params block, and every struct a Params holds,
     * has its row. */
    int params_blocks = 0;
    for (int i = 0; i < nstructs; i++) {
        const wgsl_struct *s = &structs[i];
        if (strcmp(s->name, "Params") != 0) continue;
        params_blocks++;
        if (!has_row(s->file, s->name))
            fail("%s.wgsl: struct Params has no row in tests/params_layout.c (its C struct in wg_params.h)",
                 s->file);
        for (int m = 0; m < s->nmembers; m++) {
            const wgsl_struct *inner = resolve_struct(s->file, s->members[m].type);
            if (inner && !has_row(inner->file, inner->name))
                fail("%s.wgsl: struct %s (inside Params) has no row in tests/params_layout.c", inner->file,
                     inner->name);
        }
    }
    for (size_t i = 0; i < NPAIRS; i++) {
        for (size_t j = 0; j < i; j++)
            if (!strcmp(pairs[i].file, pairs[j].file) && !strcmp(pairs[i].wgsl, pairs[j].wgsl))
                fail("%s.wgsl %s has two rows", pairs[i].file, pairs[i].wgsl);
        check_pair(&pairs[i]);
    }
    printf("%d WGSL files, %d Params blocks, %zu rows\n", files, params_blocks, NPAIRS);
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
