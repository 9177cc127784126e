// out = x converted between f32 and f16 (or copied, same dtype); out is
// contiguous, x any strided view (shape / x_strides, ndim <= 8).
// Both buffers are read as u32 words: f16 element e is the low (e even) or
// high (e odd) half of word e / 2. The conversions are done on the bits:
// pack2x16float leaves values beyond the f16 range indeterminate and does
// not promise round-to-nearest-even, and unpack2x16float may flush
// subnormals; here every value (subnormals, inf, NaN) converts exactly.
// With an f16 output each thread writes one whole word (2 elements), so no
// two threads touch the same word; a last odd element keeps the other
// half of its word. With an f32 output each thread writes one element.
// Prelude constants: IN_F16, OUT_F16 (bool), WG, then the f16_bits
// library (half_to_f32_bits, f32_bits_to_half).

struct Params {
    n: u32,          // elements of out
    ndim: u32,
    x_offset: u32,   // elements
    out_offset: u32, // elements; even when OUT_F16
    shape: array<vec4<u32>, 2>,     // uniform arrays need 16-byte elements
    x_strides: array<vec4<u32>, 2>,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> x: array<u32>;
@group(0) @binding(2) var<storage, read_write> out: array<u32>;

// Element of x behind row-major position i of out.
fn source(i: u32) -> u32 {
    var rem = i;
    var src = p.x_offset;
    for (var d = p.ndim; d > 0u; d = d - 1u) {
        let axis = d - 1u;
        let extent = p.shape[axis / 4u][axis % 4u];
        src = src + (rem % extent) * p.x_strides[axis / 4u][axis % 4u];
        rem = rem / extent;
    }
    return src;
}

fn half_at(e: u32) -> u32 {
    return (x[e / 2u] >> ((e & 1u) * 16u)) & 0xffffu;
}

// Position i of out as f16 bits.
fn out_half(i: u32) -> u32 {
    let e = source(i);
    if (IN_F16) {
        return half_at(e);
    }
    return f32_bits_to_half(x[e]);
}

// Position i of out as f32 bits.
fn out_f32(i: u32) -> u32 {
    let e = source(i);
    if (IN_F16) {
        return half_to_f32_bits(half_at(e));
    }
    return x[e];
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let t = (wid.x + wid.y * nwg.x) * WG + lid;
    if (OUT_F16) {
        let i = 2u * t;
        if (i >= p.n) {
            return;
        }
        let w = p.out_offset / 2u + t;
        let lo = out_half(i);
        if (i + 1u < p.n) {
            out[w] = lo | (out_half(i + 1u) << 16u);
        } else {
            out[w] = (out[w] & 0xffff0000u) | lo;
        }
        return;
    }
    if (t < p.n) {
        out[p.out_offset + t] = out_f32(t);
    }
}
