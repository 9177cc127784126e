// The first pass of clipping's per-gradient norms, up to six gradients a
// dispatch: the gradients are cut into chunks of p.chunk elements, one
// workgroup a chunk (gradient k's chunks are workgroups start_k ..
// start_k + its chunks - 1), and each workgroup's sum of squares goes to
// dst[workgroup] for grad_norms_finish to add up. Where every gradient is
// one chunk, the prelude's DIRECT writes the norm itself,
// dst[out_offset + k] = sqrt(sum), and no second pass is needed. Absent
// gradients have n 0 and a start past every workgroup, and are bound to
// scratch buffers never read. The prelude gives WG (a power of two) and
// DIRECT.

struct Params {
    n0: u32,
    n1: u32,
    n2: u32,
    n3: u32,
    n4: u32,
    n5: u32,
    offset0: u32,
    offset1: u32,
    offset2: u32,
    offset3: u32,
    offset4: u32,
    offset5: u32,
    start1: u32,
    start2: u32,
    start3: u32,
    start4: u32,
    start5: u32,
    groups: u32,
    chunk: u32,
    out_offset: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> x0: array<f32>;
@group(0) @binding(2) var<storage, read> x1: array<f32>;
@group(0) @binding(3) var<storage, read> x2: array<f32>;
@group(0) @binding(4) var<storage, read> x3: array<f32>;
@group(0) @binding(5) var<storage, read> x4: array<f32>;
@group(0) @binding(6) var<storage, read> x5: array<f32>;
@group(0) @binding(7) var<storage, read_write> dst: array<f32>;

var<workgroup> part: array<f32, WG>;

fn square(v: f32) -> f32 { return v * v; }

// Element i of gradient k, squared.
fn term(k: u32, i: u32) -> f32 {
    switch k {
        case 0u: { return square(x0[p.offset0 + i]); }
        case 1u: { return square(x1[p.offset1 + i]); }
        case 2u: { return square(x2[p.offset2 + i]); }
        case 3u: { return square(x3[p.offset3 + i]); }
        case 4u: { return square(x4[p.offset4 + i]); }
        default: { return square(x5[p.offset5 + i]); }
    }
}

fn count_of(k: u32) -> u32 {
    switch k {
        case 0u: { return p.n0; }
        case 1u: { return p.n1; }
        case 2u: { return p.n2; }
        case 3u: { return p.n3; }
        case 4u: { return p.n4; }
        default: { return p.n5; }
    }
}

fn start_of(k: u32) -> u32 {
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
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let w = wid.x + wid.y * nwg.x;
    if (w >= p.groups) { return; }
    // The gradient whose chunks hold w: starts grow with k.
    var k = 0u;
    for (var j = 1u; j < 6u; j++) {
        if (w >= start_of(j)) { k = j; }
    }
    let first = (w - start_of(k)) * p.chunk;
    let last = min(first + p.chunk, count_of(k));
    var acc = 0.0;
    for (var i = first + lid; i < last; i += WG) {
        acc += term(k, i);
    }
    part[lid] = acc;
    workgroupBarrier();
    for (var s = WG / 2u; s > 0u; s >>= 1u) {
        if (lid < s) { part[lid] += part[lid + s]; }
        workgroupBarrier();
    }
    if (lid == 0u) {
        if (DIRECT) {
            dst[p.out_offset + k] = sqrt(part[0]);
        } else {
            dst[w] = part[0];
        }
    }
}
