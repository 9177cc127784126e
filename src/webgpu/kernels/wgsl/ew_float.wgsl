// Helpers of the elementwise rows (src/core/ops.def) on float lanes: T is
// f32 or a vector of f32, with U / B the matching u32 / bool types (set by
// the prelude). Special values are spelt out: WGSL leaves NaN, infinity
// and many domain edges of its built-ins indeterminate, and compilers may
// fold `v != v` to false, so NaN is tested on the bits.

// Built at run time: a constant NaN or infinity is a shader compile error.
fn from_bits(bits: u32) -> T {
    var b = bits;
    return T(bitcast<f32>(b));
}

fn wt_nan() -> T { return from_bits(0x7fc00000u); }
fn wt_inf() -> T { return from_bits(0x7f800000u); }
fn is_nan(v: T) -> B { return (bitcast<U>(v) & U(0x7fffffffu)) > U(0x7f800000u); }
fn is_inf(v: T) -> B { return (bitcast<U>(v) & U(0x7fffffffu)) == U(0x7f800000u); }
fn sign_bit(v: T) -> B { return (bitcast<U>(v) & U(0x80000000u)) != U(0u); }
// |m| with the sign of s.
fn with_sign(m: T, s: T) -> T {
    return bitcast<T>((bitcast<U>(m) & U(0x7fffffffu)) | (bitcast<U>(s) & U(0x80000000u)));
}
fn keep_nan(r: T, v: T) -> T { return select(r, v, is_nan(v)); }

fn wt_exp(v: T) -> T { return keep_nan(exp(v), v); }
fn wt_exp2(v: T) -> T { return keep_nan(exp2(v), v); }

// log and log2 are indeterminate for v <= 0: spell out -inf / NaN.
fn log_edges(r: T, v: T) -> T {
    let zero = T(0.0);
    return keep_nan(select(select(r, -wt_inf(), v == zero), wt_nan(), v < zero), v);
}
// Below the smallest normal, lavapipe's log reads a subnormal's exponent as
// the minimum (log(1e-40) = -88.0, not -92.1): scale by 2^23 into the normal
// range first. A GPU that flushes subnormals sees v == 0 and gives -inf.
fn is_tiny(v: T) -> B { return (v > T(0.0)) & (v < T(1.17549435e-38)); }
fn wt_log(v: T) -> T {
    return log_edges(select(log(v), log(v * 8388608.0) - 15.942385, is_tiny(v)), v);
}
fn wt_log2(v: T) -> T {
    return log_edges(select(log2(v), log2(v * 8388608.0) - 23.0, is_tiny(v)), v);
}

fn wt_sqrt(v: T) -> T { return select(sqrt(v), wt_nan(), v < T(0.0)); }

// Negative by the bits, not by v < 0: a GPU that flushes subnormals (NVIDIA)
// compares -1e-45 < 0 as false, and relu must still give 0. -0 and NaN stay.
fn wt_relu(v: T) -> T {
    let b = bitcast<U>(v);
    let negative = ((b & U(0x80000000u)) != U(0u)) & ((b & U(0x7fffffffu)) != U(0u));
    return select(v, T(0.0), negative & !is_nan(v));
}
fn wt_relu6(v: T) -> T { return select(min(max(v, T(0.0)), T(6.0)), v, is_nan(v)); }

fn wt_clamp(v: T, lo: T, hi: T) -> T {
    let y = select(v, lo, v < lo);
    return keep_nan(select(y, hi, y > hi), v);
}

// NaN-propagating maximum / minimum (WGSL's max/min may drop a NaN).
fn wt_max(u: T, v: T) -> T { return keep_nan(keep_nan(select(v, u, u >= v), u), v); }
fn wt_min(u: T, v: T) -> T { return keep_nan(keep_nan(select(v, u, u <= v), u), v); }

fn wt_sign(v: T) -> T {
    let s = select(select(v, T(1.0), v > T(0.0)), T(-1.0), v < T(0.0));
    return keep_nan(s, v);
}

fn wt_recip(v: T) -> T { return select(T(1.0) / v, with_sign(wt_inf(), v), v == T(0.0)); }

