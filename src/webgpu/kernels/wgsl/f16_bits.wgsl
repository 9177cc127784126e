// f16 <-> f32 on the bits, a library prepended to the shaders that read or
// write f16 (u32 words, two halves each). pack2x16float leaves values
// beyond the f16 range indeterminate and does not promise
// round-to-nearest-even, and unpack2x16float may flush subnormals; these
// convert every value (subnormals, inf, NaN) exactly.

// The same as a value, without branches: half_to_f32_bits branches per
// value, which keeps the compiler from overlapping a GEMV's next loads
// with the last value's arithmetic. A normal half's bits moved to f32's
// places with the exponent rebased, a subnormal (or zero) as its integer
// mantissa times 2^-24, inf and NaN with f32's exponent.
fn half_to_f32(h: u32) -> f32 {
    let mag = h & 0x7fffu;
    let e = mag >> 10u;
    let normal = (mag << 13u) + 0x38000000u;
    let sub = bitcast<u32>(f32(mag) * 5.9604644775390625e-8);
    let special = (mag << 13u) | 0x7f800000u;
    let bits = select(select(normal, sub, e == 0u), special, e == 31u);
    return bitcast<f32>(bits | ((h & 0x8000u) << 16u));
}

fn half_to_f32_bits(h: u32) -> u32 {
    let sign = (h & 0x8000u) << 16u;
    let e = (h >> 10u) & 0x1fu;
    let m = h & 0x3ffu;
    if (e == 0x1fu) {
        return sign | 0x7f800000u | (m << 13u);
    }
    if (e != 0u) {
        return sign | ((e + 112u) << 23u) | (m << 13u);
    }
    if (m == 0u) {
        return sign;
    }
    // Subnormal: the leading one moves to bit 10.
    let s = countLeadingZeros(m) - 21u;
    return sign | ((113u - s) << 23u) | (((m << s) & 0x3ffu) << 13u);
}

// Round to nearest even; beyond 65504 to inf; NaN stays NaN.
fn f32_bits_to_half(v: u32) -> u32 {
    let sign = (v >> 16u) & 0x8000u;
    let a = v & 0x7fffffffu;
    if (a > 0x7f800000u) {
        let m = (a >> 13u) & 0x3ffu;
        return sign | 0x7c00u | select(0x200u, m, m != 0u);
    }
    if (a >= 0x477ff000u) {
        return sign | 0x7c00u;
    }
    if (a >= 0x38800000u) {
        var r = a - 0x38000000u;
        r = r + 0xfffu + ((r >> 13u) & 1u);
        return sign | (r >> 13u);
    }
    let shift = 126u - (a >> 23u);
    if (shift > 24u) {
        return sign;
    }
    let m = (a & 0x7fffffu) | 0x800000u;
    var q = m >> shift;
    let rem = m & ((1u << shift) - 1u);
    let half = 1u << (shift - 1u);
    if (rem > half || (rem == half && (q & 1u) == 1u)) {
        q = q + 1u;
    }
    return sign | q;
}

// The two halves of a word as f32 (low half in x).
fn unpack_halves(w: u32) -> vec2<f32> {
    return vec2<f32>(bitcast<f32>(half_to_f32_bits(w & 0xffffu)),
                     bitcast<f32>(half_to_f32_bits(w >> 16u)));
}

// Two f32 rounded to f16 in one word (x in the low half).
fn pack_halves(v: vec2<f32>) -> u32 {
    return f32_bits_to_half(bitcast<u32>(v.x)) | (f32_bits_to_half(bitcast<u32>(v.y)) << 16u);
}
