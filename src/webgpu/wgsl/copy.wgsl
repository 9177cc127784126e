// Strided gather into a contiguous output: out[out_offset + i] is the
// element of x at row-major index i of shape, i.e.
// x[x_offset + sum_d coord_d * x_strides[d]] (ndim <= 8, already coalesced).
// Prelude constants: WG (threads per workgroup).

struct Params {
    n: u32,
    ndim: u32,
    x_offset: u32,
    out_offset: u32,
    shape: array<vec4<u32>, 2>,     // uniform arrays need 16-byte elements
    x_strides: array<vec4<u32>, 2>,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let i = (wid.x + wid.y * nwg.x) * WG + lid;
    if (i >= p.n) {
        return;
    }
    var rem = i;
    var src = p.x_offset;
    for (var d = p.ndim; d > 0u; d = d - 1u) {
        let axis = d - 1u;
        let extent = p.shape[axis / 4u][axis % 4u];
        src = src + (rem % extent) * p.x_strides[axis / 4u][axis % 4u];
        rem = rem / extent;
    }
    out[p.out_offset + i] = x[src];
}
