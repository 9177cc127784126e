// f16 matrix product on the matrix units with the operands staged in
// workgroup memory: out[z] = act(a[z] @ b[z] + bias) with f16 operands,
// f32 accumulation and an f16 result, as gemm_matrix.wgsl computes it, but
// each BM x BK slab of a and BK x BN slab of b is read from global memory
// once per workgroup (8-byte loads, every thread a share) instead of once
// per subgroup that needs it, and the fragments are loaded from workgroup
// memory. The next slab is read into registers while the current one is
// multiplied out (one barrier pair a slab).
//
// A workgroup is one subgroup (32 invocations: the builtins take only
// workgroup-uniform offsets, see gemm_matrix.wgsl) computing a BM x BN
// tile, an SG_M x SG_N grid of 16 x 16 results.
// Shapes must be whole tiles (M % BM, N % BN, K % BK all 0) and every
// offset and row stride a multiple of 4 halves (the 8-byte loads; the host
// asks for 8). Workgroup rows are padded by 8 halves, so that the 16 rows
// of a fragment do not start in the same memory bank.
// Prelude constants: SG_M, SG_N, BK (a multiple of 16), B_T,
// BIAS, ACT. Libraries: gemm_epilogue, an f16 library (pack_halves).

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
@group(0) @binding(1) var<storage, read> a: array<vec4<f16>>;
@group(0) @binding(2) var<storage, read> b: array<vec4<f16>>;
@group(0) @binding(3) var<storage, read_write> out: array<u32>;
@group(0) @binding(4) var<storage, read> bias: array<f16>;

const WG: u32 = 32u;
const BM: u32 = 16u * SG_M;
const BN: u32 = 16u * SG_N;
// Workgroup strides (halves): a's slab [BM][A_LD]; b's [BK][B_LD], or with
// B_T [BN][A_LD] (rows of k, like a's).
const A_LD: u32 = BK + 8u;
const B_LD: u32 = BN + 8u;
const A_VECS: u32 = BM * BK / 4u;
const B_VECS: u32 = BK * BN / 4u;
const A_PER: u32 = (A_VECS + WG - 1u) / WG;
const B_PER: u32 = (B_VECS + WG - 1u) / WG;
const B_ROWS: u32 = select(BK, BN, B_T);
const B_SLAB: u32 = select(BK * B_LD, BN * A_LD, B_T);

var<workgroup> sa: array<f16, BM * A_LD>;
var<workgroup> sb: array<f16, B_SLAB>;
var<workgroup> block: array<f32, 256>;

// The vec4 index i of a's slab at k0: row i / (BK / 4), its quarter-k i % (BK / 4).
fn a_index(base4: u32, row0: u32, k0: u32, i: u32) -> u32 {
    let r = i / (BK / 4u);
    let q = i % (BK / 4u);
    return base4 + (row0 + r) * (p.lda / 4u) + k0 / 4u + q;
}

fn b_index(base4: u32, col0: u32, k0: u32, i: u32) -> u32 {
    if (B_T) { // rows of b are columns of the product: [n][k]
        let r = i / (BK / 4u);
        let q = i % (BK / 4u);
        return base4 + (col0 + r) * (p.ldb / 4u) + k0 / 4u + q;
    }
    let r = i / (BN / 4u);
    let q = i % (BN / 4u);
    return base4 + (k0 + r) * (p.ldb / 4u) + col0 / 4u + q;
}

fn put_a(i: u32, v: vec4<f16>) {
    let r = i / (BK / 4u);
    let c = (i % (BK / 4u)) * 4u;
    let o = r * A_LD + c;
    sa[o] = v.x; sa[o + 1u] = v.y; sa[o + 2u] = v.z; sa[o + 3u] = v.w;
}

