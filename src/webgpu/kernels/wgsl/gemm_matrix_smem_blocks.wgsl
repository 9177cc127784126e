// gemm_matrix_tiled's workgroup slabs as 16 x 16 fragments, each its own
// array of 32 words of 8 halves (16 rows of 2 words), so that every
// fragment load has offset 0 and a constant stride into an array of
// constant length: Dawn's robustness transform then has nothing to check
// at the load. With offsets into one large array (gemm_matrix_smem_vec)
// it guards each load with a bounds test that turns offset and stride
// into run-time values; on an H200 at 4096^3 this layout ran at 134
// TFLOP/s where that one ran at 120 (128 x 128 tiles, k slabs of 32).
// Rows of a fragment padded by a word (to start them in different banks)
// were not faster. Needs BM, BN, BK, B_T.

const F_LDW: u32 = 2u;
const A_FRAGS: u32 = (BM / 16u) * (BK / 16u);
const B_FRAGS: u32 = (BN / 16u) * (BK / 16u);

var<workgroup> sa: array<array<vec4<u32>, 16u * F_LDW>, 2u * A_FRAGS>;
var<workgroup> sb: array<array<vec4<u32>, 16u * F_LDW>, 2u * B_FRAGS>;

// Row row, word word of a's slab: fragment (row / 16, word / 2).
fn put_a(stage: u32, row: u32, word: u32, v: vec4<u32>) {
    sa[stage * A_FRAGS + (row / 16u) * (BK / 16u) + word / 2u][(row % 16u) * F_LDW + word % 2u] = v;
}

// b's slab: rows of k, words of n ([k][n]); with B_T rows of n, words of k.
fn put_b(stage: u32, row: u32, word: u32, v: vec4<u32>) {
    var f: u32;
    if (B_T) { f = (row / 16u) * (BK / 16u) + word / 2u; } else { f = (word / 2u) * (BK / 16u) + row / 16u; }
    sb[stage * B_FRAGS + f][(row % 16u) * F_LDW + word % 2u] = v;
}

fn frag_left(stage: u32, r16: u32, ks: u32) -> subgroup_matrix_left<f16, 16, 16> {
    return subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(
        &sa[stage * A_FRAGS + r16 * (BK / 16u) + ks], 0u, F_LDW);
}

fn frag_right(stage: u32, n16: u32, ks: u32) -> subgroup_matrix_right<f16, 16, 16> {
    if (B_T) {
        return subgroupMatrixLoad<subgroup_matrix_right<f16, 16, 16>, col_major>(
            &sb[stage * B_FRAGS + n16 * (BK / 16u) + ks], 0u, F_LDW);
    }
    return subgroupMatrixLoad<subgroup_matrix_right<f16, 16, 16>, row_major>(
        &sb[stage * B_FRAGS + n16 * (BK / 16u) + ks], 0u, F_LDW);
}

fn store_block(o: u32, m: subgroup_matrix_result<f32, 16, 16>) {
    subgroupMatrixStore<row_major>(&block, o, m, 16u);
}
