// f16 matrix product on the matrix units (Dawn's experimental subgroup
// matrices): out[z] = act(a[z] @ b[z] + bias) with f16 operands, f32
// accumulation and an f16 result. The launch's prelude starts with
// `enable f16; enable chromium_experimental_subgroup_matrix;`.
//
// A workgroup is one subgroup of 32 invocations, computing an SG_M x SG_N
// grid of 16 x 16 result matrices, multiplied out 16 of k at a time from left
// and right 16 x 16 fragments loaded straight from the operands (a
// row-major, b row-major or, B_T, stored [n, k]: the linear layout, loaded
// column-major). The shapes must be whole tiles (M % BM, N % BN, K % 16
// all 0): no edge handling, since a fragment load has no bounds. The
// epilogue goes through workgroup memory, one 16 x 16 f32 block at a
// time, to add the bias, apply the activation and round to f16 pairs.
// One subgroup a workgroup because the subgroup-matrix builtins take only
// workgroup-uniform offsets (Dawn rejects `subgroupMatrixStore` at an
// offset derived from the local index: "requires argument 1 to be
// uniform"), so subgroups of one workgroup cannot address blocks of their
// own.
// Prelude constants: SG_M, SG_N, B_T, BIAS, ACT.
// Libraries: gemm_epilogue, f16_hw or f16_bits (pack_halves).

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
@group(0) @binding(1) var<storage, read> a: array<f16>;
@group(0) @binding(2) var<storage, read> b: array<f16>;
@group(0) @binding(3) var<storage, read_write> out: array<u32>;
@group(0) @binding(4) var<storage, read> bias: array<f16>;

const BM: u32 = 16u * SG_M;
const BN: u32 = 16u * SG_N;

var<workgroup> block: array<f32, 256>;

@compute @workgroup_size(32)
fn main(@builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let w = wid.x + wid.y * nwg.x;
    let tiles = p.tiles_m * p.tiles_n;
    if (w >= p.batch * tiles) { return; } // uniform
    let batch = w / tiles;
    let tile = w % tiles;
    let lane = lid;
    let row0 = (tile / p.tiles_n) * BM;
    let col0 = (tile % p.tiles_n) * BN;
    let a_base = p.a_offset + batch * p.a_batch_stride;
    let b_base = p.b_offset + batch * p.b_batch_stride;

    var acc: array<subgroup_matrix_result<f32, 16, 16>, SG_M * SG_N>;
    for (var k0 = 0u; k0 < p.k; k0 += 16u) {
        var l: array<subgroup_matrix_left<f16, 16, 16>, SG_M>;
        for (var i = 0u; i < SG_M; i++) {
            l[i] = subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>>(
                &a, a_base + (row0 + 16u * i) * p.lda + k0, false, p.lda);
        }
        for (var j = 0u; j < SG_N; j++) {
            var r: subgroup_matrix_right<f16, 16, 16>;
            if (B_T) {
                r = subgroupMatrixLoad<subgroup_matrix_right<f16, 16, 16>>(
                    &b, b_base + (col0 + 16u * j) * p.ldb + k0, true, p.ldb);
            } else {
                r = subgroupMatrixLoad<subgroup_matrix_right<f16, 16, 16>>(
                    &b, b_base + k0 * p.ldb + col0 + 16u * j, false, p.ldb);
            }
            for (var i = 0u; i < SG_M; i++) {
                acc[i * SG_N + j] = subgroupMatrixMultiplyAccumulate(l[i], r, acc[i * SG_N + j]);
            }
        }
    }

    // Lane t finishes row t / 2, columns (t % 2) * 8 .. + 8 of each block.
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