fn put_b(i: u32, v: vec4<f16>) {
    var o: u32;
    if (B_T) {
        o = (i / (BK / 4u)) * A_LD + (i % (BK / 4u)) * 4u;
    } else {
        o = (i / (BN / 4u)) * B_LD + (i % (BN / 4u)) * 4u;
    }
    sb[o] = v.x; sb[o + 1u] = v.y; sb[o + 2u] = v.z; sb[o + 3u] = v.w;
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
    let lane = lid;
    let tile_row = (tile / p.tiles_n) * BM;
    let tile_col = (tile % p.tiles_n) * BN;
    let a4 = (p.a_offset + batch * p.a_batch_stride) / 4u;
    let b4 = (p.b_offset + batch * p.b_batch_stride) / 4u;

    var ra: array<vec4<f16>, A_PER>;
    var rb: array<vec4<f16>, B_PER>;
    for (var j = 0u; j < A_PER; j++) {
        let i = lid + j * WG;
        if (i < A_VECS) { ra[j] = a[a_index(a4, tile_row, 0u, i)]; }
    }
    for (var j = 0u; j < B_PER; j++) {
        let i = lid + j * WG;
        if (i < B_VECS) { rb[j] = b[b_index(b4, tile_col, 0u, i)]; }
    }

    var acc: array<subgroup_matrix_result<f32, 16, 16>, SG_M * SG_N>;
    for (var k0 = 0u; k0 < p.k; k0 += BK) {
        workgroupBarrier(); // the previous slab's fragments are loaded
        for (var j = 0u; j < A_PER; j++) {
            let i = lid + j * WG;
            if (i < A_VECS) { put_a(i, ra[j]); }
        }
        for (var j = 0u; j < B_PER; j++) {
            let i = lid + j * WG;
            if (i < B_VECS) { put_b(i, rb[j]); }
        }
        workgroupBarrier();
        let next = k0 + BK;
        if (next < p.k) { // uniform
            for (var j = 0u; j < A_PER; j++) {
                let i = lid + j * WG;
                if (i < A_VECS) { ra[j] = a[a_index(a4, tile_row, next, i)]; }
            }
            for (var j = 0u; j < B_PER; j++) {
                let i = lid + j * WG;
                if (i < B_VECS) { rb[j] = b[b_index(b4, tile_col, next, i)]; }
            }
        }
        for (var kk = 0u; kk < BK; kk += 16u) {
            var l: array<subgroup_matrix_left<f16, 16, 16>, SG_M>;
            for (var i = 0u; i < SG_M; i++) {
                l[i] = subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>>(
                    &sa, 16u * i * A_LD + kk, false, A_LD);
            }
            for (var j = 0u; j < SG_N; j++) {
                var r: subgroup_matrix_right<f16, 16, 16>;
                if (B_T) {
                    r = subgroupMatrixLoad<subgroup_matrix_right<f16, 16, 16>>(
                        &sb, 16u * j * A_LD + kk, true, A_LD);
                } else {
                    r = subgroupMatrixLoad<subgroup_matrix_right<f16, 16, 16>>(
                        &sb, kk * B_LD + 16u * j, false, B_LD);
                }
                for (var i = 0u; i < SG_M; i++) {
                    acc[i * SG_N + j] = subgroupMatrixMultiplyAccumulate(l[i], r, acc[i * SG_N + j]);
                }
            }
        }
    }

    // Lane t finishes row t / 2, columns (t % 2) * 8 .. + 8 of each block.
    let row0 = tile_row;
    let col0 = tile_col;
    let r_in = lane / 2u;
    let c_in = (lane % 2u) * 8u;
    for (var x = 0u; x < SG_M * SG_N; x++) {
        subgroupMatrixStore(&block, 0u, acc[x], false, 16u);
        workgroupBarrier();
        let gm = row0 + (x / SG_N) * 16u + r_in;
        let gn = col0 + (x % SG_N) * 16u + c_in;
        let o = p.out_offset + (batch * p.m + gm) * p.n + gn; // even
        for (var c = 0u; c < 8u; c += 2u) {
            var v = vec2<f32>(block[r_in * 16u + c_in + c], block[r_in * 16u + c_in + c + 1u]);
            if (BIAS) {
                v += vec2<f32>(f32(bias[p.bias_offset + gn + c]), f32(bias[p.bias_offset + gn + c + 1u]));
            }
            out[(o + c) / 2u] = pack_halves(vec2<f32>(activate(v.x), activate(v.y)));
        }
        workgroupBarrier();
    }
}
