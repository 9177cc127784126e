// out[..., index[i], ...] += src[i] along axis (torch.scatter_add) for the
// n positions of index (src read at the same positions, its own strides).
// Additions are atomic: i32 with atomicAdd (wraps), f32 and f16 with
// compare-and-swap loops on the u32 word (f16: the element's half of it,
// the sum rounded to f16), so concurrent additions to one element are
// never lost; their order, and so float rounding, varies between runs.
// An index outside [0, extent) sets flag[0] = 1 and flag[1] = the index
// and adds nothing. out may hold only the part [base, base + count) of
// the axis (an out past one binding is added to part by part): an index
// outside the part adds nothing here.
// Prelude constants: KIND (0 f32, 1 f16, 2 i32), WG; library f16_bits.

struct Params {
    n: u32,
    ndim: u32,
    axis: u32,
    out_offset: u32,
    idx_offset: u32,
    src_offset: u32,
    extent: u32,
    base: u32,
    count: u32,
    pad0: u32,
    pad1: u32,
    pad2: u32,
    shape: array<vec4<u32>, 2>,
    out_strides: array<vec4<u32>, 2>,
    idx_strides: array<vec4<u32>, 2>,
    src_strides: array<vec4<u32>, 2>,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> idx: array<i32>;
@group(0) @binding(2) var<storage, read> src: array<u32>;
@group(0) @binding(3) var<storage, read_write> out: array<atomic<u32>>;
@group(0) @binding(4) var<storage, read_write> flag: array<atomic<u32>>;

fn half_sum(a: u32, b: u32) -> u32 {
    let s = bitcast<f32>(half_to_f32_bits(a)) + bitcast<f32>(half_to_f32_bits(b));
    return f32_bits_to_half(bitcast<u32>(s));
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let t = (wid.x + wid.y * nwg.x) * WG + lid;
    if (t >= p.n) {
        return;
    }
    var rem = t;
    var e = p.out_offset;
    var ie = p.idx_offset;
    var se = p.src_offset;
    for (var d = p.ndim; d > 0u; d = d - 1u) {
        let a = d - 1u;
        let extent = p.shape[a / 4u][a % 4u];
        let o = rem % extent;
        rem = rem / extent;
        ie = ie + o * p.idx_strides[a / 4u][a % 4u];
        se = se + o * p.src_strides[a / 4u][a % 4u];
        if (a != p.axis) {
            e = e + o * p.out_strides[a / 4u][a % 4u];
        }
    }
    let v = idx[ie];
    if (v < 0 || u32(v) >= p.extent) {
        atomicStore(&flag[1], bitcast<u32>(v));
        atomicOr(&flag[0], 1u);
        return;
    }
    let j = u32(v);
    if (j < p.base || j - p.base >= p.count) {
        return;
    }
    e = e + (j - p.base) * p.out_strides[p.axis / 4u][p.axis % 4u];
    if (KIND == 2u) {
        atomicAdd(&out[e], src[se]);
        return;
    }
    if (KIND == 0u) {
        var old = atomicLoad(&out[e]);
        loop {
            let next = bitcast<u32>(bitcast<f32>(old) + bitcast<f32>(src[se]));
            let r = atomicCompareExchangeWeak(&out[e], old, next);
            if (r.exchanged) {
                break;
            }
            old = r.old_value;
        }
        return;
    }
    let sv = (src[se / 2u] >> ((se & 1u) * 16u)) & 0xffffu;
    let sh = (e & 1u) * 16u;
    var old = atomicLoad(&out[e / 2u]);
    loop {
        let h = half_sum((old >> sh) & 0xffffu, sv);
        let next = (old & ~(0xffffu << sh)) | (h << sh);
        let r = atomicCompareExchangeWeak(&out[e / 2u], old, next);
        if (r.exchanged) {
            break;
        }
        old = r.old_value;
    }
}
