// gemm_matrix_tiled's workgroup slabs as words of 8 halves (vec4<u32>):
// 16-byte stores, and fragments loaded with the builtins' current form
// (majorness as a template argument; offset and stride count the array's
// elements, here words). Needs A_STAGE, B_STAGE, A_LDW, B_LDW, B_T.

var<workgroup> sa: array<vec4<u32>, 2u * A_STAGE>;
var<workgroup> sb: array<vec4<u32>, 2u * B_STAGE>;

fn put_a(o: u32, v: vec4<u32>) { sa[o] = v; }
fn put_b(o: u32, v: vec4<u32>) { sb[o] = v; }

fn frag_left(o: u32) -> subgroup_matrix_left<f16, 16, 16> {
    return subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&sa, o, A_LDW);
}

// b's fragment at word o: rows of k ([k][n] words), or with B_T rows of n.
fn frag_right(o: u32) -> subgroup_matrix_right<f16, 16, 16> {
    if (B_T) {
        return subgroupMatrixLoad<subgroup_matrix_right<f16, 16, 16>, col_major>(&sb, o, A_LDW);
    }
    return subgroupMatrixLoad<subgroup_matrix_right<f16, 16, 16>, row_major>(&sb, o, B_LDW);
}

fn store_block(o: u32, m: subgroup_matrix_result<f32, 16, 16>) {
    subgroupMatrixStore<row_major>(&block, o, m, 16u);
}
