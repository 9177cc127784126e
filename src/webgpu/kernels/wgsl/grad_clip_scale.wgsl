// Gradient clipping's scaling, in place, of up to three gradients in one
// dispatch (one thread per element of them all, in order): g *= min(1,
// max_norm / (norm + 1e-6)) with the global norm read on the device, so
// clipping never waits for it (the factor: the clip_factor library).
// Absent gradients have n 0 and are bound to scratch buffers never
// touched. The prelude gives WG.

struct Params {
    n0: u32,
    n1: u32,
    n2: u32,
    norm_offset: u32,
    offset0: u32,
    offset1: u32,
    offset2: u32,
    max_norm: f32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read_write> g0: array<f32>;
@group(0) @binding(2) var<storage, read_write> g1: array<f32>;
@group(0) @binding(3) var<storage, read_write> g2: array<f32>;
@group(0) @binding(4) var<storage, read> norm: array<f32>;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let i = (wid.x + wid.y * nwg.x) * WG + lid;
    if (i >= p.n0 + p.n1 + p.n2) { return; }
    let s = clip_factor_of(norm[p.norm_offset], p.max_norm);
    if (i < p.n0) {
        g0[p.offset0 + i] = g0[p.offset0 + i] * s;
    } else if (i < p.n0 + p.n1) {
        let j = i - p.n0;
        g1[p.offset1 + j] = g1[p.offset1 + j] * s;
    } else {
        let j = i - p.n0 - p.n1;
        g2[p.offset2 + j] = g2[p.offset2 + j] * s;
    }
}
