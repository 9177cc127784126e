// out[out_offset + i] = bits (a 32-bit word of any 4-byte dtype), walked in
// units of T (u32, or vec4<u32> when the offset is a multiple of 4): n whole units, then, when tail > 0, one
// last vec4 of which only the first tail lanes belong to out (the other
// lanes are read and written back unchanged).
// Each thread writes VPT units, WG apart, so that a warp's stores stay
// contiguous.
// Prelude constants: WG, VPT, `alias T / U = ...;` (both u32 or vec4<u32>)
// and LANES (U(0, 1, 2, 3)).

struct Params {
    n: u32,
    tail: u32,
    out_offset: u32,
    bits: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read_write> out: array<T>;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let first = (wid.x + wid.y * nwg.x) * (WG * VPT) + lid;
    let value = T(p.bits);
    for (var k = 0u; k < VPT; k = k + 1u) {
        let i = first + k * WG;
        if (i < p.n) {
            out[p.out_offset + i] = value;
        } else if (i == p.n && p.tail != 0u) {
            let keep = LANES >= U(p.tail);
            out[p.out_offset + i] = select(value, out[p.out_offset + i], keep);
        }
    }
}
