// out[out_offset + i] = value for i < n.
// Prelude constants: WG (threads per workgroup).

struct Params {
    n: u32,
    out_offset: u32,
    value: f32,
    pad0: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read_write> out: array<f32>;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let i = (wid.x + wid.y * nwg.x) * WG + lid;
    if (i >= p.n) {
        return;
    }
    out[p.out_offset + i] = p.value;
}
