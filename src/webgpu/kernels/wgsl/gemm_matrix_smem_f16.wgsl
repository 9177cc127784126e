// gemm_matrix_tiled's workgroup slabs as halves, for Dawn builds without
// the builtins' current form: the older form (majorness as an argument;
// offset and stride count halves), each word stored as 8 halves. The
// layout is gemm_matrix_smem_vec's, counted in halves. Needs BM, BN, KW,
// B_T.

const A_LDW: u32 = KW + 1u;
const B_LDW: u32 = select(BN / 8u + 1u, A_LDW, B_T);
const A_STAGE: u32 = BM * A_LDW;
const B_STAGE: u32 = select(BK * B_LDW, BN * A_LDW, B_T);

var<workgroup> sa: array<f16, 16u * A_STAGE>;
var<workgroup> sb: array<f16, 16u * B_STAGE>;

fn put_a(stage: u32, row: u32, word: u32, v: vec4<u32>) {
    let o = stage * A_STAGE + row * A_LDW + word;
    for (var c = 0u; c < 4u; c++) {
        let h = bitcast<vec2<f16>>(v[c]);
        sa[8u * o + 2u * c] = h.x;
        sa[8u * o + 2u * c + 1u] = h.y;
    }
}

fn put_b(stage: u32, row: u32, word: u32, v: vec4<u32>) {
    let o = stage * B_STAGE + row * B_LDW + word;
    for (var c = 0u; c < 4u; c++) {
        let h = bitcast<vec2<f16>>(v[c]);
        sb[8u * o + 2u * c] = h.x;
        sb[8u * o + 2u * c + 1u] = h.y;
    }
}

fn frag_left(stage: u32, r16: u32, ks: u32) -> subgroup_matrix_left<f16, 16, 16> {
    let o = stage * A_STAGE + r16 * 16u * A_LDW + ks * 2u;
    return subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>>(&sa, 8u * o, false, 8u * A_LDW);
}

fn frag_right(stage: u32, n16: u32, ks: u32) -> subgroup_matrix_right<f16, 16, 16> {
    if (B_T) {
        let o = stage * B_STAGE + n16 * 16u * A_LDW + ks * 2u;
        return subgroupMatrixLoad<subgroup_matrix_right<f16, 16, 16>>(&sb, 8u * o, true, 8u * A_LDW);
    }
    let o = stage * B_STAGE + ks * 16u * B_LDW + n16 * 2u;
    return subgroupMatrixLoad<subgroup_matrix_right<f16, 16, 16>>(&sb, 8u * o, false, 8u * B_LDW);
}

fn store_block(o: u32, m: subgroup_matrix_result<f32, 16, 16>) {
    subgroupMatrixStore(&block, o, m, false, 16u);
}