fn wt_rsqrt(v: T) -> T {
    var r = inverseSqrt(v);
    r = select(r, with_sign(wt_inf(), v), v == T(0.0));
    r = select(r, T(0.0), is_inf(v) & (v > T(0.0)));
    return select(r, wt_nan(), (v < T(0.0)) | is_nan(v));
}

fn wt_sigmoid(v: T) -> T {
    // exp of -|v| never overflows: 1/(1+e) for v >= 0, e/(1+e) below.
    let e = exp(-abs(v));
    return keep_nan(select(e / (1.0 + e), 1.0 / (1.0 + e), v >= T(0.0)), v);
}

fn wt_tanh(v: T) -> T {
    // tanh(|v|) = (1-t)/(1+t) with t = exp(-2|v|) <= 1 (no overflow);
    // beyond |v| = 10 the f32 result is 1 anyway. For tiny |v| the odd
    // series keeps full relative precision.
    let a = min(abs(v), T(10.0));
    let t = exp(-2.0 * a);
    let big = (1.0 - t) / (1.0 + t);
    let small = a - a * a * a * (1.0 / 3.0);
    let r = select(big, small, a < T(0.004));
    return select(select(r, -r, v < T(0.0)), v, is_nan(v));
}

// sin and cos: v = k pi/2 + r with |r| <= pi/4 (Cody-Waite: pi/2 in three
// parts, the first two short enough that k times them is exact for
// |k| < 2^13), then Cephes' polynomials on r, so the accuracy does not
// rest on the built-ins' (bounded by WGSL only inside [-pi, pi]).
fn sin_poly(r: T) -> T {
    let z = r * r;
    return ((T(-1.9515295891e-4) * z + T(8.3321608736e-3)) * z - T(1.6666654611e-1)) * z * r + r;
}
fn cos_poly(r: T) -> T {
    let z = r * r;
    return ((T(2.443315711809948e-5) * z - T(1.388731625493765e-3)) * z + T(4.166664568298827e-2)) * z * z
           - T(0.5) * z + T(1.0);
}
// quarter: 0 for sin, 1 for cos (cos v = sin(v + pi/2)).
fn sin_quadrant(v: T, quarter: f32) -> T {
    let k = round(v * T(0.63661977236758134));
    let r = ((v - k * T(1.5703125)) - k * T(4.837512969970703125e-4)) - k * T(7.54978995489188216e-8);
    let q0 = k + T(quarter);
    let q = q0 - T(4.0) * floor(q0 * T(0.25)); // 0, 1, 2, 3
    let s = sin_poly(r);
    let c = cos_poly(r);
    var res = select(s, c, (q == T(1.0)) | (q == T(3.0)));
    res = select(res, -res, q >= T(2.0));
    return select(res, wt_nan(), is_nan(v) | is_inf(v));
}
fn wt_sin(v: T) -> T { return sin_quadrant(v, 0.0); }
fn wt_cos(v: T) -> T { return sin_quadrant(v, 1.0); }

// log(1 + v): 2 atanh(s), s = v / (2 + v), by its series for |v| < 1/4
// (|s| < 1/7: the terms to s^11 leave < 1e-11); log(1 + v) beyond, where
// the result is at least 0.22 in magnitude and 1 + v costs little.
fn wt_log1p(v: T) -> T {
    let s = v / (T(2.0) + v);
    let z = s * s;
    let series = T(2.0) * s * (T(1.0) + z * (T(1.0 / 3.0) + z * (T(0.2) + z * (T(1.0 / 7.0) + z * (T(1.0 / 9.0) + z * T(1.0 / 11.0))))));
    let direct = select(wt_log(T(1.0) + v), v, is_inf(v) & (v > T(0.0)));
    return keep_nan(select(direct, series, abs(v) < T(0.25)), v);
}

