// f16 conv2d (one group) on the matrix units as an implicit matrix product
// (kernels/gemm.c, conv_matrix_implicit): per image, out [O, OH OW] =
// w [O, K] @ windows [K, OH OW] with K = C KH KW, where the windows are
// never written to memory: each k slab of b is gathered from x (NCHW,
// any strides) straight into workgroup memory, zero in the padding and
// past K and OH OW. The rest follows gemm_matrix_tiled.wgsl (a workgroup
// of WG_M x WG_N subgroups, each with SG_M x SG_N 16 x 16 f32 results in
// registers, two slab buffers, the next slab read into registers while
// the current one is multiplied, the result through workgroup memory into
// NCHW out with the bias per row); the slab layout is the
// gemm_matrix_smem_blocks library's, with b stored [k][n].
//
// b's slab is BK rows of k by BN pixels, in words of 8 pixels of one k.
// Invocation lid's words are i = lid + j WG: since WG is a multiple of BN
// / 8, each invocation keeps one column of 8 pixels for the whole product
// (their window origins are worked out once) and takes rows lid / (BN /
// 8) + j WG / (BN / 8) of every slab, a division of k by the tap counts
// (constants: a multiply and a shift) a row.
//
// Shapes: K and a's row stride (lda) multiples of 8 halves (the host pads
// w's rows otherwise), a's offset too; OH OW even (f16 results in pairs).
// Prelude constants: SG_M, SG_N (1, 2 or 4), WG_M, WG_N, BK (a multiple of
// 16), B_T (false), BIAS, TAP_W (kernel_w), TAPS (kernel_h kernel_w), OW
// (out_w). Libraries: window, gemm_matrix_smem_blocks, gemm_epilogue, an
// f16 library (pack_halves).

