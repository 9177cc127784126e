// Helpers of the elementwise rows (src/core/ops.def) on i32 lanes: T is
// i32 or a vector of i32 (set by the prelude), with B the matching bool
// type. Every helper an op with i32 lanes uses in its WGSL expression has
// its float twin in ew_float.wgsl. Arithmetic wraps (two's complement),
// as WGSL defines for i32; division by zero and INT32_MIN / -1 are spelt
// out rather than left to WGSL's definitions.

fn wt_relu(v: T) -> T { return max(v, T(0)); }
fn wt_sign(v: T) -> T { return sign(v); }
fn wt_clamp(v: T, lo: T, hi: T) -> T { return min(max(v, lo), hi); }
fn wt_max(u: T, v: T) -> T { return max(u, v); }
fn wt_min(u: T, v: T) -> T { return min(u, v); }

// Python's // and %; v == 0 gives 0 (NumPy's result).
fn safe_divisor(v: T) -> T { return select(v, T(1), (v == T(0)) | (v == T(-1))); }
fn wt_floor_div(u: T, v: T) -> T {
    let d = safe_divisor(v);
    let q = u / d;
    let r = u - q * d;
    var res = select(q, q - T(1), (r != T(0)) & ((r < T(0)) != (d < T(0))));
    res = select(res, T(0) - u, v == T(-1));
    return select(res, T(0), v == T(0));
}
fn wt_remainder(u: T, v: T) -> T {
    let d = safe_divisor(v);
    let r = u - (u / d) * d;
    let res = select(r, r + d, (r != T(0)) & ((r < T(0)) != (d < T(0))));
    return select(res, T(0), (v == T(0)) | (v == T(-1)));
}

fn wt_eq(u: T, v: T) -> B { return u == v; }
fn wt_ne(u: T, v: T) -> B { return u != v; }
fn wt_lt(u: T, v: T) -> B { return u < v; }
fn wt_le(u: T, v: T) -> B { return u <= v; }
