// out = x converted between f32, f16, i32 and bool (or copied, same dtype);
// out is contiguous, x any strided view (shape / x_strides, ndim <= 8).
// Both buffers are read as u32 words: f16 element e is the low (e even) or
// high (e odd) half of word e / 2; f32, i32 and bool (0 or 1) elements are
// one word each. Every conversion is done on the bits, never through the
// GPU's float conversions: pack2x16float leaves values beyond the f16
// range indeterminate and does not promise round-to-nearest-even,
// unpack2x16float may flush subnormals, i32(f32) of NaN or out-of-range
// values is undefined and f32(i32) need not round to nearest even. Here:
// f -> i32 truncates toward zero, NaN -> 0, saturating; i32 -> f rounds
// to nearest even; x -> bool is x != 0 (NaN true, -0 false); bool -> 0/1.
// With an f16 output each thread writes one whole word (2 elements), so no
// two threads touch the same word; a last odd element keeps the other
// half of its word. With a 32-bit output each thread writes one element.
// Prelude constants: IN_KIND, OUT_KIND (0 f32, 1 f16, 2 i32, 3 bool), WG,
// then the f16_bits library (half_to_f32_bits, f32_bits_to_half).

struct Params {
    n: u32,          // elements of out
    ndim: u32,
    x_offset: u32,   // elements
    out_offset: u32, // elements; even for an f16 out
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

// The i32 (two's complement bits) nearest to the f32 with bits w, toward
// zero; NaN -> 0; |f| >= 2^31 saturates.
fn f32_bits_to_i32(w: u32) -> u32 {
    let a = w & 0x7fffffffu;
    let neg = (w >> 31u) == 1u;
    if (a > 0x7f800000u) {
        return 0u;
    }
    if (a >= 0x4f000000u) {
        return select(0x7fffffffu, 0x80000000u, neg);
    }
    let e = a >> 23u;
    if (e < 127u) {
        return 0u;
    }
    let m = (a & 0x7fffffu) | 0x800000u;
    let sh = e - 127u; // 0..30: the value is m * 2^(sh - 23)
    let q = select(m >> (23u - min(sh, 23u)), m << (max(sh, 23u) - 23u), sh >= 23u);
    return select(q, 0u - q, neg);
}

// The f32 bits nearest (ties to even) to the i32 with bits w.
fn i32_to_f32_bits(w: u32) -> u32 {
    let sign = w & 0x80000000u;
    let a = select(w, 0u - w, sign != 0u); // |i|; INT32_MIN stays 2^31
    if (a == 0u) {
        return 0u;
    }
    let e = 31u - countLeadingZeros(a); // position of the leading one
    var q: u32;
    if (e <= 23u) {
        q = a << (23u - e);
    } else {
        let sh = e - 23u;
        q = a >> sh;
        let rem = a & ((1u << sh) - 1u);
        let half = 1u << (sh - 1u);
        if (rem > half || (rem == half && (q & 1u) == 1u)) {
            q = q + 1u;
        }
    }
    // q is in [2^23, 2^24]; 2^24 (rounded up) carries into the exponent.
    return sign | (((e + 127u) << 23u) + (q - 0x800000u));
}

// Element e of x: f16 bits (IN_KIND 1) or its 32-bit word.
fn load(e: u32) -> u32 {
    if (IN_KIND == 1u) {
        return (x[e / 2u] >> ((e & 1u) * 16u)) & 0xffffu;
    }
    return x[e];
}

fn to_f32_bits(v: u32) -> u32 {
    switch IN_KIND {
        case 1u: { return half_to_f32_bits(v); }
        case 2u: { return i32_to_f32_bits(v); }
        case 3u: { return select(0u, 0x3f800000u, v != 0u); }
        default: { return v; }
    }
}

fn convert(v: u32) -> u32 {
    if (OUT_KIND == IN_KIND) {
        return v;
    }
    switch OUT_KIND {
        case 1u: {
            if (IN_KIND == 3u) {
                return select(0u, 0x3c00u, v != 0u);
            }
            return f32_bits_to_half(to_f32_bits(v));
        }
        case 2u: {
            if (IN_KIND == 3u) {
                return v;
            }
            return f32_bits_to_i32(to_f32_bits(v));
        }
        case 3u: {
            // Magnitude bits only: -0 is false, NaN true.
            let mask = select(0xffffffffu, select(0x7fffffffu, 0x7fffu, IN_KIND == 1u), IN_KIND <= 1u);
            return select(0u, 1u, (v & mask) != 0u);
        }
        default: { return to_f32_bits(v); }
    }
}

fn out_elem(i: u32) -> u32 {
    return convert(load(source(i)));
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let t = (wid.x + wid.y * nwg.x) * WG + lid;
    if (OUT_KIND == 1u) {
        let i = 2u * t;
        if (i >= p.n) {
            return;
        }
        let w = p.out_offset / 2u + t;
        let lo = out_elem(i);
        if (i + 1u < p.n) {
            out[w] = lo | (out_elem(i + 1u) << 16u);
        } else {
            out[w] = (out[w] & 0xffff0000u) | lo;
        }
        return;
    }
    if (t < p.n) {
        out[p.out_offset + t] = out_elem(t);
    }
}
