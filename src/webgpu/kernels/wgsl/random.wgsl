// Philox4x32-10 random numbers (see src/core/philox.h): thread g computes
// block first_block + g (counter (first_block + g, 0, 0, 0), key (key0,
// key1)) and writes elements 4g .. 4g + 3 below n of out (a tensor past
// one binding is made in parts that start at first_block). Integer arithmetic only, so every GPU gives the
// CPU's bits. Prelude: KIND (0 uniform, 1 normal, 2 dropout), WG; library philox.

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
