// Checks the GPU's pack2x16float / unpack2x16float against the exact
// routines of f16_bits.wgsl (prepended). Thread h takes the half with bits
// h: unpacking it, and packing its exact f32 value, the midpoint to the
// next half up in magnitude (a tie) and the floats one ulp either side of
// that midpoint. Thread 0 also packs values around the overflow threshold.
// flags[h] is 0 when every result matched (any NaN matches any NaN).
// Prelude constants: WG.

@group(0) @binding(0) var<uniform> p: vec4<u32>; // unused: the runtime binds params
@group(0) @binding(1) var<storage, read_write> flags: array<u32>;

fn is_nan32(b: u32) -> bool { return (b & 0x7fffffffu) > 0x7f800000u; }
fn is_nan16(b: u32) -> bool { return (b & 0x7fffu) > 0x7c00u; }

fn packs_exactly(bits: u32) -> bool {
    let hw = pack2x16float(vec2<f32>(bitcast<f32>(bits), 0.0)) & 0xffffu;
    let ex = f32_bits_to_half(bits);
    return hw == ex || (is_nan16(hw) && is_nan16(ex));
}

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>) {
    let h = gid.x + gid.y * nwg.x * WG;
    if (h >= 65536u) {
        return;
    }
    var flag = 0u;
    let hw = bitcast<u32>(unpack2x16float(h).x);
    let ex = half_to_f32_bits(h);
    if (!(hw == ex || (is_nan32(hw) && is_nan32(ex)))) {
        flag = flag | 1u;
    }
    if (!packs_exactly(ex)) {
        flag = flag | 2u;
    }
    // Below the largest finite half (0x7bff): the tie to the next one.
    if ((h & 0x7fffu) < 0x7bffu) {
        let next = half_to_f32_bits(h + 1u);
        let mid = bitcast<u32>((bitcast<f32>(ex) + bitcast<f32>(next)) * 0.5);
        if (!packs_exactly(mid) || !packs_exactly(mid + 1u) || !packs_exactly(mid - 1u)) {
            flag = flag | 4u;
        }
    }
    if (h == 0u) {
        // 65504 is the largest half; from 65520 up everything rounds to inf.
        let edges = array<u32, 8>(0x477fefffu, 0x477ff000u, 0x477ff001u, 0x47800000u,
                                  0x7f7fffffu, 0x7f800000u, 0xc77ff000u, 0xff800000u);
        for (var i = 0u; i < 8u; i = i + 1u) {
            if (!packs_exactly(edges[i])) {
                flag = flag | 8u;
            }
        }
    }
    flags[h] = flag;
}
