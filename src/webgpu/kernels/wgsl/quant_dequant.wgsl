// A quantised weight [N, K] to f32 (core/node.h DEQUANTIZE), one thread per
// element of out (contiguous, at the start of its binding).
// Prelude: WG, TYPE, Q8, BLOCK_BYTES; libraries f16_bits and
// quant_blocks.

struct Params {
    total: u32, k: u32, words: u32, w_offset: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> w: array<u32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let t = (wid.x + wid.y * nwg.x) * WG + lid;
    if (t >= p.total) {
        return;
    }
    let e = t % p.k;
    let row = p.w_offset + (t / p.k) * p.words;
    out[t] = weight_at(row, e);
}
