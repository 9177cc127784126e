// linear_fused.wgsl's operands read 16 bytes at a time: a step is E
// elements of w's row (eight halves or four floats, one word) and of x
// (and g, of x's dtype): one word, or two of f32 against f16 w (x f16
// against f32 w is not taken). k, the offsets and w's row stride are
// multiples of E. Prelude: UNROLL, the steps a thread has in flight.

@group(0) @binding(1) var<storage, read> x: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read> w: array<vec4<u32>>;
@group(0) @binding(3) var<storage, read> g: array<vec4<u32>>;

const E: u32 = select(4u, 8u, W_F16);   // elements of w a word
const EX: u32 = select(4u, 8u, X_F16);  // elements of x a word
const XW: u32 = E / EX;                 // words of x a step

fn widen_lo(v: vec4<u32>, f16: bool) -> vec4<f32> {
    if (f16) { return vec4<f32>(unpack_halves(v.x), unpack_halves(v.y)); }
    return bitcast<vec4<f32>>(v);
}

fn widen_hi(v: vec4<u32>, f16: bool) -> vec4<f32> {
    if (f16) { return vec4<f32>(unpack_halves(v.z), unpack_halves(v.w)); }
    return vec4<f32>(0.0);
}

// The E elements of x (or g) of step i from word base b: (lo, hi).
fn x_step(b: u32, i: u32) -> mat2x4<f32> {
    let v = x[b + XW * i];
    if (XW == 2u) { return mat2x4<f32>(bitcast<vec4<f32>>(v), bitcast<vec4<f32>>(x[b + 2u * i + 1u])); }
    return mat2x4<f32>(widen_lo(v, X_F16), widen_hi(v, X_F16));
}

fn g_step(b: u32, i: u32) -> mat2x4<f32> {
    let v = g[b + XW * i];
    if (XW == 2u) { return mat2x4<f32>(bitcast<vec4<f32>>(v), bitcast<vec4<f32>>(g[b + 2u * i + 1u])); }
    return mat2x4<f32>(widen_lo(v, X_F16), widen_hi(v, X_F16));
}

// (sum w1 h, sum w2 h, sum x^2) over one step; h = x (* g).
fn step_terms(xv: mat2x4<f32>, gv: mat2x4<f32>, w1: vec4<u32>, w2: vec4<u32>) -> vec3<f32> {
    var h0 = xv[0];
    var h1 = xv[1];
    let ss = dot(h0, h0) + dot(h1, h1);
    if (NORM_W) {
        h0 *= gv[0];
        h1 *= gv[1];
    }
    let a = dot(widen_lo(w1, W_F16), h0) + dot(widen_hi(w1, W_F16), h1);
    var b = 0.0;
    if (SWIGLU) { b = dot(widen_lo(w2, W_F16), h0) + dot(widen_hi(w2, W_F16), h1); }
    return vec3<f32>(a, b, ss);
}

// Word offsets: x's row, w's row (and the up row), g. UNROLL steps a
// thread in flight: their loads of w issued before any is used.
fn row_terms(xb: u32, wb: u32, wb2: u32, gb: u32, lane: u32) -> vec3<f32> {
    let n = p.k / E;
    var s = vec3<f32>(0.0);
    var s2 = vec3<f32>(0.0);
    let zero = vec4<u32>(0u);
    let one = mat2x4<f32>(vec4<f32>(1.0), vec4<f32>(1.0));
    var i = lane;
    // Two steps (the default, as measured): the loads written out.
    for (; UNROLL == 2u && i + TPR < n; i += 2u * TPR) {
        let wa = w[wb + i];
        let wc = w[wb + i + TPR];
        var ua = zero;
        var uc = zero;
        if (SWIGLU) {
            ua = w[wb2 + i];
            uc = w[wb2 + i + TPR];
        }
        var ga = one;
        var gc = one;
        if (NORM_W) {
            ga = g_step(gb, i);
            gc = g_step(gb, i + TPR);
        }
        s += step_terms(x_step(xb, i), ga, wa, ua);
        s2 += step_terms(x_step(xb, i + TPR), gc, wc, uc);
    }
    for (; UNROLL != 2u && i + (UNROLL - 1u) * TPR < n; i += UNROLL * TPR) {
        var wv: array<vec4<u32>, UNROLL>;
        var uv: array<vec4<u32>, UNROLL>;
        for (var u = 0u; u < UNROLL; u++) {
            wv[u] = w[wb + i + u * TPR];
            uv[u] = zero;
            if (SWIGLU) { uv[u] = w[wb2 + i + u * TPR]; }
        }
        for (var u = 0u; u < UNROLL; u++) {
            var gv = one;
            if (NORM_W) { gv = g_step(gb, i + u * TPR); }
            let t = step_terms(x_step(xb, i + u * TPR), gv, wv[u], uv[u]);
            if ((u & 1u) == 0u) { s += t; } else { s2 += t; }
        }
    }
    for (; i < n; i += TPR) {
        var u = zero;
        if (SWIGLU) { u = w[wb2 + i]; }
        var gv = one;
        if (NORM_W) { gv = g_step(gb, i); }
        s += step_terms(x_step(xb, i), gv, w[wb + i], u);
    }
    return s + s2;
}
