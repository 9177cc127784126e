// Softmax (OP 0) or log-softmax (OP 3) along the middle axis of x [O, C, I]
// (any strides) into contiguous out [O, C, I], for I > 1 (a last axis goes
// to rowwise.wgsl).
//
// A workgroup takes TI consecutive columns i of one outer index o, with TC
// threads per column splitting C (WG = TI * TC; local index tc * TI + ti,
// so neighbouring threads read neighbouring columns: coalesced when x is
// contiguous along I). Each thread keeps an online (max, sum of
// exp(x - max)) over its share of C; the TC partial states of a column
// are merged as a tree in workgroup memory; a second pass writes.
//
// Prelude: OP, TI, TC, WG.

struct Params {
    outer: u32, cols: u32, inner: u32, x_offset: u32,
    so: u32, sc: u32, si: u32, col_groups: u32,
    neg_inf: u32, pad0: u32, pad1: u32, pad2: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;

var<workgroup> red_m: array<f32, WG>;
var<workgroup> red_s: array<f32, WG>;

// exp(v - m) with exp(-inf - -inf) taken as 0 (nothing seen yet).
fn shifted_exp(v: f32, m: f32) -> f32 {
    return exp(v - select(m, 0.0, m == bitcast<f32>(p.neg_inf)));
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let g = wid.x + wid.y * nwg.x;
    if (g >= p.outer * p.col_groups) { return; } // uniform
    let o = g / p.col_groups;
    let ti = lid % TI;
    let tc = lid / TI;
    let col = (g % p.col_groups) * TI + ti;
    let live = col < p.inner;
    let i = min(col, p.inner - 1u);
    let base = p.x_offset + o * p.so + i * p.si;
    let neg_inf = bitcast<f32>(p.neg_inf);

    var m = neg_inf;
    var s = 0.0;
    for (var c = tc; c < p.cols; c += TC) {
        let v = x[base + c * p.sc];
        let nm = max(m, v);
        s = s * shifted_exp(m, nm) + shifted_exp(v, nm);
        m = nm;
    }
    red_m[lid] = m;
    red_s[lid] = s;
    workgroupBarrier();
    for (var half = TC / 2u; half > 0u; half = half >> 1u) {
        if (tc < half) {
            let m2 = red_m[lid + half * TI];
            let s2 = red_s[lid + half * TI];
            let m1 = red_m[lid];
            let nm = max(m1, m2);
            red_s[lid] = red_s[lid] * shifted_exp(m1, nm) + s2 * shifted_exp(m2, nm);
            red_m[lid] = nm;
        }
        workgroupBarrier();
    }
    // A column of -inf: shift 0, sum 0 -> NaN, as the math gives.
    let shift = select(red_m[ti], 0.0, red_m[ti] == neg_inf);
    let total = red_s[ti];
    let inv = 1.0 / total;
    let log_total = log(total);
    if (!live) { return; }
    let obase = o * p.cols * p.inner + col;
    for (var c = tc; c < p.cols; c += TC) {
        let v = x[base + c * p.sc];
        if (OP == 0u) {
            out[obase + c * p.inner] = exp(v - shift) * inv;
        } else {
            out[obase + c * p.inner] = (v - shift) - log_total;
        }
    }
}
