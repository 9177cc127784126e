// f16 matrix product on the matrix units with a workgroup tile shared by
// several subgroups: out[z] = act(a[z] @ b[z] + bias) with f16 operands,
// f32 accumulation and an f16 result.
//
// A workgroup is WG_M x WG_N subgroups of 32 invocations computing a BM x
// BN tile; each subgroup keeps an SG_M x SG_N grid (1, 2 or 4 each way) of
// 16 x 16 f32 result matrices in registers, as named variables c00 .. c33
// whose use is guarded by those constants (the compiler drops the rest).
// (An earlier form kept them in an array, indexed in loops: it ran at 33
// TFLOP/s at 4096^3 on an H200 whatever the tile, while a loop of products
// alone reached 535 with four accumulators in an array and 37 with
// sixteen; the array evidently left the registers.) A k step loads SG_M
// fragments of a and SG_N of b from workgroup memory for SG_M x SG_N
// products: the larger grids load less per product. Per k slab of BK,
// every invocation copies its
// share of a's BM x BK slab and b's BK x BN slab (or, with B_T, b's BN x BK
// rows of [n, k]) from global memory into workgroup memory with 16-byte
// loads, 8 halves at a time, zero outside the operands; then each subgroup
// loads its 16 x 16 fragments from workgroup memory. Two slab buffers: the
// next slab is read into registers while the current one is multiplied,
// then written to the other buffer (one barrier a slab).
//
// The fragment offsets differ between the subgroups of a workgroup (each
// is uniform within its subgroup, which is what the matrix units need).
// Dawn's uniformity analysis asks for workgroup-uniform offsets unless
// chromium.subgroup_matrix_uniformity is off: the prelude turns it off.
//
// Shapes: any M and N (the tile's edge is zero-filled and masked at the
// store); K, the row strides and the offsets multiples of 8 halves, and
// N too where b is row-major (whole 16-byte loads); N even (pairs of
// halves in the result).
// Prelude constants: SG_M, SG_N (1, 2 or 4), WG_M, WG_N, BK (a multiple
// of 16), B_T, BIAS, BIAS_ROWS (the bias indexed by row, a convolution's
// per output channel, instead of by column), ACT. Libraries: gemm_matrix_smem_vec,
// gemm_matrix_smem_blocks or gemm_matrix_smem_f16 (the slabs' layout in
// workgroup memory, their stores and the fragment loads), gemm_epilogue,
// an f16 library (pack_halves).

