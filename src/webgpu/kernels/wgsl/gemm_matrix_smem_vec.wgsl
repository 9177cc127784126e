// gemm_matrix_tiled's workgroup slabs as words of 8 halves (vec4<u32>),
// row after row: 16-byte stores, and fragments loaded with the builtins'
// current form (majorness as a template argument; offset and stride count
// the array's elements, here words). Rows are padded by one word, so that
// the rows of a fragment start in different banks. Needs BM, BN, KW, B_T.

const A_LDW: u32 = KW + 1u;
const B_LDW: u32 = select(BN / 8u + 1u, A_LDW, B_T);
const A_STAGE: u32 = BM * A_LDW;
const B_STAGE: u32 = select(BK * B_LDW, BN * A_LDW, B_T);

var<workgroup> sa: array<vec4<u32>, 2u * A_STAGE>;
var<workgroup> sb: array<vec4<u32>, 2u * B_STAGE>;

fn put_a(stage: u32, row: u32, word: u32, v: vec4<u32>) { sa[stage * A_STAGE + row * A_LDW + word] = v; }
fn put_b(stage: u32, row: u32, word: u32, v: vec4<u32>) { sb[stage * B_STAGE + row * B_LDW + word] = v; }

// a's fragment of rows 16 * r16.., k 16 * ks..
fn frag_left(stage: u32, r16: u32, ks: u32) -> subgroup_matrix_left<f16, 16, 16> {
    return subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(
        &sa, stage * A_STAGE + r16 * 16u * A_LDW + ks * 2u, A_LDW);
}

// b's fragment of columns 16 * n16.., k 16 * ks..: rows of k ([k][n]
// words), or with B_T rows of n.
fn frag_right(stage: u32, n16: u32, ks: u32) -> subgroup_matrix_right<f16, 16, 16> {
    if (B_T) {
        return subgroupMatrixLoad<subgroup_matrix_right<f16, 16, 16>, col_major>(
            &sb, stage * B_STAGE + n16 * 16u * A_LDW + ks * 2u, A_LDW);
    }
    return subgroupMatrixLoad<subgroup_matrix_right<f16, 16, 16>, row_major>(
        &sb, stage * B_STAGE + ks * 16u * B_LDW + n16 * 2u, B_LDW);
}

fn store_block(o: u32, m: subgroup_matrix_result<f32, 16, 16>) {
    subgroupMatrixStore<row_major>(&block, o, m, 16u);
}
