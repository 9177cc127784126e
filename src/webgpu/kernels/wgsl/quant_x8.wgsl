// x [M, K] (K a multiple of 32, contiguous rows) rounded to 8 bits for
// quant_gemv_x8.wgsl, one thread a block of 32 elements: the scale
// d = max |x| / 127, the 32 values round(x / d) as int8 four a word (the
// element 4j + b in byte b of word j, words 0-3 then 4-7 as two vec4) and
// the block's own sum of x in f32 (for the formats' offsets and minimums,
// which then take x unrounded). Each value is off by at most d / 2.
// Prelude: none needed beyond the Params.

struct Params {
    m: u32, n: u32, k: u32, words: u32,
    x_offset: u32, w_offset: u32, b_offset: u32, pad0: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read_write> xq: array<vec4<u32>>;
@group(0) @binding(3) var<storage, read_write> xds: array<vec2<f32>>;

fn pack4(base: u32, inv: f32) -> u32 {
    var word = 0u;
    for (var b = 0u; b < 4u; b++) {
        let q = i32(clamp(round(x[base + b] * inv), -127.0, 127.0));
        word |= (bitcast<u32>(q) & 0xffu) << (8u * b);
    }
    return word;
}

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let per_row = p.k / 32u;
    let blk = (wid.x + wid.y * nwg.x) * 64u + lid;
    if (blk >= p.m * per_row) {
        return;
    }
    let base = p.x_offset + (blk / per_row) * p.k + (blk % per_row) * 32u;
    var amax = 0.0;
    var sum = 0.0;
    for (var j = 0u; j < 32u; j++) {
        let v = x[base + j];
        amax = max(amax, abs(v));
        sum += v;
    }
    let inv = select(0.0, 127.0 / amax, amax > 0.0);
    xq[2u * blk] = vec4<u32>(pack4(base, inv), pack4(base + 4u, inv), pack4(base + 8u, inv), pack4(base + 12u, inv));
    xq[2u * blk + 1u] = vec4<u32>(pack4(base + 16u, inv), pack4(base + 20u, inv), pack4(base + 24u, inv),
                                  pack4(base + 28u, inv));
    xds[blk] = vec2<f32>(amax / 127.0, sum);
}
