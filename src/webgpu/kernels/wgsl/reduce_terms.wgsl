// The combine of a reduction (OP: 0 add, 1 max, 2 min, 3 multiply) over
// elements of type T (f32 or i32; FLOAT says which), for scalars and
// vec4s, and fz. A library of reduce_rows.wgsl and reduce_strided.wgsl;
// the prelude gives T, T4, FLOAT, OP and the op's map, map4 and finish.

// Bit tests: unlike x != x, they survive compilers that assume no NaNs.
fn is_nan(a: T) -> bool {
    return FLOAT && (bitcast<u32>(a) & 0x7fffffffu) > 0x7f800000u;
}

fn is_nan4(a: T4) -> vec4<bool> {
    return ((bitcast<vec4<u32>>(a) & vec4<u32>(0x7fffffffu)) > vec4<u32>(0x7f800000u)) & vec4<bool>(FLOAT);
}

// s where finite, else 0 (logsumexp's shift).
fn fz(s: T) -> T {
    return select(T(0), s, (bitcast<u32>(s) & 0x7fffffffu) < 0x7f800000u || !FLOAT);
}

// WGSL's max and min may return the other operand when one is a NaN;
// NumPy's answer is NaN, which a + b gives.
fn combine(a: T, b: T) -> T {
    if (OP == 1u) { return select(max(a, b), a + b, is_nan(a) || is_nan(b)); }
    if (OP == 2u) { return select(min(a, b), a + b, is_nan(a) || is_nan(b)); }
    if (OP == 3u) { return a * b; }
    return a + b;
}

fn combine4(a: T4, b: T4) -> T4 {
    if (OP == 1u) { return select(max(a, b), a + b, is_nan4(a) | is_nan4(b)); }
    if (OP == 2u) { return select(min(a, b), a + b, is_nan4(a) | is_nan4(b)); }
    if (OP == 3u) { return a * b; }
    return a + b;
}
