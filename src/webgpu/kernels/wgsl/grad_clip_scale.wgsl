// Gradient clipping's scaling, in place, one thread per element: g *=
// min(1, max_norm / (norm + 1e-6)) with the global norm read on the
// device, so clipping never waits for it. A NaN factor stays NaN (WGSL's
// min may drop it), as PyTorch's clamp keeps it. The prelude gives WG.

struct Params {
    n: u32,
    g_offset: u32,
    norm_offset: u32,
    max_norm: f32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read_write> g: array<f32>;
@group(0) @binding(2) var<storage, read> norm: array<f32>;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let i = (wid.x + wid.y * nwg.x) * WG + lid;
    if (i >= p.n) { return; }
    let q = p.max_norm / (norm[p.norm_offset] + 1e-6);
    let q_is_nan = (bitcast<u32>(q) & 0x7fffffffu) > 0x7f800000u;
    let s = select(min(q, 1.0), q, q_is_nan);
    g[p.g_offset + i] = g[p.g_offset + i] * s;
}