struct Params {
    batch: u32,
    m: u32,
    n: u32,
    k: u32,
    a_offset: u32,
    a_batch_stride: u32,
    lda: u32,
    b_offset: u32,
    b_batch_stride: u32,
    ldb: u32,
    out_offset: u32,
    tiles_m: u32,
    tiles_n: u32,
    bias_offset: u32,
    pad0: u32,
    pad1: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> a: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read> b: array<vec4<u32>>;
@group(0) @binding(3) var<storage, read_write> out: array<u32>;
@group(0) @binding(4) var<storage, read> bias: array<f16>;

const WG: u32 = 32u * WG_M * WG_N;
const BM: u32 = 16u * SG_M * WG_M;
const BN: u32 = 16u * SG_N * WG_N;
// The slabs in words of 8 halves; the library lays them out in workgroup
// memory (put_a, put_b, frag_left, frag_right).
const KW: u32 = BK / 8u;
const A_WORDS: u32 = BM * KW;
const B_WORDS: u32 = BK * BN / 8u;
const A_PER: u32 = (A_WORDS + WG - 1u) / WG;
const B_PER: u32 = (B_WORDS + WG - 1u) / WG;

// One 16 x 16 f32 block a subgroup for the epilogue.
var<workgroup> block: array<f32, 256u * WG_M * WG_N>;

// Word i of a's slab at k0: row i / KW, word i % KW; zero outside a.
fn fetch_a(a_w: u32, row0: u32, k0: u32, i: u32) -> vec4<u32> {
    let r = row0 + i / KW;
    let k = k0 + (i % KW) * 8u;
    if (i >= A_WORDS || r >= p.m || k >= p.k) { return vec4<u32>(0u); }
    return a[a_w + r * (p.lda / 8u) + k / 8u];
}

// Word i of b's slab at k0: [k][n] words, or with B_T [n][k] words.
fn fetch_b(b_w: u32, col0: u32, k0: u32, i: u32) -> vec4<u32> {
    if (i >= B_WORDS) { return vec4<u32>(0u); }
    if (B_T) {
        let n = col0 + i / KW;
        let k = k0 + (i % KW) * 8u;
        if (n >= p.n || k >= p.k) { return vec4<u32>(0u); }
        return b[b_w + n * (p.ldb / 8u) + k / 8u];
    }
    let k = k0 + i / (BN / 8u);
    let n = col0 + (i % (BN / 8u)) * 8u;
    if (k >= p.k || n >= p.n) { return vec4<u32>(0u); }
    return b[b_w + k * (p.ldb / 8u) + n / 8u];
}

// Word i of a's slab is row i / KW, word i % KW; of b's, row i / KW, word
// i % KW ([n][k], B_T) or row i / (BN / 8), word i % (BN / 8) ([k][n]).
fn put_slabs(stage: u32, lid: u32, ra: array<vec4<u32>, A_PER>, rb: array<vec4<u32>, B_PER>) {
    for (var j = 0u; j < A_PER; j++) {
        let i = lid + j * WG;
        if (i < A_WORDS) { put_a(stage, i / KW, i % KW, ra[j]); }
    }
    for (var j = 0u; j < B_PER; j++) {
        let i = lid + j * WG;
        if (i < B_WORDS) {
            if (B_T) {
                put_b(stage, i / KW, i % KW, rb[j]);
            } else {
                put_b(stage, i / (BN / 8u), i % (BN / 8u), rb[j]);
            }
        }
    }
}

// One 16 x 16 result at rows gm.., columns gn..: through the subgroup's
// block of workgroup memory, plus the bias, activated, rounded to f16
// pairs. Lane t finishes row t / 2, columns (t % 2) * 8 .. + 8. Called in
// uniform control flow (barriers).
fn finish(m: subgroup_matrix_result<f32, 16, 16>, batch: u32, gm0: u32, gn0: u32, sg: u32, lane: u32) {
    let mine = sg * 256u;
    store_block(mine, m);
    workgroupBarrier();
    let r_in = lane / 2u;
    let c_in = (lane % 2u) * 8u;
    let gm = gm0 + r_in;
    let gn = gn0 + c_in;
    let o = p.out_offset + (batch * p.m + gm) * p.n + gn; // even: N and the offset are
    for (var c = 0u; c < 8u; c += 2u) {
        if (gm < p.m && gn + c < p.n) {
            var v = vec2<f32>(block[mine + r_in * 16u + c_in + c], block[mine + r_in * 16u + c_in + c + 1u]);
            if (BIAS && BIAS_ROWS) {
                v += vec2<f32>(f32(bias[p.bias_offset + gm]));
            } else if (BIAS) {
                v += vec2<f32>(f32(bias[p.bias_offset + gn + c]), f32(bias[p.bias_offset + gn + c + 1u]));
            }
            out[(o + c) / 2u] = pack_halves(vec2<f32>(activate(v.x), activate(v.y)));
        }
    }
    workgroupBarrier();
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let w = wid.x + wid.y * nwg.x;
    let tiles = p.tiles_m * p.tiles_n;
    if (w >= p.batch * tiles) { return; } // uniform
    let batch = w / tiles;
    let tile = w % tiles;
    let row0 = (tile / p.tiles_n) * BM;
    let col0 = (tile % p.tiles_n) * BN;
    let a_w = (p.a_offset + batch * p.a_batch_stride) / 8u;
    let b_w = (p.b_offset + batch * p.b_batch_stride) / 8u;
    // Subgroups of 32 consecutive invocations (the host checks the size).
    let sg = lid / 32u;
    let lane = lid % 32u;
    let sg_row = (sg / WG_N) * 16u * SG_M;
    let sg_col = (sg % WG_N) * 16u * SG_N;

    var ra: array<vec4<u32>, A_PER>;
    var rb: array<vec4<u32>, B_PER>;
    for (var j = 0u; j < A_PER; j++) { ra[j] = fetch_a(a_w, row0, 0u, lid + j * WG); }
    for (var j = 0u; j < B_PER; j++) { rb[j] = fetch_b(b_w, col0, 0u, lid + j * WG); }
    put_slabs(0u, lid, ra, rb);
    workgroupBarrier();

    var c00: subgroup_matrix_result<f32, 16, 16>;
    var c01: subgroup_matrix_result<f32, 16, 16>;
    var c02: subgroup_matrix_result<f32, 16, 16>;
    var c03: subgroup_matrix_result<f32, 16, 16>;
    var c10: subgroup_matrix_result<f32, 16, 16>;
    var c11: subgroup_matrix_result<f32, 16, 16>;
    var c12: subgroup_matrix_result<f32, 16, 16>;
    var c13: subgroup_matrix_result<f32, 16, 16>;
    var c20: subgroup_matrix_result<f32, 16, 16>;
    var c21: subgroup_matrix_result<f32, 16, 16>;
    var c22: subgroup_matrix_result<f32, 16, 16>;
    var c23: subgroup_matrix_result<f32, 16, 16>;
    var c30: subgroup_matrix_result<f32, 16, 16>;
    var c31: subgroup_matrix_result<f32, 16, 16>;
    var c32: subgroup_matrix_result<f32, 16, 16>;
    var c33: subgroup_matrix_result<f32, 16, 16>;
    let slabs = (p.k + BK - 1u) / BK;
    for (var t = 0u; t < slabs; t++) {
        let stage = t % 2u;
        let more = t + 1u < slabs; // uniform
        if (more) {
            let k1 = (t + 1u) * BK;
            for (var j = 0u; j < A_PER; j++) { ra[j] = fetch_a(a_w, row0, k1, lid + j * WG); }
            for (var j = 0u; j < B_PER; j++) { rb[j] = fetch_b(b_w, col0, k1, lid + j * WG); }
        }
        let a16 = sg_row / 16u;
        let b16 = sg_col / 16u;
        for (var ks = 0u; ks < BK / 16u; ks++) {
            // The guards are constants: the unused fragments and products
            // are dropped at compile time.
            var l0 = frag_left(stage, a16, ks);
            var l1: subgroup_matrix_left<f16, 16, 16>;
            var l2: subgroup_matrix_left<f16, 16, 16>;
            var l3: subgroup_matrix_left<f16, 16, 16>;
            if (SG_M > 1u) { l1 = frag_left(stage, a16 + 1u, ks); }
            if (SG_M > 2u) {
                l2 = frag_left(stage, a16 + 2u, ks);
                l3 = frag_left(stage, a16 + 3u, ks);
            }
            var r0 = frag_right(stage, b16, ks);
            var r1: subgroup_matrix_right<f16, 16, 16>;
            var r2: subgroup_matrix_right<f16, 16, 16>;
            var r3: subgroup_matrix_right<f16, 16, 16>;
            if (SG_N > 1u) { r1 = frag_right(stage, b16 + 1u, ks); }
            if (SG_N > 2u) {
                r2 = frag_right(stage, b16 + 2u, ks);
                r3 = frag_right(stage, b16 + 3u, ks);
            }
            c00 = subgroupMatrixMultiplyAccumulate(l0, r0, c00);
            if (SG_N > 1u) { c01 = subgroupMatrixMultiplyAccumulate(l0, r1, c01); }
            if (SG_N > 2u) {
                c02 = subgroupMatrixMultiplyAccumulate(l0, r2, c02);
                c03 = subgroupMatrixMultiplyAccumulate(l0, r3, c03);
            }
            if (SG_M > 1u) {
                c10 = subgroupMatrixMultiplyAccumulate(l1, r0, c10);
                if (SG_N > 1u) { c11 = subgroupMatrixMultiplyAccumulate(l1, r1, c11); }
                if (SG_N > 2u) {
                    c12 = subgroupMatrixMultiplyAccumulate(l1, r2, c12);
                    c13 = subgroupMatrixMultiplyAccumulate(l1, r3, c13);
                }
            }
            if (SG_M > 2u) {
                c20 = subgroupMatrixMultiplyAccumulate(l2, r0, c20);
                c30 = subgroupMatrixMultiplyAccumulate(l3, r0, c30);
                if (SG_N > 1u) {
                    c21 = subgroupMatrixMultiplyAccumulate(l2, r1, c21);
                    c31 = subgroupMatrixMultiplyAccumulate(l3, r1, c31);
                }
                if (SG_N > 2u) {
                    c22 = subgroupMatrixMultiplyAccumulate(l2, r2, c22);
                    c23 = subgroupMatrixMultiplyAccumulate(l2, r3, c23);
                    c32 = subgroupMatrixMultiplyAccumulate(l3, r2, c32);
                    c33 = subgroupMatrixMultiplyAccumulate(l3, r3, c33);
                }
            }
        }
        if (more) { put_slabs(1u - stage, lid, ra, rb); }
        workgroupBarrier();
    }

    let gm = row0 + sg_row;
    let gn = col0 + sg_col;
    finish(c00, batch, gm, gn, sg, lane);
    if (SG_N > 1u) { finish(c01, batch, gm, gn + 16u, sg, lane); }
    if (SG_N > 2u) {
        finish(c02, batch, gm, gn + 32u, sg, lane);
        finish(c03, batch, gm, gn + 48u, sg, lane);
    }
    if (SG_M > 1u) {
        finish(c10, batch, gm + 16u, gn, sg, lane);
        if (SG_N > 1u) { finish(c11, batch, gm + 16u, gn + 16u, sg, lane); }
        if (SG_N > 2u) {
            finish(c12, batch, gm + 16u, gn + 32u, sg, lane);
            finish(c13, batch, gm + 16u, gn + 48u, sg, lane);
        }
    }
    if (SG_M > 2u) {
        finish(c20, batch, gm + 32u, gn, sg, lane);
        finish(c30, batch, gm + 48u, gn, sg, lane);
        if (SG_N > 1u) {
            finish(c21, batch, gm + 32u, gn + 16u, sg, lane);
            finish(c31, batch, gm + 48u, gn + 16u, sg, lane);
        }
        if (SG_N > 2u) {
            finish(c22, batch, gm + 32u, gn + 32u, sg, lane);
            finish(c23, batch, gm + 32u, gn + 48u, sg, lane);
            finish(c32, batch, gm + 48u, gn + 32u, sg, lane);
            finish(c33, batch, gm + 48u, gn + 48u, sg, lane);
        }
    }
}
