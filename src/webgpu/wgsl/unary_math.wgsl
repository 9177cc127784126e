// apply(v) = unary op OP of v, a library shared by the f32 (unary) and f16
// (unary_f16) kernels so both compute the same f32 values. Needs OP and
// `alias T / U / B` (f32 or a vector of f32, and the matching u32 and bool
// types) before it. OP numbers follow wt_unary_op; 100 is a plain copy.

// Built at run time: a constant NaN or infinity is a shader compile error.
fn from_bits(bits: u32) -> T {
    var b = bits;
    return T(bitcast<f32>(b));
}

fn nan_of(v: T) -> T { return from_bits(0x7fc00000u); }

// NaN tested on the bits: shader compilers may fold `v != v` to false and
// turn a select against zero into max() (both seen on llvmpipe).
fn is_nan(v: T) -> B { return (bitcast<U>(v) & U(0x7fffffffu)) > U(0x7f800000u); }

fn apply(v: T) -> T {
    let zero = T(0.0);
    switch OP {
        case 0u: { return -v; }
        case 1u: { return exp(v); }
        case 2u: {
            // log is indeterminate for v <= 0 in WGSL: spell out -inf / NaN.
            // Below the smallest normal, lavapipe's log reads a subnormal's
            // exponent as the minimum (log(1e-40) = -88.0, not -92.1):
            // scale by 2^23 into the normal range and subtract 23 ln 2. A
            // GPU that flushes subnormals sees v == 0 and gives -inf.
            let neg_inf = from_bits(0xff800000u);
            let tiny = v < T(1.17549435e-38);
            let lg = select(log(v), log(v * 8388608.0) - 15.942385, tiny);
            return select(select(lg, neg_inf, v == zero), nan_of(v), v < zero);
        }
        case 3u: { return select(sqrt(v), nan_of(v), v < zero); }
        case 4u: { return select(select(v, zero, v < zero), v, is_nan(v)); }
        case 5u: {
            // exp of -|v| never overflows: 1/(1+e) for v >= 0, e/(1+e) below.
            let e = exp(-abs(v));
            return select(e / (1.0 + e), 1.0 / (1.0 + e), v >= zero);
        }
        case 6u: {
            // tanh(|v|) = (1-t)/(1+t) with t = exp(-2|v|) <= 1 (no overflow);
            // beyond |v| = 10 the f32 result is 1 anyway. For tiny |v| the
            // odd series keeps full relative precision.
            let a = min(abs(v), T(10.0));
            let t = exp(-2.0 * a);
            let big = (1.0 - t) / (1.0 + t);
            let small = a - a * a * a * (1.0 / 3.0);
            let r = select(big, small, a < T(0.004));
            return select(select(r, -r, v < zero), v, is_nan(v));
        }
        default: { return v; } // 100: plain copy
    }
}

