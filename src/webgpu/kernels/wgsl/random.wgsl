// Philox4x32-10 random numbers (see src/core/philox.h): thread g computes
// block first_block + g (counter (first_block + g, 0, 0, 0), key (key0,
// key1)) and writes elements 4g .. 4g + 3 below n of out (a tensor past
// one binding is made in parts that start at first_block). Integer arithmetic only, so every GPU gives the
// CPU's bits. Prelude: KIND (0 uniform, 1 normal, 2 dropout), WG.

struct Params {
    n: u32,
    key0: u32,
    key1: u32,
    shift: u32,      // uniform: 32 - bits
    unit: f32,       // uniform: 2^-bits
    p: f32,          // dropout
    scale: f32,      // dropout
    x_offset: u32,   // dropout
    out_offset: u32,
    first_block: u32,
    pad1: u32,
    pad2: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read_write> out: array<f32>;
@group(0) @binding(2) var<storage, read> table: array<i32>; // normal: the quantile table
@group(0) @binding(3) var<storage, read> x: array<f32>;     // dropout: the input

// The 64-bit product a * b as (high word, low word), from 16-bit halves.
fn mulhilo(a: u32, b: u32) -> vec2<u32> {
    let a0 = a & 0xffffu;
    let a1 = a >> 16u;
    let b0 = b & 0xffffu;
    let b1 = b >> 16u;
    let p00 = a0 * b0;
    let p01 = a0 * b1;
    let p10 = a1 * b0;
    let mid = (p00 >> 16u) + (p01 & 0xffffu) + (p10 & 0xffffu);
    let hi = a1 * b1 + (p01 >> 16u) + (p10 >> 16u) + (mid >> 16u);
    return vec2<u32>(hi, a * b);
}

fn philox(ctr: vec4<u32>, key: vec2<u32>) -> vec4<u32> {
    var c = ctr;
    var k = key;
    for (var round = 0u; round < 10u; round++) {
        let m0 = mulhilo(0xD2511F53u, c.x);
        let m1 = mulhilo(0xCD9E8D57u, c.z);
        c = vec4<u32>(m1.x ^ c.y ^ k.x, m1.y, m0.x ^ c.w ^ k.y, m0.y);
        k = k + vec2<u32>(0x9E3779B9u, 0xBB67AE85u);
    }
    return c;
}

// The table-driven inverse normal CDF of core/philox.c, step for step.
fn normal(u: u32) -> f32 {
    let neg = (u >> 31u) != 0u;
    let x = select(u & 0x7fffffffu, ~u & 0x7fffffffu, neg);
    var z: i32;
    if (x < 256u) {
        z = table[x];
    } else {
        let e = 31u - countLeadingZeros(x);
        let rel = x - (1u << e);
        let sh = e - 8u;
        let j = rel >> sh;
        let f = rel & ((1u << sh) - 1u);
        var f15: u32;
        if (sh >= 15u) { f15 = f >> (sh - 15u); } else { f15 = f << (15u - sh); }
        let base = 256u + (e - 8u) * 256u + j;
        let diff = u32(table[base + 1u] - table[base]);
        z = table[base] + i32((diff * f15) >> 15u);
    }
    if (neg) { z = -z; }
    return f32(z) * (1.0 / 2097152.0);
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let g = (wid.x + wid.y * nwg.x) * WG + lid;
    if (g * 4u >= p.n) { return; }
    let w = philox(vec4<u32>(p.first_block + g, 0u, 0u, 0u), vec2<u32>(p.key0, p.key1));
    for (var k = 0u; k < 4u; k++) {
        let i = g * 4u + k;
        if (i >= p.n) { break; }
        var v: f32;
        if (KIND == 0u) {
            v = f32(w[k] >> p.shift) * p.unit;
        } else if (KIND == 1u) {
            v = normal(w[k]);
        } else {
            let u = f32(w[k] >> 8u) * (1.0 / 16777216.0);
            v = select(x[p.x_offset + i] * p.scale, 0.0, u < p.p);
        }
        out[p.out_offset + i] = v;
    }
}
