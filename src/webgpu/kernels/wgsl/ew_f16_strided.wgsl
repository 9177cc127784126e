// out = apply(a[, b]) on f16 tensors of any layout (broadcast axes of
// stride 0, transposed or sliced views; ndim <= 8 after merging), computed
// in f32 like ew_f16_x8.wgsl. A thread's unit is one word of out (2
// halves); each half's element of a and b is decoded from the strides and
// read out of its word. The upper half of a last word beyond n is
// written 0 (out owns its buffer).
// Prelude as ew_f16_x8.wgsl's, with T = vec2<f32> and W = u32; libraries
// as its, a and b offsets in elements, and ew_strided_index.

fn half_of(w: u32, e: u32) -> u32 {
    return (w >> ((e & 1u) * 16u)) & 0xffffu;
}

fn unit2(t: u32) -> u32 {
    let e0 = 2u * t;
    let e1 = min(e0 + 1u, p.n - 1u); // a second half beyond n repeats the first
    let s0 = strided_sources(e0);
    let s1 = strided_sources(e1);
    let wa = half_of(a[s0.x / 2u], s0.x) | (half_of(a[s1.x / 2u], s1.x) << 16u);
    let x = unpack_halves(wa);
    var y = x;
    if (B_READ) {
        y = unpack_halves(half_of(b[s0.y / 2u], s0.y) | (half_of(b[s1.y / 2u], s1.y) << 16u));
    }
    let r = pack_halves(apply2(x, y));
    return select(r, r & 0xffffu, e0 + 1u >= p.n);
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let first = (wid.x + wid.y * nwg.x) * (WG * VPT) + lid;
    for (var k = 0u; k < VPT; k = k + 1u) {
        let t = first + k * WG;
        if (t < p.units) {
            out[p.out_offset + t] = unit2(t);
        }
    }
}
