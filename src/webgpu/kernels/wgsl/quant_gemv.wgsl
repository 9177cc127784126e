// y [M, N] = x [M, K] @ W^T + bias with W quantised (core/node.h
// LINEAR_QUANT), the fused dequantise-GEMV for few rows of x (decode):
// one workgroup per output element; its threads take the row's blocks in
// turn (neighbours read neighbouring blocks), unpack each with bit
// operations and dot it with x, then sum in workgroup memory. The blocks
// are read straight from storage, never made dense.
// For Q8_0 and Q4_0 where x's offset is not a whole vec4 (else
// quant_gemv_rows.wgsl runs).
// Prelude: WG (a power of two), TYPE, Q8, BLOCK_BYTES, HAS_BIAS; libraries
// f16_bits and quant_blocks.

struct Params {
    m: u32, n: u32, k: u32, words: u32,
    x_offset: u32, w_offset: u32, b_offset: u32, pad0: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read> w: array<u32>;
@group(0) @binding(3) var<storage, read> bias: array<f32>;
@group(0) @binding(4) var<storage, read_write> out: array<f32>;

var<workgroup> partial: array<f32, WG>;

fn x4(i: u32) -> vec4<f32> {
    return vec4<f32>(x[i], x[i + 1u], x[i + 2u], x[i + 3u]);
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let g = wid.x + wid.y * nwg.x; // uniform across the workgroup
    if (g >= p.m * p.n) {
        return;
    }
    let r = g % p.n;
    let i = g / p.n;
    let row = p.w_offset + r * p.words;
    let xrow = p.x_offset + i * p.k;
    var acc = 0.0;
    for (var blk = lid; blk < p.k / 32u; blk += WG) {
        let xb = xrow + blk * 32u;
        var s = 0.0;
        if (Q8) {
            for (var q = 0u; q < 8u; q++) {
                s += dot(q8_quad(row, blk, q), x4(xb + 4u * q));
            }
        } else {
            for (var q = 0u; q < 4u; q++) {
                let v = quad_at(row, blk * BLOCK_BYTES + 2u + 4u * q);
                s += dot(q4_low(v), x4(xb + 4u * q)) + dot(q4_high(v), x4(xb + 16u + 4u * q));
            }
        }
        acc += s * block_scale(row, blk);
    }
    partial[lid] = acc;
    workgroupBarrier();
    for (var half = WG / 2u; half > 0u; half = half / 2u) {
        if (lid < half) {
            partial[lid] += partial[lid + half];
        }
        workgroupBarrier();
    }
    if (lid == 0u) {
        var y = partial[0];
        if (HAS_BIAS) {
            y += bias[p.b_offset + r];
        }
        out[i * p.n + r] = y;
    }
}
