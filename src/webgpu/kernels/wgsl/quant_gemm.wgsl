// y [M, N] = x [M, K] @ W^T + bias with W quantised (core/node.h
// LINEAR_QUANT), the tiled dequantise-GEMM for many rows of x (prefill):
// a workgroup of 16 x 16 threads computes a 16 x 16 tile of y; for each
// 32 elements of K it stages 16 rows of x and the 16 dequantised weight
// rows (each thread unpacks elements j and j + 16 of one row's 32) in
// workgroup memory.
// Prelude: TYPE, Q8, BLOCK_BYTES, HAS_BIAS; libraries f16_bits
// and quant_blocks.

struct Params {
    m: u32, n: u32, k: u32, words: u32,
    x_offset: u32, w_offset: u32, b_offset: u32, pad0: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read> w: array<u32>;
@group(0) @binding(3) var<storage, read> bias: array<f32>;
@group(0) @binding(4) var<storage, read_write> out: array<f32>;

const TILE: u32 = 16u;
var<workgroup> xs: array<f32, 512>; // [TILE rows of x][32]
var<workgroup> ws: array<f32, 512>; // [TILE rows of W][32]

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let tiles_n = (p.n + TILE - 1u) / TILE;
    let tile = wid.x + wid.y * nwg.x; // uniform across the workgroup
    if (tile >= tiles_n * ((p.m + TILE - 1u) / TILE)) {
        return;
    }
    let m0 = (tile / tiles_n) * TILE;
    let n0 = (tile % tiles_n) * TILE;
    let ty = lid / TILE;
    let tx = lid % TILE;
    let xi = m0 + ty;             // the x row this thread stages
    let wr = n0 + ty;             // the W row this thread unpacks
    let row = p.w_offset + wr * p.words;
    var acc = 0.0;
    for (var blk = 0u; blk < p.k / 32u; blk++) {
        var x0 = 0.0;
        var x1 = 0.0;
        if (xi < p.m) {
            let xb = p.x_offset + xi * p.k + blk * 32u;
            x0 = x[xb + tx];
            x1 = x[xb + tx + 16u];
        }
        xs[ty * 32u + tx] = x0;
        xs[ty * 32u + tx + 16u] = x1;
        var w0 = 0.0;
        var w1 = 0.0;
        if (wr < p.n) {
            w0 = weight_at(row, blk * 32u + tx);
            w1 = weight_at(row, blk * 32u + tx + 16u);
        }
        ws[ty * 32u + tx] = w0;
        ws[ty * 32u + tx + 16u] = w1;
        workgroupBarrier();
        for (var j = 0u; j < 32u; j++) {
            acc += xs[ty * 32u + j] * ws[tx * 32u + j];
        }
        workgroupBarrier();
    }
    let oi = m0 + ty;
    let on = n0 + tx;
    if (oi < p.m && on < p.n) {
        var y = acc;
        if (HAS_BIAS) {
            y += bias[p.b_offset + on];
        }
        out[oi * p.n + on] = y;
    }
}
