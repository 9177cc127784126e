// gemm_matrix_tiled's workgroup slabs as halves, for Dawn builds without
// the builtins' current form: the older form (majorness as an argument;
// offset and stride count halves), each word stored as 8 halves. Offsets
// and strides arrive in words of 8 halves. Needs A_STAGE, B_STAGE, A_LDW,
// B_LDW, B_T.

var<workgroup> sa: array<f16, 16u * A_STAGE>;
var<workgroup> sb: array<f16, 16u * B_STAGE>;

fn put_a(o: u32, v: vec4<u32>) {
    for (var c = 0u; c < 4u; c++) {
        let h = bitcast<vec2<f16>>(v[c]);
        sa[8u * o + 2u * c] = h.x;
        sa[8u * o + 2u * c + 1u] = h.y;
    }
}

fn put_b(o: u32, v: vec4<u32>) {
    for (var c = 0u; c < 4u; c++) {
        let h = bitcast<vec2<f16>>(v[c]);
        sb[8u * o + 2u * c] = h.x;
        sb[8u * o + 2u * c + 1u] = h.y;
    }
}

fn frag_left(o: u32) -> subgroup_matrix_left<f16, 16, 16> {
    return subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>>(&sa, 8u * o, false, 8u * A_LDW);
}

fn frag_right(o: u32) -> subgroup_matrix_right<f16, 16, 16> {
    if (B_T) {
        return subgroupMatrixLoad<subgroup_matrix_right<f16, 16, 16>>(&sb, 8u * o, true, 8u * A_LDW);
    }
    return subgroupMatrixLoad<subgroup_matrix_right<f16, 16, 16>>(&sb, 8u * o, false, 8u * B_LDW);
}

fn store_block(o: u32, m: subgroup_matrix_result<f32, 16, 16>) {
    subgroupMatrixStore(&block, o, m, false, 16u);
}
