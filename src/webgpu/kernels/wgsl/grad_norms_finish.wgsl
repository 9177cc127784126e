// The second pass of clipping's per-gradient norms: workgroup k adds up
// gradient k's chunk sums, partials[start_k .. start_(k+1) - 1] (the last
// gradient's end is p.end), and writes out[out_offset + k] = sqrt(sum).
// The prelude gives WG (a power of two).

struct Params {
    start1: u32,
    start2: u32,
    start3: u32,
    start4: u32,
    start5: u32,
    end: u32,
    count: u32,
    out_offset: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> partials: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;

var<workgroup> part: array<f32, WG>;

fn bound(k: u32) -> u32 {
    if (k >= p.count) { return p.end; }
    switch k {
        case 0u: { return 0u; }
        case 1u: { return p.start1; }
        case 2u: { return p.start2; }
        case 3u: { return p.start3; }
        case 4u: { return p.start4; }
        default: { return p.start5; }
    }
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let k = wid.x;
    if (k >= p.count) { return; }
    let last = bound(k + 1u);
    var acc = 0.0;
    for (var i = bound(k) + lid; i < last; i += WG) {
        acc += partials[i];
    }
    part[lid] = acc;
    workgroupBarrier();
    for (var s = WG / 2u; s > 0u; s >>= 1u) {
        if (lid < s) { part[lid] += part[lid + s]; }
        workgroupBarrier();
    }
    if (lid == 0u) {
        out[p.out_offset + k] = sqrt(part[0]);
    }
}