struct Params {
    win: Window,
    x: View4,
    images: u32,
    m: u32,      // O
    n: u32,      // OH OW
    k: u32,      // C KH KW
    a_offset: u32,
    lda: u32,
    tiles_m: u32,
    tiles_n: u32,
    out_offset: u32,
    bias_offset: u32,
    pad0: u32,
    pad1: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> a: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read> x: array<f16>;
@group(0) @binding(3) var<storage, read_write> out: array<u32>;
@group(0) @binding(4) var<storage, read> bias: array<f16>;

const WG: u32 = 32u * WG_M * WG_N;
const BM: u32 = 16u * SG_M * WG_M;
const BN: u32 = 16u * SG_N * WG_N;
const KWORDS: u32 = BK / 8u;
const A_WORDS: u32 = BM * KWORDS;
const A_PER: u32 = (A_WORDS + WG - 1u) / WG;
// b's slab: BN / 8 words a row of k; WG / (BN / 8) rows a pass.
const B_ROW_WORDS: u32 = BN / 8u;
const B_ROWS_A_PASS: u32 = WG / B_ROW_WORDS;
const B_PER: u32 = (BK + B_ROWS_A_PASS - 1u) / B_ROWS_A_PASS;

var<workgroup> block: array<f32, 256u * WG_M * WG_N>;

// Word i of a's slab at k0: row i / KWORDS; zero outside a.
fn fetch_a(a_w: u32, row0: u32, k0: u32, i: u32) -> vec4<u32> {
    let r = row0 + i / KWORDS;
    let k = k0 + (i % KWORDS) * 8u;
    if (i >= A_WORDS || r >= p.m || k >= p.k) { return vec4<u32>(0u); }
    return a[a_w + r * (p.lda / 8u) + k / 8u];
}

// The 8 pixels of window row k (channel, tap) for this invocation's
// column: x at the window origins (oy0, ox0) moved by the tap, zero in the
// padding, past K and past the plane (origins marked out of range).
fn gather_b(x_image: u32, k: u32, oy0: array<i32, 8>, ox0: array<i32, 8>) -> vec4<u32> {
    var v: array<f16, 8>;
    if (k < p.k) {
        let c = k / TAPS;
        let tap = k % TAPS;
        let dy = i32(tap / TAP_W) * p.win.dil_h;
        let dx = i32(tap % TAP_W) * p.win.dil_w;
        let plane = x_image + c * p.x.strides.y;
        for (var j = 0u; j < 8u; j++) {
            let iy = oy0[j] + dy;
            let ix = ox0[j] + dx;
            if (iy >= 0 && iy < p.win.in_h && ix >= 0 && ix < p.win.in_w) {
                v[j] = x[plane + u32(iy) * p.x.strides.z + u32(ix) * p.x.strides.w];
            }
        }
    }
    let lo = vec4<f16>(v[0], v[1], v[2], v[3]);
    let hi = vec4<f16>(v[4], v[5], v[6], v[7]);
    return vec4<u32>(bitcast<vec2<u32>>(lo), bitcast<vec2<u32>>(hi));
}

fn put_slabs(stage: u32, lid: u32, ra: array<vec4<u32>, A_PER>, rb: array<vec4<u32>, B_PER>) {
    for (var j = 0u; j < A_PER; j++) {
        let i = lid + j * WG;
        if (i < A_WORDS) { put_a(stage, i / KWORDS, i % KWORDS, ra[j]); }
    }
    for (var j = 0u; j < B_PER; j++) {
        let r = lid / B_ROW_WORDS + j * B_ROWS_A_PASS;
        if (r < BK) { put_b(stage, r, lid % B_ROW_WORDS, rb[j]); }
    }
}

// One 16 x 16 result at rows gm0.., pixels gn0.. of image `image`: through
// the subgroup's block of workgroup memory, plus the bias of its output
// channel, rounded to f16 pairs. Called in uniform control flow.
fn finish(m: subgroup_matrix_result<f32, 16, 16>, image: u32, gm0: u32, gn0: u32, sg: u32, lane: u32) {
    let mine = sg * 256u;
    store_block(mine, m);
    workgroupBarrier();
    let r_in = lane / 2u;
    let c_in = (lane % 2u) * 8u;
    let gm = gm0 + r_in;
    let gn = gn0 + c_in;
    let o = p.out_offset + (image * p.m + gm) * p.n + gn; // even: n and the offset are
    for (var c = 0u; c < 8u; c += 2u) {
        if (gm < p.m && gn + c < p.n) {
            var v = vec2<f32>(block[mine + r_in * 16u + c_in + c], block[mine + r_in * 16u + c_in + c + 1u]);
            if (BIAS) { v += vec2<f32>(f32(bias[p.bias_offset + gm])); }
            out[(o + c) / 2u] = pack_halves(v);
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
    if (w >= p.images * tiles) { return; } // uniform
    let image = w / tiles;
    let tile = w % tiles;
    let row0 = (tile / p.tiles_n) * BM;
    let col0 = (tile % p.tiles_n) * BN;
    let a_w = p.a_offset / 8u;
    let x_image = p.x.offset + image * p.x.strides.x;
    let sg = lid / 32u;
    let lane = lid % 32u;
    let sg_row = (sg / WG_N) * 16u * SG_M;
    let sg_col = (sg % WG_N) * 16u * SG_N;

    // This invocation's 8 pixels and their window origins; a pixel past
    // the plane gets an origin no tap reaches from (all reads skipped).
    var oy0: array<i32, 8>;
    var ox0: array<i32, 8>;
    let q0 = col0 + (lid % B_ROW_WORDS) * 8u;
    var oy = q0 / OW;
    var ox = q0 % OW;
    for (var j = 0u; j < 8u; j++) {
        if (q0 + j < p.n) {
            oy0[j] = i32(oy) * p.win.stride_h - p.win.pad_top;
            ox0[j] = i32(ox) * p.win.stride_w - p.win.pad_left;
        } else {
            oy0[j] = -0x40000000;
            ox0[j] = -0x40000000;
        }
        ox += 1u;
        if (ox == OW) {
            ox = 0u;
            oy += 1u;
        }
    }
    let b_row = lid / B_ROW_WORDS;

    var ra: array<vec4<u32>, A_PER>;
    var rb: array<vec4<u32>, B_PER>;
    for (var j = 0u; j < A_PER; j++) { ra[j] = fetch_a(a_w, row0, 0u, lid + j * WG); }
    for (var j = 0u; j < B_PER; j++) { rb[j] = gather_b(x_image, b_row + j * B_ROWS_A_PASS, oy0, ox0); }
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
            for (var j = 0u; j < B_PER; j++) {
                rb[j] = gather_b(x_image, k1 + b_row + j * B_ROWS_A_PASS, oy0, ox0);
            }
        }
        let a16 = sg_row / 16u;
        let b16 = sg_col / 16u;
        for (var ks = 0u; ks < BK / 16u; ks++) {
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
    finish(c00, image, gm, gn, sg, lane);
    if (SG_N > 1u) { finish(c01, image, gm, gn + 16u, sg, lane); }
    if (SG_N > 2u) {
        finish(c02, image, gm, gn + 32u, sg, lane);
        finish(c03, image, gm, gn + 48u, sg, lane);
    }
    if (SG_M > 1u) {
        finish(c10, image, gm + 16u, gn, sg, lane);
        if (SG_N > 1u) { finish(c11, image, gm + 16u, gn + 16u, sg, lane); }
        if (SG_N > 2u) {
            finish(c12, image, gm + 16u, gn + 32u, sg, lane);
            finish(c13, image, gm + 16u, gn + 48u, sg, lane);
        }
    }
    if (SG_M > 2u) {
        finish(c20, image, gm + 32u, gn, sg, lane);
        finish(c30, image, gm + 48u, gn, sg, lane);
        if (SG_N > 1u) {
            finish(c21, image, gm + 32u, gn + 16u, sg, lane);
            finish(c31, image, gm + 48u, gn + 16u, sg, lane);
        }
        if (SG_N > 2u) {
            finish(c22, image, gm + 32u, gn + 32u, sg, lane);
            finish(c23, image, gm + 32u, gn + 48u, sg, lane);
            finish(c32, image, gm + 48u, gn + 32u, sg, lane);
            finish(c33, image, gm + 48u, gn + 48u, sg, lane);
        }
    }
}