// exp(v) - 1: Taylor to v^9 for |v| < 1/2 (error < 1e-9 relative), exp
// beyond, where the result is at least 0.39 in magnitude.
fn wt_expm1(v: T) -> T {
    let series = v * (T(1.0) + v * (T(0.5) + v * (T(1.0 / 6.0) + v * (T(1.0 / 24.0) + v * (T(1.0 / 120.0)
                 + v * (T(1.0 / 720.0) + v * (T(1.0 / 5040.0) + v * (T(1.0 / 40320.0) + v * T(1.0 / 362880.0)))))))));
    return keep_nan(select(exp(v) - T(1.0), series, abs(v) < T(0.5)), v);
}

// erf: x P(x^2) for |x| < 1; 1 - exp(-x^2) Q(1/|x|) for 1 <= |x| < 4
// (Chebyshev fits to erf(x)/x and erfc(x) exp(x^2), errors below 2e-7
// relative and 6e-8 absolute in f32); 1 from 4 on.
fn wt_erf(v: T) -> T {
    let a = abs(v);
    let s = v * v;
    let small = v * (T(1.12837911) + s * (T(-0.37612626) + s * (T(0.112835974) + s * (T(-0.0268543288)
                + s * (T(0.00518931216) + s * (T(-0.000801885501) + s * T(7.88249745e-05)))))));
    let t = T(1.0) / max(a, T(1.0));
    let q = T(0.000292626151) + t * (T(0.558676898) + t * (T(0.0445175804) + t * (T(-0.481059134)
            + t * (T(0.518174708) + t * (T(-0.271460921) + t * (T(0.0487054139) + t * (T(0.0168430135)
            + t * T(-0.00710661896))))))));
    let ac = min(a, T(4.0));
    let large = select(T(1.0) - exp(-(ac * ac)) * q, T(1.0), a >= T(4.0));
    return keep_nan(select(with_sign(large, v), small, a < T(1.0)), v);
}

fn wt_gelu(v: T) -> T { return T(0.5) * v * (T(1.0) + wt_erf(v * T(0.70710678118654752))); }

fn wt_gelu_tanh(v: T) -> T {
    let inner = T(0.79788456080286536) * (v + T(0.044715) * v * v * v);
    return T(0.5) * v * (T(1.0) + wt_tanh(inner));
}

// max(v, 0) + log1p(exp(-|v|)): no overflow for large v.
fn wt_softplus(v: T) -> T {
    return keep_nan(max(v, T(0.0)) + wt_log1p(exp(-abs(v))), v);
}

// v / (1 + |v|). Past 1e30 the f32 quotient is +-1 exactly, so the
// infinities (inf / inf in the formula) take sign(v).
fn wt_softsign(v: T) -> T {
    return keep_nan(select(v / (T(1.0) + abs(v)), sign(v), abs(v) > T(1e30)), v);
}

// C's pow, on exp2(v log2 |u|), with its special cases spelt out.
fn wt_pow(u: T, v: T) -> T {
    let au = abs(u);
    let v_int = (floor(v) == v) & !is_inf(v);
    let v_odd = v_int & (floor(v * T(0.5)) != v * T(0.5));
    let zero = au == T(0.0);
    var r = exp2(v * log2(au));
    r = select(r, wt_inf(), (zero & (v < T(0.0))) | (is_inf(u) & (v > T(0.0))));
    r = select(r, T(0.0), (zero & (v > T(0.0))) | (is_inf(u) & (v < T(0.0))));
    r = select(r, select(T(0.0), wt_inf(), (au > T(1.0)) == (v > T(0.0))), is_inf(v) & (au != T(1.0)));
    r = select(r, -r, sign_bit(u) & v_odd);
    r = select(r, wt_nan(), (u < T(0.0)) & !v_int & !is_inf(v) & !is_inf(u));
    r = select(r, wt_nan(), is_nan(u) | is_nan(v));
    return select(r, T(1.0), (v == T(0.0)) | (u == T(1.0)) | ((au == T(1.0)) & is_inf(v)));
}

// x split into high and low halves of 12 significant bits (Veltkamp).
fn split_hi(x: T) -> T {
    let c = T(4097.0) * x;
    return c - (c - x);
}

