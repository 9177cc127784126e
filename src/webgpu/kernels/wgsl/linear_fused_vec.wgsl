// linear_fused.wgsl's operands read 16 bytes at a time (eight halves or
// four floats): k, the offsets and w's row stride are multiples of E.
// Two steps in flight per thread, so that each has two loads of w
// outstanding.

@group(0) @binding(1) var<storage, read> x: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read> w: array<vec4<u32>>;
@group(0) @binding(3) var<storage, read> g: array<vec4<u32>>;

const E: u32 = select(4u, 8u, F16);

fn widen_lo(v: vec4<u32>) -> vec4<f32> {
    if (F16) { return vec4<f32>(unpack_halves(v.x), unpack_halves(v.y)); }
    return bitcast<vec4<f32>>(v);
}

fn widen_hi(v: vec4<u32>) -> vec4<f32> {
    if (F16) { return vec4<f32>(unpack_halves(v.z), unpack_halves(v.w)); }
    return vec4<f32>(0.0);
}

// (sum w1 h, sum w2 h, sum x^2) over the words of one step.
fn step_terms(xv: vec4<u32>, gv: vec4<u32>, w1: vec4<u32>, w2: vec4<u32>) -> vec3<f32> {
    var h0 = widen_lo(xv);
    var h1 = widen_hi(xv);
    let ss = dot(h0, h0) + dot(h1, h1);
    if (NORM_W) {
        h0 *= widen_lo(gv);
        h1 *= widen_hi(gv);
    }
    let a = dot(widen_lo(w1), h0) + dot(widen_hi(w1), h1);
    var b = 0.0;
    if (SWIGLU) { b = dot(widen_lo(w2), h0) + dot(widen_hi(w2), h1); }
    return vec3<f32>(a, b, ss);
}

// Word offsets: x's row, w's row (and the up row), g.
fn row_terms(xb: u32, wb: u32, wb2: u32, gb: u32, lane: u32) -> vec3<f32> {
    let n = p.k / E;
    var s = vec3<f32>(0.0);
    var s2 = vec3<f32>(0.0);
    let zero = vec4<u32>(0u);
    var i = lane;
    for (; i + TPR < n; i += 2u * TPR) {
        let wa = w[wb + i];
        let wc = w[wb + i + TPR];
        var ua = zero;
        var uc = zero;
        if (SWIGLU) {
            ua = w[wb2 + i];
            uc = w[wb2 + i + TPR];
        }
        var ga = zero;
        var gc = zero;
        if (NORM_W) {
            ga = g[gb + i];
            gc = g[gb + i + TPR];
        }
        s += step_terms(x[xb + i], ga, wa, ua);
        s2 += step_terms(x[xb + i + TPR], gc, wc, uc);
    }
    if (i < n) {
        var u = zero;
        if (SWIGLU) { u = w[wb2 + i]; }
        var gv = zero;
        if (NORM_W) { gv = g[gb + i]; }
        s += step_terms(x[xb + i], gv, w[wb + i], u);
    }
    return s + s2;
}
