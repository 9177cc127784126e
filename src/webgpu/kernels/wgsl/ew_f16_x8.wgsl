// out = apply(a[, b]) on contiguous f16 tensors, 8 halves a thread's
// unit: every half is converted to f32 (f16_bits or f16_hw), the f32
// kernels' generated math runs on it, and the result is rounded back to
// nearest even, so this gives the bits of the path through f32 casts
// while moving a third of its bytes. a, b and out have out's shape and
// each starts at a 16-byte boundary; the unit is a vec4<u32> (16-byte
// accesses), and each thread handles VPT units, WG apart, loading all of
// them before it stores any. Halves of the last unit beyond n are written
// 0: out is a fresh tensor owning its buffer, whose size the pool rounds
// up to 16 bytes (so the reads beyond n stay inside a and b too).
// B_READ false: a binary op's b is the scalar whose f32 bits are p.p1, or
// a unary op has no b (the binding of a stands in). ew_f16_strided.wgsl
// takes every other layout.
// Prelude: WG, VPT, B_READ, `alias S / T / U / B / TO` (f32 lanes, T =
// vec4<f32>), `alias W = vec4<u32>;` and `fn apply2(u: T, v: T) -> TO` (the
// op's row; v unused by unary ops), then the f16_bits (or f16_hw),
// ew_float and ew_f16_io (parameters and bindings; offsets in units)
// libraries.

fn widen(w: vec4<u32>) -> array<vec4<f32>, 2> {
    return array<vec4<f32>, 2>(vec4<f32>(unpack_halves(w.x), unpack_halves(w.y)),
                               vec4<f32>(unpack_halves(w.z), unpack_halves(w.w)));
}

fn narrow(lo: vec4<f32>, hi: vec4<f32>) -> vec4<u32> {
    return vec4<u32>(pack_halves(lo.xy), pack_halves(lo.zw), pack_halves(hi.xy), pack_halves(hi.zw));
}

// Halves of unit i at element n and beyond set to 0.
fn clip(r: vec4<u32>, i: u32) -> vec4<u32> {
    let first = i * 8u;
    if (first + 8u <= p.n) {
        return r;
    }
    let e = vec4<u32>(first, first + 2u, first + 4u, first + 6u);
    let lo = select(vec4<u32>(0u), vec4<u32>(0xffffu), e < vec4<u32>(p.n));
    let hi = select(vec4<u32>(0u), vec4<u32>(0xffff0000u), e + vec4<u32>(1u) < vec4<u32>(p.n));
    return r & (lo | hi);
}

fn unit8(wa: vec4<u32>, wb: vec4<u32>) -> vec4<u32> {
    let x = widen(wa);
    var y = x;
    if (B_READ) {
        y = widen(wb);
    }
    return narrow(apply2(x[0], y[0]), apply2(x[1], y[1]));
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let first = (wid.x + wid.y * nwg.x) * (WG * VPT) + lid;
    var u: array<vec4<u32>, VPT>;
    var v: array<vec4<u32>, VPT>;
    for (var k = 0u; k < VPT; k = k + 1u) {
        let i = min(first + k * WG, p.units - 1u);
        u[k] = a[p.a_offset + i];
        if (B_READ) {
            v[k] = b[p.b_offset + i];
        }
    }
    for (var k = 0u; k < VPT; k = k + 1u) {
        let i = first + k * WG;
        if (i < p.units) {
            out[p.out_offset + i] = clip(unit8(u[k], v[k]), i);
        }
    }
}