// u - v trunc(u / v) for v > 0, exactly when |u / v| < 2^23: the product
// q v is formed without rounding (Dekker's two-product, no FMA needed),
// so u - q v rounds once, to the exact remainder; a quotient rounded up
// to the next integer is corrected afterwards.
fn fmod_small(u: T, v: T) -> T {
    let q = trunc(u / v);
    let p = q * v;
    let qh = split_hi(q);
    let ql = q - qh;
    let vh = split_hi(v);
    let vl = v - vh;
    let err = ((qh * vh - p) + qh * vl + ql * vh) + ql * vl;
    var r = (u - p) - err;
    r = select(r, r + with_sign(v, u), (r != T(0.0)) & (sign_bit(r) != sign_bit(u)));
    r = select(r, r - with_sign(v, u), abs(r) >= v);
    return select(r, u, abs(u) < v);
}

// C's fmod, exact: the remainder modulo |v| 2^k (a multiple of v, exact
// as a float) brings the quotient below 2^23 for the next step, so at
// most 12 steps cover the f32 range (a step is the identity once the
// quotient is small).
fn wt_fmod(u: T, v: T) -> T {
    let av = abs(v);
    let eb = bitcast<U>(av) >> U(23u);
    var r = u;
    for (var step = 0; step < 12; step = step + 1) {
        let er = bitcast<U>(abs(r)) >> U(23u);
        let k = select(U(0u), er - eb - U(22u), er > eb + U(22u));
        r = fmod_small(r, bitcast<T>(bitcast<U>(av) + (k << U(23u))));
    }
    r = select(r, u, is_inf(v) & !is_inf(u));
    return select(r, wt_nan(), (v == T(0.0)) | is_inf(u) | is_nan(u) | is_nan(v));
}

fn wt_atan2(u: T, v: T) -> T {
    let pi = T(3.14159265358979323846);
    var r = atan2(u, v);
    // y = +-0 (by the bits): +-0 toward x >= +0, +-pi toward x <= -0, the
    // sign of y kept. Some drivers (NVIDIA's GLES) drop the sign of a zero y.
    let u_zero = (bitcast<U>(u) & U(0x7fffffffu)) == U(0u);
    r = select(r, with_sign(select(T(0.0), pi, sign_bit(v)), u), u_zero);
    let both_inf = is_inf(u) & is_inf(v);
    r = select(r, with_sign(select(T(0.25) * pi, T(0.75) * pi, v < T(0.0)), u), both_inf);
    return select(r, wt_nan(), is_nan(u) | is_nan(v));
}

// NumPy's floor_divide / remainder on floats (npy_divmod).
fn wt_floor_div(u: T, v: T) -> T {
    let m = wt_fmod(u, v);
    var d = (u - m) / v;
    d = select(d, d - T(1.0), (m != T(0.0)) & ((v < T(0.0)) != (m < T(0.0))));
    let fl = floor(d);
    var r = select(fl, fl + T(1.0), d - fl > T(0.5));
    r = select(r, with_sign(T(0.0), u * v), d == T(0.0));
    let by_zero = select(with_sign(wt_inf(), u * with_sign(T(1.0), v)), wt_nan(), (u == T(0.0)) | is_nan(u));
    return select(select(r, by_zero, v == T(0.0)), wt_nan(), is_nan(u) | is_nan(v));
}

fn wt_remainder(u: T, v: T) -> T {
    let m = wt_fmod(u, v);
    var r = select(m, m + v, (m != T(0.0)) & ((v < T(0.0)) != (m < T(0.0))));
    r = select(r, with_sign(T(0.0), v), m == T(0.0));
    return select(r, wt_nan(), (v == T(0.0)) | is_nan(u) | is_nan(v) | is_inf(u));
}

// Comparisons, false with a NaN operand (ne: true).
fn any_nan(u: T, v: T) -> B { return is_nan(u) | is_nan(v); }
fn wt_eq(u: T, v: T) -> B { return (u == v) & !any_nan(u, v); }
fn wt_ne(u: T, v: T) -> B { return (u != v) | any_nan(u, v); }
fn wt_lt(u: T, v: T) -> B { return (u < v) & !any_nan(u, v); }
fn wt_le(u: T, v: T) -> B { return (u <= v) & !any_nan(u, v); }
