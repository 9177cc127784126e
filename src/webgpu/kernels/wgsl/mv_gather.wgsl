// out (contiguous, index's shape, n elements) = x[..., index[i], ...] along
// axis AXIS (torch.gather); on the other axes position i of index reads
// position i of x. An index outside [0, extent) sets flag[0] = 1 and
// flag[1] = the index, and reads a clamped position (never out of bounds).
// Elements move as bits (library mv_words). x may hold only the part
// [base, base + count) of the axis (a tensor past one binding is gathered
// part by part): an element whose index falls outside the part keeps
// what out holds.
// Prelude constants: ELEM2 (bool), WG.

struct Params {
    n: u32,
    ndim: u32,
    axis: u32,
    x_offset: u32,
    idx_offset: u32,
    extent: u32,
    base: u32,
    count: u32,
    shape: array<vec4<u32>, 2>,
    x_strides: array<vec4<u32>, 2>,
    idx_strides: array<vec4<u32>, 2>,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> x: array<u32>;
@group(0) @binding(2) var<storage, read> idx: array<i32>;
@group(0) @binding(3) var<storage, read_write> out: array<u32>;
@group(0) @binding(4) var<storage, read_write> flag: array<atomic<u32>>;

fn value(i: u32) -> u32 {
    var rem = i;
    var e = p.x_offset;
    var ie = p.idx_offset;
    for (var d = p.ndim; d > 0u; d = d - 1u) {
        let a = d - 1u;
        let extent = p.shape[a / 4u][a % 4u];
        let o = rem % extent;
        rem = rem / extent;
        ie = ie + o * p.idx_strides[a / 4u][a % 4u];
        if (a != p.axis) {
            e = e + o * p.x_strides[a / 4u][a % 4u];
        }
    }
    let v = idx[ie];
    if (v < 0 || u32(v) >= p.extent) {
        atomicStore(&flag[1], bitcast<u32>(v));
        atomicOr(&flag[0], 1u);
        if (p.extent == 0u) {
            return 0u;
        }
    }
    let j = u32(clamp(v, 0, i32(p.extent) - 1));
    if (j < p.base || j - p.base >= p.count) {
        // Another part's element: the bits out holds (read before this
        // thread writes its word).
        if (ELEM2) {
            return (out[i / 2u] >> ((i & 1u) * 16u)) & 0xffffu;
        }
        return out[i];
    }
    return x_elem(e + (j - p.base) * p.x_strides[p.axis / 4u][p.axis % 4u]);
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    write_outputs((wid.x + wid.y * nwg.x) * WG + lid);
}
